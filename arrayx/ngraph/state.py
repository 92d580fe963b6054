"""ngraph's graph inputs and state: placeholders, variables, assignments and
`doall`, over `arrayx.transformers`' placeholders, variables and assign."""

import numpy as np

import arrayx as xp

from .. import transformers as _t
from .axes import make_axes
from .ops import Op, TensorOp, arrayx_dtype, as_op, broadcast, fresh_name


def _tensor_axes(axes, fn):
    axes = make_axes(axes)
    unknown = [a.name for a in axes if a.length is None]
    if unknown:
        raise ValueError(f"{fn}: the axes {unknown} have no length (give make_axis a length)")
    return axes


def placeholder(axes, dtype=None, name=None):
    """A tensor with `axes` whose value each call of a computation supplies."""
    axes = _tensor_axes(axes, "placeholder")
    name = name or fresh_name("Placeholder")
    array = _t.placeholder(axes.lengths, arrayx_dtype(dtype, "placeholder"), name=name)
    return TensorOp(array, axes, name=name, kind="placeholder")


def variable(axes, dtype=None, initial_value=None, name=None):
    """A trainable tensor with `axes`, whose value persists in each
    transformer between computations. `initial_value` is a number or array
    (broadcast to the axes), an op computed from constants, or a callable
    taking the axes and returning one of those; None starts at zeros."""
    axes = _tensor_axes(axes, "variable")
    dtype = arrayx_dtype(dtype, "variable")
    if callable(initial_value):
        initial_value = initial_value(axes)
    if isinstance(initial_value, Op):
        if not isinstance(initial_value, TensorOp) or initial_value.variables() or initial_value.placeholders():
            raise TypeError(f"variable: an initial value op must be computed from constants alone, got "
                            f"{initial_value!r}")
        initial_value = np.asarray(initial_value.array)
    value = np.asarray(0 if initial_value is None else initial_value, dtype=dtype.dtype)
    try:
        value = np.broadcast_to(value, axes.lengths)
    except ValueError:
        raise ValueError(f"variable: an initial value of shape {value.shape} does not fit axes {axes}") from None
    name = name or fresh_name("Variable")
    array = _t.variable(shape=axes.lengths, dtype=dtype, initializer=lambda shape, dtype: value, name=name)
    return TensorOp(array, axes, name=name, kind="variable")


class AssignOp(Op):
    """`variable` takes `value` when a computation returning this op runs."""

    def __init__(self, variable, value):
        if not isinstance(variable, TensorOp) or variable.kind != "variable":
            raise TypeError(f"assign: the target must be a variable, got {variable!r}")
        value = as_op(value, "assign")
        if len(value.axes - variable.axes):
            raise ValueError(f"assign: the value's axes {value.axes} must be among the variable's {variable.axes}")
        value = broadcast(value, variable.axes)
        array = value.array
        if array.dtype != variable.array.dtype:   # stored in the variable's type, as ngraph's copy did
            array = xp.astype(array, variable.array.dtype)
        super().__init__((variable, value))
        self.variable = variable
        self.update = _t.assign(variable.array, array)   # the arrayx assignment

    def assignments(self):
        return [self]


def assign(lvalue, rvalue):
    """An op that sets variable `lvalue` to `rvalue` (its axes among the
    variable's, broadcast to them) when a computation returns it."""
    return AssignOp(lvalue, rvalue)


class ParallelOp(Op):
    """Carries out every op of `ops` (ngraph's doall)."""

    def __init__(self, ops):
        ops = list(ops)
        for op in ops:
            if not isinstance(op, Op):
                raise TypeError(f"doall: expected ngraph ops, got {type(op).__name__}")
        super().__init__(ops)

    def assignments(self):
        return [a for op in self.args for a in op.assignments()]


def doall(all):
    """An op that carries out all the ops in `all` (assignments, typically)."""
    return ParallelOp(all)
