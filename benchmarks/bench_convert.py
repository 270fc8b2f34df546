"""Speed and memory of `convert` on a 1,000,000-row, 17-column Commit-Guru-like CSV.

Run: .venv/bin/python benchmarks/bench_convert.py [--rows N]

Writes its own CSV in a temporary folder, then, each in a fresh child process (so that peak
memory is measured per task): a plain ``pyarrow.csv.read_csv`` of the file (the baseline) and
``delaycv.data.convert.convert_file(..., preset="commit-guru")``. Prints wall time, peak RSS and the
ratio convert / baseline. Target (issue 2): convert <= 10 s and <= 2 GiB peak memory.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

COLUMNS = [
    "author_date_unix_timestamp", "fix_unix_timestamp", "fix", "ns", "nd", "nf", "entropy",
    "la", "ld", "lt", "ndev", "age", "nuc", "exp", "rexp", "sexp", "contains_bug",
]  # fmt: skip

CHILD = r"""
import json, resource, sys, time
task, src, dest = sys.argv[1:4]
t = time.perf_counter()
if task == "baseline":
    import pyarrow.csv
    table = pyarrow.csv.read_csv(src)
    rows = table.num_rows
else:
    from delaycv.data.convert import convert_file
    rows = convert_file(src, dest, preset="commit-guru")["rows"]
wall = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"wall": wall, "peak": peak, "rows": rows}))
"""


def make_csv(path: Path, rows: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    t = 1_300_000_000 + np.cumsum(rng.integers(0, 600, rows))
    y = (rng.random(rows) < 0.3).astype(np.int64)
    link = np.full(rows, -1, dtype=np.int64)
    fixing = np.flatnonzero(rng.random(rows) < 0.2)
    pos = np.flatnonzero(y == 1)
    for_fix = fixing[fixing > pos[0]]
    # each fixing commit points at the time of an earlier positive
    earlier = np.searchsorted(pos, for_fix) - 1
    pick = pos[(rng.random(for_fix.size) * (earlier + 1)).astype(np.int64)]
    link[for_fix] = t[pick]
    data = {
        "author_date_unix_timestamp": t,
        "fix_unix_timestamp": link,
        "fix": (rng.random(rows) < 0.3).astype(np.int64),
    }
    for name in COLUMNS[3:-1]:
        data[name] = np.round(rng.lognormal(1.0, 1.5, rows), 6)
    data["contains_bug"] = y
    pacsv.write_csv(pa.table({c: data[c] for c in COLUMNS}), path)


def run_child(task: str, src: Path, dest: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, task, str(src), str(dest)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "big.csv"
        t = time.perf_counter()
        make_csv(src, args.rows)
        size = src.stat().st_size / 2**20
        print(
            f"generated {args.rows:,} rows x 17 columns ({size:.0f} MiB) in "
            f"{time.perf_counter() - t:.1f} s"
        )
        results = {}
        for task in ("baseline", "convert"):
            runs = [run_child(task, src, Path(tmp) / "out.parquet") for _ in range(args.repeat)]
            best = min(runs, key=lambda r: r["wall"])
            best["peak"] = max(r["peak"] for r in runs)
            results[task] = best
            print(
                f"{task:9s} wall {best['wall']:6.2f} s   peak RSS {best['peak'] / 2**30:5.2f} GiB"
                f"   rows {best['rows']:,}"
            )
        base, conv = results["baseline"], results["convert"]
        print(
            f"ratio convert / pyarrow.csv.read_csv: time {conv['wall'] / base['wall']:.2f}x, "
            f"peak memory {conv['peak'] / base['peak']:.2f}x"
        )
        ok = conv["wall"] <= 10 and conv["peak"] <= 2 * 2**30
        print("target (<= 10 s, <= 2 GiB):", "met" if ok else "NOT met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
