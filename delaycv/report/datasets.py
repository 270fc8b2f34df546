"""The page of a study's datasets in the workflow's report (:func:`delaycv.tables.datasets.
datasets_table`): what each stream holds and what its conversion left out or changed. Pure: a
table in, a string out.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from html import escape

import pandas as pd

from delaycv.report import pages

#: the notes' wrapped cells, beside the pages' shared style (delaycv.report.pages)
_NOTES_STYLE = "td.text { white-space: normal; min-width: 20em; max-width: 50em; }"


def _count(value) -> str:
    return f"{int(value):,}"


def _when(value, kind: str) -> str:
    """A time of the span: a date (UTC) for Unix seconds, the instance's position else."""
    if value is None or not math.isfinite(float(value)):
        return "n/a"
    if kind == "position":
        return f"{int(value):,}"
    return datetime.fromtimestamp(float(value), tz=UTC).strftime("%Y-%m-%d")


def _row(row) -> str:
    share = row.positive_share
    positives = f"{_count(row.positives)} ({100 * share:.1f} %)" if math.isfinite(share) else "0"
    cells = [
        f"<td>{escape(str(row.dataset))}</td>",
        f"<td>{escape(str(row.source)) or 'n/a'}</td>",
        f'<td class="num">{_count(row.rows)}</td>',
        f'<td class="num">{positives}</td>',
        f'<td class="num">{_count(row.positives_with_label_time)}</td>',
        f"<td>{_when(row.first_time, row.time)} to {_when(row.last_time, row.time)}</td>",
        f'<td class="num">{_count(row.features)}</td>',
        f'<td class="num">{_count(row.missing_values)}</td>',
        f"<td>{escape(str(row.effort)) or 'none'}</td>",
        f'<td class="text">{escape(str(row.notes))}</td>',
    ]
    return f"<tr>{''.join(cells)}</tr>"


def datasets_html(table: pd.DataFrame, *, title: str = "Datasets") -> str:
    """The page of the datasets table: a row per dataset (rounded, dates in UTC; the CSV holds
    every value, times as Unix seconds or positions)."""
    intro = (
        "The streams the study evaluated, one row per dataset. <em>Source</em>: the raw file "
        "the stream was converted from (the CSV has its SHA-256) or the generator's seed. "
        "<em>Positives</em>: instances "
        "of the positive class (defect-inducing commits in just-in-time defect prediction), "
        "with their share; <em>with a reveal time</em>: the positives whose label is revealed "
        "at a known time (a fix found, a chargeback), which "
        "the policies' feedback and the corrected reference read; <em>span</em>: the first and "
        "last arrival, dates in UTC (instance positions for a stream without times); "
        "<em>missing values</em>: over every feature, left out of the instances that lack "
        "them; <em>effort</em>: the columns the effort-aware measures read; <em>conversion "
        "notes</em>: what the conversion of the raw file left out or changed (the convert "
        "job's log names the rows; docs/data.md)."
    )
    head = [
        f"<th>{escape(h)}</th>"
        for h in (
            "dataset",
            "source",
            "instances",
            "positives",
            "with a reveal time",
            "span",
            "features",
            "missing values",
            "effort",
            "conversion notes",
        )
    ]
    rows = [_row(row) for row in table.itertuples(index=False)]
    parts = [
        *pages.head(title, intro, _NOTES_STYLE),
        pages.table(head, rows),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"
