"""Figures (delaycv.figures) and the `compare` / `plot` subcommands, on synthetic per-fold tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex

from delaycv.cli import main
from delaycv.common.errors import DelaycvError
from delaycv.figures.bias import MIN_SPAN, bias_curves
from delaycv.figures.figure_set import draw_figures
from delaycv.figures.final import final_distributions
from delaycv.figures.learning import learning_curves, strip_labels
from delaycv.figures.pairwise import pairwise_heatmap
from delaycv.figures.rows import policy_order
from delaycv.figures.sensitivity import sensitivity, window_placement
from delaycv.figures.style import (
    JITTER,
    MAX_COLUMNS,
    NS_COLOUR,
    date_axis,
    learner_styles,
    save_figure,
    to_dates,
)
from delaycv.protocol.policy_windows import policy_windows
from delaycv.stages.figures import figures
from delaycv.stats.learner_tests import TEST_COLUMNS, run_tests
from tests.support.fold_tables import fold_table

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def table():
    return fold_table(
        learners={"ht": 0.03, "nb": 0.0, "prior": -0.1},
        policies={"ideal": 0.0, "hitl_1d_90d": 0.06, "hitl_7d_90d": 0.04, "hitl_30d_90d": 0.01},
        folds=8,
        checkpoints=6,
        noise=0.03,
    )


@pytest.fixture(scope="module")
def tests_all(table):
    return run_tests(table, metrics=["accuracy", "brier"], checkpoints="all", resamples=500)


def test_learning_curves_panels_titles_and_strip_colours(table, tests_all):
    fig = learning_curves(table, tests_all, dataset="synth", metric="accuracy", alpha=0.05)
    titles = [ax.get_title() for ax in fig.axes]
    # one curve panel per policy, ideal first, then by window
    assert [t for t in titles if t] == [
        "policy ideal",
        "policy hitl_1d_90d",
        "policy hitl_7d_90d",
        "policy hitl_30d_90d",
    ]
    assert "synth" in fig._suptitle.get_text() and "accuracy" in fig._suptitle.get_text()
    curve = fig.axes[0]
    assert curve.get_ylabel() == "accuracy (fraction)"
    assert len(curve.get_lines()) == 3
    # the curve is the fold mean at each checkpoint
    ideal = table[(table.policy == "ideal") & (table.reference == "true") & (table.learner == "ht")]
    means = ideal.groupby("checkpoint")["accuracy"].mean().to_numpy()
    np.testing.assert_allclose(curve.get_lines()[0].get_ydata(), means)
    strip = fig.axes[1]
    # each pair is named above its cells (no width taken from the panel)
    assert strip_labels(strip) == ["ht vs nb", "ht vs prior", "nb vs prior"]
    assert strip.get_yticklabels() == []
    assert strip.get_xlabel() == "stream time (date)"
    # each cell has the colour of the significantly better learner, grey when n.s.
    styles = learner_styles(["ht", "nb", "prior"])
    sub = tests_all[
        (tests_all.policy == "ideal")
        & (tests_all.metric == "accuracy")
        & (tests_all.reference == "true")
    ]
    expected = []
    for a, b in [("ht", "nb"), ("ht", "prior"), ("nb", "prior")]:
        for w in sub[(sub.learner_a == a) & (sub.learner_b == b)].sort_values("checkpoint")[
            "better"
        ]:
            expected.append(styles[w]["color"].lower() if w else NS_COLOUR.lower())
    got = [to_hex(p.get_facecolor()) for p in strip.patches]
    assert got == expected
    assert set(sub[sub.learner_b == "prior"]["better"]) == {"ht", "nb"}
    # the cells span the curves' checkpoints, from the first to the last, and no further
    x = curve.get_lines()[0].get_xdata()
    lefts = [p.get_x() for p in strip.patches]
    rights = [p.get_x() + p.get_width() for p in strip.patches]
    assert min(lefts) == pytest.approx(min(x)) and max(rights) == pytest.approx(max(x))


def test_baseline_strip_and_checkpoint_axis(table, tests_all):
    fig = learning_curves(
        table, tests_all, dataset="synth", metric="brier", baseline="prior", x="checkpoint"
    )
    strip = fig.axes[1]
    assert strip_labels(strip) == ["ht vs prior", "nb vs prior"]
    assert strip.get_xlabel() == "stream position (instances)"
    assert fig.axes[0].get_ylabel() == "brier (loss, lower is better)"


def test_bias_curves_show_observed_minus_true(table):
    fig = bias_curves(table, dataset="synth", metric="accuracy")
    axes = [ax for ax in fig.axes if ax.get_visible() and ax.get_title()]
    by_title = {ax.get_title(): ax for ax in axes}
    np.testing.assert_allclose(by_title["policy hitl_1d_90d"].get_lines()[1].get_ydata(), 0.06)
    np.testing.assert_allclose(by_title["policy ideal"].get_lines()[1].get_ydata(), 0.0, atol=1e-12)
    assert by_title["policy ideal"].get_ylabel() == "observed − true accuracy"


def test_a_bias_of_rounding_alone_is_drawn_flat(table):
    """Under ideal, observed - true is 0 up to rounding (1e-16): the y axis spans at least
    MIN_SPAN around 0, so that rounding is not stretched over the panel."""
    ideal = table[table["policy"] == "ideal"].copy()
    noise = np.random.default_rng(1).normal(0.0, 1e-16, len(ideal))
    ideal.loc[ideal["reference"] == "observed", "accuracy"] += noise[
        ideal["reference"] == "observed"
    ]
    fig = bias_curves(ideal, dataset="synth", metric="accuracy")
    ax = next(a for a in fig.axes if a.get_title() == "policy ideal")
    low, high = ax.get_ylim()
    assert high - low >= MIN_SPAN and low < 0.0 < high
    for line in ax.get_lines():
        assert np.all(np.abs(line.get_ydata()) < 1e-12)


def test_pairwise_heatmap_cells_are_oriented_cliffs_delta(tests_all):
    fig = pairwise_heatmap(tests_all, dataset="synth", metric="brier", reference="true")
    ax = next(a for a in fig.axes if a.get_title() == "policy ideal")
    matrix = ax.images[0].get_array()
    last = tests_all[
        (tests_all.metric == "brier")
        & (tests_all.reference == "true")
        & (tests_all.policy == "ideal")
    ]
    last = last[last.checkpoint == last.checkpoint.max()]
    row = last[(last.learner_a == "ht") & (last.learner_b == "prior")].iloc[0]
    # brier: lower is better, so + (row better) is minus the raw delta
    assert matrix[0, 2] == pytest.approx(-row["cliffs_delta"])
    assert matrix[2, 0] == pytest.approx(row["cliffs_delta"])
    assert matrix[0, 2] == pytest.approx(1.0)
    texts = [t.get_text() for t in ax.texts]
    assert any(t.startswith("+1.00*") for t in texts)


def test_sensitivity_axis_is_the_window_grid(table):
    fig = sensitivity(table, dataset="synth", metric="accuracy")
    ax = fig.axes[0]
    assert ax.get_title() == "policies hitl, N = 90d"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "7", "30", "ideal\n(0)"]
    assert ax.get_xlabel() == "P, window for predicted positives (days, log scale)"
    given = sensitivity(
        table,
        dataset="synth",
        metric="accuracy",
        windows={"hitl_1d_90d": "24h", "hitl_30d_90d": "720h", "ideal": 0},
    )
    assert given.axes[0].get_xlabel().startswith("waiting window (days")
    with pytest.raises(DelaycvError, match="no policy grid"):
        sensitivity(
            table[table.policy.isin(["ideal", "hitl_7d_90d"])], dataset="synth", metric="accuracy"
        )


def test_a_reference_without_a_value_of_the_metric_has_no_line_in_the_sensitivity(table):
    """The corrected reference has no value of the effort-aware measures: its line would be
    absent, so the legend does not list it and the title says why (as the bias figure does)."""
    corrected = table[table.reference == "true"].assign(reference="corrected")
    valued = pd.concat([table, corrected], ignore_index=True)
    empty = pd.concat([table, corrected.assign(accuracy=float("nan"))], ignore_index=True)

    def legend(fig):
        return [h.get_label() for h in fig.legends[0].legend_handles]

    fig = sensitivity(valued, dataset="synth", metric="accuracy")
    assert "corrected labels" in legend(fig)
    assert "no corrected" not in fig._suptitle.get_text()
    fig = sensitivity(empty, dataset="synth", metric="accuracy")
    assert "corrected labels" not in legend(fig)
    assert {"true labels", "observed labels"} <= set(legend(fig))
    assert (
        fig._suptitle.get_text()
        .replace("\n", " ")
        .endswith("no corrected labels line: the corrected reference has no value of accuracy")
    )


def test_the_sensitivity_of_rq3_draws_hitl_with_p_equal_to_n_as_one_line():
    rq3 = {"ideal": 0.0, **{f"hitl_{w}d_{w}d": 0.01 * w for w in (1, 7, 30)}}
    rq3 |= {f"verification_{w}d": -0.01 for w in (1, 7, 30)}
    fig = sensitivity(fold_table(folds=3, policies=rq3), dataset="synth", metric="accuracy")
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == ["policies hitl, P = N", "policies verification"], titles
    hitl = fig.axes[0]
    assert [t.get_text() for t in hitl.get_xticklabels()] == ["1", "7", "30", "ideal\n(0)"]
    assert hitl.get_xlabel() == "P = N, both windows (days, log scale)"
    assert "not on a window axis" not in fig._suptitle.get_text()


def test_final_distributions_show_every_fold(table):
    fig = final_distributions(table, dataset="synth", metric="accuracy", reference="observed")
    ax = next(a for a in fig.axes if a.get_title() == "policy hitl_7d_90d")
    points = np.concatenate([c.get_offsets()[:, 1] for c in ax.collections if len(c.get_offsets())])
    last = table[(table.policy == "hitl_7d_90d") & (table.reference == "observed")]
    last = last[last.checkpoint == last.checkpoint.max()]
    np.testing.assert_allclose(np.sort(points), np.sort(last["accuracy"].to_numpy()))


def test_a_learner_without_a_final_value_leaves_its_slot_empty(table, tmp_path):
    """A learner whose metric is undefined at the last checkpoint of one policy (no prediction of
    the class, e.g.) beside learners that have values: the figure is drawn, that learner's slot
    empty and named so (matplotlib could not place its points, all missing, on the learners'
    axis: the figures job stopped), the other learners' points as before."""
    last = table["checkpoint"] == table["checkpoint"].max()
    gone = last & (table["policy"] == "hitl_7d_90d") & (table["learner"] == "prior")
    partly = last & (table["policy"] == "ideal") & (table["learner"] == "nb")
    holed = table.assign(accuracy=table["accuracy"].mask(gone).mask(partly & (table.fold < 3)))
    fig = final_distributions(holed, dataset="synth", metric="accuracy", reference="observed")
    assert save_figure(fig, tmp_path / "final", ["png"], 50)[0].read_bytes().startswith(PNG)
    ax = next(a for a in fig.axes if a.get_title() == "policy hitl_7d_90d")
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["ht", "nb", "prior\n(no value)"] and ax.get_xlim() == (-0.5, 2.5)
    points = np.concatenate([c.get_offsets()[:, 1] for c in ax.collections if len(c.get_offsets())])
    kept = holed[last & (holed.policy == "hitl_7d_90d") & (holed.reference == "observed")]
    np.testing.assert_allclose(np.sort(points), np.sort(kept["accuracy"].dropna().to_numpy()))
    ideal = next(a for a in fig.axes if a.get_title() == "policy ideal")
    assert [t.get_text() for t in ideal.get_xticklabels()] == ["ht", "nb", "prior"]


