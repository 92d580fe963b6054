"""ngraph's contractions and reductions, which remove axes by name: `dot`
contracts the axes its operands share; `sum`, `mean`, `max`, `min` and
`prod` reduce `reduction_axes` or keep `out_axes`; `tensor_size` and
`batch_size` count elements."""

import math

import arrayx as xp

from .axes import make_axes
from .ops import TensorOp, as_op, axes_with_order, check_lengths, constant


def dot(x, y):
    """The dot product of x and y over the axes they share (by name). The
    result has x's other axes followed by y's other axes."""
    x, y = as_op(x, "dot"), as_op(y, "dot")
    check_lengths("dot", x.axes, y.axes)
    shared = x.axes & y.axes
    axes = (x.axes - shared) + (y.axes - shared)
    array = xp.tensordot(x.array, y.array, axes=([x.axes.index(a) for a in shared],
                                                 [y.axes.index(a) for a in shared]))
    return TensorOp(array, axes, (x, y))


def reduction_axes_of(fn, x, reduction_axes, out_axes):
    """(reduction axes, out axes) of a reduction of x, as ngraph decides them:
    by default every axis but the batch and recurrent ones is reduced."""
    if reduction_axes is None and out_axes is None:
        recurrent = x.axes.recurrent_axis()
        reduction_axes = x.axes.sample_axes() - make_axes(() if recurrent is None else recurrent)
        out_axes = x.axes - reduction_axes
    elif reduction_axes is None:
        out_axes = make_axes(out_axes)
        reduction_axes = x.axes - out_axes
    elif out_axes is None:
        reduction_axes = make_axes(reduction_axes)
        out_axes = x.axes - reduction_axes
    else:
        reduction_axes, out_axes = make_axes(reduction_axes), make_axes(out_axes)
    if len(reduction_axes & out_axes):
        raise ValueError(f"{fn}: reduction_axes {reduction_axes} and out_axes {out_axes} overlap")
    if not (reduction_axes | out_axes).is_equal_set(x.axes):
        raise ValueError(f"{fn}: reduction_axes {reduction_axes} and out_axes {out_axes} must together be "
                         f"the axes of {x.name}, {x.axes}")
    return reduction_axes, out_axes


def _reduction(function, name, doc):
    def reduce(x, reduction_axes=None, out_axes=None):
        x = as_op(x, name)
        reduced, out_axes = reduction_axes_of(name, x, reduction_axes, out_axes)
        array = function(x.array, axis=tuple(x.axes.index(a) for a in reduced))
        return axes_with_order(TensorOp(array, x.axes - reduced, (x,)), out_axes)
    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = (doc + " over `reduction_axes`, keeping `out_axes` (in that order); by default over all "
                      "axes but the batch and recurrent ones.")
    return reduce


sum = _reduction(xp.sum, "sum", "The sum of x")
mean = _reduction(xp.mean, "mean", "The mean of x")
max = _reduction(xp.max, "max", "The largest element of x")
min = _reduction(xp.min, "min", "The smallest element of x")
prod = _reduction(xp.prod, "prod", "The product of x")


def tensor_size(x, reduction_axes=None, out_axes=None):
    """The number of elements of x along `reduction_axes` (by default, all
    axes but the batch axis; with `out_axes`, the others), as a scalar."""
    x = as_op(x, "tensor_size")
    if reduction_axes is None and out_axes is None:
        reduction_axes = x.axes.sample_axes()
    elif reduction_axes is None:
        reduction_axes = x.axes - make_axes(out_axes)
    reduction_axes = make_axes(reduction_axes)
    if len(reduction_axes - x.axes):
        raise ValueError(f"tensor_size: the axes {reduction_axes - x.axes} are not axes of {x.name}, {x.axes}")
    return constant(math.prod(x.axes[x.axes.index(a)].length for a in reduction_axes))


def batch_size(x):
    """The length of x's batch axis (the axis named 'N'), as a scalar."""
    x = as_op(x, "batch_size")
    batch = x.axes.batch_axes()
    if batch is None:
        raise ValueError(f"batch_size: {x.name} has no batch axis (an axis named 'N'); its axes are {x.axes}")
    return tensor_size(x, reduction_axes=batch)
