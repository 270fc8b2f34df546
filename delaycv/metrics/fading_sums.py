"""The running sums of a batch of faded terms, in numpy: :func:`running_sums`, the inner step of
``FadingState.prefixes`` (:mod:`delaycv.metrics.states`).

The same function exists compiled (``_fading_sums.pyx``: the same products and additions, in the
same order, one evaluation after the other: the same values bit for bit,
``tests/metrics/test_fading_sums.py``); :mod:`delaycv.metrics.states` takes the compiled one where
it is built (``delaycv.common.native``).

The terms of evaluation e, column j (:class:`Layout`): the lookup table's row of its code,
``lut[code[e], j]``, times its weight ``w[e]`` where the column is weighted; in a B column, its
value from ``vb[e]`` instead; then, in a faded column, times the evaluation's factor in the
column's fading sequence, ``scale[seq(j), e]``. The running sum after b evaluations adds the
terms of evaluations 0 .. b - 1 one after the other, starting from zero.
"""

from __future__ import annotations

import numpy as np

#: Rows of terms per block of :func:`running_sums` (its buffer: ~400 KiB): a batch's full matrix is
#: megabytes, and a fresh one costs a page fault per 4 KiB.
BLOCK = 1024


class Layout:
    """Where the terms of a batch sit: ``lut`` (codes x terms) the lookup table; the faded columns
    first, in runs of one fading sequence each (``seq_width``: their numbers, in sequence order);
    ``b_at``: the columns that take the B values (``vb``'s columns, in order); ``weighted_at``:
    the columns multiplied by a weight w != 1. Per column, for the compiled loop: its sequence
    (``col_seq``, -1: not faded), its B value (``col_b``, -1: none) and whether it is weighted
    (``col_weighted``)."""

    def __init__(self, lut, seq_width, b_at, weighted_at) -> None:
        self.lut = np.ascontiguousarray(lut, dtype=np.float64)
        terms = self.lut.shape[1]
        self.seq_width = [int(x) for x in seq_width]
        self.n_faded = sum(self.seq_width)
        self.b_at = np.asarray(b_at, dtype=np.int64)
        self.weighted_at = np.asarray(weighted_at, dtype=np.int64)
        self.col_seq = np.full(terms, -1, dtype=np.int64)
        self.col_seq[: self.n_faded] = np.repeat(np.arange(len(self.seq_width)), self.seq_width)
        self.col_b = np.full(terms, -1, dtype=np.int64)
        self.col_b[self.b_at] = np.arange(self.b_at.size)
        self.col_weighted = np.zeros(terms, dtype=np.uint8)
        self.col_weighted[self.weighted_at] = 1


def running_sums(layout: Layout, code, vb, w, unit: bool, scale, bounds, buffer=None) -> np.ndarray:
    """Per bound b of ``bounds`` (non-decreasing): the sum of the terms of the first b evaluations
    (rows: the bounds; columns: the layout's terms). ``code``: each evaluation's row of the
    lookup table; ``vb``: its B values; ``w``: its weight (not read when ``unit``); ``scale``
    (sequences x evaluations): its fading factors. ``buffer``: a (BLOCK + 1, terms) array to
    build the terms in (None: a new one).

    The terms are built block by block; at each bound the running sum is reduced from the
    previous bound's sum and the terms in between, row after row (``np.add.reduce`` over the rows
    of a C-ordered block adds them in order, column by column: the same additions, in the same
    order, as a cumulative sum of every row, which this does not write)."""
    lut = layout.lut
    terms = lut.shape[1]
    faded = layout.n_faded
    ends = np.asarray(bounds, dtype=np.int64).tolist()
    out = np.empty((len(ends), terms))
    buf = buffer if buffer is not None else np.empty((BLOCK + 1, terms))
    buf[0] = 0.0  # row 0: the running sum so far
    i, k = 0, len(ends)
    end = ends[-1] if ends else 0
    for lo in range(0, end, BLOCK):
        hi = min(lo + BLOCK, end)
        rows = buf[1 : hi - lo + 1]
        np.take(lut, code[lo:hi], axis=0, out=rows)
        if not unit:
            rows[:, layout.weighted_at] *= w[lo:hi, None]
        rows[:, layout.b_at] = vb[lo:hi]
        # each row's fading factor: its sequence's scale (one product per term)
        rows[:, :faded] *= np.repeat(scale[:, lo:hi].T, layout.seq_width, axis=1)
        first = 0  # the row holding the running sum
        while i < k and ends[i] <= hi:
            r = ends[i] - lo
            out[i] = np.add.reduce(buf[first : r + 1], axis=0)
            buf[r] = out[i]  # the running sum goes on from there
            first = r
            i += 1
        buf[0] = np.add.reduce(buf[first : hi - lo + 1], axis=0)
    out[i:] = buf[0]  # bounds at 0 (an empty batch)
    return out
