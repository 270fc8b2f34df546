"""One set of defaults: the CLI, the Python API, the engine, the later stages' settings and the
workflow config agree with ``delaycv.common.defaults`` (the JSON schema repeats them, since it
cannot import Python)."""

from __future__ import annotations

import inspect
from dataclasses import fields

import pytest

import delaycv
from delaycv.cli import build_parser, main
from delaycv.common import choices, defaults
from delaycv.common.bounds import BOUNDS
from delaycv.common.errors import ConfigError
from delaycv.common.records import plain
from delaycv.figures.settings import FigureSettings, make_figure_settings
from delaycv.metrics import Fading, Sliding, Tumbling, make_estimator
from delaycv.metrics.effort_scope import EffortScope, make_effort_scope
from delaycv.protocol.settings import make_settings
from delaycv.protocol.validation import Validation, make_validation
from delaycv.stats.settings import (
    CompareSettings,
    RankingSettings,
    make_compare_settings,
    make_ranking_settings,
)
from delaycv.study.loading import load_config
from delaycv.study.schema import SCHEMA_PATH
from delaycv.study.stage_settings import figure_settings, ranking_settings
from delaycv.study.yaml_file import read_yaml


def schema_default(*path: str):
    node = read_yaml(SCHEMA_PATH)
    for key in path:
        node = node["properties"][key]
    return node["default"]


def test_the_schema_repeats_the_defaults():
    assert schema_default("validation", "scheme") == defaults.SCHEME
    assert schema_default("validation", "folds") == defaults.FOLDS
    assert schema_default("validation", "seed") == defaults.VALIDATION_SEED
    assert schema_default("validation", "evaluate") == defaults.EVALUATE
    assert schema_default("estimator", "kind") == defaults.ESTIMATOR
    assert schema_default("effort_scope", "kind") == defaults.EFFORT_SCOPE
    assert schema_default("checkpoints", "every") == defaults.EVERY
    assert schema_default("evaluation", "threshold") == defaults.THRESHOLD
    assert schema_default("evaluation", "prediction_noise") == defaults.PREDICTION_NOISE
    assert schema_default("evaluation", "corrected") == defaults.CORRECTED


def test_the_workflow_config_fills_the_defaults():
    config = load_config(
        {
            "datasets": {"d": {"generate": {"rows": 10}}},
            "learners": {"nc": {"class": "NoChange"}},
            "seeds": [1],
            "policies": {"ideal": {"preset": "ideal"}},
        }
    )
    assert config["validation"] == defaults.validation_spec()
    assert config["estimator"] == {"kind": defaults.ESTIMATOR, "alpha": defaults.ALPHA}
    assert config["effort_scope"] == {"kind": defaults.EFFORT_SCOPE}
    assert config["checkpoints"]["every"] == defaults.EVERY
    assert config["evaluation"]["threshold"] == defaults.THRESHOLD


def test_the_cli_defaults():
    args = build_parser("evaluate").parse_args(
        ["evaluate", "s.parquet", "--learner", "NoChange", "--out", "x"]
    )
    assert args.policy == defaults.POLICY
    assert args.validation == defaults.SCHEME and args.folds is None
    assert args.seed == defaults.SEED and args.validation_seed == defaults.VALIDATION_SEED
    assert args.evaluate == defaults.EVALUATE
    assert args.estimator == defaults.ESTIMATOR and args.alpha is None
    assert args.every == defaults.EVERY
    assert args.threshold == defaults.THRESHOLD and args.noise == defaults.PREDICTION_NOISE
    from delaycv.cli.evaluate import estimator_spec_from

    assert estimator_spec_from(args) == {"kind": defaults.ESTIMATOR, "alpha": defaults.ALPHA}
    from delaycv.cli.evaluate import effort_scope_spec_from

    assert args.effort_scope == defaults.EFFORT_SCOPE and args.effort_width is None
    assert effort_scope_spec_from(args) == {"kind": defaults.EFFORT_SCOPE}


def test_the_settings_and_api_defaults():
    assert defaults.ESTIMATOR == "fading"
    assert make_estimator(None) == Fading(defaults.ALPHA)
    assert make_estimator("sliding") == Sliding(defaults.WIDTH)
    assert make_estimator({"kind": "tumbling"}) == Tumbling(defaults.SIZE)
    assert make_validation({}) == Validation(
        defaults.SCHEME, defaults.FOLDS, defaults.VALIDATION_SEED, defaults.EVALUATE
    )
    assert make_validation({"scheme": "prequential"}).folds == defaults.PREQUENTIAL_FOLDS
    for function in (make_settings, delaycv.evaluate):
        params = inspect.signature(function).parameters
        assert params["seed"].default == defaults.SEED
        assert params["every"].default == defaults.EVERY
        assert params["estimator"].default is None  # make_estimator(None): the default
        assert params["policy"].default == defaults.POLICY
    assert inspect.signature(make_settings).parameters["effort_scope"].default is None
    settings = make_settings(learner="NoChange")
    assert settings.effort_scope == make_effort_scope(None) == EffortScope(defaults.EFFORT_SCOPE)
    assert make_effort_scope("sliding").width == defaults.WIDTH
    assert settings.threshold == defaults.THRESHOLD
    assert settings.prediction_noise == defaults.PREDICTION_NOISE
    assert settings.corrected is defaults.CORRECTED
    assert settings.validation == make_validation({})
    api = inspect.signature(delaycv.evaluate).parameters
    assert api["policy"].default == defaults.POLICY and api["validation"].default is None


