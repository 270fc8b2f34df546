"""The page of the table of runs in the workflow's report: what each evaluation cost
(:func:`delaycv.tables.costs.runs_table`), its definitions, the totals per dataset and learner,
and every run, with rounded numbers (the CSV holds every value). Pure: a table in, a string out.
"""

from __future__ import annotations

import math
from html import escape

import pandas as pd

from delaycv.protocol.learner_contract import NO_PROBABILITY_WARN
from delaycv.report import pages
from delaycv.tables.costs import GIB, MIB, SHARE_COLUMN, run_warnings

#: the total rows' rule and the wrapped text cells (the warnings), beside the pages' shared
#: style (delaycv.report.pages)
_ROWS_STYLE = """tr.total td { font-weight: bold; }
td.text { white-space: normal; min-width: 24em; max-width: 60em; }
tr.warned td { vertical-align: top; }"""


def _fixed(digits: int):
    def text(value) -> str:
        return f"{value:,.{digits}f}" if math.isfinite(value) else "n/a"

    return text


def _mib(value) -> str:
    return f"{value / MIB:,.1f}" if math.isfinite(value) else "n/a"


def _percent(value) -> str:
    return f"{100 * value:.1f}" if math.isfinite(value) else "n/a"


def _ram_hours(value) -> str:
    """RAM-hours with 3 significant digits (a short run's are tiny: 0.3 GiB for 20 s is
    0.00167)."""
    if not math.isfinite(value):
        return "n/a"
    return "0" if value == 0 else f"{value:.3g}"


def _mean_rss(frame: pd.DataFrame) -> pd.Series:
    """The mean resident memory over the process's wall time (bytes): RAM-hours / hours."""
    hours = frame["process_wall_seconds"] / 3600
    return (frame["ram_hours"] * GIB / hours).where(hours > 0)


#: (header, column, format) of the page's numeric columns.
_COST_CELLS = (
    ("job wall (s)", "process_wall_seconds", _fixed(1)),
    ("job CPU (s)", "process_cpu_seconds", _fixed(1)),
    ("evaluation CPU (s)", "cpu_seconds", _fixed(1)),
    ("peak memory (MiB)", "peak_rss_bytes", _mib),
    ("mean memory (MiB)", "mean_rss_bytes", _mib),
    ("RAM-hours (GiB h)", "ram_hours", _ram_hours),
)


def _html_table(frame: pd.DataFrame, text_columns, number_columns, total: bool = False) -> str:
    head = [f"<th>{escape(h)}</th>" for h, _ in text_columns]
    head += [f"<th>{escape(h)}</th>" for h, _, _ in number_columns]
    body = []
    for i, (_, row) in enumerate(frame.iterrows()):
        cells = "".join(f"<td>{escape(str(row[c]))}</td>" for _, c in text_columns)
        cells += "".join(
            f'<td class="num">{escape(fmt(float(row[c])))}</td>' for _, c, fmt in number_columns
        )
        last = total and i == len(frame) - 1
        body.append(f'<tr class="total">{cells}</tr>' if last else f"<tr>{cells}</tr>")
    return pages.table(head, body)


def _by_learner(table: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, learner): the runs, the sums of times and RAM-hours, the largest peak; and
    a last row with the study's totals."""
    sums = ["process_wall_seconds", "process_cpu_seconds", "cpu_seconds", "ram_hours"]

    def total(group: pd.DataFrame) -> dict:
        row = {"runs": len(group)}
        # min_count: a column no run measured stays NaN (n/a), not 0
        row.update({c: group[c].sum(min_count=1) for c in sums})
        row["peak_rss_bytes"] = group["peak_rss_bytes"].max()
        return row

    rows = [
        {"dataset": dataset, "learner": learner, **total(group)}
        for (dataset, learner), group in table.groupby(["dataset", "learner"], sort=False)
    ]
    rows.append({"dataset": "all runs", "learner": "", **total(table)})
    frame = pd.DataFrame(rows)
    frame["mean_rss_bytes"] = _mean_rss(frame)
    return frame


