"""ARFF reader for the Weka/MOA dialect.

Supported: ``%`` comments (whole lines, and after an unquoted ``%`` inside a line), blank lines,
``@relation``, ``@attribute`` with names and values quoted by ``'`` or ``"`` (backslash escapes),
types ``numeric``/``real``/``integer`` (float64), nominal ``{a, 'b c'}`` (text, values checked
against the declaration), ``string`` (text), ``date ["java format"]`` (int64 Unix seconds, UTC;
default format ``yyyy-MM-dd'T'HH:mm:ss``), keywords in any case, and ``?`` for a missing value
(a quoted ``'?'`` is the text ``?``; a ``NaN`` in a numeric attribute is missing too, ``inf`` stays
infinite for the converter to report), and a comma after a line's last value (MOA's
``WriteStreamToARFFFile`` ends every data line with one; MOA reads them back): nothing follows
it, so no value is read from it. Sparse data lines ``{0 x, 3 y}`` (0-based attribute indices
in increasing order; a line may be sparse or dense) are read as Weka and MOA read them: an
omitted numeric value is 0 and an omitted nominal value the attribute's first declared value (not
missing: ``?`` is); a sparse line that omits a ``string`` or ``date`` value is an error (Weka
reads it as its first string, which its own writer loses, or as 1970-01-01). Not supported
(clear error): ``relational`` attributes, instance weights (``{w}`` after a line's values).

Dense data without quotes, comments or spaces is parsed by pyarrow's CSV reader (fast path).
Anything else, and any error found by the fast path, goes through a line-by-line parser that names
the exact line and what was expected.
"""

from __future__ import annotations

import io
import logging
import os
from datetime import UTC, datetime

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from delaycv.common.errors import InputError
from delaycv.data.readers import (
    DATE,
    NOMINAL,
    NUMERIC,
    STRING,
    Column,
    RawTable,
    check_text,
    java_date_format,
    nan_to_null,
    parse_dates,
    read_bytes,
    read_head,
    split_last_line,
)

log = logging.getLogger(__name__)

DEFAULT_DATE_FORMAT = "yyyy-MM-dd'T'HH:mm:ss"
_NUMERIC_TYPES = ("numeric", "real", "integer")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "%": "%"}


