"""The CPU executor: NumPy buffers, primitives as NumPy calls (kernels.py),
fused groups over cache-sized blocks on all cores (fused.py)."""

import numpy as np

from ..dtypes import FROM_NUMPY
from ..executors.base import Executor
from ..graph.primitives import FUSED_OP, PRIMITIVES
from ..references import extra_references
from . import memory
from .errors import ignoring_errors
from .fused import FusedKernel
from .kernels import DYNAMIC, IMPLS, UFUNCS, UPDATES, out_ufunc

VIEWS = frozenset({"slice", "reshape", "permute", "broadcast", "flip"})


class CPUExecutor(Executor):
    name = "cpu"
    updates_in_place = True
    supports = frozenset(name for name in PRIMITIVES if name in IMPLS or name in DYNAMIC) | {"fused"}

    def from_host(self, array, copy=True):
        # Buffers stay writable inside the executor (legacy DLPack cannot
        # export read-only memory); users only ever see read-only views.
        return np.array(array, copy=True) if copy else np.asarray(array)

    def from_scalar(self, value, dtype):
        # A NumPy scalar is the cheapest 0-d buffer and broadcasts in every ufunc.
        # A value beyond float16's range (the narrowest) becomes inf, as a cast does, without a warning.
        if dtype.kind in "fc" and type(value) in (int, float) and abs(value) > 65504.0:
            with np.errstate(over="ignore"):
                return dtype.type(value)
        return dtype.type(value)

    def to_host(self, buffer):
        out = np.asarray(buffer).view()
        out.flags.writeable = False
        return out

    def element(self, buffer):
        return buffer[()]   # host memory: no read-only view needed to read it

    def copy(self, buffer):
        return self.from_host(buffer)

    def owns_memory(self, buffer):
        # Memory of its own, or of the pool; a view's base is another buffer
        # or a user's array.
        return (type(buffer) is np.ndarray and buffer.flags.writeable
                and (buffer.base is None or memory.is_pooled(buffer)))

    def update(self, step, buffers):
        return UPDATES[step.op.name](step)(*buffers)

    def write_element(self, buffer, index, value):
        buffer[index] = value

    def free_held_memory(self):
        memory.release()

    def dlpack(self, buffer, stream, max_version, dl_device, copy):
        array = np.asarray(buffer)
        legacy = max_version is None or max_version < (1, 0)
        if legacy and not copy and not array.flags.writeable:
            # A read-only view (e.g. a broadcast) cannot be exported to a
            # DLPack < 1.0 consumer without a copy.
            if copy is False:
                raise BufferError("__dlpack__: this array is a read-only view, which DLPack < 1.0 "
                                  "cannot export without a copy, and copy=False forbids one")
            array, copy = array.copy(), None
        elif not legacy:
            array = self.to_host(array)  # DLPack >= 1.0 carries the read-only flag
        return array.__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def from_dlpack(self, obj, copy):
        host = np.from_dlpack(obj, copy=copy)
        if host.dtype not in FROM_NUMPY:
            raise TypeError(f"from_dlpack: unsupported dtype {host.dtype}; expected one of "
                            f"{[str(d) for d in FROM_NUMPY]}")
        return self.from_host(host, copy=copy is not False), host.shape, FROM_NUMPY[host.dtype]

    def view(self, step, buffer):
        # NumPy slices, reshapes, transposes, broadcasts and flips are views.
        if step.op.name in VIEWS:
            return IMPLS[step.op.name](step)(buffer)
        return None

    def run_dynamic(self, name, buffers, attrs):
        outputs = DYNAMIC[name](*[np.asarray(b) for b in buffers], *attrs)
        return [(out, out.shape, FROM_NUMPY[out.dtype]) for out in (np.asarray(o) for o in outputs)]

    def layout(self, buffer):
        if isinstance(buffer, tuple):   # the outputs of a multi-output step
            return tuple(self.layout(b) for b in buffer)
        if 0 in buffer.strides and buffer.size > 1:
            return "B"
        return "C" if buffer.flags.c_contiguous else "S"

    def dlpack_device(self, buffer):
        return (1, 0)   # kDLCPU: NumPy memory

    def compile(self, steps, drops):
        program = []
        for step, drop, into in zip(steps, drops, _reused_buffers(steps, drops)):
            # An update whose array dies here writes in place when, at run
            # time, the slot holds the only reference and the memory is its
            # own (a result of this plan, not a view or a shared input).
            in_place = None
            if step.op is FUSED_OP:
                fn = FusedKernel(step.attrs[0]).function
            else:
                fn = IMPLS[step.op.name](step)
                if into is not None:
                    fn = _writing_into(fn, into)
                elif step.op.name in UPDATES and step.args[0] in drop and step.args[0] not in step.args[1:]:
                    in_place = UPDATES[step.op.name](step)
            program.append((fn, step.args, step.out, drop, in_place))
        owns_memory = self.owns_memory

        @ignoring_errors
        def run(slots):
            for fn, args, out, drop, in_place in program:
                if in_place is not None and extra_references(slots, args[0]) == 0 and owns_memory(slots[args[0]]):
                    fn = in_place
                # Results go straight into their slots: the slots hold them alone (see in_place).
                if out.__class__ is tuple:   # a fused group with several outputs
                    result = fn(*[slots[i] for i in args])
                    for k, o in enumerate(out):
                        slots[o] = result[k]
                    result = None
                else:
                    n = len(args)
                    if n == 1:
                        slots[out] = fn(slots[args[0]])
                    elif n == 2:
                        slots[out] = fn(slots[args[0]], slots[args[1]])
                    elif n == 3:
                        slots[out] = fn(slots[args[0]], slots[args[1]], slots[args[2]])
                    else:
                        slots[out] = fn(*[slots[i] for i in args])
                for i in drop:
                    slots[i] = None
        return run


def _elementwise_ufunc(step):
    return out_ufunc(UFUNCS.get(step.op.name))


def _reused_buffers(steps, drops):
    """For each step, the argument slot whose buffer it may overwrite with its
    result (None: allocate), as NumPy elides temporaries: an elementwise ufunc
    step whose argument dies at that step, holds an array a ufunc step of this
    segment allocated (never a plan input, which callers and caches share),
    was read by ufunc steps only (so no view of it is alive) and has the
    result's shape and dtype. 0-d results are NumPy scalars: never reused."""
    ufunc_steps = [_elementwise_ufunc(step) is not None for step in steps]
    aliased = {a for step, is_ufunc in zip(steps, ufunc_steps) if not is_ufunc for a in step.args}
    fresh = {}  # slot -> (shape, dtype) of an array a ufunc step of this segment allocated
    reuse = []
    for step, drop, is_ufunc in zip(steps, drops, ufunc_steps):
        into = None
        if is_ufunc and step.shape != ():
            for position, a in enumerate(step.args):
                if a in drop and a not in aliased and fresh.get(a) == (step.shape, step.dtype):
                    into = position
                    break
            fresh[step.out] = (step.shape, step.dtype)
        reuse.append(into)
    return reuse


def _writing_into(ufunc, position):
    """The ufunc, writing its result into its argument number `position`."""
    return lambda *args: ufunc(*args, out=args[position])
