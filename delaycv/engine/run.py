"""The engine's entry point: :func:`evaluate` a :class:`~delaycv.protocol.settings.RunSettings` on a stream
(pure), and what it returns, :class:`EvaluationResult`."""

from __future__ import annotations

import logging
import time as _time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from delaycv.common.errors import ConfigError, DelaycvError
from delaycv.common.words import one_line
from delaycv.data.stream import has_effort
from delaycv.data.stream_file import StreamFile
from delaycv.data.timeunits import POSITION
from delaycv.engine.checkpoints import checkpoint_positions
from delaycv.engine.compiled import run_loops, slow_loops
from delaycv.engine.folds import learner_expected, run_folds
from delaycv.engine.learners import every_feature_encoded, folds_in_threads, make_learner
from delaycv.engine.parallel import run_parallel
from delaycv.engine.progress import Progress
from delaycv.engine.tables import RUN_KEYS, folds_table, summarize
from delaycv.engine.windows import (
    check_position_times,
    only_clean_labels,
    released_nothing,
    time_profile,
    time_warnings,
    window_keys,
)
from delaycv.metrics.corrected import Disclosure
from delaycv.protocol.learner_contract import (
    NO_PROBABILITY_WARN,
    PROBABILITY_EXPECTED,
    UnusableProbability,
    positive_probability,
)
from delaycv.protocol.learners import for_stream, learner_label
from delaycv.protocol.moa_spec import is_moa_spec
from delaycv.protocol.settings import RunSettings

#: The engine's warnings (also in ``result.info["warnings"]``): the command line shows them as
#: ``delaycv: warning: ...``; without a handler, Python's last resort prints them on stderr.
log = logging.getLogger("delaycv.engine")


@dataclass
class EvaluationResult:
    """What :func:`evaluate` returns (picklable).

    ``folds``: the per-fold checkpoint table; ``predictions``: the prediction log or None;
    ``summary``: fold summary (:func:`~delaycv.engine.summarize`); ``observers``: the observers
    made by ``observer_factory``, in fold order (None without a factory); ``info``: run keys,
    settings (``specs``), counts, timings and ``warnings`` (``run.json``).
    """

    folds: pd.DataFrame
    predictions: pd.DataFrame | None
    summary: pd.DataFrame
    observers: list | None = None
    info: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        keys = self.info.get("run_keys", {})
        named = ", ".join(f"{k}={keys[k]!r}" for k in RUN_KEYS[:2] if k in keys)
        named += "".join(f", {k}={keys[k]!r}" for k in ("policy", "seed") if k in keys)
        return (
            f"EvaluationResult({named}, folds={len(self.info.get('folds', []))}, "
            f"checkpoints={self.info.get('checkpoints')}, rows={len(self.folds)})"
        )


def effort_record(metadata: dict, scope) -> dict:
    """What ``run.json`` says of the effort-aware measures: the stream's effort and the scope
    they rank (:class:`~delaycv.metrics.effort_scope.EffortScope`, in words), or why they are
    absent."""
    if has_effort(metadata):
        return {"effort": metadata["effort"], "scope": scope.words}
    return {
        "effort": None,
        "note": "the stream has no effort: the effort-aware measures (popt, ifa, ...) are not "
        "computed (give it one when converting: the mapping's effort, or --effort)",
    }


def no_probability_share(outputs) -> float | None:
    """The share of the run's predictions (every fold's) that came without a probability
    (``no_probability``: read as P(1) = 0.5); None for a run of no prediction."""
    seen = sum(o.info.get("seen", 0) for o in outputs)
    missing = sum(o.info.get("no_probability", 0) for o in outputs)
    return missing / seen if seen else None


def corrected_record(stream, settings: RunSettings) -> dict:
    """What ``run.json`` says of the corrected reference: whether it is computed, how the
    policy's labels are corrected, and its notes (a stream without fix times, a policy without
    inspected labels: docs/corrected.md)."""
    if not settings.corrected:
        return {"computed": False}
    disclosure = Disclosure.of(settings.policy)
    if disclosure.exact:
        how = "every released label is the true label: corrected equals true"
    elif any(disclosure.truth):
        how = (
            "late fixes; the labels still clean from the fix delays of inspected defects "
            "(Kaplan-Meier) and the side's defect rate"
        )
        if disclosure.inspection_error:
            how += "; the inspected labels from the declared inspection error rate"
    else:
        how = "late fixes; the fixes still to come from the delays of the fixes seen (Kaplan-Meier)"
    fixes = stream_has_fixes(stream)
    return {"computed": True, "method": how, "notes": disclosure.notes(has_fixes=fixes)}


