"""The effort-aware measures (delaycv.metrics.effort): the online curve against its definition (a
sort of the scope at every checkpoint) on random, tie-heavy and zero-effort streams under both
scopes, the compiled loop against the Python one bit for bit, hand-computed cases, the engine on
a real Commit Guru stream against the definition read from its prediction log, the ranking of
zero-effort commits by the model, and a cost per evaluation that does not grow with the
stream."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from delaycv.metrics import effort as effort_module
from delaycv.metrics import effort_loop
from delaycv.metrics.effort import (
    EFFORT_METRICS,
    EffortCurve,
    inspection_measures,
    inspection_order,
)
from delaycv.metrics.effort_names import EFFORT_COLUMNS
from delaycv.metrics.effort_scope import EffortScope, make_effort_scope
from tests.support.compiled import compiled_required
from tests.support.paths import shared_file

#: (skipped where the shared datasets are absent: :func:`~tests.support.paths.shared_file`)
BRACKETS = "commit_guru_dataset/cut2years/0_brackets.arff"
SCOPES = [EffortScope(), EffortScope("sliding", 40)]


def scope_of(scope, b: int) -> tuple[int, int]:
    """The evaluations [lo, hi) the measures read after b evaluations."""
    width = make_effort_scope(scope).loop_width
    return (max(0, b - width) if width else 0), b


def assert_close(got: np.ndarray, want: dict, where) -> None:
    for j, name in enumerate(EFFORT_METRICS):
        a, b = float(got[j]), want[name]
        if math.isnan(b):
            assert math.isnan(a), (where, name, a, b)
        else:
            assert a == pytest.approx(b, rel=1e-12, abs=1e-12), (where, name, a, b)


def check_against_definition(scope, p1, effort, obs, true, pieces, bounds) -> None:
    """Feed the curve in ``pieces`` (cut positions) and compare every bound with the definition."""
    curve = EffortCurve(scope)
    n = len(p1)
    folded = 0
    cuts = [*pieces, n]
    prev = 0
    for cut in cuts:
        curve.add_many(p1[prev:cut], effort[prev:cut], obs[prev:cut], true[prev:cut])
        mine = [b for b in bounds if prev < b <= cut] or [cut]
        values = curve.snapshots(np.array(mine) - folded)
        folded = mine[-1]
        for b, v in zip(mine, values, strict=True):
            lo, hi = scope_of(scope, b)
            for r, d in enumerate((obs, true)):
                want = inspection_measures(p1[lo:hi], effort[lo:hi], d[lo:hi])
                assert_close(v[r], want, (scope, b, r))
        prev = cut


@pytest.mark.parametrize("scope", SCOPES, ids=lambda s: s.label)
@pytest.mark.parametrize("kind", ["random", "ties", "zero-effort"])
def test_the_curve_equals_the_definition(scope, kind):
    rng = np.random.default_rng(7)
    n = 700
    if kind == "ties":  # few probabilities, few efforts: many equal densities
        p1 = rng.integers(0, 5, n) / 4
        effort = rng.integers(1, 4, n).astype(float)
    else:
        p1 = rng.random(n)
        effort = rng.integers(0 if kind == "zero-effort" else 1, 300, n).astype(float)
        if kind == "zero-effort":
            effort[rng.random(n) < 0.3] = 0.0
    obs = (rng.random(n) < 0.3).astype(np.int8)
    true = (rng.random(n) < 0.35).astype(np.int8)
    bounds = sorted(rng.choice(np.arange(1, n + 1), 60, replace=False).tolist())
    check_against_definition(scope, p1, effort, obs, true, [100, 101, 350, 600], bounds)


@pytest.mark.parametrize("scope", [EffortScope(), EffortScope("sliding", 700)], ids=str)
def test_the_blocks_split_and_empty_as_the_definition_says(scope, monkeypatch):
    """The Python loop with blocks of at most 2 elements and gaps looked for 1 slot on: every
    other insertion splits a block, which moves blocks or lays them all out again; a sliding
    scope empties them; the values stay the definition's."""
    monkeypatch.setattr(effort_module, "LOOP", effort_loop)
    monkeypatch.setattr(effort_loop, "CAPACITY", 3)
    monkeypatch.setattr(effort_loop, "WINDOW", 1)
    rng = np.random.default_rng(5)
    n = 1500
    p1 = rng.integers(0, 9, n) / 8
    effort = rng.integers(0, 60, n).astype(float)
    obs = (rng.random(n) < 0.3).astype(np.int8)
    true = (rng.random(n) < 0.4).astype(np.int8)
    bounds = sorted(rng.choice(np.arange(1, n + 1), 50, replace=False).tolist())
    check_against_definition(scope, p1, effort, obs, true, [300, 301, 1100], bounds)


