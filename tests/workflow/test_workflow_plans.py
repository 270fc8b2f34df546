"""The Snakemake workflow's structure and plans: lint, the jobs each config plans (the shipped
ones, a user's, values on the command line), where a study writes, and which run directories and
streams studies share. Each test reads a dry run of a copy of the workflow."""

from __future__ import annotations

import copy
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from delaycv.study.loading import load_config
from delaycv.study.runs import run_key
from tests.support.paths import SHARED_DATASETS, shared_file
from tests.support.workflow_copy import (
    BIN,
    REPO,
    convert_commit_guru,
    copy_workflow,
    missing_outputs,
    planned_jobs,
    read_config,
    rules_of,
    run,
    touch_outputs,
    write_commit_guru_csv,
    write_config,
)
from tests.support.workflow_plans import (
    AGGREGATION,
    ALL_EVALUATE,
    ONE_LEARNER,
    SMALL,
    evaluate_job,
    is_stream_of,
    with_configs,
    without_keys,
)

# every test runs Snakemake (a dry run at least) on a copy of the workflow
pytestmark = pytest.mark.slow


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


def test_hitl_study_dag(tmp_path):
    workdir = copy_workflow(tmp_path / "wf", REPO / "config" / "hitl-rq1.yaml", library=False)
    config = read_config(workdir / "config.yaml")
    header = "".join(  # the columns of the preset: the load reads a raw file's header
        f"@attribute {column} {kind}\n"
        for column, kind in (
            ("author_date_unix_timestamp", "numeric"),
            ("fix_unix_timestamp", "numeric"),
            ("contains_bug", "{0,1}"),
            ("la", "numeric"),
            ("ld", "numeric"),
        )
    )
    for name, dataset in config["datasets"].items():  # only their headers need to be there
        raw = workdir / "raw" / f"{name}.arff"
        raw.parent.mkdir(exist_ok=True)
        # one stream each (the same content is refused)
        raw.write_text(f"% {name}\n@relation {name}\n{header}@data\n")
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


@pytest.mark.parametrize(
    "configfile, evaluate, convert",
    [
        # the default config.yaml, named or not: 1 dataset x 3 learners x 2 seeds x 5 policies
        # (ideal, verification_90d, 3 hitl windows)
        (None, 1 * 3 * 2 * 5, 1),
        ("config.yaml", 1 * 3 * 2 * 5, 1),
        ("config/test-small.yaml", 1 * 2 * 1 * 2, 1),  # 2 learners x 1 seed x 2 policies
    ],
)
def test_a_shipped_config_plans_its_own_jobs(tmp_path, configfile, evaluate, convert):
    workdir = with_configs(tmp_path)
    args = ("--configfile", configfile) if configfile else ()
    counts = rules_of(planned_jobs(workdir, *args))
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


def with_shared_data(tmp_path, probe: str) -> Path:
    """The workflow with its shipped configs, the shared datasets beside it (../shared) as the
    configs expect them; skips the test without the data (``probe``, one of its files)."""
    shared_file(probe)
    workdir = with_configs(tmp_path)
    (tmp_path / "shared").symlink_to(SHARED_DATASETS.parent.resolve())
    return workdir


@pytest.mark.realdata
def test_the_hitl_study_plans_exactly_its_120_evaluations(tmp_path):
    workdir = with_shared_data(tmp_path, "commit_guru_dataset/cut2years/0_brackets.arff")
    counts = rules_of(planned_jobs(workdir, "--configfile", "config/hitl-rq1.yaml"))
    # 8 projects x 1 learner x 1 seed x (7 x 2 HITL windows + ideal)
    assert counts["evaluate"] == 8 * 1 * 1 * 15 == 120
    assert counts["convert"] == 8 and counts["merge"] == 8 and counts["figures"] == 8
    assert counts["rankings"] == 1
    counts = rules_of(planned_jobs(workdir, "--configfile", "config/hitl-rq3.yaml"))
    # 8 projects x (ideal + 7 hitl with P = N = W + 7 verification)
    assert counts["evaluate"] == 8 * 15 == 120
    assert counts["compare"] == 8 and counts["rankings"] == 1


@pytest.mark.realdata
def test_the_spdisc_verification_study_plans_its_52_evaluations(tmp_path):
    workdir = with_shared_data(tmp_path, "spdisc-icse19-master/datasets/npm.arff")
    counts = rules_of(planned_jobs(workdir, "--configfile", "config/spdisc-verification.yaml"))
    # 13 projects x 2 learners x 1 seed x (ideal + verification 90d)
    assert counts["evaluate"] == 13 * 2 * 2 == 52
    assert counts["convert"] == 13 and counts["compare"] == 13 and counts["rankings"] == 1


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


def test_a_converted_stream_is_a_dataset_used_as_it_is(tmp_path):
    workdir = with_configs(tmp_path)
    mine = write_commit_guru_csv(workdir / "data" / "mine.csv", rows=50)
    write_commit_guru_csv(workdir / "data" / "raw.csv", rows=50, seed=4)
    convert_commit_guru(workdir, mine, "resources/mine.parquet")
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
