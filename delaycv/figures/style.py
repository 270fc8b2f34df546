"""The look of every figure of delaycv, and the writing of its files.

This module owns what the figures share, none of which draws a figure of its own:

- the palette, dash patterns, markers and sizes (:data:`PALETTE`, :data:`DASHES`,
  :data:`FIGURE_WIDTH`, :data:`SMALL_TEXT`, :data:`TITLE_SIZE`, :data:`IDEAL_MARKER`, ...), a
  learner's colour and dash (:func:`learner_styles`), a reference's marker
  (:func:`reference_marker`) and a metric's axis label (:func:`metric_label`);
- a new figure and its seaborn style (:func:`new_figure`, :func:`figure_style`), the layout of its
  panels (:func:`grid_shape`, :func:`figure_width`), its legend (:func:`legend`) and notes
  (:func:`panel_note`, :func:`note_beside`, :func:`title_note`, :func:`figure_note`);
- what panels draw alike: a learner's mean line and band (:func:`mean_band`) and their legend
  entries (:func:`learner_handles`), a date axis (:func:`to_dates`, :func:`date_axis`), the unit
  of a window axis (:func:`window_unit`), boxes with jittered points (:func:`boxes_with_points`);
- files: a file name's part (:func:`slug`) and reproducible, atomic files (:func:`save_figure`).

Every figure is built on a fresh :class:`matplotlib.figure.Figure` (no pyplot state, no global
theme change) on matplotlib's Agg canvas, with a colour-blind-safe palette (Okabe & Ito) plus a
line style per learner, so that lines stay apart in grey-scale print.
"""

from __future__ import annotations

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
from matplotlib.ticker import FixedFormatter, FixedLocator  # noqa: E402

from delaycv.common.atomic import atomic_path  # noqa: E402
from delaycv.common.defaults import DPI, FORMATS  # noqa: E402
from delaycv.metrics.properties import metric_properties  # noqa: E402

__all__ = [
    "DASHES",
    "DPI",
    "FIGURE_WIDTH",
    "FORMATS",
    "IDEAL_MARKER",
    "JITTER",
    "MAX_COLUMNS",
    "MISSING_COLOUR",
    "NOTE_COLOUR",
    "NS_COLOUR",
    "PALETTE",
    "PANEL_WIDTH",
    "RC",
    "SMALL_TEXT",
    "TEXT_COLOUR",
    "TITLE_SIZE",
    "boxes_with_points",
    "date_axis",
    "figure_note",
    "figure_title",
    "figure_style",
    "figure_width",
    "grid_shape",
    "learner_handles",
    "learner_styles",
    "legend",
    "mean_band",
    "metric_label",
    "new_figure",
    "note_beside",
    "panel_note",
    "reference_marker",
    "save_figure",
    "slug",
    "span_of_rows",
    "to_dates",
    "window_unit",
]

