"""The settings of the compare and rankings stages: :class:`CompareSettings` and
:class:`RankingSettings`, each built and checked once by its maker (:func:`make_compare_settings`,
:func:`make_ranking_settings`), as a run's :class:`~delaycv.protocol.settings.RunSettings` is.

``delaycv compare`` and ``delaycv rank`` make them from their options, the workflow from the
study's ``tests``, ``contrasts``, ``rankings`` and ``figures`` sections
(:mod:`delaycv.study.stage_settings`), and the stage takes them whole
(:func:`delaycv.stages.compare.compare`, :func:`delaycv.stages.rankings.rankings`). A value not
given is the default of :mod:`delaycv.common.defaults`. A bad value is a
:class:`~delaycv.common.errors.ConfigError` naming its key in the study config (``key
tests.alpha``; the field's key in :data:`CompareSettings.KEYS`), which the command line reports
as the option that set it (``option --alpha``). :meth:`CompareSettings.record` is the settings as
plain data (the workflow rule's params, which Snakemake tracks) and
:meth:`CompareSettings.from_record` makes them again, checked.

>>> settings = make_compare_settings(metrics=["gmean"], resamples=999)
>>> settings.metrics, settings.resamples, settings.alpha, settings.references
(('gmean',), 999, 0.05, ('observed', 'true', 'corrected'))
>>> CompareSettings.from_record(settings.record()) == settings
True
>>> make_compare_settings(alpha=5)
Traceback (most recent call last):
...
delaycv.common.errors.ConfigError: key tests.alpha: alpha 5 (expected a number in (0, 1))

Light (the standard library and :mod:`delaycv.common`, :mod:`delaycv.protocol.checkpoints`): a
command's mistake is found before numpy is imported. Pure: it opens no file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from delaycv.common import defaults
from delaycv.common.bounds import check_size
from delaycv.common.checks import (
    check_choice,
    check_flag,
    check_level,
    check_names,
    check_seed,
)
from delaycv.common.choices import (
    ALTERNATIVES,
    FIGURE_FORMATS,
    MCNEMAR_METHODS,
    RANKING_VERSIONS,
    REFERENCES,
)
from delaycv.common.errors import ConfigError
from delaycv.common.records import record_of
from delaycv.protocol.checkpoints import check_checkpoint_request

#: A checkpoint request: ``"last"``, ``"all"``, checkpoint numbers or ``{positions, fractions}``
#: (:func:`delaycv.stats.checkpoints.choose_checkpoints`).
Checkpoints = str | list[int] | Mapping[str, Sequence]


@dataclass(frozen=True)
class CompareSettings:
    """What the compare stage computes (:func:`make_compare_settings` makes it).

    Parameters
    ----------
    metrics : tuple of str
        The metrics tested (columns of the merged table).
    references : tuple of str
        The labels they are scored against (``observed``, ``true``).
    checkpoints : str, list of int or mapping
        Where the tests, bias tests and contrasts are computed (the strip has every checkpoint).
    resamples : int
        The random sign flips R of each test that is not exact.
    alpha : float
        The significance level (after Holm).
    seed : int
        The seed of the sign flips.
    alternative : str
        The learner tests' alternative hypothesis: ``two-sided``, ``greater``, ``less``.
    reference_policy : str or None
        The policy every other one is contrasted with; None: no contrasts.
    bias : bool or None
        Whether to run the bias tests; None: when the table has both references.
    mcnemar_method : str
        McNemar's test from prediction logs: ``exact`` or ``chi2``.
    """

    metrics: tuple[str, ...] = defaults.TEST_METRICS
    references: tuple[str, ...] = defaults.TEST_REFERENCES
    checkpoints: Checkpoints = defaults.TEST_CHECKPOINTS
    resamples: int = defaults.RESAMPLES
    alpha: float = defaults.SIGNIFICANCE
    seed: int = defaults.TEST_SEED
    alternative: str = defaults.ALTERNATIVE
    reference_policy: str | None = None
    bias: bool | None = None
    mcnemar_method: str = defaults.MCNEMAR_METHOD

    #: The key of each field in the study config, which the errors name (the fields with a
    #: dotted key are read from the config's sections; the others only the command sets).
    KEYS: ClassVar[dict[str, str]] = {
        "metrics": "tests.metrics",
        "references": "tests.references",
        "checkpoints": "tests.checkpoints",
        "resamples": "tests.resamples",
        "alpha": "tests.alpha",
        "seed": "tests.seed",
        "alternative": "alternative",
        "reference_policy": "contrasts.reference",
        "bias": "bias",
        "mcnemar_method": "mcnemar_method",
    }

    def record(self) -> dict[str, Any]:
        """The settings as plain data, field by field (tuples as lists)."""
        return record_of(self)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> CompareSettings:
        """The settings of a :meth:`record`, checked again."""
        return make_compare_settings(**record)


def make_compare_settings(
    *,
    metrics: str | Sequence[str] = defaults.TEST_METRICS,
    references: str | Sequence[str] = defaults.TEST_REFERENCES,
    checkpoints: Any = defaults.TEST_CHECKPOINTS,
    resamples: int = defaults.RESAMPLES,
    alpha: float = defaults.SIGNIFICANCE,
    seed: int = defaults.TEST_SEED,
    alternative: str = defaults.ALTERNATIVE,
    reference_policy: str | None = None,
    bias: bool | None = None,
    mcnemar_method: str = defaults.MCNEMAR_METHOD,
) -> CompareSettings:
    """Check every value of the compare stage and make its :class:`CompareSettings` (what is not
    given: the defaults of :mod:`delaycv.common.defaults`).

    Raises
    ------
    ConfigError
        A value of the wrong kind or out of range, naming its key (:data:`CompareSettings.KEYS`).
    """
    keys = CompareSettings.KEYS
    if reference_policy is not None and (
        not isinstance(reference_policy, str) or not reference_policy
    ):
        raise ConfigError(
            f"reference {reference_policy!r}",
            location=f"key {keys['reference_policy']}",
            expected="a policy's name, or null: no contrasts",
        )
    return CompareSettings(
        metrics=check_names(metrics, keys["metrics"]),
        references=check_names(references, keys["references"], REFERENCES),
        checkpoints=check_checkpoint_request(checkpoints, where=keys["checkpoints"]),
        resamples=check_size("resamples", resamples, f"key {keys['resamples']}"),
        alpha=check_level(alpha, keys["alpha"]),
        seed=check_seed(seed, keys["seed"]),
        alternative=check_choice(alternative, keys["alternative"], ALTERNATIVES),
        reference_policy=reference_policy,
        bias=None if bias is None else check_flag(bias, keys["bias"]),
        mcnemar_method=check_choice(mcnemar_method, keys["mcnemar_method"], MCNEMAR_METHODS),
    )


@dataclass(frozen=True)
class RankingSettings:
    """What the rankings stage ranks and draws (:func:`make_ranking_settings` makes it).

    Parameters
    ----------
    metrics, references, checkpoints, alpha
        As the tests have them (:class:`CompareSettings`): the metrics ranked, the labels, the
        checkpoints, the significance level of Friedman/Nemenyi.
    resamples, seed
        As the tests have them: R and the seed of Friedman's permutation p-value (exact when
        there are at most R permutations).
    version : str
        Scott-Knott ESD's version: ``np`` (non-parametric) or ``p`` (parametric).
    figure_metrics : tuple of str
        The metrics of the ranking figures (ranked too); by default the ranked ones.
    figure_reference : str
        The labels of the figures (ranked too).
    formats : tuple of str
        The figures' file formats.
    dpi : int
        The resolution of their raster files.
    """

    metrics: tuple[str, ...] = defaults.TEST_METRICS
    references: tuple[str, ...] = defaults.TEST_REFERENCES
    checkpoints: Checkpoints = defaults.TEST_CHECKPOINTS
    alpha: float = defaults.SIGNIFICANCE
    resamples: int = defaults.RESAMPLES
    seed: int = defaults.TEST_SEED
    version: str = defaults.RANKING_VERSION
    figure_metrics: tuple[str, ...] = defaults.TEST_METRICS
    figure_reference: str = defaults.FIGURE_REFERENCE
    formats: tuple[str, ...] = defaults.FORMATS
    dpi: int = defaults.DPI

    #: The key of each field in the study config (:data:`CompareSettings.KEYS`).
    KEYS: ClassVar[dict[str, str]] = {
        "metrics": "tests.metrics",
        "references": "tests.references",
        "checkpoints": "tests.checkpoints",
        "alpha": "tests.alpha",
        "resamples": "tests.resamples",
        "seed": "tests.seed",
        "version": "rankings.version",
        "figure_metrics": "figures.metric",
        "figure_reference": "figures.reference",
        "formats": "figures.formats",
        "dpi": "figures.dpi",
    }

    def record(self) -> dict[str, Any]:
        """The settings as plain data, field by field (tuples as lists)."""
        return record_of(self)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> RankingSettings:
        """The settings of a :meth:`record`, checked again."""
        return make_ranking_settings(**record)

    @property
    def ranked_metrics(self) -> tuple[str, ...]:
        """Every metric ranked: the tested ones, then the figures' others."""
        return tuple(dict.fromkeys([*self.metrics, *self.figure_metrics]))

    @property
    def ranked_references(self) -> tuple[str, ...]:
        """Every reference ranked: the tested ones, then the figures' if it is not one of them
        (the figures draw the families of their reference).

        >>> make_ranking_settings(references=["true"]).ranked_references
        ('true', 'observed')
        """
        return tuple(dict.fromkeys([*self.references, self.figure_reference]))


