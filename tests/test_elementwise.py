"""The element-wise chapter: every function and operator against NumPy, the
standard's special cases, and the errors.

The differential tests draw NumPy inputs with hypothesis over every dtype a
function accepts, run arrayx on `xp.asarray` copies and compare values, dtype
and shape with NumPy's result on the same inputs. The expected dtype comes from
the standard's rule for the function, not from NumPy. Inputs where NumPy itself
departs from the standard are left out of the differential tests (each domain
below says which) and checked against the standard's text in the special-case
tables instead (array-api src/array_api_stubs/_2025_12/elementwise_functions.py).
"""

import math
import operator
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import arrayx as xp

BOOL = (np.dtype(np.bool_),)
INTEGER = tuple(np.dtype(n) for n in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"))
# float16 is arrayx's extension dtype, a real floating dtype like the standard's two.
REAL_FLOATING = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))
COMPLEX = (np.dtype(np.complex64), np.dtype(np.complex128))
ALL = BOOL + INTEGER + REAL_FLOATING + COMPLEX

# The dtypes each category of the standard admits.
DTYPES = {
    "bool": BOOL,
    "integer": INTEGER,
    "integer or bool": INTEGER + BOOL,
    "real floating": REAL_FLOATING,
    "complex floating": COMPLEX,
    "floating": REAL_FLOATING + COMPLEX,
    "real numeric": INTEGER + REAL_FLOATING,
    "numeric": INTEGER + REAL_FLOATING + COMPLEX,
    "any": ALL,
}


# Functions of a floating category, and divide, compute integer and bool
# arrays in the default floating dtype, float64, as NumPy and JAX do
# (docs/semantics.md; NumPy itself gives float16 for int8 and bool).
COMPUTED_AS_FLOAT64 = INTEGER + BOOL


def computes_as_float64(row, dtype):
    """Whether the function of table row `row` computes an argument of `dtype` as float64."""
    name, _, category = row[:3]
    return dtype in COMPUTED_AS_FLOAT64 and (category in ("floating", "real floating") or name == "divide")


def xp_dtype(dtype):
    """The arrayx dtype of a NumPy dtype."""
    return getattr(xp, dtype.name)


def result_dtype(rule, dtype):
    """The standard's result dtype for an input of `dtype` under `rule`."""
    if rule == "bool":
        return BOOL[0]
    if rule == "real":  # abs, real, imag: the real dtype of a complex input
        return {COMPLEX[0]: np.dtype(np.float32), COMPLEX[1]: np.dtype(np.float64)}.get(dtype, dtype)
    if rule == "floating":  # divide: arrayx divides integers and bool as the default float
        return dtype if dtype.kind in "fc" else np.dtype(np.float64)
    return dtype


# Accuracy classes. EXACT: the standard fixes the result bit for bit (integer and
# bool arithmetic, comparisons, rounding, sign manipulation, IEEE add/subtract).
# IEEE: correctly rounded for real floats (IEEE 754 multiply, divide, sqrt),
# compared exactly there; complex results go through several roundings.
# LIBM: transcendental, compared with the tolerance below.
EXACT, IEEE, LIBM = "exact", "ieee", "libm"

# arrayx's CPU executor calls the same NumPy kernels, so results agree to the last
# bit in practice; the tolerance admits another kernel that is accurate to a few
# ulp (libm and SIMD implementations are within 4 ulp: ~5e-7 for float32,
# ~9e-16 for float64), with headroom for complex functions that compose several
# such steps. NumPy computes float16 functions in float32 and rounds once (within
# one float16 ulp, 9.8e-4), hence 2e-3 there. Results below the smallest normal
# number carry fewer significant bits, hence the absolute tolerance of one
# smallest normal.
RTOL = {2: 2e-3, 4: 1e-6, 8: 1e-13}

# Accuracy classes that differ for complex operands: abs of a complex number is
# its modulus, hypot(re, im), within an ulp but not exact (NumPy's SIMD loops and
# C's hypot, which a device may call, differ in the last bit).
COMPLEX_ACCURACY = {"abs": LIBM}

# Complex products compute each component as a sum of two real products, ac - bd
# and ad + bc. Whether one product is fused with the sum (NumPy's AVX-512 loops
# and NVRTC's default contraction fuse it, g++ for the emulated device does not)
# moves a component that cancels by more than a relative tolerance: each way is
# within eps (|ac| + |bd|) <= eps |x1| |x2| of the exact component (Higham,
# Accuracy and Stability of Numerical Algorithms, 3.6), so two ways are within
# 2 eps |x1| |x2| of each other. Where |x1| |x2| overflows (of the finite
# components), a product alone may overflow, to an infinity or to NaN beside
# another infinity, where a fused one does not: no value is expected there.
COMPLEX_PRODUCTS = {"multiply", "square"}

# Input domains. NumPy departs from the standard (or the standard leaves the
# result unspecified) outside them; those inputs are in the special-case tables.
#   finite:         floating inputs finite (NumPy's floor_divide at infinities)
#   finite complex: complex inputs finite (NumPy's complex expm1 and tanh at
#                   infinities, see arrayx/_cpu/special.py)
#   divisor:        integer x2 nonzero (integer division by zero is unspecified)
#   exponent:       integer x2 >= 0 (negative integer powers are unspecified)
#   shift:          integer x2 in [0, bit width) (the standard requires x2 >= 0;
#                   wider shifts are unspecified)
ANYWHERE = frozenset()


def domain(*tags):
    return frozenset(tags)


# name, NumPy reference, dtype category accepted, result dtype rule, accuracy, domain
UNARY = [
    ("abs", np.abs, "numeric", "real", EXACT, ANYWHERE),
    ("acos", np.arccos, "floating", "same", LIBM, ANYWHERE),
    ("acosh", np.arccosh, "floating", "same", LIBM, ANYWHERE),
    ("asin", np.arcsin, "floating", "same", LIBM, ANYWHERE),
    ("asinh", np.arcsinh, "floating", "same", LIBM, ANYWHERE),
    ("atan", np.arctan, "floating", "same", LIBM, ANYWHERE),
    ("atanh", np.arctanh, "floating", "same", LIBM, ANYWHERE),
    ("bitwise_invert", np.invert, "integer or bool", "same", EXACT, ANYWHERE),
    ("ceil", np.ceil, "real numeric", "same", EXACT, ANYWHERE),
    ("conj", np.conj, "numeric", "same", EXACT, ANYWHERE),
    ("cos", np.cos, "floating", "same", LIBM, ANYWHERE),
    ("cosh", np.cosh, "floating", "same", LIBM, ANYWHERE),
    ("exp", np.exp, "floating", "same", LIBM, ANYWHERE),
    ("expm1", np.expm1, "floating", "same", LIBM, domain("finite complex")),
    ("floor", np.floor, "real numeric", "same", EXACT, ANYWHERE),
    ("imag", np.imag, "complex floating", "real", EXACT, ANYWHERE),
    ("isfinite", np.isfinite, "numeric", "bool", EXACT, ANYWHERE),
    ("isinf", np.isinf, "numeric", "bool", EXACT, ANYWHERE),
    ("isnan", np.isnan, "numeric", "bool", EXACT, ANYWHERE),
    ("log", np.log, "floating", "same", LIBM, ANYWHERE),
    ("log1p", np.log1p, "floating", "same", LIBM, ANYWHERE),
    ("log2", np.log2, "floating", "same", LIBM, ANYWHERE),
    ("log10", np.log10, "floating", "same", LIBM, ANYWHERE),
    ("logical_not", np.logical_not, "bool", "bool", EXACT, ANYWHERE),
    ("negative", np.negative, "numeric", "same", EXACT, ANYWHERE),
    ("positive", np.positive, "numeric", "same", EXACT, ANYWHERE),
    # Since 2024.12 real() accepts every numeric dtype (a real input is its own real part).
    ("real", np.real, "numeric", "real", EXACT, ANYWHERE),
    ("reciprocal", lambda x: np.divide(x.dtype.type(1), x), "floating", "same", IEEE, ANYWHERE),
    ("round", np.round, "numeric", "same", EXACT, ANYWHERE),
    ("sign", np.sign, "numeric", "same", IEEE, ANYWHERE),
    ("signbit", np.signbit, "real floating", "bool", EXACT, ANYWHERE),
    ("sin", np.sin, "floating", "same", LIBM, ANYWHERE),
    ("sinh", np.sinh, "floating", "same", LIBM, ANYWHERE),
    ("sqrt", np.sqrt, "floating", "same", IEEE, ANYWHERE),
    ("square", np.square, "numeric", "same", IEEE, ANYWHERE),
    ("tan", np.tan, "floating", "same", LIBM, ANYWHERE),
    ("tanh", np.tanh, "floating", "same", LIBM, domain("finite complex")),
    ("trunc", np.trunc, "real numeric", "same", EXACT, ANYWHERE),
]

