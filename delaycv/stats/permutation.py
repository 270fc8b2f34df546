"""The paired permutation (sign-flip) test (docs/comparison.md; pure, opens no files).

Given the paired differences ``d_i = a_i - b_i`` of two things (learners, a learner's observed
and true values, two policies) over the n pairs where both values are known (pairs with a NaN
are dropped):

Under H0 (no difference) each ``d_i`` is as likely to be ``+|d_i|`` as ``-|d_i|``. The statistic
is ``T = |mean(d)|`` (two-sided), ``mean(d)`` (``greater``: a > b) or ``-mean(d)`` (``less``). Its
null distribution is that of the same statistic over sign-flipped differences ``s * d`` with
``s_i`` in ``{-1, +1}``:

* exact, when ``2**n <= R``: all ``2**n`` sign vectors, ``p = S / 2**n``;
* otherwise ``R`` random sign vectors (seeded), ``p = (S + 1) / (R + 1)``;

where S counts the sign vectors whose statistic is at least the observed one (values closer than
``1e-9 * mean(|d|)`` count as ties, so rounding never decides). The same sign vectors serve every
test with the same n, so results do not depend on the order in which tests are computed.

Degenerate input gives defined answers: all differences zero gives p = 1, n = 1 gives p = 1,
n = 0 (no pair without NaN) gives a NaN p-value.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from delaycv.common import defaults
from delaycv.common.choices import ALTERNATIVES
from delaycv.common.errors import DelaycvError


@dataclass(frozen=True)
class PermutationResult:
    """One paired permutation test, as :func:`permutation_test` gives it.

    Parameters
    ----------
    statistic : float
        The observed statistic: ``|mean(d)|``, ``mean(d)`` or ``-mean(d)`` by the alternative
        (module docstring).
    mean_diff : float
        ``mean(a - b)`` over the pairs used (NaN when there is none).
    p_value : float
        The permutation p-value (NaN when no pair is left).
    n : int
        The pairs used (those without a NaN).
    exact : bool
        True when every one of the ``2**n`` sign vectors was enumerated.
    resamples : int
        The number of sign vectors: ``2**n`` when exact, else the ``resamples`` asked for.

    Examples
    --------
    >>> r = permutation_test([3.0, 2.0], [1.0, 1.0])
    >>> r.mean_diff, r.p_value, r.n, r.exact, r.resamples
    (1.5, 0.5, 2, True, 4)
    """

    statistic: float
    mean_diff: float
    p_value: float
    n: int
    exact: bool
    resamples: int


def _all_signs(n: int) -> np.ndarray:
    """All 2**n sign vectors as rows of a (2**n, n) float matrix (the first row is all +1)."""
    codes = np.arange(2**n, dtype=np.int64)[:, None]
    bits = (codes >> np.arange(n, dtype=np.int64)[None, :]) & 1
    return 1.0 - 2.0 * bits


def _random_signs(n: int, resamples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng([int(seed), n])
    return rng.integers(0, 2, size=(resamples, n)).astype(np.float64) * 2.0 - 1.0


def _count_extreme(values: np.ndarray, signs: np.ndarray, alternative: str) -> np.ndarray:
    """For each row of ``values`` (m, n), count sign vectors whose statistic >= the observed one."""
    m, n = values.shape
    counts = np.zeros(m, dtype=np.int64)
    chunk = max(1, (1 << 22) // max(1, signs.shape[0]))
    for start in range(0, m, chunk):
        v = values[start : start + chunk]
        observed = v.sum(axis=1) / n
        null = (v @ signs.T) / n
        tol = 1e-9 * np.abs(v).mean(axis=1)
        if alternative == "two-sided":
            hits = np.abs(null) >= (np.abs(observed) - tol)[:, None]
        elif alternative == "greater":
            hits = null >= (observed - tol)[:, None]
        else:
            hits = null <= (observed + tol)[:, None]
        counts[start : start + chunk] = hits.sum(axis=1)
    return counts


def _check_alternative(alternative: str) -> None:
    if alternative not in ALTERNATIVES:
        raise DelaycvError(
            f"alternative {alternative!r} is unknown (expected one of {ALTERNATIVES})"
        )


def _by_valid_count(d: np.ndarray) -> Iterable[tuple[int, np.ndarray, np.ndarray]]:
    """Group the rows of ``d`` by their number k of non-NaN values: yield (k, rows, (len, k) values)."""
    valid = ~np.isnan(d)
    counts = valid.sum(axis=1)
    for k in np.unique(counts):
        rows = np.flatnonzero(counts == k)
        values = d[rows][valid[rows]].reshape(len(rows), int(k))
        yield int(k), rows, values


def smallest_p(
    n, exact, resamples, alternative: str | Sequence[str] = defaults.ALTERNATIVE
) -> np.ndarray:
    """The smallest p-value each sign-flip test could give, whatever its differences.

    ``2 / 2**n`` (two-sided) or ``1 / 2**n`` for an exact test of n pairs, where only the
    observed signs (and their mirror image) reach the observed statistic; ``1 / (R + 1)`` for one
    over R random sign vectors; NaN with no pair.

    Parameters
    ----------
    n, exact, resamples : array_like
        Each test's pairs, whether it was exact, and R (ignored where exact); broadcast together.
    alternative : str or sequence of str, default "two-sided"
        Each test's alternative, or one for all.

    Returns
    -------
    numpy.ndarray of float

    Examples
    --------
    >>> smallest_p([5, 10, 20, 0], [True, True, False, False], 5000).tolist()
    [0.0625, 0.001953125, 0.0001999600079984003, nan]
    >>> smallest_p(5, True, 5000, "greater").tolist()
    0.03125
    >>> smallest_p(5000, True, 5000).tolist()  # (2 / 2**5000 is below the smallest float)
    0.0
    """
    n = np.asarray(n, dtype=np.float64)
    two = np.asarray(alternative) == "two-sided"
    # (2^-n, not 1 / 2^n: 2^n overflows past 1023 pairs, with a RuntimeWarning)
    exact_floor = np.where(two, 2.0, 1.0) * np.exp2(-n)
    floor = np.where(
        np.asarray(exact, dtype=bool), exact_floor, 1.0 / (np.asarray(resamples) + 1.0)
    )
    return np.where(n > 0, floor, np.nan)


def sign_flip_pvalues(
    d: np.ndarray,
    *,
    resamples: int = defaults.RESAMPLES,
    alternative: str = defaults.ALTERNATIVE,
    seed: int = defaults.TEST_SEED,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised paired permutation tests, one per row of the differences ``d`` (m, n).

    See the module docstring for the statistic and the p-value formulas. NaN entries are dropped
    pair-wise, so rows may have different numbers of pairs; rows with the same number k of pairs
    share one set of sign vectors.

    Parameters
    ----------
    d : array_like
        The paired differences ``a - b``, shape (m, n) (a 1-D array is one row).
    resamples : int, default 5000
        R: a row with k pairs is tested exactly over all ``2**k`` sign vectors when ``2**k <= R``,
        else over R random ones. At least 1.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        ``"greater"``: the differences are positive (a > b); ``"less"``: negative.
    seed : int, default 1
        The seed of the random sign vectors (drawn from ``(seed, k)``).

    Returns
    -------
    p_value : numpy.ndarray
        Length m; NaN for a row with no value.
    n : numpy.ndarray
        Length m, the pairs used in each row.
    exact : numpy.ndarray of bool
        Length m, True where all ``2**n`` sign vectors were enumerated (False for a row with no
        value).

    Raises
    ------
    DelaycvError
        An unknown ``alternative``, or ``resamples`` below 1.

    Examples
    --------
    Four differences 0.1, 0.2, 0.3, -0.1 (mean 0.125): 6 of the 16 sign vectors give
    ``|mean| >= 0.125``, the 3 whose only negative value (if any) is one of the two 0.1 (means
    0.175, 0.125, 0.125) and their mirror images; ``greater`` counts the first 3:

    >>> d = np.array([[0.1, 0.2, 0.3, -0.1]])
    >>> p, n, exact = sign_flip_pvalues(d)
    >>> p.tolist(), n.tolist(), exact.tolist()
    ([0.375], [4], [True])
    >>> sign_flip_pvalues(d, alternative="greater")[0].tolist()
    [0.1875]

    A single pair gives p = 1, no pair NaN; with fewer resamples than sign vectors the p-value is
    ``(S + 1) / (R + 1)`` over random sign vectors:

    >>> sign_flip_pvalues(np.array([[1.0, np.nan], [np.nan, np.nan]]))[0].tolist()
    [1.0, nan]
    >>> p, n, exact = sign_flip_pvalues(np.array([[1.0, 2.0, 3.0, 4.0]]), resamples=8)
    >>> round(float(p[0]), 4), bool(exact[0])
    (0.3333, False)
    """
    _check_alternative(alternative)
    if resamples < 1:
        raise DelaycvError(f"resamples {resamples} must be at least 1")
    d = np.atleast_2d(np.asarray(d, dtype=np.float64))
    m = d.shape[0]
    pvalues = np.full(m, np.nan)
    exact = np.zeros(m, dtype=bool)
    n = (~np.isnan(d)).sum(axis=1)
    for k, rows, values in _by_valid_count(d):
        if k == 0:
            continue
        if 2**k <= resamples:
            signs = _all_signs(k)
            pvalues[rows] = _count_extreme(values, signs, alternative) / signs.shape[0]
            exact[rows] = True
        else:
            signs = _random_signs(k, resamples, seed)
            pvalues[rows] = (_count_extreme(values, signs, alternative) + 1) / (resamples + 1)
    return pvalues, n, exact


