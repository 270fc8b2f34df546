"""delaycv with MOA learners against MOA's own ``EvaluatePrequentialDelayedCV``, whole processes.

The same stream for both: the Commit Guru project git(master) (43.7k rows; with ``--long`` also
git(master) then gimp(master), 90.4k rows, gimp's times shifted to follow git's), converted by
delaycv from ``../shared/datasets/`` and handed to MOA as the ARFF of the features delaycv's MOA
learners see (:func:`delaycv.jvm.task.write_arff`). Bootstrap with 10 folds, a delay of 100
instances, a row every 500 instances, for HoeffdingTree and OzaBag of 10 HoeffdingTrees:

    delaycv evaluate STREAM --learner "moa:trees.HoeffdingTree" --validation bootstrap --folds 10 \\
        --policy delay --window 100i --every 500 --out DIR --quiet [--jobs 2]
    java -cp moa.jar moa.DoTask "EvaluatePrequentialDelayedCV -l (trees.HoeffdingTree) \\
        -s (ArffFileStream -f STREAM.arff -c -1) -w 10 -a Bootstrap-Validation -k 100 -f 500" -S

(bootstrap: each draws its own weights, so the numbers differ; the tests check exactness where a
mapping exists). DoTask's ``-S`` skips its status lines: without it, DoTask's main thread checks
for the task's end once a second while it prints the status, so its wall time is the JVM's start
plus whole seconds. The commands run interleaved, ``--runs`` times each. Printed per stream and
learner: the median wall time, CPU time (user + system of the process and its threads) and peak
resident set (``ru_maxrss`` from ``wait4``, in a small launcher: :data:`LAUNCHER`) of delaycv with
``--jobs 1`` and ``--jobs 2`` and of MOA's task, and the ratios that issue 40 sets targets for;
then the whole process of a 200-row run (MOA's NaiveBayes and river's GaussianNB) and of
``delaycv --help``. The exit status is 1 when a ratio misses its target. delaycv's modules are
compiled to bytecode first (:func:`write_bytecode`), as a package's first import writes it, so
that no timed process compiles the package's sources.

``--million`` adds part 5 of the issue: a million synthetic commits with an effort (``delaycv
generate --rows 1000000``) in one run of the command below (HoeffdingTree, hitl 7d/90d, bootstrap
with 10 folds, the default effort scope, progress on stderr), once, and git(master) with the same
command (``--quiet``, medians of ``--runs``): wall, CPU and peak RSS, the progress lines the run
printed, and its time per fold and instance against git(master)'s (target: at most 1.3).

    delaycv evaluate STREAM --learner "moa:trees.HoeffdingTree" --policy hitl --pos-window 7d \\
        --neg-window 90d --validation bootstrap --folds 10 --out DIR

``--effort`` adds part 3: the effort-aware measures alone at 43,772 to 3,000,000 evaluations
(``benchmarks/bench_effort.py curve``, its defaults; target: at most 1.2 at 1,000,000).

``--model`` adds how ``--jobs N`` scales, in this process (imports and the JVM's start aside, the
JVM warmed on 3,000 rows first): for each learner on git(master), ``--runs`` rounds of one thread
and two, timing the Java loop (``delaycv.jvm.rows.run_rows``, summed over the threads) apart from
the rest of the evaluation (Python's side: the chunks, the releases, the checkpoints' metrics,
which run in the main thread). With one thread these give S (the rest) and J (the Java loop), and
the model T(N) = S + J ceil(K / N) / K for K = 10 folds (each chunk's folds shared out among N
threads; Python's side serial), printed for N = 1, 2, 4, 8 and 16 beside the measured T(2).

    python benchmarks/bench_moa.py [--runs 5] [--long] [--model] [--million] [--effort]
"""

from __future__ import annotations

import argparse
import logging
import os
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
LEARNERS = {
    "HoeffdingTree": "trees.HoeffdingTree",
    "OzaBag(10)": "meta.OzaBag -l trees.HoeffdingTree -s 10",
}
#: (what, learner, target): the most each ratio may be (issue 40)
TARGETS = (
    ("--jobs 2 / --jobs 1, wall", "OzaBag(10)", 0.65),
    ("--jobs 2 / --jobs 1, wall", "HoeffdingTree", 0.85),
    ("--jobs 2 / --jobs 1, CPU", "OzaBag(10)", 1.15),
    ("--jobs 2 / --jobs 1, CPU", "HoeffdingTree", 1.15),
    ("--jobs 2 / MOA -S, wall", "OzaBag(10)", 0.7),
    ("--jobs 2 / MOA -S, wall", "HoeffdingTree", 1.2),
    ("--jobs 1 / MOA -S, wall", "HoeffdingTree", 1.5),
    ("--jobs 1 / MOA -S, peak RSS", "HoeffdingTree", 1.0),
    ("--jobs 1 / MOA -S, peak RSS", "OzaBag(10)", 1.1),
)
#: the most a 200-row run of a MOA learner may take, whole process (seconds)
SMALL_RUN_TARGET = 0.5
#: the runs of both tools: bootstrap with FOLDS folds, a delay of DELAY instances, a row every EVERY
FOLDS, DELAY, EVERY = 10, 100, 500
#: part 5: the synthetic stream's length, and the most its time per fold and instance may be
#: against git(master)'s
MILLION, MILLION_TARGET = 1_000_000, 1.3


