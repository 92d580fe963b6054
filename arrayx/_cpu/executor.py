"""The CPU executor: NumPy buffers, primitives as NumPy calls (kernels.py),
fused groups over cache-sized blocks on all cores (fused.py)."""

import operator

import numpy as np

from ..dtypes import FROM_NUMPY
from ..executors.base import VIEWS, Executor
from ..graph.fused import single_instruction_group
from ..graph.primitives import BLOCK_REDUCE_OPS, ELEMENTWISE_OPS, FUSED_OP, PRIMITIVES
from . import memory, native
from .errors import IGNORING
from .fused import fused_kernel, ignores_errors_itself, owner_of, path_of, reused_arguments, writes_into_input
from .kernels import DYNAMIC, IMPLS, UPDATES, out_ufunc
from .native import codegen, compiler, launch

_MATMUL = PRIMITIVES["matmul"]


class CPUExecutor(Executor):
    name = "cpu"
    fuses = True
    lone_groups_when_bound = True
    fused_groups_end_in_arg_reductions = True
    fused_rows_end_in_epilogues = True
    updates_in_place = True
    # With at most this many points a value, a fused group's points times
    # its widest item (16 bytes, complex128, 1 MiB) stay below the size it
    # runs in blocks from (whose kernels hold shapes): every kernel is a
    # whole-array NumPy call or a product that sizes its result from its
    # operands, which take any extent, so a new length (a batch, a sequence)
    # reuses the plan.
    any_extent_points = 1 << 16

    @property
    def dot_pays(self):
        # BLAS's dot reads each operand once; so does the fused native kernel
        # of sum(x * y), on every core and summing float32 in float64: the
        # rewrite pays only where groups run on NumPy.
        return native.mode == "numpy" or compiler.available() is not None

    def runs(self, op, in_dtypes, dtype):
        # Every primitive with a kernel, on every dtype; one without a kernel
        # is a gap the scheduler reports by name when no executor runs it.
        return op.name in IMPLS or op.name in DYNAMIC

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

    def update(self, op, attrs, shape, dtype, buffers):
        return UPDATES[op.name](op, attrs, shape, dtype)(*buffers)

    def read_element(self, buffer, index):
        # A NumPy scalar: a copy of the element, as from_scalar's 0-d buffers are.
        return buffer[index]

    # buffer[index] = value, called without a Python frame: element loops write a thousand times.
    write_element = staticmethod(operator.setitem)

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

    def view(self, op, attrs, shape, dtype, buffer):
        # NumPy slices, reshapes, transposes, broadcasts and flips are views.
        if op.name in VIEWS:
            return IMPLS[op.name](op, attrs, shape, dtype)(buffer)
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

    def kernel(self, step):
        if step.op is FUSED_OP:
            return fused_kernel(step.attrs[0]).function
        return IMPLS[step.op.name](step.op, step.attrs, step.shape, step.dtype)

    def kernels(self, steps, drops):
        """Kernels writing into dying temporaries where NumPy would (see
        `reused_arguments`): ufunc steps and fused groups writing into a new
        array an earlier step of the segment made (a ufunc's, a fused
        group's, a product's) that dies at their step; and updates whose
        array dies at their step writing in place (when, at run time, nobody
        else sees its memory: a result of this plan, not a view or a shared
        input)."""
        # A fused group's kernel is built once its output's place is known.
        fns = [None if step.op is FUSED_OP else self.kernel(step) for step in steps]
        ufuncs = [out_ufunc(fn) for fn in fns]
        fused = [step.op is FUSED_OP and writes_into_input(step.attrs[0]) for step in steps]
        # A step whose result is a new array of its own, which reads nothing through views.
        fresh = [u is not None or f or step.op is _MATMUL for u, f, step in zip(ufuncs, fused, steps)]
        # A buffer another step read may have a view alive (the step's
        # result): never written into.
        aliased = {a for step, new in zip(steps, fresh) if not new for a in step.args}
        reuse = reused_arguments([(ufunc is not None or into_input, new, step.args, step.out, step.shape,
                                   step.dtype, set(drop) - aliased)
                                  for step, drop, ufunc, into_input, new in zip(steps, drops, ufuncs, fused, fresh)])
        kernels = []
        for step, drop, fn, ufunc, into in zip(steps, drops, fns, ufuncs, reuse):
            in_place = None
            lone = _lone_native_group(step)
            if step.op is FUSED_OP:
                fn = fused_kernel(step.attrs[0], into).function
            elif lone is not None:
                fn = fused_kernel(lone, into).function
            elif into is not None:
                fn = _writing_into(ufunc, into)
            elif step.op.name in UPDATES and step.args[0] in drop and step.args[0] not in step.args[1:]:
                in_place = UPDATES[step.op.name](step.op, step.attrs, step.shape, step.dtype)
            kernels.append((fn, into, in_place))
        return kernels

    def shortcut(self, kernel, buffers):
        owner = owner_of(kernel)
        found = None if owner is None else owner.shortcut(buffers)
        if found is None:
            return None
        launcher = launch.launcher()
        return (launcher.shortcut, launcher.layout_key, *found)

    def kernel_path(self, kernel):
        return path_of(kernel)

    def around_kernels(self, kernels):
        # A fused group's native-first function ignores the errors itself where it runs NumPy.
        return None if all(map(ignores_errors_itself, kernels)) else IGNORING


def _lone_native_group(step):
    """Where the forced native path (native.mode "native") runs a lone
    elementwise step or reduction natively: its group of one instruction
    (strides read at each call); else None."""
    if native.mode != "native" or (step.op.name not in ELEMENTWISE_OPS and step.op.name not in BLOCK_REDUCE_OPS):
        return None
    group = single_instruction_group(step.op, step.attrs, [(shape, dtype, "S") for shape, dtype in step.in_types],
                                     step.shape, step.dtype)
    return group if codegen.expressible(group) else None


def _writing_into(ufunc, position):
    """The ufunc, writing its result into its argument number `position`."""
    return lambda *args: ufunc(*args, out=args[position])
