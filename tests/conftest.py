"""Shared test configuration.

Hypothesis profiles: `ci` (used when the CI environment variable is set) keeps
the whole suite within CI's time on 2 cores; `dev` explores more examples.
Select one explicitly with HYPOTHESIS_PROFILE.
"""

import os

import pytest
from arrayx import executors
from arrayx._cpu import CPUExecutor
from arrayx.device import Device
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


class StandInExecutor(CPUExecutor):
    """The CPU executor posing as an H100, for machines without a GPU."""

    compute_capability = (9, 0)
    sm_count = 132


@pytest.fixture
def gpu():
    """A CUDA device: the first real one, else a stand-in `cuda:0` run by the
    CPU executor. Tests of code that places work on a GPU device (neon's
    NervanaGPU, the gpu transformer) check their wiring on the stand-in;
    test_gpu_executor.py checks CUDA itself, on a device."""
    real = [d for d in executors.devices() if d.name.startswith("cuda:")]
    if real:
        yield real[0]
        return
    device = Device("cuda:0")
    executors.register(device, StandInExecutor())
    try:
        yield device
    finally:
        executors.unregister(device)
