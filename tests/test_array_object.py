"""The array object against NumPy: attributes, scalar conversions, repr,
np.asarray, basic indexing and (functional) assignment, the manipulation
functions, matmul, matrix_transpose and the @ operator."""

import math
import operator
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import arrayx as xp
from oracle import DTYPE_NAMES, assert_same


def arrays(shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4), names=DTYPE_NAMES):
    """NumPy arrays of any dtype in `names` (NaN included)."""
    return st.sampled_from(names).flatmap(lambda name: hnp.arrays(np.dtype(name), shape))


def axes(ndim):
    """axis arguments for `ndim` dimensions: None, an int (maybe negative) or a tuple."""
    ints = st.integers(-ndim, ndim - 1) if ndim else st.nothing()
    return st.none() | ints | hnp.valid_tuple_axes(ndim)


# attributes


@given(a=arrays())
def test_attributes_match_numpy(a):
    x = xp.asarray(a)
    assert (x.shape, str(x.dtype), x.ndim, x.size) == (a.shape, a.dtype.name, a.ndim, a.size)
    assert type(x.shape) is tuple and type(x.size) is int
    assert x.device == xp.__array_namespace_info__().default_device()


@given(a=arrays(hnp.array_shapes(min_dims=2, max_dims=2, min_side=0)))
def test_T_of_a_matrix_transposes(a):
    assert_same(xp.asarray(a).T, a.T)


@given(a=arrays(hnp.array_shapes(min_dims=2, max_dims=4, min_side=0)))
def test_mT_transposes_the_last_two_axes(a):
    assert_same(xp.asarray(a).mT, np.swapaxes(a, -1, -2))


@pytest.mark.parametrize("shape", [(), (3,), (2, 3, 4)])
def test_T_of_a_non_matrix_raises(shape):
    with pytest.raises(ValueError, match=r"\.T"):
        xp.ones(shape).T


@pytest.mark.parametrize("shape", [(), (3,)])
def test_mT_of_fewer_than_two_dimensions_raises(shape):
    with pytest.raises(ValueError, match="matrix_transpose"):
        xp.ones(shape).mT


# scalar conversions: method, Python type, dtype kinds it accepts

CONVERSIONS = [
    ("__bool__", bool, "biufc"),
    ("__int__", int, "biuf"),
    ("__float__", float, "biuf"),
    ("__complex__", complex, "biufc"),
    ("__index__", operator.index, "iu"),
]


@pytest.mark.parametrize("method, convert, kinds", CONVERSIONS)
@given(data=st.data())
def test_conversions_of_0d_arrays_match_numpy_scalars(method, convert, kinds, data):
    name = data.draw(st.sampled_from([n for n in DTYPE_NAMES if np.dtype(n).kind in kinds]))
    value = data.draw(hnp.from_dtype(np.dtype(name), allow_nan=False, allow_infinity=False))
    got = convert(xp.asarray(np.asarray(value, dtype=name)))
    assert type(got) is (int if method == "__index__" else convert)
    assert got == convert(value.item())


@pytest.mark.parametrize("method, convert, kinds", CONVERSIONS)
def test_conversions_of_arrays_with_dimensions_raise(method, convert, kinds):
    for shape in [(1,), (1, 1), (0,)]:
        with pytest.raises(TypeError, match=method):
            convert(xp.ones(shape, dtype=xp.int64))


@pytest.mark.parametrize("method, convert, kinds", CONVERSIONS)
def test_conversions_reject_dtypes_of_other_kinds(method, convert, kinds):
    for name in [n for n in DTYPE_NAMES if np.dtype(n).kind not in kinds]:
        with pytest.raises(TypeError, match=method):
            convert(xp.ones((), dtype=getattr(xp, name)))


def test_conversions_of_special_floats():
    assert float(xp.asarray(-math.inf)) == -math.inf
    assert math.isnan(float(xp.asarray(math.nan)))
    assert bool(xp.asarray(math.nan)) is True
    assert complex(xp.asarray(complex(math.inf, -0.0))) == complex(math.inf, -0.0)


def test_int_of_nan_and_infinity_raise_as_the_standard_says():
    # The messages are Python's own: they do not name __int__.
    with pytest.raises(ValueError):
        int(xp.asarray(math.nan))
    with pytest.raises(OverflowError):
        int(xp.asarray(math.inf))


# repr, np.asarray


