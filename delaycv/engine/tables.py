"""The tables of a run (pure): the per-fold checkpoint table from the folds' rows, and the fold
summary (mean, std and 95 % interval over folds). Columns: ``docs/architecture.md``."""

from __future__ import annotations

import numpy as np
import pandas as pd

from delaycv import metrics as _metrics
from delaycv.common.choices import REFERENCES
from delaycv.common.columns import RUN_KEYS
from delaycv.engine.t_quantile import t975
from delaycv.metrics.effort_names import EFFORT_SCOPE_COLUMN

#: Columns of the per-fold checkpoint table before the metrics, in order.
FOLD_COLUMNS = (
    *RUN_KEYS,
    "fold",
    "reference",
    "estimator",
    "checkpoint",
    "time",
    "seen",
    "evaluated",
    "pending",
    "skipped",
    "trained",
    "weight",
    "evaluated_now",
    "cpu_seconds",
    "model_bytes",
)
#: The integer columns among them (``evaluated_now`` is boolean, the rest float).
INT_COLUMNS = (
    "seed",
    "fold",
    "checkpoint",
    "time",
    "seen",
    "evaluated",
    "pending",
    "skipped",
    "trained",
)
#: Columns of the prediction log, in order.
PREDICTION_COLUMNS = (
    "fold",
    "index",
    "time",
    "pred",
    "proba",
    "true",
    "observed",
    "observed_at",
    "weight",
)
#: Columns of the fold summary before the statistics.
SUMMARY_KEYS = (*RUN_KEYS, "reference", "estimator", "checkpoint", "time", "metric")
SUMMARY_STATS = ("n_folds", "mean", "std", "ci_low", "ci_high")
#: the summary's key columns of text (object dtype, as in the fold table)
_TEXT_KEYS = ("dataset", "learner", "policy", "reference", "estimator")
#: Count columns summarised along with the metrics.
SUMMARY_COUNTS = ("evaluated", "pending", "skipped", "trained", "weight")


def folds_table(
    rows: list, run_keys: dict, estimator_kind: str, effort_scope: str | None = None
) -> pd.DataFrame:
    """The per-fold checkpoint table of ``rows`` (fold, reference, counts, metric values) of the run
    ``run_keys`` under the estimator ``estimator_kind``. The metric columns are ``METRICS``; a
    stream with an effort (the rows carry its measures) adds the column ``effort_scope`` (the
    scope's label, ``effort_scope``) and ``EFFORT_METRICS``."""
    metric_names = list(_metrics.METRICS)
    if effort_scope is not None:
        metric_names += _metrics.EFFORT_METRICS
    count_cols = list(FOLD_COLUMNS[len(RUN_KEYS) + 3 :])
    n_rows = len(rows)
    if rows:
        values = np.vstack([row[3] for row in rows])
        count_values = list(zip(*(row[2] for row in rows), strict=True))
    else:
        values = np.empty((0, len(metric_names)))
        count_values = [() for _ in count_cols]
    out = pd.DataFrame(
        {
            "dataset": pd.Series([str(run_keys["dataset"])] * n_rows, dtype=object),
            "learner": pd.Series([str(run_keys["learner"])] * n_rows, dtype=object),
            "seed": np.full(n_rows, int(run_keys["seed"]), dtype=np.int64),
            "policy": pd.Series([str(run_keys["policy"])] * n_rows, dtype=object),
            "fold": np.array([row[0] for row in rows], dtype=np.int64),
            "reference": pd.Series([row[1] for row in rows], dtype=object),
            "estimator": pd.Series([estimator_kind] * n_rows, dtype=object),
        }
    )
    for c, col in zip(count_cols, count_values, strict=True):
        if c in INT_COLUMNS:
            out[c] = np.array(col, dtype=np.int64)
        elif c == "evaluated_now":
            out[c] = np.array(col, dtype=bool)
        else:
            out[c] = np.array(col, dtype=np.float64)
    metrics = pd.DataFrame(values, columns=metric_names, index=out.index)
    if effort_scope is not None:
        at = len(_metrics.METRICS)
        metrics.insert(at, EFFORT_SCOPE_COLUMN, pd.Series([effort_scope] * n_rows, dtype=object))
    return pd.concat([out, metrics], axis=1)


