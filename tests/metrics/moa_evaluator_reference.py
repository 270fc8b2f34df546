"""Test-only: a plain, per-event re-implementation of MOA's classification evaluator.

It follows moa-extension §6.2/§6.4 literally (the MOA extension's
BasicClassificationPerformanceEvaluator, with the FadingFactor estimator when ``alpha`` is given,
else MOA's basic estimator), one evaluation at a time, with Java double semantics. It is slow and
obviously sequential on purpose: the fast, vectorised ``delaycv.metrics`` is checked against it.
"""

from __future__ import annotations

import math

NAN = math.nan


def jdiv(a: float, b: float) -> float:
    """Java double division."""
    if b != 0:
        return a / b
    if a != a or a == 0:
        return NAN
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


class Estimator:
    """MOA's estimator: fading (alpha) or basic (alpha None). NaN values are not added."""

    def __init__(self, alpha: float | None) -> None:
        self.alpha = alpha
        self.s = 0.0
        self.b = 0.0

    def add(self, v: float) -> None:
        if v != v:
            return
        if self.alpha is None:
            self.s += v
            self.b += 1.0
        else:
            self.s = self.alpha * self.s + v
            self.b = self.alpha * self.b + 1.0

    def estimation(self) -> float:
        if self.alpha is None:
            return jdiv(self.s, self.b)
        return self.s / self.b if self.b > 0 else 0.0


