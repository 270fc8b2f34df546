"""``Metrics``: the streaming metric state of one (fold, reference) under one estimator.

``add`` only appends to Python lists; ``snapshot`` folds the buffered evaluations into the state
with a few vectorised numpy operations (cost proportional to the new evaluations, plus the window
for ``Sliding``) and evaluates the formulas of ``formulas``. ``Metrics`` computes each
evaluation's rows (``rows``) and keeps what every estimator shares; the estimator's own sums and
how rows are folded into them are the estimator's state (``states``: one class per estimator).

MOA semantics (docs/metrics.md, "MOA compatibility"), for evaluations with a known prediction p in {0, 1}:

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

from delaycv.common.portable import dot, log, log1p, log2
from delaycv.metrics.estimators import make_estimator
from delaycv.metrics.formulas import METRICS
from delaycv.metrics.rows import LUT, N_LUT_ROWS, N_ROWS, R, lookup_code

_EPS = float(np.finfo(np.float64).eps)
_LN2 = math.log(2.0)
_IA, _IT0, _IT1 = R["a_w"], R["a_t0"], R["a_t1"]
_IB = R["b_w"]
#: batches of at most this many evaluations are folded in one at a time (cheaper than numpy)
SCALAR_BATCH = 12
#: ``snapshots`` computes the prefixes of this many bounds or more in one pass (one pass costs
#: about as much as three one-bound snapshots of the same evaluations)
PREFIX_MIN = 4


class Metrics:
    """Streaming metrics of one fold against one reference under one estimator.

    ``Metrics(estimator, metrics=None)``: ``estimator`` is ``Cumulative()``, ``Sliding(width)``,
    ``Fading(alpha)``, ``Tumbling(size)`` or a spec of ``make_estimator``; ``metrics`` a subset of
    ``METRICS`` to report (None = all, required for ``MOA_MEASUREMENTS``).
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
        self._state = self.estimator.new_state(self.names)

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
        return self._state.snapshot()

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
        of at least ``PREFIX_MIN`` bounds are computed at once (:meth:`_prefixes`), equal to
        that up to rounding.
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
        span = self._state.prefix_span
        vectorised = span > 0
        while i < k:
            if vectorised and self._started:
                # the longest run of bounds whose evaluations fit one vectorised pass
                j = int(np.searchsorted(bounds, prev + span, "right"))
                if j - i >= PREFIX_MIN:
                    b = int(bounds[j - 1])
                    rel = bounds[i:j] - prev
                    rows = self._prefixes(p[prev:b], q[prev:b], t[prev:b], w[prev:b], rel)
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

    def chunks(self) -> list[dict[str, float]]:
        """``Tumbling`` only: the values of every completed chunk, in order; each dict also holds
        ``chunk`` (0-based) and ``evaluations`` (evaluations folded in at the chunk's end)."""
        if not self._state.chunked:
            raise TypeError("chunks() is defined for the Tumbling estimator only")
        self._flush()
        return self._state.chunk_rows()

    def chunks_frame(self):
        """``chunks()`` as a pandas DataFrame (columns chunk, evaluations, then the metrics)."""
        import pandas as pd

        return pd.DataFrame(self.chunks(), columns=["chunk", "evaluations", *self.names])

    # ------------------------------------------------------------------ internals
    def _flush(self) -> None:
        """Fold every buffered evaluation into the state: one at a time for a small batch (when
        the state can), else in numpy batches up to the state's ``room`` each."""
        m = len(self._bp) + self._nseg
        if not m:
            return
        state = self._state
        if m <= SCALAR_BATCH and state.scalar:
            rows = [
                row for seg in self._segs for row in zip(*(a.tolist() for a in seg), strict=True)
            ]
            rows.extend(zip(self._bp, self._bq, self._bt, self._bw, strict=True))
            self._bp, self._bq, self._bt, self._bw = [], [], [], []
            self._segs, self._nseg = [], 0
            for row in rows:
                self._fold_one(*row)
            state.settle()
            return
        self._seal()
        segs = self._segs
        self._segs, self._nseg = [], 0
        if len(segs) == 1:
            p, q, t, w = segs[0]
        else:
            p, q, t, w = (np.concatenate(parts) for parts in zip(*segs, strict=True))
        active, unit = _validate(p, q, t, w)
        start = 0
        while start < m:
            stop = min(m, start + state.room())
            self._ingest(p[start:stop], q[start:stop], t[start:stop], w[start:stop], active, unit)
            start = stop

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
        state = self._state
        sums = state.sums.tolist()
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
        b, s0, s1 = sums[_IA], sums[_IT0], sums[_IT1]
        e1_before = s1 / b if b > 0 else 0.0
        if act:
            b, s0, s1 = state.prior_step(b, s0, s1, w, t)
        e0 = s0 / b if b > 0 else 0.0
        e1 = s1 / b if b > 0 else 0.0
        code = lookup_code(p, t, pos, started, last, e1_before > e0, e1 > e0)
        # probability metrics
        y = t == 1
        if pos:
            if y:
                self._prior[1] += w
            else:
                self._prior[0] += w
        vals = scored = None
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
            scored = (q, float(y), w)
        self.evaluations += 1
        state.end_one(sums, code, w if pos else 1.0, vals, scored)

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
        started, ks = self._started_mask(known, act)
        last = self._nochange_references(t, ks)
        # majority class trajectory of the estimator's class priors
        x = np.empty((3, m))
        aw = x[0]
        np.multiply(wpos, known, out=aw)
        np.multiply(aw, t, out=x[2])
        np.subtract(aw, x[2], out=x[1])
        mid0, mid1 = self._majority(x, act)
        code = lookup_code(p, t, pos, started, last, mid0, mid1)
        v = np.empty((m, N_ROWS))
        np.multiply(LUT[code], np.where(pos, w, 1.0)[:, None], out=v[:, :N_LUT_ROWS])
        bmask, y, bw = self._probability_values(v, pos, q, t, w, wpos)
        total = float(wpos.sum())
        total1 = dot(wpos, t)
        self._prior[0] += total - total1
        self._prior[1] += total1
        self.evaluations += m
        self._state.fold(v, code, bmask, q, y, bw)

    def _started_mask(self, known: np.ndarray, act: np.ndarray):
        """``(started, ks)``: 1 at and after the first active evaluation (MOA's reset; the
        scalar 1 once started), and the known evaluations since the start."""
        if self._started:
            return 1, np.flatnonzero(known)
        m = known.size
        first = np.flatnonzero(act)
        started = np.zeros(m, dtype=np.int64)
        if first.size:
            started[first[0] :] = 1
            self._started = True
        return started, np.flatnonzero(known & (started == 1))

    def _nochange_references(self, t: np.ndarray, ks: np.ndarray) -> np.ndarray:
        """The NoChange label of each evaluation: the reference label of the previous known
        evaluation since the start (``ks``), carried over from the last batch."""
        last = np.zeros(t.size, dtype=np.int64)
        if ks.size:
            labels = t[ks]
            last[ks[0]] = self._last
            last[ks[1:]] = labels[:-1]
            self._last = int(labels[-1])
        return last

    def _probability_values(self, v, pos, q, t, w, wpos):
        """Fill the probability rows of ``v`` (weight, Brier, log loss, information score;
        the score's prior counts the earlier evaluations); ``(bmask, y, bw)``: the evaluations
        with a probability, the labels that are 1, their weights (None: no probability)."""
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
                log2(np.maximum(pt, 1e-300)) - log2(prior),
                (log1p(-prior) - log1p(-np.minimum(pt, 1.0 - 1e-16))) / _LN2,
            )
            bw = np.where(bmask, w, 0.0)
            v[:, _IB] = bw
            v[:, _IB + 1] = bw * (qq - y) ** 2
            v[:, _IB + 2] = bw * -log(np.clip(pt, _EPS, 1.0 - _EPS))
            v[:, _IB + 3] = bw * gain
        else:
            v[:, _IB:] = 0.0
        return bmask, y, bw

    def _ingest_active(self, p, q, t, w, unit: bool) -> None:
        """``_ingest`` when the MOA part has started and every evaluation has p >= 0, w > 0 and a
        finite probability: the masks are all true, so they are dropped; with every w = 1 the
        multiplications by w (exact identities) are dropped too (``fold_active`` of the state:
        Cumulative/Tumbling then sum the lookup rows by counting codes, exact in any order)."""
        code, vb, y = self._active_terms(p, q, t, w, unit)
        self._state.fold_active(code, vb, p, q, t, y, w, unit)

    def _prefixes(self, p, q, t, w, bounds: np.ndarray) -> np.ndarray | None:
        """For a state with ``prefix_span`` (``Fading``) after the MOA part started: fold in the
        batch (``bounds[-1]`` evaluations, at most ``prefix_span``) and return every metric
        (``METRICS`` columns) after each prefix ``bounds[i]``, or None (nothing folded in)
        unless every evaluation is active (see ``FadingState.prefixes``)."""
        state = self._state
        if not p.size:
            values = state.values()
            return np.repeat(np.array([list(values.values())]), bounds.size, 0)
        active, unit = _validate(p, q, t, w)
        if not active:
            return None
        code, vb, _ = self._active_terms(p, q, t, w, unit)
        return state.prefixes(code, vb, p, t, w, unit, bounds)

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
        code = lookup_code(p, t, 1, 1, last, mid0, mid1)
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
            log2(np.maximum(pt, 1e-300)) - log2(prior),
            (log1p(-prior) - log1p(-np.minimum(pt, 1.0 - 1e-16))) / _LN2,
        )
        vb = np.empty((m, N_ROWS - _IB))
        vb[:, 0] = w
        brier = (q - y) ** 2
        loss = -log(np.clip(pt, _EPS, 1.0 - _EPS))
        if unit:
            vb[:, 1] = brier
            vb[:, 2] = loss
            vb[:, 3] = gain
        else:
            np.multiply(w, brier, out=vb[:, 1])
            np.multiply(w, loss, out=vb[:, 2])
            np.multiply(w, gain, out=vb[:, 3])
        total = float(w.sum())
        total1 = dot(w, t)
        self._prior[0] += total - total1
        self._prior[1] += total1
        self.evaluations += m
        return code, vb, y

    def _majority(self, x: np.ndarray, act: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """(mid0, mid1): MOA's majority class read for class 0 and for class 1 in its class loop
        (see the class docstring), per evaluation. ``x``: the (w, w[t=0], w[t=1]) of each
        evaluation's class-prior update, shape (3, m) (rows: contiguous cumulative sums);
        ``act``: which evaluations are active (None: all)."""
        before, after = self._state.trajectory(x, act)
        b_after = np.maximum(after[0], 1e-300)  # empty (b = 0, s = 0) reads 0, as MOA's rule
        e0_after = after[1] / b_after
        mid0 = before[2] / np.maximum(before[0], 1e-300) > e0_after
        mid1 = after[2] / b_after > e0_after
        return mid0, mid1


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
