"""Conversion: mappings, presets, label_time from fix links, every bad input, the CLI."""

from __future__ import annotations

import json
import logging

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from delaycv.cli import main
from delaycv.common.errors import ConfigError, InputError
from delaycv.data.convert import (
    METADATA_KEYS,
    _link_label_time,
    conversion_notes,
    convert_file,
    load_stream,
)
from delaycv.data.mapping import PRESETS, Mapping
from delaycv.data.stream_file import read_stream
from delaycv.data.synthetic import generate_stream

NAN = np.nan

# time, link (fix timestamp), fix, la, y.  Hand-worked label_time (see test below).
LINKED = """t,link,fix,la,y
100,-1,0,1,1
100,-1,0,2,0
200,-1,0,3,1
200,-1,0,4,1
300,100,1,5,0
400,200,1,6,0
500,100,1,7,0
600,150,1,8,0
700,600,1,9,0
800,-1,0,10,1
900,1000,1,11,1
1000,-1,0,12,1
"""
LINK_MAP = {"time": "t", "label": "y", "positive": 1, "link": "link"}


def write(tmp_path, text, name="d.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def as_arff(csv_text: str) -> str:
    lines = csv_text.strip().split("\n")
    names = lines[0].split(",")
    head = ["@relation linked"] + [
        f"@attribute {n} {{0,1}}" if n == "y" else f"@attribute {n} numeric" for n in names
    ]
    return "\n".join([*head, "@data", *lines[1:]]) + "\n"


def test_label_time_hand_computed(tmp_path):
    """Row 1 (t=100, y=1) is fixed at 300 and again at 500: earliest wins -> 300. Row 2 shares
    t=100 but is negative: not a target. Rows 3-4 (t=200, both y=1) are both fixed at 400. The
    link at 600 -> 150 hits no row; 700 -> 600 hits only the negative row 8: both dangling.
    900 -> 1000 reveals row 12 *before* it arrives (label_time_before_time = 1)."""
    stream = load_stream(write(tmp_path, LINKED), mapping=LINK_MAP)
    expected = [300, NAN, 400, 400, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 900]
    np.testing.assert_array_equal(stream.label_time, expected)
    np.testing.assert_array_equal(stream.label, [1, 0, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1])
    m = stream.metadata
    assert (m["rows"], m["positives"], m["positives_with_label_time"]) == (12, 6, 4)
    assert (m["links"], m["dangling_links"]) == (6, 2)
    assert (m["dangling_no_row"], m["dangling_only_negatives"]) == (1, 1)
    assert m["label_time_before_time"] == 1
    assert m["features"] == ["fix", "la"]  # the link column never is a feature
    assert m["dropped_columns"] == ["link"]
    assert m["negative_class"] == "0" and m["positive_class"] == "1"
    assert set(m) == set(METADATA_KEYS)


def test_dangling_links_are_logged(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        load_stream(write(tmp_path, LINKED), mapping=LINK_MAP)
    assert (
        "d.csv: 2 feedback links matched no positive instance (1 at a time with no row, 1 at "
        "label-0 rows only): left out; first: row 8 (line 9), row 9 (line 10)"
    ) in caplog.text


def test_csv_and_arff_give_the_same_stream(tmp_path):
    a = load_stream(write(tmp_path, LINKED), mapping=LINK_MAP)
    b = load_stream(write(tmp_path, as_arff(LINKED), "d.arff"), mapping=LINK_MAP)
    assert np.array_equal(a.time, b.time) and np.array_equal(a.label, b.label)
    assert np.array_equal(a.label_time, b.label_time, equal_nan=True)
    assert a.features.equals(b.features)


def test_label_time_link_kind(tmp_path):
    text = "t,y,reveal,x\n1,1,50,0\n2,0,60,1\n3,1,,2\n4,1,-1,3\n"
    m = {"time": "t", "label": "y", "positive": "1", "link": "reveal", "link_kind": "label_time"}
    s = load_stream(write(tmp_path, text), mapping=m)
    np.testing.assert_array_equal(s.label_time, [50, NAN, NAN, NAN])
    assert s.metadata["dangling_links"] == 1  # a reveal time on a negative row


def test_given_reveal_times_before_arrival_are_a_warning(tmp_path, caplog):
    """Reveal times given as a column (link kind label_time) that precede their own commit, as
    fix links kept as reveal times do, are said (counted, the first row, both dates); those the
    conversion makes from fix links (LINKED's row 12, a back-dated fix) are only counted."""
    text = "t,y,reveal,x\n100,1,50,0\n200,0,,1\n300,1,250,2\n400,1,900,3\n"
    m = {"time": "t", "label": "y", "positive": "1", "link": "reveal", "link_kind": "label_time"}
    with caplog.at_level(logging.WARNING):
        s = load_stream(write(tmp_path, text), mapping=m)
    assert s.metadata["label_time_before_time"] == 2
    assert (
        f"{tmp_path / 'd.csv'}: column reveal: 2 of 3 positives are revealed before their own "
        "time (the first at row 1 (line 2): label_time 1970-01-01 00:00:50 UTC (Unix 50), time "
        "1970-01-01 00:01:40 UTC (Unix 100)): a policy observes each such label as soon"
        in caplog.text
    )
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        linked = load_stream(write(tmp_path, LINKED), mapping=LINK_MAP)
    assert linked.metadata["label_time_before_time"] == 1
    assert "revealed before" not in caplog.text


def test_the_notes_of_a_conversion_say_what_it_left_out_or_changed(tmp_path):
    """What a study prints of its streams when it ends (the convert job logged each): LINKED's
    two dangling links (its back-dated fix is the data's own, not a note), rows sorted, infinite
    values read as missing, a cut last line dropped, reveal times given before their commits,
    and a stream whose positive class never occurs."""
    linked = load_stream(write(tmp_path, LINKED), mapping=LINK_MAP)
    assert conversion_notes(linked.metadata) == [
        "2 feedback links matched no positive instance (1 at a time with no row, 1 at label-0 "
        "rows only): left out"
    ]
    text = "t,y,x\n2,1,inf\n1,0,0.5\n3,0,-inf\n4,1,0.25\n5,0"
    options = {"sort": True, "inf": "missing", "drop_truncated_last_line": True}
    changed = load_stream(write(tmp_path, text), mapping={**RAW_MAP}, **options)
    assert conversion_notes(changed.metadata) == [
        "rows sorted into time order (sort): 2 of 4 moved",
        "2 infinite feature values read as missing (x: 2)",
        "its last line, cut short, was dropped (drop_truncated_last_line)",
    ]
    text = "t,y,reveal,x\n100,1,50,0\n200,0,,1\n300,1,250,2\n400,1,900,3\n"
    m = {**RAW_MAP, "link": "reveal", "link_kind": "label_time"}
    revealed = load_stream(write(tmp_path, text), mapping=m)
    assert conversion_notes(revealed.metadata) == [
        "2 positives are revealed before their own time (observed as it arrives)"
    ]
    none = load_stream(write(tmp_path, "t,y,x\n1,0,0.5\n2,0,0.25\n"), mapping=RAW_MAP)
    assert conversion_notes(none.metadata) == [
        "the positive class '1' never occurs: every label is 0"
    ]
    clean = load_stream(write(tmp_path, "t,y,x\n1,0,0.5\n2,1,0.25\n"), mapping=RAW_MAP)
    assert conversion_notes(clean.metadata) == []


RAW_MAP = {"time": "t", "label": "y", "positive": "1"}


def reference_label_time(time, label, link):
    """Brute force of the documented rule."""
    out = np.full(len(time), np.nan)
    dangling = 0
    for j in np.flatnonzero(~np.isnan(link) & (link != -1)):
        targets = [i for i in range(len(time)) if time[i] == link[j] and label[i] == 1]
        if not targets:
            dangling += 1
        for i in targets:
            out[i] = time[j] if np.isnan(out[i]) else min(out[i], time[j])
    return out, dangling


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.integers(0, 1), st.integers(-1, 7)), min_size=1, max_size=25
    )
)
def test_link_rule_matches_brute_force(rows):
    rows = sorted(rows, key=lambda r: r[0])
    time = np.array([r[0] for r in rows], dtype=np.int64)
    label = np.array([r[1] for r in rows], dtype=np.int8)
    link = np.array([r[2] for r in rows], dtype=np.float64)

    class Raw:  # only location() is used, for the warning
        path = "mem"

        @staticmethod
        def location(row):
            return f"row {row + 1}"

    got, stats = _link_label_time(time, label, link, Mapping("t", "y", "1"), Raw)
    want, dangling = reference_label_time(time, label, link)
    np.testing.assert_array_equal(got, want)
    assert stats["dangling_links"] == dangling
    assert stats["links"] == int((link != -1).sum())


