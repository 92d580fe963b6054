"""arrayx.jit: one trace and one compiled computation per signature."""

import numpy as np
import pytest

import arrayx as xp
from arrayx import debug
from arrayx.autodiff import grad


def test_a_signature_is_traced_once_and_a_new_shape_traces_again():
    calls = []

    @xp.jit
    def f(x, y):
        calls.append(1)
        return xp.exp(x) * y + 1.0

    a, b = np.linspace(0, 1, 5), np.linspace(1, 2, 5)
    debug.reset()
    first = f(xp.asarray(a), xp.asarray(b))
    assert debug.counters["plans_built"] == 1
    second = f(xp.asarray(b), xp.asarray(a))
    assert debug.counters["plans_built"] == 1 and len(calls) == 1
    np.testing.assert_array_equal(np.asarray(first), np.exp(a) * b + 1.0)
    np.testing.assert_array_equal(np.asarray(second), np.exp(b) * a + 1.0)
    f(xp.asarray(np.ones(3)), xp.asarray(np.ones(3)))
    assert debug.counters["plans_built"] == 2 and len(calls) == 2
    f(np.ones(3), np.ones(3))           # NumPy arrays of that signature (dtype float64): traced again
    np.testing.assert_array_equal(np.asarray(f(np.zeros(3), np.ones(3))), np.full(3, 2.0))


def test_static_arguments_are_part_of_the_signature():
    @xp.jit
    def power(x, n):
        for _ in range(n - 1):
            x = x * x
        return x

    traced = xp.jit(power.__wrapped__, static_argnums=1)
    x = xp.asarray(np.array([2.0, 3.0]))
    np.testing.assert_array_equal(np.asarray(traced(x, 2)), [4.0, 9.0])
    np.testing.assert_array_equal(np.asarray(traced(x, 3)), [16.0, 81.0])
    with pytest.raises(TypeError, match=r"jit\(power\): argument 1 is a int"):
        power(x, 2)


def test_jit_of_grad_runs_a_compiled_gradient():
    def loss(w, x):
        return xp.sum(xp.tanh(x @ w) ** 2)

    w = xp.ones((3, 2)) / 3
    x = xp.reshape(xp.linspace(-1, 1, 12), (4, 3))
    fast = xp.jit(grad(loss))
    # Same graph and kernels as the uncompiled gradient; summation order inside
    # fused reductions may differ.
    np.testing.assert_allclose(np.asarray(fast(w, x)), np.asarray(grad(loss)(w, x)), rtol=1e-14)


def test_a_force_point_inside_the_traced_function_names_it():
    @xp.jit
    def scaled(x):
        return x / float(xp.max(x))

    with pytest.raises(TypeError, match=r"jit\(scaled\).*static_argnums"):
        scaled(xp.asarray(np.ones(3)))


def test_a_jitted_training_loop_matches_the_plain_loop():
    rng = np.random.default_rng(1)
    x = xp.asarray(rng.standard_normal((32, 4)))
    target = xp.asarray(rng.standard_normal((32, 1)))

    def loss(w, x, target):
        return xp.mean((x @ w - target) ** 2)

    step = xp.jit(lambda w, x, t: w - 0.1 * grad(loss)(w, x, t))
    w_fast = w_plain = xp.zeros((4, 1))
    for _ in range(200):
        w_fast = step(w_fast, x, target)
        w_plain = w_plain - 0.1 * grad(loss)(w_plain, x, target)
    np.testing.assert_allclose(np.asarray(w_fast), np.asarray(w_plain), rtol=1e-12)
    np.testing.assert_allclose(float(loss(w_fast, x, target)), float(loss(w_plain, x, target)), rtol=1e-12)
