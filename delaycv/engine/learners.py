"""A fold's learner from its spec, of either kind: :func:`make_learner`.

A river learner is made by :func:`delaycv.protocol.learners.make_river_learner`; a MOA learner by
:class:`delaycv.jvm.learner.MoaClassifier`, imported only when a MOA learner is asked for, so that
a run of river learners imports neither :mod:`delaycv.jvm` nor JPype and starts no JVM.
:func:`folds_in_threads` says whether a learner's folds run in threads or in processes.
"""

from __future__ import annotations

from typing import Any

from delaycv.protocol.learners import make_river_learner
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