BINARY = [
    ("add", np.add, "numeric", "same", EXACT, ANYWHERE),
    ("atan2", np.arctan2, "real floating", "same", LIBM, ANYWHERE),
    ("bitwise_and", np.bitwise_and, "integer or bool", "same", EXACT, ANYWHERE),
    ("bitwise_left_shift", np.left_shift, "integer", "same", EXACT, domain("shift")),
    ("bitwise_or", np.bitwise_or, "integer or bool", "same", EXACT, ANYWHERE),
    ("bitwise_right_shift", np.right_shift, "integer", "same", EXACT, domain("shift")),
    ("bitwise_xor", np.bitwise_xor, "integer or bool", "same", EXACT, ANYWHERE),
    ("copysign", np.copysign, "real floating", "same", EXACT, ANYWHERE),
    ("divide", np.divide, "numeric", "floating", IEEE, ANYWHERE),
    ("equal", np.equal, "any", "bool", EXACT, ANYWHERE),
    ("floor_divide", np.floor_divide, "real numeric", "same", EXACT, domain("finite", "divisor")),
    ("greater", np.greater, "real numeric", "bool", EXACT, ANYWHERE),
    ("greater_equal", np.greater_equal, "real numeric", "bool", EXACT, ANYWHERE),
    ("hypot", np.hypot, "real floating", "same", LIBM, ANYWHERE),
    ("less", np.less, "real numeric", "bool", EXACT, ANYWHERE),
    ("less_equal", np.less_equal, "real numeric", "bool", EXACT, ANYWHERE),
    ("logaddexp", np.logaddexp, "real floating", "same", LIBM, ANYWHERE),
    ("logical_and", np.logical_and, "bool", "bool", EXACT, ANYWHERE),
    ("logical_or", np.logical_or, "bool", "bool", EXACT, ANYWHERE),
    ("logical_xor", np.logical_xor, "bool", "bool", EXACT, ANYWHERE),
    ("maximum", np.maximum, "real numeric", "same", EXACT, ANYWHERE),
    ("minimum", np.minimum, "real numeric", "same", EXACT, ANYWHERE),
    ("multiply", np.multiply, "numeric", "same", IEEE, ANYWHERE),
    ("nextafter", np.nextafter, "real floating", "same", EXACT, ANYWHERE),
    ("not_equal", np.not_equal, "any", "bool", EXACT, ANYWHERE),
    ("pow", np.power, "numeric", "same", LIBM, domain("exponent")),
    ("remainder", np.remainder, "real numeric", "same", EXACT, domain("divisor")),
    ("subtract", np.subtract, "numeric", "same", EXACT, ANYWHERE),
]

UNARY_BY_NAME = {row[0]: row for row in UNARY}
BINARY_BY_NAME = {row[0]: row for row in BINARY}


def test_tables_cover_the_standard():
    standard = {
        "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and",
        "bitwise_invert", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
        "ceil", "clip", "conj", "copysign", "cos", "cosh", "divide", "equal", "exp", "expm1", "floor",
        "floor_divide", "greater", "greater_equal", "hypot", "imag", "isfinite", "isinf", "isnan",
        "less", "less_equal", "log", "log1p", "log2", "log10", "logaddexp", "logical_and",
        "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "multiply", "negative",
        "nextafter", "not_equal", "positive", "pow", "real", "reciprocal", "remainder", "round",
        "sign", "signbit", "sin", "sinh", "sqrt", "square", "subtract", "tan", "tanh", "trunc", "where",
    }
    # clip and where have tests of their own below.
    assert set(UNARY_BY_NAME) | set(BINARY_BY_NAME) | {"clip", "where"} == standard


def cases(table):
    return [pytest.param(row, dtype, id=f"{row[0]}-{dtype}") for row in table for dtype in DTYPES[row[2]]]


def elements(dtype, operand, tags):
    """Hypothesis elements of `dtype` for operand 0 (x1) or 1 (x2) within a domain."""
    kwargs = {}
    if dtype.kind in "fc" and ("finite" in tags or ("finite complex" in tags and dtype.kind == "c")):
        kwargs = {"allow_nan": False, "allow_infinity": False}
    if dtype.kind in "iu" and operand == 1:
        if "exponent" in tags:
            kwargs = {"min_value": 0}
        if "shift" in tags:
            kwargs = {"min_value": 0, "max_value": 8 * dtype.itemsize - 1}
    strategy = hnp.from_dtype(dtype, **kwargs)
    if "divisor" in tags and operand == 1 and dtype.kind in "iu":
        strategy = strategy.filter(lambda v: v != 0)
    return strategy


SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


def broadcastable_shapes(n):
    return hnp.mutually_broadcastable_shapes(num_shapes=n, min_dims=0, max_dims=3, min_side=0, max_side=4)


def reference(fn, *args):
    with np.errstate(all="ignore"):
        return np.asarray(fn(*args))


def assert_values(actual, expected, accuracy, atol=None):
    """`actual` (arrayx's forced result) matches NumPy's `expected`.

    NaN and infinity positions must match exactly, component by component for
    complex results; finite values exactly or within the accuracy's tolerance,
    plus `atol` (an array of expected's shape) where given.
    """
    assert actual.shape == expected.shape
    if expected.dtype.kind not in "fc":
        np.testing.assert_array_equal(actual, expected)
        return
    exact = accuracy == EXACT or (accuracy == IEEE and expected.dtype.kind == "f")
    parts = (np.real, np.imag) if expected.dtype.kind == "c" else (np.asarray,)
    for part in parts:
        a, e = part(actual), part(expected)
        nan, inf = np.isnan(e), np.isinf(e)
        np.testing.assert_array_equal(np.isnan(a), nan)
        np.testing.assert_array_equal(np.isinf(a), inf)
        np.testing.assert_array_equal(a[inf], e[inf])
        finite = ~(nan | inf)
        if exact:
            np.testing.assert_array_equal(a[finite], e[finite])
        else:
            finfo = np.finfo(e.dtype)
            rtol = RTOL[finfo.dtype.itemsize]
            if atol is None:
                np.testing.assert_allclose(a[finite], e[finite], rtol=rtol, atol=finfo.smallest_normal)
            else:   # assert_allclose takes one atol for all elements
                bound = atol[finite] + rtol * np.abs(e[finite]) + finfo.smallest_normal
                np.testing.assert_array_less(np.abs(a[finite] - e[finite]), bound)


def check(result, expected, dtype, accuracy):
    """An arrayx result has the standard's dtype, NumPy's shape and NumPy's values."""
    assert result.dtype == xp_dtype(dtype)
    assert result.shape == expected.shape
    assert_values(np.asarray(result), expected.astype(dtype, copy=False), accuracy)


def check_complex_product(result, expected, x1, x2):
    """check() for a complex x1 * x2, within the bound of COMPLEX_PRODUCTS where
    |x1| |x2| of the operands' finite components does not overflow."""
    assert result.dtype == xp_dtype(expected.dtype)
    assert result.shape == expected.shape
    x1, x2, actual = np.broadcast_arrays(x1, x2, np.asarray(result))
    finfo = np.finfo(expected.real.dtype)

    def finite_modulus(x):   # in float64, so complex64 moduli do not overflow
        return np.abs(np.nan_to_num(x.astype(np.complex128), nan=0.0, posinf=0.0, neginf=0.0))
    with np.errstate(over="ignore"):
        magnitude = finite_modulus(x1) * finite_modulus(x2)
    compared = magnitude <= finfo.max
    assert_values(actual[compared], expected[compared], IEEE, 2 * finfo.eps * magnitude[compared])


@pytest.mark.parametrize("row, dtype", cases(UNARY))
@given(data=st.data())
def test_unary_matches_numpy(row, dtype, data):
    name, ref, _, rule, accuracy, tags = row
    if dtype.kind == "c":
        accuracy = COMPLEX_ACCURACY.get(name, accuracy)
    x = data.draw(hnp.arrays(dtype, SHAPES, elements=elements(dtype, 0, tags)), label="x")
    if dtype.kind == "c" and name in COMPLEX_PRODUCTS:
        check_complex_product(getattr(xp, name)(xp.asarray(x)), reference(ref, x), x, x)
        return
    check(getattr(xp, name)(xp.asarray(x)), reference(ref, x), result_dtype(rule, dtype), accuracy)


