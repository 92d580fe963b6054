"""Shared test configuration.

Hypothesis profiles: `ci` (used when the CI environment variable is set) keeps
the whole suite within CI's time on 2 cores; `dev` explores more examples.
Select one explicitly with HYPOTHESIS_PROFILE.

The CPU executor's fused groups run on NumPy in the suite, whatever a
background compile finishes when (the "auto" path's switch depends on
timing), unless ARRAYX_CPU_KERNELS names a path for the whole run. Modules
that check results the fused kernels compute run every test on both paths
(`pytestmark = pytest.mark.usefixtures("both_cpu_kernel_paths")`).
"""

import os

import pytest
import standin_driver
from arrayx import executors
from arrayx._cpu import native
from arrayx._cpu.native import compiler as native_compiler
from arrayx._gpu import emulated_device
from arrayx._gpu.emulation import host_kernels
from arrayx.device import CPU
from arrayx import debug as xp_debug
from arrayx.namespace.build import eager_mode, set_eager
from hypothesis import HealthCheck, settings

if os.environ.get(standin_driver.ENV):
    # This process runs arrayx's CUDA runtime over the stand-in driver
    # (tests/standin_driver.py; test_gpu_runtime.py starts it).
    standin_driver.install()

    @pytest.fixture(autouse=True)
    def no_driver_rule_broken():
        """Fails the test during which arrayx, PyCUDA or cuBLAS broke a rule
        of the CUDA driver (the stand-in records each)."""
        standin_driver.take_violations()
        yield
        count, text = standin_driver.take_violations()
        assert not count, f"the CUDA driver's rules were broken {count} times:\n{text}"


settings.register_profile("ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

if "ARRAYX_CPU_KERNELS" not in os.environ:
    native.set_mode("numpy")


@pytest.fixture(params=["numpy", "native"])
def both_cpu_kernel_paths(request):
    """The test once with fused groups on NumPy and once on their native
    kernels (lone elementwise steps and reductions too); skipped natively
    where no compiler can build kernels."""
    if request.param == "native" and native_compiler.available() is not None:
        pytest.skip(f"native CPU kernels: {native_compiler.available()}")
    with xp_debug.cpu_kernels(request.param):
        yield request.param


@pytest.fixture
def cpu_as_default_device():
    """The CPU as the default device for one test, whatever ARRAYX_DEVICE
    says, restored afterwards: for tests of what the CPU executor itself does
    (writes into dying temporaries, its fused kernels, its memory) through
    arrays created without a device. A module of such tests says
    `pytestmark = pytest.mark.usefixtures("cpu_as_default_device")`."""
    before = executors.default_device()
    executors.set_default_device(CPU)
    yield CPU
    executors.set_default_device(before)


def pytest_configure(config):
    config.addinivalue_line("markers", "lazy_only: a test of when lazy mode computes (unevaluated nodes, counters, "
                                       "errors at force points): runs in lazy mode only (see lazy_and_eager)")


def pytest_generate_tests(metafunc):
    # A module using lazy_and_eager runs each test in both modes; a test of
    # laziness itself (marked lazy_only) runs in lazy mode only.
    if "lazy_and_eager" in metafunc.fixturenames:
        modes = ["lazy"] if metafunc.definition.get_closest_marker("lazy_only") else ["lazy", "eager"]
        metafunc.parametrize("lazy_and_eager", modes, indirect=True, scope="module")


@pytest.fixture(scope="module")
def lazy_and_eager(request):
    """Each test of a module of differential tests (arrayx against NumPy)
    runs twice: with operations recorded and computed at force points, as
    usual, and in eager mode (`xp.set_eager(True)`: each operation computed
    at its call), whose results must be the same. A module says
    `pytestmark = pytest.mark.usefixtures("lazy_and_eager")`; pytest runs its
    tests in one mode, then in the other. Tests marked `lazy_only` check
    laziness itself and run in lazy mode only."""
    before = eager_mode()
    set_eager(request.param == "eager")
    yield request.param
    set_eager(before)


@pytest.fixture
def be():
    """The neon shim's CPU backend (float32, seeded), cleaned up after the test."""
    from arrayx.neon.backends import cleanup_backend, gen_backend
    backend = gen_backend('cpu', rng_seed=0)
    yield backend
    cleanup_backend()


@pytest.fixture
def gpu():
    """A CUDA device: the first registered one (a real GPU, PyCUDA over the
    stand-in driver in test_gpu_runtime.py's processes, or the emulated one
    ARRAYX_GPU_EMULATION=1 registers), else the emulated `cuda:0`
    (arrayx/_gpu/emulation), registered for the test."""
    registered = [d for d in executors.devices() if d.name.startswith("cuda:")]
    if registered:
        yield registered[0]
        return
    if host_kernels.compiler() is None:  # pragma: no cover - the CI machine has g++
        pytest.skip("no CUDA device, and no g++ to emulate one")
    device, executor = emulated_device()
    executors.register(device, executor)
    try:
        yield device
    finally:
        executors.unregister(device)
