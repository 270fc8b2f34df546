"""Bad input on the command line (issue 13): ``delaycv: error: ...`` naming the path or key, exit
status 2, no traceback, and nothing left behind."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from delaycv.cli import main
from delaycv.data.stream_file import write_stream
from tests.support.engine_bruteforce import random_stream
from tests.support.paths import REPO


class FailingLearner:
    """A classifier that breaks at its 300th prediction (after the up-front probe of 50)."""

    def __init__(self) -> None:
        self.calls = 0

    def predict_proba_one(self, x):
        self.calls += 1
        if self.calls == 300:
            raise ZeroDivisionError("the learner's own bug")
        return {0: 0.5, 1: 0.5}

    def learn_one(self, x, y):
        pass


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A folder with a stream (600 instances) and a plain file, as the working directory."""
    monkeypatch.chdir(tmp_path)
    write_stream(random_stream(np.random.default_rng(3), 600), tmp_path / "s.parquet")
    (tmp_path / "afile").write_text("not a folder\n")
    return tmp_path


def listing(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def fails(argv, capsys, root: Path, *words: str) -> str:
    """Run ``delaycv argv``: exit 2, one error naming ``words``, no traceback, nothing new."""
    before = listing(root)
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert err.startswith("delaycv: error: "), err
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 2, err
    for word in words:
        assert word in err, (word, err)
    assert listing(root) == before  # no output, no temporary file, no folder
    return err


def evaluate_args(*extra: str, out: str = "run") -> list[str]:
    args = ["evaluate", "s.parquet", "--learner", "tree.HoeffdingTreeClassifier", "--folds", "2"]
    return [*args, "--out", out, "--quiet", *extra]


# --------------------------------------------------------------------------- output paths


def test_output_directory_that_is_a_file(work, capsys):
    fails(evaluate_args(out="afile"), capsys, work, "afile", "not a directory")


def test_output_directory_named_like_a_file(work, capsys):
    # `--out tests.csv` would make a folder named tests.csv of tables; an existing folder so
    # named is the user's own and is written into
    fails(evaluate_args(out="run.parquet"), capsys, work, "run.parquet: ends in .parquet")
    for command in (["compare", "s.parquet"], ["rank", "s.parquet"]):
        fails([*command, "--out", "cmp.csv"], capsys, work, "cmp.csv: ends in .csv")
    (work / "old.csv").mkdir()
    assert main(evaluate_args(out="old.csv")) == 0
    assert (work / "old.csv" / "folds.parquet").exists()


def test_output_under_a_file(work, capsys):
    fails(evaluate_args(out="afile/run"), capsys, work, "afile/run", "afile is not a directory")
    fails(["generate", "afile/g.parquet"], capsys, work, "afile/g.parquet", "not a directory")
    fails(["merge", "s.parquet", "--out", "afile/m.parquet"], capsys, work, "afile/m.parquet")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_output_in_a_read_only_folder(work, capsys):
    locked = work / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        fails(evaluate_args(out="locked/run"), capsys, work, "locked/run", "cannot be written")
    finally:
        locked.chmod(0o755)


def test_output_where_nothing_can_be_created(work, capsys):
    """/sys refuses new entries to everyone, root included (a read-only place on any Linux)."""
    if not Path("/sys").is_dir():
        pytest.skip("no /sys")
    fails(evaluate_args(out="/sys/delaycv-run"), capsys, work, "/sys/delaycv-run", "cannot be")


# --------------------------------------------------------------------------- parameters


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--param", "grace_period=abc"], ["--param grace_period", "'abc'", "an integer"]),
        (["--param", "grace_period=-5"], ["--param grace_period", "-5", "out of range"]),
        (["--param", "delta=2"], ["--param delta", "out of range", "(0, 1)"]),
        (["--param", "split_criterion=gain"], ["--param split_criterion", "info_gain"]),
        (["--every", "0"], ["option --every: every 0", "an integer >= 1"]),
        (["--every", "-3"], ["option --every: every -3", "an integer >= 1"]),
        (["--every", "abc"], ["--every", "invalid int value"]),
        (["--folds", "0"], ["option --folds"]),
        (["--alpha", "1.5"], ["option --alpha", "(0, 1]"]),
        (["--threshold", "-0.1"], ["option --threshold"]),
        (["--checkpoint-fraction", "3"], ["option --checkpoint-fraction"]),
        (["--policy", "verification"], ["option --window", "no default window"]),
        (["--policy", "hitl", "--neg-window", "90d"], ["option --pos-window"]),
        (["--policy", "delay", "--window", "soon"], ["option --window", "soon"]),
        (["--policy", "delay", "--window", "7"], ["option --window", "no unit", "7d, 7h, 7s"]),
    ],
)
def test_bad_values_name_the_option(work, capsys, extra, words):
    fails(evaluate_args(*extra), capsys, work, *words)


