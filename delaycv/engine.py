"""The delayed-label prequential k-fold evaluation loop (design card §4) -- pure.

Per fold f (folds are independent and run one after another, or in parallel processes), for each
stream instance m = 1..n at time t_m, in file order:

1. release every pending label whose due key ``(a, q)`` satisfies ``(a, q) <= (t_m, m)``, in
   ``(a, q, arrival index)`` order; for each released instance i: score *its own* stored
   prediction against the observed label o_i and against the true label y_i, then train the
   fold's learner on ``(x_i, o_i)`` with the fold's training weight w_i (see
   :func:`delaycv.learners.trainer`);
2. predict instance m: ``P1 = p(1) / sum(p)`` from ``predict_proba_one`` (0.5 for an empty dict or
   a zero sum); the prediction is ``1 iff P1 > threshold`` (strict);
3. compute ``(o, a, q)`` with the policy (:mod:`delaycv.policies`) for the learner's prediction; if
   ``(a, q) <= (t_m, m)`` release it at once (zero delay: test-then-train), else queue it.

With ``evaluate="trained"`` an instance of weight 0 is predicted but neither queued nor evaluated
(counted as *skipped*). At the end, labels not yet due stay pending; with ``flush=True`` they are
released in due order while the last instance is processed. Per fold, at every checkpoint::

    seen == predicted == evaluated + pending + skipped

The prediction used for scoring is flipped with probability ``prediction_noise`` (the reference's
``-n``; one uniform per instance from the fold's NOISE stream); the learner and the policy use the
un-flipped prediction. Observed labels from a ``truth`` expiry are flipped with probability
``policy.inspection_error`` (one uniform per instance from the fold's INSPECTION stream).

Checkpoints: every ``every`` stream instances and the last one (the same positions for every
learner), plus optional positions, fractions of the stream or times. The module opens no file.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import multiprocessing
import signal
import sys
import time as _time
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from itertools import chain, islice, repeat
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from delaycv import defaults as _defaults
from delaycv import interrupt as _interrupt
from delaycv import metrics as _metrics
from delaycv.errors import ConfigError, DelaycvError
from delaycv.learners import learner_label, make_learner, trainer, validate_learner
from delaycv.policies import Policy, make_policy
from delaycv.releases import Releases
from delaycv.stream import StreamFile
from delaycv.validation import (
    INSPECTION,
    NOISE,
    Validation,
    _check_seed,
    fold_rng,
    learner_seed,
    make_validation,
)

#: Run keys, in column order.
RUN_KEYS = ("dataset", "learner", "seed", "policy")
#: Columns of the per-fold checkpoint table before the metrics, in order.
FOLD_COLUMNS = (
    *RUN_KEYS,
    "fold",
    "reference",
    "estimator",
    "checkpoint",
    "time",
    "seen",
    "evaluated",
    "pending",
    "skipped",
    "trained",
    "weight",
    "evaluated_now",
    "cpu_seconds",
    "model_bytes",
)
#: The integer columns among them (``evaluated_now`` is boolean, the rest float).
INT_COLUMNS = (
    "seed",
    "fold",
    "checkpoint",
    "time",
    "seen",
    "evaluated",
    "pending",
    "skipped",
    "trained",
)
#: Columns of the prediction log, in order.
PREDICTION_COLUMNS = (
    "fold",
    "index",
    "time",
    "pred",
    "proba",
    "true",
    "observed",
    "observed_at",
    "weight",
)
#: Columns of the fold summary before the statistics.
SUMMARY_KEYS = (*RUN_KEYS, "reference", "estimator", "checkpoint", "time", "metric")
SUMMARY_STATS = ("n_folds", "mean", "std", "ci_low", "ci_high")
#: Count columns summarised along with the metrics.
SUMMARY_COUNTS = ("evaluated", "pending", "skipped", "trained", "weight")
REFERENCES = ("observed", "true")
ESTIMATORS = ("cumulative", "window", "fading", "tumbling")
#: Instances per chunk of x dicts built from the stream (shared by the folds).
CHUNK = 4096
#: Instances of a fold between two calls of the progress callback (within a chunk).
PROGRESS_BLOCK = 256
#: Evaluations buffered per fold before they are handed to the metric states between checkpoints.
FLUSH_EVERY = 65536


# --------------------------------------------------------------------------- specs


@dataclass(frozen=True)
class Estimator:
    """An estimator spec: ``kind`` (cumulative, window, fading, tumbling) and its parameter."""

    kind: str
    alpha: float | None = None
    width: int | None = None
    size: int | None = None

    def build(self) -> Any:
        if self.kind == "cumulative":
            return _metrics.Cumulative()
        if self.kind == "window":
            return _metrics.Sliding(self.width)
        if self.kind == "fading":
            return _metrics.Fading(self.alpha)
        return _metrics.Tumbling(self.size)


def make_estimator(spec: dict | str | Estimator | None) -> Estimator:
    """An :class:`Estimator` from ``{kind: fading, alpha: 0.99}``, ``{kind: window, width: 100}``,
    ``{kind: tumbling, size: 100}``, ``{kind: cumulative}`` or just the kind's name.

    What is not given comes from :mod:`delaycv.defaults` (``None``: the default estimator, a
    fading factor of ``defaults.ALPHA``; a kind without its parameter: ``ALPHA``, ``WIDTH`` or
    ``SIZE``)."""
    if isinstance(spec, Estimator):
        return spec
    if spec is None:
        spec = {"kind": _defaults.ESTIMATOR}
    if isinstance(spec, str):
        spec = {"kind": spec}
    if not isinstance(spec, dict):
        raise ConfigError(
            f"estimator spec is {type(spec).__name__}",
            location="key estimator",
            expected="a kind (cumulative, window, fading, tumbling) or a mapping with kind",
        )
    spec = dict(spec)
    kind = spec.pop("kind", _defaults.ESTIMATOR)
    if kind == "sliding":
        kind = "window"
    if kind not in ESTIMATORS:
        raise ConfigError(
            f"unknown estimator {kind!r}",
            location="key estimator.kind",
            expected=", ".join(ESTIMATORS),
        )
    need = {"cumulative": None, "window": "width", "fading": "alpha", "tumbling": "size"}[kind]
    extra = sorted(set(spec) - ({need} if need else set()))
    if extra:
        raise ConfigError(
            f"key {extra[0]!r} does not apply to the {kind} estimator",
            location=f"key estimator.{extra[0]}",
            expected=need or "no parameter",
        )
    if need is None:
        return Estimator("cumulative")
    value = spec.get(need, _defaults.ESTIMATOR_PARAMS[kind][1])
    if need == "alpha":
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
            raise ConfigError(
                f"alpha {value!r}", location="key estimator.alpha", expected="a number in (0, 1]"
            )
        return Estimator("fading", alpha=float(value))
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ConfigError(
            f"{need} {value!r}", location=f"key estimator.{need}", expected="an integer >= 1"
        )
    return Estimator(kind, **{need: int(value)})


def checkpoint_positions(
    time: np.ndarray, every: int | None, checkpoints: Any = None
) -> np.ndarray:
    """Sorted 1-based stream positions of the checkpoints.

    Every ``every`` instances (``every`` None or 0: none), the last instance, and from
    ``checkpoints``: a list of positions (ints), or a mapping with ``positions`` (ints),
    ``fractions`` (in (0, 1]: position ``ceil(f * n)``) and ``times`` (Unix s: the last instance
    with time <= T; none if no instance is that early). ``time``: the stream's times, or a
    :class:`~delaycv.stream.StreamFile` (its times are read only for ``times``).
    """
    if isinstance(time, StreamFile):
        n = len(time)

        def count_until(times: list) -> list[int]:
            return time.count_until(times)
    else:
        n = len(time)

        def count_until(times: list) -> list[int]:
            return np.searchsorted(time, times, side="right").tolist()

    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if every is not None and (isinstance(every, bool) or not isinstance(every, int | np.integer)):
        raise ConfigError(
            f"every {every!r}", location="key checkpoints.every", expected="an integer"
        )
    if every is not None and every < 0:
        raise ConfigError(
            f"every {every!r} is negative",
            location="key checkpoints.every",
            expected="an integer >= 1",
        )
    points = {n}
    if every:
        points.update(range(int(every), n + 1, int(every)))
    if checkpoints is None:
        spec: dict = {}
    elif isinstance(checkpoints, dict):
        spec = dict(checkpoints)
    else:
        spec = {"positions": list(checkpoints)}
    unknown = sorted(set(spec) - {"positions", "fractions", "times", "every"})
    if unknown:
        raise ConfigError(
            f"unknown checkpoint key {unknown[0]!r}",
            location=f"key checkpoints.{unknown[0]}",
            expected="every, positions, fractions, times",
        )
    for p in spec.get("positions", []) or []:
        if isinstance(p, bool) or not isinstance(p, int | np.integer) or not 1 <= p <= n:
            raise ConfigError(
                f"checkpoint position {p!r}",
                location="key checkpoints.positions",
                expected=f"integers in 1..{n}",
            )
        points.add(int(p))
    for f in spec.get("fractions", []) or []:
        if isinstance(f, bool) or not isinstance(f, int | float) or not 0 < f <= 1:
            raise ConfigError(
                f"checkpoint fraction {f!r}",
                location="key checkpoints.fractions",
                expected="numbers in (0, 1]",
            )
        points.add(max(1, min(n, math.ceil(f * n - 1e-9))))
    times = list(spec.get("times", []) or [])
    for t in times:
        if isinstance(t, bool) or not isinstance(t, int | float | np.integer):
            raise ConfigError(
                f"checkpoint time {t!r}", location="key checkpoints.times", expected="Unix seconds"
            )
    if times:
        points.update(pos for pos in count_until(times) if pos >= 1)
    return np.array(sorted(points), dtype=np.int64)


# --------------------------------------------------------------------------- result


@dataclass
class EvaluationResult:
    """What :func:`evaluate` returns (picklable).

    ``folds``: the per-fold checkpoint table; ``predictions``: the prediction log or None;
    ``summary``: fold summary (:func:`summarize`); ``observers``: the observers made by
    ``observer_factory``, in fold order (None without a factory); ``info``: counts and timings.
    """

    folds: pd.DataFrame
    predictions: pd.DataFrame | None
    summary: pd.DataFrame
    observers: list | None = None
    info: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        keys = self.info.get("run_keys", {})
        named = ", ".join(f"{k}={keys[k]!r}" for k in RUN_KEYS[:2] if k in keys)
        named += "".join(f", {k}={keys[k]!r}" for k in ("policy", "seed") if k in keys)
        return (
            f"EvaluationResult({named}, folds={len(self.info.get('folds', []))}, "
            f"checkpoints={self.info.get('checkpoints')}, rows={len(self.folds)})"
        )


@dataclass
class _FoldOutput:
    fold: int
    rows: list
    predictions: pd.DataFrame | None
    observer: Any
    info: dict
    held: int = 0  # the most instances whose state the run held at once


# --------------------------------------------------------------------------- one fold


class _Fold:
    """The state of one fold: learner, metric buffers, per-instance state of the instances whose
    labels may still be released (a window of slots shared with :class:`_Shared`), counters and
    table rows."""

    def __init__(self, learner_spec, policy, validation, fold, n, o) -> None:
        self.cpu = 0.0
        c0 = _time.process_time()
        self.fold = fold
        self.n = n
        self.learner = make_learner(
            learner_spec, seed=learner_seed(o["seed"], fold, o["same_learner_seed"])
        )
        self.weighted_train = trainer(self.learner)
        self.m_obs = _metrics.Metrics(o["estimator"].build())
        self.m_true = _metrics.Metrics(o["estimator"].build())
        # evaluations since the last drain, in release order: the key 2 i + s of the released
        # label (instance i, predicted side s), as machine values
        self.ev_key = array("q")
        self.buffered = 0  # evaluations handed to the metric states since their last snapshot
        # checkpoints of this chunk whose rows wait for their metric values (computed for all of
        # them at once at the chunk's end): (evaluations buffered in ev_key at the checkpoint,
        # the row's counts without trained and weight)
        self.marks: list = []
        factory = o["observer_factory"]
        self.observer = factory(fold) if factory is not None else None
        self.obs_cpu = False
        if self.observer is not None and o["timing"]:
            try:
                params = inspect.signature(self.observer.on_instance).parameters
                self.obs_cpu = "cpu_seconds" in params
            except (TypeError, ValueError):
                self.obs_cpu = False
        # the fold's random streams, drawn chunk by chunk in stream order
        self.draw_weights = validation.weight_draws(fold, o["seed"])
        noise = o["prediction_noise"]
        self.noise = noise
        self.noise_rng = fold_rng(o["seed"], fold, NOISE) if noise > 0 else None
        self.inspection = policy.inspection_error
        self.insp_rng = fold_rng(o["seed"], fold, INSPECTION) if self.inspection > 0 else None
        # Per instance while its label may be released (slot = instance - shared.off): the
        # predicted side (2: not queued), P1, the training weight, the prediction noise flip and
        # the inspection flip. Machine values only: pending labels cost no Python object, so
        # nothing long-lived is allocated between the learner's calls (long-lived tuples slowed
        # the learner's own calls by a few %: more work for the garbage collector).
        self.side = bytearray()
        self.p1 = array("d")
        self.w = array("q")
        self.flip = bytearray() if self.noise_rng is not None else None
        self.insp = bytearray() if self.insp_rng is not None else None
        self.keep = o["keep_predictions"]
        self.threshold = o["threshold"]
        if self.keep:
            self.log_obs = np.full(n, -1, dtype=np.int8)
            self.log_at = np.full(n, np.nan, dtype=np.float64)
            self.log_p1 = np.zeros(n, dtype=np.float64)
            self.log_w = np.zeros(n, dtype=np.float64)
            self.log_flip = np.zeros(n, dtype=np.int8)
        self.evaluated = self.skipped = self.trained = 0
        self.weight_sum = 0.0
        self.rows: list = []
        self.cp_i = 0
        self.cpu += _time.process_time() - c0

    def extend(self, start: int, stop: int) -> None:
        """Add the slots of instances start+1 .. stop (drawing their weights and flips)."""
        k = stop - start
        self.side.extend(b"\x02" * k)
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

    def _inspected(self, o: np.ndarray, insp: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """Observed labels ``o`` with this fold's inspection errors (where ``insp``)."""
        if self.insp is None or not len(o):
            return o
        flips = np.frombuffer(self.insp, dtype=np.uint8)[slots].astype(bool) & insp
        return o ^ flips.view(np.int8)

    def run_chunk(self, chunk, sh, cr, o: dict) -> None:
        """Process the instances of ``chunk`` (a :class:`~delaycv.stream.StreamChunk`) with
        their releases ``cr`` (:class:`~delaycv.releases.ChunkReleases`; ``sh.cand_*``: the
        candidates as lists, ``c_r`` with a sentinel, ``c_j`` as slots) for this fold."""
        c0 = _time.process_time()
        n = self.n
        start, k = chunk.start, len(chunk)
        j0 = start - sh.off  # slot of instance start + 1, minus 1
        chunk_slots = np.arange(j0 + 1, j0 + 1 + k)
        if self.insp is None:
            o_n, o_p, c_o = sh.own_o_n, sh.own_o_p, sh.c_o
        else:
            o_n = self._inspected(cr.own_o[0], cr.own_in[0], chunk_slots).tolist()
            o_p = self._inspected(cr.own_o[1], cr.own_in[1], chunk_slots).tolist()
            c_o = self._inspected(cr.cand["o"], cr.cand["insp"], sh.c_j_a).tolist()
        ws = self.w[j0 + 1 : j0 + 1 + k].tolist()
        flips = repeat(False) if self.flip is None else self.flip[j0 + 1 : j0 + 1 + k]
        threshold = o["threshold"]
        trained_only = o["trained_only"]
        learner = self.learner
        predict = learner.predict_proba_one
        learn = learner.learn_one
        wtrain = self.weighted_train
        put_key = self.ev_key.append
        observer = self.observer
        on_eval = observer.on_evaluation if observer is not None else None
        on_inst = observer.on_instance if observer is not None else None
        obs_cpu = self.obs_cpu
        side_of, p1_of, w_of, x_of = self.side, self.p1, self.w, sh.x_of
        c_r, c_j, c_s, c_k = sh.c_r, sh.c_j, sh.c_s, sh.c_k
        c = 0
        evaluated, skipped = self.evaluated, self.skipped
        cps = o["cp_list"]
        next_cp = cps[self.cp_i] if self.cp_i < len(cps) else -1
        m, j = start, j0
        rows = zip(  # noqa: B905 (equal lengths)
            sh.ts, chunk.records, sh.ys, sh.own_n, sh.own_p, o_n, o_p, ws, flips
        )
        if o["progress"] is not None:
            # progress every PROGRESS_BLOCK instances (C-level iterators; nothing when off)
            rows = chain.from_iterable(_blocks(rows, k, o["progress"]))
        for t, x, y, own_n, own_p, ob_n, ob_p, w, flip in rows:
            m += 1
            j += 1
            ev_before = evaluated
            # 1. release what is due before predicting m (in (a, q, i) order): the candidates
            # of position m whose side is the one this fold predicted
            while c_r[c] == m:
                jj = c_j[c]
                if side_of[jj] == c_s[c]:
                    put_key(c_k[c])
                    evaluated += 1
                    w_i = w_of[jj]
                    if w_i == 1:
                        learn(x_of[jj], c_o[c])
                    elif w_i > 0:
                        wtrain(x_of[jj], c_o[c], w_i)
                    if on_eval is not None:
                        self._observe(on_eval, sh, m, t, jj, c_s[c], c_o[c])
                c += 1
            # 2. predict m
            proba = predict(x)
            total = sum(proba.values())  # an empty dict sums to 0
            p1 = proba.get(1, 0.0) / total if total > 0 else 0.5
            p1_of[j] = p1
            if p1 > threshold:
                pred, own, ob = 1, own_p, ob_p
            else:
                pred, own, ob = 0, own_n, ob_n
            # 3. the policy's outcome: release now or queue
            if trained_only and w == 0:
                skipped += 1
            elif own:
                put_key(2 * m + pred)
                evaluated += 1
                if w == 1:
                    learn(x, ob)
                elif w > 0:
                    wtrain(x, ob, w)
                if on_eval is not None:
                    on_eval(m, t, 1 - pred if flip else pred, p1, ob, y, w)
            else:
                side_of[j] = pred
            if m == next_cp:
                if m == n and o["flush"]:
                    evaluated += self._flush(m, t, sh)
                if on_inst is not None:
                    if obs_cpu:
                        on_inst(m, t, cpu_seconds=self.cpu + _time.process_time() - c0)
                    else:
                        on_inst(m, t)
                self._mark(m, t, evaluated, skipped, evaluated > ev_before, o, c0)
                self.cp_i += 1
                next_cp = cps[self.cp_i] if self.cp_i < len(cps) else -1
            elif on_inst is not None:
                if obs_cpu:
                    on_inst(m, t, cpu_seconds=self.cpu + _time.process_time() - c0)
                else:
                    on_inst(m, t)
        self.evaluated, self.skipped = evaluated, skipped
        if self.marks:
            self._checkpoints(sh)
        if self.buffered + len(self.ev_key) > FLUSH_EVERY:
            # let the metric states fold in what is buffered after long stretches without
            # checkpoints (memory; a snapshot is how Metrics ingests its buffer)
            self._drain(sh)
            self.m_obs.snapshot()
            self.m_true.snapshot()
            self.buffered = 0
        if self.keep:
            self.log_p1[start : start + k] = np.frombuffer(self.p1, dtype=np.float64)[
                j0 + 1 : j0 + 1 + k
            ]
        self.cpu += _time.process_time() - c0

    def _observe(self, on_eval, sh, m: int, t: int, jj: int, side: int, ob: int) -> None:
        """The observer's call for the release of the label in slot jj (predicted ``side``)."""
        pe = side if self.flip is None else side ^ self.flip[jj]
        on_eval(m, t, pe, self.p1[jj], ob, sh.y[jj], self.w[jj])

    def _flush(self, m: int, t: int, sh) -> int:
        """Release everything still pending (labels not due within the stream), in due order,
        while the last instance m = n is processed. Returns how many."""
        rest = sh.remaining
        slots = rest["i"] - sh.off
        side = np.frombuffer(self.side, dtype=np.uint8)[slots]
        pick = np.flatnonzero(side == rest["s"])
        del side
        obs = self._inspected(rest["o"][pick], rest["insp"][pick], slots[pick])
        put_key = self.ev_key.append
        on_eval = self.observer.on_evaluation if self.observer is not None else None
        for key, jj, s, ob in zip(  # noqa: B905 (equal lengths)
            (2 * rest["i"][pick] + rest["s"][pick]).tolist(),
            slots[pick].tolist(),
            rest["s"][pick].tolist(),
            obs.tolist(),
        ):
            w_i = self.w[jj]
            put_key(key)
            if w_i > 0:
                self.weighted_train(sh.x_of[jj], ob, w_i)
            if on_eval is not None:
                self._observe(on_eval, sh, m, t, jj, s, ob)
        return len(pick)

    def _drain(self, sh, upto: int | None = None) -> np.ndarray | None:
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
        jj = at - sh.off
        p1_a = np.frombuffer(self.p1, dtype=np.float64)[jj]
        side = positive.view(np.int8)
        res_o, res_in = sh.res_o, sh.res_in
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
            ob_a = self._inspected(ob_a, insp, jj)
        y_a = np.frombuffer(sh.y, dtype=np.int8)[jj]
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
                np.frombuffer(sh.res_due[1], dtype=np.float64)[jj],
                np.frombuffer(sh.res_due[0], dtype=np.float64)[jj],
            )
        self.m_obs.add_many(pe_a, p1_a, ob_a)
        self.m_true.add_many(pe_a, p1_a, y_a)
        self.buffered += len(key)
        return w_a

    def _mark(self, m, t, evaluated, skipped, evaluated_now: bool, o: dict, c0: float) -> None:
        """Checkpoint m: its counts now, its metric values at the chunk's end (``_checkpoints``)."""
        cpu = self.cpu + _time.process_time() - c0 if o["timing"] else math.nan
        mem = float(self.learner._raw_memory_usage) if o["measure_memory"] else math.nan
        counts = [m, t, m, evaluated, m - evaluated - skipped, skipped, evaluated_now, cpu, mem]
        self.marks.append((len(self.ev_key), counts))

    def _checkpoints(self, sh) -> None:
        """The table rows of the chunk's checkpoints: the evaluations up to the last one are
        handed to the metric states, which give the values after each checkpoint's prefix in
        one pass (``Metrics.snapshots``); trained counts and weights are prefix sums."""
        marks, self.marks = self.marks, []
        ends = np.array([end for end, _ in marks], dtype=np.int64)
        trained, weight = self.trained, self.weight_sum
        base = self.m_obs.buffered  # evaluations handed over before (not yet folded in)
        w_a = self._drain(sh, int(ends[-1]))
        self.buffered = 0
        if w_a is None:
            w_a = np.zeros(0, dtype=np.int64)
        n_trained = np.concatenate(([0], np.cumsum(w_a != 0)))[ends].tolist()
        w_sum = np.concatenate(([0], np.cumsum(w_a)))[ends].tolist()
        values = (self.m_obs.snapshots(base + ends), self.m_true.snapshots(base + ends))
        for k, (_, c) in enumerate(marks):
            counts = [*c[:6], trained + n_trained[k], float(weight + w_sum[k]), *c[6:]]
            # metric values as one float array per row, in METRICS order (no dict per row)
            self.rows.append((self.fold, "observed", counts, values[0][k]))
            self.rows.append((self.fold, "true", counts, values[1][k]))

    def take_rows(self) -> list:
        """The table rows written since the last call (and forget them)."""
        rows, self.rows = self.rows, []
        return rows

    def output(self, time, label) -> _FoldOutput:
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
            "trained": self.trained,
            "weight": float(self.weight_sum),
            "cpu_seconds": self.cpu,
        }
        return _FoldOutput(self.fold, self.take_rows(), predictions, self.observer, info)


