"""A plain, slow, obviously-right implementation of the evaluation loop (test-only).

It follows the design card §3-§5 sentence by sentence, with a list of pending labels that is
scanned and sorted at every step, and the policy written out from the §3 table (it does not use
``Policy.schedule``/``Policy.outcome``). The tests check that :func:`delaycv.engine.evaluate`
gives exactly the same prediction log, counts and sequences of (prediction, probability, label)
fed to the metrics.

Also here: :class:`OrderLearner`, a deterministic learner whose predictions depend on the exact
sequence of training calls (so any difference in order, label or weight shows in its predictions),
which records its calls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from delaycv.protocol.learner_contract import trainer
from delaycv.protocol.learners import make_learner
from delaycv.protocol.validation import INSPECTION, NOISE, learner_seed, uniforms


class OrderLearner:
    """P(1) is a hash of everything trained so far (and of x and the seed), in (0, 1).

    ``calls`` records ``("predict", x["idx"])`` and ``("learn", x["idx"], y, w)``. With ``weighted``
    the learner takes ``w=`` in ``learn_one``; otherwise the engine repeats calls for w > 1. Before
    any training it returns ``{}`` when ``empty_first`` (the engine then reads P(1) = 0.5).
    """

    registry: list = []

    def __init__(self, seed: int = 0, empty_first: bool = True) -> None:
        self.seed = seed
        self.empty_first = empty_first
        self.state = (seed * 2654435761) % 1000003
        self.trained = 0
        self.calls: list = []
        OrderLearner.registry.append(self)

    def _mix(self, *values) -> None:
        for v in values:
            self.state = (self.state * 31 + int(v) * 7919 + 12345) % 1000003

    def predict_proba_one(self, x):
        self.calls.append(("predict", int(x["idx"])))
        if self.empty_first and self.trained == 0:
            return {}
        h = (self.state * 131 + int(x["idx"]) * 17 + int(1000 * x["a"])) % 997
        p = (h + 0.5) / 997.0
        return {0: 1.0 - p, 1: p}

    def learn_one(self, x, y):
        self.calls.append(("learn", int(x["idx"]), int(y), 1))
        self.trained += 1
        self._mix(x["idx"], y)


class WeightedOrderLearner(OrderLearner):
    def learn_one(self, x, y, w=1.0):
        self.calls.append(("learn", int(x["idx"]), int(y), w))
        self.trained += 1
        self._mix(x["idx"], y, w)


@dataclass
class FoldRun:
    feed_observed: list = field(default_factory=list)  # (pred, proba, label)
    feed_true: list = field(default_factory=list)
    pred: list = field(default_factory=list)
    proba: list = field(default_factory=list)
    observed: list = field(default_factory=list)
    observed_at: list = field(default_factory=list)
    weight: list = field(default_factory=list)
    # per instance m: (evaluated, pending, skipped, trained, weight sum, evaluated during m)
    counts: list = field(default_factory=list)
    evaluations: list = field(
        default_factory=list
    )  # observer-style (n, time, pred, proba, o, y, w)


def expiry_key(window, m, time):
    """The key (a, q) at which the window of instance m (1-based) expires."""
    n = len(time)
    if window.unit == "i":
        end = m + window.amount
        if end > n:
            return (math.inf, 0)
        return (int(time[end - 1]), end)
    return (int(time[m - 1]) + window.amount, 0)


def policy_outcome(policy, pred, m, time, label, label_time, inspect_u):
    """(o, (a, q)) from the design card §3, written out plainly."""
    if pred == 1:
        window, expiry = policy.pos_window, policy.pos_expiry
    else:
        window, expiry = policy.neg_window, policy.neg_expiry
    t = int(time[m - 1])
    key = expiry_key(window, m, time)
    L = float(label_time[m - 1])
    if policy.feedback and not math.isnan(L) and key >= (L, 0):
        return 1, (max(L, t), 0)
    if expiry == "truth":
        o = int(label[m - 1])
        if inspect_u < policy.inspection_error:
            o = 1 - o
        return o, key
    return 0, key


def reference_weights(validation, fold, n, seed, scale=1):
    """Training weights of instances 1..n in ``fold`` from the design card §5, written out plainly
    (it does not call ``Validation.weights``); ``seed`` is the run seed, ``scale`` a factor."""
    k = validation.folds
    if validation.scheme == "bootstrap":
        # fold i's own stream: derived from the validation seed and the run seed (the replicate),
        # with purpose code 3; from the validation seed alone when the split is fixed
        if validation.fixed_split:
            entropy = (validation.seed, fold)
        else:
            entropy = (validation.seed, seed, fold, 3)
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))
        return [scale * int(rng.poisson(1.0)) for _ in range(n)]
    weights = []
    for m in range(1, n + 1):
        if validation.scheme == "prequential":
            w = 1
        elif validation.scheme == "cv":
            w = 0 if m % k == fold else 1
        else:  # split
            w = 1 if m % k == fold else 0
        weights.append(scale * w)
    return weights


def brute_force(
    stream,
    learner_spec,
    policy,
    validation,
    *,
    seed,
    threshold=0.5,
    prediction_noise=0.0,
    flush=False,
    same_learner_seed=False,
    folds=None,
    weight_scale=1,
):
    """Run the loop of the design card for each fold; returns a list of :class:`FoldRun`.

    ``weight_scale``: the validation's weights are the design card's times this factor."""
    n = len(stream)
    xs = stream.records(0, n)
    return [
        _brute_fold(
            stream,
            xs,
            learner_spec,
            policy,
            validation,
            fold,
            seed,
            threshold,
            prediction_noise,
            flush,
            same_learner_seed,
            weight_scale,
        )
        for fold in (range(validation.folds) if folds is None else folds)
    ]


def _brute_fold(
    stream,
    xs,
    learner_spec,
    policy,
    validation,
    fold,
    seed,
    threshold,
    prediction_noise,
    flush,
    same_learner_seed,
    weight_scale,
):
    n = len(stream)
    time, label, label_time = stream.time, stream.label, stream.label_time
    learner = make_learner(learner_spec, seed=learner_seed(seed, fold, same_learner_seed))
    train = trainer(learner)
    weights = reference_weights(validation, fold, n, seed, weight_scale)
    noise_u = uniforms(seed, fold, NOISE, n)
    inspect_u = uniforms(seed, fold, INSPECTION, n)
    run = FoldRun()
    run.pred = [0] * n
    run.proba = [0.0] * n
    run.observed = [-1] * n
    run.observed_at = [math.nan] * n
    run.weight = [0.0] * n
    pending = []  # dicts
    evaluated = skipped = trained = 0
    wsum = 0.0

    def release(p, m, t):
        nonlocal evaluated, trained, wsum
        run.feed_observed.append((p["pe"], p["proba"], p["o"]))
        run.feed_true.append((p["pe"], p["proba"], p["y"]))
        run.evaluations.append((m, t, p["pe"], p["proba"], p["o"], p["y"], p["w"]))
        if p["w"] > 0:
            train(xs[p["i"] - 1], p["o"], p["w"])
            trained += 1
            wsum += p["w"]
        evaluated += 1
        run.observed[p["i"] - 1] = p["o"]
        run.observed_at[p["i"] - 1] = float(p["key"][0])

    for m in range(1, n + 1):
        t = int(time[m - 1])
        before = evaluated
        # 1. every pending label due at or before (t, m), in (due key, arrival) order
        due = [p for p in pending if p["key"] <= (t, m)]
        due.sort(key=lambda p: (p["key"], p["i"]))
        for p in due:
            pending.remove(p)
            release(p, m, t)
        # 2. predict
        proba = learner.predict_proba_one(xs[m - 1])
        total = sum(proba.values()) if proba else 0.0
        p1 = proba.get(1, 0.0) / total if total > 0 else 0.5
        pred = 1 if p1 > threshold else 0
        pe = (1 - pred) if noise_u[m - 1] < prediction_noise else pred
        w = int(weights[m - 1])
        run.pred[m - 1] = pe
        run.proba[m - 1] = p1
        run.weight[m - 1] = float(w)
        # 3. policy outcome
        if validation.evaluate == "trained" and w == 0:
            skipped += 1
        else:
            o, key = policy_outcome(policy, pred, m, time, label, label_time, inspect_u[m - 1])
            item = {"i": m, "key": key, "o": o, "pe": pe, "proba": p1, "w": w}
            item["y"] = int(label[m - 1])
            if key <= (t, m):
                release(item, m, t)
            else:
                pending.append(item)
        if m == n and flush:
            for p in sorted(pending, key=lambda p: (p["key"], p["i"])):
                release(p, m, t)
            pending = []
        run.counts.append((evaluated, len(pending), skipped, trained, wsum, evaluated > before))
        assert evaluated + len(pending) + skipped == m
    return run


def random_stream(rng: np.random.Generator, n: int, *, tie_rate: float = 0.4):
    """A small random stream with ties in time, labels, reveal times (some before arrival)."""
    from delaycv.data.stream import Stream

    steps = np.where(rng.random(n) < tie_rate, 0, rng.integers(1, 6, n))
    time = 1000 + np.cumsum(steps)
    label = (rng.random(n) < 0.4).astype(np.int8)
    delta = rng.integers(-2, 15, n).astype(np.float64)
    known = (label == 1) & (rng.random(n) < 0.7)
    label_time = np.where(known, time + delta, np.nan)
    features = {"idx": np.arange(1, n + 1, dtype=np.float64), "a": rng.random(n)}
    import pandas as pd

    return Stream(
        time=time,
        label=label,
        label_time=label_time,
        features=pd.DataFrame(features),
        metadata={"dataset": "random"},
    )
