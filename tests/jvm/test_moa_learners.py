"""MOA classifiers as delaycv learners (delaycv.jvm): exactness against MOA's own task, weighted
training, the baselines, seeds, missing values, worker processes and every bad spec.

The exactness tests run MOA's own ``EvaluatePrequentialDelayedCV`` (``tests/jvm/moa_task.py``) with
the same jar on the same stream, against delaycv's ``delay`` policy with the count window that
MOA's delay maps onto (:func:`delaycv.jvm.task.count_window`, which says why).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import delaycv
from delaycv.common.errors import ConfigError
from delaycv.jvm.learner import ABOVE_HALF
from delaycv.jvm.task import count_window
from delaycv.metrics.auc import auc_value, pair_sums
from tests.jvm.moa_task import moa_auc, task_run, task_votes, write_arff
from tests.support.compiled import REQUIRE_COMPILED, compiled_required
from tests.support.fresh_python import imported_after
from tests.support.paths import shared_file

FOLDS = 10
BRACKETS = "cut2years/0_brackets.arff"
#: a realistic policy (waits on the predicted side) and quiet, byte-comparable runs
HITL = {
    "policy": "hitl",
    "pos_window": "7d",
    "neg_window": "90d",
    "progress": False,
    "timing": False,
}


@pytest.fixture(scope="module")
def brackets(tmp_path_factory):
    from delaycv.data.convert import convert_file
    from delaycv.data.stream_file import read_stream

    dest = tmp_path_factory.mktemp("moa") / "brackets.parquet"
    convert_file(shared_file(f"commit_guru_dataset/{BRACKETS}"), dest, preset="commit-guru")
    return read_stream(dest)


def delaycv_predictions(stream, spec, method, window, **options):
    result = delaycv.evaluate(
        stream,
        spec,
        policy="delay",
        window=window,
        validation={"scheme": method, "folds": FOLDS},
        predictions=True,
        progress=False,
        every=None,
        **options,
    )
    log = result.predictions
    wide = {
        c: log.pivot(index="index", columns="fold", values=c).to_numpy() for c in ("pred", "proba")
    }
    return wide["pred"], wide["proba"], result


@pytest.mark.slow  # MOA's own task for exactness
@pytest.mark.parametrize(
    ("learner", "spec", "method", "k"),
    [
        ("trees.HoeffdingTree", "moa:trees.HoeffdingTree", "cv", 90),
        ("trees.HoeffdingTree", "moa:trees.HoeffdingTree", "split", 10),
        ("trees.HoeffdingTree -g 50 -c 0.001", "moa:trees.HoeffdingTree -g 50 -c 0.001", "cv", 9),
        # majority-class leaves: no P(1) below 1e-15, where MOA's AUC clamps
        ("trees.HoeffdingTree -l MC", "moa:trees.HoeffdingTree -l MC", "split", 10),
        # MOA's task copies one learner with seed 1 into every fold: seed 1 for every fold
        (
            "meta.OzaBag -l trees.HoeffdingTree -s 5",
            {"moa": "meta.OzaBag -l trees.HoeffdingTree -s 5", "seed": 1},
            "cv",
            90,
        ),
        (
            "meta.OzaBag -l trees.HoeffdingTree -s 5",
            {"moa": "meta.OzaBag -l trees.HoeffdingTree -s 5", "seed": 1},
            "split",
            10,
        ),
        ("bayes.NaiveBayes", "moa:bayes.NaiveBayes", "split", 3),
        ("functions.Perceptron", {"moa": "functions.Perceptron", "seed": 1}, "split", 10),
    ],
)
def test_predictions_and_auc_equal_moas_own_task(moa, brackets, tmp_path, learner, spec, method, k):
    """Every prediction and P(1) of MOA's own task, bit for bit, and its ROC AUC: delaycv's P(1)
    is MOA's single division of the votes (``getNormalizedProbability``), so its scores rank as
    MOA's AUC ranks them. Where MOA's AUC differs, it is by its own two quirks
    (docs/moa-learners.md): it ranks max(P(1), 1e-15), and NaN for votes that are no
    probabilities, which delaycv reads as a class; with those applied to delaycv's P(1), MOA's own
    AUC estimator gives MOA's AUC of every fold, bit for bit."""
    arff = write_arff(brackets, tmp_path / "brackets.arff")
    moa_run = task_run(arff, learner, folds=FOLDS, method=method, delay=k)
    window = count_window(method, k, folds=FOLDS)
    pred, p1, result = delaycv_predictions(
        brackets, spec, method, window, estimator="cumulative", flush=True
    )
    assert pred.shape == moa_run.classes.shape == (len(brackets), FOLDS)
    # every prediction, instance by instance and fold by fold
    assert np.array_equal(pred, moa_run.classes)
    # P(1) bit for bit wherever MOA's votes are probabilities (elsewhere delaycv reads MOA's
    # class: 0 or 1), but where class 1's vote is larger by an amount the division rounds away
    odd = np.isnan(moa_run.proba)
    assert odd.mean() < 0.001
    assert np.array_equal(p1[odd], moa_run.classes[odd].astype(float))
    tie = ~odd & (p1 != moa_run.proba)
    assert set(p1[tie]) <= {ABOVE_HALF} and set(moa_run.proba[tie]) <= {0.5}
    assert tie.sum() <= 2
    # the models learned: not all one class
    assert 0 < pred.mean() < 1
    # the AUC: delaycv's is that of its P(1) (the table's last checkpoint, all released: flush)
    labels = np.asarray(brackets.label)
    folds = result.folds
    last = folds[(folds.reference == "true") & (folds.checkpoint == len(brackets))]
    ours = last.sort_values("fold").auc.to_numpy()
    ones = np.ones(len(labels))
    assert np.array_equal(
        ours, [auc_value(*pair_sums(p1[:, f], labels, ones)) for f in range(FOLDS)]
    )
    # MOA's: its own estimator on delaycv's P(1), with MOA's clamp and its scores of the votes
    # delaycv reads as a class (and of the rounding ties)
    as_moa = np.where(odd | tie, moa_run.scores, np.maximum(p1, 1e-15))
    assert [moa_auc(as_moa[:, f], labels) for f in range(FOLDS)] == moa_run.auc.tolist()
    if not (odd.any() or tie.any() or ((p1 > 0) & (p1 < 1e-15)).any()):
        assert ours.tolist() == moa_run.auc.tolist()  # (-l MC: no quirk applies)


