"""Creation functions of the array API standard.

Constant arrays are `full` leaves and index grids are `iota` leaves: nothing is
allocated until the graph runs. Host data (lists, NumPy arrays, DLPack
producers) becomes a realized buffer node; it is copied unless `copy=False`,
because a lazily evaluated graph that aliased a mutable user buffer would read
whatever the buffer holds at evaluation time.
"""

import math
from typing import Any

import numpy as np

from .. import dtypes as dt, executors
from ..graph.node import Node
from ..graph.primitives import BUFFER
from ..scheduler.schedule import realize
from .array_object import Array
from .build import (P, astype_node, broadcast_node, buffer_node, check_device, check_size, composite, full_node,
                    integer_argument, is_scalar, leaf, make, node_of, normalize_shape, reshape_node, scalar_node, wrap)
from .hints import DType, DeviceLike, Scalar, Shape
from .traced_scalar import TracedScalar


def check_dtype_arg(dtype, name, allow_none=True):
    """A `dtype=` argument as one of arrayx's dtypes (None passes through)."""
    if dtype is None and allow_none:
        return None
    if isinstance(dtype, dt.DType):
        return dtype
    # NumPy dtypes and scalar types are accepted too (np.float32, np.dtype("int8")).
    try:
        d = dt.from_numpy(np.dtype(dtype)) if dtype is not None else None
    except (TypeError, ValueError):
        # np.dtype raises ValueError for objects with a non-NumPy `.dtype`, such as an arrayx array.
        d = None
    if d is None:
        raise TypeError(f"{name}: unsupported dtype {dtype!r}; expected one of {[str(x) for x in dt.ALL]}")
    return d


def _native(host, name, copy=None):
    """`host` with one of arrayx's dtypes in native byte order."""
    d = host.dtype
    if d not in dt.FROM_NUMPY:
        if d.kind in "biufc" and not d.isnative and d.newbyteorder("=") in dt.FROM_NUMPY:
            if copy is False:
                raise ValueError(f"{name}: copy=False but byte-swapping {d} to native order needs a copy")
            return host.astype(d.newbyteorder("="))
        raise TypeError(f"{name}: unsupported dtype {d}; expected one of {[str(x) for x in dt.ALL]}")
    return host


