"""Effort-aware measures of just-in-time defect prediction, online (docs/metrics.md).

An inspector reads the evaluated instances in scope in the **inspection order**: by predicted
defect density ``P(1) / (effort + 1)``, highest first (Kamei et al., TSE 2013: the density
``Y / (Effort + 1)`` their effort-aware model learns and their optimal order sorts by, with the
model's P(1) for Y; docs/metrics.md). An instance of zero effort is ranked by its P(1) like any
other. Equal densities (an untrained learner's 0.5 over equal efforts) go in release order, the
order in which the evaluations reached the inspector (FIFO). Over that order, with n instances,
total effort E and D defective ones (``defective``: the reference label, observed or true):

* ``effort_recall_20``: the share of the D defective instances among those inspected before 20 % of
  E is spent (the instances whose cumulative effort is at most 0.2 E: the one that crosses the
  budget is left out, as JITLine and Kamei et al.'s ACC count);
* ``effort_precision_20``: the share of defective ones among those inspected (NaN if none fits);
  ``effort_f1_20`` their harmonic mean; ``effort_pci_20``: the share of the n instances inspected;
* ``effort_at_recall_20``: the share of E spent when 20 % of the D defective instances are found
  (the instance that reaches 20 % counted);
* ``ifa``: the clean instances inspected before the first defective one (a count);
* ``popt``: 1 - (area(optimal) - area(model)) / (area(optimal) - area(worst)), the areas under the
  curve of the share of defective instances found against the share of effort spent, the points
  joined by straight lines (trapezoids); optimal order: defective first, then by effort ascending;
  worst: clean first, then by effort descending (the orders of the labels' own density
  ``d / (effort + 1)``, effort breaking ties).

NaN where a measure is undefined: no instance in scope; no defective one (all but
``effort_pci_20``); E = 0 (all but ``ifa``); ``popt`` when the optimal and worst areas are equal.

>>> m = inspection_measures(
...     p1=[0.9, 0.8, 0.5, 0.4, 0.1], effort=[10, 40, 5, 30, 15], defective=[1, 0, 1, 0, 1]
... )
>>> {k: round(v, 4) for k, v in m.items()}  # doctest: +NORMALIZE_WHITESPACE
{'effort_recall_20': 0.6667, 'effort_precision_20': 1.0, 'effort_f1_20': 0.8,
 'effort_pci_20': 0.4, 'effort_at_recall_20': 0.05, 'ifa': 0.0, 'popt': 0.6957}

(docs/metrics.md works this example by hand.) :class:`EffortCurve` gives the same values online,
fold by fold, over its scope (:mod:`delaycv.metrics.effort_scope`): the evaluations are kept in
their inspection order in blocks with Fenwick trees of the blocks' sums (``effort_loop``), so that
an evaluation costs O(log n) and a checkpoint O(log n), whatever the length of the stream.
"""

from __future__ import annotations

import math

import numpy as np

from delaycv.common import native
from delaycv.common.checks import EFFORT_EXPECTED, EFFORT_MAX, EFFORT_MIN
from delaycv.metrics import effort_loop
from delaycv.metrics.effort_names import EFFORT_METRICS
from delaycv.metrics.effort_scope import EffortScope, make_effort_scope

#: the compiled loop (``_effort_loop.pyx``) where it is built from the source beside it, else
#: the Python one (the same values)
LOOP, LOOP_STATUS = native.load("delaycv.metrics._effort_loop", effort_loop)
N_MEASURES = len(EFFORT_METRICS)

__all__ = [
    "EFFORT_METRICS",
    "EffortCurve",
    "EffortScope",
    "inspection_measures",
    "inspection_order",
]


def inspection_order(p1, effort) -> np.ndarray:
    """The inspection order of instances given in release order: indices, by predicted defect
    density P(1) / (effort + 1), highest first; ties in release order.

    >>> inspection_order([0.5, 0.5, 0.9, 0.2, 0.01], [10, 10, 1, 0, 0]).tolist()
    [2, 3, 0, 1, 4]
    """
    return np.lexsort((np.arange(len(p1)), sort_key(np.asarray(p1), np.asarray(effort))))


def sort_key(p1, effort) -> np.ndarray:
    """Ascending sort key of the inspection order: -P(1) / (effort + 1) (-0.0 made 0.0)."""
    p1 = np.asarray(p1, dtype=np.float64)
    effort = np.asarray(effort, dtype=np.float64)
    return -(p1 / (effort + 1.0)) + 0.0


def inspection_measures(p1, effort, defective) -> dict[str, float]:
    """The effort-aware measures of one scope, by their definition (a sort of the scope): what
    :class:`EffortCurve` is tested against, and the definition docs/metrics.md works by hand.
    Arguments are in release order."""
    p1 = np.asarray(p1, dtype=np.float64)
    e_in = np.asarray(effort, dtype=np.float64)
    d_in = np.asarray(defective, dtype=np.int64)
    out = dict.fromkeys(EFFORT_METRICS, math.nan)
    n = len(p1)
    if not n:
        return out
    order = inspection_order(p1, e_in)
    e, d = e_in[order], d_in[order]
    big_e, big_d = float(e.sum()), int(d.sum())
    cum_e, cum_d = np.cumsum(e), np.cumsum(d)
    if big_e > 0:
        inspected = int(np.count_nonzero(cum_e <= 0.2 * big_e))
        out["effort_pci_20"] = inspected / n
    if big_d == 0:
        return out
    out["ifa"] = float(np.argmax(d > 0))  # clean ones before the first defective one
    if big_e == 0:
        return out
    found = int(cum_d[inspected - 1]) if inspected else 0
    recall = found / big_d
    precision = found / inspected if inspected else math.nan
    out["effort_recall_20"] = recall
    out["effort_precision_20"] = precision
    if inspected:
        total = precision + recall
        out["effort_f1_20"] = 0.0 if total == 0 else 2 * precision * recall / total
    reach = int(np.argmax(cum_d >= 0.2 * big_d))
    out["effort_at_recall_20"] = float(cum_e[reach]) / big_e

    def area(e_sorted, d_sorted) -> float:
        x = np.concatenate(([0.0], np.cumsum(e_sorted) / big_e))
        y = np.concatenate(([0.0], np.cumsum(d_sorted) / big_d))
        return float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2))

    best = np.lexsort((e_in, -d_in))  # defective first, effort ascending
    worst = np.lexsort((-e_in, d_in))  # clean first, effort descending
    a_best, a_worst = area(e_in[best], d_in[best]), area(e_in[worst], d_in[worst])
    if a_best > a_worst:
        out["popt"] = 1.0 - (a_best - area(e, d)) / (a_best - a_worst)
    return out