@pytest.mark.parametrize("row, dtype", cases(BINARY))
@given(data=st.data())
def test_binary_matches_numpy(row, dtype, data):
    """Array operands broadcast against each other, and a Python scalar on
    either side takes the array's dtype."""
    name, ref, _, rule, accuracy, tags = row
    fn, out = getattr(xp, name), result_dtype(rule, dtype)
    shapes = data.draw(broadcastable_shapes(2), label="shapes").input_shapes
    x1 = data.draw(hnp.arrays(dtype, shapes[0], elements=elements(dtype, 0, tags)), label="x1")
    x2 = data.draw(hnp.arrays(dtype, shapes[1], elements=elements(dtype, 1, tags)), label="x2")
    s1 = data.draw(elements(dtype, 0, tags), label="scalar x1").item()
    s2 = data.draw(elements(dtype, 1, tags), label="scalar x2").item()
    # NumPy's operands, then arrayx's (arrays, or a Python scalar on either side)
    calls = [(x1, x2, xp.asarray(x1), xp.asarray(x2)),
             (x1, np.asarray(s2, dtype), xp.asarray(x1), s2),
             (np.asarray(s1, dtype), x2, s1, xp.asarray(x2))]
    for a1, a2, left, right in calls:
        if dtype.kind == "c" and name in COMPLEX_PRODUCTS:
            check_complex_product(fn(left, right), reference(ref, a1, a2), a1, a2)
        else:
            check(fn(left, right), reference(ref, a1, a2), out, accuracy)


@pytest.mark.parametrize("row, dtype", [
    pytest.param(row, dtype, id=f"{row[0]}-{dtype}") for row in UNARY + BINARY for dtype in ALL
    if computes_as_float64(row, dtype)])
def test_floating_functions_compute_integer_and_bool_arrays_as_float64(row, dtype):
    """sin(int array), atan2 of two (broadcast, or beside a Python scalar),
    divide of bools: float64 results with NumPy's values for the arrays cast
    to float64. The values span the dtype (its bounds, 0, 1); the float64
    kernels themselves are the differential tests' above."""
    name, ref, _, rule, accuracy, _ = row
    left, right = operands(dtype)
    out = result_dtype(rule, np.dtype(np.float64))
    fn = getattr(xp, name)
    f64 = np.float64
    if name in UNARY_BY_NAME:
        check(fn(xp.asarray(left)), reference(ref, left.astype(f64)), out, accuracy)
        return
    check(fn(xp.asarray(left), xp.asarray(right)), reference(ref, left.astype(f64), right.astype(f64)), out, accuracy)
    scalar = python_scalars(dtype)[0]
    check(fn(scalar, xp.asarray(right)), reference(ref, f64(scalar), right.astype(f64)), out, accuracy)


@pytest.mark.parametrize("dtype", ALL, ids=str)
@given(data=st.data())
def test_where_matches_numpy(dtype, data):
    shapes = data.draw(broadcastable_shapes(3), label="shapes").input_shapes
    condition = data.draw(hnp.arrays(np.bool_, shapes[0]), label="condition")
    x1 = data.draw(hnp.arrays(dtype, shapes[1]), label="x1")
    x2 = data.draw(hnp.arrays(dtype, shapes[2]), label="x2")
    cond = xp.asarray(condition)
    check(xp.where(cond, xp.asarray(x1), xp.asarray(x2)), np.where(condition, x1, x2), dtype, EXACT)
    s = data.draw(hnp.from_dtype(dtype), label="scalar").item()
    check(xp.where(cond, xp.asarray(x1), s), np.where(condition, x1, np.asarray(s, dtype)), dtype, EXACT)
    check(xp.where(cond, s, xp.asarray(x2)), np.where(condition, np.asarray(s, dtype), x2), dtype, EXACT)


@pytest.mark.parametrize("dtype", DTYPES["real numeric"], ids=str)
@given(data=st.data())
def test_clip_matches_numpy(dtype, data):
    """clip(x, min, max) with array bounds (either may be None) broadcasts all three."""
    shapes = data.draw(broadcastable_shapes(3), label="shapes").input_shapes
    x = data.draw(hnp.arrays(dtype, shapes[0]), label="x")
    a = data.draw(hnp.arrays(dtype, shapes[1]), label="a")
    b = data.draw(hnp.arrays(dtype, shapes[2]), label="b")
    # min > max is unspecified: order the bounds (NaN stays NaN in both).
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    use_lo, use_hi = data.draw(st.booleans(), label="min"), data.draw(st.booleans(), label="max")
    expected = x
    if use_lo:
        expected = np.maximum(expected, lo)
    if use_hi:
        expected = np.minimum(expected, hi)
    result = xp.clip(xp.asarray(x), min=xp.asarray(lo) if use_lo else None, max=xp.asarray(hi) if use_hi else None)
    check(result, np.asarray(expected), dtype, EXACT)


@pytest.mark.parametrize("dtype", DTYPES["real numeric"], ids=str)
@given(data=st.data())
def test_clip_with_python_scalar_bounds(dtype, data):
    x = data.draw(hnp.arrays(dtype, SHAPES), label="x")
    no_nan = {"allow_nan": False} if dtype.kind == "f" else {}  # sorted() needs ordered bounds
    lo, hi = sorted(data.draw(st.lists(hnp.from_dtype(dtype, **no_nan), min_size=2, max_size=2), label="bounds"))
    lo, hi = lo.item(), hi.item()
    check(xp.clip(xp.asarray(x), lo, hi), np.minimum(np.maximum(x, np.asarray(lo, dtype)), np.asarray(hi, dtype)), dtype, EXACT)


def test_clip_without_bounds_returns_the_values():
    x = np.array([-1.5, np.nan, 2.0])
    check(xp.clip(xp.asarray(x)), x, x.dtype, EXACT)


def test_clip_nan_bound_gives_nan():
    data = np.array([-1.0, 0.5, 3.0])
    x = xp.asarray(data)
    check(xp.clip(x, min=math.nan), np.full(3, np.nan), data.dtype, EXACT)
    check(xp.clip(x, max=xp.asarray(np.array([np.nan, 1.0, 1.0]))), np.array([np.nan, 0.5, 1.0]), data.dtype, EXACT)


def test_rounding_integers_returns_the_same_values():
    """ceil, floor, round and trunc of an integer array are the identity, in its dtype."""
    x = np.array([-128, -1, 0, 1, 127], dtype=np.int8)
    for name in ("ceil", "floor", "round", "trunc"):
        check(getattr(xp, name)(xp.asarray(x)), x, x.dtype, EXACT)


def test_integer_pow_with_negative_exponent_truncates_toward_zero():
    """Unspecified by the standard; arrayx computes 1 / x1**|x2| truncated, as C does."""
    base = np.array([2, -1, -1, 1, 5], dtype=np.int32)
    exponent = np.array([-1, -3, -2, -5, -2], dtype=np.int32)
    check(xp.pow(xp.asarray(base), xp.asarray(exponent)), np.array([0, -1, 1, 1, 0], dtype=np.int32), base.dtype, EXACT)


@pytest.mark.parametrize("dtype, exponent", [(d, 2) for d in INTEGER + REAL_FLOATING] +
                         [(d, 2.0) for d in REAL_FLOATING], ids=str)
def test_squaring_with_a_scalar_two_gives_numpys_square_bit_for_bit(dtype, exponent):
    """`x ** 2` runs as x * x (NumPy's operator runs np.square): the one
    rounding of the exact square, special cases included (-0, +-inf, NaN)."""
    if dtype.kind == "f":
        special = [-0.0, 0.0, math.inf, -math.inf, math.nan, 1e300, -3.5]
        values = np.concatenate([np.array(special), np.random.default_rng(8).standard_normal(100) * 1e3])
    else:
        info = np.iinfo(dtype)
        values = np.linspace(info.min, info.max, 101)
    with np.errstate(all="ignore"):   # 1e300 is inf in float16 and float32
        a = values.astype(dtype)
        expected = np.square(a)
    for got in (xp.asarray(a) ** exponent, xp.pow(xp.asarray(a), exponent)):
        got = np.asarray(got)
        assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()


def test_an_integer_array_to_a_float_two_is_a_float_array():
    got = xp.asarray(np.array([3, -4], np.int32)) ** 2.0
    assert got.dtype == xp.float64
    np.testing.assert_array_equal(np.asarray(got), [9.0, 16.0])


# --- special cases -----------------------------------------------------------

INF, NAN, PI = math.inf, math.nan, math.pi
BIG = 6e4  # a large value, finite in every real floating dtype (float16's largest is 65504)


class AnySign(float):
    """An expected zero or infinity whose sign the standard leaves unspecified."""


