"""``delaycv compare``, ``rank`` and ``plot`` without options write, byte for byte, what the
workflow's compare, rankings and figures stages write with the default config: the commands and
the config read their defaults from one place (delaycv.common.defaults), and make the same
settings (delaycv.stats.settings, delaycv.figures.settings) as the workflow
(delaycv.study.stage_settings)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from delaycv.cli import build_parser, main
from delaycv.cli import compare as compare_command
from delaycv.cli import plot as plot_command
from delaycv.cli import rank as rank_command
from delaycv.common.defaults import TEST_METRICS
from delaycv.stages.compare import compare
from delaycv.stages.figures import figures
from delaycv.stages.rankings import rankings
from delaycv.study.loading import load_config
from delaycv.study.runs import policy_spec
from delaycv.study.stage_settings import compare_settings, figure_settings, ranking_settings
from tests.support.fold_tables import fold_table

#: The policies of the tables (fold_table's) as a study names them.
POLICIES = {
    "ideal": {"preset": "ideal"},
    "hitl_7d_90d": {"preset": "hitl", "pos_window": "7d", "neg_window": "90d"},
}


@pytest.fixture(scope="module")
def default_study() -> dict:
    """A study that gives nothing but what it must (datasets, learners, policies, seeds): every
    other key has its default."""
    return load_config(
        {
            "datasets": {f"d{i}": {"generate": {"rows": 100, "seed": i}} for i in (1, 2, 3)},
            "learners": {name: {"class": "NoChange"} for name in ("ht", "nb", "prior")},
            "policies": POLICIES,
            "seeds": [1, 2],
        },
        learners=False,
    )


@pytest.fixture(scope="module")
def merged(tmp_path_factory) -> list[Path]:
    """One merged table per dataset, as the workflow's merge rule writes them."""
    folder = tmp_path_factory.mktemp("merged")
    table = fold_table(datasets=("d1", "d2", "d3"), seeds=(1, 2), folds=4, checkpoints=3)
    paths = []
    for dataset, rows in table.groupby("dataset", sort=True):
        paths.append(folder / f"{dataset}.parquet")
        rows.to_parquet(paths[-1], index=False)
    return paths


def files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by its path in it, with its bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def parse(*argv: str):
    return build_parser(argv[0]).parse_args(list(argv))


def test_the_commands_make_the_workflow_s_settings(default_study):
    """Field by field; only the bias tests differ in how they are asked for: the workflow's rule
    always writes them, the command when the table has both references (as the default one has)."""
    compare_args = parse("compare", "m.parquet", "--out", "o")
    # (the command's reference policy: ideal when the table has it, as the config's)
    made = compare_command.settings_from(compare_args, reference_policy="ideal")
    assert made == replace(compare_settings(default_study), bias=None)
    made = rank_command.settings_from(parse("rank", "m.parquet", "--out", "o"))
    assert made == ranking_settings(default_study)
    made = plot_command.settings_from(parse("plot", "m.parquet", "--out", "o"))
    assert made == figure_settings(default_study)


def test_compare_without_options_writes_the_workflow_s_files(merged, default_study, tmp_path):
    assert main(["compare", str(merged[0]), "--out", str(tmp_path / "command")]) == 0
    compare(merged[0], tmp_path / "stage", compare_settings(default_study), dataset="d1")
    made = files(tmp_path / "command")
    assert made == files(tmp_path / "stage")
    assert {"tests.parquet", "strip.parquet", "bias.html", "contrasts.csv"} <= set(made)


@pytest.mark.slow
def test_rank_and_plot_without_options_draw_the_workflow_s_figures(merged, default_study, tmp_path):
    argv = ["rank", *map(str, merged), "--out", str(tmp_path / "rank-command"), "--quiet"]
    assert main(argv) == 0
    rankings(merged, tmp_path / "rank-stage", ranking_settings(default_study))
    made = files(tmp_path / "rank-command")
    assert made == files(tmp_path / "rank-stage")
    # a figure of every tested metric (the default: the figures follow the tests)
    assert {f"figures/cd_learner_ideal_last_{m}.png" for m in TEST_METRICS} <= set(made)
    tests = tmp_path / "tests"
    compare(merged[0], tests, compare_settings(default_study), dataset="d1")
    argv = ["plot", str(merged[0]), "--tests", str(tests), "--contrasts"]
    argv += [str(tests / "contrasts.parquet"), "--out", str(tmp_path / "plot-command")]
    assert main(argv) == 0
    figures(
        merged[0],
        tmp_path / "plot-stage",
        figure_settings(default_study),
        tests=tests / "strip.parquet",
        contrasts=tests / "contrasts.parquet",
        policy_specs={p: policy_spec(default_study, p) for p in POLICIES},
    )
    drawn = files(tmp_path / "plot-command")
    assert drawn == files(tmp_path / "plot-stage")
    assert {f"learning_curves_d1_{m}_observed.png" for m in TEST_METRICS} <= set(drawn)


def test_the_rankings_rank_the_figures_reference_too(merged, tmp_path):
    """Ranked on true labels with figures on observed ones: the observed families are ranked
    too, and drawn (as the figures' metrics are), rather than no figure and no word."""
    from delaycv.stats.settings import make_ranking_settings

    settings = make_ranking_settings(
        metrics=["accuracy"], references=["true"], figure_reference="observed", formats=["png"]
    )
    result = rankings(merged, tmp_path, settings)
    assert set(result.across.friedman["reference"]) == {"true", "observed"}
    drawn = files(tmp_path / "figures")
    assert "cd_learner_ideal_last_accuracy.png" in drawn


def test_a_reference_asked_for_that_the_tables_lack_is_noted(merged, tmp_path):
    """The default references include the corrected one; tables of runs scored without it
    (these have observed and true rows) get no test or ranking of it, and the notes say so."""
    from delaycv.stats.settings import make_compare_settings, make_ranking_settings

    why = "(its runs were scored without it: evaluation.corrected false, --no-corrected)"
    settings = make_compare_settings(metrics=["accuracy"])
    assert "corrected" in settings.references
    compared = compare(merged[0], tmp_path / "c", settings)
    assert set(compared.tests["reference"]) == {"observed", "true"}
    assert compared.notes()[0] == (
        "tests: the tables have no row scored against the corrected reference: no test of it " + why
    )
    ranked = rankings(merged, tmp_path / "r", make_ranking_settings(metrics=["accuracy"]))
    assert ranked.notes()[0] == (
        "the tables have no row scored against the corrected reference: no ranking of it " + why
    )
    asked = make_compare_settings(metrics=["accuracy"], references=["observed", "true"])
    assert not any("no row" in n for n in compare(merged[0], tmp_path / "d", asked).notes())