def test_draw_figures_writes_png_and_pdf(table, tests_all, tmp_path):
    paths = draw_figures(
        table,
        tests_all,
        tmp_path / "figs",
        metric="accuracy",
        reference="true",
        formats=("png", "pdf"),
        dpi=60,
    )
    names = sorted(p.name for p in paths)
    assert names == sorted(
        f"{stem}.{ext}"
        for stem in (
            "learning_curves_synth_accuracy_true",
            "bias_synth_accuracy",
            "final_synth_accuracy_true",
            "pairwise_synth_accuracy_true",
            "sensitivity_synth_accuracy",
        )
        for ext in ("png", "pdf")
    )
    for p in paths:
        head = p.read_bytes()[:8]
        assert head == PNG if p.suffix == ".png" else head.startswith(b"%PDF")
    assert not [p for p in (tmp_path / "figs").iterdir() if p.name.startswith(".")]
    with pytest.raises(DelaycvError, match="not a column"):
        draw_figures(table, None, tmp_path / "x", metric="nope")


# --------------------------------------------------------------------------- CLI


def test_cli_compare_and_plot(table, tmp_path, capsys):
    merged = tmp_path / "merged.parquet"
    table.to_parquet(merged)
    out = tmp_path / "tests"
    code = main(
        [
            "compare",
            str(merged),
            "--out",
            str(out),
            "--metric",
            "accuracy",
            "--resamples",
            "200",
        ]
    )
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == [  # the workflow's compare stage's files
        "bias.csv",
        "bias.html",
        "bias.parquet",
        "contrasts.csv",  # (the table has a policy named ideal: the workflow's default)
        "contrasts.html",
        "contrasts.parquet",
        "strip.parquet",
        "tests.csv",
        "tests.html",
        "tests.parquet",
    ]
    tests = pd.read_parquet(out / "tests.parquet")
    assert list(tests.columns) == TEST_COLUMNS
    assert set(tests["checkpoint"]) == {table.checkpoint.max()}
    assert len(pd.read_csv(out / "tests.csv")) == len(tests)
    strip = pd.read_parquet(out / "strip.parquet")
    assert strip["checkpoint"].nunique() == table["checkpoint"].nunique()
    figs = tmp_path / "figs"
    (figs).mkdir()
    (figs / "keep.txt").write_text("mine")
    code = main(
        [
            "plot",
            str(merged),
            "--tests",
            str(out),
            "--out",
            str(figs),
            "--metric",
            "accuracy",
            "--format",
            "png",
            "--dpi",
            "50",
            "--baseline",
            "nb",
        ]
    )
    assert code == 0
    assert (figs / "keep.txt").read_text() == "mine"
    assert sorted(p.name for p in figs.iterdir()) == sorted(
        [
            "keep.txt",
            "learning_curves_synth_accuracy_observed.png",  # (the workflow's default labels)
            "bias_synth_accuracy.png",
            "final_synth_accuracy_observed.png",
            "pairwise_synth_accuracy_observed.png",
            "sensitivity_synth_accuracy.png",
        ]
    )


