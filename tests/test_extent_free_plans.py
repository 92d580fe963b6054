"""Plans that run at any extent (scheduler.collect.extent_free_key): a small
graph of elementwise work and reductions at a new length reuses the plan of
another length and gives NumPy's values; one with reshapes, broadcasts,
slices and constants reuses it rebound to its attributes; extents that are
equal, or 1, in one call and not in another get plans of their own; large
values and the dot rewrite keep exact keys."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import arrayx as xp
from arrayx import debug
from arrayx._cpu.executor import CPUExecutor
from arrayx._cpu.fused import BLOCKED_MIN_BYTES
from arrayx.scheduler import keep, schedule

pytestmark = pytest.mark.usefixtures("cpu_as_default_device")


@pytest.fixture
def counters():
    schedule.clear_plan_cache()
    debug.reset()
    yield debug.counters
    schedule.clear_plan_cache()


def _expression(ns, x):
    return ns.sum(ns.sin(x) * 2.0 + x)


def test_a_small_expression_at_many_lengths_builds_one_plan_and_gives_numpys_values(counters):
    for n in range(2, 202):
        host = np.linspace(-3.0, 3.0, n)
        # The same NumPy calls on the same values, whole-array: equal, not close.
        assert float(_expression(xp, xp.asarray(host))) == _expression(np, host)
    assert counters["plans_built"] == 1 and counters["plan_cache_hits"] == 199
    assert schedule.cached_plans()[0] == 1   # one plan, under its exact key and its extent-free one


def test_the_largest_values_that_run_at_any_extent_still_run_whole_array(counters):
    # complex128 is the widest item: a group of 65536 of them stays below the
    # size the CPU runs in blocks from (whose tiles hold the group's shape).
    for n in (65536, 40000):
        x = np.linspace(0.0, 1.0, n)
        xa = xp.asarray(x)
        got = xp.sum(xp.exp(xa * xp.asarray(1j)) * (xa > 0.5))
        # arrayx's complex exp follows the standard's special cases (its own kernel): a few ulps from NumPy's.
        np.testing.assert_allclose(complex(got), np.sum(np.exp(x * 1j) * (x > 0.5)), rtol=1e-13)
    assert counters["plans_built"] == 1
    assert CPUExecutor.any_extent_points * 16 < BLOCKED_MIN_BYTES


def test_a_pooled_product_built_at_one_extent_sizes_its_result_at_another(counters):
    # 256 x 256 complex128 is 1 MiB, past the size products are pooled from: the kernel
    # must not hold that shape when the plan runs for 200 x 200.
    for n in (256, 200, 256):
        a, b = np.ones((n, 8)) + 1j * np.arange(8.0), np.arange(8.0 * n).reshape(8, n) + 0j
        np.testing.assert_array_equal(np.asarray(xp.asarray(a) @ xp.asarray(b)), a @ b)   # small integers: exact
    assert counters["plans_built"] == 1


def test_a_length_met_before_finds_its_plan_again_without_a_new_one(counters):
    for n in (5, 7, 5, 7, 9):
        float(_expression(xp, xp.asarray(np.ones(n))))
    assert counters["plans_built"] == 1 and counters["plan_cache_hits"] == 4


@pytest.mark.parametrize("shapes", [
    [((4, 1), (1, 4)), ((4, 1), (1, 6))],     # equal extents, then different ones
    [((3,), (3,)), ((3,), (1,))],             # an extent that becomes 1 broadcasts
    [((2, 5), (5,)), ((5, 2), (2,))],         # the same pattern, transposed extents
])
def test_extents_equal_or_1_in_one_call_and_not_in_another_give_numpys_values(shapes, counters):
    rng = np.random.default_rng(4)
    for a_shape, b_shape in shapes:
        a, b = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
        got = xp.max(xp.exp(xp.asarray(a)) * xp.asarray(b) - 1.0, axis=-1)
        np.testing.assert_array_equal(np.asarray(got), np.max(np.exp(a) * b - 1.0, axis=-1))


def test_extents_equal_in_one_call_and_different_in_another_get_plans_of_their_own(counters):
    for m in (4, 6, 8):   # 4 equals the other extent; 6 and 8 share a pattern
        a, b = np.ones((4, 1)), np.arange(float(m)).reshape(1, m)
        np.testing.assert_array_equal(np.asarray(xp.asarray(a) + xp.asarray(b)), a + b)
    assert counters["plans_built"] == 2


def test_large_values_and_the_dot_rewrite_keep_exact_keys_and_a_reshape_is_rebound(counters):
    large = (1 << 16) + 64   # past the CPU executor's any_extent_points
    for n in (large, large + 64):
        assert float(_expression(xp, xp.asarray(np.ones(n)))) == _expression(np, np.ones(n))
    assert counters["plans_built"] == 2
    for n in (6, 8, 6):   # a reshape holds its shape in its attributes: its step is built again for 8
        got = xp.sum(xp.reshape(xp.asarray(np.arange(float(n))) * 2.0, (2, n // 2)), axis=1)
        np.testing.assert_array_equal(np.asarray(got), np.sum(np.arange(float(n)).reshape(2, n // 2) * 2.0, axis=1))
    assert counters["plans_built"] == 3 and counters["plans_rebound"] == 1
    for n in (3, 5):   # sum(x * y) over every axis becomes a dot of the flattened operands, whose reshapes
        x = np.arange(float(n * 2)).reshape(n, 2)   # the rewrite pass made: no node of the graph to rebind them from
        assert float(xp.sum(xp.asarray(x) * xp.asarray(x))) == float(np.sum(x * x))
    assert counters["plans_built"] == 5 and counters["plans_rebound"] == 1


def test_a_small_model_at_several_batch_sizes_builds_one_plan(counters):
    rng = np.random.default_rng(2)
    w1, w2 = rng.standard_normal((8, 16)), rng.standard_normal((16, 3))
    w1x, w2x = xp.asarray(w1), xp.asarray(w2)
    for batch in (5, 7, 32, 7):
        x = rng.standard_normal((batch, 8))
        got = xp.max(xp.maximum(xp.asarray(x) @ w1x, 0.0) @ w2x, axis=1)
        np.testing.assert_array_equal(np.asarray(got), np.max(np.maximum(x @ w1, 0.0) @ w2, axis=1))
    # x @ w1 is a product the plan may keep; nobody holds it and it is small, so the plan computes and drops it.
    assert counters["plans_built"] == 1 and counters["plan_variants_built"] == 0 and counters["results_kept"] == 0
    for n in (6, 9):   # the dot of two vectors needs no reshape: one plan too
        v = np.arange(float(n))
        assert float(xp.sum(xp.asarray(v) * xp.asarray(v))) == float(v @ v)
    assert counters["plans_built"] == 2


def test_a_plan_that_may_keep_a_reduction_runs_where_the_reduction_shrinks_as_much(counters):
    # Whether a reduction is worth keeping depends on how much it shrinks its input: the key holds that.
    for n, m in ((4, 16), (5, 16), (6, 9), (5, 4), (7, 3)):
        a = np.arange(n * m, dtype=float).reshape(n, m)
        x = xp.asarray(a)
        mean = xp.mean(x, axis=1, keepdims=True)
        kept = counters["results_kept"]
        assert not bool(xp.any(xp.isnan(mean)))   # a check forces the mean while the user holds it
        assert counters["results_kept"] - kept == (m >= keep.REDUCTION_KEPT_RATIO)   # its row sums, where worth it
        np.testing.assert_array_equal(np.asarray(x - mean), a - np.mean(a, axis=1, keepdims=True))
    # The check's plan where the sum reads 8 points or more per point it writes, the one where it reads
    # fewer, and the subtraction's plan (the same whether it reads the kept sums or not, as a leaf).
    assert counters["plans_built"] == 4
def test_a_plan_under_two_keys_counts_its_bytes_once_in_the_bounded_cache(counters, monkeypatch):
    smallest = schedule.plan_bytes(schedule.build_plan([xp.asarray(np.ones(2))._node], []))
    monkeypatch.setattr(schedule, "PLAN_CACHE_BYTES", 40 * smallest)
    monkeypatch.setattr(keep, "VARIANT_MIN_BYTES", 0)   # a variant for the small product too
    w = xp.asarray(np.eye(4))

    def total(x, k):   # a new structure for each k; its product is held by nobody once it returns
        y = x @ w
        for _ in range(k):
            y = y * 1.5
        return xp.sum(y)
    for k in range(1, 80):
        for x in (xp.asarray(np.ones((3, 4))), xp.asarray(np.ones((5, 4)))):   # two batch sizes
            float(total(x, k))   # each plan gets a variant without the product, counted with it
        count, nbytes = schedule.cached_plans()
        assert count * smallest <= nbytes <= schedule.PLAN_CACHE_BYTES
    assert counters["plans_built"] == 79 and counters["plan_variants_built"] == 79


_UNARY = [(xp.exp, np.exp), (xp.abs, np.abs), (xp.negative, np.negative), (xp.tanh, np.tanh)]
_BINARY = [(xp.add, np.add), (xp.multiply, np.multiply), (xp.maximum, np.maximum), (xp.subtract, np.subtract)]


@settings(max_examples=40, deadline=None)
@given(ops=st.lists(st.tuples(st.booleans(), st.integers(0, 3)), min_size=1, max_size=6),
       extents=st.lists(st.tuples(st.integers(1, 6), st.integers(1, 6)), min_size=2, max_size=3),
       reduce_axis=st.sampled_from([None, 0, 1, -1]))
def test_one_graph_at_several_extents_gives_numpys_values(ops, extents, reduce_axis):
    """A random chain of elementwise operations on x (n, m) and y (1, m),
    reduced or not, at several extents in a row: whichever plan runs
    (built, or found under an extent-free key), NumPy's values."""
    rng = np.random.default_rng(len(ops))
    for n, m in extents:
        x_np, y_np = rng.standard_normal((n, m)), rng.standard_normal((1, m))
        x, y = xp.asarray(x_np), xp.asarray(y_np)
        with np.errstate(over="ignore", invalid="ignore"):   # exp of exp overflows, as arrayx's does, silently
            for binary, k in ops:
                if binary:
                    x, x_np = _BINARY[k][0](x, y), _BINARY[k][1](x_np, y_np)
                else:
                    x, x_np = _UNARY[k][0](x), _UNARY[k][1](x_np)
            if reduce_axis != -1:
                x, x_np = xp.sum(x, axis=reduce_axis), np.sum(x_np, axis=reduce_axis)
        # Elementwise values are NumPy's own calls: equal. A sum runs NumPy's
        # add.reduce as np.sum does, but a fused group may fold the rows of
        # a reduction over leading axes first: a few ulps.
        np.testing.assert_allclose(np.asarray(x), x_np, rtol=1e-13, atol=1e-13)


