"""The four estimators under which every metric is computed (docs/metrics.md, "Estimators").

An estimator says which evaluations a metric is computed from and with which weights:

* ``Cumulative()``: every evaluation so far, each with its weight ``w``.
* ``Sliding(width)``: the last ``width`` evaluations (every call of ``Metrics.add`` counts, also
  abstentions and zero-weight evaluations), each with its weight.
* ``Fading(alpha)``: MOA's fading factor. Each elementary estimator ``(s, b)`` of a metric is
  updated *only on its own events* (e.g. ``precision_1`` only on evaluations predicted 1):
  ``s <- alpha * s + w * x``, ``b <- alpha * b + w``, value ``s / b``.
* ``Tumbling(size)``: consecutive, disjoint chunks of ``size`` evaluations; the value is that of the
  last completed chunk (stream-learn's test-then-train scores, one value per chunk).

An estimator is a frozen spec: ``kind`` and ``describe()`` say what it is (the run's
``specs.estimator``), ``new_state(names)`` starts its sums (``states``: one class per estimator).
``make_estimator`` builds one from a config value. The sliding window's kind is ``sliding``; its
old spelling ``window`` is still read, with a ``DeprecationWarning``
(:data:`delaycv.common.choices.DEPRECATED_ESTIMATORS`).
"""

from __future__ import annotations

import math
import os
import sys
import warnings
from dataclasses import dataclass
from typing import Any

from delaycv.common import defaults as _defaults
from delaycv.common.bounds import check_size
from delaycv.common.checks import check_parameter_keys, is_integer, is_number, kind_spec
from delaycv.common.choices import DEPRECATED_ESTIMATORS
from delaycv.common.errors import ConfigError
from delaycv.metrics.states import CumulativeState, FadingState, SlidingState, TumblingState


@dataclass(frozen=True)
class Cumulative:
    """All evaluations so far, weighted by their weight."""

    kind = "cumulative"

    def describe(self) -> dict:
        """The spec as a mapping.

        >>> Cumulative().describe()
        {'kind': 'cumulative'}
        """
        return {"kind": self.kind}

    def new_state(self, names: tuple[str, ...]) -> CumulativeState:
        return CumulativeState(names)


@dataclass(frozen=True)
class Sliding:
    """The last ``width`` evaluations (a sliding window over evaluations, width >= 1)."""

    width: int
    kind = "sliding"

    def __post_init__(self) -> None:
        if not is_integer(self.width) or self.width < 1:
            raise ValueError(f"Sliding width must be an integer >= 1, got {self.width!r}")
        check_size("width", self.width, "key estimator.width")

    def describe(self) -> dict:
        """The spec as a mapping.

        >>> Sliding(1000).describe()
        {'kind': 'sliding', 'width': 1000}
        """
        return {"kind": self.kind, "width": self.width}

    def new_state(self, names: tuple[str, ...]) -> SlidingState:
        return SlidingState(names, self.width)

    @classmethod
    def from_config(cls, value: Any) -> Sliding:
        """From the config value of ``width`` (``ConfigError`` unless an integer >= 1)."""
        return cls(_config_count("width", value))


@dataclass(frozen=True)
class Fading:
    """MOA's fading factor ``alpha`` in (0, 1]; ``alpha = 1`` equals ``Cumulative``."""

    alpha: float
    kind = "fading"

    def __post_init__(self) -> None:
        a = self.alpha
        if not is_number(a) or not (0.0 < a <= 1.0):
            raise ValueError(f"Fading alpha must be a number in (0, 1], got {a!r}")
        if math.isnan(a):
            raise ValueError("Fading alpha must not be NaN")

    def describe(self) -> dict:
        """The spec as a mapping.

        >>> Fading(0.99).describe()
        {'kind': 'fading', 'alpha': 0.99}
        """
        return {"kind": self.kind, "alpha": float(self.alpha)}

    def new_state(self, names: tuple[str, ...]) -> FadingState:
        return FadingState(names, self.alpha)

    @classmethod
    def from_config(cls, value: Any) -> Fading:
        """From the config value of ``alpha`` (``ConfigError`` unless a number in (0, 1])."""
        if not is_number(value) or not 0 < value <= 1:
            raise ConfigError(
                f"alpha {value!r}", location="key estimator.alpha", expected="a number in (0, 1]"
            )
        return cls(float(value))


