"""Array indexing: `__getitem__`, `__setitem__`, `take` and `take_along_axis`.

Basic keys (integers, slices with any step, `...` and `None`) become one `slice`
node and a `reshape`; assignment becomes an `update_slice` node. One element
of an evaluated array (an int per axis) is read at once where the executor
can (`scheduler.schedule.read_element`): element loops then build no nodes.

Keys with integer arrays follow NumPy's advanced indexing: the index arrays (and
the integers beside them) broadcast together; the broadcast shape takes the
place of adjacent advanced indices, or goes in front when they are separated.
Such a key becomes one `gather` node (assignment: one `scatter` node) whose key
template names each item: ("slice", start, stop, step) in the slice primitive's
convention, ("int", i), ("array", k) for the k-th index array, ("newaxis",).

NumPy integer and boolean arrays, and Python lists of ints or bools (which
NumPy reads as index arrays, never as tuples of indices), index as the arrayx
arrays they convert to.

Boolean masks have data-dependent shapes: indexing with one is a force point
(the mask becomes integer index arrays through `nonzero`). The exception is an
assignment whose value does not depend on the number of selected elements,
which stays lazy as a `where` node. A boolean scalar (True, False or a 0-d
boolean array) adds an axis of length 1 or 0 and is an advanced index.

Assignment rebinds the array to the new node, so arrays computed from the old
value keep it.
"""

import operator

import numpy as np

from .. import dtypes as dt
from ..dtypes import PYTHON_SCALARS
from ..graph.node import tracing
from ..graph.primitives import broadcast_shapes, element_index, slice_shape
from ..scheduler.schedule import read_element, realize, update_in_place, write_element
from .array_object import Array
from .hints import Key, Operand
from .traced_scalar import TracedScalar
from .build import (P, astype_node, broadcast_node, buffer_node, dynamic, make, node_of, normalize_axis,
                    not_an_array, reshape_node, same_device, scalar_node, wrap)

__all__ = ["take", "take_along_axis"]


def parse_key(key, shape, name):
    """(starts, stops, steps, result shape) of a basic index into `shape`."""
    if type(key) is int:
        key = (key,)
    if type(key) is tuple and len(key) <= len(shape):
        # Python ints only (x[i, j], the element loops of array-agnostic code):
        # the cheap path, without zip or enumerate (each costs more than this
        # loop on CPython 3.11).
        starts = []
        stops = []
        axis = 0
        for i in key:
            if type(i) is not int:
                break
            n = shape[axis]
            if not -n <= i < n:
                raise IndexError(f"{name}: index {i} is out of bounds for axis {axis} with size {n}")
            i %= n
            starts.append(i)
            stops.append(i + 1)
            axis += 1
        else:
            rest = shape[axis:]
            return tuple(starts) + (0,) * len(rest), tuple(stops) + rest, (1,) * len(shape), rest
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
            start, stop, step = _slice(k, shape[axis], name)
            starts.append(start)
            stops.append(stop)
            steps.append(step)
            out.append(len(range(start, stop, step)))
            axis += 1
        else:
            i = _integer(k, name)
            starts.append(_in_bounds(i, shape[axis], axis, name))
            stops.append(starts[-1] + 1)
            steps.append(1)
            axis += 1
    return tuple(starts), tuple(stops), tuple(steps), tuple(out)


def _slice(k, n, name):
    """The normalized (start, stop, step) of slice `k` over an axis of size `n`."""
    if k.step == 0:
        raise ValueError(f"{name}: slice step cannot be zero")
    try:
        start, stop, step = k.indices(n)
    except TypeError:
        raise IndexError(f"{name}: slice bounds must be integers or None, got {k!r}") from None
    if not len(range(start, stop, step)):
        # An empty descending slice can normalize to start -1, which a NumPy
        # index reads as the last element: use a canonical empty slice.
        return 0, 0, 1
    return start, stop, step


def _in_bounds(i, n, axis, name):
    if not -n <= i < n:
        raise IndexError(f"{name}: index {i} is out of bounds for axis {axis} with size {n}")
    return i % n


