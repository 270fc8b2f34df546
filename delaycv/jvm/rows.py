"""The Java fold loop of MOA learners (``FoldRows.java``), when it was built from the source
beside it; :func:`run_rows` is its Python side, with the signature of the compiled Cython loop's.

The fold loop has three forms, with the same outputs bit for bit: Python
(:meth:`delaycv.engine.fold.FoldLoop._python_chunk`), Cython (:mod:`delaycv.engine.compiled`), which
call a learner's ``predict_proba_one`` and ``learn_one``; and, for MOA learners, Java: the same
steps in the JVM, so that no instance crosses between Python and Java (about 5 us per fold and
instance less with HoeffdingTree). Python hands over each chunk's arrays once (instances,
candidates: a ``FoldRows.Chunk``) and each fold's once per chunk (labels, sides, weights: a
``FoldRows.Fold``); Java hands back the evaluation keys before each checkpoint and the sides and
probabilities of the rows it ran. The engine passes its fold in, whose ``checkpoint`` and
``note_instance`` this loop calls (:mod:`delaycv.protocol.learner_contract`, "A learner's own
loop"): nothing of the engine is imported here.

:data:`STATUS` says which runs and why. The Java loop is not used when it was not built
(``python -m delaycv.jvm.build``, run by ``make venv``: it needs javac), when the jar was built
from another ``FoldRows.java`` or does not hold the classes the build makes (read before the JVM
starts), when the class the JVM loads does not carry the source's SHA-256 (read once the JVM
runs: :func:`usable`), with an observer (the MOA CSV export: the Python loop serves observers),
or under ``DELAYCV_PURE_PYTHON=1``. A jar that is not used is a warning of one line (the logger
``delaycv.jvm``) saying how to rebuild.
"""

from __future__ import annotations

from array import array

import numpy as np

from delaycv.common import native
from delaycv.jvm import machine
from delaycv.jvm.build import REBUILD, SOURCE, TARGET, jar_status, log

USABLE, STATUS = jar_status()
#: whether the class the JVM loaded was checked (:func:`usable`)
_loaded: list[bool] = []


def status() -> str:
    """Which loop MOA learners run, and why."""
    return STATUS


def usable() -> bool:
    """Whether MOA learners run the Java loop: the jar passed the checks before the JVM started
    (:data:`USABLE`), and the class the running JVM loads carries the SHA-256 of the source beside
    it (checked once; else a one-line warning and the Python loop)."""
    global USABLE, STATUS
    if not USABLE or _loaded:
        return USABLE
    try:
        from jpype import JClass

        compiled = str(JClass("delaycv.jvm.FoldRows").SOURCE_SHA256)
    except Exception as err:  # the class is not there, or cannot be linked: no Java trace
        compiled = f"none ({type(err).__name__})"
    _loaded.append(True)
    if compiled != native.source_digest(SOURCE):
        why = (
            f"gives the JVM a FoldRows whose source SHA-256 is {compiled[:16]}, not that of the "
            "FoldRows.java beside it"
        )
        log.warning("%s %s: %s", TARGET.name, why, REBUILD)
        USABLE, STATUS = False, f"the Python loop: {TARGET.name} {why}"
    return USABLE


_java: dict = {}
_chunk: list = []  # [view, slots, its Java arrays]: the chunk every fold runs in turn
_held: list = []  # [(slots, the Java array of its instances by slot, slots.off then)]


def _classes() -> dict:
    if not _java:
        from jpype import JArray, JByte, JClass, JDouble, JInt, JLong

        _java.update(
            FoldRows=JClass("delaycv.jvm.FoldRows"),
            bytes=JArray(JByte),
            ints=JArray(JInt),
            longs=JArray(JLong),
            doubles=JArray(JDouble),
        )
    return _java


class ChunkInstances(list):
    """A chunk's instances: their Python handles (what the engine's slots hold; the flush of the
    last instance trains through them) and ``java``, the Java array that the Java loop reads, so
    that the slots' instances never travel from Python to Java one by one."""

    __slots__ = ("java",)


def instances(header, values: np.ndarray) -> ChunkInstances:
    """The instances of the rows of ``values`` (features then the class), made in one call."""
    j = _classes()
    width = values.shape[1]
    flat = j["doubles"](np.ascontiguousarray(values, dtype=np.float64).reshape(-1))
    made = j["FoldRows"].instances(header, flat, width)
    out = ChunkInstances(made)
    out.java = made
    return out


def _small(values) -> object:
    return _classes()["bytes"](np.asarray(values, dtype=np.int8))


def _slot_instances(view, slots):
    """The Java array of the instances by slot (instance ``slots.off + s`` at ``s``): the
    previous chunk's array without the slots dropped since, then this chunk's instances."""
    held = _held[0] if _held and _held[0][0] is slots else None
    chunk = view.records.java
    if held is None:
        window = chunk
    else:
        _, previous, off = held
        window = _classes()["FoldRows"].window(previous, slots.off - off, chunk)
    _held[:] = [(slots, window, slots.off)]
    return window


def _chunk_arrays(view, slots) -> dict:
    """The Java record of the chunk ``view`` (``FoldRows.Chunk``, shared by the folds; made by
    the first) and the Java arrays of the observed labels the folds give."""
    if _chunk and _chunk[0] is view and _chunk[1] is slots:
        return _chunk[2]
    j = _classes()
    arrays = {
        "chunk": j["FoldRows"].Chunk(
            view.start,
            view.start - slots.off,
            _slot_instances(view, slots),
            j["ints"](np.asarray(view.cand_at, dtype=np.int32)),
            j["ints"](np.asarray(view.cand_slot, dtype=np.int32)),
            _small(view.cand_side),
            j["longs"](np.asarray(view.cand_key, dtype=np.int64)),
        ),
        "labels": {},  # id of a list of observed labels -> (the list, its Java array)
    }
    _chunk[:] = [view, slots, arrays]
    return arrays


