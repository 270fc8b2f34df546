"""One identity per stream's content, whatever the file's form: :class:`ContentDigest`.

Two dataset names for one stream count it twice in the rankings (Friedman's n). A converted
``.parquet`` and its source CSV, or a CSV and a copy with CRLF line endings, are different files
and one stream: their bytes differ, their content does not. The content digest is the SHA-256
of the canonical stream's content, the instances as the engine reads them: ``time`` (int64),
``label`` (int8), ``label_time`` (float64, NaN when none), and each feature by its name, numeric
(float64, a missing value NaN, ``-0.0`` read as ``0.0``) or categorical (its values as text, a
missing value apart). The effort and the metadata are left out: they leave the instances as
they are. The digest is the same whatever the chunks it is fed in (a file read batch by batch
or a stream in memory).

:func:`delaycv.data.stream_file.write_stream` records it in the stream file's metadata
(``content_sha256``); a run records its stream's in ``run.json`` (``stream_sha256``) and in its
table's Parquet metadata (:mod:`delaycv.tables.results`); ``delaycv check``, ``merge`` and
``rank`` refuse two dataset names with one content, naming both.

>>> import pandas as pd
>>> whole = ContentDigest(["x"])
>>> whole.update([1, 2, 3], [0, 1, 0], [float("nan")] * 3, pd.DataFrame({"x": [0.5, -0.0, 2.0]}))
>>> parts = ContentDigest(["x"])
>>> parts.update([1], [0], [float("nan")], pd.DataFrame({"x": [0.5]}))
>>> parts.update([2, 3], [1, 0], [float("nan")] * 2, pd.DataFrame({"x": [0.0, 2.0]}))
>>> whole.hexdigest() == parts.hexdigest(), len(whole.hexdigest())
(True, 64)
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence

import numpy as np
import pandas as pd

#: The stream-file metadata key of the recorded content digest.
CONTENT_KEY = "content_sha256"
#: The version of the digest's definition, hashed first (a new definition, new digests).
_VERSION = b"delaycv stream content 1\n"


class ContentDigest:
    """The SHA-256 of a stream's content, fed in consecutive chunks (:meth:`update`)."""

    def __init__(self, features: Sequence[str]) -> None:
        self.features = [str(name) for name in features]
        self._columns = {
            name: hashlib.sha256() for name in ("time", "label", "label_time", *self.features)
        }

    def update(self, time, label, label_time, features: pd.DataFrame) -> None:
        """Add the next instances: their arrays and their features (the columns of
        :attr:`features`, in any order)."""
        self._columns["time"].update(np.ascontiguousarray(time, dtype="<i8").tobytes())
        self._columns["label"].update(np.ascontiguousarray(label, dtype="<i1").tobytes())
        self._columns["label_time"].update(_floats(label_time))
        for name in self.features:
            column = features[name]
            if isinstance(column.dtype, pd.CategoricalDtype) or column.dtype == object:
                self._columns[name].update(_texts(column))
            else:
                self._columns[name].update(_floats(column.to_numpy(dtype=np.float64)))

    def hexdigest(self) -> str:
        """The content digest of the instances fed so far (64 hexadecimal digits)."""
        total = hashlib.sha256(_VERSION)
        for name, column in self._columns.items():
            text = name.encode("utf-8")
            total.update(struct.pack("<Q", len(text)) + text + column.digest())
        return total.hexdigest()


def _floats(values) -> bytes:
    """float64 values as bytes, each NaN the one NaN and -0.0 as 0.0."""
    array = np.array(values, dtype="<f8")  # a copy: changed below
    array[np.isnan(array)] = np.nan
    array[array == 0.0] = 0.0
    return array.tobytes()


def _texts(column: pd.Series) -> bytes:
    """Categorical values as bytes: each a length-prefixed UTF-8 text, a missing value apart."""
    out = bytearray()
    for value in column.astype(object).tolist():
        if value is None or value is pd.NA or (isinstance(value, float) and value != value):
            out += b"\xff" * 8
        else:
            text = str(value).encode("utf-8")
            out += struct.pack("<Q", len(text)) + text
    return bytes(out)
