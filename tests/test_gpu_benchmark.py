"""benchmarks/gpu.py --smoke on the emulated cuda:0: every workload once, at
tiny sizes, its results checked against NumPy, so that the benchmark keeps
running between the times it runs on a GPU (it once failed before its first
row, calling attributes the executor had moved to its runtime).
test_gpu_runtime.py runs it on PyCUDA over the stand-in driver."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from arrayx._gpu.emulation import host_kernels

BENCHMARK = Path(__file__).parent.parent / "benchmarks" / "gpu.py"
WORKLOADS = ["logistic", "axpy", "tanh(x*y+x/y)", "poly Horner", "sum", "6-op chain", "row softmax", "GEMM",
             "cached plan"]


def check_smoke_output(stdout):
    rows = [line for line in stdout.splitlines() if line.startswith(tuple(WORKLOADS))]
    assert [w for w in WORKLOADS if not any(r.startswith(w) for r in rows)] == []
    assert "Goals met: 0 of 0 (--smoke" in stdout


@pytest.mark.skipif(host_kernels.compiler() is None, reason="no g++ to emulate a CUDA device")
def test_gpu_benchmark_smoke_run_checks_every_workload_on_the_emulated_device():
    env = {k: v for k, v in os.environ.items() if k not in ("ARRAYX_DEVICE", "ARRAYX_TF32")}
    env["ARRAYX_GPU_EMULATION"] = "1"
    result = subprocess.run([sys.executable, str(BENCHMARK), "--smoke"], env=env, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Device: cuda:0, emulated CUDA device")
    check_smoke_output(result.stdout)
