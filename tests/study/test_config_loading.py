"""delaycv.study.loading (and its modules): schema validation with errors naming the key, defaults, policy grids."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
import yaml

from delaycv.common.errors import ConfigError
from delaycv.study.datasets import stream_file
from delaycv.study.loading import load_config, load_study
from delaycv.study.mistakes import ConfigErrors
from delaycv.study.policy_grids import expand_policy_grid
from delaycv.study.runs import (
    Run,
    estimator_spec,
    evaluation_options,
    learner_spec,
    policy_spec,
    run_key,
)
from delaycv.study.runs import runs as study_runs
from delaycv.study.yaml_file import read_yaml
from tests.protocol.test_learner_specs import OWN_MODELS
from tests.support.paths import REPO

SMALL = yaml.safe_load((REPO / "config" / "test-small.yaml").read_text())


def with_changes(**changes) -> dict:
    config = copy.deepcopy(SMALL)
    config.update(changes)
    return config


def error_of(config: dict) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(config, name="config.yaml")
    return info.value


@pytest.mark.parametrize(
    "changes, location, words",
    [
        ({"learners": {"ht": {"class": "x", "params": 3}}}, "key learners.ht.params", "a mapping"),
        ({"learners": {"ht": {"klass": "x"}}}, "key learners.ht.klass", "one of class"),
        ({"learners": {"ht": {}}}, "key learners.ht", "exactly one of class, pipeline and moa"),
        (
            {"learners": {"p": {"pipeline": [{"class": "a"}, {"params": {}}]}}},
            "key learners.p.pipeline.1",
            "exactly one of class, pipeline and moa",
        ),
        ({"seeds": [1, "two"]}, "key seeds.1", "an integer"),
        ({"seeds": []}, "key seeds", "non-empty"),
        ({"validation": {"scheme": "boot"}}, "key validation.scheme", "bootstrap"),
        ({"validation": {"folds": 0}}, "key validation.folds", "folds 0 is too small"),
        ({"validation": {"fixed_split": "yes"}}, "key validation.fixed_split", "true or false"),
        ({"datasets": {"a b": {"path": "x.csv"}}}, "key datasets.a b", "a name matching"),
        ({"datasets": {"d": {"path": "x", "frmat": "csv"}}}, "key datasets.d.frmat", "format"),
        ({"datasets": {"d": {}}}, "key datasets.d", "exactly one of generate and path"),
        ({"datasets": {"d": {"generate": {"rows": 5}, "sort": True}}}, "key datasets.d.sort", ""),
        ({"datasets": {"d": {"path": "x.csv", "inf": "drop"}}}, "key datasets.d.inf", "missing"),
        ({"policies": {"x": {"preset": "hitl", "window": "7d"}}}, "key policies.x.window", ""),
        ({"policies": {"x": {"preset": "delay"}}}, "key policies.x.window", "window"),
        ({"policies": {"x": {"preset": "delay", "window": 7}}}, "key policies.x.window", "7d, 7h"),
        (
            {"policies": {"x": {"preset": "hitl", "pos_window": "7", "neg_window": "90d"}}},
            "key policies.x.pos_window",
            "has no unit",
        ),
        (
            {"policy_grids": {"h": {"preset": "delay", "window": ["1d", 2]}}},
            "key policy_grids.h.window",
            "2d, 2h, 2s or 2i",
        ),
        (
            {"policy_grids": {"h": {"preset": "hitl", "pos_window": ["7q"], "neg_window": ["1d"]}}},
            "key policy_grids.h.pos_window.0",
            "7d",
        ),
        (
            {"policy_grids": {"h": {"preset": "hitl", "pos_window": ["7d"]}}},
            "key policy_grids.h",
            "",
        ),
        ({"policies": {}, "policy_grids": {}}, "key policies", "at least one policy"),
        ({"estimator": {"kind": "fading", "width": 3}}, "key estimator.width", "alpha"),
        ({"tests": {"references": ["observed", "obs"]}}, "key tests.references.1", "observed"),
        ({"figures": {"learner": "nope"}}, "key figures.learner", "one of nb, lr"),
        ({"bogus": 1}, "key bogus", "one of checkpoints, contrasts, datasets"),
        ({"contrasts": {"reference": "oracle"}}, "key contrasts.reference", "ideal, hitl_7d_90d"),
        ({"contrasts": {"reference": 3}}, "key contrasts.reference", "or null"),
        ({"contrasts": {"policy": "ideal"}}, "key contrasts.policy", ""),
        ({"tests": {"checkpoints": "first"}}, "key tests.checkpoints", "{positions: [1000"),
        (
            {"tests": {"checkpoints": {"positions": [0]}}},
            "key tests.checkpoints.positions",
            "integers from 1 to",
        ),
        (
            {"tests": {"checkpoints": {"positions": [1.5]}}},
            "key tests.checkpoints.positions",
            "position 1.5",
        ),
        (
            {"tests": {"checkpoints": {"positions": [500, 500]}}},
            "key tests.checkpoints.positions",
            "duplicate value 500 (2 times)",
        ),
        (
            {"tests": {"checkpoints": {"fractions": [0]}}},
            "key tests.checkpoints.fractions",
            "(0, 1]",
        ),
        (
            {"tests": {"checkpoints": {"fractions": [1.2]}}},
            "key tests.checkpoints.fractions",
            "fraction 1.2",
        ),
        ({"tests": {"checkpoints": {"fractions": []}}}, "key tests.checkpoints.fractions", "empty"),
        ({"tests": {"checkpoints": {}}}, "key tests.checkpoints", "empty mapping"),
        ({"tests": {"checkpoints": {"position": [1000]}}}, "key tests.checkpoints", ""),
    ],
)
def test_errors_name_the_key(changes, location, words):
    err = error_of(with_changes(**changes))
    text = str(err)
    assert text.startswith(f"config.yaml: {location}"), text
    assert err.location.startswith(location)
    assert words in text


def test_missing_required_key_is_named():
    config = copy.deepcopy(SMALL)
    del config["learners"]
    err = error_of(config)
    assert err.location == "key learners"
    assert "missing" in str(err)


def test_defaults_are_filled_and_input_is_not_modified():
    config = {"datasets": {"d": {"generate": {"rows": 10}}}, "learners": SMALL["learners"]}
    config["seeds"] = [1]
    config["policies"] = {"ideal": {"preset": "ideal"}}
    before = copy.deepcopy(config)
    out = load_config(config)
    assert config == before
    assert out["validation"] == {
        "scheme": "bootstrap",
        "folds": 10,
        "seed": 1,
        "evaluate": "all",
        "fixed_split": False,
    }
    assert out["estimator"] == {"kind": "fading", "alpha": 0.99}
    for kind, key in (("sliding", "width"), ("tumbling", "size")):  # defaults.WIDTH, SIZE
        given = load_config({**config, "estimator": {"kind": kind}})
        assert given["estimator"] == {"kind": kind, key: 1000}
    assert out["checkpoints"] == {"every": 500}
    assert out["tests"]["resamples"] == 5000 and out["tests"]["alpha"] == 0.05
    assert out["evaluation"]["threshold"] == 0.5


def test_contrasts_default_to_ideal_when_the_study_has_it():
    assert load_config(with_changes())["contrasts"] == {"reference": "ideal"}
    without = load_config(with_changes(policies={}))  # the hitl grid alone
    assert without["contrasts"] == {"reference": None}
    off = load_config(with_changes(contrasts={"reference": None}))
    assert off["contrasts"] == {"reference": None}
    other = load_config(with_changes(contrasts={"reference": "hitl_7d_90d"}))
    assert other["contrasts"] == {"reference": "hitl_7d_90d"}


@pytest.mark.parametrize(
    "checkpoints",
    [
        "last",
        "all",
        {"positions": [1000, 2000, 5000]},
        {"fractions": [0.1, 0.5, 1.0]},
        {"positions": [1000, 5000], "fractions": [0.1, 1.0]},
    ],
)
def test_test_checkpoints_forms(checkpoints):
    out = load_config(with_changes(tests={"checkpoints": checkpoints}))
    assert out["tests"]["checkpoints"] == checkpoints


def test_dataset_inf_option_is_accepted():
    datasets = {"d": {"path": "x.csv", "preset": "commit-guru", "inf": "missing"}}
    out = load_config(with_changes(datasets=datasets))
    assert out["datasets"]["d"]["inf"] == "missing"


def test_unquoted_true_reference_means_the_true_labels():
    out = load_config(with_changes(tests={"references": ["observed", True]}))
    assert out["tests"]["references"] == ["observed", "true"]


def test_policy_grids_expand_with_the_library_names():
    grid = {"preset": "hitl", "pos_window": ["1d", "3d"], "neg_window": ["15d", "90d"]}
    out = load_config(with_changes(policies={"ideal": {}}, policy_grids={"hitl": grid}))
    assert list(out["policies"]) == [
        "ideal",
        "hitl_1d_15d",
        "hitl_1d_90d",
        "hitl_3d_15d",
        "hitl_3d_90d",
    ]
    assert out["policies"]["hitl_3d_15d"] == {
        "preset": "hitl",
        "pos_window": "3d",
        "neg_window": "15d",
    }
    from delaycv.protocol.policies import make_policy

    for name, spec in out["policies"].items():
        assert make_policy(spec).name == name
    windows = {"preset": "verification", "window": ["1d", "3600s"]}
    assert list(expand_policy_grid(windows)) == ["verification_1d", "verification_1h"]


def test_a_grid_name_may_not_repeat_an_explicit_policy():
    grid = {"preset": "hitl", "pos_window": ["7d"], "neg_window": ["90d"]}
    err = error_of(
        with_changes(
            policies={"hitl_7d_90d": {"preset": "hitl", "pos_window": "7d", "neg_window": "90d"}},
            policy_grids={"g": grid},
        )
    )
    assert err.location == "key policy_grids.g" and "defined twice" in str(err)


def test_shipped_configs_are_valid():
    default = load_config(REPO / "config.yaml")
    assert len(default["learners"]) >= 3 and len(default["seeds"]) >= 2
    assert len(default["policies"]) >= 3
    hitl = load_config(REPO / "config" / "hitl-rq1.yaml")
    pos = [1, 3, 7, 15, 30, 60, 90]
    expected = {"ideal"} | {f"hitl_{p}d_{n}d" for p in pos for n in (15, 90)}
    assert set(hitl["policies"]) == expected
    assert hitl["validation"]["scheme"] == "bootstrap" and hitl["validation"]["folds"] == 10
    assert [s["class"] for s in hitl["learners"].values()] == ["river.tree.HoeffdingTreeClassifier"]
    rq3 = load_config(REPO / "config" / "hitl-rq3.yaml")
    windows = [1, 3, 7, 15, 30, 60, 90]
    expected = {"ideal"} | {f"hitl_{w}d_{w}d" for w in windows}
    assert set(rq3["policies"]) == expected | {f"verification_{w}d" for w in windows}
    assert rq3["policies"]["verification_7d"] == {"preset": "verification", "window": "7d"}
    for study, name in ((hitl, "hitl-rq1"), (rq3, "hitl-rq3")):
        assert study["results"] == f"results/{name}" and study["runs"] == "results/runs"
        assert study["tests"]["checkpoints"] == {"positions": [1000, 2000, 3000, 4000, 5000]}
        assert study["contrasts"] == {"reference": "ideal"}
        assert study["checkpoints"] == {"every": 30}
    shared = ["datasets", "learners", "seeds", "validation", "estimator", "evaluation"]
    assert {k: hitl[k] for k in shared} == {k: rq3[k] for k in shared}  # so runs can be shared
    small = load_config(REPO / "config" / "test-small.yaml")
    runs = study_runs(small)
    assert len(runs) == 4 and runs[0] == Run("tiny", "nb", 1, "ideal")


def test_yaml_errors_name_the_line(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("datasets:\n  d: {generate: {rows: 3}\nlearners: {}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}:3:1: not valid YAML: "), info.value


def test_a_yaml_syntax_error_names_the_file_line_and_column(tmp_path):
    path = tmp_path / "study.yaml"
    path.write_text("datasets:\n  d: {generate: {rows: 3}}\nlearners:\n  p: {class: Prior\n")
    with pytest.raises(ConfigError) as info:
        load_study([path])
    assert str(info.value).startswith(f"{path}:5:1: not valid YAML: "), info.value
    assert "flow mapping at line 4, column 6" in str(info.value)


@pytest.mark.parametrize("text", ["", "\n# nothing but a comment\n"])
def test_an_empty_config_file_is_an_error_naming_the_file(tmp_path, text):
    first = write(tmp_path / "first.yaml", SMALL)
    empty = tmp_path / "empty.yaml"
    empty.write_text(text)
    for load in (lambda: load_study([first, empty]), lambda: load_config(empty)):
        with pytest.raises(ConfigError) as info:
            load()
        assert str(info.value) == (
            f"{empty}: the file is empty (expected a mapping with datasets, learners, policies)"
        )


@pytest.mark.parametrize(
    "text, at, key, first",
    [
        (
            "datasets:\n  a: {generate: {rows: 100}}\n  a: {generate: {rows: 200}}\n",
            "3:3",
            "datasets.a",
            "line 2, column 3",
        ),
        (
            "seeds: [1]\nlearners:\n  p: {class: Prior, class: NoChange}\n",
            "3:21",
            "learners.p.class",
            "line 3, column 7",
        ),
        ("seeds: [1]\nseeds: [2]\n", "2:1", "seeds", "line 1, column 1"),
        (
            "policy_grids:\n  - {a: 1}\n  - {b: 1, b: 2}\n",
            "3:12",
            "policy_grids.1.b",
            "line 3, column 6",
        ),
    ],
    ids=["dataset", "flow-mapping", "top-level", "in-a-list"],
)
def test_a_duplicate_key_is_an_error_naming_the_file_line_and_key(tmp_path, text, at, key, first):
    path = tmp_path / "dup.yaml"
    path.write_text(text)
    message = (
        f"{path}:{at}: key {key}: duplicate key (first given at {first}) "
        "(expected each key once in a mapping)"
    )
    with pytest.raises(ConfigError) as info:
        read_yaml(path)
    assert str(info.value) == message
    # a study reports it with the config's other mistakes, in file order
    for load in (lambda p: load_study([p]), load_config):
        with pytest.raises(ConfigErrors) as info:
            load(path)
        assert message in str(info.value).splitlines(), str(info.value)


@pytest.mark.parametrize(
    "changes, key",
    [
        ({"seeds": [1, 2**70]}, "seeds.1"),
        ({"validation": {"seed": 2**70}}, "validation.seed"),
        ({"tests": {"seed": 2**70}}, "tests.seed"),
        (
            {"datasets": {"tiny": {"generate": {"rows": 400, "seed": 2**70}}}},
            "datasets.tiny.generate.seed",
        ),
    ],
    ids=["seeds", "validation", "tests", "generate"],
)
def test_a_seed_out_of_range_fails_when_the_config_loads(changes, key):
    err = error_of(with_changes(**changes))
    assert str(err) == (
        f"config.yaml: key {key}: 1180591620717411303424 is greater than the maximum of "
        "9223372036854775807 (expected a seed: an integer from 0 to 2**63 - 1 = 9223372036854775807)"
    )


def test_the_largest_seed_is_a_seed():
    top = 2**63 - 1
    config = load_config(
        with_changes(seeds=[top], validation={"seed": top}, tests={"seed": top}), learners=False
    )
    assert config["seeds"] == [top] and config["validation"]["seed"] == top


def test_a_preset_name_that_disagrees_with_its_spec_is_refused():
    spec = {"preset": "hitl", "pos_window": "1d", "neg_window": "15d"}
    err = error_of(with_changes(policies={"hitl_7d_90d": spec}))
    assert str(err) == (
        "config.yaml: key policies.hitl_7d_90d: the policy named hitl_7d_90d is hitl P = 1d, "
        "N = 15d, but its name says hitl P = 7d, N = 90d (expected a name that says what the "
        "policy is, such as hitl_1d_15d, or a name that is not a preset name: ideal, delay_<D>, "
        "verification_<W>, hitl_<P>_<N>)"
    )
    for name, other in [
        ("verification_90d", {"preset": "delay", "window": "90d"}),
        ("ideal", {"preset": "delay", "window": "1d"}),
        ("delay_3d", {"preset": "delay", "window": "3d", "inspection_error": 0.1}),
    ]:
        assert error_of(with_changes(policies={name: other})).location == f"key policies.{name}"
    # names that are not preset names are labels; names that agree are fine
    config = load_config(
        with_changes(
            policies={
                "fast": spec,
                "hitl_24h_15d": spec,
                "delay_7s": {"preset": "delay", "window": "7s"},
            }
        ),
        learners=False,
    )
    assert {"fast", "hitl_24h_15d", "delay_7s"} <= set(config["policies"])


def test_yaml_merge_keys_may_override_what_they_merge(tmp_path):
    path = tmp_path / "merge.yaml"
    path.write_text("base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  x: 3\n")
    assert read_yaml(path) == {"base": {"x": 1, "y": 2}, "d": {"x": 3, "y": 2}}


def test_helpers_give_the_library_arguments():
    config = load_config(with_changes(estimator={"kind": "window", "width": 50}))
    assert estimator_spec(config) == {"kind": "sliding", "width": 50}
    assert policy_spec(config, "hitl_7d_90d")["name"] == "hitl_7d_90d"
    assert learner_spec(config, "nb") == {"class": "river.naive_bayes.GaussianNB"}
    assert evaluation_options(config)["every"] == 100
    with pytest.raises(ConfigError, match="no learner named 'x'"):
        learner_spec(config, "x")


def test_the_sliding_estimator_is_named_sliding():
    config = load_config(with_changes(estimator={"kind": "sliding", "width": 50}))
    assert config["estimator"] == {"kind": "sliding", "width": 50}
    assert estimator_spec(config) == {"kind": "sliding", "width": 50}


def test_the_old_estimator_kind_window_is_read_as_sliding_with_a_warning(tmp_path, caplog):
    """``window`` (the old spelling) still loads, as ``sliding``, the run key unchanged; the
    warning (logger delaycv.study) names the file, the line and column of the key, and the new
    kind."""
    # (10 folds: the tests can be significant, no warning of their own)
    study = with_changes(estimator={"kind": "window", "width": 50}, validation={"folds": 10})
    path = write(tmp_path / "old.yaml", study)
    with caplog.at_level("WARNING", logger="delaycv.study"):
        config = load_study([path], learners=False)
    line = path.read_text().splitlines().index("  kind: window") + 1
    [record] = [r for r in caplog.records if r.name == "delaycv.study"]
    assert record.getMessage() == (
        f"{path}:{line}:3: key estimator.kind: the estimator kind 'window' is deprecated, read "
        "as 'sliding' (expected kind: sliding, the same estimator with the same parameter)"
    )
    assert config["estimator"] == {"kind": "sliding", "width": 50}
    new = with_changes(estimator={"kind": "sliding", "width": 50}, validation={"folds": 10})
    new = load_config(new, learners=False)
    assert run_key(config, "tiny", "nb", "ideal") == run_key(new, "tiny", "nb", "ideal")
    caplog.clear()
    with caplog.at_level("WARNING", logger="delaycv.study"):
        load_config(
            with_changes(estimator={"kind": "sliding"}, validation={"folds": 10}), learners=False
        )
    assert not caplog.records


def test_delaycv_check_prints_the_deprecation_as_a_warning(tmp_path, capsys, monkeypatch):
    from delaycv.cli import main

    monkeypatch.chdir(tmp_path)
    path = write(tmp_path / "old.yaml", with_changes(estimator={"kind": "window"}))
    assert main(["check", str(path)]) == 0
    captured = capsys.readouterr()
    assert "valid" in captured.out
    assert "delaycv: warning: " in captured.err
    assert "key estimator.kind: the estimator kind 'window' is deprecated" in captured.err


def test_the_workflow_logs_the_deprecation_as_a_configuration_warning(tmp_path):
    """The workflow loads a study with ``kind: window`` and says so in its log (Snakemake's
    logger), with the file, line and column of the key."""
    import subprocess
    import sys

    write(tmp_path / "old.yaml", with_changes(estimator={"kind": "window", "width": 50}))
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "--dry-run", "--cores", "1"]
        + ["--snakefile", str(REPO / "Snakefile"), "--configfile", "old.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert re.search(
        r"^configuration warning: old\.yaml:\d+:3: key estimator\.kind: the estimator kind "
        r"'window' is deprecated, read as 'sliding'",
        proc.stdout + proc.stderr,
        re.M,
    ), proc.stderr[-2000:]


# --------------------------------------------------------------------------- the study's files


def write(path: Path, config: dict) -> Path:
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def study_error(files, **options) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_study(files, **options)
    return info.value


def at(path: Path, pattern: str) -> str:
    """``line:column`` of the first match of ``pattern`` in file ``path`` (of its group, if any)."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        found = re.search(pattern, line)
        if found:
            return f"{number}:{found.start(found.re.groups and 1) + 1}"
    raise AssertionError(f"{pattern!r} is not in {path}")


