"""The CPU executor: primitives run as NumPy calls on NumPy buffers.

`IMPLS` maps each primitive to a builder that takes a Step and returns a
callable over buffers. Elementwise functions whose IEEE special cases NumPy
gets wrong (relative to the array API standard) are built in `special.py`.
"""

import numpy as np

from ..graph.primitives import PRIMITIVES
from .base import Executor
from . import special

# Primitives that map one-to-one onto a NumPy function with the standard's
# semantics (after promotion the inputs share one dtype).
UFUNCS = {
    "abs": np.abs, "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin,
    "asinh": np.arcsinh, "atan": np.arctan, "atanh": np.arctanh,
    "bitwise_invert": np.invert, "ceil": np.ceil, "conj": np.conjugate,
    "cos": np.cos, "cosh": np.cosh, "exp": np.exp,
    "floor": np.floor, "isfinite": np.isfinite, "isinf": np.isinf,
    "isnan": np.isnan, "log": np.log, "log1p": np.log1p, "log2": np.log2,
    "log10": np.log10, "logical_not": np.logical_not, "negative": np.negative,
    "sign": np.sign, "signbit": np.signbit, "sin": np.sin, "sinh": np.sinh,
    "sqrt": np.sqrt, "square": np.square, "tan": np.tan,
    "trunc": np.trunc, "real": np.real, "imag": np.imag,
    "add": np.add, "atan2": np.arctan2, "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
    "copysign": np.copysign, "divide": np.divide, "equal": np.equal,
    "greater": np.greater, "greater_equal": np.greater_equal, "hypot": np.hypot,
    "less": np.less, "less_equal": np.less_equal, "logaddexp": np.logaddexp,
    "logical_and": np.logical_and, "logical_or": np.logical_or,
    "logical_xor": np.logical_xor, "maximum": np.maximum, "minimum": np.minimum,
    "multiply": np.multiply, "nextafter": np.nextafter, "not_equal": np.not_equal,
    "subtract": np.subtract, "where": np.where, "matmul": np.matmul,
}


def _ufunc(step):
    return UFUNCS[step.op.name]


def _special(step):
    return special.build(step.op.name, step.dtype)


def _astype(step):
    dtype = step.dtype.dtype
    return lambda a: np.asarray(a).astype(dtype)


def _full(step):
    shape, dtype, value = step.attrs
    return lambda: np.full(shape, value, dtype=dtype.dtype)


def _iota(step):
    shape, dtype, axis = step.attrs
    n = shape[axis]
    view = [1] * len(shape)
    view[axis] = n

    def iota():
        return np.broadcast_to(np.arange(n, dtype=dtype.dtype).reshape(view), shape)
    return iota


def _reduction(fn):
    def build(step):
        axes, keepdims = step.attrs
        dtype = step.dtype.dtype
        if fn in (np.sum, np.prod):
            return lambda a: fn(a, axis=axes, keepdims=keepdims, dtype=dtype)
        return lambda a: fn(a, axis=axes, keepdims=keepdims)
    return build


def _arg_reduction(fn):
    def build(step):
        axes, keepdims = step.attrs
        shape = step.shape

        def run(a):
            a = np.asarray(a)
            if len(axes) == 1:
                out = fn(a, axis=axes[0], keepdims=keepdims)
            else:
                out = fn(a.reshape(-1))
            return np.reshape(out, shape).astype(np.int64, copy=False)
        return run
    return build


def _scan(fn):
    def build(step):
        axis, = step.attrs
        dtype = step.dtype.dtype
        return lambda a: fn(a, axis=axis, dtype=dtype)
    return build


def _reshape(step):
    shape, = step.attrs
    return lambda a: np.reshape(a, shape)


def _permute(step):
    axes, = step.attrs
    return lambda a: np.transpose(a, axes)


def _broadcast(step):
    shape, = step.attrs
    return lambda a: np.broadcast_to(a, shape)


def index_of(starts, stops, steps):
    """The NumPy index of a normalized slice (a stop of -1 means 'before 0')."""
    return tuple(slice(a, None if b < 0 else b, c) for a, b, c in zip(starts, stops, steps))


def _slice(step):
    index = index_of(*step.attrs)
    return lambda a: np.asarray(a)[index]


def _flip(step):
    axes, = step.attrs
    return lambda a: np.flip(a, axis=axes)


def _pad(step):
    pads, value = step.attrs
    return lambda a: np.pad(a, pads, constant_values=value)


def _concat(step):
    axis, = step.attrs
    return lambda *arrays: np.concatenate(arrays, axis=axis)


def _update_slice(step):
    index = index_of(*step.attrs)

    def update(a, v):
        out = np.array(a, copy=True)
        out[index] = v
        return out
    return update


IMPLS = {name: _ufunc for name in UFUNCS}
IMPLS.update({name: _special for name in special.SPECIAL})
IMPLS.update({
    "astype": _astype, "full": _full, "iota": _iota,
    "sum": _reduction(np.sum), "prod": _reduction(np.prod),
    "max": _reduction(np.max), "min": _reduction(np.min),
    "any": _reduction(np.any), "all": _reduction(np.all),
    "argmax": _arg_reduction(np.argmax), "argmin": _arg_reduction(np.argmin),
    "cumulative_sum": _scan(np.cumsum), "cumulative_prod": _scan(np.cumprod),
    "reshape": _reshape, "permute": _permute, "broadcast": _broadcast,
    "slice": _slice, "flip": _flip, "pad": _pad, "concat": _concat,
    "update_slice": _update_slice,
})


class CPUExecutor(Executor):
    name = "cpu"
    supports = frozenset(name for name in PRIMITIVES if name in IMPLS)

    def from_host(self, array, copy=True):
        # Buffers stay writable inside the executor (legacy DLPack cannot
        # export read-only memory); users only ever see read-only views.
        return np.array(array, copy=True) if copy else np.asarray(array)

    def from_scalar(self, value, dtype):
        # A NumPy scalar is the cheapest 0-d buffer and broadcasts in every ufunc.
        # A value beyond float32's range becomes inf, as a cast does, without a warning.
        if dtype.kind in "fc" and type(value) in (int, float) and abs(value) > 3.4e38:
            with np.errstate(over="ignore"):
                return dtype.type(value)
        return dtype.type(value)

    def to_host(self, buffer):
        out = np.asarray(buffer).view()
        out.flags.writeable = False
        return out

    def copy(self, buffer):
        return self.from_host(buffer)

    def dlpack(self, buffer, stream, max_version, dl_device, copy):
        array = np.asarray(buffer)
        legacy = max_version is None or max_version < (1, 0)
        if legacy and not copy and not array.flags.writeable:
            # A read-only view (e.g. a broadcast) cannot be exported to a
            # DLPack < 1.0 consumer without a copy.
            if copy is False:
                raise BufferError("__dlpack__: this array is a read-only view, which DLPack < 1.0 "
                                  "cannot export without a copy, and copy=False forbids one")
            array, copy = array.copy(), None
        elif not legacy:
            array = self.to_host(array)  # DLPack >= 1.0 carries the read-only flag
        return array.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def dlpack_device(self, buffer):
        return np.asarray(buffer).__dlpack_device__()

    def compile(self, steps, drops):
        program = [(IMPLS[s.op.name](s), s.args, s.out, drop) for s, drop in zip(steps, drops)]

        def run(slots):
            with np.errstate(all="ignore"):
                for fn, args, out, drop in program:
                    slots[out] = fn(*[slots[i] for i in args])
                    for i in drop:
                        slots[i] = None
        return run
