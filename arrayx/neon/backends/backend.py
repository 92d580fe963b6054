"""neon's Tensor, OpTreeNode, Block and Backend, over arrayx.

Tensor: neon's mutable n-dimensional array (at least two dimensions; shape
(n,) becomes (n, 1)). Its data is an arrayx Array held by a shared storage
object; views (`t[1:3]`, `t.T`, `t.reshape(...)`, `t.share(...)`) are
(storage, chain of view operations), so a write through any view is seen by
the base and by every other view (see `_storage`).

OpTreeNode: neon's op-tree, a tuple `(op_dict, left, right)` built by the
operators of Tensor and OpTreeNode and by the backend's functions. Assigning an
op-tree (`t[:] = tree`, `out=` arguments) is the force point: the whole tree is
translated into ONE arrayx graph, written into the target, and evaluated once.

Backend: the methods every neon backend has (seed 002). The arrayx namespace is
device-agnostic, so the base class implements them all over `self.device`; the
CPU, MKL and GPU classes choose the device and the Tensor class.
"""

import logging
import math
import numbers
import time

import numpy as np

import arrayx as xp

from .. import layers
from . import _storage as st

logger = logging.getLogger(__name__)

_none_slice = slice(None, None, None)


class OpCollection:
    """The sets of operation names an op-tree may hold."""

    zero_operand_ops = {"rand", "onehot"}
    unary_ops = {"finite", "neg", "abs", "sgn", "sqrt", "sqr", "exp", "log",
                 "exp2", "log2", "sig", "sig2", "tanh", "tanh2", "transpose",
                 "safelog", "rint", "binarize"}
    binary_ops = {"assign", "add", "sub", "mul", "div", "eq", "ne", "lt", "le",
                  "gt", "ge", "pow", "minimum", "maximum", "dot", "shift"}
    reduction_ops = {"sum", "max", "min", "argmax", "argmin"}
    float_ops = zero_operand_ops | unary_ops | binary_ops
    ew_ops = float_ops - {"dot", "transpose"}


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

class _OpTreeOperators:
    """Python operators on Tensors and op-trees build op-trees (neon's lazy
    syntax: nothing runs until `out[:] = tree`)."""

    __slots__ = ()

    def __add__(self, other):
        return OpTreeNode.build("add", self, other)

    def __sub__(self, other):
        return OpTreeNode.build("sub", self, other)

    def __mul__(self, other):
        return OpTreeNode.build("mul", self, other)

    def __div__(self, other):
        return OpTreeNode.build("div", self, other)

    def __truediv__(self, other):
        return OpTreeNode.build("div", self, other)

    def __pow__(self, other):
        return OpTreeNode.build("pow", self, other)

    def __radd__(self, other):
        return OpTreeNode.build("add", other, self)

    def __rsub__(self, other):
        return OpTreeNode.build("sub", other, self)

    def __rmul__(self, other):
        return OpTreeNode.build("mul", other, self)

    def __rdiv__(self, other):
        return OpTreeNode.build("div", other, self)

    def __rtruediv__(self, other):
        return OpTreeNode.build("div", other, self)

    def __rpow__(self, other):
        return OpTreeNode.build("pow", other, self)

    def __eq__(self, other):
        return OpTreeNode.build("eq", self, other)

    def __ne__(self, other):
        return OpTreeNode.build("ne", self, other)

    def __lt__(self, other):
        return OpTreeNode.build("lt", self, other)

    def __le__(self, other):
        return OpTreeNode.build("le", self, other)

    def __gt__(self, other):
        return OpTreeNode.build("gt", self, other)

    def __ge__(self, other):
        return OpTreeNode.build("ge", self, other)

    def __abs__(self):
        return OpTreeNode.build("abs", self, None)

    def __neg__(self):
        return OpTreeNode.build("neg", self, None)


class Tensor(_OpTreeOperators):
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


# ---------------------------------------------------------------------------
# OpTreeNode

def _operand_shape(x):
    """The shape of an op-tree operand: an op-tree's, a tensor's, or (1, 1) for a scalar."""
    if isinstance(x, OpTreeNode):
        return x[0]["shape"]
    if isinstance(x, Tensor):
        return x.shape
    return (1, 1)


class _ShapeProperty:
    """`node.shape` is an op-tree's shape; `OpTreeNode.shape(x)` works for any operand
    (neon's documentation calls it both ways)."""

    def __get__(self, obj, owner=None):
        if obj is None:
            return _operand_shape
        return obj[0]["shape"]


def _leaf_text(x):
    if isinstance(x, Tensor):
        if x.name:
            return x.name
        return "tensor-" + hex(id(x))
    return str(x)


def _normalize_operand(x):
    """NumPy scalars become Python numbers; other operands are returned as they are."""
    if isinstance(x, (np.generic, np.ndarray)) and np.ndim(x) == 0 and np.asarray(x).dtype.kind in "biuf":
        return x.item()
    return x


def _broadcast_shape(op, a_shape, b_shape):
    """neon's shape of an elementwise op: the larger size per axis (operands with
    shape of zeros are zero-operand placeholders); incompatible sizes raise here."""
    n = max(len(a_shape), len(b_shape))
    a = (1,) * (n - len(a_shape)) + tuple(a_shape)
    b = (1,) * (n - len(b_shape)) + tuple(b_shape)
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x > 1 and y > 1 and x != y:
            raise ValueError(f"{op}: operands of shapes {tuple(a_shape)} and {tuple(b_shape)} cannot be broadcast "
                             f"together (axis {i})")
        out.append(max(x, y))
    return tuple(out)


