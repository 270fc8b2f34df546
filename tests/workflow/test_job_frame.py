"""The frame of a rule script's job (delaycv.study.job.stage_job): its log, the code check, a
mistake in one line and exit 2, a defect with its traceback, a stopped job said in its log
(delaycv.study.job.one_line_errors, delaycv.common.interrupt.terminate_on_sigterm), and the end
of the job without Python's teardown (delaycv.study.job.end_job)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from delaycv.study import job

#: A rule script's start: the ``snakemake`` object Snakemake gives it (its log and params).
SNAKEMAKE = (
    "import types\n"
    "snakemake = types.SimpleNamespace(log=[{log!r}], params=types.SimpleNamespace(code={code!r}))\n"
)


def run_script(body: str, log: Path, code: str) -> subprocess.CompletedProcess:
    """Run a rule script whose ``snakemake`` has the log ``log`` and the code digest ``code``."""
    script = SNAKEMAKE.format(log=str(log), code=code) + body
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)


def test_a_job_s_frame_logs_checks_the_code_and_ends_the_job(tmp_path):
    from delaycv.study.digests import stage_digest

    body = (
        "from delaycv.study.job import stage_job\n"
        "with stage_job(snakemake, 'merge') as job:\n"
        "    print('outputs written')\n"
        "    job.say('a step')\n"
        "print('after the job')\n"
    )
    done = run_script(body, tmp_path / "job.log", stage_digest("merge"))
    assert done.returncode == 0 and done.stdout == done.stderr == ""
    lines = (tmp_path / "job.log").read_text().splitlines()
    assert lines[0] == "outputs written" and lines[1].endswith(" s] a step") and len(lines) == 2


def test_a_job_of_other_code_stops_before_its_block(tmp_path):
    body = (
        "from delaycv.study.job import stage_job\n"
        "with stage_job(snakemake, 'merge', label='merge d1'):\n"
        "    print('never')\n"
    )
    done = run_script(body, tmp_path / "job.log", "0" * 16)
    log = (tmp_path / "job.log").read_text()
    assert done.returncode == 2 and "never" not in log and "Traceback" not in log
    assert log.startswith("merge d1: error: the delaycv package this job imports")
    assert log.rstrip("\n").endswith(
        "the workflow computed 0000000000000000; the job's environment holds another delaycv than the workflow's (recreate its conda env, see docs/workflow.md) (expected digest 0000000000000000)"
    )


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

    code = f"from delaycv.study.job import one_line_errors; one_line_errors('job'); {raise_it}"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [line]


def test_a_defect_keeps_its_traceback():
    import subprocess
    import sys

    code = "from delaycv.study.job import one_line_errors; one_line_errors('job'); 1 / 0"
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
        "from delaycv.study.job import one_line_errors\n"
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


@pytest.mark.parametrize("keep", ["", "1"])
def test_end_job_flushes_and_skips_the_teardown_unless_asked_to_keep_it(tmp_path, keep):
    """A rule script ends with end_job: what it printed is in its log, the exit status is 0, and
    Python's teardown (here an atexit handler) runs only with DELAYCV_KEEP_TEARDOWN=1."""
    log = tmp_path / "job.log"
    code = (
        "import atexit, sys\n"
        f"sys.stdout = sys.stderr = open({str(log)!r}, 'w')\n"  # buffered, as a job's log
        "atexit.register(lambda: print('teardown', file=sys.__stdout__, flush=True))\n"
        "from delaycv.study.job import end_job\n"
        "print('outputs written')\n"
        "end_job()\n"
        "print('after end_job')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != job.KEEP_TEARDOWN_VARIABLE}
    env[job.KEEP_TEARDOWN_VARIABLE] = keep
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    if keep:
        assert log.read_text() == "outputs written\nafter end_job\n"
        assert proc.stdout == "teardown\n"
    else:
        assert log.read_text() == "outputs written\n"
        assert proc.stdout == ""
