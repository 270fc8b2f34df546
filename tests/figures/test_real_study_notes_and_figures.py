"""Notes, figures and pages on real commits: the first 1,200 commits of three Commit Guru
projects (brackets, cppcheck, gerrit; ../shared/datasets), evaluated for real (GaussianNB and the
Prior baseline, 3 bootstrap folds, a checkpoint every 300 instances) under ideal, delay,
verification and hitl policies and ``delay_3000d``, whose window is longer than every stream: it
releases no label, every evaluation stays pending and every metric is NaN.

* such a policy is a note in every table, a text in every figure, a line in the logs, and
  the tables, figures and rankings (functions, commands, rule scripts) go on;
* every request of checkpoints that is not answered exactly says so in ``note``;
  duplicates are refused with the word and the values;
* policies in reading order in every table and figure; figures that read at the
  report's width; the rankings pages' wording; direction lines; the report's captions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text

from delaycv.cli import main
from delaycv.common.errors import DelaycvError
from delaycv.engine.checkpoints import checkpoint_positions
from delaycv.figures.bias import bias_curves
from delaycv.figures.contrasts import contrast_figure, family_styles
from delaycv.figures.final import final_distributions
from delaycv.figures.learning import learning_curves
from delaycv.figures.pairwise import pairwise_heatmap
from delaycv.figures.rankings import cd_diagram, draw_ranking_figures, sk_boxplot
from delaycv.figures.sensitivity import sensitivity
from delaycv.figures.settings import make_figure_settings
from delaycv.figures.style import FIGURE_WIDTH, IDEAL_MARKER, MAX_COLUMNS, SMALL_TEXT
from delaycv.protocol.checkpoints import check_checkpoint_request, fraction_position
from delaycv.protocol.policy_windows import policy_order, policy_sort_key, window_table
from delaycv.report import statistics
from delaycv.stats.bias import bias_tests
from delaycv.stats.checkpoints import (
    choose_checkpoints,
    describe_time,
    untested_notes,
)
from delaycv.stats.contrasts import policy_contrasts
from delaycv.stats.families import FAMILY, family_values, rank_across, rank_within
from delaycv.stats.learner_tests import run_tests
from delaycv.stats.settings import make_ranking_settings
from tests.support.paths import REPO, shared_file

PROJECTS = {
    "brackets": "0_brackets.arff",
    "cppcheck": "0_cppcheck(main).arff",
    "gerrit": "0_gerrit(stable-2.12).arff",
}
#: name -> the API's policy arguments (names in the text order that once sorted them wrongly)
POLICIES = {
    "ideal": {"policy": "ideal"},
    "delay_30d": {"policy": "delay", "window": "30d"},
    "delay_3000d": {"policy": "delay", "window": "3000d"},
    "verification_7d": {"policy": "verification", "window": "7d"},
    "verification_30d": {"policy": "verification", "window": "30d"},
    "hitl_1d_90d": {"policy": "hitl", "pos_window": "1d", "neg_window": "90d"},
    "hitl_30d_90d": {"policy": "hitl", "pos_window": "30d", "neg_window": "90d"},
    "hitl_7d_90d": {"policy": "hitl", "pos_window": "7d", "neg_window": "90d"},
}
READING_ORDER = [
    "ideal",
    "delay_30d",
    "delay_3000d",
    "verification_7d",
    "verification_30d",
    "hitl_1d_90d",
    "hitl_7d_90d",
    "hitl_30d_90d",
]
ROWS = 1200
NOTHING = (
    "policy delay_3000d released no label before the end of the stream (n = 1200; e.g. a window "
    "longer than the stream): every evaluation pending, no value to test"
)
#: The note of every test of this study's 3 folds (no p below 2/8: never significant at 0.05).
THREE_PAIRS = (
    "3 (seed, fold) pairs: no p below 0.25 (2/2^3) is possible, above alpha = 0.05: not "
    "significant whatever the differences (more folds or seeds)"
)
METRICS = ["gmean", "fpr_1"]


@pytest.fixture(scope="module")
def real() -> pd.DataFrame:
    """The merged per-fold table of 3 projects x 2 learners x 8 policies (48 real runs, ~6 s)."""
    import delaycv
    from delaycv.data.convert import load_stream

    frames = []
    for name, file in PROJECTS.items():
        path = shared_file(f"commit_guru_dataset/cut2years/{file}")
        stream = load_stream(path, preset="commit-guru", dataset=name).subset(0, ROWS)
        assert (stream.time[-1] - stream.time[0]) / 86400 < 3000  # shorter than the window
        for learner in ("naive_bayes.GaussianNB", "Prior"):
            for arguments in POLICIES.values():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # (a learner that never trained warns)
                    result = delaycv.evaluate(
                        stream, learner, folds=3, every=300, progress=False, **arguments
                    )
                frames.append(result.folds)
    table = pd.concat(frames, ignore_index=True)
    assert set(table["policy"]) == set(POLICIES)
    return table


@pytest.fixture(scope="module")
def one(real) -> pd.DataFrame:
    return real[real["dataset"] == "gerrit"].reset_index(drop=True)


def test_the_real_runs_of_delay_3000d_released_nothing(real):
    last = real[real["checkpoint"] == ROWS]
    nothing = last[last["policy"] == "delay_3000d"]
    assert (nothing["evaluated"] == 0).all() and (nothing["pending"] == ROWS).all()
    assert nothing[METRICS].isna().all().all()
    assert (last.loc[last["policy"] == "ideal", "evaluated"] == ROWS).all()


# --------------------------------------------------------------------------- item 6: tables


def test_a_policy_that_releases_nothing_is_a_note_in_every_table(one):
    tests = run_tests(one, metrics=METRICS, checkpoints="last", resamples=200)
    gone = tests[tests["policy"] == "delay_3000d"]
    # 1 learner pair x 2 metrics x 3 references, each a row with no test and the reason
    assert len(gone) == 6 and (gone["n"] == 0).all() and gone["p_value"].isna().all()
    assert set(gone["note"]) == {NOTHING}
    assert set(tests.loc[tests["policy"] != "delay_3000d", "note"]) == {THREE_PAIRS}
    # the bias tests keep the policy (its rows were dropped: observed and true both NaN), for
    # each estimate (observed, corrected)
    bias = bias_tests(one, metrics=METRICS, resamples=200)
    gone = bias[bias["policy"] == "delay_3000d"]
    assert len(gone) == 2 * 2 * 2 and set(gone["note"]) == {NOTHING} and (gone["n"] == 0).all()
    contrasts = policy_contrasts(one, metrics=METRICS, resamples=200)
    gone = contrasts[contrasts["policy"] == "delay_3000d"]
    assert len(gone) == 2 * 3 * 2 and set(gone["note"]) == {NOTHING}
    assert gone["difference"].isna().all() and not gone["significant"].any()
    tested = contrasts[contrasts["policy"] != "delay_3000d"]
    assert (tested["n"] == 3).all() and set(tested["note"]) == {THREE_PAIRS}
    # the pages show the note in a column of its own
    for page in (
        statistics.tests_html(tests, title="t", metrics=METRICS),
        statistics.bias_html(bias, title="b", alpha=0.05, metrics=METRICS),
        statistics.contrasts_html(contrasts, title="c", alpha=0.05, metrics=METRICS),
    ):
        assert "<th>note</th>" in page and f'<td class="note">{NOTHING}</td>' in page
    assert untested_notes(tests) == [(NOTHING, 6)]


def test_the_corrected_reference_without_an_effort_measure_says_why(real):
    """popt on real streams with an effort: the observed and true labels give it, the corrected
    reference has none (docs/corrected.md). Its tests, contrasts, bias tests and rankings say so,
    not "undefined there, e.g. an FPR before any negative label" (what a study of three Commit
    Guru projects showed)."""
    why = (
        "the corrected reference has no popt: its inspection curve is not estimated from expected "
        "labels (docs/corrected.md)"
    )
    rows = real[real["policy"] != "delay_3000d"]
    last = rows[rows["checkpoint"] == ROWS]
    assert last.loc[last["reference"] == "corrected", "popt"].isna().all()
    assert last.loc[last["reference"] != "corrected", "popt"].notna().all()
    tests = run_tests(rows, metrics=["popt"], checkpoints="last", resamples=200)
    corrected = tests["reference"] == "corrected"
    assert set(tests.loc[corrected, "note"]) == {f"{why}, no test"}
    assert set(tests.loc[~corrected, "note"]) == {THREE_PAIRS}
    assert tests.loc[~corrected, "n"].gt(0).all()
    contrasts = policy_contrasts(rows, metrics=["popt"], resamples=200)
    corrected = contrasts["reference"] == "corrected"
    assert corrected.any() and set(contrasts.loc[corrected, "note"]) == {f"{why}, no test"}
    assert set(contrasts.loc[~corrected, "note"]) == {THREE_PAIRS}
    # its contrast figure has no empty column of panels: the title says why
    fig = contrast_figure(contrasts, dataset="gerrit", metric="popt")
    titles = {ax.get_title() for ax in fig.axes if ax.get_visible()}
    assert titles == {"estimate vs ideal", "true value vs ideal"}, titles
    title = " ".join(fig._suptitle.get_text().split())
    assert f"corrected estimate vs ideal not drawn: {why}, no test" in title, title
    gmean = policy_contrasts(rows, metrics=["gmean"], resamples=200)
    fig = contrast_figure(gmean, dataset="gerrit", metric="gmean")
    assert "corrected estimate vs ideal" in {ax.get_title() for ax in fig.axes}
    assert "not drawn" not in fig._suptitle.get_text()
    # its bias figure draws no corrected line and lists none in its legend
    for metric, drawn in (("popt", False), ("gmean", True)):
        fig = bias_curves(rows, dataset="gerrit", metric=metric)
        entries = [text.get_text() for text in fig.legends[0].get_texts()]
        assert ("corrected − true (mean)" in entries) is drawn, entries
        note = f"no corrected − true line: the corrected reference has no value of {metric}"
        assert (note in " ".join(fig._suptitle.get_text().split())) is not drawn
    bias = bias_tests(rows, metrics=["popt"], resamples=200)
    corrected = bias["estimate"] == "corrected"
    assert corrected.any() and set(bias.loc[corrected, "note"]) == {f"{why}, no test"}
    assert set(bias.loc[~corrected, "note"]) == {THREE_PAIRS}
    ranked = rows.assign(at="last")[rows["checkpoint"] == ROWS]
    across = rank_across(ranked, ["popt"]).friedman
    corrected = across["reference"] == "corrected"
    assert set(across.loc[corrected, "note"]) == {f"no value at any dataset: {why}: not ranked"}
    assert across.loc[~corrected, "p_value"].notna().all()
    within = rank_within(ranked, ["popt"])
    corrected = within["reference"] == "corrected"
    assert set(within.loc[corrected, "note"]) == {
        f"no value at any (seed, fold) pair: {why}: not ranked"
    }


def test_an_earlier_checkpoint_says_by_which_checkpoint(real):
    """gerrit's first 300 commits span less than 90 days: hitl's negatives are not released yet,
    but its positives are; delay_3000d has released nothing at any checkpoint."""
    gerrit = real[real["dataset"] == "gerrit"]
    strip = run_tests(gerrit, metrics=["gmean"], checkpoints="all", resamples=200)
    early = strip[(strip["policy"] == "delay_3000d") & (strip["checkpoint"] == 300)]
    assert set(early["note"]) == {
        "policy delay_3000d released no label by checkpoint 300: every evaluation pending, "
        "no value to test"
    }


def test_the_compare_and_plot_commands_go_on(one, tmp_path, capsys):
    merged = tmp_path / "merged.parquet"
    one.to_parquet(merged)
    argv = ["compare", str(merged), "--out", str(tmp_path / "t"), "--metric", "gmean"]
    assert main([*argv, "--resamples", "200", "--quiet"]) == 0  # (the notes stay)
    out, err = capsys.readouterr()
    assert out == "" and err.count("delaycv: note: ") == 6  # (3 tables: no value, 3 pairs)
    assert f"delaycv: note: tests: 3 rows without a test: {NOTHING}" in err
    assert f"delaycv: note: bias: 4 rows without a test: {NOTHING}" in err  # 2 learners x 2
    assert f"delaycv: note: contrasts: 6 rows without a test: {NOTHING}" in err
    code = main(
        ["plot", str(merged), "--tests", str(tmp_path / "t"), "--out", str(tmp_path / "f")]
        + ["--metric", "gmean", "--reference", "true", "--format", "png", "--dpi", "60"]
    )
    assert code == 0
    err = capsys.readouterr().err  # (a warning of delaycv.figures.figure_set, one line)
    assert (
        "delaycv: warning: gerrit: policy delay_3000d has no value of gmean at the last "
        "checkpoint" in err
    )
    names = sorted(p.name for p in (tmp_path / "f").iterdir())
    assert names == [
        "bias_gerrit_gmean.png",
        "final_gerrit_gmean_true.png",
        "learning_curves_gerrit_gmean_true.png",
        "pairwise_gerrit_gmean_true.png",
        "sensitivity_gerrit_gmean.png",
    ]


# --------------------------------------------------------------------------- item 6: figures


def texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(Text) if t.get_text()]


def panel(fig, title: str):
    return next(ax for ax in fig.axes if ax.get_title() == title)


def panel_texts(ax) -> str:
    """The notes written in a panel, as one line (they are wrapped to the panel's width)."""
    return " ".join(" ".join(t.get_text().split()) for t in ax.texts)


def test_every_figure_says_why_a_policy_has_nothing_to_draw(one):
    strip = run_tests(one, metrics=["gmean"], checkpoints="all", resamples=200)
    released = "no label released: every evaluation pending"
    for fig in (
        learning_curves(one, strip, dataset="gerrit", metric="gmean"),
        bias_curves(one, dataset="gerrit", metric="gmean"),
        final_distributions(one, dataset="gerrit", metric="gmean"),
    ):
        assert released in panel_texts(panel(fig, "policy delay_3000d"))
        assert released not in panel_texts(panel(fig, "policy delay_30d"))
    heat = pairwise_heatmap(strip, dataset="gerrit", metric="gmean")
    assert NOTHING in panel_texts(panel(heat, "policy delay_3000d"))
    # the window axis keeps the policy's window, and says why it has no point there
    sens = sensitivity(one, dataset="gerrit", metric="gmean")
    ax = panel(sens, "policies delay")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["30", "3000", "ideal\n(0)"]
    low, high = ax.get_xlim()
    assert low < 30 and high > 3000
    assert "no value at delay_3000d (D = 3000 days): no label released" in panel_texts(ax)
    contrasts = policy_contrasts(one, metrics=["gmean"], resamples=200)
    fig = contrast_figure(contrasts, dataset="gerrit", metric="gmean")
    notes = [panel_texts(ax) for ax in fig.axes if ax.get_xlabel().startswith("D, ")]
    assert len(notes) == 3  # estimate, true value and corrected estimate vs ideal
    for note in notes:
        assert note.startswith("no value at delay_3000d (D = 3000 days): policy delay_3000d ")


def test_rankings_go_on_and_name_what_they_do_not_rank(real, tmp_path):
    rows = real.assign(at="last")[real["checkpoint"] == ROWS]
    across = rank_across(rows, METRICS)
    unranked = across.friedman[across.friedman["note"].str.endswith("not ranked")]
    # the learners within delay_3000d, and delay_3000d within each learner
    assert set(unranked["treatment"]) == {"GaussianNB", "Prior", "delay_3000d"}
    reason = (
        "no value at any dataset: policy delay_3000d released no label before the end of the "
        "stream, every evaluation pending (e.g. a window longer than the stream): not ranked"
    )
    assert set(unranked["note"]) == {reason}
    ranked = across.friedman[
        (across.friedman["ranked"] == "policy") & ~across.friedman.index.isin(unranked.index)
    ]
    assert (ranked["note"] == "").all() and ranked["p_value"].notna().all()
    assert set(ranked.groupby(list(FAMILY))["k"].first()) == {7}
    within = rank_within(rows, METRICS)
    assert within.loc[within["treatment"] == "delay_3000d", "group"].isna().all()
    # the figures: none for the family with no value, a note under the others
    written = draw_ranking_figures(
        rows, across, tmp_path, metric="gmean", reference="true", formats=["png"], dpi=60
    )
    names = {p.name for p in written}
    assert "cd_policy_GaussianNB_last_gmean.png" in names
    assert not any("delay_3000d" in n for n in names)
    result = across.result(("policy", "GaussianNB", "true", "fading", "last", "gmean"))
    fig = cd_diagram(result, note="not ranked: delay_3000d (x)")
    assert fig.get_supxlabel() == "not ranked: delay_3000d (x)"
    page = statistics.rankings_html(across.friedman, across.scott_knott, title="r", metrics=METRICS)
    assert f"Not ranked: delay_3000d ({reason.removesuffix(': not ranked')})." in page
    page = statistics.rankings_html(scott_knott=within, title="w", metrics=METRICS)
    assert "Not ranked: GaussianNB, Prior" in page


def run_script(script: str, job: dict, tmp_path: Path) -> str:
    """Run a rule script as Snakemake would (its ``snakemake`` object built from ``job``; its
    ``threads`` 1 unless ``job`` gives them), in its own process; return its log."""
    log = tmp_path / f"{Path(script).stem}.log"
    job = {**job, "log": [str(log)]}
    driver = (
        "import json, runpy, sys, types\n"
        "class Files(list):\n"
        "    def __init__(self, value):\n"
        "        items = value if isinstance(value, list) else list(value.values())\n"
        "        super().__init__(items)\n"
        "        if isinstance(value, dict):\n"
        "            for k, v in value.items(): setattr(self, k, v)\n"
        "job = json.loads(sys.argv[2])\n"
        "threads = job.pop('threads', 1)\n"
        "sm = types.SimpleNamespace(threads=threads, **{k: Files(v) for k, v in job.items()})\n"
        "runpy.run_path(sys.argv[1], init_globals={'snakemake': sm}, run_name='__main__')\n"
    )
    env = {**os.environ, "DELAYCV_PACKAGE": str(REPO / "delaycv")}
    proc = subprocess.run(
        [sys.executable, "-c", driver, str(REPO / "scripts" / script), json.dumps(job)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    text = log.read_text() if log.exists() else ""
    assert proc.returncode == 0, proc.stderr + text
    return text


def test_the_rankings_and_figures_jobs_go_on(real, tmp_path):
    merged = []
    for name, frame in real.groupby("dataset"):
        merged.append(str(tmp_path / f"{name}.parquet"))
        frame.to_parquet(merged[-1])
    out = tmp_path / "rankings"
    outputs = {
        "friedman": "friedman.parquet",
        "friedman_csv": "friedman.csv",
        "nemenyi_csv": "nemenyi.csv",
        "scott_knott": "scott_knott.parquet",
        "scott_knott_csv": "scott_knott.csv",
        "html": "rankings.html",
        "within": "within.parquet",
        "within_csv": "within.csv",
        "within_html": "within.html",
        "figures": "figures",
    }
    settings = make_ranking_settings(
        metrics=METRICS,
        checkpoints={"positions": [1000]},
        figure_metrics="gmean",
        figure_reference="true",
        formats=["png"],
        dpi=60,
    )
    log = run_script(
        "rankings.py",
        {
            "input": {"merged": merged},
            "output": {k: str(out / v) for k, v in outputs.items()},
            "params": {"settings": json.dumps(settings.record()), "code": "-"},
        },
        tmp_path,
    )
    # the requested position between checkpoints is said, and ranked there
    assert (
        "checkpoints: position_1000 of dataset brackets: requested position 1000, tested at "
        "checkpoint 1200 (the next checkpoint) (ranked there)" in log
    )
    assert "not ranked (" in log and "policy delay_3000d released no label by position_1000" in log
    assert (out / "rankings.html").is_file() and list((out / "figures").glob("cd_*.png"))
    # the figures job of one dataset, with its tests and contrasts
    gerrit = real[real["dataset"] == "gerrit"]
    strip = tmp_path / "strip.parquet"
    run_tests(gerrit, metrics=["gmean"], checkpoints="all", resamples=200).to_parquet(strip)
    contrasts = tmp_path / "contrasts.parquet"
    policy_contrasts(gerrit, metrics=["gmean"], resamples=200).to_parquet(contrasts)
    specs = {name: {"preset": a["policy"], **{k: v for k, v in a.items() if k != "policy"}}
             for name, a in POLICIES.items()}  # fmt: skip
    log = run_script(
        "figures.py",
        {
            "input": {
                "merged": str(tmp_path / "gerrit.parquet"),
                "strip": str(strip),
                "contrasts": str(contrasts),
            },  # fmt: skip
            "output": {"figures": str(tmp_path / "figures")},
            "params": {
                "settings": json.dumps(
                    make_figure_settings(
                        metrics="gmean", reference="true", formats=["png"], dpi=60
                    ).record()
                ),  # fmt: skip
                "policies": json.dumps(specs),
                "code": "-",
            },
        },
        tmp_path,
    )
    assert (
        "figures: warning: gerrit: policy delay_3000d has no value of gmean at the last checkpoint"
        in log
    )
    assert "12 files" not in log and len(list((tmp_path / "figures").glob("*.png"))) == 6


# --------------------------------------------------------------------------- item 3: checkpoints


def test_every_request_not_answered_exactly_says_so(one):
    times = one.groupby("checkpoint")["time"].min()  # checkpoints 300, 600, 900, 1200
    between = int(times[600]) + 3600
    chosen = choose_checkpoints(
        one,
        {
            "positions": [600, 1000, 5000],
            "fractions": [0.1, 0.5],
            "times": [between, int(times[300]) - 86400, int(times[1200]) + 86400, int(times[900])],
        },
    )
    rows = {r.at: (r.checkpoint, r.note) for r in chosen.itertuples()}
    stamp = describe_time
    assert rows["position_600"] == (600, "")
    assert rows["position_1000"] == (
        1200,
        "requested position 1000, tested at checkpoint 1200 (the next checkpoint)",
    )
    assert (
        rows["position_5000"][1] == "requested position 5000: beyond the stream (n = 1200), no test"
    )
    assert pd.isna(rows["position_5000"][0])
    assert rows["fraction_0.1"] == (
        300,
        "requested fraction 0.1 = position 120 of 1200, tested at checkpoint 300 (the next "
        "checkpoint)",
    )
    assert rows["fraction_0.5"] == (600, "")
    assert rows[f"time_{between}"] == (
        600,
        f"requested time {stamp(between)}, tested at checkpoint 600 (at {stamp(times[600])}, the "
        "last checkpoint before it)",
    )
    before = rows[f"time_{int(times[300]) - 86400}"]
    assert pd.isna(before[0]) and before[1] == (
        f"requested time {stamp(int(times[300]) - 86400)}: before the stream (its first "
        f"checkpoint, 300, is at {stamp(times[300])}), no test"
    )
    after = rows[f"time_{int(times[1200]) + 86400}"]
    assert pd.isna(after[0]) and "after the stream (its last checkpoint, 1200, is at" in after[1]
    assert rows[f"time_{int(times[900])}"] == (900, "")  # a checkpoint's own time: exact
    assert stamp(1546300800) == "2019-01-01 00:00:00 UTC (Unix 1546300800)"
    # the tests carry the note on a tested row, and the page shows it
    tests = run_tests(one, metrics=["gmean"], checkpoints={"positions": [1000]}, resamples=200)
    tested = tests[tests["policy"] == "ideal"]
    assert (tested["n"] == 3).all() and (tested["checkpoint"] == 1200).all()
    assert set(tested["note"]) == {
        f"requested position 1000, tested at checkpoint 1200 (the next checkpoint); {THREE_PAIRS}"
    }
    page = statistics.tests_html(tests, title="t")
    assert "<th>note</th>" in page and "tested at checkpoint 1200 (the next checkpoint)" in page


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"positions": [1000, 600, 1000]},
            "key checkpoints.positions: duplicate value 1000 (2 times)",
        ),
        (
            {"fractions": [0.5, 0.50, 0.1]},
            "key checkpoints.fractions: duplicate value 0.5 (2 times)",
        ),
        (
            {"times": [1546300800, 1546300800, 1546300800]},
            "key checkpoints.times: duplicate value 1.5463e+09 (3 times)",
        ),
        ([300, 600, 300, 600], "key checkpoints: duplicate values 300 (2 times), 600 (2 times)"),
    ],
)
def test_duplicates_are_refused_with_the_word_and_the_values(one, spec, message):
    with pytest.raises(DelaycvError, match=r"duplicate") as err:
        choose_checkpoints(one, spec)
    assert str(err.value).startswith(message)
    assert str(err.value).endswith("(expected each value once)")
    with pytest.raises(DelaycvError, match="duplicate"):
        check_checkpoint_request(spec)