def _integer(k, name):
    try:
        return operator.index(k)
    except TypeError:
        raise IndexError(f"{name}: invalid index {k!r} of type {type(k).__name__}; expected an int, slice, "
                         f"..., None, an integer array or a boolean array (convert other indices with "
                         f"xp.asarray)") from None


# Kinds of key items. Advanced ones: integer arrays, boolean masks, boolean
# scalars, and integers when the key has any of the other three.
_INT, _SLICE, _NONE, _ELLIPSIS, _ARRAY, _MASK, _BOOL = range(7)
_ADVANCED = (_INT, _ARRAY, _MASK, _BOOL)


def _items(key, name):
    """The key as a list of (kind, item): type-checked, nothing computed."""
    items = []
    for k in key if isinstance(key, tuple) else (key,):
        if k is None:
            items.append((_NONE, None))
        elif k is Ellipsis:
            items.append((_ELLIPSIS, None))
        elif isinstance(k, slice):
            items.append((_SLICE, k))
        elif isinstance(k, Array):
            if k.dtype == dt.bool:
                # A 0-d mask is a boolean scalar whose value is data.
                items.append((_MASK if k.ndim else _BOOL, k))
            elif k.dtype in dt.INTEGER:
                items.append((_ARRAY, k))
            else:
                raise IndexError(f"{name}: index arrays must have an integer or boolean dtype, got {k.dtype}")
        elif type(k) is bool or isinstance(k, np.bool_):
            items.append((_BOOL, bool(k)))
        else:
            items.append((_INT, _integer(k, name)))
    return items


def _is_basic(key):
    """Whether a key has no array and no boolean scalar (the common, cheap case)."""
    for k in key if type(key) is tuple else (key,):
        if isinstance(k, (Array, np.bool_, np.ndarray, list)) or type(k) is bool:
            return False
    return True


def _with_index_arrays(key, device, name):
    """The key with each NumPy array and list in it as an arrayx index array on `device`."""
    if type(key) is tuple:
        return tuple(_index_array(k, device, name) for k in key)
    return _index_array(key, device, name)


def _index_array(k, device, name):
    if not isinstance(k, (np.ndarray, list)):
        return k
    try:
        host = np.asarray(k)
    except ValueError:
        raise IndexError(f"{name}: cannot read the list index {k!r} as an array") from None
    if type(k) is list and host.size == 0:
        host = host.astype(dt.DEFAULT_INDEX.dtype)   # x[[]] selects nothing, as in NumPy
    if host.dtype.kind not in "biu":
        raise IndexError(f"{name}: index arrays must have an integer or boolean dtype, got {type(k).__name__} of "
                         f"dtype {host.dtype}")
    return Array._new(buffer_node(host.astype(host.dtype.newbyteorder("="), copy=False), device))


def _consumed(kind, k):
    """How many axes of the indexed array an item indexes."""
    if kind in (_INT, _SLICE, _ARRAY):
        return 1
    return k.ndim if kind is _MASK else 0


