"""Paired permutation tests and their companions (delaycv.stats.permutation, delaycv.stats.companions, delaycv.stats.learner_tests) on real numbers."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import delaycv
from delaycv.common.errors import DelaycvError, InputError
from delaycv.data.synthetic import generate_stream
from delaycv.protocol.policy_windows import policy_windows, window_table
from delaycv.stats.bias import bias_table, bias_tests
from delaycv.stats.companions import (
    cliffs_delta,
    holm,
    holm_by_group,
    mean_ci,
    sign_test_pvalues,
    wilcoxon_pvalues,
)
from delaycv.stats.learner_tests import run_tests
from delaycv.stats.mcnemar import mcnemar, mcnemar_tests
from delaycv.stats.paired import replicate_seeds
from delaycv.stats.permutation import permutation_test, sign_flip_pvalues, smallest_p
from tests.support.engine_bruteforce import random_stream
from tests.support.engine_runs import evaluate
from tests.support.fold_tables import METRIC_COLUMNS, fold_table


def brute_force_p(d, alternative="two-sided"):
    """Exact sign-flip p-value by enumerating every sign vector, one at a time."""
    d = np.asarray(d, float)
    t = d.mean()
    hits = 0
    for signs in itertools.product((1.0, -1.0), repeat=len(d)):
        s = float(np.mean(d * np.array(signs)))
        if alternative == "two-sided":
            hits += abs(s) >= abs(t) - 1e-12
        elif alternative == "greater":
            hits += s >= t - 1e-12
        else:
            hits += s <= t + 1e-12
    return hits / 2 ** len(d)


def scipy_p(a, b, alternative, resamples, seed=0):
    res = stats.permutation_test(
        (np.asarray(a), np.asarray(b)),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=resamples,
        alternative=alternative,
        rng=np.random.default_rng(seed),
    )
    return res.pvalue


# --------------------------------------------------------------------------- exactness


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_exact_p_equals_enumeration_and_scipy(n, alternative):
    rng = np.random.default_rng(n)
    a = rng.normal(0.8, 0.05, n)
    b = a - rng.normal(0.02, 0.03, n)
    res = permutation_test(a, b, alternative=alternative, resamples=5000)
    assert res.exact and res.resamples == 2**n and res.n == n
    assert res.p_value == pytest.approx(brute_force_p(a - b, alternative), abs=1e-12)
    if n > 1:  # scipy needs two observations
        assert res.p_value == pytest.approx(scipy_p(a, b, alternative, 5000), abs=1e-12)


def test_known_small_case():
    # d = (0.1, 0.1, 0.05): only the all-plus and the all-minus sign vectors reach |mean| >= 0.0833
    res = permutation_test([0.8, 0.9, 0.85], [0.7, 0.8, 0.8])
    assert res.p_value == pytest.approx(2 / 8)
    assert res.mean_diff == pytest.approx(0.25 / 3)
    one = permutation_test([0.8, 0.9, 0.85], [0.7, 0.8, 0.8], alternative="greater")
    assert one.p_value == pytest.approx(1 / 8)
    other = permutation_test([0.8, 0.9, 0.85], [0.7, 0.8, 0.8], alternative="less")
    assert other.p_value == pytest.approx(1.0)


@pytest.mark.parametrize("alternative", ["two-sided", "greater"])
def test_random_flips_agree_with_scipy_within_monte_carlo_error(alternative):
    rng = np.random.default_rng(7)
    n = 20  # 2**20 > R: random sign vectors
    a = rng.normal(0.8, 0.05, n)
    b = a - rng.normal(0.01, 0.04, n)
    res = permutation_test(a, b, resamples=20000, alternative=alternative, seed=3)
    assert not res.exact and res.resamples == 20000
    # p = (S + 1) / (R + 1) exactly
    s = res.p_value * 20001 - 1
    assert s == pytest.approx(round(s), abs=1e-6)
    exactish = scipy_p(a, b, alternative, 200000, seed=1)
    se = np.sqrt(exactish * (1 - exactish) / 20000)
    assert abs(res.p_value - exactish) < 5 * se + 1e-4


def test_random_flips_are_seeded_and_order_free():
    rng = np.random.default_rng(1)
    d = rng.normal(0.01, 0.05, size=(6, 16))
    p1, _, _ = sign_flip_pvalues(d, resamples=999, seed=5)
    p2, _, _ = sign_flip_pvalues(d[::-1], resamples=999, seed=5)
    p3, _, _ = sign_flip_pvalues(d, resamples=999, seed=6)
    np.testing.assert_array_equal(p1, p2[::-1])
    assert not np.array_equal(p1, p3)
    assert np.all(p1 >= 1 / 1000)


@settings(max_examples=40, deadline=None)
@given(
    # metric differences on a grid of 1/1000: no near-ties below the documented 1e-9 tolerance
    st.lists(st.integers(-1000, 1000).map(lambda k: k / 1000), min_size=1, max_size=9),
    st.randoms(use_true_random=False),
    st.floats(0.01, 100),
)
def test_p_value_invariances(d, rnd, scale):
    d = np.array(d, dtype=float)
    base = permutation_test(d, np.zeros_like(d)).p_value
    shuffled = d.copy()
    rnd.shuffle(shuffled)
    assert permutation_test(shuffled, np.zeros_like(d)).p_value == pytest.approx(base)
    # swapping the learners and rescaling leaves the two-sided p-value unchanged
    assert permutation_test(np.zeros_like(d), d).p_value == pytest.approx(base)
    assert permutation_test(d * scale, np.zeros_like(d)).p_value == pytest.approx(base)
    assert 2.0 ** -len(d) <= base <= 1.0
    assert base == pytest.approx(brute_force_p(d))


# --------------------------------------------------------------------------- size under H0


@pytest.mark.parametrize("n, resamples", [(10, 5000), (14, 999)])
def test_rejection_rate_under_h0(n, resamples):
    """1,000 comparisons whose differences are symmetric about zero: rejections at 0.05 in [0.03, 0.07]."""
    rng = np.random.default_rng(2024 + n)
    d = rng.laplace(0, 0.03, size=(1000, n)) * rng.choice([-1, 1], size=(1000, n))
    p, _, exact = sign_flip_pvalues(d, resamples=resamples, seed=11)
    assert exact.all() == (2**n <= resamples)
    rate = float(np.mean(p <= 0.05))
    assert 0.03 <= rate <= 0.07, rate


def test_power_against_a_real_difference():
    rng = np.random.default_rng(3)
    d = rng.normal(0.02, 0.01, size=(200, 10))
    p, _, _ = sign_flip_pvalues(d)
    assert np.mean(p <= 0.05) > 0.95


# --------------------------------------------------------------------------- degenerate input


def test_the_smallest_p_of_many_pairs_is_zero_without_a_warning():
    """2 / 2^n for n past 1023 pairs (a study's folds x seeds can give that many): below the
    smallest float, and no overflow on the way."""
    n = np.array([1, 20, 1074, 1075, 5000])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = smallest_p(n, True, 5000)
    assert got.tolist() == [1.0, 2.0**-19, 2.0**-1073, 0.0, 0.0]
    assert smallest_p(n, True, 5000, "greater").tolist() == [0.5, 2.0**-20, 2.0**-1074, 0, 0]


def test_degenerate_inputs_give_defined_answers():
    zero = permutation_test([0.5, 0.6, 0.7], [0.5, 0.6, 0.7])
    assert zero.p_value == 1.0 and zero.mean_diff == 0.0
    one = permutation_test([0.9], [0.1])
    assert one.p_value == 1.0 and one.n == 1
    nan = permutation_test([0.9, np.nan, 0.8, 0.7], [0.1, 0.2, np.nan, 0.6])
    assert nan.n == 2
    assert nan.p_value == pytest.approx(brute_force_p([0.8, 0.1]))
    empty = permutation_test([np.nan, 1.0], [0.2, np.nan])
    assert empty.n == 0 and np.isnan(empty.p_value)

    d = np.array([[0.0, 0.0, 0.0], [0.3, np.nan, np.nan], [np.nan] * 3])
    np.testing.assert_array_equal(wilcoxon_pvalues(d)[:2], [1.0, 1.0])
    np.testing.assert_array_equal(sign_test_pvalues(d)[:2], [1.0, 1.0])
    assert np.isnan(wilcoxon_pvalues(d)[2]) and np.isnan(sign_test_pvalues(d)[2])
    mean, low, high = mean_ci(d)
    assert mean[0] == 0 and low[0] == 0 and high[0] == 0
    assert mean[1] == pytest.approx(0.3) and np.isnan(low[1]) and np.isnan(high[1])
    assert np.isnan(mean[2])
    delta = cliffs_delta(np.array([[1.0, 2.0], [np.nan, np.nan]]), np.array([[1.0, 2.0], [1, 1]]))
    assert delta[0] == 0 and np.isnan(delta[1])


def test_run_tests_on_degenerate_tables():
    table = fold_table(folds=3, checkpoints=2)
    table.loc[table["learner"] == "nb", "accuracy"] = table.loc[
        table["learner"] == "ht", "accuracy"
    ].to_numpy()
    table.loc[table["learner"] == "prior", "accuracy"] = np.nan
    single = table[table["fold"] == 0]
    out = run_tests(table, metrics=["accuracy"], references=["true"], checkpoints="last")
    same = out[(out.learner_a == "ht") & (out.learner_b == "nb")]
    assert (same["p_value"] == 1).all() and (same["result"] == "n.s.").all()
    assert (same["wilcoxon_p"] == 1).all() and (same["sign_p"] == 1).all()
    with_prior = out[out.learner_b == "prior"]
    assert (with_prior["n"] == 0).all() and with_prior["p_value"].isna().all()
    assert with_prior["p_holm"].isna().all() and (with_prior["result"] == "n.s.").all()
    assert (same["family_size"] == 1).all()
    lone = run_tests(single, metrics=["recall_1"], references=["true"], checkpoints="last")
    assert (lone["n"] == 1).all() and (lone["p_value"] == 1).all() and lone["ci_low"].isna().all()


# --------------------------------------------------------------------------- companions


def test_holm_by_hand_and_properties():
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(holm([0.5, np.nan, 0.01]), [0.5, np.nan, 0.02])
    assert holm([0.9, 0.8]).tolist() == [1.0, 1.0]
    assert holm([0.02, 0.9]).tolist() == [0.04, 0.9]
    rng = np.random.default_rng(0)
    p = rng.uniform(size=30) ** 3
    adj = holm(p)
    assert np.all(adj >= p) and np.all(adj <= 1)
    order = np.argsort(p)
    assert np.all(np.diff(adj[order]) >= 0)
    assert np.all(adj <= np.minimum(1, 30 * p) + 1e-15)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 4),
            st.one_of(st.none(), st.sampled_from([0.001, 0.01, 0.04]), st.floats(0, 1)),
        ),
        max_size=30,
    )
)
def test_holm_by_group_is_holm_within_each_group(rows):
    groups = np.array([g * 10 - 7 for g, _ in rows], dtype=np.int64)
    p = np.array([np.nan if v is None else v for _, v in rows], dtype=float)
    expected = np.full(len(p), np.nan)
    for g in np.unique(groups):
        expected[groups == g] = holm(p[groups == g])
    np.testing.assert_array_equal(holm_by_group(p, groups), expected)


def test_mean_ci_matches_scipy_t_interval():
    rng = np.random.default_rng(5)
    d = rng.normal(0.02, 0.05, size=(3, 12))
    mean, low, high = mean_ci(d)
    for i in range(3):
        lo, hi = stats.t.interval(0.95, 11, loc=d[i].mean(), scale=stats.sem(d[i]))
        assert (low[i], high[i]) == pytest.approx((lo, hi))
        assert mean[i] == pytest.approx(d[i].mean())


def test_cliffs_delta_matches_its_definition():
    assert cliffs_delta([[3.0, 4.0]], [[1.0, 2.0]])[0] == 1.0
    assert cliffs_delta([[1.0, 2.0]], [[3.0, 4.0]])[0] == -1.0
    # pairs: (1,2)<, (1,0)>, (3,2)>, (3,0)> -> (3 - 1) / 4
    assert cliffs_delta([[1.0, 3.0]], [[2.0, 0.0]])[0] == pytest.approx(0.5)
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(4, 7)), rng.normal(size=(4, 7))
    brute = [np.mean([np.sign(x - y) for x in a[i] for y in b[i]]) for i in range(4)]
    np.testing.assert_allclose(cliffs_delta(a, b), brute)


def test_wilcoxon_and_sign_tests_are_scipys():
    rng = np.random.default_rng(9)
    d = rng.normal(0.01, 0.02, size=(5, 10))
    d[4, 3] = np.nan
    w = wilcoxon_pvalues(d)
    s = sign_test_pvalues(d, alternative="greater")
    for i in range(5):
        row = d[i][~np.isnan(d[i])]
        assert w[i] == pytest.approx(stats.wilcoxon(row).pvalue)
        k = int((row > 0).sum())
        assert s[i] == pytest.approx(
            stats.binomtest(k, len(row), 0.5, alternative="greater").pvalue
        )


def scipy_wilcoxon(row, alternative):
    """scipy's own Wilcoxon p-value of one row, with its defaults (1 when every value is zero)."""
    row = np.asarray(row, float)
    row = row[~np.isnan(row)]
    if not (row != 0).any():
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns about zeros and small samples
        return float(stats.wilcoxon(row, alternative=alternative).pvalue)


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(st.integers(1, 7), st.integers(14, 60)),  # scipy's own path takes seconds at 8..13
    st.integers(1, 3),
    st.sampled_from(["ties", "continuous", "mixed"]),
    st.sampled_from(["two-sided", "greater", "less"]),
    st.integers(0, 2**32 - 1),
)
def test_wilcoxon_equals_scipy_on_rows_with_ties_and_zeros(k, rows, kind, alternative, rnd):
    """Every path (exact, permutation with ties or zeros, normal approximation with tie correction)
    gives scipy's p-value of that row alone, in a batch that mixes rows with and without ties."""
    rng = np.random.default_rng(rnd)
    tied = rng.integers(-3, 4, size=(rows, k)) * 0.01  # ties and zeros, as fold values of baselines
    smooth = rng.normal(0.005, 0.02, size=(rows, k))
    d = tied if kind == "ties" else smooth
    if kind == "mixed":
        d = np.where(rng.random((rows, k)) < 0.4, tied, smooth)
        d[0] = smooth[0]  # one row without ties in the same batch
    d[rng.random((rows, k)) < 0.1] = np.nan
    p = wilcoxon_pvalues(d, alternative=alternative)
    for i in range(rows):
        if np.isnan(d[i]).all():
            assert np.isnan(p[i])
        else:
            assert p[i] == pytest.approx(scipy_wilcoxon(d[i], alternative), rel=1e-9, abs=1e-15)


