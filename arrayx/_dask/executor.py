"""The dask executor: buffers are dask arrays, steps build dask graphs.

Nothing runs when a plan runs here: each step adds to the dask graph of its
result, and a force point to the host computes it on dask's current
scheduler (a distributed Client when the user has one, dask's threads
otherwise). A fused group is one blockwise task per chunk running the CPU
executor's fused program on that chunk (chunks.py); a group ending in a
reduction is a tree reduction of those tasks' partial results; an
elementwise primitive or reduction on its own runs as a group of one
instruction; matmul is dask's blocked matmul, and lowering.py maps concat, pad,
argmax/argmin, scans, sorts, FFTs and linalg; slices, reshapes, transposes,
broadcasts and flips are dask's lazy operations, and constant and index
arrays are built chunked. `runs` says no to the rest, which runs on the CPU
executor with transfers (the scheduler's lower pass).

dask is imported inside the methods that build graphs: `import arrayx`
registers this executor without importing dask.
"""

import itertools
import operator
import sys
import uuid
from functools import partial

import numpy as np

from .._cpu.kernels import index_of
from ..executors.base import VIEWS, Executor
from ..graph.fused import single_instruction_group
from ..graph.primitives import BLOCK_REDUCE_OPS, ELEMENTWISE_OPS, FUSED_OP
from . import chunks
from .lowering import LOWERED, auto_chunks

# Primitives with a dask form besides elementwise ones, reductions, views and
# those of lowering.py.
DASK_PRIMITIVES = frozenset({"matmul", "full", "iota", "select"})


class DaskExecutor(Executor):
    """Buffers and graphs of dask.array, chunked as dask's configuration says
    (`array.chunk-size`, "auto" chunks)."""

    name = "dask"
    fuses = True
    # Its tasks run the CPU's fused program on chunks that hold whole rows.
    fused_rows_end_in_epilogues = True
    holds_results = False
    # Flattening a chunked array for a dot product rechunks it; the fused
    # sum of products is one task per chunk.
    dot_pays = False

    def runs(self, op, in_dtypes, dtype):
        name = op.name
        return (name in ELEMENTWISE_OPS or name in BLOCK_REDUCE_OPS or name in VIEWS or name in DASK_PRIMITIVES
                or name in LOWERED)

    # ---- buffers ---------------------------------------------------------------

    def from_host(self, array, copy=True):
        import dask.array as da
        if copy is False:
            raise ValueError("asarray: copy=False cannot share host memory with the dask device "
                             "(dask.array.from_array copies its input)")
        # Named at random, not by hashing the contents (a pass over all of them).
        array = np.asarray(array)
        return da.from_array(array, chunks=auto_chunks(array.shape), name=False)

    def from_scalar(self, value, dtype):
        # A value beyond float16's range becomes inf, as a cast does, without a warning.
        with np.errstate(over="ignore"):
            return self.from_host(np.asarray(dtype.type(value)))

    def to_host(self, buffer):
        host = np.asarray(buffer.compute()).view()   # the computed array may be a chunk the graph holds
        host.flags.writeable = False
        return host

    def copy(self, buffer):
        return buffer.copy()

    def persist(self, buffers):
        import dask
        # On dask's current scheduler: with a distributed Client, the chunks
        # stay in its workers' memory. One call computes shared work once.
        held = dask.persist(*buffers)
        # A Client persists in the background: wait, so that xp.eval is a
        # force point and a failing task raises here. Without a Client
        # (distributed imported or not) dask persisted locally: no futures.
        distributed = sys.modules.get("distributed")   # a Client needs it imported
        futures = distributed.futures_of(held) if distributed is not None else []
        if futures:
            distributed.wait(futures)
            for future in futures:
                if future.status == "error":
                    future.result()
        return held

    def hold_in_memory(self, buffer):
        # The computed value is a new host array (computing makes it; nothing
        # the array held is copied), which the array keeps from then on.
        if held_memory(buffer) is not None:
            return buffer
        host = np.asarray(buffer.compute())
        if not (host.flags.owndata and host.flags.writeable):   # a chunk the graph holds, or a broadcast
            host = host.copy()
        return holding(host)

    def dlpack(self, buffer, stream, max_version, dl_device, copy):
        host = held_memory(buffer)
        if host is None:
            # Computed into a new host array nobody else sees: exporting it
            # needs no further copy, whatever `copy` says.
            host, copy = np.array(buffer.compute(), copy=True), None
        if max_version is not None and max_version >= (1, 0):
            # DLPack >= 1.0 carries the read-only flag: exported read-only, as the CPU's exports are.
            host = host.view()
            host.flags.writeable = False
        return host.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def dlpack_device(self, buffer):
        return (1, 0)   # kDLCPU: an export is a host copy of the computed array

    def view(self, op, attrs, shape, dtype, buffer):
        import dask.array as da
        name = op.name
        if name == "slice":
            return buffer[index_of(*attrs)]
        if name == "reshape":
            try:
                return buffer.reshape(shape)
            except NotImplementedError:
                # dask reshapes in one pass only where axes merge or split
                # whole; through one axis it always can.
                return buffer.reshape(-1).reshape(shape)
        if name == "permute":
            return da.transpose(buffer, attrs[0])
        if name == "broadcast":
            return broadcast(buffer, shape)
        if name == "flip":
            return da.flip(buffer, attrs[0])
        return None

    # ---- graphs ----------------------------------------------------------------

    def kernel(self, step):
        op, attrs, shape, dtype = step.op, step.attrs, step.shape, step.dtype
        if op is FUSED_OP:
            return partial(run_group, attrs[0])
        name = op.name
        if name in VIEWS:
            return partial(self.view, op, attrs, shape, dtype)
        if name == "matmul":
            return partial(matmul, dtype)
        if name == "full":
            return partial(full, shape, dtype, attrs[2].value)
        if name == "iota":
            return partial(iota, shape, dtype, attrs[2])
        if name == "select":
            return operator.itemgetter(attrs[0])
        if name in LOWERED:
            return LOWERED[name](step)
        group = single_instruction_group(op, attrs, [(s, d, "C") for s, d in step.in_types], shape, dtype)
        return partial(run_group, group)


