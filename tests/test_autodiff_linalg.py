"""Gradients through the linear algebra functions, against finite differences.

Each check differentiates L = sum(f(x) * w) for a random weight w (reverse
mode through arrayx.autodiff) and compares with central differences of L in
float64, one input element at a time.

Tolerances: a central difference with step h = eps^(1/3) * max(1, |x_i|)
has truncation error ~ h^2 |L'''| / 6 and rounding error ~ eps |L| / h, both
~ eps^(2/3) ≈ 4e-11 relative to the size of L and of its derivatives. The
inputs are well conditioned (SPD matrices A A^T + n I, spectra and singular
values with gaps >= 1, condition numbers <= ~10), so those derivative
constants stay below ~1e3: RTOL = ATOL = 1e-6 (relative to the largest
gradient entry) is ~1e2 above the expected error, while a wrong rule is off
by O(1).

Functions whose outputs have a sign gauge (eigenvectors, singular vectors)
are checked through gauge-invariant losses; eigh and cholesky through a
symmetric parameterization (x + x^T) / 2, since they read one triangle.
"""

import math
import zlib

import numpy as np
import pytest

import arrayx as xp
from arrayx.autodiff import grad, gradients, vjp

RTOL = 1e-6
ATOL = 1e-6
H = np.finfo(np.float64).eps ** (1 / 3)


# --- helpers ---------------------------------------------------------------

def central_differences(loss, inputs, i):
    """dL/d inputs[i] by central differences; loss takes NumPy arrays, returns a float."""
    x = inputs[i]
    out = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        h = H * max(1.0, abs(x[idx]))
        args = list(inputs)
        for sign in (1, -1):
            shifted = x.copy()
            shifted[idx] += sign * h
            args[i] = shifted
            out[idx] += sign * loss(*args)
        out[idx] /= 2 * h
    return out


def check(f, *inputs, seed=0, wrt=None):
    """Reverse-mode gradient of sum(f(*xs) * w) against central differences, for each input.

    Returns the reverse-mode gradients (NumPy) for further checks.
    """
    inputs = [np.asarray(x, dtype=np.float64) for x in inputs]
    wrt = range(len(inputs)) if wrt is None else wrt
    y0 = np.asarray(f(*(xp.asarray(x) for x in inputs)))
    w = np.random.default_rng(seed + 1000).standard_normal(y0.shape)

    def loss(*xs):
        return float(xp.sum(f(*(xp.asarray(x) for x in xs)) * xp.asarray(w)))

    y, pull = vjp(f, *(xp.asarray(x) for x in inputs))
    np.testing.assert_allclose(np.asarray(y), y0, rtol=1e-12, atol=1e-12)
    found = pull(xp.asarray(w))
    assert len(found) == len(inputs)
    results = []
    for i in wrt:
        got = np.asarray(found[i])
        assert got.shape == inputs[i].shape and got.dtype == np.float64
        expected = central_differences(loss, inputs, i)
        scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL * scale,
                                   err_msg=f"gradient of input {i}")
        results.append(got)
    return results


