"""The workflow configuration: load, validate with the JSON schema, fill defaults, expand grids.

The config file the user names is the whole study: the workflow loads ``config.yaml`` only when no
``--configfile`` is given, and keys a file leaves out take the schema's defaults, never the values
of another file. The Snakefile calls :func:`load_study` when it loads; the rule scripts use the
small helpers below (:func:`learner_spec`, :func:`policy_spec`, :func:`validation_spec`, ...) to
turn the validated config into the arguments of the library.

Every independent mistake is reported at once, when the config loads, before any job runs: a
:class:`ConfigErrors` holding one :class:`delaycv.common.errors.ConfigError` per mistake, in file order,
each naming the file where the key was written, the key's line and column (YAML's node marks,
:class:`Marks`) and the key: ``my.yaml:4:39: key learners.ht.params: 3 is an integer (expected a
mapping ...)``. A file that is not a config at all (not YAML, empty, not a mapping) is reported
alone. The checks: the schema (names, types, required keys), then what the schema cannot say:
each learner is built once (its class exists, river accepts its parameters), each policy is
built, presets and column mappings are known, the metrics of ``tests`` and ``figures`` exist,
names fit the file system, the ``results`` and ``runs`` folders are usable; given the working
directory, every dataset file exists and can be read, a ``.parquet`` one being a canonical stream
(as ``delaycv convert`` writes it), used as it is, no stream is given under two names, folders
are not files, paths fit ``PATH_MAX`` and ``DELAYCV_PURE_PYTHON`` is valid. An effort-aware metric
(:data:`delaycv.metrics.effort_names.EFFORT_METRICS`) needs every dataset to have an effort: a
generated one unless ``effort: null``, a raw one when its ``effort`` (or its mapping's, or its
preset's) names columns, a ``.parquet`` one when its file has one.

Policy grids expand to one named policy per combination, named as :mod:`delaycv.protocol.policies` names
presets::

    policy_grids: {hitl: {preset: hitl, pos_window: [1d, 3d], neg_window: [15d, 90d]}}
    # -> hitl_1d_15d, hitl_1d_90d, hitl_3d_15d, hitl_3d_90d

The code digests that decide which stages rerun are in :mod:`delaycv.study.digests`.
"""

from __future__ import annotations

import contextlib
import copy
import difflib
import functools
import hashlib
import itertools
import json
import os
import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from delaycv.common import defaults
from delaycv.common.errors import ConfigError, InputError

#: the schema beside the package in a checkout (workflow/schemas/config.schema.yaml)
SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"

#: the options of a raw file's conversion (none applies to a canonical stream, used as it is)
CONVERSION_KEYS: tuple[str, ...] = (
    "format",
    "preset",
    "mapping",
    "drop_truncated_last_line",
    "sort",
)

#: the characters allowed in dataset, learner and policy names (they become path components)
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.+-]*"


@dataclass(frozen=True, order=True)
class Run:
    """The keys of one evaluation: one evaluate job, one run directory."""

    dataset: str
    learner: str
    seed: int
    policy: str


# --------------------------------------------------------------------------- loading


#: what a study config file must hold (said when one is empty)
STUDY_EXPECTED = "a mapping with datasets, learners, policies"


class ConfigErrors(ConfigError):
    """Every independent mistake of a config, each a :class:`ConfigError` (``errors``, in file
    order); ``str()`` gives one line per mistake. Its ``message``, ``path``, ``location`` and
    ``expected`` are the first mistake's."""

    def __init__(self, errors: Iterable[ConfigError]) -> None:
        self.errors = [e for err in errors for e in _flat(err)]
        first = self.errors[0]
        super().__init__(
            first.message, path=first.path, location=first.location, expected=first.expected
        )
        #: the first mistake's file, line and column (None where not known)
        self.file = getattr(first, "file", None)
        self.line = getattr(first, "line", None)
        self.column = getattr(first, "column", None)

    def __str__(self) -> str:
        return "\n".join(str(err) for err in getattr(self, "errors", ()))


def _flat(err: ConfigError) -> list[ConfigError]:
    return list(err.errors) if isinstance(err, ConfigErrors) else [err]


@dataclass
class Marks:
    """Where a YAML node was written, 1-based: the line and column of its key in a mapping (of
    the item itself in a list, of the document for the top), and the same for every key under it
    (``children``, by the key as text; list items by their index)."""

    line: int
    column: int
    children: dict[str, Marks] = field(default_factory=dict)

    def find(self, parts: Sequence[str]) -> tuple[int, Marks]:
        """How many of ``parts`` (a dotted key split at its dots; names may contain dots) lead
        down from here, and the marks of the deepest node they reach."""
        node, i = self, 0
        while i < len(parts):
            for j in range(len(parts), i, -1):  # the longest name first
                child = node.children.get(".".join(parts[i:j]))
                if child is not None:
                    node, i = child, j
                    break
            else:
                break
        return i, node


def read_yaml(path: str | os.PathLike, *, expected: str = "a YAML document") -> Any:
    """The content of a YAML file, read strictly: a syntax error names its line and column
    (``my.yaml:5:1: not valid YAML: ...``), every key given twice in a mapping (which YAML would
    silently resolve to the last value) its line, column and dotted key (one line each, as a
    :class:`ConfigErrors`), and an empty file (nothing but blanks and comments) is an error
    saying ``expected``. Errors are :class:`ConfigError` naming the file."""
    return read_yaml_marks(path, expected=expected)[0]


def read_yaml_marks(
    path: str | os.PathLike, *, expected: str = "a YAML document"
) -> tuple[Any, Marks]:
    """:func:`read_yaml`, with the line and column of every key (:class:`Marks`)."""
    content, marks, duplicates = _parse(_read_text(path, str(path)), str(path), expected)
    if duplicates:
        raise ConfigErrors(duplicates)
    return content, marks


def parse_yaml(text: str, *, path: str, expected: str = "a YAML document") -> Any:
    """:func:`read_yaml` of the text of the file ``path``."""
    content, _, duplicates = _parse(text, path, expected)
    if duplicates:
        raise ConfigErrors(duplicates)
    return content


def check_study_file(path: str | os.PathLike) -> None:
    """Raise :class:`ConfigError` when the study file ``path`` cannot be read as a config at all
    (unreadable, not UTF-8, not YAML, empty, not a mapping): what Snakemake's own reading would
    stop on without naming the file. Every other mistake is :func:`load_study`'s."""
    shown = _shown(path)
    content, marks, _ = _parse(_read_text(path, shown), shown, STUDY_EXPECTED)
    if not isinstance(content, Mapping):
        raise _not_a_mapping(content, shown, marks)


def _parse(text: str, path: str, expected: str) -> tuple[Any, Marks, list[ConfigError]]:
    """The content of YAML ``text``, the marks of its keys and its duplicate keys (errors)."""
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise ConfigError("the file is empty", path=path, expected=expected)
        duplicates: list[ConfigError] = []
        marks = _walk(loader, node, path, "", node.start_mark, duplicates, set(), frozenset())
        return loader.construct_document(node), marks, duplicates
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = path if mark is None else f"{path}:{mark.line + 1}:{mark.column + 1}"
        problem = err.problem or err.context or "unreadable"
        context = ""
        if err.context and err.context_mark is not None and err.problem:
            start = err.context_mark
            context = f" ({err.context} at line {start.line + 1}, column {start.column + 1})"
        raise ConfigError(f"not valid YAML: {problem}{context}", path=where) from None
    except yaml.YAMLError as err:
        raise ConfigError(f"not valid YAML: {err}", path=path) from None
    finally:
        loader.dispose()


