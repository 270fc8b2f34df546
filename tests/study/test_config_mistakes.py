"""Mistakes in a study config: every mistake at once with its file:line:column, one stream under
two names, folders, --config values, run directories of a shared ``runs`` folder keyed by their
settings."""

from __future__ import annotations

import copy
import re
import shutil
from pathlib import Path

import pytest
import yaml

from delaycv.cli import main
from delaycv.common.errors import ConfigError
from delaycv.study.folders import NAME_MAX_BYTES
from delaycv.study.loading import load_config, load_study
from delaycv.study.mistakes import ConfigErrors
from delaycv.study.runs import run_key
from delaycv.study.yaml_file import read_yaml_marks
from tests.support.paths import REPO

SMALL = yaml.safe_load((REPO / "config" / "test-small.yaml").read_text())


@pytest.fixture
def work(tmp_path, monkeypatch) -> Path:
    """A working directory with two raw CSV files of the same content and a canonical stream."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DELAYCV_PURE_PYTHON", raising=False)
    (tmp_path / "raw.csv").write_text("t,y,f\n1,0,0.5\n2,1,0.25\n")
    shutil.copy(tmp_path / "raw.csv", tmp_path / "copy.csv")
    return tmp_path


def study(**changes) -> dict:
    config = copy.deepcopy(SMALL)
    config.update(changes)
    return config


def mistakes(path: Path, *, cwd: Path | None = None, learners: bool = False, **options) -> list:
    """The lines of the error of loading the study file ``path``."""
    with pytest.raises(ConfigError) as info:
        load_study([path], cwd=cwd, learners=learners, **options)
    return str(info.value).splitlines()


RAW = {"mapping": {"time": "t", "label": "y", "positive": 1}}

FOUR = """\
datasets:
  d: {generate: {rows: 300}}
learners:
  nb: {class: naive_bayes.GaussianNB, params: 3}
policies:
  ideal: {}
  slow: {preset: delay, window: soon}