@pytest.mark.slow  # MOA's own task for exactness
def test_missing_values_are_moas_missing_values(moa, brackets, tmp_path):
    """NaN features (a quarter of the values of three features) reach MOA as its missing values:
    the same predictions as MOA's task reading '?' in the ARFF."""
    features = brackets.features.copy()
    rng = np.random.default_rng(5)
    for name in ("la", "ld", "exp"):
        features.loc[rng.random(len(features)) < 0.25, name] = np.nan
    stream = delaycv.data.stream.Stream(
        time=brackets.time,
        label=brackets.label,
        label_time=brackets.label_time,
        features=features,
        metadata=dict(brackets.metadata),
    )
    assert sum(stream.metadata["missing"].values()) > 0.7 * len(stream)
    arff = write_arff(stream, tmp_path / "holes.arff")
    moa_class, moa_p1 = task_votes(arff, "trees.HoeffdingTree", folds=FOLDS, method="cv", delay=9)
    pred, p1, _ = delaycv_predictions(stream, "moa:trees.HoeffdingTree", "cv", "11i")
    assert np.array_equal(pred, moa_class)
    finite = ~np.isnan(moa_p1)
    assert np.array_equal(p1[finite], moa_p1[finite])  # bit for bit


def test_weighted_training_is_moas_instance_weight(moa, brackets):
    """Bootstrap: the fold's weight is the instance's weight. The same P(1) as a replay that
    trains MOA's HoeffdingTree directly on instances of that weight (ideal policy: predict,
    then train), fold by fold."""
    from jpype import JArray, JClass, JDouble

    n = 3000
    stream = brackets.subset(0, n)
    result = delaycv.evaluate(
        stream,
        "moa:trees.HoeffdingTree -g 50",
        policy="ideal",
        validation={"scheme": "bootstrap", "folds": 3},
        predictions=True,
        progress=False,
        every=None,
    )
    log = result.predictions
    weights = log.pivot(index="index", columns="fold", values="weight").to_numpy()
    assert (weights > 1).any() and (weights == 0).any()
    header = moa.header(tuple(stream.feature_names))
    rows = np.column_stack([stream.features.to_numpy(float), stream.label.astype(float)])
    dense = JClass("com.yahoo.labs.samoa.instances.DenseInstance")
    for fold in range(3):
        model = moa.build("trees.HoeffdingTree -g 50")
        model.prepareForUse()
        model.setModelContext(header)
        model.resetLearning()
        expected = []
        for row, w in zip(rows.tolist(), weights[:, fold].tolist(), strict=True):
            inst = dense(float(w), JArray(JDouble)(row))
            inst.setDataset(header)
            votes = [float(v) for v in model.getVotesForInstance(inst)]
            v0, v1 = (votes + [0.0, 0.0])[:2]
            expected.append(v1 / (v0 + v1) if v0 + v1 > 0 else 0.5)
            if w > 0:
                model.trainOnInstance(inst)
        got = log[log.fold == fold].proba.to_numpy()
        assert np.array_equal(got, expected)  # bit for bit: MOA's one division of the votes


#: what reads the probabilities, not only the predictions
PROBABILITY_METRICS = {"brier", "log_loss", "info_score", "auc", "popt", "ifa"}


@pytest.mark.parametrize(
    ("moa_name", "river_name"), [("NoChange", "NoChange"), ("MajorityClass", "Prior")]
)
def test_moa_baselines_equal_delaycvs(moa, brackets, moa_name, river_name):
    """MOA's functions.NoChange and functions.MajorityClass against delaycv's NoChange and Prior,
    under a realistic policy: the same predictions and probabilities, hence the same fold tables,
    except one thing. Before its first label, MOA's NoChange votes for class 0 with certainty
    (P(1) = 0) where delaycv's abstains (P(1) = 0.5): both predict negative, so only what reads
    the probability differs (Brier, log loss, the effort-aware rankings)."""
    common = {**HITL, "folds": 5, "every": 500, "predictions": True}
    ours = delaycv.evaluate(brackets, river_name, **common)
    theirs = delaycv.evaluate(brackets, f"moa:functions.{moa_name}", **common)
    a, b = ours.predictions, theirs.predictions
    assert np.array_equal(a.pred, b.pred)
    differ = a.proba.to_numpy() != b.proba.to_numpy()
    if moa_name == "MajorityClass":
        pd.testing.assert_frame_equal(ours.folds, theirs.folds.assign(learner=ours.folds.learner))
        assert not differ.any()
        return
    # NoChange: the probabilities differ exactly before each fold's first training label
    first = a[a.observed_at.notna() & (a.weight > 0)].groupby("fold").observed_at.min()
    time, first = a.time.to_numpy(), a.fold.map(first).to_numpy()
    assert differ.any() and not (differ & (time > first)).any()
    assert (differ | (time >= first)).all()
    assert set(b.proba[differ]) == {0.0} and set(a.proba[differ]) == {0.5}
    changed = {c for c in ours.folds.columns if not ours.folds[c].equals(theirs.folds[c])}
    assert changed - {"learner"} <= PROBABILITY_METRICS | {
        c for c in changed if c.startswith("effort_")
    }
    assert "gmean" not in changed and "recall_1" not in changed


