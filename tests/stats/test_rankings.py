"""Rankings across datasets (delaycv.stats.friedman, delaycv.stats.scott_knott, delaycv.stats.families): Friedman/Nemenyi/CD and Scott-Knott ESD, checked
against scipy, scikit-posthocs, Demšar's table and hand computations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
import scikit_posthocs as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats

from delaycv.common.errors import DelaycvError
from delaycv.stats.companions import cliffs_delta
from delaycv.stats.families import FAMILY, FRIEDMAN_COLUMNS, family_values, rank_across, rank_within
from delaycv.stats.friedman import (
    block_ranks,
    cohens_d,
    critical_difference,
    friedman_nemenyi,
    friedman_permutation_p,
    q_alpha,
)
from delaycv.stats.scott_knott import (
    COHEN_NEGLIGIBLE,
    VERSIONS,
    _best_cut,
    _cut_between,
    scott_knott_esd,
)
from tests.support.fold_tables import fold_table
from tests.support.paths import SHARED

# --------------------------------------------------------------------------- Friedman / Nemenyi

HAND = pd.DataFrame(
    {"a": [0.9, 0.8, 0.7, 0.9], "b": [0.8, 0.7, 0.6, 0.7], "c": [0.7, 0.6, 0.5, 0.8]},
    index=["d1", "d2", "d3", "d4"],
)


def test_friedman_hand_computed():
    # ranks (1 = best):  d1: a1 b2 c3 | d2: a1 b2 c3 | d3: a1 b2 c3 | d4: a1 c2 b3
    # rank sums a 4, b 9, c 11 -> mean ranks 1, 2.25, 2.75 (N = 4, k = 3)
    # chi2 = 12N/(k(k+1)) * sum (R_j - 2)^2 = 4 * (1 + 0.0625 + 0.5625) = 6.5, df 2
    # p = exp(-6.5/2) = 0.03877 (chi2 with 2 df); CD = 2.3437 * sqrt(3*4/(6*4)) = 1.6572
    r = friedman_nemenyi(HAND)
    assert r.tested and r.note == ""
    assert (r.k, r.n) == (3, 4)
    assert r.mean_ranks.to_dict() == {"a": 1.0, "b": 2.25, "c": 2.75}
    assert r.statistic == pytest.approx(6.5)
    assert r.p_value == pytest.approx(math.exp(-3.25))
    assert r.cd == pytest.approx(2.3437 * math.sqrt(0.5), abs=1e-3)
    # Nemenyi a vs c: |2.75 - 1| / sqrt(k(k+1)/(6N)) = 1.75 / sqrt(0.5) = 2.4749, times sqrt 2 = 3.5
    assert r.nemenyi.loc["a", "c"] == pytest.approx(stats.studentized_range.sf(3.5, 3, np.inf))
    assert r.nemenyi.loc["c", "a"] == r.nemenyi.loc["a", "c"]
    assert (np.diag(r.nemenyi.to_numpy()) == 1).all()
    table = r.table()
    assert table["treatment"].tolist() == ["a", "b", "c"]
    assert table["rank"].tolist() == [1, 2, 3]
    assert table["mean"].tolist() == pytest.approx([0.825, 0.7, 0.65])


@pytest.mark.parametrize("seed", range(5))
def test_friedman_statistic_equals_scipy_and_nemenyi_equals_scikit_posthocs(seed):
    rng = np.random.default_rng(seed)
    k, n = rng.integers(3, 9), rng.integers(3, 12)
    values = pd.DataFrame(
        np.round(rng.normal(size=(n, k)), 1),  # rounded: ties within blocks
        columns=[f"t{j}" for j in range(k)],
    )
    r = friedman_nemenyi(values)
    expected = stats.friedmanchisquare(*values.to_numpy().T)
    assert r.statistic == pytest.approx(expected.statistic)
    assert r.p_value == pytest.approx(expected.pvalue)
    nemenyi = sp.posthoc_nemenyi_friedman(values.to_numpy())
    np.testing.assert_allclose(r.nemenyi.to_numpy(), nemenyi.to_numpy())
    # two treatments differ at alpha exactly when their mean ranks are more than CD apart
    gaps = np.abs(r.mean_ranks.to_numpy()[:, None] - r.mean_ranks.to_numpy()[None, :])
    off = ~np.eye(k, dtype=bool)
    far = np.abs(gaps - r.cd) > 1e-9
    assert ((r.nemenyi.to_numpy() < 0.05) == (gaps > r.cd))[off & far].all()


def test_friedman_two_treatments_uses_the_same_formula():
    # k = 2 (scipy refuses): ranks a1 b2 in 3 blocks, a2 b1 in 1 -> R = (5, 7)
    # chi2 = 12/(N k (k+1)) * (25 + 49) - 3 N (k+1) = 12/24 * 74 - 36 = 1.0
    values = pd.DataFrame({"a": [3.0, 3, 3, 1], "b": [2.0, 2, 2, 2]})
    r = friedman_nemenyi(values)
    assert r.statistic == pytest.approx(1.0)
    assert r.p_value == pytest.approx(stats.chi2.sf(1.0, 1))


def test_friedman_every_block_tied_gives_chi2_0_p_1():
    r = friedman_nemenyi(pd.DataFrame({"a": [1.0, 2, 3], "b": [1.0, 2, 3], "c": [1.0, 2, 3]}))
    assert (r.statistic, r.p_value) == (0.0, 1.0)
    assert (r.nemenyi.to_numpy() == 1).all() and (r.mean_ranks == 2).all()


@pytest.mark.parametrize(
    ("alpha", "table"),
    [
        (0.05, [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]),
        (0.10, [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]),
    ],
)
def test_q_alpha_equals_demsar_table(alpha, table):
    # Demšar (2006), table 5(a), k = 2..10
    for k, q in zip(range(2, 11), table, strict=True):
        assert q_alpha(k, alpha) == pytest.approx(q, abs=1.5e-3), k
    assert critical_difference(4, 14, 0.05) == pytest.approx(2.569 * math.sqrt(20 / 84), 1e-3)


def test_lower_is_better_ranks_reversed():
    up = friedman_nemenyi(HAND)
    down = friedman_nemenyi(HAND, higher_is_better=False)
    np.testing.assert_allclose(down.mean_ranks, 4 - up.mean_ranks)
    assert down.statistic == pytest.approx(up.statistic)
    np.testing.assert_allclose(down.nemenyi, up.nemenyi)
    assert down.table()["treatment"].tolist() == ["c", "b", "a"]


def test_friedman_notes_instead_of_a_test_and_refuses_missing_cells():
    two = friedman_nemenyi(HAND.iloc[:2])
    assert not two.tested and "2 datasets" in two.note and "at least 3" in two.note
    assert math.isnan(two.statistic) and two.nemenyi.empty
    assert two.mean_ranks.to_dict() == {"a": 1.0, "b": 2.0, "c": 3.0}
    one = friedman_nemenyi(HAND[["a"]])
    assert "1 treatment" in one.note
    holey = HAND.copy()
    holey.loc["d3", "b"] = np.nan
    with pytest.raises(DelaycvError, match=r"treatment 'b' in block 'd3'"):
        friedman_nemenyi(holey)


def _enumerated_permutation_p(ranks: np.ndarray) -> float:
    """Friedman's permutation p by brute force: every block's ranks in every order (tied ranks'
    orders counted as often as they occur), the share whose scipy chi2 reaches the observed."""
    n, k = ranks.shape

    def chi2(r):
        return _chi2(np.asarray(r))

    observed = chi2(ranks)
    orders = [list(itertools.permutations(row)) for row in ranks]
    hits = total = 0
    for combo in itertools.product(*orders):
        total += 1
        hits += chi2(combo) >= observed - 1e-9
    return hits / total


def _chi2(ranks: np.ndarray) -> float:
    """Friedman's chi2 with the tie correction, as the textbooks write it (any k)."""
    n, k = ranks.shape
    sums = ranks.sum(axis=0)
    ties = sum(
        float((c**3 - c).sum()) for c in (np.unique(r, return_counts=True)[1] for r in ranks)
    )
    correction = 1.0 - ties / (n * k * (k * k - 1))
    if correction == 0.0:  # every block tied throughout
        return 0.0
    return (12.0 / (n * k * (k + 1)) * float((sums**2).sum()) - 3.0 * n * (k + 1)) / correction


