"""What the differentiating functions (`grad`, `vjp`, `jvp`, the Jacobians) do
with their arguments: check that the differentiated leaves are real floating
arrays (naming a bad one by its path), evaluate lazy arguments before the
retained scope, and give each differentiated leaf a node of its own to
differentiate by.
"""

import numbers

from .. import dtypes as dt, pytree
from ..graph.node import tracing
from ..namespace.array_object import Array
from ..namespace.build import P, make
from ..scheduler.schedule import realize
from .backward import zeros_for

__all__ = ["check_differentiable", "differentiable_leaves", "array_leaves", "identity", "realize_arguments",
           "argnum_tuple", "separate", "separate_arguments", "gradient_trees"]


def check_differentiable(x, name, label):
    if not isinstance(x, Array):
        raise TypeError(f"{name}: {label} is a {type(x).__name__}; expected an arrayx array of a real "
                        f"floating dtype")
    if x.dtype not in dt.CATEGORIES["real floating"]:
        raise TypeError(f"{name}: {label} has dtype {x.dtype}; differentiation needs a real floating dtype "
                        f"(float16, float32 or float64)")


def differentiable_leaves(tree, name, label):
    """The leaves of the pytree `tree` and its TreeDef; every leaf must be a
    real floating array (an error names the leaf by its path under `label`)."""
    leaves, treedef = pytree.flatten(tree)
    for leaf, path in zip(leaves, treedef.paths):
        check_differentiable(leaf, name, label + path)
    return leaves, treedef


def array_leaves(tree, name, label):
    """The leaves of the pytree `tree` f returned and its TreeDef; every leaf must be an array."""
    leaves, treedef = pytree.flatten(tree)
    for leaf, path in zip(leaves, treedef.paths):
        if not isinstance(leaf, Array):
            raise TypeError(f"{name}: f must return an arrayx array or a pytree of them; {label}{path} "
                            f"is a {type(leaf).__name__}")
    return leaves, treedef


def identity(x):
    """x through a new identity node: a separate value to differentiate with
    respect to (each differentiated argument gets its own node, even when one
    array is passed twice), whose gradient still flows on to x for an
    enclosing differentiation (that is what makes grad(grad(f)) work). It is
    a reshape to x's own shape: over an evaluated x, a view the force point
    takes without a step (scheduler.collect), and its VJP passes the
    cotangent through unchanged."""
    node = x._node
    return Array._new(make(P["reshape"], (node,), (node.shape,)))


def realize_arguments(args):
    """Evaluate the arrays in the arguments (pytrees) before the retained scope (one force point).

    f is differentiated with respect to its arguments' values, not their
    history. Computed outside retain_history, a lazy argument (w after
    `w = w - lr * g` in a training loop) becomes a leaf that frees its update
    chain; computed inside, it would keep the chain and every call would
    compute it again. Inside an enclosing grad the scope is retained anyway,
    so the outer gradient still sees the path to x.
    """
    if tracing():   # a traced function's arguments are placeholders, with no value yet
        return
    lazy = [a._node for a in pytree.flatten(list(args))[0] if isinstance(a, Array) and a._node.buffer is None]
    if lazy:
        realize(lazy)


def argnum_tuple(argnums, n_args, name):
    """`argnums` (an int or a sequence of ints) as a tuple of non-negative positions."""
    nums = (argnums,) if isinstance(argnums, numbers.Integral) else tuple(argnums)
    for i in nums:
        if not -n_args <= i < n_args:
            raise ValueError(f"{name}: argnums {argnums} is out of range for {n_args} positional arguments")
    return tuple(i % n_args for i in nums)


def separate(leaves):
    """An identity node over each leaf: (the new arrays, the nodes to differentiate by)."""
    xs = [identity(leaf) for leaf in leaves]
    return xs, [x._node for x in xs]


def separate_arguments(args, nums, flat):
    """(the arguments with each leaf of args[i], i in `nums`, through its own
    identity node; those nodes, the targets, in order). `flat` holds
    (leaves, treedef) of each args[i]. The targets are taken now: f may
    rebind its arguments (a[k] = v)."""
    xs = list(args)
    targets = []
    for i, (leaves, treedef) in zip(nums, flat):
        separated, nodes = separate(leaves)
        xs[i] = treedef.unflatten(separated)
        targets += nodes
    return xs, targets


def gradient_trees(found, targets, treedefs):
    """The gradients `backward` found, zeros where none, as one tree per TreeDef."""
    grads = iter([g if g is not None else zeros_for(t) for g, t in zip(found, targets)])
    return tuple(treedef.unflatten([next(grads) for _ in range(treedef.num_leaves)]) for treedef in treedefs)