def _walk(loader, node, path: str, where: str, mark, duplicates: list, checked: set, active):
    """The :class:`Marks` of ``node`` (written at ``mark``) and of everything under it; every
    mapping key given twice is added to ``duplicates`` (once, however often its node is used
    through aliases)."""
    import yaml

    marks = Marks(mark.line + 1, mark.column + 1)
    if id(node) in active:  # an alias of one of its own ancestors
        return marks
    active = active | {id(node)}
    check = id(node) not in checked
    checked.add(id(node))
    if isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            name = f"{where}.{i}" if where else str(i)
            marks.children[str(i)] = _walk(
                loader, item, path, name, item.start_mark, duplicates, checked, active
            )
    elif isinstance(node, yaml.MappingNode):
        first: dict[Any, tuple[int, int]] = {}
        merged = []
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # <<: *base, overridden on purpose
                merged.append(value_node)
                continue
            key = loader.construct_object(key_node, deep=True)
            name = f"{where}.{key}" if where else str(key)
            line, column = key_node.start_mark.line + 1, key_node.start_mark.column + 1
            try:
                if check and key in first:
                    duplicates.append(
                        ConfigError(
                            f"duplicate key (first given at line {first[key][0]}, "
                            f"column {first[key][1]})",
                            path=f"{path}:{line}:{column}",
                            location=f"key {name}",
                            expected="each key once in a mapping",
                        )
                    )
                first[key] = (line, column)
            except TypeError:  # an unhashable key: the constructor says so
                pass
            marks.children[str(key)] = _walk(
                loader, value_node, path, name, key_node.start_mark, duplicates, checked, active
            )
        for value_node in merged:  # the keys a merge brings are where its source has them
            sources = (
                value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            )
            for source in sources:
                sub = _walk(
                    loader, source, path, where, source.start_mark, duplicates, checked, active
                )
                for key, child in sub.children.items():
                    marks.children.setdefault(key, child)
    return marks


def _not_a_mapping(content: Any, shown: str, marks: Marks | None) -> ConfigError:
    where = shown if marks is None else f"{shown}:{marks.line}:{marks.column}"
    return ConfigError(
        "the config is " + ("null" if content is None else f"a {type(content).__name__}"),
        path=where,
        expected=STUDY_EXPECTED,
    )


@functools.lru_cache(maxsize=4)
def _schema(path: str) -> dict:
    schema = read_yaml(path)
    if not isinstance(schema, dict):
        raise ConfigError("the schema is not a mapping", path=path)
    return schema


def _schema_dict(schema: str | os.PathLike | None) -> dict:
    """The schema with the policy presets filled in (:func:`_with_presets`)."""
    path = str(schema or SCHEMA_PATH)
    return _with_presets(_schema(path), path)


@dataclass
class _Layer:
    """One source of a study's keys: a config file (with its marks) or ``--config``."""

    name: str
    content: Mapping
    marks: Marks | None = None


def load_config(
    source: str | os.PathLike | Mapping,
    *,
    schema: str | os.PathLike | None = None,
    name: str | None = None,
    cwd: str | os.PathLike | None = None,
    learners: bool = True,
) -> dict:
    """Read (if ``source`` is a path) and validate a workflow config; see :func:`validate_config`
    and :func:`load_study` (its errors)."""
    if isinstance(source, Mapping):
        layer = _Layer(name or "config", source)
        return _load_layers([layer], [], schema=schema, cwd=cwd, learners=learners)
    return _load_files([(source, name or str(source))], None, schema, cwd, learners)


def load_study(
    files: Sequence[str | os.PathLike],
    *,
    config: Mapping | None = None,
    overrides: Mapping | None = None,
    schema: str | os.PathLike | None = None,
    cwd: str | os.PathLike | None = None,
    learners: bool = True,
) -> dict:
    """The validated study of the config ``files`` (the workflow's, e.g. the ``--configfile`` ones).

    The files are read again, strictly, and merged in order (a later file's key wins; mappings
    merge key by key, as Snakemake merges several ``--configfile``), then ``overrides``
    (Snakemake's ``--config key=value``, whose values Snakemake gives as text inside lists and
    mappings: each is read as YAML would read it in a file wherever the schema does not take
    text, so ``--config 'seeds=[1,2]'`` gives the seeds 1 and 2). ``config`` (Snakemake's merged
    config) is not needed: the files are read again. See :func:`validate_config`.

    Every independent mistake is reported at once, as a :class:`ConfigErrors` (one
    :class:`ConfigError` per mistake, in file order), each naming the file in which its key was
    written, the key's line and column, and the key: ``my.yaml:7:3: key seeds.1: 'x' is a
    string (expected an integer ...)``; ``--config: key ...`` for a command-line value; a key no
    file has (a missing one) is named after the last file, at the line of its nearest written
    parent. A mistake after which nothing else can be checked is reported alone: a file that
    cannot be read, is not YAML, is empty or is not a mapping.
    """
    if not files:
        raise ConfigError("no config file", expected="a config file (snakemake --configfile FILE)")
    return _load_files([(f, _shown(f)) for f in files], overrides, schema, cwd, learners)


def _load_files(files, overrides, schema, cwd, learners) -> dict:
    layers: list[_Layer] = []
    mistakes: list[ConfigError] = []
    fatal = False
    for path, shown in files:
        try:
            content, marks, duplicates = _parse(_read_text(path, shown), shown, STUDY_EXPECTED)
        except ConfigError as err:
            mistakes.append(err)
            fatal = True
            continue
        for err in duplicates:
            err.file, err.line, err.column = shown, *_line_column(err.path)
        mistakes.extend(duplicates)
        if not isinstance(content, Mapping):
            mistakes.append(_not_a_mapping(content, shown, marks))
            fatal = True
            continue
        layers.append(_Layer(shown, content, marks))
    if fatal:  # what follows would check a config that is not there
        raise ConfigErrors(mistakes)
    if overrides:
        typed = _as_in_a_file(dict(overrides), _schema_dict(schema))
        layers.append(_Layer("--config", typed))
    return _load_layers(layers, mistakes, schema=schema, cwd=cwd, learners=learners)


def _line_column(where: str) -> tuple[int | None, int | None]:
    found = re.search(r":(\d+):(\d+)$", where or "")
    return (int(found[1]), int(found[2])) if found else (None, None)


def _load_layers(layers, mistakes, *, schema, cwd, learners) -> dict:
    """Merge ``layers`` in order, validate, and raise every mistake (``mistakes``: those found
    while reading) placed at its file, line and column, in file order."""
    config: dict = {}
    for layer in layers:
        _merge(config, layer.content)
    files = [layer.name for layer in layers if layer.name != "--config"]
    last = files[-1] if files else layers[-1].name
    study, errors = _validate(config, schema=schema, source=last, cwd=cwd, learners=learners)
    mistakes = [*mistakes, *(_place(err, layers, last) for err in errors)]
    if mistakes:
        order = {layer.name: i for i, layer in enumerate(layers)}
        big = 1 << 62

        def rank(item: tuple[int, ConfigError]) -> tuple:
            i, err = item
            file = getattr(err, "file", None)
            line = getattr(err, "line", None)
            column = getattr(err, "column", None)
            return (order.get(file, len(order)), line or big, column or big, i)

        raise ConfigErrors(err for _, err in sorted(enumerate(mistakes), key=rank))
    return study


def _place(err: ConfigError, layers: Sequence[_Layer], last: str) -> ConfigError:
    """``err`` (``location`` ``key a.b.c``) at the file that wrote the deepest part of the key
    (the later file on a tie), with the line and column of that part: ``my.yaml:4:5``."""
    if not (err.location or "").startswith("key "):
        return err
    parts = re.sub(r"\[(\d+)\]", r".\1", err.location[len("key ") :]).split(".")
    best, depth = None, 0
    for layer in layers:
        found = _depth(layer.content, parts)
        if found and found >= depth:
            best, depth = layer, found
    file, line, column = (last, None, None) if best is None else (best.name, None, None)
    if best is not None and best.marks is not None:
        _, marks = best.marks.find(parts[:depth])
        line, column = marks.line, marks.column
    placed = ConfigError(
        err.message,
        path=file if line is None else f"{file}:{line}:{column}",
        location=err.location,
        expected=err.expected,
    )
    placed.file, placed.line, placed.column = file, line, column
    return placed


