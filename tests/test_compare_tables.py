"""Synthetic per-fold checkpoint tables with the columns of docs/architecture.md (for the comparison
and figure tests, before/without running the engine)."""

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


def test_synthetic_table_has_the_contract_columns_and_one_row_per_key():
    table = fold_table(seeds=(1, 2), folds=3, checkpoints=4)
    assert list(table.columns[: len(RUN_COLUMNS)]) == RUN_COLUMNS
    keys = ["dataset", "learner", "seed", "policy", "fold", "reference", "checkpoint"]
    assert not table.duplicated(keys).any()
    # 3 learners x 2 policies x 2 seeds x 3 folds x 4 checkpoints x 2 references
    assert len(table) == 3 * 2 * 2 * 3 * 4 * 2
    last = table["checkpoint"].max()
    assert last == 4 * 500 - 7
    assert table["time"].dtype == "int64"
