"""Forward mode (`jvp`) and whole Jacobians (`jacfwd`, `jacrev`, `hessian`).

Forward mode comes from the VJP rules, not from a second table of JVP rules.
For cotangents u on f's outputs the reverse sweep builds the graph of
J^T u, and every VJP rule is linear in its cotangent (it multiplies,
contracts, solves, gathers, scatters, slices, pads, sums or broadcasts it,
with coefficients from the forward pass only). So J^T u is a linear function
of u, and its VJP with respect to u for a cotangent v is J v: a second
reverse sweep, over the first one's graph, gives the tangent (the
"double-VJP" trick). u is a zero array that is never computed: the second
sweep's rules take only the first graph's coefficients, so the tangent's
graph holds the forward pass and the tangent and nothing of J^T u (for a
two-layer tanh network, the steps of a hand-written JVP). Each derivative
is written once, in the VJP table, and forward mode is right wherever the
reverse rules are: the linalg rules, indexing and scatter (duplicates
included), the composites (logsumexp, vector norms), the conventions at
ties and kinks. What it costs is Python: the two sweeps build about twice
the nodes of a hand-written JVP, in four times its time (docs/autodiff.md
has the figures).

A Jacobian is one sweep per basis vector (jacrev: one VJP per output
element; jacfwd: one J^T u sweep, then one transposing sweep per input
element), all in one graph that one force point computes. The basis vectors are separate arrays of one structure, so
the sweeps after the second are rebuilt from a template
(`autodiff.templates`).
"""

import math
import numbers

import numpy as np

from .. import dtypes as dt, pytree
from ..graph.node import retain_history
from ..namespace import manipulation as manip
from ..namespace.array_object import Array
from ..namespace.creation import asarray, zeros
from .arguments import (argnum_tuple, array_leaves, differentiable_leaves, identity, realize_arguments,
                        separate_arguments)
from .backward import backward, history_order, zeros_for

__all__ = ["jvp", "jacfwd", "jacrev", "hessian"]


def _transposed_sweep(gradients, cotangents, us, reached):
    """J v: the cotangents of the nodes `us` for `cotangents` flowing into
    `gradients`, the graphs of J^T u; None where no gradient depends on a u.
    Only the us in `reached` (the nodes below `gradients`) are asked for: an
    output that depends on no differentiated argument has no path, which
    `backward` would report as history freed by a force point."""
    wanted = [u for u in us if u in reached]
    found = dict(zip(wanted, backward(gradients, wanted, cotangents))) if wanted else {}
    return [found.get(u) for u in us]


def _cotangent_placeholders(outs):
    """A zero array per output, each through its own identity node (never a
    broadcast, which the sum rule would look through), as the u of J^T u."""
    return [identity(zeros_for(o._node)) for o in outs]


