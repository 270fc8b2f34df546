"""Figure 1, the learning curves, with the significance strip under each panel.

This module owns :func:`learning_curves` (a metric over stream time per learner: the mean over the
(seed, fold) pairs with a ±1 SD band, one panel per policy) and its significance strip: the
learner pairs it shows (:func:`strip_rows`), its cells (:func:`draw_strip`), their labels
(:func:`strip_labels`) and the smallest p-value its tests can reach (:func:`smallest_p`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from delaycv.common import defaults
from delaycv.common.errors import DelaycvError
from delaycv.figures.rows import (
    fold_stats,
    no_value_reason,
    one_estimator,
    policy_order,
    select_rows,
)
from delaycv.figures.style import (
    MISSING_COLOUR,
    NS_COLOUR,
    SMALL_TEXT,
    date_axis,
    figure_style,
    figure_title,
    figure_width,
    grid_shape,
    learner_handles,
    learner_styles,
    legend,
    mean_band,
    metric_label,
    new_figure,
    panel_note,
    span_of_rows,
    to_dates,
)
from delaycv.metrics.properties import read_over
from delaycv.stats import permutation
from delaycv.stats.checkpoints import more_pairs

#: Height (inches) of one learner pair's row of the significance strip: its label, then its cells.
STRIP_ROW = 0.3
#: Height (inches) of a panel of curves.
CURVE_HEIGHT = 2.4


def strip_rows(
    tests: pd.DataFrame, learners: Sequence[str], baseline: str | None = None, max_pairs: int = 6
) -> list[tuple[str, str]]:
    """The learner pairs shown in a significance strip.

    Parameters
    ----------
    tests : pandas.DataFrame
        Tests with columns ``learner_a`` and ``learner_b``.
    learners : sequence of str
        The learners drawn (a pair with another learner is not shown).
    baseline : str, optional
        The learner the others are shown against when there are more than ``max_pairs`` pairs;
        None: the first of ``learners``.
    max_pairs : int, default 6
        The most pairs shown without a baseline.

    Returns
    -------
    list of tuple of str
        Every pair when there are at most ``max_pairs`` (and no baseline), else each learner
        against ``baseline``; sorted.

    Examples
    --------
    >>> t = pd.DataFrame({"learner_a": ["a", "a", "b"], "learner_b": ["b", "c", "c"]})
    >>> strip_rows(t, ["a", "b", "c"])
    [('a', 'b'), ('a', 'c'), ('b', 'c')]
    >>> strip_rows(t, ["a", "b", "c"], baseline="c")
    [('a', 'c'), ('b', 'c')]
    """
    pairs = sorted({(a, b) for a, b in zip(tests["learner_a"], tests["learner_b"], strict=True)})
    pairs = [(a, b) for a, b in pairs if a in learners and b in learners]
    if baseline is None and len(pairs) <= max_pairs:
        return pairs
    if baseline is None:
        baseline = learners[0]
    return [(a, b) for a, b in pairs if baseline in (a, b)]


def smallest_p(tests: pd.DataFrame) -> float:
    """The smallest p-value any test of ``tests`` could reach.

    Parameters
    ----------
    tests : pandas.DataFrame
        Tests with columns ``n``, ``alternative``, ``exact`` and ``resamples``.

    Returns
    -------
    float
        The smallest over the tests with a pair of
        :func:`delaycv.stats.permutation.smallest_p` (NaN: none).

    Examples
    --------
    >>> t = pd.DataFrame(
    ...     {"n": [4], "alternative": ["two-sided"], "exact": [True], "resamples": [0]}
    ... )
    >>> smallest_p(t)
    0.125
    """
    tests = tests[tests["n"] > 0]  # a row with no pair (no test) attains nothing
    if tests.empty:
        return float("nan")
    floor = permutation.smallest_p(
        tests["n"], tests["exact"], tests["resamples"], tests["alternative"]
    )
    return float(np.min(floor))


def _cell_edges(x: np.ndarray) -> np.ndarray:
    """The edges of the strip's cells around the checkpoints ``x``: each cell reaches halfway to
    its neighbours, the first starts at the first checkpoint and the last ends at the last (no
    cell beyond the curves: a last gap of years, a stream's last commits, would otherwise draw
    half of it past the stream's end)."""
    if len(x) > 1:
        mid = (x[1:] + x[:-1]) / 2
        return np.concatenate([[x[0]], mid, [x[-1]]])
    return np.array([x[0] - 0.5, x[0] + 0.5])


def _strip_row(ax, row: int, sub: pd.DataFrame, styles, x_of) -> None:
    """The cells of one learner pair (its tests ``sub``, by checkpoint) in row ``row``."""
    edges = _cell_edges(x_of(sub))
    colours = [
        styles[w]["color"] if w else (NS_COLOUR if np.isfinite(p) else MISSING_COLOUR)
        for w, p in zip(sub["better"], sub["p_holm"], strict=True)
    ]
    ax.bar(
        edges[:-1],
        0.5,
        width=np.diff(edges),
        bottom=row + 0.46,
        align="edge",
        color=colours,
        linewidth=0,
    )


def draw_strip(ax, tests: pd.DataFrame, pairs, styles, x_of) -> None:
    """Draw a significance strip: one row per learner pair, its label ("a vs b") above its cells.

    Each checkpoint's cell has the colour of the significantly better learner (Holm-adjusted),
    light grey (:data:`~delaycv.figures.style.NS_COLOUR`) when there is no significant difference,
    white when there was no test. The labels take no width from the panel (they sit above the
    cells, not beside them).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The strip's panel.
    tests : pandas.DataFrame
        The tests of one policy (columns ``learner_a``, ``learner_b``, ``checkpoint``,
        ``better``, ``p_holm``).
    pairs : sequence of tuple of str
        The pairs, top to bottom (:func:`strip_rows`).
    styles : mapping
        learner -> its style (:func:`~delaycv.figures.style.learner_styles`).
    x_of : callable
        Tests -> the x values of their checkpoints.
    """
    for row, (a, b) in enumerate(pairs):
        ax.text(
            0.0,
            row + 0.44,
            f"{a} vs {b}",
            transform=ax.get_yaxis_transform(),
            ha="left",
            va="bottom",
            fontsize=SMALL_TEXT,
            color="#333333",
        )
        sub = tests[(tests["learner_a"] == a) & (tests["learner_b"] == b)].sort_values("checkpoint")
        if not sub.empty:
            _strip_row(ax, row, sub, styles, x_of)
    ax.set_yticks([])
    ax.set_ylim(len(pairs), 0)
    ax.grid(False)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)


