"""Engine time / a bare loop making exactly the engine's learner calls (target: at most 1.10).

Setting (the issue's): HoeffdingTree, 10 folds, bootstrap, hitl 7d/90d, 100,000 instances of the
synthetic stream (``delaycv.synthetic.generate_stream``), checkpoints every 1,000.

1. A recording run gives, per fold, the exact sequence of learner calls of the engine
   (``predict_proba_one`` of instance i; ``learn_one`` of instance i with label y and weight w, and
   whether ``w=`` was passed) -- instances are identified by the x dict of their prediction.
2. Timed: the engine (``evaluate``, tables and summary included), and the bare loop replaying the
   calls on fresh learners with x dicts built beforehand (so the bare loop pays nothing for data
   access: a strict baseline). The best of ``--repeat`` runs of each is used.

Usage: ``.venv/bin/python benchmarks/bench_engine_overhead.py [--quick] [--rows N] [--repeat R]``
"""

from __future__ import annotations

import argparse
import sys
import time

from river.tree import HoeffdingTreeClassifier

from delaycv.engine import evaluate
from delaycv.synthetic import generate_stream


class RecordingTree(HoeffdingTreeClassifier):
    """HoeffdingTree that records its calls (instance numbers found from the x dict's identity)."""

    registry: list = []

    def __init__(self, **params) -> None:
        super().__init__(**params)
        self.calls: list = []
        self._index: dict = {}
        self._count = 0
        RecordingTree.registry.append(self)

    def predict_proba_one(self, x):
        self._index[id(x)] = self._count
        self.calls.append(self._count)
        self._count += 1
        return super().predict_proba_one(x)

    def learn_one(self, x, y, *, w=None):
        self.calls.append((self._index[id(x)], y, w))
        if w is None:
            return super().learn_one(x, y)
        return super().learn_one(x, y, w=w)


def replay(calls_per_fold, xs) -> float:
    """The bare loop: fresh learners, the recorded calls, nothing else. Returns seconds."""
    t0 = time.perf_counter()
    for calls in calls_per_fold:
        model = HoeffdingTreeClassifier()
        predict = model.predict_proba_one
        learn = model.learn_one
        for c in calls:
            if c.__class__ is int:
                predict(xs[c])
            else:
                i, y, w = c
                if w is None:
                    learn(xs[i], y)
                else:
                    learn(xs[i], y, w=w)
    return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="20,000 instances, 1 repeat")
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=None)
    args = ap.parse_args(argv)
    rows = args.rows or (20_000 if args.quick else 100_000)
    repeat = args.repeat or (1 if args.quick else 2)
    stream = generate_stream(rows, seed=1)
    common = dict(
        policy={"preset": "hitl", "pos_window": "7d", "neg_window": "90d"},
        validation={"scheme": "bootstrap", "folds": 10, "seed": 1},
        seed=1,
        every=1000,
    )
    RecordingTree.registry = []
    evaluate(stream, {"class": "__main__:RecordingTree"}, **common)
    calls = [r.calls for r in RecordingTree.registry if r.calls]
    RecordingTree.registry = []
    assert len(calls) == 10
    n_calls = sum(len(c) for c in calls)
    xs = stream.records(0, len(stream))
    engine_s, bare_s = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        evaluate(stream, {"class": "tree.HoeffdingTreeClassifier"}, **common)
        engine_s.append(time.perf_counter() - t0)
        bare_s.append(replay(calls, xs))
    e, b = min(engine_s), min(bare_s)
    print(
        f"engine overhead: {rows:,} instances x 10 folds, HoeffdingTree, bootstrap, hitl 7d/90d; "
        f"{n_calls:,} learner calls"
    )
    print(f"  engine     {e:8.2f} s   (runs: {', '.join(f'{s:.2f}' for s in engine_s)})")
    print(f"  bare loop  {b:8.2f} s   (runs: {', '.join(f'{s:.2f}' for s in bare_s)})")
    print(f"  ratio engine / bare loop = {e / b:.3f}   (target <= 1.10)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
