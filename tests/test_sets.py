"""Set functions: the unique_* family checked against the standard's contract
(every dtype, 0-d and zero-size arrays, NaNs distinct, signed zeros one value),
and isin against NumPy's equality after promotion, with Python scalars."""

import math
from collections import Counter

import array_api_strict as strict
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import arrayx as xp
from oracle import DTYPE_NAMES, INT_NAMES, pooled_elements
from arrayx import debug


@st.composite
def arrays(draw, names=DTYPE_NAMES, min_dims=0, max_dims=3):
    name = draw(st.sampled_from(names))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=5))
    return draw(hnp.arrays(np.dtype(name), shape, elements=pooled_elements(name)))


def has_nan(v):
    return v != v  # NaN, or a complex value with a NaN component


def key(v):
    """A hashable value standing for v under ==: -0 and +0 share one (0 == -0 hashes alike)."""
    return v.item() if hasattr(v, "item") else v


def check_values(a, values):
    """values: 1-D, a's dtype, each non-NaN value of a once, each NaN of a once."""
    assert values.dtype == a.dtype and values.ndim == 1
    flat = a.reshape(-1)
    assert sum(1 for v in values if has_nan(v)) == sum(1 for v in flat if has_nan(v))
    distinct = [key(v) for v in values if not has_nan(v)]
    assert len(set(distinct)) == len(distinct)
    assert set(distinct) == {key(v) for v in flat if not has_nan(v)}


def check_counts(a, values, counts):
    assert counts.dtype == np.int64 and counts.shape == values.shape
    occurrences = Counter(key(v) for v in a.reshape(-1) if not has_nan(v))
    for v, c in zip(values, counts):
        assert c == (1 if has_nan(v) else occurrences[key(v)])


def check_indices(a, values, indices):
    """indices: the first occurrence in flattened a of each value (a NaN's own position)."""
    assert indices.dtype == np.int64 and indices.shape == values.shape
    flat = a.reshape(-1)
    first = {}
    for i, v in enumerate(flat):
        if not has_nan(v):
            first.setdefault(key(v), i)
    nan_positions = [i for i, v in enumerate(flat) if has_nan(v)]
    seen_nans = []
    for v, i in zip(values, indices):
        if has_nan(v):
            assert has_nan(flat[i])
            seen_nans.append(int(i))
        else:
            assert i == first[key(v)]
    assert sorted(seen_nans) == nan_positions  # each NaN is its own element


def check_inverse(a, values, inverse):
    """inverse: a's shape; values[inverse] reproduces a (NaN for NaN, == otherwise), each NaN once."""
    assert inverse.dtype == np.int64 and inverse.shape == a.shape
    for v, i in zip(a.reshape(-1), inverse.reshape(-1)):
        if has_nan(v):
            assert has_nan(values[i])
        else:
            assert values[i] == v
    nan_slots = [int(i) for v, i in zip(a.reshape(-1), inverse.reshape(-1)) if has_nan(v)]
    assert len(set(nan_slots)) == len(nan_slots)


@given(a=arrays())
def test_unique_all_meets_the_standard(a):
    out = xp.unique_all(xp.asarray(a))
    assert type(out).__name__ == "UniqueAllResult"
    assert out._fields == ("values", "indices", "inverse_indices", "counts")
    values, indices, inverse, counts = (np.asarray(o) for o in out)
    check_values(a, values)
    check_indices(a, values, indices)
    check_inverse(a, values, inverse)
    check_counts(a, values, counts)
    assert out.values.dtype == xp.asarray(a).dtype
    assert all(o.dtype == xp.int64 for o in out[1:])


@given(a=arrays())
def test_unique_counts_meets_the_standard(a):
    out = xp.unique_counts(xp.asarray(a))
    assert type(out).__name__ == "UniqueCountsResult" and out._fields == ("values", "counts")
    values, counts = np.asarray(out.values), np.asarray(out.counts)
    check_values(a, values)
    check_counts(a, values, counts)
    assert counts.sum() == a.size


@given(a=arrays())
def test_unique_inverse_meets_the_standard(a):
    out = xp.unique_inverse(xp.asarray(a))
    assert type(out).__name__ == "UniqueInverseResult" and out._fields == ("values", "inverse_indices")
    values = np.asarray(out.values)
    check_values(a, values)
    check_inverse(a, values, np.asarray(out.inverse_indices))


@given(a=arrays())
def test_unique_values_meets_the_standard(a):
    out = xp.unique_values(xp.asarray(a))
    assert isinstance(out, xp.Array)
    check_values(a, np.asarray(out))


