"""The CPU executor's kernels: each primitive as NumPy calls on NumPy buffers.

`IMPLS` maps each primitive to a builder `build(op, attrs, shape, dtype)`
(the primitive, its attributes, its result's shape and dtype: what a plan's
step, a fused group's instruction and a node all carry) that returns a
callable over buffers. Elementwise functions whose IEEE special cases NumPy
gets wrong (relative to the array API standard) are built in `special.py`.
"""

from math import prod

import numpy as np

from ..graph.primitives import BLOCK_REDUCE_OPS, PRIMITIVES, matmul_shape
from . import memory, special

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
    "subtract": np.subtract, "where": np.where,
    "stop_gradient": lambda a: a,
}


def _ufunc(op, attrs, shape, dtype):
    return UFUNCS[op.name]


def out_ufunc(kernel):
    """`kernel` if it is a one-output elementwise ufunc, which can write its
    result into an existing array with `out=`; else None."""
    if isinstance(kernel, np.ufunc) and kernel.signature is None and kernel.nout == 1:
        return kernel
    return None


# Products of at least this many bytes are written into pooled memory
# (memory.py), as fused groups' large results are: glibc maps each
# allocation past 32 MiB anew, so a fresh result that large gets fresh pages,
# which the kernel zeroes on first write, at every call; below that, whether
# it does depends on what the process freed before. (From 256 KiB, an MLP's
# 400 kB weight gradients at batch 16 lost their 100 page faults a step, but
# products into pooled memory took 16 us longer at batch 256 and under
# `jit`: docs/benchmarks.md.)
POOLED_PRODUCT_BYTES = 1 << 20


def _matmul(op, attrs, shape, dtype):
    # (No shape: a caller running the kernel on blocks, which allocates as NumPy does.)
    if shape is None or prod(shape) * dtype.itemsize < POOLED_PRODUCT_BYTES:
        return np.matmul
    target = dtype.dtype
    # The result's shape from the operands': a plan built for this one may run at other extents.
    return lambda a, b: np.matmul(a, b, out=memory.empty(matmul_shape(a.shape, b.shape), target))


def _special(op, attrs, shape, dtype):
    return special.build(op.name, dtype)


def _astype(op, attrs, shape, dtype):
    target = dtype.dtype
    return lambda a: np.asarray(a).astype(target)


def _full(op, attrs, shape, dtype):
    value = attrs[2]   # attrs: shape, dtype, value (the result's)
    return lambda: np.full(shape, value.value, dtype=dtype.dtype)


def _iota(op, attrs, shape, dtype):
    axis = attrs[2]   # attrs: shape, dtype, axis (the result's)
    n = shape[axis]
    view = [1] * len(shape)
    view[axis] = n

    def iota():
        return np.broadcast_to(np.arange(n, dtype=dtype.dtype).reshape(view), shape)
    return iota


# Reductions as `ufunc.reduce` of their monoid's primitive (what np.sum,
# np.all, ... call, without their microseconds of Python wrapping); the ufunc
# also combines partial results.
REDUCERS = {name: UFUNCS[PRIMITIVES[name].monoid.op] for name in BLOCK_REDUCE_OPS}


def reduce_dtype(name, dtype):
    """The `dtype=` of a reduction: sum and prod accumulate in the result
    dtype, any and all reduce to bool, max and min keep the input's dtype."""
    return None if name in ("max", "min") else dtype.dtype


# Points a row of a reduction over leading axes is folded to (see `reduce`).
# NumPy reduces the leading axis of a C-contiguous (rows, width) array with
# an inner loop over `width` points a row, slow when rows are narrow (the
# column sums of a tall table); folded rows run its loop over about this
# many points (the commit adding it has the measurements).
FOLD_WIDTH = 1024


def _may_fold(axes, kept):
    """Whether a reduction over `axes` that keeps trailing axes of shape
    `kept` reduces narrow rows: `axes` lead, and some axes are kept with at
    most FOLD_WIDTH / 4 points (below 4 rows a fold, folding stops paying)."""
    return len(axes) > 0 and len(kept) > 0 and axes == tuple(range(len(axes))) and prod(kept) * 4 <= FOLD_WIDTH


def folded_rows(shape, axes):
    """Rows `reduce` folds into one when it reduces a C-contiguous array of
    `shape` over `axes`: 1 for rows that are not narrow (`_may_fold`) or
    too few to fold twice."""
    kept = shape[len(axes):]
    if not _may_fold(axes, kept) or 0 in shape:
        return 1
    fold = FOLD_WIDTH // prod(kept)
    return fold if prod(shape[:len(axes)]) >= 2 * fold else 1


