"""Automatic differentiation over arrayx's recorded graph: reverse mode, and
forward mode and Jacobians derived from it (`jacobians.py`).

`grad`, `value_and_grad`, `vjp`, `jvp`, `jacfwd`, `jacrev` and `hessian` take
a function: they call it inside `retain_history()`, so every node it records
keeps its history even where it is evaluated, and differentiate the result. `gradients(output, wrt)` works on
arrays you already hold, as neon's Autodiff did on op-trees: the graph between
`wrt` and `output` must not have been evaluated outside such a scope (a force
point frees the history of the nodes it returns, and of intermediates it
computes for the second time).

Differentiation needs real floating-point inputs. Gradients are arrays built
from graph nodes, so they evaluate lazily and can be differentiated again.
"""

import numbers

from .. import dtypes as dt, pytree
from ..graph.node import retain_history, tracing
from ..namespace.array_object import Array
from ..namespace.build import P, make, wrap
from ..scheduler.schedule import realize
from .arguments import (argnum_tuple, array_leaves, check_differentiable, differentiable_leaves, gradient_trees,
                        identity, realize_arguments, separate, separate_arguments)
from .backward import backward, ones_for, zeros_for
from .jacobians import hessian, jacfwd, jacrev, jvp

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jacfwd", "jacrev", "hessian", "gradients", "stop_gradient",
           "retain_history", "identity"]


def vjp(f, *primals):
    """Evaluates f at `primals` and returns its vector-Jacobian product function.

    Parameters
    ----------
    f : callable
        Takes len(primals) arguments and returns an array or a pytree
        (tuple, list, dict) of arrays.
    *primals : Array or pytree of Array
        The point to differentiate at: real floating arrays, or tuples, lists
        and dicts of them.

    Returns
    -------
    out : tuple
        (f(*primals), vjp_fn). `vjp_fn(cotangent)` takes a cotangent of the
        structure and shapes of f's result (a Python number as a leaf means
        that value everywhere) and returns a tuple of one gradient per primal,
        each with its primal's structure. The forward value is computed at
        once (realized, keeping its history); vjp_fn can be called many times.

    Raises
    ------
    TypeError
        A primal leaf that is not a real floating array, or a result leaf
        that is not an array.
    """
    flat = [differentiable_leaves(p, "vjp", f"primals[{i}]") for i, p in enumerate(primals)]
    realize_arguments(primals)
    with retain_history():
        xs, targets = separate([leaf for leaves, _ in flat for leaf in leaves])
        # The nodes to differentiate by are taken now: f may rebind its arguments (a[k] = v).
        arguments = iter(xs)
        y = f(*[treedef.unflatten([next(arguments) for _ in leaves]) for leaves, treedef in flat])
        outs, out_def = array_leaves(y, "vjp", "output")
        if not tracing():
            realize([o._node for o in outs])

    def vjp_fn(cotangent):
        cts, ct_def = pytree.flatten(cotangent)
        if ct_def != out_def:
            raise ValueError(f"vjp: the cotangent's structure {ct_def} differs from the output's {out_def}")
        seeds = []
        for ct, o, path in zip(cts, outs, out_def.paths):
            if not isinstance(ct, Array):
                if type(ct) not in (int, float):
                    raise TypeError(f"vjp: cotangent{path} is a {type(ct).__name__}; expected an arrayx "
                                    f"array or a Python number")
                ct = ones_for(o._node) * ct
            if ct.shape != o.shape:
                raise ValueError(f"vjp: cotangent{path} shape {ct.shape} differs from the output's {o.shape}")
            seeds.append(ct)
        with retain_history():
            found = backward([o._node for o in outs], targets, seeds)
        return gradient_trees(found, targets, [treedef for _, treedef in flat])
    return y, vjp_fn


