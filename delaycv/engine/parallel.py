"""Folds in several processes: :func:`run_parallel` (the same result as one process).

The workers come from a fork server (or are spawned where there is none): Python's
multiprocessing starts each by importing the main script again (as ``__mp_main__``), so that what
it is sent may name the script's own classes and functions. A script that calls
``delaycv.evaluate(..., jobs=2)`` at its top level, without ``if __name__ == "__main__":``, would
run again in each worker up to that call, which then fails in a worker still starting. Where
nothing the workers get names the main script (:func:`names_main`: a river learner, a spec, the
engine's own settings), they start without importing it (:func:`_workers_without_main`); where
something does (a learner class written in the script), they import it, and a script that calls
delaycv there is stopped with an error saying so (:func:`refuse_in_starting_worker`).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import pickle
import signal
import sys
import threading
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from delaycv.common import interrupt as _interrupt
from delaycv.common.errors import ConfigError
from delaycv.engine.folds import run_folds
from delaycv.engine.progress import Progress

#: Modules the fork server imports once, so that worker processes start with them loaded.
PRELOAD = (
    "delaycv.engine",
    "river.tree",
    "river.naive_bayes",
    "river.linear_model",
    "river.forest",
    "river.ensemble",
    "river.imblearn",
    "river.preprocessing",
    "river.dummy",
)

#: What a worker process runs with (set once, by the pool's initializer).
_WORKER: dict = {}


def _worker_init(stream, settings, checkpoints, observer_factory, counter) -> None:
    # Ctrl-C reaches every process of the terminal's group: the parent alone answers it (it ends
    # the workers, interrupt.stop_workers), so that a worker prints no traceback of its own
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER.update(
        stream=stream,
        settings=settings,
        checkpoints=checkpoints,
        observer_factory=observer_factory,
        counter=counter,
    )


def _worker_folds(folds: list[int]) -> list:
    w = _WORKER
    counter = w["counter"]

    def progress(k: int) -> None:
        with counter.get_lock():
            counter.value += k

    return run_folds(
        w["stream"],
        w["settings"],
        folds,
        w["checkpoints"],
        observer_factory=w["observer_factory"],
        progress=progress,
    )


def _mp_context():
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(list(PRELOAD))
        _start_fork_server()
        return ctx
    return multiprocessing.get_context("spawn")


def _start_fork_server() -> None:
    """Start multiprocessing's fork server, if it is not running, with SIGINT ignored, as it and
    the workers it forks then stay (an ignored signal stays ignored across exec): a terminal's
    Ctrl-C reaches every process of its group, and the fork server, in its first half second
    (Python's start, then the imports of PRELOAD), printed a traceback of its own. The parent
    alone answers (it ends the workers): a Ctrl-C that comes while the fork server is started
    waits, blocked, and reaches the parent's own handler once it is back."""
    from multiprocessing import forkserver

    handler = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or handler is None:
        forkserver.ensure_running()  # (only the main thread sets handlers)
        return
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


#: what a script that starts workers which import it needs (multiprocessing's own advice)
MAIN_GUARD = (
    'the script\'s calls under if __name__ == "__main__": (each worker process of jobs > 1 '
    "imports the script, to read what it defines), or jobs=1"
)


def names_main(*objects) -> bool:
    """Whether pickling ``objects`` names the main script's module (``__main__``: a class or a
    function defined in the script run), so that a worker must import the script to read them.

    >>> names_main({"class": "tree.HoeffdingTreeClassifier"}, [1, 2])
    False
    """
    try:
        return b"__main__" in pickle.dumps(objects, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # (the pool's own pickling says what fails)
        return True


@contextlib.contextmanager
def _workers_without_main():
    """Workers started within this block do not import the main script (multiprocessing's
    preparation data for a new process, which names it, leaves it out)."""
    from multiprocessing import spawn

    original = spawn.get_preparation_data

    def without_main(name):
        data = original(name)
        data.pop("init_main_from_path", None)
        data.pop("init_main_from_name", None)
        return data

    spawn.get_preparation_data = without_main
    try:
        yield
    finally:
        spawn.get_preparation_data = original


def refuse_in_starting_worker() -> None:
    """Raise a ConfigError where this process is a worker still starting, importing the main
    script, which calls delaycv at its top level (see the module docstring): it would run the
    script's work again in each worker."""
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        script = getattr(sys.modules.get("__mp_main__"), "__file__", None) or "the main script"
        raise ConfigError(
            f"delaycv is called in a worker process of delaycv that is still starting: it "
            f"imports {script} to read the learner or observer the script defines, and the "
            "script calls delaycv at its top level",
            location="argument jobs",
            expected=MAIN_GUARD,
        )


def run_parallel(stream, settings, checkpoints, *, observer_factory=None, reporter=None) -> list:
    """Run the folds of ``settings`` in ``min(settings.jobs, folds)`` processes; outputs in fold
    order.

    Process g runs folds ``folds[g::workers]`` chunk by chunk. Each process gets the stream once
    (pickled), runs whole folds, and sends back the fold's rows, prediction log and observer;
    fold results do not depend on the process, so the concatenation equals a one-process run.
    ``reporter``: a :class:`~delaycv.engine.progress.Progress` (given the total so far) or a
    callable (given the instance-folds done since its last call).
    """
    folds = list(settings.folds)
    workers = min(settings.jobs, len(folds))
    groups = [folds[g::workers] for g in range(workers)]
    # (the stream holds numbers and text, never a name of the script)
    main = names_main(settings, checkpoints, observer_factory)
    # Ctrl-C or SIGTERM acts once the pool and its workers exist: multiprocessing's locks and
    # queues, stopped while being made, leak (its resource tracker's warnings at the end), and
    # a worker being started would be left running, unknown to stop_workers
    _interrupt.hold()
    try:
        ctx = _mp_context()
        counter = ctx.Value("q", 0)
        pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=ctx,
            initializer=_worker_init,
            initargs=(stream, settings, checkpoints, observer_factory, counter),
        )
    except BaseException:
        _interrupt.release()
        raise
    with pool:
        try:
            try:  # the workers start here
                with contextlib.nullcontext() if main else _workers_without_main():
                    futures = [pool.submit(_worker_folds, group) for group in groups]
            finally:
                _interrupt.release()
            _await(futures, counter, reporter)
            outputs = [out for f in futures for out in f.result()]
        except BrokenProcessPool:
            _interrupt.stop_workers(pool)
            raise _broken(main) from None
        except BaseException:
            _interrupt.stop_workers(pool)
            raise
    return sorted(outputs, key=lambda out: out.fold)


def _broken(main: bool) -> ConfigError:
    """The error of a worker process that ended without its folds' results."""
    script = getattr(sys.modules.get("__main__"), "__file__", None)
    if main and script is None:  # (python -c, a notebook: no file for the workers to import)
        return ConfigError(
            "a worker process of the folds ended before its results: the learner or observer "
            "is defined in this interactive session, which worker processes cannot import",
            location="argument jobs",
            expected="the learner's class in a module of its own (a .py file imported here), "
            "or jobs=1",
        )
    if main:
        return ConfigError(
            f"a worker process of the folds ended before its results, having imported {script} "
            "to read the learner or observer the script defines (its error is above)",
            location="argument jobs",
            expected=MAIN_GUARD,
        )
    return ConfigError(
        "a worker process of the folds ended before its results (killed by the system, for "
        "want of memory for instance, or ended by the learner's own code)",
        location="argument jobs",
        expected="fewer processes (jobs), or more memory for them",
    )


def _await(futures, counter, reporter) -> None:
    """Wait until the workers are done, reporting their progress to ``reporter`` (if any) about
    every second; a stop that Python swallowed comes here (:func:`delaycv.common.interrupt.check`)."""
    pending = set(futures)
    done = 0
    while pending:
        _, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
        _interrupt.check()
        if reporter is None:
            continue
        value = counter.value
        if isinstance(reporter, Progress):
            reporter.update(value)
        else:
            reporter(value - done)
            done = value
