"""The raw formats delaycv reads, and the one function that picks the reader:
:func:`read_table` (ARFF: :mod:`delaycv.data.arff`; CSV: :mod:`delaycv.data.csv`; both build on
:mod:`delaycv.data.readers`, the shared :class:`~delaycv.data.readers.RawTable` and helpers).
"""

from __future__ import annotations

import os
from pathlib import Path

from delaycv.common.errors import InputError
from delaycv.data.readers import RawTable


def read_table(
    path: str | os.PathLike,
    *,
    format: str | None = None,
    text_columns: tuple[str, ...] | list[str] = (),
    drop_truncated_last_line: bool = False,
) -> RawTable:
    """Read an ARFF or CSV file (format from ``format`` or the file suffix) into a RawTable.

    ``text_columns`` applies to CSV (columns read as text, not numbers); ARFF types come from its
    header.
    """
    from delaycv.data import arff, csv  # (imported when a raw file is read)

    fmt = (format or Path(path).suffix.lstrip(".")).lower()
    if fmt == "arff":
        return arff.read_arff(path, drop_truncated_last_line=drop_truncated_last_line)
    if fmt == "csv":
        return csv.read_csv(
            path, text_columns=text_columns, drop_truncated_last_line=drop_truncated_last_line
        )
    raise InputError(
        f"unknown input format {fmt!r}",
        path=str(path),
        expected="a .arff or .csv file (or format: arff|csv)",
    )
