"""Products summed in one order on every processor (pure; opens no files).

numpy hands a product of float arrays (``a @ b``, ``np.dot``) to BLAS, which picks a kernel for
the processor it runs on (OpenBLAS: Haswell, SkylakeX, Zen, ... or what
``OPENBLAS_CORETYPE`` names) and each kernel adds the products in its own order. The same run
then gives values that differ in the last bit from one machine to another, and a study's exact
ties (two learners with the same value in a fold) can become differences. :func:`dot` multiplies
element by element and adds with numpy's own reductions, whose order depends on the shapes only:
a metric is the same bit for bit on every processor (``tests/common/test_fixed_order.py`` runs one
under three OpenBLAS kernels).
"""

from __future__ import annotations

import numpy as np


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
