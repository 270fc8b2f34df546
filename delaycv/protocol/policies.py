"""Label policies: when, and with which value, the label of an instance is observed (docs/engine.md, "Policies").

A policy maps instance i -- arrival time ``t_i``, position ``i`` (1-based), true label ``y_i``,
external reveal time ``L_i`` (NaN if never) -- and the fold's prediction ``p`` to an observed label
``o`` and a *due key* ``(a, q)``:

- ``W`` is the window of the predicted side (``pos_window`` if ``p == 1`` else ``neg_window``) and
  ``E`` what its expiry reveals (``pos_expiry`` / ``neg_expiry``: ``"truth"`` or ``"negative"``).
- The *expiry key* of a time window of ``d`` seconds is ``(t_i + d, 0)``; of a count window of
  ``c`` instances it is ``(t_{i+c}, i + c)`` -- due when instance ``i + c`` arrives -- and
  ``(+inf, 0)`` (never due) when ``i + c`` is past the end of the stream.
- With ``feedback`` on and ``L_i`` known and ``(L_i, 0) <= expiry key`` (for time windows:
  ``L_i <= t_i + d``): ``o = 1``, due key ``(max(L_i, t_i), 0)``.
- Otherwise, at the expiry key: ``o = y_i`` if ``E == "truth"`` (flipped with probability
  ``inspection_error`` by the fold's seeded inspection stream), ``o = 0`` if ``E == "negative"``.

The engine releases a pending label before predicting instance ``m`` iff
``(t_m, m) >= (a, q)``; a label whose key is ``<= (t_i, i)`` is released right after its own
prediction (zero delay, so ``ideal`` is test-then-train).

The presets (the table of docs/engine.md, "Policies") are declared once, in :data:`PRESETS`; building a preset's
policy (:func:`make_policy`), its name, the reading of a name (:func:`parse_policy_name`), the
workflow schema's and ``delaycv evaluate --policy``'s lists of presets, the keys of a policy grid
and the windows at which a figure places a policy (:func:`delaycv.protocol.policy_windows.window_table`) all derive
from its entry. A new preset is one entry:

>>> for p in PRESETS.values():
...     fixed = ", ".join(f"{k} {v}" for k, v in p.fixes.items()) or "nothing fixed"
...     print(f"{p.name:13}{p.hint:17} {fixed}")
ideal        ideal             pos_expiry truth, neg_expiry truth, feedback False
delay        delay_<D>         pos_expiry truth, neg_expiry truth, feedback False
verification verification_<W>  pos_expiry negative, neg_expiry negative, feedback True
hitl         hitl_<P>_<N>      pos_expiry truth, neg_expiry negative, feedback True
general      general_pos<P>-<pos_expiry>_neg<N>-<neg_expiry><feedback> nothing fixed

The module is pure: it opens no file.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from delaycv.common import defaults
from delaycv.common.checks import is_number
from delaycv.common.errors import ConfigError
from delaycv.protocol.durations import Window, WindowError, parse_window

if TYPE_CHECKING:
    import numpy as np

EXPIRIES = ("truth", "negative")
#: Keys a policy spec may hold.
SPEC_KEYS = (
    "preset",
    "name",
    "window",
    "pos_window",
    "neg_window",
    "pos_expiry",
    "neg_expiry",
    "feedback",
    "inspection_error",
)
#: The window keys of a spec and the sides each sets: ``window`` both at once.
WINDOW_SIDES = {
    "window": ("pos_window", "neg_window"),
    "pos_window": ("pos_window",),
    "neg_window": ("neg_window",),
}
#: What a preset may fix besides its windows (a key it does not fix is a key of its specs, whose
#: default is the :class:`Policy` field's).
SETTINGS = ("pos_expiry", "neg_expiry", "feedback")
#: The preset of the general form: of a spec that gives windows but no preset, of
#: :meth:`Policy.spec`, and of a :class:`Policy` built directly.
GENERAL = "general"
_ZERO = Window(0, "s")


@dataclass(frozen=True)
class WindowParameter:
    """A window that a preset takes: its spec ``key`` (:data:`WINDOW_SIDES`), the ``letter`` that
    stands for it in descriptions (``hitl P = 7d, N = 90d``), in hints of names (``hitl_<P>_<N>``)
    and on a figure's window axis, and what that ``axis`` shows."""

    key: str
    letter: str
    axis: str


