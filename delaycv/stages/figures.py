"""The figures stage: a merged per-fold table and its tests -> a folder of figures.

:func:`figures` is what the workflow's ``figures`` rule (``scripts/figures.py``) and
``delaycv plot`` run: the figures of :func:`delaycv.figures.figure_set.draw_figures` (learning
curves with the significance strip, the bias of realistic evaluation, final distributions,
pairwise effect sizes, sensitivity to the waiting time) for each metric, and with policy
contrasts the figure of the difference to the reference policy
(:func:`delaycv.figures.contrasts.draw_contrast_figures`). The sensitivity and contrast figures
take each policy's windows from its spec (names are labels). Every figure is drawn before any
file is moved into the folder. Warnings (a policy the sensitivity figure cannot place, a dataset
with no sensitivity figure) go to the logger ``delaycv.figures``.

With ``jobs`` > 1 the metrics' figure sets are drawn in that many processes forked from this one
(on Linux; elsewhere in this process): matplotlib draws in one thread, and a figure set takes
seconds. The files are the same (each figure's jitter comes from its own seeded generator).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd

from delaycv.common import interrupt
from delaycv.common.atomic import atomic_dir, temporary
from delaycv.common.bounds import check_size
from delaycv.common.errors import InputError
from delaycv.figures.contrasts import draw_contrast_figures
from delaycv.figures.figure_set import draw_figures
from delaycv.figures.settings import FigureSettings, make_figure_settings
from delaycv.metrics.uncorrected import check_figure_reference
from delaycv.stages._tables import effort_scope_of, read_merged
from delaycv.tables.results import read_table


def figures(
    merged: str | Path,
    out: str | Path,
    settings: FigureSettings | None = None,
    *,
    tests: str | Path | None = None,
    contrasts: str | Path | None = None,
    windows: Mapping[str, str | int] | None = None,
    policy_specs: Mapping[str, object] | None = None,
    replace: bool = True,
    jobs: int = 1,
) -> list[Path]:
    """Draw the figures of the merged per-fold table ``merged`` into the folder ``out``.

    Parameters
    ----------
    merged
        A merged per-fold table (Parquet).
    out
        The figures' folder. ``replace``: the folder becomes the new figures and only them
        (atomically, the workflow's rule); else the files go into it (created if needed, with its
        missing parents) and its other files stay (``delaycv plot``); a failure leaves nothing.
    settings
        What is drawn and how (:class:`~delaycv.figures.settings.FigureSettings`: the
        workflow's ``figures`` section with the tested metrics and ``tests.alpha``, or the
        options of ``delaycv plot``); None: the defaults. A set of figures per metric.
    tests
        A table of learner tests (``strip.parquet``: at every checkpoint, the significance strip),
        or ``None`` (no strip).
    contrasts
        A table of policy contrasts (``contrasts.parquet``): their figures too; or ``None``.
    windows, policy_specs
        The sensitivity and contrast figures' windows of the policies: as given
        (``{policy: window}``), else from each policy's spec (the workflow's policies, or the
        specs in the runs' ``run.json``), else from its name
        (:func:`delaycv.figures.figure_set.draw_figures`).
    jobs
        Processes that draw the metrics' figure sets side by side (module docstring; 1: this
        process alone). The same files whatever the number.

    Returns
    -------
    list of pathlib.Path
        The files written, in ``out``.
    """
    jobs = check_size("jobs", jobs, "key jobs")
    settings = settings if settings is not None else make_figure_settings()
    check_figure_reference(settings.reference, settings.metrics)
    table = read_merged(merged, settings.metrics)
    baseline = settings.baseline
    if baseline is not None and baseline not in set(table["learner"]):
        raise InputError(  # (it drew no strip without a word)
            f"the strip's baseline {baseline!r} is not a learner of the table",
            path=str(merged),
            expected="one of " + ", ".join(sorted(map(str, table["learner"].unique()))),
        )
    strip = read_table(tests) if tests is not None else None
    contrast_table = read_table(contrasts) if contrasts is not None else None
    out = Path(out)

    scope = effort_scope_of([merged], settings.metrics)

    def draw(folder: Path) -> list[Path]:
        return _draw(
            folder, table, strip, contrast_table, settings, windows, policy_specs, jobs, scope
        )

    if replace:
        return _draw_replacing(out, draw)
    return _draw_adding(out, draw)


def _draw(
    folder: Path,
    table: pd.DataFrame,
    strip: pd.DataFrame | None,
    contrast_table: pd.DataFrame | None,
    settings: FigureSettings,
    windows: Mapping[str, str | int] | None,
    policy_specs: Mapping[str, object] | None,
    jobs: int = 1,
    effort_scope: str | None = None,
) -> list[Path]:
    """Draw the figure set of each metric (and, with a contrasts table, its contrast figures)
    into ``folder``, these parts in ``jobs`` processes (:func:`_in_processes`); return the files
    drawn, in the metrics' order. ``effort_scope``: the scope the effort-aware measures' titles
    name."""

    def one(part: tuple[str, str]) -> list[Path]:
        metric, kind = part
        if kind == "contrasts":
            return draw_contrast_figures(
                contrast_table,
                folder,
                metric=metric,
                effort_scope=effort_scope,
                windows=windows,
                specs=policy_specs,
                formats=settings.formats,
                dpi=settings.dpi,
            )
        return draw_figures(
            table,
            strip,
            folder,
            metric=metric,
            reference=settings.reference,
            estimator=settings.estimator,
            effort_scope=effort_scope,
            datasets=settings.datasets,
            windows=windows,
            policy_specs=policy_specs,
            baseline=settings.baseline,
            alpha=settings.alpha,
            x=settings.x,
            formats=settings.formats,
            dpi=settings.dpi,
            seed=settings.seed,
            # a missing grid of windows is said once, not once per metric
            say_no_grid=metric == settings.metrics[0],
        )

    kinds = ("set", "contrasts") if contrast_table is not None else ("set",)
    parts = [(metric, kind) for metric in settings.metrics for kind in kinds]
    return [path for drawn in _in_processes(one, parts, jobs) for path in drawn]


#: what forked workers draw (:func:`_in_processes`): set before they fork, so that they inherit it
#: (the tables, the settings) and nothing is pickled but a part's name and its files' paths
_FORKED: list[Callable] = []


def _forked(part):
    return _FORKED[0](part)


def _worker_init() -> None:
    # Ctrl-C reaches every process of the terminal's group: this one answers it (it ends the
    # workers, interrupt.stop_workers), so that a worker prints no traceback of its own; and a
    # worker forked from a process whose SIGTERM raises (delaycv.common.interrupt) would take the
    # SIGTERM of stop_workers as one task's error and go on to the next: it ends instead
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _in_processes(one: Callable, parts: list, jobs: int) -> list:
    """``[one(p) for p in parts]``, in up to ``jobs`` processes forked from this one (Linux;
    elsewhere, and with one job or one part, in this process), in the parts' order. A worker's
    error is raised here; an error, Ctrl-C or SIGTERM ends the workers at once."""
    workers = min(jobs, len(parts))
    if workers <= 1 or not sys.platform.startswith("linux"):
        return [one(part) for part in parts]
    _FORKED[:] = [one]
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(workers, mp_context=context, initializer=_worker_init) as pool:
            try:
                # the workers start here: a signal acts once each is known to the pool
                interrupt.hold()
                try:
                    futures = [pool.submit(_forked, part) for part in parts]
                finally:
                    interrupt.release()
                return [future.result() for future in futures]
            except BaseException:
                interrupt.stop_workers(pool)
                raise
    finally:
        _FORKED.clear()


def _draw_replacing(out: Path, draw: Callable[[Path], list[Path]]) -> list[Path]:
    """Draw into a new folder that replaces ``out`` as a whole, atomically; return the files in
    ``out``."""
    with atomic_dir(out) as tmp:
        written = draw(tmp)
    return [out / path.name for path in written]


def _draw_adding(out: Path, draw: Callable[[Path], list[Path]]) -> list[Path]:
    """Draw into a temporary folder inside ``out`` (created with its missing parents), then move
    each file into ``out``, whose other files stay; on a failure, remove the folders this call
    created (if still empty). Return the files in ``out``."""
    made = _make_dirs(out)
    done = False
    try:
        with temporary(out / "plot", directory=True) as tmp:  # removed when the block ends
            final = []
            for path in draw(tmp):
                os.replace(path, out / path.name)
                final.append(out / path.name)
        done = True
    finally:
        if not done:  # leave nothing: the folders this call created go too (if still empty)
            for p in reversed(made):
                with contextlib.suppress(OSError):
                    p.rmdir()
    return final


def _make_dirs(path: Path) -> list[Path]:
    """Create ``path`` and its missing parents; return those created, outermost first."""
    made = [p for p in (*reversed(path.parents), path) if not p.exists()]
    path.mkdir(parents=True, exist_ok=True)
    return made
