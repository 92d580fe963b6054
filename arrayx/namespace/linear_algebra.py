"""Linear algebra functions of the main namespace.

matmul is a primitive; tensordot and vecdot are composites of permute,
reshape and matmul, so every contraction runs as one matrix product (BLAS for
floating dtypes) instead of a broadcast product followed by a sum.
"""

import math
import operator
from collections.abc import Sequence

from .. import dtypes as dt
from .build import (P, astype_node, broadcast_shapes, check_dtype, composite, integer_argument, make, node_of,
                    normalize_axis, reshape_node, same_device, wrap)
from .hints import Array


def matmul(x1: Array, x2: Array, /) -> Array:
    """Computes the matrix product.

    Parameters
    ----------
    x1 : Array
        First input array, with at least one dimension; should have a numeric
        data type. A one-dimensional x1 is a row vector, its added axis removed
        from the result.
    x2 : Array
        Second input array, with at least one dimension; should have a numeric
        data type. A one-dimensional x2 is a column vector, likewise.

    Returns
    -------
    out : Array
        The matrix product, its stack dimensions broadcast, with the dtype the
        operands promote to.

    Raises
    ------
    TypeError
        An operand not an array, or not of a numeric dtype.
    ValueError
        A 0-d operand, contracted dimensions that differ, stack shapes that do
        not broadcast, or operands on different devices.
    """
    n1, n2 = node_of(x1, "matmul", "x1"), node_of(x2, "matmul", "x2")
    same_device("matmul", (n1, n2))
    for n, argname in ((n1, "x1"), (n2, "x2")):
        check_dtype(n, "numeric", "matmul", argname)  # before promotion: bool beside an int would pass
        if len(n.shape) == 0:
            raise ValueError(f"matmul: {argname} must have at least one dimension, got a 0-d array")
    k1 = n1.shape[-1]
    k2 = n2.shape[-2] if len(n2.shape) > 1 else n2.shape[0]
    if k1 != k2:
        raise ValueError(f"matmul: contracted dimensions differ: x1 has shape {n1.shape}, x2 has shape {n2.shape}")
    dtype = dt.PROMOTION[n1.dtype, n2.dtype]
    return wrap(make(P["matmul"], (astype_node(n1, dtype), astype_node(n2, dtype))))


def matrix_transpose(x: Array, /) -> Array:
    """Transposes a matrix (or a stack of matrices) x.

    Parameters
    ----------
    x : Array
        Input array of shape (..., M, N): a stack of M x N matrices.

    Returns
    -------
    out : Array
        An array of shape (..., N, M) and x's dtype.

    Raises
    ------
    TypeError
        x not an array.
    ValueError
        x with fewer than two dimensions.
    """
    node = node_of(x, "matrix_transpose")
    ndim = len(node.shape)
    if ndim < 2:
        raise ValueError(f"matrix_transpose: x must have at least 2 dimensions, got shape {node.shape}")
    axes = tuple(range(ndim - 2)) + (ndim - 1, ndim - 2)
    return wrap(make(P["permute"], (node,), (axes,)))


def permute_node(node, axes):
    """`node` with its axes in the order `axes` (no node for the identity order)."""
    axes = tuple(axes)
    if axes == tuple(range(len(node.shape))):
        return node
    return make(P["permute"], (node,), (axes,))


def numeric_operands(name, x1, x2):
    """The nodes of two numeric operands on one device, promoted to one dtype."""
    n1, n2 = node_of(x1, name, "x1"), node_of(x2, name, "x2")
    same_device(name, (n1, n2))
    for n, argname in ((n1, "x1"), (n2, "x2")):
        check_dtype(n, "numeric", name, argname)  # before promotion: bool beside an int would pass
    dtype = dt.PROMOTION[n1.dtype, n2.dtype]
    return astype_node(n1, dtype), astype_node(n2, dtype)


def _axis_list(axes):
    if type(axes) is tuple or type(axes) is list:   # the common case, without an exception caught
        return list(axes)
    try:
        return [operator.index(axes)]
    except TypeError:
        return list(axes)


def _tensordot_axes(axes, ndim1, ndim2):
    """`axes` of tensordot as two equal-length lists of non-negative axes."""
    if isinstance(axes, bool):
        raise TypeError("tensordot: axes must be an int or a pair of sequences of ints, got a bool")
    n = None
    if type(axes) is not tuple and type(axes) is not list:   # a pair of sequences needs no exception caught
        try:
            n = operator.index(axes)
        except TypeError:
            pass
    if n is not None:
        if n < 0:
            raise ValueError(f"tensordot: axes must be a non-negative int, got {n}")
        if n > ndim1 or n > ndim2:
            raise ValueError(f"tensordot: cannot contract {n} axes of arrays of {ndim1} and {ndim2} dimensions")
        return list(range(ndim1 - n, ndim1)), list(range(n))
    try:
        first, second = axes
        # A single axis may be given as an int, as NumPy allows: axes=(1, 0).
        first, second = (_axis_list(a) for a in (first, second))
    except (TypeError, ValueError):
        raise TypeError(f"tensordot: axes must be an int or a pair of sequences of ints, got {axes!r}") from None
    if len(first) != len(second):
        raise ValueError(f"tensordot: axes {axes!r} name {len(first)} axes of x1 but {len(second)} of x2")
    first = [normalize_axis(a, ndim1, "tensordot") for a in first]
    second = [normalize_axis(a, ndim2, "tensordot") for a in second]
    for argname, seq in (("x1", first), ("x2", second)):
        if len(set(seq)) != len(seq):
            raise ValueError(f"tensordot: repeated axis in the axes of {argname}: {axes!r}")
    return first, second


