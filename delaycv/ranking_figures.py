"""The figures of the rankings across datasets: critical-difference diagrams and SK-ESD box plots.

For every family of :func:`delaycv.ranking.rank_across` (what is ranked, within which learner or
policy, reference, estimator, requested position, metric) of one metric and reference: Demšar's
critical-difference diagram of the Friedman/Nemenyi result (:func:`delaycv.plots.cd_diagram`) when
the family was tested, and the box plot of the treatments' per-dataset values ordered and coloured
by their Scott-Knott ESD groups (:func:`delaycv.plots.sk_boxplot`) when it has groups. A family
without a test (fewer than 3 datasets, a missing value, a single treatment) gets no figure; the
rankings page gives its note.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from delaycv.plots import FORMATS, _slug, cd_diagram, metric_label, save_figure, sk_boxplot
from delaycv.ranking import FAMILY, Rankings, family_values


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
    for key in rankings.families():
        family = dict(zip(FAMILY, key, strict=True))
        if family["metric"] != metric or family["reference"] != reference:
            continue
        result = rankings.result(key)
        if result.tested:
            fig = cd_diagram(result, title=_title(family))
            written += save_figure(fig, out_dir / _stem("cd", family, estimators), formats, dpi)
        mask = pd.Series(True, index=sk.index)
        for column, value in family.items():
            mask &= sk[column].astype(str) == str(value)
        groups = sk[mask]
        if groups.empty or groups["group"].isna().all():  # a family with a note: no groups
            continue
        groups = groups[groups["group"].notna()]  # the treatments that were ranked
        values = family_values(table, family)
        fig = sk_boxplot(
            values.dropna(),
            groups.sort_values("rank"),
            title=_title(family),
            ylabel=metric_label(metric),
        )
        written += save_figure(fig, out_dir / _stem("sk", family, estimators), formats, dpi)
    return written
