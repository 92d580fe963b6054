"""The CPU executor's pool of large results (arrayx/_cpu/memory.py): a dead
result's memory goes to the next result of its size, and never while any
view of it is alive."""

import gc

import numpy as np
import pytest

import arrayx as xp
from arrayx._cpu import memory

# 1e6 float64 (8 MB) is past the size at which a fused group runs blocked and
# takes its output from the pool.
N = 10**6

# The pool belongs to the CPU executor.
pytestmark = pytest.mark.usefixtures("cpu_as_default_device")


@pytest.fixture(autouse=True)
def empty_pool():
    gc.collect()
    xp.debug.free_held_memory()
    yield
    xp.debug.free_held_memory()


@pytest.fixture
def x():
    return np.linspace(-1.0, 1.0, N)


def address(array):
    return np.asarray(array).__array_interface__["data"][0]


def test_a_dead_results_memory_goes_to_the_next_result_of_its_size(x):
    first = xp.eval(xp.asarray(x) * 2.0 + 1.0)
    where = address(first)
    del first
    gc.collect()
    assert memory.held_bytes() == x.nbytes
    second = xp.eval(xp.asarray(x) * 3.0 - 1.0)
    assert address(second) == where
    assert memory.held_bytes() == 0
    np.testing.assert_array_equal(np.asarray(second), x * 3.0 - 1.0)   # elementwise: bit-identical


def test_a_live_view_keeps_its_results_memory_out_of_the_pool(x):
    first = xp.eval(xp.asarray(x) * 2.0 + 1.0)
    where = address(first)
    arrayx_view = first[10:20]
    numpy_view = np.asarray(first)[::1000]
    del first
    gc.collect()
    assert memory.held_bytes() == 0
    second = xp.eval(xp.asarray(x) * 3.0 - 1.0)
    assert address(second) != where
    np.testing.assert_array_equal(np.asarray(arrayx_view), x[10:20] * 2.0 + 1.0)
    np.testing.assert_array_equal(numpy_view, (x * 2.0 + 1.0)[::1000])
    del arrayx_view, numpy_view
    gc.collect()
    assert memory.held_bytes() == x.nbytes


def test_the_pool_holds_at_most_its_limit_and_gives_everything_back(x, monkeypatch):
    monkeypatch.setattr(memory, "POOL_MAX_BYTES", x.nbytes)
    results = [xp.eval(xp.asarray(x) + float(k)) for k in range(3)]
    del results
    gc.collect()
    assert memory.held_bytes() == x.nbytes
    xp.debug.free_held_memory()
    assert memory.held_bytes() == 0


def test_pooled_results_are_ordinary_arrays(x):
    y = xp.eval(xp.asarray(x) * 2.0)
    host = np.asarray(y)
    assert host.flags.c_contiguous and host.dtype == np.float64 and host.shape == (N,)
    assert not host.flags.writeable   # users see read-only views, as of every result
    np.testing.assert_array_equal(np.from_dlpack(y), x * 2.0)
    # a blocked sum adds in another order than NumPy's pairwise sum
    np.testing.assert_allclose(np.asarray(xp.sum(y)), np.sum(x * 2.0), rtol=0, atol=N * 2.0 * 2**-52)


def test_a_large_products_memory_comes_from_the_pool_and_goes_back_to_it():
    # 1000 x 200 float64: 1.6 MB, past POOLED_PRODUCT_BYTES.
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((1000, 50)), rng.standard_normal((50, 200))
    first = xp.eval(xp.asarray(a) @ xp.asarray(b))
    where = address(first)
    del first
    gc.collect()
    assert memory.held_bytes() == 1000 * 200 * 8
    second = xp.eval(xp.asarray(b.T) @ xp.asarray(a.T))   # (200, 1000): the same bytes
    assert address(second) == where
    # The same BLAS call with another output array: NumPy's result, to rounding of the last bit.
    np.testing.assert_allclose(np.asarray(second), b.T @ a.T, rtol=1e-13, atol=1e-13)


def test_a_full_pool_lets_the_bytes_returned_longest_ago_go_for_a_new_size(monkeypatch):
    monkeypatch.setattr(memory, "POOL_MAX_BYTES", 3 * 8 * N)   # room for three 8 MB results
    old = [memory.empty((N,), np.dtype(np.float64)) for _ in range(3)]
    old_addresses = [address(a) for a in old]
    while old:
        old.pop(0)   # they come back first to last
    gc.collect()
    assert memory.held_bytes() == 3 * 8 * N
    new = memory.empty((2 * N,), np.dtype(np.float64))   # another size: fresh memory
    new_address = address(new)
    del new
    gc.collect()
    # The 16 MB result came back last; it pushed out the two 8 MB results that came back first.
    assert memory.held_bytes() == 3 * 8 * N
    again = memory.empty((2 * N,), np.dtype(np.float64))
    assert address(again) == new_address
    survivor = memory.empty((N,), np.dtype(np.float64))
    assert address(survivor) == old_addresses[2]
    assert memory.held_bytes() == 0
