"""Convert a raw ARFF or CSV file into the canonical stream (docs/data.md).

A :class:`~delaycv.data.mapping.Mapping` says which column is the arrival time, which is the label and
which value of it is the positive class, which column (if any) links instances to the external
event that reveals a positive label, and which columns are not features.
:data:`delaycv.data.mapping.PRESETS` holds the mappings of the two real formats (``commit-guru``,
``spdisc``). :func:`convert_file` reads, maps, checks and writes the Parquet stream atomically, and
returns its metadata.

Feedback links (``link_kind``):

``fix_timestamp`` (Commit Guru): the link column of a *fixing* row j holds the arrival time v_j of
    the commit it fixes (``-1`` or missing = no link). The reveal time of a positive instance i is

        label_time_i = min { time_j : link_j = time_i }     (NaN if no link points at time_i)

    When several rows share the pointed-at time, the link goes to those among them whose label
    is 1. A link that matches none (no row at that time, or only rows with label 0) is *dangling*:
    it is counted in the metadata and logged as a warning, never silently dropped.
``label_time``: the link column holds the reveal time of the row's own positive label directly;
    a value on a negative row is counted as dangling.
``commit_type`` (spdisc, Cabral et al. ICSE'19): the link column holds each row's commit type:
    0 a clean commit, 1 and 2 defect-inducing ones (found after, or within, the waiting time the
    file was made with), 3 a *copy* of an earlier defect-inducing commit, placed at the time it
    was found. A copy is no commit: it is the reveal of its commit, whose label_time becomes the
    copy's time, and it is left out of the stream. Its commit is the row of type 1 or 2 with the
    same feature values whose time is a whole number of days from the copy's (spdisc writes a
    found time as the commit's time plus whole days), not yet taken by another copy: the latest
    at or before the copy, else (a commit dated after its fix, as rebased commits are) the
    earliest after it. A copy that finds none is dangling (counted, logged, and left out too).
    A type outside 0..3, or a type that disagrees with the label (0 on a positive row, 1..3 on a
    negative one), is an InputError naming the row.

Only what is known at arrival is a feature: the time, the label and the link column never are.

Effort (mapping key ``effort``): each instance's effort is the sum of the named numeric columns
(the presets: ``la + ld``, the changed lines), computed from the raw columns before any is dropped,
so the effort's columns stay features unless ``drop`` names them. It is the stream's ``effort``
column, and ``metadata["effort"]`` says which columns (``"la + ld"``). A missing, negative or
infinite value in an effort column is an InputError naming the row and the column. A mapping
without an effort (``effort: none``) gives a stream without one, written as before.

Missing feature values (an empty CSV field, ``?``, ``NaN``, ...) stay missing: NaN in a numeric
feature, a missing category in a categorical one, null in the Parquet file; the metadata counts
them per feature (``missing``) and the engine leaves them out of the instance's x dict. An infinite
feature value is bad input (an InputError naming the row and column) unless ``inf="missing"``,
which reads it as missing and counts it (``infinite_as_missing``).
"""

from __future__ import annotations

import bisect
import dataclasses
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from delaycv.common.checks import EFFORT_EXPECTED
from delaycv.common.errors import ConfigError, InputError
from delaycv.common.words import describe_time, did_you_mean
from delaycv.data.formats import raw_format, raw_stem, read_table
from delaycv.data.mapping import (
    COMMIT_TYPE,
    INF_MODES,
    Mapping,
    class_text,
    effort_columns,
    effort_description,
    resolve_mapping,
)
from delaycv.data.readers import (
    DATE,
    NOMINAL,
    NUMERIC,
    TEXT_KINDS,
    Column,
    RawTable,
    parse_dates,
)
from delaycv.data.stream import (
    BASE_COLUMNS,
    EFFORT_COLUMN,
    Stream,
    bad_efforts,
    reveals_before_arrival,
    reveals_before_arrival_text,
)
from delaycv.data.stream_file import write_stream
from delaycv.data.timeunits import (
    EARLIEST,
    FACTORS,
    LATEST,
    NAMES,
    POSITION,
    RANGE_TEXT,
    coarser_unit,
    coarser_unit_message,
    implausible,
    implausible_message,
    number_text,
)

log = logging.getLogger(__name__)

#: Every stream's metadata has these keys (converted or generated), and those of
#: :data:`OPTIONAL_METADATA_KEYS` that apply.
METADATA_KEYS = (
    "dataset",
    "source",
    "source_sha256",
    "format",
    "preset",
    "positive_class",
    "negative_class",
    "time_column",
    "time_unit",
    "label_column",
    "feedback_column",
    "link_kind",
    "features",
    "dropped_columns",
    "rows",
    "positives",
    "positives_with_label_time",
    "missing",
    "infinite_as_missing",
    "links",
    "dangling_links",
    "dangling_no_row",
    "dangling_only_negatives",
    "label_time_before_time",
    "dropped_last_line",
    "sorted_rows",
    "generator",
)
#: Keys a stream's metadata has only when it applies: ``effort`` (where the effort comes from,
#: e.g. ``"la + ld"``), present when the stream has an effort; ``time``: ``"position"`` when
#: the file has no time column (each instance's time is its position; the engine then takes
#: windows in instances only); ``copy_rows``: the rows of a ``commit_type`` link column read as
#: copies (reveals, not instances), present with that link kind.
OPTIONAL_METADATA_KEYS = ("effort", "time", "copy_rows")


class _MappingEffort:
    def __repr__(self) -> str:
        return "<the mapping's effort>"


#: ``convert_file(effort=...)`` left out: the mapping's effort (the preset's)
MAPPING_EFFORT: Any = _MappingEffort()


def stream_metadata(**values: Any) -> dict:
    """A metadata dict with every key of :data:`METADATA_KEYS` (missing ones None or 0), and
    those of :data:`OPTIONAL_METADATA_KEYS` that are given and not None."""
    unknown = set(values) - set(METADATA_KEYS) - set(OPTIONAL_METADATA_KEYS)
    if unknown:
        raise KeyError(f"unknown metadata keys: {sorted(unknown)}")
    values = {k: v for k, v in values.items() if k not in OPTIONAL_METADATA_KEYS or v is not None}
    counts = {"links", "dangling_links", "dangling_no_row", "dangling_only_negatives"}
    counts |= {"label_time_before_time", "sorted_rows"}
    meta = {k: (0 if k in counts else None) for k in METADATA_KEYS}
    meta["dropped_columns"] = []
    meta["missing"] = {}
    meta["infinite_as_missing"] = {}
    meta["dropped_last_line"] = False
    meta.update(values)
    return meta


