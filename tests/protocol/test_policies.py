"""Label policies: the design card §3 table on hand-worked instances, presets, names, errors."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from delaycv.common.errors import ConfigError
from delaycv.protocol import policies
from delaycv.protocol.durations import Window
from delaycv.protocol.policies import make_policy, parse_policy_name
from tests.support.engine_bruteforce import random_stream
from tests.support.paths import REPO

# t, y, L: instance 1 revealed at 15, 2 never, 3 at 100, 4 before its own arrival (5 < 30)
TIME = np.array([0, 10, 20, 30])
LABEL = np.array([1, 0, 1, 1])
REVEAL = np.array([15.0, math.nan, 100.0, 5.0])


def outcomes(policy, pred):
    """(o, a, q) of the four instances predicted ``pred``, via the vectorised schedule."""
    side = policy.schedule(TIME, LABEL, REVEAL).side(pred)
    return [
        (int(side.observed[i]), float(side.due_time[i]), int(side.due_pos[i])) for i in range(4)
    ]


def test_hitl_table_by_hand():
    policy = make_policy({"preset": "hitl", "pos_window": "10s", "neg_window": "50s"})
    assert policy.name == "hitl_10s_50s"
    # predicted positive: o = 1 at L if L <= t + 10, else o = y at t + 10
    assert outcomes(policy, 1) == [(1, 10.0, 0), (0, 20.0, 0), (1, 30.0, 0), (1, 30.0, 0)]
    # predicted negative: o = 1 at L if L <= t + 50, else o = 0 at t + 50
    assert outcomes(policy, 0) == [(1, 15.0, 0), (0, 60.0, 0), (0, 70.0, 0), (1, 30.0, 0)]
    side = policy.schedule(TIME, LABEL, REVEAL)
    assert side.pos.feedback.tolist() == [False, False, False, True]
    assert side.pos.inspect.tolist() == [True, True, True, False]  # truth expiries
    assert side.neg.inspect.tolist() == [False] * 4  # negative expiries are not inspections


def test_verification_delay_ideal_by_hand():
    ver = make_policy({"preset": "verification", "window": "10s"})
    assert ver.name == "verification_10s"
    expected = [(0, 10.0, 0), (0, 20.0, 0), (0, 30.0, 0), (1, 30.0, 0)]
    assert outcomes(ver, 1) == expected and outcomes(ver, 0) == expected
    delay = make_policy({"preset": "delay", "window": "10s"})
    expected = [(1, 10.0, 0), (0, 20.0, 0), (1, 30.0, 0), (1, 40.0, 0)]
    assert outcomes(delay, 1) == expected and outcomes(delay, 0) == expected
    ideal = make_policy("ideal")
    expected = [(1, 0.0, 0), (0, 10.0, 0), (1, 20.0, 0), (1, 30.0, 0)]
    assert outcomes(ideal, 1) == expected and outcomes(ideal, 0) == expected


def test_count_windows_by_hand():
    delay = make_policy({"preset": "delay", "window": "2i"})
    assert delay.name == "delay_2i"
    # due when instance i + 2 arrives: key (t_{i+2}, i + 2); past the end: never
    assert outcomes(delay, 0) == [(1, 20.0, 3), (0, 30.0, 4), (1, math.inf, 0), (1, math.inf, 0)]
    hitl = make_policy({"preset": "hitl", "pos_window": "1i", "neg_window": "3i"})
    # negative side of instance 1 ends at (t_4, 4) = (30, 4); L = 15 comes first
    assert outcomes(hitl, 0)[0] == (1, 15.0, 0)
    # instance 3: window past the end, L = 100 known -> feedback at 100
    assert outcomes(hitl, 0)[2] == (1, 100.0, 0)
    # positive side of instance 1 ends at (t_2, 2) = (10, 2) < (15, 0): the inspection's truth
    assert outcomes(hitl, 1)[0] == (1, 10.0, 2)


def test_feedback_tie_with_expiry_goes_to_feedback():
    # L == t + W: the fix arrives at the expiry time, so it reveals 1
    ver = make_policy({"preset": "verification", "window": "15s"})
    assert outcomes(ver, 0)[0] == (1, 15.0, 0)


def test_general_form_and_presets_agree():
    general = make_policy(
        {
            "pos_window": "10s",
            "neg_window": "50s",
            "pos_expiry": "truth",
            "neg_expiry": "negative",
            "feedback": True,
        }
    )
    hitl = make_policy({"preset": "hitl", "pos_window": "10s", "neg_window": "50s"})
    for pred in (0, 1):
        assert outcomes(general, pred) == outcomes(hitl, pred)
    assert general.name == "general_pos10s-truth_neg50s-negative_feedback"


@pytest.mark.parametrize(
    "name, spec",
    [
        ("ideal", {"preset": "ideal"}),
        ("delay_7d", {"preset": "delay", "window": "7d"}),
        ("verification_90d", {"preset": "verification", "window": "90d"}),
        ("hitl_7d_90d", {"preset": "hitl", "pos_window": "7d", "neg_window": "90d"}),
        ("hitl_12h_500i", {"preset": "hitl", "pos_window": "12h", "neg_window": "500i"}),
        (
            "hitl_7d_90d_err0.05",
            {"preset": "hitl", "pos_window": "7d", "neg_window": "90d", "inspection_error": 0.05},
        ),
    ],
)
def test_preset_names_round_trip(name, spec):
    policy = make_policy(spec)
    assert policy.name == name
    assert make_policy(name) == policy
    rebuilt = make_policy(policy.spec())  # the general form of the preset
    fields = (
        "pos_window",
        "neg_window",
        "pos_expiry",
        "neg_expiry",
        "feedback",
        "inspection_error",
    )
    assert [getattr(rebuilt, f) for f in fields] == [getattr(policy, f) for f in fields]
    assert rebuilt.name == name


def test_presets_with_a_waiting_time_have_no_default_window():
    """A missing window is an error naming it, never a silent 90 days (issue 13)."""
    for spec, key in (
        ({"preset": "hitl"}, "pos_window"),
        ({"preset": "hitl", "pos_window": "7d"}, "neg_window"),
        ({"preset": "hitl", "neg_window": "90d"}, "pos_window"),
        ({"preset": "verification"}, "window"),
        ({"preset": "delay"}, "window"),
    ):
        with pytest.raises(ConfigError) as err:
            make_policy(spec)
        assert err.value.location == f"key policy.{key}"
        assert "no default window" in str(err.value) and key in str(err.value)
    hitl = make_policy({"preset": "hitl", "pos_window": "7d", "neg_window": "90d"})
    assert (hitl.pos_window, hitl.neg_window) == (Window(7 * 86400), Window(90 * 86400))
    assert make_policy({"preset": "verification", "window": "90d"}).name == "verification_90d"
    assert parse_policy_name("delay_3600s") == {"preset": "delay", "window": "3600s"}


@pytest.mark.parametrize(
    "spec, where",
    [
        ({"preset": "hitl", "pos_window": "-7d"}, "key policy.pos_window"),
        ({"preset": "delay", "window": "soon"}, "key policy.window"),
        ({"preset": "delay"}, "key policy.window"),
        ({"preset": "hitl", "windw": "7d"}, "key policy.windw"),
        ({"preset": "ideal", "window": "7d"}, "key policy.window"),
        ({"preset": "hitl", "window": "7d"}, "key policy.window"),
        ({"preset": "nope"}, "key policy.preset"),
        ({"pos_expiry": "maybe"}, "key policy.pos_expiry"),
        ({"feedback": "yes"}, "key policy.feedback"),
        ({"inspection_error": 1.5}, "key policy.inspection_error"),
        ("hitl_7d", "key policy"),
    ],
)
def test_bad_policy_specs_name_the_key(spec, where):
    with pytest.raises(ConfigError) as err:
        make_policy(spec)
    assert err.value.location == where
    assert err.value.expected


windows = st.one_of(
    st.integers(0, 12).map(lambda s: f"{s}s"), st.integers(0, 5).map(lambda c: f"{c}i")
)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 30),
    pos=windows,
    neg=windows,
    pe=st.sampled_from(["truth", "negative"]),
    ne=st.sampled_from(["truth", "negative"]),
    fb=st.booleans(),
)
def test_schedule_equals_scalar_outcome(seed, n, pos, neg, pe, ne, fb):
    stream = random_stream(np.random.default_rng(seed), n)
    policy = make_policy(
        {"pos_window": pos, "neg_window": neg, "pos_expiry": pe, "neg_expiry": ne, "feedback": fb}
    )
    sched = policy.schedule(stream.time, stream.label, stream.label_time)
    for pred in (0, 1):
        side = sched.side(pred)
        for i in range(n):
            o, a, q, by_fb, inspect = policy.outcome(
                pred, i + 1, stream.time, stream.label, stream.label_time
            )
            got = (int(side.observed[i]), float(side.due_time[i]), int(side.due_pos[i]))
            assert got == (o, a, q)
            assert (bool(side.feedback[i]), bool(side.inspect[i])) == (by_fb, inspect)
            # a label is never due before its instance arrives
            assert (a, q) >= (float(stream.time[i]), 0)


# --------------------------------------------------------------------------- the registry


def test_every_named_preset_reads_its_own_names():
    """A named preset's example name builds its policy, which bears that name back."""
    for preset in policies.PRESETS.values():
        if not preset.named:
            continue
        policy = make_policy(preset.example)
        assert (policy.preset, policy.name) == (preset.name, preset.example)
        assert parse_policy_name(preset.example)["preset"] == preset.name
        assert make_policy(policy.spec()).behaves_as(policy)


