"""Policy contrasts: every label policy against a reference policy (docs/comparison.md; pure, opens no files).

For each (dataset, learner, estimator, reference, checkpoint, metric) and each policy P other than
the reference policy R (``ideal`` by default), the per-(seed, fold) difference
``d_i = P_i - R_i``. The pairs are ``(seed, fold)``: a fold's training weights come from the
validation seed, the run seed and the fold, and its learner seed from the run seed and the fold,
never from the policy (docs/engine.md, "Pairs across policies"), so fold i of seed s trains the
same learner on the same instance weights under every policy; only the labels it sees differ.

Three contrasts, told apart by the column ``reference`` (the labels that score P) and spelled out
in ``contrast``:

* ``observed`` ("estimate vs R"): P's observed-label value (what a practitioner under P would
  report) minus R's true-label value. Against ``ideal`` (whose observed labels are the true ones)
  this is what the HITL study measured: the evaluation's error plus the model's loss.
* ``true`` ("true value vs R"): P's true-label value minus R's: what the delay costs the model
  alone.
* ``corrected`` ("corrected estimate vs R"): P's corrected value (its true-label value estimated
  from what a practitioner under P knows: docs/corrected.md) minus R's true-label value: what a
  practitioner would conclude with the corrected estimate, to be held against the ``true`` row.

The difference of the two rows of one policy is P's bias (observed minus true,
:func:`delaycv.stats.bias.bias_tests`). R's side is always its true-label value.

Per row: both means over the pairs used, the mean difference with its 95 % t-interval
(:func:`delaycv.stats.companions.mean_ci`), the study's validity ``100 - |difference|`` with the metric in
percent (metrics that are fractions in [0, 1] only, see :func:`~delaycv.metrics.properties.is_fraction`; NaN for counts,
kappas, MCC, log loss and the information score, which have no percent scale), the paired sign-flip
permutation p-value (:func:`delaycv.stats.permutation.sign_flip_pvalues`), Holm over the policies of the
family (same dataset, learner, estimator, reference, checkpoint and metric), Cliff's delta of P's
against R's values and ``n``. As in the learner tests, a seed whose fold-by-fold values of both
policies repeat an earlier seed's is left out (:func:`delaycv.stats.paired.replicate_seeds`,
``n_duplicates``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from delaycv.common import defaults
from delaycv.common.choices import REFERENCES
from delaycv.common.errors import DelaycvError, InputError
from delaycv.metrics.properties import is_fraction
from delaycv.protocol.policy_windows import policy_ranks
from delaycv.stats.checkpoints import (
    at_checkpoints,
    checkpoint_times,
    choose_checkpoints,
    label_checkpoints,
    note_empty_tests,
    note_out_of_reach,
)
from delaycv.stats.companions import cliffs_delta, holm_by_group, mean_ci
from delaycv.stats.frames import _stage_clock
from delaycv.stats.paired import PairedTable, check_test_arguments, paired_table, wide_by_pair
from delaycv.stats.permutation import sign_flip_pvalues

#: The reference policy of the contrasts when the study has it (workflow key ``contrasts``).
DEFAULT_REFERENCE = defaults.CONTRAST_REFERENCE

#: Columns of :func:`policy_contrasts`, in order.
CONTRAST_COLUMNS = [
    "dataset",
    "learner",
    "estimator",
    "reference",
    "contrast",
    "at",
    "checkpoint",
    "time",
    "metric",
    "policy",
    "reference_policy",
    "n",
    "n_duplicates",
    "mean_policy",
    "mean_reference_policy",
    "difference",
    "ci_low",
    "ci_high",
    "validity",
    "cliffs_delta",
    "p_value",
    "exact",
    "p_holm",
    "family_size",
    "significant",
    "note",
]

#: Keys of a Holm family of contrasts (the policies of one family are adjusted together).
FAMILY = ("dataset", "learner", "estimator", "reference", "checkpoint", "metric")


#: The contrast of each reference, as its rows name it.
CONTRASTS = {"observed": "estimate", "true": "true value", "corrected": "corrected estimate"}


def contrast_label(reference: str, reference_policy: str) -> str:
    """The ``contrast`` text of a row: ``"estimate vs <R>"``, ``"true value vs <R>"`` or
    ``"corrected estimate vs <R>"``.

    Parameters
    ----------
    reference : str
        The labels that score the policy: ``"observed"`` (its estimate), ``"true"`` or
        ``"corrected"`` (its corrected estimate).
    reference_policy : str
        R, the policy contrasted with.

    Returns
    -------
    str

    Examples
    --------
    >>> contrast_label("observed", "ideal"), contrast_label("true", "ideal")
    ('estimate vs ideal', 'true value vs ideal')
    >>> contrast_label("corrected", "ideal")
    'corrected estimate vs ideal'
    """
    return f"{CONTRASTS[reference]} vs {reference_policy}"


def _wide(frame: pd.DataFrame, index: Sequence[str], metrics: Sequence[str]) -> pd.DataFrame:
    """Values of ``metrics`` with one row per ``index`` + metric and one column per (seed, fold)."""
    return wide_by_pair(frame, index, metrics, what="run, fold, reference and checkpoint")


def policy_contrasts(
    table: pd.DataFrame,
    *,
    reference_policy: str = DEFAULT_REFERENCE,
    metrics: Sequence[str],
    references: Sequence[str] = REFERENCES,
    checkpoints: str | int | Iterable[int] | Mapping[str, Sequence] = "last",
    resamples: int = defaults.RESAMPLES,
    seed: int = defaults.TEST_SEED,
    alpha: float = defaults.SIGNIFICANCE,
    progress: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Every policy of a merged per-fold table against ``reference_policy`` (module docstring).

    Parameters
    ----------
    table : pandas.DataFrame
        The merged per-fold checkpoint table (as for
        :func:`delaycv.stats.learner_tests.run_tests`).
    reference_policy : str, default ``DEFAULT_REFERENCE``
        R, the policy every other policy is contrasted with (its true-label values).
    metrics : sequence of str
        The metric columns; repeats are contrasted once.
    references : sequence of str, default ``("observed", "true", "corrected")``
        Which contrasts: ``observed`` = P's estimate vs R, ``true`` = P's true value vs R,
        ``corrected`` = P's corrected estimate vs R.
    checkpoints : str, int, iterable of int or mapping, default "last"
        Any request of :func:`delaycv.stats.checkpoints.choose_checkpoints`; ``at`` names it, a
        position beyond a stream is a row with ``note`` and no test.
    resamples : int, default 5000
        R of the sign-flip test (exact when ``2**n <= R``).
    seed : int, default 1
        The seed of the random sign vectors.
    alpha : float, default 0.05
        ``significant = p_holm <= alpha``, in (0, 1).
    progress : callable, optional
        Given one line per stage; None (default): silent.

    Returns
    -------
    pandas.DataFrame
        Columns ``CONTRAST_COLUMNS``: ``dataset``, ``learner``, ``estimator``, ``reference``,
        ``contrast`` (``"estimate vs R"`` / ``"true value vs R"``), ``at``, ``checkpoint``,
        ``time`` (Unix s of the checkpoint), ``metric``, ``policy``, ``reference_policy``, ``n``
        (pairs used), ``n_duplicates`` (pairs of repeated seeds left out), ``mean_policy``,
        ``mean_reference_policy`` (means over the pairs used), ``difference`` = mean(P - R),
        ``ci_low``/``ci_high`` (95 % t-interval), ``validity`` (``100 - 100 |difference|`` for
        fraction metrics, else NaN), ``cliffs_delta`` (P against R), ``p_value`` (two-sided
        sign-flip test), ``exact``, ``p_holm`` (Holm over the policies of the family),
        ``family_size``, ``significant`` and ``note`` (why a row has no test: a position beyond a
        stream, a policy that released no label by the checkpoint; or which checkpoint answered a
        request between checkpoints). Rows: by dataset, metric (as given), reference, estimator,
        learner, checkpoint, ``at``, then policies in reading order
        (:func:`delaycv.protocol.policy_windows.policy_sort_key`: preset, then windows as
        durations).

    Raises
    ------
    DelaycvError
        The table has no policy named ``reference_policy``; no metric, an unknown reference,
        ``alpha`` outside (0, 1), a malformed ``checkpoints`` request.
    InputError
        ``table`` lacks a column the contrasts read, holds two rows for one key, or
        ``reference_policy`` has no true-label rows (while another policy has rows to contrast).

    Examples
    --------
    One learner on 4 folds; ideal scores 0.6 on every fold, hitl_1d_15d's estimate 0.9, 0.8, 0.7,
    0.6 and its true value 0.5. The estimate's differences 0.3, 0.2, 0.1, 0 reach ``|mean| = 0.15``
    only with the observed signs or their mirror image, either sign of the 0: p = 4/16:

    >>> ideal = pd.DataFrame({"policy": "ideal", "reference": ["observed"] * 4 + ["true"] * 4,
    ...                       "gmean": [0.6] * 8})
    >>> hitl = pd.DataFrame({"policy": "hitl_1d_15d", "reference": ["observed"] * 4 + ["true"] * 4,
    ...                      "gmean": [0.9, 0.8, 0.7, 0.6] + [0.5] * 4})
    >>> t = pd.concat([ideal, hitl]).assign(dataset="d", estimator="cumulative", learner="a",
    ...                                     seed=1, fold=[0, 1, 2, 3] * 4, checkpoint=100, time=0.0)
    >>> c = policy_contrasts(t, metrics=["gmean"]).round(3)
    >>> c[["contrast", "difference", "validity", "cliffs_delta", "p_value"]].to_numpy().tolist()
    ... # doctest: +NORMALIZE_WHITESPACE
    [['estimate vs ideal', 0.15, 85.0, 0.75, 0.25],
     ['true value vs ideal', -0.1, 90.0, -1.0, 0.125]]
    """
    say = _stage_clock(progress)
    metrics = check_test_arguments(table, metrics, references, alpha, verb="contrast")
    policies = _check_reference_policy(table, reference_policy)
    chosen = choose_checkpoints(table, checkpoints)
    sub = at_checkpoints(table, chosen)
    base = sub[(sub["policy"] == reference_policy) & (sub["reference"] == "true")]
    others = sub[(sub["policy"] != reference_policy) & sub["reference"].isin(list(references))]
    if others.empty:
        return _no_contrasts(chosen)
    pairs = _pair_policies(table, base, others, reference_policy, metrics)
    say(
        f"{len(pairs.rows)} contrasts against {reference_policy} x {pairs.a.shape[1]} (seed, fold) "
        f"columns; {int(pairs.duplicates.sum())} duplicate pairs of repeated seeds left out"
    )
    out = _contrast_rows(pairs, reference_policy, resamples=resamples, seed=seed, alpha=alpha)
    out["time"] = checkpoint_times(sub, out)
    say("means, intervals, validity, Holm and Cliff's delta")
    out = label_checkpoints(out, chosen, CONTRAST_COLUMNS)
    out = note_empty_tests(
        out,
        table,
        _untested_contrast_note,
        policies=lambda r: [r["policy"], r["reference_policy"]],
    )
    out = note_out_of_reach(out, alpha=alpha, resamples=resamples)
    return _sort_contrasts(out, metrics, policies)


