"""What the tests compare arrayx against: NumPy results, over the standard's dtypes."""

import math

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

INT_NAMES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
REAL_NAMES = INT_NAMES + ["float32", "float64"]
DTYPE_NAMES = ["bool"] + REAL_NAMES + ["complex64", "complex128"]
# Values where IEEE arithmetic has special cases; tests draw them often.
SPECIAL_FLOATS = [0.0, -0.0, 1.0, -1.0, math.nan, math.inf, -math.inf]


def pooled_elements(name, wide_complex=False):
    """Values of dtype `name`, often from a small pool so that repeats, ties,
    signed zeros and NaNs are common. Complex parts come from SPECIAL_FLOATS
    only (repeats for set functions), or also from [-5, 5] with wide_complex."""
    dtype = np.dtype(name)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind == "c":
        part = st.sampled_from(SPECIAL_FLOATS)
        if wide_complex:
            part = part | st.floats(-5, 5, width=dtype.itemsize * 4)
        return st.builds(complex, part, part)
    if dtype.kind == "f":
        return st.sampled_from(SPECIAL_FLOATS) | hnp.from_dtype(dtype)
    info = np.iinfo(dtype)
    return st.sampled_from([0, 1, 2, int(info.min), int(info.max)]) | hnp.from_dtype(dtype)


def assert_same(x, expected):
    """arrayx array `x` has the dtype, shape and values (NaN where NaN) of the NumPy array `expected`."""
    got = np.asarray(x)
    expected = np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got.dtype, got.shape, expected.dtype, expected.shape)
    np.testing.assert_array_equal(got, expected)
