"""The same numbers on every processor (``delaycv.common.portable``): ``dot`` by hand and by
property; the C library's functions compiled (``_libm.pyx``) against their Python twin
(``delaycv.common.libm``) bit for bit; and the metrics and the synthetic stream the same bytes
under OpenBLAS's kernels and with numpy's AVX-512 code turned off (processes of their own: both
are chosen when numpy loads). The compiled functions are required where
``DELAYCV_REQUIRE_COMPILED_LOOP`` is set (CI)."""

from __future__ import annotations

import json
import math
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

from delaycv.common import libm, portable
from delaycv.common.portable import dot
from tests.support.compiled import compiled_or_none
from tests.support.paths import REPO

COMPILED = compiled_or_none(portable.LIBM, libm, portable.STATUS, "the compiled exp, log and pow")
needs_compiled = pytest.mark.skipif(COMPILED is None, reason=portable.STATUS)


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


def same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal bit for bit as values: the same floats, the same signs of zero, NaN where NaN (a
    NaN's sign is no value: C's pow(-2, 0.5) is -nan, Python's NaN +nan)."""
    nan = np.isnan(a)
    return bool(
        np.array_equal(nan, np.isnan(b))
        and np.array_equal(a[~nan], b[~nan])
        and np.array_equal(np.signbit(a[~nan]), np.signbit(b[~nan]))
    )


SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 5e-324, 1e-320, 709.7, 710.0, -745.0, -746.0, 1e308]
SPECIAL += [math.inf, -math.inf, math.nan]


@pytest.mark.parametrize("name", ["exp", "log", "log2", "log1p"])
def test_the_twin_gives_the_c_library_values_at_its_edges(name):
    # where math raises (a pole, out of the domain, out of range), the C function's value
    got = getattr(libm, name)(np.array([0.0, -1.0, -2.0, 1000.0]))
    expected = {
        "exp": [1.0, math.exp(-1.0), math.exp(-2.0), math.inf],
        "log": [-math.inf, math.nan, math.nan, math.log(1000.0)],
        "log2": [-math.inf, math.nan, math.nan, math.log2(1000.0)],
        "log1p": [0.0, -math.inf, math.nan, math.log1p(1000.0)],
    }[name]
    assert same_values(got, np.array(expected))


def test_the_twins_power_at_its_edges():
    base = np.array([0.0, -0.0, -0.0, -8.0, 10.0, -10.0, 0.99])
    exponent = np.array([-2.0, -3.0, -2.0, 1.0 / 3.0, 400.0, 401.0, -5000.0])
    expected = [math.inf, -math.inf, math.inf, math.nan, math.inf, -math.inf, 0.99**-5000.0]
    assert same_values(libm.power(base, exponent), np.array(expected))
    assert libm.power(0.5, np.arange(3.0)).tolist() == [1.0, 0.5, 0.25]


@needs_compiled
@pytest.mark.parametrize("name", ["exp", "log", "log2", "log1p"])
def test_compiled_and_twin_agree_bit_for_bit(name):
    rng = np.random.default_rng(7)
    values = np.concatenate([
        rng.standard_normal(3000) * 300, rng.random(3000), -rng.random(284), SPECIAL,
    ])  # fmt: skip
    for x in (values, values.reshape(-1, 3)[::2]):  # (a 2-D view that is not contiguous)
        got = getattr(COMPILED, name)(x)
        assert got.shape == x.shape
        assert same_values(got, getattr(libm, name)(x))


@needs_compiled
def test_compiled_and_twin_power_agree_bit_for_bit():
    rng = np.random.default_rng(8)
    base = np.concatenate([rng.random(500) * 2, -rng.random(100) * 3, SPECIAL])
    exponent = np.concatenate([rng.standard_normal(500) * 50, np.arange(-50.0, 50.0), SPECIAL])
    grid_b, grid_e = np.meshgrid(base, exponent)
    assert same_values(COMPILED.power(grid_b, grid_e), libm.power(grid_b, grid_e))
    assert same_values(
        COMPILED.power(0.99, -np.arange(9000.0)), libm.power(0.99, -np.arange(9000.0))
    )


