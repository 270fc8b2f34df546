"""The table of a study's datasets (delaycv.tables.datasets) and its page (delaycv.report.datasets):
what each stream holds and what its conversion left out or changed, from delaycv's streams, a
stream without times and a Parquet file pandas wrote; the real brackets stream against the
datasets' README. The workflow's side (merge_all's datasets.csv and page) is checked by
tests/workflow/test_workflow_run.py."""

from __future__ import annotations

import hashlib
import math

import pandas as pd
import pytest

from delaycv.cli import main
from delaycv.data.convert import convert_file
from delaycv.data.stream_file import write_stream
from delaycv.data.synthetic import generate_stream
from delaycv.report.datasets import datasets_html
from delaycv.stages.merge import merge
from delaycv.tables.datasets import DATASET_COLUMNS, datasets_table
from tests.support.paths import shared_file


@pytest.fixture
def streams(tmp_path):
    """A converted CSV with a dangling fix link and a missing value, a stream without times (its
    positions), and a Parquet file pandas wrote (no delaycv metadata)."""
    raw = tmp_path / "raw.csv"
    raw.write_text(
        "t,y,link,la,e\n100,1,-1,3,1\n200,0,-1,,2\n300,1,100,5,3\n400,0,250,2,4\n500,1,-1,1,5\n",
        encoding="utf-8",
    )
    mapping = {"time": "t", "label": "y", "positive": "1", "link": "link", "drop": ["e"]}
    convert_file(raw, tmp_path / "linked.parquet", mapping=mapping, effort="e")
    positions = tmp_path / "positions.csv"
    positions.write_text("y,x\n1,0.5\n0,0.25\n0,0.75\n", encoding="utf-8")
    mapping = {"time_unit": "position", "label": "y", "positive": "1"}
    convert_file(positions, tmp_path / "positions.parquet", mapping=mapping)
    frame = pd.DataFrame({"time": [10, 20, 30, 40], "label": [0, 1, 1, 0], "x": [1.0, 2, 3, 4]})
    frame["label_time"] = [float("nan"), 25.0, float("nan"), float("nan")]
    frame.to_parquet(tmp_path / "pandas.parquet")
    return {
        "linked": tmp_path / "linked.parquet",
        "positions": tmp_path / "positions.parquet",
        "theirs": tmp_path / "pandas.parquet",
    }


def test_each_stream_s_row_counts_its_instances_times_and_notes(streams):
    table = datasets_table(streams)
    assert list(table.columns) == DATASET_COLUMNS
    assert table["dataset"].tolist() == ["linked", "positions", "theirs"]
    linked, positions, theirs = (row for _, row in table.iterrows())
    # 5 rows, 3 positives; the link 100 (at 300) reveals row 1, the link 250 points at no row
    assert (linked["rows"], linked["positives"], linked["positives_with_label_time"]) == (5, 3, 1)
    assert linked["positive_share"] == pytest.approx(0.6)
    assert (linked["time"], linked["first_time"], linked["last_time"]) == ("unix_seconds", 100, 500)
    assert (linked["features"], linked["missing_values"], linked["effort"]) == (1, 1, "e")
    assert linked["notes"] == (
        "1 feedback link matched no positive instance (1 at a time with no row): left out"
    )
    assert (positions["time"], positions["first_time"], positions["last_time"]) == (
        "position",
        1,
        3,
    )
    assert (positions["effort"], positions["notes"]) == ("", "")
    # a file pandas wrote: counted from its columns
    assert (theirs["rows"], theirs["positives"], theirs["positives_with_label_time"]) == (4, 2, 1)
    assert (theirs["features"], theirs["notes"]) == (1, "")
    # where each came from: the raw file converted (its name and SHA-256), none for pandas's
    raw = streams["linked"].parent / "raw.csv"
    assert (linked["source"], linked["source_sha256"]) == (
        "raw.csv",
        hashlib.sha256(raw.read_bytes()).hexdigest(),
    )
    assert positions["source"] == "positions.csv"
    assert (theirs["source"], theirs["source_sha256"]) == ("", "")


def test_the_page_shows_dates_positions_shares_and_the_notes_escaped(streams):
    table = datasets_table(streams)
    table.loc[1, "notes"] = "a <b> note"
    page = datasets_html(table)
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    rows = page.split("<tbody>")[1].split("</tr>")
    assert "<td>linked</td>" in rows[0] and "3 (60.0 %)" in rows[0]
    assert "1970-01-01 to 1970-01-01" in rows[0] and "1 feedback link matched" in rows[0]
    assert "1 to 3" in rows[1] and "<td>none</td>" in rows[1] and "a &lt;b&gt; note" in rows[1]
    assert "<td>e</td>" in rows[0]
    assert "<td>raw.csv</td>" in rows[0] and "<td>n/a</td>" in rows[2]


def test_merge_writes_the_datasets_table_and_page(streams, tmp_path):
    run = tmp_path / "run"
    args = ["evaluate", str(streams["linked"]), "--learner", "naive_bayes.GaussianNB"]
    assert main([*args, "--folds", "2", "--out", str(run), "--quiet"]) == 0
    out = merge(
        [run],
        tmp_path / "merged.parquet",
        runs=[run],
        runs_out=tmp_path / "runs.parquet",
        streams=streams,
        datasets_csv=tmp_path / "datasets.csv",
        datasets_page=tmp_path / "datasets.html",
    )
    written = pd.read_csv(tmp_path / "datasets.csv", keep_default_na=False)
    assert written["dataset"].tolist() == list(streams) and len(out.datasets) == 3
    assert "feedback link matched" in (tmp_path / "datasets.html").read_text()


def test_brackets_agrees_with_the_datasets_readme(tmp_path):
    """cut2years/0_brackets: 11,914 rows, 3,497 positives (29.4 %), 1,797 of them the target of a
    later row's fix link, 2011-12-07 to 2019-03-05 (the README of ../shared/datasets)."""
    stream = tmp_path / "brackets.parquet"
    convert_file(
        shared_file("commit_guru_dataset/cut2years/0_brackets.csv"), stream, preset="commit-guru"
    )
    (row,) = datasets_table({"brackets": stream}).to_dict("records")
    assert (row["rows"], row["positives"], row["positives_with_label_time"]) == (11914, 3497, 1797)
    assert round(100 * row["positive_share"], 1) == 29.4
    page = datasets_html(datasets_table({"brackets": stream}))
    assert "2011-12-07 to 2019-03-05" in page
    assert row["effort"] == "la + ld" and row["notes"] == "" and not math.isnan(row["first_time"])


def test_a_generated_stream_has_no_notes(tmp_path):
    path = tmp_path / "s.parquet"
    write_stream(generate_stream(rows=100, seed=2, effort=False), path)
    (row,) = datasets_table({"g": path}).to_dict("records")
    assert (row["rows"], row["effort"], row["notes"]) == (100, "", "")
    assert row["source"] == "generated (seed 2, 100 rows)"
