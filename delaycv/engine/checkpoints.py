"""Where a run's checkpoints fall: :func:`checkpoint_positions` (pure)."""

from __future__ import annotations

from typing import Any

import numpy as np

from delaycv.common.errors import ConfigError
from delaycv.common.words import describe_time
from delaycv.data.stream_file import StreamFile
from delaycv.data.timeunits import number_text
from delaycv.protocol.checkpoints import fraction_position


def checkpoint_positions(
    time: Any, every: int | None, checkpoints: Any = None, *, dated: bool = False
) -> np.ndarray:
    """Sorted 1-based stream positions of the checkpoints.

    Every ``every`` instances (``every`` None or 0: none), the last instance, and from
    ``checkpoints``: a list of positions (ints), or a mapping with ``positions`` (ints in 1..n),
    ``fractions`` (in (0, 1]: position
    :func:`~delaycv.protocol.checkpoints.fraction_position`) and ``times`` (Unix s: the last instance
    with time <= T). ``time``: the stream's times, or a
    :class:`~delaycv.data.stream_file.StreamFile` (its times are read only for ``times``). ``every``
    and ``checkpoints`` are those of a :class:`~delaycv.protocol.settings.RunSettings`, checked
    where it is made (:func:`~delaycv.protocol.settings.make_settings`, the one place for a run's
    checks); here only what needs the stream: a position beyond its length, and a time before
    its first instance or after its last (a time the stream does not reach asks for no
    checkpoint: a mistake, refused, never dropped), each a ``ConfigError`` naming the key, the
    value and the stream's range (``dated``: the times are Unix seconds, named with their UTC
    dates; else instance positions).

    >>> t = np.array([1, 2, 2, 5, 9, 9, 9, 12, 20, 30])
    >>> checkpoint_positions(t, 4).tolist()
    [4, 8, 10]
    >>> checkpoint_positions(t, None, {"fractions": [0.25], "times": [9]}).tolist()
    [3, 7, 10]
    >>> checkpoint_positions(t, None, {"times": [31]})
    Traceback (most recent call last):
    ...
    delaycv.common.errors.ConfigError: key checkpoints.times: checkpoint time 31 is outside the stream (its times run from 1 to 30) (expected times from the stream's first instance to its last)
    >>> checkpoint_positions(t + 1_700_000_000, None, {"times": [1_600_000_000]}, dated=True)
    Traceback (most recent call last):
    ...
    delaycv.common.errors.ConfigError: key checkpoints.times: checkpoint time 2020-09-13 12:26:40 UTC (Unix 1600000000) is outside the stream (its times run from 2023-11-14 22:13:21 UTC (Unix 1700000001) to 2023-11-14 22:13:50 UTC (Unix 1700000030)) (expected times from the stream's first instance to its last)
    """
    spec = (
        {"positions": list(checkpoints)} if isinstance(checkpoints, list | tuple) else checkpoints
    )
    spec = spec or {}
    n = len(time)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    points = {n}
    if every:
        points.update(range(every, n + 1, every))
    for p in spec.get("positions") or []:
        if not 1 <= p <= n:
            raise ConfigError(
                f"checkpoint position {p!r}",
                location="key checkpoints.positions",
                expected=f"integers in 1..{n}",
            )
        points.add(int(p))
    for f in spec.get("fractions") or []:
        points.add(min(n, fraction_position(f, n)))
    times = list(spec.get("times") or [])
    if times:
        if isinstance(time, StreamFile):
            counts, first, last = time.count_until(times)
        else:
            counts = np.searchsorted(time, times, side="right").tolist()
            first, last = time[0], time[-1]
        shown = describe_time if dated else number_text
        for t in times:
            if not first <= t <= last:
                raise ConfigError(
                    f"checkpoint time {shown(t)} is outside the stream (its times run from "
                    f"{shown(int(first))} to {shown(int(last))})",
                    location="key checkpoints.times",
                    expected="times from the stream's first instance to its last",
                )
        points.update(counts)
    return np.array(sorted(points), dtype=np.int64)