def test_seeds_make_independent_replicates(moa, brackets):
    """A randomised MOA learner gets each fold's learner seed: other folds and other run seeds
    give other models; a seed in the spec (or same_learner_seed) is every fold's; HoeffdingTree
    (not randomised) is the same under any seed."""
    stream = brackets.subset(0, 2000)
    bag = "moa:meta.OzaBag -l trees.HoeffdingTree -s 3"

    def p1(spec, seed=1, **options):
        result = delaycv.evaluate(
            stream,
            spec,
            policy="ideal",
            folds=2,
            seed=seed,
            predictions=True,
            progress=False,
            every=None,
            validation={"scheme": "split", "folds": 2},
            **options,
        )
        return result.predictions.pivot(index="index", columns="fold", values="proba").to_numpy()

    one, two = p1(bag, 1), p1(bag, 2)
    assert not np.array_equal(one, two)
    assert np.array_equal(one, p1(bag, 1))
    fixed = {"moa": bag[4:], "seed": 7}
    assert np.array_equal(p1(fixed, 1), p1(fixed, 2))
    assert np.array_equal(p1(bag, 1, same_learner_seed=True), p1({"moa": bag[4:], "seed": 1}, 3))
    tree = "moa:trees.HoeffdingTree"
    assert np.array_equal(p1(tree, 1), p1(tree, 2))


def test_a_moa_learner_reads_the_feature_matrix_and_never_river_s_dicts(moa, brackets, monkeypatch):
    """The Java loop takes each chunk's instances from its feature matrix: the river x dicts of
    the stream are never made (about 0.2 s of a HoeffdingTree run on git(master))."""
    from delaycv.data.stream import Stream

    def refused(*args):
        raise AssertionError("a MOA learner's run made river's x dicts")

    monkeypatch.setattr(Stream, "records", refused)
    result = delaycv.evaluate(brackets.subset(0, 1500), "moa:bayes.NaiveBayes", folds=2, **HITL)
    assert result.folds["evaluated"].max() > 0


def test_folds_in_threads_and_in_processes_give_the_same_tables(moa, brackets, monkeypatch):
    """--jobs 2 with a MOA learner: the folds run in two threads of this process, which has one
    JVM (the Java loop lets go of Python's lock); in worker processes, a JVM each. Both give the
    tables of one thread, and count each CPU second once."""
    from delaycv.jvm import rows

    stream = brackets.subset(0, 3000)
    common = {**HITL, "folds": 4, "every": 250, "predictions": True}
    spec = "moa:meta.OzaBag -l trees.HoeffdingTree -s 3"
    one = delaycv.evaluate(stream, spec, jobs=1, **common)
    ran_in = set()
    java_loop = rows.run_rows

    def recorded(*args):
        ran_in.add(threading.current_thread().name)
        return java_loop(*args)

    monkeypatch.setattr(rows, "run_rows", recorded)
    threads = delaycv.evaluate(stream, spec, jobs=2, **common)
    assert len(ran_in) == 2 and all(name.startswith("delaycv-fold") for name in ran_in)
    monkeypatch.setattr("delaycv.engine.run.folds_in_threads", lambda *args: False)
    processes = delaycv.evaluate(stream, spec, jobs=2, **common)
    for other in (threads, processes):
        pd.testing.assert_frame_equal(one.folds, other.folds)
        pd.testing.assert_frame_equal(one.predictions, other.predictions)
    # a fold's CPU is its thread's: the folds' seconds are within the process's
    timed = delaycv.evaluate(stream.subset(0, 1000), spec, jobs=2, **{**common, "timing": True})
    assert 0 < sum(f["cpu_seconds"] for f in timed.info["folds"]) <= timed.info["cpu_seconds"]


def test_a_learner_object(moa, brackets):
    """Python users may pass a MoaClassifier; each fold gets a fresh one, as from its spec."""
    from delaycv.jvm.learner import MoaClassifier

    stream = brackets.subset(0, 1500)
    common = dict(policy="ideal", folds=3, progress=False, every=500, timing=False)
    by_object = delaycv.evaluate(stream, MoaClassifier("trees.HoeffdingTree -g 50"), **common)
    by_spec = delaycv.evaluate(stream, "moa:trees.HoeffdingTree -g 50", **common)
    pd.testing.assert_frame_equal(by_object.folds, by_spec.folds)
    assert by_object.info["specs"]["learner"] == {"moa": "trees.HoeffdingTree -g 50"}


