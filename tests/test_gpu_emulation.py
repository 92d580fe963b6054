"""The emulated CUDA device (arrayx/_gpu/emulation) fails where a device
would: memory outside every allocation, GEMM arguments cuBLAS rejects,
launch shapes CUDA rejects, and a __syncthreads() only some threads reach.
(test_gpu_executor.py runs the executor on it.)"""

import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from arrayx._gpu.cublas import CUBLAS_OP_N, GemmCall
from arrayx._gpu.emulation import EmulatedRuntime, host_kernels

if host_kernels.compiler() is None:  # pragma: no cover - the CI machine has g++
    pytest.skip("no g++ to compile kernels for the emulated device", allow_module_level=True)

# A kernel in the form codegen emits; threads 0 and 1 alone reach the barrier.
SOURCE = '''extern "C" __global__ void ax_test_fill(float* __restrict__ out, long long n)
{
    for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = i;
}
extern "C" __global__ void ax_test_diverge(float* __restrict__ out)
{
    if (threadIdx.x < 2) __syncthreads();
}
'''


@pytest.fixture(scope="module")
def device():
    runtime = EmulatedRuntime()
    with runtime.active():   # as the executor calls it
        yield runtime, runtime.load(runtime.compile(SOURCE), ["ax_test_fill", "ax_test_diverge"])


def test_calls_outside_active_fail_as_without_a_current_context():
    # A CUDA driver fails them (no current context): so must the emulated device.
    runtime = EmulatedRuntime()
    with pytest.raises(RuntimeError, match=r"alloc outside the runtime's active\(\) on this thread"):
        runtime.alloc(16)
    with runtime.active():
        allocation = runtime.alloc(16)
    with pytest.raises(RuntimeError, match="copy_htod outside"):
        runtime.copy_htod(int(allocation), np.zeros(4, np.float32))
    errors = []
    with runtime.active():   # this thread's, not another's
        worker = threading.Thread(target=lambda: errors.append(pytest.raises(RuntimeError, runtime.synchronize)))
        worker.start()
        worker.join()
    assert "synchronize outside" in str(errors[0].value)


def test_memory_round_trips_and_copies_check_bounds(device):
    runtime, _ = device
    a, b = runtime.alloc(16), runtime.alloc(16)
    runtime.copy_htod(int(a), np.arange(4, dtype=np.float32))
    runtime.copy_dtod(int(b), int(a) + 4, 12)
    runtime.memset(int(b) + 12, 0, 4)
    out = np.empty(4, np.float32)
    runtime.copy_dtoh(out, int(b))
    np.testing.assert_array_equal(out, [1, 2, 3, 0])
    with pytest.raises(IndexError, match="leaves the allocation"):
        runtime.copy_dtod(int(b), int(a) + 8, 12)
    with pytest.raises(MemoryError, match="out of device memory"):
        runtime.alloc(runtime.total_memory)


def test_kernels_run_over_the_grid_and_bad_launches_are_errors(device):
    runtime, programs = device
    out = runtime.alloc(4 * 1000)
    programs["ax_test_fill"]([np.uintp(int(out)), np.int64(1000)], grid=(3, 1), block=(32, 1, 1))
    host = np.empty(1000, np.float32)
    runtime.copy_dtoh(host, int(out))
    np.testing.assert_array_equal(host, np.arange(1000))
    with pytest.raises(RuntimeError, match="invalid launch configuration"):
        programs["ax_test_fill"]([np.uintp(int(out)), np.int64(1000)], grid=(1, 1), block=(2048, 1, 1))
    with pytest.raises(IndexError, match="in no live allocation"):
        programs["ax_test_fill"]([np.uintp(8), np.int64(1000)], grid=(1, 1), block=(32, 1, 1))
    with pytest.raises(RuntimeError, match="did not all reach the same __syncthreads"):
        programs["ax_test_diverge"]([np.uintp(int(out))], grid=(1, 1), block=(4, 1, 1))


def test_gemm_reads_column_major_operands_and_checks_leading_dimensions(device):
    runtime, _ = device
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    pointers = []
    for host in (a, b, np.zeros((2, 4))):
        allocation = runtime.alloc(host.nbytes)
        runtime.copy_htod(int(allocation), host)
        pointers.append(allocation)
    # Row-major out = a @ b is column-major out^T = b^T a^T: cuBLAS's A is b.
    call = GemmCall(CUBLAS_OP_N, CUBLAS_OP_N, 4, 2, 3, 4, 3, 4, 0, 0, 0, 1, 0, 0, 0)
    runtime.matmul(*[int(p) for p in pointers], [call], "float64")
    out = np.empty((2, 4))
    runtime.copy_dtoh(out, int(pointers[2]))
    np.testing.assert_array_equal(out, a @ b)
    with pytest.raises(RuntimeError, match="CUBLAS_STATUS_INVALID_VALUE"):
        runtime.matmul(*[int(p) for p in pointers], [call._replace(lda=3)], "float64")


def test_environment_registers_the_emulated_device_as_the_default():
    # A fresh process: registration happens at `import arrayx`.
    script = ("import numpy as np, arrayx as xp\n"
              "x = xp.linspace(0, 1, 5) * 2 + 1\n"
              "print(x.device.name, np.asarray(x.to_device('cpu')).tolist())\n")
    env = dict(os.environ, ARRAYX_GPU_EMULATION="1", ARRAYX_DEVICE="cuda:0")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    device, values = out.stdout.split(" ", 1)
    assert device == "cuda:0"
    np.testing.assert_allclose(json.loads(values), np.linspace(0, 1, 5) * 2 + 1, rtol=1e-15)
