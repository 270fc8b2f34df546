"""What a checkpoint value means (pure): a stream position, a fraction of a stream or a Unix time.

The one home of these values for both requests that use them: a run's extra checkpoints (where
the engine records its metrics: :func:`delaycv.protocol.settings.check_checkpoints`,
:func:`delaycv.engine.checkpoints.checkpoint_positions`) and the statistics' checkpoint request
(which recorded checkpoint a table is computed at: :mod:`delaycv.stats.checkpoints`, checked
without a table by :func:`check_checkpoint_request`, which the config check and the commands call
before any heavy import). :func:`check_checkpoint_values` checks one kind's values (:func:`refuse_duplicates` a value
listed twice), :func:`fraction_position` turns a
fraction into the position it asks for.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from delaycv.common.bounds import COUNT_MAX
from delaycv.common.checks import is_integer, is_number
from delaycv.common.errors import ConfigError

#: The kinds of checkpoint value, in the order a request is answered.
CHECKPOINT_KINDS = ("positions", "fractions", "times")

#: What each kind's values must be.
EXPECTED = {
    "positions": f"integers from 1 to {COUNT_MAX:,} (stream positions, 1-based)",
    "fractions": "numbers in (0, 1] (fractions of the stream)",
    "times": "finite numbers (Unix seconds)",
}

_SINGULAR = {"positions": "position", "fractions": "fraction", "times": "time"}


def _valid(kind: str, value) -> bool:
    if kind == "positions":
        return is_integer(value) and 1 <= value <= COUNT_MAX
    if kind == "fractions":
        return is_number(value) and 0 < float(value) <= 1
    return is_number(value) and math.isfinite(float(value))


def check_checkpoint_values(
    kind: str, values: Iterable, *, where: str = "checkpoints", unique: bool = True
) -> list:
    """Check one kind of checkpoint values: each a valid value of its kind, at least one, and
    (``unique``) none listed twice.

    Parameters
    ----------
    kind : {"positions", "fractions", "times"}
        The kind (:data:`CHECKPOINT_KINDS`).
    values : iterable
        The values given.
    where : str
        The key the values were given under, without the kind (``"tests.checkpoints"`` in a
        study config); the errors name ``key <where>.<kind>``.
    unique : bool
        Whether a value listed twice is refused (a request of the statistics: each value is one
        row of a table) or harmless (a run's checkpoints, a set of positions).

    Returns
    -------
    list
        The values, as given.

    Raises
    ------
    ConfigError
        Naming the key and the first bad value, the empty list, or every repeated value.

    Examples
    --------
    >>> check_checkpoint_values("fractions", [0.25, 1])
    [0.25, 1]
    >>> check_checkpoint_values("positions", [0, 10])
    Traceback (most recent call last):
    ...
    delaycv.common.errors.ConfigError: key checkpoints.positions: checkpoint position 0 (expected integers from 1 to 9,007,199,254,740,992 (stream positions, 1-based))
    >>> check_checkpoint_values("positions", [10, 20, 10], where="tests.checkpoints")
    Traceback (most recent call last):
    ...
    delaycv.common.errors.ConfigError: key tests.checkpoints.positions: duplicate value 10 (2 times) (expected each value once)
    """
    location = f"key {where}.{kind}"
    if kind not in EXPECTED:
        raise ConfigError(
            f"unknown checkpoint key {kind!r}",
            location=f"key {where}.{kind}",
            expected=", ".join(CHECKPOINT_KINDS),
        )
    if isinstance(values, str | bytes | dict) or not isinstance(values, Iterable):
        raise ConfigError(
            f"{values!r} is not a list", location=location, expected=f"a list of {EXPECTED[kind]}"
        )
    given = list(values)
    if not given:
        raise ConfigError("an empty list", location=location, expected="at least one value")
    for value in given:
        if not _valid(kind, value):
            raise ConfigError(
                f"checkpoint {_SINGULAR[kind]} {value!r}",
                location=location,
                expected=EXPECTED[kind],
            )
    if unique:
        refuse_duplicates(given, location)
    return given


def refuse_duplicates(values: list, location: str) -> None:
    """Refuse a list of numbers that holds a value twice.

    The :class:`ConfigError` at ``location`` names every repeated value and its count.

    >>> refuse_duplicates([300, 600, 300, 600.0], "key checkpoints")
    Traceback (most recent call last):
    ...
    delaycv.common.errors.ConfigError: key checkpoints: duplicate values 300 (2 times), 600 (2 times) (expected each value once)
    """
    counts: dict[float, int] = {}
    for value in values:
        counts[float(value)] = counts.get(float(value), 0) + 1
    repeated = [(v, c) for v, c in counts.items() if c > 1]
    if repeated:
        shown = ", ".join(f"{v:g} ({c} times)" for v, c in repeated)
        raise ConfigError(
            f"duplicate value{'s' if len(repeated) > 1 else ''} {shown}",
            location=location,
            expected="each value once",
        )


def fraction_position(fraction: float, n: int) -> int:
    """The stream position a fraction of a stream of ``n`` instances asks for.

    ``ceil(f * n)``, at least 1, with ``f * n`` rounded to 9 decimals first (so that 0.3 * 1000
    is 300, not 301): the one rounding of the engine's checkpoints and the statistics' request.

    Parameters
    ----------
    fraction : float
        f, in (0, 1].
    n : int
        The stream's length.

    Returns
    -------
    int

    Examples
    --------
    >>> fraction_position(0.3, 1000), fraction_position(0.25, 10), fraction_position(0.001, 10)
    (300, 3, 1)
    """
    return max(1, math.ceil(round(float(fraction) * n, 9)))


def _check_word(spec: str, where: str) -> str:
    if spec not in ("last", "all"):
        raise ConfigError(
            f"{spec!r} is unknown",
            location=f"key {where}",
            expected="'last', 'all', {positions: [...]}, {fractions: [...]}, {times: [...]} or "
            "checkpoint numbers",
        )
    return spec


def _check_mapping(spec: Mapping[str, Sequence], where: str) -> Mapping[str, Sequence]:
    kinds = [k for k in CHECKPOINT_KINDS if k in spec]
    other = sorted(set(spec) - set(CHECKPOINT_KINDS), key=str)
    if other or not kinds:
        raise ConfigError(
            f"unknown key {other[0]!r}" if other else "an empty mapping",
            location=f"key {where}" + (f".{other[0]}" if other else ""),
            expected="positions, fractions, times or several of them (no other key)",
        )
    for kind in kinds:
        check_checkpoint_values(kind, spec[kind], where=where)
    return spec


def _check_numbers(spec: int | Iterable[int], where: str) -> list[int]:
    wanted = [spec] if is_integer(spec) else list(spec)
    for value in wanted:
        if not _valid("positions", value):  # a checkpoint is named by its stream position
            raise ConfigError(
                f"checkpoint {value!r}",
                location=f"key {where}",
                expected=f"checkpoint numbers (integers from 1 to {COUNT_MAX:,})",
            )
    refuse_duplicates(wanted, f"key {where}")
    return [int(c) for c in wanted]


def check_checkpoint_request(
    spec: str | int | Iterable[int] | Mapping[str, Sequence], *, where: str = "checkpoints"
):
    """Check a request of :func:`delaycv.stats.checkpoints.choose_checkpoints` without a table.

    The one check of a request, for the workflow's config (``tests.checkpoints``),
    ``delaycv compare`` and ``delaycv rank`` (``--checkpoint``, ``--checkpoint-position``,
    ``--checkpoint-fraction``) and ``choose_checkpoints`` itself. The values of each kind are
    checked by :func:`check_checkpoint_values`, as a run's
    checkpoints are.

    Parameters
    ----------
    spec : str, int, iterable of int or mapping
        ``"last"``, ``"all"``, a mapping with ``positions``, ``fractions`` and/or ``times``, or
        checkpoint numbers (see :func:`delaycv.stats.checkpoints.choose_checkpoints`).
    where : str
        The key the request was given under, which the errors name (``"tests.checkpoints"`` in
        a study config).

    Returns
    -------
    str, mapping or list of int
        ``spec`` as it was given; checkpoint numbers as a list of ints.

    Raises
    ------
    ConfigError
        Naming the key and the value: an unknown word, a mapping with another key or an empty
        list, a position that is not an integer >= 1, a fraction outside (0, 1], a time that is
        not a finite number, a value listed twice
        (``key checkpoints.positions: duplicate value 1000 (2 times) (expected each value
        once)``).

    Examples
    --------
    >>> check_checkpoint_request("last"), check_checkpoint_request(1000)
    ('last', [1000])
    >>> check_checkpoint_request({"fractions": [0.5, 0.5]}, where="tests.checkpoints")
    Traceback (most recent call last):
    ...
    delaycv.common.errors.ConfigError: key tests.checkpoints.fractions: duplicate value 0.5 (2 times) (expected each value once)
    """
    if isinstance(spec, str):
        return _check_word(spec, where)
    if isinstance(spec, Mapping):
        return _check_mapping(spec, where)
    return _check_numbers(spec, where)
