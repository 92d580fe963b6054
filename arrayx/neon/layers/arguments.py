"""neon's argument conventions for layer kernels: inputs as arrayx arrays of
a layer's shape (neon's 2-D views reshape to 5-D), outputs given as None, a
shape or an array, and ``alpha*result + beta*base`` accumulation."""

import math

import arrayx as xp


def as_array(x, name, argname):
    if isinstance(x, xp.Array):
        return x
    try:
        return xp.asarray(x)
    except Exception as exc:  # pragma: no cover - the message is the point
        raise TypeError("%s: %s must be an array, got %s" % (name, argname, type(x).__name__)) from exc


def shaped(x, shape, name, argname):
    """x as an arrayx array of `shape` (neon's 2-D views reshape to 5-D)."""
    x = as_array(x, name, argname)
    if tuple(x.shape) == tuple(shape):
        return x
    if math.prod(x.shape) != math.prod(shape):
        raise ValueError("%s: %s has shape %s; expected %s (or a shape of the same size)"
                         % (name, argname, tuple(x.shape), tuple(shape)))
    return xp.reshape(x, tuple(shape))


def combine(result, alpha, beta, base, name, argname):
    """alpha*result + beta*base (base: the array whose values beta scales)."""
    if alpha != 1.0:
        result = result * alpha
    if beta:
        if base is None or isinstance(base, (tuple, list)):
            raise ValueError("%s: beta=%r needs the values to accumulate: pass %s as an array"
                             % (name, beta, argname))
        result = result + beta * shaped(base, tuple(result.shape), name, argname)
    return result


def shape_like(result, out, name, argname):
    """result reshaped to out's shape (out: None, a shape tuple or an array)."""
    if out is None:
        return result
    dim = tuple(result.shape)
    shape = tuple(out) if isinstance(out, (tuple, list)) else tuple(as_array(out, name, argname).shape)
    if math.prod(shape) != math.prod(dim):
        raise ValueError("%s: %s has shape %s, which does not hold a result of shape %s"
                         % (name, argname, shape, dim))
    return xp.reshape(result, shape) if shape != dim else result