def test_a_study_file_gets_the_schema_defaults_not_another_files_values(tmp_path):
    mine = write(
        tmp_path / "my.yaml",
        {
            "datasets": {"d": {"generate": {"rows": 50}}},
            "learners": {"nb": {"class": "naive_bayes.GaussianNB"}},
            "policies": {"ideal": {"preset": "ideal"}},
            "seeds": [1],
        },
    )
    study = load_study([mine])
    assert list(study["learners"]) == ["nb"] and list(study["policies"]) == ["ideal"]
    assert study["checkpoints"] == {"every": 500}  # the schema's, not config.yaml's 250
    assert study["tests"]["metrics"] == ["gmean", "recall_1", "fpr_1"]


def test_several_files_merge_in_order_and_errors_name_the_file_of_the_key(tmp_path):
    base = write(tmp_path / "base.yaml", with_changes(checkpoints={"every": 7}))
    extra = write(
        tmp_path / "extra.yaml",
        {"learners": {"ht": {"class": "tree.HoeffdingTreeClassifier"}}, "seeds": [1, 2]},
    )
    study = load_study([base, extra])
    assert list(study["learners"]) == ["nb", "lr", "ht"] and study["seeds"] == [1, 2]
    assert study["checkpoints"] == {"every": 7}
    study = load_study([base, extra], overrides={"seeds": [5]})
    assert study["seeds"] == [5]

    bad_base = with_changes(checkpoints={"every": 0})
    write(base, bad_base)
    err = study_error([base, extra])
    assert str(err).startswith(f"{base}:{at(base, 'every:')}: key checkpoints.every: "), str(err)
    # a key written in the later file (a learner among the first file's learners)
    write(base, SMALL)
    write(extra, {"learners": {"ht": {"class": "tree.NoSuchTree"}}})
    err = study_error([base, extra])
    assert str(err).startswith(f"{extra}:3:5: key learners.ht.class: unknown learner"), str(err)
    # a key given with --config, and a key that no file has (named after the last file)
    err = study_error([base], overrides={"validation": {"folds": 0}})
    assert str(err).startswith("--config: key validation.folds"), str(err)
    write(base, {k: v for k, v in SMALL.items() if k != "seeds"})
    err = study_error([base, extra])
    # in file order: the learner's line first, then the key no file has
    assert str(err).splitlines()[-1].startswith(f"{extra}: key seeds: missing"), str(err)


