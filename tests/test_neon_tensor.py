"""The neon Tensor of arrayx.neon: shapes, dtypes, host transfers, views that
share storage, assignment of every kind of value with casting, and laziness."""

import numpy as np
import pytest

import arrayx as xp
from arrayx.neon.backends import gen_backend
from arrayx.neon.backends.backend import OpTreeNode, Tensor
from arrayx.neon.backends.nervanacpu import CPUTensor


def host(shape, start=0):
    return np.arange(start, start + int(np.prod(shape)), dtype=np.float32).reshape(shape)


# -- construction and attributes

def test_at_least_two_dimensions(be):
    assert be.zeros(5).shape == (5, 1)
    assert be.zeros((5,)).shape == (5, 1)
    assert be.array([1, 2, 3]).shape == (3, 1)
    assert be.array(7.0).shape == (1, 1)
    assert be.zeros((2, 3, 4)).shape == (2, 3, 4)
    t = be.array(np.arange(3))
    np.testing.assert_array_equal(t.get(), [[0.], [1.], [2.]])


def test_attributes(be):
    t = be.zeros((3, 4), name='w')
    assert isinstance(t, CPUTensor) and isinstance(t, Tensor)
    assert t.name == 'w' and t.shape == (3, 4) and t.size == 12 and len(t) == 3
    assert t.dtype == np.float32 and t.backend is be
    assert be.zeros((2, 2), dtype=np.int32).dtype == np.int32
    be64 = gen_backend('cpu', datatype=np.float64)
    assert be64.zeros((2, 2)).dtype == np.float64
    assert be64.array([1, 2]).get().dtype == np.float64
    assert 'name:w' in str(t) and 'shape:(3, 4)' in repr(t)


def test_direct_construction(be):
    t = CPUTensor(be, shape=(2, 3))
    np.testing.assert_array_equal(t.get(), np.zeros((2, 3), np.float32))
    u = CPUTensor(be, dtype=np.int16, ary=[[1, 2], [3, 4]], name='u')
    assert u.dtype == np.int16 and u.name == 'u'
    np.testing.assert_array_equal(u.get(), [[1, 2], [3, 4]])


def test_unsupported_dtypes_are_refused_clearly(be):
    with pytest.raises(TypeError, match="complex64 is not supported"):
        be.zeros((2, 2), dtype=np.complex64)
    with pytest.raises(ValueError, match="float16, float32 or float64, got int32"):
        gen_backend('cpu', datatype=np.int32)


def test_get_is_a_copy(be):
    t = be.array(host((2, 3)))
    g = t.get()
    g[:] = -1
    np.testing.assert_array_equal(t.get(), host((2, 3)))
    assert t.get().dtype == np.float32


def test_set_fill_copy_copy_from(be):
    t = be.zeros((2, 3))
    assert t.set(host((2, 3))) is t
    np.testing.assert_array_equal(t.get(), host((2, 3)))
    t.set(np.arange(6, dtype=np.int64))           # same size: reshaped, cast
    np.testing.assert_array_equal(t.get(), host((2, 3)))
    t.set(np.array([1.0, 2.0, 3.0]))              # broadcast along rows
    np.testing.assert_array_equal(t.get(), [[1, 2, 3], [1, 2, 3]])
    assert t.fill(2.5) is t
    np.testing.assert_array_equal(t.get(), np.full((2, 3), 2.5))
    u = be.array(host((2, 3), 10))
    assert t.copy(u) is t
    np.testing.assert_array_equal(t.get(), host((2, 3), 10))
    t.copy_from(host((2, 3), 20))
    np.testing.assert_array_equal(t.get(), host((2, 3), 20))
    with pytest.raises(ValueError, match="cannot be assigned"):
        t.set(np.zeros(7))


def test_raw_is_the_current_buffer(be):
    t = be.array(host((2, 2)))
    raw = t.raw()
    np.testing.assert_array_equal(raw, host((2, 2)))
    assert not raw.flags.writeable


