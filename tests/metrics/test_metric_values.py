"""Behaviour of delaycv.metrics: hand-computed cases, scikit-learn equivalence, properties."""

from __future__ import annotations

import itertools
import math
import pickle

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from delaycv.common import defaults
from delaycv.common.errors import ConfigError
from delaycv.metrics import (
    ESTIMATORS,
    METRICS,
    Cumulative,
    Fading,
    Metrics,
    Sliding,
    Tumbling,
    make_estimator,
)
from delaycv.metrics.core import SCALAR_BATCH
from delaycv.metrics.properties import KAPPA_METRICS
from delaycv.metrics.rows import LUT, N_CODES, ROWS, lookup_code
from delaycv.metrics.states import COUNTS, FadingState, SlidingState

NAN = math.nan
# metrics that depend only on the evaluations inside the window/chunk (not on earlier history:
# the NoChange label and the prequential prior of the information score do)
LOCAL = [
    name
    for name in METRICS
    if not any(k in name for k in ("kappa_t", "kappa_m", "nochange", "majority", "info_score"))
]


def feed(m: Metrics, rows, every: int = 0) -> dict:
    for i, row in enumerate(rows, start=1):
        m.add(*row)
        if every and i % every == 0:
            m.snapshot()
    return m.snapshot()


def close(a: float, b: float, tol: float = 1e-9) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= tol * max(1.0, abs(b))


def assert_same(x: dict, y: dict, names, tol: float = 1e-9) -> None:
    bad = {k: (x[k], y[k]) for k in names if not close(x[k], y[k], tol)}
    assert not bad, bad


def random_rows(rng, n, unknown=0.0, nan_proba=0.0, weights=False):
    t = rng.integers(0, 2, n)
    q = np.clip(np.where(t == 1, 0.6, 0.4) + rng.normal(0, 0.25, n), 0, 1).round(2)
    p = (q > 0.5).astype(int)
    p[rng.random(n) < unknown] = -1
    q[rng.random(n) < nan_proba] = np.nan
    w = rng.integers(0, 4, n).astype(float) if weights else np.ones(n)
    return [(int(a), float(b), int(c), float(d)) for a, b, c, d in zip(p, q, t, w, strict=True)]


# ---------------------------------------------------------------- hand-computed
def test_hand_computed_cumulative():
    # (pred, proba, label): TP, FP, TN, FN, TP
    rows = [(1, 0.9, 1), (1, 0.6, 0), (0, 0.2, 0), (0, 0.4, 1), (1, 0.8, 1)]
    s = feed(Metrics(Cumulative()), rows)
    assert (s["tp"], s["fp"], s["tn"], s["fn"], s["classified"]) == (2, 1, 1, 1, 5)
    assert s["accuracy"] == 3 / 5
    assert s["precision_1"] == 2 / 3 and s["precision_0"] == 1 / 2
    assert s["recall_1"] == 2 / 3 and s["recall_0"] == 1 / 2
    assert s["fpr_1"] == 1 / 2 and s["fpr_0"] == 1 / 3
    assert s["specificity"] == 1 / 2
    assert s["gmean"] == pytest.approx(math.sqrt(1 / 3))
    assert s["gmean_pr"] == pytest.approx(2 / 3)
    # MOA's F1: from the class averages P = R = 7/12
    assert s["f1"] == pytest.approx(7 / 12)
    assert s["f1_1"] == pytest.approx(2 / 3)
    assert s["f2_1"] == pytest.approx(5 * (2 / 3) ** 2 / (4 * 2 / 3 + 2 / 3))
    # kappa: pc = P(p=0)P(t=0) + P(p=1)P(t=1) = 2/5*2/5 + 3/5*3/5 = 13/25
    assert s["kappa"] == pytest.approx((3 / 5 - 13 / 25) / (1 - 13 / 25))
    # NoChange: last = 0 (start), 1, 0, 0, 1 vs labels 1, 0, 0, 1, 1 -> correct: no,no,yes,no,yes
    assert s["nochange_accuracy"] == 2 / 5
    assert s["kappa_t"] == pytest.approx((3 / 5 - 2 / 5) / (3 / 5))
    # majority after each evaluation: 1 (1:0), 0 (tie), 0 (2:1), 0 (tie 2:2), 1 (2:3)
    # vs labels 1, 0, 0, 1, 1 -> correct: yes, yes, yes, no, yes
    assert s["majority_accuracy"] == 4 / 5
    assert s["kappa_m"] == pytest.approx((3 / 5 - 4 / 5) / (1 - 4 / 5))
    assert s["mcc"] == pytest.approx((2 * 1 - 1 * 1) / math.sqrt(3 * 3 * 2 * 2))
    assert s["brier"] == pytest.approx((0.01 + 0.36 + 0.04 + 0.36 + 0.04) / 5)
    assert s["log_loss"] == pytest.approx(
        -(math.log(0.9) + math.log(0.4) + math.log(0.8) + math.log(0.4) + math.log(0.8)) / 5
    )
    # AUC: positives 0.9, 0.4, 0.8; negatives 0.6, 0.2 -> pairs won: 2 + 1 + 2 = 5 of 6
    assert s["auc"] == pytest.approx(5 / 6)
    assert s["unknown"] == 0 and s["unknown_rate"] == 0.0


