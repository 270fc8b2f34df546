"""MOA learners that cannot work here are refused in one line, naming the learner and the key; a
learner that mostly gives no probability is warned about; the JVM's heap is checked before the
JVM starts and its exhaustion is one line; the Java fold loop runs only from the jar the build made.

Each case runs the command line in a fresh process (``delaycv check`` on a study, or ``delaycv
evaluate``): an error is one line on stderr, exit 2, no traceback and no Java stack trace, and
nothing is left of the run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import delaycv
from delaycv.common.errors import ConfigError
from tests.support.paths import REPO, shared_file

BRACKETS = "commit_guru_dataset/cut2years/0_brackets.arff"


@pytest.fixture(scope="module")
def streams(tmp_path_factory) -> dict[int, Path]:
    """The first 600 and 3000 commits of brackets as canonical streams."""
    from delaycv.data.convert import convert_file
    from delaycv.data.stream_file import read_stream, write_stream

    folder = tmp_path_factory.mktemp("moa_checks")
    whole = folder / "brackets.parquet"
    convert_file(shared_file(BRACKETS), whole, preset="commit-guru")
    out = {}
    for n in (600, 3000):
        out[n] = folder / f"first{n}.parquet"
        write_stream(read_stream(whole).subset(0, n), out[n])
    return out


@pytest.fixture(scope="module")
def small_stream(streams) -> Path:
    return streams[600]


def run_cli(*args, env=None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "delaycv", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        check=False,
        timeout=600,
    )


def one_error_line(done: subprocess.CompletedProcess) -> str:
    """The single line of a failed command (exit 2), with no Python traceback nor Java trace."""
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("delaycv: error: "), done.stderr
    assert "Traceback" not in done.stderr and "\tat " not in done.stderr
    return lines[0]


def evaluate(stream: Path, learner: str, out: Path, *extra, env=None):
    return run_cli(
        "evaluate", stream, "--learner", learner, "--folds", "2", "--out", out, "--quiet", *extra,
        env=env,
    )  # fmt: skip


def study(tmp_path: Path, learners: str, name: str = "study.yaml") -> Path:
    """A study of the synthetic stream with the ``learners:`` block given."""
    path = tmp_path / name
    path.write_text(
        "datasets:\n  syn: {generate: {rows: 300}}\n"
        f"learners:\n{learners}"
        "policies:\n  ideal: {preset: ideal}\nseeds: [1]\n"
    )
    return path


# ------------------------------------------------------------------ what cannot work here

#: learners no check has refused before, and the words of their one line: a regressor inside a
#: meta learner (MOA's regressors are Classifiers in Java: FIMTDD predicts one number, so a bag of
#: them never predicts positive), two meta learners deep, in a list of learners; MOA's
#: deep-learning learners (DJL would download PyTorch's native library at their first prediction,
#: and print a hundred lines of Java trace when it cannot); a learner MOA cannot prepare
#: (AutoClass reads a settings file of its author's machine)
CANNOT = {
    "meta.OzaBag -l trees.FIMTDD": (
        "the option -l (baseLearner) of meta.OzaBag is trees.FIMTDD, a regressor, not a MOA "
        "classifier of classes"
    ),
    "meta.LeveragingBag -l trees.ORTO": (
        "the option -l (baseLearner) of meta.LeveragingBag is trees.ORTO, a regressor"
    ),
    "meta.OzaBag -l (meta.OzaBoost -l rules.AMRulesRegressor)": (
        "the option -l (baseLearner) of meta.OzaBoost is rules.AMRulesRegressor, a regressor"
    ),
    "meta.WeightedMajorityAlgorithm -l (trees.HoeffdingTree,trees.FIMTDD)": (
        "the option -l (learners) of meta.WeightedMajorityAlgorithm is trees.FIMTDD, a regressor"
    ),
    "deeplearning.MLP": "is deeplearning.MLP, one of MOA's deep-learning learners",
    "deeplearning.CAND": "is deeplearning.CAND, one of MOA's deep-learning learners",
    "meta.OzaBag -l deeplearning.MLP": (
        "the option -l (baseLearner) of meta.OzaBag is deeplearning.MLP, one of MOA's "
        "deep-learning learners"
    ),
    "meta.AutoML.AutoClass": "MOA cannot prepare 'meta.AutoML.AutoClass': NullPointerException",
}


@pytest.mark.parametrize("learner", CANNOT)
def test_a_learner_that_cannot_work_here_is_refused_when_moa_builds_it(moa, learner):
    from delaycv.jvm.learner import check_learner

    with pytest.raises(ConfigError) as caught:
        check_learner(f"moa:{learner}", "learners.x")
    assert str(caught.value).startswith("key learners.x.moa: ")
    assert CANNOT[learner] in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_study_s_check_names_each_learner_that_cannot_work_here(moa, tmp_path):
    """``delaycv check`` (and the workflow's dry run, which loads the study the same way): one
    line per learner, naming its key."""
    learners = "".join(f"  x{i}: {{moa: '{spec}'}}\n" for i, spec in enumerate(CANNOT))
    done = run_cli(
        "check", study(tmp_path, learners + "  fine: {moa: functions.SGD}\n"), cwd=tmp_path
    )
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == len(CANNOT), done.stderr
    for i, words in enumerate(CANNOT.values()):
        assert any(f"key learners.x{i}.moa: " in line and words in line for line in lines)
    assert "Traceback" not in done.stderr and "\tat " not in done.stderr


@pytest.mark.parametrize("learner", ["meta.OzaBag -l trees.FIMTDD", "meta.AutoML.AutoClass"])
def test_the_run_refuses_it_in_one_line(moa, small_stream, tmp_path, learner):
    line = one_error_line(evaluate(small_stream, f"moa:{learner}", tmp_path / "r"))
    assert line.startswith("delaycv: error: option --learner: ") and CANNOT[learner] in line
    assert not (tmp_path / "r").exists()


def test_classifiers_that_are_also_regressors_are_accepted(moa):
    """A MultiClassClassifier that is also a Regressor (OzaBag, SGD) classifies classes."""
    from delaycv.jvm.learner import check_learner

    for spec in ("meta.OzaBag -l functions.SGD", "functions.SGD", "meta.OzaBag -s 2"):
        check_learner(f"moa:{spec}")


def test_java_prints_nothing_on_the_terminal(moa, small_stream, tmp_path):
    """MultilabelHoeffdingTree's libraries log warnings on Java's stderr at their first use:
    Java's output goes nowhere, so stderr holds delaycv's own lines only."""
    done = evaluate(small_stream, "moa:multilabel.MultilabelHoeffdingTree", tmp_path / "r")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines and all(line.startswith("delaycv: ") for line in lines), done.stderr


# ------------------------------------------------------------------ no probability


class Abstaining:
    """A learner without a probability (an empty dict) for one prediction in ``every`` (0:
    never), else P(1) = 0.75."""

    def __init__(self, every: int):
        self.every, self.n = every, 0

    def predict_proba_one(self, x):
        self.n += 1
        return {} if self.every and self.n % self.every == 0 else {0: 0.25, 1: 0.75}

    def learn_one(self, x, y):
        pass


def test_a_share_of_predictions_without_probability_is_warned_above_a_tenth():
    """The engine counts, for any learner, the predictions without a probability (read as 0.5):
    above a tenth of them the run warns, with the share; run.json keeps the share."""
    frame = pd.DataFrame({"time": np.arange(400), "label": [0, 1] * 200, "a": 1.0})

    def run(every: int):
        result = delaycv.evaluate(frame, Abstaining(every), folds=2, progress=False, every=None)
        warned = [w for w in result.info["warnings"] if "probability" in w]
        return result.info["no_probability_share"], warned

    share, warned = run(2)  # 200 of each fold's 400
    assert share == 0.5 and len(warned) == 1
    assert "gave no probability for 50.0% of its predictions (50.0% to 50.0% by fold" in warned[0]
    share, warned = run(9)  # 44 of 400: 11 %
    assert share == 44 / 400 and len(warned) == 1 and "for 11.0% of its predictions" in warned[0]
    share, warned = run(10)  # 40 of 400: 10 %, not above
    assert share == 0.1 and warned == []
    assert run(0) == (0.0, [])
    share, warned = run(1)  # every prediction: the folds that never gave one are named
    assert (
        share == 1.0 and len(warned) == 1 and "never gave a probability in folds 0, 1" in warned[0]
    )


@pytest.mark.slow  # runs of MOA learners in processes of their own
def test_a_moa_learner_that_mostly_gives_no_probability_is_warned_about(moa, streams, tmp_path):
    """MultilabelHoeffdingTree votes [0.0] (no probability) or [1.0] (class 0): on the first
    3000 commits, about half the first; the share is in the warning, run.json and the table of
    runs."""
    from delaycv.report.runs import runs_html
    from delaycv.tables.costs import runs_table

    out = tmp_path / "r"
    done = evaluate(streams[3000], "moa:multilabel.MultilabelHoeffdingTree", out)
    assert done.returncode == 0, done.stderr
    info = json.loads((out / "run.json").read_text())
    share = info["no_probability_share"]
    folds = info["folds"]
    assert share == sum(f["no_probability"] for f in folds) / sum(f["seen"] for f in folds)
    assert 0.1 < share < 1
    warned = [line for line in done.stderr.splitlines() if "gave no probability for" in line]
    assert len(warned) == 1 and f"{share:.1%} of its predictions" in warned[0]
    table = runs_table([out])
    assert table.no_probability_share.tolist() == [share]
    assert f'<td class="num">{100 * share:.1f}</td>' in runs_html(table)


# ------------------------------------------------------------------ the JVM's heap


def docs_example() -> str:
    """The ``learners:`` block of docs/moa-learners.md's first YAML example."""
    text = (REPO / "docs" / "moa-learners.md").read_text()
    block = re.search(r"```yaml\n(learners:\n.*?)```", text, re.S)
    assert block is not None
    return block[1]


@pytest.mark.slow  # runs of MOA learners in processes of their own
def test_the_documented_heap_key_passes_check_with_other_learners(moa, tmp_path):
    """docs/moa-learners.md's example (learners without a heap and one with heap: 4g): a check
    runs every learner in one JVM, whatever heap each asks for its own job."""
    learners = docs_example().removeprefix("learners:\n")
    assert "heap: 4g" in learners
    done = run_cli("check", study(tmp_path, learners), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "valid: 4 evaluations" in done.stdout


#: heaps that cannot be, and the words of their one line
BAD_HEAPS = {
    "99999999999999999999g": "is more than this machine has",
    "1k": "is less than a JVM with MOA runs with",
    "4x": "expected a size such as 512m or 4g",
}


def test_a_heap_that_cannot_be_is_refused_before_the_jvm_starts(moa, small_stream, tmp_path):
    """By the key (a study's check: each learner's line) and by the environment variable (a
    run), naming it."""
    learners = "".join(
        f"  h{i}: {{moa: trees.HoeffdingTree, heap: '{heap}'}}\n"
        for i, heap in enumerate(BAD_HEAPS)
    )
    done = run_cli("check", study(tmp_path, learners), cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == len(BAD_HEAPS), done.stderr
    for i, words in enumerate(BAD_HEAPS.values()):
        assert any(
            f"key learners.h{i}.heap" in line and words in line for line in done.stderr.splitlines()
        )
    env = {"DELAYCV_JVM_HEAP": "99999999999999999999g"}
    line = one_error_line(
        evaluate(small_stream, "moa:trees.HoeffdingTree", tmp_path / "r", env=env)
    )
    assert "environment variable DELAYCV_JVM_HEAP: heap 99999999999999999999g is more than" in line
    assert not (tmp_path / "r").exists()


def test_a_heap_is_checked_against_its_bounds_without_java():
    from delaycv.protocol.moa_spec import check_heap, machine_memory

    assert check_heap("16m") == "16m" and check_heap(" 4g ") == "4g"
    assert check_heap(str(machine_memory())) == str(machine_memory())
    with pytest.raises(ConfigError, match="key learners.x.heap: heap 15m is less"):
        check_heap("15m", "key learners.x.heap")
    with pytest.raises(ConfigError, match="is more than this machine has"):
        check_heap(str(machine_memory() + 1))
    with pytest.raises(ConfigError, match="heap True"):
        check_heap(True)


@pytest.mark.slow  # runs of MOA learners in processes of their own
def test_a_jvm_out_of_heap_is_one_line_naming_the_heap(moa, tmp_path):
    """A heap of 16m and a stream whose chunk of instances (4096 rows of 500 numbers: 16 MB)
    does not fit: Java's OutOfMemoryError becomes one line naming the heap and where it came
    from, and what to do."""
    from delaycv.data.stream import Stream
    from delaycv.data.stream_file import write_stream

    rng = np.random.default_rng(3)
    n, width = 5000, 500
    features = pd.DataFrame(rng.normal(size=(n, width)), columns=[f"f{i}" for i in range(width)])
    stream = tmp_path / "wide.parquet"
    write_stream(
        Stream(
            time=np.arange(n, dtype=np.int64),
            label=(rng.random(n) < 0.3).astype(np.int8),
            label_time=None,
            features=features,
            metadata={"dataset": "wide"},
        ),
        stream,
    )
    done = evaluate(
        stream, "moa:trees.HoeffdingTree", tmp_path / "r", env={"DELAYCV_JVM_HEAP": "16m"}
    )
    line = one_error_line(done)
    assert line.startswith("delaycv: error: environment variable DELAYCV_JVM_HEAP: ")
    assert "ran out of memory: Java's OutOfMemoryError with the heap 16m" in line
    assert "a larger heap: the MOA learner's key heap, or the environment variable" in line
    assert not (tmp_path / "r").exists()


# ------------------------------------------------------------------ the Java fold loop's jar


def crafted_run(jar: Path, stream: Path, out: Path) -> subprocess.CompletedProcess:
    """``delaycv evaluate`` of a MOA learner with ``jar`` as the built Java loop."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from delaycv.jvm import build\n"
        f"build.TARGET = Path({str(jar)!r})\n"
        "from delaycv.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    args = ["evaluate", stream, "--learner", "moa:trees.HoeffdingTree", "--folds", "2"]
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, args), "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


@pytest.mark.slow  # runs of MOA learners in processes of their own
def test_a_crafted_jar_is_not_loaded(moa, small_stream, tmp_path):
    """A jar holding only the source's digest (the member the old check read) passes no check:
    one warning line, and the Python loop runs, to the same outputs."""
    from delaycv.common.native import source_digest
    from delaycv.jvm import build

    crafted = tmp_path / "fold_rows.jar"
    with zipfile.ZipFile(crafted, "w") as jar:
        jar.writestr(build.DIGEST_MEMBER, source_digest(build.SOURCE) + "\n")
    done = crafted_run(crafted, small_stream, tmp_path / "crafted")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("delaycv: warning: fold_rows.jar holds no ")
    assert "MOA learners run the Python loop (rebuild: python -m delaycv.jvm.build)" in lines[0]
    plain = evaluate(small_stream, "moa:trees.HoeffdingTree", tmp_path / "plain", "--no-timing")
    assert plain.returncode == 0, plain.stderr
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "crafted" / "folds.parquet").drop(columns="cpu_seconds"),
        pd.read_parquet(tmp_path / "plain" / "folds.parquet").drop(columns="cpu_seconds"),
    )


def test_a_jar_whose_class_is_not_the_source_s_is_not_used(moa, small_stream, tmp_path):
    """The built jar with FoldRows.class carrying another source's digest (every member there,
    the digest member right): the class the JVM loads is read, one warning line, the Python
    loop."""
    from delaycv.common.native import source_digest
    from delaycv.jvm import build

    if not build.TARGET.is_file():
        pytest.skip("the Java loop is not built here")
    digest = source_digest(build.SOURCE).encode()
    crafted = tmp_path / "fold_rows.jar"
    with zipfile.ZipFile(build.TARGET) as src, zipfile.ZipFile(crafted, "w") as out:
        for name in src.namelist():
            data = src.read(name)
            if name.endswith(".class"):
                data = data.replace(digest, b"0" * len(digest))
            out.writestr(name, data)
    done = crafted_run(crafted, small_stream, tmp_path / "r")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(
        "delaycv: warning: fold_rows.jar gives the JVM a FoldRows whose source SHA-256 is "
        "0000000000000000, not that of the FoldRows.java beside it"
    )
