"""``delaycv evaluate`` and ``delaycv merge`` from the command line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from delaycv.cli import main
from delaycv.data.stream_file import write_stream
from delaycv.tables.moa_export import read_moa_csv
from tests.support.engine_bruteforce import random_stream


@pytest.fixture
def stream_file(tmp_path):
    path = tmp_path / "s.parquet"
    write_stream(random_stream(np.random.default_rng(4), 120), path)
    return path


def evaluate_args(stream_file, out, *extra):
    return [
        "evaluate",
        str(stream_file),
        "--learner",
        "tree.HoeffdingTreeClassifier",
        "--param",
        "grace_period=20",
        "--policy",
        "hitl",
        "--pos-window",
        "3s",
        "--neg-window",
        "10s",
        "--validation",
        "bootstrap",
        "--folds",
        "3",
        "--seed",
        "2",
        "--validation-seed",
        "5",
        "--estimator",
        "fading",
        "--alpha",
        "0.99",
        "--every",
        "30",
        "--out",
        str(out),
        "--quiet",
        *extra,
    ]


def test_the_summary_line_gives_the_headline_number(stream_file, tmp_path, capsys):
    """The summary line says the G-mean against each reference at the last checkpoint, the mean
    over the folds, as the fold table has it."""
    out = tmp_path / "run"
    assert main([a for a in evaluate_args(stream_file, out) if a != "--quiet"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    folds = pd.read_parquet(out / "folds.parquet")
    last = folds[folds["checkpoint"] == 120]
    observed, true, corrected = (
        last.loc[last["reference"] == r, "gmean"] for r in ("observed", "true", "corrected")
    )
    assert observed.notna().sum() == true.notna().sum() == corrected.notna().sum() == 3
    assert line.startswith(
        "delaycv: HoeffdingTreeClassifier on random under hitl_3s_10s, 3 folds, "
    )
    assert (
        f"checkpoints: gmean observed {observed.mean():.3f}, true {true.mean():.3f}, corrected "
        f"{corrected.mean():.3f} at instance "
        "120 (fading estimator; mean of 3 folds) -> "
    ) in line


def test_evaluate_writes_a_run_directory(stream_file, tmp_path):
    out = tmp_path / "run"
    assert main(evaluate_args(stream_file, out, "--predictions", "--moa-csv")) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "detail.csv",
        "dump.csv",
        "folds.parquet",
        "predictions.parquet",
        "run.json",
        "summary.parquet",
    ]
    folds = pd.read_parquet(out / "folds.parquet")
    assert sorted(set(folds["checkpoint"])) == [30, 60, 90, 120]
    assert set(folds["policy"]) == {"hitl_3s_10s"} and set(folds["estimator"]) == {"fading"}
    assert set(folds["learner"]) == {"HoeffdingTreeClassifier"} and set(folds["seed"]) == {2}
    info = json.loads((out / "run.json").read_text())
    assert info["specs"]["learner"] == {
        "class": "tree.HoeffdingTreeClassifier",
        "params": {"grace_period": 20},
    }
    assert info["specs"]["validation"] == {
        "scheme": "bootstrap",
        "folds": 3,
        "seed": 5,
        "evaluate": "all",
        "fixed_split": False,
    }
    header, rows = read_moa_csv(out / "dump.csv")
    assert header[0] == "learning evaluation instances"
    assert {r[0] for r in rows} <= {30.0, 60.0, 90.0, 120.0}
    header, rows = read_moa_csv(out / "detail.csv")
    assert header[2] == "fold" and {r[2] for r in rows} <= {0.0, 1.0, 2.0}


def test_fixed_split_makes_seeds_of_a_deterministic_learner_duplicates(stream_file, tmp_path):
    """HoeffdingTree draws nothing: --seed 2 and 3 differ by their bootstrap weights only."""
    tables = {}
    for fixed in (False, True):
        for seed in ("2", "3"):
            out = tmp_path / f"{fixed}{seed}"
            extra = ["--no-timing", "--seed", seed, *(["--fixed-split"] if fixed else [])]
            assert main(evaluate_args(stream_file, out, *extra)) == 0
            tables[fixed, seed] = pd.read_parquet(out / "folds.parquet").drop(columns="seed")
            info = json.loads((out / "run.json").read_text())
            assert info["specs"]["validation"]["fixed_split"] is fixed
    assert not tables[False, "2"].equals(tables[False, "3"])
    assert tables[True, "2"].equals(tables[True, "3"])


def test_jobs_output_is_byte_identical(stream_file, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(evaluate_args(stream_file, a, "--no-timing", "--moa-csv", "--predictions")) == 0
    assert (
        main(
            evaluate_args(
                stream_file, b, "--no-timing", "--moa-csv", "--predictions", "--jobs", "2"
            )
        )
        == 0
    )
    for name in sorted(p.name for p in a.iterdir()):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--learner", "tree.Nope"], ["tree.Nope"]),
        (["--param", "grace_periodd=3"], ["HoeffdingTreeClassifier", "grace_periodd"]),
        (["--neg-window=-3d"], ["option --neg-window", "-3d"]),
        (["--folds", "0"], ["folds"]),
        (["--width", "3"], ["--width"]),
        (["--param", "novalue"], ["KEY=VALUE"]),
        (
            ["--learner", "tree.HoeffdingTreeClassifier(grace_period=5)"],
            [
                "option --learner",
                "a class is named without a call, its parameters apart",
                "--param",
            ],
        ),
        (
            ["--learner", "{class: tree.HoeffdingTreeClassifier"],
            ["option --learner:1:", "not valid YAML: expected ',' or '}'"],
        ),
        (
            ["--learner", "{class: tree.HoeffdingTreeClassifier, class: naive_bayes.GaussianNB}"],
            ["option --learner:1:", "key class: duplicate key"],
        ),
        # a run's own checkpoint at a time the stream does not reach (it starts after 1000)
        (
            ["--checkpoint-time", "5"],
            ["option --checkpoint-time", "time 1970-01-01 00:00:05 UTC (Unix 5) is outside"],
        ),
        (
            ["--checkpoint-time", "4000000000"],
            ["option --checkpoint-time", "(Unix 4000000000) is outside"],
        ),
        (
            ["--checkpoint-time", "1 Jan 2016"],
            ["argument --checkpoint-time: '1 Jan 2016' is not a time (expected Unix seconds, or "],
        ),
    ],
)
def test_bad_configuration_exits_2_without_output(stream_file, tmp_path, capsys, extra, words):
    out = tmp_path / "run"
    args = evaluate_args(stream_file, out)
    # later options override earlier ones
    assert main([*args, *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("delaycv: error: ")
    for word in words:
        assert word in err
    assert not out.exists()


def test_a_learner_spec_written_inline_runs_as_one_in_a_file(stream_file, tmp_path):
    """``--learner '{"class": ..., "params": ...}'`` (JSON or YAML's flow style) is the spec a
    file holding it gives, ``--param`` added to its params, a pipeline too."""
    spec = {"class": "tree.HoeffdingTreeClassifier", "params": {"grace_period": 20}}
    (tmp_path / "ht.json").write_text(json.dumps(spec))
    runs = {}
    for name, learner, extra in [
        ("file", str(tmp_path / "ht.json"), []),
        ("json", json.dumps(spec), []),
        ("yaml", "{class: tree.HoeffdingTreeClassifier, params: {grace_period: 5}}", []),
        ("param", "{class: tree.HoeffdingTreeClassifier}", ["--param", "grace_period=20"]),
    ]:
        out = tmp_path / name
        args = evaluate_args(stream_file, out, "--learner", learner, *extra)
        args.remove("--param")
        args.remove("grace_period=20")  # (evaluate_args' own)
        assert main(args) == 0, name
        runs[name] = pd.read_parquet(out / "folds.parquet").drop(
            columns=["wall_seconds", "cpu_seconds"], errors="ignore"
        )
        used = json.loads((out / "run.json").read_text())["specs"]["learner"]
        assert used["params"]["grace_period"] == (5 if name == "yaml" else 20), name
    assert runs["json"].equals(runs["file"]) and runs["param"].equals(runs["file"])
    pipeline = (
        "{pipeline: [{class: preprocessing.StandardScaler}, {class: naive_bayes.GaussianNB}]}"
    )
    args = evaluate_args(stream_file, tmp_path / "pipe", "--learner", pipeline)
    args.remove("--param")
    args.remove("grace_period=20")
    assert main(args) == 0


def test_missing_stream_exits_2(tmp_path, capsys):
    assert main(evaluate_args(tmp_path / "none.parquet", tmp_path / "run")) == 2
    assert "none.parquet" in capsys.readouterr().err


def test_merge_command(stream_file, tmp_path):
    for name, learner in (("a", "NoChange"), ("b", "Prior")):
        args = ["evaluate", str(stream_file), "--learner", learner, "--policy", "delay"]
        args += ["--window", "2i", "--folds", "2", "--every", "50", "--quiet"]
        assert main([*args, "--out", str(tmp_path / name)]) == 0
    out = tmp_path / "merged.parquet"
    summary = tmp_path / "summary.parquet"
    runs = [str(tmp_path / "a"), str(tmp_path / "b")]
    assert main(["merge", *runs, "--out", str(out), "--summary-out", str(summary)]) == 0
    merged = pd.read_parquet(out)
    assert merged["learner"].drop_duplicates().tolist() == ["NoChange", "Prior"]
    assert set(merged["policy"]) == {"delay_2i"}
    assert set(pd.read_parquet(summary)["learner"]) == {"NoChange", "Prior"}


def test_compare_with_prediction_logs_tests_the_0_1_references(stream_file, tmp_path, capsys):
    # the default references are all three: McNemar's test takes observed and true, and says it
    # leaves the corrected one out (it failed after every other test, so --predictions needed
    # --reference each time)
    from delaycv.stats.mcnemar import mcnemar_tests

    runs = []
    for learner in ("NoChange", "Prior"):
        runs.append(str(tmp_path / learner))
        args = ["evaluate", str(stream_file), "--learner", learner, "--policy", "delay"]
        args += ["--window", "2i", "--folds", "2", "--every", "50", "--quiet", "--predictions"]
        assert main([*args, "--out", runs[-1]]) == 0
    merged = str(tmp_path / "merged.parquet")
    assert main(["merge", *runs, "--out", merged, "--quiet"]) == 0
    capsys.readouterr()
    out = tmp_path / "cmp"
    assert main(["compare", merged, "--out", str(out), "--predictions", *runs]) == 0
    assert "note: McNemar's tests: not of the corrected reference" in capsys.readouterr().err
    got = pd.read_parquet(out / "mcnemar.parquet")
    logs = {
        name: pd.read_parquet(tmp_path / name / "predictions.parquet")
        for name in ("NoChange", "Prior")
    }
    for reference in ("observed", "true"):
        want = mcnemar_tests(logs, reference=reference)
        rows = got[got["reference"] == reference].drop(columns=["dataset", "policy", "seed"])
        pd.testing.assert_frame_equal(rows.reset_index(drop=True), want, check_dtype=False)
    # only the corrected reference: refused before any output, naming the option
    argv = ["compare", merged, "--out", str(tmp_path / "c2"), "--predictions", *runs]
    assert main([*argv, "--reference", "corrected"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("delaycv: error: option --reference: McNemar's test counts"), err
    assert not (tmp_path / "c2").exists()


def test_the_engine_s_warnings_name_the_options_on_the_command_line(stream_file, tmp_path, capsys):
    """A warning the engine words with keys (``key policy.window``) names the option on stderr
    (``option --window``); run.json keeps the engine's words."""
    out = tmp_path / "run"
    code = main(
        ["evaluate", str(stream_file), "--learner", "NoChange", "--policy", "delay",
         "--window", "100000d", "--folds", "2", "--out", str(out), "--quiet"]
    )  # fmt: skip
    assert code == 0
    err = capsys.readouterr().err
    assert (
        "delaycv: warning: option --window: the window 100000d is longer than the whole stream"
        in err
    )
    assert "delaycv: warning: option --policy: the policy delay_100000d released no label" in err
    assert "key policy" not in err
    warnings = json.loads((out / "run.json").read_text())["warnings"]
    assert any(w.startswith("key policy.window: the window 100000d") for w in warnings)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key policy.window: w", "option --window: w"),
        ("keys policy.pos_window, policy.neg_window: w", "options --pos-window, --neg-window: w"),
        ("key learner.params.grace_period: w", "option --param grace_period: w"),
        ("key nothing.known: w", "key nothing.known: w"),
        ("the learner X never gave: w", "the learner X never gave: w"),
    ],
)
def test_warning_keys_become_options(text, expected):
    from delaycv.cli.evaluate import _warning_with_options

    assert _warning_with_options(text, learner_from_file=False) == expected


