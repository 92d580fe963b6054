"""arrayx's calls leave no reference cycles behind.

An array held by a cycle outlives its last use until the garbage collector
runs: its buffer is neither freed nor written in place (the scheduler reads
reference counts to decide both), and every object left over brings the
next collection nearer. In a process holding scikit-learn's and SciPy's
objects one full collection takes milliseconds: a training loop with `grad`
spent 14% of its time in them while `pytree.flatten` closed over its own
recursion. Each test runs a workload once to warm the caches, then again
with the collector saving what it finds, and expects nothing.
"""

import gc

import numpy as np
import pytest

import arrayx as xp
import arrayx.ngraph as ng
import arrayx.ngraph.transformers as ngt
from arrayx.autodiff import grad, value_and_grad, vjp
from arrayx.neon.backends import Autodiff, cleanup_backend, gen_backend

# The CPU executor's: another default device brings its own library's objects.
pytestmark = pytest.mark.usefixtures("cpu_as_default_device")


def cycles_left_by(workload):
    """The objects that `workload()`, run a second time, leaves in reference cycles."""
    workload()
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        workload()
        gc.collect()
        return [type(o).__name__ for o in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


RNG = np.random.default_rng(0)
W1, W2 = RNG.standard_normal((6, 4)), RNG.standard_normal((4, 3))
X, Y = RNG.standard_normal((5, 6)), RNG.standard_normal((5, 3))


def loss(params, x, y):
    h = xp.maximum(x @ params["w1"], 0.0)
    return xp.mean(xp.sum((h @ params["w2"] - y) ** 2, axis=1))


def training_steps():
    params = {"w1": xp.asarray(W1), "w2": xp.asarray(W2)}
    x, y = xp.asarray(X), xp.asarray(Y)
    for _ in range(3):
        value, grads = value_and_grad(loss)(params, x, y)
        params = {k: params[k] - 0.1 * grads[k] for k in params}
        float(value)
    return [np.asarray(p) for p in params.values()]


def derivatives():
    x = xp.asarray(X)
    g = grad(lambda a, b: xp.sum(xp.tanh(a @ b)), argnums=(0, 1))(x, xp.asarray(W1))
    out, pullback = vjp(lambda a: (xp.sin(a), xp.exp(a)), x)
    return [np.asarray(v) for v in (*g, *pullback((xp.ones_like(out[0]), xp.ones_like(out[1]))))]


def compiled():
    step = xp.jit(lambda a, b: (a @ b, xp.sum(a)))
    return [np.asarray(v) for v in step(xp.asarray(X), xp.asarray(W1))]


def element_loops():
    x = xp.asarray(X) * 1.0
    for i in range(5):
        x[i, i] = 0.0
    return sum(float(x[i, i + 1]) for i in range(5))


def decompositions_and_transforms():
    a = xp.asarray(X)
    u, s, vt = xp.linalg.svd(a, full_matrices=False)
    q, r = xp.linalg.qr(a)
    values = xp.unique_all(xp.round(a))
    return [np.asarray(v) for v in (u, s, vt, q, r, xp.fft.rfft(a), *values)]


def neon_gradients():
    be = gen_backend("cpu", rng_seed=0, datatype=np.float64)
    try:
        a, b = be.array(X), be.array(X * 2.0)
        return Autodiff(op_tree=a * a + a * b, be=be, next_error=None).get_grad_asnumpyarray([a, b])
    finally:
        cleanup_backend()


def ngraph_gradients():
    n = ng.make_axis(length=6, name="N")
    x = ng.placeholder([n])
    w = ng.variable([n], initial_value=np.ones(6))
    cost = ng.sum(ng.tanh(w * x), out_axes=())
    transformer = ngt.make_transformer()
    try:
        return transformer.computation(ng.deriv(cost, w), x)(X[0])
    finally:
        transformer.close()


@pytest.mark.parametrize("workload", [training_steps, derivatives, compiled, element_loops,
                                      decompositions_and_transforms, neon_gradients, ngraph_gradients],
                         ids=lambda f: f.__name__)
def test_a_workload_leaves_no_reference_cycles(workload):
    assert cycles_left_by(workload) == []
