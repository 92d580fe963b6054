"""In-place execution: `x[key] = v` writes into x's buffer when nobody else can
see it, and an expensive result is kept while something still refers to it.

The oracle is NumPy with value semantics: every array, view or NumPy array a
user took before an update keeps the value it had then.
"""

import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import arrayx as xp
from arrayx import debug, executors
from arrayx._cpu import CPUExecutor, fused, memory, workers
from arrayx.device import Device
from arrayx.autodiff import grad
from arrayx.scheduler import schedule
from arrayx.scheduler.schedule import clear_plan_cache

# In-place writes are the CPU executor's.
pytestmark = pytest.mark.usefixtures("cpu_as_default_device")


@pytest.fixture
def counters():
    clear_plan_cache()
    debug.reset()
    return debug.counters


def test_a_loop_of_element_updates_writes_into_one_buffer(counters):
    x = xp.ones((50, 50))
    x[0, 0] = 0.0                      # lazy: one update of a lazy array stays in its graph
    x[1, 1] = 0.0                      # forces x once; from here on every update writes in place
    buffer = weakref.ref(x._node.buffer)   # (a strong reference would be a holder: x would be copied)
    for i in range(2, 50):
        x[i, i] = 0.0
    assert buffer() is x._node.buffer      # realized, in the buffer of the first force: no copy, no lazy update
    assert counters["updates_in_place"] == 1   # x[1, 1]; the element writes after it are not counted
    assert counters["realizations"] == 1
    np.testing.assert_array_equal(np.asarray(x), 1.0 - np.eye(50))


def test_a_buffer_written_in_place_before_is_not_written_once_someone_sees_it(counters):
    # write_element remembers the last buffer it found to be its own; a
    # holder that appears later must still stop the next write.
    x = xp.ones((4, 4))
    x[0, 0] = 0.0
    x[1, 1] = 0.0                      # realized: writes in place from here on
    buffer = weakref.ref(x._node.buffer)
    x[2, 2] = 0.0
    assert buffer() is x._node.buffer
    seen = np.asarray(x)               # a read-only NumPy view of x's buffer
    x[3, 3] = 0.0                      # copies once, then writes into the copy
    assert x._node.buffer is not buffer()
    np.testing.assert_array_equal(seen, 1.0 - np.diag([1.0, 1.0, 1.0, 0.0]))
    np.testing.assert_array_equal(np.asarray(x), 1.0 - np.eye(4))


@pytest.mark.parametrize("key", [(3, 0), (0, -5), (-4, 1), (2, 4)], ids=repr)
def test_an_element_write_out_of_range_raises_at_the_call_and_writes_nothing(key):
    # A matrix key of two ints goes to the executor's write unchecked: its
    # IndexError must become arrayx's, with the array unchanged and still written in place.
    a = np.arange(12.0).reshape(3, 4)
    x = xp.asarray(a)                  # realized, its buffer its own
    buffer = weakref.ref(x._node.buffer)
    with pytest.raises(IndexError, match=r"^__setitem__: index -?\d+ is out of bounds for axis \d+ with size \d+$"):
        x[key] = -1.0
    np.testing.assert_array_equal(np.asarray(x), a)
    x[-1, -1] = -1.0
    assert buffer() is x._node.buffer
    expected = a.copy()
    expected[-1, -1] = -1.0
    np.testing.assert_array_equal(np.asarray(x), expected)


def test_a_run_of_updates_on_a_lazy_array_is_forced_once(counters):
    a = np.arange(16.0).reshape(4, 4)
    x = xp.exp(xp.asarray(a))
    for i in range(4):
        x[i, i] = -1.0
    expected = np.exp(a)
    np.fill_diagonal(expected, -1.0)
    np.testing.assert_array_equal(np.asarray(x), expected)
    assert counters["realizations"] == 1    # the first update stays lazy; the second forces both
    assert x._node.buffer is not None       # and the last two wrote into the forced buffer


def test_updates_in_place_give_the_copying_path_values():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((6, 5)).astype(np.float32)
    x = xp.asarray(a)
    x = x * 1.0
    x = xp.asarray(np.asarray(x))
    expected = a.copy()
    keys = [(1, 2), (slice(0, 3), 4), (Ellipsis, 0), (slice(None, None, -2),), (-1, slice(1, None, 2))]
    for k, key in enumerate(keys):
        value = np.float32(k + 0.5)
        x[key] = float(value)
        expected[key] = value
        x[xp.asarray([0, 5]), 1] = xp.asarray([k, -k], dtype=xp.float32)
        expected[[0, 5], 1] = [k, -k]
    np.testing.assert_array_equal(np.asarray(x), expected)


