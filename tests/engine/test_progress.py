"""Progress a person can follow (issue 13): reports within a chunk, plain lines off a terminal."""

from __future__ import annotations

import io

import numpy as np
import pytest

from delaycv import engine
from delaycv.engine import PROGRESS_BLOCK, Progress
from tests.support.engine_bruteforce import random_stream
from tests.support.engine_runs import evaluate


class FakeClock:
    """Seconds that advance by ``step`` at every reading."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def prequential(n: int, reporter: Progress, seed: int) -> None:
    """A run of NoChange on a random stream of ``n`` instances, one fold, reporting to ``reporter``."""
    stream = random_stream(np.random.default_rng(seed), n)
    evaluate(stream, "NoChange", "ideal", {"scheme": "prequential"}, progress=reporter)


def test_progress_comes_within_a_chunk_of_one_fold():
    """One fold, one chunk (the whole stream): the callback still runs every PROGRESS_BLOCK
    instances, and the counts add up to every instance."""
    n = 5 * PROGRESS_BLOCK + 17
    assert n < engine.CHUNK
    calls = []
    evaluate(
        random_stream(np.random.default_rng(1), n),
        "NoChange",
        "ideal",
        {"scheme": "prequential"},
        seed=1,
        progress=calls.append,
    )
    assert calls == [PROGRESS_BLOCK] * 5 + [17]


def test_progress_counts_every_fold():
    calls = []
    stream = random_stream(np.random.default_rng(2), 2 * PROGRESS_BLOCK)
    evaluate(stream, "NoChange", "ideal", {"scheme": "split", "folds": 3}, progress=calls.append)
    assert calls == [PROGRESS_BLOCK] * 6


def test_reports_in_a_log_are_plain_lines_within_a_chunk():
    """Not a terminal (a Snakemake job log): whole lines, no carriage return, one per report."""
    log = io.StringIO()
    n = 4 * PROGRESS_BLOCK
    prequential(n, Progress(n, after=0.0, every=0.5, stream=log, clock=FakeClock(1.0)), seed=3)
    text = log.getvalue()
    assert "\r" not in text and text.endswith("\n")
    lines = text.splitlines()
    assert len(lines) == 4  # one per block: the clock moved 1 s between them
    assert lines[0].startswith(f"delaycv: {PROGRESS_BLOCK:,}/{n:,} instance-folds (25.0 %)")
    assert lines[-1].startswith(f"delaycv: {n:,}/{n:,} instance-folds (100.0 %)")
    assert all(", ETA " in line for line in lines)


def test_reports_wait_for_the_interval_and_the_start_delay():
    log = io.StringIO()
    clock = FakeClock(1.0)
    reporter = Progress(100, after=3.0, every=5.0, stream=log, clock=clock)  # t0 = 1
    for _ in range(20):
        reporter(5)  # call k reads the clock at 1 + k, with 5k done
    shown = [line.split()[1] for line in log.getvalue().splitlines()]
    # first at t = 4 (3 s after the start), then at t = 9, 14, 19 (5 s apart)
    assert shown == ["15/100", "40/100", "65/100", "90/100"]


def test_on_a_terminal_one_line_is_rewritten():
    term = Terminal()
    reporter = Progress(10, after=0.0, every=0.0, stream=term, clock=FakeClock(1.0))
    reporter(4)
    reporter(6)
    reporter.close()
    text = term.getvalue()
    assert text.count("\r") == 2 and text.count("\n") == 1 and text.endswith("\n")
    assert "10/10 instance-folds (100.0 %)" in text


def test_a_run_that_stops_midway_ends_the_progress_line():
    """Ctrl-C (or an error) midway: the line rewritten on the terminal is ended, so that the
    command's own line ("delaycv: interrupted") starts a line of its own instead of following
    "ETA 4 s" on it."""

    class StoppedMidway(Progress):
        def update(self, done: int) -> None:
            super().update(done)
            if done >= 2 * PROGRESS_BLOCK:
                raise KeyboardInterrupt

    term = Terminal()
    n = 4 * PROGRESS_BLOCK
    reporter = StoppedMidway(n, after=0.0, every=0.0, stream=term, clock=FakeClock(1.0))
    with pytest.raises(KeyboardInterrupt):
        prequential(n, reporter, seed=4)
    text = term.getvalue()
    assert text.count("\r") == 2 and text.endswith("   \n")


def test_default_interval_depends_on_the_stream():
    assert Progress(1, stream=Terminal()).every == 1.0
    assert Progress(1, stream=io.StringIO()).every == 5.0
