"""Graph inputs and state of compiled computations (ngraph's ops, seed 004).

`placeholder` is a value a computation receives at each call, `variable`
persistent state that each transformer allocates and initializes once, and
`assign` an update of a variable that a computation carries out when it runs.
Ordinary namespace functions and autodiff build the graph on top of them.
"""

import itertools
import weakref

import numpy as np

from .. import dtypes as dt, executors
from ..graph.node import Node
from ..graph.primitives import PRIMITIVES
from ..namespace.array_object import Array
from ..namespace.build import node_of, normalize_shape
from ..namespace.creation import asarray

_PLACEHOLDER, _VARIABLE, _ASSIGN = PRIMITIVES["placeholder"], PRIMITIVES["variable"], PRIMITIVES["assign"]
_names = itertools.count()

# variable node -> its initial value (an Array) or (initializer, shape, dtype)
INITIAL = weakref.WeakKeyDictionary()


def _dtype(dtype, name):
    if dtype is None:
        return dt.float64
    if isinstance(dtype, dt.DType):
        return dtype
    raise TypeError(f"{name}: dtype must be an arrayx dtype, got {dtype!r}")


def placeholder(shape, dtype=None, *, name=None):
    """A graph input whose value each call of a computation supplies."""
    shape = normalize_shape(shape, "placeholder")
    dtype = _dtype(dtype, "placeholder")
    name = name or f"placeholder_{next(_names)}"
    return Array._new(Node(_PLACEHOLDER, (), (shape, dtype, name), shape, dtype, executors.default_device()))


def variable(initial_value=None, *, shape=None, dtype=None, initializer=None, name=None):
    """Persistent state: `variable(value)`, or `variable(shape=..., dtype=...,
    initializer=f)` with `f(shape, dtype)` returning the initial value.

    Each transformer holds its own value of the variable, initialized once.
    """
    if (initial_value is None) == (initializer is None):
        raise TypeError("variable: give either an initial value or an initializer (with shape=)")
    if initial_value is not None:
        value = initial_value if isinstance(initial_value, Array) else asarray(initial_value)
        if dtype is not None and _dtype(dtype, "variable") != value.dtype:
            raise TypeError(f"variable: initial value has dtype {value.dtype}, not {dtype}")
        shape, dtype, initial = value.shape, value.dtype, value
    else:
        if shape is None:
            raise TypeError("variable: an initializer needs shape=")
        shape = normalize_shape(shape, "variable")
        dtype = _dtype(dtype, "variable")
        initial = (initializer, shape, dtype)
    name = name or f"variable_{next(_names)}"
    node = Node(_VARIABLE, (), (shape, dtype, name), shape, dtype, executors.default_device())
    INITIAL[node] = initial
    return Array._new(node)


def constant(value, dtype=None):
    """A constant of the graph: an evaluated array."""
    return asarray(value, dtype=dtype)


def assign(target, value):
    """When a computation that returns it runs, `target` (a variable) holds
    `value` afterwards; the assignment evaluates to `value`."""
    node = node_of(target, "assign", "target")
    if node.op is not _VARIABLE:
        raise TypeError(f"assign: target must be a variable, got a {node.op.name} node")
    if not isinstance(value, Array):
        value = asarray(np.asarray(value, dtype=node.dtype.dtype))
    v = value._node
    if v.shape != node.shape or v.dtype != node.dtype:
        raise ValueError(f"assign: value of shape {v.shape} and dtype {v.dtype} does not fit variable "
                         f"{node.attrs[2]!r} of shape {node.shape} and dtype {node.dtype}")
    return Array._new(Node(_ASSIGN, (node, v), (), v.shape, v.dtype, v.device))


def initial_value(node):
    """The host value a variable starts from."""
    initial = INITIAL[node]
    if isinstance(initial, Array):
        return np.asarray(initial)
    initializer, shape, dtype = initial
    value = np.asarray(initializer(shape, dtype))
    if value.shape != shape:
        raise ValueError(f"variable {node.attrs[2]!r}: initializer gave shape {value.shape}, expected {shape}")
    return value.astype(dtype.dtype, copy=False)
