"""`import ngraph as ng` under `python -m arrayx.ngraph`: ngraph's graph API
over arrayx.

Tensors carry ngraph's named axes (`axes.py`); an op wraps an arrayx array,
a lazy graph node (`ops.py`, with the elementwise functions); placeholders,
variables, `assign` and `doall` are over `arrayx.transformers` (`state.py`);
`dot` and the reductions remove axes by name (`reductions.py`); `sigmoid`,
`cross_entropy_binary` and `deriv` (arrayx's graph autodiff) are in
`training.py`; transformers and computations in `transformers`. docs/ngraph.md
says what is covered.
"""

from . import transformers  # noqa: F401  (ng.transformers, as in ngraph)
from .axes import Axes, Axis, make_axes, make_axis
from .ops import (Op, TensorOp, absolute, add, as_op, axes_with_order, broadcast, constant, cos, divide, equal,
                  exp, greater, greater_equal, less, less_equal, log, maximum, minimum, multiply, negative,
                  not_equal, power, reciprocal, safelog, sign, sin, sqrt, square, subtract, tanh)
from .reductions import batch_size, dot, max, mean, min, prod, sum, tensor_size
from .state import assign, doall, placeholder, variable
from .training import cross_entropy_binary, cross_entropy_binary_inner, deriv, sigmoid

__all__ = ["Axes", "Axis", "Op", "TensorOp", "absolute", "add", "as_op", "assign", "axes_with_order",
           "batch_size", "broadcast", "constant", "cos", "cross_entropy_binary", "cross_entropy_binary_inner",
           "deriv", "divide", "doall", "dot", "equal", "exp", "greater", "greater_equal", "less", "less_equal",
           "log", "make_axes", "make_axis", "max", "maximum", "mean", "min", "minimum", "multiply", "negative",
           "not_equal", "placeholder", "power", "prod", "reciprocal", "safelog", "sigmoid", "sign", "sin",
           "sqrt", "square", "subtract", "sum", "tanh", "tensor_size", "transformers", "variable"]