@hypothesis_settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 5000),
    fractions=st.lists(
        st.floats(0.0001, 1.0, allow_nan=False), min_size=1, max_size=5, unique=True
    ),
    every=st.one_of(st.none(), st.integers(1, 2000)),
)
def test_a_run_checkpointed_at_fractions_is_tested_exactly_there(n, fractions, every):
    """One rounding: the checkpoints a run records for ``fractions`` (the engine) are the ones
    the statistics' request for the same fractions picks, with no "next checkpoint" note."""
    points = checkpoint_positions(np.arange(n), every, {"fractions": fractions})
    table = pd.DataFrame({"dataset": "d", "checkpoint": points})
    chosen = choose_checkpoints(table, {"fractions": fractions})
    assert chosen["note"].eq("").all(), chosen["note"].tolist()
    assert chosen["checkpoint"].tolist() == [fraction_position(f, n) for f in fractions]


# --------------------------------------------------------------------------- item 12: order


def test_policies_are_in_reading_order_in_every_table_and_figure(real, one):
    assert sorted(POLICIES) != READING_ORDER  # text order is not it
    assert policy_order(POLICIES) == READING_ORDER
    assert sorted(POLICIES, key=policy_sort_key) == READING_ORDER
    tests = run_tests(one, metrics=["gmean"], checkpoints="last", resamples=200)
    assert list(dict.fromkeys(tests["policy"])) == READING_ORDER
    bias = bias_tests(one, metrics=["gmean"], resamples=200)
    assert list(dict.fromkeys(bias["policy"])) == READING_ORDER
    contrasts = policy_contrasts(one, metrics=["gmean"], resamples=200)
    assert list(dict.fromkeys(contrasts["policy"])) == READING_ORDER[1:]
    rows = real.assign(at="last")[real["checkpoint"] == ROWS]
    friedman = rank_across(rows, ["gmean"]).friedman
    within = friedman.loc[friedman["ranked"] == "learner", "within"]
    assert list(dict.fromkeys(within)) == READING_ORDER
    page = statistics.contrasts_html(contrasts, title="c", alpha=0.05)
    at = [page.index(f"<td>{p}</td>") for p in READING_ORDER[1:]]
    assert at == sorted(at)
    fig = final_distributions(one, dataset="gerrit", metric="gmean")
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == [f"policy {p}" for p in READING_ORDER]
    # (specs place a policy by its windows whatever its name)
    specs = {"fast": {"preset": "hitl", "pos_window": "1d", "neg_window": "90d"}, "ideal": {}}
    assert policy_order(["fast", "ideal", "zzz"], {**specs, "ideal": {"preset": "ideal"}}) == [
        "ideal",
        "fast",
        "zzz",
    ]