def prepare_chunk(view, slots) -> None:
    """Make the Java record of the chunk ``view`` that every fold's loop reads (a learner's
    ``prepare_rows``: called once before the folds run the chunk in threads, which then only
    read it)."""
    _chunk_arrays(view, slots)


def _labels(arrays: dict, values: list):
    got = arrays["labels"].get(id(values))
    if got is None or got[0] is not values:
        got = arrays["labels"][id(values)] = (values, _small(values))
    return got[1]


class _FoldChunk:
    """One fold's Java arrays for one chunk, and their record (``FoldRows.Fold``)."""

    __slots__ = ("view", "side", "p1", "keys", "counters", "record")

    def __init__(self, fold, view, arrays: dict, state) -> None:
        j = _classes()
        self.view = view
        self.side = _small(fold.side)
        self.p1 = j["doubles"](view.k)
        self.keys = j["longs"](len(view.cand_slot) + view.k)
        self.counters = j["longs"](8)
        self.record = j["FoldRows"].Fold(
            fold.learner.model,
            fold.threshold,
            fold.trained_only,
            _labels(arrays, state.cand_observed),
            _labels(arrays, state.at_once_n),
            _labels(arrays, state.at_once_p),
            j["longs"](np.frombuffer(fold.w, dtype=np.int64)),
            self.side,
            self.p1,
            self.keys,
            self.counters,
        )


# counters (FoldRows' indices, then the row where an exception left the loop)
C, EVALUATED, SKIPPED, NO_PROBABILITY, VOTES_AS_CLASS, KEYS, BEFORE, ROW = range(8)


def run_rows(fold, view, slots, lo: int, hi: int, state) -> None:
    """Rows ``lo .. hi - 1`` of the chunk ``view`` for ``fold`` (the engine's fold loop, with a
    MOA learner and no observer), as :func:`delaycv.engine._loop.run_rows` runs them: the Java
    loop runs them up to each checkpoint, and the fold's ``checkpoint`` is taken there. A Java
    exception is marked with its instance (the fold's ``note_instance``); one that is Java's
    ``OutOfMemoryError`` becomes the heap's one-line error."""
    try:  # (the chunk's and the fold's Java arrays: made at the chunk's first rows)
        arrays = _chunk_arrays(view, slots)
        mine = _fold_chunk(fold, view, arrays, state)
    except Exception as err:
        if machine.is_out_of_memory(err):
            raise machine.out_of_memory() from None
        raise
    run = _classes()["FoldRows"].run
    chunk, record, counters = arrays["chunk"], mine.record, mine.counters
    start = view.start
    j0 = start - slots.off
    i = lo
    while i < hi:
        keys_before = int(counters[KEYS])
        _counters_in(counters, state)
        # the Java call stays in this frame, which names a learner's failure (learner_error)
        try:
            stop = int(run(chunk, record, i, hi, state.checkpoint))
        except Exception as err:
            if machine.is_out_of_memory(err):
                raise machine.out_of_memory() from None
            fold.note_instance(err, start + 1 + int(counters[ROW]))
            raise
        _counters_out(counters, state, fold)
        _read_rows(fold, mine, keys_before, int(counters[KEYS]), j0, i, stop)
        m = start + stop
        if m == state.checkpoint:
            state.evaluated = fold.checkpoint(
                view, slots, m, view.times[stop - 1], state.evaluated, int(counters[BEFORE]),
                state.skipped, state.c0,
            )  # fmt: skip
            state.checkpoint = fold.checkpoints[fold.next_checkpoint]
        i = stop


def _fold_chunk(fold, view, arrays: dict, state) -> _FoldChunk:
    """The fold's Java arrays for the chunk ``view`` (made at its first rows, kept on the fold
    as ``java_chunk``)."""
    mine = getattr(fold, "java_chunk", None)
    if mine is None or mine.view is not view:
        mine = fold.java_chunk = _FoldChunk(fold, view, arrays, state)
    return mine


def _counters_in(counters, state) -> None:
    """The loop's state (``state``: the fold's counts so far) into the Java counters."""
    counters[C], counters[EVALUATED] = state.c, state.evaluated
    counters[SKIPPED], counters[NO_PROBABILITY] = state.skipped, state.no_probability


def _counters_out(counters, state, fold) -> None:
    """The Java counters back into the loop's state, and the votes read as a class into the
    fold's learner (that counter then reset)."""
    state.c = int(counters[C])
    state.evaluated = int(counters[EVALUATED])
    state.skipped = int(counters[SKIPPED])
    state.no_probability = int(counters[NO_PROBABILITY])
    fold.learner.votes_as_class += int(counters[VOTES_AS_CLASS])
    counters[VOTES_AS_CLASS] = 0


def _read_rows(fold, mine: _FoldChunk, keys_before: int, n_keys: int, j0: int, i: int, stop: int):
    """What Python reads of rows ``i .. stop - 1`` run: the evaluation keys the Java loop added
    (``keys_before .. n_keys - 1``), the sides and the probabilities of the rows."""
    if n_keys > keys_before:
        fold.ev_key.frombytes(memoryview(mine.keys)[keys_before:n_keys].tobytes())
    fold.side[j0 + 1 + i : j0 + 1 + stop] = memoryview(mine.side)[
        j0 + 1 + i : j0 + 1 + stop
    ].tolist()
    fold.p1[j0 + 1 + i : j0 + 1 + stop] = array("d", memoryview(mine.p1)[i:stop].tobytes())
