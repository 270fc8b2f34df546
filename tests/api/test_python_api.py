"""The Python API (issue 13): ``delaycv.evaluate(stream, model, policy=..., validation=...)``.

The same evaluation given as a river instance from Python or as a spec on the command line gives
the same fold table, whatever form the stream takes (Parquet path, DataFrame, (x, y) pairs).
"""

from __future__ import annotations

import doctest
import logging
import pickle
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from river import datasets, forest, linear_model, preprocessing, tree

import delaycv
from delaycv import api
from delaycv.cli import main
from delaycv.common import defaults as defaults_module
from delaycv.common.errors import ConfigError, InputError
from delaycv.data.stream import Stream
from delaycv.data.stream_file import read_stream, write_stream
from delaycv.data.synthetic import generate_stream
from tests.support.engine_runs import EndsItsWorker
from tests.support.engine_runs import evaluate as engine_evaluate
from tests.support.paths import REPO

POLICY = ["--policy", "hitl", "--pos-window", "3d", "--neg-window", "30d"]
API_POLICY = {"policy": "hitl", "pos_window": "3d", "neg_window": "30d"}


def test_doctests():
    for module in (api, defaults_module):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.attempted > 0 and result.failed == 0, module.__name__


@pytest.fixture(scope="module")
def stream_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("api") / "s.parquet"
    write_stream(generate_stream(rows=700, seed=3), path)
    return path


def cli_folds(stream_path, tmp_path, learner: list[str], *extra: str) -> pd.DataFrame:
    out = tmp_path / "cli-run"
    argv = ["evaluate", str(stream_path), *learner, *POLICY, "--folds", "3", "--every", "200"]
    assert main([*argv, *extra, "--no-timing", "--quiet", "--out", str(out)]) == 0
    folds = pd.read_parquet(out / "folds.parquet")
    # text columns come back from Parquet as pandas strings; in memory they are objects
    return folds.astype(
        {c: object for c in folds.columns if pd.api.types.is_string_dtype(folds[c])}
    )


def api_folds(stream, model, **kwargs) -> pd.DataFrame:
    kwargs = {**API_POLICY, "folds": 3, "every": 200, "timing": False, "progress": False, **kwargs}
    return delaycv.evaluate(stream, model, **kwargs).folds


def test_same_fold_table_as_the_cli_for_every_form_of_stream(stream_path, tmp_path):
    cli = cli_folds(
        stream_path,
        tmp_path,
        ["--learner", "tree.HoeffdingTreeClassifier"],
        "--param",
        "grace_period=30",
    )
    assert len(cli) == 3 * 4 * 3  # folds x checkpoints (200, 400, 600, 700) x references
    model = tree.HoeffdingTreeClassifier(grace_period=30)
    # the canonical Parquet path
    pd.testing.assert_frame_equal(api_folds(str(stream_path), model), cli)
    # a DataFrame with time, label, label_time and the features
    frame = pd.read_parquet(stream_path)
    pd.testing.assert_frame_equal(api_folds(frame, model, dataset="synthetic"), cli)
    # an iterable of (x, y) whose x carry the time, the reveal time and the effort
    stream = read_stream(stream_path)
    pairs = [
        ({**x, "time": int(t), "label_time": lt, "effort": e}, bool(y))
        for x, t, lt, e, y in zip(
            stream.records(),
            stream.time,
            stream.label_time,
            stream.effort,
            stream.label,
            strict=True,
        )
    ]
    pd.testing.assert_frame_equal(api_folds(iter(pairs), model, dataset="synthetic"), cli)
    # the same iterable with its columns under other names
    renamed = [
        (
            {k: v for k, v in x.items() if "time" not in k}
            | {"when": x["time"], "fixed_at": x["label_time"]},
            y,
        )
        for x, y in pairs
    ]
    got = api_folds(renamed, model, dataset="synthetic", time="when", label_time="fixed_at")
    pd.testing.assert_frame_equal(got, cli)


