"""The workflow run for real on the tiny config: outputs, report, no-op rerun, a learner change."""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.support.workflow_copy import (
    REPO,
    convert_commit_guru,
    copy_workflow,
    read_config,
    run,
    write_commit_guru_csv,
    write_config,
)

pytestmark = pytest.mark.slow


def executed(proc) -> dict[str, int]:
    """Jobs that a run executed, per rule, from its log ("rule X:" blocks)."""
    counts: dict[str, int] = {}
    for rule in re.findall(r"^(?:local)?rule (\w+):$", proc.stdout + proc.stderr, flags=re.M):
        counts[rule] = counts.get(rule, 0) + 1
    return counts


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    workdir = copy_workflow(
        tmp_path_factory.mktemp("run") / "wf", REPO / "config" / "test-small.yaml"
    )
    run(workdir, "--cores", "2")
    return workdir


def test_the_pipeline_writes_every_output(workdir):
    merged = pd.read_parquet(workdir / "results" / "merged.parquet")
    assert set(merged["learner"]) == {"nb", "lr"}
    assert set(merged["policy"]) == {"ideal", "hitl_7d_90d"}
    assert set(merged["fold"]) == {0, 1} and set(merged["reference"]) == {
        "observed",
        "true",
        "corrected",
    }
    assert merged["dataset"].unique().tolist() == ["tiny"]
    per_dataset = pd.read_parquet(workdir / "results" / "merged" / "tiny.parquet")
    pd.testing.assert_frame_equal(per_dataset, merged)
    tests = pd.read_csv(workdir / "results" / "tests" / "tiny" / "tests.csv")
    assert set(tests["metric"]) == {"gmean", "accuracy"} and len(tests) > 0
    assert list((workdir / "results" / "figures" / "tiny").glob("*.png"))
    for run_dir in (workdir / "results" / "runs" / "tiny").glob("*/seed1/*"):
        assert {p.name for p in run_dir.iterdir()} >= {
            "folds.parquet",
            "summary.parquet",
            "run.json",
        }
    bench = list((workdir / "results" / "benchmarks" / "evaluate").rglob("*.tsv"))
    assert len(bench) == 4
    # every run's cost (scripts/evaluate.py: delaycv.tables.usage), and merge_all's table of the runs
    runs = pd.read_parquet(workdir / "results" / "runs.parquet")
    assert runs[["learner", "policy"]].values.tolist() == [
        [lr, p] for lr in ("nb", "lr") for p in ("ideal", "hitl_7d_90d")
    ]
    cost = ["process_wall_seconds", "process_cpu_seconds", "peak_rss_bytes", "ram_hours"]
    for row in runs.itertuples():
        run_dir = workdir / "results" / "runs" / "tiny" / row.learner / "seed1" / row.policy
        info = json.loads((run_dir / "run.json").read_text())
        for key in ("wall_seconds", "cpu_seconds", *cost):
            assert getattr(row, key) == info[key] > 0, key
        # an evaluate job imports river, pandas and pyarrow: tens of MiB resident, for seconds
        assert 50 * 2**20 < info["peak_rss_bytes"] < 2**30
        assert info["process_cpu_seconds"] > info["cpu_seconds"]
        hours = info["process_wall_seconds"] / 3600
        assert 0.05 * hours * info["peak_rss_bytes"] < info["ram_hours"] * 2**30
        assert info["ram_hours"] * 2**30 <= hours * info["peak_rss_bytes"]
    csv = pd.read_csv(workdir / "results" / "runs.csv").fillna({"warnings": ""})  # (empty: none)
    pd.testing.assert_frame_equal(csv, runs)
    logs = list((workdir / "logs").rglob("*.log"))
    # convert, evaluate, merge x2, tests, figures, rankings
    assert len(logs) == 1 + 4 + 2 + 1 + 1 + 1
    # an evaluate job's log ends with what `delaycv evaluate` prints: the run, its G-mean
    log = workdir / "logs" / "results" / "runs" / "tiny" / "nb" / "seed1" / "ideal.log"
    last = log.read_text().strip().splitlines()[-1]
    summary = pd.read_parquet(
        workdir / "results" / "runs" / "tiny" / "nb" / "seed1" / "ideal" / "summary.parquet"
    )
    gmean = summary[(summary["metric"] == "gmean") & (summary["checkpoint"] == 400)]
    true = gmean.loc[gmean["reference"] == "true", "mean"].iloc[0]
    assert last.startswith("nb on tiny under ideal, 2 folds, 4 checkpoints: gmean observed "), last
    assert (
        f", true {true:.3f}" in last
        and "at instance 400 (fading estimator; mean of 2 folds)" in last
    )
    # one dataset: the rankings across datasets are notes, Scott-Knott ESD within it is computed
    friedman = pd.read_csv(workdir / "results" / "rankings" / "friedman.csv", keep_default_na=False)
    assert len(friedman) > 0 and friedman["note"].str.contains("at least 3").all()
    within = pd.read_csv(workdir / "results" / "rankings" / "within.csv")
    assert set(within["treatment"]) == {"nb", "lr", "ideal", "hitl_7d_90d"}
    assert within["group"].notna().all()


