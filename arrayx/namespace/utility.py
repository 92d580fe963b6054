"""Utility functions of the array API standard."""

from .. import dtypes as dt
from .build import P, composite, make, node_of, normalize_axis, wrap
from .hints import Array, Axes
from .manipulation import concat_nodes, slice_axis
from .statistical import reduce


def all(x: Array, /, *, axis: Axes = None, keepdims: bool = False) -> Array:
    """Tests whether all input array elements evaluate to True along the given axes."""
    return wrap(reduce("all", x, axis, keepdims)[1])


def any(x: Array, /, *, axis: Axes = None, keepdims: bool = False) -> Array:
    """Tests whether any input array element evaluates to True along the given axes."""
    return wrap(reduce("any", x, axis, keepdims)[1])


@composite
def diff(x: Array, /, *, axis: int = -1, n: int = 1, prepend: Array | None = None,
         append: Array | None = None) -> Array:
    """Calculates the n-th discrete forward difference along an axis.

    prepend and append are joined to x along `axis` before differencing.
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