@settings(max_examples=150, deadline=None)
@given(
    data=st.lists(
        st.tuples(
            st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]),
            st.integers(0, 5),
            st.integers(0, 1),
            st.integers(0, 1),
        ),
        min_size=1,
        max_size=40,
    ),
    scope=st.sampled_from([EffortScope(), EffortScope("sliding", 5)]),
    cut=st.integers(0, 40),
)
def test_any_stream_of_ties_and_zero_efforts(data, scope, cut):
    p1, effort, obs, true = (np.array(c) for c in zip(*data, strict=True))
    n = len(p1)
    cut = min(cut, n - 1)
    pieces = [cut] if cut > 0 else []
    check_against_definition(
        scope, p1, effort.astype(float), obs, true, pieces, list(range(1, n + 1))
    )


def test_fractional_efforts_agree_up_to_rounding():
    rng = np.random.default_rng(3)
    n = 500
    p1, effort = rng.random(n), rng.random(n) * 37.3
    obs = true = (rng.random(n) < 0.3).astype(np.int8)
    check_against_definition(None, p1, effort, obs, true, [250], list(range(5, n + 1, 5)))


@pytest.mark.parametrize("scope", [*SCOPES, EffortScope("sliding", 1500)], ids=lambda s: s.label)
def test_the_compiled_loop_gives_the_python_loop_s_values_bit_for_bit(scope, monkeypatch):
    """Fractional efforts (sums that round), blocks that split (more than 128 in scope) and
    move to a gap or are laid out again, and, with a sliding scope, blocks that empty."""
    if effort_module.LOOP is effort_loop:
        pytest.skip(effort_module.LOOP_STATUS)
    rng = np.random.default_rng(11)
    n = 6000
    p1 = rng.random(n)
    effort = np.where(rng.random(n) < 0.1, 0.0, rng.random(n) * 100)
    obs, true = rng.random(n) < 0.3, rng.random(n) < 0.3
    results = []
    for loop in (effort_module.LOOP, effort_loop):
        monkeypatch.setattr(effort_module, "LOOP", loop)
        curve = EffortCurve(scope)
        values = []
        for start in range(0, n, 2500):
            stop = min(n, start + 2500)
            curve.add_many(p1[start:stop], effort[start:stop], obs[start:stop], true[start:stop])
            values.append(curve.snapshots(np.arange(0, stop - start + 1, 9)))
        results.append(np.concatenate(values))
    assert np.array_equal(results[0], results[1], equal_nan=True)


def test_hand_computed_example():
    # inspection order C(5, defective), A(10, d), B(40), D(30), E(15, d); E = 100, D = 3
    m = inspection_measures(
        p1=[0.9, 0.8, 0.5, 0.4, 0.1], effort=[10, 40, 5, 30, 15], defective=[1, 0, 1, 0, 1]
    )
    # 20 % of the effort is 20 lines: C and A fit (15), B would cross
    assert m["effort_pci_20"] == 2 / 5
    assert m["effort_recall_20"] == 2 / 3
    assert m["effort_precision_20"] == 1.0
    assert m["effort_f1_20"] == pytest.approx(0.8)
    assert m["effort_at_recall_20"] == 5 / 100  # C alone finds 1 of 3 >= 20 %
    assert m["ifa"] == 0
    # areas: model 0.65, optimal (C, A, E, D, B) 0.88333, worst (B, D, E, A, C) 0.11667
    assert m["popt"] == pytest.approx(1 - (0.883333333 - 0.65) / (0.883333333 - 0.116666667))