def _read_text(path: str | os.PathLike, shown: str) -> str:
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise ConfigError(f"cannot read the file: {err.strerror}", path=shown) from err
    if b"\0" in data[:8192]:
        raise ConfigError(
            "a binary file, not text", path=shown, expected="a YAML config file (UTF-8 text)"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(
            f"not UTF-8 text (byte {err.start})", path=shown, expected="a YAML config file"
        ) from None


def _shown(path: str | os.PathLike) -> str:
    """A config file's name as a user reads it: relative to the working directory when inside it."""
    p = Path(path)
    if p.is_absolute():
        try:
            return str(p.relative_to(Path.cwd()))
        except ValueError:
            return str(p)
    return str(p)


def _merge(base: dict, update: Mapping) -> dict:
    """Merge ``update`` into ``base`` as Snakemake merges config files: mappings key by key."""
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = copy.deepcopy(dict(value) if isinstance(value, Mapping) else value)
    return base


def _depth(node: Any, parts: Sequence[str]) -> int:
    """How many of ``parts`` (a dotted key; names may contain dots) lead down into ``node``."""
    i = 0
    while i < len(parts):
        if isinstance(node, Mapping):
            keys = {str(k): k for k in node}
            for j in range(len(parts), i, -1):  # the longest name first (names may contain dots)
                name = ".".join(parts[i:j])
                if name in keys:
                    node, i = node[keys[name]], j
                    break
            else:
                return i
        elif isinstance(node, list) and parts[i].isdigit() and int(parts[i]) < len(node):
            node, i = node[int(parts[i])], i + 1
        else:
            return i
    return i


# --------------------------------------------------------------------------- --config values


def _as_in_a_file(value: Any, schema: dict, root: dict | None = None) -> Any:
    """``value`` of Snakemake's ``--config`` with its text read as YAML would read it in a file,
    wherever ``schema`` does not take text: Snakemake reads ``seeds=[1,2]`` as ``['1', '2']``
    (every value inside a list or mapping is text), a file as ``[1, 2]``."""
    root = schema if root is None else root
    schema = _resolve(schema, root) if isinstance(schema, dict) else {}
    if isinstance(value, dict):
        return {
            k: _as_in_a_file(v, _property_schema(schema, str(k), root), root)
            for k, v in value.items()
        }
    if isinstance(value, list):
        items = _branch(schema, "array", root).get("items", {})
        return [_as_in_a_file(v, items, root) for v in value]
    if isinstance(value, str) and not _takes_text(schema, root):
        return _yaml_scalar(value)
    if isinstance(value, str) and value in _YAML_NULLS and _takes_null(schema, root):
        return None  # contrasts={reference: null}
    return value


#: the texts YAML reads as null
_YAML_NULLS = ("", "~", "null", "Null", "NULL")


def _takes_null(schema: dict, root: dict) -> bool:
    schema = _resolve(schema, root)
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_takes_null(o, root) for o in schema.get("oneOf", []) + schema.get("anyOf", []))


def _branch(schema: dict, kind: str, root: dict) -> dict:
    """The alternative of ``schema`` (``oneOf``/``anyOf``) for a value of JSON type ``kind``."""
    for option in schema.get("oneOf", []) + schema.get("anyOf", []):
        option = _resolve(option, root)
        if option.get("type") == kind or (kind == "object" and "properties" in option):
            return option
    return schema


def _property_schema(schema: dict, key: str, root: dict) -> dict:
    schema = _branch(schema, "object", root)
    if key in schema.get("properties", {}):
        return schema["properties"][key]
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else {}


def _takes_text(schema: dict, root: dict) -> bool:
    """Whether ``schema`` accepts a string (a schema that says nothing does not: YAML decides)."""
    schema = _resolve(schema, root)
    kind = schema.get("type")
    if kind == "string" or (isinstance(kind, list) and "string" in kind):
        return True
    if any(isinstance(v, str) for v in schema.get("enum", [])):
        return True
    return any(_takes_text(o, root) for o in schema.get("oneOf", []) + schema.get("anyOf", []))


def _yaml_scalar(text: str) -> Any:
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value if value is None or isinstance(value, (bool, int, float, str)) else text


# --------------------------------------------------------------------------- validation


def validate_config(
    config: Any,
    *,
    schema: str | os.PathLike | None = None,
    source: str = "config.yaml",
    cwd: str | os.PathLike | None = None,
    learners: bool = True,
) -> dict:
    """Return a validated copy of ``config`` with defaults filled in and policy grids expanded.

    The returned config's ``policies`` holds every policy (explicit ones and grid ones, each with
    its ``name``); ``policy_grids`` is kept as written. Raises :class:`ConfigErrors` with every
    mistake found, each naming ``source`` and the key. Policies, presets, mappings, metric names
    and folders are checked too; learners are built once unless ``learners`` is false (importing
    river takes seconds); dataset files, folders on disk and ``DELAYCV_PURE_PYTHON`` are checked
    when ``cwd`` (the directory the paths are relative to) is given.
    """
    study, errors = _validate(config, schema=schema, source=source, cwd=cwd, learners=learners)
    if errors:
        raise ConfigErrors(errors)
    return study


#: the top-level keys that map names to specs (a mistake in one entry leaves the others checked)
NAMED_SECTIONS = ("datasets", "learners", "policies", "policy_grids")


class _Mistakes:
    """The mistakes found so far. ``lenient``: the schema found some, and what it refused was
    left out; a check that then stumbles on what is missing is skipped, not reported."""

    def __init__(self, lenient: bool) -> None:
        self.errors: list[ConfigError] = []
        self.lenient = lenient

    @contextlib.contextmanager
    def guard(self, failed: set | None = None, mark: Any = None) -> Iterator[None]:
        """Run one independent check: its ConfigError is recorded (and ``mark`` added to
        ``failed``), the checks after it go on."""
        try:
            yield
        except ConfigError as err:
            self.errors.extend(_flat(err))
            if failed is not None:
                failed.add(mark)
        except Exception:
            if not self.lenient:
                raise
            if failed is not None:
                failed.add(mark)


def _validate(
    config: Any,
    *,
    schema: str | os.PathLike | None,
    source: str,
    cwd: str | os.PathLike | None,
    learners: bool,
) -> tuple[Any, list[ConfigError]]:
    """The validated config and every mistake found (:func:`validate_config`)."""
    import jsonschema

    if config is None:
        config = {}
    if not isinstance(config, Mapping):
        error = ConfigError(
            f"the config is a {type(config).__name__}", path=source, expected="a mapping of keys"
        )
        return config, [error]
    config = _coerce_booleans(copy.deepcopy(dict(config)))
    schema_dict = _schema_dict(schema)
    validator = jsonschema.validators.validator_for(schema_dict)(schema_dict)
    found = sorted(validator.iter_errors(config), key=_error_rank)
    mistakes = _Mistakes(lenient=bool(found))
    broken: set[tuple] = set()
    locations: set[str | None] = set()
    for error in found:
        for err in _config_errors(error, source):
            if err.location not in locations:
                locations.add(err.location)
                mistakes.errors.append(err)
    for error in found:
        _prune(config, error, broken)
    with mistakes.guard():
        _fill_defaults(config, schema_dict, schema_dict)
        _check_study(config, source, cwd, learners, broken, mistakes)
    return config, mistakes.errors


def _prune(config: dict, error, broken: set[tuple]) -> None:
    """Leave out what the schema refused (``error``), so that the other checks run on the rest:
    a whole entry of a section of names (a dataset, a learner, a policy, a grid), else the key
    (its default then fills in). ``broken`` records what was left out."""
    path = list(error.absolute_path)
    if not path:
        if error.validator == "required":
            missing = error.message.split("'")[1] if "'" in error.message else ""
            if missing in NAMED_SECTIONS:
                config[missing] = {}
            elif missing == "seeds":
                config[missing] = []
            broken.add((missing,))
        elif error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = set(error.schema.get("properties", {}))
            for key in set(error.instance) - allowed:
                config.pop(key, None)
        return
    section = path[0]
    value = config.get(section)
    if section in NAMED_SECTIONS:
        if len(path) == 1:
            if "propertyNames" in error.schema_path and isinstance(value, dict):
                value.pop(error.instance, None)
                broken.add((section, error.instance))
            else:
                config[section] = {}
                broken.add((section,))
        elif isinstance(value, dict):
            value.pop(path[1], None)
            broken.add((section, path[1]))
    elif section == "seeds":
        config[section] = []
        broken.add((section,))
    elif len(path) == 1 or not isinstance(value, dict):
        if error.validator == "additionalProperties" and isinstance(value, dict):
            allowed = set(error.schema.get("properties", {}))
            for key in set(value) - allowed:
                value.pop(key, None)
        else:
            config.pop(section, None)
            broken.add((section,))
    else:
        value.pop(path[1], None)
        broken.add((section, path[1]))