def test_dates_with_time_format_and_categoricals(tmp_path):
    text = (
        "when,kind,big,label\n"
        "2020-01-01 00:00:10,a,True,yes\n"
        "2020-01-01 00:01:00,b,False,no\n"
        "2020-01-02 00:00:00,a,true,no\n"
    )
    m = {
        "time": "when",
        "time_format": "%Y-%m-%d %H:%M:%S",
        "label": "label",
        "positive": "yes",
        "categorical": ["kind", "big"],
    }
    s = load_stream(write(tmp_path, text), mapping=m)
    assert list(s.time) == [1577836810, 1577836860, 1577923200]
    assert list(s.label) == [1, 0, 0]
    assert s.metadata["negative_class"] == "no"
    recs = s.records()
    assert recs[0] == {"kind": "a", "big": 1.0} and recs[2] == {"kind": "a", "big": 1.0}
    assert recs[1] == {"kind": "b", "big": 0.0}
    m["boolean_as_number"] = False
    assert load_stream(write(tmp_path, text), mapping=m).records(0, 1) == [
        {"kind": "a", "big": "True"}
    ]


def test_sort_option_is_stable_and_reported(tmp_path, caplog):
    text = "t,y,x\n5,0,1\n3,1,2\n5,1,3\n3,0,4\n"
    m = {"time": "t", "label": "y", "positive": 1}
    with caplog.at_level(logging.WARNING):
        s = load_stream(write(tmp_path, text), mapping=m, sort=True)
    assert list(s.time) == [3, 3, 5, 5]
    assert s.features["x"].tolist() == [2.0, 4.0, 1.0, 3.0]  # stable: file order within a time
    assert list(s.label) == [1, 0, 0, 1]
    assert s.metadata["sorted_rows"] == 4
    assert "sorted them stably (4 of 4 rows moved)" in caplog.text


ERRORS = [
    # (file text, mapping, options, message, location)
    ("t,y\n1,1\n2,\n3,0\n", {}, {}, "missing label", "row 2 (line 3)"),
    ("t,y\n1,1\n2,0\n3,2\n", {}, {}, "label '2' is outside the two classes", "row 3 (line 4)"),
    ("t,y\n1,1\n3,0\n2,0\n", {}, {}, "time 2 is earlier than 3 on", "row 3 (line 4)"),
    # times out of order as the file writes them, not as the stream's Unix seconds
    (
        "t,y\n1500,1\n3000,0\n2000,0\n",
        {"time_unit": "ms"},
        {},
        "time 2000 is earlier than 3000 on",
        "row 3 (line 4)",
    ),
    (
        "t,y\n2023-01-01T10:00:00+02:00,1\n2023-01-01T09:30:00Z,0\n2023-01-01T08:45:00Z,0\n",
        {"time_unit": "datetime"},
        {},
        "time '2023-01-01T08:45:00Z' is earlier than '2023-01-01T09:30:00Z' on",
        "row 3 (line 4)",
    ),
    ("t,y\n1,1\n,0\n", {}, {}, "missing time", "row 2 (line 3)"),
    ("t,y\n1,1\n2.5,0\n", {}, {}, "time 2.5 is not a whole number", "row 2 (line 3)"),
    (
        "t,y\n1,1\n2,0\n",
        {"link": "fix"},
        {},
        "column 'fix' named by mapping key 'link' does not",
        "key mapping.link",
    ),
    (
        "t,y\n1,1\n2,0\n",
        {"drop": ["a"]},
        {},
        "column 'a' named by mapping key 'drop'",
        "key mapping.drop",
    ),
    ("t,y,y\n1,1,1\n", {}, {}, "duplicate column name 'y'", "line 1"),
    ("t,y,x\n1,1,2\n2,0,x\n", {}, {}, "text 'x' in numeric column 'x'", "line 3"),
    ("t,y\n1,1\n2,0\n3", {}, {}, "truncated last line", "line 4"),
    ("", {}, {}, "the file is empty", None),
    (
        "d,y\n2020-01-01,1\n2020-01-32,0\n",
        {"time": "d", "time_format": "%Y-%m-%d"},
        {},
        "'2020-01-32' does not match the time format",
        "row 2 (line 3)",
    ),
    (
        "d,y\n2020-01-01,1\n",
        {"time": "d"},
        {"categorical": ["d"]},
        "the time column 'd' holds text",
        "key mapping.time_format",
    ),
    # milliseconds read as seconds: every window would be 1000 times too short
    (
        "t,y\n1600000000,1\n1600000000123,0\n",
        {},
        {},
        "time 1600000000123 in column 't' is after 9999-12-31 as Unix seconds: it looks like "
        "milliseconds \\(set time_unit: ms, or --time-unit ms\\)",
        "row 2 (line 3)",
    ),
    (
        "t,y\n1600000000000000,1\n",
        {"time_unit": "ms"},
        {},
        "after 9999-12-31 as Unix milliseconds: it looks like microseconds",
        "row 1 (line 2)",
    ),
    (
        "t,y\n-3000000000,1\n",
        {},
        {},
        "time -3000000000 in column 't' is before 1900",
        "row 1 (line 2)",
    ),
    (
        "t,y,link\n1600000000,1,-1\n1600000001,0,1600000000000\n",
        {"link": "link"},
        {},
        "link 1600000000000 in column 'link' is after 9999-12-31 as Unix seconds: it looks like "
        "milliseconds",
        "row 2 (line 3)",
    ),
    (
        "t,y\n1600000000500,1\n1.5,0\n",
        {"time_unit": "ms"},
        {},
        "not a whole number of milliseconds",
        "row 2 (line 3)",
    ),
    (
        "d,y\n2020-01-01T00:00:00Z,1\n2020-13-01T00:00:00Z,0\n",
        {"time": "d", "time_unit": "datetime"},
        {},
        "'2020-13-01T00:00:00Z' does not match the time format",
        "row 2 (line 3)",
    ),
    (
        "d,y\n1850-01-01T00:00:00,1\n",
        {"time": "d", "time_unit": "datetime"},
        {},
        "time 1850-01-01T00:00:00 in column 'd' is not between 1900-01-01 and 9999-12-31",
        "row 1 (line 2)",
    ),
    # junk and other separators
    (
        "t;y\n1;1\n2;0\n",
        {},
        {},
        "the header has no ',' but 1 semicolons: the file looks ';'-separated",
        "line 1",
    ),
    ("t\ty\n1\t1\n", {}, {}, "looks '\\\\t'-separated", "line 1"),
]