def test_votes_that_are_no_probabilities_are_read_as_moa_reads_them(moa):
    from delaycv.jvm.learner import ABOVE_HALF

    learner = moa.MoaClassifier("trees.HoeffdingTree")
    answers = {
        (): {},
        (0.0, 0.0): {},
        (3.0,): {0: 1.0, 1: 0.0},
        (1.0, 3.0): {0: 0.25, 1: 0.75},
        (float("inf"), float("nan")): {0: 1.0, 1: 0.0},
        (float("nan"), 3.0): {0: 1.0, 1: 0.0},
        (-2.0, -1.0): {0: 0.0, 1: 1.0},
        (2.0, float("inf")): {0: 0.0, 1: 1.0},
        # class 1's vote larger by an ulp, which the division rounds to a tie: P(1) stays above
        # 0.5, so that the prediction is MOA's (class 1)
        (1.3436424411240122, 1.3436424411240124): {0: 1.0 - ABOVE_HALF, 1: ABOVE_HALF},
        (1.3436424411240124, 1.3436424411240122): {
            0: 1.0 - 1.3436424411240122 / (1.3436424411240124 + 1.3436424411240122),
            1: 1.3436424411240122 / (1.3436424411240124 + 1.3436424411240122),
        },
    }
    for votes, expected in answers.items():
        learner._predict = lambda _x, v=votes: list(v)
        assert learner.predict_proba_one(object()) == expected, votes
    assert learner.votes_as_class == 4


@settings(max_examples=2000, deadline=None)
@given(
    st.floats(min_value=0.0, max_value=1e300) | st.sampled_from([0.0, 1.0, 2.0, 5e-324]),
    st.floats(min_value=0.0, max_value=1e300) | st.sampled_from([0.0, 1.0, 3.0, 5e-324]),
)
def test_p1_is_moas_one_division_of_the_votes(v0, v1):
    """P(1) of votes that are probabilities' weights is v1 / (v0 + v1), one division, as MOA's
    evaluators normalise them (a division of each vote by the sum first, then b / (a + b),
    rounds twice and orders nearly equal scores otherwise); the one exception keeps MOA's class
    where the division rounds v1 > v0 to 0.5. The engine reads it back from predict_proba_one's
    {0: 1 - p, 1: p} unchanged: (1 - p) + p is 1.0 for every p in [0, 1]."""
    from delaycv.jvm.learner import vote_probability
    from delaycv.protocol.learner_contract import positive_probability

    p1, as_class = vote_probability(v0, v1)
    assert not as_class
    if v0 + v1 == 0:
        assert p1 is None
        return
    if v1 > v0 and v1 / (v0 + v1) <= 0.5:
        assert p1 == ABOVE_HALF
    else:
        assert p1 == v1 / (v0 + v1)
    assert (1.0 - p1) + p1 == 1.0
    assert positive_probability({0: 1.0 - p1, 1: p1}) == p1


@given(st.floats(min_value=0.0, max_value=1.0))
def test_one_minus_p_and_p_add_up_to_one(p):
    assert (1.0 - p) + p == 1.0 and sum({0: 1.0 - p, 1: p}.values()) == 1.0


def test_votes_the_division_of_each_then_the_sum_would_order_otherwise():
    """Votes for which the old reading (each vote over the sum, then b / (a + b)) differs from
    MOA's one division: the two give different P(1), so scores that MOA ties or orders one way
    were ordered the other (the AUC differed from MOA's task by up to 8.6e-4 on OzaBag)."""
    from delaycv.jvm.learner import vote_probability

    v0, v1 = 0.8357651039198697, 0.43276706790505337
    a, b = v0 / (v0 + v1), v1 / (v0 + v1)
    assert b / (a + b) == 0.34115576846779566 != v1 / (v0 + v1) == 0.3411557684677956
    assert vote_probability(v0, v1) == (0.3411557684677956, False)


def test_moas_auc_clamps_tiny_scores_and_ranks_nan_by_arrival(moa):
    """The two quirks of MOA's ROC AUC (``BasicClassificationPerformanceEvaluator`` with
    ``-a``) that delaycv does not copy (docs/moa-learners.md): it ranks max(P(1), 1e-15), so
    scores below 1e-15 tie; and its sorted set compares a NaN score as after every score both
    ways, so where a NaN lands depends on the scores added before it."""
    import math

    from jpype import JArray, JClass, JDouble

    from delaycv.jvm.learner import vote_probability
    from tests.jvm.moa_task import auc_score

    header = moa.header(("a",))
    dense, doubles = JClass("com.yahoo.labs.samoa.instances.DenseInstance"), JArray(JDouble)
    example = JClass("moa.core.InstanceExample")
    evaluator = JClass("moa.evaluation.BasicClassificationPerformanceEvaluator")()
    evaluator.rocAucOption.set()
    evaluator.prepareForUse()
    for votes, label in (([1.0, 1e-17], 1), ([1.0, 1e-16], 0)):
        inst = dense(1.0, doubles([0.0, float(label)]))
        inst.setDataset(header)
        evaluator.addResult(example(inst), doubles(votes))
    assert float(evaluator.getROCAUC()) == 0.5  # the positive ranked below, yet a tie
    p1 = np.array([vote_probability(1.0, 1e-17)[0], vote_probability(1.0, 1e-16)[0]])
    assert auc_value(*pair_sums(p1, np.array([1, 0]), np.ones(2))) == 0.0  # delaycv's
    # a NaN score: the same scores and labels in two orders, two AUCs
    scores = np.array([0.2, math.nan, 0.7, 0.4, 0.9, 0.1])
    labels = np.array([1, 0, 0, 1, 1, 0])
    assert moa_auc(scores, labels) == 7 / 9
    assert moa_auc(scores[[1, 0, 2, 3, 4, 5]], labels[[1, 0, 2, 3, 4, 5]]) == 4 / 9
    # MOA scores NaN where class 1's vote is infinite; delaycv reads that class, P(1) = 1
    assert math.isnan(auc_score([1.0, math.inf]))
    assert vote_probability(1.0, math.inf) == (1.0, True)


