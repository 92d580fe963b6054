"""Collect pass: the unrealized graph below a force point, and its cache key.

One iterative depth-first walk (a graph a million nodes deep must not reach
Python's recursion limit) gives, in a single pass over the nodes:

- `order`: the unrealized nodes, inputs before users, with the realized nodes
  they read (the plan's inputs) but nothing below those;
- the plan-cache key: per node its primitive, attributes, shape, dtype,
  device and input positions, and for an input its shape, dtype, device and
  layout, so a plan compiled for contiguous inputs never runs on a view;
  last the positions of the requested nodes, as a tuple. The key is one flat
  tuple: a node's entry starts with its Primitive, an input's with its shape
  (a tuple), and input positions are the ints up to the next entry, so equal
  keys are equal graphs. A tuple per node would be an object the garbage
  collector counts and traverses: flat keys halve the walk's time;
- the nodes an earlier force point computed that this one needs again: the
  scheduler keeps them (see `schedule`), so a lazy result read element by
  element is computed at most twice.

When the plan cache has no plan under that key, `extent_free_key` gives the
key of the same graph with its extents replaced by symbols, under which a
plan of small elementwise work, reductions, products, transposes, reshapes,
broadcasts, slices and constants serves every extent (the last four rebound
to the new graph's attributes).

Two kinds of node are realized by the walk itself, without a step, and then
enter the plan as inputs: a 0-d `full` leaf (a Python scalar in the graph)
gets its executor's 0-d buffer, and a movement node over a realized buffer
gets the executor's view of it where there is one. Their values (a scalar,
an index) then stay out of the key: `y * c` with a new c each iteration, or
an element loop over an evaluated array, runs one cached plan. The nodes
keep these buffers for later forces.

This runs at every force point, cached plan or not: it keeps nothing per
node beyond the stack entry, the order, the key and the input buffers (the
plan's first slots); a realized input never enters the stack (its user emits
it on first sight), and a node whose inputs were all seen is emitted on its
first visit.
"""

from itertools import count
from math import prod

from ..executors import executor_for
from ..graph.primitives import ARG_REDUCE_OPS, BUFFER, CONTRACTION, ELEMENTWISE, MOVEMENT, PRIMITIVES, REDUCE
from .keep import shrinks_enough

_FULL = PRIMITIVES["full"]

# Node.computed: 0 = never computed; PINNED = computed inside retain_history
# (autodiff walks its history again, it is never made a leaf); otherwise the
# number of the force point that computed it without keeping it.
PINNED = -1
_force_numbers = count(1)
# Node.mark: the number of the last walk that reached the node; Node.index
# is then its position in that walk's order (-1 while its inputs are
# visited). Marks on the nodes, not a dict, halve the walk's cost; the
# scheduler's lock keeps two walks from sharing a node.
_visits = count(1)


def collect(requested, retaining, layout):
    """(order, outputs, key, buffers) for the unrealized nodes `requested`.

    `layout(node)` gives a realized node's buffer layout; `buffers` holds the
    realized nodes' buffers in order (the plan's first slots). `outputs` is
    `requested` followed by the nodes a previous force point computed that
    feed a node computed here for the first time (the boundary where work
    would repeat): the plan computes and keeps them too.
    """
    this_force = PINNED if retaining else next(_force_numbers)
    counting = not retaining   # whether nodes computed by earlier forces are looked for
    visit = next(_visits)
    order = []
    n_order = 0   # len(order), counted: the walk reads it at every emission
    key = []
    buffers = []
    again = []
    stack = requested[::-1]   # unrealized nodes only
    push = stack.append
    pop = stack.pop
    while stack:
        node = stack[-1]
        if node.mark != visit:   # first seen: push the unseen unrealized inputs, emit the realized ones
            node.mark = visit
            fresh = counting and node.computed == 0
            pushed = False
            for child in node.inputs:
                if child.buffer is None:
                    if child.mark != visit:
                        push(child)
                        pushed = True
                    if fresh:
                        c = child.computed
                        if c > 0 and c != this_force and child not in again and child not in requested:
                            again.append(child)
                elif child.mark != visit:
                    child.mark = visit
                    child.index = n_order
                    n_order += 1
                    order.append(child)
                    buffers.append(child.buffer)
                    key += (child.shape, child.dtype, child.device, child.layout or layout(child))
            if pushed:
                node.index = -1
                continue
        elif node.index != -1:   # pushed twice, emitted already
            pop()
            continue
        pop()
        node.index = n_order
        n_order += 1
        order.append(node)
        op = node.op
        ins = node.inputs
        # A view of data realized by now (the input check first: a view of a lazy input is a step).
        if ((op.kind is MOVEMENT and ins[0].buffer is not None or op is _FULL)
                and realized_without_step(node)):
            buffers.append(node.buffer)
            key += (node.shape, node.dtype, node.device, layout(node))
            continue
        n = len(ins)
        if n == 2:
            key += (op, node.attrs, node.shape, node.dtype, node.device, ins[0].index, ins[1].index)
        elif n == 1:
            key += (op, node.attrs, node.shape, node.dtype, node.device, ins[0].index)
        else:
            key += (op, node.attrs, node.shape, node.dtype, node.device)
            key += [i.index for i in ins]
        if node.computed == 0:
            node.computed = this_force
        elif retaining:
            node.computed = PINNED
    outputs = requested + again if again else requested
    key.append((outputs[0].index,) if len(outputs) == 1 else tuple([n.index for n in outputs]))
    return order, outputs, tuple(key), buffers


