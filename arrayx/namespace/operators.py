"""The Array methods written with namespace functions: the operators, indexing,
`T`, `mT`, `to_device`, `__array_namespace__`, `__array_ufunc__` and NumPy's
habits (numpy_methods.py).

`install(namespace)` puts them on Array. The arrayx package calls it once the
Array class and the namespace functions both exist, so the array object and
the function modules (which build Arrays) do not import each other.
"""

from types import ModuleType
from typing import Any

import numpy as np

from .. import dtypes as dt
from . import creation, elementwise as ew, indexing, linear_algebra, manipulation, numpy_methods
from .array_object import Array
from .hints import DeviceLike, Key, Operand
from .traced_scalar import TracedScalar

SUPPORTED_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")

# What an operator takes beside an array, by exact type (the fast check).
_OPERAND_TYPES = (Array,) + dt.PYTHON_SCALARS

# Binary operators: method stem -> function, with reflected and in-place forms.
_ARITHMETIC = {
    "add": ew.add, "sub": ew.subtract, "mul": ew.multiply, "truediv": ew.divide,
    "floordiv": ew.floor_divide, "mod": ew.remainder, "pow": ew.pow,
    "and": ew.bitwise_and, "or": ew.bitwise_or, "xor": ew.bitwise_xor,
    "lshift": ew.bitwise_left_shift, "rshift": ew.bitwise_right_shift,
    "matmul": linear_algebra.matmul,
}
# Comparisons: method stem -> function, forward form only.
_COMPARISONS = {"eq": ew.equal, "ne": ew.not_equal, "lt": ew.less, "le": ew.less_equal,
                "gt": ew.greater, "ge": ew.greater_equal}
_UNARY = {"abs": ew.abs, "neg": ew.negative, "pos": ew.positive, "invert": ew.bitwise_invert}


def _mixed_with_numpy(name):
    return TypeError(f"{name}: cannot combine an arrayx array with a numpy.ndarray; convert it with "
                     f"xp.asarray(...) first (or the arrayx array with np.asarray(...) for a NumPy result)")


def _foreign(fn, other):
    """NotImplemented for an operand arrayx does not know; a clear error for NumPy arrays."""
    if isinstance(other, np.ndarray):
        raise _mixed_with_numpy(fn.__name__)
    return NotImplemented


def _operand(x):
    """Whether an operator takes `x` beside an array: an array, a Python or a
    NumPy scalar, a 0-d NumPy array (which acts as a NumPy scalar), or a
    Python scalar argument jit traces."""
    return type(x) in _OPERAND_TYPES or isinstance(x, (Array, np.generic, TracedScalar)) or _numpy_0d(x)


def _numpy_0d(x):
    return isinstance(x, np.ndarray) and x.ndim == 0


def _in_place(array, fn, other):
    """`array op= other`: rebind `array` to the result, which must keep its dtype and shape."""
    if not _operand(other):
        return _foreign(fn, other)
    result = fn(array, other)._node
    node = array._node
    if result.dtype != node.dtype:
        raise TypeError(f"{fn.__name__} (in place): result dtype {result.dtype} differs from the array's {node.dtype}")
    if result.shape != node.shape:
        raise ValueError(f"{fn.__name__} (in place): result shape {result.shape} differs from the array's {node.shape}")
    array._node = result
    return array


def _doc(fn, roles, call, returns=None, raises=""):
    """The docstring of an operator method calling `fn`: the first line of
    fn's docstring (the standard's wording), the roles of self and other in
    it, and the call it makes."""
    summary = fn.__doc__.strip().splitlines()[0].rstrip(".")
    if returns is None:
        returns = "The matrix product." if fn is linear_algebra.matmul else "The element-wise results."
    parameters = "" if "other" not in call else """
        Parameters
        ----------
        other : Array | bool | int | float | complex
            The other operand; a Python scalar takes self's dtype.
        """
    return f"""{summary} ({roles}): {call}.
        {parameters}
        Returns
        -------
        out : Array
            {returns}
        {raises}"""


def _unary(fn):
    def method(self, /) -> Array:
        return fn(self)
    method.__doc__ = _doc(fn, "x is self", f"`{fn.__name__}(self)`")
    return method


def _forward(fn):
    # The exact types first: a loop body applies operators by the thousand.
    def method(self, other: Operand, /) -> Array:
        if type(other) in _OPERAND_TYPES or _operand(other):
            return fn(self, other)
        return _foreign(fn, other)
    method.__doc__ = _doc(fn, "x1 is self, x2 is other", f"`{fn.__name__}(self, other)`")
    return method


def _reflected(fn):
    def method(self, other: Operand, /) -> Array:
        if type(other) in _OPERAND_TYPES or _operand(other):
            return fn(other, self)
        return _foreign(fn, other)
    method.__doc__ = _doc(fn, "x1 is other, x2 is self", f"`{fn.__name__}(other, self)`")
    return method


def _in_place_method(fn):
    def method(self, other: Operand, /) -> Array:
        return _in_place(self, fn, other)
    method.__doc__ = _doc(fn, "x1 is self, x2 is other", f"self becomes `{fn.__name__}(self, other)` in place "
                          f"(arrays computed from its old value keep it)", returns="self.", raises="""
        Raises
        ------
        TypeError, ValueError
            The result's dtype or shape would differ from self's.
        """)
    return method


