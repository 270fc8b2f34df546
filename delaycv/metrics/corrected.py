"""The corrected reference: what the model really achieves, estimated from what a practitioner knows.

At a checkpoint (instance m, time t) the ``true`` reference scores the instances evaluated by m
against their true labels; ``observed`` scores them against the labels the policy released. The
``corrected`` reference estimates the ``true`` value using only what is known at t
(docs/corrected.md gives the method, its assumptions, the literature and how well it does):

- the predictions (side, scored prediction, P(1)) and the arrival times of the instances up to m;
- the labels released by m and what they said;
- the fixes seen by t: an instance whose fix arrived by t (``label_time <= t``) is defective,
  whatever label it was given before (a *late fix*);
- the policy (:class:`Disclosure`): which side's window ends in the truth (an inspection) and
  which in the clean assumption, the windows, the declared inspection error rate.

Each evaluated instance gets an *expected true label* q in [0, 1]:

1. a fix seen by t: q = 1;
2. a label from a window that ends in the truth (an inspection): q = the label; with a declared
   inspection error rate e, the posterior of a defect given the label, the side's defect rate
   estimated from its labels, ``(r - e) / (1 - 2 e)``;
3. a label from a window that ends in the clean assumption, and no fix by t: the chance that an
   instance still unfixed at its age a (in days) is defective,
   ``g(a) = pi (1 - F(a)) / (pi (1 - F(a)) + 1 - pi)``. F is the distribution of the delay from
   an instance to its fix among defective ones (never fixed included): the Kaplan-Meier estimate
   (right-censored at t) from the defective instances of the side whose labels come from an
   inspection, once its window has ended (their true labels are known whatever their fixes).
   pi is the side's defect rate: its fixes seen over the sum of F at its instances' ages. Without
   an inspected side (or before it has a fix), the Kaplan-Meier estimate H of the delay to a fix
   over the side's own instances gives only the fixes still to come,
   ``g(a) = (H(d) - H(a)) / (1 - H(a))`` with d the longest delay seen: the defects no fix will
   reveal stay unseen. No fix seen at all: q is NaN (nothing to estimate from).

Ages and delays are counted in whole days of the stream's clock (the day of t minus the day of
arrival; a stream whose times are positions counts instances).

The metrics are the estimator's sums with each evaluation's label replaced by q (fractional
counts), read by the formulas of every reference (:func:`delaycv.metrics.formulas.compute_many`).
Under ``Fading`` each group of sums fades on its own events; a group whose events are defined by
the label (recall, FPR, the unknown rates) counts each evaluation's expected label *as estimated
at the first checkpoint that scored it* (its fading clock, fixed then), and weighs it by its
expected label now. Metrics that need the order of the labels (the NoChange and majority
classifiers of the kappa variants), the information score and the AUC have no corrected value:
NaN (:data:`UNCORRECTED`).

:class:`CorrectedState` (one per fold, fed by the engine) keeps the sums incrementally: what is
settled (q = 0 or 1 for good) in running sums, the inspected labels with errors by side and label,
the unfixed instances of a clean-assumption side in histograms by arrival day, so that a
checkpoint costs O(days) whatever the stream's length. :func:`corrected_values` computes the same
from the evaluations and their q directly (the sliding and tumbling estimators, whose scope is
bounded, and the tests).

The module is pure (numpy only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from delaycv.metrics.estimators import Fading, Sliding, Tumbling, make_estimator
from delaycv.metrics.formulas import METRICS, compute_many
from delaycv.metrics.rows import N_ROWS, R

#: The metrics without a corrected value (NaN in the ``corrected`` rows), and why.
UNCORRECTED: dict[str, str] = {
    **{
        name: "it scores the NoChange or majority classifier on the order of the labels"
        for name in METRICS
        if name.startswith(("kappa_t", "kappa_m", "nochange_", "majority_"))
    },
    "info_score": "its prior follows the order of the labels",
    "auc": "a ranking of expected labels is not estimated",
}
#: The metrics of :data:`~delaycv.metrics.formulas.METRICS` with a corrected value.
CORRECTED_METRICS: tuple[str, ...] = tuple(m for m in METRICS if m not in UNCORRECTED)
#: One day in seconds: the unit of ages and delays on a stream with real times.
DAY = 86400
#: Under ``Fading``, :func:`expected_sums` leaves out an evaluation whose weight alpha ** k is
#: below exp(FADED_OUT) = 1e-40 (nothing a double can hold next to the rest; no subnormal
#: arithmetic).
FADED_OUT = -40 * math.log(10)

_EPS = float(np.finfo(np.float64).eps)
#: The rows of ``rows.R`` without a corrected value (NaN): the NoChange and majority
#: references and the information score.
_NAN_ROWS = np.array(
    [i for name, i in R.items() if name.startswith("z_") or name.endswith(("_nc", "_maj"))]
    + [R["b_info"]]
)
#: Every evaluation of a scope, each counted once.
_WHOLE = make_estimator("cumulative")
#: The count rows (never faded) and the unknown rows (no abstentions in the engine).
_COUNT_ROWS = ("a_w", "a_tp", "a_fp", "a_fn", "a_tn", "u0_unk", "u1_unk")


@dataclass(frozen=True)
class Disclosure:
    """What a label policy tells a practitioner about its labels, per side (0: predicted
    negative, 1: predicted positive): whether the side's window ends in the truth (``truth``,
    an inspection) rather than the clean assumption, the side's window (``window``: its amount,
    in seconds or in instances, and whether it counts instances) and the declared inspection
    error rate of the truth."""

    truth: tuple[bool, bool]
    window: tuple[tuple[float, bool], tuple[float, bool]]
    inspection_error: float = 0.0

    @classmethod
    def of(cls, policy) -> Disclosure:
        """The disclosure of a :class:`~delaycv.protocol.policies.Policy`."""
        sides = ((policy.neg_window, policy.neg_expiry), (policy.pos_window, policy.pos_expiry))
        return cls(
            truth=tuple(expiry == "truth" for _, expiry in sides),
            window=tuple((float(w.amount), bool(w.is_count)) for w, _ in sides),
            inspection_error=float(policy.inspection_error),
        )

    @property
    def exact(self) -> bool:
        """Every released label is the true label (both windows end in the truth, no
        inspection errors): corrected equals true."""
        return all(self.truth) and self.inspection_error == 0

    @property
    def inspected(self) -> int | None:
        """The side whose inspected labels give the fix delays (None: no side ends in the
        truth, or both do)."""
        if all(self.truth) or not any(self.truth):
            return None
        return 1 if self.truth[1] else 0

    def notes(self, has_fixes: bool) -> list[str]:
        """What the run's record says of the corrected reference under this disclosure."""
        if self.exact:
            return []
        out = []
        if not all(self.truth) and not has_fixes:
            out.append(
                "corrected: the stream has no fix times (label_time), so the labels of the "
                "windows that end in the clean assumption cannot be corrected: corrected is NaN"
            )
        elif not any(self.truth):
            out.append(
                "corrected: no window ends in an inspection, so the share of defects that no "
                "fix ever reveals cannot be estimated: corrected adds only the fixes still to "
                "come (from the delays of the fixes seen) and stays between observed and true"
            )
        if self.inspection_error >= 0.5 and any(self.truth):
            out.append(
                f"corrected: an inspection error rate of {self.inspection_error:g} (>= 0.5) "
                "says nothing of the truth: the inspected labels cannot be corrected (NaN)"
            )
        return out