def tree_run(stream, out) -> list[str]:
    """The arguments of ``delaycv evaluate`` with MOA's HoeffdingTree on ``stream``."""
    return ["evaluate", str(stream), "--learner", "moa:trees.HoeffdingTree", "--out", str(out)]


def run_cli(*args, env=None, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "delaycv", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        check=False,
    )


@pytest.mark.parametrize(
    ("learner", "expected"),
    [
        (
            "moa:trees.HoeffdingTre",
            "Class not found: trees.HoeffdingTre (did you mean trees.HoeffdingTree?)",
        ),
        (
            "moa:meta.OzaBag -l bayes.NaiveBays",
            "Class not found: bayes.NaiveBays (did you mean bayes.NaiveBayes?)",
        ),
        ("moa:trees.HoeffdingTree -z 3", "Expecting option, found: '3'"),
        ("moa:trees.HoeffdingTree -g abc", 'For input string: "abc"'),
        ("moa:trees.FIMTDD", "not a MOA classifier of classes"),
        (
            "moa:moa.clusterers.clustream.Clustream",
            "is not an instance of moa.classifiers.Classifier",
        ),
        ("moa:", "expected a MOA classifier's command line"),
    ],
)
def test_bad_specs_are_one_line_before_any_work(moa, brackets, tmp_path, learner, expected):
    stream = tmp_path / "s.parquet"
    delaycv.data.stream_file.write_stream(brackets.subset(0, 50), stream)
    out = tmp_path / "run"
    done = run_cli("evaluate", str(stream), "--learner", learner, "--out", str(out))
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("delaycv: error: option --learner"), done.stderr
    assert expected in lines[0]
    assert not out.exists()


def test_a_moa_run_records_moa_java_and_its_loops(moa, brackets, tmp_path):
    # the numbers of a MOA learner depend on MOA's release and Java's: run.json says which
    import jpype

    from delaycv.jvm.jar import MOA_VERSION

    stream = tmp_path / "s.parquet"
    delaycv.data.stream_file.write_stream(brackets.subset(0, 200), stream)
    out = tmp_path / "run"
    argv = ["--learner", "moa:bayes.NaiveBayes", "--folds", "2", "--out", str(out)]
    done = run_cli("evaluate", str(stream), *argv)
    assert done.returncode == 0, done.stderr
    info = json.loads((out / "run.json").read_text())
    versions = info["versions"]
    assert versions["moa"] == MOA_VERSION == "2024.07" and versions["jpype"] == jpype.__version__
    assert re.fullmatch(r"\d+(\.\d+)*([._+-]\w+)*", versions["java"]), versions["java"]
    assert info["loops"]["fold"] == "the Java fold loop (fold_rows.jar)"


def _javas_from(feature: int) -> list[Path]:
    """The Java installations of this machine (``/usr/lib/jvm``) of that feature release or later."""
    from delaycv.jvm.machine import java_feature

    homes = sorted(Path("/usr/lib/jvm").glob("*/release"))
    return [r.parent for r in homes if (java_feature(str(r)) or 0) >= feature]


@pytest.mark.skipif(
    not _javas_from(24), reason="no Java 24 or later on this machine (/usr/lib/jvm)"
)
def test_a_newer_java_runs_quietly(moa, brackets, tmp_path):
    """Java 24 and later warn on the standard error when JPype loads its native library, unless
    the JVM is started to allow it: four lines of WARNING before every run's output."""
    stream = tmp_path / "s.parquet"
    delaycv.data.stream_file.write_stream(brackets.subset(0, 200), stream)
    for home in _javas_from(24):
        out = tmp_path / home.name
        argv = ["--learner", "moa:bayes.NaiveBayes", "--folds", "2", "--quiet", "--out", str(out)]
        done = run_cli("evaluate", str(stream), *argv, env={"JAVA_HOME": str(home)})
        assert done.returncode == 0 and done.stderr == "", (home, done.stderr)
        java = json.loads((out / "run.json").read_text())["versions"]["java"]
        assert int(java.split(".")[0]) >= 24, (home, java)


def test_param_is_for_river_learners(moa, brackets, tmp_path):
    stream = tmp_path / "s.parquet"
    delaycv.data.stream_file.write_stream(brackets.subset(0, 50), stream)
    done = run_cli(
        "evaluate",
        str(stream),
        "--learner",
        "moa:trees.HoeffdingTree",
        "--param",
        "g=3",
        "--out",
        str(tmp_path / "r"),
    )
    assert done.returncode == 2
    assert "option --param" in done.stderr and "inside its string" in done.stderr


def test_a_jar_of_another_release_or_none_is_refused(moa, brackets, tmp_path):
    stream = tmp_path / "s.parquet"
    delaycv.data.stream_file.write_stream(brackets.subset(0, 50), stream)
    other = tmp_path / "moa.jar"
    other.write_bytes(b"PK\x03\x04 not the pinned jar")
    for jar, words in (
        (other, "not that of the pinned MOA 2024.07"),
        (tmp_path / "none.jar", "no MOA jar at"),
    ):
        done = run_cli(*tree_run(stream, tmp_path / "r"), env={"DELAYCV_MOA_JAR": str(jar)})
        assert done.returncode == 2
        assert words in done.stderr and "python -m delaycv.jvm.jar install" in done.stderr, (
            done.stderr
        )
        assert len(done.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "r").exists()


