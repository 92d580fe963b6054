"""What the GPU executor asks of a CUDA device: the runtime seam.

tinygrad's runtime/ops_cuda.py is the model: an allocator, a compiler, a
program launcher, a stream and, here, the BLAS call the executor makes. The
executor, the code generator and the op semantics sit above it and do not
know which runtime they run on. Two implement it: `CudaRuntime`
(cuda_runtime.py: PyCUDA, NVRTC and cuBLAS, what users get) and
`EmulatedRuntime` (emulation/: host memory addressed like device memory and
the generated CUDA compiled for the host, so CI runs the executor without a
GPU).

Addresses are ints. Work is queued on the runtime's one stream, in order;
`synchronize` waits for it. Except `started`, `active` and `free_held`,
every method is called with the runtime active on the calling thread.
"""

from abc import ABC, abstractmethod


class Runtime(ABC):
    """One CUDA device: memory, kernels, a stream and GEMM."""

    # The device's name, (major, minor), the number of multiprocessors
    # (launch shapes use it) and the bytes of device memory.
    name = ""
    compute_capability = (0, 0)
    sm_count = 1
    total_memory = 0

    @property
    @abstractmethod
    def started(self):
        """Whether `active` has set the device up (before that, there is no
        work to wait for and no memory to free)."""

    @abstractmethod
    def active(self):
        """A context manager making the device current on this thread,
        setting it up on first use."""

    @abstractmethod
    def alloc(self, nbytes):
        """A new allocation of `nbytes`: `int(allocation)` is its address,
        and the memory is the allocation's until it is garbage-collected
        (views share it, so nothing frees it explicitly). Raises MemoryError
        when the device is full even after `free_held`."""

    @abstractmethod
    def free_held(self):
        """Give the device the memory kept for reuse after allocations died."""

    @abstractmethod
    def copy_htod(self, ptr, host):
        """Queue a copy of the contiguous NumPy array `host` to address `ptr`."""

    @abstractmethod
    def copy_dtoh(self, host, ptr):
        """Queue a copy from address `ptr` into the contiguous NumPy array `host`."""

    @abstractmethod
    def copy_dtod(self, dst, src, nbytes):
        """Queue a copy of `nbytes` from address `src` to address `dst`."""

    @abstractmethod
    def memset(self, ptr, byte, nbytes):
        """Queue setting `nbytes` at address `ptr` to the value `byte`."""

    @abstractmethod
    def synchronize(self):
        """Wait until the work queued on the stream has finished."""

    @abstractmethod
    def compile(self, source):
        """The loadable binary of CUDA C++ `source` (cached by source)."""

    @abstractmethod
    def load(self, binary, names):
        """{name: program} for the kernels `names` of `binary`. A program is
        called as `program(args, grid, block)`: it queues the kernel over
        grid (x, y) of blocks (x, 1, 1); `args` are NumPy scalars of the
        sizes of the kernel's parameters."""

    @abstractmethod
    def matmul(self, a_ptr, b_ptr, out_ptr, calls, dtype_name):
        """Queue `cublas.plan_matmul`'s GEMM calls (column-major cuBLAS
        semantics, see cublas.GemmCall): out = a @ b."""
