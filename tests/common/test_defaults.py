"""One set of defaults (issue 13): the CLI, the Python API, the engine and the workflow config agree
with ``delaycv.common.defaults`` (the JSON schema repeats them, since it cannot import Python)."""

from __future__ import annotations

import inspect

import pytest

import delaycv
from delaycv.cli import build_parser, main
from delaycv.common import defaults
from delaycv.metrics import Fading, Sliding, Tumbling, make_estimator
from delaycv.protocol.settings import make_settings
from delaycv.protocol.validation import Validation, make_validation
from delaycv.study.loading import load_config
from delaycv.study.schema import SCHEMA_PATH
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
    settings = make_settings(learner="NoChange")
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
