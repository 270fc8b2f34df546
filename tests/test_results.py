"""Run directories: contents, byte-reproducibility, reading back, merging, errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_bruteforce import random_stream

from delaycv.engine import evaluate
from delaycv.errors import InputError
from delaycv.results import merge_runs, read_run, write_run


def result(seed=1, learner="NoChange", keep=False):
    stream = random_stream(np.random.default_rng(seed), 50)
    return evaluate(
        stream,
        learner,
        "hitl_5s_20s",
        {"scheme": "bootstrap", "folds": 3},
        seed=seed,
        every=10,
        timing=False,
        keep_predictions=keep,
    )


def test_write_and_read_back(tmp_path):
    r = result(keep=True)
    out = write_run(r, tmp_path / "run", extra={"note": "x"})
    assert sorted(p.name for p in out.iterdir()) == [
        "folds.parquet",
        "predictions.parquet",
        "run.json",
        "summary.parquet",
    ]
    back = read_run(out)
    pd.testing.assert_frame_equal(back["folds"], r.folds, check_dtype=False)
    assert back["folds"]["seed"].dtype == np.int64 and back["folds"]["fold"].dtype == np.int64
    assert back["folds"]["evaluated_now"].dtype == bool
    pd.testing.assert_frame_equal(back["predictions"], r.predictions)
    info = back["info"]
    assert info["run_keys"]["policy"] == "hitl_5s_20s" and info["note"] == "x"
    assert [f["evaluated"] + f["pending"] + f["skipped"] for f in info["folds"]] == [50] * 3
    assert "wall_seconds" not in info and set(info["versions"]) >= {"river", "delaycv"}


def test_same_result_same_bytes(tmp_path):
    write_run(result(), tmp_path / "a")
    write_run(result(), tmp_path / "b")
    for name in ("folds.parquet", "summary.parquet", "run.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_rewrite_replaces_the_directory_whole(tmp_path):
    write_run(result(keep=True), tmp_path / "run")
    write_run(result(), tmp_path / "run")
    assert not (tmp_path / "run" / "predictions.parquet").exists()


def test_failed_write_leaves_nothing(tmp_path):
    class Broken:
        folds = pd.DataFrame({"a": [1]})
        summary = object()  # not a DataFrame: writing fails midway
        predictions = None
        observers = None
        info = {}

    with pytest.raises(AttributeError):
        write_run(Broken(), tmp_path / "run")
    assert list(tmp_path.iterdir()) == []


def test_merge(tmp_path):
    a, b = result(1), result(2, learner="Prior")
    write_run(a, tmp_path / "a")
    write_run(b, tmp_path / "b")
    merged = merge_runs([tmp_path / "a", tmp_path / "b" / "folds.parquet"], tmp_path / "m.parquet")
    assert len(merged) == len(a.folds) + len(b.folds)
    assert list(merged.columns) == list(a.folds.columns)
    assert merged["learner"].tolist() == ["NoChange"] * len(a.folds) + ["Prior"] * len(b.folds)
    back = pd.read_parquet(tmp_path / "m.parquet")
    assert len(back) == len(merged)


def test_merge_errors_name_the_file(tmp_path):
    write_run(result(1), tmp_path / "a")
    other = result(2).folds.drop(columns=["mcc"])
    other.to_parquet(tmp_path / "odd.parquet")
    with pytest.raises(InputError) as err:
        merge_runs([tmp_path / "a", tmp_path / "odd.parquet"])
    assert err.value.path.endswith("odd.parquet") and "mcc" in str(err.value)
    with pytest.raises(InputError) as err:
        merge_runs([tmp_path / "missing"])
    assert "missing" in str(err.value)
    with pytest.raises(InputError):
        read_run(tmp_path)
    (tmp_path / "a" / "run.json").write_text("{bad", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_run(tmp_path / "a")
    assert err.value.location == "line 1"
