"""The paired table (docs/comparison.md, "What is paired with what"; pure, opens no files): the values of two things (two learners,
a learner's observed and true values, two policies) paired by ``(seed, fold)`` at one checkpoint,
the input of every paired test (the learner tests, the bias tests, the policy contrasts).

Every learner of a run sees the same fold split, and every policy the same folds and weights, so
their per-fold values pair up: with several seeds the pairs are ``(seed, fold)``.
:func:`wide_by_pair` lays a per-fold table out with one column per pair, :func:`paired_values`
turns two of its rows' sets into the matrices ``a`` and ``b`` of the pairs that count.

A pair is never counted twice: when a seed's fold-by-fold values of *both* sides are identical
(``==``) to an earlier seed's (a fixed split and deterministic learners), that seed's pairs repeat
the earlier ones and are left out (:func:`replicate_seeds`, :func:`distinct_pairs`); a test's
``n`` counts the pairs used and ``n_duplicates`` those left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from delaycv.common.choices import REFERENCES
from delaycv.common.errors import DelaycvError, InputError
from delaycv.stats.checkpoints import RELEASE_COLUMN
from delaycv.stats.frames import _require_columns

#: Keys of a comparison family (besides the metric); learners are compared within them.
KEYS = ("dataset", "policy", "estimator", "reference", "checkpoint")


#: What pairs two learners' values.
PAIR = ("seed", "fold")


def table_columns(metrics: str | Iterable[str]) -> list[str]:
    """The columns of the per-fold table that the tests, rankings and figures of ``metrics`` read.

    A merged table has ~90 columns; reading only these is ~5 times faster: those the tests need
    (:func:`required_columns`) and ``evaluated``
    (:data:`~delaycv.stats.checkpoints.RELEASE_COLUMN`), which says why a test has no value (a
    policy that released no label).

    Parameters
    ----------
    metrics : str or iterable of str
        The metric columns (a single name may be given as a str).

    Returns
    -------
    list of str
        Without repeats, in that order.

    Examples
    --------
    >>> table_columns("gmean")[-3:]
    ['time', 'gmean', 'evaluated']
    """
    return list(dict.fromkeys([*required_columns(metrics), RELEASE_COLUMN]))


def required_columns(metrics: str | Iterable[str]) -> list[str]:
    """The columns the tests of ``metrics`` cannot do without.

    Parameters
    ----------
    metrics : str or iterable of str
        The metric columns (a single name may be given as a str).

    Returns
    -------
    list of str
        :data:`KEYS`, ``learner``, :data:`PAIR`, ``time`` and the metrics, without repeats.

    Examples
    --------
    >>> required_columns(["gmean", "gmean"])  # doctest: +NORMALIZE_WHITESPACE
    ['dataset', 'policy', 'estimator', 'reference', 'checkpoint', 'learner', 'seed', 'fold', 'time',
     'gmean']
    """
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    return list(dict.fromkeys([*KEYS, "learner", *PAIR, "time", *metrics]))


def replicate_seeds(values: Sequence[np.ndarray], seeds: int) -> np.ndarray:
    """Which (seed, fold) pairs repeat another seed: True where the pair is to be left out.

    In row i, seed s repeats an earlier seed s' when, fold by fold, every array holds the same value
    at (s, fold) as at (s', fold) (bit-for-bit ``==``; NaN only against NaN). Then all of seed s's
    pairs are marked; the first seed of each group of identical seeds is kept. Equality is
    transitive, so the kept seeds are pairwise distinct. Rows are judged one by one (one test, one
    checkpoint, one metric).

    Parameters
    ----------
    values : sequence of numpy.ndarray
        Arrays of one shape (m, seeds * folds), columns in seed-major (seed, fold) order (e.g. the
        two learners' values of each test).
    seeds : int
        The number of seeds.

    Returns
    -------
    numpy.ndarray of bool
        Shape (m, seeds * folds).

    Raises
    ------
    DelaycvError
        The columns do not split into ``seeds`` seeds (or ``seeds`` < 1).

    Examples
    --------
    Three seeds of two folds; seed 2 repeats seed 1 on both sides, seed 3 differs:

    >>> a = np.array([[0.8, 0.9, 0.8, 0.9, 0.7, 0.6]])
    >>> b = np.array([[0.7, 0.7, 0.7, 0.7, 0.7, 0.7]])
    >>> replicate_seeds([a, b], 3).tolist()
    [[False, False, True, True, False, False]]
    """
    m, columns = values[0].shape
    if seeds < 1 or columns % seeds:
        raise DelaycvError(f"{columns} (seed, fold) columns do not split into {seeds} seeds")
    folds = columns // seeds
    shaped = [np.asarray(v, dtype=np.float64).reshape(m, seeds, folds) for v in values]
    repeat = np.zeros((m, seeds), dtype=bool)
    for later in range(1, seeds):
        for earlier in range(later):
            same = np.ones(m, dtype=bool)
            for v in shaped:
                x, y = v[:, later], v[:, earlier]
                same &= ((x == y) | (np.isnan(x) & np.isnan(y))).all(axis=1)
            repeat[:, later] |= same
    return np.repeat(repeat, folds, axis=1)


def distinct_pairs(
    a: np.ndarray, b: np.ndarray, seeds: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The paired values every test uses, each distinct pair once.

    NaN on both sides where either is missing, and on the pairs of a seed that repeats an earlier
    one (:func:`replicate_seeds`).

    Parameters
    ----------
    a, b : numpy.ndarray
        The two sides, (m, seeds * folds), columns in seed-major (seed, fold) order.
    seeds : int
        The number of seeds.

    Returns
    -------
    a, b : numpy.ndarray
        The values used, NaN where left out.
    duplicates : numpy.ndarray
        Per row, the number of pairs (known on both sides) left out for repeating a seed.

    Raises
    ------
    DelaycvError
        The columns do not split into ``seeds`` seeds.

    Examples
    --------
    Two seeds of two folds: b's missing value hides a's, and then seed 2's values (1, NaN) and
    (0, NaN) repeat seed 1's, so its known pair is left out:

    >>> a, b, duplicates = distinct_pairs(np.array([[1.0, 2, 1, 2]]),
    ...                                   np.array([[0.0, np.nan, 0, np.nan]]), 2)
    >>> a.tolist(), b.tolist(), duplicates.tolist()
    ([[1.0, nan, nan, nan]], [[0.0, nan, nan, nan]], [1])
    """
    missing = np.isnan(a - b)
    a = np.where(missing, np.nan, a)
    b = np.where(missing, np.nan, b)
    repeat = replicate_seeds([a, b], seeds)
    duplicates = (repeat & ~missing).sum(axis=1)
    return np.where(repeat, np.nan, a), np.where(repeat, np.nan, b), duplicates


@dataclass(frozen=True)
class PairedTable:
    """Values of two sides paired by ``(seed, fold)``, one row per test (:func:`paired_table`).

    Parameters
    ----------
    rows : pandas.DataFrame
        The keys of each row, one column per index level of the ``a`` side.
    a, b : numpy.ndarray
        (rows, seeds * folds) floats, columns in seed-major (seed, fold) order, NaN on both sides
        where either is missing and on the pairs of a seed that repeats an earlier one
        (:func:`distinct_pairs`).
    duplicates : numpy.ndarray
        Per row, the pairs left out for repeating a seed.
    seeds : int
        The number of seeds.

    Examples
    --------
    >>> t = PairedTable(pd.DataFrame({"k": ["x"]}), np.array([[1.0]]), np.array([[0.5]]),
    ...                 np.array([0]), 1)
    >>> (t.a - t.b).tolist()
    [[0.5]]
    """

    rows: pd.DataFrame
    a: np.ndarray
    b: np.ndarray
    duplicates: np.ndarray
    seeds: int


def paired_table(a: pd.DataFrame, b: pd.DataFrame, on: Sequence[str] | None = None) -> PairedTable:
    """The one paired table of the learner tests, the bias tests and the policy contrasts.

    Parameters
    ----------
    a, b : pandas.DataFrame
        The two sides laid out wide, one column per (seed, fold) pair (as :func:`wide_by_pair`
        gives them). Their columns are completed to every seed x every fold of either side
        (missing pairs NaN), in seed-major order.
    on : sequence of str, optional
        The index levels of ``a`` that name the row of ``b`` each row of ``a`` is paired with
        (``b`` is indexed by them, in that order). None (default): ``b`` is indexed like ``a``.

    Returns
    -------
    PairedTable
        One row per row of ``a``, sorted by its index; a row of ``a`` without a row of ``b`` has
        no pair (all NaN).

    Examples
    --------
    Two seeds whose values repeat each other count once:

    >>> cols = pd.MultiIndex.from_product([[1, 2], [0, 1]], names=["seed", "fold"])
    >>> a = pd.DataFrame([[0.8, 0.9, 0.8, 0.9]], index=pd.Index(["x"], name="k"), columns=cols)
    >>> b = pd.DataFrame([[0.7, 0.7, 0.7, 0.7]], index=pd.Index(["x"], name="k"), columns=cols)
    >>> t = paired_table(a, b)
    >>> t.a.tolist(), t.b.tolist(), t.duplicates.tolist(), t.seeds
    ([[0.8, 0.9, nan, nan]], [[0.7, 0.7, nan, nan]], [2], 2)
    """
    seeds = sorted(set(a.columns.unique(level=0)) | set(b.columns.unique(level=0)))
    folds = sorted(set(a.columns.unique(level=1)) | set(b.columns.unique(level=1)))
    grid = pd.MultiIndex.from_product([seeds, folds], names=list(PAIR))
    a = a.reindex(columns=grid).sort_index()
    rows = a.index.to_frame(index=False)
    keys = a.index if on is None else pd.MultiIndex.from_frame(rows[list(on)])
    b = b.reindex(columns=grid).reindex(keys)
    values_a, values_b, duplicates = distinct_pairs(
        a.to_numpy(np.float64), b.to_numpy(np.float64), len(seeds)
    )
    return PairedTable(rows, values_a, values_b, duplicates, len(seeds))


def check_test_arguments(
    table: pd.DataFrame,
    metrics: str | Iterable[str],
    references: Iterable[str],
    alpha: float,
    *,
    verb: str,
) -> list[str]:
    """The metrics as a list without repeats, after the checks every test of a per-fold table makes.

    At least one metric, the table has the columns the tests read (:func:`required_columns`),
    known references, ``0 < alpha < 1``.

    Parameters
    ----------
    table : pandas.DataFrame
        The per-fold table.
    metrics : str or iterable of str
        The metrics to test (a single name may be given as a str).
    references : iterable of str
        The references tested, each of :data:`~delaycv.common.choices.REFERENCES`.
    alpha : float
        The level of the tests.
    verb : str
        What the caller does with the metrics (``"test"``, ``"contrast"``), for the message.

    Returns
    -------
    list of str

    Raises
    ------
    DelaycvError
        No metric, an unknown reference, ``alpha`` outside (0, 1).
    InputError
        ``table`` lacks a column the tests read.

    Examples
    --------
    >>> t = pd.DataFrame(columns=required_columns("gmean"))
    >>> check_test_arguments(t, ["gmean", "gmean"], ["true"], 0.05, verb="test")
    ['gmean']
    >>> check_test_arguments(t, "gmean", ["true"], 1.5, verb="test")
    Traceback (most recent call last):
    ...
    delaycv.common.errors.DelaycvError: alpha 1.5 must lie in (0, 1)
    """
    metrics = [metrics] if isinstance(metrics, str) else list(dict.fromkeys(metrics))
    if not metrics:
        raise DelaycvError(f"no metric to {verb} (expected at least one metric name)")
    _require_columns(table, required_columns(metrics), "the per-fold table")
    bad = [r for r in references if r not in REFERENCES]
    if bad:
        raise DelaycvError(f"reference(s) {bad} unknown (expected {REFERENCES})")
    check_alpha(alpha)
    return metrics


def check_alpha(alpha: float) -> None:
    """Refuse a significance level outside (0, 1) (:class:`~delaycv.common.errors.DelaycvError`).

    >>> check_alpha(0.05)
    >>> check_alpha(0)
    Traceback (most recent call last):
    ...
    delaycv.common.errors.DelaycvError: alpha 0 must lie in (0, 1)
    """
    if not 0 < alpha < 1:
        raise DelaycvError(f"alpha {alpha} must lie in (0, 1)")


def wide_by_pair(
    table: pd.DataFrame,
    keys: Sequence[str],
    metrics: Sequence[str],
    *,
    levels: Sequence[str] | None = None,
    what: str,
) -> pd.DataFrame:
    """The values of ``metrics`` laid out with one column per (seed, fold) pair.

    Parameters
    ----------
    table : pandas.DataFrame
        A per-fold table with ``keys``, ``seed``, ``fold`` and the metrics.
    keys : sequence of str
        The columns that name a row (with the metric).
    metrics : sequence of str
        The metric columns.
    levels : sequence of str, optional
        The order of the index levels, ``keys`` and ``"metric"`` in some order; default ``keys``
        then ``"metric"``.
    what : str
        What must be unique, for the message of a duplicate row.

    Returns
    -------
    pandas.DataFrame
        One row per ``keys`` and metric, one column per (seed, fold) pair (NaN where a row has no
        value there).

    Raises
    ------
    InputError
        Two rows with the same keys, seed and fold (a run merged twice), naming the first.

    Examples
    --------
    >>> t = pd.DataFrame({"dataset": "d", "seed": [1, 1, 2], "fold": [0, 1, 0],
    ...                   "gmean": [0.5, 0.6, 0.7]})
    >>> wide = wide_by_pair(t, ["dataset"], ["gmean"], what="(dataset, seed, fold)")
    >>> wide.columns.tolist(), wide.to_numpy().tolist()
    ([(1, 0), (1, 1), (2, 0)], [[0.5, 0.6, 0.7]])
    """
    index = [*keys, *PAIR]
    dup = table.duplicated(index)
    if dup.any():
        row = table.loc[dup, index].iloc[0].to_dict()
        raise InputError(
            f"two rows for one {what}",
            path=table.attrs.get("path", "<table>"),
            location=f"row {int(np.flatnonzero(dup.to_numpy())[0])}: {row}",
            expected="one row per fold, checkpoint and reference of each run (merge each run once)",
        )
    long = table[[*index, *metrics]].melt(id_vars=index, var_name="metric", value_name="value")
    levels = [*keys, "metric"] if levels is None else list(levels)
    return long.set_index([*levels, *PAIR])["value"].unstack(list(PAIR))
