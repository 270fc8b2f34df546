"""Learners that never give a usable probability, and a learner that raises mid-run: one line naming the learner, the fold and the instance; a learner that never
gave a probability in a whole fold is a warning (stderr, the log, ``run.json``).

Every engine test runs both fold loops (the compiled one where it is built, and the Python one),
which must agree: on the errors, and bit for bit on the numbers of every answer they accept.
"""

from __future__ import annotations

import inspect
import json
import logging
import math
import re
from collections import Counter
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import delaycv
from delaycv.cli import main
from delaycv.common.errors import ConfigError
from delaycv.data.stream_file import write_stream
from delaycv.data.synthetic import generate_stream
from delaycv.engine import compiled
from delaycv.protocol.learner_contract import UnusableProbability, positive_probability
from delaycv.protocol.validation import learner_seed
from tests.support.engine_bruteforce import random_stream
from tests.support.engine_runs import evaluate

# --------------------------------------------------------------------------- learners


class Fixed:
    """A classifier that answers ``answer`` from its ``start``-th prediction on (before: P(1) of
    a running share of positives); ``learn_one`` counts the positives."""

    answer: object = None
    start = 100

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.calls = self.n = self.pos = 0

    def predict_proba_one(self, x):
        self.calls += 1
        if self.calls >= self.start:
            return self.answer
        p = (self.pos + 1) / (self.n + 2)
        return {0: 1 - p, 1: p}

    def learn_one(self, x, y):
        self.n += 1
        self.pos += y


class NoneLater(Fixed):
    answer = None


class NanLater(Fixed):
    answer = {0: math.nan, 1: math.nan}


class YesNoLater(Fixed):
    answer = {"no": 0.2, "yes": 0.8}


class OutsideLater(Fixed):
    answer = {0: -0.4, 1: 1.4}


class TooLargeLater(Fixed):
    answer = {0: 0.5, 1: 1.5}


class ThreeClassesLater(Fixed):
    answer = {0: 0.2, 1: 0.3, 2: 0.5}


class ListLater(Fixed):
    answer = [0.3, 0.7]


class TextLater(Fixed):
    answer = {0: "low", 1: "high"}


class NaNOnlyOneLater(Fixed):
    answer = {1: math.nan}


class NoneFromTheStart(Fixed):
    start = 1
    answer = None


class YesNoFromTheStart(Fixed):
    start = 1
    answer = {"no": 0.2, "yes": 0.8}


class Never(Fixed):
    """Gives no probability, ever (an empty dict)."""

    start = 1
    answer: object = {}


class Zeros(Fixed):
    """Gives zeros, ever: no probability either."""

    start = 1
    answer = {0: 0.0, 1: 0.0}


class NeverWithSomeSeeds(Fixed):
    """An empty dict for every prediction when its seed is even, else a share of positives."""

    start = 10**9

    def predict_proba_one(self, x):
        if self.seed % 2 == 0:
            return {}
        return super().predict_proba_one(x)


class Always(Fixed):
    """A probability at every prediction (the running share of positives)."""

    start = 10**9


class OnceOnly(Fixed):
    """A probability at its first prediction only: not a fold without probability, but a share
    of predictions without one far above a tenth."""

    start = 2
    answer: object = {}


class RaisesLater(Fixed):
    """Raises, with a message of two lines, at its 250th training call."""

    start = 10**9

    def learn_one(self, x, y):
        super().learn_one(x, y)
        if self.n == 250:
            raise ValueError("cannot split\non this stream")


class RiverRaisesLater(Fixed):
    """Its 250th training call gives river's running mean a text: river raises, in its file."""

    start = 10**9

    def learn_one(self, x, y):
        super().learn_one(x, y)
        if self.n == 250:
            from river import stats

            stats.Mean().update("text")


