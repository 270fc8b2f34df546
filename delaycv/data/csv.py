"""CSV reader: a header line of unique column names, then one instance per line.

Columns are numbers (float64, with a decimal point, or a decimal comma with ``decimal=","``)
unless named in ``text_columns`` (kept as text). Missing values are an empty field or one of
:data:`NULL_VALUES` (in a numeric column any spelling of NaN, too); they are null in the table.
``inf`` in a numeric column stays infinite (the converter reports it). Fields may be quoted with
``"`` (RFC 4180). A UTF-8 byte-order mark is ignored.

The file is parsed by pyarrow's CSV reader (fast path, ~1 s per million 17-column rows). When
pyarrow reports a problem, a line-by-line parser with Python's :mod:`csv` module finds the first
bad line and raises an InputError that names it and says what was expected.
"""

from __future__ import annotations

import csv as pycsv
import io
import logging
import os
import re
from collections.abc import Callable, Collection

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from delaycv.common.errors import InputError
from delaycv.data.readers import (
    NUMERIC,
    STRING,
    Column,
    RawTable,
    check_text,
    nan_to_null,
    read_bytes,
    read_head,
    split_last_line,
)
from delaycv.data.timeunits import DATE_TEXT

log = logging.getLogger(__name__)

#: Field values read as missing (besides the empty field).
NULL_VALUES = ("", "?", "NA", "N/A", "null", "NULL", "NaN", "nan")
_NULLS = frozenset(NULL_VALUES)
_BOM = b"\xef\xbb\xbf"
#: Text that a column of booleans holds (any case); see ``Mapping.boolean_as_number``.
_BOOLEAN_WORDS = frozenset({"true", "false"})
#: What a file holding ``true`` or ``false`` in its usual spellings holds (a quick look before a
#: parse; other spellings are found by the line parser, when the quick parse fails on them)
_BOOLEAN_HINTS = (b"rue", b"RUE", b"alse", b"ALSE")


class _LineError(Exception):
    def __init__(self, message: str, expected: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.expected = expected


def _decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise InputError(
            "the file is not UTF-8 text", path=path, location=f"line {line}", expected="UTF-8"
        ) from None


#: Separators that a one-column header holding one of them (and not the delimiter given)
#: suggests, and their names: a comma-separated file read with ``--delimiter ';'`` is named too.
_OTHER_DELIMITERS = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "vertical bars"}


def delimiter_text(delimiter: str) -> str:
    """How a delimiter is written in a mapping or on the command line (``\\t`` for a tab)."""
    return "\\t" if delimiter == "\t" else delimiter


def _check_delimiter(header: str, path: str, delimiter: str) -> None:
    """A header that splits into one name but holds another usual separator: the file is
    separated by that one (a stream needs at least a time and a label column)."""
    counts = {d: header.count(d) for d in _OTHER_DELIMITERS if d != delimiter}
    found = max(counts, key=counts.get) if counts else None
    if found is None or counts[found] == 0:
        return
    shown, given = delimiter_text(found), delimiter_text(delimiter)
    raise InputError(
        f"the header has no '{given}' but {counts[found]} {_OTHER_DELIMITERS[found]}: the file "
        f"looks '{shown}'-separated",
        path=path,
        location="line 1",
        expected=f"fields separated by '{given}', or the delimiter option: delimiter: "
        f"'{shown}' in the mapping, --delimiter '{shown}' for delaycv convert",
    )


def _header(data: bytes, path: str, delimiter: str) -> list[str]:
    end = data.find(b"\n")
    first = _decode(data if end < 0 else data[:end], path).rstrip("\r")
    if not first.strip():
        raise InputError(
            "the first line is empty", path=path, location="line 1", expected="a header line"
        )
    names = next(pycsv.reader([first], delimiter=delimiter))
    names = [n.strip() for n in names]
    if len(names) == 1:
        _check_delimiter(first, path, delimiter)
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        if not name:
            pandas = (
                "; a first column without a name is the row index pandas' to_csv (or R's "
                "write.csv) writes, which would be a feature counting the rows: write the file "
                "without it (index=False; row.names=FALSE)"
            )
            raise InputError(
                f"column {i + 1} of the header has no name",
                path=path,
                location="line 1",
                expected="a name for every column" + (pandas if i == 0 else ""),
            )
        if name in seen:
            raise InputError(
                f"duplicate column name {name!r} (columns {seen[name] + 1} and {i + 1})",
                path=path,
                location="line 1",
                expected="unique column names",
            )
        seen[name] = i
    return names


