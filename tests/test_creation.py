"""Creation functions against NumPy: arange, asarray, empty/zeros/ones/full (and
their _like forms), eye, linspace, meshgrid, tril/triu, from_dlpack, device=."""

import re
import sys

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import arrayx as xp
from arrayx import debug, executors
from oracle import DTYPE_NAMES, assert_same

NUMERIC_NAMES = DTYPE_NAMES[1:]
CPU = xp.Device("cpu")

small_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


def any_array(dtype_names=DTYPE_NAMES, shape=small_shapes):
    """NumPy arrays of the given dtypes (any values, NaN included)."""
    return st.sampled_from(dtype_names).flatmap(lambda name: hnp.arrays(np.dtype(name), shape))


# arange


@given(start=st.integers(-50, 50), stop=st.integers(-50, 50) | st.none(),
       step=st.integers(-7, 7).filter(bool))
def test_arange_of_ints_matches_numpy(start, stop, step):
    if stop is None:
        assert_same(xp.arange(start), np.arange(start))
    else:
        assert_same(xp.arange(start, stop, step), np.arange(start, stop, step))


@given(start=st.floats(-100, 100), stop=st.floats(-100, 100),
       step=st.floats(0.1, 10) | st.floats(-10, -0.1))
def test_arange_of_floats_matches_numpy(start, stop, step):
    got, expected = np.asarray(xp.arange(start, stop, step)), np.arange(start, stop, step)
    assert got.dtype == np.float64 and got.shape == expected.shape
    # NumPy fills start + i * ((start + step) - start), arrayx start + i * step: the
    # rounded step differs by an ulp of |start|, times at most 2000 elements.
    np.testing.assert_allclose(got, expected, rtol=0, atol=2000 * 100 * np.finfo(np.float64).eps)


@pytest.mark.parametrize("args, expected", [
    ((10, 0, -3), [10, 7, 4, 1]),        # negative step
    ((0, 10, -1), []),                   # empty: step points away from stop
    ((5, 5), []),                        # empty: start == stop
    ((-3,), []),                         # empty: negative stop alone
    ((2**62, 2**62 + 2), [2**62, 2**62 + 1]),
])
def test_arange_edge_ranges(args, expected):
    assert_same(xp.arange(*args), np.array(expected, dtype=np.int64))


@pytest.mark.parametrize("name", NUMERIC_NAMES)
def test_arange_dtype_argument_sets_the_dtype(name):
    assert_same(xp.arange(1, 8, 3, dtype=getattr(xp, name)), np.arange(1, 8, 3, dtype=name))


def test_arange_descending_in_an_unsigned_dtype():
    assert_same(xp.arange(10, 0, -3, dtype=xp.uint8), np.array([10, 7, 4, 1], dtype=np.uint8))


def test_arange_with_a_float_argument_defaults_to_float64():
    assert_same(xp.arange(0, 3, 1.0), np.array([0.0, 1.0, 2.0]))


@pytest.mark.parametrize("call, error", [
    (lambda: xp.arange(0, 5, 0), ValueError),
    (lambda: xp.arange(True), TypeError),
    (lambda: xp.arange(0, 1j), TypeError),
    (lambda: xp.arange(xp.asarray(3)), TypeError),
    (lambda: xp.arange(5, dtype="datetime64[s]"), TypeError),
    (lambda: xp.arange(0, 5, 2**64), OverflowError),   # the step does not fit int64
])
def test_arange_errors_name_arange(call, error):
    with pytest.raises(error, match="arange"):
        call()


# asarray


@given(a=any_array(["bool", "int64", "float64", "complex128"], hnp.array_shapes(min_dims=1, max_dims=3)))
def test_asarray_of_a_nested_list_matches_numpy(a):
    assert_same(xp.asarray(a.tolist()), np.asarray(a.tolist()))


@pytest.mark.parametrize("value, name", [(True, "bool"), (-3, "int64"), (2.5, "float64"), (1 - 2j, "complex128")])
def test_asarray_of_a_python_scalar_takes_the_default_dtype(value, name):
    assert_same(xp.asarray(value), np.asarray(value, dtype=name))


@given(a=any_array())
def test_asarray_of_a_numpy_array_keeps_dtype_and_values(a):
    assert_same(xp.asarray(a), a)


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_asarray_dtype_argument_converts(name):
    data = [[0, 1, 2], [3, 4, 5]]
    assert_same(xp.asarray(data, dtype=getattr(xp, name)), np.asarray(data, dtype=name))