def strip_labels(ax) -> list[str]:
    """The learner pairs of a strip drawn by :func:`draw_strip`, top to bottom.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The strip's panel.

    Returns
    -------
    list of str
        ``"a vs b"`` per row.
    """
    return [t.get_text() for t in ax.texts if " vs " in t.get_text()]


@dataclass
class _Curves:
    """What the learning curves of one dataset, reference and estimator draw."""

    data: pd.DataFrame  # the per-fold rows
    estimator: str
    policies: list[str]
    learners: list[str]
    styles: dict[str, dict]
    agg: pd.DataFrame  # mean and SD by policy, learner and checkpoint
    tests: pd.DataFrame | None  # the tests of the strip (None: no strip)
    strip_pairs: dict[str, list[tuple[str, str]]]  # policy -> the pairs of its strip
    x_of: Callable[[pd.DataFrame], np.ndarray]

    @property
    def n_strip(self) -> int:
        """The rows of the tallest strip (0: no strip)."""
        return max((len(p) for p in self.strip_pairs.values()), default=0)


def _curves(table, tests, *, dataset, metric, reference, estimator, x, baseline) -> _Curves:
    """The rows, learners, summaries and strip pairs of the learning curves."""
    if x not in ("time", "checkpoint"):
        raise DelaycvError(f"x {x!r} is unknown (expected 'time' or 'checkpoint')")
    estimator = one_estimator(select_rows(table, dataset=dataset), estimator)
    data = select_rows(table, dataset=dataset, reference=reference, estimator=estimator)
    if data.empty:
        raise DelaycvError(
            f"no rows for dataset {dataset!r}, reference {reference!r}, estimator {estimator!r}"
        )
    policies = policy_order(data["policy"].unique())
    learners = sorted(data["learner"].unique())
    if tests is not None and not tests.empty:
        tests = select_rows(
            tests, dataset=dataset, reference=reference, estimator=estimator, metric=metric
        )
    show_strip = tests is not None and tests["checkpoint"].nunique() > 1
    strip_pairs = {}
    if show_strip:
        for policy in policies:
            strip_pairs[policy] = strip_rows(tests[tests["policy"] == policy], learners, baseline)

    def x_of(frame):
        return to_dates(frame["time"]) if x == "time" else frame["checkpoint"].to_numpy(float)

    return _Curves(
        data=data,
        estimator=estimator,
        policies=policies,
        learners=learners,
        styles=learner_styles(learners),
        agg=fold_stats(data, metric, ["policy", "learner", "checkpoint", "time"]),
        tests=tests if show_strip else None,
        strip_pairs=strip_pairs,
        x_of=x_of,
    )


def _curve_panel(ax, curves: _Curves, policy: str, metric: str, first_column: bool) -> None:
    """The curves of one policy in ``ax``, its title and y label (or a note on why it is empty)."""
    agg = curves.agg
    for learner in curves.learners:
        cur = agg[(agg["policy"] == policy) & (agg["learner"] == learner)]
        if cur.empty:
            continue
        mean_band(ax, curves.x_of(cur), cur, curves.styles[learner])
    reason = no_value_reason(curves.data[curves.data["policy"] == policy], metric)
    if reason:
        panel_note(ax, reason)
    ax.set_title(f"policy {policy}")
    if first_column:
        ax.set_ylabel(metric_label(metric))
    else:
        ax.tick_params(labelleft=False)