def test_repr_shows_the_computed_values_and_dtype():
    x = xp.asarray([1.5, -2.0]) * 2.0  # a lazy node: repr is a force point
    text = repr(x)
    assert "3." in text and "-4." in text and "float64" in text
    assert str(x) == text


@pytest.mark.parametrize("value, shown", [(7, "7"), (True, "True"), (1 + 2j, "1.+2.j")])
def test_repr_of_0d_arrays_shows_the_value(value, shown):
    assert shown in repr(xp.asarray(value))


# format: the oracle is Python's format() of the NumPy element as a Python scalar.
FORMAT_SPECS = {"b": ["", "d", ">5"], "iu": ["", "d", "x", "+08d", ".2f", ",", "e"],
                "f": ["", ".3f", "e", ".2%", "g", "+.1e", "10.4f"], "c": ["", ".3f", "e", "g"]}


@given(a=arrays(shape=()), data=st.data())
def test_format_of_a_0d_array_formats_its_python_scalar(a, data):
    kind = next(k for k in FORMAT_SPECS if a.dtype.kind in k)
    spec = data.draw(st.sampled_from(FORMAT_SPECS[kind][1:]))
    x = xp.asarray(a)
    assert format(x, spec) == format(a.item(), spec)
    assert f"{x:{spec}}" == format(a.item(), spec)


def test_format_is_a_force_point():
    loss = xp.sum(xp.asarray([0.25, 0.5]) ** 2)  # lazy
    assert f"{loss:.3f}" == "0.312" and f"{loss:.2e}" == format(0.3125, ".2e")


@given(a=arrays())
def test_format_with_an_empty_spec_is_str_for_any_shape(a):
    x = xp.asarray(a)
    assert format(x, "") == f"{x}" == str(x)


@pytest.mark.parametrize("shape", [(1,), (2, 3), (0,)])
def test_format_spec_of_an_array_with_dimensions_raises_naming_the_shape(shape):
    with pytest.raises(TypeError, match=rf"^__format__: .*'\.3f'.*shape {re.escape(str(shape))}"):
        f"{xp.ones(shape):.3f}"


@given(a=arrays())
def test_np_asarray_returns_the_values_read_only(a):
    x = xp.flip(xp.asarray(a))  # a lazy node: np.asarray is a force point
    host = np.asarray(x)
    assert_same(x, np.flip(a))
    assert not host.flags.writeable
    if host.size:
        with pytest.raises(ValueError):
            host.flat[0] = host.flat[0]


# basic indexing