def test_instances_are_seeded_per_fold_as_specs_are(tmp_path):
    """ARF takes a seed: each fold's clone gets the fold's learner seed, exactly as a spec."""
    stream_path = tmp_path / "small.parquet"
    write_stream(generate_stream(rows=300, seed=4), stream_path)
    cli = cli_folds(
        stream_path, tmp_path, ["--learner", "forest.ARFClassifier"], "--param", "n_models=2"
    )
    got = api_folds(stream_path, forest.ARFClassifier(n_models=2))
    pd.testing.assert_frame_equal(got, cli)
    # prequential folds differ only by their learner seeds: they must differ
    runs = api_folds(
        stream_path, forest.ARFClassifier(n_models=2), validation="prequential", folds=2
    )
    last = runs[(runs["checkpoint"] == 300) & (runs["reference"] == "true")]
    assert last["accuracy"].nunique() == 2
    # a seed set in the instance is kept, for every fold (as a spec's seed is)
    fixed = cli_folds(
        stream_path,
        tmp_path,
        ["--learner", "forest.ARFClassifier"],
        "--param",
        "n_models=2",
        "--param",
        "seed=7",
    )
    pd.testing.assert_frame_equal(
        api_folds(stream_path, forest.ARFClassifier(n_models=2, seed=7)), fixed
    )


def test_a_pipeline_instance_equals_the_pipeline_spec(stream_path, tmp_path):
    spec = tmp_path / "lr.yaml"
    spec.write_text(
        "pipeline:\n  - class: preprocessing.StandardScaler\n  - class: linear_model.LogisticRegression\n"
    )
    cli = cli_folds(stream_path, tmp_path, ["--learner", str(spec)])
    model = preprocessing.StandardScaler() | linear_model.LogisticRegression()
    got = api_folds(stream_path, model)
    assert set(got["learner"]) == {"StandardScaler|LogisticRegression"}
    pd.testing.assert_frame_equal(got, cli)


def test_a_river_dataset_with_times_from_positions():
    """Phishing ships with river (no download); without a time key, instance n arrives at n."""
    phishing = datasets.Phishing()
    pairs = list(phishing)
    result = delaycv.evaluate(
        phishing,
        tree.HoeffdingTreeClassifier(),
        policy="delay",
        window="50i",
        folds=2,
        every=250,
        predictions=True,
        timing=False,
        progress=False,
    )
    by_hand = Stream(
        time=np.arange(1, len(pairs) + 1),
        label=np.array([int(y) for _, y in pairs]),
        label_time=None,
        features=pd.DataFrame([x for x, _ in pairs]),
        metadata={"dataset": "Phishing"},  # (a river dataset's class name)
    )
    expected = engine_evaluate(
        by_hand,
        {"class": "tree.HoeffdingTreeClassifier"},
        {"preset": "delay", "window": "50i"},
        {"scheme": "bootstrap", "folds": 2},
        every=250,
        keep_predictions=True,
        timing=False,
    )
    pd.testing.assert_frame_equal(result.folds, expected.folds)
    pd.testing.assert_frame_equal(result.predictions, expected.predictions)
    assert result.folds["time"].tolist()[:2] == [250, 250]  # the time is the position
    assert sorted(set(result.folds["checkpoint"])) == [250, 500, 750, 1000, 1250]
    assert set(result.folds["policy"]) == {"delay_50i"}
    # pairs of another kind are a stream
    again = delaycv.evaluate(
        pairs[:300], tree.HoeffdingTreeClassifier(), policy="delay", window="50i", folds=2
    )
    assert set(again.folds["dataset"]) == {"stream"}


def test_the_model_instance_is_not_changed():
    stream = generate_stream(rows=400, seed=5)
    fresh = forest.ARFClassifier(n_models=2, seed=3)
    before = pickle.dumps(fresh)
    first = delaycv.evaluate(stream, fresh, folds=2, timing=False, progress=False)
    assert pickle.dumps(fresh) == before
    # a trained instance stays trained, and each fold starts from an untrained clone
    trained = forest.ARFClassifier(n_models=2, seed=3)
    for x, y in zip(stream.records(0, 200), stream.label[:200].tolist(), strict=True):
        trained.learn_one(x, y)
    state = pickle.dumps(trained)
    again = delaycv.evaluate(stream, trained, folds=2, timing=False, progress=False)
    assert pickle.dumps(trained) == state
    pd.testing.assert_frame_equal(again.folds, first.folds)