def test_cli_errors_exit_2_and_write_nothing(table, tmp_path, capsys):
    merged = tmp_path / "merged.parquet"
    table.to_parquet(merged)
    assert main(["compare", str(tmp_path / "missing.parquet"), "--out", str(tmp_path / "o")]) == 2
    assert "missing.parquet: no such file" in capsys.readouterr().err
    assert main(["compare", str(merged), "--out", str(tmp_path / "o"), "--metric", "auc"]) == 2
    assert "merged.parquet: no metric 'auc' in the table" in capsys.readouterr().err  # read_merged
    assert not (tmp_path / "o").exists()
    assert main(["plot", str(merged), "--out", str(tmp_path / "f"), "--metric", "auc"]) == 2
    assert "merged.parquet: no metric 'auc' in the table" in capsys.readouterr().err
    assert not (tmp_path / "f").exists()  # not even the folder (issue 13: nothing left)
    assert main(["plot", str(merged), "--out", str(tmp_path / "f"), "--window", "nowindow"]) == 2
    capsys.readouterr()
    assert main(["plot", str(merged), "--out", str(tmp_path / "f"), "--window", "fast=7200"]) == 2
    err = capsys.readouterr().err
    assert "option --window: window '7200' has no unit: write 7200d, 7200h, 7200s or 7200i" in err
    assert not (tmp_path / "f").exists()


# --------------------------------------------------------------------------- not misleading


def curve_axes(fig):
    return [ax for ax in fig.axes if ax.get_title().startswith("policy ")]