def test_the_tie_and_zero_effort_rules():
    # density P(1) / (effort + 1), zero efforts included; equal densities in release order
    assert inspection_order([0.1, 0.5, 0.5, 0.0, 0.6, 0.9], [0, 10, 10, 0, 12, 2]).tolist() == [
        5,  # 0.3
        0,  # 0.1
        4,  # 0.046
        1,  # 0.045, released before its twin
        2,
        3,  # P(1) = 0: last, whatever its effort
    ]
    # ifa counts the clean ones inspected before the first defective one
    m = inspection_measures([0.9, 0.8, 0.7, 0.1], [1, 1, 1, 1], [0, 0, 1, 1])
    assert m["ifa"] == 2


def test_zero_effort_commits_are_ranked_by_the_model():
    """A clean commit of no lines the model gives P(1) = 0.01 is not inspected first: the one
    the model flags (P(1) = 0.9, 20 lines, density 0.043 against 0.01) is."""
    m = inspection_measures([0.01, 0.01, 0.9, 0.2], [0, 0, 20, 30], [0, 0, 1, 0])
    assert m["ifa"] == 0.0
    assert inspection_order([0.01, 0.01, 0.9, 0.2], [0, 0, 20, 30]).tolist() == [2, 0, 1, 3]
    curve = EffortCurve()
    curve.add_many([0.01, 0.01, 0.9, 0.2], [0, 0, 20, 30], [0, 0, 1, 0], [0, 0, 1, 0])
    assert curve.snapshot()[:, EFFORT_METRICS.index("ifa")].tolist() == [0.0, 0.0]


def test_popt_when_every_instance_is_defective():
    """Defined: the optimal order (effort ascending) and the worst (descending) differ. The
    hand case of docs/metrics.md: the worked example's five, all defective: areas 0.58 (model:
    5, 10, 40, 30, 15 lines), 0.68 (optimal) and 0.32 (worst): 1 - 0.10 / 0.36 = 13 / 18."""
    m = inspection_measures([0.9, 0.8, 0.5, 0.4, 0.1], [10, 40, 5, 30, 15], [1, 1, 1, 1, 1])
    assert m["popt"] == pytest.approx(13 / 18)
    # equal areas: one instance, or every instance defective with one effort: NaN
    assert math.isnan(inspection_measures([0.5], [3], [1])["popt"])
    assert math.isnan(inspection_measures([0.5, 0.2], [3, 3], [1, 1])["popt"])


def test_undefined_measures_are_nan():
    none_defective = inspection_measures([0.5, 0.4], [3, 4], [0, 0])
    assert math.isnan(none_defective["popt"]) and math.isnan(none_defective["ifa"])
    assert none_defective["effort_pci_20"] == 0.0  # 20 % of 7 lines: nothing fits
    no_effort = inspection_measures([0.5, 0.4], [0, 0], [0, 1])
    assert no_effort["ifa"] == 1 and math.isnan(no_effort["popt"])
    assert all(math.isnan(v) for v in inspection_measures([], [], []).values())
    curve = EffortCurve("cumulative")
    assert np.isnan(curve.snapshots([0])).all()


