"""Gradients through indexing, sorting and movement, against finite differences.

Each case differentiates L = sum(f(x) * w) for a random weight w (so every
output element carries a different cotangent) and compares with central
differences of L evaluated by arrayx itself, in float64.

Tolerances: indexing, sorting and movement are linear in x (piecewise linear
for sort, whose inputs here have no ties and gaps far larger than the step),
so a central difference has no truncation error at all; what is left is the
rounding of L(x +- h), about eps * sum|f(x) w| / h < 1e-15 * 30 / 1e-4, some
1e-10. ATOL = 1e-8 leaves two orders of magnitude for that and still catches
any wrong element (cotangents are O(0.1)..O(1)). The few nonlinear cases
(sin inside the indexing) have an O(h^2) = 1e-8 truncation error times
derivatives of order 1, so they use NONLINEAR_ATOL = 1e-6.
"""

import numpy as np
import pytest

import arrayx as xp
from arrayx.autodiff import grad, vjp

H = 1e-4
ATOL = 1e-8
NONLINEAR_ATOL = 1e-6


def _rng(seed):
    return np.random.default_rng(seed)


def _data(shape, seed=0):
    """Distinct values with gaps >> H, so sorts have no ties under perturbation."""
    rng = _rng(seed)
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.37 - n * 0.15 + rng.uniform(-0.05, 0.05, n)).reshape(shape)


def _weights(f, args, seed):
    shape = f(*[xp.asarray(a) for a in args]).shape
    return xp.asarray(_rng(seed + 1000).standard_normal(shape))


def _numeric(loss, args, i):
    """Central differences of loss with respect to args[i] (NumPy arrays)."""
    base = [np.array(a, dtype=np.float64) for a in args]
    out = np.zeros_like(base[i])
    for k in np.ndindex(base[i].shape):
        plus = [a.copy() for a in base]
        minus = [a.copy() for a in base]
        plus[i][k] += H
        minus[i][k] -= H
        out[k] = (float(loss(*map(xp.asarray, plus))) - float(loss(*map(xp.asarray, minus)))) / (2 * H)
    return out


def check(f, *args, seed=0, atol=ATOL):
    """The gradient of sum(f(*args) * w) with respect to every argument matches
    central differences; returns the analytic gradients (NumPy)."""
    w = _weights(f, args, seed)

    def loss(*a):
        return xp.sum(f(*a) * w)
    argnums = tuple(range(len(args)))
    grads = grad(loss, argnums)(*[xp.asarray(a) for a in args])
    found = []
    for i, g in enumerate(grads):
        g = np.asarray(g)
        assert g.shape == np.shape(args[i])
        np.testing.assert_allclose(g, _numeric(loss, args, i), rtol=0, atol=atol, err_msg=f"argument {i}")
        found.append(g)
    return found


def cases(*rows):
    """pytest parameters from (id, value, ...) rows."""
    return [pytest.param(*row[1:], id=row[0]) for row in rows]


def _i(values):
    return xp.asarray(np.asarray(values, dtype=np.int64))


X3 = _data((3, 4, 2))


# basic __getitem__: slice and reshape nodes

@pytest.mark.parametrize("key", [
    1, -1, (0, 2), (slice(None, None, -1),), (slice(None, None, -2), slice(3, 0, -1)),
    (Ellipsis, 0), (None, Ellipsis, slice(None, None, -1)), (-1, Ellipsis, None, slice(1, None)),
    (slice(2, None, -2), None, 1), (slice(5, 7),), (),
], ids=repr)
def test_basic_getitem(key):
    check(lambda x: x[key], X3)


# integer-array indexing: gather nodes

IDX = _i([0, 2, 0, 0])


@pytest.mark.parametrize("f", cases(
    ("leading, repeated", lambda x: x[IDX]),
    ("middle, negative", lambda x: x[:, _i([-1, 1, -1])]),
    ("array then int (adjacent)", lambda x: x[IDX, 1]),
    ("separated by a slice: index dims first", lambda x: x[_i([[0, 1], [2, 2]]), :, _i([1, 1])]),
    ("broadcast index arrays", lambda x: x[_i([[0], [2], [0]]), _i([1, 3, 1, 1])]),
    ("with None and ...", lambda x: x[None, ..., _i([1, 0, 1])]),
    ("0-d index array", lambda x: x[_i(2)]),
    ("separated only by an empty ... (permuted)", lambda x: x[:, _i([2, 0, 2]), ..., _i([1, 0, 1])]),
))
def test_integer_array_getitem(f):
    check(f, X3)