def summarize(folds: pd.DataFrame) -> pd.DataFrame:
    """The fold summary: per (run keys, reference, estimator, checkpoint, metric) over folds.

    ``n_folds`` = number of folds with a finite value, ``mean``, ``std`` (sample, n - 1; NaN if
    n_folds < 2) and the t-based 95 % interval ``mean -/+ t_{0.975, n-1} * std / sqrt(n)``.
    Metrics are every column of :data:`delaycv.metrics.METRICS` and
    :data:`delaycv.metrics.EFFORT_METRICS` present, plus the counts :data:`SUMMARY_COUNTS`.
    """
    names = [
        c
        for c in (*SUMMARY_COUNTS, *_metrics.METRICS, *_metrics.EFFORT_METRICS)
        if c in folds.columns
    ]
    keys = [k for k in (*RUN_KEYS, "reference", "estimator", "checkpoint", "time")]
    if folds.empty:
        return pd.DataFrame({c: [] for c in (*SUMMARY_KEYS, *SUMMARY_STATS)})
    # Aggregated on the wide table (one column per metric, memory ~ the fold table) with the
    # same pandas kernels, values and order as on the long table: identical statistics.
    values = folds[names].to_numpy(dtype=np.float64, copy=True)
    values[~np.isfinite(values)] = np.nan
    gid = folds.groupby(keys, sort=False, dropna=False).ngroup().to_numpy()
    wide = pd.DataFrame(values, columns=range(len(names)))
    g = wide.groupby(gid, sort=True)  # group ids are in order of first appearance
    count = g.count().to_numpy()
    mean = g.mean().to_numpy()
    sd = g.std().to_numpy()
    first = np.unique(gid, return_index=True)[1]  # each group's first row
    group, metric = _summary_order(folds, first, len(names))
    nf = count[group, metric].astype(np.int64)
    std = np.where(nf >= 2, sd[group, metric], np.nan)
    tq = np.full(nf.size, np.nan)
    ok = nf >= 2
    tq[ok] = t975(nf[ok] - 1)
    half = tq * std / np.sqrt(np.where(nf > 0, nf, 1))
    mean = mean[group, metric]
    rows = first[group]
    columns = {}
    for c in SUMMARY_KEYS[:-1]:
        column = folds[c].to_numpy()[rows]
        columns[c] = pd.Series(column, dtype=object) if c in _TEXT_KEYS else column
    columns["metric"] = pd.Series(np.array(names, dtype=object)[metric], dtype=object)
    stats = {"n_folds": nf, "mean": mean, "std": std, "ci_low": mean - half, "ci_high": mean + half}
    return pd.DataFrame({**columns, **stats}, copy=False)


def _summary_order(folds: pd.DataFrame, first: np.ndarray, n_metrics: int) -> tuple:
    """(group, metric) of each row of the summary, in its order: the references in the order of
    REFERENCES (observed, true, corrected; any other after them, by name), then by checkpoint,
    then the metrics in order, then the groups in order of first appearance (``first``: each
    group's first row of ``folds``)."""
    reference = folds["reference"].to_numpy()[first]
    known = {r: i for i, r in enumerate(REFERENCES)}
    rank = np.array([known.get(r, len(REFERENCES)) for r in reference.tolist()], dtype=np.int64)
    by_name = np.unique(reference.astype(object), return_inverse=True)[1]
    checkpoint = folds["checkpoint"].to_numpy()[first]
    groups = np.lexsort((np.arange(first.size), checkpoint, by_name, rank))
    # blocks of groups with one reference and checkpoint: every metric of a block, in turn
    key = np.column_stack((rank, by_name, checkpoint))[groups]
    starts = np.flatnonzero(np.r_[True, (key[1:] != key[:-1]).any(axis=1)])
    sizes = np.diff(np.r_[starts, groups.size])  # groups per block
    rows = sizes * n_metrics  # summary rows per block
    block = np.repeat(np.arange(starts.size), rows)
    at = np.arange(block.size) - np.repeat(np.cumsum(rows) - rows, rows)  # row within its block
    size = sizes[block]
    return groups[starts[block] + at % size], at // size
