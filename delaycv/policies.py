"""Label policies: when, and with which value, the label of an instance is observed (design card §3).

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
prediction (zero delay, so ``ideal`` is test-then-train). Presets (design card §3 table):

=================  =========================================  =====================
preset             parameters                                 name
=================  =========================================  =====================
``ideal``          both windows 0, expiry truth               ``ideal``
``delay``          ``window`` d: both d, truth, no feedback   ``delay_7d``
``verification``   ``window`` W: both W, negative, feedback   ``verification_90d``
``hitl``           P/truth, N/negative, feedback              ``hitl_7d_90d``
=================  =========================================  =====================

The module is pure: it opens no file.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from delaycv.durations import Window, parse_window
from delaycv.errors import ConfigError, DelaycvError

PRESETS = ("ideal", "delay", "verification", "hitl", "general")
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
#: The windows each preset needs; none has a default (see :mod:`delaycv.defaults`).
PRESET_WINDOWS = {
    "ideal": (),
    "delay": ("window",),
    "verification": ("window",),
    "hitl": ("pos_window", "neg_window"),
}


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
    """A label policy in its general form (see the module docstring for the semantics)."""

    pos_window: Window = field(default_factory=lambda: Window(0, "s"))
    neg_window: Window = field(default_factory=lambda: Window(0, "s"))
    pos_expiry: str = "truth"
    neg_expiry: str = "truth"
    feedback: bool = False
    inspection_error: float = 0.0
    name: str = "ideal"
    preset: str = "general"

    def spec(self) -> dict[str, Any]:
        """A plain-dict spec that :func:`make_policy` turns back into this policy."""
        return {
            "preset": "general",
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
    except DelaycvError as err:
        raise ConfigError(
            str(err),
            location=f"key {where}.{key}",
            expected="a window such as 7d, 12h, 3600s or 500i",
        ) from None


def _name_part(w: Window) -> str:
    return str(w)


def _error_suffix(rate: float) -> str:
    return f"_err{rate:g}" if rate else ""


def parse_policy_name(name: str) -> dict[str, Any]:
    """The spec of a preset policy name: ``ideal``, ``delay_7d``, ``verification_90d``,
    ``hitl_7d_90d`` (optionally ending in ``_err0.05`` for an inspection error rate).

    >>> parse_policy_name("hitl_7d_90d")
    {'preset': 'hitl', 'pos_window': '7d', 'neg_window': '90d'}
    """
    parts = str(name).split("_")
    spec: dict[str, Any] = {}
    if parts and parts[-1].startswith("err"):
        try:
            spec["inspection_error"] = float(parts[-1][3:])
        except ValueError:
            raise ConfigError(
                f"policy name {name!r}: bad inspection error {parts[-1]!r}",
                location="key policy",
                expected="e.g. hitl_7d_90d_err0.05",
            ) from None
        parts = parts[:-1]
    head, args = parts[0], parts[1:]
    ok = (
        (head == "ideal" and not args)
        or (head in ("delay", "verification") and len(args) == 1)
        or (head == "hitl" and len(args) == 2)
    )
    if not ok:
        raise ConfigError(
            f"unknown policy name {name!r}",
            location="key policy",
            expected="ideal, delay_<d>, verification_<W> or hitl_<P>_<N>, e.g. hitl_7d_90d",
        )
    spec = {"preset": head, **spec}
    if head in ("delay", "verification"):
        spec["window"] = args[0]
    elif head == "hitl":
        spec["pos_window"], spec["neg_window"] = args
    return spec


def make_policy(spec: dict[str, Any] | str | Policy, *, where: str = "policy") -> Policy:
    """Build a :class:`Policy` from a spec dict (or a preset name such as ``"hitl_7d_90d"``).

    Spec keys: ``preset`` (``ideal``, ``delay``, ``verification``, ``hitl``, ``general``; default
    ``general`` when windows are given, else ``ideal``), ``window`` (delay, verification:
    required), ``pos_window``/``neg_window`` (hitl: both required; general: default 0), ``pos_expiry``/``neg_expiry`` (general:
    ``truth`` | ``negative``), ``feedback`` (general), ``inspection_error`` in [0, 1] (any), ``name``.
    Errors name the key (``key <where>.<key>``) and what was expected.
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
    has_windows = any(k in spec for k in ("pos_window", "neg_window", "window"))
    preset = spec.get("preset") or ("general" if has_windows else "ideal")
    if preset not in PRESETS:
        raise ConfigError(
            f"unknown policy preset {preset!r}",
            location=f"key {where}.preset",
            expected=", ".join(PRESETS),
        )
    rate = spec.get("inspection_error", 0.0)
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0.0 <= rate <= 1.0:
        raise ConfigError(
            f"inspection_error {rate!r} is not a probability",
            location=f"key {where}.inspection_error",
            expected="a number in [0, 1]",
        )
    rate = float(rate)

    def allowed(keys: tuple[str, ...]) -> None:
        """Only ``keys`` (and the common ones) may be given."""
        extra = sorted(set(spec) - {"preset", "name", "inspection_error", *keys})
        if extra:
            raise ConfigError(
                f"key {extra[0]!r} does not apply to the {preset} preset",
                location=f"key {where}.{extra[0]}",
                expected=", ".join(keys) if keys else "no window keys",
            )

    def required() -> list[Window]:
        """The preset's windows (:data:`PRESET_WINDOWS`), each required: no default window."""
        keys = PRESET_WINDOWS[preset]
        given = {k: _window(spec, k, where) for k in keys if k in spec}
        missing = [k for k in keys if k not in given]
        if missing:
            raise ConfigError(
                f"the {preset} preset has no default window: {' and '.join(keys)} must be given",
                location=f"key {where}.{missing[0]}",
                expected="a window such as 7d, 90d, 3600s or 500i",
            )
        return [given[k] for k in keys]

    zero = Window(0, "s")
    if preset == "ideal":
        allowed(())
        policy = Policy(zero, zero, "truth", "truth", False, rate, "ideal" + _error_suffix(rate))
    elif preset in ("delay", "verification"):
        allowed(("window",))
        (w,) = required()
        name = f"{preset}_{_name_part(w)}{_error_suffix(rate)}"
        if preset == "delay":
            policy = Policy(w, w, "truth", "truth", False, rate, name)
        else:
            policy = Policy(w, w, "negative", "negative", True, rate, name)
    elif preset == "hitl":
        allowed(("pos_window", "neg_window"))
        p, nw = required()
        name = f"hitl_{_name_part(p)}_{_name_part(nw)}{_error_suffix(rate)}"
        policy = Policy(p, nw, "truth", "negative", True, rate, name)
    else:
        allowed(("pos_window", "neg_window", "pos_expiry", "neg_expiry", "feedback", "window"))
        if "window" in spec and ("pos_window" in spec or "neg_window" in spec):
            raise ConfigError(
                "give either window or pos_window/neg_window",
                location=f"key {where}.window",
                expected="one of the two forms",
            )
        if "window" in spec:
            p = nw = _window(spec, "window", where)
        else:
            p = _window(spec, "pos_window", where) if "pos_window" in spec else zero
            nw = _window(spec, "neg_window", where) if "neg_window" in spec else zero
        expiries = []
        for key in ("pos_expiry", "neg_expiry"):
            value = spec.get(key, "truth")
            if value not in EXPIRIES:
                raise ConfigError(
                    f"{key} {value!r} is not known",
                    location=f"key {where}.{key}",
                    expected="truth or negative",
                )
            expiries.append(value)
        feedback = spec.get("feedback", False)
        if not isinstance(feedback, bool):
            raise ConfigError(
                f"feedback {feedback!r} is not a boolean",
                location=f"key {where}.feedback",
                expected="true or false",
            )
        name = (
            f"general_pos{_name_part(p)}-{expiries[0]}_neg{_name_part(nw)}-{expiries[1]}"
            + ("_feedback" if feedback else "")
            + _error_suffix(rate)
        )
        policy = Policy(p, nw, expiries[0], expiries[1], feedback, rate, name)
    policy = dataclasses.replace(policy, preset=preset)
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
    """What a policy does, in its preset's words: ``hitl P = 7d, N = 90d``, ``delay D = 7d``,
    ``verification W = 90d``, ``ideal``, or the general form with expiries and feedback."""
    p, n = policy.pos_window, policy.neg_window
    if policy.preset == "ideal":
        text = "ideal"
    elif policy.preset == "delay":
        text = f"delay D = {p}"
    elif policy.preset == "verification":
        text = f"verification W = {p}"
    elif policy.preset == "hitl":
        text = f"hitl P = {p}, N = {n}"
    else:
        text = f"general P = {p} ({policy.pos_expiry}), N = {n} ({policy.neg_expiry})" + (
            ", feedback" if policy.feedback else ""
        )
    return text + (
        f", inspection error {policy.inspection_error:g}" if policy.inspection_error else ""
    )


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
    same = dataclasses.replace(named, name="", preset="") == dataclasses.replace(
        policy, name="", preset=""
    )
    if not same:
        raise ConfigError(
            f"the policy named {name} is {describe(policy)}, but its name says {describe(named)}",
            location=location,
            expected=f"a name that says what the policy is, such as {policy.name}, or a name "
            "that is not a preset name: ideal, delay_<D>, verification_<W>, hitl_<P>_<N>",
        )