def reduce(ufunc, a, axes, dtype, out, keepdims):
    """ufunc.reduce(a, axes, dtype, out, keepdims), with the rows of a
    reduction over leading axes folded into wide rows first (`folded_rows`):
    the same result up to the order the points are combined in."""
    fold = folded_rows(a.shape, axes) if a.__class__ is np.ndarray and a.flags.c_contiguous else 1
    if fold == 1:
        return ufunc.reduce(a, axes, dtype, out, keepdims)
    n = len(axes)
    kept = a.shape[n:]
    width = prod(kept)
    rows = a.size // width
    flat = a.reshape(rows, width)
    whole = rows - rows % fold
    partial = ufunc.reduce(flat[:whole].reshape(whole // fold, fold * width), 0, dtype).reshape(fold, width)
    if whole < rows:   # the rows left over, fewer than a fold, join the first partial row
        ufunc(partial[0], ufunc.reduce(flat[whole:], 0, dtype), out=partial[0])
    result = ufunc.reduce(partial, 0, dtype).reshape((1,) * n + kept if keepdims else kept)
    if out is None:
        return result
    out[...] = result
    return out


def _reduction(op, attrs, shape, dtype):
    axes, keepdims = attrs
    ufunc = REDUCERS[op.name]
    accumulator = reduce_dtype(op.name, dtype)
    if _may_fold(axes, shape[len(axes):] if keepdims else shape):
        return lambda a: reduce(ufunc, a, axes, accumulator, None, keepdims)
    return lambda a: ufunc.reduce(a, axes, accumulator, None, keepdims)


def _arg_reduction(fn):
    def build(op, attrs, shape, dtype):
        axes, keepdims = attrs

        def run(a):
            a = np.asarray(a)
            if len(axes) == 1:
                out = fn(a, axis=axes[0], keepdims=keepdims)
            else:
                out = fn(a.reshape(-1))
            return out.reshape(shape).astype(np.int64, copy=False)
        return run
    return build


def _scan(fn):
    def build(op, attrs, shape, dtype):
        axis, = attrs
        accumulator = dtype.dtype
        return lambda a: fn(a, axis=axis, dtype=accumulator)
    return build


# Movement and arg-reductions call the array's method, not the np.reshape,
# np.transpose or np.argmin wrapper: the wrapper's Python costs 1-2 us a
# call (measured, NumPy 2.4), more than the view itself, and small cached
# plans and element reads run these by the thousand. Every CPU buffer (an
# ndarray or a NumPy scalar) has the methods.

def _reshape(op, attrs, shape, dtype):
    return lambda a: a.reshape(shape)


def _permute(op, attrs, shape, dtype):
    axes, = attrs
    return lambda a: a.transpose(axes)


def _broadcast(op, attrs, shape, dtype):
    def broadcast(a):
        a = np.asarray(a)
        if not a.flags.c_contiguous or a.size == 0:
            return np.broadcast_to(a, shape)
        # The same read-only view as np.broadcast_to, built directly over a's
        # memory: a tenth of broadcast_to's cost, which small graphs feel.
        lead = len(shape) - a.ndim
        strides = (0,) * lead + tuple(0 if n == 1 else s for s, n in zip(a.strides, a.shape))
        out = np.ndarray(shape, a.dtype, a, 0, strides)
        out.flags.writeable = False
        return out
    return broadcast


def index_of(starts, stops, steps):
    """The NumPy index of a normalized slice (a stop of -1 means 'before 0')."""
    return tuple(slice(a, None if b < 0 else b, c) for a, b, c in zip(starts, stops, steps))


def _slice(op, attrs, shape, dtype):
    index = index_of(*attrs)
    return lambda a: np.asarray(a)[index]


def _flip(op, attrs, shape, dtype):
    axes, = attrs
    return lambda a: np.flip(a, axis=axes)


def _pad(op, attrs, shape, dtype):
    pads, value = attrs
    return lambda a: np.pad(a, pads, constant_values=value.value)


def _concat(op, attrs, shape, dtype):
    axis, = attrs
    return lambda *arrays: np.concatenate(arrays, axis=axis)


def _update_slice(op, attrs, shape, dtype):
    index = index_of(*attrs)

    def update_slice(a, v):
        a[index] = v
        return a
    return update_slice


def _sort(op, attrs, shape, dtype):
    axis, descending = attrs
    if descending:
        # Stable descending order: sort the reversed array, then reverse back,
        # so elements that compare equal (-0.0 and 0.0) keep their order.
        return lambda a: np.flip(np.sort(np.flip(a, axis=axis), axis=axis, kind="stable"), axis=axis)
    return lambda a: np.sort(a, axis=axis, kind="stable")


def _argsort(op, attrs, shape, dtype):
    axis, descending = attrs

    def argsort(a):
        if not descending:
            return np.argsort(a, axis=axis, kind="stable")
        # Stable descending order: sort the reversed array ascending, then map
        # positions back, so equal elements keep their original order.
        n = np.shape(a)[axis]
        reversed_order = np.argsort(np.flip(a, axis=axis), axis=axis, kind="stable")
        return n - 1 - np.flip(reversed_order, axis=axis)
    return argsort


def _searchsorted(op, attrs, shape, dtype):
    side, = attrs
    return lambda x1, x2: np.searchsorted(x1, x2, side=side).astype(np.int64, copy=False)


def _isin(op, attrs, shape, dtype):
    invert, = attrs
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


def _take(op, attrs, shape, dtype):
    axis, = attrs
    return _named_errors("take", lambda a, i: np.take(a, i, axis=axis))


def _take_along_axis(op, attrs, shape, dtype):
    axis, = attrs
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


def _gather(op, attrs, shape, dtype):
    template = attrs[0]
    return _named_errors("__getitem__", lambda a, *arrays: np.asarray(a)[numpy_key(template, arrays)])


def _scatter(op, attrs, shape, dtype):
    template = attrs[0]

    def scatter(a, value, *arrays):
        a[numpy_key(template, arrays)] = value
        return a
    return _named_errors("__setitem__", scatter)


def _scatter_add(op, attrs, shape, dtype):
    template = attrs[0]

    def scatter_add(a, value, *arrays):
        np.add.at(a, numpy_key(template, arrays), value)  # unbuffered: duplicate indices accumulate
        return a
    return _named_errors("scatter_add", scatter_add)


# Updates write into their first argument and return it: the executor runs
# them on a copy, or on the argument itself when nobody else can see it.
UPDATES = {"update_slice": _update_slice, "scatter": _scatter, "scatter_add": _scatter_add}


def _on_a_copy(build):
    def build_copying(op, attrs, shape, dtype):
        update = build(op, attrs, shape, dtype)
        return lambda a, *rest: update(np.array(a, copy=True), *rest)
    return build_copying


def _diagonal(op, attrs, shape, dtype):
    offset, = attrs
    return lambda a: np.diagonal(a, offset=offset, axis1=-2, axis2=-1)


def _as_dtype(fn, dtype):
    """NumPy's linalg/FFT may return another precision or kind (eig of a real
    matrix with real eigenvalues is real): cast to the node's dtype."""
    dtype = dtype.dtype
    return lambda *args: np.asarray(fn(*args)).astype(dtype, copy=False)


def _linalg(fn):
    def build(op, attrs, shape, dtype):
        run = _as_dtype(lambda a, *rest: fn(a, *rest, *attrs), dtype)
        return _named_errors(f"linalg.{op.name}", run, (np.linalg.LinAlgError,))
    return build


def _multi(fn):
    def build(op, attrs, shape, dtype):
        dtypes = [d.dtype for d in dtype]

        def run(a):
            return tuple(np.asarray(out).astype(d, copy=False) for out, d in zip(fn(a, *attrs), dtypes))
        return _named_errors(f"linalg.{op.name}", run, (np.linalg.LinAlgError,))
    return build


def _select(op, attrs, shape, dtype):
    index, = attrs
    return lambda outputs: outputs[index]


def _fftn(fn):
    def build(op, attrs, shape, dtype):
        axes, sizes, norm = attrs
        return _as_dtype(lambda a: fn(a, s=sizes, axes=axes, norm=norm), dtype)
    return build


def _fft_1d(fn):
    def build(op, attrs, shape, dtype):
        (axis,), (n,), norm = attrs
        return _as_dtype(lambda a: fn(a, n=n, axis=axis, norm=norm), dtype)
    return build


IMPLS = {name: _ufunc for name in UFUNCS}
IMPLS.update({name: _special for name in special.SPECIAL})
IMPLS.update({
    "astype": _astype, "full": _full, "iota": _iota, "matmul": _matmul,
    "sum": _reduction, "prod": _reduction, "max": _reduction, "min": _reduction,
    "any": _reduction, "all": _reduction,
    "argmax": _arg_reduction(np.ndarray.argmax), "argmin": _arg_reduction(np.ndarray.argmin),
    "cumulative_sum": _scan(np.cumsum), "cumulative_prod": _scan(np.cumprod),
    "reshape": _reshape, "permute": _permute, "broadcast": _broadcast,
    "slice": _slice, "flip": _flip, "pad": _pad, "concat": _concat,
    "sort": _sort, "argsort": _argsort, "searchsorted": _searchsorted, "isin": _isin,
    "take": _take, "take_along_axis": _take_along_axis, "gather": _gather,
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
IMPLS.update({name: _on_a_copy(build) for name, build in UPDATES.items()})


def _unique(index=False, inverse=False, counts=False):
    """A unique_* kernel: (values, [indices], [inverse], [counts]), values sorted.

    np.unique sorts (NaNs last, each distinct with equal_nan=False), as clients
    of unique_* expect and array-api-strict does; np.unique_values and friends
    hash instead since NumPy 2.3 and return values in no particular order.
    """
    def run(a):
        out = np.unique(a, return_index=index, return_inverse=inverse, return_counts=counts, equal_nan=False)
        out = list(out) if isinstance(out, tuple) else [out]
        if inverse:
            # The standard's inverse has x's shape; np.unique's has varied across NumPy 2.x.
            out[1 + index] = out[1 + index].reshape(a.shape)
        return tuple(out)
    return run


# Data-dependent primitives: each takes NumPy arrays and returns a tuple of
# NumPy arrays whose shapes depend on the values.
DYNAMIC = {
    "nonzero": lambda a: np.nonzero(a),
    "unique_all": _unique(index=True, inverse=True, counts=True),
    "unique_counts": _unique(counts=True),
    "unique_inverse": _unique(inverse=True),
    "unique_values": _unique(),
    "repeat": lambda a, repeats, axis: (np.repeat(a, repeats, axis=axis),),
}