ANY0 = AnySign(0.0)
ANYINF = AnySign(INF)

# Functions whose specification fixes the sign of a NaN result.
NAN_SIGN_SPECIFIED = {"copysign"}


def matches(actual, expected, nan_sign=False, rel_tol=1e-6):
    """One result component against the standard's value.

    Exact values compare with their sign (so -0 is not +0); NaN matches any NaN
    unless its sign is specified; multiples of π are "implementation-dependent
    approximations", so everything is compared to a relative 1e-6 (float16
    results: `approximation(dtype)`).
    """
    if math.isnan(expected):
        return math.isnan(actual) and (not nan_sign or math.copysign(1, actual) == math.copysign(1, expected))
    if isinstance(expected, AnySign):
        return abs(actual) == abs(expected)
    return math.isclose(actual, expected, rel_tol=rel_tol) and math.copysign(1, actual) == math.copysign(1, expected)


def approximation(dtype):
    """The relative tolerance for the standard's values in `dtype`: rounding π/2 to
    float16 is off by up to half its ulp, 2**-11 relative."""
    return 2.0 ** -11 if dtype == np.float16 else 1e-6


def case_id(name, args, expected):
    return f"{name}({', '.join(map(repr, args))})->{expected!r}"


# name, x, expected: the standard's special cases for real floating inputs.
UNARY_CASES = [
    ("abs", NAN, NAN), ("abs", -0.0, 0.0), ("abs", -INF, INF), ("abs", INF, INF), ("abs", -2.5, 2.5),
    ("acos", NAN, NAN), ("acos", 1.5, NAN), ("acos", -1.5, NAN), ("acos", 1.0, 0.0),
    ("acosh", NAN, NAN), ("acosh", 0.5, NAN), ("acosh", 1.0, 0.0), ("acosh", INF, INF),
    ("asin", NAN, NAN), ("asin", 1.5, NAN), ("asin", -1.5, NAN), ("asin", 0.0, 0.0), ("asin", -0.0, -0.0),
    ("asinh", NAN, NAN), ("asinh", 0.0, 0.0), ("asinh", -0.0, -0.0), ("asinh", INF, INF), ("asinh", -INF, -INF),
    ("atan", NAN, NAN), ("atan", 0.0, 0.0), ("atan", -0.0, -0.0), ("atan", INF, PI / 2), ("atan", -INF, -PI / 2),
    ("atanh", NAN, NAN), ("atanh", -1.5, NAN), ("atanh", 1.5, NAN), ("atanh", -1.0, -INF), ("atanh", 1.0, INF),
    ("atanh", 0.0, 0.0), ("atanh", -0.0, -0.0),
    ("ceil", INF, INF), ("ceil", -INF, -INF), ("ceil", 0.0, 0.0), ("ceil", -0.0, -0.0), ("ceil", NAN, NAN),
    ("ceil", -0.5, -0.0), ("ceil", 2.0, 2.0), ("ceil", 2.25, 3.0),
    ("cos", NAN, NAN), ("cos", 0.0, 1.0), ("cos", -0.0, 1.0), ("cos", INF, NAN), ("cos", -INF, NAN),
    ("cosh", NAN, NAN), ("cosh", 0.0, 1.0), ("cosh", -0.0, 1.0), ("cosh", INF, INF), ("cosh", -INF, INF),
    ("exp", NAN, NAN), ("exp", 0.0, 1.0), ("exp", -0.0, 1.0), ("exp", INF, INF), ("exp", -INF, 0.0),
    ("expm1", NAN, NAN), ("expm1", 0.0, 0.0), ("expm1", -0.0, -0.0), ("expm1", INF, INF), ("expm1", -INF, -1.0),
    ("floor", INF, INF), ("floor", -INF, -INF), ("floor", 0.0, 0.0), ("floor", -0.0, -0.0), ("floor", NAN, NAN),
    ("floor", 0.5, 0.0), ("floor", -2.25, -3.0),
    ("log", NAN, NAN), ("log", -1.0, NAN), ("log", 0.0, -INF), ("log", -0.0, -INF), ("log", 1.0, 0.0), ("log", INF, INF),
    ("log1p", NAN, NAN), ("log1p", -2.0, NAN), ("log1p", -1.0, -INF), ("log1p", -0.0, -0.0), ("log1p", 0.0, 0.0),
    ("log1p", INF, INF),
    ("log2", NAN, NAN), ("log2", -1.0, NAN), ("log2", 0.0, -INF), ("log2", -0.0, -INF), ("log2", 1.0, 0.0),
    ("log2", INF, INF),
    ("log10", NAN, NAN), ("log10", -1.0, NAN), ("log10", 0.0, -INF), ("log10", -0.0, -INF), ("log10", 1.0, 0.0),
    ("log10", INF, INF),
    ("negative", 0.0, -0.0), ("negative", -0.0, 0.0), ("negative", INF, -INF), ("negative", NAN, NAN),
    ("positive", -0.0, -0.0), ("positive", -INF, -INF), ("positive", NAN, NAN),
    # reciprocal is 1.0 / x (divide's cases).
    ("reciprocal", 0.0, INF), ("reciprocal", -0.0, -INF), ("reciprocal", INF, 0.0), ("reciprocal", -INF, -0.0),
    ("reciprocal", NAN, NAN),
    ("round", INF, INF), ("round", -INF, -INF), ("round", 0.0, 0.0), ("round", -0.0, -0.0), ("round", NAN, NAN),
    ("round", 2.5, 2.0), ("round", 3.5, 4.0), ("round", -2.5, -2.0), ("round", -0.25, -0.0), ("round", 0.5, 0.0),
    # "the result is 0": read as +0, as the official array-api-tests do.
    ("sign", -2.0, -1.0), ("sign", 0.0, 0.0), ("sign", -0.0, 0.0), ("sign", 3.0, 1.0), ("sign", NAN, NAN),
    ("sign", INF, 1.0), ("sign", -INF, -1.0),
    ("sin", NAN, NAN), ("sin", 0.0, 0.0), ("sin", -0.0, -0.0), ("sin", INF, NAN), ("sin", -INF, NAN),
    ("sinh", NAN, NAN), ("sinh", 0.0, 0.0), ("sinh", -0.0, -0.0), ("sinh", INF, INF), ("sinh", -INF, -INF),
    ("sqrt", NAN, NAN), ("sqrt", -1.0, NAN), ("sqrt", 0.0, 0.0), ("sqrt", -0.0, -0.0), ("sqrt", INF, INF),
    # square is x * x (multiply's cases).
    ("square", -0.0, 0.0), ("square", -INF, INF), ("square", NAN, NAN),
    ("tan", NAN, NAN), ("tan", 0.0, 0.0), ("tan", -0.0, -0.0), ("tan", INF, NAN), ("tan", -INF, NAN),
    ("tanh", NAN, NAN), ("tanh", 0.0, 0.0), ("tanh", -0.0, -0.0), ("tanh", INF, 1.0), ("tanh", -INF, -1.0),
    ("trunc", INF, INF), ("trunc", -INF, -INF), ("trunc", 0.0, 0.0), ("trunc", -0.0, -0.0), ("trunc", NAN, NAN),
    ("trunc", -0.75, -0.0), ("trunc", 2.75, 2.0),
]

# name, x, expected (a bool) for the predicates.
PREDICATE_CASES = [
    ("isfinite", INF, False), ("isfinite", -INF, False), ("isfinite", NAN, False), ("isfinite", -0.0, True),
    ("isfinite", BIG, True),
    ("isinf", INF, True), ("isinf", -INF, True), ("isinf", NAN, False), ("isinf", BIG, False),
    ("isnan", NAN, True), ("isnan", INF, False), ("isnan", 0.0, False),
    ("signbit", 0.0, False), ("signbit", -0.0, True), ("signbit", INF, False), ("signbit", -INF, True),
    ("signbit", 2.0, False), ("signbit", -2.0, True), ("signbit", NAN, False), ("signbit", -NAN, True),
]

