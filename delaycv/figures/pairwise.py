"""Figure 4, the pairwise heatmap.

This module owns :func:`pairwise_heatmap`: for each learner pair at one checkpoint, Cliff's delta
(oriented so that + means the row learner is better) and the Holm-adjusted p-value, one panel per
policy.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from delaycv.common import defaults
from delaycv.common.errors import DelaycvError
from delaycv.figures.rows import one_estimator, policy_order, select_rows
from delaycv.figures.style import (
    SMALL_TEXT,
    figure_style,
    figure_title,
    figure_width,
    grid_shape,
    new_figure,
    panel_note,
)
from delaycv.metrics.properties import has_direction, higher_is_better, read_over


def _p_text(p: float) -> str:
    """A Holm-adjusted p-value as a cell reads it."""
    return "p n/a" if not np.isfinite(p) else ("p<0.001" if p < 0.001 else f"p={p:.3f}")


def _cells(tests: pd.DataFrame, learners: list[str], sign: float):
    """The oriented deltas, texts and boldness of one policy's cells (``tests``: its tests)."""
    k = len(learners)
    delta = np.full((k, k), np.nan)
    text = np.full((k, k), "", dtype=object)
    bold = np.zeros((k, k), dtype=bool)
    for row in tests.itertuples():
        ia, ib = learners.index(row.learner_a), learners.index(row.learner_b)
        d = sign * row.cliffs_delta
        delta[ia, ib], delta[ib, ia] = d, -d
        ptxt = _p_text(row.p_holm)
        star = "*" if row.significant else ""
        for r, c, v in ((ia, ib, d), (ib, ia, -d)):
            text[r, c] = f"{v + 0.0:+.2f}{star}\n{ptxt}" if np.isfinite(v) else ptxt
            bold[r, c] = bool(row.significant)
    return delta, text, bold


def _write_cells(ax, delta, text, bold, small: float) -> None:
    """Each cell's text (a dash on the diagonal), white on the darkest colours."""
    k = len(delta)
    for r in range(k):
        for c in range(k):
            if r == c:
                ax.text(c, r, "—", ha="center", va="center", color="#777777")
                continue
            v = delta[r, c]
            dark = np.isfinite(v) and abs(v) > 0.6
            ax.text(
                c,
                r,
                text[r, c],
                ha="center",
                va="center",
                fontsize=small,
                color="white" if dark else "black",
                fontweight="bold" if bold[r, c] else "normal",
            )


def _heat_panel(ax, tests: pd.DataFrame, *, policy, learners, sign, small, first_column):
    """The heatmap of one policy (``tests``: its tests); returns its image. Its cells need not be
    square: the panel fills the space the layout gives it, so that no title overprints another."""
    k = len(learners)
    delta, text, bold = _cells(tests, learners, sign)
    image = ax.imshow(delta, cmap="PuOr_r", vmin=-1, vmax=1, aspect="auto")
    _write_cells(ax, delta, text, bold, small)
    if not np.isfinite(delta).any():  # no test in the panel: say why
        notes = [n for n in tests["note"] if n] if ("note" in tests) else []
        panel_note(ax, notes[0] if notes else "no test: no pair of values")
    ax.set_xticks(range(k), learners, rotation=30, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(k), learners if first_column else [])
    ax.set_xlabel("column learner")
    ax.set_ylabel("row learner" if first_column else "")
    ax.set_title(f"policy {policy}")
    ax.xaxis.set_minor_locator(NullLocator())
    return image


def _heat_tests(tests, *, dataset, metric, reference, estimator, checkpoint):
    """The tests drawn, their estimator and checkpoint."""
    data = select_rows(tests, dataset=dataset, metric=metric, reference=reference)
    estimator = one_estimator(data, estimator)
    data = data[data["estimator"] == estimator]
    if data.empty:
        raise DelaycvError(
            f"no tests for dataset {dataset!r}, metric {metric!r}, reference {reference!r}"
        )
    checkpoint = int(data["checkpoint"].max()) if checkpoint is None else int(checkpoint)
    return data[data["checkpoint"] == checkpoint], estimator, checkpoint


