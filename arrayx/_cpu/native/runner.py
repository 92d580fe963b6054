"""Running a fused group through its native kernel.

A NativeGroup lays the group's iteration shape out as the loops of its form
(codegen.py): per input, the element strides along each axis (0 where it
broadcasts), the axes ordered by the form's sets, extents of 1 dropped, and
neighbouring axes that every operand steps through alike merged into one.
The extents and strides go to the kernel in `meta`; the loop form picks the
kernel's source. A group keeps the layouts of the input shapes and strides
it has met, read from the buffers at each call (a group's declared layout
says what its plan's buffers were; a dask chunk may be any view). The call
is cut into pieces over the outermost set (or, for a
reduction to few points, over the reduced points, each piece folding into
partial results that are then combined in piece order, so a sum is the same
at every call), which the calling thread and the launcher's threads claim
(launcher.c; the CPU executor's workers where there is no launcher).
"""

import time
from math import prod

import numpy as np

from .. import memory, native, workers
from ...executors.python_code import generated
from ...graph.primitives import contiguous_strides, reduced_shape
from ..kernels import REDUCERS
from . import codegen, compiler, launch, points
from .codegen import COLUMN_TILE, Form
from .points import CONTIGUOUS, SAME, SCALAR, STRIDED

# Points from which a call may run on the workers: below, a kernel takes
# less time than waking a worker (tens of microseconds).
THREADED_POINTS = 1 << 17
# Pieces per thread a threaded call is cut into: a thread that starts late
# claims fewer of them.
PIECES_PER_THREAD = 4
# Elementwise pieces start at multiples of this many points: whole cache
# lines and vectors.
GRAIN = 64
# Outputs of at least this many bytes come from the pool of dead results
# (memory.py): fresh pages cost as much as the pass itself.
POOLED_BYTES = 1 << 20
# Points from which a call releases the GIL.
RELEASE_POINTS = 1 << 14
# Layouts a group keeps (a plan rebound to many extents makes one each).
LAYOUTS = 64
# launch.runner(), once a kernel has loaded: (the launch function, how it
# names a kernel, the launcher's pool's split function or None).
RUN = [None, None, None]
# On the "auto" path a group asks for its kernel once it has run this many
# times, or over this many points in all: a compile costs a tenth of a second
# of a core, which a group run once on small arrays never earns back (a test
# suite meets thousands of those), and a group over half a million points
# does at its first call.
HOT_CALLS = 8
HOT_POINTS = 1 << 19


class Layout:
    """A group's loops for one call's input shapes and strides: the form,
    the meta array (the number of axes of each set, their extents, then the
    strides; its address goes to the kernel), the range of the outermost
    set (columns: of the kept points) and of the reduced points, and how a
    call makes each output that is not written into an input. Once the
    form's kernel is loaded, `kernel` names it to the launch function,
    `whole(inputs)` runs a call on the calling thread (`on_this_thread`), and
    `launch` is `whole` where the points are too few for threads, else None
    (FusedKernel's native-first function calls it)."""

    __slots__ = ("form", "meta", "address", "outer", "reduced", "points", "fresh", "kernel", "whole", "launch")

    def __init__(self, form, extents, strides, outputs):
        self.form = form
        flat = [len(dims) for dims in extents] + [n for dims in extents for n in dims]
        self.meta = np.array(flat + [s for operand in strides for s in operand], dtype=np.int64)
        self.address = self.meta.ctypes.data
        self.points = prod(flat[len(extents):])
        self.outer = prod(extents[0]) * (extents[-1][0] if form.mode in ("columns", "tiles") else 1)
        self.reduced = prod(extents[1]) if form.mode in ("reduce", "columns") else 0
        # How each output a call allocates is made (the first is an input where the form writes into one).
        self.fresh = [(memory.empty if prod(shape) * dtype.itemsize >= POOLED_BYTES else np.empty, shape, dtype)
                      for shape, dtype in outputs[0 if form.into is None else 1:]]
        self.kernel = None
        self.whole = None
        self.launch = None

    def on_this_thread(self, n_in):
        """A function running a call over `n_in` inputs and every point on
        the calling thread: launch(inputs) -> the outputs (a tuple when
        several), the first written into input `form.into` when that is not
        None. Generated (`o0 =
        a0(s0, d0)`, then one launch call): a call on small arrays costs
        mostly the Python around its kernel."""
        names = {"run": RUN[0], "kernel": self.kernel, "meta": self.address, "outer": self.outer,
                 "reduced": self.reduced, "release": self.points >= RELEASE_POINTS}
        lines = ["def launch(inputs):"]
        into = self.form.into
        outputs = [] if into is None else [f"inputs[{into}]"]
        for j, (allocate, shape, dtype) in enumerate(self.fresh):
            names.update({f"a{j}": allocate, f"s{j}": shape, f"d{j}": dtype})
            lines.append(f"    o{j} = a{j}(s{j}, d{j})")
            outputs.append(f"o{j}")
        buffers = [f"inputs[{k}]" for k in range(n_in)] + outputs
        lines.append(f"    run(kernel, meta, 0, outer, 0, reduced, None, release, {', '.join(buffers)})")
        lines.append(f"    return {outputs[0] if len(outputs) == 1 else ', '.join(outputs)}")
        return generated(lines, names, "launch")


