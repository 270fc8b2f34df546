"""What a run costs: the meter (delaycv.tables.usage), run.json's keys from the command line, the
runs table (delaycv.tables.costs) and its page (delaycv.report.runs), ``delaycv merge --runs-out``.

The workflow's side (scripts/evaluate.py's run.json, merge_all's runs table and the report's page)
is checked by tests/workflow/test_workflow_run.py on a real run of the tiny config.
"""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from delaycv.cli import main
from delaycv.common.errors import InputError
from delaycv.data.stream_file import write_stream
from delaycv.report.runs import runs_html
from delaycv.stages.merge import merge
from delaycv.tables import usage
from delaycv.tables.costs import (
    RUN_COLUMNS,
    run_warnings,
    runs_table,
    warnings_summary,
    write_runs,
)
from tests.support.engine_bruteforce import random_stream
from tests.support.paths import REPO

MIB = 2**20
ALLOCATION = 200 * MIB

pytestmark = [
    pytest.mark.skipif(
        not Path("/proc/self/statm").exists(), reason="the meter samples /proc (Linux)"
    ),
    pytest.mark.serial,  # timings: the meter's samples every 0.2 s, the CPU seconds of processes
]


def python(code: str, timeout: float = 60) -> dict:
    """Run ``code`` in a fresh interpreter (this checkout first on the path); its last stdout line
    as JSON."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


HOLD = """
    import json, os, time
    from delaycv.tables import usage

    meter = usage.Meter()
    time.sleep(0.5)
    base = usage.rss_bytes(os.getpid())
    block = bytearray(b"\\x01") * {size}  # written, so resident
    start = time.monotonic()
    time.sleep(2.0)
    held = time.monotonic() - start
    del block
    time.sleep(0.5)
    cost = meter.stop()
    print(json.dumps({{"cost": cost, "base": base, "held": held, "samples": meter.samples}}))
"""


def test_a_process_holding_200_mib_for_2_seconds():
    """RAM-hours are the resident memory integrated over the wall time: here the baseline over
    the whole run plus 200 MiB over the 2 s they are held (within the error of 0.2 s samples at
    the two edges); the peak holds the 200 MiB."""
    found = python(HOLD.format(size=ALLOCATION))
    cost, base, held = found["cost"], found["base"], found["held"]
    assert set(cost) == set(usage.KEYS)
    assert cost["peak_rss_bytes"] >= base + ALLOCATION
    assert cost["peak_rss_bytes"] < base + ALLOCATION + 50 * MIB
    wall = cost["process_wall_seconds"]
    assert 3.0 <= wall < 3.0 + 10.0  # the 3 s of sleeps, plus the interpreter's start (loaded CI)
    assert found["samples"] >= 3.0 / usage.INTERVAL * 0.8
    byte_seconds = cost["ram_hours"] * usage.GIB * 3600
    expected = base * wall + ALLOCATION * held
    # (a machine loaded by other jobs delays samples and the allocation itself: a wide band, still
    # far from a unit or a double count)
    assert 0.75 * expected <= byte_seconds <= 1.25 * expected, (byte_seconds, expected)
    # never more than the peak over the whole wall time; the allocation alone is most of it
    assert byte_seconds <= cost["peak_rss_bytes"] * wall
    assert byte_seconds >= 0.8 * ALLOCATION * held
    assert 0 < cost["process_cpu_seconds"] < wall


GRANDCHILD = """
    import json, resource, subprocess, sys
    from delaycv.tables import usage

    meter = usage.Meter(interval=0.05)
    # a child that starts a grandchild holding 200 MiB for 1.5 s, then working 1 s of CPU: like
    # the fork server's workers
    grandchild = (
        "import time; block = bytearray(b'x') * {size}; time.sleep(1.5)\\n"
        "start = time.process_time()\\n"
        "while time.process_time() - start < 1.0: pass\\n"
    )
    child = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {{grandchild!r}}])"
    subprocess.run([sys.executable, "-c", child], check=True)
    cost = meter.stop()
    own = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({{
        "cost": cost, "own_peak": usage.own_peak_bytes(), "own_cpu": own.ru_utime + own.ru_stime
    }}))