def test_reshape_is_a_view(be):
    t = be.array(host((3, 4)))
    r = t.reshape(2, 6)
    assert r.shape == (2, 6) and r.base is t
    np.testing.assert_array_equal(r.get(), host((2, 6)))
    assert t.reshape((3, 4)) is t
    assert t.reshape(12).shape == (12, 1)
    assert t.reshape(-1, 3).shape == (4, 3)
    r[1, :] = 0
    expected = host((3, 4)).ravel()
    expected[6:] = 0
    np.testing.assert_array_equal(t.get(), expected.reshape(3, 4))
    with pytest.raises(ValueError, match="total size"):
        t.reshape(5, 3)


def test_dimension_reorder_reshapes_to_the_reordered_sizes(be):
    # neon's Tensor.dimension_reorder: the sizes move, the elements keep their order (NumPy reshape).
    t = be.array(host((2, 3, 4)))
    r = t.dimension_reorder([2, 0, 1])
    assert r.shape == (4, 2, 3) and r.base is t
    np.testing.assert_array_equal(r.get(), host((2, 3, 4)).reshape(4, 2, 3))
    r[0, :, :] = -1.0                                    # a view: writes reach t
    expected = host((2, 3, 4)).reshape(4, 2, 3)
    expected[0] = -1.0
    np.testing.assert_array_equal(t.get(), expected.reshape(2, 3, 4))
    assert t.dimension_reorder((0, 1, 2)) is t
    for order in ([0, 1], [0, 0, 1], [0, 1, 3]):
        with pytest.raises(ValueError, match="^dimension_reorder: new_order"):
            t.dimension_reorder(order)


def test_transpose_is_a_view(be):
    t = be.array(host((2, 3)))
    tt = t.T
    assert tt.shape == (3, 2)
    np.testing.assert_array_equal(tt.get(), host((2, 3)).T)
    tt[0] = -1                      # row 0 of the transpose: column 0 of t
    np.testing.assert_array_equal(t.get()[:, 0], [-1, -1])
    assert t.transpose().shape == (3, 2)
    t3 = be.array(host((2, 3, 4)))
    assert t3.T.shape == (2, 4, 3)  # batched: the last two axes swap
    np.testing.assert_array_equal(t3.T.get(), host((2, 3, 4)).transpose(0, 2, 1))
    out = be.empty((3, 2))
    t.transpose(out)
    np.testing.assert_array_equal(out.get(), t.get().T)


def test_take(be):
    t = be.array(host((3, 4)))
    got = t.take([2, 0], axis=1)
    np.testing.assert_array_equal(got.get(), host((3, 4))[:, [2, 0]])
    idx = be.array([1, 1, 0], dtype=np.int32)
    np.testing.assert_array_equal(t.take(idx, 0).get(), host((3, 4))[[1, 1, 0]])
    got[:] = 0                       # a copy, as in neon
    np.testing.assert_array_equal(t.get(), host((3, 4)))
    out = be.zeros((3, 2))
    assert t.take(np.array([3, 1]), 1, out=out) is out
    np.testing.assert_array_equal(out.get(), host((3, 4))[:, [3, 1]])
    flat = t.take([5, 0], axis=None)
    np.testing.assert_array_equal(flat.get(), [[5.], [0.]])


def test_share(be):
    t = be.array(host((4, 6)))
    s = t.share((3, 5))
    np.testing.assert_array_equal(s.get(), host((4, 6)).ravel()[:15].reshape(3, 5))
    s[:] = 0
    expected = host((4, 6)).ravel()
    expected[:15] = 0
    np.testing.assert_array_equal(t.get(), expected.reshape(4, 6))
    with pytest.raises(ValueError):
        t.share((5, 5))


# -- views share storage

def test_integer_index_keeps_the_axis(be):
    t = be.array(host((3, 4)))
    assert t[1].shape == (1, 4)
    assert t[:, 2].shape == (3, 1)
    assert t[1, 2].shape == (1, 1)
    assert t[-1].shape == (1, 4)
    np.testing.assert_array_equal(t[-1].get(), host((3, 4))[-1:])
    t3 = be.array(host((2, 3, 4)))
    assert t3[0].shape == (3, 4)         # more than two dims: axes of size 1 drop
    np.testing.assert_array_equal(t3[1].get(), host((2, 3, 4))[1])
    assert t[:] is t
    with pytest.raises(IndexError):
        t[3]
    with pytest.raises(IndexError):
        t[0, 0, 0]


