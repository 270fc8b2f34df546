"""The canonical stream: construction checks, records, Parquet round trip, determinism."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from delaycv.common.errors import DelaycvError, InputError
from delaycv.data.stream import Stream
from delaycv.data.stream_file import check_stream_file, read_stream, write_stream


def small_stream() -> Stream:
    return Stream(
        time=[10, 10, 20, 35],
        label=[1, 0, 1, 0],
        label_time=[50.0, np.nan, np.nan, np.nan],
        features=pd.DataFrame(
            {"la": [1, 2, 3, 4], "kind": ["fix", "feat", None, "fix"], "x": [0.5, np.nan, 2, 3]}
        ),
        metadata={"dataset": "tiny", "positive_class": "1", "dangling_links": 0},
    )


def test_dtypes_and_computed_metadata():
    s = small_stream()
    assert s.time.dtype == np.int64 and s.label.dtype == np.int8
    assert s.label_time.dtype == np.float64
    assert len(s) == 4
    assert s.feature_names == ["la", "kind", "x"]
    assert s.features["la"].dtype == np.float64
    assert isinstance(s.features["kind"].dtype, pd.CategoricalDtype)
    # rows 4, positives = rows 1 and 3, only row 1 has a label_time
    assert s.metadata["rows"] == 4
    assert s.metadata["positives"] == 2
    assert s.metadata["positives_with_label_time"] == 1
    assert s.metadata["features"] == ["la", "kind", "x"]
    assert s.metadata["dataset"] == "tiny"


def test_records_values_and_types():
    s = small_stream()
    recs = s.records(1, 3)
    assert recs[0]["la"] == 2.0 and type(recs[0]["la"]) is float
    assert recs[0]["kind"] == "feat" and type(recs[0]["kind"]) is str
    # a missing value is left out of x (river's convention), numeric or categorical
    assert recs == [{"la": 2.0, "kind": "feat"}, {"la": 3.0, "x": 2.0}]
    assert s.records(3, 99) == [{"la": 4.0, "kind": "fix", "x": 3.0}]
    assert s.records(4) == []
    assert s.metadata["missing"] == {"kind": 1, "x": 1}


def test_records_leave_missing_values_out_of_float_block():
    m = np.arange(12, dtype=np.float64).reshape(4, 3)
    m[1, 0] = m[1, 2] = m[3, 1] = np.nan
    s = Stream(
        time=np.arange(4),
        label=np.zeros(4),
        label_time=None,
        features=pd.DataFrame(m, columns=["a", "b", "c"]),
    )
    assert s.records() == [
        {"a": 0.0, "b": 1.0, "c": 2.0},
        {"b": 4.0},
        {"a": 6.0, "b": 7.0, "c": 8.0},
        {"a": 9.0, "c": 11.0},
    ]
    assert s.records(2, 4) == s.records()[2:] and s.records(1, 2) == [{"b": 4.0}]
    assert s.metadata["missing"] == {"a": 1, "b": 1, "c": 1}
    assert s.subset(2).metadata["missing"] == {"b": 1}
    assert s.subset(0, 1).metadata["missing"] == {}


@pytest.mark.parametrize("value", [np.inf, -np.inf])
@pytest.mark.parametrize("categorical", [False, True])
def test_infinite_feature_is_an_error(value, categorical):
    f = pd.DataFrame({"a": [1.0, 2.0, value], "b": [0.5, np.nan, 1.0]})
    if categorical:
        f["k"] = pd.Categorical(["x", None, "y"])
    with pytest.raises(DelaycvError, match=f"feature 'a' is {value} at row 3"):
        Stream(time=[1, 2, 3], label=[0, 1, 0], label_time=None, features=f)


def test_parquet_keeps_missing_values_as_null(tmp_path):
    s = small_stream()
    write_stream(s, tmp_path / "s.parquet")
    table = pq.read_table(tmp_path / "s.parquet")
    assert table.column("x").to_pylist() == [0.5, None, 2.0, 3.0]
    assert table.column("kind").null_count == 1
    back = read_stream(tmp_path / "s.parquet")
    assert back.records() == s.records()
    assert back.metadata["missing"] == {"kind": 1, "x": 1}
    # a foreign file with NaN (not null) values and a plain string column: missing too
    foreign = tmp_path / "f.parquet"
    pq.write_table(
        pa.table(
            {
                "time": [1, 2],
                "label": [0, 1],
                "label_time": pa.array([None, None], pa.int64()),
                "x": [float("nan"), 1.0],
                "k": ["a", None],
            }
        ),
        foreign,
    )
    f = read_stream(foreign)
    assert f.records() == [{"k": "a"}, {"x": 1.0}]
    assert f.metadata["missing"] == {"x": 1, "k": 1}
    bad = tmp_path / "inf.parquet"
    pq.write_table(
        pa.table(
            {"time": [1, 2], "label": [0, 1], "label_time": [None, None], "x": [1.0, -np.inf]}
        ),
        bad,
    )
    with pytest.raises(InputError, match="inf.parquet: stream feature 'x' is -inf at row 2"):
        read_stream(bad)


def test_a_file_delaycv_did_not_write_tells_its_features_and_reveals_as_a_read_does(tmp_path):
    """A Parquet file of the stream's columns written by another tool (no delaycv metadata):
    the file's footer and its chunked reader say its features (in the file's order) and its
    counts as the whole read does. Without them the study's load and a MOA learner failed
    (KeyError 'features') and every run's record said it had no reveal times."""
    from delaycv.data.stream_file import open_stream, stream_file_facts
    from delaycv.engine.run import stream_has_fixes

    foreign = tmp_path / "foreign.parquet"
    frame = pd.DataFrame(
        {
            "time": [10, 20, 30, 40],
            "label": [1, 0, 1, 1],
            "b": [1.0, 2.0, 3.0, 4.0],
            "label_time": [15.0, None, None, 90.0],
            "a": ["x", "y", None, "x"],
        }
    )
    frame.to_parquet(foreign)
    whole = read_stream(foreign).metadata
    assert whole["features"] == ["b", "a"]
    opened = open_stream(foreign)
    for meta in (check_stream_file(foreign), stream_file_facts(foreign)[0], opened.metadata):
        assert meta["features"] == whole["features"]
    assert stream_file_facts(foreign)[1] == ("a",)
    counts = ("rows", "positives", "positives_with_label_time")
    assert [opened.metadata[k] for k in counts] == [whole[k] for k in counts] == [4, 3, 2]
    assert stream_has_fixes(opened)
    assert opened.read_warnings == []  # (reveals at or after arrival)
    frame.assign(label_time=None).to_parquet(foreign)
    assert not stream_has_fixes(open_stream(foreign))
    # reveal times another tool wrote that precede their commits (fix links kept as reveal
    # times) are a warning of every run of the file, as for a DataFrame given to the API
    frame.assign(label_time=[15.0, None, 5.0, 30.0]).to_parquet(foreign)
    said = open_stream(foreign).read_warnings
    assert len(said) == 1 and said[0].startswith(
        f"{foreign}: column label_time: 2 of 3 positives are revealed before their own time (the "
        "first at row 3: label_time 1970-01-01 00:00:05 UTC (Unix 5), time 1970-01-01 00:00:30 UTC "
        "(Unix 30))"
    ), said
    import delaycv

    run = delaycv.evaluate(str(foreign), "NoChange", folds=2, progress=False)
    assert run.info["warnings"][0] == said[0]
    write_stream(read_stream(foreign), tmp_path / "ours.parquet")  # (delaycv's: counted, no word)
    assert open_stream(tmp_path / "ours.parquet").read_warnings == []
    # the index pandas stores beside the columns (after a filter; a column made the index, here
    # datetimes, which no feature may be) is no feature: the row numbers would be one, a proxy of
    # the time that a learner would use
    for indexed in (
        frame[frame["label"] == 1],
        frame.set_index(pd.to_datetime(frame["time"], unit="s").rename("date")),
    ):
        indexed.to_parquet(foreign)
        assert set(pq.read_schema(foreign).names) - set(frame) in ({"__index_level_0__"}, {"date"})
        for meta in (check_stream_file(foreign), open_stream(foreign).metadata):
            assert meta["features"] == ["b", "a"]
        back = read_stream(foreign)
        assert back.metadata["features"] == ["b", "a"] and len(back) == len(indexed)
        chunk = next(iter(open_stream(foreign).chunks(2)))
        assert set(chunk.records[0]) == {"b", "a"}
    frame.set_index("time", drop=False).to_parquet(foreign)  # (the index is the time column)
    assert read_stream(foreign).time.tolist() == [10, 20, 30, 40]
    # pandas' datetimes and booleans are no stream columns; the error says how to write them
    from delaycv.api import as_stream

    dated = frame.assign(time=pd.to_datetime(frame["time"], unit="s"), label=frame["label"] == 1)
    dated.to_parquet(foreign)
    with pytest.raises(InputError, match=r"column time has type timestamp\[.s\] \(expected "
                       r"integers, Unix seconds; delaycv.api.as_stream reads"):  # fmt: skip
        open_stream(foreign)
    write_stream(as_stream(dated), foreign)
    back = read_stream(foreign)
    assert back.time.tolist() == [10, 20, 30, 40] and back.label.tolist() == [1, 0, 1, 1]