def test_friedman_permutation_p_hand_computed_where_chi_square_says_otherwise():
    # three treatments on four datasets, a first in every one, two ranking b c and two c b:
    # R = (4, 10, 10), chi2 = 6 and the chi-square p is exp(-3) = 0.0498 < 0.05; exactly, the
    # chi2 of the 6**4 = 1296 permutations reaches 6 in 90 (tables of Friedman's statistic:
    # P(chi2 >= 6.0 | k = 3, N = 4) = 0.069), above 0.05
    values = pd.DataFrame({"a": [0.9, 0.9, 0.9, 0.9], "b": [0.8, 0.7, 0.8, 0.7],
                           "c": [0.7, 0.8, 0.7, 0.8]})  # fmt: skip
    r = friedman_nemenyi(values)
    assert r.statistic == pytest.approx(6.0) and r.p_value == pytest.approx(math.exp(-3))
    assert r.p_permutation == pytest.approx(90 / 1296) and r.permutation_exact
    # HAND: chi2 = 6.5 (p = exp(-3.25) = 0.039) is reached by 54 of 1296 (tables: 0.042)
    hand = friedman_nemenyi(HAND)
    assert hand.p_permutation == pytest.approx(54 / 1296) and hand.permutation_exact
    # three datasets that rank alike: 6 of 6**3 (every dataset the same order)
    alike = friedman_nemenyi(HAND.iloc[:3])
    assert alike.p_value == pytest.approx(math.exp(-3))
    assert alike.p_permutation == pytest.approx(6 / 216)
    table = r.table()
    assert table["p_permutation"].tolist() == [r.p_permutation] * 3
    assert table["permutation_exact"].tolist() == [True] * 3


@settings(max_examples=40, deadline=None)
@given(
    st.integers(2, 4).flatmap(
        lambda k: st.lists(
            st.lists(st.integers(0, 2), min_size=k, max_size=k), min_size=3, max_size=5
        ).filter(lambda rows: math.factorial(len(rows[0])) ** len(rows) <= 5000)
    )
)
@example([[0, 1, 2], [0, 2, 1], [0, 1, 2], [0, 2, 1]])
@example([[1, 1, 0], [1, 0, 0], [2, 2, 2]])  # ties within blocks, a block all tied
def test_friedman_permutation_p_equals_brute_force_enumeration(rows):
    values = np.asarray(rows, dtype=np.float64)
    ranks = block_ranks(values)
    p, exact = friedman_permutation_p(ranks)
    assert exact
    assert p == pytest.approx(_enumerated_permutation_p(ranks), abs=1e-12)
    assert 0.0 < p <= 1.0


def test_friedman_permutation_p_of_two_treatments_is_the_sign_test():
    # k = 2 without ties: exchanging a block's two values flips who wins it, so the permutation
    # p of chi2 is the two-sided sign test's (scipy's binomtest)
    rng = np.random.default_rng(3)
    for n in (3, 6, 9, 12):
        values = rng.normal(size=(n, 2))
        wins = int((values[:, 0] > values[:, 1]).sum())
        p, exact = friedman_permutation_p(block_ranks(values), resamples=2**n)
        assert exact
        assert p == pytest.approx(stats.binomtest(wins, n).pvalue), n


def test_friedman_permutation_p_random_permutations_are_seeded_and_near_exact():
    # 6 datasets x 3 treatments: 6**6 = 46656 permutations, more than R
    rng = np.random.default_rng(11)
    values = rng.normal(size=(6, 3)) + np.array([0.8, 0.3, 0.0])
    ranks = block_ranks(values)
    exact_p = _enumerated_permutation_p(ranks)
    p1, exact = friedman_permutation_p(ranks, resamples=5000, seed=1)
    assert not exact
    assert p1 == friedman_permutation_p(ranks, resamples=5000, seed=1)[0]
    assert p1 != friedman_permutation_p(ranks, resamples=5000, seed=2)[0]
    # (1 + count) / (R + 1): within 4 standard errors of the exact p
    assert abs(p1 - exact_p) < 4 * math.sqrt(exact_p * (1 - exact_p) / 5000) + 1 / 5001
    assert friedman_permutation_p(ranks, resamples=46656)[1]  # enough: exact
    with pytest.raises(DelaycvError, match="resamples 0 must be at least 1"):
        friedman_permutation_p(ranks, resamples=0)


# --------------------------------------------------------------------------- effect sizes


def test_cohens_d_hand_computed():
    # means 11.5, 11; variances 6.25 and 1; pooled sd sqrt((2*6.25 + 2*1)/4) = sqrt(3.625)
    b = np.array([9.0, 11.5, 14.0])
    a = np.array([10.0, 11.0, 12.0])
    assert cohens_d(b, a) == pytest.approx(0.5 / math.sqrt(3.625))
    assert cohens_d(a, b) == pytest.approx(-0.5 / math.sqrt(3.625))
    assert cohens_d(a, a) == 0.0
    assert cohens_d(np.array([2.0, 2.0]), np.array([1.0, 1.0])) == math.inf


# --------------------------------------------------------------------------- Scott-Knott ESD

#: B and A overlap (Cliff's delta of B against A: (5 - 4)/9 = 0.111, negligible; Cohen's d
#: 0.5 / sqrt(3.625) = 0.263, small), C lies far below both.
SK = pd.DataFrame(
    {"A": [10.0, 11.0, 12.0], "B": [9.0, 11.5, 14.0], "C": [1.0, 2.0, 3.0]},
)


def test_sk_esd_np_hand_computed():
    # medians B 11.5 > A 11 > C 2: order B, A, C. Extremes B vs C: delta = 1 -> cut.
    # ranks of all 9 values: C 1,2,3 (sum 6); B 9->4, 11.5->7, 14->9 (20); A 5,6,8 (19)
    # cut B | A,C: 12/90 * (20^2/3 + 25^2/6) - 30 = 1.667
    # cut B,A | C: 12/90 * (39^2/6 + 6^2/3) - 30 = 5.4  <- kept
    # segment B, A: Cliff's delta(B, A) = 1/9 < 0.147 -> one group
    out = scott_knott_esd(SK, version="np")
    assert list(out.columns) == ["treatment", "group", "rank", "median", "mean_rank", "n"]
    assert out["treatment"].tolist() == ["B", "A", "C"]
    assert out["group"].tolist() == [1, 1, 2]
    assert out["rank"].tolist() == [1, 2, 3]
    assert out["median"].tolist() == [11.5, 11.0, 2.0]
    # row ranks: (B2 A1 C3), (B1 A2 C3), (B1 A2 C3)
    assert out["mean_rank"].tolist() == pytest.approx([4 / 3, 5 / 3, 3.0])
    assert out["n"].tolist() == [3, 3, 3]
    assert _kruskal_of_cuts(SK, ["B", "A", "C"], 0, 2) == pytest.approx([1.0 + 2 / 3, 5.4])
    # the part of H that moves with the cut: 20^2/3 + 25^2/6 and 39^2/6 + 6^2/3
    between = _cut_between(np.array([20.0, 19.0, 6.0]), np.full(3, 3.0))
    assert between == pytest.approx([400 / 3 + 625 / 6, 1521 / 6 + 12])