def brute_force_signed_rank_p(row, alternative):
    """The permutation path by its definition: R+ of the average ranks of the non-zero |d| over
    every sign vector, one at a time."""
    row = np.asarray(row, float)
    row = row[row != 0]
    ranks = stats.rankdata(np.abs(row))
    observed = ranks[row > 0].sum()
    null = np.array(
        [ranks[np.array(s) > 0].sum() for s in itertools.product((1, -1), repeat=len(row))]
    )
    greater, less = np.mean(null >= observed), np.mean(null <= observed)
    return {"greater": greater, "less": less}.get(alternative, min(1.0, 2 * min(greater, less)))


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("k", [10, 13])
def test_wilcoxon_permutation_path_up_to_13_values(k, alternative):
    """10..13 values with ties or zeros: the exact sign-flip distribution of the tied ranks (scipy
    enumerates it too, too slowly to call here); one more value than 13: scipy's normal
    approximation."""
    rng = np.random.default_rng(k)
    d = rng.integers(-4, 5, size=(3, k)) * 0.01
    d[0, 0] = 0.0
    p = wilcoxon_pvalues(d, alternative=alternative)
    for i in range(3):
        assert p[i] == pytest.approx(brute_force_signed_rank_p(d[i], alternative), rel=1e-12)
    extra = 14 - k
    longer = np.concatenate([d, rng.integers(-4, 5, size=(3, extra)) * 0.01], axis=1)
    p = wilcoxon_pvalues(longer, alternative=alternative)
    for i in range(3):
        assert p[i] == pytest.approx(scipy_wilcoxon(longer[i], alternative), rel=1e-9)


