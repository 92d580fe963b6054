"""Fused groups on the CPU: one pass over cache-sized blocks, on every core.

A group smaller than a few blocks runs as whole-array NumPy calls, each
writing into a temporary of the group that dies at that instruction (NumPy's
temporary elision, planned once). A larger group runs block by block: every
instruction writes with `out=` into a few block-sized temporaries that stay in
cache, exported values go straight into their output arrays, and a final
reduction reduces each block and combines the partial results. Blocks are
spread over a thread pool in contiguous runs, one per core; NumPy releases the
GIL inside ufunc loops, so the threads compute in parallel.

Elementwise results are bit-identical to unfused execution (the same NumPy
loops on the same values; NumPy's loops give the same result for an element
whatever its neighbours and stride). A reduction sums in another order than
one `ufunc.reduce` over the whole array does, so sums may differ by rounding.
"""

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from math import prod

import numpy as np

from ..executors.base import Step
from .kernels import IMPLS, REDUCERS, out_ufunc, reduce_dtype

# Points per block: measured on a 2-core EPYC (benchmarks/block_size.py);
# 2**14 float64 values are 128 KiB, so a chain's few temporaries stay in L2.
BLOCK = 1 << 14
# Groups with fewer points run as whole-array calls: blocking cannot pay.
BLOCKED_MIN = 4 * BLOCK
# Blocks per thread below which a group runs on the calling thread alone:
# handing a run of blocks to a worker costs tens of microseconds.
BLOCKS_PER_THREAD = 4
THREADS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)

_pool = None
_pool_lock = threading.Lock()


def _workers():
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=THREADS - 1, thread_name_prefix="arrayx-cpu")
    return _pool


def _identity(name, dtype):
    """The value a partial result starts from: combining it with x gives x
    (a float sum starts from +0.0, as NumPy's does: a sum of -0.0 is +0.0)."""
    if name == "sum":
        return dtype.type(0)
    if name == "prod":
        return dtype.type(1)
    if name in ("any", "all"):
        return name == "all"
    if dtype.kind == "f":
        return dtype.type(-np.inf if name == "max" else np.inf)
    return np.iinfo(dtype).min if name == "max" else np.iinfo(dtype).max


