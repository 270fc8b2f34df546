"""The code digests of the workflow stages follow what the code does, not its bytes.

Comments, blank lines, line breaks, quoting and docstrings cannot change results, so they leave
every stage's digest (and so every job) alone; a change of behaviour changes exactly the digests of
the stages whose modules (or what they import) changed. The workflow-level consequence (which jobs a
dry run plans) is tested in tests/test_workflow.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from delaycv import config as dcfg

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def package(tmp_path) -> Path:
    root = tmp_path / "delaycv"
    shutil.copytree(REPO / "delaycv", root, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return root


def digests(root: Path) -> dict[str, str]:
    dcfg.clear_digest_caches()
    return {stage: dcfg.stage_digest(stage, root=root) for stage in dcfg.STAGE_MODULES}


def replace_once(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {path.name}"
    path.write_text(text.replace(old, new))


# --------------------------------------------------------------------------- one file


@pytest.mark.parametrize(
    "edited",
    [
        "x = 1  # a comment\n\n\ndef f(a, b):\n    return (a +\n            b)\n",
        "x = (1)\ndef f(a, b):\n    '''Docstring.'''\n    return a + b\n",
        '"""A module docstring."""\nx = 1\n\n\ndef f(a, b):\n    """Sum."""\n\n    return a + b\n',
        "x = 1\ndef f(a, b): return a+b  # noqa\n",
    ],
)
def test_comments_formatting_and_docstrings_have_no_meaning(edited):
    original = "x = 1\n\n\ndef f(a, b):\n    return a + b\n"
    assert dcfg.code_meaning(edited.encode()) == dcfg.code_meaning(original.encode())


@pytest.mark.parametrize(
    "edited",
    [
        "x = 2\n\n\ndef f(a, b):\n    return a + b\n",  # a constant
        "x = 1.0\n\n\ndef f(a, b):\n    return a + b\n",  # int -> float
        "x = True\n\n\ndef f(a, b):\n    return a + b\n",  # 1 -> True (equal, not the same)
        "x = 1\n\n\ndef f(a, b):\n    return b + a\n",  # operand order
        "x = 1\n\n\ndef f(b, a):\n    return a + b\n",  # parameter names
    ],
)
def test_changes_of_behaviour_change_the_meaning(edited):
    original = "x = 1\n\n\ndef f(a, b):\n    return a + b\n"
    assert dcfg.code_meaning(edited.encode()) != dcfg.code_meaning(original.encode())


def test_a_string_that_is_not_first_is_kept():
    # only the first statement of a module, class or function is a docstring
    with_string = b"def f():\n    x = 1\n    'kept'\n    return x\n"
    assert dcfg.code_meaning(with_string) != dcfg.code_meaning(
        b"def f():\n    x = 1\n    return x\n"
    )


def test_docstrings_count_when_requested_and_unparsable_files_are_their_bytes():
    a, b = b'def f():\n    """One."""\n', b'def f():\n    """Two."""\n'
    assert dcfg.code_meaning(a) == dcfg.code_meaning(b)
    assert dcfg.code_meaning(a, docstrings=True) != dcfg.code_meaning(b, docstrings=True)
    broken = b"def f(:\n"
    assert dcfg.code_meaning(broken) != dcfg.code_meaning(broken + b"# comment\n")


# --------------------------------------------------------------------------- stages


def test_the_real_engine_edited_without_meaning_keeps_every_digest(package):
    before = digests(package)
    engine = package / "engine.py"
    text = engine.read_text()
    # an appended comment, a reformatted line, an edited (module) docstring, a blank line
    first_def = text.index("\ndef ")
    head, rest = text[:first_def], text[first_def:]
    rest = rest.replace("\ndef ", "\n\ndef  ", 1)  # extra blank line and space: same tree
    text = head + rest + "\n# appended comment\n"
    assert text.startswith('"""')
    text = (
        '"""Rewritten module docstring.\n\nWith two paragraphs."""'
        + text[text.index('"""', 3) + 3 :]
    )
    engine.write_text(text)
    (package / "plots.py").write_text((package / "plots.py").read_text() + "\n\n\n# done\n")
    assert digests(package) == before


def test_a_docstring_of_a_function_in_the_engine_changes_nothing(package):
    before = digests(package)
    engine = package / "engine.py"
    tree_text = engine.read_text()
    # the docstring of run_evaluation, whatever it says, replaced by another one
    start = tree_text.index("def run_evaluation(")
    doc_start = tree_text.index('"""', start)
    doc_end = tree_text.index('"""', doc_start + 3) + 3
    engine.write_text(tree_text[:doc_start] + '"""Another text."""' + tree_text[doc_end:])
    assert digests(package) == before