class _LineError(Exception):
    """A problem in one line; the caller adds the path and line number."""

    def __init__(self, message: str, expected: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.expected = expected


def _read_quoted(text: str, i: int) -> tuple[str, int]:
    """Read the quoted token starting at ``text[i]`` (a quote); return (value, index after it)."""
    quote = text[i]
    out: list[str] = []
    i += 1
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            out.append(_ESCAPES.get(text[i + 1], "\\" + text[i + 1]))
            i += 2
            continue
        if ch == quote:
            return "".join(out), i + 1
        out.append(ch)
        i += 1
    raise _LineError(f"unclosed quote {quote} in {text.strip()!r}", "a closing quote")


def _read_value(text: str, i: int, stops: str) -> tuple[str, bool, int]:
    """Read the value at ``text[i]`` (after its leading blanks): a quoted one, or an unquoted one
    up to a character of ``stops``, stripped; return (value, quoted, index after it)."""
    if i < len(text) and text[i] in "'\"":
        value, i = _read_quoted(text, i)
        return value, True, i
    j = i
    while i < len(text) and text[i] not in stops:
        if text[i] in "'\"":
            raise _LineError(f"quote inside an unquoted value in {text.strip()!r}")
        i += 1
    return text[j:i].strip(), False, i


def split_values(text: str) -> list[tuple[str, bool]]:
    """Split a data line (or a nominal declaration's inside) at commas.

    Returns ``(value, quoted)`` pairs; whitespace around unquoted values is stripped, and an
    unquoted ``%`` starts a comment that runs to the end of the line.
    """
    if "'" not in text and '"' not in text and "%" not in text:
        return [(v.strip(), False) for v in text.split(",")]
    values: list[tuple[str, bool]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t":
            i += 1
        value, quoted, i = _read_value(text, i, ",%")
        if quoted:
            while i < n and text[i] in " \t":
                i += 1
            if i < n and text[i] not in ",%":
                raise _LineError(f"text after a quoted value: {text[i:].strip()!r}", "a comma")
        values.append((value, quoted))
        if i < n and text[i] == ",":
            i += 1
            continue
        return values


def _name_and_rest(text: str) -> tuple[str, str]:
    """Split ``'my name' rest`` or ``name rest`` into the (unquoted) name and the rest."""
    text = text.strip()
    if not text:
        raise _LineError("missing name", "a name")
    if text[0] in "'\"":
        name, i = _read_quoted(text, 0)
        return name, text[i:].strip()
    parts = text.split(None, 1)
    return parts[0], (parts[1].strip() if len(parts) > 1 else "")


def _parse_attribute(rest: str) -> Column:
    name, type_text = _name_and_rest(rest)
    if not type_text:
        raise _LineError(f"attribute {name!r} has no type", "numeric, a {...} list, string or date")
    if type_text.startswith("{"):
        close = type_text.rfind("}")
        if close < 0:
            raise _LineError(f"nominal attribute {name!r} has no closing }}", "{value, ...}")
        inner = type_text[1:close]
        values = tuple(v for v, _ in split_values(inner)) if inner.strip() else ()
        if not values or any(v == "" for v in values):
            raise _LineError(f"nominal attribute {name!r} has an empty value list or value")
        if len(set(values)) != len(values):
            raise _LineError(f"nominal attribute {name!r} repeats a value", "distinct values")
        return Column(name, NOMINAL, values=values)
    keyword, _, extra = type_text.partition(" ")
    kw = keyword.lower()
    if kw in _NUMERIC_TYPES:
        return Column(name, NUMERIC)
    if kw == "string":
        return Column(name, STRING)
    if kw == "date":
        extra = extra.strip()
        java = DEFAULT_DATE_FORMAT
        if extra:
            java = _read_quoted(extra, 0)[0] if extra[0] in "'\"" else extra
        try:
            return Column(name, DATE, date_format=java_date_format(java))
        except ValueError as err:
            raise _LineError(str(err), "a SimpleDateFormat pattern") from None
    if kw == "relational":
        raise _LineError(f"relational attribute {name!r} is not supported", "a flat attribute")
    raise _LineError(
        f"unknown type {keyword!r} of attribute {name!r}",
        "numeric, real, integer, string, date or a {...} list",
    )


def _parse_header(lines: list[str], path: str) -> tuple[str | None, list[Column], int]:
    """Return (relation, columns, index of the first data line)."""
    relation = None
    columns: list[Column] = []
    seen: dict[str, int] = {}
    for idx, raw in enumerate(lines):
        text = raw.strip()
        if not text or text.startswith("%"):
            continue
        lineno = idx + 1
        keyword, _, rest = text.partition(" ")
        if not rest and "\t" in keyword:
            keyword, _, rest = text.partition("\t")
        kw = keyword.lower()
        try:
            if kw == "@relation":
                relation = _name_and_rest(rest)[0] if rest.strip() else ""
            elif kw == "@attribute":
                col = _parse_attribute(rest)
                if col.name in seen:
                    raise _LineError(
                        f"duplicate attribute name {col.name!r} (first on line {seen[col.name]})",
                        "unique attribute names",
                    )
                seen[col.name] = lineno
                columns.append(col)
            elif kw == "@data":
                if not columns:
                    raise _LineError("@data before any @attribute", "@attribute lines")
                return relation, columns, idx + 1
            else:
                raise _LineError(
                    f"unexpected header line {text[:60]!r}",
                    "@relation, @attribute, @data, a % comment or a blank line",
                )
        except _LineError as err:
            raise InputError(
                f"malformed ARFF header: {err.message}",
                path=path,
                location=f"line {lineno}",
                expected=err.expected,
            ) from None
    raise InputError(
        "malformed ARFF header: no @data line",
        path=path,
        location=f"line {len(lines) - (1 if lines and not lines[-1] else 0)}",
        expected="@relation, @attribute lines, then @data",
    )


def _convert_value(value: str, quoted: bool, col: Column):
    if value == "?" and not quoted:
        return None
    if col.kind == NUMERIC:
        try:
            return float(value)
        except ValueError:
            raise _LineError(
                f"text {value!r} in numeric attribute {col.name!r}", "a number or ?"
            ) from None
    if col.kind == NOMINAL:
        if value not in col.values:
            raise _LineError(
                f"unknown nominal value {value!r} of attribute {col.name!r}",
                "one of {" + ",".join(col.values) + "} or ?",
            )
        return value
    if col.kind == DATE:
        try:
            dt = datetime.strptime(value, col.date_format)
        except ValueError:
            raise _LineError(
                f"date {value!r} of attribute {col.name!r} does not match",
                f"format {col.date_format}",
            ) from None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)
        return int(dt.timestamp() // 1)
    return value


_SPARSE_EXPECTED = "{index value, ...}: 0-based attribute indices in increasing order, each once"


def _is_sparse(text: str) -> bool:
    return text.lstrip().startswith("{")


def _sparse_entries(text: str, columns: list[Column]) -> list[tuple[int, object]]:
    """Parse a sparse data line ``{i v, j w}`` into ``(attribute index, value)`` pairs, the
    values converted as a dense line's (None for ``?``); raises _LineError."""
    s = text.strip()
    n, i, last = len(s), 1, -1
    entries: list[tuple[int, object]] = []
    while True:
        while i < n and s[i] in " \t":
            i += 1
        if i < n and s[i] == "}" and not entries:
            i += 1  # ({} : every value omitted)
            break
        j = i
        while i < n and s[i].isdigit():
            i += 1
        if i == j:
            raise _LineError(
                f"a sparse entry without an attribute index in {s!r}", _SPARSE_EXPECTED
            )
        index = int(s[j:i])
        if index >= len(columns):
            raise _LineError(
                f"attribute index {index} in a sparse line, beyond the last attribute "
                f"({len(columns) - 1}, {columns[-1].name!r})",
                _SPARSE_EXPECTED,
            )
        if index <= last:
            raise _LineError(
                f"attribute index {index} after index {last} in a sparse line", _SPARSE_EXPECTED
            )
        if i >= n or s[i] not in " \t":
            raise _LineError(
                f"no value after attribute index {index} in a sparse line", _SPARSE_EXPECTED
            )
        while i < n and s[i] in " \t":
            i += 1
        value, quoted, i = _read_value(s, i, ",}%")
        if not quoted and not value:
            raise _LineError(
                f"attribute index {index} has no value in a sparse line", _SPARSE_EXPECTED
            )
        entries.append((index, _convert_value(value, quoted, columns[index])))
        last = index
        while i < n and s[i] in " \t":
            i += 1
        if i < n and s[i] == ",":
            i += 1
            continue
        if i < n and s[i] == "}":
            i += 1
            break
        raise _LineError(
            f"unclosed sparse line {s!r}"
            if i >= n or s[i] == "%"
            else f"text after a value in a sparse line: {s[i:]!r}",
            "a comma or the closing }",
        )
    rest = s[i:].strip()
    rest = rest[1:].strip() if rest.startswith(",") else rest  # (MOA's comma after a line)
    if rest.startswith("{"):
        raise _LineError("instance weights are not supported", "a line without {weight}")
    if rest and not rest.startswith("%"):
        raise _LineError(f"text after a sparse line's }}: {rest!r}", "nothing, or a % comment")
    return entries


_OMITTED_EXPECTED = (
    "every string and date value given (Weka reads an omitted one as the attribute's first "
    "string, which its writer loses, or as 1970-01-01)"
)


def parse_data_line(text: str, columns: list[Column]) -> list:
    """Parse one dense data line into Python values (None for ``?``); raises _LineError."""
    values = split_values(text)
    if len(values) == len(columns) + 1 and values[-1] == ("", False):
        values = values[:-1]  # (a comma after the last value, as MOA writes its lines)
    if len(values) != len(columns):
        raise _LineError(
            f"malformed data line: {len(values)} values", f"{len(columns)} comma-separated values"
        )
    return [_convert_value(v, q, c) for (v, q), c in zip(values, columns, strict=True)]


def _line_entries(text: str, columns: list[Column]) -> list[tuple[int, object]]:
    """``(attribute index, value)`` pairs of a data line: every attribute of a dense line, those
    a sparse line gives; raises _LineError."""
    if _is_sparse(text):
        return _sparse_entries(text, columns)
    return list(enumerate(parse_data_line(text, columns)))


def _arrow_type(col: Column) -> pa.DataType:
    return {NUMERIC: pa.float64(), DATE: pa.int64()}.get(col.kind, pa.string())


def _on_line(parse, text: str, columns: list[Column], path: str, lineno: int):
    """``parse(text, columns)``, its _LineError raised as an InputError naming the file and the
    line."""
    try:
        return parse(text, columns)
    except _LineError as err:
        raise InputError(
            err.message, path=path, location=f"line {lineno}", expected=err.expected
        ) from None


def _data_line_numbers(lines: list[str], start: int) -> list[int]:
    """The 1-based numbers of the data lines of ``lines[start:]`` (not blank, not a comment)."""
    return [
        i + 1
        for i in range(start, len(lines))
        if lines[i].strip() and not lines[i].lstrip().startswith("%")
    ]


def _sparse_parse(
    lines: list[str], start: int, columns: list[Column], path: str
) -> tuple[pa.Table, np.ndarray]:
    """Parse data lines of which some are sparse, column by column from the values given (the
    work grows with them, not with the columns a line omits); as :func:`_slow_parse`. An
    omitted numeric value is 0, an omitted nominal value the first declared one; an omitted
    string or date value is an InputError."""
    numbers = _data_line_numbers(lines, start)
    n = len(numbers)
    given_rows: list[list[int]] = [[] for _ in columns]
    given_values: list[list] = [[] for _ in columns]
    for row, lineno in enumerate(numbers):
        for index, value in _on_line(_line_entries, lines[lineno - 1], columns, path, lineno):
            given_rows[index].append(row)
            given_values[index].append(value)
    arrays = []
    for col, rows_given, values in zip(columns, given_rows, given_values, strict=True):
        rows = np.asarray(rows_given, dtype=np.int64)
        missing = np.zeros(n, dtype=bool)
        missing[rows[[v is None for v in values]]] = True
        if col.kind == NUMERIC:
            data = np.zeros(n, dtype=np.float64)
            data[rows] = [0.0 if v is None else v for v in values]
            arrays.append(pa.array(data, mask=missing))
        elif col.kind == NOMINAL:
            code = {v: k for k, v in enumerate(col.values)}
            codes = np.zeros(n, dtype=np.int32)
            codes[rows] = [0 if v is None else code[v] for v in values]
            dictionary = pa.array(col.values, type=pa.string())
            indices = pa.array(codes, mask=missing)
            arrays.append(pa.DictionaryArray.from_arrays(indices, dictionary).dictionary_decode())
        else:
            if len(rows) < n:
                first = int(np.flatnonzero(np.bincount(rows, minlength=n) == 0)[0])
                raise InputError(
                    f"a sparse line omits the value of {col.kind} attribute {col.name!r}",
                    path=path,
                    location=f"line {numbers[first]}",
                    expected=_OMITTED_EXPECTED,
                )
            arrays.append(pa.array(values, type=_arrow_type(col)))
    table = pa.Table.from_arrays(arrays, names=[c.name for c in columns])
    return table, np.asarray(numbers, dtype=np.int64)


def _slow_parse(
    lines: list[str], start: int, columns: list[Column], path: str
) -> tuple[pa.Table, np.ndarray]:
    """Parse data lines ``lines[start:]`` one by one; return the table and 1-based line numbers."""
    if any(_is_sparse(lines[i]) for i in range(start, len(lines))):
        return _sparse_parse(lines, start, columns, path)
    cols: list[list] = [[] for _ in columns]
    line_numbers: list[int] = []
    for idx in range(start, len(lines)):
        text = lines[idx]
        stripped = text.strip()
        if not stripped or stripped.startswith("%"):
            continue
        row = _on_line(parse_data_line, text, columns, path, idx + 1)
        for c, v in zip(cols, row, strict=True):
            c.append(v)
        line_numbers.append(idx + 1)
    arrays = [pa.array(c, type=_arrow_type(col)) for c, col in zip(cols, columns, strict=True)]
    table = pa.Table.from_arrays(arrays, names=[c.name for c in columns])
    return table, np.asarray(line_numbers, dtype=np.int64)


def _fast_parse(data: bytes, columns: list[Column]) -> pa.Table | None:
    """Parse a plain data section with pyarrow; None when the slow parser must be used."""
    if not data.strip() or any(ch in data for ch in (b"'", b'"', b"%", b"{")):
        return None
    names = [f"c{i}" for i in range(len(columns))]
    types = {
        n: (pa.float64() if c.kind == NUMERIC else pa.string())
        for n, c in zip(names, columns, strict=True)
    }
    # every line ending in a comma (MOA's writer): one more field, which must be empty throughout
    trailing = data.strip().split(b"\n", 1)[0].rstrip().endswith(b",")
    read = [*names, "trailing"] if trailing else names
    try:
        table = pacsv.read_csv(
            io.BytesIO(data),
            read_options=pacsv.ReadOptions(column_names=read, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(delimiter=",", quote_char=False),
            convert_options=pacsv.ConvertOptions(
                column_types={**types, "trailing": pa.string()},
                null_values=["?"],
                strings_can_be_null=True,
                include_columns=read,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    if trailing:
        after = table.column("trailing")  # ("?" there is null: a value, as any other)
        empty = pc.and_kleene(pc.is_valid(after), pc.equal(pc.utf8_trim_whitespace(after), ""))
        if not pc.all(empty).as_py():
            return None  # (a value after the last: the line parser names its line)
    arrays = []
    for name, col in zip(names, columns, strict=True):
        arr = table.column(name)
        if col.kind != NUMERIC:  # as the slow parser: strip blanks, unquoted ? is missing
            arr = pc.utf8_trim_whitespace(arr)
            arr = pc.if_else(pc.equal(arr, "?"), pa.scalar(None, pa.string()), arr)
        if col.kind == NOMINAL:
            ok = pc.is_in(arr, value_set=pa.array(col.values, type=pa.string()))
            if not pc.all(pc.or_kleene(ok, pc.is_null(arr))).as_py():
                return None
        elif col.kind == DATE:
            secs, bad = parse_dates(arr, col.date_format)
            if bad >= 0:
                return None
            arr = pa.array(np.where(np.isnan(secs), 0, secs).astype(np.int64), mask=np.isnan(secs))
        arrays.append(arr)
    return pa.Table.from_arrays(arrays, names=[c.name for c in columns])


def _decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise InputError(
            "the file is not UTF-8 text", path=path, location=f"line {line}", expected="UTF-8"
        ) from None


def _without_truncated_last_line(
    data: bytes, lines: list[str], start: int, columns: list, where: str, drop: bool
) -> tuple[bytes, list[str], bool]:
    """``(data, lines, dropped)``: a last data line without a newline that does not parse is
    dropped, with a warning, when ``drop`` (else it is an InputError); other files are returned
    as they are."""
    head, last = split_last_line(data)
    if last is not None and start < len(lines):
        try:
            _line_entries(lines[-1], columns)
        except _LineError as err:
            lineno = len(lines)
            if not drop:
                raise InputError(
                    f"truncated last line (no newline at the end, and {err.message})",
                    path=where,
                    location=f"line {lineno}",
                    expected=f"{err.expected}; the option drop_truncated_last_line "
                    "(--drop-truncated-last-line) drops this line",
                ) from None
            log.warning(
                "%s: line %d: dropped the truncated last line %r", where, lineno, lines[-1][:60]
            )
            return head, lines[:-1], True
    return data, lines, False


def _data_offset(data: bytes, start: int) -> int:
    """The byte offset of the data section: after the ``start`` header lines."""
    offset = 0
    for _ in range(start):
        nl = data.find(b"\n", offset)
        offset = len(data) if nl < 0 else nl + 1
    return offset


def read_arff_header(path: str | os.PathLike) -> list[Column]:
    """The columns an ARFF file's header declares (its lines up to ``@data``; the data is not
    read), checked as :func:`read_arff` checks them: an InputError names the file and line."""
    where = str(path)

    def header(f) -> bytes:
        lines: list[bytes] = []
        for raw in f:
            lines.append(raw)
            if raw.lstrip()[:5].lower() == b"@data":
                break
        return b"".join(lines)

    data = read_head(path, header)
    check_text(data, where, "ARFF")
    return _parse_header(_decode(data, where).split("\n"), where)[1]


def read_arff(path: str | os.PathLike, *, drop_truncated_last_line: bool = False) -> RawTable:
    """Read an ARFF file into a :class:`RawTable` (see the module docstring for the dialect).

    ``drop_truncated_last_line``: when the file's last line has no newline and does not parse,
    drop it with a warning instead of raising an InputError.
    """
    where = str(path)
    data, sha = read_bytes(path)
    check_text(data, where, "ARFF")
    text = _decode(data, where)
    lines = text.split("\n")
    relation, columns, start = _parse_header(lines, where)
    data, lines, dropped = _without_truncated_last_line(
        data, lines, start, columns, where, drop_truncated_last_line
    )
    offset = _data_offset(data, start)
    table = _fast_parse(data[offset:], columns)
    line_numbers: np.ndarray | None = None
    if table is None:
        table, line_numbers = _slow_parse(lines, start, columns, where)
    table = nan_to_null(table, columns)
    if table.num_rows == 0:
        raise InputError(
            "no data lines after @data",
            path=where,
            location=f"line {start}",
            expected="at least one data line",
        )

    def line_of_row(row: int) -> int | None:
        nonlocal line_numbers
        if line_numbers is None:
            line_numbers = np.asarray(_data_line_numbers(lines, start), dtype=np.int64)
        return int(line_numbers[row]) if 0 <= row < len(line_numbers) else None

    return RawTable(
        path=where,
        format="arff",
        columns=columns,
        table=table,
        sha256=sha,
        dropped_last_line=dropped,
        relation=relation,
        line_of_row=line_of_row,
    )


__all__ = ["read_arff", "split_values", "parse_data_line", "DEFAULT_DATE_FORMAT"]
