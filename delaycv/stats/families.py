"""The ranking families (docs/comparison.md, "Ranking across datasets"; pure, opens no files): learners ranked across datasets within
each policy, or policies within each learner (:func:`rank_across`: Friedman/Nemenyi of
:mod:`delaycv.stats.friedman` and Scott-Knott ESD of :mod:`delaycv.stats.scott_knott`), or
within each dataset (:func:`rank_within`), one family per (ranked, within, reference, estimator,
``at``, metric) (:data:`FAMILY`), and the reading order of their tables (:func:`sort_families`).

Everything is oriented so that 1 is best: a lower-is-better metric
(:func:`delaycv.metrics.properties.higher_is_better`) is negated before ranking and partitioning;
the tables report the values as measured.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from delaycv.common import defaults
from delaycv.common.errors import DelaycvError
from delaycv.metrics.properties import higher_is_better, require_direction
from delaycv.metrics.uncorrected import uncorrected
from delaycv.protocol.policy_windows import policy_ranks
from delaycv.stats.checkpoints import RELEASE_COLUMN, last_checkpoints
from delaycv.stats.friedman import (
    FRIEDMAN_TABLE_COLUMNS,
    FriedmanResult,
    block_ranks,
    friedman_core,
    friedman_result,
    no_test_note,
)
from delaycv.stats.paired import replicate_seeds
from delaycv.stats.scott_knott import SK_COLUMNS, check_version, partition_columns

#: Keys of a ranking family besides the ranked treatments (rank_across / rank_within tables).
FAMILY = ("ranked", "within", "reference", "estimator", "at", "metric")


_RUN_KEYS = ("dataset", "learner", "policy", "reference", "estimator")


#: what is ranked -> what it is ranked within
RANKED = {"learner": "policy", "policy": "learner"}


FRIEDMAN_COLUMNS = [*FAMILY, *FRIEDMAN_TABLE_COLUMNS]


NEMENYI_COLUMNS = [*FAMILY, "treatment_a", "treatment_b", "p_value", "significant"]


def _check_ranking(ranked: Iterable[str], version: str) -> None:
    """What is ranked is learners or policies; the Scott-Knott ESD version is np or p."""
    for r in ranked:
        if r not in RANKED:
            raise DelaycvError(f"cannot rank {r!r} (expected 'learner' or 'policy')")
    check_version(version)


def sk_columns(version: str, extra: Sequence[str] = ()) -> list[str]:
    """Columns of the Scott-Knott ESD tables of :func:`rank_across` and :func:`rank_within`.

    Parameters
    ----------
    version : {"np", "p"}
        The Scott-Knott ESD version (``median`` or ``mean`` column).
    extra : sequence of str, default ()
        Keys after the family's: () for :func:`rank_across`, ``("dataset",)`` for
        :func:`rank_within`.

    Returns
    -------
    list of str
        :data:`FAMILY`, ``extra``, the columns of
        :func:`~delaycv.stats.scott_knott.scott_knott_esd` and ``note``.

    Examples
    --------
    >>> sk_columns("np", ("dataset",))[5:]
    ['metric', 'dataset', 'treatment', 'group', 'rank', 'median', 'mean_rank', 'n', 'note']
    """
    return [*FAMILY, *extra, *SK_COLUMNS[version], "note"]


def _require(table: pd.DataFrame, columns: Iterable[str]) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise DelaycvError(
            f"the per-fold table has no column {missing} (it has {list(table.columns)})"
        )


def _with_at(table: pd.DataFrame) -> pd.DataFrame:
    """The rows to rank with an ``at`` column: the table's own, or the last checkpoint of each
    dataset, called "last"."""
    if "at" in table.columns:
        return table.assign(at=table["at"].astype(str))
    _require(table, ["checkpoint"])
    last = table["dataset"].map(last_checkpoints(table))
    return table[table["checkpoint"] == last].assign(at="last")


def _metrics(metrics: str | Iterable[str]) -> list[str]:
    """The metrics to rank, as a list; a metric without a direction is refused."""
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    for metric in metrics:
        require_direction(metric)
    return metrics


def _wide_families(
    table: pd.DataFrame, metrics: Sequence[str], ranked: str, extra: Sequence[str], blocks
):
    """Yield (family dict, block labels, treatment names, n x k array with NaN for a missing
    value, names of the treatments with no value at all in the family) of every family: the mean
    over the table's rows of each (family, block, treatment). A treatment with no value (e.g. an
    FPR before any negative label was released) is not ranked, but the callers report it."""
    within = RANKED[ranked]
    keys = [within, "reference", "estimator", "at", *extra]
    means = table.groupby([*keys, *blocks, ranked], sort=True, observed=True)[list(metrics)].mean()
    long = means.stack(future_stack=True)
    long.index = long.index.set_names("metric", level=-1)
    wide = long.unstack(ranked)  # index: keys, blocks, metric; columns: treatments
    order = [*keys[:4], "metric", *extra, *blocks]
    wide = wide.reorder_levels(order).sort_index()
    values = wide.to_numpy(dtype=np.float64)
    columns = np.asarray([str(c) for c in wide.columns], dtype=object)
    fam_levels = [*keys[:4], "metric", *extra]
    index = wide.index
    block_labels = (
        index.get_level_values(blocks[0]).to_numpy()
        if len(blocks) == 1
        else np.asarray(list(zip(*(index.get_level_values(b) for b in blocks), strict=True)))
    )
    for key, rows in wide.groupby(level=fam_levels, sort=False).indices.items():
        matrix = values[rows]
        present = ~np.isnan(matrix).all(axis=0)  # a treatment with no value at all is not here
        family = {
            "ranked": ranked,
            "within": str(key[0]),
            "reference": key[1],
            "estimator": key[2],
            "at": key[3],
            "metric": key[4],
        }
        family.update({e: key[5 + i] for i, e in enumerate(extra)})
        yield (
            family,
            block_labels[rows],
            list(columns[present]),
            matrix[:, present],
            list(columns[~present]),
        )


def _missing_note(matrix: np.ndarray, blocks, treatments, what: str) -> str:
    rows, cols = np.nonzero(np.isnan(matrix))
    if len(rows) == 0:
        return ""
    cells = [f"{treatments[j]} on {blocks[i]}" for i, j in zip(rows, cols, strict=True)]
    shown = ", ".join(cells[:3]) + (f" and {len(cells) - 3} more" if len(cells) > 3 else "")
    return f"no value for {shown}: every {what} needs a value of every treatment"


def _absent_note(rows: pd.DataFrame, family: dict, treatment: str, what: str) -> str:
    """Why ``treatment`` has no value in ``family``: its policy released no label (every fold's
    ``evaluated`` is 0 there: every evaluation pending), else the metric is undefined."""
    reason = uncorrected(family["reference"], family["metric"])
    if reason:
        return f"no value at any {what}: {reason}: not ranked"
    ranked = family["ranked"]
    policy = treatment if ranked == "policy" else family["within"]
    if RELEASE_COLUMN in rows.columns:
        within = RANKED[ranked]
        mask = (
            (rows[ranked].astype(str) == str(treatment))
            & (rows[within].astype(str) == str(family["within"]))
            & (rows["reference"] == family["reference"])
            & (rows["estimator"] == family["estimator"])
            & (rows["at"] == family["at"])
        )
        if "dataset" in family:
            mask &= rows["dataset"] == family["dataset"]
        evaluated = rows.loc[mask, RELEASE_COLUMN]
        if len(evaluated) and not (evaluated.fillna(0) > 0).any():
            where = (
                "before the end of the stream" if family["at"] == "last" else f"by {family['at']}"
            )
            return (
                f"no value at any {what}: policy {policy} released no label {where}, every "
                "evaluation pending (e.g. a window longer than the stream): not ranked"
            )
    return (
        f"no value at any {what} ({family['metric']} is undefined there, e.g. an FPR before "
        "any negative label was released): not ranked"
    )


def _absent_notes(rows: pd.DataFrame, family: dict, absent: Sequence[str], what: str) -> list:
    return [_absent_note(rows, family, t, what) for t in absent]


class _Columns:
    """Rows of a table gathered as columns (one DataFrame at the end)."""

    def __init__(self, columns: Sequence[str]):
        self.columns = list(columns)
        self.data: dict[str, list] = {c: [] for c in self.columns}

    def add(self, family: dict, size: int, **cols) -> None:
        for c in self.columns:
            if c in family:
                self.data[c].extend([family[c]] * size)
            else:
                value = cols[c]
                self.data[c].extend(
                    value if isinstance(value, list | np.ndarray) else [value] * size
                )

    def frame(self, integer: Sequence[str] = ()) -> pd.DataFrame:
        out = pd.DataFrame(self.data, columns=self.columns)
        for c in integer:
            out[c] = out[c].astype("Int64")
        return out


def _add_sk(
    into: _Columns, family: dict, treatments, matrix: np.ndarray, version: str, note: str
) -> None:
    k = len(treatments)
    if note:
        complete = matrix[~np.isnan(matrix).any(axis=1)]
        average = np.nanmedian if version == "np" else np.nanmean
        with np.errstate(all="ignore"):
            avg = average(matrix, axis=0) if len(matrix) else np.full(k, np.nan)
        mean_rank = (
            block_ranks(complete, higher_is_better=higher_is_better(family["metric"])).mean(axis=0)
            if len(complete)
            else np.full(k, np.nan)
        )
        into.add(
            family,
            k,
            treatment=list(treatments),
            group=[pd.NA] * k,
            rank=[pd.NA] * k,
            **{SK_COLUMNS[version][3]: avg},
            mean_rank=mean_rank,
            n=(~np.isnan(matrix)).sum(axis=0),
            note=note,
        )
        return
    core = partition_columns(matrix, treatments, version, higher_is_better(family["metric"]))
    into.add(family, k, note="", **{c: list(v) for c, v in core.items()})


@dataclass(frozen=True)
class Rankings:
    """The tables of :func:`rank_across`.

    Parameters
    ----------
    friedman : pandas.DataFrame
        One row per family and treatment: the Friedman/Nemenyi mean ranks
        (:data:`FRIEDMAN_COLUMNS`).
    nemenyi : pandas.DataFrame
        One row per tested family and treatment pair: the Nemenyi p-value
        (:data:`NEMENYI_COLUMNS`).
    scott_knott : pandas.DataFrame
        One row per family and treatment: the Scott-Knott ESD group (:func:`sk_columns`).
    alpha : float, default 0.05
        The level of the tests.

    Examples
    --------
    :meth:`result` rebuilds one family's :class:`~delaycv.stats.friedman.FriedmanResult` (for its
    critical-difference diagram):

    >>> t = pd.DataFrame({"dataset": ["d1"] * 3 + ["d2"] * 3 + ["d3"] * 3,
    ...                   "learner": ["a", "b", "c"] * 3, "policy": "ideal", "seed": 1, "fold": 0,
    ...                   "reference": "true", "estimator": "cumulative", "checkpoint": 100,
    ...                   "gmean": [0.9, 0.8, 0.7, 0.8, 0.7, 0.6, 0.7, 0.6, 0.5]})
    >>> r = rank_across(t, "gmean", ranked=("learner",))
    >>> family = r.families()[0]
    >>> family
    ('learner', 'ideal', 'true', 'cumulative', 'last', 'gmean')
    >>> result = r.result(family)
    >>> result.mean_ranks.tolist(), result.statistic, round(result.cd, 3)
    ([1.0, 2.0, 3.0], 6.0, 1.914)
    """

    friedman: pd.DataFrame
    nemenyi: pd.DataFrame
    scott_knott: pd.DataFrame
    alpha: float = defaults.SIGNIFICANCE

    def families(self) -> list[tuple]:
        """The family keys (tuples of the :data:`FAMILY` values), in the table's order.

        Returns
        -------
        list of tuple
        """
        return list(
            self.friedman[list(FAMILY)].drop_duplicates().itertuples(index=False, name=None)
        )

    def result(self, family: Sequence) -> FriedmanResult:
        """The :class:`~delaycv.stats.friedman.FriedmanResult` of one family.

        Parameters
        ----------
        family : sequence
            The family's :data:`FAMILY` values, in that order (an item of :meth:`families`).

        Returns
        -------
        FriedmanResult
            Over the treatments with a value (those with none are not ranked); its blocks are
            numbered 0 .. n - 1.

        Raises
        ------
        DelaycvError
            No such family (or none of its treatments has a value).
        """
        key = dict(zip(FAMILY, family, strict=True))
        mask = np.ones(len(self.friedman), dtype=bool)
        for c, v in key.items():
            mask &= (self.friedman[c] == v).to_numpy()
        rows = self.friedman[mask]
        rows = rows[rows["mean"].notna()]  # the treatments with no value there are not ranked
        if rows.empty:
            raise DelaycvError(f"no ranking family {key}")
        names = [str(t) for t in rows["treatment"]]
        nemenyi = None
        if not rows["note"].iloc[0]:
            mask = np.ones(len(self.nemenyi), dtype=bool)
            for c, v in key.items():
                mask &= (self.nemenyi[c] == v).to_numpy()
            pairs = self.nemenyi[mask]
            pos = {t: i for i, t in enumerate(names)}
            nemenyi = np.eye(len(names))
            i = pairs["treatment_a"].map(pos).to_numpy()
            j = pairs["treatment_b"].map(pos).to_numpy()
            nemenyi[i, j] = nemenyi[j, i] = pairs["p_value"].to_numpy()
        first = rows.iloc[0]
        core = {
            "mean_ranks": rows["mean_rank"].to_numpy(dtype=np.float64),
            "means": rows["mean"].to_numpy(dtype=np.float64),
            "statistic": float(first["statistic"]),
            "p_value": float(first["p_value"]),
            "p_permutation": float(first["p_permutation"]),
            "permutation_exact": bool(first["permutation_exact"]),
            "nemenyi": nemenyi,
            "cd": float(first["cd"]),
            "note": first["note"],
        }
        up = higher_is_better(key["metric"])
        return friedman_result(core, names, range(int(first["n"])), self.alpha, up)


def _add_absent(
    friedman: _Columns,
    sk: _Columns,
    rows: pd.DataFrame,
    family: dict,
    absent: Sequence[str],
    k: int,
    n: int,
    version: str,
) -> None:
    """The rows of the treatments of ``family`` with no value at any dataset (not ranked), each
    with the reason (:func:`_absent_note`); ``k`` treatments are ranked over ``n`` datasets."""
    note = _absent_notes(rows, family, absent, "dataset")
    friedman.add(
        family,
        len(absent),
        treatment=absent,
        mean_rank=np.nan,
        rank=pd.NA,
        mean=np.nan,
        k=k,
        n=n,
        statistic=np.nan,
        p_value=np.nan,
        p_permutation=np.nan,
        permutation_exact=False,
        cd=np.nan,
        note=note,
    )
    _add_sk(sk, family, absent, np.full((0, len(absent)), np.nan), version, note)


def _add_friedman(
    friedman: _Columns,
    nemenyi: _Columns,
    family: dict,
    blocks,
    treatments: list[str],
    matrix: np.ndarray,
    alpha: float,
    resamples: int,
    seed: int,
) -> str:
    """The Friedman rows of one family (best mean rank first) and, when it is tested, its
    Nemenyi rows; returns the family's note (why it has no test, ``""`` when tested)."""
    up = higher_is_better(family["metric"])
    k = len(treatments)
    note = _missing_note(matrix, blocks, treatments, "dataset")
    complete = matrix[~np.isnan(matrix).any(axis=1)] if note else matrix
    core = friedman_core(complete, alpha, up, resamples=resamples, seed=seed, tests=not note)
    note = note or core["note"]
    with np.errstate(all="ignore"):
        means = np.nanmean(matrix, axis=0) if len(matrix) else np.full(k, np.nan)
    mean_rank = core["mean_ranks"]
    order = np.lexsort((np.asarray(treatments, dtype=object), mean_rank))
    rank = pd.Series(mean_rank).rank(method="min").to_numpy()
    tested = not note
    friedman.add(
        family,
        k,
        treatment=[treatments[i] for i in order],
        mean_rank=mean_rank[order],
        rank=[int(x) if math.isfinite(x) else pd.NA for x in rank[order]],
        mean=means[order],
        k=k,
        n=len(blocks),
        statistic=core["statistic"] if tested else math.nan,
        p_value=core["p_value"] if tested else math.nan,
        p_permutation=core["p_permutation"] if tested else math.nan,
        permutation_exact=core["permutation_exact"] and tested,
        cd=core["cd"] if tested else math.nan,
        note=note,
    )
    if tested:
        i, j = np.triu_indices(k, 1)
        p = core["nemenyi"][i, j]
        nemenyi.add(
            family,
            len(i),
            treatment_a=[treatments[x] for x in i],
            treatment_b=[treatments[x] for x in j],
            p_value=p,
            significant=p <= alpha,
        )
    return note


