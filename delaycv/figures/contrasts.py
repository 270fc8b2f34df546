"""The figure of the policy contrasts: difference to the reference policy against the waiting window.

This module owns that figure (:func:`contrast_figure`), its files (:func:`draw_contrast_figures`),
the marker and dash of each family of policies (:func:`family_styles`, :data:`PRESET_MARKERS`) and
the error of a dataset with no policy on a window axis (:class:`NoKnownWindow`).

One figure per dataset and metric (and estimator), from the table of
:func:`delaycv.stats.contrasts.policy_contrasts`: each policy's mean difference to the reference policy
over the (seed, fold) pairs with its 95 % interval, against the policy's waiting window (log
scale), one line per learner and family of policies (e.g. hitl with N = 15d and with N = 90d, both
against P). One panel row per kind of window on the x axis (P, N, W, D), one panel column per
contrast (the policies' estimates against the reference policy, then their true values), so that
at most two panels stand side by side and the figure reads at the report's width; all panels share
the y axis, and the reference policy is the dashed line at 0. Each preset has one marker in every
study (:data:`PRESET_MARKERS`), and the families of one preset one dash each, by their fixed
window. Windows come from :func:`delaycv.protocol.policy_windows.window_table`, as in the sensitivity figure; a
policy it cannot place is named in the title, and a placed policy with no value (e.g. one that
released no label before the end of the stream) is named in its panel with the reason: never
dropped silently. A contrast with no value at all while another has some (the corrected estimate
of a metric it does not estimate, such as popt) gets no panels: the title says so with the
tables' note.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, NullLocator

from delaycv.common.errors import DelaycvError
from delaycv.figures.rows import one_estimator, select_rows
from delaycv.figures.style import (
    DPI,
    FORMATS,
    MAX_COLUMNS,
    figure_style,
    figure_title,
    figure_width,
    learner_styles,
    legend,
    new_figure,
    note_beside,
    save_figure,
    slug,
    window_unit,
)
from delaycv.metrics.properties import read_over
from delaycv.protocol.policy_windows import axis_names, window_table
from delaycv.stats.checkpoints import describe_at

log = logging.getLogger(__name__)

#: One marker per preset, the same in every study (a family's marker never depends on which
#: other families the study has): delay circles, verification triangles, hitl squares, a general
#: policy diamonds; windows given as they are (``windows=``) crosses.
PRESET_MARKERS = {"delay": "o", "verification": "^", "hitl": "s", "general": "D", "given": "X"}
#: Dash patterns of the families of one preset, in the order of their fixed window (hitl with
#: N = 15d solid, N = 90d dashed, ...).
_FAMILY_DASHES = ["-", "--", "-.", ":"]
_CONTRAST_ORDER = {"observed": 0, "corrected": 1, "true": 2}


def family_styles(placed: pd.DataFrame) -> dict[str, tuple[str, object]]:
    """The (marker, dash) of each family of policies, in drawing order.

    The marker of its preset (:data:`PRESET_MARKERS`), the dash by the rank of the family among
    the preset's families, in the order of their fixed windows as durations (so that hitl with
    N = 15d is solid and N = 90d dashed in every study that has both).

    Parameters
    ----------
    placed : pandas.DataFrame
        Rows of :func:`delaycv.protocol.policy_windows.window_table` (a column ``family``).

    Returns
    -------
    dict of str to tuple
        family -> (marker, dash), by preset (in the order of :data:`PRESET_MARKERS`), then by
        fixed window.

    Examples
    --------
    >>> placed = pd.DataFrame({"family": ["hitl, N = 90d", "delay", "hitl, N = 15d"]})
    >>> family_styles(placed)
    {'delay': ('o', '-'), 'hitl, N = 15d': ('s', '-'), 'hitl, N = 90d': ('s', '--')}
    """
    from delaycv.protocol.durations import parse_window

    def fixed_key(family: str) -> tuple:
        parts = family.split(", ")[1:]  # "hitl, N = 15d" -> ["N = 15d"]
        key = []
        for part in parts:
            value = part.split(" = ", 1)[-1]
            try:
                w = parse_window(value)
                key.append((0, w.unit != "s", w.amount, ""))
            except DelaycvError:  # an inspection error part: by its text
                key.append((1, False, 0, part))
        return tuple(key)

    styles: dict[str, tuple[str, object]] = {}
    by_preset: dict[str, list[str]] = {}
    for family in dict.fromkeys(placed["family"]):
        by_preset.setdefault(family.split(",")[0], []).append(family)
    presets = [*PRESET_MARKERS, *sorted(set(by_preset) - set(PRESET_MARKERS))]
    for preset in (p for p in presets if p in by_preset):
        members = by_preset[preset]
        for i, family in enumerate(sorted(members, key=fixed_key)):
            marker = PRESET_MARKERS.get(preset, "v")
            styles[family] = (marker, _FAMILY_DASHES[i % len(_FAMILY_DASHES)])
    return styles


def last_at(contrasts: pd.DataFrame) -> str:
    """The requested position (``at``) that the figure shows.

    Parameters
    ----------
    contrasts : pandas.DataFrame
        Contrasts with columns ``checkpoint`` and ``at``.

    Returns
    -------
    str
        The position with the largest checkpoint among those with a test (``"last"`` with the
        default request).

    Raises
    ------
    DelaycvError
        No contrast has a checkpoint.

    Examples
    --------
    >>> last_at(pd.DataFrame({"checkpoint": [100, 400, None], "at": ["25%", "last", "1y"]}))
    'last'
    """
    found = contrasts[contrasts["checkpoint"].notna()]
    if found.empty:
        raise DelaycvError("no contrast with a checkpoint to draw")
    top = found["checkpoint"].max()
    return str(found.loc[found["checkpoint"] == top, "at"].iloc[0])


class NoKnownWindow(DelaycvError):
    """No policy of a dataset (but the reference policy) has a known waiting window: no contrast
    figure (its message names the policies)."""


@dataclass
class _Contrasts:
    """What the contrast figure of one dataset, metric and estimator draws."""

    data: pd.DataFrame  # the contrasts at the checkpoint drawn
    estimator: str
    at: str
    checkpoint: int
    reference_policy: str
    placed: pd.DataFrame  # window_table's rows of the policies but the reference policy
    unplaced: list[str]
    axes_keys: np.ndarray  # (varies, unit) of each panel row
    references: list[str]  # the contrasts, one per panel column
    without: dict[str, str]  # contrasts with no value at all, not drawn -> the tables' note
    learners: list[str]
    styles: dict[str, dict]
    family_style: dict[str, tuple[str, object]]


def _contrasts(contrasts, *, dataset, metric, estimator, at, windows, specs) -> _Contrasts:
    """The contrasts drawn, the policies' windows and the panels' layout."""
    data = select_rows(contrasts, dataset=dataset, metric=metric)
    data = data[data["checkpoint"].notna()]
    if data.empty:
        raise DelaycvError(f"no contrast of {metric!r} in dataset {dataset!r}")
    estimator = one_estimator(data, estimator)
    data = select_rows(data, estimator=estimator)
    at = last_at(data) if at is None else at
    data = data[data["at"] == at]
    data = data[data["checkpoint"] == data["checkpoint"].max()]
    reference_policy = str(data["reference_policy"].iloc[0])
    policies = list(dict.fromkeys(data["policy"]))
    placed = window_table(policies, windows, specs=specs)
    placed = placed[placed["policy"] != reference_policy]
    unplaced = [p for p in policies if p not in set(placed["policy"])]
    axes_keys = (
        placed[["varies", "unit"]].drop_duplicates().sort_values(["varies", "unit"]).to_numpy()
    )
    if not len(axes_keys):
        raise NoKnownWindow(
            f"no policy of dataset {dataset!r} has a known waiting window: {', '.join(unplaced)}"
        )
    learners = sorted(data["learner"].unique())
    references = sorted(set(data["reference"]), key=lambda r: _CONTRAST_ORDER.get(r, 2))
    without = _without_values(data, references)
    return _Contrasts(
        data=data,
        estimator=estimator,
        at=at,
        checkpoint=int(data["checkpoint"].iloc[0]),
        reference_policy=reference_policy,
        placed=placed,
        unplaced=unplaced,
        axes_keys=axes_keys,
        references=[r for r in references if r not in without],
        without=without,
        learners=learners,
        styles=learner_styles(learners),
        family_style=family_styles(placed),
    )


def _contrast_lines(ax, c: _Contrasts, rows_here: pd.DataFrame) -> None:
    """Per learner and family, the differences with their intervals (learners dodged apart)."""
    families = list(c.family_style)  # by preset, then by fixed window (family_styles' order)
    for k, learner in enumerate(c.learners):
        dodge = 1.0 + 0.035 * (k - (len(c.learners) - 1) / 2)
        for family in families:
            cur = rows_here[
                (rows_here["learner"] == learner) & (rows_here["family"] == family)
            ].sort_values("x")
            if cur.empty:
                continue
            low = (cur["difference"] - cur["ci_low"]).to_numpy(float)
            high = (cur["ci_high"] - cur["difference"]).to_numpy(float)
            marker, dash = c.family_style[family]
            ax.errorbar(
                cur["x"].to_numpy(float) * dodge,
                cur["difference"].to_numpy(float),
                yerr=np.vstack([np.nan_to_num(low), np.nan_to_num(high)]),
                color=c.styles[learner]["color"],
                linestyle=dash,
                marker=marker,
                markersize=3.8,
                lw=1.3,
                capsize=2,
                elinewidth=0.8,
                zorder=3,
            )


def _empty_note(ax, rows_here: pd.DataFrame, varies, scale, unit_name) -> None:
    """Beside their windows, the policies of the panel with no value, and why."""
    empty = rows_here[~np.isfinite(rows_here["difference"].to_numpy(float))]
    if empty.empty:
        return
    names = ", ".join(
        f"{p} ({varies} = {w / scale:g} {unit_name})"
        for p, w in empty[["policy", "window"]].drop_duplicates().to_numpy()
    )
    # the note's first part says why (the rest repeats "no value to test")
    reasons = sorted({str(n).split(":")[0] for n in empty["note"] if n})
    text = f"no value at {names}: " + "; ".join(reasons or ["no pair of values"])
    note_beside(ax, text, float(empty["x"].max()))


def _contrast_panel(ax, c: _Contrasts, on_axis, reference, varies, unit) -> None:
    """One contrast (``reference``) of the policies on one kind of window (``on_axis``)."""
    scale, unit_name = window_unit(on_axis["window"].to_numpy(), unit)
    positive = np.sort(on_axis.loc[on_axis["window"] > 0, "window"].unique()) / scale
    zero_at = positive[0] / 3 if len(positive) else 1.0
    ax.axhline(0.0, color="#555555", lw=1.0, ls="--", zorder=1)
    rows_here = c.data[c.data["reference"] == reference].merge(
        on_axis[["policy", "family", "window"]], on="policy"
    )
    rows_here["x"] = np.where(rows_here["window"] > 0, rows_here["window"] / scale, zero_at)
    _contrast_lines(ax, c, rows_here)
    ax.set_xscale("log")
    ax.set_xlim(min([*positive, zero_at]) / 1.6, max([*positive, zero_at]) * 1.6)
    _empty_note(ax, rows_here, varies, scale, unit_name)
    ticks = list(positive)
    tick_labels = [f"{v:g}" for v in positive]
    if (on_axis["window"] == 0).any():
        ticks.append(zero_at)
        tick_labels.append("0")
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.set_xticklabels(tick_labels)
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel(f"{axis_names().get(varies, 'window')} ({unit_name}, log scale)")


def _contrast_handles(c: _Contrasts) -> list:
    """The legend's entries: learners' colours, families' markers and dashes, the zero line."""
    handles = [Line2D([], [], color=c.styles[lr]["color"], lw=1.6, label=lr) for lr in c.learners]
    for family, (marker, dash) in c.family_style.items():
        handles.append(Line2D([], [], color="#444444", marker=marker, linestyle=dash, label=family))
    handles.append(
        Line2D([], [], color="#555555", linestyle="--", label=f"{c.reference_policy} (0)")
    )
    return handles


