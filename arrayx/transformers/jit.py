"""`arrayx.jit`: a function traced once per signature into a computation.

The first call with a new signature (the pytree structure of each argument,
the shape, dtype and device of each array in it, the value of each static
argument) calls the function on placeholders and compiles what it returns;
later calls with that signature run the compiled computation. Arguments
that are not arrays or pytrees (tuples, lists, dicts) of arrays must be
static. The
computation runs on the device of the arrayx arguments (NumPy arguments are
copied there; with none, on the CPU).
"""

import functools

import numpy as np

from .. import pytree
from ..device import CPU
from ..dtypes import FROM_NUMPY
from ..graph.node import trace
from ..namespace.array_object import Array
from ..namespace.build import eager_mode
from ..namespace.creation import asarray
from ..scheduler.schedule import UnboundError
from .graph import placeholder
from .transformer import Transformer


def jit(fn, *, static_argnums=()):
    """Returns `fn` compiled once per signature of its arguments (see the module).

    Parameters
    ----------
    fn : callable
        Takes arrays, or pytrees (tuples, lists, dicts) of arrays, and returns
        an array or a pytree of arrays.
    static_argnums : int or tuple of ints
        Positions of arguments that are not arrays: their values (hashable)
        are part of the signature, and a new value traces `fn` again.

    Returns
    -------
    out : callable
        Takes `fn`'s arguments (arrayx or NumPy arrays where `fn` takes
        arrays) and returns the results in the structure `fn` returns.

    Raises
    ------
    TypeError
        (at a call) A non-static argument holding something other than an
        array, named by its path; an unhashable static argument; a force
        point inside `fn` (`float(x)`, `bool(x)`, a data-dependent shape),
        which needs a value the trace does not have; `fn` returning no array
        or something other than arrays.
    ValueError
        (at a call) Array arguments on several devices.
    """
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    name = getattr(fn, "__name__", repr(fn))
    transformers = {}   # device -> the Transformer its computations run on
    compiled = {}

    @functools.wraps(fn)
    def run(*args):
        signature = []
        arrays = []
        for i, a in enumerate(args):
            if i in static:
                signature.append(("static", a))
                continue
            if type(a) is Array:   # a bare array, the common argument: its entry without a tree walk
                node = a._node
                signature.append((node.shape, node.dtype, node.device))
                arrays.append(a)
                continue
            leaves, treedef = pytree.flatten(a)
            shapes = []
            for leaf, path in zip(leaves, treedef.paths):
                if isinstance(leaf, Array):
                    node = leaf._node
                    shapes.append((node.shape, node.dtype, node.device))
                elif isinstance(leaf, np.ndarray):
                    shapes.append((leaf.shape, leaf.dtype.str, None))
                else:
                    raise TypeError(f"jit({name}): argument {i}{path} is a {type(leaf).__name__}; pass "
                                    f"arrays (or tuples, lists and dicts of them), or list its position "
                                    f"in static_argnums")
            signature.append((treedef, tuple(shapes)))
            arrays += leaves
        signature = tuple(signature)
        if eager_mode():   # xp.set_eager(True): fn runs as plain Python, as under jax.disable_jit()
            return _call_eagerly(fn, args, static, _device(name, arrays))
        try:
            entry = compiled.get(signature)
        except TypeError:
            raise TypeError(f"jit({name}): static arguments must be hashable") from None
        if entry is None:
            device = _device(name, arrays)
            transformer = transformers.get(device)
            if transformer is None:
                transformer = transformers[device] = Transformer(device)
            entry = compiled[signature] = _trace(fn, name, args, static, transformer)
        computation, out_def = entry
        return out_def.unflatten(computation(*arrays))
    return run


def _device(name, arrays):
    """The device a call with these array arguments (arrayx and NumPy
    arrays) runs on: that of the arrayx ones, the CPU if there are none."""
    devices = list(dict.fromkeys(a.device for a in arrays if isinstance(a, Array)))
    if len(devices) > 1:
        raise ValueError(f"jit({name}): the array arguments are on devices {devices}; move them to "
                         f"one device (NumPy arguments go to that device)")
    return devices[0] if devices else CPU


def _call_eagerly(fn, args, static, device):
    """fn(*args) as plain Python (eager mode), its NumPy array arguments
    first made arrays on `device`, as a compiled call binds them."""
    given = []
    for i, a in enumerate(args):
        if i not in static:
            leaves, treedef = pytree.flatten(a)
            a = treedef.unflatten([asarray(leaf, device=device) if isinstance(leaf, np.ndarray) else leaf
                                   for leaf in leaves])
        given.append(a)
    return fn(*given)


def _trace(fn, name, args, static, transformer):
    """(the computation of `fn` traced on placeholders like `args`, the TreeDef of its result)."""
    traced = []
    inputs = []
    for i, a in enumerate(args):
        if i in static:
            traced.append(a)
            continue
        leaves, treedef = pytree.flatten(a)
        placeholders = [placeholder(leaf.shape, leaf.dtype if isinstance(leaf, Array) else FROM_NUMPY[leaf.dtype])
                        for leaf in leaves]
        traced.append(treedef.unflatten(placeholders))
        inputs += placeholders
    try:
        with trace():
            out = fn(*traced)
    except UnboundError:
        raise TypeError(f"jit({name}): a force point inside the traced function (float(), bool(), int(), "
                        f"printing a value, a data-dependent shape) needs a value the trace does not have; "
                        f"list the argument it depends on in static_argnums, or move the force point out "
                        f"of the function") from None
    results, out_def = pytree.flatten(out)
    for r, path in zip(results, out_def.paths):
        if not isinstance(r, Array):
            raise TypeError(f"jit({name}): the function must return an array or a pytree (tuples, lists, "
                            f"dicts) of arrays; result{path} is a {type(r).__name__}")
    if not results:
        raise TypeError(f"jit({name}): the function returned no array")
    # A list of results: the computation returns a tuple, which out_def rebuilds.
    return transformer.computation(results, *inputs), out_def
