"""The reverse sweep over a recorded graph.

Cotangents flow from the output to the inputs in reverse topological order;
each node's primitive has a VJP rule in `rules.VJP`. Rules build their results
with namespace functions, so gradients are graph nodes too (they fuse, they
evaluate lazily, and they can be differentiated again).
"""

import warnings

from .. import dtypes as dt
from ..namespace.array_object import Array
from ..namespace import creation
from . import rules


def history_order(output):
    """Nodes below `output` through their recorded history, inputs first.

    Unlike the scheduler's traversal this descends into realized nodes that
    kept their history (see graph.node.retain_history). Iterative.
    """
    order = []
    seen = set()
    stack = [(output, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for child in reversed(node.inputs):
            if id(child) not in seen:
                stack.append((child, False))
    return order


def differentiable(dtype):
    return dtype in dt.CATEGORIES["real floating"]


def backward(output, targets, cotangent):
    """Cotangents of `targets` (nodes) for `cotangent` flowing into `output` (a node).

    Returns one Array or None (no path) per target. Cotangents flow only into
    nodes that depend on a target. A node on such a path whose primitive has
    no rule and is not known to be non-differentiable raises TypeError, as
    does a complex intermediate: neither silently drops the gradient.
    """
    order = history_order(output)
    wanted = {id(t) for t in targets}
    relevant = set(wanted)
    for node in order:
        if any(id(child) in relevant for child in node.inputs):
            relevant.add(id(node))
    found = {}
    pending = {id(output): cotangent}
    for node in reversed(order):
        g = pending.pop(id(node), None)
        if g is None:
            continue
        if id(node) in wanted:
            found[id(node)] = g
        if not node.inputs:
            continue
        if node.op.name == "select":
            # Cotangents of a multi-output node's outputs gather into one list;
            # its rule receives them together (None for unused outputs).
            parent = node.inputs[0]
            slots = pending.setdefault(id(parent), [None] * len(parent.shape))
            index = node.attrs[0]
            slots[index] = g if slots[index] is None else slots[index] + g
            continue
        rule = rules.VJP.get(node.op.name)
        if rule is None:
            if node.op.name in rules.NON_DIFFERENTIABLE:
                continue
            raise TypeError(f"gradients: arrayx cannot differentiate through {node.op.name} "
                            f"(it has no VJP rule)")
        for child, ct in zip(node.inputs, rule(g, node)):
            if ct is None or id(child) not in relevant or child.dtype in dt.CATEGORIES["integer or bool"]:
                continue
            if not differentiable(child.dtype):
                raise TypeError(f"gradients: the path to a differentiated array passes through a "
                                f"{child.dtype} intermediate; complex intermediates are not differentiable")
            ct = rules.sum_to_shape(ct, child.shape)
            previous = pending.get(id(child))
            pending[id(child)] = ct if previous is None else previous + ct
    # A node evaluated outside retain_history lost its history; a target that
    # got no gradient may lie below one (or may truly not affect the output).
    # The arguments below grad's targets (evaluated before its scope) hide nothing.
    below_targets = {id(i) for t in targets for i in t.inputs}
    freed = sum(1 for n in order if n.op.name == "evaluated" and id(n) not in wanted
                and id(n) not in below_targets and differentiable(n.dtype))
    if freed and any(id(t) not in found for t in targets):
        warnings.warn(f"gradients: a differentiated array got no gradient, and {freed} floating array(s) "
                      f"below output carry no history (evaluated at a force point outside retain_history, "
                      f"or results of a data-dependent function such as unique_values), so arrays below "
                      f"them get no gradient. Differentiate a function with grad/vjp, or build the graph "
                      f"inside arrayx.autodiff.retain_history().", stacklevel=3)
    return [found.get(id(t)) for t in targets]


def zeros_for(node):
    return creation.zeros(node.shape, dtype=node.dtype, device=node.device)


def ones_for(node):
    return creation.ones(node.shape, dtype=node.dtype, device=node.device)


__all__ = ["backward", "history_order", "differentiable", "zeros_for", "ones_for", "Array"]
