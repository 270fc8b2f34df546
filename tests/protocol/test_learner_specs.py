"""Learner specs -> river objects; baselines with the MOA extension's conventions; weights;
errors."""

from __future__ import annotations

import pytest
from river import compose, dummy, forest, imblearn, linear_model, naive_bayes, preprocessing, tree

from delaycv.common.errors import ConfigError
from delaycv.protocol.learner_contract import accepts_weight, trainer
from delaycv.protocol.learners import learner_label, make_learner, resolve_class, validate_learner
from tests.support.engine_bruteforce import OrderLearner, WeightedOrderLearner


def test_names_resolve():
    assert resolve_class("tree.HoeffdingTreeClassifier") is tree.HoeffdingTreeClassifier
    assert resolve_class("river.tree.HoeffdingTreeClassifier") is tree.HoeffdingTreeClassifier
    assert resolve_class("NoChange") is dummy.NoChangeClassifier
    assert resolve_class("Prior") is dummy.PriorClassifier
    assert resolve_class("tests.support.engine_bruteforce:OrderLearner") is OrderLearner
    assert isinstance(make_learner("naive_bayes.GaussianNB"), naive_bayes.GaussianNB)


def test_params_pipelines_nested_specs_and_seeds():
    ht = make_learner({"class": "tree.HoeffdingTreeClassifier", "params": {"grace_period": 50}})
    assert ht.grace_period == 50
    pipe = make_learner(
        {
            "pipeline": [
                {"class": "preprocessing.StandardScaler"},
                {"class": "linear_model.LogisticRegression", "params": {"l2": 0.1}},
            ]
        }
    )
    assert isinstance(pipe, compose.Pipeline)
    steps = list(pipe.steps.values())
    assert isinstance(steps[0], preprocessing.StandardScaler)
    assert isinstance(steps[1], linear_model.LogisticRegression) and steps[1].l2 == 0.1
    wrapped = make_learner(
        {
            "class": "imblearn.RandomUnderSampler",
            "params": {
                "classifier": {"class": "tree.HoeffdingTreeClassifier"},
                "desired_dist": {"0": 0.5, "1": 0.5},
            },
        },
        seed=11,
    )
    assert isinstance(wrapped, imblearn.RandomUnderSampler)
    assert isinstance(wrapped.classifier, tree.HoeffdingTreeClassifier)
    assert wrapped.desired_dist == {0: 0.5, 1: 0.5}  # class keys as the int labels
    assert wrapped.seed == 11
    arf = make_learner({"class": "forest.ARFClassifier", "params": {"n_models": 3}}, seed=5)
    assert isinstance(arf, forest.ARFClassifier) and arf.seed == 5
    own = make_learner({"class": "forest.ARFClassifier", "params": {"seed": 2}}, seed=5)
    assert own.seed == 2  # the user's seed wins
    assert make_learner("tests.support.engine_bruteforce:OrderLearner", seed=8).seed == 8


def test_same_seed_same_learner_different_seed_differs():
    x = [{"a": float(i % 7), "b": float(i % 3)} for i in range(300)]
    y = [int(i % 7 > 3) for i in range(300)]

    def run(seed):
        m = make_learner({"class": "forest.ARFClassifier", "params": {"n_models": 3}}, seed=seed)
        out = []
        for xi, yi in zip(x, y, strict=True):
            out.append(m.predict_proba_one(xi).get(1, 0.0))
            m.learn_one(xi, yi)
        return out

    assert run(3) == run(3)
    assert run(3) != run(4)


def test_baselines_follow_the_moa_extension():
    """NoChange predicts the last training label (negative before any); Prior the majority,
    ties and no training negative -- read with P(1) > 0.5, empty dict = 0.5."""

    def p1(model):
        proba = model.predict_proba_one({})
        total = sum(proba.values())
        return proba.get(1, 0.0) / total if proba and total > 0 else 0.5

    nc = make_learner("NoChange")
    preds = []
    for y in [1, 1, 0, 1, 0, 0]:
        preds.append(int(p1(nc) > 0.5))
        nc.learn_one({}, y)
    assert preds == [0, 1, 1, 0, 1, 0]
    prior = make_learner("Prior")
    preds = []
    for y in [1, 0, 1, 1, 0, 0, 0]:
        preds.append(int(p1(prior) > 0.5))
        prior.learn_one({}, y)
    # counts before each: (0,0) (1 pos) (1,1) (2 pos,1) (3,1) (3,2) (3,3)
    assert preds == [0, 1, 0, 1, 1, 1, 0]


