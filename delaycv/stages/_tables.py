"""What several stages share: reading a merged table for its metrics (not a stage: its name
begins with an underscore, so :func:`delaycv.study.digests.stage_names` does not list it)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from delaycv.common.errors import InputError
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
