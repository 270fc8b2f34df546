"""The workflow on a real single-node SLURM cluster (tests/slurm/cluster.py), through profiles/slurm.

One SLURM run of the tiny config, during which the batch job of the evaluations is cancelled while
it runs: Snakemake must see the failure, resubmit the job (``retries:`` of the profile), complete
the workflow, and give the same results as a local run (all but the measured CPU seconds).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from slurm.cluster import Cluster, ClusterUnavailable, missing_programs
from slurm.workflow_copy import REPO, copy_workflow, run

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

SMALL = REPO / "config" / "test-small.yaml"
#: site options of this test cluster (no accounting database, no account); quick status checks
SLURM_ARGS = (
    "--profile",
    "profiles/slurm",
    "--slurm-no-account",
    "--slurm-status-command",
    "squeue",
    "--slurm-init-seconds-before-status-checks",
    "2",
    "--latency-wait",
    "5",
)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    if missing_programs() and os.geteuid() != 0:
        pytest.skip(f"SLURM is not installed ({missing_programs()}) and installing needs root")
    state = Path("/tmp") / f"delaycv-slurm-{os.getpid()}"  # short path: munge socket length
    shutil.rmtree(state, ignore_errors=True)
    cluster = Cluster(state)
    try:
        cluster.start()
    except ClusterUnavailable as err:
        cluster.stop()
        pytest.fail(f"the SLURM test cluster did not start: {err}")
    yield cluster
    cluster.stop()
    shutil.rmtree(state, ignore_errors=True)


@pytest.fixture(scope="module")
def local_results(tmp_path_factory) -> Path:
    workdir = copy_workflow(tmp_path_factory.mktemp("local") / "wf", SMALL)
    run(workdir, "--cores", "2")
    return workdir / "results"


def squeue(cluster: Cluster) -> list[tuple[str, str, str]]:
    proc = subprocess.run(
        ["squeue", "--states=all", "--noheader", "--format=%i|%T|%k"],
        capture_output=True,
        text=True,
        env={**os.environ, **cluster.env},
    )
    return [tuple(line.split("|", 2)) for line in proc.stdout.splitlines() if line.strip()]


def cancel_evaluations_when_running(cluster: Cluster, workdir: Path, record: dict) -> None:
    """Wait until the evaluate batch job runs and an evaluation has started, then scancel it."""
    deadline = time.monotonic() + 400
    while time.monotonic() < deadline:
        running = [j for j in squeue(cluster) if j[1] == "RUNNING" and "evaluate" in j[2]]
        started = list((workdir / "logs" / "evaluate").rglob("*.log"))
        if running and started:
            job = running[0][0]
            subprocess.run(["scancel", job], check=True, env={**os.environ, **cluster.env})
            record["cancelled"] = job
            return
        time.sleep(0.2)


def test_slurm_run_with_a_killed_job_completes_with_the_local_results(
    cluster, local_results, tmp_path
):
    workdir = copy_workflow(tmp_path / "wf", SMALL)
    record: dict = {}
    killer = threading.Thread(
        target=cancel_evaluations_when_running, args=(cluster, workdir, record), daemon=True
    )
    killer.start()
    proc = run(workdir, *SLURM_ARGS, extra_env=cluster.env, timeout=480, check=False)
    killer.join(timeout=5)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-6000:] + cluster.logs()

    # the batch job was cancelled while it ran, reported as failed and resubmitted
    assert "cancelled" in record, "the evaluate batch job was never seen running"
    assert "Error in group evaluate_batch" in log
    assert f"JOB {record['cancelled']} ON {cluster.node} CANCELLED" in log
    assert "Trying to restart job" in log
    batch = [
        line for line in log.splitlines() if "group_evaluate_batch" in line and "submitted" in line
    ]
    assert len(batch) == 2, batch
    jobs = squeue(cluster)
    evaluate_jobs = [j for j in jobs if "evaluate" in j[2]]
    assert len(evaluate_jobs) >= 2 and evaluate_jobs[-1][1] == "COMPLETED"
    # every other rule ran as a SLURM job too, except the local aggregation rules
    submitted = " ".join(j[2] for j in jobs)
    for rule in ("convert", "permutation_tests", "figures"):
        assert f"rule_{rule}" in submitted
    assert "rule_merge" not in submitted

    # the same results as the local run (the CPU seconds are measured, so they differ)
    results = workdir / "results"
    slurm = pd.read_parquet(results / "merged.parquet")
    local = pd.read_parquet(local_results / "merged.parquet")
    pd.testing.assert_frame_equal(
        slurm.drop(columns="cpu_seconds"), local.drop(columns="cpu_seconds")
    )
    for name in ("tests", "strip", "bias"):
        pd.testing.assert_frame_equal(
            pd.read_parquet(results / "tests" / "tiny" / f"{name}.parquet"),
            pd.read_parquet(local_results / "tests" / "tiny" / f"{name}.parquet"),
        )
    figures = sorted(p.name for p in (results / "figures" / "tiny").glob("*.png"))
    assert figures == sorted(p.name for p in (local_results / "figures" / "tiny").glob("*.png"))
    assert figures
