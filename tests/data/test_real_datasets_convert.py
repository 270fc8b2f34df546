"""The real datasets in ../shared/datasets/ convert, with the figures of its README.

Skipped, with the reason, where that folder is absent (tests/support/paths.py: shared_file).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from delaycv.common.errors import InputError
from delaycv.data.arff import read_arff
from delaycv.data.convert import DAY, convert_file, load_stream
from delaycv.data.stream_file import read_stream
from tests.support.paths import SPDISC, shared_file

pytestmark = pytest.mark.realdata

CG = "commit_guru_dataset/"
# file stem, formats present, rows, positives, rows with a fix link (README table)
README = [
    ("cut2years/0_brackets", "arff csv", 11914, 3497, 2307),
    ("cut2years/0_cppcheck(main)", "arff csv", 23033, 8373, 6256),
    ("cut2years/0_edx-platform(master)", "arff csv", 36932, 9822, 5164),
    ("cut2years/0_gerrit(stable-2.12)", "arff csv", 11794, 3307, 2549),
    ("cut2years/0_gimp(master)", "arff", 46586, 15015, 9194),
    ("cut2years/0_git(master)", "arff csv", 43772, 12584, 8465),
    ("cut2years/0_mindspore(master)", "arff csv", 6887, 2793, 1529),
    ("cut2years/0_pip(main)", "arff csv", 8495, 2105, 1263),
    ("0_brackets", "arff csv", 12011, 3513, 2336),
    ("0_camel(camel-2.20.x)", "arff csv", 30186, 7872, 5664),
    ("0_edx-platform(master)", "arff csv", 40511, 10522, 5722),
    ("0_git(master)", "arff", 47544, 13140, 9351),
    ("0_mindspore(master)", "arff csv", 25303, 8629, 5794),
    ("history/0_cppcheck(main)", "csv", 25646, 8916, None),
    ("history/0_gerrit(stable-2.12)", "csv", 11796, 3307, None),
    ("history/0_pip(main)", "csv", 9443, 2202, None),
]
CASES = [(stem, fmt, *rest) for stem, fmts, *rest in README for fmt in fmts.split()]


@pytest.mark.parametrize(
    "stem, fmt, rows, positives, links", CASES, ids=[f"{c[0]}.{c[1]}" for c in CASES]
)
def test_readme_figures(stem, fmt, rows, positives, links):
    stream = load_stream(shared_file(f"{CG}{stem}.{fmt}"), preset="commit-guru")
    m = stream.metadata
    assert (m["rows"], m["positives"]) == (rows, positives)
    if links is not None:
        assert m["links"] == links
    assert m["features"] == [
        "fix",
        "ns",
        "nd",
        "nf",
        "entropy",
        "la",
        "ld",
        "lt",
        "ndev",
        "age",
        "nuc",
        "exp",
        "rexp",
        "sexp",
    ]
    assert m["positives_with_label_time"] <= positives
    assert np.all(np.diff(stream.time) >= 0)
    assert m["missing"] == {}  # the preprocessing dropped rows with empty fields


def test_brackets_label_time_numbers(tmp_path, brackets_arff):
    """cut2years/0_brackets: 1797 of the 3497 positives get a label_time (README: 1797 are
    the target of some fix link). Every one of the 2307 links finds a positive (0 dangling);
    20 links hit two or more positives that share a timestamp; 9 positives are 'fixed' by a
    commit whose author time is earlier than their own."""
    meta = convert_file(brackets_arff, tmp_path / "b.parquet", preset="commit-guru")
    assert meta["dataset"] == "0_brackets"
    assert (meta["rows"], meta["positives"], meta["positives_with_label_time"]) == (
        11914,
        3497,
        1797,
    )
    assert (meta["links"], meta["dangling_links"]) == (2307, 0)
    assert meta["label_time_before_time"] == 9
    assert meta["source_sha256"] == (
        "30d7a8e57d9af1b2c787de60c2a91d09bd0f33a54424c37c750210d62c515eb2"
    )
    s = read_stream(tmp_path / "b.parquet")
    lt = s.label_time
    assert np.isnan(lt[s.label == 0]).all()
    delay_days = (lt - s.time)[~np.isnan(lt)] / 86400
    assert np.median(delay_days) == pytest.approx(1.9, abs=0.05)
    assert "fix_unix_timestamp" not in s.feature_names and "fix" in s.feature_names


def test_brackets_csv_and_arff_agree(brackets_arff, brackets_csv):
    a = load_stream(brackets_arff, preset="commit-guru")
    c = load_stream(brackets_csv, preset="commit-guru")
    assert np.array_equal(a.time, c.time) and np.array_equal(a.label, c.label)
    assert np.array_equal(a.label_time, c.label_time, equal_nan=True)
    assert a.feature_names == c.feature_names
    # the ARFF rounds reals to 6 decimals
    np.testing.assert_allclose(
        a.features.to_numpy(), c.features.to_numpy(), rtol=0, atol=5e-7 + 1e-12
    )
    assert not np.array_equal(a.features.to_numpy(), c.features.to_numpy())
    drop = ("source", "source_sha256", "format")
    assert {k: v for k, v in a.metadata.items() if k not in drop} == {
        k: v for k, v in c.metadata.items() if k not in drop
    }


def spdisc_files():
    if not SPDISC.exists():
        pytest.skip(f"real dataset not available: {SPDISC} (the shared datasets folder is absent)")
    return sorted(SPDISC.glob("*.arff"))


def test_spdisc_truncated_last_lines():
    files = spdisc_files()
    assert len(files) == 13
    truncated = []
    for f in files:
        try:
            read_arff(f)
        except InputError as err:
            assert "truncated last line" in str(err)
            truncated.append(f.stem)
    assert len(truncated) == 11
    assert sorted(set(f.stem for f in files) - set(truncated)) == ["camel", "tomcat"]


def commit_types(path) -> np.ndarray:
    """The commit type of each row of an spdisc file (its last field; a cut-short last line
    left out)."""
    rows = [line.split(",") for line in path.read_text().splitlines()]
    return np.array([int(r[16]) for r in rows if len(r) == 17 and not r[0].startswith("@")])


def test_spdisc_preset_converts_every_file(tmp_path):
    """Every copy (commit type 3) reveals a commit of its file and is no instance; the reveals
    agree with the file's own types: a commit of type 2, found within the 90 days the files
    were made with, is revealed within 90 days, one of type 1 after them."""
    for f in spdisc_files():
        meta = convert_file(f, tmp_path / f"{f.stem}.parquet", preset="spdisc")
        of_row = commit_types(f)
        types = Counter(of_row.tolist())
        assert meta["dataset"] == f.stem
        assert meta["rows"] == types[0] + types[1] + types[2]
        assert meta["positives"] == types[1] + types[2]
        assert meta["copy_rows"] == meta["links"] == meta["positives_with_label_time"] == types[3]
        assert meta["dangling_links"] == 0
        assert meta["feedback_column"] == meta["link_kind"] == "commit_type"
        assert meta["dropped_columns"] == ["commit_type"]  # it encodes the future
        assert "fix" in meta["features"] and len(meta["features"]) == 14
        assert meta["positive_class"] == "True" and meta["negative_class"] == "False"
        assert meta["missing"] == {}
        s = read_stream(tmp_path / f"{f.stem}.parquet")
        revealed = ~np.isnan(s.label_time)
        delay = (s.label_time - s.time)[revealed]
        assert (delay % DAY == 0).all()
        np.testing.assert_array_equal(delay <= 90 * DAY, of_row[of_row != 3][revealed] == 2)
    s = read_stream(tmp_path / "brackets.parquet")
    assert (s.metadata["rows"], s.metadata["positives"]) == (17310, 4045)
    assert (s.metadata["copy_rows"], s.metadata["label_time_before_time"]) == (4037, 9)
    assert s.metadata["dropped_last_line"] is True
    assert set(np.unique(s.features["fix"])) == {0.0, 1.0}  # nominal {False,True} -> 0/1


def test_spdisc_without_dropping_fails(tmp_path):
    src = shared_file("spdisc-icse19-master/datasets/npm.arff")
    m = {"time": "author_date_unix_timestamp", "label": "contains_bug", "positive": "True"}
    with pytest.raises(InputError, match="line 9279: truncated last line"):
        convert_file(src, tmp_path / "npm.parquet", mapping=m)
    assert not (tmp_path / "npm.parquet").exists()


def test_one_empty_cell_in_brackets_is_left_out(tmp_path, brackets_csv):
    """Issue 12: one empty `la` cell in data row 100 of brackets. With NaN in x it took the
    G-mean of GaussianNB (ideal, prequential, cumulative) from 0.432 to 0.306; left out of
    that instance's x, the engine scores as a river loop without the key, here as the clean file."""
    from river import metrics, naive_bayes

    from tests.support.engine_runs import evaluate

    lines = brackets_csv.read_text().split("\n")
    fields = lines[100].split(",")
    col = lines[0].split(",").index('"la"')
    assert fields[col] == "22"
    fields[col] = ""
    lines[100] = ",".join(fields)
    src = tmp_path / "holed.csv"
    src.write_text("\n".join(lines))
    # la is also the preset's effort, which may not be missing: the stream without effort here
    with pytest.raises(InputError) as info:
        load_stream(src, preset="commit-guru")
    assert str(info.value).startswith(f"{src}: row 100 (line 101): effort column 'la' is missing")
    hole = load_stream(src, preset="commit-guru", effort=None)
    assert hole.metadata["missing"] == {"la": 1} and hole.effort is None
    xs = hole.records(98, 101)
    assert "la" in xs[0] and "la" not in xs[1] and len(xs[1]) == 13 and "la" in xs[2]

    def gmean(stream):
        result = evaluate(
            stream,
            {"class": "river.naive_bayes.GaussianNB"},
            {"preset": "ideal"},
            {"scheme": "prequential", "folds": 1},
            seed=1,
            estimator={"kind": "cumulative"},
            every=len(stream),
            timing=False,
        )
        return float(result.folds["gmean"].iloc[-1])

    model, river_gmean = naive_bayes.GaussianNB(), metrics.GeometricMean()
    names = hole.feature_names
    for row, y in zip(hole.features.itertuples(index=False), hole.label.tolist(), strict=True):
        x = {k: v for k, v in zip(names, row, strict=True) if not np.isnan(v)}
        p = model.predict_proba_one(x)
        p1 = p.get(1, 0.0) / sum(p.values()) if p else 0.5
        river_gmean.update(y, 1 if p1 > 0.5 else 0)
        model.learn_one(x, y)
    got = gmean(hole)
    assert got == pytest.approx(river_gmean.get(), rel=1e-9)
    assert got == pytest.approx(0.4316, abs=5e-4)
    assert got == pytest.approx(gmean(load_stream(brackets_csv, preset="commit-guru")), abs=1e-3)


