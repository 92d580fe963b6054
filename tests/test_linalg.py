"""Linear algebra against NumPy: xp.tensordot, xp.vecdot and every function of
xp.linalg, over float32/float64/complex64/complex128 (integers where the
standard allows them), stacks of matrices, and the errors raised at the call.

Values come from NumPy's generator seeded by hypothesis (the seed shrinks; the
matrices are cheap to draw). Decompositions are checked by reconstruction
(Q @ R, U @ diag(S) @ Vh, L @ L^H, V @ diag(w) @ V^H, A @ inv(A)), not against
NumPy's factors, which are unique only up to signs/phases.

Tolerances. Backward-stable algorithms (every LAPACK routine used here)
reconstruct their input to within c * n * eps * ||A||, whatever the matrix;
results compared with NumPy's (forward errors) can differ by that much
amplified by the condition number of the problem. So inputs are built
well-conditioned with a known bound on their condition number (A @ A^H + n*I
has cond <= 1 + 2n; products of orthonormal factors and chosen singular values
have exactly the chosen ratio), and every tolerance below is
TOL_FACTOR * n * eps * cond * scale, with eps of the operands' precision.
TOL_FACTOR = 10 covers LAPACK's small constants (the bounds hold with c of
order 1 in practice) without hiding a real error, which is O(1) relative.
"""

import inspect
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import arrayx as xp
from arrayx import debug

pytestmark = pytest.mark.usefixtures("lazy_and_eager")   # results alike in eager mode

L = xp.linalg

FLOAT_NAMES = ["float32", "float64"]
COMPLEX_NAMES = ["complex64", "complex128"]
FLOATING_NAMES = FLOAT_NAMES + COMPLEX_NAMES
INT_NAMES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
NUMERIC_NAMES = INT_NAMES + FLOATING_NAMES
TOL_FACTOR = 10

seeds = st.integers(0, 2**32 - 1)
floating = st.sampled_from(FLOATING_NAMES)
batches = st.sampled_from([(), (2,), (1, 3), (0,)])
sizes = st.integers(1, 5)


# --- data ------------------------------------------------------------------

def eps(dtype):
    """Machine epsilon of the (real) precision of `dtype`; 0 for integers, which are exact."""
    dtype = np.dtype(dtype)
    return float(np.finfo(dtype).eps) if dtype.kind in "fc" else 0.0


def rand(rng, shape, name, bound=1.0):
    """Uniform values in [-bound, bound] (both parts for complex), as dtype `name`."""
    dtype = np.dtype(name)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), shape, endpoint=True).astype(dtype)
    a = rng.uniform(-bound, bound, shape)
    if dtype.kind == "c":
        a = a + 1j * rng.uniform(-bound, bound, shape)
    return a.astype(dtype)


def hermitian(a):
    return np.conj(np.swapaxes(a, -1, -2))


def spd(rng, batch, n, name):
    """Hermitian positive definite: B @ B^H + n*I with |b_ij| <= 1 (|b_ij| <= sqrt(2) complex) has
    eigenvalues in [n, n + 2n^2], so its condition number is at most 1 + 2n."""
    b = rand(rng, batch + (n, n), "complex128" if "complex" in name else "float64")
    return (b @ hermitian(b) + n * np.eye(n)).astype(name)


def orthonormal(rng, batch, m, k, name):
    """m x k matrices with orthonormal columns (the Q of a random matrix)."""
    q, _ = np.linalg.qr(rand(rng, batch + (m, k), "complex128" if "complex" in name else "float64"))
    return q


def with_singular_values(rng, batch, m, n, s, name):
    """U @ diag(s) @ Vh with orthonormal U, Vh: an m x n matrix with exactly the singular values s."""
    k = len(s)
    u = orthonormal(rng, batch, m, k, name)
    vh = hermitian(orthonormal(rng, batch, n, k, name))
    return ((u * np.asarray(s)) @ vh).astype(name)


def norm(a):
    """Largest Frobenius norm in a stack (an upper bound on the spectral norm); 1 for an empty stack."""
    if a.size == 0:
        return 1.0
    return float(np.max(np.sqrt(np.sum(np.abs(a.astype(np.complex128)) ** 2, axis=(-2, -1)))))


def tol(name, n, cond=1.0, scale=1.0):
    return TOL_FACTOR * max(n, 1) * eps(name) * cond * scale


def close(actual, expected, atol):
    actual = np.asarray(actual)
    assert actual.shape == np.shape(expected)
    np.testing.assert_allclose(actual.astype(np.complex128), np.asarray(expected).astype(np.complex128),
                               rtol=0, atol=atol)


def eye_like(a):
    return np.broadcast_to(np.eye(a.shape[-1]), a.shape)


# --- tensordot and vecdot (main namespace) -----------------------------------

@st.composite
def tensordot_args(draw):
    """Two arrays and an `axes` (int, or pairs of sequences with negative axes) that contract."""
    shape1 = draw(st.lists(st.integers(0, 3), min_size=0, max_size=4))
    ndim1 = len(shape1)
    if draw(st.booleans()):
        n = draw(st.integers(0, ndim1))
        contracted = shape1[ndim1 - n:]
        shape2 = contracted + draw(st.lists(st.integers(0, 3), max_size=2))
        axes = n
    else:
        first = draw(st.permutations(range(ndim1)).map(lambda p: p[:draw(st.integers(0, ndim1))]))
        extra = draw(st.lists(st.integers(0, 3), max_size=2))
        ndim2 = len(first) + len(extra)
        second = draw(st.permutations(range(ndim2)).map(lambda p: p[:len(first)]))
        shape2 = [0] * ndim2
        free = iter(extra)
        for b in range(ndim2):
            shape2[b] = shape1[first[second.index(b)]] if b in second else next(free)
        # Negative axes count from the end.
        first = [a - ndim1 if draw(st.booleans()) else a for a in first]
        second = [b - ndim2 if draw(st.booleans()) else b for b in second]
        axes = (first, second)
    names = draw(st.tuples(st.sampled_from(NUMERIC_NAMES), st.sampled_from(NUMERIC_NAMES)))
    return tuple(shape1), tuple(shape2), axes, names, draw(seeds)