def test_a_second_run_does_nothing(workdir):
    proc = run(workdir, "--cores", "2")
    assert executed(proc) == {}
    assert "Nothing to be done" in proc.stdout + proc.stderr


def report_variable(html: str, name: str):
    """A variable of a Snakemake HTML report's script (results, categories, workflow_desc)."""
    match = re.search(rf"^\s*var {name} = ([{{\[\"].*?);?$", html, flags=re.M)
    assert match, f"no {name} in the report"
    return json.loads(match.group(1))


def report_results(html: str) -> dict[str, dict]:
    """The results of a Snakemake HTML report (path -> name, labels, caption, mime type, data)."""
    return report_variable(html, "results")


def check_toggles(html: str) -> None:
    """Every result of the report has two labels, what it is and its format; where the format is
    a toggle (two values, each on half of a list's results: Snakemake's rule), every row has a
    result of each (a row without one blanks the page when it is drawn)."""
    results = report_results(html)
    for category, subcategories in report_variable(html, "categories").items():
        for subcategory, paths in subcategories.items():
            labels = [results[path]["labels"] for path in paths]
            assert all(list(found)[1:] == ["format"] for found in labels), (category, labels)
            formats = Counter(found["format"] for found in labels)
            if len(formats) == 2 and set(formats.values()) == {len(labels) / 2}:
                rows: dict[str, set] = {}
                for found in labels:
                    rows.setdefault(next(iter(found.values())), set()).add(found["format"])
                assert all(row == set(formats) for row in rows.values()), (subcategory, rows)