def _draw_panels(fig: Figure, curves: _Curves, metric: str, rows: int, cols: int) -> list:
    """A panel per policy (and its strip under it); returns the bottom panel of each policy."""
    n_strip = curves.n_strip
    strip_h = STRIP_ROW * n_strip + 0.05 if n_strip else 0.0
    # a grid row of curves, then (with a strip) a grid row of strips under them
    per = 2 if n_strip else 1
    grid = fig.add_gridspec(per * rows, cols, height_ratios=[CURVE_HEIGHT, strip_h][:per] * rows)
    first = None  # every curve panel shares the first one's axes (same x and y limits)
    bottoms = []
    for i, policy in enumerate(curves.policies):
        r, c = i // cols, i % cols
        ax = fig.add_subplot(grid[per * r, c], sharex=first, sharey=first)
        strip_ax = fig.add_subplot(grid[per * r + 1, c], sharex=ax) if n_strip else None
        first = first if first is not None else ax
        _curve_panel(ax, curves, policy, metric, i % cols == 0)
        bottoms.append(strip_ax if strip_ax is not None else ax)
        if strip_ax is not None:
            ax.tick_params(labelbottom=False)
            tests = curves.tests
            pairs = curves.strip_pairs[policy]
            draw_strip(
                strip_ax, tests[tests["policy"] == policy], pairs, curves.styles, curves.x_of
            )
    return bottoms


def _strip_handles(alpha: float | None) -> list:
    """The legend's entries of the significance strip."""
    level = f", α = {alpha:g}" if alpha is not None else ""
    return [
        Patch(facecolor=NS_COLOUR, label=f"strip: no significant\ndifference (Holm{level})"),
        Patch(
            facecolor="none",
            edgecolor="none",
            label="strip colour: the\nsignificantly better learner",
        ),
    ]


def _curves_title(curves: _Curves, dataset, metric, reference, alpha, effort_scope) -> str:
    """The title, with a note when no difference of the strip can be significant at ``alpha``."""
    over = read_over(metric, curves.estimator, effort_scope)
    title = f"{dataset}: {metric} on {reference} labels ({over})"
    if curves.n_strip and alpha is not None:
        floor = smallest_p(curves.tests)
        if floor > alpha:
            repeated = bool(curves.tests.get("n_duplicates", pd.Series(dtype=int)).gt(0).any())
            title += (
                f"\nnote: with these pairs the smallest attainable p is {floor:.3g} > α = "
                f"{alpha:g}; no difference can be significant ({more_pairs(repeated)})"
            )
    return title


def learning_curves(
    table: pd.DataFrame,
    tests: pd.DataFrame | None = None,
    *,
    dataset: str,
    metric: str,
    reference: str = defaults.FIGURE_REFERENCE,
    estimator: str | None = None,
    effort_scope: str | None = None,
    x: str = defaults.X_AXIS,
    baseline: str | None = None,
    alpha: float | None = None,
) -> Figure:
    """Figure 1: ``metric`` over the stream per learner, one panel per policy.

    Each learner's line is the mean over the (seed, fold) pairs, with a ±1 SD band; all panels
    share one y axis (shared limits, so that panels compare at a glance). Under each panel, when
    ``tests`` covers more than one checkpoint, a strip per learner pair (:func:`strip_rows`)
    coloured by the significantly better learner (:func:`draw_strip`).

    Parameters
    ----------
    table : pandas.DataFrame
        The merged per-fold checkpoint table, with a column ``metric``.
    tests : pandas.DataFrame, optional
        The output of ``delaycv.stats.learner_tests.run_tests(checkpoints="all")``: the strip. None:
        no strip.
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
    x : {"time", "checkpoint"}, default ``"time"``
        The x axis: stream time (dates) or stream position (instances).
    baseline : str, optional
        The learner the strip shows the others against (:func:`strip_rows`).
    alpha : float, optional
        The tests' significance level, named in the legend; when the strip's tests cannot reach
        it, the title says so.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    DelaycvError
        An unknown ``x``, no rows for the dataset, reference and estimator, or several
        estimators and none named.
    """
    curves = _curves(
        table,
        tests,
        dataset=dataset,
        metric=metric,
        reference=reference,
        estimator=estimator,
        x=x,
        baseline=baseline,
    )
    rows, cols = grid_shape(len(curves.policies))
    strip_h = STRIP_ROW * curves.n_strip + 0.05 if curves.n_strip else 0.0
    axes_style, context = figure_style()
    with axes_style, context:
        fig = new_figure(figure_width(cols), (CURVE_HEIGHT + strip_h + 0.45) * rows + 1.4)
        bottoms = _draw_panels(fig, curves, metric, rows, cols)
        span_of_rows(fig.axes, curves.x_of(curves.data))
        if x == "time":  # the panels share their x axis: its ticks are chosen once, for all
            date_axis(bottoms[0])
        for bottom in bottoms:
            bottom.set_xlabel(
                "stream time (date)" if x == "time" else "stream position (instances)"
            )
        handles = learner_handles(curves.styles, curves.learners)
        if curves.n_strip:
            handles += _strip_handles(alpha)
        legend(fig, handles, "learner")
        title = _curves_title(curves, dataset, metric, reference, alpha, effort_scope)
        figure_title(fig, title)
    return fig