# name, x1, x2, expected: the standard's special cases for real floating inputs.
BINARY_CASES = [
    ("add", NAN, 1.0, NAN), ("add", 1.0, NAN, NAN), ("add", INF, -INF, NAN), ("add", -INF, INF, NAN),
    ("add", INF, INF, INF), ("add", -INF, -INF, -INF), ("add", INF, 1.0, INF), ("add", -INF, 1.0, -INF),
    ("add", 1.0, INF, INF), ("add", 1.0, -INF, -INF), ("add", -0.0, -0.0, -0.0), ("add", -0.0, 0.0, 0.0),
    ("add", 0.0, -0.0, 0.0), ("add", 0.0, 0.0, 0.0), ("add", -0.0, 2.0, 2.0), ("add", 2.0, -0.0, 2.0),
    ("add", 2.0, -2.0, 0.0),
    ("atan2", NAN, 1.0, NAN), ("atan2", 1.0, NAN, NAN), ("atan2", 1.0, 0.0, PI / 2), ("atan2", 1.0, -0.0, PI / 2),
    ("atan2", 0.0, 1.0, 0.0), ("atan2", 0.0, 0.0, 0.0), ("atan2", 0.0, -0.0, PI), ("atan2", 0.0, -1.0, PI),
    ("atan2", -0.0, 1.0, -0.0), ("atan2", -0.0, 0.0, -0.0), ("atan2", -0.0, -0.0, -PI), ("atan2", -0.0, -1.0, -PI),
    ("atan2", -1.0, 0.0, -PI / 2), ("atan2", -1.0, -0.0, -PI / 2), ("atan2", 1.0, INF, 0.0), ("atan2", 1.0, -INF, PI),
    ("atan2", -1.0, INF, -0.0), ("atan2", -1.0, -INF, -PI), ("atan2", INF, 1.0, PI / 2), ("atan2", -INF, 1.0, -PI / 2),
    ("atan2", INF, INF, PI / 4), ("atan2", INF, -INF, 3 * PI / 4), ("atan2", -INF, INF, -PI / 4),
    ("atan2", -INF, -INF, -3 * PI / 4),
    ("copysign", 3.0, -1.0, -3.0), ("copysign", 3.0, -0.0, -3.0), ("copysign", -3.0, 0.0, 3.0),
    ("copysign", -3.0, 2.0, 3.0), ("copysign", 3.0, -NAN, -3.0), ("copysign", -3.0, NAN, 3.0),
    ("copysign", NAN, -1.0, -NAN), ("copysign", NAN, -0.0, -NAN), ("copysign", -NAN, 0.0, NAN),
    ("copysign", -NAN, 1.0, NAN), ("copysign", NAN, -NAN, -NAN), ("copysign", -NAN, NAN, NAN),
    ("copysign", INF, -1.0, -INF),
    ("divide", NAN, 1.0, NAN), ("divide", 1.0, NAN, NAN), ("divide", INF, -INF, NAN), ("divide", 0.0, -0.0, NAN),
    ("divide", 0.0, 2.0, 0.0), ("divide", -0.0, 2.0, -0.0), ("divide", 0.0, -2.0, -0.0), ("divide", -0.0, -2.0, 0.0),
    ("divide", 2.0, 0.0, INF), ("divide", 2.0, -0.0, -INF), ("divide", -2.0, 0.0, -INF), ("divide", -2.0, -0.0, INF),
    ("divide", INF, 2.0, INF), ("divide", INF, -2.0, -INF), ("divide", -INF, 2.0, -INF), ("divide", -INF, -2.0, INF),
    ("divide", 2.0, INF, 0.0), ("divide", 2.0, -INF, -0.0), ("divide", -2.0, INF, -0.0), ("divide", -2.0, -INF, 0.0),
    ("equal", NAN, NAN, False), ("equal", INF, INF, True), ("equal", -INF, -INF, True), ("equal", -0.0, 0.0, True),
    ("equal", 0.0, -0.0, True), ("equal", INF, -INF, False),
    ("not_equal", NAN, NAN, True), ("not_equal", NAN, 1.0, True), ("not_equal", INF, -INF, True),
    ("not_equal", -0.0, 0.0, False), ("not_equal", INF, INF, False),
    ("less", -0.0, 0.0, False), ("less", NAN, 1.0, False), ("less", -INF, INF, True),
    ("less_equal", 0.0, -0.0, True), ("less_equal", 1.0, NAN, False),
    ("greater", INF, BIG, True), ("greater", NAN, NAN, False), ("greater", 0.0, -0.0, False),
    ("greater_equal", -0.0, 0.0, True), ("greater_equal", NAN, -INF, False),
    # The standard's choices where Python's // differs: inf // 2 is +inf (not NaN), 1 // -inf is -0 (not -1).
    ("floor_divide", NAN, 1.0, NAN), ("floor_divide", 1.0, NAN, NAN), ("floor_divide", INF, INF, NAN),
    ("floor_divide", -INF, INF, NAN), ("floor_divide", 0.0, -0.0, NAN), ("floor_divide", 0.0, 2.0, 0.0),
    ("floor_divide", -0.0, 2.0, -0.0), ("floor_divide", 0.0, -2.0, -0.0), ("floor_divide", -0.0, -2.0, 0.0),
    ("floor_divide", 2.0, 0.0, INF), ("floor_divide", 2.0, -0.0, -INF), ("floor_divide", -2.0, 0.0, -INF),
    ("floor_divide", -2.0, -0.0, INF), ("floor_divide", INF, 2.0, INF), ("floor_divide", INF, -2.0, -INF),
    ("floor_divide", -INF, 2.0, -INF), ("floor_divide", -INF, -2.0, INF), ("floor_divide", 1.0, INF, 0.0),
    ("floor_divide", 1.0, -INF, -0.0), ("floor_divide", -1.0, INF, -0.0), ("floor_divide", -1.0, -INF, 0.0),
    ("floor_divide", 1.0, 3.0, 0.0), ("floor_divide", -1.0, -3.0, 0.0), ("floor_divide", 1.0, -3.0, -1.0),
    ("floor_divide", 7.0, -2.0, -4.0), ("floor_divide", -7.0, 2.0, -4.0),
    ("hypot", INF, NAN, INF), ("hypot", NAN, -INF, INF), ("hypot", -INF, 3.0, INF), ("hypot", 0.0, -3.0, 3.0),
    ("hypot", -3.0, -0.0, 3.0), ("hypot", NAN, 3.0, NAN), ("hypot", 3.0, NAN, NAN), ("hypot", NAN, NAN, NAN),
    ("logaddexp", NAN, 1.0, NAN), ("logaddexp", 1.0, NAN, NAN), ("logaddexp", INF, 1.0, INF),
    ("logaddexp", 1.0, INF, INF), ("logaddexp", INF, -INF, INF), ("logaddexp", INF, INF, INF),
    ("maximum", NAN, 1.0, NAN), ("maximum", 1.0, NAN, NAN), ("maximum", NAN, NAN, NAN), ("maximum", -INF, INF, INF),
    ("maximum", NAN, INF, NAN),
    ("minimum", NAN, 1.0, NAN), ("minimum", 1.0, NAN, NAN), ("minimum", NAN, NAN, NAN), ("minimum", -INF, INF, -INF),
    ("minimum", -INF, NAN, NAN),
    ("multiply", NAN, 1.0, NAN), ("multiply", INF, 0.0, NAN), ("multiply", -0.0, INF, NAN), ("multiply", -1.0, 0.0, -0.0),
    ("multiply", -0.0, -0.0, 0.0), ("multiply", INF, -INF, -INF), ("multiply", -INF, 2.0, -INF),
    ("multiply", 2.0, -INF, -INF), ("multiply", -INF, -INF, INF),
    ("nextafter", NAN, 1.0, NAN), ("nextafter", 1.0, NAN, NAN), ("nextafter", -0.0, 0.0, 0.0),
    ("nextafter", 0.0, -0.0, -0.0), ("nextafter", 2.0, 2.0, 2.0),
    # x ** ±0 is 1 even for NaN x; 1 ** y is 1 even for NaN y.
    ("pow", NAN, 0.0, 1.0), ("pow", NAN, -0.0, 1.0), ("pow", INF, 0.0, 1.0), ("pow", -INF, -0.0, 1.0),
    ("pow", 0.0, 0.0, 1.0), ("pow", 1.0, NAN, 1.0), ("pow", 2.0, NAN, NAN), ("pow", NAN, 1.0, NAN),
    ("pow", 2.0, INF, INF), ("pow", -2.0, INF, INF), ("pow", 2.0, -INF, 0.0), ("pow", -1.0, INF, 1.0),
    ("pow", -1.0, -INF, 1.0), ("pow", 1.0, INF, 1.0), ("pow", 1.0, -3.5, 1.0), ("pow", 0.5, INF, 0.0),
    ("pow", -0.5, -INF, INF), ("pow", INF, 2.0, INF), ("pow", INF, -2.0, 0.0), ("pow", -INF, 3.0, -INF),
    ("pow", -INF, 2.0, INF), ("pow", -INF, 2.5, INF), ("pow", -INF, -3.0, -0.0), ("pow", -INF, -2.0, 0.0),
    ("pow", 0.0, 2.0, 0.0), ("pow", 0.0, -2.0, INF), ("pow", -0.0, 3.0, -0.0), ("pow", -0.0, 2.0, 0.0),
    ("pow", -0.0, -3.0, -INF), ("pow", -0.0, -2.0, INF), ("pow", -2.0, 0.5, NAN),
    # The remainder has the sign of x2; where finite, it is Python's %.
    ("remainder", NAN, 1.0, NAN), ("remainder", 1.0, NAN, NAN), ("remainder", INF, -INF, NAN),
    ("remainder", 0.0, -0.0, NAN), ("remainder", 0.0, 2.0, 0.0), ("remainder", -0.0, 2.0, 0.0),
    ("remainder", 0.0, -2.0, -0.0), ("remainder", -0.0, -2.0, -0.0), ("remainder", 2.0, 0.0, NAN),
    ("remainder", 2.0, -0.0, NAN), ("remainder", -2.0, 0.0, NAN), ("remainder", -2.0, -0.0, NAN),
    ("remainder", INF, 2.0, NAN), ("remainder", INF, -2.0, NAN), ("remainder", -INF, 2.0, NAN),
    ("remainder", -INF, -2.0, NAN), ("remainder", 2.0, INF, 2.0), ("remainder", 2.0, -INF, -INF),
    ("remainder", -2.0, INF, INF), ("remainder", -2.0, -INF, -2.0), ("remainder", 5.0, -3.0, 5.0 % -3.0),
    ("remainder", -5.0, 3.0, -5.0 % 3.0), ("remainder", 6.0, -3.0, 6.0 % -3.0), ("remainder", -6.0, 3.0, -6.0 % 3.0),
    ("remainder", 5.5, 2.0, 5.5 % 2.0),
    ("subtract", INF, INF, NAN), ("subtract", -INF, -INF, NAN), ("subtract", -0.0, 0.0, -0.0),
    ("subtract", 0.0, 0.0, 0.0), ("subtract", -0.0, -0.0, 0.0), ("subtract", 3.0, 3.0, 0.0), ("subtract", NAN, 1.0, NAN),
]

