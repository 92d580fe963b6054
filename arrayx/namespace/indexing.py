"""Array indexing: `__getitem__` and `__setitem__` with basic keys.

Integers, slices (any step), `...` and `None` become one `slice` node and a
`reshape`; assignment becomes an `update_slice` node that the array is
rebound to, so arrays computed from the old value keep it.
"""

import operator

from .. import dtypes as dt
from ..graph.primitives import broadcast_shapes, slice_shape
from .array_object import Array
from .build import P, astype_node, broadcast_node, make, reshape_node, scalar_node, wrap

_SCALARS = (bool, int, float, complex)

__all__ = []


def parse_key(key, shape, name):
    """(starts, stops, steps, result shape) of a basic index into `shape`."""
    items = key if isinstance(key, tuple) else (key,)
    ellipses = sum(1 for k in items if k is Ellipsis)
    if ellipses > 1:
        raise IndexError(f"{name}: an index can only have a single ellipsis ('...')")
    n_axes = sum(1 for k in items if k is not None and k is not Ellipsis)
    ndim = len(shape)
    if n_axes > ndim:
        raise IndexError(f"{name}: too many indices for an array of {ndim} dimensions: {key!r}")
    if not ellipses:
        items = items + (Ellipsis,)
    starts, stops, steps, out = [], [], [], []
    axis = 0
    for k in items:
        if k is None:
            out.append(1)
        elif k is Ellipsis:
            for _ in range(ndim - n_axes):
                starts.append(0)
                stops.append(shape[axis])
                steps.append(1)
                out.append(shape[axis])
                axis += 1
        elif isinstance(k, slice):
            if k.step == 0:
                raise ValueError(f"{name}: slice step cannot be zero")
            start, stop, step = k.indices(shape[axis])
            length = len(range(start, stop, step))
            if length == 0:
                # An empty descending slice can normalize to start -1, which a NumPy
                # index reads as the last element: use a canonical empty slice.
                start, stop, step = 0, 0, 1
            starts.append(start)
            stops.append(stop)
            steps.append(step)
            out.append(length)
            axis += 1
        else:
            i = _integer(k, name)
            n = shape[axis]
            if not -n <= i < n:
                raise IndexError(f"{name}: index {i} is out of bounds for axis {axis} with size {n}")
            i %= n
            starts.append(i)
            stops.append(i + 1)
            steps.append(1)
            axis += 1
    return tuple(starts), tuple(stops), tuple(steps), tuple(out)


def _integer(k, name):
    if isinstance(k, Array):
        raise IndexError(f"{name}: integer-array and boolean-mask indices are not supported by arrayx yet; "
                         f"index with integers, slices, ... and None")
    if type(k) is bool:
        raise IndexError(f"{name}: boolean scalar indices are not supported; use an integer")
    try:
        return operator.index(k)
    except TypeError:
        raise IndexError(f"{name}: invalid index {k!r} of type {type(k).__name__}; "
                         f"expected an int, slice, ... or None") from None


def _sliced(node, starts, stops, steps):
    if starts == (0,) * len(starts) and stops == node.shape and steps == (1,) * len(steps):
        return node
    return make(P["slice"], (node,), (starts, stops, steps))


def getitem(x, key):
    """x[key] for a basic key."""
    node = x._node
    starts, stops, steps, out = parse_key(key, node.shape, "__getitem__")
    return wrap(reshape_node(_sliced(node, starts, stops, steps), out))


def setitem(x, key, value):
    """The array x with x[key] replaced by value (broadcast to the indexed shape)."""
    node = x._node
    starts, stops, steps, out = parse_key(key, node.shape, "__setitem__")
    if isinstance(value, Array):
        vnode = value._node
        if dt.PROMOTION[vnode.dtype, node.dtype] != node.dtype:
            raise TypeError(f"__setitem__: cannot assign {vnode.dtype} values to a {node.dtype} array without a cast")
        if vnode.device != node.device:
            raise ValueError(f"__setitem__: value is on {vnode.device}, the array on {node.device}")
        vnode = astype_node(vnode, node.dtype)
    elif type(value) in _SCALARS:
        vdtype = dt.scalar_dtype(value, node.dtype)
        if vdtype != node.dtype:
            raise TypeError(f"__setitem__: cannot assign a Python {type(value).__name__} to a {node.dtype} array")
        vnode = scalar_node(value, node.dtype, node.device, "__setitem__")
    else:
        raise TypeError(f"__setitem__: value must be an arrayx array or a Python scalar, got {type(value).__name__}")
    if broadcast_shapes("__setitem__", vnode.shape, out) != out:
        raise ValueError(f"__setitem__: value of shape {vnode.shape} cannot be broadcast to the indexed shape {out}")
    vnode = reshape_node(broadcast_node(vnode, out), slice_shape(starts, stops, steps))
    return wrap(make(P["update_slice"], (node, vnode), (starts, stops, steps)))