def _convert_row(fields: list[str], columns: list[Column], decimal: str = ".") -> list:
    """A line's values: numbers in numeric columns (``true``/``false``, any case, kept as text:
    a column of them is one of booleans, :func:`_as_booleans`), text in the others, None where
    missing; ``decimal`` is the numbers' decimal mark."""
    if len(fields) != len(columns):
        raise _LineError(
            f"malformed line: {len(fields)} fields", f"{len(columns)} fields as in the header"
        )
    out = []
    for value, col in zip(fields, columns, strict=True):
        if value in _NULLS or (col.kind == NUMERIC and not value.strip()):
            out.append(None)
        elif col.kind == NUMERIC:
            try:
                out.append(_number(value, decimal))
            except ValueError:
                if value.strip().lower() in _BOOLEAN_WORDS:
                    out.append(value)
                    continue
                raise _LineError(
                    f"text {value!r} in numeric column {col.name!r}",
                    _number_expected(value, decimal),
                ) from None
        else:
            out.append(value)
    return out


#: a number written with a decimal comma (``1,5``, ``-0,25``, ``1,5e3``)
_DECIMAL_COMMA = re.compile(r"\s*[-+]?\d*,\d+([eE][-+]?\d+)?\s*")


def _number(value: str, decimal: str) -> float:
    """A numeric field's value, its decimal mark ``decimal`` (with ``,`` a ``.`` is an error,
    as in Arrow's reader)."""
    if decimal != ".":
        if "." in value:
            raise ValueError(value)
        value = value.replace(decimal, ".")
    return float(value)


def _number_expected(value: str, decimal: str) -> str:
    """What a numeric column expects of ``value``, which is no number: with a hint where it is
    one written with the other decimal mark."""
    expected = (
        "a number or an empty field (name the column as text/categorical in the mapping if it "
        "is not numeric)"
    )
    if decimal == "." and _DECIMAL_COMMA.fullmatch(value):
        return (
            "a number with a decimal point, or an empty field; a file of decimal commas is read "
            "with decimal: ',' in the mapping (--decimal ',' for delaycv convert)"
        )
    if decimal == "," and "." in value:
        return (
            "a number with a decimal comma (the mapping's decimal: ','), "
            + expected.removeprefix("a number ")
        )
    if DATE_TEXT.match(value):
        return (
            "a number or an empty field; a time or link column of dates is read with time_unit: "
            "datetime in the mapping (--time-unit datetime for delaycv convert), or with its "
            "time_format"
        )
    return expected


def _as_booleans(values: list, column: Column, lines: list[int], path: str) -> bool:
    """Whether a numeric column's values (:func:`_convert_row`) are those of a column of
    booleans: every one ``true`` or ``false`` (or missing). One that mixes them with numbers is
    an InputError at the first such word's line."""
    words = [i for i, v in enumerate(values) if isinstance(v, str)]
    if not words:
        return False
    if any(isinstance(v, float) for v in values):
        raise InputError(
            f"text {values[words[0]]!r} in numeric column {column.name!r}",
            path=path,
            location=f"line {lines[words[0]]}",
            expected="a number or an empty field (a column holding only true and false is read "
            "as 1/0; this one holds numbers too)",
        )
    return True


def _slow_parse(
    text: str, columns: list[Column], path: str, delimiter: str, decimal: str = "."
) -> tuple[pa.Table, np.ndarray, set[str]]:
    """``(table, lines, booleans)``: the file parsed line by line (the first bad line is an
    InputError naming it), the first line of each row, and the numeric columns found to hold
    booleans (text in the table)."""
    reader = pycsv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    cols: list[list] = [[] for _ in columns]
    lines: list[int] = []
    try:
        next(reader)  # header
        start = reader.line_num + 1
        for fields in reader:
            if not fields or (len(fields) == 1 and not fields[0].strip()):
                start = reader.line_num + 1
                continue
            try:
                row = _convert_row(fields, columns, decimal)
            except _LineError as err:
                raise InputError(
                    err.message, path=path, location=f"line {start}", expected=err.expected
                ) from None
            for c, v in zip(cols, row, strict=True):
                c.append(v)
            lines.append(start)
            start = reader.line_num + 1
    except pycsv.Error as err:
        raise InputError(
            f"malformed CSV: {err}",
            path=path,
            location=f"line {reader.line_num}",
            expected="fields separated by commas, quotes closed",
        ) from None
    booleans = {
        c.name
        for c, values in zip(columns, cols, strict=True)
        if c.kind == NUMERIC and _as_booleans(values, c, lines, path)
    }
    types = [
        pa.float64() if c.kind == NUMERIC and c.name not in booleans else pa.string()
        for c in columns
    ]
    arrays = [pa.array(v, type=t) for v, t in zip(cols, types, strict=True)]
    table = pa.Table.from_arrays(arrays, names=[c.name for c in columns])
    return table, np.asarray(lines), booleans


