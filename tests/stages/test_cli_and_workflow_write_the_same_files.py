"""One stage API under the workflow and the CLI (delaycv.stages): the ``delaycv`` commands and the
workflow's rules run the same functions, so the same inputs and options give the same files.

The workflow runs on a tiny study of three datasets (with policy contrasts and the tests at stream
positions); then ``delaycv merge``, ``compare``, ``rank`` and ``plot`` run on its run directories
and merged tables with the config's options, and every table, page and figure they write is
compared with the workflow's, byte for byte.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from delaycv.cli import main
from delaycv.study import digests
from tests.support.workflow_copy import REPO, copy_workflow, run

CHECKPOINTS = [150, 400]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    config = yaml.safe_load((REPO / "config" / "test-small.yaml").read_text())
    config["datasets"]["other"] = {"generate": {"rows": 300, "seed": 5}}
    config["datasets"]["third"] = {"generate": {"rows": 300, "seed": 7}}
    config["tests"]["checkpoints"] = {"positions": CHECKPOINTS}
    config["contrasts"] = {"reference": "ideal"}
    workdir = copy_workflow(tmp_path_factory.mktemp("stages") / "wf", config)
    run(workdir, "--cores", "2")
    return workdir


def same_files(ours: Path, theirs: Path, names) -> None:
    for name in names:
        assert (ours / name).read_bytes() == (theirs / name).read_bytes(), name


def checkpoint_options() -> list[str]:
    return [a for c in CHECKPOINTS for a in ("--checkpoint-position", str(c))]


pytestmark = pytest.mark.slow


def test_cli_merge_compare_rank_and_plot_write_the_workflow_s_files(workdir, tmp_path, capsys):
    results = workdir / "results"
    runs = [
        str(results / "runs" / "tiny" / learner / "seed1" / policy)
        for learner in ("nb", "lr")
        for policy in ("ideal", "hitl_7d_90d")
    ]
    merged = tmp_path / "tiny.parquet"
    assert main(["merge", *runs, "--out", str(merged), "--quiet"]) == 0
    assert merged.read_bytes() == (results / "merged" / "tiny.parquet").read_bytes()

    tests = tmp_path / "tests"
    options = ["--metric", "gmean", "--metric", "accuracy", "--resamples", "200", "--seed", "1"]
    references = ["--reference", "observed", "--reference", "true"]  # (test-small.yaml's)
    options += references
    args = ["compare", str(merged), "--out", str(tests), *options, *checkpoint_options()]
    capsys.readouterr()
    assert main([*args, "--contrasts-reference", "ideal"]) == 0
    # progress on stderr; the closing line once, on stdout, as the workflow's log says it
    out, err = capsys.readouterr()
    summary = out.removesuffix(f" -> {tests}\n")
    assert "\n" not in summary and summary.endswith("contrasts") and summary not in err
    assert "delaycv: tests: at checkpoints" in err
    assert summary in (workdir / "logs" / "results" / "compare" / "tiny.log").read_text()
    workflow_tests = results / "tests" / "tiny"
    files = sorted(p.name for p in workflow_tests.glob("[!.]*"))
    assert sorted(p.name for p in tests.iterdir()) == files
    assert {"contrasts.html", "bias.csv", "strip.parquet"} <= set(files)
    same_files(tests, workflow_tests, files)

    ranks = tmp_path / "rankings"
    tables = [str(results / "merged" / f"{d}.parquet") for d in ("tiny", "other", "third")]
    args = ["rank", *tables, "--out", str(ranks), "--metric", "gmean", "--metric", "accuracy"]
    args += references
    assert main([*args, *checkpoint_options(), "--figure-metric", "gmean", "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")  # (no treatment goes unranked: no note)
    assert main([*args, *checkpoint_options(), "--figure-metric", "gmean"]) == 0  # (again)
    out, err = capsys.readouterr()
    summary = out.removesuffix(f" -> {ranks}\n")
    assert "\n" not in summary and summary.endswith("figure files") and summary not in err
    assert "delaycv: within datasets: Scott-Knott ESD" in err
    assert summary in (workdir / "logs" / "results" / "rankings.log").read_text()
    workflow_ranks = results / "rankings"
    files = sorted(p.name for p in workflow_ranks.iterdir() if p.is_file())
    assert sorted(p.name for p in ranks.iterdir() if p.is_file()) == files
    same_files(ranks, workflow_ranks, files)
    figures = sorted(p.name for p in (workflow_ranks / "figures").glob("[!.]*"))
    assert figures and sorted(p.name for p in (ranks / "figures").iterdir()) == figures
    same_files(ranks / "figures", workflow_ranks / "figures", [f for f in figures if ".png" in f])

    out = tmp_path / "figures"
    args = ["plot", str(merged), "--tests", str(tests), "--out", str(out), "--metric", "gmean"]
    contrasts = str(tests / "contrasts.parquet")
    args += ["--reference", "observed", "--alpha", "0.05", "--contrasts", contrasts]
    assert main([*args, "--runs", str(results / "runs")]) == 0
    workflow_figures = results / "figures" / "tiny"
    files = sorted(p.name for p in workflow_figures.glob("[!.]*"))
    assert any(name.startswith("contrasts_") for name in files)
    assert sorted(p.name for p in out.iterdir()) == files
    same_files(out, workflow_figures, [f for f in files if f.endswith(".png")])
    printed = capsys.readouterr().out.splitlines()  # the files written, one a line
    assert sorted(Path(line).name for line in printed) == files
    assert main([*args, "--runs", str(results / "runs"), "--quiet"]) == 0
    assert capsys.readouterr().out == ""


def test_the_stage_functions_write_the_workflow_s_files(workdir, tmp_path):
    from delaycv.stages.compare import compare
    from delaycv.stages.merge import merge
    from delaycv.stats.settings import make_compare_settings

    results = workdir / "results"
    config = yaml.safe_load((workdir / "config.yaml").read_text())
    merged = merge(
        [results / "merged" / f"{d}.parquet" for d in ("tiny", "other", "third")],
        tmp_path / "all.parquet",
    )
    assert merged.rows == len(pd.read_parquet(results / "merged.parquet"))
    assert (tmp_path / "all.parquet").read_bytes() == (results / "merged.parquet").read_bytes()
    lines = []
    result = compare(
        results / "merged" / "other.parquet",
        tmp_path / "other",
        make_compare_settings(**config["tests"], reference_policy="ideal", bias=True),
        dataset="other",
        progress=lines.append,
    )
    assert set(result.tables()) == {"tests", "strip", "bias", "contrasts"}
    same_files(tmp_path / "other", results / "tests" / "other", [p.name for p in result.files])
    assert any(line.startswith("read ") for line in lines)


# --------------------------------------------------------------------------- the new options


@pytest.mark.parametrize(
    "args, words",
    [
        (
            [
                "compare",
                "m.parquet",
                "--out",
                "o",
                "--checkpoint",
                "all",
                "--checkpoint-position",
                "5",
            ],
            ["option --checkpoint", "either --checkpoint or positions"],
        ),
        (
            ["compare", "m.parquet", "--out", "o", "--checkpoint-fraction", "1.5"],
            ["option --checkpoint-fraction", "1.5"],
        ),
        (
            ["rank", "m.parquet", "--out", "o", "--checkpoint-position", "0"],
            ["option --checkpoint-position", "0"],
        ),
        (["rank", "m.parquet", "--out", "o", "--checkpoint", "soon"], ["option --checkpoint"]),
        (["rank", "m.parquet", "--out", "o", "--alpha", "2"], ["option --alpha", "(0, 1)"]),
        (["rank", "m.parquet", "--out", "o", "--resamples", "0"], ["option --resamples", "0"]),
        (["rank", "m.parquet", "--out", "o", "--seed", "-1"], ["--seed"]),
        (["rank", "m.parquet", "--out", "o", "--version", "x"], ["--version", "invalid choice"]),
    ],
)
def test_the_new_options_are_checked_before_any_work(args, words, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert all(word in err for word in words), err
    assert not (tmp_path / "o").exists()


def test_the_commands_are_listed(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("convert", "generate", "evaluate", "merge", "compare", "rank", "plot"):
        assert f"    {command} " in out


@pytest.mark.parametrize("command", ["check", "compare", "plot", "rank", "evaluate"])
def test_help_is_plain_text(command, capsys):
    """--help shows no reST markup of the docstrings it is made from (``x``, :func:`x`)."""
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert "``" not in out and not re.search(r":\w+:`", out), out
    if command == "evaluate":  # a learner of river or of MOA
        assert "river learner" not in out and "MOA" in out.split("positional arguments")[0]


def test_each_stage_is_a_module_of_delaycv_stages():
    modules = sorted(p.stem for p in (REPO / "delaycv" / "stages").glob("[!_]*.py"))
    assert modules == ["compare", "convert", "evaluate", "figures", "merge", "rankings"]
    assert {m: (f"delaycv.stages.{m}",) for m in modules} == digests.STAGE_MODULES
    # one name per stage: the rule's script and the digest key
    for stage in modules:
        assert (REPO / "scripts" / f"{stage}.py").is_file()
        assert f'stage_job(snakemake, "{stage}"' in (REPO / "scripts" / f"{stage}.py").read_text()


def test_compare_and_rank_refuse_a_checkpoint_no_table_has(workdir, tmp_path, capsys):
    """``--checkpoint N`` names a checkpoint of the tables: one that none has is refused by both
    commands (one check, :func:`delaycv.cli.options.check_checkpoints_in_table`), listing the
    checkpoints there are, and nothing is written."""
    merged = workdir / "results" / "merged" / "tiny.parquet"
    for command in ("compare", "rank"):
        out = tmp_path / command
        assert main([command, str(merged), "--out", str(out), "--checkpoint", "7"]) == 2
        err = capsys.readouterr().err
        assert "option --checkpoint: checkpoint 7 is not in the table" in err, err
        assert "expected one of its checkpoints (" in err and not out.exists()
