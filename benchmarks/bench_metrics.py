"""Benchmark: amortised metric bookkeeping per evaluation vs a HoeffdingTree's predict + learn.

The engine calls ``Metrics.add`` twice per evaluation (observed and true reference) and
``snapshot`` on both at every checkpoint. We measure, per evaluation, that cost for each estimator
with checkpoints every 100 evaluations (the issue's budget: at most 5 us, window AUC excepted), and
every evaluation (MOA export with f = 1), and compare with a river HoeffdingTreeClassifier
``predict_proba_one`` + ``learn_one`` on the same machine in the same run (about 130 us nominal).
CPU time (``time.process_time``), best of several repeats, so that other load disturbs less.

Run: .venv/bin/python benchmarks/bench_metrics.py [--quick]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from delaycv.metrics import Cumulative, Fading, Metrics, Sliding, Tumbling


def best_of(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def tree_cost(n: int, repeats: int) -> float:
    from river import tree

    rng = np.random.default_rng(1)
    xs = [{f"x{j}": float(v) for j, v in enumerate(row)} for row in rng.normal(size=(n, 14))]
    ys = [bool(r[0] + 0.5 * r[1] > 0) for r in rng.normal(size=(n, 2))]

    def run():
        model = tree.HoeffdingTreeClassifier()
        for x, y in zip(xs, ys, strict=True):
            model.predict_proba_one(x)
            model.learn_one(x, y)

    return best_of(run, repeats) / n


def metrics_cost(estimator, n: int, every: int, repeats: int, names=None) -> float:
    rng = np.random.default_rng(2)
    preds = rng.integers(0, 2, n).tolist()
    probas = rng.random(n).tolist()
    obs = rng.integers(0, 2, n).tolist()
    true = rng.integers(0, 2, n).tolist()

    def run():
        a = Metrics(estimator, names)
        b = Metrics(estimator, names)
        for i in range(n):
            a.add(preds[i], probas[i], obs[i], 1.0)
            b.add(preds[i], probas[i], true[i], 1.0)
            if (i + 1) % every == 0:
                a.snapshot()
                b.snapshot()

    return best_of(run, repeats) / n


def main() -> None:
    quick = "--quick" in sys.argv
    n = 5000 if quick else 20000
    repeats = 3 if quick else 5
    ht = tree_cost(2000 if quick else 5000, repeats)
    print(
        f"HoeffdingTree predict_proba_one + learn_one: {ht * 1e6:8.2f} us per instance (baseline)"
    )
    no_auc = [
        name for name in Metrics(Cumulative()).names if name != "auc"
    ]  # the window AUC is excepted from the budget
    cases = [
        ("fading(0.99)", Fading(0.99), None),
        ("cumulative", Cumulative(), None),
        ("tumbling(500)", Tumbling(500), None),
        ("window(1000) without auc", Sliding(1000), no_auc),
        ("window(1000) with auc", Sliding(1000), None),
    ]
    print(f"{'estimator':28s} {'every':>5s} {'us/eval':>9s} {'ratio to HT':>12s}")
    for label, est, names in cases:
        for every in (100, 1):
            count = n if every > 1 else n // 5
            cost = metrics_cost(est, count, every, repeats, names)
            print(f"{label:28s} {every:5d} {cost * 1e6:9.2f} {cost / ht:12.4f}")
    print("(both references per evaluation; budget: <= 5 us at every = 100, window AUC excepted)")


if __name__ == "__main__":
    main()
