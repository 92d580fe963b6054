"""Indexing against NumPy: integer-array keys mixed with integers, slices, None
and ..., boolean masks of every rank and boolean scalars, in `__getitem__` and
(functional) `__setitem__`; `take` and `take_along_axis`; what stays lazy;
errors naming the function."""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import arrayx as xp
from oracle import DTYPE_NAMES, assert_same
from arrayx import debug

pytestmark = pytest.mark.usefixtures("lazy_and_eager")   # results alike in eager mode

INDEX_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def arrays(shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4), names=DTYPE_NAMES):
    return st.sampled_from(names).flatmap(lambda name: hnp.arrays(np.dtype(name), shape))


def to_xp(key):
    """The arrayx key of a NumPy key: NumPy arrays become arrayx arrays (0-d ones too)."""
    items = key if isinstance(key, tuple) else (key,)
    out = tuple(xp.asarray(k) if isinstance(k, np.ndarray) else k for k in items)
    return out if isinstance(key, tuple) else out[0]


def index_array(draw, shape, n):
    """An integer index array of `shape` whose values are valid on an axis of size n."""
    name = draw(st.sampled_from(INDEX_DTYPES))
    lo = 0 if name.startswith("u") else -n
    if n == 0:
        assert 0 in shape
        return np.zeros(shape, name)
    return draw(hnp.arrays(np.dtype(name), shape, elements=st.integers(lo, n - 1)))


@st.composite
def slices(draw, n):
    """Slices over an axis of size n, often whole (random bounds are often empty)."""
    if draw(st.booleans()):
        return draw(st.sampled_from([slice(None), slice(None, None, -1), slice(1, None), slice(None, -1)]))
    bounds = st.none() | st.integers(-n - 2, n + 2)
    step = st.none() | st.integers(-3, 3).filter(bool)
    return slice(draw(bounds), draw(bounds), draw(step))


@st.composite
def advanced_keys(draw, shape):
    """Keys of integers, slices, integer arrays (0-d too), None, at most one ...,
    and boolean scalars, with at least one advanced index.

    Index arrays broadcast together (their shapes come from one
    mutually-broadcastable draw); an array on an axis of size 0 is empty.
    """
    ndim = len(shape)
    m = draw(st.integers(0, ndim))                 # axes indexed explicitly
    kinds = draw(st.lists(st.sampled_from(["int", "slice", "array", "array"]), min_size=m, max_size=m))
    ellipsis_at = draw(st.none() | st.integers(0, m))
    # Which axis each explicit item indexes: the ellipsis takes the axes left over.
    axes = list(range(m)) if ellipsis_at is None else \
        list(range(ellipsis_at)) + list(range(ndim - m + ellipsis_at, ndim))
    array_axes = [a for a, k in zip(axes, kinds) if k == "array"]
    empty = any(shape[a] == 0 for a in array_axes)
    shapes = []
    if array_axes:
        shapes = list(draw(hnp.mutually_broadcastable_shapes(
            num_shapes=len(array_axes), min_dims=0, max_dims=3,
            min_side=0 if empty else draw(st.sampled_from([0, 1, 1, 1])),
            max_side=3, base_shape=(0,) if empty else ())).input_shapes)
        for i, a in enumerate(array_axes):
            if shape[a] == 0 and 0 not in shapes[i]:
                shapes[i] = shapes[i][:-1] + (0,)   # the base (0,) keeps this broadcastable
    items = []
    for a, k in zip(axes, kinds):
        n = shape[a]
        if k == "int" and n == 0:
            k = "slice"
        if k == "int":
            items.append(draw(st.integers(-n, n - 1)))
        elif k == "slice":
            items.append(draw(slices(n)))
        else:
            items.append(index_array(draw, shapes.pop(0), n))
    if ellipsis_at is not None:
        items.insert(ellipsis_at, Ellipsis)
    # None and boolean scalars index no axis: insert them anywhere.
    extras = st.sampled_from([None, None, None, True, np.bool_(True), np.array(True), False, np.array(False)])
    for extra in draw(st.lists(extras, max_size=2)):   # False empties the result: not too often
        items.insert(draw(st.integers(0, len(items))), extra)
    if not any(isinstance(k, (np.ndarray, bool, np.bool_)) for k in items):
        items.insert(draw(st.integers(0, len(items))), draw(st.sampled_from([np.array(True), True])))
    return tuple(items)