# name, (a, b), (real, imag) of the result: the standard's special cases for
# complex inputs a + bj. AnySign parts: "sign unspecified".
COMPLEX_CASES = [
    ("abs", (INF, NAN), (INF, 0.0)), ("abs", (NAN, -INF), (INF, 0.0)), ("abs", (0.0, -3.0), (3.0, 0.0)),
    ("abs", (NAN, 2.0), (NAN, 0.0)),
    ("acosh", (0.0, 0.0), (0.0, PI / 2)), ("acosh", (2.0, INF), (INF, PI / 2)), ("acosh", (-INF, 2.0), (INF, PI)),
    ("acosh", (INF, 2.0), (INF, 0.0)), ("acosh", (INF, NAN), (INF, NAN)), ("acosh", (NAN, INF), (INF, NAN)),
    ("asinh", (0.0, 0.0), (0.0, 0.0)), ("asinh", (2.0, INF), (INF, PI / 2)), ("asinh", (INF, 2.0), (INF, 0.0)),
    ("asinh", (INF, INF), (INF, PI / 4)), ("asinh", (NAN, 0.0), (NAN, 0.0)), ("asinh", (NAN, INF), (ANYINF, NAN)),
    ("atanh", (0.0, 0.0), (0.0, 0.0)), ("atanh", (0.0, NAN), (0.0, NAN)), ("atanh", (1.0, 0.0), (INF, 0.0)),
    ("atanh", (2.0, INF), (0.0, PI / 2)), ("atanh", (INF, 2.0), (0.0, PI / 2)), ("atanh", (INF, NAN), (0.0, NAN)),
    ("cosh", (0.0, 0.0), (1.0, 0.0)), ("cosh", (0.0, INF), (NAN, ANY0)), ("cosh", (INF, 0.0), (INF, 0.0)),
    ("cosh", (INF, INF), (ANYINF, NAN)), ("cosh", (INF, NAN), (INF, NAN)), ("cosh", (NAN, 0.0), (NAN, ANY0)),
    ("exp", (0.0, 0.0), (1.0, 0.0)), ("exp", (-0.0, 0.0), (1.0, 0.0)), ("exp", (2.0, INF), (NAN, NAN)),
    ("exp", (INF, 0.0), (INF, 0.0)), ("exp", (-INF, 1.0), (0.0 * math.cos(1.0), 0.0 * math.sin(1.0))),
    ("exp", (INF, 1.0), (INF, INF)), ("exp", (-INF, INF), (ANY0, ANY0)), ("exp", (INF, INF), (ANYINF, NAN)),
    ("exp", (-INF, NAN), (ANY0, ANY0)), ("exp", (NAN, 0.0), (NAN, 0.0)), ("exp", (NAN, 1.0), (NAN, NAN)),
    # NumPy's complex expm1 gives NaN at every non-finite input and -0 + 0j at -0 + 0j.
    ("expm1", (0.0, 0.0), (0.0, 0.0)), ("expm1", (-0.0, 0.0), (0.0, 0.0)), ("expm1", (-0.0, -0.0), (0.0, -0.0)),
    ("expm1", (2.0, INF), (NAN, NAN)), ("expm1", (2.0, NAN), (NAN, NAN)), ("expm1", (INF, 0.0), (INF, 0.0)),
    ("expm1", (-INF, 1.0), (-1.0, 0.0)), ("expm1", (-INF, 4.0), (-1.0, -0.0)), ("expm1", (INF, 1.0), (INF, INF)),
    ("expm1", (INF, 4.0), (-INF, -INF)), ("expm1", (-INF, INF), (-1.0, ANY0)), ("expm1", (INF, INF), (ANYINF, NAN)),
    ("expm1", (-INF, NAN), (-1.0, ANY0)), ("expm1", (INF, NAN), (ANYINF, NAN)), ("expm1", (NAN, 0.0), (NAN, 0.0)),
    ("expm1", (NAN, 1.0), (NAN, NAN)), ("expm1", (NAN, NAN), (NAN, NAN)),
    ("isfinite", (1.0, INF), False), ("isfinite", (NAN, 0.0), False), ("isfinite", (1.0, -2.0), True),
    ("isinf", (NAN, -INF), True), ("isinf", (INF, NAN), True), ("isinf", (NAN, 1.0), False),
    ("isnan", (1.0, NAN), True), ("isnan", (INF, 1.0), False),
    ("log", (-0.0, 0.0), (-INF, PI)), ("log", (0.0, 0.0), (-INF, 0.0)), ("log", (2.0, INF), (INF, PI / 2)),
    ("log", (2.0, NAN), (NAN, NAN)), ("log", (-INF, 2.0), (INF, PI)), ("log", (INF, 2.0), (INF, 0.0)),
    ("log", (-INF, INF), (INF, 3 * PI / 4)), ("log", (INF, INF), (INF, PI / 4)), ("log", (-INF, NAN), (INF, NAN)),
    ("log", (NAN, INF), (INF, NAN)), ("log", (NAN, NAN), (NAN, NAN)),
    ("log1p", (-1.0, 0.0), (-INF, 0.0)), ("log1p", (2.0, INF), (INF, PI / 2)), ("log1p", (-INF, 2.0), (INF, PI)),
    ("log1p", (INF, INF), (INF, PI / 4)), ("log1p", (NAN, INF), (INF, NAN)),
    # sign is x / |x|; at any signed zero it is 0 + 0j.
    ("sign", (0.0, 0.0), (0.0, 0.0)), ("sign", (-0.0, -0.0), (0.0, 0.0)), ("sign", (-0.0, 0.0), (0.0, 0.0)),
    ("sign", (0.0, -0.0), (0.0, 0.0)), ("sign", (NAN, 1.0), (NAN, NAN)), ("sign", (1.0, NAN), (NAN, NAN)),
    ("sign", (3.0, -4.0), (0.6, -0.8)),
    ("sinh", (0.0, 0.0), (0.0, 0.0)), ("sinh", (0.0, INF), (ANY0, NAN)), ("sinh", (INF, 0.0), (INF, 0.0)),
    ("sinh", (INF, INF), (ANYINF, NAN)), ("sinh", (NAN, 0.0), (NAN, 0.0)), ("sinh", (NAN, 2.0), (NAN, NAN)),
    ("sqrt", (0.0, 0.0), (0.0, 0.0)), ("sqrt", (-0.0, 0.0), (0.0, 0.0)), ("sqrt", (NAN, INF), (INF, INF)),
    ("sqrt", (2.0, INF), (INF, INF)), ("sqrt", (2.0, NAN), (NAN, NAN)), ("sqrt", (-INF, 2.0), (0.0, INF)),
    ("sqrt", (INF, 2.0), (INF, 0.0)), ("sqrt", (-INF, NAN), (NAN, ANYINF)), ("sqrt", (INF, NAN), (INF, NAN)),
    ("sqrt", (NAN, 2.0), (NAN, NAN)),
    # NumPy gives tanh(inf + bj) a zero imaginary part with the sign of sin(2b); the standard says +0 for b > 0.
    ("tanh", (0.0, 0.0), (0.0, 0.0)), ("tanh", (2.0, INF), (NAN, NAN)), ("tanh", (0.0, INF), (0.0, NAN)),
    ("tanh", (0.0, NAN), (0.0, NAN)), ("tanh", (INF, 1.0), (1.0, 0.0)), ("tanh", (INF, 2.0), (1.0, 0.0)),
    ("tanh", (INF, -2.0), (1.0, -0.0)), ("tanh", (-INF, 2.0), (-1.0, 0.0)), ("tanh", (INF, INF), (1.0, ANY0)),
    ("tanh", (INF, NAN), (1.0, ANY0)), ("tanh", (NAN, 0.0), (NAN, 0.0)), ("tanh", (NAN, 2.0), (NAN, NAN)),
]


