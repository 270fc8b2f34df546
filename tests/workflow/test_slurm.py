"""The workflow on a real single-node SLURM cluster (tests/workflow/slurm_cluster.py), through profiles/slurm.

One SLURM run of the tiny config whose evaluations get too little memory on their first attempt
(``resources: evaluate_mem_mb: 150``: the batch job of 4 evaluations, 2 at a time, asks for 300 MiB,
and one evaluation's job step, Snakemake's job-step process and the rule script, needs about 350 to
450 MiB). SLURM kills it for its memory (the cluster enforces ``--mem``); Snakemake must resubmit it
(``retries:`` of the profile) with twice the memory and twice the time limit (the rules' resources
grow with the attempt), the retry must succeed, and the results must equal a local run's (all but
the measured CPU seconds).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from tests.support.workflow_copy import REPO, copy_workflow, read_config, run
from tests.workflow.slurm_cluster import Cluster, ClusterUnavailable, missing_programs

# (one module: /etc/slurm/slurm.conf is one file; the cluster's jobs share the cores with the other
# worker's tests, which only makes them slower: its memory and time limits leave room for that)
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


def squeue(cluster: Cluster) -> list[dict[str, str]]:
    """Every job of the cluster (finished ones included): id, state, name, memory, time limit."""
    proc = subprocess.run(
        ["squeue", "--states=all", "--noheader", "--format=%i|%T|%k|%m|%l"],
        capture_output=True,
        text=True,
        env={**os.environ, **cluster.env},
    )
    fields = ("id", "state", "name", "memory", "time")
    return [
        dict(zip(fields, line.split("|", 4), strict=True))
        for line in proc.stdout.splitlines()
        if line.strip()
    ]


def minutes(limit: str) -> int:
    """A SLURM time limit ([D-]HH:MM:SS or MM:SS) in minutes."""
    days, _, clock = limit.rpartition("-")
    parts = [int(x) for x in clock.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    hours, mins, secs = parts
    return (int(days or 0) * 24 + hours) * 60 + mins + (secs > 0)


def test_a_job_killed_for_memory_is_retried_with_more_and_completes_with_the_local_results(
    cluster, local_results, tmp_path
):
    config = read_config(SMALL)
    config["resources"] = {"evaluate_mem_mb": 150, "evaluate_runtime": 5}
    workdir = copy_workflow(tmp_path / "wf", config)
    proc = run(workdir, *SLURM_ARGS, extra_env=cluster.env, timeout=480, check=False)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-6000:] + cluster.logs()

    # the evaluations' batch job ran twice: killed by SLURM for its memory, then completed
    jobs = sorted(squeue(cluster), key=lambda j: int(j["id"]))
    evaluate_jobs = [j for j in jobs if "evaluate" in j["name"]]
    assert [j["state"] for j in evaluate_jobs] == ["FAILED", "COMPLETED"], evaluate_jobs
    first, second = evaluate_jobs
    slurm_log = workdir / ".snakemake" / "slurm_logs" / "group_evaluate_batch_evaluate"
    killed = (slurm_log / f"{first['id']}.log").read_text()
    assert "exceeded memory limit" in killed and "being killed" in killed, killed[-3000:]
    assert "Error in group evaluate_batch" in log and "Trying to restart job" in log
    batch = [
        line for line in log.splitlines() if "group_evaluate_batch" in line and "submitted" in line
    ]
    assert len(batch) == 2, batch
    # ... and the retry asked for twice the memory and twice the time
    assert first["memory"].endswith("M") and second["memory"].endswith("M")
    assert int(second["memory"][:-1]) == 2 * int(first["memory"][:-1]) >= 2 * 150
    assert minutes(second["time"]) == 2 * minutes(first["time"]) >= 2 * 5

    # every other rule ran as a SLURM job too, once, except the local aggregation rules
    submitted = [j["name"] for j in jobs]
    for rule in ("convert", "compare", "figures"):
        assert sum(f"rule_{rule}" in name for name in submitted) == 1, submitted
    assert not any("rule_merge" in name for name in submitted)

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


def test_moa_learners_run_as_slurm_jobs_with_the_local_results(cluster, moa, tmp_path):
    """A study with a MOA learner beside a river one (a JVM in every evaluate job of it, the jar
    from the user's cache) through the SLURM profile: the same tables as a local run."""
    config = read_config(SMALL)
    config["learners"] = {
        "nb": config["learners"]["nb"],
        "ht_moa": {"moa": "trees.HoeffdingTree -g 50"},
    }
    local = copy_workflow(tmp_path / "local", config)
    run(local, "--cores", "2")
    workdir = copy_workflow(tmp_path / "wf", config)
    proc = run(workdir, *SLURM_ARGS, extra_env=cluster.env, timeout=480, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:] + cluster.logs()
    slurm = pd.read_parquet(workdir / "results" / "merged.parquet")
    here = pd.read_parquet(local / "results" / "merged.parquet")
    assert set(slurm["learner"]) == {"nb", "ht_moa"}
    pd.testing.assert_frame_equal(
        slurm.drop(columns="cpu_seconds"), here.drop(columns="cpu_seconds")
    )
