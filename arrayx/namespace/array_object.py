"""The array object: a handle on a graph node.

Operators record nodes through the namespace functions; nothing is computed
until a force point (`__bool__`, `__int__`, `__float__`, `__complex__`,
`__index__`, `__repr__`, `__format__`, `__array__`, `__dlpack__`, `xp.eval`). In-place
operators and `__setitem__` rebind the handle to a new node: arrays computed
from the old value keep it.
"""

import numpy as np

from .. import dtypes as dt, executors
from ..scheduler.schedule import realize, update_in_place, write_element

SUPPORTED_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")


_new_object = object.__new__


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

    @property
    def T(self):
        """Transpose of a two-dimensional array."""
        if self.ndim != 2:
            raise ValueError(f"Array.T: requires a 2-dimensional array, got {self.ndim} dimensions; use permute_dims or mT")
        return _manip.permute_dims(self, (1, 0))

    @property
    def mT(self):
        """Transpose of a matrix (or a stack of matrices)."""
        return _linalg.matrix_transpose(self)

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

    def __repr__(self):
        host = self._host()
        body = np.array2string(host, separator=", ", prefix="Array(")
        device = "" if self.device.name == "cpu" else f", device={self.device}"
        return f"Array({body}, dtype={self.dtype}{device})"

    __str__ = __repr__

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

    def __array_namespace__(self, /, *, api_version=None):
        if api_version is not None and api_version not in SUPPORTED_API_VERSIONS:
            raise ValueError(f"__array_namespace__: unsupported api_version {api_version!r}; "
                             f"supported: {SUPPORTED_API_VERSIONS}")
        import arrayx
        return arrayx

    def to_device(self, device, /, *, stream=None):
        """Copy the array to `device` (the same array when it is there already)."""
        return _creation.to_device(self, device, stream)

    def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
        node = self._realized()
        return executors.executor_for(node.device).dlpack(node.buffer, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        node = self._realized()
        return executors.executor_for(node.device).dlpack_device(node.buffer)

    # indexing

    def __getitem__(self, key, /):
        return _indexing.getitem(self, key)

    def __setitem__(self, key, value, /):
        element = _indexing.one_element(self._node, key, value)
        if element is not None and write_element(self, *element):
            return
        old = self._node
        node = _indexing.setitem(self, key, value)._node
        self._node = node
        del old   # the update may write into the old value only if nothing else holds it
        try:
            update_in_place(node)
        except BaseException:
            self._node = node.inputs[0] if node.inputs else node
            raise

    # operators

    def __abs__(self):
        return _ew.abs(self)

    def __neg__(self):
        return _ew.negative(self)

    def __pos__(self):
        return _ew.positive(self)

    def __invert__(self):
        return _ew.bitwise_invert(self)

    def _inplace(self, fn, other):
        if not _operand(other):
            return _foreign(fn, other)
        result = fn(self, other)._node
        node = self._node
        if result.dtype != node.dtype:
            raise TypeError(f"{fn.__name__} (in place): result dtype {result.dtype} differs from the array's {node.dtype}")
        if result.shape != node.shape:
            raise ValueError(f"{fn.__name__} (in place): result shape {result.shape} differs from the array's {node.shape}")
        self._node = result
        return self


_OPERAND_TYPES = (Array, float, int, bool, complex)


def _foreign(fn, other):
    """NotImplemented for an operand arrayx does not know; a clear error for NumPy arrays."""
    if isinstance(other, np.ndarray):
        raise TypeError(f"{fn.__name__}: cannot combine an arrayx array with a numpy.ndarray; "
                        f"convert it with xp.asarray first")
    return NotImplemented


def _operand(x):
    """Whether an operator takes `x` beside an array: an array, a Python or a NumPy scalar."""
    return type(x) in _OPERAND_TYPES or isinstance(x, (Array, np.generic))


def _define_operators():
    """__op__, __rop__ and __iop__ for each binary operator of the standard."""
    table = {
        "add": _ew.add, "sub": _ew.subtract, "mul": _ew.multiply, "truediv": _ew.divide,
        "floordiv": _ew.floor_divide, "mod": _ew.remainder, "pow": _ew.pow,
        "and": _ew.bitwise_and, "or": _ew.bitwise_or, "xor": _ew.bitwise_xor,
        "lshift": _ew.bitwise_left_shift, "rshift": _ew.bitwise_right_shift,
        "matmul": _linalg.matmul,
    }
    compare = {"eq": _ew.equal, "ne": _ew.not_equal, "lt": _ew.less, "le": _ew.less_equal,
               "gt": _ew.greater, "ge": _ew.greater_equal}
    for op, fn in list(table.items()) + list(compare.items()):
        # The exact types first: a loop body applies operators by the thousand.
        def forward(self, other, /, fn=fn):
            if type(other) in _OPERAND_TYPES or _operand(other):
                return fn(self, other)
            return _foreign(fn, other)
        methods = [("", forward)]
        if op in table:
            def reflected(self, other, /, fn=fn):
                if type(other) in _OPERAND_TYPES or _operand(other):
                    return fn(other, self)
                return _foreign(fn, other)

            def inplace(self, other, /, fn=fn):
                return self._inplace(fn, other)
            methods += [("r", reflected), ("i", inplace)]
        for prefix, method in methods:
            method.__name__ = method.__qualname__ = f"__{prefix}{op}__"
            setattr(Array, method.__name__, method)


from . import creation as _creation, elementwise as _ew, indexing as _indexing  # noqa: E402
from . import linear_algebra as _linalg, manipulation as _manip  # noqa: E402

_define_operators()
