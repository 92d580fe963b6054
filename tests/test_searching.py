"""Searching functions against NumPy: argmax, argmin, count_nonzero, nonzero and
searchsorted, over dtypes, shapes (0-d and zero-size), NaNs, ties and keepdims,
plus the errors each raises at the call."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import arrayx as xp
from oracle import DTYPE_NAMES, INT_NAMES, REAL_NAMES, pooled_elements
from arrayx import debug

pytestmark = pytest.mark.usefixtures("lazy_and_eager")   # results alike in eager mode


@st.composite
def arrays(draw, names, min_dims=0, max_dims=3, min_side=0, max_side=4):
    name = draw(st.sampled_from(names))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side))
    return draw(hnp.arrays(np.dtype(name), shape, elements=pooled_elements(name, wide_complex=True)))


def assert_index_result(x, expected):
    """arrayx array `x` has the default index dtype, the shape of `expected` and its values."""
    got = np.asarray(x)
    assert x.dtype == xp.int64
    assert got.shape == np.shape(expected)
    np.testing.assert_array_equal(got, expected)


# argmax, argmin


@st.composite
def arg_cases(draw):
    """(array, axis, keepdims) whose reduced axes are non-empty (other axes may be empty)."""
    name = draw(st.sampled_from(REAL_NAMES))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    ndim = len(shape)
    axis = draw(st.none() | st.integers(-ndim, ndim - 1)) if ndim else None
    if axis is None:
        shape = tuple(max(n, 1) for n in shape)
    else:
        shape = tuple(max(n, 1) if i == axis % ndim else n for i, n in enumerate(shape))
    a = draw(hnp.arrays(np.dtype(name), shape, elements=pooled_elements(name, wide_complex=True)))
    return a, axis, draw(st.booleans())


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@given(case=arg_cases())
def test_arg_extrema_match_numpy(name, case):
    a, axis, keepdims = case
    out = getattr(xp, name)(xp.asarray(a), axis=axis, keepdims=keepdims)
    # NumPy returns the first occurrence of the extremum, a NaN counting as one.
    assert_index_result(out, getattr(np, name)(a, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_extrema_return_the_first_of_ties_and_of_nans(name):
    x = xp.asarray([[1.0, 5.0, 5.0, -2.0, -2.0], [math.nan, 0.0, math.nan, 9.0, -9.0]])
    expected = {"argmax": [1, 0], "argmin": [3, 0]}[name]
    assert_index_result(getattr(xp, name)(x, axis=1), expected)
    assert_index_result(getattr(xp, name)(x, axis=-1, keepdims=True), np.reshape(expected, (2, 1)))
    assert_index_result(getattr(xp, name)(x), {"argmax": 5, "argmin": 5}[name])


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_extrema_over_empty_axes_but_nonempty_lanes(name):
    x = xp.zeros((0, 3))
    assert_index_result(getattr(xp, name)(x, axis=1), np.zeros((0,), np.int64))
    assert_index_result(getattr(xp, name)(xp.asarray(7), keepdims=True), 0)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_extrema_errors_name_the_function(name):
    fn = getattr(xp, name)
    with pytest.raises(ValueError, match=f"^{name}: .*empty"):
        fn(xp.zeros((2, 0)))
    with pytest.raises(ValueError, match=f"^{name}: .*empty"):
        fn(xp.zeros((2, 0)), axis=1)
    with pytest.raises(TypeError, match=f"^{name}: x has dtype bool"):
        fn(xp.asarray([True, False]))
    with pytest.raises(TypeError, match=f"^{name}: x has dtype complex128"):
        fn(xp.asarray([1j]))
    with pytest.raises(TypeError, match=f"^{name}: axis must be an integer"):
        fn(xp.ones((2, 2)), axis=(0, 1))
    with pytest.raises(np.exceptions.AxisError, match=f"^{name}: axis 2"):
        fn(xp.ones((2, 2)), axis=2)
    with pytest.raises(TypeError, match=f"^{name}: x must be an arrayx array"):
        fn([1, 2])


# count_nonzero


@st.composite
def count_cases(draw):
    a = draw(arrays(DTYPE_NAMES))
    ndim = a.ndim
    ints = st.integers(-ndim, ndim - 1) if ndim else st.nothing()
    axis = draw(st.none() | ints | hnp.valid_tuple_axes(ndim))
    return a, axis, draw(st.booleans())


@given(case=count_cases())
def test_count_nonzero_matches_numpy(case):
    a, axis, keepdims = case
    out = xp.count_nonzero(xp.asarray(a), axis=axis, keepdims=keepdims)
    # NaN and complex values with one non-zero component are non-zero.
    assert_index_result(out, np.count_nonzero(a, axis=axis, keepdims=keepdims))


def test_count_nonzero_counts_complex_components_nans_and_signed_zeros():
    x = xp.asarray([0j, -0.0 + 0j, complex(0, -0.0), 1j, complex(math.nan, 0), 0j])
    assert_index_result(xp.count_nonzero(x), 2)
    y = xp.asarray([[0.0, -0.0, math.nan], [True, 0, -math.inf]])
    assert_index_result(xp.count_nonzero(y, axis=0), [1, 0, 2])
    assert_index_result(xp.count_nonzero(y, axis=(0, 1), keepdims=True), [[3]])


def test_count_nonzero_errors_name_the_function():
    with pytest.raises(np.exceptions.AxisError, match="^count_nonzero: axis -3"):
        xp.count_nonzero(xp.ones((2, 2)), axis=-3)
    with pytest.raises(ValueError, match="^count_nonzero: repeated axis"):
        xp.count_nonzero(xp.ones((2, 2)), axis=(0, -2))
    with pytest.raises(TypeError, match="^count_nonzero: x must be an arrayx array"):
        xp.count_nonzero(np.ones(2))


# nonzero


@given(a=arrays(DTYPE_NAMES, min_dims=1))
def test_nonzero_matches_numpy(a):
    out = xp.nonzero(xp.asarray(a))
    expected = np.nonzero(a)
    assert type(out) is tuple and len(out) == a.ndim
    for got, want in zip(out, expected):
        assert_index_result(got, want)


def test_nonzero_is_a_force_point_returning_realized_arrays():
    x = xp.asarray([[0, 3], [4, 0]]) * 2
    debug.reset()
    rows, cols = xp.nonzero(x)
    assert debug.counters["realizations"] >= 1
    realized = debug.counters["realizations"]
    assert_index_result(rows, [0, 1])
    assert_index_result(cols, [1, 0])
    assert debug.counters["realizations"] == realized  # the results needed no further work


@pytest.mark.parametrize("value", [0, 1, True, 0.0])
def test_nonzero_of_zero_dimensional_arrays_raises(value):
    with pytest.raises(ValueError, match="^nonzero: x must have one or more dimensions"):
        xp.nonzero(xp.asarray(value))


def test_nonzero_rejects_non_arrays():
    with pytest.raises(TypeError, match="^nonzero: x must be an arrayx array"):
        xp.nonzero([1, 0])


# searchsorted


def numpy_sorted(a):
    """NumPy's ascending order: NaNs last, which is also the order searchsorted assumes."""
    return np.sort(a, kind="stable")


