"""What the tests compare arrayx against: NumPy results, over the standard's dtypes."""

import math

import numpy as np

INT_NAMES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
REAL_NAMES = INT_NAMES + ["float32", "float64"]
DTYPE_NAMES = ["bool"] + REAL_NAMES + ["complex64", "complex128"]
# Values where IEEE arithmetic has special cases; tests draw them often.
SPECIAL_FLOATS = [0.0, -0.0, 1.0, -1.0, math.nan, math.inf, -math.inf]


def assert_same(x, expected):
    """arrayx array `x` has the dtype, shape and values (NaN where NaN) of the NumPy array `expected`."""
    got = np.asarray(x)
    expected = np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got.dtype, got.shape, expected.dtype, expected.shape)
    np.testing.assert_array_equal(got, expected)
