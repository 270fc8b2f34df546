"""The foundation: windows, error messages, atomic writes, the console command."""

from __future__ import annotations

import subprocess
import sys

import pytest

from delaycv.common.atomic import atomic_dir, atomic_path
from delaycv.common.errors import DelaycvError, InputError
from delaycv.protocol.durations import Window, parse_window


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90d", Window(90 * 86400, "s")),
        ("12h", Window(12 * 3600, "s")),
        ("3600s", Window(3600, "s")),
        ("30m", Window(1800, "s")),
        ("2w", Window(14 * 86400, "s")),
        ("0", Window(0, "s")),
        (0, Window(0, "s")),
        ("3600 s", Window(3600, "s")),
        ("500i", Window(500, "i")),
        ("7 instances", Window(7, "i")),
        (" 1d ", Window(86400, "s")),
    ],
)
def test_parse_window(text, expected):
    assert parse_window(text) == expected


@pytest.mark.parametrize("text", ["-1d", "7x", "d", "", "1.5d", "seven days", -5, True])
def test_parse_window_rejects(text):
    with pytest.raises(DelaycvError, match="window"):
        parse_window(text)


@pytest.mark.parametrize("text", [7, "7", " 7 ", 3600])
def test_a_window_without_unit_is_an_error(text):
    # 7 could be seconds, days or instances: only 0 (no wait) may go without a unit
    amount = str(text).strip()
    with pytest.raises(DelaycvError, match="has no unit") as info:
        parse_window(text)
    assert f"{amount}d, {amount}h, {amount}s or {amount}i" in str(info.value)


def test_window_str_round_trips():
    for text in ["7d", "12h", "30m", "3601s", "500i", "0s"]:
        assert str(parse_window(text)) == text
        assert parse_window(str(parse_window(text))) == parse_window(text)


def test_input_error_names_file_place_and_expectation():
    err = InputError(
        "text in a numeric column", path="a.csv", location="row 3", expected="a number"
    )
    assert str(err) == "a.csv: row 3: text in a numeric column (expected a number)"
    assert str(InputError("empty file", path="b.arff")) == "b.arff: empty file"


def test_atomic_path_leaves_nothing_on_error(tmp_path):
    dest = tmp_path / "out" / "x.txt"
    with pytest.raises(RuntimeError), atomic_path(dest) as tmp:
        tmp.write_text("partial")
        raise RuntimeError("boom")
    assert not dest.exists()
    assert list(dest.parent.iterdir()) == []
    with atomic_path(dest) as tmp:
        tmp.write_text("whole")
    assert dest.read_text() == "whole"
    assert [p.name for p in dest.parent.iterdir()] == ["x.txt"]


def test_atomic_dir_replaces_whole(tmp_path):
    dest = tmp_path / "run"
    with atomic_dir(dest) as tmp:
        (tmp / "a").write_text("1")
    with pytest.raises(ValueError), atomic_dir(dest) as tmp:
        (tmp / "b").write_text("2")
        raise ValueError
    assert sorted(p.name for p in dest.iterdir()) == ["a"]
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


def test_console_command_version_and_usage():
    out = subprocess.run(
        [sys.executable, "-m", "delaycv", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.startswith("delaycv ")
    bad = subprocess.run([sys.executable, "-m", "delaycv"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "COMMAND" in bad.stderr


def test_atomic_outputs_get_the_usual_permissions(tmp_path):
    import os

    mask = os.umask(0o022)
    try:
        with atomic_path(tmp_path / "f.txt") as tmp:
            tmp.write_text("x")
        with atomic_dir(tmp_path / "d") as tmp:
            (tmp / "a").write_text("1")
    finally:
        os.umask(mask)
    assert (tmp_path / "f.txt").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "d").stat().st_mode & 0o777 == 0o755