class OpTreeNode(_OpTreeOperators, tuple):
    """An op-tree: a tuple `(op_dict, left, right)`.

    `op_dict` holds the operation ('op'), the output shape ('shape') and the
    operation's arguments (such as 'axis'); `left` and `right` are Tensors,
    op-trees, numbers, or None.
    """

    def __new__(cls, *args):
        return tuple.__new__(cls, args)

    shape = _ShapeProperty()
    # NumPy defers to the reflected operators instead of converting the tuple.
    __array_ufunc__ = None

    def __str__(self):
        # Iterative, so that op-trees built in long loops print without recursion.
        out = []
        work = [self]
        while work:
            item = work.pop()
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, OpTreeNode):
                work.extend((")", item[2], ", ", item[1], ", ", "(" + str(item[0])))
            else:
                out.append(_leaf_text(item))
        return "".join(out)

    def __repr__(self):
        return self.__str__()

    # -- identification

    def key(self):
        """A key identifying the op-tree: the post-order stack with ops as (op, axis)
        or op, and the tensors themselves."""
        stack = self.traverse(list())
        for i, s in enumerate(stack):
            if type(s) is dict:
                stack[i] = (s["op"], s["axis"]) if "axis" in s else s["op"]
        return tuple(stack)

    def intrinsic_key_maps(self):
        """(intrinsic key, tensor->index map, index->tensor map): the key names
        tensors by first occurrence and shape, so `x0 * x1 + x0 * x2` and
        `y0 * y1 + y0 * y2` share it when the shapes agree."""
        stack = self.traverse(list())
        tensor_index_map = {}
        index_tensor_map = {}
        for i, s in enumerate(stack):
            if type(s) is dict:
                stack[i] = (s["op"], s["axis"]) if "axis" in s else s["op"]
            elif isinstance(s, Tensor):
                if s not in tensor_index_map:
                    index = len(tensor_index_map)
                    tensor_index_map[s] = index
                    index_tensor_map[index] = s
                stack[i] = (tensor_index_map[s], s.shape)
        return tuple(stack), tensor_index_map, index_tensor_map

    # -- building and executing

    @staticmethod
    def build(op, a, b, out=None, **kwargs):
        """Build an op-tree node (checking operand types and computing the shape).

        An 'assign' op executes at once, as does any op given `out` (it counts
        as an assignment to `out`). Returns NotImplemented for operand types an
        op-tree cannot hold, so Python tries the other operand's operator.
        """
        a = _normalize_operand(a)
        b = _normalize_operand(b)
        for arg in (a, b):
            if not isinstance(arg, (int, float, Tensor, OpTreeNode, type(None))):
                return NotImplemented
        a_shape = _operand_shape(a) if a is not None else (0, 0)
        b_shape = _operand_shape(b) if b is not None else (0, 0)
        if len(a_shape) == 1:
            a_shape = tuple(a_shape) + (1,)
        if len(b_shape) == 1:
            b_shape = tuple(b_shape) + (1,)

        if op in OpCollection.ew_ops and op != "assign":
            out_shape = _broadcast_shape(op, a_shape, b_shape)
        elif op in OpCollection.reduction_ops:
            axis = kwargs.get("axis")
            if axis is None:
                out_shape = (1,) * max(len(a_shape), 2)
            else:
                if not -len(a_shape) <= axis < len(a_shape):
                    raise ValueError(f"{op}: axis {axis} is out of bounds for an operand of shape {tuple(a_shape)}")
                shape = list(a_shape)
                shape[axis] = 1
                out_shape = tuple(shape)
        elif op == "assign":
            out_shape = tuple(a_shape)
        elif op == "dot":
            if not (len(a_shape) == len(b_shape) == 2 and a_shape[1] == b_shape[0]):
                raise ValueError(f"dot: operands of shapes {tuple(a_shape)} and {tuple(b_shape)} are not aligned")
            out_shape = (a_shape[0], b_shape[1])
        elif op == "transpose":
            if b is not None:
                raise ValueError("transpose takes one operand")
            out_shape = tuple(reversed(a_shape))
        else:
            raise TypeError("%s is not a valid operation" % op)

        op_dict = {"shape": out_shape, "op": op}
        op_dict.update(kwargs)
        node = OpTreeNode(op_dict, a, b)

        if op == "assign":
            return node.execute()
        if out is not None:
            return OpTreeNode({"op": "assign"}, out, node).execute()
        return node

    def execute(self):
        """Execute an op-tree with one 'assign' op at its top (through the target's backend)."""
        if self[0]["op"] != "assign":
            raise ValueError(f"execute: the op-tree must have 'assign' at its top, not {self[0]['op']!r}")
        if not isinstance(self[1], Tensor):
            raise TypeError(f"execute: can only assign to a Tensor, not {type(self[1]).__name__}")
        backend = self[1].backend
        if isinstance(backend, Backend):
            return backend.execute(self)
        raise TypeError(f"execute: the target tensor belongs to {type(backend).__name__}, not a neon backend")

    def traverse(self, stack):
        """Post-order walk: appends the operands and op dicts to `stack` (a list) and returns it."""
        work = [self]
        while work:
            item = work.pop()
            if isinstance(item, OpTreeNode):
                work.append(_Emit(item[0]))
                for child in (item[2], item[1]):
                    if child is not None:
                        work.append(child)
            elif isinstance(item, _Emit):
                stack.append(item.value)
            else:
                stack.append(item)
        return stack

    # -- views and conversions

    @property
    def T(self):
        """The transposed op-tree."""
        return OpTreeNode.build("transpose", self, None)

    def transpose(self, out=None):
        if out is not None:
            return OpTreeNode.build("assign", out, self.T)
        return self.T

    @staticmethod
    def optree_to_list(optree):
        """The op-tree as nested lists."""
        if isinstance(optree, OpTreeNode):
            return [OpTreeNode.optree_to_list(x) for x in optree]
        return optree

    @staticmethod
    def list_to_optree(items):
        """Nested lists (from optree_to_list) back to an op-tree."""
        if isinstance(items, list):
            return OpTreeNode(*[OpTreeNode.list_to_optree(x) for x in items])
        return items

    @staticmethod
    def _pretty_print(node):
        operators = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**"}
        # post-order evaluation of the text, iterative
        results = []
        work = [(node, False)]
        while work:
            item, ready = work.pop()
            if isinstance(item, OpTreeNode):
                if not ready:
                    work.append((item, True))
                    if item[2] is not None and not (isinstance(item[2], (int, float)) and not item[2]):
                        work.append((item[2], False))
                    work.append((item[1], False))
                    continue
                has_right = item[2] is not None and not (isinstance(item[2], (int, float)) and not item[2])
                if has_right:
                    right = results.pop()
                    left = results.pop()
                    s = left + " " + operators.get(item[0]["op"], item[0]["op"]) + " " + right
                else:
                    s = item[0]["op"] + " " + results.pop()
                results.append("(" + s + ")")
            elif isinstance(item, Tensor):
                results.append(_leaf_text(item))
            else:
                results.append("(" + str(item) + ")")
        return results[0]

    def pp(self):
        """Pretty print: the op-tree as an infix expression string."""
        return OpTreeNode._pretty_print(self)

    def asnumpyarray(self):
        """The evaluated op-tree as a NumPy array (allocates)."""
        return self.astensor().get()

    def astensor(self):
        """The evaluated op-tree as a new Tensor (allocates)."""
        be = None
        for s in self.traverse(list()):
            if isinstance(s, Tensor):
                be = s.backend
                break
        if be is None:
            raise ValueError("No tensor object in op_tree")
        buf = be.empty(self.shape)
        buf[:] = self
        return buf

    __hash__ = None


class _Emit:
    """A traverse work item: append `value` (an op dict) when popped."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class Block:
    """Identifies the phases of training and inference (for begin/end).

    Attributes: epoch, minibatch, fprop, bprop, update.
    """

    epoch, minibatch, fprop, bprop, update = list(range(5))


# ---------------------------------------------------------------------------
# Backend

class LegacyGenerator(np.random.Generator):
    """A NumPy Generator that also answers the np.random.RandomState names neon
    code calls on `be.rng` (randint, random_sample, rand, randn); uniform,
    normal, permutation, shuffle and choice are the Generator's own."""

    def randint(self, low, high=None, size=None, dtype=int):
        """Integers in [low, high), or [0, low) when high is None (RandomState.randint)."""
        return self.integers(low, high, size=size, dtype=dtype)

    def random_sample(self, size=None):
        """Floats in [0, 1) (RandomState.random_sample)."""
        return self.random(size)

    def rand(self, *shape):
        """Floats in [0, 1) of the given dimensions (RandomState.rand)."""
        return self.random(shape or None)

    def randn(self, *shape):
        """Standard normal values of the given dimensions (RandomState.randn)."""
        return self.standard_normal(shape or None)