def test_wilcoxon_paths_by_hand():
    # 5 positive differences, no ties: exact, P(R+ = 15) = 1/32 each side
    assert wilcoxon_pvalues([[0.1, 0.2, 0.3, 0.4, 0.5]])[0] == pytest.approx(2 / 32)
    assert wilcoxon_pvalues([[0.1, 0.2, 0.3, 0.4, 0.5]], alternative="less")[0] == 1.0
    # a zero and a tie, 4 values: ranks of 0.1, 0.1, -0.2 are 1.5, 1.5, 3 (the zero drops);
    # R+ = 3; the 8 sign vectors of the non-zero values give R+ in {0, 1.5, 1.5, 3, 3, 4.5, 4.5,
    # 6}: P(R+ >= 3) = 5/8 -> "greater" p = 5/8 (x 2 sign vectors of the zero: same ratio)
    d = [[0.0, 0.1, 0.1, -0.2]]
    assert wilcoxon_pvalues(d, alternative="greater")[0] == pytest.approx(5 / 8)
    assert wilcoxon_pvalues(d)[0] == 1.0  # 2 * min(5/8, 5/8) capped at 1
    # 20 values with a tie: normal approximation with the tie correction sum(t^3 - t) / 48
    d = np.arange(1, 21, dtype=float)
    d[1] = 1.0  # ranks 1.5, 1.5, 3, ...
    d[[0, 5]] *= -1  # R+ = 210 - 1.5 - 6 = 202.5
    sd = np.sqrt(20 * 21 * 41 / 24 - (2**3 - 2) / 48)
    z = (202.5 - 20 * 21 / 4) / sd
    assert wilcoxon_pvalues(d[None, :])[0] == pytest.approx(2 * stats.norm.sf(z))


