"""Gradient graphs rebuilt from templates (arrayx/autodiff/templates.py).

From the third reverse sweep over a history of one structure on, the
gradient graph is rebuilt from a template instead of by the VJP rules. The
rebuilt graph must be the graph the rules build: each test computes the
gradient on the rebuilt path and again after forgetting every template (the
rules' path), and asserts the two equal exactly (the same nodes run the
same kernels), and against an oracle (NumPy's hand-written gradient, or the
rules' path itself where the rules are tested elsewhere). Every test starts
from no templates.
"""

import numpy as np
import pytest

import arrayx as xp
from arrayx.autodiff import grad, gradients, value_and_grad, vjp
from arrayx.autodiff.templates import forget_templates
from arrayx.debug import counters

# A gradient of a few float64 operations against NumPy's same formula in a
# different order: a few eps relative to the result; 64 eps leaves room.
RTOL = 64 * float(np.finfo(np.float64).eps)


@pytest.fixture(autouse=True)
def no_templates():
    forget_templates()
    yield
    forget_templates()


def warm(fn, *args):
    """Call fn until its sweeps' structure is the one later calls have: the
    first call's scalar constants are leaves still to compute, realized by
    its force, so the second and third calls sweep the settled structure and
    the third keeps its template."""
    for _ in range(3):
        to_numpy(fn(*args))


def rebuilt_then_swept(fn, *args, sweeps=1):
    """(gradient on the rebuilt path, the same by the rules, as NumPy trees);
    asserts that a warm call rebuilt each of its `sweeps` graphs from a
    template and that a call after forgetting them rebuilt none."""
    warm(fn, *args)
    before = counters["gradients_rebuilt"]
    rebuilt = to_numpy(fn(*args))
    assert counters["gradients_rebuilt"] == before + sweeps
    forget_templates()
    swept = to_numpy(fn(*args))
    assert counters["gradients_rebuilt"] == before + sweeps
    return rebuilt, swept


def to_numpy(tree):
    if isinstance(tree, (tuple, list)):
        return [to_numpy(t) for t in tree]
    return np.asarray(tree)


def assert_same(rebuilt, swept):
    for r, s in zip(np.atleast_1d(np.array(rebuilt, dtype=object)).ravel(),
                    np.atleast_1d(np.array(swept, dtype=object)).ravel()):
        np.testing.assert_array_equal(r, s)


def mlp_loss(w1, w2, x, y):
    z = xp.maximum(x @ w1, 0.0) @ w2
    top = xp.max(z, axis=1, keepdims=True)
    lse = top + xp.log(xp.sum(xp.exp(z - top), axis=1, keepdims=True))
    return xp.mean(xp.sum(y * (lse - z), axis=1))


def mlp_gradients_by_hand(w1, w2, x, y):
    pre = x @ w1
    h = np.maximum(pre, 0.0)
    z = h @ w2
    e = np.exp(z - z.max(axis=1, keepdims=True))
    dz = (e / e.sum(axis=1, keepdims=True) - y) / x.shape[0]
    return x.T @ (np.where(pre > 0, dz @ w2.T, 0.0)), h.T @ dz


def test_a_training_loop_rebuilds_its_gradient_graph_once_warm():
    rng = np.random.default_rng(0)
    w1, w2 = rng.standard_normal((6, 5)) * 0.5, rng.standard_normal((5, 3)) * 0.5
    step = grad(mlp_loss, argnums=(0, 1))
    a1, a2 = xp.asarray(w1), xp.asarray(w2)
    before = counters["gradients_rebuilt"]
    for i in range(6):
        x = rng.standard_normal((4, 6))
        y = np.eye(3)[rng.integers(0, 3, 4)]
        g1, g2 = step(a1, a2, xp.asarray(x), xp.asarray(y))
        # new values every step: the rebuilt graph computes from them, not from the first step's
        want1, want2 = mlp_gradients_by_hand(w1, w2, x, y)
        np.testing.assert_allclose(np.asarray(g1), want1, rtol=RTOL, atol=RTOL)
        np.testing.assert_allclose(np.asarray(g2), want2, rtol=RTOL, atol=RTOL)
        w1, w2 = w1 - 0.1 * want1, w2 - 0.1 * want2
        a1, a2 = a1 - 0.1 * g1, a2 - 0.1 * g2
        # steps 1-3 sweep by the rules (see warm), the later ones rebuild
        assert counters["gradients_rebuilt"] == before + max(0, i - 2)


