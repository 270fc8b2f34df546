"""The waiting windows of the label policies and the reading order of policies (pure, opens no
files): a policy's preset and windows (:func:`policy_windows`, :class:`PolicyWindows`), the key
that puts policies in reading order in every table and figure (:func:`policy_sort_key`,
:func:`policy_order`, :func:`policy_ranks`), and the window each policy is placed at on the x axis
of a figure (:func:`window_table`, :func:`axis_names`).

pandas is imported by :func:`window_table` alone, where it is used.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from delaycv.common.errors import DelaycvError
from delaycv.protocol.durations import Window, parse_window

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class PolicyWindows:
    """The waiting windows of a policy: its named ``preset`` (of
    :data:`delaycv.protocol.policies.PRESETS`) and the windows for predicted positives (``pos``) and
    negatives (``neg``); ``ideal`` has both 0 s, ``delay`` and ``verification`` the same window for
    both; ``inspection_error`` the policy's rate (0 for none)."""

    preset: str
    pos: Window
    neg: Window
    inspection_error: float = 0.0


def policy_windows(policy) -> PolicyWindows | None:
    """The windows of ``policy``: a spec (a dict as :func:`delaycv.protocol.policies.make_policy` takes
    it, e.g. the ``specs.policy`` of a run's ``run.json``), a ``Policy``, or a preset name
    (``ideal``, ``delay_<D>``, ``verification_<W>``, ``hitl_<P>_<N>``, read by
    :func:`delaycv.protocol.policies.parse_policy_name`). None for a name that is not a preset name and
    for a policy in the general form that no preset describes. A spec in the general form (as
    ``run.json`` records it) gets the preset that describes it
    (:func:`delaycv.protocol.policies.preset_of`).

    >>> policy_windows("hitl_7d_90d")
    PolicyWindows(preset='hitl', pos=Window(amount=604800, unit='s'), \
neg=Window(amount=7776000, unit='s'), inspection_error=0.0)
    >>> policy_windows({"window": "500i"}).preset, policy_windows("my_policy")
    ('delay', None)
    """
    from delaycv.protocol.policies import Policy, make_policy, parse_policy_name, preset_of

    try:
        if isinstance(policy, str):
            policy = make_policy(parse_policy_name(policy))
        elif not isinstance(policy, Policy):
            policy = make_policy(dict(policy))
    except DelaycvError:
        if isinstance(policy, str):
            return None
        raise
    preset = preset_of(policy)
    if preset is None:
        return None
    return PolicyWindows(preset.name, policy.pos_window, policy.neg_window, policy.inspection_error)


def policies_windows(
    policies: Iterable[str], specs: Mapping[str, object] | None = None
) -> dict[str, PolicyWindows | None]:
    """:func:`policy_windows` of each policy name: from its spec in ``specs`` (the specs the runs
    used; the name is then only a label, and a policy without a spec gets None), or, without
    ``specs``, from the name (a merged table alone: delaycv refuses a preset name that disagrees
    with its spec, :func:`delaycv.protocol.policies.check_policy_name`)."""
    if specs is None:
        return {p: policy_windows(p) for p in policies}
    return {p: policy_windows(specs[p]) if p in specs else None for p in policies}


@functools.lru_cache(maxsize=4096)
def _name_key(name: str) -> tuple:
    """:func:`policy_sort_key` of a name read as a preset name (cached: tables sort by it)."""
    return _windows_key(policy_windows(name), name)


def _windows_key(w: PolicyWindows | None, name: str) -> tuple:
    from delaycv.protocol.policies import PRESETS

    if w is None:
        return (1, 0, 0.0, 0, 0, 0, 0, name)
    presets = list(PRESETS)
    return (
        0,
        presets.index(w.preset),
        w.inspection_error,
        w.pos.unit != "s",
        w.pos.amount,
        w.neg.unit != "s",
        w.neg.amount,
        name,
    )


def policy_sort_key(name: str, specs: Mapping[str, object] | None = None) -> tuple:
    """The key that puts policies in reading order in every table and figure: by preset, in the
    order of :data:`delaycv.protocol.policies.PRESETS` (``ideal``, ``delay``, ``verification``, ``hitl``,
    the general form), then inspection error, then the windows as durations (seconds; counts of
    instances after them): P, then N for hitl. The windows are those of the policy's spec in
    ``specs`` (the specs the runs used), else those its name says
    (:func:`delaycv.protocol.policies.parse_policy_name`); a policy whose windows are unknown comes after
    the others, by name. So ``hitl_1d_90d``, ``hitl_7d_90d``, ``hitl_30d_90d`` (not the text order
    ``hitl_1d``, ``hitl_30d``, ``hitl_7d``).

    >>> sorted(["hitl_30d_15d", "ideal", "hitl_7d_15d", "my_policy", "delay_12h", "hitl_1d_15d"],
    ...        key=policy_sort_key)
    ['ideal', 'delay_12h', 'hitl_1d_15d', 'hitl_7d_15d', 'hitl_30d_15d', 'my_policy']
    """
    name = str(name)
    if specs is not None:
        return _windows_key(policy_windows(specs[name]) if name in specs else None, name)
    return _name_key(name)


def policy_order(
    policies: Iterable[str], policy_specs: Mapping[str, object] | None = None
) -> list[str]:
    """The distinct ``policies`` in reading order (:func:`policy_sort_key`)."""
    return sorted(dict.fromkeys(policies), key=lambda p: policy_sort_key(p, policy_specs))


