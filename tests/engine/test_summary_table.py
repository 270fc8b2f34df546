"""The fold summary (:func:`delaycv.engine.summarize`) against its definition on the long table:
one row per (run keys, reference, estimator, checkpoint, time, metric), pandas' own group
statistics over the folds (non-finite values missing), the references in the order of
``REFERENCES`` (any other after them, by name), then by checkpoint, then the metrics in order,
then the groups in order of first appearance."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from pandas.testing import assert_frame_equal

from delaycv import metrics
from delaycv.common.choices import REFERENCES
from delaycv.engine.t_quantile import t975
from delaycv.engine.tables import SUMMARY_COUNTS, SUMMARY_KEYS, SUMMARY_STATS, summarize

TEXT = ("dataset", "learner", "policy", "reference", "estimator")
METRICS = list(metrics.METRICS)[:4]


def by_definition(folds: pd.DataFrame) -> pd.DataFrame:
    names = [c for c in (*SUMMARY_COUNTS, *METRICS) if c in folds.columns]
    keys = list(SUMMARY_KEYS[:-1])
    long = folds.melt(id_vars=keys, value_vars=names, var_name="metric", value_name="value")
    long["value"] = long["value"].astype(np.float64).where(np.isfinite(long["value"]))
    grouped = long.groupby([*keys, "metric"], sort=False, dropna=False)["value"]
    out = grouped.agg(["count", "mean", "std"]).reset_index()
    n = out["count"].to_numpy(dtype=np.int64)
    std = np.where(n >= 2, out["std"], np.nan)
    tq = np.full(n.size, np.nan)
    tq[n >= 2] = t975(n[n >= 2] - 1)
    half = tq * std / np.sqrt(np.maximum(n, 1))
    out = out.assign(n_folds=n, std=std, ci_low=out["mean"] - half, ci_high=out["mean"] + half)
    out["_r"] = [
        REFERENCES.index(r) if r in REFERENCES else len(REFERENCES) for r in out["reference"]
    ]
    out["_m"] = [names.index(m) for m in out["metric"]]
    out = out.sort_values(["_r", "reference", "checkpoint", "_m"], kind="stable")
    out = out[[*SUMMARY_KEYS, *SUMMARY_STATS]].reset_index(drop=True)
    return out.astype({c: object for c in (*TEXT, "metric")})


@st.composite
def fold_tables(draw):
    n = draw(st.integers(1, 40))
    pick = lambda values: draw(st.lists(st.sampled_from(values), min_size=n, max_size=n))  # noqa: E731
    table = pd.DataFrame(
        {
            "dataset": pd.Series(pick(["d1", "d2"]), dtype=object),
            "learner": pd.Series(["river"] * n, dtype=object),
            "seed": np.array(pick([0, 7]), dtype=np.int64),
            "policy": pd.Series(["hitl"] * n, dtype=object),
            "fold": np.array(pick([0, 1, 2]), dtype=np.int64),
            "reference": pd.Series(pick([*REFERENCES, "zeta", "alpha"]), dtype=object),
            "estimator": pd.Series(pick(["fading", "sliding"]), dtype=object),
            "checkpoint": np.array(pick([30, 10, 20]), dtype=np.int64),
        }
    )
    table["time"] = table["checkpoint"] * 100 + np.array(pick([0, 1]), dtype=np.int64)
    for name in (*SUMMARY_COUNTS, *METRICS):
        table[name] = np.array(pick([0.0, 0.25, 1.0, -3.5, np.nan, np.inf]), dtype=np.float64)
    if draw(st.booleans()):  # text read back from Parquet by pandas 3: its string dtype
        table = table.astype({c: "str" for c in TEXT})
    return table


@settings(max_examples=150, deadline=None)
@given(fold_tables())
def test_the_summary_is_its_definition_on_the_long_table(folds):
    assert_frame_equal(summarize(folds), by_definition(folds), check_exact=True)


def test_the_summary_orders_references_checkpoints_then_metrics():
    folds = pd.DataFrame(
        {
            "dataset": "d", "learner": "l", "seed": 1, "policy": "p", "fold": [0, 0, 0, 1],
            "reference": ["zeta", "corrected", "observed", "observed"], "estimator": "fading",
            "checkpoint": [5, 9, 9, 5], "time": [50, 90, 90, 50],
            "accuracy": [0.5, 0.7, 0.9, 0.4], "kappa": [0.1, 0.2, 0.3, 0.4],
        }
    )  # fmt: skip
    s = summarize(folds)
    assert s[["reference", "checkpoint", "metric"]].values.tolist() == [
        ["observed", 5, "accuracy"],
        ["observed", 5, "kappa"],
        ["observed", 9, "accuracy"],
        ["observed", 9, "kappa"],
        ["corrected", 9, "accuracy"],
        ["corrected", 9, "kappa"],
        ["zeta", 5, "accuracy"],
        ["zeta", 5, "kappa"],
    ]
    assert s.loc[0, "n_folds"] == 1 and s.loc[0, "mean"] == 0.4 and np.isnan(s.loc[0, "std"])
    assert [str(t) for t in s.dtypes[list(TEXT)]] == ["object"] * len(TEXT)
