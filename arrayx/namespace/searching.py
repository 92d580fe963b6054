"""Searching functions of the array API standard.

argmax, argmin and searchsorted are primitives; count_nonzero is a composite
(`not_equal`, then a `sum` in the default index dtype). nonzero has a
data-dependent shape and is a force point. `where` lives in elementwise.py.
"""

import numpy as np

from .. import dtypes as dt
from .array_object import Array
from .build import (P, astype_node, check_dtype, composite, dynamic, make, node_of, normalize_axes, normalize_axis,
                    scalar_node, wrap)
from .elementwise import binary_nodes
from .hints import Axes

_SIDES = ("left", "right")


def _arg_extremum(name, x, axis, keepdims):
    node = node_of(x, name)
    ndim = len(node.shape)
    # The standard takes one axis or None (flattened), never a tuple.
    axes = tuple(range(ndim)) if axis is None else (normalize_axis(axis, ndim, name),)
    out = make(P[name], (node,), (axes, bool(keepdims)), name)   # checks the dtype first
    if any(node.shape[a] == 0 for a in axes):
        raise ValueError(f"{name}: attempt to get {name} of an empty sequence "
                         f"(axis {axis} of an array of shape {node.shape} has zero size)")
    return wrap(out)


def argmax(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Returns the indices of the maximum values along a specified axis.

    Parameters
    ----------
    x : Array
        Input array; should have a real-valued data type.
    axis : int | None
        Axis along which to search (negative counts from the last); None
        returns the index into the flattened array. Default: None.
    keepdims : bool
        Whether to keep the reduced axis as a singleton dimension. Default: False.

    Returns
    -------
    out : Array
        The index of the first occurrence of the maximum (of the first NaN,
        which counts as the maximum, as in NumPy), of the default array index
        data type.

    Raises
    ------
    TypeError
        x not an array, or of a complex or bool dtype.
    ValueError
        An axis of size zero, or an axis out of bounds.
    """
    return _arg_extremum("argmax", x, axis, keepdims)


def argmin(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Returns the indices of the minimum values along a specified axis.

    Parameters
    ----------
    x : Array
        Input array; should have a real-valued data type.
    axis : int | None
        Axis along which to search (negative counts from the last); None
        returns the index into the flattened array. Default: None.
    keepdims : bool
        Whether to keep the reduced axis as a singleton dimension. Default: False.

    Returns
    -------
    out : Array
        The index of the first occurrence of the minimum (of the first NaN,
        which counts as the minimum, as in NumPy), of the default array index
        data type.

    Raises
    ------
    TypeError
        x not an array, or of a complex or bool dtype.
    ValueError
        An axis of size zero, or an axis out of bounds.
    """
    return _arg_extremum("argmin", x, axis, keepdims)


@composite
def count_nonzero(x: Array, /, *, axis: Axes = None, keepdims: bool = False) -> Array:
    """Counts the number of array elements which are non-zero.

    Parameters
    ----------
    x : Array
        Input array (a complex element is non-zero when either component is;
        a bool element when it is True).
    axis : int | tuple of ints | None
        Axis or axes along which to count (negative counts from the last);
        None: over the entire array. Default: None.
    keepdims : bool
        Whether to keep the reduced axes as singleton dimensions. Default: False.

    Returns
    -------
    out : Array
        The counts (0-d over the entire array), of the default array index
        data type.

    Raises
    ------
    TypeError
        x not an array.
    ValueError
        An axis out of bounds, or a repeated axis.
    """
    node = node_of(x, "count_nonzero")
    axes = normalize_axes(axis, len(node.shape), "count_nonzero")
    flags = node
    if node.dtype != dt.bool:
        zero = scalar_node(0, node.dtype, node.device, "count_nonzero")
        flags = make(P["not_equal"], (node, zero))
    counts = astype_node(flags, dt.DEFAULT_INDEX)
    return wrap(make(P["sum"], (counts,), (axes, bool(keepdims))))


def nonzero(x: Array, /) -> tuple[Array, ...]:
    """Returns the indices of the array elements which are non-zero.

    The shape of the result depends on the values of x, so calling nonzero
    computes x (a force point).

    Parameters
    ----------
    x : Array
        Input array, with one or more dimensions.

    Returns
    -------
    out : tuple of Array
        One array per dimension of x, holding the indices of the non-zero
        elements in that dimension in row-major (C-style) order, of the default
        array index data type.

    Raises
    ------
    TypeError
        x not an array.
    ValueError
        A 0-d x.
    """
    node = node_of(x, "nonzero")
    if len(node.shape) == 0:
        raise ValueError("nonzero: x must have one or more dimensions; it is zero-dimensional")
    return dynamic("nonzero", (node,))


def searchsorted(x1: Array, x2: Array | int | float, /, *, side: str = "left",
                 sorter: Array | None = None) -> Array:
    """Finds the indices into x1 such that, if the corresponding elements in x2 were inserted before the
    indices, the order of x1, when sorted in ascending order, would be preserved.

    Parameters
    ----------
    x1 : Array
        One-dimensional input array of a real-valued data type, sorted in
        ascending order unless sorter is given (NaNs sort last, as in sort).
    x2 : Array | int | float
        Search values, of a real-valued data type; a Python scalar is a 0-d
        array of the dtype the standard gives a scalar beside x1.
    side : str
        Which index a value equal to an element of x1 gets: 'left', the first
        suitable index; 'right', the last. Default: 'left'.
    sorter : Array | None
        Integer indices that sort x1 in ascending order, of the shape of x1.
        Default: None.

    Returns
    -------
    out : Array
        Indices of the shape of x2, of the default array index data type.

    Raises
    ------
    TypeError
        An operand not an array (or, for x2, an int or float), or of a complex
        or bool dtype; a sorter that is not an integer array.
    ValueError
        x1 not one-dimensional, side not 'left' or 'right', or a sorter of
        another shape or device.
    """
    name = "searchsorted"
    node = node_of(x1, name, "x1")
    if len(node.shape) != 1:
        raise ValueError(f"{name}: x1 must be one-dimensional, got shape {node.shape}")
    # Each operand before promotion (bool beside an integer would pass as
    # promoted), naming the user's operand.
    check_dtype(node, "real numeric", name, "x1")
    if isinstance(x2, (np.integer, np.floating)):
        x2 = x2.item()  # NumPy scalars act as Python scalars, as in the elementwise functions
    if isinstance(x2, Array):
        check_dtype(x2._node, "real numeric", name, "x2")
    elif type(x2) not in (int, float):
        raise TypeError(f"{name}: x2 must be an arrayx array, int or float, got {type(x2).__name__}")
    if side not in _SIDES:
        raise ValueError(f"{name}: side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        order = node_of(sorter, name, "sorter")
        check_dtype(order, "integral", name, "sorter")
        if order.shape != node.shape:
            raise ValueError(f"{name}: sorter must have the shape of x1 {node.shape}, got {order.shape}")
        if order.device != node.device:
            raise ValueError(f"{name}: sorter is on {order.device}, x1 on {node.device}")
        # x1 in sorted order (before promotion: a narrower gather is cheaper).
        x1 = wrap(make(P["take"], (node, order), (0,)))
    n1, n2 = binary_nodes(name, x1, x2)
    return wrap(make(P["searchsorted"], (n1, n2), (side,)))


__all__ = ["argmax", "argmin", "count_nonzero", "nonzero", "searchsorted"]
