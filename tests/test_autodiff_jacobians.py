"""Forward mode (jvp) and whole Jacobians (jacfwd, jacrev, hessian).

Forward mode is the VJP of the VJP (arrayx/autodiff/jacobians.py), so it is
checked over the whole rule table: every case of test_autodiff.py's table
(elementwise, reductions, scans, movement, matmul, broadcasting, where) and
the indexing, linalg and composite cases below, against central differences
along the tangent in float64,

    (f(x + h v) - f(x - h v)) / 2h,   h = eps^(1/3) * max(1, max|x|),  max|v| = 1,

whose error is ~ eps^(2/3) relative, as test_autodiff.py's per-element
differences: FD_RTOL = 1e3 eps^(2/3) ~ 5e-8 relative to the largest tangent
entry leaves the same factor 1e3 for third derivatives. The linalg inputs are
well conditioned (cond <= ~10) but their third derivatives larger, so they
use test_autodiff_linalg.py's 1e-6. A wrong rule is off by O(1).
`test_forward_mode_covers_every_primitive_with_a_vjp_rule` fails when a
primitive gets a VJP rule without a case here.

Where JAX is installed (CPU, float64), jvp, jacfwd, jacrev and hessian are
also compared with JAX's on the same functions: both are float64 evaluations
of the same formulas by different kernels (XLA's and NumPy's LAPACK calls,
other summation orders), so they agree to rounding: JAX_RTOL = 1e-10
relative to the largest entry, ~5e5 eps, allows for condition numbers ~10
and a few hundred operations. JAX's side runs under jax.jit: op by op, its
compilation of each operation takes seconds per test.
"""

import math
import warnings
import zlib

import numpy as np
import pytest
from test_autodiff import CASES, Case, U, distinct, uniform

import arrayx as xp
from arrayx import pytree
from arrayx.autodiff import grad, hessian, jacfwd, jacrev, jvp, retain_history
from arrayx.autodiff.backward import history_order
from arrayx.autodiff.registry import VJP
from arrayx.autodiff.templates import forget_templates
from arrayx.counters import counters, reset

try:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = jnp = None

needs_jax = pytest.mark.skipif(jax is None, reason="jax not installed")

EPS = float(np.finfo(np.float64).eps)
FD_RTOL = 1e3 * EPS ** (2 / 3)
LINALG_RTOL = 1e-6
JAX_RTOL = 1e-10


# ---------------------------------------------------------------- inputs

def general(rng, shape):
    """Well-conditioned square matrices: n I + N(0, 1) entries (cond ~ 3)."""
    n = shape[-1]
    return rng.standard_normal(shape) + n * np.eye(n)


def spd(rng, shape):
    b = rng.standard_normal(shape)
    return b @ np.swapaxes(b, -1, -2) + shape[-1] * np.eye(shape[-1])


def spaced_spectrum(rng, shape):
    """Symmetric matrices with eigenvalues -1, 0.5, 2, 4 (gaps >= 1.5: eigenvectors differentiable)."""
    q, _ = np.linalg.qr(rng.standard_normal(shape))
    return (q * np.array([-1.0, 0.5, 2.0, 4.0])) @ q.T


def spaced_singular_values(rng, shape):
    """m x n matrices with singular values 3, 2, 1."""
    m, n = shape
    u, _ = np.linalg.qr(rng.standard_normal((m, 3)))
    v, _ = np.linalg.qr(rng.standard_normal((n, 3)))
    return (u * np.array([3.0, 2.0, 1.0])) @ v.T


def tall(rng, shape):
    """m x n (m >= n) matrices of full rank: 3 on the diagonal plus N(0, 1) entries."""
    return rng.standard_normal(shape) + 3.0 * np.eye(*shape)


def sym(x):
    return (x + x.mT) * 0.5


def _i(values):
    return xp.asarray(np.asarray(values, dtype=np.int64))


IDX = _i([2, 0, 2, 1])                 # a repeated index
MASK = xp.asarray(np.array([[True, False, True, False], [False, True, True, True], [True, False, False, True]]))


def _setitem_array(x, v):
    y = x * 1.0
    y[_i([1, 0, 1])] = v        # row 1 written twice: only the last write lands
    return y * y


def _setitem_mask(x):
    y = x * 1.0
    y[MASK] = 0.5
    return y * x