def _absent(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


_cells = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=False, width=64),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(_cells, _cells, st.sampled_from(["a", "b", None])),
        min_size=0,
        max_size=40,
    ),
    st.booleans(),
    st.integers(0, 45),
    st.integers(0, 45),
)
def test_x_dicts_never_hold_nan_or_none(rows, with_category, start, stop):
    """Every x dict holds exactly the features an instance has, each as given, never NaN/None."""
    n = len(rows)
    cols = {"a": [r[0] for r in rows], "b": [r[1] for r in rows]}
    if with_category:
        cols["k"] = [r[2] for r in rows]
    frame = pd.DataFrame(
        {k: pd.Series(v, dtype=float if k != "k" else object) for k, v in cols.items()}
    )
    s = Stream(time=np.arange(n), label=np.zeros(n), label_time=None, features=frame)
    recs = s.records(start, stop)
    assert len(recs) == max(0, min(stop, n) - start)
    missing = dict.fromkeys(cols, 0)
    for i, x in zip(range(start, n), recs, strict=False):
        for v in x.values():
            assert v is not None and v == v
        want = {k: v[i] for k, v in cols.items() if not _absent(v[i])}
        assert x == want
    for k, v in cols.items():
        missing[k] = sum(1 for c in v if _absent(c))
    assert s.metadata["missing"] == {k: c for k, c in missing.items() if c}


