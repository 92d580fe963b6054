"""The executor interface, modelled on Nx's Backend behaviour.

An executor owns the buffers of one kind of device. The scheduler hands it a
segment of a plan (a list of steps over primitives) to compile once, then runs
the compiled program on input buffers. Primitives an executor does not list in
`supports` run on the CPU executor, with transfers (Nx's optional callbacks with
a default implementation).
"""

from abc import ABC, abstractmethod

import numpy as np


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


class Executor(ABC):
    """What every executor provides."""

    name = "abstract"
    supports = frozenset()
    # Whether `update` and `write_element` write into a buffer nobody else can
    # see; elsewhere `x[key] = v` stays a node that a plan runs on a copy.
    updates_in_place = False

    @abstractmethod
    def from_host(self, array, copy=True):
        """A device buffer with the contents of the NumPy array `array`.

        `copy=False` asks to share the host memory (`asarray(..., copy=False)`);
        an executor that cannot raises ValueError.
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

    def can_run(self, step):
        """Whether this executor runs `step` (else the fallback executor
        does, with transfers); executors whose support depends on dtypes or
        on a fused group's instructions refine it."""
        return step.op.name in self.supports

    def layout(self, buffer):
        """The buffer's memory layout as part of a plan key: "C" contiguous,
        "S" strided, "B" broadcast (a zero stride). Compiled code may depend
        on it; the scheduler asks once per realized node."""
        return "C"

    def transfer(self, buffer, target):
        """The buffer's contents as a buffer of executor `target`."""
        return target.from_host(self.to_host(buffer))

    def view(self, step, buffer):
        """The result of movement `step` on a realized buffer, if this executor
        can take it as a view (no computation), else None (the step then runs
        in a plan like any other)."""
        return None

    def run_dynamic(self, name, buffers, attrs):
        """Run a data-dependent primitive now: [(buffer, shape, DType)] per output.

        Executors without it leave it out of `supports`; the scheduler then
        runs it on the CPU executor.
        """
        raise TypeError(f"{self.name} executor has no data-dependent primitive {name}")

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

    def update(self, step, buffers):
        """Run the update step `step` (update_slice, scatter, scatter_add) by
        writing into buffers[0], which nobody else can see; its result
        (executors with `updates_in_place`)."""
        raise TypeError(f"the {self.name} executor does not update in place")

    def write_element(self, buffer, index, value):
        """buffer[index] = value (a Python scalar or a 0-d buffer of the
        buffer's dtype), in a buffer nobody else can see (`owns_memory` said so)."""
        raise TypeError(f"the {self.name} executor does not write elements in place")

    def deallocate(self, buffer):
        """Release the buffer now rather than when it is garbage-collected."""

    def free_held_memory(self):
        """Give back the memory the executor keeps for reuse after the arrays
        using it died (no live array loses anything)."""

    def synchronize(self):
        """Wait until the work queued on this executor has finished (work is
        queued asynchronously on a GPU; the CPU runs it before returning)."""

    @abstractmethod
    def compile(self, steps, drops):
        """A callable `program(slots)` that runs `steps` over the slot list.

        Each step reads its `args` slots and writes its `out` slot in place;
        `drops[i]` lists the slots whose last use is step i, so their memory
        can be freed while the program runs.
        """