@st.composite
def arrays_and_basic_keys(draw, names=DTYPE_NAMES):
    a = draw(arrays(names=names))
    key = draw(hnp.basic_indices(a.shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    return a, key


@given(case=arrays_and_basic_keys())
def test_getitem_with_basic_keys_matches_numpy(case):
    a, key = case
    assert_same(xp.asarray(a)[key], a[key])


@given(a=arrays(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6)), data=st.data())
def test_getitem_with_negative_steps_matches_numpy(a, data):
    bounds = st.none() | st.integers(-8, 8)
    key = tuple(slice(data.draw(bounds), data.draw(bounds), data.draw(st.integers(-3, -1))) for _ in a.shape)
    assert_same(xp.asarray(a)[key], a[key])


@pytest.mark.parametrize("key", [slice(-5, None, -1), slice(-4, -6, -1), slice(None, 5, -1), slice(2, 1)])
def test_getitem_with_empty_slices_is_empty(key):
    # Python normalizes some empty descending slices to start -1, which NumPy reads as "last".
    a = np.arange(3)
    assert_same(xp.asarray(a)[key], a[key])


def python_scalars(dtype):
    """Python scalars (bool, int, float or complex) that fit in `dtype`."""
    return hnp.from_dtype(dtype).map(lambda value: value.item())


@given(case=arrays_and_basic_keys(["bool", "int8", "uint16", "int64", "float32", "float64", "complex128"]),
       data=st.data())
def test_setitem_with_basic_keys_matches_numpy_and_is_functional(case, data):
    a, key = case
    target_shape = a[key].shape
    # The value: a Python scalar, or an array of the indexed shape or a suffix of it (broadcast).
    suffix = target_shape[data.draw(st.integers(0, len(target_shape))):]
    if data.draw(st.booleans()):
        value = data.draw(python_scalars(a.dtype))
        xp_value = value
    else:
        value = data.draw(hnp.arrays(a.dtype, suffix))
        xp_value = xp.asarray(value)
    x = xp.asarray(a)
    derived = xp.flip(x)  # computed from the old value, not evaluated yet
    kept = xp.asarray(x, copy=True)
    x[key] = xp_value
    expected = a.copy()
    expected[key] = value
    assert_same(x, expected)
    assert_same(kept, a)
    assert_same(derived, np.flip(a))


def test_setitem_promotes_a_smaller_array_value():
    x = xp.zeros(3, dtype=xp.float64)
    x[1:] = xp.asarray([1, 2], dtype=xp.int8)
    assert_same(x, np.array([0.0, 1.0, 2.0]))


@pytest.mark.parametrize("key, error", [
    (3, IndexError),                  # out of bounds
    (-4, IndexError),
    ((0, 0, 0), IndexError),          # too many indices
    ((..., 0, ...), IndexError),      # two ellipses
    (1.0, IndexError),                # not an integer
    (slice(None, None, 0), ValueError),
])
def test_getitem_errors_name_getitem(key, error):
    with pytest.raises(error, match="__getitem__"):
        xp.ones((3, 2))[key]


@pytest.mark.parametrize("key, value, error", [
    (5, 1.0, IndexError),
    ((0, 0, 0), 1.0, IndexError),
    (slice(None, None, 0), 1.0, ValueError),
    (0, xp.ones(3), ValueError),                          # cannot broadcast to (2,)
    (0, xp.ones((1, 2)), ValueError),                     # more dimensions than the indexed shape
    (0, 1j, TypeError),                                   # complex into float64
    (0, xp.ones(2, dtype=xp.complex64), TypeError),
    (0, np.ones(2), TypeError),                           # not an arrayx array
])
def test_setitem_errors_name_setitem(key, value, error):
    x = xp.ones((3, 2))
    with pytest.raises(error, match="__setitem__"):
        x[key] = value


@pytest.mark.parametrize("name, value, error", [
    ("int64", 1.5, TypeError),
    ("int8", 1000, OverflowError),
    ("bool", 1, TypeError),
])
def test_setitem_rejects_python_scalars_that_do_not_fit(name, value, error):
    x = xp.zeros(2, dtype=getattr(xp, name))
    with pytest.raises(error, match="__setitem__"):
        x[0] = value


# manipulation functions


@given(a=arrays(), data=st.data())
def test_reshape_matches_numpy(a, data):
    shape = list(data.draw(st.permutations(a.shape)))
    if shape and a.size:  # -1 cannot be inferred when the other sides multiply to 0
        shape[data.draw(st.integers(0, len(shape) - 1))] = -1
    assert_same(xp.reshape(xp.asarray(a), tuple(shape)), a.reshape(shape))
    assert_same(xp.reshape(xp.asarray(a), (-1,)), a.reshape(-1))


@given(a=arrays(), data=st.data())
def test_permute_dims_matches_numpy(a, data):
    order = tuple(data.draw(st.permutations(range(a.ndim))))
    assert_same(xp.permute_dims(xp.asarray(a), order), np.transpose(a, order))


@given(a=arrays(), data=st.data())
def test_expand_dims_matches_numpy(a, data):
    count = data.draw(st.integers(1, 3))
    axis = data.draw(hnp.valid_tuple_axes(a.ndim + count, min_size=count, max_size=count))
    axis = axis[0] if count == 1 and data.draw(st.booleans()) else axis  # an int or a tuple
    assert_same(xp.expand_dims(xp.asarray(a), axis=axis), np.expand_dims(a, axis))


@given(a=arrays(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=2)), data=st.data())
def test_squeeze_matches_numpy(a, data):
    ones = [i for i, n in enumerate(a.shape) if n == 1]
    axis = tuple(data.draw(st.lists(st.sampled_from(ones), unique=True))) if ones else ()
    assert_same(xp.squeeze(xp.asarray(a), axis=axis), np.squeeze(a, axis))


@given(a=arrays(), data=st.data())
def test_flip_matches_numpy(a, data):
    axis = data.draw(axes(a.ndim))
    assert_same(xp.flip(xp.asarray(a), axis=axis), np.flip(a, axis))


