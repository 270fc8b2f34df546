"""A plain, slow, independent re-implementation of the MOA extension's (moa-extension) procedure.

Test-only. It follows ``../shared/reference/moa-extension.md`` line by line and shares no code with
delaycv (it must not import ``delaycv.metrics`` or ``delaycv.tables.moa_export``): its own CSV reader, its own
MOA learners (NoChange, MajorityClass), the §3 per-instance loop with ``posQ``/``negQ`` and the
gating weight k, the §5 labels of the three tasks, the §6.2 evaluator with the fading-factor
estimator (and its quirks: ``maj()`` taken in the middle of the per-class update, unfaded
TP/FP/TN/FN, NaN adds that do not fade), the §6.4 formulas (including the "Kappa Statistic F1"
defect, which repeats the Kappa M F1 value) and the §7 row rules and fold averaging.

Numbers follow Java ``double`` semantics: ``x/0`` is ``±Infinity`` and ``0/0`` is NaN.
Timing columns (CPU seconds, RAM-Hours) are written as 0.0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

NAN = float("nan")
INF = float("inf")

IDEAL, EXTENSION, POSNEG = "ideal", "extension", "posneg"
CV, BOOT, SPLIT = "cv", "bootstrap", "split"
FEEDBACK, POS_TIMEOUT, NEG_TIMEOUT = "feedback", "pos_timeout", "neg_timeout"


# --------------------------------------------------------------------------- Java arithmetic


def jdiv(a: float, b: float) -> float:
    """Java double division: x/0 gives a signed infinity, 0/0 and NaN/0 give NaN."""
    a = float(a)
    b = float(b)
    if b != 0.0:
        return a / b
    if math.isnan(a) or a == 0.0:
        return NAN
    return math.copysign(INF, a) * math.copysign(1.0, b)


def jsqrt(x: float) -> float:
    if math.isnan(x) or x < 0:
        return NAN
    return math.sqrt(x)


class JavaRandom:
    """java.util.Random (48-bit LCG), enough for nextDouble()."""

    MULT = 0x5DEECE66D
    MASK = (1 << 48) - 1

    def __init__(self, seed: int) -> None:
        self.seed = (seed ^ self.MULT) & self.MASK

    def next_bits(self, bits: int) -> int:
        self.seed = (self.seed * self.MULT + 0xB) & self.MASK
        return self.seed >> (48 - bits)

    def next_double(self) -> float:
        return ((self.next_bits(26) << 27) + self.next_bits(27)) * (2.0**-53)


def poisson1(rnd: JavaRandom) -> int:
    """MOA MiscUtils.poisson(1.0, rnd): one nextDouble() per call."""
    lam = 1.0
    threshold = rnd.next_double() * math.exp(lam)
    term = 1.0
    total = term
    k = 0
    while total <= threshold and k < 100:
        k += 1
        term = term * lam / k
        total += term
    return k


# --------------------------------------------------------------------------- data


@dataclass
class Row:
    ts: int  # author_date_unix_timestamp, (long) of the numeric value
    fb: int  # fix_unix_timestamp (feedback), -1 if none
    label: int  # contains_bug (class index)


def read_commit_guru_csv(path) -> list[Row]:
    """Tiny reader of the Commit Guru CSV (header row; column 0 = ts, 1 = feedback, last = class)."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        header = fh.readline()
        assert header.strip(), "empty file"
        for line in fh:
            line = line.strip()
            if not line:
                continue
            cells = line.split(",")
            rows.append(
                Row(ts=int(float(cells[0])), fb=int(float(cells[1])), label=int(float(cells[-1])))
            )
    return rows


# --------------------------------------------------------------------------- MOA learners


class NoChange:
    """MOA functions.NoChange: predicts the last trained class (class 0 before any training)."""

    def __init__(self) -> None:
        self.last = 0

    def predict(self) -> int:
        return self.last

    def train(self, label: int) -> None:
        self.last = label


class MajorityClass:
    """MOA functions.MajorityClass: the class with the largest trained count; ties -> class 0."""

    def __init__(self) -> None:
        self.counts = [0.0, 0.0]

    def predict(self) -> int:
        return 1 if self.counts[1] > self.counts[0] else 0

    def train(self, label: int) -> None:
        self.counts[label] += 1.0


LEARNERS = {"NoChange": NoChange, "MajorityClass": MajorityClass}


# --------------------------------------------------------------------------- §6.2 evaluator


