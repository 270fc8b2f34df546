"""The help of every command, as a terminal prints it."""

from __future__ import annotations

import subprocess
import sys

import pytest

COMMANDS = ["convert", "generate", "evaluate", "merge", "compare", "rank", "plot", "check"]


def printed_help(*argv: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "delaycv", *argv, "--help"],
        capture_output=True, text=True, env={"COLUMNS": "100", "PATH": ""}, check=True,
    )  # fmt: skip
    return done.stdout


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_prints_no_format_escapes(command):
    """argparse formats the options' help with %, not the descriptions: a "%%" written in a
    description would be printed as it is."""
    text = printed_help(*([command] if command else []))
    assert "usage: delaycv" in text
    assert "%%" not in text and "%(" not in text, text


def test_the_commands_listed_are_the_commands_tested():
    text = printed_help()
    listed = [
        line.split()[0] for line in text.splitlines() if line.startswith("    ") and line.split()
    ]
    assert listed == COMMANDS


@pytest.mark.parametrize(
    "argv, words",
    [
        (["evaluate", "s.parquet", "--learner", "NoChange", "--out", "r", "--metric", "popt"],
         "evaluate: unrecognized arguments: --metric popt (see delaycv evaluate --help)"),
        (["merge", "a", "b", "--out", "m.parquet", "--tests"],
         "merge: unrecognized arguments: --tests (see delaycv merge --help)"),
        (["nosuchcommand"], "invalid choice: 'nosuchcommand'"),
    ],
)  # fmt: skip
def test_a_usage_error_names_the_help_to_read(argv, words, capsys):
    """An argument no option of the command takes points to that command's help (argparse's
    top-level parser reports it, and named `delaycv --help`, which does not list the options)."""
    from delaycv.cli import main

    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("delaycv: error: ") and words in err
    assert err.count("\n") == 1
