"""The reverse sweep over a recorded graph.

Cotangents flow from the output to the inputs in reverse topological order;
each node's primitive has a VJP rule in `registry.VJP`. Rules build their results
with namespace functions, so gradients are graph nodes too (they fuse, they
evaluate lazily, and they can be differentiated again).
"""

import warnings

from .. import dtypes as dt
from ..namespace import creation
from ..namespace.build import broadcast_node, scalar_node, wrap
# The rule modules fill the registry as they import.
from . import indexing_rules, linalg_rules, registry, rules, templates  # noqa: F401
from .composite_rules import composite_cotangents


def history_order(outputs):
    """Nodes below `outputs` (a list) through their recorded history, inputs first.

    Unlike the scheduler's traversal this descends into realized nodes that
    kept their history (see graph.node.retain_history). Iterative. Nodes hash
    by identity, so they are their own keys here and in `backward`.
    """
    order = []
    seen = set()
    stack = [(output, False) for output in reversed(outputs)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        for child in reversed(node.inputs):
            if child not in seen:
                stack.append((child, False))
    return order


def differentiable(dtype):
    return dtype in dt.CATEGORIES["real floating"]


_NO_COTANGENT = dt.CATEGORIES["integer or bool"]


def backward(outputs, targets, cotangents):
    """Cotangents of `targets` (nodes) for `cotangents` flowing into `outputs`
    (nodes, one cotangent each; an output listed twice gets their sum).

    Returns one Array or None (no path) per target. Cotangents flow only into
    nodes that depend on a target, and a rule is told which of its inputs
    those are (`needs`), so it builds nothing for the others. A node on such
    a path whose primitive has no rule and is not known to be
    non-differentiable raises TypeError, as does a complex intermediate:
    neither silently drops the gradient. From the third sweep over a history
    of one structure on, the gradient graph is rebuilt from a template of
    the second (`templates`).
    """
    seeds = [c._node for c in cotangents]
    walked = history_order(outputs + seeds)
    key = templates.structure(walked, outputs, targets, seeds)
    if key is None:
        results = _sweep(outputs, targets, cotangents)
    else:
        results = templates.gradients(key, walked, lambda: _sweep(outputs, targets, cotangents))
    if any(r is None for r in results):
        _warn_if_history_was_freed(history_order(outputs), set(targets))
    return results


def _sweep(outputs, targets, cotangents):
    """backward's gradients, built by the VJP rules."""
    order = history_order(outputs)
    wanted = set(targets)
    relevant = set(wanted)
    for node in order:
        for child in node.inputs:
            if child in relevant:
                relevant.add(node)
                break
    found = {}
    pending = {}
    for output, cotangent in zip(outputs, cotangents):
        if output in relevant:
            previous = pending.get(output)
            pending[output] = cotangent if previous is None else previous + cotangent
    for node in reversed(order):
        g = pending.pop(node, None)
        if g is None:
            continue
        if node in wanted:
            found[node] = g
        inputs = node.inputs
        if not inputs:
            continue
        if node.op.name == "select":
            # Cotangents of a multi-output node's outputs gather into one list;
            # its rule receives them together (None for unused outputs).
            parent = inputs[0]
            slots = pending.setdefault(parent, [None] * len(parent.shape))
            index = node.attrs[0]
            slots[index] = g if slots[index] is None else slots[index] + g
            continue
        composite = composite_cotangents(g, node, wanted)
        if composite is not None:
            for child, ct in composite:
                _accumulate(pending, child, ct)
            continue
        rule = registry.VJP.get(node.op.name)
        if rule is None:
            if node.op.name in registry.NON_DIFFERENTIABLE:
                continue
            raise TypeError(f"gradients: arrayx cannot differentiate through {node.op.name} "
                            f"(it has no VJP rule)")
        # Integer and boolean inputs take no cotangent; a complex one asks for
        # its cotangent so that the check below can reject it.
        needs = tuple(child in relevant and child.dtype not in _NO_COTANGENT for child in inputs)
        for child, need, ct in zip(inputs, needs, rule(g, node, needs)):
            if not need or ct is None:
                continue
            if not differentiable(child.dtype):
                raise TypeError(f"gradients: the path to a differentiated array passes through a "
                                f"{child.dtype} intermediate; complex intermediates are not differentiable")
            _accumulate(pending, child, ct)
    return [found.get(t) for t in targets]


def _accumulate(pending, child, ct):
    """Add `ct`, summed back to `child`'s shape, to the cotangent `child` has so far."""
    ct = rules.sum_to_shape(ct, child.shape)
    previous = pending.get(child)
    pending[child] = ct if previous is None else previous + ct


def _warn_if_history_was_freed(order, wanted):
    """A node evaluated outside retain_history lost its history; a target that
    got no gradient may lie below one (or may truly not affect the output).
    The arguments below grad's targets (evaluated before its scope) hide nothing."""
    below_targets = {i for t in wanted for i in t.inputs}
    freed = sum(1 for n in order if n.op.name == "evaluated" and n not in wanted
                and n not in below_targets and differentiable(n.dtype))
    if freed:
        warnings.warn(f"gradients: a differentiated array got no gradient, and {freed} floating array(s) "
                      f"below output carry no history (evaluated at a force point outside retain_history, "
                      f"or results of a data-dependent function such as unique_values), so arrays below "
                      f"them get no gradient. Differentiate a function with grad/vjp, or build the graph "
                      f"inside arrayx.autodiff.retain_history().", stacklevel=4)


def zeros_for(node):
    return creation.zeros(node.shape, dtype=node.dtype, device=node.device)


def ones_for(node):
    """Ones like `node`: a realized scalar 1 broadcast as a view, so a gradient's
    seed is no step of its plan (and a 0-d seed is no node at all)."""
    return wrap(broadcast_node(scalar_node(1, node.dtype, node.device, "gradients"), node.shape))


__all__ = ["backward", "history_order", "differentiable", "zeros_for", "ones_for"]
