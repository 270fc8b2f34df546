"""The merge stage: the per-fold tables of runs -> one tidy table (and the table of the runs).

:func:`merge` is what the workflow's ``merge`` and ``merge_all`` rules (``scripts/merge.py``)
and ``delaycv merge`` run. Tables are concatenated in the order given, a row group at a time
(:func:`delaycv.tables.merge.merge_files`), each output written atomically; the table of the
runs (:mod:`delaycv.tables.costs`: time, peak memory and RAM-hours of each run) comes from each
run's ``run.json``, and its page from :mod:`delaycv.report.runs`; the table of the datasets
(:mod:`delaycv.tables.datasets`: what each stream holds, what its conversion left out) from
their stream files, and its page from :mod:`delaycv.report.datasets`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from delaycv.common.atomic import atomic_path
from delaycv.report.datasets import datasets_html
from delaycv.report.runs import runs_html
from delaycv.tables.costs import write_runs
from delaycv.tables.datasets import datasets_table
from delaycv.tables.merge import merge_files, merge_tables
from delaycv.tables.results import FOLDS_FILE, SUMMARY_FILE


@dataclass
class Merged:
    """What :func:`merge` wrote: the rows of the merged table, the table of runs and the table of
    datasets (if asked)."""

    rows: int
    runs: pd.DataFrame | None = None
    datasets: pd.DataFrame | None = None


def _write_table(paths: Sequence[str | Path], out: str | Path, name: str) -> int:
    """Merge into ``out``: Parquet a row group at a time, CSV (by its suffix) through pandas."""
    if Path(out).suffix.lower() == ".csv":
        table = merge_tables(paths, name=name)
        with atomic_path(out) as tmp:
            table.to_csv(tmp, index=False)
        return len(table)
    return merge_files(paths, out, name=name)


def merge(
    tables: Sequence[str | Path],
    out: str | Path,
    *,
    summary: str | Path | None = None,
    runs: Sequence[str | Path] | None = None,
    runs_out: str | Path | None = None,
    runs_csv: str | Path | None = None,
    runs_page: str | Path | None = None,
    streams: Mapping[str, str | Path] | None = None,
    datasets_csv: str | Path | None = None,
    datasets_page: str | Path | None = None,
) -> Merged:
    """Concatenate the per-fold tables ``tables`` into ``out``.

    Parameters
    ----------
    tables
        Run directories (their ``folds.parquet``) or Parquet tables (e.g. merged tables).
    out
        The merged table: Parquet, or CSV when its name ends in ``.csv``.
    summary
        Also the runs' ``summary.parquet`` concatenated into this file (Parquet or CSV).
    runs
        Run directories or their ``run.json`` files (default ``tables``): the table of runs,
        written to ``runs_out`` (Parquet, or CSV by its suffix), ``runs_csv`` and ``runs_page``
        (its HTML page in the report, :func:`delaycv.report.runs.runs_html`); none of them given:
        no table of runs.
    streams
        Dataset -> its stream file, in the study's order: the table of datasets
        (:func:`delaycv.tables.datasets.datasets_table`), written to ``datasets_csv`` and
        ``datasets_page`` (its HTML page in the report, :func:`delaycv.report.datasets.
        datasets_html`).

    Returns
    -------
    Merged
        The number of rows merged, and the tables of runs and datasets when they were written.
    """
    tables = list(tables)
    rows = _write_table(tables, out, FOLDS_FILE)
    if summary is not None:
        _write_table(tables, summary, SUMMARY_FILE)
    result = Merged(rows=rows)
    if runs_out is not None or runs_csv is not None or runs_page is not None:
        as_csv = runs_out is not None and Path(runs_out).suffix.lower() == ".csv"
        result.runs = write_runs(
            list(tables if runs is None else runs),
            parquet=None if as_csv else runs_out,
            csv=runs_csv,
        )
        if as_csv:
            with atomic_path(runs_out) as tmp:
                result.runs.to_csv(tmp, index=False)
        if runs_page is not None:
            with atomic_path(runs_page) as tmp:
                tmp.write_text(runs_html(result.runs), encoding="utf-8")
    if streams is not None:
        result.datasets = datasets_table(streams)
        if datasets_csv is not None:
            with atomic_path(datasets_csv) as tmp:
                result.datasets.to_csv(tmp, index=False)
        if datasets_page is not None:
            with atomic_path(datasets_page) as tmp:
                tmp.write_text(datasets_html(result.datasets), encoding="utf-8")
    return result
