"""neon's op-trees: `OpTreeNode`, a tuple `(op_dict, left, right)` built by the
Python operators of tensors and op-trees and by a backend's functions.

Nothing runs while a tree is built. Assigning one (`t[:] = tree`, `out=`
arguments) is the force point: the backend translates the whole tree into
one arrayx graph, writes it into the target and evaluates it once
(`_evaluate`). Op-trees know tensors as `TensorBase`, the base of the
backend's `Tensor` (tensor.py): a leaf with a shape, a name and a backend.
"""

import numpy as np


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


class OpTreeOperators:
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


class TensorBase(OpTreeOperators):
    """A tensor as op-trees hold it: a leaf with `shape`, `name` and `backend`
    (the backend's `Tensor`, tensor.py, is the one kind)."""

    __slots__ = ()


def _operand_shape(x):
    """The shape of an op-tree operand: an op-tree's, a tensor's, or (1, 1) for a scalar."""
    if isinstance(x, OpTreeNode):
        return x[0]["shape"]
    if isinstance(x, TensorBase):
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
    if isinstance(x, TensorBase):
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


class OpTreeNode(OpTreeOperators, tuple):
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
            elif isinstance(s, TensorBase):
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
            if not isinstance(arg, (int, float, TensorBase, OpTreeNode, type(None))):
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
        if not isinstance(self[1], TensorBase):
            raise TypeError(f"execute: can only assign to a Tensor, not {type(self[1]).__name__}")
        backend = self[1].backend
        if callable(getattr(backend, "execute", None)):   # a neon backend (backend.Backend)
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
            elif isinstance(item, TensorBase):
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
            if isinstance(s, TensorBase):
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
