"""The Friedman test, the Nemenyi post-hoc test and the critical difference (Demšar 2006;
docs/comparison.md; pure, opens no files), with the ranks of treatments within blocks and Cohen's d.

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

The chi-square p-value is an approximation that scipy calls reliable only from about 10 blocks;
studies rank a handful of datasets. Beside it, :func:`friedman_permutation_p` gives the p-value
of the same statistic under its permutation distribution (the treatments' values exchanged within
each block; scipy's ``permutation_test``): exact, over all ``(k!)**N`` permutations, when there
are at most R of them, else over R random ones, as the learner tests' sign flips. With three
treatments on four datasets, chi2 = 6 has the approximate p = exp(-3) = 0.0498 and the exact
p = 90 / 1296 = 0.069.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from delaycv.common import defaults
from delaycv.common.errors import DelaycvError

#: Fewest blocks (datasets) the Friedman test and the across-dataset Scott-Knott ESD need.
MIN_BLOCKS = 3


def check_complete(values: pd.DataFrame, what: str = "block") -> None:
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

    Parameters
    ----------
    values : array_like
        (blocks, treatments) values.
    higher_is_better : bool, default True
        True: the largest value ranks 1; False: the smallest.

    Returns
    -------
    numpy.ndarray
        Float ranks of the shape of ``values``.

    Examples
    --------
    >>> block_ranks(np.array([[0.9, 0.7, 0.7]])).tolist()
    [[1.0, 2.5, 2.5]]
    >>> block_ranks(np.array([[0.9, 0.7, 0.8]]), higher_is_better=False).tolist()
    [[3.0, 1.0, 2.0]]
    """
    values = np.asarray(values, dtype=np.float64)
    oriented = -values if higher_is_better else values
    return stats.rankdata(oriented, axis=1, method="average")


@functools.lru_cache(maxsize=256)
def q_alpha(k: int, alpha: float = defaults.SIGNIFICANCE) -> float:
    """Demšar's q_alpha: the studentized range quantile of k means over sqrt 2.

    The (1 - alpha) quantile of the studentized range of k means with infinite degrees of freedom,
    divided by sqrt 2 (cached).

    Parameters
    ----------
    k : int
        The number of treatments (at least 2).
    alpha : float, default 0.05
        The level.

    Returns
    -------
    float

    Examples
    --------
    Demšar's (2006) table gives 2.569 for k = 4 at 0.05 and 2.920 for k = 10 at 0.10:

    >>> round(q_alpha(4, 0.05), 3), round(q_alpha(10, 0.10), 3)
    (2.569, 2.92)
    """
    return float(stats.studentized_range.ppf(1.0 - alpha, k, np.inf) / math.sqrt(2.0))


def critical_difference(k: int, n: int, alpha: float = defaults.SIGNIFICANCE) -> float:
    """Nemenyi's critical difference of mean ranks, ``q_alpha * sqrt(k(k+1)/(6N))``.

    Parameters
    ----------
    k : int
        The number of treatments.
    n : int
        N, the number of blocks.
    alpha : float, default 0.05
        The level (see :func:`q_alpha`).

    Returns
    -------
    float

    Examples
    --------
    >>> round(critical_difference(4, 14, 0.05), 3)  # 2.569 * sqrt(20 / 84)
    1.254
    """
    return q_alpha(k, alpha) * math.sqrt(k * (k + 1) / (6.0 * n))