# The arrayx names of NumPy's ufuncs where they differ (np.arcsin is xp.asin).
_NUMPY_NAMES = {
    "absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh",
    "arctan": "atan", "arctan2": "atan2", "arctanh": "atanh", "conjugate": "conj", "invert": "bitwise_invert",
    "left_shift": "bitwise_left_shift", "right_shift": "bitwise_right_shift", "power": "pow",
}
# The functions behind the binary operators, by their NumPy ufunc: NumPy's
# scalars (np.float64(2) * x) apply an operator through its ufunc.
_OPERATOR_FUNCTIONS = {getattr(np, numpy_name): fn for fn in list(_ARITHMETIC.values()) + list(_COMPARISONS.values())
                       for numpy_name, name in [*_NUMPY_NAMES.items(), (fn.__name__, fn.__name__)]
                       if name == fn.__name__}
_NUMPY_SCALARS = (np.generic, np.ndarray)


def _array_ufunc(namespace):
    """Array.__array_ufunc__: NumPy calls it for np.sin(x), np_array + x and
    np.float64(2) * x. The last is a binary operator with a NumPy scalar
    (a 0-d array, for comparisons), which arrayx takes as the Python scalar
    it holds; the others raise a TypeError that says what to write instead."""
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Array:
        """NumPy's ufuncs on arrayx arrays: an operator with a NumPy scalar
        (np.float64(2) * x) is the operator with the Python scalar it holds.

        Raises
        ------
        TypeError
            Any other ufunc call, saying what to write instead (xp.sin(x) for
            np.sin(x), xp.asarray for a NumPy array operand).
        """
        fn = _OPERATOR_FUNCTIONS.get(ufunc)
        if fn is not None and method == "__call__" and not kwargs:
            # The common case first, one operand self, the other a NumPy scalar:
            # `np.float64(2) * x` in a loop costs what `2.0 * x` does, plus NumPy's dispatch.
            x1, x2 = inputs
            if x2 is self and isinstance(x1, _NUMPY_SCALARS) and x1.ndim == 0 and x1.dtype.kind in "biufc":
                return fn(x1.item(), self)
            if x1 is self and isinstance(x2, _NUMPY_SCALARS) and x2.ndim == 0 and x2.dtype.kind in "biufc":
                return fn(self, x2.item())
        name = _NUMPY_NAMES.get(ufunc.__name__, ufunc.__name__)
        mixed = any(isinstance(a, np.ndarray) and a.ndim for a in inputs) or "out" in kwargs
        if fn is not None and mixed:
            raise _mixed_with_numpy(name)
        call = f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
        instead = f"xp.{name}(...)" if method == "__call__" and hasattr(namespace, name) else "the arrayx function"
        raise TypeError(f"{call}: NumPy's ufuncs do not take arrayx arrays; write {instead}, or convert the "
                        f"array with np.asarray(x) for a NumPy result")
    return __array_ufunc__


def _operator_methods():
    """(name, method) for __op__, __rop__ and __iop__ of each operator of the standard."""
    methods = [(f"__{op}__", _unary(fn)) for op, fn in _UNARY.items()]
    for op, fn in list(_ARITHMETIC.items()) + list(_COMPARISONS.items()):
        methods.append((f"__{op}__", _forward(fn)))
        if op in _ARITHMETIC:
            methods += [(f"__r{op}__", _reflected(fn)), (f"__i{op}__", _in_place_method(fn))]
    return methods


def _transpose(self) -> Array:
    """Transpose of the array: a two-dimensional array with its axes swapped.

    Raises
    ------
    ValueError
        The array is not two-dimensional.
    """
    if self.ndim != 2:
        raise ValueError(f"Array.T: requires a 2-dimensional array, got {self.ndim} dimensions; use permute_dims or mT")
    return manipulation.permute_dims(self, (1, 0))


def _matrix_transpose(self) -> Array:
    """Transpose of a matrix (or a stack of matrices): the last two axes swapped."""
    return linear_algebra.matrix_transpose(self)


def _to_device(self, device: DeviceLike, /, *, stream: None = None) -> Array:
    """Copy the array from the device on which it currently resides to the specified device.

    Parameters
    ----------
    device : Device | str
        A device arrayx has, or its name (e.g. "cuda:0").
    stream : None
        Accepted for the standard's signature; arrayx orders transfers itself.

    Returns
    -------
    out : Array
        An array with the same data and dtype on `device` (self when it is there already).
    """
    return creation.to_device(self, device, stream)


def _getitem(self, key: Key, /) -> Array:
    """Returns self[key].

    Parameters
    ----------
    key : int | slice | ellipsis | None | Array | tuple of them
        Basic indices, an integer array (or several) or a boolean mask; NumPy
        integer and boolean arrays and lists of ints or bools index as the
        arrayx arrays they convert to.

    Returns
    -------
    out : Array
        The indexed values (a boolean mask is a force point: the result's shape depends on it).

    Raises
    ------
    IndexError
        An index out of bounds (integer arrays: at their force point).
    """
    return indexing.getitem(self, key)


def install(namespace):
    """Put the methods written with namespace functions on Array;
    `__array_namespace__` returns `namespace` (the arrayx module)."""
    def __array_namespace__(self, /, *, api_version: str | None = None) -> ModuleType:
        """Returns an object that has all the array API functions on it: the arrayx module.

        Raises
        ------
        ValueError
            An api_version arrayx does not support.
        """
        if api_version is not None and api_version not in SUPPORTED_API_VERSIONS:
            raise ValueError(f"__array_namespace__: unsupported api_version {api_version!r}; "
                             f"supported: {SUPPORTED_API_VERSIONS}")
        return namespace

    methods = _operator_methods() + [
        ("to_device", _to_device), ("__getitem__", _getitem), ("__setitem__", indexing.assign),
        ("__array_namespace__", __array_namespace__), ("__array_ufunc__", _array_ufunc(namespace)),
    ] + list(numpy_methods.METHODS.items())
    for name, method in methods:
        method.__name__ = name
        method.__qualname__ = f"Array.{name}"
        setattr(Array, name, method)
    Array.T = property(_transpose)
    Array.mT = property(_matrix_transpose)
