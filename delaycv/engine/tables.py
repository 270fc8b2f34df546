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
    n_groups = count.shape[0]
    first = np.unique(gid, return_index=True)[1]
    group_keys = folds[keys].iloc[first].reset_index(drop=True)
    # metric-major, groups in order of first appearance (the order of the long table)
    res = group_keys.iloc[np.tile(np.arange(n_groups), len(names))].reset_index(drop=True)
    res["metric"] = np.repeat(np.array(names, dtype=object), n_groups)
    res["n_folds"] = count.T.reshape(-1).astype(np.int64)
    res["mean"] = mean.T.reshape(-1)
    res["std"] = sd.T.reshape(-1)
    res["n_folds"] = res["n_folds"].fillna(0).astype(np.int64)
    nf = res["n_folds"].to_numpy()
    std = res["std"].to_numpy(dtype=np.float64)
    std = np.where(nf >= 2, std, np.nan)
    tq = np.full(len(res), np.nan)
    ok = nf >= 2
    tq[ok] = t975(nf[ok] - 1)
    half = tq * std / np.sqrt(np.where(nf > 0, nf, 1))
    mean = res["mean"].to_numpy(dtype=np.float64)
    res["std"] = std
    res["ci_low"] = mean - half
    res["ci_high"] = mean + half
    order = {name: i for i, name in enumerate(names)}
    res["_m"] = res["metric"].map(order)
    # references in the order of REFERENCES (observed, true, corrected), then any other
    res["_r"] = (
        res["reference"].map({r: i for i, r in enumerate(REFERENCES)}).fillna(len(REFERENCES))
    )
    res = res.sort_values(["_r", "reference", "checkpoint", "_m"], kind="stable")
    res = res.drop(columns=["_m", "_r"])
    res = res.reset_index(drop=True)
    for c in ("dataset", "learner", "policy", "reference", "estimator", "metric"):
        res[c] = res[c].astype(object)
    return res[[*SUMMARY_KEYS, *SUMMARY_STATS]]
