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

    >>> study_policy("verification_7d"), study_policy("hitl_7d_90d"), study_policy("ideal")
    ('auto_7d_7d', 'hitl_7d_90d', 'ideal')
    """
    windows = _preset_windows(name, "verification")
    return f"auto_{windows['window']}_{windows['window']}" if windows else name


def study_at(at: str) -> str:
    """delaycv's ``at`` label in the study's spelling: ``position_1000`` -> ``commit_1000``."""
    return "commit_" + at.removeprefix("position_") if at.startswith("position_") else at


def study_validity(means: pd.DataFrame, metrics: Sequence[str] = METRICS) -> pd.DataFrame:
    """The study's validity from its fold averages (``means.csv.gz``: project, policy, at and the
    metrics in percent): ``100 - |ideal - estimate|`` against the same project's ``ideal`` at the
    same ``at``. Columns :data:`VALIDITY_COLUMNS` (estimate and ideal in percent); ideal's own rows
    are left out.

    >>> m = pd.DataFrame({"project": ["a", "a"], "policy": ["ideal", "hitl_1d_15d"],
    ...                   "at": ["commit_1000"] * 2, "gmean": [40.0, 25.5]})
    >>> study_validity(m, ["gmean"])[["policy", "validity"]].to_numpy().tolist()
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
    """delaycv's validity from its contrast tables (:func:`delaycv.stats.contrasts.policy_contrasts`
        against ``ideal``), in the study's names and percent. ``reference="observed"`` is the study's
        quantity (the setting's estimate against ideal); ``"true"`` is the model's own true-label value
        against ideal. Rows without a checkpoint (a position beyond a stream: no test) are left out; a
    row whose note only says where it was tested is kept. Columns
        :data:`VALIDITY_COLUMNS`."""
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
    """The two validity tables joined on (project, policy, at, metric): the columns of each get the
    suffix ``_study`` / ``_delaycv``; only keys present in both."""
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
    """Scott-Knott ESD of the settings (policies) by validity, per metric, as the study ranked them:
    the observations of a setting are its validity values at every (project, at) of the table.
    Columns: ``metric`` then those of :func:`delaycv.stats.scott_knott.scott_knott_esd` (group and rank 1 =
    most valid). A (project, at) where a setting has no value is left out for all."""
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
    """Validity of the first policy of each pair minus the second's, over every (project, at) where
    both have a value: ``mean``, ``wins`` (the share of differences above 0) and ``n``."""
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
    """The answer to a paired question, from both of its numbers: the first setting is "more
    valid" only when its mean difference is positive **and** it wins most pairs (the reverse for
    the second); when the two disagree (a few large differences against most pairs), "mixed".

    >>> verdict(5.9, 0.9, 10), verdict(-1.0, 0.0, 5), verdict(-0.37, 0.72, 280)
    ('first more valid', 'second more valid', 'mixed: the mean favours the second, most pairs the first')
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
    """The study's questions asked of one validity table (study's or delaycv's), for one metric:

    * ``N 90d vs 15d``: hitl_P_90d against hitl_P_15d at the same P (RQ1: does waiting longer for a
      fix before calling a commit clean give a more valid estimate?);
    * ``P longest vs shortest``: hitl with the longest inspection time against the shortest, per N;
    * ``hitl vs auto``: hitl_W_W against auto_W_W at the same W (RQ3: does a human in the loop give
      a more valid estimate than automatic labelling?);
    * ``best``: the setting with the highest median validity.

    Settings are matched by their windows in whole days, read from their names through the preset
    registry (``hitl_1w_90d`` is P = 7, N = 90; a name with an inspection error or a window in
    instances is not one of the study's settings).

    One row per question: ``question``, ``mean`` (mean paired difference, percentage points),
    ``wins`` (share of (project, at, setting) pairs where the first is more valid), ``n`` and
    ``answer`` (:func:`verdict`: read from both the mean and the wins)."""
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
    """Per metric, the ``np`` groups of :func:`validity_ranks` (the partition's own, ``group``)
    beside the groups R's ScottKnottESD 3.0.0 would print on the same partition (``group_r``,
    named in mean order: :func:`delaycv.stats.scott_knott.r_np_group_names`), with each setting's ``mean``
    validity. Columns: ``metric``, ``treatment``, ``group``, ``group_r``, ``rank``, ``median``,
    ``mean``."""
    frames = []
    for metric, wide in _blocks(validity):
        named = r_np_group_names(wide)
        named["mean"] = wide.mean(axis=0).reindex(named["treatment"]).to_numpy()
        frames.append(named.assign(metric=metric))
    columns = ["metric", "treatment", "group", "group_r", "rank", "median", "mean"]
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True)[columns]
