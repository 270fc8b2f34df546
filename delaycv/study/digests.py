"""The code digests of the workflow's stages: which delaycv code each stage runs, and its meaning.

The workflow computes one digest per stage (:func:`stage_digest`) and passes it to the stage's
jobs as a param, so that Snakemake reruns exactly the jobs of a stage whose code changed what it
does. A digest hashes the meaning of the modules of :data:`STAGE_MODULES` and of every delaycv
module they import (followed statically, without importing them: syntax trees without comments,
formatting and docstrings); a package named there counts with every module in it. The rule scripts
call :func:`check_code` (in their frame, :func:`delaycv.study.job.stage_job`) before they import
anything else of delaycv, so that a job never runs other code than the code whose digest decides
reruns.

What a digest needs of a source file (its imports and its meaning) is kept in the user's cache
folder (:func:`delaycv.common.cache.cache_dir`, ``code-facts/``), keyed by the SHA-256 of the
file's bytes, the Python version and this module's own source: each Snakemake invocation otherwise
parses every module again. An entry that does not match its checksum is learnt again and
replaced; a cache folder that cannot be written costs time, nothing else.

This module is in no stage's digest (it changes no result), and imports nothing but the standard
library, :mod:`delaycv.common.cache` and :mod:`delaycv.common.errors` (and
:mod:`delaycv.common.atomic` when it stores facts, :mod:`delaycv.protocol.learners`' lookup of a
module when it finds a learner's own code: :func:`learner_code`): a job pays nothing for it
before its own imports.

A learner class of one's own (``module:Class``) has a digest of its own (:func:`learner_code`):
its module and the modules of one's own it imports, found as the learner's module is found and
without importing them.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import importlib.machinery
import importlib.util
import marshal
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from delaycv.common.cache import cache_dir
from delaycv.common.errors import ConfigError

#: the package of the workflow's stages: one module each (delaycv.stages.<stage>)
STAGES_PACKAGE = "delaycv.stages"


def stage_names(root: str | os.PathLike | None = None) -> tuple[str, ...]:
    """The workflow's stages: the modules of :data:`STAGES_PACKAGE` in the package ``root``
    (default this module's package), sorted; a module whose name begins with an underscore is
    a helper of the stages, not one."""
    base = Path(root) if root is not None else Path(__file__).resolve().parents[1]
    folder = base / "stages"
    return tuple(sorted(p.stem for p in folder.glob("*.py") if not p.name.startswith("_")))


#: delaycv modules whose code each workflow stage runs (their imports are followed): the stage's
#: own module of :data:`STAGES_PACKAGE`, so that adding a stage module is all it takes. Neither
#: this module nor the study config's modules are in any: what they compute reaches the jobs as params,
#: which Snakemake tracks.
STAGE_MODULES: dict[str, tuple[str, ...]] = {
    stage: (f"{STAGES_PACKAGE}.{stage}",) for stage in stage_names()
}

#: the environment variable naming the package the workflow hashes (set by the workflow for its
#: jobs and for the conda envs' post-deploy scripts, which link that package into each env)
PACKAGE_VARIABLE = "DELAYCV_PACKAGE"


def package_root(basedir: str | os.PathLike | None = None) -> Path:
    """The delaycv package the workflow runs: ``basedir/delaycv`` if present, else the import."""
    if basedir is not None:
        candidate = Path(basedir) / "delaycv"
        if (candidate / "__init__.py").is_file():
            return candidate.resolve()
    spec = importlib.util.find_spec("delaycv")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("the delaycv package cannot be found", expected="delaycv installed")
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def _module_file(root: Path, module: str) -> Path | None:
    parts = module.split(".")[1:]
    base = root.joinpath(*parts) if parts else root
    # a .pyx (the compiled fold loop) counts by its bytes: it does not parse as Python
    for candidate in (base / "__init__.py", base.with_suffix(".py"), base.with_suffix(".pyx")):
        if candidate.is_file():
            return candidate
    return None


def _imported_names(path: Path, module: str) -> set[str]:
    """The modules named by the import statements of one file (any nesting level), relative ones
    made absolute (``module`` is the file's module), with the names a ``from`` import takes
    (each may be a submodule)."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for level, source_module, names in _facts(path).imports:
        if source_module is None and not level:  # import a, b.c
            found.update(names)
            continue
        if level:
            base_parts = package.split(".")
            if level > 1:
                base_parts = base_parts[: -(level - 1)]
            base = ".".join(base_parts)
            if not base:  # (a relative import beyond the top level: it fails)
                continue
            target = f"{base}.{source_module}" if source_module else base
        else:
            target = source_module
        found.add(target)
        found.update(f"{target}.{n}" for n in names)  # may be submodules
    return found


def _imports(path: Path, module: str) -> set[str]:
    """delaycv modules named by the import statements of one file (:func:`_imported_names`)."""
    return {name for name in _imported_names(path, module) if name.split(".")[0] == "delaycv"}


def _package_modules(package: str, init: Path) -> list[str]:
    """Every module of a package (``init`` its ``__init__.py``), those of its subpackages too; a
    compiled loop's ``.pyx`` is a module of its package (loaded by name, ``delaycv.common.native``)."""
    found = []
    for path in sorted(init.parent.iterdir()):
        if path.suffix in (".py", ".pyx") and path.name != "__init__.py":
            found.append(f"{package}.{path.stem}")
        elif path.is_dir() and (path / "__init__.py").is_file():
            found.append(f"{package}.{path.name}")
            found += _package_modules(f"{package}.{path.name}", path / "__init__.py")
    return found


def module_closure(modules: Iterable[str], root: Path) -> dict[str, Path | None]:
    """Each module, its parent packages and every delaycv module they import (transitively).

    A package among ``modules`` brings every module in it (and in its subpackages), imported by
    its ``__init__`` or not: a stage that names a package runs whatever the package holds."""
    modules = list(modules)
    listed = set(modules)
    seen: dict[str, Path | None] = {}
    todo = list(modules)
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        path = _module_file(root, module)
        seen[module] = path
        parent = module.rpartition(".")[0]
        if parent:
            todo.append(parent)
        if path is not None:
            todo.extend(m for m in _imports(path, module) if m not in seen)
            if module in listed and path.name == "__init__.py":
                todo.extend(m for m in _package_modules(module, path) if m not in seen)
    # names that were only candidate submodules (from x import function) and are not files
    return {m: p for m, p in seen.items() if p is not None or m in listed}


def source_digest(
    modules: Iterable[str],
    *,
    root: str | os.PathLike | None = None,
    files: Iterable[str | os.PathLike] = (),
) -> str:
    """SHA-256 (hex, 16 characters) of the meaning of ``modules`` and what they import from delaycv.

    ``root`` is the delaycv package directory (default :func:`package_root`); ``files`` are further
    Python files to include (e.g. helper modules of the scripts). Each file enters the digest as
    :func:`code_meaning`: its syntax tree without comments, formatting and docstrings, so that only
    a change that can change what the code does changes the digest. Docstrings do count when code
    of the closure reads ``__doc__``. The Python minor version enters the digest too (the syntax
    trees differ between versions). A package among ``modules`` counts with every module in it
    (:func:`module_closure`); a package's Java sources count by their bytes
    (:func:`_java_sources`). A module that does not exist counts as missing, so the digest
    changes when it appears. Paths enter the digest relative to the package, so moving the checkout
    changes nothing.
    """
    root = Path(root) if root is not None else package_root()
    closure = module_closure(modules, root)
    entries = [(m, None if p is None else str(p)) for m, p in sorted(closure.items())]
    entries += _java_sources(closure, root)
    entries += [(Path(f).name, str(f)) for f in files]
    return _digest(tuple((name, path, _stamp(path)) for name, path in entries))


def learner_code(spec) -> str:
    """The digest of the code of a learner spec's own classes (``module:Class``): their modules
    (:func:`own_class_modules`) and the modules of one's own they import, transitively
    (:func:`own_code`), as code meaning; "" for a spec of river's and MOA's classes alone. The
    workflow's evaluate jobs carry it, so that a change of such a module, or of a helper module
    it imports, reruns its learner's evaluations.

    >>> learner_code({"class": "naive_bayes.GaussianNB"})
    ''
    """
    modules = own_class_modules(spec)
    if not modules:
        return ""
    code = own_code(modules)
    return _digest(tuple((name, path, _stamp(path)) for name, path in sorted(code.items())))


def own_code(modules: dict[str, str]) -> dict[str, str]:
    """``modules`` (module name -> file) and, transitively, the modules of one's own their files
    import: found as a learner's module is found (:func:`module_files`, without importing them),
    outside the standard library's and installed packages' folders (what the environment pins)
    and outside delaycv (whose code the stages' digests count). A module not found is left out
    (it enters when it appears: an import of it then finds it)."""
    found = dict(modules)
    looked: set[str] = set(modules)
    todo = list(modules.items())
    while todo:
        module, path = todo.pop()
        if not path.endswith(".py"):
            continue
        for name in sorted(_imported_names(Path(path), module) - looked):
            looked.add(name)
            for sub, file in module_files(name).items():
                if sub not in found and _own_file(file):
                    found[sub] = file
                    todo.append((sub, file))
    return found


def own_class_modules(spec: Any) -> dict[str, str]:
    """The modules of a learner spec's classes given as ``module:Class`` (the form of a class of
    one's own; in pipelines and nested specs too) and their files, found as
    :func:`delaycv.protocol.learners.resolve_class` finds them, without importing them
    (:func:`module_files`: a package's ``__init__.py`` too); a module not found is left out (the
    spec's check names it). What those modules import is followed by :func:`own_code`.

    >>> own_class_modules({"class": "tree.HoeffdingTreeClassifier"})
    {}
    """
    names: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            name = value.get("class")
            if isinstance(name, str) and ":" in name:
                names.append(name.partition(":")[0])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(spec)
    found: dict[str, str] = {}
    for module in dict.fromkeys(names):
        found.update(module_files(module))
    return found


#: the files a submodule may be, in the order Python's finder tries them: a compiled extension
#: (which counts by its bytes), then Python's source (importlib.machinery.all_suffixes, less the
#: bytecode)
MODULE_SUFFIXES = (*importlib.machinery.EXTENSION_SUFFIXES, ".py")


def module_files(name: str) -> dict[str, str]:
    """The files of module ``name`` and of its parent packages (``{"pkg": ".../pkg/__init__.py",
    "pkg.mod": ".../pkg/mod.py"}``: importing it runs them all), found on Python's path, else in
    the working directory (as :func:`delaycv.protocol.learners.resolve_class` finds a module),
    without importing anything: a top-level module by Python's finders, the rest in its
    package's folders (a namespace package has no file). A name past a module (an attribute: ``from mod import function``), a module that is
    not a file (built in, frozen) and one not found end the list.

    >>> sorted(module_files("json.decoder"))
    ['json', 'json.decoder']
    >>> module_files("no_such_module_anywhere")
    {}
    """
    from delaycv.protocol.learners import on_path_or_here

    top, _, rest = name.partition(".")

    def find_spec() -> Any:
        try:
            return importlib.util.find_spec(top)
        except (ImportError, ValueError):
            return None

    spec = on_path_or_here(find_spec)
    found: dict[str, str] = {}
    if spec is None:
        return found
    folders = list(spec.submodule_search_locations or ())
    if spec.origin and os.path.isfile(spec.origin):
        found[top] = spec.origin
    elif not folders:  # (built in, frozen)
        return found
    module = top
    for part in rest.split(".") if rest else ():
        module = f"{module}.{part}"
        for folder in folders:
            base = Path(folder) / part
            if (base / "__init__.py").is_file():
                found[module], folders = str(base / "__init__.py"), [str(base)]
                break
            module_file = next(
                (f for f in (Path(f"{base}{x}") for x in MODULE_SUFFIXES) if f.is_file()), None
            )
            if module_file is not None:
                found[module], folders = str(module_file), []
                break
            if base.is_dir():  # a namespace package: a folder without a file of its own
                folders = [str(base)]
                break
        else:
            break
    return found


def _own_file(path: str) -> bool:
    """Whether ``path`` lies outside the standard library's and installed packages' folders and
    outside delaycv (:func:`own_code`)."""
    resolved = Path(path).resolve()
    return not any(resolved.is_relative_to(root) for root in _installation_roots())


@functools.cache
def _installation_roots() -> tuple[Path, ...]:
    """The folders of the standard library and of installed packages (not the environment's
    prefix: a study's folder may be a virtual environment's too), and delaycv's package."""
    import site
    import sysconfig

    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if paths.get(k)}
    roots.update(site.getsitepackages())
    roots.add(site.getusersitepackages())
    return (*(Path(r).resolve() for r in roots), package_root())


def _java_sources(closure: dict[str, Path | None], root: Path) -> list[tuple[str, str]]:
    """The Java sources of the closure's packages (``<package>/java/**/*.java``: the Java fold
    loop of MOA learners, ``delaycv.jvm``), which count by their bytes (they do not parse as
    Python), named relative to the package root."""
    found = []
    for path in closure.values():
        if path is not None and path.name == "__init__.py" and (path.parent / "java").is_dir():
            for java in sorted((path.parent / "java").rglob("*.java")):
                found.append((java.relative_to(root).as_posix(), str(java)))
    return found


def check_code(stage: str, expected: str) -> None:
    """Raise :class:`ConfigError` unless the delaycv package running this has ``stage``'s digest.

    The rule scripts call it with the digest the workflow computed (a param of the job), so that a
    job never runs other code than the code whose digest decides reruns (e.g. a conda env that
    links the package of another checkout, or an older copy).
    """
    root = Path(__file__).resolve().parents[1]  # the delaycv package
    workflow_package = os.environ.get(PACKAGE_VARIABLE)
    if workflow_package and Path(workflow_package).resolve() == root:
        return  # the very files the workflow hashed
    found = stage_digest(stage, root=root)
    if found != expected:
        raise ConfigError(
            f"the delaycv package this job imports ({root}) has code digest {found} for stage "
            f"{stage!r}, the workflow computed {expected}; the job's environment holds another "
            "delaycv than the workflow's (recreate its conda env, see docs/workflow.md)",
            expected=f"digest {expected}",
        )


def clear_digest_caches() -> None:
    """Forget every file read for digests in this process (files are otherwise re-read when their
    stamp changes); the cache folder's entries stay (they are keyed by content)."""
    _digest.cache_clear()
    _facts_of.cache_clear()
    _facts_tag.cache_clear()


@dataclass(frozen=True)
class _FileFacts:
    """What the digests need of one file: its imports, and its meaning without docstrings."""

    imports: tuple[tuple[int, str | None, tuple[str, ...]], ...]
    reads_docstrings: bool
    meaning: bytes


def _stamp(path: str | None) -> tuple[int, int, int] | None:
    if path is None:
        return None
    st = os.stat(path)
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size)