class EffortCurve:
    """The effort-aware measures of one fold, against the observed and the true label, over a
    scope (:class:`~delaycv.metrics.effort_scope.EffortScope`: every evaluation so far by
    default, or the last ``width``).

    Fed like :class:`~delaycv.metrics.Metrics`: ``add_many(p1, effort, observed, true)`` buffers
    evaluations in release order; ``snapshots(bounds)`` folds in the first ``bounds[-1]``
    buffered ones and returns the measures after each bound, shape (len(bounds), 2,
    ``len(EFFORT_METRICS)``): [:, 0] against the observed label, [:, 1] against the true one.

    >>> curve = EffortCurve("cumulative")
    >>> curve.add_many([0.9, 0.8, 0.5, 0.4, 0.1], [10, 40, 5, 30, 15], [1, 0, 1, 0, 0], [1, 0, 1, 0, 1])
    >>> values = curve.snapshots([5])
    >>> round(float(values[0, 1, EFFORT_METRICS.index("popt")]), 4)  # true labels: as above
    0.6957
    """

    def __init__(self, scope=None) -> None:
        self.scope = make_effort_scope(scope)
        self._buffer: list[tuple[np.ndarray, ...]] = []
        self._buffered = 0
        self._ranking = LOOP.Ranking(self.scope.loop_width)

    @property
    def buffered(self) -> int:
        """Evaluations added and not yet folded in."""
        return self._buffered

    def add_many(self, p1, effort, observed, true) -> None:
        """Buffer evaluations in release order (array-likes of equal length)."""
        p1 = np.asarray(p1, dtype=np.float64).reshape(-1)
        m = p1.size
        if not m:
            return
        e = np.asarray(effort, dtype=np.float64).reshape(m)
        d = np.vstack((np.asarray(observed).reshape(m), np.asarray(true).reshape(m))).astype(
            np.int8
        )
        self._buffer.append((p1, e, d))
        self._buffered += m

    def snapshot(self) -> np.ndarray:
        """Fold in every buffered evaluation; the measures now, shape (2, len(EFFORT_METRICS))."""
        return self.snapshots([self._buffered])[0]

    def snapshots(self, bounds) -> np.ndarray:
        """The measures after each of several prefixes of the buffered evaluations: ``bounds``
        are non-decreasing counts of them (0 = the scope as it is); the first ``bounds[-1]`` are
        folded in, the rest stay buffered. Shape (len(bounds), 2, ``len(EFFORT_METRICS)``)."""
        bounds = np.asarray(bounds, dtype=np.int64).reshape(-1)
        out = np.empty((bounds.size, 2 * N_MEASURES))
        if not bounds.size:
            return out.reshape(0, 2, N_MEASURES)
        if bounds[0] < 0 or bounds[-1] > self._buffered or (np.diff(bounds) < 0).any():
            raise ValueError(
                f"bounds must be non-decreasing counts within the {self._buffered} buffered "
                f"evaluations, got {bounds.tolist()[:5]}"
            )
        p1, e, d = self._take(int(bounds[-1]))
        _check(p1, e, d)
        key = sort_key(p1, e)
        self._ranking.run(
            key,
            np.ascontiguousarray(e),
            d[0].copy(),
            d[1].copy(),
            np.ascontiguousarray(bounds),
            out,
        )
        return out.reshape(bounds.size, 2, N_MEASURES)

    def _take(self, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The first m buffered evaluations (the rest stay buffered)."""
        if len(self._buffer) == 1:
            p1, e, d = self._buffer[0]
        elif self._buffer:
            p1 = np.concatenate([b[0] for b in self._buffer])
            e = np.concatenate([b[1] for b in self._buffer])
            d = np.concatenate([b[2] for b in self._buffer], axis=1)
        else:
            return np.zeros(0), np.zeros(0), np.zeros((2, 0), dtype=np.int8)
        self._buffer = [(p1[m:], e[m:], d[:, m:])] if m < p1.size else []
        self._buffered = p1.size - m
        return p1[:m], e[:m], d[:, :m]


def _check(p1: np.ndarray, effort: np.ndarray, d: np.ndarray) -> None:
    if p1.size and not (np.isfinite(p1).all() and p1.min() >= 0 and p1.max() <= 1):
        raise ValueError("p1 must be probabilities in [0, 1]")
    if effort.size:
        with np.errstate(invalid="ignore"):
            good = (effort == 0) | ((effort >= EFFORT_MIN) & (effort <= EFFORT_MAX))
        if not good.all():
            raise ValueError(f"effort must be {EFFORT_EXPECTED}")
    if d.size and (d.min() < 0 or d.max() > 1):
        raise ValueError("labels must be 0 or 1")