def jvp(f, primals, tangents):
    """Evaluates f at `primals` and its Jacobian-vector product with `tangents` (forward mode).

    Parameters
    ----------
    f : callable
        Takes len(primals) arguments and returns an array or a pytree
        (tuple, list, dict) of arrays.
    primals : tuple or list
        The point to differentiate at, one entry per argument of f: real
        floating arrays, or pytrees of them.
    tangents : tuple or list
        The direction, of the structure of `primals`: each leaf an array of
        its primal's shape and dtype.

    Returns
    -------
    out : tuple
        (f(*primals), the tangent): the tangent has the structure of f's
        result, each leaf J v for that output (zeros for an integer or bool
        output). Both are lazy; `xp.eval(y, t)` computes them at one force
        point.

    Raises
    ------
    TypeError
        A primal leaf that is not a real floating array, a tangent that is
        not an array or differs from its primal in dtype, a result leaf that
        is not an array or is complex.
    ValueError
        primals and tangents of different structures or shapes.
    """
    for label, value in (("primals", primals), ("tangents", tangents)):
        if type(value) not in (tuple, list):
            raise TypeError(f"jvp: {label} must be a tuple or list of f's arguments, got {type(value).__name__}")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    flat = [differentiable_leaves(p, "jvp", f"primals[{i}]") for i, p in enumerate(primals)]
    directions = []
    for i, ((leaves, treedef), tangent) in enumerate(zip(flat, tangents)):
        given, given_def = pytree.flatten(tangent)
        if given_def != treedef:
            raise ValueError(f"jvp: tangents[{i}] and primals[{i}] differ in structure")
        for leaf, t, path in zip(leaves, given, treedef.paths):
            if not isinstance(t, Array):
                raise TypeError(f"jvp: tangents[{i}]{path} is a {type(t).__name__}; expected an arrayx array")
            if t.dtype != leaf.dtype:
                raise TypeError(f"jvp: tangents[{i}]{path} has dtype {t.dtype}, its primal {leaf.dtype}")
            if t.shape != leaf.shape:
                raise ValueError(f"jvp: tangents[{i}]{path} has shape {t.shape}, its primal {leaf.shape}")
        directions += given
    realize_arguments(primals)
    with retain_history():
        xs, targets = separate_arguments(primals, range(len(primals)), flat)
        y = f(*xs)
        outs, out_def = array_leaves(y, "jvp", "output")
        for o, path in zip(outs, out_def.paths):
            if o.dtype in dt.CATEGORIES["complex floating"]:
                raise TypeError(f"jvp: output{path} has dtype {o.dtype}; forward mode needs real outputs")
        real = [o for o in outs if o.dtype in dt.CATEGORIES["real floating"]]
        us = _cotangent_placeholders(real)
        gradients = backward([o._node for o in real], targets, us) if real else []
        pairs = [(g._node, v) for g, v in zip(gradients, directions) if g is not None]
        reached = set(history_order([g for g, _ in pairs]))
        found = iter(_transposed_sweep([g for g, _ in pairs], [v for _, v in pairs], [u._node for u in us], reached))
    result = [next(found) if o.dtype in dt.CATEGORIES["real floating"] else None for o in outs]
    return y, out_def.unflatten([t if t is not None else zeros_for(o._node) for t, o in zip(result, outs)])


def _basis(node):
    """The standard basis of arrays of `node`'s shape, dtype and device, in C
    order: a separate realized array per element, so that sweeps seeded by
    them have histories of one structure."""
    n = math.prod(node.shape)
    eye = np.eye(n, dtype=node.dtype.dtype)
    return [asarray(eye[k].reshape(node.shape), device=node.device) for k in range(n)]


def _stacked(pieces, out, target, leading):
    """The Jacobian block d out / d target, of shape out.shape + target.shape,
    from its rows (`leading`: one per element of out, each of target's shape)
    or its columns (one per element of target, each of out's shape); None
    pieces are zero."""
    shape = out.shape + target.shape
    if all(p is None for p in pieces):
        return zeros(shape, dtype=out.dtype if not leading else target.dtype, device=out.device)
    like = target if leading else out._node
    pieces = [p if p is not None else zeros_for(like) for p in pieces]
    if len(pieces) == 1:
        return manip.reshape(pieces[0], shape)
    return manip.reshape(manip.stack(pieces, axis=0 if leading else -1), shape)


def _reverse_blocks(outs, targets):
    """blocks[i][j] = d outs[i] / d targets[j], from one VJP per output element."""
    blocks = []
    for o in outs:
        rows = [backward([o._node], targets, [e]) for e in _basis(o._node)]
        blocks.append([_stacked([r[j] for r in rows], o, t, leading=True) for j, t in enumerate(targets)])
    return blocks


