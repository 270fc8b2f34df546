"""The companions of the paired permutation test (pure, opens no files): Holm's adjustment of a
family's p-values (:func:`holm`, :func:`holm_by_group`), the mean difference with its
t-interval ``mean(d) ± t(0.975, n-1) * sd(d) / sqrt(n)`` (:func:`mean_ci`), Cliff's delta between
two samples ``δ = (#{a_i > b_j} - #{a_i < b_j}) / n²`` (:func:`cliffs_delta`), the Wilcoxon
signed-rank p-value (vectorised; on each row the value of scipy's ``wilcoxon`` with its defaults,
:func:`wilcoxon_pvalues`) and the sign-test p-value (scipy's binomial test of the count of
positive differences among the non-zero ones, :func:`sign_test_pvalues`). All are row-wise over a
matrix of paired values, NaN entries dropped.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from delaycv.stats.permutation import _by_valid_count, _check_alternative


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm step-down adjusted p-values of one family; NaN p-values are left out (and stay NaN).

    With the m known p-values sorted ``p_(1) <= ... <= p_(m)``:
    ``p_holm_(i) = max_{j <= i} min(1, (m - j + 1) * p_(j))``.

    Parameters
    ----------
    pvalues : sequence of float
        The p-values of one family, in any order.

    Returns
    -------
    numpy.ndarray
        The adjusted p-values, in the order given.

    Examples
    --------
    Sorted 0.01, 0.03, 0.04 are scaled by 3, 2, 1 to 0.03, 0.06, 0.04, and the last is raised to the
    running maximum 0.06:

    >>> holm([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
    >>> holm([0.2, float("nan"), 0.9]).tolist()
    [0.4, nan, 0.9]
    """
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    known = np.flatnonzero(~np.isnan(p))
    m = known.size
    if m == 0:
        return out
    order = known[np.argsort(p[known], kind="stable")]
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(scaled)
    return out


def holm_by_group(pvalues: Sequence[float], groups: Sequence[int]) -> np.ndarray:
    """:func:`holm` within each group of ``groups`` (one integer label per p-value), all at once.

    Parameters
    ----------
    pvalues : sequence of float
        The p-values of every family; NaN ones are left out (and stay NaN).
    groups : sequence of int
        The family of each p-value.

    Returns
    -------
    numpy.ndarray
        The p-values adjusted within their group, in the order given.

    Examples
    --------
    >>> holm_by_group([0.01, 0.04, 0.5, 0.03], [0, 0, 1, 0]).tolist()
    [0.03, 0.06, 0.5, 0.06]
    """
    p = np.asarray(pvalues, dtype=np.float64)
    groups = np.asarray(groups)
    out = np.full(p.shape, np.nan)
    known = np.flatnonzero(~np.isnan(p))
    if known.size == 0:
        return out
    order = known[np.lexsort((p[known], groups[known]))]
    label = groups[order]
    start = np.flatnonzero(np.r_[True, label[1:] != label[:-1]])
    size = np.diff(np.r_[start, order.size])
    group = np.repeat(np.arange(start.size), size)
    position = np.arange(order.size) - start[group]
    scaled = np.minimum(1.0, (size[group] - position) * p[order])
    out[order] = pd.Series(scaled).groupby(group).cummax().to_numpy()
    return out