@pytest.mark.parametrize(
    "module, constant, stages",
    [
        ("engine.py", "\n_CHANGED = 1\n", {"evaluate"}),
        ("plots.py", "\n_CHANGED = 1\n", {"plots", "rankings"}),  # rankings' figures
        ("compare.py", "\n_CHANGED = 1\n", {"compare", "plots", "rankings"}),
        ("ranking.py", "\n_CHANGED = 1\n", {"rankings"}),
        ("ranking_figures.py", "\n_CHANGED = 1\n", {"rankings"}),
        ("contrasts.py", "\n_CHANGED = 1\n", {"compare"}),
        ("contrast_figures.py", "\n_CHANGED = 1\n", {"plots"}),
        ("results.py", "\n_CHANGED = 1\n", {"evaluate", "merge", "compare", "plots", "rankings"}),
        ("run_writer.py", "\n_CHANGED = 1\n", {"evaluate"}),
        ("config.py", "\n_CHANGED = 1\n", set()),
    ],
)
def test_a_change_of_behaviour_changes_exactly_the_stages_that_run_it(
    package, module, constant, stages
):
    before = digests(package)
    path = package / module
    path.write_text(path.read_text() + constant)
    after = digests(package)
    assert {s for s in before if before[s] != after[s]} == stages


def test_reading_a_docstring_makes_docstrings_count(package):
    before = digests(package)
    engine = package / "engine.py"
    engine.write_text(engine.read_text() + "\nHELP = run_evaluation.__doc__\n")
    with_reader = digests(package)
    assert with_reader["evaluate"] != before["evaluate"]  # (a new statement)
    start = engine.read_text().index("def run_evaluation(")
    text = engine.read_text()
    doc_start = text.index('"""', start)
    engine.write_text(text[: doc_start + 3] + "Edited. " + text[doc_start + 3 :])
    assert digests(package)["evaluate"] != with_reader["evaluate"]


def test_the_python_minor_version_is_part_of_the_digest(package, monkeypatch):
    before = digests(package)
    monkeypatch.setattr(sys, "version_info", (3, 99, 0, "final", 0))
    assert all(digests(package)[s] != before[s] for s in before)


def test_check_code_passes_for_the_workflow_s_package_and_names_a_foreign_one(monkeypatch):
    here = digests(REPO / "delaycv")
    monkeypatch.delenv(dcfg.PACKAGE_VARIABLE, raising=False)
    dcfg.check_code("evaluate", here["evaluate"])  # computed: the same code
    with pytest.raises(dcfg.ConfigError) as info:
        dcfg.check_code("evaluate", "0123456789abcdef")
    message = str(info.value)
    assert str(REPO / "delaycv") in message and here["evaluate"] in message
    assert "0123456789abcdef" in message and "'evaluate'" in message
    # the package the workflow named (and hashed) is trusted without hashing it again
    monkeypatch.setenv(dcfg.PACKAGE_VARIABLE, str(REPO / "delaycv"))
    dcfg.check_code("evaluate", "0123456789abcdef")


@pytest.mark.parametrize("keep", ["", "1"])
def test_end_job_flushes_and_skips_the_teardown_unless_asked_to_keep_it(tmp_path, keep):
    """A rule script ends with end_job: what it printed is in its log, the exit status is 0, and
    Python's teardown (here an atexit handler) runs only with DELAYCV_KEEP_TEARDOWN=1."""
    log = tmp_path / "job.log"
    code = (
        "import atexit, sys\n"
        f"sys.stdout = sys.stderr = open({str(log)!r}, 'w')\n"  # buffered, as a job's log
        "atexit.register(lambda: print('teardown', file=sys.__stdout__, flush=True))\n"
        "from delaycv.config import end_job\n"
        "print('outputs written')\n"
        "end_job()\n"
        "print('after end_job')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != dcfg.KEEP_TEARDOWN_VARIABLE}
    env[dcfg.KEEP_TEARDOWN_VARIABLE] = keep
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    if keep:
        assert log.read_text() == "outputs written\nafter end_job\n"
        assert proc.stdout == "teardown\n"
    else:
        assert log.read_text() == "outputs written\n"
        assert proc.stdout == ""
