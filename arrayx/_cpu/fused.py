"""Fused groups on the CPU: one pass over cache-sized blocks, on every core.

A group whose arrays fit in cache runs as whole-array NumPy calls, each
writing into a temporary of the group that dies at that instruction (NumPy's
temporary elision, planned once). A larger group runs block by block: every
instruction writes with `out=` into a few block-sized temporaries that stay in
cache, exported values go straight into their output arrays, and a final
reduction reduces each block and combines the partial results. The blocks
are cut into contiguous pieces, a few per core, that the calling thread and a
thread pool's workers claim in order (workers.py); NumPy releases the GIL inside ufunc
loops, so the threads compute in parallel.

Elementwise results are bit-identical to unfused execution: the same NumPy
loops on the same values, and blocks start at multiples of GRAIN points, so
an element sits where it does in a whole-array call relative to NumPy's SIMD
vectors. One exception remains in arrays of two or more dimensions, where
a block boundary can still fall inside a vector (at the end of a row, or
between rows whose length is no multiple of GRAIN): an element there runs in
NumPy's remainder loop, and for two NaN operands `add`, `multiply`, `fmax`
and `fmin` may return the other operand's NaN (its sign or payload) than a
whole-array call does, as NumPy itself does for arrays of other lengths.
A reduction sums in another order than one `ufunc.reduce` over the whole
array does, so sums may differ by rounding.
"""

import time
from itertools import accumulate
from math import gcd, prod

import numpy as np

from ..executors.python_code import generated
from ..graph.primitives import ARG_REDUCE_OPS, reduced_shape
from . import memory, native, workers
from .errors import ignoring_errors
from .kernels import IMPLS, REDUCERS, folded_rows, out_ufunc, reduce, reduce_dtype
from .native import codegen
from .native.runner import NativeGroup

# Bytes per block of the widest dtype of a group. Measured on this 2-core EPYC
# (1 MiB of L2 a core, a large shared L3) with benchmarks/run.py's chains at
# 1e6 and 1e7 and its row softmax: 1 MiB blocks beat 256 and 512 KiB ones by
# 10-40 % (each NumPy call then has enough work to hide the Python issuing
# it, and the block temporaries still stay in cache); 2 MiB blocks ran two
# of the four chains 25-35 % slower at 1e7.
BLOCK_BYTES = 1 << 20
# Groups whose widest values take fewer bytes run as whole-array calls: their
# temporaries stay in the 2 MiB of L2, so blocks only add Python per block
# (measured with benchmarks/run.py's chains on this 2-core EPYC: blocks lose
# 10-40 % at 0.5-2 MB and win 30-70 % from 4 MB, in float32 and float64).
BLOCKED_MIN_BYTES = 3 << 20
# Blocks per thread below which a group runs on fewer threads: waking a
# worker to claim pieces costs tens of microseconds, a 1 MiB block of a chain
# hundreds (a second thread already pays at two blocks: 4 MB chains ran
# 15-45 % faster on two threads than on one).
BLOCKS_PER_THREAD = 1
# Pieces per thread that a group's blocks are cut into. Threads claim the
# next piece when they are free, so a worker the OS starts late (on a loaded
# 2-core machine, milliseconds late) leaves its share to the threads that
# run instead of making them wait: under load an even split (one run per
# thread) ran the medium rows of benchmarks/clients.py up to 2x slower than
# one thread. More pieces balance finer but cut more blocks in two.
PIECES_PER_THREAD = 4
# Blocks start and end at multiples of this many points where the shape
# allows. NumPy's loops run the remainder shorter than a SIMD vector (64 bytes
# at most) apart, and there `add` or `multiply` of two NaNs may keep the other
# operand's NaN than in the vector loop: a block boundary inside a vector
# would change the NaN an element gets from what a whole-array call gives.
GRAIN = 64


def block_axis(shape, block):
    """(k, inner, step): blocks of at most `block` points span the axes after
    k whole (`inner` points per index of axis k) and cut axis k, at multiples
    of `step` indices where they can (GRAIN points, or a multiple of it)."""
    k = len(shape) - 1
    inner = 1
    while k > 0 and inner * shape[k] <= block:
        inner *= shape[k]
        k -= 1
    return k, inner, GRAIN // gcd(inner, GRAIN)


