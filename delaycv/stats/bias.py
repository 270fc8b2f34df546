"""The bias of realistic evaluation (pure, opens no files): per (dataset, policy, estimator, learner,
checkpoint, metric), the paired differences ``observed - true`` of a learner's observed-label and
true-label values over the ``(seed, fold)`` pairs, tested against a zero mean bias by the
sign-flip test (:func:`bias_tests`; columns :data:`BIAS_COLUMNS`); :func:`bias_table` gives the
per-fold bias itself. The same for the corrected estimate (``corrected - true``, the column
``estimate``: what the correction leaves of the bias; docs/corrected.md) where the table has it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from delaycv.common import defaults
from delaycv.common.choices import ESTIMATES
from delaycv.common.errors import InputError
from delaycv.stats.checkpoints import (
    at_checkpoints,
    choose_checkpoints,
    label_checkpoints,
    note_empty_tests,
    note_out_of_reach,
)
from delaycv.stats.companions import holm_by_group, mean_ci
from delaycv.stats.frames import _require_columns, _stage_clock, sort_by_policy
from delaycv.stats.paired import PAIR, check_alpha, paired_table
from delaycv.stats.permutation import sign_flip_pvalues

#: A difference of at most this share of its values' scale (at least 1) is floating-point rounding,
#: not a bias: the corrected reference under ``ideal`` and ``delay`` is the true value computed
#: from sums of expected labels (1 and 0) in another order (docs/corrected.md), 1e-16 away from it.
#: The tests take such a difference as 0, so that it reads "n.s.", not "optimistic".
ROUNDING = 1e-12


def without_rounding(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a - b``, with the differences that are floating-point rounding (:data:`ROUNDING`) set to
    exactly 0 (NaN stays NaN).

    >>> without_rounding(np.array([0.5, 0.5, 3e4, np.nan]),
    ...                  np.array([0.5 + 1e-16, 0.4, 3e4 + 1e-9, 0.5])).tolist()
    [0.0, 0.09999999999999998, 0.0, nan]
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    d = a - b
    scale = np.fmax(np.fmax(np.abs(a), np.abs(b)), 1.0)
    return np.where(np.abs(d) <= ROUNDING * scale, 0.0, d)


def bias_table(table: pd.DataFrame, metric: str, estimate: str = "observed") -> pd.DataFrame:
    """The per-fold bias of realistic evaluation: ``observed - true`` of one metric (or
    ``corrected - true``, with ``estimate="corrected"``).

    Per (dataset, policy, estimator, learner, seed, fold, checkpoint): the observed-label value of
    ``metric``, its true-label value and ``bias = observed - true`` (the error of realistic
    evaluation; positive when the practitioner's estimate is optimistic for a larger-is-better
    metric). A row whose values are all NaN (nothing released yet) is kept, with a NaN bias.

    Parameters
    ----------
    table : pandas.DataFrame
        A per-fold table with the keys above, ``reference``, ``time`` and ``metric``.
    metric : str
        The metric column.
    estimate : {"observed", "corrected"}, default "observed"
        The estimate held against the true value.

    Returns
    -------
    pandas.DataFrame
        The keys above and ``time``, the estimate's column (``observed`` or ``corrected``),
        ``true``, ``bias`` and ``metric``, sorted by the keys.

    Raises
    ------
    InputError
        ``table`` lacks a column, or has no rows of one of the references ``estimate`` and
        ``true``.

    Examples
    --------
    >>> t = pd.DataFrame({"dataset": "d", "policy": "hitl_1d_15d", "estimator": "cumulative",
    ...                   "learner": "a", "seed": 1, "fold": [0, 1] * 2, "checkpoint": 100,
    ...                   "time": 0.0, "reference": ["observed"] * 2 + ["true"] * 2,
    ...                   "gmean": [0.9, 0.6, 0.5, 0.5]})
    >>> bias_table(t, "gmean")[["observed", "true", "bias"]].round(3).to_numpy().tolist()
    [[0.9, 0.5, 0.4], [0.6, 0.5, 0.1]]
    """
    index = ["dataset", "policy", "estimator", "learner", "seed", "fold", "checkpoint"]
    _require_columns(table, [*index, "reference", "time", metric], "the per-fold table")
    # a row whose values are all NaN (nothing released yet) is kept: its bias is NaN, not absent
    wide = (
        table.groupby([*index, "time", "reference"], sort=True, dropna=False)[metric]
        .first()
        .unstack("reference")
    )
    if not {estimate, "true"} <= set(wide.columns):
        raise InputError(
            f"bias of {metric} needs both references",
            path=table.attrs.get("path", "<table>"),
            location="column reference",
            expected=f"rows with reference {estimate!r} and rows with reference 'true'",
        )
    out = wide[[estimate, "true"]].reset_index()
    out.columns.name = None
    out["bias"] = out[estimate] - out["true"]
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
    "estimate",
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
    resamples: int = defaults.RESAMPLES,
    seed: int = defaults.TEST_SEED,
    checkpoints: str | int | Iterable[int] | Mapping[str, Sequence] = "last",
    alpha: float = defaults.SIGNIFICANCE,
    progress: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Is realistic evaluation biased? One sign-flip test of ``observed - true`` per learner (and
    of ``corrected - true``, what the correction leaves, where the table has the corrected rows).

    Per (dataset, policy, estimator, learner, checkpoint, metric, estimate): a sign-flip test
    (:func:`~delaycv.stats.permutation.sign_flip_pvalues`, two-sided) of ``observed - true`` over
    the (seed, fold) pairs (H0: zero mean bias), the mean bias with its 95 % t-interval, and Holm
    over the learners of each (dataset, policy, estimator, checkpoint, metric, estimate). As in
    :func:`~delaycv.stats.learner_tests.run_tests`, a seed whose fold-by-fold observed and true
    values both repeat an earlier seed's is left out
    (:func:`~delaycv.stats.paired.replicate_seeds`).

    Parameters
    ----------
    table : pandas.DataFrame
        The merged per-fold checkpoint table (with both references).
    metrics : sequence of str
        The metric columns; repeats are tested once.
    resamples : int, default 5000
        R of :func:`~delaycv.stats.permutation.sign_flip_pvalues` (exact when ``2**n <= R``).
    seed : int, default 1
        The seed of the random sign vectors.
    checkpoints : str, int, iterable of int or mapping, default "last"
        Any request of :func:`~delaycv.stats.checkpoints.choose_checkpoints`, as in
        :func:`~delaycv.stats.learner_tests.run_tests`.
    alpha : float, default 0.05
        The level at which ``p_holm`` is read: a test that cannot reach it (too few pairs) says
        so in its note (:func:`~delaycv.stats.checkpoints.out_of_reach_notes`).
    progress : callable, optional
        Given one line per metric (what was done, elapsed seconds); None (default): silent.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`BIAS_COLUMNS`: the keys (``estimate``: ``observed`` or ``corrected``),
        ``at``, ``n`` (pairs used), ``n_duplicates``
        (pairs of repeated seeds left out), ``mean_bias``, ``ci_low``/``ci_high``, ``p_value``,
        ``exact``, ``p_holm`` and ``note`` (why a row has no test, or which checkpoint answered the
        request). Rows by dataset, metric (as requested), policy (reading order), estimator,
        checkpoint, ``at`` and learner.

    Raises
    ------
    DelaycvError
        A malformed ``checkpoints`` request, ``resamples`` below 1, ``alpha`` outside (0, 1).
    InputError
        ``table`` lacks a column, or one of the two references.

    Examples
    --------
    Biases 0.4, 0.3, 0.2, 0.1 on 4 folds: only the observed signs and their mirror image reach
    ``|mean| = 0.25``, p = 2/16:

    >>> t = pd.DataFrame({"dataset": "d", "policy": "hitl_1d_15d", "estimator": "cumulative",
    ...                   "learner": "a", "seed": 1, "fold": [0, 1, 2, 3] * 2, "checkpoint": 100,
    ...                   "time": 0.0, "reference": ["observed"] * 4 + ["true"] * 4,
    ...                   "gmean": [0.9, 0.8, 0.7, 0.6] + [0.5] * 4})
    >>> b = bias_tests(t, metrics=["gmean"]).round(3)
    >>> b[["at", "n", "mean_bias", "ci_low", "ci_high", "p_value", "p_holm"]].to_numpy().tolist()
    [['last', 4, 0.25, 0.045, 0.455, 0.125, 0.125]]
    """
    check_alpha(alpha)
    say = _stage_clock(progress)
    chosen = choose_checkpoints(table, checkpoints)
    sub = at_checkpoints(table, chosen)
    frames = []
    for metric, estimate in _tested_estimates(sub, metrics):
        frame = _bias_rows(sub, metric, estimate, resamples=resamples, seed=seed)
        frames.append(frame)
        say(
            f"bias of {metric} ({estimate}): {len(frame)} tests, "
            f"{int(frame['n_duplicates'].sum())} duplicates"
        )
    if not frames:
        empty = {c: pd.Series(dtype=object) for c in BIAS_COLUMNS if c not in ("at", "note")}
        return label_checkpoints(pd.DataFrame(empty), chosen, BIAS_COLUMNS)
    out = label_checkpoints(pd.concat(frames, ignore_index=True), chosen, BIAS_COLUMNS)
    out = note_empty_tests(out, table, _untested_bias_note, reference="estimate")
    out = note_out_of_reach(out, alpha=alpha, resamples=resamples)
    return _sort_bias(out, metrics)