def test_the_command_line_sets_the_scope(tmp_path, capsys):
    import json

    from delaycv.cli import main
    from delaycv.data.stream_file import write_stream
    from delaycv.data.synthetic import generate_stream

    write_stream(generate_stream(rows=400, seed=2), tmp_path / "s.parquet")
    base = ["evaluate", str(tmp_path / "s.parquet"), "--learner", "naive_bayes.GaussianNB"]
    base += ["--folds", "2", "--every", "200", "--quiet", "--no-timing"]
    out = tmp_path / "run"
    assert (
        main([*base, "--effort-scope", "sliding", "--effort-width", "50", "--out", str(out)]) == 0
    )
    folds = pd.read_parquet(out / "folds.parquet")
    assert set(folds["effort_scope"]) == {"sliding(50)"}
    info = json.loads((out / "run.json").read_text())
    assert info["specs"]["effort_scope"] == {"kind": "sliding", "width": 50}
    assert info["effort"]["scope"] == "the last 50 evaluations"
    for extra, words in (
        (
            ["--effort-width", "50"],
            "option --effort-width: --effort-width does not apply to the cumulative",
        ),
        (["--effort-scope", "sliding", "--effort-width", "0"], "option --effort-width: width 0"),
        (
            ["--effort-scope", "sliding", "--effort-width", str(2**63)],
            "option --effort-width: width",
        ),
    ):
        capsys.readouterr()
        assert main([*base, *extra, "--out", str(tmp_path / "bad")]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"delaycv: error: {words}"), err
        assert not (tmp_path / "bad").exists()