class Backend:
    """The neon backend interface, implemented over arrayx.

    Element-wise functions, reductions and the like build op-trees: with
    `out=None` they return the op-tree, with `out=t` they execute it into `t`
    (and return `t`). Reductions keep their reduced axes. Allocation methods
    return tensors of `self.tensor_cls` on `self.device`.

    Random numbers: arrayx has no random primitive, so the backend draws them
    on the host from a NumPy Generator (`self.rng`, seeded with `rng_seed`) and
    uploads them with `xp.asarray`.

    Arguments:
        rng_seed (int, optional): seed of the random number generator.
        default_dtype (numpy dtype, optional): element type of new tensors (float16, float32 or float64).
        compat_mode (str, optional): 'caffe' or None.
        deterministic (bool, optional): deprecated; ignored with a warning.
    """

    backends = {}
    """Registered backend classes by name (the shim's modules register 'cpu', 'mkl', 'gpu')."""

    backend_name = None
    tensor_cls = Tensor
    device = None

    @staticmethod
    def backend_choices():
        """The names of the registered backends."""
        return sorted(Backend.backends.keys())

    @staticmethod
    def allocate_backend(name, **kargs):
        """An instance of the backend registered as `name`."""
        try:
            cls = Backend.backends[name]
        except KeyError:
            names = ", ".join("'%s'" % (n,) for n in Backend.backend_choices())
            raise ValueError("backend must be one of (%s)" % (names,)) from None
        return cls(**kargs)

    def __init__(self, rng_seed=None, default_dtype=np.float32, compat_mode=None, deterministic=None):
        try:
            d = np.dtype(default_dtype)
        except TypeError:
            raise ValueError(f"{type(self).__name__}: {default_dtype!r} is not a data type") from None
        if d not in _DEFAULT_DTYPES:
            raise ValueError(f"{type(self).__name__}: default data type must be float16, float32 or float64, "
                             f"got {d}")
        self.default_dtype = default_dtype
        if self.device is None:
            self.device = _default_device()
        self.rng_seed = rng_seed
        self.rng = self.gen_rng(rng_seed)
        self.bsz = None
        self._min_dims = 2
        if compat_mode is not None:
            if compat_mode == "caffe":
                self.set_caffe_compat()
            else:
                raise ValueError("%s mode not supported currently" % compat_mode)
        else:
            self.compat_mode = None
        if deterministic is not None:
            logger.warning("deterministic arg is deprecated in favor of specifying random seed")
        self.deterministic = self.rng_seed is not None

    def cleanup_backend(self):
        """Release any resources acquired by this backend (none: arrayx owns the buffers)."""

    # -- random numbers

    def gen_rng(self, seed=None):
        """Set up the host random number generator (a NumPy Generator seeded with
        `seed`, as `np.random.default_rng(seed)`, that also answers the
        RandomState names legacy code calls), remember its state for
        `rng_reset`, and return it."""
        self.rng = LegacyGenerator(np.random.PCG64(seed))
        self.init_rng_state = self.rng_get_state()
        return self.rng

    def rng_get_state(self):
        """The current state of the random number generator (a dict; a copy)."""
        import copy
        return copy.deepcopy(self.rng.bit_generator.state)

    def rng_set_state(self, state):
        """Restore a state returned by `rng_get_state`."""
        self.rng.bit_generator.state = state

    def rng_reset(self):
        """Reset the generator to its state when the backend was created (or gen_rng last ran)."""
        self.rng_set_state(self.init_rng_state)

    def _host_random(self, values, dtype):
        return xp.asarray(np.asarray(values, dtype=dtype), device=self.device)

    def make_binary_mask(self, out, keepthresh=0.5):
        """Fill `out` with a dropout mask: 1 with probability `keepthresh`, else 0."""
        mask = self.rng.uniform(size=out.shape) < keepthresh
        out._write(self._host_random(mask, out.dtype))
        out._force()
        return out

    def fill_normal(self, ary, mean=0, stdv=1):
        """Fill `ary` with normally distributed values (mean, standard deviation stdv)."""
        values = self.rng.standard_normal(size=ary.shape) * stdv + mean
        ary._write(self._host_random(values, np.float64))
        ary._force()
        return ary

    # -- compatibility and shapes

    def output_dim(self, X, S, padding, strides, pooling=False, dilation=1):
        """The output size along one dimension of a convolution or pooling of input
        size X, filter size S, padding (each side), strides and dilation."""
        return layers.output_dim(X, S, padding, strides, pooling, dilation, self.check_caffe_compat())

    def set_caffe_compat(self):
        """Match caffe's conv/pool output sizes and dropout."""
        self.compat_mode = "caffe"

    def check_caffe_compat(self):
        """Whether compat_mode is 'caffe'."""
        return self.compat_mode == "caffe"

    def iobuf(self, dim0, x=None, dtype=None, name=None, persist_values=True, shared=None, parallelism=None):
        """A zeroed input/output buffer of a layer: (dim0, batch size), where a tuple
        dim0 of two dimensions gives (dim0[0], dim0[1] * bsz) and a longer one
        (prod(dim0), bsz). Returns `x` when given; reuses `shared` memory when given."""
        if x is not None:
            return x
        if self.bsz is None:
            raise ValueError("iobuf: the backend has no batch size (pass batch_size to gen_backend or set be.bsz)")
        if isinstance(dim0, tuple):
            if len(dim0) == 2:
                bufshape = (dim0[0], dim0[1] * self.bsz)
            else:
                bufshape = (int(np.prod(dim0)), self.bsz)
        else:
            bufshape = (dim0, self.bsz)
        if shared is not None:
            out_tsr = shared if shared.shape == bufshape else shared.share(bufshape)
        else:
            out_tsr = self.empty(bufshape, dtype=dtype, name=name, persist_values=persist_values)
        out_tsr[:] = 0
        return out_tsr

    def shared_iobuf_size(self, shape, parallelism):
        """The number of elements of an iobuf of `shape` shared between layers."""
        num_dev = 1 if parallelism in ("Data", "Model") else getattr(self, "num_dev", 1)
        return num_dev * int(np.prod(shape))

    def distribute_data(self, tensor, layer_parallelism):
        """Multi-device backends distribute or gather here; single-device backends return None."""
        return None

    def revert_tensor(self, tensor):
        """Undo `distribute_data` (nothing to do on a single device)."""

    def convert_data(self, tensor, layer_mkl):
        """MKL layout conversion in neon; nothing to do here."""
        return None

    def clean_data(self, tensor, layer_mkl):
        """MKL buffer cleanup in neon; nothing to do here."""
        return None

    def allocate_new_deltas(self, delta, in_shape, parallelism):
        return delta

    def is_mkl(self):
        """False: no backend of the shim uses MKL's private data layouts."""
        return False

    def allocate_new_outputs(self, layer, share_output):
        layer.allocate(shared_outputs=share_output)

    # -- execution

    def execute(self, optree):
        """Execute an op-tree with 'assign' at its top: translate the value into one
        arrayx graph, write it into the target tensor and evaluate once.
        Returns the target tensor."""
        return _evaluate.execute(self, optree)

    def begin(self, block, identifier):
        """Signal the start of a block of repeated computation (no effect on results)."""

    def end(self, block, identifier):
        """Signal the end of a block of repeated computation (no effect on results)."""

    # -- timing marks (neon's benchmarks and callbacks time work between two marks)

    def init_mark(self):
        """A new timing mark, for `record_mark`."""
        return {"time": 0.0}

    def record_mark(self, marker):
        """Stamp `marker` with the current time."""
        marker["time"] = time.perf_counter()

    def synchronize_mark(self, marker):
        """Wait for the work recorded before `marker`: none is pending, since an
        op-tree assignment runs when it is made (lazy writes of scalars and host
        data run when the tensor is read, and are timed there)."""

    def get_time(self, start, end):
        """Milliseconds between the recorded marks `start` and `end`."""
        return (end["time"] - start["time"]) * 1000.0

    # -- allocation

    def _dtype(self, dtype, where):
        return np_dtype(self.default_dtype if dtype is None else dtype, where)

    def _new(self, array, npdt, name, persist_values):
        return self.tensor_cls._wrap(self, array, npdt, name, persist_values)

    def empty(self, shape, dtype=None, name=None, persist_values=True, parallel=False, distributed=False):
        """A new tensor of `shape` (its elements are zeros: arrayx has no uninitialized memory)."""
        return self.zeros(shape, dtype=dtype, name=name, persist_values=persist_values)

    def zeros(self, shape, dtype=None, name=None, persist_values=True, parallel=False, distributed=False):
        """A new tensor of `shape` filled with 0."""
        npdt = self._dtype(dtype, "zeros")
        shape = _normalize_shape(shape, "zeros")
        return self._new(xp.zeros(shape, dtype=_DTYPES[npdt], device=self.device), npdt, name, persist_values)

    def ones(self, shape, dtype=None, name=None, persist_values=True, parallel=False, distributed=False):
        """A new tensor of `shape` filled with 1."""
        npdt = self._dtype(dtype, "ones")
        shape = _normalize_shape(shape, "ones")
        return self._new(xp.ones(shape, dtype=_DTYPES[npdt], device=self.device), npdt, name, persist_values)

    def array(self, ary, dtype=None, name=None, persist_values=True, parallel=False, distributed=False):
        """A new tensor holding a copy of `ary` (NumPy array, nested lists, scalar),
        with at least two dimensions ((n,) becomes (n, 1))."""
        npdt = self._dtype(dtype, "array")
        array = _to_array(ary, npdt, self.device, "array")
        while array.ndim < self._min_dims:
            array = xp.reshape(array, array.shape + (1,))
        return self._new(array, npdt, name, persist_values)

    def empty_like(self, other_ary, dtype=None, name=None, persist_values=True):
        """A new tensor with the shape of `other_ary` (a Tensor, NumPy array or op-tree)."""
        return self.zeros(other_ary.shape, dtype=dtype, name=name, persist_values=persist_values)

    def zeros_like(self, other_ary, dtype=None, name=None, persist_values=True):
        """A new tensor of zeros with the shape of `other_ary`."""
        return self.zeros(other_ary.shape, dtype=dtype, name=name, persist_values=persist_values)

    def ones_like(self, other_ary, dtype=None, name=None, persist_values=True):
        """A new tensor of ones with the shape of `other_ary`."""
        return self.ones(other_ary.shape, dtype=dtype, name=name, persist_values=persist_values)

    # -- products

    def compound_dot(self, A, B, C, alpha=1.0, beta=0.0, relu=False, bsum=None):
        """C = alpha * A . B + beta * C (A or B may be transposed views).

        relu: applied to alpha * A . B before beta * C is added. bsum: if given,
        receives the row sums of C. Executes at once; returns C.
        """
        if not (A.dtype == B.dtype == C.dtype):
            raise TypeError(f"compound_dot: dtypes differ (A {A.dtype}, B {B.dtype}, C {C.dtype})")
        if not (len(A.shape) == len(B.shape) == len(C.shape) == 2 and A.shape[0] == C.shape[0]
                and B.shape[1] == C.shape[1] and A.shape[1] == B.shape[0]):
            raise ValueError(f"compound_dot: shapes do not match: A {A.shape}, B {B.shape}, C {C.shape}")
        product = xp.matmul(A._read(), B._read())
        _evaluate.commit(C, _dot_epilogue(product, alpha, relu, beta, C), (A, B, C))
        if bsum is not None:
            self.sum(C, axis=1, out=bsum)
        return C

    def batched_dot(self, A, B, C, alpha=1.0, beta=0.0, relu=False):
        """Batched products (one of A, B has a leading batch axis):

        fprop: A (K, C), B (X, C, N) -> C (X, K, N)
        bprop: A.T (C, K), B (X, K, N) -> C (X, C, N)
        update: A (X, K, N), B.T (X, N, C) -> C (K, C), summed over the batch.

        C = relu(alpha * product) + beta * C. Executes at once; returns C.
        """
        if not (A.dtype == B.dtype == C.dtype):
            raise TypeError(f"batched_dot: dtypes differ (A {A.dtype}, B {B.dtype}, C {C.dtype})")
        dima, dimb, dimc = len(A.shape) == 3, len(B.shape) == 3, len(C.shape) == 3
        if not (dima or dimb):
            raise ValueError("batched_dot: Tensor A or B must have 3 dims")
        ia, ib, ic = int(dima), int(dimb), int(dimc)
        if not (A.shape[ia] == C.shape[ic] and B.shape[1 + ib] == C.shape[1 + ic] and A.shape[1 + ia] == B.shape[ib]):
            raise ValueError(f"batched_dot: shapes do not match: A {A.shape}, B {B.shape}, C {C.shape}")
        if dima and dimb and A.shape[0] != B.shape[0]:
            raise ValueError(f"batched_dot: batch sizes differ: A {A.shape}, B {B.shape}")
        product = xp.matmul(A._read(), B._read())
        if dima and not dimc:
            product = xp.sum(product, axis=0)
        elif dimc and not (dima or dimb):
            raise ValueError("batched_dot: a 3-D C needs a 3-D operand")
        _evaluate.commit(C, _dot_epilogue(product, alpha, relu, beta, C), (A, B, C))
        return C

    def xnor_compound_dot(self, A, B, C, beta=0.0, bsum=None):
        """C = A . B (neon's CPU backend computes the XNOR GEMM as an ordinary product)."""
        self.compound_dot(A, B, C, bsum=bsum)
        return C

    def copy_transpose(self, a, out, axes=None, repeat=1):
        """out = a with its axes permuted (reversed when axes is None)."""
        array = a._read()
        axes = tuple(reversed(range(array.ndim))) if axes is None else tuple(axes)
        _evaluate.commit(out, xp.permute_dims(array, axes), (a, out))
        return out

    # -- element-wise (op-trees)

    def reciprocal(self, a, out=None):
        """1 / a"""
        return OpTreeNode.build("div", 1., a, out=out)

    def binarize(self, a, stochastic=True, out=None):
        """+1 / -1: deterministic: sign (a >= 0 gives +1); stochastic: +1 with
        probability clip((a + 1) / 2, 0, 1), drawn from the backend's generator."""
        return OpTreeNode.build("binarize", a, None, stochastic=stochastic, out=out)

    def shift(self, a, b, value=True, out=None):
        """a shifted by b: value=True multiplies by sign(b) * 2 ** rint(log2|b|)
        (b rounded to a power of two), value=False by 2 ** b."""
        return OpTreeNode.build("shift", a, b, value=value, out=out)

    def clip(self, a, a_min, a_max, out=None):
        """a clipped into [a_min, a_max]"""
        return self.minimum(self.maximum(a, a_min), a_max, out=out)

    # -- reductions (op-trees; reduced axes are kept with size 1)

    def sum(self, a, axis=None, out=None, keepdims=True):
        """Sum along `axis` (all axes when None)."""
        if axis is None:
            return OpTreeNode.build("sum", OpTreeNode.build("sum", a, None, axis=0), None, axis=1, out=out)
        return OpTreeNode.build("sum", a, None, axis=axis, out=out)

    def max(self, a, axis=None, out=None, keepdims=True):
        """Maximum along `axis` (all axes when None)."""
        if axis is None:
            return OpTreeNode.build("max", OpTreeNode.build("max", a, None, axis=0), None, axis=1, out=out)
        return OpTreeNode.build("max", a, None, axis=axis, out=out)

    def min(self, a, axis=None, out=None, keepdims=True):
        """Minimum along `axis` (all axes when None)."""
        if axis is None:
            return OpTreeNode.build("min", OpTreeNode.build("min", a, None, axis=0), None, axis=1, out=out)
        return OpTreeNode.build("min", a, None, axis=axis, out=out)

    def argmax(self, a, axis=1, out=None, keepdims=True):
        """Index of the first maximum along `axis` (of the flattened operand when None)."""
        return OpTreeNode.build("argmax", a, None, axis=axis, out=out)

    def argmin(self, a, axis=1, out=None, keepdims=True):
        """Index of the first minimum along `axis` (of the flattened operand when None)."""
        return OpTreeNode.build("argmin", a, None, axis=axis, out=out)

    def mean(self, a, axis=None, partial=None, out=None, keepdims=True):
        """Arithmetic mean along `axis` (all axes when None)."""
        shape = a.shape
        if axis is None:
            return self.multiply(self.sum(a), 1.0 / (shape[0] * shape[1]), out=out)
        return self.multiply(self.sum(a, axis=axis), 1.0 / shape[axis], out=out)

    def var(self, a, axis=None, partial=None, out=None, keepdims=True, binary=False):
        """Variance along `axis` (all axes when None); binary=True squares by `shift`."""
        if binary:
            def op(x):
                return self.shift(x, x)
        else:
            op = self.square
        if axis is None:
            return self.mean(op(a - self.mean(a)), out=out)
        return self.mean(op(a - self.mean(a, axis=axis)), axis=axis, out=out)

    def std(self, a, axis=None, partial=None, out=None, keepdims=True):
        """Standard deviation along `axis` (all axes when None)."""
        return self.sqrt(self.var(a, axis=axis, partial=partial), out=out)

    # -- selection

    def take(self, a, indices, axis, out=None):
        """The elements of `a` at `indices` along `axis` (a new tensor, or written to out)."""
        return a.take(indices, axis, out)

    def onehot(self, indices, axis, out=None):
        """One-hot op-tree of integer `indices` (int32 or uint32): with axis=0 the
        result has one column per index (out[indices[i], i] = 1), with axis=1
        one row per index (out[i, indices[i]] = 1). The result's other extent is
        the target's, so the op-tree takes its shape on assignment."""
        if axis not in (0, 1):
            raise ValueError("bad axis for onehot")
        if indices.dtype not in (np.dtype(np.int32), np.dtype(np.uint32)):
            raise TypeError("onehot indices should be int32 or uint32, got " + str(indices.dtype))
        return OpTreeNode.build("onehot", None, None, idx=indices, axis=axis, out=out)

    # -- fully connected layers

    def update_fc_bias(self, err, out):
        """out = the row sums of err (the bias gradient of a fully connected layer)."""
        self.sum(err, axis=1, out=out)

    def add_fc_bias(self, inputs, bias):
        """inputs += bias (broadcast along the batch)."""
        self.add(inputs, bias, out=inputs)

    # -- layer kernels (neon's conv, pool, recurrent and lookup-table kernels,
    #    built as lazy graphs by arrayx.neon.layers and written into the output
    #    tensors in place; each method executes at once, in one plan)

    def conv_layer(self, dtype, N, C, K, D=1, H=1, W=1, T=1, R=1, S=1,
                   pad_d=0, pad_h=0, pad_w=0, str_d=1, str_h=1, str_w=1,
                   relu=False, bsum=False, *, dil_d=1, dil_h=1, dil_w=1):
        """A ConvLayer parameter object for the conv kernels (the seed's order;
        neon 2.x's dilations by keyword; the relu/bsum flags are recorded only)."""
        return layers.conv_layer(dtype, N, C, K, D, H, W, T, R, S, pad_d, pad_h, pad_w,
                                 str_d, str_h, str_w, relu=relu, bsum=bsum,
                                 dil_d=dil_d, dil_h=dil_h, dil_w=dil_w)

    def deconv_layer(self, dtype, N, C, K, P, Q, R=1, S=1,
                     pad_d=0, pad_h=0, pad_w=0, str_d=1, str_h=1, str_w=1,
                     dil_d=1, dil_h=1, dil_w=1, M=1, T=1):
        """A DeconvLayer parameter object: K input maps of M x P x Q, C output
        maps (the seed's order; neon 2.x's M and T by keyword). neon runs a
        deconvolution with the conv kernels: fprop is bprop_conv, bprop is
        fprop_conv, update is update_conv with input and error exchanged."""
        return layers.deconv_layer(dtype, N, C, K, P, Q, R, S, pad_d, pad_h, pad_w,
                                   str_d, str_h, str_w, dil_d, dil_h, dil_w, M=M, T=T)

    def pool_layer(self, dtype, op, N, C, D=1, H=1, W=1, J=1, T=1, R=1, S=1,
                   pad_j=0, pad_d=0, pad_h=0, pad_w=0,
                   str_j=None, str_d=None, str_h=None, str_w=None, pad_c=None, str_c=None):
        """A PoolLayer parameter object ('max', 'avg' or 'l2' over J x T x R x S
        windows; strides default to the window). neon 2.x spells pad_j/str_j
        pad_c/str_c; output sizes follow caffe's rule in caffe compat mode."""
        return layers.pool_layer(dtype, op, N, C, D, H, W, J, T, R, S, pad_j, pad_d, pad_h, pad_w,
                                 str_j, str_d, str_h, str_w, pad_c=pad_c, str_c=str_c,
                                 caffe_compat=self.check_caffe_compat())

    def fprop_conv(self, layer, I, F, O, alpha=1.0, relu=False, repeat=1, *, X=None, bias=None,
                   bsum=None, beta=0.0, brelu=False, slope=0.0, layer_op=None):
        """O = alpha * conv(I, F) + beta * X (X defaults to O), then + bias (K, 1),
        then relu (max(O, 0) + slope*min(O, 0)) or brelu (O * ((X > 0) + slope*(X < 0)));
        bsum (K, 1), when given, receives O summed over all but its K axis.

        I, F, O: ``layer.dimI``/``dimF``/``dimO`` or neon's 2-D views. The seed's
        positional order; neon 2.x's extra parameters are keyword-only (its own
        layers pass them so). repeat and layer_op are ignored."""
        self._xprop_conv("fprop_conv", ("I", "F", "O"), layers.fprop_conv, "K",
                         layer, I, F, O, X, bias, bsum, alpha, beta, relu, brelu, slope)

    def bprop_conv(self, layer, F, E, grad_I, alpha=1.0, repeat=1, *, X=None, bias=None, bsum=None,
                   beta=0.0, relu=False, brelu=False, slope=0.0, layer_op=None):
        """grad_I = alpha * (the gradient of the convolution wrt its input, from
        errors E) + beta * X, with fprop_conv's compounding (bias and bsum of
        shape (C, 1)). F: ``dimF``, E: ``dimO``, grad_I: ``dimI`` (or 2-D views)."""
        self._xprop_conv("bprop_conv", ("F", "E", "grad_I"), layers.bprop_conv, "C",
                         layer, F, E, grad_I, X, bias, bsum, alpha, beta, relu, brelu, slope)

    def _xprop_conv(self, where, names, kernel, maps, layer, A, B, out, X, bias, bsum,
                    alpha, beta, relu, brelu, slope):
        """fprop_conv and bprop_conv: `kernel` of arrayx.neon.layers on (A, B),
        written into `out`; bsum sums over all but the `maps` axis (K or C)."""
        _check_layer(where, layer, layers.ConvLayer, "conv_layer() or deconv_layer()")
        if isinstance(alpha, Tensor):
            raise TypeError(f"{where}: alpha must be a real number, got a Tensor (the seed's positional "
                            "order; pass neon 2.x's X, bias and bsum by keyword)")
        for argname, t in zip(names, (A, B, out)):
            _check_tensor(where, argname, t)
        for argname, t in (("X", X), ("bias", bias), ("bsum", bsum)):
            _check_tensor(where, argname, t, optional=True)
        result = kernel(layer, A._read(), B._read(), out._read(), alpha=_real(where, "alpha", alpha),
                        beta=_real(where, "beta", beta), X=_read(X), bias=_read(bias), relu=relu,
                        brelu=brelu, slope=_real(where, "slope", slope))
        writes = [(out, result)]
        if bsum is not None:
            writes.append((bsum, _map_sums(result, getattr(layer, maps), bsum.shape, where, "bsum")))
        _commit_all(writes, (A, B, X, bias))

    def update_conv(self, layer, I, E, grad_F=None, alpha=1.0, repeat=1, *, beta=0.0, grad_bias=None,
                    layer_op=None, U=None):
        """grad_F = alpha * (the filter gradient from inputs I and errors E) + beta * grad_F,
        in grad_F's layout (``dimF`` or ``dimF2``); grad_bias (K, 1), when given,
        receives E summed over all but its K axis. The seed's positional order;
        neon 2.x's extra parameters are keyword-only, and its CPU name for
        grad_F, U, is accepted by keyword."""
        where = "update_conv"
        if (U is None) == (grad_F is None):
            raise TypeError(f"{where}: pass the output tensor once, as grad_F or U")
        U = U if U is not None else grad_F
        _check_layer(where, layer, layers.ConvLayer, "conv_layer() or deconv_layer()")
        for argname, t in (("I", I), ("E", E), ("U", U)):
            _check_tensor(where, argname, t)
        _check_tensor(where, "grad_bias", grad_bias, optional=True)
        result = layers.update_conv(layer, I._read(), E._read(), U._read(), alpha=_real(where, "alpha", alpha),
                                    beta=_real(where, "beta", beta))
        writes = [(U, result)]
        if grad_bias is not None:
            writes.append((grad_bias, _map_sums(E._read(), layer.K, grad_bias.shape, where, "grad_bias")))
        _commit_all(writes, (I, E))

    def fprop_pool(self, layer, I, O, argmax=None, beta=0.0, alpha=1.0, repeat=1):
        """O = alpha * pool(I) + beta * O (max, avg over each window's real
        elements, or l2). For max pooling, argmax (``dimO``, integer in neon),
        when given, receives each window's first maximum as an offset into the
        window flattened over (J, T, R, S), padding included; bprop_pool reads it.
        neon 2.x's CPU order (alpha, from its GPU backend, by keyword)."""
        where = "fprop_pool"
        _check_layer(where, layer, layers.PoolLayer, "pool_layer()")
        _check_tensor(where, "I", I)
        _check_tensor(where, "O", O)
        _check_tensor(where, "argmax", argmax, optional=True)
        values = I._read()
        result = layers.fprop_pool(layer, values, O._read(), alpha=_real(where, "alpha", alpha),
                                   beta=_real(where, "beta", beta))
        writes = [(O, result)]
        if argmax is not None and layer.op == "max":
            if argmax.size != layer.sizeO:
                raise ValueError(f"{where}: argmax has shape {argmax.shape}; it needs the {layer.sizeO} "
                                 f"elements of layer.dimO {layer.dimO}")
            writes.append((argmax, xp.reshape(layers.pool_argmax(layer, values), argmax.shape)))
        _commit_all(writes, (I,))

    def bprop_pool(self, layer, I, E=None, grad_I=None, alpha=1.0, beta=0.0, repeat=1, *, O=None, argmax=None):
        """grad = alpha * (the pooling gradient) + beta * grad: max routes each
        error to its window's first maximum, avg spreads it evenly over the
        window's real elements; overlapping windows accumulate.

        The seed's order ``(layer, I, E, grad_I)``: I the fprop input (its
        maxima are found again), E the error (``dimO``), grad_I the gradient
        (``dimI``). neon 2.x's order ``(layer, I, O, argmax, alpha, beta)`` takes
        the same positions with I the error, O the gradient and argmax the
        integer buffer fprop_pool filled; it is read so when O or argmax is
        passed by keyword, or the fourth argument is None or an integer tensor."""
        where = "bprop_pool"
        _check_layer(where, layer, layers.PoolLayer, "pool_layer()")
        neon2 = O is not None or argmax is not None or grad_I is None or (
            isinstance(grad_I, Tensor) and grad_I.dtype.kind in "biu")
        if neon2:
            if (O is not None and E is not None) or (argmax is not None and grad_I is not None):
                raise TypeError(f"{where}: pass the gradient and argmax once each, in the seed's order "
                                "(layer, I, E, grad_I) or neon 2.x's (layer, I, O, argmax)")
            fprop_in, error = None, I
            out = O if O is not None else E
            argmax = argmax if argmax is not None else grad_I
            names = (None, "I (the error)", "O (the gradient)")
        else:
            fprop_in, error, out = I, E, grad_I
            names = ("I", "E", "grad_I")
        for argname, t in zip(names, (fprop_in, error, out)):
            if argname is not None:
                _check_tensor(where, argname, t)
        _check_tensor(where, "argmax", argmax, optional=True)
        result = layers.bprop_pool(layer, _read(fprop_in), error._read(), out._read(),
                                   alpha=_real(where, "alpha", alpha), beta=_real(where, "beta", beta),
                                   argmax=_read(argmax))
        _commit_all([(out, result)], (fprop_in, error, argmax))

    def compound_rnn_unroll_fprop(self, W_recur, h_prev_s, h_ff_s, h_s, bias, nout, num_steps,
                                  num_used_steps, activation, reverse=False):
        """For each used step t (last to first when reverse):
        h_s[t] = activation(W_recur . h_prev_s[t] + h_ff_s[t] + bias), where
        h_ff_s[t] may be h_s[t] itself (the feed-forward part already in place).

        The lists hold (nout, N) views of one buffer, as neon's recurrent layers
        build them: an entry of h_prev_s viewing the elements of h_s[j] reads
        that step as the unrolling leaves it (whether or not it is the same view
        object). activation: a neon Transform (calls and bprop on tensors) or a
        name in ``arrayx.neon.layers.ACTIVATIONS``. nout is unused."""
        where = "compound_rnn_unroll_fprop"
        h_s, h_prev_s, h_ff_s = (_tensor_list(where, n, v) for n, v in
                                 (("h_s", h_s), ("h_prev_s", h_prev_s), ("h_ff_s", h_ff_s)))
        _check_tensor(where, "W_recur", W_recur)
        _check_tensor(where, "bias", bias, optional=True)
        prev_steps, ff_steps = _step_aliases(where, "h_s", h_s, (("h_prev_s", h_prev_s), ("h_ff_s", h_ff_s)))
        hs = [t._read() for t in h_s]
        prev = [j if isinstance(j, int) else t._read() for j, t in zip(prev_steps, h_prev_s)]
        ff = []
        for t, (j, tensor) in enumerate(zip(ff_steps, h_ff_s)):
            if isinstance(j, int) and j != t:
                raise ValueError(f"{where}: h_ff_s[{t}] views step {j} of h_s; only its own step "
                                 "(the feed-forward part accumulated in place) can alias h_s")
            # layers.py recognises the in-place feed-forward by identity
            ff.append(hs[t] if j == t else tensor._read())
        new = layers.compound_rnn_unroll_fprop(W_recur._read(), prev, ff, hs, _read(bias), nout, num_steps,
                                               num_used_steps, self._array_activation(activation, where),
                                               reverse=reverse)
        order = range(len(h_s) - 1, -1, -1) if reverse else range(len(h_s))
        writes = [(h_s[t], new[t]) for t in order if new[t] is not hs[t]]
        _commit_all(writes, [W_recur, bias] + h_prev_s + h_ff_s)

    def compound_rnn_unroll_bprop(self, W_recur, delta_prev_s, delta_s, h_s, nout, num_steps,
                                  num_used_steps, activation, reverse=True):
        """For each used step t (last to first when reverse, the default):
        delta_s[t] = activation.bprop(h_s[t]) * delta_s[t], then
        delta_prev_s[t] += W_recur . delta_s[t] (neon passes the transposed
        recurrent weights). Entries of delta_prev_s viewing a step of delta_s
        accumulate into that step, as in neon's in-place loop; views of the same
        other buffer are one buffer. nout is unused."""
        where = "compound_rnn_unroll_bprop"
        delta_s, delta_prev_s, h_s = (_tensor_list(where, n, v) for n, v in
                                      (("delta_s", delta_s), ("delta_prev_s", delta_prev_s), ("h_s", h_s)))
        _check_tensor(where, "W_recur", W_recur)
        prev_steps, h_steps = _step_aliases(where, "delta_s", delta_s,
                                            (("delta_prev_s", delta_prev_s), ("h_s", h_s)))
        for t, j in enumerate(h_steps):
            if isinstance(j, int):
                raise ValueError(f"{where}: h_s[{t}] views step {j} of delta_s, which the unrolling rewrites")
        ds = [t._read() for t in delta_s]
        # separate buffers are one array per distinct element set, so that two
        # views of one buffer accumulate together
        own = {}
        prev = [j if isinstance(j, int) else own.setdefault(j, t._read())
                for j, t in zip(prev_steps, delta_prev_s)]
        new_d, new_prev = layers.compound_rnn_unroll_bprop(W_recur._read(), prev, ds, [t._read() for t in h_s],
                                                          nout, num_steps, num_used_steps,
                                                          self._array_activation(activation, where),
                                                          reverse=reverse)
        order = range(len(delta_s) - 1, -1, -1) if reverse else range(len(delta_s))
        writes = [(delta_s[t], new_d[t]) for t in order if new_d[t] is not ds[t]]
        done = set()
        for tensor, j, old, value in zip(delta_prev_s, prev_steps, prev, new_prev):
            if not isinstance(j, int) and value is not old and j not in done:
                done.add(j)
                writes.append((tensor, value))
        _commit_all(writes, [W_recur] + h_s)

    def _array_activation(self, activation, where):
        """`activation` for arrayx.neon.layers: a name or one of its ACTIVATIONS as
        it is; a neon Transform (whose call and bprop build op-trees from tensors)
        lifted to arrayx arrays, each call wrapping its array in a temporary
        tensor and translating the op-tree lazily."""
        if isinstance(activation, (str, layers._Activation)):
            return activation
        if not callable(activation) or not callable(getattr(activation, "bprop", None)):
            raise TypeError(f"{where}: activation must be a neon Transform (callable, with a bprop method) "
                            f"or one of {sorted(layers.ACTIVATIONS)}, got {type(activation).__name__}")

        def lift(fn):
            def apply(array):
                tree = fn(self.tensor_cls._wrap(self, array, np.dtype(array.dtype.dtype)))
                return _evaluate.translate(self, tree, array.shape)[0]
            return apply
        return layers._Activation(type(activation).__name__, lift(activation), lift(activation.bprop))

    def compound_bprop_lut(self, nin, inputs, error, error_t, dW, pad_idx, alpha=1.0, beta=0):
        """Lookup-table bprop: dW[ids[j], :] += alpha * error[:, j] for every column
        j whose word id (inputs, (1, nin*N)) is not pad_idx; repeated ids
        accumulate. error is (embedding_dim, nin*N); when None, error_t
        (nin*N, embedding_dim) is read instead. nin and beta are unused (neon's
        layer zeroes dW before the call)."""
        where = "compound_bprop_lut"
        _check_tensor(where, "inputs", inputs)
        _check_tensor(where, "error", error, optional=True)
        _check_tensor(where, "error_t", error_t, optional=True)
        _check_tensor(where, "dW", dW)
        result = layers.compound_bprop_lut(nin, inputs._read(), _read(error), _read(error_t), dW._read(),
                                           pad_idx, alpha=_real(where, "alpha", alpha), beta=beta)
        _commit_all([(dW, result)], (inputs, error, error_t))