def test_the_report_has_figures_and_test_tables(workdir):
    proc = run(workdir, "--cores", "1", "--report", "results/report.html")
    # (no RuntimeWarning per rule: the profile sets disk_mb, which Snakemake's default reads
    # from the inputs' sizes without awaiting them under --report)
    assert "RuntimeWarning" not in proc.stdout + proc.stderr, proc.stderr
    html = (workdir / "results" / "report.html").read_text(errors="replace")
    results = {r["name"]: r for r in report_results(html).values()}
    check_toggles(html)
    # the home page, of a study of one dataset
    home = " ".join(report_variable(html, "workflow_desc").split())
    assert "at the last checkpoint, every policy against" in home and " ," not in home
    assert "ranked within the dataset over its (seed, fold) pairs" in home
    # every figure of the run is in the report, with the caption of its own kind
    pngs = sorted(p.name for p in (workdir / "results" / "figures" / "tiny").glob("*.png"))
    assert pngs == [
        "bias_tiny_gmean.png",
        "contrasts_tiny_gmean.png",  # the config has ideal: policy contrasts
        "final_tiny_gmean_observed.png",
        "learning_curves_tiny_gmean_observed.png",
        "pairwise_tiny_gmean_observed.png",
    ]
    # one label says what the figure is, the other its format (docs/workflow.md, "The report")
    figures = {
        "bias_tiny_gmean.png": "bias over the stream (tiny_gmean)",
        "contrasts_tiny_gmean.png": "difference to the reference policy (tiny_gmean)",
        "final_tiny_gmean_observed.png": "final distributions (tiny_gmean_observed)",
        "learning_curves_tiny_gmean_observed.png": "learning curves (tiny_gmean_observed)",
        "pairwise_tiny_gmean_observed.png": "pairwise tests (tiny_gmean_observed)",
    }
    heads = {
        "bias": "<strong>Bias of realistic evaluation</strong> in gmean",
        "contrasts": "<strong>Difference to the reference policy</strong> in gmean",
        "final": "<strong>Final distributions</strong> of gmean scored against the observed labels",
        "learning": "<strong>Learning curves</strong> of gmean scored against the observed labels",
        "pairwise": "<strong>Pairwise tests</strong> of gmean scored against the observed labels",
    }
    for name in pngs:
        entry = results[name]
        assert entry["mime_type"] == "image/png"
        assert entry["caption"].startswith("<p>" + heads[name.split("_")[0]]), name
        assert f"{name}</tt>" in entry["caption"]
        assert entry["labels"] == {"figure": figures[name], "format": "PNG"}
    assert len({results[n]["caption"] for n in pngs}) == len(pngs)
    assert "alpha = 0.05" in results["learning_curves_tiny_gmean_observed.png"]["caption"]
    # the tables are HTML pages shown inside the report (and CSV downloads)
    for name, heading in (
        ("tests.html", "gmean on observed labels"),
        ("bias.html", "gmean, observed − true (fading estimator"),
    ):
        entry = results[name]
        assert entry["mime_type"] == "text/html" and entry["labels"]["format"] == "HTML"
        assert entry["labels"]["table"].endswith(" (tiny)")
        page = base64.b64decode(entry["data_uri"].split("base64,", 1)[1]).decode()
        assert "<table>" in page and f"<h2>{heading}" in page
        assert "alpha = 0.05" in entry["caption"]
    assert results["tests.csv"]["labels"] == {
        "table": "learner pairs (tiny)",
        "format": "download CSV",
    }
    assert "bias.csv" in results
    assert {"contrasts.html", "rankings.html", "within.html"} <= set(results)
    # the runs' time and memory: a page of the report (and the CSV)
    entry = results["runs.html"]
    assert entry["mime_type"] == "text/html" and entry["labels"]["format"] == "HTML"
    assert "RAM-hours" in entry["caption"]
    assert results["runs.csv"]["labels"]["format"] == "download CSV"
    page = base64.b64decode(entry["data_uri"].split("base64,", 1)[1]).decode()
    assert "<th>RAM-hours (GiB h)</th>" in page and "<th>peak memory (MiB)</th>" in page
    runs = pd.read_parquet(workdir / "results" / "runs.parquet")
    for peak in runs["peak_rss_bytes"]:
        assert f'<td class="num">{peak / 2**20:,.1f}</td>' in page
    assert page.count("<td>hitl_7d_90d</td>") == 2
    # the datasets: a page of the report (and the CSV)
    entry = results["datasets.html"]
    assert entry["mime_type"] == "text/html" and "conversion notes" in entry["caption"]
    assert results["datasets.csv"]["labels"] == {
        "table": "the datasets' streams",
        "format": "download CSV",
    }
    page = base64.b64decode(entry["data_uri"].split("base64,", 1)[1]).decode()
    assert "<td>tiny</td>" in page and "<th>conversion notes</th>" in page
    assert results["rankings.html"]["labels"]["table"] == "rankings across datasets"
    # the figures job's log says why there is no sensitivity figure, once for both metrics
    log = (workdir / "logs" / "results" / "figures" / "tiny.log").read_text()
    said = "figures: warning: no sensitivity figure: no policy grid in dataset 'tiny'"
    assert log.count(said) == 1, log
    assert "hitl_7d_90d (the only window of family 'hitl, N = 90d')" in log