class ManyForms(Fixed):
    """Every form of a usable answer, in turn (the same P(1) written differently, ints, numpy
    scalars, a Counter, booleans as keys, no probability): what both loops must read alike."""

    def predict_proba_one(self, x):
        self.calls += 1
        p = (self.pos + 1) / (self.n + 2)
        q = 1 - p
        forms = (
            {0: q, 1: p},
            {1: p, 0: q},
            {False: q, True: p},
            Counter({0: q, 1: p}),
            {0: np.float32(q), 1: np.float32(p)},
            {np.int64(0): q, np.int64(1): p},
            {0: 0.0, 1: 1},
            {0: 1},
            {1: p},
            {0: Decimal("0.25"), 1: Decimal("0.75")},
            {},
            {0: 0.0, 1: 0.0},
            {0: q * 0.5, 1: p * 0.5},
            {0: 1.0, 1: 1.0},
            {1.0: p, 0.0: q},
        )
        return forms[self.calls % len(forms)]


@pytest.fixture(params=["compiled", "python"])
def either_loop(request, monkeypatch):
    """Each test twice: with the compiled loop (skipped where it is not built) and the Python."""
    if request.param == "python":
        monkeypatch.setattr(compiled, "LOOP", None)
    elif compiled.LOOP is None:
        pytest.skip(compiled.status())
    return request.param


def spec(cls) -> dict:
    return {"class": f"tests.engine.test_unusable_learners:{cls.__name__}"}


# --------------------------------------------------------------------------- the rule


@pytest.mark.parametrize(
    "answer, p1",
    [
        ({0: 0.25, 1: 0.75}, 0.75),
        ({False: 0.9, True: 0.1}, 0.1),
        (Counter({1: 0.5, 0: 0.5}), 0.5),
        ({0: 0.0, 1: 1}, 1.0),
        ({0: 1}, 0.0),
        ({np.int64(1): 0.3, 0: 0.7}, 0.3),
        ({0: 0.2, 1: 0.2}, 0.5),  # the engine normalises by the sum
        ({}, None),
        ({0: 0.0, 1: 0.0}, None),
    ],
)
def test_usable_answers(answer, p1):
    got = positive_probability(answer)
    assert got == p1 and (got is None or type(got) is float)


@pytest.mark.parametrize(
    "answer, words",
    [
        (None, "returned None"),
        ([0.3, 0.7], "returned a list: [0.3, 0.7]"),
        (0.7, "returned a float: 0.7"),
        ({"no": 0.2, "yes": 0.8}, "returned the key 'no'"),
        ({"0": 0.2, "1": 0.8}, "returned the key '0'"),
        ({0: 0.2, 1: 0.3, 2: 0.5}, "returned the key 2"),
        ({0: math.nan, 1: math.nan}, "returned nan for the label 0"),
        ({1: math.inf}, "returned inf for the label 1"),
        ({0: -0.4, 1: 1.4}, "returned -0.4 for the label 0"),
        ({0: 0.5, 1: 1.5}, "returned 1.5 for the label 1"),
        ({0: "low"}, "returned 'low' for the label 0"),
        ({0: None}, "returned None for the label 0"),
        ({0: Decimal("0.5"), 1: 0.5}, "values that cannot be added"),
    ],
)
def test_unusable_answers_say_what_was_returned(answer, words):
    with pytest.raises(UnusableProbability, match=None) as info:
        positive_probability(answer, 17)
    assert words in str(info.value) and info.value.instance == 17
    assert "\n" not in str(info.value)


# --------------------------------------------------------------------------- the engine


