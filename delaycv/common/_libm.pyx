# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""``libm`` compiled: the C library's ``exp``, ``log``, ``log2``, ``log1p`` and ``pow`` called on
each value in turn (the same functions as the Python twin ``libm.py`` calls through ``math``: the
same values bit for bit). ``delaycv.common.native`` loads it only when it was built from this
file (``SOURCE_DIGEST``)."""

import numpy as np

from libc.math cimport exp as c_exp, log as c_log, log2 as c_log2, log1p as c_log1p, pow as c_pow

cdef extern from *:
    """
    #ifndef DELAYCV_LIBM_SOURCE
    #define DELAYCV_LIBM_SOURCE ""
    #endif
    """
    const char* DELAYCV_LIBM_SOURCE

#: SHA-256 of the ``_libm.pyx`` this module was compiled from (set by ``setup.py``)
SOURCE_DIGEST = DELAYCV_LIBM_SOURCE.decode("ascii")

ctypedef double (*unary)(double) noexcept nogil


cdef _each(unary f, x):
    a = np.ascontiguousarray(x, dtype=np.float64)
    out = np.empty(a.shape)
    cdef const double[::1] src = a.reshape(-1)
    cdef double[::1] dst = out.reshape(-1)
    cdef Py_ssize_t i
    with nogil:
        for i in range(src.shape[0]):
            dst[i] = f(src[i])
    return out


def exp(x):
    """``libm.exp``."""
    return _each(c_exp, x)


def log(x):
    """``libm.log``."""
    return _each(c_log, x)


def log2(x):
    """``libm.log2``."""
    return _each(c_log2, x)


def log1p(x):
    """``libm.log1p``."""
    return _each(c_log1p, x)


def power(base, exponent):
    """``libm.power``."""
    b, e = np.broadcast_arrays(
        np.asarray(base, dtype=np.float64), np.asarray(exponent, dtype=np.float64)
    )
    out = np.empty(b.shape)
    cdef const double[::1] cb = np.ascontiguousarray(b).reshape(-1)
    cdef const double[::1] ce = np.ascontiguousarray(e).reshape(-1)
    cdef double[::1] dst = out.reshape(-1)
    cdef Py_ssize_t i
    with nogil:
        for i in range(dst.shape[0]):
            dst[i] = c_pow(cb[i], ce[i])
    return out