def _facts(path: Path) -> _FileFacts:
    return _facts_of(str(path), _stamp(str(path)))


_SCOPES = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


@functools.lru_cache(maxsize=512)
def _facts_of(path: str, stamp: tuple) -> _FileFacts:
    """The facts of one file: from the cache folder if known there, else learnt and stored."""
    source = Path(path).read_bytes()
    entry = _cache_entry(source)
    facts = _load_facts(entry)
    if facts is None:
        facts = _learn_facts(source)
        _store_facts(entry, facts)
    return facts


#: the cache folder's subfolder of file facts (module docstring)
FACTS_FOLDER = "code-facts"


@functools.cache
def _facts_tag() -> str:
    """What the facts of a file depend on besides its bytes: the Python version (its syntax
    trees) and this module's code (how facts are learnt)."""
    own = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
    return "python{}.{}.{}-{}".format(*sys.version_info[:3], own)


def _cache_entry(source: bytes) -> Path:
    key = hashlib.sha256(source).hexdigest()
    return cache_dir() / FACTS_FOLDER / _facts_tag() / key[:2] / key


def _load_facts(entry: Path) -> _FileFacts | None:
    """The facts stored at ``entry``, or None: no entry, or one that fails its checksum or
    does not hold facts (it is then learnt again and replaced)."""
    try:
        data = entry.read_bytes()
    except OSError:
        return None
    checksum, payload = data[:32], data[32:]
    if hashlib.sha256(payload).digest() != checksum:
        return None
    try:
        imports, reads_docstrings, meaning = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None
    if not (isinstance(reads_docstrings, bool) and isinstance(meaning, bytes)):
        return None
    return _FileFacts(imports, reads_docstrings, meaning)


