"""Type promotion: `xp.result_type` and the dtype of binary results for every
pair of the 14 dtypes, and Python scalars meeting arrays of each dtype.

The standard's table is taken from array-api-strict. Where the standard leaves
a pair unspecified (strict raises), arrayx follows JAX's lattice, written out
in `unspecified_promotion` below as docs/semantics.md states it. The extension
float16 (which strict lacks) sits below float32, as in NumPy: NumPy's table is the
oracle for its pairs with floating dtypes, JAX's lattice for the others.
"""

import array_api_strict as strict
import numpy as np
import pytest

import arrayx as xp
from test_elementwise import ALL, BINARY, DTYPES, EXACT, check, computes_as_float64, reference, result_dtype, xp_dtype

FLOAT16 = np.dtype(np.float16)
STANDARD = [d for d in ALL if d != FLOAT16]
TO_STRICT = {d: getattr(strict, str(d)) for d in STANDARD}
FROM_STRICT = {s: d for d, s in TO_STRICT.items()}
FLOAT64, INT64 = np.dtype(np.float64), np.dtype(np.int64)


def unspecified_promotion(d1, d2):
    """JAX's lattice, which arrayx follows where the standard is silent.

    bool promotes to any numeric dtype; an integer meeting a floating dtype gives
    that floating dtype; uint64 meeting a signed integer gives float64.
    """
    if d1.kind == "b":
        return d2
    if d2.kind == "b":
        return d1
    if d1.kind in "iu" and d2.kind in "fc":
        return d2
    if d2.kind in "iu" and d1.kind in "fc":
        return d1
    assert {d1.kind, d2.kind} == {"i", "u"} and np.dtype(np.uint64) in (d1, d2)
    return FLOAT64


def expected_promotion(d1, d2):
    if FLOAT16 in (d1, d2):
        if d1.kind in "fc" and d2.kind in "fc":
            return np.result_type(d1, d2)
        return unspecified_promotion(d1, d2)
    try:
        return FROM_STRICT[strict.result_type(TO_STRICT[d1], TO_STRICT[d2])]
    except TypeError:  # the standard does not define the pair
        return unspecified_promotion(d1, d2)


PAIRS = [pytest.param(d1, d2, id=f"{d1}-{d2}") for d1 in ALL for d2 in ALL]


def test_standard_leaves_exactly_the_cross_kind_pairs_unspecified():
    """The JAX fallback only fills pairs the standard leaves open: bool with a
    number, integer with floating, uint64 with a signed integer."""
    unspecified = set()
    for d1 in STANDARD:
        for d2 in STANDARD:
            try:
                strict.result_type(TO_STRICT[d1], TO_STRICT[d2])
            except TypeError:
                unspecified.add((str(d1), str(d2)))
    kinds = {(d.kind, e.kind) for d in STANDARD for e in STANDARD if (str(d), str(e)) in unspecified}
    assert kinds == {("b", k) for k in "iufc"} | {(k, "b") for k in "iufc"} | {
        ("i", "f"), ("i", "c"), ("u", "f"), ("u", "c"), ("f", "i"), ("f", "u"), ("c", "i"), ("c", "u"),
        ("i", "u"), ("u", "i")}
    assert {(a, b) for a, b in unspecified if {a[0], b[0]} == {"i", "u"}} == {
        (a, "uint64") for a in ("int8", "int16", "int32", "int64")} | {
        ("uint64", a) for a in ("int8", "int16", "int32", "int64")}


@pytest.mark.parametrize("d1, d2", PAIRS)
def test_result_type_of_dtypes_and_arrays(d1, d2):
    expected = xp_dtype(expected_promotion(d1, d2))
    x1, x2 = xp.asarray(np.ones(2, d1)), xp.asarray(np.ones(2, d2))
    assert xp.result_type(xp_dtype(d1), xp_dtype(d2)) == expected
    assert xp.result_type(x1, x2) == expected
    assert xp.result_type(x1, xp_dtype(d2)) == expected
    assert xp.result_type(xp_dtype(d2), x1) == expected  # promotion is commutative


@pytest.mark.parametrize("d1, d2", PAIRS)
def test_binary_results_promote(d1, d2):
    """Every binary function on mixed dtypes: the promoted dtype (or bool, or
    float64 where a floating function or divide meets integers or bools) and
    NumPy's values computed in it; a TypeError naming the function where the
    promoted dtype is outside its category."""
    promoted = expected_promotion(d1, d2)
    # Small values every dtype holds; x2 is a valid divisor, exponent and shift.
    a1 = np.array([3, 0, 1, 2]).astype(d1)
    a2 = np.array([1, 2, 1, 3]).astype(d2)
    x1, x2 = xp.asarray(a1), xp.asarray(a2)
    for row in BINARY:
        name, ref, category, rule, accuracy, _ = row
        fn = getattr(xp, name)
        computed = FLOAT64 if computes_as_float64(row, promoted) else promoted
        if computed not in DTYPES[category]:
            with pytest.raises(TypeError, match=rf"\b{name}\b"):
                fn(x1, x2)
            continue
        out = fn(x1, x2)
        assert out.dtype == xp_dtype(result_dtype(rule, computed)), name
        check(out, reference(ref, a1.astype(computed), a2.astype(computed)), out.dtype, accuracy)
    condition = np.array([True, False, True, False])
    check(xp.where(xp.asarray(condition), x1, x2), np.where(condition, a1, a2).astype(promoted), promoted, EXACT)