def test_information_score_by_hand():
    """Kononenko-Bratko with the Laplace prior estimated from earlier evaluations."""
    rows = [(1, 0.8, 1), (0, 0.3, 0), (1, 0.9, 0)]
    s = feed(Metrics(Cumulative()), rows)
    # 1st: prior P(1) = 1/2, P' = 0.8 >= 1/2 -> log2(0.8 / 0.5)
    i1 = math.log2(0.8) - math.log2(0.5)
    # 2nd: prior P(0) = (0 + 1) / (1 + 2) = 1/3, P' = 0.7 -> log2(0.7) - log2(1/3)
    i2 = math.log2(0.7) - math.log2(1 / 3)
    # 3rd: prior P(0) = (1 + 1) / (2 + 2) = 1/2, P' = 0.1 < 1/2 -> log2(1/2) - log2(0.9)
    i3 = math.log2(1 - 0.5) - math.log2(1 - 0.1)
    assert s["info_score"] == pytest.approx((i1 + i2 + i3) / 3)


def test_empty_and_degenerate_values_are_nan_not_errors():
    m = Metrics(Cumulative())
    s = m.snapshot()
    assert s["classified"] == 0 and math.isnan(s["accuracy"]) and math.isnan(s["auc"])
    m.add(1, 0.7, 1)
    s = m.snapshot()
    assert s["precision_1"] == 1.0
    assert math.isnan(s["precision_0"]) and math.isnan(s["recall_0"])  # 0/0
    assert math.isnan(s["f1_0"]) and math.isnan(s["mcc"]) and math.isnan(s["auc"])
    assert math.isnan(s["kappa"])  # pc = 1: 0/0
    assert s["kappa_t"] == 1.0  # NoChange starts at 0 and is wrong
    s = feed(Metrics(Fading(0.9)), [(1, NAN, 1)])
    assert math.isnan(s["precision_0"])  # ours: NaN (MOA's fading estimator reads 0)


def test_a_kappa_whose_reference_is_perfect_is_infinite_as_moa_prints_it():
    """kappa_m = (acc - majority_accuracy) / (1 - majority_accuracy): after two evaluations of
    class 0, one predicted wrong, the majority class (0) is right on both, so (0.5 - 1)/0."""
    s = feed(Metrics(Cumulative()), [(0, 0.1, 0), (1, 0.9, 0)])
    assert s["majority_accuracy"] == 1.0 and s["accuracy"] == 0.5
    assert s["kappa_m"] == -math.inf
    assert s["kappa_m_recall_0"] == -math.inf  # the majority's recall of class 0 is 1
    assert math.isnan(s["kappa_m_recall_1"])  # recall_1 is 0/0 itself (no label 1)


def test_kappa_metrics_are_the_kappas_of_the_formulas():
    """``KAPPA_METRICS`` (the metrics a merged table may hold as +-inf) are exactly those the
    formulas compute as a kappa against a reference value."""
    from delaycv.metrics.formulas import _e, _f1, _formulas, div
    from delaycv.metrics.formulas import _sqrt as sqrt

    m = Metrics(Cumulative())
    feed(m, random_rows(np.random.default_rng(0), 40))
    marker = object()
    values = _formulas(state_sums(m).tolist(), state_sums(m).tolist(), 0.5, _e,
                       lambda x, ref: marker, _f1, div, sqrt)  # fmt: skip
    assert {name for name in METRICS if values[name] is marker} == set(KAPPA_METRICS)


def test_abstentions_are_counted_apart():
    rows = [(1, 0.9, 1), (-1, 0.55, 1), (-1, NAN, 0), (0, 0.1, 0), (-1, 0.5, 1), (0, 0.3, 1)]
    s = feed(Metrics(Cumulative()), rows)
    assert s["unknown"] == 3 and s["classified"] == 3
    assert s["unknown_rate_1"] == 2 / 4 and s["unknown_rate_0"] == 1 / 2
    assert s["unknown_rate"] == pytest.approx((2 / 4 + 1 / 2) / 2)
    assert s["accuracy"] == 2 / 3 and s["recall_1"] == 1 / 2
    # abstentions are invisible to the NoChange reference: last = 0, 1, 0 vs 1, 0, 1
    assert s["nochange_accuracy"] == 0.0
    # probability metrics use every finite probability, abstentions included (5 of 6)
    assert s["brier"] == pytest.approx((0.01 + 0.2025 + 0.01 + 0.25 + 0.49) / 5)


def test_zero_weight_only_feeds_the_references():
    base = [(1, 0.9, 1), (1, 0.8, 1), (1, 0.7, 1)]
    with_zero = [*base[:2], (1, 0.1, 0, 0.0), base[2]]
    a = feed(Metrics(Cumulative()), base)
    b = feed(Metrics(Cumulative()), with_zero)
    for k in ("classified", "accuracy", "precision_1", "recall_1", "brier", "mcc", "unknown"):
        assert a[k] == b[k] or (math.isnan(a[k]) and math.isnan(b[k]))
    # NoChange labels 0, 1, 1 vs 1, 1, 1 -> 2/3. With the zero-weight evaluation, as MOA: it adds
    # 0 with count 1 and moves the NoChange label to 0 -> 0, 1, 1, 0 vs 1, 1, 0, 1 -> 1/4
    assert a["nochange_accuracy"] == 2 / 3
    assert b["nochange_accuracy"] == 1 / 4
    # a zero-weight evaluation before the first weighted one is ignored entirely (MOA's reset)
    c = feed(Metrics(Cumulative()), [(1, 0.5, 1, 0.0), *base])
    assert_same(a, c, METRICS, 0)


