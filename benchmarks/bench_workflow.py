"""No-op rerun of a 1,000-job grid: how long Snakemake takes to decide that nothing is to be done.

A copy of the workflow with 1 dataset x 10 learners x 10 seeds x 10 policies (1,000 evaluate jobs,
1,005 jobs in all) has every output recorded as up to date (created empty, then ``--touch``, which
records Snakemake's provenance metadata). The benchmark times ``snakemake --cores 2`` on it (it must
do nothing), against the baseline ``snakemake --version`` (interpreter and Snakemake start-up) in
the same run. Target: under 10 s.

    python benchmarks/bench_workflow.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.workflow_copy import BIN, copy_workflow, env, run, touch_outputs  # noqa: E402

LIMIT_SECONDS = 10.0


def grid_config() -> dict:
    learners = {
        f"nb{i}": {"class": "river.naive_bayes.MultinomialNB", "params": {"alpha": 10.0**-i}}
        for i in range(10)
    }
    windows = ["1d", "3d", "7d", "15d", "30d"]
    return {
        "datasets": {"grid": {"generate": {"rows": 300, "seed": 1}}},
        "learners": learners,
        "policy_grids": {
            "hitl": {"preset": "hitl", "pos_window": windows, "neg_window": ["15d", "90d"]}
        },
        "seeds": list(range(1, 11)),
        "validation": {"scheme": "bootstrap", "folds": 2, "seed": 1},
    }


def timed(args: list[str], cwd: Path, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(args, cwd=cwd, env=env(), capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        assert proc.returncode == 0, proc.stderr[-3000:]
        if "--version" not in args:
            assert "Nothing to be done" in proc.stdout + proc.stderr, proc.stdout[-3000:]
    return statistics.median(times)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        workdir = copy_workflow(Path(tmp) / "wf", grid_config())
        start = time.perf_counter()
        created = touch_outputs(workdir)
        prepare = time.perf_counter() - start
        dry = run(workdir, "--dry-run", "--cores", "1")
        assert "Nothing to be done" in dry.stdout + dry.stderr
        baseline = timed([str(BIN / "snakemake"), "--version"], workdir)
        noop = timed([str(BIN / "snakemake"), "--cores", "2"], workdir)
    print(f"grid: 1000 evaluate jobs, {created} outputs recorded up to date in {prepare:.1f} s")
    print(f"baseline `snakemake --version`: {baseline:.2f} s (median of 3)")
    print(
        f"no-op rerun `snakemake --cores 2`: {noop:.2f} s (median of 3), {noop / baseline:.1f}x baseline"
    )
    print(f"limit {LIMIT_SECONDS:.0f} s: {'ok' if noop < LIMIT_SECONDS else 'EXCEEDED'}")
    return 0 if noop < LIMIT_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