def test_no_java_says_what_to_install(moa, brackets, tmp_path):
    """A machine without Java (JPype finds no JVM library: simulated, this one has Java)."""
    stream = tmp_path / "s.parquet"
    delaycv.data.stream_file.write_stream(brackets.subset(0, 50), stream)
    code = (
        "import sys, jpype\n"
        "def missing():\n"
        "    raise jpype.JVMNotFoundException('No JVM shared library file (libjvm.so) found.')\n"
        "jpype.getDefaultJVMPath = missing\n"
        "from delaycv.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *tree_run(stream, tmp_path / "r")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "need Java" in done.stderr and "openjdk-17-jre-headless" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


def with_categories(stream, seed: int = 3):
    """``stream`` with two categorical features beside its own, both carrying some of the
    label: the size of a change (from its lines added, a tenth missing), its categories in their
    natural order, not sorted, and one no instance holds, as an ARFF may declare them; and a team
    name with a space and a quote."""
    rng = np.random.default_rng(seed)
    features = stream.features.copy()
    size = pd.cut(features["la"], [-1, 10, 50, 200, np.inf], labels=["xs", "s", "m", "l"])
    size = size.astype(object).where(rng.random(len(features)) >= 0.1, None)
    features.insert(2, "size", pd.Categorical(size, categories=["xs", "s", "m", "l", "xl"]))
    teams = np.array(["web ui", "core", "o'brien's"], dtype=object)
    n = len(features)
    pick = np.where(stream.label == 1, rng.integers(0, 2, n), rng.integers(1, 3, n))
    features["team"] = pd.Categorical(teams[pick], categories=list(teams))
    return delaycv.data.stream.Stream(
        time=stream.time,
        label=stream.label,
        label_time=stream.label_time,
        features=features,
        metadata=dict(stream.metadata),
    )


@pytest.mark.slow  # MOA's own task for exactness
@pytest.mark.parametrize("learner", ["trees.HoeffdingTree -g 50", "bayes.NaiveBayes"])
def test_categorical_features_are_moas_nominal_attributes(
    moa, brackets, tmp_path, monkeypatch, learner
):
    """A categorical feature reaches MOA as a nominal attribute of its categories in their order
    (an ARFF's declared values): the same predictions, bit for bit, as MOA's own task reading
    the ARFF that declares them (missing values as '?'), under the Java loop and the Python one.
    The order counts: MOA's observers index a nominal attribute's values (declared in another
    order, the same values give other predictions, below)."""
    stream = with_categories(brackets)
    assert stream.categories() == {
        "size": ("xs", "s", "m", "l", "xl"),
        "team": ("web ui", "core", "o'brien's"),
    }
    arff = write_arff(stream, tmp_path / "nominal.arff")
    assert "@attribute 'team' {'web ui','core','o\\'brien\\'s'}" in arff.read_text()
    moa_class, moa_p1 = task_votes(arff, learner, folds=FOLDS, method="cv", delay=9)
    pred, p1, _ = delaycv_predictions(stream, f"moa:{learner}", "cv", "11i")
    assert np.array_equal(pred, moa_class)
    finite = ~np.isnan(moa_p1)
    assert np.array_equal(p1[finite], moa_p1[finite])
    from delaycv.jvm import rows

    if rows.USABLE:  # (the Java loop ran) the Python loop, which makes an instance per row
        monkeypatch.setattr(rows, "USABLE", False)
        assert moa.MoaClassifier("bayes.NaiveBayes").run_rows is None
        pred_python, p1_python, _ = delaycv_predictions(stream, f"moa:{learner}", "cv", "11i")
        assert np.array_equal(pred_python, pred) and np.array_equal(p1_python, p1)
    # the nominal attributes are used, in their order: without them, or declared in another
    # order, MOA's predictions differ
    plain = write_arff(brackets, tmp_path / "plain.arff")
    assert not np.array_equal(
        task_votes(plain, learner, folds=FOLDS, method="cv", delay=9)[1], moa_p1
    )
    features = stream.features.copy()
    features["size"] = features["size"].cat.reorder_categories(["l", "m", "s", "xl", "xs"])
    other = delaycv.data.stream.Stream(
        time=stream.time, label=stream.label, label_time=stream.label_time, features=features
    )
    reordered = write_arff(other, tmp_path / "reordered.arff")
    assert not np.array_equal(
        task_votes(reordered, learner, folds=FOLDS, method="cv", delay=9)[1], moa_p1
    )


def test_a_categorical_feature_s_values_come_from_the_stream_in_memory_or_in_its_file(
    moa, brackets, tmp_path
):
    """The categories a MOA learner is told are the stream's, in their order (one no instance
    holds too), the same read from its file chunk by chunk as in memory; so are the run's
    tables."""
    from delaycv.data.stream_file import StreamFile, write_stream

    stream = with_categories(brackets.subset(0, 9000))  # (3 chunks of the engine)
    path = tmp_path / "s.parquet"
    write_stream(stream, path)
    assert StreamFile(path).categories() == stream.categories()
    options = dict(validation={"scheme": "bootstrap", "folds": 3}, **HITL)
    spec = "moa:trees.HoeffdingTree -g 50"
    in_memory = delaycv.evaluate(stream, spec, **options)
    from_file = delaycv.evaluate(str(path), spec, **options)
    pd.testing.assert_frame_equal(in_memory.folds, from_file.folds)


def test_a_stream_file_delaycv_did_not_write_gives_a_moa_learner_its_features(
    moa, brackets, tmp_path
):
    """A Parquet file written by another tool (pandas, pyarrow: the stream's columns, no
    delaycv metadata) is read as it is: a MOA learner, which is told the stream's features
    before it sees an instance, is told them from the file's columns (it failed with
    KeyError 'features'), and the run is the one of the same stream written by delaycv."""
    import pyarrow.parquet as pq

    from delaycv.data.stream import Stream
    from delaycv.data.stream_file import to_table, write_stream

    part = brackets.subset(0, 3000)  # (without its effort: a foreign column effort is refused)
    stream = Stream(part.time, part.label, part.label_time, part.features, {"dataset": "foreign"})
    ours, foreign = tmp_path / "ours.parquet", tmp_path / "foreign.parquet"
    write_stream(stream, ours)
    pq.write_table(to_table(stream).replace_schema_metadata(None), foreign)
    options = dict(validation={"scheme": "bootstrap", "folds": 3}, **HITL)
    spec = "moa:bayes.NaiveBayes"
    got = delaycv.evaluate(str(foreign), spec, **options)
    want = delaycv.evaluate(str(ours), spec, **options)
    pd.testing.assert_frame_equal(got.folds, want.folds)
    assert got.info["corrected"] == want.info["corrected"]  # (no "the stream has no fix times")


def test_a_categorical_value_the_learner_was_not_told_of_is_named(moa):
    from delaycv.jvm.learner import MoaClassifier

    learner = MoaClassifier("bayes.NaiveBayes", 1)
    learner.bind_features(["a", "lang"], {"lang": ("c", "py")})
    learner.learn_one({"a": 1.0, "lang": "py"}, 1)
    assert set(learner.predict_proba_one({"a": 1.0, "lang": "c"})) == {0, 1}
    with pytest.raises(ConfigError, match="feature 'lang' has the category 'rust', which is none"):
        learner.predict_proba_one({"a": 1.0, "lang": "rust"})


def test_the_check_says_whether_a_moa_learner_takes_the_run_seed(moa):
    """A randomisable classifier takes the run's seed, unless its spec sets one; others do not
    (the study's warning names them when every seed shares the folds)."""
    from delaycv.jvm.learner import check_learner

    assert check_learner("meta.OzaBag -l trees.HoeffdingTree -s 3") is True
    assert check_learner({"moa": "meta.OzaBag -l trees.HoeffdingTree -s 3", "seed": 1}) is False
    assert check_learner("bayes.NaiveBayes") is False
    assert check_learner("trees.HoeffdingTree") is False


def test_a_study_checks_moa_specs(moa, tmp_path):
    study = tmp_path / "study.yaml"
    study.write_text(
        "datasets:\n  syn: {generate: {n: 300}}\n"
        "learners:\n"
        "  ht: {moa: trees.HoeffdingTree -g 50}\n"
        "  bad: {moa: trees.HoeffdingTre}\n"
        "  mixed: {class: tree.HoeffdingTreeClassifier, seed: 3}\n"
        "  both: {moa: trees.HoeffdingTree, class: NoChange}\n"
        "policies:\n  ideal: {preset: ideal}\n"
    )
    done = run_cli("check", str(study), cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert any("key learners.bad.moa" in line and "Class not found" in line for line in lines)
    assert any("key learners.mixed.seed" in line for line in lines)
    assert any(
        "key learners.both" in line and "exactly one of class, pipeline and moa" in line
        for line in lines
    )
    assert not any("learners.ht" in line for line in lines), lines


@pytest.mark.parametrize(
    "case",
    [
        dict(
            policy="hitl",
            pos_window="7d",
            neg_window="90d",
            validation={"scheme": "bootstrap", "folds": 4},
        ),
        dict(
            policy="verification",
            window="30d",
            validation={"scheme": "cv", "folds": 3, "evaluate": "trained"},
        ),
        dict(policy="delay", window="50i", validation={"scheme": "split", "folds": 3}, flush=True),
        dict(
            policy={
                "preset": "hitl",
                "pos_window": "7d",
                "neg_window": "60d",
                "inspection_error": 0.2,
            },
            folds=3,
            threshold=0.3,
        ),
        dict(
            policy="ideal", folds=2, checkpoints={"positions": [1, 2, 777, 4096, 4097]}, every=None
        ),
    ],
)
def test_the_java_loop_equals_the_python_loop(moa, brackets, monkeypatch, case):
    """The Java fold loop (delaycv.jvm.rows) gives the outputs of the Python loops that call the
    learner, bit for bit: policies that wait on the predicted side, evaluate-trained, flush,
    inspection errors, a threshold, checkpoints at chunk edges."""
    from delaycv.jvm import rows

    if not rows.USABLE:
        if compiled_required():
            pytest.fail(f"the Java fold loop is required ({REQUIRE_COMPILED}): {rows.STATUS}")
        pytest.skip(f"the Java loop is not built here: {rows.STATUS}")
    assert moa.MoaClassifier("trees.HoeffdingTree").run_rows is rows.run_rows
    stream = brackets.subset(0, 6000)
    spec = "moa:meta.OzaBag -l trees.HoeffdingTree -s 3"
    options = {"progress": False, "every": 400, "timing": False, "predictions": True, **case}
    java = delaycv.evaluate(stream, spec, **options)
    monkeypatch.setattr(rows, "USABLE", False)
    python = delaycv.evaluate(stream, spec, **options)
    pd.testing.assert_frame_equal(java.folds, python.folds)
    pd.testing.assert_frame_equal(java.predictions, python.predictions)
    assert java.info["warnings"] == python.info["warnings"]


def test_a_java_loop_built_from_another_source_is_not_used(moa, tmp_path, monkeypatch, caplog):
    """As for the Cython loop: a fold_rows.jar whose recorded digest is not the source's runs
    nothing (a warning says how to rebuild), nor one without the built classes; and the digest
    of the evaluate stage counts the Java source."""
    from delaycv.common.native import source_digest
    from delaycv.jvm import build
    from delaycv.study import digests

    stale = tmp_path / "fold_rows.jar"
    with zipfile.ZipFile(stale, "w") as jar:
        jar.writestr(build.DIGEST_MEMBER, "0" * 64 + "\n")
    monkeypatch.setattr(build, "TARGET", stale)
    status = build.jar_status.__wrapped__
    with caplog.at_level("WARNING", logger="delaycv.jvm"):
        usable, why = status()
    assert not usable and "was built from another FoldRows.java" in why
    assert caplog.messages == [
        "fold_rows.jar was built from another FoldRows.java than the one beside it: MOA learners "
        "run the Python loop (rebuild: python -m delaycv.jvm.build)"
    ]
    with zipfile.ZipFile(stale, "w") as jar:  # the right digest, no class
        jar.writestr(build.DIGEST_MEMBER, source_digest(build.SOURCE) + "\n")
    usable, why = status()
    assert not usable and "holds no delaycv/jvm/FoldRows$Chunk.class, " in why
    monkeypatch.setattr(build, "TARGET", tmp_path / "none.jar")
    assert status() == (False, status()[1]) and "not built" in status()[1]
    # the Java source is part of the evaluate stage's code
    root = digests.package_root()
    closure = digests.module_closure(digests.STAGE_MODULES["evaluate"], root)
    assert ("jvm/java/delaycv/jvm/FoldRows.java", str(build.SOURCE)) in digests._java_sources(
        closure, root
    )


def test_the_heap_key_sets_the_jvm_s_maximum_heap(moa, tmp_path):
    """``heap`` (and DELAYCV_JVM_HEAP) reach Java's -Xmx; a process has one JVM, one heap."""
    code = (
        "from jpype import JClass\n"
        "from delaycv.jvm.learner import MoaClassifier\n"
        "MoaClassifier({'moa': 'trees.HoeffdingTree', 'heap': '300m'})\n"
        "print(JClass('java.lang.Runtime').getRuntime().maxMemory() // 2**20)\n"
        "try:\n"
        "    MoaClassifier({'moa': 'trees.HoeffdingTree', 'heap': '2g'})\n"
        "except Exception as err:\n"
        "    print(err)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = done.stdout.strip().splitlines()
    assert 250 <= int(lines[0]) <= 300  # (Java reports the heap less a survivor space)
    assert "key learner.heap: heap 2g: the JVM of this process runs with the heap 300m" in lines[1]
    env = {**os.environ, "DELAYCV_JVM_HEAP": "200m"}
    code = code.replace(", 'heap': '300m'", "").split("try:")[0]
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert 150 <= int(done.stdout.strip()) <= 200


def _jvm_arguments(heap: str | None, tool_options: str | None) -> tuple[list[str], int]:
    """The options a fresh process's JVM started with (Java's own list, JAVA_TOOL_OPTIONS' first)
    and its initial heap in MiB, with the learner key ``heap`` and JAVA_TOOL_OPTIONS."""
    spec = {"moa": "trees.HoeffdingTree", **({"heap": heap} if heap else {})}
    code = (
        "from jpype import JClass\n"
        "from delaycv.jvm.learner import MoaClassifier\n"
        f"MoaClassifier({spec!r})\n"
        "factory = JClass('java.lang.management.ManagementFactory')\n"
        "RESULT = [[str(a) for a in factory.getRuntimeMXBean().getInputArguments()],\n"
        "          int(factory.getMemoryMXBean().getHeapMemoryUsage().getInit()) // 2**20]\n"
    )
    environment = {"JAVA_TOOL_OPTIONS": tool_options, "DELAYCV_JVM_HEAP": None}
    arguments, initial = imported_after(code, environment=environment)["result"]
    return arguments, initial


def test_the_heap_starts_small_and_grows_with_the_run_unless_the_user_sizes_it(moa):
    """The JVM starts with a heap of 128m (or the maximum asked for, if smaller) and G1's time
    ratio 2 (machine.sizing_options); JAVA_TOOL_OPTIONS that size the heap or choose the
    collector replace both (Java would give delaycv's options precedence over the user's)."""
    arguments, initial = _jvm_arguments(None, None)
    assert "-Xms128m" in arguments and "-XX:GCTimeRatio=2" in arguments
    assert initial == 128
    arguments, initial = _jvm_arguments("24m", "-Xss4m")  # an option of another kind
    assert {"-Xmx24m", "-Xms24m", "-XX:GCTimeRatio=2", "-Xss4m"} <= set(arguments)
    assert initial == 24
    arguments, initial = _jvm_arguments(None, "-XX:+UseSerialGC -Xms64m")
    assert not any(a.startswith("-Xms1") or "GCTimeRatio" in a for a in arguments), arguments
    assert initial == 64
    arguments, _ = _jvm_arguments(None, "-XX:GCTimeRatio=9")
    assert "-XX:GCTimeRatio=9" in arguments and "-Xms128m" not in arguments


def test_install_into_a_place_that_cannot_be_written_names_it(tmp_path, monkeypatch, capsys):
    """``python -m delaycv.jvm.jar install`` where the cache cannot be a folder: one line, exit 2."""
    from delaycv.jvm import jar

    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert jar.main(["install"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(blocker) in err[0] and "XDG_CACHE_HOME" in err[0], err
