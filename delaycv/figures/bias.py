"""Figure 2, the bias of realistic evaluation over the stream.

This module owns :func:`bias_curves`: the observed-label estimate minus the true-label value of a
metric over stream time, per learner (mean over the (seed, fold) pairs, ±1 SD), one panel per
policy; where the table has the corrected reference, what the correction leaves of it (corrected
estimate minus true-label value, the mean: a dotted line of the learner's colour).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from delaycv.common import defaults
from delaycv.figures.rows import (
    fold_stats,
    no_value_reason,
    one_estimator,
    policy_order,
    select_rows,
)
from delaycv.figures.style import (
    date_axis,
    figure_style,
    figure_title,
    figure_width,
    grid_shape,
    learner_handles,
    learner_styles,
    legend,
    mean_band,
    new_figure,
    panel_note,
    span_of_rows,
    to_dates,
)
from delaycv.metrics.properties import has_direction, higher_is_better, read_over
from delaycv.stats.bias import bias_table

#: The y axis spans at least this much (in the metric's units) around 0: a bias that is 0 up to
#: floating-point rounding (1e-16, the corrected reference under ideal) is drawn flat, not
#: stretched over the whole panel.
MIN_SPAN = 0.02


def _at_least_min_span(ax) -> None:
    """Widen the (shared) y axis to :data:`MIN_SPAN` around its middle when it spans less."""
    low, high = ax.get_ylim()
    if high - low < MIN_SPAN:
        middle = 0.0 if low <= 0.0 <= high else (low + high) / 2
        ax.set_ylim(middle - MIN_SPAN / 2, middle + MIN_SPAN / 2)


def _bias_panel(ax, *, policy, bias, agg, left, rows_, learners, styles, metric, x) -> None:
    """The bias of one policy: the zero line, a line and band per learner, a dotted line per
    learner of what the correction leaves (``left``, None: no corrected rows), the panel's
    labels."""
    ax.axhline(0.0, color="#444444", lw=0.8)
    if not np.isfinite(bias.loc[bias["policy"] == policy, "bias"].to_numpy(float)).any():
        reason = no_value_reason(rows_[rows_["policy"] == policy], metric)
        panel_note(ax, reason or f"no observed − true value of {metric}, nothing to draw")
    for learner in learners:
        cur = agg[(agg["policy"] == policy) & (agg["learner"] == learner)]
        xs = to_dates(cur["time"]) if x == "time" else cur["checkpoint"].to_numpy(float)
        mean_band(ax, xs, cur, styles[learner])
        if left is None:
            continue
        cur = left[(left["policy"] == policy) & (left["learner"] == learner)]
        xs = to_dates(cur["time"]) if x == "time" else cur["checkpoint"].to_numpy(float)
        ax.plot(xs, cur["mean"], color=styles[learner]["color"], linestyle=":", lw=1.4)
    ax.set_title(f"policy {policy}")


def bias_curves(
    table: pd.DataFrame,
    *,
    dataset: str,
    metric: str,
    estimator: str | None = None,
    effort_scope: str | None = None,
    x: str = defaults.X_AXIS,
) -> Figure:
    """Figure 2: the bias of realistic evaluation, ``observed - true`` of ``metric`` over the
    stream per learner (mean over (seed, fold) ± 1 SD), one panel per policy.

    Parameters
    ----------
    table : pandas.DataFrame
        The merged per-fold checkpoint table, with both references and a column ``metric``.
    dataset : str
        The dataset drawn.
    metric : str
        The metric drawn.
    estimator : str, optional
        The estimator drawn; None: the only one of the dataset.
    effort_scope : str, optional
        The scope of the effort-aware measures (the fold table's ``effort_scope`` column:
        ``cumulative``, ``sliding(W)``), which the title names for such a ``metric`` instead
        of the estimator (:func:`~delaycv.metrics.properties.read_over`); None: unnamed.
    x : {"time", "checkpoint"}, default ``"time"``
        The x axis: stream time (dates) or stream position (instances).

    Returns
    -------
    matplotlib.figure.Figure
    """
    estimator = one_estimator(select_rows(table, dataset=dataset), estimator)
    rows_ = select_rows(table, dataset=dataset, estimator=estimator)
    bias = bias_table(rows_, metric)
    policies = policy_order(bias["policy"].unique())
    learners = sorted(bias["learner"].unique())
    styles = learner_styles(learners)
    agg = fold_stats(bias, "bias", ["policy", "learner", "checkpoint", "time"])
    left, no_left = None, False
    if "corrected" in set(rows_["reference"]):
        corrected = bias_table(rows_, metric, "corrected")
        left = fold_stats(corrected, "bias", ["policy", "learner", "checkpoint", "time"])
        if not np.isfinite(left["mean"].to_numpy(float)).any():  # (popt: none to draw)
            left, no_left = None, True
    rows, cols = grid_shape(len(policies))
    axes_style, context = figure_style()
    with axes_style, context:
        fig = new_figure(figure_width(cols), 2.7 * rows + 1.4)
        # one time axis for all panels (the same limits and ticks), as one y axis
        axes = fig.subplots(rows, cols, squeeze=False, sharex=True, sharey=True)
        for i, policy in enumerate(policies):
            ax = axes[i // cols][i % cols]
            _bias_panel(
                ax,
                policy=policy,
                bias=bias,
                agg=agg,
                left=left,
                rows_=rows_,
                learners=learners,
                styles=styles,
                metric=metric,
                x=x,
            )
            if i % cols == 0:
                ax.set_ylabel(f"observed − true {metric}")
            # every panel keeps its tick labels: the panel below may be absent
            ax.tick_params(labelbottom=True)
            ax.set_xlabel("stream time (date)" if x == "time" else "stream position (instances)")
        xs = to_dates(rows_["time"]) if x == "time" else rows_["checkpoint"].to_numpy(float)
        span_of_rows(axes.ravel()[: len(policies)], xs)
        if x == "time" and policies:
            date_axis(axes[0][0])
        _at_least_min_span(axes[0][0])
        for j in range(len(policies), rows * cols):
            axes[j // cols][j % cols].set_visible(False)
        handles = learner_handles(styles, learners)
        if left is not None:
            handles.append(
                Line2D([], [], color="#555555", linestyle=":", label="corrected − true (mean)")
            )
        legend(fig, handles, "learner")
        if not has_direction(metric):
            direction = "above 0: observed higher; no direction"
        elif higher_is_better(metric):
            direction = "above 0: optimistic"
        else:
            direction = "below 0: optimistic"
        over = read_over(metric, estimator, effort_scope)
        title = (
            f"{dataset}: bias of realistic evaluation in {metric}\n"
            f"(observed-label estimate − true-label value; {direction}; {over})"
        )
        if no_left:
            title += f"\nno corrected − true line: the corrected reference has no value of {metric}"
        figure_title(fig, title)
    return fig
