"""Streaming metrics of delayed-label evaluation (design card §6; docs/metrics.md).

``Metrics(estimator)`` is fed one evaluation at a time (``add(pred, proba, label, weight)``) and
gives every metric of ``METRICS`` under the estimator at ``snapshot()``. Estimators:
``Cumulative()``, ``Sliding(width)``, ``Fading(alpha)``, ``Tumbling(size)``.
``MOA_MEASUREMENTS`` rebuilds MOA's 41 measurements from a snapshot.
"""

from delaycv.metrics.core import Metrics
from delaycv.metrics.estimators import (
    Cumulative,
    Estimator,
    Fading,
    Sliding,
    Tumbling,
    make_estimator,
)
from delaycv.metrics.formulas import METRICS
from delaycv.metrics.moa import MOA_BASIC_MEASUREMENTS, MOA_MEASUREMENTS, moa_values

__all__ = [
    "METRICS",
    "MOA_BASIC_MEASUREMENTS",
    "MOA_MEASUREMENTS",
    "Cumulative",
    "Estimator",
    "Fading",
    "Metrics",
    "Sliding",
    "Tumbling",
    "make_estimator",
    "moa_values",
]
