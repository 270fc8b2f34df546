"""ROC AUC from weighted pairs: AUC = (sum over positive-negative pairs of w_i w_j H(q_i - q_j)) /
(W_pos * W_neg), with H = 1 above, 1/2 on ties, 0 below (the Mann-Whitney U statistic).

``pair_sums`` computes it for one batch in O(n log n); ``CumulativeAUC`` keeps the scores of both
classes sorted (plus a short unsorted tail), so the cumulative AUC is exact at every snapshot
without re-sorting the history.
"""

from __future__ import annotations

import math

import numpy as np

from delaycv.common.portable import dot


def pair_sums(q: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, float, float]:
    """(U, W_pos, W_neg) of scores ``q`` with labels ``y`` (0/1) and weights ``w``.

    Evaluations with weight 0 take no part. U = sum_{i pos, j neg} w_i w_j (1[q_i > q_j] +
    1[q_i = q_j] / 2).
    """
    if q.size == 0:
        return 0.0, 0.0, 0.0
    order = np.argsort(q, kind="stable")
    qs = q[order]
    wp = np.where(y[order] == 1, w[order], 0.0)
    wn = w[order] - wp
    starts = np.flatnonzero(np.concatenate(([True], qs[1:] != qs[:-1])))
    gp = np.add.reduceat(wp, starts)
    gn = np.add.reduceat(wn, starts)
    below = np.cumsum(gn) - gn
    u = dot(gp, below + 0.5 * gn)
    return u, float(gp.sum()), float(gn.sum())


def auc_value(u: float, wp: float, wn: float) -> float:
    """U / (W_pos W_neg); NaN when a class is absent (0/0)."""
    den = wp * wn
    return u / den if den > 0 else math.nan


class CumulativeAUC:
    """Exact AUC over all evaluations added so far (weighted), updated batch by batch.

    The scores of each class are kept sorted with prefix sums of their weights (``main``), plus a
    short unsorted ``tail`` of recent evaluations that is merged into ``main`` when it reaches
    ``TAIL`` entries. Adding m evaluations costs O(m log n + m * TAIL) and, once per ``TAIL``
    evaluations, an O(n) merge.
    """

    TAIL = 256

    def __init__(self) -> None:
        self.pos = np.empty(0)  # sorted scores of positives
        self.neg = np.empty(0)
        # While every weight is 1 (``unit``; the engine's case) the weights and their prefix sums
        # are implicit (prefix sum k = k, exactly): 8 bytes per evaluation instead of 24.
        self.unit = True
        self.pos_w = None  # weights of the sorted scores, in the same order (None while unit)
        self.neg_w = None
        self.pos_cw = None  # prefix sums of the weights, length n + 1 (None while unit)
        self.neg_cw = None
        self.rpos = np.empty(0)  # unit weights: recent scores, sorted, merged into pos/neg
        self.rneg = np.empty(0)  # when they reach a fraction of them (amortised O(n) merges)
        self.tail_q = np.empty(0)
        self.tail_y = np.empty(0)
        self.tail_w = np.empty(0)
        self.u = 0.0
        self.u_tail = 0.0  # U of the pairs inside the tail
        self.wp = 0.0
        self.wn = 0.0

    def add(self, q: np.ndarray, y: np.ndarray, w: np.ndarray) -> None:
        """Add scores ``q`` (finite), labels ``y`` (0/1) and weights ``w`` (> 0)."""
        if q.size == 0:
            return
        if self.unit:
            if (w == 1.0).all():
                self._add_unit(q, y)
                return
            self._materialise()
        # pairs inside the batch and with the tail
        tq = np.concatenate((self.tail_q, q))
        ty = np.concatenate((self.tail_y, y))
        tw = np.concatenate((self.tail_w, w))
        if q.size == 1:
            u = _cross_one(
                float(q[0]), float(y[0]), float(w[0]), self.tail_q, self.tail_y, self.tail_w
            )
            u_all = self.u_tail + u
        elif q.size * (self.tail_q.size + q.size) <= 8192:
            u = _cross(q, y, w, tq, ty, tw) - 0.5 * _cross(q, y, w, q, y, w)
            u_all = self.u_tail + u
        else:
            u_all, _, _ = pair_sums(tq, ty, tw)
            u = u_all - self.u_tail
        # pairs with the sorted main part
        is_pos = y == 1
        qp, wp = q[is_pos], w[is_pos]
        qn, wn = q[~is_pos], w[~is_pos]
        if qp.size and self.neg.size:
            lo = self.neg_cw[np.searchsorted(self.neg, qp, "left")]
            hi = self.neg_cw[np.searchsorted(self.neg, qp, "right")]
            u += dot(wp, lo + 0.5 * (hi - lo))
        if qn.size and self.pos.size:
            total = self.pos_cw[-1]
            lo = self.pos_cw[np.searchsorted(self.pos, qn, "left")]
            hi = self.pos_cw[np.searchsorted(self.pos, qn, "right")]
            u += dot(wn, (total - hi) + 0.5 * (hi - lo))
        self.u += u
        self.wp += float(wp.sum())
        self.wn += float(wn.sum())
        if tq.size < self.TAIL:
            self.tail_q, self.tail_y, self.tail_w = tq, ty, tw
            self.u_tail = u_all
            return
        tp = ty == 1
        self.pos, self.pos_w, self.pos_cw = _merge(self.pos, self.pos_w, tq[tp], tw[tp])
        self.neg, self.neg_w, self.neg_cw = _merge(self.neg, self.neg_w, tq[~tp], tw[~tp])
        self.tail_q, self.tail_y, self.tail_w = np.empty(0), np.empty(0), np.empty(0)
        self.u_tail = 0.0

    def value(self) -> float:
        return auc_value(self.u, self.wp, self.wn)

    def _add_unit(self, q: np.ndarray, y: np.ndarray) -> None:
        """``add`` with every weight 1: U counts pairs (integers and halves, exact in any order).

        A new positive s adds #neg below s + #neg equal / 2 = (lo + hi) / 2 (``searchsorted``
        left/right in the sorted negatives); a new negative adds #pos above + #pos equal / 2 =
        n_pos - (lo + hi) / 2.
        """
        is_pos = y == 1
        # sorted first: searchsorted is several times faster with sorted needles, and the sums
        # below do not depend on the order
        qp = np.sort(q[is_pos])
        qn = np.sort(q[~is_pos])
        n_p, n_n = qp.size, qn.size
        ss = np.searchsorted
        u = 0.0
        if n_n:
            # the new negatives join the recent level first: the new positives then count the
            # pairs inside the batch, the new negatives count only earlier positives
            rneg = np.concatenate((self.rneg, qn))
            rneg.sort(kind="stable")
            self.rneg = rneg
            for level in (self.pos, self.rpos):
                if level.size:
                    lo_hi = ss(level, qn, "left") + ss(level, qn, "right")
                    u += float(level.size * n_n) - 0.5 * float(lo_hi.sum())
        if n_p:
            for level in (self.neg, self.rneg):
                if level.size:
                    u += 0.5 * float((ss(level, qp, "left") + ss(level, qp, "right")).sum())
            rpos = np.concatenate((self.rpos, qp))
            rpos.sort(kind="stable")
            self.rpos = rpos
        self.u += u
        self.wp += float(n_p)
        self.wn += float(n_n)
        if self.rpos.size > max(2048, self.pos.size >> 3):
            self.pos = _merge_scores(self.pos, self.rpos)
            self.rpos = np.empty(0)
        if self.rneg.size > max(2048, self.neg.size >> 3):
            self.neg = _merge_scores(self.neg, self.rneg)
            self.rneg = np.empty(0)

    def _materialise(self) -> None:
        """Leave the unit-weight representation: explicit weights 1 and their prefix sums."""
        self.unit = False
        self.pos = _merge_scores(self.pos, self.rpos)
        self.neg = _merge_scores(self.neg, self.rneg)
        self.rpos = self.rneg = np.empty(0)
        self.pos_w = np.ones(self.pos.size)
        self.neg_w = np.ones(self.neg.size)
        self.pos_cw = np.arange(self.pos.size + 1, dtype=np.float64)
        self.neg_cw = np.arange(self.neg.size + 1, dtype=np.float64)