def make_ranking_settings(
    *,
    metrics: str | Sequence[str] = defaults.TEST_METRICS,
    references: str | Sequence[str] = defaults.TEST_REFERENCES,
    checkpoints: Any = defaults.TEST_CHECKPOINTS,
    alpha: float = defaults.SIGNIFICANCE,
    resamples: int = defaults.RESAMPLES,
    seed: int = defaults.TEST_SEED,
    version: str = defaults.RANKING_VERSION,
    figure_metrics: str | Sequence[str] | None = None,
    figure_reference: str = defaults.FIGURE_REFERENCE,
    formats: str | Sequence[str] = defaults.FORMATS,
    dpi: int = defaults.DPI,
) -> RankingSettings:
    """Check every value of the rankings stage and make its :class:`RankingSettings`
    (``figure_metrics`` None: the ranked ``metrics``; the rest: the defaults of
    :mod:`delaycv.common.defaults`).

    Raises
    ------
    ConfigError
        A value of the wrong kind or out of range, naming its key (:data:`RankingSettings.KEYS`).
    """
    keys = RankingSettings.KEYS
    metrics = check_names(metrics, keys["metrics"])
    return RankingSettings(
        metrics=metrics,
        references=check_names(references, keys["references"], REFERENCES),
        checkpoints=check_checkpoint_request(checkpoints, where=keys["checkpoints"]),
        alpha=check_level(alpha, keys["alpha"]),
        resamples=check_size("resamples", resamples, f"key {keys['resamples']}"),
        seed=check_seed(seed, keys["seed"]),
        version=check_choice(version, keys["version"], RANKING_VERSIONS),
        figure_metrics=metrics
        if figure_metrics is None
        else check_names(figure_metrics, keys["figure_metrics"]),
        figure_reference=check_choice(figure_reference, keys["figure_reference"], REFERENCES),
        formats=check_formats(formats, keys["formats"]),
        dpi=check_dpi(dpi, keys["dpi"]),
    )


def check_formats(value: Any, key: str) -> tuple[str, ...]:
    """The figures' file formats: a non-empty list of :data:`delaycv.common.choices.FIGURE_FORMATS`
    (the rule of the rankings' figures and of the figures stage)."""
    return check_names(value, key, FIGURE_FORMATS)


def check_dpi(value: Any, key: str) -> int:
    """The figures' resolution: an integer within its bound (:data:`delaycv.common.bounds.BOUNDS`)."""
    return check_size("dpi", value, f"key {key}")
