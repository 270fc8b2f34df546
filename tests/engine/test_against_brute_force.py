"""The engine equals the plain brute-force loop of tests/support/engine_bruteforce.py exactly.

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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from delaycv.protocol.policies import make_policy
from delaycv.protocol.validation import Validation
from tests.engine.brute_force_check import (
    compare_with_brute_force,
    policies,
    validations,
)
from tests.support.engine_bruteforce import OrderLearner, expiry_key, random_stream
from tests.support.engine_runs import evaluate


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
    spec = {"class": f"tests.support.engine_bruteforce:{name}"}
    recording.made = []
    compare_with_brute_force(
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
    compare_with_brute_force(
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
    result, _ = compare_with_brute_force(
        stream,
        {"class": f"tests.support.engine_bruteforce:{name}"},
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
        {"class": "tests.support.engine_bruteforce:OrderLearner"},
        policy,
        validation,
        seed=0,
        every=n,
        flush=flush,
        keep_predictions=True,
        corrected=False,  # (the metrics are recorded, not computed)
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