@st.composite
def joinable_arrays(draw, vary_axis):
    """2 or 3 NumPy arrays of one dtype whose shapes agree except (maybe) along one axis."""
    name = draw(st.sampled_from(DTYPE_NAMES))
    shape = list(draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3)))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    result = []
    for _ in range(draw(st.integers(2, 3))):
        if vary_axis:
            shape[axis] = draw(st.integers(0, 3))
        result.append(draw(hnp.arrays(np.dtype(name), tuple(shape))))
    return result, axis


@given(case=joinable_arrays(vary_axis=True))
def test_concat_matches_numpy(case):
    arrays_, axis = case
    assert_same(xp.concat([xp.asarray(a) for a in arrays_], axis=axis), np.concatenate(arrays_, axis=axis))


@given(case=joinable_arrays(vary_axis=True))
def test_concat_with_axis_none_flattens(case):
    arrays_, _ = case
    assert_same(xp.concat([xp.asarray(a) for a in arrays_], axis=None), np.concatenate(arrays_, axis=None))


def test_concat_promotes_to_one_dtype():
    got = xp.concat([xp.asarray([1], dtype=xp.int8), xp.asarray([2.5], dtype=xp.float32)])
    assert_same(got, np.array([1.0, 2.5], dtype=np.float32))


@given(names=st.permutations(["float32", "int64", "uint64"]))
def test_concat_and_stack_promotion_does_not_depend_on_order(names):
    # int64 and uint64 alone meet at float64, but float32 absorbs both (docs/semantics.md, as in JAX).
    arrays_ = [xp.ones(1, dtype=getattr(xp, name)) for name in names]
    assert xp.concat(arrays_).dtype == xp.stack(arrays_).dtype == xp.result_type(*arrays_) == xp.float32


@given(case=joinable_arrays(vary_axis=False), data=st.data())
def test_stack_matches_numpy(case, data):
    arrays_, _ = case
    ndim = arrays_[0].ndim
    axis = data.draw(st.integers(-ndim - 1, ndim))
    assert_same(xp.stack([xp.asarray(a) for a in arrays_], axis=axis), np.stack(arrays_, axis=axis))


@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, min_side=0, max_side=3))
def test_broadcast_shapes_and_arrays_match_numpy(shapes):
    inputs = [np.arange(math.prod(s)).reshape(s) for s in shapes.input_shapes]
    assert xp.broadcast_shapes(*shapes.input_shapes) == np.broadcast_shapes(*shapes.input_shapes)
    got = xp.broadcast_arrays(*[xp.asarray(a) for a in inputs])
    assert len(got) == 3
    for g, e in zip(got, np.broadcast_arrays(*inputs)):
        assert_same(g, e)


@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=1, min_dims=0, max_dims=3, min_side=0, max_side=3))
def test_broadcast_to_matches_numpy(shapes):
    a = np.arange(math.prod(shapes.input_shapes[0])).reshape(shapes.input_shapes[0])
    assert_same(xp.broadcast_to(xp.asarray(a), shapes.result_shape), np.broadcast_to(a, shapes.result_shape))


@given(a=arrays(), data=st.data())
def test_moveaxis_matches_numpy(a, data):
    count = data.draw(st.integers(0, a.ndim))
    source = data.draw(hnp.valid_tuple_axes(a.ndim, min_size=count, max_size=count))
    destination = data.draw(hnp.valid_tuple_axes(a.ndim, min_size=count, max_size=count))
    assert_same(xp.moveaxis(xp.asarray(a), source, destination), np.moveaxis(a, source, destination))


def test_moveaxis_with_int_axes():
    a = np.arange(24).reshape(2, 3, 4)
    assert_same(xp.moveaxis(xp.asarray(a), -1, 0), np.moveaxis(a, -1, 0))


@given(a=arrays(), data=st.data())
def test_roll_matches_numpy(a, data):
    shifts = st.integers(-10, 10)
    if a.ndim == 0 or data.draw(st.booleans()):
        axis, shift = None, data.draw(shifts)
    else:
        # Repeated axes roll twice, as in NumPy.
        axis = tuple(data.draw(st.lists(st.integers(-a.ndim, a.ndim - 1), min_size=1, max_size=3)))
        shift = tuple(data.draw(shifts) for _ in axis) if data.draw(st.booleans()) else data.draw(shifts)
    assert_same(xp.roll(xp.asarray(a), shift, axis=axis), np.roll(a, shift, axis=axis))


@given(a=arrays(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)),
       repetitions=st.lists(st.integers(0, 3), max_size=4))
