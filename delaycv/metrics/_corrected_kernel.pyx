# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The state of one fold's corrected reference compiled: :class:`Kernel` does what the numpy
``Kernel`` of ``corrected_kernel.py`` does (see its docstring for the state), step by step in C
loops: the same values up to the order of floating-point sums
(``tests/metrics/test_corrected_reference.py``). ``delaycv.common.native`` loads it only when it
was built from this file (``SOURCE_DIGEST``)."""

import numpy as np

from delaycv.metrics.corrected_kernel import BY_DAY

from libc.math cimport NAN, exp, isnan, log
from libc.stdint cimport int64_t

cdef extern from *:
    """
    #ifndef DELAYCV_CORRECTED_SOURCE
    #define DELAYCV_CORRECTED_SOURCE ""
    #endif
    """
    const char* DELAYCV_CORRECTED_SOURCE

#: SHA-256 of the ``_corrected_kernel.pyx`` this module was compiled from (set by ``setup.py``)
SOURCE_DIGEST = DELAYCV_CORRECTED_SOURCE.decode("ascii")

DEF G = 5  # groups: all, predicted 0, predicted 1, label 0, label 1
DEF F = 4  # features
DEF GF = 20
N_GROUPS = G
N_FEATURES = F
SETTLED_0, SETTLED_1, INSPECTED, UNFIXED = 0, 1, 2, 3
cdef int C_SETTLED_0 = 0, C_SETTLED_1 = 1, C_INSPECTED = 2, C_UNFIXED = 3
cdef double EPS = 2.220446049250313e-16
#: the (group, feature) q-terms some row reads (the all group: every feature; predicted 0, 1: its
#: prediction's; label 0, 1: the predictions')
cdef bint NEEDED[G][F]
NEEDED[0][:] = [True, True, True, True]
NEEDED[1][:] = [True, False, False, False]
NEEDED[2][:] = [False, True, False, False]
NEEDED[3][:] = [True, True, False, False]
NEEDED[4][:] = [True, True, False, False]
SPAN_EXPONENT = 600.0


cdef inline double _clip(double p) noexcept nogil:
    if p < EPS:
        return EPS
    if p > 1.0 - EPS:
        return 1.0 - EPS
    return p


cdef inline void _features(int pred, double proba, double* zero, double* q) noexcept nogil:
    """The label-0 terms and q-terms of an evaluation."""
    cdef double pc = _clip(proba)
    zero[0] = q[0] = 1.0 if pred == 0 else 0.0
    zero[1] = q[1] = 1.0 if pred == 1 else 0.0
    zero[2] = proba * proba
    zero[3] = -log(1.0 - pc)
    q[2] = 1.0 - 2.0 * proba
    q[3] = log(1.0 - pc) - log(pc)


def _grow(array, size, axis=-1, fill=0):
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


cdef (double, double) censored_weights(double e):
    """(weight of an inspected label 0, of a label 1) in F's risk sets: corrected_kernel's."""
    if not (0 <= e < 0.5):
        return NAN, NAN
    return -e / (1.0 - 2.0 * e), (1.0 - e) / (1.0 - 2.0 * e)


def posterior(double r, double e):
    """(P(defect | inspected label 0), P(defect | inspected label 1)): corrected_kernel's."""
    cdef double pi, one, zero
    if not (0 <= e < 0.5) or isnan(r):
        return NAN, NAN
    pi = min(1.0, max(0.0, (r - e) / (1.0 - 2.0 * e)))
    one = pi * (1 - e) / (pi * (1 - e) + (1 - pi) * e) if pi > 0 else 0.0
    zero = pi * e / (pi * e + (1 - pi) * (1 - e)) if pi < 1 else 1.0
    return zero, one