def test_records_float_only_fast_path():
    rng = np.random.default_rng(3)
    m = rng.random((50, 15))
    names = [f"f{i}" for i in range(15)]
    s = Stream(
        time=np.arange(50),
        label=np.zeros(50),
        label_time=None,
        features=pd.DataFrame(m, columns=names),
    )
    recs = s.records(10, 12)
    assert recs[1] == dict(zip(names, m[11].tolist(), strict=True))
    assert all(type(v) is float for v in recs[0].values())


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(time=[3, 2], label=[0, 1]), "time decreases at row 2"),
        (dict(time=[1, 2], label=[0, 2]), "label at row 2"),
        (dict(time=[1, 2], label=[0]), "label has 1 values"),
        (dict(time=[1, 2], label=[0, 1], label_time=[1.0]), "label_time has shape"),
    ],
)
def test_construction_errors(kwargs, message):
    kwargs.setdefault("label_time", None)
    with pytest.raises(DelaycvError, match=message):
        Stream(**kwargs)


def test_duplicate_and_clashing_feature_names():
    f = pd.DataFrame([[1, 2]], columns=["a", "a"])
    with pytest.raises(DelaycvError, match="duplicate feature names: a"):
        Stream(time=[1], label=[0], label_time=None, features=f)
    with pytest.raises(DelaycvError, match="clash"):
        Stream(time=[1], label=[0], label_time=None, features=pd.DataFrame({"time": [1]}))


def test_parquet_layout(tmp_path):
    path = tmp_path / "s.parquet"
    write_stream(small_stream(), path)
    table = pq.read_table(path)
    assert table.column_names == ["time", "label", "label_time", "la", "kind", "x"]
    assert table.schema.field("time").type == pa.int64()
    assert table.schema.field("label").type == pa.int8()
    assert table.schema.field("label_time").type == pa.int64()
    assert table.column("label_time").to_pylist() == [50, None, None, None]
    assert pa.types.is_dictionary(table.schema.field("kind").type)
    assert table.schema.field("x").type == pa.float64()
    meta = json.loads(table.schema.metadata[b"delaycv"])
    assert meta["rows"] == 4 and meta["positives_with_label_time"] == 1
    assert meta["dataset"] == "tiny"
    assert [p.name for p in tmp_path.iterdir()] == ["s.parquet"]