def test_the_schema_file_lists_no_preset():
    """The schema's enums of presets come from the registry alone (the loader sets them)."""
    from delaycv.study.schema import SCHEMA_PATH

    text = SCHEMA_PATH.read_text()
    for name in policies.PRESETS:
        assert not re.search(rf"\benum:.*\b{name}\b", text), name


LATE = policies.PolicyPreset(
    "late",
    "late_{window}",
    (policies.WindowParameter("window", "L", "late window"),),
    fixes={"pos_expiry": "truth", "neg_expiry": "negative", "feedback": False},
)


def test_a_new_preset_is_one_entry(monkeypatch):
    """A made-up preset in a copy of the registry: built, named, read back, placed in figures,
    accepted by the workflow schema (policies and grids) and by ``delaycv evaluate --policy``."""
    from delaycv.cli import build_parser
    from delaycv.protocol.policy_windows import axis_names, policy_windows, window_table
    from delaycv.study.loading import load_config

    monkeypatch.setattr(policies, "PRESETS", {**policies.PRESETS, "late": LATE})
    policy = make_policy({"preset": "late", "window": "3d"})
    assert (policy.pos_window, policy.neg_window) == (Window(3 * 86400), Window(3 * 86400))
    assert (policy.pos_expiry, policy.neg_expiry, policy.feedback) == ("truth", "negative", False)
    assert (policy.name, policy.preset) == ("late_3d", "late")
    assert policies.describe(policy) == "late L = 3d"
    assert parse_policy_name("late_3d_err0.1") == {
        "preset": "late",
        "inspection_error": 0.1,
        "window": "3d",
    }
    assert make_policy("late_3d") == policy
    with pytest.raises(ConfigError, match="the late preset has no default window"):
        make_policy({"preset": "late"})
    with pytest.raises(ConfigError, match="its name says late L = 5d"):
        make_policy({"preset": "late", "window": "3d", "name": "late_5d"})
    with pytest.raises(ConfigError, match="late_<L>"):
        parse_policy_name("late")
    # figures: its windows, the general form that behaves as it, its axis, its place in the order
    windows = policy_windows("late_3d")
    assert (windows.preset, windows.pos, windows.neg) == (
        "late",
        policy.pos_window,
        policy.neg_window,
    )
    assert policy_windows(policy.spec()).preset == "late"
    table = window_table(["ideal", "late_1d", "late_3d", "hitl_1d_90d"])
    late = table[table["family"] == "late"]
    assert late[["policy", "varies", "window"]].values.tolist() == [
        ["late_1d", "L", 86400],
        ["late_3d", "L", 3 * 86400],
        ["ideal", "L", 0],
    ]
    assert axis_names()["L"] == "L, late window"
    # the workflow: a policy of the preset and a grid of its windows; the enums name it
    small = yaml.safe_load((REPO / "config" / "test-small.yaml").read_text())
    grid = {"g": {"preset": "late", "window": ["1d", "2d"], "inspection_error": 0.1}}
    config = {
        **small,
        "policies": {"mine": {"preset": "late", "window": "3d"}},
        "policy_grids": grid,
    }
    loaded = load_config(config, learners=False)
    assert list(loaded["policies"]) == ["mine", "late_1d_err0.1", "late_2d_err0.1"]
    for key, changes in (
        ("policies.x.preset", {"policies": {"x": {"preset": "nope"}}}),
        ("policy_grids.g.preset", {"policy_grids": {"g": {"preset": "ideal", "window": ["1d"]}}}),
    ):
        with pytest.raises(ConfigError) as err:
            load_config({**small, **changes}, learners=False)
        assert err.value.location == f"key {key}" and "late" in err.value.expected
    with pytest.raises(ConfigError, match="missing"):
        load_config({**small, "policy_grids": {"g": {"preset": "late"}}}, learners=False)
    # delaycv evaluate --policy
    args = build_parser("evaluate").parse_args(
        ["evaluate", "s.parquet", "--learner", "NoChange", "--out", "run", "--policy", "late"]
    )
    assert args.policy == "late"