def test_learning_curve_panels_share_one_y_axis(table, tests_all):
    # on observed labels the policies differ by up to 0.06 (their optimism): one shared scale
    for tests in (tests_all, None):
        fig = learning_curves(
            table, tests, dataset="synth", metric="accuracy", reference="observed"
        )
        axes = curve_axes(fig)
        assert len(axes) == 4
        shared = axes[0].get_shared_y_axes()
        assert all(shared.joined(axes[0], ax) for ax in axes[1:])
        assert len({ax.get_ylim() for ax in axes}) == 1
        low, high = axes[0].get_ylim()
        for ax in axes:
            for line in ax.get_lines():
                assert low <= np.min(line.get_ydata()) and np.max(line.get_ydata()) <= high
        # the y label and tick labels once per row (4 panels in rows of MAX_COLUMNS = 2)
        first = [i % MAX_COLUMNS == 0 for i in range(len(axes))]
        assert first == [True, False, True, False]
        # and one time axis: every panel has the same x limits
        assert len({ax.get_xlim() for ax in axes}) == 1
        assert [ax.get_ylabel() == "accuracy (fraction)" for ax in axes] == first
        assert [ax.yaxis.get_tick_params()["labelleft"] for ax in axes] == first


def test_final_distributions_jitter_is_seeded(table):
    def offsets(seed):
        fig = final_distributions(table, dataset="synth", metric="accuracy", seed=seed)
        ax = next(a for a in fig.axes if a.get_title() == "policy ideal")
        return np.concatenate([c.get_offsets()[:, 0] for c in ax.collections])

    a, b, c = offsets(0), offsets(0), offsets(1)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    # each learner's points stay within its slot: learner k at k ± JITTER
    slots = np.rint(a)
    assert set(slots) == {0.0, 1.0, 2.0}
    assert np.max(np.abs(a - slots)) <= JITTER


def test_two_drawings_are_byte_identical(table, tests_all, tmp_path):
    runs = []
    for name in ("one", "two"):
        paths = draw_figures(
            table,
            tests_all,
            tmp_path / name,
            metric="accuracy",
            formats=("png", "pdf", "svg"),
            dpi=40,
        )
        runs.append({p.name: p.read_bytes() for p in paths})
    assert len(runs[0]) == 15 and runs[0].keys() == runs[1].keys()
    differ = sorted(name for name in runs[0] if runs[0][name] != runs[1][name])
    assert differ == []
    for name, data in runs[0].items():
        if name.endswith(".pdf"):
            assert b"CreationDate" not in data
        if name.endswith(".svg"):
            assert b"<dc:date>" not in data


@pytest.fixture(scope="module")
def odd_table(table):
    """The fixture's policies plus one named outside the preset patterns and a lone verification."""
    ideal = table[table.policy == "ideal"]
    return pd.concat(
        [table, ideal.assign(policy="my_policy"), ideal.assign(policy="verification_90d")],
        ignore_index=True,
    )


def test_window_placement_names_every_policy_it_cannot_place(odd_table):
    policies = policy_order(odd_table["policy"].unique())
    assert policies[-1] == "my_policy"  # other names come last, but they come
    frame, unplaced = window_placement(policies)
    assert sorted(frame["policy"]) == sorted(
        ["ideal", "hitl_1d_90d", "hitl_7d_90d", "hitl_30d_90d"]
    )
    assert unplaced == {
        "verification_90d": "the only window of family 'verification'",
        "my_policy": "name is not a preset pattern",
    }
    frame, unplaced = window_placement(policies, {"my_policy": "2d", "hitl_7d_90d": "7d"})
    assert sorted(frame["policy"]) == ["hitl_7d_90d", "my_policy"]
    assert unplaced == {p: "no window given" for p in policies if p not in frame["policy"].tolist()}
    frame, unplaced = window_placement(["ideal", "hitl_7d_90d", "my_policy"])
    assert frame.empty
    assert unplaced == {
        "ideal": "no grid of windows to join",
        "hitl_7d_90d": "the only window of family 'hitl, N = 90d'",
        "my_policy": "name is not a preset pattern",
    }


def test_a_policy_the_figures_cannot_place_is_reported(odd_table, tmp_path, caplog):
    fig = sensitivity(odd_table, dataset="synth", metric="accuracy")
    title = fig._suptitle.get_text().replace("\n", " ")
    assert "not on a window axis:" in title
    assert "my_policy (name is not a preset pattern)" in title
    assert "verification_90d (the only window of family 'verification')" in title
    # every other figure has a panel for it
    curves = learning_curves(odd_table, None, dataset="synth", metric="accuracy")
    assert [ax.get_title() for ax in curve_axes(curves)][-1] == "policy my_policy"
    with caplog.at_level("WARNING", logger="delaycv.figures.figure_set"):
        draw_figures(odd_table, None, tmp_path / "f", metric="accuracy", formats=("png",), dpi=30)
    messages = [r.getMessage() for r in caplog.records if r.name == "delaycv.figures.figure_set"]
    assert any(
        "policy my_policy is not on a window axis: name is not a preset pattern" in m
        and "--window POLICY=WINDOW" in m
        for m in messages
    )
    assert any("policy verification_90d is not on a window axis" in m for m in messages)
    # no grid at all: no sensitivity figure, and the log says why, naming every policy
    caplog.clear()
    lone = odd_table[odd_table.policy.isin(["ideal", "my_policy"])]
    with caplog.at_level("WARNING", logger="delaycv.figures.figure_set"):
        paths = draw_figures(
            lone, None, tmp_path / "g", metric="accuracy", formats=("png",), dpi=30
        )
    assert not [p for p in paths if p.name.startswith("sensitivity")]
    (message,) = [r.getMessage() for r in caplog.records if r.name == "delaycv.figures.figure_set"]
    assert message.startswith("no sensitivity figure: no policy grid in dataset 'synth'")
    assert "my_policy (name is not a preset pattern)" in message
    assert "ideal (no grid of windows to join)" in message
    # a dataset of one policy has no window to vary: no sensitivity figure, and no warning
    caplog.clear()
    with caplog.at_level("WARNING", logger="delaycv.figures.figure_set"):
        paths = draw_figures(
            odd_table[odd_table.policy == "my_policy"],
            None,
            tmp_path / "h",
            metric="accuracy",
            formats=("png",),
            dpi=30,
        )
    assert not [p for p in paths if p.name.startswith("sensitivity")]
    assert [p for p in paths if p.name.startswith("learning_curves")]
    assert not [r for r in caplog.records if r.name == "delaycv.figures.figure_set"]


