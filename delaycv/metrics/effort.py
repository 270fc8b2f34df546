"""Effort-aware measures of just-in-time defect prediction, online (docs/metrics.md).

An inspector reads the evaluated instances in scope in the **inspection order**: by predicted
defect density ``P(1) / effort``, highest first. An instance of zero effort costs nothing: all of
them come first. Equal densities (an untrained learner's 0.5 over equal efforts) go in release
order, the order in which the evaluations reached the inspector (FIFO). Over that order, with n
instances, total effort E and D defective ones (``defective``: the reference label, observed or
true):

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
  worst: clean first, then by effort descending.

NaN where a measure is undefined: no instance in scope; no defective one (all but
``effort_pci_20``); E = 0 (all but ``ifa``); ``popt`` when the optimal and worst areas are equal.

>>> m = inspection_measures(
...     p1=[0.9, 0.8, 0.5, 0.4, 0.1], effort=[10, 40, 5, 30, 15], defective=[1, 0, 1, 0, 1]
... )
>>> {k: round(v, 4) for k, v in m.items()}  # doctest: +NORMALIZE_WHITESPACE
{'effort_recall_20': 0.6667, 'effort_precision_20': 1.0, 'effort_f1_20': 0.8,
 'effort_pci_20': 0.4, 'effort_at_recall_20': 0.05, 'ifa': 0.0, 'popt': 0.6957}

(docs/metrics.md works this example by hand.) :class:`EffortCurve` gives the same values online,
fold by fold, under an estimator's scope, with Fenwick trees that are updated as labels are
released (``effort_loop``): the cumulative scope costs O(log n) per evaluation and per checkpoint,
not a sort of the scope at every checkpoint.
"""

from __future__ import annotations

import math

import numpy as np

from delaycv.common import native
from delaycv.metrics import effort_loop
from delaycv.metrics.effort_names import EFFORT_METRICS
from delaycv.metrics.estimators import Cumulative, Fading, Sliding, Tumbling, make_estimator

#: the compiled loop (``_effort_loop.pyx``) where it is built from the source beside it, else
#: the Python one (the same values)
LOOP, LOOP_STATUS = native.load("delaycv.metrics._effort_loop", effort_loop)
N_MEASURES = len(EFFORT_METRICS)


def effort_scope(estimator) -> tuple[int, int]:
    """(width, size) of the scope the effort-aware measures read under ``estimator``.

    Cumulative: every evaluation (0, 0); ``Sliding(w)``: the last w evaluations (w, 0);
    ``Tumbling(c)``: the last complete chunk of c evaluations (0, c); ``Fading(alpha)``: the last
    ``round(1 / (1 - alpha))`` evaluations, the fading factor's effective width (alpha = 1:
    cumulative). A ranking has no faded form that keeps ``ifa`` a count, so the fading estimator
    reads its effective window.

    >>> effort_scope(Fading(0.99)), effort_scope(Sliding(500)), effort_scope(Tumbling(250))
    ((100, 0), (500, 0), (0, 250))
    """
    estimator = make_estimator(estimator)
    if isinstance(estimator, Sliding):
        return estimator.width, 0
    if isinstance(estimator, Tumbling):
        return 0, estimator.size
    if isinstance(estimator, Fading) and estimator.alpha < 1:
        return max(1, round(1.0 / (1.0 - estimator.alpha))), 0
    if isinstance(estimator, Cumulative | Fading):
        return 0, 0
    raise TypeError(f"no effort scope for the estimator {estimator!r}")


def describe_scope(estimator) -> str:
    """The scope in words (the run's ``specs.effort_scope``).

    >>> describe_scope(Fading(0.99))
    'the last 100 evaluations (the fading factor 0.99 as a window)'
    """
    width, size = effort_scope(estimator)
    estimator = make_estimator(estimator)
    if size:
        return f"the last complete chunk of {size} evaluations"
    if width and isinstance(estimator, Fading):
        return f"the last {width} evaluations (the fading factor {estimator.alpha:g} as a window)"
    if width:
        return f"the last {width} evaluations"
    return "every evaluation so far"


def inspection_order(p1, effort) -> np.ndarray:
    """The inspection order of instances given in release order: indices, by predicted defect
    density P(1) / effort, highest first; zero effort first; ties in release order.

    >>> inspection_order([0.5, 0.5, 0.9, 0.2], [10, 10, 0, 1]).tolist()
    [2, 3, 0, 1]
    """
    return np.lexsort((np.arange(len(p1)), _density_key(np.asarray(p1), np.asarray(effort))))