# Mostly arrays without zero sides: most keys then select something.
SHAPES = hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4) | \
    hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)


@st.composite
def arrays_and_advanced_keys(draw, names=DTYPE_NAMES):
    a = draw(arrays(SHAPES, names=names))
    return a, draw(advanced_keys(a.shape))


def as_lists(key):
    """The key with each NumPy array of one or more dimensions as the nested
    list it holds (NumPy reads such a list as the index array)."""
    items = key if isinstance(key, tuple) else (key,)
    out = tuple(k.tolist() if isinstance(k, np.ndarray) and k.ndim else k for k in items)
    return out if isinstance(key, tuple) else out[0]


def getitem_matches_numpy(a, key, convert=to_xp):
    """x[convert(key)] is a[key]; or both raise an IndexError (arrayx naming __getitem__)."""
    x = xp.asarray(a)
    try:
        expected = a[key]
    except IndexError:
        with pytest.raises(IndexError, match="__getitem__"):
            x[convert(key)]
        return
    assert_same(x[convert(key)], expected)


@given(case=arrays_and_advanced_keys())
def test_getitem_with_integer_arrays_matches_numpy(case):
    getitem_matches_numpy(*case)


def as_written(key):
    return key


@given(case=arrays_and_advanced_keys())
def test_getitem_with_numpy_arrays_and_lists_as_indices_matches_numpy(case):
    """NumPy's own index arrays, and the lists NumPy reads as index arrays, index as in NumPy."""
    a, key = case
    getitem_matches_numpy(a, key, convert=as_written)
    getitem_matches_numpy(a, as_lists(key), convert=as_written)


@given(a=arrays(), data=st.data())
def test_getitem_with_a_numpy_mask_or_a_list_of_bools_matches_numpy(a, data):
    mask = data.draw(masks(a.shape, fit=data.draw(st.booleans())))
    getitem_matches_numpy(a, mask, convert=as_written)
    getitem_matches_numpy(a, as_lists(mask), convert=as_written)


@pytest.mark.parametrize("key", [
    (slice(None), np.array([0, 1]), Ellipsis, np.array([1, 0])),   # ... of no axes separates them
    (slice(None), 0, Ellipsis, np.array([2, 1])),
    (np.array([[0], [1]]), slice(None), np.array([0, 2, 3])),      # separated: broadcast shape in front
    (slice(1, None), np.array([[0], [1]]), np.array([0, 2, 3])),   # adjacent: in place
    (None, np.array([1]), None, 0, slice(None, None, -2)),
    (True, np.array([0, 1]), False),
    (np.array(1), slice(None), np.array(-1)),
])
def test_getitem_places_the_broadcast_shape_like_numpy(key):
    getitem_matches_numpy(np.arange(60).reshape(3, 4, 5), key)


@st.composite
def masks(draw, shape, fit=True):
    """Boolean masks over the leading axes of `shape` (of every rank; a side of 0
    is allowed where the array's side is not, as in NumPy). With fit=False, any
    shape: the mask may not fit the array."""
    if not fit:
        mshape = draw(hnp.array_shapes(min_dims=0, max_dims=len(shape) + 1, min_side=0, max_side=4))
    else:
        k = draw(st.integers(0, len(shape)))
        mshape = tuple(0 if draw(st.integers(0, 4)) == 0 else n for n in shape[:k])
    return draw(hnp.arrays(np.bool_, mshape))


@given(a=arrays(), data=st.data())
def test_getitem_with_a_boolean_mask_matches_numpy(a, data):
    getitem_matches_numpy(a, data.draw(masks(a.shape, fit=data.draw(st.booleans()))))


