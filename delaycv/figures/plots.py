"""Figures of a comparison (seaborn on matplotlib's Agg canvas; PNG and PDF).

Every figure is built on a fresh :class:`matplotlib.figure.Figure` (no pyplot state, no global
theme change) with a colour-blind-safe palette (Okabe & Ito) plus a line style per learner, so
lines stay apart in grey-scale print. Titles name dataset, policy, metric and reference; axes
carry units; legends sit outside the data.

1. :func:`learning_curves`: a metric over stream time per learner (mean over the (seed, fold)
   pairs with a ±1 SD band), one panel per policy, with the significance strip under each panel.
2. :func:`bias_curves`: observed-label estimate minus true-label value over stream time.
3. :func:`final_distributions`: per-fold values at the last checkpoint, box and points per learner.
4. :func:`pairwise_heatmap`: Cliff's delta and Holm-adjusted p-values of every learner pair.
5. :func:`sensitivity`: a metric at the last checkpoint against the waiting window.

:func:`draw_figures` draws all that apply and writes them (atomically) to a folder.
"""

from __future__ import annotations

import logging
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator  # noqa: E402

from delaycv.common.atomic import atomic_path  # noqa: E402
from delaycv.common.choices import FIGURE_FORMATS as FORMATS  # noqa: E402
from delaycv.common.errors import DelaycvError  # noqa: E402
from delaycv.metrics.properties import higher_is_better  # noqa: E402
from delaycv.protocol.policy_windows import axis_names, policies_windows, window_table  # noqa: E402
from delaycv.protocol.policy_windows import policy_order as compare_policy_order  # noqa: E402
from delaycv.stats.bias import bias_table  # noqa: E402
from delaycv.stats.checkpoints import RELEASE_COLUMN, last_checkpoints  # noqa: E402

log = logging.getLogger(__name__)

#: Okabe & Ito's colour-blind-safe palette, ordered for white backgrounds (yellow and black last).
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442"]
DASHES = ["-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2))]
NS_COLOUR = "#DDDDDD"
MISSING_COLOUR = "#FFFFFF"
#: The width (inches) of a figure of several panels. The Snakemake report shows a figure about
#: 830 px wide, whatever its size: a figure this wide is shown at 100 px per inch, so that its
#: smallest text (8 pt) is 11 px tall and its titles 14 px. Wider figures would shrink their text.
FIGURE_WIDTH = 8.3
#: Panels side by side at most (two panels of about 4 inches fit FIGURE_WIDTH).
MAX_COLUMNS = 2
PANEL_WIDTH = FIGURE_WIDTH / MAX_COLUMNS
JITTER = 0.18  # half-width of the sideways spread of the points of the final distributions
#: The smallest text of a figure (points): cells of the heatmap, labels of the strip, notes.
SMALL_TEXT = 8.0
_RC = {
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 9.5,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.title_fontsize": 9.5,
}
#: The size of a figure's title (suptitle).
TITLE_SIZE = 11
#: The colour of a note written in a panel (a policy with no value, ...).
NOTE_COLOUR = "#555555"

_COUNTS = {"tp", "fp", "tn", "fn", "classified"}


def metric_label(metric: str) -> str:
    """Axis label of a metric with its unit."""
    if metric in _COUNTS:
        return f"{metric} (instances)"
    if metric in ("brier", "log_loss"):
        return f"{metric} (loss, lower is better)"
    if metric == "info_score":
        return f"{metric} (bits)"
    if metric.startswith("kappa") or metric == "mcc":
        return f"{metric} (-1 to 1)"
    return f"{metric} (fraction)"


def learner_styles(learners: Iterable[str]) -> dict[str, dict]:
    """A colour and a dash pattern for each learner, in the order given."""
    out = {}
    for i, learner in enumerate(dict.fromkeys(learners)):
        out[learner] = {"color": PALETTE[i % len(PALETTE)], "linestyle": DASHES[i % len(DASHES)]}
    return out


def _style():
    return sns.axes_style("whitegrid"), sns.plotting_context("paper", rc=_RC)


def _new_figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, height), layout="constrained")


def _select(table: pd.DataFrame, **equal) -> pd.DataFrame:
    mask = np.ones(len(table), dtype=bool)
    for column, value in equal.items():
        if value is not None:
            mask &= (table[column] == value).to_numpy()
    return table[mask]


def _one_estimator(table: pd.DataFrame, estimator: str | None) -> str:
    if estimator is not None:
        return estimator
    found = sorted(table["estimator"].unique())
    if len(found) != 1:
        raise DelaycvError(f"the table holds estimators {found}; name one (estimator=...)")
    return found[0]


def policy_order(
    policies: Iterable[str], policy_specs: Mapping[str, object] | None = None
) -> list[str]:
    """Policies in reading order: by preset (in the order of :data:`delaycv.protocol.policies.PRESETS`,
    ideal first) and window length as a duration (the windows of their specs in
    ``policy_specs``, else of their names), then the others by name
    (:func:`delaycv.stats.compare.policy_order`, the order of every table)."""
    return compare_policy_order(policies, policy_specs)


def no_value_reason(data: pd.DataFrame, metric: str) -> str:
    """Why ``data`` (the rows of one panel: one policy, at the checkpoints drawn) has no value of
    ``metric`` to draw: its policy released no label (every fold's ``evaluated`` is 0: every
    evaluation pending), else the metric is undefined there. ``""`` when it has a value."""
    values = data[metric].to_numpy(dtype=float) if metric in data else np.array([])
    if np.isfinite(values).any():
        return ""
    if RELEASE_COLUMN in data.columns and len(data) and not (data[RELEASE_COLUMN] > 0).any():
        return (
            "no label released: every evaluation pending "
            "(e.g. a window longer than the stream), nothing to draw"
        )
    return f"no value of {metric} (undefined here), nothing to draw"


def _panel_note(
    ax, text: str, *, y: float = 0.5, x: float = 0.5, ha: str = "center", share: float = 1.0
) -> None:
    """``text`` written in a panel (axes fractions ``x``, ``y``; ``ha`` its alignment), wrapped to
    ``share`` of the panel's width: for a panel that has nothing, or not everything, to show."""
    width = ax.get_position().width * ax.figure.get_figwidth() * share
    lines = textwrap.wrap(text, width=max(20, int(width * 13)))
    ax.text(
        x,
        y,
        "\n".join(lines),
        transform=ax.transAxes,
        ha=ha,
        va="center",
        fontsize=SMALL_TEXT + 0.5,
        color=NOTE_COLOUR,
        bbox={"facecolor": "white", "edgecolor": "#BBBBBB", "alpha": 0.9, "pad": 4},
        zorder=10,
    )