def test_bad_input_is_refused():
    curve = EffortCurve("cumulative")
    curve.add_many([0.5], [-1.0], [0], [0])
    with pytest.raises(ValueError, match="effort must be a finite number >= 0"):
        curve.snapshots([1])
    for edge in (1e303, 1e-320, np.inf):  # a total that overflows, three significant digits
        curve = EffortCurve("cumulative")
        curve.add_many([0.5, 0.5], [1.0, edge], [0, 1], [0, 1])
        with pytest.raises(ValueError, match="2\\*\\*53"):
            curve.snapshots([2])
    curve = EffortCurve("cumulative")
    curve.add_many([0.5], [1.0], [0], [0])
    with pytest.raises(ValueError, match="non-decreasing counts"):
        curve.snapshots([2])


def test_scopes():
    from delaycv.common.errors import ConfigError

    assert make_effort_scope(None) == EffortScope("cumulative") == make_effort_scope("cumulative")
    assert make_effort_scope("sliding") == EffortScope("sliding", 1000)
    assert make_effort_scope({"kind": "sliding", "width": 7}).loop_width == 7
    assert EffortScope().loop_width == 0 and EffortScope().words == "every evaluation so far"
    for bad, key in (
        ({"kind": "fading"}, "effort_scope.kind"),
        ({"kind": "sliding", "width": 0}, "effort_scope.width"),
        ({"kind": "sliding", "width": 2**63}, "effort_scope.width"),
        ({"kind": "sliding", "width": 1e12}, "effort_scope.width"),
        ({"kind": "cumulative", "width": 5}, "effort_scope.width"),
        (3, "effort_scope"),
    ):
        with pytest.raises(ConfigError, match=f"key {key}:"):
            make_effort_scope(bad)
    assert make_effort_scope({"kind": "sliding", "width": 2**63 - 1}).width == 2**63 - 1


@pytest.mark.realdata
@pytest.mark.parametrize("scope", [EffortScope(), EffortScope("sliding", 300)], ids=str)
def test_the_engine_on_a_commit_guru_stream_equals_the_definition(scope):
    """brackets (first 3000 commits), HoeffdingTree, 3 bootstrap folds, ideal labels: every
    instance is evaluated as it arrives, so the release order is the stream's and the scope at a
    checkpoint can be read from the prediction log; effort = la + ld, against both labels."""
    import delaycv
    from delaycv.data.convert import load_stream

    stream = load_stream(shared_file(BRACKETS), preset="commit-guru").subset(0, 3000)
    assert stream.metadata["effort"] == "la + ld"
    assert np.array_equal(stream.effort, stream.features["la"] + stream.features["ld"])
    result = delaycv.evaluate(
        stream,
        "tree.HoeffdingTreeClassifier",
        policy="ideal",
        validation={"scheme": "bootstrap", "folds": 3, "seed": 1},
        effort_scope=scope,
        every=700,
        predictions=True,
        progress=False,
    )
    log = result.predictions
    labelled = result.folds[result.folds["reference"] != "corrected"]  # (no effort-aware values)
    for (fold, reference, checkpoint), row in labelled.set_index(
        ["fold", "reference", "checkpoint"]
    ).iterrows():
        mine = log[log["fold"] == fold].sort_values("index").iloc[:checkpoint]
        lo, hi = scope_of(scope, checkpoint)
        want = inspection_measures(
            mine["proba"].to_numpy()[lo:hi],
            stream.effort[:checkpoint][lo:hi],
            mine[reference].to_numpy()[lo:hi],
        )
        assert_close(row[list(EFFORT_METRICS)].to_numpy(float), want, (fold, reference, checkpoint))


def _small_run(effort: bool):
    import delaycv
    from delaycv.data.synthetic import generate_stream

    stream = generate_stream(rows=600, seed=3, effort=effort)
    return delaycv.evaluate(
        stream,
        "naive_bayes.GaussianNB",
        validation={"scheme": "bootstrap", "folds": 2, "seed": 1},
        every=200,
        progress=False,
        timing=False,
    )