@pytest.mark.parametrize(
    "cls, words",
    [
        (NoneLater, "returned None"),
        (NanLater, "returned nan for the label 0 ({0: nan, 1: nan})"),
        (YesNoLater, "returned the key 'no' ({'no': 0.2, 'yes': 0.8}): the engine's labels"),
        (OutsideLater, "returned -0.4 for the label 0"),
        (TooLargeLater, "returned 1.5 for the label 1"),
        (ThreeClassesLater, "returned the key 2"),
        (ListLater, "returned a list: [0.3, 0.7]"),
        (TextLater, "returned 'low' for the label 0"),
        (NaNOnlyOneLater, "returned nan for the label 1"),
    ],
)
def test_an_unusable_answer_names_the_learner_fold_and_instance(either_loop, cls, words):
    stream = generate_stream(rows=600, seed=5)
    policy = {"preset": "hitl", "pos_window": "1d", "neg_window": "30d"}
    with pytest.raises(ConfigError) as info:
        evaluate(stream, spec(cls), policy, {"scheme": "bootstrap", "folds": 2}, every=100)
    text = str(info.value)
    assert text.startswith(
        f"key learner: the learner {cls.__name__} gave no usable probability on fold 0 at "
        f"instance 100: its predict_proba_one {words}"
    ), text
    assert "(expected a dict keyed by the labels 0 and 1, or False and True" in text
    assert "\n" not in text


def test_both_loops_read_every_usable_answer_alike(monkeypatch):
    if compiled.LOOP is None:
        pytest.skip(compiled.status())
    stream = generate_stream(rows=1500, seed=5)
    policy = {"preset": "hitl", "pos_window": "1d", "neg_window": "30d"}
    kwargs = dict(
        validation={"scheme": "bootstrap", "folds": 2},
        every=100,
        threshold=0.3,  # float32 values compare as doubles in both loops
        keep_predictions=True,
        timing=False,
    )
    fast = evaluate(stream, spec(ManyForms), policy, **kwargs)
    monkeypatch.setattr(compiled, "LOOP", None)
    slow = evaluate(stream, spec(ManyForms), policy, **kwargs)
    pd.testing.assert_frame_equal(fast.folds, slow.folds, check_exact=True)
    pd.testing.assert_frame_equal(fast.predictions, slow.predictions, check_exact=True)
    assert fast.info["folds"] == slow.info["folds"]
    # the two answers without probability of every 15 predictions read as 0.5, and counted
    assert [f["no_probability"] for f in fast.info["folds"]] == [200, 200]
    proba = fast.predictions["proba"].to_numpy()
    assert ((proba >= 0) & (proba <= 1)).all() and (proba == 0.5).sum() >= 400


def test_a_learner_that_never_gives_a_probability_is_a_warning(either_loop, caplog):
    stream = generate_stream(rows=700, seed=5)
    with caplog.at_level(logging.WARNING, logger="delaycv.engine"):
        result = evaluate(stream, spec(Never), "ideal", {"scheme": "bootstrap", "folds": 3})
    expected = (
        "the learner Never never gave a probability in folds 0, 1, 2: its predict_proba_one "
        "returned an empty dict (or zeros) for all 700 instances, each read as P(1) = 0.5 "
        "(negative at threshold 0.5): the metrics there measure no model"
    )
    assert result.info["warnings"] == [expected]
    assert [r.getMessage() for r in caplog.records] == [expected]
    assert [f["no_probability"] for f in result.info["folds"]] == [700] * 3
    zeros = evaluate(stream, spec(Zeros), "ideal", {"scheme": "split", "folds": 2}, threshold=0.2)
    assert zeros.info["warnings"] == [
        expected.replace("Never", "Zeros")
        .replace("folds 0, 1, 2", "folds 0, 1")
        .replace("negative at threshold 0.5", "positive at threshold 0.2")
    ]


def test_the_warning_names_only_the_folds_without_probability(either_loop):
    stream = generate_stream(rows=400, seed=5)
    result = evaluate(stream, spec(NeverWithSomeSeeds), "ideal", {"scheme": "cv", "folds": 4})
    never = [f for f in range(4) if learner_seed(1, f, False) % 2 == 0]
    assert 0 < len(never) < 4, "the seeds give no mixture: pick another run seed"
    named = "fold" if len(never) == 1 else "folds"
    assert result.info["warnings"][0].startswith(
        f"the learner NeverWithSomeSeeds never gave a probability in {named} "
        f"{', '.join(map(str, never))}:"
    )
    counts = [f["no_probability"] for f in result.info["folds"]]
    assert [f for f in range(4) if counts[f] == 400] == never