def mean_ci(d: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row-wise mean of ``d`` (m, n) with NaNs dropped, and its t-interval at ``level``.

    ``mean ± t((1 + level) / 2, n - 1) * sd / sqrt(n)`` with ``sd`` the sample standard deviation
    (ddof 1).

    Parameters
    ----------
    d : array_like
        The values (e.g. paired differences), shape (m, n); a 1-D array is one row.
    level : float, default 0.95
        The interval's coverage.

    Returns
    -------
    mean, low, high : numpy.ndarray
        Length m each. A row with no value has a NaN mean; fewer than 2 values a NaN interval;
        all-equal values a zero-width one.

    Examples
    --------
    1, 2, 3: mean 2, sd 1, half-width ``t(0.975, 2) / sqrt(3) = 4.303 / 1.732 = 2.484``:

    >>> mean, low, high = mean_ci(np.array([[1.0, 2.0, 3.0], [1.0, np.nan, np.nan]]))
    >>> mean.tolist(), np.round(low, 3).tolist(), np.round(high, 3).tolist()
    ([2.0, 1.0], [-0.484, nan], [4.484, nan])
    """
    d = np.atleast_2d(np.asarray(d, dtype=np.float64))
    n = (~np.isnan(d)).sum(axis=1)
    mean = np.full(d.shape[0], np.nan)
    low = np.full(d.shape[0], np.nan)
    high = np.full(d.shape[0], np.nan)
    some = n > 0
    mean[some] = np.nansum(d[some], axis=1) / n[some]
    two = n > 1
    if two.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            sd = np.nanstd(d[two], axis=1, ddof=1)
        half = stats.t.ppf((1 + level) / 2, n[two] - 1) * sd / np.sqrt(n[two])
        low[two] = mean[two] - half
        high[two] = mean[two] + half
    return mean, low, high


def cliffs_delta(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise Cliff's delta of ``a`` against ``b`` (both (m, n)); columns where either is NaN drop.

    ``δ = (#{(i, j): a_i > b_j} - #{(i, j): a_i < b_j}) / n²`` over the n kept columns: +1 when
    every value of a exceeds every value of b, -1 for the reverse, 0 for equal distributions.

    Parameters
    ----------
    a, b : array_like
        Two arrays of one shape (m, n) (1-D arrays are one row each); column j of a row is kept
        when both ``a`` and ``b`` have a value there.

    Returns
    -------
    numpy.ndarray
        Length m; NaN for a row with no kept column.

    Examples
    --------
    3, 4, 5 against 1, 2, 3: 8 of the 9 pairs favour a, one ties (3 and 3), so δ = 8/9; in the
    second row only the first column is kept (1 > 0):

    >>> a = np.array([[3.0, 4.0, 5.0], [1.0, np.nan, 2.0]])
    >>> b = np.array([[1.0, 2.0, 3.0], [0.0, 5.0, np.nan]])
    >>> np.round(cliffs_delta(a, b), 4).tolist()
    [0.8889, 1.0]
    """
    a = np.atleast_2d(np.asarray(a, dtype=np.float64))
    b = np.atleast_2d(np.asarray(b, dtype=np.float64))
    keep = ~(np.isnan(a) | np.isnan(b))
    n = keep.sum(axis=1)
    out = np.full(a.shape[0], np.nan)
    chunk = max(1, (1 << 22) // max(1, a.shape[1] ** 2))
    for start in range(0, a.shape[0], chunk):
        sl = slice(start, start + chunk)
        x = np.where(keep[sl], a[sl], 0.0)
        y = np.where(keep[sl], b[sl], 0.0)
        both = keep[sl][:, :, None] & keep[sl][:, None, :]
        signs = np.sign(x[:, :, None] - y[:, None, :]) * both
        total = signs.sum(axis=(1, 2))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[sl] = np.where(n[sl] > 0, total / n[sl].astype(float) ** 2, np.nan)
    return out


#: Largest sample size for which the Wilcoxon test uses its exact null distribution (scipy's
#: ``method="auto"``: exact up to 50 values without ties or zeros) ...
WILCOXON_EXACT_MAX = 50


#: ... and, with ties or zeros, the exact sign-flip distribution of the tied ranks up to 13 values
#: (scipy enumerates all 2**n sign vectors there, 2**13 < its 9,999 resamples); beyond it the normal
#: approximation with tie correction.
WILCOXON_PERMUTATION_MAX = 13


def _subset_sum_counts(weights: np.ndarray) -> np.ndarray:
    """For each row of non-negative integer ``weights`` (u, k): how many of the 2**k subsets have
    each total 0..max (a (u, max + 1) float matrix; exact up to 2**53 subsets)."""
    u, k = weights.shape
    top = int(weights.sum(axis=1).max()) if u else 0
    counts = np.zeros((u, top + 1))
    counts[:, 0] = 1.0
    position = np.arange(top + 1)[None, :]
    for j in range(k):
        source = position - weights[:, j : j + 1]
        shifted = np.take_along_axis(counts, np.maximum(source, 0), axis=1)
        counts = counts + np.where(source >= 0, shifted, 0.0)
    return counts


@functools.lru_cache(maxsize=64)
def _untied_rank_sums(k: int) -> np.ndarray:
    """Cumulative counts of the doubled rank sum 2R+ over the 2**k sign vectors of ranks 1..k."""
    counts = _subset_sum_counts(2 * np.arange(1, k + 1, dtype=np.int64)[None, :])
    return np.cumsum(counts[0])


def _rank_sum_p(
    cumulative: np.ndarray, which: np.ndarray, observed: np.ndarray, alternative: str
) -> np.ndarray:
    """p-values of the doubled rank sums ``observed``, each under the null distribution given by
    row ``which`` of ``cumulative`` (cumulative counts of 2R+ = 0, 1, ...)."""
    total = cumulative[which, -1]
    at_most = cumulative[which, observed] / total
    below = np.where(observed > 0, cumulative[which, np.maximum(observed - 1, 0)], 0.0)
    at_least = (total - below) / total
    if alternative == "greater":
        return at_least
    if alternative == "less":
        return at_most
    return np.minimum(1.0, 2.0 * np.minimum(at_least, at_most))


def _tied_rank_sum_p(weights: np.ndarray, observed: np.ndarray, alternative: str) -> np.ndarray:
    """Exact sign-flip p-values of doubled rank sums with ties or zeros: ``weights`` (m, k) are each
    row's doubled ranks (0 for a zero, at most 2k; k <= WILCOXON_PERMUTATION_MAX), ``observed`` its
    doubled R+. Rows with the same sorted weights (the same tie pattern) share one distribution."""
    k = weights.shape[1]
    ordered = np.sort(weights, axis=1)
    code = ordered @ (2 * k + 1) ** np.arange(k, dtype=np.int64)  # exact: 27**13 < 2**63
    _, first, which = np.unique(code, return_index=True, return_inverse=True)
    cumulative = np.cumsum(_subset_sum_counts(ordered[first]), axis=1)
    return _rank_sum_p(cumulative, which.reshape(-1), observed, alternative)


def wilcoxon_pvalues(d: np.ndarray, *, alternative: str = "two-sided") -> np.ndarray:
    """Row-wise Wilcoxon signed-rank p-values, vectorised.

    On each row equal to ``scipy.stats.wilcoxon(row, alternative=alternative)`` with its defaults
    (zero differences dropped, ``zero_method="wilcox"``, no continuity correction,
    ``method="auto"``) on that row alone.

    NaN entries drop first. With k values, of which ``n_r`` are non-zero, ranked by ``|d|`` with
    average ranks for ties, and ``R+`` the sum of the ranks of the positive differences:

    * no tie and no zero, k <= 50: the exact null distribution of R+ (scipy ``method="exact"``);
    * ties or zeros, k <= 13: the exact sign-flip distribution of the tied ranks over all 2**k sign
      vectors (scipy's permutation path, which enumerates them all);
    * otherwise the normal approximation ``z = (R+ - n_r(n_r+1)/4) / sqrt(n_r(n_r+1)(2n_r+1)/24 -
      sum(t^3 - t)/48)`` over the tie groups t of the non-zero |d| (scipy ``method="asymptotic"``).

    Two-sided p = ``min(1, 2 min(P(R+ >= r), P(R+ <= r)))``. Rows are classified one by one
    (scipy's ``auto`` decides once for a whole batch, which sends every row of a batch with one tie
    to its slow permutation path).

    Parameters
    ----------
    d : array_like
        The paired differences, shape (m, n); a 1-D array is one row.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        As scipy's.

    Returns
    -------
    numpy.ndarray
        Length m: 1 for a row whose values are all zero, NaN for a row without values.

    Raises
    ------
    DelaycvError
        An unknown ``alternative``.

    Examples
    --------
    1, 2, 3, 4: R+ = 10, reached by 1 of the 16 sign vectors, so p = 2/16; 1, -2, 3, 4: R+ = 8,
    reached or passed by 3 of them (rank sums 8, 9, 10), so p = 6/16:

    >>> wilcoxon_pvalues(np.array([[1.0, 2, 3, 4], [1, -2, 3, 4], [0, 0, 0, 0]])).tolist()
    [0.125, 0.375, 1.0]
    >>> wilcoxon_pvalues(np.array([1.0, 2, 3, 4]), alternative="greater").tolist()
    [0.0625]
    """
    _check_alternative(alternative)
    d = np.atleast_2d(np.asarray(d, dtype=np.float64))
    out = np.full(d.shape[0], np.nan)
    for k, rows, values in _by_valid_count(d):
        if k == 0:
            continue
        magnitude = np.abs(values)
        zeros = (values == 0).sum(axis=1)
        # integer ranks of |d| (zeros rank first, so subtracting their count ranks the non-zero
        # values among themselves); doubled average rank = lowest + highest rank of the tie group
        low = stats.rankdata(magnitude, method="min", axis=1).astype(np.int64) - zeros[:, None]
        high = stats.rankdata(magnitude, method="max", axis=1).astype(np.int64) - zeros[:, None]
        nonzero = values != 0
        doubled = np.where(nonzero, low + high, 0)
        ties = np.where(nonzero, high - low + 1, 1)
        observed = (doubled * (values > 0)).sum(axis=1)
        tied = (ties > 1).any(axis=1)
        n_r = k - zeros
        p = np.ones(len(rows))
        plain = ~tied & (zeros == 0)
        exact = plain & (k <= WILCOXON_EXACT_MAX)
        if exact.any():
            null = _untied_rank_sums(k)[None, :]
            which = np.zeros(int(exact.sum()), dtype=np.int64)
            p[exact] = _rank_sum_p(null, which, observed[exact], alternative)
        permutation = (n_r > 0) & ~plain & (k <= WILCOXON_PERMUTATION_MAX)
        if permutation.any():
            p[permutation] = _tied_rank_sum_p(
                doubled[permutation], observed[permutation], alternative
            )
        normal = (n_r > 0) & ~exact & ~permutation
        if normal.any():
            n = n_r[normal].astype(np.float64)
            t = ties[normal].astype(np.float64)
            # each tie group of size t has t members with ties == t: sum(t^2 - 1) over members
            correction = ((t**2 - 1) * nonzero[normal]).sum(axis=1)
            sd = np.sqrt((n * (n + 1) * (2 * n + 1) - correction / 2) / 24)
            z = (observed[normal] / 2 - n * (n + 1) / 4) / sd
            if alternative == "greater":
                p[normal] = stats.norm.sf(z)
            elif alternative == "less":
                p[normal] = stats.norm.cdf(z)
            else:
                p[normal] = np.minimum(1.0, 2 * stats.norm.sf(np.abs(z)))
        out[rows] = p
    return out


def sign_test_pvalues(d: np.ndarray, *, alternative: str = "two-sided") -> np.ndarray:
    """Row-wise sign-test p-values, vectorised over the rows of ``d``.

    Each is scipy's exact binomial test of the number of positive differences among the non-zero
    ones, with success probability 1/2.

    Parameters
    ----------
    d : array_like
        The paired differences, shape (m, n); a 1-D array is one row. NaN entries drop.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        As scipy's ``binomtest``.

    Returns
    -------
    numpy.ndarray
        Length m: 1 for a row with no non-zero difference, NaN for a row with no value at all.

    Raises
    ------
    DelaycvError
        An unknown ``alternative``.

    Examples
    --------
    4 positive of 4: ``2 * (1/2)**4``; 2 positive of 3 non-zero (the zero drops): 1:

    >>> d = np.array([[1.0, 2, 3, 4], [1, -2, 3, 0], [0, 0, np.nan, np.nan]])
    >>> sign_test_pvalues(d).tolist()
    [0.125, 1.0, 1.0]
    """
    _check_alternative(alternative)
    d = np.atleast_2d(np.asarray(d, dtype=np.float64))
    positive = (d > 0).sum(axis=1)
    nonzero = ((d != 0) & ~np.isnan(d)).sum(axis=1)
    known = (~np.isnan(d)).sum(axis=1)
    out = np.full(d.shape[0], np.nan)
    cache: dict[tuple[int, int], float] = {}
    for i, (k, n) in enumerate(zip(positive.tolist(), nonzero.tolist(), strict=True)):
        if known[i] == 0:
            continue
        if n == 0:
            out[i] = 1.0
            continue
        if (k, n) not in cache:
            cache[(k, n)] = float(stats.binomtest(k, n, 0.5, alternative=alternative).pvalue)
        out[i] = cache[(k, n)]
    return out
