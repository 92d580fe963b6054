"""Statistical functions of the array API standard.

sum, prod, max, min and the cumulative functions are primitives; mean, var
and std are composites of them. Those that accumulate run in
`dtypes.accumulator` of their dtype (float16 in float32) and round once.
mean, var and std compute integer and bool arrays in the default floating
dtype (build.floating_argument), as NumPy does.
"""

import math

from .. import dtypes as dt
from .build import (P, astype_node, check_dtype, composite, floating_argument, make, node_of, normalize_axes,
                    normalize_axis, pad_node, scalar_node, wrap)
from .creation import check_dtype_arg
from .hints import Array, Axes, DType


def reduce(name, x, axis, keepdims):
    """(node of x, node of the reduction primitive `name` over `axis` of x)."""
    node = node_of(x, name)
    axes = normalize_axes(axis, len(node.shape), name)
    return node, make(P[name], (node,), (axes, bool(keepdims)), name)


def _count(node, axes):
    n = 1
    for a in axes:
        n *= node.shape[a]
    return n


def sum_dtype(node, dtype, name):
    """The result dtype of sum/prod: dtype= if given, else the standard's default."""
    if dtype is not None:
        dtype = check_dtype_arg(dtype, name)
        if node.dtype in dt.COMPLEX and dtype not in dt.COMPLEX:
            raise TypeError(f"{name}: cannot accumulate complex {node.dtype} as {dtype}")
        return dtype
    kind = node.dtype.kind
    if kind == "i" or kind == "b":   # signed integers, bool
        return dt.DEFAULT_INT
    if kind == "u":
        return dt.uint64
    return node.dtype


def accumulate(prim, node, attrs, dtype):
    """`prim` (sum, prod, a scan) over `node` cast to `dtype`, accumulated in
    dtypes.accumulator(dtype) and rounded once to `dtype`."""
    wide = dt.accumulator(dtype)
    if node.dtype is dtype is wide:   # nothing to cast (float64 data, say)
        return make(prim, (node,), attrs)
    return astype_node(make(prim, (astype_node(astype_node(node, dtype), wide),), attrs), dtype)


def _sum_like(name, x, axis, dtype, keepdims):
    # Every dtype is accepted: bool accumulates in the default integer dtype, as in NumPy.
    node = node_of(x, name)
    axes = normalize_axes(axis, len(node.shape), name)
    return wrap(accumulate(P[name], node, (axes, bool(keepdims)), sum_dtype(node, dtype, name)))


def sum(x: Array, /, *, axis: Axes = None, dtype: DType | None = None, keepdims: bool = False) -> Array:
    """Calculates the sum of the input array x.

    Parameters
    ----------
    x : Array
        Input array; should have a numeric data type.
    axis : int | tuple of ints | None
        Axis or axes along which to sum (negative counts from the last); None
        sums the entire array. Default: None.
    dtype : DType | None
        Data type of the result, in which the sum accumulates; None: x's dtype,
        except that bool and signed integers take the default integer dtype and
        unsigned integers uint64. Default: None.
    keepdims : bool
        Whether to keep the reduced axes as singleton dimensions. Default: False.

    Returns
    -------
    out : Array
        The sums (0-d for a sum over the entire array), of the dtype above.

    Raises
    ------
    TypeError
        x not an array, an unsupported dtype, or a real dtype for complex x.
    ValueError
        An axis out of bounds, or a repeated axis.
    """
    return _sum_like("sum", x, axis, dtype, keepdims)


def prod(x: Array, /, *, axis: Axes = None, dtype: DType | None = None, keepdims: bool = False) -> Array:
    """Calculates the product of input array x elements.

    Parameters
    ----------
    x : Array
        Input array; should have a numeric data type.
    axis : int | tuple of ints | None
        Axis or axes along which to multiply (negative counts from the last);
        None multiplies the entire array. Default: None.
    dtype : DType | None
        Data type of the result, in which the product accumulates; None: x's
        dtype, except that bool and signed integers take the default integer
        dtype and unsigned integers uint64. Default: None.
    keepdims : bool
        Whether to keep the reduced axes as singleton dimensions. Default: False.

    Returns
    -------
    out : Array
        The products (0-d for a product over the entire array), of the dtype above.

    Raises
    ------
    TypeError
        x not an array, an unsupported dtype, or a real dtype for complex x.
    ValueError
        An axis out of bounds, or a repeated axis.
    """
    return _sum_like("prod", x, axis, dtype, keepdims)


def _extremum(name, x, axis, keepdims):
    node, out = reduce(name, x, axis, keepdims)
    axes = out.attrs[0]
    if any(node.shape[a] == 0 for a in axes):
        raise ValueError(f"{name}: zero-size reduction over axes {axes} of an array of shape {node.shape} has no identity")
    return wrap(out)