@dataclass(frozen=True)
class PolicyPreset:
    """A preset of label policies: one entry of :data:`PRESETS`, everything delaycv knows of it.

    - ``name``: a spec's ``preset`` (and the workflow schema's, ``delaycv evaluate --policy``);
    - ``pattern``: the name of its policies, a format string over ``{window}``, ``{pos_window}``,
      ``{neg_window}`` (the windows, as ``7d``), ``{pos_expiry}``, ``{neg_expiry}`` and
      ``{feedback}`` (``_feedback`` when on, else empty); a non-zero inspection error adds
      ``_err<rate>``;
    - ``windows``: the windows it takes, each required (no default window, see
      :mod:`delaycv.common.defaults`), in the order of its pattern; a policy grid of the preset takes a
      list of each, and a figure places its policies on their axes;
    - ``optional_windows``: windows it takes with a default of 0 s; when they are both sides',
      ``window`` gives both at once;
    - ``fixes``: the values it fixes of :data:`SETTINGS`; its specs give the others;
    - ``named``: its names read back as its policies (:func:`parse_policy_name`; its pattern then
      holds its windows' keys only), a name in its pattern given to another policy is refused
      (:func:`check_policy_name`), and a policy in the general form that behaves as one of its
      policies is placed as one (:func:`preset_of`).

    >>> hitl = PRESETS["hitl"]
    >>> hitl.hint, hitl.example, hitl.keys
    ('hitl_<P>_<N>', 'hitl_7d_90d', ('pos_window', 'neg_window'))
    >>> hitl.parse("hitl_7d_90d")
    {'pos_window': '7d', 'neg_window': '90d'}
    """

    name: str
    pattern: str
    windows: tuple[WindowParameter, ...] = ()
    optional_windows: tuple[WindowParameter, ...] = ()
    fixes: Mapping[str, Any] = field(default_factory=dict)
    named: bool = True

    @property
    def keys(self) -> tuple[str, ...]:
        """The spec keys it takes besides ``preset``, ``name`` and ``inspection_error``."""
        windows = [w.key for w in (*self.windows, *self.optional_windows)]
        shorthand = ["window"] if self._shorthand else []
        return (*windows, *shorthand, *(k for k in SETTINGS if k not in self.fixes))

    @property
    def _shorthand(self) -> bool:
        """``window`` may give both optional windows at once."""
        sides = [s for w in self.optional_windows for s in WINDOW_SIDES[w.key]]
        return sorted(sides) == sorted(WINDOW_SIDES["window"])

    @property
    def hint(self) -> str:
        """Its pattern with its windows' letters (the other fields named): ``hitl_<P>_<N>``."""
        return _fill(self.pattern, {w.key: f"<{w.letter}>" for w in self._all_windows})

    @property
    def example(self) -> str:
        """A name in its pattern: ``hitl_7d_90d``."""
        return _fill(
            self.pattern, dict(zip((w.key for w in self.windows), _EXAMPLES, strict=False))
        )

    @property
    def _all_windows(self) -> tuple[WindowParameter, ...]:
        return (*self.windows, *self.optional_windows)

    def windows_of(self, pos: Window, neg: Window) -> dict[str, Window]:
        """The values of its (required) windows in a policy whose windows are ``pos``, ``neg``."""
        sides = {"pos_window": pos, "neg_window": neg}
        return {w.key: sides[WINDOW_SIDES[w.key][0]] for w in self.windows}

    def name_of(self, policy: Policy) -> str:
        """The name of ``policy`` in its pattern (``hitl_7d_90d``, ``delay_7d_err0.05``)."""
        rate = policy.inspection_error
        return self.pattern.format(
            window=str(policy.pos_window),
            pos_window=str(policy.pos_window),
            neg_window=str(policy.neg_window),
            pos_expiry=policy.pos_expiry,
            neg_expiry=policy.neg_expiry,
            feedback="_feedback" if policy.feedback else "",
        ) + (f"_err{rate:g}" if rate else "")

    def parse(self, name: str) -> dict[str, str] | None:
        """The windows that a name in its pattern gives (without ``_err<rate>``), else None."""
        match = _pattern_regex(self.pattern).fullmatch(name) if self.named else None
        return None if match is None else match.groupdict()

    def describe(self, policy: Policy) -> str:
        """What ``policy`` is in its words: ``hitl P = 7d, N = 90d``, ``ideal``, the general form
        with its expiries and feedback (without the inspection error)."""
        parts = []
        for w in self._all_windows:
            side = WINDOW_SIDES[w.key][0]
            text = f"{w.letter} = {getattr(policy, side)}"
            expiry = _EXPIRY_OF[side]
            if len(WINDOW_SIDES[w.key]) == 1 and expiry not in self.fixes:  # (of that side only)
                text += f" ({getattr(policy, expiry)})"
            parts.append(text)
        if "feedback" not in self.fixes and policy.feedback:
            parts.append("feedback")
        return " ".join([self.name, ", ".join(parts)]) if parts else self.name

    def build(self, spec: Mapping[str, Any], rate: float, where: str) -> Policy:
        """Its policy of ``spec`` (whose common keys :func:`make_policy` has checked)."""
        keys = self.keys
        extra = sorted(set(spec) - {"preset", "name", "inspection_error", *keys})
        if extra:
            raise ConfigError(
                f"key {extra[0]!r} does not apply to the {self.name} preset",
                location=f"key {where}.{extra[0]}",
                expected=", ".join(keys) if keys else "no window keys",
            )
        required = [w.key for w in self.windows]
        given = {k: _window(spec, k, where) for k in required if k in spec}
        missing = [k for k in required if k not in given]
        if missing:
            raise ConfigError(
                f"the {self.name} preset has no default window: "
                f"{' and '.join(required)} must be given",
                location=f"key {where}.{missing[0]}",
                expected="a window such as 7d, 90d, 3600s or 500i",
            )
        optional = [w.key for w in self.optional_windows]
        if self._shorthand and "window" in spec and set(spec) & set(optional):
            raise ConfigError(
                f"give either window or {'/'.join(optional)}",
                location=f"key {where}.window",
                expected="one of the two forms",
            )
        optional = ["window", *optional] if self._shorthand else optional
        given.update({k: _window(spec, k, where) for k in optional if k in spec})
        sides = {"pos_window": _ZERO, "neg_window": _ZERO}
        for key, window in given.items():
            sides.update(dict.fromkeys(WINDOW_SIDES[key], window))
        settings = {}
        for key in SETTINGS:  # a setting not given is the Policy field's default
            settings[key] = (
                self.fixes[key] if key in self.fixes else spec.get(key, getattr(Policy, key))
            )
        for key in ("pos_expiry", "neg_expiry"):
            if settings[key] not in EXPIRIES:
                raise ConfigError(
                    f"{key} {settings[key]!r} is not known",
                    location=f"key {where}.{key}",
                    expected="truth or negative",
                )
        if not isinstance(settings["feedback"], bool):
            raise ConfigError(
                f"feedback {settings['feedback']!r} is not a boolean",
                location=f"key {where}.feedback",
                expected="true or false",
            )
        return Policy(**sides, **settings, inspection_error=rate, preset=self.name)