def test_one_marker_per_preset_in_every_study():
    both = window_table(["hitl_1d_90d", "hitl_7d_90d", "hitl_7d_15d", "hitl_1d_15d",
                                 "verification_7d", "verification_30d"])  # fmt: skip
    only_hitl = window_table(["hitl_1d_90d", "hitl_7d_90d"])
    with_delay = window_table(["delay_1d", "delay_7d", "hitl_1d_90d", "hitl_7d_90d"])
    for table in (both, only_hitl, with_delay):
        styles = family_styles(table)
        assert styles["hitl, N = 90d"][0] == "s"
    assert family_styles(both)["verification"][0] == "^"
    assert family_styles(with_delay)["delay"][0] == "o"
    # the families of one preset: dashes by their fixed window, 15d before 90d
    assert family_styles(both)["hitl, N = 15d"][1] == "-"
    assert family_styles(both)["hitl, N = 90d"][1] == "--"
    assert list(family_styles(both)) == ["verification", "hitl, N = 15d", "hitl, N = 90d"]


# --------------------------------------------------------------------------- item 12: figures


def test_every_figure_reads_at_the_report_width(real, one):
    """The report shows a figure 830 px wide: a figure at most FIGURE_WIDTH inches wide with text
    from SMALL_TEXT points shows its smallest text at >= 11 px there."""
    strip = run_tests(one, metrics=["gmean"], checkpoints="all", resamples=200)
    contrasts = policy_contrasts(one, metrics=["gmean"], resamples=200)
    rows = one.assign(at="last")[one["checkpoint"] == ROWS]
    figures = {
        "learning curves": learning_curves(one, strip, dataset="gerrit", metric="gmean"),
        "bias": bias_curves(one, dataset="gerrit", metric="gmean"),
        "final": final_distributions(one, dataset="gerrit", metric="gmean"),
        "pairwise": pairwise_heatmap(strip, dataset="gerrit", metric="gmean"),
        "sensitivity": sensitivity(one, dataset="gerrit", metric="gmean"),
        "contrasts": contrast_figure(contrasts, dataset="gerrit", metric="gmean"),
        "sk": sk_boxplot(
            family_values(
                rows,
                {
                    "ranked": "policy",
                    "within": "GaussianNB",
                    "reference": "true",
                    "estimator": "fading",
                    "at": "last",
                    "metric": "gmean",
                },
            ).dropna(axis=1),  # fmt: skip
            pd.DataFrame({"treatment": ["ideal", "delay_30d"], "group": [1, 2]}),
            note="not ranked: delay_3000d",
        ),
        "cd": cd_diagram(
            rank_across(real.assign(at="last")[real["checkpoint"] == ROWS], ["gmean"]).result(
                ("policy", "GaussianNB", "true", "fading", "last", "gmean")
            ),
            title="policies, learner GaussianNB: gmean",
        ),
    }
    for name, fig in figures.items():
        width = fig.get_figwidth()
        assert width <= FIGURE_WIDTH, name
        FigureCanvasAgg(fig).draw()
        sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_text() and t.get_visible()]
        assert min(sizes) >= SMALL_TEXT, (name, min(sizes))
        assert min(sizes) * 830 / (72 * width) >= 10.6, name
        # no more than two panels side by side (panels of one row share their top edge)
        tops = [round(ax.get_position().y1, 3) for ax in fig.axes if ax.get_title()]
        assert max((tops.count(t) for t in set(tops)), default=1) <= MAX_COLUMNS, name
        # the legend fits the figure (it was cut off at four columns)
        for legend in fig.legends:
            box = legend.get_window_extent()
            assert box.x0 >= 0 and box.x1 <= width * fig.dpi + 1, name