def test_brackets_effort_is_la_plus_ld_row_by_row(tmp_path, brackets_arff, brackets_csv):
    """Commit Guru's la and ld are absolute line counts (whole numbers; la is larger than lt,
    the lines of the touched files per file, on 737 rows): the preset's effort is their sum,
    row by row, as the raw file holds them."""
    raw = read_arff(brackets_arff).table
    la = raw.column("la").to_numpy()
    ld = raw.column("ld").to_numpy()
    assert (la == np.round(la)).all() and (ld == np.round(ld)).all()
    assert int((la > raw.column("lt").to_numpy()).sum()) == 737
    meta = convert_file(brackets_arff, tmp_path / "b.parquet", preset="commit-guru")
    assert meta["effort"] == "la + ld"
    s = read_stream(tmp_path / "b.parquet")
    assert s.effort.dtype == np.float64 and len(s.effort) == 11914
    np.testing.assert_array_equal(s.effort, la + ld)  # the rows are in time order already
    np.testing.assert_array_equal(s.effort, s.features["la"] + s.features["ld"])
    assert s.effort[:8].tolist() == [3754.0, 4.0, 2.0, 5.0, 5.0, 74.0, 25.0, 16.0]
    assert s.effort.sum() == 2_348_933.0 and int((s.effort == 0).sum()) == 76
    assert "la" in s.feature_names and "ld" in s.feature_names  # still features
    assert pq_names(tmp_path / "b.parquet")[:4] == ["time", "label", "label_time", "effort"]
    # the CSV (full precision) gives the same effort: la and ld are whole numbers
    np.testing.assert_array_equal(load_stream(brackets_csv, preset="commit-guru").effort, s.effort)
    # effort none: no effort column, as the file was before streams had one
    meta = convert_file(brackets_arff, tmp_path / "n.parquet", preset="commit-guru", effort=None)
    assert "effort" not in meta
    assert pq_names(tmp_path / "n.parquet")[:4] == ["time", "label", "label_time", "fix"]


