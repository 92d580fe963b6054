"""The layer-kernel methods of the neon Backend (seed 002: conv_layer,
fprop_conv, bprop_conv, update_conv, deconv_layer, pool_layer, fprop_pool,
bprop_pool, compound_rnn_unroll_fprop/bprop, compound_bprop_lut) run through
gen_backend('cpu') on neon Tensors, as neon's layers call them: 2-D views
(dimI2/dimF2/dimO2), outputs that are views of larger buffers, alpha/beta
accumulation into the output's previous values, and RNN step lists that are
views of one buffer built the way neon's recurrent layers build them.

The NumPy references are those of tests/test_neon_layers.py (naive loops in
float64), and neon's own in-place RNN unrolling run on NumPy views.

Tolerances: FLOAT32 (from test_neon_layers) for float32 results against
float64 references: each element is a sum of a few hundred products of values
in [-1, 1], so float32 rounding stays far below 1e-4 absolute. float64 results
(RNN) are held to FLOAT64 = 1e-10. Pooling picks or averages elements: 1e-6.
"""

import ast
import inspect

import numpy as np
import pytest

from arrayx.neon import NervanaObject
from test_neon_layers import (FLOAT32, FLOAT64, neon_bprop_numpy, neon_fprop_numpy, ref_bprop_conv,
                              ref_bprop_pool, ref_fprop_conv, ref_fprop_pool, ref_update_conv)

POOL_TOL = dict(rtol=1e-6, atol=1e-6)   # max is exact; avg is one division away


def _rand(rng, shape, dtype=np.float32):
    return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)


def _steps(buf, n_steps, shape):
    """neon's get_steps: a (features, n_steps * N) buffer as per-step (features, N) views."""
    xs = buf.reshape(shape + (-1,))
    return [xs[:, t, :] for t in range(n_steps)]


# ------------------------------------------------------------ signatures

# seed 002's parameters (name, default) of every method added here
SEED = {
    "conv_layer": "dtype N C K D=1 H=1 W=1 T=1 R=1 S=1 pad_d=0 pad_h=0 pad_w=0 str_d=1 str_h=1 str_w=1 "
                  "relu=False bsum=False",
    "deconv_layer": "dtype N C K P Q R=1 S=1 pad_d=0 pad_h=0 pad_w=0 str_d=1 str_h=1 str_w=1",
    "pool_layer": "dtype op N C D=1 H=1 W=1 J=1 T=1 R=1 S=1 pad_j=0 pad_d=0 pad_h=0 pad_w=0 "
                  "str_j=None str_d=None str_h=None str_w=None",
    "fprop_conv": "layer I F O alpha=1.0 relu=False repeat=1",
    "bprop_conv": "layer F E grad_I alpha=1.0 repeat=1",
    "update_conv": "layer I E grad_F alpha=1.0 repeat=1",
    "fprop_pool": "layer I O",
    "bprop_pool": "layer I E grad_I",
    "compound_bprop_lut": "nin inputs error error_t dW pad_idx alpha=1.0 beta=0",
    "compound_rnn_unroll_fprop": "W_recur h_prev_s h_ff_s h_s bias nout num_steps num_used_steps "
                                 "activation reverse=False",
    "compound_rnn_unroll_bprop": "W_recur delta_prev_s delta_s h_s nout num_steps num_used_steps "
                                 "activation reverse=True",
}


@pytest.mark.parametrize("name", sorted(SEED))
def test_methods_accept_the_seed_parameters(be, name):
    """The seed's parameters come first, in the seed's positional order, with
    the seed's defaults (neon 2.x's extras follow them)."""
    params = list(inspect.signature(getattr(be, name)).parameters.values())
    items = SEED[name].split()
    for param, item in zip(params, items):
        pname, _, default = item.partition("=")
        assert param.name == pname, (name, pname)
        assert param.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD, (name, pname)
        if default:
            assert param.default == ast.literal_eval(default), (name, pname)


# ------------------------------------------------------------ convolution