@composite
def tensordot(x1: Array, x2: Array, /, *,
              axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> Array:
    """Returns a tensor contraction of x1 and x2 over specific axes.

    Parameters
    ----------
    x1 : Array
        First input array; should have a numeric data type.
    x2 : Array
        Second input array; should have a numeric data type. Contracted axes
        must have the sizes of x1's (they are not broadcast).
    axes : int | tuple of two sequences of ints
        An int N contracts the last N axes of x1 with the first N of x2; a
        pair of sequences names the axes of each. Default: 2.

    Returns
    -------
    out : Array
        The contraction (complex operands are not conjugated): the remaining
        axes of x1, then those of x2, with the dtype the operands promote to.

    Raises
    ------
    TypeError
        An operand not an array or not numeric, or axes of another type.
    ValueError
        A negative or too large axes, axes of unequal lengths, repeated or out
        of bounds, contracted sizes that differ, or operands on different devices.
    """
    n1, n2 = numeric_operands("tensordot", x1, x2)
    s1, s2 = n1.shape, n2.shape
    first, second = _tensordot_axes(axes, len(s1), len(s2))
    for a, b in zip(first, second):
        if s1[a] != s2[b]:
            raise ValueError(f"tensordot: contracted axis {a} of x1 (size {s1[a]}) and axis {b} of x2 "
                             f"(size {s2[b]}) differ; contracted axes are not broadcast")
    if not first:
        # Nothing contracted: the outer product, as a broadcast multiply (one
        # fusable elementwise node, not a matrix product with inner size 1).
        return wrap(make(P["multiply"], (reshape_node(n1, s1 + (1,) * len(s2)), n2)))
    free1 = [a for a in range(len(s1)) if a not in first]
    free2 = [b for b in range(len(s2)) if b not in second]
    k = math.prod(s1[a] for a in first)
    shape1, shape2 = tuple(s1[a] for a in free1), tuple(s2[b] for b in free2)
    # One matrix product: x1 as (free1, contracted), x2 as (contracted, free2).
    m1 = reshape_node(permute_node(n1, free1 + first), (math.prod(shape1), k))
    m2 = reshape_node(permute_node(n2, second + free2), (k, math.prod(shape2)))
    return wrap(reshape_node(make(P["matmul"], (m1, m2)), shape1 + shape2))


def contraction_axis(name, axis, ndim1, ndim2):
    """The axis of vecdot/cross as a negative int counted from the last axis.

    The standard counts this axis from the end ([-N, -1], N the smaller rank)
    so that it means the same axis of both operands. A non-negative axis is
    accepted only when both operands have the same rank, where it cannot be
    ambiguous.
    """
    axis = integer_argument(axis, name, "axis", refuse_bool=True)
    n = min(ndim1, ndim2)
    if n == 0:
        raise ValueError(f"{name}: x1 and x2 must have at least one dimension")
    if axis >= 0:
        if ndim1 != ndim2:
            raise ValueError(f"{name}: axis {axis} is ambiguous for operands of {ndim1} and {ndim2} dimensions; "
                             f"give a negative axis in [-{n}, -1]")
        axis -= ndim1
    if not -n <= axis <= -1:
        raise ValueError(f"{name}: axis {axis} is out of bounds [-{n}, -1] for operands of "
                         f"{ndim1} and {ndim2} dimensions")
    return axis


@composite
def vecdot(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Computes the (vector) dot product of two arrays.

    Parameters
    ----------
    x1 : Array
        First input array; should have a numeric data type. It is conjugated
        when complex: the result is sum(conj(x1) * x2) over axis.
    x2 : Array
        Second input array, broadcast-compatible with x1 except along axis,
        where it must have the size of x1's (not broadcast).
    axis : int
        Axis of the vectors, counted from the last: on [-N, -1], N the smaller
        number of dimensions (a non-negative axis only when both have the same
        number). Default: -1.

    Returns
    -------
    out : Array
        The dot products (0-d for two vectors), with the dtype the operands
        promote to.

    Raises
    ------
    TypeError
        An operand not an array or not numeric, or axis not an integer.
    ValueError
        A 0-d operand, an axis out of bounds or ambiguous, sizes along axis that
        differ, shapes that do not broadcast, or operands on different devices.
    """
    n1, n2 = numeric_operands("vecdot", x1, x2)
    s1, s2 = n1.shape, n2.shape
    axis = contraction_axis("vecdot", axis, len(s1), len(s2))
    if s1[axis] != s2[axis]:
        raise ValueError(f"vecdot: axis {axis} has size {s1[axis]} in x1 but {s2[axis]} in x2; "
                         "the contracted axis is not broadcast")
    if n1.dtype in dt.COMPLEX:
        n1 = make(P["conj"], (n1,))
    if len(s1) == len(s2) == 1:
        return wrap(make(P["matmul"], (n1, n2)))   # two vectors: matmul's dot, one node
    batch1, batch2 = s1[:axis] + s1[axis:][1:], s2[:axis] + s2[axis:][1:]
    batch = broadcast_shapes("vecdot", batch1, batch2)
    # Move the axis last, then (..., 1, n) @ (..., n, 1): matmul broadcasts the
    # batch axes without materializing the broadcast product.
    n = s1[axis]
    r1 = reshape_node(_move_last(n1, axis), batch1 + (1, n))
    r2 = reshape_node(_move_last(n2, axis), batch2 + (n, 1))
    return wrap(reshape_node(make(P["matmul"], (r1, r2)), batch))


def _move_last(node, axis):
    ndim = len(node.shape)
    axis %= ndim
    return permute_node(node, [a for a in range(ndim) if a != axis] + [axis])


__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot"]
