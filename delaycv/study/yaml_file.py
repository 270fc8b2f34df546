"""YAML files read strictly, with the line and column of every key.

A config (and a learner file of ``delaycv evaluate``) is read by :func:`read_yaml`: a syntax
error names its line and column, a key given twice in a mapping (which YAML would silently
resolve to the last value) is an error, and so is an empty file. :func:`read_yaml_marks` and
:func:`read_marked` also give where each key was written (:class:`Marks`, from YAML's node
marks), which the config's errors name (``my.yaml:4:39: key learners.ht.params: ...``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from delaycv.common.errors import ConfigError
from delaycv.study.mistakes import ConfigErrors


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
    """The content of a YAML file, read strictly.

    A syntax error names its line and column (``my.yaml:5:1: not valid YAML: ...``), every key
    given twice in a mapping its line, column and dotted key (one line each, as a
    :class:`~delaycv.study.mistakes.ConfigErrors`), and an empty file (nothing but blanks and
    comments) is an error saying ``expected``.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    expected : str
        What an empty file should have held.

    Returns
    -------
    Any
        The document.

    Raises
    ------
    ConfigError
        Naming the file (and the line and column where known).
    """
    return read_yaml_marks(path, expected=expected)[0]


def read_yaml_marks(
    path: str | os.PathLike, *, expected: str = "a YAML document"
) -> tuple[Any, Marks]:
    """:func:`read_yaml`, with the line and column of every key.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    expected : str
        What an empty file should have held.

    Returns
    -------
    content : Any
        The document.
    marks : Marks
        Where each key was written.
    """
    content, marks, duplicates = _parse(_read_text(path, str(path)), str(path), expected)
    if duplicates:
        raise ConfigErrors(duplicates)
    return content, marks


def parse_yaml(text: str, *, path: str, expected: str = "a YAML document") -> Any:
    r""":func:`read_yaml` of the text of the file ``path``.

    Parameters
    ----------
    text : str
        The file's text.
    path : str
        The file's name in the errors.
    expected : str
        What an empty text should have held.

    Returns
    -------
    Any
        The document.

    Examples
    --------
    >>> parse_yaml("seeds: [1, 2]", path="my.yaml")
    {'seeds': [1, 2]}
    >>> parse_yaml("a: 1\na: 2", path="my.yaml")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    delaycv.study.mistakes.ConfigErrors: my.yaml:2:1: key a: duplicate key ...
    """
    content, _, duplicates = _parse(text, path, expected)
    if duplicates:
        raise ConfigErrors(duplicates)
    return content


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
        return marks
    if not isinstance(node, yaml.MappingNode):
        return marks
    first: dict[Any, tuple[int, int]] = {}
    merged = []
    for key_node, value_node in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":  # <<: *base, overridden on purpose
            merged.append(value_node)
            continue
        key = loader.construct_object(key_node, deep=True)
        name = f"{where}.{key}" if where else str(key)
        if check:
            _note_duplicate(first, key, key_node.start_mark, path, name, duplicates)
        marks.children[str(key)] = _walk(
            loader, value_node, path, name, key_node.start_mark, duplicates, checked, active
        )
    for value_node in merged:  # the keys a merge brings are where its source has them
        sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
        for source in sources:
            sub = _walk(loader, source, path, where, source.start_mark, duplicates, checked, active)
            for key, child in sub.children.items():
                marks.children.setdefault(key, child)
    return marks


def _note_duplicate(
    first: dict[Any, tuple[int, int]], key: Any, mark, path: str, name: str, duplicates: list
) -> None:
    """Record ``key`` of a mapping (written at ``mark``; ``first``: where each of its keys was
    first given), adding an error to ``duplicates`` if it was given before."""
    line, column = mark.line + 1, mark.column + 1
    try:
        if key in first:
            duplicates.append(
                ConfigError(
                    f"duplicate key (first given at line {first[key][0]}, column {first[key][1]})",
                    path=f"{path}:{line}:{column}",
                    location=f"key {name}",
                    expected="each key once in a mapping",
                )
            )
        first[key] = (line, column)
    except TypeError:  # an unhashable key: the constructor says so
        pass


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


def shown_name(path: str | os.PathLike) -> str:
    """A config file's name as a user reads it: relative to the working directory when inside it.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    str

    Examples
    --------
    >>> shown_name("config/study.yaml")
    'config/study.yaml'
    """
    p = Path(path)
    if p.is_absolute():
        try:
            return str(p.relative_to(Path.cwd()))
        except ValueError:
            return str(p)
    return str(p)


def read_marked(
    path: str | os.PathLike, shown: str, expected: str
) -> tuple[Any, Marks, list[ConfigError]]:
    """Read the YAML file ``path`` strictly, keeping its duplicate keys for the caller to report.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    shown : str
        Its name in the errors (:func:`shown_name`).
    expected : str
        What an empty file should have held (said in its error).

    Returns
    -------
    content : Any
        The document.
    marks : Marks
        The line and column of every key.
    duplicates : list of ConfigError
        One per key given twice in a mapping (its line, column and dotted key).

    Raises
    ------
    ConfigError
        The file cannot be read, is not UTF-8 text, is not YAML or is empty.
    """
    return _parse(_read_text(path, shown), shown, expected)
