"""Comparing learners on merged per-fold checkpoint tables (design card §8; pure, opens no files).

Every learner of a run sees the same fold split, so the per-fold values of two learners pair up:
with several seeds the pairs are ``(seed, fold)``. For two learners a and b, one metric, one
reference (``observed`` or ``true`` labels) and one checkpoint, the differences are
``d_i = a_i - b_i`` over the n pairs where both values are known (pairs with a NaN are dropped).

A pair is never counted twice: when a seed's fold-by-fold values of *both* learners are identical
(``==``) to an earlier seed's (a fixed split and deterministic learners), that seed's pairs repeat
the earlier ones and are left out (:func:`replicate_seeds`); ``n`` counts the pairs used and
``n_duplicates`` those left out.

Paired permutation (sign-flip) test
    Under H0 (no difference between the learners) each ``d_i`` is as likely to be ``+|d_i|`` as
    ``-|d_i|``. The statistic is ``T = |mean(d)|`` (two-sided), ``mean(d)`` (``greater``: a > b) or
    ``-mean(d)`` (``less``). Its null distribution is that of the same statistic over sign-flipped
    differences ``s * d`` with ``s_i`` in ``{-1, +1}``:

    * exact, when ``2**n <= R``: all ``2**n`` sign vectors, ``p = S / 2**n``;
    * otherwise ``R`` random sign vectors (seeded), ``p = (S + 1) / (R + 1)``;

    where S counts the sign vectors whose statistic is at least the observed one (values closer than
    ``1e-9 * mean(|d|)`` count as ties, so rounding never decides). The same sign vectors serve every
    test with the same n, so results do not depend on the order in which tests are computed.

Across the learner pairs of one family (dataset, policy, estimator, reference, checkpoint, metric),
p-values are Holm-adjusted (``p_holm``). Each test also reports the mean difference with a 95 %
t-interval ``mean(d) ± t(0.975, n-1) * sd(d) / sqrt(n)``, Cliff's delta between the two learners'
fold values ``δ = (#{a_i > b_j} - #{a_i < b_j}) / n²`` over all i, j, the Wilcoxon signed-rank
p-value (vectorised; on each row the value of scipy's ``wilcoxon`` with its defaults, see
:func:`wilcoxon_pvalues`) and the sign-test p-value (scipy's binomial test of the count of positive
differences among the non-zero ones).

Degenerate input gives defined answers: all differences zero gives p = 1 (every test), n = 1 gives
p = 1 and a NaN interval, n = 0 (no pair without NaN) gives NaN p-values and result ``"n.s."``.

McNemar's test (:func:`mcnemar`) compares two learners' per-instance correctness from their
prediction logs, per fold.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from delaycv.common.checks import is_number
from delaycv.common.choices import ALTERNATIVES, REFERENCES
from delaycv.common.errors import DelaycvError, InputError
from delaycv.metrics.effort_names import EFFORT_LOWER_IS_BETTER
from delaycv.protocol.durations import Window, parse_window

#: Keys of a comparison family (besides the metric); learners are compared within them.
KEYS = ("dataset", "policy", "estimator", "reference", "checkpoint")
#: What pairs two learners' values.
PAIR = ("seed", "fold")


def table_columns(metrics: str | Iterable[str]) -> list[str]:
    """The columns of the per-fold table that the tests, the bias tests, the rankings and the
    figures of ``metrics`` read (a merged table has ~90; reading only these is ~5 times faster):
    those they need (:func:`required_columns`) and ``evaluated``, which says why a test has no
    value (a policy that released no label)."""
    return list(dict.fromkeys([*required_columns(metrics), RELEASE_COLUMN]))


def required_columns(metrics: str | Iterable[str]) -> list[str]:
    """The columns the tests of ``metrics`` cannot do without."""
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    return list(dict.fromkeys([*KEYS, "learner", *PAIR, "time", *metrics]))


#: Metrics where a smaller value is better (everything else: larger is better).
_LOWER_IS_BETTER = re.compile(
    r"^(fp|fn|brier|log_loss|unknown_rate(_[01])?|fpr(_[01])?|.*_fpr(_[01])?)$"
)

TEST_COLUMNS = [
    "dataset",
    "policy",
    "estimator",
    "reference",
    "at",
    "checkpoint",
    "time",
    "metric",
    "learner_a",
    "learner_b",
    "n",
    "n_duplicates",
    "mean_a",
    "mean_b",
    "mean_diff",
    "ci_low",
    "ci_high",
    "cliffs_delta",
    "statistic",
    "p_value",
    "exact",
    "resamples",
    "alternative",
    "p_holm",
    "family_size",
    "significant",
    "result",
    "better",
    "wilcoxon_p",
    "sign_p",
    "note",
]


def higher_is_better(metric: str) -> bool:
    """True when a larger value of ``metric`` is better (False for losses, error counts, FPR,
    and the effort-aware ``ifa`` and ``effort_at_recall_20``).

    >>> higher_is_better("popt"), higher_is_better("ifa"), higher_is_better("fpr_1")
    (True, False, False)
    """
    return not (_LOWER_IS_BETTER.match(metric) or metric in EFFORT_LOWER_IS_BETTER)


# --------------------------------------------------------------------------- sign-flip test core


@dataclass(frozen=True)
class PermutationResult:
    """One paired permutation test: ``statistic`` (see module doc), ``mean_diff`` = mean(a - b),
    ``p_value``, ``n`` pairs used, ``exact`` (full enumeration) and the number of sign vectors."""

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


def sign_flip_pvalues(
    d: np.ndarray,
    *,
    resamples: int = 5000,
    alternative: str = "two-sided",
    seed: int = 1,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised paired permutation tests, one per row of the differences ``d`` (m, n).

    NaN entries are dropped pair-wise. Returns ``(p_value, n, exact)`` arrays of length m; rows
    with no value have p = NaN. See the module docstring for the statistic and the p-value formulas.
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
    resamples: int = 5000,
    alternative: str = "two-sided",
    seed: int = 1,
) -> PermutationResult:
    """Paired permutation test of learner a against learner b on paired values (e.g. per fold).

    ``alternative="greater"`` tests whether a's values are larger than b's.

    >>> permutation_test([0.8, 0.9, 0.85], [0.7, 0.8, 0.8]).p_value  # exact: 2 of 8 sign vectors
    0.25
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


