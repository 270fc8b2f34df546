"""A policy's windows against the stream's times (pure;
docs/engine.md, "Windows against the stream"): a duration window on a stream whose times are its
instances' positions is refused (:func:`check_position_times`); before a run, a window longer than
the stream, one far shorter than its typical gap, or times that do not look like Unix seconds are
warnings (:func:`time_warnings` on :func:`time_profile`); after it, a fold that released nothing
(:func:`released_nothing`)."""

from __future__ import annotations

from dataclasses import dataclass

from delaycv.common.errors import ConfigError
from delaycv.data.stream_file import StreamFile

#: A window this many times shorter than the typical gap between instances waits for nothing.
GAP_FACTOR = 1000
#: The stream's time gaps sampled for their median (a StreamFile is read column by column).
GAP_SAMPLE = 100_000
#: 1971-01-01 and 1990-01-01 in Unix seconds: a stream that starts before the first is not
#: dated; one whose times x 1000 are after the second looks like Unix seconds read as milliseconds.
_YEAR_1971 = 31_536_000
_YEAR_1990 = 631_152_000
_EXAMPLE_COUNT = "50i"


@dataclass(frozen=True)
class TimeProfile:
    """What the checks need of a stream's times: ``first`` and ``last`` time, the median of the
    gaps between consecutive distinct times (``gap``, 0 if all times are equal; from a sample of
    about :data:`GAP_SAMPLE` gaps), ``gcd`` of every gap, ``gaps`` their number."""

    first: int
    last: int
    gap: float
    gcd: int
    gaps: int

    @property
    def span(self) -> int:
        return self.last - self.first


def time_profile(stream) -> TimeProfile:
    """The :class:`TimeProfile` of a Stream (its ``time``) or a StreamFile (its time column,
    read column by column: what is held is one batch and the gap sample)."""
    import numpy as np

    if isinstance(stream, StreamFile):
        parts = (b.column(0).to_numpy(zero_copy_only=False) for b in stream._batches(["time"]))
    else:
        parts = iter([np.asarray(stream.time)])
    stride = max(1, len(stream) // GAP_SAMPLE)
    first = prev = None
    gcd = gaps = 0
    sample = []
    for t in parts:
        if not len(t):
            continue
        t = t.astype(np.int64, copy=False)
        if first is None:
            first = int(t[0])
        d = np.diff(t) if prev is None else np.diff(t, prepend=prev)
        d = d[d > 0]
        if d.size:
            gcd = int(np.gcd.reduce(np.append(d, gcd)))
            gaps += int(d.size)
            sample.append(d[::stride])
        prev = int(t[-1])
    gap = float(np.median(np.concatenate(sample))) if sample else 0.0
    return TimeProfile(first or 0, prev or 0, gap, gcd, gaps)


def window_keys(policy) -> dict[str, str]:
    """The spec key that sets each side's window (``pos_window``/``neg_window`` -> ``window``
    for delay and verification), for the sides whose window is a duration other than 0."""
    from delaycv.protocol.policies import PRESETS, WINDOW_SIDES

    preset = PRESETS.get(policy.preset)
    params = [] if preset is None else [*preset.windows, *preset.optional_windows]
    keys = {side: key for w in params for key in [w.key] for side in WINDOW_SIDES[key]}
    out = {}
    for side in ("pos_window", "neg_window"):
        window = getattr(policy, side)
        if not window.is_count and window.amount > 0:
            out[side] = keys.get(side, side)
    return out


def _grouped(policy, sides: dict[str, str]) -> dict[str, list[str]]:
    """Key -> the sides it sets, in key order of first appearance."""
    out: dict[str, list[str]] = {}
    for side, key in sides.items():
        out.setdefault(key, []).append(side)
    return out


def check_position_times(stream, policy, where: str = "policy") -> None:
    """A ConfigError if the stream's times are its instances' positions (an iterable of
    ``(x, y)`` without a time key, a file converted with ``time_unit: position``:
    ``metadata["time"] == "position"``) and a window of the
    policy is a duration: a duration has no meaning there, a count of instances has."""
    if stream.metadata.get("time") != "position":
        return
    sides = window_keys(policy)
    if not sides:
        return
    side, key = next(iter(sides.items()))
    raise ConfigError(
        f"the window {getattr(policy, side)} is a duration, but the stream's times are its "
        "instances' positions (it has no times: a file converted with time_unit position, or "
        "x dicts without a time key): write it as a count of instances, "
        f"e.g. {_EXAMPLE_COUNT}",
        location=f"key {where}.{key}",
        expected=f"a window in instances such as {_EXAMPLE_COUNT}, or a stream with times",
    )


def _days(seconds: float) -> str:
    """``999.8d``, ``5h``, ``10m``, ``42s``: a duration in its largest unit, to 0.1."""
    for suffix, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f}".removesuffix(".0") + suffix
    return f"{seconds:.1f}".removesuffix(".0") + "s"


def _nothing_released(policy, sides: list[str], reveals: bool) -> str:
    """What a policy releases before the end when the windows of ``sides`` outlast the stream."""
    early = policy.feedback and reveals
    if len(sides) == 2:
        if not early:
            return "the policy can release nothing before the end of the stream"
        return (
            "the policy can release nothing before the end of the stream but the labels "
            "revealed by label_time"
        )
    which = "predicted positive" if sides[0] == "pos_window" else "predicted negative"
    text = f"the policy can release the label of no {which} before the end of the stream"
    return text + (" (but those revealed by label_time)" if early else "")