seeds: [1, x]
validation: {folds: 0}
"""


# --------------------------------------------------------------------------- item 7


def test_four_independent_mistakes_are_reported_at_once_in_file_order(work):
    (work / "my.yaml").write_text(FOUR)
    lines = mistakes(work / "my.yaml", cwd=work)
    assert lines == [
        "my.yaml:4:39: key learners.nb.params: 3 is an integer (expected a mapping of the "
        "class's parameter names to values)",
        "my.yaml:7:25: key policies.slow.window: 'soon' is not valid (expected a waiting time "
        "with its unit: 7d, 12h, 30m, 3600s, 2w or 500i (instances); 0 alone is no wait (a "
        "number without a unit is an error))",
        "my.yaml:8:12: key seeds.1: 'x' is a string (expected a seed: an integer from 0 to "
        "2**63 - 1 = 9223372036854775807)",
        "my.yaml:9:14: key validation.folds: folds 0 is too small (expected an integer from 1 to "
        "10,000 (each fold is a learner and its state held in memory))",
    ]


def test_check_prints_every_mistake_on_its_own_line_and_exits_2(work, capsys):
    (work / "my.yaml").write_text(FOUR)
    assert main(["check", "my.yaml"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 4 and all(line.startswith("delaycv: error: my.yaml:") for line in err)
    assert [
        re.match(r"delaycv: error: my\.yaml:(\d+):\d+: key (\S+):", e).groups() for e in err
    ] == [
        ("4", "learners.nb.params"),
        ("7", "policies.slow.window"),
        ("8", "seeds.1"),
        ("9", "validation.folds"),
    ]


def test_mistakes_of_learners_policies_datasets_and_metrics_are_found_together(work):
    config = study(
        datasets={
            "a": {"path": "raw.csv", "preset": "commit-gru"},
            "b": {"path": "nope.csv", **RAW},
            "g": {"generate": {"rows": 300, "rowz": 5}},
        },
        learners={"x": {"class": "tree.NoSuchTree"}, "nb": {"class": "naive_bayes.GaussianNB"}},
        policies={"hitl_7d_90d": {"preset": "hitl", "pos_window": "1d", "neg_window": "15d"}},
        tests={"metrics": ["gmean", "gmeen"]},
        figures={"metric": "recall1"},
    )
    path = work / "my.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    lines = mistakes(path, cwd=work, learners=True)
    keys = [re.match(r"my\.yaml:\d+:\d+: key (\S+):", line)[1] for line in lines]
    assert keys == [
        "datasets.a.preset",
        "datasets.b.path",
        "datasets.g.generate.rowz",
        "learners.x.class",
        "policies.hitl_7d_90d",
        "tests.metrics.1",
        "figures.metric",
    ], lines
    numbers = [tuple(map(int, re.match(r"my\.yaml:(\d+):(\d+)", x).groups())) for x in lines]
    assert numbers == sorted(numbers)  # file order


def test_misspelt_keys_values_classes_and_parameters_get_the_closest_name(work):
    config = study(
        learners={
            "a": {"class": "tree.HoefdingTreeClassifier"},
            "b": {"class": "tree.HoeffdingTreeClassifier", "params": {"grace_periode": 50}},
            "c": {"class": "naive_bayes.GaussianNB", "parms": {}},
        },
        estimator={"kind": "fadding"},
    )
    config["polices"] = config.pop("policies")
    path = work / "typo.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    lines = mistakes(path, cwd=work, learners=True)
    said = {re.match(r"typo\.yaml(?::\d+:\d+)?: key (\S+):", line)[1]: line for line in lines}
    hints = {
        "learners.a.class": "(did you mean HoeffdingTreeClassifier?)",
        "learners.b.params.grace_periode": "(did you mean grace_period?)",
        "learners.c.parms": "unknown key (did you mean params?)",
        "polices": "unknown key (did you mean policies?)",
        "estimator.kind": "'fadding' is not allowed (did you mean fading?)",
    }
    for key, hint in hints.items():
        assert hint in said[key], (key, lines)
    # no hint where nothing is close
    config = study(learners={"a": {"class": "naive_bayes.GaussianNB", "zzz": 1}})
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    (line,) = mistakes(path, cwd=work)
    assert "key learners.a.zzz: unknown key (expected one of" in line


def test_a_mistake_does_not_bring_others_that_follow_from_it(work):
    """A policy, learner or dataset the schema refuses is left out of the later checks: no
    'no policy named' for the contrasts' reference, no 'no learner named' for the figures."""
    config = study(
        policies={"mine": {"preset": "delay", "window": 7}},
        policy_grids={},
        contrasts={"reference": "mine"},
        learners={"nb": {"class": "naive_bayes.GaussianNB", "params": 3}},
        figures={"learner": "nb", "metric": "popt"},
        datasets={"d": {"generate": {"rows": "many"}}},
    )
    path = work / "my.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    lines = mistakes(path, cwd=work)
    assert [re.search(r" key (\S+):", line)[1] for line in lines] == [
        "datasets.d.generate.rows",
        "learners.nb.params",
        "policies.mine.window",
    ], lines


@pytest.mark.parametrize(
    "text, message",
    [
        ("- a\n- b\n", "my.yaml:1:1: the config is a list (expected a mapping with datasets"),
        ("just text\n", "my.yaml:1:1: the config is a str (expected a mapping with datasets"),
        ("", "my.yaml: the file is empty (expected a mapping with datasets"),
        ("datasets: {d: [}\n", "my.yaml:1:16: not valid YAML: "),
    ],
    ids=["list", "text", "empty", "syntax"],
)
def test_a_file_that_is_no_config_is_one_mistake_alone(work, text, message):
    (work / "my.yaml").write_text(text)
    lines = mistakes(work / "my.yaml")
    assert len(lines) == 1 and lines[0].startswith(message), lines


def test_a_binary_config_file_is_named(work):
    (work / "my.yaml").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    assert mistakes(work / "my.yaml") == [
        "my.yaml: a binary file, not text (expected a YAML config file (UTF-8 text))"
    ]


def test_two_unreadable_files_and_a_duplicate_key_are_all_reported(work):
    (work / "a.yaml").write_text("seeds: [1]\nseeds: [2]\n")
    (work / "b.yaml").write_text("datasets: {d: [}\n")
    with pytest.raises(ConfigErrors) as info:
        load_study([work / "a.yaml", work / "b.yaml"])
    lines = str(info.value).splitlines()
    assert lines[0] == (
        "a.yaml:2:1: key seeds: duplicate key (first given at line 1, column 1) (expected each "
        "key once in a mapping)"
    )
    assert lines[1].startswith("b.yaml:1:16: not valid YAML") and len(lines) == 2


