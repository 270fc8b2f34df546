"""The inner loop of :class:`delaycv.metrics.effort.EffortCurve`, in Python.

:func:`run` folds a batch of evaluations, in release order, into the Fenwick trees of the
inspection order and reads the effort-aware measures after each requested prefix. The same
function exists compiled (``_effort_loop.pyx``, the same steps with C doubles: bit for bit the
same values, ``tests/metrics/test_effort_measures.py``); ``delaycv.metrics.effort`` takes the compiled one where it
is built (``delaycv.common.native``).

State (arrays changed in place; positions are 1-based, a tree's slot 0 is unused):

* ``trees[0..3]``: Fenwick trees over the inspection order (positions of the universe: the
  evaluations in scope and the batch, by predicted defect density) of the count, the effort and
  the defects against the observed and the true label;
* ``wtrees[0..3]``: Fenwick trees over the distinct efforts of the defective evaluations in scope:
  count and effort sum against the observed label, then against the true label;
* ``totals`` (:data:`TOTALS` order): n, E, D (observed, true), E of the defective ones (observed,
  true), S = sum over pairs (i inspected before k) of d_i e_k (observed, true), A = sum over
  pairs of defective evaluations of the larger effort (observed, true);
* ``e_at``: the effort at each universe position;
* per evaluation k of the scope and the batch, in release order (k = 0 the oldest in scope):
  ``pos``, ``wpos``, ``e``, ``d_obs``, ``d_true``.
"""

from __future__ import annotations

import math

#: the order of ``totals``
TOTALS = (
    "n",
    "E",
    "D_obs",
    "D_true",
    "Edef_obs",
    "Edef_true",
    "S_obs",
    "S_true",
    "A_obs",
    "A_true",
)
#: measures per reference, in the order of ``delaycv.metrics.effort_names.EFFORT_METRICS``
N_MEASURES = 7
#: the share of effort (and of defects) the 20 % measures read
SHARE = 0.2

NAN = math.nan


def _add(tree, size: int, i: int, value: float) -> None:
    while i <= size:
        tree[i] += value
        i += i & -i


def _prefix(tree, i: int) -> float:
    s = 0.0
    while i > 0:
        s += tree[i]
        i -= i & -i
    return s


def _put(trees, wtrees, totals, size, wsize, p, wp, e, d0, d1, sign: float) -> None:
    """Add ``sign`` times one evaluation to the trees and the totals n, E, D, E of defects."""
    _add(trees[0], size, p, sign)
    _add(trees[1], size, p, sign * e)
    if d0:
        _add(trees[2], size, p, sign)
        _add(wtrees[0], wsize, wp, sign)
        _add(wtrees[1], wsize, wp, sign * e)
    if d1:
        _add(trees[3], size, p, sign)
        _add(wtrees[2], wsize, wp, sign)
        _add(wtrees[3], wsize, wp, sign * e)
    totals[0] += sign
    totals[1] += sign * e
    totals[2] += sign * d0
    totals[3] += sign * d1
    totals[4] += sign * d0 * e
    totals[5] += sign * d1 * e


def _pairs(trees, wtrees, totals, p, wp, e, d0, d1, sign: float) -> None:
    """Add ``sign`` times the pairs of one evaluation with the others in the trees to S and A."""
    e_above = _prefix(trees[1], p)  # the others' effort inspected before it (it is not there)
    e_below = totals[1] - e_above
    for r in (0, 1):
        d = d1 if r else d0
        d_above = _prefix(trees[2 + r], p)
        totals[6 + r] += sign * (d * e_below + e * d_above)
        if d:
            cnt_le = _prefix(wtrees[2 * r], wp)
            sum_gt = totals[4 + r] - _prefix(wtrees[2 * r + 1], wp)
            totals[8 + r] += sign * (e * cnt_le + sum_gt)


def _change(trees, wtrees, totals, size, wsize, p, wp, e, d0, d1, sign: float) -> None:
    """Insert (sign 1) or remove (sign -1) one evaluation: its pairs with the others are counted
    before it is put in, or after it is taken out."""
    if sign > 0:
        _pairs(trees, wtrees, totals, p, wp, e, d0, d1, sign)
        _put(trees, wtrees, totals, size, wsize, p, wp, e, d0, d1, sign)
    else:
        _put(trees, wtrees, totals, size, wsize, p, wp, e, d0, d1, sign)
        _pairs(trees, wtrees, totals, p, wp, e, d0, d1, sign)


