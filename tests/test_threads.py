"""Force points from several threads, the per-thread history scope, and the
plan cache's bound.

Before force points took a lock, threads forcing arrays built on one shared
lazy intermediate saw each other's half-realized nodes (KeyError in the
scheduler, a few in a thousand forces) and cached plans under keys that did
not describe them, so later single-threaded forces failed or returned wrong
values.
"""

import sys
import threading

import numpy as np
import pytest

import arrayx as xp
from arrayx import debug
from arrayx.autodiff import retain_history
from arrayx.scheduler import schedule


@pytest.fixture(autouse=True)
def frequent_switches():
    """Switch threads every microsecond, so races show within a unit test."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


def run_threads(target, n):
    errors = []

    def guarded(i):
        try:
            target(i)
        except Exception as e:   # surfaced below: a failing thread must fail the test
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


# The default device's sin and exp may differ from NumPy's in the last bits
# (docs/gpu.md: the emulated device calls the C library's): a few ulp each,
# amplified at most 5 times by exp of arguments up to 5. A race gives
# another value altogether.
DEVICE_LIBM_RTOL = 1e-14


def test_threads_forcing_arrays_of_one_shared_intermediate_get_correct_values():
    schedule.clear_plan_cache()
    a = np.linspace(-1, 1, 50)
    for _ in range(1000):
        shared = xp.sin(xp.asarray(a)) * 2.0          # lazy, read by every thread
        results = [None] * 4

        def force(i, shared=shared, results=results):
            results[i] = np.asarray(xp.exp(shared + float(i)) - shared)

        run_threads(force, 4)
        for i, r in enumerate(results):
            np.testing.assert_allclose(r, np.exp(np.sin(a) * 2.0 + i) - np.sin(a) * 2.0, rtol=DEVICE_LIBM_RTOL)
    # the plans cached while racing describe their graphs
    shared = xp.sin(xp.asarray(a)) * 2.0
    np.testing.assert_allclose(np.asarray(xp.exp(shared + 1.0) - shared),
                               np.exp(np.sin(a) * 2.0 + 1.0) - np.sin(a) * 2.0, rtol=DEVICE_LIBM_RTOL)


def test_concurrent_evictions_from_a_full_plan_cache(monkeypatch):
    schedule.clear_plan_cache()
    monkeypatch.setattr(schedule, "PLAN_CACHE_BYTES", 8 * schedule.plan_bytes(_plan_of_nodes(4)))

    def force(i):
        for n in range(1, 40):
            x = xp.asarray(np.arange(n + i, dtype=float))
            assert float(xp.sum(x * 2.0 + 1.0)) == (n + i) * (n + i - 1) + (n + i)

    run_threads(force, 4)
    assert schedule.cached_plans()[1] <= schedule.PLAN_CACHE_BYTES
    schedule.clear_plan_cache()


def _plan_of_nodes(n):
    return schedule.Plan(0, [], [], [], n, None)


def test_the_plan_cache_is_bounded_by_bytes_and_keeps_recent_plans(monkeypatch):
    schedule.clear_plan_cache()
    monkeypatch.setattr(schedule, "PLAN_CACHE_BYTES", 25 * schedule.plan_bytes(_plan_of_nodes(4)))
    keep = xp.asarray(np.ones(3))
    for n in range(1, 60):
        # A new plan each time: the reshape holds the shape, so each length gets a plan of its own (rebound).
        float(xp.sum(xp.reshape(xp.asarray(np.ones(n)) + 1.0, (1, n))))
        float(xp.sum(keep * 3.0))                       # used after every new plan
        count, nbytes = schedule.cached_plans()
        assert nbytes <= schedule.PLAN_CACHE_BYTES and count <= 25
    debug.reset()
    float(xp.sum(keep * 3.0))
    assert debug.counters["plan_cache_hits"] == 1       # the recently used plan survived
    schedule.clear_plan_cache()


def test_retain_history_belongs_to_the_thread_that_entered_it():
    inside, done = threading.Event(), threading.Event()

    def differentiating():
        with retain_history():
            inside.set()
            done.wait(10)

    holder = threading.Thread(target=differentiating)
    holder.start()
    inside.wait(10)
    try:
        x = xp.asarray(np.ones(4))
        y = xp.exp(x) + 1.0
        xp.eval(y)
        assert y._node.inputs == ()      # this thread is outside the scope: history freed
    finally:
        done.set()
        holder.join()
    with retain_history():
        z = xp.exp(x) + 1.0
        xp.eval(z)
        assert z._node.inputs != ()      # inside it, history is kept