# The first entry of an extent-free key: no exact key starts with it.
ANY_EXTENT = "any extent"
# Primitives whose kernels take any extent: elementwise ones, reductions
# (but the arg ones, which reshape their result to its shape), products,
# transposes and flips (whose attributes are axes).
ANY_EXTENT_PRIMITIVES = frozenset(
    [p for p in PRIMITIVES.values() if p.kind in (ELEMENTWISE, REDUCE, CONTRACTION) and p.name not in ARG_REDUCE_OPS]
    + [PRIMITIVES["permute"], PRIMITIVES["flip"]])
# Primitives whose attributes hold extents (a shape, slice bounds), with the
# positions of those attributes: a plan with their steps runs at another
# extent once those steps' kernels are built again from that graph's
# attributes (`schedule` rebinds it), so the extent-free key holds these
# attributes with their extents as symbols.
EXTENT_ATTRIBUTES = {PRIMITIVES["reshape"]: (0,), PRIMITIVES["broadcast"]: (0,), PRIMITIVES["slice"]: (0, 1, 2),
                     PRIMITIVES["full"]: (0,), PRIMITIVES["iota"]: (0,)}


def extent_free_key(order, outputs, layout):
    """The key of the graph `collect` just walked (`order`, `outputs`) with
    every extent above 1 replaced by the number of its first appearance, or
    None when a plan for it might depend on its extents.

    A plan runs at any extent when it is elementwise work, reductions with
    a monoid, products, transposes and flips over values its executor
    computes as whole-array calls (`Executor.any_extent_points`): NumPy's
    calls take any extent, and what the passes decide (fusion, temporaries
    written into, lifetimes, which products to keep) follows from which
    extents are equal or 1, which this key keeps, and from whether each
    reduction shrinks its input enough to be kept (`keep.shrinks_enough`),
    which the key holds too. So a new length of a small expression, or a
    new batch size of a small model, runs the plan of another. Reshapes,
    broadcasts, slices and constant leaves carry extents in their
    attributes (EXTENT_ATTRIBUTES): the key holds those as symbols too, and
    their steps are built again for each graph that runs the plan. The
    other primitives choose their kernels by size: they keep exact keys.
    """
    symbols = {}

    def symbolic(extents):
        return tuple([n if n < 2 else symbols.setdefault(n, -1 - len(symbols)) for n in extents])
    key = [ANY_EXTENT]
    for node in order:
        dtype = node.dtype
        if dtype.__class__ is tuple:   # the outputs of a multi-output primitive
            return None
        shape = node.shape
        if prod(shape) > executor_for(node.device).any_extent_points:
            return None
        shape = symbolic(shape)
        if node.buffer is not None:
            key += (shape, dtype, node.device, node.layout or layout(node))
            continue
        op = node.op
        attrs = node.attrs
        places = EXTENT_ATTRIBUTES.get(op)
        if places is not None:
            attrs = tuple([symbolic(a) if i in places else a for i, a in enumerate(attrs)])
        elif op not in ANY_EXTENT_PRIMITIVES:
            return None
        key += (op, attrs, shape, dtype, node.device)
        if op.kind is REDUCE and node not in outputs:   # whether the plan may keep it (a str: ints are inputs)
            key.append("may keep" if shrinks_enough(node) else "never keeps")
        key += [i.index for i in node.inputs]
    key.append(tuple([n.index for n in outputs]))
    return tuple(key)


def take_views(order):
    """Realize the nodes of toposorted `order` that a force point's collect
    realizes without a step (0-d `full` leaves, views of realized data), so
    that a plan built from `order` without collect is the plan a force runs."""
    for node in order:
        if node.buffer is None and (node.op is _FULL or node.op.kind is MOVEMENT):
            realized_without_step(node)


def realized_by_views(node):
    """Whether the unrealized `node` is now realized without a plan: a 0-d
    `full` leaf, or a chain of movement nodes down to realized data that its
    executor views (an element read of an evaluated array, `x[i, j]`)."""
    chain = []
    while node.buffer is None:
        chain.append(node)
        if node.op is _FULL:
            break
        if node.op.kind is not MOVEMENT or len(node.inputs) != 1:
            return False
        node = node.inputs[0]
    for node in reversed(chain):
        if not realized_without_step(node):
            return False
    return True


def realized_without_step(node):
    """Whether `node` is now realized without a step: a 0-d `full` leaf holds
    its value as its executor's buffer, a movement node over a realized
    buffer its executor's view of it (where it has one)."""
    if node.op is _FULL:
        if node.shape != ():
            return False
        node.realize_as(executor_for(node.device).from_scalar(node.attrs[2].value, node.dtype), BUFFER)
        return True
    if len(node.inputs) != 1 or node.inputs[0].buffer is None:
        return False
    buffer = view(node)
    if buffer is None:
        return False
    node.hold_view(buffer)
    return True


def view(node):
    """The executor's view of the realized input of movement `node`, or None."""
    source = node.inputs[0]
    return executor_for(source.device).view(node.op, node.attrs, node.shape, node.dtype, source.buffer)
