"""The engine equals the plain brute-force loop of tests/engine_bruteforce.py exactly.

Random small streams (ties in time, reveal times before and after arrival), every policy preset and
the general form (time and count windows, feedback, both expiries, inspection errors), every
validation scheme (bootstrap weights of each run seed, or a fixed split, drawn by the brute-force
loop itself), evaluate all/trained, prediction noise, flush, thresholds. Compared: the
prediction log, the counts after every instance, the sequences of (prediction, probability,
label) fed to the observed and true metrics, the observer's calls and the learner's calls.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from engine_bruteforce import OrderLearner, brute_force, expiry_key, random_stream
from engine_runs import evaluate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import delaycv.metrics as metrics_module
from delaycv.protocol.policies import make_policy
from delaycv.protocol.validation import Validation


class RecordingMetrics:
    """Records what the engine feeds to a metric state (one per fold and reference)."""

    made: list = []

    def __init__(self, estimator) -> None:
        self.feed: list = []
        self.folded = 0  # evaluations folded in (snapshot, snapshots)
        RecordingMetrics.made.append(self)

    def add(self, pred, proba, label, weight=1.0) -> None:
        self.feed.append((pred, proba, label))

    def add_many(self, pred, proba, label, weight=None) -> None:
        assert weight is None
        self.feed.extend(zip(pred, proba, label, strict=True))

    @property
    def buffered(self) -> int:
        return len(self.feed) - self.folded

    def snapshot(self) -> dict:
        self.folded = len(self.feed)
        return {"classified": float(len(self.feed))}

    def snapshots(self, bounds):
        """As Metrics.snapshots: after each prefix of the buffered evaluations."""
        assert list(bounds) == sorted(bounds) and bounds[-1] <= self.buffered
        rows = [[float(self.folded + b)] for b in bounds]
        self.folded += int(bounds[-1])
        return np.array(rows)


class RecordingObserver:
    def __init__(self, fold: int) -> None:
        self.fold = fold
        self.evaluations: list = []
        self.instances: list = []

    def on_evaluation(self, n, time, pred, proba, observed, true, weight) -> None:
        self.evaluations.append((n, time, pred, proba, observed, true, weight))

    def on_instance(self, n, time) -> None:
        self.instances.append((n, time))


@pytest.fixture
def recording(monkeypatch):
    RecordingMetrics.made = []
    monkeypatch.setattr(metrics_module, "Metrics", RecordingMetrics, raising=False)
    monkeypatch.setattr(metrics_module, "METRICS", ("classified",), raising=False)
    monkeypatch.setattr(metrics_module, "Cumulative", lambda: None, raising=False)
    return RecordingMetrics


windows = st.one_of(
    st.integers(0, 12).map(lambda s: f"{s}s"), st.integers(0, 5).map(lambda c: f"{c}i")
)
policies = st.one_of(
    st.just({"preset": "ideal"}),
    st.builds(lambda w: {"preset": "delay", "window": w}, windows),
    st.builds(lambda w: {"preset": "verification", "window": w}, windows),
    st.builds(
        lambda p, n, e: {
            "preset": "hitl",
            "pos_window": p,
            "neg_window": n,
            "inspection_error": e,
        },
        windows,
        windows,
        st.sampled_from([0.0, 0.3]),
    ),
    st.builds(
        lambda p, n, pe, ne, fb, e: {
            "preset": "general",
            "pos_window": p,
            "neg_window": n,
            "pos_expiry": pe,
            "neg_expiry": ne,
            "feedback": fb,
            "inspection_error": e,
        },
        windows,
        windows,
        st.sampled_from(["truth", "negative"]),
        st.sampled_from(["truth", "negative"]),
        st.booleans(),
        st.sampled_from([0.0, 0.25, 1.0]),
    ),
)
validations = st.one_of(
    st.builds(
        lambda k, e: Validation("prequential", k, 1, e),
        st.integers(1, 2),
        st.sampled_from(["all", "trained"]),
    ),
    st.builds(
        lambda s, k, vs, e, fixed: Validation(s, k, vs, e, fixed),
        st.sampled_from(["cv", "split", "bootstrap", "bootstrap"]),
        st.integers(2, 4),
        st.integers(0, 5),
        st.sampled_from(["all", "trained"]),
        st.booleans(),
    ),
)


def _compare(
    stream,
    spec,
    policy,
    validation,
    *,
    seed,
    noise,
    flush,
    threshold,
    recording,
    weight_scale=1,
    observe=True,
):
    """The engine against the brute-force loop; ``observe``: with an observer (the Python loop
    serves it) or without (the compiled loop where it is built)."""
    OrderLearner.registry = []
    observers: dict = {}

    def factory(fold):
        observers[fold] = RecordingObserver(fold)
        return observers[fold]

    result = evaluate(
        stream,
        spec,
        policy,
        validation,
        seed=seed,
        every=1,
        threshold=threshold,
        prediction_noise=noise,
        flush=flush,
        keep_predictions=True,
        observer_factory=factory if observe else None,
    )
    engine_learners = list(OrderLearner.registry)
    made = list(recording.made)
    OrderLearner.registry = []
    runs = brute_force(
        stream,
        spec,
        policy,
        validation,
        seed=seed,
        threshold=threshold,
        prediction_noise=noise,
        flush=flush,
        weight_scale=weight_scale,
    )
    brute_learners = list(OrderLearner.registry)
    # validate_learner builds one learner before the work: drop it
    engine_learners = engine_learners[-validation.folds :]
    assert len(made) == 2 * validation.folds
    log = result.predictions
    n = len(stream)
    for fold, run in enumerate(runs):
        q = log[log["fold"] == fold]
        assert q["index"].tolist() == list(range(1, n + 1))
        assert q["pred"].tolist() == run.pred
        assert q["proba"].tolist() == run.proba
        assert q["observed"].tolist() == run.observed
        assert np.array_equal(
            q["observed_at"].to_numpy(), np.array(run.observed_at), equal_nan=True
        )
        assert q["weight"].tolist() == run.weight
        table = result.folds[result.folds["fold"] == fold]
        for reference in ("observed", "true"):
            rows = table[table["reference"] == reference]
            assert rows["checkpoint"].tolist() == list(range(1, n + 1))
            assert rows["seen"].tolist() == list(range(1, n + 1))
            got = list(
                zip(
                    rows["evaluated"],
                    rows["pending"],
                    rows["skipped"],
                    rows["trained"],
                    rows["weight"],
                    rows["evaluated_now"],
                    strict=True,
                )
            )
            assert got == run.counts
            assert (rows["seen"] == rows["evaluated"] + rows["pending"] + rows["skipped"]).all()
        assert made[2 * fold].feed == run.feed_observed
        assert made[2 * fold + 1].feed == run.feed_true
        if observe:
            assert observers[fold].evaluations == run.evaluations
            assert observers[fold].instances == [
                (m, int(stream.time[m - 1])) for m in range(1, n + 1)
            ]
        if engine_learners:  # OrderLearner records its calls
            assert engine_learners[fold].calls == brute_learners[fold].calls
            predicts = [c for c in engine_learners[fold].calls if c[0] == "predict"]
            assert [c[1] for c in predicts] == list(range(1, n + 1))  # seen == predicted
    return result, runs


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data_seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 40),
    policy_spec=policies,
    validation=validations,
    seed=st.integers(0, 3),
    noise=st.sampled_from([0.0, 0.0, 0.3]),
    flush=st.booleans(),
    threshold=st.sampled_from([0.5, 0.5, 0.3]),
    weighted=st.booleans(),
    observe=st.booleans(),
)
def test_engine_equals_brute_force(
    recording,
    data_seed,
    n,
    policy_spec,
    validation,
    seed,
    noise,
    flush,
    threshold,
    weighted,
    observe,
):
    stream = random_stream(np.random.default_rng(data_seed), n)
    policy = make_policy(policy_spec)
    name = "WeightedOrderLearner" if weighted else "OrderLearner"
    spec = {"class": f"engine_bruteforce:{name}"}
    recording.made = []
    _compare(
        stream,
        spec,
        policy,
        validation,
        seed=seed,
        noise=noise,
        flush=flush,
        threshold=threshold,
        recording=recording,
        observe=observe,
    )


@pytest.mark.parametrize(
    "spec",
    [
        {"class": "naive_bayes.GaussianNB"},
        {"class": "tree.HoeffdingTreeClassifier", "params": {"grace_period": 5}},
        {"class": "NoChange"},
        {"class": "Prior"},
        {
            "pipeline": [
                {"class": "preprocessing.StandardScaler"},
                {"class": "linear_model.LogisticRegression"},
            ]
        },
    ],
)
@pytest.mark.parametrize("observe", [True, False], ids=["observer", "no-observer"])
def test_river_learners_equal_brute_force(recording, spec, observe):
    stream = random_stream(np.random.default_rng(7), 60)
    policy = make_policy({"preset": "hitl", "pos_window": "4s", "neg_window": "9s"})
    validation = Validation("bootstrap", 3, 2)
    recording.made = []
    _compare(
        stream,
        spec,
        policy,
        validation,
        seed=1,
        noise=0.0,
        flush=False,
        threshold=0.5,
        recording=recording,
        observe=observe,
    )


class HeavyBootstrap(Validation):
    """Bootstrap weights times 300: weights that do not fit in a byte."""

    def weight_draws(self, fold: int, seed: int):
        draw = super().weight_draws(fold, seed)
        return lambda start, stop: draw(start, stop) * 300


@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("observe", [True, False], ids=["observer", "no-observer"])
def test_weights_beyond_a_byte_equal_brute_force(recording, weighted, observe):
    stream = random_stream(np.random.default_rng(11), 50)
    policy = make_policy({"preset": "hitl", "pos_window": "4s", "neg_window": "9s"})
    validation = HeavyBootstrap("bootstrap", 2, 5)
    assert validation.weights(0, 50, 1).max() > 255
    name = "WeightedOrderLearner" if weighted else "OrderLearner"
    recording.made = []
    result, _ = _compare(
        stream,
        {"class": f"engine_bruteforce:{name}"},
        policy,
        validation,
        seed=1,
        noise=0.0,
        flush=True,
        threshold=0.5,
        recording=recording,
        weight_scale=300,
        observe=observe,
    )
    assert result.folds["weight"].max() > 255


def _due_key(policy, pred, m, stream):
    """(a, q) of instance m predicted pred, from the design card (before inspection errors)."""
    window = policy.pos_window if pred == 1 else policy.neg_window
    key = expiry_key(window, m, stream.time)
    L = float(stream.label_time[m - 1])
    if policy.feedback and not math.isnan(L) and key >= (L, 0):
        return (max(L, int(stream.time[m - 1])), 0)
    return key


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data_seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 40),
    policy_spec=policies,
    validation=validations,
    flush=st.booleans(),
)
def test_no_label_trained_before_due(recording, data_seed, n, policy_spec, validation, flush):
    """Learner calls: instance i is trained after the prediction of the last instance p with
    (t_p, p) < due key(i) (or right after its own prediction when its key <= (t_i, i)), never
    earlier; with flush, labels still pending are trained only after the last prediction."""
    stream = random_stream(np.random.default_rng(data_seed), n)
    policy = make_policy(policy_spec)
    OrderLearner.registry = []
    result = evaluate(
        stream,
        {"class": "engine_bruteforce:OrderLearner"},
        policy,
        validation,
        seed=0,
        every=n,
        flush=flush,
        keep_predictions=True,
    )
    learners = OrderLearner.registry[-validation.folds :]
    log = result.predictions
    t = stream.time
    for fold, learner in enumerate(learners):
        preds = log[log["fold"] == fold]["pred"].tolist()
        last_predicted = 0
        for call in learner.calls:
            if call[0] == "predict":
                last_predicted = call[1]
                continue
            i = call[1]
            key = _due_key(policy, preds[i - 1], i, stream)
            p = last_predicted
            if i == p and key <= (int(t[p - 1]), p):
                continue  # zero delay: right after its own prediction
            assert key > (int(t[p - 1]), p), (i, p, key)  # not due when p was predicted
            if p < n:
                assert key <= (int(t[p]), p + 1), (i, p, key)  # due before p + 1 is predicted
            else:
                assert flush or key <= (int(t[p - 1]), p)
        final = result.folds[(result.folds["fold"] == fold) & (result.folds["checkpoint"] == n)]
        assert (final["seen"] == final["evaluated"] + final["pending"] + final["skipped"]).all()
        if flush:
            assert (final["pending"] == 0).all()