def _forward_blocks(outs, targets):
    """blocks[i][j] = d outs[i] / d targets[j], from one sweep of J^T u and
    one transposing sweep per element of each target."""
    us = _cotangent_placeholders(outs)
    gradients = backward([o._node for o in outs], targets, us)
    us = [u._node for u in us]
    columns = []   # per target: per basis vector, the tangent of each output
    for t, g in zip(targets, gradients):
        if g is None:
            columns.append([[None] * len(outs)])
            continue
        reached = set(history_order([g._node]))
        columns.append([_transposed_sweep([g._node], [e], us, reached) for e in _basis(t)])
    return [[_stacked([c[i] for c in cols], o, t, leading=False) for t, cols in zip(targets, columns)]
            for i, o in enumerate(outs)]


def _jacobian(f, argnums, name, forward):
    def jacobian_f(*args, **kwargs):
        nums = argnum_tuple(argnums, len(args), name)
        flat = [differentiable_leaves(args[i], name, f"argument {i}") for i in nums]
        realize_arguments(args)
        with retain_history():
            xs, targets = separate_arguments(args, nums, flat)
            y = f(*xs, **kwargs)
            outs, out_def = array_leaves(y, name, "output")
            for o, path in zip(outs, out_def.paths):
                if o.dtype not in dt.CATEGORIES["real floating"]:
                    raise TypeError(f"{name}: output{path} has dtype {o.dtype}; a Jacobian needs real floating "
                                    f"outputs")
            blocks = (_forward_blocks if forward else _reverse_blocks)(outs, targets)
        per_output = []
        for row in blocks:
            row = iter(row)
            trees = tuple(treedef.unflatten([next(row) for _ in range(treedef.num_leaves)]) for _, treedef in flat)
            per_output.append(trees[0] if isinstance(argnums, numbers.Integral) else trees)
        return out_def.unflatten(per_output)
    return jacobian_f


_JACOBIAN_DOC = """Returns a function computing the Jacobian of f with respect to argument(s) `argnums`{how}.

    Parameters
    ----------
    f : callable
        Returns a real floating array or a pytree (tuple, list, dict) of them.
    argnums : int or tuple of ints
        The positional arguments to differentiate by. Each may be a real
        floating array or a pytree of them.

    Returns
    -------
    out : callable
        Called with f's arguments, returns a tree of f's result's structure
        whose leaves have the structure of args[argnums] (a tuple of those
        for a tuple `argnums`), each leaf the block d out / d arg of shape
        out.shape + arg.shape, as JAX's. Lazy: one force point computes the
        whole Jacobian.

    Raises
    ------
    TypeError
        A differentiated leaf that is not a real floating array, or f
        returning something other than real floating arrays.
    ValueError
        `argnums` out of range.
    """


def jacfwd(f, argnums=0):
    return _jacobian(f, argnums, "jacfwd", forward=True)


def jacrev(f, argnums=0):
    return _jacobian(f, argnums, "jacrev", forward=False)


jacfwd.__doc__ = _JACOBIAN_DOC.format(how=" in forward mode, one sweep per element of the arguments: cheaper "
                                      "than jacrev when the arguments have fewer elements than the result")
jacrev.__doc__ = _JACOBIAN_DOC.format(how=" in reverse mode, one sweep per element of the result: cheaper "
                                      "than jacfwd when the result has fewer elements than the arguments")


def hessian(f, argnums=0):
    """Returns a function computing the Hessian of f with respect to argument(s) `argnums`.

    Parameters
    ----------
    f : callable
        Returns a real floating array (0-d for the usual Hessian) or a
        pytree of them.
    argnums : int or tuple of ints
        The positional arguments to differentiate by (arrays or pytrees).

    Returns
    -------
    out : callable
        Called with f's arguments, returns jacfwd(jacrev(f, argnums),
        argnums)'s result, as JAX's `hessian`: for a 0-d f of one array
        argument x an array of shape x.shape + x.shape; for pytrees, a tree
        of trees.

    Raises
    ------
    TypeError
        A differentiated leaf that is not a real floating array, or f
        returning something other than real floating arrays.
    ValueError
        `argnums` out of range.
    """
    return _jacobian(_jacobian(f, argnums, "hessian", forward=False), argnums, "hessian", forward=True)
