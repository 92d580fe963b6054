"""The VJP registry: the table `VJP` (primitive name -> rule) that the rule
modules (`rules`, `indexing_rules`, `linalg_rules`) fill, the primitives that
are deliberately not differentiable, and the helpers every rule uses.

A module of its own, so that the rule modules register here without
importing each other.
"""

from ..namespace.array_object import Array

VJP = {}

# Primitives with real floating outputs that are deliberately not
# differentiable (piecewise constant, or index-valued): no cotangent flows.
NON_DIFFERENTIABLE = frozenset({
    "floor", "ceil", "round", "trunc", "sign", "floor_divide", "nextafter", "stop_gradient",
})


def rule(*names):
    """Decorator: register the function as the VJP rule of the primitives `names`."""
    def register(fn):
        for name in names:
            VJP[name] = fn
        return fn
    return register


def arg(node, i):
    """The Array of `node`'s input `i`."""
    return Array._new(node.inputs[i])


def out(node):
    """The Array of `node` itself (its forward value)."""
    return Array._new(node)