def time_warnings(profile: TimeProfile, policy, metadata: dict, where: str = "policy") -> list[str]:
    """The warnings about the policy's duration windows against the stream's times
    (docs/engine.md, "Windows against the stream"): a window longer than the stream's span; a
    window :data:`GAP_FACTOR` times shorter than the typical gap; times that look like
    milliseconds read as seconds, seconds read as milliseconds, or numbers counted from 0."""
    sides = window_keys(policy)
    if not sides:
        return []
    out = []
    reveals = metadata.get("positives_with_label_time", 1) != 0
    groups = _grouped(policy, sides)
    if profile.span == 0:  # (one time for every instance: no window ends before the last)
        keys = ", ".join(f"{where}.{k}" for k in groups)
        out.append(
            f"{'keys' if len(groups) > 1 else 'key'} {keys}: every instance of the stream has "
            f"the same time ({profile.first}): "
            f"{_nothing_released(policy, [k for keyed in groups.values() for k in keyed], reveals)}"
            " (expected times that tell the instances apart, or windows counted in instances, "
            f"e.g. {_EXAMPLE_COUNT})"
        )
        return out
    for key, keyed in groups.items():
        window = getattr(policy, keyed[0])
        if window.amount > profile.span:
            out.append(
                f"key {where}.{key}: the window {window} is longer than the whole stream "
                f"({_days(profile.span)} from its first time to its last): "
                f"{_nothing_released(policy, keyed, reveals)} "
                f"(expected a window shorter than {_days(profile.span)})"
            )
    for key, keyed in groups.items():
        window = getattr(policy, keyed[0])
        if profile.gaps and window.amount * GAP_FACTOR <= profile.gap:
            out.append(
                f"key {where}.{key}: the window {window} is {GAP_FACTOR} or more times shorter "
                f"than the typical gap between the stream's times ({_days(profile.gap)}, the "
                "median): each label waits only for the next instance, as with 0; are the "
                "times in seconds? (expected a window of the order of the gaps, or times in "
                "Unix seconds: time_unit ms if they are milliseconds)"
            )
    unit = _unit_warning(profile, policy, sides, where, metadata.get("time_unit"))
    return out + ([unit] if unit else [])


def _misread(time_unit: str | None) -> tuple[str, str] | None:
    """What times x 1000 that are dates were read as, and the fix, given the unit the stream's
    conversion read its times in (its metadata's ``time_unit``; None: a stream made elsewhere);
    None when no unit 1000 times coarser was at hand (seconds, dates)."""
    from delaycv.data.timeunits import FACTORS, NAMES

    if time_unit is None:
        return "Unix seconds read as milliseconds", "time_unit s for times in seconds"
    coarser = [u for u, f in FACTORS.items() if f * 1000 == FACTORS.get(time_unit)]
    if not coarser:
        return None
    return f"{NAMES[coarser[0]]} read as {NAMES[time_unit]}", f"time_unit {coarser[0]}"


def _unit_warning(
    profile: TimeProfile, policy, sides: dict[str, str], where: str, time_unit: str | None
) -> str | None:
    """One warning if the times do not look like Unix seconds (see :func:`time_warnings`);
    ``time_unit``: the unit the stream's conversion read its times in, if known."""
    keys = ", ".join(f"{where}.{k}" for k in _grouped(policy, sides))
    window = getattr(policy, next(iter(sides)))
    start = f"the stream's times start at {profile.first}"
    fix = f"or write the window as a count of instances, e.g. {_EXAMPLE_COUNT}"
    if profile.gaps >= 10 and profile.gcd % 1000 == 0:
        what = (
            f"every gap between the stream's times (all {profile.gaps}) is a multiple of 1000 "
            f"seconds: they look like milliseconds read as seconds, which makes the window "
            f"{window} last {_days(window.amount / 1000)} of the stream's real time"
        )
        expected = f"Unix seconds: time_unit ms, {fix}"
    elif profile.first >= 0 and profile.last < _YEAR_1971:
        misread = _misread(time_unit)
        if profile.first * 1000 >= _YEAR_1990 and misread is not None:
            what = (
                f"{start} (in January 1970 as Unix seconds) and x 1000 they are dates: they look "
                f"like {misread[0]}, which makes the window {window} last "
                f"{_days(window.amount * 1000)} of the stream's real time"
            )
            expected = f"Unix seconds: {misread[1]}, {fix}"
        else:
            what = (
                f"{start} and end at {profile.last}, in 1970 as Unix seconds: they look counted "
                f"from 0 rather than dates, and the window {window} is {window} only if they "
                "count seconds"
            )
            expected = f"Unix seconds, or times in the unit given by time_unit, {fix}"
    else:
        return None
    return f"{'keys' if ',' in keys else 'key'} {keys}: {what} (expected {expected})"


def only_clean_labels(policy, has_fixes: bool) -> list[str]:
    """A warning where every label the policy can release is 0: both of its windows end in the
    clean assumption (``verification``), so only a fix seen (``label_time``) gives a 1, and the
    stream has no fix time (a stream converted without a link column)."""
    if has_fixes or not policy.ones_need_fixes:
        return []
    return [
        f"key policy: the policy {policy.name} gives a label 1 only where a fix is seen "
        "(label_time), and the stream has no fix time: every label it releases is 0, so no fold "
        "learns a positive and the observed metrics of class 1 are undefined or 0 (expected a "
        "stream with fix times, or a policy whose window ends in the truth: hitl, delay)"
    ]


def released_nothing(outputs, policy) -> list[str]:
    """A warning naming the folds in which the policy released (evaluated) no label."""
    empty = [o.fold for o in outputs if o.info.get("evaluated", 1) == 0]
    if not empty:
        return []
    folds = "fold" if len(empty) == 1 else "folds"
    return [
        f"key policy: the policy {policy.name} released no label in {folds} "
        f"{', '.join(map(str, empty))}: nothing was evaluated there and the metrics are NaN "
        "(expected windows that end before the stream does, or flush)"
    ]
