"""Ranking learners or policies across datasets (issue 21 §3; pure, opens no files).

Two families of rankings, both over a wide matrix of one row per observation and one column per
treatment (a learner, or a policy):

Friedman test, Nemenyi post-hoc, critical difference (Demšar 2006)
    Blocks are datasets (value: the mean over folds and seeds). In each block the k treatments are
    ranked, 1 = best (a lower-is-better metric ranks ascending), ties averaged; ``R_j`` is the mean
    rank of treatment j over the N blocks. Friedman's statistic (scipy's ``friedmanchisquare``, with
    its tie correction) is ``chi2 = 12N / (k(k+1)) * sum_j (R_j - (k+1)/2)**2`` on k - 1 degrees of
    freedom. The Nemenyi p-values of every pair come from scikit-posthocs
    (``posthoc_nemenyi_friedman``: ``|R_i - R_j| / sqrt(k(k+1)/(6N))`` referred to the studentized
    range with k means and infinite degrees of freedom, times sqrt 2). Two treatments differ when
    their mean ranks differ by more than the critical difference
    ``CD = q_alpha * sqrt(k(k+1)/(6N))`` with ``q_alpha`` the (1 - alpha) quantile of the
    studentized range (k, inf) over sqrt 2 (Demšar's table: k = 4, alpha = 0.05 gives 2.569).
    With fewer than 3 blocks or 2 treatments there is no test: the result carries a ``note``.

Scott-Knott ESD (ScottKnottESD, Tantithamthavorn et al., TSE 2018)
    Followed from the R package's source on GitHub, klainfo/ScottKnottESD, its development branch
    (version 3.0.0, "pending approval to be available in CRAN" in its README; the copy read did
    not record its commit): ``R/partition.R`` (``PartitionNonParametric``,
    ``PartitionParametric``), ``R/sk_esd.R`` (``sk_esd(x, version = "np", alpha = 0.05)``)
    and ``R/m.inf.1a.R``; v3's ``R/scottknott.R`` (the dispatch between the two) was not available,
    so the order in which its groups are labelled is taken from v2's (see below). The treatments are
    sorted, best first, by median (``version="np"``) or mean (``"p"``). A segment of that order
    (at first all of it) is one group when the effect size between **its first and its last
    treatment** is negligible (``np``: Cliff's ``|delta| < 0.147``; ``p``: Cohen's ``|d| < 0.2``,
    pooled standard deviation, unpaired). Otherwise it is cut in two where the cut scores highest
    and each part is partitioned the same way, the better part first; groups are numbered in the
    order they are made, so group 1 holds the best treatments. The score of a cut:

    * ``np``: the Kruskal-Wallis H statistic (with tie correction) of all observations, where the
      segment's treatments left of the cut form one group, those right of it another, and every
      treatment outside the segment stays a group of its own (the R code relabels only the
      segment's rows before calling ``kruskal.test``);
    * ``p``: Scott and Knott's between-groups sum of squares of the treatment means,
      ``T1**2/k1 + T2**2/k2 - (T1 + T2)**2/(k1 + k2)`` (T: sums of the means left and right).

    The first cut with the largest score wins (R's ``order(..., decreasing=TRUE)[1]``).

    Where the package's README and its code differ: the README says a split is kept when *any
    pair* of treatments across the two sides differs non-negligibly; the code's ``diff()`` compares
    ``means[k]`` and ``means[g]``, the segment's two extremes (the ``np`` path loops over the pairs
    but looks at those two every time), and only decides whether to cut at all, not between the
    two sides of the chosen cut. This module does what the code does. Other details of the code
    reproduced: no transformation of the data (the package's ``normalize()`` is a separate
    function); the effect sizes are unpaired (the ``paired=TRUE`` in the code goes to
    ``as.character``); ``p`` treats two identical samples as negligible. Not reproduced: R orders
    tied medians (means) by column position, and ``sk_esd`` names the groups with the rows of the
    treatment table, which ``scottknott`` sorts by *mean* (v3.0.0's ``R/scottknott.R``, read at the
    package's HEAD), while the ``np`` partition is built in *median* order: R prints the groups on
    the wrong treatments whenever the two orders differ (:func:`r_np_group_names` gives what R
    prints); here ties are broken by the other average (mean for ``np``, median for ``p``), then
    by name, and every group is attached to the treatments the partition put in it, so the order
    of the columns never changes the groups.

Everything is oriented so that 1 is best: a lower-is-better metric (``delaycv.stats.compare.
higher_is_better``) is negated before ranking and partitioning; the tables report the values as
measured.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from delaycv.common.errors import DelaycvError
from delaycv.stats.compare import (
    RELEASE_COLUMN,
    cliffs_delta,
    higher_is_better,
    last_checkpoints,
    policy_ranks,
)

#: Cliff's |delta| below this is negligible (Romano et al. 2006; R's effsize::cliff.delta).
CLIFF_NEGLIGIBLE = 0.147
#: Cohen's |d| below this is negligible (Cohen 1992; R's effsize::cohen.d).
COHEN_NEGLIGIBLE = 0.2
#: Fewest blocks (datasets) the Friedman test and the across-dataset Scott-Knott ESD need.
MIN_BLOCKS = 3
VERSIONS = ("np", "p")
#: Keys of a ranking family besides the ranked treatments (rank_across / rank_within tables).
FAMILY = ("ranked", "within", "reference", "estimator", "at", "metric")


# --------------------------------------------------------------------------- helpers


def _check_complete(values: pd.DataFrame, what: str = "block") -> None:
    """Refuse a missing cell, naming the row and the treatment."""
    missing = values.isna().to_numpy()
    if missing.any():
        i, j = np.argwhere(missing)[0]
        raise DelaycvError(
            f"no value for treatment {values.columns[j]!r} in {what} {values.index[i]!r} "
            f"({int(missing.sum())} missing cells; every {what} needs a value of every treatment)"
        )


def block_ranks(values: np.ndarray, *, higher_is_better: bool = True) -> np.ndarray:
    """Ranks of the treatments (columns) within each block (row), 1 = best, ties averaged.

    >>> block_ranks(np.array([[0.9, 0.7, 0.7]])).tolist()
    [[1.0, 2.5, 2.5]]
    >>> block_ranks(np.array([[0.9, 0.7, 0.8]]), higher_is_better=False).tolist()
    [[3.0, 1.0, 2.0]]
    """
    values = np.asarray(values, dtype=np.float64)
    oriented = -values if higher_is_better else values
    return stats.rankdata(oriented, axis=1, method="average")


@functools.lru_cache(maxsize=256)
def q_alpha(k: int, alpha: float = 0.05) -> float:
    """Demšar's q_alpha: the (1 - alpha) quantile of the studentized range of k means (infinite
    degrees of freedom) over sqrt 2.

    >>> round(q_alpha(4, 0.05), 3), round(q_alpha(10, 0.10), 3)
    (2.569, 2.92)
    """
    return float(stats.studentized_range.ppf(1.0 - alpha, k, np.inf) / math.sqrt(2.0))


def critical_difference(k: int, n: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference of mean ranks, ``q_alpha * sqrt(k(k+1)/(6N))``.

    >>> round(critical_difference(4, 14, 0.05), 3)
    1.254
    """
    return q_alpha(k, alpha) * math.sqrt(k * (k + 1) / (6.0 * n))


