# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""``fading_sums.running_sums`` compiled: each evaluation's terms built and added to the running
sum one after the other, in C (the same products and additions, in the same order, as the numpy
twin ``fading_sums.py``: the same values bit for bit). ``delaycv.common.native`` loads it only
when it was built from this file (``SOURCE_DIGEST``)."""

import numpy as np

from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc

cdef extern from *:
    """
    #ifndef DELAYCV_FADING_SOURCE
    #define DELAYCV_FADING_SOURCE ""
    #endif
    """
    const char* DELAYCV_FADING_SOURCE

#: SHA-256 of the ``_fading_sums.pyx`` this module was compiled from (set by ``setup.py``)
SOURCE_DIGEST = DELAYCV_FADING_SOURCE.decode("ascii")


def running_sums(layout, code, vb, w, bint unit, scale, bounds, buffer=None):
    """``fading_sums.running_sums`` (``buffer`` is not needed here)."""
    cdef const double[:, ::1] lut = layout.lut
    cdef const int64_t[::1] col_seq = layout.col_seq
    cdef const int64_t[::1] col_b = layout.col_b
    cdef const unsigned char[::1] col_weighted = layout.col_weighted
    cdef const int64_t[::1] c_code = np.ascontiguousarray(code, dtype=np.int64)
    cdef const double[:, ::1] c_vb = np.ascontiguousarray(vb, dtype=np.float64)
    cdef const double[:, ::1] c_scale = np.ascontiguousarray(scale, dtype=np.float64)
    cdef const double[::1] c_w = np.ascontiguousarray(
        np.zeros(0) if unit else w, dtype=np.float64
    )
    cdef const int64_t[::1] ends = np.ascontiguousarray(bounds, dtype=np.int64).reshape(-1)
    cdef Py_ssize_t terms = lut.shape[1], k = ends.shape[0]
    out = np.empty((k, terms))
    cdef double[:, ::1] o = out
    cdef Py_ssize_t end = ends[k - 1] if k else 0
    if end > c_code.shape[0] or (end and (c_vb.shape[0] < end or c_scale.shape[1] < end)):
        raise ValueError(f"bounds up to {end} for {c_code.shape[0]} evaluations")
    if not unit and c_w.shape[0] < end:
        raise ValueError(f"bounds up to {end} for {c_w.shape[0]} weights")
    cdef double* acc = <double*> malloc(terms * sizeof(double))
    if acc == NULL:
        raise MemoryError()
    cdef Py_ssize_t e, j, i = 0
    cdef int64_t c, s, b, codes = lut.shape[0]
    cdef double t
    try:
        for j in range(terms):
            acc[j] = 0.0
        while i < k and ends[i] <= 0:  # bounds at 0: nothing added yet
            for j in range(terms):
                o[i, j] = acc[j]
            i += 1
        for e in range(end):
            c = c_code[e]
            if c < 0 or c >= codes:
                raise IndexError(f"code {c} of evaluation {e}: the table has {codes} rows")
            for j in range(terms):
                t = lut[c, j]
                if not unit and col_weighted[j]:
                    t = t * c_w[e]
                b = col_b[j]
                if b >= 0:
                    t = c_vb[e, b]
                s = col_seq[j]
                if s >= 0:
                    t = t * c_scale[s, e]
                acc[j] = acc[j] + t
            while i < k and ends[i] == e + 1:
                for j in range(terms):
                    o[i, j] = acc[j]
                i += 1
    finally:
        free(acc)
    return out
