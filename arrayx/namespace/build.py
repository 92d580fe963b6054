"""How standard functions turn their arguments into graph nodes.

Validation helpers raise at the user's call with the function's name and the
operand's name; `make` applies a primitive (graph.apply) and `wrap` wraps the
node in an Array, realizing it when its unrealized chain grows past MAX_DEPTH,
or at once in eager mode (`set_eager`); `composite` records a composite
function's call on the node it returns.
"""

import functools
import math
import operator
import os
import weakref

import numpy as np

from .. import dtypes as dt, executors
from ..dtypes import PYTHON_SCALARS
from ..counters import counters
from ..device import CPU, Device
from ..graph.apply import apply, check_size
from ..graph.node import Constant, Node, toposort, tracing
from ..graph.primitives import BOUND, BUFFER, PRIMITIVES, STATE, broadcast_shapes
from ..scheduler.schedule import realize, run_dynamic
from .array_object import Array

_new_array = Array._new
_ref = weakref.ref

# Longest chain of unrealized nodes before arrayx realizes the graph itself.
MAX_DEPTH = 2000

P = PRIMITIVES

# Eager mode (set_eager): every operation computed at its call. `wrap`
# realizes a node deeper than `_realize_past`: MAX_DEPTH, or -1 (any node)
# in eager mode, so lazy mode pays one comparison, as before. `is_eager` is
# read as an attribute of this module by jit's shortcut table (a guard).
is_eager = os.environ.get("ARRAYX_EAGER") == "1"
_realize_past = -1 if is_eager else MAX_DEPTH


def wrap(node):
    """The Array of `node`, realized first if its graph has grown too deep,
    or at once in eager mode; never while tracing for jit (a traced graph
    reads placeholders, which only the compiled computation binds, and
    compiles at any depth)."""
    if node.depth > _realize_past and not tracing():
        if is_eager:
            _realize_at_call(node)
        else:
            counters["auto_realizations"] += 1
            realize([node])
    return _new_array(node)


def _realize_at_call(node):
    """Realize `node` now (eager mode), unless its graph reads a value only
    a compiled computation has (a placeholder or variable: a function
    traced by jit, an ngraph-style computation being built): such a graph
    stays recorded, as in lazy mode."""
    if not any(n.buffer is None and n.op.kind in (BOUND, STATE) for n in toposort([node])):
        realize([node])


def set_eager(eager: bool) -> None:
    """Sets whether each operation is computed at its call.

    A debugging mode, as `jax.disable_jit()` is for JAX: an error that
    depends on values (a singular matrix, an index out of bounds) is raised
    by the line that caused it, and a debugger stepping through the code
    sees computed values. Results are those of lazy mode, computed slower:
    each operation is a force point of its own, so little fuses. Functions
    under `jit` run as plain Python, operation by operation; `grad`, `vjp`
    and `value_and_grad` keep the history they differentiate, as in lazy
    mode; a graph that reads a placeholder stays recorded. The setting is
    the process's, for every thread.

    Parameters
    ----------
    eager : bool
        True: compute each operation at its call. False (the default;
        ARRAYX_EAGER=1 in the environment makes True the default): record
        operations and compute them at force points.

    Raises
    ------
    TypeError
        If `eager` is not a bool.
    """
    global is_eager, _realize_past
    if not isinstance(eager, bool):
        raise TypeError(f"set_eager: eager must be a bool, got {type(eager).__name__}")
    is_eager = eager
    _realize_past = -1 if eager else MAX_DEPTH


def eager_mode():
    """Whether each operation is computed at its call (see set_eager)."""
    return is_eager


# The node of a primitive over input nodes: graph.apply itself under the
# namespace's name (no wrapper call on the recording path).
make = apply


