"""The state of one fold's corrected reference, kept by arrival day: :class:`Kernel`, in numpy.

The same class exists compiled (``_corrected_kernel.pyx``: the same steps in C loops, the same
values up to the order of floating-point sums: ``tests/metrics/test_corrected_reference.py``);
:mod:`delaycv.metrics.corrected` takes the compiled one where it is built
(``delaycv.common.native``). What is computed is the module docstring of
:mod:`delaycv.metrics.corrected`; here is how it is kept.

Per instance (0-based): its evaluation (``eval_of``, -1: none yet), whether its fix has been seen
(``fixed``), its place in the Kaplan-Meier sample (``in_sample``: -1 none, 0/1 censored with that
inspected label, 2 an event). Per evaluation: its category (``category``: 0/1 settled to that
q, 2 an inspected label with errors, 3 unfixed on a clean-assumption side) and, under ``Fading``,
its clock in each group (``clocks``).

Per arrival day, for each clean-assumption side (its row: ``row``; a side whose truth is known
has none): the instances (``by_day``), those unfixed (``unfixed_by_day``), the fixes by delay
(``fix_delays``), the unfixed evaluations' unfaded q-terms (``counts_unfixed``: row x feature x
day), their chance by age (``g``) and, under ``Fading`` only, their q-terms (``unfixed``: row x
(group, feature) x day); with an inspected side, the sample's events by delay
(``sample_events``) and censored by arrival day and label (``sample_censored``). Only these grow
with the days of the stream (:data:`BY_DAY`).

The sums: per group, its clock and base (quantities kept times alpha ** -(c - base), c an
evaluation's clock); the label-0 terms of every evaluation (``zero``), the q-terms of those
settled to 1 (``ones``), of the inspected labels by side and label (``inspected``); and the
same unfaded (``counts_*``). A checkpoint's q-terms add the inspected ones times their posterior
and the unfixed ones times their chance by age (:meth:`Kernel.advance`).
"""

from __future__ import annotations

import math

import numpy as np

from delaycv.common.portable import dot, exp, log

#: The groups (fading): all evaluations, those predicted 0, 1, those whose label is 0, 1.
N_GROUPS = 5
#: Features of an evaluation: its label-0 terms (prediction 0, prediction 1, p^2, -log(1 - p))
#: and its q-terms (prediction 0, prediction 1, 1 - 2 p, log((1 - p) / p)).
N_FEATURES = 4
SETTLED_0, SETTLED_1, INSPECTED, UNFIXED = 0, 1, 2, 3
_EPS = float(np.finfo(np.float64).eps)
#: clocks' factors stay finite within this many own events of their base
SPAN_EXPONENT = 600.0
#: the arrays kept by arrival day, by (a side is inspected, fading): the clean-assumption sides'
#: (their rows only), the sample's with an inspected side, the unfixed faded sums under fading
BY_DAY = {
    (sampled, fading): (
        "by_day", "unfixed_by_day", "fix_delays", "counts_unfixed", "g",
        *(("sample_events", "sample_censored") if sampled else ()),
        *(("unfixed",) if fading else ()),
    )
    for sampled in (False, True)
    for fading in (False, True)
}  # fmt: skip


def features(pred, proba) -> tuple[np.ndarray, np.ndarray]:
    """(label-0 terms, q-terms) of evaluations, each (n, N_FEATURES)."""
    p = np.asarray(pred)
    pr = np.asarray(proba, dtype=np.float64)
    pc = np.minimum(np.maximum(pr, _EPS), 1.0 - _EPS)
    zero = np.empty((p.size, N_FEATURES))
    q = np.empty((p.size, N_FEATURES))
    zero[:, 0] = q[:, 0] = p == 0
    zero[:, 1] = q[:, 1] = p == 1
    zero[:, 2] = pr * pr
    zero[:, 3] = -log(1.0 - pc)
    q[:, 2] = 1.0 - 2.0 * pr
    q[:, 3] = log(1.0 - pc) - log(pc)
    return zero, q


def _grow(array: np.ndarray, size: int, axis: int = -1, fill=0) -> np.ndarray:
    """``array`` with at least ``size`` along ``axis`` (doubling; new room ``fill``)."""
    have = array.shape[axis]
    if size <= have:
        return array
    shape = list(array.shape)
    shape[axis] = max(size, 2 * have)
    grown = np.full(shape, fill, dtype=array.dtype)
    index = [slice(None)] * array.ndim
    index[axis] = slice(0, have)
    grown[tuple(index)] = array
    return grown


