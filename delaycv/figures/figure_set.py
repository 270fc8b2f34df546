"""The figure set of a comparison: every figure that applies, per dataset (and estimator).

This module owns :func:`draw_figures`: which of the five figures a dataset gets (learning curves
of :mod:`delaycv.figures.learning`, bias of :mod:`delaycv.figures.bias`, final distributions of
:mod:`delaycv.figures.final`, pairwise heatmap of :mod:`delaycv.figures.pairwise`, sensitivity of
:mod:`delaycv.figures.sensitivity`), their file names, the warnings on what a figure could not
show (logger ``delaycv.figures.figure_set``), and the writing of their files.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from delaycv.common import defaults
from delaycv.common.errors import DelaycvError
from delaycv.figures.bias import bias_curves
from delaycv.figures.final import final_distributions
from delaycv.figures.learning import learning_curves
from delaycv.figures.pairwise import pairwise_heatmap
from delaycv.figures.rows import no_value_reason, policy_order, select_rows
from delaycv.figures.sensitivity import NoPolicyGrid, placement_hint, sensitivity, window_placement
from delaycv.figures.style import save_figure, slug
from delaycv.stats.checkpoints import last_checkpoints

log = logging.getLogger(__name__)


def _sensitivity_figure(
    sub, stem, *, dataset, metric, estimator, effort_scope, windows, policy_specs, say_no_grid
):
    """``(stem, figure)`` of the sensitivity figure, with a warning per policy it cannot place;
    None when the dataset has no grid of windows: with a warning when it has several policies
    and ``say_no_grid``, quietly when it has one (a study of one policy has no window to vary)."""
    if sub["policy"].nunique() < 2:
        return None
    try:
        fig = sensitivity(
            sub,
            dataset=dataset,
            metric=metric,
            estimator=estimator,
            effort_scope=effort_scope,
            windows=windows,
            policy_specs=policy_specs,
        )
    except NoPolicyGrid as err:
        if say_no_grid:
            log.warning("no sensitivity figure: %s", err)
        return None
    order = policy_order(sub["policy"].unique(), policy_specs)
    _, unplaced = window_placement(order, windows, policy_specs)
    for policy, reason in unplaced.items():
        log.warning(
            "%s: policy %s is not on a window axis: %s%s",
            stem,
            policy,
            reason,
            placement_hint({policy: reason}),
        )
    return stem, fig


def _warn_empty_policies(sub, *, dataset, metric, reference, estimator) -> None:
    """A warning per policy with no value of ``metric`` at the last checkpoint (the study goes
    on; the panels of the policy say why they are empty)."""
    drawn = select_rows(sub, reference=reference, estimator=estimator)
    drawn = drawn[drawn["checkpoint"] == drawn["dataset"].map(last_checkpoints(drawn))]
    for policy in policy_order(drawn["policy"].unique()):
        reason = no_value_reason(drawn[drawn["policy"] == policy], metric)
        if reason:
            log.warning(
                "%s: policy %s has no value of %s at the last checkpoint: %s (its panels say so)",
                dataset,
                policy,
                metric,
                reason,
            )


def _has_tests(tests, *, dataset, metric, reference, estimator) -> bool:
    """Whether ``tests`` holds tests of the dataset, metric, reference and estimator."""
    if tests is None:
        return False
    found = select_rows(
        tests, dataset=dataset, metric=metric, reference=reference, estimator=estimator
    )
    return not found.empty


def _x_axis(sub, x: str) -> str:
    """The x axis of a dataset's curves: ``x``, but the stream's positions (``"checkpoint"``)
    where its times are its positions (a stream without times: every checkpoint's time is its
    position), which as dates would all fall on 1 January 1970."""
    if x == "time" and len(sub) and (sub["time"] == sub["checkpoint"]).all():
        return "checkpoint"
    return x


def _dataset_figures(sub, tests, *, dataset, estimator, tail, options) -> list[tuple[str, Figure]]:
    """The figures of one dataset and estimator (``sub``: the dataset's rows), each with its
    file's stem, in drawing order (``one``: what each of them is given: what it draws and the
    words of its title)."""
    metric, reference = options["metric"], options["reference"]
    name = f"{slug(dataset)}_{slug(metric)}"
    one = {
        "dataset": dataset,
        "metric": metric,
        "estimator": estimator,
        "effort_scope": options["effort_scope"],
    }
    figs: list[tuple[str, Figure]] = []
    x = _x_axis(sub, options["x"])
    curves = learning_curves(
        sub,
        tests,
        **one,
        reference=reference,
        x=x,
        baseline=options["baseline"],
        alpha=options["alpha"],
    )
    figs.append((f"learning_curves_{name}_{reference}{tail}", curves))
    if {"observed", "true"} <= set(sub["reference"]):
        figs.append((f"bias_{name}{tail}", bias_curves(sub, **one, x=x)))
    final = final_distributions(sub, **one, reference=reference, seed=options["seed"])
    figs.append((f"final_{name}_{reference}{tail}", final))
    if _has_tests(tests, dataset=dataset, metric=metric, reference=reference, estimator=estimator):
        heatmap = pairwise_heatmap(tests, **one, reference=reference)
        figs.append((f"pairwise_{name}_{reference}{tail}", heatmap))
    elif tests is not None and sub["learner"].nunique() > 1:  # (one learner: no pair to test)
        log.warning(
            "%s: the tests hold no test of %s on %s labels (%s estimator): its learning curves "
            "have no significance strip and it has no pairwise figure (test it: delaycv compare "
            "--metric %s --reference %s)",
            dataset,
            metric,
            reference,
            estimator,
            metric,
            reference,
        )
    drawn = _sensitivity_figure(
        sub,
        f"sensitivity_{name}{tail}",
        **one,
        windows=options["windows"],
        policy_specs=options["policy_specs"],
        say_no_grid=options["say_no_grid"],
    )
    if drawn is not None:
        figs.append(drawn)
    return figs


def draw_figures(
    table: pd.DataFrame,
    tests: pd.DataFrame | None,
    out_dir: str | Path,
    *,
    metric: str,
    reference: str = defaults.FIGURE_REFERENCE,
    estimator: str | None = None,
    effort_scope: str | None = None,
    datasets: Sequence[str] | None = None,
    windows: Mapping[str, str | int] | None = None,
    policy_specs: Mapping[str, object] | None = None,
    baseline: str | None = None,
    alpha: float | None = None,
    x: str = defaults.X_AXIS,
    formats: Sequence[str] = defaults.FORMATS,
    dpi: int = defaults.DPI,
    seed: int = defaults.JITTER_SEED,
    say_no_grid: bool = True,
) -> list[Path]:
    """Draw every figure that applies, per dataset (and estimator), into ``out_dir``.

    Files ``<figure>_<dataset>_<metric>[_<reference>][_<estimator>].<format>`` with figure in
    ``learning_curves`` (always), ``bias`` (when both references are present), ``final``
    (always), ``pairwise`` (when ``tests`` has tests of ``metric``/``reference``) and
    ``sensitivity`` (when some policy grid has two or more windows); the estimator's part only
    when the dataset has several estimators. Each file is written atomically, and the same inputs
    give byte-identical files. A policy that the sensitivity figure cannot put on a window axis
    is named in the figure and logged as a warning (logger ``delaycv.figures.figure_set``), as
    is a dataset of several policies with no sensitivity figure (``say_no_grid``), a policy with
    no value at the last checkpoint, and ``tests`` given without a test of ``metric`` on
    ``reference`` labels (no strip, no pairwise figure).

    Parameters
    ----------
    table : pandas.DataFrame
        The merged per-fold checkpoint table (columns in docs/architecture.md), with a column
        ``metric``.
    tests : pandas.DataFrame or None
        The output of :func:`delaycv.stats.learner_tests.run_tests`, ideally at all checkpoints: the
        significance strip under the learning curves (when it covers more than one checkpoint)
        and the pairwise heatmap. None: neither.
    out_dir : str or pathlib.Path
        The folder the files are written into (created when missing).
    metric : str
        The metric drawn (a column of ``table``, e.g. ``"gmean"``).
    reference : {"observed", "true"}, default ``"observed"``
        The labels the learning curves, the final distributions and the heatmap are scored
        against (the bias and sensitivity figures show both).
    estimator : str, optional
        The estimator whose rows are drawn (``"fading"``, ...); None (default): each estimator of
        the dataset, in its own files.
    effort_scope : str, optional
        The scope of the effort-aware measures (the ``effort_scope`` column of the table:
        ``cumulative``, ``sliding(W)``), which the titles name for such a ``metric`` instead of
        the estimator (:func:`~delaycv.metrics.properties.read_over`); None: unnamed.
    datasets : sequence of str, optional
        The datasets drawn; None (default): every dataset of ``table``. A name that is not in
        ``table`` is an error.
    windows : mapping of str to str or int, optional
        policy -> the waiting window the sensitivity figure puts it at (``{"fast": "7d"}``);
        used as given, and a policy not named is not placed. None (default): the windows of
        ``policy_specs``.
    policy_specs : mapping of str to spec, optional
        policy -> the spec the runs used (the workflow's config, or the runs' ``run.json``): the
        sensitivity figure's windows. None (default): a policy's windows are those its name says
        (``hitl_7d_90d``), and other names are not placed.
    baseline : str, optional
        A learner that the significance strip shows each other learner against (the workflow
        config's ``figures.learner``). None (default): every pair, up to 6, else every learner
        against the first (by name).
    alpha : float, optional
        The significance level of ``tests``, named in the strip's legend; when the strip's tests
        cannot reach it (too few folds or seeds: the smallest attainable p is above it) the
        learning curves say so in their title. None (default): neither.
    x : {"time", "checkpoint"}, default ``"time"``
        The x axis of the learning and bias curves: stream time (dates) or stream position
        (instances).
    formats : sequence of str, default ``("png", "pdf")``
        One file per format of each figure (``"png"``, ``"pdf"``, ``"svg"``).
    dpi : int, default 200
        The resolution of the raster formats.
    seed : int, default 0
        The seed of the sideways jitter of the points of the final distributions.
    say_no_grid : bool, default True
        Whether a dataset of several policies with no grid of windows is a warning (no
        sensitivity figure). The grid does not depend on the metric: a caller that draws several
        metrics says it with one of them (:func:`delaycv.stages.figures.figures`).

    Returns
    -------
    list of pathlib.Path
        The files written, figure by figure, in the order of ``formats``.

    Raises
    ------
    DelaycvError
        ``metric`` is not a column of ``table``, a dataset of ``datasets`` is not in it, or a
        figure cannot be drawn (no rows for the dataset, reference and estimator, an unknown
        ``x``).
    """
    out_dir = Path(out_dir)
    if metric not in table.columns:
        raise DelaycvError(f"metric {metric!r} is not a column of the per-fold table")
    options = {
        "metric": metric,
        "reference": reference,
        "effort_scope": effort_scope,
        "x": x,
        "baseline": baseline,
        "alpha": alpha,
        "seed": seed,
        "windows": windows,
        "policy_specs": policy_specs,
        "say_no_grid": say_no_grid,
    }
    datasets = sorted(table["dataset"].unique()) if datasets is None else list(datasets)
    written: list[Path] = []
    for dataset in datasets:
        sub = select_rows(table, dataset=dataset)
        if sub.empty:
            raise DelaycvError(f"dataset {dataset!r} is not in the per-fold table")
        estimators = sorted(sub["estimator"].unique()) if estimator is None else [estimator]
        for est in estimators:
            tail = f"_{slug(est)}" if len(estimators) > 1 else ""
            figs = _dataset_figures(
                sub, tests, dataset=dataset, estimator=est, tail=tail, options=options
            )
            _warn_empty_policies(
                sub, dataset=dataset, metric=metric, reference=reference, estimator=est
            )
            for stem, fig in figs:
                written.extend(save_figure(fig, out_dir / stem, formats, dpi))
    return written
