"""delaycv with a MOA learner against MOA's own ``EvaluatePrequentialDelayedCV``, whole processes.

The same stream for both: the Commit Guru project git(master) (43.7k rows), and git(master) then
gimp(master) (90.4k rows, gimp's times shifted to follow git's), converted by delaycv from
``../shared/datasets/`` and handed to MOA as the ARFF of the features delaycv's MOA learners see
(:func:`delaycv.jvm.task.write_arff`). HoeffdingTree with its defaults, 10 folds, bootstrap, a
delay of 100 instances, a row every 500 instances:

    delaycv evaluate STREAM --learner "moa:trees.HoeffdingTree" --validation bootstrap --folds 10 \\
        --policy delay --window 100i --every 500 --out DIR --quiet
    java -cp moa.jar moa.DoTask "EvaluatePrequentialDelayedCV -l (trees.HoeffdingTree) \\
        -s (ArffFileStream -f STREAM.arff -c -1) -w 10 -a Bootstrap-Validation -k 100 -f 500"

(bootstrap: each draws its own weights, so the numbers differ; the tests check exactness where a
mapping exists). MOA runs twice: as above, and with DoTask's ``-S`` (no status lines): without it,
DoTask's main thread checks for the task's end once a second while it prints the status, so its
wall time is the JVM's start plus whole seconds. The commands run interleaved, ``--runs`` times
each; printed per stream: the median wall time and CPU time (user + system of the process and its
threads) of each, the ratios (delaycv / MOA) against both, and the machine's load average before
and after. Target (issue 30): every ratio at most 2; the exit status is 1 when one is above.

    python benchmarks/bench_moa.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "datasets" / "commit_guru_dataset" / "cut2years"
PROJECTS = {"git": "0_git(master).arff", "gimp": "0_gimp(master).arff"}
TARGET = 2.0


def streams(tmp: Path) -> dict[str, Path]:
    """The two benchmark streams as Parquet (delaycv) and ARFF (MOA), written into ``tmp``."""
    from delaycv.data.convert import convert_file
    from delaycv.data.stream import Stream
    from delaycv.data.stream_file import read_stream, write_stream
    from delaycv.jvm.task import write_arff

    read = {}
    for name, file in PROJECTS.items():
        if not (DATA / file).exists():
            raise SystemExit(f"bench_moa: {DATA / file} is missing (needs ../shared/datasets)")
        convert_file(DATA / file, tmp / f"{name}.parquet", preset="commit-guru")
        read[name] = read_stream(tmp / f"{name}.parquet")
    git, gimp = read["git"], read["gimp"]
    shift = int(git.time[-1]) - int(gimp.time[0]) + 1
    both = Stream(
        time=np.concatenate([git.time, gimp.time + shift]),
        label=np.concatenate([git.label, gimp.label]),
        label_time=np.concatenate([git.label_time, gimp.label_time + shift]),
        features=pd.concat([git.features, gimp.features], ignore_index=True),
        metadata={**git.metadata, "dataset": "git_gimp"},
        effort=np.concatenate([git.effort, gimp.effort]),
    )
    write_stream(both, tmp / "git_gimp.parquet")
    out = {}
    for name, stream in (("git(master)", git), ("git(master)+gimp", both)):
        stem = "git" if stream is git else "git_gimp"
        write_arff(stream, tmp / f"{stem}.arff")
        out[name] = tmp / stem
    return out


def timed(cmd: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (the child's user + system, threads included) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"bench_moa: {cmd[0]} failed: {done.stderr.strip()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from delaycv.jvm import rows
    from delaycv.jvm.jar import locate
    from delaycv.jvm.task import task_command

    jar = locate()
    print(f"bench_moa: MOA learners run {rows.status()}; load {os.getloadavg()[0]:.2f}")
    delaycv = [str(Path(sys.executable).with_name("delaycv"))]
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for name, stem in streams(Path(tmp)).items():
            ours = [
                *delaycv, "evaluate", f"{stem}.parquet", "--learner", "moa:trees.HoeffdingTree",
                "--validation", "bootstrap", "--folds", "10", "--policy", "delay",
                "--window", "100i", "--every", "500", "--out", f"{tmp}/run", "--quiet",
            ]  # fmt: skip
            task = task_command(
                Path(f"{stem}.arff"), "trees.HoeffdingTree", folds=10, method="bootstrap",
                delay=100, every=500,
            )  # fmt: skip
            commands = {
                "delaycv": ours,
                "MOA": ["java", "-cp", str(jar), "moa.DoTask", task],
                "MOA -S": ["java", "-cp", str(jar), "moa.DoTask", task, "-S"],
            }
            times: dict[str, list] = {k: [] for k in commands}
            for cmd in commands.values():
                timed(cmd)  # warm the file cache and the JVM's class data
            for _ in range(args.runs):
                for key, cmd in commands.items():
                    times[key].append(timed(cmd))
            med = {
                k: [statistics.median(r[i] for r in v) for i in (0, 1)] for k, v in times.items()
            }
            line = f"{name}: delaycv {med['delaycv'][0]:.2f} s wall, {med['delaycv'][1]:.2f} s CPU"
            for moa in ("MOA", "MOA -S"):
                wall = med["delaycv"][0] / med[moa][0]
                cpu = med["delaycv"][1] / med[moa][1]
                failed |= wall > TARGET or cpu > TARGET
                line += (
                    f"; {moa} {med[moa][0]:.2f} s wall, {med[moa][1]:.2f} s CPU: ratios "
                    f"wall {wall:.2f}, CPU {cpu:.2f}"
                )
            print(f"{line} (target <= {TARGET:g})")
    print(f"bench_moa: load {os.getloadavg()[0]:.2f} after")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
