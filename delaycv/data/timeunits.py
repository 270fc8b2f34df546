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

The other way round, Unix times read in a unit finer than theirs (seconds as milliseconds,
milliseconds as microseconds) land in 1970 and make every window 1000 times too long: a column
whose times all fall in 1970 in its ``ms``, ``us`` or ``ns`` unit, while in a coarser unit they
are dates from 1980 on, is refused too (:func:`coarser_unit`). Times counted from a start of
one's own begin near 0, and are not taken for it.
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
#: 1971-01-01 and 1980-01-01 in Unix seconds: times in a too fine unit all fall before the
#: first; in their own unit they are dates after the second (:func:`coarser_unit`).
YEAR_1971 = 31_536_000
YEAR_1980 = 315_532_800


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


def coarser_unit(values: np.ndarray, given: str) -> str | None:
    """The unit coarser than ``given`` in which the raw numbers ``values`` are Unix times, when
    they are times of a coarser unit read in ``given``: every finite value lies in 1970 as
    ``given`` (before :data:`YEAR_1971`) and, in that unit, between :data:`YEAR_1980` and
    :data:`LATEST`; otherwise None (times counted from 0 start before 1980 in every unit).

    >>> import numpy as np
    >>> coarser_unit(np.array([1_672_531_475, 1_680_000_000]), "ms")  # seconds of 2023
    's'
    >>> coarser_unit(np.array([1_672_531_475_087, 1_680_000_000_000]), "us")
    'ms'
    >>> coarser_unit(np.array([0, 3_600_000, 7_200_000]), "ms")  # two hours from 0
    """
    import numpy as np

    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    if FACTORS[given] == 1 or not finite.size:
        return None
    low, high = float(finite.min()), float(finite.max())
    if low < 0 or high / FACTORS[given] >= YEAR_1971:
        return None
    for unit, factor in FACTORS.items():
        if factor < FACTORS[given] and low / factor >= YEAR_1980 and high / factor < LATEST:
            return unit
    return None


def coarser_unit_message(
    low: float, high: float, given: str, unit: str, *, what: str = "times", hint: str
) -> str:
    """Why times from ``low`` to ``high`` (raw numbers in ``given``) are refused when
    :func:`coarser_unit` found them in ``unit``; ``hint`` says how to set it (``{unit}``)."""
    import numpy as np

    def day(value: float, factor: int) -> str:
        return str(np.datetime64(int(value // factor), "s").astype("datetime64[D]"))

    given_factor, factor = FACTORS[given], FACTORS[unit]
    return (
        f"{what} {number_text(low)} to {number_text(high)} read as {NAMES[given]} all lie in 1970 "
        f"({day(low, given_factor)} to {day(high, given_factor)}), which makes every window "
        f"{given_factor // factor:,} times too long; read as {NAMES[unit]} they are dates "
        f"({day(low, factor)} to {day(high, factor)}): they look like {NAMES[unit]} "
        f"({hint.format(unit=unit)})"
    )


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
    "YEAR_1971",
    "YEAR_1980",
    "coarser_unit",
    "coarser_unit_message",
    "implausible",
    "implausible_message",
    "likely_unit",
    "number_text",
]
