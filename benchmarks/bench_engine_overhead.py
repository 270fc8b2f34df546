"""Engine time / a bare loop making exactly the engine's learner calls (targets: at most 1.05, and
at most 2 us of bookkeeping per fold and instance).

Setting (the issue's): HoeffdingTree, 10 folds, bootstrap, hitl 7d/90d, 100,000 instances of the
synthetic stream (``delaycv.data.synthetic.generate_stream``), checkpoints every 1,000. The estimator is
the workflow's default (``fading``, alpha 0.99: the headline); ``--estimator cumulative`` (exact AUC
included) is reported as well.

1. A recording run gives the exact sequence of learner calls of the engine, in the engine's global
   order (``predict_proba_one`` of instance i; ``learn_one`` of instance i with label y and weight
   w, and whether ``w=`` was passed; instances are identified by the x dict of their prediction),
   and where each chunk of the engine's loop ends in that sequence (from its progress callback).
2. The bare loop replays those calls on fresh learners, with x dicts built beforehand (so it pays
   nothing for data access: a strict baseline), all ten learners alive, in the engine's order.

Timing. The machines are shared virtual machines whose speed drifts by 20-40 % within seconds, so
two runs timed one after the other do not compare (the same bare loop measured 11.1 s and 16.2 s in
one session). The headline therefore runs the two **in lockstep**: the engine runs with a progress
callback which, every ``PROGRESS_BLOCK`` (256) instances of a fold, has a second process (forked
after the recording, pinned to the same CPU) replay the bare loop's calls of that same block, and
waits for it. Both sides then share the slow and fast stretches of the machine, and each has its
own heap, so neither's garbage collector walks the other's learners. About 3,900 alternations at
100k instances average the machine's bursts out (an A/A run of the bare loop against itself moved
from +-5 % with 10 alternations to +-1.5 % with 400). The engine runs with its own chunk
(``CHUNK``, 4,096 instances: what a user's run does); ``--chunk`` sets another (smaller chunks
add per-chunk work: the old benchmark ran 256). Engine time = the engine process's CPU seconds for the whole
``evaluate`` call (tables and summary included) minus its callback; bare time = the CPU seconds of
the replays (``time.process_time`` in each process). The same lockstep run of the bare loop against
itself (A/A) is printed first as the noise floor of the measurement (``--no-calibrate`` skips it).
Bookkeeping = (engine - bare) / (folds x instances); the headline ratio is the median of
``--repeat`` (3) paired runs. For comparison the old design (engine alone, then bare loop alone,
best of ``--repeat``) is printed too, with ``--separate``.

``--split`` runs the lockstep once more with every learner call timed on both sides
(``TimedTree``) and prints each side's time in learner calls and in the rest: where the overhead
is (the timing wrappers add the same to both sides).

Usage: ``.venv/bin/python benchmarks/bench_engine_overhead.py [--quick] [--rows N] [--repeat R]
[--estimator fading|cumulative|both] [--separate] [--split]`` (default: both estimators, fading
first)
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import statistics
import sys
import time

from river.tree import HoeffdingTreeClassifier

import delaycv.engine.folds
from delaycv import engine
from delaycv.data.synthetic import generate_stream
from delaycv.engine import PROGRESS_BLOCK, compiled
from delaycv.protocol.settings import make_settings

#: The workflow's default estimator (config.yaml) and the cumulative one (exact AUC).
ESTIMATORS = {"fading": {"kind": "fading", "alpha": 0.99}, "cumulative": {"kind": "cumulative"}}
#: The issue's setting apart from the learner and the stream (``bench_engine_ab.py`` runs it too).
SETTING = dict(
    policy={"preset": "hitl", "pos_window": "7d", "neg_window": "90d"},
    validation={"scheme": "bootstrap", "folds": 10, "seed": 1},
    seed=1,
    every=1000,
    estimator=ESTIMATORS["fading"],
)


class RecordingTree(HoeffdingTreeClassifier):
    """HoeffdingTree that records its calls (instance numbers found from the x dict's identity)."""

    registry: list = []
    #: Every call of every recording tree in the engine's order: (registry position, call), where
    #: a call is the instance number (a prediction) or (instance, y, w) (a learn_one).
    order: list = []

    def __init__(self, **params) -> None:
        super().__init__(**params)
        self.position = len(RecordingTree.registry)
        self._index: dict = {}
        self._count = 0
        RecordingTree.registry.append(self)

    def predict_proba_one(self, x):
        self._index[id(x)] = self._count
        RecordingTree.order.append((self.position, self._count))
        self._count += 1
        return super().predict_proba_one(x)

    def learn_one(self, x, y, *, w=None):
        RecordingTree.order.append((self.position, (self._index[id(x)], y, w)))
        if w is None:
            return super().learn_one(x, y)
        return super().learn_one(x, y, w=w)


class TimedTree(HoeffdingTreeClassifier):
    """HoeffdingTree that adds the CPU time spent in its calls to ``TimedTree.seconds``
    (``--split``; CPU time like the totals it is subtracted from: the wall clock also counts the
    time the virtual machine takes the CPU away, several % here)."""

    seconds = 0.0

    def predict_proba_one(self, x):
        t0 = time.process_time()
        proba = super().predict_proba_one(x)
        TimedTree.seconds += time.process_time() - t0
        return proba

    def learn_one(self, x, y, *, w=1.0):
        t0 = time.process_time()
        super().learn_one(x, y, w=w)
        TimedTree.seconds += time.process_time() - t0


def evaluate(stream, learner, *, progress=False, **common):
    """One engine run of ``learner`` with the benchmark's settings ``common``."""
    settings = make_settings(learner=learner, **common)
    return engine.evaluate(stream, settings, progress=progress)


def replay(calls, xs, models: dict, model_class=HoeffdingTreeClassifier) -> float:
    """The bare loop: the recorded ``calls`` on the learners of ``models`` (created on first use),
    nothing else. Returns CPU seconds."""
    t0 = time.process_time()
    for position, c in calls:
        model = models.get(position)
        if model is None:
            model = models[position] = model_class()
        if c.__class__ is int:
            model.predict_proba_one(xs[c])
        else:
            i, y, w = c
            if w is None:
                model.learn_one(xs[i], y)
            else:
                model.learn_one(xs[i], y, w=w)
    return time.process_time() - t0


def record(stream, common) -> tuple[list, list[int]]:
    """The engine's learner calls in order, and the end of each chunk in that list."""
    RecordingTree.registry = []
    RecordingTree.order = []
    bounds: list[int] = []
    evaluate(
        stream,
        {"class": "__main__:RecordingTree"},
        progress=lambda _k: bounds.append(len(RecordingTree.order)),
        **common,
    )
    order = RecordingTree.order
    # (the learner check before the run builds one more tree, which makes no calls)
    assert len({position for position, _ in order}) == 10 and bounds[-1] == len(order)
    RecordingTree.registry = []
    RecordingTree.order = []
    return order, bounds


def chunk_calls(order, bounds, j: int) -> list:
    """The recorded calls of engine chunk ``j``."""
    return order[bounds[j - 1] if j else 0 : bounds[j]]


def _bare_worker(conn, order, bounds, xs, model_class) -> None:
    """The bare loop's process: replays chunk j when asked, answers with its CPU seconds; at the
    end answers with the seconds spent in ``TimedTree`` calls (0 for the plain tree)."""
    models: dict = {}
    while True:
        j = conn.recv()
        if j is None:
            break
        conn.send(replay(chunk_calls(order, bounds, j), xs, models, model_class))
    conn.send(TimedTree.seconds)
    conn.close()


@contextlib.contextmanager
def lockstep_partner(order, bounds, xs, model_class=HoeffdingTreeClassifier):
    """A bare-loop process forked now and pinned, with this process, to one CPU (the vCPUs of a
    shared machine differ in speed from moment to moment, and both sides must see the same one).
    Yields ``partner(j)``: the partner replays chunk j while this process waits without using CPU;
    returns the partner's CPU seconds. After the block, ``partner.learner_seconds`` holds the
    partner's time in ``TimedTree`` calls."""
    cpus = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cpus)})
    ctx = multiprocessing.get_context("fork")
    here, there = ctx.Pipe()
    worker = ctx.Process(target=_bare_worker, args=(there, order, bounds, xs, model_class))
    worker.start()
    there.close()

    def partner(j: int) -> float:
        here.send(j)
        return here.recv()

    try:
        yield partner
    finally:
        here.send(None)
        partner.learner_seconds = here.recv()
        worker.join()
        os.sched_setaffinity(0, cpus)