def test_dataset_names_with_dots_find_their_file(tmp_path):
    first = write(tmp_path / "a.yaml", with_changes(datasets={"v1.2": {"path": "x.csv"}}))
    second = write(tmp_path / "b.yaml", {"seeds": [3]})
    err = study_error([first, second])
    where = at(first, "v1.2:")
    assert str(err).startswith(f"{first}:{where}: key datasets.v1.2: a raw file needs a preset")


def test_paths_inside_the_working_directory_are_shown_relative(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "my.yaml", with_changes(seeds=["x"]))
    err = study_error([tmp_path / "my.yaml"])
    assert str(err).startswith(f"my.yaml:{at(tmp_path / 'my.yaml', '- (x)')}: key seeds.0"), err


# --------------------------------------------------------------------------- every mistake at load


RAW_MAPPING = {"time": "t", "label": "y", "positive": 1}


@pytest.fixture
def files(tmp_path) -> Path:
    """A working directory with a raw CSV file, a canonical stream and a Parquet table."""
    (tmp_path / "raw.csv").write_text("t,y,f\n1,0,0.5\n2,1,0.25\n")
    (tmp_path / "raw.arff").write_text(
        "@relation r\n@attribute t numeric\n@attribute y {0,1}\n@data\n1,0\n2,1\n"
    )
    (tmp_path / "blank.csv").write_text("\nt,y\n1,0\n")
    # features named like a stream column: the conversion refuses them, so does the load
    (tmp_path / "reserved.csv").write_text("t,y,label_time\n1,0,3\n2,1,4\n")
    (tmp_path / "reserved.arff").write_text(
        "@relation r\n@attribute t numeric\n@attribute label_time numeric\n"
        "@attribute y {0,1}\n@data\n1,3,0\n2,4,1\n"
    )
    (tmp_path / "effort.csv").write_text("t,y,effort,ns\n1,0,3,1\n2,1,4,2\n")
    # a feature named like a stream column: the conversion refuses it, so does the load
    (tmp_path / "reserved.csv").write_text("t,y,label_time\n1,0,3\n2,1,4\n")
    (tmp_path / "reserved.arff").write_text(
        "@relation r\n@attribute t numeric\n@attribute label_time numeric\n"
        "@attribute y {0,1}\n@data\n1,3,0\n2,4,1\n"
    )
    # Commit Guru's columns but no la, ld: the preset's effort needs them
    (tmp_path / "cg.csv").write_text(
        "author_date_unix_timestamp,fix_unix_timestamp,contains_bug,ns\n1,-1,0,2\n2,-1,1,3\n"
    )
    from delaycv.data.stream_file import write_stream
    from delaycv.data.synthetic import generate_stream

    write_stream(generate_stream(rows=20, seed=1), tmp_path / "stream.parquet")
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"learner": ["nb"], "gmean": [0.5]}), tmp_path / "table.parquet")
    return tmp_path


