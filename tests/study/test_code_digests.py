"""The code digests of the workflow stages follow what the code does, not its bytes.

Comments, blank lines, line breaks, quoting and docstrings cannot change results, so they leave
every stage's digest (and so every job) alone; a change of behaviour changes exactly the digests of
the stages whose modules (or what they import) changed. The workflow-level consequence (which jobs a
dry run plans) is tested in tests/workflow/test_reruns.py.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import marshal
import shutil
import sys
from pathlib import Path

import pytest

from delaycv.common.errors import ConfigError
from delaycv.study import digests
from tests.support.paths import REPO

#: the modules of the study config loader (delaycv.study.loading and what it imports)
STUDY_CONFIG_MODULES = (
    "checks",
    "datasets",
    "folders",
    "loading",
    "mistakes",
    "overrides",
    "passed_checks",
    "policy_grids",
    "runs",
    "schema",
    "yaml_file",
)


@pytest.fixture
def package(tmp_path) -> Path:
    root = tmp_path / "delaycv"
    shutil.copytree(REPO / "delaycv", root, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return root


def all_digests(root: Path) -> dict[str, str]:
    digests.clear_digest_caches()
    return {stage: digests.stage_digest(stage, root=root) for stage in digests.STAGE_MODULES}


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
    assert digests.code_meaning(edited.encode()) == digests.code_meaning(original.encode())


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
    assert digests.code_meaning(edited.encode()) != digests.code_meaning(original.encode())


def test_a_string_that_is_not_first_is_kept():
    # only the first statement of a module, class or function is a docstring
    with_string = b"def f():\n    x = 1\n    'kept'\n    return x\n"
    assert digests.code_meaning(with_string) != digests.code_meaning(
        b"def f():\n    x = 1\n    return x\n"
    )


def test_docstrings_count_when_requested_and_unparsable_files_are_their_bytes():
    a, b = b'def f():\n    """One."""\n', b'def f():\n    """Two."""\n'
    assert digests.code_meaning(a) == digests.code_meaning(b)
    assert digests.code_meaning(a, docstrings=True) != digests.code_meaning(b, docstrings=True)
    broken = b"def f(:\n"
    assert digests.code_meaning(broken) != digests.code_meaning(broken + b"# comment\n")


# --------------------------------------------------------------------------- closures


def test_closure_follows_absolute_and_relative_imports(tmp_path):
    root = tmp_path / "delaycv"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "a.py").write_text("from delaycv.b import f\nimport numpy\n")
    (root / "b.py").write_text("def f():\n    from .sub import c\n")
    (root / "sub" / "__init__.py").write_text("")
    (root / "sub" / "c.py").write_text("from .. import d\n")
    (root / "d.py").write_text("x = 1\n")
    (root / "unrelated.py").write_text("y = 2\n")
    closure = digests.module_closure(["delaycv.a"], root)
    assert set(closure) == {
        "delaycv",
        "delaycv.a",
        "delaycv.b",
        "delaycv.sub",
        "delaycv.sub.c",
        "delaycv.d",
    }


def test_stage_digests_change_exactly_with_the_code_they_run(package):
    before = {s: digests.stage_digest(s, root=package) for s in digests.STAGE_MODULES}
    assert before == {s: digests.stage_digest(s, root=package) for s in digests.STAGE_MODULES}

    def changed(edit: str) -> set[str]:
        path = package / edit
        original = path.read_bytes()
        path.write_bytes(original + b"\n_edited = 1\n")  # a change of behaviour
        try:
            digests.clear_digest_caches()
            after = {s: digests.stage_digest(s, root=package) for s in digests.STAGE_MODULES}
        finally:
            path.write_bytes(original)
            digests.clear_digest_caches()
        return {s for s in before if before[s] != after[s]}

    assert changed("engine/run.py") == {"evaluate"}
    # the compiled fold loop's source counts by its bytes (it is not Python)
    assert changed("engine/_loop.pyx") == {"evaluate"}
    assert changed("metrics/_effort_loop.pyx") == {"evaluate"}
    assert changed("metrics/effort.py") == {"evaluate"}
    # the tables and figures read policies' windows with delaycv.protocol.policies (protocol.policy_windows)
    assert changed("protocol/policies.py") == {"evaluate", "compare", "figures", "rankings"}
    assert changed("figures/style.py") == {"figures", "rankings"}  # the rankings' figures
    assert changed("stats/families.py") == {"rankings"}
    assert changed("figures/rankings.py") == {"rankings"}
    assert "compare" in changed("stats/checkpoints.py") and "evaluate" not in changed(
        "stats/checkpoints.py"
    )
    assert "convert" in changed("data/synthetic.py") and "evaluate" not in changed(
        "data/synthetic.py"
    )
    assert changed("data/stream.py") >= {"convert", "evaluate"}
    assert changed("data/stream_file.py") >= {"convert", "evaluate"}
    assert changed("cli/__init__.py") == set()
    for module in STUDY_CONFIG_MODULES:  # the config loader: its results reach the jobs as params
        assert changed(f"study/{module}.py") == set(), module


def test_digest_does_not_depend_on_where_the_checkout_is(tmp_path, package):
    other = tmp_path / "elsewhere" / "delaycv"
    shutil.copytree(package, other)
    for stage in digests.STAGE_MODULES:
        assert digests.stage_digest(stage, root=package) == digests.stage_digest(stage, root=other)


def test_a_listed_package_counts_with_every_module_in_it(tmp_path):
    """A stage that names a package (the engine becomes one) runs whatever the package holds:
    its modules count whether its __init__ imports them or not; a package reached by an import
    of one of its modules brings only what is imported."""
    root = tmp_path / "delaycv"
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "pkg" / "__init__.py").write_text("from delaycv.pkg.a import f\n")
    (root / "pkg" / "a.py").write_text("def f():\n    return 1\n")
    (root / "pkg" / "b.py").write_text("x = 1\n")  # imported by nothing
    (root / "pkg" / "sub" / "__init__.py").write_text("")
    (root / "pkg" / "sub" / "c.py").write_text("y = 2\n")
    (root / "pkg" / "notes").mkdir()  # a folder without __init__.py is no subpackage
    (root / "pkg" / "notes" / "d.py").write_text("z = 3\n")
    (root / "user.py").write_text("from delaycv.pkg.a import f\n")
    assert set(digests.module_closure(["delaycv.pkg"], root)) == {
        "delaycv",
        "delaycv.pkg",
        "delaycv.pkg.a",
        "delaycv.pkg.b",
        "delaycv.pkg.sub",
        "delaycv.pkg.sub.c",
    }
    assert set(digests.module_closure(["delaycv.user"], root)) == {
        "delaycv",
        "delaycv.user",
        "delaycv.pkg",
        "delaycv.pkg.a",
    }
    before = digests.source_digest(["delaycv.pkg"], root=root)
    (root / "pkg" / "sub" / "c.py").write_text("y = 3\n")
    digests.clear_digest_caches()
    assert digests.source_digest(["delaycv.pkg"], root=root) != before


def test_the_real_stages_name_modules_and_packages_that_exist():
    root = REPO / "delaycv"
    for stage, modules in digests.STAGE_MODULES.items():
        closure = digests.module_closure(modules, root)
        assert all(closure[m] is not None for m in modules), stage
    metrics = digests.module_closure(["delaycv.metrics"], root)
    files = {p.relative_to(root).as_posix() for p in metrics.values()}
    assert {f"metrics/{p.name}" for p in (root / "metrics").glob("*.py")} <= files


# --------------------------------------------------------------------------- stages


def test_the_real_engine_edited_without_meaning_keeps_every_digest(package):
    before = all_digests(package)
    engine = package / "engine" / "run.py"
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
    (package / "figures/style.py").write_text(
        (package / "figures/style.py").read_text() + "\n\n\n# done\n"
    )
    assert all_digests(package) == before


def test_a_docstring_of_a_function_in_the_engine_changes_nothing(package):
    before = all_digests(package)
    engine = package / "engine" / "run.py"
    tree_text = engine.read_text()
    # the docstring of evaluate, whatever it says, replaced by another one
    start = tree_text.index("def evaluate(")
    doc_start = tree_text.index('"""', start)
    doc_end = tree_text.index('"""', doc_start + 3) + 3
    engine.write_text(tree_text[:doc_start] + '"""Another text."""' + tree_text[doc_end:])
    assert all_digests(package) == before