def test_wilcoxon_needs_no_scipy_call_per_row(monkeypatch):
    """Structural guard of the speed fix: a batch with ties and zeros (which sends scipy's
    ``method="auto"`` into its permutation test) is computed without scipy's wilcoxon or
    permutation test, and a row's p-value does not depend on the rest of its batch."""

    def forbidden(*args, **kwargs):
        raise AssertionError("scipy's per-batch Wilcoxon/permutation test was called")

    rng = np.random.default_rng(4)
    d = rng.normal(0.01, 0.02, size=(300, 8))
    d[::3, 0] = 0.0
    d[1::3, 1] = d[1::3, 2]
    alone = [scipy_wilcoxon(d[i], "two-sided") for i in (0, 1, 2)]
    monkeypatch.setattr(stats, "wilcoxon", forbidden)
    monkeypatch.setattr(stats, "permutation_test", forbidden)
    p = wilcoxon_pvalues(d)
    np.testing.assert_allclose(p[:3], alone, rtol=1e-9)


# --------------------------------------------------------------------------- tables


def test_run_tests_finds_the_better_learner_and_respects_metric_direction():
    table = fold_table(folds=10, checkpoints=4)
    out = run_tests(table, metrics=["accuracy", "brier"], resamples=5000, checkpoints="last")
    assert set(out["checkpoint"]) == {4 * 500 - 7}
    assert len(out) == 2 * 2 * 2 * 3  # policies x references x metrics x learner pairs
    row = out[(out.metric == "accuracy") & (out.learner_a == "ht") & (out.learner_b == "nb")].iloc[
        0
    ]
    assert row["mean_diff"] == pytest.approx(row["mean_a"] - row["mean_b"])
    assert row["ci_low"] < row["mean_diff"] < row["ci_high"]
    assert row["result"] == "better" and row["better"] == "ht" and row["p_holm"] <= 0.05
    brier = out[(out.metric == "brier") & (out.learner_a == "ht") & (out.learner_b == "nb")].iloc[0]
    assert brier["mean_diff"] < 0 and brier["result"] == "better" and brier["better"] == "ht"
    assert brier["cliffs_delta"] < 0
    # Holm within each family of three pairs
    fam = out[(out.metric == "accuracy") & (out.reference == "true") & (out.policy == "ideal")]
    np.testing.assert_allclose(fam["p_holm"], holm(fam["p_value"].to_numpy()))
    assert (out["family_size"] == 3).all()


def test_pairs_are_seed_and_fold_and_missing_pairs_drop():
    table = fold_table(seeds=(1, 2), folds=5, checkpoints=2, learners={"a": 0.0, "b": 0.0})
    drop = (table.learner == "a") & (table.seed == 2) & (table.fold == 4)
    out = run_tests(table[~drop], metrics=["kappa"], references=["true"], resamples=500)
    assert set(out["n"]) == {9}
    assert not out["exact"].any() and set(out["resamples"]) == {500}  # 2**9 > 500
    # same values as a direct test on the (seed, fold)-paired differences
    keep = table[~drop & (table.reference == "true") & (table.policy == "ideal")]
    cp = keep["checkpoint"].min()
    a = keep[(keep.learner == "a") & (keep.checkpoint == cp)].set_index(["seed", "fold"])["kappa"]
    b = keep[(keep.learner == "b") & (keep.checkpoint == cp)].set_index(["seed", "fold"])["kappa"]
    both = pd.concat([a, b], axis=1, join="inner").to_numpy()
    assert len(both) == 9
    direct = permutation_test(both[:, 0], both[:, 1], resamples=500)
    row = out[(out.policy == "ideal") & (out.checkpoint == cp)].iloc[0]
    assert row["p_value"] == pytest.approx(direct.p_value)


def test_all_checkpoints_and_time_column():
    table = fold_table(folds=4, checkpoints=5, learners={"a": 0.0, "b": 0.1})
    out = run_tests(table, metrics=["gmean"], references=["observed"], checkpoints="all")
    assert sorted(out["checkpoint"].unique()) == sorted(table["checkpoint"].unique())
    times = table.groupby("checkpoint")["time"].first()
    np.testing.assert_array_equal(out["time"], times.loc[out["checkpoint"]].to_numpy())
    chosen = run_tests(table, metrics=["gmean"], checkpoints=[500, 1000])
    assert set(chosen["checkpoint"]) == {500, 1000}