def _gather_twice_differentiated(x):
    # grad of a gather is a scatter_add of x's shape: its forward mode is scatter_add's.
    return grad(lambda z: xp.sum(xp.sin(z[IDX]) * xp.asarray([0.5, -1.0, 2.0, 1.5])))(x)


def logsumexp(z):
    m = xp.max(z, axis=-1, keepdims=True)
    return m + xp.log(xp.sum(xp.exp(z - m), axis=-1, keepdims=True))


def _svd_product(x):
    u, s, vh = xp.linalg.svd(x, full_matrices=False)
    return (u * xp.exp(s)) @ vh      # sign-invariant in each singular pair


def _eigh_function(x):
    w, v = xp.linalg.eigh(sym(x))
    return (v * xp.exp(w)) @ v.mT    # the matrix exponential of sym(x)


def _qr_both(x):
    q, r = xp.linalg.qr(x)
    return q * 2.0, r


# Indexing, sorting, linalg and composites (test_autodiff.CASES holds the rest).
INDEXING_CASES = [
    Case("gather", lambda x: x[IDX, 1:] * 2.0, ((3, 4),), (U,)),
    Case("gather-mask", lambda x: xp.sin(x[MASK]), ((3, 4),), (U,)),
    Case("scatter-duplicates", _setitem_array, ((3, 4), (3, 4)), (U, U)),
    Case("scatter-mask", _setitem_mask, ((3, 4),), (U,)),
    Case("scatter_add", _gather_twice_differentiated, ((3,),), (U,)),
    Case("take", lambda x: xp.take(x, IDX, axis=1), ((3, 4),), (U,)),
    Case("take_along_axis", lambda x: xp.take_along_axis(x, _i([[0, 2], [1, 1], [3, 0]]), axis=1), ((3, 4),), (U,)),
    Case("diagonal", lambda x: xp.linalg.diagonal(x, offset=1) ** 2, ((3, 4),), (U,)),
    Case("sort", lambda x: xp.sort(x * x, axis=1, descending=True), ((3, 4),), (distinct(0.2, 2.0),)),
    Case("logsumexp", logsumexp, ((3, 5),), (uniform(-3.0, 3.0),)),
    Case("softmax", lambda z: xp.exp(z - logsumexp(z)), ((3, 5),), (uniform(-3.0, 3.0),)),
    Case("vector_norm", lambda x: xp.linalg.vector_norm(xp.sin(x)), ((5,),), (U,)),
]
LINALG_CASES = [
    Case("inv", xp.linalg.inv, ((2, 3, 3),), (general,)),
    Case("solve", xp.linalg.solve, ((3, 3), (3, 2)), (general, U)),
    Case("det", xp.linalg.det, ((2, 3, 3),), (general,)),
    Case("slogdet", lambda x: xp.linalg.slogdet(x).logabsdet, ((3, 3),), (general,)),
    Case("cholesky", lambda x: xp.linalg.cholesky(sym(x)), ((3, 3),), (spd,)),
    Case("cholesky-upper", lambda x: xp.linalg.cholesky(sym(x), upper=True), ((3, 3),), (spd,)),
    Case("eigh", _eigh_function, ((4, 4),), (spaced_spectrum,)),
    Case("eigvalsh", lambda x: xp.linalg.eigvalsh(sym(x)), ((4, 4),), (spaced_spectrum,)),
    Case("svd", _svd_product, ((4, 3),), (spaced_singular_values,)),
    Case("svdvals", xp.linalg.svdvals, ((3, 4),), (spaced_singular_values,)),
    Case("qr", _qr_both, ((4, 3),), (tall,)),
    Case("pinv", xp.linalg.pinv, ((4, 3),), (spaced_singular_values,)),
]
FORWARD_CASES = [(c, FD_RTOL) for c in CASES + INDEXING_CASES] + [(c, LINALG_RTOL) for c in LINALG_CASES]


# ---------------------------------------------------------------- oracles

def _leaves(tree):
    return [np.asarray(a) for a in pytree.flatten(tree)[0]]