def test_the_bias_panels_share_the_time_axis(real):
    # brackets' panels: one time axis, whatever each policy's first checkpoint with a value
    fig = bias_curves(real, dataset="brackets", metric="gmean")
    axes = [ax for ax in fig.axes if ax.get_visible() and ax.get_title()]
    assert len(axes) == len(POLICIES)
    assert len({ax.get_xlim() for ax in axes}) == 1
    assert all(axes[0].get_shared_x_axes().joined(axes[0], ax) for ax in axes)
    assert all([t.get_text() for t in ax.get_xticklabels()] for ax in axes)


def test_the_sensitivity_legend_shows_the_ideal_marker(one):
    fig = sensitivity(one, dataset="gerrit", metric="gmean")
    handles = {h.get_label(): h for h in fig.legends[0].legend_handles}
    ideal = next(h for label, h in handles.items() if label.startswith("ideal (window 0)"))
    assert ideal.get_marker() == IDEAL_MARKER
    # the ideal points in the panels use that marker
    markers = {
        line.get_marker()
        for ax in fig.axes
        for line in ax.get_lines()
        if len(line.get_xdata()) == 1
    }
    assert IDEAL_MARKER in markers


# --------------------------------------------------------------------------- item 12: pages


def test_each_page_states_the_direction_once_per_section(one):
    tests = run_tests(one, metrics=METRICS, checkpoints="last", resamples=200)
    page = statistics.tests_html(tests, title="t", metrics=METRICS)
    sections = page.split("<h2>")[1:]
    for section in sections:
        assert section.count('<p class="direction">') == 1
    assert (
        "a − b and Cliff&#x27;s δ: a positive value means learner a scores higher than learner b, "
        "which favours learner b (fpr_1: lower is better)." in page
    )
    assert "which favours learner a (gmean: higher is better)." in page
    assert "2/2<sup>n</sup>" in page and "unpaired" in page  # why p, interval and δ can disagree
    contrasts = policy_contrasts(one, metrics=["gmean"], resamples=200)
    page = statistics.contrasts_html(contrasts, title="c", alpha=0.05)
    assert "the policy scores higher than ideal, which favours the policy (gmean" in page
    bias = bias_tests(one, metrics=["fpr_1"], resamples=200)
    page = statistics.bias_html(bias, title="b", alpha=0.05)
    assert "which is pessimistic (fpr_1: lower is better)" in page


