"""The four estimators under which every metric is computed (design card §6).

An estimator says which evaluations a metric is computed from and with which weights:

* ``Cumulative()``: every evaluation so far, each with its weight ``w``.
* ``Sliding(width)``: the last ``width`` evaluations (every call of ``Metrics.add`` counts, also
  abstentions and zero-weight evaluations), each with its weight.
* ``Fading(alpha)``: MOA's fading factor. Each elementary estimator ``(s, b)`` of a metric is
  updated *only on its own events* (e.g. ``precision_1`` only on evaluations predicted 1):
  ``s <- alpha * s + w * x``, ``b <- alpha * b + w``, value ``s / b``.
* ``Tumbling(size)``: consecutive, disjoint chunks of ``size`` evaluations; the value is that of the
  last completed chunk (stream-learn's test-then-train scores, one value per chunk).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Cumulative:
    """All evaluations so far, weighted by their weight."""

    kind = "cumulative"

    def describe(self) -> dict:
        return {"kind": self.kind}


@dataclass(frozen=True)
class Sliding:
    """The last ``width`` evaluations (a sliding window over evaluations, width >= 1)."""

    width: int
    kind = "window"

    def __post_init__(self) -> None:
        if isinstance(self.width, bool) or not isinstance(self.width, int) or self.width < 1:
            raise ValueError(f"Sliding width must be an integer >= 1, got {self.width!r}")

    def describe(self) -> dict:
        return {"kind": self.kind, "width": self.width}


@dataclass(frozen=True)
class Fading:
    """MOA's fading factor ``alpha`` in (0, 1]; ``alpha = 1`` equals ``Cumulative``."""

    alpha: float
    kind = "fading"

    def __post_init__(self) -> None:
        a = self.alpha
        if isinstance(a, bool) or not isinstance(a, int | float) or not (0.0 < a <= 1.0):
            raise ValueError(f"Fading alpha must be a number in (0, 1], got {a!r}")
        if math.isnan(a):
            raise ValueError("Fading alpha must not be NaN")

    def describe(self) -> dict:
        return {"kind": self.kind, "alpha": float(self.alpha)}


@dataclass(frozen=True)
class Tumbling:
    """Disjoint chunks of ``size`` evaluations (size >= 1); one value per completed chunk."""

    size: int
    kind = "tumbling"

    def __post_init__(self) -> None:
        if isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 1:
            raise ValueError(f"Tumbling size must be an integer >= 1, got {self.size!r}")

    def describe(self) -> dict:
        return {"kind": self.kind, "size": self.size}


Estimator = Cumulative | Sliding | Fading | Tumbling


def make_estimator(spec: dict | Estimator) -> Estimator:
    """Build an estimator from a config mapping such as ``{"kind": "fading", "alpha": 0.99}``.

    Kinds: ``cumulative``; ``window`` (or ``sliding``) with ``width``; ``fading`` with ``alpha``;
    ``tumbling`` with ``size``. An estimator object is returned unchanged.
    """
    if isinstance(spec, Cumulative | Sliding | Fading | Tumbling):
        return spec
    if not isinstance(spec, dict) or "kind" not in spec:
        raise ValueError(f"estimator spec must be a mapping with 'kind', got {spec!r}")
    kind = spec["kind"]
    rest = {k: v for k, v in spec.items() if k != "kind"}
    try:
        if kind == "cumulative" and not rest:
            return Cumulative()
        if kind in ("window", "sliding") and set(rest) == {"width"}:
            return Sliding(rest["width"])
        if kind == "fading" and set(rest) == {"alpha"}:
            return Fading(rest["alpha"])
        if kind == "tumbling" and set(rest) == {"size"}:
            return Tumbling(rest["size"])
    except ValueError:
        raise
    raise ValueError(
        f"unknown estimator spec {spec!r} (expected kind cumulative, window+width, "
        "fading+alpha or tumbling+size)"
    )
