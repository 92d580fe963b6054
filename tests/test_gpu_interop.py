"""DLPack exchanges of CUDA memory with PyTorch and CuPy: these need a real
CUDA device (neither library can read the emulated device's memory) and the
library installed, and skip otherwise. The same export and import paths run
on the emulated device in test_gpu_executor.py, read by a consumer other
than the executor.
"""

import os

import numpy as np
import pytest

import standin_driver

import arrayx as xp
from arrayx import executors
from arrayx._gpu.emulation import EmulatedRuntime


@pytest.fixture
def real_gpu():
    """The first registered CUDA device that is a real GPU."""
    if os.environ.get(standin_driver.ENV):
        pytest.skip("the stand-in CUDA driver's memory is host memory, which PyTorch and CuPy cannot read")
    for device in executors.devices():
        if device.name.startswith("cuda:") and not isinstance(executors.executor_for(device).runtime, EmulatedRuntime):
            return device
    pytest.skip("no real CUDA device")


def rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(dtype)


def device_pointer(array):
    node = array._node
    xp.eval(array)
    return node.buffer.ptr


def test_dlpack_export_to_torch_shares_device_memory(real_gpu):
    torch = pytest.importorskip("torch")
    x = xp.asarray(rand(3, 4), device=real_gpu) * 2
    t = torch.from_dlpack(x)
    assert t.is_cuda and t.data_ptr() == device_pointer(x)
    np.testing.assert_array_equal(t.cpu().numpy(), np.asarray(x.to_device("cpu")))
    reversed_rows = torch.from_dlpack(xp.flip(x, axis=0))   # negative strides: exported as a copy
    np.testing.assert_array_equal(reversed_rows.cpu().numpy(), np.asarray(x.to_device("cpu"))[::-1])


def test_dlpack_import_from_torch_is_zero_copy(real_gpu):
    torch = pytest.importorskip("torch")
    t = torch.arange(12, dtype=torch.float32, device=f"cuda:{int(real_gpu.name[5:])}").reshape(3, 4).T
    y = xp.from_dlpack(t)
    assert y.device == real_gpu and y.shape == (4, 3) and device_pointer(y) == t.data_ptr()
    np.testing.assert_array_equal(np.asarray((y + 1).to_device("cpu")), t.cpu().numpy() + 1)
    on_cpu = xp.from_dlpack(t, device="cpu")
    np.testing.assert_array_equal(np.asarray(on_cpu), t.cpu().numpy())
    with pytest.raises(ValueError, match="copy=False but x is on cuda"):
        xp.from_dlpack(t, device="cpu", copy=False)


def test_dlpack_round_trip_with_cupy(real_gpu):
    cupy = pytest.importorskip("cupy")
    c = cupy.arange(10, dtype=cupy.float64) ** 2
    y = xp.from_dlpack(c)
    assert device_pointer(y) == c.data.ptr
    back = cupy.from_dlpack(y * 1)
    cupy.testing.assert_array_equal(back, c)
