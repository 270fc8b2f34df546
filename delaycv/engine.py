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

import heapq
import inspect
import math
import multiprocessing
import sys
import time as _time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from delaycv import metrics as _metrics
from delaycv.errors import ConfigError, DelaycvError
from delaycv.learners import learner_label, make_learner, trainer, validate_learner
from delaycv.policies import Policy, make_policy
from delaycv.validation import (
    INSPECTION,
    NOISE,
    Validation,
    _check_seed,
    learner_seed,
    make_validation,
    uniforms,
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
#: Instances per chunk of x dicts built from the stream.
CHUNK = 4096


# --------------------------------------------------------------------------- specs


@dataclass(frozen=True)
class Estimator:
    """An estimator spec: ``kind`` (cumulative, window, fading, tumbling) and its parameter."""

    kind: str = "cumulative"
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
    ``{kind: tumbling, size: 100}``, ``{kind: cumulative}`` or just the kind's name."""
    if isinstance(spec, Estimator):
        return spec
    if spec is None:
        spec = {"kind": "cumulative"}
    if isinstance(spec, str):
        spec = {"kind": spec}
    spec = dict(spec)
    kind = spec.pop("kind", "cumulative")
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
    value = spec.get(need, 0.999 if need == "alpha" else None)
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
    with time <= T; none if no instance is that early).
    """
    n = len(time)
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
    for t in spec.get("times", []) or []:
        if isinstance(t, bool) or not isinstance(t, int | float | np.integer):
            raise ConfigError(
                f"checkpoint time {t!r}", location="key checkpoints.times", expected="Unix seconds"
            )
        pos = int(np.searchsorted(time, t, side="right"))
        if pos >= 1:
            points.add(pos)
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


@dataclass
class _FoldOutput:
    fold: int
    rows: list
    predictions: pd.DataFrame | None
    observer: Any
    info: dict


# --------------------------------------------------------------------------- one fold


def _run_fold(
    stream,
    learner_spec,
    policy: Policy,
    schedule,
    validation: Validation,
    fold: int,
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
) -> _FoldOutput:
    cpu0 = _time.process_time()
    n = len(stream)
    learner = make_learner(learner_spec, seed=learner_seed(seed, fold, same_learner_seed))
    predict = learner.predict_proba_one
    train = trainer(learner)
    m_obs = _metrics.Metrics(estimator.build())
    m_true = _metrics.Metrics(estimator.build())
    add_obs = m_obs.add
    add_true = m_true.add
    observer = observer_factory(fold) if observer_factory is not None else None
    on_eval = observer.on_evaluation if observer is not None else None
    on_inst = observer.on_instance if observer is not None else None
    obs_cpu = False
    if observer is not None and timing:
        try:
            obs_cpu = "cpu_seconds" in inspect.signature(on_inst).parameters
        except (TypeError, ValueError):
            obs_cpu = False
    trained_only = validation.trained_only

    weights = validation.weights(fold, n)
    noise_flip = (
        uniforms(seed, fold, NOISE, n) < prediction_noise
        if prediction_noise > 0
        else np.zeros(n, dtype=bool)
    )
    obs_by_side = [schedule.neg.observed, schedule.pos.observed]
    if policy.inspection_error > 0:
        flip = uniforms(seed, fold, INSPECTION, n) < policy.inspection_error
        obs_by_side = [
            side.observed ^ (flip & side.inspect).astype(np.int8)
            for side in (schedule.neg, schedule.pos)
        ]

    if keep_predictions:
        log_pred = np.zeros(n, dtype=np.int8)
        log_proba = np.zeros(n, dtype=np.float64)
        log_obs = np.full(n, -1, dtype=np.int8)
        log_at = np.full(n, np.nan, dtype=np.float64)
    pos_fifo: deque = deque()
    neg_fifo: deque = deque()
    fb_heap: list = []
    SENT = (math.inf, 0, n + 1)
    nxt: tuple = SENT  # the pending entry with the smallest key, or SENT
    evaluated = skipped = trained = 0
    weight_sum = 0.0
    rows: list = []
    cp_list = positions.tolist()
    cp_i = 0
    next_cp = cp_list[0] if cp_list else -1
    time_all = stream.time
    label_all = stream.label
    mem = math.nan

    def next_head() -> tuple:
        best = SENT
        if pos_fifo and pos_fifo[0] < best:
            best = pos_fifo[0]
        if neg_fifo and neg_fifo[0] < best:
            best = neg_fifo[0]
        if fb_heap and fb_heap[0] < best:
            best = fb_heap[0]
        return best

    def pop_head(entry: tuple) -> None:
        if pos_fifo and pos_fifo[0] is entry:
            pos_fifo.popleft()
        elif neg_fifo and neg_fifo[0] is entry:
            neg_fifo.popleft()
        else:
            heapq.heappop(fb_heap)

    for start in range(0, n, CHUNK):
        stop = min(n, start + CHUNK)
        xs = stream.records(start, stop)
        ts = time_all[start:stop].tolist()
        ys = label_all[start:stop].tolist()
        ws = weights[start:stop].tolist()
        flips = noise_flip[start:stop].tolist()
        sl = slice(start, stop)
        neg_t = schedule.neg.due_time[sl].tolist()
        neg_q = schedule.neg.due_pos[sl].tolist()
        neg_o = obs_by_side[0][sl].tolist()
        neg_fb = schedule.neg.feedback[sl].tolist()
        pos_t = schedule.pos.due_time[sl].tolist()
        pos_q = schedule.pos.due_pos[sl].tolist()
        pos_o = obs_by_side[1][sl].tolist()
        pos_fb = schedule.pos.feedback[sl].tolist()
        for k in range(stop - start):
            m = start + k + 1
            t = ts[k]
            ev_before = evaluated
            # 1. release what is due before predicting m
            if nxt[0] <= t:
                lim = (t, m, n + 1)
                while nxt <= lim:
                    entry = nxt
                    pop_head(entry)
                    nxt = next_head()
                    _, _, i, x_i, o_i, pe_i, pr_i, w_i, y_i = entry
                    add_obs(pe_i, pr_i, o_i)
                    add_true(pe_i, pr_i, y_i)
                    if w_i > 0:
                        train(x_i, o_i, w_i)
                        trained += 1
                        weight_sum += w_i
                    evaluated += 1
                    if keep_predictions:
                        log_obs[i - 1] = o_i
                        log_at[i - 1] = entry[0]
                    if on_eval is not None:
                        on_eval(m, t, pe_i, pr_i, o_i, y_i, w_i)
            # 2. predict m
            x = xs[k]
            proba = predict(x)
            if proba:
                total = sum(proba.values())
                p1 = float(proba.get(1, 0.0)) / total if total > 0 else 0.5
            else:
                p1 = 0.5
            pred = 1 if p1 > threshold else 0
            pe = 1 - pred if flips[k] else pred
            w = ws[k]
            if keep_predictions:
                log_pred[m - 1] = pe
                log_proba[m - 1] = p1
            # 3. the policy's outcome: release now or queue
            if trained_only and w == 0:
                skipped += 1
            else:
                if pred:
                    a, q, o, fb = pos_t[k], pos_q[k], pos_o[k], pos_fb[k]
                else:
                    a, q, o, fb = neg_t[k], neg_q[k], neg_o[k], neg_fb[k]
                if a < t or (a == t and q <= m):
                    y = ys[k]
                    add_obs(pe, p1, o)
                    add_true(pe, p1, y)
                    if w > 0:
                        train(x, o, w)
                        trained += 1
                        weight_sum += w
                    evaluated += 1
                    if keep_predictions:
                        log_obs[m - 1] = o
                        log_at[m - 1] = a
                    if on_eval is not None:
                        on_eval(m, t, pe, p1, o, y, w)
                else:
                    entry = (a, q, m, x, o, pe, p1, w, ys[k])
                    if fb:
                        heapq.heappush(fb_heap, entry)
                    elif pred:
                        pos_fifo.append(entry)
                    else:
                        neg_fifo.append(entry)
                    if entry < nxt:
                        nxt = entry
            if m == n and flush:
                while nxt is not SENT:
                    entry = nxt
                    pop_head(entry)
                    nxt = next_head()
                    _, _, i, x_i, o_i, pe_i, pr_i, w_i, y_i = entry
                    add_obs(pe_i, pr_i, o_i)
                    add_true(pe_i, pr_i, y_i)
                    if w_i > 0:
                        train(x_i, o_i, w_i)
                        trained += 1
                        weight_sum += w_i
                    evaluated += 1
                    if keep_predictions:
                        log_obs[i - 1] = o_i
                        log_at[i - 1] = entry[0]
                    if on_eval is not None:
                        on_eval(m, t, pe_i, pr_i, o_i, y_i, w_i)
            if on_inst is not None:
                if obs_cpu:
                    on_inst(m, t, cpu_seconds=_time.process_time() - cpu0)
                else:
                    on_inst(m, t)
            if m == next_cp:
                cpu = _time.process_time() - cpu0 if timing else math.nan
                if measure_memory:
                    mem = float(learner._raw_memory_usage)
                counts = [
                    m,
                    t,
                    m,
                    evaluated,
                    m - evaluated - skipped,
                    skipped,
                    trained,
                    float(weight_sum),
                    evaluated > ev_before,
                    cpu,
                    mem,
                ]
                rows.append((fold, "observed", counts, m_obs.snapshot()))
                rows.append((fold, "true", counts, m_true.snapshot()))
                cp_i += 1
                next_cp = cp_list[cp_i] if cp_i < len(cp_list) else -1
        if progress is not None:
            progress(stop - start)
    predictions = None
    if keep_predictions:
        predictions = pd.DataFrame(
            {
                "fold": np.full(n, fold, dtype=np.int64),
                "index": np.arange(1, n + 1, dtype=np.int64),
                "time": np.asarray(time_all, dtype=np.int64),
                "pred": log_pred,
                "proba": log_proba,
                "true": np.asarray(label_all, dtype=np.int8),
                "observed": log_obs,
                "observed_at": log_at,
                "weight": np.where((weights == 0) & trained_only, 0.0, weights.astype(np.float64)),
            }
        )
    info = {
        "fold": fold,
        "seen": n,
        "evaluated": evaluated,
        "pending": n - evaluated - skipped,
        "skipped": skipped,
        "trained": trained,
        "weight": float(weight_sum),
        "cpu_seconds": _time.process_time() - cpu0,
    }
    return _FoldOutput(fold, rows, predictions, observer, info)


# --------------------------------------------------------------------------- tables


def _folds_table(
    outputs: Sequence[_FoldOutput], run_keys: dict, estimator: Estimator
) -> pd.DataFrame:
    metric_names = list(_metrics.METRICS)
    records = []
    for out in outputs:
        for fold, reference, counts, snap in out.rows:
            records.append(
                [fold, reference, *counts, *(snap.get(k, math.nan) for k in metric_names)]
            )
    count_cols = list(FOLD_COLUMNS[len(RUN_KEYS) + 3 :])
    cols = ["fold", "reference", *count_cols, *metric_names]
    frame = (
        pd.DataFrame.from_records(records, columns=cols)
        if records
        else pd.DataFrame({c: [] for c in cols})
    )
    out = pd.DataFrame(
        {
            "dataset": pd.Series([str(run_keys["dataset"])] * len(frame), dtype=object),
            "learner": pd.Series([str(run_keys["learner"])] * len(frame), dtype=object),
            "seed": np.full(len(frame), int(run_keys["seed"]), dtype=np.int64),
            "policy": pd.Series([str(run_keys["policy"])] * len(frame), dtype=object),
            "fold": frame["fold"].to_numpy(dtype=np.int64),
            "reference": pd.Series(frame["reference"].tolist(), dtype=object),
            "estimator": pd.Series([estimator.kind] * len(frame), dtype=object),
        }
    )
    ints = ("checkpoint", "time", "seen", "evaluated", "pending", "skipped", "trained")
    for c in count_cols:
        if c in ints:
            out[c] = frame[c].to_numpy(dtype=np.int64)
        elif c == "evaluated_now":
            out[c] = frame[c].to_numpy(dtype=bool)
        else:
            out[c] = frame[c].to_numpy(dtype=np.float64)
    for c in metric_names:
        out[c] = frame[c].to_numpy(dtype=np.float64)
    return out


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
    long = folds.melt(id_vars=[*keys, "fold"], value_vars=names, var_name="metric")
    long["value"] = long["value"].astype(np.float64)
    finite = long[np.isfinite(long["value"])]
    g = finite.groupby([*keys, "metric"], sort=False, dropna=False)["value"]
    agg = g.agg(n_folds="count", mean="mean", std="std").reset_index()
    base = long[[*keys, "metric"]].drop_duplicates()
    res = base.merge(agg, on=[*keys, "metric"], how="left")
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


class _Progress:
    """Progress on stderr (instances/s, ETA) once a run has lasted ``after`` seconds."""

    def __init__(self, total: int, after: float = 3.0, every: float = 2.0, stream=None) -> None:
        self.total = total
        self.done = 0
        self.t0 = _time.monotonic()
        self.after = after
        self.every = every
        self.last = self.t0
        self.stream = stream or sys.stderr
        self.shown = False

    def __call__(self, k: int) -> None:
        self.done += k
        self.update(self.done)

    def update(self, done: int) -> None:
        self.done = done
        now = _time.monotonic()
        if now - self.t0 < self.after or now - self.last < self.every:
            return
        self.last = now
        rate = done / max(now - self.t0, 1e-9)
        eta = (self.total - done) / rate if rate > 0 else math.inf
        self.stream.write(
            f"\rdelaycv: {done:,}/{self.total:,} instance-folds, {rate:,.0f}/s, ETA {eta:,.0f} s   "
        )
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()


def evaluate(
    stream,
    learner_spec: dict | str,
    policy: Policy | dict | str,
    validation: Validation | dict,
    *,
    seed: int,
    estimator: Estimator | dict | str | None = None,
    every: int | None = None,
    threshold: float = 0.5,
    prediction_noise: float = 0.0,
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
) -> EvaluationResult:
    """Evaluate a learner on ``stream`` with a label ``policy`` under ``validation`` (k folds).

    Every argument is checked before any work. ``learner_spec``: see :mod:`delaycv.learners`;
    ``policy``: :func:`delaycv.policies.make_policy` spec; ``validation``:
    :class:`~delaycv.validation.Validation` or its dict; ``seed``: the run seed (learner seeds,
    noise, inspection errors); ``estimator``: :func:`make_estimator` spec; ``every``: checkpoint
    period (stream instances); ``checkpoints``: extra checkpoints (:func:`checkpoint_positions`);
    ``folds_subset``: run only these folds (results of subsets concatenate to the full result);
    ``run_keys``: ``dataset``/``learner``/``policy`` names (default: stream metadata, learner
    class, policy name; ``seed`` is always ``seed``); ``measure_memory``: ``model_bytes`` at
    checkpoints (river's ``_raw_memory_usage``; NaN otherwise); ``timing=False`` writes NaN CPU
    seconds so that outputs are reproducible byte for byte; ``jobs``: folds in that many processes
    (same result); ``progress``: True for a stderr progress line on runs longer than 3 s.
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
    positions = checkpoint_positions(stream.time, every, checkpoints)
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
        reporter = _Progress(len(stream) * len(folds))
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
        schedule = policy.schedule(stream.time, stream.label, stream.label_time)
        outputs = [
            _run_fold(
                stream,
                learner_spec,
                policy,
                schedule,
                validation,
                f,
                observer_factory=observer_factory,
                progress=reporter,
                **kwargs,
            )
            for f in folds
        ]
    if isinstance(reporter, _Progress):
        reporter.close()
    folds_table = _folds_table(outputs, keys, estimator)
    predictions = None
    if keep_predictions:
        predictions = pd.concat([o.predictions for o in outputs], ignore_index=True)
    info = {
        "run_keys": keys,
        "folds": [o.info for o in outputs],
        "instances": len(stream),
        "checkpoints": len(positions),
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
    _WORKER.update(
        stream=stream,
        learner_spec=learner_spec,
        policy=policy,
        validation=validation,
        kwargs=kwargs,
        observer_factory=observer_factory,
        counter=counter,
        schedule=policy.schedule(stream.time, stream.label, stream.label_time),
    )


def _worker_fold(fold: int) -> _FoldOutput:
    w = _WORKER
    counter = w["counter"]

    def progress(k: int) -> None:
        with counter.get_lock():
            counter.value += k

    return _run_fold(
        w["stream"],
        w["learner_spec"],
        w["policy"],
        w["schedule"],
        w["validation"],
        fold,
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

    Each process gets the stream once (pickled), runs whole folds, and sends back the fold's rows,
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
        futures = [pool.submit(_worker_fold, f) for f in folds]
        if reporter is not None:
            pending = set(futures)
            from concurrent.futures import FIRST_COMPLETED, wait

            while pending:
                _, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
                value = counter.value
                if isinstance(reporter, _Progress):
                    reporter.update(value)
                else:
                    reporter(value - getattr(reporter, "_delaycv_done", 0))
                    reporter._delaycv_done = value  # type: ignore[attr-defined]
        return [f.result() for f in futures]


# --------------------------------------------------------------------------- plain-dict entry point


def run_evaluation(
    stream,
    *,
    learner_spec: dict | str,
    policy_spec: dict | str,
    validation_spec: dict | None = None,
    seed: int = 1,
    estimator_spec: dict | str | None = None,
    every: int | None = None,
    run_keys: dict | None = None,
    **options: Any,
) -> EvaluationResult:
    """:func:`evaluate` with plain dicts from the workflow's YAML config.

    ``learner_spec``: a learner spec (``{class, params}`` or ``{pipeline: [...]}``);
    ``policy_spec``: a policy spec or preset name (``hitl_7d_90d``); ``validation_spec``:
    ``{scheme, folds, seed, evaluate}``; ``estimator_spec``: ``{kind, alpha|width|size}``;
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