def streams(tmp: Path, long: bool) -> dict[str, Path]:
    """The benchmark streams as Parquet (delaycv) and ARFF (MOA), written into ``tmp``."""
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
    chosen = {"git(master)": ("git", git)}
    if long:
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
        chosen["git(master)+gimp"] = ("git_gimp", both)
    out = {}
    for name, (stem, stream) in chosen.items():
        write_arff(stream, tmp / f"{stem}.arff")
        out[name] = tmp / stem
    # the 200-row stream of the small runs
    write_stream(git.subset(0, 200), tmp / "small.parquet")
    return out


#: A small process that runs the command and reports its rusage on the pipe whose fd it is
#: given. Linux keeps a process's peak RSS across exec, and a fork copies the parent's: a command
#: forked from this benchmark (a few hundred MiB of pandas and the streams) would report at least
#: that much. Forked from this launcher, its peak is its own.
LAUNCHER = """import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
os.write(int(sys.argv[1]), f"{usage.ru_utime} {usage.ru_stime} {usage.ru_maxrss}".encode())
sys.exit(os.waitstatus_to_exitcode(status))
"""


def write_bytecode() -> None:
    """Compile delaycv's modules to bytecode (``__pycache__``, as their first import writes it).
    Where ``PYTHONDONTWRITEBYTECODE`` is set (some CI machines and containers) an editable
    install has none, and every timed process would compile the package's sources again (about
    0.15 s each), which a user's installed copy does not."""
    import compileall

    if not compileall.compile_dir(REPO / "delaycv", quiet=1):
        raise SystemExit("bench_moa: delaycv's modules did not compile (above)")


