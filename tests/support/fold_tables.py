"""Per-fold checkpoint tables made without the engine, for the statistics, figure and report tests:
synthetic ones with the columns of docs/architecture.md (:func:`fold_table`, :func:`two_streams`)
and small hand-computed ones (:func:`long_table`, :func:`hand_table`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from delaycv.engine import FOLD_COLUMNS, INT_COLUMNS

#: The per-fold table's columns before the metrics: the engine's own list, so the two cannot drift.
RUN_COLUMNS = list(FOLD_COLUMNS)
METRIC_COLUMNS = ["accuracy", "kappa", "recall_1", "gmean", "brier", "fpr_1"]


def fold_table(
    *,
    learners: dict[str, float] | None = None,
    policies: dict[str, float] | None = None,
    datasets: tuple[str, ...] = ("synth",),
    seeds: tuple[int, ...] = (1,),
    folds: int = 10,
    checkpoints: int = 8,
    every: int = 500,
    noise: float = 0.02,
    rng_seed: int = 0,
) -> pd.DataFrame:
    """A merged table: learner skill (added to accuracy-like metrics), per-policy observed-label
    optimism (observed minus true), fold noise shared by learners of the same (seed, fold)."""
    learners = learners or {"ht": 0.05, "nb": 0.0, "prior": -0.1}
    policies = policies or {"ideal": 0.0, "hitl_7d_90d": 0.04}
    rng = np.random.default_rng(rng_seed)
    rows = []
    start = 1_600_000_000
    for dataset in datasets:
        positions = [every * (c + 1) for c in range(checkpoints - 1)] + [every * checkpoints - 7]
        for policy, optimism in policies.items():
            for seed in seeds:
                for fold in range(folds):
                    shared = rng.normal(0, noise, size=len(positions))
                    for learner, skill in learners.items():
                        own = rng.normal(0, noise / 2, size=len(positions))
                        for c, n in enumerate(positions):
                            growth = 0.1 * (1 - np.exp(-n / (every * 3)))
                            true = 0.7 + skill + growth + shared[c] + own[c]
                            for reference in ("observed", "true"):
                                value = true + (optimism if reference == "observed" else 0.0)
                                rows.append(
                                    {
                                        "dataset": dataset,
                                        "learner": learner,
                                        "seed": seed,
                                        "policy": policy,
                                        "fold": fold,
                                        "reference": reference,
                                        "estimator": "fading",
                                        "checkpoint": n,
                                        "time": start + 3600 * n,
                                        "seen": n,
                                        "evaluated": n - 10,
                                        "pending": 10,
                                        "skipped": 0,
                                        "trained": n - 10,
                                        "weight": float(n - 10),
                                        "evaluated_now": True,
                                        "cpu_seconds": 0.001 * n,
                                        "model_bytes": np.nan,
                                        "accuracy": value,
                                        "kappa": 2 * value - 1,
                                        "recall_1": value - 0.1,
                                        "gmean": value - 0.05,
                                        "brier": 1 - value,
                                        "fpr_1": 1 - value - 0.1,
                                    }
                                )
    table = pd.DataFrame(rows)
    for col in INT_COLUMNS:
        table[col] = table[col].astype("int64")
    return table[RUN_COLUMNS + METRIC_COLUMNS]


def long_table(values: dict, *, checkpoint: int = 1000, seeds=(1,), dataset="d") -> pd.DataFrame:
    """A per-fold table from ``{(policy, reference): [fold values of gmean]}`` (one learner ``ht``,
    one estimator); ``tp`` is gmean x 100 (a count-like metric); every seed gets the same values."""
    rows = []
    for (policy, reference), folds in values.items():
        for seed in seeds:
            for fold, value in enumerate(folds):
                rows.append(
                    {
                        "dataset": dataset,
                        "policy": policy,
                        "estimator": "fading",
                        "reference": reference,
                        "checkpoint": checkpoint,
                        "learner": "ht",
                        "seed": seed,
                        "fold": fold,
                        "time": 1_600_000_000 + checkpoint,
                        "gmean": value,
                        "tp": value * 100,
                    }
                )
    return pd.DataFrame(rows)


IDEAL = [0.80, 0.70, 0.90, 0.60]
HITL_OBSERVED = [0.70, 0.65, 0.70, 0.55]
HITL_TRUE = [0.78, 0.66, 0.88, 0.59]


def hand_table(seeds=(1,)) -> pd.DataFrame:
    return long_table(
        {
            ("ideal", "observed"): IDEAL,
            ("ideal", "true"): IDEAL,
            ("hitl_7d_90d", "observed"): HITL_OBSERVED,
            ("hitl_7d_90d", "true"): HITL_TRUE,
        },
        seeds=seeds,
    )


def two_streams() -> pd.DataFrame:
    """Dataset ``long`` with checkpoints 500 .. 3000, ``short`` with 500, 1000, 1200."""
    long = fold_table(datasets=("long",), folds=4, checkpoints=6, every=500)
    long["checkpoint"] = long["checkpoint"].replace({2993: 3000})
    short = fold_table(datasets=("short",), folds=4, checkpoints=3, every=500)
    short["checkpoint"] = short["checkpoint"].replace({1493: 1200})
    return pd.concat([long, short], ignore_index=True)
