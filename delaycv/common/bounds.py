"""The bounds of the size-like values: one table (:data:`BOUNDS`), one check (:func:`check_size`).

A size a run cannot have (a sliding window of 10**12 evaluations: 313 TiB; 2**63 folds; a
window of 2**63 instances) is refused before any work, with one line that names the key or option,
the value and the bound, the same for the workflow's config (``delaycv check``, the schema's
``maximum``), the command line and the API: each of them calls :func:`check_size` where the value
is read (:mod:`delaycv.metrics.estimators`, :mod:`delaycv.protocol.validation`,
:mod:`delaycv.protocol.settings`, :mod:`delaycv.protocol.checkpoints`,
:mod:`delaycv.protocol.durations`, the commands' options, :mod:`delaycv.study.checks`), and
``tests/common/test_size_bounds.py`` holds the schema's maxima equal to this table. Seeds have their own
range (:func:`delaycv.common.checks.check_seed`).

>>> check_size("width", 1000, "key estimator.width")
1000
>>> check_size("width", 10**12, "key estimator.width")
Traceback (most recent call last):
...
delaycv.common.errors.ConfigError: key estimator.width: width 1000000000000 is too large (expected at most 10,000,000: a sliding window holds its last evaluations in memory, 368 bytes each per fold)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from delaycv.common.checks import is_integer
from delaycv.common.errors import ConfigError

#: The largest count of instances, positions and seconds: 2**53, the largest integer a float64
#: holds exactly (counts, sums of weights and reveal times pass through float64).
COUNT_MAX = 2**53
EXACT = "2**53, the largest integer a float64 holds exactly"


@dataclass(frozen=True)
class Bound:
    """The range of one size-like value: ``minimum`` to ``maximum`` (integers), and ``why`` the
    maximum is what it is (said in the error)."""

    minimum: int
    maximum: int
    why: str


#: Every size-like value by name: its bound and why.
BOUNDS: dict[str, Bound] = {
    "width": Bound(
        1,
        10**7,
        "a sliding window holds its last evaluations in memory, 368 bytes each per fold",
    ),
    "size": Bound(1, COUNT_MAX, EXACT),
    "every": Bound(1, COUNT_MAX, EXACT),
    "position": Bound(1, COUNT_MAX, EXACT),
    "window": Bound(0, COUNT_MAX, EXACT),
    "folds": Bound(1, 10**4, "each fold is a learner and its state held in memory"),
    "jobs": Bound(
        1, 10**4, "processes; no more start than there are folds or figure sets to share out"
    ),
    "resamples": Bound(
        1, 10**6, "the random sign flips are drawn at once: 8 bytes per pair and flip"
    ),
    "rows": Bound(1, 10**8, "a generated stream is held in memory"),
    "dpi": Bound(
        1,
        2400,
        "a figure of about 10 x 6 inches is then 24,000 x 14,400 pixels, 1 GiB to draw",
    ),
}


def expected(name: str) -> str:
    """What :func:`check_size` expects of ``name``, in words.

    >>> expected("folds")
    'an integer from 1 to 10,000 (each fold is a learner and its state held in memory)'
    """
    bound = BOUNDS[name]
    return f"an integer from {bound.minimum} to {bound.maximum:,} ({bound.why})"


def check_size(name: str, value: Any, location: str) -> int:
    """``value`` as an int if it is an integer within the bound of ``name`` (:data:`BOUNDS`), else
    a :class:`~delaycv.common.errors.ConfigError` at ``location`` (``"key estimator.width"``,
    ``"option --width"``) naming the value and the bound.

    A float is no size (``1e20`` in a config reads as a float): it is refused, as a boolean is.

    >>> check_size("folds", 2**63, "key validation.folds")
    Traceback (most recent call last):
    ...
    delaycv.common.errors.ConfigError: key validation.folds: folds 9223372036854775808 is too large (expected at most 10,000: each fold is a learner and its state held in memory)
    >>> check_size("every", 1e30, "key checkpoints.every")
    Traceback (most recent call last):
    ...
    delaycv.common.errors.ConfigError: key checkpoints.every: every 1e+30 is not an integer (expected an integer from 1 to 9,007,199,254,740,992 (2**53, the largest integer a float64 holds exactly))
    """
    bound = BOUNDS[name]
    if not is_integer(value):
        raise ConfigError(
            f"{name} {value!r} is not an integer", location=location, expected=expected(name)
        )
    if value > bound.maximum:
        raise ConfigError(
            f"{name} {value!r} is too large",
            location=location,
            expected=f"at most {bound.maximum:,}: {bound.why}",
        )
    if value < bound.minimum:
        raise ConfigError(
            f"{name} {value!r} is too small", location=location, expected=expected(name)
        )
    return int(value)
