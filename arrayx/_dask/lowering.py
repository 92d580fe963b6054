"""Primitives beyond elementwise work, reductions and views, as dask graphs:
dask.array's own operation where it has one (concatenate, pad, argmax,
cumsum, fft, the blocked linear algebra of dask.array.linalg), else the CPU
executor's kernel on chunks that hold what it needs whole (a sort's axis, a
stack of matrices). Nothing here moves data to the host.

`LOWERED` maps a primitive's name to `build(step)`, which returns the
step's kernel: a callable over dask arrays.
"""

import functools
import importlib.util
import operator
from functools import partial

import numpy as np

from . import chunks


def _da():
    import dask.array as da
    return da


def _as(dtype, array):
    """`array` in the node's dtype (dask's linalg and FFT follow NumPy's,
    which may widen or return a real result)."""
    return array if array.dtype == dtype.dtype else array.astype(dtype.dtype)


def auto_chunks(shape):
    """The chunks of a new array of `shape`: dask's "auto" ones (its
    `array.chunk-size`), or one chunk per axis for an array with no
    elements, where "auto" would divide by the size of a block (zero)."""
    return -1 if 0 in shape else "auto"


def _concat(step):
    axis, = step.attrs
    return lambda *arrays: _da().concatenate(arrays, axis=axis)


def _pad(step):
    pads, value = step.attrs

    def pad(a):
        if a.size == 0:
            # All padding (dask's pad divides by the input's block size, zero here).
            return _da().full(step.shape, value.value, dtype=step.dtype.dtype, chunks=auto_chunks(step.shape))
        return _da().pad(a, pads, mode="constant", constant_values=value.value)
    return pad


def _arg_reduction(step):
    axes, keepdims = step.attrs
    find = getattr(_da(), step.op.name)

    def run(a):
        if len(axes) == 1:
            return _as(step.dtype, find(a, axis=axes[0], keepdims=keepdims))
        # Over every axis: the position in the flattened array, as NumPy's.
        return _as(step.dtype, find(a.reshape(-1)).reshape(step.shape))
    return run


def _scan(step):
    axis, = step.attrs
    scan = _da().cumsum if step.op.name == "cumulative_sum" else _da().cumprod
    return lambda a: scan(a, axis=axis, dtype=step.dtype.dtype)


def _along_axis(step):
    """sort and argsort: the CPU's kernel on chunks holding the axis whole."""
    axis = step.attrs[0]
    op, attrs, dtype = step.op, step.attrs, step.dtype

    def run(a):
        return a.rechunk({axis: -1}).map_blocks(partial(chunks.run_primitive, op, attrs, dtype), dtype=dtype.dtype,
                                                meta=np.empty((0,) * a.ndim, dtype.dtype))
    return run


def _fft(step):
    """dask's FFT, which needs the transformed axes whole in each chunk."""
    axes, sizes, norm = step.attrs
    transform = getattr(_da().fft, step.op.name)

    def run(a):
        whole = a.rechunk({axis: -1 for axis in axes})
        if step.op.name in ("hfft", "ihfft"):
            return _as(step.dtype, transform(whole, n=sizes[0], axis=axes[0], norm=norm))
        return _as(step.dtype, transform(whole, s=sizes, axes=axes, norm=norm))
    return run


def square_chunk(n, size):
    """A block side that divides `n` (dask's LU and Cholesky need equal square
    blocks) near `size`; `n` itself (one block) where every divisor is far
    smaller, which would make a graph of tiny tasks."""
    side = next(d for d in range(min(n, size), 0, -1) if n % d == 0)
    return side if 4 * side >= min(n, size) else n


def _square(a):
    side = square_chunk(a.shape[0], max(a.chunks[0][0], 1))
    return a.rechunk((side, side))


def _tall_or_fat(a):
    """`a` chunked as dask's QR and SVD take it: a tall and skinny matrix
    with its columns whole (tsqr), a short and fat one with its rows whole
    and column blocks no wider than it is tall (sfqr)."""
    m, n = a.shape
    return a.rechunk({1: -1}) if m >= n else a.rechunk({0: -1, 1: m})


# dask.array.linalg computes these with SciPy's LAPACK wrappers (blocked LU,
# triangular solves): without SciPy they run as the CPU's kernel per matrix.
SCIPY_LINALG = frozenset({"cholesky", "inv", "solve"})