def overlapping_texts(fig) -> list[tuple[str, str]]:
    """The pairs of a figure's titles (its suptitle, its panels' titles) that overlap, and every
    text that leaves the figure, once it is drawn."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    renderer = fig.canvas.get_renderer()
    titles = [fig._suptitle] + [ax.title for ax in fig.axes if ax.get_title()]
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in titles]
    found = [
        (a, b) for i, (a, box) in enumerate(boxes) for b, other in boxes[i + 1 :]
        if box.overlaps(other)
    ]  # fmt: skip
    page = fig.bbox.expanded(1, 1).padded(1.0)  # (a pixel: a text's box reaches below its glyphs)
    for text in fig.findobj(lambda a: hasattr(a, "get_text") and a.get_visible()):
        if text.get_text():
            box = text.get_window_extent(renderer)
            if not (page.contains(box.x0, box.y0) and page.contains(box.x1, box.y1)):
                found.append((text.get_text(), "outside the figure"))
    return found


@pytest.mark.parametrize(
    ("learners", "policies"),
    [(4, 2), (3, 1), (2, 2), (6, 3)],
    ids=["one row of two", "one", "two small", "a column of three"],
)
def test_pairwise_heatmap_titles_never_overprint(tests_all, learners, policies):
    """The two-line title stands clear of the panels' titles, also when the panels form one row
    (it overprinted them with four learners), and no text leaves the figure (the colour bar's
    label did, under a column of three)."""
    rng = np.random.default_rng(learners)
    names = [f"learner_{chr(97 + i)}" for i in range(learners)]
    base = tests_all.iloc[0]
    rows = [
        base.to_dict() | {"policy": policy, "learner_a": a, "learner_b": b,
                          "cliffs_delta": rng.uniform(-1, 1), "p_holm": 0.01, "significant": True}
        for policy in ["ideal", "hitl_1d_90d", "hitl_7d_90d"][:policies]
        for i, a in enumerate(names) for b in names[i + 1 :]
    ]  # fmt: skip
    fig = pairwise_heatmap(
        pd.DataFrame(rows), dataset="synth", metric=base["metric"], reference=base["reference"]
    )
    assert overlapping_texts(fig) == []


def test_pairwise_heatmap_writes_a_zero_delta_without_sign_noise(tests_all):
    tied = tests_all.assign(cliffs_delta=0.0)
    fig = pairwise_heatmap(tied, dataset="synth", metric="brier", reference="true")
    ax = next(a for a in fig.axes if a.get_title() == "policy ideal")
    deltas = [t.get_text().split("\n")[0].rstrip("*") for t in ax.texts if "\n" in t.get_text()]
    assert len(deltas) == 6 and set(deltas) == {"+0.00"}


@pytest.mark.parametrize(
    "span_days", [0.2, 3, 40, 400, 3000], ids=["hours", "days", "weeks", "year", "years"]
)
def test_date_axis_fixes_the_ticks_and_labels_the_date_locator_would_draw(span_days):
    # the fixed ticks are chosen once, for the final limits: the same ticks, labels and offset as
    # matplotlib's AutoDateLocator and ConciseDateFormatter give at drawing time
    import matplotlib.dates as mdates
    from matplotlib.figure import Figure

    start = pd.Timestamp("2019-03-07 05:00").timestamp()
    xs = to_dates(start + np.linspace(0, span_days * 86400, 50))
    drawn = []
    for fixed in (False, True):
        fig = Figure(figsize=(3, 2), layout="constrained")
        ax = fig.add_subplot()
        ax.plot(xs, np.linspace(0, 1, 50))
        if fixed:
            date_axis(ax)
        else:
            auto = mdates.AutoDateLocator(minticks=3, maxticks=6)
            ax.xaxis.set_major_locator(auto)
            ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(auto))
        fig.canvas.draw()
        drawn.append(
            (
                ax.get_xlim(),
                list(ax.get_xticks()),
                [t.get_text() for t in ax.get_xticklabels()],
                ax.xaxis.get_offset_text().get_text(),
            )
        )
    assert drawn[1] == drawn[0]
    assert len(drawn[0][1]) >= 3 and all(drawn[0][2])


def test_save_figure_lays_out_once_and_keeps_the_layout_engine(table, tmp_path):
    # the first format's drawing lays the figure out; the others reuse its positions; afterwards
    # the figure has its layout engine again
    def positions(fig):
        return np.array([ax.get_position().bounds for ax in fig.axes])

    png_only = bias_curves(table, dataset="synth", metric="accuracy")
    save_figure(png_only, tmp_path / "a", ("png",), dpi=40)
    fig = bias_curves(table, dataset="synth", metric="accuracy")
    engine = fig.get_layout_engine()
    paths = save_figure(fig, tmp_path / "b", ("png", "pdf", "svg"), dpi=40)
    assert [p.name for p in paths] == ["b.png", "b.pdf", "b.svg"]
    assert all(p.read_bytes() for p in paths)
    assert np.array_equal(positions(fig), positions(png_only))
    assert fig.get_layout_engine() is engine
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()


# --------------------------------------------------------------------------- windows from specs

HITL_1D_15D = {"preset": "hitl", "pos_window": "1d", "neg_window": "15d"}


@pytest.fixture(scope="module")
def named_table(table):
    """The fixture's hitl grid under names that are only labels (``fast``, ``mid``, ``slow``)."""
    names = {"hitl_1d_90d": "fast", "hitl_7d_90d": "mid", "hitl_30d_90d": "slow"}
    return table.assign(policy=table["policy"].replace(names))


