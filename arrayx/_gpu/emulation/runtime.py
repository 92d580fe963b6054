"""The emulated CUDA device: the runtime seam (runtime.py) over host memory.

Device memory is host memory addressed like device memory: an allocation is
a NumPy byte array whose real address is the device address, kept in a
table, so copies and GEMM operands are bounds-checked against the
allocation they start in and kernels read and write through the very
addresses and strides the executor computed (a wrong offset shows as a wrong
result, an error or a crash, never as silently right). New memory is filled
with 0xff bytes (NaN, or -1), as uninitialized device memory is not zeros.
Kernels are the generated CUDA compiled for the host (host_kernels.py) and
run over the launch's real grid and block shapes. GEMM is NumPy's, over the
pointers, transposes, leading dimensions and batch strides the cuBLAS
binding would pass. Work runs when it is queued, one kernel at a time.
"""

import bisect
import os
import threading
import weakref
from contextlib import contextmanager

import numpy as np

from ..cublas import CUBLAS_OP_N
from ..runtime import Runtime
from .host_kernels import HostKernels

# The emulated device's memory (or the host's, if less): a budget, which a
# test can exceed without the host allocating it.
DEFAULT_MEMORY = 4 << 30
# CUDA's launch limits: threads per block, blocks along x and along y.
MAX_BLOCK = 1024
MAX_GRID = (2**31 - 1, 65535)


class HostAllocation:
    """Emulated device memory: `int(allocation)` is its address."""

    __slots__ = ("memory", "__weakref__")

    def __init__(self, nbytes):
        self.memory = np.full(nbytes, 0xFF, np.uint8)

    def __int__(self):
        return self.memory.ctypes.data


class EmulatedRuntime(Runtime):
    """A CUDA device emulated on the host (ARRAYX_GPU_EMULATION=1)."""

    name = "emulated CUDA device (host memory, kernels compiled by g++)"
    compute_capability = (9, 0)
    # Few multiprocessors, so that small tests already get grid-stride loops
    # and reductions split over blocks (their second pass).
    sm_count = 2
    # Set up at construction: nothing to wait for, nothing held for reuse.
    started = True

    def __init__(self, total_memory=None):
        self.total_memory = total_memory or min(DEFAULT_MEMORY, _host_memory())
        self.in_use = 0
        self._starts = []       # addresses of live allocations, sorted
        self._allocations = {}  # address -> weak reference to its HostAllocation
        self._lock = threading.Lock()
        # The grid walk and the kernels' statics serve one launch at a time.
        self._launch_lock = threading.Lock()
        self._active = threading.local()

    @contextmanager
    def active(self):
        # Only counted: the device needs no setting up, but a call outside
        # `active` fails as it would on a CUDA driver (no current context).
        self._active.depth = getattr(self._active, "depth", 0) + 1
        try:
            yield
        finally:
            self._active.depth -= 1

    def _check_active(self, call):
        if not getattr(self._active, "depth", 0):
            raise RuntimeError(f"emulated cuda: {call} outside the runtime's active() on this thread (a CUDA "
                               "driver fails it: no current context)")

    def alloc(self, nbytes):
        self._check_active("alloc")
        with self._lock:
            if self.in_use + nbytes > self.total_memory:
                raise MemoryError(f"out of device memory allocating {nbytes} bytes (emulated: "
                                  f"{self.in_use} of {self.total_memory} in use)")
            self.in_use += nbytes
        try:
            allocation = HostAllocation(nbytes)
        except MemoryError:   # the host's memory ran out first
            with self._lock:
                self.in_use -= nbytes
            raise
        address = int(allocation)
        with self._lock:
            bisect.insort(self._starts, address)
            self._allocations[address] = weakref.ref(allocation)
        weakref.finalize(allocation, self._forget, address, nbytes)
        return allocation

    def _forget(self, address, nbytes):
        with self._lock:
            del self._starts[bisect.bisect_left(self._starts, address)]
            del self._allocations[address]
            self.in_use -= nbytes

    def free_held(self):
        pass   # allocations are freed when they die: nothing is held

    def view(self, ptr, shape, dtype, strides):
        """A NumPy array (byte `strides`) over emulated device memory at
        `ptr`; IndexError when some of it lies outside the allocation `ptr`
        is in."""
        allocation = self._allocation_at(ptr)
        return array_in(allocation.memory, int(allocation), ptr, shape, dtype, strides)

    def _allocation_at(self, ptr):
        with self._lock:
            i = bisect.bisect_right(self._starts, ptr) - 1
            allocation = self._allocations[self._starts[i]]() if i >= 0 else None
        if allocation is None or ptr >= int(allocation) + allocation.memory.size:
            raise IndexError(f"emulated cuda: address {ptr:#x} is in no live allocation")
        return allocation

    def _bytes(self, ptr, nbytes):
        return self.view(ptr, (nbytes,), np.uint8, (1,))

    def copy_htod(self, ptr, host):
        self._check_active("copy_htod")
        self._bytes(ptr, host.nbytes)[...] = host.reshape(-1).view(np.uint8)

    def copy_dtoh(self, host, ptr):
        self._check_active("copy_dtoh")
        host.reshape(-1).view(np.uint8)[...] = self._bytes(ptr, host.nbytes)

    def copy_dtod(self, dst, src, nbytes):
        self._check_active("copy_dtod")
        self._bytes(dst, nbytes)[...] = self._bytes(src, nbytes)

    def memset(self, ptr, byte, nbytes):
        self._check_active("memset")
        self._bytes(ptr, nbytes)[...] = byte

    def synchronize(self):
        self._check_active("synchronize")   # work ran when it was queued

    def compile(self, source):
        return HostKernels(source)

    def load(self, binary, names):
        self._check_active("load")
        kernels = binary.load()
        return {name: _EmulatedProgram(self, kernels[name]) for name in names}

    def matmul(self, a_ptr, b_ptr, out_ptr, calls, dtype_name):
        self._check_active("matmul")
        gemm(self.view, a_ptr, b_ptr, out_ptr, calls, dtype_name)