@pytest.mark.parametrize(
    "text, words",
    [
        (
            "class: tree.HoeffdingTreeClassifier\nparams: {grace_period: 50, grace_period: 9}\n",
            [
                "ht.yaml:2:28: key params.grace_period: duplicate key (first given at line 2, column 10)"
            ],
        ),
        (
            "class: tree.HoeffdingTreeClassifier\nparams: {grace_period: 50\n",
            ["ht.yaml:3:1: not valid YAML: expected ',' or '}'"],
        ),
        ("# nothing yet\n", ["ht.yaml: the file is empty (expected a learner spec"]),
    ],
    ids=["duplicate-key", "syntax", "empty"],
)
def test_a_bad_learner_spec_file_names_its_line(work, capsys, text, words):
    (work / "ht.yaml").write_text(text)
    args = ["evaluate", "s.parquet", "--learner", "ht.yaml", "--out", "run", "--quiet"]
    fails(args, capsys, work, *words)


def test_a_mapping_file_with_a_duplicate_key_names_its_line(work, capsys):
    (work / "map.yaml").write_text("time: a\nlabel: b\ntime: c\n")
    (work / "raw.csv").write_text("a,b\n1,0\n")
    args = ["convert", "raw.csv", "out.parquet", "--mapping", "map.yaml"]
    fails(
        args,
        capsys,
        work,
        "map.yaml:3:1: key time: duplicate key (first given at line 1, column 1)",
    )


SEED_2_70 = str(2**70)


@pytest.mark.parametrize(
    "argv, option",
    [
        (evaluate_args("--seed", SEED_2_70), "evaluate: argument --seed"),
        (evaluate_args("--validation-seed", SEED_2_70), "evaluate: argument --validation-seed"),
        (evaluate_args("--seed", "-1"), "evaluate: argument --seed"),
        (["generate", "g.parquet", "--seed", SEED_2_70], "generate: argument --seed"),
        (["compare", "s.parquet", "--out", "c", "--seed", SEED_2_70], "compare: argument --seed"),
        (["plot", "s.parquet", "--out", "p", "--seed", SEED_2_70], "plot: argument --seed"),
    ],
    ids=["evaluate", "validation", "negative", "generate", "compare", "plot"],
)
def test_a_seed_out_of_range_names_the_option(work, capsys, argv, option):
    value = argv[argv.index("--seed" if "--seed" in argv else "--validation-seed") + 1]
    fails(
        argv,
        capsys,
        work,
        f"delaycv: error: {option}: '{value}' is not a seed "
        "(expected an integer from 0 to 2**63 - 1 = 9223372036854775807)",
    )


def test_the_largest_seed_runs(work):
    top = str(2**63 - 1)
    assert main(evaluate_args("--seed", top, "--validation-seed", top, out="top")) == 0


def test_a_policy_name_that_says_other_windows_than_the_policy_is_refused(work, capsys):
    argv = evaluate_args("--policy", "hitl", "--pos-window", "1d", "--neg-window", "15d")
    fails(
        [*argv, "--policy-name", "hitl_7d_90d"],
        capsys,
        work,
        "delaycv: error: option --policy-name: the policy named hitl_7d_90d is hitl P = 1d, "
        "N = 15d, but its name says hitl P = 7d, N = 90d",
    )


#: a study with no mistake in its first three lines (the mistake under test follows)
VALID_STUDY = (
    "datasets: {d: {generate: {rows: 300}}}\n"
    "learners: {nb: {class: river.naive_bayes.GaussianNB}}\n"
    "policies: {ideal: {preset: ideal}}\n"
)


@pytest.mark.parametrize(
    "text, words",
    [
        (
            "datasets:\n  d: {generate: {rows: 300}\n",
            "my.yaml:3:1: not valid YAML: expected ',' or '}', but got "
            "'<stream end>' (while parsing a flow mapping at line 2, column 6)",
        ),
        ("", "my.yaml: the file is empty (expected a mapping with datasets, learners, policies)"),
        (
            VALID_STUDY + "seeds: [1]\nseeds: [2]\n",
            "my.yaml:5:1: key seeds: duplicate key (first given at line 4, column 1)",
        ),
        (
            VALID_STUDY + "seeds: [1180591620717411303424]\n",
            "my.yaml:4:9: key seeds.0: 1180591620717411303424 is ",
        ),
    ],
    ids=["syntax", "empty", "duplicate", "seed"],
)
def test_check_names_what_snakemake_cannot(work, capsys, text, words):
    """Snakemake's own message for a --configfile that is not YAML names no file: delaycv check."""
    (work / "my.yaml").write_text(text)
    fails(["check", "my.yaml"], capsys, work, f"delaycv: error: {words}")


