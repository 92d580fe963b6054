"""The executor interface, modelled on Nx's Backend behaviour.

An executor owns the buffers of one kind of device. The scheduler asks it one
question per node, `runs(op, in_dtypes, dtype)`: the fuse pass before making
a node a member of a fused group, the lower pass for every other step, and
`run_dynamic` for a data-dependent primitive. A node its executor does not
run goes to the registry's fallback executor (the host's), with transfers
(Nx's optional callbacks with a default implementation); the rest of its
group stays on the device. The scheduler hands an executor a segment of a
plan (a list of steps) to compile once; `compile` is written here, once, over
the executor's hooks: `kernel` (a step as a callable), `kernels` (choices
across a segment: the CPU's reuse of dying temporaries and in-place
updates) and `around_kernels` (the CPU's error state, the GPU's context).
"""

from abc import ABC, abstractmethod

import numpy as np

from ..references import extra_references
from .python_code import generated

# Movement primitives an executor may take as views of a realized buffer
# (`Executor.view`): no computation, the result shares the buffer's memory.
VIEWS = frozenset({"slice", "reshape", "permute", "broadcast", "flip"})


def entering(make):
    """(enter, leave) for `Executor.around_kernels` over the context managers
    `make()` returns: enter() enters a new one and returns it, leave(it)
    exits it."""
    def enter():
        context = make()
        context.__enter__()
        return context
    return enter, _exit


def _exit(context):
    context.__exit__(None, None, None)


class Step:
    """One primitive application inside a compiled segment.

    `args` and `out` are slot numbers in the plan's buffer list. The slot of a
    multi-output primitive (qr, svd, ...) holds a tuple of buffers, one per
    output; `select` steps take them apart. A `fused` step whose group has
    several outputs has a tuple of slots as `out`, and tuples as `shape` and
    `dtype`. `in_types` gives each argument's (shape, dtype), what a code
    generator needs besides the attrs; `device` is where the result lives.
    """

    __slots__ = ("op", "attrs", "shape", "dtype", "args", "out", "device", "in_types")

    def __init__(self, op, attrs, shape, dtype, args, out, device=None, in_types=()):
        self.op = op
        self.attrs = attrs
        self.shape = shape
        self.dtype = dtype
        self.args = args
        self.out = out
        self.device = device
        self.in_types = in_types

    @property
    def outs(self):
        """The output slots, as a tuple."""
        return self.out if isinstance(self.out, tuple) else (self.out,)

    def __repr__(self):
        return f"Step({self.op.name}, args={self.args}, out={self.out})"


def naming_step(kernel, step):
    """`kernel`, which runs `step` of a primitive that may fail on values
    (Primitive.may_fail): an error it raises on them (a ValueError such as
    LinAlgError, an IndexError) gets `failed_step = step`, from which the
    scheduler finds the node and the call site that recorded it. Other
    kernels are not wrapped and pay nothing."""
    def run(*args):
        try:
            return kernel(*args)
        except (ValueError, LookupError) as error:
            error.failed_step = step
            raise
    return run


