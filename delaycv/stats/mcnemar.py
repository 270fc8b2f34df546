"""McNemar's test (pure, opens no files): two learners' per-instance correctness from their
prediction logs, per fold (:func:`mcnemar`), and for every pair of learners of one run with Holm
over the pairs of each fold (:func:`mcnemar_tests`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from delaycv.common import defaults
from delaycv.common.choices import REFERENCES
from delaycv.common.errors import ConfigError, DelaycvError, InputError
from delaycv.stats.companions import holm
from delaycv.stats.frames import _require_columns

MCNEMAR_COLUMNS = ["fold", "n", "a_only", "b_only", "statistic", "p_value", "method"]

#: the references whose labels are 0 or 1, against which a prediction is right or wrong
MCNEMAR_REFERENCES = ("observed", "true")

#: why McNemar's test leaves out the corrected reference
NOT_CORRECTED = (
    "McNemar's test counts the instances each learner predicted right, and a corrected label is "
    "an expected label, not a 0 or 1"
)


def mcnemar_references(references: Sequence[str]) -> tuple:
    """The references among ``references`` that McNemar's test takes (observed, true: those of
    0/1 labels), in their order; the corrected reference is left out (:data:`NOT_CORRECTED`).

    Raises ConfigError at the key ``tests.references`` when none is left (only the corrected
    reference).

    >>> mcnemar_references(("observed", "true", "corrected"))
    ('observed', 'true')
    """
    kept = tuple(r for r in references if r in MCNEMAR_REFERENCES)
    if not kept:
        raise ConfigError(
            f"{NOT_CORRECTED}: no reference to test",
            location="key tests.references",
            expected="reference observed or true beside McNemar's test",
        )
    return kept


def mcnemar(
    log_a: pd.DataFrame,
    log_b: pd.DataFrame,
    *,
    reference: str = "true",
    method: str = "exact",
    upto: int | None = None,
) -> pd.DataFrame:
    """McNemar's test per fold from two learners' prediction logs (``predictions.parquet``).

    Instances pair on (fold, index). Against ``reference``, a prediction is correct when it equals
    the label; an abstention (``pred == -1``) is not correct. ``a_only`` counts instances only a got
    right, ``b_only`` those only b got right.

    ``method="exact"``: scipy's binomial test of ``a_only`` out of ``a_only + b_only`` with
    probability 1/2 (statistic = ``a_only``). ``method="chi2"``: the continuity-corrected
    ``(max(|a_only - b_only| - 1, 0))² / (a_only + b_only)`` against chi-square with 1 degree of
    freedom. No discordant instance gives statistic 0 and p = 1.

    Parameters
    ----------
    log_a, log_b : pandas.DataFrame
        The two learners' prediction logs, with ``fold``, ``index``, ``pred`` and the column of
        ``reference``; each (fold, index) at most once per log.
    reference : {"true", "observed"}, default "true"
        ``"true"`` scores against the column ``true`` (the two logs must agree on it);
        ``"observed"`` against ``observed``, dropping the instances still pending
        (``observed == -1``) in a's log.
    method : {"exact", "chi2"}, default "exact"
        The test, as above.
    upto : int, optional
        Keep only the instances with ``index <= upto`` (a checkpoint); None (default): all.

    Returns
    -------
    pandas.DataFrame
        One row per fold (sorted), columns :data:`MCNEMAR_COLUMNS`: ``fold``, ``n`` (instances
        compared), ``a_only``, ``b_only``, ``statistic``, ``p_value``, ``method``.

    Raises
    ------
    DelaycvError
        An unknown ``reference`` or ``method``.
    InputError
        A log lacks a column; the logs disagree on a true label.

    Examples
    --------
    Five instances: a gets 4 right, b 1 (one that a also gets right); the 3 discordant instances
    all favour a, so the exact p-value is ``2 * (1/2)**3``:

    >>> a = pd.DataFrame({"fold": 0, "index": range(5), "true": [1, 0, 1, 0, 1],
    ...                   "pred": [1, 0, 1, 0, 0]})
    >>> b = a.assign(pred=[0, 1, 0, 0, 0])
    >>> mcnemar(a, b).to_numpy().tolist()
    [[0, 5, 3, 0, 3.0, 0.25, 'exact']]
    >>> mcnemar(a, b, method="chi2").round(4).to_numpy().tolist()  # (3 - 1)² / 3
    [[0, 5, 3, 0, 1.3333, 0.2482, 'chi2']]
    """
    if reference == "corrected":
        raise DelaycvError(f"{NOT_CORRECTED} (expected reference 'observed' or 'true')")
    if reference not in REFERENCES:
        raise DelaycvError(f"reference {reference!r} unknown (expected {REFERENCES})")
    if method not in ("exact", "chi2"):
        raise DelaycvError(f"McNemar method {method!r} unknown (expected 'exact' or 'chi2')")
    counts = _discordant_counts(log_a, log_b, reference, upto)
    rows = []
    for fold, row in counts.iterrows():
        b, c = int(row["a_only"]), int(row["b_only"])
        if b + c == 0:
            statistic, p = 0.0, 1.0
        elif method == "exact":
            statistic, p = float(b), float(stats.binomtest(b, b + c, 0.5).pvalue)
        else:
            statistic = max(abs(b - c) - 1, 0) ** 2 / (b + c)
            p = float(stats.chi2.sf(statistic, 1))
        rows.append((int(fold), int(row["n"]), b, c, statistic, p, method))
    return pd.DataFrame(rows, columns=MCNEMAR_COLUMNS)


def _discordant_counts(
    log_a: pd.DataFrame, log_b: pd.DataFrame, reference: str, upto: int | None
) -> pd.DataFrame:
    """Per fold (the index, sorted): ``n`` instances paired on (fold, index) with a known label
    (and ``index <= upto``), ``a_only`` and ``b_only`` (those only a, only b predicted right).
    An InputError when the logs disagree on a true label."""
    needed = ["fold", "index", "pred", reference]
    for name, log in (("a", log_a), ("b", log_b)):
        _require_columns(log, needed, f"prediction log of learner {name}")
    left = log_a[needed].rename(columns={"pred": "pred_a"})
    right = log_b[["fold", "index", "pred", reference]].rename(
        columns={"pred": "pred_b", reference: "label_b"}
    )
    both = left.merge(right, on=["fold", "index"], how="inner", validate="one_to_one")
    label = both[reference].to_numpy()
    if reference == "true":
        mismatch = label != both["label_b"].to_numpy()
        if mismatch.any():
            raise InputError(
                "the two prediction logs disagree on true labels",
                path=log_b.attrs.get("path", "<prediction log b>"),
                location=f"fold {both['fold'].iloc[np.flatnonzero(mismatch)[0]]}",
                expected="logs of the same stream",
            )
    keep = label >= 0
    if upto is not None:
        keep &= both["index"].to_numpy() <= upto
    both = both[keep]
    label = both[reference].to_numpy()
    ok_a = both["pred_a"].to_numpy() == label
    ok_b = both["pred_b"].to_numpy() == label
    frame = pd.DataFrame(
        {"fold": both["fold"].to_numpy(), "a_only": ok_a & ~ok_b, "b_only": ok_b & ~ok_a}
    )
    counts = frame.groupby("fold").agg(
        n=("a_only", "size"), a_only=("a_only", "sum"), b_only=("b_only", "sum")
    )
    return counts


def mcnemar_tests(
    logs: Mapping[str, pd.DataFrame],
    *,
    reference: str = "true",
    method: str = "exact",
    alpha: float = defaults.SIGNIFICANCE,
    upto: int | None = None,
) -> pd.DataFrame:
    """McNemar's test for every pair of learners of one (dataset, policy, seed), Holm per fold.

    Each pair ``learner_a < learner_b`` (by name) is tested per fold by :func:`mcnemar`, and
    :func:`~delaycv.stats.companions.holm` adjusts the p-values of the learner pairs of each fold.
    (Folds are not pooled: every fold predicts the same instances, so their counts are not
    independent.)

    Parameters
    ----------
    logs : mapping of str to pandas.DataFrame
        Learner name -> its prediction log.
    reference, method, upto
        As in :func:`mcnemar`.
    alpha : float, default 0.05
        ``significant = p_holm <= alpha``.

    Returns
    -------
    pandas.DataFrame
        One row per learner pair and fold: ``learner_a``, ``learner_b``, the columns of
        :data:`MCNEMAR_COLUMNS`, ``reference``, ``p_holm`` and ``significant`` (with fewer than two
        learners an empty table without ``reference``).

    Raises
    ------
    DelaycvError, InputError
        As :func:`mcnemar`.

    Examples
    --------
    Three learners: the p-values 0.25 (a, b), 1.0 (a, c) and 0.625 (b, c) become, by Holm,
    ``3 * 0.25``, then ``min(1, 2 * 0.625)`` and 1:

    >>> a = pd.DataFrame({"fold": 0, "index": range(5), "true": [1, 0, 1, 0, 1],
    ...                   "pred": [1, 0, 1, 0, 0]})
    >>> logs = {"a": a, "b": a.assign(pred=[0, 1, 0, 0, 0]), "c": a.assign(pred=1)}
    >>> t = mcnemar_tests(logs)
    >>> t[["learner_a", "learner_b", "a_only", "b_only", "p_value", "p_holm"]].to_numpy().tolist()
    [['a', 'b', 3, 0, 0.25, 0.75], ['a', 'c', 2, 1, 1.0, 1.0], ['b', 'c', 1, 3, 0.625, 1.0]]
    """
    rows = []
    for la, lb in itertools.combinations(sorted(logs), 2):
        res = mcnemar(logs[la], logs[lb], reference=reference, method=method, upto=upto)
        res.insert(0, "learner_b", lb)
        res.insert(0, "learner_a", la)
        rows.append(res)
    if not rows:
        return pd.DataFrame(
            columns=["learner_a", "learner_b", *MCNEMAR_COLUMNS, "p_holm", "significant"]
        )
    out = pd.concat(rows, ignore_index=True)
    out["reference"] = reference
    out["p_holm"] = np.nan
    for idx in out.groupby("fold").indices.values():
        out.loc[out.index[idx], "p_holm"] = holm(out["p_value"].to_numpy()[idx])
    out["significant"] = out["p_holm"] <= alpha
    return out