def dangling_links_text(dangling: int, no_row: int, negatives: int) -> str:
    """``"2 feedback links matched no positive instance (1 at a time with no row, 1 at label-0
    rows only)"``: the words of the conversion's warning and of its note alike."""
    where = [f"{no_row} at a time with no row"] if no_row else []
    where += [f"{negatives} at label-0 rows only"] if negatives else []
    links = "feedback link" if dangling == 1 else "feedback links"
    return f"{dangling} {links} matched no positive instance ({', '.join(where)})"


def conversion_notes(meta: dict) -> list[str]:
    """What a stream's conversion left out or changed, in words, from the counts of its metadata
    (:func:`stream_metadata`; the conversion logged each, with its first rows): what a study says
    of its streams when it ends, since a conversion's log is read by few. None for a stream
    converted as it was (fix links dated before their commits, counted as
    ``label_time_before_time``, are the data's own, not a note).

    >>> conversion_notes(stream_metadata(rows=10, positives=3, dangling_links=2,
    ...     dangling_no_row=1, dangling_only_negatives=1, sorted_rows=4,
    ...     infinite_as_missing={"la": 2}))  # doctest: +NORMALIZE_WHITESPACE
    ['2 feedback links matched no positive instance (1 at a time with no row, 1 at label-0 rows
      only): left out', 'rows sorted into time order (sort): 4 of 10 moved', '2 infinite feature
      values read as missing (la: 2)']
    >>> conversion_notes(stream_metadata(rows=10, positives=3))
    []
    """

    def plural(n: int, one: str, many: str) -> str:
        return f"{n} {one if n == 1 else many}"

    notes = []
    rows = int(meta.get("rows") or 0)
    if rows and meta.get("positives") == 0:
        notes.append(
            f"the positive class {meta.get('positive_class')!r} never occurs: every label is 0"
        )
    dangling = int(meta.get("dangling_links") or 0)
    if dangling and "copy_rows" in meta:
        notes.append(
            plural(dangling, "copy row", "copy rows")
            + " (commit type 3) matched no defect-inducing commit: left out"
        )
    elif dangling:
        no_row = int(meta.get("dangling_no_row") or 0)
        negatives = int(meta.get("dangling_only_negatives") or 0)
        notes.append(f"{dangling_links_text(dangling, no_row, negatives)}: left out")
    if meta.get("link_kind") == "label_time" and int(meta.get("label_time_before_time") or 0):
        before = int(meta["label_time_before_time"])
        notes.append(
            f"{plural(before, 'positive is', 'positives are')} revealed before "
            f"{'its' if before == 1 else 'their'} own time (observed as it arrives)"
        )
    if meta.get("sorted_rows"):
        notes.append(f"rows sorted into time order (sort): {meta['sorted_rows']} of {rows} moved")
    infinite = meta.get("infinite_as_missing") or {}
    if infinite:
        shown = ", ".join(f"{k}: {v}" for k, v in infinite.items())
        notes.append(
            f"{plural(sum(infinite.values()), 'infinite feature value', 'infinite feature values')}"
            f" read as missing ({shown})"
        )
    if meta.get("dropped_last_line"):
        notes.append("its last line, cut short, was dropped (drop_truncated_last_line)")
    return notes


# --------------------------------------------------------------------------- helpers


def _first(mask: np.ndarray) -> int:
    idx = np.flatnonzero(mask)
    return int(idx[0]) if idx.size else -1


def check_mapping_columns(names: Sequence[str], m: Mapping, path: str) -> None:
    """Every column the mapping ``m`` names is one of the file's columns ``names`` (its header:
    the study checks it before any conversion runs), no feature it lists is the time, label or
    link, and no feature is named like a stream column (:func:`_feature_names_of`); an
    InputError names the mapping key (or the header), ``path`` and the file's columns."""
    wanted: list[tuple[str, str]] = [("label", m.label)]
    if m.time is not None:
        wanted.insert(0, ("time", m.time))
    if m.link is not None:
        wanted.append(("link", m.link))
    wanted += [("drop", c) for c in m.drop]
    wanted += [("categorical", c) for c in m.categorical]
    wanted += [("features", c) for c in (m.features or ())]
    wanted += [("effort", c) for c in m.effort]
    for key, col in wanted:
        if col not in names:
            raise InputError(
                f"column {col!r} named by mapping key {key!r} does not exist",
                path=path,
                location=f"key mapping.{key}",
                expected="one of the file's columns: " + ", ".join(names),
            )
    if m.features is not None:
        for col in m.features:
            if col in (m.time, m.label, m.link):
                raise InputError(
                    f"column {col!r} cannot be a feature (it is the time, label or link)",
                    path=path,
                    location="key mapping.features",
                    expected="columns known at arrival other than time, label and link",
                )
    _feature_names_of(names, m, path)


def _text_values(raw: RawTable, name: str) -> pa.ChunkedArray:
    arr = raw.table.column(name)
    if pa.types.is_string(arr.type):
        return arr
    return pc.cast(arr, pa.string())


def _labels(raw: RawTable, m: Mapping) -> tuple[np.ndarray, str | None]:
    """int8 labels and the negative class name; errors name the row and line."""
    arr = raw.table.column(m.label)
    col = raw.column(m.label)
    if arr.null_count:
        row = _first(arr.is_null().to_numpy(zero_copy_only=False))
        raise InputError(
            "missing label",
            path=raw.path,
            location=raw.location(row),
            expected=f"a {m.label} value ({m.positive!r} or {m.negative or 'the other class'!r})",
        )
    enc = _text_values(raw, m.label).combine_chunks().dictionary_encode()
    dictionary = [class_text(v) for v in enc.dictionary.to_pylist()]
    codes = enc.indices.to_numpy(zero_copy_only=False)
    negative = m.negative
    if negative is None and col.kind == NOMINAL and col.values and len(col.values) == 2:
        others = [class_text(v) for v in col.values if class_text(v) != m.positive]
        negative = others[0] if len(others) == 1 else None
    seen_order = [dictionary[c] for c in pd.unique(codes)]
    if m.positive not in seen_order:
        declared = [class_text(v) for v in col.values or ()] if col.kind == NOMINAL else []
        _check_absent_positive(raw, m, seen_order, declared)
    if negative is None:
        others = [v for v in seen_order if v != m.positive]
        negative = others[0] if others else None
    allowed = {m.positive} if negative is None else {m.positive, negative}
    bad_codes = [i for i, v in enumerate(dictionary) if v not in allowed]
    if bad_codes:
        row = _first(np.isin(codes, bad_codes))
        raise InputError(
            f"label {dictionary[codes[row]]!r} is outside the two classes",
            path=raw.path,
            location=raw.location(row),
            expected=f"{m.positive!r} (positive) or {negative!r} (negative)",
        )
    if m.positive not in seen_order:
        log.warning("%s: the positive class %r never occurs", raw.path, m.positive)
    pos_codes = [i for i, v in enumerate(dictionary) if v == m.positive]
    return np.isin(codes, pos_codes).astype(np.int8), negative