def test_check_names_a_binary_config(work, capsys):
    """Snakemake reads a binary --configfile with a UnicodeDecodeError traceback: delaycv check
    names it."""
    (work / "my.yaml").write_bytes(b"\x7fELF\x02\x01\x01\x00\xf0\x9f\xff" * 20)
    fails(["check", "my.yaml"], capsys, work, "my.yaml: a binary file, not text")


def test_check_names_a_run_directory_that_cannot_be_redone(work, capsys):
    """Snakemake redoing a job whose old outputs cannot be removed (an immutable run directory)
    stops with its own PermissionError traceback: delaycv check says so beforehand (a warning:
    outputs made unchangeable on purpose are fine while no job must redo them)."""
    (work / "my.yaml").write_text(VALID_STUDY + "seeds: [1]\nresults: out\n")
    run = work / "out" / "runs" / "d" / "old"
    run.mkdir(parents=True)
    (run / "folds.parquet").write_bytes(b"")
    assert main(["check", "my.yaml"]) == 0
    assert capsys.readouterr().err == ""
    if subprocess.run(["chattr", "+i", str(run)], capture_output=True, check=False).returncode:
        pytest.skip("chattr +i is not allowed here")
    try:
        assert main(["check", "my.yaml"]) == 0
        err = capsys.readouterr().err
        assert err.startswith("delaycv: warning: my.yaml:") and len(err.splitlines()) == 1, err
        assert (
            "key results: 'out/runs/d/old' cannot be changed or removed (it is immutable: "
            "chattr +i): a job that must redo its outputs there would stop with Snakemake's "
            "own PermissionError" in err
        )
    finally:
        subprocess.run(["chattr", "-i", str(run)], check=True)


def test_check_accepts_a_valid_study(work, capsys):
    import shutil

    shutil.copy(REPO / "config" / "test-small.yaml", "small.yaml")
    assert main(["check", "small.yaml"]) == 0
    # (its 2 folds: a warning that no test can be significant, counted in the verdict)
    out, err = capsys.readouterr()
    assert out == (
        "small.yaml: valid (1 warning): 4 evaluations (1 dataset, 2 learners, 1 seed, 2 policies)\n"
    )
    assert err.count("delaycv: warning: ") == 1 and "key validation.folds" in err
    text = Path("small.yaml").read_text().replace("folds: 2,", "folds: 10,")
    Path("ten.yaml").write_text(text)
    assert main(["check", "ten.yaml"]) == 0
    out, err = capsys.readouterr()
    assert (out, err) == (
        "ten.yaml: valid: 4 evaluations (1 dataset, 2 learners, 1 seed, 2 policies)\n",
        "",
    )


def test_a_parameter_river_accepts_but_cannot_use(work, capsys):
    """ARF builds with max_features='x' and fails at its first call: caught before any work."""
    argv = evaluate_args("--learner", "forest.ARFClassifier", "--param", "max_features=x")
    fails(argv, capsys, work, "ARFClassifier", "first instances", "Invalid max_features: x")


def test_a_learner_that_breaks_during_the_run(work, capsys):
    argv = evaluate_args("--learner", "tests.cli.test_command_errors:FailingLearner")
    fails(argv, capsys, work, "FailingLearner", "fold 0", "ZeroDivisionError", "own bug")


# --------------------------------------------------------------------------- merge and compare


@pytest.fixture
def merged(work):
    for name, learner in (("a", "NoChange"), ("b", "Prior")):
        argv = ["evaluate", "s.parquet", "--learner", learner, "--folds", "3", "--every", "200"]
        assert main([*argv, "--out", name, "--quiet"]) == 0
    assert main(["merge", "a", "b", "--out", "merged.parquet", "--quiet"]) == 0
    return work / "merged.parquet"


def test_merge_writes_csv_or_refuses(merged, capsys):
    work = merged.parent
    assert main(["merge", "a", "b", "--out", "m.csv", "--summary-out", "s.csv", "--quiet"]) == 0
    table = pd.read_csv(work / "m.csv")
    assert table.shape == pd.read_parquet(merged).shape
    assert list(table.columns) == list(pd.read_parquet(merged).columns)
    assert table["learner"].drop_duplicates().tolist() == ["NoChange", "Prior"]
    assert len(pd.read_csv(work / "s.csv")) > 0
    fails(["merge", "a", "b", "--out", "m.xlsx"], capsys, work, "m.xlsx", ".parquet or .csv")
    fails(["merge", "a", "nothere", "--out", "x.parquet"], capsys, work, "nothere")


