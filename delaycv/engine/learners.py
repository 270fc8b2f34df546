"""A fold's learner from its spec, of either kind: :func:`make_learner`.

A river learner is made by :func:`delaycv.protocol.learners.make_river_learner`; a MOA learner by
:class:`delaycv.jvm.learner.MoaClassifier`, imported only when a MOA learner is asked for, so that
a run of river learners imports neither :mod:`delaycv.jvm` nor JPype and starts no JVM.
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
