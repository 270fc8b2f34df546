"""The HITL study, measured: config/hitl-rq1.yaml run for real with ``snakemake --cores 2``.

The study design (8 Commit Guru projects x 15 policies, HoeffdingTree, 10 bootstrap folds, one seed:
120 evaluations, then merge, tests, figures) runs in a temporary copy of the workflow, with the
dataset paths made absolute (the data stays under ``../shared/datasets/``; it is never copied).
Printed: the wall time of the whole study, the sum of the evaluate jobs' CPU seconds (each job's
own process CPU time from its ``run.json``: start-up, imports, evaluation and writing), the sum
of their RAM-hours and their largest peak memory (``run.json`` ``ram_hours``, ``peak_rss_bytes``:
delaycv.tables.usage), and the
ratio ``wall / (CPU sum / cores)``: 1.0 means the two cores were busy with evaluate jobs the whole
time; what is above is Snakemake's scheduling, conversion, merging, tests and figures, and load
imbalance at the end. Also printed: the evaluations' own CPU (the engine's ``cpu_seconds``) and
the ratio against it, which also counts each job's start-up as overhead.

Targets (issue 14): the whole study in at most 35 minutes on this machine, ratio at most 1.15.

    python benchmarks/bench_study.py [--cores 2] [--keep DIR] [--datasets NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.workflow_copy import copy_workflow, read_config, run  # noqa: E402

STUDY = REPO / "config" / "hitl-rq1.yaml"
DATA = REPO.parent / "shared" / "datasets"
LIMIT_MINUTES = 35.0
LIMIT_RATIO = 1.15


def study_config(datasets: list[str] | None = None) -> dict:
    """The shipped study config with its dataset paths resolved against the checkout, restricted to
    ``datasets`` if given."""
    config = read_config(STUDY)
    if datasets:
        unknown = sorted(set(datasets) - set(config["datasets"]))
        if unknown:
            raise SystemExit(
                f"bench_study: {', '.join(unknown)} not in {STUDY.name} "
                f"(it has {', '.join(config['datasets'])})"
            )
        config["datasets"] = {k: v for k, v in config["datasets"].items() if k in datasets}
    for name, entry in config["datasets"].items():
        path = (REPO / entry["path"]).resolve()
        if not path.exists():
            raise SystemExit(f"bench_study: {path} is missing (dataset {name}); needs ../shared")
        entry["path"] = str(path)
    return config


def evaluate_cpu_seconds(workdir: Path) -> dict[str, float]:
    """CPU and wall seconds of the study's evaluate jobs, summed.

    ``jobs_cpu``: each job's own process CPU time (``run.json`` ``process_cpu_seconds``, read by
    the rule's script just before it writes the run: start-up, imports and the evaluation);
    ``engine_cpu``: the evaluations alone (``cpu_seconds``: the ``evaluate`` call);
    ``ram_hours``: the jobs' RAM-hours (``run.json`` ``ram_hours``, of the jobs that measured it:
    ``ram_hours_jobs``), ``peak_rss``: the largest ``peak_rss_bytes`` of a job;
    ``jobs_wall``: Snakemake's benchmark wall seconds of each job; ``sampled_cpu``: Snakemake's
    benchmark ``cpu_time``, for comparison only (it samples every 30 s after the first 30 s, so
    each job's last stretch is missing: 4,037 s against the engine's 4,668 s on the study)."""
    runs = sorted((workdir / "results" / "runs").rglob("run.json"))  # keyed by settings or not
    infos = [json.loads(f.read_text()) for f in runs]
    files = sorted((workdir / "results" / "benchmarks" / "evaluate").rglob("*.tsv"))
    table = pd.concat([pd.read_csv(f, sep="\t") for f in files], ignore_index=True)
    measured = [i for i in infos if i.get("ram_hours") is not None]
    return {
        "jobs": len(infos),
        "jobs_cpu": float(sum(i["process_cpu_seconds"] for i in infos)),
        # RAM-hours (delaycv.tables.usage: the job's resident memory in GiB over its wall hours), summed,
        # and the largest peak of a job
        "ram_hours": float(sum(i["ram_hours"] for i in measured)),
        "ram_hours_jobs": len(measured),
        "ram_hours_wall": float(sum(i["process_wall_seconds"] for i in measured)),
        "peak_rss": float(max((i.get("peak_rss_bytes") or 0 for i in infos), default=0)),
        "engine_cpu": float(sum(i["cpu_seconds"] for i in infos)),
        "jobs_wall": float(table["s"].sum()),
        "engine_wall": float(sum(i["wall_seconds"] for i in infos)),
        "sampled_cpu": float(table["cpu_time"].sum()),
    }


CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def cpu_times() -> dict[str, float] | None:
    """The machine's CPU seconds so far by kind (``/proc/stat``, all cores), or None off Linux."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return None
    tick = os.sysconf("SC_CLK_TCK")
    return {
        name: int(value) / tick
        for name, value in zip(CPU_FIELDS, fields[: len(CPU_FIELDS)], strict=True)
    }


