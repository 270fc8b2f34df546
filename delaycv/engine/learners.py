"""A fold's learner from its spec, of either kind: :func:`make_learner`.

A river learner is made by :func:`delaycv.protocol.learners.make_river_learner`; a MOA learner by
:class:`delaycv.jvm.learner.MoaClassifier`, imported only when a MOA learner is asked for, so that
a run of river learners imports neither :mod:`delaycv.jvm` nor JPype and starts no JVM.
:func:`folds_in_threads` says whether a learner's folds run in threads or in processes;
:func:`every_feature_encoded` warns of river's encoders given the numbers too.
"""

from __future__ import annotations

from typing import Any

from delaycv.protocol.learners import is_instance_spec, learner_label, make_river_learner
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


#: river's encoders that encode every feature they are given, numbers too: a one-hot column, or
#: a code, per value
_ENCODERS = ("OneHotEncoder", "OrdinalEncoder")


def every_feature_encoded(spec: Any, stream: Any, where: str = "learner") -> list[str]:
    """A warning when the river learner of ``spec`` is a pipeline whose first step is river's
    OneHotEncoder or OrdinalEncoder and ``stream`` has numeric features: the encoder makes each
    of their values a feature (or a code) of its own, which river runs without a word. None for
    a MOA learner, or any other learner (an encoder given the text alone, after a
    ``compose.SelectType(str)``, is not a first step)."""
    if is_moa_spec(spec):
        return []
    import copy

    model = make_river_learner(spec if is_instance_spec(spec) else copy.deepcopy(spec), 1)
    steps = getattr(model, "steps", None)
    if not isinstance(steps, dict) or not steps:
        return []
    from river import preprocessing  # (a pipeline's first step: river's encoders are known)

    first = next(iter(steps.values()))
    if not isinstance(first, tuple(getattr(preprocessing, name) for name in _ENCODERS)):
        return []
    categorical = set(stream.categories())
    numbers = [f for f in stream.metadata["features"] if f not in categorical]
    if not numbers:
        return []
    shown = ", ".join(numbers[:3]) + (f", ... {len(numbers)} in all" if len(numbers) > 3 else "")
    encoder = type(first).__name__
    return [
        f"key {where}: the first step of {learner_label(spec)}, river's {encoder}, encodes every "
        f"feature it is given, and the stream's numeric features ({shown}) too: each of their "
        f"values becomes a {'feature' if encoder == 'OneHotEncoder' else 'code'} of its own, "
        "so that the model learns no number (expected the text alone encoded: "
        "compose.SelectType(str) | preprocessing.OneHotEncoder() beside the numbers, in a "
        "function of one's own named as the learner's class: config/README.md, \"Categorical "
        'features")'
    ]
