"""The Array methods NumPy and JAX users call most: `x.sum()`, `x.reshape(2, 3)`,
`x.astype(np.float32)`, `x.tolist()`, ...

Each is a thin alias of the standard function, with NumPy's signature where it
makes sense: the axis as the first positional argument, a shape as separate
ints, NumPy's `ddof`, and `out=None` accepted, because NumPy's `np.sum(x)`,
`np.mean(x)`, `np.std(x)`, ... call the method of an argument that is not a
NumPy array with `out=None` (so they return arrayx arrays). They are arrayx
extensions: array-agnostic code calls the namespace's functions, which every
library of the standard has. `tolist` and `item` are force points.

`operators.install` puts METHODS on Array.
"""

import operator
from typing import Any

from .. import dtypes as dt
from . import (creation, data_types, elementwise as ew, linear_algebra, manipulation, searching, statistical,
               utility)
from .array_object import Array
from .build import not_an_array
from .hints import Axes, DeviceLike, DType


def _no_out(name, out):
    """NumPy's `out=` buffer: only None (arrayx arrays are values, not buffers)."""
    if out is not None:
        raise TypeError(f"Array.{name}: out= is not supported (arrayx arrays are values, not buffers); "
                        f"assign the result instead: y = x.{name}(...)")


def _computed_in(x, dtype):
    """x cast to NumPy's `dtype=` of mean, var and std (the dtype they compute in), if given."""
    return x if dtype is None else data_types.astype(x, dtype)


def _sum(self, axis: Axes = None, dtype: DType | None = None, out: None = None, keepdims: bool = False) -> Array:
    """`xp.sum(self, axis=axis, dtype=dtype, keepdims=keepdims)`; out must be None."""
    _no_out("sum", out)
    return statistical.sum(self, axis=axis, dtype=dtype, keepdims=keepdims)


def _prod(self, axis: Axes = None, dtype: DType | None = None, out: None = None, keepdims: bool = False) -> Array:
    """`xp.prod(self, axis=axis, dtype=dtype, keepdims=keepdims)`; out must be None."""
    _no_out("prod", out)
    return statistical.prod(self, axis=axis, dtype=dtype, keepdims=keepdims)


def _mean(self, axis: Axes = None, dtype: DType | None = None, out: None = None, keepdims: bool = False) -> Array:
    """`xp.mean(self, axis=axis, keepdims=keepdims)`, computed in `dtype` if given; out must be None."""
    _no_out("mean", out)
    return statistical.mean(_computed_in(self, dtype), axis=axis, keepdims=keepdims)


def _correction(name, ddof, correction):
    """NumPy's ddof and the standard's correction, one of which may be given."""
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError(f"Array.{name}: give ddof or correction, not both")
    return correction


def _var(self, axis: Axes = None, dtype: DType | None = None, out: None = None, ddof: int | float = 0,
         keepdims: bool = False, *, correction: int | float | None = None) -> Array:
    """`xp.var(self, axis=axis, correction=ddof, keepdims=keepdims)`, computed in `dtype` if given; out must be None."""
    _no_out("var", out)
    return statistical.var(_computed_in(self, dtype), axis=axis, correction=_correction("var", ddof, correction),
                           keepdims=keepdims)


def _std(self, axis: Axes = None, dtype: DType | None = None, out: None = None, ddof: int | float = 0,
         keepdims: bool = False, *, correction: int | float | None = None) -> Array:
    """`xp.std(self, axis=axis, correction=ddof, keepdims=keepdims)`, computed in `dtype` if given; out must be None."""
    _no_out("std", out)
    return statistical.std(_computed_in(self, dtype), axis=axis, correction=_correction("std", ddof, correction),
                           keepdims=keepdims)


def _max(self, axis: Axes = None, out: None = None, keepdims: bool = False) -> Array:
    """`xp.max(self, axis=axis, keepdims=keepdims)`; out must be None."""
    _no_out("max", out)
    return statistical.max(self, axis=axis, keepdims=keepdims)


def _min(self, axis: Axes = None, out: None = None, keepdims: bool = False) -> Array:
    """`xp.min(self, axis=axis, keepdims=keepdims)`; out must be None."""
    _no_out("min", out)
    return statistical.min(self, axis=axis, keepdims=keepdims)


def _any(self, axis: Axes = None, out: None = None, keepdims: bool = False) -> Array:
    """`xp.any(self, axis=axis, keepdims=keepdims)`; out must be None."""
    _no_out("any", out)
    return utility.any(self, axis=axis, keepdims=keepdims)


def _all(self, axis: Axes = None, out: None = None, keepdims: bool = False) -> Array:
    """`xp.all(self, axis=axis, keepdims=keepdims)`; out must be None."""
    _no_out("all", out)
    return utility.all(self, axis=axis, keepdims=keepdims)


def _argmax(self, axis: int | None = None, out: None = None, *, keepdims: bool = False) -> Array:
    """`xp.argmax(self, axis=axis, keepdims=keepdims)`; out must be None."""
    _no_out("argmax", out)
    return searching.argmax(self, axis=axis, keepdims=keepdims)


def _argmin(self, axis: int | None = None, out: None = None, *, keepdims: bool = False) -> Array:
    """`xp.argmin(self, axis=axis, keepdims=keepdims)`; out must be None."""
    _no_out("argmin", out)
    return searching.argmin(self, axis=axis, keepdims=keepdims)


def _cumsum(self, axis: int | None = None, dtype: DType | None = None, out: None = None) -> Array:
    """`xp.cumulative_sum(self, axis=axis, dtype=dtype)`; axis None sums the
    flattened array, as NumPy's does; out must be None."""
    _no_out("cumsum", out)
    if axis is None:
        return statistical.cumulative_sum(manipulation.reshape(self, (-1,)), axis=0, dtype=dtype)
    return statistical.cumulative_sum(self, axis=axis, dtype=dtype)