def interleaved(
    stream, spec, common, order, bounds, xs, model_class=HoeffdingTreeClassifier
) -> tuple[float, float, list[float], float]:
    """One engine run, with the bare loop replayed chunk by chunk in lockstep in a second process:
    at the end of each engine chunk the engine waits while the bare loop runs the same chunk.
    Each side has its own heap (its garbage collector walks only its own learners) and both see
    the same stretches of the machine. ``model_class``: the bare loop's learner. Returns (engine
    CPU s, bare CPU s, per-chunk ratios, the bare loop's seconds in ``TimedTree`` calls)."""
    state = {"chunk": 0, "callback": 0.0, "bare": 0.0, "last": 0.0, "ratios": []}
    with lockstep_partner(order, bounds, xs, model_class) as partner:

        def callback(_k: int) -> None:
            c0 = time.process_time()
            j = state["chunk"]
            bare = partner(j)
            state["bare"] += bare
            state["chunk"] = j + 1
            state["ratios"].append((c0 - state["last"]) / bare if bare > 0 else float("nan"))
            state["callback"] += time.process_time() - c0
            state["last"] = time.process_time()

        t0 = time.process_time()
        state["last"] = t0
        evaluate(stream, spec, progress=callback, **common)
        total = time.process_time() - t0
    assert state["chunk"] == len(bounds)
    return total - state["callback"], state["bare"], state["ratios"], partner.learner_seconds