def _without_values(data: pd.DataFrame, references: list[str]) -> dict[str, str]:
    """The contrasts (references) with no value for any policy and learner while another has
    some (the corrected estimate of a metric it does not estimate): not drawn, each with the
    note of its rows (the one they share, else a general one). When none has a value (no policy
    released a label), every panel is drawn with its own notes."""
    finite = np.isfinite(data["difference"].to_numpy(float))
    empty = [r for r in references if not finite[(data["reference"] == r).to_numpy()].any()]
    if len(empty) == len(references):
        return {}
    without = {}
    for r in empty:
        rows = data[data["reference"] == r]
        notes = set(rows["note"]) if "note" in rows.columns else set()
        label = str(rows["contrast"].iloc[0])
        note = notes.pop() if len(notes) == 1 and "" not in notes else "no value in any contrast"
        without[r] = f"{label} not drawn: {note}"
    return without


def _contrast_title(c: _Contrasts, dataset: str, metric: str, effort_scope) -> str:
    """The title: what is drawn, where, and the policies not on a window axis."""
    where = (
        f"checkpoint {c.checkpoint}"
        if c.at in ("last", "all")
        else f"{describe_at(c.at)}, checkpoint {c.checkpoint}"
    )
    title = (
        f"{dataset}: {metric}, each policy minus {c.reference_policy} against the waiting window"
        f"\n({where}; {read_over(metric, c.estimator, effort_scope)})"
    )
    if c.unplaced:
        title += f"\nnot on a window axis: {', '.join(c.unplaced)}"
    for note in c.without.values():
        title += f"\n{note}"
    return title


