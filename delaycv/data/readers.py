"""Readers of raw tabular inputs (ARFF, CSV) into a typed :class:`RawTable`.

A reader returns every column of the file, typed but not yet interpreted: numeric columns as
float64 (missing = null; a ``NaN`` in the file is missing too, :func:`nan_to_null`; ``inf`` is kept
for the converter to report), text columns (ARFF nominal and string, CSV columns named as text) as
strings (missing = null), ARFF date columns as int64 Unix seconds. The mapping from these columns
to the canonical stream (time, label, label_time, features) is :mod:`delaycv.data.convert`'s job.

Both readers share the treatment of the last line: a file that does not end with a newline and
whose last line does not parse (too few values, a value cut in half) has a *truncated last line*.
That is an error unless ``drop_truncated_last_line=True``, which drops the line and logs a warning.
A last line without newline that parses is kept.
"""

from __future__ import annotations

import codecs
import hashlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from delaycv.common.errors import InputError

log = logging.getLogger(__name__)

NUMERIC = "numeric"
NOMINAL = "nominal"
STRING = "string"
DATE = "date"
TEXT_KINDS = (NOMINAL, STRING)


@dataclass(frozen=True)
class Column:
    """One column of a raw file: its name, kind (numeric, nominal, string, date) and details.

    ``values`` are the declared nominal values (ARFF ``{a,b}``), ``date_format`` the strptime
    format of an ARFF date attribute (converted from Java's SimpleDateFormat).
    """

    name: str
    kind: str
    values: tuple[str, ...] | None = None
    date_format: str | None = None


@dataclass
class RawTable:
    """A raw file read into typed Arrow columns, with a way back from rows to file lines."""

    path: str
    format: str
    columns: list[Column]
    table: pa.Table
    sha256: str
    dropped_last_line: bool = False
    relation: str | None = None
    line_of_row: Callable[[int], int | None] = field(default=lambda row: None, repr=False)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    def location(self, row: int) -> str:
        """``"row R (line L)"`` for the 0-based data row ``row`` (R is 1-based)."""
        line = self.line_of_row(row)
        return f"row {row + 1}" if line is None else f"row {row + 1} (line {line})"

    def __len__(self) -> int:
        return self.table.num_rows


def nan_to_null(table: pa.Table, columns: list[Column]) -> pa.Table:
    """``table`` with every NaN of its numeric columns replaced by null (one missing value)."""
    for i, col in enumerate(columns):
        arr = table.column(i)
        if col.kind != NUMERIC or not pa.types.is_floating(arr.type):
            continue
        nan = pc.is_nan(arr)
        if pc.any(nan).as_py():
            arr = pc.if_else(nan, pa.scalar(None, arr.type), arr)
            table = table.set_column(i, table.field(i), arr)
    return table


#: The compressions a raw file may have (the standard library reads them), by the bytes it
#: starts with: its suffix (``.csv.gz``) is not needed. A zip archive (several files) and zstd
#: (no reader in the standard library) are named by :func:`check_text` instead.
#: (``?``: any byte, bzip2's block size)
COMPRESSIONS = ((b"\x1f\x8b", "gzip"), (b"BZh?1AY&SY", "bz2"), (b"\xfd7zXZ\x00", "lzma"))
#: What each is called in an error.
_COMPRESSION_NAMES = {"gzip": "gzip", "bz2": "bzip2", "lzma": "xz"}


def _compression(head: bytes) -> str | None:
    """The module that decompresses a file starting with ``head``, or None."""
    for magic, module in COMPRESSIONS:
        if _starts(head, magic):
            return module
    return None


def _starts(data: bytes, magic: bytes) -> bool:
    """Whether ``data`` starts with ``magic``, where ``?`` (63) in it stands for any byte."""
    head = data[: len(magic)]
    return len(head) == len(magic) and all(m in (b, 63) for m, b in zip(magic, head, strict=True))


