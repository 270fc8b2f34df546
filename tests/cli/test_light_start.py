"""A light start: what the command line and the rule scripts import before they do any work.

``delaycv --help``, a command's ``--help`` and its argument errors import nothing heavy (numpy,
pandas, pyarrow, river, scipy, yaml, jsonschema, matplotlib): each command imports what it needs
when it runs, once its options are checked. The rule scripts import only the light digest module
before :func:`delaycv.study.digests.check_code`, and the evaluate job's imports of delaycv pull nothing
the job does not need (not the config loader, nor scipy or sqlalchemy, which only river imports).
The times are measured by benchmarks/bench_startup.py; these tests check the modules, not times.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.fresh_python import imported_after
from tests.support.paths import REPO

SCRIPTS = sorted((REPO / "scripts").glob("*.py"))

#: what the command line must not import before a command runs (jpype: no JVM either)
HEAVY = (
    "numpy",
    "pandas",
    "pyarrow",
    "river",
    "scipy",
    "yaml",
    "jsonschema",
    "matplotlib",
    "jpype",
)
#: what only a MOA learner may import: the JVM's modules
JAVA = ("jpype", "_jpype")


def heavy_in(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in HEAVY]


def run_cli(argv: list[str], cwd: Path) -> dict:
    code = (
        "import contextlib, io\n"
        "from delaycv.cli import main\n"
        "out, err = io.StringIO(), io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):\n"
        f"    status = main({argv!r})\n"
        "RESULT = [status, out.getvalue(), err.getvalue()]\n"
    )
    return imported_after(code, cwd)


COMMANDS = ("convert", "generate", "evaluate", "merge", "compare", "plot", "check")


@pytest.mark.parametrize("argv", [["--help"], *([c, "--help"] for c in COMMANDS)], ids=" ".join)
def test_help_imports_nothing_heavy(argv, tmp_path):
    found = run_cli(argv, tmp_path)
    status, out, _ = found["result"]
    assert status == 0 and "usage: delaycv" in out
    assert heavy_in(found["modules"]) == []


@pytest.mark.parametrize(
    "argv, message",
    [
        ([], "the following arguments are required: COMMAND"),
        (["evaluate"], "the following arguments are required"),
        (["evaluate", "s.parquet", "--learner", "x", "--seed", "-1"], "is not a seed"),
        (
            ["evaluate", "s.parquet", "--learner", "x", "--out", "o", "--noise", "2"],
            "option --noise",
        ),
        (
            [
                "evaluate",
                "s.parquet",
                "--learner",
                "x",
                "--out",
                "o",
                "--policy",
                "hitl",
                "--pos-window",
                "7",
                "--neg-window",
                "9d",
            ],
            "option --pos-window",
        ),  # fmt: skip
        (
            ["evaluate", "s.parquet", "--learner", "x", "--out", "o", "--policy", "delay"],
            "option --window",
        ),
        (["convert", "a.csv", "b.parquet", "--preset", "nope"], "invalid choice: 'nope'"),
        (["compare", "m.parquet", "--out", "o", "--alternative", "up"], "invalid choice: 'up'"),
        (["compare", "m.parquet", "--out", "o", "--alpha", "2"], "option --alpha"),
        (["compare", "m.parquet", "--out", "o", "--checkpoint", "x"], "option --checkpoint"),
        (["plot", "m.parquet", "--out", "o", "--dpi", "0"], "option --dpi"),
        (["plot", "m.parquet", "--out", "o", "--reference", "x"], "invalid choice: 'x'"),
        (["generate", "s.parquet", "--rows", "0"], "option --rows"),
        (["merge", "r", "--out", "m.txt"], "unknown output format"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else "",
)
def test_argument_errors_import_nothing_heavy(argv, message, tmp_path):
    found = run_cli(argv, tmp_path)
    status, _, err = found["result"]
    assert status == 2 and err.startswith("delaycv: error: ") and message in err
    assert heavy_in(found["modules"]) == []
    assert not list(tmp_path.iterdir())  # nothing written


def test_python_m_delaycv_help_imports_nothing_heavy():
    found = imported_after(
        "import runpy\n"
        "sys.argv = ['delaycv', '--help']\n"
        "try:\n"
        "    runpy.run_module('delaycv', run_name='__main__')\n"
        "except SystemExit as done:\n"
        "    RESULT = done.code\n"
    )
    assert found["result"] == 0
    assert heavy_in(found["modules"]) == []


def script_imports(script: Path, *, before_check: bool) -> str:
    """The import statements of a rule script, in order: those before its frame (the ``with
    stage_job(...)`` statement, which checks the code first) only, with ``before_check``; else
    those inside the frame too."""
    tree = ast.parse(script.read_text())
    lines = []
    for node in tree.body:
        if isinstance(node, ast.With) and "stage_job(" in ast.unparse(node.items[0]):
            if before_check:
                break
            body = node.body
        else:
            body = [node]
        lines += [ast.unparse(n) for n in body if isinstance(n, ast.Import | ast.ImportFrom)]
    return "\n".join(lines)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_scripts_import_only_the_frame_before_it_checks_the_code(script):
    tree = ast.parse(script.read_text())
    frames = [
        node.items[0].context_expr
        for node in tree.body
        if isinstance(node, ast.With) and "stage_job(" in ast.unparse(node.items[0])
    ]
    assert len(frames) == 1 and ast.literal_eval(frames[0].args[1]) == script.stem  # its stage
    code = script_imports(script, before_check=True)
    modules = imported_after(code)["modules"]
    delaycv = {m for m in modules if m.split(".")[0] == "delaycv"}
    assert delaycv <= {
        "delaycv",
        "delaycv.study",
        "delaycv.study.digests",
        "delaycv.study.job",
        "delaycv.common",
        "delaycv.common.cache",
        "delaycv.common.errors",
        "delaycv.common.interrupt",
    }
    assert heavy_in(modules) == []


def test_the_evaluate_job_imports_nothing_it_does_not_need():
    """scripts/evaluate.py's imports (the library's share of the job's start): no config loader
    (yaml, jsonschema, difflib), no figures, and neither scipy nor sqlalchemy, which come with
    river.tree when the learner is built, not from delaycv."""
    modules = set(
        imported_after(script_imports(REPO / "scripts" / "evaluate.py", before_check=False))[
            "modules"
        ]
    )
    assert {"delaycv.engine", "delaycv.tables.run_writer", "delaycv.data.stream_file"} <= modules
    unneeded = {
        "delaycv.study.loading",
        "delaycv.study.schema",
        "delaycv.study.yaml_file",
        "difflib",
        "yaml",
        "jsonschema",
        "matplotlib",
        "seaborn",
    }
    unneeded |= {"scipy", "sqlalchemy", "river.stream", "river.datasets", "delaycv.stats"}
    assert modules & unneeded == set()


def java_in(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in JAVA or m.startswith("delaycv.jvm")]


def test_a_river_run_starts_no_jvm(tmp_path):
    """``delaycv evaluate`` of a river learner (and of the baselines) imports neither JPype nor
    delaycv.jvm: no JVM starts. (``--help`` imports nothing heavy, jpype included: above.)"""
    code = (
        "from delaycv.cli import main\n"
        "RESULT = [main(['generate', 's.parquet', '--rows', '300', '--quiet']),\n"
        "          main(['evaluate', 's.parquet', '--learner', 'tree.HoeffdingTreeClassifier',\n"
        "                '--folds', '2', '--out', 'r', '--quiet']),\n"
        "          main(['evaluate', 's.parquet', '--learner', 'NoChange', '--folds', '2',\n"
        "                '--out', 'n', '--quiet'])]\n"
    )
    found = imported_after(code, tmp_path)
    assert found["result"] == [0, 0, 0]
    assert "delaycv.engine" in found["modules"]
    assert java_in(found["modules"]) == []