def test_a_stream_without_effort_has_no_effort_columns_and_says_why():
    without, with_ = _small_run(False), _small_run(True)
    assert not set(EFFORT_METRICS) & set(without.folds.columns)
    assert without.info["effort"]["effort"] is None
    assert "no effort" in without.info["effort"]["note"]
    assert list(with_.folds.columns[-len(EFFORT_COLUMNS) :]) == list(EFFORT_COLUMNS)
    assert set(with_.folds["effort_scope"]) == {"cumulative"}
    assert with_.info["effort"] == {"effort": "la + ld", "scope": "every evaluation so far"}
    assert with_.info["specs"]["effort_scope"] == {"kind": "cumulative"}
    # the effort changes nothing else
    same = [c for c in without.folds.columns]
    assert with_.folds[same].equals(without.folds)
    assert set(with_.summary["metric"]) - set(without.summary["metric"]) == set(EFFORT_METRICS)


def test_runs_with_and_without_effort_merge(tmp_path):
    from delaycv.tables import merge, results

    runs = []
    for effort, dataset in ((False, "plain"), (True, "commits")):
        result = _small_run(effort)
        result.folds["dataset"] = dataset
        out = tmp_path / dataset
        out.mkdir()
        result.folds.to_parquet(out / "folds.parquet")
        runs.append(out)
    for order in (runs, runs[::-1]):
        merged = merge.merge_tables(order)
        written = tmp_path / "merged.parquet"
        merge.merge_files(order, written)
        on_disk = results.read_table(written)
        for table in (merged, on_disk):
            assert list(table.columns[-len(EFFORT_COLUMNS) :]) == list(EFFORT_COLUMNS)
            plain = table[table["dataset"] == "plain"]
            assert plain[list(EFFORT_COLUMNS)].isna().all().all()
            assert set(table[table["dataset"] == "commits"]["effort_scope"]) == {"cumulative"}
            assert table[table["dataset"] == "commits"]["popt"].notna().any()
        assert on_disk.equals(merged)


def test_bounds_of_the_measures():
    from delaycv.metrics.properties import is_fraction

    assert [m for m in EFFORT_METRICS if not is_fraction(m)] == ["ifa"]


def test_the_api_takes_the_effort_of_a_dataframe_or_of_x_dicts(tmp_path):
    import delaycv
    from delaycv.common.errors import ConfigError, InputError
    from delaycv.data.stream_file import to_table, write_stream
    from delaycv.data.synthetic import generate_stream

    stream = generate_stream(rows=500, seed=2)
    frame = to_table(stream).to_pandas()  # time, label, label_time, effort, la, ld, ...
    kw = dict(folds=2, every=250, progress=False, timing=False)
    model = "naive_bayes.GaussianNB"
    by_column = delaycv.evaluate(frame, model, **kw).folds
    named = delaycv.evaluate(frame.drop(columns="effort"), model, effort=["la", "ld"], **kw).folds
    assert by_column["popt"].notna().any()
    pd_equal = by_column[list(EFFORT_METRICS)].equals(named[list(EFFORT_METRICS)])
    assert pd_equal and by_column.equals(named)
    pairs = [
        ({**x, "size": e}, y)
        for x, e, y in zip(stream.records(), stream.effort, stream.label, strict=True)
    ]
    from_pairs = delaycv.evaluate(iter(pairs), model, effort="size", **kw).folds
    assert from_pairs["popt"].notna().any()
    negative = frame.assign(effort=-frame["effort"])
    with pytest.raises(InputError, match="effort column 'effort' is -"):
        delaycv.evaluate(negative.iloc[1:], model, **kw)
    write_stream(stream, tmp_path / "s.parquet")
    with pytest.raises(ConfigError, match="canonical stream has the effort it was converted with"):
        delaycv.evaluate(tmp_path / "s.parquet", model, effort="la", **kw)
    with pytest.raises(ConfigError, match="key effort"):
        delaycv.evaluate(frame, model, effort=["la", "la"], **kw)