@pytest.mark.parametrize("dtype", REAL_FLOATING, ids=str)
@pytest.mark.parametrize("name, x, expected", [pytest.param(*c, id=case_id(c[0], c[1:2], c[2])) for c in UNARY_CASES])
def test_unary_special_case(name, x, expected, dtype):
    out = getattr(xp, name)(xp.asarray(np.asarray(x, dtype)))
    assert out.dtype == xp_dtype(dtype)
    assert matches(float(out), expected, rel_tol=approximation(dtype)), float(out)


@pytest.mark.parametrize("dtype", REAL_FLOATING, ids=str)
@pytest.mark.parametrize("name, x, expected", [pytest.param(*c, id=case_id(c[0], c[1:2], c[2])) for c in PREDICATE_CASES])
def test_predicate_special_case(name, x, expected, dtype):
    out = getattr(xp, name)(xp.asarray(np.asarray(x, dtype)))
    assert out.dtype == xp.bool
    assert bool(out) is expected


@pytest.mark.parametrize("dtype", REAL_FLOATING, ids=str)
@pytest.mark.parametrize("name, x1, x2, expected", [pytest.param(*c, id=case_id(c[0], c[1:3], c[3])) for c in BINARY_CASES])
def test_binary_special_case(name, x1, x2, expected, dtype):
    """Each case with two arrays, and with x2 as a Python float (which takes x1's dtype)."""
    fn = getattr(xp, name)
    a1 = xp.asarray(np.asarray(x1, dtype))
    for out in (fn(a1, xp.asarray(np.asarray(x2, dtype))), fn(a1, x2)):
        if isinstance(expected, bool):
            assert out.dtype == xp.bool
            assert bool(out) is expected
        else:
            assert out.dtype == xp_dtype(dtype)
            assert matches(float(out), expected, nan_sign=name in NAN_SIGN_SPECIFIED,
                           rel_tol=approximation(dtype)), float(out)


def complex_value(a, b, dtype):
    """a + bj as a 0-d array of `dtype`, keeping signed zeros and infinities (a + b*1j would not)."""
    z = np.zeros((), dtype)
    z.real, z.imag = a, b
    return z


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("name, x, expected", [pytest.param(*c, id=case_id(c[0], c[1], c[2])) for c in COMPLEX_CASES])
def test_complex_special_case(name, x, expected, dtype):
    out = getattr(xp, name)(xp.asarray(complex_value(*x, dtype)))
    if isinstance(expected, bool):
        assert out.dtype == xp.bool
        assert bool(out) is expected
        return
    assert out.dtype == xp_dtype(result_dtype(UNARY_BY_NAME[name][3], dtype))
    value = complex(out)
    assert matches(value.real, expected[0]) and matches(value.imag, expected[1]), value


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_complex_special_cases_respect_conjugation(dtype):
    """expm1 and tanh: f(conj(z)) == conj(f(z)) at the special values, signed zeros included."""
    values = [(-INF, 1.0), (-INF, 4.0), (INF, 2.0), (INF, -2.0), (-INF, 2.0), (0.0, 0.0), (-0.0, 0.0), (INF, 0.0)]
    for name in ("expm1", "tanh"):
        fn = getattr(xp, name)
        for a, b in values:
            direct = complex(fn(xp.asarray(complex_value(a, b, dtype))))
            mirrored = complex(fn(xp.asarray(complex_value(a, -b, dtype))))
            assert matches(mirrored.real, direct.real) and matches(mirrored.imag, -direct.imag), (name, a, b)


# --- operators ----------------------------------------------------------------

# Operator values per dtype kind: `left` covers the range's edges (and NaN), `right`
# stays where NumPy's operators agree with the standard (a positive integer below
# the bit width, so also a valid divisor, exponent and shift; finite floats).
def operands(dtype):
    if dtype.kind == "b":
        return np.array([[True, False, True], [False, True, False]]), np.array([True, False, True])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        left = np.array([[info.min, info.min + 1, 0], [1, 7, info.max]], dtype=dtype)
        return left, np.array([1, 2, 3], dtype=dtype)
    if dtype.kind == "f":
        return (np.array([[-2.5, -0.0, 0.0], [1.5, 3.0, np.nan]], dtype=dtype),
                np.array([1.5, -2.0, 0.5], dtype=dtype))
    return (np.array([[1 + 2j, -0.5j, 0], [3 - 1j, complex(np.nan, 0), 2]], dtype=dtype),
            np.array([1 - 1j, 0.5, -2j], dtype=dtype))


def python_scalars(dtype):
    """Python scalars whose kind fits `dtype` (they take the array's dtype)."""
    return {"b": [True], "i": [2], "u": [2], "f": [2, 2.5], "c": [2, 2.5, 1 - 2j]}[dtype.kind]


# operator, the function it calls
BINARY_OPERATORS = [
    (operator.add, operator.iadd, "add"), (operator.sub, operator.isub, "subtract"),
    (operator.mul, operator.imul, "multiply"), (operator.truediv, operator.itruediv, "divide"),
    (operator.floordiv, operator.ifloordiv, "floor_divide"), (operator.mod, operator.imod, "remainder"),
    (operator.pow, operator.ipow, "pow"), (operator.and_, operator.iand, "bitwise_and"),
    (operator.or_, operator.ior, "bitwise_or"), (operator.xor, operator.ixor, "bitwise_xor"),
    (operator.lshift, operator.ilshift, "bitwise_left_shift"), (operator.rshift, operator.irshift, "bitwise_right_shift"),
]
COMPARISONS = [
    (operator.lt, "less"), (operator.le, "less_equal"), (operator.gt, "greater"), (operator.ge, "greater_equal"),
    (operator.eq, "equal"), (operator.ne, "not_equal"),
]


def operator_cases(table):
    return [pytest.param(op, name, dtype, id=f"{op.__name__}-{dtype}")
            for op, *_, name in table for dtype in DTYPES[BINARY_BY_NAME[name][2]]]


@pytest.mark.parametrize("op, name, dtype", operator_cases([(op, name) for op, _, name in BINARY_OPERATORS] + COMPARISONS))
def test_binary_operator_matches_numpy(op, name, dtype):
    """x op y, x op scalar and scalar op x (the reflected method) against NumPy."""
    _, ref, _, rule, accuracy, _ = BINARY_BY_NAME[name]
    out = result_dtype(rule, dtype)
    left, right = operands(dtype)
    x, y = xp.asarray(left), xp.asarray(right)
    check(op(x, y), reference(ref, left, right), out, accuracy)
    for s in python_scalars(dtype):
        check(op(x, s), reference(ref, left, np.asarray(s, dtype)), out, accuracy)
        check(op(s, y), reference(ref, np.asarray(s, dtype), right), out, accuracy)


@pytest.mark.parametrize("op, iop, name, dtype", [
    pytest.param(op, iop, name, dtype, id=f"{iop.__name__}-{dtype}")
    for op, iop, name in BINARY_OPERATORS for dtype in DTYPES[BINARY_BY_NAME[name][2]]
    if result_dtype(BINARY_BY_NAME[name][3], dtype) == dtype])
def test_inplace_operator_rebinds_the_array(op, iop, name, dtype):
    """x op= y (an array or a Python scalar) gives the same Array object the value of x op y."""
    _, ref, _, _, accuracy, _ = BINARY_BY_NAME[name]
    left, right = operands(dtype)
    x = xp.asarray(left)
    assert iop(x, xp.asarray(right)) is x
    check(x, reference(ref, left, right), dtype, accuracy)
    for s in python_scalars(dtype):
        x = xp.asarray(left)
        assert iop(x, s) is x
        check(x, reference(ref, left, np.asarray(s, dtype)), dtype, accuracy)