def test_one_probability_in_a_fold_is_warned_about_by_its_share(either_loop):
    """Not a fold that never gave a probability, but 299 of its 300 predictions without one:
    the warning says the share (it fired only at 100 % before)."""
    result = evaluate(generate_stream(rows=300, seed=5), spec(OnceOnly), "ideal", {"folds": 2})
    assert [f["no_probability"] for f in result.info["folds"]] == [299, 299]
    assert result.info["no_probability_share"] == 299 / 300
    assert result.info["warnings"] == [
        "the learner OnceOnly gave no probability for 99.7% of its predictions (99.7% to 99.7% by "
        "fold; a run warns above 10%): its predict_proba_one returned an empty dict (or zeros; a "
        "MOA learner: no votes, or all zero), each read as P(1) = 0.5 (negative at threshold "
        "0.5): the metrics measure no model there (run.json's no_probability_share, the report's "
        "runs page)"
    ]
    always = evaluate(generate_stream(rows=300, seed=5), spec(Always), "ideal", {"folds": 2})
    assert always.info["warnings"] == [] and always.info["no_probability_share"] == 0.0


def test_a_learner_that_raises_is_named_with_its_instance_on_one_line(either_loop, monkeypatch):
    """... and where it raised: a file of the working directory relative to it (a learner of
    one's own), an installed library's from its package."""
    monkeypatch.chdir(Path(__file__).parents[2])
    line = inspect.getsourcelines(RaisesLater.learn_one)[1] + 3
    stream = generate_stream(rows=600, seed=5)
    with pytest.raises(ConfigError) as info:
        evaluate(stream, spec(RaisesLater), "ideal", {"scheme": "prequential"}, every=100)
    text = str(info.value)
    assert text == (
        "key learner: the learner RaisesLater failed on fold 0 while processing instances "
        "1..600 (at instance 250): ValueError: cannot split on this stream (raised at "
        f"tests/engine/test_unusable_learners.py:{line}, in learn_one) (expected a learner "
        "whose parameters work on this stream)"
    )
    with pytest.raises(ConfigError) as info:
        evaluate(stream, spec(RiverRaisesLater), "ideal", {"scheme": "prequential"}, every=100)
    assert re.search(
        r"TypeError: .* \(raised at river/stats/mean\.py:\d+, in update\)", str(info.value)
    )


def test_a_learner_that_cannot_read_text_is_told_what_reads_a_categorical_feature():
    """river's GaussianNB on a stream with a categorical feature (found on a stream of card
    transactions): the error says what reads text, before any work (the trial run) and during
    one (the fold loop, as a workflow job meets it)."""
    from delaycv.engine.folds import learner_expected
    from delaycv.protocol.learners import READS_TEXT

    frame = pd.DataFrame(
        {"time": np.arange(60), "label": [0, 1, 1] * 20, "amount": np.arange(60) / 7.0}
    )
    frame["merchant"] = pd.Categorical(["fuel", "travel", "online"] * 20)
    with pytest.raises(ConfigError) as info:
        delaycv.evaluate(frame, "naive_bayes.GaussianNB", time="time", progress=False)
    text = str(info.value)
    assert "fails on the first instances of the stream: TypeError:" in text, text
    assert "a text value reached its arithmetic: a categorical feature's values are text" in text
    assert "(compose.SelectType(str) | preprocessing.OneHotEncoder())" in text
    # the fold loop's error says the same; any other error keeps the plain words
    hint = learner_expected(TypeError("unsupported operand type(s) for -: 'str' and 'float'"))
    assert hint.endswith(f"which takes {READS_TEXT}")
    plain = "a learner whose parameters work on this stream"
    assert learner_expected(TypeError("'<' not supported between 'int' and 'NoneType'")) == plain
    assert learner_expected(ValueError("str")) == plain
    # a learner that reads text runs
    delaycv.evaluate(frame, "tree.HoeffdingTreeClassifier", time="time", progress=False)


