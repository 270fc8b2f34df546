"""Products summed in one order on every processor: ``delaycv.common.fixed_order.dot`` by hand and
by property, and the metrics the same bit for bit under OpenBLAS's kernels (processes of their own,
each with ``OPENBLAS_CORETYPE`` set: the kernel is chosen when numpy loads)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from delaycv.common.fixed_order import dot
from tests.support.paths import REPO


def in_order(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` (a: (m, k), b: (k, n)) with each column's products added from the first on."""
    out = np.zeros((a.shape[0], b.shape[1]))
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            total = 0.0
            for k in range(b.shape[0]):
                total += a[i, k] * b[k, j]
            out[i, j] = total
    return out


def test_a_matrix_by_hand():
    # 0.1 + 0.2 + 0.3 from the left is 0.6000000000000001; from the right 0.6
    a = np.array([[0.1, 0.2, 0.3]])
    b = np.ones((3, 1))
    assert dot(a, b)[0, 0] == (0.1 + 0.2) + 0.3 == 0.6000000000000001
    assert dot(np.array([0.3, 0.2, 0.1]), np.ones((3, 1)))[0] == 0.6


def test_vectors_give_a_float_and_matrices_keep_their_leading_axes():
    assert dot([1.0, 2.0], [3.0, 4.0]) == 11.0
    assert type(dot([1.0, 2.0], [3.0, 4.0])) is float
    assert dot(np.ones((2, 5, 3)), np.ones((3, 4))).shape == (2, 5, 4)
    assert dot(np.ones((2, 3)), np.ones(3)).tolist() == [3.0, 3.0]


def test_shapes_that_do_not_fit_are_refused():
    with pytest.raises(ValueError, match="a's last axis has 2 values, b's first 3"):
        dot(np.ones(2), np.ones((3, 2)))


finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=64)


@given(
    st.integers(1, 4).flatmap(
        lambda m: st.integers(1, 40).flatmap(
            lambda k: st.tuples(
                hnp.arrays(np.float64, (m, k), elements=finite),
                hnp.arrays(np.float64, (k, 3), elements=finite),
            )
        )
    )
)
def test_a_matrix_adds_each_column_in_order_and_agrees_with_matmul_to_rounding(ab):
    a, b = ab
    got = dot(a, b)
    assert np.array_equal(got, in_order(a, b))
    scale = np.abs(a) @ np.abs(b)
    assert np.all(np.abs(got - a @ b) <= 1e-12 * scale + 1e-300)


#: Runs in a process of its own: the kernel OpenBLAS chose, a product through BLAS, and the
#: metrics of two small evaluations (the fading estimator's sums and the cumulative one's ROC AUC,
#: with the corrected reference), as digests.
CHILD = """
import hashlib, json
import numpy as np
from river.naive_bayes import GaussianNB
import delaycv
from delaycv.data.synthetic import generate_stream
try:
    import threadpoolctl
    blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
except ImportError:
    blas = []
rng = np.random.default_rng(5)
a, b = rng.standard_normal((3, 384)), rng.standard_normal((384, 39))
stream = generate_stream(rows=400, seed=3)
digests = []
for estimator in ({"kind": "fading", "alpha": 0.99}, {"kind": "cumulative"}):
    result = delaycv.evaluate(stream, GaussianNB(), validation="bootstrap", folds=2, seed=1,
                              estimator=estimator, every=100, progress=False)
    values = result.folds.select_dtypes("float64")
    values = values[[c for c in values.columns if "seconds" not in c]]
    digests.append(hashlib.sha256(np.ascontiguousarray(values.to_numpy()).tobytes()).hexdigest())
print(json.dumps({
    "blas": [(i["internal_api"], i.get("architecture")) for i in blas],
    "product": hashlib.sha256((a @ b).tobytes()).hexdigest(),
    "metrics": digests,
}))
"""


def _kernels() -> list[str]:
    """OpenBLAS kernels this processor can run (x86-64 Linux): the oldest, and newer ones by the
    processor's flags."""
    if platform.machine() != "x86_64" or not Path("/proc/cpuinfo").is_file():
        return []
    flags = set()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            flags = set(line.partition(":")[2].split())
            break
    kernels = ["Prescott"]
    if {"avx2", "fma"} <= flags:
        kernels.append("Haswell")
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd"} <= flags:
        kernels.append("SkylakeX")
    return kernels


def test_metrics_are_the_same_bit_for_bit_under_every_openblas_kernel():
    kernels = _kernels()
    if len(kernels) < 2:
        pytest.skip("this processor runs one OpenBLAS kernel of those tried")
    seen = {}
    for kernel in kernels:
        env = {**os.environ, "OPENBLAS_CORETYPE": kernel, "PYTHONPATH": str(REPO)}
        done = subprocess.run(
            [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        seen[kernel] = json.loads(done.stdout.splitlines()[-1])
    blas = {tuple(map(tuple, s["blas"])) for s in seen.values()}
    if len(blas) < len(kernels) or any(
        not s["blas"] or s["blas"][0][0] != "openblas" for s in seen.values()
    ):
        pytest.skip(f"numpy's BLAS is not OpenBLAS, or ignores OPENBLAS_CORETYPE: {seen}")
    if len({s["product"] for s in seen.values()}) < 2:
        pytest.skip("these kernels give the same products: nothing to tell apart")
    assert len({tuple(s["metrics"]) for s in seen.values()}) == 1, seen
