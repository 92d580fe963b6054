"""neon's Tensor over arrayx: the data a backend computes on.

Tensor: neon's mutable n-dimensional array (at least two dimensions; shape
(n,) becomes (n, 1)). Its data is an arrayx Array held by a shared storage
object; views (`t[1:3]`, `t.T`, `t.reshape(...)`, `t.share(...)`) are
(storage, chain of view operations), so a write through any view is seen by
the base and by every other view (see `_storage`).

Python operators on a Tensor build op-trees (optree.py); assigning one
(`t[:] = tree`) evaluates it into the tensor.
"""

import math
import numbers

import numpy as np

import arrayx as xp

from . import _storage as st
from .optree import OpTreeNode, TensorBase

_none_slice = slice(None, None, None)


# ---------------------------------------------------------------------------
# dtypes

_DTYPES = {np.dtype(n): getattr(xp, n) for n in ("float16", "float32", "float64", "int8", "uint8", "int16",
                                                  "uint16", "int32", "uint32", "int64", "uint64", "bool")}
# The element types a backend computes in by default (neon's `datatype` option).
_DEFAULT_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def np_dtype(dtype, where="Tensor"):
    """`dtype` as a NumPy dtype that arrayx can hold, or a TypeError naming `where`."""
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{where}: {dtype!r} is not a data type") from None
    if d not in _DTYPES:
        raise TypeError(f"{where}: dtype {d} is not supported; supported: "
                        f"{', '.join(str(k) for k in _DTYPES)}")
    return d


def x_dtype(npdt):
    """The arrayx dtype of a supported NumPy dtype."""
    return _DTYPES[np.dtype(npdt)]


def cast(array, npdt):
    """`array` as dtype `npdt`, clipping into the range of an integer target
    (neon's CPU backend clips integer assignments that overflow)."""
    target = _DTYPES[npdt]
    src = array.dtype
    if src == target:
        return array
    if npdt.kind in "iu" and src != xp.bool:
        info = np.iinfo(npdt)
        if src.kind == "f":
            if npdt.itemsize < 8:
                array = xp.clip(xp.astype(array, xp.float64), float(info.min), float(info.max))
        elif src.kind in "iu":
            sinfo = np.iinfo(src.dtype)
            lo, hi = max(info.min, sinfo.min), min(info.max, sinfo.max)
            if (lo, hi) != (sinfo.min, sinfo.max):
                array = xp.clip(array, lo, hi)
    return xp.astype(array, target)


def _default_device():
    return xp.__array_namespace_info__().default_device()


def _normalize_shape(shape, where):
    """A shape argument as a tuple of ints, padded to at least two dimensions."""
    if isinstance(shape, numbers.Integral):
        shape = (int(shape),)
    try:
        shape = tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"{where}: shape must be an int or a sequence of ints, got {shape!r}") from None
    for d in shape:
        if d < 0:
            raise ValueError(f"{where}: shape {shape} has a negative dimension")
    while len(shape) < 2:
        shape = shape + (1,)
    return shape


def _to_array(value, npdt, device, where):
    """Host data (NumPy array, list, scalar) or an arrayx Array as an Array of dtype `npdt`."""
    if isinstance(value, Tensor):
        value = value._read()
    if isinstance(value, xp.Array):
        return cast(value, npdt)
    host = np.asarray(value)
    if host.dtype not in _DTYPES:
        if host.dtype.kind == "f":
            host = host.astype(np.float64)
        elif host.dtype.kind == "c" or host.dtype.kind not in "biu":
            raise TypeError(f"{where}: cannot convert data of dtype {host.dtype} to {npdt}")
    return cast(xp.asarray(host, device=device), npdt)


def _fit(array, shape, where):
    """`array` broadcast (or, with the same number of elements, reshaped) to `shape`."""
    if array.shape == shape:
        return array
    try:
        return xp.broadcast_to(array, shape)
    except ValueError:
        pass
    if math.prod(array.shape) == math.prod(shape):
        return xp.reshape(array, shape)
    raise ValueError(f"{where}: a value of shape {array.shape} cannot be assigned to a tensor of shape {shape}")


def _is_scalar(value):
    return isinstance(value, (numbers.Number, np.bool_)) and not isinstance(value, np.ndarray)


# ---------------------------------------------------------------------------
# Tensor