@pytest.mark.parametrize(
    "module, constant, stages",
    [
        ("engine/run.py", "\n_CHANGED = 1\n", {"evaluate"}),
        ("figures/style.py", "\n_CHANGED = 1\n", {"figures", "rankings"}),  # rankings' figures
        ("stats/checkpoints.py", "\n_CHANGED = 1\n", {"compare", "figures", "rankings"}),
        ("stats/families.py", "\n_CHANGED = 1\n", {"rankings"}),
        # the words of the pages and titles (read_over): no evaluation reruns for them
        ("metrics/properties.py", "\n_CHANGED = 1\n", {"compare", "figures", "rankings"}),
        ("figures/rankings.py", "\n_CHANGED = 1\n", {"rankings"}),
        ("stats/contrasts.py", "\n_CHANGED = 1\n", {"compare"}),
        ("figures/contrasts.py", "\n_CHANGED = 1\n", {"figures"}),
        (
            "tables/results.py",
            "\n_CHANGED = 1\n",
            {"evaluate", "merge", "compare", "figures", "rankings"},
        ),
        ("tables/run_writer.py", "\n_CHANGED = 1\n", {"evaluate"}),
        ("study/checks.py", "\n_CHANGED = 1\n", set()),
        ("study/datasets.py", "\n_CHANGED = 1\n", set()),
        ("study/folders.py", "\n_CHANGED = 1\n", set()),
        ("study/loading.py", "\n_CHANGED = 1\n", set()),
        ("study/mistakes.py", "\n_CHANGED = 1\n", set()),
        ("study/overrides.py", "\n_CHANGED = 1\n", set()),
        ("study/policy_grids.py", "\n_CHANGED = 1\n", set()),
        ("study/runs.py", "\n_CHANGED = 1\n", set()),
        ("study/schema.py", "\n_CHANGED = 1\n", set()),
        ("study/yaml_file.py", "\n_CHANGED = 1\n", set()),
        ("study/digests.py", "\n_CHANGED = 1\n", set()),
    ],
)
def test_a_change_of_behaviour_changes_exactly_the_stages_that_run_it(
    package, module, constant, stages
):
    before = all_digests(package)
    path = package / module
    path.write_text(path.read_text() + constant)
    after = all_digests(package)
    assert {s for s in before if before[s] != after[s]} == stages


