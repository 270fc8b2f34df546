"""Policy contrasts (delaycv.stats.contrasts) and the checkpoints studies choose (choose_checkpoints):
hand-computed tables, Holm over a family, both references, the `at` mapping, and the pairing of
policies by (seed, fold) that makes the contrasts paired tests."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from delaycv.common.errors import DelaycvError
from delaycv.data.synthetic import generate_stream
from delaycv.engine import fold as fold_loop
from delaycv.metrics.properties import is_fraction
from delaycv.stats.bias import BIAS_COLUMNS, bias_tests
from delaycv.stats.checkpoints import choose_checkpoints
from delaycv.stats.companions import holm
from delaycv.stats.contrasts import CONTRAST_COLUMNS, policy_contrasts
from delaycv.stats.learner_tests import run_tests
from delaycv.stats.permutation import permutation_test
from tests.support.engine_runs import evaluate_dicts
from tests.support.fold_tables import (
    HITL_OBSERVED,
    IDEAL,
    fold_table,
    hand_table,
    long_table,
    two_streams,
)


def test_contrast_by_hand_estimate_vs_ideal():
    out = policy_contrasts(hand_table(), metrics=["gmean"], resamples=5000)
    assert list(out.columns) == CONTRAST_COLUMNS
    row = out[out["reference"] == "observed"].iloc[0]
    assert row["contrast"] == "estimate vs ideal"
    assert (row["policy"], row["reference_policy"], row["at"]) == ("hitl_7d_90d", "ideal", "last")
    # d = hitl observed - ideal true = [-0.10, -0.05, -0.20, -0.05]
    assert row["mean_policy"] == pytest.approx(0.65)  # (0.70 + 0.65 + 0.70 + 0.55) / 4
    assert row["mean_reference_policy"] == pytest.approx(0.75)  # (0.8 + 0.7 + 0.9 + 0.6) / 4
    assert row["difference"] == pytest.approx(-0.10)
    # sd(d) = sqrt((0 + 0.05² + 0.10² + 0.05²) / 3) = sqrt(0.005); half = t(0.975, 3) sd / 2
    half = 3.182446305284263 * math.sqrt(0.005) / 2
    assert row["ci_low"] == pytest.approx(-0.10 - half)
    assert row["ci_high"] == pytest.approx(-0.10 + half)
    assert half == pytest.approx(stats.t.ppf(0.975, 3) * math.sqrt(0.005) / 2)
    # validity as the HITL study: 100 - |ideal - estimate| in percent = 100 - 10
    assert row["validity"] == pytest.approx(90.0)
    # exact sign flips: 2^4 = 16 vectors; |mean| >= 0.10 only for all-plus and all-minus: 2 / 16
    assert row["p_value"] == pytest.approx(0.125) and row["exact"]
    assert row["p_value"] == permutation_test(HITL_OBSERVED, IDEAL).p_value
    # Cliff's delta: of 16 (i, j), a_i > b_j 3 times (0.70, 0.65, 0.70 > 0.60), a_i < b_j 11 times
    assert row["cliffs_delta"] == pytest.approx((3 - 11) / 16)
    # one policy in the family: Holm leaves p as it is
    assert row["p_holm"] == row["p_value"] and row["family_size"] == 1
    assert not row["significant"]
    assert (row["n"], row["n_duplicates"], row["note"]) == (4, 0, FOUR_PAIRS)


#: The note of a test of 4 pairs at alpha 0.05: no p below 2/16 (only the observed signs and
#: their mirror image can reach |mean(d)|).
FOUR_PAIRS = (
    "4 (seed, fold) pairs: no p below 0.125 (2/2^4) is possible, above alpha = 0.05: not "
    "significant whatever the differences (more folds or seeds)"
)


def test_contrast_by_hand_true_value_vs_ideal():
    out = policy_contrasts(hand_table(), metrics=["gmean", "tp"], references=["true"])
    assert set(out["reference"]) == {"true"}
    row = out[out["metric"] == "gmean"].iloc[0]
    assert row["contrast"] == "true value vs ideal"
    # d = hitl true - ideal true = [-0.02, -0.04, -0.02, -0.01]
    assert row["mean_policy"] == pytest.approx(0.7275)
    assert row["difference"] == pytest.approx(-0.0225)
    sd = math.sqrt((0.0025**2 + 0.0175**2 + 0.0025**2 + 0.0125**2) / 3)
    half = stats.t.ppf(0.975, 3) * sd / 2
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((-0.0225 - half, -0.0225 + half))
    assert row["validity"] == pytest.approx(97.75)
    assert row["p_value"] == pytest.approx(0.125)  # every d < 0: 2 of 16 sign vectors
    # 0.78 > 0.70, 0.60; 0.66 > 0.60; 0.88 > 0.80, 0.70, 0.60: 6 greater, 10 smaller
    assert row["cliffs_delta"] == pytest.approx((6 - 10) / 16)
    # tp is a count: the difference is there, the validity (a percent scale) is not
    tp = out[out["metric"] == "tp"].iloc[0]
    assert tp["difference"] == pytest.approx(-2.25)
    assert math.isnan(tp["validity"])


def test_the_two_contrasts_differ_by_the_policys_bias():
    table = fold_table(seeds=(1, 2), folds=5, checkpoints=3)
    out = policy_contrasts(table, metrics=["gmean"], checkpoints="all")
    wide = out.pivot_table(
        index=["learner", "checkpoint", "policy"], columns="reference", values="difference"
    )
    bias = bias_tests(table, metrics=["gmean"], checkpoints="all")
    bias = bias[bias["policy"] != "ideal"].set_index(["learner", "checkpoint", "policy"])
    np.testing.assert_allclose(
        (wide["observed"] - wide["true"]).to_numpy(),
        bias["mean_bias"].reindex(wide.index).to_numpy(),
        atol=1e-12,
    )


def test_is_fraction():
    fractions = ["gmean", "recall_1", "fpr_1", "accuracy", "brier", "auc", "unknown_rate_0"]
    fractions += ["nochange_accuracy", "majority_recall_1", "precision", "f2_1", "gmean_pr"]
    others = ["tp", "classified", "kappa", "kappa_m_gmean", "kappa_f1_1", "mcc", "log_loss"]
    others += ["info_score", "unknown"]
    assert all(is_fraction(m) for m in fractions)
    assert not any(is_fraction(m) for m in others)


def test_holm_over_the_policies_of_a_family():
    ideal = [0.5] * 6
    table = long_table(
        {
            ("ideal", "true"): ideal,
            ("a", "true"): [0.4, 0.45, 0.3, 0.35, 0.4, 0.45],  # every d < 0: p = 2 / 64
            ("b", "true"): [0.6, 0.4, 0.55, 0.45, 0.5, 0.5],  # d = ±0.1, ±0.05, 0, 0
        }
    )
    out = policy_contrasts(table, metrics=["gmean"], references=["true"]).set_index("policy")
    assert out.loc["a", "p_value"] == pytest.approx(2 / 64)
    # b: mean 0; every sign vector has |mean| >= 0: p = 1
    assert out.loc["b", "p_value"] == pytest.approx(1.0)
    # Holm with m = 2: a 2 x 1/32 = 0.0625, b max(0.0625, 1 x 1) = 1
    assert out.loc["a", "p_holm"] == pytest.approx(0.0625)
    assert out.loc["b", "p_holm"] == pytest.approx(1.0)
    assert (out["family_size"] == 2).all()
    np.testing.assert_allclose(out["p_holm"], holm(out["p_value"].to_numpy()))
    assert not out.loc["a", "significant"]  # 0.0625 > 0.05
    # alone in its family a would be significant: Holm is over the policies, not the metrics
    alone = policy_contrasts(
        table[table["policy"] != "b"], metrics=["gmean", "tp"], references=["true"]
    )
    assert alone["p_holm"].tolist() == pytest.approx([2 / 64, 2 / 64])
    assert alone["significant"].all()


def test_families_are_per_learner_checkpoint_reference_and_metric():
    table = fold_table(
        learners={"ht": 0.05, "nb": 0.0},
        policies={"ideal": 0.0, "hitl_1d_90d": 0.03, "hitl_30d_90d": 0.06, "delay_7d": -0.02},
        seeds=(1, 2),
        folds=6,
        checkpoints=3,
    )
    out = policy_contrasts(table, metrics=["gmean", "recall_1"], checkpoints="all", resamples=500)
    # 2 learners x 3 checkpoints x 2 references x 2 metrics families of 3 policies
    assert len(out) == 2 * 3 * 2 * 2 * 3
    assert (out["family_size"] == 3).all()
    for _, family in out.groupby(["learner", "checkpoint", "reference", "metric"]):
        np.testing.assert_allclose(family["p_holm"], holm(family["p_value"].to_numpy()))
    assert set(out["policy"]) == {"hitl_1d_90d", "hitl_30d_90d", "delay_7d"}
    # the learner tests' machinery gives the same paired test: ht under delay_7d against ideal
    pick = out[
        (out["learner"] == "ht")
        & (out["policy"] == "delay_7d")
        & (out["reference"] == "true")
        & (out["metric"] == "gmean")
    ].iloc[-1]
    at = table[(table["learner"] == "ht") & (table["checkpoint"] == pick["checkpoint"])]
    at = at[at["reference"] == "true"].set_index(["policy", "seed", "fold"])["gmean"]
    a, b = at.loc["delay_7d"].sort_index(), at.loc["ideal"].sort_index()
    ref = permutation_test(a.to_numpy(), b.to_numpy(), resamples=500)
    assert pick["p_value"] == pytest.approx(ref.p_value)
    assert pick["n"] == 12 and pick["difference"] == pytest.approx(ref.mean_diff)


def test_repeated_seeds_count_once():
    out = policy_contrasts(hand_table(seeds=(1, 2)), metrics=["gmean"])
    row = out[out["reference"] == "observed"].iloc[0]
    assert (row["n"], row["n_duplicates"]) == (4, 4)
    assert row["p_value"] == pytest.approx(0.125)  # as with one seed


def test_another_reference_policy_and_errors():
    table = hand_table()
    out = policy_contrasts(table, reference_policy="hitl_7d_90d", metrics=["gmean"])
    assert set(out["policy"]) == {"ideal"}
    assert set(out["contrast"]) == {"estimate vs hitl_7d_90d", "true value vs hitl_7d_90d"}
    true = out[out["reference"] == "true"].iloc[0]
    assert true["difference"] == pytest.approx(0.0225)
    with pytest.raises(DelaycvError, match="no policy named 'oracle'.*hitl_7d_90d"):
        policy_contrasts(table, reference_policy="oracle", metrics=["gmean"])
    with pytest.raises(DelaycvError, match="reference"):
        policy_contrasts(table, metrics=["gmean"], references=["guess"])
    only_ideal = policy_contrasts(table[table["policy"] == "ideal"], metrics=["gmean"])
    assert only_ideal.empty and list(only_ideal.columns) == CONTRAST_COLUMNS


# --------------------------------------------------------------------------- checkpoints


def test_choose_positions_and_a_shorter_stream():
    chosen = choose_checkpoints(two_streams(), {"positions": [1000, 1001, 2000]})
    assert list(chosen.columns) == ["dataset", "at", "checkpoint", "note"]
    got = [tuple(r) for r in chosen.astype({"checkpoint": object}).to_numpy()]
    next_ = "requested position 1001, tested at checkpoint {} (the next checkpoint)"
    assert got == [
        ("long", "position_1000", 1000, ""),
        ("long", "position_1001", 1500, next_.format(1500)),  # the first at or after it, said
        ("long", "position_2000", 2000, ""),
        ("short", "position_1000", 1000, ""),
        ("short", "position_1001", 1200, next_.format(1200)),
        (
            "short",
            "position_2000",
            pd.NA,
            "requested position 2000: beyond the stream (n = 1200), no test",
        ),
    ]


def test_choose_fractions_of_each_stream():
    chosen = choose_checkpoints(two_streams(), {"fractions": [0.1, 0.3, 0.5, 1.0]})
    table = chosen.set_index(["dataset", "at"])["checkpoint"]
    # long, n = 3000: 300 -> 500, 900 -> 1000 (0.3 * 3000 is 900, not 900.0000000000001), 1500, 3000
    assert table.loc["long"].tolist() == [500, 1000, 1500, 3000]
    # short, n = 1200: 120 -> 500, 360 -> 500, 600 -> 1000, 1200
    assert table.loc["short"].tolist() == [500, 500, 1000, 1200]
    assert list(table.loc["short"].index) == [
        "fraction_0.1",
        "fraction_0.3",
        "fraction_0.5",
        "fraction_1.0",
    ]
    # a fraction between checkpoints says which position it was and where it was tested
    notes = chosen.set_index(["dataset", "at"])["note"]
    assert notes[("long", "fraction_0.1")] == (
        "requested fraction 0.1 = position 300 of 3000, tested at checkpoint 500 (the next "
        "checkpoint)"
    )
    assert notes[("short", "fraction_0.5")] == (
        "requested fraction 0.5 = position 600 of 1200, tested at checkpoint 1000 (the next "
        "checkpoint)"
    )
    # a fraction that lands on a checkpoint has no note
    assert notes[("long", "fraction_0.5")] == notes[("short", "fraction_1.0")] == ""


def test_choose_last_all_exact_and_errors():
    table = two_streams()
    last = choose_checkpoints(table, "last")
    assert last["checkpoint"].tolist() == [3000, 1200] and set(last["at"]) == {"last"}
    assert len(choose_checkpoints(table, "all")) == 6 + 3
    exact = choose_checkpoints(table, [1500])
    assert exact["checkpoint"].tolist()[0] == 1500
    assert exact["note"].tolist() == [
        "",
        "requested checkpoint 1500: not a checkpoint of the table, no test",
    ]
    for bad in ("first", {"positions": [0]}, {"fractions": [1.5]}, {"fractions": []}, {}):
        with pytest.raises(DelaycvError):
            choose_checkpoints(table, bad)
    with pytest.raises(DelaycvError, match="positions, fractions, times or several"):
        choose_checkpoints(table, {"position": [1000]})
    # both lists: positions, then fractions, per dataset (the HITL study's key commits)
    both = choose_checkpoints(table, {"positions": [1000], "fractions": [1.0]})
    assert both["at"].tolist() == ["position_1000", "fraction_1.0"] * 2
    assert both["checkpoint"].tolist() == [1000, 3000, 1000, 1200]


def test_tests_bias_and_contrasts_follow_the_chosen_checkpoints():
    table = two_streams()
    spec = {"positions": [1000, 2000]}
    tests = run_tests(table, metrics=["gmean"], checkpoints=spec, resamples=200)
    bias = bias_tests(table, metrics=["gmean"], checkpoints=spec, resamples=200)
    contrasts = policy_contrasts(table, metrics=["gmean"], checkpoints=spec, resamples=200)
    for frame in (tests, bias, contrasts):
        gap = frame[frame["n"] == 0]
        assert len(gap) == 1, frame
        gap = gap.iloc[0]
        assert (gap["dataset"], gap["at"]) == ("short", "position_2000")
        assert gap["note"] == "requested position 2000: beyond the stream (n = 1200), no test"
        assert pd.isna(gap["checkpoint"])
        assert gap["n"] == 0
        if "significant" in frame:
            assert not gap["significant"]
        found = frame[frame["n"] > 0]
        assert set(found["note"]) == {FOUR_PAIRS}  # (4 folds: never significant)
        assert set(zip(found["dataset"], found["at"], found["checkpoint"], strict=True)) == {
            ("long", "position_1000", 1000),
            ("long", "position_2000", 2000),
            ("short", "position_1000", 1000),
        }
        assert frame["checkpoint"].dtype == "Int64"
    # two requests that land on one checkpoint give a row each, the same test
    twice = run_tests(
        table, metrics=["gmean"], checkpoints={"positions": [999, 1000]}, resamples=200
    )
    one = twice[
        (twice["dataset"] == "short")
        & (twice["policy"] == "ideal")
        & (twice["reference"] == "true")
        & (twice["learner_a"] == "ht")
        & (twice["learner_b"] == "nb")
    ]
    assert sorted(one["at"]) == ["position_1000", "position_999"]
    assert one["checkpoint"].tolist() == [1000, 1000]
    assert one["p_value"].nunique() == 1
    assert sorted(one["note"]) == [
        FOUR_PAIRS,
        f"requested position 999, tested at checkpoint 1000 (the next checkpoint); {FOUR_PAIRS}",
    ]


def test_last_keeps_the_tests_as_before():
    table = fold_table(folds=6, checkpoints=3)
    tests = run_tests(table, metrics=["gmean"], checkpoints="last", resamples=200)
    assert set(tests["at"]) == {"last"} and set(tests["note"]) == {""}
    assert set(tests["checkpoint"]) == {int(table["checkpoint"].max())}
    bias = bias_tests(table, metrics=["gmean"])  # the default: the last checkpoint
    assert set(bias["at"]) == {"last"} and list(bias.columns) == BIAS_COLUMNS


# --------------------------------------------------------------------------- pairs


def test_policies_pair_by_seed_and_fold(monkeypatch):
    """Fold i of two policies trains with the same instance weights and the same learner seed
    (docs/engine.md, "Pairs across policies"): the contrasts' pairs are real pairs."""
    seeds: dict[str, list[int]] = {}
    make = fold_loop.make_learner

    def recording(spec, *, seed):
        seeds.setdefault(current, []).append(seed)
        return make(spec, seed=seed)

    monkeypatch.setattr(fold_loop, "make_learner", recording)
    stream = generate_stream(rows=400, seed=5)
    logs = {}
    for current in ("ideal", "hitl_1d_30d"):
        spec = (
            {"preset": "ideal"}
            if current == "ideal"
            else {"preset": "hitl", "pos_window": "1d", "neg_window": "30d"}
        )
        result = evaluate_dicts(
            stream,
            learner_spec={"class": "river.tree.HoeffdingTreeClassifier"},
            policy_spec=spec,
            validation_spec={"scheme": "bootstrap", "folds": 3, "seed": 4},
            seed=7,
            estimator_spec={"kind": "fading", "alpha": 0.99},
            every=100,
            keep_predictions=True,
            timing=False,
        )
        logs[current] = result.predictions.sort_values(["fold", "index"]).reset_index(drop=True)
    a, b = logs["ideal"], logs["hitl_1d_30d"]
    assert len(a) == len(b) == 3 * 400
    np.testing.assert_array_equal(a["weight"].to_numpy(), b["weight"].to_numpy())
    assert a.groupby("fold")["weight"].sum().nunique() == 3  # the folds differ among themselves
    assert seeds["ideal"] == seeds["hitl_1d_30d"] and len(set(seeds["ideal"])) == 3
    # the labels differ (otherwise the test would show nothing)
    assert (a["observed_at"].fillna(-1) != b["observed_at"].fillna(-1)).any()


