"""Progress of a run: :class:`Progress` (instance-folds done, rate, ETA on a text stream); the
fold loop reports every :data:`PROGRESS_BLOCK` instances of a fold."""

from __future__ import annotations

import math
import sys
import time as _time
from collections.abc import Callable

#: Instances of a fold between two calls of the progress callback (within a chunk).
PROGRESS_BLOCK = 256


class Progress:
    """Progress of a run on a text stream (default stderr): instance-folds done, rate, ETA.

    Call it with the number of instance-folds just done (the engine does so every
    :data:`PROGRESS_BLOCK` instances of each fold), or :meth:`update` with the total so far. Once
    the run has lasted ``after`` seconds it writes a report at most every ``every`` seconds: on a
    terminal one line rewritten in place (``every`` default 1 s), elsewhere (a Snakemake job log,
    a file, a pipe) plain lines (``every`` default 5 s). ``clock``: seconds, for tests.
    """

    def __init__(
        self,
        total: int,
        *,
        after: float = 3.0,
        every: float | None = None,
        stream=None,
        clock: Callable[[], float] = _time.monotonic,
    ) -> None:
        self.total = total
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty()) if callable(isatty) else False
        self.after = after
        self.every = every if every is not None else (1.0 if self.tty else 5.0)
        self.clock = clock
        self.t0 = clock()
        self.last = -math.inf
        self.shown = False

    def __call__(self, k: int) -> None:
        self.update(self.done + k)

    def update(self, done: int) -> None:
        self.done = done
        now = self.clock()
        if now - self.t0 < self.after or now - self.last < self.every:
            return
        self.last = now
        self.stream.write(("\r" if self.tty else "") + self.text(now))
        if not self.tty:
            self.stream.write("\n")
        self.stream.flush()
        self.shown = True

    def text(self, now: float) -> str:
        """The report: ``delaycv: 40,960/300,000 instance-folds (13.7 %), 2,345/s, ETA 1 min 51 s``."""
        elapsed = max(now - self.t0, 1e-9)
        rate = self.done / elapsed
        eta = (self.total - self.done) / rate if rate > 0 else math.inf
        share = 100.0 * self.done / self.total if self.total else 100.0
        return (
            f"delaycv: {self.done:,}/{self.total:,} instance-folds ({share:.1f} %), "
            f"{rate:,.0f}/s, ETA {_duration(eta)}" + ("   " if self.tty else "")
        )

    def close(self) -> None:
        if self.shown and self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "unknown"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"