def test_compare_checkpoint_that_matches_nothing(merged, capsys):
    work = merged.parent
    argv = ["compare", "merged.parquet", "--out", "tests", "--resamples", "50"]
    err = fails(
        [*argv, "--checkpoint", "250"], capsys, work, "--checkpoint", "250", "merged.parquet"
    )
    assert "200, 400, 600" in err  # the checkpoints it has
    fails([*argv, "--checkpoint", "soon"], capsys, work, "--checkpoint", "soon")
    fails([*argv[:3], "afile", "--resamples", "50"], capsys, work, "afile", "not a directory")
    assert main([*argv, "--checkpoint", "400"]) == 0
    assert set(pd.read_parquet(work / "tests" / "tests.parquet")["checkpoint"]) == {400}


@pytest.mark.parametrize("command", ["compare", "rank"])
def test_a_checkpoint_position_no_table_reaches(merged, capsys, command):
    # compare and rank went on with nothing to test: an AttributeError (rank) or ValueError
    # (compare) after writing part of --out
    work = merged.parent
    argv = [command, "merged.parquet", "--out", "out", "--checkpoint-position", "99999"]
    argv += ["--quiet"]  # (the progress says each table's rows)
    fails(
        argv,
        capsys,
        work,
        "merged.parquet: no checkpoint of the table answers the request",
        "requested position 99999: beyond the stream (n = 600)",
    )
    # one position the stream reaches: the other is a row with no test and a note
    assert main([*argv, "--checkpoint-position", "300"]) == 0


def _odd(table: pd.DataFrame, kind: str) -> pd.DataFrame:
    """The merged table made odd as a researcher's hand-made table might be."""
    table = table.copy()
    if kind == "empty":
        return table.iloc[:0]
    if kind == "text-metric":
        table["gmean"] = table["gmean"].astype(str)
    elif kind == "infinite-metric":
        table.loc[table.index[3], "gmean"] = np.inf
    elif kind == "empty-dataset":
        table.loc[table.index[7], "dataset"] = None
    elif kind == "one-fold-twice":
        table["fold"] = 0
    elif kind == "rows-twice":
        table = pd.concat([table, table.iloc[:1]], ignore_index=True)
    elif kind == "no-checkpoint":
        table = table.drop(columns=["checkpoint"])
    return table


@pytest.mark.parametrize("command", ["compare", "rank", "plot"])
@pytest.mark.parametrize(
    "kind, words",
    [
        ("empty", "odd.parquet: no rows"),
        ("text-metric", "odd.parquet: column gmean holds str values, not numbers"),
        ("infinite-metric", "odd.parquet: column gmean is infinite in 1 rows (the first: row 3)"),
        ("empty-dataset", "odd.parquet: column dataset is empty in 1 rows (the first: row 7)"),
        ("one-fold-twice", "two rows for one run, fold, checkpoint and reference"),
        ("rows-twice", "odd.parquet: row 54: "),  # the copy after the table's 54 rows
        ("no-checkpoint", "odd.parquet: no column 'checkpoint'"),
    ],
)
def test_a_merged_table_that_cannot_be_right(merged, capsys, command, kind, words):
    """compare, rank and plot read a merged table through one check: an empty table, a metric of
    text or infinite, an empty run key or a run merged twice ended in tracebacks, or (rank,
    plot) averaged the duplicates without a word."""
    work = merged.parent
    _odd(pd.read_parquet(merged), kind).to_parquet(work / "odd.parquet", index=False)
    argv = [command, "odd.parquet", "--out", "out", *(["--quiet"] if command == "rank" else [])]
    fails(argv, capsys, work, words)


