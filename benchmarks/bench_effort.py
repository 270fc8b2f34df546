"""What the effort-aware measures cost a run: git(master) (43,772 commits, ``../shared/datasets/``)
with them on / the same run without them (target: at most 1.10).

Setting (the HITL study's): HoeffdingTree, 10 bootstrap folds, hitl 7d/90d, a checkpoint every
30 commits; the estimator is the study's ``fading`` (0.99: the measures read the last 100
evaluations) and ``cumulative`` (every evaluation so far: the costly scope, a Fenwick tree that
grows with the stream).

Two figures per estimator, both within one process:

* **in-run share**: one run with the measures on, the CPU time spent in
  :class:`~delaycv.metrics.effort.EffortCurve` (``add_many``, ``snapshots``) over the
  CPU time of the rest of the run: the ratio ``1 + share`` does not move with the machine's speed,
  which drifts by 20-40 % within seconds on shared virtual machines;
* **paired runs**: ``--pairs`` (3) pairs of whole runs, the stream with its effort and the same
  stream without it, alternating which side goes first; the median of the pairs' ratios of CPU
  seconds.

Usage: ``.venv/bin/python benchmarks/bench_effort.py [--rows N] [--pairs P]
[--estimator fading|cumulative|both]``
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path

from delaycv import engine
from delaycv.metrics import effort
from delaycv.protocol.settings import make_settings

GIT = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "datasets"
    / "commit_guru_dataset"
    / "cut2years"
    / "0_git(master).arff"
)
TARGET = 1.10


def streams(rows: int | None):
    """git(master) with its effort (la + ld) and the same stream without one."""
    from delaycv.data.convert import load_stream

    if not GIT.is_file():
        sys.exit(f"bench_effort: {GIT} not found (the Commit Guru data of ../shared/datasets/)")
    with_effort = load_stream(GIT, preset="commit-guru")
    if rows:
        with_effort = with_effort.subset(0, rows)
    without = dataclasses.replace(with_effort, effort=None)
    assert without.metadata.get("effort") is None and with_effort.metadata["effort"]
    return with_effort, without


def settings_for(estimator: str):
    return make_settings(
        learner={"class": "river.tree.HoeffdingTreeClassifier"},
        policy={"preset": "hitl", "pos_window": "7d", "neg_window": "90d"},
        validation={"scheme": "bootstrap", "folds": 10, "seed": 1},
        estimator=estimator,
        every=30,
    )


def cpu_of_run(stream, settings) -> float:
    c0 = time.process_time()
    engine.evaluate(stream, settings)
    return time.process_time() - c0


def in_run_share(stream, settings) -> tuple[float, float]:
    """(CPU seconds of the whole run, of which in EffortCurve)."""
    spent = [0.0]
    originals = {}
    for name in ("add_many", "snapshots"):  # snapshot calls snapshots
        original = getattr(effort.EffortCurve, name)
        originals[name] = original

        def timed(self, *args, _original=original, **kwargs):
            c0 = time.process_time()
            try:
                return _original(self, *args, **kwargs)
            finally:
                spent[0] += time.process_time() - c0

        setattr(effort.EffortCurve, name, timed)
    try:
        total = cpu_of_run(stream, settings)
    finally:
        for name, original in originals.items():
            setattr(effort.EffortCurve, name, original)
    return total, spent[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=None, help="the first N commits only")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--estimator", choices=["fading", "cumulative", "both"], default="both")
    args = parser.parse_args()
    if args.pairs < 1 or (args.rows is not None and args.rows < 1):
        parser.error("--pairs and --rows must be >= 1")
    with_effort, without = streams(args.rows)
    print(
        f"effort-aware measures: git(master), {len(with_effort):,} commits, HoeffdingTree, "
        f"10 bootstrap folds, hitl 7d/90d, every 30; the loop of the measures: {effort.LOOP_STATUS}"
    )
    print(f"  load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    kinds = ["fading", "cumulative"] if args.estimator == "both" else [args.estimator]
    worst = 0.0
    for kind in kinds:
        settings = settings_for(kind)
        total, spent = in_run_share(with_effort, settings)
        share = spent / (total - spent)
        ratios = []
        for pair in range(args.pairs):
            order = (with_effort, without) if pair % 2 == 0 else (without, with_effort)
            cpu = {id(s): cpu_of_run(s, settings) for s in order}
            ratios.append(cpu[id(with_effort)] / cpu[id(without)])
        paired = statistics.median(ratios)
        worst = max(worst, 1 + share)
        print(
            f"  {kind:10s} in-run: {spent:6.2f} s of {total:6.2f} s CPU in the measures -> "
            f"{1 + share:.3f}x; paired runs: {paired:.3f}x "
            f"({', '.join(f'{r:.3f}' for r in ratios)}); "
            f"{spent / (10 * len(with_effort)) * 1e6:.2f} us per fold and commit"
        )
    print(f"  target: at most {TARGET:.2f}x (in-run): {'met' if worst <= TARGET else 'NOT met'}")
    print(f"  load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
