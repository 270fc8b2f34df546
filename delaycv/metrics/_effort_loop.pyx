# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The inner loop of :class:`delaycv.metrics.effort.EffortCurve` compiled: :class:`Ranking` and
:class:`Blocks` do exactly what ``effort_loop.py`` does (see its docstring), in the same order of
floating-point operations, with C doubles: the same values bit for bit
(``tests/metrics/test_effort_measures.py``). An element's two defect flags are one byte here (bit 0: observed,
bit 1: true). Three things only the compiled loop does, which change no value: it finds a slot
through ``summary`` (every STRIDE-th slot's first key) before the slots themselves, it asks the
memory for the block where the evaluation AHEAD places on goes before it gets there, and the
list of the defective by effort keeps each effort once, as its key.
``delaycv.common.native`` loads it only when it was built from this file (``SOURCE_DIGEST``)."""

import numpy as np

from libc.math cimport INFINITY, NAN
from libc.string cimport memmove

cdef extern from *:
    """
    #ifndef DELAYCV_EFFORT_SOURCE
    #define DELAYCV_EFFORT_SOURCE ""
    #endif
    """
    const char* DELAYCV_EFFORT_SOURCE

cdef extern from *:
    """
    #define DELAYCV_PREFETCH(p) __builtin_prefetch((const void*)(p), 1, 1)
    """
    void DELAYCV_PREFETCH(const void* p) noexcept nogil

#: SHA-256 of the ``_effort_loop.pyx`` this module was compiled from (set by ``setup.py``)
SOURCE_DIGEST = DELAYCV_EFFORT_SOURCE.decode("ascii")

TOTALS = ("n", "E", "D_obs", "D_true", "Edef_obs", "Edef_true", "S_obs", "S_true", "A_obs", "A_true")
N_MEASURES = 7
SHARE = 0.2
CAPACITY = 128
WINDOW = 32
BY_KEY = 0
BY_EFFORT = 1
cdef double C_SHARE = 0.2
cdef int C_N = 7
cdef Py_ssize_t C_CAPACITY = 128
cdef Py_ssize_t C_WINDOW = 32
cdef Py_ssize_t C_STRIDE = 64
cdef Py_ssize_t C_AHEAD = 8


cdef inline void _weights(int mode, double e, int f, double* w) noexcept nogil:
    cdef int d0 = f & 1
    cdef int d1 = f >> 1
    if mode == 0:
        w[0] = 1.0
        w[1] = e
        w[2] = d0
        w[3] = d1
    else:
        w[0] = d0
        w[1] = e if d0 else 0.0
        w[2] = d1
        w[3] = e if d1 else 0.0


cdef inline bint _within(double t, double target, bint strict) noexcept nogil:
    return t < target if strict else t <= target


cdef class Blocks:
    """As ``effort_loop.Blocks``: the elements of block ``b`` are rows ``b`` of ``key``, ``eff``
    and ``flags`` (``count[b]`` of them; by effort, ``eff`` is not kept: an element's key is its
    effort); the blocks sit in key order in ``nslots`` slots with gaps
    (``slot_block``: a block id or -1; ``first``: a block's first key, a gap the first key of the
    next block or +inf), with Fenwick trees ``tree[q, f]`` of the slots' sums."""

    cdef int mode
    cdef double[:, ::1] key
    cdef double[:, ::1] eff
    cdef unsigned char[:, ::1] flags
    cdef Py_ssize_t[::1] count
    cdef double[:, ::1] sums
    cdef Py_ssize_t[::1] block_slot
    cdef Py_ssize_t[::1] slot_block
    cdef double[::1] first
    cdef double[::1] summary
    cdef double[:, ::1] tree
    cdef Py_ssize_t[::1] spare
    cdef Py_ssize_t[::1] scratch
    cdef Py_ssize_t nslots, nblocks, head, used, nspare, capacity

    def __init__(self, int mode):
        self.mode = mode
        self.nslots = 0
        self.nblocks = 0
        self.head = -1
        self.used = 0
        self.nspare = 0
        self.capacity = 0
        self._grow(4)

    def _grow(self, Py_ssize_t capacity):
        """Room for ``capacity`` blocks (and their slots); the rows kept."""
        cdef Py_ssize_t old = self.capacity, slots = 2 * capacity + 4, old_slots = 2 * old + 4
        key = np.zeros((capacity, C_CAPACITY))
        # the defective by effort keep no efforts of their own: an element's key is its effort
        eff = np.zeros((capacity if self.mode == 0 else 1, C_CAPACITY))
        flags = np.zeros((capacity, C_CAPACITY), dtype=np.uint8)
        count = np.zeros(capacity, dtype=np.intp)
        sums = np.zeros((capacity, 4))
        block_slot = np.zeros(capacity, dtype=np.intp)
        spare = np.zeros(capacity, dtype=np.intp)
        scratch = np.zeros(capacity, dtype=np.intp)
        slot_block = np.full(slots, -1, dtype=np.intp)
        first = np.full(slots, np.inf)
        summary = np.full(slots // C_STRIDE + 1, np.inf)
        tree = np.zeros((slots + 1, 4))
        if old:
            key[:old] = self.key
            if self.mode == 0:
                eff[:old] = self.eff
            flags[:old] = self.flags
            count[:old] = self.count
            sums[:old] = self.sums
            block_slot[:old] = self.block_slot
            spare[:old] = self.spare
            slot_block[:old_slots] = self.slot_block
            first[:old_slots] = self.first
            summary[: old_slots // C_STRIDE + 1] = self.summary
            tree[: old_slots + 1] = self.tree
        self.key, self.eff, self.flags, self.count, self.sums = key, eff, flags, count, sums
        self.block_slot, self.spare, self.scratch = block_slot, spare, scratch
        self.slot_block, self.first, self.tree = slot_block, first, tree
        self.summary = summary
        self.capacity = capacity

    cdef inline bint full(self) noexcept nogil:
        """No room for one more block (an insertion makes at most one)."""
        return self.nspare == 0 and self.used == self.capacity

    # ------------------------------------------------------------------ places and sums

    cdef Py_ssize_t next_block(self, Py_ssize_t s) noexcept nogil:
        """The first slot after ``s`` that holds a block, or -1."""
        s += 1
        while s < self.nslots:
            if self.slot_block[s] >= 0:
                return s
            s += 1
        return -1

    cdef Py_ssize_t last_at_most(self, double x, bint strict) noexcept nogil:
        """The last slot whose first key is at most ``x`` (less than ``x`` if ``strict``), or
        -1: through ``summary`` (every STRIDE-th slot's first key), then within STRIDE slots."""
        cdef Py_ssize_t lo = 0, hi = (self.nslots - 1) // C_STRIDE + 1, mid, t
        while lo < hi:
            mid = (lo + hi) // 2
            if (self.summary[mid] < x) if strict else (self.summary[mid] <= x):
                lo = mid + 1
            else:
                hi = mid
        t = lo - 1
        if t < 0:
            return -1
        lo = t * C_STRIDE
        hi = min(lo + C_STRIDE, self.nslots)
        while lo < hi:
            mid = (lo + hi) // 2
            if (self.first[mid] < x) if strict else (self.first[mid] <= x):
                lo = mid + 1
            else:
                hi = mid
        return lo - 1

    cdef inline void set_slot_first(self, Py_ssize_t s, double x) noexcept nogil:
        self.first[s] = x
        if s % C_STRIDE == 0:
            self.summary[s // C_STRIDE] = x

    cdef void upper(self, double x, Py_ssize_t* j, Py_ssize_t* i) noexcept nogil:
        cdef Py_ssize_t lo, hi, mid, b
        if self.nblocks == 0:
            j[0] = 0
            i[0] = 0
            return
        j[0] = self.last_at_most(x, False)
        if j[0] < 0:
            j[0] = self.head
        b = self.slot_block[j[0]]
        lo = 0
        hi = self.count[b]
        while lo < hi:
            mid = (lo + hi) // 2
            if x < self.key[b, mid]:
                hi = mid
            else:
                lo = mid + 1
        i[0] = lo

    cdef void prefetch(self, double x) noexcept nogil:
        """Ask the memory for the rows of the block where ``x`` goes (an element to come)."""
        cdef Py_ssize_t j, b, t
        if self.nblocks == 0:
            return
        j = self.last_at_most(x, False)
        b = self.slot_block[j if j >= 0 else self.head]
        t = 0
        while t < C_CAPACITY:
            DELAYCV_PREFETCH(&self.key[b, t])
            if self.mode == 0:
                DELAYCV_PREFETCH(&self.eff[b, t])
            t += 8
        DELAYCV_PREFETCH(&self.flags[b, 0])

    cdef void lower(self, double x, Py_ssize_t* j, Py_ssize_t* i) noexcept nogil:
        cdef Py_ssize_t lo, hi, mid, b, n
        if self.nblocks == 0:
            j[0] = 0
            i[0] = 0
            return
        j[0] = self.last_at_most(x, True)
        if j[0] < 0:
            j[0] = self.head
        b = self.slot_block[j[0]]
        lo = 0
        hi = self.count[b]
        while lo < hi:
            mid = (lo + hi) // 2
            if self.key[b, mid] < x:
                lo = mid + 1
            else:
                hi = mid
        i[0] = lo
        if lo == self.count[b]:
            n = self.next_block(j[0])
            if n >= 0:
                j[0] = n
                i[0] = 0

    cdef void span(self, Py_ssize_t b, Py_ssize_t lo, Py_ssize_t hi, double* out) noexcept nogil:
        cdef Py_ssize_t t
        cdef long c0 = 0, c1 = 0
        cdef double s0 = 0.0, s1 = 0.0
        cdef int f
        if self.mode == 0:
            for t in range(lo, hi):
                s0 += self.eff[b, t]
                f = self.flags[b, t]
                c0 += f & 1
                c1 += f >> 1
            out[0] = <double>(hi - lo)
            out[1] = s0
            out[2] = <double>c0
            out[3] = <double>c1
        else:
            for t in range(lo, hi):
                f = self.flags[b, t]
                if f & 1:
                    c0 += 1
                    s0 += self.key[b, t]
                if f >> 1:
                    c1 += 1
                    s1 += self.key[b, t]
            out[0] = <double>c0
            out[1] = s0
            out[2] = <double>c1
            out[3] = s1

    cdef void prefix(self, Py_ssize_t j, Py_ssize_t i, double* out) noexcept nogil:
        cdef Py_ssize_t q, n, b
        cdef int f
        cdef double part[4]
        for f in range(4):
            out[f] = 0.0
        q = j
        while q > 0:
            for f in range(4):
                out[f] += self.tree[q, f]
            q -= q & -q
        if self.nblocks == 0:
            return
        b = self.slot_block[j]
        n = self.count[b]
        if 2 * i <= n:
            self.span(b, 0, i, part)
        else:
            self.span(b, i, n, part)
            for f in range(4):
                part[f] = self.sums[b, f] - part[f]
        for f in range(4):
            out[f] = out[f] + part[f]

    # ------------------------------------------------------------------ changes

    cdef void add(self, Py_ssize_t q, double* w) noexcept nogil:
        cdef int f
        while q <= self.nslots:
            for f in range(4):
                self.tree[q, f] += w[f]
            q += q & -q

    cdef void rebuild(self) noexcept nogil:
        """The Fenwick trees of the slots' sums (in O(slots))."""
        cdef Py_ssize_t q, p, b
        cdef int f
        for q in range(1, self.nslots + 1):
            b = self.slot_block[q - 1]
            for f in range(4):
                self.tree[q, f] = self.sums[b, f] if b >= 0 else 0.0
        for q in range(1, self.nslots + 1):
            p = q + (q & -q)
            if p <= self.nslots:
                for f in range(4):
                    self.tree[p, f] += self.tree[q, f]

    cdef void set_first(self, Py_ssize_t s, double x) noexcept nogil:
        """Slot ``s`` starts with key ``x``: so do the gaps just before it."""
        self.set_slot_first(s, x)
        s -= 1
        while s >= 0 and self.slot_block[s] < 0:
            self.set_slot_first(s, x)
            s -= 1

    cdef void spread(self, Py_ssize_t after, Py_ssize_t c) noexcept nogil:
        """Lay the blocks out again, block ``c`` (new) after the block in slot ``after`` (-1:
        none new), one gap before each and two at the end; the trees rebuilt."""
        cdef Py_ssize_t s, nb = 0, j, b
        for s in range(self.nslots):
            b = self.slot_block[s]
            if b >= 0:
                self.scratch[nb] = b
                nb += 1
                if s == after:
                    self.scratch[nb] = c
                    nb += 1
        self.nslots = 2 * nb + 2
        for s in range(self.nslots):
            self.slot_block[s] = -1
            self.set_slot_first(s, INFINITY)
        for j in range(nb):
            b = self.scratch[j]
            self.slot_block[2 * j + 1] = b
            self.block_slot[b] = 2 * j + 1
            self.set_slot_first(2 * j + 1, self.key[b, 0])
            self.set_slot_first(2 * j, self.key[b, 0])
        self.nblocks = nb
        self.head = 1
        self.rebuild()

    cdef Py_ssize_t new_block(self) noexcept nogil:
        cdef Py_ssize_t b
        if self.nspare:
            self.nspare -= 1
            b = self.spare[self.nspare]
        else:
            b = self.used
            self.used += 1
        self.count[b] = 0
        return b

    cdef void insert(self, Py_ssize_t j, Py_ssize_t i, double x, double e, int f) noexcept nogil:
        cdef double w[4]
        cdef Py_ssize_t b, n
        cdef int g
        _weights(self.mode, e, f, w)
        if self.nblocks == 0:
            b = self.new_block()
            self.key[b, 0] = x
            if self.mode == 0:
                self.eff[b, 0] = e
            self.flags[b, 0] = f
            self.count[b] = 1
            self.span(b, 0, 1, &self.sums[b, 0])
            self.nslots = 0
            self.slot_block[0] = b
            self.nslots = 1
            self.spread(-1, -1)
            return
        b = self.slot_block[j]
        n = self.count[b]
        memmove(&self.key[b, i + 1], &self.key[b, i], (n - i) * sizeof(double))
        if self.mode == 0:
            memmove(&self.eff[b, i + 1], &self.eff[b, i], (n - i) * sizeof(double))
        memmove(&self.flags[b, i + 1], &self.flags[b, i], (n - i) * sizeof(unsigned char))
        self.key[b, i] = x
        if self.mode == 0:
            self.eff[b, i] = e
        self.flags[b, i] = f
        self.count[b] = n + 1
        for g in range(4):
            self.sums[b, g] += w[g]
        self.add(j + 1, w)
        if i == 0:
            self.set_first(j, x)
        if n + 1 >= C_CAPACITY:
            self.split(j)

    cdef void split(self, Py_ssize_t j) noexcept nogil:
        cdef Py_ssize_t half = C_CAPACITY // 2
        cdef Py_ssize_t b = self.slot_block[j]
        cdef Py_ssize_t c = self.new_block()
        cdef Py_ssize_t rest = self.count[b] - half
        cdef Py_ssize_t t = j + 1, u, v, bb
        cdef double old[4]
        cdef double delta[4]
        cdef int g
        for g in range(4):
            old[g] = self.sums[b, g]
        memmove(&self.key[c, 0], &self.key[b, half], rest * sizeof(double))
        if self.mode == 0:
            memmove(&self.eff[c, 0], &self.eff[b, half], rest * sizeof(double))
        memmove(&self.flags[c, 0], &self.flags[b, half], rest * sizeof(unsigned char))
        self.count[c] = rest
        self.count[b] = half
        self.span(b, 0, half, &self.sums[b, 0])
        self.span(c, 0, rest, &self.sums[c, 0])
        # the nearest gap after the block, within WINDOW slots
        u = t
        while u < self.nslots and u - t < C_WINDOW and self.slot_block[u] >= 0:
            u += 1
        if u >= self.nslots or self.slot_block[u] >= 0:
            self.spread(j, c)
            return
        for g in range(4):
            delta[g] = self.sums[b, g] - old[g]
        self.add(j + 1, delta)
        v = u - 1
        while v >= t:  # the blocks between move one slot on
            bb = self.slot_block[v]
            self.slot_block[v + 1] = bb
            self.block_slot[bb] = v + 1
            self.set_slot_first(v + 1, self.first[v])
            self.slot_block[v] = -1
            for g in range(4):
                delta[g] = -self.sums[bb, g]
            self.add(v + 1, delta)
            self.add(v + 2, &self.sums[bb, 0])
            v -= 1
        self.slot_block[t] = c
        self.block_slot[c] = t
        self.set_first(t, self.key[c, 0])
        self.add(t + 1, &self.sums[c, 0])
        self.nblocks += 1

    cdef void remove(self, double x) noexcept nogil:
        """Remove the first element of key ``x`` (the oldest of that key)."""
        cdef Py_ssize_t j, i, b, n, s
        cdef double w[4]
        cdef int g
        self.lower(x, &j, &i)
        b = self.slot_block[j]
        n = self.count[b]
        _weights(self.mode, self.effort_of(b, i), self.flags[b, i], w)
        memmove(&self.key[b, i], &self.key[b, i + 1], (n - i - 1) * sizeof(double))
        if self.mode == 0:
            memmove(&self.eff[b, i], &self.eff[b, i + 1], (n - i - 1) * sizeof(double))
        memmove(&self.flags[b, i], &self.flags[b, i + 1], (n - i - 1) * sizeof(unsigned char))
        self.count[b] = n - 1
        for g in range(4):
            self.sums[b, g] -= w[g]
            w[g] = -w[g]
        if n == 1:  # the block is empty: its slot a gap, the trees rebuilt
            self.slot_block[j] = -1
            self.nblocks -= 1
            self.spare[self.nspare] = b
            self.nspare += 1
            s = self.next_block(j)
            self.set_first(j, self.first[s] if s >= 0 else INFINITY)
            if j == self.head:
                self.head = s
            self.rebuild()
            return
        self.add(j + 1, w)
        if i == 0:
            self.set_first(j, self.key[b, 0])

    # ------------------------------------------------------------------ descents

    cdef void descend(self, int f, double target, bint strict, double* acc,
                      Py_ssize_t* jj, Py_ssize_t* ii) noexcept nogil:
        cdef Py_ssize_t step = 1, p = 0, q, j, i, b
        cdef double t
        cdef double w[4]
        cdef int g
        for g in range(4):
            acc[g] = 0.0
        while step * 2 <= self.nslots:
            step *= 2
        if self.nslots == 0:
            step = 0
        while step:
            q = p + step
            if q <= self.nslots:
                t = acc[f] + self.tree[q, f]
                if _within(t, target, strict):
                    p = q
                    for g in range(4):
                        acc[g] += self.tree[q, g]
            step >>= 1
        for j in range(p, self.nslots):
            b = self.slot_block[j]
            if b < 0:
                continue
            for i in range(self.count[b]):
                _weights(self.mode, self.effort_of(b, i), self.flags[b, i], w)
                t = acc[f] + w[f]
                if not _within(t, target, strict):
                    jj[0] = j
                    ii[0] = i
                    return
                for g in range(4):
                    acc[g] += w[g]
        jj[0] = self.nslots
        ii[0] = 0

    cdef double effort_at(self, Py_ssize_t j, Py_ssize_t i) noexcept nogil:
        return self.effort_of(self.slot_block[j], i)

    cdef inline double effort_of(self, Py_ssize_t b, Py_ssize_t t) noexcept nogil:
        """The effort of element ``t`` of block ``b`` (by effort: its key)."""
        return self.eff[b, t] if self.mode == 0 else self.key[b, t]


cdef class Ranking:
    """As ``effort_loop.Ranking``; the scope of a width is a ring of its evaluations (key,
    effort, flags) in release order."""

    cdef public Py_ssize_t width
    cdef double[::1] totals
    cdef Blocks ranked
    cdef Blocks defective
    cdef double[::1] ring_key
    cdef double[::1] ring_eff
    cdef unsigned char[::1] ring_flags
    cdef Py_ssize_t ring_head, ring_len

    def __init__(self, Py_ssize_t width):
        self.width = width
        self.totals = np.zeros(len(TOTALS))
        self.ranked = Blocks(BY_KEY)
        self.defective = Blocks(BY_EFFORT)
        self.ring_key = np.zeros(0)
        self.ring_eff = np.zeros(0)
        self.ring_flags = np.zeros(0, dtype=np.uint8)
        self.ring_head = 0
        self.ring_len = 0

    def _reserve_ring(self, Py_ssize_t inserts):
        """Room in the ring for the scope and ``inserts`` more (at most width + 1 at once)."""
        cdef Py_ssize_t need = self.ring_len + inserts
        cdef Py_ssize_t cap = self.ring_key.shape[0], k
        if self.width - self.ring_len < inserts:  # (width + 1 cannot overflow then)
            need = self.width + 1
        if need <= cap:
            return
        cap = max(need, 2 * cap)
        if cap - 1 > self.width:
            cap = self.width + 1
        key = np.zeros(cap)
        eff = np.zeros(cap)
        flags = np.zeros(cap, dtype=np.uint8)
        old = self.ring_key.shape[0]
        for k in range(self.ring_len):
            key[k] = self.ring_key[(self.ring_head + k) % old]
            eff[k] = self.ring_eff[(self.ring_head + k) % old]
            flags[k] = self.ring_flags[(self.ring_head + k) % old]
        self.ring_key, self.ring_eff, self.ring_flags = key, eff, flags
        self.ring_head = 0

    def run(self, const double[::1] key, const double[::1] e, const signed char[::1] d_obs,
            const signed char[::1] d_true, const long long[::1] bounds, double[:, ::1] out):
        """As ``effort_loop.Ranking.run``."""
        cdef Py_ssize_t nb = bounds.shape[0], b = 0, k, stop, cap, at
        cdef int f
        cdef Blocks blocks
        stop = bounds[nb - 1] if nb else 0
        if self.width:
            self._reserve_ring(stop)
        cap = self.ring_key.shape[0]
        with nogil:
            while b < nb and bounds[b] == 0:
                self.measures(&out[b, 0])
                b += 1
            for k in range(stop):
                f = d_obs[k] | (d_true[k] << 1)
                if k + C_AHEAD < stop:
                    self.ranked.prefetch(key[k + C_AHEAD])
                    if d_obs[k + C_AHEAD] | d_true[k + C_AHEAD]:
                        self.defective.prefetch(e[k + C_AHEAD])
                if self.ranked.full() or self.defective.full():
                    with gil:
                        for blocks in (self.ranked, self.defective):
                            if blocks.full():
                                blocks._grow(blocks.capacity + blocks.capacity // 2 + 4)
                self.change(key[k], e[k], f, 1.0)
                if self.width:
                    at = (self.ring_head + self.ring_len) % cap
                    self.ring_key[at] = key[k]
                    self.ring_eff[at] = e[k]
                    self.ring_flags[at] = f
                    self.ring_len += 1
                    if self.ring_len > self.width:
                        at = self.ring_head
                        self.ring_head = (self.ring_head + 1) % cap
                        self.ring_len -= 1
                        self.change(self.ring_key[at], self.ring_eff[at], self.ring_flags[at],
                                    -1.0)
                while b < nb and bounds[b] == k + 1:
                    self.measures(&out[b, 0])
                    b += 1

    cdef void change(self, double x, double e, int f, double sign) noexcept nogil:
        cdef Py_ssize_t j, i
        cdef double before[4]
        cdef int d0 = f & 1
        cdef int d1 = f >> 1
        if sign > 0:
            self.ranked.upper(x, &j, &i)
            self.ranked.prefix(j, i, before)
            self.pairs(before, e, f, sign)
            self.ranked.insert(j, i, x, e, f)
            if f:
                self.defective.upper(e, &j, &i)
                self.defective.insert(j, i, e, e, f)
        else:
            self.ranked.remove(x)
            if f:
                self.defective.remove(e)
        self.totals[0] += sign
        self.totals[1] += sign * e
        self.totals[2] += sign * d0
        self.totals[3] += sign * d1
        self.totals[4] += sign * d0 * e
        self.totals[5] += sign * d1 * e
        if sign < 0:
            self.ranked.lower(x, &j, &i)
            self.ranked.prefix(j, i, before)
            self.pairs(before, e, f, sign)

    cdef void pairs(self, double* before, double e, int f, double sign) noexcept nogil:
        cdef double e_above = before[1]
        cdef double e_below = self.totals[1] - e_above
        cdef double below_e[4]
        cdef double count_le, sum_gt
        cdef Py_ssize_t j, i
        cdef int r, d
        if f:
            self.defective.upper(e, &j, &i)
            self.defective.prefix(j, i, below_e)
        for r in range(2):
            d = (f >> 1) if r else (f & 1)
            self.totals[6 + r] += sign * (d * e_below + e * before[2 + r])
            if d:
                count_le = below_e[2 * r]
                sum_gt = self.totals[4 + r] - below_e[2 * r + 1]
                self.totals[8 + r] += sign * (e * count_le + sum_gt)

    cdef void measures(self, double* row) noexcept nogil:
        cdef double n = self.totals[0], big_e = self.totals[1], big_d, e_def, s_opt, s_worst
        cdef double acc[4]
        cdef double count20 = NAN, pci = NAN
        cdef double d20[2]
        cdef double recall, precision, f1, at_recall, ifa, popt
        cdef Py_ssize_t j, i
        cdef int r, base
        d20[0] = NAN
        d20[1] = NAN
        if n > 0 and big_e > 0:
            self.ranked.descend(1, C_SHARE * big_e, False, acc, &j, &i)
            count20 = acc[0]
            d20[0] = acc[2]
            d20[1] = acc[3]
            pci = count20 / n
        for r in range(2):
            base = r * C_N
            big_d = self.totals[2 + r]
            recall = NAN
            precision = NAN
            f1 = NAN
            at_recall = NAN
            ifa = NAN
            popt = NAN
            if n > 0 and big_d > 0:
                if big_e > 0:
                    recall = d20[r] / big_d
                    if count20 > 0:
                        precision = d20[r] / count20
                        if precision + recall == 0:
                            f1 = 0.0
                        else:
                            f1 = 2 * precision * recall / (precision + recall)
                    self.ranked.descend(2 + r, C_SHARE * big_d, True, acc, &j, &i)
                    at_recall = (acc[1] + self.ranked.effort_at(j, i)) / big_e
                    e_def = self.totals[4 + r]
                    s_opt = big_d * (big_e - e_def) + self.totals[8 + r]
                    s_worst = (big_d - 1) * e_def - self.totals[8 + r]
                    if s_opt > s_worst:
                        popt = 1.0 - (s_opt - self.totals[6 + r]) / (s_opt - s_worst)
                self.ranked.descend(2 + r, 1.0, True, acc, &j, &i)
                ifa = acc[0]
            row[base] = recall
            row[base + 1] = precision
            row[base + 2] = f1
            row[base + 3] = pci
            row[base + 4] = at_recall
            row[base + 5] = ifa
            row[base + 6] = popt
