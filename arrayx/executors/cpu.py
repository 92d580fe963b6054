"""The CPU executor: primitives run as NumPy calls on NumPy buffers.

`IMPLS` maps each primitive to a builder that takes a Step and returns a
callable over buffers. Elementwise functions whose IEEE special cases NumPy
gets wrong (relative to the array API standard) are built in `special.py`.
"""

import numpy as np

from ..dtypes import FROM_NUMPY
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
    "multiply": np.multiply, "not_equal": np.not_equal,
    "subtract": np.subtract, "where": np.where, "matmul": np.matmul,
    "stop_gradient": lambda a: a,
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
    return lambda: np.full(shape, value.value, dtype=dtype.dtype)


def _iota(step):
    shape, dtype, axis = step.attrs
    n = shape[axis]
    view = [1] * len(shape)
    view[axis] = n

    def iota():
        return np.broadcast_to(np.arange(n, dtype=dtype.dtype).reshape(view), shape)
    return iota


def _reduction(ufunc):
    """A reduction as `ufunc.reduce` (what np.sum, np.all, ... call, without
    their microseconds of Python wrapping): sum and prod accumulate in the
    result dtype, any and all reduce to bool, max and min keep the dtype."""
    def build(step):
        axes, keepdims = step.attrs
        dtype = None if ufunc in (np.maximum, np.minimum) else step.dtype.dtype
        return lambda a: ufunc.reduce(a, axis=axes, keepdims=keepdims, dtype=dtype)
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
    return lambda a: np.pad(a, pads, constant_values=value.value)


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


def _sort(step):
    axis, descending = step.attrs
    if descending:
        # Stable descending order: sort the reversed array, then reverse back,
        # so elements that compare equal (-0.0 and 0.0) keep their order.
        return lambda a: np.flip(np.sort(np.flip(a, axis=axis), axis=axis, kind="stable"), axis=axis)
    return lambda a: np.sort(a, axis=axis, kind="stable")


def _argsort(step):
    axis, descending = step.attrs

    def argsort(a):
        if not descending:
            return np.argsort(a, axis=axis, kind="stable")
        # Stable descending order: sort the reversed array ascending, then map
        # positions back, so equal elements keep their original order.
        n = np.shape(a)[axis]
        reversed_order = np.argsort(np.flip(a, axis=axis), axis=axis, kind="stable")
        return n - 1 - np.flip(reversed_order, axis=axis)
    return argsort


def _searchsorted(step):
    side, = step.attrs
    return lambda x1, x2: np.searchsorted(x1, x2, side=side).astype(np.int64, copy=False)


def _isin(step):
    invert, = step.attrs
    return lambda x1, x2: np.isin(x1, x2, invert=invert)


def _named_errors(name, fn, errors=(IndexError,)):
    """Errors that depend on values (an index out of bounds, a singular
    matrix) can only surface when the graph runs: name the function."""
    def run(*args):
        try:
            return fn(*args)
        except errors as e:
            raise type(e)(f"{name}: {e}") from None
    return run


def _take(step):
    axis, = step.attrs
    return _named_errors("take", lambda a, i: np.take(a, i, axis=axis))


def _take_along_axis(step):
    axis, = step.attrs
    return _named_errors("take_along_axis", lambda a, i: np.take_along_axis(a, i, axis=axis))


def numpy_key(template, arrays):
    """The NumPy index of a gather/scatter key template.

    Items: ("slice", start, stop, step) with the slice primitive's convention,
    ("int", i), ("array", k) for the k-th index array, ("newaxis",).
    """
    key = []
    for item in template:
        tag = item[0]
        if tag == "slice":
            key.append(index_of((item[1],), (item[2],), (item[3],))[0])
        elif tag == "int":
            key.append(item[1])
        elif tag == "array":
            key.append(arrays[item[1]])
        else:
            key.append(None)
    return tuple(key)


def _gather(step):
    template = step.attrs[0]
    return _named_errors("__getitem__", lambda a, *arrays: np.asarray(a)[numpy_key(template, arrays)])


def _scatter(step):
    template = step.attrs[0]

    def scatter(a, value, *arrays):
        out = np.array(a, copy=True)
        out[numpy_key(template, arrays)] = value
        return out
    return _named_errors("__setitem__", scatter)