def _density_key(p1: np.ndarray, effort: np.ndarray) -> np.ndarray:
    """Ascending sort key of the inspection order: -P(1)/effort; -inf for zero effort."""
    p1 = np.asarray(p1, dtype=np.float64)
    effort = np.asarray(effort, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        key = np.where(effort > 0, -p1 / np.where(effort > 0, effort, 1.0), -np.inf)
    return key + 0.0  # -0.0 -> 0.0: one zero


def inspection_measures(p1, effort, defective) -> dict[str, float]:
    """The effort-aware measures of one scope, by their definition (a sort of the scope): what
    :class:`EffortCurve` is tested against, and the definition docs/metrics.md works by hand. Arguments are in release order."""
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
    """The effort-aware measures of one fold, against the observed and the true label, under an
    estimator's scope (:func:`effort_scope`).

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

    def __init__(self, estimator) -> None:
        self.width, self.size = effort_scope(estimator)
        self._buffer: list[tuple[np.ndarray, ...]] = []
        self._buffered = 0
        # the scope (evaluations in the trees), in inspection order: key, release number,
        # effort, observed and true defect flags
        self._key = np.zeros(0)
        self._seq = np.zeros(0, dtype=np.int64)
        self._e = np.zeros(0)
        self._d = np.zeros((2, 0), dtype=np.int8)
        self._folded = 0  # evaluations folded in so far (the next one's release number)
        self._totals = np.zeros(len(effort_loop.TOTALS))
        self._last = np.full(2 * N_MEASURES, math.nan)

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
        self._fold(p1, e, d, bounds, out)
        return out.reshape(bounds.size, 2, N_MEASURES)

    # ------------------------------------------------------------------ internals

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

    def _fold(self, p1, e_new, d_new, bounds, out) -> None:
        """Merge the new evaluations into the scope's inspection order (the universe of this
        fold-in), rebuild the trees over it and run the loop."""
        m = p1.size
        _check(p1, e_new, d_new)
        key_new = _density_key(p1, e_new)
        seq0 = self._folded - self._seq.size  # release number of the oldest in scope
        key, seq, e_u, d_u = self._universe(key_new, e_new, d_new)
        rel = seq - seq0  # each one's index in release order (scope first)
        pos, e_rel, d_rel = _by_release(rel, e_u, d_u)
        # distinct efforts (for the pairs of defective ones)
        values = np.unique(e_u)
        wpos = np.searchsorted(values, e_rel) + 1
        # the trees of the scope as it is
        trees, wtrees = _scope_trees(seq < self._folded, e_u, d_u, wpos[rel] - 1, values.size)
        e_at = np.concatenate(([0.0], e_u))
        start = self._seq.size
        head = LOOP.run(
            trees,
            wtrees,
            self._totals,
            e_at,
            pos,
            wpos,
            e_rel,
            d_rel[0].copy(),
            d_rel[1].copy(),
            0,
            start,
            self.width,
            self.size,
            bounds,
            out,
            self._last,
        )
        self._folded += m
        keep = seq >= seq0 + head
        self._key, self._seq, self._e, self._d = key[keep], seq[keep], e_u[keep], d_u[:, keep]

    def _universe(self, key_new, e_new, d_new) -> tuple[np.ndarray, ...]:
        """The scope and the new evaluations (keys ``key_new``, released after the scope's), in
        inspection order: their keys, release numbers, efforts and defect flags (new ones after
        equal old keys: they were released later)."""
        order = np.argsort(key_new, kind="stable")
        at = np.searchsorted(self._key, key_new[order], side="right")
        key = np.insert(self._key, at, key_new[order])
        seq = np.insert(self._seq, at, self._folded + order)
        e_u = np.insert(self._e, at, e_new[order])
        d_u = np.insert(self._d, at, d_new[:, order], axis=1)
        return key, seq, e_u, d_u


def _by_release(rel: np.ndarray, e_u: np.ndarray, d_u: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per evaluation of the universe in release order (``rel``: each one's index in that
    order, the universe in inspection order): its position in inspection order (1-based), its
    effort, its defect flags."""
    count = rel.size
    pos = np.empty(count, dtype=np.int64)
    pos[rel] = np.arange(1, count + 1)
    e_rel = np.empty(count)
    e_rel[rel] = e_u
    d_rel = np.empty((2, count), dtype=np.int8)
    d_rel[:, rel] = d_u
    return pos, e_rel, d_rel


def _scope_trees(present, e_u, d_u, wp_u, n_values: int) -> tuple[np.ndarray, np.ndarray]:
    """The Fenwick trees of the evaluations ``present`` in the universe (in inspection order):
    by position, their count, effort and defective ones (observed, true); by distinct effort
    (``wp_u``: each one's index among the ``n_values`` efforts), the count and effort of the
    defective ones (observed, true)."""
    trees = _fenwick(
        np.vstack((present, np.where(present, e_u, 0.0), present * d_u[0], present * d_u[1]))
    )
    wcount = np.zeros((2, n_values))
    wsum = np.zeros((2, n_values))
    for r in (0, 1):
        mine = present & (d_u[r] == 1)
        np.add.at(wcount[r], wp_u[mine], 1.0)
        np.add.at(wsum[r], wp_u[mine], e_u[mine])
    wtrees = _fenwick(np.vstack((wcount[0], wsum[0], wcount[1], wsum[1])))
    return trees, wtrees


def _check(p1: np.ndarray, effort: np.ndarray, d: np.ndarray) -> None:
    if p1.size and not (np.isfinite(p1).all() and p1.min() >= 0 and p1.max() <= 1):
        raise ValueError("p1 must be probabilities in [0, 1]")
    if effort.size and not (np.isfinite(effort).all() and effort.min() >= 0):
        raise ValueError("effort must be finite and >= 0")
    if d.size and (d.min() < 0 or d.max() > 1):
        raise ValueError("labels must be 0 or 1")


def _fenwick(x: np.ndarray) -> np.ndarray:
    """Fenwick trees (rows, 1-based; slot 0 unused) of the rows of ``x`` (values by position)."""
    rows, size = x.shape
    prefix = np.zeros((rows, size + 1))
    np.cumsum(x, axis=1, out=prefix[:, 1:])
    idx = np.arange(1, size + 1)
    tree = np.zeros((rows, size + 1))
    tree[:, 1:] = prefix[:, idx] - prefix[:, idx - (idx & -idx)]
    return tree
