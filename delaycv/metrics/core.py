"""``Metrics``: the streaming metric state of one (fold, reference) under one estimator.

``add`` only appends to Python lists; ``snapshot`` folds the buffered evaluations into the state
with a few vectorised numpy operations (cost proportional to the new evaluations, plus the window
for ``Sliding``) and evaluates the formulas of ``formulas``.

MOA semantics (reference §6.2), for evaluations with a known prediction p in {0, 1}:

* Evaluations before the first one with w > 0 are ignored by the MOA part (MOA resets its
  evaluator at the first w > 0 evaluation); the NoChange label ``last`` starts at 0 there.
* An evaluation with w > 0 updates everything; one with w = 0 updates only the NoChange and
  majority references (it adds 0 with count 1, as MOA) and the NoChange label.
* The majority class is argmax_i E(t = i) with ties to class 0. As in MOA it is read inside the
  class loop: for class 0 (``maj_0``) the class-0 estimator already holds the current evaluation
  and the class-1 estimator does not yet; for class 1 (``maj_1``) and for the majority reference of
  kappa_m both do. A w = 0 evaluation reads the unchanged state.

Abstentions (p = -1) are outside the MOA part: they update only the unknown-rate sums, the
probability metrics and the prequential prior of the information score. Weights: MOA adds w to a
sum and 1 to its count; we add w to both, so that every value stays a weighted mean (identical
for w = 1; MOA's TP/FP/TN/FN are integer counts, ours sums of w).

Under ``Fading`` an empty elementary estimator reads NaN here (MOA reads 0): ``MOA_MEASUREMENTS``
substitutes MOA's 0 when it rebuilds MOA's values from a snapshot.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from delaycv.metrics.auc import CumulativeAUC, auc_value, pair_sums
from delaycv.metrics.estimators import Cumulative, Fading, Sliding, Tumbling, make_estimator
from delaycv.metrics.formulas import METRICS, compute
from delaycv.metrics.rows import GMASK, LUT, N_LUT_ROWS, N_ROWS, ROW_GROUP, R

_EPS = float(np.finfo(np.float64).eps)
_LN2 = math.log(2.0)
_IA, _IT0, _IT1 = R["a_w"], R["a_t0"], R["a_t1"]
_IU0, _IU1 = R["u0_w"], R["u1_w"]
_COLK = np.array([_IA, _IT0, _IT1])


class Metrics:
    """Streaming metrics of one fold against one reference under one estimator.

    ``Metrics(estimator, metrics=None)``: ``estimator`` is ``Cumulative()``, ``Sliding(width)``,
    ``Fading(alpha)``, ``Tumbling(size)`` or a config mapping (``make_estimator``); ``metrics`` a
    subset of ``METRICS`` to report (None = all, required for ``MOA_MEASUREMENTS``).
    """

    def __init__(self, estimator, metrics: Iterable[str] | None = None) -> None:
        self.estimator = make_estimator(estimator)
        if metrics is None:
            self.names = METRICS
        else:
            names = tuple(metrics)
            unknown = sorted(set(names) - set(METRICS))
            if unknown:
                raise ValueError(f"unknown metric(s) {unknown}; known: {', '.join(METRICS)}")
            self.names = names
        self._want_auc = "auc" in self.names
        self._p: list = []
        self._q: list = []
        self._t: list = []
        self._w: list = []
        self.evaluations = 0  # evaluations folded into the state
        self._started = False
        self._last = 0
        self._prior = [0.0, 0.0]
        self._cum = np.zeros(N_ROWS)
        est = self.estimator
        if isinstance(est, Cumulative):
            self._auc = CumulativeAUC() if self._want_auc else None
        elif isinstance(est, Fading):
            self._alpha = float(est.alpha)
            self._faded = np.zeros(N_ROWS)
            self._pw = self._alpha ** np.arange(1025, dtype=np.float64)
            self._sub = (
                10**18 if self._alpha == 1.0 else max(1, int(600.0 / -math.log(self._alpha)))
            )
        elif isinstance(est, Sliding):
            self._ring = np.zeros((est.width, N_ROWS))
            self._ring_q = np.zeros((est.width, 3))  # score, label, weight (0 = not in AUC)
            self._pos = 0  # next slot
        elif isinstance(est, Tumbling):
            self._chunk = np.zeros(N_ROWS)
            self._chunk_n = 0
            self._chunk_q: list[np.ndarray] = []
            self._chunks: list[dict[str, float]] = []
        self._empty = dict.fromkeys(self.names, math.nan)

    # ------------------------------------------------------------------ feeding
    def add(self, pred: int, proba: float, label: int, weight: float = 1.0) -> None:
        """Buffer one evaluation: pred in {1, 0, -1 (unknown)}, proba = P(positive) or NaN,
        label = reference label (0/1), weight >= 0. Validated at the next ``snapshot``."""
        self._p.append(pred)
        self._q.append(proba)
        self._t.append(label)
        self._w.append(weight)

    def add_many(self, pred, proba, label, weight=None) -> None:
        """Buffer many evaluations at once (array-likes of equal length)."""
        pred = list(np.asarray(pred).tolist())
        n = len(pred)
        self._p.extend(pred)
        self._q.extend(np.asarray(proba, dtype=float).reshape(n).tolist())
        self._t.extend(np.asarray(label).reshape(n).tolist())
        if weight is None:
            self._w.extend([1.0] * n)
        else:
            self._w.extend(np.asarray(weight, dtype=float).reshape(n).tolist())

    # ------------------------------------------------------------------ reading
    def snapshot(self) -> dict[str, float]:
        """The current value of every selected metric under the estimator.

        ``Tumbling``: the values of the last completed chunk (all NaN before the first).
        """
        self._flush()
        est = self.estimator
        if isinstance(est, Tumbling):
            return dict(self._chunks[-1]) if self._chunks else dict(self._empty)
        if isinstance(est, Cumulative):
            auc = self._auc.value() if self._auc is not None else math.nan
            values = compute(self._cum, self._cum, auc)
        elif isinstance(est, Fading):
            values = compute(self._faded, self._cum, math.nan)
        else:
            sums = self._ring.sum(axis=0)
            auc = math.nan
            if self._want_auc:
                rq = self._ring_q
                keep = rq[:, 2] > 0
                auc = auc_value(*pair_sums(rq[keep, 0], rq[keep, 1], rq[keep, 2]))
            values = compute(sums, sums, auc)
        if self.names is METRICS:
            return values
        return {k: values[k] for k in self.names}

    def chunks(self) -> list[dict[str, float]]:
        """``Tumbling`` only: the values of every completed chunk, in order; each dict also holds
        ``chunk`` (0-based) and ``evaluations`` (evaluations folded in at the chunk's end)."""
        if not isinstance(self.estimator, Tumbling):
            raise TypeError("chunks() is defined for the Tumbling estimator only")
        self._flush()
        size = self.estimator.size
        return [
            {"chunk": i, "evaluations": (i + 1) * size, **values}
            for i, values in enumerate(self._chunks)
        ]

    def chunks_frame(self):
        """``chunks()`` as a pandas DataFrame (columns chunk, evaluations, then the metrics)."""
        import pandas as pd

        return pd.DataFrame(self.chunks(), columns=["chunk", "evaluations", *self.names])

    # ------------------------------------------------------------------ internals
    def _flush(self) -> None:
        if not self._p:
            return
        p = np.array(self._p, dtype=np.int64)
        q = np.array(self._q, dtype=np.float64)
        t = np.array(self._t, dtype=np.int64)
        w = np.array(self._w, dtype=np.float64)
        self._p, self._q, self._t, self._w = [], [], [], []
        _validate(p, q, t, w)
        if isinstance(self.estimator, Tumbling):
            size = self.estimator.size
            start = 0
            while start < p.size:
                stop = min(p.size, start + size - self._chunk_n)
                self._ingest(p[start:stop], q[start:stop], t[start:stop], w[start:stop])
                start = stop
        else:
            self._ingest(p, q, t, w)

    def _ingest(self, p, q, t, w) -> None:
        m = p.size
        pos = w > 0
        known = p >= 0
        act = known & pos
        # started: at or after the first active evaluation (MOA's reset)
        if self._started:
            started = np.ones(m, dtype=bool)
        else:
            first = np.flatnonzero(act)
            started = np.zeros(m, dtype=bool)
            if first.size:
                started[first[0] :] = True
                self._started = True
        # NoChange label: reference label of the previous known evaluation since the start
        ks = np.flatnonzero(known & started)
        last = np.zeros(m, dtype=np.int64)
        if ks.size:
            labels = t[ks]
            last[ks[0]] = self._last
            last[ks[1:]] = labels[:-1]
            self._last = int(labels[-1])
        # majority class trajectory of the estimator's class priors
        aw = np.where(act, w, 0.0)
        x = np.empty((m, 3))
        x[:, 0] = aw
        x[:, 1] = np.where(t == 0, aw, 0.0)
        x[:, 2] = aw - x[:, 1]
        before, after = self._trajectory(x, act)
        e0_after = _est(after[:, 1], after[:, 0])
        e1_after = _est(after[:, 2], after[:, 0])
        e1_before = _est(before[:, 2], before[:, 0])
        mid0 = e1_before > e0_after
        mid1 = e1_after > e0_after
        code = p + 1
        code = code * 2 + t
        code = code * 2 + pos
        code = code * 2 + started
        code = code * 2 + last
        code = code * 2 + mid0
        code = code * 2 + mid1
        code = code * 2 + mid1
        v = np.empty((m, N_ROWS))
        v[:, :N_LUT_ROWS] = LUT[code]
        v[:, :N_LUT_ROWS] *= np.where(pos, w, 1.0)[:, None]
        # probability metrics
        bmask = pos & np.isfinite(q)
        u = v[:, [_IU0, _IU1]]
        cu = np.cumsum(u, axis=0) - u
        n0 = self._prior[0] + cu[:, 0]
        n1 = self._prior[1] + cu[:, 1]
        self._prior[0] += float(u[:, 0].sum())
        self._prior[1] += float(u[:, 1].sum())
        qq = np.where(bmask, q, 0.5)
        y = t == 1
        pt = np.where(y, qq, 1.0 - qq)  # predicted probability of the reference label
        prior = np.where(y, n1 + 1.0, n0 + 1.0) / (n0 + n1 + 2.0)
        with np.errstate(divide="ignore"):
            gain = np.where(
                pt >= prior,
                (np.log(pt) - np.log(prior)) / _LN2,
                (np.log1p(-prior) - np.log1p(-pt)) / _LN2,
            )
        bw = np.where(bmask, w, 0.0)
        v[:, R["b_w"]] = bw
        v[:, R["b_brier"]] = bw * (qq - y) ** 2
        v[:, R["b_logloss"]] = bw * -np.log(np.clip(pt, _EPS, 1.0 - _EPS))
        v[:, R["b_info"]] = np.where(bmask, bw * gain, 0.0)
        self.evaluations += m
        self._aggregate(v, code, bmask, q, y, bw)

    def _trajectory(self, x: np.ndarray, act: np.ndarray):
        """(before, after): the (w, w[t=0], w[t=1]) class-prior sums of the estimator just
        before and just after each evaluation, shape (m, 3)."""
        m = x.shape[0]
        est = self.estimator
        if isinstance(est, Cumulative | Tumbling):
            init = self._cum[_COLK] if isinstance(est, Cumulative) else self._chunk[_COLK]
            after = np.cumsum(x, axis=0) + init
        elif isinstance(est, Fading):
            init = self._faded[_COLK]
            c = np.cumsum(act)
            after = np.empty((m, 3))
            start = 0
            base = 0
            state = init
            while start < m:
                # sub-chunks of at most self._sub active evaluations: alpha^-c stays finite
                stop = int(np.searchsorted(c, base + self._sub, "right"))
                stop = max(stop, start + 1)
                cc = c[start:stop] - base
                pw = self._powers(int(cc[-1]) if cc.size else 0)[cc]
                after[start:stop] = pw[:, None] * (
                    state + np.cumsum(x[start:stop] / pw[:, None], axis=0)
                )
                state = after[stop - 1]
                base = int(c[stop - 1])
                start = stop
        else:
            width = est.width
            idx = (self._pos + np.arange(width)) % width
            old = self._ring[idx][:, _COLK]
            cs = np.zeros((width + m + 1, 3))
            np.cumsum(np.concatenate((old, x)), axis=0, out=cs[1:])
            after = cs[width + 1 :] - cs[1 : m + 1]
            before = cs[width : width + m] - cs[:m]
            return before, after
        before = np.empty_like(after)
        before[0] = init
        before[1:] = after[:-1]
        return before, after

    def _powers(self, n: int) -> np.ndarray:
        if n >= self._pw.size:
            self._pw = self._alpha ** np.arange(max(n + 1, 2 * self._pw.size), dtype=np.float64)
        return self._pw

    def _aggregate(self, v, code, bmask, q, y, bw) -> None:
        est = self.estimator
        if isinstance(est, Cumulative):
            self._cum += v.sum(axis=0)
            if self._auc is not None and bmask.any():
                self._auc.add(q[bmask], y[bmask].astype(np.float64), bw[bmask])
        elif isinstance(est, Fading):
            self._cum += v.sum(axis=0)
            g = np.empty((v.shape[0], GMASK.shape[1] + 1), dtype=bool)
            g[:, :-1] = GMASK[code]
            g[:, -1] = bmask
            c = np.cumsum(g, axis=0)
            n = c[-1]
            pw = self._powers(int(n.max()))
            fw = pw[n - c] * g
            self._faded = pw[n][ROW_GROUP] * self._faded + (v * fw[:, ROW_GROUP]).sum(axis=0)
        elif isinstance(est, Sliding):
            width = est.width
            m = v.shape[0]
            qrow = np.empty((m, 3))
            qrow[:, 0] = np.where(bmask, q, 0.0)
            qrow[:, 1] = y
            qrow[:, 2] = bw
            if m >= width:
                self._ring[:] = v[m - width :]
                self._ring_q[:] = qrow[m - width :]
                self._pos = 0
            else:
                idx = (self._pos + np.arange(m)) % width
                self._ring[idx] = v
                self._ring_q[idx] = qrow
                self._pos = (self._pos + m) % width
        else:
            self._chunk += v.sum(axis=0)
            self._chunk_n += v.shape[0]
            if self._want_auc and bmask.any():
                self._chunk_q.append(np.stack((q[bmask], y[bmask], bw[bmask])))
            if self._chunk_n == est.size:
                auc = math.nan
                if self._want_auc and self._chunk_q:
                    qa = np.concatenate(self._chunk_q, axis=1)
                    auc = auc_value(*pair_sums(qa[0], qa[1], qa[2]))
                values = compute(self._chunk, self._chunk, auc)
                self._chunks.append({k: values[k] for k in self.names})
                self._chunk = np.zeros(N_ROWS)
                self._chunk_n = 0
                self._chunk_q = []


def _est(s: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Estimation s / b, 0 when empty (b = 0): what MOA's majority rule sees (NaN > x is false)."""
    out = np.zeros_like(s)
    np.divide(s, b, out=out, where=b > 0)
    return out


def _validate(p, q, t, w) -> None:
    if not np.isin(p, (-1, 0, 1)).all():
        raise ValueError(f"pred must be 1, 0 or -1 (unknown), got {sorted(set(p.tolist()))}")
    if not np.isin(t, (0, 1)).all():
        raise ValueError(f"label must be 0 or 1, got {sorted(set(t.tolist()))}")
    if not (np.isfinite(w) & (w >= 0)).all():
        raise ValueError("weight must be finite and >= 0")
    finite = np.isfinite(q)
    if not ((np.isnan(q) | finite) & ~(finite & ((q < 0) | (q > 1)))).all():
        raise ValueError("proba must be in [0, 1] or NaN")
