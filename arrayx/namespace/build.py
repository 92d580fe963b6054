"""How standard functions turn their arguments into graph nodes.

Validation helpers raise at the user's call with the function's name and the
operand's name; `make` applies a primitive's shape/dtype rule and wraps the node
in an Array, realizing it when its unrealized chain grows past MAX_DEPTH.
"""

import math
import operator
import sys

import numpy as np

from .. import dtypes as dt, executors
from ..dtypes import PYTHON_SCALARS
from ..counters import counters
from ..device import CPU, Device
from ..graph.node import Constant, Node
from ..graph.primitives import BUFFER, MOVEMENT, PRIMITIVES, broadcast_shapes
from ..scheduler.schedule import realize, run_dynamic
from .array_object import Array

_new_array = Array._new

# Longest chain of unrealized nodes before arrayx realizes the graph itself.
MAX_DEPTH = 2000

P = PRIMITIVES


def wrap(node):
    """The Array of `node`, realized first if its graph has grown too deep."""
    if node.depth > MAX_DEPTH:
        counters["auto_realizations"] += 1
        realize([node])
    return _new_array(node)


def make(prim, inputs, attrs=()):
    """A node applying `prim` to input nodes (rule-inferred shape/dtype)."""
    result = prim.result
    if result is not None:
        # An elementwise node whose operands have one shape or are 0-d (a
        # Python scalar is a 0-d node): the rule's answer without calling it,
        # and no size check. A loop body builds such nodes by the thousand.
        shape = ()
        for node in inputs:
            s = node.shape
            if s != shape and s != ():
                if shape != ():
                    break   # operands that broadcast: the rule's general case
                shape = s
        else:
            return Node(prim, inputs, attrs, shape, result[inputs[-1].dtype], inputs[0].device)
    shape, dtype = prim.rule(prim, inputs, attrs)
    if prim.kind is MOVEMENT and len(inputs) == 1:
        return movement_node(prim, inputs[0], attrs, shape, dtype)
    if shape != inputs[0].shape:  # broadcasting, contraction, concat... may outgrow the inputs
        check_size(shape, dtype, prim.name)
    return Node(prim, inputs, attrs, shape, dtype, inputs[0].device)


def movement_node(prim, node, attrs, shape, dtype):
    """A movement node over `node`; over a realized buffer, a view taken now.

    Where the executor can view a realized buffer (slice, reshape, permute,
    broadcast, flip: no computation), the node is born realized. Indexing an
    evaluated array then neither waits for a force point nor puts its indices
    into plan-cache keys (element loops would miss the cache every time). The
    node keeps its primitive and input, so autodiff still sees the slice.
    """
    if shape != node.shape:  # a broadcast, or a reshape of a zero-size array, may outgrow it
        check_size(shape, dtype, prim.name)
    if node.buffer is not None:
        buffer = executors.executor_for(node.device).view(prim, attrs, shape, dtype, node.buffer)
        if buffer is not None:
            return Node(prim, (node,), attrs, shape, dtype, node.device, buffer)
    return Node(prim, (node,), attrs, shape, dtype, node.device)


def make_multi(prim, inputs, attrs=()):
    """The output nodes of a multi-output primitive (one `select` node each)."""
    outputs = prim.rule(prim, inputs, attrs)
    for shape, dtype in outputs:
        check_size(shape, dtype, prim.name)
    node = Node(prim, inputs, attrs, tuple(s for s, _ in outputs), tuple(d for _, d in outputs), inputs[0].device)
    select = P["select"]
    return tuple(Node(select, (node,), (i,), shape, dtype, node.device) for i, (shape, dtype) in enumerate(outputs))


def dynamic(name, inputs, attrs=()):
    """Arrays of a data-dependent primitive: a force point (see run_dynamic)."""
    return tuple(Array._new(n) for n in run_dynamic(P[name], list(inputs), attrs))


def leaf(prim, shape, dtype, attrs, device):
    """A leaf node (full, iota) whose attrs begin with (shape, dtype)."""
    check_size(shape, dtype, prim.name)
    return Node(prim, (), (shape, dtype) + attrs, shape, dtype, device)


def full_node(shape, value, dtype, device):
    """A `full` leaf: `value` cast to `dtype` (wrapping as NumPy does) everywhere."""
    with np.errstate(over="ignore", invalid="ignore"):
        value = dtype.type(value)
    return leaf(P["full"], shape, dtype, (Constant(value),), device)


def pad_node(node, pads, value):
    """`node` padded by ((lo, hi), ...) per axis with `value` cast to its dtype."""
    return make(P["pad"], (node,), (pads, Constant(node.dtype.type(value))))


def buffer_node(host, device=CPU, copy=True):
    """A realized node holding the NumPy array `host` (of a dtype arrayx has)."""
    host = np.asarray(host)
    buf = executors.executor_for(device).from_host(host, copy=copy)
    return Node(BUFFER, (), (), host.shape, dt.FROM_NUMPY[host.dtype], device, buf)


# Realized scalar nodes are immutable, so `x * 2.0` in a loop reuses one.
_SCALAR_CACHE_SIZE = 1024
_FLOAT64_MAX = float(np.finfo(np.float64).max)
_scalar_nodes = {}