def permutation_test(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = defaults.RESAMPLES,
    alternative: str = defaults.ALTERNATIVE,
    seed: int = defaults.TEST_SEED,
) -> PermutationResult:
    """Paired permutation test of learner a against learner b on paired values (e.g. per fold).

    The sign-flip test of :func:`sign_flip_pvalues` on the one row of differences ``a - b``.

    Parameters
    ----------
    a, b : sequence of float
        The paired values, two 1-D sequences of one length; a pair with a NaN on either side is
        dropped.
    resamples : int, default 5000
        R (see :func:`sign_flip_pvalues`): exact over all ``2**n`` sign vectors when
        ``2**n <= R``. At least 1.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        ``"greater"`` tests whether a's values are larger than b's, ``"less"`` smaller.
    seed : int, default 1
        The seed of the random sign vectors.

    Returns
    -------
    PermutationResult

    Raises
    ------
    DelaycvError
        ``a`` and ``b`` are not 1-D of one length, an unknown ``alternative``, ``resamples``
        below 1.

    Examples
    --------
    Differences 0.1, 0.1, 0.05: only the observed signs and their mirror image reach
    ``|mean| = 0.0833``, 2 of the 8 sign vectors:

    >>> r = permutation_test([0.8, 0.9, 0.85], [0.7, 0.8, 0.8])
    >>> r.p_value, r.n, r.exact, r.resamples, round(r.mean_diff, 4)
    (0.25, 3, True, 8, 0.0833)
    >>> permutation_test([0.8, 0.9, 0.85], [0.7, 0.8, 0.8], alternative="less").p_value
    1.0
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise DelaycvError(
            f"paired values need two 1-D arrays of one length, got {a.shape} and {b.shape}"
        )
    d = a - b
    p, n, exact = sign_flip_pvalues(
        d[None, :], resamples=resamples, alternative=alternative, seed=seed
    )
    kept = d[~np.isnan(d)]
    mean = float(kept.mean()) if kept.size else float("nan")
    statistic = (
        abs(mean) if alternative == "two-sided" else (mean if alternative == "greater" else -mean)
    )
    return PermutationResult(
        statistic=statistic,
        mean_diff=mean,
        p_value=float(p[0]),
        n=int(n[0]),
        exact=bool(exact[0]),
        resamples=int(2 ** n[0]) if exact[0] else int(resamples),
    )