def test_sk_esd_p_hand_computed():
    # means B 11.5 > A 11 > C 2. Extremes B vs C: d = 9.5 / sqrt((2*6.25 + 2*1)/4) = 4.99 -> cut.
    # between-groups SS: B | A,C: 11.5^2 + 13^2/2 - 24.5^2/3 = 16.667
    #                    B,A | C: 22.5^2/2 + 2^2 - 24.5^2/3 = 57.042  <- kept
    # segment B, A: d = 0.5 / sqrt(3.625) = 0.263 >= 0.2 -> cut: B | A
    out = scott_knott_esd(SK, version="p")
    assert list(out.columns) == ["treatment", "group", "rank", "mean", "mean_rank", "n"]
    assert out["treatment"].tolist() == ["B", "A", "C"]
    assert out["group"].tolist() == [1, 2, 3]
    assert out["mean"].tolist() == pytest.approx([11.5, 11.0, 2.0])
    between = _cut_between(np.array([11.5, 11.0, 2.0]), np.ones(3))
    assert between - 24.5**2 / 3 == pytest.approx(
        [11.5**2 + 13**2 / 2 - 24.5**2 / 3, 22.5**2 / 2 + 4 - 24.5**2 / 3]
    )


def test_sk_esd_checks_only_the_extremes_of_a_segment_as_the_r_code_does():
    # np: medians X 45 > Y 44.5 > Z 44. Cliff's delta of the extremes X, Z (Z = X - 1, 10 values):
    # #{X > Z} = 55, #{X < Z} = 45 -> 0.1, negligible: the code keeps X, Y, Z in one group,
    # although X against Y is -0.4 (#{X > Y} = 5*6 = 30, #{X < Y} = 5*10 + 5*4 = 70), which the
    # README's "any pair" rule would split.
    x = np.arange(0.0, 100.0, 10.0)
    y = np.array([44.5] * 6 + [95.0] * 4)
    values = pd.DataFrame({"X": x, "Y": y, "Z": x - 1})
    assert cliffs_delta(x[None], (x - 1)[None])[0] == pytest.approx(0.1)
    assert cliffs_delta(x[None], y[None])[0] == pytest.approx(-0.4)
    out = scott_knott_esd(values, version="np")
    assert out["treatment"].tolist() == ["X", "Y", "Z"] and out["group"].tolist() == [1, 1, 1]
    # p: means X 2 > Y 1.7 > Z 1.62; d(X, Z) = 0.38 / 2 = 0.19 (negligible), d(X, Y) =
    # 0.3 / sqrt((2*4 + 2*0.0001)/4) = 0.212 (not): one group, as the code decides
    x = np.array([0.0, 2.0, 4.0])
    y = np.array([1.69, 1.70, 1.71])
    values = pd.DataFrame({"X": x, "Y": y, "Z": x - 0.38})
    assert abs(cohens_d(x, x - 0.38)) < COHEN_NEGLIGIBLE <= cohens_d(x, y)
    out = scott_knott_esd(values, version="p")
    assert out["treatment"].tolist() == ["X", "Y", "Z"] and out["group"].tolist() == [1, 1, 1]


def _kruskal_of_cuts(values: pd.DataFrame, order, lo: int, hi: int) -> list[float]:
    """scipy's Kruskal-Wallis H of every cut of the segment order[lo..hi], each treatment outside
    the segment a group of its own (as R's PartitionNonParametric relabels only the segment)."""
    cols = {c: values[c].to_numpy() for c in values.columns}
    outside = [cols[c] for c in values.columns if c not in order[lo : hi + 1]]
    out = []
    for c in range(lo, hi):
        left = np.concatenate([cols[t] for t in order[lo : c + 1]])
        right = np.concatenate([cols[t] for t in order[c + 1 : hi + 1]])
        out.append(float(stats.kruskal(left, right, *outside).statistic))
    return out


@pytest.mark.parametrize("seed", range(20))
def test_np_cut_is_the_first_largest_kruskal_h_with_outside_treatments_as_groups(seed):
    # H = (12/(N(N+1)) (between + outside) - 3(N+1)) / C: the between part of each cut, from the
    # rank sums, gives scipy's H, so the cut chosen from it is the first of scipy's largest H
    rng = np.random.default_rng(seed)
    k, n = int(rng.integers(3, 8)), int(rng.integers(2, 9))
    values = pd.DataFrame(np.round(rng.normal(size=(n, k)), 1))  # rounded: ties across groups
    order = list(rng.permutation(k))
    lo = int(rng.integers(0, k - 1))
    hi = int(rng.integers(lo + 1, k))
    flat = values.to_numpy().T.ravel()
    ranks = stats.rankdata(flat).reshape(k, n).sum(axis=1)
    _, counts = np.unique(flat, return_counts=True)
    big_n = float(n * k)
    correction = 1 - float((counts.astype(float) ** 3 - counts).sum()) / (big_n**3 - big_n)
    seg = np.array(order[lo : hi + 1])
    outside = sum(ranks[j] ** 2 / n for j in range(k) if j not in seg)
    between = _cut_between(ranks[seg], np.full(len(seg), float(n)))
    h = (12 / (big_n * (big_n + 1)) * (between + outside) - 3 * (big_n + 1)) / correction
    scipy_h = _kruskal_of_cuts(values, order, lo, hi)
    assert h == pytest.approx(scipy_h)
    cut = _best_cut(ranks[seg], np.full(len(seg), float(n)), np.ones(len(seg) - 1, dtype=bool))
    best = max(scipy_h)
    assert scipy_h[cut] == pytest.approx(best, rel=1e-12)
    assert all(x < best - 1e-9 * best for x in scipy_h[:cut])


def test_best_cut_breaks_ties_exactly_and_skips_cuts_not_allowed():
    # means 2, 1, 0: both cuts score 4 + 1/2 = 4.5 exactly: the first wins, whatever the rounding
    assert _best_cut(np.array([2.0, 1.0, 0.0]), np.ones(3), np.ones(2, dtype=bool)) == 0
    # means 0.3, 0.6, 0.3: both cuts are 0.3^2 + 0.9^2/2 exactly, but in floats the right side of
    # the first cut (the total minus 0.3) rounds below 0.9 and the second cut scores higher; the
    # margin of 1e-9 leaves both to the exact comparison, which keeps the first
    sums = np.array([0.3, 0.6, 0.3])
    between = _cut_between(sums, np.ones(3))
    assert between[0] < between[1]
    assert _best_cut(sums, np.ones(3), np.ones(2, dtype=bool)) == 0
    # the best cut not allowed: the best of the others
    sums = np.array([9.0, 9.0, 0.0, 0.0])
    assert _best_cut(sums, np.ones(4), np.ones(3, dtype=bool)) == 1
    assert _best_cut(sums, np.ones(4), np.array([True, False, True])) == 0


def test_sk_esd_lower_is_better_and_errors():
    out = scott_knott_esd(SK, higher_is_better=False)
    assert out["treatment"].tolist() == ["C", "A", "B"]
    assert out["group"].tolist() == [1, 2, 2]
    assert out["median"].tolist() == [2.0, 11.0, 11.5]  # values as measured
    with pytest.raises(DelaycvError, match="version 'x'"):
        scott_knott_esd(SK, version="x")
    holey = SK.copy()
    holey.loc[1, "A"] = np.nan
    with pytest.raises(DelaycvError, match="treatment 'A' in row 1"):
        scott_knott_esd(holey)


def test_sk_esd_identical_treatments_and_all_equal():
    same = pd.DataFrame({"a": [1.0, 1.0], "b": [1.0, 1.0]})
    for version in VERSIONS:
        assert scott_knott_esd(same, version=version)["group"].tolist() == [1, 1]


