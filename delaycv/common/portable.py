"""The same numbers on every processor (pure; opens no files).

A run's metrics go through two kinds of numpy code that numpy or its BLAS choose for the
processor they run on, and that round differently on another:

* products of float arrays (``a @ b``, ``np.dot``) are handed to BLAS, whose kernel (OpenBLAS
  picks one for the processor, or takes the one ``OPENBLAS_CORETYPE`` names) adds their terms in
  an order of its own: :func:`dot` multiplies element by element and adds with numpy's own
  reductions, in an order set by the arrays' shapes alone;
* ``exp``, ``log``, ``log2``, ``log1p`` and ``power`` are vectorised by numpy where the processor
  has AVX-512, with other last bits than the C library's: :data:`exp`, :data:`log`,
  :data:`log2`, :data:`log1p` and :data:`power` call the C library on each value
  (:mod:`delaycv.common.libm`, compiled in ``_libm.pyx`` where the install built it: ``STATUS``).

So delaycv's numbers are the same bytes on every x86-64 processor with fused multiply-adds (which
the C library's functions use where they exist), whatever its BLAS kernel or vector instructions
(``tests/common/test_portable.py`` runs two small evaluations under several of each); a learner's
own arithmetic is the learner's (docs/engine.md, "Across machines").
"""

from __future__ import annotations

import numpy as np

from delaycv.common import libm, native


def dot(a, b) -> np.ndarray | float:
    """``a @ b`` for float arrays, with its products added in an order set by the shapes alone.

    ``b`` is a vector (k,) or a matrix (k, n); ``a`` is (..., k). A vector ``b`` gives
    ``(a * b).sum(axis=-1)`` (numpy's pairwise sum of the products; a float when ``a`` is a
    vector too), a matrix gives ``(a[..., :, None] * b).sum(axis=-2)`` (each column's products
    added from the first to the last).

    Examples
    --------
    >>> dot([1.0, 2.0, 3.0], [1.0, 0.5, 2.0])
    8.0
    >>> dot(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]))
    array([[1., 2., 3.],
           [3., 4., 7.]])
    >>> dot(np.ones((2, 3)), np.zeros((4, 1)))
    Traceback (most recent call last):
    ...
    ValueError: dot: a's last axis has 3 values, b's first 4
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape[-1] != b.shape[0]:
        raise ValueError(f"dot: a's last axis has {a.shape[-1]} values, b's first {b.shape[0]}")
    if b.ndim == 1:
        out = np.multiply(a, b).sum(axis=-1)
        return float(out) if a.ndim == 1 else out
    return np.multiply(a[..., :, None], b).sum(axis=-2)


#: the C library's functions: compiled where they are built, else their Python twin
LIBM, STATUS = native.load("delaycv.common._libm", libm)

#: ``exp``, ``log``, ``log2``, ``log1p`` and ``power(base, exponent)`` of float arrays (any
#: shape; ``power`` broadcasts), each value by the C library
exp, log, log2, log1p, power = LIBM.exp, LIBM.log, LIBM.log2, LIBM.log1p, LIBM.power
