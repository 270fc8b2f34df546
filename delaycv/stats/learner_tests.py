"""The pairwise learner tests of a merged per-fold checkpoint table (docs/comparison.md; pure, opens no
files): :func:`run_tests`, one paired permutation test (:mod:`delaycv.stats.permutation`) per pair
of learners of each family (dataset, policy, estimator, reference, checkpoint, metric) over their
paired table (:mod:`delaycv.stats.paired`), Holm-adjusted within the family, with the companions
of :mod:`delaycv.stats.companions`; the columns of its table are :data:`TEST_COLUMNS`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from delaycv.common import defaults
from delaycv.common.choices import REFERENCES
from delaycv.metrics.properties import has_direction, higher_is_better
from delaycv.stats.checkpoints import (
    at_checkpoints,
    checkpoint_times,
    choose_checkpoints,
    label_checkpoints,
    note_empty_tests,
    note_out_of_reach,
)
from delaycv.stats.companions import (
    cliffs_delta,
    holm_by_group,
    mean_ci,
    sign_test_pvalues,
    wilcoxon_pvalues,
)
from delaycv.stats.frames import _stage_clock, sort_by_policy
from delaycv.stats.paired import (
    KEYS,
    PairedTable,
    check_test_arguments,
    paired_table,
    wide_by_pair,
)
from delaycv.stats.permutation import _check_alternative, sign_flip_pvalues

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


def _learner_pairs(table: pd.DataFrame, metrics: Sequence[str]) -> PairedTable | None:
    """Pair the learners within each family: the paired table (:func:`~delaycv.stats.paired.
    paired_table`) with one row per (family, metric, learner_a, learner_b), ``learner_a <
    learner_b``, its ``rows`` also holding ``family`` (a number per family, for Holm); None when
    no family has two learners."""
    wide = wide_by_pair(
        table,
        [*KEYS, "learner"],
        metrics,
        levels=[*KEYS, "metric", "learner"],
        what="(dataset, policy, estimator, reference, checkpoint, learner, seed, fold)",
    ).sort_index()
    rows = wide.index.to_frame(index=False)
    rows["row"] = np.arange(len(rows))
    family = [*KEYS, "metric"]
    rows["family"] = rows.groupby(family, sort=False).ngroup()
    left = rows[["family", "learner", "row"]]
    pairs = left.merge(left, on="family", suffixes=("_a", "_b"))
    pairs = pairs[pairs["learner_a"] < pairs["learner_b"]]
    if pairs.empty:
        return None
    keys = rows.loc[pairs["row_a"].to_numpy(), family].reset_index(drop=True)
    keys["learner_a"] = pairs["learner_a"].to_numpy()
    keys["learner_b"] = pairs["learner_b"].to_numpy()
    index = pd.MultiIndex.from_frame(keys)
    paired = paired_table(
        wide.iloc[pairs["row_a"].to_numpy()].set_axis(index, axis=0),
        wide.iloc[pairs["row_b"].to_numpy()].set_axis(index, axis=0),
    )
    paired.rows["family"] = paired.rows.groupby(family, sort=False).ngroup().to_numpy()
    return paired


def _statistic(mean_diff: np.ndarray, alternative: str) -> np.ndarray:
    """The sign-flip statistic of each test: |mean(d)|, mean(d) or -mean(d) by ``alternative``."""
    if alternative == "two-sided":
        return np.abs(mean_diff)
    return mean_diff if alternative == "greater" else -mean_diff


def _test_pairs(
    paired: PairedTable, *, resamples: int, alternative: str, seed: int, say
) -> pd.DataFrame:
    """The tests of every row of ``paired``: its keys, ``n``, ``n_duplicates``, the means, the
    mean difference with its interval, Cliff's delta, the sign-flip test, Wilcoxon and sign
    tests (the columns of :data:`TEST_COLUMNS` that do not depend on the family)."""
    a, b = paired.a, paired.b
    d = a - b
    p, n, exact = sign_flip_pvalues(d, resamples=resamples, alternative=alternative, seed=seed)
    say(f"sign-flip tests ({int(exact.sum())} exact, {int((~exact).sum())} with R = {resamples})")
    mean_diff, ci_low, ci_high = mean_ci(d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean_a = np.nanmean(a, axis=1)
        mean_b = np.nanmean(b, axis=1)
    out = paired.rows.copy()
    out["n"] = n.astype(np.int64)
    out["n_duplicates"] = paired.duplicates.astype(np.int64)
    out["mean_a"] = mean_a
    out["mean_b"] = mean_b
    out["mean_diff"] = mean_diff
    out["ci_low"] = ci_low
    out["ci_high"] = ci_high
    out["cliffs_delta"] = cliffs_delta(a, b)
    out["statistic"] = _statistic(mean_diff, alternative)
    out["p_value"] = p
    out["exact"] = exact
    out["resamples"] = np.where(exact, 2.0**n, resamples).astype(np.int64)
    out["alternative"] = alternative
    out["wilcoxon_p"] = wilcoxon_pvalues(d, alternative=alternative)
    out["sign_p"] = sign_test_pvalues(d, alternative=alternative)
    return out


def _judge(out: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Holm within each family (``p_holm``, ``family_size``, ``significant``) and the verdict of
    each test by the metric's direction (``result`` of a against b, the ``better`` learner)."""
    p = out["p_value"].to_numpy()
    out["p_holm"] = holm_by_group(p, out["family"].to_numpy())
    out["family_size"] = out.groupby("family")["p_value"].transform("count").astype(np.int64)
    out["significant"] = out["p_holm"].le(alpha).to_numpy()
    mean_diff = out["mean_diff"].to_numpy()
    metrics = out["metric"].to_numpy()
    directed = np.array([has_direction(m) for m in metrics], dtype=bool)
    up = np.array(
        [higher_is_better(m) if d else True for m, d in zip(metrics, directed, strict=True)]
    )
    a_better = directed & np.where(up, mean_diff > 0, mean_diff < 0)
    b_better = directed & np.where(up, mean_diff < 0, mean_diff > 0)
    sig = out["significant"].to_numpy()
    # a metric without a direction: a's value is higher or lower, neither better nor worse
    out["result"] = np.select(
        [
            sig & a_better,
            sig & b_better,
            sig & ~directed & (mean_diff > 0),
            sig & ~directed & (mean_diff < 0),
        ],
        ["better", "worse", "higher", "lower"],
        "n.s.",
    )
    out["better"] = np.select(
        [sig & a_better, sig & b_better], [out["learner_a"], out["learner_b"]], ""
    )
    return out


