"""Learner specs -> river objects; baselines with the MOA extension's conventions; weights;
errors."""

from __future__ import annotations

import sys

import pytest
from river import compose, dummy, forest, imblearn, linear_model, naive_bayes, preprocessing, tree

from delaycv.common.errors import ConfigError
from delaycv.engine.learners import make_learner
from delaycv.protocol.learner_contract import accepts_weight, trainer
from delaycv.protocol.learners import learner_label, resolve_class, validate_learner
from tests.support.engine_bruteforce import OrderLearner, WeightedOrderLearner


def test_names_resolve():
    assert resolve_class("tree.HoeffdingTreeClassifier") is tree.HoeffdingTreeClassifier
    assert resolve_class("river.tree.HoeffdingTreeClassifier") is tree.HoeffdingTreeClassifier
    assert resolve_class("NoChange") is dummy.NoChangeClassifier
    assert resolve_class("Prior") is dummy.PriorClassifier
    assert resolve_class("tests.support.engine_bruteforce:OrderLearner") is OrderLearner
    assert isinstance(make_learner("naive_bayes.GaussianNB"), naive_bayes.GaussianNB)


def test_names_that_name_no_class_say_why(tmp_path, monkeypatch):
    """A class of one's own in the working directory is found (the ``delaycv`` command and the
    workflow's jobs do not have it on Python's path); a name that names no class says why."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    (tmp_path / "own_learners.py").write_text(
        "from river import naive_bayes\n\n\nclass MyNB(naive_bayes.GaussianNB):\n    pass\n"
    )
    (tmp_path / "own_broken.py").write_text("import no_such_package_here\n")
    (tmp_path / "own_syntax.py").write_text("def f(:\n")
    assert resolve_class("own_learners:MyNB").__name__ == "MyNB"
    assert sys.path[-1] == str(tmp_path)
    cases = {
        "own_learners:Nope": "module own_learners has no class Nope",
        "own_broken:X": "its module own_broken fails to import (ModuleNotFoundError: No module "
        "named 'no_such_package_here')",
        "own_syntax:X": "its module own_syntax fails to import (SyntaxError: ",
        "no_such_module_here:X": "no module no_such_module_here on Python's path nor in the "
        "working directory",
        "tree.HoeffdingTreeClassifer": "module river.tree has no class HoeffdingTreeClassifer "
        "(did you mean HoeffdingTreeClassifier?)",
        "tree.HoeffdingTreeClassifier(grace_period=50)": "a class is named without a call, its "
        "parameters apart (expected the class's name alone, tree.HoeffdingTreeClassifier, and its "
        "parameters in the spec's params",
    }
    for name, why in cases.items():
        with pytest.raises(ConfigError) as err:
            resolve_class(name)
        assert f"unknown learner {name!r}: {why}" in str(err.value)


OWN_MODELS = """
import numbers

from river import compose, forest, linear_model, preprocessing

RATE = 3


def encoded_logistic(l2: float = 0.0):
    text = compose.SelectType(str) | preprocessing.OneHotEncoder()
    scaled = compose.SelectType(numbers.Number) | preprocessing.StandardScaler()
    return (text + scaled) | linear_model.LogisticRegression(l2=l2)


def small_forest(n_models: int = 3, seed: int | None = None):
    return forest.ARFClassifier(n_models=n_models, seed=seed)