columns_strategy = st.integers(2, 6).flatmap(
    lambda k: st.integers(2, 8).flatmap(
        lambda n: st.lists(
            st.lists(st.floats(-10, 10, allow_nan=False), min_size=k, max_size=k),
            min_size=n,
            max_size=n,
        )
    )
)


def _frame(rows) -> pd.DataFrame:
    k = len(rows[0])
    return pd.DataFrame(rows, columns=[f"t{j}" for j in range(k)])


def _groups(out: pd.DataFrame) -> dict[str, int]:
    return dict(zip(out["treatment"], out["group"], strict=True))


@settings(max_examples=150, deadline=None)
@given(rows=columns_strategy, version=st.sampled_from(VERSIONS), data=st.data())
def test_sk_esd_properties(rows, version, data):
    values = _frame(rows)
    out = scott_knott_esd(values, version=version)
    k = values.shape[1]
    groups = out["group"].to_numpy()
    # contiguous in the sorted order, numbered 1, 2, ... without gaps; at most k groups
    assert groups[0] == 1 and set(np.diff(groups)) <= {0, 1}
    assert groups.max() <= k
    assert sorted(out["treatment"]) == sorted(values.columns)
    # the order of the columns does not change the groups
    perm = data.draw(st.permutations(list(values.columns)))
    assert _groups(scott_knott_esd(values[perm], version=version)) == _groups(out)


def test_sk_esd_identical_treatments_the_case_that_split_them():
    # Medians: t5, t2, t1 1; copy, t0 0.5; t4, t3 0 (ties by mean: t5 4/3, t2 1, t1 2/3;
    # t4 1, t3 -1/6). Rank sums of the 21 values: t5 39, t2 48, t1 37, copy 30, t0 30, t4 30,
    # t3 17. After the cut {t5, t2, t1} | rest (Cliff's delta(t5, t1) = 1/9: one group) the rest is
    # cut after t4 (delta(copy, t3) = 2/3), and {copy, t0, t4} has delta(copy, t4) = (6 - 3)/9 =
    # 1/3: it is cut, but copy, t0 and t4 have one rank sum, so both cuts score the same H (5.128):
    # the first of them, which R (and delaycv before) took, parts copy from t0. Only the cut
    # between t0 and t4 tells treatments apart.
    rows = [[0.5, 1, 1, 0, 0, 4], [0.5, 2, 1, -1, 0, 1], [0.5, -1, 1, 0.5, 3, -1]]
    values = _frame(rows).assign(copy=lambda v: v["t0"])
    out = scott_knott_esd(values, version="np")
    assert out["treatment"].tolist() == ["t5", "t2", "t1", "copy", "t0", "t4", "t3"]
    assert out["group"].tolist() == [1, 1, 1, 2, 2, 3, 4]
    assert _kruskal_of_cuts(values, ["copy", "t0", "t4", "t3"], 0, 2) == pytest.approx(
        [5.128205128205138] * 2
    )
    # p: means t5 4/3; t2, t4 1; t1 2/3; copy, t0 1/2; t3 -1/6
    out = scott_knott_esd(values, version="p")
    assert out["treatment"].tolist() == ["t5", "t2", "t4", "t1", "copy", "t0", "t3"]
    assert out["group"].tolist() == [1, 1, 1, 2, 2, 2, 3]


# values that tie often (shared medians, means, rank sums), among any others
tying_values = st.one_of(
    st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0, 3.0]), st.floats(-10, 10, allow_nan=False)
)
tying_columns = st.integers(2, 6).flatmap(
    lambda k: st.integers(2, 8).flatmap(
        lambda n: st.lists(st.lists(tying_values, min_size=k, max_size=k), min_size=n, max_size=n)
    )
)


def _partition_sets(out: pd.DataFrame, rename=None) -> set[frozenset]:
    rename = rename or {}
    return {
        frozenset(rename.get(t, t) for t in group["treatment"]) for _, group in out.groupby("group")
    }


@settings(max_examples=300, deadline=None)
@given(
    rows=tying_columns,
    version=st.sampled_from(VERSIONS),
    source=st.integers(0, 5),
    name=st.sampled_from(["a", "t", "t00", "u", "zz"]),
    at=st.integers(0, 6),
    roll=st.integers(0, 7),
)
# the case above: all cuts of {t0, copy, t4} score the same
@example(
    [[0.5, 1, 1, 0, 0, 4], [0.5, 2, 1, -1, 0, 1], [0.5, -1, 1, 0.5, 3, -1]], "np", 0, "a", 6, 0
)
# t3 = [0, 4] has the median and mean of t0 = zz = [2, 2]: ordered by name, it came between them
# and the cut {t3, t0} | {zz, ...} parted them (R, which orders tied medians by column, too)
@example([[2, 1, 1, 0, 0], [2, 1, 2, 4, 1]], "np", 0, "zz", 5, 0)
def test_sk_esd_identical_treatments_share_a_group(rows, version, source, name, at, roll):
    # a copy of a treatment (its values in the same rows or rolled over the rows: every statistic
    # of the partition is unpaired), under any name, at any column, gets the treatment's group
    values = _frame(rows)
    k = values.shape[1]
    source = values.columns[source % k]
    values.insert(at % (k + 1), name, np.roll(values[source].to_numpy(), roll))
    for up in (True, False):
        g = _groups(scott_knott_esd(values, version=version, higher_is_better=up))
        assert g[name] == g[source]


@settings(max_examples=300, deadline=None)
@given(rows=tying_columns, version=st.sampled_from(VERSIONS), data=st.data())
def test_sk_esd_partition_ignores_names_column_order_and_row_order(rows, version, data):
    # The treatments are told apart by their values alone: new names (any bijection), another
    # column order and another row order (all columns alike) give the same groups, as sets. The
    # order of the table and the group numbers follow (group 1 best), except between treatments
    # of the same values, which the names order.
    values = _frame(rows)
    out = scott_knott_esd(values, version=version)
    names = list(values.columns)
    new = data.draw(st.permutations([f"n{j}" for j in range(len(names))]), label="names")
    back = dict(zip(new, names, strict=True))
    moved = values.set_axis(new, axis=1)[data.draw(st.permutations(new), label="columns")]
    moved = moved.iloc[data.draw(st.permutations(range(len(moved))), label="rows")]
    again = scott_knott_esd(moved, version=version)
    assert _partition_sets(again, back) == _partition_sets(out)
    assert _groups(again.assign(treatment=again["treatment"].map(back))) == _groups(out)
    # lower-is-better of the negated values: the same partition
    assert _groups(scott_knott_esd(-values, version=version, higher_is_better=False)) == _groups(
        out
    )


@settings(max_examples=100, deadline=None)
@given(rows=columns_strategy, version=st.sampled_from(VERSIONS), up=st.booleans())
def test_sk_esd_treatment_shifted_far_away_gets_its_own_group_ranked_best(rows, version, up):
    values = _frame(rows)
    rng = np.random.default_rng(len(rows))
    far = values["t0"].mean() + (100.0 if up else -100.0) + 0.01 * rng.random(len(values))
    values["far"] = far
    out = scott_knott_esd(values, version=version, higher_is_better=up)
    assert out["treatment"].iloc[0] == "far"
    assert out["group"].iloc[0] == 1 and (out["group"].iloc[1:] >= 2).all()
    assert out["rank"].iloc[0] == 1


# --------------------------------------------------------------------------- tidy tables


@pytest.fixture(scope="module")
def table():
    return fold_table(
        learners={"ht": 0.05, "nb": 0.0},
        policies={"ideal": 0.0, "hitl_7d_90d": 0.04, "hitl_30d_90d": 0.02},
        datasets=("d1", "d2", "d3", "d4"),
        seeds=(1, 2),
        folds=4,
        checkpoints=3,
    )