_DELAY = WindowParameter("window", "D", "label delay")
_VERIFICATION = WindowParameter("window", "W", "verification window")
_POS = WindowParameter("pos_window", "P", "window for predicted positives")
_NEG = WindowParameter("neg_window", "N", "window for predicted negatives")
_TRUTH = {"pos_expiry": "truth", "neg_expiry": "truth", "feedback": False}
#: The presets, by name, in reading order (tables and figures list policies in this order).
PRESETS: dict[str, PolicyPreset] = {
    p.name: p
    for p in (
        PolicyPreset("ideal", "ideal", fixes=_TRUTH),
        PolicyPreset("delay", "delay_{window}", (_DELAY,), fixes=_TRUTH),
        PolicyPreset(
            "verification",
            "verification_{window}",
            (_VERIFICATION,),
            fixes={"pos_expiry": "negative", "neg_expiry": "negative", "feedback": True},
        ),
        PolicyPreset(
            "hitl",
            "hitl_{pos_window}_{neg_window}",
            (_POS, _NEG),
            fixes={"pos_expiry": "truth", "neg_expiry": "negative", "feedback": True},
        ),
        PolicyPreset(
            GENERAL,
            "general_pos{pos_window}-{pos_expiry}_neg{neg_window}-{neg_expiry}{feedback}",
            optional_windows=(_POS, _NEG),
            named=False,
        ),
    )
}
#: Windows that examples of names take, in order.
_EXAMPLES = ("7d", "90d", "30d")
_EXPIRY_OF = {"pos_window": "pos_expiry", "neg_window": "neg_expiry"}