def test_the_within_page_is_not_across_and_its_columns_agree(real):
    rows = real.assign(at="last")[real["checkpoint"] == ROWS]
    within = rank_within(rows, ["gmean"])
    page = statistics.rankings_html(scott_knott=within, title="w", metrics=["gmean"])
    intro = page.split("<p>", 1)[1].split("</p>", 1)[0]
    assert "across datasets" not in intro.lower() and "within each dataset" in intro
    head = page.split("<thead>", 1)[1].split("</thead>", 1)[0]
    assert "<th>place by median</th>" in head
    assert "<th>mean rank over (seed, fold) pairs</th>" in head and "<th>rank</th>" not in head
    across = rank_across(rows, ["gmean"])
    page = statistics.rankings_html(
        across.friedman, across.scott_knott, title="a", metrics=["gmean"]
    )
    head = page.split("<thead>", 1)[1].split("</thead>", 1)[0]
    assert "<th>mean rank over datasets</th>" in head and "<th>place by mean rank</th>" in head
    # the place follows the mean rank in every family
    tested = across.friedman[across.friedman["mean_rank"].notna()]
    for _, family in tested.groupby(list(FAMILY)):
        order = family.sort_values("mean_rank")["rank"].to_numpy(dtype=float)
        assert (np.diff(order) >= 0).all()
    # a family of one treatment is not a "group 1"
    single = rank_within(rows[rows["learner"] == "Prior"], ["gmean"], ranked=("learner",))
    assert single["group"].isna().all()
    assert set(single.loc[single["note"] != "", "note"]) >= {"1 treatment: nothing to rank"}