def test_defaults_and_results():
    stream = generate_stream(rows=300, seed=2)
    result = delaycv.evaluate(stream, tree.HoeffdingTreeClassifier(), progress=False)
    folds = result.folds
    assert set(folds["policy"]) == {defaults_module.POLICY}
    assert folds["fold"].nunique() == defaults_module.FOLDS
    assert set(folds["estimator"]) == {defaults_module.ESTIMATOR}
    assert result.predictions is None and isinstance(result.summary, pd.DataFrame)
    assert set(result.summary["metric"]) >= {"gmean", "recall_1", "accuracy"}


def test_labels_by_name_and_datetimes():
    stream = generate_stream(rows=300, seed=2)
    frame = pd.DataFrame(stream.records())
    frame["when"] = pd.to_datetime(stream.time, unit="s", utc=True)
    frame["class"] = np.where(stream.label == 1, "buggy", "clean")
    got = delaycv.evaluate(
        frame, "NoChange", time="when", label="class", positive="buggy", folds=2, progress=False
    ).folds
    ref = delaycv.evaluate(
        Stream(
            time=stream.time,
            label=stream.label,
            label_time=None,
            features=pd.DataFrame(stream.records()),
            metadata={"dataset": "dataframe"},
        ),
        "NoChange",
        folds=2,
        progress=False,
    ).folds
    cols = [c for c in got.columns if c != "cpu_seconds"]
    pd.testing.assert_frame_equal(got[cols], ref[cols])


HITL_1D_15D = {"preset": "hitl", "pos_window": "1d", "neg_window": "15d"}


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"policy": "hitl"}, ConfigError, ["key policy.pos_window", "no default window"]),
        ({"policy": "verification"}, ConfigError, ["key policy.window"]),
        ({"policy": "delay", "window": 7}, ConfigError, ["key policy.window", "7d, 7h, 7s or 7i"]),
        ({"policy": "hitl_7d_90d", "window": "3d"}, ConfigError, ["key window", "hitl_7d_90d"]),
        ({"validation": "boot"}, ConfigError, ["key validation.scheme"]),
        ({"validation": {"folds": 3}, "folds": 4}, ConfigError, ["key folds"]),
        ({"estimator": {"kind": "fading", "alpha": 3}}, ConfigError, ["key estimator.alpha"]),
        ({"nonsense": 1}, ConfigError, ["key nonsense"]),
        ({"time": "when"}, InputError, ["no column 'when'"]),
        ({"label": "y"}, InputError, ["no column 'y'"]),
        ({"seed": 2**70}, ConfigError, ["key seed: seed 1180591620717411303424 is out of range"]),
        ({"seed": -1}, ConfigError, ["key seed: seed -1 is out of range"]),
        (
            {"validation": {"scheme": "bootstrap", "seed": 2**70}},
            ConfigError,
            ["key validation.seed: seed 1180591620717411303424 is out of range", "2**63 - 1"],
        ),
        (
            {"policy": {**HITL_1D_15D, "name": "hitl_7d_90d"}},
            ConfigError,
            ["key policy.name", "named hitl_7d_90d is hitl P = 1d, N = 15d", "P = 7d, N = 90d"],
        ),
    ],
)
def test_errors_name_the_argument(kwargs, error, words):
    frame = pd.read_parquet(_tiny_parquet())
    with pytest.raises(error) as err:
        delaycv.evaluate(frame, tree.HoeffdingTreeClassifier(grace_period=-1 + 2), **kwargs)
    for word in words:
        assert word in str(err.value)


def test_bad_streams_and_models_are_named():
    frame = pd.read_parquet(_tiny_parquet())
    with pytest.raises(InputError, match="column label.*'yes'.*positive="):
        delaycv.evaluate(frame.assign(label="yes"), "NoChange", progress=False)
    pairs = [({"a": 1.0, "time": 5}, 1), ({"a": 2.0}, 0)]
    with pytest.raises(InputError, match="item 2 has no 'time'"):
        delaycv.evaluate(pairs, "NoChange", progress=False)
    with pytest.raises(InputError, match="time decreases at row 2 .*sort them by time first"):
        delaycv.evaluate([({"time": 5}, 1), ({"time": 4}, 0)], "NoChange", progress=False)
    with pytest.raises(ConfigError, match="grace_period"):
        delaycv.evaluate(
            frame, {"class": "tree.HoeffdingTreeClassifier", "params": {"grace_period": 0}}
        )
    with pytest.raises(ConfigError, match="StandardScaler has no predict_proba_one"):
        delaycv.evaluate(frame, preprocessing.StandardScaler())