@pytest.mark.parametrize(
    "changes, location, words",
    [
        (
            {"learners": {"x": {"class": "river.tree.NoSuchTree"}}},
            "key learners.x.class",
            "unknown learner 'river.tree.NoSuchTree'",
        ),
        (
            {"learners": {"ht": {"class": "tree.HoeffdingTreeClassifier", "params": {"gp": 1}}}},
            "key learners.ht.params.gp",
            "tree.HoeffdingTreeClassifier has no parameter 'gp' (expected one of ",
        ),
        (  # a value of the wrong type for the parameter's annotation: named with its key
            {"learners": {"arf": {"class": "forest.ARFClassifier", "params": {"n_models": "x"}}}},
            "key learners.arf.params.n_models",
            "forest.ARFClassifier: n_models='x' has the wrong type (expected an integer)",
        ),
        (  # river would take the value and fail only on the first instance
            {
                "learners": {
                    "ht": {"class": "tree.HoeffdingTreeClassifier", "params": {"grace_period": "9"}}
                }
            },
            "key learners.ht.params.grace_period",
            "tree.HoeffdingTreeClassifier: grace_period='9' has the wrong type (expected an integer)",
        ),
        (
            {
                "learners": {
                    "p": {
                        "pipeline": [
                            {"class": "preprocessing.StandardScaler"},
                            {"class": "linear_model.LogisticRegression", "params": {"l2": "x"}},
                        ]
                    }
                }
            },
            "key learners.p.pipeline[1].params.l2",
            "linear_model.LogisticRegression: l2='x' has the wrong type (expected a number)",
        ),
        (
            {"datasets": {"d": {"path": "raw.csv", "preset": "commit-gru"}}},
            "key datasets.d.preset",
            "unknown preset 'commit-gru' (expected one of commit-guru, spdisc)",
        ),
        (
            {"datasets": {"d": {"path": "nope.csv", "preset": "commit-guru"}}},
            "key datasets.d.path",
            "no such file 'nope.csv' (expected an existing file; paths are relative to",
        ),
        (
            {"datasets": {"d": {"path": "~/nope.csv", "preset": "commit-guru"}}},
            "key datasets.d.path",
            f"and '~' is not expanded: write the full path, {Path('~/nope.csv').expanduser()})",
        ),
        (
            {"datasets": {"d": {"path": "raw.csv"}}},
            "key datasets.d",
            "a raw file needs a preset or a mapping",
        ),
        (  # a preset given to another kind of file: found before its conversion runs
            {"datasets": {"d": {"path": "raw.csv", "preset": "commit-guru"}}},
            "key datasets.d.preset",
            "raw.csv: column 'author_date_unix_timestamp' named by the commit-guru preset's time "
            "does not exist (expected one of the file's columns: t, y, f)",
        ),
        (
            {"datasets": {"d": {"path": "raw.arff", "preset": "spdisc"}}},
            "key datasets.d.preset",
            "raw.arff: column 'author_date_unix_timestamp' named by the spdisc preset's time "
            "does not exist (expected one of the file's columns: t, y)",
        ),
        (  # the key that named the column: the mapping's own over the preset's
            {
                "datasets": {
                    "d": {"path": "raw.csv", "preset": "commit-guru", "mapping": {"time": "tt"}}
                }
            },
            "key datasets.d.mapping.time",
            "raw.csv: column 'tt' named by mapping key 'time' does not exist",
        ),
        (
            {"datasets": {"d": {"path": "raw.csv", "mapping": {**RAW_MAPPING, "link": "fix"}}}},
            "key datasets.d.mapping.link",
            "raw.csv: column 'fix' named by mapping key 'link' does not exist",
        ),
        (  # the dataset's own effort key, not the preset's (la + ld)
            {"datasets": {"d": {"path": "cg.csv", "preset": "commit-guru", "effort": "churn"}}},
            "key datasets.d.effort",
            "cg.csv: column 'churn' named by key effort does not exist",
        ),
        (
            {"datasets": {"d": {"path": "blank.csv", "mapping": RAW_MAPPING}}},
            "key datasets.d.path",
            "blank.csv: line 1: the first line is empty (expected a header line)",
        ),
        (
            {"datasets": {"d": {"path": "reserved.csv", "mapping": RAW_MAPPING}}},
            "key datasets.d.path",
            "reserved.csv: header: feature column 'label_time' has a reserved name",
        ),
        (
            {"datasets": {"d": {"path": "reserved.arff", "mapping": RAW_MAPPING}}},
            "key datasets.d.path",
            "reserved.arff: header: feature column 'label_time' has a reserved name",
        ),
        (
            {"datasets": {"d": {"path": "effort.csv", "mapping": RAW_MAPPING, "effort": "ns"}}},
            "key datasets.d.path",
            "effort.csv: header: feature column 'effort' has the name of the stream's effort",
        ),
        (
            {"datasets": {"d": {"path": "raw.csv", "mapping": {"time": "t", "lable": "y"}}}},
            "key datasets.d.mapping.lable",
            "unknown mapping key 'lable'",
        ),
        (
            {"datasets": {"d": {"path": "raw.csv", "mapping": {"time": "t", "label": "y"}}}},
            "key datasets.d.mapping.positive",
            "missing mapping key 'positive'",
        ),
        (
            {
                "datasets": {
                    "d": {
                        "path": "raw.csv",
                        "preset": "commit-guru",
                        "mapping": {"time_unit": "sec"},
                    }
                }
            },
            "key datasets.d.mapping.time_unit",
            "unknown time unit 'sec'",
        ),
        (
            {
                "datasets": {
                    "d": {
                        "path": "raw.csv",
                        "preset": "commit-guru",
                        "mapping": {"delimiter": ";;"},
                    }
                }
            },
            "key datasets.d.mapping.delimiter",
            "bad delimiter",
        ),
        (
            {"datasets": {"d": {"path": "stream.parquet", "preset": "commit-guru"}}},
            "key datasets.d.preset",
            "a canonical stream (.parquet) is used as it is",
        ),
        (
            {"datasets": {"d": {"path": "table.parquet"}}},
            "key datasets.d.path",
            "table.parquet: not a delaycv stream: missing column(s) time, label, label_time",
        ),
        (
            {"datasets": {"d": {"path": "raw.txt", "preset": "commit-guru"}}},
            "key datasets.d.path",
            "cannot tell the format of 'raw.txt'",
        ),
        (
            {"tests": {"metrics": ["gmean", "gmeen"]}},
            "key tests.metrics.1",
            "unknown metric 'gmeen' (expected a metric of docs/metrics.md, such as gmean",
        ),
        (
            {"figures": {"metric": "recall1"}},
            "key figures.metric",
            "unknown metric 'recall1' (expected a metric of docs/metrics.md, such as recall_1",
        ),
    ],
)
def test_every_mistake_is_found_when_the_config_loads(files, changes, location, words):
    if "raw.txt" in str(changes):
        (files / "raw.txt").write_bytes(b"")
    path = write(files / "my.yaml", with_changes(**changes))
    err = study_error([path], cwd=files)
    assert err.file == str(path) and err.path == f"{path}:{err.line}:{err.column}", str(err)
    assert err.location.startswith(location), str(err)
    assert words in str(err), str(err)
    assert len(err.errors) == 1, str(err)