def test_repeated_indices_accumulate():
    x = xp.asarray(np.arange(5.0))
    g = grad(lambda a: xp.sum(a[_i([1, 3, 1, 1, 4])] * xp.asarray([1.0, 2.0, 10.0, 100.0, 5.0])))(x)
    np.testing.assert_array_equal(np.asarray(g), [0.0, 111.0, 0.0, 2.0, 5.0])


def test_integer_array_getitem_chain_rule():
    check(lambda x: xp.sin(x)[_i([1, 1, 0]), _i([3, 0, 3])] * x[0, 0, 0], X3, atol=NONLINEAR_ATOL)


# boolean masks: a force point inside the differentiated function

MASK = xp.asarray(_rng(3).random((3, 4)) > 0.4)


@pytest.mark.parametrize("f", cases(
    ("mask over leading axes", lambda x: x[MASK]),
    ("mask after a slice", lambda x: x[:, xp.asarray(np.array([True, False, False, True]))]),
    ("mask from x itself", lambda x: x[x > 0.1]),
    ("mask with an index array", lambda x: x[xp.asarray(np.array([True, False, True])), :, _i([1, 0])]),
    ("boolean scalar", lambda x: x[True, ..., 0]),
))
def test_mask_getitem(f):
    check(f, X3)


# functional __setitem__: gradients for the array and the assigned value

def _set(key):
    def f(x, v):
        y = x + 0.0       # assign into a new array, not into the argument's handle
        y[key] = v
        return y
    return f


V34 = _data((3, 4), seed=5)


@pytest.mark.parametrize("key, value", cases(
    ("int", 1, _data((4, 2), 6)),
    ("negative-step slices", (slice(None, None, -2), slice(3, 0, -1)), _data((2, 3, 2), 7)),
    ("broadcast value", (Ellipsis, 0), _data((4,), 8)),
    ("scalar value", (slice(1, 3), 2, 1), np.float64(0.7)),
))
def test_basic_setitem(key, value):
    check(_set(key), X3, value)


@pytest.mark.parametrize("key, value", cases(
    ("distinct indices", (_i([2, 0]),), _data((2, 4, 2), 9)),
    ("repeated indices: last write wins", (_i([1, 2, 1, 0, 1]),), _data((5, 4, 2), 10)),
    ("repeated, broadcast value", (slice(None), _i([3, 3, 0])), _data((2,), 11)),
    ("repeated, scalar value", (_i([0, 0, 2]), 1, _i([1, 1, 0])), np.float64(-1.3)),
    ("separated arrays", (_i([[2, 2], [0, 1]]), slice(1, None), _i([0, 0])), _data((2, 2, 3), 12)),
    ("separated only by ... (permuted)", (slice(None), _i([0, 3]), Ellipsis, _i([1, 1])), _data((2, 3), 13)),
))
def test_integer_array_setitem(key, value):
    check(_set(key), X3, value)


def test_setitem_overwritten_value_gets_no_gradient():
    def f(x, v):
        y = x + 0.0
        y[_i([1, 1, 1])] = v
        return xp.sum(y * xp.asarray([1.0, 2.0, 3.0]))
    gx, gv = grad(f, (0, 1))(xp.asarray([0.0, 0.0, 0.0]), xp.asarray([5.0, 6.0, 7.0]))
    np.testing.assert_array_equal(np.asarray(gx), [1.0, 0.0, 3.0])
    np.testing.assert_array_equal(np.asarray(gv), [0.0, 0.0, 2.0])


@pytest.mark.parametrize("key, value", cases(
    ("lazy mask, scalar value (where)", (MASK,), np.float64(2.5)),
    ("lazy mask, value over the other axes", (MASK,), _data((2,), 14)),
    ("forced mask, a value per element", (MASK,), _data((int(np.asarray(MASK).sum()), 2), 15)),
    ("mask after a slice", (slice(None), xp.asarray(np.array([False, True, True, False]))), _data((3, 2, 2), 16)),
))
def test_mask_setitem(key, value):
    check(_set(key), X3, value)


