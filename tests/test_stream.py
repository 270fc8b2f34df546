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

from delaycv.errors import DelaycvError, InputError
from delaycv.stream import Stream, check_stream_file, read_stream, write_stream


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
    assert check_stream_file(bad) == {}
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
        label_time=[np.nan if r[2] is None else float(r[2]) for r in rows],
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
    from conftest import flip_page_byte

    from delaycv.stream import open_stream, to_table

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
    from delaycv.stream import open_stream

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