CONV = [
    dict(N=2, C=3, K=4, H=6, W=5, R=3, S=3, pad_h=1, pad_w=2, str_h=2, str_w=1),
    dict(N=3, C=2, K=3, D=4, H=3, W=5, T=2, R=2, S=3, pad_d=1, str_d=2, dil_w=2),
    dict(N=2, C=4, K=2, H=3, W=3),                                  # 1x1: neon's "dot" case
]


@pytest.mark.parametrize("case", CONV)
def test_conv_fprop_bprop_update_on_2d_views(be, case):
    rng = np.random.default_rng(1)
    layer = be.conv_layer(np.float32, **case)
    I, F, E = _rand(rng, layer.dimI), _rand(rng, layer.dimF), _rand(rng, layer.dimO)
    tI, tF, tE = be.array(I.reshape(layer.dimI2)), be.array(F.reshape(layer.dimF2)), be.array(E.reshape(layer.dimO2))
    O, G, U = be.empty(layer.dimO2), be.empty(layer.dimI2), be.empty(layer.dimF2)
    assert be.fprop_conv(layer, tI, tF, O) is None           # neon returns nothing: O is written
    be.bprop_conv(layer, tF, tE, G)
    be.update_conv(layer, tI, tE, U)
    np.testing.assert_allclose(O.get(), ref_fprop_conv(layer, I, F).reshape(layer.dimO2), **FLOAT32)
    np.testing.assert_allclose(G.get(), ref_bprop_conv(layer, F, E).reshape(layer.dimI2), **FLOAT32)
    np.testing.assert_allclose(U.get(), ref_update_conv(layer, I, E).reshape(layer.dimF2), **FLOAT32)


def test_conv_outputs_are_views_and_keep_their_dtype(be):
    """O is a slice of a larger float64 buffer: only the slice changes, in
    float64 (the out tensor's dtype)."""
    rng = np.random.default_rng(2)
    layer = be.conv_layer(np.float32, 2, 2, 3, H=4, W=4, R=3, S=3, pad_h=1, pad_w=1)
    I, F = _rand(rng, layer.dimI), _rand(rng, layer.dimF)
    big = be.ones((layer.dimO2[0] + 3, layer.N), dtype=np.float64)
    be.fprop_conv(layer, be.array(I.reshape(layer.dimI2)), be.array(F.reshape(layer.dimF2)), big[2:-1])
    got = big.get()
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got[:2], 1.0)
    np.testing.assert_array_equal(got[-1:], 1.0)
    np.testing.assert_allclose(got[2:-1], ref_fprop_conv(layer, I, F).reshape(layer.dimO2), **FLOAT32)


