"""The embedded default stream: seeded, commit-like, with delayed fix events and a drift."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from delaycv.cli import main
from delaycv.common.errors import DelaycvError
from delaycv.data.convert import METADATA_KEYS
from delaycv.data.stream_file import read_stream, write_stream
from delaycv.data.synthetic import FEATURES, START, generate_stream


@pytest.fixture(scope="module")
def default():
    return generate_stream()


def test_same_seed_byte_identical_parquet(tmp_path):
    write_stream(generate_stream(rows=2000, seed=7), tmp_path / "a.parquet")
    write_stream(generate_stream(rows=2000, seed=7), tmp_path / "b.parquet")
    write_stream(generate_stream(rows=2000, seed=8), tmp_path / "c.parquet")
    a = (tmp_path / "a.parquet").read_bytes()
    assert a == (tmp_path / "b.parquet").read_bytes()
    assert a != (tmp_path / "c.parquet").read_bytes()


def test_shape_and_metadata(default):
    m = default.metadata
    assert len(default) == 6000 and m["rows"] == 6000
    # the same keys as converted data, with the effort's description (a stream with an effort)
    assert set(m) == set(METADATA_KEYS) | {"effort"} and m["effort"] == "la + ld"
    assert 10 <= len(default.feature_names) <= 15
    assert default.feature_names == list(FEATURES)
    assert all(default.features.dtypes == np.float64)
    assert m["generator"]["seed"] == 1 and m["format"] == "synthetic"
    assert len(m["source_sha256"]) == 64
    assert generate_stream(seed=2).metadata["source_sha256"] != m["source_sha256"]
    assert np.all(np.diff(default.time) >= 0) and default.time[0] >= START


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_positive_rate_between_25_and_35_percent(seed):
    rate = generate_stream(rows=3000, seed=seed).label.mean()
    assert 0.25 <= rate <= 0.35


def test_fix_events(default):
    pos = default.label == 1
    lt = default.label_time
    assert np.isnan(lt[~pos]).all()
    revealed = pos & ~np.isnan(lt)
    share = revealed.sum() / pos.sum()
    assert 0.7 <= share <= 0.9  # most positives, not all
    delay = (lt - default.time)[revealed]
    assert (delay > 0).all()
    # heavy tail: the 99th percentile is far beyond the median (log-normal, sigma 1.6)
    q50, q99 = np.percentile(delay, [50, 99])
    assert 5 * 86400 < q50 < 20 * 86400 and q99 > 20 * q50
    # a fix is a later commit: its time is an arrival time, unless it is after the last one
    inside = lt[revealed] <= default.time[-1]
    assert np.isin(lt[revealed][inside], default.time).all()
    assert default.metadata["links"] == revealed.sum()


def test_commit_like_arrivals(default):
    t = default.time
    day = (t - START) // 86400
    weekend = (day % 7) >= 5  # START is a Monday
    per_weekend_day = weekend.sum() / max(1, np.unique(day[weekend]).size)
    per_weekday = (~weekend).sum() / np.unique(day[~weekend]).size
    assert weekend.mean() < 0.12 and per_weekend_day < per_weekday
    hours = ((t - START) % 86400) // 3600
    assert ((hours >= 8) & (hours <= 21)).all()
    gaps = np.diff(t)
    assert np.median(gaps) < 0.1 * gaps.mean()  # bursts: most gaps are short


def test_concept_drift(default):
    """Before the drift size drives the label, after it entropy and fix do."""
    half = len(default) // 2
    y = default.label.astype(float)
    la = np.log1p(default.features["la"].to_numpy())
    fix = default.features["fix"].to_numpy()

    def corr(x, sl):
        return np.corrcoef(x[sl], y[sl])[0, 1]

    early, late = slice(0, half - 200), slice(half + 200, None)
    assert corr(la, early) > corr(la, late) + 0.1
    assert corr(fix, late) > corr(fix, early) + 0.1


def test_bad_arguments():
    for bad in (0, -5, 1.5, True):
        with pytest.raises(DelaycvError, match="rows must be a positive integer"):
            generate_stream(rows=bad)
    with pytest.raises(DelaycvError, match="seed"):
        generate_stream(seed=-1)
    with pytest.raises(DelaycvError, match="positive_rate"):
        generate_stream(positive_rate=1.5)


def test_cli_generate(tmp_path, capsys):
    out = tmp_path / "g.parquet"
    argv = ["generate", str(out), "--rows", "500", "--seed", "3", "--dataset", "d"]
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == 500
    assert main(argv) == 0  # (a line of words, as delaycv convert prints)
    said = capsys.readouterr().out
    assert said.startswith("delaycv: d: 500 instances, ") and said.endswith(
        f"13 features, effort la + ld -> {out}\n"
    )
    assert read_stream(out).equals(generate_stream(rows=500, seed=3, dataset="d"))
    meta = json.loads(pq.read_schema(out).metadata[b"delaycv"])
    assert meta["generator"]["rows"] == 500
    assert main(["generate", str(tmp_path / "x.parquet"), "--rows", "0"]) == 2
    assert not (tmp_path / "x.parquet").exists()


def _digest(stream) -> str:
    h = hashlib.sha256()
    for values in (stream.time, stream.label, stream.label_time, stream.features.to_numpy()):
        h.update(np.ascontiguousarray(values).tobytes())
    return h.hexdigest()


def test_effort_is_the_changed_lines_and_draws_nothing(tmp_path):
    """The effort (la + ld) is computed from the features: the stream's other arrays are those the
    generator gave before it had an effort (the digest was taken from that code), and
    ``effort=False`` gives that stream exactly, without an effort."""
    s = generate_stream(rows=500, seed=3)
    assert s.metadata["effort"] == "la + ld" and s.effort.dtype == np.float64
    np.testing.assert_array_equal(s.effort[:6], [13.0, 313.0, 42.0, 146.0, 65.0, 16.0])
    np.testing.assert_array_equal(s.effort, s.features["la"] + s.features["ld"])
    assert s.effort.sum() == 60162.0 and not s.effort.flags.writeable
    assert _digest(s) == "0c68d94937623933bf238dde6412142478ca46347f50c088cb413dbc62e18374"
    bare = generate_stream(rows=500, seed=3, effort=False)
    assert bare.effort is None and "effort" not in bare.metadata
    assert _digest(bare) == _digest(s)
    assert bare.metadata == {k: v for k, v in s.metadata.items() if k != "effort"}
    write_stream(s, tmp_path / "s.parquet")
    assert pq.read_schema(tmp_path / "s.parquet").names[:4] == [
        "time",
        "label",
        "label_time",
        "effort",
    ]
    back = read_stream(tmp_path / "s.parquet")
    assert back.equals(s) and back.metadata["effort"] == "la + ld"
    with pytest.raises(DelaycvError, match="effort must be true or false"):
        generate_stream(rows=10, effort="no")