@pytest.mark.parametrize("name, fn, shape", [
    ("logsumexp composite", lambda x: xp.sum(xp.max(x, axis=1, keepdims=True)
                                             + xp.log(xp.sum(xp.exp(x - xp.max(x, axis=1, keepdims=True)),
                                                             axis=1, keepdims=True))), (3, 4)),
    ("norm composite", lambda x: xp.linalg.vector_norm(x * 2.0), (5,)),
    ("maximum with ties", lambda x: xp.sum(xp.maximum(x, xp.round(x))), (3, 4)),
    ("broadcast and mean", lambda x: xp.mean((x - xp.mean(x, axis=0)) ** 2), (4, 3)),
    ("slices and setitem", lambda x: xp.sum(x[1:, ::2] * x[0, 0]), (3, 4)),
    ("solve", lambda x: xp.sum(xp.linalg.solve(x @ x.mT + 3.0 * xp.eye(3), xp.ones(3))), (3, 3)),
    ("svd, a multi-output primitive", lambda x: xp.sum(xp.linalg.svd(x)[1]), (4, 3)),
    ("a constant in the graph", lambda x: xp.sum(x ** 3.0 * 0.25), (2, 2)),
])
def test_the_rebuilt_graph_computes_what_the_rules_build(name, fn, shape):
    x = xp.asarray(np.random.default_rng(1).uniform(0.5, 1.5, shape))
    rebuilt, swept = rebuilt_then_swept(grad(fn), x)
    assert_same(rebuilt, swept)


def test_grad_of_grad_rebuilds_both_sweeps():
    x = xp.asarray([0.3, -1.2, 2.0])
    second = grad(lambda x: xp.sum(grad(lambda x: xp.sum(xp.sin(x) * x))(x)))
    rebuilt, swept = rebuilt_then_swept(second, x, sweeps=2)
    assert_same(rebuilt, swept)
    v = np.asarray(x)
    # d/dx sum(cos(x) x + sin(x)) = 2 cos(x) - x sin(x)
    np.testing.assert_allclose(rebuilt, 2 * np.cos(v) - v * np.sin(v), rtol=RTOL)


def test_vjp_and_value_and_grad_rebuild_too():
    x = xp.asarray([[1.0, 2.0], [3.0, 4.0]])
    rebuilt, swept = rebuilt_then_swept(lambda x: vjp(lambda x: xp.exp(x) * x, x)[1](xp.ones((2, 2))), x)
    assert_same(rebuilt, swept)
    rebuilt, swept = rebuilt_then_swept(lambda x: value_and_grad(lambda x: xp.sum(x * x))(x)[1], x)
    assert_same(rebuilt, swept)
    np.testing.assert_array_equal(rebuilt, 2 * np.asarray(x))


def test_another_shape_is_swept_by_the_rules_and_values_come_from_the_graph():
    f = grad(lambda x, c: xp.sum(x * c))
    warm(f, xp.ones(3), xp.asarray(np.array([2.0])))
    before = counters["gradients_rebuilt"]
    g = f(xp.ones(4), xp.asarray(np.array([2.0])))   # another shape: another structure, swept
    np.testing.assert_array_equal(np.asarray(g), np.full(4, 2.0))
    assert counters["gradients_rebuilt"] == before
    # Another value of a computed array: the same structure, rebuilt, and
    # the rebuilt graph reads the array of this call's graph.
    g = f(xp.ones(3), xp.asarray(np.array([5.0])))
    np.testing.assert_array_equal(np.asarray(g), np.full(3, 5.0))
    assert counters["gradients_rebuilt"] == before + 1


def test_a_rebuilt_sweep_still_warns_when_a_force_point_freed_the_path():
    x = xp.asarray([0.3, 0.5])
    for _ in range(4):
        y = x
        for _ in range(2100):   # past the depth limit: the chain realizes itself and loses its history
            y = y * 1.0
        with pytest.warns(UserWarning, match="carry no history"):
            (g,) = gradients(xp.sum(y), [x])
        np.testing.assert_array_equal(np.asarray(g), [0.0, 0.0])