@pytest.mark.parametrize("command", ["compare", "rank", "plot"])
def test_a_kappa_infinite_where_its_reference_was_always_right(work, capsys, command):
    """Under hitl, the first labels released are all 0, so the majority class has been right on
    every one and kappa_m = (accuracy - 1)/0 = -inf at the first checkpoints (as MOA prints it).
    compare, rank and plot refused the whole table for it (``column kappa_m is infinite in 60
    rows``), though their tests are at the last checkpoint, where it has values; they read it as
    no value, as NaN (0/0), with a warning naming the table, the column and the count."""
    assert main(["generate", "--rows", "600", "--seed", "3", "g.parquet", "--quiet"]) == 0
    for name, learner in (("a", "NoChange"), ("b", "Prior")):
        argv = ["evaluate", "g.parquet", "--learner", learner, "--folds", "3", "--every", "20"]
        argv += ["--policy", "hitl", "--pos-window", "7d", "--neg-window", "90d"]
        assert main([*argv, "--out", name, "--quiet"]) == 0
    assert main(["merge", "a", "b", "--out", "merged.parquet", "--quiet"]) == 0
    table = pd.read_parquet(work / "merged.parquet")
    infinite = np.isinf(table["kappa_m"])
    assert infinite.any()  # (the stream makes them: else this test tests nothing)
    last = table["checkpoint"] == table["checkpoint"].max()
    assert not infinite[last].any()
    capsys.readouterr()
    argv = [command, "merged.parquet", "--out", "out", "--metric", "kappa_m"]
    argv += ["--reference", "observed", "--reference", "true"]
    assert main([*argv, *(["--resamples", "50"] if command == "compare" else [])]) == 0
    err = capsys.readouterr().err
    assert (
        f"delaycv: warning: merged.parquet: column kappa_m is infinite in {int(infinite.sum())} "
        f"rows (the first: row {int(np.flatnonzero(infinite)[0])}): a kappa whose reference "
        "classifier's value is 1 there ((x - 1)/0); read as no value"
    ) in err
    if command == "compare":  # the last checkpoint's tests have every (seed, fold) pair
        tests = pd.read_parquet(work / "out" / "tests.parquet")
        assert len(tests) == 2 and (tests["n"] == 3).all() and tests["p_value"].notna().all()
        strip = pd.read_parquet(work / "out" / "strip.parquet")
        first = strip[strip["checkpoint"] == strip["checkpoint"].min()]
        assert (first["n"] < 3).all()  # the -inf folds left out, as a NaN is


@pytest.mark.parametrize("command", ["compare", "rank", "plot"])
def test_a_metric_the_table_lacks_is_named(merged, capsys, command):
    """A misspelled metric, or one the runs did not compute, was "no column 'gmeen' (expected
    a table with the columns ..., gmeen, ...)"; it names the metric and the nearest one, or why
    the runs lack it."""
    work = merged.parent
    table = pd.read_parquet(merged)
    table = table.drop(columns=[c for c in ("popt", "kappa") if c in table])
    table.to_parquet(work / "less.parquet", index=False)
    quiet = ["--quiet"]
    for metric, words in [
        (
            "gmeen",
            "less.parquet: no metric 'gmeen' in the table: no metric has that name (did "
            "you mean gmean?) (expected a metric the table holds (docs/metrics.md))",
        ),
        (
            "kappa",
            "less.parquet: no metric 'kappa' in the table: its runs did not compute it (expected",
        ),
        (
            "popt",
            "no metric 'popt' in the table: its runs did not compute it (the effort-aware "
            "measures need a stream with an effort)",
        ),
    ]:
        argv = [command, "less.parquet", "--out", "out", "--metric", metric, *quiet]
        fails(argv, capsys, work, words)


@pytest.mark.parametrize(
    "argv, words",
    [
        (["plot", "merged.parquet", "--out", "f", "--baseline", "Nope"], ["baseline 'Nope'"]),
        (["plot", "merged.parquet", "--out", "f", "--format", "xyz"], ["--format", "'xyz'"]),
        (["rank", "merged.parquet", "--out", "f", "--format", "xyz"], ["--format", "'xyz'"]),
        (
            ["plot", "merged.parquet", "--out", "f", "--reference", "corrected", "--metric", "auc"],
            ["option --reference", "the corrected reference has no auc", "nothing to draw"],
        ),
        (evaluate_args("--dataset="), ["option --dataset", "name ''"]),
        (evaluate_args("--dataset", "a/b"), ["option --dataset", "name 'a/b'"]),
        (evaluate_args("--learner-name", "x y"), ["option --learner-name", "name 'x y'"]),
    ],
)
def test_options_that_named_nothing(merged, capsys, argv, words):
    """A strip baseline no table has drew no strip without a word; an unknown figure format was
    a traceback (plot) or nothing (rank); a run named '' or 'a/b' was written; figures of the AUC
    against the corrected reference, which has none, were empty panels."""
    fails(argv, capsys, merged.parent, *words)


# --------------------------------------------------------------------------- bad stream files


