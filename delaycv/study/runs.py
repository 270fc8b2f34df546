"""The runs of a validated study, and what the workflow's rules read of it for each run.

A study runs every (dataset, learner, seed, policy) (:func:`runs`); the rules pass each run's
specs to its job (:func:`dataset_spec`, :func:`learner_spec`, :func:`policy_spec`,
:func:`validation_spec`, :func:`estimator_spec`, :func:`effort_scope_spec`,
:func:`evaluation_options`), and a ``runs``
folder shared by studies keys each run directory by the digest of its settings
(:func:`run_settings`, :func:`run_key`), as a converted stream is keyed by its dataset's spec
(:func:`stream_key`).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from delaycv.common import defaults as _defaults
from delaycv.common.choices import DEPRECATED_ESTIMATORS
from delaycv.common.errors import ConfigError


@dataclass(frozen=True, order=True)
class Run:
    """The keys of one evaluation: one evaluate job, one run directory."""

    dataset: str
    learner: str
    seed: int
    policy: str


def runs(config: Mapping) -> list[Run]:
    """Every evaluation of a validated study, in config order.

    Parameters
    ----------
    config : Mapping
        A validated study (:func:`delaycv.study.loading.load_study`).

    Returns
    -------
    list of Run
        One per (dataset, learner, seed, policy), the policy varying fastest.

    Examples
    --------
    >>> study = {"datasets": {"d": {}}, "learners": {"l": {}}, "seeds": [1, 2], "policies": {"p": {}}}
    >>> runs(study)
    [Run(dataset='d', learner='l', seed=1, policy='p'), Run(dataset='d', learner='l', seed=2, policy='p')]
    """
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
    """The spec of the dataset ``name`` (a copy).

    Parameters
    ----------
    config : Mapping
        A validated study.
    name : str
        One of its datasets.

    Returns
    -------
    dict
        Its spec as the config gives it.

    Raises
    ------
    ConfigError
        The study has no dataset of that name.

    Examples
    --------
    >>> dataset_spec({"datasets": {"d": {"generate": {"rows": 10}}}}, "d")
    {'generate': {'rows': 10}}
    """
    return _get(config, "datasets", name)


def learner_spec(config: Mapping, name: str) -> dict:
    """The spec of the learner ``name`` (a copy).

    Parameters
    ----------
    config : Mapping
        A validated study.
    name : str
        One of its learners.

    Returns
    -------
    dict
        Its spec; a MOA learner's in its normal form, its command line's white space collapsed
        (the same meaning, the same job: :func:`delaycv.protocol.moa_spec.moa_spec`).

    Examples
    --------
    >>> learner_spec({"learners": {"nb": {"class": "naive_bayes.GaussianNB"}}}, "nb")
    {'class': 'naive_bayes.GaussianNB'}
    """
    spec = _get(config, "learners", name)
    if "moa" in spec:
        from delaycv.protocol.moa_spec import moa_spec

        spec = moa_spec(spec, f"learners.{name}")
    return spec


def policy_spec(config: Mapping, name: str) -> dict:
    """The spec of the policy ``name`` as :func:`delaycv.protocol.policies.make_policy` takes it.

    Parameters
    ----------
    config : Mapping
        A validated study (its policies expanded).
    name : str
        One of its policies.

    Returns
    -------
    dict
        Its spec, with its ``name``.

    Examples
    --------
    >>> policy_spec({"policies": {"d7": {"preset": "delay", "window": "7d"}}}, "d7")
    {'preset': 'delay', 'window': '7d', 'name': 'd7'}
    """
    spec = _get(config, "policies", name)
    spec["name"] = name
    return spec


def validation_spec(config: Mapping) -> dict:
    """The study's validation, as keyword arguments of :class:`delaycv.protocol.validation.Validation`.

    Parameters
    ----------
    config : Mapping
        A validated study.

    Returns
    -------
    dict

    Examples
    --------
    >>> validation_spec({"validation": {"scheme": "prequential", "folds": 1}})
    {'scheme': 'prequential', 'folds': 1}
    """
    return dict(config["validation"])


def estimator_spec(config: Mapping) -> dict:
    """The study's estimator as a plain dict (:func:`delaycv.metrics.make_estimator` takes it).

    Parameters
    ----------
    config : Mapping
        A validated study.

    Returns
    -------
    dict
        ``kind`` and its parameter; the deprecated kind ``window`` is ``sliding``.

    Examples
    --------
    >>> estimator_spec({"estimator": {"kind": "window", "width": 100}})
    {'kind': 'sliding', 'width': 100}
    """
    est = dict(config["estimator"])
    est["kind"] = DEPRECATED_ESTIMATORS.get(est["kind"], est["kind"])
    return est


def effort_scope_spec(config: Mapping) -> dict:
    """The study's effort scope as a plain dict
    (:func:`delaycv.metrics.effort_scope.make_effort_scope` takes it).

    Parameters
    ----------
    config : Mapping
        A validated study.

    Returns
    -------
    dict
        ``kind`` and, for ``sliding``, its ``width``.

    Examples
    --------
    >>> effort_scope_spec({"effort_scope": {"kind": "sliding"}})
    {'kind': 'sliding', 'width': 1000}
    >>> effort_scope_spec({"effort_scope": {"kind": "cumulative"}})
    {'kind': 'cumulative'}
    """
    spec = dict(config["effort_scope"])
    parameter = _defaults.EFFORT_SCOPE_PARAMS[spec["kind"]]
    if parameter is not None:
        spec.setdefault(*parameter)
    return spec


def evaluation_options(config: Mapping) -> dict:
    """Keywords of :func:`delaycv.protocol.settings.make_settings` from ``evaluation`` and ``checkpoints``.

    Parameters
    ----------
    config : Mapping
        A validated study.

    Returns
    -------
    dict
        The ``evaluation`` keys, and ``every`` (the checkpoints' interval).

    Examples
    --------
    >>> evaluation_options({"evaluation": {"threshold": 0.5}, "checkpoints": {"every": 500}})
    {'threshold': 0.5, 'every': 500}
    """
    return {**config["evaluation"], "every": int(config["checkpoints"]["every"])}


def run_settings(config: Mapping, dataset: str, learner: str, policy: str) -> dict:
    """Everything that decides the numbers of the runs of (``dataset``, ``learner``, ``policy``).

    Parameters
    ----------
    config : Mapping
        A validated study.
    dataset, learner, policy : str
        The run's names (whatever the seed).

    Returns
    -------
    dict
        The dataset's, learner's and policy's specs, the validation, the estimator, the
        effort scope and the evaluation's options (checkpoints included).
    """
    return {
        "dataset": dataset_spec(config, dataset),
        "learner": learner_spec(config, learner),
        "policy": policy_spec(config, policy),
        "validation": validation_spec(config),
        "estimator": estimator_spec(config),
        "effort_scope": effort_scope_spec(config),
        "options": evaluation_options(config),
    }


#: the length of a run's settings key (hex digits of SHA-256)
RUN_KEY_LENGTH = 12


def run_key(config: Mapping, dataset: str, learner: str, policy: str) -> str:
    """The short digest of :func:`run_settings`, the last folder of a run directory in a shared ``runs``.

    Studies may share a ``runs`` folder (``<runs>/{dataset}/{learner}/seed{seed}/{policy}/{key}``):
    two studies with other settings for the same names never write one run directory.

    Parameters
    ----------
    config : Mapping
        A validated study.
    dataset, learner, policy : str
        The run's names.

    Returns
    -------
    str
        :data:`RUN_KEY_LENGTH` hex digits of the SHA-256 of the settings' canonical JSON.
    """
    return _short_digest(run_settings(config, dataset, learner, policy))


def stream_key(config: Mapping, dataset: str) -> str:
    """The short digest of a dataset's spec, the file name of its converted stream.

    The workflow writes a converted dataset to ``resources/generated/streams/{dataset}/{key}.parquet``:
    two studies of one checkout that give one dataset name two sources (another file, preset,
    mapping or generator seed) never write one stream file, and two that give it the same spec
    share the file (and so the runs of a shared ``runs`` folder).

    Parameters
    ----------
    config : Mapping
        A validated study.
    dataset : str
        One of its datasets.

    Returns
    -------
    str
        :data:`RUN_KEY_LENGTH` hex digits of the SHA-256 of the spec's canonical JSON.

    Examples
    --------
    >>> one = {"datasets": {"d": {"generate": {"rows": 10, "seed": 1}}}}
    >>> other = {"datasets": {"d": {"generate": {"seed": 2, "rows": 10}}}}
    >>> key = stream_key(one, "d")
    >>> len(key), key == stream_key(other, "d")
    (12, False)
    """
    return _short_digest(dataset_spec(config, dataset))


def _short_digest(value: Any) -> str:
    """:data:`RUN_KEY_LENGTH` hex digits of the SHA-256 of ``value``'s :func:`canonical_json`."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()[:RUN_KEY_LENGTH]


def canonical_json(value: Any) -> str:
    """``value`` as JSON that changes only when the value does (keys sorted, no spaces).

    Parameters
    ----------
    value : Any
        A JSON-like value (what JSON cannot hold is written as its ``str``).

    Returns
    -------
    str

    Examples
    --------
    >>> canonical_json({"b": 1, "a": [1.5, None]})
    '{"a":[1.5,null],"b":1}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
