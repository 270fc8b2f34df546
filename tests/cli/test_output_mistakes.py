"""Mistakes of the commands' outputs and options, and write failures of ``delaycv evaluate``:
``convert`` refuses an output that is not named ``.parquet``; ``every`` has one rule in the API,
the command line and the settings; a CSV read with the wrong delimiter names the right one; a full
disk while a run directory is written is one line naming it and what was being written, and
leaves nothing behind."""

from __future__ import annotations

import errno
import os

import numpy as np
import pytest

import delaycv
from delaycv.cli import main
from delaycv.common.errors import ConfigError, InputError
from delaycv.data.csv import read_csv
from delaycv.data.stream_file import write_stream
from delaycv.data.synthetic import generate_stream
from delaycv.protocol.settings import make_settings
from delaycv.tables.run_writer import RunWriter
from tests.support.engine_bruteforce import random_stream

CSV = "time,label,la,ld\n1600000000,0,1,2\n1600000100,1,3,4\n1600000200,0,1,1\n"


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "raw.csv").write_text(CSV)
    write_stream(random_stream(np.random.default_rng(3), 600), tmp_path / "s.parquet")
    return tmp_path


def one_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("delaycv: error: ") and len(err.splitlines()) == 1, err
    return err.removeprefix("delaycv: error: ").rstrip("\n")


# --------------------------------------------------------------------------- convert's output


CONVERT = ["--time", "time", "--label", "label", "--positive", "1", "--quiet"]


@pytest.mark.parametrize(
    "dest, ends",
    [
        ("out.csv", "ends in '.csv'"),
        ("out", "has no suffix"),
        ("out.parquet.gz", "ends in '.gz'"),
        ("out.pq", "ends in '.pq'"),
    ],
)
def test_convert_refuses_an_output_not_named_parquet(work, capsys, dest, ends):
    assert main(["convert", "raw.csv", dest, *CONVERT]) == 2
    assert one_error(capsys) == (
        f"{dest}: argument DEST.parquet: the stream is written as Parquet, and this name {ends} "
        "(expected a file name ending in .parquet)"
    )
    assert sorted(p.name for p in work.iterdir()) == ["raw.csv", "s.parquet"]


@pytest.mark.parametrize("dest", ["out.parquet", "OUT.PARQUET"])
def test_convert_writes_a_parquet_name(work, dest):
    assert main(["convert", "raw.csv", dest, *CONVERT]) == 0
    assert (work / dest).read_bytes()[:4] == b"PAR1"


# --------------------------------------------------------------------------- the delimiter


@pytest.mark.parametrize(
    "given, shown", [(";", ";"), ("\t", "\\t"), ("|", "|")], ids=["semicolon", "tab", "bar"]
)
def test_a_comma_separated_file_read_with_another_delimiter_says_so(tmp_path, given, shown):
    path = tmp_path / "raw.csv"
    path.write_text(CSV)
    with pytest.raises(InputError) as info:
        read_csv(path, delimiter=given)
    assert str(info.value) == (
        f"{path}: line 1: the header has no '{shown}' but 3 commas: the file looks ','-separated "
        f"(expected fields separated by '{shown}', or the delimiter option: delimiter: ',' in "
        "the mapping, --delimiter ',' for delaycv convert)"
    )


def test_the_delimiter_hint_on_the_command_line(work, capsys):
    assert main(["convert", "raw.csv", "o.parquet", *CONVERT, "--delimiter", ";"]) == 2
    assert one_error(capsys).startswith(
        "raw.csv: line 1: the header has no ';' but 3 commas: the file looks ','-separated"
    )
    assert not (work / "o.parquet").exists()


def test_the_delimiter_hint_on_a_real_file(brackets_csv):
    with pytest.raises(InputError, match="the file looks ','-separated"):
        read_csv(brackets_csv, delimiter=";")


# --------------------------------------------------------------------------- every: one rule

EVERY = (
    "every {v} (expected an integer >= 1: a checkpoint every that many instances, and at the last)"
)


