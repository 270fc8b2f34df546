"""What the schema cannot say about a study: each check on its own, every mistake reported.

:func:`check_study` runs them all after the schema (:mod:`delaycv.study.schema`): exactly one of
``generate`` and ``path`` per dataset, exactly one of ``class``, ``pipeline`` and ``moa`` per
learner, the estimator's options, the figures' learner, the policies and grids
(:mod:`delaycv.study.policy_grids`), the folders and the lengths of names and paths
(:mod:`delaycv.study.folders`), each learner built and run on two instances (and each river
learner on instances with a text value where a dataset has categorical features), the dataset
files and one stream under one name (:mod:`delaycv.study.datasets`), and the metrics of ``tests`` and
``figures``: an effort-aware metric (:data:`delaycv.metrics.effort_names.EFFORT_METRICS`) needs
every dataset to have an effort, and the tests' checkpoint request
(:func:`delaycv.protocol.checkpoints.check_checkpoint_request`, the one check of a request).
"""

from __future__ import annotations

import copy
import difflib
import os
from collections.abc import Iterator, Mapping
from typing import Any

from delaycv.common import defaults
from delaycv.common.bounds import check_size
from delaycv.common.choices import DEPRECATED_ESTIMATORS
from delaycv.common.errors import ConfigError
from delaycv.common.words import listed, one_line
from delaycv.protocol.checkpoints import check_checkpoint_request
from delaycv.study.datasets import (
    UNKNOWN,
    StreamFacts,
    check_same_streams,
    dataset_facts,
    stream_file,
)
from delaycv.study.folders import check_name_lengths, check_path_lengths, resolve_folders
from delaycv.study.mistakes import Mistakes, with_source
from delaycv.study.passed_checks import passed_before, passed_entry, remember_passed
from delaycv.study.policy_grids import all_policies, expand_policy_grid, resolve_contrasts
from delaycv.study.stage_settings import figure_metrics


def check_study(
    config: dict,
    source: str,
    cwd: str | os.PathLike | None,
    learners: bool,
    broken: set[tuple],
    mistakes: Mistakes,
) -> None:
    """Check, in place, what the schema cannot say, each check on its own.

    One mistake does not hide another: exactly-one-of keys, names that must exist, estimator
    options, policies (grids expanded into ``config["policies"]``), the contrasts' reference,
    folders, names that fit the file system, learners built, dataset files, one stream under one
    name, metrics, the tests' checkpoints, ``DELAYCV_PURE_PYTHON`` and path lengths.

    Parameters
    ----------
    config : dict
        The config after the schema, its defaults filled in; completed in place (policies,
        contrasts, folders, estimator parameter).
    source : str
        The file the errors name.
    cwd : str or os.PathLike, optional
        The working directory the dataset paths and folders are relative to; ``None``: files
        and folders on disk are not looked at.
    learners : bool
        Whether to build each learner and run it on two instances.
    broken : set of tuple
        What the schema refused and was left out (``(section,)``, ``(section, name)``); the
        checks add what they refuse.
    mistakes : Mistakes
        Where the mistakes go.
    """
    skip_datasets = _skipped(broken, "datasets")
    skip_learners = _skipped(broken, "learners")
    runs_given = "runs" in config
    _check_specs(config, source, broken, mistakes, skip_datasets, skip_learners)
    refused = _check_sizes(config, source, broken, mistakes)
    _check_run_settings(config, source, broken | refused, mistakes)
    _check_names_and_folders(config, source, cwd, broken, mistakes)
    seeded: dict[str, bool] = {}  # learner -> whether its runs depend on the run's seed
    if learners:
        for name, spec in config["learners"].items():
            if name not in skip_learners:
                with mistakes.guard(skip_learners, name):
                    seeded[name] = _check_learner_runs(name, spec, source)
    facts = _dataset_facts(config, source, cwd, mistakes, skip_datasets)
    if learners:
        _check_learners_read_categories(config, source, facts, list(seeded), mistakes)
        _warn_encoded_numbers(config, source, facts, list(seeded), mistakes)
    efforts = {name: fact.effort for name, fact in facts.items()}
    if ("policies",) not in broken:
        _warn_only_clean_labels(config, source, facts, broken, mistakes)
        _check_position_windows(config, source, facts, broken, mistakes)
    _warn_tests_out_of_reach(config, source, broken, mistakes, seeded)
    with mistakes.guard():
        check_same_streams(config, source, cwd, skip_datasets, mistakes)
    if ("tests", "metrics") not in broken and ("tests",) not in broken:
        _check_metrics(config, source, efforts, mistakes, "tests")
    if ("tests", "checkpoints") not in broken and ("tests",) not in broken:
        with mistakes.guard():
            request = config["tests"]["checkpoints"]
            with_source(check_checkpoint_request, request, where="tests.checkpoints", source=source)
    figures_broken = ("figures", "metric") in broken or ("figures",) in broken
    # (without figures.metric the figures draw the tested metrics, checked above)
    if not figures_broken and config["figures"].get("metric") is not None:
        _check_metrics(config, source, efforts, mistakes, "figures")
    _check_corrected_asked(config, source, broken, mistakes)
    if not figures_broken and ("tests",) not in broken and ("tests", "metrics") not in broken:
        with mistakes.guard():
            from delaycv.metrics.uncorrected import check_figure_reference

            check_figure_reference(config["figures"]["reference"], figure_metrics(config), source)
    if cwd is not None:
        with mistakes.guard():
            from delaycv.common.native import pure_python

            pure_python()  # an evaluate job would stop on a value other than 1, 0 or nothing
    with mistakes.guard():
        check_path_lengths(config, source, cwd, broken, runs_given, mistakes)