def _learner_error(err: Exception, learner_spec, fold: int, start: int, stop: int) -> Exception:
    """A learner that raises while it runs (a parameter river accepted but cannot use) becomes a
    ConfigError naming the learner, the fold and the instances. Only an exception raised below
    a call of the learner counts (the innermost delaycv frame is one that calls learner methods:
    the loop, the flush, the weighted trainer); other errors stay as they are."""
    if isinstance(err, DelaycvError):
        return err
    package = Path(__file__).resolve().parent
    codes = []
    tb = err.__traceback__
    while tb is not None:
        codes.append(tb.tb_frame.f_code)
        tb = tb.tb_next
    ours = [
        i
        for i, code in enumerate(codes)
        if Path(code.co_filename).resolve().is_relative_to(package)
    ]
    if not ours or ours[-1] == len(codes) - 1:
        return err
    if codes[ours[-1]].co_name not in ("run_chunk", "_flush", "train"):
        return err
    return ConfigError(
        f"the learner {learner_label(learner_spec)} failed on fold {fold} while processing "
        f"instances {start + 1}..{stop}: {type(err).__name__}: {err}",
        location="key learner",
        expected="a learner whose parameters work on this stream",
    )


def probe_learner(stream, learner_spec, *, instances: int = 50) -> None:
    """Run a throwaway learner (seed 0) on the first ``instances`` of ``stream``: predict, then
    learn each, as the loop does. Catches, before any work, parameters that river accepts when it
    builds the learner but fails on at its first call (with river's message, as a ConfigError)."""
    first = next(iter(stream.chunks(instances)), None)
    if first is None:
        return
    learner = make_learner(learner_spec, seed=0)
    try:
        for x, y in zip(first.records, first.label.tolist(), strict=True):
            learner.predict_proba_one(x)
            learner.learn_one(x, y)
    except Exception as err:
        raise ConfigError(
            f"the learner {learner_label(learner_spec)} fails on the first instances of the "
            f"stream: {type(err).__name__}: {err}",
            location="key learner",
            expected="a learner whose parameters work on this stream",
        ) from err