def test_trainer_weights():
    plain = OrderLearner()
    train = trainer(plain)
    assert not accepts_weight(plain)
    x = {"idx": 4.0, "a": 0.5}
    train(x, 1, 3)
    train(x, 0, 0)
    train(x, 0, 1)
    assert plain.calls == [("learn", 4, 1, 1)] * 3 + [("learn", 4, 0, 1)]
    weighted = WeightedOrderLearner()
    assert accepts_weight(weighted)
    train = trainer(weighted)
    train(x, 1, 3)
    train(x, 1, 1)
    train(x, 1, 0)
    assert weighted.calls == [("learn", 4, 1, 3), ("learn", 4, 1, 1.0)]
    assert accepts_weight(tree.HoeffdingTreeClassifier())
    assert not accepts_weight(naive_bayes.GaussianNB())


@pytest.mark.parametrize(
    "spec, where, words",
    [
        ({"class": "tree.NoSuchTree"}, "key learner.class", ["tree.NoSuchTree"]),
        ({"class": "nosuchpkg.mod:Cls"}, "key learner.class", ["nosuchpkg.mod:Cls"]),
        (
            {"class": "tree.HoeffdingTreeClassifier", "params": {"gracee": 1}},
            "key learner.params.gracee",
            ["HoeffdingTreeClassifier", "gracee"],
        ),
        (
            {"class": "forest.ARFClassifier", "params": {"n_models": "x"}},
            "key learner.params.n_models",
            ["forest.ARFClassifier", "n_models='x'", "wrong type", "an integer"],
        ),
        (
            {"class": "tree.HoeffdingTreeClassifier", "params": {"grace_period": -5}},
            "key learner.params.grace_period",
            ["tree.HoeffdingTreeClassifier", "grace_period=-5", "out of range", ">= 1"],
        ),
        (
            {"class": "tree.HoeffdingTreeClassifier", "params": {"delta": 2.0}},
            "key learner.params.delta",
            ["delta=2.0", "out of range", "(0, 1)"],
        ),
        (
            {"class": "tree.HoeffdingTreeClassifier", "params": {"split_criterion": "gain"}},
            "key learner.params.split_criterion",
            ["split_criterion='gain'", "gini, info_gain, hellinger"],
        ),
        (
            {"class": "linear_model.LogisticRegression", "params": {"l2": "strong"}},
            "key learner.params.l2",
            ["LogisticRegression", "l2='strong'", "a number"],
        ),
        ({"class": "preprocessing.StandardScaler"}, "key learner", ["not a classifier"]),
        ({"klass": "NoChange"}, "key learner.klass", ["klass"]),
        ({"pipeline": []}, "key learner.pipeline", ["pipeline"]),
        ({"class": "NoChange", "params": [1]}, "key learner.params", ["NoChange"]),
    ],
)
def test_bad_specs_fail_with_the_learner_name(spec, where, words):
    with pytest.raises(ConfigError) as err:
        validate_learner(spec)
    assert err.value.location == where
    for word in words:
        assert word in str(err.value)


def test_labels():
    assert learner_label({"class": "tree.HoeffdingTreeClassifier"}) == "HoeffdingTreeClassifier"
    assert learner_label("NoChange") == "NoChange"
    assert (
        learner_label({"class": "tests.support.engine_bruteforce:OrderLearner"}) == "OrderLearner"
    )
    spec = {
        "pipeline": [{"class": "preprocessing.StandardScaler"}, {"class": "naive_bayes.GaussianNB"}]
    }
    assert learner_label(spec) == "StandardScaler|GaussianNB"
