"""The canonical stream: arrays in memory, one Parquet file on disk (design card §2).

A :class:`Stream` holds, for instances n = 1..len(stream) in arrival order,

- ``time[n]``: arrival time in Unix seconds (int64), non-decreasing, between 1900 and 9999
  (a time outside is an error naming the row and the likely unit: milliseconds, ...);
- ``label[n]``: the true label, 0 or 1 (int8; 1 is the positive class named in the metadata);
- ``label_time[n]``: the time an external event (the fixing commit) reveals the positive label,
  float64 Unix seconds, NaN when no event ever does;
- ``effort[n]`` (optional: ``effort`` is None when the stream has none): the cost of inspecting
  instance n for the effort-aware measures (by default its changed lines, la + ld), float64,
  finite and >= 0; ``metadata["effort"]`` says where it comes from (e.g. ``"la + ld"``);
- ``features``: a DataFrame with one column per feature known at arrival, float64 or categorical
  (string categories); a missing value is NaN (numeric) or a missing category, never infinite;
- ``metadata``: a dict (dataset, source_sha256, positive_class, features, rows, positives,
  positives_with_label_time, missing, dangling_links, ...).

A missing feature value is left out of the instance's river ``x`` dict (river's convention), so
learners see only the features an instance has.

On disk (:func:`write_stream` / :func:`read_stream`) the columns are ``time`` int64, ``label`` int8,
``label_time`` nullable int64, ``effort`` float64 (only when the stream has an effort), then the
features (float64, or dictionary<int32, string>; a missing value is null, and a NaN read from a
foreign file is missing too), and the metadata is JSON under the Parquet file-metadata key
``b"delaycv"``. A column ``effort`` is the effort when the metadata declares one (its ``effort``
key); a stream without an effort may have a feature named ``effort`` (listed in the metadata's
``features``), a stream with one may not. Writing is atomic and deterministic: the same stream
gives byte-identical files. Every page has a checksum, verified on reading (a mismatch is an
InputError naming the file).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from delaycv.common.atomic import atomic_path
from delaycv.common.errors import DelaycvError, InputError
from delaycv.data.identity import CONTENT_KEY, ContentDigest
from delaycv.data.timeunits import implausible, implausible_message

#: The columns every stream file starts with, in order; the features follow.
BASE_COLUMNS: tuple[str, ...] = ("time", "label", "label_time")
#: The column of the effort, right after ``label_time`` when the stream has an effort; the
#: metadata key ``effort`` describes it (e.g. ``"la + ld"``).
EFFORT_COLUMN = "effort"
#: ``metadata["effort"]`` of a stream given an effort with no description in its metadata.
EFFORT_GIVEN = "given"
#: Parquet file-metadata key holding the stream metadata (JSON).
METADATA_KEY = b"delaycv"
#: Version of the on-disk layout, stored in the metadata as ``format_version``.
FORMAT_VERSION = 1
#: Metadata keys that :class:`Stream` computes from the data itself (always consistent).
COMPUTED_KEYS: tuple[str, ...] = (
    "features",
    "rows",
    "positives",
    "positives_with_label_time",
    "missing",
)


def _as_feature_frame(features: pd.DataFrame | None, rows: int) -> pd.DataFrame:
    """Copy ``features`` with float64 numeric columns and categorical (str) other columns."""
    if features is None:
        return pd.DataFrame(index=pd.RangeIndex(rows))
    if not isinstance(features, pd.DataFrame):
        raise DelaycvError(f"stream features must be a pandas DataFrame, got {type(features)}")
    names = [str(c) for c in features.columns]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise DelaycvError(f"duplicate feature names: {', '.join(dup)}")
    clash = set(names) & set(BASE_COLUMNS)
    if clash:
        raise DelaycvError(f"feature names clash with stream columns: {', '.join(sorted(clash))}")
    numeric = [
        not isinstance(features[col].dtype, pd.CategoricalDtype)
        and (
            pd.api.types.is_bool_dtype(features[col].dtype)
            or pd.api.types.is_numeric_dtype(features[col].dtype)
        )
        for col in features.columns
    ]
    if names and all(numeric):
        # one float64 block, filled column by column (memory: no intermediate copies); the
        # stream's feature matrix is a view of it
        block = np.empty((len(names), rows), dtype=np.float64)
        for j, col in enumerate(features.columns):
            block[j] = features[col].to_numpy(dtype=np.float64, na_value=np.nan)
        return pd.DataFrame(block.T, columns=names, index=pd.RangeIndex(rows), copy=False)
    out: dict[str, Any] = {}
    for name, col in zip(names, features.columns, strict=True):
        s = features[col]
        if isinstance(s.dtype, pd.CategoricalDtype):
            cats = s.cat.categories
            if not all(isinstance(c, str) for c in cats):
                s = s.cat.rename_categories([str(c) for c in cats])
            out[name] = s.reset_index(drop=True)
        elif pd.api.types.is_bool_dtype(s.dtype) or pd.api.types.is_numeric_dtype(s.dtype):
            out[name] = pd.Series(s.to_numpy(dtype=np.float64, na_value=np.nan))
        else:
            values = s.astype(object).where(s.notna(), None)
            values = values.map(lambda v: v if v is None else str(v))
            out[name] = pd.Series(pd.Categorical(values))
    frame = (
        pd.DataFrame(out, index=pd.RangeIndex(rows))
        if out
        else pd.DataFrame(index=pd.RangeIndex(rows))
    )
    return frame


def _missing_values(
    features: pd.DataFrame, first_row: int = 1
) -> tuple[dict[str, int], np.ndarray]:
    """``({feature: missing count}, rows with a missing value)`` of a canonical feature frame.

    Missing = NaN in a float64 column, a missing category in a categorical one. An infinite value
    raises DelaycvError naming the row (1-based) and the feature. The rows are sorted 0-based
    indices (empty when nothing is missing).
    """
    n = len(features)
    counts: dict[str, int] = {}
    rows: np.ndarray | None = None
    for name in features.columns:
        s = features[name]
        if isinstance(s.dtype, pd.CategoricalDtype):
            mask = s.cat.codes.to_numpy() < 0
            bad = int(np.count_nonzero(mask))
        else:
            values = s.to_numpy(dtype=np.float64)
            bad = n - int(np.count_nonzero(np.isfinite(values)))
            if not bad:
                continue
            mask = np.isnan(values)
            if int(np.count_nonzero(mask)) != bad:
                row = int(np.flatnonzero(np.isinf(values))[0])
                raise DelaycvError(
                    f"stream feature {name!r} is {values[row]} at row {row + first_row}: "
                    "feature values "
                    "must be finite numbers (or missing: NaN)"
                )
        if bad:
            counts[str(name)] = bad
            rows = mask if rows is None else rows | mask
    missing_rows = np.empty(0, dtype=np.int64) if rows is None else np.flatnonzero(rows)
    return counts, missing_rows


def _checked_time_and_label(
    time_in: Any, label_in: Any, first_row: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(time, label)`` as contiguous int64 and int8 arrays; DelaycvError unless both are one
    dimensional of the same length and every label is 0 or 1 (the row named counts from
    ``first_row``)."""
    time = np.ascontiguousarray(time_in, dtype=np.int64)
    label_in = np.asarray(label_in)
    if time.ndim != 1 or label_in.ndim != 1:
        raise DelaycvError("stream time and label must be one-dimensional arrays")
    n = time.shape[0]
    if label_in.shape[0] != n:
        raise DelaycvError(f"stream label has {label_in.shape[0]} values, time has {n}")
    if n and not np.isin(label_in, (0, 1)).all():
        bad = int(np.flatnonzero(~np.isin(label_in, (0, 1)))[0])
        raise DelaycvError(
            f"stream label at row {bad + first_row} is {label_in[bad]!r}, not 0 or 1"
        )
    return time, np.ascontiguousarray(label_in, dtype=np.int8)