def test_asarray_of_an_arrayx_array_with_another_dtype_casts():
    x = xp.asarray([1, 2, 3])
    assert_same(xp.asarray(x, dtype=xp.float32), np.array([1, 2, 3], dtype=np.float32))


@pytest.mark.parametrize("copy", [False, None])
def test_asarray_of_an_arrayx_array_without_copy_returns_it(copy):
    x = xp.asarray([1.0, 2.0])
    assert xp.asarray(x, copy=copy) is x


def test_asarray_copy_true_of_an_arrayx_array_is_a_new_array_with_its_values():
    x = xp.asarray([1.0, 2.0])
    y = xp.asarray(x, copy=True)
    assert y is not x
    assert_same(y, np.array([1.0, 2.0]))


@pytest.mark.parametrize("copy", [None, True])
def test_asarray_copies_numpy_input_unless_copy_false(copy):
    a = np.arange(3.0)
    x = xp.asarray(a, copy=copy)
    a[0] = 99.0  # a lazy graph must not see later writes to the host buffer
    assert_same(x, np.arange(3.0))


def test_asarray_copy_false_shares_numpy_memory():
    a = np.arange(3.0)
    x = xp.asarray(a, copy=False, device="cpu")   # the dask device refuses: dask copies (tests/test_dask.py)
    a[0] = 99.0
    assert_same(x, np.array([99.0, 1.0, 2.0]))


@pytest.mark.parametrize("obj, kwargs", [
    (1.0, {}),                                              # a Python scalar
    ([1, 2], {}),                                           # a list must be converted
    (np.ones(2), {"dtype": xp.float32}),                    # a cast
    (np.arange(3, dtype=">i4"), {}),                        # a byte swap
])
def test_asarray_copy_false_raises_where_a_copy_is_needed(obj, kwargs):
    with pytest.raises(ValueError, match="asarray"):
        xp.asarray(obj, copy=False, **kwargs)


def test_asarray_copy_false_of_an_arrayx_array_needing_a_cast_raises():
    with pytest.raises(ValueError, match="asarray"):
        xp.asarray(xp.asarray([1, 2]), dtype=xp.float64, copy=False)


@pytest.mark.parametrize("obj, kwargs, error", [
    (np.zeros(2, dtype="datetime64[s]"), {}, TypeError),   # a dtype arrayx lacks
    ("abc", {}, TypeError),
    ([[1], [2, 3]], {}, ValueError),                 # ragged
    (2**63, {}, OverflowError),                      # beyond int64
    (-1, {"dtype": xp.uint8}, OverflowError),
    (1j, {"dtype": xp.float64}, TypeError),
    ([1, 2], {"dtype": "datetime64[s]"}, TypeError),
    ([1, 2], {"dtype": xp.asarray(1)}, TypeError),   # an array is not a dtype
])
def test_asarray_rejects_bad_input(obj, kwargs, error):
    with pytest.raises(error, match="asarray"):
        xp.asarray(obj, **kwargs)


# empty, zeros, ones, full and the _like forms

FILLS = [(xp.zeros, np.zeros), (xp.ones, np.ones)]


@pytest.mark.parametrize("fn, np_fn", FILLS)
@given(shape=small_shapes)
def test_zeros_and_ones_match_numpy(fn, np_fn, shape):
    assert_same(fn(shape), np_fn(shape))


@pytest.mark.parametrize("fn, np_fn", FILLS + [(xp.empty, np.empty)])
@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_constant_creation_dtype_argument(fn, np_fn, name):
    x = fn((2, 3), dtype=getattr(xp, name))
    assert (str(x.dtype), x.shape) == (name, (2, 3))
    if fn is not xp.empty:  # empty's values are unspecified
        assert_same(x, np_fn((2, 3), dtype=name))


def test_empty_of_an_int_shape_has_that_length_and_float64():
    x = xp.empty(4)
    assert (x.shape, x.dtype) == ((4,), xp.float64)


@pytest.mark.parametrize("fill, name", [(True, "bool"), (7, "int64"), (-0.5, "float64"), (2 + 1j, "complex128")])
def test_full_infers_its_dtype_from_fill_value(fill, name):
    assert_same(xp.full((2, 1), fill), np.full((2, 1), fill, dtype=name))


@pytest.mark.parametrize("name", NUMERIC_NAMES)
def test_full_dtype_argument(name):
    assert_same(xp.full(3, 5, dtype=getattr(xp, name)), np.full(3, 5, dtype=name))


