"""The canonical stream in memory: its arrays, checked once (docs/data.md).

A :class:`Stream` holds, for instances n = 1..len(stream) in arrival order,

- ``time[n]``: arrival time in Unix seconds (int64), non-decreasing, between 1900 and 9999
  (a time outside is an error naming the row and the likely unit: milliseconds, ...);
- ``label[n]``: the true label, 0 or 1 (int8; 1 is the positive class named in the metadata);
- ``label_time[n]``: the time an external event (the fixing commit) reveals the positive label,
  float64 Unix seconds, NaN when no event ever does, and NaN on every instance of label 0 (a
  value there is an error naming the row: it would make a policy observe a 1 for a clean
  instance, docs/data.md);
- ``effort[n]`` (optional: ``effort`` is None when the stream has none): the cost of inspecting
  instance n for the effort-aware measures (by default its changed lines, la + ld), float64,
  finite and >= 0; ``metadata["effort"]`` says where it comes from (e.g. ``"la + ld"``);
- ``features``: a DataFrame with one column per feature known at arrival, float64 or categorical
  (string categories); a missing value is NaN (numeric) or a missing category, never infinite;
- ``metadata``: a dict (dataset, source_sha256, positive_class, features, rows, positives,
  positives_with_label_time, missing, dangling_links, ...).

A missing feature value is left out of the instance's river ``x`` dict (river's convention), so
learners see only the features an instance has. The engine reads a stream chunk by chunk
(:class:`StreamChunk`), from memory (:meth:`Stream.chunks`) or from its Parquet file
(:mod:`delaycv.data.stream_file`, which writes, reads and checks the file).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from delaycv.common.checks import EFFORT_EXPECTED, EFFORT_MAX, EFFORT_MIN
from delaycv.common.errors import DelaycvError, shown
from delaycv.common.words import describe_time
from delaycv.data.identity import ContentDigest
from delaycv.data.timeunits import implausible, implausible_message

#: The columns every stream file starts with, in order; the features follow.
BASE_COLUMNS: tuple[str, ...] = ("time", "label", "label_time")
#: The column of the effort, right after ``label_time`` when the stream has an effort; the
#: metadata key ``effort`` describes it (e.g. ``"la + ld"``).
EFFORT_COLUMN = "effort"
#: ``metadata["effort"]`` of a stream given an effort with no description in its metadata.
EFFORT_GIVEN = "given"
#: Metadata keys that :class:`Stream` computes from the data itself (always consistent).
COMPUTED_KEYS: tuple[str, ...] = (
    "features",
    "rows",
    "positives",
    "positives_with_label_time",
    "missing",
)


def _dates_as_seconds(features: pd.DataFrame) -> pd.DataFrame:
    """Datetime features as Unix seconds and durations as seconds (float64, NaN where missing),
    as the conversion reads an ARFF date attribute: read as text, each instance's date would be
    a category of its own, a feature that measures nothing."""
    dated = [
        col
        for col in features.columns
        if pd.api.types.is_datetime64_any_dtype(features[col].dtype)
        or pd.api.types.is_timedelta64_dtype(features[col].dtype)
    ]
    if not dated:
        return features
    out = features.copy(deep=False)
    for col in dated:
        s = features[col]
        if pd.api.types.is_datetime64_any_dtype(s.dtype):  # (no zone: UTC, as times are)
            s = s - (pd.Timestamp(0) if s.dt.tz is None else pd.Timestamp(0, tz="UTC"))
        out[col] = s.dt.total_seconds()
    return out


def _as_feature_frame(features: pd.DataFrame | None, rows: int) -> pd.DataFrame:
    """Copy ``features`` with float64 numeric columns (datetimes as Unix seconds) and categorical
    (str) other columns."""
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
    features = _dates_as_seconds(features)
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
            f"stream label at row {bad + first_row} is {shown(label_in[bad])!r}, not 0 or 1"
        )
    return time, np.ascontiguousarray(label_in, dtype=np.int8)


def _check_time_order(time: np.ndarray, first_row: int) -> None:
    """The times must not decrease; DelaycvError naming the first row that is earlier."""
    if time.shape[0] > 1:
        dec = np.flatnonzero(np.diff(time) < 0)
        if dec.size:
            i = int(dec[0]) + 1
            raise DelaycvError(
                f"stream time decreases at row {i + first_row} ({time[i]} after {time[i - 1]}) "
                "(expected rows in non-decreasing time order: sort them by time first, keeping "
                "the order of equal times)"
            )


def _check_reveals(label: np.ndarray, label_time: np.ndarray, first_row: int) -> None:
    """A ``label_time`` reveals a positive label, so no instance of label 0 has one: a policy
    would observe it as 1 (often a column that is no reveal time, such as Commit Guru's fix link
    ``fix_unix_timestamp`` with its ``-1``); DelaycvError naming the first such row."""
    clean = (label == 0) & ~np.isnan(label_time)
    if clean.any():
        rows = np.flatnonzero(clean)
        i, many = int(rows[0]), "s" if rows.size > 1 else ""
        raise DelaycvError(
            f"stream label_time at row {i + first_row} is {float(label_time[i])!r} on an "
            f"instance of label 0 ({rows.size} such row{many}): a label_time is when the "
            "positive label is revealed, and a policy would observe a 1 for it "
            "(expected no label_time, NaN or null, on label-0 rows; a column of fix links, such "
            "as Commit Guru's fix_unix_timestamp, is no label_time: delaycv convert's preset "
            "commit-guru turns the links into label times)"
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


def reveals_before_arrival(
    time: np.ndarray, label: np.ndarray, label_time: np.ndarray
) -> np.ndarray:
    """The rows (0-based) of the positives whose reveal time is before their own arrival time:
    a policy observes each such label as soon as its instance arrives (docs/data.md: Commit
    Guru's back-dated fixes; the conversion counts them in ``label_time_before_time``)."""
    with np.errstate(invalid="ignore"):
        return np.flatnonzero((label == 1) & (label_time < time))


def reveals_before_arrival_text(
    where: str, count: int, positives: int, at: str, label_time: float, time: float
) -> str:
    """The warning about ``count`` of ``positives`` revealed before their own time, the first
    ``at`` a row (``"row 5"``, as errors name rows) with its ``label_time`` and ``time``; ``where``
    names the reveal times (``column label_time``). Said where delaycv reads reveal times it did
    not make (a DataFrame, pairs, a file another tool wrote): the conversion keeps the few that
    real histories have (back-dated fixes), but many are often a column that is no reveal time,
    such as Commit Guru's fix links (backwards, ``-1`` for none)."""
    return (
        f"{where}: {count} of {positives} positives are revealed before their own time (the "
        f"first at {at}: label_time {describe_time(label_time)}, time {describe_time(time)}): "
        "a policy observes each such label as soon as its instance arrives (expected reveal "
        "times at or after each instance's time, NaN for a label never revealed: a column of fix links is "
        "none, such as Commit Guru's fix_unix_timestamp, the time of the commit a fix fixes, "
        "-1 for none; delaycv convert's preset commit-guru makes the reveal times from them)"
    )


def first_implausible_time(
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


def implausible_time_text(name: str, value: float, where: str) -> str:
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
    found = first_implausible_time(time, label_time)
    if found is not None:
        name, value, row = found
        raise DelaycvError(implausible_time_text(name, value, f" at row {row + first_row}"))


def bad_efforts(values: np.ndarray) -> np.ndarray:
    """Where ``values`` (float64) are no effort: NaN, infinite, negative, above
    :data:`~delaycv.common.checks.EFFORT_MAX`, or positive below
    :data:`~delaycv.common.checks.EFFORT_MIN`."""
    with np.errstate(invalid="ignore"):
        good = (values == 0) | ((values >= EFFORT_MIN) & (values <= EFFORT_MAX))
    return ~good


def _check_effort(effort: Any, n: int, first_row: int) -> np.ndarray:
    """``effort`` as a contiguous float64 array of length n; a value that is not an effort
    (:func:`bad_efforts`) raises DelaycvError naming its row (counted from ``first_row``)."""
    try:
        values = np.ascontiguousarray(effort, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise DelaycvError(f"stream effort is not an array of numbers ({err})") from None
    if values.shape != (n,):
        raise DelaycvError(f"stream effort has shape {values.shape}, expected ({n},)")
    bad = bad_efforts(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DelaycvError(
            f"stream effort at row {row + first_row} is {float(values[row])!r} "
            f"(expected {EFFORT_EXPECTED})"
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


class ChunkRecords(Sequence):
    """The river ``x`` dicts of rows ``lo .. hi - 1`` of a stream (:meth:`Stream.records`),
    made when first read: a MOA learner reads a chunk's feature matrix and never needs them."""

    __slots__ = ("_stream", "_lo", "_hi", "_made")

    def __init__(self, stream: Stream, lo: int, hi: int) -> None:
        self._stream, self._lo, self._hi = stream, lo, hi
        self._made: list | None = None

    def _list(self) -> list:
        if self._made is None:
            self._made = self._stream.records(self._lo, self._hi)
        return self._made

    def __len__(self) -> int:
        return self._hi - self._lo

    def __getitem__(self, i):
        return self._list()[i]

    def __iter__(self) -> Iterator[dict]:
        return iter(self._list())


@dataclass(frozen=True)
class StreamChunk:
    """Instances ``start + 1 .. start + len(time)`` of a stream (1-based): their arrays, as in
    :class:`Stream`, and their river ``x`` dicts (``records``: :class:`ChunkRecords`, or what a
    learner made of them)."""

    start: int
    time: np.ndarray
    label: np.ndarray
    label_time: np.ndarray
    records: Sequence
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
        _check_reveals(label, label_time, self.first_row)
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

    def categories(self) -> dict[str, tuple[str, ...]]:
        """Each categorical feature's categories, in their order: what a learner that must know
        a feature's values before its first instance is told (a MOA learner's nominal
        attributes). Those of an ARFF nominal attribute are its declared values in their order
        (values no instance holds too), those of a CSV column its values sorted; the stream's
        file keeps them (:meth:`~delaycv.data.stream_file.StreamFile.categories`)."""
        return {
            str(name): tuple(str(c) for c in self.features[name].cat.categories)
            for name in self.features.columns
            if isinstance(self.features[name].dtype, pd.CategoricalDtype)
        }

    def distinct_values(self, names: list[str], limit: int) -> dict[str, int]:
        """How many distinct values each feature of ``names`` holds (missing values aside), up
        to ``limit + 1``: what a learner's checks ask of the stream
        (:meth:`~delaycv.data.stream_file.StreamFile.distinct_values` reads a file alike)."""
        return {name: min(int(self.features[name].nunique()), limit + 1) for name in names}

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
            yield self._chunk(start, min(n, start + size), start)

    def as_chunk(self, start: int) -> StreamChunk:
        """The whole stream as one chunk of a longer stream: instances ``start + 1 ..`` of it
        (rows read from a stream file, :class:`~delaycv.data.stream_file.StreamFile`)."""
        return self._chunk(0, len(self), start)

    def _chunk(self, lo: int, hi: int, start: int) -> StreamChunk:
        """Instances ``lo .. hi - 1`` (0-based) as the chunk that begins after instance
        ``start`` of its stream."""
        sl = slice(lo, hi)
        return StreamChunk(
            start,
            self.time[sl],
            self.label[sl],
            self.label_time[sl],
            ChunkRecords(self, lo, hi),
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


def has_effort(meta: dict) -> bool:
    """Whether stream metadata (``Stream.metadata``,
    :func:`~delaycv.data.stream_file.check_stream_file`, ``StreamFile.metadata``) declares an
    effort: the stream has one, its file an ``effort`` column."""
    return meta.get(EFFORT_COLUMN) is not None
