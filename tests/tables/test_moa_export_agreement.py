"""Agreement with the MOA extension: delaycv's MOA export vs an independent simulator of it.

``moa_reference_sim`` re-implements the MOA extension's task (EvaluatePrequentialDelayedCVIdeal)
from ``../shared/reference/moa-extension.md`` alone; it reads the brackets CSV with its own parser
and has its own MOA learners and evaluator. delaycv reads the ARFF through its converter, runs
river's ``dummy.NoChangeClassifier`` / ``dummy.PriorClassifier`` in the engine, and writes
``dump.csv`` and ``detail.csv`` with :class:`delaycv.tables.moa_export.MoaExport`. Every non-timing
cell must agree (relative 1e-9, absolute 1e-9 for values near zero; NaN == NaN; infinities equal),
with the same rows in the same order.
"""

from __future__ import annotations

import math

import pytest

from tests.support.paths import shared_file
from tests.tables import moa_reference_sim as sim

BRACKETS_CSV = "commit_guru_dataset/cut2years/0_brackets.csv"
BRACKETS_ARFF = "commit_guru_dataset/cut2years/0_brackets.arff"
EVERY, ALPHA, FOLDS = 30, 0.99, 10
DUMP_TIMING = {2, 3}  # evaluation time (cpu seconds), model cost (RAM-Hours)
DETAIL_TIMING = {3, 4}


# --------------------------------------------------------------------------- comparison


def mismatches(actual, expected, header, timing, limit=5) -> list[str]:
    """Human-readable differences between two tables of float rows (timing columns skipped)."""
    out = []
    if len(actual) != len(expected):
        out.append(f"row count {len(actual)} != {len(expected)}")
    for r, (a_row, e_row) in enumerate(zip(actual, expected, strict=False)):
        if len(a_row) != len(e_row):
            out.append(f"row {r}: {len(a_row)} cells != {len(e_row)}")
            continue
        for c, (a, e) in enumerate(zip(a_row, e_row, strict=True)):
            if c in timing:
                continue
            if math.isnan(e) and math.isnan(a):
                continue
            if math.isinf(e) or math.isinf(a):
                ok = a == e
            else:
                ok = math.isclose(a, e, rel_tol=1e-9, abs_tol=1e-9)
            if not ok:
                out.append(f"row {r} (n/tested={e_row[0]}), column {header[c]!r}: {a!r} != {e!r}")
                if len(out) >= limit:
                    return out
    return out


# --------------------------------------------------------------------------- the simulator itself


def test_simulator_java_random_and_poisson():
    rnd = sim.JavaRandom(1)
    assert rnd.next_double() == 0.7308781907032909  # new java.util.Random(1).nextDouble()
    assert rnd.next_double() == 0.41008081149220166
    # poisson1: k = 0 iff u * e < 1
    draws = [sim.poisson1(sim.JavaRandom(s)) for s in range(200)]
    firsts = [sim.JavaRandom(s).next_double() for s in range(200)]
    assert all((k == 0) == (u * math.e < 1) for k, u in zip(draws, firsts, strict=True))
    assert all((k >= 2) == (u * math.e >= 2) for k, u in zip(draws, firsts, strict=True))


def test_simulator_evaluator_by_hand():
    ev = sim.Evaluator(0.5)
    ev.add_result(t=1, p=1)
    ev.add_result(t=0, p=0)
    v = dict(zip(sim.MEASUREMENT_NAMES, ev.measurements(), strict=True))
    assert [v[k] for k in ("classified instances", "TP", "FP", "TN", "FN")] == [2, 1, 0, 1, 0]
    assert v["Kappa Statistic (percent)"] == 100.0
    assert math.isnan(v["Kappa M Statistic (percent)"])
    # the mid-update majority (1) makes precMaj[0] = 0, so Kappa Precision M 0 = 100, not NaN
    assert v["Kappa Precision M Statistic 0 (percent)"] == 100.0
    assert v["Kappa FPR M Statistic 0 (percent)"] == -math.inf
    assert v["Kappa FPR M Statistic 1 (percent)"] == 0.0
    assert math.isnan(v["Kappa Statistic F1 Score for class 1 (percent)"])


