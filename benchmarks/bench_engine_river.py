"""Engine (k = 1, ideal policy) time / river's ``evaluate.progressive_val_score`` (target <= 1.0).

The same learner and data: the synthetic stream (``delaycv.data.synthetic.generate_stream``). The
headline ratio compares the engine with river's loop over the stream's own ``x`` dicts
(``Stream.records()``: the dicts the engine builds and hands to the learner), prebuilt before the
clock starts, with the labels as Python ints: both sides run the same learner on the same dicts,
and river's side reads nothing. Beside it, labelled, is river's loop reading the feature frame
through ``river.stream.iter_pandas`` (building each dict from a DataFrame row inside the timed
loop: data access included), which earlier versions of this benchmark reported alone. river scores
``metrics.Accuracy`` (one metric); the engine computes all of ``METRICS`` against both references
(cumulative estimator, checkpoints every 1,000) and builds its dicts inside its timed run.
Learners: HoeffdingTree and GaussianNB (the latter is fast, so it shows the engine's own
overhead). Times are CPU seconds of this process (``time.process_time``; everything runs in it),
so that other work on a shared machine does not count; best of ``--repeat``.

Usage: ``.venv/bin/python benchmarks/bench_engine_river.py [--quick] [--rows N] [--repeat R]``
"""

from __future__ import annotations

import argparse
import sys
import time

import pandas as pd
from river import evaluate as river_evaluate
from river import metrics as river_metrics
from river import naive_bayes, tree
from river import stream as river_stream

from delaycv.data.synthetic import generate_stream
from delaycv.engine import evaluate
from delaycv.protocol.settings import make_settings

LEARNERS = {
    "HoeffdingTree": ("tree.HoeffdingTreeClassifier", tree.HoeffdingTreeClassifier),
    "GaussianNB": ("naive_bayes.GaussianNB", naive_bayes.GaussianNB),
}


def time_engine(stream, name: str) -> float:
    t0 = time.process_time()
    settings = make_settings(
        learner={"class": name},
        policy="ideal",
        validation={"scheme": "prequential", "folds": 1},
        seed=1,
        estimator="cumulative",
        every=1000,
    )
    evaluate(stream, settings)
    return time.process_time() - t0


def time_river_dicts(stream, cls) -> float:
    """river's loop over the prebuilt (x, y) pairs: the engine's own x dicts, Python int labels."""
    pairs = list(zip(stream.records(), stream.label.tolist(), strict=True))
    t0 = time.process_time()
    river_evaluate.progressive_val_score(pairs, cls(), river_metrics.Accuracy())
    return time.process_time() - t0


def time_river_pandas(stream, cls) -> float:
    """river's loop reading the feature frame through ``iter_pandas`` (data access included)."""
    X = stream.features
    y = pd.Series(stream.label.astype(int))
    t0 = time.process_time()
    river_evaluate.progressive_val_score(
        river_stream.iter_pandas(X, y), cls(), river_metrics.Accuracy()
    )
    return time.process_time() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="20,000 instances, 1 repeat")
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=None)
    args = ap.parse_args(argv)
    rows = args.rows or (20_000 if args.quick else 100_000)
    repeat = args.repeat or (1 if args.quick else 3)
    stream = generate_stream(rows, seed=1)
    print(f"k = 1, ideal policy vs river progressive_val_score, {rows:,} instances, CPU s")
    warm = stream.subset(0, 500)
    for label, (name, cls) in LEARNERS.items():
        time_engine(warm, name)  # lazy imports and first-call costs are not measured
        time_river_dicts(warm, cls)
        time_river_pandas(warm, cls)
        eng, riv, pan = [], [], []
        for _ in range(repeat):
            eng.append(time_engine(stream, name))
            riv.append(time_river_dicts(stream, cls))
            pan.append(time_river_pandas(stream, cls))
        e, r, p = min(eng), min(riv), min(pan)
        print(
            f"  {label:14s} engine {e:7.2f} s  river over the same prebuilt x dicts {r:7.2f} s  "
            f"ratio engine / river = {e / r:.3f}   (target <= 1.0)"
        )
        print(
            f"  {'':14s} river loop reading through iter_pandas (data access included) "
            f"{p:7.2f} s  ratio engine / that = {e / p:.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