def _check_absent_positive(raw: RawTable, m: Mapping, seen: list[str], declared: list[str]) -> None:
    """A positive class the label column never holds is a misspelt one, an InputError naming
    the column's values, when the column holds two values or more (one of them would be read
    as the negative class and the other refused, or every label would be 0) or one that differs
    from it only in case (``TRUE`` for ``true``; ``declared``: an ARFF nominal attribute's
    values count too); a column of one other value, or a declared class no instance holds, is a
    stream without positives, which converts (its notes say so)."""
    seen = list(dict.fromkeys(seen))  # (values that differ by spaces around them are one)
    positive = str(m.positive)
    if positive in declared:  # (a declared class that no instance holds: no positives)
        return
    close = [v for v in [*seen, *declared] if v.lower() == positive.lower()]
    if not close and len(seen) < 2:
        return
    shown = ", ".join(repr(v) for v in seen[:6]) + (", ..." if len(seen) > 6 else "")
    raise InputError(
        f"the positive class {m.positive!r} never occurs in column {m.label!r} (its values: "
        f"{shown})",
        path=raw.path,
        expected="the positive class as the file writes it (positive: in the mapping, "
        "--positive for delaycv convert)"
        + (f" (did you mean {close[0]!r}?)" if close else did_you_mean(m.positive, seen)),
    )


def _times(
    raw: RawTable,
    name: str,
    m: Mapping,
    what: str,
    required: bool,
    none: float | None = None,
    *,
    offsets: dict,
) -> np.ndarray:
    """float64 Unix seconds of column ``name`` (NaN where missing, allowed unless ``required``;
    a raw number equal to ``none`` means "no value" and is NaN too). ``offsets``: whether the
    ISO 8601 times of the columns read so far have UTC offsets (:func:`_check_utc_offsets`).

    Numbers are in ``m.time_unit`` (sub-second parts of ms/us/ns are dropped, rounding down, so
    the order is kept); dates (ARFF date attribute, text with ``time_format``, ISO 8601 text with
    ``time_unit: datetime``) are converted exactly. Every time must be plausible (1900-9999):
    otherwise an InputError names the column, the first such row and the likely unit.
    """
    col = raw.column(name)
    numbers = col.kind == NUMERIC and m.time_format is None
    if col.kind == DATE:
        secs = _date_attribute_seconds(raw, name, m, what)
    elif not numbers or m.time_unit == "datetime":
        secs = _text_date_seconds(raw, name, m, what, none, offsets)
    else:
        secs = _unix_number_seconds(raw, name, m, what, none)
    _check_dates_plausible(raw, secs, name, what)
    if required:
        _check_no_missing_time(raw, secs, name, what)
    return secs


