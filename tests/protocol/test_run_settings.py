"""RunSettings: one run, checked once, the same whichever way it is described (command line, Python
API, workflow job), handed whole to the engine and recorded in run.json."""

from __future__ import annotations

import json

import pytest

import delaycv
from delaycv import engine
from delaycv.cli import build_parser
from delaycv.cli.evaluate import settings_from
from delaycv.common.errors import ConfigError
from delaycv.data.synthetic import generate_stream
from delaycv.metrics import Fading, Sliding
from delaycv.metrics.effort_scope import EffortScope
from delaycv.protocol.settings import RunSettings, make_settings, workflow_settings
from delaycv.study.runs import (
    effort_scope_spec,
    estimator_spec,
    evaluation_options,
    validation_spec,
)

HITL = {"preset": "hitl", "pos_window": "3d", "neg_window": "30d"}


def cli_settings(*options: str) -> RunSettings:
    args = build_parser().parse_args(["evaluate", "s.parquet", "--out", "o", *options])
    return settings_from(args)


def api_settings(monkeypatch, **kwargs) -> RunSettings:
    """The settings delaycv.evaluate hands to the engine (the engine is not run)."""
    seen = {}

    class Stop(Exception):
        pass

    def capture(stream, settings, **hooks):
        seen["settings"] = settings
        raise Stop

    monkeypatch.setattr(engine, "evaluate", capture)
    with pytest.raises(Stop):
        delaycv.evaluate(generate_stream(rows=200, seed=1), progress=False, **kwargs)
    return seen["settings"]


def test_the_three_routes_give_one_settings(monkeypatch):
    """The same run from the command line, the API and a workflow job: equal settings."""
    cli = cli_settings(
        "--learner", "tree.HoeffdingTreeClassifier", "--param", "grace_period=50",
        "--policy", "hitl", "--pos-window", "3d", "--neg-window", "30d",
        "--validation", "cv", "--folds", "4", "--seed", "7", "--estimator", "sliding",
        "--width", "200", "--every", "100", "--threshold", "0.4", "--noise", "0.1", "--flush",
        "--dataset", "d", "--learner-name", "ht", "--effort-scope", "sliding",
        "--effort-width", "300",
    )  # fmt: skip
    learner = {"class": "tree.HoeffdingTreeClassifier", "params": {"grace_period": 50}}
    api = api_settings(
        monkeypatch,
        model=learner,
        policy="hitl",
        pos_window="3d",
        neg_window="30d",
        validation="cv",
        folds=4,
        seed=7,
        estimator={"kind": "sliding", "width": 200},
        effort_scope={"kind": "sliding", "width": 300},
        every=100,
        threshold=0.4,
        prediction_noise=0.1,
        flush=True,
        dataset="d",
    )
    study = {
        "validation": {"scheme": "cv", "folds": 4, "seed": 1, "evaluate": "all",
                       "fixed_split": False},
        "estimator": {"kind": "sliding", "width": 200},
        "effort_scope": {"kind": "sliding", "width": 300},
        "evaluation": {"threshold": 0.4, "prediction_noise": 0.1, "flush": True,
                       "keep_predictions": False, "same_learner_seed": False},
        "checkpoints": {"every": 100},
    }  # fmt: skip
    options = json.loads(
        json.dumps(
            {
                "validation": validation_spec(study),
                "estimator": estimator_spec(study),
                "effort_scope": effort_scope_spec(study),
                "options": evaluation_options(study),
            }
        )
    )  # what the rule's params carry
    job = workflow_settings(
        options,
        learner=learner,
        policy={**HITL, "name": "hitl_3d_30d"},
        seed=7,
        run_keys={"dataset": "d", "learner": "ht"},
    )
    assert cli.estimator == api.estimator == job.estimator == Sliding(200)
    assert cli.effort_scope == api.effort_scope == job.effort_scope == EffortScope("sliding", 300)
    assert job.record()["effort_scope"] == {"kind": "sliding", "width": 300}
    assert cli.policy == api.policy
    assert cli.policy.spec() == job.policy.spec() and job.policy.name == "hitl_3d_30d"
    for settings in (api, job):
        assert settings.validation == cli.validation
        assert (settings.seed, settings.every, settings.threshold) == (7, 100, 0.4)
        assert (settings.prediction_noise, settings.flush) == (0.1, True)
        assert settings.folds == (0, 1, 2, 3)
    assert cli.names == job.names == {"dataset": "d", "learner": "ht"}
    assert api.names == {"dataset": "d"}


def test_the_old_estimator_kind_window_is_sliding_on_every_route_with_a_warning(
    monkeypatch, capsys
):
    """``window``, the sliding estimator's old kind, is still read: by the command line (a
    ``delaycv: warning`` naming ``sliding``), the API (a DeprecationWarning) and a workflow job's
    params (the config loader has made it ``sliding``); the run's record says ``sliding``."""
    cli = cli_settings("--learner", "NoChange", "--estimator", "window", "--width", "20")
    err = capsys.readouterr().err
    assert "delaycv: warning: option --estimator: 'window' is deprecated: use 'sliding'" in err
    with pytest.warns(DeprecationWarning, match="'window' is deprecated: use 'sliding'"):
        api = api_settings(monkeypatch, model="NoChange", estimator={"kind": "window", "width": 20})
    study = {"estimator": {"kind": "window", "width": 20}}
    assert estimator_spec(study) == {"kind": "sliding", "width": 20}
    for settings in (cli, api):
        assert settings.estimator == Sliding(20)
        assert settings.record()["estimator"] == {"kind": "sliding", "width": 20}


