"""neon's Autodiff over arrayx (arrayx.neon.backends.autodiff): the seed 001
example, every differentiable op against central finite differences, N-D
op-trees, next_error, views sharing a base, memoization and the four ways to
get the gradients.

Finite differences: float64, step h = 1e-6, central difference
(f(x + h e_i) - f(x - h e_i)) / 2h summed against the cotangent. Its
truncation error is O(h^2 f''') ~ 1e-12 and its rounding error
~ eps * |f| / h ~ 1e-16 * 10 / 1e-6 = 1e-9, so rtol = atol = 1e-6 leaves a
wide margin while any wrong derivative (off by a factor, a sign or a term)
is caught. Inputs stay away from kinks and ties (abs at 0, maximum/minimum
of equal values, max/min with repeated extremes) where the derivative is
not defined.
"""

import gc
import os
import subprocess
import sys
import textwrap
import weakref
from pathlib import Path

import numpy as np
import pytest

from arrayx.neon.backends import Autodiff, cleanup_backend, gen_backend
from arrayx.neon.backends import autodiff as autodiff_module
from arrayx.neon.backends.backend import OpTreeNode, Tensor

REPO = Path(__file__).resolve().parents[1]
H = 1e-6
TOL = dict(rtol=1e-6, atol=1e-6)


@pytest.fixture
def be():
    backend = gen_backend('cpu', rng_seed=0, datatype=np.float64)
    yield backend
    cleanup_backend()


def evaluate(be, tree):
    out = be.empty(tree.shape)
    out[:] = tree
    return out.get()


def numeric_grads(be, tree, tensors, cotangent):
    """Central finite differences of sum(cotangent * tree) w.r.t. each tensor."""
    grads = []
    for t in tensors:
        base = t.get()
        g = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            plus, minus = base.copy(), base.copy()
            plus[idx] += H
            minus[idx] -= H
            t[:] = plus
            fp = np.sum(cotangent * evaluate(be, tree))
            t[:] = minus
            fm = np.sum(cotangent * evaluate(be, tree))
            g[idx] = (fp - fm) / (2 * H)
        t[:] = base
        grads.append(g)
    return grads


def check(be, tree, tensors, next_error=None):
    cotangent = np.ones(tree.shape) if next_error is None else next_error.get()
    ad = Autodiff(tree, be, next_error=next_error)
    got = ad.get_grad_asnumpyarray(tensors)
    want = numeric_grads(be, tree, tensors, cotangent)
    for g, w, t in zip(got, want, tensors):
        assert g.shape == t.shape and g.dtype == np.float64
        np.testing.assert_allclose(g, w, **TOL)
    return got


RNG = np.random.default_rng(11)


def pos(shape, lo=0.5, hi=2.0):
    return RNG.uniform(lo, hi, shape)


def signed(shape):
    """Values of both signs, at least 0.2 away from 0 and all distinct."""
    v = RNG.uniform(0.2, 2.0, shape) * RNG.choice([-1.0, 1.0], shape)
    return v + np.arange(v.size).reshape(shape) * 1e-3


# -- the seed 001 example

def test_seed_example_script(tmp_path):
    script = textwrap.dedent("""
        from neon.backends import gen_backend, Autodiff
        import numpy as np
        be = gen_backend('cpu')
        x0 = be.array(np.ones((3, 3)) * 1., name='x0')
        x1 = be.array(np.ones((3, 3)) * 2., name='x1')
        print('# example 0')
        f = x0 * x0 + x0 * x1
        ad = Autodiff(op_tree=f, be=be, next_error=None)
        print(ad.get_grad_asnumpyarray([x0, x1]))  # result is [2 * x0 + x1, x0]
        g0, g1 = ad.get_grad_asnumpyarray([x0, x1])
        assert np.array_equal(g0, 2 * x0.get() + x1.get()) and np.array_equal(g1, x0.get())
        f = be.tanh((x0 * x1) + (x0 / x1))
        ad = Autodiff(op_tree=f, be=be, next_error=None)
        assert Autodiff(op_tree=f, be=be, next_error=None) is ad
        [x0_grad_op_tree, x1_grad_op_tree] = ad.get_grad_op_tree([x0, x1])
        print(x0_grad_op_tree.get()[0, 0])
        import neon.backends.autodiff
        assert neon.backends.autodiff.Autodiff is Autodiff
        print('ok')
    """)
    path = tmp_path / "autodiff_example.py"
    path.write_text(script)
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-m", "arrayx.neon", str(path)], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "# example 0" and lines[-1] == "ok"
    t = np.tanh(2.5)
    assert float(lines[-2]) == pytest.approx((1 - t * t) * 2.5, rel=1e-5)