def _check(node, items, name, bounds=False):
    """Validate an advanced key against the array (before anything is forced).

    With `bounds`, also check the values of the integer index arrays, which
    evaluates them (a force point limited to the indices): __setitem__ must
    fail at the call, since a failure at a later force point would leave the
    rebound array unusable.

    Returns the item list with the ellipsis made explicit (one at the end when
    the key has none) and the number of axes it stands for.
    """
    ndim = len(node.shape)
    if sum(1 for kind, _ in items if kind is _ELLIPSIS) > 1:
        raise IndexError(f"{name}: an index can only have a single ellipsis ('...')")
    consumed = sum(_consumed(kind, k) for kind, k in items)
    if consumed > ndim:
        raise IndexError(f"{name}: too many indices for an array of {ndim} dimensions "
                         f"(the key indexes {consumed})")
    if all(kind is not _ELLIPSIS for kind, _ in items):
        items = items + [(_ELLIPSIS, None)]
    axis = 0
    shapes = []
    indexed = []  # (index array, the axis it indexes)
    for kind, k in items:
        if kind is _ELLIPSIS:
            axis += ndim - consumed
        elif kind is _SLICE:
            _slice(k, node.shape[axis], name)
        elif kind is _INT:
            _in_bounds(k, node.shape[axis], axis, name)
        if isinstance(k, Array):
            if k.device != node.device:
                raise ValueError(f"{name}: an index array is on {k.device}, the array on {node.device}")
            if kind is _ARRAY:
                shapes.append(k.shape)
                indexed.append((k, axis))
            elif kind is _MASK:
                expected = node.shape[axis:axis + k.ndim]
                if any(m not in (n, 0) for m, n in zip(k.shape, expected)):
                    raise IndexError(f"{name}: boolean index of shape {k.shape} does not match the indexed "
                                     f"axes {axis}..{axis + k.ndim - 1} of shape {expected}")
        if kind is not _ELLIPSIS:
            axis += _consumed(kind, k)
    if shapes:
        _broadcast_indices(shapes, name)
    # In a jit trace index arrays may read placeholders, which have no value
    # yet: the compiled scatter checks them when it runs.
    if bounds and indexed and not (tracing() and any(k._node.buffer is None for k, _ in indexed)):
        _check_index_values(node, indexed, name)
    return items, ndim - consumed


def _check_index_values(node, indexed, name):
    """IndexError naming `name` for the first out-of-bounds value of each index array."""
    realize([k._node for k, _ in indexed if k._node.buffer is None])
    for k, axis in indexed:
        values = k._host()
        n = node.shape[axis]
        bad = values[(values < -n) | (values >= n)]
        if bad.size:
            raise IndexError(f"{name}: index {bad[0]} is out of bounds for axis {axis} with size {n}")


def _broadcast_indices(shapes, name):
    try:
        return broadcast_shapes(name, *shapes)
    except ValueError:
        raise IndexError(f"{name}: index arrays of shapes {', '.join(map(str, shapes))} "
                         f"cannot be broadcast together") from None


_BOOL_INDEX = {}


def _bool_index(value, device):
    """The index array standing for a boolean scalar on its inserted axis of size 1."""
    node = _BOOL_INDEX.get((value, device))
    if node is None:
        node = _BOOL_INDEX[value, device] = buffer_node(np.zeros(1 if value else 0, np.int64), device)
    return node


class _Plan:
    """An advanced key lowered to a template over `node` (the array, with a
    size-1 axis inserted for each boolean scalar).

    `shape` is the gather's result in NumPy's layout for the template; `perm`
    (or None) moves the broadcast index dimensions to the front when the key's
    advanced indices are separated only by a `...` standing for no axes, which
    separates them in the key but not in the template.
    """

    __slots__ = ("node", "template", "arrays", "shape", "perm")

    @property
    def out_shape(self):
        return self.shape if self.perm is None else tuple(self.shape[a] for a in self.perm)