def _check_corrected_asked(
    config: dict, source: str, broken: set[tuple], mistakes: Mistakes
) -> None:
    """An error at each key that asks for the corrected reference of runs scored without it
    (``evaluation.corrected: false``): a test or figure of it would have no row to read. (The
    default of ``tests.references`` leaves it out then: :mod:`delaycv.study.loading`.)"""
    if ("evaluation",) in broken or config["evaluation"].get("corrected") is not False:
        return
    keys = []
    if not broken & {("tests",), ("tests", "references")}:
        references = config["tests"]["references"]
        keys += [f"tests.references.{i}" for i, r in enumerate(references) if r == "corrected"]
    figures_given = not broken & {("figures",), ("figures", "reference")}
    if figures_given and config["figures"].get("reference") == "corrected":
        keys.append("figures.reference")
    for key in keys:
        mistakes.errors.append(
            ConfigError(
                "the corrected reference, while evaluation.corrected is false: the runs are not "
                "scored against it",
                path=source,
                location=f"key {key}",
                expected="observed or 'true', or evaluation.corrected: true",
            )
        )


def _skipped(broken: set[tuple], section: str) -> set:
    """The names of ``section`` whose entries were left out (each has its own mistake)."""
    return {name for kind, *rest in broken if kind == section for name in rest}


def _check_specs(
    config: dict,
    source: str,
    broken: set[tuple],
    mistakes: Mistakes,
    skip_datasets: set,
    skip_learners: set,
) -> None:
    """The specs one by one: each dataset's keys, each learner's, the estimator's options, the
    figures' learner."""
    for name, dataset in config["datasets"].items():
        with mistakes.guard(skip_datasets, name):
            _check_dataset_keys(name, dataset, source)
    for name, spec in config["learners"].items():
        with mistakes.guard(skip_learners, name):
            _check_learner(spec, f"learners.{name}", source)
    if ("estimator",) not in broken:
        with mistakes.guard():
            _check_estimator(config, source, mistakes)
    with mistakes.guard():
        _check_figure_learner(config, source, broken)


#: The size-like keys of a study (each a key's path and the name of its bound in
#: :data:`delaycv.common.bounds.BOUNDS`); a generated dataset's ``rows`` too.
SIZE_KEYS = (
    (("estimator", "width"), "width"),
    (("estimator", "size"), "size"),
    (("validation", "folds"), "folds"),
    (("checkpoints", "every"), "every"),
    (("tests", "resamples"), "resamples"),
    (("figures", "dpi"), "dpi"),
)


