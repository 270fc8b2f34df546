"""Names a user chooses among that the library and the command line share: the labels a metric
is scored against, the validation schemes, the estimator kinds, the alternatives of the paired
tests, the versions of Scott-Knott ESD, the file formats and x axes of the figures, the scopes of
the effort-aware measures.

They live apart from the modules that use them (:mod:`delaycv.stats`, :mod:`delaycv.figures`, which
import numpy, pandas, scipy and matplotlib), so that the command line offers them as choices, and
checks them, without importing any of those.
"""

#: The labels every metric is computed against: the observed label (the estimate a practitioner
#: reports), the true label (what the model achieved; their gap is the bias of realistic
#: evaluation) and the corrected one (the true-label value estimated from what a practitioner
#: knows at the checkpoint: docs/corrected.md).
REFERENCES = ("observed", "true", "corrected")
#: The references a practitioner can compute: estimates of the true value.
ESTIMATES = ("observed", "corrected")
#: The validation schemes (:mod:`delaycv.protocol.validation`) and the estimator kinds
#: (:mod:`delaycv.metrics.estimators`).
SCHEMES = ("prequential", "cv", "split", "bootstrap")
ESTIMATORS = ("cumulative", "sliding", "fading", "tumbling")
#: The scopes of the effort-aware measures (:mod:`delaycv.metrics.effort_scope`): every
#: evaluation so far, or the last ``width``.
EFFORT_SCOPES = ("cumulative", "sliding")
#: Deprecated spellings of estimator kinds, each with its kind: still accepted (the config, the
#: command line, :func:`delaycv.metrics.make_estimator`), with a warning that names the new one.
#: The sliding window's kind was ``window``, a word that means a waiting time everywhere else.
DEPRECATED_ESTIMATORS = {"window": "sliding"}
#: The alternatives of the paired tests, and McNemar's test's methods.
ALTERNATIVES = ("two-sided", "greater", "less")
MCNEMAR_METHODS = ("exact", "chi2")
#: The versions of Scott-Knott ESD: non-parametric, parametric.
RANKING_VERSIONS = ("np", "p")
#: The file formats of the figures (the default ones: delaycv.common.defaults.FORMATS), and the
#: x axes of their curves over the stream: stream time, stream position.
FIGURE_FORMATS = ("png", "pdf", "svg")
X_AXES = ("time", "checkpoint")