def test_a_user_array_shared_with_copy_false_is_never_written():
    a = np.arange(6.0)
    x = xp.asarray(a, copy=False)
    x[0] = 100.0
    x[1] = 200.0
    np.testing.assert_array_equal(a, np.arange(6.0))
    np.testing.assert_array_equal(np.asarray(x), [100.0, 200.0, 2.0, 3.0, 4.0, 5.0])


def test_a_view_of_another_buffer_is_copied_before_the_write():
    base = xp.asarray(np.arange(12.0).reshape(3, 4))
    float(base[0, 0])                 # base realized
    row = base[1]                     # a realized view of base's buffer
    row_again = row * 1.0             # noqa: F841 (another holder of nothing relevant)
    del row_again
    row[0] = -1.0
    row[1] = -2.0
    np.testing.assert_array_equal(np.asarray(base), np.arange(12.0).reshape(3, 4))
    np.testing.assert_array_equal(np.asarray(row), [-1.0, -2.0, 6.0, 7.0])


# The holders a user can keep of x's value before updating x.
HOLDERS = {
    "slice": lambda x: x[1:3],                       # a lazy or realized view node over x's node
    "copy": lambda x: x * 1.0,                       # a lazy node reading x
    "numpy": lambda x: np.asarray(x),                # a NumPy view of x's buffer
    "dlpack": lambda x: np.from_dlpack(x),           # a DLPack export of x's buffer
    "same": lambda x: xp.asarray(x),                 # x itself: it sees every update, as in NumPy
}

_update = st.tuples(st.just("update"), st.integers(0, 5), st.floats(-10, 10, allow_nan=False))
_hold = st.tuples(st.just("hold"), st.sampled_from(sorted(HOLDERS)), st.just(0.0))
_force = st.tuples(st.just("force"), st.just(0), st.just(0.0))


@settings(deadline=None)
@given(st.lists(st.one_of(_update, _hold, _force), min_size=1, max_size=12), st.booleans())
def test_an_update_never_changes_a_value_someone_else_holds(ops, start_lazy):
    model = np.linspace(0.0, 1.0, 6)
    x = xp.asarray(model.copy())
    if start_lazy:
        x = x + 0.0
    held = []   # (kind, holder, the value it must keep)
    for op, arg, value in ops:
        if op == "update":
            x[arg] = value if arg % 2 else xp.asarray(value)   # a Python scalar or a 0-d array
            model[arg] = value
        elif op == "hold":
            holder = HOLDERS[arg](x)
            held.append((arg, holder, model.copy() if arg != "same" else model))
        else:
            np.asarray(x)
    np.testing.assert_array_equal(np.asarray(x), model)
    for kind, holder, expected in held:
        if kind == "slice":
            expected = expected[1:3]
        np.testing.assert_array_equal(np.asarray(holder), expected, err_msg=kind)


def test_an_array_captured_by_autodiff_keeps_its_value():
    def f(w):
        y = w * w
        z = y * 1.0
        z[0] = 0.0               # z's update inside the differentiated function stays lazy
        z[1] = 0.0
        return xp.sum(z * y)
    w = xp.asarray([1.0, 2.0, 3.0])
    g = np.asarray(grad(f)(w))
    # d/dw sum(z * y) with z = y except z[0] = z[1] = 0: 4 w^3 where z = y, 2 w * z = 0 elsewhere.
    np.testing.assert_allclose(g, [0.0, 0.0, 4 * 27.0], rtol=1e-15)


def test_a_jit_argument_is_never_written():
    @xp.jit
    def f(a):
        b = a * 2.0
        b[0] = 0.0
        b[1] = 0.0
        a2 = xp.asarray(a)
        return b, a2
    a = xp.asarray([1.0, 2.0, 3.0])
    host = np.asarray([1.0, 2.0, 3.0])
    for _ in range(2):
        b, a2 = f(host)
        np.testing.assert_array_equal(np.asarray(b), [0.0, 0.0, 6.0])
        np.testing.assert_array_equal(np.asarray(a2), [1.0, 2.0, 3.0])
        b, _ = f(a)
    np.testing.assert_array_equal(host, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(a), [1.0, 2.0, 3.0])


def test_a_chain_of_lazy_updates_runs_in_place_inside_one_plan(counters):
    # The first update of x is lazy and so is a's; one force runs both chains.
    a = xp.asarray(np.zeros((4, 4))) + 1.0
    held = a                                         # noqa: F841 (a second name, same array)
    b = a * 2.0
    b[0, 0] = 5.0
    np.testing.assert_array_equal(np.asarray(b)[0], [5.0, 2.0, 2.0, 2.0])
    np.testing.assert_array_equal(np.asarray(a), np.ones((4, 4)))


