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

from delaycv.common.defaults import SEED_MAX
from delaycv.common.errors import ConfigError


def is_integer(value: Any) -> bool:
    """True for an integer (Python or numpy), False for a boolean or anything else."""
    return isinstance(value, Integral) and not _is_bool(value)


def is_number(value: Any) -> bool:
    """True for a real number (integer or float, Python or numpy; NaN included), False for a
    boolean or anything else."""
    return isinstance(value, Real) and not _is_bool(value)


def check_seed(value: Any, key: str) -> int:
    """``value`` as an int if it is a seed (an integer from 0 to ``defaults.SEED_MAX``, 2**63 - 1:
    the run seed is an int64 column of the tables), else a :class:`ConfigError` naming ``key``.

    >>> check_seed(7, "seed")
    7
    >>> check_seed(-1, "seeds.0")
    Traceback (most recent call last):
    ...
    delaycv.common.errors.ConfigError: key seeds.0: seed -1 is out of range (expected an integer from 0 to 2**63 - 1 = 9223372036854775807)
    """
    if not is_integer(value) or not 0 <= value <= SEED_MAX:
        raise ConfigError(
            f"seed {value!r} is " + ("out of range" if is_integer(value) else "not an integer"),
            location=f"key {key}",
            expected=f"an integer from 0 to 2**63 - 1 = {SEED_MAX}",
        )
    return int(value)


#: the characters of dataset, learner and policy names (they become path components)
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.+-]*"


def check_name(value: Any, key: str) -> str:
    """``value`` if it is a name of :data:`NAME_PATTERN` (letters, digits, ``_ . + -``, not
    starting with a punctuation mark), else a :class:`ConfigError` naming ``key``: a run's
    dataset, learner or policy name becomes a folder of the workflow and a key of every table.

    >>> check_name("hitl_7d_90d", "run_keys.policy")
    'hitl_7d_90d'
    >>> check_name("a/b", "run_keys.dataset")
    Traceback (most recent call last):
    ...
    delaycv.common.errors.ConfigError: key run_keys.dataset: name 'a/b' (expected a name matching [A-Za-z0-9][A-Za-z0-9_.+-]* (letters, digits, _ . + -))
    """
    import re

    if not isinstance(value, str) or re.fullmatch(NAME_PATTERN, value) is None:
        raise ConfigError(
            f"name {value!r}",
            location=f"key {key}",
            expected=f"a name matching {NAME_PATTERN} (letters, digits, _ . + -)",
        )
    return value


def check_flag(value: Any, key: str) -> bool:
    """``value`` as a bool if it is one (Python or numpy), else a :class:`ConfigError` naming
    ``key`` (an option given as 1, "yes" or "false" is refused, not read as true).

    >>> import numpy as np
    >>> check_flag(True, "flush"), check_flag(np.False_, "flush")
    (True, False)
    >>> check_flag("yes", "validation.fixed_split")
    Traceback (most recent call last):
    ...
    delaycv.common.errors.ConfigError: key validation.fixed_split: fixed_split 'yes' is not a boolean (expected true or false)
    """
    if not _is_bool(value):
        name = key.rsplit(".", 1)[-1]
        raise ConfigError(
            f"{name} {value!r} is not a boolean", location=f"key {key}", expected="true or false"
        )
    return bool(value)


def _is_bool(value: Any) -> bool:
    """A Python or numpy boolean (numpy's type is ``numpy.bool``, ``numpy.bool_`` before 2.0),
    told without importing numpy."""
    kind = type(value)
    return isinstance(value, bool) or (
        kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_")
    )