# --------------------------------------------------------------------------- item 12: report


def render(caption: str, config_file: str, wildcards=None, params=None, overrides=None) -> str:
    """A report caption as Snakemake 9 renders it (its Jinja options, docutils), as plain text;
    docutils warnings fail. ``overrides``: values over the file's (``--config``)."""
    import re
    from html import unescape

    from docutils.core import publish_parts
    from jinja2 import Environment

    from delaycv.study.datasets import datasets_with_effort
    from delaycv.study.loading import load_study

    study = load_study(
        [str(REPO / config_file)],
        config={},
        overrides=overrides or {},
        schema=str(REPO / "workflow" / "schemas" / "config.schema.yaml"),
        cwd=None,
        learners=False,
    )
    # what the workflow adds for the report (workflow/rules/common.smk)
    study["report_facts"] = {"datasets_with_effort": datasets_with_effort(study, None)}
    sm = types.SimpleNamespace(
        config=study,
        wildcards=types.SimpleNamespace(**(wildcards or {})),
        params=types.SimpleNamespace(**(params or {})),
    )
    env = Environment(trim_blocks=True, lstrip_blocks=True)
    text = env.from_string((REPO / "workflow" / "report" / caption).read_text()).render(
        snakemake=sm, categories={}, files=[]
    )
    body = publish_parts(text, writer="html", settings_overrides={"halt_level": 2})["body"]
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", body))).strip()