def _dot_epilogue(product, alpha, relu, beta, C):
    """neon's compounding of a product into C: relu(alpha * product) + beta * C."""
    if alpha != 1.0:
        product = product * float(alpha)
    if relu:
        product = xp.maximum(product, 0.0)
    if beta != 0:
        product = product + C._read() * float(beta)
    return product


# ---------------------------------------------------------------------------
# helpers of the layer-kernel methods

def _check_tensor(where, argname, value, optional=False):
    if value is None and optional:
        return
    if not isinstance(value, Tensor):
        raise TypeError(f"{where}: {argname} must be a Tensor{' or None' if optional else ''}, "
                        f"got {type(value).__name__}")


def _check_layer(where, layer, cls, maker):
    if not isinstance(layer, cls):
        raise TypeError(f"{where}: layer must be the parameter object of {maker}, got {type(layer).__name__}")


def _real(where, argname, value):
    if not isinstance(value, numbers.Real):
        raise TypeError(f"{where}: {argname} must be a real number, got {type(value).__name__}")
    return float(value)


def _read(tensor):
    return None if tensor is None else tensor._read()


def _tensor_list(where, argname, value):
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{where}: {argname} must be a list of Tensors (one per time step), "
                        f"got {type(value).__name__}")
    for i, t in enumerate(value):
        _check_tensor(where, f"{argname}[{i}]", t)
    return list(value)


