"""The Backend methods of arrayx.neon (seed 002) against NumPy: gen_backend,
allocation, element-wise ops and comparisons, reductions (kept dims, default
axes) assigned into slices, products, selection, random numbers, and the
single-device bookkeeping methods."""

import time

import numpy as np
import pytest

import arrayx as xp
from arrayx.neon import NervanaObject, logger
from arrayx.neon.backends import (allocate_backend, backend_choices, cleanup_backend, gen_backend)
from arrayx.neon.backends.backend import Backend, Block, OpTreeNode, Tensor
from arrayx.neon.backends.nervanacpu import CPUTensor, NervanaCPU
from arrayx.neon.backends.nervanagpu import GPUTensor
from arrayx.neon.backends.nervanamkl import NervanaMKL


RNG = np.random.default_rng(7)
A = RNG.uniform(-2, 2, (4, 5)).astype(np.float32)
B = RNG.uniform(0.5, 2, (4, 5)).astype(np.float32)


def run(be, tree, shape=None, dtype=None):
    out = be.empty(shape if shape is not None else tree.shape, dtype=dtype)
    out[:] = tree
    return out.get()


# -- gen_backend

def test_gen_backend_defaults_and_replacement():
    be = gen_backend()
    assert isinstance(be, NervanaCPU) and NervanaObject.be is be
    assert be.default_dtype == np.float32 and be.bsz == 0
    be2 = gen_backend('mkl', rng_seed=3, batch_size=32)
    assert isinstance(be2, NervanaMKL) and NervanaObject.be is be2 and be2.bsz == 32
    assert be2.rng_seed == 3
    cleanup_backend()
    assert NervanaObject.be is None
    cleanup_backend()    # idempotent


def test_backend_choices_and_allocate():
    assert backend_choices() == ['cpu', 'gpu', 'mkl'] == Backend.backend_choices()
    be = allocate_backend('cpu', rng_seed=1)
    assert isinstance(be, NervanaCPU)
    with pytest.raises(ValueError, match="backend must be one of"):
        gen_backend('tpu')


@pytest.mark.skipif(any(d.name.startswith("cuda") for d in xp.__array_namespace_info__().devices()),
                    reason="a CUDA device is present (test_neon_gpu.py runs the GPU backend)")
def test_gpu_backend_says_why_it_is_unavailable():
    with pytest.raises(RuntimeError, match="no GPU device is available: arrayx found no CUDA device"):
        gen_backend('gpu')
    assert NervanaObject.be is None


def test_gen_backend_options():
    be = gen_backend('cpu', datatype=np.float64, compat_mode='caffe', deterministic=True)
    assert be.default_dtype == np.float64 and be.check_caffe_compat()
    with pytest.raises(ValueError, match="not supported"):
        gen_backend('cpu', compat_mode='theano')
    cleanup_backend()


# -- allocation

def test_allocation(be):
    for make, value in ((be.zeros, 0), (be.ones, 1), (be.empty, 0)):
        t = make((2, 3), name='t')
        assert isinstance(t, CPUTensor) and t.shape == (2, 3) and t.name == 't' and t.dtype == np.float32
        np.testing.assert_array_equal(t.get(), np.full((2, 3), value))
    assert be.zeros((2, 2), dtype=np.int32).get().dtype == np.int32
    t = be.array(A, name='a')
    np.testing.assert_array_equal(t.get(), A)
    assert be.array([[1, 2]], dtype=np.uint8).get().dtype == np.uint8
    for like, value in ((be.empty_like, 0), (be.zeros_like, 0), (be.ones_like, 1)):
        u = like(t)
        assert u.shape == (4, 5)
        np.testing.assert_array_equal(u.get(), np.full((4, 5), value))
    assert be.zeros_like(np.zeros((3, 2))).shape == (3, 2)
    copied = be.array(t, dtype=np.float64)            # a tensor: copied and cast
    t[:] = 0
    np.testing.assert_allclose(copied.get(), A)
    assert copied.dtype == np.float64
    assert be.empty_like(t + t).shape == (4, 5)


def test_iobuf(be):
    be.bsz = 8
    buf = be.iobuf(10, name='io')
    assert buf.shape == (10, 8) and buf.name == 'io'
    np.testing.assert_array_equal(buf.get(), 0)
    assert be.iobuf((3, 4)).shape == (3, 32)
    assert be.iobuf((2, 3, 4)).shape == (24, 8)
    assert be.iobuf(5, x=buf) is buf
    shared = be.ones((100, 8))
    view = be.iobuf((4,), shared=shared)
    assert view.shape == (4, 8)
    np.testing.assert_array_equal(view.get(), 0)          # zeroed through the shared memory
    np.testing.assert_array_equal(shared.get()[:4], 0)
    np.testing.assert_array_equal(shared.get()[4:], 1)
    assert be.shared_iobuf_size((4, 8), 'Data') == 32