@pytest.mark.parametrize(
    "policy, missing",
    [
        (["--policy", "verification"], "--window"),
        (["--policy", "delay"], "--window"),
        (["--policy", "hitl"], "--pos-window"),
        (["--policy", "hitl", "--pos-window", "7d"], "--neg-window"),
    ],
)
def test_a_policy_without_its_window_exits_2(tmp_path, capsys, policy, missing):
    """No silent 90 days: the missing window is named, before the stream is even read."""
    out = tmp_path / "run"
    args = ["evaluate", str(tmp_path / "none.parquet"), "--learner", "NoChange", *policy]
    assert main([*args, "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"delaycv: error: option {missing}: ")
    assert "no default window" in err and "Traceback" not in err
    assert not out.exists()


def test_the_command_line_choices_are_the_library_kinds():
    """delaycv.common.choices names the schemes and estimator kinds (light, for the command line); the
    estimators' classes make the kinds: the two agree, in order."""
    from delaycv import metrics
    from delaycv.common import choices

    assert choices.ESTIMATORS == metrics.ESTIMATORS


# --------------------------------------------------------------------------- the later stages


def schema_property(key: str) -> dict:
    """The schema of the config key ``key`` (``tests.alpha``)."""
    node = {"properties": read_yaml(SCHEMA_PATH)["properties"]}
    for part in key.split("."):
        node = node["properties"][part]
    return node


STAGE_SETTINGS = [CompareSettings, RankingSettings, FigureSettings]


@pytest.mark.parametrize("settings", STAGE_SETTINGS, ids=lambda s: s.__name__)
def test_the_schema_repeats_each_stage_s_defaults(settings):
    """Every field a stage's settings read from the study config has the schema's default (the
    values the workflow runs with) as its own (the values of the command line and the library);
    the figures' metrics, without a default in the schema, are the tested metrics; a key without
    a default is None (the contrasts' reference: delaycv.common.defaults.contrast_reference of the
    study's policies, which the loader and ``delaycv compare`` apply)."""
    checked = 0
    for f in fields(settings):
        key = settings.KEYS[f.name]
        if "." not in key:  # set by the command only
            continue
        node = schema_property(key)
        if key == "figures.metric":
            assert "default" not in node and f.default == defaults.TEST_METRICS
        elif (
            "default" not in node
        ):  # none (figures.learner), or the policies' (contrasts.reference)
            assert f.default is None, key
        else:
            assert plain(node["default"]) == plain(f.default), key
        checked += 1
    assert checked >= 5


def test_the_schema_repeats_the_stages_ranges_and_choices():
    assert schema_property("tests.resamples")["minimum"] == 1
    alpha = schema_property("tests.alpha")
    assert (alpha["exclusiveMinimum"], alpha["exclusiveMaximum"]) == (0, 1)
    dpi = schema_property("figures.dpi")  # (its bound: tests/common/test_size_bounds.py)
    assert (dpi["minimum"], dpi["maximum"]) == (BOUNDS["dpi"].minimum, BOUNDS["dpi"].maximum)
    assert tuple(schema_property("figures.formats")["items"]["enum"]) == choices.FIGURE_FORMATS
    assert tuple(schema_property("figures.reference")["enum"]) == choices.REFERENCES
    assert tuple(schema_property("tests.references")["items"]["enum"]) == choices.REFERENCES
    assert tuple(schema_property("rankings.version")["enum"]) == choices.RANKING_VERSIONS


def test_a_stage_setting_out_of_range_is_refused_at_its_key_by_the_config_and_the_maker():
    """One rule for each range, checked by the schema when the config loads and by the settings'
    makers (the command line, the rule scripts): both name the key."""
    study = {
        "datasets": {"d": {"generate": {"rows": 10}}},
        "learners": {"nc": {"class": "NoChange"}},
        "seeds": [1],
        "policies": {"ideal": {"preset": "ideal"}},
    }
    for key, value, maker in (
        ("figures.dpi", 3000, lambda v: make_figure_settings(dpi=v)),
        ("figures.dpi", 0, lambda v: make_figure_settings(dpi=v)),
        ("tests.resamples", 0, lambda v: make_compare_settings(resamples=v)),
        ("tests.alpha", 1.0, lambda v: make_ranking_settings(alpha=v)),
    ):
        section, name = key.split(".")
        with pytest.raises(ConfigError, match=f"key {key}"):
            load_config({**study, section: {name: value}}, learners=False)
        with pytest.raises(ConfigError, match=f"key {key}"):
            maker(value)


def test_the_figures_follow_the_tested_metrics_unless_the_config_names_others():
    study = {
        "datasets": {"d": {"generate": {"rows": 10}}},
        "learners": {"nc": {"class": "NoChange"}},
        "seeds": [1],
        "policies": {"ideal": {"preset": "ideal"}},
        "tests": {"metrics": ["gmean", "popt"]},
    }
    config = load_config(study, learners=False)
    assert figure_settings(config).metrics == ("gmean", "popt")
    assert ranking_settings(config).figure_metrics == ("gmean", "popt")
    config = load_config({**study, "figures": {"metric": "fpr_1"}}, learners=False)
    assert figure_settings(config).metrics == ("fpr_1",)
    assert ranking_settings(config).ranked_metrics == ("gmean", "popt", "fpr_1")
