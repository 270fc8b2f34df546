"""MOA's own ``EvaluatePrequentialDelayedCV`` run in this process (JPype), with an evaluator that
records every prediction: what the exactness tests compare delaycv's MOA learners with.

The task runs unchanged (MOA's code: its loop, its fold copies of one prepared learner, its
delayed training queue per fold); only its evaluator option is given an object, a recorder of the
votes each fold's ``addResult`` receives. The stream is an ARFF written from a delaycv stream (its
features, in order, then the class ``{0,1}``), read by MOA's ``ArffFileStream``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from delaycv.jvm.task import METHODS, write_arff

__all__ = ["max_index", "probability", "task_votes", "write_arff"]


def max_index(votes: list[float]) -> int:
    """The class MOA's evaluators read from votes (``Utils.maxIndex``: the first largest; 0 for
    no votes; a NaN is never larger)."""
    best, top = 0, votes[0] if votes else 0.0
    for i, v in enumerate(votes[1:], 1):
        if v > top:
            best, top = i, v
    return best


def probability(votes: list[float]) -> float:
    """P(1) of finite, non-negative votes (0.5 without any), NaN for other votes."""
    v0 = votes[0] if votes else 0.0
    v1 = votes[1] if len(votes) > 1 else 0.0
    if not (v0 >= 0 and v1 >= 0 and math.isfinite(v0 + v1)):
        return math.nan
    return v1 / (v0 + v1) if v0 + v1 > 0 else 0.5


def task_votes(
    arff: Path, learner: str, *, folds: int, method: str, delay: int
) -> tuple[np.ndarray, np.ndarray]:
    """Run MOA's task on ``arff``; return, per (instance, fold) (shape n x folds), the class
    MOA's evaluator reads from the fold's votes (:func:`max_index`) and P(1) from the votes
    (:func:`probability`)."""
    from jpype import JClass, JImplements, JOverride

    from delaycv.jvm import learner as moa_learner

    moa_learner.java()  # the JVM, with the pinned jar

    records: list[list[list[float]]] = []  # per fold, per instance: the votes

    @JImplements("moa.evaluation.LearningPerformanceEvaluator", deferred=True)
    class Recorder:
        def __init__(self, fold: int):
            self.fold = fold

        @JOverride
        def reset(self):
            pass

        @JOverride
        def addResult(self, example, votes):
            values = [float(v) for v in votes]
            records[self.fold].append(values)

        @JOverride
        def getPerformanceMeasurements(self):
            return JClass("moa.core.Measurement[]")(0)

        @JOverride
        def measureByteSize(self):
            return 0

        @JOverride
        def copy(self):
            records.append([])
            return Recorder(len(records) - 1)

        @JOverride
        def getDescription(self, sb, indent):
            pass

    task = JClass("moa.tasks.EvaluatePrequentialDelayedCV")()
    task.learnerOption.setValueViaCLIString(learner)
    task.streamOption.setValueViaCLIString(f"ArffFileStream -f {arff} -c -1")
    task.evaluatorOption.setCurrentObject(Recorder(-1))
    task.numFoldsOption.setValue(folds)
    task.delayLengthOption.setValue(delay)
    task.sampleFrequencyOption.setValue(10**8)
    task.validationMethodologyOption.setChosenLabel(METHODS[method])
    task.prepareForUse()
    task.doTask(JClass("moa.tasks.StandardTaskMonitor")(), None)
    votes = records[-folds:]
    classes = np.array([[max_index(v) for v in fold] for fold in votes], dtype=np.int8).T
    proba = np.array([[probability(v) for v in fold] for fold in votes], dtype=np.float64).T
    return classes, proba
