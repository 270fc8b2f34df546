"""MOA's own ``EvaluatePrequentialDelayedCV`` run in this process (JPype), with an evaluator that
records every prediction: what the exactness tests compare delaycv's MOA learners with.

The task runs unchanged (MOA's code: its loop, its fold copies of one prepared learner, its
delayed training queue per fold); only its evaluator option is given an object, a recorder of the
votes each fold's ``addResult`` receives. The stream is an ARFF written from a delaycv stream (its
features, in order, then the class ``{0,1}``), read by MOA's ``ArffFileStream``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from delaycv.jvm.task import METHODS, write_arff

__all__ = [
    "TaskRun",
    "auc_score",
    "max_index",
    "moa_auc",
    "probability",
    "task_run",
    "task_votes",
    "write_arff",
]


def max_index(votes: list[float]) -> int:
    """The class MOA's evaluators read from votes (``Utils.maxIndex``: the first largest; 0 for
    no votes; a NaN is never larger)."""
    best, top = 0, votes[0] if votes else 0.0
    for i, v in enumerate(votes[1:], 1):
        if v > top:
            best, top = i, v
    return best


def auc_score(votes: list[float]) -> float:
    """The score MOA's ``BasicClassificationPerformanceEvaluator`` ranks for its ROC AUC
    (``getNormalizedProbability(votes, 1)``, read from MOA 2024.07's class): class 1's vote over
    the sum of the positive votes (0 when class 1's vote is not positive; 1/2, one over the
    number of classes, when no vote is), then at least 1e-15 (``Math.max``, which keeps a NaN).
    """
    total = 0.0
    for v in votes:
        if v > 0:
            total += v
    if total > 0:
        p = votes[1] / total if len(votes) > 1 and votes[1] > 0 else 0.0
    else:
        p = 0.5
    return math.nan if math.isnan(p) else max(p, 1e-15)


def moa_auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """The ROC AUC MOA's own estimator (``BasicClassificationPerformanceEvaluator.AucEstimator``,
    run in the JVM) gives ``scores`` added in their order with ``labels`` (1: positive)."""
    from jpype import JClass

    estimator = JClass("moa.evaluation.BasicClassificationPerformanceEvaluator").AucEstimator()
    for score, label in zip(scores.tolist(), labels.tolist(), strict=True):
        estimator.add(score, bool(label == 1))
    return float(estimator.getAUC())


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
    run = task_run(arff, learner, folds=folds, method=method, delay=delay)
    return run.classes, run.proba


@dataclass
class TaskRun:
    """What MOA's task gave, per (instance, fold) (shape n x folds): the class its evaluators
    read (``classes``), P(1) of the votes (``proba``, :func:`probability`), the score its AUC
    ranks (``scores``, :func:`auc_score`); and per fold its own ROC AUC at the end (``auc``)."""

    classes: np.ndarray
    proba: np.ndarray
    scores: np.ndarray
    auc: np.ndarray


def task_run(arff: Path, learner: str, *, folds: int, method: str, delay: int) -> TaskRun:
    """Run MOA's task on ``arff`` (:func:`task_votes`); each fold's votes also go to MOA's
    ``BasicClassificationPerformanceEvaluator`` with its ``rocAUC`` option (``-a``), as the
    task's own evaluator would receive them, whose AUC is read at the end."""
    from jpype import JClass, JImplements, JOverride

    from delaycv.jvm import learner as moa_learner

    moa_learner.java()  # the JVM, with the pinned jar
    basic = JClass("moa.evaluation.BasicClassificationPerformanceEvaluator")
    recorders: list = []  # one per fold, in the order the task copies them

    @JImplements("moa.evaluation.LearningPerformanceEvaluator", deferred=True)
    class Recorder:
        def __init__(self):
            self.votes: list[list[float]] = []
            self.moa = basic()
            self.moa.rocAucOption.set()
            self.moa.prepareForUse()

        @JOverride
        def reset(self):
            pass

        @JOverride
        def addResult(self, example, votes):
            self.votes.append([float(v) for v in votes])
            self.moa.addResult(example, votes)

        @JOverride
        def getPerformanceMeasurements(self):
            return JClass("moa.core.Measurement[]")(0)

        @JOverride
        def measureByteSize(self):
            return 0

        @JOverride
        def copy(self):
            recorders.append(Recorder())
            return recorders[-1]

        @JOverride
        def getDescription(self, sb, indent):
            pass

    task = JClass("moa.tasks.EvaluatePrequentialDelayedCV")()
    task.learnerOption.setValueViaCLIString(learner)
    task.streamOption.setValueViaCLIString(f"ArffFileStream -f {arff} -c -1")
    task.evaluatorOption.setCurrentObject(Recorder())
    task.numFoldsOption.setValue(folds)
    task.delayLengthOption.setValue(delay)
    task.sampleFrequencyOption.setValue(10**8)
    task.validationMethodologyOption.setChosenLabel(METHODS[method])
    task.prepareForUse()
    task.doTask(JClass("moa.tasks.StandardTaskMonitor")(), None)
    done = recorders[-folds:]
    return TaskRun(
        classes=np.array([[max_index(v) for v in r.votes] for r in done], dtype=np.int8).T,
        proba=np.array([[probability(v) for v in r.votes] for r in done]).T,
        scores=np.array([[auc_score(v) for v in r.votes] for r in done]).T,
        auc=np.array([float(r.moa.getROCAUC()) for r in done]),
    )