@functools.cache
def scipy_available():
    return importlib.util.find_spec("scipy") is not None


def _dask_linalg(step, a, *rest):
    """The step by dask.array.linalg on a 2-D `a` (and 2-D or 1-D `rest`),
    or None where dask has no such operation."""
    linalg = _da().linalg
    name, attrs = step.op.name, step.attrs
    if name == "qr" and attrs[0] == "reduced":
        q, r = linalg.qr(_tall_or_fat(a))
        return _as(step.dtype[0], q), _as(step.dtype[1], r)
    if name == "svd" and not attrs[0]:
        return tuple(_as(d, x) for d, x in zip(step.dtype, linalg.svd(_tall_or_fat(a))))
    if name in SCIPY_LINALG and not scipy_available():
        return None
    if name == "cholesky":
        return _as(step.dtype, linalg.cholesky(_square(a), lower=not attrs[0]))
    if name == "inv":
        return _as(step.dtype, linalg.inv(_square(a)))
    if name == "solve":
        a = _square(a)
        b = rest[0].rechunk({0: a.chunks[0]})
        return _as(step.dtype, linalg.solve(a, b))
    return None


def _linalg(step):
    """dask.array.linalg's operation on one matrix where dask has it (QR and
    SVD reduced, Cholesky, inverse, solve), else the CPU's kernel on chunks
    holding whole matrices (a stack of them, or one)."""
    def run(*arrays):
        if arrays[0].ndim == 2 and all(b.ndim <= 2 for b in arrays[1:]) and all(a.size for a in arrays):
            lowered = _dask_linalg(step, *arrays)
            if lowered is not None:
                return lowered
        return per_matrix(step, *arrays)
    return run


def per_matrix(step, *arrays):
    """The CPU's kernel of `step` over stacks of matrices: the inputs
    broadcast along their batch axes (all but the last two; a 1-D operand is
    one vector for every matrix), one task per chunk of the batch, each
    holding its matrices whole."""
    da = _da()
    outputs = step.shape if isinstance(step.dtype, tuple) else (step.shape,)
    dtypes = step.dtype if isinstance(step.dtype, tuple) else (step.dtype,)
    batch = np.broadcast_shapes(*(a.shape[:-2] for a in arrays if a.ndim >= 2))
    # A single matrix gets a batch axis of one: blockwise then has an axis to map over.
    lead = (1,) if batch == () else ()
    index = tuple(range(len(lead + batch)))
    args, core = [], len(index)
    for a in arrays:
        if a.ndim >= 2:
            a = da.broadcast_to(a.reshape(lead + a.shape), lead + batch + a.shape[-2:])
            a = a.rechunk({a.ndim - 2: -1, a.ndim - 1: -1})
            args += [a, index + (core, core + 1)]
            core += 2
        else:
            args += [a.rechunk(-1), (core,)]
            core += 1
    results = da.blockwise(chunks.run_primitive, index, step.op, None, step.attrs, None, step.dtype, None, *args,
                           concatenate=True, meta=np.empty((0,) * len(index), object))
    arrays_out = []
    for k, (shape, dtype) in enumerate(zip(outputs, dtypes)):
        own = shape[len(batch):]
        new = {core + j: n for j, n in enumerate(own)}
        taken = results if len(outputs) == 1 else da.blockwise(
            operator.getitem, index, results, index, k, None, meta=np.empty((0,) * len(index), object))
        out = da.blockwise(np.asarray, index + tuple(new), taken, index, new_axes=new, dtype=dtype.dtype,
                           meta=np.empty((0,) * (len(index) + len(own)), dtype.dtype))
        arrays_out.append(out.reshape(shape) if lead else out)
    return arrays_out[0] if len(outputs) == 1 else tuple(arrays_out)


LOWERED = {"concat": _concat, "pad": _pad, "argmax": _arg_reduction, "argmin": _arg_reduction,
           "cumulative_sum": _scan, "cumulative_prod": _scan, "sort": _along_axis, "argsort": _along_axis}
LOWERED.update({name: _fft for name in ("fftn", "ifftn", "rfftn", "irfftn", "hfft", "ihfft")})
LOWERED.update({name: _linalg for name in ("cholesky", "inv", "det", "solve", "pinv", "svdvals", "eigvalsh",
                                           "eigvals", "qr", "svd", "eigh", "eig", "slogdet")})
