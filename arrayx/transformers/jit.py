"""`arrayx.jit`: a function traced once per signature into a computation.

The first call with a new signature (shape, dtype and device of each array
argument, value of each static argument) calls the function on placeholders
and compiles what it returns; later calls with that signature run the
compiled computation. Arguments that are not arrays must be static. The
computation runs on the device of the arrayx arguments (NumPy arguments are
copied there; with none, on the CPU).
"""

import functools

import numpy as np

from ..device import CPU
from ..dtypes import FROM_NUMPY
from ..graph.node import trace
from ..namespace.array_object import Array
from ..scheduler.schedule import UnboundError
from .graph import placeholder
from .transformer import Transformer


def jit(fn, *, static_argnums=()):
    """`fn` compiled per signature of its arguments (see the module).

    A force point inside `fn` (`float(x)`, `bool(x)`, a data-dependent shape)
    needs a value the trace does not have: it raises a TypeError naming `fn`.
    `fn` returns an array, or a tuple or list of arrays.
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
            elif isinstance(a, Array):
                node = a._node
                signature.append((node.shape, node.dtype, node.device))
                arrays.append(a)
            elif isinstance(a, np.ndarray):
                a = np.asarray(a)
                signature.append((a.shape, a.dtype.str, None))
                arrays.append(a)
            else:
                raise TypeError(f"jit({name}): argument {i} is a {type(a).__name__}; pass arrays, or list "
                                f"its position in static_argnums")
        signature = tuple(signature)
        try:
            entry = compiled.get(signature)
        except TypeError:
            raise TypeError(f"jit({name}): static arguments must be hashable") from None
        if entry is None:
            devices = list(dict.fromkeys(a.device for a in arrays if isinstance(a, Array)))
            if len(devices) > 1:
                raise ValueError(f"jit({name}): the array arguments are on devices {devices}; move them to "
                                 f"one device (NumPy arguments go to that device)")
            device = devices[0] if devices else CPU
            transformer = transformers.get(device)
            if transformer is None:
                transformer = transformers[device] = Transformer(device)
            entry = compiled[signature] = _trace(fn, name, args, static, transformer)
        computation, structure = entry
        out = computation(*arrays)
        if structure is None:
            return out
        return structure(out)
    return run


def _trace(fn, name, args, static, transformer):
    traced = []
    inputs = []
    for i, a in enumerate(args):
        if i in static:
            traced.append(a)
            continue
        p = placeholder(a.shape, a.dtype if isinstance(a, Array) else FROM_NUMPY[a.dtype])
        traced.append(p)
        inputs.append(p)
    try:
        with trace():
            out = fn(*traced)
    except UnboundError:
        raise TypeError(f"jit({name}): a force point inside the traced function (float(), bool(), int(), "
                        f"printing a value, a data-dependent shape) needs a value the trace does not have; "
                        f"list the argument it depends on in static_argnums, or move the force point out "
                        f"of the function") from None
    if isinstance(out, Array):
        return transformer.computation(out, *inputs), None
    if isinstance(out, (tuple, list)) and all(isinstance(o, Array) for o in out):
        return transformer.computation(list(out), *inputs), type(out)
    raise TypeError(f"jit({name}): the function must return an array or a tuple or list of arrays, "
                    f"got {type(out).__name__}")