def max(x: Array, /, *, axis: Axes = None, keepdims: bool = False) -> Array:
    """Calculates the maximum value of the input array x.

    Parameters
    ----------
    x : Array
        Input array; should have a real-valued data type.
    axis : int | tuple of ints | None
        Axis or axes along which to compute maximum values (negative counts from
        the last); None: over the entire array. Default: None.
    keepdims : bool
        Whether to keep the reduced axes as singleton dimensions. Default: False.

    Returns
    -------
    out : Array
        The maximum values (NaN where any element is NaN; 0-d over the entire
        array), of x's dtype.

    Raises
    ------
    TypeError
        x not an array, or of a complex or bool dtype.
    ValueError
        A reduction over zero elements, an axis out of bounds, or a repeated axis.
    """
    return _extremum("max", x, axis, keepdims)


def min(x: Array, /, *, axis: Axes = None, keepdims: bool = False) -> Array:
    """Calculates the minimum value of the input array x.

    Parameters
    ----------
    x : Array
        Input array; should have a real-valued data type.
    axis : int | tuple of ints | None
        Axis or axes along which to compute minimum values (negative counts from
        the last); None: over the entire array. Default: None.
    keepdims : bool
        Whether to keep the reduced axes as singleton dimensions. Default: False.

    Returns
    -------
    out : Array
        The minimum values (NaN where any element is NaN; 0-d over the entire
        array), of x's dtype.

    Raises
    ------
    TypeError
        x not an array, or of a complex or bool dtype.
    ValueError
        A reduction over zero elements, an axis out of bounds, or a repeated axis.
    """
    return _extremum("min", x, axis, keepdims)


def _mean_node(node, axes, keepdims, name):
    """The mean of `node` (already in its accumulator dtype) over `axes`."""
    total = make(P["sum"], (node,), (axes, keepdims))
    count = scalar_node(_count(node, axes), dt.real_dtype(node.dtype), node.device, name)
    return make(P["divide"], (total, astype_node(count, node.dtype)))


@composite
def mean(x: Array, /, *, axis: Axes = None, keepdims: bool = False) -> Array:
    """Calculates the arithmetic mean of the input array x.

    Parameters
    ----------
    x : Array
        Input array; should have a floating-point data type; an integer or bool
        array is computed in the default floating dtype.
    axis : int | tuple of ints | None
        Axis or axes along which to compute means (negative counts from the
        last); None: over the entire array. Default: None.
    keepdims : bool
        Whether to keep the reduced axes as singleton dimensions. Default: False.

    Returns
    -------
    out : Array
        The arithmetic means (NaN over zero elements; 0-d over the entire
        array), of x's dtype (the default floating dtype for integer and bool x).

    Raises
    ------
    TypeError
        x not an array.
    ValueError
        An axis out of bounds, or a repeated axis.
    """
    # Every dtype is floating, integer or bool: the first is the standard's, the others are computed as floating.
    node = floating_argument(node_of(x, "mean"), "floating")
    axes = normalize_axes(axis, len(node.shape), "mean")
    wide = astype_node(node, dt.accumulator(node.dtype))
    return wrap(astype_node(_mean_node(wide, axes, bool(keepdims), "mean"), node.dtype))


def _var_node(x, axis, correction, keepdims, name):
    """The variance of x in x's accumulator dtype, and x's dtype (the result's)."""
    node = floating_argument(node_of(x, name), "real floating")
    check_dtype(node, "real floating", name)  # the standard's var and std: narrower than their primitives'
    if type(correction) not in (int, float) or correction < 0:
        raise ValueError(f"{name}: correction must be a non-negative int or float, got {correction!r}")
    axes = normalize_axes(axis, len(node.shape), name)
    wide = astype_node(node, dt.accumulator(node.dtype))
    centered = make(P["subtract"], (wide, _mean_node(wide, axes, True, name)))
    squares = make(P["multiply"], (centered, centered))
    total = make(P["sum"], (squares,), (axes, bool(keepdims)))
    dof = _count(node, axes) - correction
    # The standard: NaN where N - correction <= 0 (NumPy divides by max(dof, 0), giving inf).
    denominator = scalar_node(float(dof) if dof > 0 else math.nan, wide.dtype, node.device, name)
    return make(P["divide"], (total, denominator)), node.dtype