NAMED_SPECS = {
    "ideal": {"preset": "ideal"},
    "fast": {"preset": "hitl", "pos_window": "1d", "neg_window": "90d"},
    "mid": {"preset": "hitl", "pos_window": "7d", "neg_window": "90d"},
    "slow": {"preset": "hitl", "pos_window": "30d", "neg_window": "90d"},
}


def test_a_policy_is_placed_at_the_windows_of_its_spec_not_of_its_name():
    # a name that reads as a preset name is only a label: the spec the run used decides
    specs = {"hitl_7d_90d": HITL_1D_15D, "fast": {**HITL_1D_15D, "pos_window": "3d"}}
    frame, unplaced = window_placement(["hitl_7d_90d", "fast"], policy_specs=specs)
    assert unplaced == {}
    placed = frame.set_index("policy")
    assert placed.loc["hitl_7d_90d", "window"] == 86400  # 1 day, not 7
    assert placed.loc["fast", "window"] == 3 * 86400
    assert set(frame["family"]) == {"hitl, N = 15d"} and set(frame["varies"]) == {"P"}


def test_the_general_form_of_run_json_is_placed_as_its_preset():
    from delaycv.protocol.policies import make_policy

    recorded = make_policy({**HITL_1D_15D, "name": "fast"}).spec()  # what run.json holds
    assert recorded["preset"] == "general"
    w = policy_windows(recorded)
    assert (w.preset, w.pos.amount, w.neg.amount) == ("hitl", 86400, 15 * 86400)
    general = {"preset": "general", "pos_window": "1d", "neg_window": "2d", "feedback": False}
    assert policy_windows(general) is None
    frame, unplaced = window_placement(["g", "fast"], policy_specs={"g": general})
    assert frame.empty
    assert unplaced == {"g": "a general policy that no preset describes", "fast": "no spec given"}


def test_the_sensitivity_figure_draws_a_named_policy_at_its_specs_window(named_table):
    # without specs the names say nothing: no grid, and the error names every policy
    with pytest.raises(DelaycvError, match="fast \\(name is not a preset pattern\\)"):
        sensitivity(named_table, dataset="synth", metric="accuracy")
    fig = sensitivity(named_table, dataset="synth", metric="accuracy", policy_specs=NAMED_SPECS)
    (ax,) = [a for a in fig.axes if a.get_title()]
    assert ax.get_title() == "policies hitl, N = 90d"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "7", "30", "ideal\n(0)"]
    assert ax.get_xlabel().startswith("P, window for predicted positives (days")
    # the points of learner ht (true labels): at 1, 7 and 30 days, the fold means of each policy
    data = named_table[
        (named_table.reference == "true")
        & (named_table.learner == "ht")
        & (named_table.checkpoint == named_table.checkpoint.max())
    ]
    means = data.groupby("policy")["accuracy"].mean()
    drawn = {}
    for line in ax.get_lines():
        for x, y in zip(line.get_xdata(), line.get_ydata(), strict=True):
            drawn.setdefault(float(x), []).append(float(y))
    for policy, days in (("fast", 1.0), ("mid", 7.0), ("slow", 30.0)):
        assert any(np.isclose(y, means[policy]) for y in drawn[days]), (policy, drawn)


def test_draw_figures_passes_the_specs_to_the_sensitivity_figure(named_table, tmp_path):
    kwargs = dict(metric="accuracy", formats=("png",), dpi=30)
    bare = draw_figures(named_table, None, tmp_path / "a", **kwargs)
    assert not [p for p in bare if p.name.startswith("sensitivity")]
    paths = draw_figures(named_table, None, tmp_path / "b", policy_specs=NAMED_SPECS, **kwargs)
    assert [p.name for p in paths if p.name.startswith("sensitivity")] == [
        "sensitivity_synth_accuracy.png"
    ]


def test_cli_plot_reads_the_specs_of_the_runs(named_table, tmp_path, capsys):
    from delaycv.cli.plot import _policy_specs
    from delaycv.data.stream_file import write_stream
    from delaycv.data.synthetic import generate_stream

    write_stream(generate_stream(rows=200, seed=1), tmp_path / "s.parquet")
    for name, pos in (("fast", "1d"), ("slow", "30d")):
        argv = ["evaluate", str(tmp_path / "s.parquet"), "--learner", "Prior", "--folds", "2"]
        argv += ["--policy", "hitl", "--pos-window", pos, "--neg-window", "90d"]
        argv += ["--policy-name", name, "--out", str(tmp_path / "runs" / name), "--quiet"]
        assert main(argv) == 0
    specs = _policy_specs([str(tmp_path / "runs")])
    assert sorted(specs) == ["fast", "slow"]
    frame, _ = window_placement(["fast", "slow"], policy_specs=specs)
    assert frame.set_index("policy")["window"].to_dict() == {"fast": 86400, "slow": 30 * 86400}
    # the merged table of other runs under the same names: plotted at the runs' windows
    merged = tmp_path / "merged.parquet"
    named_table.to_parquet(merged)
    figs = tmp_path / "figs"
    argv = ["plot", str(merged), "--out", str(figs), "--metric", "accuracy", "--format", "png"]
    capsys.readouterr()
    assert main([*argv, "--dpi", "50", "--runs", str(tmp_path / "runs")]) == 0
    assert (figs / "sensitivity_synth_accuracy.png").is_file()
    err = capsys.readouterr().err  # (the command's warnings: on stderr, one line each)
    assert (
        "delaycv: warning: sensitivity_synth_accuracy: policy mid is not on a window axis: no "
        "spec given" in err
    )
    # two runs of one name with different specs: an error naming both files
    other = tmp_path / "other" / "run.json"
    other.parent.mkdir()
    info = (tmp_path / "runs" / "fast" / "run.json").read_text()
    other.write_text(info.replace('"pos_window": "1d"', '"pos_window": "2d"'))
    assert main([*argv, "--runs", str(tmp_path / "runs"), "--runs", str(other.parent)]) == 2
    err = capsys.readouterr().err
    assert f"{other}: policy 'fast' has another spec than in {tmp_path / 'runs' / 'fast'}" in err