#: Okabe & Ito's colour-blind-safe palette, ordered for white backgrounds (yellow and black last).
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442"]
DASHES = ["-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2))]
#: The colour of a cell with no significant difference (significance strip).
NS_COLOUR = "#DDDDDD"
#: The colour of a cell with no test (significance strip).
MISSING_COLOUR = "#FFFFFF"
#: The width (inches) of a figure of several panels. The Snakemake report shows a figure this
#: wide 830 px wide or more in a window 1,400 px wide (docs/workflow.md, "The report"): 100 px per
#: inch, so that its smallest text (8 pt) is 11 px tall and its titles 14 px. Wider figures would
#: shrink their text.
FIGURE_WIDTH = 8.3
#: Panels side by side at most (two panels of about 4 inches fit FIGURE_WIDTH).
MAX_COLUMNS = 2
PANEL_WIDTH = FIGURE_WIDTH / MAX_COLUMNS
JITTER = 0.18  # half-width of the sideways spread of the points of boxes with points
#: The smallest text of a figure (points): cells of the heatmap, labels of the strip, notes.
SMALL_TEXT = 8.0
#: The text sizes of every figure (seaborn's "paper" context with these values).
RC = {
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
#: The colour of text and lines whose colour means nothing, e.g. the names of the treatments of a
#: critical-difference diagram, however many (the palette's 8 colours would repeat, and its
#: yellow does not read on white).
TEXT_COLOUR = "#000000"
#: The marker of a policy without a window (``ideal``), a point of its own at the left end of a
#: window axis (sensitivity figure).
IDEAL_MARKER = "D"


def metric_label(metric: str) -> str:
    """The axis label of a metric, with its unit, from its declaration
    (:mod:`delaycv.metrics.properties`).

    Parameters
    ----------
    metric : str
        A metric's name (a column of the per-fold table).

    Returns
    -------
    str
        ``"<metric> (<unit>)"``; a name that is not a declared metric is returned as it is.

    Examples
    --------
    >>> metric_label("gmean")
    'gmean (fraction)'
    >>> metric_label("brier")
    'brier (loss, lower is better)'
    >>> metric_label("tp"), metric_label("ifa")
    ('tp (instances)', 'ifa (instances)')
    >>> metric_label("mcc"), metric_label("kappa_m")
    ('mcc (-1 to 1)', 'kappa_m (at most 1)')
    >>> metric_label("my_column")
    'my_column'
    """
    declared = metric_properties(metric)
    if declared is None:
        return metric
    if declared.kind == "count":
        return f"{metric} (instances)"
    if declared.unit == "loss":
        return f"{metric} (loss, lower is better)"
    if declared.unit:
        return f"{metric} ({declared.unit})"
    if declared.bounded:
        return f"{metric} ({declared.low:g} to {declared.high:g})"
    return f"{metric} (at most {declared.high:g})" if declared.high is not None else metric


def learner_styles(learners: Iterable[str]) -> dict[str, dict]:
    """A colour and a dash pattern for each learner, in the order given.

    Parameters
    ----------
    learners : iterable of str
        The learners (repeats count once).

    Returns
    -------
    dict of str to dict
        learner -> ``{"color": ..., "linestyle": ...}`` (:data:`PALETTE`, :data:`DASHES`, in
        turn).

    Examples
    --------
    >>> learner_styles(["ht", "nb"])["nb"]
    {'color': '#E69F00', 'linestyle': '--'}
    """
    out = {}
    for i, learner in enumerate(dict.fromkeys(learners)):
        out[learner] = {"color": PALETTE[i % len(PALETTE)], "linestyle": DASHES[i % len(DASHES)]}
    return out


def reference_marker(reference: str) -> str:
    """The marker of a line scored against ``reference``.

    Parameters
    ----------
    reference : str
        ``"true"``, ``"observed"`` or ``"corrected"``.

    Returns
    -------
    str
        ``"o"`` (circles) for true labels, ``"^"`` (triangles) for the corrected estimate,
        ``"s"`` (squares) otherwise.

    Examples
    --------
    >>> reference_marker("true"), reference_marker("observed"), reference_marker("corrected")
    ('o', 's', '^')
    """
    return {"true": "o", "corrected": "^"}.get(reference, "s")


def figure_style():
    """The seaborn style of every figure: ``(axes_style, context)``, two context managers.

    Returns
    -------
    tuple
        seaborn's ``axes_style("whitegrid")`` and ``plotting_context("paper")`` with :data:`RC`,
        to enter (``with axes_style, context:``) while a figure is drawn.
    """
    return sns.axes_style("whitegrid"), sns.plotting_context("paper", rc=RC)


def new_figure(width: float, height: float) -> Figure:
    """A fresh figure (no pyplot state), laid out by matplotlib's constrained layout.

    Parameters
    ----------
    width, height : float
        Its size in inches.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> new_figure(4.0, 3.0).get_size_inches().tolist()
    [4.0, 3.0]
    """
    return Figure(figsize=(width, height), layout="constrained")


def grid_shape(n: int) -> tuple[int, int]:
    """The rows and columns of a grid of ``n`` panels, :data:`MAX_COLUMNS` side by side at most.

    Parameters
    ----------
    n : int
        The number of panels.

    Returns
    -------
    tuple of int
        ``(rows, columns)``.

    Examples
    --------
    >>> grid_shape(1), grid_shape(3)
    ((1, 1), (2, 2))
    """
    cols = max(1, min(n, MAX_COLUMNS))
    return int(np.ceil(n / cols)), cols


def figure_width(cols: int) -> float:
    """The width of a figure of ``cols`` panel columns.

    Parameters
    ----------
    cols : int
        The number of panel columns.

    Returns
    -------
    float
        :data:`FIGURE_WIDTH` for a grid, 6 inches for a single column (its text is then larger
        still in the report).

    Examples
    --------
    >>> figure_width(1), figure_width(2)
    (6.0, 8.3)
    """
    return FIGURE_WIDTH if cols > 1 else 6.0


def panel_note(
    ax, text: str, *, y: float = 0.5, x: float = 0.5, ha: str = "center", share: float = 1.0
) -> None:
    """Write ``text`` in a panel that has nothing, or not everything, to show.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The panel.
    text : str
        The note, wrapped to ``share`` of the panel's width.
    y, x : float, default 0.5
        Where, in axes fractions.
    ha : str, default ``"center"``
        Its horizontal alignment.
    share : float, default 1.0
        The fraction of the panel's width the note may take.
    """
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


def note_beside(ax, text: str, at: float, *, y: float = 0.2) -> None:
    """A panel note for a point missing at ``at`` on a log x axis whose limits are set.

    The note goes to that side of the panel, so that it stands by the empty tick rather than over
    the data.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The panel (log-scaled x axis, limits set).
    text : str
        The note.
    at : float
        The x value of the missing point.
    y : float, default 0.2
        Its height, in axes fractions.
    """
    lo, hi = ax.get_xlim()
    frac = (np.log(at) - np.log(lo)) / (np.log(hi) - np.log(lo))
    if frac >= 0.5:
        panel_note(ax, text, y=y, x=0.97, ha="right", share=0.62)
    else:
        panel_note(ax, text, y=y, x=0.03, ha="left", share=0.62)


def legend(fig: Figure, handles: list, title: str) -> None:
    """The legend below the panels, outside the data, in as many columns as fit.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    handles : list of matplotlib artists
        The legend's entries (their labels may hold line breaks).
    title : str
        The legend's title.
    """
    # as many columns as the figure's width holds (a legend wider than the figure is cut off)
    longest = max(
        (len(line) for h in handles for line in str(h.get_label()).split("\n")), default=1
    )
    column = longest * 0.55 * RC["legend.fontsize"] / 72 + 0.75  # inches: handle, gap, text
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


def figure_title(fig: Figure, title: str) -> None:
    """Set ``title`` as the suptitle of ``fig`` (:data:`TITLE_SIZE`), each of its lines wrapped to
    the figure's width (about 11 characters an inch): a figure of one panel column is 6 inches
    wide, where a longer line ran off both edges. A line that must wrap is cut into lines of
    about equal length, so that no word is left alone on the last.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    title : str
        Its title, lines separated by line breaks.

    Examples
    --------
    >>> fig = new_figure(2.0, 1.0)
    >>> figure_title(fig, "a title\\nthe second line of a title")
    >>> fig.get_suptitle()
    'a title\\nthe second line\\nof a title'
    >>> figure_title(fig, "a_line_of_22_character b_line_of_22_character\\n\\nlast")  # (as wide)
    >>> fig.get_suptitle()
    'a_line_of_22_character\\nb_line_of_22_character\\n\\nlast'
    """
    width = int(fig.get_figwidth() * 11)
    lines = []
    for line in title.split("\n"):
        wrapped = textwrap.wrap(line, width=width) or [""]
        if len(wrapped) > 1:  # the narrowest width that needs no more lines: an even cut
            for even in range(-(-len(line) // len(wrapped)), width):
                balanced = textwrap.wrap(line, width=even)
                if len(balanced) <= len(wrapped):
                    wrapped = balanced
                    break
        lines += wrapped
    fig.suptitle("\n".join(lines), fontsize=TITLE_SIZE)


def figure_note(fig: Figure, text: str) -> None:
    """Write ``text`` under the panels of ``fig``, wrapped to its width.

    The note is laid out with the figure, so that it never covers a panel.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    text : str
        The note.
    """
    lines = textwrap.wrap(text, width=int(fig.get_figwidth() * 13))
    fig.supxlabel("\n".join(lines), fontsize=SMALL_TEXT + 0.5, color=NOTE_COLOUR)


def to_dates(seconds: Iterable) -> np.ndarray:
    """Unix times as matplotlib dates.

    Parameters
    ----------
    seconds : iterable of int
        Seconds since the epoch (UTC).

    Returns
    -------
    numpy.ndarray
        Days since matplotlib's epoch (floats).

    Examples
    --------
    >>> to_dates([0, 86400]).tolist()
    [0.0, 1.0]
    """
    return mdates.date2num(pd.to_datetime(np.asarray(seconds, dtype=np.int64), unit="s"))


def span_of_rows(axes, xs) -> None:
    """Give panels on which no value was drawn (a metric with no value in any of them: each a
    note) the x limits of ``xs``, the positions of their rows (dates or instances), not
    matplotlib's default of 0 to 1, which a date axis reads as a day in January 1970. Panels that
    drew something keep their limits. (Call before :func:`date_axis`.)

    Parameters
    ----------
    axes : sequence of matplotlib.axes.Axes
        Panels that share their x axis.
    xs : array-like
        The x values of their rows.

    Examples
    --------
    >>> fig = new_figure(2.0, 2.0)
    >>> ax = fig.subplots()
    >>> _ = ax.plot([10.0, 20.0], [np.nan, np.nan])
    >>> span_of_rows([ax], [10.0, 15.0, 20.0])
    >>> ax.get_xlim()
    (np.float64(10.0), np.float64(20.0))
    """
    if any(np.isfinite(ax.dataLim.intervalx).all() for ax in axes):
        return
    xs = np.asarray(xs, dtype=np.float64)
    xs = xs[np.isfinite(xs)]
    if xs.size:
        low, high = float(xs.min()), float(xs.max())
        margin = 0.5 if low == high else 0.0
        axes[0].set_xlim(np.float64(low - margin), np.float64(high + margin))


def date_axis(ax) -> None:
    """Fix date ticks on ``ax``'s x axis, chosen once for its final limits (call after plotting).

    matplotlib asks an axis's locator for its ticks some thirty times per saved file (layout,
    drawing, each format); the date locator's rule search then took half of a figure's time. The
    ticks are those ``AutoDateLocator`` picks for the limits and their labels those
    ``ConciseDateFormatter`` gives them (offset included), fixed, and the limits with them.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        A panel whose x values are dates (:func:`to_dates`).
    """
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


def window_unit(values: np.ndarray, unit: str) -> tuple[float, str]:
    """The scale and unit name of a window axis.

    Parameters
    ----------
    values : numpy.ndarray
        The windows on the axis, in seconds (or instances).
    unit : str
        ``"i"`` for windows in instances, else seconds.

    Returns
    -------
    tuple of (float, str)
        The divisor of the values and the unit's name: days, hours or seconds by the largest
        value; instances as they are.

    Examples
    --------
    >>> window_unit(np.array([3600.0, 7 * 86400.0]), "s")
    (86400.0, 'days')
    >>> window_unit(np.array([50]), "i")
    (1.0, 'instances')
    """
    if unit == "i":
        return 1.0, "instances"
    top = float(np.max(values)) if len(values) else 0.0
    if top >= 86400:
        return 86400.0, "days"
    if top >= 3600:
        return 3600.0, "hours"
    return 1.0, "seconds"


def boxes_with_points(ax, data: pd.DataFrame, x: str, y: str, order, palette, rng) -> None:
    """A box per value of ``x`` and its points, jittered sideways.

    Nothing is drawn when no value is finite (seaborn cannot draw such boxes): the caller says why
    in the panel. A value of ``x`` without a finite value beside others that have one has an
    empty slot, its tick label saying ``(no value)``.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The panel.
    data : pandas.DataFrame
        The points: columns ``x`` (the box) and ``y`` (the value).
    x, y : str
        The columns.
    order : sequence of str
        The boxes, left to right.
    palette : mapping of str to colour
        Each box's colour (its outline and points).
    rng : numpy.random.Generator
        The figure's seeded generator of the jitter (at most :data:`JITTER` either side), so that
        the file is reproducible.
    """
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
    empty = []
    for k, name in enumerate(order):
        values = data.loc[data[x] == name, y].to_numpy(dtype=float)
        jitter = rng.uniform(-JITTER, JITTER, size=len(values))  # (drawn for every value)
        finite = np.isfinite(values)
        if not finite.any():  # (no points: matplotlib cannot place masked ones on categories)
            empty.append(name)
            continue
        ax.scatter(
            k + jitter[finite],
            values[finite],
            s=10,
            color=palette[name],
            alpha=0.75,
            linewidths=0,
            zorder=3,
        )
    if empty:
        labels = [f"{name}\n(no value)" if name in empty else str(name) for name in order]
        ax.set_xticks(range(len(order)), labels)
        ax.set_xlim(-0.5, len(order) - 0.5)


def slug(text: str) -> str:
    """``text`` as a part of a file name: every run of other characters than letters, digits and
    ``_.-`` becomes ``-``.

    Parameters
    ----------
    text : str
        A dataset's, metric's or estimator's name (anything ``str`` turns into text).

    Returns
    -------
    str
        The part, never empty (``"x"`` for nothing left).

    Examples
    --------
    >>> slug("hitl 7d/90d"), slug("///")
    ('hitl-7d-90d', 'x')
    """
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", str(text)).strip("-") or "x"


#: File metadata that would make two drawings of the same figure differ: the PDF's and SVG's
#: creation date (dropped; a PNG carries only the matplotlib version as ``Software``).
_METADATA = {"pdf": {"CreationDate": None}, "svg": {"Date": None}}


def save_figure(
    fig: Figure, stem: Path, formats: Sequence[str] = FORMATS, dpi: int = DPI
) -> list[Path]:
    """Write ``fig`` as ``stem.<format>`` for each format, each file atomically.

    The files are reproducible: the same figure gives the same bytes (no creation date in PDF or
    SVG, and SVG element ids from a fixed salt instead of a random one). The figure is laid out
    once, by the first format's drawing; the other formats reuse that layout (laying out a figure
    of 15 panels cost as much as drawing it).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    stem : pathlib.Path
        The files' path without the suffix (its folder must exist).
    formats : sequence of str, default ``("png", "pdf")``
        ``"png"``, ``"pdf"``, ``"svg"``.
    dpi : int, default 200
        The resolution of the raster formats.

    Returns
    -------
    list of pathlib.Path
        The files written, in the order of ``formats``.
    """
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


def mean_band(ax, xs, summary: pd.DataFrame, style: Mapping[str, object]) -> None:
    """A learner's mean line and its ±1 SD band.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The panel.
    xs : array-like
        The x values.
    summary : pandas.DataFrame
        Columns ``mean`` and ``sd`` (:func:`delaycv.figures.rows.fold_stats`), one row per x.
    style : mapping
        The learner's ``color`` and ``linestyle`` (:func:`learner_styles`).
    """
    ax.plot(xs, summary["mean"], color=style["color"], linestyle=style["linestyle"], lw=1.4)
    ax.fill_between(
        xs,
        summary["mean"] - summary["sd"],
        summary["mean"] + summary["sd"],
        color=style["color"],
        alpha=0.18,
        lw=0,
    )


def learner_handles(styles: Mapping[str, Mapping], learners: Sequence[str]) -> list:
    """The legend's entries of the learners' lines and of their ±1 SD band.

    Parameters
    ----------
    styles : mapping
        learner -> its style (:func:`learner_styles`).
    learners : sequence of str
        The learners, in the legend's order.

    Returns
    -------
    list of matplotlib artists
        A line per learner, then the band's patch.
    """
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
    return handles
