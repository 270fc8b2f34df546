"""What each metric is (standard library only: the command line imports it): whether a larger value
is better (or neither: a metric without a direction), whether it is a count of instances, a rate
in [0, 1] or another score, its bounds and its unit. Every metric name the metrics subpackage produces (:data:`delaycv.metrics.METRICS` and
:data:`delaycv.metrics.EFFORT_METRICS`, the columns of the per-fold tables) is declared here once,
in :data:`PROPERTIES`; the statistics and the report read them through :func:`higher_is_better`
and :func:`is_fraction`. (MOA's measurement names, :data:`delaycv.metrics.MOA_MEASUREMENTS`, name
the columns of a MOA export, not of the tables the statistics read: they are not declared here.)

Kinds:

* ``"count"``: a number of instances (``tp``, ``classified``, ``ifa``, ...), bounded below by 0;
* ``"rate"``: a fraction in [0, 1] (accuracy, recall, FPR, Brier score, AUC, Popt, ...);
* ``"score"``: anything else (kappas and MCC, at most 1; log loss, at least 0; the information
  score, unbounded).

Directions: most metrics have one (``higher_is_better`` True or False). A few describe the
context of a learner's values rather than the learner, and have none (``higher_is_better``
None): ``effort_pci_20``, the share of the instances inspected within 20 % of the effort (a
model can score better by inspecting more small changes or fewer large ones), and the values of
the NoChange and majority reference classifiers (``nochange_*``, ``majority_*``: what the kappas
compare with). A learner is not ranked, and a difference is not called better or worse, on a
metric without a direction: :func:`higher_is_better` refuses it, :func:`has_direction` says which
they are.

A name not declared here (a column a user added) is taken as a larger-is-better score without
bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

from delaycv.common.errors import ConfigError, DelaycvError
from delaycv.metrics.effort_names import EFFORT_METRICS

#: The kinds of metric (see the module docstring).
KINDS = ("count", "rate", "score")


@dataclass(frozen=True)
class MetricProperties:
    """The properties of one metric: ``higher_is_better`` (None: no direction), ``kind`` (of
    :data:`KINDS`), ``unit`` (``"instances"``, ``"fraction"``, ``"bits"``, ``"loss"`` or ``""``
    for a unitless score), and its bounds ``low`` and ``high`` (None where it has none)."""

    name: str
    higher_is_better: bool | None
    kind: str
    unit: str
    low: float | None
    high: float | None

    @property
    def bounded(self) -> bool:
        """True when the metric has both a lower and an upper bound."""
        return self.low is not None and self.high is not None


def _declare(names: str, *, higher: bool | None, kind: str, unit: str, low, high) -> dict:
    return {name: MetricProperties(name, higher, kind, unit, low, high) for name in names.split()}


def _counts(names: str, *, higher: bool) -> dict:
    return _declare(names, higher=higher, kind="count", unit="instances", low=0.0, high=None)


def _rates(names: str, *, higher: bool | None) -> dict:
    return _declare(names, higher=higher, kind="rate", unit="fraction", low=0.0, high=1.0)


def _kappas(names: str, *, higher: bool) -> dict:
    return _declare(names, higher=higher, kind="score", unit="", low=None, high=1.0)


#: Every metric of the per-fold tables, by name.
PROPERTIES: dict[str, MetricProperties] = {
    # counts of instances (``unknown``: the instances the learner abstained on, fewer is better,
    # as for its rate ``unknown_rate``)
    **_counts("classified tp tn", higher=True),
    **_counts("fp fn unknown", higher=False),
    # rates in [0, 1]
    **_rates(
        "accuracy precision precision_0 precision_1 recall recall_0 recall_1 f1 f1_0 f1_1 "
        "gmean specificity balanced_accuracy f2 f2_0 f2_1 gmean_pr auc",
        higher=True,
    ),
    **_rates("fpr_0 fpr_1 unknown_rate unknown_rate_0 unknown_rate_1", higher=False),
    # the reference classifiers of the kappas: the context of a learner's values, no direction
    **_rates(
        "nochange_accuracy majority_accuracy nochange_precision_0 nochange_precision_1 "
        "majority_precision_0 majority_precision_1 nochange_recall_0 nochange_recall_1 "
        "majority_recall_0 majority_recall_1 nochange_fpr_0 nochange_fpr_1 majority_fpr_0 "
        "majority_fpr_1",
        higher=None,
    ),
    # the Brier score: a loss, and a fraction in [0, 1]
    **_declare("brier", higher=False, kind="rate", unit="loss", low=0.0, high=1.0),
    # kappa statistics (at most 1, no lower bound) and MCC (in [-1, 1])
    **_kappas(
        "kappa kappa_t kappa_m kappa_f1_0 kappa_f1_1 kappa_t_f1_0 kappa_t_f1_1 kappa_m_f1_0 "
        "kappa_m_f1_1 kappa_t_precision_0 kappa_t_precision_1 kappa_m_precision_0 "
        "kappa_m_precision_1 kappa_t_recall_0 kappa_t_recall_1 kappa_m_recall_0 "
        "kappa_m_recall_1 kappa_t_gmean kappa_m_gmean",
        higher=True,
    ),
    **_kappas("kappa_t_fpr_0 kappa_t_fpr_1 kappa_m_fpr_0 kappa_m_fpr_1", higher=False),
    **_declare("mcc", higher=True, kind="score", unit="", low=-1.0, high=1.0),
    **_declare("log_loss", higher=False, kind="score", unit="loss", low=0.0, high=None),
    **_declare("info_score", higher=True, kind="score", unit="bits", low=None, high=None),
    # the effort-aware measures (:data:`delaycv.metrics.EFFORT_METRICS`)
    **_rates("effort_recall_20 effort_precision_20 effort_f1_20 popt", higher=True),
    **_rates("effort_at_recall_20", higher=False),
    # the share of instances inspected within the budget: context, no direction
    **_rates("effort_pci_20", higher=None),
    **_counts("ifa", higher=False),
}

#: The metrics that are a kappa of a value x against a reference classifier's value r,
#: (x - r) / (1 - r) (:func:`delaycv.metrics.formulas.kappa_of`: Cohen's chance classifier,
#: NoChange, the majority class): +-inf where r = 1 and x != 1 (x/0, as MOA prints them), NaN
#: where both are 1 (0/0). No other metric of a state has an infinite value, on any evaluations
#: (tests/metrics).
KAPPA_METRICS: tuple[str, ...] = tuple(name for name in PROPERTIES if name.startswith("kappa"))


def metric_properties(metric: str) -> MetricProperties | None:
    """The properties of ``metric``, None for a name not declared in :data:`PROPERTIES`.

    Parameters
    ----------
    metric : str
        A metric name, e.g. ``"gmean"``.

    Returns
    -------
    MetricProperties or None

    Examples
    --------
    >>> p = metric_properties("fpr_1")
    >>> p.higher_is_better, p.kind, p.low, p.high, p.bounded
    (False, 'rate', 0.0, 1.0, True)
    >>> metric_properties("mcc").low, metric_properties("tp").unit, metric_properties("x")
    (-1.0, 'instances', None)
    """
    return PROPERTIES.get(metric)


def has_direction(metric: str) -> bool:
    """False for the metrics without a direction (``effort_pci_20``, the reference classifiers'
    ``nochange_*`` and ``majority_*``); True for every other, a name not declared included.

    Parameters
    ----------
    metric : str
        A metric name.

    Returns
    -------
    bool

    Examples
    --------
    >>> has_direction("gmean"), has_direction("effort_pci_20"), has_direction("my_column")
    (True, False, True)
    """
    declared = PROPERTIES.get(metric)
    return declared is None or declared.higher_is_better is not None


def no_direction_message(metric: str) -> str:
    """Why ``metric`` (one without a direction) cannot rank or judge learners, in one line."""
    what = (
        "the share of instances inspected within 20 % of the effort: the context of the "
        "effort-aware measures"
        if metric == "effort_pci_20"
        else "a value of the kappas' reference classifier, not of the learner"
    )
    return (
        f"metric {metric!r} has no direction ({what}): neither a higher nor a lower value is "
        "better, so learners are not ranked, nor a difference called better, by it"
    )


def higher_is_better(metric: str) -> bool:
    """True when a larger value of ``metric`` is better: False for losses, error counts, FPR,
    abstentions (``unknown``) and their rates, and the effort-aware ``ifa`` and
    ``effort_at_recall_20``; True for a name not declared. A metric without a direction
    (:func:`has_direction`) is refused.

    Parameters
    ----------
    metric : str
        A metric name.

    Returns
    -------
    bool

    Raises
    ------
    DelaycvError
        ``metric`` has no direction.

    Examples
    --------
    >>> higher_is_better("popt"), higher_is_better("ifa"), higher_is_better("fpr_1")
    (True, False, False)
    >>> higher_is_better("my_column")
    True
    >>> higher_is_better("effort_pci_20")
    Traceback (most recent call last):
    ...
    delaycv.common.errors.DelaycvError: metric 'effort_pci_20' has no direction (the share of instances inspected within 20 % of the effort: the context of the effort-aware measures): neither a higher nor a lower value is better, so learners are not ranked, nor a difference called better, by it
    """
    declared = PROPERTIES.get(metric)
    if declared is None:
        return True
    if declared.higher_is_better is None:
        raise DelaycvError(no_direction_message(metric))
    return declared.higher_is_better


def require_direction(metric: str, *, location: str | None = None, path: str | None = None) -> None:
    """Refuse ``metric`` when it has no direction (it cannot rank learners): a ``ConfigError``
    at ``location`` (``option --metric``, ``key tests.metrics.0``) of ``path``, else a
    :class:`DelaycvError`.

    >>> require_direction("gmean")
    >>> require_direction("nochange_accuracy", location="option --metric")
    Traceback (most recent call last):
    ...
    delaycv.common.errors.ConfigError: option --metric: metric 'nochange_accuracy' has no direction (a value of the kappas' reference classifier, not of the learner): neither a higher nor a lower value is better, so learners are not ranked, nor a difference called better, by it (expected a metric with a direction, e.g. gmean, popt, effort_recall_20)
    """
    if has_direction(metric):
        return
    if location is None and path is None:
        raise DelaycvError(no_direction_message(metric))
    raise ConfigError(
        no_direction_message(metric),
        path=path,
        location=location,
        expected="a metric with a direction, e.g. gmean, popt, effort_recall_20",
    )


def direction_words(metric: str) -> str:
    """``"higher is better"``, ``"lower is better"`` or ``"no direction"`` (a page's heading).

    >>> direction_words("fpr_1"), direction_words("effort_pci_20")
    ('lower is better', 'no direction')
    """
    if not has_direction(metric):
        return "no direction"
    return "higher is better" if higher_is_better(metric) else "lower is better"


def is_fraction(metric: str) -> bool:
    """True for the metrics whose values are fractions in [0, 1] (kind ``"rate"``: accuracy,
    precision, recall, F1, F2, FPR, specificity, balanced accuracy, G-means, Brier score, AUC,
    unknown rates, the NoChange/majority references of these, and the effort-aware measures but
    ``ifa``); False for counts, kappas and MCC, ``log_loss``, ``info_score`` and names not declared.

    Parameters
    ----------
    metric : str
        A metric name.

    Returns
    -------
    bool

    Examples
    --------
    >>> is_fraction("gmean"), is_fraction("kappa_m_gmean"), is_fraction("log_loss")
    (True, False, False)
    >>> is_fraction("popt"), is_fraction("ifa")
    (True, False)
    """
    declared = PROPERTIES.get(metric)
    return declared is not None and declared.kind == "rate"


def read_over(metric: str, estimator: str, effort_scope: str | None = None) -> str:
    """What the values of ``metric`` are read over, in the words of a page's heading or a
    figure's title: the estimator, or for an effort-aware measure its own scope (the
    ``effort_scope`` column; several joined by ", "), which the estimator does not apply to.

    >>> read_over("gmean", "tumbling", "sliding(2000)")
    'tumbling estimator'
    >>> read_over("popt", "tumbling", "sliding(2000)")
    'effort scope sliding(2000)'
    >>> read_over("popt", "fading")
    'effort scope'
    """
    if metric in EFFORT_METRICS:
        return f"effort scope {effort_scope}" if effort_scope else "effort scope"
    return f"{estimator} estimator"
