"""What several stages share: reading a merged table for its metrics, and the scope of its
effort-aware measures (not a stage: its name begins with an underscore, so
:func:`delaycv.study.digests.stage_names` does not list it)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from delaycv.common.errors import InputError
from delaycv.common.words import did_you_mean
from delaycv.metrics import METRICS
from delaycv.metrics.effort_names import EFFORT_METRICS, EFFORT_SCOPE_COLUMN
from delaycv.metrics.properties import KAPPA_METRICS
from delaycv.stats.paired import KEYS, PAIR, table_columns
from delaycv.tables.results import read_table

#: The columns that name a row of a per-fold table: each row once, none of them empty.
ROW_KEYS = (*KEYS, "learner", *PAIR)

log = logging.getLogger(__name__)


def _check_metrics_there(path: str | Path, metrics: Sequence[str]) -> None:
    """Each of ``metrics`` is a column of the table ``path``: else an InputError naming the
    metric, with the table's nearest column (a misspelled name) or why its runs lack it (a
    metric of docs/metrics.md they did not compute). A file that cannot be read is left to
    :func:`read_table`, which names what is wrong with it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(path).names
    except (pa.ArrowInvalid, OSError):  # (read_table's errors name the problem, as it catches)
        return
    for metric in dict.fromkeys(metrics):
        if metric in names:
            continue
        if metric in METRICS or metric in EFFORT_METRICS:
            why = "its runs did not compute it" + (
                " (the effort-aware measures need a stream with an effort)"
                if metric in EFFORT_METRICS
                else ""
            )
        else:
            metric_names = [n for n in names if n in METRICS or n in EFFORT_METRICS]
            why = "no metric has that name" + did_you_mean(metric, metric_names)
        raise InputError(
            f"no metric {metric!r} in the table: {why}",
            path=str(path),
            expected="a metric the table holds (docs/metrics.md)",
        )