def asarray(obj: Any, /, *, dtype: DType | None = None, device: DeviceLike | None = None,
            copy: bool | None = None) -> Array:
    """Convert the input to an array.

    Parameters
    ----------
    obj : Array | bool | int | float | complex | nested sequence | buffer
        Object to be converted: an array, a Python scalar, a (possibly nested)
        sequence of scalars, or an object supporting the buffer or array protocol.
    dtype : DType | None
        Output array data type; None infers it from obj (Python scalars take
        the default dtype of their kind).
    device : Device | str | None
        Device to place the array on, or its name; None: obj's device for an
        array, else the default device. Moving an array computes it.
    copy : bool | None
        True always copies; False never copies; None (default) reuses an arrayx
        array and copies NumPy and other host buffers (the graph, computed
        later, must not see later writes to them).

    Returns
    -------
    out : Array
        An array containing the data from obj.

    Raises
    ------
    TypeError
        An unsupported dtype, non-numeric data, or a complex scalar for a real dtype.
    ValueError
        copy=False where a copy is needed, ragged data, or an unknown device.
    OverflowError
        A Python int out of the range of the dtype.
    """
    dtype = check_dtype_arg(dtype, "asarray")
    if isinstance(obj, Array):
        node = obj._node
        if device is not None and check_device(device, "asarray") != node.device:
            if copy is False:
                raise ValueError("asarray: copy=False but moving the array to another device needs a copy")
            obj = to_device(obj, device)
            node = obj._node
        if dtype is not None and dtype != node.dtype:
            if copy is False:
                raise ValueError(f"asarray: copy=False but casting {node.dtype} to {dtype} needs a copy")
            return wrap(astype_node(node, dtype))
        return Array._new(node) if copy else obj
    if isinstance(obj, TracedScalar):   # a Python scalar argument inside a jit trace: its placeholder
        if copy is False:
            raise ValueError("asarray: copy=False is not possible for a Python scalar")
        d = dtype or obj.alone
        if obj.kind is complex and d not in dt.COMPLEX:
            raise TypeError(f"asarray: cannot convert {obj.subject}, a complex scalar, to {d}")
        return wrap(obj.node_as(d))
    device = check_device(device, "asarray")
    if is_scalar(obj):
        if copy is False:
            raise ValueError("asarray: copy=False is not possible for a Python scalar")
        d = dtype or dt.default_scalar_dtype(obj)
        if type(obj) is complex and d not in dt.COMPLEX:
            raise TypeError(f"asarray: cannot convert the complex scalar {obj} to {d}")
        # Data entering from the host: evaluated at once, as asarray of a list
        # is (indexing with it is then a view, see indexing._known_integers).
        node = scalar_node(obj, d, device, "asarray")
        realize([node])
        return Array._new(node)
    if copy is False:
        try:
            # NumPy raises ValueError where it cannot share memory (a nested list, say).
            host = np.asarray(obj, copy=False)
        except ValueError:
            raise ValueError(f"asarray: copy=False but converting {type(obj).__name__} needs a copy") from None
        if dtype is not None and host.dtype != dtype.dtype:
            raise ValueError(f"asarray: copy=False but converting {host.dtype} to {dtype} needs a copy")
        return Array._new(buffer_node(_native(host, "asarray", copy=False), device, copy=False))
    fresh = not isinstance(obj, np.ndarray) and not hasattr(obj, "__array__")
    try:
        with np.errstate(over="ignore"):
            host = np.asarray(obj, dtype=dtype)
    except (ValueError, OverflowError) as e:
        raise type(e)(f"asarray: cannot convert {type(obj).__name__} to an array: {e}") from None
    if host.dtype == object:
        raise TypeError(f"asarray: cannot convert {type(obj).__name__} to an array of numbers")
    # A fresh array (of a list, say) may be shared: nobody else holds it.
    return Array._new(buffer_node(_native(host, "asarray"), device, copy=None if fresh else True))


def _fill_dtype(value, name):
    if not is_scalar(value):
        raise TypeError(f"{name}: fill_value must be a Python bool, int, float or complex, got {type(value).__name__}")
    return dt.default_scalar_dtype(value)


def _full(shape, value, dtype, device, name):
    check_size(shape, dtype, name)
    if type(value) is complex and dtype not in dt.COMPLEX:
        raise TypeError(f"{name}: cannot fill a {dtype} array with the complex value {value}")
    if type(value) is int and dtype in dt.INT_BOUNDS:
        lo, hi = dt.INT_BOUNDS[dtype]
        if not lo <= value <= hi:
            raise OverflowError(f"{name}: fill value {value} is out of bounds for {dtype}")
    return wrap(full_node(shape, value, dtype, device))


def full(shape: Shape, fill_value: Scalar, *, dtype: DType | None = None, device: DeviceLike | None = None) -> Array:
    """Returns a new array having a specified shape and filled with fill_value.

    Parameters
    ----------
    shape : int | tuple of ints
        Output array shape.
    fill_value : bool | int | float | complex
        Fill value.
    dtype : DType | None
        Output array data type; None infers it from fill_value (the default
        dtype of its kind, bool for a bool).
    device : Device | str | None
        Device to place the array on, or its name; None: the default device.

    Returns
    -------
    out : Array
        An array where every element is equal to fill_value.

    Raises
    ------
    TypeError
        A fill_value that is not a Python scalar, or complex for a real dtype.
    ValueError
        A negative dimension, a shape too large to address, or an unknown device.
    OverflowError
        An int fill_value out of the range of an integer dtype.
    """
    shape = normalize_shape(shape, "full")
    dtype = check_dtype_arg(dtype, "full") or _fill_dtype(fill_value, "full")
    _fill_dtype(fill_value, "full")
    return _full(shape, fill_value, dtype, check_device(device, "full"), "full")


