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
   inspection, once its window has ended (their true labels are known whatever their fixes;
   with inspection errors the unfixed count in the risk sets with the Rogan-Gladen weights of
   their labels, :func:`~delaycv.metrics.corrected_kernel.censored_weights`).
   pi is the side's defect rate: its fixes seen over the sum of F at its instances' ages. Without
   an inspected side (or before it has a fix), the Kaplan-Meier estimate H of the delay to a fix
   over the side's own instances gives only the fixes still to come,
   ``g(a) = (H(d) - H(a)) / (1 - H(a))`` with d the longest delay seen: the defects no fix will
   reveal stay unseen. A side without a fix yet takes H over every clean-assumption side's
   instances; no fix seen on any of them: q is NaN (nothing to estimate from).

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

from delaycv.common import native
from delaycv.common.portable import dot, exp, log
from delaycv.metrics import corrected_kernel
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
                "come (from the delays of the fixes seen), and the defects no fix reveals stay "
                "unseen (docs/corrected.md, 'Automatic labelling')"
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
    False: censored there), ``weights`` (frequency weights, default 1; a censored weight may be
    negative, an unbiased count of defects among noisy labels: the censored at risk at d count at
    least 0). Returns the distinct event times (of positive weight), ascending, and F at each (a
    step function, right-continuous; 0 before the first). Ties: events before censorings at the
    same duration.

    >>> times, F = kaplan_meier([1, 2, 2, 3, 5], [True, True, False, True, False])
    >>> times.tolist(), [round(float(f), 4) for f in F]
    ([1.0, 2.0, 3.0], [0.2, 0.4, 0.7])
    """
    d = np.asarray(durations, dtype=np.float64)
    e = np.asarray(events, dtype=bool)
    w = np.ones(d.size) if weights is None else np.asarray(weights, dtype=np.float64)
    event = e & (w > 0)
    if not event.any():
        return np.zeros(0), np.zeros(0)
    times, at = np.unique(d[event], return_inverse=True)
    happened = np.bincount(at, w[event], minlength=times.size)

    def at_risk(mine: np.ndarray) -> np.ndarray:
        """The weight of the durations ``mine`` at least each event time."""
        order = np.argsort(d[mine], kind="stable")
        tail = np.append(np.cumsum(w[mine][order][::-1])[::-1], 0.0)
        return tail[np.searchsorted(d[mine][order], times, "left")]

    risk = at_risk(event) + np.maximum(at_risk(~e), 0.0)
    return times, 1.0 - np.cumprod(1.0 - happened / risk)


def cdf_at(times: np.ndarray, cdf: np.ndarray, x) -> np.ndarray:
    """The step function of :func:`kaplan_meier` at ``x`` (0 before the first event time)."""
    k = np.searchsorted(times, x, "right")
    out = np.zeros(np.shape(x))
    hit = k > 0
    out[hit] = cdf[k[hit] - 1]
    return out


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
    logloss = np.where(finite, -(y1 * log(pc) + y0 * log(1.0 - pc)), 0.0)
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
            fade = exp(later[start:] * log_alpha)
        for name, values in rows.items():
            counts[R[name]] = values.sum()
            sums[R[name]] = dot(fade, values[start:]) if fading else counts[R[name]]
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

#: Each row of ``rows.R`` with a corrected value as its fading group (a: every evaluation, also
#: the probability metrics'; p0/p1: those predicted 0/1; t0/t1: those whose label is 0/1, also
#: the unknown rates'), its label-0 terms (over the features prediction 0, prediction 1, p^2,
#: -log(1 - p)) and its terms times q (over prediction 0, prediction 1, 1 - 2 p,
#: log((1 - p) / p)): :mod:`delaycv.metrics.corrected_kernel` keeps the features' sums.
_ROWS = {
    "a_w": ("a", {"p0": 1, "p1": 1}, {}),
    "a_correct": ("a", {"p0": 1}, {"p1": 1, "p0": -1}),
    "a_p0": ("a", {"p0": 1}, {}),
    "a_p1": ("a", {"p1": 1}, {}),
    "a_t0": ("a", {"p0": 1, "p1": 1}, {"p0": -1, "p1": -1}),
    "a_t1": ("a", {}, {"p0": 1, "p1": 1}),
    "a_tp": ("a", {}, {"p1": 1}),
    "a_fp": ("a", {"p1": 1}, {"p1": -1}),
    "a_fn": ("a", {}, {"p0": 1}),
    "a_tn": ("a", {"p0": 1}, {"p0": -1}),
    "p0_w": ("p0", {"p0": 1}, {}),
    "p0_hit": ("p0", {"p0": 1}, {"p0": -1}),
    "p1_w": ("p1", {"p1": 1}, {}),
    "p1_hit": ("p1", {}, {"p1": 1}),
    "t0_w": ("t0", {"p0": 1, "p1": 1}, {"p0": -1, "p1": -1}),
    "t0_hit": ("t0", {"p0": 1}, {"p0": -1}),
    "t0_fpr": ("t0", {"p1": 1}, {"p1": -1}),
    "t1_w": ("t1", {}, {"p0": 1, "p1": 1}),
    "t1_hit": ("t1", {}, {"p1": 1}),
    "t1_fpr": ("t1", {}, {"p0": 1}),
    "u0_w": ("t0", {"p0": 1, "p1": 1}, {"p0": -1, "p1": -1}),
    "u0_unk": ("t0", {}, {}),
    "u1_w": ("t1", {}, {"p0": 1, "p1": 1}),
    "u1_unk": ("t1", {}, {}),
    "b_w": ("a", {"p0": 1, "p1": 1}, {}),
    "b_brier": ("a", {"brier": 1}, {"brier": 1}),
    "b_logloss": ("a", {"logloss": 1}, {"logloss": 1}),
}
_GROUPS = ("a", "p0", "p1", "t0", "t1")
_TERMS = ("p0", "p1", "brier", "logloss")
_ROW_AT = np.array([R[name] for name in _ROWS])
_ROW_GROUP = np.array([_GROUPS.index(group) for group, _, _ in _ROWS.values()])
_ROW_ZERO = np.array([[z.get(f, 0) for f in _TERMS] for _, z, _ in _ROWS.values()], float)
_ROW_Q = np.array([[q.get(f, 0) for f in _TERMS] for _, _, q in _ROWS.values()], float)

#: The kernel of :class:`CorrectedState`: compiled where it is built, else its numpy twin.
KERNEL, KERNEL_STATUS = native.load("delaycv.metrics._corrected_kernel", corrected_kernel)


class CorrectedState:
    """One fold's corrected reference, fed by the engine: the predicted side of every instance
    read (:meth:`add_sides`), the fold's evaluations in order (:meth:`add_evaluations`), and the
    values at the checkpoints in turn (:meth:`values_at`), from what the fold knows then. The
    state is a :class:`~delaycv.metrics.corrected_kernel.Kernel` (``kernel``: the module that
    holds it, default :data:`KERNEL`); under ``Sliding`` and ``Tumbling`` the scope's evaluations
    are scored with their q now (:func:`expected_sums`)."""

    def __init__(self, estimator, disclosure: Disclosure, arrivals: Arrivals, kernel=None) -> None:
        self.estimator = make_estimator(estimator)
        self.disclosure = disclosure
        self.arrivals = arrivals
        self.direct = isinstance(self.estimator, Sliding | Tumbling)
        alpha = self.estimator.alpha if isinstance(self.estimator, Fading) else 1.0
        inspected = disclosure.inspected
        self.kernel = (kernel or KERNEL).Kernel(
            alpha,
            disclosure.truth,
            -1 if inspected is None else inspected,
            disclosure.inspection_error,
            tuple(amount for amount, _ in disclosure.window),
            tuple(count for _, count in disclosure.window),
        )
        self.sides = _Column(np.int8)
        self.log = tuple(
            _Column(dtype) for dtype in (np.int64, np.int8, np.int8, np.float64, np.int8)
        )  # instance, side, pred, proba, observed

    def add_sides(self, sides) -> None:
        """The predicted sides of the next instances read."""
        self.sides.extend(sides)

    def add_evaluations(self, instance, side, pred, proba, observed) -> None:
        """The next evaluations, in evaluation order: the instance (1-based), its predicted side,
        the scored prediction, P(1) and the observed label (each scored once, weight 1: the
        training weight is the learner's)."""
        for column, values in zip(self.log, (instance, side, pred, proba, observed), strict=True):
            column.extend(values)

    @property
    def evaluated(self) -> int:
        return self.log[0].n

    def values(self, bound: int, m: int, t: float) -> np.ndarray:
        """The corrected metrics (``METRICS`` order) after the first ``bound`` evaluations, at the
        checkpoint of instance ``m`` at time ``t`` (checkpoints in order)."""
        return self.values_at([(bound, m, t)])[0]

    def values_at(self, checkpoints) -> np.ndarray:
        """:meth:`values` at each of several checkpoints ``(bound, m, t)``, in order: one row
        each."""
        k = len(checkpoints)
        bounds = np.array([c[0] for c in checkpoints], dtype=np.int64)
        ms = np.array([c[1] for c in checkpoints], dtype=np.int64)
        ts = np.array([c[2] for c in checkpoints], dtype=np.float64)
        todays = self.arrivals.day(ts)
        fixed = [self.arrivals.newly_fixed(int(m), float(t)) for m, t in zip(ms, ts, strict=True)]
        ptr = np.zeros(k + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([f.size for f in fixed])
        fixed_inst = np.concatenate(fixed) if k else np.zeros(0, dtype=np.int64)
        a = self.arrivals
        stream = (self.sides.values, a.days, a.delays, a.times)
        log = tuple(c.values for c in self.log)
        g = len(_GROUPS)
        out = {
            "now": np.zeros((k, g)),
            "zero": np.zeros((k, g, len(_TERMS))),
            "ones": np.zeros((k, g, len(_TERMS))),
            "counts_zero": np.zeros((k, len(_TERMS))),
            "counts_ones": np.zeros((k, len(_TERMS))),
        }
        sums = np.full((k, N_ROWS), math.nan)
        counts = sums.copy()
        if self.direct:
            for j in range(k):
                one = slice(j, j + 1)
                at = slice(int(ptr[j]), int(ptr[j + 1]))
                self.kernel.advance(
                    bounds[one], ms[one], ts[one], todays[one], fixed_inst[at],
                    np.array([0, at.stop - at.start], dtype=np.int64), stream, log,
                    {key: value[one] for key, value in out.items()},
                )  # fmt: skip
                s, c = self._direct(int(bounds[j]), int(todays[j]), log)
                if s is not None:
                    sums[j], counts[j] = s, c
        else:
            self.kernel.advance(bounds, ms, ts, todays, fixed_inst, ptr, stream, log, out)
            now = out["now"][:, _ROW_GROUP]
            zero = (out["zero"][:, _ROW_GROUP] * _ROW_ZERO).sum(axis=2)
            ones = (out["ones"][:, _ROW_GROUP] * _ROW_Q).sum(axis=2)
            sums[:, _ROW_AT] = now * (zero + ones)
            counts[:, _ROW_AT] = dot(out["counts_zero"], _ROW_ZERO.T) + dot(
                out["counts_ones"], _ROW_Q.T
            )
        return values_of_sums(self.estimator, sums, counts).reshape(k, -1)

    def _direct(self, bound: int, today: int, log) -> tuple:
        """Sliding and tumbling: the scope's evaluations scored with their q now."""
        scope = _scope(self.estimator, bound)
        if scope is None:
            return None, None
        q = self.kernel.expected(scope.start, scope.stop, today, self.arrivals.days, log)
        pred, proba = log[2][scope], log[3][scope]
        # the scope is the window (Sliding) or the chunk (Tumbling): all of it counts
        return expected_sums(_WHOLE, pred, np.ones(q.size), proba, q)
