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

import numpy as np

from .. import dtypes as dt, executors
from ..scheduler.schedule import realize

_new_object = object.__new__
# Whether repr() of an unevaluated array describes it instead of computing it
# (set_lazy_repr; the environment variable ARRAYX_LAZY_REPR=1 at import).
_lazy_repr = os.environ.get("ARRAYX_LAZY_REPR") == "1"


def set_lazy_repr(lazy):
    """Make repr() of an unevaluated array show its shape, dtype and device
    without computing it (`lazy=True`), or compute and show its values
    (`lazy=False`, the default; ARRAYX_LAZY_REPR=1 in the environment makes
    True the default). Evaluated arrays always show their values, and str()
    and print() always compute."""
    global _lazy_repr
    if not isinstance(lazy, bool):
        raise TypeError(f"set_lazy_repr: lazy must be a bool, got {type(lazy).__name__}")
    _lazy_repr = lazy


class Array:
    """An n-dimensional array recorded in arrayx's lazy graph."""

    __slots__ = ("_node", "__weakref__")
    # NumPy ufuncs defer to arrayx's reflected operators instead of converting.
    __array_ufunc__ = None

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
    def dtype(self):
        """Data type of the array elements."""
        return self._node.dtype

    @property
    def shape(self):
        """Array dimensions."""
        return self._node.shape

    @property
    def device(self):
        """Hardware device the array data resides on."""
        return self._node.device

    @property
    def ndim(self):
        """Number of array dimensions (axes)."""
        return len(self._node.shape)

    @property
    def size(self):
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

    def __bool__(self):
        return self._scalar("__bool__", bool)

    def __int__(self):
        if self._node.dtype in dt.COMPLEX:
            raise TypeError("__int__: cannot convert a complex array to int")
        return self._scalar("__int__", int)

    def __float__(self):
        if self._node.dtype in dt.COMPLEX:
            raise TypeError("__float__: cannot convert a complex array to float")
        return self._scalar("__float__", float)

    def __complex__(self):
        return self._scalar("__complex__", complex)

    def __index__(self):
        if self.dtype not in dt.INTEGER:
            raise TypeError(f"__index__: requires an integer array, got dtype {self.dtype}")
        return self._scalar("__index__", int)

    def __array__(self, dtype=None, copy=None):
        host = self._host()
        if dtype is not None and np.dtype(dtype) != host.dtype:
            if copy is False:
                raise ValueError(f"__array__: copy=False but converting to dtype {dtype} needs a copy")
            return host.astype(dtype)
        return host.copy() if copy else host

    def _device_suffix(self):
        return "" if self.device.name == "cpu" else f", device={self.device}"

    def __str__(self):
        body = np.array2string(self._host(), separator=", ", prefix="Array(")
        return f"Array({body}, dtype={self.dtype}{self._device_suffix()})"

    def __repr__(self):
        if _lazy_repr and self._node.buffer is None:
            return f"Array(<not computed>, shape={self.shape}, dtype={self.dtype}{self._device_suffix()})"
        return self.__str__()

    def __format__(self, spec):
        # f"{loss:.3f}": a 0-d array formats as its Python scalar; f"{x}" is str(x) for any shape.
        if not spec:
            return str(self)
        if self.ndim != 0:
            raise TypeError(f"__format__: format spec {spec!r} applies to 0-dimensional arrays only, "
                            f"got shape {self.shape}")
        return format(self._host()[()].item(), spec)

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-dimensional array")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-dimensional array")
        return (self[i] for i in range(self.shape[0]))

    def __hash__(self):
        raise TypeError("arrayx arrays are unhashable")

    # protocol

    def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
        node = self._realized()
        return executors.executor_for(node.device).dlpack(node.buffer, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        node = self._realized()
        return executors.executor_for(node.device).dlpack_device(node.buffer)