def rank_across(
    table: pd.DataFrame,
    metrics: str | Iterable[str],
    *,
    ranked: Sequence[str] = ("learner", "policy"),
    version: str = "np",
    alpha: float = defaults.SIGNIFICANCE,
    resamples: int = defaults.RESAMPLES,
    seed: int = defaults.TEST_SEED,
) -> Rankings:
    """Rank learners within each policy and policies within each learner, across datasets.

    The value of a treatment on a dataset is its mean over folds and seeds (NaN values skipped). In
    each family (:data:`FAMILY`: what is ``ranked``, the learner or policy it is ranked ``within``,
    reference, estimator, at, metric) the blocks are the datasets; Friedman/Nemenyi
    (:func:`~delaycv.stats.friedman.friedman_nemenyi`) and Scott-Knott ESD
    (:func:`~delaycv.stats.scott_knott.scott_knott_esd` with ``version``) run when there are at
    least 3 datasets and every treatment has a value on each; otherwise the family's rows carry a
    ``note`` saying why (mean ranks over the complete datasets, no test, no group). A treatment
    with no value at any dataset is not ranked but has a row with the reason. Everything is
    oriented by the metric's direction (:func:`delaycv.metrics.properties.higher_is_better`): rank
    and group 1 = best.

    Parameters
    ----------
    table : pandas.DataFrame
        A per-fold checkpoint table (columns ``dataset``, ``learner``, ``policy``, ``seed``,
        ``fold``, ``reference``, ``estimator``, ``checkpoint`` and the metrics), already restricted
        to the chosen checkpoints. An ``at`` column names the chosen position of each dataset (e.g.
        "last", "1000") and aligns datasets whose checkpoints differ; without it the last
        checkpoint of each dataset is used and called "last".
    metrics : str or iterable of str
        The metric columns.
    ranked : sequence of str, default ("learner", "policy")
        What is ranked: learners (within each policy) and/or policies (within each learner).
    version : {"np", "p"}, default "np"
        The Scott-Knott ESD version.
    alpha : float, default 0.05
        The level of the tests, in (0, 1).
    resamples, seed : int, default 5000 and 1
        R and the seed of Friedman's permutation p-value
        (:func:`~delaycv.stats.friedman.friedman_permutation_p`).

    Returns
    -------
    Rankings
        Each table sorted by :func:`sort_families`, the rows of a family best first.

    Raises
    ------
    DelaycvError
        Something else ranked, an unknown ``version``, ``alpha`` outside (0, 1), ``resamples``
        below 1, a column missing.

    Examples
    --------
    Three datasets that all rank learner a before b before c (as in
    :func:`~delaycv.stats.friedman.friedman_nemenyi`: chi2 = 6):

    >>> t = pd.DataFrame({"dataset": ["d1"] * 3 + ["d2"] * 3 + ["d3"] * 3,
    ...                   "learner": ["a", "b", "c"] * 3, "policy": "ideal", "seed": 1, "fold": 0,
    ...                   "reference": "true", "estimator": "cumulative", "checkpoint": 100,
    ...                   "gmean": [0.9, 0.8, 0.7, 0.8, 0.7, 0.6, 0.7, 0.6, 0.5]})
    >>> r = rank_across(t, "gmean", ranked=("learner",))
    >>> r.friedman[["treatment", "mean_rank", "rank", "statistic"]].to_numpy().tolist()
    [['a', 1.0, 1, 6.0], ['b', 2.0, 2, 6.0], ['c', 3.0, 3, 6.0]]
    >>> r.nemenyi[["treatment_a", "treatment_b", "significant"]].to_numpy().tolist()
    [['a', 'b', False], ['a', 'c', True], ['b', 'c', False]]
    >>> r.scott_knott[["treatment", "group"]].to_numpy().tolist()
    [['a', 1], ['b', 2], ['c', 3]]
    >>> rank_across(t, "gmean", ranked=("policy",)).friedman["note"].tolist()[0]
    '1 treatment: nothing to rank'
    """
    metrics = _metrics(metrics)
    _check_ranking(ranked, version)
    if not 0.0 < alpha < 1.0:
        raise DelaycvError(f"alpha {alpha} is not in (0, 1)")
    if resamples < 1:
        raise DelaycvError(f"resamples {resamples} must be at least 1")
    _require(table, [*_RUN_KEYS, *metrics])
    rows = _with_at(table)
    friedman = _Columns(FRIEDMAN_COLUMNS)
    nemenyi = _Columns(NEMENYI_COLUMNS)
    sk = _Columns(sk_columns(version))
    for r in ranked:
        for family, blocks, treatments, matrix, absent in _wide_families(
            rows, metrics, r, (), ["dataset"]
        ):
            if absent:  # not ranked, not lost: a row each with the reason
                _add_absent(
                    friedman, sk, rows, family, absent, len(treatments), len(blocks), version
                )
            if not treatments:
                continue
            note = _add_friedman(
                friedman, nemenyi, family, blocks, treatments, matrix, alpha, resamples, seed
            )
            _add_sk(sk, family, treatments, matrix, version, note)
    return Rankings(
        sort_families(friedman.frame(["k", "n", "rank"])),
        sort_families(nemenyi.frame()),
        sort_families(sk.frame(["group", "rank", "n"])),
        alpha,
    )