@pytest.mark.parametrize("effort", [None, "none", "ns", ["ns"]])
def test_a_dataset_s_effort_replaces_its_preset_s_in_the_header_check(files, effort):
    """cg.csv has no la and ld, the preset's effort: the dataset's effort key replaces it."""
    config = with_changes(
        datasets={"d": {"path": "cg.csv", "preset": "commit-guru", "effort": effort}}
    )
    load_config(config, cwd=files, learners=False)
    with pytest.raises(ConfigError, match="column 'la' named by the commit-guru preset's effort"):
        load_config(
            with_changes(datasets={"d": {"path": "cg.csv", "preset": "commit-guru"}}),
            cwd=files,
            learners=False,
        )


def test_files_are_checked_only_given_the_working_directory(files):
    config = with_changes(datasets={"d": {"path": "nope.csv", "preset": "commit-guru"}})
    assert "d" in load_config(config)["datasets"]
    with pytest.raises(ConfigError, match="no such file 'nope.csv'"):
        load_config(config, cwd=files)


def test_a_canonical_stream_is_a_dataset_used_as_it_is(files):
    config = with_changes(datasets={"s": {"path": "stream.parquet"}, "t": {"generate": {}}})
    study = load_config(config, cwd=files)
    assert stream_file(study["datasets"]["s"]) == "stream.parquet"
    assert stream_file(study["datasets"]["t"]) is None
    assert stream_file({"path": "raw.csv"}) is None


def test_a_canonical_stream_of_milliseconds_fails_when_the_config_loads(files):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"time": [1_600_000_000_000], "label": [0], "label_time": [None]})
    pq.write_table(table, files / "ms.parquet")
    with pytest.raises(ConfigError) as info:
        load_config(with_changes(datasets={"s": {"path": "ms.parquet"}}), cwd=files)
    assert "stream time 1600000000000 (row group 0) is after 9999-12-31" in str(info.value)
    assert "it looks like milliseconds" in str(info.value)
    assert info.value.location.startswith("key datasets.s.path")


def test_learners_are_not_built_when_told_not_to():
    config = with_changes(learners={"x": {"class": "river.tree.NoSuchTree"}})
    assert "x" in load_config(config, learners=False)["learners"]


# --------------------------------------------------------------------------- rankings, folders


def test_rankings_version_defaults_to_np_and_accepts_p():
    assert load_config(with_changes())["rankings"] == {"version": "np"}
    assert load_config(with_changes(rankings={"version": "p"}))["rankings"] == {"version": "p"}


@pytest.mark.parametrize("version", ["P", "parametric", 1, None])
def test_a_bad_rankings_version_is_refused_naming_the_key(version):
    err = error_of(with_changes(rankings={"version": version}))
    assert err.location == "key rankings.version", str(err)
    assert str(err).startswith("config.yaml: key rankings.version")


def test_results_and_runs_default_and_runs_follows_results():
    out = load_config(with_changes())
    assert (out["results"], out["runs"]) == ("results", "results/runs")
    out = load_config(with_changes(results="results/s1"))
    assert (out["results"], out["runs"]) == ("results/s1", "results/s1/runs")
    out = load_config(with_changes(results="results/s1/", runs="results/shared//runs"))
    assert (out["results"], out["runs"]) == ("results/s1", "results/shared/runs")
    out = load_config(with_changes(results="./s2"))
    assert (out["results"], out["runs"]) == ("s2", "s2/runs")


@pytest.mark.parametrize(
    "changes, key, words",
    [
        ({"results": "/tmp/study"}, "results", "not a folder inside the working directory"),
        ({"results": "../elsewhere"}, "results", "without '..'"),
        ({"results": "results/../../x"}, "results", "not a folder inside"),
        ({"runs": "/data/runs"}, "runs", "not a folder inside the working directory"),
        ({"runs": "../runs"}, "runs", "without '..'"),
        ({"results": "results/s1", "runs": "results/s1"}, "runs", "share one folder"),
        ({"results": "results/s1", "runs": "results/s1/"}, "runs", "share one folder"),
        ({"runs": "results"}, "runs", "a folder other than results (results)"),
        ({"results": "has space"}, "results", ""),
    ],
)
def test_bad_results_or_runs_folders_are_refused_naming_the_key(changes, key, words):
    err = error_of(with_changes(**changes))
    assert err.location == f"key {key}", str(err)
    assert str(err).startswith(f"config.yaml: key {key}") and words in str(err)


# --------------------------------------------------------------------------- effort


@pytest.mark.parametrize("effort", ["la", ["la", "ld"], None, "none"])
def test_a_raw_dataset_takes_an_effort(effort):
    datasets = {"d": {"path": "x.csv", "preset": "commit-guru", "effort": effort}}
    study = load_config(with_changes(datasets=datasets))
    assert study["datasets"]["d"]["effort"] == effort  # passed to the convert job as written


@pytest.mark.parametrize(
    "dataset, location, words",
    [
        (
            {"generate": {"rows": 50}, "effort": "la"},
            "key datasets.d.effort",
            "a generated stream's effort is la + ld, not 'la' (expected effort: null (a stream "
            "without effort), or no effort key (la + ld))",
        ),
        (
            {"path": "x.csv", "preset": "commit-guru", "effort": ["la", "la"]},
            "key datasets.d.effort",
            "column 'la' is named twice",
        ),
        (
            {"path": "x.csv", "preset": "commit-guru", "effort": "la", "mapping": {"effort": "ld"}},
            "key datasets.d.effort",
            "the effort is given twice (effort and mapping.effort)",
        ),
        (
            {"path": "x.csv", "preset": "commit-guru", "mapping": {"effort": []}},
            "key datasets.d.mapping.effort",
            "bad value []",
        ),
        ({"path": "x.csv", "preset": "commit-guru", "effort": []}, "key datasets.d.effort", ""),
        ({"path": "x.csv", "preset": "commit-guru", "effort": 3}, "key datasets.d.effort", ""),
        (
            {"path": "s.parquet", "effort": None},
            "key datasets.d.effort",
            "a canonical stream (.parquet) has the effort its file holds: the effort is set when "
            "the stream is converted",
        ),
    ],
)
def test_bad_dataset_efforts_are_refused_naming_the_key(dataset, location, words):
    err = error_of(with_changes(datasets={"d": dataset}))
    assert err.location == location, str(err)
    assert words in str(err), str(err)


@pytest.fixture
def effort_files(files) -> Path:
    """``files`` with a canonical stream without effort (stream.parquet has one: la + ld)."""
    from delaycv.data.stream_file import write_stream
    from delaycv.data.synthetic import generate_stream

    # another stream than stream.parquet's (one stream under two names is refused, effort aside)
    write_stream(generate_stream(rows=20, seed=2, effort=False), files / "bare.parquet")
    (files / "cg.csv").write_text(
        "author_date_unix_timestamp,contains_bug,fix_unix_timestamp,la,ld\n1,1,-1,2,3\n"
    )
    (files / "sp.csv").write_text(
        "author_date_unix_timestamp,contains_bug,commit_type,la,ld\n1,True,1,2,3\n"
    )
    return files


@pytest.mark.parametrize(
    "datasets",
    [
        {"g": {"generate": {"rows": 50}}},
        {"s": {"path": "stream.parquet"}},
        {"c": {"path": "cg.csv", "preset": "commit-guru"}},
        {"c": {"path": "sp.csv", "preset": "spdisc", "effort": "la"}},
        {
            "c": {
                "path": "raw.csv",
                "mapping": {"time": "t", "label": "y", "positive": 1},
                "effort": "f",
            }
        },
        {
            "c": {
                "path": "raw.csv",
                "mapping": {"time": "t", "label": "y", "positive": 1, "effort": "f"},
            }
        },
    ],
)
def test_effort_metrics_are_accepted_when_every_dataset_has_an_effort(effort_files, datasets):
    config = with_changes(datasets=datasets, tests={"metrics": ["gmean", "popt", "ifa"]})
    config["figures"] = {"metric": "effort_recall_20"}
    study = load_config(config, cwd=effort_files, learners=False)
    assert study["tests"]["metrics"] == ["gmean", "popt", "ifa"]


