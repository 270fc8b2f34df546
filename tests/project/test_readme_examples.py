"""The README's examples run as written (issue 22): every ```python block, in a checkout where
the first line of "One run by hand" (``delaycv generate``) wrote the stream they read, and the
shell block of "One run by hand" itself. ``.venv`` in the copy is a link to the interpreter's
environment, so that `.venv/bin/delaycv` runs as written.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.workflow_copy import REPO, copy_workflow, env

README = REPO / "README.md"


def blocks(language: str, text: str | None = None) -> list[str]:
    text = README.read_text(encoding="utf-8") if text is None else text
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.M | re.S)


def section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


@pytest.fixture(scope="module")
def after_generate(tmp_path_factory) -> Path:
    """A checkout where the first line of "One run by hand" ran (``delaycv generate``), whose
    stream the Python examples read."""
    workdir = copy_workflow(tmp_path_factory.mktemp("readme") / "wf", REPO / "config.yaml")
    (workdir / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    (script,) = blocks("sh", section("One run by hand"))
    first = script.splitlines()[0]
    assert first.startswith(".venv/bin/delaycv generate "), first
    done = subprocess.run(
        first.split(), cwd=workdir, env=env({"PYTHONPATH": str(workdir)}), capture_output=True
    )
    assert done.returncode == 0, done.stderr
    return workdir


def test_the_readme_has_python_examples():
    assert len(blocks("python")) >= 1


@pytest.mark.slow  # each runs an evaluation
@pytest.mark.parametrize("number", range(len(blocks("python"))))
def test_a_python_block_of_the_readme_runs_as_written(after_generate, number):
    code = blocks("python")[number]
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=after_generate,
        env=env({"PYTHONPATH": str(after_generate)}),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{code}\n{done.stderr[-3000:]}"


@pytest.mark.slow  # each runs an evaluation
def test_one_run_by_hand_runs_as_written(after_generate):
    (script,) = blocks("sh", section("One run by hand"))
    done = subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=after_generate,
        env=env({"PYTHONPATH": str(after_generate)}),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{script}\n{done.stderr[-3000:]}"
    assert (after_generate / "results" / "runs" / "example" / "folds.parquet").is_file()


def test_the_readme_links_files_that_exist_and_every_page_of_docs():
    """Every relative link of the README names a file of the checkout, and its documentation
    table lists every page of docs/, CONTRIBUTING.md and CHANGELOG.md."""
    text = README.read_text(encoding="utf-8")
    targets = {
        link.split("#")[0]
        for link in re.findall(r"\]\(([^)\s]+)\)", text)
        if not re.match(r"[a-z]+:", link)
    }
    missing = sorted(t for t in targets if t and not (REPO / t).exists())
    assert not missing, f"README.md links files that do not exist: {missing}"
    table = section("Documentation")
    pages = [f"docs/{p.name}" for p in sorted((REPO / "docs").glob("*.md"))]
    for page in [*pages, "CONTRIBUTING.md", "CHANGELOG.md"]:
        assert f"]({page})" in table, f"README.md's documentation table does not list {page}"


def test_the_readme_lists_the_commands_delaycv_help_lists():
    """The sentence "`delaycv --help` lists the commands: ..." names exactly the subcommands."""
    from delaycv.cli import build_parser

    sentence = re.search(r"`delaycv --help` lists the commands: (.*?)\.", README.read_text(), re.S)
    assert sentence, "the README no longer says which commands delaycv --help lists"
    listed = re.findall(r"`([a-z]+)`", sentence.group(1))
    parser = build_parser()
    (commands,) = [a for a in parser._actions if a.dest == "command"]
    assert listed == list(commands.choices)
