"""The corrected reference's errors on one simulated stream whose assumptions hold: the test of
its bias (``tests/metrics/test_corrected_reference.py``) and the table of docs/corrected.md
(``benchmarks/corrected_validation.py --simulated``) run the same stream, learner and policy."""

from __future__ import annotations

#: the metrics whose bias the simulated streams measure
METRICS = ("gmean", "recall_1", "fpr_1")


def simulated_errors(rate: float, seed: int) -> list[tuple[str, float, float]]:
    """(metric, observed - true, corrected - true) at the last checkpoint, mean over the folds:
    the synthetic stream of ``seed`` (2,000 rows, log-normal fix delays drawn alike for every
    defect, 80 % of the defects ever fixed), naive Bayes, hitl 7d/60d with a declared inspection
    error ``rate``, bootstrap 2 folds."""
    import delaycv
    from delaycv.data.synthetic import generate_stream

    policy = {"preset": "hitl", "pos_window": "7d", "neg_window": "60d", "inspection_error": rate}
    result = delaycv.evaluate(
        generate_stream(rows=2000, seed=seed, effort=False), "naive_bayes.GaussianNB",
        policy=policy, validation="bootstrap", folds=2, estimator="cumulative", progress=False,
    )  # fmt: skip
    folds = result.folds
    last = folds[folds["checkpoint"] == folds["checkpoint"].max()]
    wide = last.pivot_table(index="fold", columns="reference", values=list(METRICS))
    return [
        (m, *((wide[m][ref] - wide[m]["true"]).mean() for ref in ("observed", "corrected")))
        for m in METRICS
    ]
