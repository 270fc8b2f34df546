"""spdisc's copies (link kind ``commit_type``): a row of commit type 3 is a copy of an earlier
defect-inducing commit, placed at the time it was found. It is that commit's reveal, not an
instance: the conversion gives the commit its time as label_time and leaves the copy out."""

from __future__ import annotations

import json
import logging
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import delaycv
from delaycv.cli import main
from delaycv.common.errors import ConfigError, InputError
from delaycv.data.convert import DAY, load_stream
from delaycv.data.stream_file import write_stream
from delaycv.study.loading import load_config

NAN = np.nan
HEAD = """@relation spdisc-like
@attribute fix {False,True}
@attribute la numeric
@attribute ld numeric
@attribute contains_bug {False,True}
@attribute author_date_unix_timestamp numeric
@attribute commit_type numeric
@data
"""
T0 = 1_400_000_000  # (2014-05-13 16:53:20 UTC)


def arff(tmp_path, rows, name="s.arff"):
    """An spdisc-like ARFF file of ``rows``: (fix, la, ld, bug, time, type), in that order."""
    lines = [f"{f},{la},{ld},{b},{t},{ty}" for f, la, ld, b, t, ty in rows]
    path = tmp_path / name
    path.write_text(HEAD + "\n".join(lines) + "\n", encoding="utf-8")
    return path


# A and B: two commits with the same features whose times are not a whole number of days apart;
# C: a commit dated two days after the copy that reveals it (a rebased commit); D1, D2: the same
# features at the same time of day, a day apart; E: a copy of no commit of the file.
HAND = [
    ("False", 1, 0, "False", T0, 0),  # 1 clean
    ("True", 5, 2, "True", T0 + 100, 2),  # 2 A
    ("True", 5, 2, "True", T0 + 200, 1),  # 3 B (A's features, another time of day)
    ("False", 9, 9, "True", T0 + 300, 3),  # E: copies nothing here (left out, warned)
    ("False", 7, 1, "True", T0 + 400, 3),  # copy of C, found before C's own date
    ("False", 3, 3, "True", T0 + 500, 2),  # 4 D1
    ("False", 3, 3, "True", T0 + 500 + DAY, 2),  # 5 D2
    ("False", 7, 1, "True", T0 + 400 + 2 * DAY, 2),  # 6 C
    ("True", 5, 2, "True", T0 + 100 + 3 * DAY, 3),  # copy of A (not B: not whole days away)
    ("False", 3, 3, "True", T0 + 500 + 5 * DAY, 3),  # takes D2, the latest at or before it
    ("False", 3, 3, "True", T0 + 500 + 6 * DAY, 3),  # then D1
    ("False", 2, 0, "False", T0 + 7 * DAY, 0),  # 7 clean
]