# --------------------------------------------------------------------------- figure


def test_contrast_figure_files_and_title(tmp_path, caplog):
    from delaycv.figures.contrasts import contrast_figure, draw_contrast_figures

    policies = {"ideal": 0.0, "hitl_1d_90d": 0.01, "hitl_7d_90d": 0.03, "hitl_1d_15d": 0.0}
    policies |= {"hitl_7d_15d": 0.02, "verification_90d": -0.02, "mine": 0.0}
    table = fold_table(learners={"ht": 0.05, "nb": 0.0}, policies=policies, folds=6, checkpoints=3)
    contrasts = policy_contrasts(table, metrics=["gmean"], checkpoints={"fractions": [0.5, 1.0]})
    fig = contrast_figure(contrasts, dataset="synth", metric="gmean")
    title = fig._suptitle.get_text()
    assert (
        "(fraction 1.0 of the stream, checkpoint 1493;" in title
        and "not on a window axis: mine" in title
    )
    axes = [ax for ax in fig.axes if ax.get_visible()]
    # two kinds of window (P, W): a row per contrast, the kinds side by side on one y axis
    assert len(axes) == 4
    titles = [ax.get_title() for ax in axes]
    assert titles == ["estimate vs ideal"] * 2 + ["true value vs ideal"] * 2
    assert [ax.get_xlabel()[:3] for ax in axes] == ["P, ", "W, "] * 2
    assert [bool(ax.get_ylabel()) for ax in axes] == [True, False] * 2
    # one kind of window (P): a row of two contrasts
    hitl = contrasts[~contrasts["policy"].str.startswith("verification")]
    axes = [ax for ax in contrast_figure(hitl, dataset="synth", metric="gmean").axes]
    assert [ax.get_title() for ax in axes] == ["estimate vs ideal", "true value vs ideal"]
    assert [ax.get_xlabel()[:3] for ax in axes] == ["P, ", "P, "]
    first = draw_contrast_figures(contrasts, tmp_path / "a", metric="gmean", formats=["png"])
    again = draw_contrast_figures(contrasts, tmp_path / "b", metric="gmean", formats=["png"])
    assert [p.name for p in first] == ["contrasts_synth_gmean.png"]
    assert first[0].read_bytes() == again[0].read_bytes()
    # no policy with a known window: no figure, a warning
    odd = contrasts[contrasts["policy"] == "mine"]
    assert draw_contrast_figures(odd, tmp_path / "c", metric="gmean", formats=["png"]) == []
    assert "no contrasts figure" in caplog.text


def test_a_table_of_no_test_has_typed_columns():
    """Every request beyond the stream: rows with a note and no test, whose counts are 0, flags
    false and numbers NaN as in a table with tests (they were empty strings: a tests.parquet
    whose ``n`` and ``p_value`` were text)."""
    table = fold_table(folds=6, checkpoints=3)
    spec = {"positions": [99_999]}
    one_policy = table[table["policy"] == "ideal"]  # (no policy to contrast)
    frames = {
        "tests": run_tests(table, metrics=["gmean"], checkpoints=spec),
        "bias": bias_tests(table, metrics=["gmean"], checkpoints=spec),
        "contrasts": policy_contrasts(one_policy, metrics=["gmean"], checkpoints=spec),
    }
    for name, frame in frames.items():
        assert len(frame) >= 1 and (frame["n"] == 0).all(), name
        assert frame["n"].dtype == "int64" and frame["exact"].dtype == bool, name
        assert frame["p_value"].dtype == "float64" and frame["p_value"].isna().all(), name
        assert frame["note"].str.startswith("requested position 99999: beyond the stream").all()
