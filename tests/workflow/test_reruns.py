"""Exactly which jobs a change reruns: config edits, library code, rule scripts, MOA learners.

The tests work on copies of one workflow (with its own copy of the delaycv package) whose outputs
are recorded as produced with ``--touch`` (provenance metadata included); after a change, a dry
run lists exactly the jobs Snakemake would run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.workflow_copy import (
    copy_workflow,
    planned_jobs,
    read_config,
    touch_outputs,
    write_config,
)
from tests.support.workflow_plans import (
    AGGREGATION,
    ALL_EVALUATE,
    SMALL,
    evaluate_job,
    without_keys,
)

# every test runs Snakemake (a dry run at least) on a copy of the workflow
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A copy of the workflow on the tiny config whose 41 outputs are all recorded as up to date."""
    workdir = copy_workflow(tmp_path_factory.mktemp("template") / "wf", SMALL)
    # 23 with tests.html and bias.html, the report's views of the tables; 26 with the policy
    # contrasts (the config has ideal); 36 with the rankings (9 tables and pages, the figures);
    # 39 with the runs table (runs.parquet, runs.csv, runs.html); 41 with the datasets table
    # (datasets.csv, datasets.html)
    assert touch_outputs(workdir) == 41
    return workdir


@pytest.fixture
def done(template, tmp_path) -> Path:
    """A fresh copy of the template (mtimes and Snakemake's metadata kept)."""
    workdir = tmp_path / "wf"
    shutil.copytree(template, workdir, symlinks=True, ignore=shutil.ignore_patterns("log"))
    return workdir


def edit(path: Path, text: str = "\n# edited\n") -> None:
    path.write_text(path.read_text() + text)


# --------------------------------------------------------------------------- structure


# --------------------------------------------------------------------------- reruns


def test_nothing_changed_nothing_runs(done):
    assert planned_jobs(done) == set()


def test_changing_one_learner_reruns_only_its_jobs(done):
    config = read_config(done / "config.yaml")
    # (GaussianNB takes no parameter: its spec changes by a scaler before it)
    config["learners"]["nb"] = {
        "pipeline": [
            {"class": "river.preprocessing.StandardScaler"},
            {"class": "river.naive_bayes.GaussianNB"},
        ]
    }
    write_config(done, config)
    expected = {evaluate_job("nb", "ideal"), evaluate_job("nb", "hitl_7d_90d")} | AGGREGATION
    assert planned_jobs(done) == expected


def test_reordering_config_keys_reruns_nothing(done):
    config = read_config(done / "config.yaml")
    config["validation"] = dict(reversed(list(config["validation"].items())))
    config["learners"] = dict(reversed(list(config["learners"].items())))
    write_config(done, config)
    assert planned_jobs(done) == set()


def test_adding_a_learner_runs_only_its_jobs_and_the_aggregation(done):
    config = read_config(done / "config.yaml")
    config["learners"]["ht"] = {"class": "river.tree.HoeffdingTreeClassifier"}
    write_config(done, config)
    expected = {evaluate_job("ht", "ideal"), evaluate_job("ht", "hitl_7d_90d")} | AGGREGATION
    assert planned_jobs(done) == expected


def test_adding_a_seed_and_a_policy_run_only_their_jobs(done):
    config = read_config(done / "config.yaml")
    config["seeds"] = [1, 2]
    config["policies"]["delay_3d"] = {"preset": "delay", "window": "3d"}
    write_config(done, config)
    new = {evaluate_job(lr, p, 2) for lr in ("nb", "lr") for p in ("ideal", "hitl_7d_90d")}
    new |= {evaluate_job(lr, "delay_3d", s) for lr in ("nb", "lr") for s in (1, 2)}
    assert planned_jobs(done) == new | AGGREGATION


def test_changing_validation_reruns_every_evaluation_but_not_the_data(done):
    config = read_config(done / "config.yaml")
    config["validation"]["folds"] = 3
    write_config(done, config)
    assert planned_jobs(done) == ALL_EVALUATE | AGGREGATION


