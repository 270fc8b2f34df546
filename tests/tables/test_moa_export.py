"""MOA export on small hand-made evaluation sequences whose numbers are worked out by hand.

The observers are fed directly (as the engine would): ``on_evaluation`` for each evaluation of a fold
during stream instance n, then ``on_instance(n, time)`` for every fold.
"""

from __future__ import annotations

import math
import pickle
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from delaycv.common.errors import DelaycvError
from delaycv.metrics import MOA_MEASUREMENTS, Fading, Metrics
from delaycv.tables.moa_export import (
    DETAIL_FILE,
    DUMP_FILE,
    MoaEvaluator,
    MoaExport,
    detail_header,
    dump_header,
    read_moa_csv,
)
from tests.tables import moa_reference_sim as sim
from tests.tables.moa_reference_sim import DETAIL_HEADER, DUMP_HEADER, MEASUREMENT_NAMES

NAN = float("nan")
INF = float("inf")
COL = {name: 5 + j for j, name in enumerate(MEASUREMENT_NAMES)}  # detail column of a measurement


def avg_col(name: str) -> int:
    return 4 + 2 * MEASUREMENT_NAMES.index(name)


def feed(export: MoaExport, folds: int, events: dict, times: dict, *, cpu=None, observers=None):
    """events: n -> [(fold, pred, observed), ...]; times: n -> arrival time of instance n."""
    obs = observers or [export.observer_factory(f) for f in range(folds)]
    for n in sorted(times):
        for fold, pred, observed in events.get(n, []):
            obs[fold].on_evaluation(n, times[n], pred, NAN, observed, observed, 1.0)
        for o in obs:
            if cpu is None:
                o.on_instance(n, times[n])
            else:
                o.on_instance(n, times[n], cpu_seconds=cpu[(o.fold, n)])
    return obs


def same(a, b) -> bool:
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == pytest.approx(b, rel=1e-12, abs=1e-12)


def test_headers_are_the_moa_extension_headers():
    assert detail_header() == DETAIL_HEADER and len(DETAIL_HEADER) == 46
    assert dump_header() == DUMP_HEADER and len(DUMP_HEADER) == 86
    assert "Gmean for recall  (percent)" in detail_header()  # two spaces, as MOA writes it