def _untested_pair_note(row: pd.Series) -> str:
    """The note of a learner test with no pair where both learners have a value."""
    return (
        f"no (seed, fold) pair where both {row['learner_a']} and {row['learner_b']} have "
        f"a value of {row['metric']} (undefined there), no test"
    )


#: The order of the rows of :func:`run_tests` (the policy in reading order).
TEST_ORDER = [
    "dataset",
    "policy",
    "estimator",
    "metric",
    "reference",
    "checkpoint",
    "at",
    "learner_a",
    "learner_b",
]


def run_tests(
    table: pd.DataFrame,
    *,
    metrics: Sequence[str],
    references: Sequence[str] = REFERENCES,
    resamples: int = defaults.RESAMPLES,
    alpha: float = defaults.SIGNIFICANCE,
    seed: int = defaults.TEST_SEED,
    checkpoints: str | int | Iterable[int] | Mapping[str, Sequence] = "all",
    alternative: str = defaults.ALTERNATIVE,
    progress: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """All pairwise learner tests of a merged per-fold checkpoint table.

    For every family (dataset, policy, estimator, reference, checkpoint, metric) and every pair of
    learners in it (``learner_a < learner_b`` by name), a paired permutation test over the
    ``(seed, fold)`` pairs, Holm-adjusted within the family, with the companions of the module
    docstring. A seed whose fold-by-fold values of both learners repeat an earlier seed's is left
    out of the test (:func:`~delaycv.stats.paired.replicate_seeds`): every statistic uses each distinct pair once.

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
    references : sequence of str, default ``("observed", "true", "corrected")``
        The references tested: ``"observed"`` (the labels observed under the policy, what a
        practitioner would report), ``"true"`` (the true labels) and ``"corrected"`` (the
        estimate of the true value from observed labels, docs/corrected.md); a reference the
        table has no rows of is not tested.
    resamples : int, default 5000
        R, the number of random sign vectors of a test whose n pairs have more than R sign
        vectors (``2**n > R``); with ``2**n <= R`` the test is exact, over all ``2**n``. At least 1.
    alpha : float, default 0.05
        The level of ``significant`` (``p_holm <= alpha``), in (0, 1).
    seed : int, default 1
        The seed of the random sign vectors (the same vectors serve every test with the same n).
    checkpoints : str, int, iterable of int or mapping, default ``"all"``
        Where to test: any request of :func:`~delaycv.stats.checkpoints.choose_checkpoints` (``"all"``, ``"last"``,
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
        :func:`~delaycv.protocol.policy_windows.policy_sort_key`), estimator, metric,
        reference, checkpoint, ``at`` and the learners: the family keys and ``time`` (Unix s of
        the checkpoint), the learners, ``n`` pairs used, ``n_duplicates`` (pairs left out because
        their seed repeats another seed's values; ``n + n_duplicates`` = the pairs where both
        values are known), ``mean_a``, ``mean_b``, ``mean_diff`` = mean(a - b),
        ``ci_low``/``ci_high`` (95 %), ``cliffs_delta``, ``statistic``, ``p_value``, ``exact``,
        ``resamples`` (sign vectors used), ``alternative``, ``p_holm``, ``family_size`` (tests
        with a p-value in the family), ``significant`` (``p_holm <= alpha``), ``result`` of a
        against b (``"better"``, ``"worse"`` or ``"n.s."``, by the metric's direction, see
        :func:`~delaycv.metrics.properties.higher_is_better`), ``better`` (the name of the significantly better learner, else
        ``""``), ``wilcoxon_p`` and ``sign_p`` (unadjusted), ``note`` (``""``; which checkpoint
        answered a request between checkpoints, why a request has no test, why a test has no
        value: a policy that released no label, :func:`~delaycv.stats.checkpoints.note_empty_tests`). A family with a
        single learner has no row.

    Raises
    ------
    DelaycvError
        No metric, an unknown reference or alternative, ``alpha`` outside (0, 1), a malformed
        ``checkpoints`` request, or ``resamples`` below 1 (once there is a pair to test).
    InputError
        ``table`` lacks a column the tests read, or holds two rows for one key.

    Examples
    --------
    Two learners on 4 folds of one seed; a beats b by 0.4, 0.3, 0.2, 0.1, so only the observed
    signs and their mirror image reach ``|mean| = 0.25``: p = 2/16 (not significant after Holm
    at 0.05, a family of one test):

    >>> t = pd.DataFrame({"dataset": "d", "policy": "ideal", "estimator": "cumulative",
    ...                   "reference": "true", "checkpoint": 100, "time": 0.0,
    ...                   "learner": ["a"] * 4 + ["b"] * 4, "seed": 1, "fold": [0, 1, 2, 3] * 2,
    ...                   "gmean": [0.9, 0.8, 0.7, 0.6] + [0.5] * 4})
    >>> r = run_tests(t, metrics=["gmean"]).round(3)
    >>> r[["learner_a", "learner_b", "n", "mean_diff", "p_value", "exact"]].to_numpy().tolist()
    [['a', 'b', 4, 0.25, 0.125, True]]
    >>> r[["cliffs_delta", "wilcoxon_p", "sign_p", "p_holm", "result"]].to_numpy().tolist()
    [[1.0, 0.125, 0.125, 0.125, 'n.s.']]
    """
    _check_alternative(alternative)
    say = _stage_clock(progress)
    metrics = check_test_arguments(table, metrics, references, alpha, verb="test")
    chosen = choose_checkpoints(table, checkpoints)
    sub = at_checkpoints(table[table["reference"].isin(list(references))], chosen)
    paired = None if sub.empty else _learner_pairs(sub, metrics)
    if paired is None:
        empty = pd.DataFrame({c: pd.Series(dtype=object) for c in TEST_COLUMNS})
        return label_checkpoints(empty.drop(columns=["at", "note"]), chosen, TEST_COLUMNS)
    say(
        f"{len(paired.rows)} learner pairs x {paired.a.shape[1]} (seed, fold) columns "
        f"({paired.seeds} seeds); {int(paired.duplicates.sum())} duplicate pairs of repeated "
        "seeds left out"
    )
    out = _test_pairs(paired, resamples=resamples, alternative=alternative, seed=seed, say=say)
    out["time"] = checkpoint_times(sub, out)
    out = _judge(out, alpha)
    say("Holm, intervals, Cliff's delta, Wilcoxon and sign tests")
    out = label_checkpoints(out, chosen, TEST_COLUMNS)
    out = note_empty_tests(out, table, _untested_pair_note)
    out = note_out_of_reach(out, alpha=alpha, resamples=resamples)
    return sort_by_policy(out, TEST_ORDER)