def test_weights_are_weighted_means():
    rows = [(1, 0.9, 1, 2.0), (1, 0.6, 0, 1.0), (0, 0.2, 0, 3.0)]
    expanded = [(1, 0.9, 1), (1, 0.9, 1), (1, 0.6, 0), (0, 0.2, 0), (0, 0.2, 0), (0, 0.2, 0)]
    a = feed(Metrics(Cumulative()), rows)
    b = feed(Metrics(Cumulative()), expanded)
    assert_same(a, b, [n for n in LOCAL if n != "kappa"] + ["kappa"])


def test_invalid_input_raises_value_error():
    for bad in [(2, 0.5, 1), (1, 0.5, 3), (1, 1.5, 1), (1, 0.5, 1, -1.0)]:
        m = Metrics(Fading(0.9))
        m.add(*bad)
        with pytest.raises(ValueError):
            m.snapshot()
    m = Metrics(Cumulative())
    for _ in range(50):
        m.add(1, 0.5, 1)
    m.add(1, -0.5, 1)
    with pytest.raises(ValueError):
        m.snapshot()
    with pytest.raises(ValueError):
        Metrics(Cumulative(), ["accuracy", "nope"])
    for make in (lambda: Fading(0.0), lambda: Fading(1.5), lambda: Sliding(0), lambda: Tumbling(0)):
        with pytest.raises(ValueError):
            make()


def test_make_estimator():
    assert make_estimator({"kind": "fading", "alpha": 0.99}) == Fading(0.99)
    assert make_estimator({"kind": "sliding", "width": 50}) == Sliding(50)
    assert make_estimator({"kind": "tumbling", "size": 7}) == Tumbling(7)
    assert make_estimator({"kind": "cumulative"}) == Cumulative()


def test_make_estimator_defaults_aliases_and_specs():
    """What is not given comes from delaycv.common.defaults; ``describe`` is the run's estimator spec."""
    assert make_estimator(None) == Fading(defaults.ALPHA)
    assert make_estimator() == Fading(defaults.ALPHA)
    with pytest.warns(DeprecationWarning, match="'window' is deprecated: use 'sliding'"):
        assert make_estimator("window") == Sliding(defaults.WIDTH)  # the old spelling
    assert make_estimator("sliding") == Sliding(defaults.WIDTH)
    assert make_estimator({"kind": "tumbling"}) == Tumbling(defaults.SIZE)
    assert make_estimator({"alpha": 0.5}) == Fading(0.5)  # the default kind
    assert make_estimator("cumulative") == Cumulative()
    width = make_estimator({"kind": "sliding", "width": np.int64(5)})
    assert width == Sliding(5) and type(width.width) is int
    alpha = make_estimator({"kind": "fading", "alpha": 1})
    assert alpha == Fading(1.0) and type(alpha.alpha) is float
    given = Tumbling(3)
    assert make_estimator(given) is given
    assert make_estimator({"kind": "fading", "alpha": 0.99}).describe() == {
        "kind": "fading",
        "alpha": 0.99,
    }
    assert make_estimator("sliding").describe() == {"kind": "sliding", "width": 1000}
    assert make_estimator({"kind": "tumbling", "size": 7}).describe() == {
        "kind": "tumbling",
        "size": 7,
    }
    assert make_estimator("cumulative").describe() == {"kind": "cumulative"}
    assert [make_estimator(k).kind for k in ESTIMATORS] == list(ESTIMATORS)
    assert ESTIMATORS == ("cumulative", "sliding", "fading", "tumbling")
    assert Metrics("tumbling").estimator == Tumbling(defaults.SIZE)


@pytest.mark.parametrize(
    "spec, where, text",
    [
        (
            3,
            "key estimator",
            "estimator spec is int (expected a kind (cumulative, sliding, fading, tumbling) or a "
            "mapping with kind)",
        ),
        (
            ["fading"],
            "key estimator",
            "estimator spec is list (expected a kind (cumulative, sliding, fading, tumbling) or a "
            "mapping with kind)",
        ),
        (
            "nope",
            "key estimator.kind",
            "unknown estimator 'nope' (expected cumulative, sliding, fading, tumbling)",
        ),
        (
            {"kind": "expanding"},
            "key estimator.kind",
            "unknown estimator 'expanding' (expected cumulative, sliding, fading, tumbling)",
        ),
        (
            {"kind": "fading", "width": 3},
            "key estimator.width",
            "key 'width' does not apply to the fading estimator (expected alpha)",
        ),
        (
            {"kind": "sliding", "size": 3},
            "key estimator.size",
            "key 'size' does not apply to the sliding estimator (expected width)",
        ),
        (
            {"kind": "cumulative", "alpha": 0.5},
            "key estimator.alpha",
            "key 'alpha' does not apply to the cumulative estimator (expected no parameter)",
        ),
        (
            {"kind": "fading", "alpha": 3},
            "key estimator.alpha",
            "alpha 3 (expected a number in (0, 1])",
        ),
        (
            {"kind": "fading", "alpha": 0},
            "key estimator.alpha",
            "alpha 0 (expected a number in (0, 1])",
        ),
        (
            {"kind": "fading", "alpha": math.nan},
            "key estimator.alpha",
            "alpha nan (expected a number in (0, 1])",
        ),
        (
            {"kind": "fading", "alpha": True},
            "key estimator.alpha",
            "alpha True (expected a number in (0, 1])",
        ),
        (
            {"kind": "fading", "alpha": "0.9"},
            "key estimator.alpha",
            "alpha '0.9' (expected a number in (0, 1])",
        ),
        (
            {"kind": "sliding", "width": 0},
            "key estimator.width",
            "width 0 (expected an integer >= 1)",
        ),
        (
            {"kind": "sliding", "width": 2.5},
            "key estimator.width",
            "width 2.5 (expected an integer >= 1)",
        ),
        (
            {"kind": "tumbling", "size": True},
            "key estimator.size",
            "size True (expected an integer >= 1)",
        ),
        (
            {"kind": "tumbling", "size": "10"},
            "key estimator.size",
            "size '10' (expected an integer >= 1)",
        ),
    ],
)
def test_make_estimator_errors_name_the_key(spec, where, text):
    with pytest.raises(ConfigError) as err:
        make_estimator(spec)
    assert err.value.location == where
    assert str(err.value) == f"{where}: {text}"
    with pytest.raises(ConfigError):
        Metrics(spec)


