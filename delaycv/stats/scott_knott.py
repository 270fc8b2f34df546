"""Scott-Knott ESD (docs/comparison.md; pure, opens no files): the partition of treatments into groups
whose differences are not negligible, as the R package ScottKnottESD makes it
(:func:`scott_knott_esd`), and the group names R prints (:func:`r_np_group_names`).

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

    The first cut with the largest score wins (R's ``order(..., decreasing=TRUE)[1]``), among
    the cuts that do not part two treatments with the same values, equal scores compared exactly
    (R may part them; docs/comparison.md).

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

Everything is oriented so that group 1 is best: the caller negates a lower-is-better metric
(``up=False``).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import pandas as pd
from scipy import stats

from delaycv.common.errors import DelaycvError
from delaycv.stats.companions import cliffs_delta
from delaycv.stats.friedman import block_ranks, check_complete, cohens_d

#: Cliff's |delta| below this is negligible (Romano et al. 2006; R's effsize::cliff.delta).
CLIFF_NEGLIGIBLE = 0.147


#: Cohen's |d| below this is negligible (Cohen 1992; R's effsize::cohen.d).
COHEN_NEGLIGIBLE = 0.2


VERSIONS = ("np", "p")


def _cut_between(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``L**2/n_L + R**2/n_R`` of every cut of a segment of items (in order) with these sums and
    counts (L, R: the sums left and right of the cut; n: their counts): the part of a cut's score
    that depends on where the cut falls. Scott and Knott's between-groups sum of squares is this
    minus ``(L + R)**2/(n_L + n_R)`` (items: treatment means, counts 1); the Kruskal-Wallis H of a
    cut is ``(12/(N(N+1)) * (this + outside) - 3(N+1)) / C`` (items: the treatments' rank sums
    among all N observations, counts their sizes; ``outside``: the sum of R_j**2/n_j over the
    treatments outside the segment; C the tie correction). Both grow with it, so the best cut is
    the one with the largest value."""
    left = np.cumsum(sums)[:-1]
    left_n = np.cumsum(counts)[:-1]
    right = sums.sum() - left
    right_n = counts.sum() - left_n
    return left**2 / left_n + right**2 / right_n


def _exact_between(sums: np.ndarray, counts: np.ndarray, cut: int) -> Fraction:
    """:func:`_cut_between` of one cut (after item ``cut``) in exact arithmetic on the floats."""
    left = sum(map(Fraction, sums[: cut + 1].tolist()), Fraction(0))
    right = sum(map(Fraction, sums[cut + 1 :].tolist()), Fraction(0))
    left_n = sum(map(Fraction, counts[: cut + 1].tolist()), Fraction(0))
    right_n = sum(map(Fraction, counts[cut + 1 :].tolist()), Fraction(0))
    return left**2 / left_n + right**2 / right_n


def _best_cut(sums: np.ndarray, counts: np.ndarray, allowed: np.ndarray) -> int:
    """The first of the ``allowed`` cuts of a segment whose score is largest (cut c: after item
    c). Exactly the first: equal scores are compared in exact arithmetic (floats pick the cuts
    within a relative 1e-9 of their largest score, a margin far above rounding), so the choice
    does not hang on the rounding of one sum."""
    between = _cut_between(sums, counts)
    cuts = np.flatnonzero(allowed)
    best = between[cuts].max()
    margin = 1e-9 * float(np.sum(sums**2 / counts))  # bounds every cut's value, and its rounding
    near = cuts[between[cuts] >= best - margin]
    if len(near) == 1:
        return int(near[0])
    exact = [_exact_between(sums, counts, int(c)) for c in near]
    return int(near[exact.index(max(exact))])


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


def partition_columns(raw: np.ndarray, names: Sequence[str], version: str, up: bool) -> dict:
    """The columns of :func:`scott_knott_esd` (best first) from a complete (n x k) array with the
    treatments' ``names`` (what :func:`scott_knott_esd` computes after its checks; also
    :mod:`delaycv.stats.families`, which holds the array already)."""
    n, k = raw.shape
    data = raw if up else -raw  # larger = better from here on
    # Every statistic of the partition is unpaired: it sees each treatment's values, not their
    # rows. Sorted once, two treatments with the same values are the same array, bit for bit.
    values = np.sort(data, axis=0)
    medians = np.median(values, axis=0)
    means = values.mean(axis=0)
    primary, secondary = (medians, means) if version == "np" else (means, medians)
    order = sorted(
        range(k),
        key=lambda j: (-primary[j], -secondary[j], tuple(-values[::-1, j]), names[j]),
    )
    seq = values[:, order]
    # a cut between two treatments with the same values would part what nothing tells apart
    allowed = (seq[:, :-1] != seq[:, 1:]).any(axis=0)

    if version == "np":
        rank_sum = stats.rankdata(seq.T.ravel()).reshape(k, n).sum(axis=1)
        sums, counts = rank_sum, np.full(k, float(n))

        def negligible(lo: int, hi: int) -> bool:
            delta = cliffs_delta(seq[:, lo][None, :], seq[:, hi][None, :])[0]
            return abs(float(delta)) < CLIFF_NEGLIGIBLE

    else:
        sums, counts = means[order], np.ones(k)

        def negligible(lo: int, hi: int) -> bool:
            a, b = seq[:, lo], seq[:, hi]
            return bool(np.array_equal(a, b)) or abs(cohens_d(a, b)) < COHEN_NEGLIGIBLE

    def best_cut(lo: int, hi: int) -> int:
        seg = slice(lo, hi + 1)
        return lo + _best_cut(sums[seg], counts[seg], allowed[lo:hi])

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


