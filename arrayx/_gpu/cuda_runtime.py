"""The runtime users get: PyCUDA (context, memory pool, stream, module
loading), NVRTC (compilation) and cuBLAS (GEMM). See runtime.py.

PyCUDA's rules this follows: each thread has its own context stack, and
its memory pool takes a block back only with a context current on the
thread that drops it (without one, its destructor throws and C++ ends the
process); a PyCUDA context object released by its destructor calls the
wrong release for a primary context, so the runtime releases it itself at
exit; and PyCUDA's objects call CUDA when they die, which a process forked
after CUDA started cannot use, so such a child keeps them.
"""

import atexit
import ctypes
import os
import threading
import weakref
from contextlib import contextmanager

from . import cublas, nvrtc
from .runtime import Runtime


class CudaRuntime(Runtime):
    """CUDA device `ordinal` through PyCUDA, in its primary context (the one
    CuPy and PyTorch use, so DLPack exchanges share memory)."""

    def __init__(self, ordinal):
        import pycuda.driver as cuda
        self.cuda = cuda
        self.device = cuda.Device(ordinal)
        self.name = self.device.name()
        self.compute_capability = self.device.compute_capability()
        self.arch = "sm_{}{}".format(*self.compute_capability)
        self.sm_count = self.device.get_attribute(cuda.device_attribute.MULTIPROCESSOR_COUNT)
        self.total_memory = self.device.total_memory()
        self._context = None   # the primary context, once retained
        self._ready = False     # the stream, pool and cuBLAS handle made
        self._closed = False    # at exit
        self._forked = False    # in a child forked after the context was retained
        self._programs = weakref.WeakSet()
        self._lock = threading.Lock()

    @property
    def started(self):
        return self._ready and not (self._closed or self._forked)

    def _start(self):
        """Retain the primary context and make the stream, pool and cuBLAS
        handle in it; if making one fails, nothing stays pushed and the next
        call tries again."""
        from pycuda.tools import DeviceMemoryPool
        with self._lock:
            if self._ready:
                return
            if self._context is None:
                self._context = self.device.retain_primary_context()
                atexit.register(self._close)
                os.register_at_fork(after_in_child=self._after_fork)
            self._context.push()
            try:
                stream = self.cuda.Stream()
                pool = DeviceMemoryPool()
            finally:
                self.cuda.Context.pop()
            self.stream, self.pool, self.blas = stream, pool, cublas.Blas(stream.handle)
            self._ready = True

    @contextmanager
    def active(self):
        if self._forked:
            raise RuntimeError(f"{self.name}: a process forked after the device started cannot use CUDA "
                               "(start it with multiprocessing's 'spawn' or 'forkserver' method)")
        if self._closed:
            raise RuntimeError(f"{self.name}: the CUDA runtime is closed (the interpreter is exiting)")
        if not self._ready:
            self._start()
        self._context.push()
        try:
            yield
        finally:
            self.cuda.Context.pop()

    def _close(self):
        # At exit, while PyCUDA still works: wait for the queued work, give
        # the pool's memory and the cuBLAS handle back, release the context.
        # Memory still held by arrays is the process's until it ends.
        if self._forked:
            return
        if self._ready:
            with self.active():
                self.stream.synchronize()
                self.blas.close()
                self.pool.stop_holding()
        self._closed = True
        self._context.detach()

    def _after_fork(self):
        # The driver refuses a forked child, and PyCUDA's context, stream,
        # pool, modules and memory call it when they die: the child keeps them.
        self._forked = True
        for thing in (self._context, getattr(self, "stream", None), getattr(self, "pool", None)):
            _keep(thing)
        for program in list(self._programs):
            _keep(program.function)   # which keeps its module

    def alloc(self, nbytes):
        try:
            block = self.pool.allocate(nbytes)
        except self.cuda.MemoryError:
            self.pool.free_held()
            try:
                block = self.pool.allocate(nbytes)
            except self.cuda.MemoryError:
                raise MemoryError(f"out of device memory allocating {nbytes} bytes") from None
        return _Allocation(block, self)

    def free_held(self):
        if self.started:
            with self.active():
                self.pool.free_held()

    def copy_htod(self, ptr, host):
        self.cuda.memcpy_htod_async(ptr, host, self.stream)

    def copy_dtoh(self, host, ptr):
        self.cuda.memcpy_dtoh_async(host, ptr, self.stream)

    def copy_dtod(self, dst, src, nbytes):
        self.cuda.memcpy_dtod_async(dst, src, nbytes, self.stream)

    def memset(self, ptr, byte, nbytes):
        self.cuda.memset_d8_async(ptr, byte, nbytes, self.stream)

    def synchronize(self):
        self.stream.synchronize()

    def compile(self, source):
        return nvrtc.compile_cubin(source, self.arch)

    def load(self, binary, names):
        module = self.cuda.module_from_buffer(binary)
        programs = {name: _CudaProgram(self, module.get_function(name)) for name in names}
        self._programs.update(programs.values())
        return programs

    def matmul(self, a_ptr, b_ptr, out_ptr, calls, dtype_name):
        self.blas.matmul(a_ptr, b_ptr, out_ptr, calls, dtype_name)


class _Allocation:
    """A block of the runtime's memory pool, given back with the context
    current on whichever thread drops it (the last array, a DLPack
    consumer's deleter, the garbage collector)."""

    __slots__ = ("block", "runtime")

    def __init__(self, block, runtime):
        self.block = block
        self.runtime = runtime

    def __int__(self):
        return int(self.block)

    def __del__(self):
        runtime = self.runtime
        if runtime._forked:
            _keep(self.block)
        elif not runtime._closed:
            with runtime.active():
                self.block.free()


def _keep(thing):
    """Keep `thing` alive for the life of the process (a reference nothing drops)."""
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(thing))


class _CudaProgram:
    """A loaded kernel, launched on its runtime's stream."""

    def __init__(self, runtime, function):
        self.runtime = runtime
        self.function = function

    def __call__(self, args, grid, block):
        self.function(*args, grid=grid, block=block, stream=self.runtime.stream)
