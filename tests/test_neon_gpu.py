"""neon's GPU backend, gen_backend('gpu'), against the CPU backend.

These run on the GPU executor on conftest's `gpu`: a CUDA device, else the
emulated `cuda:0` (arrayx/_gpu/emulation), which runs the executor's
kernels, transfers and GEMM calls on the host.
"""

import numpy as np
import pytest

from arrayx import executors
from arrayx.neon import NervanaObject
from arrayx.neon.backends import Autodiff, cleanup_backend, gen_backend
from arrayx.neon.backends.nervanagpu import GPUTensor, NervanaGPU

# float32 with different summation orders (cuBLAS, block reductions):
# a few ulps of the largest partial sum.
TOL = dict(rtol=1e-5, atol=1e-5)


@pytest.fixture
def backends(gpu):
    """(gpu backend, cpu backend) with the same seed; the gpu one is NervanaObject.be."""
    cpu = gen_backend('cpu', rng_seed=0)
    be = gen_backend('gpu', rng_seed=0)
    yield be, cpu
    cleanup_backend()


def test_gen_backend_gpu_gives_nervanagpu_on_the_cuda_device(gpu, backends):
    be, _ = backends
    assert isinstance(be, NervanaGPU) and NervanaObject.be is be
    assert be.device is gpu and (be.device_type, be.device_id) == (1, 0)
    executor = executors.executor_for(gpu)
    assert be.compute_capability == executor.compute_capability and be.sm_count == executor.sm_count
    assert (be.default_dtype, be.bench, be.round_mode, be.hist_bins, be.hist_offset) == \
        (np.float32, False, 0, 64, -48)
    t = be.array(np.ones((2, 3)))
    assert isinstance(t, GPUTensor) and t._read().device is gpu


def test_optrees_and_dots_match_the_cpu_backend(backends):
    rng = np.random.default_rng(1)
    a, b = rng.uniform(-1, 1, (16, 32)).astype(np.float32), rng.uniform(0.5, 2, (32, 8)).astype(np.float32)
    results = []
    for be in backends:
        x, w = be.array(a), be.array(b)
        y = be.empty((16, 8))
        be.compound_dot(x, w, y)
        z = be.empty((16, 8))
        z[:] = be.tanh(y) * 2 + be.exp(-y) / (1 + be.square(y))
        s = be.empty((16, 1))
        s[:] = be.sum(z, axis=1) + be.max(z, axis=1)
        results.append([y.get(), z.get(), s.get()])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, **TOL)


def test_autodiff_gradients_match_the_cpu_backend(backends):
    rng = np.random.default_rng(2)
    a = rng.uniform(0.5, 1.5, (4, 6)).astype(np.float32)
    grads = []
    for be in backends:
        x, w = be.array(a), be.array(a.T.copy())
        cost = be.sum(be.log(be.dot(x, w) + 1) * x[:, :4], axis=None)
        grads.append(Autodiff(cost, be).get_grad_asnumpyarray([x, w]))
    for got, want in zip(*grads):
        np.testing.assert_allclose(got, want, **TOL)


def test_unsupported_constructor_arguments_are_errors(gpu):
    with pytest.raises(ValueError, match="NervanaGPU: default data type must be float16 or float32"):
        gen_backend('gpu', datatype=np.float64)
    with pytest.raises(ValueError, match="NervanaGPU: stochastic_round=True is not supported"):
        gen_backend('gpu', stochastic_round=True)
    with pytest.raises(RuntimeError, match="device_id 7 is out of range"):
        gen_backend('gpu', device_id=7)
    assert NervanaObject.be is None