def _scatter_add(step):
    template = step.attrs[0]

    def scatter_add(a, value, *arrays):
        out = np.array(a, copy=True)
        np.add.at(out, numpy_key(template, arrays), value)  # unbuffered: duplicate indices accumulate
        return out
    return _named_errors("scatter_add", scatter_add)


def _diagonal(step):
    offset, = step.attrs
    return lambda a: np.diagonal(a, offset=offset, axis1=-2, axis2=-1)


def _as_dtype(fn, dtype):
    """NumPy's linalg/FFT may return another precision or kind (eig of a real
    matrix with real eigenvalues is real): cast to the node's dtype."""
    dtype = dtype.dtype
    return lambda *args: np.asarray(fn(*args)).astype(dtype, copy=False)


def _linalg(fn):
    def build(step):
        run = _as_dtype(lambda a, *rest: fn(a, *rest, *step.attrs), step.dtype)
        return _named_errors(f"linalg.{step.op.name}", run, (np.linalg.LinAlgError,))
    return build


def _multi(fn):
    def build(step):
        dtypes = [d.dtype for d in step.dtype]

        def run(a):
            return tuple(np.asarray(out).astype(d, copy=False) for out, d in zip(fn(a, *step.attrs), dtypes))
        return _named_errors(f"linalg.{step.op.name}", run, (np.linalg.LinAlgError,))
    return build


def _select(step):
    index, = step.attrs
    return lambda outputs: outputs[index]


def _fftn(fn):
    def build(step):
        axes, sizes, norm = step.attrs
        return _as_dtype(lambda a: fn(a, s=sizes, axes=axes, norm=norm), step.dtype)
    return build


def _fft_1d(fn):
    def build(step):
        (axis,), (n,), norm = step.attrs
        return _as_dtype(lambda a: fn(a, n=n, axis=axis, norm=norm), step.dtype)
    return build


IMPLS = {name: _ufunc for name in UFUNCS}
IMPLS.update({name: _special for name in special.SPECIAL})
IMPLS.update({
    "astype": _astype, "full": _full, "iota": _iota,
    "sum": _reduction(np.add), "prod": _reduction(np.multiply),
    "max": _reduction(np.maximum), "min": _reduction(np.minimum),
    "any": _reduction(np.logical_or), "all": _reduction(np.logical_and),
    "argmax": _arg_reduction(np.argmax), "argmin": _arg_reduction(np.argmin),
    "cumulative_sum": _scan(np.cumsum), "cumulative_prod": _scan(np.cumprod),
    "reshape": _reshape, "permute": _permute, "broadcast": _broadcast,
    "slice": _slice, "flip": _flip, "pad": _pad, "concat": _concat,
    "update_slice": _update_slice,
    "sort": _sort, "argsort": _argsort, "searchsorted": _searchsorted, "isin": _isin,
    "take": _take, "take_along_axis": _take_along_axis, "gather": _gather, "scatter": _scatter,
    "scatter_add": _scatter_add,
    "diagonal": _diagonal, "select": _select,
    "cholesky": _linalg(lambda a, upper: np.linalg.cholesky(a, upper=upper)),
    "inv": _linalg(np.linalg.inv), "det": _linalg(np.linalg.det), "solve": _linalg(np.linalg.solve),
    "pinv": _linalg(lambda a, rtol: np.linalg.pinv(a, rtol=rtol)),
    "svdvals": _linalg(np.linalg.svdvals), "eigvalsh": _linalg(np.linalg.eigvalsh),
    "eigvals": _linalg(np.linalg.eigvals),
    "qr": _multi(lambda a, mode: np.linalg.qr(a, mode=mode)),
    "svd": _multi(lambda a, full: np.linalg.svd(a, full_matrices=full)),
    "eigh": _multi(np.linalg.eigh), "eig": _multi(np.linalg.eig), "slogdet": _multi(np.linalg.slogdet),
    "fftn": _fftn(np.fft.fftn), "ifftn": _fftn(np.fft.ifftn), "rfftn": _fftn(np.fft.rfftn),
    "irfftn": _fftn(np.fft.irfftn), "hfft": _fft_1d(np.fft.hfft), "ihfft": _fft_1d(np.fft.ihfft),
})