# ---------------------------------------------------------------------- survival


def kaplan_meier(durations, events, weights=None) -> tuple[np.ndarray, np.ndarray]:
    """The Kaplan-Meier estimate of the distribution function F(d) = P(D <= d) of right-censored
    durations: ``durations`` (>= 0), ``events`` (True: the event happened at the duration;
    False: censored there), ``weights`` (frequency weights, default 1). Returns the distinct
    event times, ascending, and F at each (a step function, right-continuous; 0 before the
    first). Ties: events before censorings at the same duration.

    >>> times, F = kaplan_meier([1, 2, 2, 3, 5], [True, True, False, True, False])
    >>> times.tolist(), [round(f, 4) for f in F]
    ([1.0, 2.0, 3.0], [0.2, 0.4, 0.7])
    """
    d = np.asarray(durations, dtype=np.float64)
    e = np.asarray(events, dtype=bool)
    w = np.ones(d.size) if weights is None else np.asarray(weights, dtype=np.float64)
    keep = w > 0
    d, e, w = d[keep], e[keep], w[keep]
    if not e.any():
        return np.zeros(0), np.zeros(0)
    order = np.lexsort((~e, d))
    d, e, w = d[order], e[order], w[order]
    at_risk = np.cumsum(w[::-1])[::-1]
    # one factor per event (tied events in turn: the product telescopes to 1 - d/n)
    factor = np.where(e, 1.0 - w / at_risk, 1.0)
    survival = np.cumprod(factor)[e]
    times = d[e]
    last = np.append(times[1:] != times[:-1], True)
    return times[last], 1.0 - survival[last]


def cdf_at(times: np.ndarray, cdf: np.ndarray, x) -> np.ndarray:
    """The step function of :func:`kaplan_meier` at ``x`` (0 before the first event time)."""
    k = np.searchsorted(times, x, "right")
    out = np.zeros(np.shape(x))
    hit = k > 0
    out[hit] = cdf[k[hit] - 1]
    return out


