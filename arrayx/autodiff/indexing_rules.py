"""VJP rules for the indexing and sorting primitives (registered in `registry.VJP`).

The rules route cotangents back through the same index arrays the forward
node used, so they are exact for every key `__getitem__`, `__setitem__`,
`take`, `take_along_axis`, `diagonal` and `sort` build, and they are graph
nodes like every other cotangent (lazy, and differentiable again):

- gather: `scatter_add` of g into zeros of x's shape, same template and index
  arrays; repeated indices accumulate (as `np.add.at` does).
- scatter_add: x gets g; value gets g gathered at the key.
- scatter (assignment): x gets g with the assigned positions zeroed (a
  scatter of zeros); value gets g gathered at the key. With duplicate
  indices only the last write lands in the result, so only that occurrence
  of the value receives its cotangent; the overwritten occurrences get 0.
  The rule finds the winners by scattering the occurrence numbers 0, 1, ...
  (C order over the key's shape) with the same primitive and key and
  gathering them back; this matches the forward result whenever the
  executor resolves duplicates the same way for integer and floating values
  (the CPU executor does: NumPy keeps the last in C order).
- take, take_along_axis: `scatter_add` with full index arrays (iota along the
  other axes); repeated indices accumulate. take_along_axis broadcasts x
  against the indices: the cotangent comes back in the broadcast shape and
  the sweep sums it to x's.
- diagonal: g placed on the offset diagonal of zeros.
- sort: g routed back through the inverse of the permutation a stable
  argsort (same axis and direction) gives. Sorting is not differentiable
  where elements tie; there each tied element receives the cotangent of the
  output slot the stable order gives it (the derivative along perturbations
  that keep the tied elements in their input order), so the tied elements'
  cotangents sum to the cotangents of their slots.

Index arrays get no cotangent.
"""

import math

from .. import dtypes as dt
from ..namespace import elementwise as ew
from ..namespace.build import P, broadcast_shapes, leaf, make, reshape_node, scalar_node, wrap
from ..namespace.creation import full, zeros
from .registry import rule

__all__ = ["key_shape"]


def key_shape(template, shape, index_shapes):
    """The shape of x[key] for a gather/scatter key template over `shape`
    (NumPy's advanced-indexing layout: the broadcast index shape replaces
    adjacent advanced items, or goes in front when they are separated)."""
    dims, advanced, index = [], [], []
    axis = 0
    for position, item in enumerate(template):
        tag = item[0]
        if tag == "newaxis":
            dims.append(1)
            continue
        if tag == "slice":
            dims.append(len(range(item[1], item[2], item[3])))
        else:
            dims.append(None)
            advanced.append(position)
            index.append(index_shapes[item[1]] if tag == "array" else ())
        axis += 1
    dims.extend(shape[axis:])
    if not advanced:
        return tuple(dims)
    broadcast = broadcast_shapes("gather", *index)
    basic = [d for d in dims if d is not None]
    if advanced == list(range(advanced[0], advanced[-1] + 1)):
        before = sum(1 for d in dims[:advanced[0]] if d is not None)
        return tuple(basic[:before]) + broadcast + tuple(basic[before:])
    return broadcast + tuple(basic)


def _scatter_add(base, value, arrays, template):
    return wrap(make(P["scatter_add"], (base._node, value._node, *arrays), (template,)))


def _gather(g, arrays, template):
    shape = key_shape(template, g.shape, [a.shape for a in arrays])
    return wrap(make(P["gather"], (g._node, *arrays), (template, shape)))


def _iota_along(n, axis, ndim, device):
    """0, 1, ..., n-1 along `axis` of an otherwise size-1 shape of rank ndim."""
    index = leaf(P["iota"], (n,), dt.DEFAULT_INDEX, (0,), device)
    return reshape_node(index, (1,) * axis + (n,) + (1,) * (ndim - axis - 1))


def _full_slices(shape):
    return tuple(("slice", 0, n, 1) for n in shape)