def test_round_trip_and_byte_identical(tmp_path):
    s = small_stream()
    write_stream(s, tmp_path / "a.parquet")
    write_stream(read_stream(tmp_path / "a.parquet"), tmp_path / "b.parquet")
    assert read_stream(tmp_path / "a.parquet").equals(s)
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()


def test_subset():
    s = small_stream().subset(1, 3)
    assert list(s.time) == [10, 20]
    assert s.metadata["rows"] == 2 and s.metadata["positives"] == 1
    assert s.metadata["positives_with_label_time"] == 0
    assert s.metadata["dataset"] == "tiny"


def test_read_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_stream(tmp_path / "missing.parquet")
    junk = tmp_path / "junk.parquet"
    junk.write_text("not parquet")
    with pytest.raises(InputError, match="junk.parquet: not a readable Parquet"):
        read_stream(junk)
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"time": [1], "y": [0]}), other)
    with pytest.raises(InputError, match="missing column"):
        read_stream(other)
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"time": [2, 1], "label": [0, 1], "label_time": [None, None]}), bad)
    with pytest.raises(InputError, match="bad.parquet: stream time decreases at row 2"):
        read_stream(bad)


def test_check_stream_file_checks_the_layout_from_the_schema_alone(tmp_path):
    path = tmp_path / "s.parquet"
    write_stream(small_stream(), path)
    assert check_stream_file(path)["dataset"] == "tiny"
    # the values are not read: a decreasing time passes here and fails in read_stream
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"time": [2, 1], "label": [0, 1], "label_time": [None, None]}), bad)
    assert check_stream_file(bad) == {"features": []}  # (a file delaycv did not write)
    for table, words in [
        (pa.table({"time": [1], "y": [0]}), "not a delaycv stream: missing column(s) label"),
        (pa.table({"time": [1.5], "label": [0], "label_time": [None]}), "column time has type"),
        (
            pa.table({"time": [1], "label": [0], "label_time": [None], "f": [[1, 2]]}),
            "feature column f has type",
        ),
    ]:
        other = tmp_path / "other.parquet"
        pq.write_table(table, other)
        for check in (check_stream_file, read_stream):
            with pytest.raises(InputError) as info:
                check(other)
            assert str(info.value).startswith(f"{other}: {words}"), str(info.value)
    junk = tmp_path / "junk.parquet"
    junk.write_text("time,label\n")
    with pytest.raises(InputError, match="not a readable Parquet file.*written by delaycv convert"):
        check_stream_file(junk)
    with pytest.raises(InputError, match="no such file"):
        check_stream_file(tmp_path / "missing.parquet")


def test_a_reveal_time_on_a_label_0_instance_is_refused():
    # label_time reveals a positive label: on a clean instance a policy would observe a 1
    with pytest.raises(DelaycvError) as err:
        Stream(
            time=[10, 20, 30, 40],
            label=[1, 0, 0, 1],
            label_time=[15.0, -1.0, 35.0, np.nan],
            features=pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]}),
            first_row=11,
        )
    assert str(err.value).startswith(
        "stream label_time at row 12 is -1.0 on an instance of label 0 (2 such rows)"
    )
    # NaN there is no reveal time; a reveal before arrival of a positive is kept (rebased commits)
    s = Stream(time=[10, 20], label=[0, 1], label_time=[np.nan, 5.0], features=None)
    assert s.metadata["positives_with_label_time"] == 1


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 10**6),
            st.integers(0, 1),
            st.one_of(st.none(), st.integers(0, 2 * 10**9)),
            st.floats(allow_nan=True, allow_infinity=False, width=64),
            st.sampled_from(["a", "b", "ü c", None]),
        ),
        max_size=30,
    )
)
def test_round_trip_property(tmp_path_factory, rows):
    rows = sorted(rows, key=lambda r: r[0])
    s = Stream(
        time=[r[0] for r in rows],
        label=[r[1] for r in rows],
        label_time=[np.nan if r[2] is None or r[1] == 0 else float(r[2]) for r in rows],
        features=pd.DataFrame(
            {
                "x": pd.Series([r[3] for r in rows], dtype=float),
                "c": pd.Series([r[4] for r in rows], dtype=object),
            }
        ),
        metadata={"dataset": "p"},
    )
    path = tmp_path_factory.mktemp("rt") / "s.parquet"
    write_stream(s, path)
    back = read_stream(path)
    assert np.array_equal(back.time, s.time) and np.array_equal(back.label, s.label)
    assert np.array_equal(back.label_time, s.label_time, equal_nan=True)
    assert back.records() == s.records() or all(
        _same(a, b) for a, b in zip(back.records(), s.records(), strict=True)
    )
    assert back.metadata == s.metadata


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        (x is y) or x == y or (isinstance(x, float) and np.isnan(x) and np.isnan(y))
        for x, y in ((a[k], b[k]) for k in a)
    )


