"""What the effort-aware measures cost: per fold and instance as the stream grows, and within a
real run.

``curve`` (the default): the cost per fold and evaluation of :class:`~delaycv.metrics.effort.EffortCurve`
alone, and the peak memory of the process, on streams of 43,772 (git(master)'s length), 300,000,
1,000,000 and 3,000,000 evaluations. As a run feeds it: ``--folds`` (10) curves, each fed the
evaluations of every chunk of 4,096 in turn, with a checkpoint every 500; P(1) uniform in
[0, 1], efforts drawn from git(master)'s la + ld (``../shared/datasets/``; integers 0-499
without it), a quarter of the labels defective against the observed label, 30 % against the
true one. Each length runs in a process of its own (its peak resident memory is its own), the
lengths in turn, ``--repeats`` times; the medians are printed, and the ratio of each length's
CPU time per fold and evaluation to the first's (the scope's target: at most 1.2 at 1,000,000).
The machine's speed drifts, and other processes share its caches: read the ratios of one
invocation, not absolute times across invocations.

``run``: git(master) (43,772 commits), HoeffdingTree, 10 bootstrap folds, hitl 7d/90d, a
checkpoint every 30 commits, the default effort scope (every evaluation so far) and a sliding
one of 100: the CPU time spent in ``EffortCurve`` within one run, against the rest of that run
(``1 + share``; a ratio that does not move with the machine's speed).

Usage: ``.venv/bin/python benchmarks/bench_effort.py [curve] [--rows N ...] [--folds K]
[--repeats R] [--scope cumulative|sliding] [--width W]`` or ``... bench_effort.py run [--rows N]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

GIT = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "datasets"
    / "commit_guru_dataset"
    / "cut2years"
    / "0_git(master).arff"
)
LENGTHS = (43_772, 300_000, 1_000_000, 3_000_000)
CHUNK = 4096
EVERY = 500
TARGET = 1.2  # CPU per fold and evaluation at 1,000,000 against 43,772


def efforts_to_draw() -> tuple:
    """The efforts the curve benchmark draws from: git(master)'s la + ld, or integers 0-499."""
    import numpy as np

    if GIT.is_file():
        from delaycv.data.convert import load_stream

        return load_stream(GIT, preset="commit-guru").effort, "git(master)'s la + ld"
    return np.arange(500, dtype=np.float64), "integers 0-499 (git(master) not found)"


def curve_once(rows: int, folds: int, scope: dict) -> dict:
    """One length in this process: CPU seconds per fold and evaluation, peak resident memory."""
    import numpy as np

    from delaycv.metrics import effort

    pool, _ = efforts_to_draw()
    rng = np.random.default_rng(rows)
    data = []
    for _ in range(folds):
        data.append(
            (
                rng.random(rows),
                rng.choice(pool, rows),
                (rng.random(rows) < 0.25).astype(np.int8),
                (rng.random(rows) < 0.30).astype(np.int8),
            )
        )
    curves = [effort.EffortCurve(scope) for _ in range(folds)]
    c0 = time.process_time()
    for start in range(0, rows, CHUNK):
        stop = min(rows, start + CHUNK)
        bounds = np.arange(EVERY - start % EVERY, stop - start + 1, EVERY)
        if not bounds.size or bounds[-1] != stop - start:
            bounds = np.append(bounds, stop - start)
        for curve, (p1, e, obs, true) in zip(curves, data, strict=True):
            curve.add_many(p1[start:stop], e[start:stop], obs[start:stop], true[start:stop])
            curve.snapshots(bounds)
    cpu = time.process_time() - c0
    return {
        "us": cpu / (rows * folds) * 1e6,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "loop": effort.LOOP_STATUS,
    }


