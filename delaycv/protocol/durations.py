"""Waiting windows: durations in seconds (``90d``, ``12h``, ``3600s``) or counts of instances (``500i``)."""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass

from delaycv.common.bounds import BOUNDS
from delaycv.common.checks import is_integer
from delaycv.common.errors import DelaycvError

_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_PATTERN = re.compile(r"^\s*(\d+)\s*(s|m|h|d|w|i|instances?)?\s*$")


class WindowError(DelaycvError):
    """A text that is not a waiting window: ``message`` says why, ``expected`` (None: not said)
    what a window looks like; ``str(err)`` is ``"<message> (expected <expected>)"``."""

    def __init__(self, message: str, expected: str | None = None) -> None:
        self.message = message
        self.expected = expected
        super().__init__(message if expected is None else f"{message} (expected {expected})")


@dataclass(frozen=True)
class Window:
    """A waiting time: ``amount`` seconds (``unit == "s"``) or ``amount`` instances (``unit == "i"``)."""

    amount: int
    unit: str = "s"

    @property
    def is_count(self) -> bool:
        return self.unit == "i"

    def __str__(self) -> str:
        if self.is_count:
            return f"{self.amount}i"
        for suffix, size in (("d", 86400), ("h", 3600), ("m", 60)):
            if self.amount and self.amount % size == 0:
                return f"{self.amount // size}{suffix}"
        return f"{self.amount}s"


def _no_unit(text: object) -> WindowError:
    amount = str(text).strip()
    return WindowError(
        f"window {text!r} has no unit: write {amount}d, {amount}h, {amount}s or {amount}i "
        "(days, hours, seconds or instances; only 0 may go without one)"
    )


def parse_window(text: str | int | Window) -> Window:
    """Parse a waiting window.

    ``"90d"``, ``"12h"``, ``"30m"``, ``"3600s"`` and ``"2w"`` are durations; ``"500i"`` (or
    ``"500 instances"``) is a count of instances. A number without a unit (``7`` or ``"7"``) is an
    error: it could be seconds, days or instances. Only ``0`` may go without a unit (no wait:
    ``0s`` and ``0i`` mean the same); it is ``Window(0, "s")``.

    >>> parse_window("7d")
    Window(amount=604800, unit='s')
    >>> parse_window("100i")
    Window(amount=100, unit='i')
    """
    if isinstance(text, Window):
        return text
    if not (isinstance(text, str) or is_integer(text)):
        raise WindowError(f"window {text!r} is not a duration", "e.g. 7d, 12h, 3600s or 500i")
    if isinstance(text, numbers.Integral):
        text = int(text)
        if text < 0:
            raise WindowError(f"window {text!r} is negative", "a duration >= 0")
        if text != 0:
            raise _no_unit(text)
        return Window(0, "s")
    match = _PATTERN.match(text)
    if not match:
        if text.strip().startswith("-"):
            raise WindowError(f"window {text!r} is negative", "a duration >= 0")
        raise WindowError(
            f"window {text!r} is not a duration", "e.g. 7d, 12h, 30m, 3600s, 2w or 500i"
        )
    amount, unit = int(match.group(1)), match.group(2)
    if unit is None:
        if amount != 0:
            raise _no_unit(text)
        unit = "s"
    window = Window(amount, "i") if unit.startswith("i") else Window(amount * _UNIT_SECONDS[unit])
    bound = BOUNDS["window"]
    if window.amount > bound.maximum:
        what = "instances" if window.is_count else "seconds"
        raise WindowError(
            f"window {text!r} is too long ({window.amount:,} {what})",
            f"at most {bound.maximum:,} {what}: {bound.why}",
        )
    return window