@composite
def var(x: Array, /, *, axis: Axes = None, correction: int | float = 0.0, keepdims: bool = False) -> Array:
    """Calculates the variance of the input array x.

    Parameters
    ----------
    x : Array
        Input array; should have a real-valued floating-point data type; an
        integer or bool array is computed in the default floating dtype.
    axis : int | tuple of ints | None
        Axis or axes along which to compute variances (negative counts from the
        last); None: over the entire array. Default: None.
    correction : int | float
        Degrees of freedom adjustment: the divisor is N - correction for N
        elements (0: the population variance, 1: Bessel's correction). Default: 0.
    keepdims : bool
        Whether to keep the reduced axes as singleton dimensions. Default: False.

    Returns
    -------
    out : Array
        The variances (NaN where N - correction <= 0; 0-d over the entire
        array), of x's dtype (the default floating dtype for integer and bool x).

    Raises
    ------
    TypeError
        x not an array, or of a complex dtype.
    ValueError
        A negative correction, an axis out of bounds, or a repeated axis.
    """
    variance, dtype = _var_node(x, axis, correction, keepdims, "var")
    return wrap(astype_node(variance, dtype))


@composite
def std(x: Array, /, *, axis: Axes = None, correction: int | float = 0.0, keepdims: bool = False) -> Array:
    """Calculates the standard deviation of the input array x.

    Parameters
    ----------
    x : Array
        Input array; should have a real-valued floating-point data type; an
        integer or bool array is computed in the default floating dtype.
    axis : int | tuple of ints | None
        Axis or axes along which to compute standard deviations (negative counts
        from the last); None: over the entire array. Default: None.
    correction : int | float
        Degrees of freedom adjustment: the divisor is N - correction for N
        elements (0: the population value, 1: Bessel's correction). Default: 0.
    keepdims : bool
        Whether to keep the reduced axes as singleton dimensions. Default: False.

    Returns
    -------
    out : Array
        The standard deviations (NaN where N - correction <= 0; 0-d over the
        entire array), of x's dtype (the default floating dtype for integer and bool x).

    Raises
    ------
    TypeError
        x not an array, or of a complex dtype.
    ValueError
        A negative correction, an axis out of bounds, or a repeated axis.
    """
    variance, dtype = _var_node(x, axis, correction, keepdims, "std")
    return wrap(astype_node(make(P["sqrt"], (variance,)), dtype))


def _cumulative(name, x, axis, dtype, include_initial):
    # Every dtype is accepted: bool accumulates in the default integer dtype, as in NumPy.
    node = node_of(x, name)
    ndim = len(node.shape)
    if axis is None:
        if ndim > 1:
            raise ValueError(f"{name}: axis is required for an array of {ndim} dimensions")
        axis = 0
    if ndim == 0:
        raise ValueError(f"{name}: x must have at least one dimension")
    axis = normalize_axis(axis, ndim, name)
    out = accumulate(P[name], node, (axis,), sum_dtype(node, dtype, name))
    if include_initial:
        pads = tuple((1, 0) if i == axis else (0, 0) for i in range(ndim))
        identity = 0 if name == "cumulative_sum" else 1
        out = pad_node(out, pads, identity)
    return wrap(out)


@composite
def cumulative_sum(x: Array, /, *, axis: int | None = None, dtype: DType | None = None,
                   include_initial: bool = False) -> Array:
    """Calculates the cumulative sum of elements in the input array x.

    Parameters
    ----------
    x : Array
        Input array, with one or more dimensions; should have a numeric data type.
    axis : int | None
        Axis along which to sum (negative counts from the last); None is allowed
        for one-dimensional x only. Default: None.
    dtype : DType | None
        Data type of the result, in which the sums accumulate; None: as for sum.
    include_initial : bool
        Whether to begin with the initial value zero, making axis one longer.
        Default: False.

    Returns
    -------
    out : Array
        The cumulative sums, of the dtype above.

    Raises
    ------
    TypeError
        x not an array, an unsupported dtype, or a real dtype for complex x.
    ValueError
        A 0-d x, axis None for x of several dimensions, or an axis out of bounds.
    """
    return _cumulative("cumulative_sum", x, axis, dtype, include_initial)


@composite
def cumulative_prod(x: Array, /, *, axis: int | None = None, dtype: DType | None = None,
                    include_initial: bool = False) -> Array:
    """Calculates the cumulative product of elements in the input array x.

    Parameters
    ----------
    x : Array
        Input array, with one or more dimensions; should have a numeric data type.
    axis : int | None
        Axis along which to multiply (negative counts from the last); None is
        allowed for one-dimensional x only. Default: None.
    dtype : DType | None
        Data type of the result, in which the products accumulate; None: as for prod.
    include_initial : bool
        Whether to begin with the initial value one, making axis one longer.
        Default: False.

    Returns
    -------
    out : Array
        The cumulative products, of the dtype above.

    Raises
    ------
    TypeError
        x not an array, an unsupported dtype, or a real dtype for complex x.
    ValueError
        A 0-d x, axis None for x of several dimensions, or an axis out of bounds.
    """
    return _cumulative("cumulative_prod", x, axis, dtype, include_initial)


__all__ = ["cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "std", "sum", "var"]