def test_lookup_code_by_hand():
    assert lookup_code(-1, 0, False, False, 0, False, False) == 0
    assert lookup_code(-1, 1, True, False, 0, False, False) == 64 + 32
    # p = 1, t = 0, w > 0, started, NoChange label 0, majority 0 throughout: a false positive
    fp = lookup_code(1, 0, True, True, 0, False, False)
    assert fp == 256 + 32 + 16
    assert lookup_code(0, 1, True, True, 1, True, False) == 128 + 64 + 32 + 16 + 8 + 4
    assert lookup_code(0, 1, False, True, 1, False, True) == 128 + 64 + 16 + 8 + 3
    assert lookup_code(0, 1, False, True, 1, False, True, after=0) == 128 + 64 + 16 + 8 + 2
    assert lookup_code(1, 1, True, True, 1, True, True) == N_CODES - 1
    row = dict(zip(ROWS, LUT[fp], strict=False))
    assert row["a_w"] == row["a_fp"] == row["p1_w"] == row["t0_w"] == row["t0_fpr"] == 1
    assert row["a_tp"] == row["a_correct"] == row["p1_hit"] == row["u1_w"] == 0
    assert row["z_nc"] == row["z_maj"] == 1  # last = t = 0, majority 0 = t
    # arrays: element by element, the same codes as one at a time
    rng = np.random.default_rng(0)
    feats = [rng.integers(-1, 2, 50), *(rng.integers(0, 2, 50) for _ in range(6))]
    feats[2:] = [f.astype(bool) if i % 2 else f for i, f in enumerate(feats[2:])]
    many = lookup_code(*feats)
    assert many.tolist() == [lookup_code(*(int(f[i]) for f in feats)) for i in range(50)]
    # every combination of the features has its own code, and every code is used
    codes = {
        lookup_code(p, *bits) for p in (-1, 0, 1) for bits in itertools.product((0, 1), repeat=7)
    }
    assert codes == set(range(N_CODES))


# ---------------------------------------------------------------- scikit-learn
@pytest.mark.parametrize("every", [0, 1, 37])
def test_cumulative_equals_scikit_learn(every):
    rng = np.random.default_rng(11 + every)
    rows = random_rows(rng, 700)
    s = feed(Metrics(Cumulative()), rows, every)
    p = np.array([r[0] for r in rows])
    q = np.array([r[1] for r in rows])
    t = np.array([r[2] for r in rows])
    assert s["accuracy"] == pytest.approx(skm.accuracy_score(t, p), abs=1e-12)
    assert s["kappa"] == pytest.approx(skm.cohen_kappa_score(t, p), abs=1e-12)
    assert s["mcc"] == pytest.approx(skm.matthews_corrcoef(t, p), abs=1e-12)
    assert s["balanced_accuracy"] == pytest.approx(skm.balanced_accuracy_score(t, p), abs=1e-12)
    for i in (0, 1):
        assert s[f"precision_{i}"] == pytest.approx(skm.precision_score(t, p, pos_label=i))
        assert s[f"recall_{i}"] == pytest.approx(skm.recall_score(t, p, pos_label=i))
        assert s[f"f1_{i}"] == pytest.approx(skm.f1_score(t, p, pos_label=i))
        assert s[f"f2_{i}"] == pytest.approx(skm.fbeta_score(t, p, beta=2, pos_label=i))
    assert s["precision"] == pytest.approx(skm.precision_score(t, p, average="macro"))
    assert s["recall"] == pytest.approx(skm.recall_score(t, p, average="macro"))
    tn, fp, fn, tp = skm.confusion_matrix(t, p).ravel()
    assert (s["tn"], s["fp"], s["fn"], s["tp"]) == (tn, fp, fn, tp)
    assert s["fpr_1"] == pytest.approx(fp / (fp + tn))
    assert s["brier"] == pytest.approx(skm.brier_score_loss(t, q), abs=1e-12)
    assert s["log_loss"] == pytest.approx(skm.log_loss(t, q), abs=1e-12)
    assert s["auc"] == pytest.approx(skm.roc_auc_score(t, q), abs=1e-12)