def test_svd_forced_through_its_three_outputs_runs_once(monkeypatch):
    calls = []
    svd = np.linalg.svd
    monkeypatch.setattr(np.linalg, "svd", lambda *a, **k: calls.append(1) or svd(*a, **k))
    a = np.random.default_rng(2).standard_normal((20, 5))
    u, s, vh = xp.linalg.svd(xp.asarray(a), full_matrices=False)
    reconstructed = (np.asarray(u) * np.asarray(s)) @ np.asarray(vh)
    assert len(calls) == 1
    np.testing.assert_allclose(reconstructed, a, rtol=0, atol=1e-12)   # SVD round trip, float64


def test_a_mean_the_user_holds_is_kept_so_reading_it_again_reduces_nothing(counters):
    a = np.random.default_rng(5).standard_normal((300, 40))
    x = xp.asarray(a)
    mean = xp.mean(x, axis=1, keepdims=True)
    assert not bool(xp.any(xp.isnan(mean)))          # a check forces the mean (scipy.stats does)
    assert counters["results_kept"] == 1             # its sum: 40 points read per point written
    z = x - mean
    plan = schedule.plan_for([z._node])
    assert not any(i.op.name == "sum" for g in plan.groups for i in g.body) and plan.steps == 2   # divide, subtract
    # One sum of each row either way; the subtraction is exact in both.
    np.testing.assert_array_equal(np.asarray(z), a - np.asarray(mean))
    np.testing.assert_allclose(np.asarray(mean)[:, 0], a.mean(axis=1), rtol=1e-14)


def test_a_reduction_that_hardly_shrinks_or_that_nobody_holds_is_not_kept(counters):
    x = xp.asarray(np.random.default_rng(6).standard_normal((2, 500)))
    pairs = xp.sum(x, axis=0)                        # 2 points read per point written: cheap to redo
    # (Outside an assert: pytest's assertion rewriting holds the temporaries.)
    largest = [float(xp.max(pairs)), float(xp.max(xp.sum(x, axis=1)))]
    assert counters["results_kept"] == 0 and pairs._node.buffer is None
    a = np.asarray(x)
    assert largest == [np.max(np.sum(a, axis=0)), pytest.approx(np.max(np.sum(a, axis=1)), rel=1e-14)]


def test_a_product_the_user_holds_is_kept_and_a_temporary_is_not(counters):
    a = xp.asarray(np.random.default_rng(3).standard_normal((30, 30)))
    c = a @ a.T
    total = float(xp.sum(c))
    assert c._node.buffer is not None and counters["results_kept"] == 1
    assert float(xp.max(c)) == pytest.approx(np.max(np.asarray(a) @ np.asarray(a).T), rel=1e-12)
    debug.reset()
    # (Outside an assert: pytest's assertion rewriting holds the temporaries.)
    again = [float(xp.sum(a @ a.T)) for _ in range(2)]
    assert again == [total, total]
    assert counters["results_kept"] == 0


def test_a_product_nobody_holds_dies_at_its_last_use_and_the_next_group_writes_into_it(counters):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((256, 64)), rng.standard_normal((64, 256))
    xa, xb = xp.asarray(a), xp.asarray(b)
    for _ in range(2):   # the second force runs the cached variant
        with debug.profile() as profile:
            got = np.asarray(xp.exp(xa @ xb) * 0.5 + 1.0)
        np.testing.assert_allclose(got, np.exp(a @ b) * 0.5 + 1.0, rtol=1e-13)   # one BLAS call, then elementwise
        assert [s.in_place for s in profile.steps if s.name == "fused"] == [True]
    # One variant of the plan, the one that keeps no candidate, built once.
    assert counters["plans_built"] == 1 and counters["plan_variants_built"] == 1
    assert counters["results_kept"] == 0
    c = xa @ xb                                   # now held: kept, so the plan that keeps it runs
    with debug.profile() as profile:
        np.asarray(xp.exp(c) * 0.5 + 1.0)
    assert [s.in_place for s in profile.steps if s.name == "fused"] == [False]
    assert counters["results_kept"] == 1 and c._node.buffer is not None
    np.testing.assert_allclose(np.asarray(c), a @ b, rtol=1e-13)


