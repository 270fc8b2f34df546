"""What the corrected reference costs a run: git(master) (43,772 commits, ``../shared/datasets/``)
with it on against the same run without it (target: at most 1.10).

Setting (the HITL study's): river's HoeffdingTree, 10 bootstrap folds, hitl 7d/90d, a checkpoint
every 30 commits, the estimators ``fading`` (0.99, the default) and ``cumulative``.

Two figures per estimator, both within one process:

* **in-run share**: one run with the reference on, the CPU time spent in it (the fold's
  :class:`~delaycv.metrics.corrected.CorrectedState`: its evaluations and sides, its checkpoints;
  the run's arrivals) over the CPU time of the rest of that run: the ratio ``1 + share`` does not
  move with the machine's speed, which drifts by 20-40 % within seconds on shared machines;
* **paired runs**: ``--pairs`` (3) pairs of whole runs, on and off (``corrected=False``),
  alternating which goes first; the median of the pairs' ratios of CPU seconds.

Usage: ``.venv/bin/python benchmarks/bench_corrected.py [--rows N] [--pairs P]
[--estimator fading|cumulative|both] [--doc docs/corrected.md]`` (``--doc`` writes the table into
the doc's block ``<!-- corrected: cost -->``).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import statistics
import sys
import time
from pathlib import Path

from delaycv import engine
from delaycv.metrics import corrected
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
#: What the reference's CPU time is made of: the methods timed.
TIMED = {
    corrected.CorrectedState: ("add_sides", "add_evaluations", "values_at"),
    corrected.Arrivals: ("extend",),
}


def stream_of(rows: int | None):
    from delaycv.data.convert import load_stream

    if not GIT.is_file():
        sys.exit(f"bench_corrected: {GIT} not found (the Commit Guru data of ../shared/datasets/)")
    stream = load_stream(GIT, preset="commit-guru")
    return stream.subset(0, rows) if rows else stream


def settings_for(estimator: str, on: bool = True):
    return make_settings(
        learner={"class": "river.tree.HoeffdingTreeClassifier"},
        policy={"preset": "hitl", "pos_window": "7d", "neg_window": "90d"},
        validation={"scheme": "bootstrap", "folds": 10, "seed": 1},
        estimator=estimator,
        every=30,
        corrected=on,
    )


def cpu_of_run(stream, settings) -> float:
    c0 = time.process_time()
    engine.evaluate(stream, settings)
    return time.process_time() - c0


def in_run_share(stream, settings) -> tuple[float, float]:
    """(CPU seconds of the whole run, of which in the corrected reference)."""
    spent = [0.0]
    originals = []
    for cls, names in TIMED.items():
        for name in names:
            original = getattr(cls, name)
            originals.append((cls, name, original))

            def timed(self, *args, _original=original, **kwargs):
                c0 = time.process_time()
                try:
                    return _original(self, *args, **kwargs)
                finally:
                    spent[0] += time.process_time() - c0

            setattr(cls, name, timed)
    try:
        total = cpu_of_run(stream, settings)
    finally:
        for cls, name, original in originals:
            setattr(cls, name, original)
    return total, spent[0]


def write_doc(doc: Path, table: str) -> None:
    text = doc.read_text()
    pattern = re.compile(r"(<!-- corrected: cost -->\n).*?(<!-- /corrected: cost -->)", re.S)
    if not pattern.search(text):
        sys.exit(f"bench_corrected: {doc} has no block <!-- corrected: cost -->")
    doc.write_text(pattern.sub(lambda m: m.group(1) + table + "\n" + m.group(2), text))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=None, help="the first N commits only")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--estimator", choices=["fading", "cumulative", "both"], default="both")
    parser.add_argument("--doc", type=Path, help="write the table into this doc's cost block")
    args = parser.parse_args()
    if args.pairs < 0 or (args.rows is not None and args.rows < 1):
        parser.error("--pairs must be >= 0 and --rows >= 1")
    stream = stream_of(args.rows)
    print(
        f"the corrected reference: git(master), {len(stream):,} commits, river HoeffdingTree, "
        f"10 bootstrap folds, hitl 7d/90d, every 30; its kernel: {corrected.KERNEL_STATUS}"
    )
    print(f"  load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    kinds = ["fading", "cumulative"] if args.estimator == "both" else [args.estimator]
    rows = ["| estimator | in the reference | of the run's CPU | ratio (target <= 1.10) | "
            "per fold and checkpoint | paired runs |", "|---|---|---|---|---|---|"]  # fmt: skip
    worst = 0.0
    for kind in kinds:
        on = settings_for(kind)
        off = dataclasses.replace(on, corrected=False)
        total, spent = in_run_share(stream, on)
        share = spent / (total - spent)
        ratios = []
        for pair in range(args.pairs):
            order = (on, off) if pair % 2 == 0 else (off, on)
            cpu = {id(s): cpu_of_run(stream, s) for s in order}
            ratios.append(cpu[id(on)] / cpu[id(off)])
        paired = f"{statistics.median(ratios):.3f}" if ratios else "-"
        checkpoints = 10 * (len(stream) // 30 + 1)
        worst = max(worst, 1 + share)
        print(
            f"  {kind:10s} in-run: {spent:6.2f} s of {total:6.2f} s CPU in the reference -> "
            f"{1 + share:.3f}x; paired runs: {paired} ({', '.join(f'{r:.3f}' for r in ratios)}); "
            f"{spent / checkpoints * 1e6:.0f} us per fold and checkpoint"
        )
        rows.append(
            f"| `{kind}` | {spent:.2f} s | {total:.1f} s | {1 + share:.3f} | "
            f"{spent / checkpoints * 1e6:.0f} us | {paired} |"
        )
    print(f"  target: at most {TARGET:.2f}x (in-run): {'met' if worst <= TARGET else 'NOT met'}")
    print(f"  load average at end: {os.getloadavg()[0]:.2f}")
    if args.doc:
        write_doc(args.doc, "\n".join(rows))


if __name__ == "__main__":
    main()
