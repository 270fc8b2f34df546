"""A rule script's job ends in one line: a mistake is one line and exit 2, a defect keeps its
traceback, a stopped job says so in its log (delaycv.study.digests.one_line_errors,
delaycv.common.interrupt.terminate_on_sigterm)."""

from __future__ import annotations

import pytest


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