LIKES = [(xp.zeros_like, np.zeros_like, ()), (xp.ones_like, np.ones_like, ()), (xp.full_like, np.full_like, (3,))]


@pytest.mark.parametrize("fn, np_fn, args", LIKES)
@given(a=any_array(NUMERIC_NAMES))
def test_like_functions_keep_shape_and_dtype(fn, np_fn, args, a):
    assert_same(fn(xp.asarray(a), *args), np_fn(a, *args))


@pytest.mark.parametrize("fn, np_fn, args", LIKES)
def test_like_functions_dtype_argument_overrides(fn, np_fn, args):
    a = np.arange(6).reshape(2, 3)
    assert_same(fn(xp.asarray(a), *args, dtype=xp.complex64), np_fn(a, *args, dtype=np.complex64))


def test_empty_like_keeps_shape_and_dtype():
    x = xp.empty_like(xp.asarray([[1, 2, 3]], dtype=xp.int16))
    assert (x.shape, x.dtype) == ((1, 3), xp.int16)


@pytest.mark.parametrize("call, error, name", [
    (lambda: xp.zeros(-1), ValueError, "zeros"),
    (lambda: xp.ones((2, -3)), ValueError, "ones"),
    (lambda: xp.empty(2.0), TypeError, "empty"),
    (lambda: xp.zeros((2,), dtype="datetime64[s]"), TypeError, "zeros"),
    (lambda: xp.full(2, np.float32(1)), TypeError, "full"),      # fill_value must be a Python scalar
    (lambda: xp.full(2, 1j, dtype=xp.float64), TypeError, "full"),
    (lambda: xp.full(2, 300, dtype=xp.int8), OverflowError, "full"),
    (lambda: xp.full_like(np.ones(2), 1), TypeError, "full_like"),
    (lambda: xp.zeros_like([1, 2]), TypeError, "zeros_like"),
    (lambda: xp.ones_like(xp.ones(2), dtype="foo"), TypeError, "ones_like"),
    (lambda: xp.empty_like(xp.ones(2), device="gpu"), ValueError, "empty_like"),
])
def test_constant_creation_errors_name_the_function(call, error, name):
    with pytest.raises(error, match=name):
        call()


# eye


@given(n_rows=st.integers(0, 6), n_cols=st.integers(0, 6) | st.none(), k=st.integers(-8, 8))
def test_eye_matches_numpy(n_rows, n_cols, k):
    assert_same(xp.eye(n_rows, n_cols, k=k), np.eye(n_rows, n_cols, k=k))


@pytest.mark.parametrize("k", [2**70, -2**70, 2**63, -2**63 - 1])
def test_eye_with_k_beyond_the_matrix_is_all_zeros(k):
    assert_same(xp.eye(3, 4, k=k), np.zeros((3, 4)))


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_eye_dtype_argument(name):
    assert_same(xp.eye(2, 3, k=1, dtype=getattr(xp, name)), np.eye(2, 3, k=1, dtype=name))


@pytest.mark.parametrize("call, error", [
    (lambda: xp.eye(-1), ValueError),
    (lambda: xp.eye(2.0), TypeError),
    (lambda: xp.eye(2, k=0.5), TypeError),
    (lambda: xp.eye(2, dtype="datetime64[s]"), TypeError),
])
def test_eye_errors_name_eye(call, error):
    with pytest.raises(error, match="eye"):
        call()


# linspace


@given(start=st.floats(-1e3, 1e3), stop=st.floats(-1e3, 1e3), num=st.integers(0, 20), endpoint=st.booleans())
def test_linspace_matches_numpy(start, stop, num, endpoint):
    got = xp.linspace(start, stop, num, endpoint=endpoint)
    expected = np.linspace(start, stop, num, endpoint=endpoint)
    assert got.dtype == xp.float64 and got.shape == expected.shape
    # Both compute start + i * step, rounding each term: terms up to 1e3 leave an error
    # of about 1e3 * eps (2e-13) even where the sum cancels to near 0.
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-13, atol=1e-12)


@given(start=st.floats(-1e3, 1e3), stop=st.floats(-1e3, 1e3), num=st.integers(2, 20))
def test_linspace_with_endpoint_ends_exactly_at_stop(start, stop, num):
    assert float(xp.linspace(start, stop, num)[-1]) == stop


@pytest.mark.parametrize("num, endpoint, expected", [
    (0, True, []),
    (1, True, [2.0]),
    (1, False, [2.0]),
    (2, False, [2.0, 4.0]),
])
def test_linspace_small_num(num, endpoint, expected):
    assert_same(xp.linspace(2.0, 6.0, num, endpoint=endpoint), np.array(expected))


