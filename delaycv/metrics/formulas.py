"""Metric definitions: names (``METRICS``) and formulas from the per-estimator sums.

Notation (all under the configured estimator, see ``rows`` for the sums). ``E(x | own)`` is an
elementary estimator: the weighted mean of indicator ``x`` over its own events, ``s / b``
(faded per own event under ``Fading``); it is NaN when it has no events (0/0). Divisions follow
IEEE arithmetic: 0/0 is NaN, x/0 is +-inf (never an exception). p = prediction, t = reference label,
classes 0 and 1 (1 = positive); abstentions (p = -1) enter only ``unknown*`` and the probability
metrics.

* ``classified`` = sum of w over evaluations with a known prediction (MOA "classified instances");
  ``tp``, ``fp``, ``tn``, ``fn`` = sums of w over p = t = 1, p = 1 != t, p = t = 0, p = 0 != t;
  ``unknown`` = sum of w over abstentions. These counts are never faded (MOA's integer counters):
  under ``Fading`` they are cumulative; under ``Sliding``/``Tumbling`` they cover the window/chunk.
* ``accuracy`` = E(p = t | known).
* ``kappa`` = (acc - pc) / (1 - pc), pc = sum_i E(p = i | known) * E(t = i | known).
* ``kappa_t`` = (acc - nochange_accuracy) / (1 - nochange_accuracy); ``nochange_accuracy`` =
  E(last = t | known) where ``last`` is the reference label of the previous known evaluation (the
  NoChange classifier, MOA's ``lastSeenClass``).
* ``kappa_m`` = (acc - majority_accuracy) / (1 - majority_accuracy); ``majority_accuracy`` =
  E(maj = t | known), maj the class with the largest E(t = i | known) so far (MOA's majority
  classifier; ties go to class 0).
* ``precision_i`` = E(t = i | p = i); ``recall_i`` = E(p = i | t = i); ``fpr_i`` =
  E(p != t | t != i) (so ``fpr_1`` = FP/(FP+TN) is the usual FPR and ``fpr_0`` the FN rate);
  ``precision``, ``recall`` = class averages; ``f1_i`` = 2 P_i R_i / (P_i + R_i);
  ``f1`` = 2 P R / (P + R) with the class-averaged P and R (MOA's "F1 Score");
  ``f2_i``, ``f2``: the same with F_beta = (1 + b^2) P R / (b^2 P + R), b = 2.
* ``gmean`` = sqrt(recall_0 * recall_1) (MOA "Gmean for recall"); ``gmean_pr`` =
  sqrt(precision_1 * recall_1) (stream-learn's G-mean 2); ``specificity`` = recall_0 =
  1 - fpr_1; ``balanced_accuracy`` = (recall_0 + recall_1) / 2.
* ``mcc`` = (TP TN - FP FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)) with the estimator's (faded)
  confusion sums (group A).
* Kappa variants against a reference value X_ref: (X - X_ref) / (1 - X_ref), as MOA.
  ``kappa_t_<x>`` uses the NoChange classifier's value of x, ``kappa_m_<x>`` the majority
  classifier's, for x in precision_i, recall_i, fpr_i, f1_i, gmean. The NoChange/majority
  precision_i, recall_i, fpr_i are E(last = t | p = i) etc. with the majority class read in the
  middle of MOA's class loop for class i (``nochange_*`` and ``majority_*`` columns); their F1 and
  G-mean are built from them. ``kappa_f1_i`` (ours, corrected) uses the chance classifier
  that predicts i at rate r_i = E(p = i) independently of the label: P_ref = c_i = E(t = i),
  R_ref = r_i, F1_ref = 2 c_i r_i / (c_i + r_i). (MOA's "Kappa Statistic F1 Score for class i"
  prints the Kappa M F1 value instead; see ``MOA_MEASUREMENTS``.)
* ``brier`` = E((q - t)^2), ``log_loss`` = E(-t ln q - (1 - t) ln(1 - q)) with q clipped to
  [eps, 1 - eps] (eps = 2.2e-16, as scikit-learn), ``info_score`` = E(I) with Kononenko and
  Bratko's information score in bits: for the prior P of the true class and the predicted
  probability P' of the true class, I = log2 P' - log2 P if P' >= P, else
  log2(1 - P) - log2(1 - P'). The prior is estimated prequentially from all earlier
  evaluations of this state (w > 0), with Laplace's rule P(c) = (n_c + 1) / (n + 2). These use
  every evaluation with w > 0 and a finite probability q = P(positive), abstentions included;
  evaluations with q = NaN are skipped.
* ``auc``: ROC AUC = P(q_pos > q_neg) + P(q_pos = q_neg) / 2 over the weighted pairs of the
  estimator's evaluations with a finite probability: all evaluations (Cumulative), the window
  (Sliding: prequential AUC, Brzezinski and Stefanowski), the chunk (Tumbling). Not defined under
  Fading (NaN).
* ``unknown_rate_i`` = E(p = -1 | t = i) over all evaluations with w > 0; ``unknown_rate`` =
  their average (UnkR, Faria et al.).
"""

