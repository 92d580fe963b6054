"""Composites the reverse sweep differentiates as a whole (arrayx/autodiff/composite_rules.py).

The stable logsumexp m + log(sum(exp(z - m))) with m = max(z) gets the softmax as
its gradient directly, without the max's rule (whose contribution is zero exactly).
sqrt(x @ x), the Euclidean norm of a vector, gets x / norm, and 0 at the origin.
Oracles: NumPy's softmax (float64: both compute exp(z - m) / sum in a few
operations, so they agree to a few eps), central finite differences where the
composite's inner nodes have other users (error ~ eps^(2/3), see test_autodiff.py),
and the step counts of the same loss gradient written by hand in arrayx.
"""

import numpy as np
import pytest

import arrayx as xp
from arrayx.autodiff import grad, gradients, retain_history

EPS = float(np.finfo(np.float64).eps)
# Softmax against NumPy's: exp, a sum of <= 10 terms and a product and a division, in
# a different order: a few eps relative to the largest entry; 64 eps leaves room.
SOFTMAX_RTOL = 64 * EPS
FD_RTOL = 1e3 * EPS ** (2 / 3)


def logsumexp(z, axis, m_first=True):
    m = xp.max(z, axis=axis, keepdims=True)
    log = xp.log(xp.sum(xp.exp(z - m), axis=axis, keepdims=True))
    return m + log if m_first else log + m


def np_softmax(z, axis):
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def central_differences(f, x, h=EPS ** (1 / 3)):
    """The gradient of scalar f (on NumPy float64 arrays) at x by central differences."""
    g = np.empty_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = h * max(1.0, abs(x[i]))
        g[i] = (f(x + step) - f(x - step)) / (2 * step[i])
    return g


@pytest.mark.parametrize("shape, axis", [((6, 5), 1), ((6, 5), 0), ((3, 4, 5), (1, 2)), ((7,), 0)])
@pytest.mark.parametrize("m_first", [True, False], ids=["m+log", "log+m"])
def test_logsumexp_gradient_is_the_softmax(shape, axis, m_first):
    rng = np.random.default_rng(3)
    z_np, w_np = rng.standard_normal(shape) * 3.0, rng.standard_normal(shape)
    w_row = np.sum(w_np, axis=axis, keepdims=True)   # the cotangent of each logsumexp
    z, w = xp.asarray(z_np), xp.asarray(w_row)
    g = grad(lambda z: xp.sum(logsumexp(z, axis, m_first) * w))(z)
    expected = w_row * np_softmax(z_np, axis)
    np.testing.assert_allclose(np.asarray(g), expected, rtol=0, atol=SOFTMAX_RTOL * np.max(np.abs(expected)))


def test_logsumexp_gradient_is_exact_at_tied_maxima():
    """Tied row maxima share nothing extra: each gets its softmax share, equal to the
    bit, and each row sums to 1."""
    z_np = np.array([[2.0, 2.0, -1.0, 0.5], [3.0, 3.0, 3.0, 3.0], [0.0, -4.0, 0.0, 1.0]])
    g = np.asarray(grad(lambda z: xp.sum(logsumexp(z, 1)))(xp.asarray(z_np)))
    assert g[0, 0] == g[0, 1] and g[1, 0] == g[1, 1] == g[1, 2] == g[1, 3] and g[2, 0] == g[2, 2]
    np.testing.assert_allclose(g, np_softmax(z_np, 1), rtol=SOFTMAX_RTOL)
    np.testing.assert_allclose(np.sum(g, axis=1), 1.0, rtol=SOFTMAX_RTOL)


def test_logsumexp_in_float32_stays_float32():
    z_np = np.random.default_rng(4).standard_normal((5, 10)).astype(np.float32)
    g = grad(lambda z: xp.sum(logsumexp(z, 1)))(xp.asarray(z_np))
    assert g.dtype == xp.float32
    # float32 rounding of the same few operations: a few float32 eps
    np.testing.assert_allclose(np.asarray(g), np_softmax(z_np.astype(np.float64), 1), rtol=1e-6)


def test_logsumexp_inner_nodes_read_elsewhere_still_pass_their_gradients():
    """The max and exp(z - m) of the composite also feed other terms of the loss: those
    terms' gradients flow by the primitives' own rules and add up with the softmax."""
    rng = np.random.default_rng(5)
    z_np = np.linspace(-2.0, 2.0, 12)[rng.permutation(12)].reshape(3, 4)   # distinct: no ties in max

    def loss(xpm, z):
        m = xpm.max(z, axis=1, keepdims=True)
        e = xpm.exp(z - m)
        lse = m + xpm.log(xpm.sum(e, axis=1, keepdims=True))
        return xpm.sum(lse * 1.5) + xpm.sum(m * m) + xpm.sum(e * z)

    g = np.asarray(grad(lambda z: loss(xp, z))(xp.asarray(z_np)))
    expected = central_differences(lambda z: loss(np, z), z_np)
    np.testing.assert_allclose(g, expected, rtol=0, atol=FD_RTOL * np.max(np.abs(expected)))


