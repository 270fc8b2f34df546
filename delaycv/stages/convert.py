"""The convert stage: one dataset (a raw ARFF/CSV file, or the embedded generator) -> the
canonical stream (Parquet).

:func:`convert` is what the workflow's ``convert`` rule (``scripts/convert.py``), ``delaycv
convert`` and ``delaycv generate`` run. The stream is written atomically (by
:func:`delaycv.data.convert.convert_file` and :func:`delaycv.data.stream_file.write_stream`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from delaycv.data.convert import convert_file
from delaycv.data.stream_file import write_stream
from delaycv.data.synthetic import generate_stream

#: the keys of a dataset spec that :func:`delaycv.data.convert.convert_file` takes
CONVERT_KEYS = ("preset", "mapping", "drop_truncated_last_line", "sort", "format", "inf", "effort")


def convert(
    spec: Mapping[str, Any],
    dest: str | Path,
    *,
    dataset: str | None = None,
    raw: str | Path | None = None,
) -> dict[str, Any]:
    """Write the stream of the dataset ``spec`` (a dataset of the workflow's config) to ``dest``.

    Parameters
    ----------
    spec
        ``{"generate": {...}}`` (the arguments of :func:`delaycv.data.synthetic.generate_stream`;
        ``"effort": None`` beside it: a stream without an effort), else the options of
        :func:`delaycv.data.convert.convert_file` (:data:`CONVERT_KEYS`; others are ignored,
        e.g. the raw file's ``path``).
    dest
        The Parquet file to write.
    dataset
        The dataset's name (default: the generator's, or the raw file's stem).
    raw
        The raw file (ARFF or CSV) of a converted dataset.

    Returns
    -------
    dict
        The stream's metadata (rows, positives, ...).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     meta = convert({"generate": {"rows": 50, "seed": 3}}, f"{folder}/s.parquet",
    ...                    dataset="tiny")
    >>> meta["dataset"], meta["rows"]
    ('tiny', 50)
    """
    if "generate" in spec:
        # effort: la + ld, or none when the spec says effort: null (the only value it allows here)
        named = {"dataset": dataset} if dataset is not None else {}
        stream = generate_stream(**{**named, "effort": "effort" not in spec, **spec["generate"]})
        write_stream(stream, dest)
        return dict(stream.metadata)
    if raw is None:
        raise ValueError("a converted dataset needs its raw file")
    options = {k: spec[k] for k in CONVERT_KEYS if k in spec}
    return convert_file(raw, dest, dataset=dataset, **options)