def _key_expression(group, contiguous):
    """(the Python expression of what a group's layout depends on in a
    call's `inputs`, the globals it reads): the shapes and strides of its
    array inputs (a 0-d input is a scalar at every extent), as the
    launcher's layout_key bytes, in one C call; where there is no launcher
    (or the mode never runs natively), a tuple of the shapes and, unless
    the plan said they are contiguous, the strides."""
    arrays = [k for k, (shape, _, _) in enumerate(group.inputs) if shape]
    layout_key = launch.layout_key() if native.mode != "numpy" else None
    if layout_key is not None:
        return f"layout_key({', '.join(f'inputs[{k}]' for k in arrays)})", {"layout_key": layout_key}
    fields = ("shape",) if contiguous else ("shape", "strides")
    parts = [f"inputs[{k}].{field}" for k in arrays for field in fields]
    return f"({', '.join(parts)}{',' if len(parts) == 1 else ''})", {}


class NativeGroup:
    """A FusedGroup run by its native kernel, writing its one output into
    input `into` (the caller guarantees it dies here and nobody else sees
    it) when `into` is not None, on at most `threads` threads (None:
    workers.THREADS).

    A plan rebound to other extents (scheduler/schedule.py) runs the group's
    kernel on inputs of other shapes: the iteration shape is taken from the
    inputs at each call, and only the loop form picks compiled code."""

    def __init__(self, group, into=None, threads=None):
        self.group = group
        self.into = into
        self.threads = threads
        self.mode = codegen.mode_of(group)
        self.n_in = len(group.inputs)
        self.ndim = len(group.shape)
        self.strided_out = points.strided_outputs(group, self.mode)
        self.outputs = [group.body[v - self.n_in] for v in group.outputs]
        self.epilogue = group.epilogue
        self.sets = self._sets()
        # Contiguous inputs (as the plan said) lay out by their shapes alone.
        self.contiguous = all(layout == "C" for _, _, layout in group.inputs)
        self.layouts = {}     # self.key(inputs) -> Layout, or None where no form covers the inputs
        # The key's expression of `inputs` and the globals it reads, for the callers that inline it.
        self.key_text, self.key_names = _key_expression(group, self.contiguous)
        self.key = generated(["def key(inputs):", f"    return {self.key_text}"], dict(self.key_names), "key")
        self.loaded = []      # the compiler.Kernels its layouts run: they stay loaded while it lives
        self.sources = {}     # Form -> its kernel's source
        self.seconds = None   # wall time of the last threaded call
        self.calls = 0        # calls and points run before the kernel was asked for ("auto" path)
        self.points_run = 0
        root = group.body[-1]
        self.reducer = REDUCERS[root.op.name] if root.op.kind == "reduce" else None
        self.streamable = self.mode == "elementwise" and codegen.streamable(group)
        self.accumulator = points.accumulator(root.op.name, root.dtype).dtype if self.reducer else None

    def _sets(self):
        """The group's axes in loop order, by set (see codegen.Form)."""
        group = self.group
        axes = range(self.ndim)
        if self.mode == "elementwise":
            return [list(axes)]
        if self.mode == "rows":
            rows = set(group.row_axes)
            return [[d for d in axes if d not in rows], sorted(rows)]
        reduced = set(group.body[-1].attrs[0])
        kept = [d for d in axes if d not in reduced]
        if self.mode == "reduce":
            return [kept, sorted(reduced)]
        last = max((d for d in reduced if group.shape[d] != 1), default=max(reduced))
        return [[d for d in kept if d < last], sorted(reduced), [d for d in kept if d > last]]

    def _keep_layout(self, key, inputs):
        """The Layout of a call on `inputs` (None when no form covers
        them), kept under `key`, their self.key."""
        if len(self.layouts) >= LAYOUTS:
            self.layouts.clear()
        found = self.layouts[key] = self._layout(inputs)
        return found

    def _layout(self, inputs):
        group = self.group
        ndim = self.ndim
        shape = [1] * ndim
        for b in inputs:
            for d, n in enumerate(b.shape, ndim - len(b.shape)):
                if n != 1:
                    shape[d] = n
        if 0 in shape:
            return None
        # Each strided operand's element stride along every axis (0 where it broadcasts).
        strides = []
        for k, (_, dtype, _) in enumerate(group.inputs):
            b = inputs[k]
            if b.shape == ():
                continue
            size = dtype.itemsize
            if any(s % size for s in b.strides):
                return None
            lead = ndim - len(b.shape)
            strides.append([0] * lead + [0 if n == 1 else s // size for n, s in zip(b.shape, b.strides)])
        mode, sets = self.mode, self.sets
        if mode == "rows" and self.into is None:
            # Rows a row length apart in memory whose neighbours are next to
            # each other (a transposed matrix's): a tile of them at a time.
            lead = [d for d in sets[0] if shape[d] != 1]
            row = [d for d in sets[1] if shape[d] != 1]
            if lead and row and any(s[lead[-1]] == 1 and abs(s[row[-1]]) > 1 for s in strides):
                mode, sets = "tiles", [[d for d in sets[0] if d != lead[-1]], sets[1], [lead[-1]]]
        full = [0 if n == 1 else s for n, s in zip(shape, contiguous_strides(shape))]
        strides += [full] * len(self.strided_out)
        extents, merged = [], [[] for _ in strides]
        for axes in sets:
            dims, set_strides = [], [[] for _ in strides]
            for a in axes:
                n = shape[a]
                if n == 1:
                    continue
                if dims and all(s[-1] == operand[a] * n for s, operand in zip(set_strides, strides)):
                    dims[-1] *= n
                    for s, operand in zip(set_strides, strides):
                        s[-1] = operand[a]
                else:
                    dims.append(n)
                    for s, operand in zip(set_strides, strides):
                        s.append(operand[a])
            if not dims:
                dims = [1]
                set_strides = [[0] for _ in strides]
            extents.append(dims)
            for m, s in zip(merged, set_strides):
                m.extend(s)
        if (mode in ("columns", "rows", "tiles") and len(extents[-1]) != 1) or (mode == "tiles" and len(extents[1]) != 1):
            return None   # the innermost set (and a tile's row) must be one loop
        classes = []
        operands = iter(merged)
        for b in inputs:
            classes.append(SCALAR if b.shape == () else _inner_class(next(operands)[-1]))
        for _ in self.strided_out:
            classes.append(_inner_class(next(operands)[-1]))
        outputs = [(reduced_shape(tuple(shape), *i.attrs) if i.op.kind == "reduce"
                    else reduced_shape(tuple(shape), group.row_axes, True) if v in self.epilogue else tuple(shape),
                    i.dtype.dtype) for v, i in zip(group.outputs, self.outputs)]
        threshold = compiler.stream_bytes() if self.streamable else None
        streamed = threshold is not None and sum(prod(s) * dtype.itemsize for s, dtype in outputs) >= threshold
        return Layout(Form(mode, classes, self.into, streamed), extents, merged, outputs)

    def __call__(self, inputs, wait=False):
        """The group's outputs (a tuple when it has several), or None when
        the kernel is not compiled yet (with `wait`, it is compiled now) or
        no loop form covers these inputs."""
        key = self.key(inputs)
        layout = self.layouts.get(key, False)
        if layout is False:
            layout = self._keep_layout(key, inputs)
        if layout is None or layout.whole is None and not self._load(layout, wait):
            return None
        most = self.threads or workers.THREADS
        if most == 1 or layout.points < THREADED_POINTS:
            return layout.whole(inputs)
        outputs = [allocate(shape, dtype) for allocate, shape, dtype in layout.fresh]
        if self.into is not None:
            outputs.insert(0, inputs[self.into])
        # As a NumPy group's blocks: the workers only when the last call took long enough to pay for waking them.
        self._pieces(layout, (*inputs, *outputs), outputs[-1], most if workers.worth_waking(self.seconds) else 1)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def shortcut(self, inputs):
        """How launcher.c's shortcut runs a call on inputs laid out as
        `inputs` (see FusedKernel.shortcut): ((kernel, meta, outer, reduced,
        release, keep), outputs), or None where such a call is not one kernel
        call on the calling thread writing new arrays (the kernel not loaded
        yet, threads, an output written into an input, no launcher)."""
        if self.into is not None or launch.launcher() is None:
            return None
        layout = self.layouts.get(self.key(inputs))
        if layout is None or layout.launch is None:
            return None
        return ((layout.kernel, layout.address, layout.outer, layout.reduced, layout.points >= RELEASE_POINTS,
                 (layout, self.loaded)), tuple(layout.fresh))

    def _load(self, layout, wait):
        """Whether `layout`'s kernel is loaded now (see `__call__`); on the
        "auto" path a group asks for it only once it is hot (HOT_CALLS)."""
        if not wait:
            self.calls += 1
            self.points_run += layout.points
            if self.calls < HOT_CALLS and self.points_run < HOT_POINTS:
                return False
        text = self.sources.get(layout.form)
        if text is None:
            text = self.sources[layout.form] = codegen.source(self.group, layout.form)
        kernel = compiler.kernel(text, wait)
        if kernel is None:
            return False
        if RUN[0] is None:
            RUN[:] = launch.runner()
        self.loaded.append(kernel)
        layout.kernel = RUN[1](kernel)
        layout.whole = layout.on_this_thread(self.n_in)
        if layout.points < THREADED_POINTS:
            layout.launch = layout.whole
        return True

    def _pieces(self, layout, buffers, result, threads):
        """Run the call in pieces that the calling thread and up to
        `threads` - 1 others claim: the launcher's pool's (launcher.c), or
        the CPU executor's workers where there is no launcher
        (workers.claimed)."""
        kernel, split = layout.kernel, RUN[2]
        outer, reduced, address = layout.outer, layout.reduced, layout.address
        n = (self.threads or workers.THREADS) * PIECES_PER_THREAD
        start = time.perf_counter()
        # A columns call keeping few points per piece reads each row's cache
        # lines once per piece (20 float64 columns cut in 8 pieces read the
        # array 8 times, 6x slower than one thread): its pieces, as those of
        # a reduction to few points, split the reduced points, each folding
        # into partial results.
        mode = layout.form.mode
        few = COLUMN_TILE * n if mode == "columns" else n
        if mode in ("reduce", "columns") and outer < few and reduced >= n:
            partials = np.empty((n, outer), self.accumulator)
            split(kernel, address, outer, reduced, True, n, 1, partials.ctypes.data, partials.strides[0], threads - 1,
                  *buffers)
            result.reshape(-1)[...] = self.reducer.reduce(partials, axis=0)
        else:
            grain = GRAIN if mode in ("elementwise", "tiles") else 1
            split(kernel, address, outer, reduced, False, n, grain, None, 0, threads - 1, *buffers)
        self.seconds = time.perf_counter() - start


def _inner_class(stride):
    return CONTIGUOUS if stride == 1 else SAME if stride == 0 else STRIDED