class Executor(ABC):
    """What every executor provides."""

    name = "abstract"
    # Whether the executor runs `fused` steps: groups the fuse pass builds
    # from nodes the executor `runs`.
    fuses = False
    # Whether a fused group's final reduction must reduce the axes its row
    # reductions reduce (a kernel that owns whole rows cannot also reduce
    # across them); the fuse pass then keeps such a reduction out of the group.
    fused_rows_end_in_row_reductions = False
    # Whether a group with row reductions may end in an epilogue: elementwise
    # work over the row reductions' kept shape, computed once per row after
    # them (logsumexp's `max + log(sum)`; FusedGroup.epilogue), so that the
    # group's root has that shape.
    fused_rows_end_in_epilogues = False
    # Whether a fused group may end in an arg reduction (argmax, argmin over
    # one axis), so that the values it compares are never written out: the
    # executor computes it where the group's blocks hold that axis whole.
    fused_groups_end_in_arg_reductions = False
    # Whether `update` and `write_element` write into a buffer nobody else can
    # see; elsewhere `x[key] = v` stays a node that a plan runs on a copy.
    updates_in_place = False
    # Whether a step's result is held whole in this machine's memory: a plan
    # with a result larger than it is refused before it runs. A dask array is
    # a graph whose chunks are computed where dask's scheduler puts them.
    holds_results = True
    # Whether `sum(x * y)` over every axis pays as a dot product of the
    # flattened operands (the scheduler's rewrite pass).
    dot_pays = True
    # Whether a compiled computation of one elementwise node or reduction
    # makes it a group at any size: its calls may then run as one call of
    # compiled code (`shortcut`), where a small lone node would otherwise be
    # an ordinary step (fuse.SINGLE_NODE_MIN_SIZE).
    lone_groups_when_bound = False
    # Values of at most this many points make a plan of elementwise work,
    # reductions, products and transposes that runs at any extent (and one
    # with reshapes, broadcasts, slices and constants, whose steps are built
    # again): its compiled kernels depend on the layouts of the values and
    # on which extents are equal or 1, never on the extents themselves (see
    # scheduler.collect.extent_free_key). 0: every plan is built for its
    # exact shapes.
    any_extent_points = 0

    @abstractmethod
    def from_host(self, array, copy=True):
        """A device buffer with the contents of the NumPy array `array`.

        `copy=False` asks to share the host memory (`asarray(..., copy=False)`);
        an executor that cannot raises ValueError. `copy=None` lets it share
        the memory or copy it (nobody else holds `array`: asarray of a list).
        """

    def from_scalar(self, value, dtype):
        """A 0-d buffer holding the Python scalar `value` as `dtype`."""
        return self.from_host(np.asarray(value, dtype=dtype))

    @abstractmethod
    def to_host(self, buffer):
        """A NumPy array with the buffer's contents (read-only, may share memory)."""

    def element(self, buffer):
        """The one element of a 0-d buffer, as a NumPy scalar."""
        return self.to_host(buffer)[()]

    @abstractmethod
    def copy(self, buffer):
        """A new buffer on this executor with the same contents."""

    @abstractmethod
    def runs(self, op, in_dtypes, dtype):
        """Whether this executor runs primitive `op` on inputs of dtypes
        `in_dtypes` (a tuple), giving `dtype` (a tuple for a multi-output
        primitive, None for a data-dependent one, known only once it ran).

        Asked once per node when a plan is built, never for `fused` (the fuse
        pass asks it of every member instead). Where it says no, the registry's
        fallback executor runs the node, with transfers.
        """

    def layout(self, buffer):
        """The buffer's memory layout as part of a plan key: "C" contiguous,
        "S" strided, "B" broadcast (a zero stride). Compiled code may depend
        on it; the scheduler asks once per realized node."""
        return "C"

    def transfer(self, buffer, target):
        """The buffer's contents as a buffer of executor `target`."""
        return target.from_host(self.to_host(buffer))

    def view(self, op, attrs, shape, dtype, buffer):
        """The result (of `shape` and `dtype`) of movement primitive `op` with
        `attrs` on a realized buffer, if this executor can take it as a view
        (no computation), else None (the node then runs in a plan like any
        other)."""
        return None

    def run_dynamic(self, name, buffers, attrs):
        """Run a data-dependent primitive now: [(buffer, shape, DType)] per output.

        Executors without it say so in `runs`; the scheduler then runs it on
        the fallback executor.
        """
        raise TypeError(f"{self.name} executor has no data-dependent primitive {name}")

    def hold_in_memory(self, buffer):
        """A buffer holding the buffer's value in memory, which `dlpack`
        shares with copy=False and the array keeps as its value from then
        on: the buffer itself where it is memory (CPU, GPU); the dask device
        computes it into a new host array."""
        return buffer

    @abstractmethod
    def dlpack(self, buffer, stream, max_version, dl_device, copy):
        """A DLPack capsule of the buffer (`__dlpack__`'s arguments)."""

    def from_dlpack(self, obj, copy):
        """(buffer, shape, DType) of the DLPack-exporting `obj`, whose memory
        is on this executor's device; `copy` is from_dlpack's."""
        raise BufferError(f"from_dlpack: the {self.name} executor cannot import DLPack tensors")

    @abstractmethod
    def dlpack_device(self, buffer):
        """The (device type, device id) pair of `__dlpack_device__` (the
        same for every buffer of the executor; `buffer` may be None)."""

    def owns_memory(self, buffer):
        """Whether writing into `buffer` changes nothing but `buffer`: it is no
        view of another buffer, nor of memory a user shared (`copy=False`)."""
        return False

    def update(self, op, attrs, shape, dtype, buffers):
        """Run update primitive `op` (update_slice, scatter, scatter_add) with
        `attrs` and a result of `shape` and `dtype` by writing into
        buffers[0], which nobody else can see; its result (executors with
        `updates_in_place`)."""
        raise TypeError(f"the {self.name} executor does not update in place")

    def read_element(self, buffer, index):
        """A new 0-d buffer holding buffer[index] (one non-negative int per
        axis) when reading one element costs less than planning a view of
        it; None where it does not (the caller then records the read)."""
        return None

    def write_element(self, buffer, index, value):
        """buffer[index] = value (a Python scalar or a 0-d buffer of the
        buffer's dtype), in a buffer nobody else can see (`owns_memory` said so).
        `index` holds one int per axis, negative ones counting from the end;
        one out of range raises IndexError and writes nothing."""
        raise TypeError(f"the {self.name} executor does not write elements in place")

    def deallocate(self, buffer):
        """Release the buffer now rather than when it is garbage-collected."""

    def free_held_memory(self):
        """Give back the memory the executor keeps for reuse after the arrays
        using it died (no live array loses anything)."""

    def persist(self, buffers):
        """The buffers with their values computed and held on the device
        (`xp.eval`). Where a plan computes as it runs (CPU, GPU), they are
        already; a dask array is a graph until it is persisted."""
        return buffers

    def synchronize(self):
        """Wait until the work queued on this executor has finished (work is
        queued asynchronously on a GPU; the CPU runs it before returning)."""

    def kernel(self, step):
        """A callable over the buffers of `step`'s arguments returning its
        result: one buffer, or a sequence of buffers when `step.out` is a
        tuple of slots (a multi-output primitive's one slot holds a tuple)."""
        raise NotImplementedError(f"the {self.name} executor builds no kernels")

    def kernels(self, steps, drops):
        """For each step of a segment, (kernel, writes_into, in-place kernel
        or None). `writes_into` is the position of the dying argument the
        kernel writes its result into, decided when compiling (the CPU's
        reuse of dying temporaries), else None. An in-place kernel runs
        instead when, at run time, the step's first argument dies there, its
        slot holds the only reference and the memory is its own
        (`owns_memory`). Executors that plan across a segment refine it."""
        return [(self.kernel(step), None, None) for step in steps]

    def around_kernels(self, kernels):
        """(enter, leave) around what `kernels` (the callables of a
        segment's steps, `kernels` gave them) need around them (the CPU's
        floating-point error state, the GPU's context): a program runs
        `token = enter()` first and `leave(token)` last, also when a kernel
        raises; None where they need nothing."""
        return None

    def kernel_path(self, kernel):
        """How the last call of `kernel` (one `kernels` returned) ran, where
        the executor has several ways to run a step (the CPU's fused groups:
        "native" or "numpy"); None where it has one."""
        return None

    def shortcut(self, kernel, buffers):
        """A call of `kernel` (a step's callable, from `kernels`) on buffers
        laid out as `buffers` as one call of compiled code with no Python
        around it (a jitted function's calls on small arrays, see
        transformers.jit): (shortcut, layout_key, launch, outputs, guards),
        launcher.c's shortcut function and layout_key function and the
        pieces of a shortcut table's entry it describes; None where the
        executor has no such call (the default)."""
        return None

    def compile(self, steps, drops, observe=None):
        """A callable `program(slots)` that runs `steps` over the slot list;
        `program.kernels` holds each step's kernel and `program.around`
        whether they need `around_kernels`.

        Each step reads its `args` slots and writes its `out` slot (each of
        a tuple of slots); `drops[i]` lists the slots whose last use is step
        i, so their memory can be freed while the program runs. With
        `observe`, each kernel runs as `observe(step, kernel, in_place)`
        returns it (arrayx.debug's profiler times it; `in_place` says whether
        the kernel writes into a dying argument). The kernel of a primitive
        that may fail on values names its step in the errors it raises on
        them (`naming_step`).
        """
        kernels = [(fn, into, in_place) if not step.op.may_fail
                   else (naming_step(fn, step), into, in_place and naming_step(in_place, step))
                   for step, (fn, into, in_place) in zip(steps, self.kernels(steps, drops))]
        around = self.around_kernels([f for fn, _, in_place in kernels for f in (fn, in_place) if f is not None])
        if observe is not None:
            kernels = [(observe(step, fn, into is not None), into,
                        in_place if in_place is None else observe(step, in_place, True))
                       for step, (fn, into, in_place) in zip(steps, kernels)]
        # The program as straight-line Python, a line per step: results go
        # straight into their slots, which then hold them alone (see in_place).
        names = {"extra_references": extra_references, "owns_memory": self.owns_memory}
        lines = ["def run(slots):"]
        for k, (step, drop, (fn, _, in_place)) in enumerate(zip(steps, drops, kernels)):
            names[f"f{k}"] = fn
            args = ", ".join(f"slots[{i}]" for i in step.args)
            several = step.out.__class__ is tuple   # a fused group with several outputs
            result = "result" if several else f"slots[{step.out}]"
            if in_place is None:
                lines.append(f"    {result} = f{k}({args})")
            else:
                names[f"p{k}"] = in_place
                first = step.args[0]
                lines += [f"    if extra_references(slots, {first}) == 0 and owns_memory(slots[{first}]):",
                          f"        {result} = p{k}({args})",
                          "    else:",
                          f"        {result} = f{k}({args})"]
            if several:
                lines += [f"    slots[{o}] = result[{j}]" for j, o in enumerate(step.out)]
                lines.append("    result = None")
            lines += [f"    slots[{i}] = None" for i in drop]
        if len(lines) == 1:
            lines.append("    pass")
        if around is not None:
            names["enter"], names["leave"] = around
            lines = [lines[0], "    token = enter()", "    try:", *("    " + line for line in lines[1:]),
                     "    finally:", "        leave(token)"]
        program = generated(lines, names, "run")
        program.kernels = tuple(fn for fn, _, _ in kernels)   # a step's kernel, for `shortcut`
        program.around = around is not None
        return program