def _as_written(value):
    """An argument as `Node.origin` keeps it: an array as a weak reference
    to its node, in a list or tuple too. The node, because setitem may
    rebind the Array later; weak, because the scheduler reads reference
    counts (see references.py) to decide which nodes to keep."""
    if isinstance(value, Array):
        return _ref(value._node)
    if type(value) is list or type(value) is tuple:
        return type(value)([_as_written(v) for v in value])
    return value


def composite(fn):
    """`fn`, a standard function that lowers to several primitives, setting
    `Node.origin` on the node(s) it returns: the graph views then show the
    call as the user wrote it rather than its primitives. The wrapper costs
    a call and a pass over the arguments (under a microsecond); functions
    of one primitive are not wrapped, so they pay nothing."""
    module = fn.__module__
    name = fn.__name__ if module.startswith(__package__) else f"{module.rpartition('.')[2]}.{fn.__name__}"

    @functools.wraps(fn)
    def recorded(*args, **kwargs):
        out = fn(*args, **kwargs)
        single = isinstance(out, Array)
        nodes = (out._node,) if single else [a._node for a in out]
        written = []
        for a in args:
            if isinstance(a, Array):
                a = a._node
                if a in nodes:
                    return out   # an argument returned unchanged (clip without bounds) is no call's node
                a = _ref(a)
            elif type(a) is list or type(a) is tuple:
                a = _as_written(a)
            written.append(a)
        for key, value in kwargs.items():
            if isinstance(value, Array) or type(value) is list or type(value) is tuple:
                kwargs[key] = _as_written(value)
        if single:
            if out._node.buffer is None:   # not a realized result (see wrap): its history is gone
                out._node.origin = (name, written, kwargs, None)
        else:   # each output of a tuple shows its index, or its field of a named tuple
            for part, node in zip(getattr(out, "_fields", None) or range(len(out)), nodes):
                if node.buffer is None:
                    node.origin = (name, written, kwargs, part)
        return out
    return recorded


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


# Scalar nodes are immutable, so `x * 2.0` in a loop reuses one (and the
# buffer the scheduler gives it at the first force, see scheduler.collect).
_SCALAR_CACHE_SIZE = 1024
_FLOAT64_MAX = float(np.finfo(np.float64).max)
_scalar_nodes = {}


def scalar_node(value, dtype, device, name):
    """A 0-d `full` leaf of the Python scalar `value` as `dtype`: a constant
    of the graph, which touches no executor until a force point."""
    kind = type(value)
    # 0.0 == -0.0 and 1 == 1.0 == True: key on the type, and on a zero's sign.
    key = (kind, value, dtype, device, math.copysign(1.0, value) if kind is float and value == 0 else 0)
    node = _scalar_nodes.get(key)   # complex values are never cached (_remember): a miss
    if node is not None:
        return node
    if kind is int:
        check_int(value, dtype, name)
    node = full_node((), value, dtype, device)
    _remember(_scalar_nodes, key, node)
    return node


def check_int(value, dtype, name):
    """An OverflowError naming `name` unless the Python int `value` fits
    `dtype`: in range for an integer dtype, below float64's largest value
    for a floating or complex one."""
    if dtype in dt.INT_BOUNDS:
        lo, hi = dt.INT_BOUNDS[dtype]
        if not lo <= value <= hi:
            raise OverflowError(f"{name}: Python int {value} is out of bounds for {dtype}")
    elif dtype.kind in "fc" and abs(value) > _FLOAT64_MAX:
        raise OverflowError(f"{name}: a Python int of {value.bit_length()} bits is too large for any floating dtype")


def _remember(cache, key, node):
    """Cache the scalar node `node` under `key` (bounded by _SCALAR_CACHE_SIZE).
    A complex key is not kept: it may hold a nan, and would never be found again."""
    if key[0] is not complex:
        if len(cache) >= _SCALAR_CACHE_SIZE:
            cache.clear()
        cache[key] = node


# The scalar operand of a binary function by (type, value, the other
# operand's dtype and device, a zero's sign): `x * 2.0` in a loop finds its
# node with one lookup instead of resolving the scalar's dtype each time.
_beside_nodes = {}