def _corrupted(where: str, module: str, err: Exception) -> InputError:
    name = _COMPRESSION_NAMES[module]
    return InputError(
        f"the {name}-compressed file is corrupted or cut short ({type(err).__name__}: {err})",
        path=where,
        expected=f"a whole {name} file ({name} -t checks one)",
    )


def _decompressed(data: bytes, module: str, path: str) -> bytes:
    import importlib

    try:
        return importlib.import_module(module).decompress(data)
    except Exception as err:  # (gzip: BadGzipFile, EOFError, zlib.error; bz2: OSError; lzma's)
        raise _corrupted(path, module, err) from None


def read_head(path: str | os.PathLike, read: Callable[[Any], bytes]) -> bytes:
    """``read(file)`` on ``path`` opened for reading bytes, decompressed when it is compressed
    (:data:`COMPRESSIONS`): the first bytes or lines of a raw file (its header). An unreadable
    file, or one whose compression is corrupted where it is read, raises InputError naming the
    file."""
    import importlib

    where = str(path)
    module = None
    try:
        with open(path, "rb") as f:
            module = _compression(f.read(16))
            f.seek(0)
            if module is None:
                return read(f)
        with importlib.import_module(module).open(path, "rb") as f:
            return read(f)
    except Exception as err:
        if module is None or (isinstance(err, OSError) and err.strerror):
            raise InputError(
                f"cannot read: {getattr(err, 'strerror', None) or err}",
                path=where,
                expected="a readable file",
            ) from None
        raise _corrupted(where, module, err) from None


