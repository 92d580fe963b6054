"""Eager mode: `xp.set_eager(True)`, `xp.debug.eager()` and ARRAYX_EAGER=1
compute each operation at its call. Its results are lazy mode's: the
differential test modules run in both modes (conftest's `lazy_and_eager`);
here, what eager mode changes: where errors come, what a debugger sees,
jit, autodiff and computations built on placeholders."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import arrayx as xp
from arrayx.autodiff import grad, gradients, retain_history, value_and_grad, vjp
from arrayx.namespace.build import eager_mode
from arrayx.transformers import make_transformer, placeholder


@pytest.fixture
def eager():
    """Eager mode for one test, the mode before it restored after it."""
    with xp.debug.eager():
        yield


def test_set_eager_takes_a_bool():
    with pytest.raises(TypeError, match="^set_eager: eager must be a bool, got int$"):
        xp.set_eager(1)


def test_each_operation_is_computed_at_its_call_and_frees_its_inputs(eager):
    x = xp.asarray([1.0, 2.0, 3.0])
    y = xp.exp(x) * 2.0 + 1.0
    z = xp.sum(y[1:])
    for a in (y, z):
        assert a._node.buffer is not None and a._node.inputs == ()   # computed, its history freed
    np.testing.assert_allclose(float(z), float(np.sum(np.exp([2.0, 3.0]) * 2.0 + 1.0)), rtol=1e-15)


def test_a_value_error_comes_at_the_line_that_causes_it(eager):
    m = xp.asarray([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(np.linalg.LinAlgError, match=r"^linalg.inv: Singular matrix \(recorded at test_eager.py"):
        xp.linalg.inv(m)
    with pytest.raises(IndexError, match="^take: index 4 is out of bounds"):
        xp.take(xp.arange(3.0), xp.asarray([4]))


def test_the_scope_restores_the_mode_it_found():
    assert not eager_mode()
    with xp.debug.eager():
        assert eager_mode()
        with xp.debug.eager():
            assert eager_mode()
        assert eager_mode()
        xp.set_eager(False)
        assert (xp.ones(2) + 1.0)._node.buffer is None
    assert not eager_mode()
    xp.set_eager(True)
    with xp.debug.eager():
        pass
    assert eager_mode()
    xp.set_eager(False)
    assert (xp.ones(2) + 1.0)._node.buffer is None


def test_the_environment_variable_makes_eager_mode_the_default():
    code = ("import arrayx as xp; from arrayx.namespace.build import eager_mode; "
            "print(eager_mode(), (xp.ones(2) + 1.0)._node.buffer is not None)")
    env = dict(os.environ, ARRAYX_EAGER="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(xp.__file__))))
    assert out.stdout.split() == ["True", "True"]


def _loss(w, x):
    return xp.sum(xp.tanh(x @ w) ** 2) / 3.0


def test_gradients_are_those_of_lazy_mode():
    rng = np.random.default_rng(0)
    w_np, x_np = rng.standard_normal(3), rng.standard_normal((4, 3))

    def differentiate():
        w, x = xp.asarray(w_np), xp.asarray(x_np)
        value, g = value_and_grad(_loss)(w, x)
        second = grad(lambda v: xp.sum(grad(_loss)(v, x) * xp.asarray([1.0, -1.0, 0.5])))(w)
        out, pullback = vjp(lambda v: xp.sin(v) * 2.0, w)
        return [np.asarray(a) for a in (value, g, second, out, pullback(xp.ones(3))[0])]

    lazy = differentiate()
    with xp.debug.eager():
        eager = differentiate()
    for a, b in zip(lazy, eager):
        # Fused and unfused kernels may round a sum's terms in another order.
        np.testing.assert_allclose(b, a, rtol=1e-13, atol=1e-15)
    # and against the closed form of the first derivative
    t = np.tanh(x_np @ w_np)
    np.testing.assert_allclose(eager[1], x_np.T @ (2 * t * (1 - t ** 2)) / 3.0, rtol=1e-12)


def test_gradients_of_arrays_held_outside_grad_need_their_history_kept(eager):
    x = xp.asarray([0.5, 2.0])
    with retain_history():
        y = xp.sum(xp.exp(x * 2.0))
    (g,) = gradients(y, [x])
    np.testing.assert_allclose(np.asarray(g), 2.0 * np.exp([1.0, 4.0]), rtol=1e-15)
    # Outside such a scope a computed node frees its inputs, as at a force point: no path, a warning.
    with pytest.warns(UserWarning, match="carry no history"):
        (g,) = gradients(xp.sum(xp.exp(x * 2.0)), [x])
    np.testing.assert_array_equal(np.asarray(g), [0.0, 0.0])


def test_a_jitted_function_runs_as_plain_python(eager):
    calls = []

    @xp.jit
    def f(a, b):
        calls.append(a._node.buffer is not None)
        return xp.exp(a) * float(xp.sum(b)) + 1.0   # float() would be a force point inside a trace

    host = np.linspace(0.0, 1.0, 5)
    out = f(xp.asarray(host), host)   # a NumPy argument becomes an array, as in a compiled call
    np.testing.assert_allclose(np.asarray(out), np.exp(host) * host.sum() + 1.0, rtol=1e-15)
    f(xp.asarray(host), host)
    assert calls == [True, True]   # called each time, on values


def test_a_jitted_function_takes_arrays_of_one_device_as_compiled(eager):
    pytest.importorskip("dask.array")
    f = xp.jit(lambda a, b: a + b)
    with pytest.raises(ValueError, match=r"^jit\(<lambda>\): the array arguments are on devices"):
        f(xp.ones(2), xp.ones(2, device="dask"))


def test_a_jitted_function_gives_what_it_gives_compiled():
    f = xp.jit(lambda a, b: {"y": xp.linalg.solve(a, b) * 2.0, "n": xp.linalg.vector_norm(b)})
    a, b = np.eye(3) * 2.0 + 0.1, np.arange(3.0)
    compiled = f(a, b)
    with xp.debug.eager():
        plain = f(a, b)
    assert sorted(plain) == ["n", "y"]
    for key in plain:
        np.testing.assert_allclose(np.asarray(plain[key]), np.asarray(compiled[key]), rtol=1e-14)


def test_a_computation_built_on_placeholders_stays_recorded(eager):
    p = placeholder((3,), xp.float64)
    q = xp.exp(p) * 2.0 + xp.ones(3)
    assert q._node.buffer is None   # it reads a placeholder: no value until the computation runs
    ones = xp.ones(3)
    assert ones._node.buffer is not None
    run = make_transformer().computation(q, p)
    np.testing.assert_allclose(np.asarray(run(np.zeros(3))), [3.0, 3.0, 3.0])


def test_element_writes_and_in_place_operators_keep_their_semantics(eager):
    x = xp.zeros(4)
    y = x + 1.0
    x[1] = 5.0
    x[xp.asarray([2, 3])] = xp.asarray([6.0, 7.0])
    x += 1.0
    np.testing.assert_array_equal(np.asarray(x), [1.0, 6.0, 7.0, 8.0])
    np.testing.assert_array_equal(np.asarray(y), [1.0, 1.0, 1.0, 1.0])
    assert math.isclose(float(xp.mean(x)), 5.5)