# --------------------------------------------------------------------------- real data


@pytest.fixture(scope="module")
def brackets():
    from delaycv.data.convert import load_stream
    from tests.support.paths import shared_file

    path = shared_file("commit_guru_dataset/cut2years/0_brackets.arff")
    return load_stream(path, preset="commit-guru")


def test_on_a_real_stream(either_loop, brackets):
    n = len(brackets)
    policy = {"preset": "hitl", "pos_window": "7d", "neg_window": "90d"}
    validation = {"scheme": "bootstrap", "folds": 2}
    with pytest.raises(ConfigError, match=r"YesNoLater gave no usable probability on fold 0 at "):
        evaluate(brackets, spec(YesNoLater), policy, validation, every=2000)
    result = evaluate(brackets, spec(Never), policy, validation, every=2000, timing=False)
    assert result.info["warnings"][0].startswith(
        f"the learner Never never gave a probability in folds 0, 1: its predict_proba_one "
        f"returned an empty dict (or zeros) for all {n} instances"
    )
    # scored as it says: every prediction 0.5, negative
    last = result.folds[(result.folds["checkpoint"] == n) & (result.folds["reference"] == "true")]
    assert (last["tp"] == 0).all() and (last["fp"] == 0).all()


# --------------------------------------------------------------------------- as a user sees it


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_stream(random_stream(np.random.default_rng(3), 600), tmp_path / "s.parquet")
    return tmp_path


def run_cli(learner, *extra):
    argv = ["evaluate", "s.parquet", "--learner", f"tests.engine.test_unusable_learners:{learner}"]
    return main([*argv, "--folds", "3", "--every", "200", "--out", "run", "--quiet", *extra])


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_cli_an_unusable_answer_is_one_line(work, capsys, jobs):
    assert run_cli("NanLater", "--jobs", jobs) == 2
    err = capsys.readouterr().err
    assert err == (
        "delaycv: error: option --learner: the learner NanLater gave no usable probability on "
        "fold 0 at instance 100: its predict_proba_one returned nan for the label 0 ({0: nan, "
        "1: nan}) (expected a dict keyed by the labels 0 and 1, or False and True, with "
        "probabilities in [0, 1]; an empty dict while the learner has none)\n"
    )
    assert sorted(p.name for p in work.iterdir()) == ["s.parquet"]  # nothing partial


def test_cli_an_unusable_answer_from_the_start_is_found_before_the_run(work, capsys):
    assert run_cli("YesNoFromTheStart") == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "delaycv: error: option --learner: the learner YesNoFromTheStart gives no usable probability "
        "on the first instances of the stream (a copy run before the evaluation): at instance 1 "
        "its predict_proba_one returned the key 'no'"
    )
    assert len(err.splitlines()) == 1


def test_cli_a_learner_that_raises_is_one_line(work, capsys):
    assert run_cli("RaisesLater") == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "delaycv: error: option --learner: the learner RaisesLater failed on fold 0 while "
        "processing instances 1..600 (at instance "
    )
    assert "ValueError: cannot split on this stream" in err and len(err.splitlines()) == 1
    assert sorted(p.name for p in work.iterdir()) == ["s.parquet"]


def test_cli_the_warning_on_stderr_and_in_run_json(work, capsys):
    assert run_cli("Never") == 0
    warned = [
        line
        for line in capsys.readouterr().err.splitlines()
        if "warning" in line or "Never" in line
    ]
    assert warned == [
        "delaycv: warning: the learner Never never gave a probability in folds 0, 1, 2: its "
        "predict_proba_one returned an empty dict (or zeros) for all 600 instances, each read as "
        "P(1) = 0.5 (negative at threshold 0.5): the metrics there measure no model"
    ]
    info = json.loads((work / "run" / "run.json").read_text())
    assert info["warnings"] == [warned[0].removeprefix("delaycv: warning: ")]
    assert [f["no_probability"] for f in info["folds"]] == [600] * 3
    # a run without warnings says so
    assert run_cli("Always") == 0
    assert json.loads((work / "run" / "run.json").read_text())["warnings"] == []
    assert "warning" not in capsys.readouterr().err


