"""Data type functions: astype against NumPy, can_cast/isdtype/result_type
against array-api-strict (plus arrayx's documented extensions), finfo/iinfo."""

import itertools

import array_api_strict as strict
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import arrayx as xp
from oracle import DTYPE_NAMES

INT_NAMES = DTYPE_NAMES[1:9]
FLOAT_NAMES = ["float32", "float64", "complex64", "complex128"]
PAIRS = list(itertools.product(DTYPE_NAMES, DTYPE_NAMES))


def kind_of(name):
    return np.dtype(name).kind  # b, i, u, f or c


COMPLEX_TO_REAL = [(s, d) for s, d in PAIRS if kind_of(s) == "c" and kind_of(d) in "iuf"]
CASTS = [pair for pair in PAIRS if pair not in COMPLEX_TO_REAL]
KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric"]


def strict_result_type(a, b):
    """array-api-strict's promotion of two dtype names, or None where the standard has none."""
    try:
        return str(strict.result_type(getattr(strict, a), getattr(strict, b))).split(".")[-1]
    except TypeError:
        return None


def extended_result_type(a, b):
    """arrayx's promotion where the standard's table has none (docs/semantics.md, following JAX)."""
    if "bool" in (a, b):
        return b if a == "bool" else a  # bool promotes to any numeric type
    floating = [n for n in (a, b) if kind_of(n) in "fc"]
    if floating:
        return floating[0]  # an integer meeting a floating type gives that floating type
    return "float64"  # a signed integer with uint64: no integer dtype holds both