# --------------------------------------------------------------------------- companions


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm step-down adjusted p-values of one family; NaN p-values are left out (and stay NaN).

    With the m known p-values sorted ``p_(1) <= ... <= p_(m)``:
    ``p_holm_(i) = max_{j <= i} min(1, (m - j + 1) * p_(j))``.

    >>> holm([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
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
    (ddof 1). Rows with fewer than 2 values get a NaN interval; all-equal values a zero-width one.
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
    NaN for rows with no kept column.
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
    """Row-wise Wilcoxon signed-rank p-values, vectorised; on each row equal to
    ``scipy.stats.wilcoxon(row, alternative=alternative)`` with its defaults (zero differences
    dropped, ``zero_method="wilcox"``, no continuity correction, ``method="auto"``) on that row alone.

    NaN entries drop first. With k values, of which ``n_r`` are non-zero, ranked by ``|d|`` with
    average ranks for ties, and ``R+`` the sum of the ranks of the positive differences:

    * no tie and no zero, k <= 50: the exact null distribution of R+ (scipy ``method="exact"``);
    * ties or zeros, k <= 13: the exact sign-flip distribution of the tied ranks over all 2**k sign
      vectors (scipy's permutation path, which enumerates them all);
    * otherwise the normal approximation ``z = (R+ - n_r(n_r+1)/4) / sqrt(n_r(n_r+1)(2n_r+1)/24 -
      sum(t^3 - t)/48)`` over the tie groups t of the non-zero |d| (scipy ``method="asymptotic"``).

    Two-sided p = ``min(1, 2 min(P(R+ >= r), P(R+ <= r)))``. Rows whose values are all zero give 1,
    rows without values NaN. Rows are classified one by one (scipy's ``auto`` decides once for a
    whole batch, which sends every row of a batch with one tie to its slow permutation path).
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
    """Row-wise sign-test p-values: scipy's exact binomial test of the number of positive
    differences among the non-zero ones, with success probability 1/2. No non-zero difference
    gives 1, no value at all NaN."""
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


# --------------------------------------------------------------------------- tables


def _stage_clock(progress: Callable[[str], None] | None) -> Callable[[str], None]:
    """``say(message)``: pass ``message`` and the seconds since this call to ``progress`` (if any)."""
    start = time.perf_counter()

    def say(message: str) -> None:
        if progress is not None:
            progress(f"{message} [{time.perf_counter() - start:.1f} s]")

    return say


def _require_columns(table: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise InputError(
            f"{what} lacks column(s) {', '.join(missing)}",
            path=table.attrs.get("path", "<table>"),
            location="columns",
            expected="the per-fold checkpoint table of docs/architecture.md",
        )


def last_checkpoints(table: pd.DataFrame) -> pd.Series:
    """The "last" checkpoint of each dataset: the largest checkpoint in the table, by dataset."""
    _require_columns(table, ["dataset", "checkpoint"], "the per-fold table")
    return table.groupby("dataset", sort=True)["checkpoint"].max()


#: Columns of :func:`choose_checkpoints`.
CHOSEN_COLUMNS = ["dataset", "at", "checkpoint", "note"]
#: The kinds of request of a mapping given to :func:`choose_checkpoints`, in the order they are
#: answered.
REQUEST_KINDS = ("positions", "fractions", "times")


def _fraction_label(fraction: float) -> str:
    return f"fraction_{float(fraction)}"


def describe_time(seconds: float) -> str:
    """A Unix time as a reader reads it: ``2019-01-01 00:00:00 UTC (Unix 1546300800)``."""
    stamp = pd.Timestamp(int(seconds), unit="s")
    return f"{stamp:%Y-%m-%d %H:%M:%S} UTC (Unix {int(seconds)})"


def _duplicates(values: Sequence, what: str) -> None:
    """Refuse a request that lists a value twice, naming every repeated value."""
    counts: dict = {}
    for value in values:
        key = float(value) if is_number(value) else value
        counts[key] = counts.get(key, 0) + 1
    repeated = [(v, c) for v, c in counts.items() if c > 1]
    if repeated:
        shown = ", ".join(
            f"{v:g} ({c} times)" if is_number(v) else f"{v!r} ({c} times)" for v, c in repeated
        )
        raise DelaycvError(
            f"{what}: duplicate value{'s' if len(repeated) > 1 else ''} {shown} (give each once)"
        )


def check_checkpoint_request(spec: str | int | Iterable[int] | Mapping[str, Sequence]):
    """Check a request of :func:`choose_checkpoints` without a table (what the workflow's config
    and ``delaycv compare --checkpoint`` can check before any work) and return it, a list of
    checkpoint numbers as a list. Raises :class:`~delaycv.common.errors.DelaycvError` naming the key and
    the value: an unknown word, a mapping with another key or an empty list, a position that is
    not an integer >= 1, a fraction outside (0, 1], a time that is not a number, and a value listed
    twice (``checkpoints.positions: duplicate value 1000 (2 times) (give each once)``)."""
    if isinstance(spec, str):
        if spec not in ("last", "all"):
            raise DelaycvError(
                f"checkpoints {spec!r} is unknown (expected 'last', 'all', {{positions: [...]}}, "
                "{fractions: [...]}, {times: [...]} or checkpoint numbers)"
            )
        return spec
    if isinstance(spec, Mapping):
        kinds = [k for k in REQUEST_KINDS if k in spec]
        if not kinds or set(spec) - set(REQUEST_KINDS):
            raise DelaycvError(
                f"checkpoints {dict(spec)!r}: expected positions, fractions, times or several "
                "of them (no other key)"
            )
        for kind in kinds:
            if isinstance(spec[kind], str | bytes) or not list(spec[kind]):
                raise DelaycvError(f"checkpoints.{kind} is empty (expected at least one value)")
        for value in spec.get("positions", []):
            if not is_number(value) or int(value) != value or value < 1:
                raise DelaycvError(
                    f"checkpoint position {value!r} is not a stream position (an integer >= 1)"
                )
        for value in spec.get("fractions", []):
            if not is_number(value) or not 0 < float(value) <= 1:
                raise DelaycvError(f"checkpoint fraction {value!r} is not in (0, 1]")
        for value in spec.get("times", []):
            if not is_number(value) or not math.isfinite(float(value)):
                raise DelaycvError(f"checkpoint time {value!r} is not a Unix time (seconds)")
        for kind in kinds:
            _duplicates(list(spec[kind]), f"checkpoints.{kind}")
        return spec
    wanted = [spec] if isinstance(spec, int | np.integer) else list(spec)
    for value in wanted:
        if not is_number(value) or int(value) != value or value < 1:
            raise DelaycvError(f"checkpoint {value!r} is not a checkpoint number (an integer >= 1)")
    _duplicates(wanted, "checkpoints")
    return [int(c) for c in wanted]


def choose_checkpoints(
    table: pd.DataFrame, spec: str | int | Iterable[int] | Mapping[str, Sequence] = "last"
) -> pd.DataFrame:
    """Which checkpoint of each dataset answers each requested position: the one mapping that the
    learner tests, the bias tests and the policy contrasts (and any later table) use.

    ``spec`` (the workflow's ``tests.checkpoints``):

    * ``"last"``: the largest checkpoint of each dataset (``at = "last"``);
    * ``"all"``: every checkpoint (``at = "all"``);
    * ``{"positions": [1000, 2000, ...]}``: stream positions p (instances, 1-based); each maps, per
      dataset, to the first checkpoint at or after p (``at = "position_1000"``);
    * ``{"fractions": [0.1, ..., 1.0]}``: fractions f in (0, 1] of each stream, the position
      ``ceil(f * n)`` with n the stream's length (its last checkpoint is its last instance); mapped
      as positions (``at = "fraction_0.1"``);
    * ``{"times": [T, ...]}``: Unix times (s); each maps to the last checkpoint at or before T
      (the evaluation as it stood at T; ``at = "time_<T>"``; the table needs its ``time``
      column); a mapping may hold several kinds (positions, then fractions, then times);
    * an int or a list of ints: those exact checkpoints (``at = "checkpoint_<n>"``).

    Returns one row per (dataset, requested position), in the order requested: ``dataset``,
    ``at``, ``checkpoint`` (nullable Int64) and ``note``. The note is ``""`` when the request is a
    checkpoint itself; it says so when the request is answered by another checkpoint
    (``"requested position 1000, tested at checkpoint 1020 (the next checkpoint)"``) and why a
    request has no checkpoint: such a row is not dropped, it has no checkpoint and the tables keep
    it (with no test) so that the gap shows (``"requested position 5000: beyond the stream
    (n = 3000), no test"``; a time before the first or after the last checkpoint; an exact
    checkpoint the dataset does not have). A value listed twice is refused
    (:func:`check_checkpoint_request`).

    >>> t = pd.DataFrame({"dataset": ["a"] * 3, "checkpoint": [500, 1000, 1200]})
    >>> chosen = choose_checkpoints(t, {"positions": [600, 1000, 1500]})
    >>> chosen[["at", "checkpoint"]].to_numpy().tolist()
    [['position_600', 1000], ['position_1000', 1000], ['position_1500', <NA>]]
    >>> chosen["note"].tolist()  # doctest: +NORMALIZE_WHITESPACE
    ['requested position 600, tested at checkpoint 1000 (the next checkpoint)', '',
     'requested position 1500: beyond the stream (n = 1200), no test']
    >>> choose_checkpoints(t, {"fractions": [0.5, 1.0]})["checkpoint"].tolist()
    [1000, 1200]
    """
    spec = check_checkpoint_request(spec)
    _require_columns(table, ["dataset", "checkpoint"], "the per-fold table")
    times_wanted = isinstance(spec, Mapping) and "times" in spec
    if times_wanted:
        _require_columns(table, ["time"], "the per-fold table (checkpoints.times)")
    present = table[["dataset", "checkpoint", *(["time"] if times_wanted else [])]]
    present = present.drop_duplicates(["dataset", "checkpoint"])
    by_dataset = {
        d: g.sort_values("checkpoint", kind="stable")
        for d, g in present.groupby("dataset", sort=True)
    }
    rows: list[tuple[str, str, int | None, str]] = []

    def first_at_or_after(dataset: str, label: str, position: int, asked: str) -> None:
        points = by_dataset[dataset]["checkpoint"].to_numpy(np.int64)
        n = int(points[-1])
        if position > n:
            rows.append((dataset, label, None, f"{asked}: beyond the stream (n = {n}), no test"))
            return
        found = int(points[np.searchsorted(points, position)])
        note = (
            ""
            if found == position
            else f"{asked}, tested at checkpoint {found} (the next checkpoint)"
        )
        rows.append((dataset, label, found, note))

    def last_at_or_before(dataset: str, label: str, when: float) -> None:
        frame = by_dataset[dataset]
        points = frame["checkpoint"].to_numpy(np.int64)
        times = frame["time"].to_numpy(np.float64)
        asked = f"requested time {describe_time(when)}"
        if when < times.min():
            rows.append(
                (
                    dataset,
                    label,
                    None,
                    f"{asked}: before the stream (its first checkpoint, {int(points[0])}, is at "
                    f"{describe_time(times.min())}), no test",
                )
            )
            return
        if when > times.max():
            rows.append(
                (
                    dataset,
                    label,
                    None,
                    f"{asked}: after the stream (its last checkpoint, {int(points[-1])}, is at "
                    f"{describe_time(times.max())}), no test",
                )
            )
            return
        i = int(np.flatnonzero(times <= when)[-1])
        note = (
            ""
            if times[i] == when
            else f"{asked}, tested at checkpoint {int(points[i])} (at "
            f"{describe_time(times[i])}, the last checkpoint before it)"
        )
        rows.append((dataset, label, int(points[i]), note))

    if isinstance(spec, str):
        for dataset, frame in by_dataset.items():
            points = frame["checkpoint"].to_numpy(np.int64)
            chosen = points[-1:] if spec == "last" else points
            rows.extend((dataset, spec, int(c), "") for c in chosen)
    elif isinstance(spec, Mapping):
        for dataset, frame in by_dataset.items():
            n = int(frame["checkpoint"].max())
            for value in spec.get("positions", []):
                p = int(value)
                first_at_or_after(dataset, f"position_{p}", p, f"requested position {p}")
            for value in spec.get("fractions", []):
                # rounded first, so that 0.3 * 1000 is 300, not 301
                target = max(1, math.ceil(round(float(value) * n, 9)))
                first_at_or_after(
                    dataset,
                    _fraction_label(value),
                    target,
                    f"requested fraction {float(value):g} = position {target} of {n}",
                )
            for value in spec.get("times", []):
                when = float(value)
                label = f"time_{int(when)}" if when.is_integer() else f"time_{when}"
                last_at_or_before(dataset, label, when)
    else:
        for dataset, frame in by_dataset.items():
            points = set(frame["checkpoint"].astype(np.int64).tolist())
            for c in spec:
                if c in points:
                    rows.append((dataset, f"checkpoint_{c}", c, ""))
                else:
                    rows.append(
                        (
                            dataset,
                            f"checkpoint_{c}",
                            None,
                            f"requested checkpoint {c}: not a checkpoint of the table, no test",
                        )
                    )
    out = pd.DataFrame(rows, columns=CHOSEN_COLUMNS)
    out["checkpoint"] = out["checkpoint"].astype("Int64")
    return out


def at_checkpoints(table: pd.DataFrame, chosen: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``table`` at the checkpoints of ``chosen`` (from :func:`choose_checkpoints`)."""
    found = chosen.dropna(subset=["checkpoint"])
    keys = pd.MultiIndex.from_arrays(
        [found["dataset"].to_numpy(object), found["checkpoint"].to_numpy(np.int64)]
    )
    here = pd.MultiIndex.from_arrays(
        [table["dataset"].to_numpy(object), table["checkpoint"].to_numpy(np.int64)]
    )
    return table[here.isin(keys)]


def label_checkpoints(
    out: pd.DataFrame, chosen: pd.DataFrame, columns: Sequence[str]
) -> pd.DataFrame:
    """A result table computed at the chosen checkpoints, with the request's ``at`` beside each
    ``checkpoint`` and its ``note`` (a row per requested label: two labels that map to one checkpoint
    give two rows), plus one row per (dataset, label) with no checkpoint (a position beyond the
    stream): its ``checkpoint`` empty, counts 0, flags false, text empty, numbers NaN, and the note.
    ``columns``: the output's columns in order (``at`` and ``note`` among them)."""
    found = chosen.dropna(subset=["checkpoint"]).astype({"checkpoint": np.int64})
    labelled = out.merge(found, on=["dataset", "checkpoint"], how="inner", sort=False)
    missing = chosen[chosen["checkpoint"].isna()]
    if not missing.empty:
        filler = {}
        for column in columns:
            if column in CHOSEN_COLUMNS:
                continue
            kind = labelled[column].dtype.kind if column in labelled else "f"
            if column == "time":  # the instant of a checkpoint that does not exist
                kind = "f"
            filler[column] = {"b": False, "i": 0, "u": 0, "f": np.nan}.get(kind, "")
        gaps = missing.assign(**filler)
        frames = [f for f in (labelled, gaps) if not f.empty]
        labelled = pd.concat(frames, ignore_index=True) if len(frames) > 1 else gaps
    labelled["checkpoint"] = labelled["checkpoint"].astype("Int64")
    return labelled[list(columns)].reset_index(drop=True)


#: The column of the per-fold table that says whether a policy released anything: the number of
#: instances a fold has evaluated (scored once its label was released) by the checkpoint.
RELEASE_COLUMN = "evaluated"


def released_nothing(table: pd.DataFrame) -> pd.Series | None:
    """(dataset, policy, estimator, checkpoint) -> True where no fold of any learner has evaluated
    an instance by that checkpoint: the policy had released no label yet (every evaluation pending,
    every metric undefined). None when ``table`` lacks the column :data:`RELEASE_COLUMN`."""
    if RELEASE_COLUMN not in table.columns:
        return None
    keys = ["dataset", "policy", "estimator", "checkpoint"]
    return table.groupby(keys, sort=False)[RELEASE_COLUMN].max().fillna(0).le(0)


def nothing_released_note(policy: str, checkpoint: int, last: int) -> str:
    """The note of a test that has no value because ``policy`` released no label by
    ``checkpoint`` (``last``: the dataset's last checkpoint, its stream's length)."""
    if checkpoint >= last:
        return (
            f"policy {policy} released no label before the end of the stream (n = {last}; e.g. "
            "a window longer than the stream): every evaluation pending, no value to test"
        )
    return (
        f"policy {policy} released no label by checkpoint {checkpoint}: every evaluation "
        "pending, no value to test"
    )


def join_notes(*notes: str) -> str:
    """The non-empty notes of a row, joined by "; "."""
    return "; ".join(n for n in notes if n)


def note_empty_tests(
    out: pd.DataFrame,
    table: pd.DataFrame,
    undefined: Callable[[pd.Series], str],
    policies: Callable[[pd.Series], Sequence[str]] = lambda row: [row["policy"]],
) -> pd.DataFrame:
    """Give every row of ``out`` that has a checkpoint but no pair to test (``n == 0``) a note
    saying why (joined to the note it has): a policy of ``policies(row)`` that released no label
    by that checkpoint (:func:`nothing_released_note`, when ``table`` has :data:`RELEASE_COLUMN`),
    else ``undefined(row)`` (the metric has no value on both sides of any pair)."""
    if out.empty:
        return out
    empty = out["checkpoint"].notna().to_numpy() & (out["n"].to_numpy() == 0)
    if not empty.any():
        return out
    nothing = released_nothing(table)
    last = last_checkpoints(table)
    notes = out["note"].astype(object).to_numpy().copy()
    nothing_at = set(nothing[nothing].index) if nothing is not None else set()
    rows = out[empty]
    cache: dict[tuple, str] = {}  # rows of one family differ only in the learners or the metric
    for i, (_, row) in zip(np.flatnonzero(empty), rows.iterrows(), strict=True):
        checkpoint = int(row["checkpoint"])
        why = ""
        for policy in policies(row):
            key = (row["dataset"], policy, row["estimator"], checkpoint)
            if key in nothing_at:
                if key not in cache:
                    cache[key] = nothing_released_note(
                        policy, checkpoint, int(last[row["dataset"]])
                    )
                why = cache[key]
                break
        notes[i] = join_notes(str(notes[i] or ""), why or undefined(row))
    out = out.copy()
    out["note"] = notes
    return out


def untested_notes(frame: pd.DataFrame) -> list[tuple[str, int]]:
    """The distinct notes of the rows of a result table that have a checkpoint but no test
    (``n == 0``: e.g. a policy that released no label), with how many rows carry each, in order
    of first appearance (for a log or a command's summary)."""
    if frame.empty or "note" not in frame or "n" not in frame:
        return []
    rows = frame[frame["checkpoint"].notna() & frame["n"].eq(0)]
    counts = rows["note"].fillna("").astype(str).value_counts(sort=False)
    return [(note, int(count)) for note, count in counts.items() if note]


def select_checkpoints(table: pd.DataFrame, checkpoints: str | int | Iterable[int]) -> pd.DataFrame:
    """Rows at ``"all"`` checkpoints, the ``"last"`` one per dataset, or the given positions."""
    if isinstance(checkpoints, str):
        if checkpoints == "all":
            return table
        if checkpoints == "last":
            last = table["dataset"].map(last_checkpoints(table))
            return table[table["checkpoint"] == last]
        raise DelaycvError(
            f"checkpoints {checkpoints!r} is unknown (expected 'all', 'last' or positions)"
        )
    wanted = (
        [int(checkpoints)]
        if isinstance(checkpoints, int | np.integer)
        else [int(c) for c in checkpoints]
    )
    return table[table["checkpoint"].isin(wanted)]


def _full_pair_grid(wide: pd.DataFrame) -> pd.DataFrame:
    """Columns of ``wide`` (seed, fold) completed to every seed x every fold (missing ones NaN), in
    seed-major order, so that the values reshape to (rows, seeds, folds)."""
    seeds = sorted(wide.columns.unique(level=0))
    folds = sorted(wide.columns.unique(level=1))
    return wide.reindex(columns=pd.MultiIndex.from_product([seeds, folds], names=list(PAIR)))


def replicate_seeds(values: Sequence[np.ndarray], seeds: int) -> np.ndarray:
    """Which (seed, fold) pairs repeat another seed: True where the pair is to be left out.

    ``values`` are arrays of one shape (m, seeds * folds), columns in seed-major (seed, fold) order
    (e.g. the two learners' values of each test). In row i, seed s repeats an earlier seed s' when,
    fold by fold, every array holds the same value at (s, fold) as at (s', fold) (bit-for-bit
    ``==``; NaN only against NaN). Then all of seed s's pairs are marked; the first seed of each
    group of identical seeds is kept. Equality is transitive, so the kept seeds are pairwise
    distinct. Rows are judged one by one (one test, one checkpoint, one metric).
    """
    m, columns = values[0].shape
    if seeds < 1 or columns % seeds:
        raise DelaycvError(f"{columns} (seed, fold) columns do not split into {seeds} seeds")
    folds = columns // seeds
    shaped = [np.asarray(v, dtype=np.float64).reshape(m, seeds, folds) for v in values]
    repeat = np.zeros((m, seeds), dtype=bool)
    for later in range(1, seeds):
        for earlier in range(later):
            same = np.ones(m, dtype=bool)
            for v in shaped:
                x, y = v[:, later], v[:, earlier]
                same &= ((x == y) | (np.isnan(x) & np.isnan(y))).all(axis=1)
            repeat[:, later] |= same
    return np.repeat(repeat, folds, axis=1)


def checkpoint_times(table: pd.DataFrame, rows: pd.DataFrame) -> np.ndarray:
    """The time (Unix s) of each row's (dataset, checkpoint) in ``table``: the same for every
    run of a dataset, the earliest if the runs disagree."""
    times = table.groupby(["dataset", "checkpoint"])["time"].min()
    return times.reindex(pd.MultiIndex.from_frame(rows[["dataset", "checkpoint"]])).to_numpy()


def distinct_pairs(
    a: np.ndarray, b: np.ndarray, seeds: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The paired values every test uses: ``a`` and ``b`` (m x seeds*folds, seed-major) with NaN
    on both sides where either is missing, and on the pairs of a seed that repeats an earlier one
    (:func:`replicate_seeds`); and per row the number of pairs left out for repeating a seed."""
    missing = np.isnan(a - b)
    a = np.where(missing, np.nan, a)
    b = np.where(missing, np.nan, b)
    repeat = replicate_seeds([a, b], seeds)
    duplicates = (repeat & ~missing).sum(axis=1)
    return np.where(repeat, np.nan, a), np.where(repeat, np.nan, b), duplicates


def check_test_arguments(
    table: pd.DataFrame,
    metrics: str | Iterable[str],
    references: Iterable[str],
    alpha: float,
    *,
    verb: str,
) -> list[str]:
    """The metrics as a list without repeats, after the checks every test of a per-fold table
    makes: at least one metric, the table has its columns, known references, 0 < alpha < 1."""
    metrics = [metrics] if isinstance(metrics, str) else list(dict.fromkeys(metrics))
    if not metrics:
        raise DelaycvError(f"no metric to {verb} (expected at least one metric name)")
    _require_columns(table, required_columns(metrics), "the per-fold table")
    bad = [r for r in references if r not in REFERENCES]
    if bad:
        raise DelaycvError(f"reference(s) {bad} unknown (expected {REFERENCES})")
    if not 0 < alpha < 1:
        raise DelaycvError(f"alpha {alpha} must lie in (0, 1)")
    return metrics


def wide_by_pair(
    table: pd.DataFrame,
    keys: Sequence[str],
    metrics: Sequence[str],
    *,
    levels: Sequence[str] | None = None,
    what: str,
) -> pd.DataFrame:
    """The values of ``metrics`` with one row per ``keys`` and metric (index levels in the order
    ``levels``, default ``keys`` then ``"metric"``) and one column per (seed, fold) pair. Two rows
    with the same keys, seed and fold (a run merged twice) are an InputError naming the first,
    with ``what`` saying what must be unique."""
    index = [*keys, *PAIR]
    dup = table.duplicated(index)
    if dup.any():
        row = table.loc[dup, index].iloc[0].to_dict()
        raise InputError(
            f"two rows for one {what}",
            path=table.attrs.get("path", "<table>"),
            location=f"row {int(np.flatnonzero(dup.to_numpy())[0])}: {row}",
            expected="one row per fold, checkpoint and reference of each run (merge each run once)",
        )
    long = table[[*index, *metrics]].melt(id_vars=index, var_name="metric", value_name="value")
    levels = [*keys, "metric"] if levels is None else list(levels)
    return long.set_index([*levels, *PAIR])["value"].unstack(list(PAIR))


def _learner_pairs(
    table: pd.DataFrame, metrics: Sequence[str]
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, int]:
    """Pair the learners within each family: return (pair keys, A values, B values, seeds) with one
    row per (family, metric, learner_a, learner_b) and one column per (seed, fold), every seed x
    every fold in seed-major order (``seeds`` is the number of seeds)."""
    wide = wide_by_pair(
        table,
        [*KEYS, "learner"],
        metrics,
        levels=[*KEYS, "metric", "learner"],
        what="(dataset, policy, estimator, reference, checkpoint, learner, seed, fold)",
    )
    wide = _full_pair_grid(wide).sort_index()
    values = wide.to_numpy(dtype=np.float64)
    rows = wide.index.to_frame(index=False)
    rows["row"] = np.arange(len(rows))
    family = [*KEYS, "metric"]
    rows["family"] = rows.groupby(family, sort=False).ngroup()
    left = rows[["family", "learner", "row"]]
    pairs = left.merge(left, on="family", suffixes=("_a", "_b"))
    pairs = pairs[pairs["learner_a"] < pairs["learner_b"]]
    keys = rows.loc[pairs["row_a"].to_numpy(), family].reset_index(drop=True)
    keys["learner_a"] = pairs["learner_a"].to_numpy()
    keys["learner_b"] = pairs["learner_b"].to_numpy()
    keys["family"] = pairs["family"].to_numpy()
    seeds = wide.columns.unique(level=0).size
    return keys, values[pairs["row_a"].to_numpy()], values[pairs["row_b"].to_numpy()], seeds


def run_tests(
    table: pd.DataFrame,
    *,
    metrics: Sequence[str],
    references: Sequence[str] = REFERENCES,
    resamples: int = 5000,
    alpha: float = 0.05,
    seed: int = 1,
    checkpoints: str | int | Iterable[int] | Mapping[str, Sequence] = "all",
    alternative: str = "two-sided",
    progress: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """All pairwise learner tests of a merged per-fold checkpoint table.

    For every family (dataset, policy, estimator, reference, checkpoint, metric) and every pair of
    learners in it (``learner_a < learner_b`` by name), a paired permutation test over the
    ``(seed, fold)`` pairs, Holm-adjusted within the family, with the companions of the module
    docstring. A seed whose fold-by-fold values of both learners repeat an earlier seed's is left
    out of the test (:func:`replicate_seeds`): every statistic uses each distinct pair once.

    Parameters
    ----------
    table : pandas.DataFrame
        The merged per-fold checkpoint table (``delaycv merge``, the workflow's
        ``results/merged.parquet``; columns in docs/architecture.md): one row per dataset, learner,
        seed, policy, fold, reference, estimator and checkpoint, with the checkpoint's ``time`` and
        one column per metric. Two rows with the same keys (a run merged twice) are an error.
    metrics : sequence of str
        The metric columns to test, e.g. ``["gmean", "recall_1"]`` (a single name may be given as
        a str); repeats are tested once. Each must be a column of ``table``.
    references : sequence of str, default ``("observed", "true")``
        The references tested: ``"observed"`` (the labels observed under the policy, what a
        practitioner would report) and/or ``"true"`` (the true labels).
    resamples : int, default 5000
        R, the number of random sign vectors of a test whose n pairs have more than R sign
        vectors (``2**n > R``); with ``2**n <= R`` the test is exact, over all ``2**n``. At least 1.
    alpha : float, default 0.05
        The level of ``significant`` (``p_holm <= alpha``), in (0, 1).
    seed : int, default 1
        The seed of the random sign vectors (the same vectors serve every test with the same n).
    checkpoints : str, int, iterable of int or mapping, default ``"all"``
        Where to test: any request of :func:`choose_checkpoints` (``"all"``, ``"last"``,
        ``{"positions": [...]}``, ``{"fractions": [...]}``, checkpoint numbers). The output's
        ``at`` names the request beside each ``checkpoint``; a position beyond a stream is a row
        with no test and a ``note``.
    alternative : {"two-sided", "greater", "less"}, default ``"two-sided"``
        ``"greater"`` tests whether a's values are larger than b's, ``"less"`` whether they are
        smaller (by value, whatever the metric's direction).
    progress : callable, optional
        Given one line per stage (what was done, elapsed seconds); None (default): silent.

    Returns
    -------
    pandas.DataFrame
        One row per test, columns ``TEST_COLUMNS``, sorted by dataset, policy (in reading order,
        :func:`policy_sort_key`), estimator, metric,
        reference, checkpoint, ``at`` and the learners: the family keys and ``time`` (Unix s of
        the checkpoint), the learners, ``n`` pairs used, ``n_duplicates`` (pairs left out because
        their seed repeats another seed's values; ``n + n_duplicates`` = the pairs where both
        values are known), ``mean_a``, ``mean_b``, ``mean_diff`` = mean(a - b),
        ``ci_low``/``ci_high`` (95 %), ``cliffs_delta``, ``statistic``, ``p_value``, ``exact``,
        ``resamples`` (sign vectors used), ``alternative``, ``p_holm``, ``family_size`` (tests
        with a p-value in the family), ``significant`` (``p_holm <= alpha``), ``result`` of a
        against b (``"better"``, ``"worse"`` or ``"n.s."``, by the metric's direction, see
        :func:`higher_is_better`), ``better`` (the name of the significantly better learner, else
        ``""``), ``wilcoxon_p`` and ``sign_p`` (unadjusted), ``note`` (``""``; which checkpoint
        answered a request between checkpoints, why a request has no test, why a test has no
        value: a policy that released no label, :func:`note_empty_tests`). A family with a
        single learner has no row.

    Raises
    ------
    DelaycvError
        No metric, an unknown reference or alternative, ``alpha`` outside (0, 1), a malformed
        ``checkpoints`` request, or ``resamples`` below 1 (once there is a pair to test).
    InputError
        ``table`` lacks a column the tests read, or holds two rows for one key.
    """
    _check_alternative(alternative)
    say = _stage_clock(progress)
    metrics = check_test_arguments(table, metrics, references, alpha, verb="test")
    chosen = choose_checkpoints(table, checkpoints)
    sub = table[table["reference"].isin(list(references))]
    sub = at_checkpoints(sub, chosen)
    empty = pd.DataFrame({c: pd.Series(dtype=object) for c in TEST_COLUMNS})
    if sub.empty:
        return label_checkpoints(empty.drop(columns=["at", "note"]), chosen, TEST_COLUMNS)

    keys, a, b, seeds = _learner_pairs(sub, metrics)
    if keys.empty:
        return label_checkpoints(empty.drop(columns=["at", "note"]), chosen, TEST_COLUMNS)
    a, b, duplicates = distinct_pairs(a, b, seeds)
    d = a - b
    say(
        f"{len(keys)} learner pairs x {a.shape[1]} (seed, fold) columns ({seeds} seeds); "
        f"{int(duplicates.sum())} duplicate pairs of repeated seeds left out"
    )

    p, n, exact = sign_flip_pvalues(d, resamples=resamples, alternative=alternative, seed=seed)
    say(f"sign-flip tests ({int(exact.sum())} exact, {int((~exact).sum())} with R = {resamples})")
    mean_diff, ci_low, ci_high = mean_ci(d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean_a = np.nanmean(a, axis=1)
        mean_b = np.nanmean(b, axis=1)
    if alternative == "two-sided":
        statistic = np.abs(mean_diff)
    else:
        statistic = mean_diff if alternative == "greater" else -mean_diff

    out = keys.copy()
    out["time"] = checkpoint_times(sub, out)
    out["n"] = n.astype(np.int64)
    out["n_duplicates"] = duplicates.astype(np.int64)
    out["mean_a"] = mean_a
    out["mean_b"] = mean_b
    out["mean_diff"] = mean_diff
    out["ci_low"] = ci_low
    out["ci_high"] = ci_high
    out["cliffs_delta"] = cliffs_delta(a, b)
    out["statistic"] = statistic
    out["p_value"] = p
    out["exact"] = exact
    out["resamples"] = np.where(exact, 2.0**n, resamples).astype(np.int64)
    out["alternative"] = alternative
    out["p_holm"] = holm_by_group(p, out["family"].to_numpy())
    out["family_size"] = out.groupby("family")["p_value"].transform("count").astype(np.int64)
    out["significant"] = out["p_holm"].le(alpha).to_numpy()
    up = np.array([higher_is_better(m) for m in out["metric"]])
    a_better = np.where(up, mean_diff > 0, mean_diff < 0)
    b_better = np.where(up, mean_diff < 0, mean_diff > 0)
    sig = out["significant"].to_numpy()
    out["result"] = np.select([sig & a_better, sig & b_better], ["better", "worse"], "n.s.")
    out["better"] = np.select(
        [sig & a_better, sig & b_better], [out["learner_a"], out["learner_b"]], ""
    )
    out["wilcoxon_p"] = wilcoxon_pvalues(d, alternative=alternative)
    out["sign_p"] = sign_test_pvalues(d, alternative=alternative)
    say("Holm, intervals, Cliff's delta, Wilcoxon and sign tests")
    out = label_checkpoints(out, chosen, TEST_COLUMNS)
    out = note_empty_tests(
        out,
        table,
        lambda r: (
            f"no (seed, fold) pair where both {r['learner_a']} and {r['learner_b']} have "
            f"a value of {r['metric']} (undefined there), no test"
        ),
    )
    return sort_by_policy(
        out,
        [
            "dataset",
            "policy",
            "estimator",
            "metric",
            "reference",
            "checkpoint",
            "at",
            "learner_a",
            "learner_b",
        ],
    )


def sort_by_policy(frame: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """``frame`` sorted by ``keys`` (stable), its ``policy`` key in reading order
    (:func:`policy_sort_key`) rather than as text; the index reset."""
    if frame.empty or "policy" not in keys:
        return frame.sort_values(list(keys), kind="stable").reset_index(drop=True)
    ranks = policy_ranks(frame["policy"].astype(str))
    return (
        frame.assign(_policy=frame["policy"].astype(str).map(ranks))
        .sort_values([k if k != "policy" else "_policy" for k in keys], kind="stable")
        .drop(columns="_policy")
        .reset_index(drop=True)
    )


# --------------------------------------------------------------------------- bias of realistic evaluation


def bias_table(table: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per (dataset, policy, estimator, learner, seed, fold, checkpoint): the observed-label value of
    ``metric``, its true-label value and ``bias = observed - true`` (the error of realistic
    evaluation; positive when the practitioner's estimate is optimistic for a larger-is-better
    metric)."""
    index = ["dataset", "policy", "estimator", "learner", "seed", "fold", "checkpoint"]
    _require_columns(table, [*index, "reference", "time", metric], "the per-fold table")
    # a row whose values are all NaN (nothing released yet) is kept: its bias is NaN, not absent
    wide = (
        table.groupby([*index, "time", "reference"], sort=True, dropna=False)[metric]
        .first()
        .unstack("reference")
    )
    if not {"observed", "true"} <= set(wide.columns):
        raise InputError(
            f"bias of {metric} needs both references",
            path=table.attrs.get("path", "<table>"),
            location="column reference",
            expected="rows with reference 'observed' and rows with reference 'true'",
        )
    out = wide[["observed", "true"]].reset_index()
    out.columns.name = None
    out["bias"] = out["observed"] - out["true"]
    out["metric"] = metric
    return out


#: Columns of :func:`bias_tests`, in order.
BIAS_COLUMNS = [
    "dataset",
    "policy",
    "estimator",
    "at",
    "checkpoint",
    "learner",
    "metric",
    "n",
    "n_duplicates",
    "mean_bias",
    "ci_low",
    "ci_high",
    "p_value",
    "exact",
    "p_holm",
    "note",
]


def bias_tests(
    table: pd.DataFrame,
    *,
    metrics: Sequence[str],
    resamples: int = 5000,
    seed: int = 1,
    checkpoints: str | int | Iterable[int] | Mapping[str, Sequence] = "last",
    progress: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Is realistic evaluation biased? Per (dataset, policy, estimator, learner, checkpoint, metric):
    a sign-flip test of ``observed - true`` over the (seed, fold) pairs (H0: zero mean bias), the
    mean bias with its 95 % t-interval, and Holm over the learners of each (dataset, policy,
    estimator, checkpoint, metric).

    As in :func:`run_tests`, a seed whose fold-by-fold observed and true values both repeat an
    earlier seed's is left out (:func:`replicate_seeds`): ``n`` counts the pairs used,
    ``n_duplicates`` those left out. ``checkpoints``: as in :func:`run_tests` (default the last),
    with ``at`` and ``note`` (columns ``BIAS_COLUMNS``). ``progress`` as in :func:`run_tests`."""
    say = _stage_clock(progress)
    frames = []
    chosen = choose_checkpoints(table, checkpoints)
    sub = at_checkpoints(table, chosen)
    index = ["dataset", "policy", "estimator", "checkpoint", "learner", *PAIR]
    for metric in dict.fromkeys(metrics) if not sub.empty else ():
        bias = bias_table(sub, metric).set_index(index)
        observed = _full_pair_grid(bias["observed"].unstack(list(PAIR)))
        true = _full_pair_grid(bias["true"].unstack(list(PAIR))).reindex(observed.index)
        seeds = observed.columns.unique(level=0).size
        obs, tru = observed.to_numpy(np.float64), true.to_numpy(np.float64)
        obs, tru, duplicates = distinct_pairs(obs, tru, seeds)
        d = obs - tru
        p, n, exact = sign_flip_pvalues(d, resamples=resamples, seed=seed)
        mean, low, high = mean_ci(d)
        frame = observed.index.to_frame(index=False)
        frame["metric"] = metric
        frame["n"] = n
        frame["n_duplicates"] = duplicates
        frame["mean_bias"] = mean
        frame["ci_low"] = low
        frame["ci_high"] = high
        frame["p_value"] = p
        frame["exact"] = exact
        groups = frame.groupby(["dataset", "policy", "estimator", "checkpoint"]).ngroup()
        frame["p_holm"] = holm_by_group(p, groups.to_numpy())
        frames.append(frame)
        say(f"bias of {metric}: {len(frame)} tests, {int(frame['n_duplicates'].sum())} duplicates")
    if not frames:
        empty = {c: pd.Series(dtype=object) for c in BIAS_COLUMNS if c not in ("at", "note")}
        return label_checkpoints(pd.DataFrame(empty), chosen, BIAS_COLUMNS)
    out = label_checkpoints(pd.concat(frames, ignore_index=True), chosen, BIAS_COLUMNS)
    out = note_empty_tests(
        out,
        table,
        lambda r: (
            f"no (seed, fold) pair with both an observed and a true value of "
            f"{r['metric']} (undefined there), no test"
        ),
    )
    return _sort_bias(out, metrics)


def _sort_bias(out: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """Bias rows by dataset, metric (as requested), policy (reading order), estimator,
    checkpoint, ``at`` and learner."""
    rank = {m: i for i, m in enumerate(dict.fromkeys(metrics))}
    out = out.assign(_metric=out["metric"].map(rank))
    keys = ["dataset", "_metric", "policy", "estimator", "checkpoint", "at", "learner"]
    return sort_by_policy(out, keys).drop(columns="_metric")


# --------------------------------------------------------------------------- McNemar


MCNEMAR_COLUMNS = ["fold", "n", "a_only", "b_only", "statistic", "p_value", "method"]


def mcnemar(
    log_a: pd.DataFrame,
    log_b: pd.DataFrame,
    *,
    reference: str = "true",
    method: str = "exact",
    upto: int | None = None,
) -> pd.DataFrame:
    """McNemar's test per fold from two learners' prediction logs (``predictions.parquet``).

    Instances pair on (fold, index). Against ``reference`` (``"true"`` uses the column ``true``;
    ``"observed"`` uses ``observed`` and drops instances still pending, ``observed == -1``), a
    prediction is correct when it equals the label; an abstention (``pred == -1``) is not correct.
    ``a_only`` counts instances only a got right, ``b_only`` those only b got right. ``upto`` keeps
    instances with ``index <= upto`` (a checkpoint).

    ``method="exact"``: scipy's binomial test of ``a_only`` out of ``a_only + b_only`` with
    probability 1/2 (statistic = ``a_only``). ``method="chi2"``: the continuity-corrected
    ``(max(|a_only - b_only| - 1, 0))² / (a_only + b_only)`` against chi-square with 1 degree of
    freedom. No discordant instance gives statistic 0 and p = 1.
    """
    if reference not in REFERENCES:
        raise DelaycvError(f"reference {reference!r} unknown (expected {REFERENCES})")
    if method not in ("exact", "chi2"):
        raise DelaycvError(f"McNemar method {method!r} unknown (expected 'exact' or 'chi2')")
    needed = ["fold", "index", "pred", reference]
    for name, log in (("a", log_a), ("b", log_b)):
        _require_columns(log, needed, f"prediction log of learner {name}")
    left = log_a[needed].rename(columns={"pred": "pred_a"})
    right = log_b[["fold", "index", "pred", reference]].rename(
        columns={"pred": "pred_b", reference: "label_b"}
    )
    both = left.merge(right, on=["fold", "index"], how="inner", validate="one_to_one")
    label = both[reference].to_numpy()
    if reference == "true":
        mismatch = label != both["label_b"].to_numpy()
        if mismatch.any():
            raise InputError(
                "the two prediction logs disagree on true labels",
                path=log_b.attrs.get("path", "<prediction log b>"),
                location=f"fold {both['fold'].iloc[np.flatnonzero(mismatch)[0]]}",
                expected="logs of the same stream",
            )
    keep = label >= 0
    if upto is not None:
        keep &= both["index"].to_numpy() <= upto
    both = both[keep]
    label = both[reference].to_numpy()
    ok_a = both["pred_a"].to_numpy() == label
    ok_b = both["pred_b"].to_numpy() == label
    frame = pd.DataFrame(
        {"fold": both["fold"].to_numpy(), "a_only": ok_a & ~ok_b, "b_only": ok_b & ~ok_a}
    )
    counts = frame.groupby("fold").agg(
        n=("a_only", "size"), a_only=("a_only", "sum"), b_only=("b_only", "sum")
    )
    rows = []
    for fold, row in counts.iterrows():
        b, c = int(row["a_only"]), int(row["b_only"])
        if b + c == 0:
            statistic, p = 0.0, 1.0
        elif method == "exact":
            statistic, p = float(b), float(stats.binomtest(b, b + c, 0.5).pvalue)
        else:
            statistic = max(abs(b - c) - 1, 0) ** 2 / (b + c)
            p = float(stats.chi2.sf(statistic, 1))
        rows.append((int(fold), int(row["n"]), b, c, statistic, p, method))
    return pd.DataFrame(rows, columns=MCNEMAR_COLUMNS)


def mcnemar_tests(
    logs: Mapping[str, pd.DataFrame],
    *,
    reference: str = "true",
    method: str = "exact",
    alpha: float = 0.05,
    upto: int | None = None,
) -> pd.DataFrame:
    """McNemar's test for every pair of learners (``learner_a < learner_b``) of one (dataset,
    policy, seed), given their prediction logs keyed by learner name; per fold, with Holm over the
    learner pairs of each fold. (Folds are not pooled: every fold predicts the same instances, so
    their counts are not independent.)"""
    rows = []
    for la, lb in itertools.combinations(sorted(logs), 2):
        res = mcnemar(logs[la], logs[lb], reference=reference, method=method, upto=upto)
        res.insert(0, "learner_b", lb)
        res.insert(0, "learner_a", la)
        rows.append(res)
    if not rows:
        return pd.DataFrame(
            columns=["learner_a", "learner_b", *MCNEMAR_COLUMNS, "p_holm", "significant"]
        )
    out = pd.concat(rows, ignore_index=True)
    out["reference"] = reference
    out["p_holm"] = np.nan
    for idx in out.groupby("fold").indices.values():
        out.loc[out.index[idx], "p_holm"] = holm(out["p_value"].to_numpy()[idx])
    out["significant"] = out["p_holm"] <= alpha
    return out


# --------------------------------------------------------------------------- waiting windows of policies


@dataclass(frozen=True)
class PolicyWindows:
    """The waiting windows of a policy: its named ``preset`` (of
    :data:`delaycv.protocol.policies.PRESETS`) and the windows for predicted positives (``pos``) and
    negatives (``neg``); ``ideal`` has both 0 s, ``delay`` and ``verification`` the same window for
    both; ``inspection_error`` the policy's rate (0 for none)."""

    preset: str
    pos: Window
    neg: Window
    inspection_error: float = 0.0


def policy_windows(policy) -> PolicyWindows | None:
    """The windows of ``policy``: a spec (a dict as :func:`delaycv.protocol.policies.make_policy` takes
    it, e.g. the ``specs.policy`` of a run's ``run.json``), a ``Policy``, or a preset name
    (``ideal``, ``delay_<D>``, ``verification_<W>``, ``hitl_<P>_<N>``, read by
    :func:`delaycv.protocol.policies.parse_policy_name`). None for a name that is not a preset name and
    for a policy in the general form that no preset describes. A spec in the general form (as
    ``run.json`` records it) gets the preset that describes it
    (:func:`delaycv.protocol.policies.preset_of`).

    >>> policy_windows("hitl_7d_90d")
    PolicyWindows(preset='hitl', pos=Window(amount=604800, unit='s'), \
neg=Window(amount=7776000, unit='s'), inspection_error=0.0)
    >>> policy_windows({"window": "500i"}).preset, policy_windows("my_policy")
    ('delay', None)
    """
    from delaycv.protocol.policies import Policy, make_policy, parse_policy_name, preset_of

    try:
        if isinstance(policy, str):
            policy = make_policy(parse_policy_name(policy))
        elif not isinstance(policy, Policy):
            policy = make_policy(dict(policy))
    except DelaycvError:
        if isinstance(policy, str):
            return None
        raise
    preset = preset_of(policy)
    if preset is None:
        return None
    return PolicyWindows(preset.name, policy.pos_window, policy.neg_window, policy.inspection_error)


def policies_windows(
    policies: Iterable[str], specs: Mapping[str, object] | None = None
) -> dict[str, PolicyWindows | None]:
    """:func:`policy_windows` of each policy name: from its spec in ``specs`` (the specs the runs
    used; the name is then only a label, and a policy without a spec gets None), or, without
    ``specs``, from the name (a merged table alone: delaycv refuses a preset name that disagrees
    with its spec, :func:`delaycv.protocol.policies.check_policy_name`)."""
    if specs is None:
        return {p: policy_windows(p) for p in policies}
    return {p: policy_windows(specs[p]) if p in specs else None for p in policies}


@functools.lru_cache(maxsize=4096)
def _name_key(name: str) -> tuple:
    """:func:`policy_sort_key` of a name read as a preset name (cached: tables sort by it)."""
    return _windows_key(policy_windows(name), name)


def _windows_key(w: PolicyWindows | None, name: str) -> tuple:
    from delaycv.protocol.policies import PRESETS

    if w is None:
        return (1, 0, 0.0, 0, 0, 0, 0, name)
    presets = list(PRESETS)
    return (
        0,
        presets.index(w.preset),
        w.inspection_error,
        w.pos.unit != "s",
        w.pos.amount,
        w.neg.unit != "s",
        w.neg.amount,
        name,
    )


def policy_sort_key(name: str, specs: Mapping[str, object] | None = None) -> tuple:
    """The key that puts policies in reading order in every table and figure: by preset, in the
    order of :data:`delaycv.protocol.policies.PRESETS` (``ideal``, ``delay``, ``verification``, ``hitl``,
    the general form), then inspection error, then the windows as durations (seconds; counts of
    instances after them): P, then N for hitl. The windows are those of the policy's spec in
    ``specs`` (the specs the runs used), else those its name says
    (:func:`delaycv.protocol.policies.parse_policy_name`); a policy whose windows are unknown comes after
    the others, by name. So ``hitl_1d_90d``, ``hitl_7d_90d``, ``hitl_30d_90d`` (not the text order
    ``hitl_1d``, ``hitl_30d``, ``hitl_7d``).

    >>> sorted(["hitl_30d_15d", "ideal", "hitl_7d_15d", "my_policy", "delay_12h", "hitl_1d_15d"],
    ...        key=policy_sort_key)
    ['ideal', 'delay_12h', 'hitl_1d_15d', 'hitl_7d_15d', 'hitl_30d_15d', 'my_policy']
    """
    name = str(name)
    if specs is not None:
        return _windows_key(policy_windows(specs[name]) if name in specs else None, name)
    return _name_key(name)


def policy_order(
    policies: Iterable[str], policy_specs: Mapping[str, object] | None = None
) -> list[str]:
    """The distinct ``policies`` in reading order (:func:`policy_sort_key`)."""
    return sorted(dict.fromkeys(policies), key=lambda p: policy_sort_key(p, policy_specs))


def policy_ranks(
    policies: Iterable[str], policy_specs: Mapping[str, object] | None = None
) -> dict[str, int]:
    """Policy -> its position in :func:`policy_order` (to sort a table's rows by policy)."""
    return {p: i for i, p in enumerate(policy_order(policies, policy_specs))}


def window_table(
    policies: Iterable[str],
    windows: Mapping[str, str | int | Window] | None = None,
    *,
    specs: Mapping[str, object] | None = None,
) -> pd.DataFrame:
    """For the sensitivity figure: the window length on the x axis of each policy.

    Columns: ``policy``, ``family`` (the line a policy belongs to, e.g. ``"hitl, N = 90d"``),
    ``varies`` (``"P"``, ``"N"``, ``"W"``, ``"D"`` or ``"window"``), ``window`` (seconds, or instances
    when ``unit == "i"``), ``unit``. With ``windows`` (policy -> window, e.g. ``{"fast": "7d"}``) the
    given windows are used as they are (family ``"given"``); otherwise each policy's windows are
    those of its spec in ``specs`` (policy -> spec: the windows the runs used), or, without
    ``specs``, those its name says (:func:`policies_windows`). Of a preset with several windows
    (hitl) the window that takes the most distinct values is the x axis and the others name the
    family; a preset without windows (ideal) gets window 0 in every family of second-based windows
    (:data:`delaycv.protocol.policies.PRESETS` declares each preset's windows and their letters). Policies
    whose windows are unknown are left out.
    """
    policies = list(dict.fromkeys(policies))
    rows: list[tuple[str, str, str, int, str]] = []
    if windows is not None:
        for policy in policies:
            if policy in windows:
                w = parse_window(windows[policy])
                rows.append((policy, "given", "window", w.amount, w.unit))
        return pd.DataFrame(rows, columns=["policy", "family", "varies", "window", "unit"])
    from delaycv.protocol.policies import PRESETS

    parsed = {p: w for p, w in policies_windows(policies, specs).items() if w is not None}
    # per preset and window: its distinct values (of a preset with several windows, the one that
    # takes the most is the x axis; the others name the family)
    distinct: dict[str, dict[str, set[Window]]] = {}
    for w in parsed.values():
        for key, value in PRESETS[w.preset].windows_of(w.pos, w.neg).items():
            distinct.setdefault(w.preset, {}).setdefault(key, set()).add(value)
    for policy, w in parsed.items():
        preset = PRESETS[w.preset]
        if not preset.windows:  # (ideal) placed below
            continue
        values = preset.windows_of(w.pos, w.neg)
        x = max(preset.windows, key=lambda p: len(distinct[w.preset][p.key]))  # first on ties
        fixed = [f"{o.letter} = {values[o.key]}" for o in preset.windows if o is not x]
        family = ", ".join([preset.name, *fixed]) + _error_part(w)
        rows.append((policy, family, x.letter, values[x.key].amount, values[x.key].unit))
    frame = pd.DataFrame(rows, columns=["policy", "family", "varies", "window", "unit"])
    extra = []
    for policy, w in parsed.items():
        if PRESETS[w.preset].windows:
            continue
        for family, group in frame[frame["unit"] == "s"].groupby("family", sort=False):
            if family.endswith(_error_part(w)) and (_error_part(w) or "inspection" not in family):
                extra.append((policy, family, group["varies"].iloc[0], 0, "s"))
    if extra:
        frame = pd.concat([frame, pd.DataFrame(extra, columns=frame.columns)], ignore_index=True)
    return frame


def axis_names() -> dict[str, str]:
    """What a window axis shows, by :func:`window_table`'s ``varies``: the letters of the presets'
    windows (:class:`delaycv.protocol.policies.WindowParameter`) and ``window`` (windows given as they are).

    >>> axis_names()["P"], axis_names()["window"]
    ('P, window for predicted positives', 'waiting window')
    """
    from delaycv.protocol.policies import PRESETS

    names = {
        w.letter: f"{w.letter}, {w.axis}"
        for preset in reversed(PRESETS.values())
        for w in (*preset.windows, *preset.optional_windows)
    }
    return {**names, "window": "waiting window"}


def _error_part(w: PolicyWindows) -> str:
    """The part of a family's name that says its inspection error (none without one)."""
    return f", inspection error {w.inspection_error:g}" if w.inspection_error else ""