@st.composite
def searchsorted_cases(draw):
    name = draw(st.sampled_from(REAL_NAMES))
    x1 = draw(hnp.arrays(np.dtype(name), st.integers(0, 8), elements=pooled_elements(name)))
    x2 = draw(hnp.arrays(np.dtype(name), hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3),
                         elements=st.sampled_from(list(x1)) | pooled_elements(name) if x1.size else pooled_elements(name)))
    return x1, x2, draw(st.sampled_from(["left", "right"])), draw(st.booleans())


@given(case=searchsorted_cases(), sorter_name=st.sampled_from(INT_NAMES))
def test_searchsorted_matches_numpy(case, sorter_name):
    x1, x2, side, use_sorter = case
    if use_sorter:
        order = np.argsort(x1, kind="stable")
        out = xp.searchsorted(xp.asarray(x1), xp.asarray(x2), side=side, sorter=xp.asarray(order.astype(sorter_name)))
        expected = np.searchsorted(x1, x2, side=side, sorter=order)
    else:
        x1 = numpy_sorted(x1)
        out = xp.searchsorted(xp.asarray(x1), xp.asarray(x2), side=side)
        expected = np.searchsorted(x1, x2, side=side)
    assert_index_result(out, expected)


def less(a, b):
    """a < b in the order sort uses: NaN after every other value (and equal to NaN)."""
    if math.isnan(a):
        return False
    return math.isnan(b) or a < b


