"""The evaluate stage: one run (a stream and its settings) -> a run directory.

:func:`evaluate` is what the workflow's ``evaluate`` rule (``scripts/evaluate.py``) and
``delaycv evaluate`` run: the learner's k folds under the policy (:func:`delaycv.engine.evaluate`),
the stream read chunk by chunk as the run goes, and the run directory written by
:class:`delaycv.tables.run_writer.RunWriter` (the fold table and its summary piece by piece, then
``run.json``; atomic: a run that fails leaves nothing).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from delaycv.data.stream_file import open_stream
from delaycv.engine import evaluate as evaluate_stream
from delaycv.engine import probe_learner
from delaycv.tables.run_writer import RunWriter

#: the steps of writing a run directory, as :func:`evaluate` names them to its ``writing`` hook
STEPS = ("folder", "rows", "tables", "finish")

#: Arrow's variable naming its allocator (``system``, ``mimalloc``, ``jemalloc``)
ARROW_POOL_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"


def use_system_allocator() -> None:
    """Make this evaluate job's Arrow buffers (the stream's chunks, the tables written) come from
    the system's allocator, unless ``ARROW_DEFAULT_MEMORY_POOL`` names one: Arrow's default,
    mimalloc, keeps freed buffers for the process's life, 45 to 80 MiB of a HoeffdingTree run's
    peak memory on git(master), for no gain in its time. The variable is set too, so the
    ``--jobs`` workers started later allocate the same way. The CLI's ``evaluate`` and the
    workflow's evaluate jobs call it first; a program that runs the stage keeps its own
    allocator."""
    if os.environ.get(ARROW_POOL_VARIABLE):
        return
    os.environ[ARROW_POOL_VARIABLE] = "system"
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())


@dataclass
class Run:
    """A run :func:`evaluate` wrote: the engine's result, the rows of its fold table, its folder."""

    result: Any  #: the :class:`delaycv.engine.EvaluationResult` (``info``: run.json's)
    rows: int  #: rows of ``folds.parquet``
    out: Path  #: the run directory

    def summary(self) -> str:
        """What ran, its headline number (:func:`headline`, of
        :data:`delaycv.common.defaults.METRIC`) and what the run directory holds: the closing line
        of ``delaycv evaluate`` and of the workflow's evaluate job's log."""
        from delaycv.common.defaults import METRIC
        from delaycv.tables.results import SUMMARY_FILE, read_table

        info = self.result.info
        keys, folds = info["run_keys"], int(info["specs"]["validation"]["folds"])
        files = ", ".join(sorted(p.name for p in self.out.iterdir()))
        summary = read_table(self.out / SUMMARY_FILE, SUMMARY_COLUMNS)
        return (
            f"{keys['learner']} on {keys['dataset']} under {keys['policy']}, {folds} folds, "
            f"{info['checkpoints']} checkpoints: {headline(summary, METRIC, folds)} -> "
            f"{self.out}/ ({files})"
        )


#: The columns of ``summary.parquet`` that :func:`headline` reads.
SUMMARY_COLUMNS = ("reference", "estimator", "checkpoint", "metric", "n_folds", "mean")