def contraction_atol(ref_abs, dtype, k):
    """A sum of k products in any order errs by at most k * eps * sum(|a||b|) (elementwise)."""
    return 2 * max(k, 1) * eps(dtype) * ref_abs


def assert_within(actual, expected, atol):
    """|actual - expected| <= atol elementwise (atol an array of per-element bounds)."""
    actual = np.asarray(actual)
    assert actual.shape == np.shape(expected)
    diff = np.abs(actual.astype(np.complex128) - np.asarray(expected).astype(np.complex128))
    assert np.all(diff <= atol), (actual, expected, atol)


@given(tensordot_args())
def test_tensordot_matches_numpy(args):
    shape1, shape2, axes, names, seed = args
    rng = np.random.default_rng(seed)
    a, b = rand(rng, shape1, names[0]), rand(rng, shape2, names[1])
    x1, x2 = xp.asarray(a), xp.asarray(b)
    out = xp.tensordot(x1, x2, axes=axes)
    assert out.dtype == xp.result_type(x1, x2)
    dtype = np.dtype(str(out.dtype))
    ref = np.tensordot(a.astype(dtype), b.astype(dtype), axes=axes)
    if dtype.kind in "iu":
        # Integers wrap identically in any order: exact.
        np.testing.assert_array_equal(np.asarray(out), ref)
    else:
        bound = np.tensordot(np.abs(a).astype(np.float64), np.abs(b).astype(np.float64), axes=axes)
        first = range(len(shape1) - axes, len(shape1)) if isinstance(axes, int) else axes[0]
        assert_within(out, ref, contraction_atol(bound, dtype, math.prod(shape1[i] for i in first)))


def test_tensordot_int_axes_contract_last_and_first():
    a, b = np.arange(24.0).reshape(2, 3, 4), np.arange(12.0).reshape(3, 4)
    for axes in (0, 1, 2):
        bb = b if axes != 1 else b.T
        close(xp.tensordot(xp.asarray(a), xp.asarray(bb), axes=axes), np.tensordot(a, bb, axes=axes), 1e-12)
    assert xp.tensordot(xp.asarray(a), xp.asarray(b)).shape == (2,)  # default axes=2
    # A single axis per operand may be an int, as in NumPy.
    close(xp.tensordot(xp.asarray(a), xp.asarray(b), axes=(1, 0)), np.tensordot(a, b, axes=(1, 0)), 1e-12)


def test_tensordot_without_contracted_axes_is_the_exact_outer_product():
    """axes=0 (or two empty sequences) multiplies each pair of elements once:
    NumPy's values exactly, 0-d operands included, run as one multiply."""
    rng = np.random.default_rng(7)
    for s1, s2 in [((), ()), ((3,), ()), ((2, 3), (4, 1, 5)), ((0, 2), (3,))]:
        for dtype in (np.uint8, np.float32, np.complex128):
            a, b = (rng.standard_normal(s1) * 9).astype(dtype), (rng.standard_normal(s2) * 9).astype(dtype)
            for axes in (0, ((), ())):
                out = xp.tensordot(xp.asarray(a), xp.asarray(b), axes=axes)
                np.testing.assert_array_equal(np.asarray(out), np.tensordot(a, b, axes=0))
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    with debug.profile() as p:
        xp.eval(xp.tensordot(x, x, axes=0))
    assert [s.what for s in p.steps] == ["multiply"]


def test_tensordot_does_not_conjugate():
    a = np.array([1j, 2.0, 3 - 1j])
    assert complex(xp.tensordot(xp.asarray(a), xp.asarray(a), axes=1)) == complex(np.sum(a * a))


@st.composite
def vecdot_args(draw):
    """Two arrays with broadcastable batch axes, a negative axis of equal size in both."""
    ndim1, ndim2 = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    n = draw(st.integers(0, 4))
    axis = draw(st.integers(-min(ndim1, ndim2), -1))
    out = draw(st.lists(st.integers(0, 3), min_size=max(ndim1, ndim2), max_size=max(ndim1, ndim2)))

    def shape(ndim):
        s = [d if draw(st.booleans()) else 1 for d in out[len(out) - ndim:]]
        s[axis] = n
        return tuple(s)
    names = draw(st.tuples(st.sampled_from(NUMERIC_NAMES), st.sampled_from(NUMERIC_NAMES)))
    return shape(ndim1), shape(ndim2), axis, names, draw(seeds)


@given(vecdot_args())
def test_vecdot_matches_numpy(args):
    shape1, shape2, axis, names, seed = args
    rng = np.random.default_rng(seed)
    a, b = rand(rng, shape1, names[0]), rand(rng, shape2, names[1])
    x1, x2 = xp.asarray(a), xp.asarray(b)
    out = xp.vecdot(x1, x2, axis=axis)
    assert out.dtype == xp.result_type(x1, x2)
    assert L.vecdot(x1, x2, axis=axis).shape == out.shape
    dtype = np.dtype(str(out.dtype))
    with np.errstate(over="ignore"):
        ref = np.sum(np.conj(a.astype(dtype)) * b.astype(dtype), axis=axis, dtype=dtype)
    if dtype.kind in "iu":
        np.testing.assert_array_equal(np.asarray(out), ref)
    else:
        bound = np.sum(np.abs(a).astype(np.float64) * np.abs(b).astype(np.float64), axis=axis)
        assert_within(out, ref, contraction_atol(bound, dtype, shape1[axis]))


def test_vecdot_conjugates_the_first_operand():
    x1, x2 = xp.asarray([1j, 2j, 3j]), xp.asarray([1, 2j, 3])
    assert complex(xp.vecdot(x1, x2)) == 4 - 10j
    # A non-negative axis is unambiguous when both operands have the same rank.
    a = np.arange(6.0).reshape(2, 3)
    close(xp.vecdot(xp.asarray(a), xp.asarray(a), axis=0), np.sum(a * a, axis=0), 1e-12)