def test_the_report_home_page_says_policies_seeds_and_folds():
    text = render("workflow.rst", "config/hitl-rq1.yaml")
    assert text.startswith(
        "delaycv evaluated 1 learner (ht) on 8 datasets (brackets, cppcheck, edx-platform, gerrit, "
        "gimp, git, mindspore, pip) under 15 label policies (ideal, hitl_1d_15d, "
    )
    assert "with 1 seed (1): 120 runs, one per (dataset, learner, seed, policy)." in text
    assert "Each run is 10 fold copies of the learner (bootstrap validation with 10 folds" in text
    assert "at positions 1000, 2000, 3000, 4000, 5000" in text and "learner(s)" not in text
    assert "switches between the PNG and the zoomable PDF" in text
    assert (
        "at positions 1000, 2000, 3000, 4000, 5000, every policy against ideal, and ranked "
        "across and within the datasets" in text
    )
    small = render("workflow.rst", "config/test-small.yaml")
    assert "2 learners (nb, lr) on 1 dataset (tiny) under 2 label policies" in small
    assert "with 1 seed (1): 4 runs" in small and "2 fold copies" in small
    # no space before a comma ("checkpoint , every"), one before a parenthesis after a tag that
    # ends its line ("so far(effort scope"); one dataset is not ranked across datasets
    assert " ," not in small and " ," not in text
    assert "every evaluation so far (effort scope cumulative)." in text
    assert "every evaluation so far (effort scope cumulative)." in small
    assert (
        "at the last checkpoint, every policy against ideal, and ranked within the dataset over "
        "its (seed, fold) pairs" in small
    )
    assert "across and within" not in small