def test_conv_alpha_beta_accumulate_previous_values(be):
    rng = np.random.default_rng(3)
    layer = be.conv_layer(np.float32, 3, 2, 4, H=5, W=5, R=2, S=3, pad_w=1, str_h=2)
    I, F, E = _rand(rng, layer.dimI), _rand(rng, layer.dimF), _rand(rng, layer.dimO)
    O0, G0, U0, X = _rand(rng, layer.dimO2), _rand(rng, layer.dimI2), _rand(rng, layer.dimF2), _rand(rng, layer.dimO2)
    tI, tF, tE = be.array(I.reshape(layer.dimI2)), be.array(F.reshape(layer.dimF2)), be.array(E.reshape(layer.dimO2))
    O = be.array(O0)
    be.fprop_conv(layer, tI, tF, O, alpha=2.0, beta=0.5)
    np.testing.assert_allclose(O.get(), 2.0 * ref_fprop_conv(layer, I, F).reshape(layer.dimO2) + 0.5 * O0, **FLOAT32)
    be.fprop_conv(layer, tI, tF, O, X=be.array(X), beta=-1.0)
    np.testing.assert_allclose(O.get(), ref_fprop_conv(layer, I, F).reshape(layer.dimO2) - X, **FLOAT32)
    G = be.array(G0)
    be.bprop_conv(layer, tF, tE, G, alpha=3.0, beta=1.0)        # neon's layers accumulate deltas so
    np.testing.assert_allclose(G.get(), 3.0 * ref_bprop_conv(layer, F, E).reshape(layer.dimI2) + G0, **FLOAT32)
    U = be.array(U0)
    be.update_conv(layer, tI, tE, U, 0.5, 1, beta=-1.0)         # the seed's alpha, repeat
    np.testing.assert_allclose(U.get(), 0.5 * ref_update_conv(layer, I, E).reshape(layer.dimF2) - U0, **FLOAT32)
    # the seed's positional (alpha, relu, repeat) and (alpha, repeat)
    be.fprop_conv(layer, tI, tF, O, -2.0, True, 1)
    np.testing.assert_allclose(O.get(), np.maximum(-2.0 * ref_fprop_conv(layer, I, F).reshape(layer.dimO2), 0),
                               **FLOAT32)
    be.bprop_conv(layer, tF, tE, G, 0.5, 1)
    np.testing.assert_allclose(G.get(), 0.5 * ref_bprop_conv(layer, F, E).reshape(layer.dimI2), **FLOAT32)
    U = be.array(U0)
    gb = be.empty((layer.K, 1))
    be.update_conv(layer, tI, tE, U=U, beta=1.0, grad_bias=gb)   # neon 2.x CPU's name
    np.testing.assert_allclose(U.get(), ref_update_conv(layer, I, E).reshape(layer.dimF2) + U0, **FLOAT32)
    np.testing.assert_allclose(gb.get(), E.reshape(layer.K, -1).sum(axis=1, keepdims=True), **FLOAT32)


def test_fprop_conv_bias_relu_brelu_bsum(be):
    rng = np.random.default_rng(4)
    layer = be.conv_layer(np.float32, 2, 3, 4, H=5, W=4, R=3, S=2, pad_h=1)
    I, F, X = _rand(rng, layer.dimI), _rand(rng, layer.dimF), _rand(rng, layer.dimO)
    bias = _rand(rng, (layer.K, 1))
    tI, tF, tb = be.array(I.reshape(layer.dimI2)), be.array(F.reshape(layer.dimF2)), be.array(bias)
    pre = ref_fprop_conv(layer, I, F) + bias.reshape(-1, 1, 1, 1, 1)
    O, bsum = be.empty(layer.dimO2), be.empty((layer.K, 1))
    be.fprop_conv(layer, tI, tF, O, bias=tb, relu=True, slope=0.1, bsum=bsum)
    want = np.maximum(pre, 0) + 0.1 * np.minimum(pre, 0)
    np.testing.assert_allclose(O.get(), want.reshape(layer.dimO2), **FLOAT32)
    np.testing.assert_allclose(bsum.get(), want.reshape(layer.K, -1).sum(axis=1, keepdims=True), **FLOAT32)
    be.fprop_conv(layer, tI, tF, O, X=be.array(X.reshape(layer.dimO2)), brelu=True, slope=0.25)
    want = ref_fprop_conv(layer, I, F) * ((X > 0) + 0.25 * (X < 0))
    np.testing.assert_allclose(O.get(), want.reshape(layer.dimO2), **FLOAT32)
    # bprop_conv compounds the same way, with one bias per input map (C, 1)
    E, cb = _rand(rng, layer.dimO), _rand(rng, (layer.C, 1))
    G, gsum = be.empty(layer.dimI2), be.empty((layer.C, 1))
    be.bprop_conv(layer, tF, be.array(E.reshape(layer.dimO2)), G, bias=be.array(cb), relu=True, bsum=gsum)
    want = np.maximum(ref_bprop_conv(layer, F, E) + cb.reshape(-1, 1, 1, 1, 1), 0)
    np.testing.assert_allclose(G.get(), want.reshape(layer.dimI2), **FLOAT32)
    np.testing.assert_allclose(gsum.get(), want.reshape(layer.C, -1).sum(axis=1, keepdims=True), **FLOAT32)