def test_bad_tables_raise_errors_naming_the_problem():
    table = fold_table(folds=2, checkpoints=2)
    with pytest.raises(InputError, match="lacks column"):
        run_tests(table.drop(columns="fold"), metrics=["accuracy"])
    with pytest.raises(InputError, match="lacks column.*auc"):
        run_tests(table, metrics=["auc"])
    with pytest.raises(InputError, match="two rows"):
        run_tests(pd.concat([table, table.iloc[:1]]), metrics=["accuracy"])
    with pytest.raises(DelaycvError, match="checkpoints"):
        run_tests(table, metrics=["accuracy"], checkpoints="first")


def test_bias_tests_see_the_optimism_of_observed_labels():
    table = fold_table(folds=6, checkpoints=3)
    out = bias_tests(table, metrics=["accuracy"])
    hitl = out[out.policy == "hitl_7d_90d"]
    ideal = out[out.policy == "ideal"]
    np.testing.assert_allclose(hitl["mean_bias"], 0.04)
    np.testing.assert_allclose(hitl["p_value"], 2 / 64)
    assert (ideal["p_value"] == 1).all() and (ideal["mean_bias"] == 0).all()
    with pytest.raises(InputError, match="both references"):
        bias_table(table[table.reference == "true"], "accuracy")


@pytest.mark.parametrize("policy", [{"policy": "ideal"}, {"policy": "delay", "window": "3d"}])
def test_bias_tests_read_the_corrected_rounding_under_ideal_and_delay_as_no_bias(policy):
    """Under ideal and delay the corrected reference is the true value summed in another order:
    on this run 1e-16 away from it on about a fifth of the (fold, checkpoint) cells, the same
    sign on most folds, which a sign-flip test once called significant ("optimistic")."""
    result = delaycv.evaluate(
        generate_stream(rows=1500, seed=2, effort=False), "naive_bayes.GaussianNB", folds=5,
        every=300, progress=False, **policy,
    )  # fmt: skip
    folds = result.folds
    wide = folds.pivot_table(index=["fold", "checkpoint"], columns="reference", values="gmean")
    gap = (wide["corrected"] - wide["true"]).abs()
    assert (gap > 0).sum() >= 10 and gap.max() < 1e-15  # the rounding is there, and only it
    out = bias_tests(folds, metrics=["gmean", "recall_1", "fpr_1"], checkpoints="all")
    corrected = out[out["estimate"] == "corrected"]
    assert len(corrected) == 3 * 5
    assert (corrected["p_value"] == 1).all() and (corrected["mean_bias"] == 0).all()
    assert (corrected["ci_low"] == 0).all() and (corrected["ci_high"] == 0).all()


def test_a_bias_above_rounding_is_tested_whatever_the_metric_s_scale():
    """ROUNDING is relative to the values: 1e-9 between counts of 3e4 is rounding, between
    G-means of 0.5 it is a (tiny, consistent) bias the test sees."""
    table = fold_table(folds=6, checkpoints=1, learners={"a": 0.0})
    true = table["reference"] == "true"
    for column, value, gap, p in (("tp", 3e4, 1e-9, 1.0), ("gmean", 0.5, 1e-9, 2 / 64)):
        t = table.copy()
        t[column] = value
        t.loc[~true, column] = value + gap
        out = bias_tests(t, metrics=[column], checkpoints="last")
        observed = out[(out["estimate"] == "observed") & (out["policy"] == "ideal")]
        np.testing.assert_allclose(observed["p_value"], p)


# --------------------------------------------------------------------------- repeated seeds


def copy_seed(table, source=1, target=2, learners=None):
    """The table with seed ``target``'s metric values replaced by seed ``source``'s (for
    ``learners``, default all): what a fixed split and deterministic learners produce."""
    out = table.copy()
    keys = ["dataset", "learner", "policy", "fold", "reference", "estimator", "checkpoint"]
    values = out[out.seed == source].set_index(keys)[METRIC_COLUMNS]
    mask = out.seed == target
    if learners is not None:
        mask &= out.learner.isin(learners)
    where = pd.MultiIndex.from_frame(out.loc[mask, keys])
    out.loc[mask, METRIC_COLUMNS] = values.loc[where].to_numpy()
    return out


def test_replicate_seeds_marks_repeated_seeds_by_hand():
    # 3 seeds x 2 folds; row 0: seed 2 repeats seed 0 in both arrays; row 1: only in the first
    a = np.array([[1.0, 2.0, 3.0, 4.0, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0, 1.0, 2.0]])
    b = np.array([[5.0, np.nan, 7.0, 8.0, 5.0, np.nan], [5.0, 6.0, 7.0, 8.0, 5.0, 6.5]])
    repeat = replicate_seeds([a, b], 3)
    assert repeat.tolist() == [[False] * 4 + [True] * 2, [False] * 6]
    assert replicate_seeds([a[:, :4], a[:, :4]], 2).tolist() == [[False] * 4] * 2
    same = np.tile([0.5, 0.25], (1, 3))
    assert replicate_seeds([same, same], 3).tolist() == [[False] * 2 + [True] * 4]
    with pytest.raises(DelaycvError, match="do not split into 4 seeds"):
        replicate_seeds([a, b], 4)


