"""Run directories: contents, byte-reproducibility, reading back, merging, errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from engine_bruteforce import random_stream

from delaycv.engine import evaluate
from delaycv.errors import InputError
from delaycv.results import (
    TableWriter,
    merge_runs,
    read_run,
    read_table,
    write_run,
    write_table,
)


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


def test_table_writer_writes_the_pieces_as_one_table(tmp_path):
    """Pieces handed over as they come (the engine's on_rows) read back as the table the run
    holds in memory, in row groups of the given size; nothing stays but the file."""
    stream = random_stream(np.random.default_rng(3), 400)
    args = (stream, "NoChange", "hitl_5s_20s", {"scheme": "bootstrap", "folds": 3})
    whole = evaluate(*args, every=10, timing=False)
    order = ["fold", "checkpoint", "reference"]
    for group in (1, 7, 1000):
        path = tmp_path / f"folds_{group}.parquet"
        with TableWriter(path, row_group=group) as write:
            streamed = evaluate(*args, every=10, timing=False, on_rows=write)
        assert len(streamed.folds) == 0 and write.rows == len(whole.folds)
        assert pq.ParquetFile(path).metadata.num_row_groups == -(-len(whole.folds) // group)
        back = read_table(path).sort_values(order, kind="stable").reset_index(drop=True)
        write_table(whole.folds, tmp_path / "whole.parquet")
        want = read_table(tmp_path / "whole.parquet")
        want = want.sort_values(order, kind="stable").reset_index(drop=True)
        pd.testing.assert_frame_equal(back, want, check_exact=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "folds_1.parquet",
        "folds_1000.parquet",
        "folds_7.parquet",
        "whole.parquet",
    ]


def test_table_writer_leaves_nothing_on_error(tmp_path):
    r = result()
    path = tmp_path / "folds.parquet"
    with pytest.raises(KeyError), TableWriter(path, row_group=4) as write:
        write(r.folds.iloc[:10])  # two row groups written already
        raise KeyError("the run failed")
    with pytest.raises(ValueError, match="a piece has columns"), TableWriter(path) as write:
        write(r.folds)
        write(r.folds.drop(columns=["fold"]))
    with pytest.raises(ValueError, match="no table piece"), TableWriter(path):
        pass
    assert list(tmp_path.iterdir()) == []


def test_read_table_reads_only_the_columns_asked_for_in_file_order(tmp_path):
    path = tmp_path / "t.parquet"
    write_table(pd.DataFrame({"a": [1, 2], "b": [0.5, 1.5], "c": ["x", "y"]}), path)
    part = read_table(path, ["c", "a"])
    assert list(part.columns) == ["a", "c"]
    assert part["a"].tolist() == [1, 2] and part["c"].tolist() == ["x", "y"]
    with pytest.raises(InputError, match=r"t\.parquet: no column 'd', 'e'"):
        read_table(path, ["a", "e", "d"])