def run_group(group, *inputs):
    """The dask arrays of fused `group`'s outputs over dask arrays `inputs`:
    one task per chunk running the group on it, and for a group ending in a
    reduction, a tree reduction of their partial results. One array for a
    group with one output, else a list."""
    import dask.array as da
    ndim = len(group.shape)
    index = tuple(range(ndim))
    args = []
    for buffer in inputs:
        # An input broadcasts right-aligned; blockwise broadcasts its size-1 axes.
        axes = index[ndim - buffer.ndim:]
        whole = {k: -1 for k, axis in enumerate(axes) if axis in group.row_axes and buffer.shape[k] > 1}
        # A row reduction reduces rows whole: each chunk holds whole rows.
        args += [buffer.rechunk(whole) if whole else buffer, axes]
    reduction = group.reduction
    n_in = len(group.inputs)
    dtypes = [group.body[v - n_in].dtype.dtype for v in group.outputs]
    # Chunks of the root of a group ending in a reduction are partial results, one point along the
    # reduced axes; those of an epilogue's value one point a row (each chunk holds whole rows).
    epilogue, epilogue_chunks = group.epilogue, {axis: 1 for axis in group.row_axes}
    adjusted = [epilogue_chunks if v in epilogue else None for v in group.outputs]
    if reduction is not None:
        adjusted[-1] = {axis: 1 for axis in reduction.attrs[0]}
    if len(group.outputs) == 1:
        outputs = [da.blockwise(chunks.run_group, index, group, None, *args, dtype=dtypes[0],
                                adjust_chunks=adjusted[0], meta=np.empty((0,) * ndim, dtypes[0]))]
    else:
        # One task per chunk gives a tuple of output chunks, taken apart by the tasks of each output.
        tuples = da.blockwise(chunks.run_group, index, group, None, *args, meta=np.empty((0,) * ndim, object))
        outputs = [da.blockwise(operator.getitem, index, tuples, index, k, None, dtype=dtype,
                                adjust_chunks=adjusted[k], meta=np.empty((0,) * ndim, dtype))
                   for k, dtype in enumerate(dtypes)]
    if reduction is not None:
        axes, keepdims = reduction.attrs
        combine = partial(chunks.combine, reduction.op.name, reduction.dtype)
        outputs[-1] = da.reduction(outputs[-1], chunks.keep_partial, combine, axis=axes, keepdims=keepdims,
                                   dtype=dtypes[-1], combine=combine, concatenate=True,
                                   meta=np.empty((0,) * len(reduction.shape), dtypes[-1]))
    return outputs[0] if len(outputs) == 1 else outputs