@dataclass(frozen=True)
class Tumbling:
    """Disjoint chunks of ``size`` evaluations (size >= 1); one value per completed chunk."""

    size: int
    kind = "tumbling"

    def __post_init__(self) -> None:
        if not is_integer(self.size) or self.size < 1:
            raise ValueError(f"Tumbling size must be an integer >= 1, got {self.size!r}")
        check_size("size", self.size, "key estimator.size")

    def describe(self) -> dict:
        """The spec as a mapping.

        >>> Tumbling(500).describe()
        {'kind': 'tumbling', 'size': 500}
        """
        return {"kind": self.kind, "size": self.size}

    def new_state(self, names: tuple[str, ...]) -> TumblingState:
        return TumblingState(names, self.size)

    @classmethod
    def from_config(cls, value: Any) -> Tumbling:
        """From the config value of ``size`` (``ConfigError`` unless an integer >= 1)."""
        return cls(_config_count("size", value))


Estimator = Cumulative | Sliding | Fading | Tumbling


#: The estimator classes by kind, and the kinds in that order.
CLASSES: dict[str, type] = {cls.kind: cls for cls in (Cumulative, Sliding, Fading, Tumbling)}
ESTIMATORS: tuple[str, ...] = tuple(CLASSES)


def _config_count(name: str, value: Any) -> int:
    """A window width or chunk size from a config value (``ConfigError`` unless an integer >= 1
    within its bound, :data:`delaycv.common.bounds.BOUNDS`)."""
    if not is_integer(value) or value < 1:
        raise ConfigError(
            f"{name} {value!r}", location=f"key estimator.{name}", expected="an integer >= 1"
        )
    return check_size(name, value, f"key estimator.{name}")


def _caller_level() -> int:
    """The ``stacklevel`` of a warning of the function that calls this one that names the first
    caller outside the delaycv package (the user's code, not the library's own call)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(
        package + os.sep
    ):
        frame, level = frame.f_back, level + 1
    return level


def make_estimator(spec: dict | str | Estimator | None = None) -> Estimator:
    """An estimator from a config value: ``{kind: fading, alpha: 0.99}``, ``{kind: sliding,
    width: 100}``, ``{kind: tumbling, size: 100}``, ``{kind: cumulative}`` or just the kind's
    name; an estimator object is returned unchanged. The deprecated kind ``window`` is read as
    ``sliding``, with a ``DeprecationWarning`` naming the new kind.

    What is not given comes from :mod:`delaycv.common.defaults` (``None``: the default estimator, a
    fading factor of ``defaults.ALPHA``; a kind without its parameter: ``ALPHA``, ``WIDTH`` or
    ``SIZE``). A bad value raises ``ConfigError`` naming the key (``key estimator.<key>``).

    >>> make_estimator({"kind": "fading", "alpha": 0.9})
    Fading(alpha=0.9)
    >>> make_estimator("sliding").describe()
    {'kind': 'sliding', 'width': 1000}
    >>> make_estimator(None) == Fading(0.99)
    True
    """
    if isinstance(spec, Cumulative | Sliding | Fading | Tumbling):
        return spec
    kind, spec = kind_spec(
        spec,
        default=_defaults.ESTIMATOR,
        key="estimator",
        what="estimator",
        kinds=", ".join(ESTIMATORS),
    )
    if kind in DEPRECATED_ESTIMATORS:
        warnings.warn(
            f"the estimator kind {kind!r} is deprecated: use {DEPRECATED_ESTIMATORS[kind]!r} "
            "(the same estimator, the same parameter)",
            DeprecationWarning,
            stacklevel=_caller_level(),
        )
        kind = DEPRECATED_ESTIMATORS[kind]
    if kind not in ESTIMATORS:
        raise ConfigError(
            f"unknown estimator {kind!r}",
            location="key estimator.kind",
            expected=", ".join(ESTIMATORS),
        )
    cls = CLASSES[kind]
    parameter = _defaults.ESTIMATOR_PARAMS[kind]  # (name, default) or None
    need = parameter[0] if parameter else None
    check_parameter_keys(spec, need, key="estimator", what=f"the {kind} estimator")
    if parameter is None:
        return cls()
    return cls.from_config(spec.get(need, parameter[1]))