def _blocks(rows: Iterator, n: int, progress: Callable[[int], None]) -> Iterator[Iterator]:
    """``rows`` (n items) in blocks of :data:`PROGRESS_BLOCK`; ``progress(k)`` is called when
    the k items of a block have been consumed (when the next block, or the end, is asked for)."""
    for lo in range(0, n, PROGRESS_BLOCK):
        k = min(PROGRESS_BLOCK, n - lo)
        yield islice(rows, k)
        progress(k)


class _Shared:
    """What the folds share while the stream is read: per instance whose label may still be
    released (slot = instance - ``off``, for instances ``off`` .. ``top``), its true label, the
    observed label, inspection flag and due time of each side once resolved, and its x dict;
    and the current chunk's columns and releases as lists for the loop."""

    def __init__(self) -> None:
        self.off, self.top = 1, 0
        self.y = array("b")
        self.res_o = (array("b"), array("b"))
        self.res_in = (bytearray(), bytearray())
        self.res_due = (array("d"), array("d"))
        self.x_of: list = []
        self.remaining: dict | None = None

    def columns(self):
        return (self.y, *self.res_o, *self.res_in, *self.res_due)

    def extend(self, chunk) -> None:
        k = len(chunk)
        self.top += k
        self.y.frombytes(np.asarray(chunk.label, dtype=np.int8).tobytes())
        for column in (*self.res_o, *self.res_due):
            column.frombytes(bytes(column.itemsize * k))
        for column in self.res_in:
            column.extend(bytes(k))
        self.x_of.extend(chunk.records)

    def record(self, slots: np.ndarray, s: np.ndarray, o, insp, due) -> None:
        """Store the resolved label (observed, inspection flag, due time) of (slot, side) pairs."""
        for side in (0, 1):
            at = slots[s == side]
            np.frombuffer(self.res_o[side], dtype=np.int8)[at] = o[s == side]
            np.frombuffer(self.res_in[side], dtype=np.uint8)[at] = insp[s == side]
            np.frombuffer(self.res_due[side], dtype=np.float64)[at] = due[s == side]

    def compact(self, drop: int) -> None:
        for column in self.columns():
            del column[:drop]
        del self.x_of[:drop]
        self.off += drop