def _with_movements(ns, x, start, flat):
    """Elementwise work of x (n, m) around a slice, a row sum broadcast back,
    a flattening reshape and a constant: steps whose attributes hold extents."""
    y = ns.exp(x)[start:, ::-1] * 2.0
    z = ns.broadcast_to(ns.sum(y, axis=1, keepdims=True), y.shape) - y
    if flat:
        z = ns.reshape(z, (-1,))
    return z + ns.ones(z.shape, dtype=z.dtype)


@settings(max_examples=40, deadline=None)
@given(extents=st.lists(st.tuples(st.integers(1, 6), st.integers(1, 6)), min_size=2, max_size=4),
       start=st.integers(0, 1), flat=st.booleans())
def test_movements_at_several_extents_give_numpys_values(extents, start, flat):
    """Slices, broadcasts, reshapes and constants between elementwise steps,
    at several extents in a row: whichever plan runs (built, found under an
    extent-free key, or found and rebound to new extents), NumPy's values."""
    schedule.clear_plan_cache()   # the first extent builds the plan, the next ones find it
    rng = np.random.default_rng(len(extents))
    for n, m in extents:
        a = rng.standard_normal((n, m))
        got = np.asarray(_with_movements(xp, xp.asarray(a), start, flat))
        # The same NumPy calls on the same values, whole-array, but a fused group
        # may sum the rows in another order than np.sum: a few ulps.
        np.testing.assert_allclose(got, _with_movements(np, a, start, flat), rtol=1e-13, atol=1e-13)