from __future__ import annotations

import math

import numpy as np

from delaycv.metrics.rows import R

NAN = math.nan


METRICS: tuple[str, ...] = (
    "classified", "tp", "fp", "tn", "fn", "unknown",
    "accuracy", "kappa", "kappa_t", "kappa_m",
    "precision", "precision_0", "precision_1",
    "recall", "recall_0", "recall_1",
    "f1", "f1_0", "f1_1",
    "fpr_0", "fpr_1",
    "gmean", "specificity", "balanced_accuracy", "mcc",
    "f2", "f2_0", "f2_1", "gmean_pr",
    "brier", "log_loss", "info_score", "auc",
    "unknown_rate", "unknown_rate_0", "unknown_rate_1",
    "kappa_f1_0", "kappa_f1_1",
    "kappa_t_f1_0", "kappa_t_f1_1", "kappa_m_f1_0", "kappa_m_f1_1",
    "kappa_t_precision_0", "kappa_t_precision_1", "kappa_m_precision_0", "kappa_m_precision_1",
    "kappa_t_recall_0", "kappa_t_recall_1", "kappa_m_recall_0", "kappa_m_recall_1",
    "kappa_t_fpr_0", "kappa_t_fpr_1", "kappa_m_fpr_0", "kappa_m_fpr_1",
    "kappa_t_gmean", "kappa_m_gmean",
    "nochange_accuracy", "majority_accuracy",
    "nochange_precision_0", "nochange_precision_1",
    "majority_precision_0", "majority_precision_1",
    "nochange_recall_0", "nochange_recall_1", "majority_recall_0", "majority_recall_1",
    "nochange_fpr_0", "nochange_fpr_1", "majority_fpr_0", "majority_fpr_1",
)  # fmt: skip


def div(a: float, b: float) -> float:
    """IEEE division: 0/0 and nan/0 are NaN, x/0 is +-inf (Java double semantics), no exception."""
    if b:
        return a / b
    if a != a or a == 0:
        return NAN
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def kappa_of(x: float, ref: float) -> float:
    """(x - ref) / (1 - ref): MOA's kappa of a value against a reference classifier's value."""
    den = 1.0 - ref
    return (x - ref) / den if den else div(x - ref, den)


def fbeta(p: float, r: float, beta2: float) -> float:
    """F_beta = (1 + beta^2) P R / (beta^2 P + R); beta2 = beta^2. F1 is written as MOA does."""
    if beta2 == 1.0:
        return 2.0 * div(p * r, p + r)
    return div((1.0 + beta2) * p * r, beta2 * p + r)


def _sqrt(x: float) -> float:
    """sqrt; NaN for NaN (and for negative input, which cannot occur with weights >= 0)."""
    return math.sqrt(x) if x >= 0 else NAN