def _fill(pattern: str, values: Mapping[str, str]) -> str:
    """``pattern`` with ``values``; a field without a value shows its name: ``<pos_expiry>``."""
    fields = [f for _, f, _, _ in string.Formatter().parse(pattern) if f is not None]
    return pattern.format(**{f: f"<{f}>" for f in fields} | dict(values))


@functools.lru_cache(maxsize=64)
def _pattern_regex(pattern: str) -> re.Pattern:
    """A regular expression of the names in ``pattern``: each field a part without ``_``."""
    parts = []
    for literal, field_name, _, _ in string.Formatter().parse(pattern):
        parts.append(re.escape(literal))
        if field_name is not None:
            parts.append(f"(?P<{field_name}>[^_]*)")
    return re.compile("".join(parts))


def lookup_preset(name: str, *, location: str = "key policy.preset") -> PolicyPreset:
    """The entry of :data:`PRESETS` named ``name``; a ConfigError at ``location`` for another."""
    if not isinstance(name, str) or name not in PRESETS:
        raise ConfigError(
            f"unknown policy preset {name!r}", location=location, expected=", ".join(PRESETS)
        )
    return PRESETS[name]


@dataclass(frozen=True)
class Side:
    """What happens to an instance predicted on one side (positive or negative).

    Arrays are indexed by the 0-based instance index (instance n is row n - 1):

    - ``due_time`` (float64): ``a`` of the due key; ``+inf`` = never due;
    - ``due_pos`` (int64): ``q`` of the due key (0 for time keys);
    - ``observed`` (int8): the observed label ``o`` before inspection errors;
    - ``feedback`` (bool): the label is revealed by the external event (``o = 1``);
    - ``inspect`` (bool): the label comes from a ``truth`` expiry (subject to inspection error).
    """

    due_time: np.ndarray
    due_pos: np.ndarray
    observed: np.ndarray
    feedback: np.ndarray
    inspect: np.ndarray


@dataclass(frozen=True)
class Schedule:
    """The outcome of a policy on a stream for both possible predictions: ``sides[p]``, p in {0, 1}."""

    neg: Side
    pos: Side

    def side(self, pred: int) -> Side:
        return self.pos if pred == 1 else self.neg