def test_a_graph_with_movements_at_many_lengths_builds_one_plan_and_rebinds_it(counters):
    for n in range(3, 43):
        a = np.linspace(-1.0, 1.0, 4 * n).reshape(4, n)
        got = np.asarray(_with_movements(xp, xp.asarray(a), 1, True))
        np.testing.assert_allclose(got, _with_movements(np, a, 1, True), rtol=1e-13, atol=1e-13)
    # Built: n = 3, 4 and 5, where n or the reversed slice's start n - 1 equals the 3 sliced
    # rows or the 4 rows; 6, whose plan 7 rebinds (row sums of under 8 points are not worth
    # keeping); 8, whose plan every later n rebinds (row sums of 8 points or more are).
    assert counters["plans_built"] == 5 and counters["plans_rebound"] == 35
    plans, _ = schedule.cached_plans()
    assert plans == counters["plans_built"] + counters["plans_rebound"]   # each rebound plan under its exact key


@pytest.mark.parametrize("kernels", ["numpy", "native"])
def test_row_logsumexp_at_new_row_lengths_runs_its_group_and_epilogue_at_each(counters, kernels):
    # One plan for every length, its group ending in the epilogue (log, add)
    # over the kept shape of each call.
    from arrayx._cpu.native import compiler
    if kernels == "native" and compiler.available() is not None:
        pytest.skip(f"native CPU kernels: {compiler.available()}")
    with debug.cpu_kernels(kernels):
        for n in (100, 300, 37):
            a = np.random.default_rng(n).standard_normal((8, n))
            x = xp.asarray(a)
            top = xp.max(x, axis=1, keepdims=True)
            out = top + xp.log(xp.sum(xp.exp(x - top), axis=1, keepdims=True))
            expected = a.max(axis=1, keepdims=True) + np.log(np.exp(a - a.max(axis=1, keepdims=True)).sum(axis=1,
                                                                                                         keepdims=True))
            # Native sums add in another order: a few roundings of log's argument.
            np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-14)
    assert counters["plans_built"] == 1 and counters["steps_run"] == 3
