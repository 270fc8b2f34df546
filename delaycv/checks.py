"""Kinds of values, as the checks of specs and options need them: a boolean is not a number.

``True`` is an ``int`` to Python, so ``isinstance(x, int)`` lets ``threshold: true`` or
``folds: false`` through; these helpers do not.

>>> is_integer(3), is_integer(True), is_integer(3.0)
(True, False, False)
>>> is_number(0.5), is_number(2), is_number(False), is_number("1")
(True, True, False, False)
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any


def is_integer(value: Any) -> bool:
    """True for an integer (Python or numpy), False for a boolean or anything else."""
    return isinstance(value, Integral) and not _is_bool(value)


def is_number(value: Any) -> bool:
    """True for a real number (integer or float, Python or numpy; NaN included), False for a
    boolean or anything else."""
    return isinstance(value, Real) and not _is_bool(value)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool) or type(value).__name__ == "bool_"