def _fast_parse(
    data: bytes, columns: list[Column], delimiter: str, decimal: str = "."
) -> pa.Table | None:
    names = [c.name for c in columns]
    try:
        return pacsv.read_csv(
            io.BytesIO(data),
            read_options=pacsv.ReadOptions(
                column_names=[f"c{i}" for i in range(len(names))],
                skip_rows=1,
                block_size=1 << 24,
            ),
            parse_options=pacsv.ParseOptions(delimiter=delimiter),
            convert_options=pacsv.ConvertOptions(
                column_types={
                    f"c{i}": (pa.float64() if c.kind == NUMERIC else pa.string())
                    for i, c in enumerate(columns)
                },
                null_values=list(NULL_VALUES),
                strings_can_be_null=True,
                decimal_point=decimal,
            ),
        ).rename_columns(names)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None


def _boolean_columns(data: bytes, columns: list[Column], delimiter: str) -> set[str]:
    """The numeric columns whose every value is ``true`` or ``false`` (any case; or missing):
    read as text, which the converter's ``boolean_as_number`` makes 1/0 (a CSV written from a
    column of booleans, ``True``/``False``). Looked for only when the file holds such a word, in
    one more parse of it as text; a file that this parse cannot read has none here (the line
    parser then finds them, or names the first bad line)."""
    if not any(c.kind == NUMERIC for c in columns) or not any(h in data for h in _BOOLEAN_HINTS):
        return set()
    as_text = [Column(c.name, STRING) for c in columns]
    table = _fast_parse(data, as_text, delimiter)
    if table is None:
        return set()
    found = set()
    for c in columns:
        if c.kind != NUMERIC:
            continue
        values = table.column(c.name).drop_null().unique().to_pylist()
        words = {v.strip().lower() for v in values if v.strip()}
        if words and words <= _BOOLEAN_WORDS and all(v.strip() for v in values):
            found.add(c.name)
    return found


def _check_booleans(
    table: pa.Table, booleans: set[str], where: str, line_of_row: Callable[[int], int | None]
) -> None:
    """Every value of a column read as booleans is ``true`` or ``false`` (a last line the
    search left out may hold another): else an InputError naming its line."""
    for name in sorted(booleans):
        for row, value in enumerate(table.column(name).to_pylist()):
            if value is not None and value.strip().lower() not in _BOOLEAN_WORDS:
                line = line_of_row(row)
                raise InputError(
                    f"text {value!r} in column {name!r}, whose other values are true and false",
                    path=where,
                    location=f"line {line}" if line is not None else f"row {row + 1}",
                    expected="true or false (any case) or an empty field in every row of a "
                    "column of booleans",
                )


def _without_truncated_last_line(
    data: bytes, columns: list[Column], where: str, delimiter: str, decimal: str, drop: bool
) -> tuple[bytes, bool]:
    """``(data, dropped)``: a last line without a newline that does not parse is dropped, with
    a warning, when ``drop`` (else it is an InputError); other data is returned as it is."""
    head, last = split_last_line(data)
    nlines = data.count(b"\n") + 1
    if last is not None and head.count(b"\n") >= 1:
        last_text = last.decode("utf-8", errors="replace").rstrip("\r")
        try:
            fields = next(pycsv.reader([last_text], delimiter=delimiter, strict=True))
            _convert_row(fields, columns, decimal)
        except (_LineError, pycsv.Error) as err:
            message = err.message if isinstance(err, _LineError) else f"malformed CSV: {err}"
            expected = err.expected if isinstance(err, _LineError) else "a complete line"
            if not drop:
                raise InputError(
                    f"truncated last line (no newline at the end, and {message})",
                    path=where,
                    location=f"line {nlines}",
                    expected=f"{expected}; the option drop_truncated_last_line "
                    "(--drop-truncated-last-line) drops this line",
                ) from None
            log.warning(
                "%s: line %d: dropped the truncated last line %r", where, nlines, last_text[:60]
            )
            return head, True
    return data, False


def read_csv_header(path: str | os.PathLike, delimiter: str = ",") -> list[str]:
    """The column names of a CSV file's header (its first line; the data is not read), checked
    as :func:`read_csv` checks them: an InputError names the file and line."""
    where = str(path)
    first = read_head(path, lambda f: f.readline())
    check_text(first, where, "CSV")
    if first.startswith(_BOM):
        first = first[len(_BOM) :]
    return _header(first, where, delimiter)