def matmul(dtype, a, b):
    """dask's blocked matmul, giving `dtype`. float16 products are summed in
    float32 and rounded once, as NumPy's float16 matmul does (dask would sum
    the blocks' float16 products in float16, rounding once per block)."""
    if a.dtype == np.float16:
        a, b = a.astype(np.float32), b.astype(np.float32)
    product = a @ b
    return product if product.dtype == dtype.dtype else product.astype(dtype.dtype)


def full(shape, dtype, value):
    """A chunked array of `shape` filled with `value` (computed per chunk, never held whole)."""
    import dask.array as da
    return da.full(shape, value, dtype=dtype.dtype, chunks=auto_chunks(shape))


def iota(shape, dtype, axis):
    """A chunked array of `shape` whose values are their index along `axis`,
    chunked as a new array of `shape` (so iotas along different axes, as
    `eye` and `tril` combine, have the same chunks, not a grid of both)."""
    import dask.array as da
    from dask.array.core import normalize_chunks
    chunks = normalize_chunks(auto_chunks(shape), shape, dtype=dtype.dtype)
    line = [1] * len(shape)
    line[axis] = shape[axis]
    return da.broadcast_to(da.arange(shape[axis], dtype=dtype.dtype, chunks=chunks[axis]).reshape(line), shape,
                           chunks=chunks)


def broadcast(buffer, shape):
    """`buffer` broadcast to `shape`, chunked as dask's configuration says
    along the axes it broadcasts along (where dask would make each one chunk)."""
    import dask.array as da
    from dask.array.core import normalize_chunks
    if 0 in shape:
        return da.broadcast_to(buffer, shape, chunks=auto_chunks(shape))
    lead = len(shape) - buffer.ndim
    kept = ("auto",) * lead + tuple(c if n == m else "auto"
                                   for c, n, m in zip(buffer.chunks, buffer.shape, shape[lead:]))
    return da.broadcast_to(buffer, shape, chunks=normalize_chunks(kept, shape, dtype=buffer.dtype))


# The name prefix of a dask array whose chunks are views of one host array
# (`holding`), which DLPack exports share.
HELD = "arrayx-held-"


def holding(host):
    """A dask array, chunked as dask's configuration says, whose chunks are
    views of host array `host` (no copy: later computations read it)."""
    import dask.array as da
    from dask.array.core import normalize_chunks, slices_from_chunks
    chunks = normalize_chunks(auto_chunks(host.shape), host.shape, dtype=host.dtype)
    name = HELD + uuid.uuid4().hex
    keys = itertools.product(*(range(len(c)) for c in chunks))
    # `...` makes each chunk a view, also of a 0-d host (whose host[()] is a scalar).
    graph = {(name, *key): host[index + (...,)] for key, index in zip(keys, slices_from_chunks(chunks))}
    return da.Array(graph, name, chunks=chunks, dtype=host.dtype, meta=np.empty((0,) * host.ndim, host.dtype))


def held_memory(buffer):
    """The host array whose views are the chunks of dask array `buffer` made
    by `holding`, else None."""
    if not buffer.name.startswith(HELD):
        return None
    return buffer.dask[(buffer.name,) + (0,) * buffer.ndim].base