def test_tile_matches_numpy(a, repetitions):
    assert_same(xp.tile(xp.asarray(a), tuple(repetitions)), np.tile(a, repetitions))


@given(a=arrays(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3)), data=st.data())
def test_unstack_matches_numpy(a, data):
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    got = xp.unstack(xp.asarray(a), axis=axis)
    expected = [np.take(a, i, axis=axis) for i in range(a.shape[axis])]
    assert type(got) is tuple and len(got) == len(expected)
    for g, e in zip(got, expected):
        assert_same(g, e)


MANIPULATION_ERRORS = [
    (lambda: xp.reshape(xp.ones(6), (4, -1)), ValueError, "reshape"),
    (lambda: xp.reshape(xp.ones(6), (5,)), ValueError, "reshape"),
    (lambda: xp.reshape(xp.ones(6), (-1, -1)), ValueError, "reshape"),
    (lambda: xp.reshape(xp.ones(6), 6.0), TypeError, "reshape"),
    (lambda: xp.reshape(np.ones(6), (6,)), TypeError, "reshape"),
    (lambda: xp.permute_dims(xp.ones((2, 3)), (0,)), ValueError, "permute_dims"),
    (lambda: xp.permute_dims(xp.ones((2, 3)), (0, 0)), ValueError, "permute_dims"),
    (lambda: xp.permute_dims(xp.ones((2, 3)), (0, 2)), ValueError, "permute_dims"),
    (lambda: xp.permute_dims(xp.ones((2, 3)), 1), TypeError, "permute_dims"),
    (lambda: xp.expand_dims(xp.ones((2, 3)), axis=3), ValueError, "expand_dims"),
    (lambda: xp.expand_dims(xp.ones((2, 3)), axis=(0, -4)), ValueError, "expand_dims"),
    (lambda: xp.squeeze(xp.ones((1, 2)), axis=1), ValueError, "squeeze"),
    (lambda: xp.squeeze(xp.ones((1, 2)), axis=2), ValueError, "squeeze"),
    (lambda: xp.flip(xp.ones((1, 2)), axis=2), ValueError, "flip"),
    (lambda: xp.flip(xp.ones((1, 2)), axis=(0, 0)), ValueError, "flip"),
    (lambda: xp.concat([xp.ones((2, 3)), xp.ones((3, 2))]), ValueError, "concat"),
    (lambda: xp.concat([xp.ones(2), xp.ones((2, 1))]), ValueError, "concat"),
    (lambda: xp.concat([xp.ones(2), xp.ones(2)], axis=1), ValueError, "concat"),
    (lambda: xp.concat([xp.asarray(1.0), xp.asarray(2.0)]), ValueError, "concat"),
    (lambda: xp.concat(xp.ones((2, 2))), TypeError, "concat"),
    (lambda: xp.concat([]), TypeError, "concat"),
    (lambda: xp.concat([xp.ones(2), np.ones(2)]), TypeError, "concat"),
    (lambda: xp.stack([xp.ones(2), xp.ones(3)]), ValueError, "stack"),
    (lambda: xp.stack([xp.ones(2), xp.ones(2)], axis=2), ValueError, "stack"),
    (lambda: xp.broadcast_to(xp.ones(2), (3,)), ValueError, "broadcast_to"),
    (lambda: xp.broadcast_to(xp.ones((2, 3)), (3,)), ValueError, "broadcast_to"),
    (lambda: xp.broadcast_to(xp.ones(2), (-1, 2)), ValueError, "broadcast_to"),
    (lambda: xp.broadcast_to(xp.ones(2), (2.0,)), TypeError, "broadcast_to"),
    (lambda: xp.broadcast_arrays(xp.ones(2), xp.ones(3)), ValueError, "broadcast_arrays"),
    (lambda: xp.broadcast_shapes((2,), (3,)), ValueError, "broadcast_shapes"),
    (lambda: xp.broadcast_shapes((2, -1)), ValueError, "broadcast_shapes"),
    (lambda: xp.moveaxis(xp.ones((2, 3)), 2, 0), ValueError, "moveaxis"),
    (lambda: xp.moveaxis(xp.ones((2, 3)), (0, 1), (0,)), ValueError, "moveaxis"),
    (lambda: xp.moveaxis(xp.ones((2, 3)), (0, 0), (0, 1)), ValueError, "moveaxis"),
    (lambda: xp.roll(xp.ones((2, 3)), 1, axis=2), ValueError, "roll"),
    (lambda: xp.roll(xp.ones((2, 3)), (1, 2), axis=(0,)), ValueError, "roll"),
    (lambda: xp.roll(xp.ones((2, 3)), 1.5), TypeError, "roll"),
    (lambda: xp.tile(xp.ones(2), (-1,)), ValueError, "tile"),
    (lambda: xp.tile(xp.ones(2), (2.0,)), TypeError, "tile"),
    (lambda: xp.tile(xp.ones(2), 2), TypeError, "tile"),
    (lambda: xp.unstack(xp.asarray(1.0)), ValueError, "unstack"),
    (lambda: xp.unstack(xp.ones(2), axis=1), ValueError, "unstack"),
]