def test_linspace_with_complex_bounds_is_complex():
    got = xp.linspace(0, 1 + 2j, 5)
    assert got.dtype == xp.complex128
    np.testing.assert_allclose(np.asarray(got), np.linspace(0, 1 + 2j, 5), rtol=1e-15)


def test_linspace_float32_dtype_argument():
    got = xp.linspace(-1, 1, 7, dtype=xp.float32)
    assert got.dtype == xp.float32
    # float32 arithmetic against NumPy's float64-then-cast: a few float32 ulps.
    np.testing.assert_allclose(np.asarray(got), np.linspace(-1, 1, 7, dtype=np.float32), rtol=0, atol=4e-7)


@pytest.mark.parametrize("call, error", [
    (lambda: xp.linspace(0, 1, -1), ValueError),
    (lambda: xp.linspace(0, 1, 2.0), TypeError),
    (lambda: xp.linspace(0, 1, 3, dtype=xp.int64), TypeError),
    (lambda: xp.linspace(0, 1j, 3, dtype=xp.float64), TypeError),
    (lambda: xp.linspace(xp.asarray(0.0), 1, 3), TypeError),
])
def test_linspace_errors_name_linspace(call, error):
    with pytest.raises(error, match="linspace"):
        call()


# meshgrid


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@given(lengths=st.lists(st.integers(0, 4), min_size=1, max_size=3))
def test_meshgrid_matches_numpy(indexing, lengths):
    vectors = [np.arange(n) + 10 * i for i, n in enumerate(lengths)]
    got = xp.meshgrid(*[xp.asarray(v) for v in vectors], indexing=indexing)
    expected = np.meshgrid(*vectors, indexing=indexing)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert_same(g, e)


@pytest.mark.parametrize("call, error", [
    (lambda: xp.meshgrid(xp.ones(2), indexing="xx"), ValueError),
    (lambda: xp.meshgrid(xp.ones((2, 2))), ValueError),
    (lambda: xp.meshgrid(xp.ones(2), xp.ones(2, dtype=xp.int64)), TypeError),
    (lambda: xp.meshgrid(np.ones(2)), TypeError),
])
def test_meshgrid_errors_name_meshgrid(call, error):
    with pytest.raises(error, match="meshgrid"):
        call()


# tril, triu

TRIANGLES = [(xp.tril, np.tril), (xp.triu, np.triu)]


@pytest.mark.parametrize("fn, np_fn", TRIANGLES)
@given(a=any_array(DTYPE_NAMES, hnp.array_shapes(min_dims=2, max_dims=4, min_side=0, max_side=4)),
       k=st.integers(-5, 5))
def test_triangles_of_matrix_stacks_match_numpy(fn, np_fn, a, k):
    assert_same(fn(xp.asarray(a), k=k), np_fn(a, k=k))


@pytest.mark.parametrize("fn, np_fn", TRIANGLES)
@pytest.mark.parametrize("k", [2**70, -2**70])
def test_triangles_with_k_beyond_the_matrix(fn, np_fn, k):
    a = np.arange(1, 7).reshape(2, 3)
    assert_same(fn(xp.asarray(a), k=k), np_fn(a, k=np.sign(k) * 10))


@pytest.mark.parametrize("fn", [xp.tril, xp.triu])
@pytest.mark.parametrize("call, error", [
    (lambda fn: fn(xp.ones(3)), ValueError),
    (lambda fn: fn(xp.ones((2, 2)), k=1.5), TypeError),
    (lambda fn: fn(np.ones((2, 2))), TypeError),
])
def test_triangle_errors_name_the_function(fn, call, error):
    with pytest.raises(error, match=fn.__name__):
        call(fn)


# from_dlpack


@given(a=any_array())
def test_from_dlpack_of_numpy_keeps_dtype_and_values(a):
    assert_same(xp.from_dlpack(a), a)


@given(a=any_array())
def test_numpy_from_dlpack_of_a_lazy_arrayx_array(a):
    x = xp.asarray(a, device="cpu")   # NumPy imports host memory only
    y = xp.flip(x)  # an unevaluated node: exporting it is a force point
    np.testing.assert_array_equal(np.from_dlpack(y), np.flip(a))
    assert np.from_dlpack(x).dtype == a.dtype