def stream_has_fixes(stream) -> bool:
    """Whether any instance of the stream has a fix time (``label_time``)."""
    positives = stream.metadata.get("positives_with_label_time")
    if positives is not None:
        return int(positives) > 0
    label_time = getattr(stream, "label_time", None)
    return label_time is not None and bool(np.isfinite(np.asarray(label_time, float)).any())


def learner_warnings(outputs, settings: RunSettings, n: int) -> list[str]:
    """The run's warnings about its learner: the folds in which it never gave a probability
    (``predict_proba_one`` returned an empty dict, or zeros, for every instance: each prediction
    read as P(1) = 0.5), else a share of its predictions without one above
    :data:`NO_PROBABILITY_WARN`; a MOA learner's votes that were no probabilities
    (:class:`~delaycv.jvm.learner.MoaClassifier`)."""
    out = []
    side = "positive" if settings.threshold < 0.5 else "negative"
    never = [o.fold for o in outputs if o.info.get("no_probability", 0) >= n]
    share = no_probability_share(outputs)
    if never:
        folds = "fold" if len(never) == 1 else "folds"
        out.append(
            f"the learner {learner_label(settings.learner)} never gave a probability in {folds} "
            f"{', '.join(map(str, never))}: its predict_proba_one returned an empty dict (or "
            f"zeros) for all {n} instances, each read as P(1) = 0.5 ({side} at threshold "
            f"{settings.threshold:g}): the metrics there measure no model"
        )
    elif share is not None and share > NO_PROBABILITY_WARN:
        shares = [o.info.get("no_probability", 0) / n for o in outputs]
        spread = (
            f"{min(shares):.1%} to {max(shares):.1%} by fold" if len(shares) > 1 else "one fold"
        )
        out.append(
            f"the learner {learner_label(settings.learner)} gave no probability for "
            f"{share:.1%} of its predictions ({spread}; a run warns above "
            f"{NO_PROBABILITY_WARN:.0%}): its predict_proba_one returned an empty dict (or "
            f"zeros; a MOA learner: no votes, or all zero), each read as P(1) = 0.5 ({side} at "
            f"threshold {settings.threshold:g}): the metrics measure no model there "
            "(run.json's no_probability_share, the report's runs page)"
        )
    odd = {o.fold: o.info["votes_as_class"] for o in outputs if o.info.get("votes_as_class")}
    if odd:
        counts = ", ".join(f"{count} in fold {fold}" for fold, count in sorted(odd.items()))
        out.append(
            f"the MOA learner {learner_label(settings.learner)} gave votes that are no "
            f"probabilities (infinite, NaN or negative) {sum(odd.values())} times ({counts}): "
            "each was read as MOA reads it, the class of the largest vote with P(1) = 0 or 1"
        )
    return out


def evaluate(
    stream,
    settings: RunSettings,
    *,
    observer_factory: Callable[[int], Any] | None = None,
    progress: bool | Callable[[int], None] = False,
    on_rows: Callable[[pd.DataFrame], None] | None = None,
) -> EvaluationResult:
    """Evaluate ``settings`` (learner, policy, validation, estimator, options: built and checked
    by :func:`delaycv.protocol.settings.make_settings`) on ``stream``.

    Parameters
    ----------
    stream : Stream or StreamFile
        A :class:`~delaycv.data.stream.Stream`, or a :class:`~delaycv.data.stream_file.StreamFile` read chunk
        by chunk: what a run holds grows with the labels waiting, not with the stream
        (:mod:`delaycv.protocol.releases`), apart from the table rows (see ``on_rows``) and the
        prediction log.
    settings : RunSettings
        The run.
    observer_factory : callable or None
        ``observer_factory(fold)`` makes the fold's observer (``on_evaluation``,
        ``on_instance``; :mod:`delaycv.tables.moa_export` is one).
    progress : bool or callable
        True: progress on stderr (:class:`~delaycv.engine.Progress`); a callable is given the
        instance-folds done since its last call, every ``PROGRESS_BLOCK`` instances of each fold.
    on_rows : callable or None
        Receives the fold table in pieces as it is made (each: the rows of complete
        checkpoints, all folds, in fold order; in one process one piece per chunk), so that a
        long stream's table need not be held: the result's ``folds`` and ``summary`` are then
        empty (with their columns).

    Returns
    -------
    EvaluationResult
    """
    _check_run(stream, settings)
    positions = checkpoint_positions(  # (refuses a checkpoint the stream has not: no warning first)
        stream if isinstance(stream, StreamFile) else stream.time,
        settings.every,
        settings.checkpoints,
        dated=stream.metadata.get("time") != POSITION,
    )
    moa, observed = is_moa_spec(settings.learner), observer_factory is not None
    before = _warnings_before(stream, settings, run_loops(moa, observed))
    keys = run_keys(stream, settings)
    effort = has_effort(stream.metadata)
    wall0, cpu0 = _time.monotonic(), _time.process_time()
    reporter = Progress(len(stream) * len(settings.folds)) if progress is True else progress or None
    # folds in parallel: in threads of this process or in worker processes
    parallel = settings.jobs > 1 and len(settings.folds) > 1
    threads = parallel and folds_in_threads(settings.learner, observer_factory is not None)
    processes = parallel and not threads
    try:
        outputs = _fold_outputs(
            stream,
            settings,
            positions,
            processes=processes,
            threads=settings.jobs if threads else 1,
            observer_factory=observer_factory,
            reporter=reporter,
            on_rows=on_rows,
            keys=keys,
            effort=effort,
        )
    finally:  # (a stop or an error midway: its line starts a line of its own)
        if isinstance(reporter, Progress):
            reporter.close()
    table = _fold_table(outputs, keys, settings, effort, on_rows)
    predictions = None
    if settings.keep_predictions:
        predictions = pd.concat([o.predictions for o in outputs], ignore_index=True)
    info = _run_info(stream, settings, outputs, keys, positions, before)
    info["loops"] = run_loops(moa, observed)  # (after the run: the JVM's class is checked)
    if moa:  # (beside delaycv's, Python's and the libraries': delaycv.tables.results.versions)
        from delaycv.jvm.machine import versions

        info["versions"] = versions()
    _timings(info, settings.timing, outputs, processes, wall0, cpu0)
    observers = [o.observer for o in outputs] if observer_factory is not None else None
    return EvaluationResult(table, predictions, summarize(table), observers, info)


