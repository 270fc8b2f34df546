"""Folds in several processes: :func:`run_parallel` (the same result as one process)."""

from __future__ import annotations

import multiprocessing
import signal
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

from delaycv.common import interrupt as _interrupt
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
        return ctx
    return multiprocessing.get_context("spawn")


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
    ctx = _mp_context()
    counter = ctx.Value("q", 0)
    workers = min(settings.jobs, len(folds))
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=ctx,
        initializer=_worker_init,
        initargs=(stream, settings, checkpoints, observer_factory, counter),
    ) as pool:
        try:
            groups = [folds[g::workers] for g in range(workers)]
            # the workers start here: Ctrl-C or SIGTERM acts once each is known to the pool (one
            # being started would be left running, unknown to stop_workers)
            _interrupt.hold()
            try:
                futures = [pool.submit(_worker_folds, group) for group in groups]
            finally:
                _interrupt.release()
            if reporter is not None:
                _report(futures, counter, reporter)
            outputs = [out for f in futures for out in f.result()]
        except BaseException:
            _interrupt.stop_workers(pool)
            raise
    return sorted(outputs, key=lambda out: out.fold)


def _report(futures, counter, reporter) -> None:
    """Report the workers' progress about every second until they are done."""
    pending = set(futures)
    done = 0
    while pending:
        _, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
        value = counter.value
        if isinstance(reporter, Progress):
            reporter.update(value)
        else:
            reporter(value - done)
            done = value
