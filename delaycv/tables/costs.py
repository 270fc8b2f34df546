"""What the runs cost: the table of runs (one row per run, from its ``run.json``).

:func:`runs_table` reads the ``run.json`` of run directories into one table (:data:`RUN_COLUMNS`):
the run keys, its size (instances, folds, checkpoints), the share of its predictions that came
without a probability (each read as P(1) = 0.5: the engine counts them for every learner, and warns
above :data:`delaycv.protocol.learner_contract.NO_PROBABILITY_WARN`), the evaluation's wall and CPU seconds (the
engine's), and the process's: wall and CPU seconds, peak resident memory and RAM-hours
(:mod:`delaycv.tables.usage` defines them); and what the run warned of (:func:`run_warnings`
gathers a study's, :func:`warnings_summary` says them when the workflow ends). A value the run did not measure (``--no-timing``, a run
written before delaycv measured it) is NaN. :func:`write_runs` writes the table as Parquet and CSV (its page in the workflow's report:
:func:`delaycv.report.runs.runs_html`). The workflow's ``merge_all`` writes
``<results>/runs.parquet``, ``runs.csv`` and ``runs.html``; ``delaycv merge --runs-out`` writes
the table of the runs it merges.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from delaycv.common.atomic import atomic_path
from delaycv.common.errors import InputError
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
#: The share of the run's predictions (every fold's) without a probability (``run.json``'s
#: ``no_probability_share``, else its folds' counts).
SHARE_COLUMN = "no_probability_share"
#: The run's warnings (``run.json``'s ``warnings``: its stream's, its policy's windows against
#: the stream's times, its learner's, ...), one per line; empty when it gave none.
WARNINGS_COLUMN = "warnings"
#: The columns of the runs table, in order.
RUN_COLUMNS = (*RUN_KEYS, *SIZE_COLUMNS, SHARE_COLUMN, *COST_COLUMNS, WARNINGS_COLUMN)


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
        row[SHARE_COLUMN] = _share(info)
        row.update({c: _number(info.get(c)) for c in COST_COLUMNS})
        said = info.get("warnings")
        row[WARNINGS_COLUMN] = "\n".join(map(str, said)) if isinstance(said, list) else ""
        rows.append(row)
    if not rows:
        raise InputError("no run", expected="at least one run directory")
    table = pd.DataFrame(rows, columns=list(RUN_COLUMNS))
    for column in ("dataset", "learner", "policy", WARNINGS_COLUMN):
        table[column] = table[column].astype(str)
    for column in ("seed", *SIZE_COLUMNS):
        table[column] = table[column].astype("int64")
    for column in (SHARE_COLUMN, *COST_COLUMNS):
        table[column] = table[column].astype("float64")
    return table


def run_warnings(table: pd.DataFrame) -> list[tuple[str, list[str]]]:
    """The distinct warnings of a runs table (:func:`runs_table`), most frequent first, each with
    its runs (``dataset/learner/seed/policy``, in the table's order)."""
    runs: dict[str, list[str]] = {}
    for row in table.itertuples(index=False):
        said = getattr(row, WARNINGS_COLUMN)
        for text in said.split("\n") if said else ():
            run = "/".join(str(getattr(row, k)) for k in RUN_KEYS)
            runs.setdefault(text, []).append(run)
    return sorted(runs.items(), key=lambda item: -len(item[1]))


def warnings_summary(table: pd.DataFrame, where: str, shown: int = 3) -> list[str]:
    """Lines that tell a study's user its runs warned (none when no run did): how many, where
    they are listed (``where``), and the ``shown`` most frequent warnings with their runs' count
    and first run (the workflow prints them when it ends)."""
    found = run_warnings(table)
    if not found:
        return []
    warned = int((table[WARNINGS_COLUMN] != "").sum())
    kinds = "warning" if len(found) == 1 else "different warnings"
    lines = [f"delaycv: {warned} of {len(table)} runs warned ({len(found)} {kinds}): {where}"]
    for text, runs in found[:shown]:
        more = f" and {len(runs) - 1} more" if len(runs) > 1 else ""
        lines.append(f"  {runs[0]}{more}: {text}")
    if len(found) > shown:
        lines.append(f"  ... {len(found) - shown} more ({where})")
    return lines


def _share(info: dict) -> float:
    """The run's share of predictions without a probability: ``run.json`` says it, or (a run
    written before it did) its folds' counts give it; NaN where neither does."""
    if SHARE_COLUMN in info:
        return _number(info[SHARE_COLUMN])
    folds = info.get("folds") or []
    seen = sum(_number(f.get("seen")) for f in folds if isinstance(f, dict))
    missing = sum(_number(f.get("no_probability")) for f in folds if isinstance(f, dict))
    return missing / seen if seen > 0 else math.nan


def write_runs(
    paths: Iterable[str | os.PathLike],
    *,
    parquet: str | os.PathLike | None = None,
    csv: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """:func:`runs_table` of ``paths`` written (atomically) to the files given: ``parquet`` and
    ``csv`` (every column, full precision); returns the table."""
    table = runs_table(paths)
    if parquet is not None:
        write_table(table, parquet)
    if csv is not None:
        with atomic_path(csv) as tmp:
            table.to_csv(tmp, index=False)
    return table