def _check_time_order(time: np.ndarray, first_row: int) -> None:
    """The times must not decrease; DelaycvError naming the first row that is earlier."""
    if time.shape[0] > 1:
        dec = np.flatnonzero(np.diff(time) < 0)
        if dec.size:
            i = int(dec[0]) + 1
            raise DelaycvError(
                f"stream time decreases at row {i + first_row} ({time[i]} after {time[i - 1]})"
            )


def _feature_columns(features: pd.DataFrame) -> list[np.ndarray]:
    """One array per feature: float64 values, or a categorical's values as objects (None
    where missing)."""
    cols = []
    for name in features.columns:
        s = features[name]
        if isinstance(s.dtype, pd.CategoricalDtype):
            cats = np.asarray(s.cat.categories, dtype=object)
            cats = np.append(cats, None)  # code -1 (missing) -> None
            cols.append(cats[s.cat.codes.to_numpy()])
        else:
            cols.append(s.to_numpy(dtype=np.float64))
    return cols


def _first_implausible_time(
    time: np.ndarray, label_time: np.ndarray
) -> tuple[str, float, int] | None:
    """``(column, value, row)`` of the first time that is not plausible Unix seconds
    (1900-9999), ``time`` before ``label_time`` (None: every time is plausible)."""
    for name, values in (("time", time), ("label_time", label_time)):
        if values.size == 0:
            continue
        present = values if values.dtype != np.float64 else np.where(np.isnan(values), 0, values)
        bad = implausible(present)
        if bad >= 0:
            return name, float(values[bad]), bad
    return None