def grid_cdf(events: np.ndarray, censored: np.ndarray) -> np.ndarray:
    """:func:`kaplan_meier` on a grid of whole units: ``events[d]`` the weight of the events at
    d, ``censored[d]`` that of the durations censored at d (both of one length). Returns F at
    every d of the grid (censored at d are at risk at d: events first).

    >>> grid_cdf(np.array([0, 1, 1, 1, 0, 0.]), np.array([0, 0, 1, 0, 0, 1.])).round(4).tolist()
    [0.0, 0.2, 0.4, 0.7, 0.7, 0.7]
    """
    at_risk = np.cumsum((events + censored)[::-1])[::-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = np.where(events > 0, 1.0 - events / at_risk, 1.0)
    return 1.0 - np.cumprod(factor)


def defect_chance(pi: float, F: np.ndarray) -> np.ndarray:
    """The chance that an instance unfixed at each age is defective, for a side with defect
    rate ``pi`` and the fix delay distribution ``F`` (by age): pi (1 - F) / (pi (1 - F) + 1 - pi);
    0 where every defect is fixed by that age."""
    left = pi * (1.0 - F)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(F < 1.0, left / (left + 1.0 - pi), 0.0)


def fixes_to_come(H: np.ndarray) -> np.ndarray:
    """The chance of a fix still to come for an instance unfixed at each age, from the
    distribution H of the delay to a fix over all the side's instances (by age; its last value
    the longest delay seen): (H_max - H) / (1 - H)."""
    top = H[-1] if H.size else 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(H < 1.0, (top - H) / (1.0 - H), 0.0)


def inspected_posterior(r: float, e: float) -> tuple[float, float]:
    """(P(defect | inspected label 0), P(defect | inspected label 1)) for inspections with error
    rate ``e`` < 1/2 and a share ``r`` of labels 1: the defect rate (r - e) / (1 - 2 e), clipped
    to [0, 1]. NaN for e >= 1/2 or no labels.

    >>> [round(p, 4) for p in inspected_posterior(0.4, 0.1)]
    [0.0455, 0.9643]
    """
    if not 0 <= e < 0.5 or not math.isfinite(r):
        return math.nan, math.nan
    pi = min(1.0, max(0.0, (r - e) / (1.0 - 2.0 * e)))
    one = pi * (1 - e) / (pi * (1 - e) + (1 - pi) * e) if pi > 0 else 0.0
    zero = pi * e / (pi * e + (1 - pi) * (1 - e)) if pi < 1 else 1.0
    return zero, one


# ---------------------------------------------------------------------- direct sums


def _scope(estimator, n: int) -> slice | None:
    """The evaluations (of ``n``) whose sums the estimator reads; None: none yet (a tumbling
    estimator before its first chunk)."""
    if isinstance(estimator, Sliding):
        return slice(max(0, n - estimator.width), n)
    if isinstance(estimator, Tumbling):
        done = n // estimator.size
        if not done:
            return None
        return slice((done - 1) * estimator.size, done * estimator.size)
    return slice(0, n)


def expected_sums(estimator, pred, weight, proba, q, clock=None):
    """The estimator's sums (``rows.R``) and unfaded sums of evaluations whose labels are the
    expected labels ``q`` (fractional counts), in evaluation order; the rows of the NoChange and
    majority references and of the information score are NaN. ``(None, None)`` before a
    tumbling estimator's first chunk. ``clock``: under ``Fading``, the expected labels that
    count the own events of the groups defined by the label (default ``q``)."""
    estimator = make_estimator(estimator)
    scope = _scope(estimator, len(q))
    if scope is None:
        return None, None
    p = np.asarray(pred)[scope]
    w = np.asarray(weight, dtype=np.float64)[scope]
    pr = np.asarray(proba, dtype=np.float64)[scope]
    y1 = np.asarray(q, dtype=np.float64)[scope]
    y0 = 1.0 - y1
    c1 = y1 if clock is None else np.asarray(clock, dtype=np.float64)[scope]
    pos = w > 0
    known = p >= 0
    wa = np.where(pos & known, w, 0.0)  # active: known prediction, w > 0
    wu = np.where(pos, w, 0.0)
    p1 = (p == 1).astype(np.float64)
    p0 = (p == 0).astype(np.float64)
    unk = (~known).astype(np.float64)
    finite = pos & np.isfinite(pr)
    wb = np.where(finite, w, 0.0)
    pc = np.clip(np.where(finite, pr, 0.5), _EPS, 1.0 - _EPS)
    brier = np.where(finite, y1 * (pr - 1.0) ** 2 + y0 * pr**2, 0.0)
    logloss = np.where(finite, -(y1 * np.log(pc) + y0 * np.log(1.0 - pc)), 0.0)
    act = (wa > 0).astype(np.float64)
    # per group: its own events (fading) and its rows' values
    groups = {
        "a": (act, {
            "a_w": wa, "a_correct": wa * (p1 * y1 + p0 * y0), "a_p0": wa * p0, "a_p1": wa * p1,
            "a_t0": wa * y0, "a_t1": wa * y1, "a_tp": wa * p1 * y1, "a_fp": wa * p1 * y0,
            "a_fn": wa * p0 * y1, "a_tn": wa * p0 * y0,
        }),
        "p0": (act * p0, {"p0_w": wa * p0, "p0_hit": wa * p0 * y0}),
        "p1": (act * p1, {"p1_w": wa * p1, "p1_hit": wa * p1 * y1}),
        "t0": (act * (1.0 - c1), {
            "t0_w": wa * y0, "t0_hit": wa * y0 * p0, "t0_fpr": wa * y0 * p1,
        }),
        "t1": (act * c1, {"t1_w": wa * y1, "t1_hit": wa * y1 * p1, "t1_fpr": wa * y1 * p0}),
        "u0": (pos * (1.0 - c1), {"u0_w": wu * y0, "u0_unk": wu * y0 * unk}),
        "u1": (pos * c1, {"u1_w": wu * y1, "u1_unk": wu * y1 * unk}),
        "b": (finite.astype(np.float64), {
            "b_w": wb, "b_brier": wb * brier, "b_logloss": wb * logloss,
        }),
    }  # fmt: skip
    sums = np.full(N_ROWS, math.nan)
    counts = np.full(N_ROWS, math.nan)
    fading = isinstance(estimator, Fading) and estimator.alpha != 1.0
    log_alpha = math.log(estimator.alpha) if fading else 0.0
    for own, rows in groups.values():
        if fading:
            later = own.sum() - np.cumsum(own)  # own events after each evaluation
            # the evaluations whose weight alpha ** later is above exp(FADED_OUT)
            start = int(np.searchsorted(-later, -FADED_OUT / log_alpha, "left"))
            fade = np.exp(later[start:] * log_alpha)
        for name, values in rows.items():
            counts[R[name]] = values.sum()
            sums[R[name]] = fade @ values[start:] if fading else counts[R[name]]
    return sums, counts


def values_of_sums(estimator, sums, counts) -> np.ndarray:
    """Every metric of :data:`~delaycv.metrics.formulas.METRICS` from corrected sums (NaN for
    :data:`UNCORRECTED`): the unfaded sums serve the counts under ``Fading``. One state (sums of
    shape ``(N_ROWS,)``; None: no value yet) or many (one row each)."""
    if sums is None:
        return np.full(len(METRICS), math.nan)
    sums = np.array(sums, dtype=np.float64)
    sums[..., _NAN_ROWS] = math.nan
    at = [R[k] for k in _COUNT_ROWS]
    c = sums.copy()
    if isinstance(make_estimator(estimator), Fading):
        c[..., at] = np.asarray(counts)[..., at]
    with np.errstate(invalid="ignore", divide="ignore"):
        return compute_many(sums, c, math.nan)


def corrected_values(estimator, pred, weight, proba, q, clock=None) -> np.ndarray:
    """Every metric of :data:`~delaycv.metrics.formulas.METRICS` (NaN for
    :data:`UNCORRECTED`) of evaluations whose labels are the expected labels ``q``, under
    ``estimator`` (``clock``: :func:`expected_sums`).

    >>> v = corrected_values("cumulative", [1, 1, 0, 0], [1, 1, 1, 1], [0.9, 0.8, 0.2, 0.1],
    ...                      [1.0, 0.5, 0.5, 0.0])
    >>> {k: float(v[METRICS.index(k)]) for k in ("tp", "fn", "recall_1", "fpr_1")}
    {'tp': 1.5, 'fn': 0.5, 'recall_1': 0.75, 'fpr_1': 0.25}
    """
    return values_of_sums(estimator, *expected_sums(estimator, pred, weight, proba, q, clock))


# ---------------------------------------------------------------------- growable columns


class _Column:
    """A growable numpy column (``values``: the filled part; new room holds ``fill``)."""

    __slots__ = ("data", "n", "fill")

    def __init__(self, dtype, fill=0) -> None:
        self.fill = fill
        self.data = np.full(1024, fill, dtype=dtype)
        self.n = 0

    def extend(self, values) -> None:
        values = np.asarray(values, dtype=self.data.dtype)
        need = self.n + values.size
        self.reserve(need)
        self.data[self.n : need] = values
        self.n = need

    def reserve(self, size: int) -> None:
        """Room for ``size`` values."""
        if size > self.data.size:
            grown = np.full(max(size, 2 * self.data.size), self.fill, dtype=self.data.dtype)
            grown[: self.data.size] = self.data
            self.data = grown

    def resize(self, size: int) -> None:
        """``size`` values (new ones: ``fill``)."""
        self.reserve(size)
        self.n = size

    @property
    def values(self) -> np.ndarray:
        return self.data[: self.n]


class _Grid:
    """Growable float arrays over whole units (days) from the stream's first, ``cols`` wide."""

    __slots__ = ("data",)

    def __init__(self, cols: int = 0) -> None:
        self.data = np.zeros((256, cols) if cols else 256)

    def reserve(self, size: int) -> None:
        if size > self.data.shape[0]:
            shape = (max(size, 2 * self.data.shape[0]), *self.data.shape[1:])
            grown = np.zeros(shape)
            grown[: self.data.shape[0]] = self.data
            self.data = grown

    def add(self, at: np.ndarray, values) -> None:
        if not np.size(at):
            return
        self.reserve(int(at.max()) + 1)
        np.add.at(self.data, at, values)

    def upto(self, size: int) -> np.ndarray:
        """The first ``size`` units (zeros beyond what was added)."""
        self.reserve(size)
        return self.data[:size]


# ---------------------------------------------------------------------- arrivals


class Arrivals:
    """The instances read so far, shared by the folds of a run (0-based by instance): arrival
    times, fix times (``label_time``; NaN: none), their days (``unit`` seconds each, counted from
    the first instance's; a stream of positions: ``unit`` = 1), and which fixes each checkpoint
    sees for the first time (:meth:`newly_fixed`)."""

    def __init__(self, unit: float = DAY) -> None:
        self.unit = float(unit)
        self.origin: float | None = None
        self._times = _Column(np.float64)
        self._fixes = _Column(np.float64, np.nan)
        self._day = _Column(np.int64)
        self._delay = _Column(np.int64)
        # fixes not seen at the last checkpoint: their times and instances, by time
        self._pending_at = np.zeros(0)
        self._pending_i = np.zeros(0, dtype=np.int64)
        self._seen = (0, -math.inf)  # the last checkpoint (m, t) advanced to
        self._fixed: dict[int, np.ndarray] = {}  # this chunk's checkpoints: m -> newly fixed

    def extend(self, times, fixes) -> None:
        """The next instances' times and fix times (a new chunk: forgets the last one's)."""
        t = np.asarray(times, dtype=np.float64)
        f = np.full(t.size, np.nan) if fixes is None else np.asarray(fixes, dtype=np.float64)
        if self.origin is None and t.size:
            self.origin = math.floor(t[0] / self.unit)
        self._times.extend(t)
        self._fixes.extend(f)
        day = self.day(t)
        self._day.extend(day)
        has = np.isfinite(f)
        delay = np.full(t.size, -1, dtype=np.int64)
        delay[has] = np.maximum(self.day(f[has]) - day[has], 0)
        self._delay.extend(delay)
        self._fixed = {}

    def day(self, t) -> np.ndarray:
        """The day (unit) of times ``t`` from the first instance's."""
        return np.floor(np.asarray(t, dtype=np.float64) / self.unit).astype(np.int64) - int(
            self.origin or 0
        )

    @property
    def times(self) -> np.ndarray:
        return self._times.values

    @property
    def fixes(self) -> np.ndarray:
        return self._fixes.values

    @property
    def days(self) -> np.ndarray:
        """Each instance's arrival day."""
        return self._day.values

    @property
    def delays(self) -> np.ndarray:
        """Each instance's delay to its fix in days (-1: none)."""
        return self._delay.values

    def newly_fixed(self, m: int, t: float) -> np.ndarray:
        """The instances (1-based, <= m) whose fix is seen at the checkpoint (m, t) and was not
        at the one before (the same answer for every fold: computed once per checkpoint)."""
        done = self._fixed.get(m)
        if done is not None:
            return done
        m0, t0 = self._seen
        if m < m0 or t < t0:
            raise ValueError(f"checkpoint ({m}, {t}) before ({m0}, {t0})")
        fixes = self.fixes[m0:m]
        has = np.flatnonzero(np.isfinite(fixes))
        at = np.concatenate((self._pending_at, fixes[has]))
        inst = np.concatenate((self._pending_i, has + m0 + 1))
        order = np.argsort(at, kind="stable")
        at, inst = at[order], inst[order]
        k = int(np.searchsorted(at, t, "right"))
        self._pending_at, self._pending_i = at[k:], inst[k:]
        self._seen = (m, t)
        out = np.sort(inst[:k])
        self._fixed[m] = out
        return out


# ---------------------------------------------------------------------- the fold's state

#: Categories of an evaluation in :class:`CorrectedState`: q settled to 0 or 1 for good; an
#: inspected label with errors (q by side and label); unfixed on a clean-assumption side (q by
#: side and age).
SETTLED_0, SETTLED_1, INSPECTED, UNFIXED = 0, 1, 2, 3
#: The features of an evaluation whose (clock-weighted) sums give every row: the weights of the
#: predictions 0 and 1, and for the probability metrics, w p^2 and -w log(1 - p) (the label 0's
#: terms) and w (1 - 2 p) and w log((1 - p) / p) (what the label 1 adds).
FEATURES = ("w_p0", "w_p1", "brier_0", "logloss_0", "brier_d", "logloss_d")
#: Each row as its fading group, its terms of the label 0 and its terms times q.
_ROWS = {
    "a_w": ("a", {"w_p0": 1, "w_p1": 1}, {}),
    "a_correct": ("a", {"w_p0": 1}, {"w_p1": 1, "w_p0": -1}),
    "a_p0": ("a", {"w_p0": 1}, {}),
    "a_p1": ("a", {"w_p1": 1}, {}),
    "a_t0": ("a", {"w_p0": 1, "w_p1": 1}, {"w_p0": -1, "w_p1": -1}),
    "a_t1": ("a", {}, {"w_p0": 1, "w_p1": 1}),
    "a_tp": ("a", {}, {"w_p1": 1}),
    "a_fp": ("a", {"w_p1": 1}, {"w_p1": -1}),
    "a_fn": ("a", {}, {"w_p0": 1}),
    "a_tn": ("a", {"w_p0": 1}, {"w_p0": -1}),
    "p0_w": ("p0", {"w_p0": 1}, {}),
    "p0_hit": ("p0", {"w_p0": 1}, {"w_p0": -1}),
    "p1_w": ("p1", {"w_p1": 1}, {}),
    "p1_hit": ("p1", {}, {"w_p1": 1}),
    "t0_w": ("t0", {"w_p0": 1, "w_p1": 1}, {"w_p0": -1, "w_p1": -1}),
    "t0_hit": ("t0", {"w_p0": 1}, {"w_p0": -1}),
    "t0_fpr": ("t0", {"w_p1": 1}, {"w_p1": -1}),
    "t1_w": ("t1", {}, {"w_p0": 1, "w_p1": 1}),
    "t1_hit": ("t1", {}, {"w_p1": 1}),
    "t1_fpr": ("t1", {}, {"w_p0": 1}),
    "u0_w": ("t0", {"w_p0": 1, "w_p1": 1}, {"w_p0": -1, "w_p1": -1}),
    "u0_unk": ("t0", {}, {}),
    "u1_w": ("t1", {}, {"w_p0": 1, "w_p1": 1}),
    "u1_unk": ("t1", {}, {}),
    "b_w": ("a", {"w_p0": 1, "w_p1": 1}, {}),
    "b_brier": ("a", {"brier_0": 1}, {"brier_d": 1}),
    "b_logloss": ("a", {"logloss_0": 1}, {"logloss_d": 1}),
}
#: The fading groups: a own events are the active evaluations (also the probability metrics'),
#: p0/p1 those predicted 0/1, t0/t1 those whose expected label is 0/1 (their clock).
GROUPS = ("a", "p0", "p1", "t0", "t1")
#: :data:`_ROWS` as arrays: each row's place in ``rows.R``, its group, and the coefficients of
#: its label-0 terms and of its q-terms over :data:`FEATURES`.
_ROW_AT = np.array([R[name] for name in _ROWS])
_ROW_GROUP = np.array([GROUPS.index(group) for group, _, _ in _ROWS.values()])
_ROW_ZERO = np.array([[terms.get(f, 0) for f in FEATURES] for _, terms, _ in _ROWS.values()], float)
_ROW_Q = np.array([[terms.get(f, 0) for f in FEATURES] for _, _, terms in _ROWS.values()], float)


def _features(pred, proba) -> np.ndarray:
    """The :data:`FEATURES` of engine evaluations (a known prediction, weight 1: the engine
    scores every evaluation once; the training weight is the learner's)."""
    p = np.asarray(pred)
    pr = np.asarray(proba, dtype=np.float64)
    pc = np.clip(pr, _EPS, 1.0 - _EPS)
    out = np.empty((p.size, len(FEATURES)))
    out[:, 0] = p == 0
    out[:, 1] = p == 1
    out[:, 2] = pr**2
    out[:, 3] = -np.log(1.0 - pc)
    out[:, 4] = 1.0 - 2.0 * pr
    out[:, 5] = np.log(1.0 - pc) - np.log(pc)
    return out


class _Sums:
    """The clock-weighted sums of one fold's evaluations, by category (see
    :class:`CorrectedState`). Per group g, quantities are kept times alpha ** -(c - base[g])
    (c an evaluation's clock), so that alpha ** (clock[g] - base[g]) brings them to now; every
    group shares clock 0 and alpha 1 under ``Cumulative``."""

    def __init__(self, alpha: float) -> None:
        self.alpha = float(alpha)
        self.log_alpha = math.log(self.alpha)
        #: alpha ** -(c - base) stays finite for c - base up to span
        self.span = math.inf if self.alpha == 1.0 else 600.0 / -self.log_alpha
        g, f = len(GROUPS), len(FEATURES)
        self.clock = np.zeros(g)  # each group's own events so far (its clock)
        self.base = np.zeros(g)
        self.zero = np.zeros((g, f))  # the label-0 terms of every evaluation
        self.ones = np.zeros((g, f))  # the q-terms of the evaluations settled to 1
        self.inspected = np.zeros((2, 2, g, f))  # by side and inspected label
        self.unfixed = (_Grid(g * f), _Grid(g * f))  # by side, by arrival day
        self.counts_zero = np.zeros(f)  # unfaded: the label-0 terms
        self.counts_ones = np.zeros(f)  # unfaded: the q-terms settled to 1
        self.counts_inspected = np.zeros((2, 2, f))
        self.counts_unfixed = (_Grid(f), _Grid(f))

    def factors(self, clocks: np.ndarray) -> np.ndarray:
        """alpha ** -(c - base) per evaluation (rows of ``clocks``) and group."""
        if self.alpha == 1.0:
            return np.ones(clocks.shape)
        return np.exp(-(clocks - self.base) * self.log_alpha)

    def rebase(self) -> None:
        """Bring the groups whose clock ran ``span`` past their base back to a base of now."""
        far = self.clock - self.base > self.span
        if not far.any():
            return
        shrink = np.where(far, np.exp((self.clock - self.base) * self.log_alpha), 1.0)
        self.base = np.where(far, self.clock, self.base)
        self.zero *= shrink[:, None]
        self.ones *= shrink[:, None]
        self.inspected *= shrink[None, None, :, None]
        col = np.repeat(shrink, len(FEATURES))
        for grid in self.unfixed:
            grid.data *= col

    def add(self, what: int, phi, fac, side, label, day) -> None:
        """Add evaluations (their features ``phi``, group factors ``fac``) whose q-terms go to
        ``what`` (a category) by side, label and day."""
        terms = fac[:, :, None] * phi[:, None, :]  # evaluations x groups x features
        if what == SETTLED_1:
            self.ones += terms.sum(axis=0)
            self.counts_ones += phi.sum(axis=0)
        elif what == INSPECTED:
            np.add.at(self.inspected, (side, label), terms)
            np.add.at(self.counts_inspected, (side, label), phi)
        elif what == UNFIXED:
            for s in (0, 1):
                mine = side == s
                if not mine.any():
                    continue
                flat = terms[mine].reshape(int(mine.sum()), -1)
                self.unfixed[s].add(day[mine], flat)
                self.counts_unfixed[s].add(day[mine], phi[mine])

    def remove(self, what: int, phi, fac, side, label, day) -> None:
        """Take evaluations back out of ``what`` (before they settle to 1)."""
        self.add(what, -phi, fac, side, label, day)

    def rows(self, q_inspected: np.ndarray, g_unfixed: list, today: int) -> tuple:
        """The sums and unfaded sums of every row now: ``q_inspected[s, o]`` the expected label
        of an inspected label o on side s, ``g_unfixed[s]`` that of an unfixed instance on side
        s by age (None: the side has none), ``today`` the checkpoint's day."""
        g, f = len(GROUPS), len(FEATURES)
        ones = self.ones.copy()
        counts_ones = self.counts_ones.copy()
        for s in (0, 1):
            for o in (0, 1):
                q = q_inspected[s, o]
                if self.counts_inspected[s, o].any():
                    ones += q * self.inspected[s, o]
                    counts_ones += q * self.counts_inspected[s, o]
            if g_unfixed[s] is None:
                continue
            ages = g_unfixed[s][today::-1]  # arrival days 0 .. today
            ones += (ages @ self.unfixed[s].upto(today + 1)).reshape(g, f)
            counts_ones += ages @ self.counts_unfixed[s].upto(today + 1)
        now = np.exp((self.clock - self.base) * self.log_alpha)[_ROW_GROUP]
        sums = np.full(N_ROWS, math.nan)
        counts = np.full(N_ROWS, math.nan)
        zero, ones = self.zero[_ROW_GROUP], ones[_ROW_GROUP]
        sums[_ROW_AT] = now * ((zero * _ROW_ZERO).sum(axis=1) + (ones * _ROW_Q).sum(axis=1))
        counts[_ROW_AT] = _ROW_ZERO @ self.counts_zero + _ROW_Q @ counts_ones
        return sums, counts


class CorrectedState:
    """One fold's corrected reference, fed by the engine: the predicted side of every instance
    read (:meth:`add_sides`), the fold's evaluations in order (:meth:`add_evaluations`), and the
    values at each checkpoint in turn (:meth:`values`), from what the fold knows then.

    The label model (steps 1-3 of the module docstring) is kept by arrival day: per side, its
    instances and its fixes seen; for the inspected side, the Kaplan-Meier sample of its
    defective instances whose window has ended (events by delay, censored by arrival day and
    label). The sums are :class:`_Sums` under ``Cumulative`` and ``Fading``; under ``Sliding`` and
    ``Tumbling`` the scope's evaluations are scored directly (:func:`corrected_values`)."""

    def __init__(self, estimator, disclosure: Disclosure, arrivals: Arrivals) -> None:
        self.estimator = make_estimator(estimator)
        self.disclosure = disclosure
        self.arrivals = arrivals
        self.direct = isinstance(self.estimator, Sliding | Tumbling)
        alpha = self.estimator.alpha if isinstance(self.estimator, Fading) else 1.0
        self.sums = _Sums(alpha)
        self.sides = _Column(np.int8)
        self.eval_of = _Column(np.int64, -1)  # per instance: its evaluation (-1: none yet)
        self.log = {
            name: _Column(dtype)
            for name, dtype in (
                ("instance", np.int64),
                ("side", np.int8),
                ("pred", np.int8),
                ("proba", np.float64),
                ("observed", np.int8),
                ("category", np.int8),
            )
        }
        self.clocks = _Column(np.float64)  # per evaluation and group, flattened (Fading)
        self.included = 0  # evaluations folded into the model and the sums
        self.arrived = 0  # instances folded into the model
        self.fixed = _Column(bool)  # per instance: its fix seen
        # the label model by side: instances and fixes seen, by arrival day and by delay
        self.by_day = (_Grid(), _Grid())
        self.unfixed_by_day = (_Grid(), _Grid())
        self.fix_delays = (_Grid(), _Grid())
        self.n_fixed = np.zeros(2)
        # the inspected side's sample: events by delay, censored by arrival day and label
        self.sampled = 0  # instances of the inspected side considered so far (arrival order)
        self.in_sample = _Column(np.int8, -1)  # per instance: -1 not sampled, 0/1 label, 2 event
        self.sample_events = _Grid()
        self.sample_censored = (_Grid(), _Grid())
        # inspected labels with errors by side and label, unfixed evaluations by side
        self.n_inspected = np.zeros((2, 2))
        self.n_unfixed = np.zeros(2)

    # ------------------------------------------------------------------ feeding

    def add_sides(self, sides) -> None:
        """The predicted sides of the next instances read."""
        self.sides.extend(sides)
        for column in (self.eval_of, self.fixed, self.in_sample):
            column.resize(self.sides.n)

    def add_evaluations(self, instance, side, pred, proba, observed) -> None:
        """The next evaluations, in evaluation order: the instance (1-based), its predicted side,
        the scored prediction, P(1) and the observed label (each scored once, weight 1)."""
        n = np.size(instance)
        for name, values in zip(
            ("instance", "side", "pred", "proba", "observed", "category"),
            (instance, side, pred, proba, observed, np.zeros(n)),
            strict=True,
        ):
            self.log[name].extend(values)

    @property
    def evaluated(self) -> int:
        return self.log["instance"].n

    # ------------------------------------------------------------------ a checkpoint

    def values(self, bound: int, m: int, t: float) -> np.ndarray:
        """The corrected metrics (``METRICS`` order) after the first ``bound`` evaluations, at the
        checkpoint of instance ``m`` at time ``t`` (checkpoints in order)."""
        return self.values_at([(bound, m, t)])[0]

    def values_at(self, checkpoints) -> np.ndarray:
        """:meth:`values` at each of several checkpoints ``(bound, m, t)``, in order: one row
        each."""
        sums = np.full((len(checkpoints), N_ROWS), math.nan)
        counts = sums.copy()
        for k, (bound, m, t) in enumerate(checkpoints):
            s, c = self._sums_at(int(bound), int(m), float(t))
            if s is not None:
                sums[k], counts[k] = s, c
        return values_of_sums(self.estimator, sums, counts).reshape(len(checkpoints), -1)

    def _sums_at(self, bound: int, m: int, t: float) -> tuple:
        """The state brought to the checkpoint, and its sums and unfaded sums."""
        today = int(self.arrivals.day(t))
        self._arrive(m)
        self._fix(self.arrivals.newly_fixed(m, t))
        new = self._register(bound)
        self._sample(m, t)
        model = self._model(today)
        if self.direct:
            self.included = bound
            return self._direct(bound, model, today)
        self._add_terms(new, model, today)
        self.included = bound
        self.sums.rebase()
        q_inspected, g_unfixed = model
        g_unfixed = [g if n > 0 else None for g, n in zip(g_unfixed, self.n_unfixed, strict=True)]
        return self.sums.rows(q_inspected, g_unfixed, today)

    def _log_slice(self, lo: int, hi: int) -> dict:
        return {k: c.values[lo:hi] for k, c in self.log.items()}

    def _arrive(self, m: int) -> None:
        """Fold the instances up to m into the label model (their sides by arrival day)."""
        lo = self.arrived
        if m <= lo:
            return
        side = self.sides.values[lo:m]
        day = self.arrivals.days[lo:m]
        for s in (0, 1):
            mine = side == s
            self.by_day[s].add(day[mine], 1.0)
            self.unfixed_by_day[s].add(day[mine], 1.0)
        self.arrived = m

    def _fix(self, instances: np.ndarray) -> None:
        """The fixes seen now: the model's counts, the sample, and the evaluations they settle."""
        if not instances.size:
            return
        at = instances - 1
        self.fixed.data[at] = True
        side = self.sides.values[at]
        day = self.arrivals.days[at]
        delay = self.arrivals.delays[at]
        for s in (0, 1):
            mine = side == s
            self.n_fixed[s] += np.count_nonzero(mine)
            self.unfixed_by_day[s].add(day[mine], -1.0)
            self.fix_delays[s].add(delay[mine], 1.0)
        sampled = self.in_sample.data[at]
        for o in (0, 1):
            was = sampled == o
            self.sample_censored[o].add(day[was], -1.0)
            self.sample_events.add(delay[was], 1.0)
        self.in_sample.data[at[(sampled == 0) | (sampled == 1)]] = 2
        ev = self.eval_of.data[at]
        ev = ev[(ev >= 0) & (ev < self.included)]
        if not ev.size:
            return
        category = self.log["category"].data[ev]
        moving = ev[(category == INSPECTED) | (category == UNFIXED)]
        if moving.size:
            what = self.log["category"].data[moving]
            for c in (INSPECTED, UNFIXED):
                pick = moving[what == c]
                if pick.size:
                    self._move(pick, c)
            self.log["category"].data[moving] = SETTLED_1

    def _move(self, ev: np.ndarray, category: int) -> None:
        """Evaluations ``ev`` of ``category`` settle to q = 1 (a late fix)."""
        log = self.log
        phi = _features(log["pred"].data[ev], log["proba"].data[ev])
        fac = self.sums.factors(self._clocks_of(ev))
        side = log["side"].data[ev].astype(np.int64)
        label = log["observed"].data[ev].astype(np.int64)
        day = self.arrivals.days[log["instance"].data[ev] - 1]
        if category == INSPECTED:
            np.add.at(self.n_inspected, (side, label), -1)
        else:
            np.add.at(self.n_unfixed, side, -1)
        if self.direct:
            return
        self.sums.remove(category, phi, fac, side, label, day)
        self.sums.add(SETTLED_1, phi, fac, side, label, day)

    def _clocks_of(self, ev: np.ndarray) -> np.ndarray:
        g = len(GROUPS)
        if self.sums.alpha == 1.0:
            return np.zeros((ev.size, g))
        flat = self.clocks.values.reshape(-1, g)
        return flat[ev]

    def _sample(self, m: int, t: float) -> None:
        """The inspected side's instances whose window has ended by the checkpoint join the
        Kaplan-Meier sample: an event (their fix seen) or censored (by label)."""
        s = self.disclosure.inspected
        if s is None:
            return
        amount, is_count = self.disclosure.window[s]
        if is_count:
            upto = max(0, min(m, int(m - amount)))
        else:
            upto = int(np.searchsorted(self.arrivals.times[:m], t - amount, "right"))
        lo = self.sampled
        if upto <= lo:
            return
        at = np.arange(lo, upto)
        ev = self.eval_of.data[at]
        pick = (self.sides.values[at] == s) & (ev >= 0)
        at, ev = at[pick], ev[pick]
        fixed = self.fixed.data[at]
        self.sample_events.add(self.arrivals.delays[at[fixed]], 1.0)
        self.in_sample.data[at[fixed]] = 2
        label = self.log["observed"].data[ev[~fixed]]
        day = self.arrivals.days[at[~fixed]]
        for o in (0, 1):
            self.sample_censored[o].add(day[label == o], 1.0)
        self.in_sample.data[at[~fixed]] = label
        self.sampled = upto

    def _model(self, today: int) -> tuple[np.ndarray, list]:
        """The expected labels now: of an inspected label by side and label, and of an unfixed
        instance by side and age (None for a side whose window ends in the truth)."""
        disc = self.disclosure
        size = today + 1
        e = disc.inspection_error
        q_inspected = np.array([[0.0, 1.0], [0.0, 1.0]])
        if e > 0:
            for s in (0, 1):
                n0, n1 = self.n_inspected[s]
                r = n1 / (n0 + n1) if n0 + n1 else math.nan
                q_inspected[s] = inspected_posterior(r, e)
        F = None
        s_in = disc.inspected
        if s_in is not None:
            events = self.sample_events.upto(size)
            if events.any():
                w0, w1 = q_inspected[s_in]
                censored = (
                    w0 * self.sample_censored[0].upto(size)[::-1]
                    + w1 * self.sample_censored[1].upto(size)[::-1]
                )
                F = grid_cdf(events, censored)
        g_unfixed: list = [None, None]
        for s in (0, 1):
            if disc.truth[s]:
                continue
            g_unfixed[s] = self._unfixed_chance(s, F, size)
        return q_inspected, g_unfixed

    def _unfixed_chance(self, s: int, F, size: int) -> np.ndarray:
        """The expected label of an unfixed instance of side s by age (0 .. size - 1)."""
        if F is not None:
            spent = float(self.by_day[s].upto(size)[::-1] @ F)
            if spent > 0:
                pi = min(1.0, self.n_fixed[s] / spent)
                return defect_chance(pi, F)
        if not self.n_fixed[s]:
            return np.full(size, math.nan)
        H = grid_cdf(self.fix_delays[s].upto(size), self.unfixed_by_day[s].upto(size)[::-1])
        return fixes_to_come(H)

    def _register(self, bound: int) -> dict:
        """The evaluations up to ``bound`` not yet included: their instances' evaluation, their
        category (the fixes seen now), the counts of the inspected labels and unfixed ones."""
        new = self._log_slice(self.included, bound)
        at = new["instance"] - 1
        self.eval_of.data[at] = np.arange(self.included, bound)
        side = new["side"].astype(np.int64)
        label = new["observed"].astype(np.int64)
        truth = np.array(self.disclosure.truth)[side]
        noisy = self.disclosure.inspection_error > 0
        category = np.where(
            self.fixed.data[at],
            SETTLED_1,
            np.where(truth, np.where(noisy, INSPECTED, label), UNFIXED),
        ).astype(np.int8)
        new["category"][:] = category
        inspected = category == INSPECTED
        np.add.at(self.n_inspected, (side[inspected], label[inspected]), 1)
        np.add.at(self.n_unfixed, side[category == UNFIXED], 1)
        return new

    def _add_terms(self, new: dict, model, today: int) -> None:
        """The new evaluations' clocks (``Fading``) and their terms in the sums."""
        if not new["instance"].size:
            return
        category = new["category"]
        side = new["side"].astype(np.int64)
        label = new["observed"].astype(np.int64)
        day = self.arrivals.days[new["instance"] - 1]
        q = self._expected(category, side, label, day, *model, today)
        phi = _features(new["pred"], new["proba"])
        fac = self._tick(new, np.where(np.isnan(q), label, q))
        # the label-0 terms of every evaluation; the q-terms by category
        self.sums.zero += np.einsum("eg,ef->gf", fac, phi)
        self.sums.counts_zero += phi.sum(axis=0)
        for what in (SETTLED_1, INSPECTED, UNFIXED):
            pick = category == what
            if pick.any():
                self.sums.add(what, phi[pick], fac[pick], side[pick], label[pick], day[pick])

    def _tick(self, new: dict, q: np.ndarray) -> np.ndarray:
        """The new evaluations' clocks (``Fading``: each group's own events up to each, the
        label's groups counting the expected labels now) and their factors."""
        if self.sums.alpha == 1.0:
            return np.ones((q.size, len(GROUPS)))
        active = np.ones(q.size)
        p = new["pred"]
        ticks = np.column_stack(
            (active, active * (p == 0), active * (p == 1), active * (1.0 - q), active * q)
        )
        clocks = self.sums.clock + np.cumsum(ticks, axis=0)
        self.sums.clock = clocks[-1].copy()
        self.clocks.extend(clocks.reshape(-1))
        return self.sums.factors(clocks)

    def _expected(self, category, side, label, day, q_inspected, g_unfixed, today):
        """q of evaluations of the given categories now."""
        q = np.where(category == SETTLED_1, 1.0, 0.0)
        q = np.where(category == SETTLED_0, label.astype(np.float64), q)
        inspected = category == INSPECTED
        q[inspected] = q_inspected[side[inspected], label[inspected]]
        for s in (0, 1):
            pick = (category == UNFIXED) & (side == s)
            if pick.any():
                q[pick] = g_unfixed[s][today - day[pick]]
        return q

    def _direct(self, bound: int, model, today: int) -> np.ndarray:
        """Sliding and tumbling: the scope's evaluations scored with their q now."""
        scope = _scope(self.estimator, bound)
        if scope is None:
            return None, None
        log = self._log_slice(scope.start, scope.stop)
        at = log["instance"] - 1
        category = np.where(self.fixed.data[at], SETTLED_1, log["category"])
        q = self._expected(
            category,
            log["side"].astype(np.int64),
            log["observed"].astype(np.int64),
            self.arrivals.days[at],
            *model,
            today,
        )
        # the scope is the window (Sliding) or the chunk (Tumbling): all of it counts
        return expected_sums(_WHOLE, log["pred"], np.ones(q.size), log["proba"], q)
