"""The folds of a run, chunk by chunk as the stream is read (pure): :func:`run_folds`.

Each chunk of :data:`CHUNK` instances is read once; its x dicts and the releases of the policy
(:class:`~delaycv.protocol.releases.Releases`, which depend on the stream and the policy only) are built
once and used by every fold in turn. Fold states are independent, so the result equals running
the folds one by one. What is held between chunks is the state of the instances whose labels may
still be released (:class:`~delaycv.engine.chunk.Slots`).

With ``threads`` > 1 the folds run each chunk in that many threads of this process (the chunk's
end stays in this thread). That pays for a learner whose own loop lets go of the interpreter's
lock while it runs (a MOA learner's Java loop: :func:`delaycv.engine.learners.folds_in_threads`);
any learner gives the same result in threads, since a fold shares nothing but the chunk, which
its loop only reads. A fold's CPU time is then its thread's.
"""

from __future__ import annotations

import contextlib
import functools
import re
import threading
import time as _time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import numpy as np

from delaycv.common import interrupt
from delaycv.common.errors import ConfigError, DelaycvError
from delaycv.common.words import one_line
from delaycv.data.stream import has_effort
from delaycv.engine.chunk import ChunkView, Slots
from delaycv.engine.fold import INSTANCE, FoldLoop, FoldOutput
from delaycv.metrics.corrected import DAY, Arrivals
from delaycv.protocol.learner_contract import PROBABILITY_EXPECTED, UnusableProbability
from delaycv.protocol.learners import READS_TEXT, for_stream, learner_label
from delaycv.protocol.releases import Releases

#: Instances per chunk of x dicts built from the stream (shared by the folds).
CHUNK = 4096


def run_folds(
    stream,
    settings,
    folds: Sequence[int],
    checkpoints: np.ndarray,
    *,
    observer_factory: Callable | None = None,
    progress: Callable[[int], None] | None = None,
    on_rows: Callable[[list], None] | None = None,
    threads: int = 1,
) -> list[FoldOutput]:
    """Run ``folds`` of ``settings`` (a :class:`~delaycv.protocol.settings.RunSettings`) on ``stream``
    with the checkpoint positions ``checkpoints``; ``on_rows``, if given, receives the table
    rows of every chunk's checkpoints (all folds) as they are made; ``threads``: how many
    threads run the folds' chunks (module docstring)."""
    threads = min(threads, len(folds))
    if threads > 1 and progress is not None:
        progress = _serialized(progress)
    n = len(stream)
    releases = Releases(settings.policy, n, settings.flush)
    slots = Slots()
    positions = [*checkpoints.tolist(), -1]  # -1: no checkpoint left
    effort = has_effort(stream.metadata)  # the effort-aware measures too
    arrivals = None  # the corrected reference's: days of the stream's clock (or positions)
    if settings.corrected:
        arrivals = Arrivals(unit=1 if stream.metadata.get("time") == "position" else DAY)
    clock = _time.thread_time if threads > 1 else _time.process_time
    loops = [
        FoldLoop(settings, f, n, positions, observer_factory, progress, effort, arrivals, clock)
        for f in folds
    ]
    encode = _chunk_encoder(stream, loops, own_loop=observer_factory is None)
    keep = settings.keep_predictions
    times: list = []
    labels: list = []
    held = 0  # the most instances whose state was held at once
    with _fold_threads(threads) as pool:
        for chunk in stream.chunks(CHUNK):
            interrupt.check()  # (a stop Python swallowed: common.interrupt)
            start, k = chunk.start, len(chunk)
            stop = start + k
            if keep:
                times.append(chunk.time)
                labels.append(chunk.label)
            if encode is not None:
                chunk = replace(chunk, records=encode(chunk))
            # the chunk's slots, its releases, and the view the folds read
            slots.extend(chunk, effort)
            if arrivals is not None:
                arrivals.extend(chunk.time, chunk.label_time)
            for loop in loops:
                loop.extend(start, stop)
            view, cand_slots = _chunk_view(chunk, slots, releases, n, settings.flush)
            _run_folds_through(view, slots, loops, settings, start, stop, pool)
            if on_rows is not None:
                _hand_over_rows(loops, on_rows)
            # forget what no fold needs any more
            held = max(held, slots.top - slots.off + 1)
            _forget(slots, loops, releases, start, stop, cand_slots)
    time = np.concatenate(times) if keep else None
    label = np.concatenate(labels) if keep else None
    outputs = [loop.output(time, label) for loop in loops]
    for out in outputs:
        out.held = held
    return outputs