def test_the_report_home_page_speaks_of_effort_aware_metrics_where_a_stream_has_an_effort():
    """A study none of whose streams has an effort is not told of the effort-aware metrics'
    scope (found on a study of card transactions); one where some have one names them."""
    generated = {"generate": {"rows": 400, "seed": 3}}
    none = render(
        "workflow.rst",
        "config/test-small.yaml",
        overrides={"datasets": {"tiny": {**generated, "effort": None}}},
    )
    assert "No dataset has an effort, so no effort-aware metric (popt, ifa, ...) is computed." in (
        none
    )
    assert "effort scope" not in none
    some = render(
        "workflow.rst",
        "config/test-small.yaml",
        overrides={
            "datasets": {
                "tiny": generated,
                "flat": {"generate": {"rows": 400, "seed": 4}, "effort": None},
            }
        },
    )
    assert (
        "The effort-aware metrics of the dataset with an effort (tiny) (popt, ifa, "
        "effort_recall_20, ...) rank, whatever the estimator, every evaluation so far" in some
    )
    every = render("workflow.rst", "config/test-small.yaml")
    assert "The effort-aware metrics (popt, ifa, effort_recall_20, ...) rank" in every


@pytest.mark.parametrize(
    "formats, home, png_caption",
    [
        (
            "[png, pdf]",
            "The format toggle above the list switches between the PNG and the zoomable PDF",
            "to enlarge it, open this image in a new tab, or switch the format toggle above the "
            "list to zoomable PDF (the report's PDF viewer zooms).",
        ),
        (
            "[svg]",
            "The figures are SVG files, vectors sharp at any zoom of the page (figures.formats), "
            "and the files are under",
            None,
        ),
        (
            "[png]",
            "The figures are PNG files (figures.formats); the PNG also opens in a new tab",
            "to enlarge it, open this image in a new tab.",
        ),
        (
            "[png, svg]",
            "The format toggle above the list switches between the PNG and the SVG (vectors: "
            "sharp at any zoom of the page); the PNG also opens",
            "to enlarge it, open this image in a new tab, or switch the format toggle above the "
            "list to SVG (vectors: sharp at any zoom of the page).",
        ),
        (
            "[png, pdf, svg]",
            "Each figure has a row per format: the PNG, the zoomable PDF (shown in a viewer that "
            "zooms: the way to enlarge a figure in the report) and the SVG",
            "to enlarge it, open this image in a new tab, or open the row of its zoomable PDF (the "
            "report's PDF viewer zooms).",
        ),
    ],
)
def test_the_report_names_the_formats_the_study_draws(formats, home, png_caption):
    """The home page and a PNG's caption speak of the formats of ``figures.formats`` only (they
    spoke of a PNG and a zoomable PDF to a study that drew SVG files), and of a format toggle
    only where the report makes one: two formats (with three, each format is a row)."""
    overrides = {"figures": {"formats": formats.strip("[]").split(", ")}}
    text = render("workflow.rst", "config/test-small.yaml", overrides=overrides)
    assert home in text
    assert ("dots per inch" in text) == ("png" in formats)
    if png_caption is not None:
        figure = {"figure": "sensitivity", "name": "tiny_gmean", "dataset": "tiny", "format": "png"}
        params = {"metric": "gmean", "reference": "observed", "alpha": 0.05}
        text = render("figures.rst", "config/test-small.yaml", figure, params, overrides)
        assert png_caption in text
        ranking = {"figure": "cd", "name": "learner_ideal_last_gmean", "format": "png"}
        params = {"datasets": 1, "alpha": 0.05, "version": "np", "figure_metrics": "gmean"}
        text = render("rankings.rst", "config/test-small.yaml", ranking, params, overrides)
        assert png_caption in text


def test_the_captions_show_the_settings_readably():
    params = {"metric": "gmean", "reference": "observed", "alpha": 0.05}
    wildcards = {"figure": "sensitivity", "name": "tiny_gmean", "dataset": "tiny"}
    png = render("figures.rst", "config/test-small.yaml", {**wildcards, "format": "png"}, params)
    pdf = render("figures.rst", "config/test-small.yaml", {**wildcards, "format": "pdf"}, params)
    assert "File sensitivity_tiny_gmean.png in results/figures/tiny/." in png
    assert "switch the format toggle above the list to zoomable PDF" in png
    assert "This is the vector (PDF) version of the figure" in pdf
    assert (
        "Settings of this job: figures metric gmean, reference observed, formats png / pdf, "
        "dpi 200; alpha 0.05; the policies' windows from their specs: ideal (preset ideal), "
        "hitl_7d_90d (preset hitl, pos_window 7d, neg_window 90d)." in png
    )
    assert "diamond of its own at the left" in png
    assert '{"' not in png  # no JSON
    tests = render(
        "tests.rst",
        "config/hitl-rq1.yaml",
        {"dataset": "pip"},
        {"metrics": "gmean", "alpha": 0.05, "resamples": 5000},
    )
    assert "checkpoints positions 1000, 2000, 3000, 4000, 5000." in tests
    assert "favours a when higher is better" in tests
    rankings = render(
        "rankings.rst",
        "config/hitl-rq1.yaml",
        {},
        {"datasets": 8, "alpha": 0.05, "version": "np", "figure_metrics": "gmean"},
    )
    assert "checkpoints positions 1000, 2000, 3000, 4000, 5000; alpha 0.05" in rankings
    for caption in ("bias.rst", "contrasts.rst", "runs.rst"):
        text = render(
            caption,
            "config/test-small.yaml",
            {"dataset": "tiny"},
            {"metrics": "gmean", "alpha": 0.05, "resamples": 200, "reference_policy": "ideal"},
        )
        assert "(s)" not in text and '{"' not in text