def _date_attribute_seconds(raw: RawTable, name: str, m: Mapping, what: str) -> np.ndarray:
    """Seconds of an ARFF date column; a time_unit other than seconds or datetime is an error."""
    if m.time_unit not in ("s", "datetime"):
        raise InputError(
            f"the {what} column {name!r} holds dates, not numbers in {NAMES[m.time_unit]}",
            path=raw.path,
            location="key mapping.time_unit",
            expected="time_unit datetime (or none) for a date attribute",
        )
    arr = raw.table.column(name)
    return np.asarray(pc.cast(arr, pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)


def _text_date_seconds(
    raw: RawTable, name: str, m: Mapping, what: str, none: float | None, offsets: dict
) -> np.ndarray:
    """Seconds of a column of dates written as text (or as numbers such as 20200131), parsed
    with ``m.time_format`` (ISO 8601 without one); a value equal to ``none`` is missing."""
    col = raw.column(name)
    if m.time_format is None and m.time_unit != "datetime":
        raise InputError(
            f"the {what} column {name!r} holds text",
            path=raw.path,
            location="key mapping.time_format",
            expected="Unix times (numbers), or a time_format such as '%Y-%m-%d %H:%M:%S', "
            "or time_unit: datetime for ISO 8601 dates",
        )
    values = raw.table.column(name)
    if col.kind == NUMERIC:  # e.g. 20200131 with time_format "%Y%m%d"
        values = pc.cast(pc.cast(values, pa.int64()), pa.string())
    if none is not None:  # e.g. -1 (no link) in a link column of dates
        texts = values.to_pylist()
        nothing = class_text(none)
        values = pa.array(
            [None if v is not None and class_text(v) == nothing else v for v in texts],
            type=pa.string(),
        )
    if m.time_format is None:
        _check_utc_offsets(values, raw, what, offsets)
    fmt = m.time_format or "ISO8601"
    secs, bad = parse_dates(values, fmt)
    if bad >= 0:
        raise InputError(
            f"{what} {values[bad].as_py()!r} does not match the time format (column {name!r})",
            path=raw.path,
            location=raw.location(bad),
            expected=f"a date in format {m.time_format!r}"
            if m.time_format
            else "an ISO 8601 date such as 2021-03-04T05:06:07Z (or a time_format)",
        )
    return secs


#: an ISO 8601 time of day and, at the value's end, a UTC offset (Z, +01:00, -0500, +01)
_WITH_UTC_OFFSET = r"[Tt ]\d{2}:?\d{2}.*(?:[Zz]|[+-]\d{2}(?::?\d{2})?)\s*$"


def _check_utc_offsets(
    values: pa.ChunkedArray | pa.Array, raw: RawTable, what: str, offsets: dict
) -> None:
    """ISO 8601 times all with a UTC offset or all without, in this column and in those read
    before (``offsets``: their first time, its row and whether it has one; this column's is
    added): a mix is an InputError at the first time unlike the first one (a time without an
    offset is read as UTC, which for a local time beside times with offsets would be a guess
    hours away: a fix time beside the commit times too)."""
    present = pc.is_valid(values).to_numpy(zero_copy_only=False)
    rows = np.flatnonzero(present)
    if rows.size == 0:
        return
    matched = pc.fill_null(pc.match_substring_regex(values, _WITH_UTC_OFFSET), False)
    zoned = np.asarray(matched.to_numpy(zero_copy_only=False), dtype=bool)
    first = int(rows[0])
    unlike = rows[zoned[rows] != zoned[first]]
    if unlike.size:  # a mix within the column
        row, other = int(unlike[0]), ("the first", values[first].as_py(), first, zoned[first])
    else:
        before = [k for k, (_, _, z) in offsets.items() if z != zoned[first]]
        if not before:
            offsets[what] = (values[first].as_py(), first, bool(zoned[first]))
            return
        row, other = first, (f"the first {before[0]}", *offsets[before[0]])
    name, text, at, has = other
    raise InputError(
        f"{what} {values[row].as_py()!r} has {'a' if zoned[row] else 'no'} UTC offset, and "
        f"{name}, {text!r} ({raw.location(at)}), has {'one' if has else 'none'}",
        path=raw.path,
        location=raw.location(row),
        expected="every time with its UTC offset (Z, +01:00), or none (times without one are "
        "read as UTC), in the time and the link column alike",
    )


def _unix_number_seconds(
    raw: RawTable, name: str, m: Mapping, what: str, none: float | None
) -> np.ndarray:
    """Seconds of a column of whole Unix times in ``m.time_unit`` (a value equal to ``none`` is
    missing), rounded down to whole seconds; a fraction, an infinity, a number outside
    1900-9999 in that unit, or times of a coarser unit (all in 1970 in this one:
    :func:`~delaycv.data.timeunits.coarser_unit`) is an InputError naming the likely unit."""
    unit = m.time_unit
    arr = raw.table.column(name)
    secs = np.asarray(pc.cast(arr, pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)
    if none is not None:
        secs = np.where(secs == none, np.nan, secs)
    finite = np.isfinite(secs)
    bad = _first(finite & (secs != np.floor(np.where(finite, secs, 0))))
    if bad >= 0:
        raise InputError(
            f"{what} {float(secs[bad])!r} is not a whole number of {NAMES[unit]} (column {name!r})",
            path=raw.path,
            location=raw.location(bad),
            expected=f"integer Unix {NAMES[unit]}",
        )
    bad = _first(np.isinf(secs))
    if bad >= 0:
        raise InputError(
            f"{what} is infinite",
            path=raw.path,
            location=raw.location(bad),
            expected=f"integer Unix {NAMES[unit]}",
        )
    bad = _first(finite & ((secs < EARLIEST * FACTORS[unit]) | (secs >= LATEST * FACTORS[unit])))
    if bad >= 0:
        raise InputError(
            implausible_message(
                secs[bad],
                unit,
                what=what,
                where=f" in column {name!r}",
                hint="set time_unit: {unit}, or --time-unit {unit}",
            ),
            path=raw.path,
            location=raw.location(bad),
            expected=f"Unix {NAMES[unit]} {RANGE_TEXT}, or the column's unit in time_unit "
            "(s, ms, us, ns)",
        )
    guess = coarser_unit(secs, unit)
    if guess is not None:
        present = secs[finite]
        raise InputError(
            coarser_unit_message(
                present.min(),
                present.max(),
                unit,
                guess,
                what=f"{what}s",
                hint="set time_unit: {unit}, or --time-unit {unit}",
            ),
            path=raw.path,
            location=f"column {name!r}",
            expected=f"Unix {NAMES[unit]} as time_unit says, or the column's unit in time_unit "
            "(s, ms, us, ns)",
        )
    factor = FACTORS[unit]
    if factor != 1:
        whole = np.where(finite, secs, 0).astype(np.int64) // factor
        secs = np.where(finite, whole.astype(np.float64), np.nan)
    return secs


def _check_dates_plausible(raw: RawTable, secs: np.ndarray, name: str, what: str) -> None:
    """Every present time in ``secs`` (seconds) must lie in 1900-9999."""
    bad = implausible(np.where(np.isnan(secs), 0.0, secs))
    if bad >= 0:
        raise InputError(
            f"{what} {np.datetime64(int(secs[bad]), 's')} in column {name!r} is not {RANGE_TEXT}",
            path=raw.path,
            location=raw.location(bad),
            expected=f"dates {RANGE_TEXT}",
        )


def _check_no_missing_time(raw: RawTable, secs: np.ndarray, name: str, what: str) -> None:
    """A required time column may not have a missing value (NaN)."""
    bad = _first(np.isnan(secs))
    if bad >= 0:
        raise InputError(
            f"missing {what}",
            path=raw.path,
            location=raw.location(bad),
            expected=f"a value in column {name!r}",
        )


def _effort(raw: RawTable, m: Mapping) -> np.ndarray | None:
    """Each row's effort: the sum of the mapping's effort columns (None: no effort). A column
    that does not hold numbers, or a missing, negative or infinite value, is an InputError naming
    the column (and the row)."""
    if not m.effort:
        return None
    total = np.zeros(raw.table.num_rows)
    for name in m.effort:
        col = raw.column(name)
        if col.kind != NUMERIC or name in m.categorical:
            raise InputError(
                f"column {name!r} named by mapping key 'effort' holds {col.kind} values",
                path=raw.path,
                location="key mapping.effort",
                expected="numeric columns (e.g. la, ld: lines added and deleted)",
            )
        values = pc.fill_null(raw.table.column(name), np.nan).to_numpy()
        values = np.asarray(values, dtype=np.float64)
        bad = bad_efforts(values)
        if bad.any():
            row = _first(bad)
            value = values[row]
            what = "missing" if np.isnan(value) else f"{float(value)!r}"
            raise InputError(
                f"effort column {name!r} is {what}",
                path=raw.path,
                location=raw.location(row),
                expected=f"{EFFORT_EXPECTED} in every row of an effort column (or effort: "
                "none, --effort none: a stream without effort)",
            )
        total += values
    bad = bad_efforts(total)  # the sum of several columns past the largest effort
    if bad.any():
        row = _first(bad)
        raise InputError(
            f"effort {' + '.join(m.effort)} is {float(total[row])!r}",
            path=raw.path,
            location=raw.location(row),
            expected=EFFORT_EXPECTED,
        )
    return total


def _source_unit(raw: RawTable, m: Mapping) -> str:
    """The unit of the raw time column as recorded in the metadata: ``s``, ``ms``, ``us``, ``ns``
    or ``datetime`` (dates: an ARFF date attribute, text with a time_format or ISO 8601); or
    ``position`` (no time column)."""
    if m.time_unit == POSITION:
        return POSITION
    if raw.column(m.time).kind != NUMERIC or m.time_format is not None:
        return "datetime"
    return m.time_unit


def _is_boolean(values: list[str]) -> bool:
    lowered = {v.lower() for v in values}
    return bool(lowered) and (lowered <= {"false", "true"} or lowered <= {"0", "1"})


def reads_as_category(values: Sequence[str], m: Mapping) -> bool:
    """Whether a text feature whose values are ``values`` (a nominal attribute's declared ones,
    else those the file holds) becomes a categorical feature; not where ``boolean_as_number``
    makes them 1.0/0.0 (true/false or 1/0, any case)."""
    return not (m.boolean_as_number and _is_boolean(list(values)))


def header_categories(columns: Sequence[Column], m: Mapping, path: str) -> tuple[str, ...]:
    """The features that a raw file's header alone says will be categorical features of its
    stream: nominal attributes with declared values (ARFF) that are not read as numbers, and,
    without ``boolean_as_number``, text columns and those the mapping names categorical. A text
    column whose values decide (an ARFF string attribute, a CSV column: they may be booleans) is
    not among them."""
    kinds = {c.name: c for c in columns}
    out = []
    for name in _feature_names_of([c.name for c in columns], m, path):
        col = kinds.get(name)
        if col is None:
            continue  # (a feature the file lacks: the conversion names it)
        if col.kind == NOMINAL and col.values:
            if reads_as_category(col.values, m):
                out.append(name)
        elif (col.kind in TEXT_KINDS or name in m.categorical) and not m.boolean_as_number:
            out.append(name)
    return tuple(out)


def header_numbers(columns: Sequence[Column], m: Mapping, path: str) -> tuple[str, ...]:
    """The features that a raw file's header says will be numbers: its numeric and date
    columns that the mapping does not name categorical (every column of a CSV header is
    numeric until then: its values are numbers, booleans read as 1/0, or the conversion fails)."""
    kinds = {c.name: c.kind for c in columns}
    names = _feature_names_of([c.name for c in columns], m, path)
    return tuple(n for n in names if kinds.get(n) in (NUMERIC, DATE) and n not in m.categorical)


def csv_head_categories(
    names: Sequence[str], head: Mapping[str, list[str]], m: Mapping, path: str
) -> tuple[str, ...]:
    """The features that a CSV file's header and first lines (``head``: values by column,
    :func:`~delaycv.data.csv.read_csv_head`) say will be categorical features of its stream:
    those the mapping names ``categorical``, unless ``boolean_as_number`` may make them numbers,
    which only a value other than true/false and 1/0 in those lines rules out."""
    out = []
    for name in _feature_names_of(list(names), m, path):
        if name not in m.categorical:
            continue
        values = head.get(name, [])
        if not m.boolean_as_number or (values and reads_as_category(values, m)):
            out.append(name)
    return tuple(out)


def _features(
    raw: RawTable, m: Mapping, names: list[str], inf: str = "error"
) -> tuple[pd.DataFrame, dict[str, int]]:
    """The feature frame (missing = NaN / missing category) and {feature: infinite values read
    as missing} (``inf="missing"``; with ``"error"`` an infinite value raises InputError)."""
    out: dict[str, Any] = {}
    infinite: dict[str, int] = {}
    for name in names:
        col = raw.column(name)
        if col.kind in TEXT_KINDS or name in m.categorical:
            out[name] = _text_feature(raw, m, name, col)
            continue
        out[name], n_inf = _numeric_feature(raw, name, col, inf)
        if n_inf:
            infinite[name] = n_inf
    if infinite:
        log.warning(
            "%s: read %d infinite feature value(s) as missing (%s)",
            raw.path,
            sum(infinite.values()),
            ", ".join(f"{k}: {v}" for k, v in infinite.items()),
        )
    return pd.DataFrame(out, index=pd.RangeIndex(raw.table.num_rows)), infinite


def _numeric_feature(raw: RawTable, name: str, col, inf: str) -> tuple[np.ndarray, int]:
    """A numeric (or date) feature as float64 (missing = NaN) and how many infinite values were
    read as missing (``inf="missing"``; with ``"error"`` the first raises InputError)."""
    arr = raw.table.column(name)
    if col.kind == DATE:
        v = arr.cast(pa.float64()).to_numpy(zero_copy_only=False)
    else:
        v = pc.fill_null(arr, np.nan).to_numpy()
    v = np.asarray(v, dtype=np.float64)
    is_inf = np.isinf(v)
    if not is_inf.any():
        return v, 0
    if inf != "missing":
        row = _first(is_inf)
        raise InputError(
            f"infinite value {'inf' if v[row] > 0 else '-inf'} in column {name!r}",
            path=raw.path,
            location=raw.location(row),
            expected="a finite number or a missing value (empty, ?, NaN); the "
            "option inf: missing (--inf missing) reads it as missing",
        )
    return np.where(is_inf, np.nan, v), int(is_inf.sum())


def _text_feature(raw: RawTable, m: Mapping, name: str, col):
    """A text (or categorical) feature: with ``boolean_as_number``, true/false or 1/0 values
    as 1.0/0.0 (missing = NaN); else a categorical (its declared nominal values, else its values
    sorted; missing = a missing category)."""
    values = _text_values(raw, name)
    enc = values.combine_chunks().dictionary_encode()
    dictionary = enc.dictionary.to_pylist()
    if col.kind != NUMERIC:
        dictionary = [str(v).strip() for v in dictionary]
    else:
        dictionary = [class_text(v) for v in dictionary]
    codes = enc.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    declared = list(col.values) if col.kind == NOMINAL and col.values else None
    if not reads_as_category(declared or dictionary, m):
        numbers = np.array([1.0 if v.lower() in ("true", "1") else 0.0 for v in dictionary])
        return np.where(
            codes >= 0, numbers[np.maximum(codes, 0)] if len(numbers) else np.nan, np.nan
        )
    cats = declared if declared is not None else sorted(set(dictionary))
    position = {v: i for i, v in enumerate(cats)}
    lookup = np.array([position[v] for v in dictionary], dtype=np.int64)
    mapped = np.where(codes >= 0, lookup[np.maximum(codes, 0)] if len(lookup) else -1, -1)
    return pd.Categorical.from_codes(mapped, categories=cats)


def _link_label_time(
    time: np.ndarray, label: np.ndarray, link: np.ndarray, m: Mapping, raw: RawTable
) -> tuple[np.ndarray, dict]:
    """label_time (float64, NaN = never) and link counts; see the module docstring."""
    present = ~np.isnan(link)
    if m.link_none is not None:
        present &= link != m.link_none
    rows = np.flatnonzero(present)
    label_time = np.full(time.shape[0], np.nan)
    stats = {"links": int(rows.size), "dangling_no_row": 0, "dangling_only_negatives": 0}
    if m.link_kind == "label_time":
        pos = rows[label[rows] == 1]
        label_time[pos] = link[pos]
        dangling = rows[label[rows] == 0]
        stats["dangling_only_negatives"] = int(dangling.size)
    else:
        order = np.argsort(time, kind="stable")
        sorted_time = time[order]
        targets = link[rows]
        lo = np.searchsorted(sorted_time, targets, "left")
        hi = np.searchsorted(sorted_time, targets, "right")
        pos_idx = np.flatnonzero(label == 1)
        pos_time = np.sort(time[pos_idx])
        n_pos = np.searchsorted(pos_time, targets, "right") - np.searchsorted(
            pos_time, targets, "left"
        )
        no_row = hi == lo
        only_neg = ~no_row & (n_pos == 0)
        stats["dangling_no_row"] = int(no_row.sum())
        stats["dangling_only_negatives"] = int(only_neg.sum())
        dangling = rows[no_row | only_neg]
        good = ~(no_row | only_neg)
        if good.any():
            # earliest fixing time per pointed-at time, then look each positive up
            frame = pd.DataFrame({"target": targets[good], "fix": time[rows[good]]})
            earliest = frame.groupby("target", sort=True)["fix"].min()
            keys = earliest.index.to_numpy(dtype=np.float64)
            where = np.searchsorted(keys, time[pos_idx].astype(np.float64))
            where_c = np.minimum(where, keys.size - 1)
            hit = keys[where_c] == time[pos_idx]
            label_time[pos_idx[hit]] = earliest.to_numpy(dtype=np.float64)[where_c[hit]]
    stats["dangling_links"] = int(dangling.size)
    if dangling.size:
        shown = ", ".join(raw.location(int(r)) for r in dangling[:3])
        log.warning(
            "%s: %s: left out; first: %s",
            raw.path,
            dangling_links_text(
                int(dangling.size), stats["dangling_no_row"], stats["dangling_only_negatives"]
            ),
            shown,
        )
    return label_time, stats


#: spdisc's commit types (the link kind ``commit_type``): a clean commit, a defect-inducing one
#: found after the file's waiting time, one found within it, and a copy placed when its commit
#: was found
CLEAN, FOUND_LATE, FOUND_IN_TIME, COPY = 0, 1, 2, 3
#: a day in seconds: spdisc places a copy a whole number of days from its commit
DAY = 86_400
_COMMIT_TYPES_EXPECTED = (
    "spdisc's commit types: 0 (clean), 1 or 2 (defect-inducing, found after or within the "
    "waiting time) or 3 (a copy of a defect-inducing commit, at the time it was found)"
)


def _commit_types(raw: RawTable, m: Mapping, label: np.ndarray) -> np.ndarray:
    """The link column's commit types (int8), checked: each of 0..3 (numbers, or their text as
    a nominal ARFF attribute ``{0,1,2,3}`` holds it), 0 exactly on label 0."""
    column = raw.table.column(m.link)
    if raw.column(m.link).kind == NUMERIC:
        values = np.asarray(pc.fill_null(column, np.nan).to_numpy(), dtype=np.float64)
    else:
        number = {str(t): float(t) for t in (CLEAN, FOUND_LATE, FOUND_IN_TIME, COPY)}
        text = _text_values(raw, m.link).to_pylist()
        values = np.array([number.get(class_text(v), np.nan) for v in text], dtype=np.float64)
    bad = ~np.isin(values, (CLEAN, FOUND_LATE, FOUND_IN_TIME, COPY))
    if bad.any():
        row = _first(bad)
        value = column[row].as_py()
        what = "missing commit type" if value is None else f"commit type {class_text(value)!r}"
        raise InputError(
            f"{what} in column {m.link!r}",
            path=raw.path,
            location=raw.location(row),
            expected=_COMMIT_TYPES_EXPECTED,
        )
    types = values.astype(np.int8)
    clash = (types == CLEAN) != (label == 0)
    if clash.any():
        row = _first(clash)
        side = f"negative ({m.label} {m.negative!r})" if label[row] == 0 else "positive"
        raise InputError(
            f"commit type {types[row]} in column {m.link!r} on a {side} row",
            path=raw.path,
            location=raw.location(row),
            expected="type 0 on the clean rows and 1, 2 or 3 on the defect-inducing ones "
            f"({m.label} {m.positive!r})",
        )
    return types


def _copies_label_time(
    time: np.ndarray, types: np.ndarray, features: pd.DataFrame, raw: RawTable
) -> tuple[np.ndarray, dict, np.ndarray]:
    """label_time (float64, NaN = never), the link and copy counts and the rows that are
    instances (all but the copies): each copy reveals its commit (the module docstring,
    ``commit_type``)."""
    label_time = np.full(time.shape[0], np.nan)
    commits = np.flatnonzero((types == FOUND_LATE) | (types == FOUND_IN_TIME))
    copies = np.flatnonzero(types == COPY)
    # exact keys: the feature values (missing ones alike) and the time of day
    rows = np.concatenate([commits, copies])
    codes = [pd.factorize(features[name].to_numpy()[rows])[0] for name in features.columns]
    keys = dict(
        zip(rows.tolist(), zip(*codes, (time[rows] % DAY).tolist(), strict=True), strict=True)
    )
    free: dict[tuple, list[int]] = {}  # each key's commits not yet revealed, in time order
    for row in commits[np.argsort(time[commits], kind="stable")].tolist():
        free.setdefault(keys[row], []).append(row)
    unmatched = []
    for copy in copies[np.argsort(time[copies], kind="stable")].tolist():
        waiting = free.get(keys[copy])
        if not waiting:
            unmatched.append(copy)
            continue
        at_or_before = bisect.bisect_right([time[r] for r in waiting], time[copy]) - 1
        label_time[waiting.pop(max(at_or_before, 0))] = time[copy]
    stats = {
        "links": int(copies.size),
        "copy_rows": int(copies.size),  # (every copy leaves the stream, matched or not)
        "dangling_links": len(unmatched),
        "dangling_no_row": len(unmatched),
        "dangling_only_negatives": 0,
    }
    if unmatched:
        log.warning(
            "%s: %d copy row(s) (commit type 3) match no defect-inducing commit of the file (one "
            "of type 1 or 2 with the same feature values, a whole number of days away, not "
            "revealed by another copy): left out; first: %s",
            raw.path,
            len(unmatched),
            ", ".join(raw.location(r) for r in sorted(unmatched)[:3]),
        )
    return label_time, stats, types != COPY


def _check_inf(inf: str) -> None:
    if inf not in INF_MODES:
        raise ConfigError(
            f"unknown inf option {inf!r}", location="key inf", expected=" or ".join(INF_MODES)
        )


# --------------------------------------------------------------------------- public API


def convert_table(
    raw: RawTable,
    mapping: Mapping,
    *,
    dataset: str | None = None,
    preset: str | None = None,
    sort: bool = False,
    inf: str = "error",
) -> Stream:
    """Map a :class:`RawTable` to a :class:`Stream` (checks labels, times, order and links).

    ``inf``: ``"error"`` (an infinite feature value raises InputError naming its row and column)
    or ``"missing"`` (it is read as a missing value and counted in ``infinite_as_missing``).
    """
    _check_inf(inf)
    m = mapping
    check_mapping_columns(raw.names, m, raw.path)
    n = raw.table.num_rows
    label, negative = _labels(raw, m)
    offsets: dict = {}  # (the time and the link column: ISO times with UTC offsets or without)
    if m.time_unit == POSITION:  # no time column: each instance's time is its position
        time, order, sorted_rows = np.arange(1, n + 1, dtype=np.int64), None, 0
    else:
        time = _times(raw, m.time, m, "time", required=True, offsets=offsets).astype(np.int64)
        order, sorted_rows = _time_order(raw, m.time, time, sort)
    copies = m.link is not None and m.link_kind == COMMIT_TYPE
    if copies:
        types = _commit_types(raw, m, label)
    elif m.link is not None:
        link = _times(raw, m.link, m, "link", required=False, none=m.link_none, offsets=offsets)
        label_time, stats = _link_label_time(time, label, link, m, raw)
    else:
        label_time, stats = np.full(n, np.nan), {}
    names = _feature_names(raw, m)
    effort = _effort(raw, m)
    features, infinite = _features(raw, m, names, inf)
    if copies:
        label_time, stats, instances = _copies_label_time(time, types, features, raw)
        order = np.flatnonzero(instances) if order is None else order[instances[order]]
    if order is not None:  # (the rows in time order, without the copies)
        time, label, label_time = time[order], label[order], label_time[order]
        effort = None if effort is None else effort[order]
        features = features.iloc[order].reset_index(drop=True)
    early = reveals_before_arrival(time, label, label_time)
    before = int(early.size)
    if before and m.link_kind == "label_time":  # (reveal times given, not made from fix links)
        i = int(early[0])
        log.warning(
            "%s",
            reveals_before_arrival_text(
                f"{raw.path}: column {m.link}",
                before,
                int((label == 1).sum()),
                raw.location(i if order is None else int(order[i])),
                float(label_time[i]),
                float(time[i]),
            ),
        )
    metadata = stream_metadata(
        dataset=dataset or raw_stem(raw.path),
        source=Path(raw.path).name,
        source_sha256=raw.sha256,
        format=raw.format,
        preset=preset,
        positive_class=m.positive,
        negative_class=negative,
        time_column=m.time,
        time_unit=_source_unit(raw, m),
        label_column=m.label,
        feedback_column=m.link,
        link_kind=None if m.link is None else m.link_kind,
        dropped_columns=[c for c in raw.names if c not in names and c not in (m.time, m.label)],
        label_time_before_time=before,
        dropped_last_line=raw.dropped_last_line,
        sorted_rows=sorted_rows,
        infinite_as_missing=infinite,
        effort=effort_description(m.effort),
        time=POSITION if m.time_unit == POSITION else None,
        **stats,
    )
    return Stream(
        time=time,
        label=label,
        label_time=label_time,
        features=features,
        metadata=metadata,
        effort=effort,
    )


def _as_written(raw: RawTable, column: str, row: int) -> str:
    """The value of ``column`` on ``row`` as the file gives it: a text quoted, a number (an
    integer without ``.0``), an ARFF date (read as Unix seconds) as a time is named to a reader."""
    value = raw.table.column(column)[row].as_py()
    if isinstance(value, str):
        return repr(value)
    return describe_time(value) if raw.column(column).kind == DATE else number_text(value)


def _time_order(
    raw: RawTable, column: str, time: np.ndarray, sort: bool
) -> tuple[np.ndarray | None, int]:
    """``(order, moved)``: the stable sort of the rows by ``time`` (the times of ``column``) and
    how many rows it moves, or ``(None, 0)`` when the times are already non-decreasing. Times
    out of order without ``sort`` are an InputError naming the first row earlier than the one
    before, with both times as the file writes them."""
    n = len(time)
    dec = _first(np.diff(time) < 0) if n > 1 else -1
    if dec < 0:
        return None, 0
    row = dec + 1
    if not sort:
        raise InputError(
            f"time {_as_written(raw, column, row)} is earlier than "
            f"{_as_written(raw, column, row - 1)} on the row before",
            path=raw.path,
            location=raw.location(row),
            expected="non-decreasing times (the option sort (--sort) sorts rows stably)",
        )
    order = np.argsort(time, kind="stable")
    sorted_rows = int((order != np.arange(n)).sum())
    log.warning(
        "%s: rows were not in time order; sorted them stably (%d of %d rows moved)",
        raw.path,
        sorted_rows,
        n,
    )
    return order, sorted_rows


def _feature_names(raw: RawTable, m: Mapping) -> list[str]:
    """The feature columns of ``raw`` (:func:`_feature_names_of`)."""
    return _feature_names_of(raw.names, m, raw.path)


def _feature_names_of(columns: Sequence[str], m: Mapping, path: str) -> list[str]:
    """The feature columns among a raw file's ``columns``: the mapping's ``features``, or every
    column but the time, label, link and dropped ones. A feature named like a stream column
    (``time``, ``label``, ...; or ``effort`` beside an effort) is an InputError."""
    excluded = {m.time, m.label, *(() if m.link is None else (m.link,)), *m.drop}
    names = (
        list(m.features) if m.features is not None else [c for c in columns if c not in excluded]
    )
    clash = [c for c in names if c in BASE_COLUMNS and c not in (m.time, m.label)]
    if clash:
        raise InputError(
            f"feature column {clash[0]!r} has a reserved name",
            path=path,
            location="header",
            expected="feature names other than " + ", ".join(BASE_COLUMNS),
        )
    if m.effort and EFFORT_COLUMN in names:
        raise InputError(
            f"feature column {EFFORT_COLUMN!r} has the name of the stream's effort column "
            f"(the stream's effort is {effort_description(m.effort)})",
            path=path,
            location="header",
            expected=f"the column {EFFORT_COLUMN!r} in mapping key drop (it may still be the "
            "effort: effort: effort), or effort: none",
        )
    return names


def load_stream(
    src: str | os.PathLike,
    *,
    dataset: str | None = None,
    preset: str | None = None,
    mapping: Mapping | dict | None = None,
    drop_truncated_last_line: bool = False,
    sort: bool = False,
    format: str | None = None,
    inf: str = "error",
    effort: Any = MAPPING_EFFORT,
) -> Stream:
    """Read and map ``src`` into a :class:`Stream` without writing anything.

    The arguments are those of :func:`convert_file` (without ``dest``), which calls this.
    """
    _check_inf(inf)
    m, p = resolve_mapping(preset, mapping)
    if effort is not MAPPING_EFFORT:
        m = dataclasses.replace(m, effort=effort_columns(effort, "effort"))
    drop = drop_truncated_last_line or (p is not None and p.drop_truncated_last_line)
    fmt = raw_format(src, format)
    if fmt == "csv":
        from delaycv.data.csv import read_csv

        raw = read_csv(
            src,
            text_columns=m.reads_as_text,
            drop_truncated_last_line=drop,
            delimiter=m.delimiter,
            decimal=m.decimal,
        )
    else:
        raw = read_table(src, format=fmt, drop_truncated_last_line=drop)
    return convert_table(
        raw, m, dataset=dataset, preset=None if p is None else p.name, sort=sort, inf=inf
    )


def convert_file(
    src: str | os.PathLike,
    dest: str | os.PathLike,
    *,
    dataset: str | None = None,
    preset: str | None = None,
    mapping: Mapping | dict | None = None,
    drop_truncated_last_line: bool = False,
    sort: bool = False,
    format: str | None = None,
    inf: str = "error",
    effort: Any = MAPPING_EFFORT,
) -> dict:
    """Convert ``src`` (ARFF or CSV) into the Parquet stream ``dest``; return its metadata.

    What ``delaycv convert`` and the workflow's ``convert`` rule run. The file is read, mapped
    (:class:`Mapping`) and checked (labels, times, order, links, feature values), then written
    atomically: on any error nothing is left at ``dest`` (an existing file stays as it was).

    Parameters
    ----------
    src : str or os.PathLike
        The raw file: ARFF (Weka/MOA) or CSV.
    dest : str or os.PathLike
        The canonical Parquet stream to write (columns ``time``, ``label``, ``label_time``, then
        the features; docs/data.md); its folder is created when missing.
    dataset : str, optional
        The dataset name recorded in the metadata; None (default): the source file's stem.
    preset : str, optional
        A known format's mapping and reading options, a key of :data:`PRESETS`
        (``"commit-guru"``, ``"spdisc"``; ``spdisc`` drops a truncated last line, with a
        warning). None (default): ``mapping`` alone.
    mapping : Mapping or dict, optional
        Which column is the time, the label (and its positive class), the feedback link, which
        columns are not features (:class:`Mapping`). A dict is read with
        :meth:`Mapping.from_dict`, over the preset's mapping when both are given (its keys
        replace the preset's). One of ``preset`` and ``mapping`` is required.
    drop_truncated_last_line : bool, default False
        Drop a last line that has no newline and does not parse, with a warning, instead of
        failing (a preset may switch it on).
    sort : bool, default False
        Sort the rows stably by time, with a warning saying how many moved, instead of failing on
        the first time that is earlier than the one before.
    format : {"arff", "csv"}, optional
        The format of ``src``; None (default): its suffix.
    inf : {"error", "missing"}, default ``"error"``
        An infinite feature value is an error naming its row and column (``"error"``), or is read
        as a missing value and counted in the metadata's ``infinite_as_missing`` (``"missing"``).
    effort : str, list of str or None, optional
        The numeric column(s) whose sum is each instance's effort (the stream's ``effort``
        column), replacing the mapping's ``effort``; None or ``"none"``: no effort. Left out:
        the mapping's (the presets': ``la`` + ``ld``).

    Returns
    -------
    dict
        The stream's metadata (the keys of :data:`METADATA_KEYS`, and ``effort``, the effort's
        columns such as ``"la + ld"``, when the stream has one; also stored in the file under
        the key ``delaycv``): the dataset, the source and its SHA-256, the columns and classes
        the mapping used, and the counts of rows, positives, positives with a reveal time,
        missing values per feature and links (dangling ones among them).

    Raises
    ------
    ConfigError
        An unknown preset, mapping key or option value, or neither a preset nor a mapping.
    InputError
        An unknown format, a file that cannot be read as its format, or content that breaks the
        mapping's rules (a missing column, a label outside the two classes, times out of order
        without ``sort``, implausible times, an infinite value with ``inf="error"``, an effort
        column that is not numeric or has a missing, negative or infinite value, a feature
        named ``effort`` beside an effort), naming the file, the row or column and what was
        expected.
    """
    stream = load_stream(
        src,
        dataset=dataset,
        preset=preset,
        mapping=mapping,
        drop_truncated_last_line=drop_truncated_last_line,
        sort=sort,
        format=format,
        inf=inf,
        effort=effort,
    )
    write_stream(stream, dest)
    return dict(stream.metadata)


__all__ = [
    "MAPPING_EFFORT",
    "METADATA_KEYS",
    "OPTIONAL_METADATA_KEYS",
    "convert_file",
    "convert_table",
    "load_stream",
    "stream_metadata",
]