def _check_sizes(config: dict, source: str, broken: set[tuple], mistakes: Mistakes) -> set[tuple]:
    """Each size-like value within its bound (:func:`delaycv.common.bounds.check_size`, the check
    the evaluate jobs, the command line and the API make): a width of 1e20 is refused here, not
    in every evaluate job's log. Returns the sections of the values refused."""
    refused: set[tuple] = set()
    generated = [
        (("datasets", name, "generate", "rows"), "rows")
        for name, dataset in config["datasets"].items()
        if isinstance(dataset, dict) and isinstance(dataset.get("generate"), dict)
    ]
    for path, name in (*SIZE_KEYS, *generated):
        if any(path[:i] in broken for i in range(1, len(path) + 1)):
            continue
        value = config
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        if value is None:
            continue
        with mistakes.guard():
            try:
                check_size(name, value, "key " + ".".join(path))
            except ConfigError as err:
                refused.add(path[:1])
                raise ConfigError(
                    err.message, path=source, location=err.location, expected=err.expected
                ) from None
    return refused


#: the sections whose values every evaluate job hands to make_settings
RUN_SECTIONS = ("validation", "estimator", "evaluation", "checkpoints")


def _check_run_settings(config: dict, source: str, broken: set[tuple], mistakes: Mistakes) -> None:
    """The evaluation's settings as every evaluate job checks them
    (:func:`delaycv.protocol.settings.make_settings`, the one place for a run's checks), so that a
    value the schema lets through and the jobs refuse (``cv`` with one fold, a NaN alpha or
    threshold) is refused here, not in every job's log."""
    if any(key[:1] in {(s,) for s in RUN_SECTIONS} for key in broken):
        return  # (a mistake of their own: reported by the schema or the size checks)
    from delaycv.protocol.settings import make_settings
    from delaycv.study.runs import estimator_spec, evaluation_options, validation_spec

    options = evaluation_options(config)
    with mistakes.guard():
        try:
            make_settings(
                learner={"class": "NoChange"},
                policy="ideal",
                validation=validation_spec(config),
                estimator=estimator_spec(config),
                **options,
            )
        except ConfigError as err:
            key = (err.location or "").removeprefix("key ")
            if key in config["evaluation"]:
                key = f"evaluation.{key}"
            raise ConfigError(
                err.message, path=source, location=f"key {key}", expected=err.expected
            ) from None


def _check_names_and_folders(
    config: dict,
    source: str,
    cwd: str | os.PathLike | None,
    broken: set[tuple],
    mistakes: Mistakes,
) -> None:
    """Every policy (grids expanded), the contrasts' reference, the folders, the names' lengths."""
    with mistakes.guard():
        config["policies"] = all_policies(config, source, broken, mistakes)
    with mistakes.guard():
        resolve_contrasts(config, source, broken)
    with mistakes.guard():
        resolve_folders(config, source, cwd, broken, mistakes)
    with mistakes.guard():
        check_name_lengths(config, source, mistakes)


def _check_position_windows(
    config: dict,
    source: str,
    facts: dict[str, StreamFacts],
    broken: set[tuple],
    mistakes: Mistakes,
) -> None:
    """A policy whose window is a duration beside a dataset whose times are its instances'
    positions (converted with ``time_unit: position``) is an error at the window's key, as the
    run would find it (:func:`delaycv.engine.windows.check_position_times`), with the dataset."""
    from types import SimpleNamespace

    from delaycv.engine.windows import check_position_times

    counted = [name for name, fact in facts.items() if fact.positions]
    if not counted:
        return
    stream = SimpleNamespace(metadata={"time": "position"})
    for _, key, policy in _study_policies(config, broken):
        with mistakes.guard():
            try:
                check_position_times(stream, policy)
            except ConfigError as err:
                window = err.location.removeprefix("key policy.")
                raise ConfigError(
                    f"dataset {counted[0]}: {err.message}",
                    path=source,
                    location=f"key {key}.{window}",
                    expected=err.expected,
                ) from None