def test_one_fold_evaluator_quirks_by_hand():
    # alpha 0.5; evaluation 1: t=1 p=1; evaluation 2: t=0 p=0; every = 2 -> one detail row
    export = MoaExport(every=2, alpha=0.5, folds=1)
    feed(export, 1, {1: [(0, 1, 1)], 2: [(0, 0, 0)]}, {1: 10, 2: 20})
    (row,) = export.detail_rows()
    expected = {
        "classified instances": 2.0,
        "TP": 1.0,
        "FP": 0.0,
        "TN": 1.0,
        "FN": 0.0,
        "classifications correct (percent)": 100.0,
        "Kappa Statistic (percent)": 100.0,  # pc = 2/3*2/3 + 1/3*1/3 = 5/9
        "Kappa Temporal Statistic (percent)": 100.0,  # no-change was wrong twice
        "Kappa M Statistic (percent)": NAN,  # majority right twice: 0/0
        "F1 Score (percent)": 100.0,
        "F1 Score for class 0 (percent)": 100.0,
        "F1 Score for class 1 (percent)": 100.0,
        "Kappa Temporal Statistic F1 Score for class 0 (percent)": NAN,  # no-change F1 = 0/0
        "Kappa Temporal Statistic F1 Score for class 1 (percent)": NAN,
        "Kappa M Statistic F1 Score for class 0 (percent)": NAN,
        "Kappa M Statistic F1 Score for class 1 (percent)": NAN,  # majority F1 = 1: 0/0
        "Kappa Statistic F1 Score for class 0 (percent)": NAN,  # the defect: the Kappa M F1 value
        "Kappa Statistic F1 Score for class 1 (percent)": NAN,
        "Precision (percent)": 100.0,
        "Precision for class 0 (percent)": 100.0,
        "Precision for class 1 (percent)": 100.0,
        "Kappa Precision Temporal Statistic 0 (percent)": 100.0,
        "Kappa Precision Temporal Statistic 1 (percent)": 100.0,
        # maj() in the middle of the update: at evaluation 2, class 0's column already counts the
        # new 0 (2/3) but class 1's still holds 1.0, so the majority is 1 and precMaj[0] adds 0.
        "Kappa Precision M Statistic 0 (percent)": 100.0,
        "Kappa Precision M Statistic 1 (percent)": NAN,
        "Recall (percent)": 100.0,
        "Recall for class 0 (percent)": 100.0,
        "Recall for class 1 (percent)": 100.0,
        "FPR for class 0 (percent)": 0.0,
        "FPR for class 1 (percent)": 0.0,
        "Gmean for recall  (percent)": 100.0,
        "Kappa Recall Temporal Statistic 0 (percent)": 100.0,
        "Kappa Recall Temporal Statistic 1 (percent)": 100.0,
        "Kappa Recall M Statistic 0 (percent)": 100.0,  # same mid-update majority (1) as above
        "Kappa Recall M Statistic 1 (percent)": NAN,
        "Kappa FPR Temporal Statistic 0 (percent)": -INF,  # (0 - 1) / (1 - 1)
        "Kappa FPR Temporal Statistic 1 (percent)": -INF,
        # evaluation 1 at class 0: class 1's column is still empty, majority 0 != t: fprMaj[0] = 1
        "Kappa FPR M Statistic 0 (percent)": -INF,
        "Kappa FPR M Statistic 1 (percent)": 0.0,
        "Kappa Gmean Temporal Statistic  (percent)": 100.0,
        "Kappa Gmean M Statistic  (percent)": 100.0,
    }
    assert row[:5] == [2.0, 20.0, 0.0, 0.0, 0.0]
    for name, value in expected.items():
        assert same(row[COL[name]], value), name


def test_row_rules_two_folds_by_hand():
    # alpha 0.5, every 2. n=1: fold 0 (p1,o1). n=2: fold 0 (p0,o1), fold 1 (p0,o0). n=3, n=4:
    # nothing (so no dump row at n=4). n=5 (last): fold 1 (p1,o0).
    events = {1: [(0, 1, 1)], 2: [(0, 0, 1), (1, 0, 0)], 5: [(1, 1, 0)]}
    times = {1: 100, 2: 200, 3: 300, 4: 400, 5: 500}
    export = MoaExport(every=2, alpha=0.5, folds=2)
    feed(export, 2, events, times)

    detail = export.detail_rows()
    assert [r[:5] for r in detail] == [[2.0, 200.0, 0.0, 0.0, 0.0], [2.0, 500.0, 1.0, 0.0, 0.0]]
    assert [r[COL["TP"]] for r in detail] == [1.0, 0.0]
    assert [r[COL["FN"]] for r in detail] == [1.0, 0.0]
    assert [r[COL["FP"]] for r in detail] == [0.0, 1.0]
    assert [r[COL["TN"]] for r in detail] == [0.0, 1.0]
    acc = COL["classifications correct (percent)"]
    assert detail[0][acc] == pytest.approx(100 / 3, rel=1e-14)  # (0.5*1 + 0) / (0.5*1 + 1)
    assert detail[1][acc] == pytest.approx(100 / 3, rel=1e-14)

    dump = export.dump_rows()
    assert [r[:4] for r in dump] == [[2.0, 200.0, 0.0, 0.0], [5.0, 500.0, 0.0, 0.0]]
    classified = avg_col("classified instances")
    # n=2: folds have classified 2 and 1
    assert dump[0][classified : classified + 2] == [1.5, pytest.approx(math.sqrt(0.5), rel=1e-15)]
    tp = avg_col("TP")
    assert dump[0][tp : tp + 2] == [0.5, pytest.approx(math.sqrt(0.5), rel=1e-15)]
    a = avg_col("classifications correct (percent)")
    assert dump[0][a] == pytest.approx((100 / 3 + 100) / 2, rel=1e-14)
    assert dump[0][a + 1] == pytest.approx(math.sqrt(2) * (100 - 100 / 3) / 2, rel=1e-14)
    # n=5: both folds classified 2, accuracy 1/3 each
    assert dump[1][classified : classified + 2] == [2.0, 0.0]
    assert dump[1][a : a + 2] == [pytest.approx(100 / 3, rel=1e-14), 0.0]


