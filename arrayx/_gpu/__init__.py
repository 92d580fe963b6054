"""The GPU executor, registered only where it can run.

`register_devices()` registers a `cuda:<n>` device for each CUDA device when
PyCUDA imports, the driver reports devices and NVRTC and cuBLAS load;
elsewhere it does nothing, so arrayx needs no GPU, no driver and no PyCUDA,
unless the environment variable ARRAYX_GPU_EMULATION=1 asks for an emulated
`cuda:0` (`emulated_device`, for CI). arrayx runs it when devices are first
asked for, not at import: it initializes CUDA, which a process forked after
that cannot use. The code generator (codegen.py, over the C expression
table of arrayx/renderer) and NVRTC (nvrtc.py) need none of them: CI
compiles every kernel family on machines without a GPU.
"""

import functools
import os

from ..device import Device


def cuda_devices():
    """(the number of usable CUDA devices, why there is none): (0, a reason)
    without PyCUDA, a driver or a device, (n, None) otherwise."""
    try:
        import pycuda.driver as cuda
    except ModuleNotFoundError:
        return 0, 'PyCUDA is not installed (pip install "arrayx[gpu]")'
    except ImportError as e:   # PyCUDA's extension could not load libcuda.so: no driver
        return 0, f"PyCUDA cannot load the CUDA driver ({e})"
    try:
        cuda.init()
        count = cuda.Device.count()
    except cuda.Error as e:    # a driver without devices, or a stub library
        return 0, f"PyCUDA found no CUDA device ({e})"
    return count, None if count else "PyCUDA found no CUDA device (the driver reports none)"


@functools.cache
def emulated_device():
    """(Device("cuda:0"), its executor) on the emulated CUDA device: one a
    process, so registering it again brings back the same executor."""
    from .emulation import EmulatedRuntime
    from .executor import GPUExecutor
    return Device("cuda:0"), GPUExecutor(EmulatedRuntime(), 0)


def runtime_libraries():
    """Why the CUDA runtime's libraries (NVRTC, which compiles every kernel,
    and cuBLAS, which runs matmul) cannot load, or None when they load."""
    from . import cublas, nvrtc
    try:
        nvrtc.library()
        cublas.library()
    except OSError as e:
        return str(e)
    return None


def register_devices(register, record_missing):
    """Call `register(device, executor)` for each CUDA device, or for the
    emulated one when ARRAYX_GPU_EMULATION=1 and there is none; without
    either, `record_missing("cuda", why)`, for the error that names a CUDA
    device."""
    count, why = cuda_devices()
    if count:
        missing = runtime_libraries()
        if missing:
            count, why = 0, f"PyCUDA found {count} CUDA device(s), but {missing}"
    if not count:
        if os.environ.get("ARRAYX_GPU_EMULATION") == "1":
            register(*emulated_device())
        else:
            record_missing("cuda", f"{why}; ARRAYX_GPU_EMULATION=1 gives an emulated cuda:0 (for tests, on the host)")
        return
    from .cuda_runtime import CudaRuntime
    from .executor import GPUExecutor
    for ordinal in range(count):
        register(Device(f"cuda:{ordinal}"), GPUExecutor(CudaRuntime(ordinal), ordinal))
