"""ARFF reader: the Weka/MOA dialect, fast and slow paths agree, every bad input names its line."""

from __future__ import annotations

import logging

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from delaycv.common.errors import InputError
from delaycv.data.arff import read_arff, split_values
from delaycv.data.formats import read_table
from delaycv.data.readers import java_date_format

DIALECT = """% a comment before everything
@RELATION 'my relation'

@attribute 'author time' numeric
@attribute size REAL
@attribute files integer   % trailing comment
@attribute kind {feat, 'bug fix', "doc"}
@attribute who string
@attribute day date "yyyy-MM-dd HH:mm"
@attribute buggy {0,1}

@DATA
% comment inside the data
1000,1.5,3,feat,alice,'2020-01-02 03:04',1

2000,?,4,'bug fix','bob smith',"2020-01-02 03:05",0
3000, 2.25 , 5 ,doc,'it\\'s',?,?
4000,1e3,6,?,'?',2021-12-31 23:59,1
"""


def write(tmp_path, text, name="d.arff"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_dialect_values_and_types(tmp_path):
    raw = read_arff(write(tmp_path, DIALECT))
    assert raw.relation == "my relation"
    assert raw.names == ["author time", "size", "files", "kind", "who", "day", "buggy"]
    assert [c.kind for c in raw.columns] == [
        "numeric",
        "numeric",
        "numeric",
        "nominal",
        "string",
        "date",
        "nominal",
    ]
    assert raw.column("kind").values == ("feat", "bug fix", "doc")
    t = raw.table
    assert t.column("author time").to_pylist() == [1000.0, 2000.0, 3000.0, 4000.0]
    assert t.column("size").to_pylist() == [1.5, None, 2.25, 1000.0]
    assert t.column("kind").to_pylist() == ["feat", "bug fix", "doc", None]
    # a quoted '?' is the text "?", an escaped quote is kept
    assert t.column("who").to_pylist() == ["alice", "bob smith", "it's", "?"]
    # 2020-01-02 03:04 UTC = 1577934240
    assert t.column("day").to_pylist() == [1577934240, 1577934300, None, 1640995140]
    assert t.column("day").type == pa.int64()
    assert t.column("buggy").to_pylist() == ["1", "0", None, "1"]
    # rows 1..4 are on lines 14, 16, 17, 18 (line 15 is blank, line 13 a comment)
    assert [raw.location(i) for i in range(4)] == [
        "row 1 (line 14)",
        "row 2 (line 16)",
        "row 3 (line 17)",
        "row 4 (line 18)",
    ]
    assert len(raw.sha256) == 64


def test_read_table_dispatches_on_suffix(tmp_path):
    raw = read_table(write(tmp_path, DIALECT))
    assert raw.format == "arff" and len(raw) == 4
    with pytest.raises(InputError, match="unknown input format 'txt'"):
        read_table(write(tmp_path, DIALECT, "d.txt"))


def test_fast_path_plain_data(tmp_path):
    text = (
        "@relation r\n@attribute a numeric\n@attribute b {x,y}\n@attribute c string\n"
        "@data\n1,x,hello\n2, y ,?\n\n3,?,z\n"
    )
    raw = read_arff(write(tmp_path, text))
    assert raw.table.column("a").to_pylist() == [1.0, 2.0, 3.0]
    assert raw.table.column("b").to_pylist() == ["x", "y", None]
    assert raw.table.column("c").to_pylist() == ["hello", None, "z"]
    assert raw.location(2) == "row 3 (line 9)"


@pytest.mark.parametrize("slow", [False, True], ids=["fast path", "line parser"])
def test_a_comma_after_the_last_value_as_moa_writes_is_read_as_nothing(tmp_path, slow):
    """MOA's WriteStreamToARFFFile ends every data line with a comma (``7.3,4.1,2.0,groupB,``),
    and MOA reads such files back: the same table as without the commas. A value after that
    comma (``?`` too) is still a malformed line."""
    head = (
        "@relation 'generators.SEAGenerator -b'\n\n@attribute attrib1 numeric\n"
        "@attribute attrib2 numeric\n@attribute class {groupA,groupB}\n\n@data\n\n"
    )
    lines = ["7.3,4.1,groupB", "1.5,?,groupA", "6.5,1.5,groupB"]
    comment = "% forces the line parser\n" if slow else ""
    plain = read_arff(write(tmp_path, head + comment + "\n".join(lines) + "\n", "a.arff"))
    moa = read_arff(write(tmp_path, head + comment + ",\n".join(lines) + ",\n", "b.arff"))
    assert moa.table.equals(plain.table) and moa.table.num_rows == 3
    assert moa.location(2) == plain.location(2)
    for extra in ("5", "?"):
        path = write(tmp_path, head + comment + "7.3,4.1,groupB,\n1.5,2.5,groupA," + extra + "\n")
        with pytest.raises(InputError, match="malformed data line: 4 values") as info:
            read_arff(path)
        assert info.value.location == ("line 11" if slow else "line 10")


def test_split_values():
    assert split_values("a, 'b c' ,\"d,e\" ,?") == [
        ("a", False),
        ("b c", True),
        ("d,e", True),
        ("?", False),
    ]
    assert split_values("1,2 % rest") == [("1", False), ("2", False)]


def test_java_date_format():
    assert java_date_format("yyyy-MM-dd'T'HH:mm:ss") == "%Y-%m-%dT%H:%M:%S"
    assert java_date_format("dd/MM/yy") == "%d/%m/%y"
    with pytest.raises(ValueError, match="unsupported letter 'Q'"):
        java_date_format("yyyy Q")


HEADER = "@relation r\n@attribute t numeric\n@attribute y {0,1}\n@data\n"


@pytest.mark.parametrize(
    "text, location, message",
    [
        (
            "@relation r\n@attribute t numeric\n@attribute y {0,1}\n1,0\n",
            "line 4",
            "malformed ARFF header: unexpected header line",
        ),
        ("@relation r\n@attribute t numeric\n@attribute y {0,1}\n", "line 3", "no @data line"),
        (
            "@relation r\n@attribute t numeric\n@attribute t numeric\n@data\n1,2\n",
            "line 3",
            "duplicate attribute name 't' \\(first on line 2\\)",
        ),
        ("@relation r\n@attribute t numerical\n@data\n1\n", "line 2", "unknown type 'numerical'"),
        ("@relation r\n@attribute t {a,b\n@data\n1\n", "line 2", "no closing }"),
        ("@relation r\n@attribute t relational\n@data\n1\n", "line 2", "relational"),
        ("@relation r\n@data\n", "line 2", "@data before any @attribute"),
        (HEADER + "1,0\n2,0,5\n", "line 6", "malformed data line: 3 values"),
        (HEADER + "1,0\n2\n3,1\n", "line 6", "malformed data line: 1 values"),
        (HEADER + "1,0\n2,2\n", "line 6", "unknown nominal value '2' of attribute 'y'"),
        (HEADER + "1,0\nabc,1\n", "line 6", "text 'abc' in numeric attribute 't'"),
        (HEADER + "1,0\n'2,1\n", "line 6", "unclosed quote"),
        (HEADER + "1,0\n{1 1, 0 2}\n", "line 6", "attribute index 0 after index 1"),
        (HEADER + "{0 1, 0 2}\n", "line 5", "attribute index 0 after index 0"),
        (HEADER + "{0 1, 2 1}\n", "line 5", "attribute index 2 .* beyond the last .*1, 'y'"),
        (HEADER + "{0 1, 1}\n", "line 5", "no value after attribute index 1"),
        (HEADER + "{0 1, y 1}\n", "line 5", "a sparse entry without an attribute index"),
        (HEADER + "{0 1, 1 0\n", "line 5", "unclosed sparse line"),
        (HEADER + "{0 1} x\n", "line 5", "text after a sparse line's }: 'x'"),
        (HEADER + "{0 1, 1 2}\n", "line 5", "unknown nominal value '2' of attribute 'y'"),
        (HEADER + "{0 1}, {2.5}\n", "line 5", "instance weights are not supported"),
        (HEADER + "1,0\n2,1\n3,", "line 7", "truncated last line"),
        (HEADER, "line 4", "no data lines"),
    ],
)
def test_errors_name_the_line(tmp_path, text, location, message):
    path = write(tmp_path, text)
    with pytest.raises(InputError, match=message) as info:
        read_arff(path)
    assert info.value.path == str(path)
    assert info.value.location == location


def test_bad_date_names_line(tmp_path):
    text = "@relation r\n@attribute d date 'yyyy-MM-dd'\n@data\n2020-01-01\n2020-13-45\n"
    with pytest.raises(InputError, match="does not match") as info:
        read_arff(write(tmp_path, text))
    assert info.value.location == "line 5"
    assert "yyyy" not in info.value.expected and "%Y-%m-%d" in info.value.expected


def test_truncated_last_line_dropped_with_warning(tmp_path, caplog):
    path = write(tmp_path, HEADER + "1,0\n2,1\n3,")
    with caplog.at_level(logging.WARNING):
        raw = read_arff(path, drop_truncated_last_line=True)
    assert raw.dropped_last_line
    assert raw.table.column("t").to_pylist() == [1.0, 2.0]
    assert "line 7: dropped the truncated last line '3,'" in caplog.text


def test_last_line_without_newline_that_parses_is_kept(tmp_path):
    raw = read_arff(write(tmp_path, HEADER + "1,0\n2,1"))
    assert raw.table.column("y").to_pylist() == ["0", "1"]
    assert not raw.dropped_last_line


def test_unreadable_inputs(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_arff(tmp_path / "none.arff")
    with pytest.raises(InputError, match="the file is empty"):
        read_arff(write(tmp_path, "  \n\n"))
    with pytest.raises(InputError, match="is a directory"):
        read_arff(tmp_path)
    bad = tmp_path / "latin.arff"
    bad.write_bytes(HEADER.encode() + b"1,0\n2,\xe9\n")
    with pytest.raises(InputError, match="not UTF-8") as info:
        read_arff(bad)
    assert info.value.location == "line 6"


values = st.one_of(
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(lambda f: float(f)),
)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(values, st.sampled_from(["a", "b c", "d"]), values), min_size=1, max_size=25
    ),
    st.booleans(),
)
def test_fast_and_slow_paths_agree(tmp_path_factory, rows, spaces):
    """The same data, once plain (pyarrow path) and once with a comment (line parser)."""

    def fmt(v):
        return "?" if v is None else repr(v)

    sep = ", " if spaces else ","
    head = "@relation r\n@attribute x numeric\n@attribute k {a,'b c',d}\n@attribute y real\n@data\n"
    body = [sep.join([fmt(x), "'b c'" if k == "b c" else k, fmt(y)]) for x, k, y in rows]
    plain = [sep.join([fmt(x), k, fmt(y)]) for x, k, y in rows]
    d = tmp_path_factory.mktemp("ff")
    (d / "slow.arff").write_text(head + "% c\n" + "\n".join(body) + "\n")
    # only nominal 'b c' needs quotes; give the fast file the same values without them if none
    fast_rows = plain if all(k != "b c" for _, k, _ in rows) else body
    (d / "fast.arff").write_text(head + "\n".join(fast_rows) + "\n")
    slow = read_arff(d / "slow.arff").table
    fast = read_arff(d / "fast.arff").table
    assert slow.equals(fast)
    xs = [r[0] for r in rows]
    got = slow.column("x").to_pylist()
    assert all((a is None and b is None) or np.isclose(a, b) for a, b in zip(got, xs, strict=True))