def test_changing_a_datasets_effort_reruns_its_convert_job_and_what_follows(done):
    config = read_config(done / "config.yaml")
    config["datasets"]["tiny"]["effort"] = None  # the generated stream without its la + ld
    write_config(done, config)
    expected = {("convert", (("dataset", "tiny"),))} | ALL_EVALUATE | AGGREGATION
    assert without_keys(planned_jobs(done)) == expected


@pytest.mark.parametrize(
    "section, change, rankings",
    [
        ("tests", {"resamples": 999}, True),  # (Friedman's permutation p)
        ("tests", {"checkpoints": {"fractions": [0.5, 1.0]}}, True),
        ("contrasts", {"reference": "hitl_7d_90d"}, False),
    ],
)
def test_changing_the_tests_settings_reruns_only_tests_and_figures(done, section, change, rankings):
    """... and the rankings when they use the setting (the checkpoints and resamples, not the
    contrasts' reference)."""
    config = read_config(done / "config.yaml")
    config.setdefault(section, {}).update(change)
    write_config(done, config)
    assert planned_jobs(done) == {
        ("compare", (("dataset", "tiny"),)),
        ("figures", (("dataset", "tiny"),)),
        ("all", ()),
    } | ({("rankings", ())} if rankings else set())


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"rankings": {"version": "p"}}, {("rankings", ())}),
        # the figures' metric: the dataset's figures and the rankings' diagrams
        (
            {"figures": {"metric": "accuracy"}},
            {("rankings", ()), ("figures", (("dataset", "tiny"),))},
        ),
    ],
)
def test_changing_the_rankings_settings_reruns_only_the_rankings(done, change, expected):
    config = read_config(done / "config.yaml")
    for section, values in change.items():
        config.setdefault(section, {}).update(values)
    write_config(done, config)
    assert planned_jobs(done) == expected | {("all", ())}


@pytest.mark.parametrize(
    "module, expected",
    [
        ("engine/run.py", ALL_EVALUATE | AGGREGATION),
        ("protocol/policies.py", ALL_EVALUATE | AGGREGATION),
        ("metrics/__init__.py", ALL_EVALUATE | AGGREGATION),
        ("figures/style.py", {("figures", (("dataset", "tiny"),)), ("rankings", ()), ("all", ())}),
        ("stats/families.py", {("rankings", ()), ("all", ())}),
        ("figures/rankings.py", {("rankings", ()), ("all", ())}),
        (
            "stats/checkpoints.py",
            AGGREGATION - {("merge", (("dataset", "tiny"),)), ("merge_all", ())},
        ),
        ("data/synthetic.py", {("convert", (("dataset", "tiny"),))} | ALL_EVALUATE | AGGREGATION),
        ("cli/__init__.py", set()),
        ("study/loading.py", set()),
        ("study/checks.py", set()),
    ],
)
def test_library_code_changes_rerun_exactly_their_stage(done, module, expected):
    edit(done / "delaycv" / module, "\n_EDITED = 1  # a change of behaviour\n")
    assert without_keys(planned_jobs(done)) == expected


def test_library_edits_that_cannot_change_results_rerun_nothing(done):
    engine = done / "delaycv" / "engine" / "run.py"
    text = engine.read_text()
    # the module docstring rewritten, a statement reformatted over several lines, a comment
    assert text.startswith('"""')
    text = '"""Rewritten docstring."""' + text[text.index('"""', 3) + 3 :]
    line = next(ln for ln in text.splitlines() if ln.startswith("from delaycv.") and "import" in ln)
    module, names = line.split(" import ")
    reformatted = f"{module} import (\n    {names},  # reformatted\n)"
    text = text.replace(line, reformatted, 1)
    engine.write_text(text + "\n# an appended comment\n")
    plots = done / "delaycv" / "figures/style.py"
    plots.write_text(plots.read_text().replace("\n\n\n", "\n\n\n\n", 1))
    assert planned_jobs(done) == set()
    # (and the same file with a real change reruns the evaluations)
    engine.write_text(engine.read_text().replace(reformatted, line + "\n_EDITED = 1", 1))
    assert planned_jobs(done) == ALL_EVALUATE | AGGREGATION