@given(a=arrays(hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=4)), data=st.data())
def test_getitem_with_a_mask_beside_other_indices_matches_numpy(a, data):
    # A mask behaves as its nonzero() arrays; beside integers, slices, None and
    # boolean scalars it is one more advanced index (NumPy's semantics).
    start = data.draw(st.integers(0, a.ndim - 1))
    mask = data.draw(masks(a.shape[start:]))
    before = tuple(data.draw(st.integers(-n, n - 1) if n and data.draw(st.booleans()) else slices(n))
                   for n in a.shape[:start])
    after = data.draw(st.sampled_from([(), (Ellipsis,), (None,), (True,), (False, Ellipsis)]))
    getitem_matches_numpy(a, before + (mask,) + after)


def value_for(data, a, target_shape):
    """A value to assign to a[key] of `target_shape`: a Python scalar, or an array
    of a suffix of the shape (maybe with a leading 1) that broadcasts to it."""
    if data.draw(st.booleans()):
        value = data.draw(hnp.from_dtype(a.dtype)).item()
        return value, value
    suffix = target_shape[data.draw(st.integers(0, len(target_shape))):]
    if len(suffix) < len(target_shape) and data.draw(st.booleans()):
        suffix = (1,) + suffix   # a side of 1 broadcasts (the value may not have more dimensions)
    value = data.draw(hnp.arrays(a.dtype, suffix))
    return value, xp.asarray(value)


def setitem_matches_numpy(a, key, value, xp_value, convert=to_xp):
    """x[key] = value as in NumPy (or both raise); other arrays keep their values.

    Integer arrays with duplicate indices: the standard leaves unspecified which
    value lands; the CPU executor assigns with NumPy, so the last one does.
    """
    x = xp.asarray(a)
    alias = x
    derived = xp.flip(x)                  # computed from the old value, not evaluated yet
    kept = xp.asarray(x, copy=True)
    expected = a.copy()
    try:
        expected[key] = value
    except (IndexError, ValueError) as e:
        with pytest.raises(type(e), match="__setitem__"):
            x[convert(key)] = xp_value
        assert_same(x, a)                 # a failed assignment leaves x as it was, as in NumPy
        return
    x[convert(key)] = xp_value
    assert_same(x, expected)
    assert_same(alias, expected)          # one object: the alias sees the assignment
    assert_same(kept, a)
    assert_same(derived, np.flip(a))


SET_DTYPES = ["bool", "int8", "uint16", "int64", "float32", "float64", "complex128"]


@given(case=arrays_and_advanced_keys(SET_DTYPES), data=st.data())
def test_setitem_with_integer_arrays_matches_numpy(case, data):
    a, key = case
    try:
        target = a[key].shape
    except IndexError:
        target = ()
    setitem_matches_numpy(a, key, *value_for(data, a, target))


@given(a=arrays(names=SET_DTYPES), data=st.data())
def test_setitem_with_a_boolean_mask_matches_numpy(a, data):
    key = data.draw(masks(a.shape, fit=data.draw(st.integers(0, 4)) > 0))
    try:
        target = a[key].shape
    except IndexError:
        target = ()
    setitem_matches_numpy(a, key, *value_for(data, a, target))


@given(case=arrays_and_advanced_keys(SET_DTYPES), data=st.data())
def test_setitem_with_numpy_arrays_and_lists_as_indices_matches_numpy(case, data):
    a, key = case
    key = data.draw(st.sampled_from([key, as_lists(key)]))
    try:
        target = a[key].shape
    except IndexError:
        target = ()
    setitem_matches_numpy(a, key, *value_for(data, a, target), convert=as_written)


def test_setitem_with_duplicate_indices_keeps_the_last_value_like_numpy():
    a = np.zeros(4)
    key = np.array([1, 1, 3, -1])
    setitem_matches_numpy(a, key, np.array([1.0, 2.0, 3.0, 4.0]), xp.asarray([1.0, 2.0, 3.0, 4.0]))


def test_setitem_promotes_a_smaller_value_with_advanced_keys():
    x = xp.zeros((2, 3), dtype=xp.float64)
    x[xp.asarray([1, 0]), 1:] = xp.asarray([[1, 2]], dtype=xp.int8)
    x[x > 1.5] = xp.asarray(7, dtype=xp.uint8)
    assert_same(x, np.array([[0.0, 1.0, 7.0], [0.0, 1.0, 7.0]]))


# laziness