def curve(args) -> float | None:
    """Print the curve's cost per length; return the ratio at 1,000,000 against the first length
    (git(master)'s), or None where those lengths were not run."""
    scope = (
        {"kind": args.scope}
        if args.scope == "cumulative"
        else {"kind": "sliding", "width": args.width}
    )
    _, drawn = efforts_to_draw()
    print(
        f"effort-aware measures alone: {args.folds} folds fed in chunks of {CHUNK}, a checkpoint "
        f"every {EVERY}, scope {scope}, efforts drawn from {drawn}"
    )
    print(f"  load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    found: dict[int, list[dict]] = {n: [] for n in args.rows}
    for _ in range(args.repeats):
        for n in args.rows:
            command = [sys.executable, __file__, "one", str(n), str(args.folds), json.dumps(scope)]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            found[n].append(json.loads(done.stdout.strip().splitlines()[-1]))
            run = found[n][-1]
            print(f"    {n:>10,}: {run['us']:.2f} us, {run['peak_mib']:.0f} MiB", flush=True)
    base = statistics.median(r["us"] for r in found[args.rows[0]])
    print(f"  the loop: {found[args.rows[0]][0]['loop']}")
    print(f"  {'rows':>10} {'us per fold and evaluation':>28} {'ratio':>7} {'peak memory':>13}")
    for n in args.rows:
        us = statistics.median(r["us"] for r in found[n])
        peak = statistics.median(r["peak_mib"] for r in found[n])
        runs = ", ".join(f"{r['us']:.2f}" for r in found[n])
        print(f"  {n:>10,} {us:>12.2f} ({runs:>13}) {us / base:>7.2f} {peak:>9.0f} MiB")
    ratio = None
    if 1_000_000 in found and args.rows[0] == LENGTHS[0]:
        ratio = statistics.median(r["us"] for r in found[1_000_000]) / base
        print(
            f"  target: at most {TARGET:.2f} at 1,000,000: {'met' if ratio <= TARGET else 'NOT met'}"
        )
    print(f"  load average at end: {os.getloadavg()[0]:.2f}")
    return ratio


def in_run(args) -> None:
    """The CPU share of EffortCurve in a real run (git(master), HoeffdingTree, 10 folds)."""
    from delaycv import engine
    from delaycv.data.convert import load_stream
    from delaycv.metrics import effort
    from delaycv.protocol.settings import make_settings

    if not GIT.is_file():
        sys.exit(f"bench_effort: {GIT} not found (the Commit Guru data of ../shared/datasets/)")
    stream = load_stream(GIT, preset="commit-guru")
    if args.rows:
        stream = stream.subset(0, args.rows)
    print(
        f"effort-aware measures in a run: git(master), {len(stream):,} commits, HoeffdingTree, "
        f"10 bootstrap folds, hitl 7d/90d, every 30; the loop: {effort.LOOP_STATUS}"
    )
    spent = [0.0]
    originals = {name: getattr(effort.EffortCurve, name) for name in ("add_many", "snapshots")}

    def timed(original):
        def method(self, *a, **k):
            c0 = time.process_time()
            try:
                return original(self, *a, **k)
            finally:
                spent[0] += time.process_time() - c0

        return method

    for name, original in originals.items():
        setattr(effort.EffortCurve, name, timed(original))
    try:
        for scope in ({"kind": "cumulative"}, {"kind": "sliding", "width": 100}):
            settings = make_settings(
                learner={"class": "river.tree.HoeffdingTreeClassifier"},
                policy={"preset": "hitl", "pos_window": "7d", "neg_window": "90d"},
                validation={"scheme": "bootstrap", "folds": 10, "seed": 1},
                effort_scope=scope,
                every=30,
            )
            spent[0] = 0.0
            c0 = time.process_time()
            engine.evaluate(stream, settings)
            total = time.process_time() - c0
            print(
                f"  {str(scope):40s} {spent[0]:6.2f} s of {total:6.2f} s CPU in the measures -> "
                f"{1 + spent[0] / (total - spent[0]):.3f}x; "
                f"{spent[0] / (10 * len(stream)) * 1e6:.2f} us per fold and commit"
            )
    finally:
        for name, original in originals.items():
            setattr(effort.EffortCurve, name, original)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "one":  # a length, in a process of its own
        rows, folds, scope = int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
        print(json.dumps(curve_once(rows, folds, scope)))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", nargs="?", choices=["curve", "run"], default="curve")
    parser.add_argument("--rows", type=int, nargs="+", default=None, help="stream lengths")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scope", choices=["cumulative", "sliding"], default="cumulative")
    parser.add_argument("--width", type=int, default=1000)
    args = parser.parse_args()
    if args.what == "run":
        args.rows = args.rows[0] if args.rows else None
        in_run(args)
        return
    args.rows = args.rows or list(LENGTHS)
    if min(args.rows) < 1 or args.folds < 1 or args.repeats < 1 or args.width < 1:
        parser.error("--rows, --folds, --repeats and --width must be >= 1")
    curve(args)


if __name__ == "__main__":
    main()