def _plan(node, items, ellipsis_axes, name):
    """Lower an advanced key checked by `_check`; forces boolean masks (a force point)."""
    pending = [k._node for kind, k in items if kind in (_MASK, _BOOL) and isinstance(k, Array)]
    if pending:
        # Realize the array with the masks: `x[x > 0]` computes x once.
        realize(pending + [node])
    plan = _Plan()
    shape = list(node.shape)
    template, arrays, dims, key_advanced = [], [], [], []
    axis = 0
    for position, (kind, k) in enumerate(items):
        if kind in _ADVANCED:
            key_advanced.append(position)
        if kind is _NONE:
            template.append(("newaxis",))
            dims.append(1)
        elif kind is _ELLIPSIS:
            for _ in range(ellipsis_axes):
                template.append(("slice", 0, shape[axis], 1))
                dims.append(shape[axis])
                axis += 1
        elif kind is _SLICE:
            start, stop, step = _slice(k, shape[axis], name)
            template.append(("slice", start, stop, step))
            dims.append(len(range(start, stop, step)))
            axis += 1
        elif kind is _INT:
            template.append(("int", k % shape[axis]))
            dims.append(None)
            axis += 1
        else:
            if kind is _ARRAY:
                indices = [k._node]
            elif kind is _MASK:
                indices = [a._node for a in dynamic("nonzero", [k._node])]
            else:
                shape.insert(axis, 1)
                indices = [_bool_index(bool(k), node.device)]
            for index in indices:
                template.append(("array", len(arrays)))
                arrays.append(index)
                dims.append(None)
                axis += 1
    plan.node = reshape_node(node, tuple(shape))
    plan.template = tuple(template)
    plan.arrays = arrays
    advanced = [i for i, t in enumerate(template) if t[0] in ("int", "array")]
    index_shape = _broadcast_indices([arrays[t[1]].shape if t[0] == "array" else () for t in template
                                      if t[0] in ("int", "array")], name)
    basic = [d for d in dims if d is not None]
    plan.perm = None
    if advanced == list(range(advanced[0], advanced[-1] + 1)):
        before = sum(1 for d in dims[:advanced[0]] if d is not None)
        plan.shape = tuple(basic[:before]) + index_shape + tuple(basic[before:])
        if before and key_advanced != list(range(key_advanced[0], key_advanced[-1] + 1)):
            b = len(index_shape)
            plan.perm = tuple(range(before, before + b)) + tuple(range(before)) + \
                tuple(range(before + b, len(plan.shape)))
    else:
        plan.shape = index_shape + tuple(basic)
    return plan


def getitem(x, key):
    """Returns self[key].

    key: integers, slices, `...`, None, integer arrays (0-d too) and boolean
    arrays (arrayx's, NumPy's, or lists), alone or in a tuple (see the module
    docstring). Indexing with a
    boolean array evaluates it (a force point); out-of-bounds integer-array
    indices raise an IndexError when the result is evaluated.
    """
    node = x._node
    if node.buffer is not None and (type(key) is int or type(key) is tuple):
        # One element of a realized array (the element loops of array-agnostic code): read it now.
        index = element_index(node.shape, key)
        element = None if index is None else read_element(node, index)
        if element is not None:
            return Array._new(element)
    if _is_basic(key) or _is_basic(key := _known_integers(_with_index_arrays(key, node.device, "__getitem__"))):
        starts, stops, steps, out = parse_key(key, node.shape, "__getitem__")
        return wrap(reshape_node(_sliced(node, starts, stops, steps), out))
    plan = _plan(node, *_check(node, _items(key, "__getitem__"), "__getitem__"), "__getitem__")
    out = make(P["gather"], (plan.node, *plan.arrays), (plan.template, plan.shape))
    if plan.perm is not None:
        out = make(P["permute"], (out,), (plan.perm,))
    return wrap(out)


def _known_integers(key):
    """The key with its integer arrays as Python ints, when every array in it
    is an evaluated 0-d integer array: x[i, j] with i, j such arrays is then a
    view (as x[int, int] is), not a gather computed at the next force point.
    Otherwise the key unchanged."""
    items = key if type(key) is tuple else (key,)
    arrays = [k for k in items if isinstance(k, Array)]
    if not all(k.ndim == 0 and k.dtype in dt.INTEGER and k._node.buffer is not None for k in arrays) \
            or any(type(k) is bool or isinstance(k, np.bool_) for k in items):
        return key
    known = tuple(int(k) if isinstance(k, Array) else k for k in items)
    return known if type(key) is tuple else known[0]


def _sliced(node, starts, stops, steps):
    if starts == (0,) * len(starts) and stops == node.shape and steps == (1,) * len(steps):
        return node
    return make(P["slice"], (node,), (starts, stops, steps))