def _note_beside(ax, text: str, at: float, *, y: float = 0.2) -> None:
    """A panel note for a point that is missing at ``at`` on a log x axis whose limits are set:
    on that side of the panel, so that it stands by the empty tick rather than over the data."""
    lo, hi = ax.get_xlim()
    frac = (np.log(at) - np.log(lo)) / (np.log(hi) - np.log(lo))
    if frac >= 0.5:
        _panel_note(ax, text, y=y, x=0.97, ha="right", share=0.62)
    else:
        _panel_note(ax, text, y=y, x=0.03, ha="left", share=0.62)


def _legend(fig: Figure, handles: list, title: str) -> None:
    """The legend below the panels, outside the data, in as many columns as fit."""
    # as many columns as the figure's width holds (a legend wider than the figure is cut off)
    longest = max(
        (len(line) for h in handles for line in str(h.get_label()).split("\n")), default=1
    )
    column = longest * 0.55 * _RC["legend.fontsize"] / 72 + 0.75  # inches: handle, gap, text
    ncol = max(1, min(len(handles), 4, int(fig.get_figwidth() / column)))
    fig.legend(
        handles=handles,
        loc="outside lower center",
        title=title,
        frameon=False,
        ncol=ncol,
        columnspacing=1.4,
        handlelength=2.6,
    )


def _note(fig: Figure, text: str) -> str:
    """``text`` as further lines of a suptitle (:data:`TITLE_SIZE`), wrapped to the figure's
    width."""
    return "\n" + "\n".join(textwrap.wrap(text, width=int(fig.get_figwidth() * 11)))


def _figure_note(fig: Figure, text: str) -> None:
    """``text`` under the panels of ``fig``, wrapped to its width (laid out with the figure, so it
    never covers a panel)."""
    lines = textwrap.wrap(text, width=int(fig.get_figwidth() * 13))
    fig.supxlabel("\n".join(lines), fontsize=SMALL_TEXT + 0.5, color=NOTE_COLOUR)


def _grid(n: int) -> tuple[int, int]:
    cols = max(1, min(n, MAX_COLUMNS))
    return int(np.ceil(n / cols)), cols


def _width(cols: int) -> float:
    """The width of a figure of ``cols`` panel columns: :data:`FIGURE_WIDTH` for a grid, less for
    a single column (its text is then larger still in the report)."""
    return FIGURE_WIDTH if cols > 1 else 6.0


def _dates(seconds: Iterable) -> np.ndarray:
    return mdates.date2num(pd.to_datetime(np.asarray(seconds, dtype=np.int64), unit="s"))


def _date_axis(ax) -> None:
    """Date ticks for ``ax``'s x axis, chosen once for its final limits (call after plotting).

    matplotlib asks an axis's locator for its ticks some thirty times per saved file (layout,
    drawing, each format); the date locator's rule search then took half of a figure's time. The
    ticks are those ``AutoDateLocator`` picks for the limits and their labels those
    ``ConciseDateFormatter`` gives them (offset included), fixed, and the limits with them."""
    auto = mdates.AutoDateLocator(minticks=3, maxticks=6)
    ax.xaxis.set_major_locator(auto)
    lo, hi = ax.get_xlim()  # autoscaled to the data, with the date locator's rules
    ticks = auto()
    concise = mdates.ConciseDateFormatter(auto)
    labels = FixedFormatter(concise.format_ticks(ticks))
    labels.set_offset_string(concise.get_offset())
    ax.set_xlim(lo, hi)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(labels)


def _fold_stats(frame: pd.DataFrame, value: str, by: Sequence[str]) -> pd.DataFrame:
    """Mean, standard deviation (ddof 1) and count of ``value`` over folds/seeds, by ``by``."""
    g = frame.groupby(list(by), sort=True)[value]
    out = g.agg(mean="mean", sd="std", n="count").reset_index()
    out["sd"] = out["sd"].fillna(0.0)
    return out


# --------------------------------------------------------------------------- 1. learning curves


def strip_rows(
    tests: pd.DataFrame, learners: Sequence[str], baseline: str | None = None, max_pairs: int = 6
) -> list[tuple[str, str]]:
    """The learner pairs shown in a significance strip: every pair when there are at most
    ``max_pairs`` (or no baseline), else each learner against ``baseline``."""
    pairs = sorted({(a, b) for a, b in zip(tests["learner_a"], tests["learner_b"], strict=True)})
    pairs = [(a, b) for a, b in pairs if a in learners and b in learners]
    if baseline is None and len(pairs) <= max_pairs:
        return pairs
    if baseline is None:
        baseline = learners[0]
    return [(a, b) for a, b in pairs if baseline in (a, b)]


def _smallest_p(tests: pd.DataFrame) -> float:
    """The smallest p-value any test of ``tests`` could reach: 1/2**n (2/2**n two-sided) when exact,
    1/(R + 1) with R random sign vectors."""
    tests = tests[tests["n"] > 0]  # a row with no pair (no test) attains nothing
    if tests.empty:
        return float("nan")
    two = (tests["alternative"] == "two-sided").to_numpy()
    n = tests["n"].to_numpy(dtype=float)
    exact_floor = np.where(two, 2.0, 1.0) / 2.0**n
    floor = np.where(tests["exact"].to_numpy(bool), exact_floor, 1.0 / (tests["resamples"] + 1.0))
    return float(np.min(floor))


#: Height (inches) of one learner pair's row of the significance strip: its label, then its cells.
STRIP_ROW = 0.3


def _draw_strip(ax, tests: pd.DataFrame, pairs, styles, x_of) -> None:
    """One row per learner pair, its label ("a vs b") above its cells: each checkpoint's cell has
    the colour of the significantly better learner (Holm-adjusted), light grey when there is no
    significant difference, white when there was no test. The labels take no width from the
    panel (they sit above the cells, not beside them)."""
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
        if sub.empty:
            continue
        x = x_of(sub)
        if len(x) > 1:
            mid = (x[1:] + x[:-1]) / 2
            edges = np.concatenate([[x[0] - (mid[0] - x[0])], mid, [x[-1] + (x[-1] - mid[-1])]])
        else:
            edges = np.array([x[0] - 0.5, x[0] + 0.5])
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
    ax.set_yticks([])
    ax.set_ylim(len(pairs), 0)
    ax.grid(False)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)


def strip_labels(ax) -> list[str]:
    """The learner pairs of a strip drawn by :func:`_draw_strip`, top to bottom."""
    return [t.get_text() for t in ax.texts if " vs " in t.get_text()]