def headline(summary, metric: str, folds: int) -> str:
    """``metric`` against each reference at the run's last checkpoint, the mean over its folds, in
    words (``summary``: the run's ``summary.parquet``).

    A reference whose value some folds lack (no label released by then, a metric undefined there)
    says over how many folds it is the mean; one that no fold has reads n/a.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"reference": ["observed", "true"] * 2, "estimator": "fading",
    ...     "checkpoint": [500, 500, 1000, 1000], "metric": "gmean",
    ...     "n_folds": [10, 10, 10, 10], "mean": [0.5, 0.4, 0.7123, 0.6549]})
    >>> headline(rows, "gmean", 10)
    'gmean observed 0.712, true 0.655 at instance 1,000 (fading estimator; mean of 10 folds)'
    >>> partial = rows.assign(n_folds=[0, 0, 0, 8], mean=[None, None, None, 0.6])
    >>> headline(partial, "gmean", 10).split(" at ")  # doctest: +NORMALIZE_WHITESPACE
    ['gmean observed n/a (no fold has a value), true 0.600 (8 of 10 folds)',
     'instance 1,000 (fading estimator; mean of the folds with a value)']
    """
    rows = summary[summary["metric"] == metric]
    if rows.empty:
        return f"no {metric} in the summary"
    last = rows["checkpoint"].max()
    rows = rows[rows["checkpoint"] == last]
    every = bool((rows["n_folds"] == folds).all())
    values = []
    for row in rows.itertuples():
        if row.n_folds == 0 or row.mean != row.mean:
            values.append(f"{row.reference} n/a (no fold has a value)")
        elif every:
            values.append(f"{row.reference} {row.mean:.3f}")
        else:
            values.append(f"{row.reference} {row.mean:.3f} ({row.n_folds} of {folds} folds)")
    over = (
        f"mean of {folds} fold{'s' if folds != 1 else ''}"
        if every
        else ("mean of the folds with a value")
    )
    estimator = ", ".join(dict.fromkeys(rows["estimator"]))
    return f"{metric} {', '.join(values)} at instance {int(last):,} ({estimator} estimator; {over})"


def evaluate(
    stream: Any,
    settings: Any,
    out: str | os.PathLike,
    *,
    progress: bool = True,
    meter: Any = None,
    export: Any = None,
    extra: dict | None = None,
    writing: Callable[[str], AbstractContextManager] | None = None,
) -> Run:
    """Evaluate ``settings`` (a :class:`~delaycv.protocol.settings.RunSettings`) on ``stream``
    into the run directory ``out``. A throwaway learner first runs the stream's first instances
    (:func:`~delaycv.engine.probe_learner`), so that a learner that cannot run on this stream (a
    parameter river accepts but cannot use, a feature's text it cannot read) fails before any
    work, not at its first label, which may come late in a long run.

    Parameters
    ----------
    stream
        The canonical stream: its path (read chunk by chunk) or an opened stream.
    settings
        The run's settings (:func:`delaycv.protocol.settings.make_settings`, which checks them).
    out
        The run directory (``folds.parquet``, ``summary.parquet``, ``run.json``, ...).
    progress
        Progress lines of the engine (on a terminal: a bar; else a line every few seconds).
    meter
        A :class:`delaycv.tables.usage.Meter` of the process: its figures (CPU time, peak memory,
        RAM-hours) go into ``run.json``, stopped once the tables are written.
    export
        A :class:`delaycv.tables.moa_export.MoaExport`: MOA's files of the run too.
    extra
        Further entries of ``run.json``.
    writing
        Called with each step of :data:`STEPS` that writes files; the context manager it returns
        wraps that step (the CLI turns an ``OSError`` into a message naming what was written).

    Returns
    -------
    Run
        The run's result (its ``info`` is ``run.json``'s) and the rows of its fold table.
    """
    guard = writing if writing is not None else (lambda step: contextlib.nullcontext())
    if isinstance(stream, (str, os.PathLike)):
        stream = open_stream(stream)
    probe_learner(stream, settings.learner)
    extra = dict(extra or {})
    with contextlib.ExitStack() as stack:
        with guard("folder"):  # (beside the run directory, renamed at the end)
            run = stack.enter_context(RunWriter(Path(out)))

        def add(piece) -> None:
            with guard("rows"):
                run.add(piece)

        result = evaluate_stream(
            stream,
            settings,
            observer_factory=export.observer_factory if export is not None else None,
            progress=progress,
            on_rows=add,  # the fold table is written as it comes, not held
        )
        if export is not None:
            extra["moa_export"] = {
                "every": export.every,
                "alpha": export.alpha,
                "folds": export.folds,
            }
        with guard("tables"):
            run.write_tables(result)  # writing the tables is part of the run's cost
        if meter is not None:
            extra.update(meter.stop())
        with guard("finish"):
            run.finish(result, moa_export=export, extra=extra)
    return Run(result=result, rows=run.rows, out=Path(out))