def _value_node(node, value):
    """The node of an assigned value, in the array's dtype (promotion may not change it)."""
    if isinstance(value, Array):
        vnode = value._node
        if dt.PROMOTION[vnode.dtype, node.dtype] != node.dtype:
            raise TypeError(f"__setitem__: cannot assign {vnode.dtype} values to a {node.dtype} array without a cast")
        if vnode.device != node.device:
            raise ValueError(f"__setitem__: value is on {vnode.device}, the array on {node.device}")
        return astype_node(vnode, node.dtype)
    if type(value) in PYTHON_SCALARS:
        vdtype = dt.scalar_dtype(value, node.dtype)
        if vdtype != node.dtype:
            raise TypeError(f"__setitem__: cannot assign a Python {type(value).__name__} to a {node.dtype} array")
        return scalar_node(value, node.dtype, node.device, "__setitem__")
    if isinstance(value, TracedScalar):
        if dt.scalar_dtype(value.kind(), node.dtype) != node.dtype:   # kind(): a zero of its kind
            raise TypeError(f"__setitem__: cannot assign a Python {value.kind.__name__} to a {node.dtype} array")
        return value.node_as(node.dtype)
    raise not_an_array("__setitem__", "value", value, "an arrayx array or a Python scalar")


def _check_value(vshape, shape, shown=None):
    """Value shape `vshape` must broadcast to `shape` (`shown` in the error, if given)."""
    try:
        fits = broadcast_shapes("__setitem__", vshape, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"__setitem__: value of shape {vshape} cannot be broadcast to the indexed shape "
                         f"{shown or shape}")


def _lazy_mask(node, items, vnode):
    """x[mask] = value as where(mask, value, x), when that needs no count of the
    selected elements: the mask (or 0-d boolean array) is the sole index, its
    shape leads x's shape, and the value broadcasts to the remaining axes."""
    if items and items[-1][0] is _ELLIPSIS:
        items = items[:-1]
    if len(items) != 1 or not isinstance(items[0][1], Array) or items[0][0] not in (_MASK, _BOOL):
        return None
    mask = items[0][1]._node
    k = len(mask.shape)
    if mask.shape != node.shape[:k] or mask.device != node.device:
        return None
    rest = node.shape[k:]
    vshape = vnode.shape
    if len(vshape) == len(rest) + 1 and vshape[0] == 1:
        vshape = vshape[1:]     # a side of 1 broadcasts along the selected elements
    if len(vshape) > len(rest):
        return None             # the value's leading side must match the count: force the mask
    _check_value(vshape, rest, f"({', '.join(('n',) + tuple(map(str, rest)))}) (n: the elements the mask selects)")
    cond = reshape_node(mask, mask.shape + (1,) * len(rest))
    return make(P["where"], (cond, reshape_node(vnode, vshape), node))


def assign(self, key: Key, value: Operand, /) -> None:
    """Sets self[key] to value: self becomes a new value; arrays computed from its old value keep it.

    Parameters
    ----------
    key : int | slice | ellipsis | None | Array | tuple of them
        As for __getitem__.
    value : Array | bool | int | float | complex
        Broadcast to the indexed shape and cast to self's dtype.

    Raises
    ------
    IndexError
        An index out of bounds; self keeps its value.
    """
    if write_element(self, key, value._node if type(value) is Array else value):
        return   # one element, written at once
    old = self._node
    node = setitem(self, key, value)._node
    self._node = node
    del old   # the update may write into the old value only if nothing else holds it
    try:
        update_in_place(node)
    except BaseException:
        self._node = node.inputs[0] if node.inputs else node
        raise


def setitem(x, key, value):
    """Sets self[key] to value: the array x with x[key] replaced by value.

    Keys are those of `getitem`; value is a Python scalar or an array that
    broadcasts to the shape of x[key] and is promoted to x's dtype (never
    changing it). With integer arrays holding duplicate indices, which value
    lands is unspecified by the standard (the CPU executor keeps the last, as
    NumPy does).

    Every error is raised here, at the call, and x keeps its value: integer
    index arrays are evaluated (a force point limited to the indices) and
    checked against the axes they index.
    """
    node = x._node
    vnode = _value_node(node, value)
    if _is_basic(key):
        starts, stops, steps, out = parse_key(key, node.shape, "__setitem__")
        _check_value(vnode.shape, out)
        vnode = reshape_node(broadcast_node(vnode, out), slice_shape(starts, stops, steps))
        return wrap(make(P["update_slice"], (node, vnode), (starts, stops, steps)))
    key = _with_index_arrays(key, node.device, "__setitem__")
    items, ellipsis_axes = _check(node, _items(key, "__setitem__"), "__setitem__", bounds=True)
    lazy = _lazy_mask(node, items, vnode)
    if lazy is not None:
        return wrap(lazy)
    plan = _plan(node, items, ellipsis_axes, "__setitem__")
    out = plan.out_shape
    _check_value(vnode.shape, out)
    vnode = broadcast_node(vnode, out)
    if plan.perm is not None:
        vnode = make(P["permute"], (vnode,), (tuple(plan.perm.index(a) for a in range(len(out))),))
    updated = make(P["scatter"], (plan.node, vnode, *plan.arrays), (plan.template,))
    return wrap(reshape_node(updated, node.shape))