@pytest.fixture
def counters():
    debug.reset()
    return debug.counters


@pytest.mark.lazy_only
def test_integer_array_indexing_is_lazy(counters):
    x = xp.exp(xp.asarray(np.arange(12.0).reshape(3, 4)))
    i = xp.asarray([3, 0]) - 1        # lazy indices: getitem keeps them lazy
    y = x[i, 1:]
    x[0, xp.asarray([2, -1])] = 0.0   # evaluated indices: setitem checks them and stays lazy
    x[True, :, 1:] = y[0]
    assert counters["realizations"] == counters["steps_run"] == 0
    a = np.exp(np.arange(12.0).reshape(3, 4))
    expected_y = a[[2, -1], 1:]
    a[0, [2, -1]] = 0.0
    a[True, :, 1:] = expected_y[0]
    assert_same(y, expected_y)
    assert_same(x, a)


@pytest.mark.lazy_only
def test_assigning_a_scalar_through_a_mask_is_lazy(counters):
    # The value does not depend on how many elements the mask selects: a `where`.
    x = xp.asarray(np.arange(-6.0, 6.0).reshape(3, 4))
    x[x < 0] = 0.0
    x[xp.asarray([True, False, True])] = xp.asarray([1.0, 2.0, 3.0, 4.0])   # a mask over leading axes
    x[xp.asarray(False)] = -1.0
    assert counters["realizations"] == 0
    assert "where" in xp.graph(x)
    a = np.arange(-6.0, 6.0).reshape(3, 4)
    a[a < 0] = 0.0
    a[np.array([True, False, True])] = [1.0, 2.0, 3.0, 4.0]
    assert_same(x, a)


@pytest.mark.lazy_only
def test_a_mask_is_a_force_point_that_computes_the_array_once(counters):
    a = np.linspace(-1, 1, 7)
    x = xp.sin(xp.asarray(a))
    y = x[x > 0]
    steps = counters["steps_run"]
    assert steps == 2                            # sin and greater, one fused step; nonzero of the mask
    assert_same(y, np.sin(a)[np.sin(a) > 0])
    assert counters["steps_run"] == steps + 1    # the gather only: sin is not recomputed


@pytest.mark.lazy_only
def test_out_of_bounds_integer_arrays_in_getitem_raise_at_evaluation():
    x = xp.ones((3, 2))
    y = x[xp.asarray([0, 3])]       # nothing checked yet: the indices are data
    with pytest.raises(IndexError, match="__getitem__"):
        np.asarray(y)
    assert_same(x, np.ones((3, 2)))


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("key", [
    ([1, 10],), ([-7],), (slice(None), [0, 4]), ([1], [4]), (Ellipsis, [2**63 - 1]), ([[0], [3]], 0),
], ids=repr)
def test_out_of_bounds_setitem_raises_at_the_call_and_leaves_x_as_numpy_does(lazy, key):
    # NumPy raises at the assignment and keeps the array; so does arrayx, lazy indices included.
    a = np.arange(12.0).reshape(3, 4)
    expected = a.copy()
    with pytest.raises(IndexError, match="out of bounds"):
        expected[tuple(np.asarray(k) if isinstance(k, list) else k for k in key)] = 0.0
    x = xp.asarray(a) * 1.0           # lazy, as the values of a training loop are
    index = (lambda k: xp.asarray(k) + 0) if lazy else xp.asarray
    with pytest.raises(IndexError, match=r"^__setitem__: index -?\d+ is out of bounds for axis \d+ with size \d+$"):
        x[tuple(index(k) if isinstance(k, list) else k for k in key)] = 0.0
    assert_same(x, a)                 # unchanged, and usable at every later force point
    x[xp.asarray([1, -1])] = 7.0
    expected[[1, -1]] = 7.0
    assert_same(x, expected)


@pytest.mark.lazy_only
def test_setitem_evaluates_a_lazy_index_array_but_not_the_array(counters):
    a = np.arange(12.0).reshape(3, 4)
    x = xp.exp(xp.asarray(a))
    i = xp.asarray([3, 0]) - 1        # [2, -1], lazy
    x[0, i] = 0.0
    assert counters["realizations"] == 1 and i._node.buffer is not None
    assert x._node.buffer is None     # the assignment itself stays lazy
    expected = np.exp(a)
    expected[0, [2, -1]] = 0.0
    assert_same(x, expected)


