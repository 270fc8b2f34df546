"""The tests' shorthand for one engine run: :func:`evaluate` builds the run's settings from specs
(:func:`delaycv.protocol.settings.make_settings`) and hands them to :func:`delaycv.engine.evaluate`, the
engine's one entry point; :func:`evaluate_dicts` does the same with the workflow's plain dicts."""

from __future__ import annotations

from delaycv import engine
from delaycv.protocol.settings import make_settings


def evaluate(
    stream,
    learner,
    policy="ideal",
    validation=None,
    *,
    observer_factory=None,
    progress=False,
    on_rows=None,
    **options,
):
    settings = make_settings(learner=learner, policy=policy, validation=validation, **options)
    return engine.evaluate(
        stream, settings, observer_factory=observer_factory, progress=progress, on_rows=on_rows
    )


def evaluate_dicts(
    stream, *, learner_spec, policy_spec, validation_spec=None, estimator_spec=None, **options
):
    return evaluate(
        stream,
        learner_spec,
        policy_spec,
        validation_spec,
        estimator=estimator_spec,
        **options,
    )


class EndsItsWorker:
    """A learner that ends the worker process it learns in (``os._exit``: a worker of the folds
    gone without its results, as one killed by the system is); in the main process (the probe)
    it learns nothing."""

    def predict_proba_one(self, x):
        return {0: 0.5, 1: 0.5}

    def learn_one(self, x, y):
        import multiprocessing
        import os

        if multiprocessing.parent_process() is not None:
            os._exit(3)

    def clone(self):
        return EndsItsWorker()