def _index_node(indices, name):
    node = node_of(indices, name, "indices")
    if node.dtype not in dt.INTEGER:
        raise TypeError(f"{name}: indices has dtype {node.dtype}; expected an integer dtype")
    return node


def _take_operands(x, indices, name):
    """The nodes of x (at least one dimension) and of its integer indices."""
    node = node_of(x, name)
    inode = _index_node(indices, name)
    if not node.shape:
        raise ValueError(f"{name}: x must have at least one dimension; it is zero-dimensional")
    return node, inode


def take(x: Array, indices: Array, /, *, axis: int | None = None) -> Array:
    """Returns elements of an array along an axis.

    Parameters
    ----------
    x : Array
        Input array, with one or more axes.
    indices : Array
        One-dimensional integer array of indices; negative indices count from
        the last element.
    axis : int | None
        Axis over which to select values (negative counts from the last); may
        be None only for one-dimensional x. Default: None.

    Returns
    -------
    out : Array
        An array of the dtype and shape of x, except that axis has
        len(indices) elements.

    Raises
    ------
    TypeError
        x or indices not an array, or indices not of an integer dtype.
    ValueError
        A 0-d x, indices not one-dimensional, axis None for x of several
        dimensions, an axis out of bounds, or operands on different devices.
    IndexError
        An index out of bounds, when the result is computed.
    """
    node, inode = _take_operands(x, indices, "take")
    ndim = len(node.shape)
    if len(inode.shape) != 1:
        raise ValueError(f"take: indices must be one-dimensional, got shape {inode.shape}")
    if axis is None:
        if ndim != 1:
            raise ValueError(f"take: axis is required when x has more than one dimension (x has {ndim})")
        axis = 0
    axis = normalize_axis(axis, ndim, "take")
    same_device("take", [node, inode])
    return wrap(make(P["take"], (node, inode), (axis,)))


def take_along_axis(x: Array, indices: Array, /, *, axis: int = -1) -> Array:
    """Returns elements from an array at the one-dimensional indices specified by indices along a provided
    axis.

    Parameters
    ----------
    x : Array
        Input array, with one or more axes.
    indices : Array
        Integer array of indices with as many axes as x, broadcast-compatible
        with x except along axis; negative indices count from the last element.
    axis : int
        Axis along which to select values (negative counts from the last).
        Default: -1.

    Returns
    -------
    out : Array
        An array of x's dtype whose shape is the broadcast of x and indices,
        except along axis, where it has the size of indices.

    Raises
    ------
    TypeError
        x or indices not an array, or indices not of an integer dtype.
    ValueError
        A 0-d x, indices with another number of axes, shapes that do not
        broadcast, an axis out of bounds, or operands on different devices.
    IndexError
        An index out of bounds, when the result is computed.
    """
    node, inode = _take_operands(x, indices, "take_along_axis")
    ndim = len(node.shape)
    if len(inode.shape) != ndim:
        raise ValueError(f"take_along_axis: indices must have as many dimensions as x ({ndim}), "
                         f"got shape {inode.shape}")
    axis = normalize_axis(axis, ndim, "take_along_axis")
    same_device("take_along_axis", [node, inode])
    return wrap(make(P["take_along_axis"], (node, inode), (axis,)))
