"""Units of raw time columns, and the check that times are plausible Unix seconds.

The canonical stream stores Unix seconds. A raw time column holds numbers in a unit given by the
mapping key ``time_unit`` (``s``, the default, ``ms``, ``us`` or ``ns``), or dates (``datetime``:
ISO 8601 text, an ARFF ``date`` attribute, a pandas datetime column, or text with
``time_format``), which are converted exactly.

Whatever the unit, a time must lie between :data:`EARLIEST` (1900-01-01) and :data:`LATEST`
(the end of 9999, the last year a date can be written in) once in seconds: milliseconds read as
seconds put today's dates in the year 50,000 and make every ``7d`` window 1000 times too short. A
time outside is an error that names the likely unit (:func:`likely_unit`). The upper bound is not
2200 because the project's own generated streams run far into the future (``generate_stream``:
about 1,000 days per 6,000 rows, so the year 2474 at 1,000,000 rows; the memory benchmark's
10,000,000 rows over 100,000 days end in 2292); it still rejects every millisecond time after
1978-01-12 (and every microsecond or nanosecond time after 1970-01-04).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where it is used: the command line reads TIME_UNITS
    import numpy as np

#: Number of units in a second, per numeric time unit.
FACTORS = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
#: The values of ``time_unit``: the numeric units, and ``datetime`` (dates, converted exactly).
TIME_UNITS = (*FACTORS, "datetime")
#: the time unit of a raw file without a time column: each instance's time is its position
POSITION = "position"
#: the time units a mapping takes (a raw file's)
MAPPING_TIME_UNITS = (*TIME_UNITS, POSITION)
#: Text that starts as a date does (``2021-01-31``, ``2021-01-31T10:00:00Z``): the hint that a
#: column read as numbers, or a time given as text, holds dates
DATE_TEXT = re.compile(r"\s*\d{4}-\d{2}-\d{2}")
NAMES = {
    "s": "seconds",
    "ms": "milliseconds",
    "us": "microseconds",
    "ns": "nanoseconds",
    "datetime": "dates",
}
#: 1900-01-01T00:00:00Z and 10000-01-01T00:00:00Z in Unix seconds: the plausible range of a time.
EARLIEST = -2_208_988_800
LATEST = 253_402_300_800
RANGE_TEXT = "between 1900-01-01 and 9999-12-31"


def implausible(seconds: np.ndarray) -> int:
    """Index of the first finite time (Unix seconds) outside the plausible range, or -1."""
    import numpy as np

    values = np.asarray(seconds)
    if values.size == 0:
        return -1
    bad = (values < EARLIEST) | (values >= LATEST)
    idx = np.flatnonzero(bad)
    return int(idx[0]) if idx.size else -1


def likely_unit(value: float, given: str = "s") -> str | None:
    """The unit (other than ``given``) in which the raw number ``value`` is a plausible time."""
    for unit, factor in FACTORS.items():
        if unit != given and EARLIEST <= value / factor < LATEST:
            return unit
    return None


def number_text(value: float) -> str:
    """``1500000000000`` rather than ``1.5e+12`` for whole numbers."""
    value = float(value)
    if math.isfinite(value) and value == int(value):
        return str(int(value))
    return repr(value)


def implausible_message(
    value: float,
    given: str = "s",
    *,
    what: str = "time",
    where: str = "",
    hint: str = "set time_unit: {unit}",
) -> str:
    """``"<what> <value><where> is after 9999-12-31 as Unix seconds: it looks like milliseconds
    (set time_unit: ms)"``: why the raw number ``value`` in unit ``given`` is not a plausible
    time, and the likely unit; ``hint`` says how to set it (``{unit}`` is replaced)."""
    seconds = value / FACTORS[given]
    side = "after 9999-12-31" if seconds >= LATEST else "before 1900-01-01"
    text = f"{what} {number_text(value)}{where} is {side} as Unix {NAMES[given]}"
    guess = likely_unit(value, given)
    if guess is not None:
        text += f": it looks like {NAMES[guess]} ({hint.format(unit=guess)})"
    return text


__all__ = [
    "EARLIEST",
    "FACTORS",
    "LATEST",
    "NAMES",
    "RANGE_TEXT",
    "MAPPING_TIME_UNITS",
    "DATE_TEXT",
    "POSITION",
    "TIME_UNITS",
    "implausible",
    "implausible_message",
    "likely_unit",
    "number_text",
]
