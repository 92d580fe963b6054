"""Applying a primitive to input nodes: the one place where shape/dtype rules
run and input dtypes are checked against the category a primitive accepts.

The namespace, the scheduler's rewrites, autodiff and transformers all build
computed nodes here, so an error is raised at the user's call, naming the
user's function (`name`) and operand, never later at evaluation.
"""

import sys

from .node import Node
from .primitives import PRIMITIVES, REDUCE
from .sites import call_site

_SELECT = PRIMITIVES["select"]
# Primitives whose result has at most as many elements as their first input
# (an element read x[i, j] records a slice and a reshape): no size check.
_NEVER_GROW = frozenset([p for p in PRIMITIVES.values() if p.kind == REDUCE]
                        + [PRIMITIVES[name] for name in ("slice", "reshape", "permute", "flip")])


def apply(prim, inputs, attrs=(), name=None):
    """The node of `prim` over the nodes `inputs` with static `attrs`, its
    shape and dtype inferred by the primitive's rule.

    Raises a TypeError naming `name` (the primitive's name by default) and the
    operand when an input's dtype is outside the primitive's category, and a
    ValueError when the result is too large to address. A node of a
    primitive that may fail on values keeps the user's call site
    (graph.sites); the others pay nothing for it.
    """
    result = prim.result
    if result is not None:
        # An elementwise node of an accepted dtype whose operands have one
        # shape or are 0-d (Python scalars): the rule's answer without calling
        # it, and no size check. A loop body builds such nodes by the thousand.
        dtype = result.get(inputs[-1].dtype)
        if dtype is not None:
            shape = ()
            for node in inputs:
                s = node.shape
                if s != shape and s != ():
                    if shape != ():
                        break   # operands that broadcast: the rule's general case
                    shape = s
            else:
                return Node(prim, inputs, attrs, shape, dtype, inputs[0].device)
    accepts = prim.accepts
    if accepts is not None:
        for node in inputs:
            if node.dtype not in accepts:
                check_accepts(prim, inputs, name)
    shape, dtype = prim.rule(prim, inputs, attrs)
    # Broadcasting, contraction, concat... may outgrow the inputs.
    if shape != inputs[0].shape and prim not in _NEVER_GROW:
        check_size(shape, dtype, name or prim.name)
    node = Node(prim, inputs, attrs, shape, dtype, inputs[0].device)
    if prim.may_fail:
        node.site = call_site()
    return node


def apply_multi(prim, inputs, attrs=(), name=None):
    """The output nodes of the multi-output primitive `prim` (one `select`
    node each), checked as `apply` checks."""
    if prim.accepts is not None:
        check_accepts(prim, inputs, name)
    outputs = prim.rule(prim, inputs, attrs)
    for shape, dtype in outputs:
        check_size(shape, dtype, name or prim.name)
    node = Node(prim, inputs, attrs, tuple(s for s, _ in outputs), tuple(d for _, d in outputs), inputs[0].device)
    if prim.may_fail:
        node.site = call_site()
    return tuple(Node(_SELECT, (node,), (i,), shape, dtype, node.device) for i, (shape, dtype) in enumerate(outputs))


def check_accepts(prim, inputs, name=None):
    """A TypeError naming `name` and the operand (x, or x1, x2... for several
    inputs) whose dtype is outside the category `prim` accepts (not None)."""
    for i, node in enumerate(inputs):
        if node.dtype not in prim.accepts:
            argname = "x" if len(inputs) == 1 else f"x{i + 1}"
            raise TypeError(f"{name or prim.name}: {argname} has dtype {node.dtype}; "
                            f"expected a {prim.category} dtype")


def check_size(shape, dtype, name):
    """A ValueError naming `name` if no array of `shape` and `dtype` can exist.

    NumPy's rule, which the executors share: the product of the nonzero
    dimensions times the item size must fit in a signed machine word
    (sys.maxsize bytes), else the array fails at the force point. Functions
    that take or compute a shape check it at the call; `apply` checks every
    shape that may outgrow the inputs.
    """
    n = dtype.itemsize
    for d in shape:
        if d:
            n *= d
    if n > sys.maxsize:
        raise ValueError(f"{name}: shape {shape} of {dtype} is too large to address: its nonzero dimensions "
                         f"times the item size ({dtype.itemsize}) exceed sys.maxsize ({sys.maxsize}) bytes")