def test_a_feature_of_datetimes_is_its_unix_seconds():
    """A date column among the features was read as text: each instance's own category (a MOA
    learner told thousands of values), a feature that measures nothing. It is its Unix seconds,
    as an ARFF date attribute converts, and a duration its seconds, missing ones missing."""
    frame = pd.DataFrame(
        {"time": 1_600_000_000 + 60 * np.arange(20), "label": [0, 1] * 10, "a": np.arange(20.0)}
    )
    dates = pd.to_datetime(frame["time"], unit="s")
    seconds = frame["time"].astype(float)
    for extra, want in [
        (dates, seconds),
        (dates.dt.tz_localize("UTC").dt.tz_convert("Europe/Berlin"), seconds),
        (dates - dates.iloc[0], 60.0 * np.arange(20)),
        (dates.where(frame.index != 3), seconds.where(frame.index != 3)),
    ]:
        for given in (frame.assign(when=extra),
                      [({"time": t, "when": w}, y) for t, w, y in
                       zip(frame["time"], extra, frame["label"], strict=True)]):  # fmt: skip
            stream = api.as_stream(given)
            np.testing.assert_array_equal(stream.features["when"].to_numpy(), np.asarray(want))
    assert api.as_stream(frame.assign(when=dates.where(frame.index != 3))).metadata["missing"] == {
        "when": 1
    }


def test_a_positive_class_that_never_occurs_is_refused():
    """positive="1" (a string, as on a command line) against labels 0 and 1 made every label a
    0 without a word: a stream without a positive, every recall NaN."""
    frame = pd.DataFrame(
        {"time": 1_600_000_000 + 60 * np.arange(20), "label": [0, 1] * 10, "a": np.arange(20.0)}
    )
    with pytest.raises(InputError) as err:
        delaycv.evaluate(frame, "NoChange", positive="1", progress=False)
    assert str(err.value) == (
        "column label: positive='1' never occurs (its values: 0, 1) (expected positive= one of "
        "the values, of their type)"
    )
    pairs = [
        ({"time": t}, "buggy" if y else "clean")
        for t, y in zip(frame["time"], frame["label"], strict=True)
    ]
    with pytest.raises(
        InputError, match="y: positive='Buggy' never occurs \\(its values: 'clean', 'buggy'\\)"
    ):
        delaycv.evaluate(pairs, "NoChange", positive="Buggy", progress=False)
    assert delaycv.evaluate(pairs, "NoChange", positive="buggy", folds=2, progress=False)


def test_a_missing_label_is_refused_whatever_its_type():
    """pandas' NA in a nullable boolean column failed with pandas' own ValueError; None among
    text labels with positive= was read as a 0 (a clean commit) without a word."""
    frame = pd.DataFrame(
        {"time": 1_600_000_000 + 60 * np.arange(20), "label": [0, 1] * 10, "a": np.arange(20.0)}
    )
    flags = frame["label"].astype(bool).astype("boolean")
    words = frame["label"].map({1: "buggy", 0: "clean"})
    for labels, positive in [
        (flags.where(frame.index != 4, pd.NA), None),
        (words.where(frame.index != 4, None), "buggy"),
        (frame["label"].astype(float).where(frame.index != 4), None),
    ]:
        with pytest.raises(InputError) as err:
            delaycv.evaluate(frame.assign(label=labels), "NoChange", positive=positive)
        assert str(err.value).startswith("column label: a missing value at row 5 (expected a "
                                         "label on every row"), str(err.value)  # fmt: skip


@pytest.mark.parametrize(
    "change, text",
    [
        ({"time": lambda f: f["time"] + 0.5}, "column time: value 1600000000.5 at row 1"),
        (
            {"time": lambda f: f["time"].where(f.index != 3)},
            "column time: a missing value at row 4",
        ),
        ({"time": "x"}, "column time: values of dtype str such as 'x'"),
        ({"label": lambda f: f["label"].where(f.index != 1, 2)}, "column label: value 2 at row 2"),
        (
            {"label": lambda f: f["label"].where(f.index != 2)},
            "column label: a missing value at row 3",
        ),
    ],
)
def test_a_bad_value_of_a_dataframe_is_shown_as_it_is(change, text):
    # the value as the user wrote it: no numpy repr (np.float64(...)), no column named twice
    frame = pd.DataFrame(
        {"time": 1_600_000_000 + 60 * np.arange(20), "label": [0, 1] * 10, "a": np.arange(20.0)}
    )
    with pytest.raises(InputError) as err:
        delaycv.evaluate(frame.assign(**change), "NoChange", progress=False)
    assert str(err.value).startswith(f"{text} (expected "), str(err.value)