def _last_writes(shape, arrays, template, device):
    """Boolean array over the key's shape: whether that occurrence is the
    write a `scatter` with this key keeps (False for overwritten duplicates)."""
    kshape = key_shape(template, shape, [a.shape for a in arrays])
    count = math.prod(kshape)
    ids = reshape_node(leaf(P["iota"], (count,), dt.DEFAULT_INDEX, (0,), device), kshape)
    board = full(shape, -1, dtype=dt.DEFAULT_INDEX, device=device)._node
    board = make(P["scatter"], (board, ids, *arrays), (template,))
    winners = make(P["gather"], (board, *arrays), (template, kshape))
    return wrap(make(P["equal"], (winners, ids)))


@rule("gather")
def _gather_rule(g, node, needs):
    template = node.attrs[0]
    arrays = node.inputs[1:]
    base = zeros(node.inputs[0].shape, dtype=g.dtype, device=g.device)
    return (_scatter_add(base, g, arrays, template),) + (None,) * len(arrays)


@rule("scatter_add")
def _scatter_add_rule(g, node, needs):
    template = node.attrs[0]
    arrays = node.inputs[2:]
    return (g, _gather(g, arrays, template) if needs[1] else None) + (None,) * len(arrays)


@rule("scatter")
def _scatter_rule(g, node, needs):
    template = node.attrs[0]
    arrays = node.inputs[2:]
    gx = gv = None
    if needs[0]:
        zero = scalar_node(0, g.dtype, g.device, "scatter")
        gx = wrap(make(P["scatter"], (g._node, zero, *arrays), (template,)))
    if needs[1]:
        gv = _gather(g, arrays, template)
        if any(item[0] == "array" for item in template):
            # Integers and slices never repeat a position; index arrays may.
            gv = ew.where(_last_writes(node.shape, arrays, template, g.device), gv, 0.0)
    return (gx, gv) + (None,) * len(arrays)


@rule("take")
def _take_rule(g, node, needs):
    shape = node.inputs[0].shape
    axis = node.attrs[0]
    template = _full_slices(shape[:axis]) + (("array", 0),) + _full_slices(shape[axis + 1:])
    base = zeros(shape, dtype=g.dtype, device=g.device)
    return _scatter_add(base, g, [node.inputs[1]], template), None


@rule("take_along_axis")
def _take_along_axis_rule(g, node, needs):
    x, indices = node.inputs
    axis = node.attrs[0]
    out = node.shape
    ndim = len(out)
    arrays = [indices if d == axis else _iota_along(out[d], d, ndim, g.device) for d in range(ndim)]
    template = tuple(("array", d) for d in range(ndim))
    # x broadcasts against the indices: scatter into the broadcast shape; the
    # sweep sums the stretched axes back to x's shape.
    base = zeros(out[:axis] + (x.shape[axis],) + out[axis + 1:], dtype=g.dtype, device=g.device)
    return _scatter_add(base, g, arrays, template), None


@rule("diagonal")
def _diagonal_rule(g, node, needs):
    shape = node.inputs[0].shape
    offset = node.attrs[0]
    length = node.shape[-1]
    rows = cols = leaf(P["iota"], (length,), dt.DEFAULT_INDEX, (0,), g.device)
    if offset < 0:
        rows = make(P["add"], (rows, scalar_node(-offset, dt.DEFAULT_INDEX, g.device, "diagonal")))
    elif offset > 0:
        cols = make(P["add"], (cols, scalar_node(offset, dt.DEFAULT_INDEX, g.device, "diagonal")))
    template = _full_slices(shape[:-2]) + (("array", 0), ("array", 1))
    base = zeros(shape, dtype=g.dtype, device=g.device)
    return (_scatter_add(base, g, [rows, cols], template),)


@rule("sort")
def _sort_rule(g, node, needs):
    axis, descending = node.attrs
    order = make(P["argsort"], (node.inputs[0],), (axis, descending))    # out[i] = x[order[i]]
    inverse = make(P["argsort"], (order,), (axis, False))                # x[j] = out[inverse[j]]
    return (wrap(make(P["take_along_axis"], (g._node, inverse), (axis,))),)
