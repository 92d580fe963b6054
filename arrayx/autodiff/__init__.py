"""Reverse-mode automatic differentiation over arrayx's recorded graph.

`grad`, `value_and_grad` and `vjp` take a function: they call it inside
`retain_history()`, so every node it records keeps its history even where it
is evaluated, and differentiate the result. `gradients(output, wrt)` works on
arrays you already hold, as neon's Autodiff did on op-trees: the graph between
`wrt` and `output` must not have been evaluated outside such a scope (a force
point frees the history of the nodes it returns, and of intermediates it
computes for the second time).

Differentiation needs real floating-point inputs. Gradients are arrays built
from graph nodes, so they evaluate lazily and can be differentiated again.
"""

import numbers

from .. import dtypes as dt
from ..graph.node import retain_history, tracing
from ..namespace.array_object import Array
from ..namespace.build import P, make, wrap
from ..scheduler.schedule import realize
from .backward import backward, ones_for, zeros_for

__all__ = ["grad", "value_and_grad", "vjp", "gradients", "stop_gradient", "retain_history", "identity"]


def _check_differentiable(x, name, label):
    if not isinstance(x, Array):
        raise TypeError(f"{name}: {label} must be an arrayx array, got {type(x).__name__}")
    if x.dtype not in dt.CATEGORIES["real floating"]:
        raise TypeError(f"{name}: {label} has dtype {x.dtype}; differentiation needs a real floating dtype "
                        f"(float16, float32 or float64)")


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


def _realize_arguments(args):
    """Evaluate the array arguments before the retained scope (one force point).

    f is differentiated with respect to its arguments' values, not their
    history. Computed outside retain_history, a lazy argument (w after
    `w = w - lr * g` in a training loop) becomes a leaf that frees its update
    chain; computed inside, it would keep the chain and every call would
    compute it again. Inside an enclosing grad the scope is retained anyway,
    so the outer gradient still sees the path to x.
    """
    if tracing():   # a traced function's arguments are placeholders, with no value yet
        return
    lazy = [a._node for a in args if isinstance(a, Array) and a._node.buffer is None]
    if lazy:
        realize(lazy)


def _argnums(argnums, n_args, name):
    nums = (argnums,) if isinstance(argnums, numbers.Integral) else tuple(argnums)
    for i in nums:
        if not -n_args <= i < n_args:
            raise ValueError(f"{name}: argnums {argnums} is out of range for {n_args} positional arguments")
    return tuple(i % n_args for i in nums)


def vjp(f, *primals):
    """(f(*primals), vjp_fn): vjp_fn(cotangent) returns one cotangent per primal.

    The forward value is computed at once (it is realized, keeping its history).
    """
    for i, p in enumerate(primals):
        _check_differentiable(p, "vjp", f"primals[{i}]")
    _realize_arguments(primals)
    with retain_history():
        xs = [identity(p) for p in primals]
        # The nodes to differentiate by, taken now: f may rebind its arguments (a[k] = v).
        targets = [x._node for x in xs]
        y = f(*xs)
        if not isinstance(y, Array):
            raise TypeError(f"vjp: f must return an arrayx array, got {type(y).__name__}")
        if not tracing():
            realize([y._node])

    def vjp_fn(cotangent):
        if isinstance(cotangent, Array):
            ct = cotangent
        else:
            ct = ones_for(y._node) * cotangent
        if ct.shape != y.shape:
            raise ValueError(f"vjp: cotangent shape {ct.shape} differs from the output's {y.shape}")
        with retain_history():
            found = backward(y._node, targets, ct)
        return tuple(g if g is not None else zeros_for(t) for g, t in zip(found, targets))
    return y, vjp_fn


def value_and_grad(f, argnums=0):
    """A function returning (f(*args), gradient of f with respect to args[argnums]).

    f must return a 0-d real floating array. With a tuple `argnums` the gradient
    is a tuple. The value is computed at once; the gradients stay lazy.
    """
    return _value_and_grad(f, argnums, compute_value=True)


def _value_and_grad(f, argnums, compute_value):
    def value_and_grad_f(*args, **kwargs):
        nums = _argnums(argnums, len(args), "grad")
        for i in nums:
            _check_differentiable(args[i], "grad", f"argument {i}")
        _realize_arguments(args)
        with retain_history():
            xs = list(args)
            for i in nums:
                xs[i] = identity(args[i])
            # The nodes to differentiate by, taken now: f may rebind its arguments (a[k] = v).
            targets = [xs[i]._node for i in nums]
            y = f(*xs, **kwargs)
            if not isinstance(y, Array) or y.shape != ():
                shape = y.shape if isinstance(y, Array) else type(y).__name__
                raise TypeError(f"grad: f must return a 0-d array (a scalar loss), got {shape}")
            if y.dtype not in dt.CATEGORIES["real floating"]:
                raise TypeError(f"grad: f returned dtype {y.dtype}; expected a real floating dtype")
            found = backward(y._node, targets, ones_for(y._node))
            if compute_value and not tracing():
                # After the sweep: the gradients' graph now holds the forward's
                # expensive intermediates (matmuls...), so this force keeps them
                # for the gradients' force instead of leaving them to be computed again.
                realize([y._node])
        grads = tuple(g if g is not None else zeros_for(t) for g, t in zip(found, targets))
        return y, (grads[0] if isinstance(argnums, numbers.Integral) else grads)
    return value_and_grad_f


def grad(f, argnums=0):
    """A function returning the gradient of scalar-valued f with respect to args[argnums].

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
        _check_differentiable(w, "gradients", f"wrt[{i}]")
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
        found = backward(output._node, [w._node for w in wrt], cotangent)
    return [g if g is not None else zeros_for(w._node) for g, w in zip(found, wrt)]


def stop_gradient(x):
    """x, through which no gradient flows."""
    if not isinstance(x, Array):
        raise TypeError(f"stop_gradient: x must be an arrayx array, got {type(x).__name__}")
    return wrap(make(P["stop_gradient"], (x._node,)))
