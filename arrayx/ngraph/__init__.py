"""`import ngraph as ng` under `python -m arrayx.ngraph`: ngraph's op names over
the arrayx namespace and `arrayx.transformers`. Shapes are tuples (arrayx has
no named axes); computations return NumPy values, as ngraph's did.
"""

import numpy as np

import arrayx as _xp
from arrayx import transformers as _t

placeholder = _t.placeholder
assign = _t.assign
add, subtract, multiply, divide = _xp.add, _xp.subtract, _xp.multiply, _xp.divide
negative, absolute, square, sqrt = _xp.negative, _xp.abs, _xp.square, _xp.sqrt
exp, log, tanh, sin, cos = _xp.exp, _xp.log, _xp.tanh, _xp.sin, _xp.cos
maximum, minimum = _xp.maximum, _xp.minimum
equal, not_equal, less, less_equal, greater, greater_equal = (
    _xp.equal, _xp.not_equal, _xp.less, _xp.less_equal, _xp.greater, _xp.greater_equal)
dot = _xp.matmul
sum, mean, max, min, prod = _xp.sum, _xp.mean, _xp.max, _xp.min, _xp.prod


def constant(value, dtype=None):
    """A constant tensor."""
    return _t.constant(value, dtype=dtype)


def variable(shape=(), initial_value=0.0, dtype=None, name=None):
    """A variable of `shape` starting at `initial_value` (a number or an array)."""
    value = np.broadcast_to(np.asarray(initial_value, dtype=(dtype or _xp.float64).dtype), shape).copy()
    return _t.variable(value, name=name)


def sigmoid(x):
    """1 / (1 + exp(-x))."""
    return 1.0 / (1.0 + _xp.exp(-x))


def reciprocal(x):
    return 1.0 / x
