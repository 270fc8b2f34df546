"""How each estimator keeps its sums: one state class per estimator, driven by ``Metrics``.

``Metrics`` turns evaluations into rows of sums (``rows``) and keeps what every estimator shares:
the start of the MOA part, the NoChange label, the prior of the information score and the
evaluation count. A state keeps the estimator's own sums and offers the same small interface:

* ``trajectory(x, act)``: the class-prior sums just before and just after each evaluation of a
  batch (``Metrics`` reads MOA's majority class from them);
* ``fold(v, code, bmask, q, y, bw)``: fold in the rows ``v`` of a batch;
  ``fold_active(code, vb, p, q, t, y, w, unit)``: the same for a batch of active evaluations
  (known prediction, w > 0, a probability: the engine's case), given as lookup codes;
* ``room()``: how many evaluations may be folded in before the state must stop (the end of a
  ``Tumbling`` chunk);
* ``snapshot()``: the selected metrics of the current sums;
* ``prefix_span`` > 0 (``FadingState``): ``prefixes(...)`` folds in a batch of active evaluations
  and gives every metric after each of many prefixes at once, ``values()`` every metric now.

States whose sums are one vector ``sums`` (``scalar = True``: every one but ``SlidingState``)
also fold in one evaluation at a time in pure Python, cheaper than numpy for small batches:
``Metrics`` reads ``sums`` as a list, ``prior_step(b, s0, s1, w, t)`` updates the class-prior
sums of an active evaluation, ``end_one(sums, code, mult, vals, scored)`` adds its rows (the
lookup rows of ``code`` times ``mult``, the group-B values ``vals``, its ``(q, y, w)`` for the AUC
``scored``; None: it has no probability) to the list and stores it; ``settle()`` ends such a run.

================  ===================  ==================================================
estimator         state                sums
================  ===================  ==================================================
``Cumulative()``  ``CumulativeState``  every evaluation's rows added up; exact AUC
``Sliding(w)``    ``SlidingState``     a ring of the last ``w`` evaluations' rows
``Fading(a)``     ``FadingState``      each group's sums faded on its own events; counts
``Tumbling(s)``   ``TumblingState``    the rows of the current chunk; the completed chunks
================  ===================  ==================================================
"""

from __future__ import annotations

import math
import sys
from abc import ABC, abstractmethod

import numpy as np

from delaycv.common import native
from delaycv.common.portable import dot, power
from delaycv.metrics import fading_sums
from delaycv.metrics.auc import CumulativeAUC, auc_value, pair_sums
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

_IA, _IT0, _IT1 = R["a_w"], R["a_t0"], R["a_t1"]
_IB = R["b_w"]
#: the class-prior sums (w, w[t=0], w[t=1]) of group A
COLK = np.array([_IA, _IT0, _IT1])
#: the rows of the counts (classified, tp, fp, fn, tn, unknown): never faded
COUNTS = np.array([R[k] for k in ("a_w", "a_tp", "a_fp", "a_fn", "a_tn", "u0_unk", "u1_unk")])
_LUT_COLS = np.arange(N_LUT_ROWS)
_LUT_COUNTS = np.ascontiguousarray(LUT[:, COUNTS])
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
#: The rows reordered by fading sequence (``_BY_SEQ``; ``_SEQ_RANGE[k]``: the positions of
#: sequence k, ``_SEQ_WIDTH[k]`` their number), so that a batch's terms are faded by a factor per
#: evaluation and sequence repeated over the sequence's rows rather than by a gathered
#: (evaluations x rows) matrix: the same products, in a third of the time.
_BY_SEQ = np.argsort(_ACTIVE_SEQ, kind="stable")
_FROM_SEQ = np.argsort(_BY_SEQ)
_SEQ_RANGE = [
    slice(int(a), int(b))
    for a, b in zip(*np.searchsorted(_ACTIVE_SEQ[_BY_SEQ], [[0, 1, 2], [1, 2, 3]]), strict=True)
]
_SEQ_WIDTH = [cols.stop - cols.start for cols in _SEQ_RANGE]
#: The lookup table with its rows in that order (zero at the B rows, which are not looked up),
#: where the B rows and the counts sit in it.
_LUT_BY_SEQ = np.zeros((LUT.shape[0], N_ROWS))
_LUT_BY_SEQ[:, :N_LUT_ROWS] = LUT
_LUT_BY_SEQ = np.ascontiguousarray(_LUT_BY_SEQ[:, _BY_SEQ])
_B_AT = _FROM_SEQ[_IB:]
#: The terms of ``FadingState.prefixes``: those rows, then the counts (unfaded); the columns
#: multiplied by a weight w != 1 (every looked-up row, and the counts).
_TERMS = N_ROWS + COUNTS.size
_LUT_TERMS = np.ascontiguousarray(np.hstack((_LUT_BY_SEQ, LUT[:, COUNTS])))
_WEIGHTED_AT = np.concatenate((_FROM_SEQ[:N_LUT_ROWS], np.arange(N_ROWS, _TERMS)))
#: Where those terms sit, for :func:`delaycv.metrics.fading_sums.running_sums`.
_LAYOUT = fading_sums.Layout(_LUT_TERMS, _SEQ_WIDTH, _B_AT, _WEIGHTED_AT)
#: The running sums of the terms: compiled where they are built, else their numpy twin.
SUMS, SUMS_STATUS = native.load("delaycv.metrics._fading_sums", fading_sums)