def assert_identical(got, expected):
    """Same dtype, shape and values, NaN where NaN, and the same sign on every zero (real and imaginary parts)."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got.dtype, got.shape, expected.shape)
    np.testing.assert_array_equal(got, expected)
    if got.dtype.kind in "fc":
        for part in (np.real, np.imag):
            np.testing.assert_array_equal(np.signbit(part(got)), np.signbit(part(expected)))


@pytest.mark.parametrize("name", ["unique_all", "unique_counts", "unique_inverse", "unique_values"])
@given(a=arrays())
def test_unique_results_are_sorted_as_array_api_strict_returns_them(name, a):
    # Clients (LabelEncoder-style code, array-api-extra) rely on sorted values,
    # NaNs last, with indices, inverse and counts in that order.
    got = getattr(xp, name)(xp.asarray(a))
    expected = getattr(strict, name)(strict.asarray(a))
    if name == "unique_values":
        got, expected = (got,), (expected,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert_identical(g, e)


def test_unique_values_are_sorted_with_nans_last_and_signed_zeros_one_value():
    x = xp.asarray([3.0, math.nan, -0.0, 100.0, 0.0, -7.0, math.nan, 3.0])
    values, indices, inverse, counts = xp.unique_all(x)
    np.testing.assert_array_equal(np.asarray(values), [-7.0, -0.0, 3.0, 100.0, math.nan, math.nan])
    np.testing.assert_array_equal(np.asarray(indices), [5, 2, 0, 3, 1, 6])  # first occurrences; -0.0 came first
    assert np.signbit(np.asarray(values)[1])
    np.testing.assert_array_equal(np.asarray(inverse), [2, 4, 1, 3, 1, 0, 5, 2])
    np.testing.assert_array_equal(np.asarray(counts), [1, 2, 2, 1, 1, 1])


@given(y=arrays(names=INT_NAMES + ["float32", "float64"], min_dims=1, max_dims=1))
def test_label_encoding_by_sorted_unique_and_searchsorted(y):
    # scikit-learn's LabelEncoder: classes_ = unique(y); transform(y) = searchsorted(classes_, y).
    y = y[~np.isnan(y)] if y.dtype.kind == "f" else y
    classes = xp.unique_values(xp.asarray(y))
    codes = xp.searchsorted(classes, xp.asarray(y))
    expected_classes, expected_codes = np.unique(y, return_inverse=True)
    np.testing.assert_array_equal(np.asarray(classes), expected_classes)
    np.testing.assert_array_equal(np.asarray(codes), expected_codes)
    np.testing.assert_array_equal(np.asarray(xp.unique_inverse(xp.asarray(y)).inverse_indices), expected_codes)
    np.testing.assert_array_equal(np.asarray(xp.take(classes, codes)), y)  # inverse_transform


def test_nans_are_distinct_and_signed_zeros_are_one_value():
    x = xp.asarray([[math.nan, -0.0, 1.0], [0.0, math.nan, 1.0]])
    values, indices, inverse, counts = xp.unique_all(x)
    got = {(float(v), int(i), int(c)) for v, i, c in zip(np.asarray(values), np.asarray(indices), np.asarray(counts))
           if not math.isnan(v)}
    assert got == {(0.0, 1, 2), (1.0, 2, 2)}
    assert np.isnan(np.asarray(values)).sum() == 2
    assert inverse.shape == (2, 3)
    z = xp.asarray([complex(math.nan, 0), complex(math.nan, 0), complex(0, math.nan), 0j])
    assert [int(c) for c in np.asarray(xp.unique_counts(z).counts)] == [1, 1, 1, 1]


def test_zero_dimensional_and_zero_size_inputs():
    values, indices, inverse, counts = xp.unique_all(xp.asarray(5, dtype=xp.int16))
    assert values.shape == indices.shape == counts.shape == (1,) and inverse.shape == ()
    assert (int(values[0]), int(indices[0]), int(inverse), int(counts[0])) == (5, 0, 0, 1)
    empty = xp.zeros((2, 0, 3), dtype=xp.float32)
    values, indices, inverse, counts = xp.unique_all(empty)
    assert values.shape == indices.shape == counts.shape == (0,) and inverse.shape == (2, 0, 3)
    assert values.dtype == xp.float32 and inverse.dtype == xp.int64
    assert xp.unique_values(empty).shape == (0,)


@pytest.mark.parametrize("name", ["unique_all", "unique_counts", "unique_inverse", "unique_values"])
def test_unique_is_a_force_point_returning_realized_arrays(name):
    x = xp.asarray([3, 1, 3]) + 1
    debug.reset()
    out = getattr(xp, name)(x)
    assert debug.counters["realizations"] >= 1
    realized = debug.counters["realizations"]
    first = out if name == "unique_values" else out[0]
    assert sorted(np.asarray(first).tolist()) == [2, 4]
    assert debug.counters["realizations"] == realized  # the results needed no further work


@pytest.mark.parametrize("name", ["unique_all", "unique_counts", "unique_inverse", "unique_values"])
def test_unique_errors_name_the_function(name):
    with pytest.raises(TypeError, match=f"^{name}: x must be an arrayx array"):
        getattr(xp, name)([1, 2, 2])


# isin


@st.composite
def isin_cases(draw):
    """Two arrays of any (possibly different) dtypes, x2 often sharing x1's values."""
    a1 = draw(arrays(max_dims=2))
    name2 = draw(st.sampled_from([a1.dtype.name, a1.dtype.name, *DTYPE_NAMES]))
    pool = pooled_elements(name2)
    if a1.size and a1.dtype == np.dtype(name2):
        pool = st.sampled_from(a1.reshape(-1).tolist()) | pool
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=5))
    a2 = draw(hnp.arrays(np.dtype(name2), shape, elements=pool))
    return a1, a2