@pytest.mark.parametrize("slow", [False, True])
def test_nan_is_missing_and_inf_is_kept(tmp_path, slow):
    """``?`` and a NaN number are null; inf stays infinite (the converter reports it).
    ``slow``: a comment sends the data through the line parser."""
    head = "@relation r\n@attribute x numeric\n@attribute k {a,b}\n@data\n"
    body = "1.5,a\n?,b\nNaN,?\nnan,a\ninf,b\n-inf,a\n"
    raw = read_arff(write(tmp_path, head + ("% c\n" if slow else "") + body))
    x = raw.table.column("x").to_pylist()
    assert x == [1.5, None, None, None, float("inf"), float("-inf")]
    assert raw.table.column("k").to_pylist() == ["a", "b", None, "a", "b", "a"]


SPARSE_HEAD = (
    "@relation words\n@attribute t numeric\n@attribute w1 numeric\n@attribute w2 numeric\n"
    "@attribute kind {feat,'bug fix',doc}\n@attribute class {no,yes}\n@data\n"
)


def test_sparse_lines_read_as_weka_reads_them(tmp_path):
    """An omitted numeric value is 0 and an omitted nominal value the first declared one (not
    missing: ``?`` is); quoted values, ``{}``, MOA's comma after a line, dense lines among sparse
    ones and comments are read as in a dense file."""
    text = SPARSE_HEAD + (
        "{0 1000, 1 3, 4 yes}\n"
        "% a comment\n"
        "{0 1001,2 2.5 , 3 'bug fix', 4 no}\n"
        "{}\n"
        "1003,?,7,doc,yes\n"
        "{0 1004, 1 ?, 3 ?},\n"
        '{ 0 1005 , 4 "yes" }   % trailing comment\n'
    )
    raw = read_arff(write(tmp_path, text))
    t = raw.table
    assert t.column("t").to_pylist() == [1000.0, 1001.0, 0.0, 1003.0, 1004.0, 1005.0]
    assert t.column("w1").to_pylist() == [3.0, 0.0, 0.0, None, None, 0.0]
    assert t.column("w2").to_pylist() == [0.0, 2.5, 0.0, 7.0, 0.0, 0.0]
    assert t.column("kind").to_pylist() == ["feat", "bug fix", "feat", "doc", None, "feat"]
    assert t.column("class").to_pylist() == ["yes", "no", "no", "yes", "no", "yes"]
    assert [raw.location(i) for i in (0, 1, 5)] == [
        "row 1 (line 8)",
        "row 2 (line 10)",
        "row 6 (line 14)",
    ]