@given(case=searchsorted_cases())
def test_searchsorted_meets_the_index_condition(case):
    # The standard's condition, in the order of `sort` (NaNs last): left gives
    # x1[i-1] < v <= x1[i], right gives x1[i-1] <= v < x1[i].
    x1, x2, side, _ = case
    x1 = numpy_sorted(x1)
    out = np.asarray(xp.searchsorted(xp.asarray(x1), xp.asarray(x2), side=side))
    values = [float(v) if x1.dtype.kind == "f" else int(v) for v in x1]
    m = len(values)
    for i, v in zip(out.reshape(-1).tolist(), x2.reshape(-1).tolist()):
        assert 0 <= i <= m
        if side == "left":
            assert i == 0 or less(values[i - 1], v)
            assert i == m or not less(values[i], v)
        else:
            assert i == 0 or not less(v, values[i - 1])
            assert i == m or less(v, values[i])


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_boundaries(side):
    x1 = xp.asarray([1.0, 2.0, 2.0, 3.0, math.nan])
    x2 = xp.asarray([0.0, 2.0, 3.5, math.inf, math.nan, -0.0])
    expected = {"left": [0, 1, 4, 4, 4, 0], "right": [0, 3, 4, 4, 5, 0]}[side]
    assert_index_result(xp.searchsorted(x1, x2, side=side), expected)
    assert_index_result(xp.searchsorted(xp.zeros((0,)), x2, side=side), np.zeros(6, np.int64))


@pytest.mark.parametrize("x1_name", REAL_NAMES)
@pytest.mark.parametrize("scalar", [0, 3, 8, 2.5, -0.0, -1.5])
def test_searchsorted_takes_python_scalars(x1_name, scalar):
    a = np.array([0, 1, 3, 3, 7], dtype=x1_name)
    for side in ("left", "right"):
        out = xp.searchsorted(xp.asarray(a), scalar, side=side)
        # The result is 0-d, as for a 0-d x2.
        assert_index_result(out, np.searchsorted(a, scalar, side=side))
    # A NumPy scalar acts as the Python scalar it holds.
    numpy_scalar = np.float64(scalar) if isinstance(scalar, float) else np.int64(scalar)
    assert_index_result(xp.searchsorted(xp.asarray(a), numpy_scalar), np.searchsorted(a, scalar))


def test_searchsorted_promotes_mixed_dtypes():
    x1 = xp.asarray([1, 2, 200], dtype=xp.uint8)
    x2 = xp.asarray([-1, 2, 3, 127], dtype=xp.int8)
    assert_index_result(xp.searchsorted(x1, x2), [0, 1, 2, 2])
    f = xp.asarray([0.5, 1.5, 2.5], dtype=xp.float32)
    assert_index_result(xp.searchsorted(f, xp.asarray([1, 2, 3]), side="right"), [1, 2, 3])


@pytest.mark.lazy_only
def test_searchsorted_with_sorter_is_lazy_and_gathers_x1():
    x1 = xp.asarray([3.0, 1.0, 2.0])
    debug.reset()
    out = xp.searchsorted(x1, xp.asarray([2.0, 0.0]), sorter=xp.argsort(x1))
    assert debug.counters["steps_run"] == 0  # nothing ran before the force point
    assert "take" in xp.graph(out)
    assert_index_result(out, [1, 0])


def test_searchsorted_errors_name_the_function():
    x1 = xp.asarray([1.0, 2.0])
    with pytest.raises(ValueError, match=r"^searchsorted: x1 must be one-dimensional, got shape \(2, 1\)"):
        xp.searchsorted(xp.ones((2, 1)), x1)
    with pytest.raises(ValueError, match="^searchsorted: x1 must be one-dimensional"):
        xp.searchsorted(xp.asarray(1.0), x1)
    with pytest.raises(ValueError, match="^searchsorted: side must be 'left' or 'right'"):
        xp.searchsorted(x1, x1, side="middle")
    with pytest.raises(TypeError, match="^searchsorted: x1 has dtype bool"):
        xp.searchsorted(xp.asarray([False, True]), x1)
    with pytest.raises(TypeError, match="^searchsorted: x2 has dtype complex128"):
        xp.searchsorted(x1, xp.asarray([1j]))
    with pytest.raises(TypeError, match="^searchsorted: x2 must be an arrayx array, int or float"):
        xp.searchsorted(x1, 1j)
    with pytest.raises(TypeError, match="^searchsorted: x2 must be an arrayx array, int or float"):
        xp.searchsorted(x1, [1.0])
    with pytest.raises(TypeError, match="^searchsorted: x1 must be an arrayx array"):
        xp.searchsorted([1.0, 2.0], x1)
    with pytest.raises(TypeError, match="^searchsorted: sorter has dtype float64"):
        xp.searchsorted(x1, x1, sorter=x1)
    with pytest.raises(ValueError, match="^searchsorted: sorter must have the shape of x1"):
        xp.searchsorted(x1, x1, sorter=xp.asarray([0, 1, 2]))
    with pytest.raises(TypeError, match="^searchsorted: sorter must be an arrayx array"):
        xp.searchsorted(x1, x1, sorter=[0, 1])
    with pytest.raises(OverflowError, match="^searchsorted: Python int 300"):
        xp.searchsorted(xp.asarray([1, 2], dtype=xp.uint8), 300)