def _formulas(sums, c, auc, e, kappa, f1, div, sqrt) -> dict:
    """Every metric of ``METRICS`` (a dict in that order) from the estimator sums ``sums`` (one
    entry per ``rows.R``) and the unfaded sums ``c``, with the arithmetic given: ``e(x, b)`` the
    elementary estimator x / b (NaN when b = 0), ``kappa(x, ref)`` MOA's kappa against a reference
    value, ``f1(p, r)``, ``div`` IEEE division and ``sqrt`` (NaN for NaN). The one definition of the
    formulas, evaluated on floats by :func:`compute` and on arrays by :func:`compute_many`."""
    (
        a_w, a_correct, a_p0, a_p1, a_t0, a_t1, a_tp, a_fp, a_fn, a_tn,
        p0_w, p0_hit, p0_maj, p0_nc,
        p1_w, p1_hit, p1_maj, p1_nc,
        t0_w, t0_hit, t0_nc, t0_maj, t0_fpr, t0_fpr_nc, t0_fpr_maj,
        t1_w, t1_hit, t1_nc, t1_maj, t1_fpr, t1_fpr_nc, t1_fpr_maj,
        z_w, z_nc, z_maj,
        u0_w, u0_unk, u1_w, u1_unk,
        b_w, b_brier, b_logloss, b_info,
    ) = sums  # fmt: skip
    acc = e(a_correct, a_w)
    row0, row1, col0, col1 = e(a_p0, a_w), e(a_p1, a_w), e(a_t0, a_w), e(a_t1, a_w)
    pc = row0 * col0 + row1 * col1
    nc_acc, maj_acc = e(z_nc, z_w), e(z_maj, z_w)
    pr0, pr_nc0, pr_maj0 = e(p0_hit, p0_w), e(p0_nc, p0_w), e(p0_maj, p0_w)
    pr1, pr_nc1, pr_maj1 = e(p1_hit, p1_w), e(p1_nc, p1_w), e(p1_maj, p1_w)
    re0, re_nc0, re_maj0 = e(t0_hit, t0_w), e(t0_nc, t0_w), e(t0_maj, t0_w)
    # FPR of class 1 counts p != t among t != 1, i.e. among t = 0
    fpr1, fpr_nc1, fpr_maj1 = e(t0_fpr, t0_w), e(t0_fpr_nc, t0_w), e(t0_fpr_maj, t0_w)
    re1, re_nc1, re_maj1 = e(t1_hit, t1_w), e(t1_nc, t1_w), e(t1_maj, t1_w)
    fpr0, fpr_nc0, fpr_maj0 = e(t1_fpr, t1_w), e(t1_fpr_nc, t1_w), e(t1_fpr_maj, t1_w)
    p_avg = (pr0 + pr1) / 2.0
    r_avg = (re0 + re1) / 2.0
    f1_0, f1_1 = f1(pr0, re0), f1(pr1, re1)
    f1_nc0, f1_nc1 = f1(pr_nc0, re_nc0), f1(pr_nc1, re_nc1)
    f1_maj0, f1_maj1 = f1(pr_maj0, re_maj0), f1(pr_maj1, re_maj1)
    gm = sqrt(re0 * re1)
    gm_nc = sqrt(re_nc0 * re_nc1)
    gm_maj = sqrt(re_maj0 * re_maj1)
    mcc = div(
        a_tp * a_tn - a_fp * a_fn,
        sqrt((a_tp + a_fp) * (a_tp + a_fn) * (a_tn + a_fp) * (a_tn + a_fn)),
    )
    unk0, unk1 = e(u0_unk, u0_w), e(u1_unk, u1_w)
    return {
        "classified": c[_I_AW],
        "tp": c[_I_TP],
        "fp": c[_I_FP],
        "tn": c[_I_TN],
        "fn": c[_I_FN],
        "unknown": c[_I_U0] + c[_I_U1],
        "accuracy": acc,
        "kappa": kappa(acc, pc),
        "kappa_t": kappa(acc, nc_acc),
        "kappa_m": kappa(acc, maj_acc),
        "precision": p_avg,
        "precision_0": pr0,
        "precision_1": pr1,
        "recall": r_avg,
        "recall_0": re0,
        "recall_1": re1,
        "f1": f1(p_avg, r_avg),
        "f1_0": f1_0,
        "f1_1": f1_1,
        "fpr_0": fpr0,
        "fpr_1": fpr1,
        "gmean": gm,
        "specificity": re0,
        "balanced_accuracy": r_avg,
        "mcc": mcc,
        "f2": div(5.0 * p_avg * r_avg, 4.0 * p_avg + r_avg),
        "f2_0": div(5.0 * pr0 * re0, 4.0 * pr0 + re0),
        "f2_1": div(5.0 * pr1 * re1, 4.0 * pr1 + re1),
        "gmean_pr": sqrt(pr1 * re1),
        "brier": e(b_brier, b_w),
        "log_loss": e(b_logloss, b_w),
        "info_score": e(b_info, b_w),
        "auc": auc,
        "unknown_rate": (unk0 + unk1) / 2.0,
        "unknown_rate_0": unk0,
        "unknown_rate_1": unk1,
        "kappa_f1_0": kappa(f1_0, f1(col0, row0)),
        "kappa_f1_1": kappa(f1_1, f1(col1, row1)),
        "kappa_t_f1_0": kappa(f1_0, f1_nc0),
        "kappa_t_f1_1": kappa(f1_1, f1_nc1),
        "kappa_m_f1_0": kappa(f1_0, f1_maj0),
        "kappa_m_f1_1": kappa(f1_1, f1_maj1),
        "kappa_t_precision_0": kappa(pr0, pr_nc0),
        "kappa_t_precision_1": kappa(pr1, pr_nc1),
        "kappa_m_precision_0": kappa(pr0, pr_maj0),
        "kappa_m_precision_1": kappa(pr1, pr_maj1),
        "kappa_t_recall_0": kappa(re0, re_nc0),
        "kappa_t_recall_1": kappa(re1, re_nc1),
        "kappa_m_recall_0": kappa(re0, re_maj0),
        "kappa_m_recall_1": kappa(re1, re_maj1),
        "kappa_t_fpr_0": kappa(fpr0, fpr_nc0),
        "kappa_t_fpr_1": kappa(fpr1, fpr_nc1),
        "kappa_m_fpr_0": kappa(fpr0, fpr_maj0),
        "kappa_m_fpr_1": kappa(fpr1, fpr_maj1),
        "kappa_t_gmean": kappa(gm, gm_nc),
        "kappa_m_gmean": kappa(gm, gm_maj),
        "nochange_accuracy": nc_acc,
        "majority_accuracy": maj_acc,
        "nochange_precision_0": pr_nc0,
        "nochange_precision_1": pr_nc1,
        "majority_precision_0": pr_maj0,
        "majority_precision_1": pr_maj1,
        "nochange_recall_0": re_nc0,
        "nochange_recall_1": re_nc1,
        "majority_recall_0": re_maj0,
        "majority_recall_1": re_maj1,
        "nochange_fpr_0": fpr_nc0,
        "nochange_fpr_1": fpr_nc1,
        "majority_fpr_0": fpr_maj0,
        "majority_fpr_1": fpr_maj1,
    }


