"""delaycv.stats.replication: the study's validity, delaycv's from its contrasts, ranks and findings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from delaycv.common.errors import DelaycvError
from delaycv.stats import replication as rep
from tests.support.paths import REPO

STUDY = REPO.parent / "shared" / "reference" / "hitl-study" / "means.csv.gz"


def _contrast_rows(rows):
    """A contrasts table (the columns delaycv_validity reads) from (dataset, policy, at, metric,
    reference, mean_policy, mean_reference_policy) tuples; validity as policy_contrasts gives it."""
    frame = pd.DataFrame(
        rows,
        columns=[
            "dataset",
            "policy",
            "at",
            "metric",
            "reference",
            "mean_policy",
            "mean_reference_policy",
        ],
    )
    frame["learner"] = "ht"
    frame["reference_policy"] = "ideal"
    frame["note"] = ""
    frame["checkpoint"] = [int(a.split("_")[1]) + 20 for a in frame["at"]]
    frame["validity"] = 100 - 100 * (frame["mean_policy"] - frame["mean_reference_policy"]).abs()
    return frame


def test_study_validity_by_hand():
    means = pd.DataFrame(
        {
            "project": ["a", "a", "a", "b", "b"],
            "policy": ["ideal", "hitl_1d_15d", "auto_1d_1d", "ideal", "hitl_1d_15d"],
            "at": ["commit_1000"] * 5,
            "gmean": [40.0, 25.5, 47.0, 10.0, 10.0],
            "recall_1": [20.0, 10.0, 30.0, 5.0, 1.0],
            "fpr_1": [1.0, 0.5, 3.0, 2.0, 2.5],
        }
    )
    out = rep.study_validity(means).set_index(["project", "policy", "metric"])["validity"]
    # 100 - |ideal - estimate|: a hitl gmean |40 - 25.5| = 14.5; a auto gmean |40 - 47| = 7
    assert out["a", "hitl_1d_15d", "gmean"] == pytest.approx(85.5)
    assert out["a", "auto_1d_1d", "gmean"] == pytest.approx(93.0)
    assert out["a", "auto_1d_1d", "fpr_1"] == pytest.approx(98.0)
    assert out["b", "hitl_1d_15d", "recall_1"] == pytest.approx(96.0)
    assert out["b", "hitl_1d_15d", "gmean"] == pytest.approx(100.0)
    assert len(out) == 9  # ideal's own rows left out


def test_delaycv_validity_names_percent_and_notes():
    contrasts = _contrast_rows(
        [
            ("a", "verification_7d", "position_1000", "gmean", "observed", 0.30, 0.40),
            ("a", "verification_7d", "position_1000", "gmean", "true", 0.35, 0.40),
            ("a", "hitl_7d_90d", "position_2000", "gmean", "observed", 0.45, 0.40),
        ]
    )
    beyond = contrasts.iloc[[2]].assign(
        at="position_5000", checkpoint=np.nan, note="beyond the stream (n = 3000)"
    )
    # a note that only says where the row was tested keeps it
    contrasts.loc[0, "note"] = "requested position 1000, tested at checkpoint 1020"
    contrasts = pd.concat([contrasts, beyond], ignore_index=True)
    out = rep.delaycv_validity(contrasts)
    assert out[["policy", "at"]].to_numpy().tolist() == [
        ["auto_7d_7d", "commit_1000"],
        ["hitl_7d_90d", "commit_2000"],
    ]
    assert out["estimate"].tolist() == pytest.approx([30.0, 45.0])
    assert out["ideal"].tolist() == pytest.approx([40.0, 40.0])
    assert out["validity"].tolist() == pytest.approx([90.0, 95.0])
    true = rep.delaycv_validity(contrasts, reference="true")
    assert true["validity"].tolist() == pytest.approx([95.0])


def test_delaycv_validity_refuses_two_learners_unless_named():
    a = _contrast_rows([("a", "hitl_1d_15d", "position_1000", "gmean", "observed", 0.3, 0.4)])
    b = a.assign(learner="nb", mean_policy=0.1)
    with pytest.raises(DelaycvError, match="several learners"):
        rep.delaycv_validity(pd.concat([a, b]))
    assert rep.delaycv_validity(pd.concat([a, b]), learner="nb")["estimate"].tolist() == [10.0]


def test_side_by_side_keeps_common_keys():
    study = pd.DataFrame(
        [["a", "auto_7d_7d", "commit_1000", "gmean", 30.0, 40.0, 90.0]],
        columns=rep.VALIDITY_COLUMNS,
    )
    ours = pd.DataFrame(
        [
            ["a", "auto_7d_7d", "commit_1000", "gmean", 35.0, 41.0, 94.0],
            ["a", "auto_7d_7d", "commit_2000", "gmean", 35.0, 41.0, 94.0],
        ],
        columns=rep.VALIDITY_COLUMNS,
    )
    both = rep.side_by_side(study, ours)
    assert len(both) == 1
    assert both[["validity_study", "validity_delaycv"]].to_numpy().tolist() == [[90.0, 94.0]]


def _validity(values: dict[str, list[float]], metric="gmean") -> pd.DataFrame:
    rows = []
    for policy, vs in values.items():
        for i, v in enumerate(vs):
            rows.append(
                [
                    f"p{i // 5}",
                    policy,
                    f"commit_{1000 * (i % 5 + 1)}",
                    metric,
                    np.nan,
                    np.nan,
                    v,
                ]
            )
    return pd.DataFrame(rows, columns=rep.VALIDITY_COLUMNS)


def test_validity_ranks_separates_a_far_setting():
    rng = np.random.default_rng(1)
    base = rng.normal(80, 1, 10)
    table = _validity({"hitl_1d_15d": base, "hitl_3d_15d": base + 0.01, "hitl_90d_90d": base + 15})
    ranks = rep.validity_ranks(table).set_index("treatment")
    assert ranks.loc["hitl_90d_90d", "group"] == 1
    assert ranks.loc["hitl_1d_15d", "group"] == ranks.loc["hitl_3d_15d", "group"] == 2


def test_findings_by_hand():
    table = _validity(
        {
            "hitl_1d_15d": [80, 80, 80, 80, 80],
            "hitl_90d_15d": [82, 82, 82, 82, 82],
            "hitl_1d_90d": [85, 85, 85, 85, 79],
            "hitl_90d_90d": [90, 90, 90, 90, 90],
            "auto_90d_90d": [91, 91, 91, 91, 91],
        }
    )
    out = rep.findings(table).set_index("question")
    # N: (1d: 85-80 x4, 79-80) and (90d: 90-82 x5): mean (4*5 - 1 + 5*8) / 10 = 5.9, 9 of 10 wins
    assert out.loc["N 90d vs 15d", "mean"] == pytest.approx(5.9)
    assert out.loc["N 90d vs 15d", "wins"] == pytest.approx(0.9)
    assert out.loc["N 90d vs 15d", "answer"] == "first more valid"
    # P: (82 - 80) x5 and (90 - 85) x4, (90 - 79): (10 + 20 + 11) / 10
    assert out.loc["P longest vs shortest", "mean"] == pytest.approx(4.1)
    # hitl_90d_90d - auto_90d_90d = -1 everywhere
    assert out.loc["hitl vs auto", "mean"] == pytest.approx(-1.0)
    assert out.loc["hitl vs auto", "answer"] == "second more valid"
    assert out.loc["best", "answer"] == "auto_90d_90d"


@pytest.mark.realdata
def test_study_validity_on_the_study_means():
    if not STUDY.exists():
        pytest.skip(f"the study's numbers are not available: {STUDY}")
    means = pd.read_csv(STUDY)
    validity = rep.study_validity(means)
    # 8 projects x 26 realistic settings x 15 positions x 3 metrics
    assert len(validity) == 8 * 26 * 15 * 3
    assert validity["validity"].between(0, 100).all()
    one = means[(means.project == "brackets") & (means["at"] == "commit_5000")].set_index("policy")
    expected = 100 - abs(one.loc["ideal", "gmean"] - one.loc["hitl_7d_90d", "gmean"])
    got = validity[
        (validity.project == "brackets")
        & (validity["at"] == "commit_5000")
        & (validity.policy == "hitl_7d_90d")
        & (validity.metric == "gmean")
    ]["validity"]
    assert got.item() == pytest.approx(expected)


def test_findings_read_policy_names_through_the_presets():
    """The hitl windows are read as durations (1w is 7 days, 168h too), a name with an
    inspection error or in instances is not a study setting, and two names for one setting are
    refused rather than one picked."""
    table = _validity(
        {
            "hitl_1w_15d": [80, 80, 80],
            "hitl_7d_90d": [83, 83, 83],
            "hitl_7d_90d_err0.1": [10, 10, 10],
            "hitl_500i_90d": [10, 10, 10],
            "auto_168h_168h": [81, 81, 81],
            "hitl_168h_168h": [84, 84, 84],
        }
    )
    out = rep.findings(table).set_index("question")
    assert out.loc["N 90d vs 15d", "mean"] == pytest.approx(3.0)
    assert out.loc["N 90d vs 15d", "n"] == 3
    assert out.loc["hitl vs auto", "mean"] == pytest.approx(3.0)
    assert "P longest vs shortest" not in out.index  # one P per N: nothing to compare
    twice = _validity({"hitl_7d_90d": [1, 1], "hitl_1w_90d": [2, 2]})
    with pytest.raises(DelaycvError, match="hitl_1w_90d and hitl_7d_90d have the same windows"):
        rep.findings(twice)


def test_a_mean_and_wins_that_disagree_are_mixed():
    # hitl_90d_90d wins 4 of 5 projects by 1 point, loses one by 10: the mean favours auto
    table = _validity({"hitl_90d_90d": [91, 91, 91, 91, 80], "auto_90d_90d": [90, 90, 90, 90, 90]})
    out = rep.findings(table).set_index("question")
    assert out.loc["hitl vs auto", "mean"] == pytest.approx(-1.2)
    assert out.loc["hitl vs auto", "wins"] == pytest.approx(0.8)
    assert out.loc["hitl vs auto", "answer"] == (
        "mixed: the mean favours the second, most pairs the first"
    )
