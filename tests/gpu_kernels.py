"""Fused groups covering every kernel family the CUDA code generator emits,
and a host runner for generated kernels (arrayx/_gpu/emulation), shared by the
NVRTC compile tests and the host semantics tests."""

from types import SimpleNamespace

import numpy as np

from arrayx import dtypes as dt
from arrayx._gpu import codegen
from arrayx._gpu.emulation import host_kernels
from arrayx.renderer.cstyle import EXPRESSIONS, supports
from arrayx.graph.fused import FusedGroup, Instruction
from arrayx.graph.primitives import BINARY, PRIMITIVES


def result_of(name, dtypes, shape, attrs=()):
    """(shape, dtype) of primitive `name` on operands of `dtypes`."""
    prim = PRIMITIVES[name]
    nodes = [SimpleNamespace(shape=shape, dtype=d) for d in dtypes]
    return prim.rule(prim, nodes, attrs)


def accepted(name):
    """The dtypes primitive `name` accepts that have a CUDA expression."""
    prim = PRIMITIVES[name]
    candidates = prim.accepts if prim.accepts is not None else dt.ALL
    return [d for d in candidates if supports(name, d)]


def elementwise_group(name, dtype, input_shapes, layouts=None):
    """One instruction `name` over inputs of `dtype` (a `where` gets a bool
    condition first), broadcast to their common shape."""
    dtypes = [dt.bool, dtype, dtype] if name == "where" else [dtype] * len(input_shapes)
    shape = np.broadcast_shapes(*input_shapes)
    layouts = layouts or ["C"] * len(input_shapes)
    _, out = result_of(name, dtypes, shape)
    inputs = tuple((s, d, lay) for s, d, lay in zip(input_shapes, dtypes, layouts))
    body = (Instruction(PRIMITIVES[name], (), tuple(range(len(inputs))), shape, out),)
    return FusedGroup(shape, inputs, body, (len(inputs),))


def arity(name):
    return 3 if name == "where" else (2 if name in BINARY else 1)


def every_elementwise(shape=(5, 3)):
    """One group per (primitive, dtype) with a CUDA expression; binary and
    ternary operands broadcast ((n, 1) against (n,))."""
    groups = []
    for name in EXPRESSIONS:
        for dtype in accepted(name):
            n = arity(name)
            shapes = [shape] if n == 1 else [(shape[0], 1), (shape[1],), shape][:n]
            groups.append(elementwise_group(name, dtype, shapes))
    return groups


def astype_group(source, target, shape=(7,)):
    inputs = ((shape, source, "C"),)
    body = (Instruction(PRIMITIVES["astype"], (target,), (0,), shape, target),)
    return FusedGroup(shape, inputs, body, (1,))


def chain(dtype, shape, layouts=("C", "C"), reduce=None, axes=(), keepdims=False, export=False):
    """x * y + x (x & y | x for bool), then exp for floating dtypes, optionally reduced over
    `axes`; with `export`, the product is an extra output."""
    inputs = ((shape, dtype, layouts[0]), (shape, dtype, layouts[1]))
    P = PRIMITIVES
    times, plus = ("logical_and", "logical_or") if dtype == dt.bool else ("multiply", "add")
    body = [Instruction(P[times], (), (0, 1), shape, dtype),
            Instruction(P[plus], (), (2, 0), shape, dtype)]
    if dtype.kind == "f":
        body.append(Instruction(P["exp"], (), (3,), shape, dtype))
    last = 1 + len(body)
    if reduce is not None:
        out_shape, out_dtype = result_of(reduce, [dtype], shape, (axes, keepdims))
        body.append(Instruction(P[reduce], (axes, keepdims), (last,), out_shape, out_dtype))
        last += 1
    outputs = ((2,) if export else ()) + (last,)
    return FusedGroup(shape, inputs, tuple(body), outputs)


def row_group(dtype, shape, row_axes=(1,), end="divide"):
    """Row softmax (max, subtract, exp, sum, divide) over the trailing
    `row_axes`; with end="sum" the group ends in the row sum (logsumexp's
    reductions), with end="logsumexp" in logsumexp's epilogue (log, add,
    once per row). The row max is an extra output."""
    P = PRIMITIVES
    attrs = (row_axes, True)
    reduced = tuple(1 if d in row_axes else n for d, n in enumerate(shape))
    body = [Instruction(P["max"], attrs, (0,), reduced, dtype),
            Instruction(P["subtract"], (), (0, 1), shape, dtype),
            Instruction(P["exp"], (), (2,), shape, dtype),
            Instruction(P["sum"], attrs, (3,), reduced, dtype)]
    if end == "divide":
        body.append(Instruction(P["divide"], (), (3, 4), shape, dtype))
    if end == "logsumexp":
        body += [Instruction(P["log"], (), (4,), reduced, dtype), Instruction(P["add"], (), (1, 5), reduced, dtype)]
    return FusedGroup(shape, ((shape, dtype, "C"),), tuple(body), (1, len(body)))


# ---- running generated kernels on the host ----------------------------------

def host_compiler():
    return host_kernels.compiler()


class HostModule:
    """Kernels compiled for the host (arrayx/_gpu/emulation), run on NumPy arrays."""

    def __init__(self, kernels):
        self.kernels = host_kernels.HostKernels(codegen.module_source(kernels)).load()

    def run(self, kernel, inputs, grid=(3, 2), block=8):
        """The group's outputs for NumPy `inputs`, computed by `kernel`."""
        group = _group_of[kernel.name]
        outputs = []
        for v in group.outputs:
            shape = group.shape if v < len(group.inputs) else group.body[v - len(group.inputs)].shape
            dtype = (group.inputs[v][1] if v < len(group.inputs) else group.body[v - len(group.inputs)].dtype)
            outputs.append(np.zeros(shape, dtype.dtype))
        strides = [tuple(s // a.itemsize for s in a.strides) for a in inputs]
        split = kernel.mode in ("reduce", "columns")
        gy = grid[1] if split else 1
        partial = np.zeros(max(1, kernel.outer * gy), kernel.accumulator.dtype) if split else None
        args = kernel.arguments([a.ctypes.data for a in inputs], strides, [o.ctypes.data for o in outputs],
                                partial.ctypes.data if split and gy > 1 else 0)
        self.kernels[kernel.name]((grid[0], gy), block, args)
        if split and gy > 1:
            combine = self.kernels[f"{kernel.name}_combine"]
            combine((grid[0], 1), block, [partial.ctypes.data, outputs[-1].ctypes.data, gy])
        return outputs


_group_of = {}


def generate(group):
    """codegen.generate, remembering the group (HostModule.run needs it)."""
    kernel = codegen.generate(group)
    _group_of[kernel.name] = group
    return kernel