def test_a_checkpoint_time_may_be_a_date(tmp_path, capsys):
    """``--checkpoint-time`` took Unix seconds alone (``invalid int value: '2018-03-01'``): a
    date or a date and time, UTC unless it gives an offset, asks for the checkpoint the same
    seconds do; a date outside the stream is refused as its seconds are."""
    from delaycv.data.stream_file import read_stream

    assert main(["generate", "--rows", "300", "--seed", "2", str(tmp_path / "g.parquet")]) == 0
    times = read_stream(tmp_path / "g.parquet").time
    day = pd.Timestamp(int(times[150]), unit="s").normalize()  # a midnight within the stream
    seconds = int(day.timestamp())
    expected = int(np.searchsorted(times, seconds, side="right"))
    found = {}
    for name, when in [
        ("seconds", str(seconds)),
        ("date", f"{day:%Y-%m-%d}"),
        ("offset", f"{day:%Y-%m-%d}T02:00+02:00"),
    ]:
        out = tmp_path / name
        argv = ["evaluate", str(tmp_path / "g.parquet"), "--learner", "NoChange", "--folds", "2"]
        assert main([*argv, "--every", "1000", "--checkpoint-time", when, "--out", str(out)]) == 0
        found[name] = sorted(pd.read_parquet(out / "folds.parquet")["checkpoint"].unique())
    assert found["seconds"] == found["date"] == found["offset"] == [expected, 300]
    capsys.readouterr()
    argv = ["evaluate", str(tmp_path / "g.parquet"), "--learner", "NoChange", "--out", "x"]
    assert main([*argv, "--checkpoint-time", "1999-12-31"]) == 2
    first, last = (pd.Timestamp(int(t), unit="s") for t in (times[0], times[-1]))
    assert (  # the times as seconds and as the dates the user may have given
        "option --checkpoint-time: checkpoint time 1999-12-31 00:00:00 UTC (Unix 946598400) is "
        f"outside the stream (its times run from {first:%Y-%m-%d %H:%M:%S} UTC (Unix "
        f"{int(times[0])}) to {last:%Y-%m-%d %H:%M:%S} UTC (Unix {int(times[-1])}))"
    ) in capsys.readouterr().err