def directional_differences(f, inputs, directions):
    """(f(x + h v) - f(x - h v)) / 2h for each output leaf; inputs and directions are NumPy arrays."""
    h = EPS ** (1 / 3) * max(1.0, max(float(np.max(np.abs(a))) for a in inputs))
    plus = _leaves(f(*(xp.asarray(a + h * v) for a, v in zip(inputs, directions))))
    minus = _leaves(f(*(xp.asarray(a - h * v) for a, v in zip(inputs, directions))))
    return [(p - m) / (2 * h) for p, m in zip(plus, minus)]


def jacobian_differences(f, x):
    """d f / d x (one NumPy array in, one out) by central differences, column by column."""
    columns = []
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = EPS ** (1 / 3) * max(1.0, abs(x[i]))
        columns.append((np.asarray(f(xp.asarray(x + step))) - np.asarray(f(xp.asarray(x - step)))) / (2 * step[i]))
    out = np.stack(columns, axis=-1)
    return out.reshape(out.shape[:-1] + x.shape)


def assert_close(got, expected, rtol, message=""):
    got = np.asarray(got)
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    assert got.shape == np.shape(expected), (message, got.shape, np.shape(expected))
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * scale, err_msg=message)


def unit_directions(rng, inputs):
    """Random tangents scaled to max |v| = 1 (the step analysis above assumes it)."""
    vs = [rng.standard_normal(a.shape) for a in inputs]
    top = max(float(np.max(np.abs(v), initial=0.0)) for v in vs)
    return [v / top for v in vs]


# ---------------------------------------------------------------- jvp over the rule table

@pytest.mark.parametrize("case, rtol", FORWARD_CASES, ids=[c.id for c, _ in FORWARD_CASES])
def test_jvp_matches_central_differences(case, rtol):
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    inputs = case.sample(rng)
    vs = unit_directions(rng, inputs)
    y, t = jvp(case.fn, [xp.asarray(a) for a in inputs], [xp.asarray(v) for v in vs])
    for got, expected in zip(_leaves(y), _leaves(case.fn(*(xp.asarray(a) for a in inputs)))):
        np.testing.assert_array_equal(got, expected)
    for k, (got, expected) in enumerate(zip(_leaves(t), directional_differences(case.fn, inputs, vs))):
        assert_close(got, expected, rtol, f"output {k}")


X32 = np.array([0.5, -1.25, 3.0], dtype=np.float32)
V32 = np.array([1.0, 0.25, -2.0], dtype=np.float32)
# Casts, whose differences in float32 would drown in rounding: (f, x, v, the exact tangent).
# float32 values times small integers are exact in float64, and 2 v is exact in float32.
EXACT_CASES = [
    ("astype-up", lambda x: xp.astype(x, xp.float64) ** 3, X32, V32, 3.0 * X32.astype(np.float64) ** 2 * V32),
    ("astype-down", lambda x: xp.astype(x, xp.float32) * 2.0, X32.astype(np.float64), V32.astype(np.float64),
     2.0 * V32),
]


@pytest.mark.parametrize("name, f, x, v, expected", EXACT_CASES, ids=[c[0] for c in EXACT_CASES])
def test_jvp_through_casts_is_exact(name, f, x, v, expected):
    _, t = jvp(f, [xp.asarray(x)], [xp.asarray(v)])
    assert np.asarray(t).dtype == expected.dtype
    np.testing.assert_array_equal(np.asarray(t), expected)


def _primitives(f, inputs):
    with retain_history():
        outs = pytree.flatten(f(*(xp.asarray(a) for a in inputs)))[0]
        return {n.op.name for n in history_order([o._node for o in outs])}


def test_forward_mode_covers_every_primitive_with_a_vjp_rule():
    """Forward mode comes from the VJP rules: each rule must be linear in its cotangent
    and built of differentiable primitives. A primitive with a VJP rule and no case
    above is a rule whose forward mode nothing checks."""
    rng = np.random.default_rng(0)
    covered = set().union(*(_primitives(c.fn, c.sample(rng)) for c, _ in FORWARD_CASES),
                          *(_primitives(f, [x]) for _, f, x, _, _ in EXACT_CASES))
    assert set(VJP) - covered == set()


@pytest.mark.parametrize("case", [c for c in CASES if c.id in ("sin", "divide", "matmul-2d-2d", "prod-axis1")],
                         ids=lambda c: c.id)
