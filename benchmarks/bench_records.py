"""Building river x dicts: ``Stream.records`` against pandas' ``to_dict("records")`` on the same block.

The engine builds its x dicts once per chunk with :meth:`delaycv.data.stream.Stream.records` (shared by
all folds), so their cost is paid once per instance. Baseline in the same run: pandas'
``DataFrame.to_dict(orient="records")`` on the same 1,000-row slices (which keeps NaN, so it does
less than ``records`` on a stream with missing values). Printed: microseconds per row of each, best
of 20 slices, and the ratio; a second stream with 10 % missing values shows the cost of leaving them
out. Target: ``records`` no slower than the pandas baseline (ratio <= 1.0) without missing values.

    python benchmarks/bench_records.py
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from delaycv.data.stream import Stream

ROWS, FEATURES, SLICE = 20_000, 15, 1000


def stream(missing: float) -> Stream:
    rng = np.random.default_rng(0)
    values = rng.random((ROWS, FEATURES))
    values[rng.random(values.shape) < missing] = np.nan
    features = pd.DataFrame(values, columns=[f"f{i}" for i in range(FEATURES)])
    return Stream(time=np.arange(ROWS), label=np.zeros(ROWS), label_time=None, features=features)


def best_per_row(fn) -> float:
    times = []
    for i in range(ROWS // SLICE):
        start = time.perf_counter()
        fn(i * SLICE, (i + 1) * SLICE)
        times.append(time.perf_counter() - start)
    return min(times) / SLICE


def main() -> int:
    ok = True
    for missing in (0.0, 0.1):
        s = stream(missing)
        ours = best_per_row(s.records)
        base = best_per_row(lambda a, b, f=s.features: f.iloc[a:b].to_dict(orient="records"))
        ratio = ours / base
        print(
            f"missing {missing:.0%}: records {ours * 1e6:.2f} us/row, "
            f"pandas to_dict {base * 1e6:.2f} us/row, ratio {ratio:.2f}"
        )
        if missing == 0.0:
            ok = ratio <= 1.0
    print(f"target records <= pandas without missing values: {'ok' if ok else 'EXCEEDED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