def _cross(q, y, w, oq, oy, ow) -> float:
    """U over the pairs (new i, other j) of opposite classes, by broadcasting (small inputs)."""
    d = q[:, None] - oq[None, :]
    h = (d > 0) + 0.5 * (d == 0)  # H(q_i - q_j)
    pos_neg = np.outer(w * y, ow * (1.0 - oy))  # i positive, j negative: H(q_i - q_j)
    neg_pos = np.outer(w * (1.0 - y), ow * oy)  # i negative, j positive: H(q_j - q_i)
    return float((pos_neg * h).sum() + (neg_pos * (1.0 - h)).sum())


def _cross_one(q: float, y: float, w: float, oq, oy, ow) -> float:
    """U over the pairs (one new evaluation, other j) of opposite classes."""
    if oq.size == 0:
        return 0.0
    if y == 1.0:  # new positive against the negatives: H(q - q_j)
        h = (q > oq) + 0.5 * (q == oq)
        return w * dot(ow * (1.0 - oy), h)
    h = (oq > q) + 0.5 * (oq == q)  # new negative against the positives: H(q_j - q)
    return w * dot(ow * oy, h)


def _merge_scores(old, new):
    """``old`` (sorted) with ``new`` inserted, as ``_merge`` orders them (unit weights)."""
    if new.size == 0:
        return old
    new = np.sort(new, kind="stable")
    return np.insert(old, np.searchsorted(old, new, "right"), new)


def _merge(old, old_w, new, new_w):
    if new.size == 0:
        cw = np.empty(old_w.size + 1)
        cw[0] = 0.0
        np.cumsum(old_w, out=cw[1:])
        return old, old_w, cw
    order = np.argsort(new, kind="stable")
    new, new_w = new[order], new_w[order]
    at = np.searchsorted(old, new, "right")
    merged = np.insert(old, at, new)
    merged_w = np.insert(old_w, at, new_w)
    cw = np.empty(merged_w.size + 1)
    cw[0] = 0.0
    np.cumsum(merged_w, out=cw[1:])
    return merged, merged_w, cw