def rng_for(*key):
    """A generator seeded by the test's key (crc32: the same in every run, unlike hash())."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def general(rng, batch, n):
    """Well-conditioned square matrices: n I + N(0, 1) entries (cond ~ 3)."""
    return rng.standard_normal(batch + (n, n)) + n * np.eye(n)


def spd(rng, batch, n):
    b = rng.standard_normal(batch + (n, n))
    return b @ np.swapaxes(b, -1, -2) + n * np.eye(n)


def orthonormal(rng, batch, m, k):
    q, _ = np.linalg.qr(rng.standard_normal(batch + (m, k)))
    return q


def with_singular_values(rng, batch, m, n, s):
    """U diag(s) V^T: an m x n matrix with exactly the singular values s."""
    k = min(m, n)
    u, v = orthonormal(rng, batch, m, k), orthonormal(rng, batch, n, k)
    return (u * np.asarray(s, dtype=np.float64)) @ np.swapaxes(v, -1, -2)


def symmetric_with_eigenvalues(rng, batch, w):
    q = orthonormal(rng, batch, len(w), len(w))
    return (q * np.asarray(w, dtype=np.float64)) @ np.swapaxes(q, -1, -2)


def sym(x):
    return (x + x.mT) * 0.5


# --- inverses, determinants, systems ---------------------------------------

@pytest.mark.parametrize("batch", [(), (2,), (2, 1)])
def test_inv(batch):
    check(xp.linalg.inv, general(rng_for("inv", batch), batch, 3))


@pytest.mark.parametrize("batch", [(), (3,)])
def test_det(batch):
    check(xp.linalg.det, general(rng_for("det", batch), batch, 3))


def test_det_gradient_is_det_times_inverse_transpose():
    a = general(rng_for("det-formula"), (2,), 4)
    g = np.asarray(grad(lambda x: xp.sum(xp.linalg.det(x)))(xp.asarray(a)))
    expected = np.linalg.det(a)[:, None, None] * np.swapaxes(np.linalg.inv(a), -1, -2)
    np.testing.assert_allclose(g, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("batch", [(), (2,)])
def test_slogdet_logabsdet(batch):
    a = general(rng_for("slogdet", batch), batch, 3)
    a[..., 0, :] *= -1.0  # negative determinants: the gradient of log|det| is inv(a)^T all the same
    assert np.all(np.linalg.det(a) < 0)
    check(lambda x: xp.linalg.slogdet(x).logabsdet, a)


def test_slogdet_sign_gets_no_gradient():
    a = xp.asarray(general(rng_for("slogdet-sign"), (), 3))
    g = grad(lambda x: xp.sum(xp.linalg.slogdet(x).sign * 5.0))(a)
    np.testing.assert_array_equal(np.asarray(g), np.zeros((3, 3)))
    # Both fields in one loss: only logabsdet contributes.
    g = grad(lambda x: xp.sum(xp.linalg.slogdet(x).sign + xp.linalg.slogdet(x).logabsdet))(a)
    np.testing.assert_allclose(np.asarray(g), np.linalg.inv(np.asarray(a)).T, rtol=1e-12)


@pytest.mark.parametrize("a_batch, b_shape", [
    ((), (3,)),            # 1-D x2: one vector
    ((2,), (3,)),          # one vector for every matrix of a stack
    ((), (3, 2)),
    ((2,), (3, 2)),        # one right-hand side matrix for every matrix
    ((), (2, 3, 2)),       # b's stack broadcasts a
    ((2, 1), (4, 3, 1)),   # both broadcast: result stack (2, 4)
])
def test_solve(a_batch, b_shape):
    rng = rng_for("solve", a_batch, b_shape)
    check(xp.linalg.solve, general(rng, a_batch, 3), rng.standard_normal(b_shape))


def test_solve_with_gradients():
    rng = rng_for("solve-gradients")
    a, b = xp.asarray(general(rng, (2,), 3)), xp.asarray(rng.standard_normal((3,)))
    x = xp.linalg.solve(a, b)
    ga, gb = gradients(xp.sum(x), [a, b])
    ga_ref = -np.linalg.solve(np.swapaxes(np.asarray(a), -1, -2), np.ones((2, 3, 1))) * np.asarray(x)[:, None, :]
    gb_ref = np.linalg.solve(np.swapaxes(np.asarray(a), -1, -2), np.ones((2, 3, 1)))[..., 0].sum(axis=0)
    np.testing.assert_allclose(np.asarray(ga), ga_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(gb), gb_ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 4, 3), (3, 3)])
def test_pinv(shape):
    rng = rng_for("pinv", shape)
    a = with_singular_values(rng, shape[:-2], *shape[-2:], [3.0, 2.0, 1.0])
    check(xp.linalg.pinv, a)


# --- cholesky, eigh ----------------------------------------------------------

@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("batch", [(), (2,)])
def test_cholesky(upper, batch):
    a = spd(rng_for("cholesky", upper, batch), batch, 3)
    check(lambda x: xp.linalg.cholesky(sym(x), upper=upper), a)


@pytest.mark.parametrize("f", [
    lambda x: xp.linalg.cholesky(x), lambda x: xp.linalg.cholesky(x, upper=True),
    lambda x: xp.linalg.eigh(x).eigenvalues, lambda x: xp.linalg.eigh(x).eigenvectors ** 2,
    xp.linalg.eigvalsh,
], ids=["cholesky", "cholesky-upper", "eigh-w", "eigh-v", "eigvalsh"])
def test_gradients_for_symmetric_inputs_are_symmetric(f):
    # These read one triangle of x; the gradient returned is the one along
    # symmetric perturbations, itself symmetric.
    rng = rng_for("symmetric-gradient")
    a = xp.asarray(symmetric_with_eigenvalues(rng, (), [1.0, 2.0, 3.5, 5.0]))
    w = xp.asarray(rng.standard_normal(f(a).shape))
    g = np.asarray(grad(lambda x: xp.sum(f(x) * w))(a))
    assert np.max(np.abs(g)) > 0.1
    np.testing.assert_allclose(g, g.T, rtol=0, atol=1e-12)


@pytest.mark.parametrize("batch", [(), (2,)])
def test_eigh_eigenvalues(batch):
    a = symmetric_with_eigenvalues(rng_for("eigh-w", batch), batch, [-1.0, 0.5, 2.0, 4.0])
    check(lambda x: xp.linalg.eigh(sym(x)).eigenvalues, a)


@pytest.mark.parametrize("batch", [(), (2,)])
def test_eigh_eigenvectors(batch):
    # v * v and v diag(c) v^T do not depend on the eigenvectors' signs.
    a = symmetric_with_eigenvalues(rng_for("eigh-v", batch), batch, [-1.0, 0.5, 2.0, 4.0])
    c = xp.asarray([1.0, -2.0, 0.5, 3.0])
    check(lambda x: xp.linalg.eigh(sym(x)).eigenvectors ** 2, a)
    check(lambda x: (xp.linalg.eigh(sym(x)).eigenvectors * c) @ xp.linalg.eigh(sym(x)).eigenvectors.mT, a)


def test_eigh_both_fields():
    a = symmetric_with_eigenvalues(rng_for("eigh-both"), (), [1.0, 2.0, 3.5])

    def f(x):
        w, v = xp.linalg.eigh(sym(x))
        return (v * xp.exp(w)) @ v.mT   # the matrix exponential of sym(x)
    check(f, a)


@pytest.mark.parametrize("batch", [(), (3,)])
def test_eigvalsh(batch):
    a = symmetric_with_eigenvalues(rng_for("eigvalsh", batch), batch, [-2.0, 1.0, 3.0])
    check(lambda x: xp.linalg.eigvalsh(sym(x)), a)


def test_eigvalsh_with_repeated_eigenvalues_sum():
    # A symmetric function of the eigenvalues (trace) is differentiable even
    # where they repeat: the gradient of sum(eigvalsh(x)) is I.
    a = xp.asarray(np.eye(3) * 2.0)
    g = grad(lambda x: xp.sum(xp.linalg.eigvalsh(x)))(a)
    np.testing.assert_allclose(np.asarray(g), np.eye(3), rtol=1e-12, atol=1e-12)


# --- svd, svdvals --------------------------------------------------------------

SVD_SHAPES = [(4, 3), (3, 4), (3, 3), (2, 4, 3)]


@pytest.mark.parametrize("shape", SVD_SHAPES)
def test_svd_singular_values(shape):
    a = with_singular_values(rng_for("svd-s", shape), shape[:-2], *shape[-2:], [3.0, 2.0, 1.0])
    check(lambda x: xp.linalg.svd(x, full_matrices=False).S, a)


@pytest.mark.parametrize("shape", SVD_SHAPES)
def test_svd_vectors(shape):
    a = with_singular_values(rng_for("svd-uv", shape), shape[:-2], *shape[-2:], [3.0, 2.0, 1.0])
    c = xp.asarray([1.0, -2.0, 0.5])

    def reconstruct(x):
        u, s, vh = xp.linalg.svd(x, full_matrices=False)
        return (u * xp.expand_dims(s, axis=-2) ** 2) @ vh   # U, S and Vh together

    def left(x):
        u = xp.linalg.svd(x, full_matrices=False).U
        return (u * c) @ u.mT             # U alone (with M > N, its projection term too)

    def right(x):
        vh = xp.linalg.svd(x, full_matrices=False).Vh
        return (vh.mT * c) @ vh           # Vh alone (with N > M, its projection term too)

    def polar(x):
        u, _, vh = xp.linalg.svd(x, full_matrices=False)
        return u @ vh                     # U and Vh, no S cotangent

    for f in (reconstruct, left, right, polar):
        check(f, a)


def test_svd_of_its_own_product_is_identity_map():
    # sum((U * S) @ Vh * w) = sum(x * w): its gradient is exactly w.
    rng = rng_for("svd-identity")
    a = xp.asarray(with_singular_values(rng, (2,), 4, 3, [3.0, 2.0, 1.0]))
    w = rng.standard_normal((2, 4, 3))

    def loss(x):
        u, s, vh = xp.linalg.svd(x, full_matrices=False)
        return xp.sum(((u * xp.expand_dims(s, axis=-2)) @ vh) * xp.asarray(w))
    np.testing.assert_allclose(np.asarray(grad(loss)(a)), w, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)])
def test_svd_full_matrices(shape):
    m, n = shape
    a = with_singular_values(rng_for("svd-full", shape), (), m, n, [3.0, 2.0, 1.0])
    check(lambda x: xp.linalg.svd(x).S, a)
    if m >= n:   # Vh is square: its cotangent is fine
        check(lambda x: (xp.linalg.svd(x).Vh.mT * xp.asarray([1.0, 2.0, 4.0])) @ xp.linalg.svd(x).Vh, a)
    if m <= n:   # U is square
        check(lambda x: (xp.linalg.svd(x).U * xp.asarray([1.0, 2.0, 4.0])) @ xp.linalg.svd(x).U.mT, a)


@pytest.mark.parametrize("shape, field", [((4, 3), "U"), ((3, 4), "Vh")])
def test_svd_full_matrices_non_square_factor_raises(shape, field):
    a = xp.asarray(with_singular_values(rng_for("svd-raise", shape), (), *shape, [3.0, 2.0, 1.0]))
    with pytest.raises(ValueError, match=rf"linalg\.svd: .*{field} of full_matrices=True"):
        grad(lambda x: xp.sum(getattr(xp.linalg.svd(x), field) ** 2))(a)


@pytest.mark.parametrize("shape", SVD_SHAPES)
def test_svdvals(shape):
    a = with_singular_values(rng_for("svdvals", shape), shape[:-2], *shape[-2:], [3.0, 2.0, 1.0])
    check(xp.linalg.svdvals, a)


# --- qr ------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 4), (2, 5, 3), (2, 3, 5)])
@pytest.mark.parametrize("field", ["Q", "R"])
def test_qr(shape, field):
    a = with_singular_values(rng_for("qr", shape), shape[:-2], *shape[-2:], [3.0, 2.0, 1.0])
    check(lambda x: getattr(xp.linalg.qr(x), field), a)


@pytest.mark.parametrize("shape", [(2, 4, 3), (3, 5)])
def test_qr_both_fields(shape):
    a = with_singular_values(rng_for("qr-both", shape), shape[:-2], *shape[-2:], [3.0, 2.0, 1.0])
    def f(x):
        q, r = xp.linalg.qr(x)
        return q @ (r * r) + (q ** 3) @ r   # one node, both cotangents
    check(f, a)


def test_qr_complete():
    tall = with_singular_values(rng_for("qr-complete"), (), 4, 3, [3.0, 2.0, 1.0])
    check(lambda x: xp.linalg.qr(x, mode="complete").R, tall)                # R's zero rows: fine
    wide = with_singular_values(rng_for("qr-complete-wide"), (), 3, 4, [3.0, 2.0, 1.0])
    check(lambda x: xp.linalg.qr(x, mode="complete").Q, wide)                # same as reduced
    with pytest.raises(ValueError, match=r"linalg\.qr: .*Q of mode='complete'"):
        grad(lambda x: xp.sum(xp.linalg.qr(x, mode="complete").Q))(xp.asarray(tall))


# --- norms ---------------------------------------------------------------------

@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_norm(ord, keepdims):
    a = with_singular_values(rng_for("matrix_norm", ord), (2,), 4, 3, [3.0, 2.0, 1.0])
    check(lambda x: xp.linalg.matrix_norm(x, ord=ord, keepdims=keepdims), a)


@pytest.mark.parametrize("ord", [1, 2, 3, 0.5, math.inf, -math.inf, -1, -2, 0])
@pytest.mark.parametrize("axis", [None, -1, (0, 2)])
def test_vector_norm(ord, axis):
    x = rng_for("vector_norm", ord, axis).standard_normal((2, 3, 4))
    check(lambda v: xp.linalg.vector_norm(v, ord=ord, axis=axis), x)


@pytest.mark.parametrize("ord", [1, 2, 3, 0.5, math.inf, -math.inf, -1, -2, 0])
def test_vector_norm_at_zero_has_subgradient_zero(ord):
    x = xp.zeros((2, 3))
    for axis in (None, -1):
        g = np.asarray(grad(lambda v: xp.sum(xp.linalg.vector_norm(v, ord=ord, axis=axis)))(x))
        np.testing.assert_array_equal(g, np.zeros((2, 3)))
    # One all-zero row in a batch: that row's gradient is 0, the others' the usual one.
    rows = np.array([[0.0, 0.0, 0.0], [3.0, -4.0, 1.0]])
    g = np.asarray(grad(lambda v: xp.sum(xp.linalg.vector_norm(v, ord=ord, axis=-1)))(xp.asarray(rows)))
    np.testing.assert_array_equal(g[0], np.zeros(3))
    assert np.all(np.isfinite(g[1]))
    if ord == 2:
        np.testing.assert_allclose(g[1], rows[1] / np.linalg.norm(rows[1]), rtol=1e-14)


def test_vector_norm_values_unchanged_at_zero():
    x = xp.asarray([[0.0, 0.0], [3.0, -4.0], [0.0, 2.0]])
    for ord in (2, 3, 0.5, -1, -2):
        with np.errstate(divide="ignore"):   # NumPy's 0 ** -1 on the way to its 0
            expected = np.linalg.vector_norm(np.asarray(x), ord=ord, axis=-1)
        np.testing.assert_allclose(np.asarray(xp.linalg.vector_norm(x, ord=ord, axis=-1)), expected, rtol=1e-15)


@pytest.mark.parametrize("ord", ["fro", 1, -1, math.inf, -math.inf])
def test_matrix_norm_at_zero_has_subgradient_zero(ord):
    g = grad(lambda x: xp.sum(xp.linalg.matrix_norm(x, ord=ord)))(xp.zeros((2, 3, 3)))
    np.testing.assert_array_equal(np.asarray(g), np.zeros((2, 3, 3)))


def test_spectral_norms_at_zero_give_a_subgradient():
    # The zero matrix's singular vectors are arbitrary; the gradient is some
    # element of the subdifferential: spectral norm <= 1 for 'nuc' (dual of
    # nuclear), nuclear norm <= 1 for 2 (dual of spectral).
    for ord, dual in (("nuc", 2), (2, "nuc")):
        g = np.asarray(grad(lambda x: xp.linalg.matrix_norm(x, ord=ord))(xp.zeros((3, 3))))
        assert np.all(np.isfinite(g))
        assert np.linalg.matrix_norm(g, ord=dual) <= 1 + 1e-12


# --- composites ------------------------------------------------------------------

@pytest.mark.parametrize("offset", [0, 1, -2])
def test_trace(offset):
    check(lambda x: xp.linalg.trace(x, offset=offset), rng_for("trace").standard_normal((2, 3, 4)))


@pytest.mark.parametrize("offset", [0, 2, -1, 5])
def test_diagonal(offset):
    check(lambda x: xp.linalg.diagonal(x, offset=offset), rng_for("diagonal").standard_normal((2, 3, 4)))


def test_outer():
    rng = rng_for("outer")
    check(xp.linalg.outer, rng.standard_normal(3), rng.standard_normal(4))


@pytest.mark.parametrize("s1, s2, axis", [((3,), (3,), -1), ((2, 3), (3,), -1), ((4, 3, 2), (1, 3, 2), -2),
                                          ((3, 2), (4, 3, 2), -2)])
def test_cross(s1, s2, axis):
    rng = rng_for("cross", s1, s2)
    check(lambda a, b: xp.linalg.cross(a, b, axis=axis), rng.standard_normal(s1), rng.standard_normal(s2))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -2])
def test_matrix_power(n):
    a = general(rng_for("matrix_power"), (2,), 3) / 3.0   # cond ~ 3, norm ~ 1.5
    check(lambda x: xp.linalg.matrix_power(x, n), a)


@pytest.mark.parametrize("s1, s2, axes", [((2, 3, 4), (3, 4, 5), 2), ((3, 4), (4, 2), 1), ((2, 3), (4,), 0),
                                          ((2, 3, 4), (4, 2, 3), ([1, 2], [2, 0]))])
def test_tensordot(s1, s2, axes):
    rng = rng_for("tensordot", s1, s2)
    check(lambda a, b: xp.linalg.tensordot(a, b, axes=axes), rng.standard_normal(s1), rng.standard_normal(s2))


@pytest.mark.parametrize("s1, s2, axis", [((3,), (3,), -1), ((2, 4), (4,), -1), ((2, 3, 4), (1, 3, 4), -2)])
def test_vecdot(s1, s2, axis):
    rng = rng_for("vecdot", s1, s2)
    check(lambda a, b: xp.linalg.vecdot(a, b, axis=axis), rng.standard_normal(s1), rng.standard_normal(s2))


@pytest.mark.parametrize("s1, s2", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 1, 2, 3), (4, 3, 2)),
                                    ((3, 4), (2, 4, 2))])
def test_matmul(s1, s2):
    rng = rng_for("matmul", s1, s2)
    check(xp.linalg.matmul, rng.standard_normal(s1), rng.standard_normal(s2))


# --- dtypes, higher order ---------------------------------------------------------

@pytest.mark.parametrize("f", [
    xp.linalg.inv, xp.linalg.det, lambda x: xp.linalg.slogdet(x).logabsdet, xp.linalg.cholesky,
    xp.linalg.eigvalsh, lambda x: xp.linalg.eigh(x).eigenvectors ** 2, xp.linalg.svdvals,
    lambda x: xp.linalg.svd(x, full_matrices=False).U ** 2, lambda x: xp.linalg.qr(x).R, xp.linalg.pinv,
    lambda x: xp.linalg.solve(x, x[0]),
], ids=["inv", "det", "slogdet", "cholesky", "eigvalsh", "eigh", "svdvals", "svd", "qr", "pinv", "solve"])
def test_float32_gradients_stay_float32(f):
    rng = rng_for("float32")
    a = symmetric_with_eigenvalues(rng, (), [1.0, 2.0, 4.0])
    w = rng.standard_normal(np.asarray(f(xp.asarray(a))).shape)
    g32 = np.asarray(grad(lambda x: xp.sum(f(x) * xp.asarray(w.astype(np.float32))))(xp.asarray(a.astype(np.float32))))
    g64 = np.asarray(grad(lambda x: xp.sum(f(x) * xp.asarray(w)))(xp.asarray(a)))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, g64, rtol=1e-3, atol=1e-3 * np.max(np.abs(g64)))


def test_second_order_through_linalg_rules():
    # The rules build graph nodes, so gradients differentiate again: the
    # gradient of <grad logdet(x), w> = <inv(x)^T, w> against differences of it.
    rng = rng_for("second-order")
    a = spd(rng, (), 3)
    w = xp.asarray(rng.standard_normal((3, 3)))
    first = grad(lambda x: xp.linalg.slogdet(x).logabsdet)
    check(lambda x: xp.sum(first(x) * w), a)
    # The closed form: d/dx <inv(x)^T, w> = -inv(x)^T w^T inv(x)^T.
    inv_t = np.linalg.inv(a).T
    expected = -inv_t @ np.asarray(w).T @ inv_t
    got = np.asarray(grad(lambda x: xp.sum(first(x) * w))(xp.asarray(a)))
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