@pytest.mark.parametrize("text, extra, opts, message, location", ERRORS)
def test_bad_input_raises_and_leaves_no_output(tmp_path, text, extra, opts, message, location):
    src = write(tmp_path, text)
    mapping = {"time": "t", "label": "y", "positive": "1", **extra, **opts}
    out = tmp_path / "out" / "s.parquet"
    with pytest.raises(InputError, match=message) as info:
        convert_file(src, out, mapping=mapping)
    assert info.value.path == str(src)
    assert info.value.location == location
    assert not out.exists()
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


def test_arff_errors_through_convert(tmp_path):
    head = "@relation r\n@attribute t numeric\n@attribute y {a,b,c}\n@data\n"
    m = {"time": "t", "label": "y", "positive": "a"}
    with pytest.raises(InputError, match="label 'c' is outside") as info:
        load_stream(write(tmp_path, head + "1,a\n2,b\n3,c\n", "x.arff"), mapping=m)
    assert info.value.location == "row 3 (line 7)"
    with pytest.raises(InputError, match="unknown nominal value 'd'"):
        load_stream(write(tmp_path, head + "1,a\n2,d\n", "x.arff"), mapping=m)
    # with a declared pair the other class is the negative, even if it never occurs
    two = "@relation r\n@attribute t numeric\n@attribute y {no,yes}\n@data\n1,yes\n"
    s = load_stream(write(tmp_path, two, "y.arff"), mapping={**m, "positive": "yes"})
    assert s.metadata["negative_class"] == "no"


def test_a_positive_class_the_labels_never_hold_is_named_with_their_values(tmp_path):
    """A positive class written otherwise than the file writes it (``true`` for pandas' ``TRUE``,
    a typo) was read as one class too many: the first value seen became the negative class and
    the second was refused, ``label 'FALSE' is outside the two classes (expected 'true'
    (positive) or 'TRUE' (negative))``. It is now named, with the column's values and the
    closest; a column of one other value (a stream without positives) still converts."""
    text = "t,y,a\n1600000000,TRUE,2\n1600000060,FALSE,3\n1600000120,TRUE,4\n"
    src = write(tmp_path, text, "flags.csv")
    out = tmp_path / "s.parquet"
    with pytest.raises(InputError) as info:
        convert_file(src, out, mapping={"time": "t", "label": "y", "positive": "true"})
    assert str(info.value) == (
        f"{src}: the positive class 'true' never occurs in column 'y' (its values: 'TRUE', "
        "'FALSE') (expected the positive class as the file writes it (positive: in the mapping, "
        "--positive for delaycv convert) (did you mean 'TRUE'?))"
    )
    assert not out.exists()
    assert (
        load_stream(src, mapping={"time": "t", "label": "y", "positive": "TRUE"}).label.sum() == 2
    )
    text = "t,y\n1600000000, buggy \n1600000060,clean\n1600000120,buggy\n"
    with pytest.raises(InputError, match=r"values: 'buggy', 'clean'\) .*did you mean buggy\?"):
        load_stream(write(tmp_path, text), mapping={"time": "t", "label": "y", "positive": "bugy"})
    # one value that differs only in case is no stream without positives
    text = "t,y\n1600000000,No\n1600000060,No\n"
    with pytest.raises(InputError, match="did you mean 'No'"):
        load_stream(write(tmp_path, text), mapping={"time": "t", "label": "y", "positive": "no"})
    none = load_stream(
        write(tmp_path, text), mapping={"time": "t", "label": "y", "positive": "yes"}
    )
    assert none.label.sum() == 0 and none.metadata["negative_class"] == "No"
    # an ARFF's declared pair: the same
    arff = "@relation r\n@attribute t numeric\n@attribute y {FALSE,TRUE}\n@data\n1,TRUE\n2,FALSE\n"
    with pytest.raises(InputError, match="did you mean 'TRUE'"):
        load_stream(
            write(tmp_path, arff, "f.arff"), mapping={"time": "t", "label": "y", "positive": "true"}
        )
    only_no = "@relation r\n@attribute t numeric\n@attribute y {no,Yes}\n@data\n1,no\n2,no\n"
    with pytest.raises(InputError, match="did you mean 'Yes'"):
        load_stream(
            write(tmp_path, only_no, "n.arff"),
            mapping={"time": "t", "label": "y", "positive": "yes"},
        )
    # the declared class itself, which no instance holds: a stream without positives
    declared = {"time": "t", "label": "y", "positive": "Yes"}
    assert load_stream(tmp_path / "n.arff", mapping=declared).label.sum() == 0


def test_features_option_and_reserved_names(tmp_path):
    text = "t,y,a,b,label_time\n1,1,2,3,4\n"
    m = {"time": "t", "label": "y", "positive": 1, "features": ["b"]}
    assert load_stream(write(tmp_path, text), mapping=m).feature_names == ["b"]
    with pytest.raises(InputError, match="cannot be a feature"):
        load_stream(write(tmp_path, text), mapping={**m, "features": ["t"]})
    with pytest.raises(InputError, match="reserved name"):
        load_stream(write(tmp_path, text), mapping={**m, "features": None})


def test_mapping_from_dict_and_back():
    m = Mapping.from_dict({"time": "t", "label": "y", "positive": 1.0, "drop": "z"})
    assert m.positive == "1" and m.drop == ("z",)
    assert Mapping.from_dict(m.to_dict()) == m
    over = Mapping.from_dict({"drop": ["fix"]}, base=PRESETS["commit-guru"].mapping)
    assert over.link == "fix_unix_timestamp" and over.drop == ("fix",)
    with pytest.raises(ConfigError, match="unknown mapping key 'lable'") as info:
        Mapping.from_dict({"time": "t", "lable": "y", "positive": 1})
    assert info.value.location == "key mapping.lable"
    with pytest.raises(ConfigError, match="missing mapping key 'positive'"):
        Mapping.from_dict({"time": "t", "label": "y"})
    with pytest.raises(ConfigError, match="unknown link kind"):
        Mapping.from_dict({"time": "t", "label": "y", "positive": 1, "link_kind": "x"})
    with pytest.raises(ConfigError, match="unknown preset"):
        load_stream("x.csv", preset="nope")


def test_cli_convert_writes_and_fails_cleanly(tmp_path, capsys):
    src = write(tmp_path, LINKED)
    mapping = write(tmp_path, "time: t\nlabel: y\npositive: 1\nlink: link\n", "m.yaml")
    out = tmp_path / "s.parquet"
    argv = ["convert", str(src), str(out), "--mapping", str(mapping), "--dataset", "L", "--json"]
    assert main(argv) == 0
    meta = json.loads(pq.read_schema(out).metadata[b"delaycv"])
    assert meta["dataset"] == "L" and meta["positives_with_label_time"] == 4
    assert json.loads(capsys.readouterr().out)["dangling_links"] == 2
    bad = write(tmp_path, "t,y\n1,1\n0,0\n", "bad.csv")
    out2 = tmp_path / "bad.parquet"
    code = main(["convert", str(bad), str(out2), "--time", "t", "--label", "y", "--positive", "1"])
    assert code == 2
    err = capsys.readouterr().err
    assert f"delaycv: error: {bad}: row 2 (line 3): time 0 is earlier than 1" in err
    assert not out2.exists()
    ok = main(
        [
            "convert",
            str(bad),
            str(out2),
            "--time",
            "t",
            "--label",
            "y",
            "--positive",
            "1",
            "--sort",
            "--quiet",
        ]
    )
    assert ok == 0 and list(read_stream(out2).time) == [0, 1]


