"""Utility functions of the array API standard."""

from .. import dtypes as dt
from .build import P, composite, make, node_of, normalize_axis, wrap
from .hints import Array, Axes
from .manipulation import concat_nodes, slice_axis
from .statistical import reduce


def all(x: Array, /, *, axis: Axes = None, keepdims: bool = False) -> Array:
    """Tests whether all input array elements evaluate to True along a specified axis.

    Parameters
    ----------
    x : Array
        Input array, of any data type (non-zero elements are True).
    axis : int | tuple of ints | None
        Axis or axes along which to perform a logical AND reduction (negative
        counts from the last); None: over the entire array. Default: None.
    keepdims : bool
        Whether to keep the reduced axes as singleton dimensions. Default: False.

    Returns
    -------
    out : Array
        The test results (True over zero elements; 0-d over the entire array),
        of dtype bool.

    Raises
    ------
    TypeError
        x not an array.
    ValueError
        An axis out of bounds, or a repeated axis.
    """
    return wrap(reduce("all", x, axis, keepdims)[1])


def any(x: Array, /, *, axis: Axes = None, keepdims: bool = False) -> Array:
    """Tests whether any input array element evaluates to True along a specified axis.

    Parameters
    ----------
    x : Array
        Input array, of any data type (non-zero elements are True).
    axis : int | tuple of ints | None
        Axis or axes along which to perform a logical OR reduction (negative
        counts from the last); None: over the entire array. Default: None.
    keepdims : bool
        Whether to keep the reduced axes as singleton dimensions. Default: False.

    Returns
    -------
    out : Array
        The test results (False over zero elements; 0-d over the entire array),
        of dtype bool.

    Raises
    ------
    TypeError
        x not an array.
    ValueError
        An axis out of bounds, or a repeated axis.
    """
    return wrap(reduce("any", x, axis, keepdims)[1])


@composite
def diff(x: Array, /, *, axis: int = -1, n: int = 1, prepend: Array | None = None,
         append: Array | None = None) -> Array:
    """Calculates the n-th discrete forward difference along a specified axis.

    Parameters
    ----------
    x : Array
        Input array, with at least one dimension; should have a numeric data type.
    axis : int
        Axis along which to compute differences (negative counts from the last).
        Default: -1.
    n : int
        Number of times to recursively compute differences. Default: 1.
    prepend : Array | None
        Values to join to x before its start along axis, before differencing;
        of the shape of x except along axis. Default: None.
    append : Array | None
        Values to join to x after its end along axis, as prepend. Default: None.

    Returns
    -------
    out : Array
        The n-th differences, n shorter along axis than the joined input (the
        dtype the inputs promote to; for bool, whether neighbours differ).

    Raises
    ------
    TypeError
        x, prepend or append not an array.
    ValueError
        A 0-d x, a negative n, an axis out of bounds, or prepend or append
        whose shape does not match x off axis.
    """
    node = node_of(x, "diff")
    if len(node.shape) == 0:
        raise ValueError("diff: x must have at least one dimension")
    axis = normalize_axis(axis, len(node.shape), "diff")
    if type(n) is not int or n < 0:
        raise ValueError(f"diff: n must be a non-negative int, got {n!r}")
    parts = [node_of(p, "diff", argname) for p, argname in ((prepend, "prepend"), (x, "x"), (append, "append"))
             if p is not None]
    node = concat_nodes(parts, axis, "diff") if len(parts) > 1 else node
    # Booleans differ where they are not equal, as in NumPy.
    subtract = P["not_equal"] if node.dtype == dt.bool else P["subtract"]
    for _ in range(n):
        length = node.shape[axis]
        if length == 0:
            break
        node = make(subtract, (slice_axis(node, axis, 1, length), slice_axis(node, axis, 0, length - 1)))
    return wrap(node)