def test_logsumexp_differentiated_at_an_inner_node():
    """gradients() with respect to the max or the exp inside: the composite is not
    taken as a whole, and each gets its own cotangent (0 for the max, whose value
    the logsumexp does not depend on; 1 / sum for the exp)."""
    z_np = np.array([[0.5, -1.0, 2.0], [1.0, 3.0, -2.0]])
    with retain_history():
        z = xp.asarray(z_np)
        m = xp.max(z, axis=1, keepdims=True)
        e = xp.exp(z - m)
        s = xp.sum(e, axis=1, keepdims=True)
        out = xp.sum(m + xp.log(s))
        gm, ge = gradients(out, [m, e])
    np.testing.assert_allclose(np.asarray(gm), 0.0, atol=4 * EPS)
    np.testing.assert_allclose(np.asarray(ge), np.broadcast_to(1.0 / np.asarray(s), (2, 3)), rtol=EPS)


def test_logsumexp_second_derivative():
    """A Hessian-vector product through the composite's gradient (its softmax is built
    from differentiable primitives) against central differences of the softmax."""
    rng = np.random.default_rng(6)
    z_np, v_np = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    v = xp.asarray(v_np)
    hvp = grad(lambda z: xp.sum(grad(lambda u: xp.sum(logsumexp(u, 1)))(z) * v))(xp.asarray(z_np))
    expected = central_differences(lambda z: np.sum(np_softmax(z, 1) * v_np), z_np)
    np.testing.assert_allclose(np.asarray(hvp), expected, rtol=0, atol=FD_RTOL * np.max(np.abs(expected)))


def _steps(f, *args):
    """The steps one force of f(*args) runs (its plan built beforehand)."""
    xp.eval(f(*args))
    before = xp.debug.counters["steps_run"]
    xp.eval(f(*args))
    return xp.debug.counters["steps_run"] - before


def test_cross_entropy_gradient_runs_as_few_steps_as_written_by_hand():
    """grad of the softmax cross-entropy (a logsumexp, a mean) and (softmax - y) / n
    written out: the gradient is one fused group plus the mean's 0-d 1 / n. The
    max's rule used to add six steps (a tie count, two sums, their quotients)."""
    rng = np.random.default_rng(7)
    z = xp.asarray(rng.standard_normal((32, 10)))
    y = xp.asarray(np.eye(10)[rng.integers(0, 10, 32)])

    def cross_entropy(z):
        return xp.mean(xp.sum(y * (logsumexp(z, 1) - z), axis=1))

    def by_hand(z):
        e = xp.exp(z - xp.max(z, axis=1, keepdims=True))
        return (e / xp.sum(e, axis=1, keepdims=True) - y) / z.shape[0]

    g = grad(cross_entropy)(z)
    np.testing.assert_allclose(np.asarray(g), np.asarray(by_hand(z)), rtol=0, atol=SOFTMAX_RTOL)
    assert _steps(grad(cross_entropy), z) <= _steps(by_hand, z) + 1


def norm_of_computed(v):
    return xp.linalg.vector_norm(v * 1.0)   # a computed vector: vector_norm takes its dot with itself


@pytest.mark.parametrize("norm", [norm_of_computed, lambda v: xp.sqrt(xp.vecdot(v * 1.0, v * 1.0))],
                         ids=["vector_norm", "sqrt(vecdot)"])
def test_the_norm_of_a_vector_has_gradient_x_over_norm(norm):
    x_np = np.array([3.0, -4.0, 1.0, 0.5])
    g = np.asarray(grad(lambda v: norm(v) * 2.5)(xp.asarray(x_np)))
    # x / norm in a product and a quotient, against NumPy's: a few eps.
    np.testing.assert_allclose(g, 2.5 * x_np / np.linalg.norm(x_np), rtol=4 * EPS)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_norm_of_a_vector_has_subgradient_zero_at_the_origin(dtype):
    """The primitives' rules would give inf * 0 = NaN there; the value stays 0."""
    x = xp.asarray(np.zeros(5, dtype))
    g = grad(lambda v: norm_of_computed(v))(x)
    assert g.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(g), np.zeros(5, dtype))
    assert float(norm_of_computed(x)) == 0.0


def test_the_norm_of_a_vector_second_derivative():
    """The Hessian of the norm, (I - x x^T / |x|^2) / |x|, through the composite's
    gradient (built from differentiable primitives), applied to v."""
    rng = np.random.default_rng(8)
    x_np, v_np = rng.standard_normal(4), rng.standard_normal(4)
    v = xp.asarray(v_np)
    hvp = grad(lambda x: xp.sum(grad(norm_of_computed)(x) * v))(xp.asarray(x_np))
    n = np.linalg.norm(x_np)
    expected = (v_np - x_np * (x_np @ v_np) / n ** 2) / n
    np.testing.assert_allclose(np.asarray(hvp), expected, rtol=0, atol=16 * EPS * np.max(np.abs(expected)))
