"""``delaycv evaluate``: evaluate one learner on one stream under one policy; write a run directory.

Thin: it turns options into the run's settings (:func:`delaycv.protocol.settings.make_settings`, which
checks them all before the stream is read), and runs the workflow's evaluate stage
(:func:`delaycv.stages.evaluate.evaluate`: the evaluation, and the run directory written as it goes,
the fold table and its summary piece by piece, atomic).
``--moa-csv`` adds the MOA extension's ``dump.csv`` and ``detail.csv``
(:class:`delaycv.tables.moa_export.MoaExport`, an observer of the engine).

The engine's warnings (a learner that never gave a probability in a fold) are printed on stderr as
``delaycv: warning: ...`` (and kept in ``run.json``'s ``warnings``). A file system that fails while
the run directory is written (a full disk) is one line naming the run directory, the files being
written and the reason; the directory is then left as it was.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import logging
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from delaycv.cli import options, warnings_on_stderr
from delaycv.common import choices, defaults
from delaycv.common.errors import ConfigError, InputError
from delaycv.protocol import policies
from delaycv.protocol.moa_spec import MOA_PREFIX


def parse_value(text: str) -> Any:
    """A ``--param`` value: JSON (numbers, true/false/null, lists, objects), else the string."""
    low = text.strip()
    if low in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[low]
    try:
        return json.loads(low)
    except json.JSONDecodeError:
        return text


def parse_params(items: list[str] | None) -> dict[str, Any]:
    """``KEY=VALUE`` items -> dict; a dotted key ``a.b=1`` sets a nested value."""
    params: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(
                f"bad --param {item!r}", location="option --param", expected="KEY=VALUE"
            )
        node = params
        parts = key.strip().split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(
                    f"--param {item!r} conflicts with an earlier value",
                    location="option --param",
                    expected="KEY=VALUE",
                )
        node[parts[-1]] = parse_value(value)
    return params


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "evaluate",
        help="evaluate a learner with delayed labels (prequential k-fold)",
        description="Evaluate a learner (river's or MOA's) on a stream with a label policy; write a "
        "run directory (folds.parquet, summary.parquet, run.json, optional predictions and MOA CSV).",
    )
    p.add_argument("stream", metavar="STREAM.parquet", help="canonical stream (delaycv convert)")
    _learner_options(p.add_argument_group("learner"))
    _policy_options(p.add_argument_group("policy"))
    _validation_options(p.add_argument_group("validation"))
    _metric_options(p.add_argument_group("metrics and checkpoints"))
    _output_options(p.add_argument_group("output"))
    p.set_defaults(run=run)
    return p


def _learner_options(g) -> None:
    """The learner: its class or spec, its parameters and its run-key name."""
    g.add_argument(
        "--learner",
        required=True,
        help="river class (tree.HoeffdingTreeClassifier), package.module:Class, NoChange, Prior, "
        "a MOA classifier ('moa:trees.HoeffdingTree -g 200'), or a learner spec as a JSON/YAML "
        'mapping (\'{"class": "tree.HoeffdingTreeClassifier", "params": {"grace_period": 50}}\') '
        "or in a JSON/YAML file",
    )
    g.add_argument("--param", action="append", metavar="KEY=VALUE", help="learner parameter")
    g.add_argument("--learner-name", help="the run key 'learner' (default: the class name)")


def _policy_options(g) -> None:
    """The label policy: its preset, windows, expiries, feedback and inspection error."""
    g.add_argument(
        "--policy",
        choices=tuple(policies.PRESETS),
        default=defaults.POLICY,
        help=f"label policy (default {defaults.POLICY}); delay and verification need --window, "
        "hitl --pos-window and --neg-window (no default window)",
    )
    g.add_argument("--window", metavar="D", help="window of delay/verification (7d, 3600s, 500i)")
    g.add_argument("--pos-window", metavar="D", help="window of predicted positives (hitl/general)")
    g.add_argument("--neg-window", metavar="D", help="window of predicted negatives (hitl/general)")
    g.add_argument("--pos-expiry", choices=("truth", "negative"), help="general: positive expiry")
    g.add_argument("--neg-expiry", choices=("truth", "negative"), help="general: negative expiry")
    g.add_argument(
        "--feedback", action=argparse.BooleanOptionalAction, default=None, help="general: feedback"
    )
    g.add_argument("--inspection-error", type=float, help="seeded inspection error rate")
    g.add_argument("--policy-name", help="the run key 'policy' (default: e.g. hitl_7d_90d)")


def _validation_options(g) -> None:
    """The validation scheme, the folds and the seeds."""
    g.add_argument(
        "--validation",
        choices=choices.SCHEMES,
        default=defaults.SCHEME,
        help=f"default {defaults.SCHEME}",
    )
    g.add_argument(
        "--folds",
        type=int,
        help=f"k (default {defaults.FOLDS}; {defaults.PREQUENTIAL_FOLDS} for prequential)",
    )
    g.add_argument(
        "--seed",
        type=options.seed,
        default=defaults.SEED,
        help=f"run seed (the replicate): learners, bootstrap weights, noise (default {defaults.SEED})",
    )
    g.add_argument(
        "--validation-seed",
        type=options.seed,
        default=defaults.VALIDATION_SEED,
        help=f"bootstrap seed, combined with --seed unless --fixed-split (default {defaults.VALIDATION_SEED})",
    )
    g.add_argument(
        "--fixed-split",
        action="store_true",
        help="bootstrap weights from --validation-seed alone: the same for every --seed",
    )
    g.add_argument(
        "--evaluate",
        choices=("all", "trained"),
        default=defaults.EVALUATE,
        help="all: every fold evaluates every instance; trained: only what it trains on",
    )
    g.add_argument(
        "--same-learner-seed", action="store_true", help="one learner seed for all folds"
    )


def _metric_options(g) -> None:
    """The metrics' estimator, the effort-aware measures' scope, the checkpoints, the threshold,
    the prediction noise and flushing."""
    g.add_argument(
        "--estimator",
        choices=[*choices.ESTIMATORS, *choices.DEPRECATED_ESTIMATORS],
        metavar="{" + ",".join(choices.ESTIMATORS) + "}",
        default=defaults.ESTIMATOR,
        help=f"metric estimator (default {defaults.ESTIMATOR}; "
        + ", ".join(f"{old} is {new}" for old, new in choices.DEPRECATED_ESTIMATORS.items())
        + ", deprecated)",
    )
    g.add_argument("--alpha", type=float, help=f"fading factor (default {defaults.ALPHA})")
    g.add_argument(
        "--width", type=int, help=f"width of the sliding estimator (default {defaults.WIDTH})"
    )
    g.add_argument(
        "--size", type=int, help=f"chunk size of the tumbling estimator (default {defaults.SIZE})"
    )
    g.add_argument(
        "--effort-scope",
        choices=choices.EFFORT_SCOPES,
        default=defaults.EFFORT_SCOPE,
        help="the evaluations the effort-aware measures rank: every one so far (default "
        f"{defaults.EFFORT_SCOPE}) or the last --effort-width (sliding)",
    )
    g.add_argument(
        "--effort-width",
        type=int,
        help=f"width of the sliding effort scope (default {defaults.WIDTH})",
    )
    g.add_argument(
        "--every",
        type=int,
        default=defaults.EVERY,
        help=f"checkpoint every F instances, and at the last (default {defaults.EVERY})",
    )
    g.add_argument("--checkpoint-fraction", type=float, nargs="+", help="extra checkpoints")
    g.add_argument(
        "--checkpoint-time",
        type=options.stream_time,
        nargs="+",
        metavar="TIME",
        help="extra checkpoints at the last instance at or before each time: Unix seconds, or "
        "an ISO 8601 date or date and time (UTC unless an offset is given: 2016-01-01, "
        "2016-06-30T12:00+02:00)",
    )
    g.add_argument(
        "--threshold",
        type=float,
        default=defaults.THRESHOLD,
        help=f"positive iff P(1) > threshold (default {defaults.THRESHOLD})",
    )
    g.add_argument(
        "--noise",
        type=float,
        default=defaults.PREDICTION_NOISE,
        help="prediction noise (the MOA extension's -n)",
    )
    g.add_argument("--flush", action="store_true", help="release pending labels at the end")
    g.add_argument(
        "--no-corrected",
        action="store_true",
        help="no rows of the corrected reference (the true-label value estimated from what is "
        "known at each checkpoint: docs/corrected.md)",
    )


def _output_options(g) -> None:
    """The run directory and what goes into it; timing, parallel folds and progress."""
    g.add_argument("--out", required=True, metavar="DIR", help="run directory to write")
    g.add_argument("--dataset", help="the run key 'dataset' (default: stream metadata)")
    g.add_argument("--predictions", action="store_true", help="write predictions.parquet")
    g.add_argument(
        "--moa-csv", action="store_true", help="write the MOA extension's dump/detail CSV"
    )
    g.add_argument("--moa-alpha", type=float, help="fading factor of the MOA export")
    g.add_argument("--memory", action="store_true", help="measure model memory at checkpoints")
    g.add_argument(
        "--no-timing",
        action="store_true",
        help="no CPU/wall times, no peak memory or RAM-hours (byte-reproducible outputs)",
    )
    g.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="folds in N at once: threads with a MOA learner, processes with river's (same output)",
    )
    g.add_argument(
        "--quiet", action="store_true", help="no progress on stderr, no summary on stdout"
    )


def learner_spec_from(args) -> dict | str:
    """The learner spec of ``--learner`` (a class name, a MOA command line, a spec written inline
    as a JSON/YAML mapping, or a JSON/YAML file holding one) with ``--param``'s parameters."""
    text = args.learner
    path = Path(text)
    if text.lstrip().startswith("{"):  # a spec written inline: '{"class": ..., "params": ...}'
        spec = _inline_spec(text)
    elif path.suffix.lower() in (".json", ".yaml", ".yml") and path.is_file():
        from delaycv.study.yaml_file import read_yaml

        # strict: a syntax error's line and column, a duplicate key, an empty file
        spec = read_yaml(path, expected="a learner spec: class and params, or pipeline")
        if not isinstance(spec, dict):
            raise InputError(
                "learner spec is not a mapping", path=str(path), expected="class/params or pipeline"
            )
    elif text.startswith(MOA_PREFIX):  # a MOA classifier's command line (make_settings reads it)
        if args.param:
            raise ConfigError(
                "--param sets a river learner's parameters",
                location="option --param",
                expected="a MOA learner's options inside its string: --learner 'moa:trees.HoeffdingTree -g 200'",
            )
        return text
    else:
        spec = {"class": text}
    if args.param:
        if "class" not in spec:
            raise ConfigError(
                "--param needs a spec with class", location="option --param", expected="class"
            )
        spec = {**spec, "params": {**(spec.get("params") or {}), **parse_params(args.param)}}
    return spec