def cohens_d(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's d of ``a`` against ``b`` with the pooled standard deviation.

    The pooled standard deviation is
    ``sqrt(((n_a - 1) s_a**2 + (n_b - 1) s_b**2) / (n_a + n_b - 2))`` (R's effsize::cohen.d with its
    defaults); a sample of one value contributes no spread.

    Parameters
    ----------
    a, b : numpy.ndarray
        The two samples (1-D, unpaired).

    Returns
    -------
    float
        ``(mean(a) - mean(b)) / pooled``; zero pooled spread gives 0 for equal means and ±inf
        otherwise.

    Examples
    --------
    Means 2 and 3, both standard deviations 1:

    >>> round(cohens_d(np.array([1.0, 2.0, 3.0]), np.array([2.0, 3.0, 4.0])), 3)
    -1.0
    >>> cohens_d(np.array([1.0, 1.0]), np.array([2.0, 2.0]))
    -inf
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


#: Columns of :meth:`FriedmanResult.table` (a ranking family's keys come before them in the tables
#: of :func:`delaycv.stats.families.rank_across`).
FRIEDMAN_TABLE_COLUMNS = [
    "treatment",
    "mean_rank",
    "rank",
    "mean",
    "k",
    "n",
    "statistic",
    "p_value",
    "p_permutation",
    "permutation_exact",
    "cd",
    "note",
]


@dataclass(frozen=True)
class FriedmanResult:
    """Friedman's test over blocks with the Nemenyi post-hoc and the critical difference.

    ``mean_ranks`` and ``means`` are given whenever there is at least one block; ``statistic``,
    ``p_value``, ``cd`` and ``nemenyi`` only when there is a test (``note`` empty), else NaN / an
    empty frame and ``note`` says why.

    Parameters
    ----------
    treatments : tuple of str
        The treatments, in the input's column order.
    k : int
        The number of treatments.
    n : int
        The number of blocks.
    statistic : float
        Friedman's chi-square (tie-corrected).
    p_value : float
        Its p-value on k - 1 degrees of freedom (the chi-square approximation).
    p_permutation : float
        Its p-value under the permutation distribution (:func:`friedman_permutation_p`).
    permutation_exact : bool
        Whether ``p_permutation`` enumerated every permutation (else R random ones).
    mean_ranks : pandas.Series
        Treatment -> mean rank over the blocks (1 = best), in the input's column order.
    means : pandas.Series
        Treatment -> mean value over the blocks.
    nemenyi : pandas.DataFrame
        k x k Nemenyi p-values, 1 on the diagonal.
    cd : float
        The critical difference (:func:`critical_difference`).
    alpha : float
        Its level.
    higher_is_better : bool
        The direction the values were ranked in.
    note : str, default ""
        Why there is no test (``""`` when there is one).
    blocks : tuple, default ()
        The block labels.

    Examples
    --------
    >>> v = pd.DataFrame({"a": [3.0, 2.0, 1.0], "b": [1.0, 3.0, 2.0]})
    >>> r = friedman_nemenyi(v)
    >>> r.tested, r.k, r.n, r.mean_ranks.round(3).to_dict()
    (True, 2, 3, {'a': 1.667, 'b': 1.333})
    """

    treatments: tuple[str, ...]
    k: int
    n: int
    statistic: float
    p_value: float
    p_permutation: float
    permutation_exact: bool
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
        """Whether there is a test (no ``note``).

        Returns
        -------
        bool

        Examples
        --------
        >>> friedman_nemenyi(pd.DataFrame({"a": [1.0], "b": [2.0]})).tested
        False
        """
        return not self.note

    def table(self) -> pd.DataFrame:
        """One row per treatment, best mean rank first (ties by name).

        Returns
        -------
        pandas.DataFrame
            Columns :data:`FRIEDMAN_TABLE_COLUMNS`: ``treatment``, ``mean_rank``, ``rank``
            (1 = best; tied mean ranks share the smaller rank), ``mean``, ``k``, ``n``,
            ``statistic``, ``p_value``, ``p_permutation``, ``permutation_exact``, ``cd``,
            ``note``.

        Examples
        --------
        >>> v = pd.DataFrame({"b": [0.8, 0.7, 0.6], "a": [0.9, 0.8, 0.7]})
        >>> friedman_nemenyi(v).table()[["treatment", "mean_rank", "rank"]].to_numpy().tolist()
        [['a', 1.0, 1], ['b', 2.0, 2]]
        """
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
        out["p_permutation"] = self.p_permutation
        out["permutation_exact"] = self.permutation_exact
        out["cd"] = self.cd
        out["note"] = self.note
        return out[FRIEDMAN_TABLE_COLUMNS]


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


def _rank_sum_squares(*ranks: np.ndarray, axis: int = -1) -> np.ndarray:
    """The sum over treatments of their squared rank sums over the blocks: Friedman's statistic
    up to terms that exchanging values within a block leaves as they are (the blocks' tie counts),
    so it orders the permutations as chi2 does."""
    return (np.stack(ranks).sum(axis=axis) ** 2).sum(axis=0)


def friedman_permutation_p(
    ranks: np.ndarray,
    *,
    resamples: int = defaults.RESAMPLES,
    seed: int = defaults.TEST_SEED,
) -> tuple[float, bool]:
    """The p-value of Friedman's statistic under its permutation distribution.

    Under the null hypothesis the treatments' values are exchangeable within each block, so each
    block's ranks may be permuted among the treatments; the p-value is the share of the
    ``(k!)**N`` permutations (the observed one among them) whose statistic is at least the
    observed one (scipy's ``permutation_test``, ``permutation_type="samples"``).

    Parameters
    ----------
    ranks : numpy.ndarray
        (N blocks, k treatments) ranks within each block (:func:`block_ranks`).
    resamples : int, default 5000
        R: every permutation is enumerated when there are at most R, else R random ones are drawn
        (the p-value is then ``(1 + count) / (R + 1)``).
    seed : int, default 1
        The seed of the random permutations.

    Returns
    -------
    p_value : float
    exact : bool
        True when every permutation was enumerated.

    Examples
    --------
    Three treatments on four datasets that all rank a first, three of them b before c: chi2 =
    6.5, whose chi-square p is exp(-3.25) = 0.039, and 54 of the 6**4 = 1296 permutations reach
    it (exactly 0.042):

    >>> r = block_ranks(np.array([[3, 2, 1], [3, 2, 1], [3, 2, 1], [3, 1, 2]]))
    >>> p, exact = friedman_permutation_p(r)
    >>> round(p * 1296), exact
    (54, True)
    >>> p, exact = friedman_permutation_p(np.vstack([r, r]), resamples=999)  # 6**8 > 999
    >>> exact, 0.0 < p < 0.01
    (False, True)
    """
    if resamples < 1:
        raise DelaycvError(f"resamples {resamples} must be at least 1")
    ranks = np.asarray(ranks, dtype=np.float64)
    n, k = ranks.shape
    # batches of at most about 2**22 ranks: a large R (up to 10**6) over many treatments and
    # blocks would otherwise hold every permutation at once
    batch = max(1, 2**22 // (n * k))
    result = stats.permutation_test(
        tuple(ranks.T),
        _rank_sum_squares,
        permutation_type="samples",
        vectorized=True,
        n_resamples=resamples,
        batch=batch,
        alternative="greater",
        rng=np.random.default_rng(seed),
    )
    exact = math.factorial(k) ** n <= resamples
    return float(min(1.0, result.pvalue)), exact


def no_test_note(k: int, n: int) -> str:
    """Why ``k`` treatments over ``n`` blocks get no test ("" when they get one)."""
    if k < 2:
        return f"{k} treatment{'s' if k != 1 else ''}: nothing to rank"
    if n < MIN_BLOCKS:
        return f"{n} dataset{'s' if n != 1 else ''}: the tests need at least {MIN_BLOCKS}"
    return ""


def friedman_core(
    matrix: np.ndarray,
    alpha: float,
    up: bool,
    *,
    resamples: int = defaults.RESAMPLES,
    seed: int = defaults.TEST_SEED,
    tests: bool = True,
) -> dict:
    """The numbers of :func:`friedman_nemenyi` from a complete (n blocks x k) array; with
    ``tests=False`` the mean ranks and means alone (a family whose tests a note replaces)."""
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
        "p_permutation": math.nan,
        "permutation_exact": False,
        "nemenyi": None,
        "cd": math.nan,
        "note": no_test_note(k, n),
    }
    if out["note"] or not tests:
        return out
    import scikit_posthocs as sp  # import on use: the library's other users do not need it

    statistic = _friedman_statistic(ranks)
    out["statistic"] = statistic
    out["p_value"] = (
        float(stats.chi2.sf(statistic, k - 1)) if math.isfinite(statistic) else math.nan
    )
    out["p_permutation"], out["permutation_exact"] = friedman_permutation_p(
        ranks, resamples=resamples, seed=seed
    )
    out["nemenyi"] = sp.posthoc_nemenyi_friedman(ranks).to_numpy()
    out["cd"] = critical_difference(k, n, alpha)
    return out


def friedman_result(core: dict, treatments, blocks, alpha: float, up: bool) -> FriedmanResult:
    """The :class:`FriedmanResult` of :func:`friedman_core`'s numbers, named by ``treatments``
    and ``blocks``."""
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
        core["p_permutation"],
        core["permutation_exact"],
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
    values: pd.DataFrame,
    *,
    alpha: float = defaults.SIGNIFICANCE,
    higher_is_better: bool = True,
    resamples: int = defaults.RESAMPLES,
    seed: int = defaults.TEST_SEED,
) -> FriedmanResult:
    """Friedman's test, the Nemenyi p-values and the critical difference on ``values``.

    Parameters
    ----------
    values : pandas.DataFrame
        One row per block (e.g. a dataset), one column per treatment; no missing cell.
    alpha : float, default 0.05
        The level of the critical difference, in (0, 1).
    higher_is_better : bool, default True
        True: the largest value of a block ranks 1; False: the smallest.
    resamples, seed : int, default 5000 and 1
        R and the seed of the permutation p-value (:func:`friedman_permutation_p`).

    Returns
    -------
    FriedmanResult
        With fewer than 2 treatments or 3 blocks: no test, a ``note`` says why.

    Raises
    ------
    DelaycvError
        ``alpha`` outside (0, 1); ``resamples`` below 1; a missing cell (naming the first).

    Examples
    --------
    Three datasets that all rank a, b, c in that order: mean ranks 1, 2, 3 and
    ``chi2 = 12 * 3 / (3 * 4) * ((1 - 2)**2 + 0 + (3 - 2)**2) = 6`` on 2 degrees of freedom
    (p = exp(-3)); exactly, 6 of the 6**3 = 216 permutations (every dataset ranking alike) reach
    it; the critical difference is ``q_alpha(3) * sqrt(3 * 4 / 18)``:

    >>> v = pd.DataFrame({"a": [0.9, 0.8, 0.7], "b": [0.8, 0.7, 0.6], "c": [0.7, 0.6, 0.5]},
    ...                  index=["d1", "d2", "d3"])
    >>> r = friedman_nemenyi(v)
    >>> r.mean_ranks.tolist(), r.statistic, round(r.p_value, 4), round(r.cd, 3)
    ([1.0, 2.0, 3.0], 6.0, 0.0498, 1.914)
    >>> round(r.p_permutation * 216), r.permutation_exact
    (6, True)
    >>> round(float(r.nemenyi.loc["a", "c"]), 4)
    0.038
    >>> friedman_nemenyi(v.iloc[:2]).note
    '2 datasets: the tests need at least 3'

    With four datasets, one of which ranks c before b:

    >>> v = pd.DataFrame({"a": [0.9, 0.8, 0.7, 0.9], "b": [0.8, 0.7, 0.6, 0.7],
    ...                   "c": [0.7, 0.6, 0.5, 0.8]}, index=["d1", "d2", "d3", "d4"])
    >>> r = friedman_nemenyi(v)
    >>> r.mean_ranks.tolist(), r.statistic, round(r.cd, 3)
    ([1.0, 2.25, 2.75], 6.5, 1.657)
    """
    if not 0.0 < alpha < 1.0:
        raise DelaycvError(f"alpha {alpha} is not in (0, 1)")
    check_complete(values)
    core = friedman_core(
        values.to_numpy(dtype=np.float64),
        alpha,
        higher_is_better,
        resamples=resamples,
        seed=seed,
    )
    return friedman_result(core, values.columns, values.index, alpha, higher_is_better)
