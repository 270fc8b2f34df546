"""Merging runs into tidy tables: the per-fold tables of many run directories, checked (each is a
table of runs, each run once, the same columns, one stream under one dataset name) and
concatenated, in memory (:func:`merge_tables`, :func:`merge_runs`) or streamed into one Parquet
file (:func:`merge_files`, the workflow's merge stage).

Each dataset's stream has one identity, its content digest (:mod:`delaycv.data.identity`): a
run's ``run.json`` records it (``stream_sha256``), a merged Parquet table in its metadata
(:data:`STREAMS_KEY`), read back by :func:`table_streams`; :class:`StreamNames` refuses one
dataset name for two streams and two names for one stream, naming both tables.

Runs of streams with and without an effort merge: the effort-aware measures (and their scope) of
the others read NaN.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from delaycv.common.atomic import atomic_path
from delaycv.common.columns import RUN_KEYS
from delaycv.common.errors import InputError
from delaycv.data.stream_file import parquet_error
from delaycv.metrics.effort_names import EFFORT_COLUMNS
from delaycv.tables.results import (
    FOLDS_FILE,
    RUN_FILE,
    GroupedParquetWriter,
    read_table,
    table_path,
    write_table,
)

__all__ = [
    "RUN_KEYS",
    "STREAMS_KEY",
    "StreamNames",
    "claim_run",
    "merge_files",
    "merge_runs",
    "merge_tables",
    "table_streams",
]

#: The Parquet metadata key of a merged table's streams: JSON ``{dataset: content digest}``.
STREAMS_KEY = b"delaycv_streams"


def table_streams(path: str | os.PathLike) -> dict[str, str] | None:
    """The content digest of each dataset's stream in the table ``path``: a merged table's
    metadata (:data:`STREAMS_KEY`), or the ``run.json`` beside a run's table; None when neither
    says (a table written otherwise, a run of an older delaycv)."""
    p = Path(path)
    try:
        meta = pq.read_schema(p).metadata or {}
    except (pa.ArrowInvalid, OSError):
        return None
    if STREAMS_KEY in meta:
        found = json.loads(meta[STREAMS_KEY].decode("utf-8"))
        return {str(k): str(v) for k, v in found.items()}
    info_file = p.parent / RUN_FILE
    if not info_file.is_file():
        return None
    try:
        info = json.loads(info_file.read_text(encoding="utf-8"))
        dataset, digest = info["run_keys"]["dataset"], info["stream_sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return {str(dataset): str(digest)}


class StreamNames:
    """The datasets' streams of several tables, checked as they come (:meth:`add`): each dataset
    name one stream, each stream one dataset name (two names for one stream would count it
    twice in the rankings: Friedman's n). :attr:`streams` is what the tables say
    (``{dataset: digest}``), :attr:`unknown` the tables that say nothing."""

    def __init__(self) -> None:
        self.streams: dict[str, str] = {}
        self._where: dict[str, str] = {}
        self._names: dict[str, str] = {}
        self.unknown: list[str] = []

    def add(self, path: str, streams: dict[str, str] | None) -> None:
        """Add the streams of the table ``path`` (None: it says nothing of them); an InputError
        naming both tables at the first conflict."""
        if streams is None:
            self.unknown.append(path)
            return
        for dataset, digest in streams.items():
            known = self.streams.get(dataset)
            if known is not None and known != digest:
                raise InputError(
                    f"dataset {dataset!r} is another stream here than in {self._where[dataset]} "
                    "(their contents differ)",
                    path=path,
                    expected="one stream under each dataset name",
                )
            other = self._names.setdefault(digest, dataset)
            if other != dataset:
                raise InputError(
                    f"datasets {other!r} (in {self._where[other]}) and {dataset!r} are one "
                    "stream (the same content, whatever the files' form)",
                    path=path,
                    expected="each stream under one dataset name (two count it twice in the "
                    "rankings): give one of the two",
                )
            self.streams[dataset] = digest
            self._where.setdefault(dataset, path)


def _tables_to_merge(
    paths: Iterable[str | os.PathLike], name: str
) -> tuple[list[Path], StreamNames]:
    """The tables ``name`` of ``paths`` (run directories or tables), checked before any is read:
    each is a run's table (run keys as columns; not a stream, whose Parquet metadata has the key
    ``delaycv``), no run comes twice (the same file twice, or a run's keys in two tables,
    which a comparison would otherwise pair with itself), and each stream has one dataset name
    (:class:`StreamNames`, also returned). Errors name the path (and the other)."""
    tables: list[Path] = []
    by_file: dict[Path, str] = {}
    by_run: dict[tuple, str] = {}
    names = StreamNames()
    expected = "a run directory or a table of runs"
    for given in paths:
        p = table_path(given, name)
        if Path(given).is_dir() and not p.is_file():
            raise InputError(f"not a run directory (no {name})", path=str(given), expected=expected)
        if not p.is_file():
            raise InputError("no such file", path=str(p), expected=expected)
        try:
            schema = pq.read_schema(p)
            if b"delaycv" in (schema.metadata or {}):
                raise InputError(
                    "a stream (as delaycv convert and generate write), not a table of runs",
                    path=str(p),
                    expected=expected,
                )
            missing = [k for k in RUN_KEYS if k not in schema.names]
            if missing:
                raise InputError(
                    f"not a table of runs: no column {', '.join(map(repr, missing))}",
                    path=str(p),
                    expected=f"{expected} (columns {', '.join(RUN_KEYS)}, ...)",
                )
            runs = pq.read_table(p, columns=list(RUN_KEYS)).group_by(list(RUN_KEYS)).aggregate([])
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as err:
            raise InputError(f"not a readable Parquet file: {err}", path=str(p)) from None
        if p.resolve() in by_file:
            raise InputError(
                f"the same table as {by_file[p.resolve()]}",
                path=str(given),
                expected="each run once",
            )
        by_file[p.resolve()] = str(given)
        for run in zip(*(runs.column(k).to_pylist() for k in RUN_KEYS), strict=True):
            claim_run(by_run, run, str(given))
        names.add(str(given), table_streams(p))
        tables.append(p)
    return tables, names


def _merged_columns(schemas: list[tuple[list[str], Path]]) -> tuple[list[str], Path]:
    """The columns of a merge of tables with the columns ``schemas`` (names, path) and the table
    they are taken from: the first's, with the effort-aware measures (and their scope) when any
    table has them (runs of streams with and without an effort merge; the others' rows read NaN
    there)."""
    for names, path in schemas:
        if set(EFFORT_COLUMNS) <= set(names):
            return names, path
    return schemas[0]


def claim_run(seen: dict[tuple, str], run: tuple, path: str) -> None:
    """Record that the run ``run`` (its values of :data:`RUN_KEYS`) is in ``path``; an
    InputError naming both files if ``seen`` already has it in another (each run once)."""
    if run in seen:
        keys = ", ".join(f"{k}={v}" for k, v in zip(RUN_KEYS, run, strict=True))
        raise InputError(f"run {keys} is also in {seen[run]}", path=path, expected="each run once")
    seen[run] = path


def _check_same_columns(columns: list[str], first: Path, found: list[str], path: Path) -> None:
    """``found`` must be ``columns`` (the effort-aware measures and their scope may be missing:
    filled with NaN)."""
    if found != columns and found != [c for c in columns if c not in EFFORT_COLUMNS]:
        missing = [c for c in columns if c not in found]
        extra = [c for c in found if c not in columns]
        raise InputError(
            f"columns differ from {first} (missing {missing or 'none'}, extra {extra or 'none'})",
            path=str(path),
            expected="the same columns in the same order",
        )


def merge_tables(paths: Iterable[str | os.PathLike], *, name: str = FOLDS_FILE) -> pd.DataFrame:
    """Concatenate the tables ``name`` of run directories (or Parquet files given directly).

    Every table must have the same columns in the same order as the first; the error names the
    file that differs. Rows keep their order (runs in the order given).
    """
    frames = [(read_table(p), p) for p in _tables_to_merge(paths, name)[0]]
    if not frames:
        raise InputError("nothing to merge", expected="at least one run directory")
    columns, first = _merged_columns([(list(f.columns), p) for f, p in frames])
    for frame, p in frames:
        _check_same_columns(columns, first, list(frame.columns), p)
    merged = pd.concat([f for f, _ in frames], ignore_index=True)
    return merged[columns] if list(merged.columns) != columns else merged


def merge_files(
    paths: Iterable[str | os.PathLike],
    out: str | os.PathLike,
    *,
    name: str = FOLDS_FILE,
    row_group: int = 65_536,
) -> int:
    """:func:`merge_tables` written to the Parquet file ``out`` (atomically) without holding the
    tables: Arrow row groups are read one at a time and written in groups of at least
    ``row_group`` rows (what is held; many small groups write slowly). The workflow's merges: a
    study's merged table can be gigabytes in pandas. The same checks, and the same table read
    back; returns the number of rows."""
    paths, names = _tables_to_merge(paths, name)
    if not paths:
        raise InputError("nothing to merge", expected="at least one run directory")
    rows = 0
    schema, first = _merged_schema(paths)
    if names.streams:  # what the tables say of their streams, for later merges and rank
        text = json.dumps(names.streams, sort_keys=True).encode("utf-8")
        schema = schema.with_metadata({**(schema.metadata or {}), STREAMS_KEY: text})
    with atomic_path(out) as tmp:
        writer = GroupedParquetWriter(tmp, schema, row_group)
        try:
            for p in paths:
                try:
                    source = pq.ParquetFile(p, page_checksum_verification=True)
                    _check_same_columns(schema.names, first, source.schema_arrow.names, p)
                    for group in range(source.num_row_groups):
                        table = source.read_row_group(group)
                        for column in schema.names[table.num_columns :]:  # effort-aware, NaN
                            field = schema.field(column)
                            table = table.append_column(field, pa.nulls(table.num_rows, field.type))
                        if not table.schema.equals(schema, check_metadata=False):
                            table = table.cast(schema)  # e.g. a column all null in one run
                        writer.write(table)
                        rows += table.num_rows
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as err:
                    raise parquet_error(err, p, None) from None
        finally:
            writer.close()
    return rows


def _merged_schema(paths: list[Path]) -> tuple[pa.Schema, Path]:
    """The Arrow schema of the merge of the tables ``paths`` (:func:`_merged_columns`) and the
    table it is taken from."""
    schemas = {}
    for p in paths:
        if not p.is_file():
            raise InputError("no such file", path=str(p), expected="a Parquet table")
        try:
            schemas[p] = pq.read_schema(p)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as err:
            raise parquet_error(err, p, None) from None
    _, first = _merged_columns([(s.names, p) for p, s in schemas.items()])
    return schemas[first], first


def merge_runs(
    run_dirs: Iterable[str | os.PathLike], out: str | os.PathLike | None = None
) -> pd.DataFrame:
    """The ``folds.parquet`` tables of ``run_dirs`` concatenated (one tidy table, same columns);
    written to ``out`` (atomically) when given."""
    merged = merge_tables(run_dirs, name=FOLDS_FILE)
    if out is not None:
        write_table(merged, out)
    return merged