def _random_stream(rows: int = 5000) -> Stream:
    rng = np.random.default_rng(7)
    return Stream(
        time=1_500_000_000 + np.arange(rows) * 60,
        label=rng.integers(0, 2, rows),
        label_time=np.full(rows, np.nan),
        features=pd.DataFrame({"x": rng.random(rows), "y": rng.random(rows)}),
        metadata={"dataset": "random"},
    )


def test_a_flipped_byte_in_a_data_page_is_an_error_naming_the_file(tmp_path):
    from delaycv.data.stream_file import open_stream, to_table
    from tests.support.parquet import flip_page_byte

    stream = _random_stream()
    # a file written as before (no page checksums): the flipped byte is read as a changed value
    old = tmp_path / "old.parquet"
    pq.write_table(to_table(stream), old, compression="zstd", use_dictionary=["label"])
    flip_page_byte(old, "x")
    silently = read_stream(old)
    assert not np.array_equal(silently.features["x"].to_numpy(), stream.features["x"].to_numpy())
    # written now: every page has a checksum, and reading verifies it
    path = tmp_path / "s.parquet"
    write_stream(stream, path)
    assert read_stream(path).equals(stream)
    flip_page_byte(path, "x")
    for read in (read_stream, lambda p: list(open_stream(p).chunks(1000))):
        with pytest.raises(InputError) as info:
            read(path)
        text = str(info.value)
        assert text.startswith(f"{path}: corrupt Parquet file: a page checksum does not match")
    # the schema alone is still readable (only the data page is bad)
    assert check_stream_file(path)["dataset"] == "random"


def test_times_not_plausible_as_seconds_are_an_error_naming_the_row():
    with pytest.raises(DelaycvError) as info:
        Stream(time=[1_600_000_000, 1_600_000_000_123], label=[0, 1], label_time=None)
    assert str(info.value).startswith(
        "stream time 1600000000123 at row 2 is after 9999-12-31 as Unix seconds: it looks like "
        "milliseconds (a stream stores seconds: convert the source with time_unit: ms)"
    )
    with pytest.raises(DelaycvError, match="stream label_time 1600000000000000 at row 1 .* micro"):
        Stream(time=[1_600_000_000], label=[1], label_time=[1.6e15])
    # before 1970 is fine (back-dated commits), before 1900 is not
    assert len(Stream(time=[-86_400, 0, 5], label=[0, 1, 0], label_time=None)) == 3
    with pytest.raises(DelaycvError, match="before 1900-01-01"):
        Stream(time=[-3_000_000_000], label=[0], label_time=None)


def test_a_stream_file_with_milliseconds_is_an_error_naming_the_file(tmp_path):
    from delaycv.data.stream_file import open_stream

    bad = tmp_path / "ms.parquet"
    table = pa.table(
        {
            "time": [1_600_000_000_000, 1_600_000_060_000],
            "label": [0, 1],
            "label_time": [None, None],
        }
    )
    pq.write_table(table, bad)
    for read in (read_stream, lambda p: list(open_stream(p).chunks(10))):
        with pytest.raises(InputError) as info:
            read(bad)
        assert str(info.value).startswith(
            f"{bad}: stream time 1600000000000 at row 1 is after 9999-12-31 as Unix seconds: it "
            "looks like milliseconds"
        )


def test_check_stream_file_finds_milliseconds_in_the_statistics(tmp_path):
    bad = tmp_path / "ms.parquet"
    table = pa.table({"time": [1_600_000_000_000], "label": [0], "label_time": [1_600_000_000]})
    pq.write_table(table, bad)
    with pytest.raises(InputError) as info:
        check_stream_file(bad)
    assert str(info.value).startswith(
        f"{bad}: stream time 1600000000000 (row group 0) is after 9999-12-31 as Unix seconds: "
        "it looks like milliseconds"
    )
    table = pa.table({"time": [1_600_000_000], "label": [1], "label_time": [1_600_000_000_000]})
    pq.write_table(table, bad)
    with pytest.raises(InputError, match="stream label_time 1600000000000 .row group 0. is"):
        check_stream_file(bad)


