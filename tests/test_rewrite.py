"""The rewrite pass: sum(x * y) over every axis runs as one BLAS dot product;
explicit broadcasts into elementwise operations, reshapes that drop a
reduction's kept axes and reshapes to their input's own shape disappear.

Observed through the plan (no fused multiply-sum group is left: a matmul step
runs instead; the steps a force runs) and checked against NumPy, with a
tolerance for summation order where a dot sums; the recorded graph itself is
never changed.
"""

import numpy as np
import pytest

import arrayx as xp
from arrayx import debug
from arrayx.autodiff import grad
from arrayx.scheduler import schedule

# The rewrites are chosen for the CPU (a dot pays on BLAS; the dask device
# keeps the fused sum of products, one task per chunk).
pytestmark = pytest.mark.usefixtures("cpu_as_default_device")


@pytest.fixture(autouse=True)
def fresh_state():
    schedule.clear_plan_cache()
    debug.reset()


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("shape", [(1000,), (20, 30), (4, 5, 6)])
def test_sum_of_a_product_is_a_dot(dtype, shape):
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 1.5, shape).astype(dtype)
    b = rng.uniform(0.5, 1.5, shape).astype(dtype)
    x, y = xp.asarray(a), xp.asarray(b)
    total = xp.sum(x * y)
    assert debug.fused_groups(total) == []
    rtol = 1e-5 if dtype == "float32" else 1e-13   # positive terms; BLAS sums in another order
    np.testing.assert_allclose(complex(total), np.sum(a * b), rtol=rtol)
    assert debug.counters["steps_run"] == 1 + (len(shape) > 1) * 2   # the dot, after reshapes (views)
    kept = xp.sum(x * y, keepdims=True)
    assert kept.shape == (1,) * len(shape)
    np.testing.assert_allclose(np.asarray(kept), np.sum(a * b, keepdims=True), rtol=rtol)


def test_the_recorded_graph_keeps_its_primitives():
    x = xp.asarray(np.ones(10))
    total = xp.sum(x * x)
    text = xp.graph(total)
    assert "multiply" in text and "sum" in text and "matmul" not in text
    float(total)


@pytest.mark.parametrize("special, expected", [(np.inf, np.inf), (np.nan, np.nan), (-np.inf, -np.inf)])
def test_dot_keeps_special_cases(special, expected):
    a = np.ones(100)
    a[17] = special
    got = float(xp.sum(xp.asarray(a) * xp.asarray(np.full(100, 2.0))))
    np.testing.assert_equal(got, expected)
    zeros = float(xp.sum(xp.asarray(np.full(100, -0.0)) * xp.asarray(np.ones(100))))
    assert zeros == 0.0 and not np.signbit(zeros)       # as NumPy's sum: +0.0
    mixed = float(xp.sum(xp.asarray(np.array([np.inf, 1.0])) * xp.asarray(np.array([0.0, 1.0]))))
    assert np.isnan(mixed)                               # inf * 0 is NaN in both


def multiply_sum(*arrays):
    return [[i.op.name for i in g.body] for g in debug.fused_groups(*arrays)] == [["multiply", "sum"]]


def test_not_rewritten_when_the_product_is_needed_or_broadcast_or_strided():
    a = np.linspace(0, 1, 200)
    x = xp.asarray(a)
    product = x * x
    total = xp.sum(product)
    assert multiply_sum(product, total)                  # the product is an output: no dot
    xp.eval(product, total)
    np.testing.assert_allclose(float(total), np.sum(a * a), rtol=1e-13)
    broadcast = xp.sum(xp.asarray(a[:20].reshape(20, 1)) * xp.asarray(a[:10]))   # (20, 1) * (10,)
    assert multiply_sum(broadcast)
    np.testing.assert_allclose(float(broadcast), np.sum(a[:20].reshape(20, 1) * a[:10]), rtol=1e-13)
    strided = xp.asarray(a)[::2]
    assert multiply_sum(xp.sum(strided * strided))       # a strided view would be copied: left as is
    np.testing.assert_allclose(float(xp.sum(strided * strided)), np.sum(a[::2] ** 2), rtol=1e-13)


def test_integer_products_are_not_rewritten():
    x = xp.asarray(np.arange(10))
    assert multiply_sum(xp.sum(x * x))
    assert int(xp.sum(x * x)) == 285


def test_a_dot_over_an_already_rewritten_operand():
    # var is sum(c * c) / n, itself a dot; sum(var * w) then reads the copy
    a = np.random.default_rng(1).uniform(-2, 2, (2, 3, 4))
    x, w = xp.asarray(a), xp.asarray(0.5)
    np.testing.assert_allclose(float(xp.sum(xp.var(x) * w)), np.var(a) * 0.5, rtol=1e-13)


def steps_to_compute(*arrays):
    debug.reset()
    xp.eval(*arrays)
    return debug.counters["steps_run"]


def test_a_broadcast_read_by_an_elementwise_operation_is_left_to_it():
    rng = np.random.default_rng(2)
    a, b, c = rng.standard_normal((64, 1)), rng.standard_normal((64, 10)), rng.standard_normal((1, 10))
    col = xp.asarray(a) * 2.0            # computed, so its broadcast is a step of the plan
    row = xp.asarray(c) * 3.0
    wide = xp.broadcast_to(col, (64, 10))
    assert steps_to_compute(wide * xp.asarray(b)) == 2                              # col, multiply
    assert steps_to_compute(xp.broadcast_to(col, (64, 10)) + xp.broadcast_to(row, (64, 10))) == 3
    np.testing.assert_array_equal(np.asarray(wide * xp.asarray(b)), (a * 2.0) * b)
    np.testing.assert_array_equal(
        np.asarray(xp.broadcast_to(col, (64, 10)) + xp.broadcast_to(row, (64, 10))), a * 2.0 + c * 3.0)
    where = xp.where(xp.asarray(b) > 0, xp.broadcast_to(col, (64, 10)), -1.0)
    np.testing.assert_array_equal(np.asarray(where), np.where(b > 0, a * 2.0, -1.0))


