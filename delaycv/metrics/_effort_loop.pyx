# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The inner loop of :class:`delaycv.metrics.effort.EffortCurve` compiled: :func:`run` and
:func:`measures` do exactly what ``effort_loop.py`` does (see its docstring for the state), in
the same order of floating-point operations, with C doubles: the same values bit for bit
(``tests/metrics/test_effort_measures.py``). ``delaycv.common.native`` loads it only when it was built from this file
(``SOURCE_DIGEST``)."""

from libc.math cimport NAN

cdef extern from *:
    """
    #ifndef DELAYCV_EFFORT_SOURCE
    #define DELAYCV_EFFORT_SOURCE ""
    #endif
    """
    const char* DELAYCV_EFFORT_SOURCE

#: SHA-256 of the ``_effort_loop.pyx`` this module was compiled from (set by ``setup.py``)
SOURCE_DIGEST = DELAYCV_EFFORT_SOURCE.decode("ascii")

TOTALS = ("n", "E", "D_obs", "D_true", "Edef_obs", "Edef_true", "S_obs", "S_true", "A_obs", "A_true")
N_MEASURES = 7
SHARE = 0.2
cdef double C_SHARE = 0.2
cdef int C_N = 7


cdef inline void _add(double[::1] tree, Py_ssize_t size, Py_ssize_t i, double value) noexcept nogil:
    while i <= size:
        tree[i] += value
        i += i & -i


cdef inline double _prefix(double[::1] tree, Py_ssize_t i) noexcept nogil:
    cdef double s = 0.0
    while i > 0:
        s += tree[i]
        i -= i & -i
    return s


cdef void _put(double[:, ::1] trees, double[:, ::1] wtrees, double[::1] totals, Py_ssize_t size,
               Py_ssize_t wsize, Py_ssize_t p, Py_ssize_t wp, double e, int d0, int d1,
               double sign) noexcept nogil:
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


cdef void _pairs(double[:, ::1] trees, double[:, ::1] wtrees, double[::1] totals, Py_ssize_t p,
                 Py_ssize_t wp, double e, int d0, int d1, double sign) noexcept nogil:
    cdef double e_above = _prefix(trees[1], p)
    cdef double e_below = totals[1] - e_above
    cdef double d_above, cnt_le, sum_gt
    cdef int r, d
    for r in range(2):
        d = d1 if r else d0
        d_above = _prefix(trees[2 + r], p)
        totals[6 + r] += sign * (d * e_below + e * d_above)
        if d:
            cnt_le = _prefix(wtrees[2 * r], wp)
            sum_gt = totals[4 + r] - _prefix(wtrees[2 * r + 1], wp)
            totals[8 + r] += sign * (e * cnt_le + sum_gt)


cdef void _change(double[:, ::1] trees, double[:, ::1] wtrees, double[::1] totals,
                  Py_ssize_t size, Py_ssize_t wsize, Py_ssize_t p, Py_ssize_t wp, double e,
                  int d0, int d1, double sign) noexcept nogil:
    if sign > 0:
        _pairs(trees, wtrees, totals, p, wp, e, d0, d1, sign)
        _put(trees, wtrees, totals, size, wsize, p, wp, e, d0, d1, sign)
    else:
        _put(trees, wtrees, totals, size, wsize, p, wp, e, d0, d1, sign)
        _pairs(trees, wtrees, totals, p, wp, e, d0, d1, sign)


cdef Py_ssize_t _descend(double[::1] tree, Py_ssize_t size, Py_ssize_t top, double target,
                         bint strict, double[::1] acc0, double[::1] acc1, double[::1] acc2,
                         int nacc, double* accs) noexcept nogil:
    cdef Py_ssize_t p = 0, q, step = top
    cdef double s = 0.0, t
    cdef bint go
    accs[0] = 0.0
    accs[1] = 0.0
    accs[2] = 0.0
    while step:
        q = p + step
        if q <= size:
            t = s + tree[q]
            go = (t < target) if strict else (t <= target)
            if go:
                p = q
                s = t
                accs[0] += acc0[q]
                if nacc > 1:
                    accs[1] += acc1[q]
                    accs[2] += acc2[q]
        step >>= 1
    return p


cdef void _measures(double[:, ::1] trees, double[::1] totals, double[::1] e_at, Py_ssize_t size,
                    double* row) noexcept nogil:
    cdef Py_ssize_t top = 1, p
    while top * 2 <= size:
        top *= 2
    cdef double n = totals[0], big_e = totals[1], big_d, e_def, s_opt, s_worst
    cdef double accs[3]
    cdef double cnt20 = NAN, pci = NAN
    cdef double d20[2]
    cdef double recall, precision, f1, at_recall, ifa, popt
    cdef int r, base
    d20[0] = NAN
    d20[1] = NAN
    if n > 0 and big_e > 0:
        _descend(trees[1], size, top, C_SHARE * big_e, False, trees[0], trees[2], trees[3], 3,
                 accs)
        cnt20 = accs[0]
        d20[0] = accs[1]
        d20[1] = accs[2]
        pci = cnt20 / n
    for r in range(2):
        base = r * C_N
        big_d = totals[2 + r]
        recall = NAN
        precision = NAN
        f1 = NAN
        at_recall = NAN
        ifa = NAN
        popt = NAN
        if n > 0 and big_d > 0:
            if big_e > 0:
                recall = d20[r] / big_d
                if cnt20 > 0:
                    precision = d20[r] / cnt20
                    if precision + recall == 0:
                        f1 = 0.0
                    else:
                        f1 = 2 * precision * recall / (precision + recall)
                p = _descend(trees[2 + r], size, top, C_SHARE * big_d, True, trees[1], trees[1],
                             trees[1], 1, accs)
                at_recall = (accs[0] + e_at[p + 1]) / big_e
                e_def = totals[4 + r]
                s_opt = big_d * (big_e - e_def) + totals[8 + r]
                s_worst = (big_d - 1) * e_def - totals[8 + r]
                if s_opt > s_worst:
                    popt = 1.0 - (s_opt - totals[6 + r]) / (s_opt - s_worst)
            _descend(trees[2 + r], size, top, 1.0, True, trees[0], trees[0], trees[0], 1, accs)
            ifa = accs[0]
        row[base] = recall
        row[base + 1] = precision
        row[base + 2] = f1
        row[base + 3] = pci
        row[base + 4] = at_recall
        row[base + 5] = ifa
        row[base + 6] = popt


def measures(double[:, ::1] trees, double[:, ::1] wtrees, double[::1] totals, double[::1] e_at,
             Py_ssize_t size, double[:, ::1] out, Py_ssize_t at):
    """As ``effort_loop.measures``."""
    _measures(trees, totals, e_at, size, &out[at, 0])


cdef void _read(double[:, ::1] trees, double[::1] totals, double[::1] e_at, Py_ssize_t usize,
                Py_ssize_t size, double[:, ::1] out, Py_ssize_t b, double[::1] last) noexcept nogil:
    cdef int j
    if size > 0:
        for j in range(2 * C_N):
            out[b, j] = last[j]
    else:
        _measures(trees, totals, e_at, usize, &out[b, 0])


def run(double[:, ::1] trees, double[:, ::1] wtrees, double[::1] totals, double[::1] e_at,
        const long long[::1] pos, const long long[::1] wpos, const double[::1] e,
        const signed char[::1] d_obs, const signed char[::1] d_true, Py_ssize_t head,
        Py_ssize_t start, Py_ssize_t width, Py_ssize_t size, const long long[::1] bounds,
        double[:, ::1] out, double[::1] last):
    """As ``effort_loop.run``."""
    cdef Py_ssize_t usize = trees.shape[1] - 1
    cdef Py_ssize_t wsize = wtrees.shape[1] - 1
    cdef Py_ssize_t b = 0, nb = bounds.shape[0], k, stop, i, j
    stop = start + (bounds[nb - 1] if nb else 0)
    with nogil:
        while b < nb and bounds[b] == 0:
            _read(trees, totals, e_at, usize, size, out, b, last)
            b += 1
        for k in range(start, stop):
            _change(trees, wtrees, totals, usize, wsize, pos[k], wpos[k], e[k], d_obs[k],
                    d_true[k], 1.0)
            if width > 0 and k - head >= width:
                _change(trees, wtrees, totals, usize, wsize, pos[head], wpos[head], e[head],
                        d_obs[head], d_true[head], -1.0)
                head += 1
            if size > 0 and k - head + 1 == size:
                _measures(trees, totals, e_at, usize, &last[0])
                for i in range(trees.shape[0]):
                    for j in range(trees.shape[1]):
                        trees[i, j] = 0.0
                for i in range(wtrees.shape[0]):
                    for j in range(wtrees.shape[1]):
                        wtrees[i, j] = 0.0
                for i in range(totals.shape[0]):
                    totals[i] = 0.0
                head = k + 1
            while b < nb and bounds[b] == k - start + 1:
                _read(trees, totals, e_at, usize, size, out, b, last)
                b += 1
    return head