def _run_folds(
    stream,
    learner_spec,
    policy: Policy,
    validation: Validation,
    folds: Sequence[int],
    *,
    seed: int,
    estimator: Estimator,
    positions: np.ndarray,
    threshold: float,
    prediction_noise: float,
    flush: bool,
    keep_predictions: bool,
    same_learner_seed: bool,
    observer_factory: Callable | None,
    measure_memory: bool,
    timing: bool,
    progress: Callable[[int], None] | None,
    on_rows: Callable[[list], None] | None = None,
) -> list[_FoldOutput]:
    """Run ``folds`` chunk by chunk as the stream is read: each chunk's x dicts and releases are
    built once and used by every fold in turn (fold states are independent, so the result
    equals running the folds one by one). What is held between chunks is the state of the
    instances whose labels may still be released (:mod:`delaycv.releases`); ``on_rows``, if
    given, receives the table rows of every chunk's checkpoints (all folds) as they are made."""
    o = dict(
        seed=seed,
        estimator=estimator,
        cp_list=positions.tolist(),
        threshold=float(threshold),
        prediction_noise=prediction_noise,
        flush=flush,
        keep_predictions=keep_predictions,
        same_learner_seed=same_learner_seed,
        observer_factory=observer_factory,
        measure_memory=measure_memory,
        timing=timing,
        trained_only=validation.trained_only,
        progress=progress,
    )
    n = len(stream)
    releases = Releases(policy, n, flush)
    sh = _Shared()
    states = [_Fold(learner_spec, policy, validation, f, n, o) for f in folds]
    times: list = []
    labels: list = []
    held = 0  # the most instances whose state was held at once
    for chunk in stream.chunks(CHUNK):
        start, k = chunk.start, len(chunk)
        stop = start + k
        if keep_predictions:
            times.append(chunk.time)
            labels.append(chunk.label)
        sh.extend(chunk)
        for state in states:
            state.extend(start, stop)
        cr = releases.resolve(start, chunk.time, chunk.label, chunk.label_time)
        cand = cr.cand
        chunk_slots = np.arange(start + 1 - sh.off, stop + 1 - sh.off)
        for s in (0, 1):
            mine = cr.own[s]
            sh.record(
                chunk_slots[mine],
                np.full(int(mine.sum()), s, dtype=np.int8),
                cr.own_o[s][mine],
                cr.own_in[s][mine],
                cr.own_due[s][mine],
            )
        sh.c_j_a = cand["i"] - sh.off
        sh.record(sh.c_j_a, cand["s"], cand["o"], cand["insp"], cand["due"])
        if stop == n and flush:
            rest = releases.remaining()
            sh.record(rest["i"] - sh.off, rest["s"], rest["o"], rest["insp"], rest["due"])
            sh.remaining = rest
        sh.ts = chunk.time.tolist()
        sh.ys = chunk.label.tolist()
        sh.own_n, sh.own_p = cr.own[0].tolist(), cr.own[1].tolist()
        sh.own_o_n, sh.own_o_p = cr.own_o[0].tolist(), cr.own_o[1].tolist()
        # the chunk's release candidates; c_r ends with a position beyond the chunk
        sh.c_r = [*cand["r"].tolist(), n + 2]
        sh.c_j = sh.c_j_a.tolist()
        sh.c_s = cand["s"].tolist()
        sh.c_k = (2 * cand["i"] + cand["s"]).tolist()
        sh.c_o = cand["o"].tolist()
        for state in states:
            try:
                state.run_chunk(chunk, sh, cr, o)
            except Exception as err:
                raise _learner_error(err, learner_spec, state.fold, start, stop) from err
        if on_rows is not None:
            rows = [row for state in states for row in state.take_rows()]
            if rows:
                on_rows(rows)
        # x dicts no fold needs any more: instances with nothing left waiting
        oldest = releases.oldest()
        lo = stop + 1 if oldest is None else oldest
        done = np.concatenate((chunk_slots, sh.c_j_a)) + sh.off
        waiting = releases.pool["i"]
        for i in done[~np.isin(done, waiting)].tolist():
            sh.x_of[i - sh.off] = None
        # forget the slots before the oldest waiting instance once they are as many as the
        # rest (each slot is moved at most once on average)
        held = max(held, sh.top - sh.off + 1)
        drop = lo - sh.off
        if drop >= max(CHUNK, sh.top - lo + 1):
            for state in states:
                state._drain(sh)  # what is buffered refers to slots: gather it first
                state.compact(drop)
            sh.compact(drop)
    time = np.concatenate(times) if keep_predictions else None
    label = np.concatenate(labels) if keep_predictions else None
    outputs = [s.output(time, label) for s in states]
    for out in outputs:
        out.held = held
    return outputs


