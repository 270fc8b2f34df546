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
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from delaycv.common.atomic import atomic_dir, temporary
from delaycv.common.choices import FIGURE_FORMATS
from delaycv.common.errors import InputError
from delaycv.figures.contrasts import draw_contrast_figures
from delaycv.figures.figure_set import draw_figures
from delaycv.stages._tables import read_merged
from delaycv.tables.results import read_table


def figures(
    merged: str | Path,
    out: str | Path,
    *,
    tests: str | Path | None = None,
    contrasts: str | Path | None = None,
    metrics: str | Sequence[str] = "gmean",
    reference: str = "true",
    learner: str | None = None,
    baseline: str | None = None,
    estimator: str | None = None,
    datasets: Sequence[str] | None = None,
    windows: Mapping[str, str | int] | None = None,
    policy_specs: Mapping[str, object] | None = None,
    alpha: float | None = None,
    x: str = "time",
    formats: Sequence[str] = FIGURE_FORMATS,
    dpi: int = 200,
    seed: int = 0,
    replace: bool = True,
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
    tests
        A table of learner tests (``strip.parquet``: at every checkpoint, the significance strip),
        or ``None`` (no strip).
    contrasts
        A table of policy contrasts (``contrasts.parquet``): their figures too; or ``None``.
    metrics
        One metric or a list (a set of figures each).
    reference, learner, baseline, estimator, datasets, windows, policy_specs, alpha, x, formats, dpi, seed
        As :func:`delaycv.figures.figure_set.draw_figures` takes them (the workflow's ``figures``
        section; ``alpha`` its ``tests.alpha``, ``policy_specs`` the specs of its policies).

    Returns
    -------
    list of pathlib.Path
        The files written, in ``out``.
    """
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    table = read_merged(merged, metrics)
    for what, name in (("strip's baseline", baseline), ("strip's learner", learner)):
        if name is not None and name not in set(table["learner"]):
            raise InputError(  # (it drew no strip without a word)
                f"the {what} {name!r} is not a learner of the table",
                path=str(merged),
                expected="one of " + ", ".join(sorted(map(str, table["learner"].unique()))),
            )
    strip = read_table(tests) if tests is not None else None
    contrast_table = read_table(contrasts) if contrasts is not None else None
    out = Path(out)
    options = {
        "reference": reference,
        "estimator": estimator,
        "datasets": datasets,
        "windows": windows,
        "policy_specs": policy_specs,
        "baseline": baseline,
        "learner": learner,
        "alpha": alpha,
        "x": x,
        "formats": formats,
        "dpi": dpi,
        "seed": seed,
    }

    def draw(folder: Path) -> list[Path]:
        return _draw(folder, table, strip, contrast_table, metrics, options)

    if replace:
        return _draw_replacing(out, draw)
    return _draw_adding(out, draw)


def _draw(
    folder: Path,
    table: pd.DataFrame,
    strip: pd.DataFrame | None,
    contrast_table: pd.DataFrame | None,
    metrics: list[str],
    options: dict,
) -> list[Path]:
    """Draw the figure set of each metric (and, with a contrasts table, its contrast figures)
    into ``folder``; return the files drawn. ``options``: the keywords of
    :func:`delaycv.figures.figure_set.draw_figures` but ``metric``."""
    written = []
    for metric in metrics:
        written += draw_figures(table, strip, folder, metric=metric, **options)
        if contrast_table is not None:
            written += draw_contrast_figures(
                contrast_table,
                folder,
                metric=metric,
                windows=options["windows"],
                specs=options["policy_specs"],
                formats=options["formats"],
                dpi=options["dpi"],
            )
    return written


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