def check_version(version: str) -> None:
    """Refuse a Scott-Knott ESD version other than ``np`` and ``p``.

    Parameters
    ----------
    version : str
        ``"np"`` (non-parametric) or ``"p"`` (parametric).

    Returns
    -------
    None

    Examples
    --------
    >>> check_version("np")
    >>> check_version("x")
    Traceback (most recent call last):
    ...
    delaycv.common.errors.DelaycvError: version 'x' is unknown (expected one of ['np', 'p'])
    """
    if version not in VERSIONS:
        raise DelaycvError(f"version {version!r} is unknown (expected one of {list(VERSIONS)})")


def scott_knott_esd(
    values: pd.DataFrame, *, version: str = "np", higher_is_better: bool = True
) -> pd.DataFrame:
    """Scott-Knott ESD groups of the treatments (columns) of ``values``.

    The module docstring gives the algorithm.

    Parameters
    ----------
    values : pandas.DataFrame
        One row per observation (datasets' means, or the folds of one dataset), one column per
        treatment; no missing cell.
    version : {"np", "p"}, default "np"
        Non-parametric (medians, Cliff's delta, Kruskal-Wallis cuts) or parametric (means, Cohen's
        d, Scott and Knott's sum of squares).
    higher_is_better : bool, default True
        False: the values are negated before sorting and partitioning (group 1 is still best).

    Returns
    -------
    pandas.DataFrame
        One row per treatment, best first (columns ``SK_COLUMNS[version]``): ``treatment``;
        ``group`` (1 = best; treatments of a group are not told apart); ``rank`` (position in the
        sorted order, 1 = best median for ``np``, best mean for ``p``); ``median`` (``np``) or
        ``mean`` (``p``) of the values as given; ``mean_rank`` (mean over the rows of the
        treatment's rank within the row, 1 = best, ties averaged: meaningful when rows are paired
        blocks, as datasets or (seed, fold) pairs are); ``n`` (observations). No column: an empty
        table.

    Raises
    ------
    DelaycvError
        An unknown ``version``, a missing cell (naming the first), no row (with some column).

    Examples
    --------
    Three clearly separated treatments: c against a has Cliff's delta 1, so the whole order is cut
    (after c: the two cuts score the same H, and the first wins), then b against a (delta 1) again:

    >>> v = pd.DataFrame({"a": [1.0, 2, 3], "b": [11.0, 12, 13], "c": [21.0, 22, 23]})
    >>> scott_knott_esd(v).to_numpy().tolist()
    [['c', 1, 1, 22.0, 1.0, 3], ['b', 2, 2, 12.0, 2.0, 3], ['a', 3, 3, 2.0, 3.0, 3]]
    >>> scott_knott_esd(v, version="p", higher_is_better=False)["treatment"].tolist()
    ['a', 'b', 'c']

    b's values overlap a's (Cliff's delta of b against a is 0), so they share a group:

    >>> v = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [1.5, 1.8, 3.5, 3.9], "c": [11.0, 12, 13, 14]})
    >>> scott_knott_esd(v)[["treatment", "group", "rank"]].to_numpy().tolist()
    [['c', 1, 1], ['b', 2, 2], ['a', 2, 3]]
    """
    check_version(version)
    check_complete(values, what="row")
    n, k = values.shape
    if k == 0:
        return pd.DataFrame({c: [] for c in SK_COLUMNS[version]})
    if n == 0:
        raise DelaycvError("no observation: Scott-Knott ESD needs at least one row")
    names = [str(c) for c in values.columns]
    core = partition_columns(values.to_numpy(dtype=np.float64), names, version, higher_is_better)
    return pd.DataFrame(core)[SK_COLUMNS[version]]


def r_np_group_names(
    values: pd.DataFrame, groups: pd.DataFrame | None = None, *, higher_is_better: bool = True
) -> pd.DataFrame:
    """The groups R's ScottKnottESD 3.0.0 would print for the ``np`` partition of ``values``.

    R's ``scottknott`` (``R/scottknott.R``) sorts its table of treatments by **mean**, decreasing,
    and hands it to ``PartitionNonParametric``, which re-sorts the treatments by **median** and
    returns their groups in that median order; ``sk_esd`` then names that vector with the rows of
    the mean-sorted table. So the group of the i-th treatment by median is printed on the i-th
    treatment by mean. The means are of the values oriented as for the partition (negated when
    ``higher_is_better`` is False), tied means in column order (R's ``order`` is stable). Where
    medians tie, R's partition order (reverse column order) may differ from delaycv's; the naming
    here follows delaycv's order.

    Parameters
    ----------
    values : pandas.DataFrame
        As for :func:`scott_knott_esd`.
    groups : pandas.DataFrame, optional
        The table of :func:`scott_knott_esd` with ``version="np"`` (at least ``treatment``,
        ``group`` and ``rank``); None (default): computed from ``values``.
    higher_is_better : bool, default True
        As for :func:`scott_knott_esd`.

    Returns
    -------
    pandas.DataFrame
        ``groups`` with the column ``group_r``, the group R prints on each treatment; ``group``
        stays the partition's own.

    Raises
    ------
    DelaycvError
        ``groups`` lacks a column, or its treatments are not the columns of ``values``.

    Examples
    --------
    A has the lowest median but the highest mean, so R prints B's group on A:

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