def zeros(shape: Shape, *, dtype: DType | None = None, device: DeviceLike | None = None) -> Array:
    """Returns a new array having a specified shape and filled with zeros.

    Parameters
    ----------
    shape : int | tuple of ints
        Output array shape.
    dtype : DType | None
        Output array data type; None: the default real floating-point dtype.
    device : Device | str | None
        Device to place the array on, or its name; None: the default device.

    Returns
    -------
    out : Array
        An array containing zeros.

    Raises
    ------
    TypeError
        A shape that is not an int or a sequence of ints, or an unsupported dtype.
    ValueError
        A negative dimension, a shape too large to address, or an unknown device.
    """
    shape = normalize_shape(shape, "zeros")
    dtype = check_dtype_arg(dtype, "zeros") or dt.DEFAULT_FLOAT
    return _full(shape, 0, dtype, check_device(device, "zeros"), "zeros")


def ones(shape: Shape, *, dtype: DType | None = None, device: DeviceLike | None = None) -> Array:
    """Returns a new array having a specified shape and filled with ones.

    Parameters
    ----------
    shape : int | tuple of ints
        Output array shape.
    dtype : DType | None
        Output array data type; None: the default real floating-point dtype.
    device : Device | str | None
        Device to place the array on, or its name; None: the default device.

    Returns
    -------
    out : Array
        An array containing ones.

    Raises
    ------
    TypeError
        A shape that is not an int or a sequence of ints, or an unsupported dtype.
    ValueError
        A negative dimension, a shape too large to address, or an unknown device.
    """
    shape = normalize_shape(shape, "ones")
    dtype = check_dtype_arg(dtype, "ones") or dt.DEFAULT_FLOAT
    return _full(shape, 1, dtype, check_device(device, "ones"), "ones")


def empty(shape: Shape, *, dtype: DType | None = None, device: DeviceLike | None = None) -> Array:
    """Returns an uninitialized array having a specified shape.

    Parameters
    ----------
    shape : int | tuple of ints
        Output array shape.
    dtype : DType | None
        Output array data type; None: the default real floating-point dtype.
    device : Device | str | None
        Device to place the array on, or its name; None: the default device.

    Returns
    -------
    out : Array
        An array of that shape; arrayx fills it with zeros (nothing is
        allocated until it is computed).

    Raises
    ------
    TypeError
        A shape that is not an int or a sequence of ints, or an unsupported dtype.
    ValueError
        A negative dimension, a shape too large to address, or an unknown device.
    """
    shape = normalize_shape(shape, "empty")
    dtype = check_dtype_arg(dtype, "empty") or dt.DEFAULT_FLOAT
    return _full(shape, 0, dtype, check_device(device, "empty"), "empty")


def _like(x, dtype, device, name):
    node = node_of(x, name)
    dtype = check_dtype_arg(dtype, name) or node.dtype
    device = node.device if device is None else check_device(device, name)
    return node.shape, dtype, device


def full_like(x: Array, /, fill_value: Scalar, *, dtype: DType | None = None, device: DeviceLike | None = None) -> Array:
    """Returns a new array filled with fill_value and having the same shape as an input array x.

    Parameters
    ----------
    x : Array
        Input array from which to derive the output array shape.
    fill_value : bool | int | float | complex
        Fill value.
    dtype : DType | None
        Output array data type; None: x's dtype.
    device : Device | str | None
        Device to place the array on, or its name; None: x's device.

    Returns
    -------
    out : Array
        An array having the same shape as x and where every element is equal to fill_value.

    Raises
    ------
    TypeError
        x not an array, a fill_value that is not a Python scalar, or complex for a real dtype.
    ValueError
        An unknown device.
    OverflowError
        An int fill_value out of the range of an integer dtype.
    """
    _fill_dtype(fill_value, "full_like")
    shape, dtype, device = _like(x, dtype, device, "full_like")
    return _full(shape, fill_value, dtype, device, "full_like")