def _map_sums(array, maps, shape, where, argname):
    """`array` summed over all but its leading `maps` axis, as (maps, 1) (neon's bsum)."""
    if math.prod(shape) != maps:
        raise ValueError(f"{where}: {argname} has shape {shape}; it needs {maps} elements (one per map)")
    return xp.sum(xp.reshape(array, (maps, -1)), axis=1, keepdims=True)


def _commit_all(writes, reads):
    """Write each (tensor, value) in order, then force the written storages with
    those of the tensors read (None allowed), in one plan, as `_evaluate.commit`
    does for one output."""
    if not writes:
        return
    for tensor, value in writes:
        tensor._write(value)
    storages = {id(t._storage): t._storage for t in [w for w, _ in writes] + list(reads) if t is not None}
    _evaluate.force(writes[0][0], list(storages.values()))


def _flat_indices(tensors):
    """For each tensor, the positions in its storage (flattened) of its elements,
    in the tensor's C order: two views alias exactly when these agree. One plan
    over index arrays (the storages' values are not read)."""
    bases, arrays = {}, []
    for t in tensors:
        base = bases.get(id(t._storage))
        if base is None:
            shape = t._storage.array.shape
            base = bases[id(t._storage)] = st.Storage(
                xp.reshape(xp.arange(math.prod(shape), dtype=xp.int64, device=t._device), shape))
        arrays.append(st.read(base, t._chain))
    xp.eval(*arrays)
    return [np.asarray(a).reshape(-1) for a in arrays]


