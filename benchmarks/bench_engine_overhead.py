"""Engine time / a bare loop making exactly the engine's learner calls (target: at most 1.10).

Setting (the issue's): HoeffdingTree, 10 folds, bootstrap, hitl 7d/90d, 100,000 instances of the
synthetic stream (``delaycv.synthetic.generate_stream``), checkpoints every 1,000. The estimator is
the workflow's default (``fading``, alpha 0.99: the headline); ``--estimator cumulative`` (exact AUC
included) is reported as well.

1. A recording run gives, per fold, the exact sequence of learner calls of the engine
   (``predict_proba_one`` of instance i; ``learn_one`` of instance i with label y and weight w, and
   whether ``w=`` was passed) -- instances are identified by the x dict of their prediction.
2. Timed: the engine (``evaluate``, tables and summary included), and the bare loop replaying the
   calls on fresh learners with x dicts built beforehand (so the bare loop pays nothing for data
   access: a strict baseline), in the engine's own global order (chunks of instances, each run
   through every fold, all ten learners alive: the headline, as the issue asks for "the same
   order"), and also fold after fold (one learner alive at a time; shown for comparison). The best of ``--repeat`` runs of each is used. Times are CPU
   seconds of this process (``time.process_time``; everything runs in it), so that other jobs on
   the machine disturb the ratio less than wall time would.

Usage: ``.venv/bin/python benchmarks/bench_engine_overhead.py [--quick] [--rows N] [--repeat R]
[--estimator fading|cumulative|both]`` (default: both, fading first)
"""

from __future__ import annotations

import argparse
import sys
import time

from river.tree import HoeffdingTreeClassifier

from delaycv.engine import evaluate
from delaycv.synthetic import generate_stream

#: The workflow's default estimator (config.yaml) and the cumulative one (exact AUC).
ESTIMATORS = {"fading": {"kind": "fading", "alpha": 0.99}, "cumulative": {"kind": "cumulative"}}


class RecordingTree(HoeffdingTreeClassifier):
    """HoeffdingTree that records its calls (instance numbers found from the x dict's identity)."""

    registry: list = []
    #: Every call of every recording tree in the engine's order: (registry position, call).
    order: list = []

    def __init__(self, **params) -> None:
        super().__init__(**params)
        self.position = len(RecordingTree.registry)
        self.calls: list = []
        self._index: dict = {}
        self._count = 0
        RecordingTree.registry.append(self)

    def predict_proba_one(self, x):
        self._index[id(x)] = self._count
        self.calls.append(self._count)
        RecordingTree.order.append((self.position, self._count))
        self._count += 1
        return super().predict_proba_one(x)

    def learn_one(self, x, y, *, w=None):
        self.calls.append((self._index[id(x)], y, w))
        RecordingTree.order.append((self.position, self.calls[-1]))
        if w is None:
            return super().learn_one(x, y)
        return super().learn_one(x, y, w=w)


def replay(calls_per_fold, xs) -> float:
    """The bare loop: fresh learners, the recorded calls, nothing else. Returns CPU seconds."""
    t0 = time.process_time()
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
    return time.process_time() - t0


def replay_in_order(order, xs) -> float:
    """The bare loop in the engine's global order: all learners alive, calls interleaved as the
    engine made them. Returns CPU seconds."""
    models: dict = {}
    t0 = time.process_time()
    for position, c in order:
        model = models.get(position)
        if model is None:
            model = models[position] = HoeffdingTreeClassifier()
        if c.__class__ is int:
            model.predict_proba_one(xs[c])
        else:
            i, y, w = c
            if w is None:
                model.learn_one(xs[i], y)
            else:
                model.learn_one(xs[i], y, w=w)
    return time.process_time() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="20,000 instances, 1 repeat")
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument("--estimator", choices=("fading", "cumulative", "both"), default="both")
    args = ap.parse_args(argv)
    rows = args.rows or (20_000 if args.quick else 100_000)
    repeat = args.repeat or (1 if args.quick else 2)
    stream = generate_stream(rows, seed=1)
    common = dict(
        policy={"preset": "hitl", "pos_window": "7d", "neg_window": "90d"},
        validation={"scheme": "bootstrap", "folds": 10, "seed": 1},
        seed=1,
        every=1000,
        estimator=ESTIMATORS["fading"],
    )
    RecordingTree.registry = []
    RecordingTree.order = []
    evaluate(stream, {"class": "__main__:RecordingTree"}, **common)
    calls = [r.calls for r in RecordingTree.registry if r.calls]
    order = RecordingTree.order
    RecordingTree.registry = []
    RecordingTree.order = []
    assert sum(len(c) for c in calls) == len(order)
    assert len(calls) == 10
    n_calls = sum(len(c) for c in calls)
    xs = stream.records(0, len(stream))
    kinds = ("fading", "cumulative") if args.estimator == "both" else (args.estimator,)
    engine_s: dict = {k: [] for k in kinds}
    bare_s = []
    fold_after_fold_s = []
    for _ in range(repeat):
        # interleaved, so that a change of load hits both sides alike
        for kind in kinds:
            t0 = time.process_time()
            evaluate(
                stream,
                {"class": "tree.HoeffdingTreeClassifier"},
                **{**common, "estimator": ESTIMATORS[kind]},
            )
            engine_s[kind].append(time.process_time() - t0)
        bare_s.append(replay_in_order(order, xs))
        fold_after_fold_s.append(replay(calls, xs))
    b = min(bare_s)
    b_folds = min(fold_after_fold_s)
    print(
        f"engine overhead: {rows:,} instances x 10 folds, HoeffdingTree, bootstrap, hitl 7d/90d; "
        f"{n_calls:,} learner calls (the same for every estimator)"
    )
    print(
        f"  bare loop, engine's order  {b:8.2f} s   (runs: {', '.join(f'{s:.2f}' for s in bare_s)})"
    )
    print(
        f"  bare loop, fold after fold {b_folds:8.2f} s   "
        f"(runs: {', '.join(f'{s:.2f}' for s in fold_after_fold_s)})"
    )
    for kind in kinds:
        e = min(engine_s[kind])
        runs = ", ".join(f"{s:.2f}" for s in engine_s[kind])
        print(f"  engine, {kind:10s} {e:8.2f} s   (runs: {runs})")
        print(f"    ratio engine / bare loop in the same order = {e / b:.3f}   (target <= 1.10)")
        print(f"    ratio engine / bare loop fold after fold   = {e / b_folds:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
