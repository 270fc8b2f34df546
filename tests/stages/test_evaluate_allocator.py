"""An evaluate job allocates Arrow's buffers with the system's allocator, unless the user's
``ARROW_DEFAULT_MEMORY_POOL`` names one (``delaycv.stages.evaluate.use_system_allocator``)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import pytest

from delaycv.data.stream_file import write_stream
from delaycv.data.synthetic import generate_stream
from delaycv.stages.evaluate import ARROW_POOL_VARIABLE
from tests.support.paths import REPO

PROBE = """
import contextlib, io, json, os
import pyarrow as pa
from delaycv.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    status = main(["evaluate", "s.parquet", "--learner", "Prior", "--out", "run", "--quiet"])
print(json.dumps([status, pa.default_memory_pool().backend_name, os.environ.get("{var}")]))
"""


def evaluate_in_a_fresh_process(tmp_path, pool: str | None) -> list:
    write_stream(generate_stream(rows=300, seed=3), tmp_path / "s.parquet")
    env = {k: v for k, v in os.environ.items() if k != ARROW_POOL_VARIABLE}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    env["DELAYCV_KEEP_TEARDOWN"] = "1"  # main returns to the probe
    if pool is not None:
        env[ARROW_POOL_VARIABLE] = pool
    done = subprocess.run(
        [sys.executable, "-c", PROBE.replace("{var}", ARROW_POOL_VARIABLE)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_the_evaluate_command_allocates_with_the_system_allocator(tmp_path):
    status, backend, variable = evaluate_in_a_fresh_process(tmp_path, None)
    assert status == 0 and (tmp_path / "run" / "folds.parquet").is_file()
    assert backend == "system"
    assert variable == "system"  # what --jobs workers inherit


@pytest.mark.parametrize("pool", ["mimalloc", "jemalloc"])
def test_the_users_allocator_is_kept(tmp_path, pool):
    import pyarrow as pa

    if pool not in pa.supported_memory_backends():
        pytest.skip(f"this pyarrow has no {pool}")
    status, backend, variable = evaluate_in_a_fresh_process(tmp_path, pool)
    assert (status, backend, variable) == (0, pool, pool)


def test_the_workflows_evaluate_job_asks_for_it_before_it_evaluates():
    tree = ast.parse((REPO / "scripts" / "evaluate.py").read_text())
    line = {
        node.func.id: node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert line["use_system_allocator"] < line["evaluate"]