def test_weighted_cumulative_equals_scikit_learn():
    rng = np.random.default_rng(3)
    rows = random_rows(rng, 400, weights=True)
    s = feed(Metrics(Cumulative()), rows, 29)
    p, q, t, w = (np.array([r[k] for r in rows]) for k in range(4))
    assert s["accuracy"] == pytest.approx(skm.accuracy_score(t, p, sample_weight=w))
    assert s["mcc"] == pytest.approx(skm.matthews_corrcoef(t, p, sample_weight=w))
    assert s["f1_1"] == pytest.approx(skm.f1_score(t, p, sample_weight=w))
    assert s["log_loss"] == pytest.approx(skm.log_loss(t, q, sample_weight=w))
    assert s["auc"] == pytest.approx(skm.roc_auc_score(t, q, sample_weight=w))


def test_proba_nan_is_skipped_by_probability_metrics_only():
    rng = np.random.default_rng(8)
    rows = random_rows(rng, 300, nan_proba=0.3)
    s = feed(Metrics(Cumulative()), rows, 50)
    p, q, t = (np.array([r[k] for r in rows]) for k in range(3))
    ok = ~np.isnan(q)
    assert s["accuracy"] == pytest.approx(skm.accuracy_score(t, p))
    assert s["brier"] == pytest.approx(skm.brier_score_loss(t[ok], q[ok]))
    assert s["auc"] == pytest.approx(skm.roc_auc_score(t[ok], q[ok]))


# ---------------------------------------------------------------- properties
rows_strategy = st.lists(
    st.tuples(
        st.sampled_from([-1, 0, 1, 1, 0]),
        st.sampled_from([NAN, 0.0, 0.1, 0.5, 0.5, 0.9, 1.0]),
        st.integers(0, 1),
        st.sampled_from([1.0, 1.0, 1.0, 0.0, 2.0]),
    ),
    min_size=1,
    max_size=80,
)


@settings(max_examples=150, deadline=None)
@given(rows=rows_strategy, alpha=st.sampled_from([0.3, 0.9, 0.99]))
@example(rows=[(0, 0.1, 0, 1.0), (1, 0.9, 0, 1.0)], alpha=0.9)
def test_only_a_kappa_is_ever_infinite(rows, alpha):
    """No metric but a kappa has an infinite value, on any evaluations (abstentions, zero
    weights, one class, probabilities 0 and 1) and under every estimator: merged tables refuse
    any other infinite value as corrupt (delaycv.stages._tables.read_merged)."""
    for est in (Cumulative(), Fading(alpha), Sliding(5), Tumbling(7)):
        m = Metrics(est)
        for i, row in enumerate(rows, start=1):
            m.add(*row)
            if i % 3 == 0 or i == len(rows):
                infinite = {k for k, v in m.snapshot().items() if math.isinf(v)}
                assert infinite <= set(KAPPA_METRICS), (est, i, infinite - set(KAPPA_METRICS))


@settings(max_examples=80, deadline=None)
@given(rows=rows_strategy, every=st.integers(0, 30))
def test_fading_one_equals_cumulative(rows, every):
    a = feed(Metrics(Fading(1.0)), rows, every)
    b = feed(Metrics(Cumulative()), rows, every)
    assert_same(a, b, [n for n in METRICS if n != "auc"], 1e-12)


@settings(max_examples=80, deadline=None)
@given(rows=rows_strategy, every=st.integers(0, 30), extra=st.integers(0, 5))
def test_window_as_long_as_the_sequence_equals_cumulative(rows, every, extra):
    a = feed(Metrics(Sliding(len(rows) + extra)), rows, every)
    b = feed(Metrics(Cumulative()), rows, every)
    assert_same(a, b, METRICS, 1e-12)


@settings(max_examples=60, deadline=None)
@given(rows=rows_strategy, width=st.integers(1, 20), every=st.integers(0, 25))
def test_window_equals_cumulative_over_its_last_evaluations(rows, width, every):
    a = feed(Metrics(Sliding(width)), rows, every)
    b = feed(Metrics(Cumulative()), rows[-width:])
    assert_same(a, b, LOCAL, 1e-12)


@settings(max_examples=60, deadline=None)
@given(rows=rows_strategy, size=st.integers(1, 15), every=st.integers(0, 25))
def test_tumbling_chunks_equal_cumulative_per_chunk(rows, size, every):
    m = Metrics(Tumbling(size))
    last = feed(m, rows, every)
    chunks = m.chunks()
    assert len(chunks) == len(rows) // size
    for i, values in enumerate(chunks):
        assert values["evaluations"] == (i + 1) * size
        ref = feed(Metrics(Cumulative()), rows[i * size : (i + 1) * size])
        assert_same(values, ref, LOCAL, 1e-12)
    if chunks:
        assert_same(last, chunks[-1], METRICS, 0)
    else:
        assert all(math.isnan(v) for v in last.values())


@settings(max_examples=60, deadline=None)
@given(rows=rows_strategy, every=st.integers(1, 30), alpha=st.sampled_from([0.3, 0.9, 0.99]))
# found by hypothesis: NoChange's faded accuracy is 1 - 6e-6, so kappa_t = (acc - nc) / (1 - nc)
# multiplies the last bits of the sums by ~1.7e5 (2.7e-11 relative between the two schedules)
@example(rows=[(0, math.nan, 0, 1.0)] * 3 + [(0, math.nan, 1, 1.0)] + [(0, math.nan, 0, 1.0)] * 11,
         every=15, alpha=0.3)  # fmt: skip
