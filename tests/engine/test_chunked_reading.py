"""The engine reads a stream chunk by chunk and holds only what may still be released.

- :class:`delaycv.protocol.releases.Releases` resolves, chunk by chunk, the release position and observed
  label of every (instance, side) exactly as the whole-stream schedule does (any chunk sizes,
  ties in time, count and time windows, feedback);
- the engine in tiny chunks (every chunk boundary, window compaction) equals the brute-force loop;
- a stream file read chunk by chunk gives the same outputs as the stream in memory, on real data;
- what a run holds grows with the policy's window, not with the stream;
- bad values deep inside a file are reported with the file and the global row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from delaycv import engine
from delaycv.common.errors import InputError
from delaycv.data.stream_file import StreamFile, open_stream, read_stream, write_stream
from delaycv.data.synthetic import generate_stream
from delaycv.engine import folds as _folds  # noqa: F401 (engine.folds.CHUNK)
from delaycv.metrics import METRICS
from delaycv.protocol.policies import make_policy
from delaycv.protocol.releases import Releases
from tests.engine.brute_force_check import compare_with_brute_force, validations
from tests.engine.brute_force_check import policies as bf_policies
from tests.support.engine_bruteforce import OrderLearner, random_stream
from tests.support.engine_runs import evaluate

count_or_time = st.sampled_from(["0i", "1i", "3i", "25i", "0s", "1s", "3s", "40s"])
general_policies = st.builds(
    lambda pw, nw, pe, ne, fb: {
        "preset": "general",
        "name": "p",
        "pos_window": pw,
        "neg_window": nw,
        "pos_expiry": pe,
        "neg_expiry": ne,
        "feedback": fb,
    },
    count_or_time,
    count_or_time,
    st.sampled_from(["truth", "negative"]),
    st.sampled_from(["truth", "negative"]),
    st.booleans(),
)


def whole_stream_releases(policy, stream) -> dict:
    """(i, s) -> (release position or None, observed, due time) from Policy.schedule: the first
    r >= i with (a, q) <= (t_r, r)."""
    sched = policy.schedule(stream.time, stream.label, stream.label_time)
    t = stream.time
    n = len(t)
    out = {}
    for s, side in enumerate((sched.neg, sched.pos)):
        for i in range(1, n + 1):
            a, q = side.due_time[i - 1], side.due_pos[i - 1]
            r = next((r for r in range(i, n + 1) if (a, q) <= (t[r - 1], r)), None)
            out[(i, s)] = (r, int(side.observed[i - 1]), float(a), int(q))
    return out


@settings(max_examples=200, deadline=None)
@given(
    data_seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 60),
    policy_spec=general_policies,
    sizes=st.lists(st.integers(1, 9), min_size=1, max_size=5),
    flush=st.booleans(),
)
def test_releases_chunk_by_chunk_equal_the_whole_stream_schedule(
    data_seed, n, policy_spec, sizes, flush
):
    stream = random_stream(np.random.default_rng(data_seed), n)
    policy = make_policy(policy_spec)
    expected = whole_stream_releases(policy, stream)
    q_of = {key: value[3] for key, value in expected.items()}
    rel = Releases(policy, n, flush)
    got = {}
    start, c = 0, 0
    while start < n:
        stop = min(n, start + sizes[c % len(sizes)])
        c += 1
        sl = slice(start, stop)
        cr = rel.resolve(start, stream.time[sl], stream.label[sl], stream.label_time[sl])
        for s in (0, 1):
            for j in np.flatnonzero(cr.own[s]).tolist():
                got[(start + 1 + j, s)] = (start + 1 + j, int(cr.own_o[s][j]), cr.own_due[s][j])
        cand = cr.cand
        keys = [
            (r, a, q_of[(i, s)], i, s)
            for r, a, i, s in zip(
                cand["r"].tolist(),
                cand["due"].tolist(),
                cand["i"].tolist(),
                cand["s"].tolist(),
                strict=True,
            )
        ]
        assert keys == sorted(keys)  # release order: (r, a, q, i, s)
        for r, i, s, o, due in zip(
            cand["r"].tolist(),
            cand["i"].tolist(),
            cand["s"].tolist(),
            cand["o"].tolist(),
            cand["due"].tolist(),
            strict=True,
        ):
            assert (i, s) not in got
            got[(i, s)] = (r, o, due)
        start = stop
    waiting = rel.remaining()
    for i, s, o, due in zip(
        waiting["i"].tolist(),
        waiting["s"].tolist(),
        waiting["o"].tolist(),
        waiting["due"].tolist(),
        strict=True,
    ):
        assert (i, s) not in got
        got[(i, s)] = (None, o, due)
    for key, (r, o, due, _) in expected.items():
        if r is not None:
            assert got[key] == (r, o, due), key
        elif key in got:  # still waiting at the end (flushed: the whole-stream label)
            assert got[key] == (None, o, due), key
        else:  # never due: not held, unless to be flushed
            assert not flush and due == np.inf, key


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data_seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 40),
    policy_spec=st.one_of(bf_policies, general_policies),
    validation=validations,
    chunk=st.integers(1, 6),
    flush=st.booleans(),
    noise=st.sampled_from([0.0, 0.3]),
)
def test_engine_in_tiny_chunks_equals_brute_force(
    recording,
    data_seed,
    n,
    policy_spec,
    validation,
    chunk,
    flush,
    noise,
):
    stream = random_stream(np.random.default_rng(data_seed), n)
    recording.made = []
    OrderLearner.registry.clear()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "CHUNK", chunk)
        compare_with_brute_force(
            stream,
            {"class": "tests.support.engine_bruteforce:OrderLearner"},
            make_policy(policy_spec),
            validation,
            seed=1,
            noise=noise,
            flush=flush,
            threshold=0.5,
            recording=recording,
        )


POLICIES = [
    "ideal",
    {"preset": "hitl", "pos_window": "7d", "neg_window": "90d", "inspection_error": 0.1},
    {"preset": "verification", "window": "30d"},
    {
        "preset": "general",
        "name": "counts",
        "pos_window": "50i",
        "neg_window": "500i",
        "pos_expiry": "truth",
        "neg_expiry": "negative",
        "feedback": True,
    },
]


def _same(a, b) -> None:
    pd.testing.assert_frame_equal(a.folds, b.folds, check_exact=True)
    pd.testing.assert_frame_equal(a.predictions, b.predictions, check_exact=True)
    assert a.info["folds"] == b.info["folds"]


@pytest.mark.realdata
@pytest.mark.parametrize("policy", POLICIES, ids=["ideal", "hitl", "verification", "counts"])
def test_stream_file_equals_stream_in_memory_on_real_data(tmp_path, brackets_csv, policy):
    from delaycv.data.convert import load_stream

    path = tmp_path / "brackets.parquet"
    write_stream(load_stream(brackets_csv, preset="commit-guru"), path)
    kwargs = dict(
        seed=3,
        every=250,
        keep_predictions=True,
        timing=False,
        flush=True,
        checkpoints={"times": [1_400_000_000], "fractions": [0.5]},
    )
    spec = {"class": "linear_model.LogisticRegression"}
    validation = {"scheme": "bootstrap", "folds": 2, "seed": 1}
    in_memory = evaluate(read_stream(path), spec, policy, validation, **kwargs)
    from_file = evaluate(open_stream(path), spec, policy, validation, **kwargs)
    _same(in_memory, from_file)
    assert from_file.info["instances_held"] < len(read_stream(path))


def test_stream_file_in_small_chunks_and_row_pieces(tmp_path, monkeypatch):
    stream = generate_stream(3000, seed=2, days=60)
    path = tmp_path / "s.parquet"
    write_stream(stream, path)
    policy = {"preset": "hitl", "pos_window": "3d", "neg_window": "10d"}
    validation = {"scheme": "bootstrap", "folds": 2, "seed": 1}
    kwargs = dict(every=100, keep_predictions=True, timing=False)
    spec = {"class": "naive_bayes.GaussianNB"}
    whole = evaluate(stream, spec, policy, validation, **kwargs)
    monkeypatch.setattr(engine.folds, "CHUNK", 257)
    pieces: list = []
    chunked = evaluate(StreamFile(path), spec, policy, validation, on_rows=pieces.append, **kwargs)
    assert len(chunked.folds) == 0 and list(chunked.folds.columns) == list(whole.folds.columns)
    assert len(pieces) > 5
    table = pd.concat(pieces, ignore_index=True)
    order = ["fold", "checkpoint", "reference"]
    got = table.sort_values(order, kind="stable").reset_index(drop=True)
    want = whole.folds.sort_values(order, kind="stable").reset_index(drop=True)
    # the metric states fold in each chunk's evaluations at once: chunks of another size give
    # the same values up to rounding; everything else is exact. A kappa against a reference
    # near 1 (here the majority classifier's recall of class 0, 1 - 1e-8) divides the rounding
    # by 1 - ref: those get a looser tolerance.
    kappas = [m for m in METRICS if m.startswith("kappa")]
    others = [m for m in METRICS if m not in kappas]
    pd.testing.assert_frame_equal(got.drop(columns=list(METRICS)), want.drop(columns=list(METRICS)))
    pd.testing.assert_frame_equal(got[others], want[others], check_exact=False, rtol=1e-10)
    pd.testing.assert_frame_equal(got[kappas], want[kappas], check_exact=False, rtol=1e-6)
    pd.testing.assert_frame_equal(chunked.predictions, whole.predictions, check_exact=True)


def test_what_a_run_holds_grows_with_the_window_not_the_stream():
    policy = {"preset": "general", "name": "c", "pos_window": "100i", "neg_window": "300i"}
    held = []
    for rows in (20_000, 80_000):
        stream = generate_stream(rows, seed=1)
        r = evaluate(
            stream, {"class": "Prior"}, policy, {"scheme": "prequential"}, every=None, timing=False
        )
        held.append(r.info["instances_held"])
    # the 300-instance window, the chunk being read, and a dead prefix at most as long
    assert held[0] == held[1]
    assert held[1] <= 2 * (300 + engine.folds.CHUNK) + engine.folds.CHUNK


def _write(path, time, label):
    n = len(time)
    table = pa.table(
        {
            "time": pa.array(time, pa.int64()),
            "label": pa.array(label, pa.int8()),
            "label_time": pa.array([None] * n, pa.int64()),
            "f": pa.array(np.arange(n, dtype=np.float64)),
        }
    )
    pq.write_table(table, path)


def test_bad_values_deep_in_a_file_name_the_file_and_the_row(tmp_path, monkeypatch):
    monkeypatch.setattr(engine.folds, "CHUNK", 100)
    n = 1000
    time = np.arange(n, dtype=np.int64)
    label = np.zeros(n, dtype=np.int8)
    spec, policy = {"class": "Prior"}, "ideal"
    path = tmp_path / "late.parquet"
    time_bad = time.copy()
    time_bad[700] = 5  # decreases at row 701, inside a chunk
    _write(path, time_bad, label)
    with pytest.raises(InputError, match=r"late\.parquet.*row 701|row 701.*late\.parquet"):
        evaluate(open_stream(path), spec, policy, {"scheme": "prequential"}, every=None)
    time_bad = time.copy()
    time_bad[600:] -= 10  # decreases at row 601, the first of a chunk
    _write(path, time_bad, label)
    with pytest.raises(InputError, match=r"row 601"):
        evaluate(open_stream(path), spec, policy, {"scheme": "prequential"}, every=None)
    label_bad = label.copy()
    label_bad[853] = 2
    _write(path, time, label_bad)
    with pytest.raises(InputError, match=r"row 854"):
        evaluate(open_stream(path), spec, policy, {"scheme": "prequential"}, every=None)