def test_a_small_product_nobody_holds_is_computed_and_dropped_without_a_variant(counters):
    # 30x30 float64 (7 kB) is below keep.VARIANT_MIN_BYTES: a second build would cost more than it saves.
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((30, 8)), rng.standard_normal((8, 30))
    xa, xb = xp.asarray(a), xp.asarray(b)
    got = [np.asarray(xp.exp(xa @ xb) * 0.5 + 1.0) for _ in range(2)]
    for g in got:
        np.testing.assert_allclose(g, np.exp(a @ b) * 0.5 + 1.0, rtol=1e-13)   # one BLAS call, then elementwise
    assert counters["plans_built"] == 1 and counters["plan_variants_built"] == 0
    assert counters["results_kept"] == 0 and counters["plan_cache_hits"] == 1
    c = xa @ xb                                   # now held: the same plan keeps it
    np.asarray(xp.exp(c) * 0.5 + 1.0)
    assert counters["results_kept"] == 1 and c._node.buffer is not None and counters["plans_built"] == 1
    np.testing.assert_allclose(np.asarray(c), a @ b, rtol=1e-13)


def test_fused_groups_of_a_graph_with_a_product_keeps_nothing():
    a = xp.asarray(np.ones((3, 3)))
    c = a @ a + 1.0
    assert len(xp.debug.fused_groups(c)) == 0      # 9 points: the lone add runs as an ordinary step
    assert c._node.inputs[0].buffer is None         # fused_groups computes nothing


def test_a_held_value_read_through_a_slice_is_computed_once_per_step(counters):
    # y's buffer exists anyway (the slice reads it); y is held, so it is kept
    # and the next step starts from it instead of computing it again.
    y = xp.asarray(np.arange(10.0))
    expected = np.arange(10.0)
    for _ in range(5):
        y = y * 0.5 + 1.0
        expected = expected * 0.5 + 1.0
        assert float(y[3]) == expected[3]
        assert y._node.buffer is not None
    assert counters["steps_run"] == 5 * 3          # the fused y, then the slice and reshape of y[3]
    np.testing.assert_array_equal(np.asarray(y), expected)


def test_a_value_nobody_holds_is_not_kept(counters):
    x = xp.asarray(np.arange(10.0))
    first = [float((x * 0.5 + 1.0)[3]) for _ in range(2)]
    assert first == [2.5, 2.5] and counters["results_kept"] == 0


def test_an_update_of_a_computed_value_in_a_plan_writes_into_it(monkeypatch):
    a = np.random.default_rng(4).standard_normal((6, 6))
    x = xp.asarray(a)
    before = xp.exp(x) * 2.0
    d = xp.exp(x) * 2.0
    d[0, 0] = 0.0                   # lazy
    copies = []
    real_array = np.array
    monkeypatch.setattr(np, "array", lambda b, *r, **k: copies.append(np.shape(b)) or real_array(b, *r, **k))
    d[1, 1] = 0.0                   # forces exp, multiply and the first update: one plan
    monkeypatch.undo()
    expected = np.exp(a) * 2.0
    expected[[0, 1], [0, 1]] = 0.0
    np.testing.assert_array_equal(np.asarray(d), expected)
    assert copies == []             # the group's result died at the update: written in place
    np.testing.assert_array_equal(np.asarray(x), a)
    np.testing.assert_array_equal(np.asarray(before), np.exp(a) * 2.0)


def test_an_update_after_a_group_run_on_threads_writes_into_its_result(monkeypatch):
    # A worker thread lingers a moment after its last block; had it kept a
    # reference to the group's output, the update would see another holder
    # and copy the array.
    monkeypatch.setattr(fused, "BLOCK_BYTES", 4096)
    monkeypatch.setattr(fused, "BLOCKED_MIN_BYTES", 256)
    monkeypatch.setattr(workers, "WAKE_MARGIN", 0)   # every call hands blocks to the worker
    threads = xp.get_num_threads()
    xp.set_num_threads(2)
    try:
        a = np.random.default_rng(5).standard_normal((200, 200))
        x = xp.asarray(a)
        expected = np.maximum(a * -2.0 + 1.0, 0.0)
        expected[[0, 1], [0, 1]] = 0.0
        copies = []
        real_array = np.array
        for _ in range(40):
            d = xp.maximum(x * -2.0 + 1.0, 0.0)
            d[0, 0] = 0.0               # lazy
            monkeypatch.setattr(np, "array", lambda b, *r, **k: copies.append(np.shape(b)) or real_array(b, *r, **k))
            d[1, 1] = 0.0               # forces the group and the first update: one plan
            monkeypatch.setattr(np, "array", real_array)
            np.testing.assert_array_equal(np.asarray(d), expected)
    finally:
        xp.set_num_threads(threads)
    assert copies == []
    np.testing.assert_array_equal(np.asarray(x), a)