class FadingEstimator:
    def __init__(self, alpha: float) -> None:
        self.alpha = alpha
        self.s = 0.0
        self.b = 0.0

    def add(self, v: float) -> None:
        if not math.isnan(v):
            self.s = self.alpha * self.s + v
            self.b = self.alpha * self.b + 1.0

    def est(self) -> float:
        return self.s / self.b if self.b > 0.0 else 0.0


MEASUREMENT_NAMES = (
    ["classified instances", "TP", "FP", "TN", "FN"]
    + [
        "classifications correct (percent)",
        "Kappa Statistic (percent)",
        "Kappa Temporal Statistic (percent)",
        "Kappa M Statistic (percent)",
        "F1 Score (percent)",
    ]
    + [f"F1 Score for class {i} (percent)" for i in (0, 1)]
    + [f"Kappa Temporal Statistic F1 Score for class {i} (percent)" for i in (0, 1)]
    + [f"Kappa M Statistic F1 Score for class {i} (percent)" for i in (0, 1)]
    + [f"Kappa Statistic F1 Score for class {i} (percent)" for i in (0, 1)]
    + ["Precision (percent)"]
    + [f"Precision for class {i} (percent)" for i in (0, 1)]
    + [f"Kappa Precision Temporal Statistic {i} (percent)" for i in (0, 1)]
    + [f"Kappa Precision M Statistic {i} (percent)" for i in (0, 1)]
    + ["Recall (percent)"]
    + [f"Recall for class {i} (percent)" for i in (0, 1)]
    + [f"FPR for class {i} (percent)" for i in (0, 1)]
    + ["Gmean for recall  (percent)"]
    + [f"Kappa Recall Temporal Statistic {i} (percent)" for i in (0, 1)]
    + [f"Kappa Recall M Statistic {i} (percent)" for i in (0, 1)]
    + [f"Kappa FPR Temporal Statistic {i} (percent)" for i in (0, 1)]
    + [f"Kappa FPR M Statistic {i} (percent)" for i in (0, 1)]
    + ["Kappa Gmean Temporal Statistic  (percent)", "Kappa Gmean M Statistic  (percent)"]
)
assert len(MEASUREMENT_NAMES) == 41

DETAIL_HEADER = [
    "learning evaluation instances on certain fold",
    "current timestamp",
    "fold",
    "evaluation time (cpu seconds)",
    "model cost (RAM-Hours)",
    *MEASUREMENT_NAMES,
]
DUMP_HEADER = [
    "learning evaluation instances",
    "current timestamp",
    "evaluation time (cpu seconds)",
    "model cost (RAM-Hours)",
]
for _name in MEASUREMENT_NAMES:
    DUMP_HEADER += [f"[avg] {_name}", f"[err] {_name}"]