def test_repeated_seeds_are_tested_once_and_n_says_so():
    table = fold_table(seeds=(1, 2), folds=10, checkpoints=3)
    options = dict(metrics=["gmean", "fpr_1"], resamples=5000, checkpoints="all")
    distinct = run_tests(table, **options)
    assert (distinct["n"] == 20).all() and (distinct["n_duplicates"] == 0).all()
    assert not distinct["exact"].any()  # 2**20 > 5000 sign vectors
    repeated = run_tests(copy_seed(table), **options)
    assert (repeated["n"] == 10).all() and (repeated["n_duplicates"] == 10).all()
    # exactly the tests of seed 1 alone: the copy adds nothing
    alone = run_tests(table[table.seed == 1], **options)
    assert (alone["n_duplicates"] == 0).all()
    pd.testing.assert_frame_equal(
        repeated.drop(columns="n_duplicates"), alone.drop(columns="n_duplicates")
    )
    # a seed is a repeat only when both learners repeat it: nb and prior copied, ht not
    half = run_tests(copy_seed(table, learners=["nb", "prior"]), **options)
    both = (half.learner_a == "nb") & (half.learner_b == "prior")
    assert (half.loc[both, "n"] == 10).all() and (half.loc[~both, "n"] == 20).all()
    assert (half.loc[~both, "n_duplicates"] == 0).all()


def test_repeated_seeds_among_three_and_near_repeats():
    table = fold_table(seeds=(1, 2, 3), folds=4, checkpoints=2, learners={"a": 0.0, "b": 0.1})
    options = dict(metrics=["kappa"], references=["true"], checkpoints="last")
    third = run_tests(copy_seed(table, 1, 3), **options)
    assert (third["n"] == 8).all() and (third["n_duplicates"] == 4).all()
    all_three = run_tests(copy_seed(copy_seed(table, 1, 3), 1, 2), **options)
    assert (all_three["n"] == 4).all() and (all_three["n_duplicates"] == 8).all()
    # one value differing in the last digit: not a repeat
    near = copy_seed(table, 1, 3)
    one = (near.seed == 3) & (near.fold == 2) & (near.learner == "b")
    near.loc[one, "kappa"] = np.nextafter(near.loc[one, "kappa"].to_numpy(), 2.0)
    assert (run_tests(near, **options)["n"] == 12).all()
    # a missing pair at the same fold of both seeds still repeats; at one seed only it does not
    gap = copy_seed(table, 1, 3)
    gap.loc[(gap.fold == 0) & (gap.learner == "a") & gap.seed.isin([1, 3]), "kappa"] = np.nan
    out = run_tests(gap, **options)
    assert (out["n"] == 7).all() and (out["n_duplicates"] == 3).all()
    gap.loc[(gap.fold == 0) & (gap.learner == "a") & (gap.seed == 1), "kappa"] = 0.5
    assert (run_tests(gap, **options)["n"] == 11).all()


def test_bias_tests_count_repeated_seeds_once():
    table = fold_table(seeds=(1, 2), folds=6, checkpoints=2)
    distinct = bias_tests(table, metrics=["accuracy"])
    assert (distinct["n"] == 12).all() and (distinct["n_duplicates"] == 0).all()
    repeated = bias_tests(copy_seed(table), metrics=["accuracy"])
    assert (repeated["n"] == 6).all() and (repeated["n_duplicates"] == 6).all()
    alone = bias_tests(table[table.seed == 1], metrics=["accuracy"])
    pd.testing.assert_frame_equal(repeated, alone.assign(n_duplicates=6))
    hitl = repeated[repeated.policy == "hitl_7d_90d"]
    np.testing.assert_allclose(hitl["p_value"], 2 / 64)  # exact over 6 pairs, not 12


@pytest.mark.parametrize(
    "learners", [("NoChange", "Prior"), ("NoChange", "naive_bayes.GaussianNB")]
)
def test_engine_runs_with_two_seeds_count_each_distinct_pair_once(learners):
    """Real runs of two seeds: n counts the (seed, fold) pairs whose values differ from the other
    seed's, found here by comparing the two runs fold by fold."""
    stream = random_stream(np.random.default_rng(3), 80)
    runs = [
        evaluate(
            stream,
            learner,
            "hitl_5s_20s",
            {"scheme": "bootstrap", "folds": 4},
            seed=seed,
            every=20,
            timing=False,
            run_keys={"learner": learner.rsplit(".", 1)[-1]},
        ).folds
        for learner in learners
        for seed in (1, 2)
    ]
    table = pd.concat(runs, ignore_index=True)
    metrics = ["gmean", "recall_1", "fpr_1"]
    out = run_tests(table, metrics=metrics, checkpoints="all")
    assert len(out) == table.reference.nunique() * table.checkpoint.nunique() * 3
    wide = table.set_index(["reference", "checkpoint", "learner", "seed", "fold"])[metrics]
    for row in out.itertuples():
        cell = wide.xs((row.reference, row.checkpoint), level=("reference", "checkpoint"))
        values = cell[row.metric].unstack("fold")  # (learner, seed) x fold
        known = values.notna().groupby(level="seed").all()  # both learners known, per seed/fold
        same = all(
            np.array_equal(values.loc[(learner, 1)], values.loc[(learner, 2)], equal_nan=True)
            for learner in (row.learner_a, row.learner_b)
        )
        pairs = known.to_numpy().sum()
        expected = int(known.loc[1].sum()) if same else int(pairs)
        assert (row.n, row.n + row.n_duplicates) == (expected, pairs), row


# --------------------------------------------------------------------------- McNemar


def _log(pred, true, observed=None, fold=0):
    n = len(pred)
    return pd.DataFrame(
        {
            "fold": np.full(n, fold, dtype=np.int64),
            "index": np.arange(1, n + 1, dtype=np.int64),
            "pred": np.asarray(pred, dtype=np.int8),
            "true": np.asarray(true, dtype=np.int8),
            "observed": np.asarray(true if observed is None else observed, dtype=np.int8),
        }
    )