def test_snapshot_schedule_does_not_change_values(rows, every, alpha):
    """Folding evaluations one by one or in batches gives the same sums, and so the same values
    (kappa and mcc compared through their sums: near a zero denominator they amplify rounding)."""
    stable = [k for k in METRICS if not k.startswith(("kappa", "mcc"))]
    for est in (Fading(alpha), Cumulative(), Sliding(7), Tumbling(5)):
        ma, mb = Metrics(est), Metrics(est)
        a = feed(ma, rows, every)
        b = feed(mb, rows, 1)
        assert np.allclose(state_sums(ma), state_sums(mb), rtol=1e-11, atol=0)
        assert_same(a, b, stable, 1e-11)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2 * SCALAR_BATCH + 2, 300),
    unit=st.booleans(),
    every=st.integers(SCALAR_BATCH + 1, 100),
    alpha=st.sampled_from([0.3, 0.9, 0.99]),
)
def test_all_active_batches_equal_one_by_one(seed, n, unit, every, alpha):
    """Batches where every evaluation is known, weighted and has a probability (the engine's
    case: the masks are dropped, Fading sums three weight sequences per code) give the values
    of the one-by-one arithmetic. (Random rows from a drawn seed: hypothesis's own lists tend to
    repeat one row, for which prediction and label sequences coincide.)"""
    rng = np.random.default_rng(seed)
    rows = random_rows(rng, n, weights=not unit)
    rows = [(p, q, t, max(w, 1.0)) for p, q, t, w in rows]  # w > 0: active
    for est in (Fading(alpha), Cumulative(), Sliding(7), Tumbling(5)):
        a, b = Metrics(est), Metrics(est)
        va, vb = feed(a, rows, every), feed(b, rows, 1)
        # the sums, entry by entry; the metrics that are not a difference of near-equal values
        # (kappa and mcc near a zero denominator amplify the last bits of the sums)
        assert np.allclose(state_sums(a), state_sums(b), rtol=1e-11, atol=0)
        stable = [k for k in METRICS if not k.startswith(("kappa", "mcc"))]
        assert_same(va, vb, stable, 1e-11)
        if isinstance(est, Tumbling):
            for ca, cb in zip(a.chunks(), b.chunks(), strict=True):
                assert_same(ca, cb, stable, 1e-11)


def state_sums(m: Metrics) -> np.ndarray:
    """The sums a Metrics state holds (see ``rows``), one flat array."""
    state = m._state
    if isinstance(state, FadingState):
        parts = [state.sums, state.counts[COUNTS]]  # (the unfaded sums kept: the counts only)
    elif isinstance(state, SlidingState):
        parts = [state.ring.sum(axis=1)]
    else:
        parts = [state.sums]
    return np.concatenate([np.asarray(x, dtype=float).ravel() for x in parts])


def test_long_all_active_batches_with_small_alpha():
    rng = np.random.default_rng(5)
    rows = random_rows(rng, 5000)  # all active; batches longer than a sub-chunk of alpha 0.2
    for w in (False, True):
        if w:
            rows = [(p, q, t, float(1 + i % 3)) for i, (p, q, t, _) in enumerate(rows)]
        a = feed(Metrics(Fading(0.2)), rows, 2000)
        b = feed(Metrics(Fading(0.2)), rows, 1)
        assert_same(a, b, METRICS, 1e-9)


def test_long_batches_with_small_alpha_do_not_overflow():
    rng = np.random.default_rng(4)
    rows = random_rows(rng, 5000)
    a = feed(Metrics(Fading(0.2)), rows)  # one batch of 5000: sub-chunked powers of alpha
    b = feed(Metrics(Fading(0.2)), rows, 1)
    assert all(math.isfinite(a[k]) or math.isnan(b[k]) or math.isinf(b[k]) for k in METRICS)
    assert_same(a, b, METRICS, 1e-9)


def test_fading_forgets_old_evaluations():
    rows = [(0, 0.1, 1)] * 200 + [(1, 0.9, 1)] * 200
    s = feed(Metrics(Fading(0.9)), rows, 100)
    assert s["recall_1"] == pytest.approx(1.0, abs=1e-9)
    assert s["classified"] == 400 and s["tp"] == 200 and s["fn"] == 200  # unfaded counters


def test_pickle_roundtrip_continues_identically():
    rng = np.random.default_rng(6)
    rows = random_rows(rng, 300, unknown=0.1)
    for est in (Fading(0.95), Cumulative(), Sliding(40), Tumbling(30)):
        m = Metrics(est)
        feed(m, rows[:150], 20)
        m.add(*rows[150])  # a buffered evaluation travels too
        clone = pickle.loads(pickle.dumps(m))
        a = feed(m, rows[151:], 20)
        b = feed(clone, rows[151:], 20)
        assert_same(a, b, METRICS, 0)