def test_simulator_loop_gating_by_hand():
    rows = [sim.Row(ts=10 * n, fb=-1, label=n % 2) for n in range(1, 8)]
    trace: list = []
    out = sim.simulate(rows, "NoChange", folds=2, scheme=sim.CV, every=2, trace=trace)
    # CV: fold n % 2 skips instance n; instance 1 goes to fold 0, instance 2 to fold 1, ...
    assert [(n, f) for n, _, f, _, _ in trace] == [
        (1, 0),
        (2, 1),
        (3, 0),
        (4, 1),
        (5, 0),
        (6, 1),
        (7, 0),
    ]
    # fold 0 only sees label 1: NoChange predicts 0 first, then 1
    assert [p for n, _, f, p, _ in trace if f == 0] == [0, 1, 1, 1]
    assert out.tested == [4, 3]
    assert [r[:3] for r in out.detail] == [[2.0, 30.0, 0.0], [2.0, 40.0, 1.0], [4.0, 70.0, 0.0]]
    assert [r[0] for r in out.dump] == [2.0, 4.0, 6.0, 7.0]
    split: list = []
    sim.simulate(rows, "MajorityClass", folds=2, scheme=sim.SPLIT, every=2, trace=split)
    assert [(n, f) for n, _, f, _, _ in split] == [
        (1, 1),
        (2, 0),
        (3, 1),
        (4, 0),
        (5, 1),
        (6, 0),
        (7, 1),
    ]


def test_simulator_delayed_pairing_and_feedback():
    # PosNegWindow (P=N=15 s): labels are released later and scored with the CURRENT prediction
    rows = [
        sim.Row(ts=0, fb=-1, label=1),
        sim.Row(ts=10, fb=-1, label=1),
        sim.Row(
            ts=20, fb=0, label=0
        ),  # a fix of the commit at ts 0: feedback releases it (label 1)
        sim.Row(ts=40, fb=-1, label=0),
    ]
    trace: list = []
    sim.simulate(rows, "NoChange", folds=1, scheme=sim.SPLIT, task=sim.POSNEG, pos_window=15,
                 neg_window=15, every=1, trace=trace)  # fmt: skip
    # split with w=1: n % 1 == 0 for every n -> fold 0 trains everything
    # n=3: feedback releases ts 0 (label 1); then the negative head (ts 10, 20-10 < 15) waits
    # n=4: the negative head ts 10 expires -> label 0 (PosNeg: negative timeout observes 0)
    assert [(n, ts, lab) for n, ts, _, _, lab in trace] == [(3, 20, 1), (4, 40, 0)]
    # the prediction used at n=4 is the one made for instance 4 (NoChange after training 1 -> 1)
    assert [p for *_, p, _ in trace] == [0, 1]


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def brackets_rows():
    return sim.read_commit_guru_csv(shared_file(BRACKETS_CSV))


_SIM_CACHE: dict = {}


def simulated(rows, scheme: str, learner: str):
    key = (scheme, learner)
    if key not in _SIM_CACHE:
        trace: list = []
        result = sim.simulate(
            rows, learner, folds=FOLDS, scheme=scheme, every=EVERY, alpha=ALPHA, trace=trace
        )
        _SIM_CACHE[key] = (result, trace)
    return _SIM_CACHE[key]


@pytest.mark.realdata
def test_brackets_rows_read_by_the_simulator(brackets_rows):
    assert len(brackets_rows) == 11914
    assert sum(r.label for r in brackets_rows) == 3497
    assert sum(r.fb != -1 for r in brackets_rows) == 2307
    assert brackets_rows[89].ts == 1323993389  # moa-extension.md's example: first dump row (n = 90)


CASES = [(s, lrn) for s in (sim.CV, sim.SPLIT) for lrn in ("NoChange", "MajorityClass")]


@pytest.mark.realdata
@pytest.mark.parametrize(("scheme", "learner"), CASES)
def test_export_fed_with_the_simulated_evaluations_matches(brackets_rows, scheme, learner):
    """MoaExport on exactly the simulator's evaluation sequence (isolates the export)."""
    from delaycv.tables.moa_export import MoaExport

    expected, trace = simulated(brackets_rows, scheme, learner)
    export = MoaExport(every=EVERY, alpha=ALPHA, folds=FOLDS)
    observers = [export.observer_factory(f) for f in range(FOLDS)]
    j = 0
    for n, row in enumerate(brackets_rows, start=1):
        while j < len(trace) and trace[j][0] == n:
            _, ts, fold, pred, label = trace[j]
            observers[fold].on_evaluation(n, ts, pred, float(pred), label, label, 1.0)
            j += 1
        for obs in observers:
            obs.on_instance(n, row.ts)
    assert j == len(trace)
    assert len(expected.dump) == 398
    assert len(expected.detail) == (3570 if scheme == sim.CV else 390)
    assert mismatches(export.dump_rows(), expected.dump, sim.DUMP_HEADER, DUMP_TIMING) == []
    assert mismatches(export.detail_rows(), expected.detail, sim.DETAIL_HEADER, DETAIL_TIMING) == []