def _inline_spec(text: str) -> dict:
    """A learner spec written in ``--learner`` as a JSON or YAML flow mapping, read as strictly
    as a spec file (a syntax error's column, a key given twice)."""
    from delaycv.study.yaml_file import parse_yaml

    spec = parse_yaml(text, path="option --learner", expected="a learner spec")
    if not isinstance(spec, dict):
        raise ConfigError(
            f"the learner spec {text!r} is not a mapping",
            location="option --learner",
            expected="class and params, or pipeline",
        )
    return spec


def policy_spec_from(args) -> dict:
    spec: dict[str, Any] = {"preset": args.policy}
    for key in ("window", "pos_window", "neg_window", "pos_expiry", "neg_expiry", "feedback"):
        value = getattr(args, key)
        if value is not None:
            spec[key] = value
    if args.inspection_error is not None:
        spec["inspection_error"] = args.inspection_error
    if args.policy_name:
        spec["name"] = args.policy_name
    return spec


def estimator_spec_from(args) -> dict:
    kind = args.estimator
    if kind in choices.DEPRECATED_ESTIMATORS:  # still read, with a warning naming the new kind
        new = choices.DEPRECATED_ESTIMATORS[kind]
        print(
            f"delaycv: warning: option --estimator: {kind!r} is deprecated: use {new!r} "
            "(the same estimator, the same --width)",
            file=sys.stderr,
        )
        kind = new
    spec: dict[str, Any] = {"kind": kind}
    given = {"alpha": args.alpha, "width": args.width, "size": args.size}
    param = defaults.ESTIMATOR_PARAMS[kind]
    need = param[0] if param else None
    for key, value in given.items():
        if value is not None and key != need:
            raise ConfigError(
                f"--{key} does not apply to the {kind} estimator",
                location=f"option --{key}",
                expected=f"--{need}" if need else "no estimator parameter",
            )
    if need:
        spec[need] = given[need] if given[need] is not None else param[1]
    return spec