@dataclass(frozen=True)
class Policy:
    """A label policy in its general form (see the module docstring for the semantics). Without a
    ``name``, it is the one its ``preset``'s pattern gives (:meth:`PolicyPreset.name_of`)."""

    pos_window: Window = field(default_factory=lambda: Window(0, "s"))
    neg_window: Window = field(default_factory=lambda: Window(0, "s"))
    pos_expiry: str = "truth"
    neg_expiry: str = "truth"
    feedback: bool = False
    inspection_error: float = 0.0
    name: str = ""
    preset: str = GENERAL

    def __post_init__(self) -> None:
        if not self.name:
            named = lookup_preset(self.preset, location="key preset").name_of(self)
            object.__setattr__(self, "name", named)

    @property
    def ones_need_fixes(self) -> bool:
        """Whether a label 1 comes only from a fix seen (``label_time``): both windows end in
        the clean assumption (``verification``), so on a stream without fix times every label
        it releases is 0."""
        return self.pos_expiry == "negative" and self.neg_expiry == "negative"

    def behaves_as(self, other: Policy) -> bool:
        """The same windows, expiries, feedback and inspection error as ``other`` (whatever the
        names and presets)."""
        return dataclasses.replace(self, name=other.name, preset=other.preset) == other

    def spec(self) -> dict[str, Any]:
        """A plain-dict spec that :func:`make_policy` turns back into this policy."""
        return {
            "preset": GENERAL,
            "name": self.name,
            "pos_window": str(self.pos_window),
            "neg_window": str(self.neg_window),
            "pos_expiry": self.pos_expiry,
            "neg_expiry": self.neg_expiry,
            "feedback": self.feedback,
            "inspection_error": self.inspection_error,
        }

    def outcome(
        self, pred: int, n: int, time: np.ndarray, label: np.ndarray, label_time: np.ndarray
    ) -> tuple[int, float, int, bool, bool]:
        """``(o, a, q, by_feedback, inspectable)`` for instance ``n`` (1-based) predicted ``pred``.

        A plain scalar version of :meth:`schedule` (used for documentation and tests).
        """
        window = self.pos_window if pred == 1 else self.neg_window
        expiry = self.pos_expiry if pred == 1 else self.neg_expiry
        t = int(time[n - 1])
        if window.is_count:
            end = n + window.amount
            exp_key = (int(time[end - 1]), end) if end <= len(time) else (math.inf, 0)
        else:
            exp_key = (t + window.amount, 0)
        lt = float(label_time[n - 1])
        if self.feedback and not math.isnan(lt) and (lt, 0) <= exp_key:
            return 1, max(lt, float(t)), 0, True, False
        if expiry == "truth":
            return int(label[n - 1]), float(exp_key[0]), exp_key[1], False, True
        return 0, float(exp_key[0]), exp_key[1], False, False

    def schedule(self, time: np.ndarray, label: np.ndarray, label_time: np.ndarray) -> Schedule:
        """Vectorised :meth:`outcome` for every instance and both predictions."""
        import numpy as np  # (here: the presets are read by commands that need no numpy)

        time = np.asarray(time, dtype=np.int64)
        label = np.asarray(label, dtype=np.int8)
        label_time = np.asarray(label_time, dtype=np.float64)
        n = time.shape[0]
        pos = np.arange(1, n + 1, dtype=np.int64)
        sides = []
        for window, expiry in (
            (self.neg_window, self.neg_expiry),
            (self.pos_window, self.pos_expiry),
        ):
            if window.is_count:
                end = pos + window.amount
                inside = end <= n
                exp_t = np.full(n, np.inf)
                exp_t[inside] = time[end[inside] - 1].astype(np.float64)
                exp_q = np.where(inside, end, 0).astype(np.int64)
            else:
                exp_t = time.astype(np.float64) + float(window.amount)
                exp_q = np.zeros(n, dtype=np.int64)
            if self.feedback:
                known = ~np.isnan(label_time)
                lt = np.where(known, label_time, np.inf)
                # (L, 0) <= (exp_t, exp_q): L < exp_t, or L == exp_t (exp_q >= 0 always)
                fb = known & (lt <= exp_t)
            else:
                fb = np.zeros(n, dtype=bool)
            if expiry == "truth":
                obs = label.copy()
                inspect = ~fb
            else:
                obs = np.zeros(n, dtype=np.int8)
                inspect = np.zeros(n, dtype=bool)
            obs[fb] = 1
            due_t = np.where(fb, np.maximum(np.where(fb, label_time, 0.0), time), exp_t)
            due_q = np.where(fb, 0, exp_q).astype(np.int64)
            sides.append(Side(due_t, due_q, obs.astype(np.int8), fb, inspect))
        return Schedule(neg=sides[0], pos=sides[1])


def _window(spec: dict, key: str, where: str) -> Window:
    try:
        return parse_window(spec[key])
    except WindowError as err:
        # what the parser expected is said once, as this error's expected part
        raise ConfigError(
            err.message,
            location=f"key {where}.{key}",
            expected=err.expected or "a window such as 7d, 12h, 3600s or 500i",
        ) from None