def test_last_instance_row_only_when_something_was_evaluated_and_never_twice():
    times = {n: 10 * n for n in range(1, 7)}
    # last instance 6 is a multiple of every=3 and evaluates: exactly one row at 6
    export = MoaExport(every=3, alpha=0.9, folds=2)
    feed(export, 2, {2: [(0, 0, 0), (1, 1, 1)], 6: [(1, 0, 0)]}, times)
    assert [r[0] for r in export.dump_rows()] == [6.0]
    # last instance 5 evaluates nothing: no final row (3 has none either)
    times5 = {n: 10 * n for n in range(1, 6)}
    export = MoaExport(every=3, alpha=0.9, folds=2)
    feed(export, 2, {2: [(0, 0, 0), (1, 1, 1)], 3: [(0, 0, 1)]}, times5)
    assert [r[0] for r in export.dump_rows()] == [3.0]
    export = MoaExport(every=3, alpha=0.9, folds=2)
    feed(export, 2, {2: [(0, 0, 0), (1, 1, 1)], 4: [(0, 0, 1)]}, times5)
    assert export.dump_rows() == []


def test_fold_averaging_with_zero_one_and_two_finite_folds():
    # every 1, three folds, each evaluates once at a different step
    export = MoaExport(every=1, alpha=0.99, folds=3)
    feed(export, 3, {1: [(0, 0, 0)], 2: [(1, 1, 1)], 3: [(2, 1, 0)]}, {1: 1, 2: 2, 3: 3})
    dump = export.dump_rows()
    assert [r[0] for r in dump] == [1.0, 2.0, 3.0]
    # n=1: a single participating fold -> every [avg] and [err] is 0.0
    assert dump[0][4:] == [0.0] * 82
    c, tp = avg_col("classified instances"), avg_col("TP")
    assert dump[1][c : c + 2] == [1.0, 0.0]
    assert dump[1][tp : tp + 2] == [0.5, pytest.approx(math.sqrt(0.5), rel=1e-15)]
    # Kappa Temporal: fold 0 is 0/0 (NaN), fold 1 is 100, fold 2 is -1/0 (-Infinity):
    # one finite value at n=2 and n=3 -> 0.0, 0.0
    kt = avg_col("Kappa Temporal Statistic (percent)")
    assert dump[1][kt : kt + 2] == [0.0, 0.0] and dump[2][kt : kt + 2] == [0.0, 0.0]
    # F1 for class 1: fold 0 NaN (0/0), fold 1 100, fold 2 NaN -> 0.0, 0.0
    f1 = avg_col("F1 Score for class 1 (percent)")
    assert dump[2][f1 : f1 + 2] == [0.0, 0.0]
    # accuracy over three folds: 100, 100, 0
    a = avg_col("classifications correct (percent)")
    assert dump[2][a] == pytest.approx(200 / 3, rel=1e-14)
    assert dump[2][a + 1] == pytest.approx(100 / math.sqrt(3), rel=1e-14)
    # Recall for class 0: fold 0 100, fold 1 0 (no class-0 label: estimator empty -> 0), fold 2 0
    r0 = avg_col("Recall for class 0 (percent)")
    assert dump[2][r0] == pytest.approx(100 / 3, rel=1e-14)