@pytest.mark.parametrize(
    "dataset, name, how",
    [
        ({"generate": {"rows": 50}, "effort": None}, "g", "no datasets.g.effort: null"),
        ({"path": "bare.parquet"}, "b", "a .parquet converted with an effort"),
        ({"path": "cg.csv", "preset": "commit-guru", "effort": None}, "c", "datasets.c.effort"),
        ({"path": "cg.csv", "preset": "commit-guru", "effort": "none"}, "c", "datasets.c.effort"),
        (
            {"path": "raw.csv", "mapping": {"time": "t", "label": "y", "positive": 1}},
            "r",
            "datasets.r.effort: the raw file's columns, e.g. [la, ld]",
        ),
    ],
)
def test_an_effort_metric_on_a_dataset_without_effort_names_the_key_metric_and_dataset(
    effort_files, dataset, name, how
):
    datasets = {"s": {"path": "stream.parquet"}, name: dataset}
    config = with_changes(datasets=datasets, tests={"metrics": ["gmean", "popt"]})
    path = write(effort_files / "my.yaml", config)
    err = study_error([path], cwd=effort_files, learners=False)
    assert err.location == "key tests.metrics.1", str(err)
    text = str(err)
    assert text.startswith(
        f"{path}:{at(path, '- (popt)')}: key tests.metrics.1: the effort-aware metric 'popt' "
        "needs each instance's "
        f"effort, and dataset {name!r} has none (expected an effort for every dataset ("
    ), text
    assert how in text and "\n" not in text
    # figures.metric is checked the same way
    config = with_changes(datasets=datasets, figures={"metric": "effort_f1_20"})
    with pytest.raises(ConfigError) as info:
        load_config(config, cwd=effort_files, learners=False)
    assert info.value.location == "key figures.metric"
    assert f"'effort_f1_20' needs each instance's effort, and dataset {name!r}" in str(info.value)


def test_figures_of_the_corrected_reference_need_a_metric_it_estimates(effort_files):
    """The corrected reference has no popt and no AUC (docs/corrected.md): figures of them
    against it would be empty panels. The key figures.reference is refused, naming the metric;
    tests of them against it are not (their rows say why there is no test)."""
    datasets = {"s": {"path": "stream.parquet"}}
    config = with_changes(datasets=datasets, tests={"metrics": ["gmean", "popt"]})
    config["figures"] = {"reference": "corrected"}
    path = write(effort_files / "my.yaml", config)
    err = study_error([path], cwd=effort_files, learners=False)
    assert err.location == "key figures.reference", str(err)
    assert (
        "the corrected reference has no popt: its inspection curve is not estimated from "
        "expected labels (docs/corrected.md), so its figures would have nothing to draw (expected "
        "observed or true for popt"
    ) in str(err)
    config["figures"] = {"reference": "corrected", "metric": ["gmean", "auc"]}
    with pytest.raises(ConfigError, match="key figures.reference.*no auc: a ranking"):
        load_config(config, cwd=effort_files, learners=False)
    for figures in ({"reference": "corrected", "metric": "gmean"}, {"reference": "true"}):
        config["figures"] = figures
        study = load_config(config, cwd=effort_files, learners=False)
        assert study["figures"]["reference"] == figures["reference"]


def test_a_policy_of_clean_labels_beside_a_dataset_without_fix_times_warns(files, caplog):
    """verification gives a 1 only where a fix is seen: on a dataset without fix times (a raw
    file whose mapping names no link column; a canonical stream whose metadata counts
    none) every label it releases is 0. A warning naming the policy and the datasets, with the
    key's line; none for a dataset with fix times or a policy that inspects a side."""
    from dataclasses import replace

    import numpy as np

    from delaycv.data.stream_file import write_stream
    from delaycv.data.synthetic import generate_stream

    stream = generate_stream(rows=60, seed=3)
    bare = replace(stream, label_time=np.full(len(stream), np.nan))
    write_stream(bare, files / "bare.parquet")
    raw = {"path": "raw.csv", "mapping": {"time": "t", "label": "y", "positive": 1}}
    datasets = {"r": raw, "b": {"path": "bare.parquet"}, "g": {"generate": {"rows": 50}}}
    policies = {
        "ideal": {"preset": "ideal"},
        "hitl_7d_30d": {"preset": "hitl", "pos_window": "7d", "neg_window": "30d"},
        "verification_30d": {"preset": "verification", "window": "30d"},
    }
    many = {"folds": 10}  # (the tests can be significant: no warning of their own)
    path = write(
        files / "v.yaml", with_changes(datasets=datasets, policies=policies, validation=many)
    )
    with caplog.at_level("WARNING", logger="delaycv.study"):
        load_study([path], cwd=files, learners=False)
    line = path.read_text().splitlines().index("  verification_30d:") + 1
    assert [r.getMessage() for r in caplog.records if r.name == "delaycv.study"] == [
        f"{path}:{line}:3: key policies.verification_30d: the policy verification_30d gives a "
        "label 1 only where a fix is seen (label_time), and datasets r, b have no fix time: "
        "every label it releases there is 0, so no fold learns a positive (expected datasets with "
        "fix times (a fix-link column), or a policy whose window ends in the truth: hitl, delay)"
    ]
    caplog.clear()
    # a grid's policy is placed at its grid (it has no line of its own)
    grids = {"v": {"preset": "verification", "window": ["7d"]}}
    config = with_changes(
        datasets={"r": raw}, policies={"ideal": {"preset": "ideal"}}, validation=many
    )
    path = write(files / "g.yaml", {**config, "policy_grids": grids})
    with caplog.at_level("WARNING", logger="delaycv.study"):
        load_study([path], cwd=files, learners=False)
    line = path.read_text().splitlines().index("  v:") + 1
    [message] = [r.getMessage() for r in caplog.records if r.name == "delaycv.study"]
    assert message.startswith(
        f"{path}:{line}:3: key policy_grids.v: the policy verification_7d gives a label 1 only "
    ), message
    caplog.clear()
    linked = {**raw, "mapping": {**raw["mapping"], "link": "f"}}
    path = write(
        files / "w.yaml", with_changes(datasets={"r": linked}, policies=policies, validation=many)
    )
    with caplog.at_level("WARNING", logger="delaycv.study"):
        load_study([path], cwd=files, learners=False)
    assert not [r for r in caplog.records if r.name == "delaycv.study"]


def study_warnings(path, caplog, build: bool, **changes) -> list[str]:
    """The warnings of test-small with ``changes``, written at ``path`` and loaded (its learners
    built and run when ``build``)."""
    write(path, with_changes(**changes))
    caplog.clear()
    with caplog.at_level("WARNING", logger="delaycv.study"):
        load_study([path], learners=build)
    return [r.getMessage() for r in caplog.records if r.name == "delaycv.study"]


def test_tests_that_cannot_be_significant_warn(tmp_path, caplog):
    """A sign-flip test of n pairs gives no p below 2/2**n: with fewer (seed, fold) pairs than
    alpha needs, no test of the study can be significant, and with folds every seed shares
    (cv, split, prequential, a fixed split) a deterministic learner's seeds count once. A warning
    with the key's line; none where the pairs suffice."""

    def warnings_of(name: str, **changes) -> list[str]:
        return study_warnings(tmp_path / name, caplog, False, **changes)

    # test-small's own: 2 bootstrap folds, 1 seed
    [message] = warnings_of("small.yaml")
    line = (tmp_path / "small.yaml").read_text().splitlines().index("validation:") + 1
    assert message == (
        f"{tmp_path / 'small.yaml'}:{line + 2}:3: key validation.folds: 2 folds x 1 seed give at "
        "most 2 (seed, fold) pairs per test; a sign-flip test of 2 pairs gives no p below 0.5, "
        "above tests.alpha 0.05: no learner test, bias test or contrast can be significant, "
        "whatever the differences (expected at least 6 (seed, fold) pairs per test: more folds, "
        "or seeds whose folds differ (bootstrap without fixed_split))"
    )
    # 5 cv folds x 2 seeds: 10 pairs at most, 5 for a deterministic learner (0.0625 > 0.05)
    [message] = warnings_of("cv.yaml", validation={"scheme": "cv", "folds": 5}, seeds=[1, 2])
    assert "under cv every seed has the same folds" in message
    assert "5 (seed, fold) pairs per test; a sign-flip test of 5 pairs gives no p below 0.0625" in (
        message
    )
    # the same under bootstrap: the seeds' folds differ, 10 pairs
    assert warnings_of("b.yaml", validation={"folds": 5}, seeds=[1, 2]) == []
    # a fixed split shares the folds as cv does
    fixed = {"folds": 5, "fixed_split": True}
    [message] = warnings_of("f.yaml", validation=fixed, seeds=[1, 2])
    assert "under the fixed split every seed has the same folds" in message
    # 6 pairs reach 2/64 = 0.031; and 0.0625 is significant at alpha 0.1
    assert warnings_of("six.yaml", validation={"folds": 6}) == []
    tests = {**SMALL["tests"], "alpha": 0.1}
    assert warnings_of("a.yaml", validation={"scheme": "cv", "folds": 5}, tests=tests) == []
    # too few resamples: no p below 1/(R + 1), whatever the folds; the key is tests.resamples
    tests = {**SMALL["tests"], "resamples": 10}
    [message] = warnings_of("r.yaml", validation={"folds": 10}, seeds=[1, 2], tests=tests)
    assert "key tests.resamples: 10 folds x 2 seeds give at most 20" in message
    assert "no p below 0.0909" in message and "(expected more tests.resamples than 10" in message