def test_reading_a_docstring_makes_docstrings_count(package):
    before = all_digests(package)
    engine = package / "engine" / "run.py"
    engine.write_text(engine.read_text() + "\nHELP = evaluate.__doc__\n")
    with_reader = all_digests(package)
    assert with_reader["evaluate"] != before["evaluate"]  # (a new statement)
    start = engine.read_text().index("def evaluate(")
    text = engine.read_text()
    doc_start = text.index('"""', start)
    engine.write_text(text[: doc_start + 3] + "Edited. " + text[doc_start + 3 :])
    assert all_digests(package)["evaluate"] != with_reader["evaluate"]


def test_the_python_minor_version_is_part_of_the_digest(package, monkeypatch):
    before = all_digests(package)
    monkeypatch.setattr(sys, "version_info", (3, 99, 0, "final", 0))
    assert all(all_digests(package)[s] != before[s] for s in before)


def test_check_code_passes_for_the_workflow_s_package_and_names_a_foreign_one(monkeypatch):
    here = all_digests(REPO / "delaycv")
    monkeypatch.delenv(digests.PACKAGE_VARIABLE, raising=False)
    digests.check_code("evaluate", here["evaluate"])  # computed: the same code
    with pytest.raises(ConfigError) as info:
        digests.check_code("evaluate", "0123456789abcdef")
    message = str(info.value)
    assert str(REPO / "delaycv") in message and here["evaluate"] in message
    assert "0123456789abcdef" in message and "'evaluate'" in message
    # the package the workflow named (and hashed) is trusted without hashing it again
    monkeypatch.setenv(digests.PACKAGE_VARIABLE, str(REPO / "delaycv"))
    digests.check_code("evaluate", "0123456789abcdef")


