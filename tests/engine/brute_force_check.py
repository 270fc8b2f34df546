"""The engine run beside the brute-force loop (tests/support/engine_bruteforce.py), compared
event by event: what the metrics are fed (:class:`RecordingMetrics`), the observer's calls
(:class:`RecordingObserver`), the prediction log and the counts; the hypothesis strategies of the
policies and validation schemes both are run under."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from delaycv.protocol.validation import Validation
from tests.support.engine_bruteforce import OrderLearner, brute_force
from tests.support.engine_runs import evaluate


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


def compare_with_brute_force(
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
        # the metrics are recorded, not computed: the corrected reference's rows (its own
        # checks: tests/metrics/test_corrected_reference.py) would have no recorded values
        corrected=False,
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