def _check_run(stream, settings) -> None:
    """Raise before any work if ``settings`` is no RunSettings, if the stream is empty, or if its
    times are positions and a window of the policy is a duration
    (:func:`~delaycv.engine.windows.check_position_times`)."""
    if not isinstance(settings, RunSettings):
        raise ConfigError(
            f"settings is a {type(settings).__name__}",
            location="argument settings",
            expected="a RunSettings (delaycv.protocol.settings.make_settings)",
        )
    if len(stream) == 0:
        raise DelaycvError("the stream has no instances")
    check_position_times(stream, settings.policy)


def _warnings_before(stream, settings: RunSettings, loops: dict[str, str]) -> list[str]:
    """The warnings known before the run (what reading a stream file found,
    :attr:`~delaycv.data.stream_file.StreamFile.read_warnings`; about the stream's times under a
    policy with time windows, a policy that can release only labels 0, the Python loops run
    unasked: ``loops``, :func:`~delaycv.engine.compiled.run_loops`; river's encoder given the
    numbers too, :func:`~delaycv.engine.learners.every_feature_encoded`), logged as they are
    found."""
    before = list(getattr(stream, "read_warnings", ()))  # (a file delaycv did not write)
    if window_keys(settings.policy):
        before += time_warnings(time_profile(stream), settings.policy, stream.metadata)
    before += only_clean_labels(settings.policy, stream_has_fixes(stream))
    before += every_feature_encoded(settings.learner, stream)
    before += slow_loops(loops)
    for text in before:
        log.warning("%s", text)
    return before


def _fold_outputs(
    stream,
    settings,
    positions,
    *,
    processes,
    threads,
    observer_factory,
    reporter,
    on_rows,
    keys,
    effort,
) -> list:
    """The folds' outputs, in fold order: from worker processes (``processes``; their rows come
    back at their end), else from this one (in ``threads`` threads), handing ``on_rows`` each
    chunk's fold table."""
    if processes:
        return run_parallel(
            stream, settings, positions, observer_factory=observer_factory, reporter=reporter
        )
    return run_folds(
        stream,
        settings,
        settings.folds,
        positions,
        observer_factory=observer_factory,
        progress=reporter,
        on_rows=None
        if on_rows is None
        else lambda rows: on_rows(
            folds_table(
                rows, keys, settings.estimator.kind, settings.effort_scope.label if effort else None
            )
        ),
        threads=threads,
    )


def _fold_table(outputs, keys: dict, settings: RunSettings, effort: bool, on_rows) -> pd.DataFrame:
    """The fold table of the rows the outputs hold; with ``on_rows``, those rows (the parallel
    workers') are handed to it and the table returned is empty (with its columns)."""
    table = folds_table(
        [row for out in outputs for row in out.rows],
        keys,
        settings.estimator.kind,
        settings.effort_scope.label if effort else None,
    )
    if on_rows is not None:
        if len(table):  # rows of parallel workers come back at their end
            on_rows(table)
        table = table.iloc[:0]
    return table