def _heat_layout(n_policies: int, learners: list[str]):
    """``(rows, cols, width, height, text size)`` of the heatmaps: two panels side by side while
    their cells stay wide enough for their text, else one."""
    k = len(learners)
    rows, cols = grid_shape(n_policies) if k <= 4 else (n_policies, 1)
    width = figure_width(cols)
    label_w = min(1.8, 0.075 * max(len(name) for name in learners) + 0.3)  # the row labels
    cell = min(0.95, (width / cols - label_w - 0.5) / k)
    small = SMALL_TEXT if cell >= 0.55 else SMALL_TEXT - 0.5
    return rows, cols, width, (cell * k + label_w + 0.5) * rows + 1.5, small


def pairwise_heatmap(
    tests: pd.DataFrame,
    *,
    dataset: str,
    metric: str,
    reference: str = defaults.FIGURE_REFERENCE,
    estimator: str | None = None,
    effort_scope: str | None = None,
    checkpoint: int | None = None,
) -> Figure:
    """Figure 4: Cliff's delta and the Holm-adjusted p-value of each learner pair at one
    checkpoint, one panel per policy.

    The colour is Cliff's delta oriented so that + means the row learner is better (by the
    metric's direction), and the cell reads δ and the Holm-adjusted p-value (bold with * when
    significant).

    Parameters
    ----------
    tests : pandas.DataFrame
        The output of :func:`delaycv.stats.learner_tests.run_tests`.
    dataset : str
        The dataset drawn.
    metric : str
        The metric drawn.
    reference : {"observed", "true"}, default ``"observed"``
        The labels the metric is scored against.
    estimator : str, optional
        The estimator drawn; None: the only one of the tests.
    effort_scope : str, optional
        The scope of the effort-aware measures (the fold table's ``effort_scope`` column:
        ``cumulative``, ``sliding(W)``), which the title names for such a ``metric`` instead
        of the estimator (:func:`~delaycv.metrics.properties.read_over`); None: unnamed.
    checkpoint : int, optional
        The checkpoint drawn; None: the last of the tests.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    DelaycvError
        No tests for the dataset, metric and reference.
    """
    data, estimator, checkpoint = _heat_tests(
        tests,
        dataset=dataset,
        metric=metric,
        reference=reference,
        estimator=estimator,
        checkpoint=checkpoint,
    )
    policies = policy_order(data["policy"].unique())
    learners = sorted(set(data["learner_a"]) | set(data["learner_b"]))
    directed = has_direction(metric)  # without a direction: + = the row learner is higher
    sign = 1.0 if not directed or higher_is_better(metric) else -1.0
    rows, cols, width, height, small = _heat_layout(len(policies), learners)
    _, context = figure_style()
    with sns.axes_style("white"), context:
        fig = new_figure(width, height)
        axes = fig.subplots(rows, cols, squeeze=False)
        image = None
        for i, policy in enumerate(policies):
            image = _heat_panel(
                axes[i // cols][i % cols],
                data[data["policy"] == policy],
                policy=policy,
                learners=learners,
                sign=sign,
                small=small,
                first_column=i % cols == 0,
            )
        for j in range(len(policies), rows * cols):
            axes[j // cols][j % cols].set_visible(False)
        bar = fig.colorbar(
            image,
            ax=axes.ravel().tolist(),
            orientation="horizontal",
            location="bottom",
            shrink=0.6,
            aspect=40,
            # (a fraction of the panels' height: about 0.4 inches, whatever their number)
            pad=0.4 / height,
        )
        bar.set_label(
            "Cliff's δ, oriented: + = the row learner is "
            + ("better" if directed else f"higher ({metric} has no direction)")
        )
        head = f"{dataset}: pairwise tests of {metric} on {reference} labels at checkpoint {checkpoint}"
        over = read_over(metric, estimator, effort_scope)
        cells = f"(cell: Cliff's δ and Holm-adjusted permutation p; * significant; {over})"
        figure_title(fig, f"{head}\n{cells}")
    return fig