def test_changing_a_rule_script_reruns_its_jobs(done):
    edit(done / "scripts" / "evaluate.py")
    assert planned_jobs(done) == ALL_EVALUATE | AGGREGATION


def test_a_moa_learner_reruns_on_its_meaning_only(done, moa):
    """A MOA learner's jobs rerun when its command line changes (``-g 200`` to ``-g 300``), not
    when only its spacing does; the other learners' jobs stay."""
    config = read_config(done / "config.yaml")
    config["learners"]["ht_moa"] = {"moa": "trees.HoeffdingTree -g 200"}
    write_config(done, config)
    touch_outputs(done)
    assert planned_jobs(done) == set()
    config["learners"]["ht_moa"] = {"moa": "  trees.HoeffdingTree    -g 200 "}
    write_config(done, config)
    assert planned_jobs(done) == set()
    config["learners"]["ht_moa"] = {"moa": "trees.HoeffdingTree -g 300"}
    write_config(done, config)
    expected = {evaluate_job("ht_moa", "ideal"), evaluate_job("ht_moa", "hitl_7d_90d")}
    assert planned_jobs(done) == expected | AGGREGATION


def test_a_raw_file_touched_or_copied_again_reruns_nothing_and_edited_reruns_its_jobs(tmp_path):
    """A dataset file whose time changes but not its content (copied again, checked out again, a
    mount that stamps every file) reruns nothing: the profile has Snakemake compare the
    checksums of inputs up to 1 GB, not only of those up to its default 1 MB (a 1.6 MB file
    here; the Commit Guru files are 1 to 11 MB, and a study's evaluations all reran for a new
    mount of the same files). A changed content reruns the dataset's jobs."""
    from tests.support.workflow_copy import write_commit_guru_csv

    raw = write_commit_guru_csv(tmp_path / "data" / "raw.csv", rows=12_000)
    assert raw.stat().st_size > 1_000_000  # beyond Snakemake's default checksum size
    config = read_config(SMALL)
    config["datasets"] = {"raw": {"path": str(raw), "preset": "commit-guru"}}
    workdir = copy_workflow(tmp_path / "wf", config)
    touch_outputs(workdir)
    assert planned_jobs(workdir) == set()
    raw.write_bytes(raw.read_bytes())  # the same bytes, a new time
    assert planned_jobs(workdir) == set()
    edit(raw, "\n")  # another content
    planned = planned_jobs(workdir)
    assert ("convert", (("dataset", "raw"),)) in without_keys(planned)


OWN_LEARNER = '''from river import naive_bayes

from mysmoothing import SHIFT


class MyNB(naive_bayes.GaussianNB):
    """A learner of the study's own, in a module of the workflow's working directory."""

    def predict_proba_one(self, x, **kw):
        return {c: p + SHIFT for c, p in super().predict_proba_one(x, **kw).items()}
'''


def test_a_learner_of_one_s_own_reruns_when_its_module_changes(tmp_path):
    """A learner class of the study's own (``class: mylearners:MyNB``, its module beside the
    config, in the working directory, importing a helper module of its own): the study loads it,
    and a change of the code of its module or of the helper reruns exactly that learner's
    evaluations (a comment in either reruns nothing)."""
    config = read_config(SMALL)
    config["learners"]["nb"] = {"class": "mylearners:MyNB"}
    workdir = copy_workflow(tmp_path / "wf", config)
    module = workdir / "mylearners.py"
    module.write_text(OWN_LEARNER)
    helper = workdir / "mysmoothing.py"
    helper.write_text("SHIFT = 0.0\n")
    touch_outputs(workdir)
    assert planned_jobs(workdir) == set()
    edit(module, "# only a comment\n")
    edit(helper, "# only a comment\n")
    assert planned_jobs(workdir) == set()
    expected = {evaluate_job("nb", "ideal"), evaluate_job("nb", "hitl_7d_90d")} | AGGREGATION
    edit(helper, "\nUNUSED = 0.1\n")
    assert planned_jobs(workdir) == expected
    touch_outputs(workdir)
    edit(module, "\nSMOOTHING = 0.1\n")
    assert planned_jobs(workdir) == expected
