"""Shared test configuration.

Hypothesis profiles: `ci` (used when the CI environment variable is set) keeps
the whole suite within CI's time on 2 cores; `dev` explores more examples.
Select one explicitly with HYPOTHESIS_PROFILE.
"""

import os

import pytest
import arrayx as xp
from arrayx import executors
from arrayx._gpu import emulated_device
from arrayx._gpu.emulation import host_kernels
from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture
def be():
    """The neon shim's CPU backend (float32, seeded), cleaned up after the test."""
    from arrayx.neon.backends import cleanup_backend, gen_backend
    backend = gen_backend('cpu', rng_seed=0)
    yield backend
    cleanup_backend()


@pytest.fixture
def cpu_default():
    """The CPU as the default device for one test that checks the CPU
    executor itself through arrays created without a device (the suite may
    run with ARRAYX_DEVICE naming another), restored afterwards."""
    previous = xp.__array_namespace_info__().default_device()
    xp.set_default_device("cpu")
    yield xp.Device("cpu")
    xp.set_default_device(previous)


@pytest.fixture
def gpu():
    """A CUDA device: the first registered one (a real GPU, or the emulated
    one ARRAYX_GPU_EMULATION=1 registers), else the emulated `cuda:0`
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