def test_mcnemar_counts_and_p_values():
    true = [1, 1, 0, 0, 1, 0, 1, 0, 1, 1]
    a = [1, 1, 0, 0, 1, 0, 1, 0, 0, 1]  # wrong on 9
    b = [0, 0, 1, 0, 0, 0, 1, -1, 1, 1]  # wrong on 1, 2, 3, 5, 8 (abstains)
    log_a = pd.concat([_log(a, true, fold=0), _log(b, true, fold=1)])
    log_b = pd.concat([_log(b, true, fold=0), _log(a, true, fold=1)])
    exact = mcnemar(log_a, log_b)
    assert exact[["fold", "n", "a_only", "b_only"]].to_numpy().tolist() == [
        [0, 10, 5, 1],
        [1, 10, 1, 5],
    ]
    assert exact["p_value"].tolist() == pytest.approx([stats.binomtest(5, 6).pvalue] * 2)
    chi = mcnemar(log_a, log_b, method="chi2")
    assert chi["statistic"].tolist() == pytest.approx([9 / 6, 9 / 6])
    assert chi["p_value"].iloc[0] == pytest.approx(stats.chi2.sf(1.5, 1))
    early = mcnemar(log_a, log_b, upto=4)
    assert early[["a_only", "b_only"]].to_numpy().tolist() == [[3, 0], [0, 3]]
    # observed labels: pending instances (-1) drop; a "clean" assumption flips instance 1
    observed = [0, 1, 0, 0, 1, 0, 1, -1, -1, 1]
    obs = mcnemar(_log(a, true, observed), _log(b, true, observed), reference="observed")
    assert obs[["n", "a_only", "b_only"]].to_numpy().tolist() == [[8, 3, 1]]
    same = mcnemar(_log(a, true), _log(a, true), method="chi2")
    assert same["p_value"].tolist() == [1.0] and same["statistic"].tolist() == [0.0]


def test_mcnemar_tests_over_learner_pairs():
    true = np.array([1, 0] * 20)
    rng = np.random.default_rng(0)
    logs = {
        "good": _log(true, true),
        "coin": _log(rng.integers(0, 2, 40), true),
        "bad": _log(1 - true, true),
    }
    out = mcnemar_tests(logs, alpha=0.05)
    assert list(zip(out.learner_a, out.learner_b, strict=True)) == [
        ("bad", "coin"),
        ("bad", "good"),
        ("coin", "good"),
    ]
    row = out[(out.learner_a == "bad") & (out.learner_b == "good")].iloc[0]
    assert row["b_only"] == 40 and row["significant"]
    np.testing.assert_allclose(out["p_holm"], holm(out["p_value"].to_numpy()))


# --------------------------------------------------------------------------- windows


