"""Manipulation functions of the array API standard.

reshape, permute, broadcast, slice, flip, pad and concat are primitives (views
in the CPU executor where NumPy can make one); the others are composites, but
for `repeat` with an array of repeats, whose result shape depends on the values
(a force point).
"""

import operator

from .. import dtypes as dt
from ..graph.primitives import broadcast_shapes as _broadcast_shapes
from .array_object import Array
from .build import (P, astype_node, broadcast_node, check_size, composite, dynamic, make, node_of, normalize_axes,
                    normalize_axis, normalize_shape, reshape_node, same_device, wrap)
from .creation import iota
from .data_types import promote_all
from .hints import Axes


def slice_axis(node, axis, start, stop, step=1):
    """node[..., start:stop:step, ...] along `axis` (normalized bounds)."""
    starts = [0] * len(node.shape)
    stops = list(node.shape)
    steps = [1] * len(node.shape)
    starts[axis], stops[axis], steps[axis] = start, stop, step
    return make(P["slice"], (node,), (tuple(starts), tuple(stops), tuple(steps)))


def concat_nodes(nodes, axis, name):
    """Join nodes along an existing axis, promoting them to one dtype."""
    first = nodes[0].shape
    for i, n in enumerate(nodes):
        if len(n.shape) != len(first) or any(a != b for j, (a, b) in enumerate(zip(n.shape, first)) if j != axis):
            raise ValueError(f"{name}: array {i} of shape {n.shape} does not match shape {first} except along axis {axis}")
    same_device(name, nodes)
    dtype = promote_all([n.dtype for n in nodes])
    nodes = tuple(astype_node(n, dtype) for n in nodes)
    if len(nodes) == 1:
        return nodes[0]
    return make(P["concat"], nodes, (axis,))


def _nodes(arrays, name):
    if not isinstance(arrays, (tuple, list)) or not arrays:
        raise TypeError(f"{name}: arrays must be a non-empty tuple or list of arrays")
    return [node_of(a, name, f"arrays[{i}]") for i, a in enumerate(arrays)]


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """Broadcasts one or more shapes against one another.

    Parameters
    ----------
    *shapes : tuple of ints
        An arbitrary number of shapes to broadcast.

    Returns
    -------
    out : tuple of ints
        The shape obtained by broadcasting the shapes against one another
        (() for no shapes).

    Raises
    ------
    TypeError
        A shape that is not a sequence of ints.
    ValueError
        Shapes that cannot be broadcast together, or a negative dimension.
    """
    if not shapes:
        return ()
    return _broadcast_shapes("broadcast_shapes", *(normalize_shape(s, "broadcast_shapes") for s in shapes))


def broadcast_to(x: Array, /, shape: tuple[int, ...]) -> Array:
    """Broadcasts an array to a specified shape.

    Parameters
    ----------
    x : Array
        Array to broadcast; must be broadcast-compatible with shape.
    shape : tuple of ints
        Array shape.

    Returns
    -------
    out : Array
        An array of the specified shape and the dtype of x (a view: nothing is copied).

    Raises
    ------
    TypeError
        x not an array, or shape not a sequence of ints.
    ValueError
        x cannot be broadcast to shape.
    """
    node = node_of(x, "broadcast_to")
    shape = normalize_shape(shape, "broadcast_to")
    if _broadcast_shapes("broadcast_to", node.shape, shape) != shape:
        raise ValueError(f"broadcast_to: cannot broadcast shape {node.shape} to {shape}")
    check_size(shape, node.dtype, "broadcast_to")
    return wrap(broadcast_node(node, shape))


def broadcast_arrays(*arrays: Array) -> tuple[Array, ...]:
    """Broadcasts one or more arrays against one another.

    Parameters
    ----------
    *arrays : Array
        An arbitrary number of arrays to broadcast.

    Returns
    -------
    out : tuple of Array
        The broadcast arrays, all of one shape, each with the dtype of its input.

    Raises
    ------
    TypeError
        An argument that is not an array.
    ValueError
        Shapes that cannot be broadcast together.
    """
    nodes = [node_of(a, "broadcast_arrays", f"arrays[{i}]") for i, a in enumerate(arrays)]
    if not nodes:
        return ()
    shape = _broadcast_shapes("broadcast_arrays", *(n.shape for n in nodes))
    for n in nodes:
        check_size(shape, n.dtype, "broadcast_arrays")
    return tuple(wrap(broadcast_node(n, shape)) for n in nodes)


