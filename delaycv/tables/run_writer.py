"""Run directories written while their evaluation goes (``delaycv evaluate`` and the workflow's
evaluate jobs): :class:`RunWriter`.

Kept apart from :mod:`delaycv.tables.results` (the run directories' layout,
:func:`~delaycv.tables.results.write_run` for a result in memory, reading and merging) because it
summarises the fold table with the engine's :func:`~delaycv.engine.summarize`, which the
aggregation stages do not run: a change to the engine reruns the evaluations only.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from delaycv.common.atomic import atomic_dir
from delaycv.common.choices import REFERENCES
from delaycv.engine import summarize
from delaycv.tables.results import (
    FOLDS_FILE,
    SUMMARY_FILE,
    GroupedParquetWriter,
    TableWriter,
    write_run_files,
    write_table,
)


class _Parts:
    """One table written as parts, an Arrow IPC file per key (in a folder), then joined into one
    Parquet file in the keys' order (``order``: a sort key of the keys; the references' order
    is :data:`delaycv.common.choices.REFERENCES`'s, not the alphabet's): rows that arrive interleaved (a run's pieces hold every
    fold's rows of a few checkpoints) end up grouped by key, in the order they came within each
    key."""

    def __init__(self, folder: Path, name: str, row_group: int, order=None) -> None:
        self.folder, self.name, self.row_group = folder, name, row_group
        self.order = order
        self.writers: dict[Any, TableWriter] = {}
        self.stack = contextlib.ExitStack()
        self.schema: pa.Schema | None = None  # of the table, from its first piece
        self.dtypes: dict[str, np.dtype] = {}

    def add(self, column: str, piece: pd.DataFrame) -> None:
        """Append the rows of ``piece`` to the parts of their ``column`` values."""
        values = [piece[c].to_numpy() for c in piece.columns]
        if self.schema is None:
            self.schema = pa.Schema.from_pandas(piece, preserve_index=False)
            self.dtypes = {c: v.dtype for c, v in zip(piece.columns, values, strict=True)}
        elif list(piece.columns) != list(self.dtypes):
            raise ValueError(
                f"{self.folder / self.name}: a piece has columns {list(piece.columns)}, "
                f"the table has {list(self.dtypes)}"
            )
        codes, keys = pd.factorize(piece[column], sort=False)
        order = np.argsort(codes, kind="stable")
        if (np.diff(order) != 1).any():  # rows of a key apart: brought together, in order
            values = [v[order] for v in values]
            codes = codes[order]
        bounds = np.searchsorted(codes, np.arange(len(keys) + 1))
        for g, key in enumerate(keys):
            writer = self.writers.get(key)
            if writer is None:
                part = self.folder / f".{self.name}-{len(self.writers)}.arrow"
                part_writer = TableWriter(part, row_group=self.row_group, arrow=True)
                writer = self.stack.enter_context(part_writer)
                writer.start(self.schema, self.dtypes)
                self.writers[key] = writer
            writer.append([v[bounds[g] : bounds[g + 1]] for v in values])

    def join(self, path: Path, row_group: int = 16_384) -> None:
        """Close the parts, write them one after the other into ``path`` (row groups of about
        ``row_group`` rows: what is held), and remove them."""
        self.stack.close()
        parts = [self.writers[key].path for key in sorted(self.writers, key=self.order)]
        writer = None
        try:
            for part in parts:
                with pa.OSFile(str(part)) as source:  # batches read into memory of their own
                    reader = pa.ipc.open_file(source)
                    if writer is None:
                        writer = GroupedParquetWriter(path, reader.schema, row_group)
                    for batch in range(reader.num_record_batches):
                        writer.write(pa.Table.from_batches([reader.get_batch(batch)]))
        finally:
            if writer is not None:
                writer.close()
        for part in parts:
            part.unlink()


class RunWriter:
    """A run directory written while its evaluation goes: the fold table and its summary are
    handed over in pieces (the ``on_rows`` of :func:`delaycv.engine.evaluate`) and written as
    they come, so that a long stream's tables are never held; :meth:`finish` then writes the rest
    of the run (``run.json``, the prediction log, the MOA export) as
    :func:`~delaycv.tables.results.write_run` does.

    The files hold the same tables, rows in the same order, as
    :func:`~delaycv.tables.results.write_run` given the in-memory result (only the Parquet row groups
    differ). A piece holds whole checkpoints of every fold; the table is fold by fold and the
    summary reference by reference, so each fold's rows go to a part file of their own, and so do
    each reference's summary rows (pieces are summarised in batches of whole checkpoints, whose
    summary is the table's at those checkpoints); the parts are joined in order at the end.
    All-or-nothing: the directory appears when the block ends after :meth:`finish`; nothing is
    left if it ends otherwise (an existing directory stays as it was).

    >>> import tempfile
    >>> import delaycv
    >>> from river import naive_bayes
    >>> from delaycv.data.synthetic import generate_stream
    >>> folder = tempfile.TemporaryDirectory()
    >>> with RunWriter(Path(folder.name) / "a") as run:
    ...     run.finish(
    ...         delaycv.evaluate(
    ...             generate_stream(rows=300, seed=1), naive_bayes.GaussianNB(),
    ...             folds=2, every=100, progress=False, on_rows=run.add,
    ...         )
    ...     )
    >>> sorted(p.name for p in (Path(folder.name) / "a").iterdir()), run.rows
    (['folds.parquet', 'run.json', 'summary.parquet'], 18)
    >>> folder.cleanup()
    """

    #: Rows buffered per fold part (about 0.75 MB each for the fold table's ~90 columns).
    FOLD_ROW_GROUP = 1024
    #: Fold-table rows kept until they are summarised together (a summary has a fixed cost).
    SUMMARY_BATCH = 16_384

    def __init__(self, out_dir: str | os.PathLike) -> None:
        self.out_dir = Path(out_dir)
        self.rows = 0  # fold-table rows written so far
        self._dir: contextlib.AbstractContextManager | None = None
        self._tmp: Path | None = None
        self._folds: _Parts | None = None
        self._summary: _Parts | None = None
        self._unsummarised: list[pd.DataFrame] = []
        self._unsummarised_rows = 0
        self._tables_written = False
        self._finished = False

    def __enter__(self) -> RunWriter:
        self._dir = atomic_dir(self.out_dir)
        self._tmp = self._dir.__enter__()
        return self

    def add(self, piece: pd.DataFrame) -> None:
        """Write the fold-table rows of ``piece`` (whole checkpoints) and their summary."""
        if self._tmp is None or self._tables_written:
            raise RuntimeError(
                "RunWriter.add is called inside its with block, before the tables are written"
            )
        if piece.empty:
            return
        if self._folds is None:
            self._folds = _Parts(self._tmp, "folds", self.FOLD_ROW_GROUP)
            self._summary = _Parts(self._tmp, "summary", 16_384, order=REFERENCES.index)
        self._folds.add("fold", piece)
        self.rows += len(piece)
        self._unsummarised.append(piece)
        self._unsummarised_rows += len(piece)
        if self._unsummarised_rows >= self.SUMMARY_BATCH:
            self._summarise()

    def _summarise(self) -> None:
        if self._unsummarised:
            batch = self._unsummarised[0]
            if len(self._unsummarised) > 1:
                batch = pd.concat(self._unsummarised, ignore_index=True)
            self._unsummarised, self._unsummarised_rows = [], 0
            self._summary.add("reference", summarize(batch))

    def write_tables(self, result) -> None:
        """Complete ``folds.parquet`` and ``summary.parquet`` (the parts joined; if no piece came
        here, ``result``'s own tables). :meth:`finish` does it when it has not been done."""
        if self._tmp is None or self._finished:
            raise RuntimeError("RunWriter.write_tables is called inside its with block")
        if self._tables_written:
            return
        self._tables_written = True
        if self._folds is None:
            write_table(result.folds, self._tmp / FOLDS_FILE)
            write_table(result.summary, self._tmp / SUMMARY_FILE)
        else:
            self._summarise()
            self._folds.join(self._tmp / FOLDS_FILE)
            self._summary.join(self._tmp / SUMMARY_FILE)

    def finish(self, result, *, moa_export=None, extra: dict | None = None) -> None:
        """Write the rest of the run: the tables (:meth:`write_tables`), then what
        :func:`~delaycv.tables.results.write_run` writes besides them (``moa_export`` and ``extra`` as
        there)."""
        if self._tmp is None or self._finished:
            raise RuntimeError("RunWriter.finish is called once, inside its with block")
        self.write_tables(result)
        self._finished = True
        write_run_files(result, self._tmp, moa_export=moa_export, extra=extra)

    def __exit__(self, kind, value, tb) -> bool:
        directory, self._dir, self._tmp = self._dir, None, None
        unfinished = kind is None and not self._finished
        if unfinished:
            kind = RuntimeError
            value = RuntimeError(f"{self.out_dir}: the run ended without RunWriter.finish")
        try:
            for parts in (self._folds, self._summary):
                if parts is not None:  # an error abandons the unfinished parts
                    parts.stack.__exit__(kind, value, tb)
        finally:
            directory.__exit__(kind, value, tb)  # and removes the directory
        if unfinished:
            raise value
        return False