def _e(x: float, b: float) -> float:
    return x / b if b else NAN


def _f1(p: float, r: float) -> float:
    return 2.0 * div(p * r, p + r)


def compute(s, counts, auc: float) -> dict[str, float]:
    """All metrics of ``METRICS`` from the estimator sums ``s`` and the unfaded sums ``counts``.

    ``s`` and ``counts`` are sequences indexed by ``rows.R`` (``counts`` is ``s`` except under
    ``Fading``). Returns a dict in ``METRICS`` order. Python floats: one state costs ~40 us, where
    numpy's per-call overhead would cost ~20 times as much (it runs at every snapshot).
    """
    sums = s.tolist() if hasattr(s, "tolist") else s
    c = counts.tolist() if hasattr(counts, "tolist") else list(counts)
    return _formulas(sums, c, auc, _e, kappa_of, _f1, div, _sqrt)


def _e_many(x: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(b != 0, x / b, NAN)


def _kappa_many(x: np.ndarray, ref: np.ndarray) -> np.ndarray:
    return (x - ref) / (1.0 - ref)


def _f1_many(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    return 2.0 * ((p * r) / (p + r))


def compute_many(s, counts, auc) -> np.ndarray:
    """``compute`` for many states at once (``Metrics.snapshots``), with numpy.

    ``s`` and ``counts``: arrays indexed by ``rows.R`` in their last axis, one state (shape
    ``(N_ROWS,)``) or one per row (``(k, N_ROWS)``); ``counts`` is ``s`` except under
    ``Fading``. ``auc``: a number or one per row. Returns the values in ``METRICS`` order, shape
    ``(len(METRICS),)`` or ``(k, len(METRICS))``. The same formulas (``_formulas``) in element-wise
    IEEE arithmetic, so a state gives the same values alone, among others and in ``compute``
    (``test_compute_many_equals_compute``).
    """
    s = np.asarray(s, dtype=np.float64)
    single = s.ndim == 1
    cols = np.ascontiguousarray(np.atleast_2d(s).T)  # one contiguous row per sum
    c = np.ascontiguousarray(np.atleast_2d(np.asarray(counts, dtype=np.float64)).T)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        values = _formulas(cols, c, auc, _e_many, _kappa_many, _f1_many, np.divide, np.sqrt)
    out = np.empty((cols.shape[1], len(METRICS)))
    for k, name in enumerate(METRICS):
        out[:, k] = values[name]
    return out[0] if single else out


_I_AW, _I_TP, _I_FP, _I_TN, _I_FN = R["a_w"], R["a_tp"], R["a_fp"], R["a_tn"], R["a_fn"]
_I_U0, _I_U1 = R["u0_unk"], R["u1_unk"]