def _run_info(stream, settings: RunSettings, outputs, keys: dict, positions, before) -> dict:
    """The run's ``info`` (``run.json``) without its timings; the warnings found after the run
    (:func:`learner_warnings`, :func:`~delaycv.engine.windows.released_nothing`) are logged and
    follow ``before`` in its ``warnings``."""
    info = {
        "run_keys": keys,
        "folds": [o.info for o in outputs],
        "instances": len(stream),
        # the stream's content digest (delaycv.data.identity): one identity per stream, whatever
        # its file's form; merge and rank refuse two dataset names with one
        "stream_sha256": stream.content_digest(),
        "checkpoints": len(positions),
        # the most instances whose state (x dict, pending labels) a process held at once
        "instances_held": max(o.held for o in outputs),
        "specs": settings.record(),
        "effort": effort_record(stream.metadata, settings.effort_scope),
        # the predictions without a probability (each read as P(1) = 0.5), of every fold's
        "no_probability_share": no_probability_share(outputs),
        "corrected": corrected_record(stream, settings),
        "warnings": before,
    }
    after = learner_warnings(outputs, settings, len(stream)) + released_nothing(
        outputs, settings.policy
    )
    after += [n for n in info["corrected"].get("notes", ()) if "is NaN" in n]
    for text in after:
        log.warning("%s", text)
    info["warnings"] = before + after
    return info


def _timings(info: dict, timing: bool, outputs, processes: bool, wall0: float, cpu0: float) -> None:
    """With ``timing``, add the run's wall and CPU seconds to ``info`` (the CPU of this process
    since ``cpu0``, plus the workers' when the folds ran in ``processes``); without, drop the
    folds' CPU seconds."""
    if not timing:
        for f in info["folds"]:
            f.pop("cpu_seconds", None)
        return
    info["wall_seconds"] = _time.monotonic() - wall0
    info["cpu_seconds"] = (
        _time.process_time()
        - cpu0
        + (sum(o.info["cpu_seconds"] for o in outputs) if processes else 0.0)
    )


def run_keys(stream, settings: RunSettings) -> dict:
    """The run keys: the names the settings give, else the stream's dataset, the learner's class
    and the policy's name; the seed."""
    return {
        "dataset": str(stream.metadata.get("dataset", "stream")),
        "learner": learner_label(settings.learner),
        "policy": settings.policy.name,
        **(settings.names or {}),
        "seed": settings.seed,
    }


def probe_learner(stream, learner_spec, *, instances: int = 50) -> None:
    """Run a throwaway learner (seed 0) on the first ``instances`` of ``stream``: predict, then
    learn each, as the loop does. Catches, before any work, parameters that river accepts when it
    builds the learner but fails on at its first call (with river's message, as a ConfigError),
    and answers of ``predict_proba_one`` the engine cannot score
    (:func:`~delaycv.protocol.learner_contract.positive_probability`). A learner with ``needs_no_probe`` is not
    run: a MOA learner, which MOA checked when it was built and whose votes are always read
    (:class:`~delaycv.jvm.learner.MoaClassifier`); a failure of its first calls names the fold
    and the instances, and leaves nothing behind, as any learner's during the run."""
    learner = make_learner(learner_spec, seed=0)
    if getattr(learner, "needs_no_probe", False):  # checked by its library when it was built
        return  # (before any instance is read: a MOA learner's job reads its stream once)
    first = next(iter(stream.chunks(instances)), None)
    if first is None:
        return
    features = list(stream.metadata.get("features") or ())
    encode = for_stream(learner, features, own_loop=False, categories=stream.categories)
    records = first.records if encode is None else encode(first)
    try:
        for n, (x, y) in enumerate(zip(records, first.label.tolist(), strict=True), 1):
            positive_probability(learner.predict_proba_one(x), n)
            learner.learn_one(x, y)
    except UnusableProbability as err:
        raise ConfigError(
            f"the learner {learner_label(learner_spec)} gives no usable probability on the first "
            f"instances of the stream (a copy run before the evaluation): at instance "
            f"{err.instance} its predict_proba_one {err.reason}",
            location="key learner",
            expected=PROBABILITY_EXPECTED,
        ) from None
    except Exception as err:
        raise ConfigError(
            f"the learner {learner_label(learner_spec)} fails on the first instances of the "
            f"stream: {type(err).__name__}: {one_line(str(err))}",
            location="key learner",
            expected=learner_expected(err),
        ) from err