# --- aliases ---------------------------------------------------------------

def test_linalg_aliases_are_the_main_namespace_functions():
    for name in ("matmul", "matrix_transpose", "tensordot", "vecdot"):
        assert getattr(L, name) is getattr(xp, name)
    assert sorted(L.__all__) == sorted([
        "cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matmul",
        "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet",
        "solve", "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm"])


P, K = inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.KEYWORD_ONLY
# The 2025.12 signatures: (name, kind, default) of every parameter.
SIGNATURES = {
    "cholesky": [("x", P, None), ("upper", K, False)],
    "cross": [("x1", P, None), ("x2", P, None), ("axis", K, -1)],
    "det": [("x", P, None)],
    "diagonal": [("x", P, None), ("offset", K, 0)],
    "eig": [("x", P, None)],
    "eigh": [("x", P, None)],
    "eigvals": [("x", P, None)],
    "eigvalsh": [("x", P, None)],
    "inv": [("x", P, None)],
    "matrix_norm": [("x", P, None), ("keepdims", K, False), ("ord", K, "fro")],
    "matrix_power": [("x", P, None), ("n", P, None)],
    "matrix_rank": [("x", P, None), ("rtol", K, None)],
    "outer": [("x1", P, None), ("x2", P, None)],
    "pinv": [("x", P, None), ("rtol", K, None)],
    "qr": [("x", P, None), ("mode", K, "reduced")],
    "slogdet": [("x", P, None)],
    "solve": [("x1", P, None), ("x2", P, None)],
    "svd": [("x", P, None), ("full_matrices", K, True)],
    "svdvals": [("x", P, None)],
    "tensordot": [("x1", P, None), ("x2", P, None), ("axes", K, 2)],
    "trace": [("x", P, None), ("offset", K, 0), ("dtype", K, None)],
    "vecdot": [("x1", P, None), ("x2", P, None), ("axis", K, -1)],
    "vector_norm": [("x", P, None), ("axis", K, None), ("keepdims", K, False), ("ord", K, 2)],
}


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_signature(name):
    params = inspect.signature(getattr(L, name)).parameters.values()
    got = [(p.name, p.kind, None if p.default is inspect.Parameter.empty else p.default) for p in params]
    assert got == SIGNATURES[name]


def test_result_named_tuples():
    a = xp.asarray(spd(np.random.default_rng(0), (), 3, "float64"))
    for fn, fields in ((L.eigh, ("eigenvalues", "eigenvectors")), (L.eig, ("eigenvalues", "eigenvectors")),
                       (L.qr, ("Q", "R")), (L.slogdet, ("sign", "logabsdet")), (L.svd, ("U", "S", "Vh"))):
        res = fn(a)
        assert type(res) is not tuple and isinstance(res, tuple) and res._fields == fields
        assert all(res[i] is getattr(res, f) for i, f in enumerate(fields))


@pytest.mark.lazy_only
def test_fields_of_one_decomposition_share_one_step():
    a = xp.asarray(np.random.default_rng(1).standard_normal((4, 3)))
    debug.reset()
    u, s, vh = L.svd(a)
    assert debug.counters["steps_run"] == 0  # building runs nothing
    xp.eval(u)
    one = debug.counters["steps_run"]
    u, s, vh = L.svd(a)
    debug.reset()
    xp.eval(u, s, vh)
    # Two more fields cost two more `select` steps, not two more SVDs.
    assert debug.counters["steps_run"] == one + 2


# --- factorizations --------------------------------------------------------

@given(seeds, floating, batches, sizes, st.booleans())
def test_cholesky(seed, name, batch, n, upper):
    a = spd(np.random.default_rng(seed), batch, n, name)
    out = np.asarray(L.cholesky(xp.asarray(a), upper=upper))
    assert out.dtype == a.dtype and out.shape == a.shape
    # Exactly triangular, and a reconstruction within the backward error.
    tri = np.triu(out) if upper else np.tril(out)
    np.testing.assert_array_equal(out, tri)
    product = hermitian(out) @ out if upper else out @ hermitian(out)
    close(product, a, tol(name, n, scale=norm(a)))
    # The factor with a positive real diagonal is unique: NumPy's, within cond(A).
    close(out, np.linalg.cholesky(a, upper=upper), tol(name, n, cond=1 + 2 * n, scale=norm(out)))


@given(seeds, floating, batches, st.integers(1, 5), st.integers(1, 5), st.sampled_from(["reduced", "complete"]))
def test_qr(seed, name, batch, m, n, mode):
    a = rand(np.random.default_rng(seed), batch + (m, n), name)
    q, r = (np.asarray(t) for t in L.qr(xp.asarray(a), mode=mode))
    k = m if mode == "complete" else min(m, n)
    assert q.shape == batch + (m, k) and r.shape == batch + (k, n)
    assert q.dtype == r.dtype == a.dtype
    np.testing.assert_array_equal(r, np.triu(r))
    close(q @ r, a, tol(name, max(m, n), scale=norm(a)))
    close(hermitian(q) @ q, np.broadcast_to(np.eye(k), batch + (k, k)), tol(name, m))


