"""The fold summary's t quantiles: the kept table is scipy's values bit for bit."""

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

from delaycv.engine.t_quantile import T975, t975
from delaycv.engine.tables import summarize


def test_the_table_is_scipy_bit_for_bit():
    df = np.arange(1, len(T975) + 1)
    assert t975(df).tolist() == special.stdtrit(df, 0.975).tolist()
    assert t975(df) == pytest.approx(stats.t.ppf(0.975, df), rel=1e-12)


def test_beyond_the_table_scipy_answers():
    df = np.array([1, 99, 100, 1000])
    assert t975(df).tolist() == special.stdtrit(df, 0.975).tolist()
    assert t975([]).size == 0


def test_degrees_of_freedom_below_one_are_refused():
    with pytest.raises(ValueError, match="at least 1, got 0"):
        t975([0, 3])


@pytest.mark.parametrize("folds", [2, 10, 101])
def test_summary_interval_uses_the_t_quantile(folds):
    values = np.linspace(0.1, 0.9, folds)
    table = pd.DataFrame(
        {
            "dataset": "d",
            "learner": "l",
            "seed": 1,
            "policy": "p",
            "reference": "true",
            "estimator": "none",
            "checkpoint": 1,
            "time": 0.0,
            "fold": np.arange(folds),
            "gmean": values,
        }
    )
    row = summarize(table).set_index("metric").loc["gmean"]
    half = stats.t.ppf(0.975, folds - 1) * values.std(ddof=1) / np.sqrt(folds)
    assert row["n_folds"] == folds
    assert row["ci_high"] - row["mean"] == pytest.approx(half, rel=1e-12)
    assert row["mean"] - row["ci_low"] == pytest.approx(half, rel=1e-12)
