"""The raw formats delaycv reads, and the one function that picks the reader:
:func:`read_table` (ARFF: :mod:`delaycv.data.arff`; CSV: :mod:`delaycv.data.csv`; both build on
:mod:`delaycv.data.readers`, the shared :class:`~delaycv.data.readers.RawTable` and helpers).
Either may be compressed (gzip, bzip2 or xz: ``data.csv.gz``), which the readers undo; the
format is the suffix before the compression's (:func:`raw_format`).
"""

from __future__ import annotations

import os
from pathlib import Path

from delaycv.common.errors import InputError
from delaycv.data.readers import RawTable

#: The suffixes of a compressed raw file, after its format's (``data.csv.gz``).
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz")


def _without_compression(path: str | os.PathLike) -> Path:
    p = Path(path)
    return p.with_suffix("") if p.suffix.lower() in COMPRESSED_SUFFIXES else p


def raw_format(path: str | os.PathLike, format: str | None = None) -> str:
    """The format of a raw file: ``format`` if given, else its suffix, before a compression's
    (``data.csv.gz``: ``csv``), in lower case.

    >>> raw_format("data/npm.arff"), raw_format("phishing.CSV.gz"), raw_format("x.gz", "csv")
    ('arff', 'csv', 'csv')
    """
    return (format or _without_compression(path).suffix.lstrip(".")).lower()


def raw_stem(path: str | os.PathLike) -> str:
    """A raw file's name without its format's suffix and a compression's: what a dataset
    converted from it is called unless named.

    >>> raw_stem("data/0_brackets.csv"), raw_stem("phishing.csv.gz")
    ('0_brackets', 'phishing')
    """
    return _without_compression(path).stem


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

    fmt = raw_format(path, format)
    if fmt == "arff":
        return arff.read_arff(path, drop_truncated_last_line=drop_truncated_last_line)
    if fmt == "csv":
        return csv.read_csv(
            path, text_columns=text_columns, drop_truncated_last_line=drop_truncated_last_line
        )
    raise InputError(
        f"unknown input format {fmt!r}",
        path=str(path),
        expected="a .arff or .csv file, or one compressed (.csv.gz, .bz2, .xz) (or format: "
        "arff|csv)",
    )