@given(seeds, floating, batches, st.integers(1, 5), st.integers(1, 5), st.booleans())
def test_svd(seed, name, batch, m, n, full):
    a = rand(np.random.default_rng(seed), batch + (m, n), name)
    u, s, vh = (np.asarray(t) for t in L.svd(xp.asarray(a), full_matrices=full))
    k = min(m, n)
    assert u.shape == batch + ((m, m) if full else (m, k)) and vh.shape == batch + ((n, n) if full else (k, n))
    assert s.shape == batch + (k,) and s.dtype == np.finfo(a.dtype).dtype and u.dtype == vh.dtype == a.dtype
    assert np.all(s[..., :-1] >= s[..., 1:])
    scale = norm(a)
    close((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, tol(name, max(m, n), scale=scale))
    close(hermitian(u) @ u, eye_like(hermitian(u) @ u), tol(name, m))
    close(vh @ hermitian(vh), eye_like(vh @ hermitian(vh)), tol(name, n))
    # Singular values are perfectly conditioned (Weyl): within the backward error of NumPy's.
    ref = np.linalg.svdvals(a)
    close(L.svdvals(xp.asarray(a)), ref, tol(name, max(m, n), scale=scale))
    close(s, ref, tol(name, max(m, n), scale=scale))


@st.composite
def hermitian_matrices(draw):
    name, batch, n = draw(floating), draw(batches), draw(sizes)
    rng = np.random.default_rng(draw(seeds))
    b = rand(rng, batch + (n, n), "complex128" if "complex" in name else "float64")
    return name, n, ((b + hermitian(b)) / 2).astype(name)


@given(hermitian_matrices())
def test_eigh_and_eigvalsh(args):
    name, n, a = args
    w, v = (np.asarray(t) for t in L.eigh(xp.asarray(a)))
    real = np.finfo(a.dtype).dtype
    assert w.dtype == real and v.dtype == a.dtype and w.shape == a.shape[:-1] and v.shape == a.shape
    scale = norm(a)
    close((v * w[..., None, :]) @ hermitian(v), a, tol(name, n, scale=scale))
    close(hermitian(v) @ v, eye_like(a), tol(name, n))
    # Eigenvalues of a Hermitian matrix are perfectly conditioned (Weyl).
    ref = np.linalg.eigvalsh(a)
    values = np.asarray(L.eigvalsh(xp.asarray(a)))
    assert values.dtype == real
    close(np.sort(values, axis=-1), ref, tol(name, n, scale=scale))
    close(np.sort(w, axis=-1), ref, tol(name, n, scale=scale))


@st.composite
def normal_matrices(draw):
    """Q @ B @ Q^H with unitary Q and known, well-separated eigenvalues.

    A normal matrix has perfectly conditioned eigenvalues (Bauer-Fike with
    cond(V) = 1), so computed ones lie within the backward error of the true
    ones. Real matrices get conjugate pairs a +- ib from 2x2 blocks [[a, b],
    [-b, a]]; distinct integer real parts keep eigenvalues >= 1 apart.
    """
    name, batch, n = draw(floating), draw(batches), draw(sizes)
    rng = np.random.default_rng(draw(seeds))
    reals = rng.permutation(np.arange(-n, n))[:n].astype(float)
    b = np.zeros(batch + (n, n), dtype=np.complex128)
    values = np.zeros(n, dtype=np.complex128)
    if "complex" in name:
        values = reals + 1j * rng.uniform(-2, 2, n)
        b[..., range(n), range(n)] = values
    else:
        pairs = draw(st.integers(0, n // 2))
        for j in range(n):
            values[j] = reals[j]
            b[..., j, j] = reals[j]
        for p in range(pairs):
            i, imag = 2 * p, rng.uniform(1, 2)
            b[..., i + 1, i + 1] = reals[i]
            b[..., i, i + 1], b[..., i + 1, i] = imag, -imag
            values[i], values[i + 1] = reals[i] + 1j * imag, reals[i] - 1j * imag
    q = orthonormal(rng, batch, n, n, name)
    a = q @ b @ hermitian(q)
    return name, n, (a if "complex" in name else a.real).astype(name), values


def assert_same_spectrum(computed, expected, atol):
    """Each expected eigenvalue has its own computed one within atol (a matching, not a sort)."""
    for got in computed.reshape(-1, computed.shape[-1]):
        distance = np.abs(got[:, None] - expected[None, :])
        nearest = np.argmin(distance, axis=0)
        assert sorted(nearest) == list(range(len(expected))), (got, expected)
        assert np.max(distance[nearest, range(len(expected))], initial=0) <= atol, (got, expected)


@given(normal_matrices())
def test_eig_and_eigvals(args):
    name, n, a, values = args
    w, v = (np.asarray(t) for t in L.eig(xp.asarray(a)))
    cplx = np.dtype(name.replace("float32", "complex64").replace("float64", "complex128"))
    assert w.dtype == v.dtype == cplx and w.shape == a.shape[:-1] and v.shape == a.shape
    scale = norm(a)
    assert_same_spectrum(w, values, tol(name, n, scale=scale))
    assert_same_spectrum(np.asarray(L.eigvals(xp.asarray(a))), values, tol(name, n, scale=scale))
    # A V = V diag(w), with unit eigenvectors.
    close(a @ v, v * w[..., None, :], tol(name, n, scale=scale))
    if v.size:
        close(np.linalg.norm(v, axis=-2), np.ones(v.shape[:-2] + (n,)), tol(name, n))


def test_eig_of_a_real_matrix_is_complex():
    rotation = xp.asarray([[0.0, -1.0], [1.0, 0.0]], dtype=xp.float32)
    w = L.eigvals(rotation)
    assert w.dtype == xp.complex64
    assert sorted(np.asarray(w).tolist(), key=lambda z: z.imag) == [-1j, 1j]


# --- inverses and systems --------------------------------------------------

@given(seeds, floating, batches, sizes)
def test_inv(seed, name, batch, n):
    a = spd(np.random.default_rng(seed), batch, n, name)
    out = np.asarray(L.inv(xp.asarray(a)))
    assert out.dtype == a.dtype and out.shape == a.shape
    cond = 1 + 2 * n
    close(a @ out, eye_like(a), tol(name, n, cond=cond))
    close(out, np.linalg.inv(a), tol(name, n, cond=cond, scale=norm(out)))


@given(seeds, floating, batches, sizes)
def test_det_and_slogdet(seed, name, batch, n):
    rng = np.random.default_rng(seed)
    # A unitary factor with random phase/sign makes the determinant's sign non-trivial.
    a = (spd(rng, batch, n, name) @ orthonormal(rng, (), n, n, name)).astype(name)
    cond = 1 + 2 * n
    ref_sign, ref_log = np.linalg.slogdet(a)
    det = np.asarray(L.det(xp.asarray(a)))
    sign, logabsdet = (np.asarray(t) for t in L.slogdet(xp.asarray(a)))
    assert det.dtype == sign.dtype == a.dtype and logabsdet.dtype == np.finfo(a.dtype).dtype
    assert det.shape == sign.shape == logabsdet.shape == batch
    # LU-based determinants: relative error about n * eps * cond.
    ref = np.linalg.det(a)
    assert_within(det, ref, tol(name, n, cond=cond) * np.abs(ref))
    close(sign, ref_sign, tol(name, n, cond=cond))
    close(logabsdet, ref_log, tol(name, n, cond=cond))


def test_slogdet_of_a_singular_matrix():
    sign, logabsdet = L.slogdet(xp.zeros((2, 3, 3)))
    assert np.all(np.asarray(sign) == 0) and np.all(np.asarray(logabsdet) == -np.inf)
    assert float(L.det(xp.ones((3, 3)))) == 0


@given(seeds, st.sampled_from(FLOATING_NAMES), st.sampled_from(FLOATING_NAMES), batches, sizes,
       st.sampled_from([None, (), (2,), (1,), (3, 1)]), st.integers(0, 3))
def test_solve(seed, name1, name2, batch, n, b_batch, k):
    rng = np.random.default_rng(seed)
    a = spd(rng, batch, n, name1)
    if b_batch is None:
        b = rand(rng, (n,), name2)           # one vector, for every matrix of the stack
    else:
        try:
            np.broadcast_shapes(batch, b_batch)
        except ValueError:
            b_batch = (1,)
        b = rand(rng, b_batch + (n, k), name2)
    out = L.solve(xp.asarray(a), xp.asarray(b))
    assert out.dtype == xp.result_type(a.dtype, b.dtype)
    dtype = np.dtype(str(out.dtype))
    ref = np.linalg.solve(a.astype(dtype), b.astype(dtype))
    assert out.shape == ref.shape
    cond = 1 + 2 * n
    x = np.asarray(out)
    close(x, ref, tol(dtype, n, cond=cond, scale=max(float(np.max(np.abs(ref), initial=0)), 1.0)))
    residual = a.astype(dtype) @ (x[..., None] if b.ndim == 1 else x)
    expected = np.broadcast_to(b[..., None] if b.ndim == 1 else b, residual.shape)
    close(residual, expected, tol(dtype, n, cond=cond, scale=norm(a) * max(float(np.max(np.abs(x), initial=0)), 1)))


@st.composite
def pinv_args(draw):
    """Matrices with singular values 1..2 and, sometimes, one of 1e-3 relative to the largest,
    with an rtol (None, a float, or an array over the stack) 10x away from every ratio, so
    which singular values count as zero cannot depend on rounding."""
    name, batch = draw(floating), draw(batches)
    m, n = draw(sizes), draw(sizes)
    k = min(m, n)
    rng = np.random.default_rng(draw(seeds))
    s = list(rng.uniform(1, 2, k))
    if k > 1 and draw(st.booleans()):
        s[-1] = 1e-3 * max(s)
    a = with_singular_values(rng, batch, m, n, s, name)
    kind = draw(st.sampled_from(["none", "float", "array"]))
    real = np.finfo(a.dtype).dtype
    if kind == "none":
        rtol = None
    elif kind == "float":
        rtol = draw(st.sampled_from([1e-2, 1e-5]))
    else:
        rtol = rng.choice([1e-2, 1e-5], batch).astype(draw(st.sampled_from([real, np.float64])))
    return name, a, s, rtol


@given(pinv_args())
def test_pinv(args):
    name, a, s, rtol = args
    x_rtol = xp.asarray(rtol) if isinstance(rtol, np.ndarray) else rtol
    out = np.asarray(L.pinv(xp.asarray(a), rtol=x_rtol))
    ref = np.linalg.pinv(a, rtol=rtol)
    assert out.dtype == a.dtype and out.shape == ref.shape == a.shape[:-2] + a.shape[-1:] + a.shape[-2:-1]
    # Kept singular values span at most a ratio of 2e3: pinv is that well conditioned.
    m, n = a.shape[-2:]
    close(out, ref, tol(name, max(m, n), cond=2 * max(s) / min(s), scale=max(norm(ref), 1.0)))


@given(pinv_args())
def test_matrix_rank(args):
    name, a, s, rtol = args
    x_rtol = xp.asarray(rtol) if isinstance(rtol, np.ndarray) else rtol
    out = L.matrix_rank(xp.asarray(a), rtol=x_rtol)
    assert out.dtype == xp.int64
    # The rtols are 10x away from every singular value ratio (1, 1e-3 and the
    # ~eps noise of rank-deficient products), so the rank is NumPy's exactly.
    np.testing.assert_array_equal(np.asarray(out), np.linalg.matrix_rank(a, rtol=rtol))


@given(seeds, floating, batches, sizes, sizes, st.integers(0, 5))
def test_matrix_rank_of_known_rank(seed, name, batch, m, n, r):
    r = min(r, m, n)
    rng = np.random.default_rng(seed)
    a = with_singular_values(rng, batch, m, n, rng.uniform(1, 2, r), name) if r else np.zeros(batch + (m, n), name)
    # rtol 1e-3 sits far above the rounding noise (~ n * eps) and below the nonzero ratios (>= 0.5).
    np.testing.assert_array_equal(np.asarray(L.matrix_rank(xp.asarray(a), rtol=1e-3)), np.full(batch, r))


def test_rank_and_pinv_of_empty_matrices():
    for shape in ((2, 0, 3), (3, 0), (0, 0)):
        np.testing.assert_array_equal(np.asarray(L.matrix_rank(xp.zeros(shape))), np.zeros(shape[:-2]))
        assert L.pinv(xp.zeros(shape), rtol=xp.ones(shape[:-2])).shape == shape[:-2] + shape[:-3:-1]


# --- norms -----------------------------------------------------------------

@given(seeds, floating, batches, sizes, sizes, st.sampled_from(["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]),
       st.booleans())
def test_matrix_norm(seed, name, batch, m, n, ord, keepdims):
    a = rand(np.random.default_rng(seed), batch + (m, n), name)
    out = L.matrix_norm(xp.asarray(a), ord=ord, keepdims=keepdims)
    ref = np.linalg.matrix_norm(a, ord=ord, keepdims=keepdims)
    assert out.dtype == (xp.float32 if name in ("float32", "complex64") else xp.float64)
    # Sums of m*n terms and singular values: within (m + n) * eps of the largest of these norms.
    close(out, ref, tol(name, m + n, scale=np.sqrt(m * n) * max(norm(a), 1.0)))


def test_matrix_norm_of_an_empty_matrix_is_zero():
    for ord in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        np.testing.assert_array_equal(np.asarray(L.matrix_norm(xp.zeros((2, 0, 3)), ord=ord)), [0.0, 0.0])


AXES = st.sampled_from([None, 0, -1, (0, 1), (-1, 0), ()])


@given(seeds, floating, st.lists(st.integers(1, 4), min_size=2, max_size=3).map(tuple), AXES, st.booleans(),
       st.sampled_from([2, 1, 0, -1, -2, np.inf, -np.inf, 3, 0.5, -0.5, 2.5]), st.booleans())
def test_vector_norm(seed, name, shape, axis, keepdims, ord, zeros):
    rng = np.random.default_rng(seed)
    a = rand(rng, shape, name, bound=10.0)
    if zeros:
        a[rng.random(shape) < 0.3] = 0  # ord 0 counts them; negative ords turn them into inf
    out = L.vector_norm(xp.asarray(a), axis=axis, keepdims=keepdims, ord=ord)
    with np.errstate(divide="ignore"):
        ref = np.linalg.vector_norm(a, axis=axis, keepdims=keepdims, ord=ord)
    assert out.dtype == (xp.float32 if name in ("float32", "complex64") else xp.float64)
    # sum(|x|**p) ** (1/p): the sum of n positive terms errs by n * eps relatively,
    # and the outer power multiplies a relative error by |1/p|.
    count = a.size // max(np.asarray(ref).size, 1)
    rtol = TOL_FACTOR * (count + 2) * eps(name) * max(1.0, 1 / abs(ord) if ord else 1.0)
    np.testing.assert_allclose(np.asarray(out), ref, rtol=rtol, atol=0)


def test_vector_norm_over_no_elements():
    x = xp.zeros((0, 3))
    expected = {2: 0.0, 1: 0.0, 0: 0.0, 3: 0.0, np.inf: 0.0, -np.inf: np.inf, -1: np.inf, -2: np.inf}
    for ord, value in expected.items():
        out = L.vector_norm(x, axis=0, ord=ord, keepdims=True)
        assert out.shape == (1, 3)
        np.testing.assert_array_equal(np.asarray(out), np.full((1, 3), value))


# --- composites over elements ---------------------------------------------

@given(seeds, st.sampled_from(NUMERIC_NAMES), st.lists(st.integers(1, 4), min_size=2, max_size=4).map(tuple),
       st.integers(-6, 6), st.sampled_from([None] + NUMERIC_NAMES))
def test_trace(seed, name, shape, offset, dtype):
    if dtype is not None and "complex" in name and "complex" not in dtype:
        return  # complex cannot accumulate as a real dtype: tested in the errors
    a = rand(np.random.default_rng(seed), shape, name)
    out = L.trace(xp.asarray(a), offset=offset, dtype=None if dtype is None else getattr(xp, dtype))
    # NumPy's defaults agree with the standard's: small signed ints to int64, unsigned to uint64.
    ref = np.trace(a.astype(dtype) if dtype else a, offset=offset, axis1=-2, axis2=-1,
                   dtype=dtype or (np.int64 if a.dtype.kind == "i" else np.uint64 if a.dtype.kind == "u" else None))
    assert str(out.dtype) == str(ref.dtype)
    if ref.dtype.kind in "iu":
        np.testing.assert_array_equal(np.asarray(out), ref)
    else:
        close(out, ref, tol(ref.dtype, min(shape[-2:]), scale=float(np.max(np.abs(a), initial=1))))


def test_trace_of_bool_counts_and_of_empty_is_zero():
    assert L.trace(xp.asarray([[True, False], [True, True]])).dtype == xp.int64
    assert int(L.trace(xp.asarray([[True, False], [True, True]]))) == 2
    assert float(L.trace(xp.ones((2, 3)), offset=5)) == 0.0


@given(seeds, st.sampled_from(["bool"] + NUMERIC_NAMES), st.lists(st.integers(0, 4), min_size=2, max_size=4).map(tuple),
       st.integers(-6, 6))
def test_diagonal(seed, name, shape, offset):
    a = rand(np.random.default_rng(seed), shape, "int8").astype(name)
    out = L.diagonal(xp.asarray(a), offset=offset)
    ref = np.diagonal(a, offset=offset, axis1=-2, axis2=-1)
    assert str(out.dtype) == name
    np.testing.assert_array_equal(np.asarray(out), ref)


@st.composite
def cross_args(draw):
    ndim1, ndim2 = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    axis = draw(st.integers(-min(ndim1, ndim2), -1))
    out = draw(st.lists(st.integers(0, 3), min_size=max(ndim1, ndim2), max_size=max(ndim1, ndim2)))

    def shape(ndim):
        s = [d if draw(st.booleans()) else 1 for d in out[len(out) - ndim:]]
        s[axis] = 3
        return tuple(s)
    names = draw(st.tuples(st.sampled_from(NUMERIC_NAMES), st.sampled_from(NUMERIC_NAMES)))
    return shape(ndim1), shape(ndim2), axis, names, draw(seeds)


@given(cross_args())
def test_cross(args):
    shape1, shape2, axis, names, seed = args
    rng = np.random.default_rng(seed)
    a, b = rand(rng, shape1, names[0]), rand(rng, shape2, names[1])
    out = L.cross(xp.asarray(a), xp.asarray(b), axis=axis)
    assert out.dtype == xp.result_type(xp.asarray(a), xp.asarray(b))
    dtype = np.dtype(str(out.dtype))
    a, b = np.broadcast_arrays(a.astype(dtype), b.astype(dtype))
    with np.errstate(over="ignore"):
        ref = np.cross(a, b, axis=axis)
    if dtype.kind in "iu":
        np.testing.assert_array_equal(np.asarray(out), ref)
    else:
        # Each component is a difference of two products: within 2 eps of |a||b| (a fused
        # multiply-add on another executor may round differently from NumPy).
        close(out, ref, 4 * eps(dtype) * float(np.max(np.abs(a), initial=1) * np.max(np.abs(b), initial=1)))


@given(seeds, st.tuples(st.sampled_from(NUMERIC_NAMES), st.sampled_from(NUMERIC_NAMES)), st.integers(0, 4),
       st.integers(0, 4))
def test_outer(seed, names, n, m):
    rng = np.random.default_rng(seed)
    a, b = rand(rng, (n,), names[0]), rand(rng, (m,), names[1])
    out = L.outer(xp.asarray(a), xp.asarray(b))
    dtype = np.dtype(str(out.dtype))
    assert out.dtype == xp.result_type(xp.asarray(a), xp.asarray(b))
    # One multiplication per element, in the promoted dtype: exact, as in NumPy.
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(np.asarray(out), np.outer(a.astype(dtype), b.astype(dtype)))


@given(seeds, floating, batches, st.integers(1, 4), st.integers(-6, 6))
def test_matrix_power(seed, name, batch, n, power):
    rng = np.random.default_rng(seed)
    # Singular values in [0.5, 1.5]: powers stay within 1.5**6 and 2**6 of 1, and inverses are
    # conditioned by at most 3 per factor; each of the <= 2 log2|k| + 1 products adds n * eps.
    a = with_singular_values(rng, batch, n, n, rng.uniform(0.5, 1.5, n), name)
    out = L.matrix_power(xp.asarray(a), power)
    ref = np.linalg.matrix_power(a, power)
    assert out.dtype == xp.asarray(a).dtype and out.shape == a.shape
    steps = abs(power) + 1
    close(out, ref, tol(name, n, cond=3.0 ** (power < 0), scale=steps * 2.0 ** abs(power)))


@pytest.mark.lazy_only
def test_matrix_power_zero_is_identity_and_large_powers_stay_small_graphs():
    nan = xp.full((2, 3, 3), xp.nan)
    np.testing.assert_array_equal(np.asarray(L.matrix_power(nan, 0)), np.broadcast_to(np.eye(3), (2, 3, 3)))
    rotation = xp.asarray([[0.0, -1.0], [1.0, 0.0]])
    debug.reset()
    out = L.matrix_power(rotation, 10**6 + 1)   # 4 * 250000 + 1: a quarter turn
    assert debug.counters["steps_run"] == 0
    np.testing.assert_array_equal(np.asarray(out), np.asarray(rotation))
    # Repeated squaring: about 2 * log2(n) products, not n.
    assert debug.counters["steps_run"] <= 2 * 20 + 2


# --- laziness and errors ---------------------------------------------------

@pytest.mark.lazy_only
def test_singular_input_is_an_error_only_when_computed():
    out = L.inv(xp.zeros((2, 2)))          # recorded, not computed: no error yet
    with pytest.raises(np.linalg.LinAlgError):
        np.asarray(out)


z2, z3, v3 = xp.zeros((3, 3)), xp.zeros((2, 3, 4)), xp.zeros(3)
ints = xp.zeros((3, 3), dtype=xp.int64)

ERRORS = [
    (lambda: xp.tensordot(z3, z3, axes=1), ValueError, "tensordot: contracted axis"),
    (lambda: xp.tensordot(z3, z3, axes=-1), ValueError, "tensordot: axes must be a non-negative"),
    (lambda: xp.tensordot(z3, v3, axes=4), ValueError, "tensordot: cannot contract 4 axes"),
    (lambda: xp.tensordot(z3, z3, axes=([0, 0], [0, 0])), ValueError, "tensordot: repeated axis"),
    (lambda: xp.tensordot(z3, z3, axes=([0], [0, 1])), ValueError, "tensordot: axes"),
    (lambda: xp.tensordot(z3, z3, axes=([3], [0])), np.exceptions.AxisError, "tensordot: axis 3"),
    (lambda: xp.tensordot(z3, z3, axes="x"), TypeError, "tensordot: axes must be"),
    (lambda: xp.tensordot(xp.asarray([True]), v3, axes=0), TypeError, "tensordot: x1 has dtype bool"),
    (lambda: xp.tensordot(np.zeros(3), v3, axes=0), TypeError, "tensordot: x1 must be an arrayx array"),
    (lambda: xp.vecdot(z3, xp.zeros((2, 3, 3))), ValueError, "vecdot: axis -1 has size 4 in x1 but 3"),
    (lambda: xp.vecdot(xp.zeros((2, 4)), xp.zeros((3, 4))), ValueError, "vecdot: shapes"),
    (lambda: xp.vecdot(xp.zeros((4,)), xp.zeros((3, 4)), axis=0), ValueError, "vecdot: axis 0 is ambiguous"),
    (lambda: xp.vecdot(v3, v3, axis=-2), ValueError, r"vecdot: axis -2 is out of bounds \[-1, -1\]"),
    (lambda: xp.vecdot(v3, v3, axis=1.0), TypeError, "vecdot: axis must be an integer"),
    (lambda: xp.vecdot(xp.asarray(1.0), v3), ValueError, "vecdot: x1 and x2 must have at least one"),
    (lambda: L.cholesky(z3), ValueError, "linalg.cholesky: x must be a square matrix"),
    (lambda: L.cholesky(ints), TypeError, "linalg.cholesky: x has dtype int64"),
    (lambda: L.det(v3), ValueError, "linalg.det: x must have at least 2 dimensions"),
    (lambda: L.inv(z3), ValueError, "linalg.inv: x must be a square"),
    (lambda: L.inv([[1.0]]), TypeError, "linalg.inv: x must be an arrayx array"),
    (lambda: L.eig(z3), ValueError, "linalg.eig: x must be a square"),
    (lambda: L.eigvals(ints), TypeError, "linalg.eigvals: x has dtype int64"),
    (lambda: L.eigh(v3), ValueError, "linalg.eigh: x must have at least 2"),
    (lambda: L.eigvalsh(z3), ValueError, "linalg.eigvalsh: x must be a square"),
    (lambda: L.slogdet(z3), ValueError, "linalg.slogdet: x must be a square"),
    (lambda: L.svd(ints), TypeError, "linalg.svd: x has dtype int64"),
    (lambda: L.svdvals(v3), ValueError, "linalg.svdvals: x must have at least 2"),
    (lambda: L.qr(z2, mode="r"), ValueError, "linalg.qr: mode must be 'reduced' or 'complete'"),
    (lambda: L.diagonal(v3), ValueError, "linalg.diagonal: x must have at least 2"),
    (lambda: L.diagonal(z2, offset=1.5), TypeError, "linalg.diagonal: offset must be an integer"),
    (lambda: L.trace(xp.zeros((2, 2), dtype=xp.complex64), dtype=xp.float32), TypeError,
     "linalg.trace: cannot accumulate complex"),
    (lambda: L.trace(v3), ValueError, "linalg.trace: x must have at least 2"),
    (lambda: L.solve(z3, v3), ValueError, "linalg.solve: x1 must be a square"),
    (lambda: L.solve(z2, xp.zeros(4)), ValueError, r"linalg.solve: x2 must have shape \(3,\)"),
    (lambda: L.solve(z2, xp.zeros((3, 4, 2))), ValueError, "linalg.solve: x2 must have shape"),
    (lambda: L.solve(xp.zeros((2, 3, 3)), xp.zeros((4, 3, 1))), ValueError, "linalg.solve: shapes"),
    (lambda: L.solve(z2, xp.zeros(3, dtype=xp.int32)), TypeError, "linalg.solve: x2 has dtype int32"),
    (lambda: L.pinv(z3, rtol=xp.zeros(3)), ValueError, "linalg.pinv: shapes"),
    (lambda: L.pinv(z3, rtol=xp.zeros(2, dtype=xp.int64)), TypeError, "linalg.pinv: rtol has dtype int64"),
    (lambda: L.pinv(z3, rtol="big"), TypeError, "linalg.pinv: rtol must be None, a float"),
    (lambda: L.matrix_rank(v3), ValueError, "linalg.matrix_rank: x must have at least 2"),
    (lambda: L.matrix_rank(z3, rtol=xp.zeros(5)), ValueError, "linalg.matrix_rank: shapes"),
    (lambda: L.matrix_norm(z2, ord=3), ValueError, "linalg.matrix_norm: ord must be"),
    (lambda: L.matrix_norm(z2, ord="max"), ValueError, "linalg.matrix_norm: ord must be"),
    (lambda: L.matrix_norm(ints), TypeError, "linalg.matrix_norm: x has dtype int64"),
    (lambda: L.matrix_norm(v3), ValueError, "linalg.matrix_norm: x must have at least 2"),
    (lambda: L.vector_norm(v3, ord="fro"), ValueError, "linalg.vector_norm: ord must be a real number"),
    (lambda: L.vector_norm(v3, ord=math.nan), ValueError, "linalg.vector_norm: ord must be a real number"),
    (lambda: L.vector_norm(ints), TypeError, "linalg.vector_norm: x has dtype int64"),
    (lambda: L.vector_norm(z2, axis=2), np.exceptions.AxisError, "linalg.vector_norm: axis 2"),
    (lambda: L.vector_norm(z2, axis=(0, -2)), ValueError, "linalg.vector_norm: repeated axis"),
    (lambda: L.matrix_power(z3, 2), ValueError, "linalg.matrix_power: x must be a square"),
    (lambda: L.matrix_power(z2, 2.0), TypeError, "linalg.matrix_power: n must be an integer"),
    (lambda: L.matrix_power(ints, 2), TypeError, "linalg.matrix_power: x has dtype int64"),
    (lambda: L.cross(v3, xp.zeros(4)), ValueError, "linalg.cross: axis -1 of x2 must have size 3"),
    (lambda: L.cross(xp.zeros((2, 3)), xp.zeros((4, 3))), ValueError, "linalg.cross: shapes"),
    (lambda: L.cross(xp.zeros((3, 2)), xp.zeros((3, 4)), axis=-2), ValueError, "linalg.cross: shapes"),
    (lambda: L.cross(xp.zeros((3, 2)), xp.zeros((3, 2)), axis=-3), ValueError, "linalg.cross: axis -3 is out"),
    (lambda: L.cross(xp.asarray([True] * 3), v3), TypeError, "linalg.cross: x1 has dtype bool"),
    (lambda: L.outer(z2, v3), ValueError, "linalg.outer: x1 must be one-dimensional"),
    (lambda: L.outer(v3, xp.asarray([True])), TypeError, "linalg.outer: x2 has dtype bool"),
]


@pytest.mark.lazy_only
@pytest.mark.parametrize("call, error, message", ERRORS, ids=[m.split(":")[0] + f"-{i}" for i, (_, _, m) in
                                                              enumerate(ERRORS)])
def test_errors_name_the_function(call, error, message):
    debug.reset()
    with pytest.raises(error, match=message):
        call()
    assert debug.counters["steps_run"] == 0   # raised at the call, before anything ran