def test_detail_timestamp_is_the_arriving_instance_and_order_is_step_fold_evaluation():
    export = MoaExport(every=1, alpha=0.99, folds=2)
    obs = [export.observer_factory(f) for f in range(2)]
    # instance 3 arrives at 300 and releases two older instances in fold 1, one in fold 0
    obs[1].on_evaluation(3, 100, 0, NAN, 0, 0, 1.0)
    obs[1].on_evaluation(3, 150, 1, NAN, 1, 1, 1.0)
    obs[0].on_evaluation(3, 120, 1, NAN, 0, 0, 1.0)
    for o in obs:
        o.on_instance(3, 300)
    obs[0].on_evaluation(4, 310, 0, NAN, 0, 0, 1.0)
    for o in obs:
        o.on_instance(4, 400)
    rows = export.detail_rows()
    assert [r[:3] for r in rows] == [
        [1.0, 300.0, 0.0],
        [1.0, 300.0, 1.0],
        [2.0, 300.0, 1.0],
        [2.0, 400.0, 0.0],
    ]
    assert [r[COL["TP"]] for r in rows] == [0.0, 0.0, 1.0, 0.0]
    assert [r[COL["FP"]] for r in rows] == [1.0, 0.0, 0.0, 1.0]


def test_cpu_seconds_are_passed_through_and_ram_hours_are_zero():
    times = {1: 1, 2: 2}
    cpu = {(0, 1): 0.25, (1, 1): 0.5, (0, 2): 1.0, (1, 2): 2.0}
    export = MoaExport(every=2, alpha=0.9, folds=2)
    feed(export, 2, {1: [(0, 1, 1), (1, 0, 0)], 2: [(0, 1, 1), (1, 0, 0)]}, times, cpu=cpu)
    assert [r[3:5] for r in export.detail_rows()] == [[1.0, 0.0], [2.0, 0.0]]
    assert export.dump_rows()[0][2:4] == [3.0, 0.0]


def test_observers_pickle_midway_and_folds_can_run_in_separate_exports():
    events = {1: [(0, 1, 1)], 2: [(0, 0, 1), (1, 0, 0)], 3: [(1, 1, 1)], 5: [(1, 1, 0), (0, 1, 0)]}
    times = {n: 100 * n for n in range(1, 6)}
    whole = MoaExport(every=2, alpha=0.5, folds=2)
    feed(whole, 2, events, times)

    # each fold in its own export (as in worker processes), pickled halfway and at the end
    parts = []
    for fold in range(2):
        part = MoaExport(every=2, alpha=0.5, folds=2)
        obs = part.observer_factory(fold)
        for n in sorted(times):
            for f, pred, observed in events.get(n, []):
                if f == fold:
                    obs.on_evaluation(n, times[n], pred, NAN, observed, observed, 1.0)
            obs.on_instance(n, times[n])
            if n == 3:
                obs = pickle.loads(pickle.dumps(obs))
        parts.append(pickle.loads(pickle.dumps(obs)))
    merged = MoaExport(every=2, alpha=0.5, folds=2)
    merged.collect(reversed(parts))

    def text(rows):
        return repr(rows)  # NaN-safe exact comparison

    assert text(merged.dump_rows()) == text(whole.dump_rows())
    assert text(merged.detail_rows()) == text(whole.detail_rows())
    assert len(whole.dump_rows()) == 2 and len(whole.detail_rows()) == 2