def array_in(memory, start, ptr, shape, dtype, strides):
    """A NumPy array (byte `strides`) at address `ptr` of the bytes `memory`
    (a NumPy byte array at address `start`); IndexError when some of it lies
    outside them."""
    try:
        return np.ndarray(shape, dtype, buffer=memory, offset=ptr - start, strides=strides)
    except (TypeError, ValueError):
        raise IndexError(f"emulated cuda: {shape} {np.dtype(dtype).name} with byte strides {strides} at "
                         f"{ptr:#x} leaves the allocation of {memory.size} bytes at {start:#x}") from None


def gemm(view, a_ptr, b_ptr, out_ptr, calls, dtype_name):
    """cuBLAS's strided-batched GEMM calls (cublas.GemmCall) with NumPy:
    out = a @ b over the memory `view(ptr, shape, dtype, byte strides)`
    returns as NumPy arrays. The emulated device runs matmul with it, and
    the tests' stand-in cuBLAS its GEMM calls."""
    dtype = np.dtype(dtype_name)
    size = dtype.itemsize
    # cuBLAS computes float16 products in float32 (CUBLAS_COMPUTE_32F), rounding once.
    compute = np.float32 if dtype == np.float16 else dtype
    for c in calls:
        _check_gemm(c)
        # cuBLAS's A is our b and its B our a (cublas.GemmCall).
        A = _operand(view, b_ptr + c.a_offset * size, c.transa, c.m, c.k, c.lda, c.stride_a, c.batch, dtype)
        B = _operand(view, a_ptr + c.b_offset * size, c.transb, c.k, c.n, c.ldb, c.stride_b, c.batch, dtype)
        C = view(out_ptr + c.c_offset * size, (c.batch, c.m, c.n), dtype, (c.stride_c * size, size, c.ldc * size))
        C[...] = np.matmul(A.astype(compute), B.astype(compute))


def _operand(view, ptr, op, rows, cols, ld, stride, batch, dtype):
    """op(X), rows x cols, for each of `batch` matrices, as cuBLAS reads
    it: column-major X itself (op N: element (i, l) at i + l * ld), or
    the transpose of column-major X (op T: at l + i * ld)."""
    size = dtype.itemsize
    strides = (stride, 1, ld) if op == CUBLAS_OP_N else (stride, ld, 1)
    return view(ptr, (batch, rows, cols), dtype, tuple(s * size for s in strides))


class _EmulatedProgram:
    """A host-compiled kernel, launched with CUDA's checks of the launch."""

    def __init__(self, runtime, kernel):
        self.runtime = runtime
        self.kernel = kernel

    def __call__(self, args, grid, block):
        self.runtime._check_active("a launch")
        if not (1 <= block[0] <= MAX_BLOCK and tuple(block[1:]) == (1, 1)
                and all(1 <= g <= most for g, most in zip(grid, MAX_GRID))):
            raise RuntimeError(f"emulated cuda: invalid launch configuration grid={grid} block={block}")
        for value, pointer in zip(args, self.kernel.pointers):
            if pointer and value:
                self.runtime._allocation_at(int(value))
        with self.runtime._launch_lock:
            self.kernel(grid, block[0], args)


def _check_gemm(c):
    """cuBLAS's argument checks of a strided-batched GEMM."""
    lda_least = c.m if c.transa == CUBLAS_OP_N else c.k
    ldb_least = c.k if c.transb == CUBLAS_OP_N else c.n
    if (min(c.m, c.n, c.k, c.batch) < 0 or c.lda < max(1, lda_least) or c.ldb < max(1, ldb_least)
            or c.ldc < max(1, c.m)):
        raise RuntimeError(f"cuBLAS gemmStridedBatched: CUBLAS_STATUS_INVALID_VALUE ({c})")


def _host_memory():
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
