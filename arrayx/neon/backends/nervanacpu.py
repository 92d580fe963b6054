"""neon's CPU backend over arrayx: `NervanaCPU` runs on arrayx's CPU executor
(NumPy), its tensors are `CPUTensor`s."""

import logging

import numpy as np

from .backend import Backend, OpCollection, OpTreeNode, Tensor  # noqa: F401  (neon exports these here)

logger = logging.getLogger(__name__)


class CPUTensor(Tensor):
    """A Tensor of the CPU backend (see `backend.Tensor`)."""


class NervanaCPU(Backend):
    """The CPU backend: every op-tree assignment is one arrayx graph run by the
    CPU executor. Arguments are those of neon's NervanaCPU; `num_devices`,
    `stochastic_round`, `device_id`, `hist_bins` and `hist_offset` are accepted
    and ignored."""

    backend_name = "cpu"
    tensor_cls = CPUTensor

    def __init__(self, rng_seed=None, default_dtype=np.float32, hist_bins=64, hist_offset=-48,
                 compat_mode=None, num_devices=None, stochastic_round=None, device_id=None,
                 deterministic=None):
        super().__init__(rng_seed, default_dtype, compat_mode=compat_mode, deterministic=deterministic)
        self.device_type = 0
        self.device_id = 0
        self.hist_bins, self.hist_offset = hist_bins, hist_offset
        self.use_pinned_mem = False
        logger.info("Initialized NervanaCPU (arrayx CPU executor)")


Backend.backends["cpu"] = NervanaCPU
