"""The rows a figure draws: selecting them, their order and their summaries.

This module owns what the figures of a comparison ask of their tables (and nothing they draw):
the rows of one dataset, reference or estimator (:func:`select_rows`, :func:`one_estimator`), the
policies in reading order (:func:`policy_order`), the mean and standard deviation over folds
(:func:`fold_stats`) and why a panel has no value to draw (:func:`no_value_reason`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from delaycv.common.errors import DelaycvError
from delaycv.protocol.policy_windows import policy_order as compare_policy_order
from delaycv.stats.checkpoints import RELEASE_COLUMN


def select_rows(table: pd.DataFrame, **equal) -> pd.DataFrame:
    """The rows of ``table`` whose columns equal the values given (a value None: any).

    Parameters
    ----------
    table : pandas.DataFrame
        The table.
    **equal
        column -> the value its rows must have (None: not a condition).

    Returns
    -------
    pandas.DataFrame
        The rows, in the table's order.

    Examples
    --------
    >>> t = pd.DataFrame({"dataset": ["a", "b", "a"], "estimator": ["x", "x", "y"]})
    >>> select_rows(t, dataset="a", estimator=None).index.tolist()
    [0, 2]
    """
    mask = np.ones(len(table), dtype=bool)
    for column, value in equal.items():
        if value is not None:
            mask &= (table[column] == value).to_numpy()
    return table[mask]


def one_estimator(table: pd.DataFrame, estimator: str | None) -> str:
    """The estimator a figure draws: ``estimator``, else the only one of ``table``.

    Parameters
    ----------
    table : pandas.DataFrame
        Rows with a column ``estimator``.
    estimator : str or None
        The estimator asked for (returned as it is).

    Returns
    -------
    str

    Raises
    ------
    DelaycvError
        ``estimator`` is None and ``table`` holds several estimators (or none).

    Examples
    --------
    >>> one_estimator(pd.DataFrame({"estimator": ["fading", "fading"]}), None)
    'fading'
    """
    if estimator is not None:
        return estimator
    found = sorted(table["estimator"].unique())
    if len(found) != 1:
        raise DelaycvError(f"the table holds estimators {found}; name one (estimator=...)")
    return found[0]


def policy_order(
    policies: Iterable[str], policy_specs: Mapping[str, object] | None = None
) -> list[str]:
    """Policies in reading order (the order of every table).

    By preset (in the order of :data:`delaycv.protocol.policies.PRESETS`, ideal first) and window
    length as a duration (the windows of their specs in ``policy_specs``, else of their names),
    then the others by name (:func:`delaycv.protocol.policy_windows.policy_order`).

    Parameters
    ----------
    policies : iterable of str
        The policies' names.
    policy_specs : mapping of str to spec, optional
        policy -> the spec the runs used.

    Returns
    -------
    list of str

    Examples
    --------
    >>> policy_order(["hitl_30d_90d", "ideal", "hitl_7d_90d"])
    ['ideal', 'hitl_7d_90d', 'hitl_30d_90d']
    """
    return compare_policy_order(policies, policy_specs)


def fold_stats(frame: pd.DataFrame, value: str, by: Sequence[str]) -> pd.DataFrame:
    """Mean, standard deviation (ddof 1, 0 for a single value) and count of ``value`` over the
    (seed, fold) pairs, by ``by``.

    Parameters
    ----------
    frame : pandas.DataFrame
        Per-fold rows.
    value : str
        The column summarised.
    by : sequence of str
        The columns of a group.

    Returns
    -------
    pandas.DataFrame
        Columns ``by``, ``mean``, ``sd`` and ``n``, sorted by ``by``.

    Examples
    --------
    >>> t = pd.DataFrame({"learner": ["a", "a", "b"], "v": [1.0, 3.0, 5.0]})
    >>> fold_stats(t, "v", ["learner"]).to_dict("list")
    {'learner': ['a', 'b'], 'mean': [2.0, 5.0], 'sd': [1.4142135623730951, 0.0], 'n': [2, 1]}
    """
    g = frame.groupby(list(by), sort=True)[value]
    out = g.agg(mean="mean", sd="std", n="count").reset_index()
    out["sd"] = out["sd"].fillna(0.0)
    return out


def no_value_reason(data: pd.DataFrame, metric: str) -> str:
    """Why the rows of one panel (one policy, at the checkpoints drawn) have no value of ``metric``.

    Parameters
    ----------
    data : pandas.DataFrame
        The panel's per-fold rows.
    metric : str
        The metric drawn.

    Returns
    -------
    str
        ``""`` when some value is finite; else that the policy released no label (every fold's
        ``evaluated`` is 0: every evaluation pending), or else that the metric is undefined there.

    Examples
    --------
    >>> no_value_reason(pd.DataFrame({"gmean": [0.5, float("nan")]}), "gmean")
    ''
    >>> no_value_reason(pd.DataFrame({"gmean": [float("nan")]}), "gmean")
    'no value of gmean (undefined here), nothing to draw'
    """
    values = data[metric].to_numpy(dtype=float) if metric in data else np.array([])
    if np.isfinite(values).any():
        return ""
    if RELEASE_COLUMN in data.columns and len(data) and not (data[RELEASE_COLUMN] > 0).any():
        return (
            "no label released: every evaluation pending "
            "(e.g. a window longer than the stream), nothing to draw"
        )
    return f"no value of {metric} (undefined here), nothing to draw"
