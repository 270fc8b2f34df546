"""The docs and docstrings name the code as it is, and cite only what a reader can open.

Every dotted name ``delaycv.x.y`` in the docs (docs/, the README, CONTRIBUTING, config/README)
is a module or an attribute of one; every test file a doc or a docstring names exists; and the
package, the rule scripts and the workflow cite no issue, design-card section or "§" (the repo's
docs, papers and URLs instead).
"""

from __future__ import annotations

import importlib
import re

import pytest

from tests.support.paths import REPO

DOCS = [
    *sorted((REPO / "docs").glob("*.md")),
    REPO / "README.md",
    REPO / "CONTRIBUTING.md",
    REPO / "config" / "README.md",
    REPO / "profiles" / "README.md",
]
CODE = [
    *sorted((REPO / "delaycv").rglob("*.py")),
    *sorted((REPO / "delaycv").rglob("*.pyx")),
    *sorted((REPO / "delaycv").rglob("*.java")),
    *sorted((REPO / "scripts").glob("*.py")),
    REPO / "Snakefile",
    *sorted((REPO / "workflow").rglob("*.smk")),
    *sorted((REPO / "workflow").rglob("*.yaml")),
    *sorted((REPO / "workflow").rglob("*.rst")),
]
#: What a reader of the repository cannot open: issues, the sections of a design card.
UNREADABLE = re.compile(r"\bissue\s*#?\d+|design card|§|\bDESIGN\b", re.IGNORECASE)


def resolves(name: str) -> bool:
    """``delaycv.a.b.c``: the longest importable module, then attributes."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attribute in parts[i:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def test_every_dotted_name_in_the_docs_is_in_the_code():
    names = {
        (match.group(0), doc.name)
        for doc in DOCS
        for match in re.finditer(r"\bdelaycv(?:\.[A-Za-z_]\w*)+", doc.read_text(encoding="utf-8"))
        if "__main__" not in match.group(0)
    }
    assert len(names) > 100
    assert sorted(n for n in names if not resolves(n[0])) == []


@pytest.mark.parametrize("files", [DOCS, CODE], ids=["docs", "code"])
def test_every_test_file_named_exists(files):
    named = {
        (match.group(0), path.name)
        for path in files
        for match in re.finditer(r"\btests/[\w/]+\.py\b", path.read_text(encoding="utf-8"))
    }
    assert sorted(n for n in named if not (REPO / n[0]).is_file()) == []


def test_the_code_cites_only_what_a_reader_can_open():
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in CODE
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if UNREADABLE.search(line)
    ]
    assert found == []
