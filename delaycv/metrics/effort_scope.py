"""The scope of the effort-aware measures: which evaluations they rank (docs/metrics.md,
"Scope").

The effort-aware measures (:data:`delaycv.metrics.effort_names.EFFORT_METRICS`) read a ranking of
evaluated instances, not a mean: their scope is their own, not the metrics' estimator. By default
it is every evaluation so far (``cumulative``), as the just-in-time defect prediction literature
reads a test set; ``sliding`` reads the last ``width`` evaluations. A run records it in
``run.json`` (``specs.effort_scope``, :meth:`EffortScope.describe`) and in the ``effort_scope``
column of its fold table (:attr:`EffortScope.label`).

Standard library only: the command line checks a scope without importing numpy.

>>> make_effort_scope(None)
EffortScope(kind='cumulative', width=None)
>>> scope = make_effort_scope({"kind": "sliding", "width": 500})
>>> scope.describe(), scope.label, scope.words
({'kind': 'sliding', 'width': 500}, 'sliding(500)', 'the last 500 evaluations')
>>> make_effort_scope("fading")
Traceback (most recent call last):
...
delaycv.common.errors.ConfigError: key effort_scope.kind: unknown effort scope 'fading' (expected cumulative or sliding: the effort-aware measures rank the evaluations, they cannot fade them)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from delaycv.common import defaults as _defaults
from delaycv.common.checks import check_parameter_keys, is_integer, kind_spec
from delaycv.common.choices import EFFORT_SCOPES
from delaycv.common.errors import ConfigError

#: The largest width of a sliding scope (an int64, as the compiled loop counts evaluations).
WIDTH_MAX = 2**63 - 1


@dataclass(frozen=True)
class EffortScope:
    """Which evaluations the effort-aware measures rank: every one so far (``cumulative``) or
    the last ``width`` (``sliding``)."""

    kind: str = _defaults.EFFORT_SCOPE
    width: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in EFFORT_SCOPES:
            raise ValueError(f"effort scope kind must be one of {EFFORT_SCOPES}, got {self.kind!r}")
        if (self.kind == "sliding") != (self.width is not None):
            raise ValueError(f"a {self.kind} effort scope takes {_parameter(self.kind)}")
        if self.width is not None and not (is_integer(self.width) and 1 <= self.width <= WIDTH_MAX):
            raise ValueError(
                f"effort scope width must be an integer in [1, 2**63 - 1], got {self.width!r}"
            )

    def describe(self) -> dict:
        """The scope as a mapping (``run.json``'s ``specs.effort_scope``)."""
        return (
            {"kind": self.kind} if self.width is None else {"kind": self.kind, "width": self.width}
        )

    @property
    def label(self) -> str:
        """The scope in a table cell: ``cumulative`` or ``sliding(W)``."""
        return self.kind if self.width is None else f"{self.kind}({self.width})"

    @property
    def words(self) -> str:
        """The scope in words (the report, ``run.json``'s ``effort.scope``)."""
        if self.width is None:
            return "every evaluation so far"
        return f"the last {self.width} evaluations"

    @property
    def loop_width(self) -> int:
        """The width the loop keeps (0: every evaluation)."""
        return 0 if self.width is None else int(self.width)


def _parameter(kind: str) -> str:
    parameter = _defaults.EFFORT_SCOPE_PARAMS[kind]
    return f"a {parameter[0]}" if parameter else "no parameter"


def make_effort_scope(spec: Any = None) -> EffortScope:
    """An effort scope from a config value: ``None`` (the default, ``cumulative``), a kind's name
    (``"sliding"``: the default width), ``{kind: sliding, width: 500}``, or an
    :class:`EffortScope`. A bad value is a ``ConfigError`` naming the key (``key
    effort_scope.width``; ``option --effort-width`` on the command line)."""
    if isinstance(spec, EffortScope):
        return spec
    kind, spec = kind_spec(
        spec,
        default=_defaults.EFFORT_SCOPE,
        key="effort_scope",
        what="effort scope",
        kinds=" or ".join(EFFORT_SCOPES),
    )
    if kind not in EFFORT_SCOPES:
        raise ConfigError(
            f"unknown effort scope {kind!r}",
            location="key effort_scope.kind",
            expected=f"{' or '.join(EFFORT_SCOPES)}: the effort-aware measures rank the "
            "evaluations, they cannot fade them",
        )
    parameter = _defaults.EFFORT_SCOPE_PARAMS[kind]
    need = parameter[0] if parameter else None
    check_parameter_keys(spec, need, key="effort_scope", what=f"the {kind} effort scope")
    if parameter is None:
        return EffortScope(kind)
    width = spec.get(need, parameter[1])
    if not is_integer(width) or not 1 <= width <= WIDTH_MAX:
        raise ConfigError(
            f"width {width!r}",
            location="key effort_scope.width",
            expected=f"an integer from 1 to 2**63 - 1 = {WIDTH_MAX}",
        )
    return EffortScope(kind, int(width))
