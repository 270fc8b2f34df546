"""The workflow configuration: load, validate with the JSON schema, fill defaults, expand grids.

The config file the user names is the whole study: the workflow loads ``config.yaml`` only when no
``--configfile`` is given, and keys a file leaves out take the schema's defaults, never the values
of another file. The Snakefile calls :func:`load_study` when it loads; the rule scripts use the
small helpers below (:func:`learner_spec`, :func:`policy_spec`, :func:`validation_spec`, ...) to
turn the validated config into the arguments of the library. Errors are
:class:`delaycv.errors.ConfigError` naming the file where the key was written and the key, e.g.
``my.yaml: key learners.ht.params: 3 is an integer (expected a mapping ...)``.

Every mistake is reported when the config loads, before any job runs: the schema (names, types,
required keys), then what the schema cannot say: each learner is built once (its class exists, river
accepts its parameters), each policy is built, presets and column mappings are known, the
metrics of ``tests`` and ``figures`` exist, and (given the working directory) every dataset file
exists, a ``.parquet`` one being a canonical stream (as ``delaycv convert`` writes it), used as it
is. An effort-aware metric (:data:`delaycv.metrics.effort_names.EFFORT_METRICS`) needs every
dataset to have an effort: a generated one unless ``effort: null``, a raw one when its ``effort``
(or its mapping's, or its preset's) names columns, a ``.parquet`` one when its file has one.

Policy grids expand to one named policy per combination, named as :mod:`delaycv.policies` names
presets::

    policy_grids: {hitl: {preset: hitl, pos_window: [1d, 3d], neg_window: [15d, 90d]}}
    # -> hitl_1d_15d, hitl_1d_90d, hitl_3d_15d, hitl_3d_90d

The code digests that decide which stages rerun are in :mod:`delaycv.digests`.
"""

from __future__ import annotations

import copy
import difflib
import functools
import itertools
import os
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from delaycv import defaults
from delaycv.errors import ConfigError, InputError

#: the schema beside the package in a checkout (workflow/schemas/config.schema.yaml)
SCHEMA_PATH = Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml"

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


def read_yaml(path: str | os.PathLike, *, expected: str = "a YAML document") -> Any:
    """The content of a YAML file, read strictly: a syntax error names its line and column, a
    duplicate key of a mapping (which YAML would silently resolve to the last value) names its
    line and the key, and an empty file (nothing but blanks and comments) is an error saying
    ``expected``. Errors are :class:`ConfigError` naming the file."""
    text = _read_text(path, str(path))
    return parse_yaml(text, path=str(path), expected=expected)


def parse_yaml(text: str, *, path: str, expected: str = "a YAML document") -> Any:
    """:func:`read_yaml` of the text of the file ``path``."""
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise ConfigError("the file is empty", path=path, expected=expected)
        _check_unique_keys(loader, node, path)
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        location = None if mark is None else f"line {mark.line + 1}, column {mark.column + 1}"
        problem = err.problem or err.context or "unreadable"
        context = ""
        if err.context and err.context_mark is not None and err.problem:
            start = err.context_mark
            context = f" ({err.context} at line {start.line + 1}, column {start.column + 1})"
        raise ConfigError(
            f"not valid YAML: {problem}{context}", path=path, location=location
        ) from None
    except yaml.YAMLError as err:
        raise ConfigError(f"not valid YAML: {err}", path=path) from None
    finally:
        loader.dispose()