def read_csv_head(
    path: str | os.PathLike, columns: Collection[str], delimiter: str = ",", size: int = 65536
) -> dict[str, list[str]]:
    """The values in ``columns`` of a CSV file's first data lines (the whole lines within its
    first ``size`` bytes; missing values left out), stripped: what the workflow's checks look at
    before the conversion reads the file. A column the header lacks has none; a head the line
    parser cannot read gives none (the conversion then names its mistake)."""
    try:
        data = read_head(path, lambda f: f.read(size))
        head = data if len(data) < size else data[: data.rfind(b"\n") + 1]
        if head.startswith(_BOM):
            head = head[len(_BOM) :]
        lines = head.decode("utf-8").splitlines()
        rows = list(pycsv.reader(lines, delimiter=delimiter))
    except (InputError, UnicodeDecodeError, pycsv.Error):
        return {}
    if not rows:
        return {}
    names = [n.strip() for n in rows[0]]
    where = {name: names.index(name) for name in columns if name in names}
    out: dict[str, list[str]] = {name: [] for name in where}
    for row in rows[1:]:
        if len(row) != len(names):
            continue  # (a malformed line: the conversion names it)
        for name, i in where.items():
            value = row[i].strip()
            if value not in _NULLS:
                out[name].append(value)
    return out


def read_csv(
    path: str | os.PathLike,
    *,
    text_columns: Collection[str] | Callable[[str], bool] = (),
    drop_truncated_last_line: bool = False,
    delimiter: str = ",",
    decimal: str = ".",
) -> RawTable:
    """Read a CSV file with a header into a :class:`RawTable`.

    ``text_columns``: names of columns kept as text (labels such as ``True``/``False``,
    categorical features, date strings, columns that are no feature), or a function of a
    column's name that says whether it is one (:meth:`delaycv.data.mapping.Mapping.reads_as_text`);
    names not in the header are ignored here (the converter reports mapped columns that do not
    exist). Every other column must hold numbers.
    ``drop_truncated_last_line``: when the last line has no newline and does not parse, drop it
    with a warning instead of raising an InputError.
    ``delimiter``: the field separator; ``decimal``: the numbers' decimal mark, ``.`` or ``,``
    (then a number written with a point is an error at its line, as in Arrow's reader).
    """
    where = str(path)
    data, sha = read_bytes(path)
    check_text(data, where, "CSV")
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    names = _header(data, where, delimiter)
    is_text = text_columns if callable(text_columns) else set(text_columns).__contains__
    columns = [Column(n, STRING if is_text(n) else NUMERIC) for n in names]
    # (a last line without a newline is left out: it may be cut, _without_truncated_last_line)
    booleans = _boolean_columns(split_last_line(data)[0], columns, delimiter)
    columns = [Column(c.name, STRING) if c.name in booleans else c for c in columns]
    data, dropped = _without_truncated_last_line(
        data, columns, where, delimiter, decimal, drop_truncated_last_line
    )
    table = _fast_parse(data, columns, delimiter, decimal)
    line_numbers: np.ndarray | None = None
    if table is None:  # find the exact problem (or parse what pyarrow does not)
        table, line_numbers, found = _slow_parse(
            _decode(data, where), columns, where, delimiter, decimal
        )
        booleans |= found
        columns = [Column(c.name, STRING) if c.name in booleans else c for c in columns]
    table = nan_to_null(table, columns)
    if table.num_rows == 0:
        raise InputError(
            "no data lines after the header",
            path=where,
            location="line 2",
            expected="at least one data line",
        )

    def line_of_row(row: int) -> int | None:
        nonlocal line_numbers
        if line_numbers is None:
            line_numbers = _slow_lines(_decode(data, where), delimiter)
        return int(line_numbers[row]) if 0 <= row < len(line_numbers) else None

    _check_booleans(table, booleans, where, line_of_row)
    return RawTable(
        path=where,
        format="csv",
        columns=columns,
        table=table,
        sha256=sha,
        dropped_last_line=dropped,
        line_of_row=line_of_row,
    )


def _slow_lines(text: str, delimiter: str) -> np.ndarray:
    """1-based first line of every data record (blank lines skipped)."""
    reader = pycsv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    out: list[int] = []
    next(reader, None)
    start = reader.line_num + 1
    for fields in reader:
        if fields and not (len(fields) == 1 and not fields[0].strip()):
            out.append(start)
        start = reader.line_num + 1
    return np.asarray(out, dtype=np.int64)