@pytest.fixture(params=["whole arrays", "blocks"])
def path(request, monkeypatch):
    """Fused groups as whole-array calls, or in blocks of 512 bytes over threads."""
    if request.param == "blocks":
        monkeypatch.setattr(fused, "BLOCK_BYTES", 512)
        monkeypatch.setattr(fused, "BLOCKED_MIN_BYTES", 256)
    clear_plan_cache()
    return request.param


def test_a_computation_writes_a_fused_group_into_a_product_that_dies_there(monkeypatch):
    # (At a force point a product is a result the force may keep: it is never overwritten there.)
    monkeypatch.setattr(fused, "BLOCK_BYTES", 512)
    monkeypatch.setattr(fused, "BLOCKED_MIN_BYTES", 256)
    rng = np.random.default_rng(9)
    a, w = rng.standard_normal((300, 6)), rng.standard_normal((6, 8))
    allocated = []
    empty = memory.empty
    monkeypatch.setattr(memory, "empty", lambda shape, dtype: allocated.append(shape) or empty(shape, dtype))
    f = xp.jit(lambda x, w: xp.exp(x @ w) * 2.0 + 1.0)
    x = xp.asarray(a)
    for _ in range(2):
        y = f(x, xp.asarray(w))
        np.testing.assert_allclose(np.asarray(y), np.exp(a @ w) * 2.0 + 1.0, rtol=1e-13)   # BLAS and exp rounding
    assert allocated == []      # the group's result went into the product's array
    np.testing.assert_array_equal(np.asarray(x), a)


# What may read a product P = X @ W besides the group that reads it last.
_P_READERS = st.sets(st.sampled_from(["returned", "view", "later", "twice", "centered"]))


def _program(xp_, x, w, readers, chain):
    """Outputs over P = x @ w, built with the namespace `xp_` (arrayx or NumPy)."""
    p = x @ w
    outputs = [p] if "returned" in readers else []
    if "view" in readers:                  # a view of P read by a non-elementwise step
        outputs.append(xp_.sum(p.T[::2], axis=1))
    y = p
    for _ in range(chain):                 # the group reading P
        y = xp_.exp(y * 0.1) + y
    if "centered" in readers:              # y dies at a group after a reduction of it
        y = y - xp_.mean(y, axis=0)
    outputs.append(y)
    if "later" in readers:                 # P read again by a later group: it does not die at the first
        outputs.append(p * 3.0 - 1.0)
    if "twice" in readers:                 # P read twice by one step
        outputs.append(p * p)
    return tuple(outputs)


@settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(readers=_P_READERS, chain=st.integers(1, 3))
def test_writing_into_a_dying_temporary_never_changes_a_value_someone_sees(path, readers, chain):
    rng = np.random.default_rng(10)
    a, w = rng.standard_normal((40, 5)), rng.standard_normal((5, 30))
    expected = _program(np, a, w, readers, chain)
    x, wx = xp.asarray(a), xp.asarray(w)
    compiled = xp.jit(lambda x, w: _program(xp, x, w, readers, chain))
    for outputs in (_program(xp, x, wx, readers, chain), compiled(x, wx), compiled(x, wx)):
        xp.eval(*outputs)
        for got, want in zip(outputs, expected):
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)   # BLAS, exp and mean rounding
    np.testing.assert_array_equal(np.asarray(x), a)
    np.testing.assert_array_equal(np.asarray(wx), w)


class _CopyingExecutor(CPUExecutor):
    """An executor that does not update in place (as the GPU's)."""
    updates_in_place = False


def test_on_an_executor_without_in_place_updates_they_run_in_a_plan(counters):
    device = Device("cuda:99")   # a name no real device takes
    executors.register(device, _CopyingExecutor())
    try:
        x = xp.asarray(np.zeros(4), device=device) + 1.0
        np.asarray(x)
        for i in range(4):
            x[i] = float(i)
        assert x._node.buffer is None and counters["updates_in_place"] == 0
        np.testing.assert_array_equal(np.asarray(x), [0.0, 1.0, 2.0, 3.0])
    finally:
        executors.unregister(device)


def test_a_product_the_user_holds_survives_a_force_of_a_group_reading_it_last():
    # At a force point P may be kept for the array the user holds: the group
    # reading P last must not write its result into P's buffer.
    rng = np.random.default_rng(11)
    a, w = rng.standard_normal((40, 5)), rng.standard_normal((5, 30))
    p = xp.asarray(a) @ xp.asarray(w)
    y = xp.exp(p * 0.1) + p
    np.testing.assert_allclose(np.asarray(y), np.exp(a @ w * 0.1) + a @ w, rtol=1e-12)   # BLAS and exp rounding
    np.testing.assert_allclose(np.asarray(p), a @ w, rtol=1e-12)
