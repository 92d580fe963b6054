"""What training a model with ngraph takes: `sigmoid`, `cross_entropy_binary`
(which computes from the logits when its input is a sigmoid, as ngraph's
did) and `deriv`, over arrayx's graph autodiff."""

import math

import arrayx as xp

from .. import dtypes as dt
from ..autodiff import gradients
from .ops import SAFELOG_CUTOFF, TensorOp, as_op, axes_with_order, exp, maximum, reciprocal, safelog
from .reductions import sum


class SigmoidOp(TensorOp):
    """1 / (1 + exp(-x)), remembering its argument `x` (the logits)."""

    def __init__(self, x):
        value = reciprocal(exp(-x) + 1.0)
        super().__init__(value.array, value.axes, (value,))
        self.x = x


def sigmoid(x):
    """The logistic function 1 / (1 + exp(-x)), elementwise."""
    return SigmoidOp(as_op(x, "sigmoid"))


def cross_entropy_binary_inner(y, t, enable_sig_opt=True):
    """The binary cross-entropy of each element: -(t log y + (1 - t) log(1 - y)),
    with logarithms floored at -50. When y is a sigmoid of x (and
    `enable_sig_opt`), the equal (1 - t) x - log y, which stays accurate where
    y rounds to 1."""
    y, t = as_op(y, "cross_entropy_binary"), as_op(t, "cross_entropy_binary")
    if not (all(a in t.axes for a in y.axes) or all(a in y.axes for a in t.axes)):
        raise ValueError(f"cross_entropy_binary: the axes of y {y.axes} and t {t.axes} must be a subset one "
                         f"of the other")
    if enable_sig_opt and isinstance(y, SigmoidOp):
        return (1 - t) * maximum(y.x, -SAFELOG_CUTOFF) - safelog(y)
    return -(safelog(y) * t + safelog(1 - y) * (1 - t))


def cross_entropy_binary(y, t, usebits=False, out_axes=None, enable_sig_opt=True):
    """The binary cross-entropy of predictions y (in [0, 1]) against targets t,
    summed over all axes but `out_axes` (by default, the batch and recurrent
    axes); in bits with `usebits`."""
    result = sum(cross_entropy_binary_inner(y, t, enable_sig_opt), out_axes=out_axes)
    return result * (1 / math.log(2.0)) if usebits else result


def deriv(dependent, independent, error=None):
    """The derivative of `dependent` with respect to `independent`, applied to
    `error` (ones when None, which needs a scalar dependent); it has the
    axes of `independent`. Reverse mode over arrayx's graph."""
    dependent, independent = as_op(dependent, "deriv"), as_op(independent, "deriv")
    for label, op in (("dependent", dependent), ("independent", independent)):
        if op.array.dtype not in dt.CATEGORIES["real floating"]:
            raise TypeError(f"deriv: the {label} {op.name} has dtype {op.array.dtype}; differentiation needs a "
                            f"real floating dtype")
    if error is None:
        if len(dependent.axes):
            raise ValueError(f"deriv: the dependent {dependent.name} has axes {dependent.axes}; differentiate a "
                             f"scalar, or give error= with its axes")
        cotangent = None
    else:
        error = as_op(error, "deriv")
        if not error.axes.is_equal_set(dependent.axes):
            raise ValueError(f"deriv: error has axes {error.axes}, the dependent {dependent.axes}")
        cotangent = xp.astype(axes_with_order(error, dependent.axes).array, dependent.array.dtype)
    gradient, = gradients(dependent.array, [independent.array], cotangent)
    return TensorOp(gradient, independent.axes, (dependent, independent))
