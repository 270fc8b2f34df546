"""The ``delaycv`` console command.

Each subcommand lives in its own module of this package, which defines ``add_parser(subparsers)``
(registering the subcommand and its options, with ``parser.set_defaults(run=run)``) and
``run(args) -> int``.

Imports: :mod:`delaycv.common`, :mod:`delaycv.data`, :mod:`delaycv.metrics`,
:mod:`delaycv.protocol`, :mod:`delaycv.engine`, :mod:`delaycv.jvm`, :mod:`delaycv.tables`,
:mod:`delaycv.stats`, :mod:`delaycv.figures`, :mod:`delaycv.study`, :mod:`delaycv.stages` (each
imported when its command runs: a light start, ``tests/cli/test_light_start.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import re
import sys
from collections.abc import Iterator

from delaycv import __version__
from delaycv.common import interrupt
from delaycv.common.errors import ConfigError, DelaycvError
from delaycv.common.interrupt import Terminated, signals_raise
from delaycv.study.job import end_job

COMMANDS = ("convert", "generate", "evaluate", "merge", "compare", "rank", "plot", "check")


class Parser(argparse.ArgumentParser):
    """argparse's parser whose usage errors read like every other error: ``delaycv: error: ...``
    (exit status 2, as argparse's)."""

    #: the subcommands' parsers by name (the top-level parser's; see :meth:`parse_args`)
    commands: dict[str, argparse.ArgumentParser] = {}

    def parse_args(self, args=None, namespace=None):
        """argparse's, but an argument no option takes is the subcommand's error, which names
        its own ``--help`` (argparse's top-level parser would name ``delaycv --help``)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            parser = self.commands.get(getattr(parsed, "command", None), self)
            parser.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def error(self, message: str):
        command = self.prog.partition(" ")[2]
        self.exit(
            2,
            f"delaycv: error: {command + ': ' if command else ''}{message} "
            f"(see {self.prog} --help)\n",
        )


#: reST's inline markup in a docstring: ``literal``, :role:`target` (``~`` shortens a target)
_LITERAL = re.compile(r"``(.+?)``", re.S)
_ROLE = re.compile(r":\w+:`~?(.+?)`", re.S)


def description(doc: str | None) -> str | None:
    r"""A subcommand's ``--help`` description: its module's docstring after the first paragraph,
    the docstring's reST markup written as plain text (``x``, :func:`x` read x in a terminal).

    Examples
    --------
    >>> description("``delaycv x``: one line.\n\nWrites ``a.csv`` (:func:`delaycv.stages.x.x`).")
    'Writes a.csv (delaycv.stages.x.x).'
    """
    if not doc:
        return None
    body = doc.split("\n\n", 1)[-1]
    return _LITERAL.sub(r"\1", _ROLE.sub(r"\1", body))


def check_number(
    value: float | None,
    option: str,
    *,
    low: float | None = None,
    high: float | None = None,
    open_low: bool = False,
    open_high: bool = False,
    expected: str | None = None,
) -> None:
    """Refuse the number ``value`` of ``option`` (e.g. ``"--dpi"``) outside its range, before any
    work: a ``ConfigError`` naming the option (``option --dpi: --dpi 0 (expected an integer >=
    1)``). ``None`` (an option not given) passes; NaN never does. Bounds are closed unless
    ``open_low``/``open_high``; ``expected`` replaces the range's own wording."""
    if value is None:
        return
    above = low is None or (value > low if open_low else value >= low)
    below = high is None or (value < high if open_high else value <= high)
    if above and below and value == value:
        return
    if expected is None:
        kind = "an integer" if isinstance(value, int) else "a number"
        if high is None:
            expected = f"{kind} {'>' if open_low else '>='} {low}"
        elif low is None:
            expected = f"{kind} {'<' if open_high else '<='} {high}"
        else:
            left, right = "(" if open_low else "[", ")" if open_high else "]"
            expected = f"{kind} in {left}{low}, {high}{right}"
    raise ConfigError(f"{option} {value}", location=f"option {option}", expected=expected)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with ``only``, just that subcommand is imported (a faster start)."""
    parser = Parser(
        prog="delaycv",
        description="Evaluate online binary classifiers with delayed labels (prequential k-fold).",
    )
    parser.add_argument("--version", action="version", version=f"delaycv {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS if only is None else (only,):
        try:
            module = importlib.import_module(f"delaycv.cli.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"delaycv.cli.{name}":
                raise
            continue
        module.add_parser(sub)
    parser.commands = sub.choices
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``delaycv ARGV``; the exit status: 0, 2 (bad input, one line ``delaycv: error: ...``),
    130 after Ctrl-C (``delaycv: interrupted``), 143 after SIGTERM (``delaycv: terminated``).

    Without ``argv`` (the ``delaycv`` command, ``python -m delaycv``: the arguments are the
    process's), the process ends at once when the command is done, its files written and its
    output flushed, without Python's teardown (:func:`delaycv.study.job.end_job`)."""
    command = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        with signals_raise():  # Ctrl-C and SIGTERM unwind every with block: no temporary stays
            code = _main(argv)
            interrupt.check()  # (a stop that Python swallowed: the command's status says so)
    except KeyboardInterrupt:
        print("delaycv: interrupted", file=sys.stderr)
        code = 130
    except Terminated as done:
        print("delaycv: terminated", file=sys.stderr)
        code = done.code
    if command:
        logging.shutdown()  # (the handlers of the engine's warnings are already removed)
        end_job(code)
    return code


def _main(argv: list[str]) -> int:
    only = argv[0] if argv and argv[0] in COMMANDS else None
    parser = build_parser(only)
    try:
        args = parser.parse_args(argv)
    except Terminated:
        raise
    except SystemExit as done:  # --help, --version, or a usage error (already printed)
        return done.code if isinstance(done.code, int) else 2
    try:
        with warnings_on_stderr():
            return int(args.run(args) or 0)
    except DelaycvError as err:  # one line per mistake (delaycv check reports them all at once)
        for line in str(err).splitlines() or [""]:
            print(f"delaycv: error: {line}", file=sys.stderr)
        return 2
    except OSError as err:  # a file system failure not foreseen by the checks: name the file
        where = f"{err.filename}: " if err.filename is not None else ""
        print(f"delaycv: error: {where}{err.strerror or err}", file=sys.stderr)
        return 2


@contextlib.contextmanager
def warnings_on_stderr(
    names: tuple[str, ...] = ("delaycv",),
    formatter: logging.Formatter | None = None,
    seen: list[logging.LogRecord] | None = None,
) -> Iterator[None]:
    """The warnings of the loggers ``names`` (and their children) as ``delaycv: warning: ...``
    lines on stderr while the block runs, and only there: not passed on to other handlers (the
    root logger's of a program or a test runner that calls :func:`main`, which would otherwise
    print them again or in place of these lines). ``formatter`` words them otherwise; ``seen``
    collects their records. A command runs in one for the logger ``delaycv``; ``evaluate`` and
    ``check`` add their own for the loggers whose warnings they word or count."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter or logging.Formatter("delaycv: warning: %(message)s"))
    if seen is not None:
        handler.addFilter(lambda record: seen.append(record) or True)
    loggers = [logging.getLogger(name) for name in names]
    before = [(logger.propagate, logger.level) for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.propagate = False
        if logger.level == logging.NOTSET:  # (its warnings, whatever the root logger lets through)
            logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for logger, (propagate, level) in zip(loggers, before, strict=True):
            logger.removeHandler(handler)
            logger.propagate = propagate
            logger.setLevel(level)


if __name__ == "__main__":
    sys.exit(main())