def test_a_fix_link_column_given_as_label_time_is_refused(brackets_csv):
    # Commit Guru's fix_unix_timestamp is a link on the fixing commit (-1: none), not the reveal
    # time of the row's own label: every clean commit would be observed as 1 at its arrival
    frame = pd.read_csv(brackets_csv)
    names = {"time": "author_date_unix_timestamp", "label": "contains_bug"}
    with pytest.raises(InputError) as err:
        delaycv.evaluate(
            frame, "NoChange", label_time="fix_unix_timestamp", policy="hitl_7d_90d", **names
        )
    clean = int((frame["contains_bug"] == 0).sum())
    first = int((frame["contains_bug"] == 0).to_numpy().argmax()) + 1
    assert str(err.value).startswith(
        f"argument stream: stream label_time at row {first} is -1.0 on an instance of label 0 "
        f"({clean} such rows)"
    )
    assert "fix_unix_timestamp, is no label_time" in str(err.value)
    # the same pairs, as a river dataset gives them, are refused alike
    pairs = [({"time": 10, "label_time": 15}, 1), ({"time": 20, "label_time": 25}, 0)]
    with pytest.raises(InputError, match="label_time at row 2 is 25.0 on an instance of label 0"):
        delaycv.evaluate(pairs, "NoChange", policy="hitl_7d_90d", progress=False)


def test_a_time_series_indexed_by_its_times_is_told_how_to_give_them():
    frame = pd.DataFrame(
        {"label": [0, 1, 0, 1], "x": [1.0, 2.0, 3.0, 4.0]},
        index=pd.to_datetime([1_600_000_000 + 60 * i for i in range(4)], unit="s"),
    )
    cases = [
        (frame, "its index holds datetimes: frame.reset_index(names='time')"),
        (frame.rename_axis("when"), "its index 'when' holds datetimes: frame.reset_index() and "
         "time='when'"),
        (frame.rename_axis("time"), "its index holds time: frame.reset_index()"),
        (frame.reset_index(names="time").set_index(["time", "label"]),
         "its index holds time, label: frame.reset_index()"),
    ]  # fmt: skip
    for given, hint in cases:
        with pytest.raises(InputError) as err:
            delaycv.evaluate(given, "NoChange", progress=False)
        assert str(err.value).endswith(f"{hint})"), str(err.value)
    text = frame.reset_index(names="when").assign(when=lambda f: f["when"].astype(str))
    with pytest.raises(InputError) as err:  # (dates as text: how to parse them)
        delaycv.evaluate(text, "NoChange", time="when", progress=False)
    assert str(err.value).endswith(
        "datetimes; text dates are parsed first: frame['when'] = pd.to_datetime(frame['when']))"
    ), str(err.value)
    told = delaycv.evaluate(frame.reset_index(names="time"), "NoChange", folds=2, progress=False)
    assert told.info["instances"] == 4
    with pytest.raises(InputError) as err:  # (an index that holds nothing asked for: no hint)
        delaycv.evaluate(frame.reset_index(drop=True), "NoChange", progress=False)
    assert str(err.value).endswith("its columns: label, x)")