def effort_scope_spec_from(args) -> dict:
    """The effort scope of ``--effort-scope`` and ``--effort-width`` (checked by
    :func:`delaycv.metrics.effort_scope.make_effort_scope`, through ``make_settings``)."""
    spec: dict[str, Any] = {"kind": args.effort_scope}
    if args.effort_width is not None:
        if defaults.EFFORT_SCOPE_PARAMS[args.effort_scope] is None:
            raise ConfigError(
                f"--effort-width does not apply to the {args.effort_scope} effort scope",
                location="option --effort-width",
                expected="--effort-scope sliding",
            )
        spec["width"] = args.effort_width
    return spec


#: Keys of the specs (as the library's errors name them) -> the options that set them.
OPTIONS = {
    "policy.preset": "--policy",
    "policy.name": "--policy-name",
    "validation.scheme": "--validation",
    "validation.folds": "--folds",
    "validation.seed": "--validation-seed",
    "validation.evaluate": "--evaluate",
    "estimator.kind": "--estimator",
    "effort_scope": "--effort-scope",
    "effort_scope.kind": "--effort-scope",
    "effort_scope.width": "--effort-width",
    "seed": "--seed",
    "threshold": "--threshold",
    "prediction_noise": "--noise",
    "checkpoints.every": "--every",
    "checkpoints.fractions": "--checkpoint-fraction",
    "checkpoints.times": "--checkpoint-time",
    "jobs": "--jobs",
    "learner": "--learner",
    "learner.class": "--learner",
    "learner.moa": "--learner",
    "measure_memory": "--memory",
    "run_keys.dataset": "--dataset",
    "run_keys.learner": "--learner-name",
    "policy": "--policy",
}