def test_metric_subset_and_tumbling_frame():
    m = Metrics(Tumbling(4), ["accuracy", "auc"])
    s = feed(m, [(1, 0.9, 1), (0, 0.2, 1), (1, 0.6, 0), (0, 0.1, 0), (1, 0.8, 1)])
    assert list(s) == ["accuracy", "auc"]
    assert s["accuracy"] == 0.5 and s["auc"] == 0.75
    frame = m.chunks_frame()
    assert list(frame.columns) == ["chunk", "evaluations", "accuracy", "auc"]
    assert frame.shape == (1, 4)
    with pytest.raises(TypeError):
        Metrics(Cumulative()).chunks()


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    sizes=st.lists(st.integers(1, 1500), min_size=1, max_size=12),
    levels=st.sampled_from([3, 50, 1000]),
)
def test_cumulative_auc_batches_equal_one_pass(seed, sizes, levels):
    """Unit weights, many ties (scores on a grid), batches large enough to cross the merges of
    the recent levels: the running U equals the one-pass pair count exactly, batch by batch."""
    from delaycv.metrics.auc import CumulativeAUC, pair_sums

    rng = np.random.default_rng(seed)
    auc = CumulativeAUC()
    qs, ys = [], []
    for m in sizes:
        q = rng.integers(0, levels, m) / levels
        y = (rng.random(m) < 0.3).astype(np.float64)
        auc.add(q, y, np.ones(m))
        qs.append(q)
        ys.append(y)
        u, wp, wn = pair_sums(np.concatenate(qs), np.concatenate(ys), np.ones(sum(map(len, qs))))
        assert (auc.u, auc.wp, auc.wn) == (u, wp, wn)


def _rows_equal(a: np.ndarray, b: np.ndarray, rtol: float) -> bool:
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    if same.all():
        return True
    both = ~same & np.isfinite(a) & np.isfinite(b)
    if (~same & ~both).any():
        return False
    return bool((np.abs(a[both] - b[both]) <= rtol * np.maximum(1.0, np.abs(a[both]))).all())


estimator_specs = st.sampled_from(
    [
        {"kind": "fading", "alpha": 0.99},
        {"kind": "fading", "alpha": 0.9},
        {"kind": "fading", "alpha": 1.0},
        {"kind": "cumulative"},
        {"kind": "sliding", "width": 7},
        {"kind": "tumbling", "size": 5},
    ]
)


@settings(max_examples=150, deadline=None)
@given(
    spec=estimator_specs,
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(0, 400),
    head=st.integers(0, 30),
    cuts=st.lists(st.integers(0, 400), min_size=1, max_size=25),
    abstain=st.booleans(),
    weighted=st.booleans(),
)
def test_snapshots_equal_snapshots_between_adds(spec, seed, n, head, cuts, abstain, weighted):
    """``snapshots(bounds)`` gives what folding in the evaluations up to each bound and calling
    ``snapshot`` gives (exactly, apart from the vectorised Fading path: up to rounding), folds
    in only up to the last bound and leaves the rest buffered."""
    rng = np.random.default_rng(seed)
    total = head + n
    p = rng.integers(-1 if abstain else 0, 2, total)
    t = rng.integers(0, 2, total)
    q = rng.random(total)
    w = rng.choice([0.0, 1.0, 3.0], total) if weighted else np.ones(total)
    bounds = np.sort(np.minimum(np.array(cuts), n))
    one, many = Metrics(spec), Metrics(spec)
    for m in (one, many):  # a history first (the MOA part may or may not have started)
        m.add_many(p[:head], q[:head], t[:head], w[:head])
        m.snapshot()
    want, prev = [], 0
    for b in bounds:
        one.add_many(*(a[head + prev : head + b] for a in (p, q, t, w)))
        snap = one.snapshot()
        want.append([snap[k] for k in METRICS])
        prev = int(b)
    many.add_many(p[head:], q[head:], t[head:], w[head:])
    got = many.snapshots(bounds)
    assert got.shape == (len(bounds), len(METRICS))
    assert many.buffered == n - int(bounds[-1])
    rtol = 1e-9 if spec["kind"] == "fading" else 0.0
    kappas = np.array([k.startswith("kappa") for k in METRICS])
    # a kappa against a reference near 1 divides the rounding by 1 - ref
    assert _rows_equal(np.array(want)[:, ~kappas], got[:, ~kappas], rtol)
    one.add_many(*(a[head + prev :] for a in (p, q, t, w)))
    a, b = one.snapshot(), many.snapshot()
    plain = [k for k in METRICS if not k.startswith("kappa")]
    assert _rows_equal(np.array([a[k] for k in plain]), np.array([b[k] for k in plain]), rtol)


def test_snapshots_checks_its_bounds():
    m = Metrics(Fading(0.99))
    m.add_many(np.array([1, 0, 1]), np.array([0.9, 0.2, 0.6]), np.array([1, 0, 0]))
    for bad in ([4], [2, 1], [-1]):
        with pytest.raises(ValueError, match="non-decreasing counts within the 3 buffered"):
            m.snapshots(bad)
    assert m.snapshots([]).shape == (0, len(METRICS))
    assert m.buffered == 3


