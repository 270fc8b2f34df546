"""The canonical stream on disk: one Parquet file, written, read whole or chunk by chunk, and
checked from its schema alone (docs/data.md). The stream itself: :mod:`delaycv.data.stream`.

The columns are ``time`` int64, ``label`` int8, ``label_time`` nullable int64, ``effort`` float64
(only when the stream has an effort), then the features (float64, or dictionary<int32, string>; a
missing value is null, and a NaN read from a foreign file is missing too), and the metadata is
JSON under the Parquet file-metadata key ``b"delaycv"``. A column ``effort`` is the effort when
the metadata declares one (its ``effort`` key); a stream without an effort may have a feature
named ``effort`` (listed in the metadata's ``features``), a stream with one may not. Writing
(:func:`write_stream`) is atomic and deterministic: the same stream gives byte-identical files.
Every page has a checksum, verified on reading (:func:`read_stream`, :class:`StreamFile`; a
mismatch is an InputError naming the file, :func:`parquet_error`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from delaycv.common.atomic import atomic_path
from delaycv.common.checks import EFFORT_EXPECTED
from delaycv.common.errors import DelaycvError, InputError
from delaycv.data.identity import CONTENT_KEY, ContentDigest
from delaycv.data.mapping import check_copies_read
from delaycv.data.stream import (
    BASE_COLUMNS,
    EFFORT_COLUMN,
    Stream,
    StreamChunk,
    bad_efforts,
    first_implausible_time,
    has_effort,
    implausible_time_text,
    reveals_before_arrival,
    reveals_before_arrival_text,
)

#: Parquet file-metadata key holding the stream metadata (JSON).
METADATA_KEY = b"delaycv"
#: Version of the on-disk layout, stored in the metadata as ``format_version``.
FORMAT_VERSION = 1


def to_table(stream: Stream) -> pa.Table:
    """The Arrow table of ``stream`` in the canonical layout (metadata under ``b"delaycv"``, with
    the stream's content digest, :mod:`delaycv.data.identity`): ``time``, ``label``,
    ``label_time``, ``effort`` (when the stream has one), the features."""
    lt = stream.label_time
    missing = np.isnan(lt)
    lt_int = np.where(missing, 0, lt).astype(np.int64)
    arrays = [
        pa.array(stream.time, type=pa.int64()),
        pa.array(stream.label, type=pa.int8()),
        pa.array(lt_int, type=pa.int64(), mask=missing),
    ]
    fields = [
        pa.field("time", pa.int64(), nullable=False),
        pa.field("label", pa.int8(), nullable=False),
        pa.field("label_time", pa.int64(), nullable=True),
    ]
    if stream.effort is not None:
        arrays.append(pa.array(stream.effort, type=pa.float64()))
        fields.append(pa.field(EFFORT_COLUMN, pa.float64(), nullable=False))
    for name in stream.features.columns:
        s = stream.features[name]
        if isinstance(s.dtype, pd.CategoricalDtype):
            codes = s.cat.codes.to_numpy().astype(np.int32)
            arr = pa.DictionaryArray.from_arrays(
                pa.array(codes, mask=codes < 0, type=pa.int32()),
                pa.array(list(s.cat.categories), type=pa.string()),
            )
        else:
            values = s.to_numpy(dtype=np.float64)
            nan = np.isnan(values)
            arr = pa.array(values, type=pa.float64(), mask=nan if nan.any() else None)
        arrays.append(arr)
        fields.append(pa.field(str(name), arr.type))
    meta = {
        **stream.metadata,
        "format_version": FORMAT_VERSION,
        CONTENT_KEY: stream.content_digest(),
    }
    text = json.dumps(meta, sort_keys=True, separators=(",", ":"), allow_nan=False)
    schema = pa.schema(fields, metadata={METADATA_KEY: text.encode("utf-8")})
    return pa.Table.from_arrays(arrays, schema=schema)


def write_stream(stream: Stream, path: str | os.PathLike) -> None:
    """Write ``stream`` to the Parquet file ``path``, atomically (all or nothing).

    The same stream always gives the same bytes (zstd compression, no timestamps in the file).
    Every page carries a CRC-32 checksum, verified when the stream is read (:func:`read_stream`,
    :class:`StreamFile`): a file changed after it was written is an error naming it.
    """
    table = to_table(stream)
    # dictionary pages only where they pay (label, categorical features): 40 % faster writes
    dictionary = ["label"] + [f.name for f in table.schema if pa.types.is_dictionary(f.type)]
    with atomic_path(path) as tmp:
        pq.write_table(
            table,
            tmp,
            compression="zstd",
            row_group_size=1 << 20,
            use_dictionary=dictionary,
            write_page_checksum=True,
        )


def _check_schema(schema: pa.Schema, where: str | None) -> dict:
    """Check the columns, their types and the metadata of a stream's schema (that of an spdisc
    file's stream too: :func:`delaycv.data.mapping.check_copies_read`); return the metadata."""
    names = schema.names
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise InputError(
            f"duplicate column names: {', '.join(dup)}", path=where, expected="unique names"
        )
    missing = [c for c in BASE_COLUMNS if c not in names]
    if missing:
        raise InputError(
            f"not a delaycv stream: missing column(s) {', '.join(missing)}",
            path=where,
            expected="columns time, label, label_time, then features (delaycv convert writes them)",
        )
    raw_meta = (schema.metadata or {}).get(METADATA_KEY)
    meta: dict = {}
    if raw_meta is not None:
        try:
            meta = json.loads(raw_meta.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise InputError(
                f"unreadable stream metadata: {err}", path=where, expected="JSON object"
            ) from None
        if not isinstance(meta, dict):
            raise InputError("stream metadata is not an object", path=where, expected="JSON object")
    meta.pop("format_version", None)
    meta.pop(CONTENT_KEY, None)  # (a file's own: StreamFile.content_digest)
    how = (
        "; delaycv.api.as_stream reads a DataFrame's datetimes and booleans, and "
        "delaycv.data.stream_file.write_stream writes the stream it gives"
    )
    for name, what in (("time", "integers, Unix seconds"), ("label", "integers, 0 and 1")):
        t = schema.field(name).type
        if not pa.types.is_integer(t):
            raise InputError(f"column {name} has type {t}", path=where, expected=what + how)
    lt = schema.field("label_time").type
    if not (pa.types.is_integer(lt) or pa.types.is_floating(lt) or pa.types.is_null(lt)):
        raise InputError(
            f"column label_time has type {lt}",
            path=where,
            expected="nullable int64, Unix seconds" + how,
        )
    effort = _check_effort_schema(schema, meta, where)
    index = pandas_index_columns(schema)
    for f in schema:
        if f.name in BASE_COLUMNS or (effort and f.name == EFFORT_COLUMN) or f.name in index:
            continue
        t = f.type
        if not (
            pa.types.is_dictionary(t)
            or _is_text(t)
            or pa.types.is_integer(t)
            or pa.types.is_floating(t)
            or pa.types.is_boolean(t)
        ):
            raise InputError(
                f"feature column {f.name} has type {t}",
                path=where,
                expected="float64 or dictionary<string>",
            )
    check_copies_read(meta, where)  # (an spdisc stream whose copies were read as commits)
    if "features" not in meta:  # a file delaycv did not write: its features, as a read gives them
        meta["features"] = [
            n
            for n in names
            if n not in BASE_COLUMNS and not (effort and n == EFFORT_COLUMN) and n not in index
        ]
    return meta


def pandas_index_columns(schema: pa.Schema) -> frozenset[str]:
    """The columns of a file that pandas wrote (``DataFrame.to_parquet``, no delaycv metadata)
    which hold the frame's index, not its data: ``__index_level_0__`` after a filter, or a
    column made the index (``set_index``). They are no features (``pd.read_parquet`` gives them
    back as the index, and :func:`delaycv.evaluate` takes a DataFrame's columns only); a stream
    column among them (``set_index("time")``) stays the stream column."""
    meta = schema.metadata or {}
    if METADATA_KEY in meta or b"pandas" not in meta:
        return frozenset()
    try:
        index = json.loads(meta[b"pandas"].decode("utf-8")).get("index_columns", [])
    except (UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        return frozenset()
    return frozenset(c for c in index if isinstance(c, str) and c not in BASE_COLUMNS)


def _recorded_digest(schema: pa.Schema) -> str | None:
    """The content digest a stream file's metadata records (None: it records none)."""
    try:
        value = json.loads(schema.metadata[METADATA_KEY].decode("utf-8")).get(CONTENT_KEY)
    except (KeyError, TypeError, AttributeError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return value if isinstance(value, str) else None


def _check_effort_schema(schema: pa.Schema, meta: dict, where: str | None) -> bool:
    """Whether the file has an effort: the metadata's ``effort`` and the column ``effort`` go
    together (a column ``effort`` without it is a feature only when the metadata lists it as
    one). The column holds numbers."""
    declared = meta.get(EFFORT_COLUMN)
    present = EFFORT_COLUMN in schema.names
    if declared is not None and not isinstance(declared, str):
        raise InputError(
            f"stream metadata effort is {declared!r}",
            path=where,
            expected="a text saying where the effort comes from, e.g. 'la + ld'",
        )
    if declared is not None and not present:
        raise InputError(
            f"the stream metadata declares an effort ({declared!r}) but the file has no column "
            f"{EFFORT_COLUMN}",
            path=where,
            expected="an effort column after label_time, as write_stream writes it",
        )
    features = meta.get("features")
    listed = isinstance(features, list) and EFFORT_COLUMN in features
    if declared is None and present and not listed:
        raise InputError(
            f"the file has a column {EFFORT_COLUMN} but its stream metadata declares no effort",
            path=where,
            expected="an effort column only with the metadata key effort (delaycv convert "
            "writes both; so does delaycv.data.stream_file.write_stream of the stream "
            "delaycv.api.as_stream makes of a DataFrame with an effort column), or a feature "
            "of another name",
        )
    if declared is None:
        return False
    t = schema.field(EFFORT_COLUMN).type
    if not (pa.types.is_floating(t) or pa.types.is_integer(t)):
        raise InputError(f"column effort has type {t}", path=where, expected="float64")
    return True


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def from_table(
    table: pa.Table, path: str | os.PathLike | None = None, *, first_row: int = 1
) -> Stream:
    """Build a :class:`~delaycv.data.stream.Stream` from an Arrow table in the canonical layout; errors name ``path``
    and count rows from ``first_row`` (the table is a chunk of a longer stream)."""
    where = None if path is None else str(path)
    meta = _check_schema(table.schema, where)
    names = table.column_names

    def col(name: str) -> pa.ChunkedArray:
        return table.column(name)

    for name in ("time", "label"):
        c = col(name)
        if c.null_count:
            row = first_row + int(np.flatnonzero(c.is_null().to_numpy(zero_copy_only=False))[0])
            raise InputError(
                f"column {name} has {c.null_count} null values (the first at row {row})",
                path=where,
                expected="no nulls",
            )
    label_time = col("label_time").cast(pa.float64()).to_numpy(zero_copy_only=False)
    effort = None
    if has_effort(meta):  # a null effort is NaN here: the Stream's check names its row
        effort = col(EFFORT_COLUMN).cast(pa.float64()).to_numpy(zero_copy_only=False)
    feats: dict[str, Any] = {}
    index = pandas_index_columns(table.schema)
    for name in names:
        if name in BASE_COLUMNS or (effort is not None and name == EFFORT_COLUMN) or name in index:
            continue
        c = col(name)
        if pa.types.is_dictionary(c.type):
            feats[name] = c.to_pandas()
            if not isinstance(feats[name].dtype, pd.CategoricalDtype):
                feats[name] = feats[name].astype("category")
        elif _is_text(c.type):
            feats[name] = pd.Series(pd.Categorical(c.to_pylist()))
        else:
            feats[name] = c.cast(pa.float64()).to_numpy(zero_copy_only=False)
    frame = pd.DataFrame(feats, index=pd.RangeIndex(table.num_rows))
    try:
        return Stream(
            time=col("time").to_numpy(),
            label=col("label").to_numpy(),
            label_time=label_time,
            features=frame,
            metadata=meta,
            first_row=first_row,
            effort=effort,
        )
    except InputError:
        raise
    except DelaycvError as err:
        raise InputError(str(err), path=where) from None


def check_stream_file(path: str | os.PathLike) -> dict:
    """Check, from its schema alone (no data is read), that ``path`` is a stream file in the
    canonical layout, as :func:`write_stream` (``delaycv convert``) writes it; return its metadata.

    The row-group statistics (minimum and maximum, kept in the file's footer) of ``time`` and
    ``label_time`` must be plausible Unix seconds (1900-9999): a stream of milliseconds fails
    here, naming the file, before any work; so must the smallest and the largest ``effort`` be
    efforts (a file with an effort: 0, or from 2**-1022 to 2**53). :func:`read_stream` checks the
    same and then the values (labels 0/1, time non-decreasing, every effort in that range). ``metadata["effort"]`` (:func:`~delaycv.data.stream.has_effort`)
    says whether the stream has an effort.
    """
    return _checked_footer(path)[0]


def stream_file_facts(path: str | os.PathLike) -> tuple[dict, tuple[str, ...]]:
    """:func:`check_stream_file`'s metadata and the stream's categorical features
    (:func:`categorical_features`), from one read of the file's footer."""
    meta, schema = _checked_footer(path)
    return meta, categorical_features(schema, meta["features"])


def _checked_footer(path: str | os.PathLike) -> tuple[dict, pa.Schema]:
    """The checks of :func:`check_stream_file`: the stream's metadata and the file's schema."""
    p, meta = _read_parquet(path, pq.read_metadata)
    where = str(p)
    try:
        schema = meta.schema.to_arrow_schema()
    except (pa.ArrowInvalid, OSError) as err:
        raise parquet_error(err, p, "a stream written by delaycv convert") from None
    out = _check_schema(schema, where)
    names = schema.names
    for group in range(meta.num_row_groups):
        rows = meta.row_group(group)
        for name in ("time", "label_time"):
            stats = rows.column(names.index(name)).statistics
            if stats is None or not stats.has_min_max:
                continue
            values, none = np.asarray([stats.min, stats.max], dtype=np.float64), np.empty(0)
            found = first_implausible_time(*((values, none) if name == "time" else (none, values)))
            if found is not None:
                text = implausible_time_text(name, found[1], f" (row group {group})")
                raise InputError(text, path=where)
        if has_effort(out):
            stats = rows.column(names.index(EFFORT_COLUMN)).statistics
            if stats is not None and stats.has_min_max:
                # the bounds: a positive value below the smallest is found when the data is read
                for value in (float(stats.min), float(stats.max)):
                    if bad_efforts(np.array([value]))[0]:
                        raise InputError(
                            f"stream effort (row group {group}) is {value!r}",
                            path=where,
                            expected=EFFORT_EXPECTED,
                        )
    return out, schema


def parquet_error(err: Exception, path: str | os.PathLike, expected: str | None) -> InputError:
    """The InputError for a Parquet file that pyarrow could not read (``err``), naming ``path``;
    a page whose checksum does not match says that the file is corrupt."""
    text = str(err)
    if "checksum" in text.lower():
        return InputError(
            f"corrupt Parquet file: a page checksum does not match its data ({text})",
            path=str(path),
            expected="the file as it was written (write it again from its source)",
        )
    return InputError(f"not a readable Parquet file: {text}", path=str(path), expected=expected)


def _read_parquet(path: str | os.PathLike, read):
    """``(Path, read(path))`` for a stream file; a missing or unreadable file is an InputError."""
    p = Path(path)
    if not p.is_file():
        raise InputError("no such file", path=str(p), expected="a Parquet stream file")
    try:
        return p, read(p)
    except (pa.ArrowInvalid, OSError) as err:
        from delaycv.data.formats import raw_format, raw_stem

        fmt = raw_format(p)  # (a raw file given where a stream goes)
        expected = (
            f"a stream: convert the {fmt.upper()} file first, delaycv convert "
            f"{p.name} {raw_stem(p)}.parquet (with --preset or --mapping)"
            if fmt in ("csv", "arff")
            else "a stream written by delaycv convert"
        )
        raise parquet_error(err, p, expected) from None


def read_stream(path: str | os.PathLike) -> Stream:
    """Read a stream written by :func:`write_stream` (or any Parquet file in the same layout)."""
    p, table = _read_parquet(path, lambda f: pq.read_table(f, page_checksum_verification=True))
    return from_table(table, p)


def categorical_features(schema: pa.Schema, features: Sequence[str]) -> tuple[str, ...]:
    """The categorical features of a stream file's schema (its ``features``, those stored as
    text or as a dictionary of text), in the file's order."""
    wanted = set(features)
    return tuple(
        f.name
        for f in schema
        if f.name in wanted and (pa.types.is_dictionary(f.type) or _is_text(f.type))
    )


class StreamFile:
    """A stream file read chunk by chunk: what the engine holds of it is one chunk (and the
    Parquet reader's row group), whatever the stream's length.

    Opening checks the schema and metadata (:func:`check_stream_file`); the values (labels 0/1,
    non-decreasing time, finite features) are checked chunk by chunk as they are read, and an
    error names the file and the row. ``len()`` is the file's row count; ``metadata`` the
    stream metadata stored in the file (``has_effort(metadata)``: the chunks carry an effort).
    """

    def __init__(self, path: str | os.PathLike) -> None:
        p, parquet = _read_parquet(path, pq.ParquetFile)
        self.path = p
        self.metadata = _check_schema(parquet.schema_arrow, str(p))
        self.rows = int(parquet.metadata.num_rows)
        self._recorded = _recorded_digest(parquet.schema_arrow)
        self._schema = parquet.schema_arrow
        self._categories: dict[str, tuple[str, ...]] | None = None
        #: what reading the file found that a run of it says among its warnings
        self.read_warnings: list[str] = []
        if "positives_with_label_time" not in self.metadata:  # a file delaycv did not write
            self.metadata.update(self._counts())

    def __len__(self) -> int:
        return self.rows

    def _counts(self) -> dict[str, int]:
        """The counts of a stream's metadata that the engine reads (whether any positive has a
        reveal time), from the file's time, label and label_time columns (one pass over the
        three); positives revealed before their own time are a warning of the file's runs
        (:attr:`read_warnings`), as for a DataFrame given to the API."""
        positives = revealed = early = offset = 0
        first = None  # (row number, label_time, time) of the first positive revealed early
        for batch in self._batches(["time", "label", "label_time"]):
            time = batch.column(0).to_numpy(zero_copy_only=False)
            label = batch.column(1).to_numpy(zero_copy_only=False)
            label_time = batch.column(2).cast(pa.float64()).to_numpy(zero_copy_only=False)
            before = reveals_before_arrival(time, label, label_time)
            if before.size and first is None:
                i = int(before[0])
                first = (f"row {offset + i + 1}", float(label_time[i]), float(time[i]))
            positive = label == 1
            positives += int(positive.sum())
            revealed += int((positive & ~np.isnan(label_time)).sum())
            early += int(before.size)
            offset += len(time)
        if first is not None:
            where = f"{self.path}: column label_time"
            self.read_warnings.append(reveals_before_arrival_text(where, early, positives, *first))
        return {"rows": self.rows, "positives": positives, "positives_with_label_time": revealed}

    def categories(self) -> dict[str, tuple[str, ...]]:
        """Each categorical feature's categories, in their order, as
        :meth:`~delaycv.data.stream.Stream.categories` gives them for the stream read whole
        (:func:`read_stream`): a dictionary column's dictionary (those of its row groups joined
        in order of appearance, as Arrow joins them), a text column's values sorted. One pass
        over the categorical columns alone, made once (none without such a column)."""
        if self._categories is None:
            names = list(categorical_features(self._schema, self.metadata["features"]))
            held: dict[str, dict] = {name: {} for name in names}  # (ordered sets)
            for batch in self._batches(names) if names else ():
                for name in names:
                    column = batch.column(name)
                    if isinstance(column, pa.DictionaryArray):
                        column = column.dictionary
                    held[name].update(dict.fromkeys(column.drop_null().to_pylist()))
            self._categories = {
                name: tuple(held[name])
                if pa.types.is_dictionary(self._schema.field(name).type)
                else tuple(sorted(held[name]))
                for name in names
            }
        return dict(self._categories)

    def distinct_values(self, names: list[str], limit: int) -> dict[str, int]:
        """How many distinct values each feature of ``names`` holds (missing values aside),
        counted up to ``limit + 1`` (a column past it is read no further), as
        :meth:`~delaycv.data.stream.Stream.distinct_values` counts them in memory."""
        import pyarrow.compute as pc

        held: dict[str, set] = {name: set() for name in names}
        for batch in self._batches(list(names)) if names else ():
            open_ = [n for n in names if len(held[n]) <= limit]
            if not open_:
                break
            for name in open_:
                held[name].update(pc.unique(batch.column(name).drop_null()).to_pylist())
        return {name: min(len(values), limit + 1) for name, values in held.items()}

    def __repr__(self) -> str:
        return f"StreamFile({str(self.path)!r}, rows={self.rows})"

    def _batches(self, columns: list[str] | None = None) -> Iterator[pa.RecordBatch]:
        # streaming reads (no pre-buffering of whole row groups): what is held does not depend
        # on the file's size (10M rows read at a peak of 161 MiB, against 464 MiB pre-buffered)
        # after each batch, Arrow's pool hands the pages it freed back (mimalloc keeps them
        # otherwise: 1M instances x 10 folds peaked 12 MiB higher, and grew with the file)
        _, parquet = _read_parquet(
            self.path,
            lambda p: pq.ParquetFile(
                p, pre_buffer=False, buffer_size=1 << 20, page_checksum_verification=True
            ),
        )
        pool = pa.default_memory_pool()
        try:
            for batch in parquet.iter_batches(batch_size=1 << 16, columns=columns):
                yield batch
                pool.release_unused()
        except (pa.ArrowInvalid, OSError) as err:
            raise parquet_error(err, self.path, "a stream written by delaycv convert") from None

    def chunks(self, size: int) -> Iterator[StreamChunk]:
        """Consecutive chunks of exactly ``size`` instances (the last may be shorter), as
        :meth:`~delaycv.data.stream.Stream.chunks` gives them for the same stream in memory."""
        pending: list[pa.RecordBatch] = []
        held = start = 0
        last_time = None
        where = str(self.path)

        def take(k: int) -> StreamChunk:
            """The next k rows held as a chunk (checked, time continuing the last chunk's)."""
            nonlocal pending, held, start, last_time
            held_rows = pa.Table.from_batches(pending)
            rest = held_rows.slice(k)
            pending, held = rest.to_batches(), rest.num_rows
            chunk = from_table(held_rows.slice(0, k), where, first_row=start + 1)
            if last_time is not None and len(chunk) and chunk.time[0] < last_time:
                raise InputError(
                    f"stream time decreases at row {start + 1} ({chunk.time[0]} after {last_time})",
                    path=where,
                    expected="rows in non-decreasing time order",
                )
            if len(chunk):
                last_time = int(chunk.time[-1])
            out = chunk.as_chunk(start)
            start += k
            return out

        for batch in self._batches():
            pending.append(batch)
            held += batch.num_rows
            while held >= size:
                yield take(size)
        if held:
            yield take(held)
        if start != self.rows:
            raise InputError(
                f"the file holds {start} rows, its metadata says {self.rows}",
                path=where,
                expected="an intact stream file",
            )

    def content_digest(self) -> str:
        """The SHA-256 of the stream's content (:mod:`delaycv.data.identity`): the one its file
        records (``delaycv convert`` and ``generate`` write it) when the file's rows are those
        its metadata counts, else computed from the file, batch by batch."""
        if self._recorded is not None and self.metadata.get("rows") == self.rows:
            return self._recorded
        digest = ContentDigest(self.metadata.get("features") or [])
        for first, batch in enumerate(self._batches()):
            part = from_table(pa.Table.from_batches([batch]), self.path)
            if first == 0:
                digest = ContentDigest(part.features.columns)
            digest.update(part.time, part.label, part.label_time, part.features)
        return digest.hexdigest()

    def count_until(self, times: list) -> tuple[list[int], int | None, int | None]:
        """For each time T: how many instances arrive at or before T (read column by column);
        with the stream's first and last times (None when it has no instance)."""
        counts = [0] * len(times)
        first = last = None
        for batch in self._batches(["time"]):
            t = batch.column(0).to_numpy(zero_copy_only=False)
            if len(t):
                first = int(t[0]) if first is None else first
                last = int(t[-1])
            for j, found in enumerate(np.searchsorted(t, times, side="right").tolist()):
                counts[j] += found
        return counts, first, last


def open_stream(path: str | os.PathLike) -> StreamFile:
    """A :class:`StreamFile` for ``path`` (schema checked now, values as they are read)."""
    return StreamFile(path)
