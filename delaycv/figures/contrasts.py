"""The figure of the policy contrasts: difference to the reference policy against the waiting window.

One figure per dataset and metric (and estimator), from the table of
:func:`delaycv.stats.contrasts.policy_contrasts`: each policy's mean difference to the reference policy
over the (seed, fold) pairs with its 95 % interval, against the policy's waiting window (log
scale), one line per learner and family of policies (e.g. hitl with N = 15d and with N = 90d, both
against P). One panel row per kind of window on the x axis (P, N, W, D), one panel column per
contrast (the policies' estimates against the reference policy, then their true values), so that
at most two panels stand side by side and the figure reads at the report's width; all panels share
the y axis, and the reference policy is the dashed line at 0. Each preset has one marker in every
study (:data:`PRESET_MARKERS`), and the families of one preset one dash each, by their fixed
window. Windows come from :func:`delaycv.stats.compare.window_table`, as in the sensitivity figure; a
policy it cannot place is named in the title, and a placed policy with no value (e.g. one that
released no label before the end of the stream) is named in its panel with the reason: never
dropped silently.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, NullLocator

from delaycv.common.errors import DelaycvError
from delaycv.figures.plots import (
    FORMATS,
    TITLE_SIZE,
    _legend,
    _new_figure,
    _note,
    _note_beside,
    _one_estimator,
    _select,
    _slug,
    _style,
    _width,
    _window_unit,
    learner_styles,
    save_figure,
)
from delaycv.protocol.policy_windows import axis_names, window_table

log = logging.getLogger("delaycv.figures.plots")

#: One marker per preset, the same in every study (a family's marker never depends on which
#: other families the study has): delay circles, verification triangles, hitl squares, a general
#: policy diamonds; windows given as they are (``windows=``) crosses.
PRESET_MARKERS = {"delay": "o", "verification": "^", "hitl": "s", "general": "D", "given": "X"}
#: Dash patterns of the families of one preset, in the order of their fixed window (hitl with
#: N = 15d solid, N = 90d dashed, ...).
_FAMILY_DASHES = ["-", "--", "-.", ":"]
_CONTRAST_ORDER = {"observed": 0, "true": 1}


def family_styles(placed: pd.DataFrame) -> dict[str, tuple[str, object]]:
    """(marker, dash) of each family of :func:`delaycv.stats.compare.window_table`'s ``placed`` rows,
    in drawing order (by preset, in the order of :data:`PRESET_MARKERS`, then by fixed window):
    the marker of its preset, the dash by the rank of the family among the preset's families, in
    the order of their fixed windows as durations (so hitl with N = 15d is solid and N = 90d
    dashed in every study that has both)."""
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
    """The requested position (``at``) that the figure shows: the one with the largest checkpoint
    among those with a test (``"last"`` with the default request)."""
    found = contrasts[contrasts["checkpoint"].notna()]
    if found.empty:
        raise DelaycvError("no contrast with a checkpoint to draw")
    top = found["checkpoint"].max()
    return str(found.loc[found["checkpoint"] == top, "at"].iloc[0])


def contrast_figure(
    contrasts: pd.DataFrame,
    *,
    dataset: str,
    metric: str,
    estimator: str | None = None,
    at: str | None = None,
    windows: Mapping[str, str | int] | None = None,
    specs: Mapping[str, object] | None = None,
) -> Figure:
    """Difference to the reference policy of ``metric`` against the waiting window (module
    docstring), at the requested position ``at`` (default :func:`last_at`; with ``"all"``, the
    last checkpoint). ``windows`` and ``specs`` (policy -> spec: the windows the runs used) place
    the policies as in :func:`delaycv.stats.compare.window_table`."""
    data = _select(contrasts, dataset=dataset, metric=metric)
    data = data[data["checkpoint"].notna()]
    if data.empty:
        raise DelaycvError(f"no contrast of {metric!r} in dataset {dataset!r}")
    estimator = _one_estimator(data, estimator)
    data = _select(data, estimator=estimator)
    at = last_at(data) if at is None else at
    data = data[data["at"] == at]
    data = data[data["checkpoint"] == data["checkpoint"].max()]
    checkpoint = int(data["checkpoint"].iloc[0])
    reference_policy = str(data["reference_policy"].iloc[0])
    policies = list(dict.fromkeys(data["policy"]))
    placed = window_table(policies, windows, specs=specs)
    placed = placed[placed["policy"] != reference_policy]
    unplaced = [p for p in policies if p not in set(placed["policy"])]
    axes_keys = (
        placed[["varies", "unit"]].drop_duplicates().sort_values(["varies", "unit"]).to_numpy()
    )
    if not len(axes_keys):
        raise DelaycvError(
            f"no policy of dataset {dataset!r} has a known waiting window: {', '.join(unplaced)}"
        )
    references = sorted(set(data["reference"]), key=lambda r: _CONTRAST_ORDER.get(r, 2))
    labels = {r: str(data.loc[data["reference"] == r, "contrast"].iloc[0]) for r in references}
    learners = sorted(data["learner"].unique())
    styles = learner_styles(learners)
    family_style = family_styles(placed)
    families = list(family_style)  # by preset, then by fixed window (family_styles' order)
    # a row per kind of window (P, N, W, D), a column per contrast: at most two panels side by
    # side, so that the figure reads in the report at its width
    rows, cols = len(axes_keys), len(references)
    axes_style, context = _style()
    with axes_style, context:
        fig = _new_figure(_width(cols), 3.0 * rows + 1.8)
        axes = fig.subplots(rows, cols, squeeze=False, sharey=True)
        for j, (varies, unit) in enumerate(axes_keys):
            on_axis = placed[(placed["varies"] == varies) & (placed["unit"] == unit)]
            scale, unit_name = _window_unit(on_axis["window"].to_numpy(), unit)
            positive = np.sort(on_axis.loc[on_axis["window"] > 0, "window"].unique()) / scale
            zero_at = positive[0] / 3 if len(positive) else 1.0
            for i, reference in enumerate(references):
                ax = axes[j][i]
                ax.axhline(0.0, color="#555555", lw=1.0, ls="--", zorder=1)
                rows_here = data[data["reference"] == reference].merge(
                    on_axis[["policy", "family", "window"]], on="policy"
                )
                rows_here["x"] = np.where(
                    rows_here["window"] > 0, rows_here["window"] / scale, zero_at
                )
                for k, learner in enumerate(learners):
                    dodge = 1.0 + 0.035 * (k - (len(learners) - 1) / 2)
                    for family in families:
                        cur = rows_here[
                            (rows_here["learner"] == learner) & (rows_here["family"] == family)
                        ].sort_values("x")
                        if cur.empty:
                            continue
                        low = (cur["difference"] - cur["ci_low"]).to_numpy(float)
                        high = (cur["ci_high"] - cur["difference"]).to_numpy(float)
                        marker, dash = family_style[family]
                        ax.errorbar(
                            cur["x"].to_numpy(float) * dodge,
                            cur["difference"].to_numpy(float),
                            yerr=np.vstack([np.nan_to_num(low), np.nan_to_num(high)]),
                            color=styles[learner]["color"],
                            linestyle=dash,
                            marker=marker,
                            markersize=3.8,
                            lw=1.3,
                            capsize=2,
                            elinewidth=0.8,
                            zorder=3,
                        )
                ax.set_xscale("log")
                ax.set_xlim(min([*positive, zero_at]) / 1.6, max([*positive, zero_at]) * 1.6)
                empty = rows_here[~np.isfinite(rows_here["difference"].to_numpy(float))]
                if not empty.empty:  # a policy with no value: its window is on the axis, say why
                    names = ", ".join(
                        f"{p} ({varies} = {w / scale:g} {unit_name})"
                        for p, w in empty[["policy", "window"]].drop_duplicates().to_numpy()
                    )
                    # the note's first part says why (the rest repeats "no value to test")
                    reasons = sorted({str(n).split(":")[0] for n in empty["note"] if n})
                    text = f"no value at {names}: " + "; ".join(reasons or ["no pair of values"])
                    _note_beside(ax, text, float(empty["x"].max()))
                ticks = list(positive)
                tick_labels = [f"{v:g}" for v in positive]
                if (on_axis["window"] == 0).any():
                    ticks.append(zero_at)
                    tick_labels.append("0")
                ax.xaxis.set_major_locator(FixedLocator(ticks))
                ax.set_xticklabels(tick_labels)
                ax.xaxis.set_minor_locator(NullLocator())
                ax.set_xlabel(f"{axis_names().get(varies, 'window')} ({unit_name}, log scale)")
                if i == 0:
                    ax.set_ylabel(f"{metric}: policy − {reference_policy}")
                ax.set_title(labels[reference])
        handles = [Line2D([], [], color=styles[lr]["color"], lw=1.6, label=lr) for lr in learners]
        for family in families:
            marker, dash = family_style[family]
            handles.append(
                Line2D([], [], color="#444444", marker=marker, linestyle=dash, label=family)
            )
        handles.append(
            Line2D([], [], color="#555555", linestyle="--", label=f"{reference_policy} (0)")
        )
        _legend(fig, handles, "learner / policies / bars: 95 % CI over (seed, fold) pairs")
        where = (
            f"checkpoint {checkpoint}"
            if at in ("last", "all")
            else f"{at}, checkpoint {checkpoint}"
        )
        title = (
            f"{dataset}: {metric}, each policy minus {reference_policy} against the waiting window"
            f"\n({where}; {estimator} estimator)"
        )
        if unplaced:
            title += _note(fig, f"not on a window axis: {', '.join(unplaced)}")
        fig.suptitle(title, fontsize=TITLE_SIZE)
    return fig


def draw_contrast_figures(
    contrasts: pd.DataFrame,
    out_dir: str | Path,
    *,
    metric: str,
    windows: Mapping[str, str | int] | None = None,
    specs: Mapping[str, object] | None = None,
    formats: Sequence[str] = FORMATS,
    dpi: int = 200,
) -> list[Path]:
    """Write ``contrasts_<dataset>_<metric>[_<estimator>].<format>`` for every dataset (and
    estimator) of ``contrasts`` that has a contrast of ``metric``; returns the written paths. A
    dataset none of whose policies has a known window gets no figure and a warning (logger
    ``delaycv.figures.plots``)."""
    out_dir = Path(out_dir)
    written: list[Path] = []
    data = contrasts[(contrasts["metric"] == metric) & contrasts["checkpoint"].notna()]
    for dataset in sorted(data["dataset"].unique()):
        sub = data[data["dataset"] == dataset]
        estimators = sorted(sub["estimator"].unique())
        for est in estimators:
            tail = f"_{_slug(est)}" if len(estimators) > 1 else ""
            try:
                fig = contrast_figure(
                    sub, dataset=dataset, metric=metric, estimator=est, windows=windows, specs=specs
                )
            except DelaycvError as err:
                if "known waiting window" not in str(err):
                    raise
                log.warning("no contrasts figure: %s", err)
                continue
            stem = out_dir / f"contrasts_{_slug(dataset)}_{_slug(metric)}{tail}"
            written.extend(save_figure(fig, stem, formats, dpi))
    return written
