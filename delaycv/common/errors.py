"""Errors that name what is wrong, where, and what was expected."""

from __future__ import annotations


class DelaycvError(Exception):
    """Base class of every error delaycv reports to a user."""


class InputError(DelaycvError):
    """Bad input: names the file (or config), the place in it, and what was expected.

    ``str(err)`` reads ``"<path>: <location>: <message> (expected <expected>)"``; parts that are
    not known are left out.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        location: str | None = None,
        expected: str | None = None,
    ) -> None:
        self.message = message
        self.path = None if path is None else str(path)
        self.location = location
        self.expected = expected
        super().__init__(str(self))

    def __str__(self) -> str:
        parts = [p for p in (self.path, self.location) if p]
        text = (
            self.message if self.expected is None else f"{self.message} (expected {self.expected})"
        )
        return ": ".join([*parts, text])


class ConfigError(InputError):
    """A bad configuration value; ``location`` is the key, e.g. ``"key learners.ht.params"``."""


def shown(value: object) -> object:
    """``value`` as an error message shows it with ``!r``: a numpy scalar as the Python number
    it holds (``2``, not ``np.int64(2)``), anything else as it is.

    >>> import numpy as np
    >>> f"{shown(np.float64(0.5))!r} {shown(np.int8(2))!r} {shown('yes')!r}"
    "0.5 2 'yes'"
    """
    item = getattr(value, "item", None)
    return item() if callable(item) and getattr(value, "shape", None) == () else value