def _chunk_encoder(stream, loops: list[FoldLoop], own_loop: bool) -> Callable | None:
    """What makes a chunk's instances for a learner that takes its own (MOA's; None: the x
    dicts serve): the encoder of the first fold's learner, over the stream's features, made
    once per chunk for every fold. ``own_loop`` is False when the Python loop serves observers."""
    features = list(stream.metadata.get("features") or ())
    categories = functools.cache(stream.categories)  # (asked once, by a MOA learner)
    encoders = [
        for_stream(loop.learner, features, own_loop=own_loop, categories=categories)
        for loop in loops
    ]
    return encoders[0] if encoders else None


def _chunk_view(
    chunk, slots: Slots, releases: Releases, n: int, flush: bool
) -> tuple[ChunkView, np.ndarray]:
    """``(view, cand_slots)``: the chunk's releases recorded in ``slots`` (at the stream's end
    with ``flush``, the releases still pending too) and the view the folds read."""
    start, stop = chunk.start, chunk.start + len(chunk)
    chunk_releases = releases.resolve(start, chunk.time, chunk.label, chunk.label_time)
    cand_slots = slots.record_chunk(start, chunk_releases)
    remaining = None
    if stop == n and flush:
        remaining = releases.remaining()
        slots.record(
            remaining["i"] - slots.off,
            remaining["s"],
            remaining["o"],
            remaining["insp"],
            remaining["due"],
        )
    return ChunkView.build(chunk, chunk_releases, cand_slots, n, remaining), cand_slots


@contextlib.contextmanager
def _fold_threads(threads: int) -> Iterator[ThreadPoolExecutor | None]:
    """The threads that run the folds' chunks (None: this thread alone). On the way out, folds
    not started are cancelled and those running end their chunk."""
    if threads <= 1:
        yield None
        return
    pool = ThreadPoolExecutor(threads, thread_name_prefix="delaycv-fold")
    try:
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _serialized(progress: Callable[[int], None]) -> Callable[[int], None]:
    """``progress`` called by one thread at a time (the folds' threads report to it)."""
    lock = threading.Lock()

    def report(k: int) -> None:
        with lock:
            progress(k)

    return report


def _run_folds_through(
    view: ChunkView, slots: Slots, loops: list, settings, start, stop, pool=None
) -> None:
    """Every fold through the chunk (in the threads of ``pool``, if given), then every fold's
    end of it in this thread: the folds' metric work back to back (its tables and buffers stay
    in the caches: ~0.2 us per fold and instance less than each fold's right after its own
    loop). A learner's failure names its fold and instances."""
    if pool is None:
        for loop in loops:
            try:
                loop.run_chunk(view, slots)
            except Exception as err:
                raise learner_error(err, settings.learner, loop.fold, start, stop) from err
    else:
        _prepare_rows(loops, view, slots)
        running = [(loop, pool.submit(loop.run_chunk, view, slots)) for loop in loops]
        for loop, future in running:
            try:
                future.result()
            except Exception as err:
                raise learner_error(err, settings.learner, loop.fold, start, stop) from err
    for loop in loops:
        loop.end_chunk(view, slots)


def _prepare_rows(loops: list, view: ChunkView, slots: Slots) -> None:
    """What the folds' own loop shares of the chunk, made once before the threads run it
    (``prepare_rows`` of a learner with its own loop: :mod:`~delaycv.protocol.learner_contract`)."""
    learner = loops[0].learner
    prepare = getattr(learner, "prepare_rows", None)
    if prepare is not None and loops[0].run_rows is getattr(learner, "run_rows", None):
        prepare(view, slots)


def _hand_over_rows(loops: list[FoldLoop], on_rows: Callable[[list], None]) -> None:
    """Give ``on_rows`` the table rows the folds made in the chunk (if any)."""
    rows = [row for loop in loops for row in loop.take_rows()]
    if rows:
        on_rows(rows)