def _no_contrasts(chosen: pd.DataFrame) -> pd.DataFrame:
    """The table of :func:`policy_contrasts` when no policy has a row to contrast: only the rows
    of the requests with no checkpoint (:func:`~delaycv.stats.checkpoints.label_checkpoints`)."""
    empty = pd.DataFrame(
        {c: pd.Series(dtype=object) for c in CONTRAST_COLUMNS if c not in ("at", "note")}
    )
    return label_checkpoints(empty, chosen, CONTRAST_COLUMNS)


def _pair_policies(
    table: pd.DataFrame,
    base: pd.DataFrame,
    others: pd.DataFrame,
    reference_policy: str,
    metrics: Sequence[str],
) -> PairedTable:
    """The paired table of the contrasts: the other policies' rows ``others`` against the
    reference policy's true-label rows ``base`` of the same dataset, learner, estimator,
    checkpoint and metric. An InputError (naming ``table``) when ``base`` is empty."""
    if base.empty:
        raise InputError(
            f"the reference policy {reference_policy!r} has no true-label rows",
            path=table.attrs.get("path", "<table>"),
            location="column reference",
            expected=f"rows of policy {reference_policy!r} with reference 'true'",
        )
    shared = ["dataset", "learner", "estimator", "checkpoint"]
    return paired_table(
        _wide(others, [*shared, "reference", "policy"], metrics),
        _wide(base, shared, metrics),
        on=[*shared, "metric"],
    )