def test_rank_across_shapes_keys_and_values(table):
    out = rank_across(table, ["gmean", "fpr_1"])
    fr, sk = out.friedman, out.scott_knott
    assert list(fr.columns) == FRIEDMAN_COLUMNS
    assert list(sk.columns) == [*FAMILY, "treatment", "group", "rank", "median",
                                "mean_rank", "n", "note"]  # fmt: skip
    # learners within 3 policies and policies within 2 learners; x 2 references x 2 metrics
    assert len(fr) == 3 * 2 * 2 * 2 + 2 * 3 * 2 * 2 == len(sk)
    assert set(fr["at"]) == {"last"} and (fr["note"] == "").all() and (sk["note"] == "").all()
    assert set(fr["n"]) == {4}
    assert len(out.families()) == 3 * 2 * 2 + 2 * 2 * 2
    # learner ht is better everywhere: mean rank 1 within every policy, group 1
    lr = fr[(fr["ranked"] == "learner") & (fr["metric"] == "gmean")]
    assert set(lr.loc[lr["treatment"] == "ht", "mean_rank"]) == {1.0}
    lower = fr[(fr["ranked"] == "learner") & (fr["metric"] == "fpr_1")]
    assert set(lower.loc[lower["treatment"] == "ht", "mean_rank"]) == {1.0}  # fpr: lower is better
    # the value of a treatment on a dataset: its mean over folds and seeds at the last checkpoint
    last = table[table["checkpoint"] == table["checkpoint"].max()]
    sel = last[
        (last["learner"] == "ht") & (last["policy"] == "ideal") & (last["reference"] == "true")
    ]
    row = fr[
        (fr["ranked"] == "learner") & (fr["within"] == "ideal") & (fr["reference"] == "true")
        & (fr["metric"] == "gmean") & (fr["treatment"] == "ht")
    ]  # fmt: skip
    assert row["mean"].iloc[0] == pytest.approx(sel.groupby("dataset")["gmean"].mean().mean())
    # the Nemenyi table: one row per pair
    assert len(out.nemenyi) == 3 * 2 * 2 * 1 + 2 * 2 * 2 * 3
    key = ("policy", "ht", "true", "fading", "last", "gmean")
    result = out.result(key)
    assert set(result.treatments) == {"hitl_30d_90d", "hitl_7d_90d", "ideal"} and result.n == 4
    # the same numbers as friedman_nemenyi on the family's wide matrix
    last = table[table["checkpoint"] == table["checkpoint"].max()]
    sel = last[(last["learner"] == "ht") & (last["reference"] == "true")]
    wide = sel.groupby(["dataset", "policy"])["gmean"].mean().unstack("policy")
    direct = friedman_nemenyi(wide)
    assert result.statistic == pytest.approx(direct.statistic)
    assert result.cd == pytest.approx(direct.cd)
    pd.testing.assert_series_equal(
        result.mean_ranks.sort_index(), direct.mean_ranks.sort_index(), check_names=False
    )
    pd.testing.assert_frame_equal(
        result.nemenyi.loc[direct.treatments, direct.treatments], direct.nemenyi, check_names=False
    )
    sk = scott_knott_esd(wide)
    sks = out.scott_knott
    mine = sks[(sks["ranked"] == "policy") & (sks["within"] == "ht") & (sks["reference"] == "true")
               & (sks["metric"] == "gmean")]  # fmt: skip
    assert mine["treatment"].tolist() == sk["treatment"].tolist()
    assert mine["group"].tolist() == sk["group"].tolist()


def test_rank_across_notes_when_fewer_than_3_datasets_and_uses_at(table):
    two = table[table["dataset"].isin(["d1", "d2"])]
    out = rank_across(two, "gmean")
    assert out.friedman["note"].str.contains("2 datasets: the tests need at least 3").all()
    assert out.scott_knott["note"].str.contains("2 datasets").all()
    assert out.scott_knott["group"].isna().all() and out.nemenyi.empty
    assert out.friedman["mean_rank"].notna().all()
    # an `at` column aligns datasets whose checkpoints differ
    first = table[table["checkpoint"] == table["checkpoint"].min()].assign(at="500")
    out = rank_across(first, "gmean", ranked=["learner"])
    assert set(out.friedman["at"]) == {"500"} and (out.friedman["note"] == "").all()
    # a missing learner on one dataset: a note naming it, no test
    holey = table[
        ~((table["dataset"] == "d3") & (table["learner"] == "nb") & (table["policy"] == "ideal"))
    ]
    out = rank_across(holey, "gmean", ranked=["learner"])
    notes = out.friedman.loc[out.friedman["within"] == "ideal", "note"]
    assert notes.str.contains("no value for nb on d3").all()
    assert (out.friedman.loc[out.friedman["within"] != "ideal", "note"] == "").all()


def test_rank_within_over_folds(table):
    out = rank_within(table, "gmean", version="p")
    assert list(out.columns) == [*FAMILY, "dataset", "treatment", "group", "rank", "mean",
                                 "mean_rank", "n", "note"]  # fmt: skip
    # 4 datasets x (3 policies x 2 learners + 2 learners x 3 policies) x 2 references
    assert len(out) == 4 * (3 * 2 + 2 * 3) * 2
    assert set(out["n"]) == {8}  # 2 seeds x 4 folds
    assert (out["note"] == "").all() and out["group"].notna().all()


def test_rank_across_a_study_sized_table_ranks_every_family():
    """A study-sized table (17 treatments per family, 8 datasets, 5 checkpoints, 3 metrics): every
    family ranked, none with a note. (Its time: benchmarks/bench_compare_stage.py, against the
    compare stage in the same run.)"""
    big = fold_table(
        learners={"ht": 0.05, "nb": 0.0},
        policies={f"hitl_{w}d_90d": 0.01 * i for i, w in enumerate(range(1, 16))},
        datasets=tuple(f"d{i}" for i in range(8)),
        folds=10,
        checkpoints=5,
    )
    big = big.assign(at=big["checkpoint"].astype(str))
    out = rank_across(big, ["gmean", "fpr_1", "recall_1"])
    assert len(out.families()) == (15 + 2) * 2 * 5 * 3
    assert (out.friedman["note"] == "").all()
    assert out.scott_knott["group"].notna().all()


# --------------------------------------------------------------------------- figures

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def policies():
    rng = np.random.default_rng(1)
    names = ["ideal", "hitl_1d_90d", "hitl_7d_90d", "hitl_30d_90d", "auto_7d_7d", "auto_30d_30d"]
    return pd.DataFrame(
        rng.normal(size=(8, 6)) * 0.05 + np.linspace(0.8, 0.6, 6),
        columns=names,
        index=[f"d{i}" for i in range(8)],
    )


