"""The Snakemake workflow: structure, lint, config errors, and exactly which jobs a change reruns.

The rerun tests work on a copy of the workflow (with its own copy of the delaycv package) whose
outputs are recorded as produced with ``--touch`` (provenance metadata included); after a change,
a dry run lists exactly the jobs Snakemake would run.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from delaycv.study.loading import load_config
from delaycv.study.runs import run_key
from tests.support.paths import SHARED_DATASETS, shared_file
from tests.support.workflow_copy import (
    BIN,
    REPO,
    copy_workflow,
    env,
    missing_outputs,
    planned_jobs,
    read_config,
    rules_of,
    run,
    touch_outputs,
    write_commit_guru_csv,
    write_config,
)

# every test runs Snakemake (a dry run at least) on a copy of the workflow
pytestmark = pytest.mark.slow

SMALL = REPO / "config" / "test-small.yaml"


def is_stream_of(path: str, dataset: str) -> bool:
    """Whether ``path`` is the converted stream of ``dataset``, keyed by the dataset's spec."""
    pattern = rf"resources/generated/streams/{re.escape(dataset)}/[0-9a-f]{{12}}\.parquet"
    return re.fullmatch(pattern, path) is not None


AGGREGATION = {
    ("merge", (("dataset", "tiny"),)),
    ("merge_all", ()),
    ("compare", (("dataset", "tiny"),)),
    ("figures", (("dataset", "tiny"),)),
    ("rankings", ()),
    ("all", ()),
}


def evaluate_job(learner: str, policy: str, seed: int = 1, dataset: str = "tiny"):
    wildcards = (
        ("dataset", dataset),
        ("learner", learner),
        ("seed", str(seed)),
        ("policy", policy),
    )
    return ("evaluate", wildcards)