def test_fix_links_left_on_the_positives_are_a_warning(brackets_csv, caplog):
    # the next step after the refusal above: NaN on the clean commits, the links kept on the
    # positives; a link is the time of the commit the fix fixes, so almost every positive would
    # be observed on arrival (or at -1, 1969): the run is not refused, it says so
    frame = pd.read_csv(brackets_csv)
    frame["fix_unix_timestamp"] = frame["fix_unix_timestamp"].where(frame["contains_bug"] == 1)
    names = {"time": "author_date_unix_timestamp", "label": "contains_bug"}
    with caplog.at_level(logging.WARNING, logger="delaycv.api"):
        result = delaycv.evaluate(
            frame, "NoChange", label_time="fix_unix_timestamp", policy="hitl_7d_90d",
            folds=2, every=5000, progress=False, **names,
        )  # fmt: skip
    positive = frame["contains_bug"] == 1
    early = positive & (frame["fix_unix_timestamp"] < frame["author_date_unix_timestamp"])
    first = int(early.to_numpy().argmax()) + 1
    text = result.info["warnings"][0]
    assert text.startswith(
        f"column fix_unix_timestamp: {early.sum()} of {positive.sum()} positives are revealed "
        f"before their own time (the first at row {first}: label_time "
    ), text
    assert "a column of fix links is none, such as Commit Guru's fix_unix_timestamp" in text
    assert [r.getMessage() for r in caplog.records if r.name == "delaycv.api"] == [text]
    # pairs: the row and both dates
    pairs = [({"time": 86_400, "label_time": 0}, 1), ({"time": 90_000}, 0)]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="delaycv.api"):
        stream = api.as_stream(pairs)
    said = caplog.records[0].getMessage()
    assert said.startswith(
        "key label_time: 1 of 1 positives are revealed before their own time (the first at row "
        "1: label_time 1970-01-01 00:00:00 UTC (Unix 0), time 1970-01-02 00:00:00 UTC (Unix "
        "86400)): a policy observes each such label as soon as its instance arrives"
    ), said
    assert stream.label_time[0] == 0  # kept as given
    # reveals at or after arrival: no warning
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="delaycv.api"):
        api.as_stream([({"time": 10, "label_time": 10}, 1), ({"time": 20}, 0)])
        api.as_stream(pd.read_parquet(_tiny_parquet()))
    assert not caplog.records


def test_time_units_of_a_dataframe():
    frame = pd.read_parquet(_tiny_parquet())
    from delaycv.api import as_stream

    ref = as_stream(frame)
    ms = frame.assign(time=frame["time"] * 1000 + 999, label_time=frame["label_time"] * 1000)
    with pytest.raises(InputError) as err:
        delaycv.evaluate(ms, "NoChange", progress=False)
    assert str(err.value).startswith(
        f"column time: value {frame['time'][0] * 1000 + 999} at row 1 is after 9999-12-31 "
        "as Unix seconds: it looks like milliseconds (time_unit='ms')"
    )
    got = as_stream(ms, time_unit="ms")
    assert np.array_equal(got.time, ref.time)
    with pytest.raises(InputError) as err:  # seconds read as milliseconds: all in 1970
        as_stream(frame, time_unit="ms")
    assert str(err.value).startswith(
        f"column time: values {frame['time'].min()} to {frame['time'].max()} read as "
        "milliseconds all lie in 1970"
    )
    assert "they look like seconds (time_unit='s')" in str(err.value)
    assert np.array_equal(got.label_time, ref.label_time, equal_nan=True)
    dates = frame.assign(
        time=pd.to_datetime(frame["time"], unit="s", utc=True).dt.tz_convert("Europe/Paris"),
        label_time=pd.to_datetime(frame["label_time"], unit="s"),
    )
    got = as_stream(dates)
    assert np.array_equal(got.time, ref.time)
    assert np.array_equal(got.label_time, ref.label_time, equal_nan=True)
    with pytest.raises(ConfigError, match="unknown time unit 'sec'"):
        delaycv.evaluate(frame, "NoChange", time_unit="sec", progress=False)
    with pytest.raises(ConfigError, match="a canonical stream stores seconds"):
        as_stream(_tiny_parquet(), time_unit="ms")
    # evaluate reads a path chunk by chunk, past as_stream: the same checks (it ignored both)
    with pytest.raises(ConfigError, match="a canonical stream stores seconds"):
        delaycv.evaluate(str(_tiny_parquet()), "NoChange", time_unit="ms", progress=False)
    with pytest.raises(ConfigError, match="unknown time unit 'sec'"):
        delaycv.evaluate(str(_tiny_parquet()), "NoChange", time_unit="sec", progress=False)


_TINY: list = []


def _tiny_parquet():
    if not _TINY:
        import tempfile
        from pathlib import Path

        path = Path(tempfile.mkdtemp()) / "tiny.parquet"
        write_stream(generate_stream(rows=60, seed=1), path)
        _TINY.append(path)
    return _TINY[0]