def promoted(a1, a2):
    """a1 and a2 as arrayx promotes them (its dtype table), as NumPy arrays."""
    dtype = xp.result_type(xp.asarray(a1).dtype, xp.asarray(a2).dtype)
    return a1.astype(str(dtype)), a2.astype(str(dtype))


def reference_isin(a1, a2, invert):
    """Membership by ==, as the standard defines it (NaN is in nothing, -0 is in [0])."""
    p1, p2 = promoted(a1, a2)
    found = (p1.reshape(p1.shape + (1,)) == p2.reshape(-1)).any(axis=-1)
    return ~found if invert else found


@given(case=isin_cases(), invert=st.booleans())
def test_isin_matches_equality_after_promotion(case, invert):
    a1, a2 = case
    out = xp.isin(xp.asarray(a1), xp.asarray(a2), invert=invert)
    got = np.asarray(out)
    assert out.dtype == xp.bool and got.shape == a1.shape
    np.testing.assert_array_equal(got, reference_isin(a1, a2, invert))


@given(a=arrays(names=INT_NAMES, max_dims=2), data=st.data(), invert=st.booleans())
def test_isin_takes_a_python_scalar_on_either_side(a, data, invert):
    info = np.iinfo(a.dtype)
    scalar = data.draw(st.sampled_from(a.reshape(-1).tolist() or [0]) | st.integers(int(info.min), int(info.max)))
    right = xp.isin(xp.asarray(a), scalar, invert=invert)
    np.testing.assert_array_equal(np.asarray(right), (a == scalar) != invert)
    left = xp.isin(scalar, xp.asarray(a), invert=invert)
    assert left.shape == () and left.dtype == xp.bool
    assert bool(left) == (bool((a == scalar).any()) != invert)


@given(a1=arrays(names=INT_NAMES, max_dims=2), a2=arrays(names=INT_NAMES, max_dims=2))
def test_isin_matches_array_api_strict_for_integers(a1, a2):
    if np.result_type(a1.dtype, a2.dtype).kind == "f":
        a2 = a2.astype(a1.dtype)  # int64 with uint64 has no promotion in the standard
    got = np.asarray(xp.isin(xp.asarray(a1), xp.asarray(a2)))
    np.testing.assert_array_equal(got, np.asarray(strict.isin(strict.asarray(a1), strict.asarray(a2))))


def test_isin_floating_special_values():
    x1 = xp.asarray([math.nan, -0.0, 0.0, math.inf, 1.5])
    x2 = xp.asarray([0.0, math.nan, math.inf], dtype=xp.float32)
    np.testing.assert_array_equal(np.asarray(xp.isin(x1, x2)), [False, True, True, True, False])
    np.testing.assert_array_equal(np.asarray(xp.isin(x1, x2, invert=True)), [True, False, False, False, True])
    np.testing.assert_array_equal(np.asarray(xp.isin(x1, xp.zeros((0,)))), [False] * 5)


def test_isin_is_lazy():
    x1 = xp.asarray([1, 2, 3])
    debug.reset()
    out = xp.isin(x1, xp.asarray([[3], [1]], dtype=xp.int8))
    assert debug.counters["steps_run"] == 0
    np.testing.assert_array_equal(np.asarray(out), [True, False, True])


def test_isin_errors_name_the_function():
    with pytest.raises(TypeError, match="^isin: at least one operand must be an arrayx array"):
        xp.isin(1, 2)
    with pytest.raises(TypeError, match="^isin: x2 must be an arrayx array or a Python scalar"):
        xp.isin(xp.asarray([1]), [1, 2])
    with pytest.raises(TypeError, match="^isin: x1 must be an arrayx array or a Python scalar"):
        xp.isin("a", xp.asarray([1]))
    with pytest.raises(OverflowError, match="^isin: Python int 300"):
        xp.isin(xp.asarray([1], dtype=xp.int8), 300)
