"""An evaluate job allocates Arrow's buffers with the system's allocator, unless the user's
``ARROW_DEFAULT_MEMORY_POOL`` names one (``delaycv.stages.evaluate.use_system_allocator``)."""

from __future__ import annotations

import ast

import pyarrow as pa
import pytest

from delaycv.data.stream_file import write_stream
from delaycv.data.synthetic import generate_stream
from delaycv.stages.evaluate import ARROW_POOL_VARIABLE
from tests.support.fresh_python import imported_after
from tests.support.paths import REPO

EVALUATE = f"""
import contextlib, io, os
import pyarrow as pa
from delaycv.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    status = main(["evaluate", "s.parquet", "--learner", "Prior", "--out", "run", "--quiet"])
RESULT = [status, pa.default_memory_pool().backend_name, os.environ.get("{ARROW_POOL_VARIABLE}")]
"""


def evaluate_in_a_fresh_process(tmp_path, pool: str | None) -> list:
    write_stream(generate_stream(rows=300, seed=3), tmp_path / "s.parquet")
    found = imported_after(EVALUATE, tmp_path, environment={ARROW_POOL_VARIABLE: pool})
    return found["result"]


def test_the_evaluate_command_allocates_with_the_system_allocator(tmp_path):
    status, backend, variable = evaluate_in_a_fresh_process(tmp_path, None)
    assert status == 0 and (tmp_path / "run" / "folds.parquet").is_file()
    assert backend == "system"
    assert variable == "system"  # what --jobs workers inherit


@pytest.mark.parametrize("pool", ["mimalloc", "jemalloc"])
def test_the_users_allocator_is_kept(tmp_path, pool):
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
