"""neon's CPU backend in float16: gen_backend('cpu', datatype=np.float16).

neon's own tests run reductions, compound op-trees and Autodiff over float16;
here the shim's are checked against NumPy. Where the backend accumulates:
`sum` (axis 0 or 1, and the bias sums) accumulates in float32 and rounds once;
`sum` over all axes is neon's sum over axis 0 then axis 1 (two roundings);
`mean` is sum * (1/n) and `var` mean(square(a - mean(a))), each step in
float16 except the float32-accumulated sums; dot, compound_dot, batched_dot
and the convolutions run matmul, which accumulates float16 in float32 (as
NumPy's matmul does); max, min, argmax and argmin are exact.

Tolerances: U = 2**-11 is float16's unit roundoff. A result that rounds k
times (each by at most U relative) from values of one sign is within k*U of
the float64 value of the same definition; each test names its k. Data are
positive (or of one sign) where a relative bound is stated, so no
cancellation magnifies the rounding.
"""

import numpy as np
import pytest

from arrayx.neon.backends import Autodiff, cleanup_backend, gen_backend
from test_neon_layers import ref_bprop_conv, ref_fprop_conv, ref_fprop_pool, ref_update_conv

F16 = np.float16
U = 2.0 ** -11
RNG = np.random.default_rng(1616)


@pytest.fixture
def be():
    backend = gen_backend('cpu', rng_seed=0, datatype=np.float16)
    yield backend
    cleanup_backend()


def host(shape, lo=0.5, hi=1.5):
    """float16 values in [lo, hi) (positive by default)."""
    return RNG.uniform(lo, hi, shape).astype(F16)


def evaluate(be, tree):
    out = be.empty(tree.shape)
    out[:] = tree
    return out.get()


def assert_rel(got, expected, k):
    """`got` (float16) is within k roundings (k*U relative) of the float64 `expected`."""
    assert got.dtype == F16
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=k * U, atol=0)


def test_gen_backend_float16(be):
    assert np.dtype(be.default_dtype) == F16
    for t in (be.zeros((2, 3)), be.ones((2, 3)), be.empty((2, 3)), be.array([[1.5, 2.5]]),
              be.zeros_like(be.ones((2, 2)))):
        assert t.dtype == F16 and t.get().dtype == F16
    with np.errstate(over="ignore"):
        expected = np.array([[1e5, 0.1]]).astype(F16)  # 1e5 is beyond float16: inf
    np.testing.assert_array_equal(be.array(np.array([[1e5, 0.1]])).get(), expected)


def test_compound_op_trees_match_numpy_float16(be):
    """Elementwise trees against NumPy evaluating the same expression in float16.

    Both round after every operation (NumPy's float16 loops compute in float32
    and round once per operation), so they agree; 8 U of the largest value
    allows an executor that rounds a fused tree fewer times.
    """
    a, b = host((4, 6), -1.0, 1.0), host((4, 6))
    x, y = be.array(a), be.array(b)
    cases = [
        (x * y + be.exp(x) / (y + 2.0), a * b + np.exp(a) / (b + F16(2.0))),
        (be.tanh(x * 3.0) - be.sig(x) * y, np.tanh(a * F16(3.0)) - F16(1) / (F16(1) + np.exp(-a)) * b),
        (be.maximum(x, 0.0) ** 2.0 + be.sqrt(y) * be.log(y), np.maximum(a, F16(0)) ** F16(2) + np.sqrt(b) * np.log(b)),
        ((x > 0.25) * y - abs(x), (a > F16(0.25)).astype(F16) * b - np.abs(a)),
    ]
    for tree, expected in cases:
        got = evaluate(be, tree)
        assert got.dtype == F16
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                                   rtol=0, atol=8 * U * np.abs(expected).max())


@pytest.mark.parametrize("axis", [0, 1])
def test_sum_accumulates_in_float32(be, axis):
    # 3000 values near 1: a float16 running sum would stop at 2048. One rounding (k = 1).
    a = host((3000, 3)) if axis == 0 else host((3, 3000))
    got = evaluate(be, be.sum(be.array(a), axis=axis))
    assert got.shape == ((1, 3) if axis == 0 else (3, 1))
    assert_rel(got, np.sum(a.astype(np.float64), axis=axis, keepdims=True), 1)


def test_sum_over_all_axes_rounds_twice(be):
    # neon sums over axis 0, then over axis 1: k = 2 (positive values).
    a = host((64, 40))
    got = evaluate(be, be.sum(be.array(a)))
    assert got.shape == (1, 1)
    assert_rel(got, [[np.sum(a.astype(np.float64))]], 2)


