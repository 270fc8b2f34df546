"""The defaults of an evaluation, in one place.

The command line (``delaycv evaluate``), the Python API (:func:`delaycv.evaluate`), a run's
settings (:func:`delaycv.protocol.settings.make_settings`, :func:`delaycv.metrics.make_estimator`,
:func:`~delaycv.protocol.validation.make_validation`) and the workflow config loader (:mod:`delaycv.study.loading` and the modules it uses) read them from here. The workflow's JSON schema
(``workflow/schemas/config.schema.yaml``) cannot import Python, so it repeats them;
``tests/common/test_defaults.py`` checks that the two agree.

A policy with a waiting time (``delay``, ``verification``, ``hitl``) has **no** default window:
its windows must be given (a silent 90 days would decide the result for the user).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from delaycv.common.choices import REFERENCES

#: The label policy when none is given: labels observed at once (the ideal, test-then-train).
POLICY = "ideal"

#: Validation scheme, number of folds k (1 for ``prequential``), seed of the bootstrap draws,
#: and which instances a fold evaluates (``all``: every fold evaluates every instance).
SCHEME = "bootstrap"
FOLDS = 10
PREQUENTIAL_FOLDS = 1
VALIDATION_SEED = 1
EVALUATE = "all"
#: Bootstrap weights from the validation seed alone (the same for every run seed) when true;
#: by default each run seed (replicate) draws its own weights.
FIXED_SPLIT = False

#: The run seed: learner seeds (derived per fold), prediction noise, inspection errors.
SEED = 1
#: Every seed (run, validation, tests, generator, jitter) is an integer from 0 to ``SEED_MAX``
#: (2**63 - 1): the run seed is an int64 column of the result tables.
SEED_MAX = 2**63 - 1

#: Estimator of the metrics: a fading factor ``ALPHA`` (the value of the HITL study, run with the
#: MOA extension); ``WIDTH`` of the sliding window and ``SIZE`` of the tumbling chunks when those
#: are chosen.
ESTIMATOR = "fading"
ALPHA = 0.99
WIDTH = 1000
SIZE = 1000

#: The scope of the effort-aware measures (the instances they rank): every evaluation so far, as
#: the just-in-time defect prediction literature reads a test set; ``sliding``: the last
#: ``WIDTH`` evaluations unless a width is given.
EFFORT_SCOPE = "cumulative"

#: A checkpoint every ``EVERY`` stream instances (and at the last instance).
EVERY = 500

#: The reference policy of the policy contrasts, when the study has a policy of this name
#: (workflow key ``contrasts.reference``; the schema cannot say "when", so it has no default there).
CONTRAST_REFERENCE = "ideal"

#: The metric of the command line when none is named: tested by ``delaycv compare``, ranked by
#: ``delaycv rank``, drawn by ``delaycv plot``, and the headline of ``delaycv evaluate``'s summary
#: line (the G-mean of the two classes' recalls, the JIT defect prediction papers' headline
#: measure).
METRIC = "gmean"

#: Predicted positive iff P(1) > ``THRESHOLD``; probability that a scored prediction is flipped.
THRESHOLD = 0.5
PREDICTION_NOISE = 0.0

#: Every checkpoint is scored against the ``corrected`` reference too (the true-label value
#: estimated from what is known then; ``evaluation.corrected``, ``--no-corrected``).
CORRECTED = True


def folds_for(scheme: str) -> int:
    """The default number of folds of ``scheme``: 1 for ``prequential``, else :data:`FOLDS`."""
    return PREQUENTIAL_FOLDS if scheme == "prequential" else FOLDS


def validation_spec(**given: Any) -> dict[str, Any]:
    """A complete validation spec: the ``given`` keys (``None`` = not given) over the defaults.

    >>> validation_spec(scheme="prequential")
    {'scheme': 'prequential', 'folds': 1, 'seed': 1, 'evaluate': 'all', 'fixed_split': False}
    """
    given = {k: v for k, v in given.items() if v is not None}
    scheme = given.get("scheme", SCHEME)
    spec = {"scheme": scheme, "folds": folds_for(scheme), "seed": VALIDATION_SEED}
    return {**spec, "evaluate": EVALUATE, "fixed_split": FIXED_SPLIT, **given}


#: The parameter each estimator kind takes, with its default.
ESTIMATOR_PARAMS: dict[str, tuple[str, Any] | None] = {
    "cumulative": None,
    "sliding": ("width", WIDTH),
    "fading": ("alpha", ALPHA),
    "tumbling": ("size", SIZE),
}

#: The parameter each kind of effort scope takes, with its default.
EFFORT_SCOPE_PARAMS: dict[str, tuple[str, Any] | None] = {
    "cumulative": None,
    "sliding": ("width", WIDTH),
}


def contrast_reference(policies: Iterable[str]) -> str | None:
    """The reference policy of the contrasts when none is named: :data:`CONTRAST_REFERENCE` when
    it is one of ``policies``, else none (no contrasts).

    >>> contrast_reference(["ideal", "hitl_7d_90d"]), contrast_reference(["delay_7d"])
    ('ideal', None)
    """
    return CONTRAST_REFERENCE if CONTRAST_REFERENCE in set(policies) else None


# --------------------------------------------------------------------------- the later stages

#: The tests of the compare stage, which the rankings share (workflow section ``tests``): the
#: metrics, the labels they are scored against, the checkpoints (``last``: each stream's last),
#: the random sign flips R, the significance level and the seed of the flips.
TEST_METRICS = ("gmean", "recall_1", "fpr_1")
TEST_REFERENCES = REFERENCES
TEST_CHECKPOINTS = "last"
RESAMPLES = 5000
SIGNIFICANCE = 0.05
TEST_SEED = 1
#: The learner tests' alternative hypothesis and McNemar's method (``delaycv compare``).
ALTERNATIVE = "two-sided"
MCNEMAR_METHOD = "exact"

#: Scott-Knott ESD's version (workflow key ``rankings.version``): non-parametric.
RANKING_VERSION = "np"

#: The figures (workflow section ``figures``; their metrics are the tested ones unless
#: ``figures.metric`` names others): the labels the curves are scored against, the files'
#: formats, the PNG resolution, the x axis of the curves over the stream, the seed of the final
#: distributions' sideways jitter.
FIGURE_REFERENCE = "observed"
FORMATS = ("png", "pdf")
DPI = 200
X_AXIS = "time"
JITTER_SEED = 0
