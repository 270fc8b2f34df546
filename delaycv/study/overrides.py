"""Snakemake's ``--config key=value`` values, read as a config file's would be.

Snakemake gives every value inside a list or a mapping as text (``seeds=[1,2]`` is
``['1', '2']``); :func:`as_in_a_file` reads such text as YAML reads it in a file wherever the
schema takes no text, so that ``--config`` and a file mean the same.
"""

from __future__ import annotations

from typing import Any

from delaycv.study.schema import resolve_ref


def as_in_a_file(value: Any, schema: dict, root: dict | None = None) -> Any:
    """``value`` of Snakemake's ``--config`` with its text read as YAML would read it in a file.

    Only where ``schema`` does not take text: Snakemake reads ``seeds=[1,2]`` as ``['1', '2']``
    (every value inside a list or mapping is text), a file as ``[1, 2]``.

    Parameters
    ----------
    value : Any
        The value Snakemake gives.
    schema : dict
        The schema of ``value`` (``$ref`` resolved against ``root``).
    root : dict, optional
        The whole schema (default: ``schema``).

    Returns
    -------
    Any

    Examples
    --------
    >>> schema = {"properties": {"seeds": {"type": "array", "items": {"type": "integer"}}}}
    >>> as_in_a_file({"seeds": ["1", "2"]}, schema)
    {'seeds': [1, 2]}
    """
    root = schema if root is None else root
    schema = resolve_ref(schema, root) if isinstance(schema, dict) else {}
    if isinstance(value, dict):
        return {
            k: as_in_a_file(v, _property_schema(schema, str(k), root), root)
            for k, v in value.items()
        }
    if isinstance(value, list):
        items = _branch(schema, "array", root).get("items", {})
        return [as_in_a_file(v, items, root) for v in value]
    if isinstance(value, str) and not _takes_text(schema, root):
        return _yaml_scalar(value)
    if isinstance(value, str) and value in _YAML_NULLS and _takes_null(schema, root):
        return None  # contrasts={reference: null}
    return value


#: the texts YAML reads as null
_YAML_NULLS = ("", "~", "null", "Null", "NULL")


def _takes_null(schema: dict, root: dict) -> bool:
    schema = resolve_ref(schema, root)
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_takes_null(o, root) for o in schema.get("oneOf", []) + schema.get("anyOf", []))


def _branch(schema: dict, kind: str, root: dict) -> dict:
    """The alternative of ``schema`` (``oneOf``/``anyOf``) for a value of JSON type ``kind``."""
    for option in schema.get("oneOf", []) + schema.get("anyOf", []):
        option = resolve_ref(option, root)
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
    schema = resolve_ref(schema, root)
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