def test_deconv_runs_on_the_conv_methods(be):
    """neon's Deconvolution layer: fprop is bprop_conv, bprop is fprop_conv,
    update is update_conv(layer, error, inputs, dW), all with the DeconvLayer."""
    rng = np.random.default_rng(5)
    d = be.deconv_layer(np.float32, 2, 3, 2, 3, 4, 3, 2, pad_h=1, str_h=2, str_w=3)   # N C K P Q R S
    assert d.dimO == (2, 1, 3, 4, 2) and d.dimI == (3, 1, 5, 11, 2)
    X, F, E = _rand(rng, d.dimO), _rand(rng, d.dimF), _rand(rng, d.dimI)
    tX, tF, tE = be.array(X.reshape(d.dimO2)), be.array(F.reshape(d.dimF2)), be.array(E.reshape(d.dimI2))
    Y, G, U = be.empty(d.dimI2), be.empty(d.dimO2), be.empty(d.dimF2)
    be.bprop_conv(layer=d, F=tF, E=tX, grad_I=Y)
    be.fprop_conv(d, tE, tF, G, alpha=1.0, beta=0.0)
    be.update_conv(d, tE, tX, U)
    np.testing.assert_allclose(Y.get(), ref_bprop_conv(d, F, X).reshape(d.dimI2), **FLOAT32)
    np.testing.assert_allclose(G.get(), ref_fprop_conv(d, E, F).reshape(d.dimO2), **FLOAT32)
    np.testing.assert_allclose(U.get(), ref_update_conv(d, E, X).reshape(d.dimF2), **FLOAT32)
    d3 = be.deconv_layer(np.float32, 1, 2, 2, 2, 2, R=2, S=2, M=3, T=2, str_d=2)    # neon 2.x's M, T
    assert d3.dimO == (2, 3, 2, 2, 1) and d3.DHW == (6, 3, 3)


# ------------------------------------------------------------ pooling

POOL = [
    dict(N=2, C=3, H=5, W=6, R=3, S=2, pad_h=1, pad_w=1, str_h=2, str_w=1),   # padded, overlapping
    dict(N=3, C=4, H=4, W=4, R=2, S=2),                                        # default strides
    dict(N=2, C=5, H=3, W=3, J=2, R=3, S=3, pad_c=1, str_c=2, str_h=1, str_w=1, pad_h=1, pad_w=1),
]


@pytest.mark.parametrize("op", ["max", "avg"])
@pytest.mark.parametrize("case", POOL)
def test_pool_neon2_order_with_argmax_and_accumulation(be, op, case):
    """neon's Pooling layer: fprop_pool(layer, I, O, argmax, beta=...) then
    bprop_pool(layer, E, grad_I, argmax, alpha, beta) on 2-D views."""
    rng = np.random.default_rng(6)
    layer = be.pool_layer(np.float32, op, **case)
    I, E = _rand(rng, layer.dimI), _rand(rng, layer.dimO)
    O0, G0 = _rand(rng, layer.dimO2), _rand(rng, layer.dimI2)
    O = be.array(O0)
    argmax = be.empty(layer.dimO2, dtype=np.uint8) if op == "max" else None
    be.fprop_pool(layer, be.array(I.reshape(layer.dimI2)), O, argmax, beta=0.5)
    np.testing.assert_allclose(O.get(), ref_fprop_pool(layer, I).reshape(layer.dimO2) + 0.5 * O0, **POOL_TOL)
    G = be.array(G0)
    be.bprop_pool(layer, be.array(E.reshape(layer.dimO2)), G, argmax, 2.0, 1.0)
    np.testing.assert_allclose(G.get(), 2.0 * ref_bprop_pool(layer, I, E).reshape(layer.dimI2) + G0, **POOL_TOL)
    assert O.dtype == G.dtype == np.float32


