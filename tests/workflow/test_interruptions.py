"""Stopping the workflow and where it may live: SIGTERM and Ctrl-C leave no half-written output
and one line per job; a path with a space is refused for the virtualenv, accepted for the
checkout."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys

import pytest

from tests.support.workflow_copy import (
    BIN,
    REPO,
    copy_workflow,
    env,
    missing_outputs,
    read_config,
    run,
)
from tests.support.workflow_plans import (
    SMALL,
)

# every test runs Snakemake (a dry run at least) on a copy of the workflow
pytestmark = pytest.mark.slow


STOPPED_SCRIPT = """
import os, signal, sys
from delaycv.common.atomic import atomic_dir
from delaycv.common.interrupt import terminate_on_sigterm

terminate_on_sigterm()
with atomic_dir(sys.argv[1]) as tmp:
    (tmp / "part.parquet").write_text("half")
    os.kill(os.getpid(), signal.SIGTERM)  # as Snakemake or SLURM stops a job
    signal.pause()
"""


def test_a_rule_script_stopped_by_sigterm_leaves_no_temporary(tmp_path):
    """Every rule script turns SIGTERM into an exception (the temporaries beside its
    outputs are removed) and the job ends with status 143, without a traceback: each runs in the
    frame of delaycv.study.job.stage_job, which does it first (tests/workflow/test_job_frame.py)."""
    for script in sorted((REPO / "scripts").glob("*.py")):
        assert "\nwith stage_job(snakemake, " in script.read_text(), script.name
    done = subprocess.run(
        [sys.executable, "-c", STOPPED_SCRIPT, str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (143, "")
    assert list(tmp_path.iterdir()) == []


def test_a_virtualenv_under_a_path_with_a_space_is_refused_at_once(tmp_path):
    """From a checkout whose path holds a space, `make run` failed at the first job
    (exit 127: Snakemake writes the interpreter's path unquoted into a rule script's command).
    The Makefile refuses its virtualenv there before creating anything; the Snakefile refuses an
    interpreter there before any job."""
    checkout = tmp_path / "with space" / "delaycv"
    checkout.mkdir(parents=True)
    shutil.copy2(REPO / "Makefile", checkout / "Makefile")
    # a make of its own: under `make test` the outer make's variables would make it print
    # "Entering directory" lines
    clean = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    done = subprocess.run(
        ["make", "-n", "run"], cwd=checkout, capture_output=True, text=True, timeout=60, env=clean
    )
    assert done.returncode == 2 and done.stdout == ""
    assert f'"{checkout}/.venv" contains a space' in done.stderr
    assert "exit 127" in done.stderr and "VENV=/path/without/spaces/.venv" in done.stderr
    assert sorted(p.name for p in checkout.iterdir()) == ["Makefile"]

    workdir = copy_workflow(tmp_path / "wf", SMALL)
    spaced = str(tmp_path / "with space" / "bin" / "python")
    code = f"import sys; sys.executable = {spaced!r}; from snakemake.cli import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", code, "--cores", "1", "-n"],
        cwd=workdir,
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert f"the Python interpreter's path {spaced!r} contains a space" in done.stdout + done.stderr


def test_a_checkout_under_a_path_with_a_space_runs(tmp_path):
    """The checkout itself may lie under a path with a space (the interpreter elsewhere): its
    first job runs."""
    workdir = copy_workflow(tmp_path / "with space" / "wf", SMALL)
    (target,) = [o for o in missing_outputs(workdir) if o.startswith("resources/")]
    run(workdir, "--cores", "1", target)
    assert (workdir / target).is_file()


def test_ctrl_c_in_a_terminal_stops_the_jobs_with_one_line_each(tmp_path):
    """Ctrl-C in the terminal that runs ``snakemake`` reaches its whole foreground process group,
    the running rule scripts too: each job's log ends with one line saying so (no traceback),
    and no run directory is left half written."""
    import pty
    import select
    import time

    config = read_config(SMALL)
    config["datasets"] = {"tiny": {"generate": {"rows": 60000, "seed": 3}}}
    workdir = copy_workflow(tmp_path / "wf", config)
    pid, fd = pty.fork()
    if pid == 0:  # the child: snakemake with the pseudo-terminal as its terminal
        for signum in (signal.SIGINT, signal.SIGTERM):  # (a background test run ignores them)
            signal.signal(signum, signal.SIG_DFL)
        os.chdir(workdir)
        cmd = [str(BIN / "snakemake"), "--cores", "2", "--profile", "profiles/default"]
        os.execve(cmd[0], cmd, env())
    out, pressed, started = b"", False, None
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if select.select([fd], [], [], 0.2)[0]:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        if started is None and b"rule evaluate" in out:
            started = time.monotonic()
        if not pressed and started is not None and time.monotonic() - started > 3:
            os.write(fd, b"\x03")  # the terminal's Ctrl-C
            pressed = True
    _, status = os.waitpid(pid, 0)
    assert pressed and os.waitstatus_to_exitcode(status) != 0, out.decode(errors="replace")
    logs = [p.read_text() for p in (workdir / "logs").rglob("*.log") if "runs" in str(p)]
    stopped = [text for text in logs if "interrupted (SIGINT)" in text]
    assert stopped, logs
    for text in stopped:
        assert "Traceback" not in text, text
        assert (
            text.strip()
            .splitlines()[-1]
            .endswith("interrupted (SIGINT): its outputs are not written")
        )
    for run_dir in (workdir / "results" / "runs").glob("*/*/seed*/*"):
        names = {p.name for p in run_dir.iterdir()}
        assert names == {"folds.parquet", "summary.parquet", "run.json"}, (run_dir, names)
    assert not list((workdir / "results").rglob("*.tmp*"))
