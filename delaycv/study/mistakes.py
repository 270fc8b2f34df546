"""The mistakes of a config: collected one by one, reported all at once.

Every independent mistake of a study config is a :class:`delaycv.common.errors.ConfigError`;
:class:`ConfigErrors` holds them all (one line each), :class:`Mistakes` collects them while the
checks run (:meth:`Mistakes.guard`: a check's mistake is recorded and the next check runs).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

from delaycv.common.errors import ConfigError


class ConfigErrors(ConfigError):
    """Every independent mistake of a config, each a :class:`ConfigError` (``errors``, in file
    order); ``str()`` gives one line per mistake. Its ``message``, ``path``, ``location`` and
    ``expected`` are the first mistake's."""

    def __init__(self, errors: Iterable[ConfigError]) -> None:
        self.errors = [e for err in errors for e in _flat(err)]
        first = self.errors[0]
        super().__init__(
            first.message, path=first.path, location=first.location, expected=first.expected
        )
        #: the first mistake's file, line and column (None where not known)
        self.file = getattr(first, "file", None)
        self.line = getattr(first, "line", None)
        self.column = getattr(first, "column", None)

    def __str__(self) -> str:
        return "\n".join(str(err) for err in getattr(self, "errors", ()))


def _flat(err: ConfigError) -> list[ConfigError]:
    return list(err.errors) if isinstance(err, ConfigErrors) else [err]


class Mistakes:
    """The mistakes (``errors``) and the ``warnings`` found so far. ``lenient``: the schema
    found some mistakes, and what it refused was left out; a check that then stumbles on what
    is missing is skipped, not reported."""

    def __init__(self, lenient: bool) -> None:
        self.errors: list[ConfigError] = []
        #: what is accepted but said (a deprecated spelling), each naming its key
        self.warnings: list[ConfigError] = []
        self.lenient = lenient

    @contextlib.contextmanager
    def guard(self, failed: set | None = None, mark: Any = None) -> Iterator[None]:
        """Run one independent check: its ConfigError is recorded (and ``mark`` added to
        ``failed``), the checks after it go on."""
        try:
            yield
        except ConfigError as err:
            self.errors.extend(_flat(err))
            if failed is not None:
                failed.add(mark)
        except Exception:
            if not self.lenient:
                raise
            if failed is not None:
                failed.add(mark)


def with_source(function, *args, where: str, source: str):
    """Call ``function(*args, where=where)``; a ConfigError it raises names the config file.

    Parameters
    ----------
    function : callable
        A check of the library that names keys but no file (it takes ``where``, the key).
    *args
        Its arguments.
    where : str
        The key it checks (its ``where``).
    source : str
        The config file its error is to name.

    Returns
    -------
    Any
        What ``function`` returns.

    Examples
    --------
    >>> def positive(value, *, where):
    ...     if value <= 0:
    ...         raise ConfigError(f"{value}", location=f"key {where}", expected="> 0")
    >>> try:
    ...     with_source(positive, -1, where="seeds.0", source="my.yaml")
    ... except ConfigError as err:
    ...     print(err)
    my.yaml: key seeds.0: -1 (expected > 0)
    """
    try:
        return function(*args, where=where)
    except ConfigError as err:
        raise ConfigError(
            err.message, path=source, location=err.location, expected=err.expected
        ) from None


def any_broken(broken: set[tuple], *sections: str) -> bool:
    """Whether something of ``sections`` was left out (a mistake of its own was reported).

    Parameters
    ----------
    broken : set of tuple
        What was left out: ``(section,)`` or ``(section, name)``.
    *sections : str
        The top-level keys asked about.

    Returns
    -------
    bool

    Examples
    --------
    >>> any_broken({("policies", "p1")}, "policies", "policy_grids"), any_broken(set(), "seeds")
    (True, False)
    """
    return any(item[0] in sections for item in broken)