def blocks(shape, block):
    """Index tuples (one slice per axis) that tile `shape` in C order, each
    covering at most `block` points, and a multiple of GRAIN points where
    `block` allows."""
    if 0 in shape:
        return []
    k, inner, step = block_axis(shape, block)
    chunk = max(1, block // inner)
    if chunk > step:
        chunk -= chunk % step
    full = tuple(slice(None) for _ in shape[k + 1:])
    out = []
    for prefix in np.ndindex(*shape[:k]):
        lead = tuple(slice(i, i + 1) for i in prefix)
        for start in range(0, shape[k], chunk):
            out.append(lead + (slice(start, min(start + chunk, shape[k])),) + full)
    return out


def reused_arguments(operations):
    """For each operation, the position of the argument whose array it may
    overwrite with its result (None: allocate), as NumPy elides temporaries.

    `operations` holds (writes, fresh, args, value, shape, dtype, dying) in
    program order: whether the kernel can write its result into an existing
    array (a ufunc with `out=`), whether its result is a new array of its
    own, its argument values, its result's value, shape and dtype, and the
    arguments whose last use it is that nothing else sees. An argument is
    overwritten when it dies there and holds a new array an earlier
    operation made (never an input, which callers and caches share) of the
    result's shape and dtype. 0-d results are NumPy scalars: never reused.
    """
    fresh_arrays = {}   # value -> (shape, dtype) of a new array an operation made
    reuse = []
    for writes, fresh, args, value, shape, dtype, dying in operations:
        into = None
        if shape != ():
            if writes:
                for position, a in enumerate(args):
                    if a in dying and fresh_arrays.get(a) == (shape, dtype):
                        into = position
                        break
            if fresh:
                fresh_arrays[value] = (shape, dtype)
        reuse.append(into)
    return reuse


def writes_into_input(group):
    """Whether a FusedKernel of `group` can write its output into an input
    (`into`) and makes its output a new array otherwise: one output, the
    result of an elementwise ufunc (not a reduction, not a kernel that may
    return its operand, such as stop_gradient's)."""
    root = group.body[-1]
    return (len(group.outputs) == 1 and group.reduction is None
            and out_ufunc(IMPLS[root.op.name](root.op, root.attrs, root.shape, root.dtype)) is not None)


# FusedKernels by (group, place of the output): a plan rebound to other
# extents, a plan's variants and the plans of other graphs with the same
# groups run the kernels built for the first, since building them is most of
# compiling a small plan. When full, all go.
_kernels = {}
_KERNELS = 1024


def ignores_errors_itself(function):
    """Whether `function` is a FusedKernel's native-first function, which
    ignores NumPy's floating-point errors itself where it runs NumPy (a
    native kernel raises none), so that a program around it need not."""
    return isinstance(getattr(function, "owner", None), FusedKernel)


def owner_of(function):
    """The FusedKernel whose `function` this is, or None."""
    owner = getattr(function, "__self__", None) or getattr(function, "owner", None)
    return owner if isinstance(owner, FusedKernel) else None


def path_of(function):
    """The path ("native" or "numpy") the last call of a FusedKernel's
    `function` took; None for another kernel."""
    owner = owner_of(function)
    return None if owner is None else owner.path


def fused_kernel(group, into=None):
    """The FusedKernel of `group` with its output written into input `into`
    (None: a new array), built once per group and place."""
    key = (group, into)
    kernel = _kernels.get(key)
    if kernel is None:
        if len(_kernels) >= _KERNELS:
            _kernels.clear()
        kernel = _kernels[key] = FusedKernel(group, into)
    return kernel


class FusedKernel:
    """A callable running one FusedGroup over NumPy buffers, its blocks on
    at most `threads` threads (None: workers.THREADS, every core).

    With `into`, the group's one output, an elementwise ufunc's result of
    the group's shape, is written into the array of input `into` (which the
    caller guarantees dies at this step and nobody else sees): each point
    of it is read only to compute the same point of the output, before the
    output's instruction writes it.
    """

    def __init__(self, group, into=None, threads=None):
        self.group = group
        self.into = into
        self.threads = threads
        n_in = len(group.inputs)
        self.n_in = n_in
        body = group.body
        self.reduction = group.reduction
        elementwise = body[:-1] if self.reduction is not None else body
        self.fns = [IMPLS[i.op.name](i.op, i.attrs, i.shape, i.dtype) for i in body]
        self.ufuncs = [out_ufunc(fn) for fn in self.fns]
        self.exported = set(group.outputs)
        self.epilogue = group.epilogue
        last = {}
        for k, instruction in enumerate(body):
            for a in instruction.args:
                last[a] = k
        self.last = last
        self.reuse = self._whole_array_reuse(elementwise)
        self.registers, self.register_dtypes = self._block_registers(elementwise)
        self.itemsize = max(i.dtype.itemsize for i in body)
        self.broadcast = self._broadcast_shapes()
        self.tiles = None
        self.seconds = None   # wall time of the last blocked call
        # An arg reduction's method (argmax, argmin), which runs only in blocks that hold its axis whole.
        self.positions = None
        if self.reduction is not None:
            axes, keepdims = self.reduction.attrs
            self.axes = axes
            self.keepdims = keepdims
            if self.reduction.op.name in ARG_REDUCE_OPS:
                self.positions = getattr(np.ndarray, self.reduction.op.name)
            self.reducer = REDUCERS.get(self.reduction.op.name)
            self.reduce_dtype = reduce_dtype(self.reduction.op.name, self.reduction.dtype)
            self.acc_shape = reduced_shape(group.shape, axes, True)
            self.source = self.reduction.args[0]
        self.whole_arrays = self._whole_array_function()
        # The path is chosen once: a cached plan on small arrays then calls
        # the generated whole-array function and nothing else (and the block
        # function is generated only for groups that run in blocks).
        if group.size * self.itemsize < BLOCKED_MIN_BYTES or self._tiling() is None:
            self.block = None
            self.numpy = self.whole_arrays
        else:
            self.block = self._block_function(elementwise)
            self.numpy = self._blocked_outputs
        # The path the last call took: "native" or "numpy".
        self.path = "numpy"
        self.native = NativeGroup(group, into, threads) if codegen.expressible(group) else None
        self.function = self.numpy if self.native is None else self._native_first()

    # planning (once per group)

    def _broadcast_shapes(self):
        """For each input whose shape is neither the group's nor 0-d, the
        shape a block function reads it as: the group's, but along the row
        axes its own extent. An input of the row reductions' kept shape then
        gives a block one point a row, which the epilogue computes with
        (the other instructions broadcast it as NumPy does)."""
        shape = self.group.shape
        rows = self.group.row_axes
        targets = {}
        for i, (own, _, _) in enumerate(self.group.inputs):
            if own not in ((), shape):
                aligned = (1,) * (len(shape) - len(own)) + own
                targets[i] = tuple(a if d in rows else n for d, (a, n) in enumerate(zip(aligned, shape)))
        return targets

    def _whole_array_reuse(self, elementwise):
        """Per instruction, the value whose array it may overwrite (see
        `reused_arguments`; a value the group exports is never written)."""
        last = self.last
        reuse = reused_arguments([(self.ufuncs[k] is not None, self.ufuncs[k] is not None, i.args, self.n_in + k,
                                   i.shape, i.dtype, {a for a in i.args if last[a] == k and a not in self.exported})
                                  for k, i in enumerate(elementwise)])
        return [None if into is None else i.args[into] for i, into in zip(elementwise, reuse)]

    def _whole_array_function(self):
        """The whole-array path as one generated Python function, a line per
        instruction (`v5 = f1(v3, v4, out=v3)`): a small group then costs its
        NumPy calls and hardly any Python besides."""
        n_in = self.n_in
        kernels = {}
        lines = [f"def run({', '.join(f'v{i}' for i in range(n_in))}):"]
        dtypes = [dtype for _, dtype, _ in self.group.inputs] + [i.dtype for i in self.group.body]
        for k, instruction in enumerate(self.group.body):
            args = ", ".join(f"v{a}" for a in instruction.args)
            into = self.reuse[k] if k < len(self.reuse) else None
            if self.into is not None and k == len(self.group.body) - 1:
                into = self.into
            if (instruction.op.name == "where" and self.group.shape == ()
                    and dtypes[instruction.args[1]] is dtypes[instruction.args[2]] is instruction.dtype):
                # Of 0-d values np.where costs 1.5 us; picking the value (a NumPy scalar) 0.1, same value and dtype.
                c, x1, x2 = instruction.args
                lines.append(f"    v{n_in + k} = (v{x1} if v{c} else v{x2})[()]")
            elif into is not None:
                kernels[f"f{k}"] = self.ufuncs[k]
                lines.append(f"    v{n_in + k} = f{k}({args}, out=v{into})")
            elif instruction is self.reduction and self.positions is None:
                # The reducer's own call with positional arguments, without the kernel's Python
                # wrapper, unless it folds narrow rows.
                kernels.update({"axes": self.axes, "dtype": self.reduce_dtype, "keepdims": self.keepdims})
                if folded_rows(self.group.shape, self.axes) == 1:
                    kernels[f"f{k}"] = self.reducer.reduce
                    lines.append(f"    v{n_in + k} = f{k}({args}, axes, dtype, None, keepdims)")
                else:
                    kernels.update({f"f{k}": reduce, "reducer": self.reducer})
                    lines.append(f"    v{n_in + k} = f{k}(reducer, {args}, axes, dtype, None, keepdims)")
            else:
                kernels[f"f{k}"] = self.fns[k]
                lines.append(f"    v{n_in + k} = f{k}({args})")
        lines.append(f"    return {', '.join(f'v{o}' for o in self.group.outputs)}")
        return generated(lines, kernels, "run")

    def _block_registers(self, elementwise):
        """Per instruction, where its value goes in a block: ("t", r), block
        temporary r; ("w", V), the output block of a value V the group exports
        at a later instruction, lent while V's block holds nothing yet (a block
        then keeps one array less in cache: the axpy chain at 1e6 ran 12 %
        faster with its output block as scratch); None for an exported value
        (written into its output), a non-ufunc that allocates or a value of
        the epilogue (a point a row: it allocates). Values that died free
        their place for the next value."""
        n_in = self.n_in
        last = self.last
        # (An output written into an input is never lent: its block holds that
        # input's points; nor an epilogue's, which holds a point a row.)
        written_at = {n_in + k: k for k in range(len(elementwise))
                      if n_in + k in self.exported and n_in + k not in self.epilogue
                      and (self.into is None or k < len(elementwise) - 1)}
        lent = set()     # output blocks that hold a live value
        free = {}        # dtype -> free block temporaries
        dtypes = []
        places = []      # per instruction: ("t", r), ("w", V) or None
        for k, instruction in enumerate(elementwise):
            value = n_in + k
            for a in set(instruction.args):   # a ufunc may write over its own operands
                if last[a] == k and a >= n_in and places[a - n_in] is not None:
                    kind, r = places[a - n_in]
                    if kind == "t":
                        free.setdefault(dtypes[r], []).append(r)
                    else:
                        lent.discard(r)
            place = None
            if self.ufuncs[k] is not None and value not in self.exported and value not in self.epilogue:
                dies = last.get(value, k)
                lender = next((v for v, at in written_at.items() if k < at and dies <= at and v not in lent
                               and elementwise[at].dtype == instruction.dtype), None)
                if lender is not None:
                    place = ("w", lender)
                    lent.add(lender)
                elif free.get(instruction.dtype):
                    place = ("t", free[instruction.dtype].pop())
                else:
                    place = ("t", len(dtypes))
                    dtypes.append(instruction.dtype)
            places.append(place)
        return places, dtypes

    def _block_function(self, elementwise):
        """The work of one block as a generated Python function, a line per
        instruction, returning the value a final reduction reduces:

            def block(index, x, t, o):
                v0 = x[0][index]                    # an input's block (0-d: x[k])
                v2 = f0(v0, v1, out=t[0])           # into a block temporary
                w4 = o[4][index]                    # the block of an exported value
                v3 = f1(v2, out=w4)                 # ... lent to an earlier value
                v4 = f2(v3, out=w4)                 # an exported ufunc value
                v5 = f3(v4)                         # a kernel that allocates
                v6 = o[6][index]; v6[...] = f4(v5)  # ... and is exported
        """
        n_in = self.n_in
        kernels = {}
        lines = ["def block(index, x, t, o):"]
        for i, (shape, _, _) in enumerate(self.group.inputs):
            lines.append(f"    v{i} = x[{i}][index]" if shape != () else f"    v{i} = x[{i}]")
        bound = set()   # output blocks named w<V> so far

        def output_block(v):
            if v not in bound:
                bound.add(v)
                lines.append(f"    w{v} = o[{v}][index]")
            return f"w{v}"
        for k, instruction in enumerate(elementwise):
            value = n_in + k
            args = ", ".join(f"v{a}" for a in instruction.args)
            ufunc = self.ufuncs[k]
            kernels[f"f{k}"] = ufunc if ufunc is not None else self.fns[k]
            place = self.registers[k]
            if value in self.exported:
                if ufunc is not None:
                    lines.append(f"    v{value} = f{k}({args}, out={output_block(value)})")
                else:
                    block = output_block(value)
                    lines.append(f"    v{value} = {block}; v{value}[...] = f{k}({args})")
            elif place is not None:
                kind, r = place
                target = f"t[{r}]" if kind == "t" else output_block(r)
                lines.append(f"    v{value} = f{k}({args}, out={target})")
            else:
                lines.append(f"    v{value} = f{k}({args})")
        lines.append(f"    return v{self.source}" if self.reduction is not None else "    return None")
        return generated(lines, kernels, "block")

    # running

    def _native_first(self):
        """The function either(*inputs) doing what `_either` does, in one
        frame where the mode allows the native kernel, the inputs' layout is
        known and its launch set (the kernel loaded, the points too few for
        threads), and through `_either` otherwise: a call on small arrays
        costs mostly the Python around its kernel."""
        either = generated(["def either(*inputs):",
                            "    if native.mode != 'numpy':",
                            f"        layout = layouts.get({self.native.key_text})",
                            "        if layout is not None:",
                            "            launch = layout.launch",
                            "            if launch is not None:",
                            "                kernel.path = 'native'",
                            "                return launch(inputs)",
                            "    return kernel._either(*inputs)"],
                           {"native": native, "layouts": self.native.layouts, "kernel": self, **self.native.key_names},
                           "either")
        either.owner = self   # whose path a profile reads (path_of)
        return either

    @ignoring_errors
    def _either(self, *inputs):
        """The group through its native kernel where the mode (native.mode)
        allows and the kernel is ready, else on NumPy."""
        mode = native.mode
        if mode != "numpy":
            outputs = self.native(inputs, mode == "native")
            if outputs is not None:
                self.path = "native"
                return outputs
        self.path = "numpy"
        return self.numpy(*inputs)

    def shortcut(self, inputs):
        """A call of the group on inputs laid out as `inputs` as
        launcher.c's shortcut runs it, with no Python: ((kernel, meta, outer,
        reduced, release, keep), outputs, guards), the guards holding while
        the path mode is not "numpy"; None where the group does not run so
        (see NativeGroup.shortcut)."""
        if self.native is None or native.mode == "numpy":
            return None
        found = self.native.shortcut(inputs)
        if found is None:
            return None
        self.path = "native"   # every call the shortcut runs takes it
        return (*found, ((vars(native), "mode", "numpy", False),))

    def __call__(self, *inputs):
        """The group's outputs (a tuple when it has several). The caller
        sets NumPy's error state (the executor ignores floating-point
        warnings, as the standard's special cases are the specification)."""
        return self.function(*inputs)

    def _blocked_outputs(self, *inputs):
        values = self._blocked(inputs)
        outputs = tuple(values[o] for o in self.group.outputs)
        return outputs[0] if len(outputs) == 1 else outputs

    def _blocked(self, inputs):
        group = self.group
        shape = group.shape
        n_in = self.n_in
        # Inputs as arrays of the iteration shape (broadcasts are views); 0-d
        # inputs stay scalars, which every block reads whole.
        if self.broadcast:
            inputs = list(inputs)
            for i, target in self.broadcast.items():
                inputs[i] = np.broadcast_to(inputs[i], target)
        outputs = {}
        if self.into is not None:
            outputs[group.outputs[-1]] = inputs[self.into]
        else:
            for o in group.outputs:
                if o >= n_in and (self.reduction is None or o != group.outputs[-1]):
                    instruction = group.body[o - n_in]
                    outputs[o] = memory.empty(instruction.shape, instruction.dtype.dtype)
        points, pieces, direct = self._tiling()
        result = None
        if direct:
            result = np.empty(self.acc_shape, self.reduction.dtype.dtype)

        def compute(piece, temps):
            return self._run(inputs, outputs, piece, result, temps)
        start = time.perf_counter()
        partials = workers.claimed(pieces, compute, lambda: [np.empty(points, d.dtype) for d in self.register_dtypes],
                                   (self.threads or workers.THREADS) if workers.worth_waking(self.seconds) else 1)
        self.seconds = time.perf_counter() - start
        values = [None] * (n_in + len(group.body))
        for o, array in outputs.items():
            values[o] = array
        if self.reduction is not None:
            if result is None:
                # In piece order, whichever thread computed each: the same sum at every call.
                result = partials[0]
                for partial in partials[1:]:
                    self.reducer(result, partial, out=result)
            values[-1] = result if self.keepdims else result.reshape(self.reduction.shape)
        return values

    def _tiling(self):
        """(points per block, the pieces: runs of (index, block shape,
        reduction target) that threads claim, whether each block's reduction
        is final), for the current BLOCK_BYTES and thread count; None when
        blocks that size cannot hold whole rows of the row reductions."""
        points = max(1, BLOCK_BYTES // self.itemsize)
        most = self.threads or workers.THREADS
        if self.tiles is None or self.tiles[:2] != (points, most):
            shape = self.group.shape
            tiles = [self._tile(index) for index in blocks(shape, points)]
            # Every block spans the reduced axes whole: its reduction is final
            # and goes straight into the result.
            direct = self.reduction is not None and all(tiles[0][1][j] == shape[j] for j in self.axes)
            rows_whole = all(tiles[0][1][j] == shape[j] for j in self.group.row_axes)
            threads = min(most, len(tiles) // BLOCKS_PER_THREAD) or 1
            # Pieces of a block at least: a block is what amortizes the Python issuing it.
            pieces = min(threads * PIECES_PER_THREAD, len(tiles)) if threads > 1 else 1
            if self.reduction is not None and not direct and prod(self.acc_shape) > points:
                pieces = threads   # each piece sums into a partial result of its own: larger than a block here
            self.tiles = (points, most, self._pieces(tiles, points, pieces, direct), direct, rows_whole)
        points, _, pieces, direct, rows_whole = self.tiles
        return (points, pieces, direct) if rows_whole and (direct or self.positions is None) else None

    def _tile(self, index):
        """(index, block shape, reduction target) of the block at `index`."""
        block_shape = tuple(len(range(*s.indices(n))) for s, n in zip(index, self.group.shape))
        target = None
        if self.reduction is not None:
            target = tuple(slice(None) if j in self.axes else s for j, s in enumerate(index))
        return index, block_shape, target

    def _pieces(self, tiles, points, n, direct):
        """The tiles in `n` contiguous pieces of about equal size. A tile at
        the end of a piece is cut along the axis blocks cut, unless that
        axis must stay whole in a block (a row reduction's, or a final
        reduction's whose blocks reduce straight into the result); then
        pieces end at tiles."""
        if n == 1:
            return [tiles]
        sizes = [prod(t[1]) for t in tiles]
        total = sum(sizes)
        ends = [total * t // n for t in range(1, n)]
        k, inner, step = block_axis(self.group.shape, points)
        if k in self.group.row_axes or (direct and k in self.axes):
            # Whole tiles only: each piece ends at the tile boundary nearest its end.
            bounds = list(accumulate(sizes, initial=0))
            ends = [min(bounds, key=lambda b: abs(b - end)) for end in ends]
        pieces = [[]]
        done = 0
        for tile, size in zip(tiles, sizes):
            while len(pieces) < n and done + size > ends[len(pieces) - 1]:
                rows = (ends[len(pieces) - 1] - done) // inner
                rows -= rows % step
                if rows > 0:
                    index = tile[0]
                    cut = index[k].start + rows
                    pieces[-1].append(self._tile(index[:k] + (slice(index[k].start, cut),) + index[k + 1:]))
                    tile = self._tile(index[:k] + (slice(cut, index[k].stop),) + index[k + 1:])
                    done += rows * inner
                    size -= rows * inner
                pieces.append([])
            pieces[-1].append(tile)
            done += size
        return [piece for piece in pieces if piece]

    @ignoring_errors
    def _run(self, inputs, outputs, piece, result, temps):
        """Compute the blocks of `piece` with the block temporaries `temps`;
        return the partial reduction, if any."""
        views = {}
        partial = None
        reduction = self.reduction
        if reduction is not None and result is None:
            partial = np.full(self.acc_shape, reduction.op.monoid.identity_of(reduction.dtype), reduction.dtype.dtype)
        block = self.block
        for index, block_shape, target in piece:
            temp = views.get(block_shape)
            if temp is None:
                n = prod(block_shape)
                temp = views[block_shape] = [t[:n].reshape(block_shape) for t in temps]
            source = block(index, inputs, temp, outputs)
            if reduction is not None:
                if self.positions is not None:
                    self.positions(source, self.axes[0], result[target], keepdims=True)
                elif result is not None:
                    reduce(self.reducer, source, self.axes, self.reduce_dtype, result[target], True)
                else:
                    here = partial[target]
                    self.reducer(here, reduce(self.reducer, source, self.axes, self.reduce_dtype, None, True),
                                 out=here)
        return partial