# --------------------------------------------------------------------------- effort


def effort_stream(effort=(3.0, 0.0, 12.5, 40.0), **metadata) -> Stream:
    """``small_stream`` with an effort (changed lines) per instance."""
    s = small_stream()
    meta = {k: v for k, v in s.metadata.items()} | {"effort": "la + ld"} | metadata
    return Stream(s.time, s.label, s.label_time, s.features, metadata=meta, effort=effort)


#: SHA-256 of small_stream()'s file as the code before streams had an effort wrote it, with its
#: content digest in the metadata since (pyarrow 26.0.1): a stream without effort is written byte
#: for byte as before
NO_EFFORT_FILE = "b762ec429b4201b234b02157944600a5c799b57b6592ea356980910582dd7bc1"


def test_a_stream_without_effort_is_written_as_before(tmp_path):
    import hashlib

    s = small_stream()
    assert s.effort is None and "effort" not in s.metadata
    write_stream(s, tmp_path / "s.parquet")
    data = (tmp_path / "s.parquet").read_bytes()
    meta = json.loads(pq.read_schema(tmp_path / "s.parquet").metadata[b"delaycv"])
    assert "effort" not in meta
    assert pq.read_schema(tmp_path / "s.parquet").names == ["time", "label", "label_time"] + [
        "la",
        "kind",
        "x",
    ]
    if pa.__version__ == "26.0.1":  # the writer's version is in the file
        assert hashlib.sha256(data).hexdigest() == NO_EFFORT_FILE
    # the metadata of another stream that had an effort does not give this one an effort
    bare = Stream(s.time, s.label, s.label_time, s.features, metadata=effort_stream().metadata)
    assert bare.effort is None and "effort" not in bare.metadata
    write_stream(bare, tmp_path / "b.parquet")
    assert (tmp_path / "b.parquet").read_bytes() == data


def test_effort_round_trip_layout_and_byte_identical(tmp_path):
    s = effort_stream()
    assert s.effort.dtype == np.float64 and not s.effort.flags.writeable
    assert s.metadata["effort"] == "la + ld"
    path = tmp_path / "a.parquet"
    write_stream(s, path)
    table = pq.read_table(path)
    assert table.column_names == ["time", "label", "label_time", "effort", "la", "kind", "x"]
    assert table.schema.field("effort").type == pa.float64()
    assert not table.schema.field("effort").nullable
    assert table.column("effort").to_pylist() == [3.0, 0.0, 12.5, 40.0]
    assert json.loads(table.schema.metadata[b"delaycv"])["effort"] == "la + ld"
    back = read_stream(path)
    assert back.equals(s) and back.feature_names == ["la", "kind", "x"]
    assert back.records() == s.records()  # the effort is no feature of the x dicts
    write_stream(back, tmp_path / "b.parquet")
    assert path.read_bytes() == (tmp_path / "b.parquet").read_bytes()
    assert check_stream_file(path)["effort"] == "la + ld"
    # equals tells a stream with an effort from one without, and different efforts apart
    assert not s.equals(small_stream()) and not small_stream().equals(s)
    assert not s.equals(effort_stream(effort=[3.0, 0.0, 12.5, 41.0]))
    # a description defaults to "given"
    given_ = Stream(s.time, s.label, s.label_time, s.features, effort=s.effort)
    assert given_.metadata["effort"] == "given"


def test_effort_in_subsets_and_chunks(tmp_path):
    from delaycv.data.stream_file import open_stream

    s = effort_stream()
    sub = s.subset(1, 3)
    np.testing.assert_array_equal(sub.effort, [0.0, 12.5])
    assert sub.metadata["effort"] == "la + ld"
    assert small_stream().subset(1, 3).effort is None
    write_stream(s, tmp_path / "s.parquet")
    for chunks in (s.chunks(3), open_stream(tmp_path / "s.parquet").chunks(3)):
        chunks = list(chunks)
        assert [c.effort.tolist() for c in chunks] == [[3.0, 0.0, 12.5], [40.0]]
        assert [c.start for c in chunks] == [0, 3]
    write_stream(small_stream(), tmp_path / "n.parquet")
    for chunks in (small_stream().chunks(3), open_stream(tmp_path / "n.parquet").chunks(3)):
        assert [c.effort for c in chunks] == [None, None]