def concat(arrays: tuple[Array, ...] | list[Array], /, *, axis: int | None = 0) -> Array:
    """Joins a sequence of arrays along an existing axis.

    Parameters
    ----------
    arrays : tuple or list of Array
        Input arrays to join, of the same shape except along axis.
    axis : int | None
        Axis along which to join the arrays (negative counts from the last);
        None flattens the arrays first. Default: 0.

    Returns
    -------
    out : Array
        The concatenated values, with the dtype the inputs promote to.

    Raises
    ------
    TypeError
        arrays not a non-empty tuple or list of arrays.
    ValueError
        Shapes that differ off axis, 0-d arrays with an axis, an axis out of
        bounds, or arrays on different devices.
    """
    nodes = _nodes(arrays, "concat")
    if axis is None:
        nodes = [reshape_node(n, (_size(n.shape),)) for n in nodes]
        axis = 0
    else:
        if any(len(n.shape) == 0 for n in nodes):
            raise ValueError("concat: 0-dimensional arrays cannot be concatenated; use axis=None or stack")
        axis = normalize_axis(axis, len(nodes[0].shape), "concat")
    return wrap(concat_nodes(nodes, axis, "concat"))


@composite
def stack(arrays: tuple[Array, ...] | list[Array], /, *, axis: int = 0) -> Array:
    """Joins a sequence of arrays along a new axis.

    Parameters
    ----------
    arrays : tuple or list of Array
        Input arrays to join, all of one shape.
    axis : int
        Index of the new axis in the shape of the result, on [-N-1, N] for
        N-dimensional arrays (negative counts from the last). Default: 0.

    Returns
    -------
    out : Array
        An array with N+1 axes, with the dtype the inputs promote to.

    Raises
    ------
    TypeError
        arrays not a non-empty tuple or list of arrays.
    ValueError
        Arrays of different shapes or devices, or an axis out of bounds.
    """
    nodes = _nodes(arrays, "stack")
    shape = nodes[0].shape
    for i, n in enumerate(nodes):
        if n.shape != shape:
            raise ValueError(f"stack: arrays[{i}] has shape {n.shape}, arrays[0] has {shape}")
    axis = normalize_axis(axis, len(shape) + 1, "stack")
    expanded = [reshape_node(n, shape[:axis] + (1,) + shape[axis:]) for n in nodes]
    return wrap(concat_nodes(expanded, axis, "stack"))