def test_from_dlpack_round_trip_through_numpy():
    x = xp.reshape(xp.arange(6.0, device="cpu"), (2, 3)) * 2.0   # NumPy imports host memory only
    assert_same(xp.from_dlpack(np.from_dlpack(x)), np.arange(6.0).reshape(2, 3) * 2.0)


def test_from_dlpack_of_an_arrayx_array():
    assert_same(xp.from_dlpack(xp.asarray([1, 2]) + 1), np.array([2, 3]))


@pytest.mark.parametrize("copy, shares", [(False, True), (True, False)])
def test_from_dlpack_copy_argument(copy, shares):
    a = np.arange(3.0)
    x = xp.from_dlpack(a, copy=copy)
    a[0] = 99.0
    assert (float(x[0]) == 99.0) is shares


@pytest.mark.parametrize("call, error", [
    (lambda: xp.from_dlpack([1, 2]), TypeError),
    (lambda: xp.from_dlpack(np.ones(2), device="gpu"), ValueError),
])
def test_from_dlpack_errors_name_from_dlpack(call, error):
    with pytest.raises(error, match="from_dlpack"):
        call()


# device=

CREATORS = [
    (xp.arange, (3,)), (xp.asarray, ([1, 2],)), (xp.empty, ((2,),)), (xp.zeros, ((2,),)),
    (xp.ones, ((2,),)), (xp.full, ((2,), 1.5)), (xp.eye, (2,)), (xp.linspace, (0, 1, 3)),
    (xp.from_dlpack, (np.ones(2),)),
]
LIKE_CREATORS = [(xp.empty_like, ()), (xp.zeros_like, ()), (xp.ones_like, ()), (xp.full_like, (2,))]


@pytest.mark.parametrize("fn, args", CREATORS)
def test_creation_functions_place_arrays_on_the_given_device(fn, args):
    assert fn(*args, device=CPU).device == CPU
    # from_dlpack keeps x's device, as the standard says (NumPy's: the CPU).
    default = CPU if fn is xp.from_dlpack else xp.__array_namespace_info__().default_device()
    assert fn(*args).device == default


@pytest.mark.parametrize("fn, args", LIKE_CREATORS)
def test_like_functions_take_the_device_of_x_or_the_given_one(fn, args):
    x = xp.ones(2)
    assert fn(x, *args).device == x.device
    assert fn(x, *args, device=x.device).device == x.device


def test_asarray_accepts_the_device_of_an_existing_array():
    x = xp.ones(2)
    assert xp.asarray(x, device=x.device) is x


@pytest.mark.parametrize("fn, args", CREATORS + [(fn, (xp.ones(2),) + args) for fn, args in LIKE_CREATORS])
def test_unknown_device_raises_naming_the_function(fn, args):
    with pytest.raises(ValueError, match=fn.__name__):
        fn(*args, device="gpu")


# A device's name stands for the device wherever a device is accepted (as torch and jax accept "cpu").
@pytest.mark.parametrize("fn, args", CREATORS + [(fn, (xp.ones(2),) + args) for fn, args in LIKE_CREATORS]
                         + [(xp.fft.fftfreq, (4,)), (xp.fft.rfftfreq, (4,)), (xp.astype, (xp.ones(2), xp.int8))])
def test_a_device_name_is_accepted_as_the_device(fn, args):
    assert fn(*args, device="cpu").device == CPU
    assert_same(fn(*args, device="cpu"), np.asarray(fn(*args, device=CPU)))


def test_to_device_accepts_a_device_name():
    x = xp.arange(3.0, device="cpu") * 2.0
    assert_same(x.to_device("cpu"), np.asarray([0.0, 2.0, 4.0]))
    assert xp.asarray(x, device="cpu") is x


@pytest.mark.parametrize("device", ["gpu", "CPU", "cpu:0", 0])
def test_an_unknown_device_name_lists_the_valid_devices(device):
    devices = re.escape(str(list(executors.devices())))   # cpu, and dask or cuda:<n> where installed
    with pytest.raises(ValueError, match=rf"^to_device: unknown device {device!r}; expected one of {devices}"):
        xp.ones(2).to_device(device)


# Impossible shapes: NumPy (the CPU executor) refuses an array whose nonzero
# dimensions times the item size exceed sys.maxsize; arrayx refuses it at the
# call, before anything is computed, naming the function.