def _with_presets(schema: dict, path: str) -> dict:
    """A copy of ``schema`` whose policy ``preset`` and policy grid ``preset`` take the label-policy
    presets (:data:`delaycv.protocol.policies.PRESETS`; a grid's: those with windows), which the schema
    file does not list."""
    from delaycv.protocol.policies import PRESETS

    schema = copy.deepcopy(schema)
    places = {
        ("$defs", "policy", "properties", "preset"): list(PRESETS),
        ("properties", "policy_grids", "additionalProperties", "properties", "preset"): [
            name for name, preset in PRESETS.items() if preset.windows
        ],
    }
    for keys, names in places.items():
        node: Any = schema
        for key in keys:
            node = node.get(key) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            raise ConfigError(
                "the schema does not say where the policy presets go",
                path=path,
                location=f"key {'.'.join(keys)}",
                expected="a mapping (the loader sets its enum)",
            )
        node["enum"] = names
    return schema


def _coerce_booleans(config: dict) -> dict:
    """YAML reads an unquoted ``true`` as a boolean; the reference named "true" is meant."""
    tests = config.get("tests")
    if isinstance(tests, dict) and isinstance(tests.get("references"), list):
        tests["references"] = ["true" if r is True else r for r in tests["references"]]
    figures = config.get("figures")
    if isinstance(figures, dict) and figures.get("reference") is True:
        figures["reference"] = "true"
    return config


def _error_rank(error) -> tuple:
    # report the deepest, most specific error first; ties by path text for a stable message
    return (-len(error.absolute_path), str(list(error.absolute_path)), error.message)


def _key(path: Iterable) -> str:
    return ".".join(str(p) for p in path)


def _describe_type(t: Any) -> str:
    names = {
        "object": "a mapping",
        "array": "a list",
        "string": "a string",
        "integer": "an integer",
        "number": "a number",
        "boolean": "true or false",
        "null": "nothing",
    }
    if isinstance(t, list):
        return " or ".join(names.get(x, x) for x in t)
    return names.get(t, str(t))


def _config_errors(error, source: str) -> list[ConfigError]:
    """The mistakes a schema error says: one, or one per unknown key."""
    path = list(error.absolute_path)
    schema = error.schema if isinstance(error.schema, dict) else {}
    validator = error.validator
    value = error.instance
    expected = schema.get("description")
    if "propertyNames" in error.schema_path:
        path = [*path, value] if isinstance(value, str) else path
        message = f"bad name {value!r}"
        expected = f"a name matching {NAME_PATTERN} (letters, digits, _ . + -)"
    elif validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        path = [*path, missing]
        message = "missing"
        own = schema.get("properties", {}).get(missing, {})
        expected = (own.get("description") if isinstance(own, dict) else None) or (
            "this key to be given"
        )
    elif validator == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        unknown = sorted(set(value) - set(allowed), key=str) if isinstance(value, dict) else []
        expected = "one of " + ", ".join(allowed) if allowed else expected
        return [
            ConfigError(
                "unknown key", path=source, location=f"key {_key([*path, name])}", expected=expected
            )
            for name in unknown or [None]
            if name is not None
        ] or [
            ConfigError("unknown key", path=source, location=f"key {_key(path)}", expected=expected)
        ]
    elif validator == "type":
        message = (
            "empty (null)" if value is None else f"{value!r} is {_describe_type(_json_type(value))}"
        )
        expected = expected or _describe_type(error.validator_value)
    elif validator == "enum":
        message = f"{value!r} is not allowed"
        expected = "one of " + ", ".join(str(v) for v in error.validator_value)
    elif validator == "pattern":
        message = f"{value!r} has the wrong form"
        expected = expected or f"text matching {error.validator_value}"
    elif validator in ("oneOf", "anyOf"):
        message = f"{value!r} is not valid"
        expected = expected or "a value of one of the allowed forms"
    else:
        message = error.message
    return [ConfigError(message, path=source, location=f"key {_key(path)}", expected=expected)]


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null" if value is None else type(value).__name__


