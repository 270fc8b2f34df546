"""Kinds of values, as the checks of specs and options need them: a boolean is not a number.

``True`` is an ``int`` to Python, so ``isinstance(x, int)`` lets ``threshold: true`` or
``folds: false`` through; these helpers do not.

>>> is_integer(3), is_integer(True), is_integer(3.0)
(True, False, False)
>>> is_number(0.5), is_number(2), is_number(False), is_number("1")
(True, True, False, False)
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any

from delaycv.common.defaults import SEED_MAX
from delaycv.common.errors import ConfigError

#: An effort (of the effort-aware measures) is 0 or a number from ``EFFORT_MIN`` (2**-1022, the
#: smallest normal double) to ``EFFORT_MAX`` (2**53, past any count of lines): the measures add
#: efforts and their products over the whole stream (docs/metrics.md), which stay finite and keep
#: their precision in that range; an effort of 1e303 would make the total infinite, one of
#: 1e-320 holds three significant digits. Anything else is refused where the effort is read.
EFFORT_MIN = 2.0**-1022
EFFORT_MAX = 2.0**53
EFFORT_EXPECTED = (
    "a finite number >= 0: 0, or from 2**-1022 = 2.2e-308 (the smallest normal double) to "
    "2**53 = 9.0e15"
)


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


def check_level(value: Any, key: str) -> float:
    """``value`` as a float if it is a significance level, a number in (0, 1), else a
    :class:`ConfigError` naming ``key``.

    >>> check_level(0.05, "tests.alpha")
    0.05
    >>> check_level(1, "tests.alpha")
    Traceback (most recent call last):
    ...
    delaycv.common.errors.ConfigError: key tests.alpha: alpha 1 (expected a number in (0, 1))
    """
    if is_number(value) and 0 < value < 1:
        return float(value)
    raise ConfigError(
        f"{_name(key)} {value!r}", location=f"key {key}", expected="a number in (0, 1)"
    )


def check_choice(value: Any, key: str, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``, else a :class:`ConfigError` naming ``key``.

    >>> check_choice("np", "rankings.version", ("np", "p"))
    'np'
    >>> check_choice("q", "rankings.version", ("np", "p"))
    Traceback (most recent call last):
    ...
    delaycv.common.errors.ConfigError: key rankings.version: version 'q' (expected one of np, p)
    """
    if isinstance(value, str) and value in choices:
        return value
    raise ConfigError(
        f"{_name(key)} {value!r}", location=f"key {key}", expected="one of " + ", ".join(choices)
    )


def check_names(value: Any, key: str, choices: Sequence[str] | None = None) -> tuple[str, ...]:
    """``value`` as a tuple of names if it is a name or a non-empty list of names (non-empty
    strings), each one of ``choices`` when they are given; else a :class:`ConfigError` naming
    ``key`` (``key.i`` for the i-th name).

    >>> check_names("gmean", "figures.metric")
    ('gmean',)
    >>> check_names(["observed", "both"], "tests.references", ("observed", "true"))
    Traceback (most recent call last):
    ...
    delaycv.common.errors.ConfigError: key tests.references.1: references 'both' (expected one of observed, true)
    """
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list | tuple) or not names:
        raise ConfigError(
            f"{_name(key)} {value!r}",
            location=f"key {key}",
            expected="a name or a non-empty list of names",
        )
    for i, name in enumerate(names):
        if choices is not None:
            check_choice(name, f"{key}.{i}", choices)
        elif not isinstance(name, str) or not name:
            raise ConfigError(
                f"{_name(key)} {name!r}", location=f"key {key}.{i}", expected="a non-empty name"
            )
    return tuple(names)


def _name(key: str) -> str:
    """The last part of a key that is not a position (``tests.metrics.1`` -> ``metrics``)."""
    parts = [part for part in key.split(".") if not part.isdigit()]
    return parts[-1] if parts else key


def kind_spec(spec: Any, *, default: str, key: str, what: str, kinds: str) -> tuple[str, dict]:
    """A spec of a kind with at most one parameter (an estimator, an effort scope) as its kind and
    the rest of its keys: ``None`` is the ``default`` kind, a string a kind's name, a mapping
    ``{kind: ..., <parameter>: ...}``. Anything else is a ``ConfigError`` naming ``key``
    (``kinds``: the kinds in words, for the message).

    >>> kind_spec({"kind": "sliding", "width": 5}, default="fading", key="estimator",
    ...     what="estimator", kinds="fading, sliding")
    ('sliding', {'width': 5})
    """
    if spec is None:
        spec = {"kind": default}
    if isinstance(spec, str):
        spec = {"kind": spec}
    if not isinstance(spec, dict):
        raise ConfigError(
            f"{what} spec is {type(spec).__name__}",
            location=f"key {key}",
            expected=f"a kind ({kinds}) or a mapping with kind",
        )
    rest = dict(spec)
    return rest.pop("kind", default), rest


def check_parameter_keys(rest: dict, parameter: str | None, *, key: str, what: str) -> None:
    """Refuse a key of ``rest`` (a kind's spec without its kind) other than the kind's one
    ``parameter`` (None: it takes none), naming ``key.<the key>``; ``what``: the kind in words
    (``the sliding estimator``)."""
    extra = sorted(set(rest) - ({parameter} if parameter else set()), key=str)
    if extra:
        raise ConfigError(
            f"key {extra[0]!r} does not apply to {what}",
            location=f"key {key}.{extra[0]}",
            expected=parameter or "no parameter",
        )