def split(stream, common, order, bounds, xs) -> dict:
    """``interleaved`` with ``TimedTree`` on both sides: each side's time in learner calls and in
    the rest (its CPU seconds minus the learner calls' time)."""
    TimedTree.seconds = 0.0
    spec = {"class": "__main__:TimedTree"}
    engine, bare, _, bare_learner = interleaved(stream, spec, common, order, bounds, xs, TimedTree)
    return {
        "engine": (TimedTree.seconds, engine - TimedTree.seconds),
        "bare": (bare_learner, bare - bare_learner),
    }


def aa_run(order, bounds, xs) -> tuple[float, float, list[float]]:
    """The bare loop against itself in the same lockstep as ``interleaved``."""
    models: dict = {}
    a = b = 0.0
    ratios = []
    with lockstep_partner(order, bounds, xs) as partner:
        for j in range(len(bounds)):
            sa = replay(chunk_calls(order, bounds, j), xs, models)
            sb = partner(j)
            a += sa
            b += sb
            ratios.append(sa / sb if sb > 0 else float("nan"))
    return a, b, ratios


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="20,000 instances, 1 repeat")
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument("--estimator", choices=("fading", "cumulative", "both"), default="both")
    ap.add_argument(
        "--separate", action="store_true", help="also time engine and bare loop one after the other"
    )
    ap.add_argument(
        "--chunk",
        type=int,
        default=delaycv.engine.folds.CHUNK,
        help=f"engine chunk (instances), default the engine's own ({delaycv.engine.folds.CHUNK})",
    )
    ap.add_argument("--no-calibrate", action="store_true", help="skip the A/A run")
    ap.add_argument(
        "--split",
        action="store_true",
        help="also time the learner calls on both sides: learner time and the rest, per side",
    )
    args = ap.parse_args(argv)
    rows = args.rows or (20_000 if args.quick else 100_000)
    repeat = args.repeat or (1 if args.quick else 3)
    stream = generate_stream(rows, seed=1)
    spec = {"class": "tree.HoeffdingTreeClassifier"}
    common = dict(SETTING)
    delaycv.engine.folds.CHUNK = args.chunk
    order, bounds = record(stream, common)
    xs = stream.records(0, len(stream))
    kinds = ("fading", "cumulative") if args.estimator == "both" else (args.estimator,)
    print(
        f"engine overhead: {rows:,} instances x 10 folds, HoeffdingTree, bootstrap, hitl 7d/90d; "
        f"{len(order):,} learner calls in {len(bounds)} blocks (engine chunks of {args.chunk} "
        f"instances, {PROGRESS_BLOCK} instances of a fold per block; the same for every estimator)"
        f"; the engine runs {compiled.status()}"
    )
    if not args.no_calibrate:
        a, b, ratios = aa_run(order, bounds, xs)
        print(
            f"  A/A (bare loop against itself, the noise floor): {a:7.2f} s / {b:7.2f} s = "
            f"{a / b:.3f}   (per chunk: median {statistics.median(ratios):.3f})"
        )
    for kind in kinds:
        run = {**common, "estimator": ESTIMATORS[kind]}
        results = [interleaved(stream, spec, run, order, bounds, xs) for _ in range(repeat)]
        for e, b, ratios, _ in results:
            q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
            print(
                f"  {kind:10s} interleaved: engine {e:7.2f} s, bare loop {b:7.2f} s, "
                f"ratio {e / b:.3f}, bookkeeping {(e - b) / (rows * 10) * 1e6:.2f} us per fold "
                f"and instance   (per block: median {statistics.median(ratios):.3f}, "
                f"quartiles {q[0]:.3f}-{q[2]:.3f}, range {min(ratios):.3f}-{max(ratios):.3f})"
            )
        ratios = sorted(e / b for e, b, _, _ in results)
        cost = statistics.median((e - b) / (rows * 10) * 1e6 for e, b, _, _ in results)
        print(
            f"    ratio engine / bare loop = {statistics.median(ratios):.3f} (median of {repeat} "
            f"paired runs; {', '.join(f'{r:.3f}' for r in ratios)})   (target <= 1.05); "
            f"bookkeeping {cost:.2f} us per fold and instance (target <= 2)"
        )
    if args.split:
        parts = split(stream, {**common, "estimator": ESTIMATORS[kinds[0]]}, order, bounds, xs)
        per = rows * 10 / 1e6  # fold-instances, in millions: seconds / per = us each
        for side, (learner, rest) in parts.items():
            print(
                f"  split ({kinds[0]}), {side:6s}: learner calls {learner:7.2f} s, the rest "
                f"{rest:6.2f} s ({rest / per:.2f} us per fold and instance)"
            )
    if args.separate:
        for kind in kinds:
            engine_s, bare_s = [], []
            for _ in range(repeat):
                t0 = time.process_time()
                evaluate(stream, spec, **{**common, "estimator": ESTIMATORS[kind]})
                engine_s.append(time.process_time() - t0)
                bare_s.append(replay(order, xs, {}))
            print(
                f"  {kind:10s} separate: engine {', '.join(f'{s:.2f}' for s in engine_s)} s; "
                f"bare loop {', '.join(f'{s:.2f}' for s in bare_s)} s; "
                f"ratio of the best {min(engine_s) / min(bare_s):.3f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