def _descend(tree, size: int, top: int, target: float, strict: bool, acc, accs) -> int:
    """The largest position p with prefix(tree, p) <= target (< target if ``strict``); the
    prefix sums of the trees ``acc`` at p are written to ``accs``."""
    p = 0
    s = 0.0
    for j in range(len(acc)):
        accs[j] = 0.0
    step = top
    while step:
        q = p + step
        if q <= size:
            t = s + tree[q]
            if (t < target) if strict else (t <= target):
                p = q
                s = t
                for j in range(len(acc)):
                    accs[j] += acc[j][q]
        step >>= 1
    return p


def measures(trees, wtrees, totals, e_at, size: int, out, at: int) -> None:
    """The measures of the scope against each reference, into ``out[at, 0..13]`` (observed,
    then true; each in ``EFFORT_METRICS`` order)."""
    top = 1
    while top * 2 <= size:
        top *= 2
    n = totals[0]
    big_e = totals[1]
    accs = [0.0, 0.0, 0.0]
    cnt20 = NAN
    d20 = (NAN, NAN)
    pci = NAN
    if n > 0 and big_e > 0:
        _descend(trees[1], size, top, SHARE * big_e, False, (trees[0], trees[2], trees[3]), accs)
        cnt20 = accs[0]
        d20 = (accs[1], accs[2])
        pci = cnt20 / n
    for r in (0, 1):
        base = r * N_MEASURES
        big_d = totals[2 + r]
        recall = precision = f1 = at_recall = ifa = popt = NAN
        if n > 0 and big_d > 0:
            tree_d = trees[2 + r]
            if big_e > 0:
                recall = d20[r] / big_d
                if cnt20 > 0:
                    precision = d20[r] / cnt20
                    f1 = (
                        0.0
                        if precision + recall == 0
                        else 2 * precision * recall / (precision + recall)
                    )
                p = _descend(tree_d, size, top, SHARE * big_d, True, (trees[1],), accs)
                at_recall = (accs[0] + e_at[p + 1]) / big_e
                e_def = totals[4 + r]
                s_opt = big_d * (big_e - e_def) + totals[8 + r]
                s_worst = (big_d - 1) * e_def - totals[8 + r]
                if s_opt > s_worst:
                    popt = 1.0 - (s_opt - totals[6 + r]) / (s_opt - s_worst)
            _descend(tree_d, size, top, 1.0, True, (trees[0],), accs)
            ifa = accs[0]
        out[at, base] = recall
        out[at, base + 1] = precision
        out[at, base + 2] = f1
        out[at, base + 3] = pci
        out[at, base + 4] = at_recall
        out[at, base + 5] = ifa
        out[at, base + 6] = popt


def run(
    trees,
    wtrees,
    totals,
    e_at,
    pos,
    wpos,
    e,
    d_obs,
    d_true,
    head: int,
    start: int,
    width: int,
    size: int,
    bounds,
    out,
    last,
) -> int:
    """Fold in evaluations ``start .. start + bounds[-1] - 1`` (release order) into a scope that
    holds ``head .. start - 1``; after ``bounds[b]`` of them the measures go to ``out[b]``.

    ``width`` > 0: the scope is the last ``width`` evaluations (the oldest leaves as each new
    one comes); ``size`` > 0: tumbling chunks of ``size`` evaluations (the trees are emptied when
    one is complete, its measures kept in ``last``, and ``out`` gets the last complete chunk's).
    Returns the new ``head``.
    """
    usize = trees.shape[1] - 1
    wsize = wtrees.shape[1] - 1
    b = 0
    nb = bounds.shape[0]
    stop = start + (bounds[nb - 1] if nb else 0)
    # bounds of 0 evaluations: the scope as it is
    while b < nb and bounds[b] == 0:
        _read(trees, wtrees, totals, e_at, usize, size, out, b, last)
        b += 1
    for k in range(start, stop):
        _change(
            trees, wtrees, totals, usize, wsize, pos[k], wpos[k], e[k], d_obs[k], d_true[k], 1.0
        )
        if width > 0 and k - head >= width:
            _change(
                trees,
                wtrees,
                totals,
                usize,
                wsize,
                pos[head],
                wpos[head],
                e[head],
                d_obs[head],
                d_true[head],
                -1.0,
            )
            head += 1
        if size > 0 and k - head + 1 == size:
            measures(trees, wtrees, totals, e_at, usize, last.reshape(1, -1), 0)
            trees[:] = 0.0
            wtrees[:] = 0.0
            totals[:] = 0.0
            head = k + 1
        while b < nb and bounds[b] == k - start + 1:
            _read(trees, wtrees, totals, e_at, usize, size, out, b, last)
            b += 1
    return head


def _read(trees, wtrees, totals, e_at, usize, size, out, b, last) -> None:
    if size > 0:
        out[b] = last
    else:
        measures(trees, wtrees, totals, e_at, usize, out, b)