def _shape_arguments(name, args):
    """NumPy's x.reshape(2, 3), x.reshape((2, 3)) and x.reshape(6) as one tuple."""
    if len(args) == 1:
        args = args[0]
        if not isinstance(args, (tuple, list)):
            try:
                return (operator.index(args),)
            except TypeError:
                raise TypeError(f"Array.{name}: shape must be ints or a tuple of ints, got {args!r}") from None
    return tuple(args)


def _reshape(self, *shape: int | tuple[int, ...], order: str = "C", copy: bool | None = None) -> Array:
    """`xp.reshape(self, shape, copy=copy)`; the shape as one tuple or as
    separate ints; order must be "C" (arrayx arrays have no memory layout)."""
    if order != "C":
        raise ValueError(f"Array.reshape: order={order!r} is not supported; arrayx reshapes in C order "
                         f"(for Fortran order, transpose, reshape and transpose back)")
    return manipulation.reshape(self, _shape_arguments("reshape", shape), copy=copy)


def _astype(self, dtype: DType, /, *, copy: bool = True, device: DeviceLike | None = None) -> Array:
    """`xp.astype(self, dtype, copy=copy, device=device)`; NumPy dtypes are accepted (np.float32)."""
    return data_types.astype(self, dtype, copy=copy, device=device)


def _copy(self) -> Array:
    """`xp.asarray(self, copy=True)`: an array that later writes to self do not change."""
    return creation.asarray(self, copy=True)


def _tolist(self) -> Any:
    """The values as nested Python lists of Python scalars (a 0-d array: one
    scalar), as NumPy's tolist (a force point)."""
    return self._host().tolist()


def _item(self, *args: int) -> bool | int | float | complex:
    """The one element of an array of size one as a Python scalar; with
    arguments, the element at a flat index or an index per axis, as NumPy's
    item (a force point).

    Raises
    ------
    ValueError
        No arguments and an array of another size than one.
    IndexError
        An index out of bounds.
    """
    if not args and self.size != 1:
        raise ValueError(f"Array.item: only an array of one element converts to a Python scalar, "
                         f"got shape {self.shape}; pass an index, or use tolist()")
    host = self._host()
    try:
        return host.item(*args)
    except (IndexError, ValueError, TypeError) as e:
        raise type(e)(f"Array.item: {e}") from None


def _flatten(self, order: str = "C") -> Array:
    """`xp.reshape(self, (-1,))` (order must be "C")."""
    return _reshape(self, -1, order=order)


def _transpose(self, *axes: int | tuple[int, ...] | None) -> Array:
    """`xp.permute_dims(self, axes)`: no axes (or None) reverses them, as NumPy's
    transpose does; the axes as one tuple or as separate ints."""
    if not axes or axes == (None,):
        axes = tuple(range(self.ndim - 1, -1, -1))
    elif len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    return manipulation.permute_dims(self, axes)


def _squeeze(self, axis: int | tuple[int, ...] | None = None) -> Array:
    """`xp.squeeze(self, axis)`; axis None removes every axis of size one, as NumPy's does."""
    if axis is None:
        axis = tuple(i for i, n in enumerate(self.shape) if n == 1)
    return manipulation.squeeze(self, axis)


def _clip(self, min: int | float | Array | None = None, max: int | float | Array | None = None,
          out: None = None) -> Array:
    """`xp.clip(self, min, max)`; out must be None."""
    _no_out("clip", out)
    return ew.clip(self, min, max)


def _round(self, decimals: int = 0, out: None = None) -> Array:
    """`xp.round(self)`; with decimals, rounded to that many decimal places
    (negative: to tens, hundreds, ...) as NumPy computes it: scaled by a power
    of ten, rounded half to even, and scaled back. out must be None.

    Raises
    ------
    TypeError
        decimals other than 0 for an integer or bool array.
    """
    _no_out("round", out)
    decimals = operator.index(decimals)
    if decimals == 0:
        return ew.round(self)
    if self.dtype not in dt.CATEGORIES["floating"]:
        raise TypeError(f"Array.round: decimals={decimals} applies to floating arrays, got dtype {self.dtype}; "
                        f"cast first: x.astype(xp.float64).round({decimals})")
    if decimals > 0:
        scale = 10.0 ** decimals
        return ew.divide(ew.round(ew.multiply(self, scale)), scale)
    scale = 10.0 ** -decimals
    return ew.multiply(ew.round(ew.divide(self, scale)), scale)


def _dot(self, b: Array, out: None = None) -> Array:
    """NumPy's dot: the product of 0-d operands, the matrix product of 1-d and
    2-d ones, and otherwise the contraction of self's last axis with b's
    second to last (its only axis when b is 1-d). out must be None."""
    _no_out("dot", out)
    if not isinstance(b, Array):
        raise not_an_array("Array.dot", "b", b)
    if self.ndim == 0 or b.ndim == 0:
        return ew.multiply(self, b)
    if self.ndim <= 2 and b.ndim <= 2:
        return linear_algebra.matmul(self, b)
    return linear_algebra.tensordot(self, b, axes=((self.ndim - 1,), (max(b.ndim - 2, 0),)))


METHODS = {
    "sum": _sum, "prod": _prod, "mean": _mean, "var": _var, "std": _std, "max": _max, "min": _min,
    "any": _any, "all": _all, "argmax": _argmax, "argmin": _argmin, "cumsum": _cumsum,
    "reshape": _reshape, "astype": _astype, "copy": _copy, "tolist": _tolist, "item": _item,
    "flatten": _flatten, "transpose": _transpose, "squeeze": _squeeze, "clip": _clip, "round": _round,
    "dot": _dot,
}