def _study_policies(config: dict, broken: set[tuple]) -> Iterator[tuple[str, str, Any]]:
    """``(name, key, policy)`` of each policy of the study that was not refused (a refused one is
    reported): the policy built, and the key it was written at, ``policies.<name>`` or, for a
    grid's policy, ``policy_grids.<grid>`` (its own line in the file)."""
    from delaycv.protocol.policies import make_policy

    grid_of = {
        policy: f"policy_grids.{grid_name}"
        for grid_name, grid in config["policy_grids"].items()
        if not {("policy_grids",), ("policy_grids", grid_name)} & broken  # (reported)
        for policy in expand_policy_grid(grid)
    }
    for name, spec in config["policies"].items():
        if ("policies", name) not in broken:
            policy = make_policy(spec, where=f"policies.{name}")
            yield name, grid_of.get(name, f"policies.{name}"), policy


def _warn_only_clean_labels(
    config: dict,
    source: str,
    facts: dict[str, StreamFacts],
    broken: set[tuple],
    mistakes: Mistakes,
) -> None:
    """A warning for each policy whose windows both end in the clean assumption (a 1 only where a
    fix is seen: ``verification``) beside datasets known to have no fix time (a raw file whose
    mapping names no link column: ``facts``): every label it releases there is 0 (the run warns
    too: ``only_clean_labels``)."""
    bare = [name for name, fact in facts.items() if fact.fix_times is False]
    if not bare:
        return
    for name, key, policy in _study_policies(config, broken):
        if policy.ones_need_fixes:
            mistakes.warnings.append(
                ConfigError(
                    f"the policy {name} gives a label 1 only where a fix is seen (label_time), "
                    f"and dataset{'s' if len(bare) > 1 else ''} {', '.join(bare)} "
                    f"{'have' if len(bare) > 1 else 'has'} no fix time: every label it releases "
                    "there is 0, so no fold learns a positive",
                    path=source,
                    location=f"key {key}",
                    expected="datasets with fix times (a fix-link column), or a policy whose "
                    "window ends in the truth: hitl, delay",
                )
            )


def _warn_tests_out_of_reach(
    config: dict, source: str, broken: set[tuple], mistakes: Mistakes, seeded: dict[str, bool]
) -> None:
    """A warning when the study's tests cannot be significant whatever its runs give: a
    sign-flip test of n (seed, fold) pairs gives no p below 2/2**n (or 1/(R + 1) over R random
    sign vectors: :func:`delaycv.stats.permutation.smallest_p`), and the folds and seeds give at
    most ``folds x seeds`` pairs; or, when every seed has the same folds (any scheme but
    ``bootstrap``, or ``fixed_split``), a learner that ignores its seed repeats its values under
    each seed, which the tests count once: ``folds`` pairs. ``seeded``: whether each learner
    checked takes the run's seed (those that do not are named; none: no such warning). A second
    warning counts the evaluations such learners repeat."""
    sections = ("validation", "seeds", "tests")
    if any(key[:1] in {(s,) for s in sections} for key in broken):
        return  # (a mistake of their own, reported)
    from delaycv.stats.permutation import smallest_p

    validation, tests = config["validation"], config["tests"]
    folds, seeds = int(validation["folds"]), len(set(config["seeds"]))
    alpha, resamples = float(tests["alpha"]), int(tests["resamples"])
    shared = validation["scheme"] != "bootstrap" or bool(validation.get("fixed_split"))
    how = "the fixed split" if validation["scheme"] == "bootstrap" else validation["scheme"]
    plain = _policies_of_seedless_runs(config, broken)
    if not plain:  # (every run draws noise from its seed: no run repeats another)
        shared = False
    under = _under_plain_policies(config, plain)
    learners = list(config["learners"])
    known = all(name in seeded for name in learners)
    unseeded = [name for name in learners if seeded.get(name) is False]

    def floor(n: int) -> float:
        return float(smallest_p(n, 2**n <= resamples, resamples))

    def count(n: int, word: str) -> str:
        return f"{n} {word}{'s' if n != 1 else ''}"

    if shared and unseeded and seeds > 1:
        _warn_repeated_runs(config, source, broken, mistakes, unseeded, how, seeds, plain)
    if floor(folds * seeds) > alpha:
        pairs = folds * seeds
        what = f"{count(folds, 'fold')} x {count(seeds, 'seed')} give at most"
        who = "no learner test, bias test or contrast"
    elif shared and (unseeded or not known):
        pairs = folds
        if floor(pairs) <= alpha:
            return
        if unseeded:
            one = len(unseeded) == 1
            what = (
                f"under {how} every seed has the same folds, so {listed(unseeded)}, which "
                f"{'ignores its' if one else 'ignore their'} seed, repeat{'s' if one else ''} "
                f"{'its' if one else 'their'} values{under} under each seed, which the tests "
                "count once:"
            )
            who = f"none of the bias tests and contrasts of {listed(unseeded)}{under}" + (
                ", nor a test between two of them," if len(unseeded) > 1 else ""
            )
        else:
            what = (
                f"under {how} every seed has the same folds, so a learner that ignores its seed "
                "(a deterministic one) repeats its values under each seed, which the tests count "
                "once:"
            )
            who = "none of its tests"
    else:
        return
    enough = next(n for n in range(1, 64) if floor(n) <= alpha) if floor(63) <= alpha else None
    mistakes.warnings.append(
        ConfigError(
            f"{what} {count(pairs, '(seed, fold) pair')} per test; a sign-flip test of "
            f"{count(pairs, 'pair')} gives no p below {floor(pairs):.3g}, above tests.alpha "
            f"{alpha:g}: {who} can be significant, whatever the differences",
            path=source,
            location=f"key {'validation.folds' if enough is not None else 'tests.resamples'}",
            expected=(
                f"at least {enough} (seed, fold) pairs per test: more folds, or seeds whose folds "
                "differ (bootstrap without fixed_split)"
                if enough is not None
                else f"more tests.resamples than {resamples} (1/(R + 1) is above tests.alpha)"
            ),
        )
    )