def test_a_mask_that_does_not_fit_raises_at_the_call_and_leaves_x():
    x = xp.asarray(np.arange(6.0)) * 1.0
    with pytest.raises(IndexError, match="^__setitem__: boolean index of shape"):
        x[xp.asarray([True, False])] = 1.0
    with pytest.raises(ValueError, match="^__setitem__: value of shape"):
        x[x > 2.5] = xp.asarray([1.0, 2.0])   # the mask selects 3 elements
    assert_same(x, np.arange(6.0))


# errors


@pytest.mark.parametrize("key, error", [
    (xp.asarray([0.0, 1.0]), IndexError),                            # float index array
    ((xp.asarray([0, 1]), xp.asarray([0, 1, 1])), IndexError),       # cannot broadcast
    (xp.ones((2, 2), dtype=xp.bool), IndexError),                    # mask of the wrong shape
    (xp.ones((3, 2, 1), dtype=xp.bool), IndexError),                 # mask of too many dimensions
    ((0, xp.ones(3, dtype=xp.bool)), IndexError),
    ((xp.asarray([0]), 0, 0), IndexError),                           # too many indices
    ((xp.asarray([0]), ..., ...), IndexError),                       # two ellipses
    ((xp.asarray([0]), 5), IndexError),                              # integer out of bounds
    ((xp.asarray([0]), slice(None, None, 0)), ValueError),
    ([0.5, 1], IndexError),                                          # a list of floats
    ([[0, 1], [0]], IndexError),                                     # a ragged list
    (np.array([0.0, 1.0]), IndexError),                              # a NumPy array of floats
])
def test_getitem_errors_name_getitem(key, error):
    with pytest.raises(error, match="__getitem__"):
        xp.ones((3, 2))[key]


@pytest.mark.parametrize("key, value, error", [
    (xp.asarray([0, 1]), xp.ones(3), ValueError),                    # value does not fit (2, 2)
    (xp.asarray([0, 1]), 1j, TypeError),                             # complex into float64
    (xp.asarray([0, 1]), xp.ones(2, dtype=xp.complex64), TypeError),
    (xp.asarray([True, False, True]), xp.ones(3), ValueError),       # 2 elements selected, not 3
    (xp.asarray([True, False]), 1.0, IndexError),
    (xp.asarray([0.5]), 1.0, IndexError),
    (xp.asarray([0]), np.ones(2), TypeError),                        # not an arrayx array
])
def test_setitem_errors_name_setitem(key, value, error):
    x = xp.ones((3, 2))
    with pytest.raises(error, match="__setitem__"):
        x[key] = value
    assert_same(x, np.ones((3, 2)))   # a failed assignment leaves the array alone


# take and take_along_axis


@given(a=arrays(hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=4)), data=st.data())
def test_take_matches_numpy(a, data):
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[axis]
    length = data.draw(st.integers(0, 5)) if n else 0
    indices = index_array(data.draw, (length,), n)
    if a.ndim == 1 and data.draw(st.booleans()):
        out = xp.take(xp.asarray(a), xp.asarray(indices))     # axis may be omitted for 1-D x
    else:
        out = xp.take(xp.asarray(a), xp.asarray(indices), axis=axis)
    assert_same(out, np.take(a, indices, axis=axis))


@given(a=arrays(hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=4)), data=st.data())
def test_take_along_axis_matches_numpy(a, data):
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[axis]
    # indices: the shape of x but along axis, where any length goes; sides of 1 broadcast.
    shape = list(a.shape)
    shape[axis] = data.draw(st.integers(0, 5)) if n else 0
    shape = tuple(1 if i != axis % a.ndim and data.draw(st.integers(0, 3)) == 0 else s
                  for i, s in enumerate(shape))
    indices = index_array(data.draw, shape, n)
    if axis == -1 and data.draw(st.booleans()):
        out = xp.take_along_axis(xp.asarray(a), xp.asarray(indices))   # axis defaults to -1
    else:
        out = xp.take_along_axis(xp.asarray(a), xp.asarray(indices), axis=axis)
    assert_same(out, np.take_along_axis(a, indices, axis=axis))


