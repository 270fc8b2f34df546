"""What the runs cost: the table of runs (one row per run, from its ``run.json``) and its HTML page.

:func:`runs_table` reads the ``run.json`` of run directories into one table (:data:`RUN_COLUMNS`):
the run keys, its size (instances, folds, checkpoints), the evaluation's wall and CPU seconds (the
engine's), and the process's: wall and CPU seconds, peak resident memory and RAM-hours
(:mod:`delaycv.tables.usage` defines them). A value the run did not measure (``--no-timing``, a run
written before delaycv measured it) is NaN. :func:`runs_html` is the page of the workflow's
report; :func:`write_runs` writes the table as Parquet and CSV and the page. The workflow's
``merge_all`` writes ``<results>/runs.parquet``, ``runs.csv`` and ``runs.html``;
``delaycv merge --runs-out`` writes the table of the runs it merges.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from html import escape
from pathlib import Path

import pandas as pd

from delaycv.common.atomic import atomic_path
from delaycv.common.errors import InputError
from delaycv.study import pages
from delaycv.tables.merge import RUN_KEYS, claim_run
from delaycv.tables.results import RUN_FILE, write_table

#: Bytes in a GiB and in a MiB.
GIB, MIB = 1024**3, 1024**2

#: The integer columns after the run keys: the run's size.
SIZE_COLUMNS = ("instances", "folds", "checkpoints")
#: The float columns: the evaluation's times (the engine's ``evaluate`` call), then the
#: process's (``delaycv.tables.usage``: the job or the command, start-up and writing included).
COST_COLUMNS = (
    "wall_seconds",
    "cpu_seconds",
    "process_wall_seconds",
    "process_cpu_seconds",
    "peak_rss_bytes",
    "ram_hours",
)
#: The columns of the runs table, in order.
RUN_COLUMNS = (*RUN_KEYS, *SIZE_COLUMNS, *COST_COLUMNS)


def run_info_path(path: str | os.PathLike) -> Path:
    """The ``run.json`` of a run directory (or of the run directory of a file in it, such as its
    ``folds.parquet``, or the ``run.json`` itself)."""
    p = Path(path)
    if p.is_dir():
        return p / RUN_FILE
    return p if p.name == RUN_FILE else p.parent / RUN_FILE


def _read_info(path: str | os.PathLike) -> tuple[Path, dict]:
    info_path = run_info_path(path)
    expected = "a run directory with its run.json"
    if not info_path.is_file():
        raise InputError(f"no {RUN_FILE}", path=str(path), expected=expected)
    try:
        info = json.loads(info_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise InputError(
            f"unreadable JSON: {err.msg}", path=str(info_path), location=f"line {err.lineno}"
        ) from None
    keys = info.get("run_keys") if isinstance(info, dict) else None
    missing = [k for k in RUN_KEYS if not isinstance(keys, dict) or k not in keys]
    if missing:
        raise InputError(
            f"no run key {', '.join(missing)}",
            path=str(info_path),
            location="key run_keys",
            expected=f"the run keys {', '.join(RUN_KEYS)}",
        )
    return info_path, info


def _number(value) -> float:
    if value is None or isinstance(value, bool):
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def runs_table(paths: Iterable[str | os.PathLike]) -> pd.DataFrame:
    """One row per run (:data:`RUN_COLUMNS`), in the order of ``paths`` (run directories, files
    in them or their ``run.json``). A run given twice (the same run keys in two files) is an
    error naming both."""
    rows = []
    where: dict[tuple, str] = {}
    for given in paths:
        info_path, info = _read_info(given)
        keys = info["run_keys"]
        claim_run(where, tuple(str(keys[k]) for k in RUN_KEYS), str(info_path))
        row = {k: keys[k] for k in RUN_KEYS}
        row["instances"] = info.get("instances")
        row["folds"] = len(info.get("folds") or [])
        row["checkpoints"] = info.get("checkpoints")
        row.update({c: _number(info.get(c)) for c in COST_COLUMNS})
        rows.append(row)
    if not rows:
        raise InputError("no run", expected="at least one run directory")
    table = pd.DataFrame(rows, columns=list(RUN_COLUMNS))
    for column in ("dataset", "learner", "policy"):
        table[column] = table[column].astype(str)
    for column in ("seed", *SIZE_COLUMNS):
        table[column] = table[column].astype("int64")
    for column in COST_COLUMNS:
        table[column] = table[column].astype("float64")
    return table


# --------------------------------------------------------------------------- the HTML page

#: the total rows' rule beside the pages' shared style (delaycv.study.pages)
_ROWS_STYLE = "tr.total td { font-weight: bold; }"


def _fixed(digits: int):
    def text(value) -> str:
        return f"{value:,.{digits}f}" if math.isfinite(value) else "n/a"

    return text


def _mib(value) -> str:
    return f"{value / MIB:,.1f}" if math.isfinite(value) else "n/a"


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
        "<code>--no-timing</code>)."
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
            ("evaluation wall (s)", "wall_seconds", _fixed(1)),
            *_COST_CELLS,
        ],
    )
    parts = [
        *pages.head(title, intro, _ROWS_STYLE),
        "<h2>Per dataset and learner (sums; peak: the largest)</h2>",
        totals,
        f"<h2>Every run ({len(table)})</h2>",
        every,
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def write_runs(
    paths: Iterable[str | os.PathLike],
    *,
    parquet: str | os.PathLike | None = None,
    csv: str | os.PathLike | None = None,
    html: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """:func:`runs_table` of ``paths`` written (atomically) to the files given: ``parquet``,
    ``csv`` (every column, full precision) and ``html`` (:func:`runs_html`); returns the table."""
    table = runs_table(paths)
    if parquet is not None:
        write_table(table, parquet)
    if csv is not None:
        with atomic_path(csv) as tmp:
            table.to_csv(tmp, index=False)
    if html is not None:
        with atomic_path(html) as tmp:
            tmp.write_text(runs_html(table), encoding="utf-8")
    return table
