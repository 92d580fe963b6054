"""Collect pass: the unrealized graph below a force point, and its cache key.

One iterative depth-first walk (a graph a million nodes deep must not reach
Python's recursion limit) gives, in a single pass over the nodes:

- `order`: the unrealized nodes, inputs before users, with the realized nodes
  they read (the plan's inputs) but nothing below those;
- the plan-cache key: per node its primitive, attributes, shape, dtype,
  device and input positions, and for an input its shape, dtype, device and
  layout, so a plan compiled for contiguous inputs never runs on a view;
- the nodes an earlier force point computed that this one needs again: the
  scheduler keeps them (see `schedule`), so a lazy result read element by
  element is computed at most twice.

This runs at every force point, cached plan or not: it allocates nothing per
node beyond the stack entry, the order and the key.
"""

from itertools import count

# Node.computed: 0 = never computed; PINNED = computed inside retain_history
# (autodiff walks its history again, it is never made a leaf); otherwise the
# number of the force point that computed it without keeping it.
PINNED = -1
_force_numbers = count(1)


def collect(requested, retaining, layout):
    """(order, key, inputs, again) for the unrealized nodes `requested`.

    `layout(node)` gives a realized node's buffer layout. `again` lists the
    nodes a previous force point computed, that feed a node computed here for
    the first time: the boundary where work would repeat.
    """
    this_force = PINNED if retaining else next(_force_numbers)
    order = []
    key = []
    inputs = []
    again = []
    position = {}   # node -> index in order; -1 while its inputs are visited
    stack = list(reversed(requested))
    while stack:
        node = stack[-1]
        p = position.get(node)
        if p is None:
            position[node] = -1
            if node.buffer is None:
                for child in node.inputs:
                    if child not in position:
                        stack.append(child)
            continue
        stack.pop()
        if p != -1:
            continue
        position[node] = len(order)
        order.append(node)
        if node.buffer is not None:
            inputs.append(node)
            key.append((node.shape, node.dtype, node.device, layout(node)))
            continue
        ins = node.inputs
        if len(ins) == 1:
            where = position[ins[0]]
        else:
            where = tuple([position[n] for n in ins])
        key.append((node.op, node.attrs, node.shape, node.dtype, node.device, where))
        if node.computed == 0:
            node.computed = this_force
            if this_force != PINNED:
                for n in ins:
                    c = n.computed
                    if c > 0 and c != this_force and n.buffer is None and n not in again and n not in requested:
                        again.append(n)
        elif retaining:
            node.computed = PINNED
    for n in again:
        requested.append(n)
    key.append(tuple([position[n] for n in requested]))
    return order, tuple(key), inputs, again