def test_spdisc_preset_effort_is_la_plus_ld(tmp_path):
    """spdisc's la and ld are absolute line counts too (whole numbers, la > 0 where lt is 0),
    while its lt is per file (lt * nf is a whole number on every row): la + ld, not la * lt.
    (Counted over every row of the file; the stream's effort over its commits, the copies left
    out.)"""
    src = shared_file("spdisc-icse19-master/datasets/brackets.arff")
    raw = read_arff(src, drop_truncated_last_line=True).table
    la, ld = raw.column("la").to_numpy(), raw.column("ld").to_numpy()
    lt, nf = raw.column("lt").to_numpy(), raw.column("nf").to_numpy()
    assert (la == np.round(la)).all() and (ld == np.round(ld)).all()
    assert int(((la > 0) & (lt == 0)).sum()) == 206
    assert (lt != np.round(lt)).sum() == 4641
    np.testing.assert_allclose(lt * nf, np.round(lt * nf), atol=1e-3)
    meta = convert_file(src, tmp_path / "s.parquet", preset="spdisc")
    assert meta["effort"] == "la + ld"
    s = read_stream(tmp_path / "s.parquet")
    commits = commit_types(src) != 3
    np.testing.assert_array_equal(s.effort, (la + ld)[commits])
    assert s.effort[:6].tolist() == [3754.0, 4.0, 2.0, 5.0, 5.0, 74.0]
    assert s.effort.sum() == 2_556_014.0 and s.effort.max() == 170_403.0
    # 5787 commits change no line; 5741 of them touch no file at all (ns = nd = nf = 0)
    assert int((s.effort == 0).sum()) == 5787
    assert int((s.features["nf"][s.effort == 0] == 0).sum()) == 5741


def pq_names(path) -> list[str]:
    import pyarrow.parquet as pq

    return pq.read_schema(path).names