# -- element-wise

UNARY = [
    ("negative", lambda a: -a, A),
    ("absolute", np.abs, A),
    ("fabs", np.abs, A),
    ("sgn", np.sign, A),
    ("sqrt", np.sqrt, B),
    ("square", np.square, A),
    ("exp", np.exp, A),
    ("exp2", np.exp2, A),
    ("log", np.log, B),
    ("log2", np.log2, B),
    ("safelog", lambda a: np.log(np.maximum(a, np.exp(-50.))), np.maximum(A, 0)),
    ("sig", lambda a: 1 / (1 + np.exp(-a)), A),
    ("sig2", lambda a: 1 / (1 + np.exp2(-a)), A),
    ("tanh", np.tanh, A),
    ("tanh2", lambda a: (np.exp2(2 * a) - 1) / (np.exp2(2 * a) + 1), A),
    ("rint", np.rint, A * 3),
    ("reciprocal", lambda a: 1 / a, B),
    ("finite", lambda a: np.isfinite(a).astype(np.float32), np.array([[1, np.inf, -np.inf, np.nan]], np.float32)),
]


@pytest.mark.parametrize("name,ref,data", UNARY, ids=[u[0] for u in UNARY])
def test_unary(be, name, ref, data):
    a = be.array(data)
    tree = getattr(be, name)(a)
    assert isinstance(tree, OpTreeNode) and tree.shape == data.shape
    with np.errstate(all="ignore"):
        expected = ref(data.astype(np.float64))
    np.testing.assert_allclose(run(be, tree), expected.astype(np.float32), rtol=2e-6, atol=1e-6)
    out = be.empty(data.shape)
    assert getattr(be, name)(a, out=out) is out
    np.testing.assert_allclose(out.get(), expected.astype(np.float32), rtol=2e-6, atol=1e-6)