class EstimatorState(ABC):
    """The sums of one estimator and how a batch of evaluations is folded into them (see the
    module docstring). ``names``: the selected metrics (``METRICS`` itself for all)."""

    #: small batches may be folded in one evaluation at a time (``sums``, ``prior_step``,
    #: ``end_one``, ``settle``)
    scalar = False
    #: ``Metrics.chunks`` is defined (``chunk_rows``)
    chunked = False
    #: > 0: ``prefixes`` folds in up to this many evaluations and gives every prefix's values
    prefix_span = 0

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self.want_auc = "auc" in names

    def room(self) -> int:
        """How many evaluations may be folded in at once (no limit here)."""
        return sys.maxsize

    @abstractmethod
    def trajectory(self, x: np.ndarray, act: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """(before, after): the (w, w[t=0], w[t=1]) class-prior sums just before and just after
        each evaluation, shape (3, m). ``x``: each evaluation's increments, shape (3, m);
        ``act``: which evaluations are active (None: all)."""

    @abstractmethod
    def fold(self, v, code, bmask, q, y, bw) -> None:
        """Fold in a batch: ``v`` its rows (evaluations x ``N_ROWS``), ``code`` their lookup
        codes, ``bmask`` those with w > 0 and a probability, ``q`` the probabilities, ``y`` the
        labels (bool), ``bw`` the weights of the probability metrics (None: none counts)."""

    def fold_active(self, code, vb, p, q, t, y, w, unit: bool) -> None:
        """Fold in a batch of active evaluations: ``code`` their lookup codes, ``vb`` their
        group-B rows, ``p``/``q``/``t``/``w`` the batch, ``y`` = (t == 1), ``unit``: every w is 1
        (``LUT`` rows then need no multiplication)."""
        v = np.empty((code.size, N_ROWS))
        if unit:
            v[:, :N_LUT_ROWS] = LUT[code]
        else:
            np.multiply(LUT[code], w[:, None], out=v[:, :N_LUT_ROWS])
        v[:, _IB:] = vb
        self.fold(v, code, np.ones(code.size, dtype=bool), q, y, w)

    def settle(self) -> None:  # noqa: B027 (an optional hook: most states have nothing to add)
        """End a run of ``end_one`` (states with ``scalar = True``; nothing to do here)."""

    @abstractmethod
    def snapshot(self) -> dict[str, float]:
        """The selected metrics (``names``) of the current sums."""

    def _selected(self, values: dict[str, float]) -> dict[str, float]:
        if self.names is METRICS:
            return values
        return {k: values[k] for k in self.names}


# ---------------------------------------------------------------------- steps the states share
def _before(init: np.ndarray, after: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(before, after) from the sums after each evaluation and ``init``, those before the batch."""
    before = np.empty_like(after)
    before[:, :1] = init
    before[:, 1:] = after[:, :-1]
    return before, after


def _running(sums: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``trajectory`` of sums that only add up."""
    init = sums[COLK, None]
    after = np.cumsum(x, axis=1)
    after += init
    return _before(init, after)


def _code_sums(code: np.ndarray, vb: np.ndarray) -> np.ndarray:
    """The row sums of a unit-weight batch of active evaluations: the lookup rows summed by
    counting codes, then the group-B rows."""
    sums = np.empty(N_ROWS)
    sums[:N_LUT_ROWS] = dot(np.bincount(code, minlength=LUT.shape[0]), LUT)
    sums[_IB:] = vb.sum(axis=0)
    return sums


def _add_prior(b: float, s0: float, s1: float, w: float, t: int) -> tuple[float, float, float]:
    """``prior_step`` of sums that only add up."""
    b += w
    if t == 0:
        s0 += w
    else:
        s1 += w
    return b, s0, s1


def _add_one(sums: list, code: int, mult: float, vals: tuple | None) -> None:
    """Add one evaluation's rows to ``sums`` (a list): its lookup rows times ``mult`` and its
    group-B rows ``vals`` (None: it has none)."""
    for r, v in NONZERO[code]:
        sums[r] += mult * v
    if vals is not None:
        for r, v in enumerate(vals, _IB):
            sums[r] += v


# ---------------------------------------------------------------------- the four estimators
class CumulativeState(EstimatorState):
    """``Cumulative()``: every evaluation's rows added up (``sums``); the exact AUC of all
    evaluations with a probability (``auc``)."""

    scalar = True

    def __init__(self, names: tuple[str, ...]) -> None:
        super().__init__(names)
        self.sums = np.zeros(N_ROWS)
        self.auc = CumulativeAUC() if self.want_auc else None
        self._scored: list[tuple[float, float, float]] = []  # (q, y, w) of end_one, until settle

    def trajectory(self, x, act):
        return _running(self.sums, x)

    def fold(self, v, code, bmask, q, y, bw) -> None:
        self.sums += v.sum(axis=0)
        if self.auc is not None and bw is not None:
            self.auc.add(q[bmask], y[bmask].astype(np.float64), bw[bmask])

    def fold_active(self, code, vb, p, q, t, y, w, unit: bool) -> None:
        if not unit:
            super().fold_active(code, vb, p, q, t, y, w, unit)
            return
        self.sums += _code_sums(code, vb)
        if self.auc is not None:
            self.auc.add(q, y.astype(np.float64), w)

    prior_step = staticmethod(_add_prior)

    def end_one(self, sums: list, code: int, mult: float, vals, scored) -> None:
        _add_one(sums, code, mult, vals)
        if scored is not None and self.auc is not None:
            self._scored.append(scored)
        self.sums = np.array(sums)

    def settle(self) -> None:
        """Add the probabilities scored one at a time to the AUC, in one batch."""
        if self._scored:
            self.auc.add(*np.array(self._scored).T)
            self._scored = []

    def snapshot(self) -> dict[str, float]:
        auc = self.auc.value() if self.auc is not None else math.nan
        return self._selected(compute(self.sums, self.sums, auc))


class SlidingState(EstimatorState):
    """``Sliding(width)``: the rows of the last ``width`` evaluations in a ring (``ring``: one
    row per sum, for fast reductions; ``ring_q``: score, label and weight, 0 = not in the AUC;
    ``pos``: the next slot). The values sum the ring at each snapshot."""

    def __init__(self, names: tuple[str, ...], width: int) -> None:
        super().__init__(names)
        self.width = width
        self.ring = np.zeros((N_ROWS, width))
        self.ring_q = np.zeros((width, 3))
        self.pos = 0

    def trajectory(self, x, act):
        m = x.shape[1]
        width = self.width
        idx = (self.pos + np.arange(width)) % width
        old = self.ring[COLK][:, idx]
        cs = np.zeros((3, width + m + 1))
        np.cumsum(np.concatenate((old, x), axis=1), axis=1, out=cs[:, 1:])
        after = cs[:, width + 1 :] - cs[:, 1 : m + 1]
        before = cs[:, width : width + m] - cs[:, :m]
        return before, after

    def fold(self, v, code, bmask, q, y, bw) -> None:
        width = self.width
        m = v.shape[0]
        qrow = np.zeros((m, 3))
        if bw is not None:
            qrow[:, 0] = np.where(bmask, q, 0.0)
            qrow[:, 1] = y
            qrow[:, 2] = bw
        if m >= width:
            self.ring[:] = v[m - width :].T
            self.ring_q[:] = qrow[m - width :]
            self.pos = 0
        else:
            idx = (self.pos + np.arange(m)) % width
            self.ring[:, idx] = v.T
            self.ring_q[idx] = qrow
            self.pos = (self.pos + m) % width

    def snapshot(self) -> dict[str, float]:
        sums = self.ring.sum(axis=1)
        auc = math.nan
        if self.want_auc:
            rq = self.ring_q
            keep = rq[:, 2] > 0
            auc = auc_value(*pair_sums(rq[keep, 0], rq[keep, 1], rq[keep, 2]))
        return self._selected(compute(sums, sums, auc))


class FadingState(EstimatorState):
    """``Fading(alpha)``: each group's sums faded on the group's own events (``sums``) and the
    unfaded counts (``counts``, of which ``COUNTS`` is read). A batch is faded with powers of
    alpha (``_powers``) in runs of at most ``span`` own events, so that alpha ** -span stays
    finite; runs of snapshots are computed at once (``prefixes``)."""

    scalar = True

    def __init__(self, names: tuple[str, ...], alpha: float) -> None:
        super().__init__(names)
        self.alpha = float(alpha)
        self.sums = np.zeros(N_ROWS)
        self.counts = np.zeros(N_ROWS)
        self._pw = power(self.alpha, np.arange(1025, dtype=np.float64))
        self.span = 10**18 if self.alpha == 1.0 else max(1, int(600.0 / -math.log(self.alpha)))
        self.prefix_span = self.span
        self._block: np.ndarray | None = None  # the buffer of the numpy running sums
        self._ipw = power(self.alpha, -np.arange(min(1025, self.span + 1), dtype=np.float64))

    def _inverse_powers(self, n: int) -> np.ndarray:
        """alpha ** -k for k = 0 .. at least n, n <= ``span`` (each as the C library's ``pow`` gives it;
        the table stops at ``span``, where alpha ** -k is still finite)."""
        if n >= self._ipw.size:
            size = min(max(n + 1, 2 * self._ipw.size), self.span + 1)
            self._ipw = power(self.alpha, -np.arange(size, dtype=np.float64))
        return self._ipw

    def _powers(self, n: int) -> np.ndarray:
        """alpha ** k for k = 0 .. at least n."""
        if n >= self._pw.size:
            self._pw = power(self.alpha, np.arange(max(n + 1, 2 * self._pw.size), dtype=np.float64))
        return self._pw

    def trajectory(self, x, act):
        m = x.shape[1]
        init = self.sums[COLK, None]
        if act is None and m <= self.span:
            # all active, within one run (below): the active counts are 1 .. m
            pw = self._powers(m)[1 : m + 1]
            after = pw * (init + np.cumsum(x / pw, axis=1))
            return _before(init, after)
        c = np.cumsum(act) if act is not None else np.arange(1, m + 1)
        after = np.empty((3, m))
        start = 0
        base = 0
        state = init
        while start < m:
            # runs of at most self.span active evaluations: alpha^-c stays finite
            stop = int(np.searchsorted(c, base + self.span, "right"))
            stop = max(stop, start + 1)
            cc = c[start:stop] - base
            pw = self._powers(int(cc[-1]))[cc]
            after[:, start:stop] = pw * (state + np.cumsum(x[:, start:stop] / pw, axis=1))
            state = after[:, stop - 1 : stop]
            base = int(c[stop - 1])
            start = stop
        return _before(init, after)

    def _weights(self, code: np.ndarray, bmask) -> tuple:
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

    def fold(self, v, code, bmask, q, y, bw) -> None:
        self.counts[COUNTS] += v[:, COUNTS].sum(axis=0)
        n, pw, fw = self._weights(code, bmask)
        self.sums = pw[n][ROW_GROUP] * self.sums + (v * fw[:, ROW_GROUP]).sum(axis=0)

    def fold_active(self, code, vb, p, q, t, y, w, unit: bool) -> None:
        """``fold`` when every evaluation is active, without an (evaluations x groups) matrix.
        Every evaluation is then an own event of groups A, Z and B, of the P group of its
        prediction and of the T and U groups of its label (``_ACTIVE_SEQ``), so three fading
        weights per evaluation serve every group: alpha ** (the later evaluations of the batch,
        of those with the same prediction, of those with the same label). Each is summed per
        code (``bincount``); the lookup table turns code sums into row sums, a group's rows
        being zero at the codes of non-members. The same weights as ``_weights``, summed per
        code in the same order."""
        w = None if unit else w
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
        faded[:N_LUT_ROWS] = dot(sums, LUT)[_ACTIVE_SEQ[:N_LUT_ROWS], _LUT_COLS]
        faded[_IB:] = dot(later, vb)
        # own events of each group in the batch: all of them, or those of one side
        own = np.array([m, m - n_by[0], n_by[0], m - n_by[1], n_by[1]])[_ACTIVE_OWN]
        self.sums = pw[own][ROW_GROUP] * self.sums + faded
        counts = np.bincount(code, weights=w, minlength=N_CODES)
        self.counts[COUNTS] += dot(counts, _LUT_COUNTS)

    def prefixes(self, code, vb, p, t, w, unit: bool, bounds: np.ndarray) -> np.ndarray:
        """Fold in a batch of active evaluations (at most ``span``; ``bounds[-1]`` of them) and
        return every metric (``METRICS`` columns) after each prefix ``bounds[i]``.

        A sum of group g is faded on g's own events only: after b evaluations it is
        ``alpha ** n_g(b) * (s_0 + sum_{k < b, k own} alpha ** -c_g(k) v_k)``, with c_g(k) the
        own events up to and including k and n_g(b) those before b. For an active evaluation the
        own-event count is that of all evaluations, of those with its prediction or of those
        with its label (``_ACTIVE_SEQ``), so each term is scaled once and the inner sums of
        every prefix are running sums of the scaled terms (:meth:`_running_sums`)."""
        m = code.size
        # own events up to and including each evaluation: all, same prediction, same label
        own = np.empty((3, m), dtype=np.int64)
        own[0] = np.arange(1, m + 1)
        cum_p1, cum_t1 = np.cumsum(p == 1), np.cumsum(t == 1)
        own[1] = np.where(p == 1, cum_p1, own[0] - cum_p1)
        own[2] = np.where(t == 1, cum_t1, own[0] - cum_t1)
        scale = self._inverse_powers(m)[own]  # (3, m): alpha ** -own
        at_bounds = self._running_sums(code, vb, w, unit, scale, bounds)
        sums = at_bounds[:, :N_ROWS][:, _FROM_SEQ]
        counts = at_bounds[:, N_ROWS:]  # unfaded
        # own events before each bound, per group, then per row
        before = np.zeros((bounds.size, 5), dtype=np.int64)
        nz = bounds > 0
        before[:, 0] = bounds
        before[nz, 2] = cum_p1[bounds[nz] - 1]
        before[:, 1] = bounds - before[:, 2]
        before[nz, 4] = cum_t1[bounds[nz] - 1]
        before[:, 3] = bounds - before[:, 4]
        exponent = before[:, _ACTIVE_OWN][:, ROW_GROUP]
        faded = self._powers(m)[exponent] * (self.sums + sums)
        cum = np.repeat(self.counts[None, :], bounds.size, 0)
        cum[:, COUNTS] += counts
        self.sums = faded[-1].copy()
        self.counts = cum[-1].copy()
        return compute_many(faded, cum, math.nan)

    def _running_sums(self, code, vb, w, unit: bool, scale, bounds) -> np.ndarray:
        """Per bound b: the sum of the first b terms, added one after the other from zero (the
        terms: the rows of each evaluation in fading-sequence order, times its ``scale``,
        then the unfaded counts: ``_TERMS`` columns): :func:`delaycv.metrics.fading_sums.running_sums`,
        compiled where it is built (:data:`SUMS`)."""
        if self._block is None and SUMS is fading_sums:
            self._block = np.empty((fading_sums.BLOCK + 1, _TERMS))
        return SUMS.running_sums(_LAYOUT, code, vb, w, unit, scale, bounds, self._block)

    def prior_step(self, b: float, s0: float, s1: float, w: float, t: int) -> tuple:
        a = self.alpha
        return a * b + w, a * s0 + (w if t == 0 else 0.0), a * s1 + (w if t == 1 else 0.0)

    def end_one(self, sums: list, code: int, mult: float, vals, scored) -> None:
        """Fade every row of the evaluation's groups (also those it adds 0 to) and add its rows;
        the counts are added unfaded."""
        a = self.alpha
        for r, v in UPDATES[code]:
            sums[r] = a * sums[r] + mult * v
        if vals is not None:
            for r, v in enumerate(vals, _IB):
                sums[r] = a * sums[r] + v
        self.sums = np.array(sums)
        counts = self.counts
        for r, v in NONZERO[code]:
            counts[r] += mult * v

    def values(self) -> dict[str, float]:
        """Every metric of ``METRICS`` of the current sums."""
        return compute(self.sums, self.counts, math.nan)

    def snapshot(self) -> dict[str, float]:
        return self._selected(self.values())


class TumblingState(EstimatorState):
    """``Tumbling(size)``: the rows of the current chunk added up (``sums``, ``n`` evaluations,
    ``scores``: the (q, y, w) arrays of its AUC) and the selected values of every completed
    chunk (``chunks``); a batch is folded in up to the end of the chunk at most (``room``)."""

    scalar = True
    chunked = True

    def __init__(self, names: tuple[str, ...], size: int) -> None:
        super().__init__(names)
        self.size = size
        self.sums = np.zeros(N_ROWS)
        self.n = 0
        self.scores: list[tuple] = []
        self.chunks: list[dict[str, float]] = []
        self._none = dict.fromkeys(names, math.nan)  # the values before the first chunk

    def room(self) -> int:
        return self.size - self.n

    def trajectory(self, x, act):
        return _running(self.sums, x)

    def fold(self, v, code, bmask, q, y, bw) -> None:
        self.sums += v.sum(axis=0)
        self.n += v.shape[0]
        if self.want_auc and bw is not None:
            self.scores.append((q[bmask], y[bmask].astype(np.float64), bw[bmask]))
        if self.n == self.size:
            self._close()

    def fold_active(self, code, vb, p, q, t, y, w, unit: bool) -> None:
        if not unit:
            super().fold_active(code, vb, p, q, t, y, w, unit)
            return
        self.sums += _code_sums(code, vb)
        self.n += code.size
        if self.want_auc:
            self.scores.append((q, y.astype(np.float64), w))
        if self.n == self.size:
            self._close()

    prior_step = staticmethod(_add_prior)

    def end_one(self, sums: list, code: int, mult: float, vals, scored) -> None:
        _add_one(sums, code, mult, vals)
        self.sums = np.array(sums)
        self.n += 1
        if scored is not None and self.want_auc:
            self.scores.append(tuple(np.array([scored]).T))
        if self.n == self.size:
            self._close()

    def _close(self) -> None:
        """Store the values of the full chunk and start the next."""
        auc = math.nan
        if self.want_auc and self.scores:
            qa, ya, wa = (np.concatenate(parts) for parts in zip(*self.scores, strict=True))
            auc = auc_value(*pair_sums(qa, ya, wa))
        values = compute(self.sums, self.sums, auc)
        self.chunks.append({k: values[k] for k in self.names})
        self.sums = np.zeros(N_ROWS)
        self.n = 0
        self.scores = []

    def snapshot(self) -> dict[str, float]:
        """The values of the last completed chunk (all NaN before the first)."""
        return dict(self.chunks[-1] if self.chunks else self._none)

    def chunk_rows(self) -> list[dict[str, float]]:
        """Every completed chunk: ``chunk`` (0-based), ``evaluations`` (at its end), values."""
        return [
            {"chunk": i, "evaluations": (i + 1) * self.size, **values}
            for i, values in enumerate(self.chunks)
        ]
