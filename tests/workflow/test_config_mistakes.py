"""Config mistakes stop the workflow before any job: the dry run names the file, line and key of
each (bad values, unknown names, YAML errors, duplicate keys, a policy name that disagrees with
its spec)."""

from __future__ import annotations

import re

import pytest
import yaml

from tests.support.workflow_copy import (
    copy_workflow,
    read_config,
    run,
)
from tests.support.workflow_plans import (
    ONE_LEARNER,
    SMALL,
    user_study,
)

# every test runs Snakemake (a dry run at least) on a copy of the workflow
pytestmark = pytest.mark.slow


def test_a_bad_config_stops_the_workflow_naming_the_key(tmp_path):
    config = read_config(SMALL)
    config["learners"]["nb"]["params"] = 3
    workdir = copy_workflow(tmp_path / "wf", config, library=False)
    proc = run(workdir, "--dry-run", "--cores", "1", check=False)
    assert proc.returncode != 0
    out = proc.stderr + proc.stdout
    assert re.search(r"config\.yaml:\d+:\d+: key learners\.nb\.params: 3 is an integer", out), out


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