def test_learners_that_ignore_their_seed_are_named_with_the_runs_they_repeat(
    tmp_path, caplog, monkeypatch
):
    """With the learners checked (as the workflow and delaycv check do), folds every seed shares
    name the learners whose runs do not depend on the seed (test-small's GaussianNB and scaled
    logistic regression; a forest's seed is the run's): the tests out of reach are theirs, and
    each of their runs is made once per seed (found on a study under split with MOA's naive
    Bayes). A spec that passed before says the same without being built again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    def warnings_of(name: str, **changes) -> list[str]:
        return study_warnings(tmp_path / name, caplog, True, **changes)

    cv = {"scheme": "cv", "folds": 5}
    for attempt in (1, 2):  # (the second from what the first remembered)
        repeated, tests = warnings_of(f"cv{attempt}.yaml", validation=cv, seeds=[1, 2, 3])
        assert repeated.endswith(
            "key seeds: the learners nb and lr ignore their seed and under cv every seed has the "
            "same folds: each of their runs is the same under the 3 seeds, so 8 of the study's "
            "12 evaluations repeat another (expected seeds that change the runs: folds that "
            "differ by seed (bootstrap without fixed_split), or learners that take a seed; or "
            "one seed for a study of such learners)"
        ), repeated
        assert (
            "under cv every seed has the same folds, so nb and lr, which ignore their seed, "
            "repeat their values" in tests
        ), tests
        assert "none of the bias tests and contrasts of nb and lr, nor a test between two of " in (
            tests
        )
    forest = {"class": "river.forest.ARFClassifier", "params": {"n_models": 2}}
    repeated, tests = warnings_of(
        "mixed.yaml",
        validation=cv,
        seeds=[1, 2],
        learners={"nb": SMALL["learners"]["nb"], "f": forest},
    )
    assert "the learner nb ignores its seed" in repeated
    assert "so 2 of the study's 8 evaluations repeat another" in repeated
    assert "so nb, which ignores its seed, repeats its values under each seed" in tests
    assert "none of the bias tests and contrasts of nb can be significant" in tests
    # every learner takes the seed: no warning (5 folds x 2 seeds: 10 pairs); under bootstrap
    # the seeds' folds differ
    assert warnings_of("f.yaml", validation=cv, seeds=[1, 2], learners={"f": forest}) == []
    assert warnings_of("b.yaml", validation={"folds": 5}, seeds=[1, 2, 3]) == []
    # noise drawn from the run's seed makes every run differ: prediction noise flips any run's
    # predictions, an inspection error the labels of its policy's runs
    noisy = {"prediction_noise": 0.1}
    assert warnings_of("n.yaml", validation=cv, seeds=[1, 2, 3], evaluation=noisy) == []
    policies = {
        "ideal": {"preset": "ideal"},
        "h": {"preset": "hitl", "pos_window": "7d", "neg_window": "90d", "inspection_error": 0.1},
    }
    alone = {"policy_grids": {}}
    repeated, tests = warnings_of(
        "i.yaml", validation=cv, seeds=[1, 2, 3], policies=policies, **alone
    )
    assert (
        "each of their runs under the policies without an inspection error (ideal) is the same "
        "under the 3 seeds, so 4 of the study's 12 evaluations repeat another" in repeated
    ), repeated
    assert "repeat their values under the policies without an inspection error (ideal) " in tests
    only = {"h": policies["h"]}
    assert warnings_of("o.yaml", validation=cv, seeds=[1, 2, 3], policies=only, **alone) == []


def test_a_duration_window_beside_a_stream_without_times_is_refused_at_load(tmp_path):
    """A dataset whose times are its instances' positions (``time_unit: position``, raw or
    converted) takes windows in instances: a duration is an error at the window's key, naming
    the dataset, before any job (the run would refuse it too); counts pass."""
    from delaycv.data.convert import convert_file

    arff = tmp_path / "elec.arff"
    arff.write_text(
        "@relation e\n@attribute a numeric\n@attribute class {UP,DOWN}\n@data\n"
        + "".join(f"{i / 10},{'UP' if i % 3 else 'DOWN'}\n" for i in range(40))
    )
    mapping = {"time_unit": "position", "label": "class", "positive": "UP"}
    convert_file(arff, tmp_path / "elec.parquet", mapping=mapping)
    policies = {"ideal": {"preset": "ideal"}, "late": {"preset": "delay", "window": "7d"}}
    for dataset in ({"path": str(arff), "mapping": mapping}, {"path": "elec.parquet"}):
        config = with_changes(datasets={"elec": dataset}, policies=policies, policy_grids={})
        with pytest.raises(ConfigError) as info:
            load_config(config, cwd=tmp_path, learners=False)
        assert info.value.location == "key policies.late.window", str(info.value)
        assert "dataset elec: the window 7d is a duration, but the stream's times are its " in (
            str(info.value)
        )
        counted = {**policies, "late": {"preset": "delay", "window": "20i"}}
        config = with_changes(datasets={"elec": dataset}, policies=counted, policy_grids={})
        assert "late" in load_config(config, cwd=tmp_path, learners=False)["policies"]
        # a grid's policy is named at the grid's key, which the file has
        grid = {"g": {"preset": "delay", "window": ["7d", "20i"]}}
        config = with_changes(datasets={"elec": dataset}, policies=counted, policy_grids=grid)
        with pytest.raises(ConfigError) as info:
            load_config(config, cwd=tmp_path, learners=False)
        assert info.value.location == "key policy_grids.g.window", str(info.value)


def test_a_parquet_effort_is_known_only_given_the_working_directory(effort_files):
    config = with_changes(datasets={"b": {"path": "bare.parquet"}}, tests={"metrics": ["popt"]})
    assert load_config(config, learners=False)["tests"]["metrics"] == ["popt"]
    with pytest.raises(ConfigError, match="dataset 'b' has none"):
        load_config(config, cwd=effort_files, learners=False)


def test_an_unknown_metric_may_be_close_to_an_effort_metric():
    err = error_of(with_changes(tests={"metrics": ["pop"]}))
    assert "unknown metric 'pop'" in str(err) and "popt" in str(err)


def _study(**extra) -> dict:
    return {
        "datasets": {"d": {"generate": {"rows": 300}}},
        "learners": {"nb": {"class": "naive_bayes.GaussianNB"}},
        "seeds": [1],
        "policies": {"ideal": {"preset": "ideal"}},
        **extra,
    }


def test_the_study_config_sets_the_scope_and_refuses_to_rank_a_metric_without_direction():
    from delaycv.common.errors import InputError
    from delaycv.study.loading import load_config
    from delaycv.study.runs import effort_scope_spec, run_key

    config = load_config(_study(), learners=False)
    assert effort_scope_spec(config) == {"kind": "cumulative"}
    sliding = load_config(_study(effort_scope={"kind": "sliding", "width": 50}), learners=False)
    assert effort_scope_spec(sliding) == {"kind": "sliding", "width": 50}
    # a changed scope is another run (directory, params): its evaluations rerun
    assert run_key(config, "d", "nb", "ideal") != run_key(sliding, "d", "nb", "ideal")
    for bad, words in (
        ({"effort_scope": {"kind": "fading"}}, "effort_scope.kind"),
        ({"effort_scope": {"kind": "sliding", "width": 0}}, "effort_scope.width"),
        ({"tests": {"metrics": ["gmean", "effort_pci_20"]}}, "key tests.metrics.1: metric "),
    ):
        with pytest.raises(InputError, match=words):
            load_config(_study(**bad), learners=False)


ARFF_WITH_NOMINALS = """@relation changes
@attribute t numeric
@attribute size numeric
@attribute day {mon, tue, wed}
@attribute merged {True, False}
@attribute note string
@attribute y {0, 1}
@data
1700000000,3,mon,True,'a',1
1700000100,5,tue,False,'b',0
1700000200,2,wed,True,'a',0
1700000300,7,mon,False,'c',1
"""


def test_river_learners_that_cannot_read_a_dataset_s_categories_are_named(tmp_path, monkeypatch):
    """Where a dataset's stream has categorical features (a canonical stream's text columns; an
    ARFF's nominal attributes not read as numbers, from its header), each river learner runs
    three instances with a text value when the study loads: one that cannot read them is an
    error at its key naming the datasets and features (each job's probe would fail on its
    stream's first instances). Learners that read text, or encode it first, pass, and are
    remembered; a study without such a dataset runs no such check."""
    import pandas as pd

    from delaycv.data.stream import Stream
    from delaycv.data.stream_file import write_stream
    from delaycv.data.synthetic import generate_stream

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    stream = generate_stream(rows=100, seed=1)
    kinds = pd.Categorical((["fix", "feature"] * 50)[:100])
    with_kind = Stream(
        time=stream.time,
        label=stream.label,
        label_time=stream.label_time,
        features=stream.features.assign(kind=kinds),
        metadata=stream.metadata,
        effort=stream.effort,
    )
    write_stream(with_kind, tmp_path / "s.parquet")
    write_stream(stream, tmp_path / "numbers.parquet")
    (tmp_path / "a.arff").write_text(ARFF_WITH_NOMINALS)
    datasets = {
        "s": {"path": "s.parquet"},
        "a": {"path": "a.arff", "mapping": {"time": "t", "label": "y", "positive": "1"}},
    }
    learners = {
        "ht": {"class": "tree.HoeffdingTreeClassifier"},
        "nb": {"class": "naive_bayes.GaussianNB"},
        "ohe": {
            "pipeline": [
                {"class": "preprocessing.OneHotEncoder"},
                {"class": "linear_model.LogisticRegression"},
            ]
        },
    }
    path = write(tmp_path / "study.yaml", with_changes(datasets=datasets, learners=learners))
    err = study_error([path], cwd=tmp_path)
    [mistake] = err.errors
    from delaycv.protocol.learners import READS_TEXT

    line = path.read_text().splitlines().index("  nb:") + 1
    assert str(mistake) == (
        f"{path}:{line}:3: key learners.nb: GaussianNB cannot read a categorical feature, whose "
        "values are text, and the streams of s (kind) and a (day) have such features: on "
        "instances with one, TypeError: unsupported operand type(s) for -: 'str' and 'float' "
        f"(expected {READS_TEXT}; or the datasets without those features (their mapping's "
        "drop))"
    )
    assert "river's OneHotEncoder encodes every feature it is given, numbers too" in READS_TEXT
    # (merged: true/false read as 1/0; note: a string attribute, whose values decide)
    from delaycv.study.datasets import check_dataset_file

    assert check_dataset_file("a", datasets["a"], "study.yaml", tmp_path).categorical == ("day",)
    # the others pass, and are remembered
    del learners["nb"]
    path = write(tmp_path / "ok.yaml", with_changes(datasets=datasets, learners=learners))
    load_study([path], cwd=tmp_path)
    remembered = list((tmp_path / "cache" / "delaycv" / "learner-checks").iterdir())
    assert sum(p.read_text() == "reads categorical features" for p in remembered) == 2
    # numbers only: GaussianNB is fine
    numbers = {"n": {"path": "numbers.parquet"}}
    learners = {"nb": {"class": "naive_bayes.GaussianNB"}}
    path = write(tmp_path / "n.yaml", with_changes(datasets=numbers, learners=learners))
    load_study([path], cwd=tmp_path)


def test_river_s_encoder_as_a_first_step_beside_numbers_is_a_warning(tmp_path, monkeypatch, caplog):
    """A pipeline starting with river's OneHotEncoder (as river's docs show it on text) beside
    datasets with numeric features encodes each number's values as features of their own: a
    warning at its key when the study loads, naming the datasets and their numbers (a raw CSV's
    and ARFF's from their headers, a canonical stream's from its schema); the recipe of a
    function of one's own that encodes the text alone is no such learner."""
    from delaycv.data.stream_file import write_stream
    from delaycv.data.synthetic import generate_stream
    from delaycv.study.datasets import check_dataset_file

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cards.csv").write_text(
        "t,y,amount,merchant\n1700000000,1,12.5,fuel\n1700000060,0,80.25,travel\n"
    )
    (tmp_path / "a.arff").write_text(ARFF_WITH_NOMINALS)
    write_stream(generate_stream(rows=100, seed=1), tmp_path / "g.parquet")
    (tmp_path / "own_models.py").write_text(OWN_MODELS)
    cards = {
        "path": "cards.csv",
        "mapping": {"time": "t", "label": "y", "positive": 1, "categorical": ["merchant"]},
    }
    arff = {"path": "a.arff", "mapping": {"time": "t", "label": "y", "positive": "1"}}
    assert check_dataset_file("cards", cards, "s.yaml", tmp_path).numeric == ("amount",)
    assert check_dataset_file("a", arff, "s.yaml", tmp_path).numeric == ("size",)
    stream_facts = check_dataset_file("g", {"path": "g.parquet"}, "s.yaml", tmp_path)
    assert stream_facts.numeric == tuple(generate_stream(rows=10, seed=1).feature_names)
    learners = {
        "ohe": {
            "pipeline": [
                {"class": "preprocessing.OneHotEncoder"},
                {"class": "linear_model.LogisticRegression"},
            ]
        },
        "own": {"class": "own_models:encoded_logistic"},
        "ht": {"class": "tree.HoeffdingTreeClassifier"},
    }
    datasets = {"cards": cards, "a": arff, "g": {"path": "g.parquet"}}
    path = write(tmp_path / "study.yaml", with_changes(datasets=datasets, learners=learners))
    with caplog.at_level("WARNING", logger="delaycv.study"):
        load_study([path], cwd=tmp_path)
    said = [r.getMessage() for r in caplog.records if r.name == "delaycv.study"]
    line = path.read_text().splitlines().index("  ohe:") + 1
    [warning] = [w for w in said if "OneHotEncoder" in w]
    assert warning.startswith(
        f"study.yaml:{line}:3: key learners.ohe: the first step of OneHotEncoder|LogisticRegression, "
        "river's OneHotEncoder, encodes every feature it is given, and the numeric features of "
        "cards (amount), a (size) and g (la, ld, nf, ...) too: each of their values becomes a "
        "feature of its own"
    )