"""


def test_a_function_of_one_s_own_that_returns_a_learner(tmp_path, monkeypatch):
    """What a list of steps cannot write (a union: one-hot encoded text beside scaled numbers,
    the recipe the errors about text give) is a function of one's own, named as a class is: its
    params checked against its signature, its seed given when it takes one; the recipe runs on a
    stream with a categorical feature."""
    import numpy as np
    import pandas as pd

    import delaycv
    from delaycv.protocol.learners import READS_TEXT, make_river_learner, takes_run_seed

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    (tmp_path / "own_models.py").write_text(OWN_MODELS)
    assert resolve_class("own_models:encoded_logistic").__name__ == "encoded_logistic"
    spec = {"class": "own_models:encoded_logistic", "params": {"l2": 0.01}}
    model = make_river_learner(spec, 1)
    assert model["LogisticRegression"].l2 == 0.01
    assert learner_label(spec) == "encoded_logistic"
    assert not takes_run_seed(spec)
    forest_spec = {"class": "own_models:small_forest", "params": {"n_models": 2}}
    assert make_river_learner(forest_spec, 7).seed == 7 and takes_run_seed(forest_spec)
    with pytest.raises(ConfigError, match="encoded_logistic has no parameter 'l1'"):
        make_river_learner({"class": "own_models:encoded_logistic", "params": {"l1": 1}}, 1)
    with pytest.raises(ConfigError, match="own_models.RATE is a int, not a class or a function"):
        resolve_class("own_models:RATE")
    # the recipe of the errors about text, on numbers beside a categorical feature
    assert "(compose.SelectType(str) | preprocessing.OneHotEncoder())" in READS_TEXT
    n = 600
    rng = np.random.default_rng(0)
    merchant = rng.choice(["fuel", "travel", "online"], n)
    amount = rng.normal(100, 30, n)
    label = ((merchant == "online") | (amount > 150)).astype(int)
    frame = pd.DataFrame({"time": np.arange(n), "label": label, "amount": amount})
    frame["merchant"] = pd.Categorical(merchant)
    result = delaycv.evaluate(frame, spec, time="time", folds=2, progress=False)
    gmean = result.summary.query("metric == 'gmean' and reference == 'true'")["mean"].iloc[-1]
    assert gmean > 0.9, gmean
    # the numbers scaled, the text one-hot encoded (not a column per amount)
    model.learn_one({"amount": 90.0, "merchant": "fuel"}, 0)
    model.learn_one({"amount": 110.0, "merchant": "online"}, 1)
    seen = model["TransformerUnion"].transform_one({"amount": 110.0, "merchant": "online"})
    assert seen == {"merchant_online": 1, "merchant_fuel": 0, "amount": 1.0}


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
        (  # an ensemble without its model: said before the class is called, and how to give it
            {"class": "ensemble.ADWINBaggingClassifier", "params": {"n_models": 3}},
            "key learner.params.model",
            [
                "ensemble.ADWINBaggingClassifier requires the parameter 'model'",
                "params: {model: {class: tree.HoeffdingTreeClassifier}} in a config",
                "--param model.class=tree.HoeffdingTreeClassifier on the command line",
            ],
        ),
        (
            {"class": "imblearn.RandomUnderSampler"},
            "key learner.params.classifier",
            ["requires the parameters 'classifier', 'desired_dist'", "{classifier: {class: "],
        ),
        (  # a required parameter that takes no learner: no word of learner specs
            {
                "class": "imblearn.RandomUnderSampler",
                "params": {"classifier": {"class": "tree.HoeffdingTreeClassifier"}},
            },
            "key learner.params.desired_dist",
            ["requires the parameter 'desired_dist' (expected params with 'desired_dist')"],
        ),
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


# --------------------------------------------------------------------------- MOA learners' specs


class CarriesASpec:
    """An object that carries a MOA spec, as a MoaClassifier does (``moa_spec``)."""

    moa_spec = {"moa": "trees.HoeffdingTree  -g 50", "seed": 3}

    def learn_one(self, x, y):  # (a learner object: its spec wins)
        pass


def test_a_moa_spec_is_read_in_any_form_into_one_normal_form():
    from delaycv.protocol.moa_spec import is_moa_spec, moa_label, moa_spec

    normal = {"moa": "trees.HoeffdingTree -g 50"}
    assert moa_spec("moa:trees.HoeffdingTree   -g 50") == normal
    assert moa_spec({"moa": " trees.HoeffdingTree\t-g 50 "}) == normal
    assert moa_spec(CarriesASpec()) == {**normal, "seed": 3}
    assert moa_spec({"moa": "x", "seed": -(2**31), "heap": 2**30}) == {
        "moa": "x",
        "seed": -(2**31),
        "heap": str(2**30),
    }
    assert [is_moa_spec(s) for s in ("moa:x", {"moa": "x"}, CarriesASpec(), "NoChange")] == [
        True,
        True,
        True,
        False,
    ]
    assert validate_learner("moa:trees.HoeffdingTree   -g 50") == normal
    assert learner_label(CarriesASpec()) == moa_label(normal) == "HoeffdingTree"


@pytest.mark.parametrize(
    ("spec", "where", "words"),
    [
        ({"moa": "x", "sead": 1}, "key learners.m.sead", "unknown key(s) sead of a MOA learner"),
        ({"moa": "  "}, "key learners.m.moa", "MOA learner '  '"),
        ({"moa": 3}, "key learners.m.moa", "MOA learner 3"),
        ({"moa": "x", "seed": True}, "key learners.m.seed", "seed True"),
        ({"moa": "x", "seed": 2**31}, "key learners.m.seed", "a Java int"),
        ({"moa": "x", "heap": "lots"}, "key learners.m.heap", "heap 'lots'"),
        ({"moa": "x", "heap": "8m"}, "key learners.m.heap", "less than a JVM with MOA runs with"),
    ],
)
def test_a_moa_spec_s_mistakes_name_the_key(spec, where, words):
    from delaycv.protocol.moa_spec import moa_spec

    with pytest.raises(ConfigError) as err:
        moa_spec(spec, "learners.m")
    assert err.value.location == where and words in str(err.value)


def test_reading_and_checking_a_moa_spec_imports_no_java():
    """protocol knows a MOA spec (and make_settings checks one) without importing delaycv.jvm or
    JPype: the JVM starts when the engine builds the learner."""
    import json
    import subprocess
    import sys

    code = (
        "import json, sys\n"
        "from delaycv.protocol.settings import make_settings\n"
        "s = make_settings(learner={'moa': 'meta.OzaBag  -s 3', 'heap': '1g'})\n"
        "print(json.dumps([s.learner, sorted(m for m in sys.modules if 'jpype' in m or\n"
        "                  m.startswith('delaycv.jvm') or m.startswith('delaycv.engine'))]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    learner, imported = json.loads(done.stdout)
    assert learner == {"moa": "meta.OzaBag -s 3", "heap": "1g"}
    assert imported == []