def value_and_grad(f, argnums=0):
    """Returns a function computing f and its gradient with respect to positional argument(s) `argnums`.

    Parameters
    ----------
    f : callable
        Returns a 0-d real floating array (a scalar loss).
    argnums : int or tuple of ints
        The positional arguments to differentiate by. Each may be a real
        floating array or a pytree (tuple, list, dict) of them.

    Returns
    -------
    out : callable
        Called with f's arguments, returns (f(*args), gradient): the gradient
        has the structure of args[argnums] (a tuple of those for a tuple
        `argnums`). The value is computed at once; the gradients stay lazy.

    Raises
    ------
    TypeError
        A differentiated leaf that is not a real floating array, or f not
        returning a 0-d real floating array.
    ValueError
        `argnums` out of range.
    """
    return _value_and_grad(f, argnums, compute_value=True)


def _value_and_grad(f, argnums, compute_value):
    def value_and_grad_f(*args, **kwargs):
        nums = argnum_tuple(argnums, len(args), "grad")
        flat = [differentiable_leaves(args[i], "grad", f"argument {i}") for i in nums]
        realize_arguments(args)
        with retain_history():
            xs, targets = separate_arguments(args, nums, flat)
            y = f(*xs, **kwargs)
            if not isinstance(y, Array) or y.shape != ():
                shape = y.shape if isinstance(y, Array) else type(y).__name__
                raise TypeError(f"grad: f must return a 0-d array (a scalar loss), got {shape}")
            if y.dtype not in dt.CATEGORIES["real floating"]:
                raise TypeError(f"grad: f returned dtype {y.dtype}; expected a real floating dtype")
            found = backward([y._node], targets, [ones_for(y._node)])
            if compute_value and not tracing():
                # After the sweep: the gradients' graph now holds the forward's
                # expensive intermediates (matmuls...), so this force keeps them
                # for the gradients' force instead of leaving them to be computed again.
                realize([y._node])
        grads = gradient_trees(found, targets, [treedef for _, treedef in flat])
        return y, (grads[0] if isinstance(argnums, numbers.Integral) else grads)
    return value_and_grad_f


def grad(f, argnums=0):
    """Returns a function computing the gradient of scalar-valued f with respect to argument(s) `argnums`.

    Parameters
    ----------
    f : callable
        Returns a 0-d real floating array (a scalar loss).
    argnums : int or tuple of ints
        The positional arguments to differentiate by. Each may be a real
        floating array or a pytree (tuple, list, dict) of them.

    Returns
    -------
    out : callable
        Called with f's arguments, returns the gradient with the structure of
        args[argnums] (a tuple of those for a tuple `argnums`).

    Raises
    ------
    TypeError
        A differentiated leaf that is not a real floating array, or f not
        returning a 0-d real floating array.
    ValueError
        `argnums` out of range.

    Nothing is computed at the call: the forward pass runs with the gradients,
    at their force point (in a training loop, where the next step evaluates
    its arguments), so each step computes each forward value once.
    """
    value_and_grad_f = _value_and_grad(f, argnums, compute_value=False)

    def grad_f(*args, **kwargs):
        return value_and_grad_f(*args, **kwargs)[1]
    return grad_f


def gradients(output, wrt, cotangent=None):
    """Gradients of `output` with respect to each array in `wrt` (a list).

    `cotangent` defaults to ones in output's shape (neon's next_error=None).
    An array that output does not depend on gets zeros.
    """
    if not isinstance(output, Array):
        raise TypeError(f"gradients: output must be an arrayx array, got {type(output).__name__}")
    for i, w in enumerate(wrt):
        check_differentiable(w, "gradients", f"wrt[{i}]")
    if cotangent is None:
        cotangent = ones_for(output._node)
    elif not isinstance(cotangent, Array):
        if type(cotangent) not in (int, float):
            raise TypeError(f"gradients: cotangent must be an arrayx array or a Python number, "
                            f"got {type(cotangent).__name__}")
        cotangent = ones_for(output._node) * cotangent
    if cotangent.shape != output.shape:
        raise ValueError(f"gradients: cotangent shape {cotangent.shape} differs from output's {output.shape}")
    with retain_history():
        found = backward([output._node], [w._node for w in wrt], [cotangent])
    return [g if g is not None else zeros_for(w._node) for g, w in zip(found, wrt)]


def stop_gradient(x):
    """x, through which no gradient flows."""
    if not isinstance(x, Array):
        raise TypeError(f"stop_gradient: x must be an arrayx array, got {type(x).__name__}")
    return wrap(make(P["stop_gradient"], (x._node,)))
