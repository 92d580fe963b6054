"""The rewrite pass: sum(x * y) over every axis runs as one BLAS dot product.

Observed through the plan (no fused multiply-sum group is left: a matmul step
runs instead) and checked against NumPy with a tolerance for summation
order; the recorded graph itself is never changed.
"""

import numpy as np
import pytest

import arrayx as xp
from arrayx import debug
from arrayx.scheduler import schedule


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