class Tensor(TensorBase):
    """The n-dimensional array of a neon backend (see the module docstring).

    Arguments:
        backend (Backend): backend of the tensor.
        shape (tuple, optional): shape of the tensor (zeros when no `ary`).
        dtype (numpy dtype, optional): element type.
        ary (array_like, optional): initial values (copied).
        name (str, optional): name identifying the tensor (used in printing).
        persist_values (bool, optional): kept for compatibility.
        base (Tensor, optional): the tensor this one views.
    """

    _min_dims = 2
    # NumPy defers to the reflected operators (ndarray * tensor builds no object array).
    __array_ufunc__ = None

    def __init__(self, backend, shape=None, dtype=np.float32, ary=None, name=None, persist_values=True,
                 base=None):
        npdt = np_dtype(dtype, type(self).__name__)
        device = getattr(backend, "device", None) or _default_device()
        if ary is None:
            if shape is None:
                raise ValueError(f"{type(self).__name__}: give a shape or an ary")
            shape = _normalize_shape(shape, type(self).__name__)
            array = xp.zeros(shape, dtype=_DTYPES[npdt], device=device)
        else:
            array = _to_array(ary, npdt, device, type(self).__name__)
            while array.ndim < self._min_dims:
                array = xp.reshape(array, array.shape + (1,))
            if shape is not None:
                shape = _normalize_shape(shape, type(self).__name__)
                array = _fit(array, shape, type(self).__name__)
        self._setup(backend, st.Storage(array), (), array.shape, npdt, name, persist_values, base)

    def _setup(self, backend, storage, chain, shape, npdt, name, persist_values, base):
        self.backend = backend
        self._storage = storage
        self._chain = chain
        self.shape = tuple(shape)
        self.dtype = npdt
        self.name = name
        self.persist_values = persist_values
        self.base = base
        self.size = math.prod(self.shape)

    @classmethod
    def _wrap(cls, backend, array, npdt, name=None, persist_values=True, base=None):
        """A tensor owning a new storage that holds `array` (of dtype `npdt`, >= 2-D)."""
        self = cls.__new__(cls)
        self._setup(backend, st.Storage(array), (), array.shape, npdt, name, persist_values, base)
        return self

    def _view(self, ops, name=None):
        chain, shape = self._chain, self.shape
        for op in ops:
            chain = st.extend(chain, op, shape)
            shape = st.op_shape(op, shape)
        view = type(self).__new__(type(self))
        view._setup(self.backend, self._storage, chain, shape, self.dtype, name, self.persist_values, self)
        return view

    # -- reading and writing the storage

    @property
    def _device(self):
        return getattr(self.backend, "device", None) or _default_device()

    def _read(self):
        """The tensor's current value as an arrayx Array (lazy)."""
        return st.read(self._storage, self._chain)

    def _write(self, array):
        """Replace the tensor's elements by `array` (cast and broadcast), lazily."""
        array = _fit(cast(array, self.dtype), self.shape, "assign")
        st.write(self._storage, self._chain, array)

    def _value(self):
        """The tensor's value, realized together with its storage (one plan)."""
        view = self._read()
        if self._chain:
            xp.eval(self._storage.array, view)
        else:
            xp.eval(view)
        return view

    def _force(self):
        """Evaluate the storage (one plan): later reads start from a realized buffer."""
        xp.eval(self._storage.array)

    # -- printing and protocol

    def __str__(self):
        return "{}(base 0x{:x}) name:{} shape:{} dtype:{}".format(
            type(self).__name__, id(self._storage), self.name, self.shape, self.dtype)

    def __repr__(self):
        return self.__str__()

    def __len__(self):
        return self.shape[0] if self.shape else 0

    def __hash__(self):
        return id(self)

    # -- indexing

    def __getitem__(self, key):
        """A view of the selected elements: writes through it reach this tensor.

        Integer indices keep their axis (neon never collapses below two
        dimensions); slices may have any step; one integer array (list, NumPy
        array, Tensor) per key selects along its axis.
        """
        if isinstance(key, slice) and key == _none_slice:
            return self
        return self._view(st.index_ops(key, self.shape, self._device, Tensor))

    def __setitem__(self, key, value):
        """`self[key] = value`: value is a Tensor, an op-tree, a scalar or a NumPy array,
        cast to this tensor's dtype."""
        target = self if isinstance(key, slice) and key == _none_slice else self.__getitem__(key)
        target._assign(value)

    def _assign(self, value):
        if isinstance(value, (Tensor, OpTreeNode)):
            OpTreeNode.build("assign", self, value)
        elif _is_scalar(value):
            scalar = value.item() if isinstance(value, np.generic) else value
            self._write(xp.asarray(scalar, device=self._device))
        elif isinstance(value, (np.ndarray, list, tuple, xp.Array)):
            self.set(value)
        else:
            raise TypeError("Invalid type for assignment: %s" % type(value))
        return self

    # -- host data

    def set(self, ary):
        """Copy host data (a NumPy array, broadcast or of the same size, or a scalar) into the tensor."""
        if _is_scalar(ary):
            return self._assign(ary)
        self._write(_to_array(ary, self.dtype, self._device, "set"))
        return self

    def get(self):
        """A NumPy copy of the tensor's values."""
        return np.asarray(self._value()).copy()

    def raw(self):
        """The tensor's current buffer as a read-only NumPy array.

        neon returned a device pointer into mutable memory; arrayx buffers are
        immutable and every write rebinds the storage to a new one, so this is
        a snapshot of the current value, shared with the executor where the
        executor allows it.
        """
        return np.asarray(self._value())

    def asnumpyarray(self):
        """Deprecated in neon: a NumPy copy of the values (same as `get`)."""
        return self.get()

    # -- operations returning tensors

    def take(self, indices, axis=None, out=None):
        """The elements at `indices` along `axis` (flattened when None), as a new tensor.

        The result is a copy (as in neon); with `out` it is written there and
        `out` is returned.
        """
        idx = st._index_array(indices, self._device, Tensor)
        if axis is None:
            array = xp.take(xp.reshape(self._read(), (-1,)), idx, axis=0)
            array = xp.reshape(array, array.shape + (1,))
        else:
            if not -len(self.shape) <= axis < len(self.shape):
                raise ValueError(f"take: axis {axis} is out of bounds for a tensor of shape {self.shape}")
            array = xp.take(self._read(), idx, axis=axis)
        if out is not None:
            out._write(array)
            out._force()
            return out
        return type(self)._wrap(self.backend, array, self.dtype, base=self)

    def fill(self, value):
        """Assign `value` to every element; returns self."""
        return self._assign(value)

    def copy(self, a):
        """Copy the values of `a` (a Tensor, op-tree, NumPy array or scalar) into self; returns self."""
        return self._assign(a)

    def copy_from(self, a):
        """Alias of `copy`."""
        return self._assign(a)

    def reshape(self, *shape):
        """A reshaped view (same number of elements; one dimension may be -1)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = tuple(int(d) for d in shape)
        if shape == self.shape:
            return self
        unknown = [i for i, d in enumerate(shape) if d == -1]
        if len(unknown) == 1:
            known = math.prod(d for d in shape if d != -1)
            if known and self.size % known == 0:
                shape = tuple(self.size // known if d == -1 else d for d in shape)
        while len(shape) < self._min_dims:
            shape = shape + (1,)
        if any(d < 0 for d in shape) or math.prod(shape) != self.size:
            raise ValueError(
                "The total size of a reshaped tensor must be the same as its existing size. Tensor is currently "
                "shape {} and size {}. Attempted to reshape to {} which would be size {}.".format(
                    self.shape, self.size, shape, math.prod(shape)))
        if shape == self.shape:
            return self
        return self._view([("reshape", shape)])

    @property
    def T(self):
        """A transposed view: 2-D tensors transpose, 3-D ones swap their last two axes (batched dot)."""
        ndim = len(self.shape)
        if ndim <= 2:
            axes = tuple(reversed(range(ndim)))
        else:
            axes = (0, 2, 1) + tuple(range(3, ndim))
        return self._view([("permute", axes)])

    def transpose(self, out=None):
        """Alias of `.T`; with `out`, the transpose is assigned there."""
        if out is not None:
            return OpTreeNode.build("assign", out, self.T)
        return self.T

    def dimension_reorder(self, new_order):
        """A view whose dimensions have the sizes of this tensor's in `new_order`:
        a reshape, not a transpose (the elements keep their order), as in neon."""
        order = [int(d) for d in new_order]
        if sorted(order) != list(range(len(self.shape))):
            raise ValueError(f"dimension_reorder: new_order {tuple(new_order)} is not a permutation of "
                             f"the {len(self.shape)} dimensions of shape {self.shape}")
        return self.reshape([self.shape[d] for d in order])

    def share(self, shape, dtype=None, name=None):
        """A view of the first prod(shape) elements (C order) with `shape`, for sharing
        temporary memory; `dtype` is ignored, as in neon."""
        shape = _normalize_shape(shape, "share")
        size = math.prod(shape)
        if size > self.size:
            raise ValueError("total size of new array must <= size of parent")
        return self._view([("share", size, shape)], name=name)

    @property
    def is_contiguous(self):
        """True when the tensor is its storage, or a reshape of it."""
        return all(op[0] == "reshape" for op in self._chain)


class Block:
    """Identifies the phases of training and inference (for begin/end).

    Attributes: epoch, minibatch, fprop, bprop, update.
    """

    epoch, minibatch, fprop, bprop, update = list(range(5))