def test_policy_windows_and_window_table():
    w = policy_windows("hitl_7d_90d")
    assert (w.preset, w.pos.amount, w.neg.amount) == ("hitl", 7 * 86400, 90 * 86400)
    assert policy_windows("ideal").pos.amount == 0
    assert policy_windows("verification_500i").pos.unit == "i"
    assert policy_windows("delay_1h").neg.amount == 3600
    assert policy_windows("my_policy") is None
    assert policy_windows("hitl_7x_90d") is None
    grid = [f"hitl_{p}d_90d" for p in (1, 3, 7, 15, 30, 60, 90)] + ["ideal", "custom"]
    frame = window_table(grid)
    assert set(frame["family"]) == {"hitl, N = 90d"} and set(frame["varies"]) == {"P"}
    assert sorted(frame["window"] // 86400) == [0, 1, 3, 7, 15, 30, 60, 90]
    neg = window_table(["hitl_7d_30d", "hitl_7d_60d", "hitl_7d_90d"])
    assert set(neg["varies"]) == {"N"} and set(neg["family"]) == {"hitl, P = 7d"}
    given = window_table(["a", "b", "c"], windows={"a": "1d", "b": "7200s"})
    assert given.set_index("policy")["window"].to_dict() == {"a": 86400, "b": 7200}


def test_policies_that_wait_as_long_on_both_sides_share_one_axis():
    """RQ3's hitl policies (P = N = W) made seven families of one window each: no line."""
    rq3 = [f"hitl_{w}d_{w}d" for w in (1, 3, 7, 90)] + ["verification_1d", "verification_7d"]
    frame = window_table(["ideal", *rq3]).set_index("policy")
    hitl = frame.loc[[p for p in rq3 if p.startswith("hitl")]]
    assert set(hitl["family"]) == {"hitl, P = N"} and set(hitl["varies"]) == {"P = N"}
    assert (hitl["window"] // 86400).tolist() == [1, 3, 7, 90]
    assert set(frame.loc[["ideal"], "family"]) == {"hitl, P = N", "verification"}
    # one policy with P != N among them: the families of each N, as before
    mixed = window_table([*rq3, "hitl_7d_90d"])
    assert "hitl, P = N" not in set(mixed["family"]) and "hitl, N = 90d" in set(mixed["family"])
    # a single P = N policy, or several at one length, is no axis of its own
    assert set(window_table(["hitl_7d_7d", "hitl_7d_7d_err0.1"])["family"]) == {
        "hitl, N = 7d",
        "hitl, N = 7d, inspection error 0.1",
    }


def test_window_table_takes_the_windows_of_the_specs_the_runs_used():
    # names are labels: hitl_7d_90d's spec says 1d/15d, and a spec decides where it goes
    specs = {
        "hitl_7d_90d": {"preset": "hitl", "pos_window": "1d", "neg_window": "15d"},
        "b": {"preset": "hitl", "pos_window": "3d", "neg_window": "15d"},
        "c": {"preset": "hitl", "pos_window": "3d", "neg_window": "15d", "inspection_error": 0.1},
        "base": {"preset": "ideal"},
        "v": {"preset": "verification", "window": "500i"},
    }
    frame = window_table(list(specs), specs=specs).set_index("policy")
    assert frame.loc["hitl_7d_90d", "window"] == 86400
    assert frame.loc["hitl_7d_90d", "family"] == "hitl, N = 15d"
    assert frame.loc["c", "family"] == "hitl, N = 15d, inspection error 0.1"
    assert frame.loc["v", ["family", "varies", "window", "unit"]].tolist() == [
        "verification",
        "W",
        500,
        "i",
    ]
    # the ideal policy joins the families in seconds without an inspection error
    assert frame.loc[["base"], "family"].tolist() == ["hitl, N = 15d"]
    # a policy without a spec is left out; the names are not read
    assert "hitl_7d_90d" not in set(window_table(["hitl_7d_90d"], specs={})["policy"])


def test_policy_windows_reads_names_with_the_policies_parser():
    w = policy_windows("hitl_7d_90d_err0.05")
    assert (w.preset, w.pos.amount, w.inspection_error) == ("hitl", 7 * 86400, 0.05)
    assert policy_windows("hitl_7d") is None and policy_windows("delay_") is None


def test_a_difference_of_a_metric_without_direction_is_higher_or_lower_never_better():
    """The learner tests on a metric without a direction: ``result`` higher/lower, no ``better``;
    the page says so, and names the effort scope of the effort-aware sections."""
    from delaycv.report.statistics import tests_html
    from delaycv.stats.learner_tests import run_tests

    rows = []
    for fold in range(8):
        for learner, value in (("a", 0.6), ("b", 0.3)):
            for metric_value in [value + fold / 100]:
                rows.append(
                    {"dataset": "d", "learner": learner, "seed": 1, "policy": "ideal",
                     "fold": fold, "reference": "true", "estimator": "fading",
                     "checkpoint": 100, "time": 1, "evaluated": 100,
                     "effort_pci_20": metric_value, "popt": metric_value}
                )  # fmt: skip
    tests = run_tests(pd.DataFrame(rows), metrics=["effort_pci_20", "popt"], checkpoints="last")
    by = tests.set_index("metric")
    assert by.loc["effort_pci_20", "result"] == "higher" and by.loc["effort_pci_20", "better"] == ""
    assert by.loc["popt", "result"] == "better" and by.loc["popt", "better"] == "a"
    page = tests_html(tests, title="t", effort_scope="cumulative")
    assert "effort_pci_20 on true labels (effort scope cumulative; no direction)" in page
    assert "popt on true labels (effort scope cumulative; higher is better)" in page
    assert "a higher" in page and "a better" in page


def test_a_test_too_small_for_alpha_says_so():
    """5 pairs give no two-sided p below 2/32 = 0.0625: a learner better on every fold is not
    significant at 0.05, and its row says why; 6 pairs (2/64 = 0.031) reach it, and say
    nothing. A one-sided test of 5 pairs reaches 1/32; alpha 0.1 is reached by 5 pairs."""
    learners = {"a": 0.2, "b": 0.0}
    five = run_tests(fold_table(folds=5, learners=learners), metrics=["gmean"])
    assert set(five["p_value"]) == {0.0625} and not five["significant"].any()
    assert set(five["note"]) == {
        "5 (seed, fold) pairs: no p below 0.0625 (2/2^5) is possible, above alpha = 0.05: not "
        "significant whatever the differences (more folds or seeds)"
    }
    six = run_tests(fold_table(folds=6, learners=learners), metrics=["gmean"])
    assert set(six["p_value"]) == {2 / 64} and six["significant"].all()
    assert set(six["note"]) == {""}
    one_sided = run_tests(
        fold_table(folds=5, learners=learners), metrics=["gmean"], alternative="greater"
    )
    assert set(one_sided["note"]) == {""} and one_sided["significant"].all()
    assert set(
        run_tests(fold_table(folds=5, learners=learners), metrics=["gmean"], alpha=0.1)["note"]
    ) == {""}
    # random sign vectors: no p below 1/(R + 1)
    few = run_tests(fold_table(folds=10, learners=learners), metrics=["gmean"], resamples=9)
    assert not few["exact"].any() and not few["significant"].any()
    assert set(few["note"]) == {
        "R = 9 random sign vectors: no p below 0.1 (1/(R + 1)) is possible, above alpha = 0.05: "
        "not significant whatever the differences (more resamples)"
    }
    # the bias tests say it too (observed - true = the policy's optimism, the same on every fold)
    bias = bias_tests(fold_table(folds=5, learners=learners), metrics=["gmean"])
    tested = bias[bias["n"] > 0]
    assert set(tested["note"]) == set(five["note"])
    # a second seed that repeats the first's values (a learner that ignores its seed, folds every
    # seed shares) counts once: the note says so, and more seeds of that kind would not help
    once = fold_table(folds=5, learners=learners)
    repeated = run_tests(pd.concat([once, once.assign(seed=2)]), metrics=["gmean"])
    assert set(repeated["p_value"]) == {0.0625} and set(repeated["n_duplicates"]) == {5}
    assert set(repeated["note"]) == {
        "5 (seed, fold) pairs (5 more repeat an earlier seed's values and count once): no p "
        "below 0.0625 (2/2^5) is possible, above alpha = 0.05: not significant whatever the "
        "differences (more folds, or seeds whose values differ)"
    }
    with pytest.raises(DelaycvError, match="alpha 1.5 must lie in"):
        bias_tests(fold_table(folds=5), metrics=["gmean"], alpha=1.5)