def learning_curves(
    table: pd.DataFrame,
    tests: pd.DataFrame | None = None,
    *,
    dataset: str,
    metric: str,
    reference: str = "true",
    estimator: str | None = None,
    x: str = "time",
    baseline: str | None = None,
    alpha: float | None = None,
) -> Figure:
    """Figure 1: ``metric`` over the stream per learner, mean over (seed, fold) ± 1 SD, one panel
    per policy, all panels on one y axis (shared limits, so panels compare at a glance); under each panel, when ``tests`` (from ``run_tests(checkpoints="all")``) covers
    more than one checkpoint, a strip per learner pair (see :func:`strip_rows`) coloured by the
    significantly better learner. ``x``: ``"time"`` (dates) or ``"checkpoint"`` (instances)."""
    if x not in ("time", "checkpoint"):
        raise DelaycvError(f"x {x!r} is unknown (expected 'time' or 'checkpoint')")
    estimator = _one_estimator(_select(table, dataset=dataset), estimator)
    data = _select(table, dataset=dataset, reference=reference, estimator=estimator)
    if data.empty:
        raise DelaycvError(
            f"no rows for dataset {dataset!r}, reference {reference!r}, estimator {estimator!r}"
        )
    policies = policy_order(data["policy"].unique())
    learners = sorted(data["learner"].unique())
    styles = learner_styles(learners)
    agg = _fold_stats(data, metric, ["policy", "learner", "checkpoint", "time"])
    if tests is not None and not tests.empty:
        tests = _select(
            tests, dataset=dataset, reference=reference, estimator=estimator, metric=metric
        )
    show_strip = tests is not None and tests["checkpoint"].nunique() > 1

    def x_of(frame):
        return _dates(frame["time"]) if x == "time" else frame["checkpoint"].to_numpy(float)

    strip_pairs = {}
    if show_strip:
        for policy in policies:
            strip_pairs[policy] = strip_rows(tests[tests["policy"] == policy], learners, baseline)
    n_strip = max((len(p) for p in strip_pairs.values()), default=0)
    rows, cols = _grid(len(policies))
    curve_h = 2.4
    strip_h = STRIP_ROW * n_strip + 0.05 if n_strip else 0.0
    axes_style, context = _style()
    with axes_style, context:
        fig = _new_figure(_width(cols), (curve_h + strip_h + 0.45) * rows + 1.4)
        # a grid row of curves, then (with a strip) a grid row of strips under them
        per = 2 if n_strip else 1
        grid = fig.add_gridspec(per * rows, cols, height_ratios=[curve_h, strip_h][:per] * rows)
        first = None  # every curve panel shares the first one's axes (same x and y limits)
        bottoms = []
        for i, policy in enumerate(policies):
            r, c = i // cols, i % cols
            ax = fig.add_subplot(grid[per * r, c], sharex=first, sharey=first)
            strip_ax = fig.add_subplot(grid[per * r + 1, c], sharex=ax) if n_strip else None
            first = first if first is not None else ax
            for learner in learners:
                cur = agg[(agg["policy"] == policy) & (agg["learner"] == learner)]
                if cur.empty:
                    continue
                xs = x_of(cur)
                st = styles[learner]
                ax.plot(xs, cur["mean"], color=st["color"], linestyle=st["linestyle"], lw=1.4)
                ax.fill_between(
                    xs,
                    cur["mean"] - cur["sd"],
                    cur["mean"] + cur["sd"],
                    color=st["color"],
                    alpha=0.18,
                    lw=0,
                )
            reason = no_value_reason(data[data["policy"] == policy], metric)
            if reason:
                _panel_note(ax, reason)
            ax.set_title(f"policy {policy}")
            if i % cols == 0:
                ax.set_ylabel(metric_label(metric))
            else:
                ax.tick_params(labelleft=False)
            bottom = strip_ax if strip_ax is not None else ax
            bottoms.append(bottom)
            if strip_ax is not None:
                ax.tick_params(labelbottom=False)
                _draw_strip(
                    strip_ax, tests[tests["policy"] == policy], strip_pairs[policy], styles, x_of
                )
        if x == "time":  # the panels share their x axis: its ticks are chosen once, for all
            _date_axis(bottoms[0])
        for bottom in bottoms:
            bottom.set_xlabel(
                "stream time (date)" if x == "time" else "stream position (instances)"
            )
        handles = [
            Line2D(
                [],
                [],
                color=styles[lr]["color"],
                linestyle=styles[lr]["linestyle"],
                lw=1.6,
                label=lr,
            )
            for lr in learners
        ]
        handles.append(Patch(facecolor=PALETTE[0], alpha=0.18, label="band: ±1 SD over folds"))
        if n_strip:
            level = f", α = {alpha:g}" if alpha is not None else ""
            handles.append(
                Patch(facecolor=NS_COLOUR, label=f"strip: no significant\ndifference (Holm{level})")
            )
            handles.append(
                Patch(
                    facecolor="none",
                    edgecolor="none",
                    label="strip colour: the\nsignificantly better learner",
                )
            )
        _legend(fig, handles, "learner")
        title = f"{dataset}: {metric} on {reference} labels ({estimator} estimator)"
        if n_strip and alpha is not None:
            floor = _smallest_p(tests)
            if floor > alpha:
                title += _note(
                    fig,
                    f"note: with these pairs the smallest attainable p is {floor:.3g} > α = "
                    f"{alpha:g}; no difference can be significant (use more folds or seeds)",
                )
        fig.suptitle(title, fontsize=TITLE_SIZE)
    return fig


# --------------------------------------------------------------------------- 2. bias