@pytest.mark.parametrize("op", ["max", "avg"])
def test_pool_seed_order(be, op):
    """seed 002's bprop_pool(layer, I, E, grad_I), I the fprop input, positional or by keyword."""
    rng = np.random.default_rng(7)
    layer = be.pool_layer(np.float32, op, 2, 3, H=5, W=5, R=3, S=3, pad_h=1, pad_w=1, str_h=2, str_w=2)
    I, E = _rand(rng, layer.dimI), _rand(rng, layer.dimO)
    tI, tE = be.array(I.reshape(layer.dimI2)), be.array(E.reshape(layer.dimO2))
    O = be.empty(layer.dimO2)
    be.fprop_pool(layer, tI, O)
    np.testing.assert_allclose(O.get(), ref_fprop_pool(layer, I).reshape(layer.dimO2), **POOL_TOL)
    want = ref_bprop_pool(layer, I, E).reshape(layer.dimI2)
    G = be.empty(layer.dimI2)
    be.bprop_pool(layer, tI, tE, G)
    np.testing.assert_allclose(G.get(), want, **POOL_TOL)
    G = be.empty(layer.dimI2)
    be.bprop_pool(layer, I=tI, E=tE, grad_I=G)
    np.testing.assert_allclose(G.get(), want, **POOL_TOL)


def test_max_pool_argmax_values(be):
    """argmax holds each window's first maximum as an offset into the window
    (C order over J, T, R, S); ties go to the first."""
    layer = be.pool_layer(np.float32, "max", 1, 1, H=4, W=4, R=2, S=2)
    I = np.zeros((4, 4), np.float32)
    I[0, 1], I[1, 2], I[3, 3] = 1, 1, 1          # offsets 1 and 2 win; the third window ties at 0
    argmax = be.empty(layer.dimO2, dtype=np.int8)
    be.fprop_pool(layer, be.array(I.reshape(layer.dimI2)), be.empty(layer.dimO2), argmax)
    np.testing.assert_array_equal(argmax.get().ravel(), [1, 2, 0, 3])


def test_pool_l2_and_caffe_mode(be):
    rng = np.random.default_rng(8)
    layer = be.pool_layer(np.float32, "l2", 2, 2, H=5, W=4, R=2, S=2, pad_h=1, str_h=2, str_w=1)
    I = _rand(rng, layer.dimI)
    O = be.empty(layer.dimO2)
    be.fprop_pool(layer, be.array(I.reshape(layer.dimI2)), O)
    np.testing.assert_allclose(O.get(), ref_fprop_pool(layer, I).reshape(layer.dimO2), rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError, match="l2"):
        be.bprop_pool(layer, be.array(_rand(rng, layer.dimO2)), be.empty(layer.dimI2))
    be.set_caffe_compat()            # pool_layer takes the backend's caffe mode: ceil rule
    layer = be.pool_layer(np.float32, "max", 2, 1, H=6, W=5, R=3, S=2, str_h=2, str_w=2)
    assert layer.MPQ == (1, 3, 3)


# ------------------------------------------------------------ recurrent unrolling

class Tanh:
    """neon.transforms.Tanh: call and bprop build op-trees with the backend."""

    def __call__(self, x):
        return NervanaObject.be.tanh(x)

    def bprop(self, x):
        return 1.0 - NervanaObject.be.square(x)


class Rectlin:
    """neon.transforms.Rectlin."""

    def __call__(self, x):
        return NervanaObject.be.maximum(x, 0)

    def bprop(self, x):
        return NervanaObject.be.greater(x, 0)


class Identity:
    """neon.transforms.Identity: bprop is the number 1, not an op-tree."""

    def __call__(self, x):
        return x

    def bprop(self, x):
        return 1


ACTS = {"tanh": Tanh(), "rectlin": Rectlin(), "identity": Identity(), "logistic": "logistic"}


def _rnn_views(buf, layout, nout, T, N):
    """(h_s, h_prev_s, reverse) as neon's layers build them over one buffer
    (a Tensor or a NumPy array of the same layout)."""
    if layout == "recurrent":                      # Recurrent: h_prev wraps to the last step (same objects)
        h = _steps(buf, T, (nout, T))
        return h, h[-1:] + h[:-1], False
    # BiRNN: one (2*nout, (T+2)*N) buffer with a padding step at each end; h and
    # h_prev/h_next come from separate get_steps calls (distinct view objects)
    if layout == "birnn_forward":
        h = _steps(buf[:nout], T + 2, (nout, T + 2))[1:-1]
        return h, _steps(buf[:nout], T + 2, (nout, T + 2))[:-2], False
    h = _steps(buf[nout:], T + 2, (nout, T + 2))[1:-1]
    return h, _steps(buf[nout:], T + 2, (nout, T + 2))[2:], True