def _resolve(schema: dict, root: dict) -> dict:
    while isinstance(schema, dict) and "$ref" in schema:
        ref = schema["$ref"]
        node: Any = root
        for part in ref.lstrip("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def _fill_defaults(instance: Any, schema: dict, root: dict) -> None:
    schema = _resolve(schema, root)
    if not isinstance(instance, dict) or not isinstance(schema, dict):
        return
    for key, sub in schema.get("properties", {}).items():
        sub = _resolve(sub, root)
        if key not in instance and isinstance(sub, dict) and "default" in sub:
            instance[key] = copy.deepcopy(sub["default"])
        if key in instance:
            _fill_defaults(instance[key], sub, root)
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        for key, value in instance.items():
            if key not in schema.get("properties", {}):
                _fill_defaults(value, extra, root)


def _check_study(
    config: dict,
    source: str,
    cwd: str | os.PathLike | None,
    learners: bool,
    broken: set[tuple],
    mistakes: _Mistakes,
) -> None:
    """What the schema cannot say, each check on its own (one mistake does not hide another):
    exactly-one-of keys, names that must exist, estimator options, policies, folders, names that
    fit the file system, learners built, dataset files, one stream under one name, metrics."""
    guard = mistakes.guard
    runs_given = "runs" in config
    skip_datasets = {name for section, *rest in broken if section == "datasets" for name in rest}
    for name, dataset in config["datasets"].items():
        with guard(skip_datasets, name):
            _check_dataset_keys(name, dataset, source)
    skip_learners = {name for section, *rest in broken if section == "learners" for name in rest}
    for name, spec in config["learners"].items():
        with guard(skip_learners, name):
            _check_learner(spec, f"learners.{name}", source)
    if ("estimator",) not in broken:
        with guard():
            _check_estimator(config, source)
    with guard():
        _check_figure_learner(config, source, broken)
    with guard():
        config["policies"] = _all_policies(config, source, broken, mistakes)
    with guard():
        _resolve_contrasts(config, source, broken)
    with guard():
        _resolve_folders(config, source, cwd, broken, mistakes)
    with guard():
        _check_name_lengths(config, source, mistakes)
    if learners:
        for name, spec in config["learners"].items():
            if name not in skip_learners:
                with guard(skip_learners, name):
                    _check_learner_runs(name, spec, source)
    efforts: dict[str, bool | None] = {}
    for name, dataset in config["datasets"].items():
        efforts[name] = None
        if name in skip_datasets:
            continue
        with guard(skip_datasets, name):
            if "path" in dataset:
                efforts[name] = _check_dataset_file(name, dataset, source, cwd)
            else:  # generated: la + ld, unless effort: null
                efforts[name] = "effort" not in dataset
    with guard():
        _check_same_streams(config, source, cwd, skip_datasets, mistakes)
    if ("tests", "metrics") not in broken and ("tests",) not in broken:
        _check_metrics(config, source, efforts, mistakes, "tests")
    if ("figures", "metric") not in broken and ("figures",) not in broken:
        _check_metrics(config, source, efforts, mistakes, "figures")
    if cwd is not None:
        with guard():
            from delaycv.common.native import pure_python

            pure_python()  # an evaluate job would stop on a value other than 1, 0 or nothing
    with guard():
        _check_path_lengths(config, source, cwd, broken, runs_given, mistakes)


def _check_dataset_keys(name: str, dataset: dict, source: str) -> None:
    kinds = [k for k in ("generate", "path") if k in dataset]
    if len(kinds) != 1:
        raise ConfigError(
            "a dataset needs exactly one of generate and path"
            + (f", not both ({', '.join(kinds)})" if kinds else ""),
            path=source,
            location=f"key datasets.{name}",
            expected="{generate: {rows, seed}} or {path: FILE, format, preset, mapping}",
        )
    if "generate" in dataset:
        extra = sorted(set(dataset) - {"generate", "effort"})
        if extra:
            raise ConfigError(
                "a generated dataset takes no conversion options",
                path=source,
                location=f"key datasets.{name}.{extra[0]}",
                expected="only generate: {...} (and effort: null)",
            )
        if dataset.get("effort") is not None:
            raise ConfigError(
                f"a generated stream's effort is la + ld, not {dataset['effort']!r}",
                path=source,
                location=f"key datasets.{name}.effort",
                expected="effort: null (a stream without effort), or no effort key (la + ld)",
            )


def _check_estimator(config: dict, source: str) -> None:
    est = config["estimator"]
    needs = {"fading": "alpha", "sliding": "width", "window": "width", "tumbling": "size"}
    need = needs.get(est["kind"])
    for option in ("alpha", "width", "size"):
        if option in est and option != need:
            raise ConfigError(
                f"the {est['kind']} estimator takes no {option}",
                path=source,
                location=f"key estimator.{option}",
                expected=f"only {need}" if need else "no option",
            )
    if need and need not in est:  # the schema cannot say it (it depends on kind)
        est[need] = defaults.ESTIMATOR_PARAMS[est["kind"]][1]


def _check_figure_learner(config: dict, source: str, broken: set[tuple]) -> None:
    figures = config["figures"]
    if "learner" not in figures or ("learners",) in broken:
        return
    names = [*config["learners"], *(n for s, *rest in broken if s == "learners" for n in rest)]
    if figures["learner"] not in names:
        raise ConfigError(
            f"no learner named {figures['learner']!r}",
            path=source,
            location="key figures.learner",
            expected="one of " + ", ".join(names),
        )


def _check_learner(spec: dict, key: str, source: str) -> None:
    kinds = [k for k in ("class", "pipeline", "moa") if k in spec]
    if len(kinds) != 1:
        raise ConfigError(
            "a learner spec needs exactly one of class, pipeline and moa",
            path=source,
            location=f"key {key}",
            expected="{class: <river class>, params: {...}}, {pipeline: [spec, ...]} or "
            "{moa: <MOA classifier command line>}",
        )
    if kinds == ["moa"]:
        from delaycv.jvm.learner import normalise_spec

        _with_source(normalise_spec, spec, where=key, source=source)
        return
    for moa_key in ("seed", "heap"):
        if moa_key in spec:
            raise ConfigError(
                f"{moa_key} is a key of MOA learners",
                path=source,
                location=f"key {key}.{moa_key}",
                expected="the seed of a river learner in its params (params: {seed: 1})"
                if moa_key == "seed"
                else "a MOA learner ({moa: ..., heap: 4g})",
            )
    if "pipeline" in spec:
        if "params" in spec:
            raise ConfigError(
                "a pipeline takes no params",
                path=source,
                location=f"key {key}.params",
                expected="params on the pipeline's steps",
            )
        for i, step in enumerate(spec["pipeline"]):
            _check_learner(step, f"{key}.pipeline.{i}", source)


#: two numeric instances on which each learner predicts and learns once at load time
_FIRST_INSTANCES = (({"a": 0.0, "b": 1.0}, 0), ({"a": 1.0, "b": 0.5}, 1))


def _check_learner_runs(name: str, spec: dict, source: str) -> None:
    """Build the learner (its class exists, river accepts its parameters), then let it predict and
    learn two numeric instances: river checks few parameter types when it builds a learner, and
    a value of the wrong type (``grace_period: "200"``) fails on its first instance."""
    from delaycv.protocol.learners import learner_label, make_learner

    key = f"learners.{name}"
    model = _with_source(make_learner, copy.deepcopy(spec), where=key, source=source)
    try:
        for x, y in _FIRST_INSTANCES:
            model.predict_proba_one(dict(x))
            model.learn_one(dict(x), y)
    except (TypeError, AttributeError) as err:  # a wrong type reaches river's code
        raise ConfigError(
            f"{learner_label(spec)} fails on its first instance: {type(err).__name__}: {err}",
            path=source,
            location=f"key {key}" + ("" if "pipeline" in spec else ".params"),
            expected="parameter values of the types the learner takes",
        ) from None


#: the longest name (bytes) of a dataset, learner or policy: each becomes a folder or part of a
#: file name, and the longest file name holding one (a figure's temporary, 117 bytes more with
#: the metric's name and the host's) must stay within the file system's 255 bytes
NAME_MAX_BYTES = 100

#: the longest path (bytes) the workflow may write (Linux's PATH_MAX)
PATH_MAX_BYTES = 4096


def _check_name_lengths(config: dict, source: str, mistakes: _Mistakes) -> None:
    """Names become path components: refuse one longer than :data:`NAME_MAX_BYTES`."""
    named = [(s, n) for s in ("datasets", "learners") for n in config[s]]
    named += [("policies", n) for n in config["policies"]]
    for section, name in named:
        size = len(str(name).encode("utf-8"))
        if size > NAME_MAX_BYTES:
            shown = name if len(name) <= 40 else f"{name[:40]}..."
            with mistakes.guard():
                raise ConfigError(
                    f"the name {shown!r} is {size} bytes long: it becomes a folder and part of "
                    "file names, and a file name may have at most 255 bytes",
                    path=source,
                    location=f"key {section}.{name}",
                    expected=f"a name of at most {NAME_MAX_BYTES} bytes",
                )


def _check_path_lengths(
    config: dict,
    source: str,
    cwd: str | os.PathLike | None,
    broken: set[tuple],
    runs_given: bool,
    mistakes: _Mistakes,
) -> None:
    """The longest path the workflow writes (a run directory's temporary, its log, a figure's
    temporary) fits :data:`PATH_MAX_BYTES`, with the longest names of the study."""
    if cwd is None:
        return

    def longest(names: Iterable) -> str:
        return max((str(n) for n in names), key=len, default="x")

    d, lr = longest(config["datasets"]), longest(config["learners"])
    p, s = longest(config["policies"]), longest(config["seeds"])
    tmp = "/." + "x" * 20 + ".4194304-" + "h" * 64 + ".abcdefgh.tmp"  # atomic's temporaries
    base = os.path.abspath(cwd)
    run = f"{d}/{lr}/seed{s}/{p}/{'0' * RUN_KEY_LENGTH}"
    candidates = {
        "results": [
            f"{base}/{config['results']}/benchmarks/evaluate/{run}.tsv",
            f"{base}/{config['results']}/figures/{d}/learning_curves_{d}_{'x' * 20}_observed.png"
            + tmp,
        ],
        "runs": [f"{base}/{config['runs']}/{run}{tmp}", f"{base}/logs/{config['runs']}/{run}.log"],
    }
    for key, paths in candidates.items():
        if (key,) in broken or (key == "runs" and not runs_given and ("results",) in broken):
            continue  # its own mistake, or the default runs (<results>/runs) of a long results
        size = max(len(path.encode("utf-8")) for path in paths)
        if size > PATH_MAX_BYTES:
            folder = config[key] if len(config[key]) <= 60 else f"{config[key][:60]}..."
            with mistakes.guard(broken, (key,)):
                raise ConfigError(
                    f"the longest file path the workflow would write under {folder!r} is {size} "
                    f"bytes long (from the working directory {base})",
                    path=source,
                    location=f"key {key}",
                    expected=f"paths of at most {PATH_MAX_BYTES} bytes: a shorter folder, "
                    "shorter names or a working directory nearer the root",
                )


def stream_file(dataset: Mapping) -> str | None:
    """The path of a dataset given as a canonical stream (``.parquet``, used as it is), else None."""
    path = dataset.get("path")
    return path if isinstance(path, str) and path.lower().endswith(".parquet") else None


def _check_dataset_file(
    name: str, dataset: Mapping, source: str, cwd: str | os.PathLike | None
) -> bool | None:
    """Check a dataset given by its file; return whether its stream has an effort (None: not
    known, a ``.parquet`` not looked at without the working directory)."""
    key = f"datasets.{name}"
    path = dataset["path"]
    if cwd is not None:
        full = Path(cwd) / path
        if not full.is_file():
            raise ConfigError(
                f"a folder, not a file: {path!r}" if full.is_dir() else f"no such file {path!r}",
                path=source,
                location=f"key {key}.path",
                expected=f"an existing file; paths are relative to the working directory {cwd}",
            )
        try:
            with open(full, "rb") as handle:
                handle.read(1)
        except OSError as err:
            raise ConfigError(
                f"cannot read {path!r}: {err.strerror}",
                path=source,
                location=f"key {key}.path",
                expected="a file this user can read",
            ) from None
    if stream_file(dataset):
        if "effort" in dataset:
            raise ConfigError(
                "a canonical stream (.parquet) has the effort its file holds: the effort is set "
                "when the stream is converted",
                path=source,
                location=f"key {key}.effort",
                expected="no effort key beside a .parquet path (convert the raw file with "
                "delaycv convert --effort COL+COL or --effort none, or give the raw file here "
                "with its effort)",
            )
        extra = [k for k in CONVERSION_KEYS if k in dataset]
        if extra:
            raise ConfigError(
                "a canonical stream (.parquet) is used as it is: it takes no conversion option",
                path=source,
                location=f"key {key}.{extra[0]}",
                expected="only path, or the raw ARFF/CSV file with its conversion options",
            )
        if cwd is None:
            return None
        from delaycv.data.stream import check_stream_file, has_effort

        try:
            return has_effort(check_stream_file(Path(cwd) / path))
        except InputError as err:
            raise ConfigError(
                f"{path}: {err.message}",
                path=source,
                location=f"key {key}.path",
                expected=err.expected,
            ) from None
    fmt = dataset.get("format") or Path(path).suffix.lstrip(".").lower()
    if fmt not in ("arff", "csv"):
        raise ConfigError(
            f"cannot tell the format of {path!r}",
            path=source,
            location=f"key {key}.path",
            expected="a .arff or .csv file (or format: arff|csv), "
            "or a .parquet stream written by delaycv convert",
        )
    from delaycv.data.mapping import PRESETS, effort_columns
    from delaycv.data.mapping import Mapping as ColumnMapping

    preset = dataset.get("preset")
    if preset is not None and preset not in PRESETS:
        raise ConfigError(
            f"unknown preset {preset!r}",
            path=source,
            location=f"key {key}.preset",
            expected="one of " + ", ".join(PRESETS),
        )
    if "mapping" in dataset:
        base = None if preset is None else PRESETS[preset].mapping
        mapping = _with_source(
            lambda m, where: ColumnMapping.from_dict(m, where=where, base=base),
            dataset["mapping"],
            where=f"{key}.mapping",
            source=source,
        )
    elif preset is None:
        raise ConfigError(
            "a raw file needs a preset or a mapping",
            path=source,
            location=f"key {key}",
            expected=f"preset: {' or '.join(PRESETS)}, or mapping: {{time, label, positive, ...}}",
        )
    else:
        mapping = PRESETS[preset].mapping
    if "effort" not in dataset:
        return bool(mapping.effort)
    if "effort" in dataset.get("mapping", {}):
        raise ConfigError(
            "the effort is given twice (effort and mapping.effort)",
            path=source,
            location=f"key {key}.effort",
            expected="one of the two",
        )
    return bool(
        _with_source(
            lambda value, where: effort_columns(value, where),
            dataset["effort"],
            where=f"{key}.effort",
            source=source,
        )
    )


def figure_metrics(config: dict) -> list[str]:
    """The metrics of a study's figures: ``figures.metric``, one name or a list of them."""
    metric = config["figures"]["metric"]
    return [metric] if isinstance(metric, str) else list(metric)


def _check_metrics(
    config: dict,
    source: str,
    efforts: Mapping[str, bool | None],
    mistakes: _Mistakes,
    section: str,
) -> None:
    """The metrics named in ``section`` (``tests.metrics``, which the contrasts and rankings use
    too, or ``figures.metric``) exist; an effort-aware one needs every dataset to have an effort
    (``efforts``: dataset -> has one; None: not known here)."""
    from delaycv.metrics import METRICS
    from delaycv.metrics.effort_names import EFFORT_METRICS

    known = [*METRICS, *EFFORT_METRICS]
    if section == "tests":
        named = [(f"tests.metrics.{i}", m) for i, m in enumerate(config["tests"]["metrics"])]
    else:
        metrics = figure_metrics(config)
        if isinstance(config["figures"]["metric"], str):
            named = [("figures.metric", metrics[0])]
        else:
            named = [(f"figures.metric.{i}", m) for i, m in enumerate(metrics)]
    for key, metric in named:
        with mistakes.guard():
            if metric in EFFORT_METRICS:
                without = [d for d, has in efforts.items() if has is False]
                if without:
                    dataset = config["datasets"][without[0]]
                    if "generate" in dataset:
                        how = f"no datasets.{without[0]}.effort: null"
                    elif stream_file(dataset):
                        how = "a .parquet converted with an effort (delaycv convert --effort la+ld)"
                    else:
                        how = f"datasets.{without[0]}.effort: the raw file's columns, e.g. [la, ld]"
                    raise ConfigError(
                        f"the effort-aware metric {metric!r} needs each instance's effort, and "
                        f"dataset {without[0]!r} has none",
                        path=source,
                        location=f"key {key}",
                        expected=f"an effort for every dataset ({how}), or a metric without effort",
                    )
            elif metric not in METRICS:
                close = difflib.get_close_matches(metric, known, n=3)
                raise ConfigError(
                    f"unknown metric {metric!r}",
                    path=source,
                    location=f"key {key}",
                    expected="a metric of docs/metrics.md"
                    + (f", such as {', '.join(close)}" if close else " (delaycv.metrics.METRICS)"),
                )


def _check_same_streams(
    config: dict,
    source: str,
    cwd: str | os.PathLike | None,
    skip: set[str],
    mistakes: _Mistakes,
) -> None:
    """One stream under two dataset names would count twice in the rankings (Friedman's n):
    refuse a dataset whose stream is another's: the same generator parameters, or the same file
    (the same resolved path, or the same content: size, then SHA-256) with the same conversion
    options (``effort`` aside: it leaves the instances as they are). Files are compared only
    given the working directory."""
    generated: dict[str, str] = {}
    files: list[tuple[str, Path, str]] = []
    digests: dict[Path, str] = {}
    several = sum("generate" in d for n, d in config["datasets"].items() if n not in skip) > 1
    for name, dataset in config["datasets"].items():
        if name in skip:
            continue
        if "generate" in dataset:
            if not several:  # nothing to compare it with (and no import of the generator)
                continue
            params = canonical_json(_generator_params(dataset["generate"]))
            other = generated.setdefault(params, name)
            if other != name:
                with mistakes.guard():
                    raise ConfigError(
                        f"the same generated stream as dataset {other!r} (the same generator "
                        "parameters, defaults included)",
                        path=source,
                        location=f"key datasets.{name}.generate",
                        expected=_ONE_NAME.format(a=other, b=name),
                    )
            continue
        if cwd is None:
            continue
        full = (Path(cwd) / dataset["path"]).resolve()
        options = {k: v for k, v in dataset.items() if k not in ("path", "effort")}
        if isinstance(options.get("mapping"), dict):
            options["mapping"] = {k: v for k, v in options["mapping"].items() if k != "effort"}
        options_text = canonical_json(options)
        for other, other_full, other_options in files:
            if other_options != options_text:
                continue
            if other_full == full:
                how = f"the same file as dataset {other!r} ({dataset['path']!r})"
            elif _same_content(full, other_full, digests):
                other_path = config["datasets"][other]["path"]
                how = (
                    f"the same content as the file of dataset {other!r}, {other_path!r} (the "
                    "same size and SHA-256)"
                )
            else:
                continue
            with mistakes.guard():
                raise ConfigError(
                    how + (", with the same conversion options" if options else ""),
                    path=source,
                    location=f"key datasets.{name}.path",
                    expected=_ONE_NAME.format(a=other, b=name),
                )
            break
        else:
            files.append((name, full, options_text))


_ONE_NAME = (
    "each stream under one name (two names count one stream twice in the rankings): "
    "remove datasets.{b} or datasets.{a}"
)


def canonical_json(value: Any) -> str:
    """``value`` as JSON that changes only when the value does (keys sorted)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _generator_params(given: Mapping) -> dict:
    """The parameters :func:`delaycv.data.synthetic.generate_stream` runs with: ``given`` over its
    defaults (``days``: rows / 6), without ``dataset`` and ``effort`` (they leave the instances
    as they are)."""
    import inspect

    from delaycv.data.synthetic import generate_stream

    params = {
        name: p.default
        for name, p in inspect.signature(generate_stream).parameters.items()
        if p.default is not inspect.Parameter.empty and name not in ("dataset", "effort")
    }
    params.update({k: v for k, v in given.items() if k not in ("dataset", "effort")})
    if params.get("days") is None and isinstance(params.get("rows"), int):
        params["days"] = params["rows"] / 6.0
    return {
        k: float(v) if isinstance(v, int) and not isinstance(v, bool) else v
        for k, v in params.items()
    }


def _same_content(a: Path, b: Path, digests: dict[Path, str]) -> bool:
    """Whether files ``a`` and ``b`` hold the same bytes: the sizes first (free), then SHA-256."""
    try:
        if a.stat().st_size != b.stat().st_size:
            return False
        for path in (a, b):
            if path not in digests:
                sha = hashlib.sha256()
                with open(path, "rb") as handle:
                    for block in iter(lambda: handle.read(1 << 20), b""):
                        sha.update(block)
                digests[path] = sha.hexdigest()
    except OSError:
        return False
    return digests[a] == digests[b]


# --------------------------------------------------------------------------- policies


def policy_name(spec: Mapping, *, where: str = "policy") -> str:
    """The name :func:`delaycv.protocol.policies.make_policy` gives a spec: ``ideal``, ``delay_7d``,
    ``verification_90d``, ``hitl_7d_90d`` (or the spec's own ``name``)."""
    from delaycv.protocol.policies import make_policy

    return make_policy(dict(spec), where=where).name


def _check_policy(name: str, spec: Mapping, *, where: str) -> None:
    """Build the policy ``name`` of the config; a name that reads as a preset name
    (``hitl_7d_90d``) must say what the spec says (the figures' windows come from the spec)."""
    from delaycv.protocol.policies import check_policy_name, make_policy

    policy = make_policy({k: v for k, v in spec.items() if k != "name"}, where=where)
    check_policy_name(name, policy, location=f"key {where}")


def _grid_lists(preset: str, *, where: str = "policy_grids") -> list[str]:
    """The keys of a policy grid's window lists: the windows of the preset
    (:attr:`delaycv.protocol.policies.PolicyPreset.windows`), e.g. ``pos_window`` and ``neg_window``."""
    from delaycv.protocol.policies import PRESETS, lookup_preset

    keys = [w.key for w in lookup_preset(preset, location=f"key {where}.preset").windows]
    if not keys:
        raise ConfigError(
            f"the {preset} preset has no window to vary",
            location=f"key {where}.preset",
            expected="one of " + ", ".join(n for n, p in PRESETS.items() if p.windows),
        )
    return keys


def expand_policy_grid(grid: Mapping, *, where: str = "policy_grids") -> dict[str, dict]:
    """One policy spec per combination of the grid's window lists (the preset's windows), by name, in
    grid order."""
    keys = _grid_lists(grid["preset"], where=where)
    common = {k: grid[k] for k in ("inspection_error",) if k in grid}
    out: dict[str, dict] = {}
    for values in itertools.product(*(grid.get(k, []) for k in keys)):
        spec = {"preset": grid["preset"], **dict(zip(keys, values, strict=True)), **common}
        out[policy_name(spec, where=where)] = spec
    return out


def _all_policies(
    config: dict, source: str, broken: set[tuple], mistakes: _Mistakes
) -> dict[str, dict]:
    """Every policy of the study by name: the explicit ones, then each grid's; each checked on
    its own."""
    from delaycv.protocol.policies import WINDOW_SIDES

    policies: dict[str, dict] = {}
    for name, spec in config["policies"].items():
        with mistakes.guard(broken, ("policies", name)):
            _with_source(_check_policy, name, spec, where=f"policies.{name}", source=source)
        policies[name] = {**spec}
    for grid_name, grid in config["policy_grids"].items():
        with mistakes.guard(broken, ("policy_grids", grid_name)):
            where = f"policy_grids.{grid_name}"
            lists = _with_source(_grid_lists, grid["preset"], where=where, source=source)
            for option in lists:
                if option not in grid:
                    raise ConfigError(
                        "missing",
                        path=source,
                        location=f"key policy_grids.{grid_name}.{option}",
                        expected=f"a list of durations for the {grid['preset']} preset",
                    )
            for option in (k for k in WINDOW_SIDES if k not in lists):
                if option in grid:
                    raise ConfigError(
                        f"the {grid['preset']} preset takes no {option}",
                        path=source,
                        location=f"key policy_grids.{grid_name}.{option}",
                        expected=" and ".join(lists),
                    )
            grid_policies = _with_source(expand_policy_grid, grid, where=where, source=source)
            for name, spec in grid_policies.items():
                if ("policies", name) in broken:  # its own mistake is reported
                    continue
                if name in policies:
                    raise ConfigError(
                        f"policy {name!r} is defined twice",
                        path=source,
                        location=f"key policy_grids.{grid_name}",
                        expected="policy names that differ",
                    )
                policies[name] = spec
    if not policies and not _any_broken(broken, "policies", "policy_grids"):
        raise ConfigError(
            "no policy",
            path=source,
            location="key policies",
            expected="at least one policy in policies or policy_grids",
        )
    return policies


def _any_broken(broken: set[tuple], *sections: str) -> bool:
    """Whether something of ``sections`` was left out (a mistake of its own was reported)."""
    return any(item[0] in sections for item in broken)


def _resolve_contrasts(config: dict, source: str, broken: set[tuple]) -> None:
    """``contrasts.reference``: the policy every other policy is contrasted with. Left out, it is
    ``ideal`` when the study has a policy of that name, else none (no contrasts); ``null`` turns
    the contrasts off; a name that is not one of the study's policies is an error."""
    contrasts = config.setdefault("contrasts", {})
    if "reference" not in contrasts:
        default = defaults.CONTRAST_REFERENCE
        contrasts["reference"] = default if default in config["policies"] else None
    reference = contrasts["reference"]
    if reference is not None and reference not in config["policies"]:
        if _any_broken(broken, "policies", "policy_grids"):
            return  # it may be one of those: their own mistakes are reported
        raise ConfigError(
            f"no policy named {reference!r} to contrast the other policies with",
            path=source,
            location="key contrasts.reference",
            expected="one of the study's policies ("
            + ", ".join(config["policies"])
            + "), or null for no contrasts",
        )


#: the top-level folders of the workflow's checkout (its code, configs, docs, tests, the
#: environments, the generated streams and the logs): a study's outputs may not go into them
CHECKOUT_FOLDERS = (
    ".git",
    ".snakemake",
    ".test",
    ".venv",
    "benchmarks",
    "config",
    "delaycv",
    "docs",
    "envs",
    "logs",
    "profiles",
    "resources",
    "scripts",
    "tests",
    "workflow",
)

#: what the workflow writes directly under a study's ``results`` folder: ``runs`` inside
#: ``results`` may not be (or be inside) one of them
STUDY_OUTPUTS = (
    "benchmarks",
    "figures",
    "merged",
    "merged.parquet",
    "rankings",
    "runs.csv",
    "runs.html",
    "runs.parquet",
    "tests",
)


def _resolve_folders(
    config: dict,
    source: str,
    cwd: str | os.PathLike | None,
    broken: set[tuple],
    mistakes: _Mistakes,
) -> None:
    """``results`` (the study's tables and figures) and ``runs`` (the run directories; left out,
    ``<results>/runs``). Each is a relative folder of the working directory, written out (``~``
    is not expanded), not the working directory itself (``.``) nor inside one of the checkout's
    own folders (:data:`CHECKOUT_FOLDERS`); ``runs`` is not ``results``, not inside one of the
    study's outputs (:data:`STUDY_OUTPUTS`), and ``results`` not inside ``runs``. Given the
    working directory, neither may be a file or lie under one."""
    given = {key: key in config for key in ("results", "runs")}
    config["results"] = posixpath.normpath(str(config["results"]))
    config.setdefault("runs", posixpath.join(config["results"], "runs"))
    config["runs"] = posixpath.normpath(str(config["runs"]))
    good = {}
    for key in ("results", "runs"):
        if (key,) in broken or (key == "runs" and not given["runs"] and "results" not in good):
            continue  # a mistake of its own, or the default runs of a refused results
        with mistakes.guard():
            _check_folder(config[key], key, source, cwd)
            good[key] = config[key]
    if len(good) < 2:
        return
    results, runs = good["results"], good["runs"]
    example = f"{results}/runs"
    if results == runs:
        raise ConfigError(
            "the run directories and the study's tables would share one folder",
            path=source,
            location="key runs",
            expected=f"a folder other than results ({results}), e.g. {results}/runs",
        )
    if results.startswith(runs + "/"):
        raise ConfigError(
            f"the study's tables ({results}) would be among the run directories ({runs})",
            path=source,
            location="key runs",
            expected=f"a runs folder that does not hold the study's results folder, e.g. {example}",
        )
    if runs.startswith(results + "/"):
        first = runs[len(results) + 1 :].split("/")[0]
        if first in STUDY_OUTPUTS:
            raise ConfigError(
                f"{runs!r} is inside {results}/{first}, an output of the study",
                path=source,
                location="key runs",
                expected=f"a folder that no output of the study uses (not {results}/"
                + f"{{{','.join(STUDY_OUTPUTS)}}}), e.g. {results}/runs",
            )


def _check_folder(folder: str, key: str, source: str, cwd: str | os.PathLike | None) -> None:
    def refuse(message: str, expected: str = "a relative path, such as results/my-study"):
        raise ConfigError(message, path=source, location=f"key {key}", expected=expected)

    if folder.startswith("~"):
        refuse(
            f"{folder!r} starts with ~, which is not expanded: it would make a folder named "
            f"{folder.split('/')[0]!r}",
            "the path written out, relative to the working directory, e.g. results/my-study",
        )
    parts = Path(folder).parts
    if Path(folder).is_absolute() or ".." in parts:
        refuse(
            f"{folder!r} is not a folder inside the working directory",
            "a relative path without '..', such as results/my-study",
        )
    if folder == ".":
        refuse(
            "'.' is the working directory itself: the outputs would land among the checkout's "
            "own folders",
            "a folder of the study's own, e.g. results/my-study",
        )
    if parts[0] in CHECKOUT_FOLDERS:
        refuse(
            f"{folder!r} is inside {parts[0]}/, a folder of the workflow's own",
            f"a folder outside {', '.join(CHECKOUT_FOLDERS)}, e.g. results/my-study",
        )
    if cwd is None:
        return
    path = Path(cwd)
    for i, part in enumerate(parts):
        path = path / part
        if path.exists() and not path.is_dir():
            what = (
                repr(folder)
                if i == len(parts) - 1
                else f"{'/'.join(parts[: i + 1])!r} of {folder!r}"
            )
            refuse(f"{what} is a file, not a folder", "a folder (or a path where one can be made)")
        if not path.exists():
            if not os.access(path.parent, os.W_OK | os.X_OK):
                refuse(
                    f"{folder!r} cannot be made: {str(path.parent.relative_to(cwd)) or '.'!r} "
                    "is not writable",
                    "a folder this user can write",
                )
            break
    else:
        if not os.access(path, os.W_OK | os.X_OK):
            refuse(f"{folder!r} is not writable", "a folder this user can write")


def _with_source(function, *args, where: str, source: str):
    """Call ``function``; a ConfigError it raises gets the config file as its path."""
    try:
        return function(*args, where=where)
    except ConfigError as err:
        raise ConfigError(
            err.message, path=source, location=err.location, expected=err.expected
        ) from None


# --------------------------------------------------------------------------- helpers for scripts


def runs(config: Mapping) -> list[Run]:
    """Every (dataset, learner, seed, policy) of a validated config, in config order."""
    return [
        Run(d, learner, int(s), p)
        for d in config["datasets"]
        for learner in config["learners"]
        for s in config["seeds"]
        for p in config["policies"]
    ]


def _get(config: Mapping, section: str, name: str) -> dict:
    try:
        return copy.deepcopy(dict(config[section][name]))
    except KeyError:
        raise ConfigError(
            f"no {section[:-1]} named {name!r}",
            location=f"key {section}.{name}",
            expected="one of " + ", ".join(map(str, config.get(section, {}))),
        ) from None


def dataset_spec(config: Mapping, name: str) -> dict:
    return _get(config, "datasets", name)


def learner_spec(config: Mapping, name: str) -> dict:
    """The learner's spec; a MOA learner's with its command line's whitespace collapsed (the same
    meaning, the same job: delaycv.jvm.learner.normalise_spec)."""
    spec = _get(config, "learners", name)
    if "moa" in spec:
        from delaycv.jvm.learner import normalise_spec

        spec = normalise_spec(spec, f"learners.{name}")
    return spec


def policy_spec(config: Mapping, name: str) -> dict:
    """The policy's spec as :func:`delaycv.protocol.policies.make_policy` takes it, with its name."""
    spec = _get(config, "policies", name)
    spec["name"] = name
    return spec


def validation_spec(config: Mapping) -> dict:
    """Keyword arguments of :class:`delaycv.protocol.validation.Validation`."""
    return dict(config["validation"])


def estimator_spec(config: Mapping) -> dict:
    """The estimator as a plain dict (``kind`` ``sliding`` for the alias ``window``)."""
    est = dict(config["estimator"])
    if est["kind"] == "window":
        est["kind"] = "sliding"
    return est


def evaluation_options(config: Mapping) -> dict:
    """Keywords of :func:`delaycv.protocol.settings.make_settings` from ``evaluation`` and ``checkpoints``."""
    return {**config["evaluation"], "every": int(config["checkpoints"]["every"])}


def run_settings(config: Mapping, dataset: str, learner: str, policy: str) -> dict:
    """Everything that decides the numbers of the runs of (``dataset``, ``learner``, ``policy``),
    whatever the seed: the dataset's, learner's and policy's specs, validation, estimator and the
    evaluation's options (checkpoints included)."""
    return {
        "dataset": dataset_spec(config, dataset),
        "learner": learner_spec(config, learner),
        "policy": policy_spec(config, policy),
        "validation": validation_spec(config),
        "estimator": estimator_spec(config),
        "options": evaluation_options(config),
    }


#: the length of a run's settings key (hex digits of SHA-256)
RUN_KEY_LENGTH = 12


def run_key(config: Mapping, dataset: str, learner: str, policy: str) -> str:
    """The short digest of :func:`run_settings`: the last folder of a run directory in a ``runs``
    folder that studies may share (``<runs>/{dataset}/{learner}/seed{seed}/{policy}/{key}``), so
    that two studies with other settings for the same names never write one run directory."""
    text = canonical_json(run_settings(config, dataset, learner, policy))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:RUN_KEY_LENGTH]