def _policies_of_seedless_runs(config: dict, broken: set[tuple]) -> list[str]:
    """The policies under which a learner that ignores its seed runs the same under every seed
    (the folds aside): none when each run flips its predictions with a noise drawn from its seed
    (``evaluation.prediction_noise``), else those without an inspection error (whose flips are
    drawn from the run's seed too)."""
    if float(config["evaluation"].get("prediction_noise", 0.0)) > 0:
        return []
    return [
        name for name, _, policy in _study_policies(config, broken) if not policy.inspection_error
    ]


def _under_plain_policies(config: dict, plain: list[str]) -> str:
    """``" under the policies without an inspection error (a, b)"`` when only some of the
    study's policies are ``plain``, else ``""``."""
    if not plain or len(plain) == len(config["policies"]):
        return ""
    return f" under the policies without an inspection error ({listed(plain)})"


def _warn_repeated_runs(
    config: dict,
    source: str,
    broken: set[tuple],
    mistakes: Mistakes,
    unseeded: list[str],
    how: str,
    seeds: int,
    plain: list[str],
) -> None:
    """A warning that learners which ignore their seed, under folds every seed shares, run the
    same evaluation once per seed under the policies ``plain`` (:func:`_policies_of_seedless_runs`):
    how many of the study's evaluations repeat another."""
    if ("policies",) in broken or ("datasets",) in broken:
        return
    per_seed = len(config["datasets"]) * len(plain)
    total = len(config["datasets"]) * len(config["policies"]) * len(config["learners"]) * seeds
    repeated = per_seed * len(unseeded) * (seeds - 1)
    mistakes.warnings.append(
        ConfigError(
            f"the learner{'s' if len(unseeded) > 1 else ''} {listed(unseeded)} "
            f"{'ignore their' if len(unseeded) > 1 else 'ignores its'} seed and under {how} every "
            f"seed has the same folds: each of {'their' if len(unseeded) > 1 else 'its'} runs"
            f"{_under_plain_policies(config, plain)} is the same under the {seeds} seeds, so "
            f"{repeated} of the study's {total} evaluations repeat another",
            path=source,
            location="key seeds",
            expected="seeds that change the runs: folds that differ by seed (bootstrap without "
            "fixed_split), or learners that take a seed; or one seed for a study of such learners",
        )
    )


