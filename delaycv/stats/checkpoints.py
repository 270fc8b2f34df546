"""The checkpoint request (pure, opens no files): which checkpoint of each dataset a result table is
computed at, and how a row that has no test says why.

A request (the workflow's ``tests.checkpoints``, ``delaycv compare --checkpoint``) is checked
once, without a table, by :func:`delaycv.protocol.checkpoints.check_checkpoint_request`, and resolved once per table by
:func:`choose_checkpoints` (``"last"``, ``"all"``, positions, fractions, times or checkpoint
numbers); :func:`at_checkpoints` keeps a table's rows at the chosen checkpoints and
:func:`label_checkpoints` gives a result table the request's ``at`` and ``note`` (a row per
requested position, with no test where the request has no checkpoint). A test with a checkpoint
but no pair gets its reason from :func:`note_empty_tests` (a policy that released no label by
then, :func:`released_nothing`); :func:`untested_notes` sums them up for a log. A request that
no checkpoint of the tables answers at all is refused by :func:`require_an_answer`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from delaycv.common.errors import InputError
from delaycv.common.words import describe_time
from delaycv.metrics.uncorrected import uncorrected
from delaycv.protocol.checkpoints import (
    check_checkpoint_request,
    fraction_position,
)
from delaycv.stats.frames import _require_columns
from delaycv.stats.permutation import smallest_p


def last_checkpoints(table: pd.DataFrame) -> pd.Series:
    """The "last" checkpoint of each dataset: the largest checkpoint in the table, by dataset.

    Parameters
    ----------
    table : pandas.DataFrame
        A per-fold table with the columns ``dataset`` and ``checkpoint``.

    Returns
    -------
    pandas.Series
        Dataset -> its largest checkpoint, sorted by dataset.

    Raises
    ------
    InputError
        ``table`` lacks ``dataset`` or ``checkpoint``.

    Examples
    --------
    >>> t = pd.DataFrame({"dataset": ["b", "a", "a"], "checkpoint": [800, 500, 1000]})
    >>> last_checkpoints(t).to_dict()
    {'a': 1000, 'b': 800}
    """
    _require_columns(table, ["dataset", "checkpoint"], "the per-fold table")
    return table.groupby("dataset", sort=True)["checkpoint"].max()


#: Columns of :func:`choose_checkpoints`.
CHOSEN_COLUMNS = ["dataset", "at", "checkpoint", "note"]


def _fraction_label(fraction: float) -> str:
    return f"fraction_{float(fraction)}"


def describe_at(at: str) -> str:
    """A requested position (the ``at`` of :func:`choose_checkpoints`) in words, as titles and
    headings say it.

    Parameters
    ----------
    at : str
        ``"last"``, ``"all"``, ``"position_<p>"``, ``"fraction_<f>"``, ``"time_<T>"`` or
        ``"checkpoint_<n>"``; another text is returned as it is.

    Returns
    -------
    str

    Examples
    --------
    >>> [describe_at(a) for a in ("last", "all", "position_5000")]
    ['the last checkpoint', 'every checkpoint', 'position 5000']
    >>> [describe_at(a) for a in ("fraction_0.5", "checkpoint_400")]
    ['fraction 0.5 of the stream', 'checkpoint 400']
    >>> describe_at("time_1546300800")
    'time 2019-01-01 00:00:00 UTC (Unix 1546300800)'
    """
    whole = {"last": "the last checkpoint", "all": "every checkpoint"}
    if at in whole:
        return whole[at]
    kind, _, value = at.partition("_")
    if kind == "time":
        return f"time {describe_time(float(value))}"
    if kind in ("position", "checkpoint") and value:
        return f"{kind} {value}"
    if kind == "fraction" and value:
        return f"fraction {value} of the stream"
    return at


def choose_checkpoints(
    table: pd.DataFrame, spec: str | int | Iterable[int] | Mapping[str, Sequence] = "last"
) -> pd.DataFrame:
    """Which checkpoint of each dataset answers each requested position.

    The one mapping that the learner tests, the bias tests and the policy contrasts (and any later
    table) use. A value listed twice is refused (:func:`check_checkpoint_request`).

    Parameters
    ----------
    table : pandas.DataFrame
        A per-fold table with the columns ``dataset`` and ``checkpoint`` (and ``time`` for a
        request of times).
    spec : str, int, iterable of int or mapping, default "last"
        The request (the workflow's ``tests.checkpoints``):

        * ``"last"``: the largest checkpoint of each dataset (``at = "last"``);
        * ``"all"``: every checkpoint (``at = "all"``);
        * ``{"positions": [1000, 2000, ...]}``: stream positions p (instances, 1-based); each maps,
          per dataset, to the first checkpoint at or after p (``at = "position_1000"``);
        * ``{"fractions": [0.1, ..., 1.0]}``: fractions f in (0, 1] of each stream, the position
          ``ceil(f * n)`` (:func:`fraction_position`) with n the stream's length (its last
          checkpoint is its last instance); mapped as positions (``at = "fraction_0.1"``);
        * ``{"times": [T, ...]}``: Unix times (s); each maps to the last checkpoint at or before T
          (the evaluation as it stood at T; ``at = "time_<T>"``; the table needs its ``time``
          column); a mapping may hold several kinds (positions, then fractions, then times);
        * an int or a list of ints: those exact checkpoints (``at = "checkpoint_<n>"``).

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, requested position), datasets sorted, each dataset's rows in the
        order requested: ``dataset``, ``at``, ``checkpoint`` (nullable Int64) and ``note``. The
        note is ``""`` when the request is a checkpoint itself; it says so when the request is
        answered by another checkpoint (``"requested position 1000, tested at checkpoint 1020
        (the next checkpoint)"``) and why a request has no checkpoint: such a row is not dropped, it
        has no checkpoint and the tables keep it (with no test) so that the gap shows
        (``"requested position 5000: beyond the stream (n = 3000), no test"``; a time before the
        first or after the last checkpoint; an exact checkpoint the dataset does not have).

    Raises
    ------
    DelaycvError
        A malformed request (:func:`check_checkpoint_request`).
    InputError
        ``table`` lacks ``dataset``, ``checkpoint`` or (for times) ``time``.

    Examples
    --------
    >>> t = pd.DataFrame({"dataset": ["a"] * 3, "checkpoint": [500, 1000, 1200]})
    >>> chosen = choose_checkpoints(t, {"positions": [600, 1000, 1500]})
    >>> chosen[["at", "checkpoint"]].to_numpy().tolist()
    [['position_600', 1000], ['position_1000', 1000], ['position_1500', <NA>]]
    >>> chosen["note"].tolist()  # doctest: +NORMALIZE_WHITESPACE
    ['requested position 600, tested at checkpoint 1000 (the next checkpoint)', '',
     'requested position 1500: beyond the stream (n = 1200), no test']
    >>> choose_checkpoints(t, {"fractions": [0.5, 1.0]})["checkpoint"].tolist()
    [1000, 1200]
    """
    spec = check_checkpoint_request(spec)
    by_dataset = _checkpoints_by_dataset(table, isinstance(spec, Mapping) and "times" in spec)
    if isinstance(spec, str):
        rows = _whole_requests(by_dataset, spec)
    elif isinstance(spec, Mapping):
        rows = _mapping_requests(by_dataset, spec)
    else:
        rows = _exact_requests(by_dataset, spec)
    out = pd.DataFrame(rows, columns=CHOSEN_COLUMNS)
    out["checkpoint"] = out["checkpoint"].astype("Int64")
    return out


#: One row of :func:`choose_checkpoints`: (dataset, at, checkpoint or None, note).
_Row = tuple[str, str, "int | None", str]


def _checkpoints_by_dataset(table: pd.DataFrame, times: bool) -> dict[str, pd.DataFrame]:
    """Dataset -> its distinct checkpoints (and their ``time`` when ``times``), in order."""
    _require_columns(table, ["dataset", "checkpoint"], "the per-fold table")
    if times:
        _require_columns(table, ["time"], "the per-fold table (checkpoints.times)")
    present = table[["dataset", "checkpoint", *(["time"] if times else [])]]
    present = present.drop_duplicates(["dataset", "checkpoint"])
    return {
        d: g.sort_values("checkpoint", kind="stable")
        for d, g in present.groupby("dataset", sort=True)
    }


def _first_at_or_after(frame: pd.DataFrame, dataset: str, label: str, position: int, asked: str):
    """The row of a requested position: the first checkpoint at or after it, if any."""
    points = frame["checkpoint"].to_numpy(np.int64)
    n = int(points[-1])
    if position > n:
        return (dataset, label, None, f"{asked}: beyond the stream (n = {n}), no test")
    found = int(points[np.searchsorted(points, position)])
    note = (
        "" if found == position else f"{asked}, tested at checkpoint {found} (the next checkpoint)"
    )
    return (dataset, label, found, note)


def _last_at_or_before(frame: pd.DataFrame, dataset: str, label: str, when: float):
    """The row of a requested time: the last checkpoint at or before it, if any."""
    points = frame["checkpoint"].to_numpy(np.int64)
    times = frame["time"].to_numpy(np.float64)
    asked = f"requested time {describe_time(when)}"
    if when < times.min():
        return (
            dataset,
            label,
            None,
            f"{asked}: before the stream (its first checkpoint, {int(points[0])}, is at "
            f"{describe_time(times.min())}), no test",
        )
    if when > times.max():
        return (
            dataset,
            label,
            None,
            f"{asked}: after the stream (its last checkpoint, {int(points[-1])}, is at "
            f"{describe_time(times.max())}), no test",
        )
    i = int(np.flatnonzero(times <= when)[-1])
    note = (
        ""
        if times[i] == when
        else f"{asked}, tested at checkpoint {int(points[i])} (at "
        f"{describe_time(times[i])}, the last checkpoint before it)"
    )
    return (dataset, label, int(points[i]), note)


def _whole_requests(by_dataset: dict[str, pd.DataFrame], spec: str) -> list[_Row]:
    """The rows of ``"last"`` (the last checkpoint of each dataset) or ``"all"``."""
    rows = []
    for dataset, frame in by_dataset.items():
        points = frame["checkpoint"].to_numpy(np.int64)
        chosen = points[-1:] if spec == "last" else points
        rows.extend((dataset, spec, int(c), "") for c in chosen)
    return rows


def _mapping_requests(by_dataset: dict[str, pd.DataFrame], spec: Mapping) -> list[_Row]:
    """The rows of positions, then fractions (:func:`fraction_position`), then times."""
    rows = []
    for dataset, frame in by_dataset.items():
        n = int(frame["checkpoint"].max())
        for value in spec.get("positions", []):
            p = int(value)
            rows.append(
                _first_at_or_after(frame, dataset, f"position_{p}", p, f"requested position {p}")
            )
        for value in spec.get("fractions", []):
            target = fraction_position(value, n)
            asked = f"requested fraction {float(value):g} = position {target} of {n}"
            rows.append(_first_at_or_after(frame, dataset, _fraction_label(value), target, asked))
        for value in spec.get("times", []):
            when = float(value)
            label = f"time_{int(when)}" if when.is_integer() else f"time_{when}"
            rows.append(_last_at_or_before(frame, dataset, label, when))
    return rows


def _exact_requests(by_dataset: dict[str, pd.DataFrame], spec: list[int]) -> list[_Row]:
    """The rows of exact checkpoint numbers (no checkpoint where a dataset lacks one)."""
    rows = []
    for dataset, frame in by_dataset.items():
        points = set(frame["checkpoint"].astype(np.int64).tolist())
        for c in spec:
            if c in points:
                rows.append((dataset, f"checkpoint_{c}", c, ""))
            else:
                rows.append(
                    (
                        dataset,
                        f"checkpoint_{c}",
                        None,
                        f"requested checkpoint {c}: not a checkpoint of the table, no test",
                    )
                )
    return rows


def at_checkpoints(table: pd.DataFrame, chosen: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``table`` at the checkpoints of ``chosen`` (from :func:`choose_checkpoints`).

    Parameters
    ----------
    table : pandas.DataFrame
        A per-fold table with the columns ``dataset`` and ``checkpoint``.
    chosen : pandas.DataFrame
        The output of :func:`choose_checkpoints`; its rows without a checkpoint select nothing.

    Returns
    -------
    pandas.DataFrame
        The rows of ``table`` whose (dataset, checkpoint) is chosen, in their order, with their
        index (each row once, however many requests name its checkpoint).

    Examples
    --------
    >>> t = pd.DataFrame({"dataset": ["a", "a", "b", "b"], "checkpoint": [500, 1000, 400, 800]})
    >>> chosen = choose_checkpoints(t, {"positions": [600, 900]})
    >>> at_checkpoints(t, chosen).to_numpy().tolist()
    [['a', 1000], ['b', 800]]
    """
    found = chosen.dropna(subset=["checkpoint"])
    keys = pd.MultiIndex.from_arrays(
        [found["dataset"].to_numpy(object), found["checkpoint"].to_numpy(np.int64)]
    )
    here = pd.MultiIndex.from_arrays(
        [table["dataset"].to_numpy(object), table["checkpoint"].to_numpy(np.int64)]
    )
    return table[here.isin(keys)]


#: The kind of the result tables' columns that hold no number, for a row with no test in a table
#: that has no test at all (its columns untyped): counts ``i`` (0), flags ``b`` (false), text
#: ``O`` (empty); any other column is a number (NaN).
_KINDS = {
    **dict.fromkeys(("n", "n_duplicates", "family_size", "resamples"), "i"),
    **dict.fromkeys(("exact", "significant"), "b"),
    **dict.fromkeys(
        (
            "dataset",
            "policy",
            "estimator",
            "reference",
            "metric",
            "learner",
            "learner_a",
            "learner_b",
            "estimate",
            "contrast",
            "reference_policy",
            "alternative",
            "result",
            "better",
            "note",
        ),
        "O",
    ),
}


def label_checkpoints(
    out: pd.DataFrame, chosen: pd.DataFrame, columns: Sequence[str]
) -> pd.DataFrame:
    """A result table computed at the chosen checkpoints, labelled with the request.

    Each row gets the request's ``at`` beside its ``checkpoint`` and its ``note`` (a row per
    requested label: two labels that map to one checkpoint give two rows), and one row is added per
    (dataset, label) with no checkpoint (a position beyond the stream): its ``checkpoint`` empty,
    counts 0, flags false, text empty, numbers NaN (``time`` NaN too), and the note.

    Parameters
    ----------
    out : pandas.DataFrame
        The result rows, with ``dataset`` and ``checkpoint`` (and no ``at`` or ``note``).
    chosen : pandas.DataFrame
        The output of :func:`choose_checkpoints` the rows were computed at.
    columns : sequence of str
        The output's columns in order (``at`` and ``note`` among them).

    Returns
    -------
    pandas.DataFrame
        ``columns``, the matched rows first (in the merge's order), then the rows with no
        checkpoint; ``checkpoint`` as nullable Int64; a fresh index.

    Examples
    --------
    >>> t = pd.DataFrame({"dataset": ["a", "a", "b", "b"], "checkpoint": [500, 1000, 400, 800]})
    >>> chosen = choose_checkpoints(t, {"positions": [600, 900]})
    >>> out = pd.DataFrame({"dataset": ["a", "b"], "checkpoint": [1000, 800], "n": [5, 3]})
    >>> labelled = label_checkpoints(out, chosen, ["dataset", "at", "checkpoint", "n", "note"])
    >>> rows = labelled[["dataset", "at", "checkpoint", "n"]].to_numpy().tolist()
    >>> rows  # doctest: +NORMALIZE_WHITESPACE
    [['a', 'position_600', 1000, 5], ['a', 'position_900', 1000, 5],
     ['b', 'position_600', 800, 3], ['b', 'position_900', <NA>, 0]]
    """
    found = chosen.dropna(subset=["checkpoint"]).astype({"checkpoint": np.int64})
    labelled = out.merge(found, on=["dataset", "checkpoint"], how="inner", sort=False)
    missing = chosen[chosen["checkpoint"].isna()]
    if not missing.empty:
        filler = {}
        for column in columns:
            if column in CHOSEN_COLUMNS:
                continue
            kind = labelled[column].dtype.kind if column in labelled else "f"
            if labelled.empty:  # (a table of no test has untyped columns)
                kind = _KINDS.get(column, "f")
            if column == "time":  # the instant of a checkpoint that does not exist
                kind = "f"
            filler[column] = {"b": False, "i": 0, "u": 0, "f": np.nan}.get(kind, "")
        gaps = missing.assign(**filler)
        frames = [f for f in (labelled, gaps) if not f.empty]
        labelled = pd.concat(frames, ignore_index=True) if len(frames) > 1 else gaps
    labelled["checkpoint"] = labelled["checkpoint"].astype("Int64")
    return labelled[list(columns)].reset_index(drop=True)


#: The column of the per-fold table that says whether a policy released anything: the number of
#: instances a fold has evaluated (scored once its label was released) by the checkpoint.
RELEASE_COLUMN = "evaluated"


def released_nothing(table: pd.DataFrame) -> pd.Series | None:
    """Where a policy had released no label yet, per (dataset, policy, estimator, checkpoint).

    True where no fold of any learner has evaluated an instance by that checkpoint (the largest
    :data:`RELEASE_COLUMN` is 0 or NaN): every evaluation pending, every metric undefined.

    Parameters
    ----------
    table : pandas.DataFrame
        A per-fold table with the columns ``dataset``, ``policy``, ``estimator``, ``checkpoint``
        and, if it is to answer, :data:`RELEASE_COLUMN`.

    Returns
    -------
    pandas.Series of bool or None
        Indexed by (dataset, policy, estimator, checkpoint); None when ``table`` lacks the column
        :data:`RELEASE_COLUMN`.

    Examples
    --------
    >>> t = pd.DataFrame({"dataset": "a", "policy": "p", "estimator": "e",
    ...                   "checkpoint": [1, 1, 2, 2], "evaluated": [0, 0, 0, 3]})
    >>> released_nothing(t).tolist()
    [True, False]
    >>> released_nothing(t.drop(columns="evaluated")) is None
    True
    """
    if RELEASE_COLUMN not in table.columns:
        return None
    keys = ["dataset", "policy", "estimator", "checkpoint"]
    return table.groupby(keys, sort=False)[RELEASE_COLUMN].max().fillna(0).le(0)


def nothing_released_note(policy: str, checkpoint: int, last: int) -> str:
    """The note of a test that has no value because ``policy`` released no label by ``checkpoint``.

    Parameters
    ----------
    policy : str
        The policy's name.
    checkpoint : int
        The checkpoint tested.
    last : int
        The dataset's last checkpoint (its stream's length).

    Returns
    -------
    str

    Examples
    --------
    >>> nothing_released_note("p", 500, 1000)
    'policy p released no label by checkpoint 500: every evaluation pending, no value to test'
    """
    if checkpoint >= last:
        return (
            f"policy {policy} released no label before the end of the stream (n = {last}; e.g. "
            "a window longer than the stream): every evaluation pending, no value to test"
        )
    return (
        f"policy {policy} released no label by checkpoint {checkpoint}: every evaluation "
        "pending, no value to test"
    )


def join_notes(*notes: str) -> str:
    """The non-empty notes of a row, joined by "; ".

    Parameters
    ----------
    *notes : str
        The notes, empty ones skipped.

    Returns
    -------
    str

    Examples
    --------
    >>> join_notes("", "first", "", "second")
    'first; second'
    """
    return "; ".join(n for n in notes if n)


def note_empty_tests(
    out: pd.DataFrame,
    table: pd.DataFrame,
    undefined: Callable[[pd.Series], str],
    policies: Callable[[pd.Series], Sequence[str]] = lambda row: [row["policy"]],
    reference: str = "reference",
) -> pd.DataFrame:
    """Give every row of ``out`` that has a checkpoint but no pair to test (``n == 0``) its reason.

    The reason is joined (by :func:`join_notes`) to the note the row has: a policy of
    ``policies(row)`` that released no label by that checkpoint (:func:`nothing_released_note`,
    when ``table`` has :data:`RELEASE_COLUMN`; the first such policy), else that the row's
    reference (its column ``reference``) has no value of the metric in any run
    (:func:`delaycv.metrics.uncorrected.uncorrected`: the corrected reference and popt), else
    ``undefined(row)`` (the metric has no value on both sides of any pair).

    Parameters
    ----------
    out : pandas.DataFrame
        A result table with ``dataset``, ``estimator``, ``checkpoint``, ``metric``, ``n``,
        ``note``, the column ``reference`` and what ``policies`` and ``undefined`` read.
    table : pandas.DataFrame
        The per-fold table the results come from (its ``dataset`` and ``checkpoint``, and
        :data:`RELEASE_COLUMN` when present).
    undefined : callable
        A row -> the note when no policy explains the gap.
    policies : callable, optional
        A row -> the policies whose releases it depends on; default its ``policy``.
    reference : str, optional
        The column naming the row's reference (``estimate`` in the bias tests).

    Returns
    -------
    pandas.DataFrame
        ``out`` itself when no row lacks a test, else a copy with the notes completed.

    Examples
    --------
    >>> t = pd.DataFrame({"dataset": "a", "policy": "p", "estimator": "e",
    ...                   "checkpoint": [1, 2, 2], "evaluated": [0, 3, 3]})
    >>> out = t[["dataset", "policy", "estimator", "checkpoint"]].assign(
    ...     n=0, note="", reference=["true", "true", "corrected"], metric=["gmean", "gmean", "popt"])
    >>> notes = note_empty_tests(out, t, lambda row: "undefined")["note"].tolist()
    >>> notes  # doctest: +NORMALIZE_WHITESPACE
    ['policy p released no label by checkpoint 1: every evaluation pending, no value to test',
     'undefined',
     'the corrected reference has no popt: its inspection curve is not estimated from expected
     labels (docs/corrected.md), no test']
    """
    if out.empty:
        return out
    empty = out["checkpoint"].notna().to_numpy() & (out["n"].to_numpy() == 0)
    if not empty.any():
        return out
    nothing = released_nothing(table)
    last = last_checkpoints(table)
    notes = out["note"].astype(object).to_numpy().copy()
    nothing_at = set(nothing[nothing].index) if nothing is not None else set()
    rows = out[empty]
    cache: dict[tuple, str] = {}  # rows of one family differ only in the learners or the metric
    for i, (_, row) in zip(np.flatnonzero(empty), rows.iterrows(), strict=True):
        checkpoint = int(row["checkpoint"])
        why = ""
        for policy in policies(row):
            key = (row["dataset"], policy, row["estimator"], checkpoint)
            if key in nothing_at:
                if key not in cache:
                    cache[key] = nothing_released_note(
                        policy, checkpoint, int(last[row["dataset"]])
                    )
                why = cache[key]
                break
        if not why:
            missing = uncorrected(row[reference], row["metric"])
            why = f"{missing}, no test" if missing else undefined(row)
        notes[i] = join_notes(str(notes[i] or ""), why)
    out = out.copy()
    out["note"] = notes
    return out


def require_an_answer(chosen: pd.DataFrame, where: str) -> None:
    """Refuse a request that no checkpoint answers: every row of ``chosen`` without one.

    A requested position beyond one dataset's stream is a row with no test and a note (the
    tables keep the gap); a request that no dataset of the tables answers would leave nothing to
    test, and is a mistake: an :class:`~delaycv.common.errors.InputError` naming ``where`` (the
    tables) and the first request's note, before any work.

    Parameters
    ----------
    chosen : pandas.DataFrame
        :func:`choose_checkpoints` of the tables (all of them together).
    where : str
        The tables, as the error names them.

    Raises
    ------
    InputError
        Every row of ``chosen`` without a checkpoint (nothing when ``chosen`` is empty: a table
        without rows is refused where it is read).

    Examples
    --------
    >>> t = pd.DataFrame({"dataset": ["a"] * 2, "checkpoint": [500, 1000]})
    >>> require_an_answer(choose_checkpoints(t, {"positions": [800, 5000]}), "a.parquet")
    >>> require_an_answer(choose_checkpoints(t, {"positions": [5000]}), "a.parquet")
    Traceback (most recent call last):
    ...
    delaycv.common.errors.InputError: a.parquet: no checkpoint of the table answers the request: requested position 5000: beyond the stream (n = 1000) (expected positions within a stream, fractions, times of a stream, 'last' or 'all')
    """
    answered = chosen["checkpoint"].notna()
    if len(chosen) == 0 or answered.any():
        return
    notes = chosen["note"].astype(str).str.removesuffix(", no test")
    more = len(notes) - 1
    raise InputError(
        f"no checkpoint of the table{'s' if ' ' in where else ''} answers the request: "
        + notes.iloc[0]
        + (f" (and {more} more request{'s' if more > 1 else ''} of this kind)" if more else ""),
        path=where,
        expected="positions within a stream, fractions, times of a stream, 'last' or 'all'",
    )


def untested_notes(frame: pd.DataFrame) -> list[tuple[str, int]]:
    """The distinct notes of the rows of a result table that have a checkpoint but no test.

    Rows with ``n == 0`` (e.g. a policy that released no label), for a log or a command's summary.

    Parameters
    ----------
    frame : pandas.DataFrame
        A result table with ``checkpoint``, ``n`` and ``note``.

    Returns
    -------
    list of (str, int)
        Each non-empty note with how many rows carry it, in order of first appearance; empty when
        ``frame`` is empty or lacks ``note`` or ``n``.

    Examples
    --------
    >>> f = pd.DataFrame({"checkpoint": [1, 1, 2, None], "n": [0, 0, 4, 0],
    ...                   "note": ["no label", "no label", "", "beyond"]})
    >>> untested_notes(f)
    [('no label', 2)]
    """
    if frame.empty or "note" not in frame or "n" not in frame:
        return []
    rows = frame[frame["checkpoint"].notna() & frame["n"].eq(0)]
    counts = rows["note"].fillna("").astype(str).value_counts(sort=False)
    return [(note, int(count)) for note, count in counts.items() if note]


def more_pairs(repeated: bool) -> str:
    """What gives a paired test more pairs, in the words of a note: more folds or seeds; where
    seeds ``repeated`` an earlier seed's values (and counted once), seeds whose values differ.

    >>> more_pairs(False), more_pairs(True)
    ('more folds or seeds', 'more folds, or seeds whose values differ')
    """
    return "more folds, or seeds whose values differ" if repeated else "more folds or seeds"


def out_of_reach_notes(frame: pd.DataFrame, *, alpha: float, resamples: int) -> np.ndarray:
    """The note of each tested row of a result table whose sign-flip test cannot reach ``alpha``
    whatever the differences (too few pairs, or too few resamples: its smallest p,
    :func:`~delaycv.stats.permutation.smallest_p`, is above it); ``""`` elsewhere.

    Holm's adjustment only raises a p-value, so such a row is never significant: with 5 folds and
    seeds whose folds repeat (a deterministic learner under ``cv``), every row of a study.

    Parameters
    ----------
    frame : pandas.DataFrame
        A result table with ``n`` and ``exact`` (and ``alternative``, two-sided without it;
        ``n_duplicates``, the pairs of repeated seeds left out, none without it).
    alpha : float
        The significance level.
    resamples : int
        R, the random sign vectors of a test that is not exact.

    Returns
    -------
    numpy.ndarray of str

    Examples
    --------
    >>> f = pd.DataFrame({"n": [5, 10, 0], "exact": [True, True, False]})
    >>> out_of_reach_notes(f, alpha=0.05, resamples=5000).tolist()  # doctest: +NORMALIZE_WHITESPACE
    ['5 (seed, fold) pairs: no p below 0.0625 (2/2^5) is possible, above alpha = 0.05: not
      significant whatever the differences (more folds or seeds)', '', '']

    A second seed whose values repeat the first's (``n_duplicates``: a learner that ignores its
    seed under ``cv``, or a metric that does not vary, such as a constant classifier's G-mean):

    >>> out_of_reach_notes(f.assign(n_duplicates=[5, 0, 0]), alpha=0.05, resamples=5000)[0]
    ... # doctest: +NORMALIZE_WHITESPACE
    "5 (seed, fold) pairs (5 more repeat an earlier seed's values and count once): no p below
     0.0625 (2/2^5) is possible, above alpha = 0.05: not significant whatever the differences
     (more folds, or seeds whose values differ)"
    >>> one_sided = pd.DataFrame({"n": [4], "exact": [True], "alternative": ["greater"]})
    >>> out_of_reach_notes(one_sided, alpha=0.05, resamples=5000)[0][:51]
    '4 (seed, fold) pairs: no p below 0.0625 (1/2^4) is '
    >>> out_of_reach_notes(f.assign(exact=False), alpha=0.05, resamples=9)[0]
    'R = 9 random sign vectors: no p below 0.1 (1/(R + 1)) is possible, above alpha = 0.05: not significant whatever the differences (more resamples)'
    """
    notes = np.full(len(frame), "", dtype=object)
    if frame.empty:
        return notes
    n = frame["n"].to_numpy(dtype=np.float64)
    exact = frame["exact"].fillna(False).to_numpy(dtype=bool)
    alternative = frame.get("alternative", "two-sided")
    floor = smallest_p(n, exact, resamples, alternative)
    two_sided = np.broadcast_to(np.asarray(alternative) == "two-sided", n.shape)
    repeated = (
        frame["n_duplicates"].fillna(0).to_numpy(dtype=np.int64)
        if "n_duplicates" in frame
        else np.zeros(len(frame), dtype=np.int64)
    )
    for i in np.flatnonzero(floor > alpha):  # (NaN: no pair, no test)
        if exact[i]:
            formula = f"{2 if two_sided[i] else 1}/2^{int(n[i])}"
            why = f"{int(n[i])} (seed, fold) pairs"
            if repeated[i]:
                why += f" ({repeated[i]} more repeat an earlier seed's values and count once)"
            why += f": no p below {floor[i]:.3g} ({formula})"
            remedy = more_pairs(bool(repeated[i]))
        else:
            why = f"R = {resamples} random sign vectors: no p below {floor[i]:.3g} (1/(R + 1))"
            remedy = "more resamples"
        notes[i] = (
            f"{why} is possible, above alpha = {alpha:g}: not significant whatever the "
            f"differences ({remedy})"
        )
    return notes


def shared_note(frame: pd.DataFrame, *, alpha: float, resamples: int) -> str:
    """The note of :func:`out_of_reach_notes` when every tested row of ``frame`` has the same one
    (a page then says it once), else "".

    Examples
    --------
    >>> f = pd.DataFrame({"n": [5, 5, 0], "exact": [True, True, False]})
    >>> shared_note(f, alpha=0.05, resamples=5000).startswith("5 (seed, fold) pairs")
    True
    >>> shared_note(f.assign(n=[5, 6, 0]), alpha=0.05, resamples=5000)
    ''
    """
    if frame.empty or "n" not in frame:
        return ""
    tested = frame["n"].to_numpy() > 0
    notes = set(out_of_reach_notes(frame, alpha=alpha, resamples=resamples)[tested])
    return notes.pop() if len(notes) == 1 else ""


def note_out_of_reach(out: pd.DataFrame, *, alpha: float, resamples: int) -> pd.DataFrame:
    """``out`` with :func:`out_of_reach_notes` joined to the ``note`` of its rows (a copy when a
    row gets one)."""
    reach = out_of_reach_notes(out, alpha=alpha, resamples=resamples)
    if not any(reach):
        return out
    out = out.copy()
    notes = out["note"].fillna("").astype(str)
    out["note"] = [join_notes(a, b) for a, b in zip(notes, reach, strict=True)]
    return out


def checkpoint_times(table: pd.DataFrame, rows: pd.DataFrame) -> np.ndarray:
    """The time (Unix s) of each row's (dataset, checkpoint) in ``table``.

    The same for every run of a dataset; the earliest if the runs disagree.

    Parameters
    ----------
    table : pandas.DataFrame
        A per-fold table with ``dataset``, ``checkpoint`` and ``time``.
    rows : pandas.DataFrame
        The rows to time, with ``dataset`` and ``checkpoint``.

    Returns
    -------
    numpy.ndarray
        One time per row of ``rows``, NaN where ``table`` has no such checkpoint.

    Examples
    --------
    >>> t = pd.DataFrame({"dataset": ["a", "a", "b"], "checkpoint": [500, 500, 400],
    ...                   "time": [20.0, 10.0, 5.0]})
    >>> rows = pd.DataFrame({"dataset": ["b", "a"], "checkpoint": [400, 500]})
    >>> checkpoint_times(t, rows).tolist()
    [5.0, 10.0]
    """
    times = table.groupby(["dataset", "checkpoint"])["time"].min()
    return times.reindex(pd.MultiIndex.from_frame(rows[["dataset", "checkpoint"]])).to_numpy()