def test_duplicate_keys_come_with_the_other_mistakes(work):
    config = yaml.safe_dump(study(validation={"folds": 0}), sort_keys=False)
    (work / "my.yaml").write_text(config + "seeds: [3]\n")
    lines = mistakes(work / "my.yaml")
    assert [re.search(r" key (\S+):", line)[1] for line in lines] == ["validation.folds", "seeds"]
    assert "duplicate key (first given at line" in lines[1]


def test_the_marks_of_every_key(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("a:\n  b: [1, {c: 2}]\n  'd.e': 3\nbase: &x {f: 4}\ng:\n  <<: *x\n  h: 5\n")
    content, marks = read_yaml_marks(path)
    assert content["g"] == {"f": 4, "h": 5}
    assert marks.find(["a", "b", "1", "c"]) == (
        4,
        marks.children["a"].children["b"].children["1"].children["c"],
    )
    found = {k: (m.line, m.column) for k, m in marks.children["a"].children.items()}
    assert found == {"b": (2, 3), "d.e": (3, 3)}
    assert marks.find(["a", "d", "e"])[0] == 3  # names may hold dots
    g = marks.children["g"].children
    assert (g["h"].line, g["h"].column) == (7, 3) and (g["f"].line, g["f"].column) == (4, 11)


def test_an_invalid_pure_python_switch_is_found_by_check(work, monkeypatch):
    path = work / "my.yaml"
    path.write_text(yaml.safe_dump(study()))
    monkeypatch.setenv("DELAYCV_PURE_PYTHON", "false")
    assert mistakes(path, cwd=work) == [
        "environment variable DELAYCV_PURE_PYTHON: 'false' (expected 1 (the Python loops), 0 or "
        "unset (the compiled loops where they are built))"
    ]
    for good in ("1", "0", ""):
        monkeypatch.setenv("DELAYCV_PURE_PYTHON", good)
        load_study([path], cwd=work, learners=False)


def test_a_dataset_path_that_is_a_folder_is_refused(work):
    (work / "data").mkdir()
    path = work / "my.yaml"
    path.write_text(yaml.safe_dump(study(datasets={"d": {"path": "data", **RAW}})))
    (line,) = mistakes(path, cwd=work)
    assert re.fullmatch(
        r"my\.yaml:\d+:\d+: key datasets\.d\.path: a folder, not a file: 'data' .*", line
    )


@pytest.mark.parametrize("section", ["datasets", "learners", "policies"])
def test_a_name_too_long_for_the_file_system_is_refused(work, section):
    long = "n" * (NAME_MAX_BYTES + 1)
    entry = {
        "datasets": {"generate": {"rows": 300}},
        "learners": {"class": "naive_bayes.GaussianNB"},
        "policies": {"preset": "ideal"},
    }[section]
    config = study(**{section: {**SMALL[section], long: entry}})
    path = work / "my.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    (line,) = mistakes(path, cwd=work)
    assert (
        f": key {section}.{long}: the name 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...' is 101 "
        in line
    )
    assert line.endswith(f"(expected a name of at most {NAME_MAX_BYTES} bytes)"), line
    config[section][long[:-1]] = config[section].pop(long)  # 100 bytes: accepted
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    load_study([path], cwd=work, learners=False)


def test_a_path_longer_than_path_max_is_refused(work):
    deep = "/".join(["d" * 200] * 21)  # about 4,200 bytes
    path = work / "my.yaml"
    path.write_text(yaml.safe_dump(study(results=f"results/{deep}")))
    (line,) = mistakes(path, cwd=work)  # runs (<results>/runs) is not reported again
    assert re.match(r"my\.yaml:\d+:1: key results: the longest file path the workflow would ", line)
    assert f"'results/{'d' * 52}...' is " in line and line.endswith(
        "(expected paths of at most 4096 bytes: a shorter folder, shorter names or a working "
        "directory nearer the root)"
    )
    path.write_text(yaml.safe_dump(study(results="results/s1", runs=f"runs/{deep}")))
    (line,) = mistakes(path, cwd=work)
    assert re.match(r"my\.yaml:\d+:1: key runs: the longest file path ", line), line


# --------------------------------------------------------------------------- item 4


@pytest.mark.parametrize(
    "datasets, key, words",
    [
        (
            {"a": {"path": "raw.csv", **RAW}, "b": {"path": "./raw.csv", **RAW}},
            "datasets.b.path",
            "the same file as dataset 'a' ('./raw.csv'), with the same conversion options",
        ),
        (
            {"a": {"path": "raw.csv", **RAW}, "b": {"path": "copy.csv", **RAW, "effort": None}},
            "datasets.b.path",
            "the same content as the file of dataset 'a', 'raw.csv' (the same text, whatever its "
            "line endings)",
        ),
        (
            {"a": {"generate": {}}, "b": {"generate": {"rows": 6000, "seed": 1}, "effort": None}},
            "datasets.b.generate",
            "the same generated stream as dataset 'a' (the same generator parameters",
        ),
        (
            {"a": {"generate": {"rows": 600}}, "b": {"generate": {"rows": 600, "days": 100}}},
            "datasets.b.generate",
            "the same generated stream as dataset 'a'",
        ),
        (
            {"a": {"path": "s.parquet"}, "b": {"path": "t.parquet"}},
            "datasets.b.path",
            "the same content as the file of dataset 'a', 's.parquet'",
        ),
    ],
    ids=["same-path", "same-content", "generated-defaults", "generated-days", "parquet"],
)
def test_one_stream_under_two_names_is_refused_naming_both(work, datasets, key, words):
    from delaycv.data.stream_file import write_stream
    from delaycv.data.synthetic import generate_stream

    write_stream(generate_stream(rows=30, seed=1), work / "s.parquet")
    shutil.copy(work / "s.parquet", work / "t.parquet")
    path = work / "my.yaml"
    path.write_text(yaml.safe_dump(study(datasets=datasets), sort_keys=False))
    (line,) = mistakes(path, cwd=work)
    assert f": key {key}: {words}" in line, line
    assert line.endswith(
        "(expected each stream under one name (two names count one stream twice in the "
        "rankings): remove datasets.b or datasets.a)"
    ), line


@pytest.mark.parametrize(
    "datasets",
    [
        {
            "a": {"path": "raw.csv", **RAW},
            "b": {"path": "copy.csv", "mapping": {**RAW["mapping"], "positive": 0}},
        },
        {"a": {"path": "raw.csv", **RAW}, "b": {"path": "copy.csv", **RAW, "sort": True}},
        {"a": {"generate": {"rows": 300}}, "b": {"generate": {"rows": 300, "seed": 2}}},
        {"a": {"generate": {"rows": 300}}, "b": {"generate": {"rows": 301}}},
    ],
    ids=["other-label", "other-option", "other-seed", "other-rows"],
)
def test_other_streams_of_one_file_or_generator_are_two_datasets(work, datasets):
    path = work / "my.yaml"
    path.write_text(yaml.safe_dump(study(datasets=datasets), sort_keys=False))
    assert list(load_study([path], cwd=work, learners=False)["datasets"]) == ["a", "b"]


# --------------------------------------------------------------------------- item 5


@pytest.mark.parametrize(
    "folders, key, words",
    [
        ({"results": "~/study"}, "results", "'~/study' starts with ~, which is not expanded"),
        ({"runs": "~"}, "runs", "it would make a folder named '~' (expected the path written out"),
        ({"results": "."}, "results", "'.' is the working directory itself"),
        ({"results": "./"}, "results", "'.' is the working directory itself"),
        ({"runs": "."}, "runs", "'.' is the working directory itself"),
        (
            {"results": "delaycv"},
            "results",
            "'delaycv' is inside delaycv/, a folder of the workflow's own",
        ),
        ({"results": "workflow/out"}, "results", "inside workflow/"),
        ({"results": "config/s1"}, "results", "inside config/"),
        ({"runs": "scripts/runs"}, "runs", "inside scripts/"),
        ({"runs": "tests"}, "runs", "inside tests/"),
        ({"results": "logs/s1"}, "results", "inside logs/"),
        ({"results": "resources/s1"}, "results", "inside resources/"),
        ({"results": "afile"}, "results", "'afile' is a file, not a folder"),
        ({"runs": "afile/runs"}, "runs", "'afile' of 'afile/runs' is a file, not a folder"),
        (
            {"results": "r/s1", "runs": "r/s1/merged"},
            "runs",
            "inside r/s1/merged, an output of the study",
        ),
        ({"results": "r/s1", "runs": "r/s1/tests/x"}, "runs", "inside r/s1/tests, an output"),
        ({"results": "r/s1", "runs": "r/s1/figures"}, "runs", "an output of the study"),
        ({"results": "r/s1", "runs": "r/s1/rankings"}, "runs", "an output of the study"),
        ({"results": "r/s1", "runs": "r/s1/merged.parquet"}, "runs", "an output of the study"),
        (
            {"results": "r/s1", "runs": "r"},
            "runs",
            "the study's tables (r/s1) would be among the run directories (r)",
        ),
        ({"results": "r/s1", "runs": "r/s1"}, "runs", "would share one folder"),
    ],
)
def test_folders_that_would_go_wrong_are_refused_naming_the_key(work, folders, key, words):
    (work / "afile").write_text("not a folder\n")
    path = work / "my.yaml"
    path.write_text(yaml.safe_dump(study(**folders), sort_keys=False))
    (line,) = mistakes(path, cwd=work)
    assert re.match(rf"my\.yaml:\d+:1: key {key}: ", line), line
    assert words in line, line


@pytest.mark.parametrize(
    "folders",
    [
        {"results": "results/s1", "runs": "results/runs"},
        {"results": "results/s1", "runs": "results/s1/runs"},
        {"results": "out", "runs": "shared/runs"},
        {"results": "results/s1/"},
        {"results": "results/tilde~"},
    ],
)
def test_ordinary_folders_are_accepted(work, folders):
    path = work / "my.yaml"
    path.write_text(yaml.safe_dump(study(**folders), sort_keys=False))
    load_study([path], cwd=work, learners=False)


# --------------------------------------------------------------------------- item 9


def test_config_values_are_read_as_a_file_would_read_them(work):
    """Snakemake's --config gives the text of every value inside a list or mapping."""
    path = work / "my.yaml"
    path.write_text(yaml.safe_dump(study()))
    overrides = {
        "seeds": ["1", "2"],
        "validation": {"folds": "5", "fixed_split": "true", "scheme": "bootstrap"},
        "evaluation": {"threshold": "0.25", "flush": "yes"},
        "tests": {"references": ["observed", "true"], "checkpoints": {"positions": ["100", "200"]}},
        "learners": {
            "ht": {
                "class": "tree.HoeffdingTreeClassifier",
                "params": {"grace_period": "50", "split_criterion": "gini"},
            }
        },
        "contrasts": {"reference": "null"},
        "figures": {"learner": "nb"},
        "results": "results/007",
        "datasets": {"tiny": {"generate": {"rows": "300", "positive_rate": "0.4"}}},
    }
    loaded = load_study([path], overrides=overrides, cwd=work)
    assert loaded["seeds"] == [1, 2]
    assert loaded["validation"]["folds"] == 5 and loaded["validation"]["fixed_split"] is True
    assert loaded["evaluation"]["threshold"] == 0.25 and loaded["evaluation"]["flush"] is True
    assert loaded["tests"]["references"] == ["observed", "true"]
    assert loaded["tests"]["checkpoints"] == {"positions": [100, 200]}
    assert loaded["learners"]["ht"]["params"] == {"grace_period": 50, "split_criterion": "gini"}
    assert loaded["contrasts"]["reference"] is None
    assert loaded["results"] == "results/007"
    assert loaded["datasets"]["tiny"]["generate"] == {"rows": 300, "seed": 3, "positive_rate": 0.4}
    # text that is no number stays text, and is refused naming --config
    with pytest.raises(ConfigError) as info:
        load_study([path], overrides={"seeds": ["1", "x"]})
    assert str(info.value) == (
        "--config: key seeds.1: 'x' is a string (expected a seed: an integer from 0 to 2**63 - "
        "1 = 9223372036854775807)"
    )


# --------------------------------------------------------------------------- shared runs


def key(config: dict, dataset="tiny", learner="nb", policy="ideal") -> str:
    return run_key(load_config(config, learners=False), dataset, learner, policy)


def test_a_run_key_changes_with_what_decides_the_runs_numbers():
    base = key(study())
    assert re.fullmatch(r"[0-9a-f]{12}", base)
    same = [
        study(tests={"resamples": 10}),
        study(figures={"dpi": 100}),
        study(results="results/other", runs="shared"),
        study(validation={"scheme": "bootstrap", "folds": SMALL["validation"]["folds"]}),
        study(seeds=[1, 2, 3]),
        study(learners={"lr": SMALL["learners"]["lr"], "nb": SMALL["learners"]["nb"]}),
    ]
    for config in same:
        assert key(config) == base
    other = [
        study(validation={**SMALL["validation"], "folds": 3}),
        study(estimator={"kind": "cumulative"}),
        study(checkpoints={"every": 7}),
        study(evaluation={"threshold": 0.3}),
        study(
            learners={
                "nb": {"class": "naive_bayes.GaussianNB", "params": {"var_smoothing": 1e-3}},
                "lr": SMALL["learners"]["lr"],
            }
        ),
        study(datasets={"tiny": {"generate": {"rows": 401}}}),
    ]
    keys = {key(config) for config in other}
    assert base not in keys and len(keys) == len(other)
    spec = {"preset": "hitl", "pos_window": "1d", "neg_window": "90d"}
    assert key(study(policies={"ideal": {}, "fast": spec}), policy="fast") != key(
        study(policies={"ideal": {}, "fast": {**spec, "pos_window": "2d"}}), policy="fast"
    )


def test_the_figures_may_show_several_metrics(tmp_path):
    """figures.metric: one name or a list (a set of figures each); each name is checked."""
    from delaycv.common.errors import ConfigError
    from delaycv.study.loading import load_study
    from delaycv.study.stage_settings import figure_metrics

    study = tmp_path / "s.yaml"
    base = (
        "datasets: {d: {generate: {rows: 300}}}\n"
        "learners: {nb: {class: river.naive_bayes.GaussianNB}}\n"
        "policies: {ideal: {preset: ideal}}\n"
        "seeds: [1]\n"
    )
    study.write_text(base + "figures: {metric: [popt, gmean]}\n")
    assert figure_metrics(load_study([str(study)], cwd=tmp_path)) == ["popt", "gmean"]
    study.write_text(base + "figures: {metric: [popt, gmeen]}\n")
    with pytest.raises(ConfigError, match=r"s.yaml:5:26: key figures.metric.1: unknown metric"):
        load_study([str(study)], cwd=tmp_path)


def test_the_corrected_reference_of_runs_scored_without_it_is_refused_or_left_out(work):
    """Runs made with ``evaluation.corrected: false`` have no corrected row: a test or figure
    asking for it is refused at its key (its tables and figures would have nothing, silently);
    the default references then leave it out."""
    off = {"corrected": False}
    (work / "asked.yaml").write_text(
        yaml.safe_dump(
            study(
                evaluation=off,
                tests={"references": ["observed", "corrected"]},
                figures={"reference": "corrected", "metric": "gmean"},
            )
        )
    )
    lines = mistakes(work / "asked.yaml")
    why = "the corrected reference, while evaluation.corrected is false: the runs are not scored"
    # (in file order: safe_dump writes figures before tests)
    assert [line.split(": ", 2)[1:] for line in lines] == [
        [
            "key figures.reference",
            f"{why} against it (expected observed or 'true', or evaluation.corrected: true)",
        ],
        [
            "key tests.references.1",
            f"{why} against it (expected observed or 'true', or evaluation.corrected: true)",
        ],
    ]
    tests = {k: v for k, v in SMALL["tests"].items() if k != "references"}  # the default
    (work / "default.yaml").write_text(yaml.safe_dump(study(evaluation=off, tests=tests)))
    assert load_study([work / "default.yaml"], learners=False)["tests"]["references"] == [
        "observed",
        "true",
    ]
    (work / "on.yaml").write_text(yaml.safe_dump(study(tests=tests)))
    assert load_study([work / "on.yaml"], learners=False)["tests"]["references"] == [
        "observed",
        "true",
        "corrected",
    ]
