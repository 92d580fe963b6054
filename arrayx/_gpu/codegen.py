"""CUDA C++ for fused groups: one kernel per group, generated from its program.

A group (graph/fused.py) is a straight-line program over an iteration shape.
Three kernel shapes cover it:

- elementwise: a grid-stride loop over the flat index; each thread computes
  every instruction at its points and stores the group's outputs.
- reduce: the group ends in a reduction over any axes. A block reduces the
  points of one output (grid-stride over outputs), its threads striding over
  the reduced points; `gridDim.y` splits long reductions over several blocks,
  which write partial results that `<name>_combine` reduces (a second pass).
- columns: a reduction that keeps the innermost axis (a sum over rows): a
  thread reduces one output serially, so neighbouring threads read
  neighbouring points; `gridDim.y` splits it as for reduce.
- rows: the group holds row reductions (softmax, logsumexp). A block owns a
  row; each row reduction is one pass over the row (block reduction in
  shared memory), and the last pass computes and stores the outputs; the
  first thread then computes and stores the epilogue's values of the row.
  Passes recompute the elementwise values they need from the inputs, which
  stay in cache, rather than keep a row of intermediates.

Inputs are read through offsets: a contiguous input of the group's shape at
the flat index, a smaller contiguous input (broadcast) through static
strides, a strided or broadcast buffer through strides passed at launch (in
elements, one per dimension). Shapes are compiled in, so index arithmetic
divides by constants. Each instruction renders through the expression table
(the C expression table, renderer/cstyle.py). The GPU executor `runs` only what `renders` says has a CUDA
form, so the scheduler never fuses anything else; a group holding an
operation without one is a programming error, raised as Unsupported.
"""

import hashlib
from functools import partial
from math import prod

from .. import dtypes as dt
from ..graph.primitives import contiguous_strides
from ..renderer import cstyle
from ..renderer.cstyle import CTYPES, OPS_HEADER, cast, identity, render

OPS_SOURCE = OPS_HEADER.read_text()

# Threads per block; a power of two (block reductions halve it).
BLOCK = 256
# Grid-stride loops use 32-bit indices below this many points (the executor
# keeps a grid under 2**30 threads, so i + stride cannot overflow).
INT32_LIMIT = 1 << 30


class Unsupported(Exception):
    """The group holds an operation the GPU has no CUDA form for."""


class Kernel:
    """A generated kernel and what launching it needs.

    `strided` lists, per input, whether its strides are launch arguments
    (one per dimension of the input). For "reduce", `outer` is the number of
    outputs and `inner` the points reduced into each; for "rows", `outer`
    is the number of rows and `inner` their length; for "elementwise",
    `outer` is the number of points. `accumulator` is the dtype of a reduce kernel's
    partial results.
    """

    __slots__ = ("name", "source", "mode", "strided", "outer", "inner", "accumulator")

    def __init__(self, name, source, mode, strided, outer, inner, accumulator=None):
        self.name = name
        self.source = source
        self.mode = mode
        self.strided = strided
        self.outer = outer
        self.inner = inner
        self.accumulator = accumulator

    def arguments(self, inputs, strides, outputs, partial=0):
        """The kernel's arguments in order: input and output addresses, the
        partial-result buffer of a reduction (0 when unsplit), then the
        strides (in elements) of each input launched strided."""
        args = list(inputs) + list(outputs)
        if self.mode in ("reduce", "columns"):
            args.append(partial)
        for s, st in zip(self.strided, strides):
            if s:
                args.extend(st)
        return args


def accumulator(name, dtype):
    """The dtype reduction `name`, giving `dtype`, accumulates in on a GPU:
    its own (float16 in float)."""
    return dt.float32 if dtype == dt.float16 else dtype


def renders(op, in_dtype, dtype):
    """Whether an instruction of primitive `op` (elementwise, or a reduction)
    on operands of `in_dtype` (the last operand's), giving `dtype`, has a
    CUDA form."""
    return cstyle.renders(op, in_dtype, dtype, accumulator)


def check(group):
    """Raise Unsupported unless every instruction of `group` has a CUDA form."""
    why = cstyle.unrendered(group, accumulator)
    if why is not None:
        raise Unsupported(why)