def _named_presets() -> list[PolicyPreset]:
    return [p for p in PRESETS.values() if p.named]


def _name_example() -> str:
    """A preset name to show: of the named preset with the most windows (``hitl_7d_90d``)."""
    return max(_named_presets(), key=lambda p: len(p.windows)).example


def parse_policy_name(name: str) -> dict[str, Any]:
    """The spec of a preset policy name, one in the ``pattern`` of a named preset of
    :data:`PRESETS`: ``ideal``, ``delay_7d``, ``verification_90d``, ``hitl_7d_90d`` (optionally
    ending in ``_err0.05`` for an inspection error rate).

    >>> parse_policy_name("hitl_7d_90d")
    {'preset': 'hitl', 'pos_window': '7d', 'neg_window': '90d'}
    >>> parse_policy_name("delay_500i_err0.05")
    {'preset': 'delay', 'inspection_error': 0.05, 'window': '500i'}
    """
    parts = str(name).split("_")
    spec: dict[str, Any] = {}
    if parts[-1].startswith("err"):
        try:
            spec["inspection_error"] = float(parts[-1][3:])
        except ValueError:
            raise ConfigError(
                f"policy name {name!r}: bad inspection error {parts[-1]!r}",
                location="key policy",
                expected=f"e.g. {_name_example()}_err0.05",
            ) from None
        parts = parts[:-1]
    for preset in _named_presets():
        windows = preset.parse("_".join(parts))
        if windows is not None:
            return {"preset": preset.name, **spec, **windows}
    hints = [p.hint for p in _named_presets()]
    raise ConfigError(
        f"unknown policy name {name!r}",
        location="key policy",
        expected=f"{', '.join(hints[:-1])} or {hints[-1]}, e.g. {_name_example()}",
    )


def make_policy(spec: dict[str, Any] | str | Policy, *, where: str = "policy") -> Policy:
    """Build a :class:`Policy` from a spec dict, a preset policy name or a policy.

    Parameters
    ----------
    spec : dict, str or Policy
        A spec dict with the keys ``preset`` (a name of :data:`PRESETS`: ``ideal``, ``delay``,
        ``verification``, ``hitl``, ``general``; default ``general`` when windows are given, else
        :data:`delaycv.common.defaults.POLICY`), the preset's windows (``window`` for delay and
        verification, ``pos_window`` and ``neg_window`` for hitl: each required; general:
        ``window`` or ``pos_window``/``neg_window``, default 0 s), what the preset does not fix
        (general: ``pos_expiry``/``neg_expiry``, ``truth`` or ``negative``, default ``truth``;
        ``feedback``, default false), ``inspection_error`` in [0, 1] (any preset, default 0) and
        ``name`` (default: the preset's pattern; a name that reads as a preset name must say this
        policy, :func:`check_policy_name`). A string is a preset policy name
        (:func:`parse_policy_name`); a :class:`Policy` is returned as it is.
    where : str
        The key of the spec in its file, named by errors (``key <where>.<key>``).

    Returns
    -------
    Policy
        The policy in its general form, with its ``preset`` and ``name``.

    Raises
    ------
    ConfigError
        A key that is unknown or does not apply to the preset, a missing window, a value of the
        wrong kind; the error names the key and what was expected.

    Examples
    --------
    >>> policy = make_policy({"preset": "hitl", "pos_window": "7d", "neg_window": "90d"})
    >>> policy.name, policy.pos_expiry, policy.neg_expiry, policy.feedback
    ('hitl_7d_90d', 'truth', 'negative', True)
    >>> make_policy("hitl_7d_90d") == policy
    True
    >>> make_policy({"preset": "delay", "window": "500i", "inspection_error": 0.05}).name
    'delay_500i_err0.05'
    >>> make_policy({"window": "90d", "pos_expiry": "negative", "neg_expiry": "negative"}).name
    'general_pos90d-negative_neg90d-negative'
    >>> make_policy({"preset": "delay"})
    Traceback (most recent call last):
    ...
    delaycv.common.errors.ConfigError: key policy.window: the delay preset has no default window: \
window must be given (expected a window such as 7d, 90d, 3600s or 500i)
    """
    if isinstance(spec, Policy):
        return spec
    if isinstance(spec, str):
        spec = parse_policy_name(spec)
    if not isinstance(spec, dict):
        raise ConfigError(
            f"policy spec is {type(spec).__name__}", location=f"key {where}", expected="a mapping"
        )
    unknown = sorted(set(spec) - set(SPEC_KEYS))
    if unknown:
        raise ConfigError(
            f"unknown policy key(s) {', '.join(unknown)}",
            location=f"key {where}.{unknown[0]}",
            expected=", ".join(SPEC_KEYS),
        )
    has_windows = any(k in spec for k in WINDOW_SIDES)
    name = spec.get("preset") or (GENERAL if has_windows else defaults.POLICY)
    preset = lookup_preset(name, location=f"key {where}.preset")
    rate = spec.get("inspection_error", 0.0)
    if not is_number(rate) or not 0.0 <= rate <= 1.0:
        raise ConfigError(
            f"inspection_error {rate!r} is not a probability",
            location=f"key {where}.inspection_error",
            expected="a number in [0, 1]",
        )
    policy = preset.build(spec, float(rate), where)
    name = spec.get("name")
    if name is not None:
        if not isinstance(name, str) or not name:
            raise ConfigError(
                f"policy name {name!r}", location=f"key {where}.name", expected="a non-empty string"
            )
        check_policy_name(name, policy, location=f"key {where}.name")
        policy = dataclasses.replace(policy, name=name)
    return policy