def _store_facts(entry: Path, facts: _FileFacts) -> None:
    """Write ``facts`` at ``entry`` all or nothing (:func:`delaycv.common.atomic.atomic_path`,
    imported here: only a file not seen before pays for it); a folder that cannot be written is
    skipped."""
    from delaycv.common.atomic import atomic_path

    payload = marshal.dumps((facts.imports, facts.reads_docstrings, facts.meaning))
    with contextlib.suppress(OSError), atomic_path(entry) as part:
        part.write_bytes(hashlib.sha256(payload).digest() + payload)


def _learn_facts(source: bytes) -> _FileFacts:
    """One parse and one walk: imports, reads of ``__doc__``, the tree without docstrings."""
    tree = _parse(source)
    if tree is None:
        return _FileFacts((), False, _unparsed(source))
    imports = []
    reads_docstrings = False
    for node in ast.walk(tree):
        named = _module_named(node)
        if named is not None:  # a compiled module loaded by name (delaycv.common.native)
            imports.append((0, None, (named,)))
        if isinstance(node, _SCOPES):
            if node.body and _is_docstring(node.body[0]):
                node.body = node.body[1:]
        elif isinstance(node, ast.Import):
            imports.append((0, None, tuple(a.name for a in node.names)))
        elif isinstance(node, ast.ImportFrom):
            imports.append((node.level, node.module, tuple(a.name for a in node.names)))
        elif (isinstance(node, ast.Name) and node.id == "__doc__") or (
            isinstance(node, ast.Attribute) and node.attr == "__doc__"
        ):
            reads_docstrings = True
    return _FileFacts(tuple(imports), reads_docstrings, _dump(tree))


