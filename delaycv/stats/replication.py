"""The HITL study replicated: delaycv's policy contrasts beside the study code's own numbers.

Pure (opens no files): ``benchmarks/hitl_replication.py`` reads the workflow's contrast tables of
``config/hitl-rq1.yaml`` and ``config/hitl-rq3.yaml`` and the study's numbers
(``../shared/reference/hitl-study/means.csv.gz``), and prints the tables of docs/replication.md.

The study measured a realistic setting's *validity* at the 1000th ... 5000th commit of each project:
``100 - |ideal - estimate|`` per metric, in percent, where ``estimate`` is the fold average the
setting's evaluator reports (observed labels) and ``ideal`` the same project's ideal run. delaycv's
contrast tables hold the same quantity for the observed-label contrast (``reference ==
"observed"``, ``validity``), computed with each instance scored with its own prediction and every
due label released, and the true-label contrast beside it (what the delay costs the model alone).

Names: the study's ``auto_<W>_<W>`` (automatic labelling, its ...Extension task) is delaycv's
``verification_<W>``; its ``hitl_<P>_<N>`` and ``ideal`` are delaycv's names. Positions: the study's
``commit_1000`` is delaycv's ``position_1000`` (the first checkpoint at or after commit 1000).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from delaycv.common.errors import ConfigError, DelaycvError
from delaycv.protocol.durations import parse_window
from delaycv.protocol.policies import parse_policy_name
from delaycv.stats.scott_knott import r_np_group_names, scott_knott_esd

#: The study's metrics (percent in its tables, fractions in delaycv's).
METRICS = ("gmean", "recall_1", "fpr_1")
#: Key commits of the study's validity analysis.
COMMITS = (1000, 2000, 3000, 4000, 5000)
#: Columns of :func:`study_validity` and :func:`delaycv_validity`.
VALIDITY_COLUMNS = ["project", "policy", "at", "metric", "estimate", "ideal", "validity"]

#: The study's name of automatic labelling after W (delaycv's ``verification_<W>``).
_AUTO = re.compile(r"^auto_(?P<w>[^_]+)_(?P=w)$")
_DAY = 86_400


def _preset_windows(name: str, preset: str) -> dict[str, str] | None:
    """The windows of a policy name of ``preset`` without an inspection error (as the name
    spells them, read by :func:`delaycv.protocol.policies.parse_policy_name`), else None."""
    try:
        spec = parse_policy_name(name)
    except ConfigError:
        return None
    if spec.pop("preset") != preset or "inspection_error" in spec:
        return None
    return spec


def study_policy(name: str) -> str:
    """delaycv's policy name in the study's spelling.

    ``verification_<W>`` (without an inspection error) is the study's ``auto_<W>_<W>``; every
    other name is the same in both.

    Parameters
    ----------
    name : str
        A delaycv policy name.

    Returns
    -------
    str

    Examples
    --------
    >>> study_policy("verification_7d"), study_policy("hitl_7d_90d"), study_policy("ideal")
    ('auto_7d_7d', 'hitl_7d_90d', 'ideal')
    """
    windows = _preset_windows(name, "verification")
    return f"auto_{windows['window']}_{windows['window']}" if windows else name


def study_at(at: str) -> str:
    """delaycv's ``at`` label in the study's spelling: ``position_1000`` -> ``commit_1000``.

    Parameters
    ----------
    at : str
        An ``at`` label of a delaycv table; labels of other kinds are returned as they are.

    Returns
    -------
    str

    Examples
    --------
    >>> study_at("position_1000"), study_at("last")
    ('commit_1000', 'last')
    """
    return "commit_" + at.removeprefix("position_") if at.startswith("position_") else at


def study_validity(means: pd.DataFrame, metrics: Sequence[str] = METRICS) -> pd.DataFrame:
    """The study's validity from its fold averages: ``100 - |ideal - estimate|``.

    Each estimate is set against the same project's ``ideal`` at the same ``at``.

    Parameters
    ----------
    means : pandas.DataFrame
        The study's fold averages (``means.csv.gz``): ``project``, ``policy``, ``at`` and the
        metrics in percent; one ``ideal`` row per project and ``at``.
    metrics : sequence of str, default ``METRICS``
        The metric columns.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`VALIDITY_COLUMNS` (estimate and ideal in percent), one row per non-ideal
        row and metric (ideal's own rows are left out; NaN ideal where the project has none).

    Raises
    ------
    DelaycvError
        ``means`` lacks a column, or has two ideal rows for one project and ``at``.

    Examples
    --------
    >>> m = pd.DataFrame({"project": ["a", "a"], "policy": ["ideal", "hitl_1d_15d"],
    ...                   "at": ["commit_1000"] * 2, "gmean": [40.0, 25.5]})
    >>> study_validity(m, ["gmean"])[["policy", "validity"]].to_numpy().tolist()  # 100 - 14.5
    [['hitl_1d_15d', 85.5]]
    """
    missing = [c for c in ("project", "policy", "at", *metrics) if c not in means]
    if missing:
        raise DelaycvError(f"the study's means lack the columns {missing}")
    long = means.melt(
        id_vars=["project", "policy", "at"],
        value_vars=list(metrics),
        var_name="metric",
        value_name="estimate",
    )
    ideal = long[long["policy"] == "ideal"].set_index(["project", "at", "metric"])["estimate"]
    if ideal.index.has_duplicates:
        raise DelaycvError("the study's means have two ideal rows for one project and position")
    out = long[long["policy"] != "ideal"].copy()
    out["ideal"] = ideal.reindex(pd.MultiIndex.from_frame(out[["project", "at", "metric"]])).values
    out["validity"] = 100.0 - (out["ideal"] - out["estimate"]).abs()
    return out[VALIDITY_COLUMNS].reset_index(drop=True)


def delaycv_validity(
    contrasts: pd.DataFrame, *, reference: str = "observed", learner: str | None = None
) -> pd.DataFrame:
    """delaycv's validity from its contrast tables, in the study's names and percent.

    The contrasts are those of :func:`delaycv.stats.contrasts.policy_contrasts` against ``ideal``.
    Rows without a checkpoint (a position beyond a stream: no test) are left out; a row whose note
    only says where it was tested is kept.

    Parameters
    ----------
    contrasts : pandas.DataFrame
        A contrast table.
    reference : {"observed", "true"}, default "observed"
        ``"observed"`` is the study's quantity (the setting's estimate against ideal); ``"true"``
        the model's own true-label value against ideal.
    learner : str, optional
        The learner whose contrasts to take; None (default): the table must hold one.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`VALIDITY_COLUMNS`: ``project`` (the dataset), ``policy``
        (:func:`study_policy`), ``at`` (:func:`study_at`), ``metric``, ``estimate`` and ``ideal``
        (100 times the two means) and ``validity``.

    Raises
    ------
    DelaycvError
        Contrasts of several learners, or two contrasts for one project, policy, position and
        metric.

    Examples
    --------
    >>> c = pd.DataFrame({"dataset": "p1", "learner": "a", "reference": ["observed", "true"],
    ...                   "reference_policy": "ideal", "checkpoint": 1000,
    ...                   "policy": "verification_7d", "at": "position_1000", "metric": "gmean",
    ...                   "mean_policy": [0.3, 0.35], "mean_reference_policy": 0.4,
    ...                   "validity": [90.0, 95.0]})
    >>> delaycv_validity(c).to_numpy().tolist()
    [['p1', 'auto_7d_7d', 'commit_1000', 'gmean', 30.0, 40.0, 90.0]]
    """
    rows = contrasts[
        (contrasts["reference"] == reference)
        & (contrasts["reference_policy"] == "ideal")
        & contrasts["checkpoint"].notna()
    ]
    if learner is not None:
        rows = rows[rows["learner"] == learner]
    if rows["learner"].nunique() > 1:
        raise DelaycvError(
            f"contrasts of several learners ({sorted(rows['learner'].unique())}): name one"
        )
    if rows.duplicated(["dataset", "policy", "at", "metric"]).any():
        raise DelaycvError("two contrasts for one project, policy, position and metric")
    return pd.DataFrame(
        {
            "project": rows["dataset"].to_numpy(),
            "policy": [study_policy(p) for p in rows["policy"]],
            "at": [study_at(a) for a in rows["at"]],
            "metric": rows["metric"].to_numpy(),
            "estimate": 100.0 * rows["mean_policy"].to_numpy(np.float64),
            "ideal": 100.0 * rows["mean_reference_policy"].to_numpy(np.float64),
            "validity": rows["validity"].to_numpy(np.float64),
        }
    )[VALIDITY_COLUMNS].reset_index(drop=True)


def side_by_side(study: pd.DataFrame, ours: pd.DataFrame) -> pd.DataFrame:
    """The two validity tables joined on (project, policy, at, metric).

    Parameters
    ----------
    study, ours : pandas.DataFrame
        Validity tables (:func:`study_validity`, :func:`delaycv_validity`).

    Returns
    -------
    pandas.DataFrame
        The keys, then the other columns of each with the suffix ``_study`` / ``_delaycv``; only
        keys present in both.

    Examples
    --------
    >>> s = pd.DataFrame({"project": ["p1"], "policy": ["x"], "at": ["commit_1000"],
    ...                   "metric": ["gmean"], "validity": [91.0]})
    >>> side_by_side(s, s.assign(validity=90.0)).columns.tolist()[-2:]
    ['validity_study', 'validity_delaycv']
    """
    keys = ["project", "policy", "at", "metric"]
    return study.merge(ours, on=keys, suffixes=("_study", "_delaycv"), how="inner")


def _blocks(validity: pd.DataFrame):
    """Per metric (in table order), the settings' validity as a (project, at) x setting table of
    the rows where every setting has a value (SK-ESD's complete blocks); empty ones skipped."""
    for metric, rows in validity.groupby("metric", sort=False):
        wide = rows.pivot_table(
            index=["project", "at"], columns="policy", values="validity", aggfunc="first"
        ).dropna()
        if not wide.empty:
            yield metric, wide


def validity_ranks(validity: pd.DataFrame, *, version: str = "np") -> pd.DataFrame:
    """Scott-Knott ESD of the settings (policies) by validity, per metric, as the study ranked them.

    The observations of a setting are its validity values at every (project, at) of the table; a
    (project, at) where a setting has no value is left out for all.

    Parameters
    ----------
    validity : pandas.DataFrame
        A validity table (:data:`VALIDITY_COLUMNS`).
    version : {"np", "p"}, default "np"
        The Scott-Knott ESD version.

    Returns
    -------
    pandas.DataFrame
        ``metric`` then the columns of :func:`delaycv.stats.scott_knott.scott_knott_esd` (group
        and rank 1 = most valid); the metrics in table order.

    Raises
    ------
    DelaycvError
        An unknown ``version``.

    Examples
    --------
    >>> v = pd.DataFrame({"project": ["p1"] * 6 + ["p2"] * 6, "policy": ["x", "y", "z"] * 4,
    ...                   "at": (["c1"] * 3 + ["c2"] * 3) * 2, "metric": "gmean",
    ...                   "validity": [99.0, 90, 80, 98, 91, 81, 97, 92, 79, 99, 89, 82]})
    >>> validity_ranks(v)[["metric", "treatment", "group", "median"]].to_numpy().tolist()
    [['gmean', 'x', 1, 98.5], ['gmean', 'y', 2, 90.5], ['gmean', 'z', 3, 80.5]]
    """
    frames = []
    for metric, wide in _blocks(validity):
        groups = scott_knott_esd(wide, version=version, higher_is_better=True)
        frames.append(groups.assign(metric=metric))
    if not frames:
        return pd.DataFrame(columns=["metric", "treatment", "group", "rank"])
    out = pd.concat(frames, ignore_index=True)
    return out[["metric", *[c for c in out.columns if c != "metric"]]]


def _days(window: str) -> int | None:
    """A window in whole days (``7d``, ``1w``, ``168h``), else None (instances, part days, not
    a window)."""
    try:
        w = parse_window(window)
    except DelaycvError:
        return None
    return w.amount // _DAY if w.unit == "s" and w.amount % _DAY == 0 else None


def _hitl_by_days(policies: Iterable[str]) -> dict[tuple[int, int], str]:
    """The hitl policies among ``policies`` by their windows (P, N) in whole days."""
    out: dict[tuple[int, int], str] = {}
    for policy in policies:
        windows = _preset_windows(policy, "hitl")
        if windows is None:
            continue
        days = (_days(windows["pos_window"]), _days(windows["neg_window"]))
        if None in days:
            continue
        if days in out:
            raise DelaycvError(
                f"the policies {out[days]} and {policy} have the same windows ({days[0]} and "
                f"{days[1]} days): the findings would compare either"
            )
        out[days] = policy
    return out


def paired_difference(
    validity: pd.DataFrame, pairs: Iterable[tuple[str, str]], metric: str
) -> dict[str, float]:
    """Validity of the first policy of each pair minus the second's, pooled over the pairs.

    The differences are taken at every (project, at) where both have a value; pairs naming a
    policy the table lacks are skipped.

    Parameters
    ----------
    validity : pandas.DataFrame
        A validity table (:data:`VALIDITY_COLUMNS`).
    pairs : iterable of (str, str)
        The (first, second) policies.
    metric : str
        The metric.

    Returns
    -------
    dict
        ``mean`` (of the differences), ``wins`` (the share of differences above 0) and ``n``
        (their number); NaN, NaN and 0 when there is none.

    Examples
    --------
    >>> v = pd.DataFrame({"project": ["p1"] * 6 + ["p2"] * 6, "policy": ["x", "y", "z"] * 4,
    ...                   "at": (["c1"] * 3 + ["c2"] * 3) * 2, "metric": "gmean",
    ...                   "validity": [99.0, 90, 80, 98, 91, 81, 97, 92, 79, 99, 89, 82]})
    >>> paired_difference(v, [("x", "y")], "gmean")  # 9, 7, 5, 10
    {'mean': 7.75, 'wins': 1.0, 'n': 4}
    """
    rows = validity[validity["metric"] == metric]
    wide = rows.pivot_table(index=["project", "at"], columns="policy", values="validity")
    diffs = [
        (wide[a] - wide[b]).dropna().to_numpy()
        for a, b in pairs
        if a in wide.columns and b in wide.columns
    ]
    d = np.concatenate(diffs) if diffs else np.array([])
    if not len(d):
        return {"mean": np.nan, "wins": np.nan, "n": 0}
    return {"mean": float(d.mean()), "wins": float((d > 0).mean()), "n": int(len(d))}


def verdict(mean: float, wins: float, n: int) -> str:
    """The answer to a paired question, from both its mean difference and its wins.

    The first setting is "more valid" only when its mean difference is positive **and** it wins
    most pairs (the reverse for the second); when the two disagree (a few large differences
    against most pairs), "mixed".

    Parameters
    ----------
    mean : float
        The mean difference, first minus second.
    wins : float
        The share of pairs where the first is more valid.
    n : int
        The number of pairs.

    Returns
    -------
    str
        ``"no pairs"``, ``"first more valid"``, ``"second more valid"`` or ``"mixed: ..."``.

    Examples
    --------
    >>> verdict(5.9, 0.9, 10), verdict(-1.0, 0.0, 5)
    ('first more valid', 'second more valid')
    >>> verdict(-0.37, 0.72, 280)
    'mixed: the mean favours the second, most pairs the first'
    """
    if n == 0:
        return "no pairs"
    if mean > 0 and wins > 0.5:
        return "first more valid"
    if mean < 0 and wins < 0.5:
        return "second more valid"
    by_mean = "the first" if mean > 0 else "the second" if mean < 0 else "neither"
    if wins == 0.5:
        return f"mixed: the mean favours {by_mean}, the pairs split evenly"
    return f"mixed: the mean favours {by_mean}, most pairs {'the first' if wins > 0.5 else 'the second'}"


def findings(validity: pd.DataFrame, metric: str = "gmean") -> pd.DataFrame:
    """The study's questions asked of one validity table (study's or delaycv's), for one metric.

    * ``N 90d vs 15d``: hitl_P_90d against hitl_P_15d at the same P (RQ1: does waiting longer for a
      fix before calling a commit clean give a more valid estimate?);
    * ``P longest vs shortest``: hitl with the longest inspection time against the shortest, per N;
    * ``hitl vs auto``: hitl_W_W against auto_W_W at the same W (RQ3: does a human in the loop give
      a more valid estimate than automatic labelling?);
    * ``best``: the setting with the highest median validity.

    Settings are matched by their windows in whole days, read from their names through the preset
    registry (``hitl_1w_90d`` is P = 7, N = 90; a name with an inspection error or a window in
    instances is not one of the study's settings). A question none of whose settings are in the
    table has no row.

    Parameters
    ----------
    validity : pandas.DataFrame
        A validity table (:data:`VALIDITY_COLUMNS`), policies in the study's names.
    metric : str, default "gmean"
        The metric.

    Returns
    -------
    pandas.DataFrame
        One row per question: ``question``, ``mean`` (mean paired difference, percentage points;
        for ``best`` its median validity), ``wins`` (share of (project, at, setting) pairs where
        the first is more valid), ``n`` (for ``best`` the number of settings) and ``answer``
        (:func:`verdict`; for ``best`` the setting).

    Raises
    ------
    DelaycvError
        Two hitl policies with the same windows in days.

    Examples
    --------
    >>> v = pd.DataFrame({"project": "p1", "at": "commit_1000", "metric": "gmean",
    ...                   "policy": ["hitl_1d_15d", "hitl_1d_90d", "hitl_7d_15d", "hitl_7d_7d",
    ...                              "auto_7d_7d"], "validity": [80.0, 90.0, 85.0, 95.0, 70.0]})
    >>> f = findings(v)[["question", "mean", "answer"]].to_numpy().tolist()
    >>> f  # doctest: +NORMALIZE_WHITESPACE
    [['N 90d vs 15d', 10.0, 'first more valid'], ['P longest vs shortest', 5.0, 'first more valid'],
     ['hitl vs auto', 25.0, 'first more valid'], ['best', 95.0, 'hitl_7d_7d']]
    """
    policies = sorted(set(validity["policy"]))
    hitl = _hitl_by_days(policies)
    rows = []
    by_n = [
        (hitl[p, 90], hitl[p, 15])
        for p in sorted({p for p, _ in hitl})
        if (p, 90) in hitl and (p, 15) in hitl
    ]
    if by_n:
        rows.append(("N 90d vs 15d", paired_difference(validity, by_n, metric)))
    by_p = []
    for n in (15, 90):
        ps = sorted(p for p, n_ in hitl if n_ == n)
        if len(ps) > 1:
            by_p.append((hitl[ps[-1], n], hitl[ps[0], n]))
    if by_p:
        rows.append(("P longest vs shortest", paired_difference(validity, by_p, metric)))
    autos = [(p, _days(m["w"])) for p in policies if (m := _AUTO.match(p))]
    by_w = [(hitl[w, w], p) for p, w in autos if (w, w) in hitl]
    if by_w:
        rows.append(("hitl vs auto", paired_difference(validity, by_w, metric)))
    out = pd.DataFrame(
        [{"question": q, **r} for q, r in rows], columns=["question", "mean", "wins", "n"]
    )
    out["answer"] = [verdict(r.mean, r.wins, r.n) for r in out.itertuples()]
    medians = validity[validity["metric"] == metric].groupby("policy")["validity"].median()
    if len(medians):
        best = medians.idxmax()
        out.loc[len(out)] = ["best", medians[best], np.nan, int(len(medians)), best]
    return out


def validity_r_naming(validity: pd.DataFrame) -> pd.DataFrame:
    """Per metric, the ``np`` groups of :func:`validity_ranks` beside those R would print.

    ``group`` is the partition's own; ``group_r`` the group R's ScottKnottESD 3.0.0 would print on
    the same partition (named in mean order:
    :func:`delaycv.stats.scott_knott.r_np_group_names`); ``mean`` each setting's mean validity.

    Parameters
    ----------
    validity : pandas.DataFrame
        A validity table (:data:`VALIDITY_COLUMNS`).

    Returns
    -------
    pandas.DataFrame
        Columns ``metric``, ``treatment``, ``group``, ``group_r``, ``rank``, ``median``, ``mean``.

    Examples
    --------
    >>> v = pd.DataFrame({"project": ["p1"] * 6 + ["p2"] * 6, "policy": ["x", "y", "z"] * 4,
    ...                   "at": (["c1"] * 3 + ["c2"] * 3) * 2, "metric": "gmean",
    ...                   "validity": [99.0, 90, 80, 98, 91, 81, 97, 92, 79, 99, 89, 82]})
    >>> validity_r_naming(v)[["treatment", "group", "group_r", "mean"]].to_numpy().tolist()
    [['x', 1, 1, 98.25], ['y', 2, 2, 90.5], ['z', 3, 3, 80.5]]
    """
    frames = []
    for metric, wide in _blocks(validity):
        named = r_np_group_names(wide)
        named["mean"] = wide.mean(axis=0).reindex(named["treatment"]).to_numpy()
        frames.append(named.assign(metric=metric))
    columns = ["metric", "treatment", "group", "group_r", "rank", "median", "mean"]
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True)[columns]