def cast_sample(src, dst):
    """Values of dtype `src` whose cast to `dst` NumPy defines (C leaves out-of-range float to int undefined)."""
    if kind_of(src) == "b":
        return np.array([True, False])
    if kind_of(src) in "iu":
        info = np.iinfo(src)  # int to int wraps modulo 2**bits in NumPy: defined
        return np.array([info.min, info.max, 0, 1, info.max // 3], dtype=src)
    values = [0.0, -0.0, 1.5, -2.75, 100.25]
    if kind_of(dst) in "fcb":
        values += [1e300, -1e300, np.inf, -np.inf, np.nan]  # 1e300 is inf in single precision
    if kind_of(dst) == "u":
        values = [v for v in values if v >= 0]
    if kind_of(src) == "c":
        values = [complex(v, -v) for v in values]
    with np.errstate(over="ignore"):
        return np.array(values, dtype=src)


# astype


@pytest.mark.parametrize("src, dst", CASTS)
def test_astype_matches_numpy_for_every_pair(src, dst):
    a = cast_sample(src, dst)
    got = xp.astype(xp.asarray(a), getattr(xp, dst))
    with np.errstate(over="ignore"):  # double 1e300 to single overflows to inf, as in arrayx
        expected = a.astype(dst)
    assert str(got.dtype) == dst
    np.testing.assert_array_equal(np.asarray(got), expected)


@given(data=st.data(), pair=st.sampled_from([(s, d) for s, d in CASTS if kind_of(s) in "biu" or kind_of(d) in "fcb"]))
def test_astype_of_random_values_matches_numpy(data, pair):
    # Only casts NumPy defines for every value: no floating to integer.
    src, dst = pair
    a = data.draw(hnp.arrays(np.dtype(src), hnp.array_shapes(min_dims=0, max_dims=2)))
    with np.errstate(over="ignore"):
        expected = a.astype(dst)
    np.testing.assert_array_equal(np.asarray(xp.astype(xp.asarray(a), getattr(xp, dst))), expected)


@pytest.mark.parametrize("src, dst", COMPLEX_TO_REAL)
def test_astype_complex_to_real_raises(src, dst):
    with pytest.raises(TypeError, match="astype"):
        xp.astype(xp.asarray([1 + 1j], dtype=getattr(xp, src)), getattr(xp, dst))


def test_astype_to_the_same_dtype_with_copy_false_returns_x():
    x = xp.asarray([1.0, 2.0])
    assert xp.astype(x, xp.float64, copy=False) is x


def test_astype_to_the_same_dtype_with_copy_true_is_a_new_array():
    x = xp.asarray([1.0, 2.0])
    y = xp.astype(x, xp.float64)
    assert y is not x
    np.testing.assert_array_equal(np.asarray(y), [1.0, 2.0])


def test_astype_to_another_dtype_with_copy_false_still_casts():
    y = xp.astype(xp.asarray([1.5, -2.5]), xp.int32, copy=False)
    assert y.dtype == xp.int32
    np.testing.assert_array_equal(np.asarray(y), [1, -2])


def test_astype_device_argument():
    x = xp.asarray([1, 2])
    assert xp.astype(x, xp.float32, device=x.device).device == x.device


@pytest.mark.parametrize("call, error", [
    (lambda: xp.astype(np.ones(2), xp.float32), TypeError),
    (lambda: xp.astype(xp.ones(2), "datetime64[s]"), TypeError),
    (lambda: xp.astype(xp.ones(2), None), TypeError),
    (lambda: xp.astype(xp.ones(2), xp.int8, device="gpu"), ValueError),
])
def test_astype_errors_name_astype(call, error):
    with pytest.raises(error, match="astype"):
        call()


# can_cast


@pytest.mark.parametrize("src, dst", PAIRS)
def test_can_cast_is_promotion_to_the_target(src, dst):
    expected = (strict_result_type(src, dst) or extended_result_type(src, dst)) == dst
    assert xp.can_cast(getattr(xp, src), getattr(xp, dst)) == expected


def test_can_cast_accepts_an_array_as_from():
    x = xp.asarray([1], dtype=xp.int16)
    assert xp.can_cast(x, xp.int32) and not xp.can_cast(x, xp.int8)


@pytest.mark.parametrize("args", [(1, xp.int8), (xp.int8, "datetime64[s]"), (xp.int8, None)])
def test_can_cast_rejects_non_dtypes(args):
    with pytest.raises(TypeError, match="can_cast"):
        xp.can_cast(*args)


# finfo, iinfo


@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_finfo_matches_numpy_with_python_floats(name):
    expected = np.finfo(name)
    for arg in (getattr(xp, name), xp.asarray(1, dtype=getattr(xp, name))):
        info = xp.finfo(arg)
        assert type(info.bits) is int and info.bits == expected.bits
        for field in ("eps", "max", "min", "smallest_normal"):
            value = getattr(info, field)
            assert type(value) is float and value == float(getattr(expected, field))


@pytest.mark.parametrize("name, real", [("float32", "float32"), ("float64", "float64"),
                                        ("complex64", "float32"), ("complex128", "float64")])
def test_finfo_dtype_is_the_real_dtype(name, real):
    assert xp.finfo(getattr(xp, name)).dtype == getattr(xp, real)


@pytest.mark.parametrize("name", INT_NAMES)
def test_iinfo_matches_numpy_with_python_ints(name):
    expected = np.iinfo(name)
    for arg in (getattr(xp, name), xp.asarray(1, dtype=getattr(xp, name))):
        info = xp.iinfo(arg)
        assert (type(info.bits), type(info.min), type(info.max)) == (int, int, int)
        assert (info.bits, info.min, info.max) == (expected.bits, int(expected.min), int(expected.max))
        assert info.dtype == getattr(xp, name)


@pytest.mark.parametrize("fn, name", [(xp.finfo, "int8"), (xp.finfo, "bool"), (xp.iinfo, "float32"),
                                      (xp.iinfo, "bool"), (xp.iinfo, "complex64")])
def test_info_of_the_wrong_kind_raises(fn, name):
    with pytest.raises(TypeError, match=fn.__name__):
        fn(getattr(xp, name))


@pytest.mark.parametrize("fn", [xp.finfo, xp.iinfo])
def test_info_of_a_non_dtype_raises(fn):
    with pytest.raises(TypeError, match=fn.__name__):
        fn("not a dtype")


# isdtype


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_isdtype_kind_strings_match_strict(name, kind):
    assert xp.isdtype(getattr(xp, name), kind) == strict.isdtype(getattr(strict, name), kind)


@given(name=st.sampled_from(DTYPE_NAMES),
       kinds=st.lists(st.sampled_from(KINDS) | st.sampled_from(DTYPE_NAMES).map(lambda n: getattr(xp, n)),
                      max_size=3))
def test_isdtype_of_a_tuple_is_any_of_its_kinds(name, kinds):
    dtype = getattr(xp, name)
    assert xp.isdtype(dtype, tuple(kinds)) == any(xp.isdtype(dtype, k) for k in kinds)


def test_isdtype_of_a_dtype_kind_is_equality():
    assert xp.isdtype(xp.int8, xp.int8) and not xp.isdtype(xp.int8, xp.int16)


@pytest.mark.parametrize("kind", ["floating", "integer", "", ("bool", "complex")])
def test_isdtype_unknown_kind_raises_value_error(kind):
    with pytest.raises(ValueError, match="isdtype"):
        xp.isdtype(xp.int8, kind)


@pytest.mark.parametrize("dtype, kind", [("not a dtype", "bool"), (xp.int8, 3), (xp.asarray(1), "integral")])
def test_isdtype_non_dtype_raises_type_error(dtype, kind):
    with pytest.raises(TypeError, match="isdtype"):
        xp.isdtype(dtype, kind)


# result_type


@pytest.mark.parametrize("a, b", PAIRS)
def test_result_type_of_two_dtypes(a, b):
    expected = strict_result_type(a, b) or extended_result_type(a, b)
    assert str(xp.result_type(getattr(xp, a), getattr(xp, b))) == expected


@given(names=st.lists(st.sampled_from(DTYPE_NAMES), min_size=1, max_size=4), data=st.data())
def test_result_type_does_not_depend_on_argument_order_or_form(names, data):
    args = [getattr(xp, n) if data.draw(st.booleans()) else xp.ones(1, dtype=getattr(xp, n)) for n in names]
    expected = xp.result_type(*[getattr(xp, n) for n in names])
    assert xp.result_type(*data.draw(st.permutations(args))) == expected


@pytest.mark.parametrize("name, scalar, expected", [
    ("int8", 1, "int8"), ("uint16", 7, "uint16"), ("float32", 1, "float32"), ("float32", 1.5, "float32"),
    ("float32", 1j, "complex64"), ("float64", 1j, "complex128"), ("complex64", 2.0, "complex64"),
    ("bool", True, "bool"), ("int8", True, "int8"), ("float32", False, "float32"),
    # Beyond the standard (docs/semantics.md): the scalar's default dtype.
    ("int8", 1.5, "float64"), ("bool", 1, "int64"), ("int16", 1j, "complex128"),
])
def test_result_type_with_a_python_scalar(name, scalar, expected):
    assert xp.result_type(getattr(xp, name), scalar) == getattr(xp, expected)
    assert xp.result_type(scalar, xp.ones(2, dtype=getattr(xp, name))) == getattr(xp, expected)


@pytest.mark.parametrize("args, error", [
    ((), TypeError),
    ((1, 2.0), TypeError),                     # scalars alone have no array dtype to meet
    ((xp.int8, "datetime64[s]"), TypeError),
    ((xp.int8, np.ones(2)), TypeError),
    ((xp.int8, 1000), OverflowError),          # as int8 arrays + 1000 does
    ((xp.uint8, -1), OverflowError),
])
def test_result_type_errors_name_result_type(args, error):
    with pytest.raises(error, match="result_type"):
        xp.result_type(*args)
