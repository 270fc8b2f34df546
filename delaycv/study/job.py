"""The frame of every rule script's job: ``with stage_job(snakemake, "compare") as job:``.

A rule script reads its inputs and params, calls its stage and is done; the frame around it is
this one call (:func:`stage_job`), the same for every stage:

1. the job's log: stdout and stderr go to the rule's ``log:`` file, line by line;
2. SIGTERM (Snakemake stopping the job) unwinds as an exception: temporaries are removed, exit
   143 (:func:`delaycv.common.interrupt.terminate_on_sigterm`);
3. an error ends the job with one line in its log, exit 2 (:func:`one_line_errors`);
4. the code that runs is the code hashed: the package's digest for the stage must be the one the
   workflow computed (:func:`delaycv.study.digests.check_code`), before anything else of delaycv
   is imported;
5. once the block is done, its outputs written and closed, the job ends without Python's
   teardown (:func:`end_job`).

The command line ends with :func:`end_job` too. This module imports nothing but the standard
library, :mod:`delaycv.common` (errors, signals) and :mod:`delaycv.study.digests` (light): a job
pays nothing for it before its own imports.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from delaycv.common.interrupt import terminate_on_sigterm
from delaycv.study.digests import check_code

#: Set to ``1`` to keep Python's teardown at the end of a rule script's job (:func:`end_job`),
#: e.g. in a harness that runs the script inside its own interpreter and goes on after it.
KEEP_TEARDOWN_VARIABLE = "DELAYCV_KEEP_TEARDOWN"


class Job:
    """A running job: :meth:`say` writes a line of its log with the seconds since it started."""

    def __init__(self) -> None:
        self.start = time.perf_counter()

    def say(self, message: str) -> None:
        """One line of the log: ``[  1.2 s] message``."""
        print(f"[{time.perf_counter() - self.start:6.1f} s] {message}")


@contextmanager
def stage_job(snakemake: Any, stage: str, *, label: str | None = None) -> Iterator[Job]:
    """The frame of a rule script of ``stage`` (module docstring), around the ``with`` block.

    Parameters
    ----------
    snakemake
        The object Snakemake gives a rule script: its ``log[0]`` is the job's log, its
        ``params.code`` the digest the workflow computed for the stage.
    stage
        The stage (a module of :mod:`delaycv.stages`).
    label
        What the job's error lines begin with (default: ``stage``; an evaluation names its
        dataset, learner, seed and policy).

    Yields
    ------
    Job
        Its :meth:`Job.say` writes a timed line of the log.
    """
    sys.stderr = sys.stdout = open(snakemake.log[0], "w", buffering=1)  # noqa: SIM115
    terminate_on_sigterm()  # a stopped job (SIGTERM) removes its temporaries and exits with 143
    one_line_errors(stage if label is None else label)  # an error: one line in the log, exit 2
    check_code(stage, snakemake.params.code)  # the code that runs is the code hashed
    yield Job()
    end_job()  # outputs written and closed: no teardown


def one_line_errors(label: str) -> None:
    """Make a rule script's job end on an error with one line in its log, not a traceback:
    ``<label>: error: <message>`` for a :class:`~delaycv.common.errors.DelaycvError` (a learner that fails
    mid-run, a bad setting) or an ``OSError`` (a full disk, a read-only folder: the file and the
    reason), exit status 2; the engine's warnings as ``<label>: warning: <message>``; a SIGINT or
    SIGTERM as ``<label>: interrupted (SIGINT)`` / ``terminated (SIGTERM)`` (``interrupt``), and
    no traceback after it (exit 130 and 143). Any other exception keeps its traceback (a defect
    to report). :func:`stage_job` calls it first, so that a job of other code than the workflow's
    is one line too; what a ``with`` block writes is removed as the error leaves it."""
    import logging

    from delaycv.common.errors import DelaycvError
    from delaycv.common.interrupt import announce_stops

    logging.basicConfig(level=logging.WARNING, format=f"{label}: warning: %(message)s")
    announce_stops(label)  # a job stopped by Ctrl-C or Snakemake: a line in its log too
    previous = sys.excepthook

    def hook(kind, error, trace) -> None:
        if isinstance(error, KeyboardInterrupt):  # Ctrl-C: its line is written (announce_stops)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(130)
        if isinstance(error, DelaycvError):
            text = str(error)
        elif isinstance(error, OSError):
            where = error.filename if error.filename is not None else "a file"
            text = f"{where}: {error.strerror or error}"
        else:
            previous(kind, error, trace)
            return
        print(f"{label}: error: {' '.join(text.split())}", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(2)

    sys.excepthook = hook


def end_job(code: int = 0) -> None:
    """End a rule script's job (or the ``delaycv`` command) once its outputs are written and
    closed: flush its log and leave the process at once with exit status ``code``, without
    Python's teardown (freeing every object of pandas, pyarrow, matplotlib, river and a JVM's
    handles, ~0.1-0.3 s of CPU a job, which the end of the process does anyway). With
    ``DELAYCV_KEEP_TEARDOWN=1`` it only flushes, and the process ends as usual."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is not None:
            stream.flush()
    if os.environ.get(KEEP_TEARDOWN_VARIABLE, "") in ("", "0"):
        os._exit(code)