def _implausible_time_text(name: str, value: float, where: str) -> str:
    """Why ``value`` of stream column ``name`` (found ``where``, e.g. ``" at row 3"``) is not a
    plausible time, and the likely unit."""
    return implausible_message(
        value,
        what=f"stream {name}",
        where=where,
        hint="a stream stores seconds: convert the source with time_unit: {unit}",
    )


def _check_times(time: np.ndarray, label_time: np.ndarray, first_row: int) -> None:
    """Times must be plausible Unix seconds (1900-9999): milliseconds stored as seconds would
    make every window 1000 times too short. The error names the row and the likely unit."""
    found = _first_implausible_time(time, label_time)
    if found is not None:
        name, value, row = found
        raise DelaycvError(_implausible_time_text(name, value, f" at row {row + first_row}"))


def _check_effort(effort: Any, n: int, first_row: int) -> np.ndarray:
    """``effort`` as a contiguous float64 array of length n; a value that is not a finite number
    >= 0 raises DelaycvError naming its row (counted from ``first_row``)."""
    try:
        values = np.ascontiguousarray(effort, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise DelaycvError(f"stream effort is not an array of numbers ({err})") from None
    if values.shape != (n,):
        raise DelaycvError(f"stream effort has shape {values.shape}, expected ({n},)")
    good = np.isfinite(values) & (values >= 0)
    if not good.all():
        row = int(np.flatnonzero(~good)[0])
        raise DelaycvError(
            f"stream effort at row {row + first_row} is {float(values[row])} "
            "(expected a finite number >= 0)"
        )
    return values


def _effort_description(meta: dict, has_effort: bool) -> None:
    """Make ``meta["effort"]`` say where the effort comes from (a stream with one: ``"given"``
    when the metadata does not say) or be absent (a stream without one, whatever the metadata
    it was given says: e.g. the metadata of another stream)."""
    text = meta.get(EFFORT_COLUMN)
    if not has_effort:
        meta.pop(EFFORT_COLUMN, None)
    elif text is None:
        meta[EFFORT_COLUMN] = EFFORT_GIVEN
    elif not isinstance(text, str) or not text.strip():
        raise DelaycvError(
            f"stream metadata effort is {text!r} (expected a short text saying where the effort "
            "comes from, e.g. 'la + ld')"
        )


@dataclass(frozen=True)
class StreamChunk:
    """Instances ``start + 1 .. start + len(time)`` of a stream (1-based): their arrays, as in
    :class:`Stream`, and their river ``x`` dicts (``records``)."""

    start: int
    time: np.ndarray
    label: np.ndarray
    label_time: np.ndarray
    records: list
    #: the chunk's effort (float64), None when the stream has none
    effort: np.ndarray | None = None
    #: the chunk's features as a float64 matrix (NaN: missing), when every feature is numeric
    matrix: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.time.shape[0])


