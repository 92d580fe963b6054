"""ngraph's ops over arrayx arrays, and its elementwise functions.

A `TensorOp` is an arrayx array (a lazy graph node) with the `Axes` that
label its dimensions, in order. Ops remember the ops they were built from
(`args`), as ngraph's did, so `op.variables()` finds the variables a value
depends on. Elementwise binary operations pair their operands' axes by name:
the result has the right operand's axes when they include all of the left's,
otherwise the left's followed by the right's others (ngraph's rule), and each
operand is transposed and broadcast to them with arrayx ops.

Element types default to float32, ngraph's default. Comparisons give float32
0/1 values, as ngraph's did; arithmetic follows arrayx's type promotion.
"""

import itertools
import numbers

import numpy as np

import arrayx as xp

from .. import dtypes as dt
from ..namespace.array_object import Array
from .axes import make_axes, make_axis

DEFAULT_DTYPE = dt.float32
# safelog's floor (ngraph's safelog_cutoff): log values stop at -50.
SAFELOG_CUTOFF = 50.0

_names = itertools.count()


def arrayx_dtype(dtype, fn):
    """The arrayx dtype for an ngraph `dtype` argument (None: float32; a NumPy
    dtype or type, or an arrayx dtype)."""
    if dtype is None:
        return DEFAULT_DTYPE
    if isinstance(dtype, dt.DType):
        return dtype
    try:
        found = dt.FROM_NUMPY.get(np.dtype(dtype))
    except TypeError:
        found = None
    if found is None:
        raise TypeError(f"{fn}: dtype must be a NumPy or arrayx numeric dtype, got {dtype!r}")
    return found


def fresh_name(prefix):
    """A name no other op was given by default: prefix_<n>."""
    return f"{prefix}_{next(_names)}"


class Op:
    """A node of an ngraph op graph; `args` are the ops it was built from."""

    def __init__(self, args=(), name=None):
        self.args = tuple(args)
        self.name = name if name is not None else fresh_name(type(self).__name__)

    def named(self, name):
        """Set the op's name; returns the op."""
        self.name = name
        return self

    def variables(self):
        """The variables this op depends on, in the order a depth-first walk
        of its arguments meets them."""
        return [op for op in ordered_ops([self]) if isinstance(op, TensorOp) and op.kind == "variable"]

    def placeholders(self):
        """The placeholders this op depends on, in the same order."""
        return [op for op in ordered_ops([self]) if isinstance(op, TensorOp) and op.kind == "placeholder"]

    def assignments(self):
        """The assignments (AssignOps) a computation returning this op
        carries out."""
        return []

    def __repr__(self):
        return f"<{type(self).__name__} {self.name}>"


def ordered_ops(roots):
    """The ops below `roots` (included), each after its arguments. Iterative:
    deep graphs do not hit Python's recursion limit."""
    order, seen = [], set()
    stack = [(op, False) for op in reversed(roots)]
    while stack:
        op, expanded = stack.pop()
        if expanded:
            order.append(op)
            continue
        if id(op) in seen:
            continue
        seen.add(id(op))
        stack.append((op, True))
        stack.extend((a, False) for a in reversed(op.args) if id(a) not in seen)
    return order