def test_a_csv_file_s_categorical_columns_are_known_from_its_first_lines(tmp_path, monkeypatch):
    """A CSV file's features are numbers but for the columns its mapping names categorical,
    which stay text unless boolean_as_number reads them as 1/0: a value other than true/false
    and 1/0 in the file's first lines settles it when the study loads, and a learner that
    cannot read text is an error then, not in every job (found on a CSV of card transactions
    with a merchant column, which delaycv check passed and every job refused)."""
    from delaycv.study.datasets import check_dataset_file

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    lines = ["t,y,amount,merchant,online,flag"]
    lines += [
        f"{1700000000 + 60 * i},{i % 2},{i * 1.5},{'fuel' if i % 3 else ''},{i % 2},"
        f"{'true' if i % 2 else 'false'}"
        for i in range(40)
    ]
    (tmp_path / "cards.csv").write_text("\n".join(lines) + "\n")
    mapping = {"time": "t", "label": "y", "positive": 1}
    for categorical, boolean, known in [
        (["merchant", "online", "flag"], True, ("merchant",)),
        (["merchant", "online"], False, ("merchant", "online")),
        ([], True, ()),
    ]:
        spec = {
            "path": "cards.csv",
            "mapping": {**mapping, "categorical": categorical, "boolean_as_number": boolean},
        }
        facts = check_dataset_file("cards", spec, "study.yaml", tmp_path)
        assert facts.categorical == known, (categorical, boolean)
    # a column of missing values in its first lines is not known to be text
    (tmp_path / "late.csv").write_text("t,y,merchant\n1700000000,1,\n1700000060,0,?\n")
    spec = {"path": "late.csv", "mapping": {**mapping, "categorical": ["merchant"]}}
    assert check_dataset_file("late", spec, "study.yaml", tmp_path).categorical == ()
    datasets = {"cards": {"path": "cards.csv", "mapping": {**mapping, "categorical": ["merchant"]}}}
    learners = {"nb": {"class": "naive_bayes.GaussianNB"}}
    path = write(tmp_path / "c.yaml", with_changes(datasets=datasets, learners=learners))
    [mistake] = study_error([path], cwd=tmp_path).errors
    assert (
        "GaussianNB cannot read a categorical feature, whose values are text, and the "
        "streams of cards (merchant) have such features" in str(mistake)
    )