@pytest.mark.parametrize(
    "effort, message",
    [
        ([3.0, 0.0, -3.0, 1.0], "stream effort at row 3 is -3.0 (expected a finite number >= 0"),
        ([3.0, np.nan, 2.0, 1.0], "stream effort at row 2 is nan (expected a finite number >= 0"),
        ([np.inf, 0.0, 2.0, 1.0], "stream effort at row 1 is inf (expected a finite number >= 0"),
        # at the edges of floating point: a total that overflows, a precision of 3 digits
        ([1e303, 0.0, 2.0, 1.0], "stream effort at row 1 is 1e+303 (expected a finite number"),
        ([3.0, 1e-320, 2.0, 1.0], "stream effort at row 2 is 1e-320 (expected a finite number"),
        ([3.0, 2.0**53 + 2, 2.0, 1.0], "stream effort at row 2 is 9007199254740994.0 (expected"),
        ([1.0, 2.0], "stream effort has shape (2,), expected (4,)"),
        (["a", "b", "c", "d"], "stream effort is not an array of numbers"),
    ],
)
def test_a_bad_effort_is_refused_naming_the_row(effort, message):
    with pytest.raises(DelaycvError) as info:
        effort_stream(effort=effort)
    assert str(info.value).startswith(message), str(info.value)


def test_a_bad_effort_row_counts_from_first_row():
    with pytest.raises(DelaycvError, match="stream effort at row 18 is -3.0"):
        Stream(time=[1, 2], label=[0, 1], label_time=None, effort=[1, -3], first_row=17)


def test_a_feature_named_effort():
    f = pd.DataFrame({"effort": [1.0, 2.0]})
    with pytest.raises(DelaycvError, match="a feature is named 'effort' and the stream has an"):
        Stream(time=[1, 2], label=[0, 1], label_time=None, features=f, effort=[1, 2])
    # without an effort, a feature may have that name; it reads back as a feature
    s = Stream(time=[1, 2], label=[0, 1], label_time=None, features=f)
    assert s.effort is None and s.feature_names == ["effort"]


def test_a_feature_named_effort_reads_back_as_a_feature(tmp_path):
    s = Stream(
        time=[1, 2], label=[0, 1], label_time=None, features=pd.DataFrame({"effort": [1.0, 2.0]})
    )
    write_stream(s, tmp_path / "s.parquet")
    back = read_stream(tmp_path / "s.parquet")
    assert back.equals(s) and back.effort is None and back.feature_names == ["effort"]


def test_effort_column_and_metadata_must_agree(tmp_path):
    from delaycv.data.stream_file import open_stream, to_table

    table = to_table(effort_stream())
    meta = json.loads(table.schema.metadata[b"delaycv"])
    undeclared = {k: v for k, v in meta.items() if k != "effort"}
    cases = [
        (  # an effort column the metadata does not declare
            table.replace_schema_metadata({b"delaycv": json.dumps(undeclared)}),
            "the file has a column effort but its stream metadata declares no effort",
        ),
        (  # a foreign file with a column effort and no metadata
            table.replace_schema_metadata(None),
            "the file has a column effort but its stream metadata declares no effort",
        ),
        (  # the reverse: declared, no column
            table.drop_columns(["effort"]),
            "the stream metadata declares an effort ('la + ld') but the file has no column effort",
        ),
        (
            table.set_column(3, "effort", pa.array(["a", "b", "c", "d"])),
            "column effort has type string",
        ),
        (
            table.replace_schema_metadata({b"delaycv": json.dumps(meta | {"effort": 3})}),
            "stream metadata effort is 3",
        ),
    ]
    for i, (bad, words) in enumerate(cases):
        path = tmp_path / f"bad{i}.parquet"
        pq.write_table(bad, path)
        for check in (check_stream_file, read_stream, open_stream):
            with pytest.raises(InputError) as info:
                check(path)
            assert str(info.value).startswith(f"{path}: {words}"), str(info.value)


