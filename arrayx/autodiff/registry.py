"""The VJP registry: the table `VJP` (primitive name -> rule) that the rule
modules (`rules`, `indexing_rules`, `linalg_rules`) fill, the primitives that
are deliberately not differentiable, and the helpers every rule uses.

A module of its own, so that the rule modules register here without
importing each other.
"""

from ..namespace.array_object import Array

VJP = {}

# Primitives over floating inputs that are deliberately not differentiable:
# no cotangent flows through them. Those with floating outputs are piecewise
# constant (or cut the gradient on purpose); the others have bool or index
# outputs, which never carry a cotangent. Any other primitive without a VJP
# is an error on a differentiated path (tests/test_primitives.py pins them).
NON_DIFFERENTIABLE = frozenset({
    "floor", "ceil", "round", "trunc", "sign", "floor_divide", "nextafter", "stop_gradient",
    "isfinite", "isinf", "isnan", "signbit", "equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
    "any", "all", "argmax", "argmin", "argsort", "searchsorted", "isin", "nonzero",
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