class Evaluator:
    """BasicClassificationPerformanceEvaluator with the fading-factor estimator, 2 classes."""

    C = 2

    def __init__(self, alpha: float) -> None:
        self.alpha = alpha
        self.num_classes = 0
        self.total = 0.0

    def _new(self) -> FadingEstimator:
        return FadingEstimator(self.alpha)

    def _reset(self) -> None:
        self.num_classes = self.C
        names = ["row", "col", "prec", "rec", "fpr", "recNC", "recMaj", "precNC", "precMaj"]
        names += ["fprNC", "fprMaj"]
        for name in names:
            setattr(self, name, [self._new() for _ in range(self.C)])
        self.correct = self._new()
        self.correct_nc = self._new()
        self.correct_maj = self._new()
        self.last_seen = 0
        self.total = 0.0
        self.tp = self.fp = self.tn = self.fn = 0

    def maj(self) -> int:
        best, best_value = 0, 0.0
        for j in range(self.num_classes):
            if self.col[j].est() > best_value:
                best, best_value = j, self.col[j].est()
        return best

    def add_result(self, t: int, p: int, w: float = 1.0) -> None:
        if w > 0.0:
            if self.total == 0:
                self._reset()
            self.total += w
            self.correct.add(w if p == t else 0.0)
            if p == 1 and t == 1:
                self.tp += 1
            elif p == 1 and t == 0:
                self.fp += 1
            elif p == 0 and t == 1:
                self.fn += 1
            elif p == 0 and t == 0:
                self.tn += 1
            for i in range(self.num_classes):
                self.row[i].add(w if p == i else 0.0)
                self.col[i].add(w if t == i else 0.0)
                if p == i:
                    self.prec[i].add(w if p == t else 0.0)
                    self.precMaj[i].add(w if self.maj() == t else 0.0)
                    self.precNC[i].add(w if self.last_seen == t else 0.0)
                else:
                    for e in (self.prec[i], self.precMaj[i], self.precNC[i]):
                        e.add(NAN)
                if t == i:
                    self.rec[i].add(w if p == t else 0.0)
                    self.recNC[i].add(w if self.last_seen == t else 0.0)
                    self.recMaj[i].add(w if self.maj() == t else 0.0)
                else:
                    for e in (self.rec[i], self.recNC[i], self.recMaj[i]):
                        e.add(NAN)
                if t != i:
                    self.fpr[i].add(w if p != t else 0.0)
                    self.fprNC[i].add(w if self.last_seen != t else 0.0)
                    self.fprMaj[i].add(w if self.maj() != t else 0.0)
                else:
                    for e in (self.fpr[i], self.fprNC[i], self.fprMaj[i]):
                        e.add(NAN)
        if self.num_classes:
            self.correct_nc.add(w if self.last_seen == t else 0.0)
            self.correct_maj.add(w if self.maj() == t else 0.0)
            self.last_seen = t

    # ---- §6.4
    def _kappa(self, p0: float, pc: float) -> float:
        if self.total > 0.0:
            return jdiv(p0 - pc, 1.0 - pc)
        return 0.0

    @staticmethod
    def _f1(p: float, r: float) -> float:
        return 2.0 * jdiv(p * r, p + r)

    def measurements(self) -> list[float]:
        C = range(self.C)
        acc = self.correct.est()
        pc = sum(self.row[i].est() * self.col[i].est() for i in C)
        prec = [self.prec[i].est() for i in C]
        rec = [self.rec[i].est() for i in C]
        fpr = [self.fpr[i].est() for i in C]
        prec_avg = sum(prec) / self.C
        rec_avg = sum(rec) / self.C
        f1 = [self._f1(prec[i], rec[i]) for i in C]
        f1_nc = [self._f1(self.precNC[i].est(), self.recNC[i].est()) for i in C]
        f1_maj = [self._f1(self.precMaj[i].est(), self.recMaj[i].est()) for i in C]
        gmean = jsqrt(rec[0] * rec[1])
        gmean_nc = jsqrt(self.recNC[0].est() * self.recNC[1].est())
        gmean_maj = jsqrt(self.recMaj[0].est() * self.recMaj[1].est())
        k = self._kappa
        v = [self.total, float(self.tp), float(self.fp), float(self.tn), float(self.fn)]
        v += [
            100.0 * acc,
            100.0 * k(acc, pc),
            100.0 * k(acc, self.correct_nc.est()),
            100.0 * k(acc, self.correct_maj.est()),
            100.0 * self._f1(prec_avg, rec_avg),
        ]
        v += [100.0 * f1[i] for i in C]
        v += [100.0 * k(f1[i], f1_nc[i]) for i in C]
        v += [100.0 * k(f1[i], f1_maj[i]) for i in C]
        v += [100.0 * k(f1[i], f1_maj[i]) for i in C]  # the defect: Kappa M F1 again
        v += [100.0 * prec_avg]
        v += [100.0 * prec[i] for i in C]
        v += [100.0 * k(prec[i], self.precNC[i].est()) for i in C]
        v += [100.0 * k(prec[i], self.precMaj[i].est()) for i in C]
        v += [100.0 * rec_avg]
        v += [100.0 * rec[i] for i in C]
        v += [100.0 * fpr[i] for i in C]
        v += [100.0 * gmean]
        v += [100.0 * k(rec[i], self.recNC[i].est()) for i in C]
        v += [100.0 * k(rec[i], self.recMaj[i].est()) for i in C]
        v += [100.0 * k(fpr[i], self.fprNC[i].est()) for i in C]
        v += [100.0 * k(fpr[i], self.fprMaj[i].est()) for i in C]
        v += [100.0 * k(gmean, gmean_nc), 100.0 * k(gmean, gmean_maj)]
        assert len(v) == 41
        return v


# --------------------------------------------------------------------------- §7 averaging