def _natural(text: str) -> tuple:
    """``position_1000`` before ``position_10000``, ``fraction_0.5`` before ``fraction_1.0``."""
    parts = re.split(r"(\d+(?:\.\d+)?)", str(text))
    return tuple((0, float(p), "") if i % 2 else (1, 0.0, p) for i, p in enumerate(parts) if p)


def sort_families(frame: pd.DataFrame, extra: Sequence[str] = ()) -> pd.DataFrame:
    """The rows of a rankings table with their families in reading order.

    What is ranked (in order of first appearance), the policy a family of learners is ranked
    within in policy order (:func:`delaycv.protocol.policy_windows.policy_sort_key`: preset, then
    windows as durations; a learner a family of policies is ranked within by name), reference,
    estimator, the requested positions in numeric order (``position_1000`` before
    ``position_10000``), metric, then ``extra``; the rows of one family keep their order (best
    first).

    Parameters
    ----------
    frame : pandas.DataFrame
        A rankings table (with the :data:`FAMILY` columns and ``extra``).
    extra : sequence of str, default ()
        Further sort keys after the family's (``("dataset",)`` for :func:`rank_within`).

    Returns
    -------
    pandas.DataFrame
        The rows reordered (a stable sort), the index reset.

    Examples
    --------
    >>> f = pd.DataFrame({"ranked": "learner", "within": ["hitl_7d_90d", "hitl_1d_90d", "ideal"],
    ...                   "reference": "true", "estimator": "cumulative",
    ...                   "at": ["position_10000", "position_1000", "last"], "metric": "gmean"})
    >>> sort_families(f)[["within", "at"]].to_numpy().tolist()
    [['ideal', 'last'], ['hitl_1d_90d', 'position_1000'], ['hitl_7d_90d', 'position_10000']]
    """
    if frame.empty:
        return frame
    within = frame["within"].astype(str)
    is_policy = frame["ranked"].eq("learner")
    ranks = policy_ranks(within[is_policy])
    keys = pd.DataFrame(
        {
            "_ranked": frame["ranked"].map(
                {r: i for i, r in enumerate(dict.fromkeys(frame["ranked"]))}
            ),
            "_within": np.where(is_policy, within.map(ranks).fillna(-1), 0),
            "_within_name": np.where(is_policy, "", within),
            "_at": frame["at"].map(_natural),
        },
        index=frame.index,
    )
    order = pd.concat([keys, frame[["reference", "estimator", "metric", *extra]]], axis=1)
    columns = [
        "_ranked",
        "_within",
        "_within_name",
        "reference",
        "estimator",
        "_at",
        "metric",
        *extra,
    ]
    index = order.sort_values(columns, kind="stable").index
    return frame.loc[index].reset_index(drop=True)


