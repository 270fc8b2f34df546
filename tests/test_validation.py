"""Validation schemes: weights by hand, bootstrap draws, per-fold independence, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from delaycv.errors import ConfigError
from delaycv.validation import (
    NOISE,
    Validation,
    fold_rng,
    learner_seed,
    make_validation,
    uniforms,
)


def test_cv_and_split_weights_by_hand():
    # n = 1..6, k = 3: n mod 3 == i selects n = 3, 6 for fold 0, n = 1, 4 for fold 1
    cv = Validation("cv", 3)
    assert cv.weights(0, 6).tolist() == [1, 1, 0, 1, 1, 0]
    assert cv.weights(1, 6).tolist() == [0, 1, 1, 0, 1, 1]
    split = Validation("split", 3)
    assert split.weights(1, 6).tolist() == [1, 0, 0, 1, 0, 0]
    assert split.weights(2, 6).tolist() == [0, 1, 0, 0, 1, 0]
    # every instance is trained by exactly k - 1 cv folds and exactly one split fold
    assert sum(cv.weights(f, 6) for f in range(3)).tolist() == [2] * 6
    assert sum(split.weights(f, 6) for f in range(3)).tolist() == [1] * 6
    assert Validation("prequential", 1).weights(0, 4).tolist() == [1, 1, 1, 1]


def test_bootstrap_is_poisson_one_per_fold_stream():
    v = Validation("bootstrap", 10, seed=7)
    w = v.weights(3, 200_000)
    assert w.dtype == np.int64
    assert abs(w.mean() - 1.0) < 0.01 and abs(w.var() - 1.0) < 0.02
    assert abs((w == 0).mean() - math.exp(-1)) < 0.005
    # the n-th draw of fold i's own stream: the same whichever other folds exist
    assert np.array_equal(Validation("bootstrap", 4, seed=7).weights(3, 1000), w[:1000])
    assert np.array_equal(w[:1000], fold_rng(7, 3).poisson(1.0, 1000))
    # folds and seeds differ
    assert not np.array_equal(v.weights(2, 1000), w[:1000])
    assert not np.array_equal(Validation("bootstrap", 10, seed=8).weights(3, 1000), w[:1000])


def test_random_streams_are_prefix_stable():
    # drawing n values then taking a prefix equals drawing the prefix (chunk independence)
    assert np.array_equal(uniforms(1, 2, NOISE, 10_000)[:777], uniforms(1, 2, NOISE, 777))
    assert np.array_equal(
        Validation("bootstrap", 3, 5).weights(1, 5000)[:1234],
        Validation("bootstrap", 3, 5).weights(1, 1234),
    )


def test_learner_seeds():
    seeds = {learner_seed(1, f) for f in range(10)}
    assert len(seeds) == 10
    assert learner_seed(1, 4) == learner_seed(1, 4)
    assert learner_seed(1, 4) != learner_seed(2, 4)
    assert {learner_seed(9, f, same=True) for f in range(5)} == {9}


@pytest.mark.parametrize(
    "spec, where",
    [
        ({"scheme": "cv", "folds": 0}, "key validation.folds"),
        ({"scheme": "cv", "folds": 1}, "key validation.folds"),
        ({"scheme": "bootstrap", "folds": 2.5}, "key validation.folds"),
        ({"scheme": "holdout"}, "key validation.scheme"),
        ({"scheme": "bootstrap", "seed": -1}, "key validation.seed"),
        ({"evaluate": "some"}, "key validation.evaluate"),
        ({"scheme": "cv", "fold": 3}, "key validation.fold"),
    ],
)
def test_bad_validation_names_the_key(spec, where):
    with pytest.raises(ConfigError) as err:
        make_validation(spec)
    assert err.value.location == where


def test_make_validation_defaults():
    v = make_validation({"scheme": "split", "folds": 4})
    assert (v.scheme, v.folds, v.seed, v.evaluate, v.trained_only) == ("split", 4, 1, "all", False)
    assert make_validation({"evaluate": "trained"}).trained_only
