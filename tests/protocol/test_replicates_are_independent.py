"""Replicates of the default study are independent: the tests pair folds x seeds distinct values.

The default config (config.yaml) has deterministic learners only (HoeffdingTree, GaussianNB,
StandardScaler | LogisticRegression), so before each seed drew its own bootstrap weights, seed 2
repeated seed 1 exactly and every test counted 10 pairs twice. These tests run the default study's
evaluations (one policy, every learner and seed) through the engine and the comparison stage as the
workflow does, and check the pairs the tests table used.
"""

from __future__ import annotations

import pandas as pd
import pytest

from delaycv.data.synthetic import generate_stream
from delaycv.metrics.effort_names import EFFORT_METRICS
from delaycv.stats.learner_tests import run_tests
from delaycv.study.loading import load_config
from delaycv.study.runs import (
    dataset_spec,
    estimator_spec,
    evaluation_options,
    learner_spec,
    policy_spec,
    validation_spec,
)
from tests.support.engine_runs import evaluate_dicts
from tests.support.paths import REPO

pytestmark = pytest.mark.slow

POLICY = "hitl_7d_90d"


@pytest.fixture(scope="module")
def default_config() -> dict:
    return load_config(REPO / "config.yaml", learners=False)


def merged_table(config: dict, *, fixed_split: bool) -> pd.DataFrame:
    stream = generate_stream(**dataset_spec(config, "default")["generate"])
    validation = {**validation_spec(config), "fixed_split": fixed_split}
    frames = []
    for learner in config["learners"]:
        for seed in config["seeds"]:
            result = evaluate_dicts(
                stream,
                learner_spec=learner_spec(config, learner),
                policy_spec=policy_spec(config, POLICY),
                validation_spec=validation,
                seed=seed,
                estimator_spec=estimator_spec(config),
                run_keys={"dataset": "default", "learner": learner, "policy": POLICY},
                progress=False,
                **evaluation_options(config),
            )
            frames.append(result.folds)
    return pd.concat(frames, ignore_index=True)


def last_tests(config: dict, table: pd.DataFrame) -> pd.DataFrame:
    settings = config["tests"]
    return run_tests(
        table,
        metrics=settings["metrics"],
        references=settings["references"],
        resamples=settings["resamples"],
        alpha=settings["alpha"],
        seed=settings["seed"],
        checkpoints="last",
    )


def test_the_default_study_tests_folds_times_seeds_distinct_pairs(default_config):
    folds = default_config["validation"]["folds"]
    seeds = default_config["seeds"]
    assert len(seeds) >= 2 and not default_config["validation"]["fixed_split"]
    table = merged_table(default_config, fixed_split=False)
    # every (learner, fold) of seed 2 differs from seed 1: the replicates are not copies
    final = table[table["checkpoint"] == table["checkpoint"].max()]
    by_seed = final.pivot_table(
        index=["learner", "reference", "fold"], columns="seed", values="gmean"
    )
    assert (by_seed[seeds[0]] != by_seed[seeds[1]]).mean() > 0.9
    tests = last_tests(default_config, table)
    n_learners = len(default_config["learners"])
    n_metrics = len(default_config["tests"]["metrics"])
    n_references = len(default_config["tests"]["references"])
    assert len(tests) == n_learners * (n_learners - 1) // 2 * n_references * n_metrics
    # the effort-aware measures have no corrected value: their rows on it say so, untested
    none = tests["metric"].isin(EFFORT_METRICS) & (tests["reference"] == "corrected")
    assert (tests.loc[none, "n"] == 0).all() and (tests.loc[none, "note"] != "").all()
    assert set(tests.loc[~none, "n"]) == {folds * len(seeds)}
    assert set(tests.loc[~none, "n_duplicates"]) == {0}


def test_a_fixed_split_makes_the_seeds_duplicates_and_they_are_tested_once(default_config):
    folds = default_config["validation"]["folds"]
    seeds = default_config["seeds"]
    table = merged_table(default_config, fixed_split=True)
    tests = last_tests(default_config, table)
    none = tests["metric"].isin(EFFORT_METRICS) & (tests["reference"] == "corrected")
    assert set(tests.loc[~none, "n"]) == {folds}
    assert set(tests.loc[~none, "n_duplicates"]) == {folds * (len(seeds) - 1)}
    # the same p-values as the tests of one seed alone: the copies add nothing
    one_seed = last_tests(default_config, table[table["seed"] == seeds[0]])
    keys = ["policy", "reference", "metric", "learner_a", "learner_b"]
    pd.testing.assert_series_equal(
        tests.sort_values(keys)["p_value"].reset_index(drop=True),
        one_seed.sort_values(keys)["p_value"].reset_index(drop=True),
    )