def test_snapshots_of_the_engine_case_by_hand():
    """Fading after the start, every evaluation active: two prefixes by hand."""
    m = Metrics(Fading(0.5), metrics=["accuracy", "recall_1", "tp", "brier"])
    m.add(1, 0.8, 1)  # starts the MOA part (folded in by the snapshot)
    m.snapshot()
    m.add_many(np.array([0, 1, 1]), np.array([0.3, 0.6, 0.9]), np.array([1, 0, 1]))
    rows = m.snapshots([1, 1, 2, 3])[[0, 3]]  # four bounds: one vectorised pass
    # accuracy (own events: all): after 2 evaluations (correct, wrong): (0.5 * 1 + 0) /
    # (0.5 * 1 + 1); after 4: correct, wrong, wrong, correct
    acc2 = (0.5 * 1 + 0) / (0.5 + 1)
    acc4 = (0.5**3 * 1 + 0.5**2 * 0 + 0.5 * 0 + 1) / (0.5**3 + 0.5**2 + 0.5 + 1)
    # recall_1 (own events: t = 1): t = 1 at evaluations 1, 2 and 4 (p = 1, 0, 1)
    rec2 = (0.5 * 1 + 0) / (0.5 + 1)
    rec4 = (0.5**2 * 1 + 0.5 * 0 + 1) / (0.5**2 + 0.5 + 1)
    brier2 = (0.5 * 0.2**2 + 0.7**2) / (0.5 + 1)
    assert rows[0] == pytest.approx([acc2, rec2, 1.0, brier2], rel=1e-12)
    assert rows[1][:3] == pytest.approx([acc4, rec4, 2.0], rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    m=st.integers(1, 2600),
    cuts=st.lists(st.integers(0, 2600), min_size=1, max_size=12),
    unit=st.booleans(),
)
@example(seed=1, m=2048, cuts=[0, 0, 1024, 1024, 1025, 2048], unit=True)
def test_fading_running_sums_add_row_after_row(seed, m, cuts, unit):
    """``FadingState._running_sums`` (block by block, summing only at the bounds) gives, bit for
    bit, the rows of one cumulative sum over every term of the batch (the definition: terms
    added one after the other from zero), with terms whose magnitudes differ by 10^12 (where any
    other order of the additions rounds differently), across blocks, at bounds 0, repeated or
    on a block's edge."""
    from delaycv.metrics import states

    rng = np.random.default_rng(seed)
    code = rng.integers(0, N_CODES, m)
    vb = rng.standard_normal((m, 4)) * 10.0 ** rng.integers(-6, 7, (m, 1))
    w = rng.choice([1.0, 2.0, 0.3], m)
    scale = 10.0 ** rng.uniform(-6, 6, (3, m))
    bounds = np.sort(np.minimum(np.array(cuts), m))
    # the definition
    terms = np.zeros((m + 1, states._TERMS))
    terms[1:] = states._LUT_TERMS[code]
    if not unit:
        terms[1:, states._WEIGHTED_AT] *= w[:, None]
    terms[1:, states._B_AT] = vb
    for k, cols in enumerate(states._SEQ_RANGE):
        terms[1:, cols] *= scale[k][:, None]
    want = np.cumsum(terms, axis=0)[bounds]
    got = FadingState(METRICS, 0.99)._running_sums(code, vb, w, unit, scale, bounds)
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("alpha", [0.99, 0.9, 0.5, 0.999])
def test_fading_inverse_powers_are_the_c_librarys(alpha):
    """The table of alpha ** -k that ``FadingState.prefixes`` reads (grown as needed) holds
    exactly what the C library's ``pow`` gives for each exponent (``math.pow``; numpy's own
    differs in the last bit on processors with AVX-512), in any shape of exponents."""
    state = FadingState(METRICS, alpha)
    own = np.random.default_rng(3).integers(0, min(5000, state.span) + 1, (3, 4000))
    table = state._inverse_powers(int(own.max()))
    want = np.array([math.pow(alpha, -float(k)) for k in own.ravel()]).reshape(own.shape)
    assert table[own].tobytes() == want.tobytes()
    assert state._inverse_powers(10) is table  # kept


def test_compute_many_equals_compute():
    """The array form of the formulas gives exactly the values of the scalar form, state by
    state (random sums with many zeros: empty estimators, 0/0, x/0)."""
    from delaycv.metrics.formulas import compute, compute_many
    from delaycv.metrics.rows import N_ROWS

    rng = np.random.default_rng(0)
    s = rng.random((600, N_ROWS)) * rng.integers(0, 3, (600, N_ROWS))
    s[::7] = 0.0
    s[5::11, :10] = 0.0
    counts = rng.integers(0, 5, (600, N_ROWS)).astype(float)
    many = compute_many(s, counts, np.nan)
    for i in range(len(s)):
        one = np.array(list(compute(s[i], counts[i], np.nan).values()))
        assert np.array_equal(one, many[i], equal_nan=True), i


def test_every_metric_is_declared_once_and_a_count_points_the_way_of_its_rate():
    """Each metric of the tables has its properties (direction, kind, bounds); a count and the
    rate made of it agree on which way is better (``unknown`` and ``unknown_rate``: fewer
    abstentions are better; ``fp``/``fpr``: fewer; ``tp``/``recall``: more)."""
    from delaycv.metrics.effort_names import EFFORT_METRICS
    from delaycv.metrics.formulas import METRICS
    from delaycv.metrics.properties import higher_is_better, metric_properties

    for name in (*METRICS, *EFFORT_METRICS):
        declared = metric_properties(name)
        assert declared is not None, name
        if declared.kind == "rate":
            assert (declared.low, declared.high) == (0.0, 1.0), name
    pairs = [("unknown", "unknown_rate"), ("fp", "fpr_1"), ("fn", "fpr_0"), ("tp", "recall_1")]
    for count, rate in pairs:
        assert higher_is_better(count) == higher_is_better(rate), (count, rate)
    assert not higher_is_better("unknown") and not higher_is_better("fp")
    assert higher_is_better("classified") and higher_is_better("tn")