def contrast_figure(
    contrasts: pd.DataFrame,
    *,
    dataset: str,
    metric: str,
    estimator: str | None = None,
    effort_scope: str | None = None,
    at: str | None = None,
    windows: Mapping[str, str | int] | None = None,
    specs: Mapping[str, object] | None = None,
) -> Figure:
    """Difference to the reference policy of ``metric`` against the waiting window.

    The figure of the module docstring, at the requested position ``at``.

    Parameters
    ----------
    contrasts : pandas.DataFrame
        The table of :func:`delaycv.stats.contrasts.policy_contrasts`.
    dataset : str
        The dataset drawn.
    metric : str
        The metric drawn.
    estimator : str, optional
        The estimator drawn; None: the only one of the dataset's contrasts.
    effort_scope : str, optional
        The scope of the effort-aware measures (the fold table's ``effort_scope`` column:
        ``cumulative``, ``sliding(W)``), which the title names for such a ``metric`` instead
        of the estimator (:func:`~delaycv.metrics.properties.read_over`); None: unnamed.
    at : str, optional
        The requested position drawn; None: :func:`last_at` (with ``"all"``, the last
        checkpoint).
    windows : mapping of str to str or int, optional
        policy -> its window, used as given (:func:`delaycv.protocol.policy_windows.window_table`).
    specs : mapping of str to spec, optional
        policy -> the spec the runs used: the policies' windows.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    NoKnownWindow
        No policy but the reference policy has a known waiting window.
    DelaycvError
        No contrast of ``metric`` in ``dataset``, or several estimators and none named.
    """
    c = _contrasts(
        contrasts,
        dataset=dataset,
        metric=metric,
        estimator=estimator,
        at=at,
        windows=windows,
        specs=specs,
    )
    # at most two panels side by side, so that the figure reads in the report at its width. Two
    # kinds of window (hitl's P and verification's W, as RQ3 sets them against each other): a
    # row per contrast, the two kinds side by side on its y axis. Otherwise a row per kind of
    # window (P, N, W, D), a column per contrast (three contrasts, with the corrected
    # estimate's: two rows of panels per kind of window)
    kinds, n = len(c.axes_keys), len(c.references)
    if kinds == MAX_COLUMNS:
        cols, rows = MAX_COLUMNS, n
        place = {(j, i): (i, j) for j in range(kinds) for i in range(n)}
    else:
        cols = min(n, MAX_COLUMNS)
        per_kind = -(-n // cols)
        rows = kinds * per_kind
        place = {
            (j, i): (j * per_kind + i // cols, i % cols) for j in range(kinds) for i in range(n)
        }
    labels = {
        r: str(c.data.loc[c.data["reference"] == r, "contrast"].iloc[0]) for r in c.references
    }
    axes_style, context = figure_style()
    with axes_style, context:
        fig = new_figure(figure_width(cols), 3.0 * rows + 1.8)
        axes = fig.subplots(rows, cols, squeeze=False, sharey=True)
        for j, (varies, unit) in enumerate(c.axes_keys):
            on_axis = c.placed[(c.placed["varies"] == varies) & (c.placed["unit"] == unit)]
            for i, reference in enumerate(c.references):
                row, col = place[j, i]
                ax = axes[row][col]
                _contrast_panel(ax, c, on_axis, reference, varies, unit)
                if col == 0:
                    ax.set_ylabel(f"{metric}: policy − {c.reference_policy}")
                ax.set_title(labels[reference])
        used = set(place.values())
        for row in range(rows):
            for col in range(cols):
                if (row, col) not in used:
                    axes[row][col].set_visible(False)
        legend(
            fig, _contrast_handles(c), "learner / policies / bars: 95 % CI over (seed, fold) pairs"
        )
        figure_title(fig, _contrast_title(c, dataset, metric, effort_scope))
    return fig


def draw_contrast_figures(
    contrasts: pd.DataFrame,
    out_dir: str | Path,
    *,
    metric: str,
    effort_scope: str | None = None,
    windows: Mapping[str, str | int] | None = None,
    specs: Mapping[str, object] | None = None,
    formats: Sequence[str] = FORMATS,
    dpi: int = DPI,
) -> list[Path]:
    """Write the contrast figure of every dataset (and estimator) with a contrast of ``metric``.

    Files ``contrasts_<dataset>_<metric>[_<estimator>].<format>`` (:func:`contrast_figure`); the
    estimator's part only when the dataset has several estimators. A dataset none of whose
    policies has a known window gets no figure and a warning (logger
    ``delaycv.figures.contrasts``).

    Parameters
    ----------
    contrasts : pandas.DataFrame
        The table of :func:`delaycv.stats.contrasts.policy_contrasts`.
    out_dir : str or pathlib.Path
        The folder the files are written into (it must exist).
    metric : str
        The metric drawn.
    effort_scope : str, optional
        The scope of the effort-aware measures (the fold table's ``effort_scope`` column:
        ``cumulative``, ``sliding(W)``), which the titles name for such a ``metric`` instead
        of the estimator (:func:`~delaycv.metrics.properties.read_over`); None: unnamed.
    windows : mapping of str to str or int, optional
        policy -> its window, used as given.
    specs : mapping of str to spec, optional
        policy -> the spec the runs used: the policies' windows.
    formats : sequence of str, default ``("png", "pdf")``
        One file per format of each figure.
    dpi : int, default 200
        The resolution of the raster formats.

    Returns
    -------
    list of pathlib.Path
        The files written, dataset by dataset, in the order of ``formats``.
    """
    out_dir = Path(out_dir)
    written: list[Path] = []
    data = contrasts[(contrasts["metric"] == metric) & contrasts["checkpoint"].notna()]
    for dataset in sorted(data["dataset"].unique()):
        sub = data[data["dataset"] == dataset]
        estimators = sorted(sub["estimator"].unique())
        for est in estimators:
            tail = f"_{slug(est)}" if len(estimators) > 1 else ""
            try:
                fig = contrast_figure(
                    sub,
                    dataset=dataset,
                    metric=metric,
                    estimator=est,
                    effort_scope=effort_scope,
                    windows=windows,
                    specs=specs,
                )
            except NoKnownWindow as err:
                log.warning("no contrasts figure: %s", err)
                continue
            stem = out_dir / f"contrasts_{slug(dataset)}_{slug(metric)}{tail}"
            written.extend(save_figure(fig, stem, formats, dpi))
    return written
