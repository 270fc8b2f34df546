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
    return div(x - ref, 1.0 - ref)


def fbeta(p: float, r: float, beta2: float) -> float:
    """F_beta = (1 + beta^2) P R / (beta^2 P + R); beta2 = beta^2. F1 is written as MOA does."""
    if beta2 == 1.0:
        return 2.0 * div(p * r, p + r)
    return div((1.0 + beta2) * p * r, beta2 * p + r)


def _sqrt(x: float) -> float:
    return math.sqrt(x) if x >= 0 else NAN


def compute(s, counts, auc: float) -> dict[str, float]:
    """All metrics of ``METRICS`` from the estimator sums ``s`` and the unfaded sums ``counts``.

    ``s`` and ``counts`` are sequences indexed by ``rows.R`` (``counts`` is ``s`` except under
    ``Fading``). Returns a dict in ``METRICS`` order.
    """
    s = s.tolist() if hasattr(s, "tolist") else list(s)
    c = counts.tolist() if hasattr(counts, "tolist") else list(counts)

    def e(num: str, den: str) -> float:
        return div(s[R[num]], s[R[den]])

    acc = e("a_correct", "a_w")
    pc = e("a_p0", "a_w") * e("a_t0", "a_w") + e("a_p1", "a_w") * e("a_t1", "a_w")
    nc_acc = e("z_nc", "z_w")
    maj_acc = e("z_maj", "z_w")
    prec = [e("p0_hit", "p0_w"), e("p1_hit", "p1_w")]
    prec_nc = [e("p0_nc", "p0_w"), e("p1_nc", "p1_w")]
    prec_maj = [e("p0_maj", "p0_w"), e("p1_maj", "p1_w")]
    rec = [e("t0_hit", "t0_w"), e("t1_hit", "t1_w")]
    rec_nc = [e("t0_nc", "t0_w"), e("t1_nc", "t1_w")]
    rec_maj = [e("t0_maj", "t0_w"), e("t1_maj", "t1_w")]
    # FPR of class i counts p != t among t != i, i.e. among t = 1 - i.
    fpr = [e("t1_fpr", "t1_w"), e("t0_fpr", "t0_w")]
    fpr_nc = [e("t1_fpr_nc", "t1_w"), e("t0_fpr_nc", "t0_w")]
    fpr_maj = [e("t1_fpr_maj", "t1_w"), e("t0_fpr_maj", "t0_w")]
    p_avg = (prec[0] + prec[1]) / 2.0
    r_avg = (rec[0] + rec[1]) / 2.0
    f1 = [fbeta(prec[i], rec[i], 1.0) for i in (0, 1)]
    f1_nc = [fbeta(prec_nc[i], rec_nc[i], 1.0) for i in (0, 1)]
    f1_maj = [fbeta(prec_maj[i], rec_maj[i], 1.0) for i in (0, 1)]
    row = [e("a_p0", "a_w"), e("a_p1", "a_w")]
    col = [e("a_t0", "a_w"), e("a_t1", "a_w")]
    f1_chance = [fbeta(col[i], row[i], 1.0) for i in (0, 1)]
    gmean = _sqrt(rec[0] * rec[1])
    gmean_nc = _sqrt(rec_nc[0] * rec_nc[1])
    gmean_maj = _sqrt(rec_maj[0] * rec_maj[1])
    tp, fp, fn, tn = s[R["a_tp"]], s[R["a_fp"]], s[R["a_fn"]], s[R["a_tn"]]
    mcc = div(tp * tn - fp * fn, _sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)))
    unk = [e("u0_unk", "u0_w"), e("u1_unk", "u1_w")]
    return {
        "classified": c[R["a_w"]],
        "tp": c[R["a_tp"]],
        "fp": c[R["a_fp"]],
        "tn": c[R["a_tn"]],
        "fn": c[R["a_fn"]],
        "unknown": c[R["u0_unk"]] + c[R["u1_unk"]],
        "accuracy": acc,
        "kappa": kappa_of(acc, pc),
        "kappa_t": kappa_of(acc, nc_acc),
        "kappa_m": kappa_of(acc, maj_acc),
        "precision": p_avg,
        "precision_0": prec[0],
        "precision_1": prec[1],
        "recall": r_avg,
        "recall_0": rec[0],
        "recall_1": rec[1],
        "f1": fbeta(p_avg, r_avg, 1.0),
        "f1_0": f1[0],
        "f1_1": f1[1],
        "fpr_0": fpr[0],
        "fpr_1": fpr[1],
        "gmean": gmean,
        "specificity": rec[0],
        "balanced_accuracy": r_avg,
        "mcc": mcc,
        "f2": fbeta(p_avg, r_avg, 4.0),
        "f2_0": fbeta(prec[0], rec[0], 4.0),
        "f2_1": fbeta(prec[1], rec[1], 4.0),
        "gmean_pr": _sqrt(prec[1] * rec[1]),
        "brier": e("b_brier", "b_w"),
        "log_loss": e("b_logloss", "b_w"),
        "info_score": e("b_info", "b_w"),
        "auc": auc,
        "unknown_rate": (unk[0] + unk[1]) / 2.0,
        "unknown_rate_0": unk[0],
        "unknown_rate_1": unk[1],
        "kappa_f1_0": kappa_of(f1[0], f1_chance[0]),
        "kappa_f1_1": kappa_of(f1[1], f1_chance[1]),
        "kappa_t_f1_0": kappa_of(f1[0], f1_nc[0]),
        "kappa_t_f1_1": kappa_of(f1[1], f1_nc[1]),
        "kappa_m_f1_0": kappa_of(f1[0], f1_maj[0]),
        "kappa_m_f1_1": kappa_of(f1[1], f1_maj[1]),
        "kappa_t_precision_0": kappa_of(prec[0], prec_nc[0]),
        "kappa_t_precision_1": kappa_of(prec[1], prec_nc[1]),
        "kappa_m_precision_0": kappa_of(prec[0], prec_maj[0]),
        "kappa_m_precision_1": kappa_of(prec[1], prec_maj[1]),
        "kappa_t_recall_0": kappa_of(rec[0], rec_nc[0]),
        "kappa_t_recall_1": kappa_of(rec[1], rec_nc[1]),
        "kappa_m_recall_0": kappa_of(rec[0], rec_maj[0]),
        "kappa_m_recall_1": kappa_of(rec[1], rec_maj[1]),
        "kappa_t_fpr_0": kappa_of(fpr[0], fpr_nc[0]),
        "kappa_t_fpr_1": kappa_of(fpr[1], fpr_nc[1]),
        "kappa_m_fpr_0": kappa_of(fpr[0], fpr_maj[0]),
        "kappa_m_fpr_1": kappa_of(fpr[1], fpr_maj[1]),
        "kappa_t_gmean": kappa_of(gmean, gmean_nc),
        "kappa_m_gmean": kappa_of(gmean, gmean_maj),
        "nochange_accuracy": nc_acc,
        "majority_accuracy": maj_acc,
        "nochange_precision_0": prec_nc[0],
        "nochange_precision_1": prec_nc[1],
        "majority_precision_0": prec_maj[0],
        "majority_precision_1": prec_maj[1],
        "nochange_recall_0": rec_nc[0],
        "nochange_recall_1": rec_nc[1],
        "majority_recall_0": rec_maj[0],
        "majority_recall_1": rec_maj[1],
        "nochange_fpr_0": fpr_nc[0],
        "nochange_fpr_1": fpr_nc[1],
        "majority_fpr_0": fpr_maj[0],
        "majority_fpr_1": fpr_maj[1],
    }
