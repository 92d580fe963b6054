"""sort and argsort against a stable reference sort: every real dtype, every
axis, 0-d and zero-size arrays, many ties (stability in both directions) and
NaNs, which sort last ascending and first descending (as if greater than +inf)."""

import functools
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import arrayx as xp
from oracle import REAL_NAMES, SPECIAL_FLOATS, assert_same
from arrayx import debug

pytestmark = pytest.mark.usefixtures("lazy_and_eager")   # results alike in eager mode


def elements(name):
    """Values of dtype `name`, mostly from a small pool so that ties and NaNs are common."""
    dtype = np.dtype(name)
    if dtype.kind == "f":
        return st.sampled_from(SPECIAL_FLOATS) | hnp.from_dtype(dtype)
    info = np.iinfo(dtype)
    return st.sampled_from([0, 1, 2, int(info.min), int(info.max)]) | hnp.from_dtype(dtype)


@st.composite
def sort_cases(draw):
    """(array, axis, descending) with at least one dimension."""
    name = draw(st.sampled_from(REAL_NAMES))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6))
    a = draw(hnp.arrays(np.dtype(name), shape, elements=elements(name)))
    axis = draw(st.integers(-a.ndim, a.ndim - 1))
    return a, axis, draw(st.booleans())


def _compare(a, b):
    """-1, 0 or 1 in the documented total order: NaN after every other value, NaNs
    equal to each other; -0 and +0 equal."""
    a_nan, b_nan = math.isnan(a), math.isnan(b)
    if a_nan or b_nan:
        return int(a_nan) - int(b_nan)
    return (a > b) - (a < b)


def reference_argsort(a, axis, descending):
    """A stable argsort along `axis` by Python's sorted (stable in both directions)."""
    def lane(values):
        key = functools.cmp_to_key(_compare)
        return sorted(range(len(values)), key=lambda i: key(values[i].item()), reverse=descending)
    return np.apply_along_axis(lane, axis, a).astype(np.int64) if a.size else np.zeros(a.shape, np.int64)


@given(case=sort_cases(), stable=st.booleans())
def test_argsort_is_a_stable_sort_in_both_directions(case, stable):
    a, axis, descending = case
    out = xp.argsort(xp.asarray(a), axis=axis, descending=descending, stable=stable)
    # stable=False may keep ties in order; arrayx always does.
    assert_same(out, reference_argsort(a, axis, descending))


@given(case=sort_cases(), stable=st.booleans())
def test_sort_matches_the_reference_order(case, stable):
    a, axis, descending = case
    out = xp.sort(xp.asarray(a), axis=axis, descending=descending, stable=stable)
    assert_same(out, np.take_along_axis(a, reference_argsort(a, axis, descending), axis))


@given(case=sort_cases())
def test_ascending_order_is_numpys(case):
    a, axis, _ = case
    assert_same(xp.sort(xp.asarray(a), axis=axis), np.sort(a, axis=axis, kind="stable"))
    assert_same(xp.argsort(xp.asarray(a), axis=axis), np.argsort(a, axis=axis, kind="stable"))


@pytest.mark.parametrize("descending", [False, True])
def test_ties_keep_their_order_in_both_directions(descending):
    x = xp.asarray([2, 1, 2, 3, 1, 2, 3], dtype=xp.int8)
    expected = [3, 6, 0, 2, 5, 1, 4] if descending else [1, 4, 0, 2, 5, 3, 6]
    assert_same(xp.argsort(x, descending=descending), np.array(expected))
    assert_same(xp.argsort(x, descending=descending, stable=False), np.array(expected))


@pytest.mark.parametrize("descending", [False, True])
def test_nans_sort_last_ascending_and_first_descending_in_their_order(descending):
    x = xp.asarray([math.nan, 1.0, -math.inf, math.nan, math.inf, 1.0])
    order = [0, 3, 4, 1, 5, 2] if descending else [2, 1, 5, 4, 0, 3]
    assert_same(xp.argsort(x, descending=descending), np.array(order))
    assert_same(xp.sort(x, descending=descending), np.asarray(x)[order])


@pytest.mark.parametrize("descending", [False, True])
def test_signed_zeros_compare_equal_so_a_stable_sort_keeps_their_order(descending):
    # -0 == +0: stable=True (the default) requires their relative order kept, and
    # sort must agree with x[argsort(x)], sign bits included.
    a = np.array([0.0, -0.0, 1.0, -0.0, -1.0])
    x = xp.asarray(a)
    order = np.asarray(xp.argsort(x, descending=descending))
    assert list(order) == ([2, 0, 1, 3, 4] if descending else [4, 0, 1, 3, 2])
    sorted_x = np.asarray(xp.sort(x, descending=descending))
    np.testing.assert_array_equal(np.signbit(sorted_x), np.signbit(a[order]))


@pytest.mark.parametrize("name", ["sort", "argsort"])
@pytest.mark.parametrize("descending", [False, True])
def test_zero_size_arrays_sort_along_any_axis(name, descending):
    a = np.zeros((3, 0, 2), np.float32)
    expected = np.zeros(a.shape, np.float32 if name == "sort" else np.int64)
    for axis in (0, 1, -1):
        assert_same(getattr(xp, name)(xp.asarray(a), axis=axis, descending=descending), expected)


@pytest.mark.lazy_only
@pytest.mark.parametrize("name", ["sort", "argsort"])
def test_sorting_is_lazy(name):
    x = xp.asarray([3, 1, 2])
    debug.reset()
    out = getattr(xp, name)(x, descending=True)
    assert debug.counters["steps_run"] == 0  # nothing ran before the force point
    assert out.shape == (3,)
    assert out.dtype == (xp.int64 if name == "argsort" else x.dtype)
    assert_same(out, np.array([3, 2, 1]) if name == "sort" else np.array([0, 2, 1]))


@pytest.mark.parametrize("name", ["sort", "argsort"])
def test_sort_errors_name_the_function(name):
    fn = getattr(xp, name)
    with pytest.raises(np.exceptions.AxisError, match=f"^{name}: axis -1 is out of bounds .* dimension 0"):
        fn(xp.asarray(1.0))
    with pytest.raises(np.exceptions.AxisError, match=f"^{name}: axis 2"):
        fn(xp.ones((2, 2)), axis=2)
    with pytest.raises(TypeError, match=f"^{name}: axis must be an integer"):
        fn(xp.ones((2, 2)), axis=None)
    with pytest.raises(TypeError, match=f"^{name}: x has dtype bool"):
        fn(xp.asarray([True, False]))
    with pytest.raises(TypeError, match=f"^{name}: x has dtype complex64"):
        fn(xp.asarray([1j], dtype=xp.complex64))
    with pytest.raises(TypeError, match=f"^{name}: x must be an arrayx array"):
        fn([3, 1, 2])
