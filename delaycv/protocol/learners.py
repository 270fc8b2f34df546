"""Learner specs -> river classifiers; the baselines NoChange and Prior; what kind a spec is.

A spec is a plain dict (from YAML or the command line)::

    {"class": "tree.HoeffdingTreeClassifier", "params": {"grace_period": 100}}
    {"class": "river.forest.ARFClassifier", "params": {"n_models": 10}}
    {"class": "mypackage.models:MyClassifier", "params": {...}}       # custom class
    {"class": "mymodels:encoded_logistic", "params": {"l2": 0.01}}    # a function that returns one
    {"class": "NoChange"}  /  {"class": "Prior"}                       # baselines
    {"pipeline": [{"class": "preprocessing.StandardScaler"},
                  {"class": "linear_model.LogisticRegression"}]}      # composed with |
    {"moa": "trees.HoeffdingTree -g 200"}  /  "moa:trees.HoeffdingTree"   # MOA
    {"class": "imblearn.RandomUnderSampler",
     "params": {"classifier": {"class": "tree.HoeffdingTreeClassifier"},
                "desired_dist": {"0": 0.5, "1": 0.5}}}

A dotted name is looked up under ``river.`` first (the prefix may be omitted), then as an absolute
module path; ``package.module:Class`` imports ``package.module``. A function of one's own that
returns a river classifier is named as a class is, its parameters in ``params`` (the way to write
what a list of steps cannot: a union of steps, such as one-hot encoded text beside scaled
numbers). A parameter value that is itself a
spec (a dict with ``class`` or ``pipeline``) is built recursively, as are lists of specs.
``desired_dist``-style dicts keyed by class keep their keys, but the strings ``"0"``/``"1"`` are
turned into the int labels the engine passes to river.

Seeds: every component whose constructor (or function) takes ``seed`` gets the fold's learner seed unless the
spec sets one.

Baselines (the MOA extension's conventions, with predicted positive iff P(1) > 0.5 and an empty
probability dict read as 0.5):

- ``NoChange`` = ``river.dummy.NoChangeClassifier``: predicts the last label it was trained on,
  negative before any training (MOA's NoChange).
- ``Prior`` (alias ``MajorityClass``) = ``river.dummy.PriorClassifier``: P(1) = share of positive
  training labels; ties and no training give 0.5, i.e. negative (MOA's MajorityClass, first
  maximum wins).

A MOA learner's spec is read by :mod:`delaycv.protocol.moa_spec` (its keys and their values,
without Java); :mod:`delaycv.jvm` builds it. A fold's learner of either kind is made by
:func:`delaycv.engine.learners.make_learner`; here :func:`make_river_learner` makes river's, and
:func:`validate_learner` checks any spec before any work (a river learner built; a MOA spec's keys
and values, MOA checking its command line when the engine builds it).

What the engine asks of a learner (how it is trained, how its ``predict_proba_one`` answer is
read) is :mod:`delaycv.protocol.learner_contract`.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import os
import sys
from collections.abc import Callable
from typing import Any

from delaycv.common.checks import is_number
from delaycv.common.errors import ConfigError
from delaycv.common.words import did_you_mean, one_line
from delaycv.protocol.moa_spec import is_moa_spec, moa_label, moa_spec

BASELINES = {
    "NoChange": "river.dummy.NoChangeClassifier",
    "Prior": "river.dummy.PriorClassifier",
    "MajorityClass": "river.dummy.PriorClassifier",
}
SPEC_KEYS = ("class", "params")
#: What takes a categorical feature, whose values are text, said where a learner cannot
#: (the workflow's check and the fold loop's error): river's OneHotEncoder as a pipeline's first
#: step would encode the numbers too, a column per value.
READS_TEXT = (
    "a learner that reads text itself (river's Hoeffding trees and forests), or the text encoded "
    "first: river's OneHotEncoder encodes every feature it is given, numbers too (a column per "
    "value), so give it the text alone in a function of one's own named as the learner's class "
    "(class: mymodule:make, config/README.md), returning (compose.SelectType(str) | "
    "preprocessing.OneHotEncoder()) + (compose.SelectType(numbers.Number) | "
    "preprocessing.StandardScaler()) | linear_model.LogisticRegression()"
)
#: river's encoders that encode every feature they are given, numbers too: a one-hot column, or
#: a code, per value
ENCODERS_OF_EVERY_FEATURE = ("OneHotEncoder", "OrdinalEncoder")


def encoder_first(model: Any) -> str | None:
    """The name of river's OneHotEncoder or OrdinalEncoder when it is the first step of the
    river pipeline ``model`` (which then encodes the numbers too); None for any other learner
    (an encoder given the text alone, after a ``compose.SelectType(str)``, is no first step)."""
    steps = getattr(model, "steps", None)
    if not isinstance(steps, dict) or not steps:
        return None
    from river import preprocessing  # (a pipeline's first step: river's encoders are known)

    first = next(iter(steps.values()))
    kinds = tuple(getattr(preprocessing, name) for name in ENCODERS_OF_EVERY_FEATURE)
    return type(first).__name__ if isinstance(first, kinds) else None


def learner_encoder_first(spec: Any) -> str | None:
    """:func:`encoder_first` of the river learner that ``spec`` makes (a copy of a spec is
    built, an instance cloned); None for a MOA learner. What the study's checks and each run ask
    before they warn of an encoder given the numbers too (:func:`encoded_numbers_text`)."""
    if is_moa_spec(spec):
        return None
    return encoder_first(
        make_river_learner(spec if is_instance_spec(spec) else copy.deepcopy(spec), 1)
    )


#: What a learner that encodes a stream's text should do instead (:func:`encoded_numbers_text`).
ENCODE_TEXT_ALONE = (
    "the text alone encoded when the numbers are measures such as amounts: "
    "compose.SelectType(str) | preprocessing.OneHotEncoder() beside the numbers, in a function "
    "of one's own named as the learner's class: config/README.md, \"Categorical features\""
)


def encoded_numbers_text(label: str, encoder: str, numbers: str) -> str:
    """Why a learner whose first step is ``encoder`` (:func:`encoder_first`) learns nothing of
    the numeric features ``numbers`` (their names, as the warning shows them); what to do
    instead is :data:`ENCODE_TEXT_ALONE`."""
    return (
        f"the first step of {label}, river's {encoder}, encodes every feature it is given, and "
        f"{numbers} too: each of their values becomes a "
        f"{'feature' if encoder == 'OneHotEncoder' else 'code'} of its own, so that the model "
        "learns nothing of a number's size, nor of a value it has not seen"
    )


_EXPECTED_CLASS = (
    "a river classifier such as tree.HoeffdingTreeClassifier, package.module:Class (or a "
    "function of one's own that returns a classifier), NoChange or Prior"
)


def _import_module(name: str) -> tuple[Any, BaseException | None]:
    """``(module, None)``; ``(None, None)`` where no module ``name`` exists, on Python's path
    or in the working directory (:func:`on_path_or_here`); ``(None, error)`` where it exists and
    fails to import."""

    def attempt() -> tuple[Any, BaseException | None] | None:
        try:
            return importlib.import_module(name), None
        except ModuleNotFoundError as err:
            missing = err.name or ""
            if name == missing or name.startswith(missing + "."):
                return None  # (no such module)
            return None, err  # (it exists, and imports a module that does not)
        except Exception as err:  # (it exists, and fails: a SyntaxError, an error it raises)
            return None, err

    return on_path_or_here(attempt) or (None, None)


def on_path_or_here(find: Callable[[], Any]) -> Any:
    """``find()`` (None: not found) on Python's path, else once more with the working directory
    at the end of ``sys.path`` (as ``python -m`` has it first: a learner's own module beside the
    study, found by the ``delaycv`` command and the workflow's jobs alike)."""
    found = find()
    if found is not None:
        return found
    cwd = os.getcwd()
    if cwd in sys.path or "" in sys.path:
        return None
    sys.path.append(cwd)
    importlib.invalidate_caches()
    return find()


def resolve_class(name: str, *, where: str = "learner") -> Callable[..., Any]:
    """The class (or function that returns a learner) named by ``name`` (see the module
    docstring for the lookup rules); a name that names none says why: no such module, a module
    that fails to import (its error), or a module without that class."""
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(
            f"learner class {name!r} is not a name",
            location=f"key {where}.class",
            expected=_EXPECTED_CLASS,
        )
    if "(" in name:  # tree.HoeffdingTreeClassifier(grace_period=50), as written in Python
        raise ConfigError(
            f"unknown learner {name!r}: a class is named without a call, its parameters apart",
            location=f"key {where}.class",
            expected=f"the class's name alone, {name.partition('(')[0].strip()}, and its "
            "parameters in the spec's params (--param KEY=VALUE for delaycv evaluate)",
        )
    name = BASELINES.get(name, name)
    candidates: list[str] = []
    attr = name
    if ":" in name:
        module_name, _, attr = name.partition(":")
        candidates = [module_name]
    elif "." in name:
        module_name, _, attr = name.rpartition(".")
        candidates = [module_name] if module_name.startswith("river") else []
        candidates += [f"river.{module_name}", module_name]
    failed: tuple[str, BaseException] | None = None
    without: str | None = None
    for module_name in dict.fromkeys(candidates):
        module, error = _import_module(module_name)
        if error is not None:
            failed = failed or (module_name, error)
        elif module is not None:
            found = getattr(module, attr, None)
            if isinstance(found, type) or inspect.isfunction(found):
                return found
            if found is not None and not failed and without is None:
                raise ConfigError(
                    f"unknown learner {name!r}: {module_name}.{attr} is a "
                    f"{type(found).__name__}, not a class or a function",
                    location=f"key {where}.class",
                    expected=_EXPECTED_CLASS,
                )
            without = without or module_name
    why = ""
    if failed is not None:
        message = one_line(str(failed[1]), 200)
        why = f": its module {failed[0]} fails to import ({type(failed[1]).__name__}: {message})"
    elif without is not None:
        why = f": module {without} has no class {attr}" + did_you_mean(
            attr, dir(sys.modules[without])
        )
    elif candidates:
        why = f": no module {candidates[-1]} on Python's path nor in the working directory"
    raise ConfigError(
        f"unknown learner {name!r}{why}", location=f"key {where}.class", expected=_EXPECTED_CLASS
    )


#: Types named in river's annotations (as text: river modules use postponed annotations).
_TYPES = {
    "int": "an integer",
    "float": "a number",
    "str": "a string",
    "bool": "true or false",
    "None": "null",
    "list": "a list",
    "tuple": "a list",
    "dict": "a mapping",
}
#: Ranges of river parameters that river itself does not check (a -5 grace period or a delta of 3
#: would run and mean nothing), by name: the names mean the same in every river classifier.
_RANGES: dict[str, tuple[str, Callable[[float], bool]]] = {
    "grace_period": ("an integer >= 1", lambda v: v >= 1),
    "max_depth": ("an integer >= 1 or null", lambda v: v >= 1),
    "n_models": ("an integer >= 1", lambda v: v >= 1),
    "memory_estimate_period": ("an integer >= 1", lambda v: v >= 1),
    "nb_threshold": ("an integer >= 0", lambda v: v >= 0),
    "delta": ("a confidence in (0, 1)", lambda v: 0 < v < 1),
    "tau": ("a tie threshold >= 0", lambda v: v >= 0),
    "min_branch_fraction": ("a fraction in [0, 1]", lambda v: 0 <= v <= 1),
    "max_share_to_split": ("a fraction in [0, 1]", lambda v: 0 <= v <= 1),
    "max_size": ("a size in MiB > 0", lambda v: v > 0),
    "lambda_value": ("a Poisson rate > 0", lambda v: v > 0),
    "subspace_size": ("a number > 0", lambda v: v > 0),
}
#: String options river replaces by its default with only a printed warning: the class's list.
_CHOICES = {"split_criterion": "_VALID_SPLIT_CRITERIA", "leaf_prediction": "_VALID_LEAF_PREDICTION"}


def _allowed_types(param: inspect.Parameter) -> set[str] | None:
    """The type names a parameter accepts, from its annotation (else its default); None: any."""
    note = param.annotation
    if note is inspect.Parameter.empty:
        default = param.default
        if default is inspect.Parameter.empty or default is None:
            return None
        name = type(default).__name__
        return {name} if name in _TYPES else None
    if not isinstance(note, str):
        note = getattr(note, "__name__", None) if isinstance(note, type) else str(note)
        if note is None:
            return None
    names = {part.strip() for part in note.replace("typing.", "").split("|")}
    names = {"None" if n == "NoneType" else n for n in names}
    return names if names <= set(_TYPES) else None


def _has_type(value: Any, name: str) -> bool:
    if name == "bool":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if name == "int":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if name == "float":
        return isinstance(value, int | float)
    if name == "None":
        return value is None
    if name in ("list", "tuple"):
        return isinstance(value, list | tuple)
    return isinstance(value, {"str": str, "dict": dict}[name])


def _check_value(cls: type, label: str, param: inspect.Parameter, value: Any, key: str) -> None:
    """A parameter value of the wrong type, out of its range or not among the class's options:
    a ConfigError naming the learner and the key (river checks almost none of these itself)."""
    name = param.name
    if _is_spec(value):
        return  # built and checked recursively
    types = _allowed_types(param)
    if types is not None and not any(_has_type(value, t) for t in types):
        raise ConfigError(
            f"{label}: {name}={value!r} has the wrong type",
            location=f"key {key}",
            expected=" or ".join(dict.fromkeys(_TYPES[t] for t in sorted(types))),
        )
    rule = _RANGES.get(name)
    if rule is not None and is_number(value):
        expected, ok = rule
        if value != value or not ok(value):  # NaN is out of every range
            raise ConfigError(
                f"{label}: {name}={value!r} is out of range",
                location=f"key {key}",
                expected=expected,
            )
    options = getattr(cls, _CHOICES.get(name, ""), None) if name in _CHOICES else None
    if isinstance(options, list | tuple) and value not in options:
        raise ConfigError(
            f"{label}: {name}={value!r} is not an option",
            location=f"key {key}",
            expected="one of " + ", ".join(map(str, options)),
        )


def _is_spec(value: Any) -> bool:
    return isinstance(value, dict) and ("class" in value or "pipeline" in value)


def _label_key(key: Any) -> Any:
    if isinstance(key, str) and key in ("0", "1"):
        return int(key)
    return key


def _build_value(value: Any, seed: int | None, where: str) -> Any:
    if _is_spec(value):
        return _build(value, seed, where)
    if isinstance(value, list):
        return [_build_value(v, seed, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {_label_key(k): _build_value(v, seed, f"{where}.{k}") for k, v in value.items()}
    return value


def _build(spec: Any, seed: int | None, where: str) -> Any:
    """The learner of ``spec`` (a pipeline spec or a class with params) at config key
    ``where``, seeded with ``seed`` when its class takes one and the params do not set it."""
    if not isinstance(spec, dict):
        raise ConfigError(
            f"learner spec is {type(spec).__name__}",
            location=f"key {where}",
            expected="a mapping with class (and params) or pipeline",
        )
    if "pipeline" in spec:
        return _build_pipeline(spec, seed, where)
    cls, label, params = _class_and_params(spec, where)
    accepted = _check_params(cls, label, params, where)
    kwargs = {k: _build_value(v, seed, f"{where}.params.{k}") for k, v in params.items()}
    if seed is not None and "seed" in accepted and "seed" not in kwargs:
        kwargs["seed"] = int(seed)
    try:
        return cls(**kwargs)
    except Exception as err:  # show the library's own message, with the learner's name
        raise ConfigError(
            f"{label}({', '.join(f'{k}={v!r}' for k, v in params.items())}): "
            f"{type(err).__name__}: {err}",
            location=f"key {where}.params",
            expected="parameters the learner accepts",
        ) from None


def _build_pipeline(spec: dict, seed: int | None, where: str) -> Any:
    """The river pipeline of a ``pipeline:`` spec: its steps built and composed with ``|``."""
    extra = sorted(set(spec) - {"pipeline"})
    steps = spec["pipeline"]
    if extra or not isinstance(steps, list) or not steps:
        raise ConfigError(
            "bad pipeline spec",
            location=f"key {where}.{extra[0] if extra else 'pipeline'}",
            expected="pipeline: a non-empty list of learner specs, and no other key",
        )
    built = [_build(s, seed, f"{where}.pipeline[{i}]") for i, s in enumerate(steps)]
    model = built[0]
    for step in built[1:]:
        try:
            model = model | step
        except Exception as err:  # river raises various errors for bad compositions
            raise ConfigError(
                f"cannot compose pipeline: {err}",
                location=f"key {where}.pipeline",
                expected="transformers followed by a classifier",
            ) from None
    return model


def _class_and_params(spec: dict, where: str) -> tuple[type, str, dict]:
    """``(class, its name as written, params)`` of a class spec; an unknown key, no class or
    params that are not a mapping is a ConfigError."""
    unknown = sorted(set(spec) - set(SPEC_KEYS))
    if unknown:
        raise ConfigError(
            f"unknown learner key(s) {', '.join(unknown)}",
            location=f"key {where}.{unknown[0]}",
            expected="class, params (or pipeline)",
        )
    if "class" not in spec:
        raise ConfigError(
            "learner spec has no class", location=f"key {where}", expected="class: <name>"
        )
    cls = resolve_class(spec["class"], where=where)
    label = str(spec["class"])
    params = spec.get("params") or {}
    if not isinstance(params, dict):
        raise ConfigError(
            f"params of {label} is {type(params).__name__}",
            location=f"key {where}.params",
            expected="a mapping of parameter names to values",
        )
    return cls, label, params


def _check_params(cls: type, label: str, params: dict, where: str) -> set[str]:
    """The parameter names ``cls`` accepts (empty when its signature cannot be read); a param
    it does not take (unless it takes ``**kwargs``) or a value of the wrong kind is a
    ConfigError."""
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):
        return set()
    accepted: set[str] = set()
    var_kw = False
    for p in signature.parameters.values():
        if p.kind == inspect.Parameter.VAR_KEYWORD:
            var_kw = True
        elif p.kind != inspect.Parameter.VAR_POSITIONAL:
            accepted.add(p.name)
    bad = sorted(k for k in params if k not in accepted)
    if bad and not var_kw:
        raise ConfigError(
            f"{label} has no parameter {', '.join(map(repr, bad))}"
            + (did_you_mean(bad[0], accepted) if len(bad) == 1 else ""),
            location=f"key {where}.params.{bad[0]}",
            expected="one of " + ", ".join(sorted(accepted)) if accepted else "no parameters",
        )
    for name, value in params.items():
        if name in signature.parameters:
            _check_value(cls, label, signature.parameters[name], value, f"{where}.params.{name}")
    _check_required(signature, label, params, where)
    return accepted


def _check_required(signature: inspect.Signature, label: str, params: dict, where: str) -> None:
    """Every parameter ``cls`` requires (no default) is in ``params``; one that takes a learner
    (an ensemble's ``model``, annotated as an estimator) says how a learner is given."""
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    missing = [
        p
        for p in signature.parameters.values()
        if p.kind in keyword and p.default is inspect.Parameter.empty and p.name not in params
    ]
    if not missing:
        return
    names = ", ".join(repr(p.name) for p in missing)
    learners = [p.name for p in missing if _takes_a_learner(p)]
    expected = f"params with {names}"
    if learners:
        name = learners[0]
        expected += (
            f"; a learner is given as a spec of its own: params: {{{name}: "
            f"{{class: tree.HoeffdingTreeClassifier}}}} in a config, "
            f"--param {name}.class=tree.HoeffdingTreeClassifier on the command line"
        )
    raise ConfigError(
        f"{label} requires the parameter{'s' if len(missing) > 1 else ''} {names}",
        location=f"key {where}.params.{missing[0].name}",
        expected=expected,
    )


def _takes_a_learner(parameter: inspect.Parameter) -> bool:
    """Whether a constructor's parameter takes a river estimator (by its annotation: river's
    ensembles annotate ``model`` as ``base.Classifier`` or the like)."""
    annotation = parameter.annotation
    if isinstance(annotation, str):
        return annotation.split(".")[-1] in _ESTIMATOR_ANNOTATIONS
    return getattr(annotation, "__name__", "") in _ESTIMATOR_ANNOTATIONS


#: river's annotations of a parameter that takes an estimator
_ESTIMATOR_ANNOTATIONS = frozenset({"Classifier", "Estimator", "Regressor", "Transformer"})


def is_instance_spec(spec: Any) -> bool:
    """True when ``spec`` is a learner object (a river estimator instance), not a spec."""
    return not isinstance(spec, dict | str) and callable(getattr(spec, "learn_one", None))


def _river_base() -> type | None:
    try:
        from river import base
    except ImportError:  # pragma: no cover - river is a dependency
        return None
    return base.Base


def seeded_clone(model: Any, seed: int | None) -> Any:
    """A fresh, untrained copy of a river estimator instance with ``seed``; ``model`` is untouched.

    As for a spec: every component whose constructor takes ``seed`` gets ``seed``, unless the
    instance set it (a seed other than the class's default); nested estimators (parameters whose
    value is an estimator or a list of estimators, the steps of a pipeline or union) are cloned
    the same way, recursively. Objects that are not river estimators are deep-copied as they are.
    The instance is deep-copied first, so that a ``clone`` with side effects on its original
    (river's random splitters draw from their own generator) leaves ``model`` as it was.
    """
    return _seeded_clone(copy.deepcopy(model), seed)


def _seeded_clone(model: Any, seed: int | None) -> Any:
    base = _river_base()
    if base is None or not isinstance(model, base) or not callable(getattr(model, "clone", None)):
        return model
    parts = getattr(model, "steps", None)
    if parts is None:
        parts = getattr(model, "transformers", None)
    if isinstance(parts, dict) and parts and all(isinstance(v, base) for v in parts.values()):
        # compose.Pipeline / compose.TransformerUnion: a step given as an estimator is used as is
        return model.clone({name: _seeded_clone(step, seed) for name, step in parts.items()})
    try:
        params = inspect.signature(type(model)).parameters
    except (TypeError, ValueError):
        return model.clone()
    new: dict[str, Any] = {}
    for name, param in params.items():
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        value = getattr(model, name, None)
        if isinstance(value, base):
            new[name] = _seeded_clone(value, seed)
        elif isinstance(value, list | tuple) and any(isinstance(v, base) for v in value):
            new[name] = type(value)(_seeded_clone(v, seed) for v in value)
    if (
        seed is not None
        and "seed" in params
        and getattr(model, "seed", None) == params["seed"].default
    ):
        new["seed"] = int(seed)
    return model.clone(new)


def make_river_learner(
    spec: dict | str | Any, seed: int | None = None, *, where: str = "learner"
) -> Any:
    """Build a fresh river learner from ``spec`` (a dict, a class name string, or a river
    estimator instance, see :func:`seeded_clone`) with ``seed``.

    Raises :class:`~delaycv.common.errors.ConfigError` for an unknown class, unknown or bad parameters
    (with river's message and the learner's name), an object that is not a classifier, or a MOA
    learner's spec (:func:`delaycv.engine.learners.make_learner` makes a learner of any kind).
    """
    if is_moa_spec(spec):
        raise ConfigError(
            f"{moa_label(spec)} is a MOA learner",
            location=f"key {where}",
            expected="a river learner here (delaycv.engine.learners.make_learner makes both)",
        )
    if isinstance(spec, str):
        spec = {"class": spec}
    if is_instance_spec(spec):
        try:
            model = seeded_clone(spec, seed)
        except Exception as err:  # a clone that fails: name the model
            raise ConfigError(
                f"cannot clone {type(spec).__name__}: {type(err).__name__}: {err}",
                location=f"key {where}",
                expected="a river estimator (its clone() rebuilds it from its parameters)",
            ) from None
    else:
        model = _build(spec, seed, where)
    for method in ("predict_proba_one", "learn_one"):
        if not callable(getattr(model, method, None)):
            raise ConfigError(
                f"{type(model).__name__} has no {method}: it is not a classifier",
                location=f"key {where}",
                expected=_EXPECTED_CLASS,
            )
    return model


def takes_run_seed(spec: dict | str | Any, where: str = "learner", one: Any = None) -> bool:
    """Whether a river learner's runs depend on the run's seed: built with seeds 1 (``one``,
    when given: the spec's learner with seed 1) and 2, its parameters differ (a component whose
    class takes ``seed``, which the spec does not set). A learner that does not (a Hoeffding
    tree, a spec that sets ``seed`` itself) gives the same evaluation under every seed that
    shares the folds."""
    if one is None:
        one = make_river_learner(copy.deepcopy(spec), 1, where=where)
    two = make_river_learner(copy.deepcopy(spec), 2, where=where)
    params = getattr(one, "_get_params", None)
    return not callable(params) or params() != two._get_params()


def for_stream(
    learner: Any,
    features: list[str],
    *,
    own_loop: bool = True,
    categories: Callable[[], dict[str, tuple[str, ...]]] | None = None,
) -> Callable[[Any], list] | None:
    """Tell ``learner`` the stream's feature names and the values of its categorical features
    (``categories()``, asked only here: :meth:`~delaycv.data.stream.Stream.categories`), if it
    asks for them (``bind_features``: a MOA learner's header); return its record encoder
    (``encode_records(chunk)``: the instances of a :class:`~delaycv.data.stream.StreamChunk`
    that it takes instead of river's x dicts, made once per chunk for every fold), or None.
    ``own_loop=False``: the caller calls ``predict_proba_one`` and ``learn_one``, so a learner
    with a loop of its own (``run_rows``: a MOA learner's Java loop) is told not to use it, and
    its instances are Python objects."""
    if not own_loop and getattr(learner, "run_rows", None) is not None:
        learner.run_rows = None
    bind = getattr(learner, "bind_features", None)
    if callable(bind):
        bind(features, {} if categories is None else categories())
    encode = getattr(learner, "encode_records", None)
    return encode if callable(encode) else None


def validate_learner(spec: dict | str | Any, *, where: str = "learner") -> Any:
    """Check a spec before any work and return it: a river learner is built (the class exists,
    the parameters are accepted); a MOA learner's spec is read into its normal form
    (:func:`~delaycv.protocol.moa_spec.moa_spec`: its keys and their values; MOA checks its
    command line when :mod:`delaycv.jvm` builds it, which needs a JVM)."""
    if is_moa_spec(spec):
        return moa_spec(spec, where)
    make_river_learner(spec if is_instance_spec(spec) else copy.deepcopy(spec), 0, where=where)
    return spec


def learner_label(spec: dict | str | Any) -> str:
    """A short name for a spec: the class name, or ``A|B`` for a pipeline (also for instances)."""
    if is_moa_spec(spec):
        return moa_label(spec)
    if is_instance_spec(spec):
        steps = getattr(spec, "steps", None)
        if isinstance(steps, dict) and steps:
            return "|".join(learner_label(step) for step in steps.values())
        return type(spec).__name__
    if isinstance(spec, str):
        spec = {"class": spec}
    if "pipeline" in spec:
        return "|".join(learner_label(s) for s in spec["pipeline"])
    name = BASELINES.get(spec.get("class", "?"))
    if name is not None:
        return spec["class"]
    return str(spec.get("class", "?")).split(":")[-1].split(".")[-1]