def _tested_estimates(sub: pd.DataFrame, metrics: Sequence[str]) -> list[tuple[str, str]]:
    """The (metric, estimate) pairs tested on the rows ``sub``: each metric once, in the order
    given, with ``observed`` and, where ``sub`` has its rows, ``corrected``; none without rows."""
    if sub.empty:
        return []
    present = set(sub["reference"])
    estimates = [e for e in ESTIMATES if e == "observed" or e in present]
    return [(m, e) for m in dict.fromkeys(metrics) for e in estimates]


def _bias_rows(
    sub: pd.DataFrame, metric: str, estimate: str, *, resamples: int, seed: int
) -> pd.DataFrame:
    """The bias tests of one metric and estimate: per (dataset, policy, estimator, checkpoint,
    learner), the sign-flip test of ``estimate - true`` over the (seed, fold) pairs, the mean bias
    with its 95 % t-interval, and Holm over the learners of each (dataset, policy, estimator,
    checkpoint)."""
    index = ["dataset", "policy", "estimator", "checkpoint", "learner", *PAIR]
    pair = list(PAIR)
    bias = bias_table(sub, metric, estimate).set_index(index)
    pairs = paired_table(bias[estimate].unstack(pair), bias["true"].unstack(pair))
    d = without_rounding(pairs.a, pairs.b)
    p, n, exact = sign_flip_pvalues(d, resamples=resamples, seed=seed)
    mean, low, high = mean_ci(d)
    frame = pairs.rows
    frame["metric"] = metric
    frame["estimate"] = estimate
    frame["n"] = n
    frame["n_duplicates"] = pairs.duplicates
    frame["mean_bias"] = mean
    frame["ci_low"] = low
    frame["ci_high"] = high
    frame["p_value"] = p
    frame["exact"] = exact
    groups = frame.groupby(["dataset", "policy", "estimator", "checkpoint"]).ngroup()
    frame["p_holm"] = holm_by_group(p, groups.to_numpy())
    return frame


def _untested_bias_note(row: pd.Series) -> str:
    """The note of a bias test with no pair where both the estimate and the true value exist."""
    return (
        f"no (seed, fold) pair with both an {row['estimate']} and a true value of "
        f"{row['metric']} (undefined there), no test"
    )


def _sort_bias(out: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """Bias rows by dataset, metric (as requested), policy (reading order), estimator,
    checkpoint, ``at`` and learner."""
    rank = {m: i for i, m in enumerate(dict.fromkeys(metrics))}
    estimate = {e: i for i, e in enumerate(ESTIMATES)}
    out = out.assign(_metric=out["metric"].map(rank), _estimate=out["estimate"].map(estimate))
    keys = ["dataset", "_metric", "_estimate", "policy", "estimator", "checkpoint", "at", "learner"]
    return sort_by_policy(out, keys).drop(columns=["_metric", "_estimate"])
