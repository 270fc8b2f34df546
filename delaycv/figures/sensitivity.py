"""Figure 5, the sensitivity to the waiting window.

This module owns :func:`sensitivity` (a metric at the last checkpoint against the waiting window,
per learner and reference, one panel per family of policies), where it puts each policy
(:func:`window_placement`), how it names a policy it cannot place (:func:`unplaced_text`,
:func:`placement_hint`, :data:`PLACE_HINT`) and the error of a dataset with no grid of windows
(:class:`NoPolicyGrid`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, NullLocator

from delaycv.common.errors import DelaycvError
from delaycv.figures.rows import (
    fold_stats,
    no_value_reason,
    one_estimator,
    policy_order,
    select_rows,
)
from delaycv.figures.style import (
    IDEAL_MARKER,
    figure_style,
    figure_title,
    figure_width,
    grid_shape,
    learner_styles,
    legend,
    metric_label,
    new_figure,
    note_beside,
    reference_marker,
    window_unit,
)
from delaycv.metrics.properties import read_over
from delaycv.protocol.policy_windows import axis_names, policies_windows, window_table
from delaycv.stats.checkpoints import last_checkpoints

#: How to place a policy whose windows the sensitivity figure does not know (notes and errors).
PLACE_HINT = (
    "give the specs the runs used, policy_specs={policy: spec} or delaycv plot --runs DIR (their "
    "run.json), or a window, windows={policy: window} or delaycv plot --window POLICY=WINDOW"
)
#: The line style of each reference (another reference: dotted).
_REF_STYLE = {"true": "-", "observed": "--", "corrected": "-."}


class NoPolicyGrid(DelaycvError):
    """A dataset has no family of two or more policies whose windows differ: no sensitivity
    figure (its message names every policy and why it is not on a window axis)."""


def _why_unplaced(policy, w, full, windows, policy_specs) -> str:
    """Why ``policy`` (``w``: the windows its spec or name says) is not on a window axis."""
    from delaycv.protocol.policies import PRESETS

    if windows is not None and policy not in windows:
        return "no window given"
    if windows is None and policy_specs is not None and policy not in policy_specs:
        return "no spec given"
    if windows is None and w is None and policy_specs is not None:
        return "a general policy that no preset describes"
    if windows is None and w is None:
        return "name is not a preset pattern"
    if windows is None and not PRESETS[w.preset].windows:  # (ideal)
        return "no grid of windows to join"
    family = full.loc[full["policy"] == policy, "family"].iloc[0]
    return f"the only window of family {family!r}"


def window_placement(
    policies: Iterable[str],
    windows: Mapping[str, str | int] | None = None,
    policy_specs: Mapping[str, object] | None = None,
) -> tuple[pd.DataFrame, dict[str, str]]:
    """Where the sensitivity figure puts each policy: ``(frame, unplaced)``.

    Each policy's windows are those of its spec in ``policy_specs`` (the specs the runs used;
    names are then only labels), else those its name says. The figure names the policies it does
    not place; it never drops one silently.

    Parameters
    ----------
    policies : iterable of str
        The policies.
    windows : mapping of str to str or int, optional
        policy -> its window, used as given (a policy not named is not placed).
    policy_specs : mapping of str to spec, optional
        policy -> the spec the runs used.

    Returns
    -------
    frame : pandas.DataFrame
        :func:`delaycv.protocol.policy_windows.window_table` restricted to the families that make a line
        (two or more distinct non-zero windows).
    unplaced : dict of str to str
        Every other policy, in the order given, -> why it is not on a window axis: no spec of it
        was given (with ``policy_specs``), its spec is a general policy that no preset describes,
        its name is not a preset pattern (without specs or windows), no window was given for it
        (with ``windows``), it is the only window of its family, or (``ideal``) no family in
        seconds makes a line.

    Examples
    --------
    >>> frame, unplaced = window_placement(["hitl_1d_90d", "hitl_7d_90d", "mine"])
    >>> frame["policy"].tolist(), unplaced
    (['hitl_1d_90d', 'hitl_7d_90d'], {'mine': 'name is not a preset pattern'})
    """
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
    unplaced = {
        policy: _why_unplaced(policy, parsed[policy], full, windows, policy_specs)
        for policy in policies
        if policy not in placed
    }
    return frame, unplaced


def placement_hint(unplaced: Mapping[str, str]) -> str:
    """How to place the policies of ``unplaced``, when one lacks a window the caller could give.

    Parameters
    ----------
    unplaced : mapping of str to str
        policy -> why it is not on a window axis (:func:`window_placement`).

    Returns
    -------
    str
        ``" (<PLACE_HINT>)"``, or ``""`` when no policy lacks a spec or window.

    Examples
    --------
    >>> placement_hint({"ideal": "no grid of windows to join"})
    ''
    """
    needs = any(r.startswith(("name", "no window", "no spec")) for r in unplaced.values())
    return f" ({PLACE_HINT})" if needs else ""


def unplaced_text(unplaced: Mapping[str, str]) -> str:
    """The policies not on a window axis, each with its reason, as one line.

    Parameters
    ----------
    unplaced : mapping of str to str
        policy -> why it is not on a window axis (:func:`window_placement`).

    Returns
    -------
    str

    Examples
    --------
    >>> unplaced_text({"a": "no spec given", "b": "no window given"})
    'a (no spec given), b (no window given)'
    """
    return ", ".join(f"{policy} ({reason})" for policy, reason in unplaced.items())


@dataclass
class _Axis:
    """The window axis of one family: its scale, unit, windows and where ``ideal`` stands."""

    fam: pd.DataFrame  # the family's rows of window_placement's frame
    scale: float
    unit_name: str
    positive: np.ndarray  # the non-zero windows, scaled
    zero_at: float  # the x of window 0 (ideal), left of the grid

    @classmethod
    def of(cls, fam: pd.DataFrame) -> _Axis:
        scale, unit_name = window_unit(fam["window"].to_numpy(), fam["unit"].iloc[0])
        positive = np.sort(fam.loc[fam["window"] > 0, "window"].unique()) / scale
        ratio = positive[-1] / positive[0] if len(positive) > 1 else 10.0
        zero_at = positive[0] / max(2.0, ratio ** (1 / max(len(positive), 2)))
        return cls(fam, scale, unit_name, positive, zero_at)


def _family_lines(ax, axis: _Axis, data, metric, learners, styles, refs) -> None:
    """Per learner and reference, the mean ± SD at each window (``ideal`` a point of its own)."""
    merged = data.merge(axis.fam[["policy", "window"]], on="policy")
    merged["x"] = np.where(merged["window"] > 0, merged["window"] / axis.scale, axis.zero_at)
    stats_ = fold_stats(merged, metric, ["learner", "reference", "x"])
    for learner in learners:
        for ref in sorted(refs, key=lambda r: r == "true"):  # filled true markers on top
            cur = stats_[(stats_["learner"] == learner) & (stats_["reference"] == ref)]
            if cur.empty:
                continue
            # ideal (window 0) is a separate point, not joined to the grid's line
            for joined in (True, False):
                part = cur[(cur["x"] != axis.zero_at) == joined]
                if part.empty:
                    continue
                ax.errorbar(
                    part["x"],
                    part["mean"],
                    yerr=part["sd"],
                    color=styles[learner]["color"],
                    linestyle=_REF_STYLE.get(ref, ":") if joined else "none",
                    marker=reference_marker(ref) if joined else IDEAL_MARKER,
                    markersize=4.5 if joined else 5.5,
                    lw=1.3,
                    capsize=2,
                    elinewidth=0.8,
                    markerfacecolor=styles[learner]["color"] if ref == "true" else "white",
                )


def _window_ticks(ax, axis: _Axis) -> None:
    """A log window axis with a tick at every window of the family, drawn or not."""
    fam = axis.fam
    ax.set_xscale("log")
    ticks = list(axis.positive) + ([axis.zero_at] if (fam["window"] == 0).any() else [])
    labels = [f"{v:g}" for v in axis.positive] + (
        ["ideal\n(0)"] if (fam["window"] == 0).any() else []
    )
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.set_xticklabels(labels)
    ax.xaxis.set_minor_locator(NullLocator())
    # every window of the family on the axis, drawn or not (a policy with no value)
    ax.set_xlim(min(ticks) / 1.6, max(ticks) * 1.6)


def _empty_note(ax, axis: _Axis, data, metric, empty) -> None:
    """Beside their windows, the policies of the family with no value (``empty``) and why."""
    letter = axis.fam["varies"].iloc[0]
    where = ", ".join(
        f"{p} ({letter} = {w / axis.scale:g} {axis.unit_name})" if w > 0 else p for p, w in empty
    )
    reasons = {no_value_reason(data[data["policy"] == p], metric) for p, _ in empty}
    text = f"no value at {where}: " + "; ".join(sorted(reasons))
    note_beside(ax, text, max(w / axis.scale if w > 0 else axis.zero_at for _, w in empty))


def _family_panel(ax, fam, data, metric, learners, styles, refs) -> None:
    """The lines of one family of policies on its window axis, and a note on policies with none."""
    axis = _Axis.of(fam)
    _family_lines(ax, axis, data, metric, learners, styles, refs)
    empty = [
        (p, w)
        for p, w in zip(fam["policy"], fam["window"], strict=True)
        if no_value_reason(data[data["policy"] == p], metric)
    ]
    _window_ticks(ax, axis)
    if empty:  # a policy with no value: its window is on the axis; say why beside it
        _empty_note(ax, axis, data, metric, empty)
    ax.set_xlabel(
        f"{axis_names().get(fam['varies'].iloc[0], 'window')} ({axis.unit_name}, log scale)"
    )


def _sensitivity_handles(styles, learners, refs, has_ideal: bool) -> list:
    """The legend's entries: learners' colours, references' lines, ``ideal``'s point, the bars."""
    handles = [Line2D([], [], color=styles[lr]["color"], lw=1.6, label=lr) for lr in learners]
    for ref in refs:
        handles.append(
            Line2D(
                [],
                [],
                color="#444444",
                linestyle=_REF_STYLE.get(ref, ":"),
                marker=reference_marker(ref),
                markerfacecolor="#444444" if ref == "true" else "white",
                label=f"{ref} labels",
            )
        )
    if has_ideal:
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
    return handles


def _last_rows(table, *, dataset, estimator, references):
    """The rows drawn (last checkpoint, the references asked for), their estimator and checkpoint."""
    estimator = one_estimator(select_rows(table, dataset=dataset), estimator)
    data = select_rows(table, dataset=dataset, estimator=estimator)
    last = int(last_checkpoints(data).loc[dataset])
    data = data[(data["checkpoint"] == last) & data["reference"].isin(list(references))]
    return data, estimator, last


def sensitivity(
    table: pd.DataFrame,
    *,
    dataset: str,
    metric: str,
    estimator: str | None = None,
    effort_scope: str | None = None,
    windows: Mapping[str, str | int] | None = None,
    references: Sequence[str] = ("true", "observed", "corrected"),
    policy_specs: Mapping[str, object] | None = None,
) -> Figure:
    """Figure 5: ``metric`` at the last checkpoint against the waiting window.

    Per learner the mean over (seed, fold) ± 1 SD, solid for true labels and dashed for observed
    ones; one panel per family of policies (see :func:`delaycv.protocol.policy_windows.window_table`);
    log-scaled window axis, with ``ideal`` (window 0) at the left end. The windows are those of
    the policies' specs in ``policy_specs`` (the specs the runs used), else those their names say
    (:func:`window_placement`); the title names the policies not placed.

    Parameters
    ----------
    table : pandas.DataFrame
        The merged per-fold checkpoint table, with a column ``metric``.
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
    windows : mapping of str to str or int, optional
        policy -> its window, used as given (:func:`window_placement`).
    references : sequence of str, default ``("true", "observed", "corrected")``
        The references drawn (those the table has).
    policy_specs : mapping of str to spec, optional
        policy -> the spec the runs used.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    NoPolicyGrid
        No family of two or more policies whose windows differ.
    """
    data, estimator, last = _last_rows(
        table, dataset=dataset, estimator=estimator, references=references
    )
    order = policy_order(data["policy"].unique(), policy_specs)
    frame, unplaced = window_placement(order, windows, policy_specs)
    families = sorted(frame["family"].unique())
    if not families:
        raise NoPolicyGrid(
            f"no policy grid in dataset {dataset!r}: sensitivity needs two or more policies whose "
            f"windows differ; policies: {unplaced_text(unplaced)}" + placement_hint(unplaced)
        )
    learners = sorted(data["learner"].unique())
    styles = learner_styles(learners)
    present = [r for r in references if r in set(data["reference"])]
    # a reference without a value of the metric (the corrected one of the effort-aware measures)
    # has no line: the title says so, and the legend does not list it
    valued = set(data.loc[data[metric].notna(), "reference"])
    refs = [r for r in present if r in valued]
    no_value = [r for r in present if r not in valued]
    rows, cols = grid_shape(len(families))
    axes_style, context = figure_style()
    with axes_style, context:
        fig = new_figure(figure_width(cols), 3.0 * rows + 1.6)
        axes = fig.subplots(rows, cols, squeeze=False, sharey=True)
        for i, family in enumerate(families):
            ax = axes[i // cols][i % cols]
            fam = frame[frame["family"] == family]
            _family_panel(ax, fam, data, metric, learners, styles, refs)
            ax.set_ylabel(metric_label(metric) if i % cols == 0 else "")
            ax.set_title(f"policies {family}")
        for j in range(len(families), rows * cols):
            axes[j // cols][j % cols].set_visible(False)
        has_ideal = bool((frame["window"] == 0).any())
        legend(fig, _sensitivity_handles(styles, learners, refs, has_ideal), "learner / reference")
        title = (
            f"{dataset}: sensitivity of {metric} to the waiting time\n"
            f"(last checkpoint, {last} instances; {read_over(metric, estimator, effort_scope)})"
        )
        for ref in no_value:
            title += f"\nno {ref} labels line: the {ref} reference has no value of {metric}"
        if unplaced:
            title += f"\nnot on a window axis: {unplaced_text(unplaced)}"
        figure_title(fig, title)
    return fig
