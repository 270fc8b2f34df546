"""The running sums of the fading estimator's terms (``delaycv.metrics.fading_sums``): by hand on a
small layout, and the compiled loop (``_fading_sums.pyx``) against its numpy twin bit for bit,
on the estimator's own layout and on any batch (hypothesis). The compiled loop is required where
``DELAYCV_REQUIRE_COMPILED_LOOP`` is set (CI)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from delaycv.metrics import fading_sums, states
from tests.support.compiled import compiled_or_none

COMPILED = compiled_or_none(
    states.SUMS, fading_sums, states.SUMS_STATUS, "the compiled running sums"
)
needs_compiled = pytest.mark.skipif(COMPILED is None, reason=states.SUMS_STATUS)

#: two codes, four columns: columns 0-1 faded by sequence 0, column 2 by sequence 1 (a B value),
#: column 3 not faded; columns 0, 1 and 3 weighted
SMALL = fading_sums.Layout(
    np.array([[1.0, 2.0, 0.0, 1.0], [0.5, 0.0, 0.0, 3.0]]),
    seq_width=[2, 1],
    b_at=[2],
    weighted_at=[0, 1, 3],
)


@pytest.mark.parametrize(
    "sums",
    [fading_sums, pytest.param(COMPILED, marks=needs_compiled)],
    ids=["numpy", "compiled"],
)
def test_running_sums_by_hand(sums):
    code = np.array([0, 1, 0])
    vb = np.array([[10.0], [20.0], [30.0]])
    w = np.array([2.0, 1.0, 0.5])
    scale = np.array([[1.0, 0.5, 0.25], [2.0, 4.0, 8.0]])
    got = sums.running_sums(SMALL, code, vb, w, False, scale, np.array([0, 1, 1, 3]))
    first = [1.0 * 2.0 * 1.0, 2.0 * 2.0 * 1.0, 10.0 * 2.0, 1.0 * 2.0]
    second = [0.5 * 0.5, 0.0, 20.0 * 4.0, 3.0]
    third = [1.0 * 0.5 * 0.25, 2.0 * 0.5 * 0.25, 30.0 * 8.0, 0.5]
    assert got.tolist() == [
        [0.0] * 4,
        first,
        first,
        [a + b + c for a, b, c in zip(first, second, third, strict=True)],
    ]
    # unit weights: w is not read
    unit = sums.running_sums(SMALL, code, vb, None, True, scale, np.array([1]))
    assert unit.tolist() == [[1.0, 2.0, 20.0, 1.0]]


values = st.floats(-1e3, 1e3, allow_nan=False, width=64) | st.sampled_from([0.0, -0.0, 1e-300])


@st.composite
def batches(draw):
    """A batch on the fading estimator's own layout: codes, B values, weights, factors and
    non-decreasing bounds (some at 0, some repeated, across blocks of the numpy loop)."""
    layout = states._LAYOUT
    m = draw(st.integers(0, 2500))
    codes = layout.lut.shape[0]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    code = rng.integers(0, codes, m)
    vb = rng.normal(size=(m, layout.b_at.size)) * draw(st.sampled_from([1.0, 1e-8, 1e8]))
    w = rng.exponential(size=m)
    scale = np.exp(rng.normal(size=(len(layout.seq_width), m)) * 50)
    if m:  # a few drawn values too (signed zeros, tiny, large)
        at = draw(st.lists(st.integers(0, m - 1), max_size=5))
        for i in at:
            vb[i, 0] = draw(values)
            w[i] = abs(draw(values))
    n_bounds = draw(st.integers(1, 12))
    bounds = np.sort(rng.integers(0, m + 1, n_bounds))
    if draw(st.booleans()):
        bounds[-1] = m
    return code, vb, w, scale, bounds


@needs_compiled
@settings(max_examples=60, deadline=None)
@given(batches(), st.booleans())
def test_the_compiled_sums_are_the_numpy_ones_bit_for_bit(batch, unit):
    code, vb, w, scale, bounds = batch
    args = (states._LAYOUT, code, vb, None if unit else w, unit, scale, bounds)
    want = fading_sums.running_sums(*args)
    got = COMPILED.running_sums(*args)
    assert got.shape == want.shape
    assert np.array_equal(got.view(np.uint64), want.view(np.uint64))


@needs_compiled
@given(hnp.arrays(np.float64, (3, 4), elements=values))
def test_the_compiled_sums_keep_signed_zeros_and_products(rows):
    """Any table values: the weighted products, the B values and the factors as numpy gives them."""
    layout = fading_sums.Layout(rows[:2], seq_width=[2, 1], b_at=[2], weighted_at=[0, 1, 3])
    code = np.array([0, 1, 1])
    vb = rows[2:, :3].T.copy()
    w, scale = np.abs(rows[2, :3]), np.abs(rows[:2, :3]) + 0.5
    for unit in (False, True):
        args = (layout, code, vb, w, unit, scale, np.array([0, 2, 3]))
        want = fading_sums.running_sums(*args)
        got = COMPILED.running_sums(*args)
        assert np.array_equal(got.view(np.uint64), want.view(np.uint64))


@needs_compiled
def test_a_code_outside_the_table_is_refused():
    with pytest.raises(IndexError, match="code 2 of evaluation 1"):
        COMPILED.running_sums(
            SMALL, np.array([0, 2]), np.zeros((2, 1)), None, True, np.ones((2, 2)), np.array([2])
        )
