"""ROC AUC from weighted pairs: AUC = (sum over positive-negative pairs of w_i w_j H(q_i - q_j)) /
(W_pos * W_neg), with H = 1 above, 1/2 on ties, 0 below (the Mann-Whitney U statistic).

``pair_sums`` computes it for one batch in O(n log n); ``CumulativeAUC`` keeps the scores of both
classes sorted and adds a batch of m evaluations in O(n + m log n) (n = evaluations so far), so the
cumulative AUC is exact at every snapshot without re-sorting the history.
"""

from __future__ import annotations

import math

import numpy as np


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
    u = float(np.dot(gp, below + 0.5 * gn))
    return u, float(gp.sum()), float(gn.sum())


def auc_value(u: float, wp: float, wn: float) -> float:
    """U / (W_pos W_neg); NaN when a class is absent (0/0)."""
    den = wp * wn
    return u / den if den > 0 else math.nan


class CumulativeAUC:
    """Exact AUC over all evaluations added so far (weighted), updated batch by batch."""

    def __init__(self) -> None:
        self.pos = np.empty(0)  # sorted scores of positives
        self.pos_w = np.empty(0)  # their weights, in the same order
        self.neg = np.empty(0)
        self.neg_w = np.empty(0)
        self.pos_cw = np.zeros(1)  # prefix sums of weights, length n + 1
        self.neg_cw = np.zeros(1)
        self.u = 0.0

    def add(self, q: np.ndarray, y: np.ndarray, w: np.ndarray) -> None:
        """Add scores ``q`` (finite), labels ``y`` and weights ``w`` (> 0)."""
        if q.size == 0:
            return
        u_new, _, _ = pair_sums(q, y, w)
        is_pos = y == 1
        qp, wp = q[is_pos], w[is_pos]
        qn, wn = q[~is_pos], w[~is_pos]
        u = u_new
        if qp.size and self.neg.size:
            lo = self.neg_cw[np.searchsorted(self.neg, qp, "left")]
            hi = self.neg_cw[np.searchsorted(self.neg, qp, "right")]
            u += float(np.dot(wp, lo + 0.5 * (hi - lo)))
        if qn.size and self.pos.size:
            total = self.pos_cw[-1]
            lo = self.pos_cw[np.searchsorted(self.pos, qn, "left")]
            hi = self.pos_cw[np.searchsorted(self.pos, qn, "right")]
            u += float(np.dot(wn, (total - hi) + 0.5 * (hi - lo)))
        self.u += u
        if qp.size:
            self.pos, self.pos_w, self.pos_cw = _merge(self.pos, self.pos_w, qp, wp)
        if qn.size:
            self.neg, self.neg_w, self.neg_cw = _merge(self.neg, self.neg_w, qn, wn)

    def value(self) -> float:
        return auc_value(self.u, float(self.pos_cw[-1]), float(self.neg_cw[-1]))


def _merge(old, old_w, new, new_w):
    order = np.argsort(new, kind="stable")
    new, new_w = new[order], new_w[order]
    at = np.searchsorted(old, new, "right")
    merged = np.insert(old, at, new)
    merged_w = np.insert(old_w, at, new_w)
    cw = np.empty(merged_w.size + 1)
    cw[0] = 0.0
    np.cumsum(merged_w, out=cw[1:])
    return merged, merged_w, cw