def _step_aliases(where, stepname, steps, named_lists):
    """Which step of `steps` (tensor views written by an unrolling) each tensor of
    the (argname, tensors) lists views: for each list, per tensor, the step index
    (an int) when it covers exactly that step's elements, else a hashable key of
    its elements (equal keys: one buffer). A tensor that overlaps the steps in any
    other way raises ValueError: neon would read a buffer its loop half rewrote."""
    flat = _flat_indices(list(steps) + [t for _, ts in named_lists for t in ts])
    step_of, covered = {}, {}
    for j, (t, idx) in enumerate(zip(steps, flat)):
        step_of.setdefault((id(t._storage), idx.tobytes()), j)
        mask = covered.get(id(t._storage))
        if mask is None:
            mask = covered[id(t._storage)] = np.zeros(math.prod(t._storage.array.shape), dtype=bool)
        mask[idx] = True
    results, pos = [], len(steps)
    for argname, ts in named_lists:
        out = []
        for i, t in enumerate(ts):
            idx = flat[pos]
            pos += 1
            key = (id(t._storage), idx.tobytes())
            if key in step_of:
                out.append(step_of[key])
                continue
            mask = covered.get(id(t._storage))
            if mask is not None and mask[idx].any():
                raise ValueError(f"{where}: {argname}[{i}] overlaps the steps of {stepname} without viewing "
                                 f"exactly one of them")
            out.append(key)
        results.append(out)
    return results


