"""Data type functions of the array API standard."""

import functools
from dataclasses import dataclass

import numpy as np

from .. import dtypes as dt
from .array_object import Array
from .build import astype_node, check_device, is_scalar, node_of, wrap
from .creation import check_dtype_arg, to_device
from .hints import DType, DeviceLike, Scalar


def astype(x: Array, dtype: DType, /, *, copy: bool = True, device: DeviceLike | None = None) -> Array:
    """Copies an array to a specified data type irrespective of type promotion rules.

    Parameters
    ----------
    x : Array
        Array to cast.
    dtype : DType
        Desired data type.
    copy : bool
        Whether to return a new array when dtype is x's dtype; False then
        returns x itself. Default: True.
    device : Device | str | None
        Device to place the returned array on, or its name; None: x's device.
        Moving an array computes it.

    Returns
    -------
    out : Array
        An array of the shape of x with the specified data type.

    Raises
    ------
    TypeError
        x not an array, an unsupported dtype, or a complex x cast to a real
        dtype (take real or abs first; the standard does not permit it).
    ValueError
        An unknown device.
    """
    node = node_of(x, "astype")
    dtype = check_dtype_arg(dtype, "astype", allow_none=False)
    if node.dtype in dt.COMPLEX and dtype not in dt.COMPLEX and dtype != dt.bool:
        raise TypeError(f"astype: cannot cast complex {node.dtype} to real {dtype}; use real() or abs() first")
    if device is not None:
        x = to_device(x, check_device(device, "astype"))
        node = x._node
    if dtype == node.dtype:
        return Array._new(node) if copy else x
    return wrap(astype_node(node, dtype))


def _dtype_arg(value, name, argname):
    if isinstance(value, Array):
        return value.dtype
    return check_dtype_arg(value, f"{name}: {argname}", allow_none=False)


def can_cast(from_: DType | Array, to: DType, /) -> bool:
    """Determines if one data type can be cast to another data type according to type promotion rules.

    Parameters
    ----------
    from_ : DType | Array
        Input data type, or array whose data type to cast from.
    to : DType
        Desired data type.

    Returns
    -------
    out : bool
        True if the cast can occur according to type promotion rules, else False.

    Raises
    ------
    TypeError
        An argument that is neither a dtype nor an array.
    """
    d_from = _dtype_arg(from_, "can_cast", "from_")
    d_to = _dtype_arg(to, "can_cast", "to")
    return dt.PROMOTION[d_from, d_to] == d_to


@dataclass(frozen=True)
class finfo_object:
    """Machine limits of a floating-point dtype (Python floats, as the standard asks)."""
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: dt.DType


@dataclass(frozen=True)
class iinfo_object:
    """Machine limits of an integer dtype (Python ints)."""
    bits: int
    max: int
    min: int
    dtype: dt.DType


def finfo(type: DType | Array, /) -> finfo_object:
    """Machine limits for floating-point data types.

    Parameters
    ----------
    type : DType | Array
        The floating-point data type (or an array of it) about which to get
        information; for a complex dtype, that of its real component.

    Returns
    -------
    out : finfo_object
        An object with attributes bits, eps, max, min and smallest_normal
        (Python ints and floats) and dtype (the real floating-point dtype).

    Raises
    ------
    TypeError
        A dtype that is not floating-point.
    """
    d = _dtype_arg(type, "finfo", "type")
    if d not in dt.CATEGORIES["floating"]:
        raise TypeError(f"finfo: expected a floating dtype, got {d}")
    real = dt.real_dtype(d)
    info = np.finfo(real.dtype)
    return finfo_object(int(info.bits), float(info.eps), float(info.max), float(info.min),
                        float(info.smallest_normal), real)