"""


def test_the_memory_and_cpu_of_descendant_processes_count():
    found = python(GRANDCHILD.format(size=ALLOCATION))
    cost = found["cost"]
    # the process itself never held the block: the peak and RAM-hours are its grandchild's
    assert found["own_peak"] < ALLOCATION / 2
    assert cost["peak_rss_bytes"] >= ALLOCATION
    assert cost["ram_hours"] * usage.GIB * 3600 >= 0.8 * ALLOCATION * 1.5
    # and so is the CPU: the grandchild's second of work (and its own and its parent's start)
    assert found["own_cpu"] < 0.5
    assert cost["process_cpu_seconds"] >= found["own_cpu"] + 1.0


def test_a_running_descendant_s_cpu_counts():
    """A descendant still running when the meter stops (the fork server after the workers):
    its CPU time so far, read from /proc."""
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time\nstart = time.process_time()\n"
            "while time.process_time() - start < 0.6: pass\n"
            "print('worked', flush=True)\ntime.sleep(30)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "worked"
        own = resource.getrusage(resource.RUSAGE_SELF)
        waited = resource.getrusage(resource.RUSAGE_CHILDREN)
        before = own.ru_utime + own.ru_stime + waited.ru_utime + waited.ru_stime
        assert usage.tree_cpu_seconds() >= before + 0.6
    finally:
        child.kill()
        child.wait()


def test_a_small_process_started_by_a_large_one_reports_its_own_peak():
    """Not its parent's: on Linux getrusage's ru_maxrss of a process started by subprocess holds
    its parent's high-water mark (Snakemake's, for a job)."""
    block = bytearray(b"\x01") * (300 * MIB)  # this process: the tests' own memory and 300 MiB
    found = python(
        "import json\n"
        "from delaycv.tables import usage\n"
        "cost = usage.Meter().stop()\n"
        "print(json.dumps({'cost': cost}))\n"
    )
    del block
    # (ru_maxrss said more than 300 MiB here, on Linux 6.18: the parent's)
    assert found["cost"]["peak_rss_bytes"] < 100 * MIB


def test_descendants_without_the_kernel_s_children_files(monkeypatch):
    """Where /proc/<pid>/task/<tid>/children is missing, every process's parent is read."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with_files = usage.descendants(os.getpid())
        assert child.pid in with_files

        def no_files(pid):
            raise usage._NoChildrenFiles

        monkeypatch.setattr(usage, "_children", no_files)
        assert sorted(usage.descendants(os.getpid())) == sorted(with_files)
    finally:
        child.kill()
        child.wait()


def test_the_meter_stops_its_thread_and_answers_the_same_twice():
    meter = usage.Meter(interval=0.01)
    first = meter.stop()
    assert not meter._thread.is_alive()
    assert meter.stop() is first
    assert first["ram_hours"] > 0 and first["peak_rss_bytes"] >= usage.rss_bytes(os.getpid()) / 2
    with pytest.raises(ValueError, match="interval"):
        usage.Meter(interval=0)


# --------------------------------------------------------------------------- run.json, the CLI


@pytest.fixture
def stream_file(tmp_path):
    path = tmp_path / "s.parquet"
    write_stream(random_stream(np.random.default_rng(4), 600), path)
    return path


def evaluate(stream_file, out, *extra) -> list[str]:
    return [
        "evaluate",
        str(stream_file),
        "--learner",
        "naive_bayes.GaussianNB",
        "--folds",
        "3",
        "--every",
        "100",
        "--out",
        str(out),
        "--quiet",
        *extra,
    ]


def test_delaycv_evaluate_records_the_run_s_cost(stream_file, tmp_path):
    """In its own process, as the command runs: run.json has the process's wall and CPU
    seconds, its peak memory and RAM-hours, beside the engine's wall and CPU seconds."""
    out = tmp_path / "run"
    python(
        f"from delaycv.cli import main\n"
        f"print(main({evaluate(stream_file, out)!r}))\n"  # (prints 0: JSON)
    )
    info = json.loads((out / "run.json").read_text())
    cost = {k: info[k] for k in usage.KEYS}
    assert all(isinstance(v, float | int) and v > 0 for v in cost.values()), cost
    assert cost["process_wall_seconds"] > info["wall_seconds"]
    assert cost["process_cpu_seconds"] > info["cpu_seconds"]  # imports and writing too
    # river, pandas and pyarrow are resident: tens of MiB at least, far from a GiB
    assert 50 * MIB < cost["peak_rss_bytes"] < 1024 * MIB
    mean = cost["ram_hours"] * usage.GIB * 3600 / cost["process_wall_seconds"]
    assert 10 * MIB < mean <= cost["peak_rss_bytes"]