class _Writer:
    """Renders one group's instructions; values are registers v<number>."""

    def __init__(self, group):
        self.group = group
        self.n_in = len(group.inputs)
        self.dtypes = [d for _, d, _ in group.inputs] + [i.dtype for i in group.body]
        self.strided = [layout != "C" for _, _, layout in group.inputs]

    def instruction(self, value):
        return self.group.body[value - self.n_in]

    def offset(self, j, coords):
        """The element offset of input j at the point whose coordinates (over
        the group's shape) are the C++ expressions `coords` (None for a
        coordinate the caller knows to be the flat index `i`)."""
        shape, _, _ = self.group.inputs[j]
        full = self.group.shape
        lead = len(full) - len(shape)
        if not self.strided[j] and shape == full and coords is None:
            return "i"
        static = contiguous_strides(shape)
        terms = []
        for d, n in enumerate(shape):
            if n == 1:
                continue
            stride = f"s{j}_{d}" if self.strided[j] else str(static[d])
            terms.append(f"{coords[lead + d]} * {stride}")
        return " + ".join(terms) or "0"

    def values(self, wanted, coords, defined=()):
        """Lines computing `wanted` (and what they need) at one point."""
        lines = []
        for v in self.group.dependencies(wanted, set(defined)):
            ctype = CTYPES[self.dtypes[v]]
            if v < self.n_in:
                load = ctype.load(f"in{v}[{self.offset(v, coords)}]")
                lines.append(f"{ctype.register} v{v} = {load};")
                continue
            instruction = self.instruction(v)
            operands = [f"v{a}" for a in instruction.args]
            expr = render(instruction.op.name, operands, self.dtypes[instruction.args[-1]], instruction.dtype)
            lines.append(f"{ctype.register} v{v} = {expr};")
        return lines

    def params(self, extra=()):
        group = self.group
        params = []
        for j, (_, dtype, _) in enumerate(group.inputs):
            params.append(f"const {CTYPES[dtype].storage}* __restrict__ in{j}")
        for k, v in enumerate(group.outputs):
            params.append(f"{CTYPES[self.dtypes[v]].storage}* __restrict__ out{k}")
        params.extend(extra)
        for j, (shape, _, _) in enumerate(group.inputs):
            if self.strided[j]:
                params.extend(f"long long s{j}_{d}" for d in range(len(shape)))
        return ", ".join(params)

    def store(self, k, index):
        v = self.group.outputs[k]
        return f"out{k}[{index}] = {CTYPES[self.dtypes[v]].store(f'v{v}')};"


def _unravel(index, shape, prefix, index_type):
    """Lines splitting flat `index` over `shape` into coordinates
    `<prefix><d>`."""
    if not shape:
        return []
    lines = [f"{index_type} {prefix}r = {index};"]
    for d in range(len(shape) - 1, 0, -1):
        lines.append(f"{index_type} {prefix}{d} = {prefix}r % {shape[d]}; {prefix}r /= {shape[d]};")
    lines.append(f"{index_type} {prefix}0 = {prefix}r;")
    return lines


def _indent(lines, depth):
    return "\n".join("    " * depth + line for line in lines)


def _block_reduce(acc, combine, ctype):
    """Lines reducing `acc` over the block through shared memory; thread 0
    ends with the block's result in `acc`."""
    return [
        "{",
        f"__shared__ {ctype} ax_shared[{BLOCK}];",
        f"ax_shared[threadIdx.x] = {acc};",
        "__syncthreads();",
        "for (unsigned ax_s = blockDim.x / 2; ax_s > 0; ax_s >>= 1) {",
        f"    if (threadIdx.x < ax_s) ax_shared[threadIdx.x] = {combine('ax_shared[threadIdx.x]', 'ax_shared[threadIdx.x + ax_s]')};",
        "    __syncthreads();",
        "}",
        f"{acc} = ax_shared[0];",
        "__syncthreads();",
        "}",
    ]


def _name(group):
    return "ax_" + hashlib.sha1(repr(group._key).encode()).hexdigest()[:16]


def generate(group):
    """The Kernel of `group`; raises Unsupported when it holds an operation
    without a CUDA form."""
    check(group)
    if group.row_axes:
        return _rows(group)
    if group.reduction is not None:
        return _reduce(group)
    return _elementwise(group)