def test_writes_through_views_reach_base_and_other_views(be):
    t = be.zeros((4, 5), name='base')
    rows = t[1:3]
    col = t[:, 2]
    block = rows[:, 1:4]                 # a view of a view
    block[:] = 7
    expected = np.zeros((4, 5), np.float32)
    expected[1:3, 1:4] = 7
    np.testing.assert_array_equal(t.get(), expected)
    np.testing.assert_array_equal(rows.get(), expected[1:3])
    np.testing.assert_array_equal(col.get(), expected[:, 2:3])
    col[:] = be.array(np.arange(4.0).reshape(4, 1))
    expected[:, 2] = np.arange(4.0)
    np.testing.assert_array_equal(t.get(), expected)
    np.testing.assert_array_equal(block.get(), expected[1:3, 1:4])
    t[3, 4] = -5                          # a write to the base is seen by views
    expected[3, 4] = -5
    np.testing.assert_array_equal(t[2:, 3:].get(), expected[2:, 3:])


def test_strided_and_reversed_views(be):
    t = be.array(host((6, 6)))
    expected = host((6, 6))
    v = t[::2, ::-1]
    np.testing.assert_array_equal(v.get(), expected[::2, ::-1])
    w = v[1:, ::2]
    np.testing.assert_array_equal(w.get(), expected[::2, ::-1][1:, ::2])
    w[:] = -1
    expected[::2, ::-1][1:, ::2] = -1
    np.testing.assert_array_equal(t.get(), expected)
    e = t[4:2]
    assert e.shape == (0, 6)


def test_integer_array_index_view(be):
    t = be.array(host((3, 5)))
    expected = host((3, 5))
    v = t[:, [4, 0, 2]]
    np.testing.assert_array_equal(v.get(), expected[:, [4, 0, 2]])
    v[:] = be.array(np.full((3, 3), 9.0))
    expected[:, [4, 0, 2]] = 9
    np.testing.assert_array_equal(t.get(), expected)
    t[np.array([2, 0])] = 1
    expected[[2, 0]] = 1
    np.testing.assert_array_equal(t.get(), expected)


def test_view_of_transpose_and_reshape(be):
    t = be.array(host((4, 6)))
    expected = host((4, 6))
    v = t.T[1:3].reshape(4, 2)[::2]
    np.testing.assert_array_equal(v.get(), expected.T[1:3].reshape(4, 2)[::2])
    v[:] = 0
    tmp = expected.T[1:3].copy()
    r = tmp.reshape(4, 2)
    r[::2] = 0
    expected.T[1:3] = r.reshape(2, 4)
    np.testing.assert_array_equal(t.get(), expected)


# -- assignment

def test_setitem_values_of_every_kind(be):
    t = be.zeros((3, 4))
    expected = np.zeros((3, 4), np.float32)
    t[0] = 1.5                                     # scalar
    expected[0] = 1.5
    t[1] = np.arange(4)                            # NumPy array
    expected[1] = np.arange(4)
    t[2] = t[0]                                    # Tensor
    expected[2] = expected[0]
    t[:, 3] = t[:, 0] * 2 + t[:, 1]                # op-tree
    expected[:, 3] = expected[:, 0] * 2 + expected[:, 1]
    np.testing.assert_array_equal(t.get(), expected)
    t[:, 0:2] = np.int32(3)                        # NumPy scalar
    expected[:, 0:2] = 3
    np.testing.assert_array_equal(t.get(), expected)
    with pytest.raises(TypeError, match="Invalid type"):
        t[:] = "text"
    with pytest.raises(ValueError, match="cannot be assigned"):
        t[:] = be.zeros((2, 2))


def test_assignment_reads_before_writing(be):
    t = be.array(host((2, 3)))
    t[:] = t + t.T.T * 2
    np.testing.assert_array_equal(t.get(), host((2, 3)) * 3)
    v = t[:, 1:]
    v[:] = t[:, :2]                                # overlapping views
    expected = host((2, 3)) * 3
    expected[:, 1:] = expected[:, :2].copy()
    np.testing.assert_array_equal(t.get(), expected)


