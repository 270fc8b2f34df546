"""The study config's JSON schema: validation, error messages, defaults.

The schema (``workflow/schemas/config.schema.yaml``, :data:`SCHEMA_PATH`) says the names, types
and required keys; the policy presets are filled in from :mod:`delaycv.protocol.policies`
(:func:`schema_dict`). :func:`check_schema` turns each schema error into a
:class:`~delaycv.common.errors.ConfigError` naming the key and what was expected, and leaves
out what the schema refused, so that the other checks (:mod:`delaycv.study.checks`) run on the
rest; :func:`fill_defaults` fills in the schema's defaults.
"""

from __future__ import annotations

import copy
import functools
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from delaycv.common.bounds import BOUNDS, check_size
from delaycv.common.checks import NAME_PATTERN as _NAME_PATTERN
from delaycv.common.errors import ConfigError
from delaycv.common.words import did_you_mean
from delaycv.study.yaml_file import read_yaml

#: the schema beside the package in a checkout (workflow/schemas/config.schema.yaml)
SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


#: the characters allowed in dataset, learner and policy names (they become path components)
NAME_PATTERN = _NAME_PATTERN


#: the top-level keys that map names to specs (a mistake in one entry leaves the others checked)
NAMED_SECTIONS = ("datasets", "learners", "policies", "policy_grids")


@functools.lru_cache(maxsize=4)
def _schema(path: str) -> dict:
    schema = read_yaml(path)
    if not isinstance(schema, dict):
        raise ConfigError("the schema is not a mapping", path=path)
    return schema


def schema_dict(schema: str | os.PathLike | None) -> dict:
    """The schema, with the policy presets filled in (:func:`_with_presets`).

    Parameters
    ----------
    schema : str or os.PathLike, optional
        The schema file (default :data:`SCHEMA_PATH`); read once.

    Returns
    -------
    dict
        A copy of the schema, its ``preset`` keys listing the policy presets.
    """
    path = str(schema or SCHEMA_PATH)
    return _with_presets(_schema(path), path)


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


def coerce_booleans(config: dict) -> dict:
    """Read an unquoted ``true`` (YAML's boolean) as the reference named "true", in place.

    Parameters
    ----------
    config : dict
        A config (its ``tests.references`` and ``figures.reference``).

    Returns
    -------
    dict
        ``config``.

    Examples
    --------
    >>> coerce_booleans({"tests": {"references": [True, "observed"]}})
    {'tests': {'references': ['true', 'observed']}}
    """
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
                "unknown key" + did_you_mean(name, allowed),
                path=source,
                location=f"key {_key([*path, name])}",
                expected=expected,
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
        message = f"{value!r} is not allowed" + (
            did_you_mean(value, map(str, error.validator_value)) if isinstance(value, str) else ""
        )
        expected = "one of " + ", ".join(str(v) for v in error.validator_value)
    elif validator == "pattern":
        message = f"{value!r} has the wrong form"
        expected = expected or f"text matching {error.validator_value}"
    elif validator in ("oneOf", "anyOf"):
        message = f"{value!r} is not valid"
        expected = expected or "a value of one of the allowed forms"
    elif validator in ("minimum", "maximum") and path and path[-1] in BOUNDS:
        message, expected = _size_error(str(path[-1]), value, _key(path), error.message)
    else:
        message = error.message
    return [ConfigError(message, path=source, location=f"key {_key(path)}", expected=expected)]


def _size_error(name: str, value: Any, key: str, message: str) -> tuple[str, str | None]:
    """A size-like value out of the schema's range in the words of
    :func:`delaycv.common.bounds.check_size` (the bound and why), as the command line and the API
    say it."""
    try:
        check_size(name, value, f"key {key}")
    except ConfigError as err:
        return err.message, err.expected
    return message, None


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


def resolve_ref(schema: dict, root: dict) -> dict:
    """``schema`` with its ``$ref`` (a local ``#/...`` reference) followed, until it has none.

    Parameters
    ----------
    schema : dict
        A part of the schema.
    root : dict
        The whole schema.

    Returns
    -------
    dict

    Examples
    --------
    >>> resolve_ref({"$ref": "#/$defs/seed"}, {"$defs": {"seed": {"type": "integer"}}})
    {'type': 'integer'}
    """
    while isinstance(schema, dict) and "$ref" in schema:
        ref = schema["$ref"]
        node: Any = root
        for part in ref.lstrip("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def fill_defaults(instance: Any, schema: dict, root: dict | None = None) -> None:
    """Fill in, in place, the defaults the schema gives for the keys ``instance`` leaves out.

    Parameters
    ----------
    instance : Any
        A config (or a part of one); only mappings are filled, their keys recursively.
    schema : dict
        The schema of ``instance`` (``$ref`` resolved against ``root``).
    root : dict, optional
        The whole schema (default: ``schema`` itself).

    Examples
    --------
    >>> config = {"estimator": {}}
    >>> fill_defaults(config, {"properties": {"estimator": {"properties": {
    ...     "kind": {"default": "fading"}}}}})
    >>> config
    {'estimator': {'kind': 'fading'}}
    """
    root = schema if root is None else root
    schema = resolve_ref(schema, root)
    if not isinstance(instance, dict) or not isinstance(schema, dict):
        return
    for key, sub in schema.get("properties", {}).items():
        sub = resolve_ref(sub, root)
        if key not in instance and isinstance(sub, dict) and "default" in sub:
            instance[key] = copy.deepcopy(sub["default"])
        if key in instance:
            fill_defaults(instance[key], sub, root)
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        for key, value in instance.items():
            if key not in schema.get("properties", {}):
                fill_defaults(value, extra, root)


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


def check_schema(config: dict, schema: dict, source: str) -> tuple[list[ConfigError], set[tuple]]:
    """Validate ``config`` against the JSON ``schema`` and leave out, in place, what it refuses.

    Parameters
    ----------
    config : dict
        The merged config; what the schema refuses is removed from it (a whole entry of a
        section of names, else the key, whose default then fills in), so that the other checks
        run on the rest.
    schema : dict
        The schema (:func:`schema_dict`).
    source : str
        The file the errors name.

    Returns
    -------
    errors : list of ConfigError
        One per mistake (the deepest first; one per unknown key), each naming ``source`` and
        the key; a key is named once.
    broken : set of tuple
        What was left out: ``(section,)`` or ``(section, name)``.

    Examples
    --------
    >>> config = {"seeds": "x"}
    >>> errors, broken = check_schema(config, {"properties": {"seeds": {"type": "array"}}}, "my.yaml")
    >>> str(errors[0]), broken, config
    ("my.yaml: key seeds: 'x' is a string (expected a list)", {('seeds',)}, {'seeds': []})
    """
    import jsonschema

    validator = jsonschema.validators.validator_for(schema)(schema)
    found = sorted(validator.iter_errors(config), key=_error_rank)
    errors: list[ConfigError] = []
    locations: set[str | None] = set()
    for error in found:
        for err in _config_errors(error, source):
            if err.location not in locations:
                locations.add(err.location)
                errors.append(err)
    broken: set[tuple] = set()
    for error in found:
        _prune(config, error, broken)
    return errors, broken