def blocks(shape, block):
    """Index tuples (one slice per axis) that tile `shape` in C order, each
    covering at most `block` points."""
    if 0 in shape:
        return []
    k = len(shape) - 1
    inner = 1
    while k > 0 and inner * shape[k] <= block:
        inner *= shape[k]
        k -= 1
    chunk = max(1, block // inner)
    full = tuple(slice(None) for _ in shape[k + 1:])
    out = []
    for prefix in np.ndindex(*shape[:k]):
        lead = tuple(slice(i, i + 1) for i in prefix)
        for start in range(0, shape[k], chunk):
            out.append(lead + (slice(start, min(start + chunk, shape[k])),) + full)
    return out


def _block_shape(index, shape):
    return tuple(len(range(*s.indices(n))) for s, n in zip(index, shape))


class FusedKernel:
    """A callable running one FusedGroup over NumPy buffers."""

    def __init__(self, group):
        self.group = group
        n_in = len(group.inputs)
        self.n_in = n_in
        body = group.body
        self.reduction = group.reduction
        elementwise = body[:-1] if self.reduction is not None else body
        self.fns = [IMPLS[i.op.name](Step(i.op, i.attrs, i.shape, i.dtype, (), None)) for i in body]
        self.ufuncs = [out_ufunc(fn) for fn in self.fns]
        self.exported = set(group.outputs)
        last = {}
        for k, instruction in enumerate(body):
            for a in instruction.args:
                last[a] = k
        self.last = last
        self.reuse = self._whole_array_reuse(elementwise)
        self.registers, self.register_dtypes = self._block_registers(elementwise)
        if self.reduction is not None:
            axes, keepdims = self.reduction.attrs
            self.axes = axes
            self.keepdims = keepdims
            self.reducer = REDUCERS[self.reduction.op.name]
            self.reduce_dtype = reduce_dtype(self.reduction.op.name, self.reduction.dtype)
            self.acc_shape = tuple(1 if j in axes else n for j, n in enumerate(group.shape))

    # planning (once per group)

    def _whole_array_reuse(self, elementwise):
        """Per instruction, the value whose array it may overwrite: an array a
        ufunc of this group allocated, of the same dtype, dying here."""
        n_in, shape = self.n_in, self.group.shape
        fresh = {}
        reuse = []
        for k, instruction in enumerate(elementwise):
            into = None
            if self.ufuncs[k] is not None and shape != ():
                for a in instruction.args:
                    if self.last[a] == k and fresh.get(a) == instruction.dtype and a not in self.exported:
                        into = a
                        break
                fresh[n_in + k] = instruction.dtype
            reuse.append(into)
        return reuse

    def _block_registers(self, elementwise):
        """Per instruction, the block temporary it writes (None: an exported
        value, written into its output, or a non-ufunc that allocates); values
        that died free their temporary for the next instruction of that dtype."""
        n_in = self.n_in
        free = {}
        dtypes = []
        registers = []
        for k, instruction in enumerate(elementwise):
            value = n_in + k
            dying = [a for a in set(instruction.args) if self.last[a] == k and a >= n_in]
            for a in dying:   # a ufunc may write over its own operands
                r = registers[a - n_in]
                if r is not None:
                    free.setdefault(dtypes[r], []).append(r)
            register = None
            if self.ufuncs[k] is not None and value not in self.exported:
                pool = free.get(instruction.dtype)
                if pool:
                    register = pool.pop()
                else:
                    register = len(dtypes)
                    dtypes.append(instruction.dtype)
            registers.append(register)
        return registers, dtypes

    # running

    def __call__(self, *inputs):
        group = self.group
        with np.errstate(all="ignore"):
            if group.size < BLOCKED_MIN:
                values = self._whole_arrays(inputs)
            else:
                values = self._blocked(inputs)
        outputs = tuple(values[o] for o in group.outputs)
        return outputs[0] if len(outputs) == 1 else outputs

    def _whole_arrays(self, inputs):
        values = list(inputs)
        for k, instruction in enumerate(self.group.body):
            args = [values[a] for a in instruction.args]
            into = self.reuse[k] if k < len(self.reuse) else None
            if into is not None:
                values.append(self.ufuncs[k](*args, out=values[into]))
            else:
                values.append(self.fns[k](*args))
        return values

    def _blocked(self, inputs):
        group = self.group
        shape = group.shape
        n_in = self.n_in
        # Inputs as arrays of the iteration shape (broadcasts are views); 0-d
        # inputs stay scalars, which every block reads whole.
        inputs = [x if np.ndim(x) == 0 or np.shape(x) == shape else np.broadcast_to(x, shape) for x in inputs]
        sliced = [np.ndim(x) != 0 for x in inputs]
        outputs = {}
        for o in group.outputs:
            if o >= n_in and (self.reduction is None or o != group.outputs[-1]):
                outputs[o] = np.empty(shape, group.body[o - n_in].dtype.dtype)
        index = blocks(shape, BLOCK)
        threads = min(THREADS, len(index) // BLOCKS_PER_THREAD) or 1
        runs = [index[i * len(index) // threads:(i + 1) * len(index) // threads] for i in range(threads)]
        direct = None
        if self.reduction is not None:
            direct = self._reduced_within_blocks(index[0])
            acc = np.empty(self.acc_shape, self.reduction.dtype.dtype)
        if threads == 1:
            partials = [self._run(inputs, sliced, outputs, runs[0], acc if direct else None)]
        else:
            pool = _workers()
            futures = [pool.submit(self._run, inputs, sliced, outputs, run, acc if direct else None) for run in runs[1:]]
            partials = [self._run(inputs, sliced, outputs, runs[0], acc if direct else None)]
            partials += [f.result() for f in futures]
        values = [None] * (n_in + len(group.body))
        for o, array in outputs.items():
            values[o] = array
        if self.reduction is not None:
            if not direct:
                acc = partials[0]
                for partial in partials[1:]:
                    self.reducer(acc, partial, out=acc)
            values[-1] = acc if self.keepdims else acc.reshape(self.reduction.shape)
        return values

    def _reduced_within_blocks(self, first):
        """True when every block spans the reduced axes whole, so each block's
        reduction is final and is written straight into the result."""
        shape = self.group.shape
        return all(first[j] == slice(None) or (first[j].start == 0 and first[j].stop == shape[j])
                   for j in self.axes)

    def _run(self, inputs, sliced, outputs, run, result):
        """Compute the blocks `run`; return the partial reduction, if any."""
        group = self.group
        body = group.body
        n_in = self.n_in
        elementwise = len(body) - (self.reduction is not None)
        temps = [np.empty(BLOCK, d.dtype) for d in self.register_dtypes]
        views = {}
        partial = None
        if self.reduction is not None and result is None:
            partial = np.full(self.acc_shape, _identity(self.reduction.op.name, self.reduction.dtype.dtype),
                              self.reduction.dtype.dtype)
        with np.errstate(all="ignore"):
            for index in run:
                block_shape = _block_shape(index, group.shape)
                temp_views = views.get(block_shape)
                if temp_views is None:
                    n = prod(block_shape)
                    temp_views = views[block_shape] = [t[:n].reshape(block_shape) for t in temps]
                values = [x[index] if s else x for x, s in zip(inputs, sliced)]
                for k in range(elementwise):
                    instruction = body[k]
                    args = [values[a] for a in instruction.args]
                    value = n_in + k
                    out = outputs.get(value)
                    if out is not None:
                        out = out[index]
                        if self.ufuncs[k] is not None:
                            self.ufuncs[k](*args, out=out)
                        else:
                            out[...] = self.fns[k](*args)
                    elif self.registers[k] is not None:
                        out = self.ufuncs[k](*args, out=temp_views[self.registers[k]])
                    else:
                        out = self.fns[k](*args)
                    values.append(out)
                if self.reduction is not None:
                    source = values[body[-1].args[0]]
                    target = tuple(slice(None) if j in self.axes else s for j, s in enumerate(index))
                    if result is not None:
                        self.reducer.reduce(source, axis=self.axes, keepdims=True, dtype=self.reduce_dtype,
                                            out=result[target])
                    else:
                        here = partial[target]
                        self.reducer(here, self.reducer.reduce(source, axis=self.axes, keepdims=True,
                                                               dtype=self.reduce_dtype), out=here)
        return partial