def _elementwise(group):
    w = _Writer(group)
    name = _name(group)
    n = group.size
    idx = "int" if n < INT32_LIMIT else "long long"
    simple = all(not s and shape == group.shape for (shape, _, _), s in zip(group.inputs, w.strided))
    coords = None if simple else [f"c{d}" for d in range(len(group.shape))]
    body = [] if simple else _unravel("i", group.shape, "c", idx)
    body += w.values(group.outputs, coords)
    body += [w.store(k, "i") for k in range(len(group.outputs))]
    source = f"""extern "C" __global__ void {name}({w.params()})
{{
    for ({idx} i = blockIdx.x * ({idx})blockDim.x + threadIdx.x; i < {n}; i += ({idx})gridDim.x * blockDim.x) {{
{_indent(body, 2)}
    }}
}}
"""
    return Kernel(name, source, "elementwise", tuple(w.strided), n, 1)


def _reduce(group):
    w = _Writer(group)
    name = _name(group)
    root = group.reduction
    axes = set(root.attrs[0])
    rname = root.op.name
    shape = group.shape
    kept = [d for d in range(len(shape)) if d not in axes]
    reduced = [d for d in range(len(shape)) if d in axes]
    outer = prod(shape[d] for d in kept)
    inner = prod(shape[d] for d in reduced)
    acc_dtype = accumulator(root.op.name, root.dtype)
    acc = CTYPES[acc_dtype]
    combine = partial(cstyle.combine, rname, acc_dtype)
    source_value = root.args[0]
    arg = f"v{source_value}"
    if rname in ("any", "all"):
        arg = cast(arg, w.dtypes[source_value], dt.bool)

    coords = [None] * len(shape)
    for d in kept:
        coords[d] = f"k{kept.index(d)}"
    for d in reduced:
        coords[d] = f"q{reduced.index(d)}"
    full_strides = contiguous_strides(shape)
    flat = " + ".join(f"{coords[d]} * {full_strides[d]}" for d in range(len(shape)) if shape[d] != 1) or "0"
    exported = range(len(group.outputs) - 1)
    loop = _unravel("q", [shape[d] for d in reduced], "q", "long long")
    loop += w.values([source_value] + list(group.outputs[:-1]), coords)
    loop += [w.store(k, flat) for k in exported]
    loop.append(f"acc = {combine('acc', arg)};")
    result = CTYPES[root.dtype].store(
        "ax_round_half(acc)" if root.dtype == dt.float16 else "acc")
    n_out = len(group.outputs) - 1
    # The innermost axis kept: neighbouring threads take neighbouring outputs
    # and each loops over its reduced points, so loads coalesce.
    columns = bool(kept) and kept[-1] == len(shape) - 1
    if columns:
        main = f"""extern "C" __global__ void {name}({w.params([f"{acc.register}* __restrict__ partial"])})
{{
    long long chunk = ({inner} + gridDim.y - 1) / gridDim.y;
    long long lo = blockIdx.y * chunk, hi = lo + chunk < {inner} ? lo + chunk : {inner};
    for (long long m = blockIdx.x * (long long)blockDim.x + threadIdx.x; m < {outer}; m += (long long)gridDim.x * blockDim.x) {{
{_indent(_unravel("m", [shape[d] for d in kept], "k", "long long"), 2)}
        {acc.register} acc = {identity(rname, acc_dtype)};
        for (long long q = lo; q < hi; q++) {{
{_indent(loop, 3)}
        }}
        if (gridDim.y == 1) out{n_out}[m] = {result};
        else partial[m * gridDim.y + blockIdx.y] = acc;
    }}
}}
"""
    else:
        main = f"""extern "C" __global__ void {name}({w.params([f"{acc.register}* __restrict__ partial"])})
{{
    for (long long m = blockIdx.x; m < {outer}; m += gridDim.x) {{
{_indent(_unravel("m", [shape[d] for d in kept], "k", "long long"), 2)}
        long long chunk = ({inner} + gridDim.y - 1) / gridDim.y;
        long long lo = blockIdx.y * chunk, hi = lo + chunk < {inner} ? lo + chunk : {inner};
        {acc.register} acc = {identity(rname, acc_dtype)};
        for (long long q = lo + threadIdx.x; q < hi; q += blockDim.x) {{
{_indent(loop, 3)}
        }}
{_indent(_block_reduce("acc", combine, acc.register), 2)}
        if (threadIdx.x == 0) {{
            if (gridDim.y == 1) out{n_out}[m] = {result};
            else partial[m * gridDim.y + blockIdx.y] = acc;
        }}
    }}
}}
"""
    source = main + f"""
extern "C" __global__ void {name}_combine(const {acc.register}* __restrict__ partial, {CTYPES[root.dtype].storage}* __restrict__ out, int splits)
{{
    for (long long m = blockIdx.x; m < {outer}; m += gridDim.x) {{
        {acc.register} acc = {identity(rname, acc_dtype)};
        for (int q = threadIdx.x; q < splits; q += blockDim.x) acc = {combine('acc', 'partial[m * splits + q]')};
{_indent(_block_reduce("acc", combine, acc.register), 2)}
        if (threadIdx.x == 0) out[m] = {result};
    }}
}}
"""
    return Kernel(name, source, "columns" if columns else "reduce", tuple(w.strided), outer, inner, acc_dtype)


