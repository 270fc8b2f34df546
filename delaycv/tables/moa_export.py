"""MOA-compatible export: the MOA extension's fold-average dump and per-fold detail CSV files.

The MOA extension (moa-extension, ``EvaluatePrequentialDelayedCV*``) writes two CSV files, the
*dump* (``-d``, fold averages after stream instances) and the *detail* (``-o``, one row per fold
every ``f`` evaluations). R scripts written for the MOA extension read them. :class:`MoaExport`
produces the same files from a delaycv run: it is an observer of the engine
(``evaluate(..., observer_factory=export.observer_factory)``), keeps one :class:`MoaEvaluator` per
fold fed with the observed label (what the MOA extension evaluates against) and writes ``dump.csv``
and ``detail.csv`` with :meth:`MoaExport.write`.

:class:`MoaEvaluator` is MOA's ``BasicClassificationPerformanceEvaluator`` with the fading-factor
estimator, updated one evaluation at a time with exactly MOA's floating-point operations
(``s = alpha*s + v; b = alpha*b + 1``). This matters: several MOA measurements divide by
``1 - reference`` where the reference is within 1e-9 of 1 (e.g. ``Kappa Recall M Statistic 0``), so
any other order of the same arithmetic (as in ``delaycv.metrics``' vectorised estimators) changes
those cells by up to percents, or turns ``±Infinity`` into huge finite numbers. Its 41 values are
the ones ``delaycv.metrics.MOA_MEASUREMENTS`` defines (the tests check both agree where the
arithmetic is well conditioned).

Columns and row rules (docs/moa-compat.md, with ``every`` = MOA's ``-f``):

* detail row for fold i right after its evaluation number ``tested`` whenever
  ``tested % every == 0``: ``tested``, the timestamp of the stream instance arriving now, the fold,
  two timing columns, then MOA's 41 measurements (``-o -p -r -f``) of that fold;
  rows are ordered by stream position, then fold, then evaluation order;
* dump row after stream instance n iff some fold evaluated during n and (``n % every == 0`` or n is
  the last instance): n, its timestamp, two timing columns, then ``[avg]``/``[err]`` of each
  measurement over the folds that have evaluated at least once (MOA ``averageMeasurements``:
  NaN/Inf skipped, Welford mean and sample standard deviation, both 0.0 with fewer than two
  finite values).

Differences from the MOA extension, on purpose: timing columns are the CPU seconds passed by the
engine (``cpu_seconds=`` of ``on_instance``, else 0.0) and RAM-Hours is always 0.0; files are
overwritten, not appended to; the header is written even when there are no rows.
Numbers are written as Java's ``Double.toString`` does; NaN is written ``?``.
"""

from __future__ import annotations

import math
import os
from array import array
from collections.abc import Iterable, Sequence
from decimal import Decimal
from pathlib import Path

from delaycv.common.atomic import atomic_path
from delaycv.common.checks import is_integer
from delaycv.common.errors import DelaycvError

DETAIL_PREFIX = (
    "learning evaluation instances on certain fold",
    "current timestamp",
    "fold",
    "evaluation time (cpu seconds)",
    "model cost (RAM-Hours)",
)
DUMP_PREFIX = (
    "learning evaluation instances",
    "current timestamp",
    "evaluation time (cpu seconds)",
    "model cost (RAM-Hours)",
)
DUMP_FILE = "dump.csv"
DETAIL_FILE = "detail.csv"


# --------------------------------------------------------------------------- number formatting


