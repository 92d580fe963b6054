"""arrayx's CUDA runtime as it runs on a GPU: the real PyCUDA (built from its
source distribution), NVRTC's cubins and arrayx's cuBLAS binding, over the
stand-in CUDA driver and cuBLAS (tests/standin/, built by standin_driver.py),
which run the kernels' host code and keep the driver's rules: no work
without a current context, per-thread context stacks, freed memory invalid,
no module unloaded with launches queued, no CUDA in a child forked after
cuInit.

Each test runs a fresh process on the stand-in (PyCUDA's failures end
processes); the first runs the GPU executor's tests, neon's GPU backend's
and the namespace's table on cuda:0 there. They skip where the machine
cannot build the stand-in or PyCUDA (no compiler, no CUDA headers, no
PyPI); the test extra installs the headers.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import standin_driver
from test_gpu_benchmark import BENCHMARK, check_smoke_output

TESTS = Path(__file__).parent
# What a process that exits cleanly never prints.
ALARMS = ("terminate called", "PyCUDA WARNING", "PyCUDA ERROR", "stand-in CUDA driver:", "Exception ignored")


@pytest.fixture(scope="session")
def standin():
    """os.environ for a process on the stand-in driver."""
    try:
        driver, site = standin_driver.prepare()
    except standin_driver.Unavailable as e:
        pytest.skip(f"cannot build the stand-in CUDA driver and PyCUDA here: {e}")
    return standin_driver.environment(driver, site)


def run(standin, script, env=None, blas=True, timeout=300):
    """Run `script` in a process on the stand-in (installed first, with its
    cuBLAS unless not `blas`); its result, which must have exited with
    status 0 and printed no alarm."""
    prelude = f"import standin_driver\nstandin_driver.install(blas={blas})\n"
    result = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(script)], env=env or standin,
                            capture_output=True, text=True, timeout=timeout, cwd=TESTS.parent)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"exit status {result.returncode}:\n{output[-6000:]}"
    assert not [a for a in ALARMS if a in output], output[-6000:]
    return result


def test_gpu_tests_pass_on_pycuda_over_the_stand_in_driver(standin):
    # The executor's tests, neon's GPU backend and every case of the
    # namespace's device table on cuda:0 (conftest fails any test that breaks
    # a driver rule); the emulated device ran them in this process.
    files = ["test_gpu_executor.py", "test_neon_gpu.py", "test_devices.py", "test_transformers.py", "test_debug.py"]
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "gpu or cuda",
                             *[str(TESTS / f) for f in files]],
                            env=standin, capture_output=True, text=True, timeout=900, cwd=TESTS.parent)
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, result.stdout[-8000:] + result.stderr[-4000:]
    print(summary)   # the counts, for the log (pytest -s)
    assert " passed" in summary and "skipped" not in summary and "failed" not in summary


def test_the_runtime_is_pycuda_with_nvrtc_cubins_and_cublas_on_the_stand_in(standin):
    result = run(standin, """
        import numpy as np, arrayx as xp
        from arrayx import executors
        from arrayx._gpu import cublas
        from arrayx._gpu.cuda_runtime import CudaRuntime
        runtime = executors.executor_for(xp.Device("cuda:0")).runtime
        assert isinstance(runtime, CudaRuntime), runtime
        a = np.arange(12.0).reshape(3, 4)
        x = xp.asarray(a, device="cuda:0")
        np.testing.assert_array_equal(np.asarray((x @ x.T + xp.sum(x)).to_device("cpu")), a @ a.T + a.sum())
        assert cublas.library().standin_cublas_live_handles() == 1
        print(runtime.name)
    """)
    assert result.stdout.strip() == "arrayx stand-in CUDA device 0"


@pytest.mark.parametrize("thread", ["main", "worker"])
def test_an_array_dropped_outside_an_operation_gives_its_memory_back_and_the_process_exits_cleanly(standin, thread):
    # PyCUDA's pool takes a block back only with a context current on the
    # dropping thread; without one, C++ ended the process (std::terminate).
    run(standin, f"""
        import threading
        import numpy as np, arrayx as xp
        import standin_driver

        def drop():
            x = xp.asarray(np.arange(12.0), device="cuda:0")
            assert np.asarray(x.to_device("cpu")).sum() == 66.0
            del x
            xp.debug.free_held_memory()

        drop()   # the first run allocates what the pool keeps
        before = standin_driver.driver().standin_allocation_count()
        if "{thread}" == "worker":
            worker = threading.Thread(target=drop)
            worker.start()
            worker.join()
        else:
            drop()
        assert standin_driver.driver().standin_allocation_count() == before
        kept = xp.asarray(np.ones(3), device="cuda:0") * 2   # alive at exit
    """)


def test_import_then_fork_leaves_the_child_able_to_use_cuda(standin):
    # A child forked after the parent initialized CUDA cannot use it;
    # `import arrayx` must not be that initialization.
    run(standin, """
        import os
        import numpy as np, arrayx as xp

        def total():
            return float(xp.sum(xp.asarray(np.arange(5.0), device="cuda:0")))

        pid = os.fork()
        if pid == 0:
            os._exit(0 if total() == 10.0 else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, "the forked child could not use CUDA"
        assert total() == 10.0
    """)


def test_a_child_forked_after_the_device_started_refuses_cuda_and_exits_cleanly(standin):
    # The driver refuses the child, and PyCUDA's objects it inherited call the
    # driver when they die: dropping an inherited array once ended the child.
    run(standin, """
        import gc, os, sys
        import numpy as np, arrayx as xp
        x = xp.asarray(np.arange(5.0), device="cuda:0") * 2
        assert float(xp.sum(x)) == 20.0
        pid = os.fork()
        if pid == 0:
            del x
            gc.collect()
            try:
                xp.asarray(np.ones(2), device="cuda:0")
            except RuntimeError as e:
                sys.exit(0 if "a process forked after the device started cannot use CUDA" in str(e) else 2)
            sys.exit(3)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, os.waitstatus_to_exitcode(status)
        assert float(xp.sum(x)) == 20.0
    """)


@pytest.mark.parametrize("missing", ["NVRTC", "cuBLAS"])
def test_without_nvrtc_or_cublas_no_cuda_device_is_offered(standin, missing):
    env = dict(standin)
    if missing == "cuBLAS":   # the stand-in cuBLAS is found through them
        env.pop("CUDA_PATH")
        env.pop("CUDA_HOME")
    run(standin, f"""
        import numpy as np, pytest, arrayx as xp
        from arrayx._gpu import nvrtc
        if "{missing}" == "NVRTC":
            nvrtc._candidates = lambda: iter([])
        assert "cuda:0" not in [d.name for d in xp.__array_namespace_info__().devices()]
        with pytest.raises(ValueError, match="no device 'cuda:0' here: PyCUDA found 1 CUDA device.s., but {missing}"):
            xp.asarray(np.ones(2), device="cuda:0")
    """, env=env, blas=missing != "cuBLAS")


def test_a_failed_start_leaves_no_context_pushed_and_the_next_start_works(standin):
    # The context was pushed before the stream and pool were made: when
    # making them failed, it stayed pushed, and PyCUDA aborts a process whose
    # thread ends with contexts on its stack.
    run(standin, """
        import ctypes, threading
        import numpy as np, pycuda.driver as cuda, arrayx as xp
        import standin_driver
        lib = standin_driver.driver()
        failures = []

        def start():
            lib.standin_fail_next(b"cuStreamCreate", 2)   # CUDA_ERROR_OUT_OF_MEMORY
            try:
                xp.asarray(np.ones(2), device="cuda:0")
            except cuda.MemoryError as e:
                failures.append(e)
            current = ctypes.c_void_p()
            assert lib.cuCtxGetCurrent(ctypes.byref(current)) == 0
            failures.append(current.value)

        worker = threading.Thread(target=start)
        worker.start()
        worker.join()
        assert isinstance(failures[0], cuda.MemoryError) and failures[1] is None, failures
        standin_driver.take_violations()
        assert float(xp.sum(xp.asarray(np.ones(4), device="cuda:0"))) == 4.0
    """)


def test_threads_share_the_runtime_and_its_cublas_handle(standin):
    run(standin, """
        import threading
        import numpy as np, arrayx as xp
        from arrayx._gpu import cublas
        rng = np.random.default_rng(0)
        a = rng.uniform(-1, 1, (8, 16, 16))
        errors = []

        def work(i):
            try:
                for _ in range(5):
                    x = xp.asarray(a[i], device="cuda:0")
                    np.testing.assert_allclose(np.asarray((x @ x.T).to_device("cpu")), a[i] @ a[i].T, rtol=1e-12)
            except Exception as e:
                errors.append(e)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert cublas.library().standin_cublas_live_handles() == 1
    """)


def test_gpu_benchmark_smoke_run_on_pycuda_over_the_stand_in(standin):
    result = run(standin, f"""
        import runpy, sys
        sys.argv = ["gpu.py", "--smoke"]
        sys.path.insert(0, {str(BENCHMARK.parent)!r})
        try:
            runpy.run_path({str(BENCHMARK)!r}, run_name="__main__")
        except SystemExit as e:
            assert e.code == 0, e.code
    """)
    assert result.stdout.startswith("Device: cuda:0, arrayx stand-in CUDA device 0 (sm_90, 2 SMs, 4.0 GiB), "
                                    "driver CUDA 13.0")
    check_smoke_output(result.stdout)
