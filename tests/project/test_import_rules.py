"""The import rules between delaycv's subpackages, as docs/architecture.md states them.

The table of the section "Subpackages: what each owns and may import" is the one source of the
rules: in its last column, each name in backticks outside parentheses is a subpackage (any of its
modules) or one module (``study.pages``) that the row's subpackage may import; the words in
parentheses are the reason. These tests read that table, then follow every import of every module
(``import x``, ``from x import y``, relative imports resolved, at module level and inside
functions; the compiled ``.pyx`` sources' ``import``, ``cimport`` and ``from ... import`` lines)
and check it against the rules; and they check that each subpackage's ``__init__.py`` docstring
names, in its ``Imports:`` paragraph, what the table allows.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.paths import REPO

PACKAGE = REPO / "delaycv"
ARCHITECTURE = REPO / "docs" / "architecture.md"
SECTION = "## Subpackages: what each owns and may import"
#: what a subpackage may take from the package's root (``delaycv/__init__.py``); the root's
#: modules (``delaycv.api``, ``delaycv.__main__``) are no subpackage's to import
ROOT_NAMES = {"__version__"}


@dataclass(frozen=True)
class Import:
    """One import of a delaycv module: who imports what, where."""

    importer: str  #: the importing module's dotted name
    path: Path  #: its file
    line: int
    target: str  #: the imported module's dotted name (``delaycv`` for the package's root)
    names: tuple[str, ...] = ()  #: the names taken from the root (``from delaycv import ...``)


def without_parentheses(text: str) -> str:
    """``text`` with every parenthesized part (nested ones too) removed."""
    kept, depth = [], 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        elif depth == 0:
            kept.append(char)
    return "".join(kept)


def subpackages(package: Path = PACKAGE) -> list[str]:
    """The subpackages of the package: its folders with an ``__init__.py``."""
    return sorted(p.parent.name for p in package.glob("*/__init__.py"))


def rules_from_table(text: str) -> dict[str, set[str]]:
    """The table of the section :data:`SECTION` of docs/architecture.md as a map: subpackage ->
    what it may import (subpackages and ``subpackage.module`` names, without ``delaycv.``)."""
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    rules = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        found = re.fullmatch(r"`delaycv\.(\w+)`", cells[0]) if len(cells) == 3 else None
        if found is None:
            continue
        assert found[1] not in rules, f"docs/architecture.md: delaycv.{found[1]} has two rows"
        rules[found[1]] = set(re.findall(r"`([\w.]+)`", without_parentheses(cells[2])))
    return rules


def rules_from_docstring(docstring: str) -> set[str] | None:
    """What an ``__init__.py`` docstring's ``Imports:`` paragraph names (``:mod:`` references
    outside parentheses, without ``delaycv.``), or ``None`` without such a paragraph."""
    for paragraph in docstring.split("\n\n"):
        if paragraph.lstrip().startswith("Imports:"):
            named = re.findall(r":mod:`~?delaycv\.([\w.]+)`", without_parentheses(paragraph))
            return set(named)
    return None


RULES = rules_from_table(ARCHITECTURE.read_text(encoding="utf-8"))


def module_name(path: Path, package: Path) -> str:
    """The dotted name of the module (or package, for an ``__init__.py``) at ``path``."""
    parts = [package.name, *path.relative_to(package).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str, package: Path) -> bool:
    """Whether the dotted ``name`` is a module or subpackage of the package (a file or a folder
    with an ``__init__.py``; a compiled module by its ``.pyx`` source)."""
    base = package.parent.joinpath(*name.split("."))
    return any(
        p.exists()
        for p in (base.with_suffix(".py"), base.with_suffix(".pyx"), base / "__init__.py")
    )


def resolve(importer: str, is_package: bool, module: str | None, level: int) -> str:
    """The absolute name of ``from <level dots><module> import ...`` in the module ``importer``."""
    if level == 0:
        return module or ""
    parts = importer.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def from_import(
    importer: str, path: Path, line: int, base: str, names: list[str], package: Path
) -> list[Import]:
    """The delaycv imports of ``from base import names``: each name that is a module is its own
    import; the other names are taken from ``base``."""
    if base != package.name and not base.startswith(package.name + "."):
        return []
    found, rest = [], []
    for name in names:
        if name != "*" and is_module(f"{base}.{name}", package):
            found.append(Import(importer, path, line, f"{base}.{name}"))
        else:
            rest.append(name)
    if rest:
        found.append(Import(importer, path, line, base, tuple(rest)))
    return found


def python_imports(path: Path, package: Path) -> list[Import]:
    """Every delaycv import of the Python module at ``path``, wherever it is in the module."""
    importer = module_name(path, package)
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == package.name:
                    found.append(Import(importer, path, node.lineno, alias.name))
        elif isinstance(node, ast.ImportFrom):
            base = resolve(importer, is_package, node.module, node.level)
            names = [alias.name for alias in node.names]
            found += from_import(importer, path, node.lineno, base, names, package)
    return found


PYX_FROM = re.compile(r"\s*from\s+(\.*)([\w.]*)\s+c?import\s+\(?([^#]*)")
PYX_IMPORT = re.compile(r"\s*c?import\s+([^#]+)")


def pyx_imports(path: Path, package: Path) -> list[Import]:
    """Every delaycv import of the Cython source at ``path``: its ``import``, ``cimport`` and
    ``from ... (c)import ...`` lines, at any indentation."""
    importer = module_name(path, package)
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if match := PYX_FROM.match(line):
            base = resolve(importer, False, match[2] or None, len(match[1]))
            names = [n.split(" as ")[0].strip(" ()\\") for n in match[3].split(",")]
            found += from_import(importer, path, number, base, [n for n in names if n], package)
        elif match := PYX_IMPORT.match(line):
            for name in match[1].split(","):
                name = name.split(" as ")[0].strip()
                if name.split(".")[0] == package.name:
                    found.append(Import(importer, path, number, name))
    return found


def all_imports(package: Path = PACKAGE) -> list[Import]:
    """The delaycv imports of every module of every subpackage (``.py`` and ``.pyx``)."""
    found = []
    for sub in subpackages(package):
        for path in sorted((package / sub).rglob("*.py")):
            found += python_imports(path, package)
        for path in sorted((package / sub).rglob("*.pyx")):
            found += pyx_imports(path, package)
    return found


def broken_rule(imp: Import, rules: dict[str, set[str]], package: str = "delaycv") -> str | None:
    """The rule ``imp`` breaks, as a sentence, or ``None``."""
    own = imp.importer.split(".")[1]
    parts = imp.target.split(".")
    if len(parts) == 1:  # the package's root
        taken = set(imp.names) - ROOT_NAMES
        if taken:
            return (
                f"a subpackage takes only {sorted(ROOT_NAMES)} from the package's root, "
                f"not {sorted(taken)}"
            )
        return None
    if parts[1] == own:
        return None
    if parts[1] not in rules:
        return f"{package}.{parts[1]} is no subpackage: no subpackage imports the root's modules"
    allowed = rules.get(own, set())
    inner = ".".join(parts[1:])
    if any(inner == rule or inner.startswith(rule + ".") for rule in allowed):
        return None
    may = ", ".join(sorted(allowed)) or "nothing of delaycv"
    return f"{package}.{own} may import {may}"


def test_the_table_has_one_row_per_subpackage_naming_only_existing_modules():
    assert sorted(RULES) == subpackages()
    for sub, allowed in RULES.items():
        for name in allowed:
            assert is_module(f"delaycv.{name}", PACKAGE), (
                f"docs/architecture.md: delaycv.{sub} may import {name!r}, "
                f"which is no module of delaycv"
            )
            assert name.split(".")[0] != sub, f"delaycv.{sub} lists itself"


def test_every_import_between_subpackages_follows_the_table():
    imports = all_imports()
    assert any(imp.path.suffix == ".pyx" for imp in imports)  # the compiled sources are read
    broken = [
        f"{imp.importer} ({imp.path.relative_to(REPO)}:{imp.line}) imports {imp.target}"
        f"{' (' + ', '.join(imp.names) + ')' if imp.names else ''}: rule broken: {rule} "
        f"(docs/architecture.md, {SECTION.lstrip('# ')!r})"
        for imp in imports
        if (rule := broken_rule(imp, RULES)) is not None
    ]
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("sub", subpackages())
def test_each_subpackage_docstring_names_what_it_may_import(sub):
    init = PACKAGE / sub / "__init__.py"
    docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
    assert docstring, f"{init.relative_to(REPO)} has no docstring"
    named = rules_from_docstring(docstring)
    assert named is not None, f"{init.relative_to(REPO)}: its docstring has no 'Imports:' paragraph"
    assert named == RULES[sub], (
        f"{init.relative_to(REPO)}: its 'Imports:' paragraph names {sorted(named)}, "
        f"docs/architecture.md's table {sorted(RULES[sub])}"
    )


def test_a_forbidden_import_is_reported(tmp_path):
    package = tmp_path / "delaycv"
    for sub in ("common", "data", "study"):
        (package / sub).mkdir(parents=True)
        (package / sub / "__init__.py").write_text('"""A subpackage."""\n')
    (package / "__init__.py").write_text("__version__ = '0'\n")
    (package / "api.py").write_text("")
    (package / "study" / "pages.py").write_text("")
    (package / "data" / "ok.py").write_text(
        "from delaycv import __version__\nfrom ..common import __doc__\n"
    )
    (package / "data" / "bad.py").write_text(
        "def late():\n    from .. import study\n    import delaycv.api\n"
        "    from delaycv.study.pages import x\n"
    )
    (package / "common" / "_loop.pyx").write_text(
        "from libc.math cimport NAN\n    from delaycv.data.ok import y\n"
    )
    rules = {"common": set(), "data": {"common"}, "study": {"common", "data"}}
    found = {
        (imp.importer, imp.line, imp.target, broken_rule(imp, rules))
        for imp in all_imports(package)
    }
    assert found == {
        ("delaycv.data.ok", 1, "delaycv", None),
        ("delaycv.data.ok", 2, "delaycv.common", None),
        ("delaycv.data.bad", 2, "delaycv.study", "delaycv.data may import common"),
        (
            "delaycv.data.bad",
            3,
            "delaycv.api",
            "delaycv.api is no subpackage: no subpackage imports the root's modules",
        ),
        ("delaycv.data.bad", 4, "delaycv.study.pages", "delaycv.data may import common"),
        (
            "delaycv.common._loop",
            2,
            "delaycv.data.ok",
            "delaycv.common may import nothing of delaycv",
        ),
    }


def test_the_table_and_the_docstrings_are_read_as_written():
    table = (
        f"{SECTION}\n\n| subpackage | owns | may import |\n|---|---|---|\n"
        "| `delaycv.a` | `x` (`y`) | nothing of delaycv |\n"
        "| `delaycv.b` | `z` | `a`, `c.d` (not `c.e`; `f`) |\n\n## Next\n| `delaycv.c` | | `a` |\n"
    )
    assert rules_from_table(table) == {"a": set(), "b": {"a", "c.d"}}
    docstring = "Owns.\n\nImports: :mod:`delaycv.a`, :mod:`~delaycv.c.d` (not :mod:`delaycv.e`)."
    assert rules_from_docstring(docstring) == {"a", "c.d"}
    assert rules_from_docstring("Owns :mod:`delaycv.a`.") is None