ALL_EVALUATE = {evaluate_job(lr, p) for lr in ("nb", "lr") for p in ("ideal", "hitl_7d_90d")}


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A copy of the workflow on the tiny config whose 39 outputs are all recorded as up to date."""
    workdir = copy_workflow(tmp_path_factory.mktemp("template") / "wf", SMALL)
    # 23 with tests.html and bias.html, the report's views of the tables; 26 with the policy
    # contrasts (the config has ideal); 36 with the rankings (9 tables and pages, the figures);
    # 39 with the runs table (runs.parquet, runs.csv, runs.html)
    assert touch_outputs(workdir) == 39
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


def test_snakefmt_check_passes():
    proc = subprocess.run(
        [str(BIN / "snakefmt"), "--check", "Snakefile", "workflow/rules"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_snakemake_lint_is_clean():
    proc = run(REPO, "--lint", "--cores", "1")
    assert "Congratulations, your workflow is in a good condition!" in proc.stdout + proc.stderr


def test_default_config_dag(tmp_path):
    workdir = copy_workflow(tmp_path / "wf", REPO / "config.yaml", library=False)
    counts = rules_of(planned_jobs(workdir))
    # 1 dataset x 3 learners x 2 seeds x 5 policies (ideal, verification_90d, 3 hitl windows)
    assert counts == {
        "convert": 1,
        "evaluate": 30,
        "merge": 1,
        "merge_all": 1,
        "compare": 1,
        "rankings": 1,
        "figures": 1,
        "all": 1,
    }


def test_hitl_study_dag(tmp_path):
    workdir = copy_workflow(tmp_path / "wf", REPO / "config" / "hitl-rq1.yaml", library=False)
    config = read_config(workdir / "config.yaml")
    for name, dataset in config["datasets"].items():  # the raw files need not exist here
        raw = workdir / "raw" / f"{name}.arff"
        raw.parent.mkdir(exist_ok=True)
        raw.write_text(f"% {name}\n")  # one stream each (the same content is refused)
        dataset["path"] = str(raw)
    write_config(workdir, config)
    counts = rules_of(planned_jobs(workdir))
    assert counts["evaluate"] == 8 * 15  # 8 projects x (7 x 2 HITL windows + ideal)
    assert counts["convert"] == 8 and counts["merge"] == 8 and counts["figures"] == 8


def test_contrasts_are_outputs_when_the_study_has_ideal_and_not_when_turned_off(tmp_path):
    contrasts = {f"results/tests/tiny/contrasts.{suffix}" for suffix in ("parquet", "csv", "html")}
    on = copy_workflow(tmp_path / "on", SMALL, library=False)
    assert contrasts <= set(missing_outputs(on))
    for name, change in (
        ("off", {"contrasts": {"reference": None}}),
        ("no-ideal", {"policies": {}}),  # the hitl grid alone: no reference policy by default
    ):
        config = {**read_config(SMALL), **change}
        workdir = copy_workflow(tmp_path / name, config, library=False)
        outputs = missing_outputs(workdir)
        assert "results/tests/tiny/tests.csv" in outputs
        assert not any("contrasts" in output for output in outputs), name


RANKING_OUTPUTS = {
    f"results/rankings/{name}"
    for name in (
        "friedman.parquet",
        "friedman.csv",
        "nemenyi.csv",
        "scott_knott.parquet",
        "scott_knott.csv",
        "rankings.html",
        "within.parquet",
        "within.csv",
        "within.html",
        "figures",
    )
}


def test_the_rankings_are_targets_of_all(tmp_path):
    workdir = copy_workflow(tmp_path / "wf", SMALL, library=False)
    assert set(missing_outputs(workdir)) >= RANKING_OUTPUTS
    jobs = planned_jobs(workdir)
    assert ("rankings", ()) in jobs
    # a study of one dataset ranks too (each family then carries a note)
    assert rules_of(jobs)["rankings"] == 1


def logs_and_benchmarks(workdir: Path) -> list[str]:
    proc = run(workdir, "--dry-run", "--cores", "1")
    return re.findall(r"^    (?:log|benchmark): (\S+)", proc.stdout, flags=re.MULTILINE)


def test_a_study_with_its_own_results_folder_writes_only_there(tmp_path):
    config = {**read_config(SMALL), "results": "results/s1"}
    workdir = copy_workflow(tmp_path / "s1", config, library=False)
    outputs = missing_outputs(workdir)
    streams = {o for o in outputs if o.startswith("resources/")}  # shared by every study
    assert len(streams) == 1 and is_stream_of(next(iter(streams)), "tiny")
    assert all(o.startswith("results/s1/") for o in set(outputs) - streams), outputs
    assert "results/s1/runs/tiny/nb/seed1/ideal/folds.parquet" in outputs
    assert "results/s1/rankings/figures" in outputs and "results/s1/merged.parquet" in outputs
    logs = logs_and_benchmarks(workdir)
    assert "logs/results/s1/rankings.log" in logs
    assert "logs/results/s1/runs/tiny/nb/seed1/ideal.log" in logs
    assert "results/s1/benchmarks/evaluate/tiny/nb/seed1/ideal.tsv" in logs
    assert all(
        p.startswith(("logs/results/s1/", "results/s1/")) for p in logs if "convert" not in p
    ), logs
    # with `runs`, the run directories (and their logs) go there, everything else stays
    # (a `runs` folder that the config names may be shared: each run directory ends in the key
    # of its settings, delaycv.study.runs.run_key)
    config["runs"] = "runs/shared"
    write_config(workdir, config)
    outputs = set(missing_outputs(workdir)) - streams
    runs = {o for o in outputs if o.startswith("runs/shared/")}
    assert len(runs) == 4 * 3  # 4 run directories x (folds, summary, run.json)
    key = run_key(load_config(config, learners=False), "tiny", "nb", "ideal")
    assert f"runs/shared/tiny/nb/seed1/ideal/{key}/folds.parquet" in runs
    assert all(
        re.fullmatch(r"runs/shared/tiny/\w+/seed1/\w+/[0-9a-f]{12}/\w+\.\w+", o) for o in runs
    )
    assert all(o.startswith("results/s1/") for o in outputs - runs), outputs
    logs = logs_and_benchmarks(workdir)
    assert f"logs/runs/shared/tiny/nb/seed1/ideal/{key}.log" in logs
    assert f"results/s1/benchmarks/evaluate/tiny/nb/seed1/ideal/{key}.tsv" in logs


def test_two_studies_share_run_directories_and_keep_their_own_tables(tmp_path):
    first = {**read_config(SMALL), "results": "results/s1", "runs": "runs"}
    workdir = copy_workflow(tmp_path / "wf", first, library=False)
    touch_outputs(workdir)
    assert planned_jobs(workdir) == set()
    second = copy.deepcopy(first)
    second["results"] = "results/s2"
    second["policies"]["delay_3d"] = {"preset": "delay", "window": "3d"}
    write_config(workdir, second)
    study = {(rule, w) for rule, w in AGGREGATION}
    new = {evaluate_job(lr, "delay_3d") for lr in ("nb", "lr")}
    # the 4 shared runs are not evaluated again
    assert without_keys(planned_jobs(workdir)) == new | study
    # the first study's tables are not the second's: it is still up to date
    write_config(workdir, first)
    assert planned_jobs(workdir) == set()


def without_keys(jobs):
    """``jobs`` without their ``settings`` and ``stream`` wildcards (the keys of a shared run
    directory and of a converted stream)."""
    keys = ("settings", "stream")
    return {(rule, tuple(w for w in wildcards if w[0] not in keys)) for rule, wildcards in jobs}


def test_studies_with_other_settings_never_share_a_run_directory(tmp_path):
    """Two studies name one `runs` folder and the same dataset, learners and policies, but one
    evaluates 3 folds: its runs get their own directories; neither overwrites the other's, and
    after both ran, each is up to date (no endless reruns)."""
    first = {**read_config(SMALL), "results": "results/s1", "runs": "runs"}
    workdir = copy_workflow(tmp_path / "wf", first, library=False)
    touch_outputs(workdir)
    second = copy.deepcopy(first)
    second["results"] = "results/s2"
    second["validation"]["folds"] = 3
    write_config(workdir, second)
    planned = planned_jobs(workdir)
    assert without_keys({j for j in planned if j[0] == "evaluate"}) == ALL_EVALUATE
    before = set(missing_outputs(workdir))
    runs = {o for o in before if o.startswith("runs/")}
    assert len(runs) == 4 * 3
    touch_outputs(workdir)
    assert planned_jobs(workdir) == set()
    write_config(workdir, first)
    assert planned_jobs(workdir) == set()  # the first study's run directories are as they were


def test_studies_that_give_one_dataset_name_two_sources_never_share_a_stream(tmp_path):
    """Two studies of one checkout name a dataset ``tiny``: with the same spec they share its
    converted stream; with another generator seed the second gets its own (the stream's key),
    and after both ran neither reconverts or reruns anything of the other."""
    first = {**read_config(SMALL), "results": "results/s1"}
    workdir = copy_workflow(tmp_path / "wf", first, library=False)
    touch_outputs(workdir)
    second = copy.deepcopy(first)
    second["results"] = "results/s2"
    write_config(workdir, second)
    assert not [o for o in missing_outputs(workdir) if o.startswith("resources/")]
    second["datasets"]["tiny"]["generate"]["seed"] = 4
    write_config(workdir, second)
    streams = [o for o in missing_outputs(workdir) if o.startswith("resources/")]
    assert len(streams) == 1 and is_stream_of(streams[0], "tiny")
    assert [dict(w)["dataset"] for r, w in planned_jobs(workdir) if r == "convert"] == ["tiny"]
    touch_outputs(workdir)
    assert len(list((workdir / "resources" / "generated" / "streams" / "tiny").iterdir())) == 2
    write_config(workdir, first)
    assert planned_jobs(workdir) == set()  # the first study's stream and runs are as they were
    write_config(workdir, second)
    assert planned_jobs(workdir) == set()


def test_a_bad_config_stops_the_workflow_naming_the_key(tmp_path):
    config = read_config(SMALL)
    config["learners"]["nb"]["params"] = 3
    workdir = copy_workflow(tmp_path / "wf", config, library=False)
    proc = run(workdir, "--dry-run", "--cores", "1", check=False)
    assert proc.returncode != 0
    out = proc.stderr + proc.stdout
    assert re.search(r"config\.yaml:\d+:\d+: key learners\.nb\.params: 3 is an integer", out), out


def test_every_rule_has_a_log_and_evaluate_a_benchmark(tmp_path):
    workdir = copy_workflow(tmp_path / "wf", SMALL, library=False)
    proc = run(workdir, "--dry-run", "--cores", "1")
    blocks = proc.stdout.split("\nrule ")[1:] + proc.stdout.split("\nlocalrule ")[1:]
    for block in blocks:
        name = block.split(":")[0]
        if name == "all":
            continue
        assert "    log: logs/" in block, name
        assert ("benchmark: results/benchmarks/evaluate/" in block) == (name == "evaluate")


# --------------------------------------------------------------------------- the named config is the study


def with_configs(tmp_path: Path) -> Path:
    """A copy of the workflow with the default config.yaml and the shipped config/ folder."""
    workdir = copy_workflow(tmp_path / "wf", REPO / "config.yaml", library=False)
    shutil.copytree(REPO / "config", workdir / "config")
    return workdir


@pytest.mark.parametrize(
    "configfile, evaluate, convert",
    [
        ("config.yaml", 1 * 3 * 2 * 5, 1),  # 3 learners x 2 seeds x 5 policies
        ("config/test-small.yaml", 1 * 2 * 1 * 2, 1),  # 2 learners x 1 seed x 2 policies
    ],
)
def test_a_shipped_config_named_with_configfile_plans_its_own_jobs(
    tmp_path, configfile, evaluate, convert
):
    workdir = with_configs(tmp_path)
    counts = rules_of(planned_jobs(workdir, "--configfile", configfile))
    assert counts == {
        "convert": convert,
        "evaluate": evaluate,
        "merge": 1,
        "merge_all": 1,
        "compare": 1,
        "rankings": 1,
        "figures": 1,
        "all": 1,
    }


@pytest.mark.realdata
def test_the_hitl_study_plans_exactly_its_120_evaluations(tmp_path):
    shared_file("commit_guru_dataset/cut2years/0_brackets.arff")  # skips without the data
    workdir = with_configs(tmp_path)
    (tmp_path / "shared").symlink_to(SHARED_DATASETS.parent.resolve())  # ../shared beside it
    counts = rules_of(planned_jobs(workdir, "--configfile", "config/hitl-rq1.yaml"))
    # 8 projects x 1 learner x 1 seed x (7 x 2 HITL windows + ideal)
    assert counts["evaluate"] == 8 * 1 * 1 * 15 == 120
    assert counts["convert"] == 8 and counts["merge"] == 8 and counts["figures"] == 8
    assert counts["rankings"] == 1
    counts = rules_of(planned_jobs(workdir, "--configfile", "config/hitl-rq3.yaml"))
    # 8 projects x (ideal + 7 hitl with P = N = W + 7 verification)
    assert counts["evaluate"] == 8 * 15 == 120
    assert counts["compare"] == 8 and counts["rankings"] == 1


ONE_LEARNER = {
    "datasets": {"mine": {"generate": {"rows": 300, "seed": 1}}},
    "learners": {"nb": {"class": "river.naive_bayes.GaussianNB"}},
    "policies": {"ideal": {"preset": "ideal"}, "delay_7d": {"preset": "delay", "window": "7d"}},
    "seeds": [1],
}


def test_a_user_config_runs_only_its_own_learners_and_policies(tmp_path):
    workdir = with_configs(tmp_path)
    (workdir / "my.yaml").write_text(yaml.safe_dump(ONE_LEARNER))
    jobs = planned_jobs(workdir, "--configfile", "my.yaml")
    evaluations = {job for job in jobs if job[0] == "evaluate"}
    assert evaluations == {
        evaluate_job("nb", "ideal", dataset="mine"),
        evaluate_job("nb", "delay_7d", dataset="mine"),
    }
    assert rules_of(jobs)["convert"] == 1  # the user's dataset only, not the default one


def test_config_values_on_the_command_line_are_read_as_a_file_reads_them(tmp_path):
    """Snakemake gives --config 'seeds=[1,2]' as ['1', '2']: the seeds 1 and 2."""
    workdir = with_configs(tmp_path)
    (workdir / "my.yaml").write_text(yaml.safe_dump(ONE_LEARNER))
    args = ("--configfile", "my.yaml", "--config", "seeds=[1,2]", "validation={folds: 3}")
    jobs = planned_jobs(workdir, *args)
    seeds = {dict(w)["seed"] for rule, w in jobs if rule == "evaluate"}
    assert seeds == {"1", "2"}


def user_study(tmp_path: Path, **changes) -> Path:
    """A copy of the workflow (config.yaml: the default) with a raw CSV, a Parquet table that is
    not a stream, and the user's study my.yaml (ONE_LEARNER with ``changes``)."""
    workdir = with_configs(tmp_path)
    write_commit_guru_csv(workdir / "data" / "raw.csv", rows=50)
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(
        pa.table({"learner": ["nb"], "gmean": [0.5]}), workdir / "data" / "table.parquet"
    )
    (workdir / "my.yaml").write_text(yaml.safe_dump({**ONE_LEARNER, **changes}))
    return workdir


MISTAKES = [
    (
        {"learners": {"x": {"class": "river.tree.NoSuchTree"}}},
        "key learners.x.class: unknown learner 'river.tree.NoSuchTree'",
    ),
    (
        {"learners": {"nb": {"class": "river.naive_bayes.GaussianNB", "params": {"alpha": 1}}}},
        "key learners.nb.params.alpha: river.naive_bayes.GaussianNB has no parameter 'alpha'",
    ),
    (
        {"learners": {"arf": {"class": "forest.ARFClassifier", "params": {"n_models": "x"}}}},
        "key learners.arf.params.n_models: forest.ARFClassifier: n_models='x' has the wrong type",
    ),
    (
        {"datasets": {"d": {"path": "data/raw.csv", "preset": "commitguru"}}},
        "key datasets.d.preset: unknown preset 'commitguru' (expected one of commit-guru, spdisc)",
    ),
    (
        {"datasets": {"d": {"path": "data/missing.csv", "preset": "commit-guru"}}},
        "key datasets.d.path: no such file 'data/missing.csv'",
    ),
    (
        {"datasets": {"d": {"path": "data/table.parquet"}}},
        "key datasets.d.path: data/table.parquet: not a delaycv stream",
    ),
    ({"tests": {"metrics": ["gmean", "recal_1"]}}, "key tests.metrics.1: unknown metric 'recal_1'"),
    ({"figures": {"metric": "g-mean"}}, "key figures.metric: unknown metric 'g-mean'"),
]


def test_every_config_mistake_fails_the_dry_run_at_once_naming_file_line_and_key(tmp_path):
    changes: dict = {"learners": {}, "datasets": {}}
    for change, _ in MISTAKES:
        for section, value in change.items():
            if section in changes:
                changes[section].update(value)
            else:
                changes[section] = value
    changes["datasets"] = {  # one dataset each (a name of its own), and the study's own one
        **ONE_LEARNER["datasets"],
        "d1": {"path": "data/raw.csv", "preset": "commitguru"},
        "d2": {"path": "data/missing.csv", "preset": "commit-guru"},
        "d3": {"path": "data/table.parquet"},
    }
    workdir = user_study(tmp_path, **changes)
    proc = run(workdir, "--dry-run", "--cores", "1", "--configfile", "my.yaml", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    lines = re.findall(r"^invalid configuration: my\.yaml:(\d+):(\d+): (key .*)$", out, re.M)
    found = [text for _, _, text in lines]
    names = iter(["d1", "d2", "d3"])  # the datasets' mistakes, in MISTAKES' order
    for _, message in MISTAKES:
        if message.startswith("key datasets.d."):
            message = message.replace("datasets.d.", f"datasets.{next(names)}.")
        assert any(text.startswith(message) for text in found), (message, out[-3000:])
    assert len(found) == len(MISTAKES)
    positions = [(int(line), int(column)) for line, column, _ in lines]
    assert positions == sorted(positions)  # in file order
    assert "Job stats" not in out and "config.yaml" not in out


YAML_MISTAKES = [
    (
        "datasets:\n  mine: {generate: {rows: 300, seed: 1}}\n"
        "  mine: {generate: {rows: 900, seed: 2}}\n",
        "{file}:3:3: key datasets.mine: duplicate key (first given at line 2, column 3) "
        "(expected each key once in a mapping)",
    ),
    (
        "datasets:\n  mine: {generate: {rows: 300}\n",
        "{file}:3:1: not valid YAML: expected ',' or '}', but got '<stream end>' "
        "(while parsing a flow mapping at line 2, column 9)",
    ),
    (
        "# to do\n",
        "{file}: the file is empty (expected a mapping with datasets, learners, policies)",
    ),
]


@pytest.mark.parametrize("text, message", YAML_MISTAKES, ids=["duplicate", "syntax", "empty"])
def test_a_default_config_that_is_bad_yaml_names_its_file_and_line(tmp_path, text, message):
    workdir = copy_workflow(tmp_path / "wf", ONE_LEARNER)  # with this checkout's delaycv
    (workdir / "config.yaml").write_text(text)
    proc = run(workdir, "--dry-run", "--cores", "1", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "invalid configuration: " + message.replace("{file}", "config.yaml") in out, out[-3000:]


def test_a_configfile_with_a_duplicate_key_names_its_file_line_and_key(tmp_path):
    workdir = copy_workflow(tmp_path / "wf", ONE_LEARNER)  # with this checkout's delaycv
    (workdir / "my.yaml").write_text(yaml.safe_dump(ONE_LEARNER, sort_keys=False) + "seeds: [2]\n")
    proc = run(workdir, "--dry-run", "--cores", "1", "--configfile", "my.yaml", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert (
        "invalid configuration: my.yaml:17:1: key seeds: duplicate key (first given at line 15, "
        "column 1)"
    ) in out, out[-3000:]


@pytest.mark.parametrize("text", ["datasets:\n  mine: {generate: {rows: 300}\n", "\n"])
def test_a_configfile_that_snakemake_cannot_read_stops_it_before_the_workflow(tmp_path, text):
    """Snakemake reads --configfile before the workflow loads: its own message, no file named
    (docs/workflow.md says so; the default config.yaml gets delaycv's message, above)."""
    workdir = copy_workflow(tmp_path / "wf", ONE_LEARNER)  # with this checkout's delaycv
    (workdir / "my.yaml").write_text(text)
    proc = run(workdir, "--dry-run", "--cores", "1", "--configfile", "my.yaml", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Config file" in out, out[-3000:]
    assert "Job stats" not in out


def test_a_policy_name_that_disagrees_with_its_spec_fails_the_dry_run(tmp_path):
    policies = {"hitl_7d_90d": {"preset": "hitl", "pos_window": "1d", "neg_window": "15d"}}
    workdir = copy_workflow(tmp_path / "wf", {**ONE_LEARNER, "policies": policies})
    proc = run(workdir, "--dry-run", "--cores", "1", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert re.search(
        r"invalid configuration: config\.yaml:\d+:\d+: key policies\.hitl_7d_90d: the policy "
        r"named hitl_7d_90d is hitl P = 1d, N = 15d, but its name says hitl P = 7d, N = 90d",
        out,
    ), out[-3000:]


def test_a_config_mistake_stops_a_run_before_any_job(tmp_path):
    workdir = user_study(tmp_path, figures={"metric": "gmeans"})
    proc = run(workdir, "--cores", "1", "--configfile", "my.yaml", check=False)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert re.search(r"invalid configuration: my\.yaml:\d+:\d+: key figures\.metric", out), out
    assert not any((workdir / d).exists() for d in ("logs", "results/runs", "resources/generated"))


def test_a_converted_stream_is_a_dataset_used_as_it_is(tmp_path):
    workdir = with_configs(tmp_path)
    mine = write_commit_guru_csv(workdir / "data" / "mine.csv", rows=50)
    write_commit_guru_csv(workdir / "data" / "raw.csv", rows=50, seed=4)
    subprocess.run(
        [str(BIN / "delaycv"), "convert", str(mine), "resources/mine.parquet"]
        + ["--preset", "commit-guru", "--quiet"],
        cwd=workdir,
        env=env(),
        check=True,
    )
    study = {
        **ONE_LEARNER,
        "datasets": {
            "mine": {"path": "resources/mine.parquet"},
            "raw": {"path": "data/raw.csv", "preset": "commit-guru"},
        },
    }
    (workdir / "my.yaml").write_text(yaml.safe_dump(study))
    # the same raw file under a second name: one stream counted twice, refused before any job
    (workdir / "twice.yaml").write_text(
        yaml.safe_dump(
            {
                **study,
                "datasets": {
                    **study["datasets"],
                    "again": {"path": "data/mine.csv", "preset": "commit-guru"},
                },
            }
        )
    )
    refused = run(workdir, "--dry-run", "--cores", "1", "--configfile", "twice.yaml", check=False)
    assert refused.returncode != 0
    said = refused.stdout + refused.stderr
    assert "the same stream as dataset" in said
    assert "datasets.mine" in said and "datasets.again" in said
    proc = run(workdir, "--dry-run", "--cores", "1", "--configfile", "my.yaml")
    jobs = planned_jobs(workdir, "--configfile", "my.yaml")
    assert [dict(w)["dataset"] for rule, w in jobs if rule == "convert"] == ["raw"]
    assert rules_of(jobs)["evaluate"] == 4
    # the evaluations of `mine` read the user's file itself
    inputs, rule = set(), None
    for line in proc.stdout.splitlines():
        if line.startswith(("rule ", "localrule ")):
            rule = line.split()[1].rstrip(":")
        elif rule == "evaluate" and line.strip().startswith("input:"):
            inputs.add(line.split(":", 1)[1].strip())
    assert len(inputs) == 2 and "resources/mine.parquet" in inputs
    (converted,) = inputs - {"resources/mine.parquet"}
    assert is_stream_of(converted, "raw"), converted


def test_memory_and_time_grow_with_the_attempt_and_no_profile_fixes_them():
    """A retry after a kill must get more: rules scale by attempt, profiles do not override that.

    (The real retry on SLURM, killed for memory then completed: tests/workflow/test_slurm.py.)
    """
    rules = "".join(p.read_text() for p in (REPO / "workflow" / "rules").glob("*.smk"))
    values = re.findall(r"^\s+(mem_mb|runtime)=(.*),$", rules, flags=re.M)
    # evaluate, compare, figures, rankings
    assert {name for name, _ in values} == {"mem_mb", "runtime"} and len(values) == 10
    for name, value in values:
        assert value.startswith("by_attempt("), f"{name}={value}"
    for profile in ("default", "slurm"):
        config = yaml.safe_load((REPO / "profiles" / profile / "config.yaml").read_text())
        for rule, resources in (config.get("set-resources") or {}).items():
            for name in ("mem_mb", "runtime"):
                value = resources.get(name)
                assert value is None or "attempt" in str(value), (profile, rule, name, value)


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
        ("tests", {"resamples": 999}, False),
        ("tests", {"checkpoints": {"fractions": [0.5, 1.0]}}, True),
        ("contrasts", {"reference": "hitl_7d_90d"}, False),
    ],
)
def test_changing_the_tests_settings_reruns_only_tests_and_figures(done, section, change, rankings):
    """... and the rankings when they use the setting (the checkpoints, not the resamples)."""
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


STOPPED_SCRIPT = """
import os, signal, sys
from delaycv.common.atomic import atomic_dir
from delaycv.common.interrupt import terminate_on_sigterm

terminate_on_sigterm()
with atomic_dir(sys.argv[1]) as tmp:
    (tmp / "part.parquet").write_text("half")
    os.kill(os.getpid(), signal.SIGTERM)  # as Snakemake or SLURM stops a job
    signal.pause()
"""


def test_a_rule_script_stopped_by_sigterm_leaves_no_temporary(tmp_path):
    """Issue 22: every rule script turns SIGTERM into an exception (the temporaries beside its
    outputs are removed) and the job ends with status 143, without a traceback: each runs in the
    frame of delaycv.study.job.stage_job, which does it first (tests/workflow/test_job_frame.py)."""
    for script in sorted((REPO / "scripts").glob("*.py")):
        assert "\nwith stage_job(snakemake, " in script.read_text(), script.name
    done = subprocess.run(
        [sys.executable, "-c", STOPPED_SCRIPT, str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (143, "")
    assert list(tmp_path.iterdir()) == []


def test_a_virtualenv_under_a_path_with_a_space_is_refused_at_once(tmp_path):
    """Issue 22: from a checkout whose path holds a space, `make run` failed at the first job
    (exit 127: Snakemake writes the interpreter's path unquoted into a rule script's command).
    The Makefile refuses its virtualenv there before creating anything; the Snakefile refuses an
    interpreter there before any job."""
    checkout = tmp_path / "with space" / "delaycv"
    checkout.mkdir(parents=True)
    shutil.copy2(REPO / "Makefile", checkout / "Makefile")
    # a make of its own: under `make test` the outer make's variables would make it print
    # "Entering directory" lines
    clean = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    done = subprocess.run(
        ["make", "-n", "run"], cwd=checkout, capture_output=True, text=True, timeout=60, env=clean
    )
    assert done.returncode == 2 and done.stdout == ""
    assert f'"{checkout}/.venv" contains a space' in done.stderr
    assert "exit 127" in done.stderr and "VENV=/path/without/spaces/.venv" in done.stderr
    assert sorted(p.name for p in checkout.iterdir()) == ["Makefile"]

    workdir = copy_workflow(tmp_path / "wf", SMALL)
    spaced = str(tmp_path / "with space" / "bin" / "python")
    code = f"import sys; sys.executable = {spaced!r}; from snakemake.cli import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", code, "--cores", "1", "-n"],
        cwd=workdir,
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert f"the Python interpreter's path {spaced!r} contains a space" in done.stdout + done.stderr


def test_a_checkout_under_a_path_with_a_space_runs(tmp_path):
    """The checkout itself may lie under a path with a space (the interpreter elsewhere): its
    first job runs."""
    workdir = copy_workflow(tmp_path / "with space" / "wf", SMALL)
    (target,) = [o for o in missing_outputs(workdir) if o.startswith("resources/")]
    run(workdir, "--cores", "1", target)
    assert (workdir / target).is_file()


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


def test_ctrl_c_in_a_terminal_stops_the_jobs_with_one_line_each(tmp_path):
    """Ctrl-C in the terminal that runs ``snakemake`` reaches its whole foreground process group,
    the running rule scripts too: each job's log ends with one line saying so (no traceback),
    and no run directory is left half written."""
    import pty
    import select
    import time

    config = read_config(SMALL)
    config["datasets"] = {"tiny": {"generate": {"rows": 60000, "seed": 3}}}
    workdir = copy_workflow(tmp_path / "wf", config)
    pid, fd = pty.fork()
    if pid == 0:  # the child: snakemake with the pseudo-terminal as its terminal
        for signum in (signal.SIGINT, signal.SIGTERM):  # (a background test run ignores them)
            signal.signal(signum, signal.SIG_DFL)
        os.chdir(workdir)
        cmd = [str(BIN / "snakemake"), "--cores", "2", "--profile", "profiles/default"]
        os.execve(cmd[0], cmd, env())
    out, pressed, started = b"", False, None
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if select.select([fd], [], [], 0.2)[0]:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        if started is None and b"rule evaluate" in out:
            started = time.monotonic()
        if not pressed and started is not None and time.monotonic() - started > 3:
            os.write(fd, b"\x03")  # the terminal's Ctrl-C
            pressed = True
    _, status = os.waitpid(pid, 0)
    assert pressed and os.waitstatus_to_exitcode(status) != 0, out.decode(errors="replace")
    logs = [p.read_text() for p in (workdir / "logs").rglob("*.log") if "runs" in str(p)]
    stopped = [text for text in logs if "interrupted (SIGINT)" in text]
    assert stopped, logs
    for text in stopped:
        assert "Traceback" not in text, text
        assert (
            text.strip()
            .splitlines()[-1]
            .endswith("interrupted (SIGINT): its outputs are not written")
        )
    for run_dir in (workdir / "results" / "runs").glob("*/*/seed*/*"):
        names = {p.name for p in run_dir.iterdir()}
        assert names == {"folds.parquet", "summary.parquet", "run.json"}, (run_dir, names)
    assert not list((workdir / "results").rglob("*.tmp*"))
