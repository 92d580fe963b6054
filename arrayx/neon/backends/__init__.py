"""neon.backends over arrayx: `gen_backend` and the backend registry.

    from arrayx.neon.backends import gen_backend
    be = gen_backend('cpu', rng_seed=0)     # NervanaCPU; also NervanaObject.be

Backends: 'cpu' and 'mkl' run on arrayx's CPU executor; 'gpu' on its CUDA
executor, and raises a RuntimeError where arrayx has no CUDA device.
"""

import atexit
import logging

import numpy as np

from arrayx.neon import NervanaObject

from . import nervanacpu, nervanagpu, nervanamkl  # noqa: F401  (they register the backends)
from .backend import Backend, Block, OpTreeNode, Tensor  # noqa: F401
from .autodiff import Autodiff  # noqa: F401  (neon.backends.Autodiff)

logger = logging.getLogger(__name__)

_cleanup_registered = False


def backend_choices():
    """The names of the available backends."""
    return Backend.backend_choices()


def allocate_backend(name, **kargs):
    """An instance of the backend registered as `name` (keyword arguments go to its class)."""
    return Backend.allocate_backend(name, **kargs)


def gen_backend(backend='cpu', rng_seed=None, datatype=np.float32, batch_size=0, stochastic_round=False,
                device_id=0, max_devices=1, compat_mode=None, deterministic_update=None, deterministic=None):
    """Construct a backend, make it `NervanaObject.be` and return it.

    A backend generated earlier is cleaned up and replaced first.

    Arguments:
        backend (str): 'cpu', 'mkl' or 'gpu'.
        rng_seed (int, optional): seed of the backend's random number generator.
        datatype (dtype): default element type, np.float16, np.float32 or np.float64.
        batch_size (int): the batch size (`be.bsz`).
        stochastic_round, device_id, max_devices: passed to the backend (GPU options).
        compat_mode (str, optional): 'caffe' for caffe-compatible conv/pool sizes.
        deterministic_update, deterministic: deprecated; a warning is logged.
    """
    global _cleanup_registered
    if NervanaObject.be is not None:
        cleanup_backend()
    elif not _cleanup_registered:
        atexit.register(cleanup_backend)
        _cleanup_registered = True

    if deterministic_update is not None or deterministic is not None:
        logger.warning('deterministic_update and deterministic args are deprecated in favor of '
                       'specifying random seed')
        deterministic = None

    be = Backend.allocate_backend(backend, rng_seed=rng_seed, default_dtype=datatype,
                                  stochastic_round=stochastic_round, device_id=device_id,
                                  num_devices=max_devices, compat_mode=compat_mode,
                                  deterministic=deterministic)
    logger.info("Backend: {}, RNG seed: {}".format(backend, rng_seed))
    NervanaObject.be = be
    be.bsz = batch_size
    return be


def cleanup_backend():
    """Release the current backend and clear `NervanaObject.be`."""
    if NervanaObject.be is None:
        return
    NervanaObject.be.cleanup_backend()
    NervanaObject.be = None


__all__ = ["gen_backend", "backend_choices", "allocate_backend", "cleanup_backend", "Backend", "Tensor",
           "OpTreeNode", "Block"]
