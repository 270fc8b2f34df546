"""The figures of the rankings across datasets: critical-difference diagrams and SK-ESD box plots.

For every family of :func:`delaycv.stats.ranking.rank_across` (what is ranked, within which learner or
policy, reference, estimator, requested position, metric) of one metric and reference: Demšar's
critical-difference diagram of the Friedman/Nemenyi result (:func:`delaycv.figures.plots.cd_diagram`) when
the family was tested, and the box plot of the treatments' per-dataset values ordered and coloured
by their Scott-Knott ESD groups (:func:`delaycv.figures.plots.sk_boxplot`) when it has groups. A family
without a test (fewer than 3 datasets, a missing value, a single treatment) gets no figure; the
rankings page gives its note. A treatment with no value on any dataset (e.g. a policy that released
no label before the end of the stream) is not ranked: the figures of its family name it and say
why, and a family none of whose treatments has a value has no figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from delaycv.figures.plots import FORMATS, _slug, cd_diagram, metric_label, save_figure, sk_boxplot
from delaycv.stats.families import FAMILY, Rankings, family_values


def _stem(kind: str, family: dict, estimators: int) -> str:
    parts = [kind, family["ranked"], family["within"], family["at"], family["metric"]]
    if estimators > 1:
        parts.append(family["estimator"])
    return "_".join(_slug(p) for p in parts)


_PLURAL = {"learner": "learners", "policy": "policies"}


def _title(family: dict) -> str:
    within = "policy" if family["ranked"] == "learner" else "learner"
    return (
        f"{_PLURAL[family['ranked']]}, {within} {family['within']}: {family['metric']}\n"
        f"{family['reference']} labels, at {family['at']}"
    )


def draw_ranking_figures(
    table: pd.DataFrame,
    rankings: Rankings,
    out_dir: str | Path,
    *,
    metric: str,
    reference: str,
    formats: Sequence[str] = FORMATS,
    dpi: int = 200,
) -> list[Path]:
    """Write ``cd_<ranked>_<within>_<at>_<metric>`` (critical-difference diagram) and
    ``sk_<...>`` (Scott-Knott ESD box plot) for every tested family of ``rankings`` with this
    ``metric`` and ``reference`` (``table``: the per-fold table ``rankings`` was computed from);
    returns the written paths, in family order."""
    out_dir = Path(out_dir)
    written: list[Path] = []
    sk = rankings.scott_knott
    estimators = rankings.friedman["estimator"].nunique()
    friedman = rankings.friedman
    for key in rankings.families():
        family = dict(zip(FAMILY, key, strict=True))
        if family["metric"] != metric or family["reference"] != reference:
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