@pytest.mark.parametrize("act", sorted(ACTS))
@pytest.mark.parametrize("layout", ["recurrent", "birnn_forward", "birnn_backward"])
@pytest.mark.parametrize("used", [None, 3])
def test_rnn_unroll_fprop_on_views_of_one_buffer(be, act, layout, used):
    rng = np.random.default_rng(9)
    nout, N, T = 3, 2, 4
    width = T if layout == "recurrent" else T + 2
    rows = nout if layout == "recurrent" else 2 * nout
    buf0 = _rand(rng, (rows, width * N), np.float64)
    W, bias = _rand(rng, (nout, nout), np.float64), _rand(rng, (nout, 1), np.float64)
    buf = be.array(buf0, dtype=np.float64)
    h, h_prev, reverse = _rnn_views(buf, layout, nout, T, N)
    # the feed-forward part is already in h (h_ff_s is h_s), as BiRNN calls it
    be.compound_rnn_unroll_fprop(be.array(W, dtype=np.float64), h_prev, h, h, be.array(bias, dtype=np.float64),
                                 nout, T, used, ACTS[act], reverse)
    want = buf0.copy()
    nh, nprev, _ = _rnn_views(want, layout, nout, T, N)
    if layout == "recurrent":
        nprev = nh[-1:] + nh[:-1]                  # the same objects, as in neon
    neon_fprop_numpy(W, nprev, nh, nh, bias, T, used, act, reverse)
    np.testing.assert_allclose(buf.get(), want, **FLOAT64)


def test_rnn_unroll_fprop_separate_feed_forward_and_float32(be):
    """h_ff_s a separate buffer and h_prev_s[0] a separate initial state;
    float32 tensors, a transposed-view W_recur."""
    rng = np.random.default_rng(10)
    nout, N, T = 4, 3, 5
    W, bias = _rand(rng, (nout, nout)), _rand(rng, (nout, 1))
    ff0, init0 = _rand(rng, (nout, T * N)), _rand(rng, (nout, N))
    hbuf, ff, init = be.zeros((nout, T * N)), be.array(ff0), be.array(init0)
    h = _steps(hbuf, T, (nout, T))
    be.compound_rnn_unroll_fprop(be.array(W.T.copy()).T, [init] + h[:-1], _steps(ff, T, (nout, T)), h,
                                 be.array(bias), nout, T, T, "tanh")
    state, want = init0.astype(np.float64), []
    for t in range(T):
        state = np.tanh(W @ state + ff0[:, t * N:(t + 1) * N] + bias)
        want.append(state)
    np.testing.assert_allclose(hbuf.get(), np.concatenate(want, axis=1), **FLOAT32)
    np.testing.assert_array_equal(init.get(), init0)           # inputs are not written
    np.testing.assert_array_equal(ff.get(), ff0)


