"""Rewrite pass: algebraic rewrites that pay, before fusion.

- `sum(x * y)` over every axis, with x and y of one floating shape, is a dot
  product (where the executor says it pays: not on dask, where flattening
  costs a rechunk and a fused group is one pass already, nor on a CPU whose
  fused groups run natively, also in one pass): BLAS computes it
  in one pass without the product array, and with
  the same special cases (a NaN or an infinite product makes the sum NaN or
  infinite, a sum of zeros is +0.0). It only differs by summation order, as
  any blocked reduction does.
- An explicit `broadcast` read by an elementwise node is dropped when the
  node's other operands still broadcast it to the node's shape: elementwise
  primitives broadcast their operands themselves, so the step (and the break
  in a fused group) goes. Autodiff makes these: a sum's VJP broadcasts.
- `reshape(reduce(x, axes, keepdims=True))` that only drops the reduced axes
  is `reduce(x, axes, keepdims=False)`: one step (a bias gradient's sum).
- A reshape to its input's own shape is its input: autodiff's identity over
  each differentiated argument (`autodiff.identity`), a step of its own in a
  compiled computation, where the argument is a placeholder.

All are exact: the same values reach the same NumPy or BLAS calls.

Rewrites never touch the user's graph: a rewritten node and every node of the
plan downstream of it are copies, so `xp.graph` still shows what was built and
autodiff still sees the recorded primitives.
"""

from math import prod

from .. import executors
from ..graph.apply import apply
from ..graph.node import Node, users_of
from ..graph.primitives import BLOCK_REDUCE_OPS, ELEMENTWISE_OPS, PRIMITIVES, broadcast_shapes, reduced_shape

_MATMUL, _RESHAPE, _BROADCAST = PRIMITIVES["matmul"], PRIMITIVES["reshape"], PRIMITIVES["broadcast"]


def rewrite(order, requested, layout_of):
    """(order, requested) with the rewrites applied; the same lists when
    nothing matched. `layout_of(node)` is a realized node's layout."""
    users = users_of(order)
    wanted = set(requested)
    known = set(order)   # the order's nodes and the copies made so far
    replaced = {}
    out = []
    for node in order:
        if node.buffer is None:
            nodes = None
            for rule in RULES:
                nodes = rule(node, users, wanted, layout_of, replaced)
                if nodes is not None:
                    break
            if nodes is not None:
                # The last node is the result, which may be a node met before (a reshape's input).
                out.extend(n for n in nodes if n not in known)
                known.update(nodes)
                replaced[node] = nodes[-1]
                continue
            if any(i in replaced for i in node.inputs):
                # Inputs of the same shapes and dtypes: the node's own facts hold.
                copy = Node(node.op, tuple(replaced.get(i, i) for i in node.inputs), node.attrs,
                            node.shape, node.dtype, node.device)
                if hasattr(node, "index"):   # the collect position of the node it stands for (see schedule._rebind)
                    copy.index = node.index
                replaced[node] = copy
                known.add(copy)
                node = copy
        out.append(node)
    if not replaced:
        return order, requested
    requested = [replaced.get(n, n) for n in requested]
    return _live(out, requested), requested


def _live(order, requested):
    """`order` without the unrealized nodes no requested node needs any more
    (the product a dot replaced). Realized nodes stay: they are the plan's
    inputs, bound by position."""
    needed = set(requested)
    for node in reversed(order):
        if node in needed and node.buffer is None:
            needed.update(node.inputs)
    return [n for n in order if n.buffer is not None or n in needed]


def _as_dot(node, users, wanted, layout_of, replaced):
    """The nodes computing `sum(x * y)` as a dot product, the result last
    (over the copies in `replaced` of x and y, where they were rewritten)."""
    if node.op.name != "sum" or node.dtype.kind not in "fc" or not executors.executor_for(node.device).dot_pays:
        return None
    product = node.inputs[0]
    axes, keepdims = node.attrs
    if (product.buffer is not None or product.op.name != "multiply" or product in wanted
            or len(users[product]) != 1 or axes != tuple(range(len(product.shape)))):
        return None
    x, y = product.inputs
    if x.shape != product.shape or y.shape != product.shape:
        return None   # a broadcast operand: the product is bigger than its inputs
    if any(n.buffer is not None and layout_of(n) != "C" for n in (x, y)):
        return None   # a strided view would be copied to make it one vector
    n = prod(product.shape)
    x, y = replaced.get(x, x), replaced.get(y, y)
    flat = [apply(_RESHAPE, (v,), ((n,),)) if v.shape != (n,) else v for v in (x, y)]
    nodes = [f for f in flat if f not in (x, y)]
    dot = apply(_MATMUL, tuple(flat))
    nodes.append(dot)
    if keepdims and node.shape != ():
        nodes.append(apply(_RESHAPE, (dot,), (node.shape,)))
    return nodes


def _without_broadcasts(node, users, wanted, layout_of, replaced):
    """The elementwise `node` reading the sources of its broadcast operands,
    where the result keeps its shape."""
    if len(node.inputs) < 2 or node.op.name not in ELEMENTWISE_OPS:
        return None
    inputs = [replaced.get(i, i) for i in node.inputs]
    changed = False
    for k, i in enumerate(inputs):
        if i.buffer is None and i.op is _BROADCAST:
            source = i.inputs[0]
            trial = inputs[:k] + [source] + inputs[k + 1:]
            if broadcast_shapes(node.op.name, *(t.shape for t in trial)) == node.shape:
                inputs, changed = trial, True
    if not changed:
        return None
    return [apply(node.op, tuple(inputs), node.attrs)]


def _reduce_dropping_axes(node, users, wanted, layout_of, replaced):
    """`reshape(reduce(x, keepdims=True))` that only drops the reduced axes,
    as `reduce(x, keepdims=False)`."""
    if node.op is not _RESHAPE:
        return None
    reduction = node.inputs[0]
    if (reduction.buffer is not None or reduction.op.name not in BLOCK_REDUCE_OPS or reduction in wanted
            or len(users[reduction]) != 1):
        return None
    axes, keepdims = reduction.attrs
    source = replaced.get(reduction.inputs[0], reduction.inputs[0])
    if not keepdims or node.shape != reduced_shape(source.shape, axes, False):
        return None
    return [apply(reduction.op, (source,), (axes, False))]


def _identity_reshape(node, users, wanted, layout_of, replaced):
    """`reshape(x)` to x's own shape, as x (its copy in `replaced`, where x was rewritten)."""
    if node.op is not _RESHAPE or node in wanted or node.shape != node.inputs[0].shape:
        return None
    source = node.inputs[0]
    return [replaced.get(source, source)]


RULES = (_as_dot, _without_broadcasts, _reduce_dropping_axes, _identity_reshape)