def family_values(table: pd.DataFrame, family: dict) -> pd.DataFrame:
    """The values one family of :func:`rank_across` ranks.

    Parameters
    ----------
    table : pandas.DataFrame
        The per-fold table given to :func:`rank_across`.
    family : dict
        The :data:`FAMILY` keys of the family (a row of a rankings table).

    Returns
    -------
    pandas.DataFrame
        One row per dataset (block, sorted), one column per treatment (as str), each the mean over
        folds and seeds of the family's metric (NaN where a treatment has no value).

    Examples
    --------
    >>> t = pd.DataFrame({"dataset": ["d1"] * 4, "learner": ["a", "a", "b", "b"],
    ...                   "policy": "ideal", "fold": [0, 1, 0, 1], "reference": "true",
    ...                   "estimator": "cumulative", "checkpoint": 100,
    ...                   "gmean": [0.9, 0.7, 0.6, 0.5]})
    >>> family = {"ranked": "learner", "within": "ideal", "reference": "true",
    ...           "estimator": "cumulative", "at": "last", "metric": "gmean"}
    >>> family_values(t, family).round(3).to_dict()
    {'a': {'d1': 0.8}, 'b': {'d1': 0.55}}
    """
    rows = _with_at(table)
    ranked = family["ranked"]
    within = RANKED[ranked]
    mask = (
        (rows[within].astype(str) == str(family["within"]))
        & (rows["reference"] == family["reference"])
        & (rows["estimator"] == family["estimator"])
        & (rows["at"] == str(family["at"]))
    )
    means = rows[mask].groupby(["dataset", ranked], sort=True, observed=True)[family["metric"]]
    wide = means.mean().unstack(ranked)
    wide.columns = [str(c) for c in wide.columns]
    return wide