def test_write_files_exactly_and_overwrite(tmp_path):
    export = MoaExport(every=2, alpha=0.5, folds=1)
    feed(export, 1, {1: [(0, 1, 1)], 2: [(0, 0, 0)]}, {1: 1323292816, 2: 1323292845})
    for _ in range(2):  # the second write replaces the first (the MOA extension would append)
        dump_path, detail_path = export.write(tmp_path)
    assert (dump_path.name, detail_path.name) == (DUMP_FILE, DETAIL_FILE)
    lines = detail_path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and lines[0] == ",".join(DETAIL_HEADER)
    cells = lines[1].split(",")
    assert len(cells) == 46
    assert cells[:12] == [
        "2.0",
        "1.323292845E9",
        "0.0",
        "0.0",
        "0.0",
        "2.0",
        "1.0",
        "0.0",
        "1.0",
        "0.0",
        "100.0",
        "100.0",
    ]
    assert cells[COL["Kappa M Statistic (percent)"]] == "?"
    assert cells[COL["Kappa FPR Temporal Statistic 0 (percent)"]] == "-Infinity"
    # one fold only: the dump row (n = 2, last) averages a single fold -> zeros
    dump_lines = dump_path.read_text(encoding="utf-8").splitlines()
    assert dump_lines[0] == ",".join(DUMP_HEADER)
    assert dump_lines[1] == "2.0,1.323292845E9,0.0,0.0," + ",".join(["0.0"] * 82)
    header, rows = read_moa_csv(detail_path)
    assert (
        header == DETAIL_HEADER
        and len(rows) == 1
        and math.isnan(rows[0][COL["Kappa M Statistic (percent)"]])
    )
    assert not [p.name for p in tmp_path.iterdir() if p.name not in (DUMP_FILE, DETAIL_FILE)]


def test_no_rows_still_writes_headers(tmp_path):
    export = MoaExport(every=5, alpha=0.9, folds=2)
    feed(export, 2, {2: [(0, 1, 1)]}, {1: 1, 2: 2, 3: 3})  # evaluated, but not at 5 nor at the end
    dump_path, detail_path = export.write(tmp_path)
    assert dump_path.read_text(encoding="utf-8") == ",".join(DUMP_HEADER) + "\n"
    assert detail_path.read_text(encoding="utf-8") == ",".join(DETAIL_HEADER) + "\n"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"every": 0, "alpha": 0.9, "folds": 2},
        {"every": 2.5, "alpha": 0.9, "folds": 2},
        {"every": 2, "alpha": 0.0, "folds": 2},
        {"every": 2, "alpha": 1.5, "folds": 2},
        {"every": 2, "alpha": 0.9, "folds": 0},
    ],
)
def test_bad_parameters_are_errors(kwargs):
    with pytest.raises(DelaycvError):
        MoaExport(**kwargs)


def test_fold_outside_range_is_an_error():
    with pytest.raises(DelaycvError, match="fold 2"):
        MoaExport(every=2, alpha=0.9, folds=2).observer_factory(2)


# --------------------------------------------------------------------------- the evaluator


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=80),
    st.sampled_from([0.5, 0.9, 0.99, 1.0]),
)
def test_evaluator_equals_the_simulator_bit_for_bit(pairs, alpha):
    ours, ref = MoaEvaluator(alpha), sim.Evaluator(alpha)
    for p, t in pairs:
        ours.add(p, t)
        ref.add_result(t, p)
        assert repr(ours.values()) == repr(ref.measurements())  # NaN-safe exact equality


def test_evaluator_agrees_with_delaycv_metrics_where_well_conditioned():
    """Same names and, on a mixed sequence, the same values as ``delaycv.metrics.MOA_MEASUREMENTS``."""
    assert list(MOA_MEASUREMENTS) == MEASUREMENT_NAMES
    rng = random.Random(7)
    for alpha in (0.9, 0.99):
        ours, theirs = MoaEvaluator(alpha), Metrics(Fading(alpha))
        for k in range(1, 301):
            t = 1 if rng.random() < 0.45 else 0
            p = t if rng.random() < 0.7 else 1 - t
            ours.add(p, t)
            theirs.add(p, float(p), t)
            if k % 25 == 0:
                snap = theirs.snapshot()
                expected = [f(snap) for f in MOA_MEASUREMENTS.values()]
                for name, a, b in zip(MEASUREMENT_NAMES, ours.values(), expected, strict=True):
                    assert same(a, b), (alpha, k, name)


def test_abstention_counts_as_class_zero():
    a, b = MoaEvaluator(0.9), MoaEvaluator(0.9)
    for pred, label in [(-1, 1), (1, 1), (-1, 0)]:
        a.add(pred, label)
        b.add(0 if pred == -1 else pred, label)
    assert repr(a.values()) == repr(b.values())