HUGE = 2**40  # HUGE * HUGE elements: far beyond sys.maxsize bytes, each dimension alone is fine
TOO_BIG = [
    ("zeros", lambda: xp.zeros((HUGE, HUGE)), lambda: np.zeros((HUGE, HUGE))),
    ("ones", lambda: xp.ones((HUGE, HUGE), dtype=xp.int8), lambda: np.ones((HUGE, HUGE), dtype=np.int8)),
    ("empty", lambda: xp.empty((0, HUGE, HUGE)), lambda: np.empty((0, HUGE, HUGE))),
    ("full", lambda: xp.full(2**64, 1.5), lambda: np.full(2**64, 1.5)),
    ("zeros_like", lambda: xp.zeros_like(xp.ones(2**62, dtype=xp.int8), dtype=xp.float64),
     lambda: np.empty(2**62, dtype=np.float64)),
    ("full_like", lambda: xp.full_like(xp.ones(2**62, dtype=xp.int8), 1, dtype=xp.int16),
     lambda: np.empty(2**62, dtype=np.int16)),
    ("eye", lambda: xp.eye(HUGE), lambda: np.eye(HUGE)),
    ("arange", lambda: xp.arange(2**63), lambda: np.empty(2**63, dtype=np.int64)),
    ("arange", lambda: xp.arange(0.0, float("inf")), lambda: np.arange(0.0, float("inf"))),
    ("linspace", lambda: xp.linspace(0, 1, 2**62), lambda: np.empty(2**62, dtype=np.float64)),
    ("meshgrid", lambda: xp.meshgrid(xp.ones(HUGE), xp.ones(HUGE)), lambda: np.empty((HUGE, HUGE))),
    ("reshape", lambda: xp.reshape(xp.zeros(0), (0, HUGE, HUGE)), lambda: np.zeros(0).reshape(0, HUGE, HUGE)),
    ("broadcast_to", lambda: xp.broadcast_to(xp.zeros(1), (HUGE, HUGE)), lambda: np.broadcast_to(np.zeros(1), (HUGE, HUGE))),
    ("broadcast_arrays", lambda: xp.broadcast_arrays(xp.ones((HUGE, 1)), xp.ones((1, HUGE))),
     lambda: np.empty((HUGE, HUGE))),
    ("tile", lambda: xp.tile(xp.ones(HUGE), (HUGE,)), lambda: np.empty(HUGE * HUGE)),
    ("repeat", lambda: xp.repeat(xp.ones(HUGE), HUGE), lambda: np.empty(HUGE * HUGE)),
    # Shapes computed by the graph's rules are checked too, naming the primitive.
    ("add", lambda: xp.ones((HUGE, 1)) + xp.ones((1, HUGE)), lambda: np.empty((HUGE, HUGE))),
    ("matmul", lambda: xp.ones((HUGE, 1)) @ xp.ones((1, HUGE)), lambda: np.empty((HUGE, HUGE))),
    ("concat", lambda: xp.concat([xp.ones(2**59), xp.ones(2**59)]), lambda: np.empty(2**60)),
    ("fftfreq", lambda: xp.fft.fftfreq(2**62), lambda: np.empty(2**62)),
]


@pytest.mark.parametrize("name, call, numpy_call", TOO_BIG, ids=[f"{c[0]}-{i}" for i, c in enumerate(TOO_BIG)])
def test_impossible_shapes_raise_at_the_call_naming_the_function(name, call, numpy_call):
    with pytest.raises(ValueError):  # the oracle: NumPy cannot make this array either
        numpy_call()
    debug.reset()
    with pytest.raises(ValueError, match=f"^{name}: "):
        call()
    assert debug.counters["steps_run"] == 0 and debug.counters["realizations"] == 0


@pytest.mark.parametrize("dtype", [xp.int8, xp.float64, xp.complex128])
def test_the_largest_addressable_shape_is_accepted_lazily(dtype):
    # One element more than sys.maxsize bytes allow is refused, as NumPy refuses it
    # (NumPy then only fails to allocate the largest one: a MemoryError, not a ValueError).
    n = sys.maxsize // dtype.itemsize
    with pytest.raises(ValueError):
        np.empty(n + 1, dtype=dtype.dtype)
    assert xp.zeros(n, dtype=dtype).shape == (n,)
    assert xp.broadcast_to(xp.zeros(1, dtype=dtype), (n,)).shape == (n,)
    with pytest.raises(ValueError, match="^zeros: shape"):
        xp.zeros(n + 1, dtype=dtype)
    with pytest.raises(ValueError, match="^broadcast_to: shape"):
        xp.broadcast_to(xp.zeros(1, dtype=dtype), (n + 1,))