def _check_reference_policy(table: pd.DataFrame, reference_policy: str) -> list[str]:
    """The table's policies (in order of appearance), after checking that ``reference_policy``
    is one of them."""
    policies = list(dict.fromkeys(table["policy"]))
    if reference_policy not in policies:
        raise DelaycvError(
            f"no policy named {reference_policy!r} to contrast the policies with "
            f"(the table's policies: {', '.join(map(str, policies)) or 'none'})"
        )
    return policies


def _contrast_rows(
    pairs: PairedTable, reference_policy: str, *, resamples: int, seed: int, alpha: float
) -> pd.DataFrame:
    """One contrast per row of ``pairs`` (P's values against R's): the means, the difference
    with its interval, validity, Cliff's delta, the sign-flip test and Holm over the policies
    of each family (:data:`FAMILY`)."""
    a, b = pairs.a, pairs.b
    d = a - b
    p, n, exact = sign_flip_pvalues(d, resamples=resamples, seed=seed)
    difference, low, high = mean_ci(d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean_policy = np.nanmean(a, axis=1)
        mean_reference = np.nanmean(b, axis=1)
    out = pairs.rows
    out["contrast"] = [contrast_label(r, reference_policy) for r in out["reference"]]
    out["reference_policy"] = reference_policy
    out["n"] = n.astype(np.int64)
    out["n_duplicates"] = pairs.duplicates.astype(np.int64)
    out["mean_policy"] = mean_policy
    out["mean_reference_policy"] = mean_reference
    out["difference"] = difference
    out["ci_low"] = low
    out["ci_high"] = high
    fraction = out["metric"].map(is_fraction).to_numpy(bool)
    out["validity"] = np.where(fraction, 100.0 - 100.0 * np.abs(difference), np.nan)
    out["cliffs_delta"] = cliffs_delta(a, b)
    out["p_value"] = p
    out["exact"] = exact
    family = out.groupby(list(FAMILY), sort=False).ngroup().to_numpy()
    out["p_holm"] = holm_by_group(p, family)
    out["family_size"] = (
        pd.Series(p).notna().groupby(family).transform("sum").to_numpy().astype(np.int64)
    )
    out["significant"] = out["p_holm"].le(alpha).to_numpy()
    return out


def _untested_contrast_note(row: pd.Series) -> str:
    """The note of a contrast with no pair where both policies have a value."""
    return (
        f"no (seed, fold) pair where both {row['policy']} and {row['reference_policy']} "
        f"have a value of {row['metric']} (undefined there), no test"
    )


def _sort_contrasts(out: pd.DataFrame, metrics: Sequence[str], policies: Sequence[str]):
    """Rows by dataset, metric (as requested), reference, estimator, learner, checkpoint, ``at``,
    then policies in reading order (preset, then windows as durations)."""
    metric_rank = {m: i for i, m in enumerate(metrics)}
    policy_rank = policy_ranks([*policies, *out["policy"].astype(str)])
    keys = [
        "dataset",
        "_metric",
        "reference",
        "estimator",
        "learner",
        "checkpoint",
        "at",
        "_policy",
    ]
    return (
        out.assign(_metric=out["metric"].map(metric_rank), _policy=out["policy"].map(policy_rank))
        .sort_values(keys, kind="stable")
        .drop(columns=["_metric", "_policy"])
        .reset_index(drop=True)
    )