def test_cd_diagram_draws_the_mean_ranks_the_cd_and_the_bars(policies, tmp_path):
    from matplotlib.colors import to_hex

    from delaycv.figures.rankings import cd_diagram
    from delaycv.figures.style import save_figure

    result = friedman_nemenyi(policies)
    fig = cd_diagram(result, title="gmean, policies within ht")
    ax = fig.axes[0]
    # one marker per treatment at its mean rank, on the axis (y = 0)
    offsets = np.concatenate([c.get_offsets() for c in ax.collections])
    assert sorted(offsets[:, 0]) == pytest.approx(sorted(result.mean_ranks))
    assert (offsets[:, 1] == 0).all()
    texts = [t.get_text() for t in ax.texts]
    for name, rank in result.mean_ranks.items():
        assert any(name in t and f"{rank:.2f}" in t for t in texts), name
    assert f"CD = {result.cd:.2f}" in texts
    # the CD drawn from rank 1; a bar per maximal set of treatments within CD of each other
    lines = [ln for ln in ax.get_lines() if ln.get_ydata()[0] == ln.get_ydata()[-1]]
    cd_line = [ln for ln in lines if list(ln.get_xdata()) == pytest.approx([1, 1 + result.cd])]
    assert len(cd_line) == 1
    bars = [ln for ln in lines if ln.get_ydata()[0] < 0 and len(ln.get_xdata()) >= 2
            and to_hex(ln.get_color()) == "#444444"]  # fmt: skip
    ranks = result.mean_ranks
    for bar in bars:
        xs = np.asarray(bar.get_xdata())
        assert xs.max() - xs.min() < result.cd  # treatments under a bar are within CD
    within = {(a, b) for a in ranks.index for b in ranks.index
              if a < b and abs(ranks[a] - ranks[b]) < result.cd}  # fmt: skip
    covered = set()
    for bar in bars:
        names = [t for t in ranks.index if ranks[t] in list(bar.get_xdata())]
        covered |= {(a, b) for a in names for b in names if a < b}
    assert covered == within
    title = " ".join(fig._suptitle.get_text().split())  # (wrapped)
    assert not result.permutation_exact  # 8 datasets, 5 policies: (5!)**8 permutations
    assert (
        f"p = {result.p_value:.3g} (chi-square), {result.p_permutation:.3g} (permutation, random)"
        in title
    )
    paths = save_figure(fig, tmp_path / "cd", ["png", "pdf"], 100)
    assert paths[0].read_bytes().startswith(PNG) and paths[1].read_bytes().startswith(b"%PDF")
    with pytest.raises(DelaycvError, match="2 datasets"):
        cd_diagram(friedman_nemenyi(policies.iloc[:2]))


def test_a_cd_diagram_of_many_treatments_writes_every_name_in_black():
    """15 policies: no colour repeats and no name is pale yellow on white (every name, its rank
    and its line are black)."""
    from matplotlib.colors import to_hex

    from delaycv.figures.rankings import cd_diagram

    rng = np.random.default_rng(2)
    names = [f"policy_{i}" for i in range(15)]
    values = pd.DataFrame(
        rng.normal(size=(8, 15)) * 0.05 + np.linspace(0.8, 0.5, 15), columns=names
    )
    ax = cd_diagram(friedman_nemenyi(values)).axes[0]
    labels = [t for t in ax.texts if t.get_text().split(" ")[0].strip("()") in names
              or t.get_text().split(" ")[-1] in names]  # fmt: skip
    assert len(labels) == 15
    assert {to_hex(t.get_color()) for t in labels} == {"#000000"}
    elbows = [ln for ln in ax.get_lines() if len(ln.get_xdata()) == 3]
    assert len(elbows) == 15 and {to_hex(ln.get_color()) for ln in elbows} == {"#000000"}


def test_the_rankings_say_a_requested_position_in_words(table, tmp_path, monkeypatch):
    """The figures' titles and the page's headings read "at position 5000", never the key
    position_5000."""
    import delaycv.figures.rankings as drawing
    from delaycv.report.statistics import rankings_html

    rows = table[table["checkpoint"] == table["checkpoint"].max()].assign(at="position_5000")
    out = rank_across(rows, ["gmean"], ranked=["policy"])
    page = rankings_html(out.friedman, out.scott_knott, title="r")
    assert "gmean on observed labels at position 5000: policies within ht" in page
    titles = []
    monkeypatch.setattr(
        drawing, "save_figure", lambda fig, *args: titles.append(fig._suptitle.get_text()) or []
    )
    drawing.draw_ranking_figures(rows, out, tmp_path, metric="gmean", reference="observed")
    assert titles and all("observed labels, at position 5000\n" in t for t in titles), titles
    assert not any("position_5000" in t for t in [page, *titles])


def test_sk_boxplot_orders_by_group_and_annotates_groups(policies, tmp_path):
    from matplotlib.colors import to_hex

    from delaycv.figures.rankings import sk_boxplot
    from delaycv.figures.style import JITTER, PALETTE, save_figure

    groups = scott_knott_esd(policies)
    # make two treatments share a group, to see one boundary fewer
    groups.loc[1, "group"] = 1
    groups.loc[2:, "group"] -= 1
    fig = sk_boxplot(policies, groups, title="gmean", ylabel="gmean (fraction)")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == groups["treatment"].tolist()
    assert [t.get_text() for t in ax.texts] == [str(g) for g in groups["group"]]
    # one point per observation, at the data values, coloured by group
    for i, (name, group) in enumerate(zip(groups["treatment"], groups["group"], strict=True)):
        pts = ax.collections[i].get_offsets()
        assert sorted(pts[:, 1]) == pytest.approx(sorted(policies[name]))
        assert (np.abs(pts[:, 0] - i) <= JITTER).all()
        assert to_hex(ax.collections[i].get_facecolor()[0]) == PALETTE[group - 1].lower()
    vlines = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
    assert len(vlines) == groups["group"].nunique() - 1
    assert "Scott-Knott ESD: 5 groups" in fig._suptitle.get_text()
    paths = save_figure(fig, tmp_path / "sk", ["png"], 100)
    assert paths[0].read_bytes().startswith(PNG)
    # the same inputs draw the same file
    again = save_figure(
        sk_boxplot(policies, groups, title="gmean", ylabel="gmean (fraction)"),
        tmp_path / "sk2",
        ["png"],
        100,
    )
    assert again[0].read_bytes() == paths[0].read_bytes()
    with pytest.raises(DelaycvError, match="no values of treatments"):
        sk_boxplot(policies.drop(columns="ideal"), groups)


# --------------------------------------------------------------------------- report tables


def test_rankings_html_tables(table):
    from delaycv.report.statistics import rankings_html

    out = rank_across(table, ["gmean", "fpr_1"], ranked=["policy"])
    page = rankings_html(
        out.friedman, out.scott_knott, title="Rankings <x>", metrics=["fpr_1", "gmean"]
    )
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    assert "Rankings &lt;x&gt;" in page
    heads = [h.split("</h2>")[0] for h in page.split("<h2>")[1:]]
    # policies within 2 learners x 2 references x 2 metrics, fpr_1 first
    assert len(heads) == 8 and all(h.startswith("fpr_1") for h in heads[:4])
    assert heads[0] == (
        "fpr_1 on observed labels at the last checkpoint: policies within ht (fading estimator; "
        "lower is better)"
    )
    first = page.split("<h2>")[1]
    fam = out.friedman[(out.friedman["metric"] == "fpr_1") & (out.friedman["within"] == "ht")
                       & (out.friedman["reference"] == "observed")]  # fmt: skip
    row = fam.iloc[0]
    assert f"Friedman chi2 = {row['statistic']:.2f}" in first and f"CD = {row['cd']:.2f}" in first
    how = "exact" if row["permutation_exact"] else "random"
    assert (
        f"p = {row['p_value']:.3f} (chi-square), {row['p_permutation']:.3f} (permutation, {how})"
        in first
    )
    # rows best first: treatment, mean rank, rank, mean, SK-ESD group, median
    cells = first.split("<tbody>")[1].split("</tr>")[0]
    assert f"<td>{row['treatment']}</td>" in cells and f">{row['mean_rank']:.2f}<" in cells
    assert "<th>SK-ESD group</th>" in first and "<th>median (SK-ESD)</th>" in first
    # fewer than 3 datasets: the note instead of the test
    few = rank_across(table[table["dataset"] != "d1"].query("dataset != 'd2'"), "gmean")
    page = rankings_html(few.friedman, few.scott_knott, title="few")
    assert "No test: 2 datasets: the tests need at least 3." in page
    assert "Friedman chi2" not in page
    # within datasets: the Scott-Knott ESD table alone, a section per dataset
    within = rank_within(table, "gmean", ranked=["learner"])
    page = rankings_html(scott_knott=within, title="within")
    assert page.count("<h2>") == 4 * 3 * 2
    assert (
        "<h2>d1: gmean on observed labels at the last checkpoint: learners within hitl_30d_90d"
        in page
    )
    assert "Scott-Knott ESD over 8 (seed, fold) pairs." in page
    assert '<tr class="sig"><td>ht</td>' in page  # the best group in bold