def describe(policy: Policy) -> str:
    """What a policy does, in its preset's words (:meth:`PolicyPreset.describe`).

    >>> describe(make_policy("hitl_7d_90d_err0.05"))
    'hitl P = 7d, N = 90d, inspection error 0.05'
    >>> describe(make_policy({"pos_window": "1d", "neg_expiry": "negative", "feedback": True}))
    'general P = 1d (truth), N = 0s (negative), feedback'
    """
    text = lookup_preset(policy.preset, location="key preset").describe(policy)
    return text + (
        f", inspection error {policy.inspection_error:g}" if policy.inspection_error else ""
    )


def preset_of(policy: Policy) -> PolicyPreset | None:
    """The named preset that describes ``policy``: its own, or for a policy of an unnamed preset
    (the general form, as ``run.json`` records specs) the first named preset of :data:`PRESETS`
    with a policy that behaves exactly as it; None if none does.

    >>> preset_of(make_policy({"window": "7d"})).name
    'delay'
    >>> preset_of(make_policy({"pos_window": "7d", "neg_expiry": "negative"})) is None
    True
    """
    own = lookup_preset(policy.preset, location="key preset")
    if own.named:
        return own
    for candidate in _named_presets():
        windows = candidate.windows_of(policy.pos_window, policy.neg_window)
        spec = {k: str(w) for k, w in windows.items()}
        spec.update(preset=candidate.name, inspection_error=policy.inspection_error)
        if make_policy(spec).behaves_as(policy):
            return candidate
    return None


def check_policy_name(name: str, policy: Policy, *, location: str) -> None:
    """Refuse a ``name`` that reads as a preset policy name (:func:`parse_policy_name`:
    ``hitl_7d_90d``, ``verification_90d``, ``delay_3d``, ``ideal``) but names another policy than
    ``policy`` (other windows, another preset, another inspection error): results and figures
    would be labelled with the wrong windows. Any other name is only a label. ``policy`` is the
    policy built without the name (its ``name`` is the one its spec gives, suggested instead)."""
    try:
        named = make_policy(parse_policy_name(name))
    except ConfigError:
        return  # not a preset name
    if not named.behaves_as(policy):
        hints = ", ".join(p.hint for p in _named_presets())
        raise ConfigError(
            f"the policy named {name} is {describe(policy)}, but its name says {describe(named)}",
            location=location,
            expected=f"a name that says what the policy is, such as {policy.name}, or a name "
            f"that is not a preset name: {hints}",
        )