def test_changing_a_learner_reruns_its_jobs_and_the_aggregation_only(workdir):
    before = {
        p: p.stat().st_mtime_ns for p in (workdir / "results" / "runs").rglob("folds.parquet")
    }
    config = read_config(workdir / "config.yaml")
    config["learners"]["lr"]["pipeline"][1]["params"] = {"l2": 0.01}
    write_config(workdir, config)
    proc = run(workdir, "--cores", "2")
    assert executed(proc) == {
        "evaluate": 2,
        "merge": 1,
        "merge_all": 1,
        "compare": 1,
        "rankings": 1,
        "figures": 1,
        "all": 1,
    }
    # every rule runs a script: no job shows a shell command (the profiles set no printshellcmds)
    assert "Shell command" not in proc.stdout + proc.stderr
    after = {p: p.stat().st_mtime_ns for p in before}
    changed = sorted(
        str(p.relative_to(workdir / "results" / "runs")) for p in before if before[p] != after[p]
    )
    assert changed == [
        "tiny/lr/seed1/hitl_7d_90d/folds.parquet",
        "tiny/lr/seed1/ideal/folds.parquet",
    ]


def test_a_study_file_with_a_converted_stream_runs_end_to_end(tmp_path):
    """`delaycv convert` writes a stream; a study file of its own (nothing else than its keys)
    evaluates it as it is beside a raw file the workflow converts, and beside a Parquet file
    pandas wrote, whose fix links kept as reveal times the runs warn of: the workflow says so
    when it ends, and the runs table and page list it. (The same raw file under both names is
    one stream counted twice, refused: test_workflow_plans.py.)"""
    workdir = copy_workflow(tmp_path / "wf", REPO / "config.yaml")  # the default: not used
    write_commit_guru_csv(workdir / "data" / "mine.csv", rows=300, seed=5)
    raw = write_commit_guru_csv(workdir / "data" / "raw.csv", rows=300, seed=6)
    convert_commit_guru(workdir, "data/mine.csv", "resources/mine.parquet")
    theirs = pd.read_csv(raw).rename(
        columns={"author_date_unix_timestamp": "time", "contains_bug": "label"}
    )
    links = theirs.pop("fix_unix_timestamp")
    theirs["label_time"] = links.where(theirs["label"] == 1)  # fix links: before their commits
    theirs.to_parquet(workdir / "data" / "theirs.parquet")
    # one fix link of the raw file points at no commit: its conversion leaves it out and says so
    frame = pd.read_csv(raw)
    frame.loc[5, "fix_unix_timestamp"] = 12345
    frame.to_csv(raw, index=False)
    study = {
        "datasets": {
            "mine": {"path": "resources/mine.parquet"},
            "raw": {"path": str(raw.relative_to(workdir)), "preset": "commit-guru"},
            "theirs": {"path": "data/theirs.parquet"},
        },
        "learners": {"nb": {"class": "river.naive_bayes.GaussianNB"}},
        "policies": {"ideal": {"preset": "ideal"}, "delay_7d": {"preset": "delay", "window": "7d"}},
        "seeds": [1],
        "validation": {"folds": 2},
        "tests": {"resamples": 100},
    }
    (workdir / "my.yaml").write_text(yaml.safe_dump(study))
    proc = run(workdir, "--cores", "2", "--configfile", "my.yaml")
    assert executed(proc) == {
        "convert": 1,  # the raw file only
        "evaluate": 6,
        "merge": 3,
        "merge_all": 1,
        "compare": 3,
        "rankings": 1,
        "figures": 3,
        "all": 1,
    }
    assert not (workdir / "resources" / "generated" / "streams" / "mine").exists()
    merged = pd.read_parquet(workdir / "results" / "merged.parquet")
    assert set(merged["learner"]) == {"nb"} and set(merged["policy"]) == {"ideal", "delay_7d"}
    assert set(merged["fold"]) == {0, 1}
    for name in ("mine", "raw", "theirs"):
        rows = merged[merged["dataset"] == name]
        assert len(rows) > 0 and rows["gmean"].notna().any(), name
    # the warning of theirs's two runs (and the learner's of the runs whose first labels come
    # late), said when the workflow ends, and listed
    said = proc.stdout + proc.stderr
    assert re.search(
        r"delaycv: \d of 6 runs warned \(\d different warnings\): results/runs.html \(the "
        r"report's Runs page\) and results/runs.csv list them",
        said,
    ), said[-3000:]
    assert re.search(
        r"  theirs/nb/1/\w+( and 1 more)?: data/theirs.parquet: column label_time: ", said
    )
    # the conversions' notes, said when the workflow ends (the stream delaycv convert wrote and
    # the one pandas wrote have none)
    assert (
        "delaycv: the conversion of 1 of 3 datasets left out or changed something (each "
        "conversion's log, logs/convert/<dataset>/, names the rows):\n  raw: 1 feedback link "
        "matched no positive instance (1 at a time with no row): left out\n" in said
    ), said[-3000:]
    # ... and in the table of datasets, and its page in the report
    datasets = pd.read_csv(workdir / "results" / "datasets.csv", keep_default_na=False)
    assert datasets["dataset"].tolist() == ["mine", "raw", "theirs"]
    assert datasets["rows"].tolist() == [300, 300, 300]
    assert datasets["notes"].tolist() == [
        "",
        "1 feedback link matched no positive instance (1 at a time with no row): left out",
        "",
    ]
    assert "1 feedback link matched" in (workdir / "results" / "datasets.html").read_text()
    runs = pd.read_csv(workdir / "results" / "runs.csv", keep_default_na=False)
    reveals = runs[runs["warnings"].str.contains("positives are revealed before their own time")]
    assert set(reveals["dataset"]) == {"theirs"} and len(reveals) == 2
    page = (workdir / "results" / "runs.html").read_text()
    assert "<h2>Warnings (" in page and "data/theirs.parquet: column label_time: " in page
    # the report's captions read the study's defaults (my.yaml has no figures key)
    run(workdir, "--cores", "1", "--configfile", "my.yaml", "--report", "results/report.html")
    report = (workdir / "results" / "report.html").read_text(errors="replace")
    assert "learning_curves_mine_gmean_observed.png" in report and "datasets.html" in report


