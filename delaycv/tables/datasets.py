"""The table of a study's datasets: one row per dataset, what its stream holds (the first table of
a study's paper) and what its conversion left out or changed.

:func:`datasets_table` reads each stream file's metadata and its time column (the file's footer
and one column; no features), for delaycv's streams and for a Parquet file another tool wrote
alike (:class:`~delaycv.data.stream_file.StreamFile` counts such a file's positives).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np
import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq

from delaycv.data.convert import conversion_notes
from delaycv.data.stream import has_effort
from delaycv.data.stream_file import StreamFile
from delaycv.data.timeunits import POSITION

#: The columns of :func:`datasets_table`, in order.
DATASET_COLUMNS = [
    "dataset",
    "file",
    "source",
    "source_sha256",
    "rows",
    "positives",
    "positive_share",
    "positives_with_label_time",
    "time",
    "first_time",
    "last_time",
    "features",
    "missing_values",
    "effort",
    "notes",
]


def source_of(metadata: Mapping) -> str:
    """Where a stream's data came from, as its metadata records it: the raw file it was converted
    from (its name), ``generated (seed N, R rows)`` for a generated stream, and empty for a
    Parquet file another tool wrote."""
    generator = metadata.get("generator")
    if isinstance(generator, Mapping):
        return f"generated (seed {generator.get('seed')}, {int(generator.get('rows') or 0):,} rows)"
    return str(metadata.get("source") or "")


def dataset_row(dataset: str, path: str | os.PathLike) -> dict:
    """The row of :func:`datasets_table` of the stream file ``path``."""
    stream = StreamFile(path)
    meta = stream.metadata
    times = pq.read_table(stream.path, columns=["time"]).column("time")
    first, last = pc.min(times).as_py(), pc.max(times).as_py()
    rows, positives = int(stream.rows), int(meta.get("positives") or 0)
    missing = meta.get("missing") or {}
    return {
        "dataset": dataset,
        "file": str(path),
        "source": source_of(meta),
        "source_sha256": str(meta.get("source_sha256") or ""),
        "rows": rows,
        "positives": positives,
        "positive_share": positives / rows if rows else np.nan,
        "positives_with_label_time": int(meta.get("positives_with_label_time") or 0),
        "time": "position" if meta.get("time") == POSITION else "unix_seconds",
        "first_time": float("nan") if first is None else float(first),
        "last_time": float("nan") if last is None else float(last),
        "features": len(meta.get("features") or ()),
        "missing_values": int(sum(missing.values())),
        "effort": str(meta.get("effort") or "") if has_effort(meta) else "",
        "notes": "; ".join(conversion_notes(meta)),
    }


def datasets_table(streams: Mapping[str, str | os.PathLike]) -> pd.DataFrame:
    """One row per dataset (``streams``: dataset -> its stream file, in the study's order):
    ``file`` (the stream evaluated), ``source`` and ``source_sha256`` (the raw file it was
    converted from, its name and SHA-256, or its generator: :func:`source_of`), ``rows``,
    ``positives`` and their share, ``positives_with_label_time`` (those with a reveal time: a
    fix found, a chargeback), the span of arrival times (``time``: ``unix_seconds``,
    or ``position`` for a stream whose times are its instances' positions; ``first_time``,
    ``last_time``), ``features``, ``missing_values`` (over every feature), ``effort`` (where the
    effort comes from, ``la + ld``; empty without one) and ``notes`` (what its conversion left
    out or changed: :func:`delaycv.data.convert.conversion_notes`, joined by ``; ``).

    Examples
    --------
    >>> import tempfile
    >>> from delaycv.data.stream_file import write_stream
    >>> from delaycv.data.synthetic import generate_stream
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     write_stream(generate_stream(rows=300, seed=3), f"{folder}/s.parquet")
    ...     table = datasets_table({"tiny": f"{folder}/s.parquet"})
    >>> table[["dataset", "source", "rows", "positives", "time", "effort"]].to_dict("records")
    [{'dataset': 'tiny', 'source': 'generated (seed 3, 300 rows)', 'rows': 300, 'positives': 89, 'time': 'unix_seconds', 'effort': 'la + ld'}]
    """
    rows = [dataset_row(dataset, path) for dataset, path in streams.items()]
    return pd.DataFrame(rows, columns=DATASET_COLUMNS)
