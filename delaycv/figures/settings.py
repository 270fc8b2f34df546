"""The settings of the figures stage: :class:`FigureSettings`, built and checked once by
:func:`make_figure_settings`, as a run's :class:`~delaycv.protocol.settings.RunSettings` is.

``delaycv plot`` makes them from its options, the workflow from the study's ``figures`` section
and ``tests`` (the figures' metrics are the tested ones unless ``figures.metric`` names others;
the strip's significance level is ``tests.alpha``: :mod:`delaycv.study.stage_settings`), and the
stage takes them whole (:func:`delaycv.stages.figures.figures`). A value not given is the
default of :mod:`delaycv.common.defaults`; a bad one is a
:class:`~delaycv.common.errors.ConfigError` naming its key (:data:`FigureSettings.KEYS`), which
the command line reports as the option that set it. :meth:`FigureSettings.record` is the
settings as plain data (the workflow rule's params), :meth:`FigureSettings.from_record` makes
them again.

>>> settings = make_figure_settings(metrics="gmean", formats=["png", "svg"])
>>> settings.metrics, settings.reference, settings.formats, settings.dpi
(('gmean',), 'observed', ('png', 'svg'), 200)
>>> make_figure_settings(dpi=0)
Traceback (most recent call last):
...
delaycv.common.errors.ConfigError: key figures.dpi: dpi 0 is too small (expected an integer from 1 to 2,400 (a figure of about 10 x 6 inches is then 24,000 x 14,400 pixels, 1 GiB to draw))

Light (the standard library and the light settings of :mod:`delaycv.stats.settings`): a
command's mistake is found before matplotlib is imported. Pure: it opens no file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from delaycv.common import defaults
from delaycv.common.checks import check_choice, check_level, check_names, check_seed
from delaycv.common.choices import REFERENCES, X_AXES
from delaycv.common.errors import ConfigError
from delaycv.common.records import record_of
from delaycv.stats.settings import check_dpi, check_formats


@dataclass(frozen=True)
class FigureSettings:
    """What the figures stage draws (:func:`make_figure_settings` makes it).

    Parameters
    ----------
    metrics : tuple of str
        The metrics drawn: a set of figures each.
    reference : str
        The labels the learning curves, final distributions and heatmap are scored against
        (the bias and sensitivity figures show both).
    baseline : str or None
        The learner the significance strip shows each other learner against (the study's
        ``figures.learner``); None: every pair (up to 6, else every learner against the first).
    alpha : float or None
        The significance level of the tests, named in the strip's legend; None: not named.
    x : str
        The x axis of the curves: ``time`` (stream time) or ``checkpoint`` (stream position).
    formats : tuple of str
        The files of each figure: ``png``, ``pdf``, ``svg``.
    dpi : int
        The resolution of the raster files.
    seed : int
        The seed of the final distributions' sideways jitter.
    estimator : str or None
        The estimator whose rows are drawn; None: each estimator of the table, in its own files.
    datasets : tuple of str or None
        The datasets drawn; None: every dataset of the table.
    """

    metrics: tuple[str, ...] = defaults.TEST_METRICS
    reference: str = defaults.FIGURE_REFERENCE
    baseline: str | None = None
    alpha: float | None = defaults.SIGNIFICANCE
    x: str = defaults.X_AXIS
    formats: tuple[str, ...] = defaults.FORMATS
    dpi: int = defaults.DPI
    seed: int = defaults.JITTER_SEED
    estimator: str | None = None
    datasets: tuple[str, ...] | None = None

    #: The key of each field in the study config, which the errors name (the fields with a
    #: dotted key are read from the config; the others only ``delaycv plot`` sets).
    KEYS: ClassVar[dict[str, str]] = {
        "metrics": "figures.metric",
        "reference": "figures.reference",
        "baseline": "figures.learner",
        "alpha": "tests.alpha",
        "x": "x",
        "formats": "figures.formats",
        "dpi": "figures.dpi",
        "seed": "seed",
        "estimator": "estimator",
        "datasets": "datasets",
    }

    def record(self) -> dict[str, Any]:
        """The settings as plain data, field by field (tuples as lists)."""
        return record_of(self)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> FigureSettings:
        """The settings of a :meth:`record`, checked again."""
        return make_figure_settings(**record)


def make_figure_settings(
    *,
    metrics: str | Sequence[str] = defaults.TEST_METRICS,
    reference: str = defaults.FIGURE_REFERENCE,
    baseline: str | None = None,
    alpha: float | None = defaults.SIGNIFICANCE,
    x: str = defaults.X_AXIS,
    formats: str | Sequence[str] = defaults.FORMATS,
    dpi: int = defaults.DPI,
    seed: int = defaults.JITTER_SEED,
    estimator: str | None = None,
    datasets: Sequence[str] | None = None,
) -> FigureSettings:
    """Check every value of the figures stage and make its :class:`FigureSettings` (what is not
    given: the defaults of :mod:`delaycv.common.defaults`).

    Raises
    ------
    ConfigError
        A value of the wrong kind or out of range, naming its key (:data:`FigureSettings.KEYS`).
    """
    keys = FigureSettings.KEYS
    return FigureSettings(
        metrics=check_names(metrics, keys["metrics"]),
        reference=check_choice(reference, keys["reference"], REFERENCES),
        baseline=_optional_name(baseline, keys["baseline"]),
        alpha=None if alpha is None else check_level(alpha, keys["alpha"]),
        x=check_choice(x, keys["x"], X_AXES),
        formats=check_formats(formats, keys["formats"]),
        dpi=check_dpi(dpi, keys["dpi"]),
        seed=check_seed(seed, keys["seed"]),
        estimator=_optional_name(estimator, keys["estimator"]),
        datasets=None if datasets is None else check_names(datasets, keys["datasets"]),
    )


def _optional_name(value: Any, key: str) -> str | None:
    """``value`` if it is None or a non-empty string, else a ConfigError naming ``key``."""
    if value is None or (isinstance(value, str) and value):
        return value
    name = key.rsplit(".", 1)[-1]
    raise ConfigError(f"{name} {value!r}", location=f"key {key}", expected="a non-empty name")