def test_the_figures_take_the_windows_of_the_policies_specs(tmp_path):
    """Policies named ``fast`` and ``slow`` (names that say no window): the sensitivity figure
    places them at the windows of their specs, which the figures rule passes from the config."""
    study = {
        "datasets": {"tiny": {"generate": {"rows": 300, "seed": 3}}},
        "learners": {"prior": {"class": "Prior"}, "nochange": {"class": "NoChange"}},
        "policies": {
            "ideal": {"preset": "ideal"},
            "fast": {"preset": "hitl", "pos_window": "1d", "neg_window": "90d"},
            "slow": {"preset": "hitl", "pos_window": "30d", "neg_window": "90d"},
        },
        "seeds": [1],
        "validation": {"scheme": "bootstrap", "folds": 2},
        "tests": {"metrics": ["gmean"], "resamples": 50},
        "figures": {"metric": "gmean", "formats": ["png"], "dpi": 50},
    }
    workdir = copy_workflow(tmp_path / "wf", study)
    run(workdir, "--cores", "2")
    figures = workdir / "results" / "figures" / "tiny"
    assert (figures / "sensitivity_tiny_gmean.png").is_file()
    log = (workdir / "logs" / "results" / "figures" / "tiny.log").read_text()
    assert "not on a window axis" not in log and "no sensitivity figure" not in log, log


