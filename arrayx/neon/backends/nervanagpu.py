"""neon's GPU backend over arrayx.

arrayx has no GPU executor yet, so creating a `NervanaGPU` raises a
RuntimeError that says so. When an executor registers a non-CPU device, the
backend runs on it: the Backend methods are device-agnostic arrayx calls.
"""

import numpy as np

import arrayx as xp

from .backend import Backend, Tensor


class GPUTensor(Tensor):
    """A Tensor of the GPU backend (see `backend.Tensor`)."""


def gpu_devices():
    """The arrayx devices other than the CPU (one per GPU an executor registered)."""
    return [d for d in xp.__array_namespace_info__().devices() if d.name != "cpu"]


class NervanaGPU(Backend):
    """gen_backend('gpu'): the backend on an arrayx GPU device.

    Raises RuntimeError when no GPU device is available (arrayx has no GPU
    executor yet). `stochastic_round`, `bench`, `scratch_size`, the histogram
    and winograd arguments are accepted and ignored.
    """

    backend_name = "gpu"
    tensor_cls = GPUTensor

    def __init__(self, rng_seed=None, default_dtype=np.float32, stochastic_round=False, device_id=0,
                 bench=False, scratch_size=0, hist_bins=64, hist_offset=-48, compat_mode=None,
                 enable_winograd=True, deterministic=None, num_devices=None):
        devices = gpu_devices()
        if not devices:
            available = [d.name for d in xp.__array_namespace_info__().devices()]
            raise RuntimeError(
                "gen_backend('gpu'): no GPU device is available: arrayx has no GPU executor yet "
                f"(registered devices: {available}); use backend='cpu' or 'mkl'")
        device_id = device_id or 0
        if not 0 <= device_id < len(devices):
            raise RuntimeError(f"gen_backend('gpu'): device_id {device_id} is out of range; "
                               f"{len(devices)} GPU device(s) are available")
        self.device = devices[device_id]
        self.device_id = device_id
        self.device_type = 1
        super().__init__(rng_seed, default_dtype, compat_mode=compat_mode, deterministic=deterministic)


Backend.backends["gpu"] = NervanaGPU
