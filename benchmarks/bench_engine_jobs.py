"""Speed-up of ``jobs=2`` over ``jobs=1`` on 2 cores (target: at least 1.8x), same output.

HoeffdingTree, 10 folds, bootstrap, hitl 7d/90d on the synthetic stream; wall-clock time of
``evaluate(..., jobs=1)`` and ``evaluate(..., jobs=2)`` (process start-up and the transfer of the
stream and of the results included). Also checks that both give the same tables.

Usage: ``.venv/bin/python benchmarks/bench_engine_jobs.py [--quick] [--rows N]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from delaycv.data.synthetic import generate_stream
from delaycv.engine import evaluate
from delaycv.protocol.settings import make_settings


def run(stream, jobs: int):
    t0 = time.perf_counter()
    settings = make_settings(
        learner={"class": "tree.HoeffdingTreeClassifier"},
        policy={"preset": "hitl", "pos_window": "7d", "neg_window": "90d"},
        validation={"scheme": "bootstrap", "folds": 10, "seed": 1},
        seed=1,
        estimator="cumulative",
        every=1000,
        timing=False,
        jobs=jobs,
    )
    result = evaluate(stream, settings)
    return time.perf_counter() - t0, result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10,000 instances")
    ap.add_argument("--rows", type=int, default=None)
    args = ap.parse_args(argv)
    rows = args.rows or (10_000 if args.quick else 50_000)
    stream = generate_stream(rows, seed=1)
    run(stream.subset(0, 200), 2)  # start the fork server once (its start-up is not per run)
    t1, r1 = run(stream, 1)
    t2, r2 = run(stream, 2)
    same = r1.folds.equals(r2.folds) and r1.summary.equals(r2.summary)
    print(f"--jobs: {rows:,} instances x 10 folds, HoeffdingTree, bootstrap, hitl 7d/90d")
    print(f"  cores available: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}")
    print(f"  jobs=1 {t1:8.2f} s")
    print(f"  jobs=2 {t2:8.2f} s   identical tables: {same}")
    print(f"  speed-up jobs=1 / jobs=2 = {t1 / t2:.2f}x   (target >= 1.8x)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
