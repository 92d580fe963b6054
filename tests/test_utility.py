"""Utility functions against NumPy: all, any (every dtype, every axis form)
and diff (n, axis, prepend, append, bool input)."""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import arrayx as xp
from oracle import DTYPE_NAMES, assert_same

pytestmark = pytest.mark.usefixtures("lazy_and_eager")   # results alike in eager mode


def arrays(min_dims=0):
    """NumPy arrays of any dtype, NaN included (NaN is truthy)."""
    return st.sampled_from(DTYPE_NAMES).flatmap(lambda name: hnp.arrays(
        np.dtype(name), hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=0, max_side=4)))


def axes(ndim):
    """axis arguments for `ndim` dimensions: None, an int (maybe negative) or a tuple."""
    ints = st.integers(-ndim, ndim - 1) if ndim else st.nothing()
    return st.none() | ints | hnp.valid_tuple_axes(ndim)


# all, any


@pytest.mark.parametrize("fn, np_fn", [(xp.all, np.all), (xp.any, np.any)])
@given(data=st.data(), keepdims=st.booleans())
def test_all_and_any_match_numpy(fn, np_fn, data, keepdims):
    a = data.draw(arrays())
    axis = data.draw(axes(a.ndim))
    assert_same(fn(xp.asarray(a), axis=axis, keepdims=keepdims), np.asarray(np_fn(a, axis=axis, keepdims=keepdims)))


def test_all_of_nothing_is_true_and_any_false():
    assert bool(xp.all(xp.zeros((0, 2)))) is True
    assert bool(xp.any(xp.zeros((0, 2)))) is False


@pytest.mark.parametrize("fn", [xp.all, xp.any])
@pytest.mark.parametrize("call, error", [
    (lambda fn: fn(xp.ones((2, 3)), axis=2), ValueError),
    (lambda fn: fn(xp.ones((2, 3)), axis=(1, -1)), ValueError),
    (lambda fn: fn(xp.ones((2, 3)), axis=0.5), TypeError),
    (lambda fn: fn(np.ones(3)), TypeError),
    (lambda fn: fn([True, False]), TypeError),
])
def test_all_and_any_errors_name_the_function(fn, call, error):
    with pytest.raises(error, match=fn.__name__):
        call(fn)


# diff


@given(data=st.data(), n=st.integers(0, 4))
def test_diff_matches_numpy(data, n):
    a = data.draw(arrays(min_dims=1))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    with np.errstate(all="ignore"):  # integer wrap-around and inf - inf, the same in both
        expected = np.diff(a, n=n, axis=axis)
    assert_same(xp.diff(xp.asarray(a), n=n, axis=axis), expected)


@given(data=st.data(), n=st.integers(1, 3))
def test_diff_with_prepend_and_append_matches_numpy(data, n):
    a = data.draw(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
                             elements=st.floats(-100, 100)))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    edges = {}
    for where in ("prepend", "append"):
        if data.draw(st.booleans()):
            shape = list(a.shape)
            shape[axis] = data.draw(st.integers(0, 2))
            edges[where] = data.draw(hnp.arrays(np.float64, tuple(shape), elements=st.floats(-100, 100)))
    got = xp.diff(xp.asarray(a), n=n, axis=axis, **{k: xp.asarray(v) for k, v in edges.items()})
    assert_same(got, np.diff(a, n=n, axis=axis, **edges))


def test_diff_prepend_of_another_dtype_promotes():
    got = xp.diff(xp.asarray([1, 4], dtype=xp.int8), prepend=xp.asarray([0.5]))
    assert_same(got, np.array([0.5, 3.0]))


def test_diff_of_bool_is_inequality_of_neighbours():
    a = np.array([True, True, False, True])
    assert_same(xp.diff(xp.asarray(a)), np.diff(a))
    assert_same(xp.diff(xp.asarray(a), n=2), np.diff(a, n=2))


def test_diff_with_n_beyond_the_length_is_empty():
    assert_same(xp.diff(xp.asarray([1, 4, 9]), n=5), np.diff([1, 4, 9], n=5))


@pytest.mark.parametrize("call, error", [
    (lambda: xp.diff(xp.asarray(1.0)), ValueError),                                      # 0-d
    (lambda: xp.diff(xp.ones(3), n=-1), ValueError),
    (lambda: xp.diff(xp.ones(3), n=1.0), ValueError),
    (lambda: xp.diff(xp.ones(3), axis=1), ValueError),
    (lambda: xp.diff(xp.ones((2, 3)), axis=0, prepend=xp.ones((1, 2))), ValueError),   # shapes differ off the axis
    (lambda: xp.diff(xp.ones((2, 3)), append=xp.ones(3)), ValueError),                 # ranks differ
    (lambda: xp.diff(xp.ones(3), prepend=0.0), TypeError),
    (lambda: xp.diff(np.ones(3)), TypeError),
])
def test_diff_errors_name_diff(call, error):
    with pytest.raises(error, match="diff"):
        call()
