"""Statistical functions against NumPy: sum, prod, mean, var, std, max, min,
cumulative_sum, cumulative_prod, over every axis form, with keepdims."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import arrayx as xp
from oracle import INT_NAMES, REAL_NAMES

pytestmark = pytest.mark.usefixtures("lazy_and_eager")   # results alike in eager mode

FLOAT_NAMES = ["float32", "float64"]
SUM_NAMES = ["bool"] + REAL_NAMES + ["complex64", "complex128"]


# Tolerances: the executor picks the order in which it adds or multiplies (NumPy
# sums pairwise), so floating results are compared within what any order allows.


def eps(a):
    """Machine epsilon of a's (real) precision; 0 for integers and bool, which are exact."""
    return float(np.finfo(a.dtype).eps) if a.dtype.kind in "fc" else 0.0


def sum_atol(a):
    """Summing n terms in any order errs by at most (n - 1) * eps * sum(|x|)."""
    return a.size * eps(a) * float(np.sum(np.abs(a)))


def prod_rtol(a):
    """Multiplying n factors in any order errs by at most about n * eps, relatively."""
    return a.size * eps(a)


def elements(name, bound):
    """Finite values of dtype `name` within +-bound (integers: their full range)."""
    dtype = np.dtype(name)
    if dtype.kind == "f":
        return hnp.from_dtype(dtype, min_value=-bound, max_value=bound, allow_nan=False, allow_infinity=False)
    if dtype.kind == "c":
        return st.complex_numbers(max_magnitude=bound, width=dtype.itemsize * 8)
    return hnp.from_dtype(dtype)


@st.composite
def arrays_and_axes(draw, names, bound=100.0, min_side=0):
    """(NumPy array, axis, keepdims) with axis None, an int (maybe negative) or a tuple."""
    name = draw(st.sampled_from(names))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=min_side, max_side=4))
    a = draw(hnp.arrays(np.dtype(name), shape, elements=elements(name, bound)))
    ndim = len(shape)
    ints = st.integers(-ndim, ndim - 1) if ndim else st.nothing()
    axis = draw(st.none() | ints | hnp.valid_tuple_axes(ndim))
    return a, axis, draw(st.booleans())


def accumulator(name):
    """The dtype sum and prod use by default: the standard's rule."""
    if name == "bool" or name.startswith("int"):
        return "int64"
    if name.startswith("uint"):
        return "uint64"
    return name


def assert_close(x, expected, rtol=0.0, atol=0.0):
    """arrayx array `x` has the dtype and shape of NumPy's `expected` and its values within tolerance."""
    got = np.asarray(x)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


