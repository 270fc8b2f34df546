"""Streaming metrics of delayed-label evaluation (docs/metrics.md).

``Metrics(estimator)`` is fed one evaluation at a time (``add(pred, proba, label, weight)``) and
gives every metric of ``METRICS`` under the estimator at ``snapshot()``. Estimators:
``Cumulative()``, ``Sliding(width)``, ``Fading(alpha)``, ``Tumbling(size)`` (``make_estimator``
builds one from a config value; each keeps its sums in its own state class, ``states``).
``REFERENCES``: the labels a metric is computed against (``corrected``: the true-label value
estimated from what is known at a checkpoint, :mod:`delaycv.metrics.corrected`).
``MOA_MEASUREMENTS`` rebuilds MOA's 41
measurements from a snapshot. ``EFFORT_METRICS``: the effort-aware measures of a stream with an
effort (``effort``: :class:`~delaycv.metrics.effort.EffortCurve`, imported where it is used).

Imports: :mod:`delaycv.common` only.
"""

from delaycv.common.choices import REFERENCES
from delaycv.metrics.core import Metrics
from delaycv.metrics.effort_names import EFFORT_METRICS
from delaycv.metrics.estimators import (
    ESTIMATORS,
    Cumulative,
    Estimator,
    Fading,
    Sliding,
    Tumbling,
    make_estimator,
)
from delaycv.metrics.formulas import METRICS
from delaycv.metrics.moa_measurements import MOA_BASIC_MEASUREMENTS, MOA_MEASUREMENTS, moa_values

__all__ = [
    "EFFORT_METRICS",
    "ESTIMATORS",
    "METRICS",
    "MOA_BASIC_MEASUREMENTS",
    "MOA_MEASUREMENTS",
    "REFERENCES",
    "Cumulative",
    "Estimator",
    "Fading",
    "Metrics",
    "Sliding",
    "Tumbling",
    "make_estimator",
    "moa_values",
]