def test_seed_example(be):
    x0 = be.array(np.ones((3, 3)) * 1., name='x0')
    x1 = be.array(np.ones((3, 3)) * 2., name='x1')
    f = x0 * x0 + x0 * x1
    ad = Autodiff(op_tree=f, be=be, next_error=None)
    g0, g1 = ad.get_grad_asnumpyarray([x0, x1])
    np.testing.assert_array_equal(g0, 2 * x0.get() + x1.get())
    np.testing.assert_array_equal(g1, x0.get())
    check(be, f, [x0, x1])


def test_exports():
    import arrayx.neon.backends as backends
    assert backends.Autodiff is autodiff_module.Autodiff is Autodiff


# -- every differentiable op against central finite differences

UNARY = {
    "neg": (lambda be, x: -x, signed),
    "abs": (lambda be, x: abs(x), signed),
    "sqrt": (lambda be, x: be.sqrt(x), pos),
    "sqr": (lambda be, x: be.square(x), signed),
    "exp": (lambda be, x: be.exp(x), signed),
    "log": (lambda be, x: be.log(x), pos),
    "exp2": (lambda be, x: be.exp2(x), signed),
    "log2": (lambda be, x: be.log2(x), pos),
    "sig": (lambda be, x: be.sig(x), signed),
    "sig2": (lambda be, x: be.sig2(x), signed),
    "tanh": (lambda be, x: be.tanh(x), signed),
    "tanh2": (lambda be, x: be.tanh2(x), signed),
    "safelog": (lambda be, x: be.safelog(x), pos),
    # the op-tree transpose op (Tensor.T is a view, tested with the views below)
    "transpose": (lambda be, x: (x * x).T * be.array(np.arange(x.size, dtype=float).reshape(x.shape[::-1])),
                  signed),
    "sum": (lambda be, x: be.sum(x * x), signed),
    "sum_axis0": (lambda be, x: be.sum(x * x, axis=0), signed),
    "sum_axis1": (lambda be, x: be.sum(be.exp(x), axis=1), signed),
    "max": (lambda be, x: be.max(x), signed),
    "max_axis0": (lambda be, x: be.max(x, axis=0), signed),
    "max_axis1": (lambda be, x: be.max(x * x, axis=1), signed),
    "min": (lambda be, x: be.min(x), signed),
    "min_axis0": (lambda be, x: be.min(x, axis=0), signed),
    "min_axis1": (lambda be, x: be.min(x * 3.0, axis=1), signed),
}