def read_bytes(path: str | os.PathLike) -> tuple[bytes, str]:
    """The bytes of ``path``, decompressed when it is compressed (:data:`COMPRESSIONS`), and the
    SHA-256 of the file as stored (what ``sha256sum`` prints); unreadable, corrupted or empty
    files raise InputError."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError("no such file", path=str(p), expected="a readable file") from None
    except IsADirectoryError:
        raise InputError("is a directory", path=str(p), expected="a readable file") from None
    except OSError as err:
        raise InputError(
            f"cannot read: {err.strerror}", path=str(p), expected="a readable file"
        ) from None
    sha = hashlib.sha256(data).hexdigest()
    module = _compression(data[:16])
    if module is not None:
        data = _decompressed(data, module, str(p))
    if not data or (not data[:65536].strip() and not data.strip()):
        raise InputError("the file is empty", path=str(p), expected="a header and data lines")
    return data, sha


#: Starts of common binary files given by mistake, and what they are.
_SIGNATURES = (
    (b"PAR1", "a Parquet file (a canonical stream is used as it is, without convert)"),
    (b"PK\x03\x04", "a zip archive (extract the file first)"),
    (b"(\xb5/\xfd", "a zstd-compressed file (decompress it first)"),
    (b"ARROW1", "an Arrow IPC file"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xfe", "UTF-16 text (save it as UTF-8)"),
    (b"\xfe\xff", "UTF-16 text (save it as UTF-8)"),
    (b"%PDF-", "a PDF document"),
)


def check_text(data: bytes, path: str, kind: str) -> None:
    """Raise InputError unless ``data`` is UTF-8 text: binary junk (a NUL byte, bytes that are
    not UTF-8, a compressed file, a Parquet file) is named as such, with the line and byte
    offset of the first bad byte. ``kind`` is ``"CSV"`` or ``"ARFF"``."""

    def fail(what: str, offset: int) -> InputError:
        line = data.count(b"\n", 0, offset) + 1
        return InputError(
            f"not a text {kind} file: {what}",
            path=path,
            location=f"line {line}",
            expected=f"a text {kind} file in UTF-8",
        )

    for magic, what in _SIGNATURES:
        # (a Parquet file also ends with PAR1)
        if _starts(data, magic) and (magic != b"PAR1" or data.endswith(b"PAR1")):
            raise fail(f"it is {what}", 0)
    nul = data.find(b"\x00")
    decoder = codecs.getincrementaldecoder("utf-8")()
    step = 1 << 20
    end = len(data) if nul < 0 else nul
    for start in range(0, end, step):
        chunk = data[start : min(end, start + step)]
        held = len(decoder.getstate()[0])  # bytes of a character cut at the last chunk's end
        try:
            decoder.decode(chunk, final=start + step >= end)
        except UnicodeDecodeError as err:
            offset = start - held + err.start
            raise fail(
                f"byte 0x{data[offset]:02x} at byte offset {offset} is not UTF-8 (binary data "
                "or another encoding)",
                offset,
            ) from None
    if nul >= 0:
        raise fail(f"a NUL byte at byte offset {nul} (binary data)", nul)


def split_last_line(data: bytes) -> tuple[bytes, bytes | None]:
    """Split off a last line that has no terminating newline: ``(head, last)``; ``last`` is None
    when the file ends with a newline (or only trailing whitespace)."""
    if data.endswith(b"\n"):
        return data, None
    cut = data.rfind(b"\n")
    last = data[cut + 1 :]
    if not last.strip():
        return data, None
    return data[: cut + 1], last


_JAVA_TOKENS = (
    ("yyyy", "%Y"),
    ("yy", "%y"),
    ("MMMM", "%B"),
    ("MMM", "%b"),
    ("MM", "%m"),
    ("dd", "%d"),
    ("HH", "%H"),
    ("hh", "%I"),
    ("mm", "%M"),
    ("ss", "%S"),
    ("SSS", "%f"),
    ("a", "%p"),
    ("Z", "%z"),
    ("X", "%z"),
    ("EEE", "%a"),
)


def java_date_format(fmt: str) -> str:
    """Translate a Java SimpleDateFormat pattern (as in ARFF ``date "yyyy-MM-dd"``) to strptime.

    Quoted text (``'T'``) is literal; the letters y M d H h m s S a Z X E are supported.
    Raises ValueError for other pattern letters.
    """
    out: list[str] = []
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch == "'":
            j = fmt.find("'", i + 1)
            if j < 0:
                raise ValueError(f"unclosed quote in date format {fmt!r}")
            out.append("'" if j == i + 1 else fmt[i + 1 : j].replace("%", "%%"))
            i = j + 1
            continue
        if ch.isalpha():
            for tok, rep in _JAVA_TOKENS:
                if fmt.startswith(tok, i):
                    out.append(rep)
                    i += len(tok)
                    break
            else:
                raise ValueError(f"unsupported letter {ch!r} in date format {fmt!r}")
            continue
        out.append("%%" if ch == "%" else ch)
        i += 1
    return "".join(out)


def parse_dates(values: pa.ChunkedArray | pa.Array | list, fmt: str) -> tuple[np.ndarray, int]:
    """Parse date strings with the strptime format ``fmt`` into Unix seconds.

    Returns ``(seconds, bad)``: float64 seconds (NaN where the input is missing) and the index of
    the first present value that does not match ``fmt`` (-1 if none). Times without a zone are UTC.
    """
    if isinstance(values, pa.ChunkedArray | pa.Array):
        values = values.to_pylist()
    s = pd.Series(values, dtype=object)
    present = s.notna().to_numpy()
    parsed = pd.to_datetime(s, format=fmt, errors="coerce", utc=True)
    bad = np.flatnonzero(present & parsed.isna().to_numpy())
    secs = np.full(len(s), np.nan)
    ok = parsed.notna().to_numpy()
    if ok.any():
        # whole seconds (rounded down) through numpy: exact for any year pandas parses
        stamps = parsed[ok].dt.tz_convert("UTC").dt.tz_localize(None).to_numpy()
        secs[ok] = stamps.astype("datetime64[s]").astype(np.int64).astype(np.float64)
    return secs, int(bad[0]) if bad.size else -1