BINARY = [
    ("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply), ("divide", np.divide),
    ("true_divide", np.divide), ("power", lambda a, b: np.power(np.abs(a), b)),
    ("maximum", np.maximum), ("minimum", np.minimum),
    ("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less), ("less_equal", np.less_equal),
    ("greater", np.greater), ("greater_equal", np.greater_equal),
]


@pytest.mark.parametrize("name,ref", BINARY, ids=[b[0] for b in BINARY])
def test_binary(be, name, ref):
    a_host = np.abs(A) if name == "power" else A
    b_host = np.where(RNG.uniform(size=A.shape) < 0.3, a_host, B)    # some equal elements
    a, b = be.array(a_host), be.array(b_host)
    expected = ref(a_host.astype(np.float64), b_host.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(run(be, getattr(be, name)(a, b)), expected, rtol=2e-6)
    # with a scalar, and broadcasting a row
    row = b_host[:1]
    np.testing.assert_allclose(run(be, getattr(be, name)(a, be.array(row))),
                               ref(a_host.astype(np.float64), row).astype(np.float32), rtol=2e-6)
    np.testing.assert_allclose(run(be, getattr(be, name)(a, 1.5)),
                               ref(a_host.astype(np.float64), 1.5).astype(np.float32), rtol=2e-6)
    out = be.empty(A.shape)
    assert getattr(be, name)(a, b, out=out) is out
    np.testing.assert_allclose(out.get(), expected, rtol=2e-6)


def test_operators_match_backend_functions(be):
    a, b = be.array(A, name='a'), be.array(B, name='b')
    pairs = [(a + b, "add"), (a - b, "sub"), (a * b, "mul"), (a / b, "div"), (a ** 2, "pow"),
             (2 - a, "sub"), (2 / b, "div"), (2 ** a, "pow"), (a == b, "eq"), (a != b, "ne"),
             (a < b, "lt"), (a <= b, "le"), (a > b, "gt"), (a >= b, "ge"), (abs(a), "abs"), (-a, "neg")]
    for tree, op in pairs:
        assert tree[0]["op"] == op
    np.testing.assert_allclose(run(be, 2 - a * b / 4 + abs(-a) ** 2), 2 - A * B / 4 + np.abs(A) ** 2, rtol=1e-5)


def test_clip(be):
    a = be.array(A)
    np.testing.assert_array_equal(run(be, be.clip(a, -0.5, 0.75)), np.clip(A, -0.5, 0.75))
    lo = be.array(np.full((4, 1), -1.0))
    out = be.empty(A.shape)
    be.clip(a, lo, 1.0, out=out)
    np.testing.assert_array_equal(out.get(), np.clip(A, -1.0, 1.0))


def test_shift(be):
    a = be.array(A)
    s = be.array(np.array([[3.0, -0.3, 8.0, 1.0, -5.0]] * 4, np.float32))
    s_host = s.get().astype(np.float64)
    factor = np.sign(s_host) * np.exp2(np.rint(np.log(np.maximum(np.abs(s_host), np.exp(-50.))) / np.log(2)))
    np.testing.assert_allclose(run(be, be.shift(a, s)), A * factor, rtol=1e-6)
    np.testing.assert_allclose(run(be, be.shift(a, 2.0, value=False)), A * 4, rtol=1e-6)
    np.testing.assert_allclose(run(be, be.shift(a, s, value=False)), A * np.exp2(s_host), rtol=1e-6)


def test_binarize(be):
    a = be.array(A)
    np.testing.assert_array_equal(run(be, be.binarize(a, stochastic=False)), np.where(A >= 0, 1, -1))
    be.rng_reset()
    first = run(be, be.binarize(a))
    assert set(np.unique(first)) <= {-1.0, 1.0}
    be.rng_reset()
    np.testing.assert_array_equal(run(be, be.binarize(a)), first)       # seeded: reproducible
    big = be.array(np.full((100, 100), 0.5))                             # P(+1) = 0.75
    assert abs(run(be, be.binarize(big)).mean() - 0.5) < 0.05


# -- reductions

@pytest.mark.parametrize("name,ref", [("sum", np.sum), ("max", np.max), ("min", np.min)])
def test_reductions_keep_dims(be, name, ref):
    a = be.array(A)
    fn = getattr(be, name)
    for axis in (0, 1, None):
        tree = fn(a, axis=axis)
        expected = ref(A, axis=axis, keepdims=True)
        assert tree.shape == expected.shape
        np.testing.assert_allclose(run(be, tree), expected, rtol=1e-6)
    np.testing.assert_allclose(run(be, fn(a)), ref(A, keepdims=True), rtol=1e-6)      # default: all axes


@pytest.mark.parametrize("name,ref", [("argmax", np.argmax), ("argmin", np.argmin)])
def test_arg_reductions(be, name, ref):
    data = np.array([[1, 5, 5, 0], [7, 2, 7, -1], [3, 3, 3, 3]], np.float32)   # ties: the first
    a = be.array(data)
    fn = getattr(be, name)
    np.testing.assert_array_equal(run(be, fn(a)), ref(data, axis=1)[:, None])    # default axis=1
    np.testing.assert_array_equal(run(be, fn(a, axis=0)), ref(data, axis=0)[None, :])
    np.testing.assert_array_equal(run(be, fn(a, axis=0), dtype=np.int32), ref(data, axis=0)[None, :])
    np.testing.assert_array_equal(run(be, fn(a, axis=None)), [[ref(data)]])


@pytest.mark.parametrize("name,ref", [("mean", np.mean), ("var", np.var), ("std", np.std)])
def test_statistics(be, name, ref):
    a = be.array(A)
    fn = getattr(be, name)
    np.testing.assert_allclose(run(be, fn(a)), ref(A.astype(np.float64), keepdims=True), rtol=1e-5)  # axis=None
    for axis in (0, 1):
        np.testing.assert_allclose(run(be, fn(a, axis=axis)), ref(A.astype(np.float64), axis=axis, keepdims=True),
                                   rtol=1e-5)
    out = be.empty((1, 5))
    assert fn(a, axis=0, out=out) is out
    np.testing.assert_allclose(out.get(), ref(A.astype(np.float64), axis=0, keepdims=True), rtol=1e-5)


def test_var_binary(be):
    a = be.array(A)
    d = A.astype(np.float64) - A.mean()
    np.testing.assert_allclose(run(be, be.var(a, binary=True)), [[np.mean(d * np.sign(d) * np.exp2(
        np.rint(np.log2(np.abs(d)))))]], rtol=1e-5)


def test_reductions_into_rows_and_columns_of_a_larger_tensor(be):
    a = be.array(A)
    big = be.zeros((6, 8))
    expected = np.zeros((6, 8), np.float32)
    be.sum(a, axis=1, out=big[1:5, 2])                       # (4, 1) column slice
    expected[1:5, 2] = A.sum(axis=1)
    big[0, 1:6] = be.max(a, axis=0)                          # (1, 5) row slice
    expected[0, 1:6] = A.max(axis=0)
    big[5:6, 0:5] = be.mean(a, axis=0)
    expected[5, 0:5] = A.mean(axis=0)
    be.argmax(a, out=big[1:5, 7])                            # default axis=1 into a column
    expected[1:5, 7] = A.argmax(axis=1)
    big[2:3, 6:7] = be.min(a)                                # all axes into one element
    expected[2, 6] = A.min()
    np.testing.assert_allclose(big.get(), expected, rtol=1e-6)


# -- products

def test_dot(be):
    a = be.array(A)
    b = be.array(B)
    np.testing.assert_allclose(run(be, be.dot(a, b.T)), A @ B.T, rtol=1e-5)
    np.testing.assert_allclose(run(be, be.dot(a.T, b)), A.T @ B, rtol=1e-5)
    out = be.empty((4, 4))
    assert be.dot(a, b.T, out=out) is out
    with pytest.raises(ValueError, match="not aligned"):
        be.dot(a, b)


@pytest.mark.parametrize("alpha,beta,relu", [(1.0, 0.0, False), (2.0, 0.0, True), (0.5, 1.5, False),
                                             (-1.0, 0.5, True)])
def test_compound_dot(be, alpha, beta, relu):
    c0 = RNG.uniform(-1, 1, (4, 4)).astype(np.float32)
    a, b = be.array(A), be.array(B)
    c = be.array(c0)
    assert be.compound_dot(a, b.T, c, alpha=alpha, beta=beta, relu=relu) is c
    prod = alpha * (A.astype(np.float64) @ B.T)
    if relu:
        prod = np.maximum(prod, 0)
    np.testing.assert_allclose(c.get(), prod + beta * c0, rtol=1e-5, atol=1e-6)
    # transposed A, C a slice of a larger tensor, row sums into bsum
    big = be.zeros((7, 7))
    bsum = be.zeros((5, 1))
    be.compound_dot(a.T, b, big[1:6, 2:7], alpha=alpha, relu=relu, bsum=bsum)
    prod = alpha * (A.T.astype(np.float64) @ B)
    if relu:
        prod = np.maximum(prod, 0)
    expected = np.zeros((7, 7))
    expected[1:6, 2:7] = prod
    np.testing.assert_allclose(big.get(), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bsum.get(), prod.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)


def test_compound_dot_checks(be):
    a, b = be.array(A), be.array(B)
    with pytest.raises(ValueError, match="shapes"):
        be.compound_dot(a, b, be.zeros((4, 5)))
    with pytest.raises(TypeError, match="dtypes"):
        be.compound_dot(a, b.T, be.zeros((4, 4), dtype=np.float64))


def test_batched_dot(be):
    W = RNG.uniform(-1, 1, (3, 4)).astype(np.float32)           # (K, C)
    X = RNG.uniform(-1, 1, (2, 4, 5)).astype(np.float32)        # (X, C, N)
    E = RNG.uniform(-1, 1, (2, 3, 5)).astype(np.float32)        # (X, K, N)
    w, x, e = be.array(W), be.array(X), be.array(E)
    out = be.zeros((2, 3, 5))                                    # fprop
    be.batched_dot(w, x, out)
    np.testing.assert_allclose(out.get(), np.einsum('kc,xcn->xkn', W, X), rtol=1e-5, atol=1e-6)
    back = be.ones((2, 4, 5))                                    # bprop, with beta and relu
    be.batched_dot(w.T, e, back, alpha=2.0, beta=0.5, relu=True)
    np.testing.assert_allclose(back.get(), np.maximum(2 * np.einsum('ck,xkn->xcn', W.T, E), 0) + 0.5,
                               rtol=1e-5, atol=1e-6)
    upd = be.zeros((3, 4))                                       # update: summed over the batch
    be.batched_dot(e, x.T, upd)
    np.testing.assert_allclose(upd.get(), np.einsum('xkn,xcn->kc', E, X), rtol=1e-5, atol=1e-6)


def test_xnor_compound_dot_and_copy_transpose(be):
    a, b = be.array(A), be.array(B)
    c = be.zeros((4, 4))
    be.xnor_compound_dot(a, b.T, c)
    np.testing.assert_allclose(c.get(), A @ B.T, rtol=1e-5)
    out = be.zeros((5, 4))
    be.copy_transpose(a, out)
    np.testing.assert_array_equal(out.get(), A.T)
    t3 = be.array(np.arange(24.0).reshape(2, 3, 4))
    o3 = be.zeros((4, 2, 3))
    be.copy_transpose(t3, o3, axes=(2, 0, 1))
    np.testing.assert_array_equal(o3.get(), np.arange(24.0).reshape(2, 3, 4).transpose(2, 0, 1))


# -- selection

def test_take(be):
    a = be.array(A)
    idx = be.array([3, 0, 3], dtype=np.int32)
    np.testing.assert_array_equal(be.take(a, idx, 0).get(), A[[3, 0, 3]])
    out = be.zeros((4, 2))
    assert be.take(a, np.array([4, 1]), 1, out=out) is out
    np.testing.assert_array_equal(out.get(), A[:, [4, 1]])


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_onehot_both_axes(be, dtype):
    labels = np.array([2, 0, 4, 1, 2, 3], dtype)
    idx = be.array(labels, dtype=dtype)                          # shape (6, 1)
    by_column = be.zeros((5, 6))                                 # axis=0: one column per label
    by_column[:] = be.onehot(idx, axis=0)
    np.testing.assert_array_equal(by_column.get(), np.eye(5, dtype=np.float32)[labels].T)
    by_row = be.zeros((6, 5))                                    # axis=1: one row per label
    be.onehot(idx, axis=1, out=by_row)
    np.testing.assert_array_equal(by_row.get(), np.eye(5, dtype=np.float32)[labels])
    row_idx = be.array(labels.reshape(1, 6), dtype=dtype)        # a row of indices works as well
    masked = be.zeros((6, 5))
    masked[:] = be.onehot(row_idx, axis=1) * 3 - 1               # inside a larger op-tree
    np.testing.assert_array_equal(masked.get(), np.eye(5, dtype=np.float32)[labels] * 3 - 1)


def test_onehot_checks(be):
    with pytest.raises(ValueError, match="bad axis"):
        be.onehot(be.zeros((3, 1), dtype=np.int32), axis=2)
    with pytest.raises(TypeError, match="int32 or uint32"):
        be.onehot(be.zeros((3, 1)), axis=0)


# -- random numbers

def test_rng_state(be):
    first = be.rng.uniform(size=3)
    state = be.rng_get_state()
    second = be.rng.uniform(size=3)
    be.rng_set_state(state)
    np.testing.assert_array_equal(be.rng.uniform(size=3), second)
    be.rng_reset()
    np.testing.assert_array_equal(be.rng.uniform(size=3), first)
    rng = be.gen_rng(5)
    assert rng is be.rng
    np.testing.assert_array_equal(rng.uniform(size=2), np.random.default_rng(5).uniform(size=2))
    # the RandomState names legacy code calls
    assert be.rng.randint(3, size=5).max() < 3 and be.rng.randint(2, 4, size=(2, 2)).shape == (2, 2)
    assert be.rng.random_sample((2, 3)).shape == (2, 3) and be.rng.rand(4, 2).shape == (4, 2)
    assert be.rng.randn(3).shape == (3,) and np.ndim(be.rng.rand()) == 0
    same = gen_backend('cpu', rng_seed=0)
    np.testing.assert_array_equal(same.rng.uniform(size=3), first)   # rng_seed seeds it


def test_make_binary_mask_and_fill_normal(be):
    mask = be.zeros((200, 100))
    assert be.make_binary_mask(mask, keepthresh=0.8) is mask
    values = mask.get()
    assert set(np.unique(values)) <= {0.0, 1.0} and abs(values.mean() - 0.8) < 0.02
    be.rng_reset()
    again = be.zeros((200, 100))
    be.make_binary_mask(again, keepthresh=0.8)
    np.testing.assert_array_equal(again.get(), values)
    normal = be.zeros((300, 100))
    be.fill_normal(normal, mean=2.0, stdv=0.5)
    assert abs(normal.get().mean() - 2.0) < 0.01 and abs(normal.get().std() - 0.5) < 0.01
    col = be.zeros((4, 3))
    be.fill_normal(col[:, 1])                                          # into a view
    assert np.all(col.get()[:, [0, 2]] == 0) and np.all(col.get()[:, 1] != 0)


def test_rand_op(be):
    out = be.zeros((50, 40))
    out[:] = OpTreeNode.build("rand", None, None) * 2
    values = out.get()
    assert values.min() >= 0 and values.max() < 2 and abs(values.mean() - 1) < 0.05


# -- bookkeeping

def test_execute_begin_end_and_blocks(be):
    a = be.array(A)
    out = be.empty((4, 5))
    be.begin(Block.epoch, 0)
    be.begin(Block.minibatch, 0)
    assert be.execute(OpTreeNode({"op": "assign"}, out, a * 2)) is out
    be.end(Block.minibatch, 0)
    be.end(Block.epoch, 0)
    np.testing.assert_allclose(out.get(), A * 2)
    assert (Block.epoch, Block.minibatch, Block.fprop, Block.bprop, Block.update) == (0, 1, 2, 3, 4)
    with pytest.raises(ValueError, match="assign"):
        OpTreeNode.build("add", a, a).execute()


def test_timing_marks_measure_milliseconds_between_records(be):
    # Oracle: time.perf_counter read around the marks; time.sleep waits at least its argument.
    start, end = be.init_mark(), be.init_mark()
    before = time.perf_counter()
    be.record_mark(start)
    out = be.empty((4, 5))
    out[:] = be.array(A) * 2.0                    # an assignment runs before the next mark
    time.sleep(0.02)
    be.record_mark(end)
    assert be.synchronize_mark(end) is None
    after = time.perf_counter()
    elapsed = be.get_time(start, end)
    assert 20.0 <= elapsed <= (after - before) * 1000.0
    np.testing.assert_array_equal(out.get(), A * 2.0)


def test_output_dim(be):
    assert be.output_dim(32, 3, 1, 1) == 32
    assert be.output_dim(32, 3, 0, 2) == 15
    assert be.output_dim(32, 3, 2, 1, dilation=2) == 32
    assert be.output_dim(7, 2, 0, 2, pooling=True) == 3
    be.set_caffe_compat()
    assert be.output_dim(7, 2, 0, 2, pooling=True) == 4          # caffe rounds up
    assert be.output_dim(6, 3, 1, 2, pooling=True) == 4
    assert be.output_dim(5, 2, 1, 2, pooling=True) == 3          # last window all padding: dropped
    with pytest.raises(ValueError, match="Padding"):
        be.output_dim(6, 2, 2, 1, pooling=True)


def test_single_device_methods(be):
    t = be.zeros((3, 4))
    assert be.distribute_data(t, 'Data') is None
    assert be.revert_tensor(t) is None
    assert be.shared_iobuf_size((3, 4), 'Model') == 12
    assert be.shared_iobuf_size((3, 4), None) == 12
    assert be.allocate_new_deltas(t, (3, 4), 'Data') is t
    assert be.convert_data(t, True) is None and be.clean_data(t, True) is None
    assert not be.is_mkl()
    be.cleanup_backend()


def test_fc_bias(be):
    inputs = be.array(A)
    bias = be.array(np.arange(4.0).reshape(4, 1))
    be.add_fc_bias(inputs, bias)
    np.testing.assert_allclose(inputs.get(), A + np.arange(4.0).reshape(4, 1), rtol=1e-6)
    grad = be.zeros((4, 1))
    be.update_fc_bias(be.array(A), grad)
    np.testing.assert_allclose(grad.get(), A.sum(axis=1, keepdims=True), rtol=1e-5)


def test_integer_tensors(be):
    data = np.array([[1, -2, 3], [4, 5, -6]], np.int32)
    a = be.array(data, dtype=np.int32)
    out = be.zeros((2, 3), dtype=np.int32)
    out[:] = a * 2 + be.absolute(a) - 1
    np.testing.assert_array_equal(out.get(), data * 2 + np.abs(data) - 1)
    s = be.zeros((1, 3), dtype=np.int32)
    be.sum(a, axis=0, out=s)
    np.testing.assert_array_equal(s.get(), data.sum(axis=0, keepdims=True))
    f = be.zeros((2, 3))
    f[:] = a / 4
    np.testing.assert_allclose(f.get(), data / 4)


def test_tensor_classes(be):
    assert be.tensor_cls is CPUTensor and issubclass(CPUTensor, Tensor)
    assert issubclass(GPUTensor, Tensor)


def test_nervana_object_and_logger(be, caplog):
    class Layer(NervanaObject):
        pass
    layer = Layer()
    assert layer.name.startswith('Layer_') and layer.classnm == 'Layer'
    assert layer.modulenm.endswith('.Layer')
    assert Layer(name='fc').name == 'fc'
    assert layer.be is be
    with caplog.at_level(41):
        logger.display("shown at the DISPLAY level")
    assert "shown at the DISPLAY level" in caplog.text