def _dataset_facts(
    config: dict,
    source: str,
    cwd: str | os.PathLike | None,
    mistakes: Mistakes,
    skip_datasets: set,
) -> dict[str, StreamFacts]:
    """Check each dataset given by its file; return what is known of each dataset's stream
    (whether it has an effort and fix times; :data:`~delaycv.study.datasets.UNKNOWN` for a
    dataset refused or skipped)."""
    facts: dict[str, StreamFacts] = {}
    for name, dataset in config["datasets"].items():
        facts[name] = UNKNOWN
        if name in skip_datasets:
            continue
        with mistakes.guard(skip_datasets, name):
            facts[name] = dataset_facts(name, dataset, source, cwd)
    return facts


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


def _check_estimator(config: dict, source: str, mistakes: Mistakes) -> None:
    """The estimator takes only its kind's parameter (filled in with its default when left out);
    the deprecated kind ``window`` is read as ``sliding``, with a warning."""
    est = config["estimator"]
    if est["kind"] in DEPRECATED_ESTIMATORS:
        new = DEPRECATED_ESTIMATORS[est["kind"]]
        mistakes.warnings.append(
            ConfigError(
                f"the estimator kind {est['kind']!r} is deprecated, read as {new!r}",
                path=source,
                location="key estimator.kind",
                expected=f"kind: {new}, the same estimator with the same parameter",
            )
        )
        est["kind"] = new
    param = defaults.ESTIMATOR_PARAMS[est["kind"]]
    need = param[0] if param else None
    for option in ("alpha", "width", "size"):
        if option in est and option != need:
            raise ConfigError(
                f"the {est['kind']} estimator takes no {option}",
                path=source,
                location=f"key estimator.{option}",
                expected=f"only {need}" if need else "no option",
            )
    if param and need not in est:  # the schema cannot say it (it depends on kind)
        est[need] = param[1]


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
        from delaycv.protocol.moa_spec import moa_spec

        with_source(moa_spec, spec, where=key, source=source)
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


#: what the check of a river spec that passed remembers (delaycv.study.passed_checks)
_SEEDED, _UNSEEDED = "takes the run seed", "ignores the run seed"


def _check_learner_runs(name: str, spec: dict, source: str) -> bool:
    """Build the learner (its class exists, river accepts its parameters), then let it predict and
    learn two numeric instances: river checks few parameter types when it builds a learner, and
    a value of the wrong type (``grace_period: "200"``) fails on its first instance; a spec that
    passed with the same river and delaycv is not built again (:mod:`delaycv.study.passed_checks`).
    A MOA learner: MOA builds it and it runs two instances, in this process's JVM
    (:func:`delaycv.jvm.learner.check_learner`). Returns whether the learner's runs depend on
    the run's seed (:func:`delaycv.protocol.learners.takes_run_seed`), remembered with a river
    spec that passed."""
    from delaycv.protocol.learners import learner_label, make_river_learner, takes_run_seed
    from delaycv.protocol.moa_spec import is_moa_spec

    key = f"learners.{name}"
    if is_moa_spec(spec):
        from delaycv.jvm.learner import check_learner

        return with_source(check_learner, spec, where=key, source=source)
    passed = passed_entry(spec)
    found = passed_before(passed)
    if found in (_SEEDED, _UNSEEDED):
        return found == _SEEDED
    # (seed 1: the same learner tells whether the run's seed changes it, before it learns)
    model = with_source(make_river_learner, copy.deepcopy(spec), 1, where=key, source=source)
    seeded = takes_run_seed(spec, key, one=model)
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
    remember_passed(passed, _SEEDED if seeded else _UNSEEDED)
    return seeded


#: instances with a categorical feature (text values, as a stream's categorical feature reaches a
#: learner), on which each river learner predicts and learns where a dataset has one
_TEXT_INSTANCES = (
    ({"a": 0.0, "c": "x"}, 0),
    ({"a": 1.0, "c": "y"}, 1),
    ({"a": 0.5, "c": "x"}, 1),
)
#: what the check of text values remembers of a spec that passed (delaycv.study.passed_checks)
_READS_TEXT = "reads categorical features"


