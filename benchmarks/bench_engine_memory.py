"""Peak memory of an evaluation read from a stream file: 10,000,000 generated instances, 10
bootstrap folds, GaussianNB, hitl 7d/90d (targets, issue 14: at most 1 GiB, and within 10 % of
the same run on 1,000,000 instances).

Each measurement is a fresh subprocess (``resource.getrusage`` peak RSS) that opens the stream
file (:class:`delaycv.data.stream_file.StreamFile`: read chunk by chunk), runs :func:`delaycv.engine.evaluate`
with the default estimator (fading 0.99) and a checkpoint every 1,000 instances, and writes the
run directory as the run goes (``on_rows`` into :class:`delaycv.tables.run_writer.RunWriter`: the fold
table and its summary written in row groups of 16,384 rows from column buffers allocated once)
-- what ``delaycv evaluate`` and the workflow's evaluate jobs do. The stream
files are generated beforehand in another subprocess (not measured), spanning rows / 100 days
(about 9,000 instances inside the 90-day window). Baseline in the same run: the peak of a process
that imports the same modules and opens the file.

Printed: each peak, the instances the run held at once, the ratio of the peaks (10M / 1M, target
<= 1.10) and the 10M peak / 1 GiB (target <= 1.0).

Usage: ``.venv/bin/python benchmarks/bench_engine_memory.py [--rows N [N ...]] [--dir DIR]``
(default rows 1,000,000 and 10,000,000: 10 folds x 11M predictions and trainings; river's
GaussianNB spends about 0.2 ms per prediction, so the default takes some 6 hours on one core;
``--learner Prior`` does the same engine work -- reading, releases, metrics, table -- with a learner
of constant size in about 15 minutes; ``--rows 100000 1000000`` for a quicker look).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GENERATE = r"""
import sys
from delaycv.data.synthetic import generate_stream
from delaycv.data.stream_file import write_stream
rows = int(sys.argv[1])
write_stream(generate_stream(rows, seed=1, days=rows / 100.0), sys.argv[2])
"""

CHILD = r"""
import json, resource, sys, time
from delaycv.engine import evaluate
from delaycv.tables.run_writer import RunWriter
from delaycv.protocol.settings import make_settings
from delaycv.data.stream_file import open_stream
import river.naive_bayes
path, out, evaluate_it, learner = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
stream = open_stream(path)
t0 = time.perf_counter()
info = {}
if evaluate_it:
    with RunWriter(out) as run:  # row groups of 16,384 rows, buffers allocated once
        settings = make_settings(
            learner={"class": learner},
            policy={"preset": "hitl", "pos_window": "7d", "neg_window": "90d"},
            validation={"scheme": "bootstrap", "folds": 10, "seed": 1}, seed=1, every=1000)
        r = evaluate(stream, settings, on_rows=run.add)
        run.finish(r)
    rows = run.rows
    info = {"held": r.info["instances_held"], "rows": rows,
            "pending": r.info["folds"][0]["pending"]}
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
print(json.dumps({"peak": peak, "seconds": time.perf_counter() - t0, **info}))
"""


def child(code: str, *args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code, *args], check=True, capture_output=True, text=True
    )
    lines = out.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--dir", type=Path, help="keep the generated streams here")
    ap.add_argument(
        "--learner",
        default="naive_bayes.GaussianNB",
        help="river class (Prior: the same engine work at a fraction of the time)",
    )
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    tmp = None
    if args.dir is None:
        tmp = tempfile.TemporaryDirectory()
        folder = Path(tmp.name)
    else:
        folder = args.dir
        folder.mkdir(parents=True, exist_ok=True)
    mib, gib = 2**20, 1024**3
    peaks = {}
    try:
        print(f"memory: 10 bootstrap folds, {args.learner}, hitl 7d/90d, fading 0.99, every 1,000")
        for rows in args.rows:
            path = folder / f"stream_{rows}.parquet"
            if not path.exists():
                child(GENERATE, str(rows), str(path))
            base = child(CHILD, str(path), str(folder / "none"), "0", args.learner)
            out = folder / f"run_{rows}"
            run = child(CHILD, str(path), str(out), "1", args.learner)
            peaks[rows] = run["peak"]
            print(
                f"  {rows:>12,} instances: peak {run['peak'] / mib:7.1f} MiB "
                f"(baseline {base['peak'] / mib:6.1f} MiB; held at most {run['held']:,} "
                f"instances; {run['rows']:,} table rows written; {run['seconds']:.0f} s)",
                flush=True,
            )
    finally:
        if tmp is not None:
            tmp.cleanup()
    small, large = min(peaks), max(peaks)
    if small != large:
        print(
            f"  ratio peak {large:,} / peak {small:,} = {peaks[large] / peaks[small]:.3f}"
            "   (target <= 1.10)"
        )
    print(f"  ratio peak {large:,} / 1 GiB = {peaks[large] / gib:.3f}   (target <= 1.0)")
    print(f"  total {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
