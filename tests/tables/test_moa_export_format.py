"""MOA export, pure parts: Java ``Double.toString`` formatting, cells, MOA fold averaging, reading back."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from delaycv.tables.moa_export import average, format_cell, java_double_str, read_moa_csv

JAVA_CASES = [
    # (value, what Java's Double.toString prints); the first ones are cells of the MOA extension's
    # files
    (30.0, "30.0"),
    (1324000448.0, "1.324000448E9"),
    (1323993389.0, "1.323993389E9"),
    (-9.266041943596472e-13, "-9.266041943596472E-13"),
    (0.089544031, "0.089544031"),
    (3.573047252229764, "3.573047252229764"),
    (1.2999999999999998, "1.2999999999999998"),
    (46.66401757934212, "46.66401757934212"),
    (-14.390983334212645, "-14.390983334212645"),
    (0.0, "0.0"),
    (-0.0, "-0.0"),
    (1.0, "1.0"),
    (100.0, "100.0"),
    (0.1, "0.1"),
    (0.001, "0.001"),
    (0.00099, "9.9E-4"),
    (1.0e-4, "1.0E-4"),
    (9999999.0, "9999999.0"),
    (9999999.5, "9999999.5"),
    (1.0e7, "1.0E7"),
    (12345678.9, "1.23456789E7"),
    (123456789.0, "1.23456789E8"),
    (1.0e21, "1.0E21"),
    (2.5e-7, "2.5E-7"),
    (-1234.5, "-1234.5"),
    (1e100, "1.0E100"),
    (1.7976931348623157e308, "1.7976931348623157E308"),
    (float("inf"), "Infinity"),
    (float("-inf"), "-Infinity"),
    (float("nan"), "NaN"),
]


@pytest.mark.parametrize(("value", "text"), JAVA_CASES)
def test_java_double_to_string(value, text):
    assert java_double_str(value) == text


def test_cells_write_nan_as_question_mark_and_keep_infinities():
    assert format_cell(float("nan")) == "?"
    assert format_cell(float("-inf")) == "-Infinity"
    assert format_cell(42) == "42.0"
    assert format_cell(1551774519) == "1.551774519E9"


JAVA_SHAPE = re.compile(r"-?(\d+\.\d+|\d\.\d+E-?\d+)")


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300))
def test_java_format_round_trips_and_has_java_shape(x):
    if x != 0 and abs(x) < 1e-300:
        x = 0.0
    text = java_double_str(x)
    assert JAVA_SHAPE.fullmatch(text), text
    assert float(text) == x
    scientific = "E" in text
    assert scientific == (x != 0 and not 1e-3 <= abs(x) < 1e7)
    if scientific:  # one digit before the point, never 0 unless the mantissa is 0
        assert text.lstrip("-")[0] != "0"


def test_average_moa_rules():
    nan, inf = float("nan"), float("inf")
    # fewer than two finite values -> 0.0 and 0.0 (not the single value)
    assert average([]) == (0.0, 0.0)
    assert average([7.5]) == (0.0, 0.0)
    assert average([7.5, nan, inf, -inf]) == (0.0, 0.0)
    # two finite values: mean and sample standard deviation (n - 1)
    mean, err = average([1.0, nan, 4.0])
    assert mean == 2.5 and err == pytest.approx(math.sqrt(4.5), rel=1e-15)
    mean, err = average([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0])
    assert mean == 5.0 and err == pytest.approx(math.sqrt(32 / 7), rel=1e-15)
    # identical values give an exact zero spread (Welford)
    assert average([0.1] * 10) == (pytest.approx(0.1, rel=1e-15), 0.0)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(min_value=-1e6, max_value=1e6), min_size=2, max_size=30))
def test_average_agrees_with_two_pass_formula(values):
    mean, err = average(values)
    m = sum(values) / len(values)
    s = math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))
    assert mean == pytest.approx(m, rel=1e-9, abs=1e-6)
    assert err == pytest.approx(s, rel=1e-6, abs=1e-6)


def test_read_moa_csv_skips_repeated_headers_and_reads_java_values(tmp_path):
    path = tmp_path / "dump.csv"
    path.write_text("a,b,c\n30.0,?,-Infinity\na,b,c\n1.5E9,Infinity,-0.0\n", encoding="utf-8")
    header, rows = read_moa_csv(path)
    assert header == ["a", "b", "c"]
    assert rows[0][0] == 30.0 and math.isnan(rows[0][1]) and rows[0][2] == float("-inf")
    assert rows[1] == [1.5e9, float("inf"), -0.0]
