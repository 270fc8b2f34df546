"""The compiled fold loop (``delaycv/engine/_loop.pyx``) gives the Python loop's outputs, bit for bit.

Each setting runs twice, with the compiled loop and with the Python loop (``compiled.LOOP`` set to
None), and every output is compared: fold tables (counts, metric values, CPU time apart), summaries,
prediction logs, fold infos. The brute-force tests (``tests/engine/test_against_brute_force.py``) run both loops
too (with an observer the Python loop serves, without one the compiled loop). Where the compiled
loop is not built these tests are skipped, unless ``DELAYCV_REQUIRE_COMPILED_LOOP`` is set (CI
sets it): then a missing build fails.
"""

from __future__ import annotations

import importlib.util
import json
import os
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from river.tree import HoeffdingTreeClassifier

from delaycv.common import native
from delaycv.common.errors import ConfigError
from delaycv.data.synthetic import generate_stream
from delaycv.engine import compiled
from delaycv.engine.chunk import ChunkView
from tests.support.compiled import compiled_required
from tests.support.engine_runs import evaluate

REQUIRED = compiled_required()

needs_build = pytest.mark.skipif(
    compiled.LOOP is None and not REQUIRED,
    reason=f"the compiled loop is not in use: {compiled.status()}",
)


def test_the_compiled_loop_is_built_where_required():
    """The compiled loop is the one in use, built from the _loop.pyx beside it, wherever it was
    built (make venv compiles it) or is required (CI); skipped only where none was built (no C
    compiler) and none is required, or where DELAYCV_PURE_PYTHON=1 asks for the Python loop."""
    built = importlib.util.find_spec("delaycv.engine._loop") is not None
    if not REQUIRED and (not built or native.pure_python()):
        pytest.skip(f"the compiled loop is not required here: {compiled.status()}")
    assert compiled.LOOP is not None, compiled.status()
    assert compiled.source_digest() == compiled.LOOP.SOURCE_DIGEST


@needs_build
def test_a_build_of_another_source_is_not_used(monkeypatch):
    monkeypatch.setattr(compiled, "source_digest", lambda path=compiled.SOURCE: "0" * 64)
    with pytest.warns(RuntimeWarning, match="was not built from the _loop.pyx beside it"):
        loop, reason = compiled._load()
    assert loop is None and "make venv" in reason


@needs_build
def test_the_python_loop_on_request(monkeypatch):
    monkeypatch.setenv(compiled.PURE_PYTHON, "1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loop, reason = compiled._load()
    assert loop is None and compiled.PURE_PYTHON in reason
    monkeypatch.setenv(compiled.PURE_PYTHON, "0")
    assert compiled._load()[0] is compiled.LOOP


@pytest.mark.parametrize("value", ["yes", "true", "2", " 1"])
def test_a_value_of_the_variable_that_is_not_1_or_0_is_refused(monkeypatch, value):
    monkeypatch.setenv(compiled.PURE_PYTHON, value)
    with pytest.raises(
        ConfigError, match=f"environment variable {compiled.PURE_PYTHON}: '{value}'"
    ):
        compiled._load()


def test_the_loader_reports_a_missing_build(monkeypatch):
    monkeypatch.delenv(compiled.PURE_PYTHON, raising=False)
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "delaycv.engine._loop" else find_spec(name, *a),
    )
    loop, reason = compiled._load()
    assert loop is None and "not built" in reason


@needs_build
def test_the_loader_reports_a_build_that_cannot_load(monkeypatch):
    monkeypatch.delenv(compiled.PURE_PYTHON, raising=False)
    monkeypatch.setattr("builtins.__import__", _refusing(__import__, "_loop"))
    loop, reason = compiled._load()
    assert loop is None and "cannot be loaded" in reason


def _refusing(original, name: str):
    """``__import__`` that fails for ``from delaycv.engine import <name>``."""

    def imp(module, globals=None, locals=None, fromlist=(), level=0):
        if module == "delaycv.engine" and fromlist and name in fromlist:
            raise ImportError(f"cannot import name {name!r}")
        return original(module, globals, locals, fromlist, level)

    return imp