def zeros_like(x: Array, /, *, dtype: DType | None = None, device: DeviceLike | None = None) -> Array:
    """Returns a new array filled with zeros and having the same shape as an input array x.

    Parameters
    ----------
    x : Array
        Input array from which to derive the output array shape.
    dtype : DType | None
        Output array data type; None: x's dtype.
    device : Device | str | None
        Device to place the array on, or its name; None: x's device.

    Returns
    -------
    out : Array
        An array having the same shape as x and filled with zeros.

    Raises
    ------
    TypeError
        x not an array, or an unsupported dtype.
    ValueError
        An unknown device.
    """
    return _full(*_with_value(_like(x, dtype, device, "zeros_like"), 0), "zeros_like")


def ones_like(x: Array, /, *, dtype: DType | None = None, device: DeviceLike | None = None) -> Array:
    """Returns a new array filled with ones and having the same shape as an input array x.

    Parameters
    ----------
    x : Array
        Input array from which to derive the output array shape.
    dtype : DType | None
        Output array data type; None: x's dtype.
    device : Device | str | None
        Device to place the array on, or its name; None: x's device.

    Returns
    -------
    out : Array
        An array having the same shape as x and filled with ones.

    Raises
    ------
    TypeError
        x not an array, or an unsupported dtype.
    ValueError
        An unknown device.
    """
    return _full(*_with_value(_like(x, dtype, device, "ones_like"), 1), "ones_like")


def empty_like(x: Array, /, *, dtype: DType | None = None, device: DeviceLike | None = None) -> Array:
    """Returns an uninitialized array with the same shape as an input array x.

    Parameters
    ----------
    x : Array
        Input array from which to derive the output array shape.
    dtype : DType | None
        Output array data type; None: x's dtype.
    device : Device | str | None
        Device to place the array on, or its name; None: x's device.

    Returns
    -------
    out : Array
        An array having the same shape as x; arrayx fills it with zeros.

    Raises
    ------
    TypeError
        x not an array, or an unsupported dtype.
    ValueError
        An unknown device.
    """
    return _full(*_with_value(_like(x, dtype, device, "empty_like"), 0), "empty_like")


def _with_value(like, value):
    shape, dtype, device = like
    return shape, value, dtype, device


def iota(shape, axis, dtype, device):
    """An index grid: element [i0, i1, ...] holds i_axis."""
    return leaf(P["iota"], shape, dtype, (axis,), device)


def _affine(node, scale, offset, name):
    """node * scale + offset, skipping the identity steps."""
    if scale != 1:
        node = make(P["multiply"], (node, scalar_node(scale, node.dtype, node.device, name)))
    if offset != 0:
        node = make(P["add"], (node, scalar_node(offset, node.dtype, node.device, name)))
    return node