@pytest.mark.lazy_only
def test_take_and_take_along_axis_are_lazy(counters):
    x = xp.asarray(np.arange(6).reshape(2, 3)) * 2
    y = xp.take(x, xp.asarray([2, 0]), axis=1)
    z = xp.take_along_axis(x, xp.asarray([[1], [-1]]), axis=1)
    assert counters["realizations"] == 0
    a = np.arange(6).reshape(2, 3) * 2
    assert_same(y, a[:, [2, 0]])
    assert_same(z, np.array([[a[0, 1]], [a[1, 2]]]))


@pytest.mark.parametrize("call, error, name", [
    (lambda: xp.take(xp.ones((2, 3)), xp.asarray([0])), ValueError, "take"),             # axis required
    (lambda: xp.take(xp.ones(3), xp.asarray([0.0])), TypeError, "take"),
    (lambda: xp.take(xp.ones(3), xp.asarray([[0]])), ValueError, "take"),                # 2-D indices
    (lambda: xp.take(xp.ones(3), xp.asarray(0)), ValueError, "take"),
    (lambda: xp.take(xp.ones(()), xp.asarray([0])), ValueError, "take"),
    (lambda: xp.take(xp.ones(3), xp.asarray([0]), axis=1), ValueError, "take"),          # AxisError
    (lambda: xp.take(np.ones(3), xp.asarray([0])), TypeError, "take"),
    (lambda: xp.take(xp.ones(3), [0]), TypeError, "take"),
    (lambda: xp.take_along_axis(xp.ones((2, 3)), xp.asarray([0])), ValueError, "take_along_axis"),
    (lambda: xp.take_along_axis(xp.ones((2, 3)), xp.asarray([[0.0]])), TypeError, "take_along_axis"),
    (lambda: xp.take_along_axis(xp.ones((2, 3)), xp.zeros((3, 1), dtype=xp.int64)), ValueError,
     "take_along_axis"),                                                                  # cannot broadcast
    (lambda: xp.take_along_axis(xp.ones((2, 3)), xp.zeros((2, 1), dtype=xp.int64), axis=2), ValueError,
     "take_along_axis"),
    (lambda: xp.take_along_axis(xp.ones((2, 3)), xp.zeros((2, 1), dtype=xp.int64), axis=None), TypeError,
     "take_along_axis"),
])
def test_take_errors_name_the_function(call, error, name):
    with pytest.raises(error, match=f"^{name}: "):
        call()


@pytest.mark.lazy_only
def test_take_out_of_bounds_raises_at_evaluation():
    y = xp.take(xp.ones(3), xp.asarray([3]))
    with pytest.raises(IndexError, match="^take: "):
        np.asarray(y)
    z = xp.take_along_axis(xp.ones((2, 3)), xp.asarray([[0], [-4]]), axis=1)
    with pytest.raises(IndexError, match="^take_along_axis: "):
        np.asarray(z)


@pytest.mark.usefixtures("cpu_as_default_device")   # a GPU copies a strided view in a step to transfer it
def test_evaluated_0d_integer_arrays_index_like_ints():
    """x[i, j] with evaluated 0-d integer arrays is NumPy's x[i, j]: a view the
    CPU's force point takes without a plan or a step, out of bounds an IndexError."""
    a = np.arange(24).reshape(2, 3, 4)
    x = xp.asarray(a)
    i, j = xp.asarray(1), xp.asarray(-2, dtype=xp.int8)
    debug.reset()
    for key, np_key in [((i, j), (1, -2)), ((i, slice(None), j), (1, slice(None), -2)),
                        ((Ellipsis, j), (Ellipsis, -2)), (i, 1)]:
        got = x[key]
        np.testing.assert_array_equal(np.asarray(got), a[np_key])
        assert got._node.buffer is not None and got._node.op.kind == "movement"
    assert debug.counters["plans_built"] == debug.counters["steps_run"] == 0
    with pytest.raises(IndexError, match="out of bounds"):
        x[xp.asarray(2), 0]
