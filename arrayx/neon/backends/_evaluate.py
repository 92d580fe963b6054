"""Op-tree evaluation: an op-tree becomes ONE arrayx graph, evaluated once.

`execute(backend, ({'op': 'assign'}, out, tree))` walks the tree once
(iteratively, post-order, sharing repeated sub-trees), maps every op to arrayx
namespace calls, writes the resulting lazy array into `out` through its view
chain and then forces, in one plan, the target's storage together with the
storages the tree read (so none of them is computed twice later).

Semantics follow neon's backends: comparisons and `finite` give 1/0 in the
operands' numeric type rather than booleans; reductions keep their axes;
`argmax`/`argmin` give the index of the first extremum; zero-operand ops
(`rand`, `onehot`) take the target's shape. Random numbers (`rand`, stochastic
`binarize`) are drawn from the backend's NumPy Generator on the host and
uploaded (arrayx has no random primitive).
"""

import math

import arrayx as xp

from .optree import OpTreeNode
from .tensor import Tensor, x_dtype

_LOG2 = math.log(2.0)
_SAFELOG_FLOOR = math.exp(-50.0)


class _Context:
    """What the translation of one op-tree needs: the backend, the target shape,
    and the tensors read (their storages are forced with the target)."""

    def __init__(self, backend, shape):
        self.backend = backend
        self.shape = tuple(shape)
        self.device = backend.device
        self.float_dtype = x_dtype(backend.default_dtype)
        self.reads = {}
        self.storages = {}

    def tensor(self, t):
        value = self.reads.get(id(t))
        if value is None:
            value = self.reads[id(t)] = t._read()
            self.storages[id(t._storage)] = t._storage
        return value

    def array(self, scalar):
        """A Python number as a (1, 1) array of the backend's float type (neon's scalar shape)."""
        return xp.reshape(xp.asarray(float(scalar), dtype=self.float_dtype, device=self.device), (1, 1))

    def uniform(self, shape, dtype):
        host = self.backend.rng.uniform(size=shape).astype(dtype.dtype)
        return xp.asarray(host, device=self.device)

    def floating(self, x):
        """x as a real floating array (integers and booleans in the backend's float type)."""
        if xp.isdtype(x.dtype, "real floating"):
            return x
        return xp.astype(x, self.float_dtype)


def _is_number(x):
    return isinstance(x, (int, float))


def _numeric(result, left, right, ctx):
    """A boolean result as 1/0 in the operands' numeric type (neon compares to numbers)."""
    dtypes = [x.dtype for x in (left, right) if isinstance(x, xp.Array)]
    dtype = xp.result_type(*dtypes) if dtypes else ctx.float_dtype
    if dtype == xp.bool:
        dtype = ctx.float_dtype
    return xp.astype(result, dtype)


def _exp2(x):
    return xp.pow(2.0, x)


def _binarize(op, x, ctx):
    x = ctx.floating(x)
    if op.get("stochastic", True):
        p = xp.clip((x + 1.0) / 2.0, 0.0, 1.0)
        bit = ctx.uniform(x.shape, x.dtype) <= p
    else:
        bit = x >= 0.0
    return xp.astype(bit, x.dtype) * 2.0 - 1.0


def _shift(op, x, y, ctx):
    if _is_number(y):
        y = ctx.array(y)
    if op.get("value", True):
        e = xp.round(xp.log(xp.maximum(xp.abs(y), _SAFELOG_FLOOR)) / _LOG2)
        factor = xp.sign(y) * _exp2(e)
    else:
        factor = _exp2(y)
    return x * factor


def _onehot(op, ctx):
    idx = op["idx"]
    if not isinstance(idx, Tensor):
        raise TypeError(f"onehot: idx must be a Tensor, got {type(idx).__name__}")
    if len(ctx.shape) != 2:
        raise ValueError(f"onehot: the target must be 2-D, got shape {ctx.shape}")
    indices = xp.reshape(ctx.tensor(idx), (-1,))
    n = indices.shape[0]
    rows, cols = ctx.shape
    if op["axis"] == 0:
        hot = xp.reshape(xp.arange(rows, device=ctx.device), (rows, 1)) == xp.reshape(indices, (1, n))
    else:
        hot = xp.reshape(indices, (n, 1)) == xp.reshape(xp.arange(cols, device=ctx.device), (1, cols))
    return xp.astype(hot, ctx.float_dtype)


def _reduction(fn):
    def reduce(op, x, ctx):
        return fn(x, axis=op.get("axis"), keepdims=True)
    return reduce