def test_figures_in_two_processes_are_the_files_of_one(table, tmp_path, capsys):
    """``delaycv plot --jobs 2`` (the workflow's rule: two threads) draws the metrics' figure sets
    and contrast figures in forked processes: the same files, byte for byte, listed in the same
    order, and the same warnings; ``--jobs 0`` is refused."""
    merged = tmp_path / "merged.parquet"
    table.to_parquet(merged)
    tests = tmp_path / "tests"
    compare = ["compare", str(merged), "--out", str(tests), "--resamples", "100"]
    assert main([*compare, "--metric", "accuracy", "--metric", "brier"]) == 0
    capsys.readouterr()
    drawn = {}
    for jobs in ("1", "2"):
        figs = tmp_path / f"figs{jobs}"
        argv = ["plot", str(merged), "--tests", str(tests), "--out", str(figs), "--jobs", jobs]
        argv += ["--metric", "accuracy", "--metric", "brier", "--format", "png", "--dpi", "40"]
        argv += ["--contrasts", str(tests / "contrasts.parquet")]
        assert main(argv) == 0
        out, err = capsys.readouterr()
        listed = [line.rpartition("/")[2] for line in out.splitlines()]
        drawn[jobs] = (
            listed,
            {p.name: p.read_bytes() for p in figs.iterdir()},
            sorted(err.splitlines()),
        )
    assert drawn["1"][0] == drawn["2"][0] and len(drawn["1"][0]) == 12
    assert drawn["1"][1] == drawn["2"][1]
    assert drawn["1"][2] == drawn["2"][2]
    argv = ["plot", str(merged), "--out", str(tmp_path / "f"), "--jobs", "0"]
    assert main(argv) == 2
    assert "option --jobs: jobs 0 is too small (expected an integer from 1 to 10,000" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "f").exists()


def test_sigterm_ends_plot_with_jobs_at_once_and_leaves_nothing(table, tmp_path):
    """A SIGTERM while ``delaycv plot --jobs 2`` draws ends its workers at once (forked from a
    process whose SIGTERM raises, they would take it as one figure set's error and draw the rest):
    one line, status 143, no temporary, no figure."""
    import signal
    import subprocess
    import sys
    import time

    merged = tmp_path / "merged.parquet"
    table.to_parquet(merged)
    out = tmp_path / "figs"
    out.mkdir()
    argv = [sys.executable, "-m", "delaycv", "plot", str(merged), "--out", str(out)]
    argv += ["--jobs", "2", "--format", "png", "pdf"]
    for metric in ("accuracy", "brier", "gmean", "kappa", "recall_1", "fpr_1"):
        argv += ["--metric", metric]  # (about 15 s of drawing in one process)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not any(p.name.startswith(".plot.") for p in out.iterdir()):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    time.sleep(1.0)  # the workers draw
    proc.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - sent < 3.0
    assert (proc.returncode, err.decode().splitlines()[-1]) == (143, "delaycv: terminated")
    assert list(out.iterdir()) == []


def test_an_effort_aware_measure_s_titles_name_its_scope_not_the_estimator(tmp_path, monkeypatch):
    """The effort-aware measures rank their own scope, whatever the estimator: every figure of
    popt (curves, bias, final values, pairwise tests, sensitivity, contrasts) names the scope of
    the runs' table, sliding(400), and no estimator; those of gmean name the estimator (found
    in a study of a tumbling estimator and a sliding scope, whose popt figures said "tumbling
    estimator")."""
    import delaycv
    import delaycv.figures.contrasts as contrast_module
    import delaycv.figures.figure_set as figure_set_module
    from delaycv.data.synthetic import generate_stream
    from delaycv.figures.settings import make_figure_settings
    from delaycv.stages.compare import compare
    from delaycv.stats.settings import make_compare_settings

    stream = generate_stream(rows=900, seed=3)
    runs = [
        delaycv.evaluate(
            stream,
            learner,
            policy=policy,
            folds=3,
            every=300,
            estimator={"kind": "tumbling", "size": 300},
            effort_scope={"kind": "sliding", "width": 400},
            progress=False,
        ).folds
        for learner in ("naive_bayes.GaussianNB", "Prior")
        for policy in ("ideal", "delay_7d", "delay_30d")
    ]
    merged = tmp_path / "merged.parquet"
    pd.concat(runs, ignore_index=True).to_parquet(merged)
    metrics = ["gmean", "popt"]
    compare(
        merged, tmp_path / "tests", make_compare_settings(metrics=metrics, reference_policy="ideal")
    )
    titles: dict[str, str] = {}

    def keep_title(fig, stem, formats, dpi):
        titles[Path(stem).name] = fig._suptitle.get_text().replace("\n", " ")
        return []

    monkeypatch.setattr(figure_set_module, "save_figure", keep_title)
    monkeypatch.setattr(contrast_module, "save_figure", keep_title)
    figures(
        merged,
        tmp_path / "figures",
        make_figure_settings(metrics=metrics),
        tests=tmp_path / "tests" / "strip.parquet",
        contrasts=tmp_path / "tests" / "contrasts.parquet",
    )
    kinds = ("learning_curves", "bias", "final", "pairwise", "sensitivity", "contrasts")
    for metric, words in (("popt", "effort scope sliding(400)"), ("gmean", "tumbling estimator")):
        drawn = {stem: title for stem, title in titles.items() if f"_{metric}" in stem}
        assert {stem.split("_synthetic")[0] for stem in drawn} == set(kinds)
        for stem, title in drawn.items():
            assert words in title, (stem, title)
        if metric == "popt":
            assert not any("estimator" in title for title in drawn.values())
    # 3 folds of one seed: no p below 2/2^3 in the strip, and the curves' title says so
    assert titles["learning_curves_synthetic_gmean_observed"].endswith(
        "the smallest attainable p is 0.25 > α = 0.05; no difference can be significant "
        "(more folds or seeds)"
    )