class MoaEvaluator:
    """``add(pred, label, weight)`` per evaluation; ``measurements()`` gives the 41 values."""

    def __init__(self, alpha: float | None) -> None:
        self.alpha = alpha
        self.num_classes = 0
        self.total = 0.0
        self.lazy_refs = None  # the reference estimators before the first reset (MOA: none)

    def reset(self) -> None:
        def new():
            return Estimator(self.alpha)

        self.num_classes = 2
        self.row = [new(), new()]
        self.col = [new(), new()]
        self.precision = [new(), new()]
        self.recall = [new(), new()]
        self.fpr = [new(), new()]
        self.rec_nc = [new(), new()]
        self.rec_maj = [new(), new()]
        self.fpr_nc = [new(), new()]
        self.fpr_maj = [new(), new()]
        self.prec_nc = [new(), new()]
        self.prec_maj = [new(), new()]
        self.correct = new()
        self.correct_nc = new()
        self.correct_maj = new()
        self.last = 0
        self.total = 0.0
        self.tp = self.fp = self.tn = self.fn = 0

    def majority(self) -> int:
        maj, best = 0, 0.0
        for i in range(self.num_classes):
            e = self.col[i].estimation()
            if e > best:
                maj, best = i, e
        return maj

    def add(self, p: int, t: int, w: float = 1.0) -> None:
        if w > 0.0:
            if self.total == 0:
                self.reset()
            self.total += w
            self.correct.add(w if p == t else 0.0)
            if p == 1 and t == 1:
                self.tp += 1
            elif p == 1 and t == 0:
                self.fp += 1
            elif p == 0 and t == 1:
                self.fn += 1
            else:
                self.tn += 1
            for i in range(2):
                self.row[i].add(w if p == i else 0.0)
                self.col[i].add(w if t == i else 0.0)
                if p == i:
                    self.precision[i].add(w if p == t else 0.0)
                    self.prec_maj[i].add(w if self.majority() == t else 0.0)
                    self.prec_nc[i].add(w if self.last == t else 0.0)
                if t == i:
                    self.recall[i].add(w if p == t else 0.0)
                    self.rec_nc[i].add(w if self.last == t else 0.0)
                    self.rec_maj[i].add(w if self.majority() == t else 0.0)
                if t != i:
                    self.fpr[i].add(w if p != t else 0.0)
                    self.fpr_nc[i].add(w if self.last != t else 0.0)
                    self.fpr_maj[i].add(w if self.majority() != t else 0.0)
        if self.num_classes == 0:
            return  # MOA has no estimators yet; the first reset would discard this anyway
        self.correct_nc.add(w if self.last == t else 0.0)
        self.correct_maj.add(w if self.majority() == t else 0.0)
        self.last = t

    # -- MOA's getters
    def _kappa(self, p0: float, pc: float) -> float:
        return jdiv(p0 - pc, 1.0 - pc) if self.total > 0 else 0.0

    @staticmethod
    def _f1(p: float, r: float) -> float:
        return 2 * jdiv(p * r, p + r)

    def measurements(self, perturb=None) -> dict[str, float]:
        """The 41 values. With ``perturb`` (a ``random.Random``) every estimation is multiplied by
        1 + u, |u| <= 1e-14: the spread of such runs measures how sensitive each value is to
        rounding in the estimations (kappas against a reference near 1 are ill-conditioned)."""
        if perturb is None:
            e = Estimator.estimation
        else:

            def e(x):
                return x.estimation() * (1.0 + perturb.uniform(-1e-14, 1e-14))

        prec = [e(x) for x in self.precision]
        rec = [e(x) for x in self.recall]
        fpr = [e(x) for x in self.fpr]
        acc = e(self.correct)
        pc = 0.0
        for i in range(2):
            pc += e(self.row[i]) * e(self.col[i])
        p_avg = (prec[0] + prec[1]) / 2
        r_avg = (rec[0] + rec[1]) / 2
        f1 = [self._f1(prec[i], rec[i]) for i in range(2)]
        f1_nc = [self._f1(e(self.prec_nc[i]), e(self.rec_nc[i])) for i in range(2)]
        f1_maj = [self._f1(e(self.prec_maj[i]), e(self.rec_maj[i])) for i in range(2)]
        g = math.sqrt(1 * rec[0] * rec[1])
        g_nc = math.sqrt(1 * e(self.rec_nc[0]) * e(self.rec_nc[1]))
        g_maj = math.sqrt(1 * e(self.rec_maj[0]) * e(self.rec_maj[1]))
        k = self._kappa
        out = {
            "classified instances": self.total,
            "TP": float(self.tp),
            "FP": float(self.fp),
            "TN": float(self.tn),
            "FN": float(self.fn),
            "classifications correct (percent)": acc * 100,
            "Kappa Statistic (percent)": k(acc, pc) * 100,
            "Kappa Temporal Statistic (percent)": k(acc, e(self.correct_nc)) * 100,
            "Kappa M Statistic (percent)": k(acc, e(self.correct_maj)) * 100,
            "F1 Score (percent)": self._f1(p_avg, r_avg) * 100,
        }
        for i in range(2):
            out[f"F1 Score for class {i} (percent)"] = 100 * f1[i]
        for i in range(2):
            out[f"Kappa Temporal Statistic F1 Score for class {i} (percent)"] = 100 * k(
                f1[i], f1_nc[i]
            )
        for i in range(2):
            out[f"Kappa M Statistic F1 Score for class {i} (percent)"] = 100 * k(f1[i], f1_maj[i])
        for i in range(2):
            out[f"Kappa Statistic F1 Score for class {i} (percent)"] = 100 * k(f1[i], f1_maj[i])
        out["Precision (percent)"] = p_avg * 100
        for i in range(2):
            out[f"Precision for class {i} (percent)"] = 100 * prec[i]
        for i in range(2):
            out[f"Kappa Precision Temporal Statistic {i} (percent)"] = 100 * k(
                prec[i], e(self.prec_nc[i])
            )
        for i in range(2):
            out[f"Kappa Precision M Statistic {i} (percent)"] = 100 * k(
                prec[i], e(self.prec_maj[i])
            )
        out["Recall (percent)"] = r_avg * 100
        for i in range(2):
            out[f"Recall for class {i} (percent)"] = 100 * rec[i]
        for i in range(2):
            out[f"FPR for class {i} (percent)"] = 100 * fpr[i]
        out["Gmean for recall  (percent)"] = 100 * g
        for i in range(2):
            out[f"Kappa Recall Temporal Statistic {i} (percent)"] = 100 * k(
                rec[i], e(self.rec_nc[i])
            )
        for i in range(2):
            out[f"Kappa Recall M Statistic {i} (percent)"] = 100 * k(rec[i], e(self.rec_maj[i]))
        for i in range(2):
            out[f"Kappa FPR Temporal Statistic {i} (percent)"] = 100 * k(fpr[i], e(self.fpr_nc[i]))
        for i in range(2):
            out[f"Kappa FPR M Statistic {i} (percent)"] = 100 * k(fpr[i], e(self.fpr_maj[i]))
        out["Kappa Gmean Temporal Statistic  (percent)"] = 100 * k(g, g_nc)
        out["Kappa Gmean M Statistic  (percent)"] = 100 * k(g, g_maj)
        return out
