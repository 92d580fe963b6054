"""The GPU executor (PyCUDA), registered only where it can run.

`register_devices()` registers a `cuda:<n>` device for each CUDA device when
PyCUDA imports and the driver reports devices; elsewhere it does nothing, so
`import arrayx` needs no GPU, no driver and no PyCUDA. The code generator
(codegen.py, expressions.py, ops.cuh) and NVRTC (nvrtc.py) need none of them
either: CI compiles every kernel family on machines without a GPU.
"""

from ..device import Device


def cuda_devices():
    """The number of usable CUDA devices (0 without PyCUDA or a driver)."""
    try:
        import pycuda.driver as cuda
    except ImportError:   # no PyCUDA, or no libcuda.so (no driver)
        return 0
    try:
        cuda.init()
        return cuda.Device.count()
    except cuda.Error:    # a driver without devices, or a stub library
        return 0


def register_devices(register):
    """Call `register(device, executor)` for each CUDA device."""
    count = cuda_devices()
    if not count:
        return
    from .executor import GPUExecutor
    for ordinal in range(count):
        register(Device(f"cuda:{ordinal}"), GPUExecutor(ordinal))