def numpy_quietly(fn, *args, **kwargs):
    """NumPy's result, without its warnings for empty or degenerate reductions."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(fn(*args, **kwargs))


# sum, prod


@given(case=arrays_and_axes(SUM_NAMES))
def test_sum_matches_numpy(case):
    a, axis, keepdims = case
    expected = np.asarray(np.sum(a, axis=axis, keepdims=keepdims, dtype=accumulator(a.dtype.name)))
    assert_close(xp.sum(xp.asarray(a), axis=axis, keepdims=keepdims), expected, atol=sum_atol(a))


@given(case=arrays_and_axes(SUM_NAMES, bound=2.0))
def test_prod_matches_numpy(case):
    # |x| <= 2 over at most 64 elements stays finite in float32.
    a, axis, keepdims = case
    expected = np.asarray(np.prod(a, axis=axis, keepdims=keepdims, dtype=accumulator(a.dtype.name)))
    assert_close(xp.prod(xp.asarray(a), axis=axis, keepdims=keepdims), expected, rtol=prod_rtol(a))


@pytest.mark.parametrize("fn", [xp.sum, xp.prod])
@pytest.mark.parametrize("name", SUM_NAMES)
def test_sum_and_prod_default_dtypes(fn, name):
    assert str(fn(xp.ones((2, 3), dtype=getattr(xp, name))).dtype) == accumulator(name)


@pytest.mark.parametrize("fn, np_fn", [(xp.sum, np.sum), (xp.prod, np.prod)])
@pytest.mark.parametrize("name, dtype", [("int8", "float32"), ("uint8", "int16"), ("float64", "float32"),
                                         ("int32", "complex128"), ("bool", "uint8")])
def test_sum_and_prod_dtype_argument(fn, np_fn, name, dtype):
    a = (np.arange(6) % 4).astype(name).reshape(2, 3)
    assert_close(fn(xp.asarray(a), axis=1, dtype=getattr(xp, dtype)), np_fn(a, axis=1, dtype=dtype))


def test_sum_of_nothing_is_zero_and_prod_one():
    assert float(xp.sum(xp.zeros((0, 3)))) == 0.0
    assert float(xp.prod(xp.zeros((0, 3)))) == 1.0


# mean, var, std


@given(case=arrays_and_axes(FLOAT_NAMES + ["complex64", "complex128"]))
def test_mean_matches_numpy(case):
    a, axis, keepdims = case
    expected = numpy_quietly(np.mean, a, axis=axis, keepdims=keepdims)
    # The sum's error, then one rounding for the division; zero elements give NaN in both.
    assert_close(xp.mean(xp.asarray(a), axis=axis, keepdims=keepdims), expected, rtol=2 * eps(a), atol=sum_atol(a))


def var_atol(a):
    """Error bound of a variance of elements within +-10, in any order of operations.

    Each squared deviation (at most 20**2) is off by the mean's error and its own
    rounding, their sum adds sum_atol, and the divisor N - correction is at least 0.5.
    """
    return 2 * a.size * (a.size + 1) * eps(a) * 20**2


@pytest.mark.parametrize("fn, np_fn, atol", [
    (xp.var, np.var, var_atol),
    (xp.std, np.std, lambda a: math.sqrt(var_atol(a))),  # |sqrt(u) - sqrt(v)| <= sqrt(|u - v|)
])
@given(case=arrays_and_axes(FLOAT_NAMES, bound=10.0), correction=st.sampled_from([0, 1, 0.5, 2.0, 3, 7.5]))
def test_var_and_std_match_numpy_and_the_standard(fn, np_fn, atol, case, correction):
    a, axis, keepdims = case
    expected = np.asarray(numpy_quietly(np_fn, a, axis=axis, keepdims=keepdims, ddof=correction))
    n = a.size // max(expected.size, 1) if a.size else 0  # elements reduced into each result
    if n - correction <= 0:
        expected = np.full_like(expected, np.nan)  # the standard's special case; NumPy gives inf or NaN
    got = fn(xp.asarray(a), axis=axis, keepdims=keepdims, correction=correction)
    assert_close(got, expected, atol=atol(a))


@pytest.mark.parametrize("fn, np_fn", [(xp.var, np.var), (xp.std, np.std)])
@pytest.mark.parametrize("correction", [2, 2.5, 3, 100.0])
def test_var_and_std_with_correction_at_least_n_are_nan(fn, np_fn, correction):
    # The standard: NaN where N - correction <= 0. NumPy and array-api-strict
    # divide by max(N - correction, 0) and give inf here; arrayx follows the standard.
    a = np.asarray([[1.0, 3.0], [2.0, 2.0]], dtype=np.float32)
    got = fn(xp.asarray(a), axis=1, correction=correction)
    assert got.dtype == xp.float32 and np.isnan(np.asarray(got)).all()
    assert np.isinf(numpy_quietly(np_fn, a[0], ddof=correction))  # what the standard overrides
    assert_close(fn(xp.asarray(a), axis=1, correction=1.5), numpy_quietly(np_fn, a, axis=1, ddof=1.5))


@pytest.mark.parametrize("fn, np_fn", [(xp.mean, np.mean), (xp.var, np.var), (xp.std, np.std)])
@given(case=arrays_and_axes(["bool"] + INT_NAMES))
def test_mean_var_and_std_compute_integer_and_bool_arrays_as_float64(fn, np_fn, case):
    """As in NumPy, JAX and PyTorch: float64 results, NumPy's values for the array cast to float64."""
    a, axis, keepdims = case
    if a.dtype.kind != "b":
        a = (a % 11).astype(a.dtype)   # within the +-10 that var_atol assumes
    f = a.astype(np.float64)
    expected = numpy_quietly(np_fn, f, axis=axis, keepdims=keepdims)
    assert_close(fn(xp.asarray(a), axis=axis, keepdims=keepdims), expected, rtol=2 * eps(f),
                 atol=var_atol(f) + sum_atol(f))


# max, min


@pytest.mark.parametrize("fn, np_fn", [(xp.max, np.max), (xp.min, np.min)])
@given(case=arrays_and_axes(REAL_NAMES, min_side=1))
def test_max_and_min_match_numpy(fn, np_fn, case):
    a, axis, keepdims = case
    assert_close(fn(xp.asarray(a), axis=axis, keepdims=keepdims), np.asarray(np_fn(a, axis=axis, keepdims=keepdims)))


@pytest.mark.parametrize("fn", [xp.max, xp.min])
def test_max_and_min_propagate_nan(fn):
    assert np.isnan(float(fn(xp.asarray([1.0, np.nan, -1.0]))))


@pytest.mark.parametrize("fn", [xp.max, xp.min])
def test_max_and_min_over_a_nonempty_axis_of_an_empty_array(fn):
    assert fn(xp.zeros((0, 3)), axis=1).shape == (0,)