HT = {"class": "tree.HoeffdingTreeClassifier", "params": {"grace_period": 50}}
SETTINGS = {
    "hitl-bootstrap-fading": dict(
        learner=HT,
        policy={"preset": "hitl", "pos_window": "1d", "neg_window": "30d"},
        validation={"scheme": "bootstrap", "folds": 3, "seed": 2},
        estimator={"kind": "fading", "alpha": 0.99},
        every=100,
    ),
    "hitl-inspection-noise-flush": dict(
        learner={"class": "naive_bayes.GaussianNB"},
        policy={"preset": "hitl", "pos_window": "2d", "neg_window": "90d", "inspection_error": 0.2},
        validation={"scheme": "bootstrap", "folds": 2, "seed": 1},
        prediction_noise=0.1,
        flush=True,
        every=250,
    ),
    "verification-cv-trained": dict(
        learner=HT,
        policy={"preset": "verification", "window": "30d"},
        validation={"scheme": "cv", "folds": 3, "evaluate": "trained"},
        estimator={"kind": "cumulative"},
        every=300,
    ),
    "delay-split-threshold": dict(
        learner={"class": "NoChange"},
        policy={"preset": "delay", "window": "7d"},
        validation={"scheme": "split", "folds": 2},
        threshold=0.3,
        every=200,
    ),
    "ideal-prequential": dict(
        learner={
            "pipeline": [
                {"class": "preprocessing.StandardScaler"},
                {"class": "linear_model.LogisticRegression"},
            ]
        },
        policy="ideal",
        validation={"scheme": "prequential", "folds": 1},
        estimator={"kind": "sliding", "width": 200},
        every=500,
    ),
    "general-count-windows": dict(
        learner={"class": "Prior"},
        policy={
            "preset": "general",
            "pos_window": "40i",
            "neg_window": "300i",
            "pos_expiry": "truth",
            "neg_expiry": "negative",
            "feedback": True,
        },
        validation={"scheme": "bootstrap", "folds": 2, "seed": 3},
        flush=True,
        every=150,
    ),
}


def _outputs(stream, settings: dict, *, progress) -> dict:
    result = evaluate(stream, keep_predictions=True, progress=progress, **settings)
    folds = result.folds.drop(columns=["cpu_seconds"])
    return {
        "folds": folds,
        "summary": result.summary[result.summary["metric"] != "cpu_seconds"],
        "predictions": result.predictions,
        "info": [{k: v for k, v in f.items() if k != "cpu_seconds"} for f in result.info["folds"]],
    }


@needs_build
@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_both_loops_give_the_same_outputs(monkeypatch, name):
    stream = generate_stream(rows=2500, seed=5)
    calls = []

    def run_rows(*args):
        calls.append(args[3:5])
        return real.run_rows(*args)

    real = compiled.LOOP
    monkeypatch.setattr(compiled, "LOOP", SimpleNamespace(run_rows=run_rows))
    blocks: list[int] = []
    fast = _outputs(stream, SETTINGS[name], progress=blocks.append)
    assert sum(hi - lo for lo, hi in calls) == 2500 * (len(fast["info"]))  # every instance
    monkeypatch.setattr(compiled, "LOOP", None)
    blocks_python: list[int] = []
    slow = _outputs(stream, SETTINGS[name], progress=blocks_python.append)
    assert blocks == blocks_python  # the progress calls too
    assert fast["info"] == slow["info"]
    for key in ("folds", "summary", "predictions"):
        pd.testing.assert_frame_equal(fast[key], slow[key], check_exact=True)
    assert np.isfinite(fast["folds"]["accuracy"]).any()  # the metrics were computed


class FailingTree(HoeffdingTreeClassifier):
    """Fails at its 300th training call (a parameter river accepts but cannot use)."""

    def __init__(self, **params) -> None:
        super().__init__(**params)
        self.calls = 0

    def learn_one(self, x, y, *, w=1.0):
        self.calls += 1
        if self.calls == 300:
            raise ValueError("split criterion cannot handle this stream")
        super().learn_one(x, y, w=w)


@pytest.fixture(params=["compiled", "python"])
def either_loop(request, monkeypatch):
    """Each test twice: with the compiled loop (skipped where it is not built) and the Python."""
    if request.param == "python":
        monkeypatch.setattr(compiled, "LOOP", None)
    elif compiled.LOOP is None and not REQUIRED:
        pytest.skip(compiled.status())
    return request.param


def test_a_failing_learner_is_named_by_either_loop(either_loop):
    stream = generate_stream(rows=1000, seed=5)
    with pytest.raises(ConfigError, match="failed on fold 0 while processing instances 1..1000"):
        evaluate(stream, {"class": "tests.engine.test_compiled_loop:FailingTree"}, every=100)


def test_an_error_of_the_loop_itself_is_not_blamed_on_the_learner(monkeypatch, either_loop):
    # a broken chunk view: a candidate whose slot is not a number
    build = ChunkView.build

    def broken(*args, **kwargs):
        view = build(*args, **kwargs)
        if view.cand_slot:
            view.cand_slot[0] = "slot"
        return view

    monkeypatch.setattr(ChunkView, "build", broken)
    stream = generate_stream(rows=1000, seed=5)
    policy = {"preset": "hitl", "pos_window": "1d", "neg_window": "30d"}
    with pytest.raises(TypeError):
        evaluate(stream, {"class": "NoChange"}, policy, every=100)