def test_the_readme_example_runs(tmp_path, monkeypatch):
    """The README's "From Python" block, on a small stream in place of the default one."""

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## From Python", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    stream = tmp_path / "resources" / "default.parquet"  # (the README's `delaycv generate`)
    write_stream(generate_stream(rows=600, seed=1), stream)
    code = code.replace("folds=10", "folds=3")
    *body, last = code.strip().splitlines()
    namespace: dict = {}
    exec("\n".join(body), namespace)  # noqa: S102 (our own README)
    shown = eval(last, namespace)  # noqa: S307
    assert set(shown["reference"]) == {"observed", "true", "corrected"} and set(
        shown["checkpoint"]
    ) == {600}
    assert (shown["n_folds"] == 3).all() and shown["mean"].between(0, 1).all()


def _run_script(tmp_path, name: str, body: str) -> subprocess.CompletedProcess:
    script = tmp_path / name
    script.write_text(body)
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, check=False
    )


SCRIPT = """import delaycv
from river import naive_bayes
{define}
with open("imports.txt", "a") as f:
    print("imported", file=f)
{call}
"""
CALL = (
    "result = delaycv.evaluate({stream!r}, {model}, policy='delay', window='1d', folds=2, "
    "every=200, progress=False, jobs=2)\nprint(repr(result))"
)


def test_a_script_without_a_main_guard_runs_folds_in_processes(stream_path, tmp_path):
    """Worker processes import the main script again (multiprocessing's fork server), which
    would run a script's top level again in each: where nothing they are sent names the script,
    they do not import it, and the script runs once."""
    call = CALL.format(stream=str(stream_path), model="naive_bayes.GaussianNB()")
    done = _run_script(tmp_path, "plain.py", SCRIPT.format(define="", call=call))
    assert done.returncode == 0, done.stderr
    assert "EvaluationResult(" in done.stdout and "folds=2" in done.stdout
    assert (tmp_path / "imports.txt").read_text().count("imported") == 1


def test_a_learner_class_of_the_script_needs_its_main_guard(stream_path, tmp_path):
    """A learner class written in the script: the workers must import the script to read it; one
    that calls delaycv at its top level is stopped in each worker, with an error that says what
    to write, and the call fails with one that says the same."""
    define = "class MyNB(naive_bayes.GaussianNB):\n    pass\n"
    call = CALL.format(stream=str(stream_path), model="MyNB()")
    done = _run_script(tmp_path, "own.py", SCRIPT.format(define=define, call=call))
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "delaycv.common.errors.ConfigError: argument jobs: a worker process of the folds ended "
        f"before its results, having imported {tmp_path / 'own.py'} to read the learner or "
        "observer the script defines (its error is above) (expected the script's calls under "
        'if __name__ == "__main__":'
    ), done.stderr
    assert (
        "delaycv is called in a worker process of delaycv that is still starting: it imports "
        f"{tmp_path / 'own.py'}"
    ) in done.stderr
    # with the guard, the workers read the class and nothing more runs
    guarded = "if __name__ == '__main__':\n    " + call.replace("\n", "\n    ")
    (tmp_path / "imports.txt").unlink()
    done = _run_script(tmp_path, "guarded.py", SCRIPT.format(define=define, call=guarded))
    assert done.returncode == 0, done.stderr
    assert "learner='MyNB'" in done.stdout
    assert (tmp_path / "imports.txt").read_text().count("imported") == 3  # (and 2 workers)


def test_a_learner_class_of_an_interactive_session_is_named(stream_path, tmp_path):
    code = (
        "import delaycv\nfrom river import naive_bayes\n"
        "class MyNB(naive_bayes.GaussianNB):\n    pass\n"
        + CALL.format(stream=str(stream_path), model="MyNB()")
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert done.returncode == 1
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith(
            "argument jobs: a worker process of the folds ended before its results: the learner or "
            "observer is defined in this interactive session, which worker processes cannot import "
            "(expected the learner's class in a module of its own (a .py file imported here), or "
            "jobs=1)"
        )
    ), done.stderr


def test_a_worker_that_ends_without_its_results_is_named(stream_path):
    with pytest.raises(ConfigError, match="a worker process of the folds ended before its results"):
        delaycv.evaluate(stream_path, EndsItsWorker(), folds=2, every=200, progress=False, jobs=2)
