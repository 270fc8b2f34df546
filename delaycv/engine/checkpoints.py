"""Where a run's checkpoints fall: :func:`checkpoint_positions` (pure)."""

from __future__ import annotations

from typing import Any

import numpy as np

from delaycv.common.errors import ConfigError
from delaycv.data.stream import StreamFile
from delaycv.protocol.checkpoints import fraction_position


def checkpoint_positions(time: Any, every: int | None, checkpoints: Any = None) -> np.ndarray:
    """Sorted 1-based stream positions of the checkpoints.

    Every ``every`` instances (``every`` None or 0: none), the last instance, and from
    ``checkpoints``: a list of positions (ints), or a mapping with ``positions`` (ints in 1..n),
    ``fractions`` (in (0, 1]: position
    :func:`~delaycv.protocol.checkpoints.fraction_position`) and ``times`` (Unix s: the last instance
    with time <= T; none if no instance is that early). ``time``: the stream's times, or a
    :class:`~delaycv.data.stream.StreamFile` (its times are read only for ``times``). ``every``
    and ``checkpoints`` are those of a :class:`~delaycv.protocol.settings.RunSettings`, checked
    where it is made (:func:`~delaycv.protocol.settings.make_settings`, the one place for a run's
    checks); only the positions against the stream's length are checked here.

    >>> t = np.array([1, 2, 2, 5, 9, 9, 9, 12, 20, 30])
    >>> checkpoint_positions(t, 4).tolist()
    [4, 8, 10]
    >>> checkpoint_positions(t, None, {"fractions": [0.25], "times": [9]}).tolist()
    [3, 7, 10]
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
            counts = time.count_until(times)
        else:
            counts = np.searchsorted(time, times, side="right").tolist()
        points.update(pos for pos in counts if pos >= 1)
    return np.array(sorted(points), dtype=np.int64)