def test_a_broadcast_stays_where_the_operation_would_not_broadcast_to_its_shape():
    a = np.arange(4.0).reshape(4, 1)
    col = xp.asarray(a) + 1.0
    negated = -xp.broadcast_to(col, (4, 3))          # one operand: the broadcast makes the shape
    assert steps_to_compute(negated) == 3
    np.testing.assert_array_equal(np.asarray(negated), -np.broadcast_to(a + 1.0, (4, 3)))
    both = xp.broadcast_to(col, (4, 3)) * xp.broadcast_to(col, (4, 3))
    assert both.shape == (4, 3)
    np.testing.assert_array_equal(np.asarray(both), np.broadcast_to((a + 1.0) ** 2, (4, 3)))


def test_a_reshape_dropping_a_reductions_kept_axes_is_the_reduction_without_them():
    a = np.random.default_rng(3).standard_normal((64, 256)).astype(np.float32)
    x = xp.asarray(a)
    for reduce, ref in [(xp.sum, np.sum), (xp.max, np.max), (xp.prod, np.prod)]:
        dropped = xp.reshape(reduce(x * 1.0, axis=0, keepdims=True), (256,))
        assert steps_to_compute(dropped) == 1                                    # one fused group
        # float32 in another summation order: 64 terms of |x| < 5 round by at most 64 * 5 * 2**-24 ~ 2e-5
        # in all (a column sum near 0 has no relative bound)
        np.testing.assert_allclose(np.asarray(dropped), ref(a, axis=0), rtol=1e-6, atol=2e-5)
    kept = xp.sum(x * 1.0, axis=0, keepdims=True)
    flat = xp.reshape(kept, (256,))
    xp.eval(kept, flat)                  # the kept-axes result is wanted too: both come out right
    assert kept.shape == (1, 256) and flat.shape == (256,)
    np.testing.assert_array_equal(np.asarray(flat), np.asarray(kept)[0])
    moved = xp.reshape(xp.sum(xp.asarray(np.ones((4, 5, 6))) * 2.0, axis=1, keepdims=True), (24,))
    assert steps_to_compute(moved) == 2                                          # not only dropping axes
    np.testing.assert_array_equal(np.asarray(moved), np.full(24, 10.0))


def test_a_jitted_gradient_has_no_identity_steps():
    """A reshape to its input's own shape is its input. grad's identity over each
    differentiated argument is one: over a placeholder in a computation it was a step."""
    def loss(w, x):
        return xp.sum(xp.tanh(x @ w) ** 2)

    rng = np.random.default_rng(4)
    w, x = xp.asarray(rng.standard_normal((3, 2))), xp.asarray(rng.standard_normal((4, 3)))
    fast = xp.jit(grad(loss))
    np.testing.assert_allclose(np.asarray(fast(w, x)), np.asarray(grad(loss)(w, x)), rtol=1e-14)
    with debug.profile() as p:
        fast(w, x)
    ran = [s.what for s in p.steps]
    assert "reshape" not in ran and ran.count("matmul") == 2   # the forward product and x.T @ the cotangent


def test_an_added_negative_is_a_subtraction():
    """add(negative(a), b) in either order runs as subtract(b, a), one operation fewer,
    with NumPy's values: b - a is b + (-a) in IEEE 754, signed zeros and infinities
    included, and integers wrap alike."""
    zeros = np.array([0.0, -0.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 1.5])
    others = np.array([0.0, 0.0, -0.0, -0.0, np.inf, 2.0, 1.0, -2.5])
    a, b = xp.asarray(zeros), xp.asarray(others)
    with np.errstate(invalid="ignore"):   # inf - inf: NaN in both
        pairs = [(-(a * 1.0) + b, -(zeros * 1.0) + others), (b + -(a * 1.0), others + -(zeros * 1.0))]
    for got, expected in pairs:
        assert [[i.op.name for i in g.body] for g in debug.fused_groups(got)] == [["multiply", "subtract"]]
        np.testing.assert_array_equal(np.asarray(got), expected)
        numbers = ~np.isnan(expected)    # a NaN's sign is unspecified in IEEE 754 (negating flips it)
        assert np.array_equal(np.signbit(np.asarray(got))[numbers], np.signbit(expected)[numbers])
    for dtype in (np.int8, np.uint8):
        i, j = np.array([-128, 5, 127, 0]).astype(dtype), np.array([1, -7, 3, 0]).astype(dtype)
        got = -(xp.asarray(i) * 1) + xp.asarray(j)
        np.testing.assert_array_equal(np.asarray(got), -(i * 1) + j)


def test_a_negative_read_elsewhere_or_promoted_stays():
    n = np.array([-128, 5, 127], dtype=np.int8)
    x = np.array([0.5, 1.5, 2.5])
    promoted = -(xp.asarray(n) * 1) + xp.asarray(x)      # int8 wraps -(-128) before float64 sees it
    np.testing.assert_array_equal(np.asarray(promoted), -(n * 1) + x)
    negated = -(xp.asarray(x) * 2.0)
    both = negated + xp.asarray(x) + negated             # read twice: computed once, then added
    assert "negative" in [i.op.name for i in debug.fused_groups(both)[0].body]
    np.testing.assert_array_equal(np.asarray(both), -(x * 2.0) + x + -(x * 2.0))
