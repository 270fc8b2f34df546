"""Times that cannot be right: a duration window on a stream whose times are
positions is refused; windows that cannot work on the stream's times are warnings."""

from __future__ import annotations

import logging
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from river import datasets, tree

import delaycv
from delaycv.common.errors import ConfigError, InputError
from delaycv.data.stream_file import open_stream, to_table, write_stream
from delaycv.data.synthetic import generate_stream
from delaycv.engine.windows import TimeProfile, time_profile, time_warnings
from delaycv.protocol.policies import make_policy
from tests.support.paths import COMMIT_GURU

BRACKETS = COMMIT_GURU / "cut2years" / "0_brackets.arff"


def model():
    return tree.HoeffdingTreeClassifier(grace_period=50)


def run(stream, **options):
    return delaycv.evaluate(stream, model(), folds=2, progress=False, **options)


def test_a_river_dataset_with_a_duration_window_is_refused_with_the_instance_form():
    with pytest.raises(ConfigError) as info:
        run(datasets.Phishing(), policy="delay", window="7d")
    assert str(info.value) == (
        "key policy.window: the window 7d is a duration, but the stream's times are its "
        "instances' positions (it has no times: a file converted with time_unit position, or "
        "x dicts without a time key): write it as a count of instances, e.g. 50i (expected a "
        "window in instances such as 50i, or a stream with times)"
    )
    with pytest.raises(ConfigError, match=r"^key policy\.neg_window: the window 90d "):
        run(datasets.Phishing(), policy="hitl", pos_window="10i", neg_window="90d")
    with pytest.raises(ConfigError, match=r"^key policy\.pos_window: the window 50s "):
        run(datasets.Phishing(), policy="hitl", pos_window="50s", neg_window="90i")


def test_a_river_dataset_with_count_windows_or_zero_runs_without_warning():
    result = run(datasets.Phishing(), policy="hitl", pos_window="10i", neg_window="0")
    # no word on the windows; one on the corrected reference, which needs fix times
    assert [w.split(":")[0] for w in result.info["warnings"]] == ["corrected"]
    assert all(f["evaluated"] > 0 for f in result.info["folds"])


def test_a_window_longer_than_the_stream_can_release_nothing(caplog):
    stream = generate_stream(rows=1200, seed=1)
    span = (stream.time[-1] - stream.time[0]) / 86400
    with caplog.at_level(logging.WARNING, logger="delaycv.engine"):
        result = run(stream, policy="delay", window="3000d")
    warnings = result.info["warnings"]
    assert warnings[0] == (
        f"key policy.window: the window 3000d is longer than the whole stream ({span:.1f}d from "
        "its first time to its last): the policy can release nothing before the end of the "
        f"stream (expected a window shorter than {span:.1f}d)"
    )
    assert warnings[-1] == (
        "key policy: the policy delay_3000d released no label in folds 0, 1: nothing was "
        "evaluated there and the metrics are NaN (expected windows that end before the stream "
        "does, or flush)"
    )
    assert [f["evaluated"] for f in result.info["folds"]] == [0, 0]
    logged = [r.getMessage() for r in caplog.records]
    assert warnings[0] in logged and warnings[-1] in logged


def test_a_policy_that_can_release_only_clean_labels_says_so(caplog):
    """verification on a stream without fix times (one converted without a link column): every
    label it releases is 0, which a study of such a file showed only as "observed n/a". One
    warning, before the run, logged and recorded; none with fix times, none for hitl (its
    positives are inspected)."""
    stream = generate_stream(rows=1200, seed=1)
    bare = replace(
        stream,
        label_time=np.full(len(stream), np.nan),
        metadata={**stream.metadata, "positives_with_label_time": 0},
    )
    with caplog.at_level(logging.WARNING, logger="delaycv.engine"):
        result = run(bare, policy="verification", window="30d")
    expected = (
        "key policy: the policy verification_30d gives a label 1 only where a fix is seen "
        "(label_time), and the stream has no fix time: every label it releases is 0, so no fold "
        "learns a positive and the observed metrics of class 1 are undefined or 0 (expected a "
        "stream with fix times, or a policy whose window ends in the truth: hitl, delay)"
    )
    assert expected in result.info["warnings"]
    assert expected in [r.getMessage() for r in caplog.records]
    last = result.folds[result.folds["checkpoint"] == len(stream)]
    assert last.loc[last["reference"] == "observed", "recall_1"].isna().all()
    assert "gives a label 1 only" not in " ".join(
        run(stream, policy="verification", window="30d").info["warnings"]
    )
    hitl = run(bare, policy="hitl", pos_window="7d", neg_window="30d").info["warnings"]
    assert "gives a label 1 only" not in " ".join(hitl)


def test_the_same_check_reads_a_stream_file(tmp_path):
    stream = generate_stream(rows=1200, seed=1)
    write_stream(stream, tmp_path / "s.parquet")
    assert time_profile(open_stream(tmp_path / "s.parquet")) == time_profile(stream)
    result = run(tmp_path / "s.parquet", policy="delay", window="3000d")
    assert result.info["warnings"][0].startswith("key policy.window: the window 3000d is longer")


def test_hitl_with_a_negative_window_longer_than_the_stream_names_the_side():
    stream = generate_stream(rows=1200, seed=1)
    result = run(stream, policy="hitl", pos_window="7d", neg_window="3000d")
    assert result.info["warnings"][0].startswith(
        "key policy.neg_window: the window 3000d is longer than the whole stream ("
    )
    assert (
        "the policy can release the label of no predicted negative before the end of the "
        "stream (but those revealed by label_time)" in result.info["warnings"][0]
    )


