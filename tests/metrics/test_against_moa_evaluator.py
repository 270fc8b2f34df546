"""The fast metrics against the plain per-event MOA evaluator (tests/metrics/moa_evaluator_reference.py)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from delaycv.metrics import (
    METRICS,
    MOA_BASIC_MEASUREMENTS,
    MOA_MEASUREMENTS,
    Cumulative,
    Fading,
    Metrics,
    moa_values,
)
from tests.metrics.moa_evaluator_reference import MoaEvaluator

MOA_NAMES_41 = [
    "classified instances", "TP", "FP", "TN", "FN",
    "classifications correct (percent)", "Kappa Statistic (percent)",
    "Kappa Temporal Statistic (percent)", "Kappa M Statistic (percent)",
    "F1 Score (percent)",
    "F1 Score for class 0 (percent)", "F1 Score for class 1 (percent)",
    "Kappa Temporal Statistic F1 Score for class 0 (percent)",
    "Kappa Temporal Statistic F1 Score for class 1 (percent)",
    "Kappa M Statistic F1 Score for class 0 (percent)",
    "Kappa M Statistic F1 Score for class 1 (percent)",
    "Kappa Statistic F1 Score for class 0 (percent)",
    "Kappa Statistic F1 Score for class 1 (percent)",
    "Precision (percent)",
    "Precision for class 0 (percent)", "Precision for class 1 (percent)",
    "Kappa Precision Temporal Statistic 0 (percent)",
    "Kappa Precision Temporal Statistic 1 (percent)",
    "Kappa Precision M Statistic 0 (percent)", "Kappa Precision M Statistic 1 (percent)",
    "Recall (percent)",
    "Recall for class 0 (percent)", "Recall for class 1 (percent)",
    "FPR for class 0 (percent)", "FPR for class 1 (percent)",
    "Gmean for recall  (percent)",
    "Kappa Recall Temporal Statistic 0 (percent)", "Kappa Recall Temporal Statistic 1 (percent)",
    "Kappa Recall M Statistic 0 (percent)", "Kappa Recall M Statistic 1 (percent)",
    "Kappa FPR Temporal Statistic 0 (percent)", "Kappa FPR Temporal Statistic 1 (percent)",
    "Kappa FPR M Statistic 0 (percent)", "Kappa FPR M Statistic 1 (percent)",
    "Kappa Gmean Temporal Statistic  (percent)", "Kappa Gmean M Statistic  (percent)",
]  # fmt: skip


def assert_moa_equal(ours: dict, ref: MoaEvaluator, where: str) -> None:
    """Equal to 1e-12 relative, or within the value's own sensitivity to rounding.

    A kappa (x - r) / (1 - r) with r near 1 amplifies the last-bit differences between our
    vectorised fading sums and MOA's sequential ones; the tolerance of each value is 10 times its
    spread when MOA's estimations are perturbed by 1e-14 relative (6 runs), at least 1e-12 relative.
    """
    exact = ref.measurements()
    assert list(ours) == list(exact) == MOA_NAMES_41
    rng = random.Random(0)
    runs = [ref.measurements(rng) for _ in range(6)]
    bad = {}
    for k, b in exact.items():
        a = ours[k]
        if math.isnan(b) or math.isinf(b):
            ok = (math.isnan(a) and math.isnan(b)) or a == b
        else:
            spread = max((abs(r[k] - b) for r in runs if math.isfinite(r[k])), default=0.0)
            ok = abs(a - b) <= max(1e-12 * abs(b), 1e-10, 10 * spread)
        if not ok:
            bad[k] = (a, b)
    assert not bad, f"{where}: {bad}"


def test_names_and_order_are_moas_41():
    assert list(MOA_MEASUREMENTS) == MOA_NAMES_41
    assert list(MOA_BASIC_MEASUREMENTS) == MOA_NAMES_41
    assert len(set(METRICS)) == len(METRICS)


def run_both(preds, labels, weights, alpha, every):
    """Feed the same sequence to both; compare at snapshots every ``every`` evaluations."""
    estimator = Fading(alpha) if alpha is not None else Cumulative()
    ours = Metrics(estimator)
    ref = MoaEvaluator(alpha)
    for n, (p, t, w) in enumerate(zip(preds, labels, weights, strict=True), start=1):
        ours.add(int(p), math.nan, int(t), float(w))
        ref.add(int(p), int(t), float(w))
        if (n % every == 0 or n == len(preds)) and ref.num_classes:
            assert_moa_equal(moa_values(ours.snapshot(), basic=alpha is None), ref, f"n={n}")


@pytest.mark.parametrize("alpha", [0.999, 0.99, 0.9, 0.5, 0.05, 1.0, None])
@pytest.mark.parametrize("every", [1, 7, 100, 5000])
def test_random_sequences_match_moa(alpha, every):
    rng = np.random.default_rng(hash((alpha, every)) % 2**32)
    n = 800 if every > 1 else 200
    for rate in (0.1, 0.5):
        labels = (rng.random(n) < rate).astype(int)
        # a learner that is right 70 % of the time
        preds = np.where(rng.random(n) < 0.7, labels, 1 - labels)
        run_both(preds, labels, np.ones(n), alpha, every)


@pytest.mark.parametrize("alpha", [0.9, None])
def test_zero_weights_match_moa(alpha):
    rng = np.random.default_rng(5)
    n = 600
    labels = rng.integers(0, 2, n)
    preds = rng.integers(0, 2, n)
    weights = (rng.random(n) < 0.8).astype(float)
    weights[:5] = 0.0  # zero weights before MOA's first reset are discarded
    run_both(preds, labels, weights, alpha, 13)


@settings(max_examples=60, deadline=None)
@given(
    seq=st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=60),
    alpha=st.sampled_from([0.3, 0.8, 0.95, 1.0]),
    every=st.integers(1, 9),
)
def test_short_sequences_match_moa(seq, alpha, every):
    preds = [p for p, _ in seq]
    labels = [t for _, t in seq]
    run_both(preds, labels, [1.0] * len(seq), alpha, every)


def test_hand_computed_fading_sequence():
    """alpha = 0.5, (p, t): (1, 1), (0, 1), (0, 0) worked by hand from moa-extension §6.2."""
    m = Metrics(Fading(0.5))
    for p, t in ((1, 1), (0, 1), (0, 0)):
        m.add(p, math.nan, t)
    s = m.snapshot()
    # correct: 1, 0, 1 -> s = 0.25*1 + 0 + 1 = 1.25; b = 0.25 + 0.5 + 1 = 1.75
    assert s["accuracy"] == pytest.approx(1.25 / 1.75, abs=1e-15)
    # recall_1: own events (t=1) are the first two: s = 0.5*1 + 0 = 0.5, b = 1.5
    assert s["recall_1"] == pytest.approx(0.5 / 1.5, abs=1e-15)
    # recall_0: one own event, correct -> 1; precision_0: own events 2 and 3: (0.5*0 + 1)/1.5
    assert s["recall_0"] == 1.0
    assert s["precision_0"] == pytest.approx(1 / 1.5, abs=1e-15)
    assert s["precision_1"] == 1.0
    # NoChange: last = 0 (start), 1, 1 -> correct: no, yes, no -> (0.25*0 + 0.5*1 + 0)/1.75
    assert s["nochange_accuracy"] == pytest.approx(0.5 / 1.75, abs=1e-15)
    # majority after each: class 1 (1 > 0), class 1 (1.5 > 0), class 1 (0.75 vs 1: 0.75 of t=1
    # = 0.25+0.5, t=0 = 1, so class 0) -> correct: yes, yes, yes
    assert s["majority_accuracy"] == pytest.approx(1.0, abs=1e-15)
    # unfaded MOA counters
    assert (s["classified"], s["tp"], s["fp"], s["tn"], s["fn"]) == (3, 1, 0, 1, 1)
    moa = moa_values(s)
    assert moa["Kappa M Statistic (percent)"] == -math.inf
    assert (
        moa["Kappa Statistic F1 Score for class 1 (percent)"]
        == moa["Kappa M Statistic F1 Score for class 1 (percent)"]
    )


def test_majority_is_read_mid_loop_for_class_0():
    """MOA reads the majority for class 0 after updating column 0 but not column 1.

    Cumulative, sequence (p, t): (1, 1), (0, 0). At the second evaluation, for class 0,
    column 0 = 1/2 (updated) and column 1 = 1/1 (not yet updated) -> majority 1 != t = 0, so
    majority_recall_0 = 0; after the loop both columns are 1/2 -> tie -> class 0 == t, so the
    kappa_m reference counts it correct.
    """
    m = Metrics(Cumulative())
    m.add(1, math.nan, 1)
    m.add(0, math.nan, 0)
    s = m.snapshot()
    assert s["majority_recall_0"] == 0.0
    assert s["majority_precision_0"] == 0.0
    assert s["majority_accuracy"] == 1.0  # first: maj 1 == 1; second: tie -> 0 == 0
    # recall_1's majority reference (first evaluation, class-1 loop) -> both columns updated
    assert s["majority_recall_1"] == 1.0
