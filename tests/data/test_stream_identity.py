"""One identity per stream's content, whatever the file's form (``delaycv.data.identity``): a
converted ``.parquet`` and its source CSV, or a CSV and a copy with CRLF line endings, are one
stream; ``delaycv check``, ``merge`` and ``rank`` refuse two dataset names for it (they passed
``check`` and were ranked as two datasets, Friedman's n inflated), and ``rank`` refuses one
dataset in two tables (it averaged two disagreeing tables of one dataset without a word)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from delaycv.cli import main
from delaycv.data.convert import load_stream
from delaycv.data.identity import ContentDigest
from delaycv.data.stream import Stream
from delaycv.data.stream_file import open_stream, read_stream, write_stream
from delaycv.data.synthetic import generate_stream


def _stream(n: int, seed: int, categorical: bool = False) -> Stream:
    rng = np.random.default_rng(seed)
    features = {"x": rng.normal(size=n), "y": np.where(rng.random(n) < 0.1, np.nan, 1.0)}
    if categorical:
        features["c"] = pd.Categorical(rng.choice(["a", "bb", None], n))
    label = rng.integers(0, 2, n)
    return Stream(
        time=np.sort(rng.integers(1_500_000_000, 1_500_100_000, n)),
        label=label,
        label_time=np.where((label == 1) & (rng.random(n) < 0.5), 1_600_000_000.0, np.nan),
        features=pd.DataFrame(features),
        effort=rng.integers(0, 100, n).astype(float),
    )


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 300), st.integers(0, 10**6), st.lists(st.integers(1, 299), max_size=4))
def test_the_digest_is_the_same_in_any_chunks(n, seed, cuts):
    stream = _stream(n, seed, categorical=True)
    bounds = [0, *sorted({c for c in cuts if c < n}), n]
    digest = ContentDigest(stream.features.columns)
    for start, stop in zip(bounds, bounds[1:], strict=False):
        part = stream.subset(start, stop)
        digest.update(part.time, part.label, part.label_time, part.features)
    assert digest.hexdigest() == stream.content_digest()


def test_what_changes_the_digest_and_what_does_not(tmp_path):
    stream = _stream(200, 1, categorical=True)
    digest = stream.content_digest()
    write_stream(stream, tmp_path / "s.parquet")
    # the file records it; the file read back, in memory or batch by batch, has it too
    meta = json.loads(pq.read_schema(tmp_path / "s.parquet").metadata[b"delaycv"])
    assert meta["content_sha256"] == digest
    assert read_stream(tmp_path / "s.parquet").content_digest() == digest
    file = open_stream(tmp_path / "s.parquet")
    file._recorded = None  # computed from the file, batch by batch
    assert file.content_digest() == digest
    # the effort and the metadata leave the instances as they are
    other = Stream(
        stream.time,
        stream.label,
        stream.label_time,
        stream.features,
        metadata={"dataset": "another name"},
        effort=None,
    )
    assert other.content_digest() == digest
    # a value, a time, a label, a reveal time or a feature's name is another stream
    for change in ("x", "time", "label", "label_time", "name"):
        features = stream.features.copy()
        time, label, label_time = stream.time.copy(), stream.label.copy(), stream.label_time.copy()
        if change == "x":
            features.loc[5, "x"] += 1e-12
        elif change == "time":
            time[-1] += 1
        elif change == "label":
            label[3], label_time[3] = 1 - label[3], np.nan  # (a label 0 has no reveal time)
        elif change == "label_time":
            i = int(np.flatnonzero(label == 1)[0])
            label_time[i] = 1_600_000_001.0 if label_time[i] == label_time[i] else 1.6e9
        else:
            features = features.rename(columns={"y": "z"})
        changed = Stream(time, label, label_time, features)
        assert changed.content_digest() != digest, change


def test_a_csv_its_crlf_copy_and_its_stream_are_one_content(tmp_path, brackets_csv, brackets_arff):
    crlf = tmp_path / "crlf.csv"
    crlf.write_bytes(brackets_csv.read_bytes().replace(b"\n", b"\r\n"))
    digest = load_stream(brackets_csv, preset="commit-guru").content_digest()
    assert load_stream(crlf, preset="commit-guru").content_digest() == digest
    write_stream(load_stream(brackets_csv, preset="commit-guru"), tmp_path / "b.parquet")
    assert open_stream(tmp_path / "b.parquet").content_digest() == digest
    # the ARFF holds the values rounded to 6 decimals: another content
    assert load_stream(brackets_arff, preset="commit-guru").content_digest() != digest


# --------------------------------------------------------------------------- delaycv check


def _study(datasets: dict) -> dict:
    return {
        "datasets": datasets,
        "learners": {"nc": {"class": "NoChange"}},
        "policies": {"ideal": {"preset": "ideal"}},
        "seeds": [1],
    }


@pytest.fixture
def files(tmp_path, monkeypatch, brackets_csv):
    monkeypatch.chdir(tmp_path)
    shutil.copy(brackets_csv, tmp_path / "raw.csv")
    (tmp_path / "crlf.csv").write_bytes(brackets_csv.read_bytes().replace(b"\n", b"\r\n"))
    write_stream(load_stream(brackets_csv, preset="commit-guru"), tmp_path / "raw.parquet")
    stream = generate_stream(rows=300, seed=2)
    write_stream(stream, tmp_path / "g.parquet")
    # the same instances under another name, in another file (its bytes differ)
    renamed = Stream(
        stream.time,
        stream.label,
        stream.label_time,
        stream.features,
        metadata={**stream.metadata, "dataset": "other"},
        effort=stream.effort,
    )
    write_stream(renamed, tmp_path / "g2.parquet")
    assert (tmp_path / "g.parquet").read_bytes() != (tmp_path / "g2.parquet").read_bytes()
    return tmp_path


RAW = {"preset": "commit-guru"}


@pytest.mark.parametrize(
    "datasets, words",
    [
        (
            {"a": {"path": "raw.csv", **RAW}, "b": {"path": "crlf.csv", **RAW}},
            "key datasets.b.path: the same content as the file of dataset 'a', 'raw.csv' (the "
            "same text, whatever its line endings)",
        ),
        (
            {"a": {"path": "raw.csv", **RAW}, "b": {"path": "raw.parquet"}},
            "key datasets.b.path: the same stream as dataset 'a', 'raw.csv' (the same content, "
            "whatever the files' form)",
        ),
        (
            {"a": {"path": "raw.parquet"}, "b": {"path": "crlf.csv", **RAW}},
            "key datasets.b.path: the same stream as dataset 'a', 'raw.parquet'",
        ),
        (
            {"a": {"path": "g.parquet"}, "b": {"path": "g2.parquet"}},
            "key datasets.b.path: the same stream as dataset 'a', 'g.parquet'",
        ),
    ],
    ids=["crlf", "csv-and-its-stream", "stream-and-a-crlf-copy", "two-stream-files"],
)
def test_check_refuses_one_stream_under_two_names(files, capsys, datasets, words):
    (files / "my.yaml").write_text(yaml.safe_dump(_study(datasets)))
    assert main(["check", "my.yaml"]) == 2
    err = capsys.readouterr().err
    assert words in err, err
    assert "remove datasets.b or datasets.a" in err


def test_check_keeps_two_streams_of_one_file(files, capsys):
    # the raw file converted with another feature set is another stream than its parquet
    other = {"path": "raw.csv", "preset": "commit-guru", "mapping": {"drop": ["la"]}}
    datasets = {"a": {"path": "raw.parquet"}, "b": other}
    (files / "my.yaml").write_text(yaml.safe_dump(_study(datasets)))
    assert main(["check", "my.yaml"]) == 0, capsys.readouterr().err


# --------------------------------------------------------------------------- merge and rank


@pytest.fixture
def runs(tmp_path, monkeypatch):
    """Runs of one stream under the names a and b, and of another stream under c."""
    monkeypatch.chdir(tmp_path)
    stream = generate_stream(rows=400, seed=5)
    write_stream(stream, tmp_path / "s.parquet")
    shutil.copy(tmp_path / "s.parquet", tmp_path / "copy.parquet")
    write_stream(generate_stream(rows=400, seed=6), tmp_path / "t.parquet")
    for name, path, learner, seed in [
        ("a", "s.parquet", "NoChange", "1"),
        ("a2", "s.parquet", "Prior", "2"),
        ("b", "copy.parquet", "NoChange", "1"),
        ("c", "t.parquet", "NoChange", "1"),
        ("c2", "t.parquet", "NoChange", "2"),
    ]:
        argv = ["evaluate", path, "--learner", learner, "--folds", "2", "--seed", seed]
        dataset = name.rstrip("2")
        assert main([*argv, "--dataset", dataset, "--out", f"run_{name}", "--quiet"]) == 0
    return tmp_path


def test_runs_record_their_stream(runs):
    info = json.loads((runs / "run_a" / "run.json").read_text())
    assert info["stream_sha256"] == read_stream(runs / "s.parquet").content_digest()


def test_merge_refuses_two_names_for_one_stream_and_records_the_streams(runs, capsys):
    assert main(["merge", "run_a", "run_b", "--out", "m.parquet"]) == 2
    err = capsys.readouterr().err
    assert "run_b: datasets 'a' (in run_a) and 'b' are one stream" in err
    assert not (runs / "m.parquet").exists()
    assert main(["merge", "run_a", "run_a2", "run_c", "--out", "m.parquet"]) == 0
    meta = pq.read_schema(runs / "m.parquet").metadata[b"delaycv_streams"]
    assert json.loads(meta) == {
        "a": read_stream(runs / "s.parquet").content_digest(),
        "c": read_stream(runs / "t.parquet").content_digest(),
    }
    # merged tables carry it on: their merge refuses the same
    assert main(["merge", "run_b", "--out", "mb.parquet"]) == 0
    assert main(["merge", "m.parquet", "mb.parquet", "--out", "mm.parquet"]) == 2
    assert "mb.parquet: datasets 'a' (in m.parquet) and 'b' are one stream" in (
        capsys.readouterr().err
    )


def test_merge_refuses_one_name_for_two_streams(runs, capsys, tmp_path):
    argv = ["evaluate", "t.parquet", "--learner", "Prior", "--folds", "2", "--dataset", "a"]
    assert main([*argv, "--out", "run_other", "--quiet"]) == 0
    assert main(["merge", "run_a", "run_other", "--out", "m.parquet"]) == 2
    assert "run_other: dataset 'a' is another stream here than in run_a" in (
        capsys.readouterr().err
    )


def test_rank_refuses_one_dataset_twice_and_one_stream_under_two_names(runs, capsys):
    # two tables of one dataset that differ only in their seed: rank averaged them
    assert main(["merge", "run_a", "--out", "a1.parquet"]) == 0
    assert main(["merge", "run_a2", "--out", "a2.parquet"]) == 0
    assert main(["merge", "run_b", "--out", "b.parquet"]) == 0
    assert main(["merge", "run_c", "--out", "c.parquet"]) == 0
    capsys.readouterr()
    assert main(["rank", "a1.parquet", "a2.parquet", "c.parquet", "--out", "r", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "a2.parquet: dataset 'a' is also in a1.parquet" in err
    assert main(["rank", "a1.parquet", "b.parquet", "c.parquet", "--out", "r", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "b.parquet: datasets 'a' (in a1.parquet) and 'b' are one stream" in err
    assert not (runs / "r").exists()
    assert main(["rank", "a1.parquet", "c.parquet", "--out", "r", "--quiet"]) == 0
