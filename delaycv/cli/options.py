"""Option types shared by the subcommands (argparse ``type=`` callables: a bad value is a usage
error naming the option, ``delaycv: error: evaluate: argument --seed: ...``)."""

from __future__ import annotations

import argparse

from delaycv.common.defaults import SEED_MAX


def seed(text: str) -> int:
    """A seed: an integer from 0 to 2**63 - 1 (the range every seed of delaycv takes)."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not 0 <= value <= SEED_MAX:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a seed (expected an integer from 0 to 2**63 - 1 = {SEED_MAX})"
        )
    return value


def stream_time(text: str) -> int:
    """A time of a stream, as the stream stores it (Unix seconds): an integer of seconds, or an
    ISO 8601 date or date and time, UTC unless it gives an offset (``2016-01-01``,
    ``2016-06-30T12:00``, ``2016-06-30 12:00:00+02:00``), to the second at or before it.

    >>> stream_time("1451606400"), stream_time("2016-01-01"), stream_time("2016-01-01T02:00+02:00")
    (1451606400, 1451606400, 1451606400)
    >>> stream_time("1 Jan 2016")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: '1 Jan 2016' is not a time (expected Unix seconds, or an ISO 8601 date or date and time: 2016-01-01, 2016-06-30T12:00, 2016-06-30 12:00+02:00; UTC unless an offset is given)
    """
    import datetime
    import math

    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        when = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a time (expected Unix seconds, or an ISO 8601 date or date and "
            "time: 2016-01-01, 2016-06-30T12:00, 2016-06-30 12:00+02:00; UTC unless an offset "
            "is given)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return math.floor(when.timestamp())


def add_summary_options(parser: argparse.ArgumentParser) -> None:
    """``--quiet`` (no summary) or ``--json`` (the summary as one JSON object, for scripts,
    instead of a line of words): the options of the commands that write a stream."""
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--quiet", action="store_true", help="print no summary")
    shown.add_argument(
        "--json",
        action="store_true",
        help="print the summary as one JSON object (its counts by name, for scripts) instead "
        "of a line of words",
    )


def add_checkpoint_options(parser: argparse.ArgumentParser, verb: str) -> None:
    """``--checkpoint``, ``--checkpoint-position`` and ``--checkpoint-fraction``: the config's
    ``tests.checkpoints``, read by :func:`checkpoint_request`. ``verb``: what is done at a
    checkpoint (``"tested"``, ``"ranked"``)."""
    parser.add_argument(
        "--checkpoint",
        default=None,
        help="'last' (default), 'all', or a checkpoint of the table (its stream position)",
    )
    parser.add_argument(
        "--checkpoint-position",
        action="append",
        type=int,
        metavar="P",
        help=f"a stream position (instances, >= 1), {verb} at the first checkpoint at or after "
        "it (repeat; the config's tests.checkpoints.positions)",
    )
    parser.add_argument(
        "--checkpoint-fraction",
        action="append",
        type=float,
        metavar="F",
        help="a fraction of each stream in (0, 1] (repeat; tests.checkpoints.fractions)",
    )


#: Each option of :func:`add_checkpoint_options` that gives a kind of the request's mapping.
_CHECKPOINT_KIND_OPTIONS = {
    "positions": ("checkpoint_position", "--checkpoint-position"),
    "fractions": ("checkpoint_fraction", "--checkpoint-fraction"),
}


def checkpoint_request(args: argparse.Namespace):
    """The checkpoint request of :func:`add_checkpoint_options`' options, checked by
    :func:`delaycv.protocol.checkpoints.check_checkpoint_request` (each option on its own, so that
    an error names its option): ``"last"``, ``"all"``, ``[checkpoint]`` or the config's mapping
    ``{"positions": [...], "fractions": [...]}``."""
    from delaycv.common.errors import ConfigError, InputError
    from delaycv.protocol.checkpoints import check_checkpoint_request

    mapping = {}
    for kind, (dest, option) in _CHECKPOINT_KIND_OPTIONS.items():
        values = getattr(args, dest)
        if values:
            try:
                mapping[kind] = check_checkpoint_request({kind: values})[kind]
            except ConfigError as err:
                raise InputError(
                    err.message, location=f"option {option}", expected=err.expected
                ) from None
    if mapping and args.checkpoint is not None:
        raise InputError(
            "--checkpoint with --checkpoint-position or --checkpoint-fraction",
            location="option --checkpoint",
            expected="either --checkpoint or positions and fractions",
        )
    text = args.checkpoint
    if mapping or text is None or text in ("last", "all"):
        return mapping or text or "last"
    try:
        return [int(text)]
    except ValueError:
        raise InputError(
            f"checkpoint {text!r} is not valid",
            location="option --checkpoint",
            expected="'last', 'all' or a checkpoint of the table (an integer)",
        ) from None


def check_checkpoints_in_table(checkpoints, present, path: str) -> None:
    """A checkpoint given with ``--checkpoint`` must be one of the table's (``present``), else
    an :class:`~delaycv.common.errors.InputError` naming the table and listing its checkpoints;
    positions and fractions are answered by the checkpoints at or after them (or noted)."""
    from delaycv.common.errors import InputError

    if not isinstance(checkpoints, list):
        return
    present = set(present)
    missing = [c for c in checkpoints if c not in present]
    if missing:
        shown = sorted(present)
        listed = ", ".join(map(str, shown[:8])) + (", ..." if len(shown) > 8 else "")
        raise InputError(
            f"checkpoint {missing[0]} is not in the table",
            path=path,
            location="option --checkpoint",
            expected=f"one of its checkpoints ({listed}), 'last' or 'all'",
        )


def on_the_command_line(err, options: dict[str, str]):
    """``err`` (a :class:`~delaycv.common.errors.ConfigError` of a settings maker, naming a key
    of the study config) with its key replaced by the option of ``options`` that sets it: the
    key itself or its longest prefix (``key tests.references.1`` -> ``option --reference``);
    ``err`` as it is when no option sets the key."""
    from delaycv.common.errors import ConfigError

    key = (err.location or "").removeprefix("key ")
    while key and key not in options:
        key = key.rpartition(".")[0]
    if err.path is not None or not key:
        return err
    return ConfigError(err.message, location=f"option {options[key]}", expected=err.expected)


def given(**values) -> dict:
    """The options given on the command line (those whose value is not None): what a settings
    maker gets, so that the others take its defaults."""
    return {name: value for name, value in values.items() if value is not None}