#: each function's values on a domain where its results are normal floats (the edges: by hand above)
DOMAINS = {
    "exp": st.floats(-700.0, 700.0),
    "log": st.floats(1e-300, 1e300),
    "log2": st.floats(1e-300, 1e300),
    "log1p": st.floats(-1.0 + 1e-15, 1e300),
    "power": st.tuples(st.floats(1e-3, 1e3), st.floats(-100.0, 100.0)),
}


@pytest.mark.parametrize("name", list(DOMAINS))
def test_values_agree_with_numpys_to_a_few_units_in_the_last_place(name):
    # numpy's own functions, vectorised (AVX-512) or not (then the C library's, the same values)
    @given(st.lists(DOMAINS[name], max_size=50))
    def check(values):
        x = np.array(values, dtype=np.float64)
        args = x.reshape(-1, 2).T if name == "power" else [x]  # (power: bases, exponents)
        ours, theirs = getattr(portable, name)(*args), getattr(np, name)(*args)
        assert np.allclose(ours, theirs, rtol=1e-14, atol=0.0)

    check()


#: Runs in a process of its own: a product through BLAS and a log1p through numpy (to tell
#: whether the process computes differently), and as digests the synthetic stream and the metrics
#: of two small evaluations (the fading estimator's sums and log loss, the cumulative one's ROC
#: AUC, with the corrected reference).
CHILD = """
import hashlib, json
import numpy as np
from river.linear_model import LogisticRegression
from river.preprocessing import StandardScaler
import delaycv
from delaycv.data.synthetic import generate_stream
def digest(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()
rng = np.random.default_rng(5)
a, b = rng.standard_normal((3, 384)), rng.standard_normal((384, 39))
stream = generate_stream(rows=400, seed=3)
metrics = []
for estimator in ({"kind": "fading", "alpha": 0.99}, {"kind": "cumulative"}):
    # (a learner whose own arithmetic is Python's math: river's GaussianNB normalises with numpy)
    model = StandardScaler() | LogisticRegression()
    result = delaycv.evaluate(stream, model, validation="bootstrap", folds=2, seed=1,
                              estimator=estimator, every=100, progress=False)
    values = result.folds.select_dtypes("float64")
    metrics.append(digest(values[[c for c in values.columns if "seconds" not in c]].to_numpy()))
print(json.dumps({
    "numpy": [digest(a @ b), digest(np.log1p(rng.random(100000)))],
    "delaycv": [digest(stream.features.to_numpy()), digest(stream.label), *metrics],
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


def _numpy_avx512() -> str:
    """The ``NPY_DISABLE_CPU_FEATURES`` that turns numpy's AVX-512 code off ("" where none runs)."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:
        return ""
    names = [n for n in __cpu_dispatch__ if n.startswith(("AVX512", "X86_V4"))]
    return " ".join(n for n in names if __cpu_features__.get(n))


def test_metrics_and_the_synthetic_stream_are_the_same_bytes_on_every_processor():
    variants = {f"OpenBLAS's {k} kernel": {"OPENBLAS_CORETYPE": k} for k in _kernels()}
    if _numpy_avx512():
        variants["numpy without AVX-512"] = {"NPY_DISABLE_CPU_FEATURES": _numpy_avx512()}
    if len(variants) < 2:
        pytest.skip("this processor runs one OpenBLAS kernel and no AVX-512")
    seen = {}
    for name, settings in variants.items():
        env = {**os.environ, **settings, "PYTHONPATH": str(REPO)}
        done = subprocess.run(
            [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, f"{name}: {done.stderr}"
        seen[name] = json.loads(done.stdout.splitlines()[-1])
    if len({tuple(s["numpy"]) for s in seen.values()}) < 2:
        pytest.skip(f"numpy computes the same in {list(variants)}: nothing to tell apart")
    assert len({tuple(s["delaycv"]) for s in seen.values()}) == 1, seen