def cpu_account(before: dict | None, after: dict | None) -> str:
    """Where the machine's core-seconds went during the study (user, system, idle, steal...)."""
    if before is None or after is None:
        return "machine CPU account: not available (no /proc/stat)"
    spent = {k: after[k] - before[k] for k in CPU_FIELDS}
    total = sum(spent.values())
    parts = ", ".join(f"{k} {v:.0f}" for k, v in spent.items() if v >= 0.5)
    return (
        f"machine CPU account over the study ({total:.0f} core-seconds): {parts}; steal (taken "
        f"by the host) {spent['steal'] / max(total, 1e-9):.1%}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="run in this folder and keep it")
    parser.add_argument(
        "--datasets", nargs="+", metavar="NAME", help="only these projects (targets need all 8)"
    )
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        print(f"bench_study: skipped, {DATA} is not there")
        return 0
    tmp = None
    if args.keep:
        workdir = args.keep
        if workdir.exists():
            shutil.rmtree(workdir)
    else:
        tmp = tempfile.TemporaryDirectory()
        workdir = Path(tmp.name) / "wf"
    try:
        copy_workflow(workdir, study_config(args.datasets))
        machine_before = cpu_times()
        start = time.perf_counter()
        run(workdir, "--cores", str(args.cores), timeout=3 * 3600)
        wall = time.perf_counter() - start
        machine_after = cpu_times()
        m = evaluate_cpu_seconds(workdir)
    finally:
        if tmp is not None:
            tmp.cleanup()
    ratio = wall / (m["jobs_cpu"] / args.cores)
    print(f"study: {m['jobs']} evaluate jobs, --cores {args.cores}")
    print(f"wall time of the whole study: {wall:.0f} s ({wall / 60:.1f} min)")
    print(
        f"sum of the evaluate jobs' CPU seconds: {m['jobs_cpu']:.0f} s (their wall seconds: "
        f"{m['jobs_wall']:.0f}); of which the evaluations themselves: {m['engine_cpu']:.0f} s "
        f"(wall {m['engine_wall']:.0f}), the rest each job's start-up (Python, river, pandas: "
        f"{(m['jobs_cpu'] - m['engine_cpu']) / max(m['jobs'], 1):.1f} s a job) and writing; "
        f"Snakemake's sampled cpu_time: {m['sampled_cpu']:.0f} s"
    )
    mean_gib = m["ram_hours"] * 3600 / max(m["ram_hours_wall"], 1e-9)
    print(
        f"RAM-hours of the evaluate jobs: {m['ram_hours']:.4f} GiB h (summed over "
        f"{m['ram_hours_jobs']} jobs: {mean_gib:.3f} GiB on average over their "
        f"{m['ram_hours_wall']:.0f} s of wall time); largest peak of a job: "
        f"{m['peak_rss'] / 2**20:.0f} MiB"
    )
    print(f"ratio wall / (jobs' CPU sum / {args.cores}): {ratio:.3f}")
    print(cpu_account(machine_before, machine_after))
    print(
        f"  (wall / (evaluations' CPU sum / {args.cores}): "
        f"{wall / (m['engine_cpu'] / args.cores):.3f})"
    )
    if args.datasets:
        print("targets: not judged (a subset of the study)")
        return 0
    ok = wall / 60 <= LIMIT_MINUTES and ratio <= LIMIT_RATIO
    print(
        f"targets: <= {LIMIT_MINUTES:.0f} min, ratio <= {LIMIT_RATIO}: {'ok' if ok else 'EXCEEDED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
