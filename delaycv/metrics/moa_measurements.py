"""MOA's 41 measurements (docs/metrics.md, "MOA compatibility"; evaluator flags -o -p -r -f, two
classes) from a snapshot.

``MOA_MEASUREMENTS`` maps each MOA name, in MOA's order, to ``f(snapshot) -> value`` in MOA's units
(percent where the name says so), with the semantics of MOA's ``FadingFactor`` evaluator: an empty
elementary estimator reads 0 (ours reads NaN, so NaN base values are replaced by 0 before MOA's
formulas are applied), and every kappa reads 0 while no instance was classified. For a snapshot of
``Fading(alpha)`` over the same sequence of (prediction, label), all values equal what MOA prints.
``MOA_BASIC_MEASUREMENTS`` is the same for MOA's basic evaluator (empty reads NaN), to be used with
``Cumulative()``.

Differences from our own metrics (documented in docs/metrics.md):

* "Kappa Statistic F1 Score for class i": MOA prints the Kappa M F1 value there (a defect); these
  functions return what MOA prints, so that exports match MOA's files. Our ``kappa_f1_i`` is the
  corrected value (chance F1 reference).
* Where an estimator is empty, MOA's fading evaluator uses 0 (e.g. F1 = 0 with no positive
  prediction); our metrics are NaN.
* TP/FP/TN/FN are MOA's integer counters; with weights other than 1 ours are sums of weights.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from delaycv.metrics.formulas import div

Snapshot = dict[str, float]


def _build(empty_zero: bool) -> dict[str, Callable[[Snapshot], float]]:
    if empty_zero:

        def z(s: Snapshot, key: str) -> float:
            x = s[key]
            return 0.0 if x != x else x
    else:

        def z(s: Snapshot, key: str) -> float:
            return s[key]

    def guarded(f):
        # MOA: every kappa is 0 while nothing was classified (totalWeightObserved == 0)
        return lambda s: 0.0 if not s["classified"] > 0 else f(s)

    def kappa(p0: float, pc: float) -> float:
        return div(p0 - pc, 1.0 - pc)

    def f1(p: float, r: float) -> float:
        return 2.0 * div(p * r, p + r)

    def prec(s, i):
        return z(s, f"precision_{i}")

    def rec(s, i):
        return z(s, f"recall_{i}")

    def f1_ref(s, ref, i):
        return f1(z(s, f"{ref}_precision_{i}"), z(s, f"{ref}_recall_{i}"))

    def gmean(s, ref=None):
        pre = "" if ref is None else f"{ref}_"
        return math.sqrt(z(s, f"{pre}recall_0") * z(s, f"{pre}recall_1"))

    def p100(f):
        return lambda s: 100.0 * f(s)

    m: dict[str, Callable[[Snapshot], float]] = {
        "classified instances": lambda s: s["classified"],
        "TP": lambda s: s["tp"],
        "FP": lambda s: s["fp"],
        "TN": lambda s: s["tn"],
        "FN": lambda s: s["fn"],
        "classifications correct (percent)": p100(lambda s: z(s, "accuracy")),
        "Kappa Statistic (percent)": p100(guarded(lambda s: s["kappa"])),
        "Kappa Temporal Statistic (percent)": p100(
            guarded(lambda s: kappa(z(s, "accuracy"), z(s, "nochange_accuracy")))
        ),
        "Kappa M Statistic (percent)": p100(
            guarded(lambda s: kappa(z(s, "accuracy"), z(s, "majority_accuracy")))
        ),
        "F1 Score (percent)": p100(
            lambda s: f1(
                (prec(s, 0) + prec(s, 1)) / 2.0,
                (rec(s, 0) + rec(s, 1)) / 2.0,
            )
        ),
    }
    for i in (0, 1):
        m[f"F1 Score for class {i} (percent)"] = p100(lambda s, i=i: f1(prec(s, i), rec(s, i)))
    for name, ref in (("Kappa Temporal Statistic", "nochange"), ("Kappa M Statistic", "majority")):
        for i in (0, 1):
            m[f"{name} F1 Score for class {i} (percent)"] = p100(
                guarded(lambda s, i=i, ref=ref: kappa(f1(prec(s, i), rec(s, i)), f1_ref(s, ref, i)))
            )
    for i in (0, 1):
        # MOA's defect: this column prints the Kappa M F1 value
        m[f"Kappa Statistic F1 Score for class {i} (percent)"] = m[
            f"Kappa M Statistic F1 Score for class {i} (percent)"
        ]
    m["Precision (percent)"] = p100(lambda s: (prec(s, 0) + prec(s, 1)) / 2.0)
    for i in (0, 1):
        m[f"Precision for class {i} (percent)"] = p100(lambda s, i=i: prec(s, i))
    for tag, ref in (("Temporal", "nochange"), ("M", "majority")):
        for i in (0, 1):
            m[f"Kappa Precision {tag} Statistic {i} (percent)"] = p100(
                guarded(lambda s, i=i, ref=ref: kappa(prec(s, i), z(s, f"{ref}_precision_{i}")))
            )
    m["Recall (percent)"] = p100(lambda s: (rec(s, 0) + rec(s, 1)) / 2.0)
    for i in (0, 1):
        m[f"Recall for class {i} (percent)"] = p100(lambda s, i=i: rec(s, i))
    for i in (0, 1):
        m[f"FPR for class {i} (percent)"] = p100(lambda s, i=i: z(s, f"fpr_{i}"))
    m["Gmean for recall  (percent)"] = p100(lambda s: gmean(s))
    for what, key in (("Recall", "recall"), ("FPR", "fpr")):
        for tag, ref in (("Temporal", "nochange"), ("M", "majority")):
            for i in (0, 1):
                m[f"Kappa {what} {tag} Statistic {i} (percent)"] = p100(
                    guarded(
                        lambda s, i=i, ref=ref, key=key: kappa(
                            z(s, f"{key}_{i}"), z(s, f"{ref}_{key}_{i}")
                        )
                    )
                )
    m["Kappa Gmean Temporal Statistic  (percent)"] = p100(
        guarded(lambda s: kappa(gmean(s), gmean(s, "nochange")))
    )
    m["Kappa Gmean M Statistic  (percent)"] = p100(
        guarded(lambda s: kappa(gmean(s), gmean(s, "majority")))
    )
    return m


MOA_MEASUREMENTS: dict[str, Callable[[Snapshot], float]] = _build(empty_zero=True)
MOA_BASIC_MEASUREMENTS: dict[str, Callable[[Snapshot], float]] = _build(empty_zero=False)


def moa_values(snapshot: Snapshot, basic: bool = False) -> dict[str, float]:
    """All 41 MOA values of a snapshot, in MOA's order."""
    table = MOA_BASIC_MEASUREMENTS if basic else MOA_MEASUREMENTS
    return {name: f(snapshot) for name, f in table.items()}