def test_a_stream_in_milliseconds_or_corrupt_fails_naming_the_file(work, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tests.support.parquet import flip_page_byte

    rows = 300
    table = pa.table(
        {
            "time": [1_600_000_000_000 + 60_000 * i for i in range(rows)],
            "label": [i % 2 for i in range(rows)],
            "label_time": pa.array([None] * rows, pa.int64()),
            "x": np.random.default_rng(1).random(rows),
        }
    )
    pq.write_table(table, work / "ms.parquet")
    argv = ["evaluate", "ms.parquet", "--learner", "NoChange", "--out", "run", "--quiet"]
    fails(argv, capsys, work, "ms.parquet: stream time 1600000000000 at row 1", "milliseconds")
    stream = random_stream(np.random.default_rng(4), 5000)
    write_stream(stream, work / "bad.parquet")
    flip_page_byte(work / "bad.parquet", stream.feature_names[0])
    argv[1] = "bad.parquet"
    fails(argv, capsys, work, "bad.parquet: corrupt Parquet file: a page checksum does not match")


def test_a_raw_file_given_as_the_stream_says_to_convert_it(work, capsys, brackets_csv):
    import shutil

    shutil.copy(brackets_csv, work / "brackets.csv")
    argv = ["evaluate", "brackets.csv", "--learner", "NoChange", "--out", "run", "--quiet"]
    fails(
        argv,
        capsys,
        work,
        "brackets.csv: not a readable Parquet file",
        "(expected a stream: convert the CSV file first, delaycv convert brackets.csv "
        "brackets.parquet (with --preset or --mapping))",
    )
    import gzip

    (work / "brackets.csv.gz").write_bytes(gzip.compress(brackets_csv.read_bytes()))
    argv[1] = "brackets.csv.gz"
    fails(
        argv,
        capsys,
        work,
        "(expected a stream: convert the CSV file first, delaycv convert brackets.csv.gz "
        "brackets.parquet (with --preset or --mapping))",
    )


def test_a_reveal_time_on_a_clean_instance_fails_naming_the_file_and_row(work, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    # a file of another tool: every positive has its reveal time, and so has one clean instance
    # of a later chunk, which a policy would observe as a 1
    rows = 9000
    label = [int(i % 3 == 0) for i in range(rows)]
    reveal = [1_600_000_000 + 60 * i + 3600 if y else None for i, y in enumerate(label)]
    reveal[7000] = 1_600_500_000  # row 7,001, label 0
    table = pa.table(
        {
            "time": [1_600_000_000 + 60 * i for i in range(rows)],
            "label": pa.array(label, pa.int8()),
            "label_time": pa.array(reveal, pa.int64()),
            "x": np.random.default_rng(1).random(rows),
        }
    )
    pq.write_table(table, work / "other.parquet")
    argv = ["evaluate", "other.parquet", "--learner", "NoChange", "--out", "run", "--quiet"]
    fails(
        argv,
        capsys,
        work,
        "other.parquet: stream label_time at row 7001 is 1600500000.0 on an instance of label 0 "
        "(1 such row)",
        "expected no label_time",
    )


@pytest.mark.parametrize(
    "argv, words",
    [
        (
            ["plot", "merged.parquet", "--out", "figs", "--dpi", "0"],
            ["option --dpi", "from 1 to 2,400"],
        ),
        (["plot", "merged.parquet", "--out", "figs", "--dpi", "-5"], ["option --dpi", "-5"]),
        (["plot", "merged.parquet", "--out", "figs", "--dpi", "100000"], ["option --dpi"]),
        (["plot", "merged.parquet", "--out", "figs", "--alpha", "2"], ["option --alpha", "(0, 1)"]),
        (["plot", "merged.parquet", "--out", "figs", "--alpha", "nan"], ["option --alpha"]),
        (
            ["plot", "merged.parquet", "--out", "figs", "--seed", "-1"],
            ["argument --seed", "from 0 to 2**63 - 1"],
        ),
        (["compare", "merged.parquet", "--out", "t", "--resamples", "0"], ["option --resamples"]),
        (["compare", "merged.parquet", "--out", "t", "--alpha", "2"], ["option --alpha", "(0, 1)"]),
        (
            ["compare", "merged.parquet", "--out", "t", "--seed", "-1"],
            ["argument --seed", "from 0 to 2**63 - 1"],
        ),
        (["generate", "g.parquet", "--rows", "0"], ["option --rows", "N >= 1"]),
        (["generate", "g.parquet", "--seed", "-1"], ["argument --seed", "from 0 to 2**63 - 1"]),
        (evaluate_args("--jobs", "0"), ["option --jobs", "N >= 1"]),
        (evaluate_args("--noise", "1.5"), ["option --noise", "[0.0, 1.0]"]),
        (evaluate_args("--moa-csv", "--moa-alpha", "2"), ["option --moa-alpha"]),
    ],
)
def test_numbers_out_of_range_name_the_option(merged, capsys, argv, words):
    """Every numeric option of every command is checked before any work (issue 22: plot --dpi 0
    was a traceback, compare --seed -1 and plot --alpha 2 went through)."""
    fails(argv, capsys, merged.parent, *words)


def test_merge_refuses_a_stream_or_the_same_run_twice(merged, capsys):
    """Issue 22: merge took a stream file, or a run twice, and compare failed later."""
    work = merged.parent
    shutil.copytree(work / "a", work / "a2")
    (work / "notarun").mkdir()
    out = ["--out", "m.parquet"]
    fails(["merge", "a", "s.parquet", *out], capsys, work, "s.parquet", "a stream")
    fails(["merge", "a", "b", "a", *out], capsys, work, "a: the same table as a")
    fails(["merge", "a", "./a/folds.parquet", *out], capsys, work, "a/folds.parquet", "same table")
    err = fails(["merge", "a", "b", "a2", *out], capsys, work, "a2: run dataset=", "also in a")
    assert "learner=NoChange, seed=1" in err
    fails(["merge", "merged.parquet", "b", *out], capsys, work, "b: run ", "merged.parquet")
    fails(["merge", "a", "notarun", *out], capsys, work, "notarun", "not a run directory")


# --------------------------------------------------------------------------- the console script


def test_the_console_command_prints_no_traceback(work):
    """The real process (``python -m delaycv``): exit 2, one line, nothing written."""
    before = listing(work)
    argv = [sys.executable, "-m", "delaycv", *evaluate_args("--param", "grace_period=abc")]
    done = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.startswith("delaycv: error: option --param grace_period: ")
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert listing(work) == before


# --------------------------------------------------------------------------- signals, stale temporaries


@pytest.fixture
def long_stream(work):
    """A stream whose evaluation lasts long enough to be stopped midway (30,000 instances)."""
    from delaycv.data.synthetic import generate_stream

    write_stream(generate_stream(rows=30_000, seed=1), work / "long.parquet")
    return work


def temporaries(root: Path, name: str = "run") -> list[str]:
    return sorted(p.name for p in root.glob(f".{name}.*.tmp"))


def _default_signals() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)


def long_run(*extra: str) -> list[str]:
    """The command line of ``delaycv evaluate`` of the long stream (a process of its own)."""
    argv = [sys.executable, "-m", "delaycv", "evaluate", "long.parquet", "--out", "run"]
    return [*argv, "--learner", "tree.HoeffdingTreeClassifier", "--folds", "4", "--quiet", *extra]


def start_writing(root: Path, *extra: str) -> subprocess.Popen:
    """``delaycv evaluate`` of the long stream in a process of its own, returned once its run
    directory's temporary exists (the run is writing)."""
    proc = subprocess.Popen(
        long_run(*extra),
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_default_signals,  # (a test run in the background may ignore SIGINT)
    )
    deadline = time.monotonic() + 120
    while not temporaries(root):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"no temporary: {proc.communicate()}")
        time.sleep(0.02)
    return proc