@pytest.mark.parametrize("fn", [xp.max, xp.min])
@pytest.mark.parametrize("shape, axis", [((0,), None), ((0, 3), 0), ((2, 0), (0, 1)), ((3, 0), -1)])
def test_max_and_min_of_zero_elements_raise(fn, shape, axis):
    with pytest.raises(ValueError, match=fn.__name__):
        fn(xp.zeros(shape), axis=axis)


# cumulative_sum, cumulative_prod

CUMULATIVE = [(xp.cumulative_sum, np.cumsum, 0), (xp.cumulative_prod, np.cumprod, 1)]


@pytest.mark.parametrize("fn, np_fn, identity", CUMULATIVE)
@given(data=st.data(), name=st.sampled_from(SUM_NAMES), include_initial=st.booleans())
def test_cumulative_functions_match_numpy(fn, np_fn, identity, data, name, include_initial):
    a = data.draw(hnp.arrays(np.dtype(name), hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4),
                             elements=elements(name, 2.0)))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1)) if a.ndim > 1 else data.draw(st.sampled_from([None, 0, -1]))
    expected = np_fn(a, axis=axis or 0, dtype=accumulator(name))
    if include_initial:
        pad_shape = list(a.shape)
        pad_shape[axis or 0] = 1
        expected = np.concatenate([np.full(pad_shape, identity, dtype=expected.dtype), expected], axis=axis or 0)
    got = fn(xp.asarray(a), axis=axis, include_initial=include_initial)
    # Running sums and products see the same orders of operations as the total ones.
    if fn is xp.cumulative_sum:
        assert_close(got, expected, atol=sum_atol(a))
    else:
        assert_close(got, expected, rtol=prod_rtol(a))


@pytest.mark.parametrize("fn, np_fn, identity", CUMULATIVE)
def test_cumulative_functions_dtype_argument(fn, np_fn, identity):
    a = np.array([1, 2, 3], dtype=np.int8)
    assert_close(fn(xp.asarray(a), dtype=xp.float32), np_fn(a, dtype=np.float32))


@pytest.mark.parametrize("fn", [xp.cumulative_sum, xp.cumulative_prod])
@pytest.mark.parametrize("call, error", [
    (lambda fn: fn(xp.ones((2, 3))), ValueError),                 # axis is required for ndim > 1
    (lambda fn: fn(xp.asarray(1.0)), ValueError),                 # 0-d
    (lambda fn: fn(xp.ones(3), axis=1), ValueError),
    (lambda fn: fn(xp.ones(3), axis=0.0), TypeError),
    (lambda fn: fn(xp.asarray([1j]), dtype=xp.float64), TypeError),
    (lambda fn: fn(np.ones(3)), TypeError),
])
def test_cumulative_errors_name_the_function(fn, call, error):
    with pytest.raises(error, match=fn.__name__):
        call(fn)


# errors shared by the reductions

REDUCTIONS = [xp.sum, xp.prod, xp.mean, xp.var, xp.std, xp.max, xp.min]


@pytest.mark.parametrize("fn", REDUCTIONS)
@pytest.mark.parametrize("axis, error", [
    (2, ValueError),          # out of bounds (AxisError is a ValueError)
    (-3, ValueError),
    ((0, -2), ValueError),    # the same axis twice
    (1.0, TypeError),
])
def test_reductions_reject_bad_axes(fn, axis, error):
    with pytest.raises(error, match=fn.__name__):
        fn(xp.ones((2, 3)), axis=axis)


@pytest.mark.parametrize("fn", REDUCTIONS)
def test_reductions_reject_non_arrays(fn):
    with pytest.raises(TypeError, match=fn.__name__):
        fn(np.ones(3))


@pytest.mark.parametrize("fn, name", [
    (xp.var, "complex64"), (xp.std, "complex128"), (xp.max, "complex64"), (xp.max, "bool"), (xp.min, "complex128"),
])
def test_reductions_reject_dtypes_outside_their_category(fn, name):
    with pytest.raises(TypeError, match=fn.__name__):
        fn(xp.ones(3, dtype=getattr(xp, name)))


@pytest.mark.parametrize("fn", [xp.var, xp.std])
@pytest.mark.parametrize("correction", [-1, -0.5, "1"])
def test_var_and_std_reject_bad_corrections(fn, correction):
    with pytest.raises(ValueError, match=fn.__name__):
        fn(xp.ones(3), correction=correction)


@pytest.mark.parametrize("fn", [xp.sum, xp.prod])
@pytest.mark.parametrize("dtype", [xp.float64, xp.float16, "datetime64[s]"])
def test_sum_and_prod_reject_bad_dtype_arguments(fn, dtype):
    # complex input cannot accumulate in a real dtype; datetime64 is not an arrayx dtype
    with pytest.raises(TypeError, match=fn.__name__):
        fn(xp.asarray([1j]), dtype=dtype)