@dataclass(frozen=True, eq=False)
class Stream:
    """The canonical stream in memory (see the module docstring for the meaning of each field).

    Arrays are converted to their canonical dtypes on construction and checked: equal lengths,
    ``label`` in {0, 1}, ``time`` non-decreasing, no infinite feature value, every ``effort``
    (keyword; None = no effort) a finite number >= 0, and no feature named ``effort`` beside an
    effort. ``metadata["effort"]`` describes the effort (``"given"`` when the metadata does not
    say) and is removed when there is none. The metadata keys in
    :data:`COMPUTED_KEYS` are (re)computed from the data: ``rows`` = n, ``positives`` = sum(label),
    ``positives_with_label_time`` = #{i : label_i = 1 and label_time_i is not NaN}, ``features`` =
    the feature names in column order, ``missing`` = {feature: number of missing values} for the
    features that have any (in column order).
    """

    time: np.ndarray
    label: np.ndarray
    label_time: np.ndarray
    features: pd.DataFrame = None  # type: ignore[assignment]
    metadata: dict = field(default_factory=dict)
    #: the row number of the first instance in error messages (a chunk of a longer stream)
    first_row: int = field(default=1, repr=False, compare=False)
    #: each instance's effort (float64, finite, >= 0), or None: the stream has no effort
    effort: np.ndarray | None = field(default=None, kw_only=True)
    _columns: list = field(init=False, repr=False, compare=False, default=None)
    _matrix: np.ndarray | None = field(init=False, repr=False, compare=False, default=None)
    _missing_rows: np.ndarray | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        time, label = _checked_time_and_label(self.time, self.label, self.first_row)
        n = time.shape[0]
        if self.label_time is None:
            label_time = np.full(n, np.nan)
        else:
            label_time = np.ascontiguousarray(self.label_time, dtype=np.float64)
        if label_time.shape != (n,):
            raise DelaycvError(f"stream label_time has shape {label_time.shape}, expected ({n},)")
        _check_time_order(time, self.first_row)
        _check_times(time, label_time, self.first_row)
        features = _as_feature_frame(self.features, n)
        if len(features) != n:
            raise DelaycvError(f"stream features have {len(features)} rows, time has {n}")
        effort = None if self.effort is None else _check_effort(self.effort, n, self.first_row)
        if effort is not None and EFFORT_COLUMN in features.columns:
            raise DelaycvError(
                f"a feature is named {EFFORT_COLUMN!r} and the stream has an effort: the two "
                f"would share the column {EFFORT_COLUMN!r} (expected another name for the "
                "feature, or drop it)"
            )
        for arr in (time, label, label_time) + (() if effort is None else (effort,)):
            arr.setflags(write=False)
        meta = dict(self.metadata or {})
        _effort_description(meta, effort is not None)
        meta["features"] = [str(c) for c in features.columns]
        meta["rows"] = int(n)
        meta["positives"] = int(label.sum(dtype=np.int64))
        meta["positives_with_label_time"] = int(((label == 1) & ~np.isnan(label_time)).sum())
        missing, missing_rows = _missing_values(features, self.first_row)
        meta["missing"] = missing
        set_ = object.__setattr__
        set_(self, "_missing_rows", missing_rows)
        set_(self, "time", time)
        set_(self, "label", label)
        set_(self, "label_time", label_time)
        set_(self, "effort", effort)
        set_(self, "features", features)
        set_(self, "metadata", meta)
        if all(features.dtypes == np.float64):
            # a view of the frame's single float64 block when it has one (no copy)
            set_(self, "_matrix", features.to_numpy(dtype=np.float64))
        else:
            set_(self, "_columns", _feature_columns(features))

    def __len__(self) -> int:
        return int(self.time.shape[0])

    @property
    def feature_names(self) -> list[str]:
        """Names of the feature columns, in order."""
        return list(self.metadata["features"])

    def records(self, start: int = 0, stop: int | None = None) -> list[dict]:
        """River ``x`` dicts for instances ``start .. stop - 1`` (0-based, like a slice).

        Numeric values are Python floats, categorical values Python ``str``; a missing value is
        left out of its instance's dict (river's convention), so no value is NaN or None.
        """
        n = len(self)
        stop = n if stop is None else min(stop, n)
        start = max(0, start)
        names = self.metadata["features"]
        if self._matrix is not None:
            rows = np.ascontiguousarray(self._matrix[start:stop]).tolist()
        else:
            rows = zip(*(c[start:stop].tolist() for c in self._columns))  # noqa: B905
        out = [dict(zip(names, r)) for r in rows]  # noqa: B905 (lengths equal by construction)
        miss = self._missing_rows
        if miss.size:  # only the rows with a missing value are rebuilt
            lo, hi = np.searchsorted(miss, (start, stop))
            for i in (miss[lo:hi] - start).tolist():
                out[i] = {k: v for k, v in out[i].items() if v is not None and v == v}
        return out

    def chunks(self, size: int) -> Iterator[StreamChunk]:
        """The stream in consecutive chunks of ``size`` instances (the last may be shorter)."""
        n = len(self)
        for start in range(0, n, size):
            stop = min(n, start + size)
            sl = slice(start, stop)
            yield StreamChunk(
                start,
                self.time[sl],
                self.label[sl],
                self.label_time[sl],
                self.records(start, stop),
                None if self.effort is None else self.effort[sl],
                None if self._matrix is None else self._matrix[sl],
            )

    def subset(self, start: int = 0, stop: int | None = None) -> Stream:
        """The stream of instances ``start .. stop - 1`` (same metadata apart from the counts)."""
        sl = slice(start, stop)
        return Stream(
            time=self.time[sl],
            label=self.label[sl],
            label_time=self.label_time[sl],
            features=self.features.iloc[sl].reset_index(drop=True),
            metadata={k: v for k, v in self.metadata.items() if k not in COMPUTED_KEYS},
            effort=None if self.effort is None else self.effort[sl],
        )

    def content_digest(self) -> str:
        """The SHA-256 of the stream's content (:mod:`delaycv.data.identity`): the same for every
        file form of the same instances."""
        digest = ContentDigest(self.features.columns)
        digest.update(self.time, self.label, self.label_time, self.features)
        return digest.hexdigest()

    def equals(self, other: Stream) -> bool:
        """True when both streams have the same arrays (effort too), features (values and types)
        and metadata."""
        return (
            isinstance(other, Stream)
            and np.array_equal(self.time, other.time)
            and np.array_equal(self.label, other.label)
            and np.array_equal(self.label_time, other.label_time, equal_nan=True)
            and (self.effort is None) == (other.effort is None)
            and (self.effort is None or np.array_equal(self.effort, other.effort))
            and self.features.equals(other.features)
            and list(self.features.dtypes.astype(str)) == list(other.features.dtypes.astype(str))
            and self.metadata == other.metadata
        )


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
    """Check the columns, their types and the metadata of a stream's schema; return the metadata."""
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
    for name in ("time", "label"):
        t = schema.field(name).type
        if not pa.types.is_integer(t):
            raise InputError(f"column {name} has type {t}", path=where, expected="integers")
    lt = schema.field("label_time").type
    if not (pa.types.is_integer(lt) or pa.types.is_floating(lt) or pa.types.is_null(lt)):
        raise InputError(f"column label_time has type {lt}", path=where, expected="nullable int64")
    effort = _check_effort_schema(schema, meta, where)
    for f in schema:
        if f.name in BASE_COLUMNS or (effort and f.name == EFFORT_COLUMN):
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
    return meta


