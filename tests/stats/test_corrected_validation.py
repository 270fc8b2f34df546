"""The tables of benchmarks/corrected_validation.py that docs/corrected.md shows for automatic
labelling (``verification``) and for the spdisc files' maturity, on hand-made cells."""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest

from tests.support.paths import REPO


@pytest.fixture(scope="module")
def cv():
    spec = importlib.util.spec_from_file_location(
        "corrected_validation", REPO / "benchmarks" / "corrected_validation.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def merged(policy_values: dict[str, list[tuple[float, float, float]]], **extra) -> pd.DataFrame:
    """A merged fold table: per policy, one fold per (observed, true, corrected) triple, every
    metric the same values, at checkpoint 1000."""
    rows = []
    for policy, triples in policy_values.items():
        for fold, values in enumerate(triples):
            for reference, value in zip(("observed", "true", "corrected"), values, strict=True):
                rows.append(
                    {"dataset": "d", "learner": "ht", "seed": 1, "policy": policy, "fold": fold,
                     "reference": reference, "checkpoint": 1000, "gmean": value,
                     "recall_1": value, "fpr_1": value, **extra}
                )  # fmt: skip
    return pd.DataFrame(rows)


def test_the_verification_table_by_window_then_pooled(cv):
    table = merged(
        {
            # corrected between observed and true, on true, outside (beyond true), NaN
            "verification_90d": [(0.6, 0.4, 0.5), (0.6, 0.4, 0.4), (0.6, 0.4, 0.3)],
            "verification_7d": [(0.5, 0.5, 0.5), (0.7, 0.5, np.nan)],
            "hitl_7d_7d": [(0.9, 0.1, 0.1)],  # not automatic labelling: left out
        }
    )
    cells = cv.verification_cells(table, "s")
    assert set(cells["policy"]) == {"verification_90d", "verification_7d"}
    out = cv.verification_table(cells)
    gmean = out[out["metric"] == "gmean"].set_index("W")
    assert list(gmean.index) == ["7d", "90d", "pooled"]  # by the window's length, not its text
    assert gmean.loc["90d", "between (%)"] == pytest.approx(200 / 3)
    assert gmean.loc["90d", "worse (%)"] == 0  # |0.3 - 0.4| = |0.6 - 0.4| / 2: not worse
    assert gmean.loc["90d", "mean corr - true"] == pytest.approx(0.0)
    assert gmean.loc["7d", "cells"] == 1 and gmean.loc["7d", "no estimate (%)"] == 50
    assert gmean.loc["pooled", "cells"] == 4
    assert gmean.loc["pooled", "between (%)"] == 75  # the NaN cell counts in neither


def test_the_maturity_bands_count_years_before_the_end_of_each_file(cv):
    year = cv.YEAR
    years = pd.Series([0.0, 0.999, 1.0, 2.5, 3.0, 40.0])
    assert [str(b) for b in cv._year_bands(years)] == [
        "0-1 y", "0-1 y", "1-2 y", "2-3 y", ">= 3 y", ">= 3 y",
    ]  # fmt: skip
    table = pd.concat(
        [
            merged({"verification_90d": [(0.5, 0.4, 0.45)]}, time=10 * year).assign(dataset=d)
            for d in ("a", "b")
        ],
        ignore_index=True,
    )
    late = table[table["dataset"] == "b"].assign(checkpoint=2000, time=14.5 * year)
    ideal = table.assign(policy="ideal", time=100 * year)  # another policy: not in the cells
    cells = cv.maturity_cells(pd.concat([table, late, ideal]))
    bands = cells.groupby(["dataset", "checkpoint"])["band"].first().astype(str).to_dict()
    # a's end is its own last checkpoint; b's last one lies 4.5 years after its first
    assert bands == {("a", 1000): "0-1 y", ("b", 1000): ">= 3 y", ("b", 2000): "0-1 y"}