def scalar_node(value, dtype, device, name):
    """A realized 0-d node holding the Python scalar `value` as `dtype`."""
    kind = type(value)
    # 0.0 == -0.0 and 1 == 1.0 == True: key on the type, and on a zero's sign.
    key = (kind, value, dtype, device, math.copysign(1.0, value) if kind is float and value == 0 else 0)
    node = _scalar_nodes.get(key)   # complex values are never cached: a miss
    if node is not None:
        return node
    if kind is int:
        if dtype in dt.INT_BOUNDS:
            lo, hi = dt.INT_BOUNDS[dtype]
            if not lo <= value <= hi:
                raise OverflowError(f"{name}: Python int {value} is out of bounds for {dtype}")
        elif dtype.kind in "fc" and abs(value) > _FLOAT64_MAX:
            raise OverflowError(f"{name}: a Python int of {value.bit_length()} bits is too large for any floating dtype")
    buf = executors.executor_for(device).from_scalar(value, dtype)
    node = Node(BUFFER, (), (), (), dtype, device, buf)
    if kind is not complex:
        if len(_scalar_nodes) >= _SCALAR_CACHE_SIZE:
            _scalar_nodes.clear()
        _scalar_nodes[key] = node
    return node


def is_scalar(x):
    return type(x) in PYTHON_SCALARS


def node_of(x, name, argname="x"):
    """The node of Array `x`, or a TypeError naming the function and operand."""
    if isinstance(x, Array):
        return x._node
    raise TypeError(f"{name}: {argname} must be an arrayx array, got {type(x).__name__}")


def check_dtype(node, accepts, name, argname="x"):
    if node.dtype not in dt.CATEGORIES[accepts]:
        raise TypeError(f"{name}: {argname} has dtype {node.dtype}; expected a {accepts} dtype")


def astype_node(node, dtype):
    if node.dtype == dtype:
        return node
    return Node(P["astype"], (node,), (dtype,), node.shape, dtype, node.device)


def same_device(name, nodes):
    device = nodes[0].device
    for n in nodes[1:]:
        if n.device != device:
            raise ValueError(f"{name}: operands are on different devices ({device} and {n.device})")
    return device


def broadcast_node(node, shape):
    if node.shape == shape:
        return node
    return movement_node(P["broadcast"], node, (shape,), shape, node.dtype)


def reshape_node(node, shape):
    if node.shape == shape:
        return node
    return movement_node(P["reshape"], node, (shape,), shape, node.dtype)


def integer_argument(value, name, argname, *, refuse_bool=False):
    """An integer argument (anything with `__index__`) as an int, or a
    TypeError naming the function `name` and the argument `argname`.
    `refuse_bool`: where True would be a mistake (a length, an axis), though
    bool is an int."""
    if refuse_bool and isinstance(value, bool):
        raise TypeError(f"{name}: {argname} must be an integer, got bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name}: {argname} must be an integer, got {type(value).__name__}") from None


def normalize_axis(axis, ndim, name):
    """`axis` as a non-negative int, or an AxisError naming `name`."""
    axis = integer_argument(axis, name, "axis")
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"{name}: axis {axis} is out of bounds for an array of dimension {ndim}")
    return axis % ndim


def normalize_axes(axis, ndim, name):
    """`axis` (None, an int or a tuple of ints) as a sorted tuple of axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(sorted(normalize_axis(a, ndim, name) for a in (axis if isinstance(axis, tuple) else (axis,))))
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: repeated axis in {axis}")
    return axes


def normalize_shape(shape, name):
    """A shape argument (int or sequence of ints) as a tuple of ints >= 0."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        shape = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be an int or a sequence of ints, got {shape!r}") from None
    if any(n < 0 for n in shape):
        raise ValueError(f"{name}: shape {shape} has a negative dimension")
    return shape


def check_size(shape, dtype, name):
    """A ValueError naming `name` if no array of `shape` and `dtype` can exist.

    NumPy's rule, which the executors share: the product of the nonzero
    dimensions times the item size must fit in a signed machine word
    (sys.maxsize bytes), else the array fails at the force point. Functions
    that take or compute a shape check it here at the call; the node builders
    above check every shape that may outgrow the inputs (naming the primitive).
    """
    n = dtype.itemsize
    for d in shape:
        if d:
            n *= d
    if n > sys.maxsize:
        raise ValueError(f"{name}: shape {shape} of {dtype} is too large to address: its nonzero dimensions "
                         f"times the item size ({dtype.itemsize}) exceed sys.maxsize ({sys.maxsize}) bytes")


def check_device(device, name):
    """`device` (None means the default; a Device or its name, e.g. "cpu") as a
    Device arrayx has an executor for."""
    if device is None:
        return executors.default_device()
    available = executors.devices()
    if isinstance(device, str):
        device = next((d for d in available if d.name == device), device)
    if isinstance(device, Device) and device in available:
        return device
    raise ValueError(f"{name}: unknown device {device!r}; expected one of {list(available)} or its name")


__all__ = [
    "P", "wrap", "make", "make_multi", "dynamic", "leaf", "buffer_node", "scalar_node", "is_scalar", "node_of",
    "check_dtype", "astype_node", "same_device", "broadcast_node", "reshape_node",
    "normalize_axis", "normalize_axes", "normalize_shape", "check_size", "check_device", "broadcast_shapes",
]
