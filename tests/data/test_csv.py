"""CSV reader: header, numbers and text, missing values, fast/slow agreement, line-exact errors."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from delaycv.common.errors import InputError
from delaycv.data.csv import _slow_parse, read_csv, read_csv_header


def write(tmp_path, text, name="d.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_values_types_and_missing(tmp_path):
    text = '"t","x","kind"\n10,1.5,a\n20,,"b, c"\n30,NA,\n40,?,"d"\n'
    raw = read_csv(write(tmp_path, text), text_columns=["kind", "not-there"])
    assert raw.names == ["t", "x", "kind"]
    assert [c.kind for c in raw.columns] == ["numeric", "numeric", "string"]
    assert raw.table.column("t").to_pylist() == [10.0, 20.0, 30.0, 40.0]
    assert raw.table.column("x").to_pylist() == [1.5, None, None, None]
    assert raw.table.column("kind").to_pylist() == ["a", "b, c", None, "d"]
    assert raw.location(0) == "row 1 (line 2)"
    assert raw.location(3) == "row 4 (line 5)"


def test_bom_crlf_and_blank_lines(tmp_path):
    path = tmp_path / "w.csv"
    path.write_bytes(b"\xef\xbb\xbft,y\r\n1,0\r\n\r\n2,1\r\n")
    raw = read_csv(path)
    assert raw.names == ["t", "y"]
    assert raw.table.column("y").to_pylist() == [0.0, 1.0]
    assert raw.location(1) == "row 2 (line 4)"


@pytest.mark.parametrize(
    "data, delimiter, names",
    [
        (b"\xef\xbb\xbft,y\r\n1,0\r\n", ",", ["t", "y"]),
        (b'"t";" y z"\n1;0\n', ";", ["t", "y z"]),
        (b"t,y", ",", ["t", "y"]),  # a header alone, without a newline
    ],
)
def test_the_header_alone_is_read_as_the_whole_file_reads_it(tmp_path, data, delimiter, names):
    path = tmp_path / "h.csv"
    path.write_bytes(data)
    assert read_csv_header(path, delimiter) == names
    if data.count(b"\n") > 1:
        assert read_csv(path, delimiter=delimiter).names == names


@pytest.mark.parametrize(
    "data, message",
    [
        (b"\n1,2\n", "the first line is empty"),
        (b"t;x;y\n1;2;3\n", "looks ';'-separated"),
        (b"t,\x00y\n", "not a text CSV file: a NUL byte"),
    ],
)
def test_the_header_alone_is_refused_as_the_whole_file_is(tmp_path, data, message):
    path = tmp_path / "h.csv"
    path.write_bytes(data)
    for read in (read_csv_header, read_csv):
        with pytest.raises(InputError, match=message) as info:
            read(path)
        assert info.value.location == "line 1"


def test_quoted_newline_goes_through_line_parser(tmp_path):
    text = 't,note\n1,"two\nlines"\n2,plain\n'
    raw = read_csv(write(tmp_path, text), text_columns=["note"])
    assert raw.table.column("note").to_pylist() == ["two\nlines", "plain"]
    assert raw.location(1) == "row 2 (line 4)"


@pytest.mark.parametrize(
    "text, location, message",
    [
        ("t,x,t\n1,2,3\n", "line 1", "duplicate column name 't' \\(columns 1 and 3\\)"),
        (
            "t,,y\n1,2,3\n",
            "line 1",
            "column 2 of the header has no name \\(expected a name for every column\\)",
        ),
        (
            ",t,y\n0,1,3\n",
            "line 1",
            "column 1 of the header has no name \\(expected a name for "
            "every column; a first column without a name is the row index pandas' to_csv "
            "\\(or R's write.csv\\) writes",
        ),
        ("\n1,2\n", "line 1", "the first line is empty"),
        (
            "t,x\n2021-01-01 10:00:00,2\n",
            "line 2",
            "text '2021-01-01 10:00:00' in numeric column 't' \\(expected a number or an empty "
            "field; a time or link column of dates is read with time_unit: datetime",
        ),
        ("t,x\n1,2\n3,abc\n", "line 3", "text 'abc' in numeric column 'x'"),
        ("t,x\n1,2\n3,4,5\n6,7\n", "line 3", "malformed line: 3 fields"),
        ("t,x\n1,2\n3\n", "line 3", "malformed line: 1 fields"),
        ("t,x\n1,2\n3,4\n5", "line 4", "truncated last line"),
        ("t,x\n1,2\n3,4\n5,6.", "line 4", None),
        ("t,x\n", "line 2", "no data lines"),
    ],
)
def test_errors_name_the_line(tmp_path, text, location, message):
    path = write(tmp_path, text)
    if message is None:  # "6." parses as a number: a last line without newline that is complete
        assert read_csv(path).table.column("x").to_pylist() == [2.0, 4.0, 6.0]
        return
    with pytest.raises(InputError, match=message) as info:
        read_csv(path)
    assert info.value.path == str(path)
    assert info.value.location == location


def test_truncated_last_line_dropped_with_warning(tmp_path, caplog):
    path = write(tmp_path, "t,x\n1,2\n3,4\n5")
    with caplog.at_level(logging.WARNING):
        raw = read_csv(path, drop_truncated_last_line=True)
    assert raw.dropped_last_line
    assert raw.table.column("t").to_pylist() == [1.0, 3.0]
    assert "line 4: dropped the truncated last line '5'" in caplog.text


def test_unreadable_inputs(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_csv(tmp_path / "none.csv")
    with pytest.raises(InputError, match="the file is empty"):
        read_csv(write(tmp_path, ""))
    bad = tmp_path / "latin.csv"
    bad.write_bytes(b"t,k\n1,a\n2,\xe9\n")
    with pytest.raises(InputError, match="not UTF-8") as info:
        read_csv(bad, text_columns=["k"])
    assert info.value.location == "line 3"


def test_other_delimiter(tmp_path):
    raw = read_csv(write(tmp_path, "t;x\n1;2,5\n"), delimiter=";", text_columns=["x"])
    assert raw.table.column("x").to_pylist() == ["2,5"]


@pytest.mark.parametrize("note", ["a", '"two\nlines"'])  # the fast path, the line parser
def test_a_column_of_true_and_false_is_read_as_text_for_the_converter(tmp_path, note):
    """A numeric column holding only true/false (any case; a CSV written from booleans) is read
    as text, which the converter's boolean_as_number makes 1/0; a column that mixes them with
    numbers, or a last line without a newline that holds another word, is refused at its line."""
    text = f"t,present,note\n1,TRUE,{note}\n2,false,b\n3,,c\n4,True,d\n"
    raw = read_csv(write(tmp_path, text), text_columns=["note"])
    assert [c.kind for c in raw.columns] == ["numeric", "string", "string"]
    assert raw.table.column("present").to_pylist() == ["TRUE", "false", None, "True"]
    last = write(tmp_path, text + "5,false,e", name="last.csv")  # (no newline at its end)
    assert read_csv(last, text_columns=["note"]).table.column("present")[-1].as_py() == "false"
    for bad, line, words in [
        (text + "5,maybe,e", 6, "text 'maybe' in column 'present', whose other values are true"),
        (
            text + "5,1,e\n",
            2,
            "'present' (expected a number or an empty field (a column holding "
            "only true and false is read as 1/0; this one holds numbers too))",
        ),
        (text.replace(",b\n", ",b,extra\n"), 3, "malformed line: 4 fields"),
    ]:
        with pytest.raises(InputError) as info:
            read_csv(write(tmp_path, bad, name="bad.csv"), text_columns=["note"])
        shift = note.count("\n") if line > 2 else 0  # (a value over two lines in row 1)
        assert info.value.location == f"line {line + shift}", str(info.value)
        assert words in str(info.value), str(info.value)


cell = st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False))
word = st.one_of(st.none(), st.text(alphabet='abc ,"', min_size=1, max_size=5))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(cell, word), min_size=1, max_size=30))
def test_fast_path_equals_line_parser(tmp_path_factory, rows):
    def q(s):
        return '"' + s.replace('"', '""') + '"'

    lines = ["x,w"] + [
        ",".join(["" if x is None else repr(x), "" if w is None else q(w)]) for x, w in rows
    ]
    path = tmp_path_factory.mktemp("c") / "p.csv"
    path.write_text("\n".join(lines) + "\n")
    raw = read_csv(path, text_columns=["w"])
    slow, _, _ = _slow_parse(path.read_text(), raw.columns, str(path), ",")
    assert raw.table.equals(slow)
    got = raw.table.column("x").to_pylist()
    want = [r[0] for r in rows]
    assert all(
        (a is None and b is None) or np.isclose(a, b) for a, b in zip(got, want, strict=True)
    )


@pytest.mark.parametrize("slow", [False, True])
def test_nan_spellings_are_missing_and_inf_is_kept(tmp_path, slow):
    """Empty, ?, NA, NaN/nan (and any NaN a number parses to) are null; inf stays infinite
    (the converter reports it). ``slow``: a quoted field sends the file through the line parser."""
    note = '"a\nb"' if slow else "n"
    text = (
        "t,x,kind,note\n"
        f"1,1.5,a,{note}\n2,,b,n\n3,?,,n\n4,NaN,NaN,n\n5,nan,nan,n\n6,inf,c,n\n7,-inf,NA,n\n"
    )
    raw = read_csv(write(tmp_path, text), text_columns=["kind", "note"])
    x = raw.table.column("x").to_pylist()
    assert x[:5] == [1.5, None, None, None, None]
    assert x[5:] == [float("inf"), float("-inf")]
    assert raw.table.column("kind").to_pylist() == ["a", "b", None, None, None, "c", None]
    assert raw.location(6) == ("row 7 (line 9)" if slow else "row 7 (line 8)")


def test_a_header_separated_otherwise_names_the_separator(tmp_path):
    for text, words in [
        ("t;y;x\n1;0;2\n", "the header has no ',' but 2 semicolons: the file looks ';'-separated"),
        ("t\ty\n1\t0\n", "the header has no ',' but 1 tabs: the file looks '\\t'-separated"),
        ("t|y\n1|0\n", "the header has no ',' but 1 vertical bars"),
    ]:
        with pytest.raises(InputError) as info:
            read_csv(write(tmp_path, text))
        assert info.value.location == "line 1" and words in str(info.value)
        assert "--delimiter" in str(info.value)
    # a header of one column without another separator is not guessed at
    assert read_csv(write(tmp_path, "t\n1\n")).names == ["t"]
    # with the delimiter given, a comma in a header name is no problem
    assert read_csv(write(tmp_path, "t;y,z\n1;0\n"), delimiter=";").names == ["t", "y,z"]


def test_binary_data_is_not_a_text_csv(tmp_path):
    bad = tmp_path / "bin.csv"
    bad.write_bytes(b"t,y\n1,0\n2,\x00\x01\n")
    with pytest.raises(InputError, match="not a text CSV file: a NUL byte at byte offset 10") as e:
        read_csv(bad)
    assert e.value.location == "line 3"
    # a character cut by the 1 MiB reading step is still UTF-8: no error
    text = "tt,kkkk\n" + "1,é\n" * 300_000  # an é across bytes 1048575 and 1048576
    assert text.encode("utf-8")[(1 << 20) - 1 : (1 << 20) + 1] == "é".encode()
    ok = tmp_path / "utf8.csv"
    ok.write_text(text, encoding="utf-8")
    assert len(read_csv(ok, text_columns=["kkkk"])) == 300_000
    ok.write_bytes(text.encode("utf-8") + b"2,\xe9\n")
    with pytest.raises(InputError, match="byte 0xe9 at byte offset 1500010 ") as e:
        read_csv(ok, text_columns=["kkkk"])
    assert e.value.location == "line 300002"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(cell, word), min_size=1, max_size=30))
def test_decimal_commas_read_as_decimal_points(tmp_path_factory, rows):
    """A file of decimal commas (``;`` between the fields, as Excel writes them in many locales)
    read with ``decimal=","`` holds the numbers the same file with decimal points holds, on the
    fast path and on the line parser."""

    def q(s):
        return '"' + s.replace('"', '""') + '"'

    def number(x, mark):
        return "" if x is None else repr(x).replace(".", mark)

    folder = tmp_path_factory.mktemp("d")
    points, commas = folder / "points.csv", folder / "commas.csv"
    for path, mark in ((points, "."), (commas, ",")):
        lines = ["x;w"] + [f"{number(x, mark)};{'' if w is None else q(w)}" for x, w in rows]
        path.write_text("\n".join(lines) + "\n")
    want = read_csv(points, text_columns=["w"], delimiter=";").table
    got = read_csv(commas, text_columns=["w"], delimiter=";", decimal=",")
    assert got.table.equals(want)
    slow, _, _ = _slow_parse(commas.read_text(), got.columns, str(commas), ";", ",")
    assert slow.equals(want)


@pytest.mark.parametrize("note", ["a", '"two\nlines"'])  # the fast path, the line parser
def test_a_number_with_the_other_decimal_mark_is_refused_at_its_line(tmp_path, note):
    """With decimal points (the default), a decimal comma is refused with a hint at the option;
    with decimal commas, a decimal point (or a thousands separator) is refused."""
    text = f"t;x;note\n1;2;{note}\n2;{{}};b\n"
    cases = [
        (
            ".",
            "1,5",
            "text '1,5' in numeric column 'x' (expected a number with a decimal "
            "point, or an empty field; a file of decimal commas is read with decimal: ',' in the "
            "mapping (--decimal ',' for delaycv convert))",
        ),
        (
            ",",
            "1.5",
            "text '1.5' in numeric column 'x' (expected a number with a decimal comma "
            "(the mapping's decimal: ','), or an empty field (name the column",
        ),
        (",", "1.234,5", "text '1.234,5' in numeric column 'x'"),
    ]
    for decimal, value, words in cases:
        path = write(tmp_path, text.format(value), name="bad.csv")
        with pytest.raises(InputError) as info:
            read_csv(path, text_columns=["note"], delimiter=";", decimal=decimal)
        assert info.value.location == f"line {3 + note.count(chr(10))}", str(info.value)
        assert words in str(info.value), str(info.value)
    last = write(tmp_path, "t;x\n1;2,5\n2;3.5", name="last.csv")  # (a cut-short last line)
    with pytest.raises(InputError, match="truncated last line .* decimal comma"):
        read_csv(last, delimiter=";", decimal=",")
    dropped = read_csv(last, delimiter=";", decimal=",", drop_truncated_last_line=True)
    assert dropped.table.column("x").to_pylist() == [2.5]
