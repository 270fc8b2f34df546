"""Sizes that cannot be: every size-like value has one bound (``delaycv.common.bounds``), checked
the same by the workflow's config (``delaycv check``), the command line and the API, with one line
that names the key or option, the value and the bound (a sliding width of 1e12 tried to allocate
313 TiB; widths, sizes, folds and windows of 2**63 ended in tracebacks; the config's
``estimator.width: 1.0e+20`` passed ``check`` and every evaluate job's log was a traceback)."""

from __future__ import annotations

import numpy as np
import pytest

import delaycv
from delaycv.cli import main
from delaycv.common.bounds import BOUNDS, COUNT_MAX, check_size
from delaycv.common.errors import ConfigError, DelaycvError
from delaycv.data.stream_file import write_stream
from delaycv.study.checks import SIZE_KEYS
from delaycv.study.loading import load_study
from delaycv.study.schema import SCHEMA_PATH
from delaycv.study.yaml_file import read_yaml
from tests.support.engine_bruteforce import random_stream

BIG = 2**63


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_stream(random_stream(np.random.default_rng(3), 200), tmp_path / "s.parquet")
    return tmp_path


def _schema_node(*path: str) -> dict:
    node = read_yaml(SCHEMA_PATH)
    for key in path:
        node = node["properties"][key]
    return node


def test_the_schema_states_the_bounds():
    for path, name in SIZE_KEYS:
        node = _schema_node(*path)
        assert (node["minimum"], node["maximum"]) == (
            BOUNDS[name].minimum,
            BOUNDS[name].maximum,
        ), path
    dataset = _schema_node("datasets")["additionalProperties"]
    rows = dataset["properties"]["generate"]["properties"]
    assert (rows["rows"]["minimum"], rows["rows"]["maximum"]) == (1, BOUNDS["rows"].maximum)


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_each_bound_is_inclusive_and_refuses_floats_and_booleans(name):
    bound = BOUNDS[name]
    assert check_size(name, bound.maximum, "key k") == bound.maximum
    assert check_size(name, bound.minimum, "key k") == bound.minimum
    with pytest.raises(ConfigError, match=rf"key k: {name} {bound.maximum + 1} is too large"):
        check_size(name, bound.maximum + 1, "key k")
    with pytest.raises(ConfigError, match=f"{name} {bound.minimum - 1} is too small"):
        check_size(name, bound.minimum - 1, "key k")
    for value in (1e20, float(bound.minimum), True, "5"):
        with pytest.raises(ConfigError, match="is not an integer"):
            check_size(name, value, "key k")


def _study(work, extra: str) -> str:
    (work / "study.yaml").write_text(
        "datasets:\n  s: {path: s.parquet}\n  g: {generate: {rows: 300}}\n"
        "learners:\n  nc: {class: NoChange}\npolicies:\n  ideal: {preset: ideal}\n"
        "seeds: [1]\n" + extra
    )
    return "study.yaml"


@pytest.mark.parametrize(
    "extra, words",
    [
        ("estimator: {kind: sliding, width: 1.0e+20}", ["estimator.width", "width 1e+20"]),
        ("estimator: {kind: sliding, width: 10000001}", ["width 10000001 is too large"]),
        (f"estimator: {{kind: tumbling, size: {BIG}}}", ["estimator.size", "at most 9,007"]),
        (f"validation: {{folds: {BIG}}}", ["validation.folds", "at most 10,000"]),
        ("checkpoints: {every: 1.0e+30}", ["checkpoints.every", "every 1e+30 is not an integer"]),
        ("tests: {resamples: 1.0e+300}", ["tests.resamples", "an integer from 1 to 1,000,000"]),
        ("figures: {dpi: 99999}", ["figures.dpi", "at most 2,400"]),
        ("policies:\n  d: {preset: delay, window: 99999999999999999999d}", ["policies.d.window"]),
        (f"policies:\n  d: {{preset: delay, window: {BIG}i}}", ["too long"]),
    ],
)
def test_the_config_refuses_sizes_that_cannot_be(work, capsys, extra, words):
    if extra.startswith("policies"):  # (a second policies key would be a duplicate)
        (work / "study.yaml").write_text(
            "datasets:\n  s: {path: s.parquet}\nlearners:\n  nc: {class: NoChange}\nseeds: [1]\n"
            + extra
        )
        path = "study.yaml"
    else:
        path = _study(work, extra)
    assert main(["check", path]) == 2
    err = capsys.readouterr().err
    assert err.startswith("delaycv: error: study.yaml:") and len(err.splitlines()) == 1, err
    for word in words:
        assert word in err
    with pytest.raises(DelaycvError):  # the workflow loads the study the same way
        load_study([path], cwd=work)