def test_a_run_records_its_loops_and_warns_of_python_loops_run_unasked(monkeypatch):
    from delaycv.metrics import corrected, effort, states

    monkeypatch.delenv(compiled.PURE_PYTHON, raising=False)
    stream = generate_stream(rows=300, seed=2)
    # where they are built and loaded: the compiled loops, named, and no warning
    monkeypatch.setattr(compiled, "status", lambda: "the compiled loop (_loop.so)")
    for module, name in ((effort, "LOOP_STATUS"), (corrected, "KERNEL_STATUS")):
        monkeypatch.setattr(module, name, "the compiled loop (x.so)")
    monkeypatch.setattr(states, "SUMS_STATUS", "the compiled loop (x.so)")
    info = evaluate(
        stream, HoeffdingTreeClassifier(), validation={"scheme": "bootstrap", "folds": 2}
    ).info
    assert info["loops"]["fold"] == "the compiled loop (_loop.so)"
    assert not [w for w in info["warnings"] if "without their compiled loops" in w]
    # not built: one warning naming the parts and why, before the run; the record says so
    unbuilt = "the Python loop: the compiled loop is not built (to build it: a C compiler, ...)"
    monkeypatch.setattr(compiled, "status", lambda: unbuilt)
    monkeypatch.setattr(effort, "LOOP_STATUS", unbuilt)
    info = evaluate(
        stream, HoeffdingTreeClassifier(), validation={"scheme": "bootstrap", "folds": 2}
    ).info
    assert info["loops"]["effort"] == unbuilt
    (warning,) = [w for w in info["warnings"] if "without their compiled loops" in w]
    assert warning.startswith(
        "delaycv runs without their compiled loops the folds and the effort-aware measures (the "
        "compiled loop is not built): the same numbers, several times slower"
    )
    # the corrected reference's numpy twin sums in another order: its numbers to rounding
    loops = {**info["loops"], "corrected": unbuilt}
    assert (
        "the same numbers (the corrected reference's up to rounding), several times"
        in (compiled.slow_loops(loops)[0])
    )
    # asked for (DELAYCV_PURE_PYTHON=1), or serving an observer: no warning
    monkeypatch.setenv(compiled.PURE_PYTHON, "1")
    assert compiled.slow_loops(info["loops"]) == []
    monkeypatch.delenv(compiled.PURE_PYTHON)
    monkeypatch.setattr(effort, "LOOP_STATUS", "the compiled loop (x.so)")
    observed = compiled.run_loops(moa=False, observed=True)
    assert observed["fold"].startswith("the Python loop: it serves the observers")
    assert compiled.slow_loops(observed) == []
    # a MOA learner without the Java loop: river's loop calls MOA for each instance, and says so
    from delaycv.jvm import rows

    unbuilt_java = "the Python loop: the Java fold loop is not built (python -m delaycv.jvm.build)"
    monkeypatch.setattr(rows, "USABLE", False)
    monkeypatch.setattr(rows, "STATUS", unbuilt_java)
    monkeypatch.setattr(compiled, "LOOP", object())  # (river's compiled loop is built)
    moa = compiled.run_loops(moa=True, observed=False)
    assert moa["fold"] == (
        "MOA's learner called instance by instance through JPype: the Java fold loop is not "
        "built (python -m delaycv.jvm.build)"
    )
    assert compiled.slow_loops(moa) == [
        "delaycv runs without their compiled loops the folds (the Java fold loop is not built "
        "(python -m delaycv.jvm.build)): the same numbers, several times slower (a MOA learner's "
        "run on git(master) 3 to 4 times); make venv builds the compiled loops (with a C "
        "compiler, and a JDK for MOA's)"
    ]


def test_a_checkout_without_its_build_warns_at_the_run(tmp_path):
    # the package on the PYTHONPATH without its compiled modules (a checkout run from another
    # checkout's environment): the run warns on stderr, and run.json records why
    import shutil
    import subprocess
    import sys

    from delaycv.data.stream_file import write_stream
    from tests.support.paths import REPO

    shutil.copytree(
        REPO / "delaycv",
        tmp_path / "pkg" / "delaycv",
        ignore=shutil.ignore_patterns("*.so", "__pycache__"),
    )
    write_stream(generate_stream(rows=200, seed=1), tmp_path / "s.parquet")
    argv = ["evaluate", "s.parquet", "--learner", "NoChange", "--folds", "2", "--out", "run"]
    env = {k: v for k, v in os.environ.items() if k != compiled.PURE_PYTHON}
    done = subprocess.run(
        [sys.executable, "-m", "delaycv", *argv, "--quiet"],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(tmp_path / "pkg")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (
        "delaycv: warning: delaycv runs without their compiled loops the folds, the effort-aware "
        "measures, the corrected reference, the fading estimator's sums and the metrics' exp, "
        "log and pow (the compiled loop is not built)"
    ) in done.stderr
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert set(info["loops"]) == {"fold", "effort", "corrected", "fading", "libm"}
    assert all(
        why.startswith("the Python loop: the compiled loop is not built")
        for why in info["loops"].values()
    )
