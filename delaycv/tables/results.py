"""Run directories: writing and reading the outputs of one run (merging runs: :mod:`delaycv.tables.merge`).

A run directory (``delaycv evaluate ... --out DIR``) holds

- ``folds.parquet``: the per-fold checkpoint table (columns in ``docs/architecture.md``);
- ``summary.parquet``: the fold summary (mean, std, 95 % CI per checkpoint and metric);
- ``run.json``: run keys, specs, package versions, final counts per fold, wall/CPU time;
- optionally ``predictions.parquet`` (the prediction log), ``dump.csv`` and ``detail.csv`` (the
  MOA-compatible export of :mod:`delaycv.tables.moa_export`).

The directory is written all-or-nothing (:func:`delaycv.common.atomic.atomic_dir`). Given the same
result, the files are byte-identical (no timestamps inside; timing fields only when the run
measured them).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from delaycv import __version__
from delaycv.common.atomic import atomic_dir, atomic_path
from delaycv.common.errors import InputError
from delaycv.data.stream_file import parquet_error

FOLDS_FILE = "folds.parquet"
SUMMARY_FILE = "summary.parquet"
PREDICTIONS_FILE = "predictions.parquet"
RUN_FILE = "run.json"


def versions() -> dict[str, str]:
    """Versions of delaycv, Python and the libraries that shape the numbers."""
    import river

    return {
        "delaycv": __version__,
        "python": platform.python_version(),
        "river": river.__version__,
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "pyarrow": pa.__version__,
    }


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, set | tuple):
        return list(value)
    return str(value)


def _clean(value: Any) -> Any:
    """JSON-safe copy: non-finite floats become None."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if isinstance(value, float | np.floating) and not math.isfinite(float(value)):
        return None
    return value


def parquet_options(schema: pa.Schema) -> dict[str, Any]:
    """How the result tables are written: zstd, with dictionary pages only for text columns (run
    keys, references, metric names). Tried on every column, dictionaries cost twice the time of
    a write and made files larger (a merged fold table of 465,900 rows: 2.03 s and 235 MB with
    them, 0.89 s and 186 MB without them on numbers; reading 1.01 -> 0.53 s). Every page has a
    CRC-32 checksum, verified when a table is read (:func:`read_table`, :func:`merge_files`)."""
    text = [
        f.name
        for f in schema
        if pa.types.is_string(f.type)
        or pa.types.is_large_string(f.type)
        or pa.types.is_dictionary(f.type)
    ]
    return {"compression": "zstd", "use_dictionary": text, "write_page_checksum": True}