def test_copies_reveal_their_commits_and_are_no_instances(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        stream = load_stream(arff(tmp_path, HAND), preset="spdisc")
    np.testing.assert_array_equal(
        stream.time,
        [T0, T0 + 100, T0 + 200, T0 + 500, T0 + 500 + DAY, T0 + 400 + 2 * DAY, T0 + 7 * DAY],
    )
    np.testing.assert_array_equal(stream.label, [0, 1, 1, 1, 1, 1, 0])
    np.testing.assert_array_equal(
        stream.label_time,
        [NAN, T0 + 100 + 3 * DAY, NAN, T0 + 500 + 6 * DAY, T0 + 500 + 5 * DAY, T0 + 400, NAN],
    )
    m = stream.metadata
    assert (m["rows"], m["positives"], m["positives_with_label_time"]) == (7, 5, 4)
    assert (m["links"], m["copy_rows"], m["dangling_links"], m["dangling_no_row"]) == (5, 5, 1, 1)
    assert m["label_time_before_time"] == 1  # C
    assert (m["feedback_column"], m["link_kind"]) == ("commit_type", "commit_type")
    assert m["features"] == ["fix", "la", "ld"] and m["dropped_columns"] == ["commit_type"]
    assert stream.features["la"].tolist() == [1, 5, 5, 3, 3, 7, 2]
    assert stream.effort.tolist() == [1, 7, 7, 6, 6, 8, 2]
    assert caplog.messages == [
        f"{tmp_path / 's.arff'}: 1 copy row(s) (commit type 3) match no defect-inducing commit "
        "of the file (one of type 1 or 2 with the same feature values, a whole number of days "
        "away, not revealed by another copy): left out; first: row 4 (line 12)"
    ]


def test_sorting_and_copies_together(tmp_path):
    """With sort, the rows are put in time order and the copies left out, in either order."""
    rows = [HAND[0], HAND[1], HAND[8], HAND[11], HAND[2]]  # a copy and a commit out of order
    stream = load_stream(arff(tmp_path, rows), preset="spdisc", sort=True)
    np.testing.assert_array_equal(stream.time, [T0, T0 + 100, T0 + 200, T0 + 7 * DAY])
    np.testing.assert_array_equal(stream.label_time, [NAN, T0 + 100 + 3 * DAY, NAN, NAN])
    assert stream.metadata["sorted_rows"] > 0 and stream.metadata["copy_rows"] == 1


@pytest.mark.parametrize(
    "row, words",
    [
        (("False", 1, 0, "False", T0 + 9, 5), "row 2 (line 10): commit type '5' in column"),
        (("False", 1, 0, "False", T0 + 9, "?"), "row 2 (line 10): missing commit type in"),
        (("False", 1, 0, "True", T0 + 9, 0), "row 2 (line 10): commit type 0 in column "),
        (("False", 1, 0, "False", T0 + 9, 3), "commit type 3 in column 'commit_type' on a neg"),
    ],
)
def test_a_commit_type_that_cannot_be_is_refused_at_its_row(tmp_path, row, words):
    path = arff(tmp_path, [HAND[0], row])
    with pytest.raises(InputError, match="expected") as err:
        load_stream(path, preset="spdisc")
    assert words in str(err.value) and str(err.value).startswith(str(path))


def test_commit_types_as_text(tmp_path):
    """A nominal attribute {0,1,2,3} gives the same stream; a word there is refused at its row."""
    nominal = arff(tmp_path, HAND, "n.arff")
    nominal.write_text(
        nominal.read_text().replace("commit_type numeric", "commit_type {0,1,2,3}"), "utf-8"
    )
    a, b = load_stream(arff(tmp_path, HAND), preset="spdisc"), load_stream(nominal, preset="spdisc")
    assert np.array_equal(a.label_time, b.label_time, equal_nan=True) and len(a) == len(b) == 7
    path = tmp_path / "t.csv"
    path.write_text("t,x,y,kind\n1,0,0,0\n2,1,1,copy\n", encoding="utf-8")
    mapping = {"time": "t", "label": "y", "positive": 1, "link": "kind", "categorical": "kind"}
    with pytest.raises(InputError, match=r"row 2 \(line 3\): commit type 'copy' in column 'kind'"):
        load_stream(path, mapping={**mapping, "link_kind": "commit_type"})


def test_the_command_counts_the_copies(tmp_path, capsys):
    out = tmp_path / "s.parquet"
    argv = ["convert", str(arff(tmp_path, HAND)), str(out), "--preset", "spdisc"]
    assert main([*argv, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["rows"], summary["positives_with_label_time"]) == (7, 4)
    assert (summary["copy_rows"], summary["dangling_links"]) == (5, 1)
    assert main(argv) == 0  # (the line of words)
    assert capsys.readouterr().out.endswith(
        "delaycv: s: 7 instances, 5 positives (71.4 %), 4 with a reveal time (from 5 copy "
        f"rows), 3 features, effort la + ld -> {out}\n"
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 2),  # la: few values, so that commits share their features
            st.integers(0, 3),  # time of day, in hours: few values too
            st.integers(0, 40),  # day of the commit
            st.one_of(st.none(), st.integers(-3, 120)),  # days until found; None: never
            st.booleans(),  # defect-inducing
        ),
        min_size=1,
        max_size=30,
    )
)
def test_each_copy_reveals_a_commit_like_it(rows):
    """On any spdisc-like file (copies found whole days before or after their commits, commits
    that share their features and times of day), every copy reveals a commit with its features
    and time of day, a whole number of days from it, and no commit twice: the label times of
    each kind of commit are the times of its copies."""
    commits, copies = [], []
    for la, hour, day, found, bug in rows:
        t = T0 + day * DAY + hour * 3600
        kind = 0 if not bug else (2 if found is not None and found <= 90 else 1)
        commits.append(("False", la, 0, str(bug), t, kind))
        if bug and found is not None:
            copies.append(("False", la, 0, "True", t + found * DAY, 3))
    text = sorted(commits + copies, key=lambda r: r[4])
    with tempfile.TemporaryDirectory() as folder:
        stream = load_stream(arff(Path(folder), text), preset="spdisc")
    assert stream.metadata["dangling_links"] == 0 and stream.metadata["copy_rows"] == len(copies)
    assert len(stream) == len(commits)
    assert Counter(zip(stream.time.tolist(), stream.label.tolist(), strict=True)) == Counter(
        (c[4], int(c[3] == "True")) for c in commits
    )
    revealed = ~np.isnan(stream.label_time)
    assert ((stream.label_time[revealed] - stream.time[revealed]) % DAY == 0).all()
    got = Counter(
        (la, int(t) % DAY, int(lt))
        for la, t, lt in zip(
            stream.features["la"][revealed],
            stream.time[revealed],
            stream.label_time[revealed],
            strict=True,
        )
    )
    assert got == Counter((c[1], c[4] % DAY, c[4]) for c in copies)