class Kernel:
    """One fold's corrected state (see the module docstring). ``alpha``: the fading factor (1:
    every evaluation counts alike); ``truth``: per side, its window ends in the truth;
    ``inspected``: the side whose inspected labels give the fix delays (-1: none);
    ``error``: the inspection error rate; ``amount``/``count``: each side's window."""

    def __init__(self, alpha, truth, inspected, error, amount, count) -> None:
        self.alpha = float(alpha)
        self.log_alpha = math.log(self.alpha)
        self.span = math.inf if self.alpha == 1.0 else SPAN_EXPONENT / -self.log_alpha
        self.truth = tuple(bool(x) for x in truth)
        self.inspected_side = int(inspected)
        self.error = float(error)
        self.amount = tuple(float(x) for x in amount)
        self.count = tuple(bool(x) for x in count)
        self.fading = self.alpha != 1.0
        #: each side's row in the clean-assumption sides' arrays (-1: its truth is known)
        self.row = (-1 if self.truth[0] else 0, -1 if self.truth[1] else int(not self.truth[0]))
        clean = self.truth.count(False)
        sampled = int(self.inspected_side >= 0)
        self.eval_of = np.full(1024, -1, dtype=np.int64)
        self.fixed = np.zeros(1024, dtype=bool)
        self.in_sample = np.full(1024, -1, dtype=np.int8)
        self.category = np.zeros(1024, dtype=np.int8)
        self.clocks = np.zeros((1024, N_GROUPS))
        days = 256
        self.by_day = np.zeros((clean, days))
        self.unfixed_by_day = np.zeros((clean, days))
        self.fix_delays = np.zeros((clean, days))
        self.sample_events = np.zeros(sampled * days)
        self.sample_censored = np.zeros((2, sampled * days))
        self.unfixed = np.zeros((clean, N_GROUPS * N_FEATURES, days if self.fading else 0))
        self.counts_unfixed = np.zeros((clean, N_FEATURES, days))
        self.n_fixed = np.zeros(2)
        self.n_inspected = np.zeros((2, 2))
        self.n_unfixed = np.zeros(2)
        self.clock = np.zeros(N_GROUPS)
        self.base = np.zeros(N_GROUPS)
        self.zero = np.zeros((N_GROUPS, N_FEATURES))
        self.ones = np.zeros((N_GROUPS, N_FEATURES))
        self.inspected = np.zeros((2, 2, N_GROUPS, N_FEATURES))
        self.counts_zero = np.zeros(N_FEATURES)
        self.counts_ones = np.zeros(N_FEATURES)
        self.counts_inspected = np.zeros((2, 2, N_FEATURES))
        self.arrived = self.included = self.sampled = 0
        # the model at the last checkpoint
        self.q_inspected = np.array([[0.0, 1.0], [0.0, 1.0]])
        self.g = np.zeros((clean, days))

    # ------------------------------------------------------------------ room

    def _room(self, instances: int, evaluations: int, days: int) -> None:
        self.eval_of = _grow(self.eval_of, instances, fill=-1)
        self.fixed = _grow(self.fixed, instances)
        self.in_sample = _grow(self.in_sample, instances, fill=-1)
        self.category = _grow(self.category, evaluations)
        self.clocks = _grow(self.clocks, evaluations, axis=0)
        for name in BY_DAY[self.inspected_side >= 0, self.fading]:
            setattr(self, name, _grow(getattr(self, name), days))

    # ------------------------------------------------------------------ a chunk of checkpoints

    def advance(self, bounds, ms, ts, todays, fixed_inst, fixed_ptr, stream, log, out) -> None:
        """Bring the state to each checkpoint in turn (``bounds``: evaluations, ``ms``:
        instances, ``ts``: times, ``todays``: days; the fixes each sees for the first time:
        ``fixed_inst[fixed_ptr[j]:fixed_ptr[j + 1]]``, 1-based) and write its sums to ``out``
        (``now`` (k, groups), ``zero``, ``ones`` (k, groups, features), ``counts_zero``,
        ``counts_ones`` (k, features)). ``stream``: (sides, days, delays, times) per instance;
        ``log``: (instance, side, pred, proba, observed) per evaluation."""
        sides, days, delays, times = stream
        self._room(int(ms[-1]), int(bounds[-1]), int(todays[-1]) + 1)
        for j in range(len(bounds)):
            bound, m, t, today = int(bounds[j]), int(ms[j]), float(ts[j]), int(todays[j])
            self._arrive(m, sides, days)
            fixed = fixed_inst[fixed_ptr[j] : fixed_ptr[j + 1]] - 1
            self._fix(fixed, sides, days, delays, log)
            new = self._register(bound, log)
            self._sample(m, t, sides, days, delays, times, log)
            self._model(today)
            self._add_terms(new, today, days, log)
            self.included = bound
            self._rebase()
            self._rows(today, j, out)

    def expected(self, lo: int, hi: int, today: int, days, log) -> np.ndarray:
        """q of evaluations lo .. hi - 1 under the model of the last checkpoint (the scope of a
        sliding or tumbling estimator)."""
        instance, side, _, _, observed = (c[lo:hi] for c in log)
        at = instance - 1
        category = np.where(self.fixed[at], SETTLED_1, self.category[lo:hi])
        return self._q(category, side.astype(np.int64), observed.astype(np.int64), days[at], today)

    # ------------------------------------------------------------------ steps

    def _arrive(self, m: int, sides, days) -> None:
        lo = self.arrived
        if m <= lo:
            return
        side, day = sides[lo:m], days[lo:m]
        for s, r in self._clean():
            counts = np.bincount(day[side == s], minlength=0)
            self.by_day[r, : counts.size] += counts
            self.unfixed_by_day[r, : counts.size] += counts
        self.arrived = m

    def _fix(self, at: np.ndarray, sides, days, delays, log) -> None:
        if not at.size:
            return
        self.fixed[at] = True
        side, day, delay = sides[at], days[at], delays[at]
        np.add.at(self.n_fixed, side, 1.0)
        for s, r in self._clean():
            mine = side == s
            np.add.at(self.unfixed_by_day[r], day[mine], -1.0)
            np.add.at(self.fix_delays[r], delay[mine], 1.0)
        sampled = self.in_sample[at]
        for o in (0, 1):
            was = sampled == o
            np.add.at(self.sample_censored[o], day[was], -1.0)
            np.add.at(self.sample_events, delay[was], 1.0)
        self.in_sample[at[sampled >= 0]] = 2
        ev = self.eval_of[at]
        ev = ev[(ev >= 0) & (ev < self.included)]
        for category in (INSPECTED, UNFIXED):
            pick = ev[self.category[ev] == category]
            if pick.size:
                self._settle(pick, category, days, log)

    def _settle(self, ev: np.ndarray, category: int, days, log) -> None:
        """Evaluations ``ev`` of ``category`` settle to q = 1 (a late fix)."""
        instance, side, pred, proba, observed = (c[ev] for c in log)
        side = side.astype(np.int64)
        label = observed.astype(np.int64)
        _, phi = features(pred, proba)
        fac = self._factors(self.clocks[ev])
        terms = fac[:, :, None] * phi[:, None, :]
        if category == INSPECTED:
            np.add.at(self.n_inspected, (side, label), -1.0)
            np.add.at(self.inspected, (side, label), -terms)
            np.add.at(self.counts_inspected, (side, label), -phi)
        else:
            np.add.at(self.n_unfixed, side, -1.0)
            day = days[instance - 1]
            for s, r in self._clean():
                mine = side == s
                if mine.any():
                    if self.fading:
                        flat = terms[mine].reshape(int(mine.sum()), -1)
                        np.add.at(self.unfixed[r].T, day[mine], -flat)
                    np.add.at(self.counts_unfixed[r].T, day[mine], -phi[mine])
        self.ones += terms.sum(axis=0)
        self.counts_ones += phi.sum(axis=0)
        self.category[ev] = SETTLED_1

    def _register(self, bound: int, log) -> slice:
        lo = self.included
        new = slice(lo, bound)
        instance, side, _, _, observed = (c[new] for c in log)
        at = instance - 1
        self.eval_of[at] = np.arange(lo, bound)
        side = side.astype(np.int64)
        label = observed.astype(np.int64)
        truth = np.array(self.truth)[side]
        noisy = self.error > 0
        category = np.where(
            self.fixed[at],
            SETTLED_1,
            np.where(truth, INSPECTED if noisy else label, UNFIXED),
        ).astype(np.int8)
        self.category[new] = category
        inspected = category == INSPECTED
        np.add.at(self.n_inspected, (side[inspected], label[inspected]), 1.0)
        np.add.at(self.n_unfixed, side[category == UNFIXED], 1.0)
        return new

    def _sample(self, m, t, sides, days, delays, times, log) -> None:
        s = self.inspected_side
        if s < 0:
            return
        amount = self.amount[s]
        if self.count[s]:
            upto = max(0, min(m, int(m - amount)))
        else:
            upto = int(np.searchsorted(times[:m], t - amount, "right"))
        lo = self.sampled
        if upto <= lo:
            return
        at = np.arange(lo, upto)
        ev = self.eval_of[at]
        pick = (sides[at] == s) & (ev >= 0)
        at, ev = at[pick], ev[pick]
        fixed = self.fixed[at]
        np.add.at(self.sample_events, delays[at[fixed]], 1.0)
        self.in_sample[at[fixed]] = 2
        label = log[4][ev[~fixed]].astype(np.int64)
        day = days[at[~fixed]]
        for o in (0, 1):
            np.add.at(self.sample_censored[o], day[label == o], 1.0)
        self.in_sample[at[~fixed]] = label
        self.sampled = upto

    def _model(self, today: int) -> None:
        size = today + 1
        e = self.error
        self.q_inspected = np.array([[0.0, 1.0], [0.0, 1.0]])
        if e > 0:
            for s in (0, 1):
                n0, n1 = self.n_inspected[s]
                r = n1 / (n0 + n1) if n0 + n1 else math.nan
                self.q_inspected[s] = posterior(r, e)
        F = None
        s_in = self.inspected_side
        if s_in >= 0:
            events = self.sample_events[:size]
            if events.any():
                w0, w1 = censored_weights(e)
                censored = (
                    w0 * self.sample_censored[0, :size][::-1]
                    + w1 * self.sample_censored[1, :size][::-1]
                )
                F = grid_cdf(events, censored)
        for s, r in self._clean():
            self.g[r, :size] = self._chance(s, r, F, size)

    def _clean(self) -> list[tuple[int, int]]:
        """(side, its row) of each clean-assumption side."""
        return [(s, r) for s, r in enumerate(self.row) if r >= 0]

    def _chance(self, s: int, r: int, F, size: int) -> np.ndarray:
        if F is not None:
            spent = dot(self.by_day[r, :size][::-1], F)
            if spent > 0:
                pi = min(1.0, self.n_fixed[s] / spent)
                left = pi * (1.0 - F)
                with np.errstate(invalid="ignore", divide="ignore"):
                    return np.where(F < 1.0, left / (left + 1.0 - pi), 0.0)
        rows = [r]
        if not self.n_fixed[s]:  # no fix on the side yet: the delays of every clean side
            if not any(self.n_fixed[c] for c, _ in self._clean()):
                return np.full(size, math.nan)
            rows = [row for _, row in self._clean()]
        fixes = self.fix_delays[rows, :size].sum(axis=0)
        H = grid_cdf(fixes, self.unfixed_by_day[rows, :size].sum(axis=0)[::-1])
        top = H[-1]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(H < 1.0, (top - H) / (1.0 - H), 0.0)

    def _q(self, category, side, label, day, today) -> np.ndarray:
        q = np.where(category == SETTLED_1, 1.0, 0.0)
        q = np.where(category == SETTLED_0, label.astype(np.float64), q)
        inspected = category == INSPECTED
        q[inspected] = self.q_inspected[side[inspected], label[inspected]]
        unfixed = category == UNFIXED
        q[unfixed] = self.g[np.take(self.row, side[unfixed]), today - day[unfixed]]
        return q

    def _add_terms(self, new: slice, today: int, days, log) -> None:
        instance, side, pred, proba, observed = (c[new] for c in log)
        if not instance.size:
            return
        category = self.category[new]
        side = side.astype(np.int64)
        label = observed.astype(np.int64)
        day = days[instance - 1]
        q = self._q(category, side, label, day, today)
        zero, phi = features(pred, proba)
        fac = self._tick(new, pred, np.where(np.isnan(q), label, q))
        self.zero += dot(fac.T, zero)
        self.counts_zero += zero.sum(axis=0)
        terms = fac[:, :, None] * phi[:, None, :]
        for category_value in (SETTLED_1, INSPECTED, UNFIXED):
            pick = category == category_value
            if not pick.any():
                continue
            t, f = terms[pick], phi[pick]
            if category_value == SETTLED_1:
                self.ones += t.sum(axis=0)
                self.counts_ones += f.sum(axis=0)
            elif category_value == INSPECTED:
                np.add.at(self.inspected, (side[pick], label[pick]), t)
                np.add.at(self.counts_inspected, (side[pick], label[pick]), f)
            else:
                for s, r in self._clean():
                    mine = side[pick] == s
                    if not mine.any():
                        continue
                    d = day[pick][mine]
                    if self.fading:
                        np.add.at(self.unfixed[r].T, d, t[mine].reshape(int(mine.sum()), -1))
                    np.add.at(self.counts_unfixed[r].T, d, f[mine])

    def _tick(self, new: slice, pred, q) -> np.ndarray:
        n = q.size
        if self.alpha == 1.0:
            return np.ones((n, N_GROUPS))
        ticks = np.column_stack((np.ones(n), pred == 0, pred == 1, 1.0 - q, q)).astype(float)
        clocks = self.clock + np.cumsum(ticks, axis=0)
        self.clock = clocks[-1].copy()
        self.clocks[new] = clocks
        return self._factors(clocks)

    def _factors(self, clocks: np.ndarray) -> np.ndarray:
        if self.alpha == 1.0:
            return np.ones(clocks.shape)
        return exp(-(clocks - self.base) * self.log_alpha)

    def _rebase(self) -> None:
        far = self.clock - self.base > self.span
        if not far.any():
            return
        shrink = np.where(far, exp((self.clock - self.base) * self.log_alpha), 1.0)
        self.base = np.where(far, self.clock, self.base)
        self.zero *= shrink[:, None]
        self.ones *= shrink[:, None]
        self.inspected *= shrink[None, None, :, None]
        self.unfixed *= np.repeat(shrink, N_FEATURES)[None, :, None]

    def _rows(self, today: int, j: int, out: dict) -> None:
        ones = self.ones.copy()
        counts_ones = self.counts_ones.copy()
        for s in (0, 1):
            for o in (0, 1):
                if self.n_inspected[s, o]:
                    q = self.q_inspected[s, o]
                    ones += q * self.inspected[s, o]
                    counts_ones += q * self.counts_inspected[s, o]
            r = self.row[s]
            if r < 0 or not self.n_unfixed[s]:
                continue
            chance = self.g[r, today::-1]  # by arrival day 0 .. today
            counts = dot(self.counts_unfixed[r, :, : today + 1], chance)
            counts_ones += counts
            if self.fading:
                ones += dot(self.unfixed[r, :, : today + 1], chance).reshape(N_GROUPS, N_FEATURES)
            else:  # every group's factor is 1: its terms are the counts'
                ones += counts
        out["now"][j] = exp((self.clock - self.base) * self.log_alpha)
        out["zero"][j] = self.zero
        out["ones"][j] = ones
        out["counts_zero"][j] = self.counts_zero
        out["counts_ones"][j] = counts_ones


