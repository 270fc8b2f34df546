"""The figures of the rankings across datasets: critical-difference diagrams and SK-ESD box plots.

This module owns both drawings (:func:`cd_diagram`, :func:`sk_boxplot`) and the files of a study's
rankings (:func:`draw_ranking_figures`). For every family of
:func:`delaycv.stats.families.rank_across` (what is ranked, within which learner or policy,
reference, estimator, requested position, metric) of one metric and reference: Demšar's
critical-difference diagram of the Friedman/Nemenyi result (:func:`cd_diagram`) when the family
was tested, and the box plot of the treatments' per-dataset values ordered and coloured by their
Scott-Knott ESD groups (:func:`sk_boxplot`) when it has groups. A family without a test (fewer
than 3 datasets, a missing value, a single treatment) gets no figure; the rankings page gives its
note. A treatment with no value on any dataset (e.g. a policy that released no label before the
end of the stream) is not ranked: the figures of its family name it and say why, and a family none
of whose treatments has a value has no figure.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from delaycv.common import defaults
from delaycv.common.errors import DelaycvError
from delaycv.figures.style import (
    DPI,
    FIGURE_WIDTH,
    FORMATS,
    PALETTE,
    TEXT_COLOUR,
    boxes_with_points,
    figure_note,
    figure_style,
    figure_title,
    metric_label,
    new_figure,
    save_figure,
    slug,
)
from delaycv.stats.checkpoints import describe_at
from delaycv.stats.families import FAMILY, Rankings, family_values


def _stem(kind: str, family: dict, estimators: int) -> str:
    parts = [kind, family["ranked"], family["within"], family["at"], family["metric"]]
    if estimators > 1:
        parts.append(family["estimator"])
    return "_".join(slug(p) for p in parts)


_PLURAL = {"learner": "learners", "policy": "policies"}


def _title(family: dict) -> str:
    within = "policy" if family["ranked"] == "learner" else "learner"
    return (
        f"{_PLURAL[family['ranked']]}, {within} {family['within']}: {family['metric']}\n"
        f"{family['reference']} labels, at {describe_at(family['at'])}"
    )


def draw_ranking_figures(
    table: pd.DataFrame,
    rankings: Rankings,
    out_dir: str | Path,
    *,
    metric: str,
    reference: str,
    formats: Sequence[str] = FORMATS,
    dpi: int = DPI,
    families: Collection[tuple] | None = None,
) -> list[Path]:
    """Write the figures of every tested family of ``rankings`` with this metric and reference
    (of those among ``families``, when given).

    Files ``cd_<ranked>_<within>_<at>_<metric>[_<estimator>].<format>`` (critical-difference
    diagram, :func:`cd_diagram`) and ``sk_<...>`` (Scott-Knott ESD box plot, :func:`sk_boxplot`);
    the estimator's part only when the rankings have several estimators.

    Parameters
    ----------
    table : pandas.DataFrame
        The per-fold table ``rankings`` was computed from (the box plots' values).
    rankings : delaycv.stats.families.Rankings
        The rankings across datasets.
    out_dir : str or pathlib.Path
        The folder the files are written into (it must exist).
    metric : str
        The metric of the families drawn.
    reference : str
        The reference of the families drawn.
    formats : sequence of str, default ``("png", "pdf")``
        One file per format of each figure.
    dpi : int, default 200
        The resolution of the raster formats.
    families : collection of tuple, optional
        The keys of the families to draw (items of ``rankings.families()``); None: every one.

    Returns
    -------
    list of pathlib.Path
        The files written, in family order.
    """
    out_dir = Path(out_dir)
    written: list[Path] = []
    sk = rankings.scott_knott
    estimators = rankings.friedman["estimator"].nunique()
    friedman = rankings.friedman
    for key in rankings.families():
        family = dict(zip(FAMILY, key, strict=True))
        if family["metric"] != metric or family["reference"] != reference:
            continue
        if families is not None and key not in families:
            continue
        rows = friedman[_in_family(friedman, family)]
        if rows["mean"].isna().all():  # no treatment has a value (e.g. a policy that released
            continue  # no label): nothing to draw, the page gives the note
        note = _unranked_note(rows)
        result = rankings.result(key)
        if result.tested:
            fig = cd_diagram(result, title=_title(family), note=note)
            written += save_figure(fig, out_dir / _stem("cd", family, estimators), formats, dpi)
        groups = sk[_in_family(sk, family)]
        if groups.empty or groups["group"].isna().all():  # a family with a note: no groups
            continue
        groups = groups[groups["group"].notna()]  # the treatments that were ranked
        values = family_values(table, family)
        fig = sk_boxplot(
            values[[str(t) for t in groups["treatment"]]].dropna(),
            groups.sort_values("rank"),
            title=_title(family),
            ylabel=metric_label(metric),
            note=note,
        )
        written += save_figure(fig, out_dir / _stem("sk", family, estimators), formats, dpi)
    return written


def _in_family(frame: pd.DataFrame, family: dict) -> pd.Series:
    mask = pd.Series(True, index=frame.index)
    for column, value in family.items():
        mask &= frame[column].astype(str) == str(value)
    return mask


def _unranked_note(rows: pd.DataFrame) -> str | None:
    """A line naming the treatments of a family that were not ranked (no value on any dataset),
    with the reason the table gives; None when every treatment was ranked."""
    absent = rows[rows["mean"].isna()]
    if absent.empty:
        return None
    names = ", ".join(str(t) for t in absent["treatment"])
    reason = str(absent["note"].iloc[0]).removesuffix(": not ranked")
    return f"not ranked: {names} ({reason})"


def _cd_marks(ax, result) -> None:
    """The critical difference drawn above the axis and its tick labels, from rank 1."""
    ax.plot([1, 1 + result.cd], [1.6, 1.6], color="#000000", linewidth=1.5)
    ax.plot([1, 1], [1.45, 1.75], color="#000000", linewidth=1.5)
    ax.plot([1 + result.cd] * 2, [1.45, 1.75], color="#000000", linewidth=1.5)
    ax.text(1 + result.cd / 2, 1.85, f"CD = {result.cd:.2f}", ha="center", fontsize=9)


def _suptitle(fig: Figure, title: str | None, text: str) -> None:
    """``title`` (if any) over ``text``, the figure's account of its test, as the suptitle."""
    figure_title(fig, f"{title}\n{text}" if title else text)


class _Treatment(str):
    """A treatment's name whose hash is its place in the mean-rank order (0 = best).

    scikit-posthocs finds the diagram's bars as sets of names and draws each bar through its
    names in the set's order; a ``str``'s own hash is salted per process (``PYTHONHASHSEED``), so
    with plain names the diagram's file changed from run to run. Equal to its name as a string.
    """

    place: int

    def __new__(cls, name: str, place: int) -> _Treatment:
        made = super().__new__(cls, name)
        made.place = place
        return made

    def __hash__(self) -> int:
        return self.place


def _relabelled(index: pd.Index, names: dict[str, _Treatment]) -> pd.Index:
    """``index`` with each name replaced by its :class:`_Treatment` (an object index: pandas
    would store plain strings)."""
    return pd.Index([names[t] for t in index], dtype=object)


def cd_diagram(result, *, title: str | None = None, note: str | None = None) -> Figure:
    """Demšar's critical-difference diagram of a Friedman/Nemenyi result.

    The treatments stand at their mean rank on an axis from 1 (best) to k; a bar joins the
    treatments that Nemenyi's test does not tell apart (p >= alpha: mean ranks within CD of each
    other), and the CD itself is drawn above the axis. Drawn by scikit-posthocs'
    ``critical_difference_diagram``, in black (names, ranks and their lines: colours would repeat
    beyond the palette's eight, and its yellow does not read on white).

    Parameters
    ----------
    result : delaycv.stats.friedman.FriedmanResult
        The result of the family's test.
    title : str, optional
        The figure's title (over the account of the test).
    note : str, optional
        A line written under the diagram (e.g. the treatments that were not ranked).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    DelaycvError
        ``result`` has no test (``result.note``).
    """
    import scikit_posthocs as sp  # import on use (the other figures do not need it)

    if result.note:
        raise DelaycvError(f"no critical-difference diagram: {result.note}")
    k = result.k
    names = {t: _Treatment(t, i) for i, t in enumerate(result.mean_ranks.sort_values().index)}
    palette = dict.fromkeys(names.values(), TEXT_COLOUR)  # colours would repeat: black, readable
    ranks = result.mean_ranks.set_axis(_relabelled(result.mean_ranks.index, names))
    nemenyi = result.nemenyi.set_axis(_relabelled(result.nemenyi.index, names), axis=0)
    nemenyi = nemenyi.set_axis(_relabelled(result.nemenyi.columns, names), axis=1)
    axes_style, context = figure_style()
    with axes_style, context:
        fig = new_figure(min(FIGURE_WIDTH, max(6.0, 0.45 * k + 4.0)), 2.2 + 0.3 * k)
        ax = fig.subplots()
        sp.critical_difference_diagram(
            ranks,
            nemenyi,
            alpha=result.alpha,
            ax=ax,
            color_palette=palette,
            label_fmt_left="{label} ({rank:.2f})",
            label_fmt_right="({rank:.2f}) {label}",
            label_props={"fontsize": 9},
            crossbar_props={"linewidth": 2.5, "color": "#444444"},
            text_h_margin=0.1,
        )
        _cd_marks(ax, result)
        ax.set_ylim(ax.get_ylim()[0] - 0.3, 2.6)
        ax.set_xlim(1, max(k, 2))
        ax.set_xticks(range(1, max(k, 2) + 1))
        ax.grid(False)
        ax.set_xlabel("mean rank (1 = best)", fontsize=9)
        if note:
            figure_note(fig, note)
        ax.xaxis.set_label_position("top")
        how = "exact" if result.permutation_exact else "random"
        text = (
            f"Friedman chi2 = {result.statistic:.2f}, p = {result.p_value:.3g} (chi-square), "
            f"{result.p_permutation:.3g} (permutation, {how}); N = {result.n} "
            f"datasets; a bar joins treatments Nemenyi's test does not tell apart "
            f"(alpha = {result.alpha})"
        )
        _suptitle(fig, title, text)
    return fig


def _group_marks(ax, order, group_of, top: float) -> None:
    """Each treatment's group number above its box, and a dashed line between two groups."""
    for i, t in enumerate(order):
        ax.annotate(
            str(int(group_of[t])),
            (i, top),
            xytext=(0, 6),
            textcoords="offset points",
            ha="center",
            fontsize=9,
            color=TEXT_COLOUR,
        )
    boundaries = [
        i + 0.5 for i in range(len(order) - 1) if group_of[order[i]] != group_of[order[i + 1]]
    ]
    for x in boundaries:
        ax.axvline(x, color="#888888", linestyle="--", linewidth=0.8)


def _sk_axes(ax, order, ylabel: str | None) -> None:
    """The box plot's labels and margins (slanted treatment names when there are many)."""
    ax.set_xlabel("")
    ax.set_ylabel(ylabel or "value")
    ax.margins(y=0.12)
    if len(order) > 4:
        for label in ax.get_xticklabels():
            label.set_rotation(30)
            label.set_horizontalalignment("right")


def sk_boxplot(
    values: pd.DataFrame,
    groups: pd.DataFrame,
    *,
    title: str | None = None,
    ylabel: str | None = None,
    seed: int = defaults.JITTER_SEED,
    note: str | None = None,
) -> Figure:
    """Box and points per treatment, ordered and coloured by Scott-Knott ESD group.

    The group number stands above each box and a dashed line between groups. The points'
    sideways jitter comes from ``numpy.random.default_rng(seed)``.

    Parameters
    ----------
    values : pandas.DataFrame
        One column per treatment, one row per observation (dataset).
    groups : pandas.DataFrame
        The table of :func:`delaycv.stats.scott_knott.scott_knott_esd` (columns ``treatment`` and
        ``group``), in the order drawn (best first).
    title : str, optional
        The figure's title (over the account of the groups).
    ylabel : str, optional
        The y axis's label (default ``"value"``).
    seed : int, default 0
        The seed of the jitter.
    note : str, optional
        A line written under the panel (e.g. the treatments that were not ranked).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    DelaycvError
        A treatment of ``groups`` is not a column of ``values``.
    """
    order = [str(t) for t in groups["treatment"]]
    missing = [t for t in order if t not in values.columns]
    if missing:
        raise DelaycvError(f"no values of treatments {missing} (columns: {list(values.columns)})")
    group_of = dict(zip(order, groups["group"], strict=True))
    colour = {t: PALETTE[(int(g) - 1) % len(PALETTE)] for t, g in group_of.items()}
    long = values[order].melt(var_name="treatment", value_name="value")
    rng = np.random.default_rng(seed)
    axes_style, context = figure_style()
    with axes_style, context:
        fig = new_figure(min(FIGURE_WIDTH, max(6.0, 0.55 * len(order) + 1.8)), 4.0)
        ax = fig.subplots()
        boxes_with_points(ax, long, "treatment", "value", order, colour, rng)
        top = np.nanmax(values[order].to_numpy(dtype=float))
        _group_marks(ax, order, group_of, top)
        _sk_axes(ax, order, ylabel)
        if note:
            figure_note(fig, note)
        n_groups = len(set(group_of.values()))
        text = (
            f"Scott-Knott ESD: {n_groups} group{'s' if n_groups != 1 else ''} (the number above "
            f"each box; 1 = best); {len(values)} observations per treatment"
        )
        _suptitle(fig, title, text)
    return fig