def timed(cmd: list[str], stderr: list[str] | None = None) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system, threads included) and peak RSS (MiB) of one
    process (run by :data:`LAUNCHER`; its own start, about 10 ms, is in the wall time only);
    what it printed on stderr is appended to ``stderr`` if given."""
    read, write = os.pipe()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-S", "-c", LAUNCHER, str(write), *cmd],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, pass_fds=(write,),
    )  # fmt: skip
    os.close(write)
    _, err = proc.communicate()
    wall = time.perf_counter() - t0
    with os.fdopen(read) as report:
        usage = report.read().split()
    if proc.returncode != 0 or len(usage) != 3:
        raise SystemExit(f"bench_moa: {' '.join(cmd[:3])} failed: {err.strip()[-500:]}")
    user, system, maxrss = map(float, usage)
    if stderr is not None:
        stderr.append(err)
    return wall, user + system, maxrss / 1024


def medians(commands: dict[str, list[str]], runs: int) -> dict[str, tuple[float, float, float]]:
    """Each command once to warm the file cache, then ``runs`` interleaved rounds: the medians."""
    for cmd in commands.values():
        timed(cmd)
    times: dict[str, list] = {k: [] for k in commands}
    for _ in range(runs):
        for key, cmd in commands.items():
            times[key].append(timed(cmd))
    return {
        k: tuple(statistics.median(r[i] for r in v) for i in range(3)) for k, v in times.items()
    }


def scaling_model(stream_path: Path, runs: int) -> None:
    """The ``--model`` part (module docstring), printed."""
    import math
    import threading

    import delaycv
    from delaycv.data.stream_file import read_stream
    from delaycv.jvm import rows

    stream = read_stream(stream_path)
    options = dict(
        validation="bootstrap", folds=FOLDS, policy="delay", window=f"{DELAY}i", every=EVERY,
        progress=False,
    )  # fmt: skip
    java = [0.0]
    lock = threading.Lock()
    java_loop = rows.run_rows

    def java_loop_timed(*args):
        t0 = time.perf_counter()
        try:
            return java_loop(*args)
        finally:
            with lock:
                java[0] += time.perf_counter() - t0

    rows.run_rows = java_loop_timed
    engine_log = logging.getLogger("delaycv.engine")
    level = engine_log.level
    # the runs' warnings (OzaBag's votes) would repeat at every run
    engine_log.setLevel(logging.ERROR)
    try:
        print(f"\nhow --jobs N scales, in one process (git(master), medians of {runs}; seconds)")
        for label, learner in LEARNERS.items():
            spec = f"moa:{learner}"
            delaycv.evaluate(stream.subset(0, 3000), spec, **options)  # the JVM warmed
            measured: dict[int, list] = {1: [], 2: []}
            for _ in range(runs):
                for jobs in (1, 2):
                    java[0] = 0.0
                    t0 = time.perf_counter()
                    delaycv.evaluate(stream, spec, jobs=jobs, **options)
                    measured[jobs].append((time.perf_counter() - t0, java[0]))
            wall1 = statistics.median(w for w, _ in measured[1])
            loop = statistics.median(j for _, j in measured[1])
            rest = wall1 - loop
            wall2 = statistics.median(w for w, _ in measured[2])
            loop2 = statistics.median(j for _, j in measured[2])
            model = {n: rest + loop * math.ceil(FOLDS / n) / FOLDS for n in (1, 2, 4, 8, 16)}
            print(f"  {label}: S (Python's side) {rest:.2f}, J (the Java loop) {loop:.2f}; "
                  f"two threads: T(2) {wall2:.2f} (the Java loop summed {loop2:.2f})")  # fmt: skip
            print("    model T(N):  " + "  ".join(
                f"N={n} {t:.2f} ({t / model[1]:.2f})" for n, t in model.items()
            ))  # fmt: skip
            print(f"    measured T(2) / modelled T(2): {wall2 / model[2]:.2f}; "
                  f"bound (N -> inf): {rest / model[1]:.2f} of T(1)")  # fmt: skip
    finally:
        rows.run_rows = java_loop
        engine_log.setLevel(level)


def million(delaycv: str, tmp: Path, git: Path, runs: int) -> float:
    """Part 5 (module docstring): print the million commits' run beside git(master)'s; return the
    ratio of their times per fold and instance."""
    import pyarrow.parquet as pq

    stream = tmp / "s1m.parquet"
    subprocess.run(
        [delaycv, "generate", "--rows", str(MILLION), str(stream)], check=True, capture_output=True
    )

    def command(path: Path, out: str) -> list[str]:
        return [
            delaycv, "evaluate", str(path), "--learner", "moa:trees.HoeffdingTree", "--policy",
            "hitl", "--pos-window", "7d", "--neg-window", "90d", "--validation", "bootstrap",
            "--folds", str(FOLDS), "--out", out,
        ]  # fmt: skip

    small = medians({"git": [*command(git, f"{tmp}/git-hitl"), "--quiet"]}, runs)["git"]
    printed: list[str] = []
    big = timed(command(stream, f"{tmp}/million"), stderr=printed)
    progress = [line for line in printed[0].splitlines() if "ETA" in line]
    rows = pq.ParquetFile(git).metadata.num_rows
    per = {"git": small[0] / (rows * FOLDS) * 1e6, "million": big[0] / (MILLION * FOLDS) * 1e6}
    ratio = per["million"] / per["git"]
    print(f"\na million commits, HoeffdingTree, hitl 7d/90d, bootstrap {FOLDS} folds (wall s, CPU s, "
          "peak RSS MiB, us per fold and instance)")  # fmt: skip
    print(f"  git(master), {rows:,} rows (median of {runs}) {small[0]:7.2f} {small[1]:7.2f} "
          f"{small[2]:7.0f} {per['git']:6.2f}")  # fmt: skip
    print(f"  {MILLION:,} synthetic rows (one run)    {big[0]:7.2f} {big[1]:7.2f} {big[2]:7.0f} "
          f"{per['million']:6.2f}")  # fmt: skip
    print(
        f"  progress on stderr: {len(progress)} lines, the last: {progress[-1] if progress else '-'}"
    )
    verdict = "met" if ratio <= MILLION_TARGET else "MISSED"
    print(f"  per fold and instance, against git(master): {ratio:.2f} "
          f"(target <= {MILLION_TARGET:g}: {verdict})")  # fmt: skip
    return ratio


def run_count(text: str) -> int:
    """``--runs``'s value: a count of rounds, at least 1 (each figure is a median of them)."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a count of rounds >= 1")
    return int(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=run_count, default=5, help="rounds of each command (5)")
    parser.add_argument("--long", action="store_true", help="also git(master) then gimp")
    parser.add_argument("--model", action="store_true", help="also how --jobs N scales")
    parser.add_argument("--million", action="store_true", help="also a million commits (part 5)")
    parser.add_argument("--effort", action="store_true", help="also the effort curve (part 3)")
    args = parser.parse_args()
    from delaycv.jvm import rows
    from delaycv.jvm.jar import locate
    from delaycv.jvm.task import task_command

    jar = locate()
    write_bytecode()
    print(f"bench_moa: MOA learners run {rows.status()}; {os.cpu_count()} cores; "
          f"load {os.getloadavg()[0]:.2f}")  # fmt: skip
    delaycv = str(Path(sys.executable).with_name("delaycv"))
    missed = []
    with tempfile.TemporaryDirectory() as tmp:
        chosen = streams(Path(tmp), args.long)
        chosen_git = chosen["git(master)"]
        for name, stem in chosen.items():
            for label, learner in LEARNERS.items():
                ours = [
                    delaycv, "evaluate", f"{stem}.parquet", "--learner", f"moa:{learner}",
                    "--validation", "bootstrap", "--folds", str(FOLDS), "--policy", "delay",
                    "--window", f"{DELAY}i", "--every", str(EVERY), "--out", f"{tmp}/run",
                    "--quiet",
                ]  # fmt: skip
                task = task_command(
                    Path(f"{stem}.arff"), learner, folds=FOLDS, method="bootstrap",
                    delay=DELAY, every=EVERY,
                )  # fmt: skip
                med = medians(
                    {
                        "--jobs 1": ours,
                        "--jobs 2": [*ours, "--jobs", "2"],
                        "MOA -S": ["java", "-cp", str(jar), "moa.DoTask", task, "-S"],
                    },
                    args.runs,
                )
                print(f"\n{name}, {label}: medians of {args.runs} (wall s, CPU s, peak RSS MiB)")
                for key, (wall, cpu, rss) in med.items():
                    print(f"  {key:9} {wall:7.2f} {cpu:7.2f} {rss:8.0f}")
                ratios = {
                    "--jobs 2 / --jobs 1, wall": med["--jobs 2"][0] / med["--jobs 1"][0],
                    "--jobs 2 / --jobs 1, CPU": med["--jobs 2"][1] / med["--jobs 1"][1],
                    "--jobs 1 / MOA -S, wall": med["--jobs 1"][0] / med["MOA -S"][0],
                    "--jobs 1 / MOA -S, CPU": med["--jobs 1"][1] / med["MOA -S"][1],
                    "--jobs 2 / MOA -S, wall": med["--jobs 2"][0] / med["MOA -S"][0],
                    "--jobs 1 / MOA -S, peak RSS": med["--jobs 1"][2] / med["MOA -S"][2],
                }
                for what, value in ratios.items():
                    target = next((t for w, lr, t in TARGETS if w == what and lr == label), None)
                    verdict = ""
                    if target is not None and name == "git(master)":
                        ok = value <= target
                        verdict = f"  (target <= {target:g}: {'met' if ok else 'MISSED'})"
                        if not ok:
                            missed.append(f"{name}, {label}: {what} {value:.2f}")
                    print(f"  {what:28} {value:5.2f}{verdict}")
        small = f"{tmp}/small.parquet"
        base = [delaycv, "evaluate", small, "--out", f"{tmp}/small", "--quiet"]
        med = medians(
            {
                "MOA NaiveBayes": [*base, "--learner", "moa:bayes.NaiveBayes"],
                "river GaussianNB": [*base, "--learner", "naive_bayes.GaussianNB"],
                "delaycv --help": [delaycv, "--help"],
            },
            args.runs,
        )
        print(
            f"\na 200-row run, whole process: medians of {args.runs} (wall s, CPU s, peak RSS MiB)"
        )
        for key, (wall, cpu, rss) in med.items():
            verdict = ""
            if key.startswith("MOA"):
                ok = wall <= SMALL_RUN_TARGET
                verdict = f"  (target <= {SMALL_RUN_TARGET:g} s: {'met' if ok else 'MISSED'})"
                if not ok:
                    missed.append(f"a 200-row run of {key}: {wall:.2f} s")
            print(f"  {key:17} {wall:6.2f} {cpu:6.2f} {rss:7.0f}{verdict}")
        if args.model:
            scaling_model(Path(f"{chosen_git}.parquet"), args.runs)
        if args.million:
            ratio = million(delaycv, Path(tmp), Path(f"{chosen_git}.parquet"), args.runs)
            if ratio > MILLION_TARGET:
                missed.append(f"a million commits, per fold and instance: {ratio:.2f}")
    if args.effort:
        import bench_effort

        print()
        ratio = bench_effort.curve(
            argparse.Namespace(
                rows=list(bench_effort.LENGTHS), folds=FOLDS, repeats=3, scope="cumulative",
                width=1000,
            )
        )  # fmt: skip
        if ratio is not None and ratio > bench_effort.TARGET:
            missed.append(f"the effort curve at 1,000,000 against 43,772: {ratio:.2f}")
    print(f"\nbench_moa: load {os.getloadavg()[0]:.2f} after; targets missed: {len(missed)}")
    for line in missed:
        print(f"  {line}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
