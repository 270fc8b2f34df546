"""What several stages share: reading a merged table for its metrics, and the scope of its
effort-aware measures (not a stage: its name begins with an underscore, so
:func:`delaycv.study.digests.stage_names` does not list it)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from delaycv.common.errors import InputError
from delaycv.metrics.effort_names import EFFORT_METRICS, EFFORT_SCOPE_COLUMN
from delaycv.stats.paired import table_columns
from delaycv.tables.results import read_table


def read_merged(path: str | Path, metrics: Sequence[str]) -> pd.DataFrame:
    """The columns of the merged table ``path`` that the tests and figures of ``metrics`` use
    (:func:`delaycv.stats.paired.table_columns`); a table that lacks some is read whole, so
    that the tests or the figures name what is missing in their own words (``lacks column(s)
    auc``)."""
    try:
        return read_table(path, table_columns(metrics))
    except InputError as err:
        if not err.message.startswith("no column"):
            raise
    return read_table(path)


def effort_scope_of(paths: Sequence[str | Path], metrics: Sequence[str]) -> str | None:
    """The scope(s) of the effort-aware measures of the merged tables ``paths`` (their
    ``effort_scope`` column, e.g. ``cumulative``), for the pages' headings; None when no metric
    of ``metrics`` is effort-aware or no table has the column."""
    if not set(metrics) & set(EFFORT_METRICS):
        return None
    found: set[str] = set()
    for path in paths:
        try:
            column = read_table(path, [EFFORT_SCOPE_COLUMN])[EFFORT_SCOPE_COLUMN]
        except InputError:
            continue
        found |= {str(v) for v in column.dropna().unique()}
    return ", ".join(sorted(found)) or None