# --------------------------------------------------------------------------- the HITL study's folds

STUDY = SHARED / "reference" / "hitl-study"


@pytest.mark.realdata
def test_the_hitl_study_s_folds_rank_ideal_first():
    path = STUDY / "folds.csv.gz"
    if not path.is_file():
        pytest.skip(f"the HITL study's numbers are not available: {path}")
    folds = pd.read_csv(path).rename(columns={"project": "dataset"})
    folds = folds.assign(learner="HoeffdingTree", seed=1, reference="observed", estimator="fading")
    out = rank_across(folds, ["gmean", "fpr_1"], ranked=["policy"])
    assert (out.friedman["note"] == "").all() and set(out.friedman["n"]) == {8}
    last = out.friedman[
        (out.friedman["at"] == "fraction_1.0") & (out.friedman["metric"] == "gmean")
    ]
    assert last.iloc[0]["treatment"] == "ideal" and last.iloc[0]["mean_rank"] == 1.0
    sk = out.scott_knott[(out.scott_knott["at"] == "fraction_1.0")]
    best = sk[(sk["metric"] == "gmean") & (sk["group"] == 1)]
    assert best["treatment"].tolist() == ["ideal"]
    within = rank_within(folds[folds["at"] == "fraction_1.0"], "gmean", ranked=["policy"])
    assert set(within["n"]) == {10} and within["group"].notna().all()


# --------------------------------------------------------------------------- the workflow's figures


def test_family_values_hand_computed():
    rows = []
    # (dataset, learner, seed, fold, gmean) at the last checkpoint of policy ideal, reference true
    values = {
        ("d1", "a"): [0.5, 0.7, 0.9, 0.3],
        ("d1", "b"): [0.2, 0.4, 0.4, 0.2],
        ("d2", "a"): [1.0, 0.0, 0.5, 0.5],
        ("d2", "b"): [0.6, float("nan"), 0.6, 0.9],
    }
    for (dataset, learner), folds in values.items():
        for i, v in enumerate(folds):
            seed, fold = divmod(i, 2)
            base = {"dataset": dataset, "learner": learner, "seed": seed, "fold": fold,
                    "estimator": "fading", "checkpoint": 1000}  # fmt: skip
            rows.append({**base, "policy": "ideal", "reference": "true", "gmean": v})
            # rows the family leaves out: another policy, reference, earlier checkpoint
            rows.append({**base, "policy": "delay", "reference": "true", "gmean": 9.0})
            rows.append({**base, "policy": "ideal", "reference": "observed", "gmean": 9.0})
            rows.append({**base, "policy": "ideal", "reference": "true", "gmean": 9.0,
                         "checkpoint": 500})  # fmt: skip
    table = pd.DataFrame(rows)
    family = {"ranked": "learner", "within": "ideal", "reference": "true",
              "estimator": "fading", "at": "last", "metric": "gmean"}  # fmt: skip
    wide = family_values(table, family)
    # means over the 2 seeds x 2 folds, a NaN skipped: (0.6 + 0.6 + 0.9) / 3 = 0.7
    expected = pd.DataFrame(
        {"a": [0.6, 0.5], "b": [0.3, 0.7]}, index=pd.Index(["d1", "d2"], name="dataset")
    )
    pd.testing.assert_frame_equal(wide, expected, check_exact=False, atol=1e-12)
    # an `at` column chooses the rows; a policy family ranks the policies within the learner
    labelled = table[table["checkpoint"] == 1000].assign(at="position_900")
    policies = family_values(
        labelled, {**family, "ranked": "policy", "within": "a", "at": "position_900"}
    )
    assert list(policies.columns) == ["delay", "ideal"] and list(policies.index) == ["d1", "d2"]
    assert (policies["delay"] == 9.0).all()
    np.testing.assert_allclose(policies["ideal"], expected["a"])


def test_draw_ranking_figures_names_only_tested_families_and_same_bytes(table, tmp_path):
    from delaycv.figures.rankings import draw_ranking_figures

    # learner nb has no value under policy ideal on d3: the families of learners within ideal and
    # of policies within nb carry a note, and get no figure
    holey = table[
        ~((table["dataset"] == "d3") & (table["learner"] == "nb") & (table["policy"] == "ideal"))
    ]
    out = rank_across(holey, ["gmean", "fpr_1"])
    noted = out.friedman[out.friedman["note"] != ""]
    assert set(zip(noted["ranked"], noted["within"], strict=True)) == {
        ("learner", "ideal"),
        ("policy", "nb"),
    }
    runs = []
    for name in ("one", "two"):
        paths = draw_ranking_figures(
            holey, out, tmp_path / name, metric="gmean", reference="observed",
            formats=("png", "pdf"), dpi=40,
        )  # fmt: skip
        assert all(p.parent == tmp_path / name for p in paths)
        runs.append({p.name: p.read_bytes() for p in paths})
    stems = [
        "learner_hitl_30d_90d_last_gmean",
        "learner_hitl_7d_90d_last_gmean",
        "policy_ht_last_gmean",
    ]
    expected = {
        f"{kind}_{s}.{fmt}" for s in stems for kind in ("cd", "sk") for fmt in ("png", "pdf")
    }
    assert set(runs[0]) == expected == {p.name for p in (tmp_path / "one").iterdir()}
    assert runs[0].keys() == runs[1].keys()
    assert sorted(n for n in runs[0] if runs[0][n] != runs[1][n]) == []
    assert all(data.startswith(PNG) for n, data in runs[0].items() if n.endswith(".png"))
    assert all(b"CreationDate" not in d for n, d in runs[0].items() if n.endswith(".pdf"))
    # fewer than 3 datasets: every family has a note, no figure at all
    two = holey[holey["dataset"].isin(["d1", "d2"])]
    none = draw_ranking_figures(
        two, rank_across(two, "gmean"), tmp_path / "none", metric="gmean",
        reference="observed", formats=("png",), dpi=40,
    )  # fmt: skip
    assert none == [] and not any((tmp_path / "none").glob("*"))
    # two estimators in the table: the estimator joins the file name
    both = pd.concat([table, table.assign(estimator="cumulative")], ignore_index=True)
    paths = draw_ranking_figures(
        both, rank_across(both, "gmean", ranked=["policy"]), tmp_path / "est",
        metric="gmean", reference="true", formats=("png",), dpi=40,
    )  # fmt: skip
    assert {p.name for p in paths} == {
        f"{kind}_policy_{learner}_last_gmean_{est}.png"
        for kind in ("cd", "sk")
        for learner in ("ht", "nb")
        for est in ("cumulative", "fading")
    }