@pytest.fixture(scope="module")
def brackets_parquet(tmp_path_factory):
    from delaycv.data.convert import convert_file

    dest = tmp_path_factory.mktemp("moa") / "brackets.parquet"
    convert_file(shared_file(BRACKETS_ARFF), dest, preset="commit-guru")
    return dest


RIVER = {"NoChange": "dummy.NoChangeClassifier", "MajorityClass": "dummy.PriorClassifier"}


def assert_files_match(out_dir, expected) -> None:
    from delaycv.tables.moa_export import read_moa_csv

    header, dump = read_moa_csv(out_dir / "dump.csv")
    assert header == sim.DUMP_HEADER
    assert mismatches(dump, expected.dump, header, DUMP_TIMING) == []
    header, detail = read_moa_csv(out_dir / "detail.csv")
    assert header == sim.DETAIL_HEADER
    assert mismatches(detail, expected.detail, header, DETAIL_TIMING) == []


@pytest.mark.realdata
@pytest.mark.parametrize(("scheme", "learner"), CASES)
def test_engine_with_river_learners_reproduces_the_moa_extension(
    brackets_rows, brackets_parquet, tmp_path, scheme, learner
):
    """The engine (ideal policy, evaluate trained only) + MoaExport, files written and read back."""
    from delaycv.data.stream_file import read_stream
    from delaycv.protocol.validation import Validation
    from delaycv.tables.moa_export import MoaExport
    from tests.support.engine_runs import evaluate

    expected, _ = simulated(brackets_rows, scheme, learner)
    export = MoaExport(every=EVERY, alpha=ALPHA, folds=FOLDS)
    result = evaluate(
        read_stream(brackets_parquet),
        {"class": RIVER[learner]},
        {"preset": "ideal"},
        Validation(scheme=scheme, folds=FOLDS, seed=1, evaluate="trained"),
        seed=1,
        estimator={"kind": "fading", "alpha": ALPHA},
        every=EVERY,
        observer_factory=export.observer_factory,
    )
    export.write(tmp_path, result.observers)
    assert_files_match(tmp_path, expected)
    # the export's per-fold evaluation counts are the engine's and the simulated MOA extension's
    assert [o.tested for o in result.observers] == expected.tested
    assert [f["evaluated"] for f in result.info["folds"]] == expected.tested


@pytest.mark.realdata
def test_engine_with_worker_processes_gives_the_same_files(
    brackets_rows, brackets_parquet, tmp_path
):
    """``jobs=2``: observers run in worker processes and come back pickled in the result."""
    from delaycv.data.stream_file import read_stream
    from delaycv.tables.moa_export import MoaExport
    from tests.support.engine_runs import evaluate

    expected, _ = simulated(brackets_rows, sim.SPLIT, "NoChange")
    export = MoaExport(every=EVERY, alpha=ALPHA, folds=FOLDS)
    result = evaluate(
        read_stream(brackets_parquet),
        {"class": "NoChange"},
        {"preset": "ideal"},
        {"scheme": "split", "folds": FOLDS, "seed": 1, "evaluate": "trained"},
        seed=1,
        estimator={"kind": "fading", "alpha": ALPHA},
        every=EVERY,
        observer_factory=export.observer_factory,
        jobs=2,
    )
    assert export.observers == {}  # nothing ran in this process
    export.write(tmp_path, result.observers)
    assert_files_match(tmp_path, expected)


@pytest.mark.realdata
def test_cli_moa_csv_reproduces_the_moa_extension(brackets_rows, brackets_parquet, tmp_path):
    """``delaycv evaluate ... --moa-csv`` (river PriorClassifier, cross-validation, 2 processes)."""
    from delaycv.cli import main

    expected, _ = simulated(brackets_rows, sim.CV, "MajorityClass")
    out = tmp_path / "run"
    argv = ["evaluate", str(brackets_parquet), "--learner", "dummy.PriorClassifier"]
    argv += ["--policy", "ideal", "--validation", "cv", "--folds", str(FOLDS)]
    argv += ["--evaluate", "trained", "--estimator", "fading", "--alpha", str(ALPHA)]
    argv += ["--every", str(EVERY), "--moa-csv", "--jobs", "2", "--quiet", "--out", str(out)]
    assert main(argv) == 0
    assert_files_match(out, expected)