def test_the_config_refuses_a_generated_stream_too_long(work, capsys):
    path = _study(work, "")
    text = (work / path).read_text().replace("rows: 300", "rows: 1000000000000")
    (work / path).write_text(text)
    assert main(["check", path]) == 2
    assert "key datasets.g.generate.rows: rows 1000000000000 is too large" in (
        capsys.readouterr().err
    )


def test_the_largest_sizes_pass_the_config(work, capsys):
    extra = (
        f"estimator: {{kind: tumbling, size: {COUNT_MAX}}}\nvalidation: {{folds: 10000}}\n"
        f"checkpoints: {{every: {COUNT_MAX}}}\ntests: {{resamples: 1000000}}\n"
        "figures: {dpi: 2400}"
    )
    assert main(["check", _study(work, extra)]) == 0, capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--estimator", "sliding", "--width", "1000000000000"], ["option --width", "10,000,000"]),
        (["--estimator", "sliding", "--width", str(BIG)], ["option --width", "too large"]),
        (["--estimator", "tumbling", "--size", str(BIG)], ["option --size", "too large"]),
        (["--folds", str(BIG)], ["option --folds", "at most 10,000"]),
        (["--every", str(BIG)], ["option --every", "too large"]),
        (["--jobs", str(BIG)], ["option --jobs", "too large"]),
        (["--policy", "delay", "--window", f"{BIG}i"], ["option --window", "too long"]),
        (["--policy", "delay", "--window", "99999999999999999999d"], ["option --window"]),
    ],
)
def test_the_command_line_refuses_sizes_that_cannot_be(work, capsys, extra, words):
    argv = ["evaluate", "s.parquet", "--learner", "NoChange", "--folds", "2", "--out", "run"]
    assert main([*argv, "--quiet", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("delaycv: error: ") and len(err.splitlines()) == 1, err
    for word in words:
        assert word in err
    assert not (work / "run").exists()


@pytest.mark.parametrize(
    "argv, words",
    [
        (["compare", "m.parquet", "--out", "t", "--resamples", "10000000000"], ["--resamples"]),
        (["generate", "g.parquet", "--rows", "1000000000000"], ["option --rows", "100,000,000"]),
        (["rank", "m.parquet", "--out", "r", "--dpi", "99999"], ["option --dpi", "at most 2,400"]),
        (["compare", "m.parquet", "--out", "t", "--checkpoint-position", str(BIG)], ["position"]),
    ],
)
def test_the_other_commands_refuse_sizes_that_cannot_be(work, capsys, argv, words):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("delaycv: error: ") and len(err.splitlines()) == 1, err
    for word in words:
        assert word in err
    assert sorted(p.name for p in work.iterdir()) == ["s.parquet"]


@pytest.mark.parametrize(
    "keywords, key",
    [
        ({"estimator": {"kind": "sliding", "width": 2**70}}, "key estimator.width"),
        ({"estimator": {"kind": "tumbling", "size": BIG}}, "key estimator.size"),
        ({"folds": BIG}, "key validation.folds"),
        ({"window": f"{BIG}i", "policy": "delay"}, "window"),
        ({"jobs": BIG}, "key jobs"),
    ],
)
def test_the_api_refuses_sizes_that_cannot_be(work, keywords, key):
    with pytest.raises(DelaycvError, match=key):
        delaycv.evaluate("s.parquet", "NoChange", progress=False, **keywords)


@pytest.mark.parametrize(
    "extra, words",
    [
        ("validation: {scheme: cv, folds: 1}", "key validation.folds: cross-validation with one"),
        ("estimator: {kind: fading, alpha: .nan}", "key estimator.alpha: alpha nan"),
        ("evaluation: {threshold: .nan}", "key evaluation.threshold: threshold nan"),
        ("estimator: {kind: sliding, width: 5.0}", "key estimator.width: width 5.0 is not an"),
    ],
)
def test_the_config_refuses_what_every_evaluate_job_would(work, capsys, extra, words):
    # each passed delaycv check and failed in every evaluate job's log
    assert main(["check", _study(work, extra)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and words in err, err