def _option_of(key: str, learner_from_file: bool) -> str | None:
    """The option that sets the spec key ``key`` (``policy.pos_window`` -> ``--pos-window``)."""
    if key in OPTIONS and not (learner_from_file and key.startswith("learner")):
        return f"option {OPTIONS[key]}"
    head, _, rest = key.partition(".")
    if head in ("policy", "estimator") and rest and "." not in rest:
        return f"option --{rest.replace('_', '-')}"
    if key.startswith("learner.params.") and not learner_from_file:
        return f"option --param {key.removeprefix('learner.params.')}"
    return None


def _on_the_command_line(err: ConfigError, learner_from_file: bool) -> ConfigError:
    """``err`` with its key replaced by the command-line option that sets it."""
    location = err.location or ""
    option = _option_of(location.removeprefix("key "), learner_from_file)
    if err.path is not None or option is None:
        return err
    return ConfigError(err.message, location=option, expected=err.expected)


def run(args) -> int:
    learner_from_file = Path(args.learner).suffix.lower() in (".json", ".yaml", ".yml")
    try:
        return _run(args)
    except ConfigError as err:
        raise _on_the_command_line(err, learner_from_file) from None


def settings_from(args):
    """The run's :class:`~delaycv.protocol.settings.RunSettings` from the parsed options: every
    value is checked by :func:`~delaycv.protocol.settings.make_settings` (the one place), whose
    errors :func:`run` words with the options that set the keys."""
    from delaycv.protocol.settings import make_settings

    checkpoints = {}
    if args.checkpoint_fraction:
        checkpoints["fractions"] = args.checkpoint_fraction
    if args.checkpoint_time:
        checkpoints["times"] = args.checkpoint_time
    return make_settings(
        learner=learner_spec_from(args),
        policy=policy_spec_from(args),
        validation=defaults.validation_spec(
            scheme=args.validation,
            folds=args.folds,
            seed=args.validation_seed,
            evaluate=args.evaluate,
            fixed_split=args.fixed_split,
        ),
        estimator=estimator_spec_from(args),
        effort_scope=effort_scope_spec_from(args),
        seed=args.seed,
        every=args.every,
        checkpoints=checkpoints or None,
        threshold=args.threshold,
        prediction_noise=args.noise,
        flush=args.flush,
        keep_predictions=args.predictions,
        same_learner_seed=args.same_learner_seed,
        measure_memory=args.memory,
        timing=not args.no_timing,
        corrected=not args.no_corrected,
        jobs=args.jobs,
        run_keys={"dataset": args.dataset, "learner": args.learner_name},
    )


def _run(args) -> int:
    from delaycv.tables.usage import Meter

    # the process's cost (CPU, peak memory, RAM-hours: delaycv.tables.usage), unless timings are off
    meter = None if args.no_timing else Meter()
    try:
        return _evaluate(args, meter)
    finally:
        if meter is not None:
            meter.stop()  # (its thread ends, also when the run fails)


#: the keys a warning of the engine begins with (``key policy.window: ...``)
_WARNING_KEYS = re.compile(r"^(keys?) ([\w.]+(?:, [\w.]+)*): ")


def _warning_with_options(text: str, learner_from_file: bool) -> str:
    """An engine warning in the command line's words: the keys it begins with replaced by the
    options that set them (``key policy.window`` -> ``option --window``), where each has one."""
    found = _WARNING_KEYS.match(text)
    if found is None:
        return text
    options = [_option_of(k, learner_from_file) for k in found[2].split(", ")]
    if not options or any(o is None for o in options):
        return text
    names = ", ".join(o.removeprefix("option ") for o in options)
    return f"{'options' if len(options) > 1 else 'option'} {names}: {text[found.end() :]}"


