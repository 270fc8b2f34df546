"""The inner loop of :class:`delaycv.metrics.effort.EffortCurve`, in Python.

:class:`Ranking` holds the evaluations in scope in their inspection order and the sums every
effort-aware measure is read from; :meth:`Ranking.run` folds in evaluations in release order and
reads the measures after each requested prefix. The same class exists compiled
(``_effort_loop.pyx``: the same steps, in the same order of floating-point operations, with C
doubles: bit for bit the same values, ``tests/metrics/test_effort_measures.py``); ``delaycv.metrics.effort`` takes
the compiled one where it is built (``delaycv.common.native``).

An evaluation is ``(key, e, d_obs, d_true)``: its sort key ``-P(1) / (e + 1)`` (ascending =
inspection order; equal keys in release order), its effort and whether it is defective against
the observed and the true label. Two ordered lists (:class:`Blocks`) hold the scope:

* by key, every evaluation, each weighing (1, e, d_obs, d_true): the prefix sums give the count,
  the effort and the defects inspected before a point of the inspection order;
* by effort, the evaluations defective against either label, each weighing (d_obs, d_obs e,
  d_true, d_true e): how many defective ones have at most an effort, and their effort.

A list is cut into blocks of fewer than :data:`CAPACITY` elements, each with the sums of its
elements' weights; the blocks sit in key order in slots with gaps, with Fenwick trees of the
slots' sums. Finding an element's place and the sums before it is a search of the slots' first
keys, a descent of the trees and a part of one block, O(log n + CAPACITY); inserting or removing
it changes one block and O(log n) nodes of the trees. A block that fills up is split in two, its
second half taking the gap after it (the blocks up to the nearest gap move one slot on), so that
the trees are laid out again only when no gap is near (O(n / CAPACITY), rarely): no step reads
the whole scope, and the cost per evaluation grows with the scope only by those logarithms and
by how far its arrays are from the processor's caches (docs/metrics.md, "How it is computed").

``totals`` (:data:`TOTALS` order): n, E, D (observed, true), the effort of the defective ones
(observed, true), S = sum over pairs (i inspected before k) of d_i e_k (observed, true), A = sum
over pairs of defective evaluations of the larger effort (observed, true). A new evaluation adds
its pairs with the others to S and A from the prefix sums; the measures need no sort.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections import deque
from functools import reduce
from operator import add

#: the order of ``Ranking.totals``
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
#: a block that reaches this many elements is split in two
CAPACITY = 128
#: a split block's new half takes the nearest gap within this many slots, else the blocks are
#: laid out again
WINDOW = 32
#: what a list orders: every evaluation by key, or the defective ones by effort
BY_KEY, BY_EFFORT = 0, 1

NAN = math.nan


class Blocks:
    """Elements ``(key, e, d_obs, d_true)`` in ascending key order (equal keys in the order they
    were inserted), cut into blocks of fewer than :data:`CAPACITY` elements, each with the sums
    of four weights; the blocks sit in key order in slots with gaps (a split block's second half
    takes the gap after it; the blocks between it and the nearest gap, at most :data:`WINDOW`
    slots on, move one slot on; without one, the blocks are laid out again, a gap before each
    and two at the end), with Fenwick trees of the slots' sums (1-based; slot 0 unused).
    ``mode``: :data:`BY_KEY` (weights 1, e, d_obs, d_true) or :data:`BY_EFFORT` (d_obs,
    d_obs e, d_true, d_true e)."""

    def __init__(self, mode: int) -> None:
        self.mode = mode
        # per block (by id): its elements in order, and their weights summed
        self.keys: list[list[float]] = []
        self.efforts: list[list[float]] = []
        self.obs: list[list[int]] = []
        self.true: list[list[int]] = []
        self.sums: list[list[float]] = []
        self.spare: list[int] = []  # ids of emptied blocks
        # per slot: the block in it (or None), its first key (a gap: the next block's, or inf)
        self.slot_block: list[int | None] = []
        self.first: list[float] = []
        self.tree: list[list[float]] = [[0.0, 0.0, 0.0, 0.0]]
        self.blocks = 0
        self.head = -1  # the first slot with a block

    def weights(self, e: float, d0: int, d1: int) -> tuple[float, float, float, float]:
        if self.mode == BY_KEY:
            return 1.0, e, float(d0), float(d1)
        return float(d0), (e if d0 else 0.0), float(d1), (e if d1 else 0.0)

    # ------------------------------------------------------------------ places and sums

    def _next_block(self, s: int) -> int:
        """The first slot after ``s`` that holds a block, or -1."""
        for t in range(s + 1, len(self.slot_block)):
            if self.slot_block[t] is not None:
                return t
        return -1

    def upper(self, key: float) -> tuple[int, int]:
        """(slot, index) after every element of key <= ``key``."""
        if not self.blocks:
            return 0, 0
        j = bisect_right(self.first, key) - 1
        if j < 0:
            j = self.head
        return j, bisect_right(self.keys[self.slot_block[j]], key)

    def lower(self, key: float) -> tuple[int, int]:
        """(slot, index) of the first element of key >= ``key`` (the next block's start when it
        is the block's end and another block follows)."""
        if not self.blocks:
            return 0, 0
        j = bisect_left(self.first, key) - 1
        if j < 0:
            j = self.head
        keys = self.keys[self.slot_block[j]]
        i = bisect_left(keys, key)
        if i == len(keys):
            n = self._next_block(j)
            if n >= 0:
                return n, 0
        return j, i

    def _span(self, b: int, lo: int, hi: int) -> list[float]:
        """The weights of elements ``lo .. hi - 1`` of block ``b``, summed in order."""
        e = self.efforts[b][lo:hi]
        obs = self.obs[b][lo:hi]
        true = self.true[b][lo:hi]
        if self.mode == BY_KEY:
            return [float(hi - lo), reduce(add, e, 0.0), float(sum(obs)), float(sum(true))]
        return [
            float(sum(obs)),
            reduce(add, (x for x, d in zip(e, obs, strict=True) if d), 0.0),
            float(sum(true)),
            reduce(add, (x for x, d in zip(e, true, strict=True) if d), 0.0),
        ]

    def prefix(self, j: int, i: int) -> list[float]:
        """The four weights summed over every element before (slot ``j``, index ``i``): the
        trees over the slots before ``j``, then the block's first ``i`` (or its sums less its
        last ones, whichever is shorter)."""
        out = [0.0, 0.0, 0.0, 0.0]
        q = j
        while q > 0:
            node = self.tree[q]
            for f in range(4):
                out[f] += node[f]
            q -= q & -q
        if not self.blocks:
            return out
        b = self.slot_block[j]
        n = len(self.keys[b])
        if 2 * i <= n:
            part = self._span(b, 0, i)
        else:
            rest = self._span(b, i, n)
            part = [self.sums[b][f] - rest[f] for f in range(4)]
        return [out[f] + part[f] for f in range(4)]

    # ------------------------------------------------------------------ changes

    def _add(self, q: int, w) -> None:
        size = len(self.slot_block)
        while q <= size:
            node = self.tree[q]
            for f in range(4):
                node[f] += w[f]
            q += q & -q

    def _rebuild(self) -> None:
        """The Fenwick trees of the slots' sums (in O(slots))."""
        size = len(self.slot_block)
        tree = [[0.0, 0.0, 0.0, 0.0]]
        for b in self.slot_block:
            tree.append(list(self.sums[b]) if b is not None else [0.0, 0.0, 0.0, 0.0])
        for q in range(1, size + 1):
            p = q + (q & -q)
            if p <= size:
                for f in range(4):
                    tree[p][f] += tree[q][f]
        self.tree = tree

    def _set_first(self, s: int, key: float) -> None:
        """Slot ``s`` starts with ``key``: so do the gaps just before it."""
        self.first[s] = key
        s -= 1
        while s >= 0 and self.slot_block[s] is None:
            self.first[s] = key
            s -= 1

    def _spread(self, after: int, c: int) -> None:
        """Lay the blocks out again, block ``c`` (new) after the block in slot ``after`` (-1:
        none new), a gap before each and two at the end; the trees rebuilt."""
        order = []
        for s, b in enumerate(self.slot_block):
            if b is not None:
                order.append(b)
                if s == after:
                    order.append(c)
        self.slot_block = [None] * (2 * len(order) + 2)
        self.first = [math.inf] * (2 * len(order) + 2)
        for j, b in enumerate(order):
            self.slot_block[2 * j + 1] = b
            self.first[2 * j + 1] = self.first[2 * j] = self.keys[b][0]
        self.blocks = len(order)
        self.head = 1
        self._rebuild()

    def _new_block(self) -> int:
        if self.spare:
            b = self.spare.pop()
            for column in (self.keys, self.efforts, self.obs, self.true):
                column[b] = []
            self.sums[b] = [0.0, 0.0, 0.0, 0.0]
            return b
        for column in (self.keys, self.efforts, self.obs, self.true):
            column.append([])
        self.sums.append([0.0, 0.0, 0.0, 0.0])
        return len(self.keys) - 1

    def insert(self, j: int, i: int, key: float, e: float, d0: int, d1: int) -> None:
        """Insert an element at (slot ``j``, index ``i``) (a place :meth:`upper` gave)."""
        w = self.weights(e, d0, d1)
        if not self.blocks:
            b = self._new_block()
            self.keys[b].append(key)
            self.efforts[b].append(e)
            self.obs[b].append(d0)
            self.true[b].append(d1)
            self.sums[b] = self._span(b, 0, 1)
            self.slot_block = [b]
            self.first = [key]
            self._spread(-1, -1)
            return
        b = self.slot_block[j]
        self.keys[b].insert(i, key)
        self.efforts[b].insert(i, e)
        self.obs[b].insert(i, d0)
        self.true[b].insert(i, d1)
        sums = self.sums[b]
        for f in range(4):
            sums[f] += w[f]
        self._add(j + 1, w)
        if i == 0:
            self._set_first(j, key)
        if len(self.keys[b]) >= CAPACITY:
            self._split(j)

    def _split(self, j: int) -> None:
        half = CAPACITY // 2
        b = self.slot_block[j]
        c = self._new_block()
        old = list(self.sums[b])
        for column in (self.keys, self.efforts, self.obs, self.true):
            column[c] = column[b][half:]
            del column[b][half:]
        self.sums[b] = self._span(b, 0, half)
        self.sums[c] = self._span(c, 0, len(self.keys[c]))
        t = j + 1
        u = t  # the nearest gap after the block, within WINDOW slots
        while u < len(self.slot_block) and u - t < WINDOW and self.slot_block[u] is not None:
            u += 1
        if u >= len(self.slot_block) or self.slot_block[u] is not None:
            self._spread(j, c)
            return
        self._add(j + 1, [self.sums[b][f] - old[f] for f in range(4)])
        for v in range(u - 1, t - 1, -1):  # the blocks between move one slot on
            moved = self.slot_block[v]
            self.slot_block[v + 1] = moved
            self.first[v + 1] = self.first[v]
            self.slot_block[v] = None
            self._add(v + 1, [-x for x in self.sums[moved]])
            self._add(v + 2, self.sums[moved])
        self.slot_block[t] = c
        self._set_first(t, self.keys[c][0])
        self._add(t + 1, self.sums[c])
        self.blocks += 1

    def remove(self, key: float) -> None:
        """Remove the first element of key ``key`` (the oldest of that key)."""
        j, i = self.lower(key)
        b = self.slot_block[j]
        e = self.efforts[b].pop(i)
        d0 = self.obs[b].pop(i)
        d1 = self.true[b].pop(i)
        self.keys[b].pop(i)
        w = self.weights(e, d0, d1)
        sums = self.sums[b]
        for f in range(4):
            sums[f] -= w[f]
        if not self.keys[b]:  # the block is empty: its slot a gap, the trees rebuilt
            self.slot_block[j] = None
            self.blocks -= 1
            self.spare.append(b)
            s = self._next_block(j)
            self._set_first(j, self.first[s] if s >= 0 else math.inf)
            if j == self.head:
                self.head = s
            self._rebuild()
            return
        self._add(j + 1, [-x for x in w])
        if i == 0:
            self._set_first(j, self.keys[b][0])

    # ------------------------------------------------------------------ descents

    def descend(self, f: int, target: float, strict: bool) -> tuple[list[float], int, int]:
        """The longest prefix of the order whose weights ``f`` sum to at most ``target`` (less
        than it if ``strict``): the four weights summed over it, and the (slot, index) of the
        element after it (``(slots, 0)`` when it is the whole list)."""
        size = len(self.slot_block)
        acc = [0.0, 0.0, 0.0, 0.0]
        step = 1
        while step * 2 <= size:
            step *= 2
        if not size:
            step = 0
        p = 0
        tree = self.tree
        while step:
            q = p + step
            if q <= size:
                t = acc[f] + tree[q][f]
                if (t < target) if strict else (t <= target):
                    p = q
                    for g in range(4):
                        acc[g] += tree[q][g]
            step >>= 1
        for j in range(p, size):
            b = self.slot_block[j]
            if b is None:
                continue
            efforts, obs, true = self.efforts[b], self.obs[b], self.true[b]
            for i in range(len(efforts)):
                w = self.weights(efforts[i], obs[i], true[i])
                t = acc[f] + w[f]
                if not ((t < target) if strict else (t <= target)):
                    return acc, j, i
                for g in range(4):
                    acc[g] += w[g]
        return acc, size, 0

    def effort_at(self, j: int, i: int) -> float:
        return self.efforts[self.slot_block[j]][i]


class Ranking:
    """The evaluations in scope, in inspection order: every one so far (``width`` 0) or the last
    ``width``; fed by :meth:`run`."""

    def __init__(self, width: int) -> None:
        self.width = int(width)
        self.totals = [0.0] * len(TOTALS)
        self.ranked = Blocks(BY_KEY)
        self.defective = Blocks(BY_EFFORT)
        self.scope: deque = deque()  # (key, e, d_obs, d_true) in release order (a width only)

    def run(self, key, e, d_obs, d_true, bounds, out) -> None:
        """Fold in evaluations ``0 .. bounds[-1] - 1`` (release order: sort keys, efforts,
        defect flags); after the first ``bounds[b]`` of them, the measures go to ``out[b]``
        (``bounds`` non-decreasing; 0: the scope as it is)."""
        nb = len(bounds)
        b = 0
        while b < nb and bounds[b] == 0:
            self.measures(out, b)
            b += 1
        stop = int(bounds[nb - 1]) if nb else 0
        for k in range(stop):
            item = (float(key[k]), float(e[k]), int(d_obs[k]), int(d_true[k]))
            self._change(*item, 1.0)
            if self.width:
                self.scope.append(item)
                if len(self.scope) > self.width:
                    self._change(*self.scope.popleft(), -1.0)
            while b < nb and bounds[b] == k + 1:
                self.measures(out, b)
                b += 1

    def _change(self, key: float, e: float, d0: int, d1: int, sign: float) -> None:
        """Insert (``sign`` 1) or remove (-1) one evaluation: its pairs with the others are
        counted before it is put in, or after it is taken out."""
        totals = self.totals
        if sign > 0:
            j, i = self.ranked.upper(key)
            self._pairs(self.ranked.prefix(j, i), e, d0, d1, sign)
            self.ranked.insert(j, i, key, e, d0, d1)
            if d0 or d1:
                self.defective.insert(*self.defective.upper(e), e, e, d0, d1)
        else:
            self.ranked.remove(key)
            if d0 or d1:
                self.defective.remove(e)
        totals[0] += sign
        totals[1] += sign * e
        totals[2] += sign * d0
        totals[3] += sign * d1
        totals[4] += sign * d0 * e
        totals[5] += sign * d1 * e
        if sign < 0:
            self._pairs(self.ranked.prefix(*self.ranked.lower(key)), e, d0, d1, sign)

    def _pairs(self, before, e: float, d0: int, d1: int, sign: float) -> None:
        """Add ``sign`` times the pairs of one evaluation with the others to S and A;
        ``before``: the weights of the others inspected before it."""
        totals = self.totals
        e_above = before[1]
        e_below = totals[1] - e_above
        below_e = self.defective.prefix(*self.defective.upper(e)) if d0 or d1 else None
        for r in (0, 1):
            d = d1 if r else d0
            totals[6 + r] += sign * (d * e_below + e * before[2 + r])
            if d:
                count_le = below_e[2 * r]
                sum_gt = totals[4 + r] - below_e[2 * r + 1]
                totals[8 + r] += sign * (e * count_le + sum_gt)

    def measures(self, out, at: int) -> None:
        """The measures of the scope against each reference, into ``out[at, 0..13]``
        (observed, then true; each in ``EFFORT_METRICS`` order)."""
        totals = self.totals
        ranked = self.ranked
        n = totals[0]
        big_e = totals[1]
        count20 = NAN
        d20 = (NAN, NAN)
        pci = NAN
        if n > 0 and big_e > 0:
            acc, _, _ = ranked.descend(1, SHARE * big_e, False)
            count20 = acc[0]
            d20 = (acc[2], acc[3])
            pci = count20 / n
        for r in (0, 1):
            base = r * N_MEASURES
            big_d = totals[2 + r]
            recall = precision = f1 = at_recall = ifa = popt = NAN
            if n > 0 and big_d > 0:
                if big_e > 0:
                    recall = d20[r] / big_d
                    if count20 > 0:
                        precision = d20[r] / count20
                        f1 = (
                            0.0
                            if precision + recall == 0
                            else 2 * precision * recall / (precision + recall)
                        )
                    acc, j, i = ranked.descend(2 + r, SHARE * big_d, True)
                    at_recall = (acc[1] + ranked.effort_at(j, i)) / big_e
                    e_def = totals[4 + r]
                    s_opt = big_d * (big_e - e_def) + totals[8 + r]
                    s_worst = (big_d - 1) * e_def - totals[8 + r]
                    if s_opt > s_worst:
                        popt = 1.0 - (s_opt - totals[6 + r]) / (s_opt - s_worst)
                acc, _, _ = ranked.descend(2 + r, 1.0, True)
                ifa = acc[0]
            row = out[at]
            row[base] = recall
            row[base + 1] = precision
            row[base + 2] = f1
            row[base + 3] = pci
            row[base + 4] = at_recall
            row[base + 5] = ifa
            row[base + 6] = popt