@pytest.mark.parametrize("kind", ["sliding", "window"])
def test_a_run_s_outputs_name_the_sliding_estimator_sliding(tmp_path, capsys, kind):
    """``delaycv evaluate --estimator sliding`` (or the old ``window``, with a warning): the
    tables' estimator column and run.json's specs say ``sliding``."""
    import pandas as pd

    from delaycv.cli import main
    from delaycv.data.stream_file import write_stream

    stream = tmp_path / "s.parquet"
    write_stream(generate_stream(rows=300, seed=1), stream)
    out = tmp_path / "run"
    args = ["evaluate", str(stream), "--learner", "naive_bayes.GaussianNB", "--folds", "2"]
    args += ["--estimator", kind, "--width", "50", "--every", "100", "--out", str(out), "--quiet"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert ("'window' is deprecated: use 'sliding'" in err) == (kind == "window")
    for table in ("folds.parquet", "summary.parquet"):
        assert set(pd.read_parquet(out / table)["estimator"]) == {"sliding"}
    info = json.loads((out / "run.json").read_text())
    assert info["specs"]["estimator"] == {"kind": "sliding", "width": 50}


def test_defaults_and_record():
    s = make_settings(learner="NoChange")
    assert s.policy.name == "ideal" and s.validation.scheme == "bootstrap"
    assert s.estimator == Fading(0.99) and s.every == 500 and s.folds == tuple(range(10))
    record = s.record()
    assert record["policy"] == {"preset": "ideal"} or record["policy"]["name"] == "ideal"
    assert record["estimator"] == {"kind": "fading", "alpha": 0.99}
    assert record["validation"]["folds"] == 10 and record["folds"] == list(range(10))
    assert json.loads(json.dumps(record)) == record  # plain data
    # a subset of folds, sorted, duplicates folded
    assert make_settings(learner="NoChange", folds_subset=[3, 1, 1]).folds == (1, 3)


@pytest.mark.parametrize(
    "given, key",
    [
        ({"threshold": 2}, "key threshold"),
        ({"threshold": True}, "key threshold"),
        ({"prediction_noise": -0.1}, "key prediction_noise"),
        ({"prediction_noise": float("nan")}, "key prediction_noise"),
        ({"threshold": float("nan")}, "key threshold"),
        ({"seed": -1}, "key seed"),
        ({"seed": 2**70}, "key seed"),
        ({"jobs": 0}, "key jobs"),
        ({"jobs": True}, "key jobs"),
        ({"flush": "yes"}, "key flush"),
        ({"every": 0}, "key checkpoints.every: every 0 (expected an integer >= 1"),
        ({"every": 2.5}, "key checkpoints.every"),
        ({"every": -1}, "key checkpoints.every"),
        ({"every": True}, "key checkpoints.every"),
        ({"checkpoints": {"fractions": [1.5]}}, "key checkpoints.fractions"),
        ({"checkpoints": {"positions": [0]}}, "key checkpoints.positions"),
        ({"checkpoints": {"moments": [1]}}, "key checkpoints.moments"),
        ({"folds_subset": [10]}, "key folds_subset"),
        ({"folds_subset": []}, "key folds_subset"),
        ({"folds_subset": [True]}, "key folds_subset"),
        ({"run_keys": {"seed": 3}}, "key run_keys.seed"),
        ({"policy": {"preset": "hitl", "pos_window": "7d"}}, "key policy.neg_window"),
        ({"estimator": {"kind": "fading", "alpha": 0}}, "key estimator.alpha"),
        ({"validation": {"scheme": "cv", "folds": 1}}, "key validation.folds"),
        ({"learner": "tree.NoSuchTree"}, "key learner"),
    ],
)
def test_every_value_is_checked_with_its_key(given, key):
    with pytest.raises(ConfigError) as err:
        make_settings(**{"learner": "NoChange", **given})
    assert str(err.value).startswith(key), str(err.value)


def test_the_engine_takes_settings_only():
    stream = generate_stream(rows=100, seed=1)
    with pytest.raises(ConfigError, match="argument settings"):
        engine.evaluate(stream, {"learner": "NoChange"})
    settings = make_settings(learner="NoChange", validation={"scheme": "prequential"}, every=50)
    result = engine.evaluate(stream, settings)
    assert result.info["specs"] == settings.record()
    assert sorted(set(result.folds["checkpoint"])) == [50, 100]


def test_settings_are_frozen():
    settings = make_settings(learner="NoChange")
    with pytest.raises(AttributeError):
        settings.seed = 2  # type: ignore[misc]


def test_numpy_booleans_are_booleans_and_numbers_are_not():
    """A flag read from a numpy array or a pandas frame is a flag; 1 or "yes" is refused."""
    import numpy as np

    settings = make_settings(
        learner="NoChange", flush=np.True_, validation={"fixed_split": np.False_}
    )
    assert settings.flush is True and settings.validation.fixed_split is np.False_
    for value in (1, "yes", np.int8(1)):
        with pytest.raises(ConfigError, match="key flush: flush .* is not a boolean"):
            make_settings(learner="NoChange", flush=value)
