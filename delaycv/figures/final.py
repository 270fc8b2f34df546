"""Figure 3, the final distributions.

This module owns :func:`final_distributions`: the per-(seed, fold) values of a metric at the last
checkpoint, a box and the points of each learner, one panel per policy.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from delaycv.common import defaults
from delaycv.figures.rows import no_value_reason, one_estimator, policy_order, select_rows
from delaycv.figures.style import (
    boxes_with_points,
    figure_style,
    figure_title,
    figure_width,
    grid_shape,
    learner_styles,
    metric_label,
    new_figure,
    panel_note,
)
from delaycv.metrics.properties import read_over
from delaycv.stats.checkpoints import last_checkpoints


def _final_panel(ax, cur: pd.DataFrame, *, policy, metric, learners, palette, rng, label) -> None:
    """The boxes and points of one policy (``cur``: its rows), or a note on why it is empty."""
    boxes_with_points(ax, cur, "learner", metric, learners, palette, rng)
    reason = no_value_reason(cur, metric)
    if reason:
        panel_note(ax, reason)
    ax.set_title(f"policy {policy}")
    ax.set_xlabel("learner")
    ax.set_ylabel(label)
    if len(learners) > 2:
        for tick in ax.get_xticklabels():
            tick.set_rotation(25)
            tick.set_horizontalalignment("right")


def final_distributions(
    table: pd.DataFrame,
    *,
    dataset: str,
    metric: str,
    reference: str = defaults.FIGURE_REFERENCE,
    estimator: str | None = None,
    effort_scope: str | None = None,
    seed: int = defaults.JITTER_SEED,
) -> Figure:
    """Figure 3: per-(seed, fold) values of ``metric`` at the last checkpoint, a box and the points
    of each learner, one panel per policy (shared y axis).

    The points are spread sideways by a uniform jitter drawn from
    ``numpy.random.default_rng(seed)`` (never the global random state), so that the same table
    and seed draw the same figure.

    Parameters
    ----------
    table : pandas.DataFrame
        The merged per-fold checkpoint table, with a column ``metric``.
    dataset : str
        The dataset drawn.
    metric : str
        The metric drawn.
    reference : {"observed", "true"}, default ``"observed"``
        The labels the metric is scored against.
    estimator : str, optional
        The estimator drawn; None: the only one of the dataset.
    effort_scope : str, optional
        The scope of the effort-aware measures (the fold table's ``effort_scope`` column:
        ``cumulative``, ``sliding(W)``), which the title names for such a ``metric`` instead
        of the estimator (:func:`~delaycv.metrics.properties.read_over`); None: unnamed.
    seed : int, default 0
        The seed of the jitter.

    Returns
    -------
    matplotlib.figure.Figure
    """
    estimator = one_estimator(select_rows(table, dataset=dataset), estimator)
    data = select_rows(table, dataset=dataset, reference=reference, estimator=estimator)
    last = int(last_checkpoints(data).loc[dataset])
    data = data[data["checkpoint"] == last]
    policies = policy_order(data["policy"].unique())
    learners = sorted(data["learner"].unique())
    palette = {lr: s["color"] for lr, s in learner_styles(learners).items()}
    # a panel per policy, two side by side; one column when the learners need the width
    rows, cols = grid_shape(len(policies)) if len(learners) <= 5 else (len(policies), 1)
    rng = np.random.default_rng(seed)
    axes_style, context = figure_style()
    with axes_style, context:
        fig = new_figure(figure_width(cols), 3.1 * rows + 0.9)
        axes = fig.subplots(rows, cols, squeeze=False, sharey=True)
        for i, policy in enumerate(policies):
            _final_panel(
                axes[i // cols][i % cols],
                data[data["policy"] == policy],
                policy=policy,
                metric=metric,
                learners=learners,
                palette=palette,
                rng=rng,
                label=metric_label(metric) if i % cols == 0 else "",
            )
        for j in range(len(policies), rows * cols):
            axes[j // cols][j % cols].set_visible(False)
        n = data.groupby(["policy", "learner"]).size().max()
        over = read_over(metric, estimator, effort_scope)
        figure_title(
            fig,
            f"{dataset}: {metric} on {reference} labels at the last checkpoint\n"
            f"({last} instances; one point per (seed, fold), up to {n} per learner; {over})",
        )
    return fig