def test_the_compiled_loop_is_built_where_required():
    """The compiled loop of the effort-aware measures is the one in use wherever it was built
    (make venv compiles it) or is required (CI); skipped only where none was built (no C
    compiler) and none is required, or where DELAYCV_PURE_PYTHON=1 asks for the Python loop."""
    import importlib.util

    from delaycv.common import native

    required = compiled_required()
    built = importlib.util.find_spec("delaycv.metrics._effort_loop") is not None
    if not required and (not built or native.pure_python()):
        pytest.skip(f"the compiled loop is not required here: {effort_module.LOOP_STATUS}")
    assert effort_module.LOOP is not effort_loop, effort_module.LOOP_STATUS


def test_a_build_of_another_source_is_not_used(monkeypatch):
    from delaycv.common import native

    if effort_module.LOOP is effort_loop:
        pytest.skip(effort_module.LOOP_STATUS)
    monkeypatch.setattr(native, "source_digest", lambda path: "0" * 64)
    with pytest.warns(RuntimeWarning, match="was not built from the _effort_loop.pyx beside it"):
        loop, reason = native.load("delaycv.metrics._effort_loop", effort_loop)
    assert loop is effort_loop and "make venv" in reason
    monkeypatch.setenv(native.PURE_PYTHON, "1")
    assert native.load("delaycv.metrics._effort_loop", effort_loop)[0] is effort_loop


@pytest.mark.realdata
def test_a_learner_that_knows_the_label_finds_a_defect_at_once_on_brackets():
    """brackets has 76 commits of no changed lines, all clean. Ranked first whatever their P(1)
    (the rule this replaces), they made ifa = 76 in every fold, the data's count and not the
    model's. A river logistic regression given the label as a feature (G-mean > 0.9) ranks
    them by its P(1): ifa is at most 5."""
    import delaycv
    from delaycv.data.convert import load_stream

    stream = load_stream(shared_file(BRACKETS), preset="commit-guru")
    assert int((stream.effort == 0).sum()) == 76 and not stream.label[stream.effort == 0].any()
    frame = pd.DataFrame(
        {
            "time": stream.time,
            "label": stream.label,
            "effort": stream.effort,
            "knows": stream.label.astype(float),
        }
    )
    result = delaycv.evaluate(
        frame,
        "linear_model.LogisticRegression",
        validation={"scheme": "bootstrap", "folds": 2, "seed": 1},
        every=len(frame),
        progress=False,
        timing=False,
    )
    last = result.folds[result.folds["reference"] == "true"]
    assert (last["gmean"] > 0.9).all(), last["gmean"].tolist()
    assert (last["ifa"] <= 5).all(), last["ifa"].tolist()


@pytest.mark.slow
def test_the_cost_per_evaluation_does_not_grow_with_the_stream():
    """The cumulative scope's CPU time per evaluation at 200,000 evaluations against 20,000, in
    one process, interleaved, the median of 3: at most 3 (the design this replaces, a rebuild of
    the whole scope per chunk, gave 7.5 to 8.2 in a run beside this one; this one 1.4 to 1.9 on a
    loaded machine, the caches' share: docs/metrics.md, "Cost")."""
    import time

    def per_evaluation(n: int) -> float:
        rng = np.random.default_rng(n)
        p1, effort = rng.random(n), rng.integers(0, 500, n).astype(float)
        obs, true = rng.random(n) < 0.25, rng.random(n) < 0.3
        curve = EffortCurve()
        c0 = time.process_time()
        for start in range(0, n, 4096):
            stop = min(n, start + 4096)
            curve.add_many(p1[start:stop], effort[start:stop], obs[start:stop], true[start:stop])
            curve.snapshots(np.arange(500, stop - start + 1, 500))
        return (time.process_time() - c0) / n

    if effort_module.LOOP is effort_loop:
        pytest.skip(effort_module.LOOP_STATUS)
    ratios = sorted(per_evaluation(200_000) / per_evaluation(20_000) for _ in range(3))
    assert ratios[1] <= 3.0, ratios