def test_a_new_stage_module_is_a_new_stage(package):
    """The stages are the modules of delaycv.stages (not those beginning with an underscore,
    the stages' helpers): a new module is all a new stage takes, its digest the closure of it."""
    assert digests.stage_names(package) == tuple(sorted(digests.STAGE_MODULES))
    (package / "stages" / "report_only.py").write_text("from delaycv.report import statistics\n")
    (package / "stages" / "_helper.py").write_text("x = 1\n")
    assert "report_only" in digests.stage_names(package)
    assert "_helper" not in digests.stage_names(package)
    closure = digests.module_closure(["delaycv.stages.report_only"], package)
    assert {"delaycv.stages", "delaycv.report.statistics"} <= set(closure)


def test_a_compiled_module_loaded_by_name_counts_with_its_loader(tmp_path):
    """delaycv.common.native loads the compiled loops by name: the .pyx named in the call is in
    the closure of the module that calls it (and a lazy import by name elsewhere is not)."""
    root = tmp_path / "delaycv"
    (root / "pkg").mkdir(parents=True)
    (root / "__init__.py").write_text("def f():\n    return load('delaycv.other')\n")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "_fast.pyx").write_text("def g(): pass\n")
    (root / "pkg" / "user.py").write_text(
        "from delaycv.common import native\nLOOP = native.load('delaycv.pkg._fast', None)\n"
    )
    (root / "other.py").write_text("y = 1\n")
    closure = digests.module_closure(["delaycv.pkg.user"], root)
    assert closure["delaycv.pkg._fast"] == root / "pkg" / "_fast.pyx"
    assert "delaycv.other" not in closure


# --------------------------------------------------------------------------- the cache folder


