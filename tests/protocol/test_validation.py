"""Validation schemes: weights by hand, bootstrap draws, per-fold independence, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from delaycv.common.errors import ConfigError
from delaycv.protocol.validation import (
    BOOTSTRAP,
    INSPECTION,
    NOISE,
    Validation,
    fold_rng,
    generator,
    learner_seed,
    make_validation,
    uniforms,
)


def test_cv_and_split_weights_by_hand():
    # n = 1..6, k = 3: n mod 3 == i selects n = 3, 6 for fold 0, n = 1, 4 for fold 1
    cv = Validation("cv", 3)
    assert cv.weights(0, 6, 1).tolist() == [1, 1, 0, 1, 1, 0]
    assert cv.weights(1, 6, 1).tolist() == [0, 1, 1, 0, 1, 1]
    split = Validation("split", 3)
    assert split.weights(1, 6, 1).tolist() == [1, 0, 0, 1, 0, 0]
    assert split.weights(2, 6, 1).tolist() == [0, 1, 0, 0, 1, 0]
    # every instance is trained by exactly k - 1 cv folds and exactly one split fold
    assert sum(cv.weights(f, 6, 1) for f in range(3)).tolist() == [2] * 6
    assert sum(split.weights(f, 6, 1) for f in range(3)).tolist() == [1] * 6
    assert Validation("prequential", 1).weights(0, 4, 1).tolist() == [1, 1, 1, 1]
    # no random draw: every run seed (replicate) gets the same weights
    for v in (cv, split, Validation("prequential", 2), Validation("cv", 3, fixed_split=True)):
        for f in range(v.folds):
            assert v.weights(f, 30, 1).tolist() == v.weights(f, 30, 2).tolist()


def test_bootstrap_is_poisson_one_per_fold_stream():
    v = Validation("bootstrap", 10, seed=7)
    w = v.weights(3, 200_000, 1)
    assert w.dtype == np.int64
    assert abs(w.mean() - 1.0) < 0.01 and abs(w.var() - 1.0) < 0.02
    assert abs((w == 0).mean() - math.exp(-1)) < 0.005
    # the n-th draw of fold i's own stream: the same whichever other folds exist
    assert np.array_equal(Validation("bootstrap", 4, seed=7).weights(3, 1000, 1), w[:1000])
    # entropy (validation seed, run seed, fold, BOOTSTRAP)
    assert np.array_equal(w[:1000], generator(7, 1, 3, BOOTSTRAP).poisson(1.0, 1000))
    assert w[:20].tolist() == [2, 0, 0, 3, 0, 1, 4, 2, 2, 0, 1, 1, 0, 0, 0, 1, 2, 2, 0, 1]
    # folds, validation seeds and run seeds differ
    assert not np.array_equal(v.weights(2, 1000, 1), w[:1000])
    assert not np.array_equal(Validation("bootstrap", 10, seed=8).weights(3, 1000, 1), w[:1000])
    assert not np.array_equal(v.weights(3, 1000, 2), w[:1000])


def test_every_replicate_draws_its_own_bootstrap_weights():
    v = Validation("bootstrap", 3, seed=1)
    drawn = {(s, f): v.weights(f, 500, s) for s in range(5) for f in range(3)}
    assert len({w.tobytes() for w in drawn.values()}) == len(drawn)
    # the bootstrap stream is none of the run's other streams, even when validation seed ==
    # run seed (SeedSequence pads entropy with zeros: (1, 1, 1) would be noise (1, 1, NOISE))
    for s in range(3):
        for f in range(3):
            for purpose in (NOISE, INSPECTION):
                other = fold_rng(s, f, purpose).poisson(1.0, 500)
                assert not any(np.array_equal(w, other) for w in drawn.values())


def test_fixed_split_gives_every_replicate_the_validation_seeds_weights():
    v = Validation("bootstrap", 4, seed=7, fixed_split=True)
    for f in range(4):
        w = v.weights(f, 1000, 0)
        assert all(np.array_equal(v.weights(f, 1000, s), w) for s in (1, 2, 99))
        # entropy (validation seed, fold): the weights of every run before replicates
        assert np.array_equal(w, fold_rng(7, f).poisson(1.0, 1000))
    # the first weights of fold 3, as every earlier version of delaycv drew them
    old = [2, 1, 2, 2, 0, 0, 0, 3, 0, 2, 0, 1, 1, 2, 0, 1, 2, 2, 1, 2]
    assert v.weights(3, 20, 5).tolist() == old
    assert not np.array_equal(
        v.weights(3, 1000, 1), Validation("bootstrap", 4, 7).weights(3, 1000, 1)
    )


def test_random_streams_are_prefix_stable():
    # drawing n values then taking a prefix equals drawing the prefix (chunk independence)
    assert np.array_equal(uniforms(1, 2, NOISE, 10_000)[:777], uniforms(1, 2, NOISE, 777))
    for fixed in (False, True):
        v = Validation("bootstrap", 3, 5, fixed_split=fixed)
        assert np.array_equal(v.weights(1, 5000, 2)[:1234], v.weights(1, 1234, 2))


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
        ({"scheme": "bootstrap", "fixed_split": "yes"}, "key validation.fixed_split"),
        ({"scheme": "bootstrap", "fixed_split": 1}, "key validation.fixed_split"),
    ],
)
def test_bad_validation_names_the_key(spec, where):
    with pytest.raises(ConfigError) as err:
        make_validation(spec)
    assert err.value.location == where


def test_make_validation_defaults():
    v = make_validation({"scheme": "split", "folds": 4})
    assert (v.scheme, v.folds, v.seed, v.evaluate, v.trained_only) == ("split", 4, 1, "all", False)
    assert v.fixed_split is False
    assert make_validation({"evaluate": "trained"}).trained_only
    assert make_validation({"scheme": "bootstrap", "fixed_split": True}).fixed_split


def test_weights_need_a_valid_run_seed():
    v = Validation("bootstrap", 2)
    for bad in (-1, 1.5, None):
        with pytest.raises(ConfigError) as err:
            v.weights(0, 10, bad)
        assert err.value.location == "key seed"