def test_no_timing_writes_no_cost(stream_file, tmp_path):
    out = tmp_path / "run"
    assert main(evaluate(stream_file, out, "--no-timing")) == 0
    info = json.loads((out / "run.json").read_text())
    assert not set(usage.KEYS) & set(info)
    assert "wall_seconds" not in info and "cpu_seconds" not in info


def test_jobs_count_the_workers_memory(stream_file, tmp_path):
    """With --jobs 2 the fold workers (and the fork server) are descendants: the peak exceeds
    the process's own high-water mark (each worker imports river), and their CPU counts."""
    out = tmp_path / "run"
    found = python(
        "import json\n"
        "from delaycv.tables import usage\n"
        "from delaycv.cli import main\n"
        f"assert main({evaluate(stream_file, out, '--jobs', '2')!r}) == 0\n"
        "print(json.dumps({'own_peak': usage.own_peak_bytes()}))\n",
        timeout=120,
    )
    info = json.loads((out / "run.json").read_text())
    assert info["peak_rss_bytes"] > found["own_peak"] + 50 * MIB
    # the workers' CPU counts too: at least the engine's CPU seconds, which sum their folds'
    assert info["process_cpu_seconds"] > info["cpu_seconds"]


# --------------------------------------------------------------------------- the runs table


@pytest.fixture
def runs(stream_file, tmp_path) -> list[Path]:
    dirs = []
    for name, extra in (
        ("a", ["--learner", "NoChange"]),
        ("b", ["--learner", "Prior", "--seed", "2"]),
        ("c", ["--learner", "Prior", "--no-timing"]),
    ):
        out = tmp_path / name
        assert main([*evaluate(stream_file, out), *extra]) == 0
        dirs.append(out)
    return dirs


def test_the_runs_table_has_one_row_per_run_from_run_json(runs):
    table = runs_table([runs[0], runs[1] / "folds.parquet", runs[2] / "run.json"])
    assert list(table.columns) == list(RUN_COLUMNS)
    assert table[["learner", "seed"]].values.tolist() == [
        ["NoChange", 1],
        ["Prior", 2],
        ["Prior", 1],
    ]
    assert table["seed"].dtype == "int64" and table["instances"].tolist() == [600] * 3
    assert table["folds"].tolist() == [3, 3, 3] and table["checkpoints"].tolist() == [6] * 3
    for i, run in enumerate(runs[:2]):
        info = json.loads((run / "run.json").read_text())
        for column in ("wall_seconds", "cpu_seconds", *usage.KEYS):
            assert table.loc[i, column] == pytest.approx(info[column], rel=1e-12), column
    # the run written with --no-timing measured nothing
    assert table.loc[2, list(usage.KEYS)].isna().all()
    assert table.loc[2, "wall_seconds"] != table.loc[2, "wall_seconds"]  # NaN


def test_the_runs_table_has_each_run_s_share_of_predictions_without_probability(runs):
    """``run.json``'s ``no_probability_share`` (NoChange abstains before its first label), or,
    for a run written before run.json said it, its folds' counts."""
    info = json.loads((runs[0] / "run.json").read_text())
    folds = info["folds"]
    share = sum(f["no_probability"] for f in folds) / sum(f["seen"] for f in folds)
    assert 0 < share < 0.1 and info["no_probability_share"] == share
    assert runs_table([runs[0]])["no_probability_share"].tolist() == [share]
    del info["no_probability_share"]
    (runs[0] / "run.json").write_text(json.dumps(info))
    assert runs_table([runs[0]])["no_probability_share"].tolist() == [share]
    assert f'<td class="num">{100 * share:.1f}</td>' in runs_html(runs_table([runs[0]]))


