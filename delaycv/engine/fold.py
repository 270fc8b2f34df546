"""One fold's loop over the stream (pure): :class:`FoldLoop`.

For each instance m of a chunk, in stream order (the engine's docstring states the rules):

1. :meth:`~FoldLoop._python_chunk` (or the compiled loop: :meth:`~FoldLoop.run_chunk` chooses)
   releases the candidates due at m whose side is the one this fold predicted: each is scored
   (its key goes to the evaluation buffer) and trained on;
2. predicts m: ``P1 = p(1) / sum(p)`` (0.5 without probabilities: an empty dict or zeros,
   counted in ``no_probability``), positive iff ``P1 > threshold``; an answer the engine cannot score
   (``None``, NaN, a value outside [0, 1], a key other than the labels 0 and 1) raises
   :class:`~delaycv.protocol.learner_contract.UnusableProbability` (:func:`~delaycv.protocol.learner_contract.positive_probability`
   decides; :func:`read_probability`'s fast path computes the same value for the usual answers);
3. applies the policy's outcome for the predicted side: released at once (scored, trained) or
   left pending in the fold's slot (the side it waits on);
4. at a checkpoint, :meth:`~FoldLoop.checkpoint` marks the counts (the metric values of all the
   chunk's checkpoints are computed together at the chunk's end, :meth:`~FoldLoop.end_chunk`,
   which the run calls once every fold has run the chunk); with an observer,
   :meth:`~FoldLoop.observe_instance` tells it the instance is done.

Evaluations are buffered as keys ``2 i + s`` (instance i predicted on side s) and handed to the
metric states in bulk (:meth:`~FoldLoop.drain`), with the labels, weights and probabilities
gathered from the slots with numpy; on a stream with an effort, also to the fold's
:class:`~delaycv.metrics.effort.EffortCurve` (the effort-aware measures), with the efforts.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import time as _time
from array import array
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import count, islice, repeat
from typing import Any

import numpy as np
import pandas as pd

from delaycv import metrics as _metrics
from delaycv.engine import compiled
from delaycv.engine.chunk import ChunkView, Slots, at_once
from delaycv.engine.learners import make_learner
from delaycv.engine.progress import PROGRESS_BLOCK
from delaycv.metrics.corrected import Arrivals, CorrectedState, Disclosure
from delaycv.metrics.effort import EffortCurve
from delaycv.protocol.learner_contract import positive_probability, trainer
from delaycv.protocol.validation import INSPECTION, NOISE, fold_rng, learner_seed

#: Evaluations buffered per fold before they are handed to the metric states between checkpoints.
FLUSH_EVERY = 65536
#: The attribute an exception raised inside a fold's loop gets: the instance being processed
#: (:func:`delaycv.engine.folds.learner_error` names it).
INSTANCE = "delaycv_instance"


def note_instance(err: BaseException, m: int) -> None:
    """Mark ``err``, raised while instance ``m`` was processed, with ``m`` (:data:`INSTANCE`;
    not for an exception that takes no attributes)."""
    with contextlib.suppress(AttributeError, TypeError):
        setattr(err, INSTANCE, m)


def read_probability(proba: Any, m: int) -> float | None:
    """P(1) of the answer ``proba`` of ``predict_proba_one`` on instance ``m``: ``p(1) / sum(p)``,
    or None when it gives no probability (the loop reads 0.5). The usual answers (a dict or
    Counter keyed by 0/1 with numbers in [0, 1] summing to a float) on a fast path, all others
    checked by :func:`~delaycv.protocol.learner_contract.positive_probability` (the same value,
    or an error)."""
    total = None
    tp = type(proba)
    if tp is dict or tp is Counter:
        try:
            p0 = proba.get(0, 0.0)
            p1 = proba.get(1, 0.0)
            if 0.0 <= p0 <= 1.0 and 0.0 <= p1 <= 1.0 and len(proba) == (0 in proba) + (1 in proba):
                total = sum(proba.values())
        except Exception:  # values that do not compare or add: checked below
            total = None
    if type(total) is float:
        return p1 / total if total > 0 else None
    return positive_probability(proba, m)


@dataclass(slots=True)
class FoldOutput:
    """What a fold gives back (picklable): its table rows, prediction log, observer, final
    counts (``info``) and the most instances whose state the run held at once (``held``)."""

    fold: int
    rows: list
    predictions: pd.DataFrame | None
    observer: Any
    info: dict
    held: int = 0


@dataclass(slots=True)
class RowState:
    """What the loop of one chunk carries from one block of instances to the next: this fold's
    observed labels of the chunk (``at_once_n``, ``at_once_p``: released at once when predicted
    on side 0, 1, else -1; ``cand_observed``: the candidates'), the next candidate ``c``, the
    counts ``evaluated``, ``skipped`` and ``no_probability`` (predictions without a
    probability), the ``checkpoint`` position to come, and the fold's CPU time ``c0`` when
    the chunk began."""

    at_once_n: list
    at_once_p: list
    cand_observed: list
    c: int
    evaluated: int
    skipped: int
    checkpoint: int
    c0: float
    no_probability: int = 0


class FoldLoop:
    """The state of one fold: learner, metric states, the per-instance state of the instances
    whose labels may still be released (slots aligned with :class:`~delaycv.engine.chunk.Slots`),
    counters and table rows. A learner's own loop (``run_rows``: the Java loop of MOA learners)
    is given the fold, and calls its :meth:`checkpoint` and :meth:`note_instance`
    (:mod:`delaycv.protocol.learner_contract`)."""

    #: mark an exception raised while instance m was processed (:func:`note_instance`)
    note_instance = staticmethod(note_instance)

    def __init__(
        self,
        settings,
        fold: int,
        n: int,
        checkpoints: list[int],
        observer_factory: Callable | None,
        progress: Callable[[int], None] | None,
        effort: bool = False,
        arrivals: Arrivals | None = None,
        clock: Callable[[], float] = _time.process_time,
    ) -> None:
        c0 = clock()
        #: the fold's CPU clock: the process's, or its thread's when the folds run in threads
        self.clock = clock
        self.cpu = 0.0
        self.fold = fold
        self.n = n
        self.settings = settings
        self.learner = make_learner(
            settings.learner,
            seed=learner_seed(settings.seed, fold, settings.same_learner_seed),
        )
        self.train_weighted = trainer(self.learner)
        self.metrics_observed = _metrics.Metrics(settings.estimator)
        self.metrics_true = _metrics.Metrics(settings.estimator)
        # the effort-aware measures (both references), on a stream with an effort
        self.effort_curve = EffortCurve(settings.effort_scope) if effort else None
        # the corrected reference (with the run's arrivals and fix times)
        self.corrected = None
        if arrivals is not None:
            disclosure = Disclosure.of(settings.policy)
            self.corrected = CorrectedState(settings.estimator, disclosure, arrivals)
        # the evaluations since the last drain, in release order: the key 2 i + s of the
        # released label (instance i, predicted side s), as machine values
        self.ev_key = array("q")
        self.buffered = 0  # evaluations handed to the metric states since their last snapshot
        # checkpoints of this chunk whose rows wait for their metric values (computed for all of
        # them at once at the chunk's end): (evaluations buffered at the checkpoint, the row's
        # counts without trained and weight)
        self.marks: list = []
        self.checkpoints = checkpoints
        self.next_checkpoint = 0  # index in checkpoints
        self.progress = progress
        self.threshold = settings.threshold
        self.trained_only = settings.validation.trained_only
        self.flush_at_end = settings.flush
        self.timing = settings.timing
        self.measure_memory = settings.measure_memory
        self.observer = observer_factory(fold) if observer_factory is not None else None
        self._choose_loop(settings)
        self._open_random_streams(settings, fold)
        self._open_slots(settings, n)
        self.evaluated = self.skipped = self.trained = 0
        self.no_probability = 0  # predictions without a probability (read as 0.5)
        self.weight_sum = 0.0
        self.rows: list = []
        self.cpu += self.clock() - c0

    def _choose_loop(self, settings) -> None:
        """Which loop runs the fold's chunks: the compiled loop (``compiled``) where it is
        built, a MOA learner's Java loop (delaycv.jvm.rows) where it is built, else (and always
        for an observer) the Python loop; whether the observer takes ``cpu_seconds``."""
        self.observer_cpu = False  # the observer's on_instance takes cpu_seconds
        self.run_rows = None
        self.java_chunk = None  # the Java loop's arrays of the chunk it runs
        if self.observer is None:
            self.run_rows = getattr(self.learner, "run_rows", None)
            if self.run_rows is None and compiled.LOOP is not None:
                self.run_rows = compiled.LOOP.run_rows
        if self.observer is not None and settings.timing:
            try:
                params = inspect.signature(self.observer.on_instance).parameters
                self.observer_cpu = "cpu_seconds" in params
            except (TypeError, ValueError):
                self.observer_cpu = False

    def _open_random_streams(self, settings, fold: int) -> None:
        """The fold's random streams (training weights, prediction noise, inspection errors),
        drawn chunk by chunk in stream order."""
        self.draw_weights = settings.validation.weight_draws(fold, settings.seed)
        self.noise = settings.prediction_noise
        self.noise_rng = fold_rng(settings.seed, fold, NOISE) if self.noise > 0 else None
        self.inspection = settings.policy.inspection_error
        self.insp_rng = fold_rng(settings.seed, fold, INSPECTION) if self.inspection > 0 else None

    def _open_slots(self, settings, n: int) -> None:
        """The empty per-instance state, and the prediction log of the ``n`` instances when
        predictions are kept.

        Per instance while its label may be released (slot = instance - slots.off): the
        predicted side (2: not queued), P1, the training weight, the prediction noise flip and
        the inspection flip. Machine values, or a list of the shared small ints 0, 1, 2 (the
        sides, read at every candidate: CPython specialises list subscripts): pending labels
        cost no Python object, so nothing long-lived is allocated between the learner's calls
        (long-lived tuples slowed the learner's own calls by a few %: more work for the
        garbage collector)."""
        self.side: list = []
        self.p1 = array("d")
        self.w = array("q")
        self.flip = bytearray() if self.noise_rng is not None else None
        self.insp = bytearray() if self.insp_rng is not None else None
        self.keep = settings.keep_predictions
        if self.keep:
            self.log_obs = np.full(n, -1, dtype=np.int8)
            self.log_at = np.full(n, np.nan, dtype=np.float64)
            self.log_p1 = np.zeros(n, dtype=np.float64)
            self.log_w = np.zeros(n, dtype=np.float64)
            self.log_flip = np.zeros(n, dtype=np.int8)

    # ------------------------------------------------------------------ slots

    def extend(self, start: int, stop: int) -> None:
        """Add the slots of instances start+1 .. stop (drawing their weights and flips)."""
        k = stop - start
        self.side.extend(repeat(2, k))
        self.p1.frombytes(bytes(8 * k))
        w = self.draw_weights(start, stop)
        self.w.frombytes(w.astype(np.int64).tobytes())
        if self.flip is not None:
            flip = (self.noise_rng.random(k) < self.noise).view(np.uint8)
            self.flip.extend(flip.tobytes())
        if self.insp is not None:
            self.insp.extend((self.insp_rng.random(k) < self.inspection).tobytes())
        if self.keep:
            self.log_w[start:stop] = w
            if self.flip is not None:
                self.log_flip[start:stop] = flip

    def compact(self, drop: int) -> None:
        """Forget the first ``drop`` slots."""
        for column in (self.side, self.p1, self.w, self.flip, self.insp):
            if column is not None:
                del column[:drop]

    def inspected(self, observed: np.ndarray, insp: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """Observed labels with this fold's inspection errors (where ``insp``: truth expiries)."""
        if self.insp is None or not len(observed):
            return observed
        flips = np.frombuffer(self.insp, dtype=np.uint8)[slots].astype(bool) & insp
        return observed ^ flips.view(np.int8)

    # ------------------------------------------------------------------ the loop

    def run_chunk(self, view: ChunkView, slots: Slots) -> None:
        """Process the instances of one chunk: release, predict, apply the policy, checkpoint;
        by blocks of the compiled loop (``run_rows``) where it runs, else in Python
        (:meth:`_python_chunk`)."""
        c0 = self.clock()
        j0 = view.start - slots.off  # the slot of instance start + 1, minus 1
        if self.insp is None:
            at_once_n, at_once_p = view.at_once
            observed = (at_once_n, at_once_p, view.cand_observed)
        else:
            observed = self._inspected_chunk(view, j0)
        block = view.k if self.progress is None else PROGRESS_BLOCK  # progress after each block
        if self.run_rows is not None:
            self._compiled_chunk(view, slots, observed, block, c0)
        else:
            self._python_chunk(view, slots, j0, observed, block, c0)
        self.cpu += self.clock() - c0

    def _compiled_chunk(
        self, view: ChunkView, slots: Slots, observed: tuple, block: int, c0: float
    ) -> None:
        """The chunk by blocks of the compiled (or Java) loop ``run_rows``, which carries its
        counts in a :class:`RowState`; ``observed`` is the chunk's observed labels (released
        at once on side 0, 1; the candidates')."""
        k, progress = view.k, self.progress
        at_once_n, at_once_p, cand_observed = observed
        checkpoint = self.checkpoints[self.next_checkpoint]
        state = RowState(
            at_once_n,
            at_once_p,
            cand_observed,
            0,
            self.evaluated,
            self.skipped,
            checkpoint,
            c0,
            self.no_probability,
        )
        for lo in range(0, k, block):
            hi = min(k, lo + block)
            self.run_rows(self, view, slots, lo, hi, state)
            if progress is not None:
                progress(hi - lo)
        self.evaluated, self.skipped = state.evaluated, state.skipped
        self.no_probability = state.no_probability

    def _instance_rows(self, view: ChunkView, j0: int, at_once_n, at_once_p):
        """The chunk's instances for the Python loop: for instance m in slot j, (m, j, its time
        t, x, label y, observed labels if released at once (predicted 0, 1), training weight w,
        noise flip)."""
        k = view.k
        weights = self.w[j0 + 1 : j0 + 1 + k].tolist()
        flips = repeat(False) if self.flip is None else self.flip[j0 + 1 : j0 + 1 + k]
        return zip(  # noqa: B905 (equal lengths; the counts end with the lists)
            count(view.start + 1),
            count(j0 + 1),
            view.times,
            view.records,
            view.labels,
            at_once_n,
            at_once_p,
            weights,
            flips,
        )

    def _python_chunk(
        self, view: ChunkView, slots: Slots, j0: int, observed: tuple, block: int, c0: float
    ) -> None:
        """The chunk in Python, instance by instance (the loop that serves observers), in the
        four steps of the module docstring; P(1) read by :func:`read_probability`."""
        start, k, progress = view.start, view.k, self.progress
        at_once_n, at_once_p, cand_observed = observed
        # locals for the hot loop
        threshold, trained_only = self.threshold, self.trained_only
        predict, probability = self.learner.predict_proba_one, read_probability
        learn = self.learner.learn_one
        train_weighted = self.train_weighted
        put_key = self.ev_key.append
        observing = self.observer is not None
        on_eval = self.observer.on_evaluation if observing else None
        side_of, p1_of, w_of, x_of = self.side, self.p1, self.w, slots.x_of
        cand_at, cand_slot = view.cand_at, view.cand_slot
        cand_side, cand_key = view.cand_side, view.cand_key
        c = 0  # the next candidate
        due = cand_at[0]  # its position
        evaluated, skipped, no_probability = self.evaluated, self.skipped, self.no_probability
        checkpoint = self.checkpoints[self.next_checkpoint]
        rows = self._instance_rows(view, j0, at_once_n, at_once_p)
        m = start + 1  # the instance being processed (named if the learner fails)
        try:
            for lo in range(0, k, block):
                for m, j, t, x, y, now_n, now_p, w, flip in islice(rows, block):
                    evaluated_before = evaluated
                    # 1. release the candidates due at m that wait on the side this fold predicted
                    while due == m:
                        slot = cand_slot[c]
                        if side_of[slot] == cand_side[c]:
                            put_key(cand_key[c])
                            evaluated += 1
                            w_i = w_of[slot]
                            if w_i == 1:
                                learn(x_of[slot], cand_observed[c])
                            elif w_i > 0:
                                train_weighted(x_of[slot], cand_observed[c], w_i)
                            if observing:
                                self.observe_release(
                                    on_eval, slots, m, t, slot, cand_side[c], cand_observed[c]
                                )
                        c += 1
                        due = cand_at[c]
                    # 2. predict m: P1 = p(1) / sum(p), 0.5 without a probability
                    p1 = probability(predict(x), m)
                    if p1 is None:
                        p1 = 0.5
                        no_probability += 1
                    p1_of[j] = p1
                    if p1 > threshold:
                        pred, observed = 1, now_p
                    else:
                        pred, observed = 0, now_n
                    # 3. the policy's outcome: released now (scored, trained), or pending
                    if trained_only and w == 0:
                        skipped += 1
                    elif observed >= 0:
                        put_key(2 * m + pred)
                        evaluated += 1
                        if w == 1:
                            learn(x, observed)
                        elif w > 0:
                            train_weighted(x, observed, w)
                        if observing:
                            on_eval(m, t, 1 - pred if flip else pred, p1, observed, y, w)
                    else:
                        side_of[j] = pred
                    # 4. checkpoint, observer
                    if m == checkpoint:
                        evaluated = self.checkpoint(
                            view, slots, m, t, evaluated, evaluated_before, skipped, c0
                        )
                        checkpoint = self.checkpoints[self.next_checkpoint]
                    elif observing:
                        self.observe_instance(m, t, c0)
                if progress is not None:
                    progress(min(block, k - lo))
        except Exception as err:
            note_instance(err, m)
            raise
        self.evaluated, self.skipped, self.no_probability = evaluated, skipped, no_probability

    def _inspected_chunk(self, view: ChunkView, j0: int) -> tuple[list, list, list]:
        """The chunk's observed labels (released at once on each side, candidates) with this
        fold's inspection errors."""
        releases = view.releases
        chunk_slots = np.arange(j0 + 1, j0 + 1 + view.k)
        now = [
            at_once(releases, s, self.inspected(releases.own_o[s], releases.own_in[s], chunk_slots))
            for s in (0, 1)
        ]
        cand = self.inspected(releases.cand["o"], releases.cand["insp"], view.cand_slots)
        return now[0], now[1], cand.tolist()

    def checkpoint(self, view, slots, m, t, evaluated, evaluated_before, skipped, c0) -> int:
        """Checkpoint m (after the flush at the last instance, if asked): the observer's
        instance call, then the row's counts now (its metric values at the chunk's end;
        ``evaluated_now``: an evaluation while instance m was processed, the flush included).
        Returns the evaluations counted so far."""
        if m == self.n and self.flush_at_end:
            evaluated += self.flush(m, t, slots, view.remaining)
        evaluated_now = evaluated > evaluated_before
        if self.observer is not None:
            self.observe_instance(m, t, c0)
        cpu = self.cpu + self.clock() - c0 if self.timing else math.nan
        mem = float(self.learner._raw_memory_usage) if self.measure_memory else math.nan
        counts = [m, t, m, evaluated, m - evaluated - skipped, skipped, evaluated_now, cpu, mem]
        self.marks.append((len(self.ev_key), counts))
        self.next_checkpoint += 1
        return evaluated

    def observe_instance(self, m: int, t: int, c0: float) -> None:
        """The observer's call after instance m (with the fold's CPU time if it takes it)."""
        if self.observer_cpu:
            cpu = self.cpu + self.clock() - c0
            self.observer.on_instance(m, t, cpu_seconds=cpu)
        else:
            self.observer.on_instance(m, t)

    def observe_release(self, on_eval, slots, m: int, t: int, slot: int, side: int, ob: int):
        """The observer's call for the release of the label in ``slot`` (predicted ``side``)."""
        scored = side if self.flip is None else side ^ self.flip[slot]
        on_eval(m, t, scored, self.p1[slot], ob, slots.y[slot], self.w[slot])

    def flush(self, m: int, t: int, slots: Slots, remaining: dict) -> int:
        """Release everything still pending (labels not due within the stream), in due order,
        while the last instance m = n is processed. Returns how many."""
        at = remaining["i"] - slots.off
        side = np.array(self.side, dtype=np.uint8)[at]
        pick = np.flatnonzero(side == remaining["s"])
        del side
        observed = self.inspected(remaining["o"][pick], remaining["insp"][pick], at[pick])
        put_key = self.ev_key.append
        on_eval = self.observer.on_evaluation if self.observer is not None else None
        for key, slot, s, ob in zip(  # noqa: B905 (equal lengths)
            (2 * remaining["i"][pick] + remaining["s"][pick]).tolist(),
            at[pick].tolist(),
            remaining["s"][pick].tolist(),
            observed.tolist(),
        ):
            w_i = self.w[slot]
            put_key(key)
            if w_i > 0:
                self.train_weighted(slots.x_of[slot], ob, w_i)
            if on_eval is not None:
                self.observe_release(on_eval, slots, m, t, slot, s, ob)
        return len(pick)

    def end_chunk(self, view: ChunkView, slots: Slots) -> None:
        """After the chunk ``view`` (:meth:`run_chunk`): the rows of its checkpoints; the
        buffered evaluations folded into the metric states after a long stretch without
        checkpoints; the chunk's probabilities logged. Its CPU time is the fold's."""
        c0 = self.clock()
        start, k = view.start, view.k
        j0 = start - slots.off
        if self.corrected is not None:  # the sides the fold predicted (before the rows)
            p1 = np.frombuffer(self.p1, dtype=np.float64)[j0 + 1 : j0 + 1 + k]
            self.corrected.add_sides(p1 > self.threshold)
        if self.marks:
            self.table_rows(slots)
        if self.buffered + len(self.ev_key) > FLUSH_EVERY:
            # memory: a snapshot is how Metrics folds in what it buffers
            self.drain(slots)
            self.metrics_observed.snapshot()
            self.metrics_true.snapshot()
            if self.effort_curve is not None:
                self.effort_curve.snapshot()
            self.buffered = 0
        if self.keep:
            self.log_p1[start : start + k] = np.frombuffer(self.p1, dtype=np.float64)[
                j0 + 1 : j0 + 1 + k
            ]
        self.cpu += self.clock() - c0

    # ------------------------------------------------------------------ metrics and rows

    def drain(self, slots: Slots, upto: int | None = None) -> np.ndarray | None:
        """Hand the buffered evaluations (the first ``upto``; None: all) to the metric states;
        count the trained ones; log. Returns their training weights (None if there were none).

        The buffer holds keys 2 i + s; the labels, weight, probability and scored prediction of
        the evaluation are in the slot of instance i (the arrays the loop read them from or
        wrote them to, and the shared resolved labels), gathered with numpy."""
        if not self.ev_key or upto == 0:
            return None
        key = np.frombuffer(self.ev_key, dtype=np.int64)[:upto].copy()
        del self.ev_key[:upto]  # in place: the loop holds its append method
        at = key >> 1
        positive = (key & 1).astype(bool)
        jj = at - slots.off
        p1_a = np.frombuffer(self.p1, dtype=np.float64)[jj]
        side = positive.view(np.int8)
        res_o, res_in = slots.res_o, slots.res_in
        ob_a = np.where(
            positive,
            np.frombuffer(res_o[1], dtype=np.int8)[jj],
            np.frombuffer(res_o[0], dtype=np.int8)[jj],
        )
        if self.insp is not None:
            insp = np.where(
                positive,
                np.frombuffer(res_in[1], dtype=np.uint8)[jj],
                np.frombuffer(res_in[0], dtype=np.uint8)[jj],
            ).astype(bool)
            ob_a = self.inspected(ob_a, insp, jj)
        y_a = np.frombuffer(slots.y, dtype=np.int8)[jj]
        w_a = np.frombuffer(self.w, dtype=np.int64)[jj]
        if self.flip is not None:
            pe_a = side ^ np.frombuffer(self.flip, dtype=np.int8)[jj]
        else:
            pe_a = side
        self.trained += int(np.count_nonzero(w_a))
        self.weight_sum += float(w_a.sum())
        if self.keep:
            self.log_obs[at - 1] = ob_a
            self.log_at[at - 1] = np.where(
                positive,
                np.frombuffer(slots.res_due[1], dtype=np.float64)[jj],
                np.frombuffer(slots.res_due[0], dtype=np.float64)[jj],
            )
        self.metrics_observed.add_many(pe_a, p1_a, ob_a)
        self.metrics_true.add_many(pe_a, p1_a, y_a)
        if self.corrected is not None:
            self.corrected.add_evaluations(at, side, pe_a, p1_a, ob_a)
        if self.effort_curve is not None:
            effort = np.frombuffer(slots.effort, dtype=np.float64)[jj]
            self.effort_curve.add_many(p1_a, effort, ob_a, y_a)
        self.buffered += len(key)
        return w_a

    def table_rows(self, slots: Slots) -> None:
        """The table rows of the chunk's checkpoints: the evaluations up to the last one are
        handed to the metric states, which give the values after each checkpoint's prefix in
        one pass (``Metrics.snapshots``); trained counts and weights are prefix sums."""
        marks, self.marks = self.marks, []
        ends = np.array([end for end, _ in marks], dtype=np.int64)
        trained, weight = self.trained, self.weight_sum
        base = self.metrics_observed.buffered  # handed over before, not yet folded in
        curve = self.effort_curve
        effort_base = curve.buffered if curve is not None else 0
        corrected_base = self.corrected.evaluated if self.corrected is not None else 0
        w_a = self.drain(slots, int(ends[-1]))
        self.buffered = 0
        if w_a is None:
            w_a = np.zeros(0, dtype=np.int64)
        n_trained = np.concatenate(([0], np.cumsum(w_a != 0)))[ends].tolist()
        w_sum = np.concatenate(([0], np.cumsum(w_a)))[ends].tolist()
        values = (
            self.metrics_observed.snapshots(base + ends),
            self.metrics_true.snapshots(base + ends),
        )
        n_effort = 0
        if curve is not None:
            # the effort-aware measures follow METRICS in each row's values
            efforts = curve.snapshots(effort_base + ends)
            n_effort = efforts.shape[2]
            values = tuple(np.hstack((values[r], efforts[:, r])) for r in (0, 1))
        corrected = None
        if self.corrected is not None:
            at = [(corrected_base + int(end), c[0], c[1]) for end, c in marks]
            corrected = self.corrected.values_at(at)
            if n_effort:  # the effort-aware measures have no corrected value
                corrected = np.hstack((corrected, np.full((len(at), n_effort), np.nan)))
        for k, (_, c) in enumerate(marks):
            counts = [*c[:6], trained + n_trained[k], float(weight + w_sum[k]), *c[6:]]
            # metric values as one float array per row, in METRICS order (then EFFORT_METRICS)
            self.rows.append((self.fold, "observed", counts, values[0][k]))
            self.rows.append((self.fold, "true", counts, values[1][k]))
            if corrected is not None:
                self.rows.append((self.fold, "corrected", counts, corrected[k]))

    def take_rows(self) -> list:
        """The table rows made since the last call (and forget them)."""
        rows, self.rows = self.rows, []
        return rows

    def output(self, time: Any, label: Any) -> FoldOutput:
        """The fold's result; ``time``/``label``: the whole stream's, for the prediction log."""
        n = self.n
        predictions = None
        if self.keep:
            pred = (self.log_p1 > self.threshold).view(np.int8) ^ self.log_flip
            predictions = pd.DataFrame(
                {
                    "fold": np.full(n, self.fold, dtype=np.int64),
                    "index": np.arange(1, n + 1, dtype=np.int64),
                    "time": np.asarray(time, dtype=np.int64),
                    "pred": pred,
                    "proba": self.log_p1,
                    "true": np.asarray(label, dtype=np.int8),
                    "observed": self.log_obs,
                    "observed_at": self.log_at,
                    "weight": self.log_w,
                }
            )
        info = {
            "fold": self.fold,
            "seen": n,
            "evaluated": self.evaluated,
            "pending": n - self.evaluated - self.skipped,
            "skipped": self.skipped,
            "no_probability": self.no_probability,
            "trained": self.trained,
            "weight": float(self.weight_sum),
            "cpu_seconds": self.cpu,
        }
        # a MOA learner's votes that are no probabilities, read as MOA reads them
        votes_as_class = getattr(self.learner, "votes_as_class", 0)
        if votes_as_class:
            info["votes_as_class"] = votes_as_class
        return FoldOutput(self.fold, self.take_rows(), predictions, self.observer, info)