def test_api(caplog):
    stream = generate_stream(rows=300, seed=5)
    with caplog.at_level(logging.WARNING, logger="delaycv.engine"):
        result = delaycv.evaluate(stream, spec(Never), folds=2, every=100, progress=False)
    assert result.info["warnings"] and caplog.records[0].getMessage() == result.info["warnings"][0]
    with pytest.raises(ConfigError, match="at instance 1 its predict_proba_one returned None"):
        delaycv.evaluate(stream, spec(NoneFromTheStart), progress=False)
    with pytest.raises(ConfigError, match="on fold 0 at instance 100: its predict_proba_one"):
        delaycv.evaluate(stream, spec(NanLater), folds=2, progress=False)


def test_a_failure_in_a_fold_s_thread_is_the_same_error(monkeypatch):
    """Folds in threads (MOA learners' --jobs; any learner gives the same result there): a
    learner's failure in its thread names its fold and instance as in one thread."""
    stream = generate_stream(rows=300, seed=5)
    monkeypatch.setattr("delaycv.engine.run.folds_in_threads", lambda *args: True)
    for jobs in (1, 2):
        with pytest.raises(ConfigError, match="on fold 0 at instance 100: its predict_proba_one"):
            delaycv.evaluate(stream, spec(NanLater), folds=2, jobs=jobs, progress=False)


def test_river_s_encoder_given_the_numbers_too_is_named():
    """river's OneHotEncoder as a pipeline's first step (as river's docs show it on text
    features) makes each value of a numeric feature a feature of its own: found on a stream of
    card transactions, where such a logistic regression scored a gmean of 0.014 without a word.
    The run warns, naming the numbers; the encoder given the text alone, or a stream of text
    features only, does not."""
    import numbers

    from river import compose, linear_model, preprocessing

    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame({"time": np.arange(n), "label": rng.integers(0, 2, n)})
    frame["merchant"] = pd.Categorical(rng.choice(["fuel", "travel"], n))
    with_numbers = frame.assign(amount=rng.normal(100, 30, n), age=rng.integers(18, 90, n))
    everything = {
        "pipeline": [
            {"class": "preprocessing.OneHotEncoder"},
            {"class": "linear_model.LogisticRegression"},
        ]
    }
    result = delaycv.evaluate(with_numbers, everything, time="time", folds=2, progress=False)
    assert result.info["warnings"][0] == (
        "key learner: the first step of OneHotEncoder|LogisticRegression, river's OneHotEncoder, "
        "encodes every feature it is given, and the stream's numeric features (amount, age) "
        "too: each of their values becomes a feature of its own, so that the model learns "
        "nothing of a number's size, nor of a value it has not seen (expected the text alone "
        "encoded when the numbers are measures such as amounts: compose.SelectType(str) | "
        "preprocessing.OneHotEncoder() beside the numbers, in a function of one's own named as "
        'the learner\'s class: config/README.md, "Categorical features")'
    )
    # numbers that are codes (at most 20 values: phishing's 0, 0.5, 1) may be one-hot encoded
    codes = frame.assign(rating=rng.choice([0.0, 0.5, 1.0], n))
    result = delaycv.evaluate(codes, everything, time="time", folds=2, progress=False)
    assert not any("encodes every feature" in w for w in result.info["warnings"])
    text_alone = (
        (compose.SelectType(str) | preprocessing.OneHotEncoder())
        + (compose.SelectType(numbers.Number) | preprocessing.StandardScaler())
    ) | linear_model.LogisticRegression()
    for stream, learner in ((with_numbers, text_alone), (frame, everything)):
        result = delaycv.evaluate(stream, learner, time="time", folds=2, progress=False)
        assert not any("encodes every feature" in w for w in result.info["warnings"])
