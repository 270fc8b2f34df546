"""The evaluation engine: hand-worked runs, checkpoints, summary, options, errors, real data."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from delaycv.common.errors import ConfigError
from delaycv.data.stream import Stream
from delaycv.data.stream_file import open_stream, write_stream
from delaycv.engine import (
    FOLD_COLUMNS,
    PREDICTION_COLUMNS,
    checkpoint_positions,
    summarize,
)
from delaycv.metrics import METRICS
from delaycv.metrics.effort_names import EFFORT_COLUMNS
from delaycv.protocol.settings import workflow_settings
from tests.support.engine_bruteforce import OrderLearner, random_stream
from tests.support.engine_runs import evaluate, evaluate_dicts


def small_stream():
    """t, y, L of the policy tests: 1 revealed at 15, 2 never, 3 at 100, 4 at 5 (< t)."""
    return Stream(
        time=np.array([0, 10, 20, 30]),
        label=np.array([1, 0, 1, 1]),
        label_time=np.array([15.0, math.nan, 100.0, 5.0]),
        features=pd.DataFrame({"idx": [1.0, 2.0, 3.0, 4.0], "a": [0.1, 0.2, 0.3, 0.4]}),
        metadata={"dataset": "small"},
    )


def last_row(result, reference="observed", fold=0):
    f = result.folds
    rows = f[(f["reference"] == reference) & (f["fold"] == fold)]
    return rows.iloc[-1]


def test_hitl_run_by_hand():
    """NoChange, hitl P = 10 s, N = 50 s, k = 1 (worked out in the comments)."""
    # m=1 t=0: untrained -> P1 = 0.5 -> 0; negative side: L=15 <= 50 -> o=1 due 15
    # m=2 t=10: nothing due; untrained -> 0; L unknown -> o=0 due 60
    # m=3 t=20: release 1 (pred 0, o=1, y=1), train 1; predict 1; positive: L=100 > 30 -> o=y=1 at 30
    # m=4 t=30: release 3 (pred 1, o=1, y=1); predict 1; L=5 <= 40 -> o=1 at max(5, 30) = 30: now
    # end: instance 2 pending
    result = evaluate(
        small_stream(),
        "NoChange",
        {"preset": "hitl", "pos_window": "10s", "neg_window": "50s"},
        {"scheme": "prequential", "folds": 1},
        seed=1,
        estimator="cumulative",
        every=1,
        keep_predictions=True,
    )
    log = result.predictions
    assert list(log.columns) == list(PREDICTION_COLUMNS)
    assert log["pred"].tolist() == [0, 0, 1, 1]
    assert log["proba"].tolist() == [0.5, 0.5, 1.0, 1.0]
    assert log["observed"].tolist() == [1, -1, 1, 1]
    assert np.array_equal(log["observed_at"], [15.0, np.nan, 30.0, 30.0], equal_nan=True)
    obs = result.folds[result.folds["reference"] == "observed"]
    assert obs["evaluated"].tolist() == [0, 0, 1, 3]
    assert obs["pending"].tolist() == [1, 2, 2, 1]
    assert obs["trained"].tolist() == [0, 0, 1, 3]
    assert obs["evaluated_now"].tolist() == [False, False, True, True]
    end = last_row(result)
    assert (end["tp"], end["fn"], end["fp"], end["tn"]) == (2, 1, 0, 0)
    assert end["recall_1"] == pytest.approx(2 / 3)
    # with flush, instance 2 is released at the end: pred 0 against o = y = 0
    flushed = evaluate(
        small_stream(),
        "NoChange",
        {"preset": "hitl", "pos_window": "10s", "neg_window": "50s"},
        {"scheme": "prequential", "folds": 1},
        seed=1,
        flush=True,
    )
    end = last_row(flushed)
    assert (end["tp"], end["fn"], end["fp"], end["tn"], end["pending"]) == (2, 1, 0, 1, 0)


def test_observed_and_true_references_differ_by_hand():
    # verification 10 s: instance 1 (y=1, L=15) is observed 0 at 10; instance 4 observed 1
    result = evaluate(
        small_stream(),
        "NoChange",
        {"preset": "verification", "window": "10s"},
        {"scheme": "prequential", "folds": 1},
        seed=1,
        flush=True,
        keep_predictions=True,
    )
    # m=1: pred 0, o=0 due 10.  m=2 t=10: release 1 -> train 0; pred 0; o=0 due 20.
    # m=3 t=20: release 2 -> train 0; pred 0; o=0 (L=100 > 30) due 30.
    # m=4 t=30: release 3; pred 0; L=5 -> o=1 now.  Observed: all predicted 0 vs o = 0,0,0,1.
    assert result.predictions["observed"].tolist() == [0, 0, 0, 1]
    obs, true = last_row(result, "observed"), last_row(result, "true")
    assert (obs["tn"], obs["fn"]) == (3, 1)
    assert (true["tn"], true["fn"]) == (1, 3)  # true labels 1, 0, 1, 1


def test_ideal_nochange_on_real_data_is_last_label(brackets_arff):
    """Ideal, k = 1, NoChange: the prediction of instance n is y_{n-1} (0 for the first), so the
    accuracy is the share of n with y_n == y_{n-1}; every label is evaluated at once."""
    from delaycv.data.convert import load_stream

    stream = load_stream(brackets_arff, preset="commit-guru")
    result = evaluate(
        stream,
        "NoChange",
        "ideal",
        {"scheme": "prequential"},
        seed=1,
        estimator="cumulative",
        every=5000,
    )
    y = stream.label.astype(int)
    previous = np.concatenate([[0], y[:-1]])
    end = last_row(result, "true")
    assert end["accuracy"] == pytest.approx(np.mean(previous == y), abs=1e-12)
    assert end["tp"] == int(np.sum((previous == 1) & (y == 1)))
    assert (end["evaluated"], end["pending"], end["seen"]) == (len(y), 0, len(y))
    assert result.folds["checkpoint"].unique().tolist() == [5000, 10000, len(y)]


def test_hitl_on_real_data_keeps_the_invariant(brackets_arff):
    from delaycv.data.convert import load_stream

    stream = load_stream(brackets_arff, preset="commit-guru").subset(0, 3000)
    result = evaluate(
        stream,
        "Prior",
        "hitl_7d_90d",
        {"scheme": "bootstrap", "folds": 4, "seed": 1},
        seed=1,
        every=250,
    )
    f = result.folds
    # la + ld is the effort of a commit-guru stream: the effort-aware measures follow METRICS
    assert list(f.columns) == [*FOLD_COLUMNS, *METRICS, *EFFORT_COLUMNS]
    assert (f["seen"] == f["checkpoint"]).all()
    assert (f["seen"] == f["evaluated"] + f["pending"] + f["skipped"]).all()
    assert (f["skipped"] == 0).all()
    end = f[f["checkpoint"] == 3000]
    assert (end["pending"] > 0).all()  # the last 90 days are not yet observed
    # observed labels miss positives that the true labels have
    obs = end[end["reference"] == "observed"].set_index("fold")
    true = end[end["reference"] == "true"].set_index("fold")
    assert (obs["tp"] + obs["fn"] <= true["tp"] + true["fn"]).all()
    assert (obs["classified"] == true["classified"]).all()


def test_trained_only_skips_untrained_instances():
    stream = random_stream(np.random.default_rng(3), 30)
    result = evaluate(
        stream,
        "tests.support.engine_bruteforce:OrderLearner",
        "ideal",
        {"scheme": "split", "folds": 3, "evaluate": "trained"},
        seed=1,
        every=10,
        keep_predictions=True,
    )
    f = result.folds
    end = f[f["checkpoint"] == 30]
    assert end["skipped"].tolist() == [20] * 9  # each split fold trains a third of 30
    assert end["evaluated"].tolist() == [10] * 9  # (3 folds x 3 references)
    assert (f["seen"] == f["evaluated"] + f["pending"] + f["skipped"]).all()
    log = result.predictions
    assert ((log["observed"] == -1) == (log["weight"] == 0)).all()
    # evaluate="all": the same folds evaluate everything, train the same third
    full = evaluate(
        stream,
        "tests.support.engine_bruteforce:OrderLearner",
        "ideal",
        {"scheme": "split", "folds": 3},
        seed=1,
    )
    end = full.folds
    assert end["evaluated"].tolist() == [30] * 9 and end["trained"].tolist() == [10] * 9


def test_noise_flips_scored_predictions_only():
    stream = random_stream(np.random.default_rng(5), 40)
    spec = "tests.support.engine_bruteforce:OrderLearner"
    args = ("hitl_5s_9s", {"scheme": "bootstrap", "folds": 2})
    OrderLearner.registry = []
    clean = evaluate(stream, spec, *args, seed=2, keep_predictions=True)
    calls_clean = [lr.calls for lr in OrderLearner.registry[-2:]]
    OrderLearner.registry = []
    flipped = evaluate(stream, spec, *args, seed=2, prediction_noise=1.0, keep_predictions=True)
    calls_flipped = [lr.calls for lr in OrderLearner.registry[-2:]]
    assert calls_clean == calls_flipped  # the learner and the policy see the clean prediction
    assert (flipped.predictions["pred"] == 1 - clean.predictions["pred"]).all()
    half = evaluate(stream, spec, *args, seed=2, prediction_noise=0.5, keep_predictions=True)
    again = evaluate(stream, spec, *args, seed=2, prediction_noise=0.5, keep_predictions=True)
    assert half.predictions.equals(again.predictions)  # seeded: reproducible
    share = (half.predictions["pred"] != clean.predictions["pred"]).mean()
    assert 0.2 < share < 0.8


def test_inspection_error_one_flips_every_inspected_label():
    stream = small_stream()
    base = {"preset": "delay", "window": "10s"}
    one = {"scheme": "prequential"}
    a = evaluate(stream, "NoChange", base, one, seed=1, flush=True, keep_predictions=True)
    b = evaluate(
        stream,
        "NoChange",
        {**base, "inspection_error": 1.0},
        one,
        seed=1,
        flush=True,
        keep_predictions=True,
    )
    assert a.predictions["observed"].tolist() == [1, 0, 1, 1]
    assert b.predictions["observed"].tolist() == [0, 1, 0, 0]


def test_threshold_is_strict_and_empty_is_half():
    stream = small_stream()
    one = {"scheme": "prequential"}
    r = evaluate(stream, "Prior", "ideal", one, seed=1, keep_predictions=True)
    # Prior: {} -> 0.5 (neg); after y=1: 1.0; after 1,0: 0.5 (neg, strict); after 1,0,1: 2/3
    assert r.predictions["proba"].tolist() == [0.5, 1.0, 0.5, pytest.approx(2 / 3)]
    assert r.predictions["pred"].tolist() == [0, 1, 0, 1]
    low = evaluate(stream, "Prior", "ideal", one, seed=1, threshold=0.4, keep_predictions=True)
    assert low.predictions["pred"].tolist() == [1, 1, 1, 1]


def test_checkpoint_positions():
    t = np.array([0, 5, 5, 9, 12, 20, 20, 21, 30, 31])
    assert checkpoint_positions(t, 3).tolist() == [3, 6, 9, 10]
    assert checkpoint_positions(t, None).tolist() == [10]
    assert checkpoint_positions(t, None, {"fractions": [0.25, 0.5, 1.0]}).tolist() == [3, 5, 10]
    # times: the last instance at or before T, from the first instance's time to the last's
    assert checkpoint_positions(t, None, {"times": [5, 20, 0, 31]}).tolist() == [1, 3, 7, 10]
    assert checkpoint_positions(t, 4, [1, 2]).tolist() == [1, 2, 4, 8, 10]
    # the values' kinds are checked once, by make_settings (tests/protocol/test_run_settings.py); here only
    # the positions against the stream's length
    with pytest.raises(ConfigError, match="integers in 1..10"):
        checkpoint_positions(t, 3, {"positions": [11]})


@pytest.mark.parametrize("outside", [-1, 32, 4_000_000_000, 30.5 - 31])
def test_a_checkpoint_time_the_stream_does_not_reach_is_refused(tmp_path, outside):
    # a time before the first instance asked for no checkpoint and one after the last for the
    # last instance's, which is always one: both were dropped without a word
    t = np.array([0, 5, 5, 9, 12, 20, 20, 21, 30, 31])
    message = (
        rf"key checkpoints.times: checkpoint time {outside!r} is outside the stream \(its "
        r"times run from 0 to 31\) \(expected times from the stream's first instance to its last\)"
    )
    with pytest.raises(ConfigError, match=message):
        checkpoint_positions(t, 3, {"times": [5, outside]})
    stream = Stream(
        time=t,
        label=np.zeros(10, dtype=np.int8),
        label_time=np.full(10, np.nan),
        features=pd.DataFrame({"x": np.arange(10.0)}),
    )
    write_stream(stream, tmp_path / "s.parquet")
    with pytest.raises(ConfigError, match=message):
        checkpoint_positions(open_stream(tmp_path / "s.parquet"), 3, {"times": [outside]})


def test_summary_by_hand():
    folds = pd.DataFrame(
        {
            "dataset": "d",
            "learner": "l",
            "seed": 1,
            "policy": "p",
            "fold": [0, 1, 2, 0, 1, 2],
            "reference": "observed",
            "estimator": "cumulative",
            "checkpoint": [5, 5, 5, 9, 9, 9],
            "time": [50, 50, 50, 90, 90, 90],
            "accuracy": [0.5, 0.7, 0.9, 0.4, np.nan, 0.6],
        }
    )
    s = summarize(folds)
    acc = s[s["metric"] == "accuracy"].set_index("checkpoint")
    assert acc.loc[5, "n_folds"] == 3 and acc.loc[5, "mean"] == pytest.approx(0.7)
    assert acc.loc[5, "std"] == pytest.approx(0.2)
    half = stats.t.ppf(0.975, 2) * 0.2 / math.sqrt(3)
    assert acc.loc[5, "ci_low"] == pytest.approx(0.7 - half)
    assert acc.loc[5, "ci_high"] == pytest.approx(0.7 + half)
    assert acc.loc[9, "n_folds"] == 2 and acc.loc[9, "mean"] == pytest.approx(0.5)
    assert acc.loc[9, "std"] == pytest.approx(math.sqrt(0.02))


def test_folds_subsets_concatenate_to_the_full_result():
    stream = random_stream(np.random.default_rng(11), 60)
    args = (
        "tests.support.engine_bruteforce:OrderLearner",
        "hitl_4s_2i",
        {"scheme": "bootstrap", "folds": 4},
    )
    kw = dict(seed=3, every=7, timing=False, keep_predictions=True)
    full = evaluate(stream, *args, **kw)
    parts = [evaluate(stream, *args, folds_subset=s, **kw) for s in ([0, 2], [1], [3])]
    joined = pd.concat([p.folds for p in parts]).sort_values(["fold"], kind="stable")
    assert joined.reset_index(drop=True).equals(full.folds)
    log = pd.concat([p.predictions for p in parts]).sort_values(["fold"], kind="stable")
    assert log.reset_index(drop=True).equals(full.predictions)


def _table(result):
    """The fold table without the run key ``seed`` (replicates are compared by their numbers)."""
    return result.folds.drop(columns="seed")


def test_replicate_seeds_redraw_the_bootstrap_weights():
    """GaussianNB is deterministic: two seeds differ only through their bootstrap weights."""
    stream = random_stream(np.random.default_rng(12), 80)
    spec, policy = "naive_bayes.GaussianNB", "hitl_4s_9s"
    kw = dict(every=10, timing=False, keep_predictions=True)
    boot = {"scheme": "bootstrap", "folds": 3}
    one, two = (evaluate(stream, spec, policy, boot, seed=s, **kw) for s in (1, 2))
    assert not _table(one).equals(_table(two))
    for fold in range(3):
        w1 = one.predictions[one.predictions["fold"] == fold]["weight"].to_numpy()
        w2 = two.predictions[two.predictions["fold"] == fold]["weight"].to_numpy()
        assert not np.array_equal(w1, w2)
    # the same seed again is the same run
    assert _table(evaluate(stream, spec, policy, boot, seed=2, **kw)).equals(_table(two))
    # a fixed split: every seed trains on the validation seed's weights, so for a deterministic
    # learner seeds 1 and 2 are duplicates (and so are they with cv)
    for validation in ({**boot, "fixed_split": True}, {"scheme": "cv", "folds": 3}):
        a, b = (evaluate(stream, spec, policy, validation, seed=s, **kw) for s in (1, 2))
        assert _table(a).equals(_table(b)) and a.predictions.equals(b.predictions)
    fixed = evaluate(stream, spec, policy, {**boot, "fixed_split": True}, seed=1, **kw)
    assert not _table(fixed).equals(_table(one))


def test_replicate_weights_of_a_fold_do_not_depend_on_the_other_folds():
    stream = random_stream(np.random.default_rng(4), 50)
    args = ("naive_bayes.GaussianNB", "ideal", {"scheme": "bootstrap", "folds": 4})
    kw = dict(every=10, timing=False, keep_predictions=True)
    for seed in (1, 2):
        full = evaluate(stream, *args, seed=seed, **kw)
        alone = evaluate(stream, *args, seed=seed, folds_subset=[2], **kw)
        assert alone.folds.reset_index(drop=True).equals(
            full.folds[full.folds["fold"] == 2].reset_index(drop=True)
        )
        assert alone.predictions.reset_index(drop=True).equals(
            full.predictions[full.predictions["fold"] == 2].reset_index(drop=True)
        )
    assert evaluate(stream, *args, seed=2, jobs=2, **kw).folds.equals(full.folds)


@pytest.mark.realdata
def test_hoeffding_tree_replicates_differ_on_real_data(brackets_csv):
    """Commit Guru (brackets, first 2000 commits): HoeffdingTree is deterministic, so seeds 1 and 2
    differ through their bootstrap weights, and are duplicates under a fixed split."""
    from delaycv.data.convert import load_stream

    stream = load_stream(brackets_csv, preset="commit-guru").subset(0, 2000)
    spec = "tree.HoeffdingTreeClassifier"
    kw = dict(every=500, timing=False)
    boot = {"scheme": "bootstrap", "folds": 3, "seed": 1}
    one, two = (evaluate(stream, spec, "hitl_7d_90d", boot, seed=s, **kw) for s in (1, 2))
    assert not _table(one).equals(_table(two))
    end1, end2 = (
        r.folds[r.folds["checkpoint"] == 2000].set_index(["fold", "reference"]) for r in (one, two)
    )
    assert (end1["weight"] != end2["weight"]).all()
    assert (end1["tp"] != end2["tp"]).any()
    fixed = {**boot, "fixed_split": True}
    a, b = (evaluate(stream, spec, "hitl_7d_90d", fixed, seed=s, **kw) for s in (1, 2))
    assert _table(a).equals(_table(b))


class CountingObserver:
    """A picklable observer: the evaluations (n, observed) and instances it saw."""

    def __init__(self, fold):
        self.fold, self.evaluations, self.instances = fold, [], 0

    def on_evaluation(self, n, time, pred, proba, observed, true, weight):
        self.evaluations.append((n, observed))

    def on_instance(self, n, time):
        self.instances += 1


def test_jobs_give_the_same_result_and_return_the_observers():
    stream = random_stream(np.random.default_rng(12), 80)
    args = ("naive_bayes.GaussianNB", "hitl_4s_9s", {"scheme": "bootstrap", "folds": 3})
    kw = dict(seed=1, every=10, timing=False, observer_factory=CountingObserver)
    one = evaluate(stream, *args, **kw)
    two = evaluate(stream, *args, jobs=2, **kw)
    assert one.folds.equals(two.folds) and one.summary.equals(two.summary)
    assert [o.fold for o in two.observers] == [0, 1, 2]
    assert [o.evaluations for o in two.observers] == [o.evaluations for o in one.observers]
    assert [o.instances for o in two.observers] == [80, 80, 80]
    end = one.folds[one.folds["checkpoint"] == 80]
    observed = end[end["reference"] == "observed"]
    assert [len(o.evaluations) for o in one.observers] == observed["evaluated"].tolist()


def test_folds_in_threads_give_the_same_result(monkeypatch):
    """Threads run the folds of MOA learners (their Java loop lets go of Python's lock); with
    any learner they give one thread's result: a fold shares only the chunk, which it reads."""
    stream = random_stream(np.random.default_rng(12), 300)
    args = ("naive_bayes.GaussianNB", "hitl_4s_9s", {"scheme": "bootstrap", "folds": 3})
    kw = dict(seed=1, every=25, timing=False, keep_predictions=True)
    one = evaluate(stream, *args, **kw)
    monkeypatch.setattr("delaycv.engine.run.folds_in_threads", lambda *args: True)
    reported = []
    threads = evaluate(stream, *args, jobs=2, progress=reported.append, **kw)
    assert one.folds.equals(threads.folds) and one.predictions.equals(threads.predictions)
    assert sum(reported) == 3 * 300


def test_timing_and_memory_columns():
    stream = random_stream(np.random.default_rng(1), 20)
    r = evaluate(stream, "tree.HoeffdingTreeClassifier", "ideal", {}, seed=1, every=10)
    assert (r.folds["cpu_seconds"] >= 0).all() and r.folds["model_bytes"].isna().all()
    r = evaluate(
        stream,
        "tree.HoeffdingTreeClassifier",
        "ideal",
        {},
        seed=1,
        every=10,
        measure_memory=True,
        timing=False,
    )
    assert r.folds["cpu_seconds"].isna().all() and (r.folds["model_bytes"] > 0).all()


def test_run_keys_and_run_evaluation():
    stream = small_stream()
    r = evaluate_dicts(
        stream,
        learner_spec={"class": "NoChange"},
        policy_spec={"preset": "hitl", "pos_window": "7d", "neg_window": "90d"},
        validation_spec={"scheme": "bootstrap", "folds": 2, "seed": 4},
        seed=9,
        estimator_spec={"kind": "fading", "alpha": 0.9},
        every=2,
        run_keys={"learner": "nc"},
    )
    f = r.folds
    assert set(f["dataset"]) == {"small"} and set(f["learner"]) == {"nc"}
    assert set(f["policy"]) == {"hitl_7d_90d"} and set(f["seed"]) == {9}
    assert set(f["estimator"]) == {"fading"}
    assert r.info["specs"]["estimator"] == {"kind": "fading", "alpha": 0.9}
    options = {
        "validation": {},
        "estimator": None,
        "effort_scope": None,
        "options": {"flsh": True},
    }
    with pytest.raises(ConfigError, match="key flsh"):
        workflow_settings(options, learner="NoChange", policy="ideal", seed=1, run_keys={})


class Exploding:
    """A stream stand-in whose data access fails: configuration errors must come first."""

    def __init__(self, stream):
        self._s = stream
        self.time, self.label, self.label_time = stream.time, stream.label, stream.label_time
        self.metadata = stream.metadata

    def __len__(self):
        return len(self._s)

    def records(self, start, stop):
        raise AssertionError("work started before the configuration was checked")


@pytest.mark.parametrize(
    "learner, policy, validation, kwargs, where",
    [
        ("tree.Nope", "ideal", {}, {}, "key learner.class"),
        (
            {"class": "tree.HoeffdingTreeClassifier", "params": {"delta": "x", "nope": 1}},
            "ideal",
            {},
            {},
            "key learner.params.nope",
        ),
        ("NoChange", {"preset": "hitl", "neg_window": "-5d"}, {}, {}, "key policy.neg_window"),
        ("NoChange", "ideal", {"scheme": "cv", "folds": 0}, {}, "key validation.folds"),
        ("NoChange", "ideal", {"scheme": "cv", "flods": 3}, {}, "key validation.flods"),
        (
            "NoChange",
            "ideal",
            {},
            {"estimator": {"kind": "fading", "width": 3}},
            "key estimator.width",
        ),
        ("NoChange", "ideal", {}, {"seed": -2}, "key seed"),
        ("NoChange", "ideal", {}, {"prediction_noise": 2.0}, "key prediction_noise"),
        ("NoChange", "ideal", {"folds": 2}, {"folds_subset": [5]}, "key folds_subset"),
        ("NoChange", "ideal", {}, {"every": -1}, "key checkpoints.every"),
    ],
)
def test_bad_configuration_fails_before_any_work(learner, policy, validation, kwargs, where):
    kwargs = {"seed": 1, **kwargs}
    with pytest.raises(ConfigError) as err:
        evaluate(Exploding(small_stream()), learner, policy, validation, **kwargs)
    assert err.value.location == where


def test_progress_counts_every_instance_of_every_fold():
    stream = random_stream(np.random.default_rng(2), 50)
    done = []
    evaluate(
        stream, "NoChange", "ideal", {"scheme": "split", "folds": 3}, seed=1, progress=done.append
    )
    assert sum(done) == 150


def _stream_with_holes(rows: int = 1500, rate: float = 0.15, seed: int = 4) -> Stream:
    """The default stream with missing values punched into four features (and whole rows of
    them: some instances miss several features)."""
    from delaycv.data.synthetic import generate_stream

    s = generate_stream(rows=rows, seed=1)
    rng = np.random.default_rng(seed)
    feats = s.features.copy()
    for name in ("la", "entropy", "exp", "nf"):
        feats.loc[rng.random(rows) < rate, name] = np.nan
    return Stream(s.time, s.label, s.label_time, features=feats, metadata=dict(s.metadata))


def _river_loop(frame: pd.DataFrame, labels, model):
    """Test then train with river itself, over x dicts built without the missing features."""
    names = list(frame.columns)
    probas, preds = [], []
    for row, y in zip(frame.itertuples(index=False), labels.tolist(), strict=True):
        x = {k: float(v) for k, v in zip(names, row, strict=True) if not math.isnan(v)}
        proba = model.predict_proba_one(x)
        total = sum(proba.values()) if proba else 0.0
        p1 = proba.get(1, 0.0) / total if total > 0 else 0.5
        probas.append(p1)
        preds.append(1 if p1 > 0.5 else 0)
        model.learn_one(x, y)
    return np.array(preds), np.array(probas)


@pytest.mark.parametrize(
    "spec",
    [
        {"class": "river.naive_bayes.GaussianNB"},
        {"class": "river.tree.HoeffdingTreeClassifier", "params": {"grace_period": 50}},
        {
            "pipeline": [
                {"class": "river.preprocessing.StandardScaler"},
                {"class": "river.linear_model.LogisticRegression"},
            ]
        },
    ],
    ids=["gaussian_nb", "hoeffding_tree", "scaler_logistic"],
)
def test_missing_values_score_as_a_river_loop_without_them(spec):
    """Issue 12: a missing value is left out of x, so the engine (ideal, prequential) gives the
    predictions and scores of a plain river loop over x dicts without those keys."""
    from river import metrics as river_metrics

    from delaycv.engine.learners import make_learner
    from delaycv.metrics import Cumulative, Metrics

    s = _stream_with_holes()
    assert sum(s.metadata["missing"].values()) > 700
    result = evaluate(
        s,
        spec,
        {"preset": "ideal"},
        {"scheme": "prequential", "folds": 1},
        seed=1,
        estimator={"kind": "cumulative"},
        every=len(s),
        keep_predictions=True,
    )
    preds, probas = _river_loop(s.features, s.label, make_learner(spec, seed=0))
    log = result.predictions
    assert np.array_equal(log["proba"].to_numpy(), probas)
    assert np.array_equal(log["pred"].to_numpy(), preds)
    hand = Metrics(Cumulative())
    for p, q, y in zip(preds.tolist(), probas.tolist(), s.label.tolist(), strict=True):
        hand.add(p, q, y)
    want = hand.snapshot()
    gmean = river_metrics.GeometricMean()
    for p, y in zip(preds.tolist(), s.label.tolist(), strict=True):
        gmean.update(y, p)
    for reference in ("observed", "true"):
        end = last_row(result, reference)
        for metric in ("gmean", "recall_1", "fpr_1", "accuracy", "auc", "log_loss"):
            assert end[metric] == pytest.approx(want[metric], rel=1e-12), metric
        assert end["gmean"] == pytest.approx(gmean.get(), rel=1e-9)
    assert 0.3 < want["gmean"] < 1.0  # a real score, not a learner broken by NaN


def test_a_checkpoint_time_outside_a_dated_stream_is_named_with_dates_and_not_of_positions():
    """The times of a stream of Unix seconds are named with their UTC dates (the user may have
    given a date); a stream of positions (no time column) has none."""
    import delaycv

    pairs = [({"x": float(i)}, i % 2) for i in range(20)]
    with pytest.raises(ConfigError) as info:
        delaycv.evaluate(pairs, "NoChange", folds=1, progress=False, checkpoints={"times": [25]})
    assert "checkpoint time 25 is outside the stream (its times run from 1 to 20)" in str(
        info.value
    )
    frame = pd.DataFrame({"t": 1_700_000_000 + np.arange(20), "label": [0, 1] * 10, "x": 1.0})
    with pytest.raises(ConfigError) as info:
        delaycv.evaluate(
            frame, "NoChange", time="t", folds=1, progress=False, checkpoints={"times": [0]}
        )
    assert (
        "checkpoint time 1970-01-01 00:00:00 UTC (Unix 0) is outside the stream (its times run "
        "from 2023-11-14 22:13:20 UTC (Unix 1700000000) to 2023-11-14 22:13:39 UTC (Unix "
        "1700000019))"
    ) in str(info.value)
