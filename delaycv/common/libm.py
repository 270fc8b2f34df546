"""The C library's elementwise functions, called on each value in turn (pure; opens no files).

numpy computes ``exp``, ``log``, ``log2``, ``log1p`` and ``power`` on an array with code of its
own chosen for the processor: with AVX-512 (numpy's ``X86_V4``) its vectorised versions, which
differ in the last bit from the C library's for a few values in a hundred (``log1p`` 7 %, ``exp``
5 %, ``log`` 0.3 % of uniform random values); without it, the C library's, one value at a time.
These functions always call the C library (through ``math``, which calls it): the values numpy
gives on a processor without AVX-512, on every processor. (The C library itself picks versions
by the processor: glibc's use fused multiply-adds where the processor has them, as every x86-64
processor since about 2015 has.)

This is the Python twin of ``_libm.pyx`` (the same calls, compiled: the same values bit for bit,
many times faster); :mod:`delaycv.common.portable` takes the compiled one where it is built.
Where ``math`` raises, the C function's value is given (``log(0)`` is ``-inf``, ``log(-1)`` NaN,
``exp(1000)`` ``inf``), as the compiled one gives it.

>>> log([1.0, 0.0, -1.0]).tolist()
[0.0, -inf, nan]
>>> exp(np.array([[0.0], [1000.0]])).tolist()
[[1.0], [inf]]
>>> power(0.5, [0.0, 1.0, -2.0]).tolist()
[1.0, 0.5, 4.0]
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

#: empty: this is the twin (the compiled module records its source's SHA-256 here)
SOURCE_DIGEST = ""


def _c_value(f: Callable[..., float], edge: Callable[..., float]) -> Callable[..., float]:
    """``f``, and ``edge`` of the same arguments where ``f`` raises (a pole, a value out of the
    domain or out of range, where the C function returns instead)."""

    def value(*args: float) -> float:
        try:
            return f(*args)
        except (ValueError, OverflowError):
            return edge(*args)

    return value


def _log_edge(x: float) -> float:
    return -math.inf if x == 0.0 else math.nan


def _log1p_edge(x: float) -> float:
    return -math.inf if x == -1.0 else math.nan


def _exp_edge(x: float) -> float:
    return math.inf  # (math.exp raises only where the value overflows)


def _pow_edge(base: float, exponent: float) -> float:
    if base == 0.0:  # a negative exponent: a pole (the sign of an odd integer's)
        odd = exponent.is_integer() and exponent % 2 == 1
        return math.copysign(math.inf, base) if odd else math.inf
    if base < 0.0 and not exponent.is_integer():
        return math.nan
    # out of range: infinity with the sign the result has
    negative = base < 0.0 and exponent % 2 == 1
    return -math.inf if negative else math.inf


def _elementwise(f: Callable[..., float], nargs: int) -> Callable[..., np.ndarray]:
    ufunc = np.frompyfunc(f, nargs, 1)

    def apply(*args) -> np.ndarray:
        arrays = [np.asarray(a, dtype=np.float64) for a in args]
        with np.errstate(all="ignore"):  # (the C functions' flags: the compiled one warns not)
            return np.asarray(ufunc(*arrays), dtype=np.float64)

    return apply


exp = _elementwise(_c_value(math.exp, _exp_edge), 1)
log = _elementwise(_c_value(math.log, _log_edge), 1)
log2 = _elementwise(_c_value(math.log2, _log_edge), 1)
log1p = _elementwise(_c_value(math.log1p, _log1p_edge), 1)
power = _elementwise(_c_value(math.pow, _pow_edge), 2)