def test_the_runs_warnings_are_in_the_table_on_the_page_and_summed_up(runs):
    """Each run's warnings (run.json's) are its row's column ``warnings``, one per line; the
    page lists each warning once with the runs that gave it, and the workflow's closing lines
    count them (the most frequent first)."""
    said = {
        0: ["the stream says A", "the learner says B"],
        1: ["the learner says B"],
        2: [],
    }
    for i, texts in said.items():
        info = json.loads((runs[i] / "run.json").read_text())
        info["warnings"] = texts
        (runs[i] / "run.json").write_text(json.dumps(info))
    table = runs_table(runs)
    assert table["warnings"].tolist() == [
        "the stream says A\nthe learner says B",
        "the learner says B",
        "",
    ]
    names = ["random/NoChange/1/ideal", "random/Prior/2/ideal", "random/Prior/1/ideal"]
    assert (
        table.apply(lambda r: f"{r.dataset}/{r.learner}/{r.seed}/{r.policy}", axis=1).tolist()
        == names
    )
    assert run_warnings(table) == [
        ("the learner says B", names[:2]),
        ("the stream says A", names[:1]),
    ]
    assert warnings_summary(table, "runs.html lists them", shown=1) == [
        "delaycv: 2 of 3 runs warned (2 different warnings): runs.html lists them",
        f"  {names[0]} and 1 more: the learner says B",
        "  ... 1 more (runs.html lists them)",
    ]
    page = runs_html(table)
    assert "<h2>Warnings (2)</h2>" in page
    assert (
        f'<tr class="warned"><td class="text">the learner says B</td><td class="num">2</td>'
        f'<td class="text">{names[0]}, {names[1]}</td></tr>' in page
    )
    quiet = runs_table(runs[2:])
    assert warnings_summary(quiet, "x") == [] and "<p>No run warned.</p>" in runs_html(quiet)


def test_a_run_given_twice_or_without_run_json_is_refused(runs, tmp_path):
    with pytest.raises(InputError, match="also in"):
        runs_table([runs[0], runs[0] / "folds.parquet"])
    lone = tmp_path / "lone"
    lone.mkdir()
    with pytest.raises(InputError, match="no run.json"):
        runs_table([lone])
    with pytest.raises(InputError, match="no run"):
        runs_table([])


def test_the_page_shows_each_run_and_the_totals(runs, tmp_path):
    table = write_runs(runs, parquet=tmp_path / "runs.parquet", csv=tmp_path / "runs.csv")
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "runs.parquet"), table)
    csv = pd.read_csv(tmp_path / "runs.csv")
    assert list(csv.columns) == list(RUN_COLUMNS)
    assert csv["ram_hours"].iloc[:2].tolist() == pytest.approx(table["ram_hours"].iloc[:2])
    # the merge stage (the workflow's merge_all) writes the page of the report
    merge(runs, tmp_path / "merged.parquet", runs_page=tmp_path / "runs.html")
    page = (tmp_path / "runs.html").read_text()
    assert page == runs_html(table)
    for header in ("peak memory (MiB)", "RAM-hours (GiB h)", "job CPU (s)", "mean memory (MiB)"):
        assert f"<th>{header}</th>" in page
    assert page.count("<tr>") + page.count('<tr class="total">') == 3 + 3 + 2  # heads, rows
    # every run's peak in MiB, one decimal; the --no-timing run's cells say n/a
    for peak in table["peak_rss_bytes"].iloc[:2]:
        assert f'<td class="num">{peak / MIB:,.1f}</td>' in page
    assert "n/a" in page
    # the totals row sums the RAM-hours of the runs that measured them
    total = table["ram_hours"].sum()
    assert f'<td class="num">{total:.3g}</td>' in page.split('<tr class="total">')[1]


def test_merge_writes_the_runs_table(runs, tmp_path):
    out = tmp_path / "runs.csv"
    args = ["merge", *map(str, runs[:2]), "--out", str(tmp_path / "m.parquet")]
    assert main([*args, "--runs-out", str(out), "--quiet"]) == 0
    written = pd.read_csv(out)
    assert written["learner"].tolist() == ["NoChange", "Prior"]
    assert (written["ram_hours"] > 0).all() and (written["peak_rss_bytes"] > 0).all()
    assert main([*args, "--runs-out", str(tmp_path / "r.txt")]) == 2


def test_ram_hours_have_no_machine_value_in_a_reproducible_run(stream_file, tmp_path):
    """--no-timing outputs stay byte-identical from run to run (run.json included)."""
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        assert main(evaluate(stream_file, out, "--no-timing")) == 0
    assert (a / "run.json").read_bytes() == (b / "run.json").read_bytes()
    assert math.isnan(runs_table([a])["ram_hours"].iloc[0])