@pytest.mark.parametrize("call, error, name", MANIPULATION_ERRORS)
def test_manipulation_errors_name_the_function(call, error, name):
    with pytest.raises(error, match=name):
        call()


# matmul, matrix_transpose, @


# Elements for matmul: integers over their whole range (they wrap identically in
# both), floating values bounded so that no sum overflows.
MATMUL_ELEMENTS = {"int8": None, "int64": None, "uint16": None,
                   "float64": st.floats(-10, 10), "complex128": st.complex_numbers(max_magnitude=10)}


@given(shapes=hnp.mutually_broadcastable_shapes(signature="(m?,n),(n,p?)->(m?,p?)", max_dims=4, max_side=4),
       name=st.sampled_from(sorted(MATMUL_ELEMENTS)), data=st.data())
def test_matmul_matches_numpy(shapes, name, data):
    a, b = (data.draw(hnp.arrays(np.dtype(name), s, elements=MATMUL_ELEMENTS[name])) for s in shapes.input_shapes)
    got = np.asarray(xp.matmul(xp.asarray(a), xp.asarray(b)))
    expected = np.asarray(np.matmul(a, b))
    assert got.dtype == expected.dtype and got.shape == expected.shape
    # Floats may sum the (at most 4) products in another order: a few ulps.
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    np.testing.assert_array_equal(np.asarray(xp.asarray(a) @ xp.asarray(b)), got)


def test_matmul_promotes_mixed_dtypes():
    got = xp.asarray([[1, 2]], dtype=xp.int8) @ xp.asarray([[0.5], [0.25]], dtype=xp.float32)
    assert_same(got, np.array([[1.0]], dtype=np.float32))


def test_imatmul_rebinds_the_array():
    x = xp.asarray([[1.0, 2.0], [3.0, 4.0]])
    before = x
    x @= xp.asarray([[0.0, 1.0], [1.0, 0.0]])
    assert_same(x, np.array([[2.0, 1.0], [4.0, 3.0]]))
    assert x is before  # in place on the handle, functional underneath


@given(a=arrays(hnp.array_shapes(min_dims=2, max_dims=4, min_side=0, max_side=4)))
def test_matrix_transpose_matches_numpy(a):
    assert_same(xp.matrix_transpose(xp.asarray(a)), np.matrix_transpose(a))


@pytest.mark.parametrize("call, error, name", [
    (lambda: xp.matmul(xp.ones((2, 3)), xp.ones((2, 3))), ValueError, "matmul"),
    (lambda: xp.matmul(xp.ones((2, 2, 3)), xp.ones((3, 3, 2))), ValueError, "matmul"),   # batch sizes
    (lambda: xp.matmul(xp.asarray(1.0), xp.ones(3)), ValueError, "matmul"),
    (lambda: xp.matmul(xp.ones(3, dtype=xp.bool), xp.ones(3, dtype=xp.bool)), TypeError, "matmul"),
    (lambda: xp.matmul(xp.ones(3), np.ones(3)), TypeError, "matmul"),
    (lambda: xp.matmul(xp.ones(3), 2.0), TypeError, "matmul"),
    (lambda: xp.ones(3) @ [1.0, 2.0, 3.0], TypeError, "@"),
    (lambda: xp.matrix_transpose(xp.ones(3)), ValueError, "matrix_transpose"),
    (lambda: xp.matrix_transpose(np.ones((2, 2))), TypeError, "matrix_transpose"),
])
def test_matmul_errors_name_the_function(call, error, name):
    with pytest.raises(error, match=name):
        call()