def test_float32_tangents_stay_float32(case):
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    inputs = case.sample(rng)
    vs = unit_directions(rng, inputs)
    _, t32 = jvp(case.fn, [xp.asarray(a.astype(np.float32)) for a in inputs],
                 [xp.asarray(v.astype(np.float32)) for v in vs])
    _, t64 = jvp(case.fn, [xp.asarray(a) for a in inputs], [xp.asarray(v) for v in vs])
    assert t32.dtype == xp.float32
    # float32 evaluation of a few operations: 1e-5 relative is ~100 float32 eps.
    assert_close(t32, np.asarray(t64), 1e-5)


def test_jvp_of_the_norm_at_the_origin_is_zero():
    """The composite rule's subgradient at the origin carries over to forward mode (the
    primitives' rules alone would give 0/0)."""
    _, t = jvp(lambda x: xp.linalg.vector_norm(x * 1.0), [xp.zeros(3)], [xp.asarray([1.0, -2.0, 0.5])])
    assert float(t) == 0.0


def test_jvp_through_logsumexp_with_tied_maxima_is_the_softmax_average():
    z = xp.asarray([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    v = np.array([[0.5, 1.0, -2.0], [3.0, 0.0, 1.5]])
    _, t = jvp(logsumexp, [z], [xp.asarray(v)])
    softmax = np.exp(np.asarray(z) - np.log(np.sum(np.exp(np.asarray(z)), axis=1, keepdims=True)))
    # A few operations on numbers of order 1 in float64: 4 eps.
    np.testing.assert_allclose(np.asarray(t)[:, 0], np.sum(softmax * v, axis=1), rtol=4 * EPS, atol=4 * EPS)


# ---------------------------------------------------------------- the same functions in JAX

def _np_case(namespace):
    """Functions written once for both namespaces (arrayx and jax.numpy)."""
    m = namespace
    a = np.random.default_rng(5).standard_normal((4, 3))

    def lse(z):
        top = m.max(z, axis=-1, keepdims=True)
        return top + m.log(m.sum(m.exp(z - top), axis=-1, keepdims=True))
    return {
        "elementwise": (lambda x: m.exp(m.sin(x) * x) / (1.0 + x * x), [(5,)]),
        "reductions": (lambda x: m.sum(x * x, axis=1) + m.max(x, axis=1) * m.prod(x, axis=1), [(3, 4)]),
        "matmul": (lambda x, w: m.tanh(x @ w) @ m.asarray(a), [(2, 3, 4), (4, 4)]),
        "broadcasting": (lambda x, y: x * y - m.sin(y), [(3, 1), (4,)]),
        "indexing": (lambda x: x[m.asarray([2, 0, 2])] * 2.0 + m.take(x, m.asarray([1, 1, 3]), axis=0) ** 2, [(4,)]),
        "where": (lambda x: m.where(x > 0.0, m.sin(x), x * x), [(6,)]),
        "inv": (lambda x: m.linalg.inv(x), [(3, 3)]),
        "solve": (lambda x, b: m.linalg.solve(x, b), [(3, 3), (3, 2)]),
        "det": (lambda x: m.linalg.det(x), [(2, 3, 3)]),
        "cholesky": (lambda x: m.linalg.cholesky(x @ x.mT + 3.0 * m.eye(3)), [(3, 3)]),
        "softmax": (lambda z: m.exp(z - lse(z)), [(2, 5)]),
        "logsumexp": (lse, [(2, 5)]),
        "vector_norm": (lambda x: m.linalg.vector_norm(m.sin(x)), [(5,)]),
    }


JAX_CASES = sorted(_np_case(xp))


def _inputs(name, shapes):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    arrays = [rng.standard_normal(s) for s in shapes]
    if name in ("inv", "solve", "det"):
        arrays[0] = general(rng, shapes[0])
    if name == "where":
        arrays[0] = np.sign(arrays[0]) * rng.uniform(0.2, 2.0, shapes[0])   # away from the switch at 0
    if name == "reductions":
        arrays[0] = distinct(-2.0, 2.0)(rng, shapes[0])
    return arrays, [rng.standard_normal(s) for s in shapes]


@needs_jax
@pytest.mark.parametrize("name", JAX_CASES)
def test_jvp_agrees_with_jax(name):
    f, shapes = _np_case(xp)[name]
    jf = _np_case(jnp)[name][0]
    inputs, vs = _inputs(name, shapes)
    y, t = jvp(f, [xp.asarray(a) for a in inputs], [xp.asarray(v) for v in vs])
    jy, jt = jax.jit(lambda xs, vs: jax.jvp(jf, xs, vs))(tuple(inputs), tuple(vs))
    assert_close(y, np.asarray(jy), JAX_RTOL)
    assert_close(t, np.asarray(jt), JAX_RTOL)


@needs_jax
@pytest.mark.parametrize("name", JAX_CASES)
@pytest.mark.parametrize("ours, theirs", [(jacfwd, "jacfwd"), (jacrev, "jacrev")], ids=["jacfwd", "jacrev"])
def test_jacobians_agree_with_jax(name, ours, theirs):
    f, shapes = _np_case(xp)[name]
    jf = _np_case(jnp)[name][0]
    inputs, _ = _inputs(name, shapes)
    argnums = tuple(range(len(inputs)))
    got = ours(f, argnums=argnums)(*(xp.asarray(a) for a in inputs))
    expected = jax.jit(getattr(jax, theirs)(jf, argnums=argnums))(*inputs)
    for g, e in zip(got, expected):
        assert_close(g, np.asarray(e), JAX_RTOL)


@pytest.mark.parametrize("name", JAX_CASES)
@pytest.mark.parametrize("jacobian", [jacfwd, jacrev], ids=["jacfwd", "jacrev"])
def test_jacobians_match_central_differences(name, jacobian):
    f, shapes = _np_case(xp)[name]
    inputs, _ = _inputs(name, shapes)
    for k in range(len(inputs)):
        def alone(x):
            return f(*(x if i == k else xp.asarray(a) for i, a in enumerate(inputs)))
        got = jacobian(f, argnums=k)(*(xp.asarray(a) for a in inputs))
        assert_close(got, jacobian_differences(alone, inputs[k]), LINALG_RTOL, f"argument {k}")


def _scalar(m):
    a = np.random.default_rng(9).standard_normal((3, 4))
    return lambda x: m.sum(m.tanh(m.asarray(a) @ x) ** 2) + m.prod(x) + m.sum(m.sin(x)) * x[0]


def test_hessian_matches_differences_of_the_gradient_and_is_symmetric():
    x = np.random.default_rng(1).standard_normal(4)
    h = np.asarray(hessian(_scalar(xp))(xp.asarray(x)))
    assert_close(h, jacobian_differences(grad(_scalar(xp)), x), FD_RTOL)
    np.testing.assert_allclose(h, h.T, rtol=0, atol=1e-14)


@needs_jax
def test_hessian_agrees_with_jax():
    x = np.random.default_rng(1).standard_normal(4)
    assert_close(hessian(_scalar(xp))(xp.asarray(x)), np.asarray(jax.jit(jax.hessian(_scalar(jnp)))(x)), JAX_RTOL)


# ---------------------------------------------------------------- pytrees and argnums

def _tree_function(m):
    def f(params, b):
        hidden = m.tanh(params["w"] @ b + params["c"])
        return {"sum": m.sum(hidden * b[:2]), "parts": (hidden * 2.0, [b ** 2])}
    return f


def _tree_inputs():
    rng = np.random.default_rng(2)
    return {"c": rng.standard_normal(2), "w": rng.standard_normal((2, 3))}, rng.standard_normal(3)


def _as_arrayx(tree):
    if isinstance(tree, dict):
        return {k: _as_arrayx(v) for k, v in tree.items()}
    return xp.asarray(tree)


def _assert_same_tree(got, expected, rtol, path=""):
    """Walks both trees by key and position: JAX orders dict leaves by sorted key, arrayx by insertion."""
    if isinstance(expected, dict):
        assert isinstance(got, dict) and set(got) == set(expected), path
        for k in expected:
            _assert_same_tree(got[k], expected[k], rtol, f"{path}[{k!r}]")
    elif isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected), path
        for i, (g, e) in enumerate(zip(got, expected)):
            _assert_same_tree(g, e, rtol, f"{path}[{i}]")
    else:
        assert isinstance(got, xp.Array), path
        assert_close(got, np.asarray(expected), rtol, path)


def test_jacobian_of_pytrees_has_the_output_tree_of_argument_trees():
    params, b = _tree_inputs()
    jac = jacrev(_tree_function(xp), argnums=(0, 1))(_as_arrayx(params), xp.asarray(b))
    assert set(jac) == {"sum", "parts"}
    d_sum_params, d_sum_b = jac["sum"]
    assert d_sum_params["w"].shape == (2, 3) and d_sum_params["c"].shape == (2,) and d_sum_b.shape == (3,)
    d_square_params, d_square_b = jac["parts"][1][0]
    assert d_square_params["w"].shape == (3, 2, 3) and d_square_b.shape == (3, 3)
    np.testing.assert_array_equal(np.asarray(d_square_params["w"]), np.zeros((3, 2, 3)))
    np.testing.assert_allclose(np.asarray(d_square_b), np.diag(2 * b), rtol=1e-15)
    forward = jacfwd(_tree_function(xp), argnums=(0, 1))(_as_arrayx(params), xp.asarray(b))
    _assert_same_tree(forward, pytree.flatten(jac)[1].unflatten([np.asarray(a) for a in pytree.flatten(jac)[0]]),
                      1e-13)


def test_jvp_of_pytrees_matches_central_differences():
    params, b = _tree_inputs()
    rng = np.random.default_rng(3)
    dparams = {k: rng.standard_normal(v.shape) for k, v in params.items()}
    db = rng.standard_normal(b.shape)
    f = _tree_function(xp)
    y, t = jvp(f, (_as_arrayx(params), xp.asarray(b)), [_as_arrayx(dparams), xp.asarray(db)])
    assert pytree.flatten(t)[1] == pytree.flatten(y)[1]
    h = EPS ** (1 / 3) * 2.0
    plus = f({k: xp.asarray(params[k] + h * dparams[k]) for k in params}, xp.asarray(b + h * db))
    minus = f({k: xp.asarray(params[k] - h * dparams[k]) for k in params}, xp.asarray(b - h * db))
    for got, p, m in zip(_leaves(t), _leaves(plus), _leaves(minus)):
        assert_close(got, (p - m) / (2 * h), FD_RTOL)


@needs_jax
@pytest.mark.parametrize("argnums", [0, (1, 0), -1])
@pytest.mark.parametrize("ours, theirs", [(jacfwd, "jacfwd"), (jacrev, "jacrev"), (hessian, "hessian")],
                         ids=["jacfwd", "jacrev", "hessian"])
def test_pytrees_and_argnums_agree_with_jax(argnums, ours, theirs):
    params, b = _tree_inputs()
    f, jf = _tree_function(xp), _tree_function(jnp)
    if ours is hessian:
        f, jf = (lambda p, c: _tree_function(xp)(p, c)["sum"]), (lambda p, c: _tree_function(jnp)(p, c)["sum"])
    got = ours(f, argnums=argnums)(_as_arrayx(params), xp.asarray(b))
    expected = jax.jit(getattr(jax, theirs)(jf, argnums=argnums))(params, b)
    _assert_same_tree(got, expected, JAX_RTOL)


@needs_jax
def test_jvp_of_pytrees_agrees_with_jax():
    params, b = _tree_inputs()
    rng = np.random.default_rng(3)
    dparams = {k: rng.standard_normal(v.shape) for k, v in params.items()}
    db = rng.standard_normal(b.shape)
    y, t = jvp(_tree_function(xp), (_as_arrayx(params), xp.asarray(b)), (_as_arrayx(dparams), xp.asarray(db)))
    jy, jt = jax.jit(lambda p, t: jax.jvp(_tree_function(jnp), p, t))((params, b), (dparams, db))
    _assert_same_tree(y, jy, JAX_RTOL)
    _assert_same_tree(t, jt, JAX_RTOL)


# ---------------------------------------------------------------- composition with grad and jit

def test_grad_of_a_jvp_and_jvp_of_a_grad_are_hessian_vector_products():
    f = _scalar(xp)
    x, v = np.random.default_rng(4).standard_normal((2, 4))
    h = np.asarray(hessian(f)(xp.asarray(x)))
    # forward over reverse
    _, hv = jvp(grad(f), [xp.asarray(x)], [xp.asarray(v)])
    assert_close(hv, h @ v, 1e-13)
    # reverse over forward: d/dx <grad f(x), v> = H v as well
    hv2 = grad(lambda z: jvp(f, [z], [xp.asarray(v)])[1])(xp.asarray(x))
    assert_close(hv2, h @ v, 1e-13)
    assert_close(jacrev(grad(f))(xp.asarray(x)), h, 1e-13)


@needs_jax
def test_nested_forward_and_reverse_agree_with_jax():
    x, v = np.random.default_rng(4).standard_normal((2, 4))
    got = grad(lambda z: xp.sum(jvp(_scalar(xp), [z], [xp.asarray(v)])[1] * z))(xp.asarray(x))
    expected = jax.jit(jax.grad(lambda z: jnp.sum(jax.jvp(_scalar(jnp), (z,), (v,))[1] * z)))(x)
    assert_close(got, np.asarray(expected), JAX_RTOL)
    third = jacfwd(hessian(_scalar(xp)))(xp.asarray(x))
    assert_close(third, np.asarray(jax.jit(jax.jacfwd(jax.hessian(_scalar(jnp))))(x)), JAX_RTOL)


def test_jit_of_jvp_jacobians_and_hessian_equals_eager():
    """Same graph and kernels traced once; summation order inside fused kernels may differ (1e-14)."""
    f = _np_case(xp)["matmul"][0]
    inputs, vs = _inputs("matmul", _np_case(xp)["matmul"][1])
    args = [xp.asarray(a) for a in inputs]
    tangents = [xp.asarray(v) for v in vs]
    traced = xp.jit(lambda x, w, dx, dw: jvp(f, (x, w), (dx, dw)))
    for got, expected in zip(traced(*args, *tangents), jvp(f, args, tangents)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-14)
    for transform in (jacfwd, jacrev):
        got = xp.jit(transform(f, argnums=(0, 1)))(*args)
        for g, e in zip(got, transform(f, argnums=(0, 1))(*args)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-14)
    x = xp.asarray(np.random.default_rng(1).standard_normal(4))
    np.testing.assert_allclose(np.asarray(xp.jit(hessian(_scalar(xp)))(x)), np.asarray(hessian(_scalar(xp))(x)),
                               rtol=1e-14)
    params, b = _tree_inputs()
    tree_jac = xp.jit(jacrev(_tree_function(xp), argnums=(0, 1)))(_as_arrayx(params), xp.asarray(b))
    _assert_same_tree(tree_jac, jacrev(_tree_function(xp), argnums=(0, 1))(_as_arrayx(params), xp.asarray(b)), 1e-14)


# ---------------------------------------------------------------- cost

def test_jvp_runs_the_steps_of_a_hand_written_jvp():
    """The transposing sweep reads only coefficients of the J^T u graph: u (zeros) and
    J^T u are never computed, and the tangent shares the forward's values."""
    rng = np.random.default_rng(6)
    w1, w2 = xp.asarray(rng.standard_normal((64, 32))), xp.asarray(rng.standard_normal((32, 8)))
    x, v = xp.asarray(rng.standard_normal((16, 64))), xp.asarray(rng.standard_normal((16, 64)))

    def f(x):
        return xp.tanh(xp.tanh(x @ w1) @ w2)

    def by_hand(x, v):
        h1 = xp.tanh(x @ w1)
        t1 = (1.0 - h1 * h1) * (v @ w1)
        y = xp.tanh(h1 @ w2)
        return y, (1.0 - y * y) * (t1 @ w2)
    y, t = jvp(f, [x], [v])
    reset()
    xp.eval(y, t)
    steps = counters["steps_run"]
    y2, t2 = by_hand(x, v)
    reset()
    xp.eval(y2, t2)
    assert steps == counters["steps_run"]
    np.testing.assert_allclose(np.asarray(t), np.asarray(t2), rtol=1e-13)


@pytest.mark.parametrize("jacobian", [jacfwd, jacrev], ids=["jacfwd", "jacrev"])
def test_a_jacobian_is_one_force_point_with_its_sweeps_rebuilt_from_a_template(jacobian):
    """No force point per basis vector: the n sweeps build one graph; the basis vectors are
    arrays of one structure, so every sweep after the second is rebuilt from a template."""
    n = 12
    w = xp.asarray(np.random.default_rng(7).standard_normal((n, n)))
    x = xp.asarray(np.random.default_rng(8).standard_normal(n))
    forget_templates()
    reset()
    jac = jacobian(lambda x: xp.tanh(w @ x) * x)(x)
    assert counters["realizations"] == 0
    assert counters["gradients_rebuilt"] == n - 2
    np.asarray(jac)
    assert counters["realizations"] == 1


# ---------------------------------------------------------------- edge cases and errors

def test_outputs_that_do_not_depend_on_the_input_get_zero_tangents_without_warnings():
    x = xp.asarray([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y, t = jvp(lambda x: (xp.ones(3), x * 2.0, xp.argmax(x)), [x], [xp.asarray([1.0, 1.0])])
        jac = jacfwd(lambda x, z: (x * z, xp.ones(3) * z), argnums=0)(x, xp.asarray(3.0))
    np.testing.assert_array_equal(np.asarray(t[0]), np.zeros(3))
    np.testing.assert_array_equal(np.asarray(t[1]), [2.0, 2.0])
    assert t[2].dtype == y[2].dtype and int(t[2]) == 0
    np.testing.assert_array_equal(np.asarray(jac[0]), np.eye(2) * 3.0)
    np.testing.assert_array_equal(np.asarray(jac[1]), np.zeros((3, 2)))


def test_identity_and_empty_arrays():
    v = xp.asarray([3.0, -1.0])
    _, t = jvp(lambda x: x, [xp.asarray([1.0, 2.0])], [v])
    np.testing.assert_array_equal(np.asarray(t), [3.0, -1.0])
    assert jacrev(lambda x: x * 2.0)(xp.zeros((0, 2))).shape == (0, 2, 0, 2)
    assert jacfwd(lambda x: xp.sum(x))(xp.zeros(0)).shape == (0,)


def test_jvp_keeps_its_results_lazy():
    x = xp.asarray([0.5, 1.5])
    reset()
    y, t = jvp(xp.sin, [x], [xp.asarray([1.0, 0.0])])
    assert counters["realizations"] == 0
    xp.eval(y, t)
    assert counters["realizations"] == 1
    np.testing.assert_allclose(np.asarray(t), [math.cos(0.5), 0.0], rtol=1e-15)


def test_errors_name_the_function_and_the_operand():
    x = xp.asarray([1.0, 2.0])
    with pytest.raises(TypeError, match=r"jvp: primals must be a tuple or list"):
        jvp(xp.sin, x, (x,))
    with pytest.raises(ValueError, match=r"jvp: 1 primals but 2 tangents"):
        jvp(xp.sin, (x,), (x, x))
    with pytest.raises(ValueError, match=r"jvp: tangents\[0\] has shape \(3,\)"):
        jvp(xp.sin, (x,), (xp.ones(3),))
    with pytest.raises(TypeError, match=r"jvp: tangents\[0\] has dtype float32"):
        jvp(xp.sin, (x,), (xp.ones(2, dtype=xp.float32),))
    with pytest.raises(TypeError, match=r"jvp: tangents\[0\]\['a'\] is a ndarray"):
        jvp(lambda d: d["a"], ({"a": x},), ({"a": np.ones(2)},))
    with pytest.raises(ValueError, match=r"jvp: tangents\[0\] and primals\[0\] differ in structure"):
        jvp(lambda d: d["a"], ({"a": x},), ((x,),))
    with pytest.raises(TypeError, match=r"jvp: primals\[0\] has dtype int64"):
        jvp(xp.sin, (xp.asarray([1, 2]),), (x,))
    with pytest.raises(TypeError, match=r"jvp: output has dtype complex128"):
        jvp(lambda z: xp.astype(z, xp.complex128), (x,), (x,))
    with pytest.raises(TypeError, match=r"jacfwd: output\[1\] has dtype int64"):
        jacfwd(lambda z: (z, xp.argmax(z)))(x)
    with pytest.raises(ValueError, match=r"jacrev: argnums 2 is out of range"):
        jacrev(lambda a, b: a * b, argnums=2)(x, x)
    with pytest.raises(TypeError, match=r"hessian: argument 0 has dtype int64"):
        hessian(lambda z: xp.sum(z))(xp.asarray([1, 2]))
