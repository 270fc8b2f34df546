"""Ctrl-C and SIGTERM turned into exceptions, so that every ``with`` block unwinds (the
temporaries of :mod:`delaycv.common.atomic` are removed) before the process ends.

``delaycv`` (:func:`delaycv.cli.main`) runs each command inside :func:`signals_raise`: SIGINT
(Ctrl-C) raises :class:`KeyboardInterrupt` and SIGTERM (``timeout``, ``kill``, a cluster ending a
job) :class:`Terminated`; the command then prints one line and exits with status 130 or 143
(128 + the signal's number). The workflow's rule scripts call :func:`terminate_on_sigterm`: a job
that Snakemake or SLURM stops leaves no temporary beside its outputs, and ends with status 143
without a traceback. A second signal of the same kind is ignored while the first one's clean-up
runs; a signal the process was started to ignore (``nohup``, a background job) stays ignored.

A signal's exception is raised in whatever Python code runs when it comes, and where that code
is a destructor or a weak reference's callback (which the garbage collector or an import's lock
may run at any point) Python reports it as "Exception ignored" and goes on. Such a stop is not
lost: its report is left out, and :func:`check`, which the long loops call between chunks and
every output's commit before it renames, raises it again.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator


class Terminated(SystemExit):
    """Raised in the main thread on SIGTERM. A :class:`SystemExit` (not an ``Exception``: no
    ``except Exception`` swallows it): left uncaught it ends the process with status 143 and no
    traceback."""

    def __init__(self) -> None:
        super().__init__(128 + signal.SIGTERM)


#: Depth of :func:`hold` in the main thread, and the exception of a signal that came meanwhile.
_held = 0
_pending: list[type[BaseException]] = []
#: A rule script's label (:func:`announce_stops`): a stop then leaves a line in its job's log.
_label: list[str] = []
#: The exception of the stop a signal asked for, from its coming until :func:`signals_raise` ends.
_asked: list[type[BaseException]] = []


def announce_stops(label: str) -> None:
    """From now on, a SIGINT or SIGTERM first writes ``<label>: interrupted (SIGINT)`` or
    ``<label>: terminated (SIGTERM)`` on stderr (a rule script's job log), then unwinds as usual:
    the log of a job that Ctrl-C or Snakemake stopped says so, after its last progress line."""
    _label[:] = [label]


def _stop(kind: type[BaseException]) -> None:
    first = not _asked
    _asked[:] = [kind]
    if _label and first:
        what = "terminated (SIGTERM)" if kind is Terminated else "interrupted (SIGINT)"
        print(f"{_label[0]}: {what}: its outputs are not written", file=sys.stderr, flush=True)
    if _held:
        _pending.append(kind)  # raised by release()
    else:
        raise kind()


def _on_sigterm(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the clean-up is not cut short
    _stop(Terminated)


def _on_sigint(signum, frame) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _stop(KeyboardInterrupt)


def hold() -> None:
    """Hold the exceptions of Ctrl-C and SIGTERM until :func:`release` (calls nest): between
    creating a temporary and arming its removal (:func:`delaycv.common.atomic.temporary`). Signals
    are handled in the main thread only; elsewhere this does nothing."""
    global _held
    if threading.current_thread() is threading.main_thread():
        _held += 1


def release() -> None:
    """End a :func:`hold`; the last one raises the exception of a signal that came meanwhile."""
    global _held
    if threading.current_thread() is threading.main_thread() and _held:
        _held -= 1
        if not _held and _pending:
            kind = _pending.pop(0)
            _pending.clear()
            raise kind()


def check() -> None:
    """Raise the exception of the stop a signal asked for, if it has come (outside a
    :func:`hold`): where Python swallowed it (module docstring), this raises it again."""
    if _asked and not _held:
        raise _asked[0]()


#: The ``sys.unraisablehook`` that :func:`_quiet_stops` replaced.
_hooks: list = [sys.__unraisablehook__]


def _quiet_stops(unraisable) -> None:
    """``sys.unraisablehook`` while the handlers are installed: an exception Python cannot pass
    on is reported as before, but for the stop a signal asked for, which :func:`check` raises
    again (no traceback: a stop ends with one line)."""
    if not (_asked and isinstance(unraisable.exc_value, _asked[0])):
        _hooks[0](unraisable)


def _install() -> dict[int, object]:
    """Install the handlers (main thread only); return the handlers they replace (and, under
    the key ``None``, the ``sys.unraisablehook``)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous: dict = {}
    for signum, handler, default in (
        (signal.SIGTERM, _on_sigterm, signal.SIG_DFL),
        (signal.SIGINT, _on_sigint, signal.default_int_handler),
    ):
        current = signal.getsignal(signum)
        if current is default:  # not ignored, not someone else's handler
            previous[signum] = current
            signal.signal(signum, handler)
    if previous and sys.unraisablehook is not _quiet_stops:
        previous[None] = _hooks[0] = sys.unraisablehook
        sys.unraisablehook = _quiet_stops
    return previous


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` and SIGINT ``KeyboardInterrupt``;
    the previous handlers come back when it ends, and a stop that came is forgotten."""
    previous = _install()
    try:
        yield
    finally:
        for signum, handler in previous.items():
            if signum is None:
                sys.unraisablehook = handler
            else:
                signal.signal(signum, handler)
        if previous:
            _asked.clear()


def terminate_on_sigterm() -> None:
    """For the rest of the process (a rule script), SIGTERM raises :class:`Terminated` and
    SIGINT ``KeyboardInterrupt``."""
    _install()


def stop_workers(pool) -> None:
    """End the worker processes of ``pool`` (a ``concurrent.futures.ProcessPoolExecutor``) at once
    when this process stops (an error, Ctrl-C, SIGTERM): leaving the pool would otherwise wait for
    every task its workers run, and start those still queued."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(OSError, ValueError):
            process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)
