"""Run directories: contents, byte-reproducibility, reading back, merging, errors."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from delaycv.common.errors import InputError
from delaycv.tables.merge import merge_files, merge_runs, merge_tables
from delaycv.tables.results import TableWriter, read_run, read_table, write_run, write_table
from delaycv.tables.run_writer import RunWriter
from tests.support.engine_bruteforce import random_stream
from tests.support.engine_runs import evaluate


def result(seed=1, learner="NoChange", keep=False):
    # one stream for every run: its runs share the dataset name (one name, one stream)
    stream = random_stream(np.random.default_rng(1), 50)
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


_SMALL_RUN = result(learner="Prior")
_FOLDS_OF_SMALL_RUN = _SMALL_RUN.folds


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


def _run_dir_tables(run_dir):
    back = read_run(run_dir)
    return back["folds"], back["summary"], back["info"]


@pytest.mark.parametrize(
    ("kwargs", "n_pieces"),
    [
        ({}, 3),
        ({"policy": "ideal", "estimator": {"kind": "sliding", "width": 50}}, 3),
        ({"validation": {"scheme": "cv", "folds": 4}, "keep_predictions": True}, 3),
        ({"validation": {"scheme": "prequential", "folds": 1}, "every": None}, 1),  # the last only
        ({"jobs": 2}, 1),  # the rows of the fold processes come back in one piece at the end
    ],
)
def test_run_writer_writes_what_write_run_writes(tmp_path, kwargs, n_pieces):
    """A run written as it goes (several pieces: the stream is longer than a chunk) holds the
    same tables, rows in the same order, and the same run.json as the in-memory run written
    whole."""
    kwargs = dict(kwargs)
    stream = random_stream(np.random.default_rng(5), 9_000)
    args = (
        stream,
        "NoChange",
        kwargs.pop("policy", "hitl_5s_20s"),
        kwargs.pop("validation", {"scheme": "bootstrap", "folds": 3}),
    )
    kwargs = {"every": 100, "timing": False, **kwargs}
    write_run(evaluate(*args, **kwargs), tmp_path / "whole", extra={"note": "x"})
    pieces = []
    with RunWriter(tmp_path / "streamed") as run:

        def add(piece):
            pieces.append(len(piece))
            run.add(piece)

        streamed = evaluate(*args, on_rows=add, **kwargs)
        assert streamed.folds.empty and streamed.summary.empty
        run.finish(streamed, extra={"note": "x"})
    assert len(pieces) == n_pieces
    want, got = _run_dir_tables(tmp_path / "whole"), _run_dir_tables(tmp_path / "streamed")
    assert run.rows == len(want[0]) > 0
    pd.testing.assert_frame_equal(got[0], want[0], check_exact=True)
    pd.testing.assert_frame_equal(got[1], want[1], check_exact=True)
    assert got[2] == want[2]
    names = sorted(p.name for p in (tmp_path / "streamed").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "whole").iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["streamed", "whole"]


@settings(max_examples=30, deadline=None)
@given(
    cuts=st.lists(st.integers(1, 24), max_size=8),
    batch=st.integers(1, 60),
    row_group=st.integers(1, 40),
)
def test_run_writer_any_pieces_give_the_table_and_its_summary(cuts, batch, row_group):
    """However the checkpoints are cut into pieces, summarised in batches and buffered, the files
    are the table and its summary."""
    table = _FOLDS_OF_SMALL_RUN
    checkpoints = np.sort(table["checkpoint"].unique())
    bounds = sorted({checkpoints[c % len(checkpoints)] for c in cuts})
    edges = [-np.inf, *bounds, np.inf]
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "run"
        with RunWriter(out) as run:
            run.SUMMARY_BATCH, run.FOLD_ROW_GROUP = batch, row_group
            for low, high in zip(edges[:-1], edges[1:], strict=True):
                inside = (table["checkpoint"] >= low) & (table["checkpoint"] < high)
                run.add(table[inside])  # rows of whole checkpoints, fold by fold
            run.finish(_SMALL_RUN)
        folds, summary, _ = _run_dir_tables(out)
        write_run(_SMALL_RUN, Path(folder) / "whole")
        want_folds, want_summary, _ = _run_dir_tables(Path(folder) / "whole")
    pd.testing.assert_frame_equal(folds, want_folds, check_exact=True)
    pd.testing.assert_frame_equal(summary, want_summary, check_exact=True)


def test_run_writer_leaves_nothing_unless_finished(tmp_path):
    r = result()
    out = tmp_path / "run"
    with pytest.raises(KeyError), RunWriter(out) as run:
        run.add(r.folds)
        raise KeyError("the evaluation failed")
    with pytest.raises(RuntimeError, match="without RunWriter.finish"), RunWriter(out) as run:
        run.add(r.folds)
    assert list(tmp_path.iterdir()) == []
    write_run(r, out)  # a run that exists stays as it was when a new one fails
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(KeyError), RunWriter(out) as run:
        run.add(r.folds)
        run.finish(r)
        raise KeyError("after finish, before the block ends")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    with RunWriter(out) as run:
        run.finish(r)  # no piece: the result's own tables
        with pytest.raises(RuntimeError, match="once"):
            run.finish(r)
        with pytest.raises(RuntimeError, match="before the tables are written"):
            run.add(r.folds)
    pd.testing.assert_frame_equal(read_run(out)["folds"], r.folds, check_dtype=False)


def test_run_writer_tables_are_complete_before_run_json(tmp_path):
    """write_tables completes both tables (the job then reads its CPU time for run.json); it is
    done once, finish does it when it was not, and no piece may follow it."""
    r = result()
    with RunWriter(tmp_path / "run") as run:
        run.add(r.folds)
        run.write_tables(r)
        inside = sorted(p.name for p in run._tmp.iterdir())
        assert inside == ["folds.parquet", "summary.parquet"]
        run.write_tables(r)
        with pytest.raises(RuntimeError, match="before the tables are written"):
            run.add(r.folds)
        run.finish(r)
    want = read_run(write_run(r, tmp_path / "whole"))["summary"]
    pd.testing.assert_frame_equal(read_run(tmp_path / "run")["summary"], want, check_exact=True)


def test_merge_files_equals_merge_tables_written(tmp_path):
    """The workflow's merge, row group by row group, reads back as the merged table written
    whole; a column null in one run and typed in another is cast; errors name the file."""
    runs = []
    for seed in (1, 2, 3):
        out = tmp_path / f"r{seed}"
        with RunWriter(out) as run:  # row groups of 16,384 rows and less
            run.FOLD_ROW_GROUP = 7
            result = evaluate(*_run_args(seed), seed=seed, every=10, timing=False, on_rows=run.add)
            run.finish(result)
        runs.append(out)
    n = merge_files(runs, tmp_path / "m.parquet")
    write_table(merge_tables(runs), tmp_path / "whole.parquet")
    want = read_table(tmp_path / "whole.parquet")
    assert n == len(want) > 0
    pd.testing.assert_frame_equal(read_table(tmp_path / "m.parquet"), want, check_exact=True)
    assert merge_files(runs, tmp_path / "m5.parquet", row_group=5) == n
    groups = pq.ParquetFile(tmp_path / "m5.parquet").metadata
    assert all(groups.row_group(g).num_rows >= 5 for g in range(groups.num_row_groups - 1))
    pd.testing.assert_frame_equal(read_table(tmp_path / "m5.parquet"), want, check_exact=True)
    first = len(read_table(runs[0] / "folds.parquet"))
    assert merge_files([runs[0]], tmp_path / "m1.parquet") == first
    assert merge_files([tmp_path / "m1.parquet", *runs[1:]], tmp_path / "m2.parquet") == n
    nulls = want.copy()
    nulls["dataset"] = None  # other runs than those of whole.parquet
    write_table(nulls, tmp_path / "nulls.parquet")
    merge_files([tmp_path / "whole.parquet", tmp_path / "nulls.parquet"], tmp_path / "m3.parquet")
    back = read_table(tmp_path / "m3.parquet")
    assert back["dataset"].isna().sum() == len(want) and len(back) == 2 * len(want)
    odd = read_table(runs[1] / "folds.parquet").drop(columns=["mcc"])
    write_table(odd, tmp_path / "odd.parquet")
    with pytest.raises(InputError) as err:
        merge_files([runs[0], tmp_path / "odd.parquet"], tmp_path / "bad.parquet")
    assert err.value.path.endswith("odd.parquet") and "mcc" in str(err.value)
    (tmp_path / "junk.parquet").write_text("not parquet")
    for bad in (tmp_path / "junk.parquet", tmp_path / "missing"):
        with pytest.raises(InputError) as err:
            merge_files([runs[0], bad], tmp_path / "bad.parquet")
        assert err.value.path.endswith(bad.name)
    with pytest.raises(InputError, match="nothing to merge"):
        merge_files([], tmp_path / "bad.parquet")
    assert not (tmp_path / "bad.parquet").exists()


@pytest.mark.parametrize("merge", ["tables", "files"])
def test_merge_refuses_a_stream_and_a_run_twice(tmp_path, merge):
    """Issue 22: the library merges (the command's and the workflow's) refuse a stream file, the
    same table twice and a run's keys in two tables, naming the paths, before writing."""
    from delaycv.data.stream_file import write_stream

    def merged(paths):
        if merge == "tables":
            return merge_tables(paths)
        merge_files(paths, tmp_path / "out.parquet")
        return read_table(tmp_path / "out.parquet")

    write_run(result(1), tmp_path / "a")
    write_run(result(2, learner="Prior"), tmp_path / "b")
    write_run(result(1), tmp_path / "copy")  # the run of a again
    write_stream(random_stream(np.random.default_rng(1), 20), tmp_path / "s.parquet")
    write_table(result(2, learner="Prior").folds.drop(columns=["seed"]), tmp_path / "nokey.parquet")
    cases = [
        (["a", "s.parquet"], "s.parquet", "a stream"),
        (["a", "b", "a"], "a", f"the same table as {tmp_path / 'a'}"),
        (["a", "a/folds.parquet"], "a/folds.parquet", "the same table as"),
        (["a", "b", "copy"], "copy", "learner=NoChange, seed=1, policy=hitl_5s_20s is also in"),
        (["a", "nokey.parquet"], "nokey.parquet", "no column 'seed'"),
    ]
    for names, culprit, words in cases:
        with pytest.raises(InputError) as err:
            merged([tmp_path / n for n in names])
        assert err.value.path == str(tmp_path / culprit) and words in str(err.value), err.value
    assert not (tmp_path / "out.parquet").exists()
    assert len(merged([tmp_path / "a", tmp_path / "b"])) > 0