def scalar_beside(value, node, name):
    """The 0-d `full` leaf of the Python scalar `value` beside an operand
    `node` of a binary function: `value` in the dtype the standard gives a
    Python scalar next to an array of node's dtype (dtypes.scalar_dtype)."""
    kind = type(value)
    key = (kind, value, node.dtype, node.device, math.copysign(1.0, value) if kind is float and value == 0 else 0)
    scalar = _beside_nodes.get(key)
    if scalar is None:
        scalar = scalar_node(value, dt.scalar_dtype(value, node.dtype), node.device, name)
        _remember(_beside_nodes, key, scalar)
    return scalar


def is_scalar(x):
    return type(x) in PYTHON_SCALARS


def not_an_array(name, argname, x, expected="an arrayx array"):
    """The TypeError for an argument `x` that is not what `expected` says;
    for a NumPy array, a list or a tuple, it says how to convert it."""
    hint = "; convert it with xp.asarray(...)" if isinstance(x, (np.ndarray, list, tuple)) else ""
    return TypeError(f"{name}: {argname} must be {expected}, got {type(x).__name__}{hint}")


def node_of(x, name, argname="x"):
    """The node of Array `x`, or a TypeError naming the function and operand."""
    if isinstance(x, Array):
        return x._node
    raise not_an_array(name, argname, x)


def check_dtype(node, accepts, name, argname="x"):
    """A TypeError naming `name` and `argname` unless `node`'s dtype is in the
    category `accepts`. For checks a primitive's own category (which
    `graph.apply` checks) does not make: an operand before promotion, a
    composite's narrower category."""
    if node.dtype not in dt.CATEGORIES[accepts]:
        raise TypeError(f"{name}: {argname} has dtype {node.dtype}; expected a {accepts} dtype")


def astype_node(node, dtype):
    if node.dtype == dtype:
        return node
    return apply(P["astype"], (node,), (dtype,))


def floating_argument(node, category):
    """`node` as an argument of a function that the standard defines on the
    floating dtype `category` only ("floating" or "real floating"): an
    integer or bool array becomes the default floating dtype, as NumPy and
    JAX compute `sin` and `mean` of one (dtypes.COMPUTED_AS_FLOATING). Other
    dtypes are left as they are, for the category check to accept or refuse."""
    if node.dtype in dt.COMPUTED_AS_FLOATING and category in dt.FLOATING_CATEGORIES:
        return apply(P["astype"], (node,), (dt.DEFAULT_FLOAT,))
    return node


def same_device(name, nodes):
    device = nodes[0].device
    for n in nodes[1:]:
        if n.device != device:
            raise ValueError(f"{name}: operands are on different devices ({device} and {n.device})")
    return device


def broadcast_node(node, shape):
    if node.shape == shape:
        return node
    return make(P["broadcast"], (node,), (shape,))


def reshape_node(node, shape):
    if node.shape == shape:
        return node
    return make(P["reshape"], (node,), (shape,))


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
    if type(axis) is int and -ndim <= axis < ndim:   # one axis (axis=-1, the common case): nothing to sort or check
        return (axis % ndim,)
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
    label = device.name if isinstance(device, Device) else str(device)
    why = executors.missing_reason(label)
    if why is not None:
        raise ValueError(f"{name}: no device {label!r} here: {why}")
    raise ValueError(f"{name}: unknown device {device!r}; expected one of {list(available)} or its name")


__all__ = [
    "P", "wrap", "set_eager", "eager_mode", "make", "composite", "dynamic", "leaf", "buffer_node", "scalar_node",
    "check_int", "is_scalar", "node_of", "not_an_array", "check_dtype", "astype_node", "floating_argument",
    "same_device", "broadcast_node", "reshape_node", "normalize_axis", "normalize_axes", "normalize_shape",
    "check_size", "check_device", "broadcast_shapes",
]