@pytest.mark.parametrize(
    "signum, status, line, extra",
    [
        (signal.SIGINT, 130, "delaycv: interrupted", ()),
        (signal.SIGTERM, 143, "delaycv: terminated", ()),
        (signal.SIGTERM, 143, "delaycv: terminated", ("--jobs", "2")),  # as workers start
    ],
)
def test_a_signal_ends_evaluate_with_one_line_and_no_temporary(
    long_stream, signum, status, line, extra
):
    """Issue 22: Ctrl-C printed a 36-line traceback; SIGTERM left ``.run.xxxx.tmp/``."""
    before = listing(long_stream)
    proc = start_writing(long_stream, *extra)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, err.decode(), out.decode()) == (status, line + "\n", "")
    assert listing(long_stream) == before


class StopInADestructor:
    """Sends SIGTERM to this process when deleted: the signal's exception comes in ``__del__``,
    where Python reports it ("Exception ignored in ...") and goes on (as it does in a weak
    reference's callback that an import's lock or the garbage collector runs)."""

    def __del__(self):
        os.kill(os.getpid(), signal.SIGTERM)


def test_a_signal_that_python_swallows_is_raised_again_without_a_report(capsys):
    from delaycv.common.interrupt import Terminated, check, signals_raise

    with pytest.raises(Terminated), signals_raise():
        StopInADestructor()  # (deleted at once)
        assert capsys.readouterr().err == ""  # no "Exception ignored" with a traceback
        check()
    check()  # the stop is forgotten once the block ends


