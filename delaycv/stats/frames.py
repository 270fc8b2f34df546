"""Conventions shared by the result tables of the statistics (pure, opens no files): the check
that an input table has the columns a computation reads (:func:`_require_columns`), the order of
a result table's rows with its policies in reading order (:func:`sort_by_policy`), and the
progress lines of a long computation (:func:`_stage_clock`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence

import pandas as pd

from delaycv.common.errors import InputError
from delaycv.protocol.policy_windows import policy_ranks


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


def sort_by_policy(frame: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """``frame`` sorted by ``keys`` (stable), its ``policy`` key in reading order.

    Reading order, not the text's, is :func:`~delaycv.protocol.policy_windows.policy_sort_key`'s:
    preset, then the windows as durations.

    Parameters
    ----------
    frame : pandas.DataFrame
        A result table with the columns ``keys``.
    keys : sequence of str
        The sort keys, in order; ``policy`` among them sorts by reading order.

    Returns
    -------
    pandas.DataFrame
        The sorted rows, the index reset.

    Examples
    --------
    >>> f = pd.DataFrame({"policy": ["hitl_7d_90d", "ideal", "hitl_1d_90d"], "x": [1, 2, 3]})
    >>> sort_by_policy(f, ["policy"])["policy"].tolist()
    ['ideal', 'hitl_1d_90d', 'hitl_7d_90d']
    """
    if frame.empty or "policy" not in keys:
        return frame.sort_values(list(keys), kind="stable").reset_index(drop=True)
    ranks = policy_ranks(frame["policy"].astype(str))
    return (
        frame.assign(_policy=frame["policy"].astype(str).map(ranks))
        .sort_values([k if k != "policy" else "_policy" for k in keys], kind="stable")
        .drop(columns="_policy")
        .reset_index(drop=True)
    )