cdef class Kernel:
    """One fold's corrected state (``corrected_kernel.Kernel``'s arguments and methods)."""

    cdef public double alpha, log_alpha, span, error
    cdef public int inspected_side
    cdef int truth[2]
    cdef double amount[2]
    cdef int count[2]
    cdef public object eval_of, fixed, in_sample, category, clocks
    cdef public object by_day, unfixed_by_day, fix_delays, sample_events, sample_censored
    cdef public object unfixed, counts_unfixed, g
    cdef public object n_fixed, n_inspected, n_unfixed, clock, base, zero, ones, inspected
    cdef public object counts_zero, counts_ones, counts_inspected, q_inspected
    cdef public long arrived, included, sampled
    cdef double[::1] work  # at risk by day (the model)
    cdef bint used[2][GF + F]  # per side: the unfixed sums' columns (then the counts') in use
    cdef int row[2]  # a side's row in the clean-assumption sides' arrays (-1: its truth is known)
    cdef bint fading

    def __init__(self, alpha, truth, inspected, error, amount, count):
        self.alpha = float(alpha)
        self.log_alpha = log(self.alpha)
        self.span = float("inf") if self.alpha == 1.0 else SPAN_EXPONENT / -self.log_alpha
        self.truth[0], self.truth[1] = bool(truth[0]), bool(truth[1])
        self.inspected_side = int(inspected)
        self.error = float(error)
        self.amount[0], self.amount[1] = float(amount[0]), float(amount[1])
        self.count[0], self.count[1] = bool(count[0]), bool(count[1])
        self.fading = self.alpha != 1.0
        self.row[0] = -1 if self.truth[0] else 0
        self.row[1] = -1 if self.truth[1] else (0 if self.truth[0] else 1)
        clean = (not self.truth[0]) + (not self.truth[1])
        sampled = 1 if self.inspected_side >= 0 else 0
        self.eval_of = np.full(1024, -1, dtype=np.int64)
        self.fixed = np.zeros(1024, dtype=np.int8)
        self.in_sample = np.full(1024, -1, dtype=np.int8)
        self.category = np.zeros(1024, dtype=np.int8)
        self.clocks = np.zeros((1024, G))
        days = 256
        self.by_day = np.zeros((clean, days))
        self.unfixed_by_day = np.zeros((clean, days))
        self.fix_delays = np.zeros((clean, days))
        self.sample_events = np.zeros(sampled * days)
        self.sample_censored = np.zeros((2, sampled * days))
        self.unfixed = np.zeros((clean, GF, days if self.fading else 0))
        self.counts_unfixed = np.zeros((clean, F, days))
        self.g = np.zeros((clean, days))
        self.work = np.zeros(days)
        self.n_fixed = np.zeros(2)
        self.n_inspected = np.zeros((2, 2))
        self.n_unfixed = np.zeros(2)
        self.clock = np.zeros(G)
        self.base = np.zeros(G)
        self.zero = np.zeros((G, F))
        self.ones = np.zeros((G, F))
        self.inspected = np.zeros((2, 2, G, F))
        self.counts_zero = np.zeros(F)
        self.counts_ones = np.zeros(F)
        self.counts_inspected = np.zeros((2, 2, F))
        self.q_inspected = np.array([[0.0, 1.0], [0.0, 1.0]])
        self.arrived = self.included = self.sampled = 0
        cdef int s, col
        for s in range(2):
            for col in range(GF + F):
                self.used[s][col] = False

    def _room(self, instances, evaluations, days):
        self.eval_of = _grow(self.eval_of, instances, fill=-1)
        self.fixed = _grow(self.fixed, instances)
        self.in_sample = _grow(self.in_sample, instances, fill=-1)
        self.category = _grow(self.category, evaluations)
        self.clocks = _grow(self.clocks, evaluations, axis=0)
        for name in BY_DAY[self.inspected_side >= 0, self.fading]:
            setattr(self, name, _grow(getattr(self, name), days))
        if self.work.shape[0] < days:
            self.work = np.zeros(max(days, 2 * self.work.shape[0]))

    def advance(self, bounds, ms, ts, todays, fixed_inst, fixed_ptr, stream, log_columns, out):
        """``corrected_kernel.Kernel.advance``."""
        sides, days, delays, times = stream
        last = len(bounds) - 1
        self._room(int(ms[last]), int(bounds[last]), int(todays[last]) + 1)
        cdef const signed char[::1] c_sides = sides
        cdef const int64_t[::1] c_days = days
        cdef const int64_t[::1] c_delays = delays
        cdef const double[::1] c_times = times
        cdef const int64_t[::1] instance = log_columns[0]
        cdef const signed char[::1] side = log_columns[1]
        cdef const signed char[::1] pred = log_columns[2]
        cdef const double[::1] proba = log_columns[3]
        cdef const signed char[::1] observed = log_columns[4]
        cdef const int64_t[::1] c_fixed = fixed_inst
        cdef const int64_t[::1] c_ptr = fixed_ptr
        cdef double[:, ::1] o_now = out["now"]
        cdef double[:, :, ::1] o_zero = out["zero"]
        cdef double[:, :, ::1] o_ones = out["ones"]
        cdef double[:, ::1] o_czero = out["counts_zero"]
        cdef double[:, ::1] o_cones = out["counts_ones"]
        cdef Py_ssize_t j, k = len(bounds)
        cdef long bound, m, today
        cdef double t
        for j in range(k):
            bound, m, t, today = int(bounds[j]), int(ms[j]), float(ts[j]), int(todays[j])
            self._arrive(m, c_sides, c_days)
            self._fix(c_fixed, c_ptr[j], c_ptr[j + 1], c_sides, c_days, c_delays,
                      instance, side, pred, proba, observed)
            self._register(bound, instance, side, observed)
            self._sample(m, t, c_sides, c_days, c_delays, c_times, observed)
            self._model(today)
            self._add_terms(bound, today, c_days, instance, side, pred, proba, observed)
            self.included = bound
            self._rebase()
            self._rows(today, j, o_now, o_zero, o_ones, o_czero, o_cones)

    def expected(self, lo, hi, today, days, log_columns):
        """``corrected_kernel.Kernel.expected``."""
        cdef const int64_t[::1] c_days = days
        cdef const int64_t[::1] instance = log_columns[0]
        cdef const signed char[::1] side = log_columns[1]
        cdef const signed char[::1] observed = log_columns[4]
        cdef signed char[::1] fixed = self.fixed
        cdef signed char[::1] category = self.category
        cdef double[:, ::1] qi = self.q_inspected
        cdef double[:, ::1] g = self.g
        out = np.empty(hi - lo)
        cdef double[::1] q = out
        cdef Py_ssize_t e, i
        cdef int c
        for e in range(lo, hi):
            i = instance[e] - 1
            c = C_SETTLED_1 if fixed[i] else category[e]
            q[e - lo] = self._q1(c, side[e], observed[e], c_days[i], today, qi, g)
        return out

    # ------------------------------------------------------------------ steps

    cdef inline double _q1(self, int c, int s, int o, long day, long today,
                           double[:, ::1] qi, double[:, ::1] g) noexcept:
        if c == C_SETTLED_1:
            return 1.0
        if c == C_SETTLED_0:
            return <double>o
        if c == C_INSPECTED:
            return qi[s, o]
        return g[self.row[s], today - day]

    cdef void _arrive(self, long m, const signed char[::1] sides, const int64_t[::1] days):
        cdef double[:, ::1] by_day = self.by_day
        cdef double[:, ::1] unfixed_by_day = self.unfixed_by_day
        cdef long i
        cdef int r
        for i in range(self.arrived, m):
            r = self.row[sides[i]]
            if r >= 0:
                by_day[r, days[i]] += 1.0
                unfixed_by_day[r, days[i]] += 1.0
        if m > self.arrived:
            self.arrived = m

    cdef void _fix(self, const int64_t[::1] fixed_inst, long lo, long hi,
                   const signed char[::1] sides, const int64_t[::1] days, const int64_t[::1] delays,
                   const int64_t[::1] instance, const signed char[::1] side,
                   const signed char[::1] pred, const double[::1] proba,
                   const signed char[::1] observed):
        cdef signed char[::1] fixed = self.fixed
        cdef signed char[::1] in_sample = self.in_sample
        cdef int64_t[::1] eval_of = self.eval_of
        cdef signed char[::1] category = self.category
        cdef double[::1] n_fixed = self.n_fixed
        cdef double[:, ::1] unfixed_by_day = self.unfixed_by_day
        cdef double[:, ::1] fix_delays = self.fix_delays
        cdef double[:, ::1] sample_censored = self.sample_censored
        cdef double[::1] sample_events = self.sample_events
        cdef long x, i, e
        cdef int s, r, was
        for x in range(lo, hi):
            i = fixed_inst[x] - 1
            fixed[i] = 1
            s = sides[i]
            n_fixed[s] += 1.0
            r = self.row[s]
            if r >= 0:
                unfixed_by_day[r, days[i]] -= 1.0
                fix_delays[r, delays[i]] += 1.0
            was = in_sample[i]
            if was == 0 or was == 1:
                sample_censored[was, days[i]] -= 1.0
                sample_events[delays[i]] += 1.0
                in_sample[i] = 2
            e = eval_of[i]
            if 0 <= e < self.included and (category[e] == C_INSPECTED or category[e] == C_UNFIXED):
                self._settle(e, days[i], side[e], pred[e], proba[e], observed[e])

    cdef void _settle(self, long e, long day, int s, int p, double pr, int o):
        """Evaluation e settles to q = 1 (a late fix)."""
        cdef double zero_f[F]
        cdef double q_f[F]
        cdef double fac[G]
        cdef signed char[::1] category = self.category
        cdef double[:, ::1] ones = self.ones
        cdef double[::1] counts_ones = self.counts_ones
        cdef double[:, :, :, ::1] inspected = self.inspected
        cdef double[:, :, ::1] counts_inspected = self.counts_inspected
        cdef double[:, :, ::1] unfixed = self.unfixed
        cdef double[:, :, ::1] counts_unfixed = self.counts_unfixed
        cdef double[:, ::1] n_inspected = self.n_inspected
        cdef double[::1] n_unfixed = self.n_unfixed
        cdef int gi, f, r = self.row[s]
        _features(p, pr, zero_f, q_f)
        self._factors_of(e, fac)
        if category[e] == C_INSPECTED:
            n_inspected[s, o] -= 1.0
            for gi in range(G):
                for f in range(F):
                    inspected[s, o, gi, f] -= fac[gi] * q_f[f]
            for f in range(F):
                counts_inspected[s, o, f] -= q_f[f]
        else:
            n_unfixed[s] -= 1.0
            if self.fading:
                for gi in range(G):
                    for f in range(F):
                        unfixed[r, gi * F + f, day] -= fac[gi] * q_f[f]
            for f in range(F):
                counts_unfixed[r, f, day] -= q_f[f]
        for gi in range(G):
            for f in range(F):
                ones[gi, f] += fac[gi] * q_f[f]
        for f in range(F):
            counts_ones[f] += q_f[f]
        category[e] = C_SETTLED_1

    cdef void _factors_of(self, long e, double* fac):
        cdef double[:, ::1] clocks = self.clocks
        cdef double[::1] base = self.base
        cdef int gi
        for gi in range(G):
            fac[gi] = 1.0 if self.alpha == 1.0 else exp(-(clocks[e, gi] - base[gi]) * self.log_alpha)

    cdef void _register(self, long bound, const int64_t[::1] instance, const signed char[::1] side,
                        const signed char[::1] observed):
        cdef int64_t[::1] eval_of = self.eval_of
        cdef signed char[::1] fixed = self.fixed
        cdef signed char[::1] category = self.category
        cdef double[:, ::1] n_inspected = self.n_inspected
        cdef double[::1] n_unfixed = self.n_unfixed
        cdef long e, i
        cdef int s, c
        cdef bint noisy = self.error > 0
        for e in range(self.included, bound):
            i = instance[e] - 1
            eval_of[i] = e
            s = side[e]
            if fixed[i]:
                c = C_SETTLED_1
            elif self.truth[s]:
                c = C_INSPECTED if noisy else observed[e]
            else:
                c = C_UNFIXED
            category[e] = c
            if c == C_INSPECTED:
                n_inspected[s, observed[e]] += 1.0
            elif c == C_UNFIXED:
                n_unfixed[s] += 1.0

    cdef void _sample(self, long m, double t, const signed char[::1] sides,
                      const int64_t[::1] days, const int64_t[::1] delays, const double[::1] times,
                      const signed char[::1] observed):
        cdef int s = self.inspected_side
        if s < 0:
            return
        cdef double amount = self.amount[s]
        cdef long upto, i, e
        cdef int o
        cdef int64_t[::1] eval_of = self.eval_of
        cdef signed char[::1] fixed = self.fixed
        cdef signed char[::1] in_sample = self.in_sample
        cdef double[::1] sample_events = self.sample_events
        cdef double[:, ::1] sample_censored = self.sample_censored
        if self.count[s]:
            upto = max(0, min(m, <long>(m - amount)))
        else:
            upto = self.sampled
            while upto < m and times[upto] <= t - amount:
                upto += 1
        for i in range(self.sampled, upto):
            e = eval_of[i]
            if sides[i] != s or e < 0:
                continue
            if fixed[i]:
                sample_events[delays[i]] += 1.0
                in_sample[i] = 2
            else:
                o = observed[e]
                sample_censored[o, days[i]] += 1.0
                in_sample[i] = o
        if upto > self.sampled:
            self.sampled = upto

    cdef void _model(self, long today):
        cdef long size = today + 1, d
        cdef int s, s_in = self.inspected_side
        cdef double[:, ::1] qi = self.q_inspected
        cdef double[:, ::1] n_inspected = self.n_inspected
        cdef double[::1] events = self.sample_events
        cdef double[:, ::1] censored = self.sample_censored
        cdef double[:, ::1] g = self.g
        cdef double[::1] risk = self.work
        cdef double n0, n1, r, w0, w1, acc, acc_censored, surv, spent, pi, left
        cdef bint has_F = False
        qi[0, 0] = qi[1, 0] = 0.0
        qi[0, 1] = qi[1, 1] = 1.0
        if self.error > 0:
            for s in range(2):
                n0, n1 = n_inspected[s, 0], n_inspected[s, 1]
                r = n1 / (n0 + n1) if n0 + n1 else NAN
                qi[s, 0], qi[s, 1] = posterior(r, self.error)
        if s_in >= 0:
            for d in range(size):
                if events[d] > 0:
                    has_F = True
                    break
        if has_F:
            # F by delay in risk (in place): at risk from the longest duration down (the
            # censored at least 0), then F
            w0, w1 = censored_weights(self.error)
            acc = acc_censored = 0.0
            for d in range(size - 1, -1, -1):
                acc += events[d]
                acc_censored += w0 * censored[0, today - d] + w1 * censored[1, today - d]
                risk[d] = acc + (0.0 if acc_censored < 0.0 else acc_censored)
            surv = 1.0
            for d in range(size):
                if events[d] > 0:
                    surv *= 1.0 - events[d] / risk[d]
                risk[d] = 1.0 - surv
        for s in range(2):
            if self.truth[s]:
                continue
            self._chance(s, has_F, size, today)

    cdef void _chance(self, int s, bint has_F, long size, long today):
        cdef double[:, ::1] g = self.g
        cdef double[::1] cdf = self.work
        cdef double[:, ::1] by_day = self.by_day
        cdef double[:, ::1] unfixed_by_day = self.unfixed_by_day
        cdef double[:, ::1] fix_delays = self.fix_delays
        cdef double[::1] n_fixed = self.n_fixed
        cdef double spent = 0.0, pi, left, acc, surv, top
        cdef long d
        cdef int r = self.row[s]
        if has_F:
            for d in range(size):
                spent += by_day[r, today - d] * cdf[d]
            if spent > 0:
                pi = min(1.0, n_fixed[s] / spent)
                for d in range(size):
                    if cdf[d] < 1.0:
                        left = pi * (1.0 - cdf[d])
                        g[r, d] = left / (left + 1.0 - pi)
                    else:
                        g[r, d] = 0.0
                return
        # the rows whose fixes give the delays: the side's, or, before its first fix, every
        # clean side's (none with a fix: nothing to estimate from)
        cdef int rows[2]
        cdef int n_rows = 0, k, c
        cdef double events, seen = 0.0
        if n_fixed[s] != 0:
            rows[0] = r
            n_rows = 1
        else:
            for c in range(2):
                if not self.truth[c]:
                    rows[n_rows] = self.row[c]
                    n_rows += 1
                    seen += n_fixed[c]
            if seen == 0.0:
                for d in range(size):
                    g[r, d] = NAN
                return
        # the delay to a fix over those instances (g as the work space of at risk, then H)
        acc = 0.0
        for d in range(size - 1, -1, -1):
            for k in range(n_rows):
                acc += fix_delays[rows[k], d] + unfixed_by_day[rows[k], today - d]
            g[r, d] = acc
        surv = 1.0
        for d in range(size):
            events = 0.0
            for k in range(n_rows):
                events += fix_delays[rows[k], d]
            if events > 0:
                surv *= 1.0 - events / g[r, d]
            g[r, d] = 1.0 - surv
        top = g[r, size - 1]
        for d in range(size):
            g[r, d] = (top - g[r, d]) / (1.0 - g[r, d]) if g[r, d] < 1.0 else 0.0

    cdef void _add_terms(self, long bound, long today, const int64_t[::1] days,
                         const int64_t[::1] instance, const signed char[::1] side,
                         const signed char[::1] pred, const double[::1] proba,
                         const signed char[::1] observed):
        cdef double zero_f[F]
        cdef double q_f[F]
        cdef double fac[G]
        cdef double tick[G]
        cdef signed char[::1] category = self.category
        cdef double[:, ::1] clocks = self.clocks
        cdef double[::1] clock = self.clock
        cdef double[::1] base = self.base
        cdef double[:, ::1] zero = self.zero
        cdef double[:, ::1] ones = self.ones
        cdef double[::1] counts_zero = self.counts_zero
        cdef double[::1] counts_ones = self.counts_ones
        cdef double[:, :, :, ::1] inspected = self.inspected
        cdef double[:, :, ::1] counts_inspected = self.counts_inspected
        cdef double[:, :, ::1] unfixed = self.unfixed
        cdef double[:, :, ::1] counts_unfixed = self.counts_unfixed
        cdef double[:, ::1] qi = self.q_inspected
        cdef double[:, ::1] g = self.g
        cdef bint fading = self.alpha != 1.0
        cdef long e, i, day
        cdef int s, o, c, gi, f, r
        cdef double q
        for e in range(self.included, bound):
            i = instance[e] - 1
            s, o, c = side[e], observed[e], category[e]
            day = days[i]
            q = self._q1(c, s, o, day, today, qi, g)
            _features(pred[e], proba[e], zero_f, q_f)
            if fading:
                if isnan(q):
                    q = <double>o
                tick[0] = 1.0
                tick[1] = 1.0 if pred[e] == 0 else 0.0
                tick[2] = 1.0 if pred[e] == 1 else 0.0
                tick[3] = 1.0 - q
                tick[4] = q
                for gi in range(G):
                    clock[gi] += tick[gi]
                    clocks[e, gi] = clock[gi]
                    fac[gi] = exp(-(clock[gi] - base[gi]) * self.log_alpha)
            else:
                for gi in range(G):
                    fac[gi] = 1.0
            for gi in range(G):
                for f in range(F):
                    zero[gi, f] += fac[gi] * zero_f[f]
            for f in range(F):
                counts_zero[f] += zero_f[f]
            if c == C_SETTLED_1:
                for gi in range(G):
                    for f in range(F):
                        ones[gi, f] += fac[gi] * q_f[f]
                for f in range(F):
                    counts_ones[f] += q_f[f]
            elif c == C_INSPECTED:
                for gi in range(G):
                    for f in range(F):
                        inspected[s, o, gi, f] += fac[gi] * q_f[f]
                for f in range(F):
                    counts_inspected[s, o, f] += q_f[f]
            elif c == C_UNFIXED:
                r = self.row[s]
                if fading:
                    for gi in range(G):
                        for f in range(F):
                            if q_f[f] != 0.0 and NEEDED[gi][f]:
                                unfixed[r, gi * F + f, day] += fac[gi] * q_f[f]
                                self.used[s][gi * F + f] = True
                for f in range(F):
                    if q_f[f] != 0.0:
                        counts_unfixed[r, f, day] += q_f[f]
                        self.used[s][GF + f] = True

    cdef void _rebase(self):
        cdef double[::1] clock = self.clock
        cdef double[::1] base = self.base
        cdef double[:, ::1] zero = self.zero
        cdef double[:, ::1] ones = self.ones
        cdef double[:, :, :, ::1] inspected = self.inspected
        cdef double[:, :, ::1] unfixed = self.unfixed
        cdef int gi, f, s, o, r
        cdef long d, days = unfixed.shape[2]
        cdef double shrink
        for gi in range(G):
            if not clock[gi] - base[gi] > self.span:
                continue
            shrink = exp((clock[gi] - base[gi]) * self.log_alpha)
            base[gi] = clock[gi]
            for f in range(F):
                zero[gi, f] *= shrink
                ones[gi, f] *= shrink
                for s in range(2):
                    for o in range(2):
                        inspected[s, o, gi, f] *= shrink
                for r in range(unfixed.shape[0]):
                    for d in range(days):
                        unfixed[r, gi * F + f, d] *= shrink

    cdef void _rows(self, long today, Py_ssize_t j, double[:, ::1] o_now,
                    double[:, :, ::1] o_zero, double[:, :, ::1] o_ones,
                    double[:, ::1] o_czero, double[:, ::1] o_cones):
        cdef double[:, ::1] zero = self.zero
        cdef double[:, ::1] ones = self.ones
        cdef double[::1] counts_zero = self.counts_zero
        cdef double[::1] counts_ones = self.counts_ones
        cdef double[:, :, :, ::1] inspected = self.inspected
        cdef double[:, :, ::1] counts_inspected = self.counts_inspected
        cdef double[:, :, ::1] unfixed = self.unfixed
        cdef double[:, :, ::1] counts_unfixed = self.counts_unfixed
        cdef double[:, ::1] n_inspected = self.n_inspected
        cdef double[::1] n_unfixed = self.n_unfixed
        cdef double[:, ::1] qi = self.q_inspected
        cdef double[:, ::1] g = self.g
        cdef double[::1] clock = self.clock
        cdef double[::1] base = self.base
        cdef int gi, f, s, o, col, r, c, n
        cdef long d
        cdef double q, acc, chance
        cdef const double* rows[GF + F]  # the columns in use of a side's unfixed sums, by day
        cdef double sums[GF + F]
        cdef bint fading = self.fading
        for gi in range(G):
            o_now[j, gi] = exp((clock[gi] - base[gi]) * self.log_alpha)
            for f in range(F):
                o_zero[j, gi, f] = zero[gi, f]
                o_ones[j, gi, f] = ones[gi, f]
        for f in range(F):
            o_czero[j, f] = counts_zero[f]
            o_cones[j, f] = counts_ones[f]
        for s in range(2):
            for o in range(2):
                if n_inspected[s, o]:
                    q = qi[s, o]
                    for gi in range(G):
                        for f in range(F):
                            o_ones[j, gi, f] += q * inspected[s, o, gi, f]
                    for f in range(F):
                        o_cones[j, f] += q * counts_inspected[s, o, f]
            if self.truth[s] or not n_unfixed[s]:
                continue
            r = self.row[s]
            # the columns in use (the counts', then under fading the terms') are summed over
            # the days in one pass, side by side: each sum adds its days in the order a pass of
            # its own would (the same value), and the sums no longer wait on one another
            n = 0
            for f in range(F):
                if self.used[s][GF + f]:
                    rows[n] = &counts_unfixed[r, f, 0]
                    n += 1
            if fading:
                for col in range(GF):
                    if self.used[s][col]:
                        rows[n] = &unfixed[r, col, 0]
                        n += 1
            for c in range(n):
                sums[c] = 0.0
            for d in range(today + 1):
                chance = g[r, today - d]
                for c in range(n):
                    sums[c] += rows[c][d] * chance
            c = 0
            for f in range(F):
                acc = 0.0
                if self.used[s][GF + f]:
                    acc = sums[c]
                    c += 1
                o_cones[j, f] += acc
                if not fading:  # every group's factor is 1: its terms are the counts'
                    for gi in range(G):
                        o_ones[j, gi, f] += acc
            if not fading:
                continue
            for col in range(GF):
                if self.used[s][col]:
                    o_ones[j, col // F, col % F] += sums[c]
                    c += 1
