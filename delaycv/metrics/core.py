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
from delaycv.metrics.formulas import METRICS, compute, compute_many
from delaycv.metrics.rows import (
    GMASK_I,
    GROUPS,
    LUT,
    N_CODES,
    N_GROUPS,
    N_LUT_ROWS,
    N_ROWS,
    NONZERO,
    ROW_GROUP,
    UPDATES,
    R,
)

_EPS = float(np.finfo(np.float64).eps)
_LN2 = math.log(2.0)
_IA, _IT0, _IT1 = R["a_w"], R["a_t0"], R["a_t1"]
_IU0, _IU1 = R["u0_w"], R["u1_w"]
_IB = R["b_w"]
_COLK = np.array([_IA, _IT0, _IT1])
_COUNTS = np.array([R[k] for k in ("a_w", "a_tp", "a_fp", "a_fn", "a_tn", "u0_unk", "u1_unk")])
_LUT_COLS = np.arange(N_LUT_ROWS)
_LUT_COUNTS = np.ascontiguousarray(LUT[:, _COUNTS])
#: For an active evaluation (known prediction p, w > 0, after the start), the own events of each
#: group are all evaluations (A, Z, B), those with its prediction (P0, P1) or those with its label
#: (T0, T1, U0, U1): per group the fading weight sequence used (0 all, 1 by prediction, 2 by
#: label) and per row that of its group; ``_ACTIVE_OWN`` picks each group's count of own events
#: from (all, p = 0, p = 1, t = 0, t = 1).
_GROUP_SEQ = np.array([{"p": 1, "t": 2, "u": 2}.get(g[0], 0) for g in GROUPS])
_ACTIVE_SEQ = _GROUP_SEQ[ROW_GROUP]
_ACTIVE_OWN = np.array(
    [0 if s == 0 else 2 * s - 1 + int(g[-1]) for g, s in zip(GROUPS, _GROUP_SEQ, strict=True)]
)
#: batches of at most this many evaluations are folded in one at a time (cheaper than numpy)
SCALAR_BATCH = 12
#: ``snapshots`` computes the prefixes of this many bounds or more in one pass (one pass costs
#: about as much as three one-bound snapshots of the same evaluations)
PREFIX_MIN = 4


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
        self._cols = np.array([METRICS.index(k) for k in self.names], dtype=np.intp)
        # evaluations from add, not yet folded in: predictions, probabilities, labels, weights
        self._bp: list = []
        self._bq: list = []
        self._bt: list = []
        self._bw: list = []
        self._segs: list = []  # (p, q, t, w) arrays (int64, float64, int64, float64), in order
        self._nseg = 0  # evaluations in _segs (all of them come before those of add)
        self.evaluations = 0  # evaluations folded into the state
        self._started = False
        self._last = 0
        self._prior = [0.0, 0.0]
        self._cum = np.zeros(N_ROWS)
        est = self.estimator
        self._kind = est.kind
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
            self._ring = np.zeros((N_ROWS, est.width))  # one row per sum: fast reductions
            self._ring_q = np.zeros((est.width, 3))  # score, label, weight (0 = not in AUC)
            self._pos = 0  # next slot
        elif isinstance(est, Tumbling):
            self._chunk = np.zeros(N_ROWS)
            self._chunk_n = 0
            self._chunk_q: list[tuple] = []
            self._chunks: list[dict[str, float]] = []
        self._empty = dict.fromkeys(self.names, math.nan)
        self._auc_pending: list[tuple[float, float, float]] = []

    # ------------------------------------------------------------------ feeding
    def add(self, pred: int, proba: float, label: int, weight: float = 1.0) -> None:
        """Buffer one evaluation: pred in {1, 0, -1 (unknown)}, proba = P(positive) or NaN,
        label = reference label (0/1), weight >= 0. Validated at the next ``snapshot``."""
        self._bp.append(pred)
        self._bq.append(proba)
        self._bt.append(label)
        self._bw.append(weight)

    def add_many(self, pred, proba, label, weight=None) -> None:
        """Buffer many evaluations at once (array-likes of equal length)."""
        p = np.asarray(pred)
        n = len(p)
        q = np.asarray(proba, dtype=float).reshape(n)
        t = np.asarray(label).reshape(n)
        w = np.ones(n) if weight is None else np.asarray(weight, dtype=float).reshape(n)
        if p.ndim != 1 or p.dtype.kind not in "biu" or t.dtype.kind not in "biu":
            # not plain integers: buffered as values, validated at the next snapshot
            self._bp.extend(p.tolist())
            self._bq.extend(q.tolist())
            self._bt.extend(t.tolist())
            self._bw.extend(w.tolist())
            return
        if not n:
            return
        self._seal()
        self._segs.append((p.astype(np.int64), q, t.astype(np.int64), w))
        self._nseg += n

    def _seal(self) -> None:
        """Move the evaluations buffered by ``add`` into ``_segs`` (as arrays)."""
        p, q, t, w = self._bp, self._bq, self._bt, self._bw
        m = len(p)
        if not m:
            return
        self._bp, self._bq, self._bt, self._bw = [], [], [], []
        self._segs.append(
            (
                np.fromiter(p, dtype=np.int64, count=m),
                np.fromiter(q, dtype=np.float64, count=m),
                np.fromiter(t, dtype=np.int64, count=m),
                np.fromiter(w, dtype=np.float64, count=m),
            )
        )
        self._nseg += m

    @property
    def buffered(self) -> int:
        """Evaluations added and not yet folded into the state."""
        return len(self._bp) + self._nseg

    # ------------------------------------------------------------------ reading
    def snapshot(self) -> dict[str, float]:
        """The current value of every selected metric under the estimator.

        ``Tumbling``: the values of the last completed chunk (all NaN before the first).
        """
        if self._bp or self._segs:
            self._flush()
        if self._kind == "tumbling":
            return dict(self._chunks[-1]) if self._chunks else dict(self._empty)
        values = self._values()
        if self.names is METRICS:
            return values
        return {k: values[k] for k in self.names}

    def snapshots(self, bounds) -> np.ndarray:
        """The values after each of several prefixes of the buffered evaluations.

        ``bounds``: non-decreasing counts of buffered evaluations (from ``add``/``add_many``
        since the last fold-in); row i of the result holds the selected metrics (columns in
        ``names`` order) as ``snapshot`` would give them after the first ``bounds[i]``
        evaluations were folded in. The first ``bounds[-1]`` evaluations are folded in; the
        rest stay buffered.

        The same as folding in the evaluations between consecutive bounds and calling
        ``snapshot`` at each bound; under ``Fading``, once the MOA part has started and every
        evaluation is active (known prediction, w > 0, a probability: the engine's case), runs
        of at least ``PREFIX_MIN`` bounds are computed at once (:meth:`_fade_prefixes`), equal
        to that up to rounding.
        """
        bounds = np.asarray(bounds, dtype=np.int64).reshape(-1)
        k = bounds.size
        out = np.empty((k, len(self.names)))
        if not k:
            return out
        self._seal()
        total = self._nseg
        if bounds[0] < 0 or bounds[-1] > total or (np.diff(bounds) < 0).any():
            raise ValueError(
                f"bounds must be non-decreasing counts within the {total} buffered evaluations, "
                f"got {bounds.tolist()[:5]}{'...' if k > 5 else ''}"
            )
        segs = self._segs
        if len(segs) == 1:
            p, q, t, w = segs[0]
        elif segs:
            p, q, t, w = (np.concatenate(parts) for parts in zip(*segs, strict=True))
        else:
            p = t = np.zeros(0, dtype=np.int64)
            q = w = np.zeros(0)
        end = int(bounds[-1])
        rest = [(p[end:], q[end:], t[end:], w[end:])] if end < total else []
        self._segs, self._nseg = [], 0
        i, prev = 0, 0
        vectorised = self._kind == "fading"
        while i < k:
            if vectorised and self._started:
                # the longest run of bounds whose evaluations fit one vectorised pass
                j = int(np.searchsorted(bounds, prev + self._sub, "right"))
                if j - i >= PREFIX_MIN:
                    b = int(bounds[j - 1])
                    rel = bounds[i:j] - prev
                    rows = self._fade_prefixes(p[prev:b], q[prev:b], t[prev:b], w[prev:b], rel)
                    if rows is not None:
                        out[i:j] = rows[:, self._cols]
                        i, prev = j, b
                        continue
                    vectorised = False  # not every evaluation is active: one bound at a time
            b = int(bounds[i])
            if b > prev:
                self._segs, self._nseg = [(p[prev:b], q[prev:b], t[prev:b], w[prev:b])], b - prev
            snap = self.snapshot()
            out[i] = [snap[name] for name in self.names]
            i, prev = i + 1, b
        self._segs, self._nseg = rest, total - end
        return out

    def _values(self) -> dict[str, float]:
        """Every metric of the current state (not Tumbling)."""
        kind = self._kind
        if kind == "fading":
            values = compute(self._faded, self._cum, math.nan)
        elif kind == "cumulative":
            auc = self._auc.value() if self._auc is not None else math.nan
            values = compute(self._cum, self._cum, auc)
        else:
            sums = self._ring.sum(axis=1)
            auc = math.nan
            if self._want_auc:
                rq = self._ring_q
                keep = rq[:, 2] > 0
                auc = auc_value(*pair_sums(rq[keep, 0], rq[keep, 1], rq[keep, 2]))
            values = compute(sums, sums, auc)
        return values

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
        m = len(self._bp) + self._nseg
        if not m:
            return
        if m <= SCALAR_BATCH and self._kind != "window":
            rows = [
                row for seg in self._segs for row in zip(*(a.tolist() for a in seg), strict=True)
            ]
            rows.extend(zip(self._bp, self._bq, self._bt, self._bw, strict=True))
            self._bp, self._bq, self._bt, self._bw = [], [], [], []
            self._segs, self._nseg = [], 0
            self._auc_pending = []
            for row in rows:
                self._fold_one(*row)
            if self._auc_pending and self._kind == "cumulative":
                self._auc.add(*np.array(self._auc_pending).T)
            return
        self._seal()
        segs = self._segs
        self._segs, self._nseg = [], 0
        if len(segs) == 1:
            p, q, t, w = segs[0]
        else:
            p, q, t, w = (np.concatenate(parts) for parts in zip(*segs, strict=True))
        active, unit = _validate(p, q, t, w)
        if self._kind == "tumbling":
            size = self.estimator.size
            start = 0
            while start < m:
                stop = min(m, start + size - self._chunk_n)
                self._ingest(
                    p[start:stop], q[start:stop], t[start:stop], w[start:stop], active, unit
                )
                start = stop
        else:
            self._ingest(p, q, t, w, active, unit)

    # -- one evaluation at a time (small batches; the same arithmetic as MOA for Fading)
    def _fold_one(self, p, q, t, w) -> None:
        if p not in (-1, 0, 1) or t not in (0, 1):
            raise ValueError(f"pred must be 1, 0 or -1 and label 0 or 1, got {p!r}, {t!r}")
        w = float(w)
        q = float(q)
        if not (w >= 0.0 and w != math.inf):
            raise ValueError(f"weight must be finite and >= 0, got {w!r}")
        if not (q != q or 0.0 <= q <= 1.0):
            raise ValueError(f"proba must be in [0, 1] or NaN, got {q!r}")
        kind = self._kind
        fading = kind == "fading"
        if fading:
            state = self._faded.tolist()
        elif kind == "cumulative":
            state = self._cum.tolist()
        else:
            state = self._chunk.tolist()
        pos = w > 0.0
        known = p >= 0
        act = known and pos
        if act:
            self._started = True
        started = self._started
        last = 0
        if known and started:
            last = self._last
            self._last = t
        # class-prior estimators before and after this evaluation
        b, s0, s1 = state[_IA], state[_IT0], state[_IT1]
        e1_before = s1 / b if b > 0 else 0.0
        if act:
            if fading:
                a = self._alpha
                b = a * b + w
                s0 = a * s0 + (w if t == 0 else 0.0)
                s1 = a * s1 + (w if t == 1 else 0.0)
            else:
                b += w
                if t == 0:
                    s0 += w
                else:
                    s1 += w
        e0 = s0 / b if b > 0 else 0.0
        e1 = s1 / b if b > 0 else 0.0
        mid0 = e1_before > e0
        mid1 = e1 > e0
        code = ((((((p + 1) * 2 + t) * 2 + pos) * 2 + started) * 2 + last) * 2 + mid0) * 2 + mid1
        code = code * 2 + mid1
        mult = w if pos else 1.0
        if fading:
            a = self._alpha
            for r, v in UPDATES[code]:
                state[r] = a * state[r] + mult * v
        else:
            for r, v in NONZERO[code]:
                state[r] += mult * v
        # probability metrics
        y = t == 1
        if pos:
            if y:
                self._prior[1] += w
            else:
                self._prior[0] += w
        if pos and q == q:
            n0, n1 = self._prior
            n0, n1 = (n0, n1 - w) if y else (n0 - w, n1)
            pt = q if y else 1.0 - q
            prior = ((n1 if y else n0) + 1.0) / (n0 + n1 + 2.0)
            if pt >= prior:
                gain = math.log2(pt) - math.log2(prior)
            else:
                gain = (math.log1p(-prior) - math.log1p(-pt)) / _LN2
            vals = (w, w * (q - y) ** 2, w * -math.log(min(max(pt, _EPS), 1.0 - _EPS)), w * gain)
            if fading:
                a = self._alpha
                for k in range(4):
                    state[_IB + k] = a * state[_IB + k] + vals[k]
            else:
                for k in range(4):
                    state[_IB + k] += vals[k]
            if self._want_auc and kind != "fading":
                self._auc_pending.append((q, float(y), w))
        self.evaluations += 1
        if fading:
            self._faded = np.array(state)
            cnt = self._cum
            for r, v in NONZERO[code]:
                cnt[r] += mult * v
        elif kind == "cumulative":
            self._cum = np.array(state)
        else:
            self._chunk = np.array(state)
            self._chunk_n += 1
            if self._auc_pending:
                self._chunk_q.append(tuple(np.array(self._auc_pending).T))
                self._auc_pending = []
            if self._chunk_n == self.estimator.size:
                self._close_chunk()

    # -- many evaluations at once (vectorised)
    def _ingest(self, p, q, t, w, active: bool = False, unit: bool = False) -> None:
        m = p.size
        if active and self._started:
            # every evaluation known, weighted and with a probability: the same arithmetic
            # with the masks dropped (the engine's case)
            self._ingest_active(p, q, t, w, unit)
            return
        pos = w > 0
        known = p >= 0
        act = known & pos
        wpos = np.where(pos, w, 0.0)
        # started: at or after the first active evaluation (MOA's reset)
        if self._started:
            started = 1
            ks = np.flatnonzero(known)
        else:
            first = np.flatnonzero(act)
            started = np.zeros(m, dtype=np.int64)
            if first.size:
                started[first[0] :] = 1
                self._started = True
            ks = np.flatnonzero(known & (started == 1))
        # NoChange label: reference label of the previous known evaluation since the start
        last = np.zeros(m, dtype=np.int64)
        if ks.size:
            labels = t[ks]
            last[ks[0]] = self._last
            last[ks[1:]] = labels[:-1]
            self._last = int(labels[-1])
        # majority class trajectory of the estimator's class priors
        x = np.empty((3, m))
        aw = x[0]
        np.multiply(wpos, known, out=aw)
        np.multiply(aw, t, out=x[2])
        np.subtract(aw, x[2], out=x[1])
        mid0, mid1 = self._majority(x, act)
        code = (p + 1) * 128 + t * 64 + pos * 32 + started * 16 + last * 8 + mid0 * 4 + mid1 * 3
        v = np.empty((m, N_ROWS))
        np.multiply(LUT[code], np.where(pos, w, 1.0)[:, None], out=v[:, :N_LUT_ROWS])
        # probability metrics; the prior of the information score counts earlier evaluations
        bmask = pos & ~np.isnan(q)
        y = t == 1
        bw = None
        if bmask.any():
            wy = wpos * t
            n1 = np.cumsum(wy)
            n = np.cumsum(wpos)
            n1 += self._prior[1] - wy
            n += self._prior[0] + self._prior[1] - wpos
            qq = np.where(bmask, q, 0.5)
            pt = np.where(y, qq, 1.0 - qq)  # predicted probability of the reference label
            prior = np.where(y, n1 + 1.0, n - n1 + 1.0) / (n + 2.0)
            gain = np.where(
                pt >= prior,
                np.log2(np.maximum(pt, 1e-300)) - np.log2(prior),
                (np.log1p(-prior) - np.log1p(-np.minimum(pt, 1.0 - 1e-16))) / _LN2,
            )
            bw = np.where(bmask, w, 0.0)
            v[:, _IB] = bw
            v[:, _IB + 1] = bw * (qq - y) ** 2
            v[:, _IB + 2] = bw * -np.log(np.clip(pt, _EPS, 1.0 - _EPS))
            v[:, _IB + 3] = bw * gain
        else:
            v[:, _IB:] = 0.0
        total = float(wpos.sum())
        total1 = float(wpos @ t)
        self._prior[0] += total - total1
        self._prior[1] += total1
        self.evaluations += m
        self._aggregate(v, code, bmask, q, y, bw)

    def _ingest_active(self, p, q, t, w, unit: bool) -> None:
        """``_ingest`` when the MOA part has started and every evaluation has p >= 0, w > 0 and a
        finite probability: the masks are all true, so they are dropped; with every w = 1 the
        multiplications by w (exact identities) are dropped too, and Cumulative/Tumbling sum
        the lookup rows by counting codes (integer sums: exact in any order)."""
        m = p.size
        code, vb, y = self._active_terms(p, q, t, w, unit)
        kind = self._kind
        if kind == "fading":
            self._fade_active(p, t, code, None if unit else w, vb)
            return
        if unit and (kind == "cumulative" or kind == "tumbling"):
            sums = np.empty(N_ROWS)
            sums[:N_LUT_ROWS] = np.bincount(code, minlength=LUT.shape[0]) @ LUT
            sums[_IB:] = vb.sum(axis=0)
            if kind == "cumulative":
                self._cum += sums
                if self._auc is not None:
                    self._auc.add(q, y.astype(np.float64), w)
            else:
                self._chunk += sums
                self._chunk_n += m
                if self._want_auc:
                    self._chunk_q.append((q, y.astype(np.float64), w))
                if self._chunk_n == self.estimator.size:
                    self._close_chunk()
            return
        v = np.empty((m, N_ROWS))
        if unit:
            v[:, :N_LUT_ROWS] = LUT[code]
        else:
            np.multiply(LUT[code], w[:, None], out=v[:, :N_LUT_ROWS])
        v[:, _IB:] = vb
        self._aggregate(v, code, np.ones(m, dtype=bool), q, y, w)

    def _active_terms(self, p, q, t, w, unit: bool):
        """The terms of a batch of active evaluations (see ``_ingest_active``): the lookup code
        and the B rows (w, brier, log loss, information gain; times w unless ``unit``) of each,
        and y = (t == 1). Advances the NoChange label, the prior and the evaluation count; the
        state sums are left to the caller (the majority trajectory is read from them)."""
        m = p.size
        last = np.empty(m, dtype=np.int64)
        last[0] = self._last
        last[1:] = t[:-1]
        self._last = int(t[-1])
        x = np.empty((3, m))
        x[0] = w
        np.multiply(w, t, out=x[2])
        np.subtract(w, x[2], out=x[1])
        mid0, mid1 = self._majority(x, None)
        code = p * 128
        code += t * 64
        code += last * 8
        code += mid0 * 4
        code += mid1 * 3
        code += 128 + 32 + 16  # (p + 1) * 128 + pos * 32 + started * 16
        y = t == 1
        wy = x[2]
        n1 = np.cumsum(wy)
        n = np.cumsum(w)
        n1 += self._prior[1] - wy
        n += self._prior[0] + self._prior[1] - w
        pt = np.where(y, q, 1.0 - q)
        prior = np.where(y, n1 + 1.0, n - n1 + 1.0) / (n + 2.0)
        gain = np.where(
            pt >= prior,
            np.log2(np.maximum(pt, 1e-300)) - np.log2(prior),
            (np.log1p(-prior) - np.log1p(-np.minimum(pt, 1.0 - 1e-16))) / _LN2,
        )
        vb = np.empty((m, N_ROWS - _IB))
        vb[:, 0] = w
        brier = (q - y) ** 2
        loss = -np.log(np.clip(pt, _EPS, 1.0 - _EPS))
        if unit:
            vb[:, 1] = brier
            vb[:, 2] = loss
            vb[:, 3] = gain
        else:
            np.multiply(w, brier, out=vb[:, 1])
            np.multiply(w, loss, out=vb[:, 2])
            np.multiply(w, gain, out=vb[:, 3])
        total = float(w.sum())
        total1 = float(w @ t)
        self._prior[0] += total - total1
        self._prior[1] += total1
        self.evaluations += m
        return code, vb, y

    def _fade_prefixes(self, p, q, t, w, bounds: np.ndarray) -> np.ndarray | None:
        """``Fading`` after the MOA part started: fold in the batch (``bounds[-1]`` evaluations)
        and return every metric (``METRICS`` columns) after each prefix ``bounds[i]``, or None
        (nothing folded in) unless every evaluation is active. The batch holds at most
        ``_sub`` evaluations, so that alpha ** -count stays finite.

        A sum of group g is faded on g's own events only: after b evaluations it is
        ``alpha ** n_g(b) * (s_0 + sum_{k < b, k own} alpha ** -c_g(k) v_k)``, with c_g(k) the
        own events up to and including k and n_g(b) those before b. For an active evaluation the
        own-event count is that of all evaluations, of those with its prediction or of those
        with its label (``_ACTIVE_SEQ``); one cumulative sum over the scaled terms gives every
        prefix at once."""
        if not p.size:
            values = compute(self._faded, self._cum, math.nan)
            return np.repeat(np.array([list(values.values())]), bounds.size, 0)
        active, unit = _validate(p, q, t, w)
        if not active:
            return None
        m = p.size
        code, vb, _ = self._active_terms(p, q, t, w, unit)
        # own events up to and including each evaluation: all, same prediction, same label
        own = np.empty((3, m), dtype=np.int64)
        own[0] = np.arange(1, m + 1)
        cum_p1, cum_t1 = np.cumsum(p == 1), np.cumsum(t == 1)
        own[1] = np.where(p == 1, cum_p1, own[0] - cum_p1)
        own[2] = np.where(t == 1, cum_t1, own[0] - cum_t1)
        scale = np.power(self._alpha, -own.astype(np.float64))  # (3, m)
        terms = np.empty((m + 1, N_ROWS))
        terms[0] = 0.0
        terms[1:, :N_LUT_ROWS] = LUT[code]
        terms[1:, _IB:] = vb
        if not unit:
            terms[1:, :N_LUT_ROWS] *= w[:, None]
        counts = np.cumsum(terms[:, _COUNTS], axis=0)[bounds]  # unfaded
        terms[1:] *= scale.T[:, _ACTIVE_SEQ]
        sums = np.cumsum(terms, axis=0)[bounds]
        # own events before each bound, per group, then per row
        before = np.zeros((bounds.size, 5), dtype=np.int64)
        nz = bounds > 0
        before[:, 0] = bounds
        before[nz, 2] = cum_p1[bounds[nz] - 1]
        before[:, 1] = bounds - before[:, 2]
        before[nz, 4] = cum_t1[bounds[nz] - 1]
        before[:, 3] = bounds - before[:, 4]
        exponent = before[:, _ACTIVE_OWN][:, ROW_GROUP]
        faded = self._powers(m)[exponent] * (self._faded + sums)
        cum = np.repeat(self._cum[None, :], bounds.size, 0)
        cum[:, _COUNTS] += counts
        self._faded = faded[-1].copy()
        self._cum = cum[-1].copy()
        return compute_many(faded, cum, math.nan)

    def _fade_active(self, p, t, code, w: np.ndarray | None, vb: np.ndarray) -> None:
        """``_aggregate`` for ``Fading`` when every evaluation is active (w = None: all w = 1),
        without an (evaluations x groups) matrix. Every evaluation is then an own event of groups
        A, Z and B, of the P group of its prediction and of the T and U groups of its label
        (``_ACTIVE_SEQ``), so three fading weights per evaluation serve every group: alpha **
        (the later evaluations of the batch, of those with the same prediction, of those with the
        same label). Each is summed per code (``bincount``); the lookup table turns code sums into
        row sums, a group's rows being zero at the codes of non-members. The same weights as
        ``_fading_weights``, summed per code in the same order."""
        m = code.size
        pw = self._powers(m)
        back = pw[m::-1]  # alpha ** (m - e) for e = 0 .. m: _powers gave at least m + 1 powers
        later = back[1:]  # alpha ** (the later evaluations of the batch)
        n_by = []
        fw = [later]
        for side in (p, t):
            # the k-th of n evaluations on one side has n - 1 - k later ones on that side
            one = side == 1
            n1 = int(np.count_nonzero(one))
            f = np.empty(m)
            f[one] = back[m - n1 + 1 :]
            np.logical_not(one, out=one)
            f[one] = back[n1 + 1 :]
            fw.append(f)
            n_by.append(n1)
        sums = np.empty((3, N_CODES))
        for k, f in enumerate(fw):
            sums[k] = np.bincount(code, weights=f if w is None else f * w, minlength=N_CODES)
        faded = np.empty(N_ROWS)
        faded[:N_LUT_ROWS] = (sums @ LUT)[_ACTIVE_SEQ[:N_LUT_ROWS], _LUT_COLS]
        faded[_IB:] = later @ vb
        # own events of each group in the batch: all of them, or those of one side
        own = np.array([m, m - n_by[0], n_by[0], m - n_by[1], n_by[1]])[_ACTIVE_OWN]
        self._faded = pw[own][ROW_GROUP] * self._faded + faded
        counts = np.bincount(code, weights=w, minlength=N_CODES)
        self._cum[_COUNTS] += counts @ _LUT_COUNTS

    def _majority(self, x: np.ndarray, act: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """(mid0, mid1): MOA's majority class read for class 0 and for class 1 in its class loop
        (see the class docstring), per evaluation. ``x``: the (w, w[t=0], w[t=1]) of each
        evaluation's class-prior update, shape (3, m) (rows: contiguous cumulative sums);
        ``act``: which evaluations are active (None: all)."""
        before, after = self._trajectory(x, act)
        b_after = np.maximum(after[0], 1e-300)  # empty (b = 0, s = 0) reads 0, as MOA's rule
        e0_after = after[1] / b_after
        mid0 = before[2] / np.maximum(before[0], 1e-300) > e0_after
        mid1 = after[2] / b_after > e0_after
        return mid0, mid1

    def _trajectory(self, x: np.ndarray, act: np.ndarray | None):
        """(before, after): the (w, w[t=0], w[t=1]) class-prior sums of the estimator just
        before and just after each evaluation, shape (3, m)."""
        m = x.shape[1]
        kind = self._kind
        if kind == "cumulative" or kind == "tumbling":
            init = (self._cum if kind == "cumulative" else self._chunk)[_COLK, None]
            after = np.cumsum(x, axis=1)
            after += init
        elif kind == "fading":
            init = self._faded[_COLK, None]
            if act is None and m <= self._sub:
                # all active, within one sub-chunk (below): the active counts are 1 .. m
                pw = self._powers(m)[1 : m + 1]
                after = pw * (init + np.cumsum(x / pw, axis=1))
            else:
                c = np.cumsum(act) if act is not None else np.arange(1, m + 1)
                after = np.empty((3, m))
                start = 0
                base = 0
                state = init
                while start < m:
                    # sub-chunks of at most self._sub active evaluations: alpha^-c stays finite
                    stop = int(np.searchsorted(c, base + self._sub, "right"))
                    stop = max(stop, start + 1)
                    cc = c[start:stop] - base
                    pw = self._powers(int(cc[-1]))[cc]
                    after[:, start:stop] = pw * (state + np.cumsum(x[:, start:stop] / pw, axis=1))
                    state = after[:, stop - 1 : stop]
                    base = int(c[stop - 1])
                    start = stop
        else:
            width = self.estimator.width
            idx = (self._pos + np.arange(width)) % width
            old = self._ring[_COLK][:, idx]
            cs = np.zeros((3, width + m + 1))
            np.cumsum(np.concatenate((old, x), axis=1), axis=1, out=cs[:, 1:])
            after = cs[:, width + 1 :] - cs[:, 1 : m + 1]
            before = cs[:, width : width + m] - cs[:, :m]
            return before, after
        before = np.empty_like(after)
        before[:, :1] = init
        before[:, 1:] = after[:, :-1]
        return before, after

    def _fading_weights(self, code: np.ndarray, bmask) -> tuple:
        """Per evaluation and group (the groups of ``rows``, group B last, its membership
        ``bmask``): alpha ** (the group's own events after this one in the batch), 0 outside the
        group. Returns (own events per group in the batch, the powers of alpha, those weights)."""
        g = np.empty((code.size, N_GROUPS), dtype=np.int64)
        g[:, :-1] = GMASK_I[code]
        g[:, -1] = bmask
        c = np.cumsum(g, axis=0)
        n = c[-1]
        pw = self._powers(int(n.max()))
        fw = pw[n - c]
        fw *= g
        return n, pw, fw

    def _powers(self, n: int) -> np.ndarray:
        if n >= self._pw.size:
            self._pw = self._alpha ** np.arange(max(n + 1, 2 * self._pw.size), dtype=np.float64)
        return self._pw

    def _aggregate(self, v, code, bmask, q, y, bw) -> None:
        kind = self._kind
        if kind == "fading":
            self._cum[_COUNTS] += v[:, _COUNTS].sum(axis=0)
            n, pw, fw = self._fading_weights(code, bmask)
            self._faded = pw[n][ROW_GROUP] * self._faded + (v * fw[:, ROW_GROUP]).sum(axis=0)
        elif kind == "cumulative":
            self._cum += v.sum(axis=0)
            if self._auc is not None and bw is not None:
                self._auc.add(q[bmask], y[bmask].astype(np.float64), bw[bmask])
        elif kind == "window":
            width = self.estimator.width
            m = v.shape[0]
            qrow = np.zeros((m, 3))
            if bw is not None:
                qrow[:, 0] = np.where(bmask, q, 0.0)
                qrow[:, 1] = y
                qrow[:, 2] = bw
            if m >= width:
                self._ring[:] = v[m - width :].T
                self._ring_q[:] = qrow[m - width :]
                self._pos = 0
            else:
                idx = (self._pos + np.arange(m)) % width
                self._ring[:, idx] = v.T
                self._ring_q[idx] = qrow
                self._pos = (self._pos + m) % width
        else:
            self._chunk += v.sum(axis=0)
            self._chunk_n += v.shape[0]
            if self._want_auc and bw is not None:
                self._chunk_q.append((q[bmask], y[bmask].astype(np.float64), bw[bmask]))
            if self._chunk_n == self.estimator.size:
                self._close_chunk()

    def _close_chunk(self) -> None:
        auc = math.nan
        if self._want_auc and self._chunk_q:
            qa, ya, wa = (np.concatenate(parts) for parts in zip(*self._chunk_q, strict=True))
            auc = auc_value(*pair_sums(qa, ya, wa))
        values = compute(self._chunk, self._chunk, auc)
        self._chunks.append({k: values[k] for k in self.names})
        self._chunk = np.zeros(N_ROWS)
        self._chunk_n = 0
        self._chunk_q = []


def _validate(p, q, t, w) -> tuple[bool, bool]:
    """Check a batch (``ValueError``). Returns (active, unit): every evaluation is known
    (p >= 0), weighted (w > 0) and has a probability (not NaN); every weight is 1."""
    pmin = p.min()
    if pmin < -1 or p.max() > 1:
        raise ValueError(f"pred must be 1, 0 or -1 (unknown), got {sorted(set(p.tolist()))}")
    if t.min() < 0 or t.max() > 1:
        raise ValueError(f"label must be 0 or 1, got {sorted(set(t.tolist()))}")
    wmin, wmax = w.min(), w.max()
    if not (wmin >= 0 and wmax < math.inf):
        raise ValueError("weight must be finite and >= 0")
    qmin, qmax = q.min(), q.max()  # NaN if any is NaN
    finite = qmin == qmin and qmax == qmax
    if not finite:
        qmin, qmax = np.fmin.reduce(q), np.fmax.reduce(q)  # NaN compares false: allowed
    if qmin < 0 or qmax > 1:
        raise ValueError("proba must be in [0, 1] or NaN")
    return bool(pmin >= 0 and wmin > 0 and finite), bool(wmin == 1.0 and wmax == 1.0)