@pytest.mark.parametrize("value", [0, -3, 2.5, True])
def test_every_has_one_rule_in_the_settings_and_the_api(value):
    with pytest.raises(ConfigError) as info:
        make_settings(learner="NoChange", every=value)
    assert str(info.value) == "key checkpoints.every: " + EVERY.format(v=repr(value))
    with pytest.raises(ConfigError) as api:
        delaycv.evaluate(generate_stream(rows=50, seed=1), "NoChange", every=value)
    assert str(api.value) == str(info.value)


@pytest.mark.parametrize("value", ["0", "-3"])
def test_every_has_the_same_rule_on_the_command_line(work, capsys, value):
    argv = ["evaluate", "s.parquet", "--learner", "NoChange", "--every", value, "--out", "run"]
    assert main(argv) == 2
    assert one_error(capsys) == "option --every: " + EVERY.format(v=value)
    assert not (work / "run").exists()


def test_every_none_is_the_last_instance_only():
    result = delaycv.evaluate(generate_stream(rows=300, seed=1), "NoChange", every=None)
    assert sorted(result.folds["checkpoint"].unique()) == [300]


# --------------------------------------------------------------------------- a full disk


def no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def pyarrow_no_space(*args, **kwargs):
    # pyarrow's own form: an OSError without errno or file name
    raise OSError("Error writing bytes to file. Detail: [errno 28] No space left on device")


@pytest.mark.parametrize(
    "method, raise_, what",
    [
        ("add", no_space, "folds.parquet and summary.parquet (written as the run goes)"),
        ("write_tables", pyarrow_no_space, "folds.parquet and summary.parquet"),
        ("finish", no_space, "predictions.parquet and run.json"),
    ],
)
def test_a_full_disk_names_the_run_directory_and_what_was_written(
    work, capsys, monkeypatch, method, raise_, what
):
    # an earlier run in the directory stays as it was
    argv = ["evaluate", "s.parquet", "--learner", "NoChange", "--folds", "2", "--every", "100"]
    assert main([*argv, "--out", "run", "--quiet", "--no-timing"]) == 0
    before = {p.name: p.read_bytes() for p in (work / "run").iterdir()}
    capsys.readouterr()  # (its note: the stream has no effort)
    monkeypatch.setattr(RunWriter, method, raise_)
    assert main([*argv, "--out", "run", "--quiet", "--predictions"]) == 2
    reason = (
        "No space left on device"
        if raise_ is no_space
        else ("Error writing bytes to file. Detail: [errno 28] No space left on device")
    )
    expected = "free space on its file system" if raise_ is no_space else "a writable run directory"
    assert one_error(capsys) == (
        f"run: {what} cannot be written: {reason}; the run directory is left as it was "
        f"(expected {expected})"
    )
    assert {p.name: p.read_bytes() for p in (work / "run").iterdir()} == before
    assert sorted(p.name for p in work.iterdir()) == ["raw.csv", "run", "s.parquet"]


def test_a_full_disk_before_the_run_directory_exists(work, capsys, monkeypatch):
    monkeypatch.setattr("delaycv.common.atomic._new_temporary", no_space)
    argv = ["evaluate", "s.parquet", "--learner", "NoChange", "--folds", "2", "--out", "new/run"]
    assert main([*argv, "--quiet"]) == 2
    assert one_error(capsys) == (
        "new/run: its temporary folder cannot be written: No space left on device; the run "
        "directory is left as it was (expected free space on its file system)"
    )
    assert not (work / "new" / "run").exists()


def test_a_read_only_place_for_the_run_directory(work, capsys):
    """/sys refuses new entries to everyone, root included."""
    if not os.path.isdir("/sys/kernel"):
        pytest.skip("no /sys/kernel")
    argv = ["evaluate", "s.parquet", "--learner", "NoChange", "--out", "/sys/kernel/delaycv-run"]
    assert main([*argv, "--quiet"]) == 2
    assert one_error(capsys).startswith("/sys/kernel/delaycv-run: cannot be written: /sys/kernel")