def test_a_sparse_line_that_omits_a_string_or_date_value_is_an_error(tmp_path):
    head = "@relation r\n@attribute t numeric\n@attribute who string\n@attribute y {0,1}\n@data\n"
    path = write(tmp_path, head + "{0 1, 1 ann, 2 1}\n{0 2, 2 1}\n")
    with pytest.raises(InputError, match="omits the value of string attribute 'who'") as info:
        read_arff(path)
    assert info.value.location == "line 7"
    assert "1970-01-01" in info.value.expected
    raw = read_arff(write(tmp_path, head + "{0 1, 1 ann, 2 1}\n{0 2, 1 'b c'}\n"))
    assert raw.table.column("who").to_pylist() == ["ann", "b c"]
    assert raw.table.column("y").to_pylist() == ["1", "0"]
    with pytest.raises(InputError, match="omits the value of date attribute 'd'") as info:
        read_arff(
            write(tmp_path, "@relation r\n@attribute d date\n@attribute y {0,1}\n@data\n{1 1}\n")
        )
    assert info.value.location == "line 5"


def test_a_truncated_sparse_last_line_is_dropped_or_named(tmp_path):
    text = SPARSE_HEAD + "{0 1, 4 yes}\n{0 2, 1"
    with pytest.raises(InputError, match="truncated last line") as info:
        read_arff(write(tmp_path, text))
    assert info.value.location == "line 9"
    raw = read_arff(write(tmp_path, text), drop_truncated_last_line=True)
    assert raw.table.column("t").to_pylist() == [1.0] and raw.dropped_last_line


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.just(0.0), values),
            st.sampled_from(["a", "b c", "d", None]),
            st.one_of(st.just(0.0), values),
        ),
        min_size=1,
        max_size=25,
    ),
    st.booleans(),
)
def test_sparse_and_dense_files_of_the_same_data_agree(tmp_path_factory, rows, moa_commas):
    """Any data written densely and sparsely (each 0 and first nominal value omitted) reads as
    the same table."""

    def fmt(v):
        return "?" if v is None else repr(v)

    def nominal(k):
        return "?" if k is None else ("'b c'" if k == "b c" else k)

    head = "@relation r\n@attribute x numeric\n@attribute k {a,'b c',d}\n@attribute y real\n@data\n"
    end = ",\n" if moa_commas else "\n"
    dense = [",".join([fmt(x), nominal(k), fmt(y)]) for x, k, y in rows]
    sparse = []
    for x, k, y in rows:
        given = [(0, x, 0.0), (1, k, "a"), (2, y, 0.0)]
        shown = [
            f"{i} {nominal(v) if i == 1 else fmt(v)}" for i, v, zero in given if str(v) != str(zero)
        ]  # (-0.0 shown)
        sparse.append("{" + ", ".join(shown) + "}")
    d = tmp_path_factory.mktemp("sparse")
    (d / "dense.arff").write_text(head + end.join(dense) + end)
    (d / "sparse.arff").write_text(head + end.join(sparse) + end)
    assert read_arff(d / "sparse.arff").table.equals(read_arff(d / "dense.arff").table)