BINARY = {
    "add": (lambda be, x, y: x + y, signed, signed),
    "sub": (lambda be, x, y: x - y, signed, signed),
    "mul": (lambda be, x, y: x * y, signed, signed),
    "div": (lambda be, x, y: x / y, signed, signed),
    "pow": (lambda be, x, y: x ** y, pos, signed),
    "maximum": (lambda be, x, y: be.maximum(x, y), signed, signed),
    "minimum": (lambda be, x, y: be.minimum(x, y), signed, signed),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_op_against_finite_differences(be, name):
    fn, gen = UNARY[name]
    x = be.array(gen((3, 4)), name='x')
    check(be, fn(be, x), [x])


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_op_against_finite_differences(be, name):
    fn, gx, gy = BINARY[name]
    x = be.array(gx((3, 4)), name='x')
    y = be.array(gy((3, 4)), name='y')
    check(be, fn(be, x, y), [x, y])


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_op_broadcast_and_scalars(be, name):
    """A (1, 4) row and a (3, 1) column broadcast; the gradient sums over the broadcast axes."""
    fn, gx, gy = BINARY[name]
    x = be.array(gx((3, 1)), name='x')
    y = be.array(gy((1, 4)), name='y')
    check(be, fn(be, x, y), [x, y])
    check(be, fn(be, x, 1.5) + fn(be, 0.75, y), [x, y])


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_op_three_dimensional(be, name):
    if name == "transpose":
        x = be.array(signed((2, 3, 4)), name='x')
        tree = OpTreeNode.build("transpose", x, None) * be.array(signed((4, 3, 2)))
        assert tree.shape == (4, 3, 2)
        check(be, tree, [x])
        return
    fn, gen = UNARY[name]
    x = be.array(gen((2, 3, 4)), name='x')
    check(be, fn(be, x), [x])


def test_dot(be):
    a = be.array(signed((3, 4)), name='a')
    b = be.array(signed((4, 2)), name='b')
    check(be, be.dot(a, b), [a, b])
    check(be, be.tanh(be.dot(a, b)) * 2.0, [a, b])
    c = be.array(signed((3, 2)), name='c')
    check(be, be.dot(a.T, c), [a, c])


def test_compound_tree(be):
    x0 = be.array(pos((3, 3)), name='x0')
    x1 = be.array(signed((3, 3)), name='x1')
    w = be.array(signed((3, 2)), name='w')
    f = be.tanh((x0 * x1) + (x0 / x1))
    check(be, f, [x0, x1])
    g = be.sum(be.sig(be.dot(x0 * x1, w)) ** 2.0, axis=0) * be.min(be.sqrt(x0)) - be.max(x1 * w.T[0:1, :])
    check(be, g, [x0, x1, w])


def test_deep_tree_built_in_a_loop(be):
    """neon's dynamically generated op-tree: y = x + x + ... (n times) + sig(x)."""
    x0 = be.array(np.full((3, 3), 3.0) + signed((3, 3)) * 0.1, name='x0')
    y = be.zeros((3, 3), name='tensor-zero')
    for _ in range(500):
        y = y + x0
    f = y + be.sig(x0)
    ad = Autodiff(f, be)
    g = ad.get_grad_asnumpyarray([x0])[0]
    s = 1.0 / (1.0 + np.exp(-x0.get()))
    np.testing.assert_allclose(g, 500.0 + s * (1.0 - s), rtol=1e-12)


# -- next_error

def test_next_error_is_the_cotangent(be):
    x = be.array(signed((3, 4)), name='x')
    y = be.array(pos((3, 4)), name='y')
    err = be.array(signed((3, 4)), name='err')
    f = be.tanh(x * y) + be.log(y)
    got = check(be, f, [x, y], next_error=err)
    t = np.tanh(x.get() * y.get())
    np.testing.assert_allclose(got[0], err.get() * (1 - t * t) * y.get(), rtol=1e-12)
    # a different next_error is a different Autodiff; None is ones
    assert Autodiff(f, be, next_error=err) is not Autodiff(f, be)
    ones = be.ones((3, 4))
    np.testing.assert_allclose(Autodiff(f, be, ones).get_grad_asnumpyarray([x])[0],
                               Autodiff(f, be).get_grad_asnumpyarray([x])[0], rtol=1e-12)


def test_next_error_of_reduction_and_dot(be):
    a = be.array(signed((3, 4)), name='a')
    b = be.array(signed((4, 2)), name='b')
    check(be, be.dot(a, b), [a, b], next_error=be.array(signed((3, 2))))
    check(be, be.sum(a * a, axis=1), [a], next_error=be.array(signed((3, 1))))
    check(be, be.max(a, axis=0), [a], next_error=be.array(signed((1, 4))))


def test_next_error_read_at_call_time(be):
    x = be.array(signed((2, 3)), name='x')
    err = be.ones((2, 3))
    ad = Autodiff(x * 3.0, be, next_error=err)
    np.testing.assert_allclose(ad.get_grad_asnumpyarray([x])[0], np.full((2, 3), 3.0))
    err[:] = 2.0
    np.testing.assert_allclose(ad.get_grad_asnumpyarray([x])[0], np.full((2, 3), 6.0))


def test_next_error_wrong_shape_raises(be):
    x = be.array(signed((2, 3)), name='x')
    with pytest.raises(ValueError):
        Autodiff(x * x, be, next_error=be.ones((3, 2))).get_grad_asnumpyarray([x])


# -- views sharing a base

def test_views_of_one_base_share_its_gradient(be):
    base = be.array(signed((4, 6)), name='base')
    top, bottom = base[0:2], base[2:4]
    left = base[:, 0:3]
    f = top * bottom + be.sum(be.exp(left[1:3]), axis=1) * 0.5
    # w.r.t. the base: the finite differences of the whole buffer
    (g_base,) = check(be, f, [base])
    # w.r.t. each view: the view of the base's gradient
    g_top, g_bottom, g_left = Autodiff(f, be).get_grad_asnumpyarray([top, bottom, left])
    np.testing.assert_array_equal(g_top, g_base[0:2])
    np.testing.assert_array_equal(g_bottom, g_base[2:4])
    np.testing.assert_array_equal(g_left, g_base[:, 0:3])
    # the analytic gradient: rows 0-1 get bottom, rows 2-3 get top, plus the exp term on rows 1-2
    # cols 0-2 (its row sums are broadcast over the 6 columns)
    b = base.get()
    want = np.concatenate([b[2:4], b[0:2]])
    want[1:3, 0:3] += 6 * 0.5 * np.exp(b[1:3, 0:3])
    np.testing.assert_allclose(g_base, want, rtol=1e-12)


def test_strided_transposed_reshaped_and_taken_views(be):
    base = be.array(signed((4, 6)), name='base')
    strided = base[::2, 1::2]                 # (2, 3)
    flipped = base.T                          # (6, 4) permute view
    reshaped = base.reshape((2, 12))
    taken = base[[3, 0], :]                   # (2, 6) integer-array view
    f = be.sum(strided * strided, axis=0) + be.sum(be.tanh(flipped[0:3, 1:3]).T, axis=0) * 1.0
    check(be, f, [base])
    g_base, g_strided, g_flipped = Autodiff(f, be).get_grad_asnumpyarray([base, strided, flipped])
    np.testing.assert_array_equal(g_strided, g_base[::2, 1::2])
    np.testing.assert_array_equal(g_flipped, g_base.T)
    f2 = be.sig(reshaped) * 2.0
    (g2,) = check(be, f2, [base])
    np.testing.assert_array_equal(Autodiff(f2, be).get_grad_asnumpyarray([reshaped])[0], g2.reshape(2, 12))
    f3 = taken * taken
    (g3,) = check(be, f3, [base])
    np.testing.assert_array_equal(Autodiff(f3, be).get_grad_asnumpyarray([taken])[0], g3[[3, 0], :])


def test_three_dimensional_views(be):
    base = be.array(signed((2, 3, 4)), name='base')
    part = base[:, 1:3, ::2]                  # (2, 2, 2)
    f = be.sum(be.sum(be.exp(part), axis=1), axis=2) * 0.5 + be.sum(be.square(base), axis=1) + be.max(base, axis=0)
    assert f.shape == (2, 3, 4)
    (g,) = check(be, f, [base])
    np.testing.assert_array_equal(Autodiff(f, be).get_grad_asnumpyarray([part])[0], g[:, 1:3, ::2])
    err = be.array(signed((2, 3, 4)))
    check(be, f, [base], next_error=err)


# -- the four ways to get gradients, memoization, unrelated tensors

def test_back_prop_grad_writes_buffers_and_views(be):
    x0 = be.array(pos((3, 3)), name='x0')
    x1 = be.array(signed((3, 3)), name='x1')
    f = x0 * x0 + x0 * x1
    ad = Autodiff(f, be)
    g0, g1 = be.empty((3, 3)), be.zeros((3, 3))
    ad.back_prop_grad([x0, x1], [g0, g1])
    np.testing.assert_allclose(g0.get(), 2 * x0.get() + x1.get(), rtol=1e-12)
    np.testing.assert_allclose(g1.get(), x0.get(), rtol=1e-12)
    # into views of one pre-allocated buffer, and into a float32 buffer (cast)
    big = be.zeros((3, 6))
    ad.back_prop_grad([x0, x1], [big[:, 0:3], big[:, 3:6]])
    np.testing.assert_allclose(big.get(), np.hstack([g0.get(), g1.get()]), rtol=1e-12)
    g32 = be.zeros((3, 3), dtype=np.float32)
    ad.back_prop_grad([x1], [g32])
    assert g32.get().dtype == np.float32
    np.testing.assert_allclose(g32.get(), x0.get(), rtol=1e-6)
    with pytest.raises(ValueError):
        ad.back_prop_grad([x0], [be.zeros((2, 2))])
    with pytest.raises(ValueError):
        ad.back_prop_grad([x0, x1], [g0])


def test_get_grad_op_tree_and_tensor(be):
    x0 = be.array(pos((3, 3)), name='x0')
    x1 = be.array(pos((3, 3)), name='x1')
    ad = Autodiff(be.tanh((x0 * x1) + (x0 / x1)), be)
    trees = ad.get_grad_op_tree([x0, x1])
    tensors = ad.get_grad_tensor([x0, x1])
    arrays = ad.get_grad_asnumpyarray([x0, x1])
    for tree, tensor, array in zip(trees, tensors, arrays):
        assert isinstance(tensor, Tensor) and tensor.shape == (3, 3)
        np.testing.assert_array_equal(tensor.get(), array)
        buf = be.empty((3, 3))
        buf[:] = tree * 2.0                   # the op-tree leaves compose into op-trees
        np.testing.assert_allclose(buf.get(), 2 * array, rtol=1e-12)
    assert tensors[0].name == 'x0_grad'


def test_memoized_per_key_and_backend_and_values_read_at_call_time(be):
    x0 = be.array(pos((2, 2)), name='x0')
    x1 = be.array(pos((2, 2)), name='x1')
    ad = Autodiff(x0 * x1 + 1.0, be)
    assert Autodiff(x0 * x1 + 1.0, be) is ad             # same structure, same tensors
    assert Autodiff(x1 * x0 + 1.0, be) is not ad         # different tensors order
    assert Autodiff(x0 * x1 + 2.0, be) is not ad         # different constant
    assert Autodiff(be.sum(x0, axis=0), be) is not Autodiff(be.sum(x0, axis=1), be)
    other = gen_backend('cpu', datatype=np.float64)
    assert Autodiff(x0 * x1 + 1.0, other) is not ad
    x1[:] = 5.0                                           # the memoized object sees new values
    np.testing.assert_allclose(Autodiff(x0 * x1 + 1.0, be).get_grad_asnumpyarray([x0])[0], np.full((2, 2), 5.0))


def test_cleanup_forgets_the_object_as_neons_tests_use_it(be):
    # neon's test_gradients: build an Autodiff, read the gradients, cleanup(), next case.
    a, b = pos((2, 3)), signed((2, 3))
    x0, x1 = be.array(a, name='x0'), be.array(b, name='x1')
    ad = Autodiff(x0 * x1 + x0, be)
    g0, g1 = ad.get_grad_asnumpyarray([x0, x1])
    np.testing.assert_allclose(g0, b + 1.0, rtol=1e-15)   # d/dx0 = x1 + 1, one rounding
    np.testing.assert_array_equal(g1, a)                  # d/dx1 = x0, exact
    ad.cleanup()
    ad.cleanup()                                          # idempotent
    assert ad.op_tree is None and ad.be is None and ad.next_error is None
    fresh = Autodiff(x0 * x1 + x0, be)
    assert fresh is not ad                                # the memo forgot the cleaned object
    np.testing.assert_allclose(fresh.get_grad_asnumpyarray([x0])[0], b + 1.0, rtol=1e-15)
    for call in (lambda: ad.get_grad_asnumpyarray([x0]), lambda: ad.get_grad_tensor([x0]),
                 lambda: ad.get_grad_op_tree([x0]), lambda: ad.back_prop_grad([x0], [be.empty((2, 3))])):
        with pytest.raises(ValueError, match="^Autodiff: this object was cleaned up"):
            call()


def test_cleanup_releases_the_tensors_the_memo_held(be):
    def differentiate():
        x = be.array(pos((3, 3)), name='x')
        ad = Autodiff(x * x, be)
        ad.get_grad_asnumpyarray([x])
        return weakref.ref(x), ad

    x_ref, ad = differentiate()
    gc.collect()
    assert x_ref() is not None                            # held by the memoized Autodiff
    ad.cleanup()
    del ad
    gc.collect()
    assert x_ref() is None


def test_unrelated_tensor_gets_zeros_and_leaf_tree(be):
    x = be.array(signed((2, 3)), name='x')
    z = be.array(signed((4, 1)), name='z')
    gx, gz = Autodiff(x * 2.0, be).get_grad_asnumpyarray([x, z])
    np.testing.assert_array_equal(gx, np.full((2, 3), 2.0))
    np.testing.assert_array_equal(gz, np.zeros((4, 1)))
    # a tensor as the op-tree: the gradient is next_error
    err = be.array(signed((2, 3)))
    np.testing.assert_array_equal(Autodiff(x, be, err).get_grad_asnumpyarray([x])[0], err.get())


def test_float32_backend(be):
    be32 = gen_backend('cpu', datatype=np.float32)
    x0 = be32.array(np.ones((3, 3)), name='x0')
    x1 = be32.array(np.ones((3, 3)) * 2.0, name='x1')
    g0, g1 = Autodiff(be32.sig(x0 * x1) * 3.0, be32).get_grad_asnumpyarray([x0, x1])
    assert g0.dtype == np.float32
    s = 1 / (1 + np.exp(-2.0))
    np.testing.assert_allclose(g0, np.full((3, 3), 3 * s * (1 - s) * 2), rtol=1e-5)
    with pytest.raises(TypeError):
        Autodiff(x0 * 2.0, be32).get_grad_asnumpyarray([be32.array(np.ones((2, 2)), dtype=np.int32)])
    with pytest.raises(TypeError):
        Autodiff("x", be32)
