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