@pytest.mark.parametrize("act", sorted(ACTS))
@pytest.mark.parametrize("layout", ["recurrent", "birnn_forward", "birnn_backward", "fresh_views"])
@pytest.mark.parametrize("used", [None, 3])
def test_rnn_unroll_bprop_on_views_of_one_buffer(be, act, layout, used):
    """neon's deltas: in_deltas = get_steps(error); Recurrent wraps
    prev_in_deltas to the last step, BiRNN puts a separate buffer at the end
    it starts from; "fresh_views" builds prev_in_deltas as new slices of the
    same buffer (aliasing found by elements, not identity)."""
    rng = np.random.default_rng(11)
    nout, N, T = 3, 2, 4
    W = _rand(rng, (nout, nout), np.float64)
    h0 = _rand(rng, (nout, T * N), np.float64)
    if act == "logistic":
        h0 = (h0 + 1) / 2                         # outputs in the activation's range
    d0, extra0 = _rand(rng, (nout, T * N), np.float64), _rand(rng, (nout, N), np.float64)
    reverse = layout != "birnn_backward"

    def build(dbuf, extra, views):
        d = views(dbuf)
        if layout == "recurrent":
            return d, d[-1:] + d[:-1]
        if layout == "birnn_forward":
            return d, [extra] + d[:-1]
        if layout == "birnn_backward":
            return d, d[1:] + [extra]
        return d, [dbuf[:, ((t - 1) % T) * N:((t - 1) % T + 1) * N] for t in range(T)]

    dbuf, extra = be.array(d0, dtype=np.float64), be.array(extra0, dtype=np.float64)
    d, d_prev = build(dbuf, extra, lambda b: _steps(b, T, (nout, T)))
    hs = _steps(be.array(h0, dtype=np.float64), T, (nout, T))
    be.compound_rnn_unroll_bprop(be.array(W, dtype=np.float64).T, d_prev, d, hs, nout, T, used, ACTS[act],
                                 reverse)
    want_d, want_extra = d0.copy(), extra0.copy()
    nd, nprev = build(want_d, want_extra, lambda b: [b[:, t * N:(t + 1) * N] for t in range(T)])
    if layout == "fresh_views":
        nprev = nd[-1:] + nd[:-1]                  # NumPy's in-place loop needs the same objects
    neon_bprop_numpy(W.T, nprev, nd, [h0[:, t * N:(t + 1) * N] for t in range(T)], T, used, act, reverse)
    np.testing.assert_allclose(dbuf.get(), want_d, **FLOAT64)
    np.testing.assert_allclose(extra.get(), want_extra, **FLOAT64)


def test_rnn_unroll_bad_input(be):
    nout, N, T = 2, 2, 3
    W, bias, buf = be.ones((nout, nout)), be.zeros((nout, 1)), be.zeros((nout, T * N))
    h = _steps(buf, T, (nout, T))
    with pytest.raises(TypeError, match="compound_rnn_unroll_fprop: h_prev_s\\[0\\] must be a Tensor"):
        be.compound_rnn_unroll_fprop(W, [np.zeros((nout, N))] + h[:-1], h, h, bias, nout, T, T, "tanh")
    with pytest.raises(TypeError, match="h_s must be a list"):
        be.compound_rnn_unroll_fprop(W, h, h, buf, bias, nout, T, T, "tanh")
    with pytest.raises(TypeError, match="compound_rnn_unroll_fprop: activation"):
        be.compound_rnn_unroll_fprop(W, h[-1:] + h[:-1], h, h, bias, nout, T, T, np.tanh)
    with pytest.raises(ValueError, match="unknown activation"):
        be.compound_rnn_unroll_fprop(W, h[-1:] + h[:-1], h, h, bias, nout, T, T, "softsign")
    # a previous state straddling two steps would be read half rewritten
    straddle = [buf[:, 1:N + 1]] + h[:-1]
    with pytest.raises(ValueError, match="h_prev_s\\[0\\] overlaps the steps of h_s"):
        be.compound_rnn_unroll_fprop(W, straddle, h, h, bias, nout, T, T, "tanh")
    with pytest.raises(ValueError, match="h_ff_s\\[0\\] views step 1"):
        be.compound_rnn_unroll_fprop(W, h[-1:] + h[:-1], h[1:] + h[:1], h, bias, nout, T, T, "tanh")
    with pytest.raises(ValueError, match="h_s\\[0\\] views step 0 of delta_s"):
        be.compound_rnn_unroll_bprop(W, h[-1:] + h[:-1], h, h, nout, T, T, "tanh")
    np.testing.assert_array_equal(buf.get(), 0)               # nothing was written


# ------------------------------------------------------------ lookup table

