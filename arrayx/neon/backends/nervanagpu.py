"""neon's GPU backend over arrayx: `NervanaGPU` runs on an arrayx CUDA device.

The Backend methods are device-agnostic arrayx calls, so on a CUDA device
each op-tree assignment becomes one arrayx graph whose elementwise parts the
GPU executor compiles into fused kernels (what neon's NervanaGPU generated on
the fly) and whose dots run on cuBLAS.
"""

import numpy as np

import arrayx as xp
from arrayx import executors

from .backend import Backend, Tensor


class GPUTensor(Tensor):
    """A Tensor of the GPU backend (see `backend.Tensor`)."""


def gpu_devices():
    """The arrayx CUDA devices, in ordinal order."""
    return [d for d in xp.__array_namespace_info__().devices() if d.name.startswith("cuda:")]


class NervanaGPU(Backend):
    """gen_backend('gpu'): the backend on arrayx device `cuda:<device_id>`.

    Arguments are neon 2.x's. `default_dtype` is float16 or float32, as in
    neon. Raises RuntimeError when arrayx has no CUDA device (PyCUDA and an
    NVIDIA GPU are needed) and ValueError for stochastic rounding, which arrayx
    does not implement (neon's own constructor asserted it off). `bench`,
    `scratch_size`, the histogram arguments, `enable_winograd` and
    `cache_dir` are kept as attributes for code that reads them.
    """

    backend_name = "gpu"
    tensor_cls = GPUTensor

    def __init__(self, rng_seed=None, default_dtype=np.float32, stochastic_round=False, deterministic=None,
                 device_id=0, bench=False, scratch_size=0, hist_bins=64, hist_offset=-48, compat_mode=None,
                 enable_winograd=True, cache_dir=None, num_devices=None):
        if default_dtype not in (np.float16, np.float32):
            raise ValueError(f"NervanaGPU: default data type must be float16 or float32, got {default_dtype!r}")
        if stochastic_round:
            raise ValueError(f"NervanaGPU: stochastic_round={stochastic_round!r} is not supported by arrayx; "
                             "results are rounded to nearest")
        devices = gpu_devices()
        if not devices:
            available = [d.name for d in xp.__array_namespace_info__().devices()]
            raise RuntimeError(
                "gen_backend('gpu'): no GPU device is available: arrayx found no CUDA device (PyCUDA and an "
                f"NVIDIA GPU are needed; registered devices: {available}); use backend='cpu' or 'mkl'")
        device_id = device_id or 0
        if not 0 <= device_id < len(devices):
            raise RuntimeError(f"gen_backend('gpu'): device_id {device_id} is out of range; "
                               f"{len(devices)} GPU device(s) are available")
        self.device = devices[device_id]
        self.device_type = 1
        self.device_id = device_id
        executor = executors.executor_for(self.device)
        self.compute_capability = executor.compute_capability
        self.sm_count = executor.sm_count
        self.use_cudac_kernels = False
        self.round_mode = 0
        self.bench = bench
        self.scratch_size, self.scratch_offset = scratch_size, 0
        self.hist_bins, self.hist_offset = hist_bins, hist_offset
        self.hist_map, self.hist_idx, self.hist_max = {}, 0, 4 * 4096
        self.enable_winograd = enable_winograd
        self.cache_dir = cache_dir
        self.stream = None   # neon's default: work goes to the (executor's) stream
        self.warmup = False
        super().__init__(rng_seed, default_dtype, compat_mode=compat_mode, deterministic=deterministic)


Backend.backends["gpu"] = NervanaGPU