# t, la (numeric), kind (categorical), y; rows 2-4 miss values in every spelling.
HOLES = """t,la,kind,y
1,1.5,a,1
2,,b,0
3,?,,1
4,NaN,NA,0
5,nan,a,1
6,2.5,?,0
"""
HOLES_MAP = {"time": "t", "label": "y", "positive": 1, "categorical": ["kind"]}


@pytest.mark.parametrize("fmt", ["csv", "arff"])
def test_missing_values_are_left_out_and_counted(tmp_path, fmt):
    """Empty, ?, NA, NaN are missing: NaN / a missing category in the stream, null in the
    Parquet file, absent from the x dicts, counted per feature in the metadata."""
    if fmt == "csv":
        src = write(tmp_path, HOLES)
    else:
        rows = [line.split(",") for line in HOLES.strip().split("\n")[1:]]
        body = [
            ",".join([t, "?" if la in ("", "NaN", "nan") else la, "?" if k in ("", "NA") else k, y])
            for t, la, k, y in rows
        ]
        body[3] = body[3].replace(",?,", ",NaN,", 1)  # a NaN number in ARFF is missing too
        head = "@relation h\n@attribute t numeric\n@attribute la numeric\n"
        head += "@attribute kind {a,b}\n@attribute y {0,1}\n@data\n"
        src = write(tmp_path, head + "\n".join(body) + "\n", "h.arff")
    out = tmp_path / "h.parquet"
    meta = convert_file(src, out, mapping=HOLES_MAP)
    assert meta["missing"] == {"la": 4, "kind": 3}
    assert meta["infinite_as_missing"] == {}
    s = read_stream(out)
    assert s.records() == [
        {"la": 1.5, "kind": "a"},
        {"kind": "b"},
        {},
        {},
        {"kind": "a"},
        {"la": 2.5},
    ]
    assert pq.read_table(out).column("la").null_count == 4
    assert s.metadata["missing"] == {"la": 4, "kind": 3}


@pytest.mark.parametrize(
    "fmt, value, location",
    [
        ("csv", "inf", "row 3 (line 4)"),
        ("csv", "-Infinity", "row 3 (line 4)"),
        ("arff", "-inf", "row 3 (line 8)"),
    ],
)
def test_infinite_feature_names_row_and_column(tmp_path, fmt, value, location):
    text = f"t,la,y\n1,1,1\n2,2,0\n3,{value},1\n4,4,0\n"
    if fmt == "arff":
        text = (
            "@relation r\n@attribute t numeric\n@attribute la numeric\n"
            "@attribute y {0,1}\n@data\n" + "\n".join(text.split("\n")[1:])
        )
    src = write(tmp_path, text, f"i.{fmt}")
    out = tmp_path / "i.parquet"
    m = {"time": "t", "label": "y", "positive": 1}
    with pytest.raises(InputError) as info:
        convert_file(src, out, mapping=m)
    assert info.value.location == location
    assert "infinite value" in str(info.value) and "column 'la'" in str(info.value)
    assert "inf: missing" in str(info.value)
    assert not out.exists()
    meta = convert_file(src, out, mapping=m, inf="missing")
    assert meta["missing"] == {"la": 1} and meta["infinite_as_missing"] == {"la": 1}
    assert read_stream(out).records()[2] == {}
    with pytest.raises(ConfigError, match="unknown inf option 'drop'"):
        convert_file(src, out, mapping=m, inf="drop")