class TensorOp(Op):
    """An op with a tensor value: an arrayx `array` whose dimensions `axes`
    label, in order. `kind` is 'placeholder', 'variable' or 'constant' for
    the leaves of a graph, None for computed values."""

    def __init__(self, array, axes, args=(), *, name=None, kind=None):
        axes = make_axes(axes)
        if not isinstance(array, Array):
            raise TypeError(f"TensorOp: array must be an arrayx array, got {type(array).__name__}")
        if array.shape != axes.lengths:
            raise ValueError(f"TensorOp: array of shape {array.shape} does not fit axes {axes}")
        super().__init__(args, name)
        self.array = array
        self.axes = axes
        self.kind = kind

    @property
    def dtype(self):
        """The element type, as a NumPy dtype (as ngraph gave it)."""
        return self.array.dtype.dtype

    def __neg__(self):
        return negative(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return absolute(self)

    def __add__(self, other):
        return add(self, other)

    def __radd__(self, other):
        return add(other, self)

    def __sub__(self, other):
        return subtract(self, other)

    def __rsub__(self, other):
        return subtract(other, self)

    def __mul__(self, other):
        return multiply(self, other)

    def __rmul__(self, other):
        return multiply(other, self)

    def __truediv__(self, other):
        return divide(self, other)

    def __rtruediv__(self, other):
        return divide(other, self)

    def __pow__(self, other):
        return power(self, other)

    def __rpow__(self, other):
        return power(other, self)

    # No __eq__/__ne__: ops are dictionary keys by identity, as in ngraph.
    def __lt__(self, other):
        return less(self, other)

    def __le__(self, other):
        return less_equal(self, other)

    def __gt__(self, other):
        return greater(self, other)

    def __ge__(self, other):
        return greater_equal(self, other)

    def __repr__(self):
        return f"<{type(self).__name__} {self.name} {self.axes} {self.array.dtype}>"


def constant(const, axes=None, dtype=None, name=None):
    """A constant tensor: a scalar or NumPy array `const`, its dimensions
    labelled by `axes` (fresh axes when None). A scalar with axes is
    broadcast to them."""
    dtype = arrayx_dtype(dtype, "constant")
    value = np.asarray(const, dtype=dtype.dtype)
    if axes is not None:
        axes = make_axes(axes)
        if value.ndim and value.shape != axes.lengths:
            raise ValueError(f"constant: a value of shape {value.shape} does not fit axes {axes}")
    if not value.ndim:
        op = TensorOp(xp.asarray(value), (), name=name, kind="constant")
        return op if axes is None else broadcast(op, axes)
    if axes is None:
        axes = [make_axis(n) for n in value.shape]
    return TensorOp(xp.asarray(value), axes, name=name, kind="constant")


def as_op(x, fn="as_op"):
    """`x` as a TensorOp: an op as it is, a number or a NumPy array as a constant."""
    if isinstance(x, TensorOp):
        return x
    if isinstance(x, Op):
        raise TypeError(f"{fn}: {x!r} has no tensor value (an assignment or doall)")
    if isinstance(x, (numbers.Number, np.ndarray, np.generic)):
        return constant(x)
    raise TypeError(f"{fn}: expected an ngraph tensor op, a number or a NumPy array, got {type(x).__name__}")


def aligned(x, axes, fn):
    """x's array with its dimensions in the order of `axes`, a superset of
    x's axes, and size 1 where x lacks an axis (ready to broadcast)."""
    missing = x.axes - axes
    if len(missing):
        raise ValueError(f"{fn}: the axes {missing} of {x.name} are not among {axes}")
    array = x.array
    order = [x.axes.index(a) for a in axes if a in x.axes]
    if order != sorted(order):
        array = xp.permute_dims(array, tuple(order))
    shape = tuple(a.length if a in x.axes else 1 for a in axes)
    return array if shape == array.shape else xp.reshape(array, shape)


def check_lengths(fn, x_axes, y_axes):
    """Axes of one name pair up: they must have one length."""
    for a in x_axes & y_axes:
        lx, ly = x_axes[x_axes.index(a)].length, y_axes[y_axes.index(a)].length
        if lx != ly:
            raise ValueError(f"{fn}: axis {a.name!r} has length {lx} in {x_axes} and {ly} in {y_axes}")


def broadcast(x, axes):
    """x with the axes `axes` (which include x's), its values repeated along
    the new ones."""
    x, axes = as_op(x, "broadcast"), make_axes(axes)
    check_lengths("broadcast", x.axes, axes)
    if x.axes == axes:
        return x
    return TensorOp(xp.broadcast_to(aligned(x, axes, "broadcast"), axes.lengths), axes, (x,))


def axes_with_order(x, axes):
    """x with its axes reordered as `axes` (the same axes)."""
    x, axes = as_op(x, "axes_with_order"), make_axes(axes)
    if not x.axes.is_equal_set(axes):
        raise ValueError(f"axes_with_order: {axes} is not a reordering of {x.name}'s axes {x.axes}")
    if x.axes == axes:
        return x
    return TensorOp(aligned(x, axes, "axes_with_order"), axes, (x,))


def binary_axes(fn, x, y):
    """The axes of an elementwise result of x and y (see the module)."""
    check_lengths(fn, x.axes, y.axes)
    if all(a in y.axes for a in x.axes):
        return y.axes
    return x.axes + (y.axes - x.axes)


def _unary(function, name, doc):
    def op(x):
        x = as_op(x, name)
        return TensorOp(function(x.array), x.axes, (x,))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


def _binary(function, name, doc, comparison=False):
    def op(x, y, dtype=None):
        x, y = as_op(x, name), as_op(y, name)
        axes = binary_axes(name, x, y)
        result = function(aligned(x, axes, name), aligned(y, axes, name))
        if comparison or dtype is not None:
            result = xp.astype(result, arrayx_dtype(dtype, name))
        return TensorOp(result, axes, (x, y))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc + " Operands are aligned by axis; `dtype` casts the result."
    return op


negative = _unary(xp.negative, "negative", "-x, elementwise.")
absolute = _unary(xp.abs, "absolute", "|x|, elementwise.")
sin = _unary(xp.sin, "sin", "The sine of x, elementwise.")
cos = _unary(xp.cos, "cos", "The cosine of x, elementwise.")
tanh = _unary(xp.tanh, "tanh", "The hyperbolic tangent of x, elementwise.")
exp = _unary(xp.exp, "exp", "e to the power x, elementwise.")
log = _unary(xp.log, "log", "The natural logarithm of x, elementwise.")
reciprocal = _unary(xp.reciprocal, "reciprocal", "1 / x, elementwise.")
sign = _unary(xp.sign, "sign", "The sign of x (-1, 0 or 1), elementwise.")
square = _unary(xp.square, "square", "x * x, elementwise.")
sqrt = _unary(xp.sqrt, "sqrt", "The square root of x, elementwise.")

add = _binary(xp.add, "add", "x + y, elementwise.")
subtract = _binary(xp.subtract, "subtract", "x - y, elementwise.")
multiply = _binary(xp.multiply, "multiply", "x * y, elementwise.")
divide = _binary(xp.divide, "divide", "x / y, elementwise.")
power = _binary(xp.pow, "power", "x to the power y, elementwise.")
maximum = _binary(xp.maximum, "maximum", "The larger of x and y, elementwise.")
minimum = _binary(xp.minimum, "minimum", "The smaller of x and y, elementwise.")
equal = _binary(xp.equal, "equal", "1.0 where x == y, else 0.0.", comparison=True)
not_equal = _binary(xp.not_equal, "not_equal", "1.0 where x != y, else 0.0.", comparison=True)
less = _binary(xp.less, "less", "1.0 where x < y, else 0.0.", comparison=True)
less_equal = _binary(xp.less_equal, "less_equal", "1.0 where x <= y, else 0.0.", comparison=True)
greater = _binary(xp.greater, "greater", "1.0 where x > y, else 0.0.", comparison=True)
greater_equal = _binary(xp.greater_equal, "greater_equal", "1.0 where x >= y, else 0.0.", comparison=True)


def safelog(x, limit=-SAFELOG_CUTOFF):
    """log(x + e**limit), at least `limit`: a logarithm that stays finite at 0."""
    return maximum(log(add(x, float(np.exp(limit)))), limit)