def test_tests_without_the_metric_drawn_are_named_in_a_warning(table, tests_all, tmp_path, caplog):
    """A strip of other metrics gives the curves of this one no strip and no pairwise figure:
    said, not silent (the workflow tests the figures' metrics and reference too)."""
    with caplog.at_level("WARNING", logger="delaycv.figures.figure_set"):
        paths = draw_figures(
            table, tests_all, tmp_path, metric="recall_1", formats=("png",), dpi=30
        )
    assert not any(p.name.startswith("pairwise_") for p in paths)
    assert (
        "synth: the tests hold no test of recall_1 on observed labels (fading estimator): its "
        "learning curves have no significance strip and it has no pairwise figure (test it: "
        "delaycv compare --metric recall_1 --reference observed)"
    ) in caplog.messages
    caplog.clear()
    with caplog.at_level("WARNING", logger="delaycv.figures.figure_set"):
        draw_figures(table, tests_all, tmp_path, metric="accuracy", formats=("png",), dpi=30)
    assert not any("hold no test" in m for m in caplog.messages)
    # a study of one learner (RQ3's) has no pair to test: nothing to say
    one = table[table["learner"] == table["learner"].iloc[0]]
    with caplog.at_level("WARNING", logger="delaycv.figures.figure_set"):
        draw_figures(one, tests_all.iloc[:0], tmp_path, metric="recall_1", formats=("png",), dpi=30)
    assert not any("hold no test" in m for m in caplog.messages)


@pytest.mark.parametrize("policies", [1, 4], ids=["one policy", "four policies"])
@pytest.mark.parametrize("kind", ["learning", "bias", "final", "pairwise"])
def test_no_title_leaves_the_figure(table, tests_all, kind, policies):
    """A figure of one policy is one column wide (6 inches): the second line of the titles of the
    final and bias figures, ``(600 instances; one point per (seed, fold), up to 3 per learner;
    fading estimator)``, was cut at both edges of the PNG; a real dataset's name (``0_edx-
    platform(master)``) lengthens the first. Every line is wrapped to the figure's width."""
    keep = policy_order(table["policy"].unique())[:policies]
    sub = table[table["policy"].isin(keep)].assign(dataset="0_edx-platform(master)")
    tests = tests_all[tests_all["policy"].isin(keep)].assign(dataset="0_edx-platform(master)")
    one = {"dataset": "0_edx-platform(master)", "metric": "accuracy"}
    draw = {
        "learning": lambda: learning_curves(sub, tests, **one, alpha=0.05),
        "bias": lambda: bias_curves(sub, **one),
        "final": lambda: final_distributions(sub, **one),
        "pairwise": lambda: pairwise_heatmap(tests, **one),
    }[kind]
    fig = draw()
    assert overlapping_texts(fig) == []


@pytest.mark.parametrize("kind", ["sensitivity", "contrasts"])
def test_no_title_leaves_the_figures_of_the_windows(table, kind):
    """The sensitivity and contrast figures of one panel, under a real dataset's name: their
    titles are longer still (``...: accuracy, each policy minus ideal against the waiting
    window``)."""
    from delaycv.figures.contrasts import contrast_figure
    from delaycv.stats.contrasts import policy_contrasts

    named = table[table["learner"] == "ht"].assign(dataset="0_edx-platform(master)")
    one = {"dataset": "0_edx-platform(master)", "metric": "accuracy"}
    if kind == "sensitivity":  # (one panel: one reference)
        fig = sensitivity(named, **one, references=("true",))
    else:  # (one panel: one learner)
        fig = contrast_figure(policy_contrasts(named, metrics=["accuracy"], resamples=50), **one)
    assert overlapping_texts(fig) == []


@pytest.mark.parametrize("kind", ["learning", "bias"])
def test_a_metric_with_no_value_spans_the_stream_s_dates(table, kind, recwarn):
    """AUC under the fading estimator has no value anywhere: the panels, each a note, spanned
    matplotlib's default x limits, which the date axis showed as 23:00 to 01:00 on 1 January
    1970, with a UserWarning of matplotlib's date locator on stderr. They span the rows' dates."""
    empty = table.assign(accuracy=np.nan)
    one = {"dataset": "synth", "metric": "accuracy"}
    fig = learning_curves(empty, None, **one) if kind == "learning" else bias_curves(empty, **one)
    low, high = fig.axes[0].get_xlim()
    dates = to_dates(table["time"])
    assert (low, high) == (dates.min(), dates.max())
    assert not [w for w in recwarn if "AutoDateLocator" in str(w.message)]
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels and not any("1970" in text for text in labels)