def read_merged(path: str | Path, metrics: Sequence[str]) -> pd.DataFrame:
    """The columns of the merged table ``path`` that the tests, rankings and figures of
    ``metrics`` use (:func:`delaycv.stats.paired.table_columns`), checked once for every later
    stage (compare, rank, plot) before any work: a table with rows, each column there, no empty
    key (:data:`ROW_KEYS`), one row per key (a run merged twice), and metrics that are numbers,
    none infinite (NaN is a metric with no value). A kappa (``KAPPA_METRICS``) is infinite where
    its reference classifier's value is 1 ((x - 1)/0, as MOA prints it: the majority class early
    in a stream whose released labels are all 0): such values are read as NaN, with a warning
    naming the column and the count, since a test or a mean cannot use them.

    Raises
    ------
    InputError
        Naming ``path`` and what is wrong: ``no metric 'gmean' in the table: ...``, ``no
        column 'checkpoint'``, ``no rows``, ``column dataset is empty in 48 rows (the first: row
        0)``, ``column gmean holds text, not numbers``, ``column gmean is infinite in 3 rows``,
        ``two rows for one (...)``.

    Examples
    --------
    >>> import tempfile
    >>> t = pd.DataFrame({"dataset": "d", "policy": "p", "estimator": "fading",
    ...     "reference": "true", "checkpoint": [5, 5], "learner": "a", "seed": 1, "fold": 0,
    ...     "time": 5, "gmean": [0.5, 0.6], "evaluated": 5})
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     t.to_parquet(f"{folder}/m.parquet")
    ...     read_merged(f"{folder}/m.parquet", ["gmean"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    delaycv.common.errors.InputError: .../m.parquet: row 1: {'dataset': 'd', 'policy': 'p', 'estimator': 'fading', 'reference': 'true', 'checkpoint': 5, 'learner': 'a', 'seed': 1, 'fold': 0}: two rows for one run, fold, checkpoint and reference (expected one row per fold, checkpoint and reference of each run (merge each run once))
    """
    _check_metrics_there(path, metrics)
    table = read_table(path, table_columns(metrics))
    where = str(path)
    if table.empty:
        raise InputError("no rows", path=where, expected="a merged per-fold table with rows")
    for column in ROW_KEYS:
        empty = table[column].isna().to_numpy()
        if empty.any():
            raise InputError(
                f"column {column} is empty in {int(empty.sum())} rows (the first: row "
                f"{int(np.flatnonzero(empty)[0])})",
                path=where,
                expected="every row's dataset, learner, seed, policy, fold, reference, estimator "
                "and checkpoint",
            )
    for metric in dict.fromkeys(metrics):
        values = table[metric]
        if not (pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)):
            raise InputError(
                f"column {metric} holds {values.dtype} values, not numbers",
                path=where,
                expected="the metric's values (NaN where it has none)",
            )
        infinite = np.isinf(values.to_numpy(dtype=np.float64))
        if not infinite.any():
            continue
        rows = f"{int(infinite.sum())} rows (the first: row {int(np.flatnonzero(infinite)[0])})"
        if metric not in KAPPA_METRICS:
            raise InputError(
                f"column {metric} is infinite in {rows}",
                path=where,
                expected="finite values, or NaN where the metric has none",
            )
        # a kappa (x - r) / (1 - r) whose reference classifier was right on every evaluation so
        # far (r = 1): x/0, undefined as 0/0 is, which the runs write as NaN
        table[metric] = values.mask(infinite)
        log.warning(
            f"{where}: column {metric} is infinite in {rows}: a kappa whose reference "
            "classifier's value is 1 there ((x - 1)/0); read as no value, as NaN (0/0) is, so "
            "the tests, rankings and figures leave those rows out"
        )
    duplicate = table.duplicated(list(ROW_KEYS)).to_numpy()
    if duplicate.any():
        row = int(np.flatnonzero(duplicate)[0])
        raise InputError(
            "two rows for one run, fold, checkpoint and reference",
            path=where,
            location=f"row {row}: {table.loc[table.index[row], list(ROW_KEYS)].to_dict()}",
            expected="one row per fold, checkpoint and reference of each run (merge each run once)",
        )
    return table


def effort_scope_of(paths: Sequence[str | Path], metrics: Sequence[str]) -> str | None:
    """The scope(s) of the effort-aware measures of the merged tables ``paths`` (their
    ``effort_scope`` column, e.g. ``cumulative``), for the pages' headings; None when no metric
    of ``metrics`` is effort-aware or no table has the column."""
    if not set(metrics) & set(EFFORT_METRICS):
        return None
    found: set[str] = set()
    for path in paths:
        try:
            column = read_table(path, [EFFORT_SCOPE_COLUMN])[EFFORT_SCOPE_COLUMN]
        except InputError:
            continue
        found |= {str(v) for v in column.dropna().unique()}
    return ", ".join(sorted(found)) or None


#: why a merged table has no row of a reference
_WHY_ABSENT = {
    "corrected": "its runs were scored without it: evaluation.corrected false, --no-corrected",
}


def absent_references(references: Sequence[str], table: pd.DataFrame) -> tuple[str, ...]:
    """The ``references`` asked for that ``table`` (rows with a column ``reference``) has no
    row of, in the order asked."""
    present = set(table["reference"].unique())
    return tuple(r for r in references if r not in present)


def absent_notes(references: Sequence[str], nothing: str) -> list[str]:
    """A note per reference asked for that the tables have no row of, saying that ``nothing``
    of it is computed and why.

    >>> absent_notes(["corrected"], "no test of it")  # doctest: +NORMALIZE_WHITESPACE
    ['the tables have no row scored against the corrected reference: no test of it (its runs
      were scored without it: evaluation.corrected false, --no-corrected)']
    """
    return [
        f"the tables have no row scored against the {reference} reference: {nothing} "
        f"({_WHY_ABSENT.get(reference, 'its runs were not scored against it')})"
        for reference in references
    ]