def test_dtype_casting_on_assignment(be):
    ints = be.zeros((2, 3), dtype=np.int32)
    ints[:] = be.array([[1.7, -1.7, 2.5], [0.2, 3.9, -0.5]])      # float op-tree leaf -> int32: truncates
    np.testing.assert_array_equal(ints.get(), [[1, -1, 2], [0, 3, 0]])
    assert ints.get().dtype == np.int32
    ints[:] = ints * 0.5                                           # int32 * float -> float64 -> int32
    np.testing.assert_array_equal(ints.get(), [[0, 0, 1], [0, 1, 0]])
    small = be.zeros((1, 4), dtype=np.uint8)
    small[:] = np.array([[-5.0, 300.0, 255.0, 12.9]])              # clipped into range, as neon's CPU does
    np.testing.assert_array_equal(small.get(), [[0, 255, 255, 12]])
    small[:] = be.array([[1000, -1000, 7, 8]], dtype=np.int32)     # int32 -> uint8 clips too
    np.testing.assert_array_equal(small.get(), [[255, 0, 7, 8]])
    floats = be.zeros((2, 2))
    floats[:] = be.array([[1, 2], [3, 4]], dtype=np.int16) > 2     # comparison -> 1/0 -> float32
    np.testing.assert_array_equal(floats.get(), [[0, 0], [1, 1]])
    assert floats.get().dtype == np.float32
    doubles = be.zeros((1, 2), dtype=np.float64)
    doubles[:] = be.array([[1 / 3, 2 / 3]])                        # float32 values into float64
    np.testing.assert_array_equal(doubles.get(), np.array([[1 / 3, 2 / 3]], np.float32).astype(np.float64))


def test_writes_stay_lazy_until_a_value_is_needed(be):
    t = be.zeros((3, 3))
    xp.debug.reset()
    t[0] = 1.0
    t[1:, 1] = np.array([[2.0], [3.0]])
    v = t[1:, 1:]
    assert xp.debug.counters["realizations"] == 0
    np.testing.assert_array_equal(v.get(), [[2, 0], [3, 0]])
    assert xp.debug.counters["realizations"] == 1


def test_op_tree_assignment_is_one_graph_forced_once(be):
    a = be.array(host((3, 4)))
    b = be.array(host((3, 4), 1))
    out = be.zeros((3, 4))
    xp.eval(a._storage.array, b._storage.array, out._storage.array)
    xp.debug.reset()
    out[:] = be.sig(a * b + 1) - be.sum(a, axis=0) / be.max(b, axis=1) + be.tanh(a) ** 2
    assert xp.debug.counters["realizations"] == 1
    h_a, h_b = host((3, 4)), host((3, 4), 1)
    expected = (1 / (1 + np.exp(-(h_a * h_b + 1))) - h_a.sum(0, keepdims=True) / h_b.max(1, keepdims=True)
                + np.tanh(h_a) ** 2)
    np.testing.assert_allclose(out.get(), expected, rtol=1e-5)
    assert xp.debug.counters["realizations"] == 1     # get() found the value computed


def test_numpy_operands_are_refused(be):
    t = be.zeros((2, 2))
    with pytest.raises(TypeError):
        t + np.ones((2, 2))
    with pytest.raises(TypeError):
        np.ones((2, 2)) + t
    assert isinstance(np.float32(2) * t, OpTreeNode)   # NumPy scalars are numbers
    tree = np.float64(3) * (t + np.array(1.5))         # and so are 0-d arrays
    assert str(tree).startswith("({'shape': (2, 2), 'op': 'mul'}, 3.0, ({'shape': (2, 2), 'op': 'add'}")
    np.testing.assert_array_equal(tree.asnumpyarray(), np.full((2, 2), 4.5))


def test_tensors_hash_by_identity(be):
    a, b = be.zeros((2, 2)), be.zeros((2, 2))
    d = {a: 1, b: 2}
    assert d[a] == 1 and d[b] == 2
    assert isinstance(a == b, OpTreeNode)