def bias_curves(
    table: pd.DataFrame, *, dataset: str, metric: str, estimator: str | None = None, x: str = "time"
) -> Figure:
    """Figure 2: the bias of realistic evaluation, ``observed - true`` of ``metric`` over the
    stream per learner (mean over (seed, fold) ± 1 SD), one panel per policy."""
    estimator = _one_estimator(_select(table, dataset=dataset), estimator)
    rows_ = _select(table, dataset=dataset, estimator=estimator)
    bias = bias_table(rows_, metric)
    policies = policy_order(bias["policy"].unique())
    learners = sorted(bias["learner"].unique())
    styles = learner_styles(learners)
    agg = _fold_stats(bias, "bias", ["policy", "learner", "checkpoint", "time"])
    rows, cols = _grid(len(policies))
    axes_style, context = _style()
    with axes_style, context:
        fig = _new_figure(_width(cols), 2.7 * rows + 1.4)
        # one time axis for all panels (the same limits and ticks), as one y axis
        axes = fig.subplots(rows, cols, squeeze=False, sharex=True, sharey=True)
        for i, policy in enumerate(policies):
            ax = axes[i // cols][i % cols]
            ax.axhline(0.0, color="#444444", lw=0.8)
            if not np.isfinite(bias.loc[bias["policy"] == policy, "bias"].to_numpy(float)).any():
                reason = no_value_reason(rows_[rows_["policy"] == policy], metric)
                _panel_note(ax, reason or f"no observed − true value of {metric}, nothing to draw")
            for learner in learners:
                cur = agg[(agg["policy"] == policy) & (agg["learner"] == learner)]
                xs = _dates(cur["time"]) if x == "time" else cur["checkpoint"].to_numpy(float)
                st = styles[learner]
                ax.plot(xs, cur["mean"], color=st["color"], linestyle=st["linestyle"], lw=1.4)
                ax.fill_between(
                    xs,
                    cur["mean"] - cur["sd"],
                    cur["mean"] + cur["sd"],
                    color=st["color"],
                    alpha=0.18,
                    lw=0,
                )
            ax.set_title(f"policy {policy}")
            if i % cols == 0:
                ax.set_ylabel(f"observed − true {metric}")
            # every panel keeps its tick labels: the panel below may be absent
            ax.tick_params(labelbottom=True)
            ax.set_xlabel("stream time (date)" if x == "time" else "stream position (instances)")
        if x == "time" and policies:
            _date_axis(axes[0][0])
        for j in range(len(policies), rows * cols):
            axes[j // cols][j % cols].set_visible(False)
        handles = [
            Line2D(
                [],
                [],
                color=styles[lr]["color"],
                linestyle=styles[lr]["linestyle"],
                lw=1.6,
                label=lr,
            )
            for lr in learners
        ]
        handles.append(Patch(facecolor=PALETTE[0], alpha=0.18, label="band: ±1 SD over folds"))
        _legend(fig, handles, "learner")
        direction = "above 0: optimistic" if higher_is_better(metric) else "below 0: optimistic"
        fig.suptitle(
            f"{dataset}: bias of realistic evaluation in {metric}\n"
            f"(observed-label estimate − true-label value; {direction}; {estimator} estimator)",
            fontsize=TITLE_SIZE,
        )
    return fig


# --------------------------------------------------------------------------- 3. final distributions


def _boxes_with_points(ax, data: pd.DataFrame, x: str, y: str, order, palette, rng) -> None:
    """A box per value of ``x`` (in ``order``, outlined in its ``palette`` colour) and its points
    jittered sideways (``rng``: the figure's seeded generator, so that the file is reproducible).
    Nothing is drawn when no value is finite (seaborn cannot draw such boxes): the caller says why
    in the panel."""
    values = data[y].to_numpy(dtype=float) if len(data) else np.array([])
    if not np.isfinite(values).any():
        ax.set_xticks(range(len(order)), list(order))
        ax.set_xlim(-0.5, len(order) - 0.5)
        return
    sns.boxplot(
        data=data,
        x=x,
        y=y,
        order=order,
        hue=x,
        palette=palette,
        ax=ax,
        width=0.6,
        fill=False,
        showfliers=False,
        linewidth=1.1,
        legend=False,
    )
    for k, name in enumerate(order):
        values = data.loc[data[x] == name, y].to_numpy(dtype=float)
        ax.scatter(
            k + rng.uniform(-JITTER, JITTER, size=len(values)),
            values,
            s=10,
            color=palette[name],
            alpha=0.75,
            linewidths=0,
            zorder=3,
        )


def final_distributions(
    table: pd.DataFrame,
    *,
    dataset: str,
    metric: str,
    reference: str = "true",
    estimator: str | None = None,
    seed: int = 0,
) -> Figure:
    """Figure 3: per-(seed, fold) values of ``metric`` at the last checkpoint, a box and the points
    of each learner, one panel per policy (shared y axis). The points are spread sideways by a
    uniform jitter drawn from ``numpy.random.default_rng(seed)`` (never the global random state),
    so the same table and seed draw the same figure."""
    estimator = _one_estimator(_select(table, dataset=dataset), estimator)
    data = _select(table, dataset=dataset, reference=reference, estimator=estimator)
    last = int(last_checkpoints(data).loc[dataset])
    data = data[data["checkpoint"] == last]
    policies = policy_order(data["policy"].unique())
    learners = sorted(data["learner"].unique())
    styles = learner_styles(learners)
    palette = {lr: s["color"] for lr, s in styles.items()}
    # a panel per policy, two side by side; one column when the learners need the width
    rows, cols = _grid(len(policies)) if len(learners) <= 5 else (len(policies), 1)
    rng = np.random.default_rng(seed)
    axes_style, context = _style()
    with axes_style, context:
        fig = _new_figure(_width(cols), 3.1 * rows + 0.9)
        axes = fig.subplots(rows, cols, squeeze=False, sharey=True)
        for i, policy in enumerate(policies):
            ax = axes[i // cols][i % cols]
            cur = data[data["policy"] == policy]
            _boxes_with_points(ax, cur, "learner", metric, learners, palette, rng)
            reason = no_value_reason(cur, metric)
            if reason:
                _panel_note(ax, reason)
            ax.set_title(f"policy {policy}")
            ax.set_xlabel("learner")
            ax.set_ylabel(metric_label(metric) if i % cols == 0 else "")
            if len(learners) > 2:
                for label in ax.get_xticklabels():
                    label.set_rotation(25)
                    label.set_horizontalalignment("right")
        for j in range(len(policies), rows * cols):
            axes[j // cols][j % cols].set_visible(False)
        n = data.groupby(["policy", "learner"]).size().max()
        fig.suptitle(
            f"{dataset}: {metric} on {reference} labels at the last checkpoint\n"
            f"({last} instances; one point per (seed, fold), up to {n} per learner; {estimator} estimator)",
            fontsize=TITLE_SIZE,
        )
    return fig


# --------------------------------------------------------------------------- 4. pairwise heatmap


def pairwise_heatmap(
    tests: pd.DataFrame,
    *,
    dataset: str,
    metric: str,
    reference: str = "true",
    estimator: str | None = None,
    checkpoint: int | None = None,
) -> Figure:
    """Figure 4: for each learner pair at one checkpoint (default: the last in ``tests``), the colour
    is Cliff's delta oriented so that + means the row learner is better (by the metric's direction),
    and the cell reads δ and the Holm-adjusted p-value (bold with * when significant)."""
    data = _select(tests, dataset=dataset, metric=metric, reference=reference)
    estimator = _one_estimator(data, estimator)
    data = data[data["estimator"] == estimator]
    if data.empty:
        raise DelaycvError(
            f"no tests for dataset {dataset!r}, metric {metric!r}, reference {reference!r}"
        )
    checkpoint = int(data["checkpoint"].max()) if checkpoint is None else int(checkpoint)
    data = data[data["checkpoint"] == checkpoint]
    policies = policy_order(data["policy"].unique())
    learners = sorted(set(data["learner_a"]) | set(data["learner_b"]))
    sign = 1.0 if higher_is_better(metric) else -1.0
    k = len(learners)
    # two panels side by side while their cells stay wide enough for their text, else one
    rows, cols = _grid(len(policies)) if k <= 4 else (len(policies), 1)
    width = _width(cols)
    label_w = min(1.8, 0.075 * max(len(name) for name in learners) + 0.3)  # the row labels
    cell = min(0.95, (width / cols - label_w - 0.5) / k)
    small = SMALL_TEXT if cell >= 0.55 else SMALL_TEXT - 0.5
    _, context = _style()
    with sns.axes_style("white"), context:
        fig = _new_figure(width, (cell * k + label_w + 0.5) * rows + 1.5)
        axes = fig.subplots(rows, cols, squeeze=False)
        image = None
        for i, policy in enumerate(policies):
            ax = axes[i // cols][i % cols]
            delta = np.full((k, k), np.nan)
            text = np.full((k, k), "", dtype=object)
            bold = np.zeros((k, k), dtype=bool)
            for row in data[data["policy"] == policy].itertuples():
                ia, ib = learners.index(row.learner_a), learners.index(row.learner_b)
                d = sign * row.cliffs_delta
                delta[ia, ib], delta[ib, ia] = d, -d
                p = row.p_holm
                ptxt = "p n/a" if not np.isfinite(p) else ("p<0.001" if p < 0.001 else f"p={p:.3f}")
                star = "*" if row.significant else ""
                for r, c, v in ((ia, ib, d), (ib, ia, -d)):
                    text[r, c] = f"{v + 0.0:+.2f}{star}\n{ptxt}" if np.isfinite(v) else ptxt
                    bold[r, c] = bool(row.significant)
            image = ax.imshow(delta, cmap="PuOr_r", vmin=-1, vmax=1)
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
            if not np.isfinite(delta).any():  # no test in the panel: say why
                notes = (
                    [n for n in data.loc[data["policy"] == policy, "note"] if n]
                    if ("note" in data)
                    else []
                )
                _panel_note(ax, notes[0] if notes else "no test: no pair of values")
            ax.set_xticks(range(k), learners, rotation=30, ha="right", rotation_mode="anchor")
            ax.set_yticks(range(k), learners if i % cols == 0 else [])
            ax.set_xlabel("column learner")
            ax.set_ylabel("row learner" if i % cols == 0 else "")
            ax.set_title(f"policy {policy}")
            ax.xaxis.set_minor_locator(NullLocator())
        for j in range(len(policies), rows * cols):
            axes[j // cols][j % cols].set_visible(False)
        bar = fig.colorbar(
            image,
            ax=axes.ravel().tolist(),
            orientation="horizontal",
            location="bottom",
            shrink=0.6,
            aspect=40,
        )
        bar.set_label("Cliff's δ, oriented: + = the row learner is better")
        fig.suptitle(
            f"{dataset}: pairwise tests of {metric} on {reference} labels at checkpoint {checkpoint}\n"
            f"(cell: Cliff's δ and Holm-adjusted permutation p; * significant; {estimator} estimator)",
            fontsize=TITLE_SIZE,
        )
    return fig


# --------------------------------------------------------------------------- 5. sensitivity


def _window_unit(values: np.ndarray, unit: str) -> tuple[float, str]:
    if unit == "i":
        return 1.0, "instances"
    top = float(np.max(values)) if len(values) else 0.0
    if top >= 86400:
        return 86400.0, "days"
    if top >= 3600:
        return 3600.0, "hours"
    return 1.0, "seconds"


#: How to place a policy whose windows the sensitivity figure does not know (notes and errors).
PLACE_HINT = (
    "give the specs the runs used, policy_specs={policy: spec} or delaycv plot --runs DIR (their "
    "run.json), or a window, windows={policy: window} or delaycv plot --window POLICY=WINDOW"
)


def window_placement(
    policies: Iterable[str],
    windows: Mapping[str, str | int] | None = None,
    policy_specs: Mapping[str, object] | None = None,
) -> tuple[pd.DataFrame, dict[str, str]]:
    """Where the sensitivity figure puts each policy: ``(frame, unplaced)``.

    ``frame`` is :func:`delaycv.stats.compare.window_table` restricted to the families that make a line
    (two or more distinct non-zero windows); each policy's windows are those of its spec in
    ``policy_specs`` (the specs the runs used; names are then only labels), else those its name
    says. ``unplaced`` maps every other policy, in the order given, to why it is not on a window
    axis: no spec of it was given (with ``policy_specs``), its spec is a general policy that no
    preset describes, its name is not a preset pattern (without specs or windows), no window was
    given for it (with ``windows``), it is the only window of its family, or (``ideal``) no family
    in seconds makes a line. The figure names these policies; it never drops one silently."""
    from delaycv.protocol.policies import PRESETS

    policies = list(dict.fromkeys(policies))
    full = window_table(policies, windows, specs=policy_specs)
    parsed = policies_windows(policies, policy_specs)
    lines = [
        f
        for f, g in full.groupby("family", sort=True)
        if g.loc[g["window"] > 0, "window"].nunique() >= 2
    ]
    frame = full[full["family"].isin(lines)].reset_index(drop=True)
    placed = set(frame["policy"])
    unplaced: dict[str, str] = {}
    for policy in policies:
        if policy in placed:
            continue
        w = parsed[policy]
        if windows is not None and policy not in windows:
            unplaced[policy] = "no window given"
        elif windows is None and policy_specs is not None and policy not in policy_specs:
            unplaced[policy] = "no spec given"
        elif windows is None and w is None and policy_specs is not None:
            unplaced[policy] = "a general policy that no preset describes"
        elif windows is None and w is None:
            unplaced[policy] = "name is not a preset pattern"
        elif windows is None and not PRESETS[w.preset].windows:  # (ideal)
            unplaced[policy] = "no grid of windows in seconds to join"
        else:
            family = full.loc[full["policy"] == policy, "family"].iloc[0]
            unplaced[policy] = f"the only window of family {family!r}"
    return frame, unplaced


def _hint(unplaced: Mapping[str, str]) -> str:
    """:data:`PLACE_HINT` when a policy lacks a window that the caller could give."""
    needs = any(r.startswith(("name", "no window", "no spec")) for r in unplaced.values())
    return f" ({PLACE_HINT})" if needs else ""


def _unplaced_text(unplaced: Mapping[str, str]) -> str:
    return ", ".join(f"{policy} ({reason})" for policy, reason in unplaced.items())


def sensitivity(
    table: pd.DataFrame,
    *,
    dataset: str,
    metric: str,
    estimator: str | None = None,
    windows: Mapping[str, str | int] | None = None,
    references: Sequence[str] = ("true", "observed"),
    policy_specs: Mapping[str, object] | None = None,
) -> Figure:
    """Figure 5: ``metric`` at the last checkpoint against the waiting window, per learner (mean over
    (seed, fold) ± 1 SD), solid for true labels and dashed for observed ones; one panel per family
    of policies (see :func:`delaycv.stats.compare.window_table`); log-scaled window axis, with ``ideal``
    (window 0) at the left end. The windows are those of the policies' specs in ``policy_specs``
    (the specs the runs used), else those their names say (:func:`window_placement`)."""
    estimator = _one_estimator(_select(table, dataset=dataset), estimator)
    data = _select(table, dataset=dataset, estimator=estimator)
    last = int(last_checkpoints(data).loc[dataset])
    data = data[(data["checkpoint"] == last) & data["reference"].isin(list(references))]
    order = policy_order(data["policy"].unique(), policy_specs)
    frame, unplaced = window_placement(order, windows, policy_specs)
    families = sorted(frame["family"].unique())
    if not families:
        raise DelaycvError(
            f"no policy grid in dataset {dataset!r}: sensitivity needs two or more policies whose "
            f"windows differ; policies: {_unplaced_text(unplaced)}" + _hint(unplaced)
        )
    learners = sorted(data["learner"].unique())
    styles = learner_styles(learners)
    refs = [r for r in references if r in set(data["reference"])]
    ref_style = {"true": "-", "observed": "--"}
    rows, cols = _grid(len(families))
    axes_style, context = _style()
    with axes_style, context:
        fig = _new_figure(_width(cols), 3.0 * rows + 1.6)
        axes = fig.subplots(rows, cols, squeeze=False, sharey=True)
        for i, family in enumerate(families):
            ax = axes[i // cols][i % cols]
            fam = frame[frame["family"] == family]
            scale, unit_name = _window_unit(fam["window"].to_numpy(), fam["unit"].iloc[0])
            positive = np.sort(fam.loc[fam["window"] > 0, "window"].unique()) / scale
            ratio = positive[-1] / positive[0] if len(positive) > 1 else 10.0
            zero_at = positive[0] / max(2.0, ratio ** (1 / max(len(positive), 2)))
            merged = data.merge(fam[["policy", "window"]], on="policy")
            merged["x"] = np.where(merged["window"] > 0, merged["window"] / scale, zero_at)
            stats_ = _fold_stats(merged, metric, ["learner", "reference", "x"])
            for learner in learners:
                for ref in sorted(refs, key=lambda r: r == "true"):  # filled true markers on top
                    cur = stats_[(stats_["learner"] == learner) & (stats_["reference"] == ref)]
                    if cur.empty:
                        continue
                    # ideal (window 0) is a separate point, not joined to the grid's line
                    for joined in (True, False):
                        part = cur[(cur["x"] != zero_at) == joined]
                        if part.empty:
                            continue
                        ax.errorbar(
                            part["x"],
                            part["mean"],
                            yerr=part["sd"],
                            color=styles[learner]["color"],
                            linestyle=ref_style.get(ref, ":") if joined else "none",
                            marker=_ref_marker(ref) if joined else IDEAL_MARKER,
                            markersize=4.5 if joined else 5.5,
                            lw=1.3,
                            capsize=2,
                            elinewidth=0.8,
                            markerfacecolor=styles[learner]["color"] if ref == "true" else "white",
                        )
            empty = [
                (p, w)
                for p, w in zip(fam["policy"], fam["window"], strict=True)
                if no_value_reason(data[data["policy"] == p], metric)
            ]
            ax.set_xscale("log")
            ticks = list(positive) + ([zero_at] if (fam["window"] == 0).any() else [])
            labels = [f"{v:g}" for v in positive] + (
                ["ideal\n(0)"] if (fam["window"] == 0).any() else []
            )
            ax.xaxis.set_major_locator(FixedLocator(ticks))
            ax.set_xticklabels(labels)
            ax.xaxis.set_minor_locator(NullLocator())
            # every window of the family on the axis, drawn or not (a policy with no value)
            ax.set_xlim(min(ticks) / 1.6, max(ticks) * 1.6)
            if empty:  # a policy with no value: its window is on the axis; say why beside it
                letter = fam["varies"].iloc[0]
                where = ", ".join(
                    f"{p} ({letter} = {w / scale:g} {unit_name})" if w > 0 else p for p, w in empty
                )
                reasons = {no_value_reason(data[data["policy"] == p], metric) for p, _ in empty}
                text = f"no value at {where}: " + "; ".join(sorted(reasons))
                _note_beside(ax, text, max(w / scale if w > 0 else zero_at for _, w in empty))
            ax.set_xlabel(
                f"{axis_names().get(fam['varies'].iloc[0], 'window')} ({unit_name}, log scale)"
            )
            ax.set_ylabel(metric_label(metric) if i % cols == 0 else "")
            ax.set_title(f"policies {family}")
        for j in range(len(families), rows * cols):
            axes[j // cols][j % cols].set_visible(False)
        handles = [Line2D([], [], color=styles[lr]["color"], lw=1.6, label=lr) for lr in learners]
        for ref in refs:
            handles.append(
                Line2D(
                    [],
                    [],
                    color="#444444",
                    linestyle=ref_style.get(ref, ":"),
                    marker=_ref_marker(ref),
                    markerfacecolor="#444444" if ref == "true" else "white",
                    label=f"{ref} labels",
                )
            )
        if (frame["window"] == 0).any():
            handles.append(
                Line2D(
                    [],
                    [],
                    color="#444444",
                    linestyle="none",
                    marker=IDEAL_MARKER,
                    markersize=6,
                    markerfacecolor="#444444",
                    label="ideal (window 0),\na point at the left\n(open: observed labels)",
                )
            )
        handles.append(Line2D([], [], color="none", label="bars: ±1 SD over folds"))
        _legend(fig, handles, "learner / reference")
        title = (
            f"{dataset}: sensitivity of {metric} to the waiting time\n"
            f"(last checkpoint, {last} instances; {estimator} estimator)"
        )
        if unplaced:
            title += _note(fig, f"not on a window axis: {_unplaced_text(unplaced)}")
        fig.suptitle(title, fontsize=TITLE_SIZE)
    return fig


#: The marker of a policy without a window (``ideal``), a point of its own at the left end of a
#: window axis (sensitivity figure).
IDEAL_MARKER = "D"


def _ref_marker(reference: str) -> str:
    """The marker of a line scored against ``reference``: circles (true), squares (observed)."""
    return "o" if reference == "true" else "s"


# --------------------------------------------------------------------------- files


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", str(text)).strip("-") or "x"


#: File metadata that would make two drawings of the same figure differ: the PDF's and SVG's
#: creation date (dropped; a PNG carries only the matplotlib version as ``Software``).
_METADATA = {"pdf": {"CreationDate": None}, "svg": {"Date": None}}


def save_figure(
    fig: Figure, stem: Path, formats: Sequence[str] = FORMATS, dpi: int = 200
) -> list[Path]:
    """Write ``fig`` as ``stem.<format>`` for each format, each file atomically; returns the paths.

    The files are reproducible: the same figure gives the same bytes (no creation date in PDF or
    SVG, and SVG element ids from a fixed salt instead of a random one). The figure is laid out
    once, by the first format's drawing; the other formats reuse that layout (laying out a figure
    of 15 panels cost as much as drawing it)."""
    paths = []
    engine = fig.get_layout_engine()
    try:
        for fmt in formats:
            path = Path(f"{stem}.{fmt}")
            with atomic_path(path) as tmp, matplotlib.rc_context({"svg.hashsalt": "delaycv"}):
                fig.savefig(tmp, format=fmt, dpi=dpi, metadata=_METADATA.get(fmt))
            paths.append(path)
            if engine is not None and fig.get_layout_engine() is engine:
                fig.set_layout_engine("none")  # keep the positions just computed
    finally:
        if engine is not None:
            fig.set_layout_engine(engine)
    return paths


def draw_figures(
    table: pd.DataFrame,
    tests: pd.DataFrame | None,
    out_dir: str | Path,
    *,
    metric: str,
    reference: str = "true",
    estimator: str | None = None,
    datasets: Sequence[str] | None = None,
    windows: Mapping[str, str | int] | None = None,
    policy_specs: Mapping[str, object] | None = None,
    baseline: str | None = None,
    learner: str | None = None,
    alpha: float | None = None,
    x: str = "time",
    formats: Sequence[str] = FORMATS,
    dpi: int = 200,
    seed: int = 0,
) -> list[Path]:
    """Draw every figure that applies, per dataset (and estimator), into ``out_dir``.

    Files ``<figure>_<dataset>_<metric>[_<reference>][_<estimator>].<format>`` with figure in
    ``learning_curves`` (always), ``bias`` (when both references are present), ``final``
    (always), ``pairwise`` (when ``tests`` has tests of ``metric``/``reference``) and
    ``sensitivity`` (when some policy grid has two or more windows); the estimator's part only
    when the dataset has several estimators. Each file is written atomically, and the same inputs
    give byte-identical files. A policy that the sensitivity figure cannot put on a window axis
    is named in the figure and logged as a warning (logger ``delaycv.figures.plots``), as is a dataset
    with no sensitivity figure.

    Parameters
    ----------
    table : pandas.DataFrame
        The merged per-fold checkpoint table (columns in docs/architecture.md), with a column
        ``metric``.
    tests : pandas.DataFrame or None
        The output of :func:`delaycv.stats.compare.run_tests`, ideally at all checkpoints: the
        significance strip under the learning curves (when it covers more than one checkpoint)
        and the pairwise heatmap. None: neither.
    out_dir : str or pathlib.Path
        The folder the files are written into (created when missing).
    metric : str
        The metric drawn (a column of ``table``, e.g. ``"gmean"``).
    reference : {"true", "observed"}, default ``"true"``
        The labels the learning curves, the final distributions and the heatmap are scored
        against (the bias and sensitivity figures show both).
    estimator : str, optional
        The estimator whose rows are drawn (``"fading"``, ...); None (default): each estimator of
        the dataset, in its own files.
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
        A learner that the significance strip shows each other learner against. None (default):
        every pair, up to 6, else every learner against the first (by name).
    learner : str, optional
        The same as ``baseline`` under the workflow config's name (``figures.learner``); used
        when ``baseline`` is None.
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
    baseline = baseline if baseline is not None else learner
    if metric not in table.columns:
        raise DelaycvError(f"metric {metric!r} is not a column of the per-fold table")
    datasets = sorted(table["dataset"].unique()) if datasets is None else list(datasets)
    written: list[Path] = []
    for dataset in datasets:
        sub = _select(table, dataset=dataset)
        if sub.empty:
            raise DelaycvError(f"dataset {dataset!r} is not in the per-fold table")
        estimators = sorted(sub["estimator"].unique()) if estimator is None else [estimator]
        for est in estimators:
            tail = f"_{_slug(est)}" if len(estimators) > 1 else ""
            name = f"{_slug(dataset)}_{_slug(metric)}"
            figs: list[tuple[str, Figure]] = []
            figs.append(
                (
                    f"learning_curves_{name}_{reference}{tail}",
                    learning_curves(
                        sub,
                        tests,
                        dataset=dataset,
                        metric=metric,
                        reference=reference,
                        estimator=est,
                        x=x,
                        baseline=baseline,
                        alpha=alpha,
                    ),
                )
            )
            if {"observed", "true"} <= set(sub["reference"]):
                figs.append(
                    (
                        f"bias_{name}{tail}",
                        bias_curves(sub, dataset=dataset, metric=metric, estimator=est, x=x),
                    )
                )
            figs.append(
                (
                    f"final_{name}_{reference}{tail}",
                    final_distributions(
                        sub,
                        dataset=dataset,
                        metric=metric,
                        reference=reference,
                        estimator=est,
                        seed=seed,
                    ),
                )
            )
            if (
                tests is not None
                and not _select(
                    tests, dataset=dataset, metric=metric, reference=reference, estimator=est
                ).empty
            ):
                figs.append(
                    (
                        f"pairwise_{name}_{reference}{tail}",
                        pairwise_heatmap(
                            tests,
                            dataset=dataset,
                            metric=metric,
                            reference=reference,
                            estimator=est,
                        ),
                    )
                )
            try:
                figs.append(
                    (
                        f"sensitivity_{name}{tail}",
                        sensitivity(
                            sub,
                            dataset=dataset,
                            metric=metric,
                            estimator=est,
                            windows=windows,
                            policy_specs=policy_specs,
                        ),
                    )
                )
            except DelaycvError as err:
                if "no policy grid" not in str(err):
                    raise
                log.warning("no sensitivity figure: %s", err)
            else:
                order = policy_order(sub["policy"].unique(), policy_specs)
                _, unplaced = window_placement(order, windows, policy_specs)
                for policy, reason in unplaced.items():
                    log.warning(
                        "sensitivity_%s%s: policy %s is not on a window axis: %s%s",
                        name,
                        tail,
                        policy,
                        reason,
                        _hint({policy: reason}),
                    )
            drawn = _select(sub, reference=reference, estimator=est)
            drawn = drawn[drawn["checkpoint"] == drawn["checkpoint"].max()]
            for policy in policy_order(drawn["policy"].unique()):
                reason = no_value_reason(drawn[drawn["policy"] == policy], metric)
                if reason:  # the study goes on; the panels of the policy say why they are empty
                    log.warning(
                        "%s: policy %s has no value of %s at the last checkpoint: %s (its panels "
                        "say so)",
                        dataset,
                        policy,
                        metric,
                        reason,
                    )
            for stem, fig in figs:
                written.extend(save_figure(fig, out_dir / stem, formats, dpi))
    return written


# --------------------------------------------------------------------------- rankings (issue 21)


def cd_diagram(result, *, title: str | None = None, note: str | None = None) -> Figure:
    """Demšar's critical-difference diagram of a :class:`delaycv.stats.ranking.FriedmanResult`: the
    treatments at their mean rank on an axis from 1 (best) to k, a bar joining the treatments that
    Nemenyi's test does not tell apart (p >= alpha: mean ranks within CD of each other), and the
    CD itself drawn above the axis. Drawn by scikit-posthocs' ``critical_difference_diagram``.
    ``note``: a line written under the diagram (e.g. the treatments that were not ranked). A
    result without a test (``result.note``) has no diagram: DelaycvError."""
    import scikit_posthocs as sp  # import on use (the other figures do not need it)

    if result.note:
        raise DelaycvError(f"no critical-difference diagram: {result.note}")
    k = result.k
    palette = {
        t: PALETTE[i % len(PALETTE)] for i, t in enumerate(result.mean_ranks.sort_values().index)
    }
    axes_style, context = _style()
    with axes_style, context:
        fig = _new_figure(min(FIGURE_WIDTH, max(6.0, 0.45 * k + 4.0)), 2.2 + 0.3 * k)
        ax = fig.subplots()
        sp.critical_difference_diagram(
            result.mean_ranks,
            result.nemenyi,
            alpha=result.alpha,
            ax=ax,
            color_palette=palette,
            label_fmt_left="{label} ({rank:.2f})",
            label_fmt_right="({rank:.2f}) {label}",
            label_props={"fontsize": 9},
            crossbar_props={"linewidth": 2.5, "color": "#444444"},
            text_h_margin=0.1,
        )
        # the critical difference above the axis and its tick labels, from rank 1
        ax.plot([1, 1 + result.cd], [1.6, 1.6], color="#000000", linewidth=1.5)
        ax.plot([1, 1], [1.45, 1.75], color="#000000", linewidth=1.5)
        ax.plot([1 + result.cd] * 2, [1.45, 1.75], color="#000000", linewidth=1.5)
        ax.text(1 + result.cd / 2, 1.85, f"CD = {result.cd:.2f}", ha="center", fontsize=9)
        ax.set_ylim(ax.get_ylim()[0] - 0.3, 2.6)
        ax.set_xlim(1, max(k, 2))
        ax.set_xticks(range(1, max(k, 2) + 1))
        ax.grid(False)
        ax.set_xlabel("mean rank (1 = best)", fontsize=9)
        if note:
            _figure_note(fig, note)
        ax.xaxis.set_label_position("top")
        text = (
            f"Friedman chi2 = {result.statistic:.2f}, p = {result.p_value:.3g}; N = {result.n} "
            f"datasets; a bar joins treatments Nemenyi's test does not tell apart "
            f"(alpha = {result.alpha})"
        )
        note = _note(fig, text)
        fig.suptitle(title + note if title else note.lstrip("\n"), fontsize=TITLE_SIZE)
    return fig


def sk_boxplot(
    values: pd.DataFrame,
    groups: pd.DataFrame,
    *,
    title: str | None = None,
    ylabel: str | None = None,
    seed: int = 0,
    note: str | None = None,
) -> Figure:
    """Box and points per treatment (``values``: one column per treatment, one row per
    observation), ordered as ``groups`` orders them (the table of
    :func:`delaycv.stats.ranking.scott_knott_esd`: best first), coloured by Scott-Knott ESD group, the
    group number above each box and a dashed line between groups. The points' sideways jitter comes
    from ``numpy.random.default_rng(seed)``. ``note``: a line written in the panel (e.g. the
    treatments that were not ranked)."""
    order = [str(t) for t in groups["treatment"]]
    missing = [t for t in order if t not in values.columns]
    if missing:
        raise DelaycvError(f"no values of treatments {missing} (columns: {list(values.columns)})")
    group_of = dict(zip(order, groups["group"], strict=True))
    colour = {t: PALETTE[(int(g) - 1) % len(PALETTE)] for t, g in group_of.items()}
    long = values[order].melt(var_name="treatment", value_name="value")
    rng = np.random.default_rng(seed)
    axes_style, context = _style()
    with axes_style, context:
        fig = _new_figure(min(FIGURE_WIDTH, max(6.0, 0.55 * len(order) + 1.8)), 4.0)
        ax = fig.subplots()
        _boxes_with_points(ax, long, "treatment", "value", order, colour, rng)
        top = np.nanmax(values[order].to_numpy(dtype=float))
        for i, t in enumerate(order):
            ax.annotate(
                str(int(group_of[t])),
                (i, top),
                xytext=(0, 6),
                textcoords="offset points",
                ha="center",
                fontsize=9,
                color=colour[t],
            )
        boundaries = [
            i + 0.5 for i in range(len(order) - 1) if group_of[order[i]] != group_of[order[i + 1]]
        ]
        for x in boundaries:
            ax.axvline(x, color="#888888", linestyle="--", linewidth=0.8)
        ax.set_xlabel("")
        ax.set_ylabel(ylabel or "value")
        ax.margins(y=0.12)
        if len(order) > 4:
            for label in ax.get_xticklabels():
                label.set_rotation(30)
                label.set_horizontalalignment("right")
        if note:
            _figure_note(fig, note)
        n_groups = len(set(group_of.values()))
        text = (
            f"Scott-Knott ESD: {n_groups} group{'s' if n_groups != 1 else ''} (the number above "
            f"each box; 1 = best); {len(values)} observations per treatment"
        )
        note = _note(fig, text)
        fig.suptitle(title + note if title else note.lstrip("\n"), fontsize=TITLE_SIZE)
    return fig