def _rows(group):
    w = _Writer(group)
    name = _name(group)
    shape = group.shape
    row_axes = group.row_axes
    lead = len(shape) - len(row_axes)
    rows = prod(shape[:lead])
    length = prod(shape[lead:])
    coords = [f"r{d}" for d in range(lead)] + [f"j{d}" for d in range(len(shape) - lead)]
    n_in = w.n_in
    root = group.body[-1]
    final_reduce = root.op.kind == "reduce"
    reductions = [n_in + k for k, i in enumerate(group.body) if i.op.kind == "reduce"]
    epilogue = group.epilogue
    # Outputs over the whole rows, stored by the last pass.
    elementwise_out = [k for k, v in enumerate(group.outputs) if v not in reductions and v not in epilogue]
    passes = reductions if final_reduce or not elementwise_out else reductions + [None]
    exported = set(group.outputs)

    body = _unravel("row", shape[:lead], "r", "long long")
    defined = []
    for value in passes:
        unravel = _unravel("j", shape[lead:], "j", "long long")
        flat = f"row * {length} + j"
        # The last pass stores every output over the whole rows (and may reduce).
        stored = elementwise_out if value is None or value == group.outputs[-1] else []
        wanted = [group.outputs[k] for k in stored]
        loop = list(unravel)
        if value is not None:
            instruction = w.instruction(value)
            rname = instruction.op.name
            acc_dtype = accumulator(instruction.op.name, instruction.dtype)
            acc = CTYPES[acc_dtype]
            arg_value = instruction.args[0]
            arg = f"v{arg_value}"
            if rname in ("any", "all"):
                arg = cast(arg, w.dtypes[arg_value], dt.bool)
            loop += w.values([arg_value] + wanted, coords, defined)
            loop += [w.store(k, flat) for k in stored]
            combine = partial(cstyle.combine, rname, acc_dtype)
            loop.append(f"acc{value} = {combine(f'acc{value}', arg)};")
            body.append(f"{acc.register} acc{value} = {identity(rname, acc_dtype)};")
            body.append(f"for (long long j = threadIdx.x; j < {length}; j += blockDim.x) {{")
            body += ["    " + line for line in loop]
            body.append("}")
            body += _block_reduce(f"acc{value}", combine, acc.register)
            ctype = CTYPES[instruction.dtype]
            result = f"ax_round_half(acc{value})" if instruction.dtype == dt.float16 else f"acc{value}"
            body.append(f"{ctype.register} v{value} = {result};")
            defined.append(value)
            if value in exported:
                k = group.outputs.index(value)
                body.append(f"if (threadIdx.x == 0) {w.store(k, 'row')}")
        else:
            loop += w.values(wanted, coords, defined)
            loop += [w.store(k, flat) for k in stored]
            body.append(f"for (long long j = threadIdx.x; j < {length}; j += blockDim.x) {{")
            body += ["    " + line for line in loop]
            body.append("}")
    kept = [k for k, v in enumerate(group.outputs) if v in epilogue]
    if kept:
        # The epilogue reads inputs of the kept shape: a row's coordinates, 0 along the row axes.
        point = w.values([group.outputs[k] for k in kept], coords[:lead] + ["0"] * len(row_axes), defined)
        body += ["if (threadIdx.x == 0) {"] + ["    " + line for line in point + [w.store(k, "row") for k in kept]]
        body.append("}")
    source = f"""extern "C" __global__ void {name}({w.params()})
{{
    for (long long row = blockIdx.x; row < {rows}; row += gridDim.x) {{
{_indent(body, 2)}
        __syncthreads();
    }}
}}
"""
    return Kernel(name, source, "rows", tuple(w.strided), rows, length)


def module_source(kernels):
    """The translation unit of `kernels`: ops.h, then each kernel."""
    return OPS_SOURCE + "\n" + "\n".join(k.source for k in kernels)