class _OptionsFormatter(logging.Formatter):
    def __init__(self, learner_from_file: bool) -> None:
        super().__init__("delaycv: warning: %(message)s")
        self.learner_from_file = learner_from_file

    def formatMessage(self, record: logging.LogRecord) -> str:
        message = _warning_with_options(record.getMessage(), self.learner_from_file)
        return f"delaycv: warning: {message}"


def _warnings_on_stderr(learner_from_file: bool = False):
    """The engine's warnings (logger ``delaycv.engine``) and those about the Java fold loop
    (``delaycv.jvm``) on stderr while the block runs, naming the options where the engine names
    keys (``run.json`` keeps the engine's words)."""
    names = ("delaycv.engine", "delaycv.jvm")
    return warnings_on_stderr(names, formatter=_OptionsFormatter(learner_from_file))


@contextlib.contextmanager
def _writing(out: Path, what: str) -> Iterator[None]:
    """An ``OSError`` of the block (the run directory ``out`` being written: ``what``) as one
    InputError naming the directory, what was being written and why (a full disk, a file system
    that turned read-only); the run writer leaves nothing of the run behind."""
    try:
        yield
    except OSError as err:
        code = err.errno
        reason = os.strerror(code) if code else (err.strerror or str(err))
        full = code in (errno.ENOSPC, errno.EDQUOT)
        raise InputError(
            f"{what} cannot be written: {reason}; the run directory is left as it was",
            path=str(out),
            expected="free space on its file system" if full else "a writable run directory",
        ) from None


def _evaluate(args, meter) -> int:
    """The command's work: the settings, the MOA export, the output directory and the stream
    checked (and the learner probed) before any run; the run directory written by the evaluate
    stage; then its note and a summary line (:func:`_tell`)."""
    settings = settings_from(args)  # every check before any work: the run, the output, the stream

    from delaycv.stages.evaluate import evaluate, use_system_allocator

    use_system_allocator()  # before the stream's first buffer

    from delaycv.common.atomic import check_output
    from delaycv.data.stream_file import open_stream

    export = _moa_export(args, settings.validation.folds)
    out = check_output(args.out, directory=True)
    stream = open_stream(args.stream)  # read chunk by chunk as the run goes
    if not args.dataset and "dataset" not in stream.metadata:
        settings = replace(settings, names={**settings.names, "dataset": Path(args.stream).stem})
    what = _being_written(args, export)
    learner_from_file = Path(args.learner).suffix.lower() in (".json", ".yaml", ".yml")
    with _warnings_on_stderr(learner_from_file):
        run = evaluate(  # (which probes the learner first)
            stream,
            settings,
            out,
            progress=not args.quiet,
            meter=meter,
            export=export,
            extra={"stream": {"path": str(args.stream), "metadata": dict(stream.metadata)}},
            writing=lambda step: _writing(out, what[step]),
        )
    _tell(args, run)
    return 0


def _moa_export(args, folds: int):
    """The MOA CSV export of ``--moa-csv`` (its alpha checked: ``--moa-alpha``, else
    ``--alpha``, else the default), or None."""
    if not args.moa_csv:
        return None
    from delaycv.cli import check_number
    from delaycv.tables.moa_export import MoaExport

    alpha = args.moa_alpha if args.moa_alpha is not None else (args.alpha or defaults.ALPHA)
    check_number(alpha, "--moa-alpha", low=0.0, high=1.0)
    return MoaExport(every=args.every, alpha=alpha, folds=folds)


def _being_written(args, export) -> dict[str, str]:
    """What is being written at each step of the run directory's writing (the ``writing``
    steps of :func:`delaycv.stages.evaluate.evaluate`), as :func:`_writing` names it."""
    tables = "folds.parquet and summary.parquet"
    rest = ["predictions.parquet"] if args.predictions else []
    rest += ["dump.csv", "detail.csv"] if export is not None else []
    rest += ["run.json"]
    rest = rest[0] if len(rest) == 1 else f"{', '.join(rest[:-1])} and {rest[-1]}"
    return {
        "folder": "its temporary folder",  # (beside it, renamed at the end)
        "rows": f"{tables} (written as the run goes)",
        "tables": tables,
        "finish": rest,
    }


def _tell(args, run) -> None:
    """On stderr, the run's note about effort (if any); unless ``--quiet``, on stdout, its
    summary (:meth:`delaycv.stages.evaluate.Run.summary`)."""
    note = run.result.info["effort"].get("note")
    if note:
        print(f"delaycv: note: {note}", file=sys.stderr)
    if not args.quiet:
        print(f"delaycv: {run.summary()}")