def test_compound_bprop_lut(be):
    """neon's LookupTable: inputs (1, nin*N) int32 word ids, error
    (embedding_dim, nin*N), dW zeroed before the call; repeated ids
    accumulate, pad_idx rows get nothing."""
    rng = np.random.default_rng(12)
    vocab, dim, nin, N = 7, 5, 3, 4
    ids = rng.integers(0, vocab, size=(1, nin * N))
    ids[0, :4] = [2, 2, 5, 2]
    error = _rand(rng, (dim, nin * N))
    inputs, t_err = be.array(ids, dtype=np.int32), be.array(error)
    for pad_idx, alpha in ((None, 1.0), (2, 0.5)):
        dW = be.zeros((vocab, dim))
        be.compound_bprop_lut(nin, inputs, t_err, be.empty((nin * N, dim)), dW, pad_idx, alpha)
        want = np.zeros((vocab, dim))
        for j, w in enumerate(ids[0]):
            if w != pad_idx:
                want[w] += alpha * error[:, j]
        np.testing.assert_allclose(dW.get(), want, **FLOAT32)
        if pad_idx is not None:
            np.testing.assert_array_equal(dW.get()[pad_idx], 0)
    # error=None reads error_t; float ids (neon feeds float32 data) truncate
    dW = be.zeros((vocab, dim))
    be.compound_bprop_lut(nin, be.array(ids.astype(np.float32)), None, be.array(error.T.copy()), dW, None)
    want = np.zeros((vocab, dim))
    np.add.at(want, ids[0], error.T.astype(np.float64))
    np.testing.assert_allclose(dW.get(), want, **FLOAT32)


# ------------------------------------------------------------ bad input

def test_bad_input_names_method_and_operand(be):
    layer = be.conv_layer(np.float32, 2, 2, 3, H=4, W=4, R=3, S=3)
    I, F, O = be.zeros(layer.dimI2), be.zeros(layer.dimF2), be.zeros(layer.dimO2)
    with pytest.raises(TypeError, match="fprop_conv: I must be a Tensor"):
        be.fprop_conv(layer, np.zeros(layer.dimI2), F, O)
    with pytest.raises(ValueError, match="fprop_conv: O has shape"):
        be.fprop_conv(layer, I, F, be.zeros((5, 2)))
    with pytest.raises(TypeError, match="fprop_conv: X must be a Tensor"):
        be.fprop_conv(layer, I, F, O, X=2.0)
    with pytest.raises(TypeError, match="fprop_conv: alpha must be a real number, got a Tensor"):
        be.fprop_conv(layer, I, F, O, be.zeros(layer.dimO2))   # neon 2.x's positional X
    with pytest.raises(TypeError, match="bprop_conv: layer must be"):
        be.bprop_conv(be.pool_layer(np.float32, "max", 2, 2, H=4, W=4, R=2, S=2), F, O, I)
    with pytest.raises(TypeError, match="update_conv: alpha must be a real number"):
        be.update_conv(layer, I, O, F, alpha="1")
    with pytest.raises(TypeError, match="update_conv: pass the output tensor once"):
        be.update_conv(layer, I, O, F, U=F)
    with pytest.raises(ValueError, match="fprop_conv: bsum has shape"):
        be.fprop_conv(layer, I, F, O, bsum=be.zeros((2, 1)))
    pool = be.pool_layer(np.float32, "max", 2, 2, H=4, W=4, R=2, S=2)
    with pytest.raises(ValueError, match="bprop_pool: max pooling needs"):
        be.bprop_pool(pool, be.zeros(pool.dimO2), be.zeros(pool.dimI2))
    with pytest.raises(ValueError, match="fprop_pool: argmax has shape"):
        be.fprop_pool(pool, be.zeros(pool.dimI2), be.zeros(pool.dimO2), be.zeros((3, 1), dtype=np.uint8))
    with pytest.raises(TypeError, match="compound_bprop_lut: dW must be a Tensor"):
        be.compound_bprop_lut(1, be.zeros((1, 2)), be.zeros((3, 2)), None, np.zeros((4, 3)), None)