def _size(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def reshape(x: Array, /, shape: tuple[int, ...], *, copy: bool | None = None) -> Array:
    """Reshapes an array without changing its data.

    Parameters
    ----------
    x : Array
        Input array to reshape.
    shape : tuple of ints
        A new shape with x's number of elements; one dimension may be -1, to be
        inferred from the others.
    copy : bool | None
        Whether to copy. arrayx honours every value without copying: a reshape
        is a view, and arrays are immutable. Default: None.

    Returns
    -------
    out : Array
        An array of the given shape with the dtype and elements of x.

    Raises
    ------
    TypeError
        x not an array, or shape not a sequence of ints.
    ValueError
        A shape with x's elements in another number, or more than one -1.
    """
    node = node_of(x, "reshape")
    try:
        shape = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"reshape: shape must be a sequence of ints, got {shape!r}") from None
    size = _size(node.shape)
    unknown = [i for i, n in enumerate(shape) if n == -1]
    if len(unknown) > 1 or any(n < -1 for n in shape):
        raise ValueError(f"reshape: invalid shape {shape}")
    if unknown:
        known = _size(n for n in shape if n != -1)
        if known == 0 or size % known:
            raise ValueError(f"reshape: cannot reshape an array of size {size} into shape {shape}")
        shape = tuple(size // known if n == -1 else n for n in shape)
    if _size(shape) != size:
        raise ValueError(f"reshape: cannot reshape an array of size {size} into shape {shape}")
    check_size(shape, node.dtype, "reshape")  # a zero-size array takes any shape with a zero
    return wrap(reshape_node(node, shape))


def permute_dims(x: Array, /, axes: tuple[int, ...]) -> Array:
    """Permutes the axes of an array x.

    Parameters
    ----------
    x : Array
        Input array.
    axes : tuple of ints
        A permutation of x's axes (negative values count from the last).

    Returns
    -------
    out : Array
        An array with the axes permuted and the dtype of x.

    Raises
    ------
    TypeError
        x not an array, or axes not a tuple of ints.
    ValueError
        axes that are not a permutation of x's axes.
    """
    node = node_of(x, "permute_dims")
    ndim = len(node.shape)
    if not isinstance(axes, (tuple, list)):
        raise TypeError(f"permute_dims: axes must be a tuple of ints, got {type(axes).__name__}")
    axes = tuple(normalize_axis(a, ndim, "permute_dims") for a in axes)
    if sorted(axes) != list(range(ndim)):
        raise ValueError(f"permute_dims: axes {axes} are not a permutation of {ndim} dimensions")
    if axes == tuple(range(ndim)):
        return wrap(reshape_node(node, node.shape))
    return wrap(make(P["permute"], (node,), (axes,)))


def expand_dims(x: Array, /, axis: int | tuple[int, ...] = 0) -> Array:
    """Expands the shape of an array by inserting a new axis of size one at the position (or positions)
    specified by axis.

    Parameters
    ----------
    x : Array
        Input array.
    axis : int | tuple of ints
        Position(s) of the new axes in the result, on [-N-M, N+M) for N
        dimensions and M new axes (negative counts from the last). Default: 0.

    Returns
    -------
    out : Array
        An array with N+M dimensions and the dtype of x.

    Raises
    ------
    TypeError
        x not an array.
    ValueError
        An axis out of bounds, or a repeated axis.
    """
    node = node_of(x, "expand_dims")
    axes = axis if isinstance(axis, tuple) else (axis,)
    ndim = len(node.shape) + len(axes)
    positions = normalize_axes(tuple(axes), ndim, "expand_dims")
    dims = iter(node.shape)
    shape = tuple(1 if i in positions else next(dims) for i in range(ndim))
    return wrap(reshape_node(node, shape))


def squeeze(x: Array, /, axis: int | tuple[int, ...]) -> Array:
    """Removes singleton axes from x.

    Parameters
    ----------
    x : Array
        Input array.
    axis : int | tuple of ints
        Axis (or axes) to squeeze, each of size one (negative counts from the last).

    Returns
    -------
    out : Array
        An array with the dtype and elements of x, without those axes.

    Raises
    ------
    TypeError
        x not an array.
    ValueError
        An axis whose size is not one, an axis out of bounds, or a repeated axis.
    """
    node = node_of(x, "squeeze")
    axes = normalize_axes(axis, len(node.shape), "squeeze")
    for a in axes:
        if node.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has size {node.shape[a]}, not 1")
    return wrap(reshape_node(node, tuple(n for i, n in enumerate(node.shape) if i not in axes)))


def flip(x: Array, /, *, axis: Axes = None) -> Array:
    """Reverses the order of elements in an array along the given axis.

    Parameters
    ----------
    x : Array
        Input array.
    axis : int | tuple of ints | None
        Axis (or axes) along which to reverse elements (negative counts from
        the last); None reverses all axes. Default: None.

    Returns
    -------
    out : Array
        An array with the dtype, shape and elements of x, reordered.

    Raises
    ------
    TypeError
        x not an array.
    ValueError
        An axis out of bounds, or a repeated axis.
    """
    node = node_of(x, "flip")
    axes = normalize_axes(axis, len(node.shape), "flip")
    if not axes:
        return wrap(reshape_node(node, node.shape))
    return wrap(make(P["flip"], (node,), (axes,)))


def moveaxis(x: Array, source: int | tuple[int, ...], destination: int | tuple[int, ...], /) -> Array:
    """Moves array axes to new positions, while leaving other axes in their original positions.

    Parameters
    ----------
    x : Array
        Input array.
    source : int | tuple of ints
        Axis (or axes) to move, unique (negative counts from the last).
    destination : int | tuple of ints
        The position of each source axis in the result, unique.

    Returns
    -------
    out : Array
        An array with the axes reordered and the dtype of x.

    Raises
    ------
    TypeError
        x not an array.
    ValueError
        source and destination of different lengths, a repeated axis, or an
        axis out of bounds.
    """
    node = node_of(x, "moveaxis")
    ndim = len(node.shape)
    src = source if isinstance(source, tuple) else (source,)
    dst = destination if isinstance(destination, tuple) else (destination,)
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source} and destination {destination} differ in length")
    src = [normalize_axis(a, ndim, "moveaxis") for a in src]
    dst = [normalize_axis(a, ndim, "moveaxis") for a in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("moveaxis: repeated axes")
    order = [a for a in range(ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute_dims(x, tuple(order))


@composite
def roll(x: Array, /, shift: int | tuple[int, ...], *, axis: Axes = None) -> Array:
    """Rolls array elements along a specified axis.

    Parameters
    ----------
    x : Array
        Input array.
    shift : int | tuple of ints
        Number of places by which elements are shifted (positive: towards larger
        indices); elements leaving one end come back at the other. A tuple gives
        one shift per axis; an int shifts every axis by it.
    axis : int | tuple of ints | None
        Axis (or axes) along which to shift (negative counts from the last);
        None shifts the flattened array and restores the shape. Default: None.

    Returns
    -------
    out : Array
        An array with the dtype, shape and elements of x, shifted.

    Raises
    ------
    TypeError
        x not an array, or shift not an int or a tuple of ints.
    ValueError
        shift and axis tuples of different lengths, or an axis out of bounds.
    """
    node = node_of(x, "roll")
    if axis is None:
        flat = reshape_node(node, (_size(node.shape),))
        return wrap(reshape_node(_roll_axis(flat, _int_shift(shift), 0), node.shape))
    axes = axis if isinstance(axis, tuple) else (axis,)
    shifts = shift if isinstance(shift, tuple) else (shift,) * len(axes)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift {shift} and axis {axis} differ in length")
    for s, a in zip(shifts, axes):
        node = _roll_axis(node, _int_shift(s), normalize_axis(a, len(node.shape), "roll"))
    return wrap(node)


def _int_shift(shift):
    try:
        return operator.index(shift)
    except TypeError:
        raise TypeError(f"roll: shift must be an int or a tuple of ints, got {shift!r}") from None


def _roll_axis(node, shift, axis):
    n = node.shape[axis]
    if n == 0 or shift % n == 0:
        return node
    k = shift % n
    return make(P["concat"], (slice_axis(node, axis, n - k, n), slice_axis(node, axis, 0, n - k)), (axis,))


@composite
def tile(x: Array, repetitions: tuple[int, ...], /) -> Array:
    """Constructs an array by tiling an input array.

    Parameters
    ----------
    x : Array
        Input array.
    repetitions : tuple of ints
        Number of repetitions along each axis, non-negative. The shorter of
        x.shape and repetitions is padded with leading ones.

    Returns
    -------
    out : Array
        A tiled array with max(N, M) axes and the dtype of x.

    Raises
    ------
    TypeError
        x not an array, or repetitions not a tuple of ints.
    ValueError
        A negative repetition.
    """
    node = node_of(x, "tile")
    try:
        reps = tuple(operator.index(r) for r in repetitions)
    except TypeError:
        raise TypeError(f"tile: repetitions must be a tuple of ints, got {repetitions!r}") from None
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative, got {reps}")
    ndim = max(len(reps), len(node.shape))
    reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - len(node.shape)) + node.shape
    check_size(tuple(r * s for r, s in zip(reps, shape)), node.dtype, "tile")
    # Broadcast a new axis of size r before each dimension, then merge the pairs.
    interleaved = tuple(d for pair in zip((1,) * ndim, shape) for d in pair)
    node = reshape_node(node, interleaved)
    node = broadcast_node(node, tuple(d for pair in zip(reps, shape) for d in pair))
    return wrap(reshape_node(node, tuple(r * s for r, s in zip(reps, shape))))


@composite
def unstack(x: Array, /, *, axis: int = 0) -> tuple[Array, ...]:
    """Splits an array into a sequence of arrays along the given axis.

    Parameters
    ----------
    x : Array
        Input array, with at least one dimension.
    axis : int
        Axis along which to split (negative counts from the last). Default: 0.

    Returns
    -------
    out : tuple of Array
        The slices along axis, each of the shape of x without that axis.

    Raises
    ------
    TypeError
        x not an array.
    ValueError
        A 0-d x, or an axis out of bounds.
    """
    node = node_of(x, "unstack")
    if len(node.shape) == 0:
        raise ValueError("unstack: x must have at least one dimension")
    axis = normalize_axis(axis, len(node.shape), "unstack")
    rest = node.shape[:axis] + node.shape[axis + 1:]
    return tuple(wrap(reshape_node(slice_axis(node, axis, i, i + 1), rest)) for i in range(node.shape[axis]))


@composite
def repeat(x: Array, repeats: int | Array, /, *, axis: int | None = None) -> Array:
    """Repeats each element of an array a specified number of times on a per-element basis.

    Parameters
    ----------
    x : Array
        Input array containing elements to repeat.
    repeats : int | Array
        The number of repetitions for each element: a non-negative int, or a
        one-dimensional integer array of shape (1,) or (S,), S the size of axis
        (of the flattened x for axis None).
        An array decides the result's shape by its values, so it is computed at
        the call (a force point); x stays lazy.
    axis : int | None
        Axis along which to repeat (negative counts from the last); None
        repeats the elements of the flattened array. Default: None.

    Returns
    -------
    out : Array
        An array with the dtype of x: one-dimensional for axis None, else the
        shape of x except along axis.

    Raises
    ------
    TypeError
        x not an array, or repeats not an int or an integer array.
    ValueError
        A negative repeat, repeats of the wrong shape, or an axis out of bounds.
    """
    node = node_of(x, "repeat")
    if axis is None:
        node = reshape_node(node, (_size(node.shape),))
        axis = 0
    else:
        axis = normalize_axis(axis, len(node.shape), "repeat")
    size = node.shape[axis]
    if isinstance(repeats, Array):
        rnode = repeats._node
        if rnode.dtype not in dt.INTEGER:
            raise TypeError(f"repeat: repeats has dtype {rnode.dtype}; expected an integer dtype")
        if rnode.shape not in ((1,), (size,)):
            raise ValueError(f"repeat: repeats must have shape (1,) or ({size},), got {rnode.shape}")
        same_device("repeat", [node, rnode])
        if (repeats._host() < 0).any():
            raise ValueError("repeat: repeats must be non-negative")
        # NumPy's repeat casts its counts to intp only 'safely', which rejects uint64.
        rnode = astype_node(rnode, dt.DEFAULT_INDEX)
        # Only the counts decide the shape: the positions they select are computed
        # now, and the result is a lazy (and differentiable) take of x.
        positions = iota((size,), 0, dt.DEFAULT_INDEX, node.device)
        index = dynamic("repeat", [positions, rnode], (0,))[0]
        return wrap(make(P["take"], (node, index._node), (axis,)))
    if type(repeats) is bool:
        raise TypeError("repeat: repeats must be an int or an integer array, got bool")
    try:
        count = operator.index(repeats)
    except TypeError:
        raise TypeError(f"repeat: repeats must be an int or an integer array, got {type(repeats).__name__}") from None
    if count < 0:
        raise ValueError(f"repeat: repeats must be non-negative, got {count}")
    check_size(node.shape[:axis] + (size * count,) + node.shape[axis + 1:], node.dtype, "repeat")
    # Broadcast a new axis of length `count` after `axis`, then merge the two.
    shape = node.shape
    node = reshape_node(node, shape[:axis + 1] + (1,) + shape[axis + 1:])
    node = broadcast_node(node, shape[:axis + 1] + (count,) + shape[axis + 1:])
    return wrap(reshape_node(node, shape[:axis] + (size * count,) + shape[axis + 1:]))