@pytest.mark.parametrize("axis", [0, 1, None])
def test_mean(be, axis):
    # sum (1 rounding; 2 over all axes), 1/n rounded to float16, the product: k = 3 (4 over all axes).
    a = host((40, 64))
    got = evaluate(be, be.mean(be.array(a), axis=axis))
    expected = np.mean(a.astype(np.float64), axis=axis, keepdims=True)
    assert_rel(got, expected.reshape(got.shape), 3 if axis is not None else 4)


@pytest.mark.parametrize("axis", [0, 1, None])
def test_var_and_std(be, axis):
    """var = mean(square(a - mean(a))). The centered values carry the mean's
    error (<= 4U of |mean| ~ 1, not of |a - mean| ~ 0.3) and their own
    rounding; squaring doubles the relative error; the mean of the squares
    adds 3 (or 4) roundings. With |mean| / |a - mean| ~ 3 below, that is
    within 2 * (1 + 3 * 4) + 4 = 30 U for var and half of it plus one
    rounding for std: k = 32 and 17."""
    a = host((40, 64))
    x = be.array(a)
    var, std = evaluate(be, be.var(x, axis=axis)), evaluate(be, be.std(x, axis=axis))
    expected = np.var(a.astype(np.float64), axis=axis, keepdims=True).reshape(var.shape)
    assert_rel(var, expected, 32)
    assert_rel(std, np.sqrt(expected), 17)


def test_mean_rounds_the_sum_to_float16_as_neons_does(be):
    """neon's mean is the op-tree sum(a) * (1/n): the sum is a float16 value,
    so a sum beyond 65504 is inf even where the mean fits (neon's own backends
    store it so too; xp.mean does not round the sum)."""
    a = np.full((2, 600), 100, F16)
    a[:, ::2] = 102
    assert_rel(evaluate(be, be.mean(be.array(a), axis=1)), [[101.0], [101.0]], 3)  # the sum is 60600
    more = np.full((1, 700), 100, F16)  # sum 70000
    assert np.isinf(evaluate(be, be.mean(be.array(more), axis=1))).all()


def test_max_min_argmax_argmin_are_exact(be):
    a = host((7, 9), -1.0, 1.0)
    x = be.array(a)
    for tree, expected in [(be.max(x, axis=0), np.max(a, axis=0, keepdims=True)),
                           (be.min(x, axis=1), np.min(a, axis=1, keepdims=True)),
                           (be.max(x), np.max(a, keepdims=True)),
                           (be.argmax(x, axis=1), np.argmax(a, axis=1)[:, None]),
                           (be.argmin(x, axis=0), np.argmin(a, axis=0)[None, :])]:
        np.testing.assert_array_equal(evaluate(be, tree), expected)


def test_dot_and_compound_dot_accumulate_in_float32(be):
    # Each element sums 300 products of values near 1 (a float16 running sum would round 300
    # times). matmul rounds once: k = 1; compound_dot then scales by alpha and adds beta * C,
    # three more roundings: k = 4.
    a, b, c0 = host((8, 300)), host((300, 5)), host((8, 5))
    exact = a.astype(np.float64) @ b.astype(np.float64)
    assert_rel(evaluate(be, be.dot(be.array(a), be.array(b))), exact, 1)
    C = be.array(c0)
    be.compound_dot(be.array(a), be.array(b), C, alpha=0.5, beta=2.0)
    assert_rel(C.get(), 0.5 * exact + 2.0 * c0.astype(np.float64), 4)
    bsum = be.empty((8, 1))
    be.compound_dot(be.array(a), be.array(b), C, bsum=bsum)
    assert_rel(bsum.get(), exact.sum(axis=1, keepdims=True), 3)  # matmul, then the float32 row sum: k = 2 (+1 margin)


def test_batched_dot_update_sums_the_batch_in_float32(be):
    # A (X, K, N) . B.T (X, N, C) summed over X: matmul rounds each product once, the batch sum once.
    a, b = host((4, 3, 50)), host((4, 50, 2))
    C = be.empty((3, 2))
    be.batched_dot(be.array(a), be.array(b), C)
    assert_rel(C.get(), np.sum(a.astype(np.float64) @ b.astype(np.float64), axis=0), 2)