def rank_within(
    table: pd.DataFrame,
    metrics: str | Iterable[str],
    *,
    ranked: Sequence[str] = ("learner", "policy"),
    version: str = "np",
    min_observations: int = 2,
) -> pd.DataFrame:
    """Scott-Knott ESD within each dataset, over the folds.

    The observations of a treatment are its values at the (seed, fold) pairs (as the HITL study
    ranked its settings per project). Same families as :func:`rank_across` plus ``dataset``; same
    ``at`` rule. A (seed, fold) pair where some treatment of the family has no value (missing or
    NaN) is left out for the whole family, so the observations stay paired, and the ``note`` says
    how many; a family with fewer than ``min_observations`` complete pairs, or a single treatment,
    gets a ``note`` instead of groups.

    Parameters
    ----------
    table : pandas.DataFrame
        A per-fold checkpoint table, as for :func:`rank_across`.
    metrics : str or iterable of str
        The metric columns.
    ranked : sequence of str, default ("learner", "policy")
        What is ranked, as for :func:`rank_across`.
    version : {"np", "p"}, default "np"
        The Scott-Knott ESD version.
    min_observations : int, default 2
        The fewest complete (seed, fold) pairs a family needs.

    Returns
    -------
    pandas.DataFrame
        Columns :func:`sk_columns` with ``extra=("dataset",)``, sorted by :func:`sort_families`.

    Raises
    ------
    DelaycvError
        Something else ranked, an unknown ``version``, a column missing.

    Examples
    --------
    Two folds of one dataset; each learner's two values lie apart from the others':

    >>> t = pd.DataFrame({"dataset": "d1", "learner": ["a", "b", "c"] * 2, "policy": "ideal",
    ...                   "seed": 1, "fold": [0] * 3 + [1] * 3, "reference": "true",
    ...                   "estimator": "cumulative", "checkpoint": 100,
    ...                   "gmean": [0.9, 0.5, 0.1, 0.8, 0.4, 0.2]})
    >>> w = rank_within(t, "gmean", ranked=("learner",))
    >>> w[["dataset", "treatment", "group", "median", "n"]].round(3).to_numpy().tolist()
    [['d1', 'a', 1, 0.85, 2], ['d1', 'b', 2, 0.45, 2], ['d1', 'c', 3, 0.15, 2]]
    >>> rank_within(t, "gmean", ranked=("learner",), min_observations=3)["note"].iloc[0]
    '2 complete (seed, fold) pairs: Scott-Knott ESD needs at least 3'
    """
    metrics = _metrics(metrics)
    _check_ranking(ranked, version)
    _require(table, [*_RUN_KEYS, "seed", "fold", *metrics])
    rows = _with_at(table)
    sk = _Columns(sk_columns(version, ("dataset",)))
    for r in ranked:
        for family, pairs, treatments, matrix, absent in _wide_families(
            rows, metrics, r, ("dataset",), ["seed", "fold"]
        ):
            if absent:  # not ranked, not lost: a row each with the reason
                note = _absent_notes(rows, family, absent, "(seed, fold) pair")
                _add_sk(sk, family, absent, np.full((0, len(absent)), np.nan), version, note)
            if not treatments:
                continue
            complete = ~np.isnan(matrix).any(axis=1)
            repeated = _repeated_seeds(pairs, matrix) & complete
            keep = complete & ~repeated
            dropped = int((~complete).sum())
            if len(treatments) < 2:  # nothing to rank: no group 1 that means nothing
                _add_sk(sk, family, treatments, matrix, version, no_test_note(1, 0))
                continue
            if keep.sum() < min_observations:
                note = (
                    f"{int(keep.sum())} complete (seed, fold) pair"
                    f"{'s' if keep.sum() != 1 else ''}: Scott-Knott ESD needs at least "
                    f"{min_observations}"
                )
                _add_sk(sk, family, treatments, matrix, version, note)
                continue
            _add_sk(sk, family, treatments, matrix[keep], version, "")
            notes = []
            if dropped:
                notes.append(
                    f"{dropped} (seed, fold) pairs left out: a treatment has no value there"
                )
            if repeated.any():
                notes.append(
                    f"{int(repeated.sum())} (seed, fold) pairs counted once: their seed repeats an "
                    "earlier seed's values"
                )
            if notes:
                sk.data["note"][-len(treatments) :] = ["; ".join(notes)] * len(treatments)
    return sort_families(sk.frame(["group", "rank", "n"]), ("dataset",))