# take, take_along_axis, diagonal, sort

@pytest.mark.parametrize("axis, indices", [(0, [2, 0, 2, -1]), (1, [3, 3, 0]), (2, [1]), (-1, [0, 1, 1, 0])])
def test_take(axis, indices):
    check(lambda x: xp.take(x, _i(indices), axis=axis), X3)


def test_take_1d_without_axis():
    check(lambda x: xp.take(x, _i([4, 0, 4, 4, -2])), _data((6,)))


@pytest.mark.parametrize("axis, indices", [
    (0, np.array([[[2, 0], [1, 1], [0, 2], [2, 2]], [[0, 0], [-1, 1], [0, 1], [1, 1]]])),
    (1, np.array([[[3, 0]], [[0, 0]], [[1, -1]]])),
    (-1, np.array([[[1, 1, 0]]] * 3).repeat(4, axis=1)),      # more picks than the axis has
    (1, np.array([[[2], [2], [0]]])),                         # indices broadcast against x on axes 0 and 2
], ids=["axis0", "axis1", "last axis, repeated", "broadcast"])
def test_take_along_axis(axis, indices):
    check(lambda x: xp.take_along_axis(x, _i(indices), axis=axis), X3)


def test_take_along_axis_broadcasts_x():
    # x has size 1 on axis 0, the indices 3: the cotangent sums over the stretch.
    check(lambda x: xp.take_along_axis(x, _i([[0, 2], [1, 1], [2, 0]]), axis=1), _data((1, 3)))


@pytest.mark.parametrize("offset", [0, 1, 3, -1, -2, 5, -4])
def test_diagonal(offset):
    check(lambda x: xp.linalg.diagonal(x, offset=offset), _data((2, 3, 4)))


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_sort(axis, descending):
    check(lambda x: xp.sort(x, axis=axis, descending=descending), X3)


@pytest.mark.parametrize("descending", [False, True])
def test_sort_ties_follow_the_stable_order(descending):
    # Tied elements get the cotangents of the slots the stable order gives them.
    x = xp.asarray([2.0, 1.0, 2.0, 0.0, 2.0])
    w = xp.asarray([1.0, 10.0, 100.0, 1000.0, 10000.0])
    g = np.asarray(grad(lambda a: xp.sum(xp.sort(a, descending=descending) * w))(x))
    if descending:   # sorted: x0, x2, x4 (the 2.0s in input order), x1, x3
        expected = [1.0, 1000.0, 10.0, 10000.0, 100.0]
    else:            # sorted: x3, x1, x0, x2, x4
        expected = [100.0, 10.0, 1000.0, 1.0, 10000.0]
    np.testing.assert_array_equal(g, expected)


# movement and composites of movement

@pytest.mark.parametrize("f", cases(
    ("flip all", lambda x: xp.flip(x)),
    ("flip axes", lambda x: xp.flip(x, axis=(0, 2))),
    ("roll flat", lambda x: xp.roll(x, 5)),
    ("roll axes", lambda x: xp.roll(x, (-1, 3), axis=(2, 1))),
    ("moveaxis", lambda x: xp.moveaxis(x, (0, 2), (2, 0))),
    ("squeeze", lambda x: xp.squeeze(x[:, 1:2, None], axis=(1, 2))),
    ("expand_dims", lambda x: xp.expand_dims(x, axis=(0, 3))),
    ("broadcast_to", lambda x: xp.broadcast_to(x[:, :1], (2, 3, 4, 2))),
    ("reshape", lambda x: xp.reshape(x, (-1, 3))),
    ("permute_dims", lambda x: xp.permute_dims(x, (1, 2, 0))),
    ("tile", lambda x: xp.tile(x, (2, 1, 3))),
    ("tile, more reps than dims", lambda x: xp.tile(x, (2, 1, 1, 2))),
    ("repeat flat", lambda x: xp.repeat(x, 2)),
    ("repeat axis", lambda x: xp.repeat(x, 3, axis=1)),
    ("unstack", lambda x: xp.unstack(x, axis=1)[2] * 3.0 - xp.unstack(x, axis=1)[0]),
))
def test_movement(f):
    check(f, X3)


