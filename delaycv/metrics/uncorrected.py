"""The metrics the corrected reference has no value of, and why: the reason the notes of the
tests, contrasts, bias tests and rankings give for its empty rows, and the refusal of figures of
them against it (docs/corrected.md).

Those of :data:`~delaycv.metrics.formulas.METRICS` are :data:`delaycv.metrics.corrected.UNCORRECTED`
(the corrected state leaves them NaN); the effort-aware measures
(:data:`~delaycv.metrics.effort_names.EFFORT_METRICS`) are computed for the observed and the
true labels only (their inspection curve ranks whole labels).
"""

from __future__ import annotations

from collections.abc import Iterable

from delaycv.common.errors import ConfigError
from delaycv.metrics.corrected import UNCORRECTED
from delaycv.metrics.effort_names import EFFORT_METRICS

#: every metric without a corrected value -> why
NO_CORRECTED_VALUE: dict[str, str] = {
    **UNCORRECTED,
    **{
        name: "its inspection curve is not estimated from expected labels"
        for name in EFFORT_METRICS
    },
}


def uncorrected(reference: str, metric: str) -> str | None:
    """Why ``reference`` has no value of ``metric`` in any run (the ``corrected`` reference and a
    metric of :data:`NO_CORRECTED_VALUE`), as the notes say it (naming the doc); else None.

    >>> uncorrected("corrected", "popt")
    'the corrected reference has no popt: its inspection curve is not estimated from expected labels (docs/corrected.md)'
    >>> uncorrected("corrected", "auc")
    'the corrected reference has no auc: a ranking of expected labels is not estimated (docs/corrected.md)'
    >>> uncorrected("true", "popt") is None, uncorrected("corrected", "gmean") is None
    (True, True)
    """
    if reference != "corrected" or metric not in NO_CORRECTED_VALUE:
        return None
    return (
        f"the corrected reference has no {metric}: {NO_CORRECTED_VALUE[metric]} (docs/corrected.md)"
    )


def check_figure_reference(reference: str, metrics: Iterable[str], path: str | None = None) -> None:
    """Refuse figures of ``metrics`` against ``reference`` (``figures.reference``) where it has no
    value of one: its panels would be empty. ``path``: the config file that set the key.

    >>> check_figure_reference("corrected", ["gmean", "auc"])
    Traceback (most recent call last):
    ...
    delaycv.common.errors.ConfigError: key figures.reference: the corrected reference has no auc: a ranking of expected labels is not estimated (docs/corrected.md), so its figures would have nothing to draw (expected observed or true for auc, or metrics the corrected reference estimates)
    """
    for metric in metrics:
        reason = uncorrected(reference, metric)
        if reason:
            raise ConfigError(
                f"{reason}, so its figures would have nothing to draw",
                path=path,
                location="key figures.reference",
                expected=f"observed or true for {metric}, or metrics the corrected reference "
                "estimates",
            )