def _forget(slots: Slots, loops: list, releases: Releases, start, stop, cand_slots) -> None:
    """Drop the x dicts of the chunk's instances and candidates with nothing left waiting, and
    the slots before the oldest waiting instance once they are as many as the rest (each slot
    is moved at most once on average)."""
    done = np.concatenate((np.arange(start + 1, stop + 1), cand_slots + slots.off))
    slots.forget_x(done, releases.pool["i"])
    oldest = releases.oldest()
    lo = stop + 1 if oldest is None else oldest
    drop = lo - slots.off
    if drop >= max(CHUNK, slots.top - lo + 1):
        for loop in loops:
            loop.drain(slots)  # what is buffered refers to slots: gather it first
            loop.compact(drop)
        slots.compact(drop)


def learner_error(err: Exception, learner_spec, fold: int, start: int, stop: int) -> Exception:
    """A learner that fails while it runs becomes a one-line ConfigError naming the learner, the
    fold and the instance being processed (``start + 1 .. stop``: the chunk's instances, when the
    instance is not known):

    * an answer of ``predict_proba_one`` the engine cannot score
      (:class:`~delaycv.protocol.learner_contract.UnusableProbability`: None, NaN, a value outside [0, 1], a key
      other than the labels 0 and 1);
    * an exception raised below a call of the learner (a parameter river accepted but cannot
      use): the innermost delaycv frame is one that calls learner methods (the loop, the flush,
      the weighted trainer). Other errors stay as they are."""
    if isinstance(err, DelaycvError):
        return err
    label = learner_label(learner_spec)
    if isinstance(err, UnusableProbability):
        at = err.instance if err.instance is not None else getattr(err, INSTANCE, None)
        where = f"at instance {at}" if at is not None else f"at instances {start + 1}..{stop}"
        return ConfigError(
            f"the learner {label} gave no usable probability on fold {fold} {where}: its "
            f"predict_proba_one {err.reason}",
            location="key learner",
            expected=PROBABILITY_EXPECTED,
        )
    package = Path(__file__).resolve().parents[1]  # the delaycv package
    codes = []
    tb = err.__traceback__
    innermost = None
    while tb is not None:
        codes.append(tb.tb_frame.f_code)
        innermost = tb
        tb = tb.tb_next
    ours = [i for i, code in enumerate(codes) if _in_package(code, package)]
    if not ours or ours[-1] == len(codes) - 1:
        return err
    # the compiled loop's frames are named by module and function (delaycv.engine._loop.run_rows)
    if codes[ours[-1]].co_name.rpartition(".")[2] not in (
        "_python_chunk",
        "run_rows",
        "flush",
        "train",
    ):
        return err
    at = getattr(err, INSTANCE, None)
    where = f" (at instance {at})" if at is not None else ""
    return ConfigError(
        f"the learner {label} failed on fold {fold} while processing instances "
        f"{start + 1}..{stop}{where}: {type(err).__name__}: {one_line(str(err))}"
        f"{_raised_at(innermost)}",
        location="key learner",
        expected=learner_expected(err),
    )


def _raised_at(tb) -> str:
    """`` (raised at FILE:LINE, in FUNCTION)`` of the innermost frame of a learner's exception:
    a file of the working directory (a learner of one's own) relative to it, a library's from
    its package (``river/tree/...``), so that one line says where to look."""
    if tb is None:
        return ""
    code = tb.tb_frame.f_code
    path = Path(code.co_filename)
    parts = path.parts
    installed = [m for m in ("site-packages", "dist-packages") if m in parts]
    if installed:
        shown = str(Path(*parts[parts.index(installed[0]) + 1 :]))
    else:
        try:
            shown = str(path.resolve().relative_to(Path.cwd().resolve()))
        except (OSError, ValueError):
            shown = str(path)
    return f" (raised at {shown}:{tb.tb_lineno}, in {code.co_name})"


def learner_expected(err: Exception) -> str:
    """What a learner that failed on a stream's instances should have been; a type error about
    text says what reads a categorical feature (its values are text)."""
    expected = "a learner whose parameters work on this stream"
    if isinstance(err, TypeError) and re.search(r"\bstr\b", str(err)):
        expected += (
            "; a text value reached its arithmetic: a categorical feature's values are text, "
            f"which takes {READS_TEXT}"
        )
    return expected


def _in_package(code, package: Path) -> bool:
    """The frame's code is delaycv's (a compiled module names its source relative to the folder
    that holds the package)."""
    path = Path(code.co_filename)
    if not path.is_absolute():
        path = package.parent / path
    return path.resolve().is_relative_to(package)