@pytest.mark.parametrize("iop, name, operand", [
    pytest.param(operator.iadd, "add", 2.5, id="int8+float"),                          # -> float64
    pytest.param(operator.iadd, "add", np.array([1.0], np.float32), id="int8+float32"),  # -> float32
    pytest.param(operator.iadd, "add", np.array([1], np.int16), id="int8+int16"),        # -> int16
    pytest.param(operator.itruediv, "divide", np.array([2], np.int8), id="int8/int8"),   # -> float64
    pytest.param(operator.imul, "multiply", 1j, id="int8*complex"),                      # -> complex128
])
def test_inplace_operator_rejects_dtype_change(iop, name, operand):
    x = xp.asarray(np.array([1, 2, 3], np.int8))
    other = xp.asarray(operand) if isinstance(operand, np.ndarray) else operand
    with pytest.raises(TypeError, match=rf"\b{name}\b"):
        iop(x, other)


def test_inplace_operator_rejects_float_precision_change():
    x = xp.asarray(np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"\bsubtract\b"):
        x -= xp.asarray(np.ones(3, np.float64))


def test_inplace_operator_rejects_shape_change():
    x = xp.asarray(np.ones(3))
    with pytest.raises(ValueError, match=r"\badd\b"):
        x += xp.asarray(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"\bbitwise_or\b"):
        b = xp.asarray(np.array([True]))
        b |= xp.asarray(np.array([True, False]))


# operator, NumPy reference, dtype category
UNARY_OPERATORS = [
    (operator.neg, np.negative, "numeric"), (operator.pos, np.positive, "numeric"),
    (operator.invert, np.invert, "integer or bool"), (abs, np.abs, "numeric"),
]


@pytest.mark.parametrize("op, ref, dtype", [
    pytest.param(op, ref, dtype, id=f"{op.__name__}-{dtype}") for op, ref, category in UNARY_OPERATORS
    for dtype in DTYPES[category]])
def test_unary_operator_matches_numpy(op, ref, dtype):
    left, _ = operands(dtype)
    out = result_dtype("real", dtype) if op is abs else dtype
    check(op(xp.asarray(left)), reference(ref, left), out, EXACT)


@pytest.mark.parametrize("op, dtype", [
    pytest.param(op, dtype, id=f"{op.__name__}-{dtype}") for op, _, category in UNARY_OPERATORS
    for dtype in ALL if dtype not in DTYPES[category]])
def test_unary_operator_rejects_dtype(op, dtype):
    left, _ = operands(dtype)
    name = {operator.neg: "negative", operator.pos: "positive", operator.invert: "bitwise_invert", abs: "abs"}[op]
    with pytest.raises(TypeError, match=rf"\b{name}\b"):
        op(xp.asarray(left))


@pytest.mark.parametrize("op", [op for op, _, _ in BINARY_OPERATORS] + [op for op, _ in COMPARISONS[:4]],
                         ids=lambda op: op.__name__)
def test_binary_operator_rejects_foreign_operands(op):
    """Non-scalar, non-array operands are not converted: the operator methods return
    NotImplemented, and Python's TypeError names the operator."""
    x = xp.asarray(np.ones(3))
    symbol = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
              operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.and_: "&",
              operator.or_: "|", operator.xor: "^", operator.lshift: "<<", operator.rshift: ">>",
              operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">="}[op]
    message = re.escape(f"'{symbol}' not supported" if op in (operator.lt, operator.le, operator.gt, operator.ge)
                        else f"for {symbol}")
    # (A str or list would take part in Python's own sequence concatenation and repetition.)
    for other in (None, object(), {1: 2}):
        with pytest.raises(TypeError, match=message):
            op(x, other)
        with pytest.raises(TypeError, match=message):
            op(other, x)


# --- errors --------------------------------------------------------------------

def sample(dtype):
    """A small array of `dtype`."""
    return xp.asarray(operands(dtype)[1])


def rejected(row):
    """The dtypes the function of table row `row` refuses."""
    return [dtype for dtype in ALL if dtype not in DTYPES[row[2]] and not computes_as_float64(row, dtype)]


def test_only_the_floating_functions_accept_every_dtype():
    """sin and the other functions of the floating category take every dtype;
    each other function refuses some."""
    assert {row[0] for row in UNARY if not rejected(row)} == {row[0] for row in UNARY if row[2] == "floating"}


@pytest.mark.parametrize("row", [row for row in UNARY if rejected(row)], ids=lambda row: row[0])
def test_unary_rejects_dtypes_outside_its_category(row):
    name = row[0]
    for dtype in rejected(row):
        with pytest.raises(TypeError, match=rf"\b{name}\b"):
            getattr(xp, name)(sample(dtype))


@pytest.mark.parametrize("row", [row for row in BINARY if row[2] != "any" and row[0] != "divide"],
                         ids=lambda row: row[0])
def test_binary_rejects_dtypes_outside_its_category(row):
    name, _, category = row[:3]
    for dtype in ALL:
        if dtype in DTYPES[category] or computes_as_float64(row, dtype):
            continue
        with pytest.raises(TypeError, match=rf"\b{name}\b"):
            getattr(xp, name)(sample(dtype), sample(dtype))


def test_logical_and_rejects_integers():
    with pytest.raises(TypeError, match=r"\blogical_and\b"):
        xp.logical_and(sample(xp.int32), sample(xp.int32))


def test_bitwise_and_rejects_floats():
    with pytest.raises(TypeError, match=r"\bbitwise_and\b"):
        xp.bitwise_and(sample(xp.float64), sample(xp.float64))


@pytest.mark.parametrize("row", BINARY, ids=lambda row: row[0])
def test_binary_rejects_shapes_that_do_not_broadcast(row):
    name, _, category = row[:3]
    dtype = DTYPES[category][0]
    x1 = xp.asarray(np.zeros((2, 3), dtype))
    x2 = xp.asarray(np.zeros((4,), dtype))
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        getattr(xp, name)(x1, x2)


@pytest.mark.parametrize("row", UNARY, ids=lambda row: row[0])
def test_unary_rejects_non_arrays(row):
    name = row[0]
    for x in ([1.0, 2.0], np.ones(2), 1.0):
        with pytest.raises(TypeError, match=rf"\b{name}\b"):
            getattr(xp, name)(x)


@pytest.mark.parametrize("row", BINARY, ids=lambda row: row[0])
def test_binary_rejects_non_arrays(row):
    """Lists and NumPy arrays are not operands; two Python scalars are not either."""
    name, _, category = row[:3]
    fn, x = getattr(xp, name), sample(DTYPES[category][0])
    for other in ([1, 2, 3], np.ones(3), "a", None):
        with pytest.raises(TypeError, match=rf"\b{name}\b"):
            fn(x, other)
        with pytest.raises(TypeError, match=rf"\b{name}\b"):
            fn(other, x)
    with pytest.raises(TypeError, match=rf"\b{name}\b"):
        fn(True, True)


def test_where_errors_name_where():
    cond = xp.asarray(np.array([True, False, True]))
    x = xp.asarray(np.arange(3.0))
    with pytest.raises(TypeError, match=r"\bwhere\b"):
        xp.where(xp.asarray(np.arange(3)), x, x)       # condition must be bool
    with pytest.raises(TypeError, match=r"\bwhere\b"):
        xp.where([True, False, True], x, x)
    with pytest.raises(TypeError, match=r"\bwhere\b"):
        xp.where(cond, 1.0, 2.0)                       # at least one operand must be an array
    with pytest.raises(ValueError, match=r"\bwhere\b"):
        xp.where(xp.asarray(np.array([True, False])), x, x)


def test_clip_errors_name_clip():
    x = xp.asarray(np.arange(3.0))
    with pytest.raises(TypeError, match=r"\bclip\b"):
        xp.clip(xp.asarray(np.array([True])), 0, 1)
    with pytest.raises(TypeError, match=r"\bclip\b"):
        xp.clip([1.0, 2.0], 0.0, 1.0)
    with pytest.raises(TypeError, match=r"\bclip\b"):
        xp.clip(x, "0")
    with pytest.raises(ValueError, match=r"\bclip\b"):
        xp.clip(x, min=xp.asarray(np.zeros(2)))
    with pytest.raises(ValueError, match=r"\bclip\b"):
        xp.clip(x, max=xp.asarray(np.ones((2, 2))))