# --------------------------------------------------------------------------- tables


def _folds_table(rows: list, run_keys: dict, estimator: Estimator) -> pd.DataFrame:
    """The per-fold checkpoint table of ``rows`` (fold, reference, counts, metric values)."""
    metric_names = list(_metrics.METRICS)
    count_cols = list(FOLD_COLUMNS[len(RUN_KEYS) + 3 :])
    n_rows = len(rows)
    if rows:
        values = np.vstack([row[3] for row in rows])
        count_values = list(zip(*(row[2] for row in rows), strict=True))
    else:
        values = np.empty((0, len(metric_names)))
        count_values = [() for _ in count_cols]
    out = pd.DataFrame(
        {
            "dataset": pd.Series([str(run_keys["dataset"])] * n_rows, dtype=object),
            "learner": pd.Series([str(run_keys["learner"])] * n_rows, dtype=object),
            "seed": np.full(n_rows, int(run_keys["seed"]), dtype=np.int64),
            "policy": pd.Series([str(run_keys["policy"])] * n_rows, dtype=object),
            "fold": np.array([row[0] for row in rows], dtype=np.int64),
            "reference": pd.Series([row[1] for row in rows], dtype=object),
            "estimator": pd.Series([estimator.kind] * n_rows, dtype=object),
        }
    )
    for c, col in zip(count_cols, count_values, strict=True):
        if c in INT_COLUMNS:
            out[c] = np.array(col, dtype=np.int64)
        elif c == "evaluated_now":
            out[c] = np.array(col, dtype=bool)
        else:
            out[c] = np.array(col, dtype=np.float64)
    metrics = pd.DataFrame(values, columns=metric_names, index=out.index)
    return pd.concat([out, metrics], axis=1)