def scalar_promotion(dtype, scalar):
    """The dtype a Python scalar meeting an array of `dtype` gives.

    The standard: the scalar takes the array's dtype when its kind fits (bool
    with bool; int with integer, floating and complex; float with floating and
    complex; complex with floating, becoming complex of its precision). Beyond
    that arrayx follows JAX: a bool takes any dtype, an int meeting bool is the
    default int, a float meeting bool or an integer is the default float, a
    complex meeting bool or an integer is the default complex.
    """
    kind = type(scalar)
    if kind is bool:
        return dtype
    if kind is int:
        return INT64 if dtype.kind == "b" else dtype
    if kind is float:
        return dtype if dtype.kind in "fc" else FLOAT64
    if dtype.kind == "c":
        return dtype
    # float16 has no complex counterpart: complex64, as NumPy gives.
    return np.dtype(np.complex64) if dtype in (FLOAT16, np.float32) else np.dtype(np.complex128)


SCALARS = [True, 3, 2.5, 1 - 2j]
SCALAR_CASES = [pytest.param(d, s, id=f"{d}-{type(s).__name__}") for d in ALL for s in SCALARS]


@pytest.mark.parametrize("dtype, scalar", SCALAR_CASES)
def test_python_scalar_promotion(dtype, scalar):
    """result_type, where and add with a Python scalar on either side."""
    expected = scalar_promotion(dtype, scalar)
    if dtype == FLOAT16:  # an extension: NumPy is the oracle
        assert expected == np.result_type(np.ones(1, dtype), scalar)
    else:
        try:  # the standard's cases agree with array-api-strict
            assert expected == FROM_STRICT[strict.result_type(TO_STRICT[dtype], scalar)]
        except TypeError:
            pass  # unspecified by the standard: JAX's rule above
    a = np.array([1, 0, 1]).astype(dtype)
    x = xp.asarray(a)
    assert xp.result_type(x, scalar) == xp_dtype(expected)
    assert xp.result_type(scalar, xp_dtype(dtype)) == xp_dtype(expected)
    s = np.asarray(scalar, expected)
    condition = np.array([True, False, False])
    check(xp.where(xp.asarray(condition), x, scalar), np.where(condition, a.astype(expected), s), expected, EXACT)
    check(xp.where(xp.asarray(condition), scalar, x), np.where(condition, s, a.astype(expected)), expected, EXACT)
    if expected.kind != "b":
        check(x + scalar, a.astype(expected) + s, expected, EXACT)
        check(scalar + x, s + a.astype(expected), expected, EXACT)


def test_array_dtype_wins_for_fitting_scalars():
    """The headline rule: a Python scalar of a fitting kind never widens the array."""
    x8 = xp.asarray(np.array([1, 2], np.int8))
    x32 = xp.asarray(np.array([1.0, 2.0], np.float32))
    assert (x8 * 100).dtype == xp.int8
    assert (x32 * 2.5).dtype == xp.float32
    assert (x32 + 1).dtype == xp.float32
    assert (x32 * 1j).dtype == xp.complex64
    assert (x8 + 1.5).dtype == xp.float64  # a float meeting an integer array: the default float


@pytest.mark.parametrize("dtype", DTYPES["integer"], ids=str)
def test_python_int_out_of_range_overflows(dtype):
    """A Python int outside the array's integer dtype raises OverflowError naming the function."""
    info = np.iinfo(dtype)
    x = xp.asarray(np.zeros(2, dtype))
    for value in (int(info.min) - 1, int(info.max) + 1):
        with pytest.raises(OverflowError, match=r"\badd\b"):
            xp.add(x, value)
        with pytest.raises(OverflowError, match=r"\bmultiply\b"):
            value * x
        with pytest.raises(OverflowError, match=r"\bwhere\b"):
            xp.where(xp.asarray(np.array([True, False])), value, x)
        with pytest.raises(OverflowError, match=r"\bsubtract\b"):
            x -= value
    for value in (int(info.min), int(info.max)):  # the bounds themselves fit
        assert (x + value).dtype == xp_dtype(dtype)


def test_python_int_meeting_bool_overflows_past_the_default_int():
    x = xp.asarray(np.array([True, False]))
    assert (x + (2**63 - 1)).dtype == xp.int64
    with pytest.raises(OverflowError, match=r"\badd\b"):
        x + 2**63


def test_result_type_needs_an_array_or_dtype():
    with pytest.raises(TypeError, match=r"\bresult_type\b"):
        xp.result_type(1, 2.0)
    with pytest.raises(TypeError, match=r"\bresult_type\b"):
        xp.result_type()