def iinfo(type: DType | Array, /) -> iinfo_object:
    """Machine limits for integer data types.

    Parameters
    ----------
    type : DType | Array
        The integer data type (or an array of it) about which to get information.

    Returns
    -------
    out : iinfo_object
        An object with attributes bits, max and min (Python ints) and dtype.

    Raises
    ------
    TypeError
        A dtype that is not an integer dtype.
    """
    d = _dtype_arg(type, "iinfo", "type")
    if d not in dt.INTEGER:
        raise TypeError(f"iinfo: expected an integer dtype, got {d}")
    info = np.iinfo(d.dtype)
    return iinfo_object(int(info.bits), int(info.max), int(info.min), d)


def isdtype(dtype: DType, kind: DType | str | tuple[DType | str, ...]) -> bool:
    """Returns a boolean indicating whether a provided dtype is of a specified data type kind.

    Parameters
    ----------
    dtype : DType
        The input dtype.
    kind : DType | str | tuple of them
        Data type kind: a dtype (equality), a kind name ('bool', 'signed
        integer', 'unsigned integer', 'integral', 'real floating', 'complex
        floating', 'numeric'), or a tuple of these (any of them).

    Returns
    -------
    out : bool
        Whether dtype is of the specified data type kind.

    Raises
    ------
    TypeError
        dtype (or a dtype in kind) that is not a dtype.
    ValueError
        An unknown kind name.
    """
    return is_kind(check_dtype_arg(dtype, "isdtype", allow_none=False), kind, "isdtype")


def is_kind(dtype, kind, name):
    """isdtype for an arrayx dtype, with errors naming `name` (isdtype, or the inspection API's dtypes)."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in dt.ISDTYPE_KINDS:
                raise ValueError(f"{name}: unknown kind {k!r}; expected one of {dt.ISDTYPE_KINDS}")
            if dtype in dt.CATEGORIES[k]:
                return True
        elif dtype == check_dtype_arg(k, f"{name}: kind", allow_none=False):
            return True
    return False


def promote_all(dtypes):
    """The promotion of several dtypes, whatever their order.

    Folding the pairwise table would depend on the order: int64 and uint64 meet at
    float64, which then outranks a float32 that absorbs either alone. As in JAX, a
    floating dtype absorbs all integers and bools.
    """
    floating = [d for d in dtypes if d in dt.CATEGORIES["floating"]]
    return functools.reduce(lambda a, b: dt.PROMOTION[a, b], floating or dtypes)


def result_type(*arrays_and_dtypes: Array | DType | Scalar) -> DType:
    """Returns the dtype that results from applying type promotion rules to the arguments.

    Parameters
    ----------
    *arrays_and_dtypes : Array | DType | bool | int | float | complex
        An arbitrary number of input arrays, dtypes and Python scalars; at least
        one must be an array or a dtype. Python scalars take part by the
        standard's scalar rules, whatever their position.

    Returns
    -------
    out : DType
        The dtype resulting from an operation involving the arguments.

    Raises
    ------
    TypeError
        No array or dtype among the arguments, or an argument of another type.
    OverflowError
        A Python int out of the range of the resulting integer dtype.
    """
    dtypes = [_dtype_arg(arg, "result_type", "argument") for arg in arrays_and_dtypes if not is_scalar(arg)]
    # Scalars apply in kind order (bool, int, float, complex), so their order does not matter either.
    scalars = sorted((arg for arg in arrays_and_dtypes if is_scalar(arg)),
                     key=lambda value: dt.PYTHON_SCALARS.index(type(value)))
    if not dtypes:
        raise TypeError("result_type: at least one argument must be an array or a dtype")
    result = promote_all(dtypes)
    for value in scalars:
        # As in the operators, an int the result dtype cannot hold is an error, not a silent wrap.
        if type(value) is int and result in dt.INT_BOUNDS:
            lo, hi = dt.INT_BOUNDS[result]
            if not lo <= value <= hi:
                raise OverflowError(f"result_type: Python int {value} is out of bounds for {result}")
        result = dt.PROMOTION[result, dt.scalar_dtype(value, result)]
    return result