def test_a_signal_that_python_swallows_still_stops_evaluate(work, capsys, monkeypatch):
    """Seen as a flaky test: a SIGTERM that came while an import's lock ran its callback was
    lost; the run went on to write its outputs and exit 0, after a traceback."""
    from delaycv.engine import folds

    chunk_view = folds._chunk_view

    def chunk_view_then_stop(*args):
        StopInADestructor()
        return chunk_view(*args)

    monkeypatch.setattr(folds, "_chunk_view", chunk_view_then_stop)
    before = listing(work)
    assert main(evaluate_args()) == 143
    assert capsys.readouterr() == ("", "delaycv: terminated\n")
    assert listing(work) == before


def test_a_signal_while_the_workers_pool_is_made_acts_once_it_is_made(work, capsys, monkeypatch):
    """A SIGTERM that came while multiprocessing made the pool's locks and queues cut their
    making short: a semaphore left registered (its resource tracker warned of a leak at the end)
    or the tracker's lock held (its warnings of a reentrant call). Its exception now comes once
    the pool and its workers exist (stop_workers then ends them)."""
    from concurrent.futures import ProcessPoolExecutor

    from delaycv.engine import parallel

    made = []

    class StoppedWhileMade(ProcessPoolExecutor):
        def __init__(self, *args, **kwargs):
            os.kill(os.getpid(), signal.SIGTERM)
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(parallel, "ProcessPoolExecutor", StoppedWhileMade)
    before = listing(work)
    assert main(evaluate_args("--jobs", "2")) == 143
    assert capsys.readouterr() == ("", "delaycv: terminated\n")
    assert len(made) == 1 and listing(work) == before


def test_ctrl_c_while_the_fork_server_starts_gives_one_line(long_stream):
    """A terminal's Ctrl-C reaches its whole process group: the fork server of a --jobs run,
    while it imported engine.PRELOAD, printed its own traceback of KeyboardInterrupt after
    the parent's one line."""
    import psutil

    before = listing(long_stream)
    proc = subprocess.Popen(
        long_run("--jobs", "2"),
        cwd=long_stream,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # (a process group of its own, as a terminal's command has)
        preexec_fn=_default_signals,
    )
    parent = psutil.Process(proc.pid)
    deadline = time.monotonic() + 120
    while not any("forkserver" in line for line in _command_lines(parent)):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.005)
    time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)  # (as the fork server imports: it takes half a second)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, err.decode(), out.decode()) == (130, "delaycv: interrupted\n", "")
    assert listing(long_stream) == before


def _command_lines(process) -> list[str]:
    """The command lines of ``process``'s children (those still there when asked)."""
    import psutil

    lines = []
    try:
        children = process.children()
    except psutil.Error:
        return lines
    for child in children:
        with contextlib.suppress(psutil.Error):  # (ended meanwhile)
            lines.append(" ".join(child.cmdline()))
    return lines


def test_a_rerun_removes_the_temporary_of_a_killed_run(long_stream, capsys):
    """Issue 22: a run killed without notice (SIGKILL) leaves its temporary; the next writer of
    the same output removes it, but not a temporary of a live process (a writer running now) nor
    a name without a process id."""
    from delaycv.common.atomic import _host

    proc = start_writing(long_stream)
    proc.kill()
    proc.wait(timeout=60)
    (stale,) = temporaries(long_stream)
    assert stale.startswith(f".run.{proc.pid}-")
    live = f".run.{os.getpid()}-{_host()}.abcdefgh.tmp"
    (long_stream / live).mkdir()
    (long_stream / ".run.abcdefgh.tmp").mkdir()
    assert main(evaluate_args(out="run")) == 0
    assert temporaries(long_stream) == sorted([".run.abcdefgh.tmp", live])
    assert (long_stream / "run" / "folds.parquet").is_file()


@pytest.mark.parametrize("directory", [False, True])
def test_a_signal_while_a_temporary_is_created_leaves_nothing(tmp_path, monkeypatch, directory):
    """A SIGTERM that comes just after the temporary exists (before its removal is armed) acts
    once the removal is armed: the exception comes, the temporary goes."""
    from delaycv.common import atomic
    from delaycv.common.interrupt import Terminated, signals_raise

    create = atomic._new_temporary

    def create_then_signal(dest, directory):
        tmp = create(dest, directory)
        os.kill(os.getpid(), signal.SIGTERM)  # (held until the removal is armed)
        return tmp

    monkeypatch.setattr(atomic, "_new_temporary", create_then_signal)
    writer = atomic.atomic_dir if directory else atomic.atomic_path
    with pytest.raises(Terminated), signals_raise(), writer(tmp_path / "out"):
        raise AssertionError("the block never starts")
    assert list(tmp_path.iterdir()) == []