def _recorded_digest(schema: pa.Schema) -> str | None:
    """The content digest a stream file's metadata records (None: it records none)."""
    try:
        value = json.loads(schema.metadata[METADATA_KEY].decode("utf-8")).get(CONTENT_KEY)
    except (KeyError, TypeError, AttributeError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return value if isinstance(value, str) else None


def has_effort(meta: dict) -> bool:
    """Whether stream metadata (:func:`check_stream_file`, ``StreamFile.metadata``) declares an
    effort: its file has an ``effort`` column."""
    return meta.get(EFFORT_COLUMN) is not None


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
            "writes both), or a feature of another name",
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
    """Build a :class:`Stream` from an Arrow table in the canonical layout; errors name ``path``
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
    for name in names:
        if name in BASE_COLUMNS or (effort is not None and name == EFFORT_COLUMN):
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
    here, naming the file, before any work; so must the smallest ``effort`` be >= 0 (a file
    with an effort). :func:`read_stream` checks the same and then the values (labels 0/1, time
    non-decreasing, every effort finite and >= 0). ``metadata["effort"]`` (:func:`has_effort`)
    says whether the stream has an effort.
    """
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
            found = _first_implausible_time(*((values, none) if name == "time" else (none, values)))
            if found is not None:
                text = _implausible_time_text(name, found[1], f" (row group {group})")
                raise InputError(text, path=where)
        if has_effort(out):
            stats = rows.column(names.index(EFFORT_COLUMN)).statistics
            if stats is not None and stats.has_min_max and not float(stats.min) >= 0:
                raise InputError(
                    f"stream effort (row group {group}) is {float(stats.min)}",
                    path=where,
                    expected="a finite number >= 0",
                )
    return out


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
        raise parquet_error(err, p, "a stream written by delaycv convert") from None


def read_stream(path: str | os.PathLike) -> Stream:
    """Read a stream written by :func:`write_stream` (or any Parquet file in the same layout)."""
    p, table = _read_parquet(path, lambda f: pq.read_table(f, page_checksum_verification=True))
    return from_table(table, p)


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

    def __len__(self) -> int:
        return self.rows

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
        :meth:`Stream.chunks` gives them for the same stream in memory."""
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
            out = StreamChunk(
                start,
                chunk.time,
                chunk.label,
                chunk.label_time,
                chunk.records(),
                chunk.effort,
                chunk._matrix,
            )
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