def _run_args(seed):
    # one stream for every seed: the runs share the dataset name (one name, one stream)
    stream = random_stream(np.random.default_rng(1), 120)
    return (stream, "NoChange", "hitl_5s_20s", {"scheme": "bootstrap", "folds": 3})


def test_a_flipped_byte_in_a_result_table_is_an_error_naming_the_file(tmp_path):
    from tests.support.parquet import flip_page_byte

    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "dataset": "d",
            "learner": ["a", "b"] * 2500,
            "seed": 1,
            "policy": "ideal",
            "accuracy": rng.random(5000),
        }
    )
    # written as before (no page checksums): a flipped byte is read as a changed value
    old = tmp_path / "old.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), old, compression="zstd")
    flip_page_byte(old, "accuracy")
    assert not read_table(old)["accuracy"].equals(frame["accuracy"])
    path = tmp_path / "folds.parquet"
    write_table(frame, path)
    pd.testing.assert_frame_equal(read_table(path), frame)
    good = tmp_path / "good.parquet"
    write_table(frame.assign(seed=2), good)  # another run: merged beside the corrupt one
    flip_page_byte(path, "accuracy")
    for read in (
        read_table,
        lambda p: read_table(p, ["accuracy"]),
        lambda p: merge_files([good, p], tmp_path / "merged.parquet"),
        lambda p: merge_tables([good, p]),
    ):
        with pytest.raises(InputError) as info:
            read(path)
        assert str(info.value).startswith(f"{path}: corrupt Parquet file: a page checksum")
    assert not (tmp_path / "merged.parquet").exists()


def test_every_table_of_a_run_has_page_checksums(tmp_path):
    from tests.support.parquet import flip_page_byte

    with RunWriter(tmp_path / "run") as run:
        run.finish(evaluate(*_run_args(1), on_rows=run.add))
    write_run(result(1, keep=True), tmp_path / "whole")
    for table in [
        tmp_path / "run" / "folds.parquet",
        tmp_path / "run" / "summary.parquet",
        tmp_path / "whole" / "folds.parquet",
        tmp_path / "whole" / "predictions.parquet",
    ]:
        group = pq.ParquetFile(table).metadata.row_group(0)
        sizes = [group.column(i).total_compressed_size for i in range(group.num_columns)]
        flip_page_byte(table, group.column(sizes.index(max(sizes))).path_in_schema)
        with pytest.raises(InputError, match="corrupt Parquet file: a page checksum"):
            read_table(table)