def runs_html(table: pd.DataFrame, *, title: str = "Runs: time and memory") -> str:
    """The page of the runs table: the definitions, the totals per dataset and learner, and
    every run (rounded numbers; the CSV holds every value)."""
    table = table.copy()
    table["mean_rss_bytes"] = _mean_rss(table)
    intro = (
        "What each evaluation cost. <em>Job wall</em> is the evaluating process's wall time from "
        "its start (imports, evaluation, writing the run directory), <em>job CPU</em> the CPU "
        "time of the process and its descendant processes (<code>--jobs</code> workers) over it; "
        "<em>evaluation CPU</em> is the engine's CPU time for the evaluation alone (worker "
        "processes' folds included). <em>Peak "
        "memory</em> is the largest resident memory of the process and its descendant processes "
        "(sampled), or the process's own high-water mark when larger. <em>RAM-hours</em> is "
        "their resident memory in GiB integrated over the process's wall time in hours (sampled "
        "every 0.2 s); <em>mean memory</em> is RAM-hours divided by the wall hours. MOA's "
        "RAM-hours instead multiply the model's own size by CPU hours: see docs/engine.md, "
        "\u201cResource use\u201d. n/a: not measured (a run written with "
        "<code>--no-timing</code>). <em>No probability</em> is the share of the run's "
        "predictions (all folds) for which the learner gave no probability, each read as "
        "P(1) = 0.5: the metrics measure no model there (a run warns above "
        f"{NO_PROBABILITY_WARN:.0%})."
    )
    keys = [("dataset", "dataset"), ("learner", "learner")]
    totals = _html_table(
        _by_learner(table),
        keys,
        [("runs", "runs", _fixed(0)), *_COST_CELLS],
        total=True,
    )
    every = _html_table(
        table,
        [*keys, ("seed", "seed"), ("policy", "policy")],
        [
            ("instances", "instances", _fixed(0)),
            ("folds", "folds", _fixed(0)),
            ("no probability (%)", SHARE_COLUMN, _percent),
            ("evaluation wall (s)", "wall_seconds", _fixed(1)),
            *_COST_CELLS,
        ],
    )
    parts = [
        *pages.head(title, intro, _ROWS_STYLE),
        "<h2>Per dataset and learner (sums; peak: the largest)</h2>",
        totals,
        *_warnings_section(table),
        f"<h2>Every run ({len(table)})</h2>",
        every,
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


#: The runs a warning's row names before it counts the rest.
_RUNS_SHOWN = 12


def _warnings_section(table: pd.DataFrame) -> list[str]:
    """The runs' warnings (run.json's), each once with the runs that gave it: what the
    evaluations said and the study's other pages cannot show (a stream's reveal times before
    their commits, a policy that released no label in a fold, a learner without probabilities,
    ...)."""
    found = run_warnings(table)
    if not found:
        return ["<h2>Warnings</h2>", "<p>No run warned.</p>"]
    rows = []
    for text, runs in found:
        named = ", ".join(runs[:_RUNS_SHOWN])
        if len(runs) > _RUNS_SHOWN:
            named += f" and {len(runs) - _RUNS_SHOWN} more"
        rows.append(
            f'<tr class="warned"><td class="text">{escape(text)}</td>'
            f'<td class="num">{len(runs)}</td>'
            f'<td class="text">{escape(named)}</td></tr>'
        )
    return [
        f"<h2>Warnings ({len(found)})</h2>",
        "<p>What the runs said as they ran (each run's <code>run.json</code>, and the CSV's "
        "column <code>warnings</code>); runs are named dataset/learner/seed/policy.</p>",
        pages.table(["<th>warning</th>", "<th>runs</th>", "<th>which</th>"], rows),
    ]