def summarize(folds: pd.DataFrame) -> pd.DataFrame:
    """The fold summary: per (run keys, reference, estimator, checkpoint, metric) over folds.

    ``n_folds`` = number of folds with a finite value, ``mean``, ``std`` (sample, n - 1; NaN if
    n_folds < 2) and the t-based 95 % interval ``mean -/+ t_{0.975, n-1} * std / sqrt(n)``.
    Metrics are every column of :data:`delaycv.metrics.METRICS` present, plus the counts
    :data:`SUMMARY_COUNTS`.
    """
    from scipy import stats as _stats

    names = [c for c in (*SUMMARY_COUNTS, *_metrics.METRICS) if c in folds.columns]
    keys = [k for k in (*RUN_KEYS, "reference", "estimator", "checkpoint", "time")]
    if folds.empty:
        return pd.DataFrame({c: [] for c in (*SUMMARY_KEYS, *SUMMARY_STATS)})
    # Aggregated on the wide table (one column per metric, memory ~ the fold table) with the
    # same pandas kernels, values and order as on the long table: identical statistics.
    values = folds[names].to_numpy(dtype=np.float64, copy=True)
    values[~np.isfinite(values)] = np.nan
    gid = folds.groupby(keys, sort=False, dropna=False).ngroup().to_numpy()
    wide = pd.DataFrame(values, columns=range(len(names)))
    g = wide.groupby(gid, sort=True)  # group ids are in order of first appearance
    count = g.count().to_numpy()
    mean = g.mean().to_numpy()
    sd = g.std().to_numpy()
    n_groups = count.shape[0]
    first = np.unique(gid, return_index=True)[1]
    group_keys = folds[keys].iloc[first].reset_index(drop=True)
    # metric-major, groups in order of first appearance (the order of the long table)
    res = group_keys.iloc[np.tile(np.arange(n_groups), len(names))].reset_index(drop=True)
    res["metric"] = np.repeat(np.array(names, dtype=object), n_groups)
    res["n_folds"] = count.T.reshape(-1).astype(np.int64)
    res["mean"] = mean.T.reshape(-1)
    res["std"] = sd.T.reshape(-1)
    res["n_folds"] = res["n_folds"].fillna(0).astype(np.int64)
    nf = res["n_folds"].to_numpy()
    std = res["std"].to_numpy(dtype=np.float64)
    std = np.where(nf >= 2, std, np.nan)
    tq = np.full(len(res), np.nan)
    ok = nf >= 2
    tq[ok] = _stats.t.ppf(0.975, nf[ok] - 1)
    half = tq * std / np.sqrt(np.where(nf > 0, nf, 1))
    mean = res["mean"].to_numpy(dtype=np.float64)
    res["std"] = std
    res["ci_low"] = mean - half
    res["ci_high"] = mean + half
    order = {name: i for i, name in enumerate(names)}
    res["_m"] = res["metric"].map(order)
    res = res.sort_values(["reference", "checkpoint", "_m"], kind="stable").drop(columns="_m")
    res = res.reset_index(drop=True)
    for c in ("dataset", "learner", "policy", "reference", "estimator", "metric"):
        res[c] = res[c].astype(object)
    return res[[*SUMMARY_KEYS, *SUMMARY_STATS]]


# --------------------------------------------------------------------------- evaluate


def _check_common(stream, threshold, prediction_noise, seed) -> int:
    if len(stream) == 0:
        raise DelaycvError("the stream has no instances")
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not 0 <= threshold <= 1
    ):
        raise ConfigError(
            f"threshold {threshold!r}", location="key threshold", expected="a number in [0, 1]"
        )
    if (
        isinstance(prediction_noise, bool)
        or not isinstance(prediction_noise, int | float)
        or not 0 <= prediction_noise <= 1
    ):
        raise ConfigError(
            f"prediction_noise {prediction_noise!r}",
            location="key prediction_noise",
            expected="a probability in [0, 1]",
        )
    return _check_seed(seed, "seed")