def _check_learners_read_categories(
    config: dict, source: str, facts: Mapping, checked: list[str], mistakes: Mistakes
) -> None:
    """Where a dataset's stream has categorical features (:class:`StreamFacts`), each river
    learner that passed its build check predicts and learns three instances with a text value
    (:data:`_TEXT_INSTANCES`); one that fails is an error at its key, naming the datasets and
    their features, before any job (each job's probe would fail on its stream's first instances).
    MOA learners read categories (nominal attributes). A spec that passed is remembered."""
    from delaycv.protocol.moa_spec import is_moa_spec

    with_text = {name: fact.categorical for name, fact in facts.items() if fact.categorical}
    if not with_text:
        return
    for name in checked:
        spec = config["learners"][name]
        if not is_moa_spec(spec):
            with mistakes.guard():
                _check_reads_text(name, spec, source, with_text)


def _warn_encoded_numbers(
    config: dict, source: str, facts: Mapping, checked: list[str], mistakes: Mistakes
) -> None:
    """A warning for each river learner whose first step is river's OneHotEncoder or
    OrdinalEncoder (:func:`~delaycv.protocol.learners.encoder_first`: a pipeline, or a function
    of one's own, is built again) beside datasets with numeric features (:class:`StreamFacts`):
    the encoder makes each of their values a feature of its own (each run warns too)."""
    from delaycv.protocol.learners import (
        ENCODE_TEXT_ALONE,
        encoded_numbers_text,
        learner_encoder_first,
        learner_label,
    )

    with_numbers = {name: fact.numeric for name, fact in facts.items() if fact.numeric}
    if not with_numbers:
        return
    shown = listed(
        [
            f"{d} ({', '.join(n[:3])}{', ...' if len(n) > 3 else ''})"
            for d, n in with_numbers.items()
        ]
    )
    for name in checked:
        spec = config["learners"][name]
        with mistakes.guard():
            encoder = learner_encoder_first(spec)
            if encoder is not None:
                mistakes.warnings.append(
                    ConfigError(
                        encoded_numbers_text(
                            learner_label(spec), encoder, f"the numeric features of {shown}"
                        ),
                        path=source,
                        location=f"key learners.{name}",
                        expected=ENCODE_TEXT_ALONE,
                    )
                )


def _check_reads_text(name: str, spec: dict, source: str, with_text: Mapping) -> None:
    from delaycv.protocol.learners import READS_TEXT, learner_label, make_river_learner

    passed = passed_entry({_READS_TEXT: spec})
    if passed_before(passed) == _READS_TEXT:
        return
    model = make_river_learner(copy.deepcopy(spec), 1)
    try:
        for x, y in _TEXT_INSTANCES:
            model.predict_proba_one(dict(x))
            model.learn_one(dict(x), y)
    except Exception as err:  # (what a learner raises on text is its own: TypeError, ValueError)
        where = listed([f"{d} ({', '.join(features)})" for d, features in with_text.items()])
        raise ConfigError(
            f"{learner_label(spec)} cannot read a categorical feature, whose values are text, "
            f"and the streams of {where} have such features: on instances with one, "
            f"{type(err).__name__}: {one_line(str(err), 200)}",
            path=source,
            location=f"key learners.{name}",
            expected=f"{READS_TEXT}; or the datasets without those features (their mapping's drop)",
        ) from None
    remember_passed(passed, _READS_TEXT)


def _check_metrics(
    config: dict,
    source: str,
    efforts: Mapping[str, bool | None],
    mistakes: Mistakes,
    section: str,
) -> None:
    """The metrics named in ``section`` (``tests.metrics``, which the contrasts, the rankings
    and, unless ``figures.metric`` names others, the figures use too; or ``figures.metric``) exist; an effort-aware one needs every dataset to have an effort
    (``efforts``: dataset -> has one; None: not known here)."""
    from delaycv.metrics import METRICS
    from delaycv.metrics.effort_names import EFFORT_METRICS
    from delaycv.metrics.properties import require_direction

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
            if section == "tests":  # the rankings rank every one of them
                require_direction(metric, location=f"key {key}", path=source)
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