_MODULE_NAME = re.compile(r"delaycv(\.[A-Za-z_]\w*)+")


def _module_named(node: ast.AST) -> str | None:
    """The delaycv module that a loader of :mod:`delaycv.common.native` is called with
    (``native.load("delaycv.x._y", ...)``: a compiled module, imported by name), else None."""
    if (
        isinstance(node, ast.Call)
        and node.args
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "native"
    ):
        first = node.args[0]
        if (
            isinstance(first, ast.Constant)
            and isinstance(first.value, str)
            and _MODULE_NAME.fullmatch(first.value)
        ):
            return first.value
    return None


def _parse(source: bytes) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _unparsed(source: bytes) -> bytes:
    return b"<unparsed>\0" + source


def _dump(tree: ast.AST) -> bytes:
    return ast.dump(tree, include_attributes=False).encode()


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def code_meaning(source: bytes, *, docstrings: bool = False) -> bytes:
    """What of a Python file can change what it does: its syntax tree, without positions.

    Comments, blank lines, line breaks, quotes and parentheses that change nothing are not in the
    tree; docstrings (a string as the first statement of a module, class or function) are removed
    unless ``docstrings``. A file that does not parse is its bytes.
    """
    tree = _parse(source)
    if tree is None:
        return _unparsed(source)
    if not docstrings:
        for node in ast.walk(tree):
            if isinstance(node, _SCOPES) and node.body and _is_docstring(node.body[0]):
                node.body = node.body[1:]
    return _dump(tree)


@functools.lru_cache(maxsize=64)
def _digest(entries: tuple) -> str:
    facts = [None if path is None else _facts_of(path, stamp) for _, path, stamp in entries]
    docstrings = any(f is not None and f.reads_docstrings for f in facts)
    h = hashlib.sha256()
    major, minor = sys.version_info[:2]
    h.update(f"python{major}.{minor}\0".encode())
    for (name, path, _), fact in zip(entries, facts, strict=True):
        h.update(name.encode() + b"\0")
        if fact is None:
            h.update(b"<missing>")
        elif docstrings:  # rare: some code reads docstrings, so they count
            h.update(code_meaning(Path(path).read_bytes(), docstrings=True))
        else:
            h.update(fact.meaning)
        h.update(b"\0")
    return h.hexdigest()[:16]


def stage_digest(stage: str, *, root: str | os.PathLike | None = None) -> str:
    """:func:`source_digest` of a workflow stage (a key of :data:`STAGE_MODULES`)."""
    return source_digest(STAGE_MODULES[stage], root=root)