_UNARY = {
    "neg": lambda op, x, ctx: -x,
    "abs": lambda op, x, ctx: xp.abs(x),
    "sgn": lambda op, x, ctx: xp.sign(x),
    "sqrt": lambda op, x, ctx: xp.sqrt(x),
    "sqr": lambda op, x, ctx: xp.square(x),
    "exp": lambda op, x, ctx: xp.exp(x),
    "log": lambda op, x, ctx: xp.log(x),
    "safelog": lambda op, x, ctx: xp.log(xp.maximum(x, _SAFELOG_FLOOR)),
    "exp2": lambda op, x, ctx: _exp2(x),
    "log2": lambda op, x, ctx: xp.log2(x),
    "sig": lambda op, x, ctx: 1.0 / (1.0 + xp.exp(-x)),
    "sig2": lambda op, x, ctx: 1.0 / (1.0 + _exp2(-x)),
    "tanh": lambda op, x, ctx: xp.tanh(x),
    "tanh2": lambda op, x, ctx: (_exp2(2.0 * x) - 1.0) / (_exp2(2.0 * x) + 1.0),
    "transpose": lambda op, x, ctx: xp.permute_dims(x, tuple(reversed(range(x.ndim)))),
    "rint": lambda op, x, ctx: xp.round(x),
    "finite": lambda op, x, ctx: xp.astype(xp.isfinite(x), ctx.floating(x).dtype),
    "binarize": _binarize,
    "sum": _reduction(xp.sum),
    "max": _reduction(xp.max),
    "min": _reduction(xp.min),
    "argmax": _reduction(xp.argmax),
    "argmin": _reduction(xp.argmin),
}

_COMPARE = {"eq": xp.equal, "ne": xp.not_equal, "lt": xp.less, "le": xp.less_equal,
            "gt": xp.greater, "ge": xp.greater_equal}

_BINARY = {
    "add": lambda op, x, y, ctx: xp.add(x, y),
    "sub": lambda op, x, y, ctx: xp.subtract(x, y),
    "mul": lambda op, x, y, ctx: xp.multiply(x, y),
    "div": lambda op, x, y, ctx: xp.divide(x, y),
    "pow": lambda op, x, y, ctx: xp.pow(x, y),
    "minimum": lambda op, x, y, ctx: xp.minimum(x, y),
    "maximum": lambda op, x, y, ctx: xp.maximum(x, y),
    "dot": lambda op, x, y, ctx: (xp.matmul(x, y) if isinstance(x, xp.Array) and isinstance(y, xp.Array)
                                  else xp.multiply(x, y)),
    "shift": _shift,
}
for _name, _fn in _COMPARE.items():
    _BINARY[_name] = (lambda fn: lambda op, x, y, ctx: _numeric(fn(x, y), x, y, ctx))(_fn)


def _apply(op, left, right, ctx):
    name = op["op"]
    if name in _UNARY:
        if _is_number(left):
            left = ctx.array(left)
        return _UNARY[name](op, left, ctx)
    if name in _BINARY:
        if _is_number(left) and _is_number(right):
            left = ctx.array(left)
        return _BINARY[name](op, left, right, ctx)
    if name == "rand":
        return ctx.uniform(ctx.shape, ctx.float_dtype)
    if name == "onehot":
        return _onehot(op, ctx)
    if name == "assign":
        raise ValueError("an 'assign' op can only be at the top of an op-tree")
    raise TypeError("%s is not a valid operation" % name)


def tree_value(ctx, root):
    """The value of op-tree `root` (or a tensor or number) in `ctx`: an
    iterative post-order walk in which repeated sub-trees are built once."""
    memo = {}

    def value(x):
        if isinstance(x, OpTreeNode):
            return memo[id(x)]
        if isinstance(x, Tensor):
            return ctx.tensor(x)
        if isinstance(x, bool):
            return int(x)
        return x

    if not isinstance(root, OpTreeNode):
        return value(root)
    work = [(root, False)]
    while work:
        node, ready = work.pop()
        if id(node) in memo:
            continue
        if not ready:
            work.append((node, True))
            for child in (node[2], node[1]):
                if isinstance(child, OpTreeNode) and id(child) not in memo:
                    work.append((child, False))
            continue
        memo[id(node)] = _apply(node[0], value(node[1]), value(node[2]), ctx)
    return memo[id(root)]


def translate(backend, root, shape):
    """The lazy arrayx value of op-tree `root` (or a tensor or number) assigned to a
    target of `shape`, and the storages it read."""
    ctx = _Context(backend, shape)
    result = tree_value(ctx, root)
    if not isinstance(result, xp.Array):
        result = xp.asarray(result, device=ctx.device)
    return result, list(ctx.storages.values())


def force(out, storages):
    """Evaluate the target's storage and the storages read, in one plan."""
    arrays = [out._storage.array]
    arrays += [s.array for s in storages if s is not out._storage]
    xp.eval(*arrays)


def execute(backend, optree):
    """Run `({'op': 'assign'}, out, tree)`: one graph, written into out, forced once."""
    out = optree[1]
    result, storages = translate(backend, optree[2], out.shape)
    out._write(result)
    force(out, storages)
    return out


def commit(out, array, tensors):
    """Write `array` (computed from `tensors`) into `out` and force, as `execute` does."""
    storages = [t._storage for t in tensors]
    out._write(array)
    force(out, storages)
