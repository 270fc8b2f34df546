"""A river learner spec whose load-time check passed is not built again at the next start
(delaycv.study.passed_checks): the outcome is remembered under what it depends on, and a failure
never is."""

from __future__ import annotations

import copy

import pytest
import yaml

from delaycv.common.errors import ConfigError
from delaycv.study import passed_checks
from delaycv.study.loading import load_config
from tests.support.paths import REPO

SMALL = yaml.safe_load((REPO / "config" / "test-small.yaml").read_text())
NB = {"class": "river.naive_bayes.GaussianNB"}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache folder of this test; the learner builds the check makes, counted."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    from delaycv.protocol import learners

    built = []
    make = learners.make_river_learner

    def counted(spec, *args, **kwargs):
        if spec.get("class") != "NoChange":  # (the study's baseline, built too)
            built.append(spec)
        return make(spec, *args, **kwargs)

    monkeypatch.setattr(learners, "make_river_learner", counted)
    return built


def passed(spec) -> bool:
    return passed_checks.passed_before(passed_checks.passed_entry(spec))


def study(**learners) -> dict:
    return {**copy.deepcopy(SMALL), "learners": learners}


def test_a_spec_that_passed_is_not_built_again(cache):
    """Its check builds it twice (with seeds 1 and 2: whether the run's seed changes it) and
    remembers that too."""
    load_config(study(nb=NB), name="config.yaml")
    assert len(cache) == 2 and passed(NB) == "ignores the run seed"
    load_config(study(nb=NB, other_name=NB), name="config.yaml")  # the spec, not its name
    assert len(cache) == 2
    with_params = {"class": "river.forest.ARFClassifier", "params": {"n_models": 2}}
    assert not passed(with_params)
    load_config(study(nb=with_params), name="config.yaml")
    assert len(cache) == 4 and passed(with_params) == "takes the run seed"


def test_a_spec_that_failed_is_checked_again_each_time(cache):
    wrong = {"class": "tree.HoeffdingTreeClassifier", "params": {"grace_period": "9"}}
    for attempt in (1, 2):
        with pytest.raises(ConfigError, match="grace_period"):
            load_config(study(ht=wrong), name="config.yaml")
        assert len(cache) == attempt and not passed(wrong)


def test_another_river_or_delaycv_checks_again(cache, monkeypatch):
    load_config(study(nb=NB), name="config.yaml")
    assert passed(NB)
    version = passed_checks.importlib.metadata.version
    monkeypatch.setattr(
        passed_checks.importlib.metadata,
        "version",
        lambda name: "0.0.1" if name == "river" else version(name),
    )
    assert not passed(NB)
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(passed_checks.cache_dir().parent))
    monkeypatch.setattr(passed_checks, "source_digest", lambda modules: "another delaycv")
    assert not passed(NB)


def test_a_cache_folder_that_cannot_be_written_only_costs_time(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    load_config(study(nb=NB), name="config.yaml")
    assert not passed(NB)