def test_conv_and_pool_layers_in_float16(be):
    # Each conv output sums C*R*S = 27 products in float32 (matmul) and rounds once: 2 U of the
    # largest value (values of both signs). Average pooling: a sum and a division; max: exact.
    layer = be.conv_layer(np.float16, 2, 3, 4, H=5, W=5, R=3, S=3, pad_h=1, pad_w=1)
    I, F, E = host(layer.dimI, -1, 1), host(layer.dimF, -1, 1), host(layer.dimO, -1, 1)
    tI, tF, tE = be.array(I.reshape(layer.dimI2)), be.array(F.reshape(layer.dimF2)), be.array(E.reshape(layer.dimO2))
    O, G, W = be.empty(layer.dimO2), be.empty(layer.dimI2), be.empty(layer.dimF2)
    be.fprop_conv(layer, tI, tF, O)
    be.bprop_conv(layer, tF, tE, G)
    be.update_conv(layer, tI, tE, W)
    I64, F64, E64 = (v.astype(np.float64) for v in (I, F, E))
    for got, ref in [(O, ref_fprop_conv(layer, I64, F64).reshape(layer.dimO2)),
                     (G, ref_bprop_conv(layer, F64, E64).reshape(layer.dimI2)),
                     (W, ref_update_conv(layer, I64, E64).reshape(layer.dimF2))]:
        assert got.dtype == F16
        np.testing.assert_allclose(got.get().astype(np.float64), ref, rtol=0, atol=2 * U * np.abs(ref).max())
    for op, k in (("max", 0), ("avg", 3)):
        pool = be.pool_layer(np.float16, op, 2, 3, H=5, W=5, R=3, S=3, pad_h=1, pad_w=1, str_h=2, str_w=2)
        P = host(pool.dimI)
        out = be.empty(pool.dimO2)
        be.fprop_pool(pool, be.array(P.reshape(pool.dimI2)), out)
        assert_rel(out.get(), ref_fprop_pool(pool, P.astype(np.float64)).reshape(pool.dimO2), k)


# -- Autodiff in float16 against float64 finite differences

def _sig(v):
    return 1.0 / (1.0 + np.exp(-v))


# name: (op-tree of tensors x, y, w), (the same function in NumPy float64)
TREES = {
    "tanh": (lambda be, x, y, w: be.tanh((x * y) + (x / y)), lambda x, y, w: np.tanh(x * y + x / y)),
    "sig_dot_reductions": (
        lambda be, x, y, w: (be.sum(be.sig(be.dot(x * y, w)) ** 2.0, axis=0) * be.min(be.sqrt(x))
                             - be.max(y * w.T[0:1, :])),
        lambda x, y, w: (np.sum(_sig((x * y) @ w) ** 2.0, axis=0, keepdims=True) * np.min(np.sqrt(x))
                         - np.max(y * w.T[0:1, :]))),
    "mean_var": (lambda be, x, y, w: be.mean(x * y, axis=1) + be.var(be.exp(x) - y, axis=1),
                 lambda x, y, w: np.mean(x * y, axis=1, keepdims=True) + np.var(np.exp(x) - y, axis=1, keepdims=True)),
    "log_sum": (lambda be, x, y, w: be.log(be.sum(x * x + y, axis=0)) * 2.0,
                lambda x, y, w: np.log(np.sum(x * x + y, axis=0, keepdims=True)) * 2.0),
}


def finite_differences(fn, arrays, h=1e-6):
    """Central differences of sum(fn(*arrays)) in float64 (error ~ h**2 + 1e-16 / h ~ 1e-10)."""
    grads = []
    for k, base in enumerate(arrays):
        g = np.zeros_like(base)
        for i in np.ndindex(base.shape):
            plus, minus = [a.copy() for a in arrays], [a.copy() for a in arrays]
            plus[k][i] += h
            minus[k][i] -= h
            g[i] = (np.sum(fn(*plus)) - np.sum(fn(*minus))) / (2 * h)
        grads.append(g)
    return grads


@pytest.mark.parametrize("name", sorted(TREES))
def test_autodiff_in_float16_matches_float64_finite_differences(be, name):
    """Gradients computed in float16 at float16 inputs, against float64 finite
    differences at the same inputs. Forward and backward chain about ten
    float16 roundings over terms no larger than the largest gradient, so 16 U
    (0.8%) of max|g| bounds the error; a wrong derivative is off by O(|g|)."""
    tree_fn, np_fn = TREES[name]
    hosts = [host((3, 3)), host((3, 3)), host((3, 2), -1.0, 1.0)]
    x, y, w = (be.array(h) for h in hosts)
    got = Autodiff(tree_fn(be, x, y, w), be, next_error=None).get_grad_asnumpyarray([x, y, w])
    expected = finite_differences(np_fn, [h.astype(np.float64) for h in hosts])
    for g, e in zip(got, expected):
        assert g.dtype == F16
        np.testing.assert_allclose(g.astype(np.float64), e, rtol=16 * U, atol=16 * U * max(np.abs(e).max(), 1e-3))