@pytest.fixture
def facts_cache(tmp_path, monkeypatch) -> Path:
    """An empty cache folder of this test (``$XDG_CACHE_HOME``); its file facts' folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    digests.clear_digest_caches()
    yield tmp_path / "cache" / "delaycv" / digests.FACTS_FOLDER
    digests.clear_digest_caches()


def stored_entries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def test_what_one_process_learnt_of_a_file_the_next_reads_from_the_cache(
    facts_cache, package, monkeypatch
):
    before = all_digests(package)
    stored = stored_entries(facts_cache)
    sources = {p.read_bytes() for p in package.rglob("*.py")}
    # one entry per content of the stages' closures (files with equal bytes share one), no part
    assert 0 < len(stored) <= len(sources)
    assert not [p for p in stored if p.name.endswith(".tmp")]

    def never(source):
        raise AssertionError("a file was parsed again")

    monkeypatch.setattr(digests, "_learn_facts", never)
    assert all_digests(package) == before  # all_digests forgets what this process read


def test_an_entry_that_was_damaged_is_learnt_again_and_replaced(facts_cache, package):
    before = all_digests(package)
    truncated, foreign, not_facts = stored_entries(facts_cache)[:3]
    truncated.write_bytes(truncated.read_bytes()[:-7])
    data = foreign.read_bytes()
    foreign.write_bytes(data[:40] + bytes([data[40] ^ 1]) + data[41:])  # one bit of the payload
    payload = marshal.dumps(("imports", 1, "meaning"))  # its checksum holds, its content not
    not_facts.write_bytes(hashlib.sha256(payload).digest() + payload)
    for entry in (truncated, foreign, not_facts):
        assert digests._load_facts(entry) is None
    assert all_digests(package) == before
    for entry in (truncated, foreign, not_facts):
        assert digests._load_facts(entry) is not None


def test_an_edited_file_is_a_new_entry(facts_cache, package):
    before = all_digests(package)
    count = len(stored_entries(facts_cache))
    run = package / "engine" / "run.py"
    run.write_text(run.read_text() + "\n_CHANGED = 1\n")
    after = all_digests(package)
    assert after["evaluate"] != before["evaluate"]
    assert len(stored_entries(facts_cache)) == count + 1


def test_a_cache_folder_that_cannot_be_written_costs_only_time(tmp_path, monkeypatch, package):
    expected = all_digests(package)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # no folder can be made below a file
    assert all_digests(package) == expected
    assert blocker.read_text() == ""


def test_a_learner_s_own_code_is_its_module_and_the_own_modules_it_imports(tmp_path, monkeypatch):
    """A class of one's own (``mylearners:MyNB`` in the working directory) counts with the modules
    of one's own it imports, transitively, absolute and relative, packages, a namespace package
    and a compiled module (by its bytes) too, found without importing them; the standard library, installed packages and delaycv do not
    count, nor does a module beside it that nothing imports."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    # the study's folder is a virtual environment's prefix too (python -m venv .)
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    digests._installation_roots.cache_clear()
    files = {
        "mylearners.py": "import json\nimport numpy as np\nimport shrink\n"
        "from delaycv.common import words\nfrom helpers.weights import WEIGHT\n"
        "from nsp import loose\n\nclass MyNB:\n    pass\n",
        "shrink.py": "from river import naive_bayes\nSHIFT = 0.1\n",
        "helpers/__init__.py": "",
        "helpers/weights.py": "from .base import BASE\nfrom . import extra, fast\nWEIGHT = BASE\n",
        "helpers/base.py": "def unused():\n    from no_such_module_here import x\nBASE = 1\n",
        "helpers/extra.py": "EXTRA = 2\n",
        "nsp/loose.py": "LOOSE = 3\n",
        "unrelated.py": "NOTHING = 0\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    compiled = f"helpers/fast{importlib.machinery.EXTENSION_SUFFIXES[0]}"  # (never loaded here)
    (tmp_path / compiled).write_bytes(b"\x7fELF\0compiled")
    spec = {"pipeline": [{"class": "preprocessing.StandardScaler"}, {"class": "mylearners:MyNB"}]}
    code = digests.own_code(digests.own_class_modules(spec))
    assert {m: Path(f).relative_to(tmp_path).as_posix() for m, f in code.items()} == {
        "mylearners": "mylearners.py",
        "shrink": "shrink.py",
        "helpers": "helpers/__init__.py",
        "helpers.weights": "helpers/weights.py",
        "helpers.base": "helpers/base.py",
        "helpers.extra": "helpers/extra.py",
        "helpers.fast": compiled,
        "nsp.loose": "nsp/loose.py",
    }
    assert not {"mylearners", "shrink", "helpers", "nsp"} & set(sys.modules)  # none imported
    before = digests.learner_code(spec)
    assert (
        len(before) == 16 and digests.learner_code({"class": "tree.HoeffdingTreeClassifier"}) == ""
    )

    def after(name: str, text: str) -> str:
        (tmp_path / name).write_text((tmp_path / name).read_text() + text)
        digests.clear_digest_caches()
        return digests.learner_code(spec)

    assert after("helpers/base.py", "# a comment\n") == before
    assert after("unrelated.py", "NOTHING = 1\n") == before
    changed = after("helpers/extra.py", "EXTRA = 3\n")
    assert changed != before
    loose = after("nsp/loose.py", "LOOSE = 4\n")
    assert loose != changed
    assert after(compiled, "\0rebuilt") != loose  # (by its bytes)
    # an installed package's class counts by its own modules, not by what they import
    assert set(
        digests.own_code(digests.own_class_modules({"class": "river.tree:HoeffdingTreeClassifier"}))
    ) == {
        "river",
        "river.tree",
    }
