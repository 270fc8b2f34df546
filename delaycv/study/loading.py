"""The loading funnel of a study config: read, merge, validate, fill defaults, expand grids.

The config file the user names is the whole study: the workflow loads ``config.yaml`` only when no
``--configfile`` is given, and keys a file leaves out take the schema's defaults, never the values
of another file. The Snakefile calls :func:`load_study` when it loads (and
:func:`check_study_file` on ``config.yaml`` before Snakemake reads it); tests and tools call
:func:`load_config` on one file or mapping.

Every independent mistake is reported at once, when the config loads, before any job runs: a
:class:`~delaycv.study.mistakes.ConfigErrors` holding one
:class:`~delaycv.common.errors.ConfigError` per mistake, in file order, each naming the file where
the key was written, the key's line and column (:class:`~delaycv.study.yaml_file.Marks`) and the
key: ``my.yaml:4:39: key learners.ht.params: 3 is an integer (expected a mapping ...)``. A file
that is not a config at all (not YAML, empty, not a mapping) is reported alone. The checks are
the schema's (:mod:`delaycv.study.schema`), then what the schema cannot say
(:mod:`delaycv.study.checks`). What is accepted but deprecated (the estimator kind ``window``,
now ``sliding``) is a warning of the logger ``delaycv.study``, placed like an error.

The loaded study's runs and the specs the rules pass to the jobs are :mod:`delaycv.study.runs`'s.
"""

from __future__ import annotations

import copy
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from delaycv.common.errors import ConfigError
from delaycv.study.checks import check_study
from delaycv.study.mistakes import ConfigErrors, Mistakes
from delaycv.study.overrides import as_in_a_file
from delaycv.study.schema import check_schema, coerce_booleans, fill_defaults, schema_dict
from delaycv.study.yaml_file import Marks, read_marked, shown_name

#: the config's warnings (what is accepted but deprecated), each ``file:line:column: key ...``:
#: ``delaycv check`` prints them as ``delaycv: warning: ...``, the workflow in its log
log = logging.getLogger("delaycv.study")

#: what a study config file must hold (said when one is empty)
STUDY_EXPECTED = "a mapping with datasets, learners, policies"


def check_study_file(path: str | os.PathLike) -> None:
    """Refuse a study file that cannot be read as a config at all.

    What Snakemake's own reading would stop on without naming the file: unreadable, not UTF-8,
    not YAML, empty, not a mapping. Every other mistake is :func:`load_study`'s.

    Parameters
    ----------
    path : str or os.PathLike
        The study file.

    Raises
    ------
    ConfigError
        Naming the file (and the line and column where known).
    """
    shown = shown_name(path)
    content, marks, _ = read_marked(path, shown, STUDY_EXPECTED)
    if not isinstance(content, Mapping):
        raise _not_a_mapping(content, shown, marks)


def _not_a_mapping(content: Any, shown: str, marks: Marks | None) -> ConfigError:
    where = shown if marks is None else f"{shown}:{marks.line}:{marks.column}"
    return ConfigError(
        "the config is " + ("null" if content is None else f"a {type(content).__name__}"),
        path=where,
        expected=STUDY_EXPECTED,
    )


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
    """Read (if ``source`` is a path) and validate a workflow config.

    Parameters
    ----------
    source : str, os.PathLike or Mapping
        A config file, or a config's content.
    schema : str or os.PathLike, optional
        The schema file (default :data:`delaycv.study.schema.SCHEMA_PATH`).
    name : str, optional
        The config's name in the errors (default: the path, or ``config``).
    cwd : str or os.PathLike, optional
        The working directory the dataset paths and folders are relative to (None: files and
        folders on disk are not looked at).
    learners : bool
        Whether to build each learner and run it on two instances.

    Returns
    -------
    dict
        The validated study (see :func:`validate_config`).

    Raises
    ------
    ConfigErrors
        Every mistake (see :func:`load_study`).

    Examples
    --------
    >>> study = {"datasets": {"d": {"generate": {"rows": 100}}}, "seeds": [1],
    ...          "learners": {"nb": {"class": "naive_bayes.GaussianNB"}},
    ...          "policies": {"ideal": {"preset": "ideal"}}}
    >>> load_config(study, learners=False)["estimator"]
    {'kind': 'fading', 'alpha': 0.99}
    """
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
    """The validated study of the config ``files`` (the workflow's ``--configfile`` ones).

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
    cannot be read, is not YAML, is empty or is not a mapping. A warning (a deprecated spelling)
    is logged (logger ``delaycv.study``) at its file, line and column.

    Parameters
    ----------
    files : sequence of str or os.PathLike
        The config files, merged in order.
    config : Mapping, optional
        Snakemake's merged config (not used).
    overrides : Mapping, optional
        Snakemake's ``--config`` values.
    schema : str or os.PathLike, optional
        The schema file (default :data:`delaycv.study.schema.SCHEMA_PATH`).
    cwd : str or os.PathLike, optional
        The working directory (None: files and folders on disk are not looked at).
    learners : bool
        Whether to build each learner and run it on two instances.

    Returns
    -------
    dict
        The validated study (see :func:`validate_config`).

    Raises
    ------
    ConfigErrors
        Every mistake, in file order.
    """
    if not files:
        raise ConfigError("no config file", expected="a config file (snakemake --configfile FILE)")
    return _load_files([(f, shown_name(f)) for f in files], overrides, schema, cwd, learners)


