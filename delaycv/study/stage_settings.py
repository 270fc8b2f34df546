"""The settings of the compare, rankings and figures stages from a study (its config loaded:
defaults filled in, policies expanded): what ``workflow/rules/common.smk`` passes to those
rules as params (``settings.record()`` as canonical JSON, which Snakemake tracks) and their rule
scripts make again (``from_record``).

Each reads the sections its stage uses, and only those, so that a change reruns exactly the
jobs it concerns: the compare stage uses ``tests``, ``contrasts`` and the figures' metrics and
reference (tested too); the rankings use ``tests`` (not its resamples nor its seed),
``rankings`` and ``figures`` (not its learner); the figures' metrics are ``figures.metric``
when the study names them, else the tested metrics (``tests.metrics``).

>>> study = {"tests": {"metrics": ["gmean", "popt"], "references": ["observed", "true"],
...     "checkpoints": "last", "resamples": 5000, "alpha": 0.05, "seed": 1},
...     "contrasts": {"reference": "ideal"}, "rankings": {"version": "np"},
...     "figures": {"reference": "observed", "formats": ["png", "pdf"], "dpi": 200}}
>>> figure_settings(study).metrics, ranking_settings(study).figure_metrics
(('gmean', 'popt'), ('gmean', 'popt'))
>>> compare_settings(study).reference_policy
'ideal'
"""

from __future__ import annotations

from typing import Any

from delaycv.figures.settings import FigureSettings, make_figure_settings
from delaycv.stats.settings import (
    CompareSettings,
    RankingSettings,
    make_compare_settings,
    make_ranking_settings,
)


def figure_metrics(config: dict) -> list[str]:
    """The metrics of a study's figures: ``figures.metric`` (one name or a list of them) when
    the study names it, else the tested metrics.

    >>> figure_metrics({"tests": {"metrics": ["gmean", "fpr_1"]}, "figures": {"metric": "popt"}})
    ['popt']
    >>> figure_metrics({"tests": {"metrics": ["gmean", "fpr_1"]}, "figures": {}})
    ['gmean', 'fpr_1']
    """
    metric = config["figures"].get("metric")
    if metric is None:
        return list(config["tests"]["metrics"])
    return [metric] if isinstance(metric, str) else list(metric)


def _tests(config: dict, *keys: str) -> dict[str, Any]:
    return {key: config["tests"][key] for key in keys}


def compare_settings(config: dict) -> CompareSettings:
    """The compare stage's settings: ``tests`` and ``contrasts.reference``, with the bias tests
    (the rule writes their tables). The figures' metrics and reference are tested too, after
    the tested ones, as the rankings rank them: their figures' significance strip and pairwise
    tests come from these tests.

    >>> study = {"tests": {"metrics": ["gmean"], "references": ["true"], "checkpoints": "last",
    ...     "resamples": 5000, "alpha": 0.05, "seed": 1}, "contrasts": {"reference": None},
    ...     "figures": {"metric": ["popt", "gmean"], "reference": "observed"}}
    >>> settings = compare_settings(study)
    >>> settings.metrics, settings.references
    (('gmean', 'popt'), ('true', 'observed'))
    """
    tests = config["tests"]
    return make_compare_settings(
        **_tests(config, "checkpoints", "resamples", "alpha", "seed"),
        metrics=list(dict.fromkeys([*tests["metrics"], *figure_metrics(config)])),
        references=list(dict.fromkeys([*tests["references"], config["figures"]["reference"]])),
        reference_policy=config["contrasts"]["reference"],
        bias=True,
    )


def ranking_settings(config: dict) -> RankingSettings:
    """The rankings stage's settings: what it uses of ``tests`` (Friedman's permutation p-value
    takes ``resamples`` and ``seed``), ``rankings.version`` and the
    figures' metrics, labels, formats and resolution."""
    figures = config["figures"]
    return make_ranking_settings(
        **_tests(config, "metrics", "references", "checkpoints", "alpha", "resamples", "seed"),
        version=config["rankings"]["version"],
        figure_metrics=figure_metrics(config),
        figure_reference=figures["reference"],
        formats=figures["formats"],
        dpi=figures["dpi"],
    )


def figure_settings(config: dict) -> FigureSettings:
    """The figures stage's settings: the ``figures`` section, the figures' metrics
    (:func:`figure_metrics`) and the tests' significance level."""
    figures = config["figures"]
    return make_figure_settings(
        metrics=figure_metrics(config),
        reference=figures["reference"],
        baseline=figures.get("learner"),
        alpha=config["tests"]["alpha"],
        formats=figures["formats"],
        dpi=figures["dpi"],
    )
