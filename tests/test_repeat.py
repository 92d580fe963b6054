"""repeat against NumPy: int repeats (lazy) and arrays of repeats (a force
point, since they decide the output shape), along an axis or flattened; errors
naming repeat."""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import arrayx as xp
from oracle import assert_same
from arrayx import debug

DTYPE_NAMES = ["bool", "int8", "int64", "uint8", "uint64", "float32", "float64", "complex128"]
REPEAT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def arrays():
    shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
    return st.sampled_from(DTYPE_NAMES).flatmap(lambda name: hnp.arrays(np.dtype(name), shapes))


def axes(ndim):
    return st.none() | (st.integers(-ndim, ndim - 1) if ndim else st.nothing())


@given(a=arrays(), data=st.data())
def test_repeat_with_an_int_matches_numpy(a, data):
    axis = data.draw(axes(a.ndim))
    repeats = data.draw(st.integers(0, 3))
    assert_same(xp.repeat(xp.asarray(a), repeats, axis=axis), np.repeat(a, repeats, axis=axis))


@given(a=arrays(), data=st.data())
def test_repeat_with_an_array_matches_numpy(a, data):
    axis = data.draw(axes(a.ndim))
    size = a.size if axis is None else a.shape[axis]
    shape = data.draw(st.sampled_from([(1,), (size,)]))
    # uint64 counts too: NumPy's own repeat refuses them (arrayx casts to the index dtype).
    repeats = data.draw(hnp.arrays(np.dtype(data.draw(st.sampled_from(REPEAT_DTYPES))), shape,
                                   elements=st.integers(0, 3)))
    kwargs = {} if axis is None and data.draw(st.booleans()) else {"axis": axis}
    out = xp.repeat(xp.asarray(a), xp.asarray(repeats), **kwargs)
    assert_same(out, np.repeat(a, repeats.astype(np.int64), axis=axis))


def test_int_repeats_are_lazy_and_array_repeats_force():
    debug.reset()
    x = xp.asarray(np.arange(6.0).reshape(2, 3)) * 2.0
    y = xp.repeat(x, 2, axis=1)
    assert debug.counters["realizations"] == 0
    z = xp.repeat(x, xp.asarray([1, 0]) + 1, axis=0)   # the counts are computed, then used
    assert debug.counters["realizations"] >= 1
    a = np.arange(6.0).reshape(2, 3) * 2.0
    assert_same(y, np.repeat(a, 2, axis=1))
    assert_same(z, np.repeat(a, [2, 1], axis=0))


@pytest.mark.parametrize("x, repeats, kwargs, error", [
    (xp.ones(3), -1, {}, ValueError),
    (xp.ones(3), xp.asarray([1, -1, 1]), {}, ValueError),
    (xp.ones(3), xp.asarray([1, 1]), {}, ValueError),                  # neither (1,) nor (3,)
    (xp.ones((2, 3)), xp.asarray([1, 1, 1]), {"axis": 0}, ValueError),
    (xp.ones(3), xp.asarray([[1, 1, 1]]), {}, ValueError),             # not 1-D
    (xp.ones(3), xp.asarray([1.0, 1.0, 1.0]), {}, TypeError),
    (xp.ones(3), 1.5, {}, TypeError),
    (xp.ones(3), True, {}, TypeError),
    (xp.ones(3), 2, {"axis": 1}, ValueError),                          # AxisError
    (np.ones(3), 2, {}, TypeError),
])
def test_repeat_errors_name_repeat(x, repeats, kwargs, error):
    with pytest.raises(error, match="^repeat: "):
        xp.repeat(x, repeats, **kwargs)