def test_cli_convert_prints_missing_counts_and_fails_on_inf(tmp_path, capsys):
    src = write(tmp_path, HOLES)
    out = tmp_path / "h.parquet"
    args = ["--time", "t", "--label", "y", "--positive", "1", "--categorical", "kind"]
    assert main(["convert", str(src), str(out), *args, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["missing"] == {"la": 4, "kind": 3}
    bad = write(tmp_path, HOLES.replace("2.5", "inf"), "bad.csv")
    out2 = tmp_path / "bad.parquet"
    assert main(["convert", str(bad), str(out2), *args]) == 2
    err = capsys.readouterr().err
    assert f"delaycv: error: {bad}: row 6 (line 7): infinite value inf in column 'la'" in err
    assert not out2.exists()
    assert main(["convert", str(bad), str(out2), *args, "--inf", "missing", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["missing"] == {"la": 5, "kind": 3}
    assert summary["infinite_as_missing"] == {"la": 1}
    assert read_stream(out2).records()[5] == {}


def test_the_command_says_what_it_wrote_in_a_line_of_words(tmp_path, capsys, brackets_csv):
    """``delaycv convert`` prints a line of words, as the other commands do (the JSON object
    of its counts with --json, for scripts; nothing with --quiet): the real brackets file."""
    out = tmp_path / "brackets.parquet"
    argv = ["convert", str(brackets_csv), str(out), "--preset", "commit-guru"]
    assert main(argv) == 0
    assert capsys.readouterr().out == (
        "delaycv: 0_brackets: 11,914 instances, 3,497 positives (29.4 %), 1,797 with a reveal "
        f"time, 14 features, effort la + ld -> {out}\n"
    )
    assert main([*argv, "--dataset", "brackets", "--effort", "none", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["dataset"], summary["rows"], summary["effort"]) == ("brackets", 11914, None)
    assert main([*argv, "--quiet"]) == 0 and capsys.readouterr().out == ""


def test_time_units_give_the_same_stream_in_seconds(tmp_path):
    seconds = "t,y,link\n1600000000,1,-1\n1600000001,1,-1\n1600000100,0,1600000000\n"
    m = {"time": "t", "label": "y", "positive": 1, "link": "link"}
    ref = load_stream(write(tmp_path, seconds), mapping=m)
    assert ref.metadata["time_unit"] == "s"
    assert np.array_equal(ref.label_time, [1600000100.0, NAN, NAN], equal_nan=True)
    for unit, factor, extra in (("ms", 10**3, 999), ("us", 10**6, 999_999), ("ns", 10**9, 0)):
        rows = ["t,y,link"]
        for line in seconds.strip().split("\n")[1:]:
            t, y, link = (int(v) for v in line.split(","))
            link = -1 if link == -1 else link * factor + extra
            rows.append(f"{t * factor + extra},{y},{link}")
        src = write(tmp_path, "\n".join(rows) + "\n", name=f"{unit}.csv")
        with pytest.raises(InputError, match=f"it looks like .*time_unit: {unit}"):
            load_stream(src, mapping=m)
        s = load_stream(src, mapping={**m, "time_unit": unit})
        assert np.array_equal(s.time, ref.time)  # sub-second parts are rounded down
        assert np.array_equal(s.label_time, ref.label_time, equal_nan=True)
        assert s.metadata["time_unit"] == unit
    iso = "t,y,link\n2020-09-13T12:26:40Z,1,-1\n2020-09-13T14:26:41+02:00,1,-1\n"
    iso += "2020-09-13T12:28:20.7-00:00,0,2020-09-13T12:26:40+0000\n"
    dates = {**m, "time_unit": "datetime"}
    s = load_stream(write(tmp_path, iso, name="iso.csv"), mapping=dates)
    assert np.array_equal(s.time, ref.time)
    assert np.array_equal(s.label_time, ref.label_time, equal_nan=True)
    assert s.metadata["time_unit"] == "datetime"
    # times without an offset are UTC; a column that mixes them with times with one is refused
    naive = iso.replace("Z,", ",").replace("+02:00", "").replace("-00:00", "").replace("+0000", "")
    naive = naive.replace("14:26:41", "12:26:41")
    s = load_stream(write(tmp_path, naive, name="naive.csv"), mapping=dates)
    assert np.array_equal(s.time, ref.time)
    mixed = write(tmp_path, iso.replace("-00:00", ""), name="mixed.csv")
    with pytest.raises(InputError) as info:
        load_stream(mixed, mapping=dates)
    assert str(info.value) == (
        f"{mixed}: row 3 (line 4): time '2020-09-13T12:28:20.7' has no UTC offset, and the "
        "first, '2020-09-13T12:26:40Z' (row 1 (line 2)), has one (expected every time with its "
        "UTC offset (Z, +01:00), or none (times without one are read as UTC), in the time and "
        "the link column alike)"
    )
    # nor may the link column (the fix times) mix with the time column
    zoned_link = naive.replace("0,2020-09-13T12:26:40\n", "0,2020-09-13T12:26:40Z\n")
    assert zoned_link != naive
    with pytest.raises(InputError) as info:
        load_stream(write(tmp_path, zoned_link, name="zoned_link.csv"), mapping=dates)
    assert "row 3 (line 4): link '2020-09-13T12:26:40Z' has a UTC offset, and the first " in str(
        info.value
    )
    assert "time, '2020-09-13T12:26:40' (row 1 (line 2)), has none" in str(info.value)


def test_time_unit_keys_are_checked():
    with pytest.raises(ConfigError, match="unknown time unit 'sec'") as info:
        Mapping.from_dict({"time": "t", "label": "y", "positive": 1, "time_unit": "sec"})
    assert info.value.location == "key mapping.time_unit"
    with pytest.raises(ConfigError, match="time_format given with time_unit 'ms'"):
        Mapping.from_dict(
            {"time": "t", "label": "y", "positive": 1, "time_unit": "ms", "time_format": "%Y"}
        )
    for bad in (";;", "", '"'):
        with pytest.raises(ConfigError, match="bad delimiter") as info:
            Mapping.from_dict({"time": "t", "label": "y", "positive": 1, "delimiter": bad})
        assert info.value.location == "key mapping.delimiter"
    tab = Mapping.from_dict({"time": "t", "label": "y", "positive": 1, "delimiter": "\\t"})
    assert tab.delimiter == "\t" and Mapping.from_dict(tab.to_dict()) == tab
    for bad in (";", "", None, 1):
        with pytest.raises(ConfigError, match="bad decimal mark") as info:
            Mapping.from_dict({"time": "t", "label": "y", "positive": 1, "decimal": bad})
        assert info.value.location == "key mapping.decimal"
    comma = Mapping.from_dict({"time": "t", "label": "y", "positive": 1, "decimal": ","})
    assert comma.decimal == "," and Mapping.from_dict(comma.to_dict()) == comma


def test_brackets_in_milliseconds(tmp_path, brackets_csv):
    """The real brackets CSV with its times (and fix links) in milliseconds: read as seconds it
    is an error naming the column, the first row and the unit; with time_unit ms it is the same
    stream as the original."""
    import pandas as pd

    frame = pd.read_csv(brackets_csv)
    frame["author_date_unix_timestamp"] *= 1000
    linked = frame["fix_unix_timestamp"] != -1
    frame.loc[linked, "fix_unix_timestamp"] *= 1000
    src = tmp_path / "0_brackets.csv"
    frame.to_csv(src, index=False)
    with pytest.raises(InputError) as info:
        convert_file(src, tmp_path / "bad.parquet", preset="commit-guru")
    assert str(info.value) == (
        f"{src}: row 1 (line 2): time 1323292816000 in column 'author_date_unix_timestamp' is "
        "after 9999-12-31 as Unix seconds: it looks like milliseconds (set time_unit: ms, or "
        "--time-unit ms) (expected Unix seconds between 1900-01-01 and 9999-12-31, or the "
        "column's unit in time_unit (s, ms, us, ns))"
    )
    assert not (tmp_path / "bad.parquet").exists()
    ms = load_stream(src, preset="commit-guru", mapping={"time_unit": "ms"})
    ref = load_stream(brackets_csv, preset="commit-guru")
    assert ms.metadata["time_unit"] == "ms" and ref.metadata["time_unit"] == "s"
    assert np.array_equal(ms.time, ref.time) and np.array_equal(ms.label, ref.label)
    assert np.array_equal(ms.label_time, ref.label_time, equal_nan=True)
    assert ms.features.equals(ref.features)
    assert ms.metadata["positives_with_label_time"] == 1797
    out = tmp_path / "ms.parquet"
    assert main(["convert", str(src), str(out), "--preset", "commit-guru", "--quiet"]) == 2
    assert not out.exists()
    argv = ["convert", str(src), str(out), "--preset", "commit-guru", "--time-unit", "ms"]
    assert main([*argv, "--quiet"]) == 0
    back = read_stream(out)
    assert back.metadata["time_unit"] == "ms" and np.array_equal(back.time, ref.time)


def test_brackets_in_seconds_read_as_milliseconds_are_refused(tmp_path, brackets_csv):
    """The other way round: the real brackets CSV (Unix seconds) under time_unit ms puts every
    commit in January 1970 and makes a 7d window last 7000 days; the conversion is refused,
    naming the column, the dates either way and the unit, and writes nothing. Milliseconds
    read as microseconds alike; times counted from 0 in milliseconds are kept."""
    out = tmp_path / "bad.parquet"
    with pytest.raises(InputError) as info:
        convert_file(brackets_csv, out, preset="commit-guru", mapping={"time_unit": "ms"})
    assert str(info.value) == (
        f"{brackets_csv}: column 'author_date_unix_timestamp': times 1323292816 to 1551774519 "
        "read as milliseconds all lie in 1970 (1970-01-16 to 1970-01-18), which makes every "
        "window 1,000 times too long; read as seconds they are dates (2011-12-07 to "
        "2019-03-05): they look like seconds (set time_unit: s, or --time-unit s) (expected "
        "Unix milliseconds as time_unit says, or the column's unit in time_unit (s, ms, us, ns))"
    )
    assert not out.exists()
    src = write(tmp_path, "t,y\n1600000000000,1\n1600000060000,0\n", name="ms.csv")
    with pytest.raises(InputError, match="they look like milliseconds .set time_unit: ms"):
        convert_file(
            src, out, mapping={"time": "t", "label": "y", "positive": 1, "time_unit": "us"}
        )
    assert not out.exists()
    src = write(tmp_path, "t,y\n0,1\n1000,0\n7200000,1\n", name="from0.csv")
    mapping = {"time": "t", "label": "y", "positive": 1, "time_unit": "ms"}
    assert load_stream(src, mapping=mapping).time.tolist() == [0, 1, 7200]


def test_a_semicolon_csv_converts_with_the_delimiter_option(tmp_path, capsys):
    src = write(tmp_path, "t;y;x\n1600000000;1;2,5\n1600000060;0;3\n", name="semi.csv")
    out = tmp_path / "s.parquet"
    argv = ["convert", str(src), str(out), "--time", "t", "--label", "y", "--positive", "1"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "semi.csv: line 1: the header has no ',' but 2 semicolons" in err
    assert "--delimiter ';'" in err and not out.exists()
    assert main([*argv, "--delimiter", ";", "--categorical", "x", "--quiet"]) == 0
    s = read_stream(out)
    assert list(s.time) == [1600000000, 1600000060] and s.features["x"].tolist() == ["2,5", "3"]
    # numbers with decimal commas (Excel's in many locales): refused with a hint, or read
    out.unlink()
    assert main([*argv, "--delimiter", ";"]) == 2
    assert "--decimal ','" in capsys.readouterr().err and not out.exists()
    assert main([*argv, "--delimiter", ";", "--decimal", ",", "--quiet"]) == 0
    assert read_stream(out).features["x"].tolist() == [2.5, 3.0]
    mapping = {"time": "t", "label": "y", "positive": 1, "delimiter": ";", "decimal": ","}
    assert load_stream(src, mapping=mapping).features["x"].tolist() == [2.5, 3.0]
    tabs = write(tmp_path, "t\ty\n1600000000\t1\n", name="tabs.csv")
    assert main(["convert", str(tabs), str(out), "--time", "t", "--label", "y", "--positive", "1",
                 "--delimiter", "\\t", "--quiet"]) == 0  # fmt: skip
    assert list(read_stream(out).time) == [1600000000]


@pytest.mark.parametrize("module, suffix", [("gzip", "gz"), ("bz2", "bz2"), ("lzma", "xz")])
def test_a_compressed_raw_file_is_read_as_the_file_it_holds(tmp_path, brackets_csv, module, suffix):
    """The real brackets CSV, and an ARFF, compressed with gzip, bzip2 or xz (as datasets are
    often shipped: river's phishing.csv.gz) convert to the same stream as the plain files; the
    stream records the compressed file's name and SHA-256 (what sha256sum prints), and is named
    without its suffixes; a mistake names the line of the file it holds; a compressed file cut
    short is refused, naming it, and nothing is written."""
    import hashlib
    import importlib

    compress = importlib.import_module(module).compress
    packed = tmp_path / f"0_brackets.csv.{suffix}"
    packed.write_bytes(compress(brackets_csv.read_bytes()))
    ref = load_stream(brackets_csv, preset="commit-guru")
    got = load_stream(packed, preset="commit-guru")
    assert np.array_equal(got.time, ref.time) and np.array_equal(got.label, ref.label)
    assert np.array_equal(got.label_time, ref.label_time, equal_nan=True)
    assert got.features.equals(ref.features) and np.array_equal(got.effort, ref.effort)
    assert got.metadata["dataset"] == "0_brackets"
    assert got.metadata["source"] == packed.name
    assert got.metadata["source_sha256"] == hashlib.sha256(packed.read_bytes()).hexdigest()
    arff = tmp_path / f"small.arff.{suffix}"
    arff.write_bytes(compress(as_arff(LINKED).encode()))
    plain = load_stream(write(tmp_path, as_arff(LINKED), name="small.arff"), mapping=LINK_MAP)
    packed_arff = load_stream(arff, mapping=LINK_MAP)
    assert packed_arff.features.equals(plain.features)
    assert np.array_equal(packed_arff.label_time, plain.label_time, equal_nan=True)
    mapping = {"time": "t", "label": "y", "positive": 1}
    bad = tmp_path / f"bad.csv.{suffix}"
    bad.write_bytes(compress(b"t,y,a\n1600000000,1,2\n1600000060,0,x\n"))
    with pytest.raises(InputError, match=r"bad\.csv\.\w+: line 3: "):
        load_stream(bad, mapping=mapping)
    cut = tmp_path / f"cut.csv.{suffix}"
    cut.write_bytes(packed.read_bytes()[:5000])
    out = tmp_path / "cut.parquet"
    with pytest.raises(InputError) as info:
        convert_file(cut, out, preset="commit-guru")
    name = {"gzip": "gzip", "bz2": "bzip2", "lzma": "xz"}[module]
    assert str(info.value).startswith(f"{cut}: the {name}-compressed file is corrupted or cut ")
    assert str(info.value).endswith(f"(expected a whole {name} file ({name} -t checks one))")
    assert not out.exists()
    # the header alone is read when a study loads: gzip and xz give it from a file cut short;
    # bzip2 needs its whole first block, and names the file as the conversion does
    from delaycv.data.csv import read_csv_header

    if module != "bz2":
        assert read_csv_header(cut) == read_csv_header(brackets_csv)
    else:
        with pytest.raises(InputError, match=f"the {name}-compressed file is corrupted"):
            read_csv_header(cut)
    assert read_csv_header(packed) == read_csv_header(brackets_csv)


@pytest.mark.parametrize(
    "data, words, location",
    [
        (
            b"t,y\n" + bytes(range(0x80, 0x100)) * 4,
            "byte 0x80 at byte offset 4 is not UTF-8",
            "line 2",
        ),
        (b"t,y\n1,1\n\x00\x00\x00\x00", "a NUL byte at byte offset 8 (binary data)", "line 3"),
        (b"\x00" * 100, "a NUL byte at byte offset 0", "line 1"),
        (b"PAR1\x15\x04junkPAR1", "it is a Parquet file", "line 1"),
        ("t,y\n1,1\n".encode("utf-16"), "it is UTF-16 text (save it as UTF-8)", "line 1"),
    ],
)
@pytest.mark.parametrize("suffix", ["csv", "arff"])
def test_binary_junk_is_not_a_text_file(tmp_path, capsys, data, words, location, suffix):
    src = tmp_path / f"junk.{suffix}"
    src.write_bytes(data)
    out = tmp_path / "s.parquet"
    with pytest.raises(InputError) as info:
        convert_file(src, out, mapping={"time": "t", "label": "y", "positive": 1})
    kind = suffix.upper()
    assert str(info.value).startswith(f"{src}: {location}: not a text {kind} file: {words}")
    assert (
        main(["convert", str(src), str(out), "--time", "t", "--label", "y", "--positive", "1"]) == 2
    )
    assert f"not a text {kind} file" in capsys.readouterr().err
    assert not out.exists()


# --------------------------------------------------------------------------- effort

# time, label, lines added and deleted, an id; rows 2 and 3 swap when sorted
EFFORT_CSV = "t,y,la,ld,id\n100,1,10,2,a\n300,0,0,0,b\n200,0,7,1,c\n400,1,3,40,d\n"
EFFORT_MAP = {"time": "t", "label": "y", "positive": 1, "categorical": "id"}


def test_mapping_effort_key_forms():
    base = Mapping.from_dict(EFFORT_MAP)
    assert base.effort == () and base.to_dict()["effort"] is None
    for value, columns in [
        ("la", ("la",)),
        (["la", "ld"], ("la", "ld")),
        (None, ()),
        ("none", ()),
        ("None", ()),
    ]:
        m = Mapping.from_dict({**EFFORT_MAP, "effort": value})
        assert m.effort == columns
        assert Mapping.from_dict(m.to_dict()) == m
    assert PRESETS["commit-guru"].mapping.effort == ("la", "ld")
    assert PRESETS["spdisc"].mapping.effort == ("la", "ld")
    over = Mapping.from_dict({"effort": None}, base=PRESETS["commit-guru"].mapping)
    assert over.effort == () and over.time == "author_date_unix_timestamp"
    for bad, words in [
        ([], "bad value []"),
        (["la", "la"], "column 'la' is named twice"),
        ({"la": 1}, "bad value {'la': 1}"),
        (["la", ""], "bad column ''"),
        (True, "bad value True"),
    ]:
        with pytest.raises(ConfigError) as info:
            Mapping.from_dict({**EFFORT_MAP, "effort": bad}, where="datasets.d.mapping")
        assert info.value.location == "key datasets.d.mapping.effort", str(info.value)
        assert words in str(info.value), str(info.value)


def test_effort_is_the_sum_of_its_columns_and_they_stay_features(tmp_path):
    src = write(tmp_path, EFFORT_CSV)
    s = load_stream(src, mapping={**EFFORT_MAP, "effort": ["la", "ld"], "drop": "id"}, sort=True)
    # sorted by time: rows 100, 200, 300, 400 -> la + ld = 12, 8, 0, 43
    np.testing.assert_array_equal(s.effort, [12.0, 8.0, 0.0, 43.0])
    assert s.metadata["effort"] == "la + ld"
    assert s.feature_names == ["la", "ld"]  # still features
    np.testing.assert_array_equal(s.features["la"] + s.features["ld"], s.effort)
    # one column; the effort's columns dropped as features: the effort is computed before
    s = load_stream(src, mapping={**EFFORT_MAP, "effort": "ld", "drop": ["la", "ld"]}, sort=True)
    np.testing.assert_array_equal(s.effort, [2.0, 1.0, 0.0, 40.0])
    assert s.metadata["effort"] == "ld" and s.feature_names == ["id"]
    assert s.metadata["dropped_columns"] == ["la", "ld"]
    # none: no effort, no metadata key, the file as a stream without effort
    s = load_stream(src, mapping={**EFFORT_MAP, "effort": "none"}, sort=True)
    assert s.effort is None and "effort" not in s.metadata
    assert set(s.metadata) == set(METADATA_KEYS)
    # convert_file's effort replaces the mapping's
    out = tmp_path / "s.parquet"
    meta = convert_file(src, out, mapping={**EFFORT_MAP, "effort": "la"}, sort=True, effort="ld")
    assert meta["effort"] == "ld"
    np.testing.assert_array_equal(read_stream(out).effort, [2.0, 1.0, 0.0, 40.0])
    meta = convert_file(src, out, mapping={**EFFORT_MAP, "effort": "la"}, sort=True, effort=None)
    assert "effort" not in meta and read_stream(out).effort is None
    assert pq.read_schema(out).names == ["time", "label", "label_time", "la", "ld", "id"]


@pytest.mark.parametrize(
    "text, effort, words, location",
    [
        (
            EFFORT_CSV,
            ["la", "lines"],
            "column 'lines' named by mapping key 'effort' does not",
            None,
        ),
        (EFFORT_CSV, "id", "column 'id' named by mapping key 'effort' holds string values", None),
        (
            "t,y,la,ld\n1,1,3,2\n2,0,-4,1\n",
            ["la", "ld"],
            "effort column 'la' is -4.0",
            "row 2 (line 3)",
        ),
        ("t,y,la,ld\n1,1,3,2\n2,0,4,\n", ["la", "ld"], "effort column 'ld' is missing", "row 2"),
        ("t,y,la,ld\n1,1,3,2\n2,0,4,1\n3,1,inf,1\n", "la", "effort column 'la' is inf", "row 3"),
        (
            "t,y,la,effort\n1,1,3,2\n",
            "la",
            "feature column 'effort' has the name of the stream's effort column",
            "header",
        ),
    ],
)
def test_bad_effort_columns_and_values(tmp_path, text, effort, words, location):
    src = write(tmp_path, text)
    out = tmp_path / "s.parquet"
    mapping = {**EFFORT_MAP, "effort": effort}
    if ",id" not in text:
        del mapping["categorical"]
    with pytest.raises(InputError) as info:
        convert_file(src, out, mapping=mapping, sort=True)
    err = info.value
    assert str(err).startswith(f"{src}: "), str(err)
    assert words in str(err), str(err)
    if location is None:
        assert err.location == "key mapping.effort"
    else:
        assert err.location.startswith(location), str(err)
    if "does not exist" in words:  # the columns that exist are named
        assert "one of the file's columns: t, y, la, ld, id" in str(err)
    assert not out.exists()


def test_a_raw_column_named_effort_may_be_the_effort_when_dropped(tmp_path):
    src = write(tmp_path, "t,y,la,effort\n1,1,3,2.5\n2,0,4,0\n")
    mapping = {"time": "t", "label": "y", "positive": 1}
    s = load_stream(src, mapping={**mapping, "effort": "effort", "drop": "effort"})
    np.testing.assert_array_equal(s.effort, [2.5, 0.0])
    assert s.feature_names == ["la"] and s.metadata["effort"] == "effort"
    # without an effort it is a feature, as before
    s = load_stream(src, mapping=mapping)
    assert s.effort is None and s.feature_names == ["la", "effort"]


def test_columns_that_are_no_feature_are_never_read_as_numbers(tmp_path):
    """An id of text, dropped or left out of an explicit feature list, needs no categorical:
    a column that is no feature is read as text; an effort column stays a number."""
    src = write(tmp_path, "id,t,y,la,note\nT-1,1,1,3,x\nT-2,2,0,4,late fix\n")
    mapping = {"time": "t", "label": "y", "positive": 1}
    s = load_stream(src, mapping={**mapping, "drop": ["id", "note"]})
    assert s.feature_names == ["la"] and s.metadata["dropped_columns"] == ["id", "note"]
    s = load_stream(src, mapping={**mapping, "features": ["la"], "effort": "la"})
    assert s.feature_names == ["la"]
    np.testing.assert_array_equal(s.effort, [3.0, 4.0])
    s = load_stream(src, mapping={**mapping, "drop": ["id", "note", "la"], "effort": "la"})
    assert s.feature_names == [] and s.metadata["effort"] == "la"
    # a feature of text is still refused, by its line and with what to do
    with pytest.raises(InputError, match="text 'T-1' in numeric column 'id'") as info:
        load_stream(src, mapping={**mapping, "drop": ["note"]})
    assert "name the column as text/categorical" in str(info.value)
    kept = Mapping.from_dict({**mapping, "drop": "id"})
    assert kept.reads_as_text("id") and not kept.reads_as_text("la")


def test_a_column_of_true_and_false_is_a_feature_of_1_and_0(tmp_path):
    """As pandas writes a column of booleans (True/False), with a missing value; named
    categorical, the same; without boolean_as_number, a category."""
    src = write(tmp_path, "t,y,present\n1,1,True\n2,0,False\n3,0,\n")
    mapping = {"time": "t", "label": "y", "positive": 1}
    for asked in (mapping, {**mapping, "categorical": ["present"]}):
        s = load_stream(src, mapping=asked)
        np.testing.assert_array_equal(s.features["present"], [1.0, 0.0, np.nan])
    s = load_stream(src, mapping={**mapping, "boolean_as_number": False})
    assert list(s.features["present"].astype(object)[:2]) == ["True", "False"]


def test_a_nominal_attribute_keeps_its_declared_values_in_their_order(tmp_path):
    """An ARFF nominal feature's categories are its declared values in their order, one no
    instance holds too, in memory and through the stream's file (what a MOA learner's header
    declares, docs/moa-learners.md); a CSV column's are its values sorted."""
    from delaycv.data.stream_file import StreamFile

    src = tmp_path / "n.arff"
    src.write_text(
        "@relation t\n@attribute time numeric\n@attribute kind {zeta,alpha,mid,unused}\n"
        "@attribute y {0,1}\n@data\n1,mid,0\n2,zeta,1\n3,alpha,0\n4,?,1\n"
    )
    mapping = {"time": "time", "label": "y", "positive": 1}
    declared = {"kind": ("zeta", "alpha", "mid", "unused")}
    assert load_stream(src, mapping=mapping).categories() == declared
    out = tmp_path / "n.parquet"
    convert_file(src, out, mapping=mapping)
    assert StreamFile(out).categories() == read_stream(out).categories() == declared
    csv = write(tmp_path, "t,y,kind\n1,0,mid\n2,1,zeta\n3,0,alpha\n")
    got = load_stream(csv, mapping={**mapping, "time": "t", "categorical": ["kind"]})
    assert got.categories() == {"kind": ("alpha", "mid", "zeta")}


def test_a_file_without_times_converts_with_its_positions_as_times(tmp_path, capsys):
    """MOA's benchmark streams have no time attribute: ``time_unit: position`` (``--time-unit
    position``) converts them, each instance's time its position, and the engine then takes
    windows in instances only; a missing time column says so, a time column or a link beside
    it is refused. Figures draw such a stream against its positions, not 1970's dates."""
    import delaycv
    from delaycv.figures.figure_set import _x_axis

    src = tmp_path / "elec.arff"
    rows = [
        f"{1 + i % 7},{(i * 37 % 100) / 100},{'UP' if i * 37 % 100 > 40 else 'DOWN'}"
        for i in range(300)
    ]
    src.write_text(
        "@relation elec\n@attribute day {1,2,3,4,5,6,7}\n@attribute price numeric\n"
        "@attribute class {UP,DOWN}\n@data\n" + "\n".join(rows) + "\n"
    )
    mapping = {"label": "class", "positive": "UP"}
    out = tmp_path / "e.parquet"
    with pytest.raises(ConfigError) as info:
        convert_file(src, out, mapping=mapping)
    assert info.value.location == "key mapping.time"
    assert "or time_unit: position for a file without one" in str(info.value)
    for extra, key in (({"time": "price"}, "time"), ({"link": "price"}, "link")):
        with pytest.raises(ConfigError) as info:
            convert_file(src, out, mapping={**mapping, "time_unit": "position", **extra})
        assert info.value.location == f"key mapping.{key}", str(info.value)
    assert not out.exists()
    argv = ["convert", str(src), str(out), "--label", "class", "--positive", "UP"]
    assert main([*argv, "--time-unit", "position", "--quiet"]) == 0
    stream = read_stream(out)
    np.testing.assert_array_equal(stream.time, np.arange(1, 301))
    assert stream.metadata["time"] == "position" and stream.metadata["time_unit"] == "position"
    assert stream.metadata["time_column"] is None and stream.feature_names == ["day", "price"]
    result = delaycv.evaluate(
        str(out),
        "tree.HoeffdingTreeClassifier",
        policy="delay",
        window="50i",
        folds=2,
        progress=False,
    )
    assert result.folds["checkpoint"].max() == 300
    assert _x_axis(result.folds, "time") == "checkpoint"
    with pytest.raises(ConfigError, match="the window 7d is a duration, but the stream's times"):
        delaycv.evaluate(
            str(out),
            "tree.HoeffdingTreeClassifier",
            policy="delay",
            window="7d",
            folds=2,
            progress=False,
        )
    # a stream with times keeps its dates
    dated = delaycv.evaluate(
        generate_stream(rows=300, seed=2), "tree.HoeffdingTreeClassifier", folds=2, progress=False
    )
    assert _x_axis(dated.folds, "time") == "time"


def test_cli_convert_effort_option(tmp_path, capsys):
    src = write(tmp_path, EFFORT_CSV)
    out = tmp_path / "s.parquet"
    base = ["convert", str(src), str(out), "--time", "t", "--label", "y", "--positive", "1"]
    base += ["--sort", "--drop", "id", "--categorical", "id", "--json"]
    assert main([*base, "--effort", "la+ld"]) == 0
    assert json.loads(capsys.readouterr().out)["effort"] == "la + ld"
    np.testing.assert_array_equal(read_stream(out).effort, [12.0, 8.0, 0.0, 43.0])
    assert main([*base, "--effort", " ld "]) == 0
    capsys.readouterr()
    np.testing.assert_array_equal(read_stream(out).effort, [2.0, 1.0, 0.0, 40.0])
    assert main([*base]) == 0  # no effort in a mapping without one
    assert json.loads(capsys.readouterr().out)["effort"] is None
    assert read_stream(out).effort is None
    # --effort none overrides a preset's (and a --mapping file's) effort
    mapping = write(
        tmp_path, "time: t\nlabel: y\npositive: 1\ncategorical: id\neffort: [la, ld]\n", "m.yaml"
    )
    args = ["convert", str(src), str(out), "--mapping", str(mapping), "--sort", "--json"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["effort"] == "la + ld"
    assert main([*args, "--effort", "NONE"]) == 0
    assert json.loads(capsys.readouterr().out)["effort"] is None
    for bad in ("la+", "+", ""):  # a usage error naming the option
        assert main([*base, "--effort", bad]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"delaycv: error: convert: argument --effort: {bad!r} is not a"), err
    assert main([*base, "--effort", "la+lines"]) == 2
    err = capsys.readouterr().err
    assert "column 'lines' named by mapping key 'effort' does not exist" in err


HEADER_CASES = """@relation r
@attribute t numeric
@attribute size numeric
@attribute day {mon, tue, wed}
@attribute merged {True, False}
@attribute bit {0, 1}
@attribute note string
@attribute team {core, ui}
@attribute y {0, 1}
@data
1700000000,3,mon,True,1,'a',core,1
1700000100,5,tue,False,0,'b',ui,0
1700000200,2,wed,True,1,'TRUE',core,0
1700000300,7,mon,False,0,'false',ui,1
"""


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, ("day", "team")),  # merged, bit: 1/0; note: its values decide (here booleans)
        ({"boolean_as_number": False}, ("day", "merged", "bit", "note", "team")),
        ({"drop": ["team"]}, ("day",)),
        ({"features": ["team", "size"]}, ("team",)),
        (
            {"categorical": ["size"], "boolean_as_number": False},
            ("size", "day", "merged", "bit", "note", "team"),
        ),
    ],
)
def test_a_header_says_which_features_will_be_categorical(tmp_path, changes, expected):
    """From an ARFF file's header alone (the study's check of learners against categorical
    features): nominal attributes with declared values not read as numbers; text whose values
    decide (a string attribute with boolean_as_number) is not named. What it names is what the
    conversion makes."""
    from delaycv.data.arff import read_arff_header
    from delaycv.data.convert import header_categories
    from delaycv.data.stream_file import stream_file_facts

    src = tmp_path / "h.arff"
    src.write_text(HEADER_CASES)
    mapping = {"time": "t", "label": "y", "positive": "1", **changes}
    got = header_categories(read_arff_header(src), Mapping.from_dict(mapping), str(src))
    assert got == expected
    convert_file(src, tmp_path / "h.parquet", mapping=mapping)
    made = stream_file_facts(tmp_path / "h.parquet")[1]
    # every feature named is categorical, in the file's order; the string attribute may be too
    assert tuple(c for c in made if c != "note") == tuple(c for c in got if c != "note")
    assert set(got) <= set(made)


def test_an_arff_date_out_of_order_is_named_as_a_utc_time(tmp_path):
    text = '@relation r\n@attribute d date "yyyy-MM-dd"\n@attribute y {0,1}\n@data\n'
    src = write(tmp_path, text + "2020-01-02,1\n2020-01-01,0\n", "d.arff")
    said = (
        r"time 2020-01-01 00:00:00 UTC \(Unix 1577836800\) is earlier than 2020-01-02 00:00:00 UTC"
    )
    with pytest.raises(InputError, match=said):
        convert_file(
            src, tmp_path / "s.parquet", mapping={"time": "d", "label": "y", "positive": "1"}
        )
