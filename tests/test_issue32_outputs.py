"""Smaller mistakes of issue 32 (item 9) and write failures of ``delaycv evaluate`` (item 8):
``convert`` refuses an output that is not named ``.parquet``; ``every`` has one rule in the API,
the command line and the settings; a CSV read with the wrong delimiter names the right one; a full
disk while a run directory is written is one line naming it and what was being written, and
leaves nothing behind."""

from __future__ import annotations

import errno
import os

import numpy as np
import pytest
from engine_bruteforce import random_stream

import delaycv
from delaycv.cli import main
from delaycv.common.errors import ConfigError, InputError
from delaycv.data.csv import read_csv
from delaycv.data.stream import write_stream
from delaycv.data.synthetic import generate_stream
from delaycv.protocol.settings import make_settings
from delaycv.tables.run_writer import RunWriter

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


@pytest.mark.parametrize(
    "raise_it, line",
    [
        (
            "from delaycv.common.errors import ConfigError; "
            "raise ConfigError('the learner X failed\\non fold 0', location='key learner')",
            "job: error: key learner: the learner X failed on fold 0",
        ),
        (
            "raise OSError(28, 'No space left on device', '/runs/a/folds.parquet')",
            "job: error: /runs/a/folds.parquet: No space left on device",
        ),
    ],
)
def test_a_rule_script_s_error_is_one_line_and_exit_2(raise_it, line):
    import subprocess
    import sys

    code = f"from delaycv.study.digests import one_line_errors; one_line_errors('job'); {raise_it}"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [line]


def test_a_defect_keeps_its_traceback():
    import subprocess
    import sys

    code = "from delaycv.study.digests import one_line_errors; one_line_errors('job'); 1 / 0"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (
        done.returncode == 1 and "Traceback" in done.stderr and "ZeroDivisionError" in done.stderr
    )


@pytest.mark.parametrize(
    "sig, word, status", [("SIGTERM", "terminated", 143), ("SIGINT", "interrupted", 130)]
)
def test_a_stopped_job_says_so_in_its_log(tmp_path, sig, word, status):
    """A rule script stopped by Snakemake (SIGTERM) or by Ctrl-C in the terminal (SIGINT: the
    whole foreground process group, the jobs too) writes one line saying so, after its last
    progress line, no traceback, and unwinds (exit 143, 130)."""
    import signal
    import subprocess
    import sys
    import time

    code = (
        "import time\n"
        "from delaycv.common.interrupt import terminate_on_sigterm\n"
        "from delaycv.study.digests import one_line_errors\n"
        "terminate_on_sigterm(); one_line_errors('job')\n"
        "print('started', flush=True)\n"
        "time.sleep(30)\n"
    )

    def default_signals() -> None:  # (a test run in the background may ignore SIGINT)
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_DFL)

    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_signals,
    )
    assert proc.stdout.readline().strip() == "started"
    time.sleep(0.2)
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == status
    assert err.strip().splitlines() == [f"job: {word} ({sig}): its outputs are not written"]