# Data-dependent primitives: each takes NumPy arrays and returns a tuple of
# NumPy arrays whose shapes depend on the values.
DYNAMIC = {
    "nonzero": lambda a: np.nonzero(a),
    "unique_all": lambda a: tuple(np.unique_all(a)),
    "unique_counts": lambda a: tuple(np.unique_counts(a)),
    "unique_inverse": lambda a: tuple(np.unique_inverse(a)),
    "unique_values": lambda a: (np.unique_values(a),),
    "repeat": lambda a, repeats, axis: (np.repeat(a, repeats, axis=axis),),
}


VIEWS = frozenset({"slice", "reshape", "permute", "broadcast", "flip"})


class CPUExecutor(Executor):
    name = "cpu"
    supports = frozenset(name for name in PRIMITIVES if name in IMPLS or name in DYNAMIC)

    def from_host(self, array, copy=True):
        # Buffers stay writable inside the executor (legacy DLPack cannot
        # export read-only memory); users only ever see read-only views.
        return np.array(array, copy=True) if copy else np.asarray(array)

    def from_scalar(self, value, dtype):
        # A NumPy scalar is the cheapest 0-d buffer and broadcasts in every ufunc.
        # A value beyond float16's range (the narrowest) becomes inf, as a cast does, without a warning.
        if dtype.kind in "fc" and type(value) in (int, float) and abs(value) > 65504.0:
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

    def view(self, step, buffer):
        # NumPy slices, reshapes, transposes, broadcasts and flips are views.
        if step.op.name in VIEWS:
            return IMPLS[step.op.name](step)(buffer)
        return None

    def run_dynamic(self, name, buffers, attrs):
        outputs = DYNAMIC[name](*[np.asarray(b) for b in buffers], *attrs)
        return [(out, out.shape, FROM_NUMPY[out.dtype]) for out in (np.asarray(o) for o in outputs)]

    def dlpack_device(self, buffer):
        return np.asarray(buffer).__dlpack_device__()

    def compile(self, steps, drops):
        program = []
        for step, drop, into in zip(steps, drops, _reused_buffers(steps, drops)):
            fn = IMPLS[step.op.name](step)
            if into is not None:
                fn = _writing_into(fn, into)
            program.append((fn, step.args, step.out, drop))

        def run(slots):
            with np.errstate(all="ignore"):
                for fn, args, out, drop in program:
                    n = len(args)
                    if n == 1:
                        slots[out] = fn(slots[args[0]])
                    elif n == 2:
                        slots[out] = fn(slots[args[0]], slots[args[1]])
                    else:
                        slots[out] = fn(*[slots[i] for i in args])
                    for i in drop:
                        slots[i] = None
        return run


def _elementwise_ufunc(step):
    fn = UFUNCS.get(step.op.name)
    return fn if isinstance(fn, np.ufunc) and fn.signature is None and fn.nout == 1 else None


def _reused_buffers(steps, drops):
    """For each step, the argument slot whose buffer it may overwrite with its
    result (None: allocate), as NumPy elides temporaries: an elementwise ufunc
    step whose argument dies at that step, holds an array a ufunc step of this
    segment allocated (never a plan input, which callers and caches share),
    was read by ufunc steps only (so no view of it is alive) and has the
    result's shape and dtype. 0-d results are NumPy scalars: never reused."""
    ufunc_steps = [_elementwise_ufunc(step) is not None for step in steps]
    aliased = {a for step, is_ufunc in zip(steps, ufunc_steps) if not is_ufunc for a in step.args}
    fresh = {}  # slot -> (shape, dtype) of an array a ufunc step of this segment allocated
    reuse = []
    for step, drop, is_ufunc in zip(steps, drops, ufunc_steps):
        into = None
        if is_ufunc and step.shape != ():
            for position, a in enumerate(step.args):
                if a in drop and a not in aliased and fresh.get(a) == (step.shape, step.dtype):
                    into = position
                    break
            fresh[step.out] = (step.shape, step.dtype)
        reuse.append(into)
    return reuse


def _writing_into(ufunc, position):
    """The ufunc, writing its result into its argument number `position`."""
    return lambda *args: ufunc(*args, out=args[position])
