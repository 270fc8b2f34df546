"""A fold's learner from its spec, of either kind: :func:`make_learner`.

A river learner is made by :func:`delaycv.protocol.learners.make_river_learner`; a MOA learner by
:class:`delaycv.jvm.learner.MoaClassifier`, imported only when a MOA learner is asked for, so that
a run of river learners imports neither :mod:`delaycv.jvm` nor JPype and starts no JVM.
:func:`folds_in_threads` says whether a learner's folds run in threads or in processes;
:func:`every_feature_encoded` warns of river's encoders given the numbers too.
"""

from __future__ import annotations

from typing import Any

from delaycv.protocol.learners import (
    ENCODE_TEXT_ALONE,
    encoded_numbers_text,
    learner_encoder_first,
    learner_label,
    make_river_learner,
)
from delaycv.protocol.moa_spec import is_moa_spec


def make_learner(spec: Any, seed: int | None = None, *, where: str = "learner") -> Any:
    """A fresh learner of ``spec`` (a river spec or estimator, or a MOA learner's spec) with the
    learner seed ``seed``; a mistake is a :class:`~delaycv.common.errors.ConfigError` at the key
    ``where``."""
    if is_moa_spec(spec):
        from delaycv.jvm.learner import MoaClassifier

        return MoaClassifier(spec, seed, where=where)
    return make_river_learner(spec, seed, where=where)


def folds_in_threads(spec: Any, observed: bool = False) -> bool:
    """Whether the folds of ``spec`` run in parallel in threads of this process rather than in
    processes: a MOA learner whose Java loop runs (not ``observed``: the Python loop serves
    observers). The Java loop lets go of the interpreter's lock while Java runs, and one JVM
    then serves every fold: no second JVM start, no second JIT warm-up, no stream pickled and no
    table sent between processes. River learners hold the lock, and run in processes."""
    if observed or not is_moa_spec(spec):
        return False
    from delaycv.jvm import rows

    return rows.USABLE


#: A numeric feature with more distinct values than this is a measure (an amount, a size), not a
#: code that one-hot encoding may name (:func:`every_feature_encoded`).
MEASURE_VALUES = 20


def every_feature_encoded(spec: Any, stream: Any, where: str = "learner") -> list[str]:
    """A warning when the river learner of ``spec`` is a pipeline whose first step is river's
    OneHotEncoder or OrdinalEncoder (:func:`~delaycv.protocol.learners.encoder_first`) and
    ``stream`` has numeric features that measure (more than :data:`MEASURE_VALUES` distinct
    values): the encoder makes each of their values a feature (or a code) of its own, which
    river runs without a word. None for a MOA learner, any other learner, or numbers that are
    codes (phishing's 0, 0.5, 1)."""
    encoder = learner_encoder_first(spec)
    if encoder is None:
        return []
    categorical = set(stream.categories())
    numbers = [f for f in stream.metadata["features"] if f not in categorical]
    counts = stream.distinct_values(numbers, MEASURE_VALUES)
    measures = [f for f in numbers if counts[f] > MEASURE_VALUES]  # (codes may be one-hot)
    if not measures:
        return []
    shown = ", ".join(measures[:3])
    shown += f", ... {len(measures)} in all" if len(measures) > 3 else ""
    named = f"the stream's numeric features ({shown})"
    words = encoded_numbers_text(learner_label(spec), encoder, named)
    return [f"key {where}: {words} (expected {ENCODE_TEXT_ALONE})"]
