"""The array object: a handle on a graph node.

Operators record nodes through the namespace functions (they, indexing and
the other methods written with namespace functions are installed by
`namespace.operators`); nothing is computed until a force point (`__bool__`,
`__int__`, `__float__`, `__complex__`, `__index__`, `__str__`, `__repr__`
(unless `set_lazy_repr(True)`), `__format__`, `__array__`, `__dlpack__`,
`xp.eval`). In-place operators and `__setitem__`
rebind the handle to a new node: arrays computed from the old value keep it.
"""

import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import dtypes as dt, executors
from ..device import Device
from ..graph.node import Node
from ..scheduler.schedule import hold_in_memory, realize

_new_object = object.__new__
# Whether repr() of an unevaluated array describes it instead of computing it
# (set_lazy_repr; the environment variable ARRAYX_LAZY_REPR=1 at import).
_lazy_repr = os.environ.get("ARRAYX_LAZY_REPR") == "1"


def set_lazy_repr(lazy: bool) -> None:
    """Sets what repr() of an unevaluated array does. Evaluated arrays always
    show their values, and str() and print() always compute.

    Parameters
    ----------
    lazy : bool
        True: show the shape and dtype without computing. False (the
        default; ARRAYX_LAZY_REPR=1 in the environment makes True the
        default): compute and show the values.

    Raises
    ------
    TypeError
        If `lazy` is not a bool.
    """
    global _lazy_repr
    if not isinstance(lazy, bool):
        raise TypeError(f"set_lazy_repr: lazy must be a bool, got {type(lazy).__name__}")
    _lazy_repr = lazy


class Array:
    """An n-dimensional array recorded in arrayx's lazy graph."""

    __slots__ = ("_node", "__weakref__")
    _node: Node

    @staticmethod
    def _new(node):
        """The Array of `node` (the constructor is closed to users)."""
        self = _new_object(Array)
        self._node = node
        return self

    def __init__(self, *args, **kwargs):
        raise TypeError("arrayx arrays are created by namespace functions such as xp.asarray")

    # attributes

    @property
    def dtype(self) -> dt.DType:
        """Data type of the array elements."""
        return self._node.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        """Array dimensions."""
        return self._node.shape

    @property
    def device(self) -> Device:
        """Hardware device the array data resides on."""
        return self._node.device

    @property
    def ndim(self) -> int:
        """Number of array dimensions (axes)."""
        return len(self._node.shape)

    @property
    def size(self) -> int:
        """Number of elements in the array."""
        n = 1
        for d in self._node.shape:
            n *= d
        return n

    # forcing

    def _realized(self):
        """Force the array; its (now realized) node."""
        node = self._node
        if node.buffer is None:
            realize([node])
        return node

    def _host(self):
        """Force the array; its value as a read-only NumPy array."""
        node = self._realized()
        return executors.executor_for(node.device).to_host(node.buffer)

    def _scalar(self, name, convert):
        node = self._node
        if node.shape != ():
            raise TypeError(f"{name}: only 0-dimensional arrays can be converted, got shape {node.shape}")
        if node.buffer is None:
            realize([node])
        value = executors.executor_for(node.device).element(node.buffer)
        try:
            return convert(value)
        except (ValueError, OverflowError) as e:  # int(nan), int(inf)
            raise type(e)(f"{name}: cannot convert {value!r}: {e}") from None

    def __bool__(self) -> bool:
        """Converts a zero-dimensional array to a Python bool object (a force point)."""
        return self._scalar("__bool__", bool)

    def __int__(self) -> int:
        """Converts a zero-dimensional array to a Python int object (a force point).

        Raises
        ------
        TypeError
            A complex array, or one that is not zero-dimensional.
        ValueError, OverflowError
            NaN or an infinity.
        """
        if self._node.dtype in dt.COMPLEX:
            raise TypeError("__int__: cannot convert a complex array to int")
        return self._scalar("__int__", int)

    def __float__(self) -> float:
        """Converts a zero-dimensional array to a Python float object (a force point).

        Raises
        ------
        TypeError
            A complex array, or one that is not zero-dimensional.
        """
        if self._node.dtype in dt.COMPLEX:
            raise TypeError("__float__: cannot convert a complex array to float")
        return self._scalar("__float__", float)

    def __complex__(self) -> complex:
        """Converts a zero-dimensional array to a Python complex object (a force point)."""
        return self._scalar("__complex__", complex)

    def __index__(self) -> int:
        """Converts a zero-dimensional integer array to a Python int object (a force point).

        Raises
        ------
        TypeError
            A non-integer array, or one that is not zero-dimensional.
        """
        if self.dtype not in dt.INTEGER:
            raise TypeError(f"__index__: requires an integer array, got dtype {self.dtype}")
        return self._scalar("__index__", int)

    def __array__(self, dtype: np.dtype | None = None, copy: bool | None = None) -> np.ndarray:
        """The array's value as a NumPy array (a force point): a read-only view
        unless `copy` is True or `dtype` asks for a conversion."""
        host = self._host()
        if dtype is not None and np.dtype(dtype) != host.dtype:
            if copy is False:
                raise ValueError(f"__array__: copy=False but converting to dtype {dtype} needs a copy")
            return host.astype(dtype)
        return host.copy() if copy else host

    def _device_suffix(self) -> str:
        return "" if self.device.name == "cpu" else f", device={self.device}"

    def __str__(self) -> str:
        """The array's values, dtype and device (a force point)."""
        body = np.array2string(self._host(), separator=", ", prefix="Array(")
        return f"Array({body}, dtype={self.dtype}{self._device_suffix()})"

    def __repr__(self) -> str:
        """As str(); of an unevaluated array after set_lazy_repr(True), its shape,
        dtype and device, computing nothing."""
        if _lazy_repr and self._node.buffer is None:
            return f"Array(<not computed>, shape={self.shape}, dtype={self.dtype}{self._device_suffix()})"
        return self.__str__()

    def __format__(self, spec: str) -> str:
        """f"{x:.3f}": a zero-dimensional array formats as its Python scalar; f"{x}" is str(x)."""
        # f"{loss:.3f}": a 0-d array formats as its Python scalar; f"{x}" is str(x) for any shape.
        if not spec:
            return str(self)
        if self.ndim != 0:
            raise TypeError(f"__format__: format spec {spec!r} applies to 0-dimensional arrays only, "
                            f"got shape {self.shape}")
        return format(self._host()[()].item(), spec)

    def __len__(self) -> int:
        """The size of the first axis."""
        if self.ndim == 0:
            raise TypeError("len() of a 0-dimensional array")
        return self.shape[0]

    def __iter__(self) -> Iterator["Array"]:
        """The subarrays along the first axis, self[0], self[1], ..."""
        if self.ndim == 0:
            raise TypeError("iteration over a 0-dimensional array")
        return (self[i] for i in range(self.shape[0]))

    def __hash__(self) -> int:
        """Arrays are unhashable (their value can change in place)."""
        raise TypeError("arrayx arrays are unhashable")

    # protocol

    def __dlpack__(self, /, *, stream: int | Any | None = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        """Exports the array for consumption by from_dlpack() as a DLPack capsule (a force point)."""
        node = hold_in_memory(self._node) if copy is False else self._realized()
        return executors.executor_for(node.device).dlpack(node.buffer, stream, max_version, dl_device, copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        """Returns device type and device ID in DLPack format (a force point)."""
        node = self._realized()
        return executors.executor_for(node.device).dlpack_device(node.buffer)
