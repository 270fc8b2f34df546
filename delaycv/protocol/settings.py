"""What one evaluation run is: :class:`RunSettings`, built and checked once by :func:`make_settings`.

The command line (``delaycv evaluate``), the Python API (:func:`delaycv.evaluate`) and the
workflow's evaluate jobs each turn what they are given into one ``RunSettings`` and hand it whole to
the engine (:func:`delaycv.engine.evaluate`); ``run.json`` records it (:meth:`RunSettings.record`).
Every value is checked here, once, before any work: a bad one is a
:class:`~delaycv.common.errors.ConfigError` naming its key (``key threshold``, ``key policy.window``), which
the command line reports as the option that set it.

>>> settings = make_settings(
...     learner="tree.HoeffdingTreeClassifier",
...     policy={"preset": "hitl", "pos_window": "7d", "neg_window": "90d"},
...     validation={"scheme": "bootstrap", "folds": 5},
... )
>>> settings.policy.name, settings.validation.folds, settings.estimator.kind, settings.every
('hitl_7d_90d', 5, 'fading', 500)
>>> settings.folds
(0, 1, 2, 3, 4)
>>> make_settings(learner="tree.HoeffdingTreeClassifier", threshold=1.5)
Traceback (most recent call last):
...
delaycv.common.errors.ConfigError: key threshold: threshold 1.5 (expected a number in [0.0, 1.0])

The module is pure: it opens no file.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from delaycv.common import defaults as _defaults
from delaycv.common.bounds import check_size
from delaycv.common.checks import check_flag, check_name, check_seed, is_integer, is_number
from delaycv.common.errors import ConfigError
from delaycv.protocol.checkpoints import CHECKPOINT_KINDS, check_checkpoint_values

#: Keys of ``run_keys`` a run may name itself (``seed`` is always the run seed).
NAMED_KEYS = ("dataset", "learner", "policy")
#: How :meth:`RunSettings.record` writes the fields that hold objects, and what it leaves out.
_AS_SPEC = {
    "policy": lambda policy: policy.spec(),
    "validation": lambda validation: dict(validation.__dict__),
    "estimator": lambda estimator: estimator.describe(),
    "effort_scope": lambda scope: scope.describe(),
}
_NOT_RECORDED = ("jobs",)
#: Keys of a checkpoint spec beyond ``every`` (:func:`delaycv.engine.checkpoint_positions`).
CHECKPOINT_KEYS = (*CHECKPOINT_KINDS, "every")


@dataclass(frozen=True)
class RunSettings:
    """One evaluation run, checked (:func:`make_settings` builds it).

    Parameters
    ----------
    learner : dict, str or river estimator
        The learner spec (:mod:`delaycv.protocol.learners`), or a river instance (each fold gets a seeded
        clone).
    policy : delaycv.protocol.policies.Policy
        The label policy, built once.
    validation : delaycv.protocol.validation.Validation
        The validation scheme and its folds.
    estimator : Estimator
        The metrics' estimator (``kind`` and its parameter).
    effort_scope : delaycv.metrics.effort_scope.EffortScope
        The evaluations the effort-aware measures rank: every one so far (``cumulative``, the
        default) or the last ``width`` (``sliding``); their own, whatever the estimator.
    seed : int
        The run seed (the replicate): learner seeds, bootstrap weights, noise, inspection errors.
    every : int or None
        A checkpoint every ``every`` stream instances, an integer >= 1 (None: none but the last
        and ``checkpoints``; 0 is refused, as by the command line and the workflow config).
    checkpoints : dict or None
        Extra checkpoints: ``positions``, ``fractions`` (of the stream), ``times`` (Unix s).
    threshold : float
        A prediction is positive iff P(1) > threshold.
    prediction_noise : float
        The probability that a scored prediction is flipped (the MOA extension's ``-n``).
    flush : bool
        Release the labels still pending at the end of the stream.
    keep_predictions : bool
        Keep the prediction log.
    same_learner_seed : bool
        One learner seed (``seed``) for every fold.
    measure_memory : bool
        The model's memory at every checkpoint (``model_bytes``).
    timing : bool
        CPU and wall times (False: NaN, byte-reproducible outputs).
    corrected : bool
        Score every checkpoint against the ``corrected`` reference too (the true-label value
        estimated from what is known then: :mod:`delaycv.metrics.corrected`).
    jobs : int
        Folds in that many processes (the same result).
    folds : tuple of int
        The folds to run (all by default; a subset's results concatenate to the full result).
    names : dict
        Run keys the run names itself (``dataset``, ``learner``, ``policy``); the others come
        from the stream's metadata, the learner's class and the policy's name.
    """

    learner: Any
    policy: Any
    validation: Any
    estimator: Any
    effort_scope: Any = None
    seed: int = _defaults.SEED
    every: int | None = _defaults.EVERY
    checkpoints: Mapping | None = None
    threshold: float = _defaults.THRESHOLD
    prediction_noise: float = _defaults.PREDICTION_NOISE
    flush: bool = False
    keep_predictions: bool = False
    same_learner_seed: bool = False
    measure_memory: bool = False
    timing: bool = True
    corrected: bool = _defaults.CORRECTED
    jobs: int = 1
    folds: tuple[int, ...] = ()
    names: Mapping[str, str] | None = None

    def record(self) -> dict[str, Any]:
        """The settings as plain data (``run.json``'s ``specs``), field by field: the learner
        spec as given, the policy's, validation's, estimator's and effort scope's specs, then
        every option that
        decides the outputs (all but ``jobs``: folds in processes give the same files, byte for
        byte)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name in _NOT_RECORDED:
                continue
            value = getattr(self, f.name)
            if f.name in _AS_SPEC:
                value = _AS_SPEC[f.name](value)
            elif isinstance(value, Mapping):
                value = dict(value)
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out


def _probability(value: Any, key: str, what: str) -> float:
    if not is_number(value) or not 0 <= value <= 1:
        raise ConfigError(f"{key} {value!r}", location=f"key {key}", expected=what)
    return float(value)


#: What ``every`` may be (the one rule of the API, the command line and the workflow config).
EVERY_EXPECTED = "an integer >= 1: a checkpoint every that many instances, and at the last"


def check_every(value: Any) -> int | None:
    """``every``: an integer >= 1, or None (no periodic checkpoint: the last instance and the
    extra checkpoints only); 0, a negative number, a fraction or a boolean is a ConfigError at
    ``key checkpoints.every`` (``option --every`` on the command line)."""
    if value is None:
        return None
    if not is_integer(value) or value < 1:
        raise ConfigError(
            f"every {value!r}", location="key checkpoints.every", expected=EVERY_EXPECTED
        )
    return check_size("every", value, "key checkpoints.every")


def check_checkpoints(value: Any) -> dict | None:
    """Extra checkpoints as a mapping (a list is ``positions``); the values of each kind are
    checked by :func:`delaycv.protocol.checkpoints.check_checkpoint_values` (a value listed twice
    is one checkpoint), the positions against the stream's length by the engine."""
    if value is None:
        return None
    spec = dict(value) if isinstance(value, Mapping) else {"positions": list(value)}
    unknown = sorted(set(spec) - set(CHECKPOINT_KEYS), key=str)
    if unknown:
        raise ConfigError(
            f"unknown checkpoint key {unknown[0]!r}",
            location=f"key checkpoints.{unknown[0]}",
            expected=", ".join(CHECKPOINT_KEYS),
        )
    for kind in CHECKPOINT_KINDS:
        values = spec.get(kind)
        if values is not None and not (isinstance(values, list | tuple) and not values):
            check_checkpoint_values(kind, values, unique=False)
    return spec


def _folds(value: Iterable[int] | None, k: int) -> tuple[int, ...]:
    if value is None:
        return tuple(range(k))
    given = list(value)
    folds = sorted({int(f) for f in given if is_integer(f)})
    if len(folds) != len(set(given)) or not folds or not all(0 <= f < k for f in folds):
        raise ConfigError(
            f"folds_subset {given!r}",
            location="key folds_subset",
            expected=f"a non-empty subset of 0..{k - 1}",
        )
    return tuple(folds)


def _names(value: Mapping | None) -> dict[str, str]:
    names = {k: v for k, v in (value or {}).items() if v is not None}
    unknown = sorted(set(names) - set(NAMED_KEYS))
    if unknown:
        raise ConfigError(
            f"run key {unknown[0]!r} cannot be named",
            location=f"key run_keys.{unknown[0]}",
            expected=", ".join(NAMED_KEYS) + " (the seed is the run seed)",
        )
    return {k: check_name(str(v), f"run_keys.{k}") for k, v in names.items()}


def make_settings(
    *,
    learner: Any,
    policy: Any = _defaults.POLICY,
    validation: Any = None,
    estimator: Any = None,
    effort_scope: Any = None,
    seed: int = _defaults.SEED,
    every: int | None = _defaults.EVERY,
    checkpoints: Any = None,
    threshold: float = _defaults.THRESHOLD,
    prediction_noise: float = _defaults.PREDICTION_NOISE,
    flush: bool = False,
    keep_predictions: bool = False,
    same_learner_seed: bool = False,
    measure_memory: bool = False,
    timing: bool = True,
    corrected: bool = _defaults.CORRECTED,
    jobs: int = 1,
    folds_subset: Iterable[int] | None = None,
    run_keys: Mapping[str, str] | None = None,
) -> RunSettings:
    """Check every value of a run and build its :class:`RunSettings` (the policy, validation and
    estimator from their specs; what is not given takes the defaults of :mod:`delaycv.common.defaults`).

    Parameters
    ----------
    learner : dict, str or river estimator
        A learner spec (``{"class": ..., "params": ...}``, ``{"pipeline": [...]}``, a class name)
        or a river instance; checked (class, parameters, their types and ranges).
    policy : str, dict or Policy
        A preset or policy name (``"ideal"``, ``"hitl_7d_90d"``), a policy spec or a
        :class:`~delaycv.protocol.policies.Policy` (:func:`delaycv.protocol.policies.make_policy`).
    validation : dict, Validation or None
        ``{scheme, folds, seed, evaluate, fixed_split}`` (:func:`delaycv.protocol.validation.make_validation`).
    estimator : str, dict or None
        ``"fading"``, ``{"kind": "sliding", "width": 500}``, ... (``None``: fading 0.99).
    effort_scope : str, dict, EffortScope or None
        ``"cumulative"`` (``None``: the default), ``"sliding"`` (width 1000) or ``{"kind":
        "sliding", "width": 500}`` (:func:`delaycv.metrics.effort_scope.make_effort_scope`).
    seed, every, checkpoints, threshold, prediction_noise, flush, keep_predictions, \
same_learner_seed, measure_memory, timing, corrected, jobs
        As in :class:`RunSettings`.
    folds_subset : iterable of int or None
        Run only these folds (``None``: all).
    run_keys : mapping or None
        ``dataset``/``learner``/``policy`` names of the run.

    Returns
    -------
    RunSettings
    """
    # light checks first (an option's error within a blink), then what imports numpy or river
    threshold = _probability(threshold, "threshold", "a number in [0.0, 1.0]")
    prediction_noise = _probability(
        prediction_noise, "prediction_noise", "a probability in [0.0, 1.0]"
    )
    seed = check_seed(seed, "seed")
    if not is_integer(jobs) or jobs < 1:
        raise ConfigError(f"jobs {jobs!r}", location="key jobs", expected="an integer N >= 1")
    check_size("jobs", jobs, "key jobs")
    every = check_every(every)
    checkpoints = check_checkpoints(checkpoints)
    names = _names(run_keys)

    from delaycv.protocol.policies import make_policy

    policy = make_policy(policy)

    from delaycv.metrics import make_estimator
    from delaycv.metrics.effort_scope import make_effort_scope
    from delaycv.protocol.validation import make_validation

    validation = make_validation(validation if validation is not None else {})
    estimator = make_estimator(estimator)
    effort_scope = make_effort_scope(effort_scope)

    learner = _checked_learner(learner, measure_memory)
    return RunSettings(
        learner=learner,
        policy=policy,
        validation=validation,
        estimator=estimator,
        effort_scope=effort_scope,
        seed=seed,
        every=every,
        checkpoints=checkpoints,
        threshold=threshold,
        prediction_noise=prediction_noise,
        flush=check_flag(flush, "flush"),
        keep_predictions=check_flag(keep_predictions, "keep_predictions"),
        same_learner_seed=check_flag(same_learner_seed, "same_learner_seed"),
        measure_memory=check_flag(measure_memory, "measure_memory"),
        timing=check_flag(timing, "timing"),
        corrected=check_flag(corrected, "corrected"),
        jobs=int(jobs),
        folds=_folds(folds_subset, validation.folds),
        names=names,
    )


def _checked_learner(learner: Any, measure_memory: Any) -> Any:
    """The learner checked (:func:`~delaycv.protocol.learners.validate_learner`; a MOA learner's
    spec in its normal form); a MOA learner whose model size would be measured is refused."""
    from delaycv.protocol.learners import validate_learner
    from delaycv.protocol.moa_spec import is_moa_spec

    if measure_memory is True and is_moa_spec(learner):
        raise ConfigError(
            "a MOA learner's model size is not measured: MOA measures it with its SizeOfAgent "
            "Java agent, which delaycv does not load",
            location="key measure_memory",
            expected="measure_memory off with a MOA learner (run.json's peak memory and "
            "RAM-hours count the JVM's)",
        )
    return validate_learner(learner)


#: The keywords of :func:`make_settings` (what the API and the workflow may pass through).
SETTING_KEYS = tuple(inspect.signature(make_settings).parameters)


def check_keywords(given: Iterable[str], allowed: Iterable[str], what: str) -> None:
    """Refuse a keyword not in ``allowed`` (``what``: where they may come from)."""
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise ConfigError(
            f"unknown option {unknown[0]!r}",
            location=f"key {unknown[0]}",
            expected=what,
        )


def workflow_settings(
    options: Mapping, *, learner: Any, policy: Any, seed: int, run_keys: Mapping, jobs: int = 1
) -> RunSettings:
    """The settings of a workflow evaluate job: ``options`` is the rule's evaluation params
    (``validation``, ``estimator``, ``effort_scope`` and ``options``: the config's
    ``evaluation`` keys and ``every``, as :func:`delaycv.study.runs.evaluation_options` makes
    them), ``learner`` and ``policy`` its specs."""
    named = {
        "learner",
        "policy",
        "validation",
        "estimator",
        "effort_scope",
        "seed",
        "run_keys",
        "jobs",
    }
    check_keywords(
        options["options"], set(SETTING_KEYS) - named, "an evaluation option of make_settings"
    )
    return make_settings(
        learner=learner,
        policy=policy,
        validation=options["validation"],
        estimator=options["estimator"],
        effort_scope=options["effort_scope"],
        seed=seed,
        run_keys=run_keys,
        jobs=jobs,
        **options["options"],
    )