class Progress:
    """Progress of a run on a text stream (default stderr): instance-folds done, rate, ETA.

    Call it with the number of instance-folds just done (the engine does so every
    :data:`PROGRESS_BLOCK` instances of each fold), or :meth:`update` with the total so far. Once
    the run has lasted ``after`` seconds it writes a report at most every ``every`` seconds: on a
    terminal one line rewritten in place (``every`` default 1 s), elsewhere (a Snakemake job log,
    a file, a pipe) plain lines (``every`` default 5 s). ``clock``: seconds, for tests.
    """

    def __init__(
        self,
        total: int,
        *,
        after: float = 3.0,
        every: float | None = None,
        stream=None,
        clock: Callable[[], float] = _time.monotonic,
    ) -> None:
        self.total = total
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty()) if callable(isatty) else False
        self.after = after
        self.every = every if every is not None else (1.0 if self.tty else 5.0)
        self.clock = clock
        self.t0 = clock()
        self.last = -math.inf
        self.shown = False

    def __call__(self, k: int) -> None:
        self.update(self.done + k)

    def update(self, done: int) -> None:
        self.done = done
        now = self.clock()
        if now - self.t0 < self.after or now - self.last < self.every:
            return
        self.last = now
        self.stream.write(("\r" if self.tty else "") + self.text(now))
        if not self.tty:
            self.stream.write("\n")
        self.stream.flush()
        self.shown = True

    def text(self, now: float) -> str:
        """The report: ``delaycv: 40,960/300,000 instance-folds (13.7 %), 2,345/s, ETA 1 min 51 s``."""
        elapsed = max(now - self.t0, 1e-9)
        rate = self.done / elapsed
        eta = (self.total - self.done) / rate if rate > 0 else math.inf
        share = 100.0 * self.done / self.total if self.total else 100.0
        return (
            f"delaycv: {self.done:,}/{self.total:,} instance-folds ({share:.1f} %), "
            f"{rate:,.0f}/s, ETA {_duration(eta)}" + ("   " if self.tty else "")
        )

    def close(self) -> None:
        if self.shown and self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "unknown"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def evaluate(
    stream,
    learner_spec: dict | str,
    policy: Policy | dict | str,
    validation: Validation | dict,
    *,
    seed: int = _defaults.SEED,
    estimator: Estimator | dict | str | None = None,
    every: int | None = _defaults.EVERY,
    threshold: float = _defaults.THRESHOLD,
    prediction_noise: float = _defaults.PREDICTION_NOISE,
    flush: bool = False,
    checkpoints: Any = None,
    keep_predictions: bool = False,
    same_learner_seed: bool = False,
    observer_factory: Callable[[int], Any] | None = None,
    folds_subset: Iterable[int] | None = None,
    run_keys: dict | None = None,
    measure_memory: bool = False,
    timing: bool = True,
    jobs: int = 1,
    progress: bool | Callable[[int], None] = False,
    on_rows: Callable[[pd.DataFrame], None] | None = None,
) -> EvaluationResult:
    """Evaluate a learner on ``stream`` with a label ``policy`` under ``validation`` (k folds).

    Every argument is checked before any work. ``learner_spec``: see :mod:`delaycv.learners`;
    ``policy``: :func:`delaycv.policies.make_policy` spec; ``validation``:
    :class:`~delaycv.validation.Validation` or its dict; ``seed``: the run seed (learner seeds,
    noise, inspection errors); ``estimator``: :func:`make_estimator` spec; ``every``: checkpoint
    period (stream instances; None or 0: only the last instance and ``checkpoints``). What is not
    given takes the defaults of :mod:`delaycv.defaults` (the CLI's and the workflow's);
    ``checkpoints``: extra checkpoints (:func:`checkpoint_positions`);
    ``folds_subset``: run only these folds (results of subsets concatenate to the full result);
    ``run_keys``: ``dataset``/``learner``/``policy`` names (default: stream metadata, learner
    class, policy name; ``seed`` is always ``seed``); ``measure_memory``: ``model_bytes`` at
    checkpoints (river's ``_raw_memory_usage``; NaN otherwise); ``timing=False`` writes NaN CPU
    seconds so that outputs are reproducible byte for byte; ``jobs``: folds in that many processes
    (same result); ``progress``: True for progress on stderr (:class:`Progress`: after 3 s, at
    most every second on a terminal, plain lines every 5 s elsewhere), or a callable given the
    number of instance-folds done since its last call, every :data:`PROGRESS_BLOCK` instances of
    each fold; ``on_rows``: receives the fold table in pieces as it is made (each piece: the
    rows of complete checkpoints, all folds, in fold order; in one process, one piece per chunk
    of :data:`CHUNK` instances), so that a long stream's table need not be held: the result's
    ``folds`` and ``summary`` are then empty (with their columns).

    ``stream``: a :class:`~delaycv.stream.Stream`, or a :class:`~delaycv.stream.StreamFile`
    read chunk by chunk: what a run holds grows with the labels waiting, not with the stream
    (:mod:`delaycv.releases`), apart from the table rows (see ``on_rows``) and the prediction
    log.
    """
    seed = _check_common(stream, threshold, prediction_noise, seed)
    policy = make_policy(policy)
    validation = make_validation(validation)
    estimator = make_estimator(estimator)
    estimator.build()
    validate_learner(learner_spec)
    if folds_subset is None:
        folds = list(range(validation.folds))
    else:
        folds = sorted({int(f) for f in folds_subset})
        bad = [f for f in folds if not 0 <= f < validation.folds]
        if bad or not folds:
            raise ConfigError(
                f"folds_subset {list(folds_subset)!r}",
                location="key folds_subset",
                expected=f"a non-empty subset of 0..{validation.folds - 1}",
            )
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ConfigError(f"jobs {jobs!r}", location="key jobs", expected="an integer >= 1")
    positions = checkpoint_positions(
        stream if isinstance(stream, StreamFile) else stream.time, every, checkpoints
    )
    keys = {
        "dataset": str(stream.metadata.get("dataset", "stream")),
        "learner": learner_label(learner_spec),
        "policy": policy.name,
        **{k: v for k, v in (run_keys or {}).items() if k in ("dataset", "learner", "policy")},
        "seed": seed,
    }
    wall0 = _time.monotonic()
    cpu0 = _time.process_time()
    kwargs = dict(
        seed=seed,
        estimator=estimator,
        positions=positions,
        threshold=float(threshold),
        prediction_noise=float(prediction_noise),
        flush=bool(flush),
        keep_predictions=bool(keep_predictions),
        same_learner_seed=bool(same_learner_seed),
        measure_memory=bool(measure_memory),
        timing=bool(timing),
    )
    reporter = None
    if progress is True:
        reporter = Progress(len(stream) * len(folds))
    elif callable(progress):
        reporter = progress
    if jobs > 1 and len(folds) > 1:
        outputs = _run_parallel(
            stream,
            learner_spec,
            policy,
            validation,
            folds,
            kwargs,
            observer_factory,
            jobs,
            reporter,
        )
    else:
        outputs = _run_folds(
            stream,
            learner_spec,
            policy,
            validation,
            folds,
            observer_factory=observer_factory,
            progress=reporter,
            on_rows=None
            if on_rows is None
            else lambda rows: on_rows(_folds_table(rows, keys, estimator)),
            **kwargs,
        )
    if isinstance(reporter, Progress):
        reporter.close()
    folds_table = _folds_table([row for out in outputs for row in out.rows], keys, estimator)
    if on_rows is not None:
        if len(folds_table):  # rows of parallel workers come back at their end
            on_rows(folds_table)
        folds_table = folds_table.iloc[:0]
    predictions = None
    if keep_predictions:
        predictions = pd.concat([o.predictions for o in outputs], ignore_index=True)
    info = {
        "run_keys": keys,
        "folds": [o.info for o in outputs],
        "instances": len(stream),
        "checkpoints": len(positions),
        # the most instances whose state (x dict, pending labels) a process held at once
        "instances_held": max(o.held for o in outputs),
    }
    if timing:
        info["wall_seconds"] = _time.monotonic() - wall0
        info["cpu_seconds"] = (
            _time.process_time()
            - cpu0
            + (sum(o.info["cpu_seconds"] for o in outputs) if jobs > 1 and len(folds) > 1 else 0.0)
        )
    else:
        for f in info["folds"]:
            f.pop("cpu_seconds", None)
    observers = [o.observer for o in outputs] if observer_factory is not None else None
    return EvaluationResult(folds_table, predictions, summarize(folds_table), observers, info)