def _repeated_seeds(pairs: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Per (seed, fold) pair of a family (``pairs``: its labels, seed-major; ``matrix``: its
    values, a column per treatment), whether its seed repeats an earlier seed's values for every
    treatment (:func:`delaycv.stats.paired.replicate_seeds`): such a pair is an observation
    already counted (a learner that ignores its seed, under folds every seed shares), left out as
    the paired tests leave it out. Only where the pairs are every seed times every fold.

    >>> pairs = np.array([(1, 0), (1, 1), (2, 0), (2, 1)])
    >>> _repeated_seeds(pairs, np.array([[0.5, 0.1], [0.6, 0.2], [0.5, 0.1], [0.6, 0.2]])).tolist()
    [False, False, True, True]
    >>> _repeated_seeds(pairs, np.array([[0.5, 0.1], [0.6, 0.2], [0.5, 0.1], [0.6, 0.3]])).tolist()
    [False, False, False, False]
    """
    none = np.zeros(len(matrix), dtype=bool)
    if pairs.ndim != 2 or len(pairs) == 0:
        return none
    seeds, folds = np.unique(pairs[:, 0]), np.unique(pairs[:, 1])
    grid = np.array([(s, f) for s in seeds for f in folds])
    if len(seeds) < 2 or len(pairs) != len(grid) or not (pairs == grid).all():
        return none
    return replicate_seeds([column[None, :] for column in matrix.T], len(seeds))[0]
