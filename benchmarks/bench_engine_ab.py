"""The engine of one checkout against the engine of another, in lockstep: new time / old time.

How a change to the engine is measured. Two runs of ``engine.evaluate`` on the overhead
benchmark's setting (HoeffdingTree, 10 folds, bootstrap, hitl 7d/90d, the synthetic stream,
checkpoints every 1,000, fading 0.99), one per checkout, each in its own process, both pinned to
the same CPU and taking turns: at every progress call (every 256 instances of a fold) a side hands
the CPU to the other and waits. Both see the same stretches of a shared machine, whose speed
drifts by 20-40 % within seconds, and each keeps its own heap, so the learners' caches and
allocations are what they are in a real run. Time = the CPU seconds of each side's ``evaluate``
(``time.process_time``; waiting costs none).

Which side starts first moves the ratio by up to ~1 % (measured: the same code on both sides,
alternating, 0.98-1.02), so the runs come in pairs, one starting with each side, and a pair's
ratio is the geometric mean of its two. Reported: every pair, their median, and the difference in
microseconds per fold and instance (what the overhead benchmark calls bookkeeping). A change
worth 0.1 us is ~0.3 % of a tree's time: it takes several pairs to see it.

Usage: ``.venv/bin/python benchmarks/bench_engine_ab.py [OLD [NEW]] [--rows N] [--pairs P]
[--learner CLASS]``, where OLD and NEW are checkouts (``git worktree add /tmp/old REV``; both
need the engine package and ``delaycv.protocol.settings``); NEW defaults to this checkout, and without
either this checkout runs against itself: the noise floor (``make bench`` runs it so).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def side(code: str, fd_in: int, fd_out: int, rows: int, first: bool, learner: str) -> None:
    """One side: the engine of checkout ``code``; prints its CPU seconds."""
    sys.path.insert(0, code)
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    # this script's folder; the delaycv they import is the checkout's
    from bench_engine_overhead import SETTING, evaluate

    from delaycv.data.synthetic import generate_stream

    stream = generate_stream(rows, seed=1)
    waited = 0.0
    other_done = False

    def handoff(_k: int) -> None:
        nonlocal waited, other_done
        if other_done:
            return
        c0 = time.process_time()
        os.write(fd_out, b"x")
        other_done = os.read(fd_in, 1) == b"d"  # "d": the other side has finished
        waited += time.process_time() - c0

    if not first:
        os.read(fd_in, 1)
    t0 = time.process_time()
    evaluate(stream, {"class": learner}, progress=handoff, **SETTING)
    seconds = time.process_time() - t0 - waited
    if not other_done:
        os.write(fd_out, b"d")
        os.read(fd_in, 1)
    print(seconds, flush=True)


def lockstep(first: str, second: str, rows: int, learner: str) -> tuple[float, float]:
    """One run of both checkouts in lockstep, ``first`` starting; their CPU seconds (first's,
    second's)."""
    a_r, a_w = os.pipe()  # first -> second
    b_r, b_w = os.pipe()  # second -> first
    argv = [sys.executable, __file__, "--side"]
    procs = [
        subprocess.Popen(
            [*argv, first, str(b_r), str(a_w), str(rows), "1", learner],
            pass_fds=(b_r, a_w),
            stdout=subprocess.PIPE,
            text=True,
        ),
        subprocess.Popen(
            [*argv, second, str(a_r), str(b_w), str(rows), "0", learner],
            pass_fds=(a_r, b_w),
            stdout=subprocess.PIPE,
            text=True,
        ),
    ]
    for fd in (a_r, a_w, b_r, b_w):
        os.close(fd)
    seconds = []
    for code, proc in zip((first, second), procs, strict=True):
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"the side of {code} failed (exit {proc.returncode})")
        seconds.append(float(out.split()[-1]))
    return seconds[0], seconds[1]


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "--side":
        code, fd_in, fd_out, rows, first, learner = args[1:7]
        side(code, int(fd_in), int(fd_out), int(rows), first == "1", learner)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = Path(__file__).resolve().parents[1]
    ap.add_argument("old", type=Path, nargs="?", default=here, help="checkout of the baseline")
    ap.add_argument("new", type=Path, nargs="?", default=here, help="checkout of the change")
    ap.add_argument("--rows", type=int, default=30_000)
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--learner", default="tree.HoeffdingTreeClassifier")
    opts = ap.parse_args(args)
    if opts.rows < 1 or opts.pairs < 1:
        ap.error(f"--rows and --pairs must be positive integers, got {opts.rows} and {opts.pairs}")
    old, new = (str(p.resolve()) for p in (opts.old, opts.new))
    for p in (old, new):
        if not (Path(p) / "delaycv" / "engine").is_dir():
            ap.error(f"{p} is not a delaycv checkout with the engine package")
    per = opts.rows * 10 / 1e6  # fold-instances, in millions
    print(f"{opts.learner}, {opts.rows:,} instances x 10 folds; old {old}, new {new}")
    ratios, diffs = [], []
    for k in range(opts.pairs):
        a_old, a_new = lockstep(old, new, opts.rows, opts.learner)
        b_new, b_old = lockstep(new, old, opts.rows, opts.learner)
        ratio = math.sqrt(a_new / a_old * b_new / b_old)
        diff = ((a_new - a_old) + (b_new - b_old)) / 2 / per
        ratios.append(ratio)
        diffs.append(diff)
        print(
            f"  pair {k}: old first {a_old:.2f} / {a_new:.2f} s, new first {b_old:.2f} / "
            f"{b_new:.2f} s (old / new): new / old {ratio:.4f}, {diff:+.3f} us per fold and "
            "instance"
        )
    print(
        f"new / old = {statistics.median(ratios):.4f} (median of {opts.pairs} pairs), "
        f"{statistics.median(diffs):+.3f} us per fold and instance"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