def test_concat_and_stack():
    a, b = _data((2, 3), 20), _data((4, 3), 21)
    check(lambda x, y: xp.concat([x, y, x[:1]], axis=0), a, b)
    check(lambda x, y: xp.concat([x, y[::-1]], axis=None), a, b)
    check(lambda x, y: xp.stack([x, y[1:3], x * 2.0], axis=1), a, b)
    check(lambda x, y: xp.stack([x, y[:2]], axis=-1), a, b)


def test_unstack_all_parts():
    def f(x):
        parts = xp.unstack(x, axis=-1)
        return xp.stack([p * float(i + 1) for i, p in enumerate(reversed(parts))])
    check(f, X3)


# second order: the rules' own results are differentiable

def test_second_order_through_gather():
    idx = _i([2, 0, 2, 1])
    w0 = xp.asarray([0.5, -1.0, 2.0, 1.5])

    def inner(x):
        return xp.sum(xp.sin(x[idx]) * w0)
    # grad(inner) is a scatter_add of cos(x[idx]) * w0: its gradient needs the
    # rules for scatter_add (value side) and gather again.
    check(lambda x: grad(inner)(x), _data((3,)), atol=NONLINEAR_ATOL)


def test_second_order_through_scatter_and_sort():
    def inner(x):
        y = x + 0.0
        y[_i([0, 0])] = xp.sin(x[1:3])
        return xp.sum(xp.sort(y * y, descending=True) * xp.asarray([1.0, 2.0, 3.0, 4.0]))
    check(lambda x: grad(inner)(x), _data((4,)), atol=NONLINEAR_ATOL)


def test_vjp_of_gather():
    x = xp.asarray(_data((3, 4)))
    y, pullback = vjp(lambda a: a[_i([2, 2, 0]), 1:], x)
    ct = _rng(4).standard_normal(y.shape)
    (gx,) = pullback(xp.asarray(ct))
    expected = np.zeros((3, 4))
    np.add.at(expected, (np.array([2, 2, 0]), slice(1, None)), ct)
    np.testing.assert_array_equal(np.asarray(gx), expected)


def test_scatter_add_primitive():
    from arrayx.namespace.build import P, make, wrap
    x = xp.asarray(np.zeros((3, 2)))
    v = xp.asarray(np.arange(6.0).reshape(3, 2))
    out = wrap(make(P["scatter_add"], (x._node, v._node, _i([1, 1, 2])._node), ((("array", 0),),)))
    np.testing.assert_array_equal(np.asarray(out), [[0.0, 0.0], [2.0, 4.0], [4.0, 5.0]])
    with pytest.raises(IndexError, match="scatter_add"):
        np.asarray(wrap(make(P["scatter_add"], (x._node, v._node, _i([1, 3, 2])._node), ((("array", 0),),))))


@pytest.mark.parametrize("key", [
    (np.array([0, 2]), slice(None), np.array([[1], [0]])),
    (slice(None), np.array([1, 1, 0]), 1),
    (None, 2, slice(3, 0, -1), np.array([0, 1])),
    (np.array([[0, 1, 1]]), None, np.array([2])),
    (slice(1, 3), np.array([[3, 0], [1, 1]]), slice(None, None, -1)),
    (0, slice(None), 1),
], ids=repr)
def test_key_shape_matches_numpy(key):
    from arrayx.autodiff.indexing_rules import key_shape
    from arrayx.namespace.indexing import _slice
    shape = (3, 4, 2)
    template, arrays, axis = [], [], 0
    for k in key:
        if k is None:
            template.append(("newaxis",))
            continue
        if isinstance(k, slice):
            template.append(("slice",) + _slice(k, shape[axis], "test"))
        elif isinstance(k, int):
            template.append(("int", k))
        else:
            template.append(("array", len(arrays)))
            arrays.append(k.shape)
        axis += 1
    assert key_shape(tuple(template), shape, arrays) == np.empty(shape)[key].shape