def grid_cdf(events: np.ndarray, censored: np.ndarray) -> np.ndarray:
    """The Kaplan-Meier distribution function on a grid of whole units: ``events[d]`` the weight
    of the events at d, ``censored[d]`` that of the durations censored at d (both of one length);
    censored at d are at risk at d (events first). A censored weight may be negative (an unbiased
    count, :func:`censored_weights`): the censored at risk at d, their sum over d' >= d, count
    at least 0."""
    censored_at_risk = np.maximum(np.cumsum(censored[::-1])[::-1], 0.0)
    at_risk = np.cumsum(events[::-1])[::-1] + censored_at_risk
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = np.where(events > 0, 1.0 - events / at_risk, 1.0)
    return 1.0 - np.cumprod(factor)


def censored_weights(e: float) -> tuple[float, float]:
    """(weight of an inspected label 0, of a label 1) as a defect censored in F's risk sets, for
    inspections with error rate ``e`` < 1/2 (NaN otherwise). The Rogan-Gladen count, linear in
    the labels: among any n inspected instances, n1 of them labelled 1, the expected number of
    defects is ``((1 - e) n1 - e (n - n1)) / (1 - 2 e)``, whatever their share. So the censored
    defects at risk at every delay are estimated without bias, although the old unfixed instances
    are less often defects than the young ones (a posterior of the label, one for every age,
    would count them alike). ``e = 0``: (0, 1)."""
    if not 0 <= e < 0.5:
        return math.nan, math.nan
    return -e / (1.0 - 2.0 * e), (1.0 - e) / (1.0 - 2.0 * e)


def posterior(r: float, e: float) -> tuple[float, float]:
    """(P(defect | inspected label 0), P(defect | inspected label 1)) for inspections with error
    rate ``e`` < 1/2 and a share ``r`` of labels 1 (NaN for e >= 1/2 or no labels)."""
    if not 0 <= e < 0.5 or not math.isfinite(r):
        return math.nan, math.nan
    pi = min(1.0, max(0.0, (r - e) / (1.0 - 2.0 * e)))
    one = pi * (1 - e) / (pi * (1 - e) + (1 - pi) * e) if pi > 0 else 0.0
    zero = pi * e / (pi * e + (1 - pi) * (1 - e)) if pi < 1 else 1.0
    return zero, one