def test_a_bad_effort_on_disk_names_the_file_and_the_row(tmp_path):
    from delaycv.data.stream_file import open_stream, to_table

    rows = 5000
    stream = _random_stream(rows)
    effort = np.arange(rows, dtype=np.float64)
    good = Stream(
        stream.time,
        stream.label,
        stream.label_time,
        stream.features,
        metadata={"dataset": "random", "effort": "la + ld"},
        effort=effort,
    )
    table = to_table(good)
    for value, words in [(-3.0, "is -3.0"), (None, "is nan")]:
        values = effort.tolist()
        values[4321] = value
        bad = table.set_column(3, pa.field("effort", pa.float64()), pa.array(values))
        path = tmp_path / "bad.parquet"
        pq.write_table(bad, path)
        for read in (read_stream, lambda p: list(open_stream(p).chunks(1000))):
            with pytest.raises(InputError) as info:
                read(path)
            assert str(info.value).startswith(f"{path}: stream effort at row 4322 {words}")
    # a negative effort is found in the footer's statistics without reading the data
    values = effort.tolist()
    values[4321] = -3.0
    pq.write_table(table.set_column(3, "effort", pa.array(values)), tmp_path / "neg.parquet")
    with pytest.raises(InputError) as info:
        check_stream_file(tmp_path / "neg.parquet")
    assert str(info.value).startswith(
        f"{tmp_path / 'neg.parquet'}: stream effort (row group 0) is -3.0 (expected a finite"
    )


@pytest.mark.parametrize(
    "la, ld, words",
    [
        ("1e303", "1", "effort column 'la' is 1e+303"),  # the total would be infinite
        ("1e-320", "0", "effort column 'la' is 1e-320"),  # three significant digits
        ("9007199254740992", "9007199254740992", "effort la + ld is 1.8014398509481984e+16"),
    ],
)
def test_efforts_at_the_edges_of_floating_point_are_refused_where_read(tmp_path, la, ld, words):
    """Refused when the raw file is converted (file, row, column and the bounds), when a
    DataFrame is given to the API, and by the stream itself: the measures never see them."""
    import delaycv
    from delaycv.common.errors import DelaycvError, InputError
    from delaycv.data.convert import convert_file
    from delaycv.data.stream import Stream

    src = tmp_path / "commits.csv"
    src.write_text(f"t,y,la,ld\n100,1,10,2\n200,0,{la},{ld}\n300,1,3,4\n")
    mapping = {"time": "t", "label": "y", "positive": 1, "effort": ["la", "ld"]}
    with pytest.raises(InputError) as info:
        convert_file(src, tmp_path / "s.parquet", mapping=mapping, sort=True)
    text = str(info.value)
    assert text.startswith(f"{src}: row 2") and words in text and "2**53" in text, text
    assert not (tmp_path / "s.parquet").exists()
    frame = pd.DataFrame(
        {
            "time": [100, 200, 300],
            "label": [1, 0, 1],
            "la": [10, float(la), 3],
            "ld": [2, float(ld), 4],
        }
    )
    with pytest.raises(InputError, match="at row 2.*2\\*\\*53"):
        delaycv.evaluate(frame, "naive_bayes.GaussianNB", effort=["la", "ld"], progress=False)
    with pytest.raises(DelaycvError, match="stream effort at row 2 is .*2\\*\\*53"):
        Stream(time=[1, 2], label=[0, 1], label_time=None, effort=[1.0, float(la) + float(ld)])


def test_distinct_values_are_counted_alike_in_memory_and_from_a_file(tmp_path):
    """How many values each feature holds, up to a limit + 1: the same from the stream in memory
    and from its file read batch by batch (a file of 150,000 rows: three batches)."""
    from delaycv.data.stream_file import open_stream, write_stream
    from delaycv.data.synthetic import generate_stream

    stream = generate_stream(rows=150_000, seed=2)
    write_stream(stream, tmp_path / "s.parquet")
    names = stream.feature_names
    for limit in (1, 20, 10**6):
        in_memory = stream.distinct_values(names, limit)
        assert open_stream(tmp_path / "s.parquet").distinct_values(names, limit) == in_memory
        assert all(n <= limit + 1 for n in in_memory.values())
    exact = stream.distinct_values(names, 10**6)
    assert exact == {n: stream.features[n].nunique() for n in names}
    assert exact["fix"] == 2 and exact["la"] > 20