def welford_mean_std(values: list[float]) -> tuple[float, float]:
    """MOA Measurement.averageMeasurements for one measurement: NaN/Inf skipped; < 2 -> (0, 0)."""
    count = 0.0
    mean = 0.0
    var_sum = 0.0
    for x in values:
        if math.isnan(x) or math.isinf(x):
            continue
        if count > 0.0:
            count += 1.0
            last = mean
            mean += (x - last) / count
            var_sum += (x - last) * (x - mean)
        else:
            mean = x
            count = 1.0
    if count < 2.0:
        return 0.0, 0.0
    return mean, math.sqrt(var_sum / (count - 1.0))


# --------------------------------------------------------------------------- §3 loop


@dataclass
class Instance:
    ts: int
    label: int  # mutable: the shared object of §5


@dataclass
class SimResult:
    dump: list[list[float]] = field(default_factory=list)
    detail: list[list[float]] = field(default_factory=list)
    tested: list[int] = field(default_factory=list)


def simulate(
    rows: list[Row],
    learner: str,
    *,
    folds: int = 10,
    scheme: str = CV,
    task: str = IDEAL,
    pos_window: int = 0,
    neg_window: int = 0,
    every: int = 30,
    alpha: float = 0.99,
    boot_seed: int = 1,
    trace: list | None = None,
) -> SimResult:
    """Run the MOA extension's task on ``rows`` and return its dump and detail rows (timing
    cells 0.0).

        ``trace``, if given, receives ``(n, ts, fold, pred, label)`` for every evaluation, in order.
    """
    w = folds
    learners = [LEARNERS[learner]() for _ in range(w)]
    evaluators = [Evaluator(alpha) for _ in range(w)]
    pos_q: list[list[Instance]] = [[] for _ in range(w)]
    neg_q: list[list[Instance]] = [[] for _ in range(w)]
    tested = [0] * w
    rnd = JavaRandom(boot_seed)
    out = SimResult()

    for n, row in enumerate(rows, start=1):
        ts, fb = row.ts, row.fb
        e = Instance(ts=ts, label=row.label)
        new_eval = False
        for i in range(w):
            if scheme == CV:
                k = 0 if n % w == i else 1
            elif scheme == BOOT:
                k = poisson1(rnd)
            elif scheme == SPLIT:
                k = 1 if n % w == i else 0
            else:
                raise ValueError(scheme)
            pred = learners[i].predict()
            if k > 0:
                (pos_q[i] if pred == 1 else neg_q[i]).append(e)
            evaluated = False

            def release(
                inst: Instance, path: str, i: int = i, pred: int = pred, n: int = n, ts: int = ts
            ) -> None:
                if task == EXTENSION:
                    inst.label = 1 if path == FEEDBACK else 0
                elif task == POSNEG:
                    if path in (FEEDBACK,):
                        inst.label = 1
                    elif path == NEG_TIMEOUT:
                        inst.label = 0
                # Ideal: unchanged. §6.1: the CURRENT instance's prediction is used.
                evaluators[i].add_result(inst.label, pred, 1.0)
                learners[i].train(inst.label)
                tested[i] += 1
                if trace is not None:
                    trace.append((n, ts, i, pred, inst.label))
                if tested[i] % every == 0:
                    out.detail.append(
                        [float(tested[i]), float(ts), float(i), 0.0, 0.0]
                        + evaluators[i].measurements()
                    )

            # (a) feedback release, positive queue first, first match by timestamp
            if fb != -1:
                jp = next((j for j, q in enumerate(pos_q[i]) if q.ts == fb), -1)
                jn = next((j for j, q in enumerate(neg_q[i]) if q.ts == fb), -1)
                if jp != -1:
                    release(pos_q[i].pop(jp), FEEDBACK)
                    evaluated = True
                elif jn != -1:
                    release(neg_q[i].pop(jn), FEEDBACK)
                    evaluated = True
            # (b) positive queue head
            if pos_q[i] and pos_window <= ts - pos_q[i][0].ts:
                release(pos_q[i].pop(0), POS_TIMEOUT)
                evaluated = True
            # (c) negative queue head
            if neg_q[i] and neg_window <= ts - neg_q[i][0].ts:
                release(neg_q[i].pop(0), NEG_TIMEOUT)
                evaluated = True
            if evaluated:
                new_eval = True
        if new_eval and (n % every == 0 or n == len(rows)):
            per_fold = [ev.measurements() for ev in evaluators if ev.num_classes != 0]
            cells = [float(n), float(ts), 0.0, 0.0]
            for m in range(41):
                cells += list(welford_mean_std([f[m] for f in per_fold]))
            out.dump.append(cells)
    out.tested = tested
    return out