@pytest.mark.parametrize("change", [{"link": None}, {"link_kind": "label_time"}])
def test_the_preset_s_link_cannot_be_dropped(tmp_path, change):
    """Without its link, the spdisc preset would read the copies as commits again."""
    with pytest.raises(ConfigError, match="key mapping.link: the spdisc preset's link"):
        load_stream(arff(tmp_path, HAND), preset="spdisc", mapping=change)


def test_a_stream_that_kept_the_copies_is_refused(tmp_path, capsys):
    """A stream converted by delaycv 0.1.0 from an spdisc file (the preset in its metadata, no
    link) holds every found defect twice: `delaycv evaluate` and a study refuse it, naming the
    file and the command that converts it again; the same file converted now is taken."""
    now = load_stream(arff(tmp_path, HAND), preset="spdisc")
    then = replace(
        now,
        label_time=np.full(len(now), np.nan),
        metadata={**now.metadata, "feedback_column": None, "link_kind": None},
    )
    write_stream(then, tmp_path / "old.parquet")
    write_stream(now, tmp_path / "new.parquet")
    run = ["evaluate", "--learner", "NoChange", "--policy", "ideal", "--folds", "2"]
    assert (
        main([*run[:1], str(tmp_path / "old.parquet"), *run[1:], "--out", str(tmp_path / "o")]) == 2
    )
    err = capsys.readouterr().err
    assert (
        f"{tmp_path / 'old.parquet'}: converted from an spdisc file by a delaycv that kept" in err
    )
    assert "delaycv convert SRC DEST --preset spdisc" in err and not (tmp_path / "o").exists()
    config = {
        "datasets": {"old": {"path": "old.parquet"}, "new": {"path": "new.parquet"}},
        "learners": {"n": {"class": "NoChange"}},
        "policies": {"ideal": {"preset": "ideal"}},
        "seeds": [1],
    }
    for old in (tmp_path / "old.parquet", str(tmp_path / "old.parquet"), then):
        with pytest.raises(InputError, match="converted from an spdisc file by a delaycv that"):
            delaycv.evaluate(old, "NoChange", policy="ideal", validation={"folds": 2})
    with pytest.raises(ConfigError, match="key datasets.old.path: old.parquet: converted from"):
        load_config(config, cwd=tmp_path, learners=False)
    del config["datasets"]["old"]
    assert load_config(config, cwd=tmp_path, learners=False)["datasets"]["new"]