def policy_ranks(
    policies: Iterable[str], policy_specs: Mapping[str, object] | None = None
) -> dict[str, int]:
    """Policy -> its position in :func:`policy_order` (to sort a table's rows by policy)."""
    return {p: i for i, p in enumerate(policy_order(policies, policy_specs))}


def window_table(
    policies: Iterable[str],
    windows: Mapping[str, str | int | Window] | None = None,
    *,
    specs: Mapping[str, object] | None = None,
) -> pd.DataFrame:
    """For the sensitivity figure: the window length on the x axis of each policy.

    Columns: ``policy``, ``family`` (the line a policy belongs to, e.g. ``"hitl, N = 90d"``),
    ``varies`` (``"P"``, ``"N"``, ``"W"``, ``"D"`` or ``"window"``), ``window`` (seconds, or instances
    when ``unit == "i"``), ``unit``. With ``windows`` (policy -> window, e.g. ``{"fast": "7d"}``) the
    given windows are used as they are (family ``"given"``); otherwise each policy's windows are
    those of its spec in ``specs`` (policy -> spec: the windows the runs used), or, without
    ``specs``, those its name says (:func:`policies_windows`). Of a preset with several windows
    (hitl) the window that takes the most distinct values is the x axis and the others name the
    family; a preset without windows (ideal) gets window 0 in every family of second-based windows
    (:data:`delaycv.protocol.policies.PRESETS` declares each preset's windows and their letters). Policies
    whose windows are unknown are left out.
    """
    import pandas as pd

    policies = list(dict.fromkeys(policies))
    rows: list[tuple[str, str, str, int, str]] = []
    if windows is not None:
        for policy in policies:
            if policy in windows:
                w = parse_window(windows[policy])
                rows.append((policy, "given", "window", w.amount, w.unit))
        return pd.DataFrame(rows, columns=["policy", "family", "varies", "window", "unit"])
    from delaycv.protocol.policies import PRESETS

    parsed = {p: w for p, w in policies_windows(policies, specs).items() if w is not None}
    # per preset and window: its distinct values (of a preset with several windows, the one that
    # takes the most is the x axis; the others name the family)
    distinct: dict[str, dict[str, set[Window]]] = {}
    for w in parsed.values():
        for key, value in PRESETS[w.preset].windows_of(w.pos, w.neg).items():
            distinct.setdefault(w.preset, {}).setdefault(key, set()).add(value)
    diagonal = _diagonal_presets(parsed.values())
    for policy, w in parsed.items():
        preset = PRESETS[w.preset]
        if not preset.windows:  # (ideal) placed below
            continue
        values = preset.windows_of(w.pos, w.neg)
        if w.preset in diagonal:  # every window the same: one axis for all of them
            letters = " = ".join(o.letter for o in preset.windows)
            value = values[preset.windows[0].key]
            family = f"{preset.name}, {letters}" + _error_part(w)
            rows.append((policy, family, letters, value.amount, value.unit))
            continue
        x = max(preset.windows, key=lambda p: len(distinct[w.preset][p.key]))  # first on ties
        fixed = [f"{o.letter} = {values[o.key]}" for o in preset.windows if o is not x]
        family = ", ".join([preset.name, *fixed]) + _error_part(w)
        rows.append((policy, family, x.letter, values[x.key].amount, values[x.key].unit))
    frame = pd.DataFrame(rows, columns=["policy", "family", "varies", "window", "unit"])
    extra = []
    for policy, w in parsed.items():
        if PRESETS[w.preset].windows:
            continue
        for family, group in frame[frame["unit"] == "s"].groupby("family", sort=False):
            if family.endswith(_error_part(w)) and (_error_part(w) or "inspection" not in family):
                extra.append((policy, family, group["varies"].iloc[0], 0, "s"))
    if extra:
        frame = pd.concat([frame, pd.DataFrame(extra, columns=frame.columns)], ignore_index=True)
    return frame


def _diagonal_presets(parsed: Iterable[PolicyWindows]) -> set[str]:
    """The presets of several windows whose policies here all wait as long on every side (the
    HITL study's RQ3: hitl with P = N = W), at two or more lengths: their policies make one line
    over that length, not one family per other window."""
    from delaycv.protocol.policies import PRESETS

    lengths: dict[str, set[Window] | None] = {}
    for w in parsed:
        preset = PRESETS[w.preset]
        if len(preset.windows) < 2 or lengths.get(w.preset, set()) is None:
            continue
        values = set(preset.windows_of(w.pos, w.neg).values())
        lengths[w.preset] = lengths.get(w.preset, set()) | values if len(values) == 1 else None
    return {name for name, seen in lengths.items() if seen is not None and len(seen) >= 2}


def axis_names() -> dict[str, str]:
    """What a window axis shows, by :func:`window_table`'s ``varies``: the letters of the presets'
    windows (:class:`delaycv.protocol.policies.WindowParameter`) and ``window`` (windows given as they are).

    >>> axis_names()["P"], axis_names()["window"]
    ('P, window for predicted positives', 'waiting window')
    """
    from delaycv.protocol.policies import PRESETS

    names = {
        w.letter: f"{w.letter}, {w.axis}"
        for preset in reversed(PRESETS.values())
        for w in (*preset.windows, *preset.optional_windows)
    }
    for preset in PRESETS.values():  # one axis for windows that are all the same (P = N)
        if len(preset.windows) > 1:
            letters = " = ".join(w.letter for w in preset.windows)
            names[letters] = f"{letters}, both windows"
    return {**names, "window": "waiting window"}


def _error_part(w: PolicyWindows) -> str:
    """The part of a family's name that says its inspection error (none without one)."""
    return f", inspection error {w.inspection_error:g}" if w.inspection_error else ""