def write_table(frame: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write ``frame`` to Parquet deterministically (no index, zstd), atomically."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, **parquet_options(table.schema))


class TableWriter:
    """Write a table handed over in pieces (DataFrames with the same columns, e.g. the
    ``on_rows`` pieces of :func:`delaycv.engine.evaluate`) to one Parquet file, atomically
    (``arrow=True``: an Arrow IPC file of record batches instead, uncompressed: cheap to write and
    to read back, for intermediate files).

    Rows are copied into column buffers of ``row_group`` rows, allocated once, and written as a
    row group whenever they are full: what is held stays the same however many pieces come (many
    small DataFrames or Arrow tables kept until a row group is written grew with the stream). The
    default, 16,384 rows, holds ~12 MB for the fold table's ~90 columns (and as much again while
    a row group is converted to Arrow).
    Use as a context manager: the file appears at ``path`` when the block ends without error, and
    nothing is left otherwise.

    >>> import tempfile
    >>> import delaycv
    >>> from river import naive_bayes
    >>> from delaycv.data.synthetic import generate_stream
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = Path(folder.name) / "folds.parquet"
    >>> with TableWriter(path) as write:
    ...     result = delaycv.evaluate(
    ...         generate_stream(rows=300, seed=1), naive_bayes.GaussianNB(),
    ...         folds=2, every=100, progress=False, on_rows=write,
    ...     )
    >>> len(result.folds), write.rows  # the rows went to the file, none is held
    (0, 18)
    >>> table = pd.read_parquet(path)
    >>> sorted(table["checkpoint"].unique().tolist())
    [100, 200, 300]
    >>> table.groupby(["fold", "reference"]).size().to_dict()  # doctest: +NORMALIZE_WHITESPACE
    {(0, 'corrected'): 3, (0, 'observed'): 3, (0, 'true'): 3, (1, 'corrected'): 3,
     (1, 'observed'): 3, (1, 'true'): 3}
    >>> folder.cleanup()
    """

    def __init__(
        self, path: str | os.PathLike, *, row_group: int = 16_384, arrow: bool = False
    ) -> None:
        if row_group < 1:
            raise ValueError(f"row_group must be >= 1, got {row_group!r}")
        self.path = Path(path)
        self.row_group = int(row_group)
        self.arrow = arrow
        self.rows = 0  # rows written or buffered so far
        self._stack: contextlib.ExitStack | None = None
        self._tmp: Path | None = None
        self._schema: pa.Schema | None = None
        self._columns: list[str] = []
        self._buffers: list[np.ndarray] = []
        self._held = 0
        self._writer: pq.ParquetWriter | pa.ipc.RecordBatchFileWriter | None = None

    def __enter__(self) -> TableWriter:
        self._stack = contextlib.ExitStack()
        self._tmp = self._stack.enter_context(atomic_path(self.path))
        return self

    def __call__(self, piece: pd.DataFrame) -> None:
        """Append the rows of ``piece``."""
        self.check(piece)
        self.append([piece[c].to_numpy() for c in self._columns])

    def check(self, piece: pd.DataFrame) -> None:
        """Take the table's columns from the first piece; check that ``piece`` has them."""
        if self._tmp is None:
            raise RuntimeError("TableWriter is used as a context manager (with ... as write)")
        if self._schema is None:
            self.start(
                pa.Schema.from_pandas(piece, preserve_index=False),
                {c: piece[c].to_numpy().dtype for c in piece.columns},
            )
        elif list(piece.columns) != self._columns:
            raise ValueError(
                f"{self.path}: a piece has columns {list(piece.columns)}, "
                f"the table has {self._columns}"
            )

    def start(self, schema: pa.Schema, dtypes: dict[str, np.dtype]) -> None:
        """Take the table's columns (Arrow ``schema``, NumPy ``dtypes`` of the buffers)."""
        self._schema = schema
        self._columns = list(dtypes)
        self._buffers = [np.empty(self.row_group, dtype=dtype) for dtype in dtypes.values()]

    def append(self, values: list[np.ndarray]) -> None:
        """Append rows given as one array per column (in the columns' order, after
        :meth:`check` of a piece with these columns)."""
        start, n = 0, len(values[0])
        while start < n:
            take = min(n - start, self.row_group - self._held)
            for buffer, column in zip(self._buffers, values, strict=True):
                buffer[self._held : self._held + take] = column[start : start + take]
            self._held += take
            start += take
            if self._held == self.row_group:
                self._write_group()
        self.rows += n

    def _write_group(self) -> None:
        if self._writer is None and self.arrow:
            self._writer = pa.ipc.new_file(str(self._tmp), self._schema)
        elif self._writer is None:
            options = parquet_options(self._schema)
            self._writer = pq.ParquetWriter(self._tmp, self._schema, **options)
        arrays = [
            pa.array(b[: self._held], type=f.type)
            for b, f in zip(self._buffers, self._schema, strict=True)
        ]
        self._writer.write_table(pa.Table.from_arrays(arrays, schema=self._schema))
        self._held = 0

    def __exit__(self, kind, value, tb) -> bool:
        stack, self._stack = self._stack, None
        if kind is None:
            try:
                if self._schema is None:
                    raise ValueError(f"{self.path}: no table piece was handed to the writer")
                if self._held or self._writer is None:
                    self._write_group()
                self._writer.close()
            except BaseException:
                self._abandon()
                stack.__exit__(*sys.exc_info())  # removes the temporary file, raises again
                raise
        else:
            self._abandon()
        return bool(stack.__exit__(kind, value, tb))

    def _abandon(self) -> None:
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()
            self._writer = None


def _write_table_into(frame: pd.DataFrame, path: Path) -> None:
    table = pa.Table.from_pandas(frame, preserve_index=False)
    pq.write_table(table, path, **parquet_options(table.schema))


def run_info(result, extra: dict | None = None) -> dict:
    """The content of ``run.json`` for ``result`` (an :class:`~delaycv.engine.EvaluationResult`)."""
    info = dict(result.info)
    out: dict[str, Any] = {
        "run_keys": info.pop("run_keys", {}),
        "versions": {**versions(), **info.pop("versions", {})},  # (a MOA learner's: the engine's)
        **info,
    }
    if extra:
        out.update(extra)
    return _clean(out)


def write_run(
    result,
    out_dir: str | os.PathLike,
    *,
    moa_export=None,
    extra: dict | None = None,
) -> Path:
    """Write the run directory ``out_dir`` for ``result`` (replacing it whole, atomically).

    ``moa_export``: a :class:`delaycv.tables.moa_export.MoaExport` whose observers ran in the evaluation; its
    ``dump.csv`` and ``detail.csv`` are written into the directory (with ``result.observers``,
    which holds the observers also when folds ran in other processes). ``extra``: more fields
    for ``run.json``.
    """
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        _write_table_into(result.folds, tmp / FOLDS_FILE)
        _write_table_into(result.summary, tmp / SUMMARY_FILE)
        write_run_files(result, tmp, moa_export=moa_export, extra=extra)
    return out_dir


def write_run_files(result, folder: Path, *, moa_export=None, extra: dict | None = None) -> None:
    """Write into ``folder`` the files of a run directory other than its two tables: the
    prediction log (if kept), the MOA export (if given) and ``run.json``."""
    if result.predictions is not None:
        _write_table_into(result.predictions, folder / PREDICTIONS_FILE)
    if moa_export is not None:
        moa_export.write(folder, result.observers or [])
    text = json.dumps(run_info(result, extra), indent=2, sort_keys=True, default=_json_default)
    (folder / RUN_FILE).write_text(text + "\n", encoding="utf-8")


def read_table(path: str | os.PathLike, columns: Iterable[str] | None = None) -> pd.DataFrame:
    """Read a Parquet table, or only its ``columns`` (in the file's order); errors name the file
    (and the columns it lacks)."""
    p = Path(path)
    if not p.is_file():
        raise InputError("no such file", path=str(p), expected="a Parquet table")
    try:
        if columns is None:
            return pq.read_table(p, page_checksum_verification=True).to_pandas()
        wanted = set(columns)
        names = pq.read_schema(p).names
        missing = sorted(wanted.difference(names))
        if missing:
            raise InputError(
                f"no column {', '.join(map(repr, missing))}",
                path=str(p),
                expected=f"a table with the columns {', '.join(sorted(wanted))}",
            )
        return pq.read_table(
            p, columns=[c for c in names if c in wanted], page_checksum_verification=True
        ).to_pandas()
    except (pa.ArrowInvalid, OSError) as err:
        raise parquet_error(err, p, None) from None


def read_run(run_dir: str | os.PathLike) -> dict[str, Any]:
    """``{"folds", "summary", "predictions" (or None), "info"}`` of a run directory."""
    d = Path(run_dir)
    if not (d / FOLDS_FILE).is_file():
        raise InputError(
            f"not a run directory (no {FOLDS_FILE})",
            path=str(d),
            expected="a delaycv run directory",
        )
    info_path = d / RUN_FILE
    try:
        info = json.loads(info_path.read_text(encoding="utf-8")) if info_path.is_file() else {}
    except json.JSONDecodeError as err:
        raise InputError(
            f"unreadable JSON: {err.msg}", path=str(info_path), location=f"line {err.lineno}"
        ) from None
    return {
        "folds": read_table(d / FOLDS_FILE),
        "summary": read_table(d / SUMMARY_FILE) if (d / SUMMARY_FILE).is_file() else None,
        "predictions": read_table(d / PREDICTIONS_FILE)
        if (d / PREDICTIONS_FILE).is_file()
        else None,
        "info": info,
    }


def table_path(path: str | os.PathLike, name: str) -> Path:
    """The table ``name`` of a run directory ``path``, or ``path`` itself when it is a file."""
    p = Path(path)
    return p / name if p.is_dir() else p


class GroupedParquetWriter:
    """A Parquet file (:func:`parquet_options`) written from Arrow tables that come one after the
    other, in row groups of at least ``row_group`` rows (what is held until it is written; many
    small row groups write slowly). :meth:`close` writes the rest and closes the file."""

    def __init__(self, path: str | os.PathLike, schema: pa.Schema, row_group: int) -> None:
        self.row_group = row_group
        self._writer = pq.ParquetWriter(path, schema, **parquet_options(schema))
        self._held: list[pa.Table] = []
        self._rows_held = 0

    def write(self, table: pa.Table) -> None:
        self._held.append(table)
        self._rows_held += table.num_rows
        if self._rows_held >= self.row_group:
            self._flush()

    def _flush(self) -> None:
        if self._held:
            self._writer.write_table(pa.concat_tables(self._held))
            self._held, self._rows_held = [], 0

    def close(self) -> None:
        try:
            self._flush()
        finally:
            self._writer.close()