def test_a_treatment_with_no_value_is_reported_not_dropped():
    """The HITL study's mindspore under hitl_60d_90d at commit 1000: no negative label released in
    any fold yet, so its FPR is undefined everywhere. It is a row with a note in every table (the
    other treatments are ranked as before), and a family where no treatment has a value fails
    nothing (it was an IndexError in the partition)."""
    rows = []
    for d, dataset in enumerate(["a", "b", "c"]):
        for p, policy in enumerate(["ideal", "hitl_1d_15d", "hitl_90d_90d"]):
            for fold in range(4):
                fpr = np.nan if policy == "hitl_90d_90d" else 0.1 * p + 0.01 * fold + 0.001 * d
                rows.append(
                    dict(dataset=dataset, learner="ht", policy=policy, seed=1, fold=fold,
                         reference="observed", estimator="fading", checkpoint=1000, fpr_1=fpr)
                )  # fmt: skip
    table = pd.DataFrame(rows)
    across = rank_across(table, ["fpr_1"], ranked=("policy",))
    noted = across.friedman[across.friedman["treatment"] == "hitl_90d_90d"]
    assert len(noted) == 1 and noted["note"].item().startswith("no value at any dataset")
    tested = across.friedman[across.friedman["treatment"] != "hitl_90d_90d"]
    assert (tested["note"] == "").all() and tested["p_value"].notna().all()
    assert across.result(across.families()[0]).treatments == ("ideal", "hitl_1d_15d")
    sk = across.scott_knott.set_index("treatment")
    assert pd.isna(sk.loc["hitl_90d_90d", "group"]) and sk.loc["ideal", "group"] == 1
    within = rank_within(table, ["fpr_1"], ranked=("policy",)).set_index("treatment")
    assert within.loc["hitl_90d_90d", "note"].str.startswith("no value at any (seed, fold)").all()
    assert within.loc["ideal", "group"].notna().all()
    # no treatment with a value: rows with notes, no failure
    empty = table.assign(fpr_1=np.nan)
    within = rank_within(empty, ["fpr_1"], ranked=("policy",))
    assert len(within) == 3 * 3 and within["group"].isna().all()
    across = rank_across(empty, ["fpr_1"], ranked=("policy",))
    assert len(across.friedman) == 3 and across.friedman["note"].str.startswith("no value").all()


CD_SCRIPT = """
import sys
import numpy as np, pandas as pd
from delaycv.figures.rankings import cd_diagram
from delaycv.figures.style import save_figure
from delaycv.stats.friedman import friedman_nemenyi
rng = np.random.default_rng(1)
names = ["ideal", "hitl_1d_90d", "hitl_7d_90d", "hitl_30d_90d", "auto_7d_7d", "auto_30d_30d"]
values = rng.normal(size=(8, 6)) * 0.05 + np.linspace(0.8, 0.6, 6)
table = pd.DataFrame(values, columns=names, index=[f"d{i}" for i in range(8)])
save_figure(cd_diagram(friedman_nemenyi(table), title="t"), sys.argv[1], ["png"], 80)
"""


def test_the_cd_diagram_is_the_same_file_under_any_hash_seed(tmp_path):
    """The bars come from sets of treatment names (scikit-posthocs); a str's hash is salted per
    process, yet the diagram's PNG is byte-identical across PYTHONHASHSEED values."""
    import os
    import subprocess
    import sys

    files = []
    for seed in ("0", "1", "2"):
        stem = tmp_path / f"cd{seed}"
        env = dict(os.environ, PYTHONHASHSEED=seed)
        done = subprocess.run([sys.executable, "-c", CD_SCRIPT, str(stem)], env=env, text=True,
                              capture_output=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr
        files.append(stem.with_suffix(".png").read_bytes())
    assert files[0] == files[1] == files[2]


def test_effort_pci_20_has_no_direction_and_is_not_ranked(tmp_path, capsys):
    """A context measure: ``delaycv rank`` refuses it in one line naming it, before reading any
    table; a test of it says which learner is higher, not better."""
    from delaycv.cli import main
    from delaycv.metrics.effort_names import EFFORT_METRICS
    from delaycv.metrics.properties import has_direction, higher_is_better

    assert [m for m in EFFORT_METRICS if not has_direction(m)] == ["effort_pci_20"]
    assert [m for m in EFFORT_METRICS if has_direction(m) and not higher_is_better(m)] == [
        "effort_at_recall_20",
        "ifa",
    ]
    out = tmp_path / "ranked"
    status = main(
        ["rank", str(tmp_path / "none.parquet"), "--metric", "effort_pci_20", "--out", str(out)]
    )
    err = capsys.readouterr().err
    assert status == 2 and not out.exists()
    assert err.startswith(
        "delaycv: error: option --metric: metric 'effort_pci_20' has no direction"
    )
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("version", ["np", "p"])
def test_within_a_seed_that_repeats_an_earlier_seed_counts_once(version):
    """Learners that ignore their seed, under folds every seed shares (cv): seed 2's values are
    seed 1's. Scott-Knott ESD within the dataset ranks the 5 distinct pairs, as the paired tests
    count them, and gives what one seed gives (10 observations of 5 values would make its
    Kruskal-Wallis or ANOVA see differences twice as surely); a seed that differs is kept."""
    one = fold_table(learners={"a": 0.02, "b": 0.0, "c": -0.02}, folds=5, checkpoints=2, noise=0.03)
    one = one[one["policy"] == "ideal"]
    twice = pd.concat([one, one.assign(seed=2)], ignore_index=True)
    alone = rank_within(one, "gmean", ranked=("learner",), version=version)
    doubled = rank_within(twice, "gmean", ranked=("learner",), version=version)
    columns = ["reference", "at", "treatment", "group", "n"]
    pd.testing.assert_frame_equal(doubled[columns], alone[columns])
    assert set(doubled["n"]) == {5}
    assert set(doubled["note"]) == {
        "5 (seed, fold) pairs counted once: their seed repeats an earlier seed's values"
    }
    other = one.assign(seed=2, gmean=one["gmean"] + 0.001)
    kept = rank_within(pd.concat([one, other]), "gmean", ranked=("learner",), version=version)
    assert set(kept["n"]) == {10} and set(kept["note"]) == {""}
    # the page gives the groups with the note beside them (it said "No test: ..." above groups)
    from delaycv.report.statistics import rankings_html

    page = rankings_html(scott_knott=doubled, title="within")
    assert (
        "<p>Scott-Knott ESD over 5 (seed, fold) pairs (5 (seed, fold) pairs counted once: their "
        "seed repeats an earlier seed&#x27;s values).</p>"
    ) in page
    assert "No test" not in page
    # a note that replaces the groups is still said as such
    few = rank_within(one, "gmean", ranked=("learner",), version=version, min_observations=6)
    assert "No test: 5 complete (seed, fold) pairs: Scott-Knott ESD needs at least 6." in (
        rankings_html(scott_knott=few, title="few")
    )


def test_rankings_at_every_checkpoint_draw_each_figure_once(table, tmp_path):
    """Ranked at every checkpoint (tests.checkpoints: all), the stage drew the figures of every
    family at every checkpoint: 9,980 files in 14 minutes for three Commit Guru projects with a
    checkpoint every 50. The tables keep every checkpoint; the figures are drawn once per kind of
    family, at its last checkpoint ranked on the most datasets."""
    from delaycv.stages.rankings import rankings
    from delaycv.stats.settings import make_ranking_settings

    merged = []
    for dataset, rows in table.groupby("dataset"):
        if dataset == "d4":  # one dataset shorter: its last checkpoint is ranked on 3, not 4
            rows = rows[rows["checkpoint"] < rows["checkpoint"].max()]
        rows.to_parquet(tmp_path / f"{dataset}.parquet", index=False)
        merged.append(tmp_path / f"{dataset}.parquet")
    settings = make_ranking_settings(
        metrics=["gmean"], references=["true"], checkpoints="all", formats=["png"], dpi=30
    )
    said = []
    result = rankings(merged, tmp_path / "out", settings, progress=said.append)
    checkpoints = sorted(table["checkpoint"].unique())
    assert set(result.across.friedman["at"]) == {f"checkpoint_{c}" for c in checkpoints}
    names = sorted(path.name for path in result.figures)
    second_last = f"checkpoint_{checkpoints[-2]}"  # the last one the four datasets share
    assert names and all(f"_{second_last}_" in name for name in names), names
    kinds = result.across.friedman.drop_duplicates(["ranked", "within"])
    assert len(names) == 2 * len(kinds)  # a critical-difference diagram and a box plot of each
    assert any("at each family's last checkpoint ranked on the most datasets" in s for s in said)
    # at the last checkpoint (the default), every family's figures, as before
    settings = make_ranking_settings(
        metrics=["gmean"], references=["true"], checkpoints="last", formats=["png"], dpi=30
    )
    assert rankings(merged, tmp_path / "last", settings).figures