def java_double_str(x: float) -> str:
    """``x`` as Java's ``Double.toString`` writes it (shortest round-trip digits).

    Decimal notation for 1e-3 <= |x| < 1e7 with at least one fractional digit (``30.0``), otherwise
    computerized scientific notation (``1.324000448E9``, ``-9.266041943596472E-13``, ``1.0E-4``);
    ``NaN``, ``Infinity``, ``-Infinity``, ``0.0``, ``-0.0``.
    """
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    if x == 0.0:
        return sign + "0.0"
    _, digit_tuple, exponent = Decimal(repr(abs(x))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    # value = 0.d1d2d3... * 10**(point); scientific exponent = point - 1
    point = len(digit_tuple) + exponent
    sci = point - 1
    if 1e-3 <= abs(x) < 1e7:
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        whole = digits[:point].ljust(point, "0")
        frac = digits[point:] or "0"
        return f"{sign}{whole}.{frac}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{sci}"


def format_cell(x: float) -> str:
    """A CSV cell as the MOA extension writes it: Java ``Double.toString``, NaN as ``?``."""
    x = float(x)
    return "?" if math.isnan(x) else java_double_str(x)


# --------------------------------------------------------------------------- fold averaging


def average(values: Iterable[float]) -> tuple[float, float]:
    """MOA ``Measurement.averageMeasurements`` for one measurement over folds.

    Non-finite values are skipped; Welford mean and sample standard deviation (n - 1) of the rest;
    ``(0.0, 0.0)`` when fewer than two finite values remain (the MOA extension's rule, not the value).
    """
    count = 0.0
    mean = 0.0
    spread = 0.0
    for x in values:
        x = float(x)
        if not math.isfinite(x):
            continue
        if count > 0.0:
            count += 1.0
            previous = mean
            mean += (x - previous) / count
            spread += (x - previous) * (x - mean)
        else:
            count = 1.0
            mean = x
    if count < 2.0:
        return 0.0, 0.0
    return mean, math.sqrt(spread / (count - 1.0))


# --------------------------------------------------------------------------- observer


MEASUREMENT_NAMES: tuple[str, ...] = (
    "classified instances",
    "TP",
    "FP",
    "TN",
    "FN",
    "classifications correct (percent)",
    "Kappa Statistic (percent)",
    "Kappa Temporal Statistic (percent)",
    "Kappa M Statistic (percent)",
    "F1 Score (percent)",
    *(f"F1 Score for class {i} (percent)" for i in (0, 1)),
    *(f"Kappa Temporal Statistic F1 Score for class {i} (percent)" for i in (0, 1)),
    *(f"Kappa M Statistic F1 Score for class {i} (percent)" for i in (0, 1)),
    *(f"Kappa Statistic F1 Score for class {i} (percent)" for i in (0, 1)),
    "Precision (percent)",
    *(f"Precision for class {i} (percent)" for i in (0, 1)),
    *(f"Kappa Precision Temporal Statistic {i} (percent)" for i in (0, 1)),
    *(f"Kappa Precision M Statistic {i} (percent)" for i in (0, 1)),
    "Recall (percent)",
    *(f"Recall for class {i} (percent)" for i in (0, 1)),
    *(f"FPR for class {i} (percent)" for i in (0, 1)),
    "Gmean for recall  (percent)",
    *(f"Kappa Recall Temporal Statistic {i} (percent)" for i in (0, 1)),
    *(f"Kappa Recall M Statistic {i} (percent)" for i in (0, 1)),
    *(f"Kappa FPR Temporal Statistic {i} (percent)" for i in (0, 1)),
    *(f"Kappa FPR M Statistic {i} (percent)" for i in (0, 1)),
    "Kappa Gmean Temporal Statistic  (percent)",
    "Kappa Gmean M Statistic  (percent)",
)
"""MOA's 41 measurement names with the evaluator flags ``-o -p -r -f`` and two classes, in order."""


def _jdiv(a: float, b: float) -> float:
    """Java double division: ``x/0`` is a signed infinity, ``0/0`` NaN."""
    if b != 0.0:
        return a / b
    if a != a or a == 0.0:
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _f1(p: float, r: float) -> float:
    return 2.0 * _jdiv(p * r, p + r)


# indices of the fading estimators (s, b pairs); "+ i" selects the class
_CORRECT, _NC, _MAJ = 0, 1, 2
_ROW, _COL = 3, 5
_PREC, _PREC_NC, _PREC_MAJ = 7, 9, 11
_REC, _REC_NC, _REC_MAJ = 13, 15, 17
_FPR, _FPR_NC, _FPR_MAJ = 19, 21, 23
_N_EST = 25


class MoaEvaluator:
    """MOA's classification evaluator (moa-extension's Basic evaluator + fading factor), 2 classes.

    ``add(pred, label)`` is ``addResult`` with instance weight 1 (the MOA extension's
    ``BasicClassificationPerformanceEvaluator``, https://github.com/liu906/moa-extension): the fading
    estimators ``s = alpha*s + v; b = alpha*b + 1`` (an estimator with nothing added reads 0; the
    NaN that MOA adds to "other class" estimators changes nothing and is not added); unfaded
    TP/FP/TN/FN; the majority reference taken at the moment of each per-class update (so, for class
    0, with class 0's column already updated and class 1's not); the no-change reference is the
    previous label. ``values()`` gives the 41 measurements (docs/metrics.md), quirks included (``Kappa
    Statistic F1 Score for class i`` repeats the Kappa M F1 value; Java division).
    A prediction other than 0 or 1 (an abstention) counts as class 0, MOA's ``maxIndex`` of no votes.
    """

    def __init__(self, alpha: float) -> None:
        self.alpha = float(alpha)
        self.total = 0.0
        self.tp = self.fp = self.tn = self.fn = 0
        self.last_seen = 0
        self.s = [0.0] * _N_EST
        self.b = [0.0] * _N_EST

    def _est(self, k: int) -> float:
        b = self.b[k]
        return self.s[k] / b if b > 0.0 else 0.0

    def _maj(self) -> int:
        majority, best = 0, 0.0
        c0 = self._est(_COL)
        if c0 > best:
            best = c0
        if self._est(_COL + 1) > best:
            majority = 1
        return majority

    def add(self, pred: int, label: int) -> None:
        p = 1 if pred == 1 else 0
        t = 1 if label == 1 else 0
        a, s, b = self.alpha, self.s, self.b

        def put(k: int, v: float) -> None:
            s[k] = a * s[k] + v
            b[k] = a * b[k] + 1.0

        self.total += 1.0
        put(_CORRECT, 1.0 if p == t else 0.0)
        if p == 1:
            if t == 1:
                self.tp += 1
            else:
                self.fp += 1
        elif t == 1:
            self.fn += 1
        else:
            self.tn += 1
        last = self.last_seen
        for i in (0, 1):
            put(_ROW + i, 1.0 if p == i else 0.0)
            put(_COL + i, 1.0 if t == i else 0.0)
            if p == i:
                put(_PREC + i, 1.0 if p == t else 0.0)
                put(_PREC_MAJ + i, 1.0 if self._maj() == t else 0.0)
                put(_PREC_NC + i, 1.0 if last == t else 0.0)
            if t == i:
                put(_REC + i, 1.0 if p == t else 0.0)
                put(_REC_NC + i, 1.0 if last == t else 0.0)
                put(_REC_MAJ + i, 1.0 if self._maj() == t else 0.0)
            else:
                put(_FPR + i, 1.0 if p != t else 0.0)
                put(_FPR_NC + i, 1.0 if last != t else 0.0)
                put(_FPR_MAJ + i, 1.0 if self._maj() != t else 0.0)
        put(_NC, 1.0 if last == t else 0.0)
        put(_MAJ, 1.0 if self._maj() == t else 0.0)
        self.last_seen = t

    def values(self) -> list[float]:
        """The 41 measurements in the order of :data:`MEASUREMENT_NAMES`."""
        e = self._est
        has = self.total > 0.0

        def kappa(p0: float, pc: float) -> float:
            return _jdiv(p0 - pc, 1.0 - pc) if has else 0.0

        acc = e(_CORRECT)
        pc = 0.0
        for i in (0, 1):
            pc += e(_ROW + i) * e(_COL + i)
        prec = [e(_PREC), e(_PREC + 1)]
        rec = [e(_REC), e(_REC + 1)]
        fpr = [e(_FPR), e(_FPR + 1)]
        prec_avg = (0.0 + prec[0] + prec[1]) / 2
        rec_avg = (0.0 + rec[0] + rec[1]) / 2
        f1 = [_f1(prec[i], rec[i]) for i in (0, 1)]
        f1_nc = [_f1(e(_PREC_NC + i), e(_REC_NC + i)) for i in (0, 1)]
        f1_maj = [_f1(e(_PREC_MAJ + i), e(_REC_MAJ + i)) for i in (0, 1)]

        def gmean(r0: float, r1: float) -> float:
            g = 1.0 * r0 * r1
            return math.sqrt(g) if g >= 0.0 else math.nan

        g = gmean(rec[0], rec[1])
        g_nc = gmean(e(_REC_NC), e(_REC_NC + 1))
        g_maj = gmean(e(_REC_MAJ), e(_REC_MAJ + 1))
        out = [self.total, float(self.tp), float(self.fp), float(self.tn), float(self.fn)]
        out += [
            acc * 100.0,
            kappa(acc, pc) * 100.0,
            kappa(acc, e(_NC)) * 100.0,
            kappa(acc, e(_MAJ)) * 100.0,
            _f1(prec_avg, rec_avg) * 100.0,
        ]
        out += [100.0 * f1[i] for i in (0, 1)]
        out += [100.0 * kappa(f1[i], f1_nc[i]) for i in (0, 1)]
        out += [100.0 * kappa(f1[i], f1_maj[i]) for i in (0, 1)]
        out += [100.0 * kappa(f1[i], f1_maj[i]) for i in (0, 1)]  # MOA's defect, kept
        out += [prec_avg * 100.0]
        out += [100.0 * prec[i] for i in (0, 1)]
        out += [100.0 * kappa(prec[i], e(_PREC_NC + i)) for i in (0, 1)]
        out += [100.0 * kappa(prec[i], e(_PREC_MAJ + i)) for i in (0, 1)]
        out += [rec_avg * 100.0]
        out += [100.0 * rec[i] for i in (0, 1)]
        out += [100.0 * fpr[i] for i in (0, 1)]
        out += [100.0 * g]
        out += [100.0 * kappa(rec[i], e(_REC_NC + i)) for i in (0, 1)]
        out += [100.0 * kappa(rec[i], e(_REC_MAJ + i)) for i in (0, 1)]
        out += [100.0 * kappa(fpr[i], e(_FPR_NC + i)) for i in (0, 1)]
        out += [100.0 * kappa(fpr[i], e(_FPR_MAJ + i)) for i in (0, 1)]
        out += [100.0 * kappa(g, g_nc), 100.0 * kappa(g, g_maj)]
        return out


def measurement_names() -> list[str]:
    """MOA's measurement names in output order (41 with the flags ``-o -p -r -f``)."""
    return list(MEASUREMENT_NAMES)


def detail_header() -> list[str]:
    return [*DETAIL_PREFIX, *measurement_names()]


def dump_header() -> list[str]:
    header = list(DUMP_PREFIX)
    for name in measurement_names():
        header += [f"[avg] {name}", f"[err] {name}"]
    return header


class MoaObserver:
    """The export's per-fold observer (picklable; it may live in a worker process).

    The engine calls :meth:`on_evaluation` for each evaluation of the fold while it processes
    stream instance ``n``, then :meth:`on_instance` after instance ``n``.
    """

    def __init__(self, fold: int, every: int, alpha: float) -> None:
        self.fold = int(fold)
        self.every = int(every)
        self.alpha = float(alpha)
        self.evaluator = MoaEvaluator(self.alpha)
        self.tested = 0
        self.evaluated_now = False
        self.cpu_seconds = 0.0
        # detail: [n, tested, time (None until on_instance(n)), cpu, values, fallback time]
        self.detail: list[list] = []
        # dump records at n % every == 0: (n, time, cpu, evaluated_now, values or None)
        self.records: list[tuple] = []
        self.last: tuple | None = None  # (n, time, cpu, evaluated_now) of the latest instance
        self._version = 0
        self._cache: tuple[int, array] | None = None

    def _values(self) -> array:
        # compact (8 bytes per value) and shared between a detail and a dump record of one state
        if self._cache is None or self._cache[0] != self._version:
            self._cache = (self._version, array("d", self.evaluator.values()))
        return self._cache[1]

    def on_evaluation(self, n, time, pred, proba, observed, true, weight) -> None:
        """One evaluation of this fold while instance ``n`` is processed (scored against ``observed``).

        The evaluator counts each evaluation with weight 1, as the MOA extension's evaluator does
        (its Poisson/CV weight only gates training); ``true`` and ``weight`` are not used.
        """
        self.evaluator.add(int(pred), int(observed))
        self._version += 1
        self.tested += 1
        self.evaluated_now = True
        if self.tested % self.every == 0:
            # the timestamp of instance n comes with on_instance(n); ``time`` is the fallback
            self.detail.append([int(n), self.tested, None, None, self._values(), float(time)])

    def on_instance(self, n, time, cpu_seconds: float | None = None) -> None:
        """After stream instance ``n`` (arrival ``time``); ``cpu_seconds``: the fold's CPU time so far."""
        n = int(n)
        if cpu_seconds is not None:
            self.cpu_seconds = float(cpu_seconds)
        for row in reversed(self.detail):
            if row[2] is not None:
                break
            row[2] = float(time)
            row[3] = self.cpu_seconds
        if n % self.every == 0:
            values = self._values() if self.tested > 0 else None
            self.records.append((n, float(time), self.cpu_seconds, self.evaluated_now, values))
        self.last = (n, float(time), self.cpu_seconds, self.evaluated_now)
        self.evaluated_now = False

    def final_values(self) -> array | None:
        """Measurements of the current state (after the latest instance), None if never evaluated."""
        return self._values() if self.tested > 0 else None


# --------------------------------------------------------------------------- the export


class MoaExport:
    """MOA-compatible ``dump.csv`` and ``detail.csv`` of one run.

    >>> import tempfile
    >>> import delaycv
    >>> from river import naive_bayes
    >>> from delaycv.data.synthetic import generate_stream
    >>> export = MoaExport(every=100, alpha=0.99, folds=2)
    >>> result = delaycv.evaluate(
    ...     generate_stream(rows=300, seed=1), naive_bayes.GaussianNB(),
    ...     folds=2, every=100, progress=False, observer_factory=export.observer_factory,
    ... )
    >>> folder = tempfile.TemporaryDirectory()
    >>> [path.name for path in export.write(folder.name)]
    ['dump.csv', 'detail.csv']
    >>> folder.cleanup()

    ``every`` is the MOA extension's ``-f``, ``alpha`` the fading factor of its
    ``FadingFactorClassificationPerformanceEvaluator``, ``folds`` its ``-w``. Observers made in other
    processes (``--jobs``) are handed back with :meth:`collect` (or ``write(dir, observers)``).
    """

    def __init__(self, every: int, alpha: float, folds: int) -> None:
        if not is_integer(every) or every < 1:
            raise DelaycvError(f"MOA export: every must be a positive integer, got {every!r}")
        if not (isinstance(alpha, int | float) and 0.0 < float(alpha) <= 1.0):
            raise DelaycvError(f"MOA export: alpha must be in (0, 1], got {alpha!r}")
        if not is_integer(folds) or folds < 1:
            raise DelaycvError(f"MOA export: folds must be a positive integer, got {folds!r}")
        self.every = every
        self.alpha = float(alpha)
        self.folds = folds
        self.observers: dict[int, MoaObserver] = {}

    def observer_factory(self, fold: int) -> MoaObserver:
        """A new observer for ``fold`` (0-based); the export keeps it for :meth:`write`."""
        fold = int(fold)
        if not 0 <= fold < self.folds:
            raise DelaycvError(f"MOA export: fold {fold} is outside 0..{self.folds - 1}")
        obs = MoaObserver(fold, self.every, self.alpha)
        self.observers[fold] = obs
        return obs

    def collect(self, observers: Iterable[MoaObserver]) -> None:
        """Adopt observers that ran elsewhere (e.g. returned pickled from worker processes)."""
        for obs in observers:
            if not isinstance(obs, MoaObserver):
                raise DelaycvError(f"MOA export: not a MOA observer: {type(obs).__name__}")
            self.observers[obs.fold] = obs

    def _ordered(self) -> list[MoaObserver]:
        return [self.observers[f] for f in sorted(self.observers)]

    # ---- rows (lists of floats, in file order)

    def detail_rows(self) -> list[list[float]]:
        rows = []
        for obs in self._ordered():
            for n, tested, time, cpu, values, fallback in obs.detail:
                time = fallback if time is None else time
                rows.append((n, [float(tested), time, float(obs.fold), cpu or 0.0, 0.0, *values]))
        rows.sort(key=lambda r: r[0])  # stable: fold order, then evaluation order within a step
        return [r[1] for r in rows]

    def dump_rows(self) -> list[list[float]]:
        observers = self._ordered()
        if not observers:
            return []
        by_n: dict[int, list[tuple]] = {}
        for obs in observers:
            for n, time, cpu, evaluated_now, values in obs.records:
                by_n.setdefault(n, []).append((time, cpu, evaluated_now, values))
        lasts = [obs.last for obs in observers if obs.last is not None]
        if lasts:
            last_n = max(last[0] for last in lasts)
            if last_n not in by_n:
                by_n[last_n] = [
                    (
                        obs.last[1],
                        obs.last[2],
                        obs.last[3] and obs.last[0] == last_n,
                        obs.final_values(),
                    )
                    for obs in observers
                    if obs.last is not None
                ]
        rows = []
        for n in sorted(by_n):
            entries = by_n[n]
            if not any(e[2] for e in entries):
                continue
            folds = [e[3] for e in entries if e[3] is not None]
            cells = [float(n), entries[0][0], float(sum(e[1] for e in entries)), 0.0]
            for j in range(len(folds[0])):
                cells += average(values[j] for values in folds)
            rows.append(cells)
        return rows

    # ---- files

    def write(self, out_dir: str | os.PathLike, observers: Sequence[MoaObserver] | None = None):
        """Write ``dump.csv`` and ``detail.csv`` into ``out_dir`` (overwriting); return both paths."""
        if observers is not None:
            self.collect(observers)
        out_dir = Path(out_dir)
        paths = []
        for name, header, rows in (
            (DUMP_FILE, dump_header(), self.dump_rows()),
            (DETAIL_FILE, detail_header(), self.detail_rows()),
        ):
            path = out_dir / name
            with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(",".join(header) + "\n")
                for row in rows:
                    fh.write(",".join(format_cell(x) for x in row) + "\n")
            paths.append(path)
        return tuple(paths)


def read_moa_csv(path: str | os.PathLike) -> tuple[list[str], list[list[float]]]:
    """Read a dump/detail file (``?`` = NaN, Java infinities) into its header and float rows.

    Repeated headers (a file the MOA extension appended to) are skipped.
    """
    path = Path(path)
    with open(path, encoding="utf-8") as fh:
        lines = [line.rstrip("\n").rstrip("\r") for line in fh if line.strip()]
    if not lines:
        raise DelaycvError(f"{path}: empty MOA CSV file")
    header = lines[0].split(",")
    rows = []
    for line in lines[1:]:
        cells = line.split(",")
        if cells == header:
            continue
        rows.append([math.nan if c == "?" else float(c) for c in cells])
    return header, rows