# --------------------------------------------------------------------------- parallel folds

_WORKER: dict = {}
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


def _worker_init(stream, learner_spec, policy, validation, kwargs, observer_factory, counter):
    # Ctrl-C reaches every process of the terminal's group: the parent alone answers it (it ends
    # the workers, _stop_workers), so that a worker prints no traceback of its own
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER.update(
        stream=stream,
        learner_spec=learner_spec,
        policy=policy,
        validation=validation,
        kwargs=kwargs,
        observer_factory=observer_factory,
        counter=counter,
    )


def _worker_folds(folds: list[int]) -> list[_FoldOutput]:
    w = _WORKER
    counter = w["counter"]

    def progress(k: int) -> None:
        with counter.get_lock():
            counter.value += k

    return _run_folds(
        w["stream"],
        w["learner_spec"],
        w["policy"],
        w["validation"],
        folds,
        observer_factory=w["observer_factory"],
        progress=progress,
        **w["kwargs"],
    )


def _mp_context():
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(list(PRELOAD))
        return ctx
    return multiprocessing.get_context("spawn")


def _run_parallel(
    stream, learner_spec, policy, validation, folds, kwargs, observer_factory, jobs, reporter
) -> list[_FoldOutput]:
    """Run ``folds`` in ``min(jobs, len(folds))`` processes; outputs in fold order.

    Process g runs folds ``folds[g::workers]`` chunk by chunk. Each process gets the stream once
    (pickled), runs whole folds, and sends back the fold's rows,
    prediction log and observer; fold results do not depend on the process, so the concatenation
    equals a one-process run.
    """
    ctx = _mp_context()
    counter = ctx.Value("q", 0)
    workers = min(jobs, len(folds))
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=ctx,
        initializer=_worker_init,
        initargs=(stream, learner_spec, policy, validation, kwargs, observer_factory, counter),
    ) as pool:
        try:
            groups = [folds[g::workers] for g in range(workers)]
            # the workers start here: Ctrl-C or SIGTERM acts once each is known to the pool (one
            # being started would be left running, unknown to _stop_workers)
            _interrupt.hold()
            try:
                futures = [pool.submit(_worker_folds, group) for group in groups]
            finally:
                _interrupt.release()
            if reporter is not None:
                pending = set(futures)
                from concurrent.futures import FIRST_COMPLETED, wait

                while pending:
                    _, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
                    value = counter.value
                    if isinstance(reporter, Progress):
                        reporter.update(value)
                    else:
                        reporter(value - getattr(reporter, "_delaycv_done", 0))
                        reporter._delaycv_done = value  # type: ignore[attr-defined]
            outputs = [out for f in futures for out in f.result()]
        except BaseException:
            _stop_workers(pool)
            raise
    return sorted(outputs, key=lambda out: out.fold)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """End the workers at once when this process stops (an error, Ctrl-C, SIGTERM): leaving the
    pool would otherwise wait for every fold they are running."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(OSError, ValueError):
            process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


# --------------------------------------------------------------------------- plain-dict entry point


def run_evaluation(
    stream,
    *,
    learner_spec: dict | str,
    policy_spec: dict | str,
    validation_spec: dict | None = None,
    seed: int = _defaults.SEED,
    estimator_spec: dict | str | None = None,
    every: int | None = _defaults.EVERY,
    run_keys: dict | None = None,
    **options: Any,
) -> EvaluationResult:
    """:func:`evaluate` with plain dicts from the workflow's YAML config.

    ``learner_spec``: a learner spec (``{class, params}`` or ``{pipeline: [...]}``);
    ``policy_spec``: a policy spec or preset name (``hitl_7d_90d``); ``validation_spec``:
    ``{scheme, folds, seed, evaluate}``; ``estimator_spec``: ``{kind, alpha|width|size}``
    (missing keys, and ``None``, take the defaults of :mod:`delaycv.defaults`);
    ``every``: checkpoint period; ``options``: any other keyword of :func:`evaluate`
    (``checkpoints``, ``threshold``, ``prediction_noise``, ``flush``, ``keep_predictions``,
    ``same_learner_seed``, ``observer_factory``, ``folds_subset``, ``measure_memory``, ``timing``,
    ``jobs``, ``progress``). The result carries the specs in ``info["specs"]``.
    """
    allowed = set(inspect.signature(evaluate).parameters) - {
        "stream",
        "learner_spec",
        "policy",
        "validation",
        "seed",
        "estimator",
        "every",
        "run_keys",
    }
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ConfigError(
            f"unknown evaluation option {unknown[0]!r}",
            location=f"key {unknown[0]}",
            expected=", ".join(sorted(allowed)),
        )
    result = evaluate(
        stream,
        learner_spec,
        policy_spec,
        validation_spec or {},
        seed=seed,
        estimator=estimator_spec,
        every=every,
        run_keys=run_keys,
        **options,
    )
    policy = make_policy(policy_spec)
    result.info["specs"] = {
        "learner": learner_spec,
        "policy": policy.spec(),
        "validation": dict(make_validation(validation_spec or {}).__dict__),
        "estimator": {
            k: v for k, v in make_estimator(estimator_spec).__dict__.items() if v is not None
        },
        "every": every,
        "seed": seed,
        **{
            k: v
            for k, v in options.items()
            if k
            in (
                "checkpoints",
                "threshold",
                "prediction_noise",
                "flush",
                "keep_predictions",
                "same_learner_seed",
                "measure_memory",
            )
        },
    }
    return result