def test_rankings_across_three_datasets_and_a_second_study_sharing_the_runs(tmp_path):
    """A study of 3 generated datasets under its own results folder: the rankings across datasets
    are tested (no note), the rankings within each dataset, the CD and SK figures and the report's
    Rankings category are there. A second study with its own results folder and the same `runs`
    evaluates only the runs the first has not."""
    study = {
        "datasets": {f"g{i}": {"generate": {"rows": 300, "seed": i}} for i in (1, 2, 3)},
        "learners": {
            "nb": {"class": "river.naive_bayes.GaussianNB"},
            "nochange": {"class": "NoChange"},
        },
        "policies": {
            "ideal": {"preset": "ideal"},
            "hitl_7d_90d": {"preset": "hitl", "pos_window": "7d", "neg_window": "90d"},
        },
        "seeds": [1],
        "validation": {"scheme": "bootstrap", "folds": 2},
        "checkpoints": {"every": 100},
        "tests": {
            "metrics": ["accuracy"],
            "references": ["observed"],
            "resamples": 50,
            "checkpoints": {"positions": [200]},
        },
        "figures": {"metric": "accuracy", "formats": ["png"], "dpi": 50},
        "results": "results/s1",
        "runs": "results/runs",
    }
    workdir = copy_workflow(tmp_path / "wf", study)
    proc = run(workdir, "--cores", "2")
    assert executed(proc)["rankings"] == 1 and executed(proc)["evaluate"] == 12
    rankings = workdir / "results" / "s1" / "rankings"
    friedman = pd.read_csv(rankings / "friedman.csv", keep_default_na=False)
    # learners within 2 policies, policies within 2 learners: 4 families of 2 treatments
    assert len(friedman) == 4 * 2 and set(friedman["at"]) == {"position_200"}
    assert (friedman["note"] == "").all() and set(friedman["n"]) == {3}
    assert pd.to_numeric(friedman["p_value"]).between(0, 1).all()
    assert len(pd.read_csv(rankings / "nemenyi.csv")) == 4
    sk = pd.read_parquet(rankings / "scott_knott.parquet")
    assert len(sk) == 4 * 2 and sk["group"].notna().all()
    within = pd.read_parquet(rankings / "within.parquet")
    assert set(within["dataset"]) == {"g1", "g2", "g3"} and len(within) == 3 * 4 * 2
    pngs = sorted(p.name for p in (rankings / "figures").glob("*.png"))
    stems = ["learner_hitl_7d_90d", "learner_ideal", "policy_nb", "policy_nochange"]
    assert pngs == sorted(
        f"{kind}_{stem}_position_200_accuracy.png" for kind in ("cd", "sk") for stem in stems
    )
    assert (workdir / "logs" / "results" / "s1" / "rankings.log").is_file()
    assert not (workdir / "results" / "merged").exists()  # the study's tables are in its folder
    # the report: a Rankings category with the pages and the figures
    run(workdir, "--cores", "1", "--report", "results/s1/report.html")
    html = (workdir / "results" / "s1" / "report.html").read_text(errors="replace")
    match = re.search(r"var categories = (\{.*?\});?\n", html, flags=re.S)
    assert match, "no categories in the report"
    ranked = {
        Path(path).name
        for paths in json.loads(match.group(1))["Rankings"].values()
        for path in paths
    }
    pages = {"rankings.html", "within.html"}
    assert ranked == {*pages, "friedman.csv", "nemenyi.csv", "scott_knott.csv", "within.csv", *pngs}
    check_toggles(html)
    page = report_results(html)["results/s1/rankings/rankings.html"]
    assert page["mime_type"] == "text/html" and "(3 in this study;" in page["caption"]
    # a second study: its own results, the same runs; ideal is shared, delay_3d is new
    second = {**study, "results": "results/s2"}
    second["policies"] = {
        "ideal": {"preset": "ideal"},
        "delay_3d": {"preset": "delay", "window": "3d"},
    }
    (workdir / "s2.yaml").write_text(yaml.safe_dump(second))
    proc = run(workdir, "--dry-run", "--cores", "1", "--configfile", "s2.yaml")
    planned = re.findall(
        r"^rule evaluate:\n(?:.*\n)*?    wildcards: (.*)$", proc.stdout, flags=re.M
    )
    assert len(planned) == 6 and all("policy=delay_3d" in w for w in planned), planned
    assert "rule rankings:" in proc.stdout and "results/s2/rankings/friedman.csv" in proc.stdout


def test_evaluate_jobs_with_several_threads_run_their_folds_in_processes(workdir, tmp_path):
    """``--set-threads evaluate=2``: each evaluate job runs its folds in two processes (its
    ``jobs``), whose workers do not import the job's script (a Snakemake script, with no
    ``snakemake`` object outside its job: they failed with a NameError); the same tables."""
    # (the module's run, with its config as the tests before this one left it, as the reference)
    other = copy_workflow(tmp_path / "wf", workdir / "config.yaml")
    proc = run(other, "--cores", "2", "--set-threads", "evaluate=2")
    assert executed(proc)["evaluate"] == 4
    for one in sorted((workdir / "results" / "runs").rglob("folds.parquet")):
        two = other / one.relative_to(workdir)
        a, b = pd.read_parquet(one), pd.read_parquet(two)
        timing = [c for c in a.columns if c.endswith("seconds") or c.endswith("bytes")]
        pd.testing.assert_frame_equal(a.drop(columns=timing), b.drop(columns=timing))
