"""The runtime users get: PyCUDA (context, memory pool, stream, module
loading), NVRTC (compilation) and cuBLAS (GEMM). See runtime.py."""

import threading
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
        self.compute_capability = self.device.compute_capability()
        self.arch = "sm_{}{}".format(*self.compute_capability)
        self.sm_count = self.device.get_attribute(cuda.device_attribute.MULTIPROCESSOR_COUNT)
        self.total_memory = self.device.total_memory()
        self._context = None
        self._lock = threading.Lock()

    @property
    def started(self):
        return self._context is not None

    @contextmanager
    def active(self):
        with self._lock:
            if self._context is None:
                from pycuda.tools import DeviceMemoryPool
                self._context = self.device.retain_primary_context()
                self._context.push()
                self.stream = self.cuda.Stream()
                self.pool = DeviceMemoryPool()
                self.blas = cublas.Blas(self.stream.handle)
                self.cuda.Context.pop()
        self._context.push()
        try:
            yield
        finally:
            self.cuda.Context.pop()

    def alloc(self, nbytes):
        try:
            return self.pool.allocate(nbytes)
        except self.cuda.MemoryError:
            self.pool.free_held()
            try:
                return self.pool.allocate(nbytes)
            except self.cuda.MemoryError:
                raise MemoryError(f"out of device memory allocating {nbytes} bytes") from None

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
        return {name: _CudaProgram(self, module.get_function(name)) for name in names}

    def matmul(self, a_ptr, b_ptr, out_ptr, calls, dtype_name):
        self.blas.matmul(a_ptr, b_ptr, out_ptr, calls, dtype_name)


class _CudaProgram:
    """A loaded kernel, launched on its runtime's stream."""

    def __init__(self, runtime, function):
        self.runtime = runtime
        self.function = function

    def __call__(self, args, grid, block):
        self.function(*args, grid=grid, block=block, stream=self.runtime.stream)