def test_milliseconds_counted_from_0_read_as_seconds_are_named():
    rng = np.random.default_rng(0)
    n = 1500
    frame = pd.DataFrame(
        {"time": np.arange(n) * 1000, "label": rng.integers(0, 2, n), "a": rng.random(n)}
    )
    result = run(frame, policy="hitl", pos_window="7d", neg_window="7d", time_unit="s")
    # (then the learner's: no probability before its first label, 600 instances in)
    assert result.info["warnings"][:1] == [
        "keys policy.pos_window, policy.neg_window: every gap between the stream's times (all "
        "1499) is a multiple of 1000 seconds: they look like milliseconds read as seconds, which "
        "makes the window 7d last 10.1m of the stream's real time (expected Unix seconds: "
        "time_unit ms, or write the window as a count of instances, e.g. 50i)"
    ]


def test_seconds_declared_as_milliseconds_are_refused_or_named():
    """Seconds given as milliseconds are refused when read (every time in 1970, dates in
    seconds: delaycv.data.timeunits.coarser_unit); a stream whose times already are such
    (written elsewhere, or converted before that check) is named before the run, with the units
    its conversion read them in when its metadata says."""
    stream = generate_stream(rows=1200, seed=1)
    frame = to_table(stream).to_pandas()
    with pytest.raises(InputError, match="they look like seconds .time_unit='s'."):
        run(frame, policy="delay", window="7d", time_unit="ms")
    result = run(
        frame.assign(time=frame["time"] // 1000, label_time=np.nan), policy="delay", window="7d"
    )
    warnings = result.info["warnings"]
    # a 7d window outlasts the whole stream, and the times read like seconds x 1000
    assert warnings[0].startswith("key policy.window: the window 7d is longer than the whole")
    profile = time_profile(stream)
    profile = replace(profile, first=profile.first // 1000, last=profile.last // 1000)
    policy = make_policy({"preset": "delay", "window": "7d"})
    said = {
        unit: time_warnings(profile, policy, {} if unit is None else {"time_unit": unit})[-1]
        for unit in (None, "us", "s")
    }
    assert said[None] == (
        "key policy.window: the stream's times start at 1514798 (in January 1970 as Unix "
        "seconds) and x 1000 they are dates: they look like Unix seconds read as milliseconds, "
        "which makes the window 7d last 7000d of the stream's real time (expected Unix "
        "seconds: time_unit s for times in seconds, or write the window as a count of "
        "instances, e.g. 50i)"
    )
    assert "they look like milliseconds read as microseconds" in said["us"]
    assert "(expected Unix seconds: time_unit ms, or write" in said["us"]
    # read in seconds, they were no misread unit: numbers of their own
    assert "in 1970 as Unix seconds: they look counted from 0 rather than dates" in said["s"]
    assert any(said[None] == w for w in result.info["warnings"])


def test_a_window_far_shorter_than_the_gaps_is_named():
    profile = TimeProfile(first=0, last=10**12, gap=5e9, gcd=7, gaps=200)
    policy = make_policy({"preset": "delay", "window": "1h"})
    assert time_warnings(profile, policy, {}) == [
        "key policy.window: the window 1h is 1000 or more times shorter than the typical gap "
        "between the stream's times (57870.4d, the median): each label waits only for the next "
        "instance, as with 0; are the times in seconds? (expected a window of the order of the "
        "gaps, or times in Unix seconds: time_unit ms if they are milliseconds)"
    ]


def test_ideal_and_count_windows_are_not_checked():
    profile = TimeProfile(first=0, last=10, gap=1000.0, gcd=1000, gaps=20)
    for spec in ("ideal", {"preset": "delay", "window": "500i"}):
        assert time_warnings(profile, make_policy(spec), {}) == []


@pytest.mark.skipif(not BRACKETS.exists(), reason="the Commit Guru datasets are not here")
def test_the_commit_guru_stream_under_usual_windows_has_no_warning():
    stream = delaycv.data.convert.load_stream(str(BRACKETS), preset="commit-guru")
    profile = time_profile(stream)
    for windows in (("7d", "90d"), ("1d", "30d"), ("30d", "180d")):
        policy = make_policy({"preset": "hitl", "pos_window": windows[0], "neg_window": windows[1]})
        assert time_warnings(profile, policy, stream.metadata) == []
    for spec in ({"preset": "delay", "window": "30d"}, {"preset": "verification", "window": "90d"}):
        assert time_warnings(profile, make_policy(spec), stream.metadata) == []
    result = run(stream.subset(0, 3000), policy="hitl", pos_window="7d", neg_window="90d")
    assert result.info["warnings"] == []


def test_a_stream_of_one_time_is_named_as_such():
    """Every instance at the same time (a batch export): no duration window ends before the
    last instance; the warning names the stream's one time, not a window 'shorter than 0s'."""
    profile = TimeProfile(first=1672531200, last=1672531200, gap=0.0, gcd=0, gaps=0)
    for spec, keys in [
        ({"preset": "delay", "window": "7d"}, "key policy.window"),
        (
            {"preset": "hitl", "pos_window": "1d", "neg_window": "7d"},
            "keys policy.pos_window, policy.neg_window",
        ),
    ]:
        metadata = {"positives_with_label_time": 0}
        assert time_warnings(profile, make_policy(spec), metadata) == [
            f"{keys}: every instance of the stream has the same time (1672531200): the policy "
            "can release nothing before the end of the stream (expected times that tell the "
            "instances apart, or windows counted in instances, e.g. 50i)"
        ]
