"""The CPU executor's thread count: arrayx.set_num_threads / get_num_threads
and the environment variable ARRAYX_NUM_THREADS."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import arrayx as xp
from arrayx import debug
from arrayx._cpu import fused, workers as cpu_workers

# The thread count is the CPU executor's.
pytestmark = pytest.mark.usefixtures("cpu_as_default_device")


@pytest.fixture
def restore_threads():
    n = xp.get_num_threads()
    yield
    xp.set_num_threads(n)


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 1024 float64 points, so a 20,000-point group has work for several threads."""
    monkeypatch.setattr(fused, "BLOCK_BYTES", 8192)
    monkeypatch.setattr(fused, "BLOCKED_MIN_BYTES", 256)


def test_the_default_is_one_thread_per_core_the_process_may_use():
    done = run_with_threads(None)
    assert done.stdout.strip() == str(len(os.sched_getaffinity(0))), done.stderr


@pytest.mark.parametrize("n", [1, 3])
def test_fused_groups_run_on_the_set_number_of_threads_with_unchanged_values(n, restore_threads, small_blocks,
                                                                              monkeypatch):
    x_np = np.linspace(-1, 1, 20_000)
    x = xp.asarray(x_np)
    xp.set_num_threads(n)
    assert xp.get_num_threads() == n
    runners = []
    run = fused.FusedKernel._run

    def recording(self, *args):
        runners.append(threading.current_thread())
        return run(self, *args)
    monkeypatch.setattr(fused.FusedKernel, "_run", recording)
    y = xp.sin(x) * 2.0 + x
    (group,) = debug.fused_groups(y)
    _, pieces, _ = fused.FusedKernel(group)._tiling()
    assert (len(pieces) == 1) == (n == 1)
    # elementwise work in blocks is bit-identical to NumPy's whole-array calls
    np.testing.assert_array_equal(np.asarray(y), np.sin(x_np) * 2.0 + x_np)
    # Each piece ran once, on this thread or a pool worker that claimed it; a
    # worker the OS starts late may find nothing left, so at most n threads ran.
    assert len(runners) == len(pieces)
    workers = set(runners) - {threading.current_thread()}
    assert len(workers) <= n - 1
    assert all(t.name.startswith("arrayx-cpu") for t in workers)
    if n > 1:
        assert cpu_workers.thread_pool()._max_workers == n - 1


@pytest.mark.parametrize("n, error", [(0, ValueError), (-2, ValueError), (2.0, TypeError), ("2", TypeError),
                                      (True, TypeError)])
def test_set_num_threads_takes_a_positive_int_only(n, error, restore_threads):
    before = xp.get_num_threads()
    with pytest.raises(error, match="^set_num_threads: n must be a positive int"):
        xp.set_num_threads(n)
    assert xp.get_num_threads() == before


def run_with_threads(value):
    """`import arrayx` in a process with ARRAYX_NUM_THREADS=value (None: unset); it prints get_num_threads()."""
    env = {k: v for k, v in os.environ.items() if k != "ARRAYX_NUM_THREADS"}
    if value is not None:
        env["ARRAYX_NUM_THREADS"] = value
    return subprocess.run([sys.executable, "-c", "import arrayx; print(arrayx.get_num_threads())"],
                          env=env, capture_output=True, text=True, timeout=120)


def test_arrayx_num_threads_sets_the_count_of_a_process():
    done = run_with_threads("3")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "3"


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_a_bad_arrayx_num_threads_fails_the_import_naming_it(value):
    done = run_with_threads(value)
    assert done.returncode != 0
    assert f"ValueError: ARRAYX_NUM_THREADS={value!r}: expected a positive integer" in done.stderr