def _check_unique_keys(loader, node, path: str, where: str = "", seen=None) -> None:
    """Raise :class:`ConfigError` at the first mapping key (in file order) given twice, naming
    its line and its dotted key."""
    import yaml

    seen = set() if seen is None else seen
    if id(node) in seen:  # an alias of a node already checked
        return
    seen.add(id(node))
    if isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _check_unique_keys(loader, item, path, f"{where}.{i}" if where else str(i), seen)
    elif isinstance(node, yaml.MappingNode):
        first: dict[Any, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # <<: *base, overridden on purpose
                continue
            key = loader.construct_object(key_node, deep=True)
            name = f"{where}.{key}" if where else str(key)
            line = key_node.start_mark.line + 1
            try:
                if key in first:
                    raise ConfigError(
                        f"duplicate key {name} (first given on line {first[key]})",
                        path=path,
                        location=f"line {line}",
                        expected="each key once in a mapping",
                    )
                first[key] = line
            except TypeError:  # an unhashable key: the constructor says so
                pass
            _check_unique_keys(loader, value_node, path, name, seen)


@functools.lru_cache(maxsize=4)
def _schema(path: str) -> dict:
    schema = read_yaml(path)
    if not isinstance(schema, dict):
        raise ConfigError("the schema is not a mapping", path=path)
    return schema


def load_config(
    source: str | os.PathLike | Mapping,
    *,
    schema: str | os.PathLike | None = None,
    name: str | None = None,
    cwd: str | os.PathLike | None = None,
    learners: bool = True,
) -> dict:
    """Read (if ``source`` is a path) and validate a workflow config; see :func:`validate_config`."""
    if isinstance(source, Mapping):
        config, name = source, name or "config"
    else:
        config, name = read_yaml(source, expected=STUDY_EXPECTED), name or str(source)
    return validate_config(config, schema=schema, source=name, cwd=cwd, learners=learners)


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

    The files are merged in order (a later file's key wins; mappings merge key by key, as Snakemake
    merges several ``--configfile``), then ``overrides`` (Snakemake's ``--config key=value``).
    ``config`` is the merged result when the caller already has it (Snakemake's ``config``);
    otherwise it is merged here. An error names the file in which its key was written (the last
    file when no file has the key, e.g. a missing key). See :func:`validate_config`.
    """
    if not files:
        raise ConfigError("no config file", expected="a config file (snakemake --configfile FILE)")
    layers: list[tuple[str, Any]] = [
        (_shown(f), parse_yaml(_read_text(f, _shown(f)), path=_shown(f), expected=STUDY_EXPECTED))
        for f in files
    ]
    for shown, content in layers:
        if not isinstance(content, Mapping):
            raise ConfigError(
                "the config is " + ("null" if content is None else f"a {type(content).__name__}"),
                path=shown,
                expected=STUDY_EXPECTED,
            )
    if overrides:
        layers.append(("--config", dict(overrides)))
    if config is None:
        config = {}
        for _, content in layers:
            _merge(config, content or {})
    last = _shown(files[-1])
    try:
        return validate_config(config, schema=schema, source=last, cwd=cwd, learners=learners)
    except ConfigError as err:
        if err.path != last or not (err.location or "").startswith("key "):
            raise
        origin = _origin(layers, err.location[len("key ") :], default=last)
        raise ConfigError(
            err.message, path=origin, location=err.location, expected=err.expected
        ) from None


def _read_text(path: str | os.PathLike, shown: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"cannot read the file: {err.strerror}", path=shown) from err
    except UnicodeDecodeError as err:
        raise ConfigError(f"not UTF-8 text (byte {err.start})", path=shown) from None


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


def _origin(layers: Sequence[tuple[str, Any]], key: str, *, default: str) -> str:
    """The layer that wrote the deepest part of ``key`` (the later layer on a tie)."""
    parts = re.sub(r"\[(\d+)\]", r".\1", key).split(".")
    best, depth = default, 0
    for name, content in layers:
        found = _depth(content, parts)
        if found and found >= depth:
            best, depth = name, found
    return best


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
    """Return a validated copy of ``config`` with defaults filled in and policy grids expanded.

    The returned config's ``policies`` holds every policy (explicit ones and grid ones, each with
    its ``name``); ``policy_grids`` is kept as written. Raises :class:`ConfigError` naming the key.
    Policies, presets, mappings and metric names are checked too; learners are built once unless
    ``learners`` is false (importing river takes seconds); dataset files are checked when
    ``cwd`` (the directory their paths are relative to) is given.
    """
    import jsonschema

    if config is None:
        config = {}
    if not isinstance(config, Mapping):
        raise ConfigError(
            f"the config is a {type(config).__name__}", path=source, expected="a mapping of keys"
        )
    config = _coerce_booleans(copy.deepcopy(dict(config)))
    schema_path = str(schema or SCHEMA_PATH)
    schema_dict = _with_presets(_schema(schema_path), schema_path)
    validator_cls = jsonschema.validators.validator_for(schema_dict)
    validator = validator_cls(schema_dict)
    errors = sorted(validator.iter_errors(config), key=_error_rank)
    if errors:
        raise _config_error(errors[0], source)
    _fill_defaults(config, schema_dict, schema_dict)
    _check_semantics(config, source)
    config["policies"] = _all_policies(config, source)
    _resolve_contrasts(config, source)
    _resolve_folders(config, source)
    _check_objects(config, source, cwd, learners)
    return config


def _with_presets(schema: dict, path: str) -> dict:
    """A copy of ``schema`` whose policy ``preset`` and policy grid ``preset`` take the label-policy
    presets (:data:`delaycv.policies.PRESETS`; a grid's: those with windows), which the schema
    file does not list."""
    from delaycv.policies import PRESETS

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


def _config_error(error, source: str) -> ConfigError:
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
        expected = expected or "this key to be given"
    elif validator == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        unknown = sorted(set(value) - set(allowed)) if isinstance(value, dict) else []
        if unknown:
            path = [*path, unknown[0]]
        message = "unknown key"
        expected = "one of " + ", ".join(allowed) if allowed else expected
    elif validator == "type":
        message = f"{value!r} is {_describe_type(_json_type(value))}"
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
    return ConfigError(message, path=source, location=f"key {_key(path)}", expected=expected)


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


def _check_semantics(config: dict, source: str) -> None:
    """What the schema cannot say: exactly-one-of keys, names that must exist, estimator options."""
    for name, dataset in config["datasets"].items():
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
            if dataset.get("effort", None) is not None:
                raise ConfigError(
                    f"a generated stream's effort is la + ld, not {dataset['effort']!r}",
                    path=source,
                    location=f"key datasets.{name}.effort",
                    expected="effort: null (a stream without effort), or no effort key (la + ld)",
                )
    for name, spec in config["learners"].items():
        _check_learner(spec, f"learners.{name}", source)
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
    figures = config["figures"]
    if "learner" in figures and figures["learner"] not in config["learners"]:
        raise ConfigError(
            f"no learner named {figures['learner']!r}",
            path=source,
            location="key figures.learner",
            expected="one of " + ", ".join(config["learners"]),
        )


def _check_learner(spec: dict, key: str, source: str) -> None:
    kinds = [k for k in ("class", "pipeline") if k in spec]
    if len(kinds) != 1:
        raise ConfigError(
            "a learner spec needs exactly one of class and pipeline",
            path=source,
            location=f"key {key}",
            expected="{class: <river class>, params: {...}} or {pipeline: [spec, ...]}",
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


def _check_objects(
    config: dict, source: str, cwd: str | os.PathLike | None, learners: bool
) -> None:
    """Build once what the jobs build, so that a mistake stops the workflow before any job runs."""
    if learners:
        for name, spec in config["learners"].items():
            _check_learner_runs(name, spec, source)
    efforts = {}
    for name, dataset in config["datasets"].items():
        if "path" in dataset:
            efforts[name] = _check_dataset_file(name, dataset, source, cwd)
        else:  # generated: la + ld, unless effort: null
            efforts[name] = "effort" not in dataset
    _check_metrics(config, source, efforts)


#: two numeric instances on which each learner predicts and learns once at load time
_FIRST_INSTANCES = (({"a": 0.0, "b": 1.0}, 0), ({"a": 1.0, "b": 0.5}, 1))


def _check_learner_runs(name: str, spec: dict, source: str) -> None:
    """Build the learner (its class exists, river accepts its parameters), then let it predict and
    learn two numeric instances: river checks few parameter types when it builds a learner, and
    a value of the wrong type (``grace_period: "200"``) fails on its first instance."""
    from delaycv.learners import learner_label, make_learner

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
    if cwd is not None and not (Path(cwd) / path).is_file():
        raise ConfigError(
            f"no such file {path!r}",
            path=source,
            location=f"key {key}.path",
            expected=f"an existing file; paths are relative to the working directory {cwd}",
        )
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
        from delaycv.stream import check_stream_file, has_effort

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
    from delaycv.mapping import PRESETS, effort_columns
    from delaycv.mapping import Mapping as ColumnMapping

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


def _check_metrics(config: dict, source: str, efforts: Mapping[str, bool | None]) -> None:
    """The metrics named (``tests.metrics``, which the contrasts and rankings use too, and
    ``figures.metric``) exist; an effort-aware one needs every dataset to have an effort
    (``efforts``: dataset -> has one; None: not known here)."""
    from delaycv.metrics import METRICS
    from delaycv.metrics.effort_names import EFFORT_METRICS

    known = [*METRICS, *EFFORT_METRICS]
    named = [(f"tests.metrics.{i}", m) for i, m in enumerate(config["tests"]["metrics"])]
    named.append(("figures.metric", config["figures"]["metric"]))
    for key, metric in named:
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


# --------------------------------------------------------------------------- policies


def policy_name(spec: Mapping, *, where: str = "policy") -> str:
    """The name :func:`delaycv.policies.make_policy` gives a spec: ``ideal``, ``delay_7d``,
    ``verification_90d``, ``hitl_7d_90d`` (or the spec's own ``name``)."""
    from delaycv.policies import make_policy

    return make_policy(dict(spec), where=where).name


def _check_policy(name: str, spec: Mapping, *, where: str) -> None:
    """Build the policy ``name`` of the config; a name that reads as a preset name
    (``hitl_7d_90d``) must say what the spec says (the figures' windows come from the spec)."""
    from delaycv.policies import check_policy_name, make_policy

    policy = make_policy({k: v for k, v in spec.items() if k != "name"}, where=where)
    check_policy_name(name, policy, location=f"key {where}")


def _grid_lists(preset: str, *, where: str = "policy_grids") -> list[str]:
    """The keys of a policy grid's window lists: the windows of the preset
    (:attr:`delaycv.policies.PolicyPreset.windows`), e.g. ``pos_window`` and ``neg_window``."""
    from delaycv.policies import PRESETS, lookup_preset

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


def _all_policies(config: dict, source: str) -> dict[str, dict]:
    from delaycv.policies import WINDOW_SIDES

    policies: dict[str, dict] = {}
    for name, spec in config["policies"].items():
        _with_source(_check_policy, name, spec, where=f"policies.{name}", source=source)
        policies[name] = {**spec}
    for grid_name, grid in config["policy_grids"].items():
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
            if name in policies:
                raise ConfigError(
                    f"policy {name!r} is defined twice",
                    path=source,
                    location=f"key policy_grids.{grid_name}",
                    expected="policy names that differ",
                )
            policies[name] = spec
    if not policies:
        raise ConfigError(
            "no policy",
            path=source,
            location="key policies",
            expected="at least one policy in policies or policy_grids",
        )
    return policies


def _resolve_contrasts(config: dict, source: str) -> None:
    """``contrasts.reference``: the policy every other policy is contrasted with. Left out, it is
    ``ideal`` when the study has a policy of that name, else none (no contrasts); ``null`` turns
    the contrasts off; a name that is not one of the study's policies is an error."""
    contrasts = config.setdefault("contrasts", {})
    if "reference" not in contrasts:
        default = defaults.CONTRAST_REFERENCE
        contrasts["reference"] = default if default in config["policies"] else None
    reference = contrasts["reference"]
    if reference is not None and reference not in config["policies"]:
        raise ConfigError(
            f"no policy named {reference!r} to contrast the other policies with",
            path=source,
            location="key contrasts.reference",
            expected="one of the study's policies ("
            + ", ".join(config["policies"])
            + "), or null for no contrasts",
        )


def _resolve_folders(config: dict, source: str) -> None:
    """``results`` (the study's tables and figures) and ``runs`` (the run directories; left out,
    ``<results>/runs``). Both are relative folders of the working directory: an absolute path or
    one that climbs out of it (``..``) would put outputs where a rerun or ``make clean-results``
    does not look, and the two may not be the same folder."""
    config["results"] = posixpath.normpath(str(config["results"]))
    config.setdefault("runs", posixpath.join(config["results"], "runs"))
    config["runs"] = posixpath.normpath(str(config["runs"]))
    for key in ("results", "runs"):
        parts = Path(config[key]).parts
        if Path(config[key]).is_absolute() or ".." in parts:
            raise ConfigError(
                f"{config[key]!r} is not a folder inside the working directory",
                path=source,
                location=f"key {key}",
                expected="a relative path without '..', such as results/my-study",
            )
    if config["results"] == config["runs"]:
        raise ConfigError(
            "the run directories and the study's tables would share one folder",
            path=source,
            location="key runs",
            expected=f"a folder other than results ({config['results']}), e.g. "
            f"{config['results']}/runs",
        )


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
    return _get(config, "learners", name)


def policy_spec(config: Mapping, name: str) -> dict:
    """The policy's spec as :func:`delaycv.policies.make_policy` takes it, with its name."""
    spec = _get(config, "policies", name)
    spec["name"] = name
    return spec


def validation_spec(config: Mapping) -> dict:
    """Keyword arguments of :class:`delaycv.validation.Validation`."""
    return dict(config["validation"])


def estimator_spec(config: Mapping) -> dict:
    """The estimator as a plain dict (``kind`` ``sliding`` for the alias ``window``)."""
    est = dict(config["estimator"])
    if est["kind"] == "window":
        est["kind"] = "sliding"
    return est


def evaluation_options(config: Mapping) -> dict:
    """Keywords of :func:`delaycv.settings.make_settings` from ``evaluation`` and ``checkpoints``."""
    return {**config["evaluation"], "every": int(config["checkpoints"]["every"])}