def cohens_d(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's d of ``a`` against ``b`` with the pooled standard deviation
    ``sqrt(((n_a - 1) s_a**2 + (n_b - 1) s_b**2) / (n_a + n_b - 2))`` (R's effsize::cohen.d with
    its defaults). Zero pooled spread gives 0 for equal means and ±inf otherwise.

    >>> round(cohens_d(np.array([1.0, 2.0, 3.0]), np.array([2.0, 3.0, 4.0])), 3)
    -1.0
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    na, nb = len(a), len(b)
    diff = float(a.mean() - b.mean())
    dof = na + nb - 2
    ss = (na - 1) * (a.var(ddof=1) if na > 1 else 0.0) + (nb - 1) * (
        b.var(ddof=1) if nb > 1 else 0.0
    )
    pooled = math.sqrt(ss / dof) if dof > 0 else 0.0
    if pooled == 0.0:
        return 0.0 if diff == 0.0 else math.copysign(math.inf, diff)
    return diff / pooled


# --------------------------------------------------------------------------- Friedman / Nemenyi


@dataclass(frozen=True)
class FriedmanResult:
    """Friedman's test over blocks with the Nemenyi post-hoc and the critical difference.

    ``mean_ranks`` (index: treatment, in the input's column order; 1 = best) and ``means`` (the
    mean value over blocks) are given whenever there is at least one block; ``statistic``,
    ``p_value``, ``cd`` and ``nemenyi`` (k x k p-values, 1 on the diagonal) only when there is a
    test (``note`` empty), else NaN / an empty frame and ``note`` says why."""

    treatments: tuple[str, ...]
    k: int
    n: int
    statistic: float
    p_value: float
    mean_ranks: pd.Series
    means: pd.Series
    nemenyi: pd.DataFrame
    cd: float
    alpha: float
    higher_is_better: bool
    note: str = ""
    blocks: tuple = field(default=())

    @property
    def tested(self) -> bool:
        return not self.note

    def table(self) -> pd.DataFrame:
        """One row per treatment, best mean rank first: ``treatment``, ``mean_rank``, ``rank``
        (1 = best; tied mean ranks share the smaller rank), ``mean``, ``k``, ``n``, ``statistic``,
        ``p_value``, ``cd``, ``note``."""
        out = pd.DataFrame(
            {
                "treatment": list(self.treatments),
                "mean_rank": self.mean_ranks.to_numpy(dtype=np.float64),
                "mean": self.means.to_numpy(dtype=np.float64),
            }
        )
        out["rank"] = out["mean_rank"].rank(method="min").astype("Int64")
        out = out.sort_values(["mean_rank", "treatment"], kind="stable").reset_index(drop=True)
        out["k"] = self.k
        out["n"] = self.n
        out["statistic"] = self.statistic
        out["p_value"] = self.p_value
        out["cd"] = self.cd
        out["note"] = self.note
        return out[FRIEDMAN_COLUMNS[len(FAMILY) :]]


def _friedman_statistic(ranks: np.ndarray) -> float:
    """Friedman's chi-square with scipy's tie correction from within-block ranks (n x k). When
    every block ties all treatments (the correction is 0: scipy divides by zero) there is no
    difference to see: 0 (p = 1)."""
    n, k = ranks.shape
    if (ranks == ranks[:, :1]).all():
        return 0.0
    if k >= 3:
        return float(stats.friedmanchisquare(*ranks.T).statistic)
    # scipy needs 3 treatments; the same formula for k = 2
    ssbn = float((ranks.sum(axis=0) ** 2).sum())
    ties = 0.0
    for row in ranks:
        _, counts = np.unique(row, return_counts=True)
        ties += float((counts**3 - counts).sum())
    c = 1.0 - ties / (k * (k * k - 1) * n)
    return (12.0 / (n * k * (k + 1)) * ssbn - 3.0 * n * (k + 1)) / c if c > 0 else math.nan


def _no_test_note(k: int, n: int) -> str:
    if k < 2:
        return f"{k} treatment{'s' if k != 1 else ''}: nothing to rank"
    if n < MIN_BLOCKS:
        return f"{n} dataset{'s' if n != 1 else ''}: the tests need at least {MIN_BLOCKS}"
    return ""


def _friedman_core(matrix: np.ndarray, alpha: float, up: bool) -> dict:
    """The numbers of :func:`friedman_nemenyi` from a complete (n blocks x k) array."""
    n, k = matrix.shape
    if n >= 1 and k >= 1:
        ranks = block_ranks(matrix, higher_is_better=up)
        mean_ranks, means = ranks.mean(axis=0), matrix.mean(axis=0)
    else:
        ranks = np.empty((n, k))
        mean_ranks = means = np.full(k, np.nan)
    out = {
        "mean_ranks": mean_ranks,
        "means": means,
        "statistic": math.nan,
        "p_value": math.nan,
        "nemenyi": None,
        "cd": math.nan,
        "note": _no_test_note(k, n),
    }
    if out["note"]:
        return out
    import scikit_posthocs as sp  # import on use: the library's other users do not need it

    statistic = _friedman_statistic(ranks)
    out["statistic"] = statistic
    out["p_value"] = (
        float(stats.chi2.sf(statistic, k - 1)) if math.isfinite(statistic) else math.nan
    )
    out["nemenyi"] = sp.posthoc_nemenyi_friedman(ranks).to_numpy()
    out["cd"] = critical_difference(k, n, alpha)
    return out


def _result(core: dict, treatments, blocks, alpha: float, up: bool) -> FriedmanResult:
    names = [str(t) for t in treatments]
    nemenyi = (
        pd.DataFrame(core["nemenyi"], index=names, columns=names)
        if core["nemenyi"] is not None
        else pd.DataFrame()
    )
    return FriedmanResult(
        tuple(names),
        len(names),
        len(blocks),
        core["statistic"],
        core["p_value"],
        pd.Series(core["mean_ranks"], index=names, dtype=np.float64),
        pd.Series(core["means"], index=names, dtype=np.float64),
        nemenyi,
        core["cd"],
        alpha,
        up,
        core["note"],
        tuple(blocks),
    )


def friedman_nemenyi(
    values: pd.DataFrame, *, alpha: float = 0.05, higher_is_better: bool = True
) -> FriedmanResult:
    """Friedman's test, the Nemenyi p-values and the critical difference on ``values`` (one row
    per block, e.g. a dataset; one column per treatment; no missing cell: a DelaycvError names
    the first). Fewer than 2 treatments or 3 blocks: no test, a ``note`` says why.

    >>> v = pd.DataFrame({"a": [0.9, 0.8, 0.7, 0.9], "b": [0.8, 0.7, 0.6, 0.7],
    ...                   "c": [0.7, 0.6, 0.5, 0.8]}, index=["d1", "d2", "d3", "d4"])
    >>> r = friedman_nemenyi(v)
    >>> r.mean_ranks.tolist(), r.statistic, round(r.cd, 3)
    ([1.0, 2.25, 2.75], 6.5, 1.657)
    """
    if not 0.0 < alpha < 1.0:
        raise DelaycvError(f"alpha {alpha} is not in (0, 1)")
    _check_complete(values)
    core = _friedman_core(values.to_numpy(dtype=np.float64), alpha, higher_is_better)
    return _result(core, values.columns, values.index, alpha, higher_is_better)


# --------------------------------------------------------------------------- Scott-Knott ESD


def _np_cut_scores(
    order: Sequence[int], lo: int, hi: int, rank_sum: np.ndarray, size: np.ndarray, tie_term: float
) -> np.ndarray:
    """Kruskal-Wallis H (tie-corrected) of every cut c of the segment order[lo..hi]: the groups
    are order[lo..c], order[c+1..hi] and each treatment outside the segment on its own (as R's
    PartitionNonParametric relabels only the segment's rows). ``rank_sum``/``size``: each
    treatment's sum of ranks among all observations and its count; ``tie_term``: sum of t**3 - t
    over the tie groups of all observations.

    H = (12 / (N(N+1)) * sum_groups R_g**2 / n_g - 3(N+1)) / (1 - tie_term / (N**3 - N))."""
    seg = np.asarray(order[lo : hi + 1])
    outside = np.setdiff1d(np.arange(len(rank_sum)), seg)
    n_total = float(size.sum())
    left_r = np.cumsum(rank_sum[seg])[:-1]
    left_n = np.cumsum(size[seg])[:-1]
    right_r = rank_sum[seg].sum() - left_r
    right_n = size[seg].sum() - left_n
    fixed = float(np.sum(rank_sum[outside] ** 2 / size[outside])) if len(outside) else 0.0
    between = left_r**2 / left_n + right_r**2 / right_n + fixed
    h = 12.0 / (n_total * (n_total + 1.0)) * between - 3.0 * (n_total + 1.0)
    correction = 1.0 - tie_term / (n_total**3 - n_total)
    return h / correction if correction > 0 else np.full(h.shape, np.nan)


def _p_cut_scores(means: np.ndarray) -> np.ndarray:
    """Scott-Knott between-groups sum of squares of every cut of the (sorted) segment means."""
    g = len(means)
    t1 = np.cumsum(means)[:-1]
    k1 = np.arange(1, g, dtype=np.float64)
    t2 = means.sum() - t1
    k2 = g - k1
    return t1**2 / k1 + t2**2 / k2 - means.sum() ** 2 / g


def _first_max(scores: np.ndarray) -> int:
    scores = np.where(np.isnan(scores), -np.inf, scores)
    return int(np.argmax(scores))  # the first of equal maxima, as R's order(...)[1]


def _partition(n_treatments: int, negligible, best_cut) -> list[int]:
    """Top-down partition of positions 0..n-1 (sorted best first): a segment whose extremes are
    negligibly different is a group, else it is cut at ``best_cut(lo, hi)`` (last position of the
    left part) and the left part is done first. Returns the group (1-based) of each position."""
    groups = [0] * n_treatments
    current = 0
    pending = [(0, n_treatments - 1)] if n_treatments else []
    while pending:
        lo, hi = pending.pop()
        if lo == hi or negligible(lo, hi):
            current += 1
            groups[lo : hi + 1] = [current] * (hi - lo + 1)
            continue
        cut = best_cut(lo, hi)
        pending.append((cut + 1, hi))
        pending.append((lo, cut))
    return groups


SK_COLUMNS = {
    "np": ["treatment", "group", "rank", "median", "mean_rank", "n"],
    "p": ["treatment", "group", "rank", "mean", "mean_rank", "n"],
}


def _sk_core(raw: np.ndarray, names: Sequence[str], version: str, up: bool) -> dict:
    """The columns of :func:`scott_knott_esd` (best first) from a complete (n x k) array."""
    n, k = raw.shape
    data = raw if up else -raw  # larger = better from here on
    medians = np.median(data, axis=0)
    means = data.mean(axis=0)
    primary, secondary = (medians, means) if version == "np" else (means, medians)
    order = sorted(range(k), key=lambda j: (-primary[j], -secondary[j], names[j]))

    if version == "np":
        flat = data.T.ravel()  # observations of treatment j at [j*n:(j+1)*n]
        rank_sum = stats.rankdata(flat).reshape(k, n).sum(axis=1)
        size = np.full(k, float(n))
        _, counts = np.unique(flat, return_counts=True)
        tie_term = float((counts.astype(np.float64) ** 3 - counts).sum())

        def negligible(lo: int, hi: int) -> bool:
            a, b = data[:, order[lo]], data[:, order[hi]]
            return abs(float(cliffs_delta(a[None, :], b[None, :])[0])) < CLIFF_NEGLIGIBLE

        def best_cut(lo: int, hi: int) -> int:
            return lo + _first_max(_np_cut_scores(order, lo, hi, rank_sum, size, tie_term))

    else:
        sorted_means = means[order]

        def negligible(lo: int, hi: int) -> bool:
            a, b = data[:, order[lo]], data[:, order[hi]]
            if np.array_equal(a, b):
                return True
            return abs(cohens_d(a, b)) < COHEN_NEGLIGIBLE

        def best_cut(lo: int, hi: int) -> int:
            return lo + _first_max(_p_cut_scores(sorted_means[lo : hi + 1]))

    groups = _partition(k, negligible, best_cut)
    mean_rank = block_ranks(data).mean(axis=0)
    average = np.median(raw, axis=0) if version == "np" else raw.mean(axis=0)
    return {
        "treatment": [names[j] for j in order],
        "group": np.asarray(groups, dtype=np.int64),
        "rank": np.arange(1, k + 1, dtype=np.int64),
        SK_COLUMNS[version][3]: average[order],
        "mean_rank": mean_rank[order],
        "n": np.full(k, n, dtype=np.int64),
    }


def _check_ranking(ranked: Iterable[str], version: str) -> None:
    """What is ranked is learners or policies; the Scott-Knott ESD version is np or p."""
    for r in ranked:
        if r not in RANKED:
            raise DelaycvError(f"cannot rank {r!r} (expected 'learner' or 'policy')")
    if version not in VERSIONS:
        raise DelaycvError(f"version {version!r} is unknown (expected one of {list(VERSIONS)})")


def scott_knott_esd(
    values: pd.DataFrame, *, version: str = "np", higher_is_better: bool = True
) -> pd.DataFrame:
    """Scott-Knott ESD groups of the treatments (columns) of ``values`` (one row per observation:
    datasets' means, or the folds of one dataset; no missing cell: a DelaycvError names the
    first).

    Returns one row per treatment, best first: ``treatment``; ``group`` (1 = best; treatments of a
    group are not told apart); ``rank`` (position in the sorted order, 1 = best median for
    ``np``, best mean for ``p``); ``median`` (``np``) or ``mean`` (``p``) of the values as given;
    ``mean_rank`` (mean over the rows of the treatment's rank within the row, 1 = best, ties
    averaged: meaningful when rows are paired blocks, as datasets or (seed, fold) pairs are); ``n``
    (observations). The module docstring gives the algorithm.

    >>> v = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [1.5, 1.8, 3.5, 3.9], "c": [11.0, 12, 13, 14]})
    >>> scott_knott_esd(v)[["treatment", "group", "rank"]].to_numpy().tolist()
    [['c', 1, 1], ['b', 2, 2], ['a', 2, 3]]
    """
    _check_ranking((), version)
    _check_complete(values, what="row")
    n, k = values.shape
    if k == 0:
        return pd.DataFrame({c: [] for c in SK_COLUMNS[version]})
    if n == 0:
        raise DelaycvError("no observation: Scott-Knott ESD needs at least one row")
    names = [str(c) for c in values.columns]
    core = _sk_core(values.to_numpy(dtype=np.float64), names, version, higher_is_better)
    return pd.DataFrame(core)[SK_COLUMNS[version]]


def r_np_group_names(
    values: pd.DataFrame, groups: pd.DataFrame | None = None, *, higher_is_better: bool = True
) -> pd.DataFrame:
    """The groups R's ScottKnottESD 3.0.0 would print for the ``np`` partition of ``values``.

    R's ``scottknott`` (``R/scottknott.R``) sorts its table of treatments by **mean**, decreasing,
    and hands it to ``PartitionNonParametric``, which re-sorts the treatments by **median** and
    returns their groups in that median order; ``sk_esd`` then names that vector with the rows of
    the mean-sorted table. So the group of the i-th treatment by median is printed on the i-th
    treatment by mean. This function applies that naming to delaycv's partition: ``groups`` (the
    table of :func:`scott_knott_esd` with ``version="np"``, computed from ``values`` when None)
    gets the column ``group_r``, the group R prints on each treatment; ``group`` stays the
    partition's own. The means are of the values oriented as for the partition (negated when
    ``higher_is_better`` is False), tied means in column order (R's ``order`` is stable). Where
    medians tie, R's partition order (reverse column order) may differ from delaycv's; the naming
    here follows delaycv's order.

    >>> v = pd.DataFrame({"A": [0.0, 0, 0, 0, 100], "B": [5.0] * 5, "C": [1.0] * 5})
    >>> t = r_np_group_names(v)
    >>> t[["treatment", "group", "group_r"]].to_numpy().tolist()
    [['B', 1, 2], ['C', 2, 3], ['A', 3, 1]]
    """
    if groups is None:
        groups = scott_knott_esd(values, version="np", higher_is_better=higher_is_better)
    missing = [c for c in ("treatment", "group", "rank") if c not in groups.columns]
    if missing:
        raise DelaycvError(f"the Scott-Knott ESD table has no column {missing}")
    names = [str(c) for c in values.columns]
    if sorted(names) != sorted(str(t) for t in groups["treatment"]):
        raise DelaycvError(
            "the groups' treatments are not the columns of the values: "
            f"{sorted(groups['treatment'])} against {sorted(names)}"
        )
    data = values.to_numpy(dtype=np.float64)
    means = data.mean(axis=0) if higher_is_better else -data.mean(axis=0)
    by_mean = sorted(range(len(names)), key=lambda j: -means[j])  # stable: ties in column order
    by_median = groups.sort_values("rank", kind="stable")["group"].to_numpy()
    printed = {names[j]: int(g) for j, g in zip(by_mean, by_median, strict=True)}
    return groups.assign(group_r=[printed[str(t)] for t in groups["treatment"]])


# --------------------------------------------------------------------------- tidy tables

_RUN_KEYS = ("dataset", "learner", "policy", "reference", "estimator")
#: what is ranked -> what it is ranked within
RANKED = {"learner": "policy", "policy": "learner"}
FRIEDMAN_COLUMNS = [
    *FAMILY,
    "treatment",
    "mean_rank",
    "rank",
    "mean",
    "k",
    "n",
    "statistic",
    "p_value",
    "cd",
    "note",
]
NEMENYI_COLUMNS = [*FAMILY, "treatment_a", "treatment_b", "p_value", "significant"]


def sk_columns(version: str, extra: Sequence[str] = ()) -> list[str]:
    """Columns of the Scott-Knott ESD tables of :func:`rank_across` (``extra`` = ()) and
    :func:`rank_within` (``extra`` = ("dataset",))."""
    return [*FAMILY, *extra, *SK_COLUMNS[version], "note"]


def _require(table: pd.DataFrame, columns: Iterable[str]) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise DelaycvError(
            f"the per-fold table has no column {missing} (it has {list(table.columns)})"
        )


def _with_at(table: pd.DataFrame) -> pd.DataFrame:
    """The rows to rank with an ``at`` column: the table's own, or the last checkpoint of each
    dataset, called "last"."""
    if "at" in table.columns:
        return table.assign(at=table["at"].astype(str))
    _require(table, ["checkpoint"])
    last = table["dataset"].map(last_checkpoints(table))
    return table[table["checkpoint"] == last].assign(at="last")


def _metrics(metrics: str | Iterable[str]) -> list[str]:
    return [metrics] if isinstance(metrics, str) else list(metrics)


def _wide_families(
    table: pd.DataFrame, metrics: Sequence[str], ranked: str, extra: Sequence[str], blocks
):
    """Yield (family dict, block labels, treatment names, n x k array with NaN for a missing
    value, names of the treatments with no value at all in the family) of every family: the mean
    over the table's rows of each (family, block, treatment). A treatment with no value (e.g. an
    FPR before any negative label was released) is not ranked, but the callers report it."""
    within = RANKED[ranked]
    keys = [within, "reference", "estimator", "at", *extra]
    means = table.groupby([*keys, *blocks, ranked], sort=True, observed=True)[list(metrics)].mean()
    long = means.stack(future_stack=True)
    long.index = long.index.set_names("metric", level=-1)
    wide = long.unstack(ranked)  # index: keys, blocks, metric; columns: treatments
    order = [*keys[:4], "metric", *extra, *blocks]
    wide = wide.reorder_levels(order).sort_index()
    values = wide.to_numpy(dtype=np.float64)
    columns = np.asarray([str(c) for c in wide.columns], dtype=object)
    fam_levels = [*keys[:4], "metric", *extra]
    index = wide.index
    block_labels = (
        index.get_level_values(blocks[0]).to_numpy()
        if len(blocks) == 1
        else np.asarray(list(zip(*(index.get_level_values(b) for b in blocks), strict=True)))
    )
    for key, rows in wide.groupby(level=fam_levels, sort=False).indices.items():
        matrix = values[rows]
        present = ~np.isnan(matrix).all(axis=0)  # a treatment with no value at all is not here
        family = {
            "ranked": ranked,
            "within": str(key[0]),
            "reference": key[1],
            "estimator": key[2],
            "at": key[3],
            "metric": key[4],
        }
        family.update({e: key[5 + i] for i, e in enumerate(extra)})
        yield (
            family,
            block_labels[rows],
            list(columns[present]),
            matrix[:, present],
            list(columns[~present]),
        )


def _missing_note(matrix: np.ndarray, blocks, treatments, what: str) -> str:
    rows, cols = np.nonzero(np.isnan(matrix))
    if len(rows) == 0:
        return ""
    cells = [f"{treatments[j]} on {blocks[i]}" for i, j in zip(rows, cols, strict=True)]
    shown = ", ".join(cells[:3]) + (f" and {len(cells) - 3} more" if len(cells) > 3 else "")
    return f"no value for {shown}: every {what} needs a value of every treatment"


def _absent_note(rows: pd.DataFrame, family: dict, treatment: str, what: str) -> str:
    """Why ``treatment`` has no value in ``family``: its policy released no label (every fold's
    ``evaluated`` is 0 there: every evaluation pending), else the metric is undefined."""
    ranked = family["ranked"]
    policy = treatment if ranked == "policy" else family["within"]
    if RELEASE_COLUMN in rows.columns:
        within = RANKED[ranked]
        mask = (
            (rows[ranked].astype(str) == str(treatment))
            & (rows[within].astype(str) == str(family["within"]))
            & (rows["reference"] == family["reference"])
            & (rows["estimator"] == family["estimator"])
            & (rows["at"] == family["at"])
        )
        if "dataset" in family:
            mask &= rows["dataset"] == family["dataset"]
        evaluated = rows.loc[mask, RELEASE_COLUMN]
        if len(evaluated) and not (evaluated.fillna(0) > 0).any():
            where = (
                "before the end of the stream" if family["at"] == "last" else f"by {family['at']}"
            )
            return (
                f"no value at any {what}: policy {policy} released no label {where}, every "
                "evaluation pending (e.g. a window longer than the stream): not ranked"
            )
    return (
        f"no value at any {what} ({family['metric']} is undefined there, e.g. an FPR before "
        "any negative label was released): not ranked"
    )


def _absent_notes(rows: pd.DataFrame, family: dict, absent: Sequence[str], what: str) -> list:
    return [_absent_note(rows, family, t, what) for t in absent]


class _Columns:
    """Rows of a table gathered as columns (one DataFrame at the end)."""

    def __init__(self, columns: Sequence[str]):
        self.columns = list(columns)
        self.data: dict[str, list] = {c: [] for c in self.columns}

    def add(self, family: dict, size: int, **cols) -> None:
        for c in self.columns:
            if c in family:
                self.data[c].extend([family[c]] * size)
            else:
                value = cols[c]
                self.data[c].extend(
                    value if isinstance(value, list | np.ndarray) else [value] * size
                )

    def frame(self, integer: Sequence[str] = ()) -> pd.DataFrame:
        out = pd.DataFrame(self.data, columns=self.columns)
        for c in integer:
            out[c] = out[c].astype("Int64")
        return out


def _add_sk(
    into: _Columns, family: dict, treatments, matrix: np.ndarray, version: str, note: str
) -> None:
    k = len(treatments)
    if note:
        complete = matrix[~np.isnan(matrix).any(axis=1)]
        average = np.nanmedian if version == "np" else np.nanmean
        with np.errstate(all="ignore"):
            avg = average(matrix, axis=0) if len(matrix) else np.full(k, np.nan)
        mean_rank = (
            block_ranks(complete, higher_is_better=higher_is_better(family["metric"])).mean(axis=0)
            if len(complete)
            else np.full(k, np.nan)
        )
        into.add(
            family,
            k,
            treatment=list(treatments),
            group=[pd.NA] * k,
            rank=[pd.NA] * k,
            **{SK_COLUMNS[version][3]: avg},
            mean_rank=mean_rank,
            n=(~np.isnan(matrix)).sum(axis=0),
            note=note,
        )
        return
    core = _sk_core(matrix, treatments, version, higher_is_better(family["metric"]))
    into.add(family, k, note="", **{c: list(v) for c, v in core.items()})


@dataclass(frozen=True)
class Rankings:
    """Tables of :func:`rank_across`: ``friedman`` (one row per family and treatment: the
    Friedman/Nemenyi mean ranks, :data:`FRIEDMAN_COLUMNS`), ``nemenyi`` (one row per tested family
    and treatment pair: Nemenyi p-value, :data:`NEMENYI_COLUMNS`) and ``scott_knott`` (one row per
    family and treatment: SK-ESD group, :func:`sk_columns`). :meth:`result` rebuilds one family's
    :class:`FriedmanResult` (for its critical-difference diagram)."""

    friedman: pd.DataFrame
    nemenyi: pd.DataFrame
    scott_knott: pd.DataFrame
    alpha: float = 0.05

    def families(self) -> list[tuple]:
        """The family keys (tuples of the :data:`FAMILY` values), in the table's order."""
        return list(
            self.friedman[list(FAMILY)].drop_duplicates().itertuples(index=False, name=None)
        )

    def result(self, family: Sequence) -> FriedmanResult:
        """The :class:`FriedmanResult` of one family (a tuple of the :data:`FAMILY` values)."""
        key = dict(zip(FAMILY, family, strict=True))
        mask = np.ones(len(self.friedman), dtype=bool)
        for c, v in key.items():
            mask &= (self.friedman[c] == v).to_numpy()
        rows = self.friedman[mask]
        rows = rows[rows["mean"].notna()]  # the treatments with no value there are not ranked
        if rows.empty:
            raise DelaycvError(f"no ranking family {key}")
        names = [str(t) for t in rows["treatment"]]
        nemenyi = None
        if not rows["note"].iloc[0]:
            mask = np.ones(len(self.nemenyi), dtype=bool)
            for c, v in key.items():
                mask &= (self.nemenyi[c] == v).to_numpy()
            pairs = self.nemenyi[mask]
            pos = {t: i for i, t in enumerate(names)}
            nemenyi = np.eye(len(names))
            i = pairs["treatment_a"].map(pos).to_numpy()
            j = pairs["treatment_b"].map(pos).to_numpy()
            nemenyi[i, j] = nemenyi[j, i] = pairs["p_value"].to_numpy()
        first = rows.iloc[0]
        core = {
            "mean_ranks": rows["mean_rank"].to_numpy(dtype=np.float64),
            "means": rows["mean"].to_numpy(dtype=np.float64),
            "statistic": float(first["statistic"]),
            "p_value": float(first["p_value"]),
            "nemenyi": nemenyi,
            "cd": float(first["cd"]),
            "note": first["note"],
        }
        up = higher_is_better(key["metric"])
        return _result(core, names, range(int(first["n"])), self.alpha, up)


def rank_across(
    table: pd.DataFrame,
    metrics: str | Iterable[str],
    *,
    ranked: Sequence[str] = ("learner", "policy"),
    version: str = "np",
    alpha: float = 0.05,
) -> Rankings:
    """Rank learners within each policy and policies within each learner, across datasets.

    ``table`` is a per-fold checkpoint table (columns ``dataset``, ``learner``, ``policy``,
    ``seed``, ``fold``, ``reference``, ``estimator``, ``checkpoint`` and the metrics), already
    restricted to the chosen checkpoints. An ``at`` column names the chosen position of each
    dataset (e.g. "last", "1000") and aligns datasets whose checkpoints differ; without it the last
    checkpoint of each dataset is used and called "last". The value of a treatment on a dataset is
    its mean over folds and seeds (NaN values skipped). In each family (:data:`FAMILY`: what is
    ``ranked``, the learner or policy it is ranked ``within``, reference, estimator, at, metric)
    the blocks are the datasets; Friedman/Nemenyi (:func:`friedman_nemenyi`) and Scott-Knott ESD
    (:func:`scott_knott_esd` with ``version``) run when there are at least 3 datasets and every
    treatment has a value on each; otherwise the family's rows carry a ``note`` saying why (mean
    ranks over the complete datasets, no test, no group). Everything is oriented by the metric's
    direction (:func:`delaycv.stats.compare.higher_is_better`): rank and group 1 = best.
    """
    metrics = _metrics(metrics)
    _check_ranking(ranked, version)
    if not 0.0 < alpha < 1.0:
        raise DelaycvError(f"alpha {alpha} is not in (0, 1)")
    _require(table, [*_RUN_KEYS, *metrics])
    rows = _with_at(table)
    friedman = _Columns(FRIEDMAN_COLUMNS)
    nemenyi = _Columns(NEMENYI_COLUMNS)
    sk = _Columns(sk_columns(version))
    for r in ranked:
        for family, blocks, treatments, matrix, absent in _wide_families(
            rows, metrics, r, (), ["dataset"]
        ):
            if absent:  # not ranked, not lost: a row each with the reason
                note = _absent_notes(rows, family, absent, "dataset")
                friedman.add(
                    family,
                    len(absent),
                    treatment=absent,
                    mean_rank=np.nan,
                    rank=pd.NA,
                    mean=np.nan,
                    k=len(treatments),
                    n=len(blocks),
                    statistic=np.nan,
                    p_value=np.nan,
                    cd=np.nan,
                    note=note,
                )
                _add_sk(sk, family, absent, np.full((0, len(absent)), np.nan), version, note)
            if not treatments:
                continue
            up = higher_is_better(family["metric"])
            k = len(treatments)
            note = _missing_note(matrix, blocks, treatments, "dataset")
            complete = matrix[~np.isnan(matrix).any(axis=1)] if note else matrix
            core = _friedman_core(complete, alpha, up)
            note = note or core["note"]
            with np.errstate(all="ignore"):
                means = np.nanmean(matrix, axis=0) if len(matrix) else np.full(k, np.nan)
            mean_rank = core["mean_ranks"]
            order = np.lexsort((np.asarray(treatments, dtype=object), mean_rank))
            rank = pd.Series(mean_rank).rank(method="min").to_numpy()
            tested = not note
            friedman.add(
                family,
                k,
                treatment=[treatments[i] for i in order],
                mean_rank=mean_rank[order],
                rank=[int(x) if math.isfinite(x) else pd.NA for x in rank[order]],
                mean=means[order],
                k=k,
                n=len(blocks),
                statistic=core["statistic"] if tested else math.nan,
                p_value=core["p_value"] if tested else math.nan,
                cd=core["cd"] if tested else math.nan,
                note=note,
            )
            if tested:
                i, j = np.triu_indices(k, 1)
                p = core["nemenyi"][i, j]
                nemenyi.add(
                    family,
                    len(i),
                    treatment_a=[treatments[x] for x in i],
                    treatment_b=[treatments[x] for x in j],
                    p_value=p,
                    significant=p <= alpha,
                )
            _add_sk(sk, family, treatments, matrix, version, note)
    return Rankings(
        sort_families(friedman.frame(["k", "n", "rank"])),
        sort_families(nemenyi.frame()),
        sort_families(sk.frame(["group", "rank", "n"])),
        alpha,
    )


def _natural(text: str) -> tuple:
    """``position_1000`` before ``position_10000``, ``fraction_0.5`` before ``fraction_1.0``."""
    parts = re.split(r"(\d+(?:\.\d+)?)", str(text))
    return tuple((0, float(p), "") if i % 2 else (1, 0.0, p) for i, p in enumerate(parts) if p)


def sort_families(frame: pd.DataFrame, extra: Sequence[str] = ()) -> pd.DataFrame:
    """The rows of a rankings table with their families in reading order: what is ranked (as
    computed), the policy a family of learners is ranked within in policy order
    (:func:`delaycv.stats.compare.policy_sort_key`: preset, then windows as durations), the requested
    positions in numeric order (``position_1000`` before ``position_10000``), then ``extra``;
    the rows of one family keep their order (best first)."""
    if frame.empty:
        return frame
    within = frame["within"].astype(str)
    is_policy = frame["ranked"].eq("learner")
    ranks = policy_ranks(within[is_policy])
    keys = pd.DataFrame(
        {
            "_ranked": frame["ranked"].map(
                {r: i for i, r in enumerate(dict.fromkeys(frame["ranked"]))}
            ),
            "_within": np.where(is_policy, within.map(ranks).fillna(-1), 0),
            "_within_name": np.where(is_policy, "", within),
            "_at": frame["at"].map(_natural),
        },
        index=frame.index,
    )
    order = pd.concat([keys, frame[["reference", "estimator", "metric", *extra]]], axis=1)
    columns = [
        "_ranked",
        "_within",
        "_within_name",
        "reference",
        "estimator",
        "_at",
        "metric",
        *extra,
    ]
    index = order.sort_values(columns, kind="stable").index
    return frame.loc[index].reset_index(drop=True)


def family_values(table: pd.DataFrame, family: dict) -> pd.DataFrame:
    """The values one family of :func:`rank_across` ranks: one row per dataset (block), one column
    per treatment, each the mean over folds and seeds of the family's metric (NaN where a treatment
    has no value). ``family``: a dict of the :data:`FAMILY` keys (a row of a rankings table)."""
    rows = _with_at(table)
    ranked = family["ranked"]
    within = RANKED[ranked]
    mask = (
        (rows[within].astype(str) == str(family["within"]))
        & (rows["reference"] == family["reference"])
        & (rows["estimator"] == family["estimator"])
        & (rows["at"] == str(family["at"]))
    )
    means = rows[mask].groupby(["dataset", ranked], sort=True, observed=True)[family["metric"]]
    wide = means.mean().unstack(ranked)
    wide.columns = [str(c) for c in wide.columns]
    return wide


def rank_within(
    table: pd.DataFrame,
    metrics: str | Iterable[str],
    *,
    ranked: Sequence[str] = ("learner", "policy"),
    version: str = "np",
    min_observations: int = 2,
) -> pd.DataFrame:
    """Scott-Knott ESD within each dataset, over the folds: the observations of a treatment are
    its values at the (seed, fold) pairs (as the HITL study ranked its settings per project).

    Same families as :func:`rank_across` plus ``dataset`` (columns :func:`sk_columns` with
    ``extra=("dataset",)``); same ``at`` rule. A (seed, fold) pair where some treatment of the
    family has no value (missing or NaN) is left out for the whole family, so the observations
    stay paired, and the ``note`` says how many; a family with fewer than ``min_observations``
    complete pairs gets a ``note`` instead of groups.
    """
    metrics = _metrics(metrics)
    _check_ranking(ranked, version)
    _require(table, [*_RUN_KEYS, "seed", "fold", *metrics])
    rows = _with_at(table)
    sk = _Columns(sk_columns(version, ("dataset",)))
    for r in ranked:
        for family, _, treatments, matrix, absent in _wide_families(
            rows, metrics, r, ("dataset",), ["seed", "fold"]
        ):
            if absent:  # not ranked, not lost: a row each with the reason
                note = _absent_notes(rows, family, absent, "(seed, fold) pair")
                _add_sk(sk, family, absent, np.full((0, len(absent)), np.nan), version, note)
            if not treatments:
                continue
            keep = ~np.isnan(matrix).any(axis=1)
            dropped = int((~keep).sum())
            if len(treatments) < 2:  # nothing to rank: no group 1 that means nothing
                _add_sk(sk, family, treatments, matrix, version, _no_test_note(1, 0))
                continue
            if keep.sum() < min_observations:
                note = (
                    f"{int(keep.sum())} complete (seed, fold) pair"
                    f"{'s' if keep.sum() != 1 else ''}: Scott-Knott ESD needs at least "
                    f"{min_observations}"
                )
                _add_sk(sk, family, treatments, matrix, version, note)
                continue
            _add_sk(sk, family, treatments, matrix[keep], version, "")
            if dropped:
                sk.data["note"][-len(treatments) :] = [
                    f"{dropped} (seed, fold) pairs left out: a treatment has no value there"
                ] * len(treatments)
    return sort_families(sk.frame(["group", "rank", "n"]), ("dataset",))