@composite
def arange(start: int | float, /, stop: int | float | None = None, step: int | float = 1, *,
           dtype: DType | None = None, device: DeviceLike | None = None) -> Array:
    """Returns evenly spaced values within the half-open interval [start, stop) as a one-dimensional array.

    Parameters
    ----------
    start : int | float
        The start of the interval (inclusive) if stop is given; otherwise the
        end of the interval (exclusive), starting at 0.
    stop : int | float | None
        The end of the interval (exclusive). Default: None.
    step : int | float
        The distance between two adjacent elements; must not be 0. Default: 1.
    dtype : DType | None
        Output array data type; None: the default integer dtype if start, stop
        and step are all ints, else the default real floating-point dtype.
    device : Device | str | None
        Device to place the array on, or its name; None: the default device.

    Returns
    -------
    out : Array
        A one-dimensional array of ceil((stop - start) / step) values (none if
        that is not positive).

    Raises
    ------
    TypeError
        start, stop or step not an int or a float, or an unsupported dtype.
    ValueError
        A zero step, a non-finite number of values, or an unknown device.
    """
    for argname, v in (("start", start), ("stop", stop), ("step", step)):
        if v is not None and type(v) not in (int, float):
            raise TypeError(f"arange: {argname} must be an int or a float, got {type(v).__name__}")
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be zero")
    floats = any(type(v) is float for v in (start, stop, step))
    dtype = check_dtype_arg(dtype, "arange") or (dt.DEFAULT_FLOAT if floats else dt.DEFAULT_INT)
    if floats:
        count = (stop - start) / step
        if not math.isfinite(count):
            raise ValueError(f"arange: start {start}, stop {stop} and step {step} give {count} elements")
        n = max(math.ceil(count), 0)
    else:
        n = max(-((start - stop) // step), 0)  # ceil((stop - start) / step), exact for any int
    check_size((n,), dtype, "arange")
    device = check_device(device, "arange")
    if step < 0 and dtype in dt.UNSIGNED:
        # An unsigned dtype cannot hold the negative step: count down from start instead.
        index = iota((n,), 0, dtype, device)
        return wrap(make(P["subtract"], (scalar_node(start, dtype, device, "arange"),
                                         _affine(index, -step, 0, "arange"))))
    # float16 values are computed in float32 and rounded once (its indices stop at 2048).
    index = iota((n,), 0, dt.accumulator(dtype), device)
    return wrap(astype_node(_affine(index, step, start, "arange"), dtype))


@composite
def linspace(start: int | float | complex, stop: int | float | complex, /, num: int, *, dtype: DType | None = None,
             device: DeviceLike | None = None, endpoint: bool = True) -> Array:
    """Returns evenly spaced numbers over a specified interval.

    Parameters
    ----------
    start : int | float | complex
        The start of the interval.
    stop : int | float | complex
        The end of the interval.
    num : int
        Number of samples; a non-negative integer.
    dtype : DType | None
        Output array data type, a floating-point dtype; None: the default
        complex floating-point dtype if start or stop is complex, else the
        default real floating-point dtype.
    device : Device | str | None
        Device to place the array on, or its name; None: the default device.
    endpoint : bool
        Whether to include stop: True gives the closed interval [start, stop],
        False the half-open [start, stop). Default: True.

    Returns
    -------
    out : Array
        A one-dimensional array of num evenly spaced values.

    Raises
    ------
    TypeError
        start or stop not a number, num not an integer, a non-floating dtype,
        or a real dtype for a complex start or stop.
    ValueError
        A negative num, or an unknown device.
    """
    for argname, v in (("start", start), ("stop", stop)):
        if not is_scalar(v) or type(v) is bool:
            raise TypeError(f"linspace: {argname} must be an int, float or complex, got {type(v).__name__}")
    num = integer_argument(num, "linspace", "num")
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    is_complex = type(start) is complex or type(stop) is complex
    dtype = check_dtype_arg(dtype, "linspace") or (dt.DEFAULT_COMPLEX if is_complex else dt.DEFAULT_FLOAT)
    if dtype not in dt.CATEGORIES["floating"]:
        raise TypeError(f"linspace: dtype must be a floating dtype, got {dtype}")
    if is_complex and dtype not in dt.COMPLEX:
        raise TypeError(f"linspace: complex start or stop needs a complex dtype, got {dtype}")
    check_size((num,), dtype, "linspace")
    device = check_device(device, "linspace")
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0
    # float16 values are computed in float32 and rounded once (its indices stop at 2048).
    wide = dt.accumulator(dtype)
    index = iota((num,), 0, wide, device)
    node = _affine(index, step, start, "linspace")
    if endpoint and num > 1:
        last = make(P["equal"], (index, scalar_node(num - 1, wide, device, "linspace")))
        node = make(P["where"], (last, scalar_node(stop, wide, device, "linspace"), node))
    return wrap(astype_node(node, dtype))


@composite
def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: DType | None = None, device: DeviceLike | None = None) -> Array:
    """Returns a two-dimensional array with ones on the k-th diagonal and zeros elsewhere.

    Parameters
    ----------
    n_rows : int
        Number of rows in the output array.
    n_cols : int | None
        Number of columns in the output array; None: n_rows.
    k : int
        Index of the diagonal: positive above the main diagonal, negative below
        it, 0 the main diagonal. Default: 0.
    dtype : DType | None
        Output array data type; None: the default real floating-point dtype.
    device : Device | str | None
        Device to place the array on, or its name; None: the default device.

    Returns
    -------
    out : Array
        An array of shape (n_rows, n_cols) whose elements are zero, except for
        the k-th diagonal, whose values are one.

    Raises
    ------
    TypeError
        n_rows, n_cols or k not an integer, or an unsupported dtype.
    ValueError
        A negative size, or an unknown device.
    """
    n_rows = integer_argument(n_rows, "eye", "n_rows")
    n_cols = n_rows if n_cols is None else integer_argument(n_cols, "eye", "n_cols")
    k = integer_argument(k, "eye", "k")
    dtype = check_dtype_arg(dtype, "eye") or dt.DEFAULT_FLOAT
    device = check_device(device, "eye")
    shape = normalize_shape((n_rows, n_cols), "eye")
    check_size(shape, dtype, "eye")
    return wrap(astype_node(_diagonal_mask(shape, k, "equal", device, "eye"), dtype))


def _diagonal_mask(shape, k, compare, device, name):
    """Boolean mask over the last two axes of `shape`: (col - row) `compare` k."""
    rows, cols = shape[-2:]
    # Diagonals beyond the matrix select all or nothing; clamping keeps k within int64.
    k = min(max(k, -rows - 1), cols + 1)
    row_index = iota(shape[-2:], 0, dt.int64, device)
    col_index = iota(shape[-2:], 1, dt.int64, device)
    offset = make(P["subtract"], (col_index, row_index))
    return make(P[compare], (offset, scalar_node(k, dt.int64, device, name)))


def _triangle(x, k, compare, name):
    node = node_of(x, name)
    if len(node.shape) < 2:
        raise ValueError(f"{name}: x must have at least 2 dimensions, got shape {node.shape}")
    mask = _diagonal_mask(node.shape, integer_argument(k, name, "k"), compare, node.device, name)
    zero = scalar_node(0, node.dtype, node.device, name)
    return wrap(make(P["where"], (mask, node, zero)))


@composite
def tril(x: Array, /, *, k: int = 0) -> Array:
    """Returns the lower triangular part of a matrix (or a stack of matrices) x.

    Parameters
    ----------
    x : Array
        Input array of shape (..., M, N): a stack of M x N matrices.
    k : int
        Diagonal above which to zero elements: 0 the main diagonal, k < 0 below
        it, k > 0 above it. Default: 0.

    Returns
    -------
    out : Array
        An array of the shape and dtype of x, with the elements above the k-th
        diagonal zeroed.

    Raises
    ------
    TypeError
        x not an array, or k not an integer.
    ValueError
        x with fewer than two dimensions.
    """
    return _triangle(x, k, "less_equal", "tril")


@composite
def triu(x: Array, /, *, k: int = 0) -> Array:
    """Returns the upper triangular part of a matrix (or a stack of matrices) x.

    Parameters
    ----------
    x : Array
        Input array of shape (..., M, N): a stack of M x N matrices.
    k : int
        Diagonal below which to zero elements: 0 the main diagonal, k < 0 below
        it, k > 0 above it. Default: 0.

    Returns
    -------
    out : Array
        An array of the shape and dtype of x, with the elements below the k-th
        diagonal zeroed.

    Raises
    ------
    TypeError
        x not an array, or k not an integer.
    ValueError
        x with fewer than two dimensions.
    """
    return _triangle(x, k, "greater_equal", "triu")


@composite
def meshgrid(*arrays: Array, indexing: str = "xy") -> tuple[Array, ...]:
    """Returns coordinate matrices from coordinate vectors.

    Parameters
    ----------
    *arrays : Array
        An arbitrary number of one-dimensional arrays of grid coordinates,
        all of the same data type.
    indexing : str
        Cartesian 'xy' or matrix 'ij' indexing of the output; it has no effect
        for fewer than two arrays. Default: 'xy'.

    Returns
    -------
    out : tuple of Array
        One array per input, each with as many dimensions as there are inputs:
        of shape (N1, N2, N3, ...) for 'ij' and (N2, N1, N3, ...) for 'xy',
        where Ni is the length of the i-th input; the inputs' data type.

    Raises
    ------
    TypeError
        An argument that is not an array, or arrays of different dtypes.
    ValueError
        An array that is not one-dimensional, or indexing other than 'xy' or 'ij'.
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    nodes = [node_of(a, "meshgrid", f"arrays[{i}]") for i, a in enumerate(arrays)]
    for i, n in enumerate(nodes):
        if len(n.shape) != 1:
            raise ValueError(f"meshgrid: arrays[{i}] must be one-dimensional, got shape {n.shape}")
        if n.dtype != nodes[0].dtype:
            raise TypeError(f"meshgrid: all arrays must have one dtype, got {nodes[0].dtype} and {n.dtype}")
    shape = [n.shape[0] for n in nodes]
    if indexing == "xy" and len(nodes) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    shape = tuple(shape)
    if nodes:
        check_size(shape, nodes[0].dtype, "meshgrid")
    out = []
    for i, n in enumerate(nodes):
        axis = i
        if indexing == "xy" and len(nodes) > 1 and i < 2:
            axis = 1 - i
        view = [1] * len(nodes)
        view[axis] = n.shape[0]
        out.append(wrap(broadcast_node(reshape_node(n, tuple(view)), shape)))
    return tuple(out)


def from_dlpack(x: Any, /, *, device: DeviceLike | None = None, copy: bool | None = None) -> Array:
    """Returns a new array containing the data from another (array) object with a __dlpack__ method.

    Parameters
    ----------
    x : object
        Input (array) object implementing __dlpack__ (and __dlpack_device__).
    device : Device | str | None
        Device to place the array on, or its name; None: x's device.
    copy : bool | None
        True always copies; False never copies; None (default) shares x's
        memory where possible and copies otherwise.

    Returns
    -------
    out : Array
        An array containing the data in x (realized: nothing is recorded).

    Raises
    ------
    TypeError
        x without a __dlpack__ method, or of a dtype arrayx does not have.
    BufferError
        x on a device that no arrayx executor holds.
    ValueError
        copy=False but a copy (a transfer to another device) is needed.
    """
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: x must implement __dlpack__, got {type(x).__name__}")
    if isinstance(x, Array):
        # An arrayx array is on its own device, which its DLPack device may
        # not name (a dask array exports a host copy of its computed values).
        source = x.device
    else:
        kind, ordinal = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else (1, 0)
        source = executors.device_of_dlpack(kind, ordinal)
        if source is None:
            raise BufferError(f"from_dlpack: x is on DLPack device ({kind}, {ordinal}), which no arrayx executor "
                              f"holds; devices: {[d.name for d in executors.devices()]}")
    target = source if device is None else check_device(device, "from_dlpack")
    if target != source and copy is False:
        raise ValueError(f"from_dlpack: copy=False but x is on {source.name} and device={target.name} "
                         "needs a copy")
    if isinstance(x, Array):
        # Its node as asarray takes it: shared (arrayx mutation rebinds, it
        # never writes where another array sees it), without computing it.
        return asarray(x, device=target, copy=copy)
    try:
        buf, shape, dtype = executors.executor_for(source).from_dlpack(x, copy)
    except BufferError:
        raise
    except (TypeError, ValueError) as e:
        message = str(e)
        raise type(e)(message if message.startswith("from_dlpack") else f"from_dlpack: {message}") from None
    node = Node(BUFFER, (), (), shape, dtype, source, buf)
    return to_device(Array._new(node), target) if target != source else Array._new(node)


def to_device(x, device, stream=None):
    """x on `device`: the same values, moved by the executors (a force point)."""
    node = node_of(x, "to_device")
    target = check_device(device, "to_device")
    if target == node.device:
        return Array._new(node)
    realize([node])
    buf = executors.executor_for(node.device).transfer(node.buffer, executors.executor_for(target))
    return Array._new(Node(BUFFER, (), (), node.shape, node.dtype, target, buf))