# Backend methods that are one neon op each: name -> (op, docstring). Each
# returns the op-tree, or executes it into `out` when given.
BINARY_OPS = {
    "dot": ("dot", "Matrix product of two 2-D operands (op-tree)."),
    "add": ("add", "a + b"),
    "subtract": ("sub", "a - b"),
    "multiply": ("mul", "a * b"),
    "divide": ("div", "a / b"),
    "true_divide": ("div", "a / b (alias of divide)"),
    "power": ("pow", "a ** b"),
    "equal": ("eq", "a == b (1 or 0)"),
    "not_equal": ("ne", "a != b (1 or 0)"),
    "less": ("lt", "a < b (1 or 0)"),
    "less_equal": ("le", "a <= b (1 or 0)"),
    "greater": ("gt", "a > b (1 or 0)"),
    "greater_equal": ("ge", "a >= b (1 or 0)"),
    "maximum": ("maximum", "element-wise maximum"),
    "minimum": ("minimum", "element-wise minimum"),
}
UNARY_OPS = {
    "negative": ("neg", "-a"),
    "sgn": ("sgn", "sign of a (-1, 0, 1)"),
    "absolute": ("abs", "|a|"),
    "fabs": ("abs", "|a| (alias of absolute)"),
    "sqrt": ("sqrt", "square root of a"),
    "square": ("sqr", "a squared"),
    "exp": ("exp", "e ** a"),
    "exp2": ("exp2", "2 ** a"),
    "safelog": ("safelog", "log(max(a, exp(-50))): a natural logarithm safe from underflow"),
    "log": ("log", "natural logarithm of a"),
    "log2": ("log2", "base-2 logarithm of a"),
    "sig": ("sig", "logistic sigmoid 1 / (1 + exp(-a))"),
    "sig2": ("sig2", "base-2 sigmoid 1 / (1 + 2 ** -a)"),
    "tanh": ("tanh", "hyperbolic tangent of a"),
    "tanh2": ("tanh2", "base-2 hyperbolic tangent (2 ** 2a - 1) / (2 ** 2a + 1)"),
    "finite": ("finite", "1 where a is finite (not inf, not nan), else 0"),
    "rint": ("rint", "a rounded to the nearest integer (halves to even)"),
}


def _op_method(name, op, doc, binary):
    if binary:
        def method(self, a, b, out=None):
            return OpTreeNode.build(op, a, b, out=out)
    else:
        def method(self, a, out=None):
            return OpTreeNode.build(op, a, None, out=out)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = doc
    return method


for _name, (_op, _doc) in BINARY_OPS.items():
    setattr(Backend, _name, _op_method(_name, _op, _doc, True))
for _name, (_op, _doc) in UNARY_OPS.items():
    setattr(Backend, _name, _op_method(_name, _op, _doc, False))


from . import _evaluate  # noqa: E402  (execute and commit use the classes above)