def _load_files(files, overrides, schema, cwd, learners) -> dict:
    layers: list[_Layer] = []
    mistakes: list[ConfigError] = []
    fatal = False
    for path, shown in files:
        try:
            content, marks, duplicates = read_marked(path, shown, STUDY_EXPECTED)
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
        typed = as_in_a_file(dict(overrides), schema_dict(schema))
        layers.append(_Layer("--config", typed))
    return _load_layers(layers, mistakes, schema=schema, cwd=cwd, learners=learners)


def _load_layers(layers, mistakes, *, schema, cwd, learners) -> dict:
    """Merge ``layers`` in order, validate, and raise every mistake (``mistakes``: those found
    while reading) placed at its file, line and column, in file order."""
    config: dict = {}
    for layer in layers:
        _merge(config, layer.content)
    files = [layer.name for layer in layers if layer.name != "--config"]
    last = files[-1] if files else layers[-1].name
    study, errors, warnings = _validate(
        config, schema=schema, source=last, cwd=cwd, learners=learners
    )
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
    for warning in warnings:
        log.warning("%s", _place(warning, layers, last))
    return study


def _line_column(where: str) -> tuple[int | None, int | None]:
    found = re.search(r":(\d+):(\d+)$", where or "")
    return (int(found[1]), int(found[2])) if found else (None, None)


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


def validate_config(
    config: Any,
    *,
    schema: str | os.PathLike | None = None,
    source: str = "config.yaml",
    cwd: str | os.PathLike | None = None,
    learners: bool = True,
) -> dict:
    """A validated copy of ``config``, its defaults filled in and its policy grids expanded.

    Policies, presets, mappings, metric names and folders are checked too; learners are built
    once unless ``learners`` is false (importing river takes seconds); dataset files, folders on
    disk and ``DELAYCV_PURE_PYTHON`` are checked when ``cwd`` is given. Its mistakes name
    ``source`` and the key, without a line (see :func:`load_study` for files).

    Parameters
    ----------
    config : Any
        A config's content (a mapping).
    schema : str or os.PathLike, optional
        The schema file (default :data:`delaycv.study.schema.SCHEMA_PATH`).
    source : str
        The file the errors name.
    cwd : str or os.PathLike, optional
        The directory the paths are relative to.
    learners : bool
        Whether to build each learner and run it on two instances.

    Returns
    -------
    dict
        The study: its ``policies`` hold every policy (explicit ones and grid ones);
        ``policy_grids`` is kept as written; ``results``, ``runs`` and ``contrasts.reference``
        are resolved.

    Raises
    ------
    ConfigErrors
        Every mistake found.
    """
    study, errors, warnings = _validate(
        config, schema=schema, source=source, cwd=cwd, learners=learners
    )
    if errors:
        raise ConfigErrors(errors)
    for warning in warnings:
        log.warning("%s", warning)
    return study


def _validate(
    config: Any,
    *,
    schema: str | os.PathLike | None,
    source: str,
    cwd: str | os.PathLike | None,
    learners: bool,
) -> tuple[Any, list[ConfigError], list[ConfigError]]:
    """The validated config, every mistake found and every warning (:func:`validate_config`)."""
    if config is None:
        config = {}
    if not isinstance(config, Mapping):
        error = ConfigError(
            f"the config is a {type(config).__name__}", path=source, expected="a mapping of keys"
        )
        return config, [error], []
    config = coerce_booleans(copy.deepcopy(dict(config)))
    rules = schema_dict(schema)
    errors, broken = check_schema(config, rules, source)
    mistakes = Mistakes(lenient=bool(errors))
    mistakes.errors.extend(errors)
    tests = config.get("tests")
    references_given = isinstance(tests, Mapping) and "references" in tests
    with mistakes.guard():
        fill_defaults(config, rules)
        if not references_given:
            _default_references(config)
        check_study(config, source, cwd, learners, broken, mistakes)
    return config, mistakes.errors, mistakes.warnings


def _default_references(config: dict) -> None:
    """The default of ``tests.references``: every reference the runs are scored against (the
    ``corrected`` one only when ``evaluation.corrected`` is on)."""
    evaluation, tests = config.get("evaluation"), config.get("tests")
    if not (isinstance(evaluation, dict) and isinstance(tests, dict)):
        return
    if evaluation.get("corrected") is False and isinstance(tests.get("references"), list):
        tests["references"] = [r for r in tests["references"] if r != "corrected"]
