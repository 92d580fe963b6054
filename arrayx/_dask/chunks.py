"""What the tasks of a dask graph run on a chunk: a fused group, through the
CPU executor's fused program, and the combining step of a tree reduction.

Tasks are module-level functions of picklable arguments (a FusedGroup
pickles by value, its primitives and dtypes by name), so they serialize to
worker processes; a worker builds a group's program once per chunk shape.
"""

from functools import lru_cache

import numpy as np

from .._cpu.errors import ignoring_errors
from .._cpu.fused import FusedKernel
from .._cpu.kernels import IMPLS, REDUCERS, reduce_dtype
from ..graph.fused import FusedGroup, Instruction
from ..graph.primitives import REDUCE, broadcast_shapes, reduced_shape

# Programs a worker keeps: a group and the shapes of its chunks (a few per
# array: the regular chunks and those at its ends).
PROGRAMS_KEPT = 256


@lru_cache(maxsize=PROGRAMS_KEPT)
def chunk_program(group, in_shapes):
    """The CPU's program for `group` over one chunk whose inputs have
    `in_shapes`: its iteration shape is theirs broadcast, and a final
    reduction keeps its dimensions (a partial result that the tree
    reduction combines with the other chunks'), and the epilogue is over
    the row reductions' kept shape of the chunk. It runs on the task's own
    thread: dask already runs chunks in parallel, one per worker thread,
    and the CPU's thread pool would put every task's blocks on the same few
    threads as well."""
    shape = broadcast_shapes("fused", (), *in_shapes)   # NumPy's stops at 32 dimensions; arrays go to 64
    n_in = len(group.inputs)
    epilogue = group.epilogue
    kept = reduced_shape(shape, group.row_axes, True)
    body = []
    for v, instruction in enumerate(group.body, n_in):
        attrs, result_shape = instruction.attrs, kept if v in epilogue else shape
        if instruction.op.kind == REDUCE:
            axes = instruction.attrs[0]
            attrs, result_shape = (axes, True), reduced_shape(shape, axes, True)
        body.append(Instruction(instruction.op, attrs, instruction.args, result_shape, instruction.dtype))
    # A chunk may be any view of its array: its layout is unknown ("S").
    inputs = tuple((s, dtype, "S") for s, (_, dtype, _) in zip(in_shapes, group.inputs))
    return FusedKernel(FusedGroup(shape, inputs, tuple(body), group.outputs), threads=1)


@ignoring_errors
def run_group(group, *blocks):
    """`group` over one chunk of each input: its output chunk, or a tuple of
    them when the group has several outputs."""
    outputs = chunk_program(group, tuple(b.shape for b in blocks))(*blocks)
    # A 0-d result of NumPy is a scalar; a chunk is an array.
    if len(group.outputs) == 1:
        return np.asarray(outputs)
    return tuple(np.asarray(o) for o in outputs)


def keep_partial(partial, axis, keepdims):
    """The chunk step of a tree reduction over partial results: they are
    already reduced within their chunk."""
    return partial


def combine(name, result_dtype, partials, axis, keepdims):
    """Partial results of reduction `name` (giving `result_dtype`) combined
    along `axis` by its monoid's ufunc: the combine and aggregate steps of a
    tree reduction. (dask passes `dtype=` to a function with a parameter of
    that name.)"""
    with np.errstate(all="ignore"):   # dask calls it with keywords, which ignoring_errors does not pass
        return REDUCERS[name].reduce(partials, axis=axis, dtype=reduce_dtype(name, result_dtype), keepdims=keepdims)


@ignoring_errors
def run_primitive(op, attrs, dtype, *blocks):
    """The CPU's kernel of primitive `op` (with `attrs`, giving `dtype`) on
    blocks that hold what it needs whole: a sort's axis, a stack of
    matrices. (Those kernels read no result shape.)"""
    return IMPLS[op.name](op, attrs, None, dtype)(*blocks)
