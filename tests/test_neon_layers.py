"""arrayx.neon.layers: neon's conv/deconv/pool/RNN/LUT kernels over arrayx.

Each kernel is checked against a direct NumPy reference written here (naive
loops over output positions and kernel offsets, computed in float64), on
random shapes with padding, strides and dilation, in neon's 5-D layouts and
its 2-D views. bprop/update are checked against the reference transposed
computation (scatter form), against the adjoint identity
<fprop(I), E> = <I, bprop(E)>, and against central finite differences of
fprop. The RNN unrolling is checked against neon's own in-place algorithm run
on NumPy views of one buffer (so the aliasing of h_prev/h and delta_prev/delta
is neon's), and against finite differences of the unrolled fprop.

Tolerances. float32 results are compared with float64 references: a result
element is a sum of at most ~250 products of values in [-1, 1], so float32
rounding (eps = 6e-8 per operation) stays below ~250 * 6e-8 = 1.5e-5 in
absolute terms; FLOAT32 allows 1e-4 absolute plus 1e-5 relative. float64
results are held to 1e-10 (same sums, eps = 1e-16). Max/avg pooling of float32
values picks/averages elements exactly up to one division: 1e-6.
"""

import itertools

import numpy as np
import pytest

import arrayx as xp
from arrayx.neon import layers as L

FLOAT32 = dict(rtol=1e-5, atol=1e-4)
FLOAT64 = dict(rtol=1e-10, atol=1e-10)
TOL = {np.float32: FLOAT32, np.float64: FLOAT64}


def _rand(rng, shape, dtype=np.float32):
    return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)


def _np(x):
    return np.asarray(x)


# ------------------------------------------------------------ NumPy references

def _positions(n_out, k, stride, pad, dil, n_in):
    """(output index, kernel offset, input index) triples that hit real input."""
    for o in range(n_out):
        for t in range(k):
            i = o * stride - pad + t * dil
            if 0 <= i < n_in:
                yield o, t, i


def _triples(layer):
    axes = [list(_positions(n, k, s, p, d, X)) for n, k, s, p, d, X in
            zip(layer.MPQ, layer.TRS, layer.strides, layer.padding, layer.dilation, layer.DHW)]
    return itertools.product(*axes)


def ref_fprop_conv(layer, I, F):
    I, F = I.astype(np.float64), F.astype(np.float64)
    O = np.zeros(layer.dimO)
    for (m, t, d), (p, r, h), (q, s, w) in _triples(layer):
        O[:, m, p, q, :] += F[:, t, r, s, :].T @ I[:, d, h, w, :]
    return O


def ref_bprop_conv(layer, F, E):
    """The transposed computation: every (output, offset) pair scatters back."""
    F, E = F.astype(np.float64), E.astype(np.float64)
    G = np.zeros(layer.dimI)
    for (m, t, d), (p, r, h), (q, s, w) in _triples(layer):
        G[:, d, h, w, :] += F[:, t, r, s, :] @ E[:, m, p, q, :]
    return G


def ref_update_conv(layer, I, E):
    I, E = I.astype(np.float64), E.astype(np.float64)
    U = np.zeros(layer.dimF)
    for (m, t, d), (p, r, h), (q, s, w) in _triples(layer):
        U[:, t, r, s, :] += I[:, d, h, w, :] @ E[:, m, p, q, :].T
    return U


def _pool_slice(o, k, stride, pad, n_in):
    start = o * stride - pad
    first, last = max(start, 0), min(start + k - 1, n_in - 1)
    return slice(first, last + 1)


def _pool_windows(layer):
    outs = (layer.K,) + layer.MPQ
    ins = (layer.C,) + layer.DHW
    for pos in itertools.product(*[range(n) for n in outs]):
        yield pos, tuple(_pool_slice(o, k, s, p, X) for o, k, s, p, X in
                         zip(pos, layer.JTRS, layer.strides, layer.padding, ins))


def ref_fprop_pool(layer, I):
    I = I.astype(np.float64)
    O = np.zeros(layer.dimO)
    for pos, win in _pool_windows(layer):
        patch = I[win].reshape(-1, layer.N)
        if layer.op == "max":
            O[pos] = patch.max(axis=0)
        elif layer.op == "avg":
            O[pos] = patch.mean(axis=0)
        else:
            O[pos] = np.sqrt((patch ** 2).sum(axis=0))
    return O


def ref_bprop_pool(layer, I, E):
    E = E.astype(np.float64)
    G = np.zeros(layer.dimI)
    for pos, win in _pool_windows(layer):
        block = G[win].reshape(-1, layer.N)
        if layer.op == "max":
            first_max = I[win].reshape(-1, layer.N).argmax(axis=0)
            block[first_max, np.arange(layer.N)] += E[pos]
        else:
            block += E[pos] / block.shape[0]
        G[win] = block.reshape(G[win].shape)
    return G


# ------------------------------------------------------------ random geometries

def _conv_cases():
    """Random 1-D, 2-D and 3-D geometries with padding, strides, dilation."""
    rng = np.random.default_rng(1234)
    cases = []
    for i in range(12):
        dims = 1 + i % 3                       # 1-D (W), 2-D (H, W), 3-D (D, H, W)
        geo = {}
        for name in "dhw"[3 - dims:]:
            k = int(rng.integers(1, 4))
            dil = int(rng.integers(1, 3)) if i % 4 == 3 else 1
            span = dil * (k - 1) + 1
            pad = int(rng.integers(0, span + 2))   # past span-1, some windows lie wholly in padding
            x = int(rng.integers(max(1, span - 2 * pad), span + 5))
            st = int(rng.integers(1, 4))
            geo[name] = (x, k, pad, st, dil)
        kw = dict(N=int(rng.integers(1, 4)), C=int(rng.integers(1, 4)), K=int(rng.integers(1, 5)))
        for name, (x, k, pad, st, dil) in geo.items():
            kw[name.upper()] = x
            kw[{"d": "T", "h": "R", "w": "S"}[name]] = k
            kw["pad_" + name] = pad
            kw["str_" + name] = st
            kw["dil_" + name] = dil
        cases.append(kw)
    # a 1x1 convolution (neon's "dot" case) and the seed's all-default layer
    cases.append(dict(N=3, C=4, K=2, H=3, W=2))
    cases.append(dict(N=2, C=1, K=1))
    return cases


CONV_CASES = _conv_cases()


def _case_id(kw):
    return ",".join("%s%s" % (k, v) for k, v in sorted(kw.items()))


@pytest.fixture(params=CONV_CASES, ids=[_case_id(c) for c in CONV_CASES])
def conv_case(request):
    return request.param


# ------------------------------------------------------------ geometry

def test_output_dim_matches_neon_rule():
    assert L.output_dim(7, 3, 1, 2) == 4
    assert L.output_dim(7, 3, 0, 1, dilation=2) == 3              # S' = 5
    assert L.output_dim(6, 3, 0, 2, pooling=True) == 2
    assert L.output_dim(6, 3, 0, 2, pooling=True, caffe_compat=True) == 3   # ceil mode
    assert L.output_dim(5, 2, 1, 2, pooling=True, caffe_compat=True) == 3
    with pytest.raises(ValueError, match="Padding"):
        L.output_dim(6, 2, 2, 1, pooling=True)
    with pytest.raises(ValueError):
        L.output_dim(2, 5, 0, 1)


def test_conv_layer_attributes():
    layer = L.conv_layer(np.float32, 8, 3, 16, D=4, H=9, W=10, T=2, R=3, S=3,
                         pad_h=1, pad_w=2, str_h=2, str_w=3, dil_d=2)
    assert (layer.N, layer.C, layer.K) == (8, 3, 16)
    assert layer.MPQ == (2, 5, 4)                     # (4 - (2*(2-1)+1)) // 1 + 1 = 2 with dilation
    assert layer.dimI == (3, 4, 9, 10, 8)
    assert layer.dimF == (3, 2, 3, 3, 16)
    assert layer.dimO == (16, 2, 5, 4, 8)
    assert layer.dimI2 == (3 * 4 * 9 * 10, 8)
    assert layer.dimF2 == (3 * 2 * 3 * 3, 16)
    assert layer.dimO2 == (16 * 2 * 5 * 4, 8)
    assert layer.nOut == 16 * 2 * 5 * 4
    assert layer.padding == (0, 1, 2) and layer.strides == (1, 2, 3) and layer.dilation == (2, 1, 1)
    assert layer.sizeI == 3 * 4 * 9 * 10 * 8


def test_deconv_layer_inverts_conv_geometry():
    d = L.deconv_layer(np.float32, 2, 3, 5, P=4, Q=6, R=3, S=2, pad_h=1, pad_w=0, str_h=2, str_w=3)
    assert (d.H, d.W) == ((4 - 1) * 2 - 2 + 3, (6 - 1) * 3 + 2)
    assert d.dimO == (5, 1, 4, 6, 2) and d.dimI == (3, 1, d.H, d.W, 2)
    assert d.nOut == 3 * d.H * d.W
    c = L.conv_layer(np.float32, 2, 3, 5, H=d.H, W=d.W, R=3, S=2, pad_h=1, str_h=2, str_w=3)
    assert c.MPQ == d.MPQ


def test_pool_layer_attributes():
    p = L.pool_layer(np.float32, "max", 4, 6, H=7, W=8, J=2, R=3, S=2, pad_h=1, str_h=2)
    assert p.strides == (2, 1, 2, 2)                  # unset strides default to the window
    assert (p.K, p.M, p.P, p.Q) == (3, 1, 4, 4)
    assert p.dimO == (3, 1, 4, 4, 4) and p.dimI == (6, 1, 7, 8, 4)
    assert p.overlap == 2                             # ceil(J/str_c)*...*ceil(R/str_h)*...: only h overlaps
    q = L.pool_layer(np.float32, "avg", 2, 3, H=4, W=4, R=2, S=2, pad_c=0, str_c=1)
    assert q.overlap == 0.0 and q.strides[0] == 1
    with pytest.raises(ValueError):
        L.pool_layer(np.float32, "median", 2, 3, H=4, W=4, R=2, S=2)


# ------------------------------------------------------------ convolution

def test_fprop_conv_matches_reference(conv_case):
    rng = np.random.default_rng(1)
    layer = L.conv_layer(np.float32, **conv_case)
    I, F = _rand(rng, layer.dimI), _rand(rng, layer.dimF)
    O = L.fprop_conv(layer, xp.asarray(I), xp.asarray(F))
    assert O.shape == layer.dimO and O.dtype == xp.float32
    np.testing.assert_allclose(_np(O), ref_fprop_conv(layer, I, F), **FLOAT32)


def test_bprop_conv_matches_transposed_reference(conv_case):
    rng = np.random.default_rng(2)
    layer = L.conv_layer(np.float32, **conv_case)
    F, E = _rand(rng, layer.dimF), _rand(rng, layer.dimO)
    G = L.bprop_conv(layer, xp.asarray(F), xp.asarray(E))
    assert G.shape == layer.dimI and G.dtype == xp.float32
    np.testing.assert_allclose(_np(G), ref_bprop_conv(layer, F, E), **FLOAT32)


def test_update_conv_matches_reference(conv_case):
    rng = np.random.default_rng(3)
    layer = L.conv_layer(np.float32, **conv_case)
    I, E = _rand(rng, layer.dimI), _rand(rng, layer.dimO)
    U = L.update_conv(layer, xp.asarray(I), xp.asarray(E))
    assert U.shape == layer.dimF and U.dtype == xp.float32
    np.testing.assert_allclose(_np(U), ref_update_conv(layer, I, E), **FLOAT32)


def test_conv_adjoint_identities_float64(conv_case):
    """<fprop(I, F), E> = <I, bprop(F, E)> = <F, update(I, E)>: bprop and update
    are the transposes of fprop as linear maps of I and of F."""
    rng = np.random.default_rng(4)
    layer = L.conv_layer(np.float64, **conv_case)
    I, F, E = _rand(rng, layer.dimI, np.float64), _rand(rng, layer.dimF, np.float64), \
        _rand(rng, layer.dimO, np.float64)
    O = _np(L.fprop_conv(layer, I, F))
    G = _np(L.bprop_conv(layer, F, E))
    U = _np(L.update_conv(layer, I, E))
    np.testing.assert_allclose(O, ref_fprop_conv(layer, I, F), **FLOAT64)
    lhs = float(np.sum(O * E))
    np.testing.assert_allclose(np.sum(I * G), lhs, **FLOAT64)
    np.testing.assert_allclose(np.sum(F * U), lhs, **FLOAT64)


def test_conv_gradients_match_finite_differences():
    """Central differences of L(I, F) = sum(fprop(I, F) * E) at random
    coordinates against bprop_conv (dL/dI) and update_conv (dL/dF). L is
    linear in each argument, so the differences are exact up to rounding."""
    rng = np.random.default_rng(5)
    layer = L.conv_layer(np.float64, 2, 3, 2, D=3, H=5, W=4, T=2, R=3, S=2,
                         pad_d=1, pad_h=2, pad_w=1, str_h=2, str_w=1, dil_h=1, dil_w=2)
    I, F, E = (_rand(rng, s, np.float64) for s in (layer.dimI, layer.dimF, layer.dimO))

    def loss(I, F):
        return float(np.sum(_np(L.fprop_conv(layer, I, F)) * E))

    gI = _np(L.bprop_conv(layer, F, E))
    gF = _np(L.update_conv(layer, I, E))
    h = 1e-3
    for _ in range(6):
        idx = tuple(int(rng.integers(n)) for n in layer.dimI)
        Ip, Im = I.copy(), I.copy()
        Ip[idx] += h
        Im[idx] -= h
        np.testing.assert_allclose((loss(Ip, F) - loss(Im, F)) / (2 * h), gI[idx], rtol=1e-6, atol=1e-8)
        idx = tuple(int(rng.integers(n)) for n in layer.dimF)
        Fp, Fm = F.copy(), F.copy()
        Fp[idx] += h
        Fm[idx] -= h
        np.testing.assert_allclose((loss(I, Fp) - loss(I, Fm)) / (2 * h), gF[idx], rtol=1e-6, atol=1e-8)


def test_conv_accepts_neon_2d_views_and_output_shapes():
    rng = np.random.default_rng(6)
    layer = L.conv_layer(np.float32, 4, 2, 3, H=6, W=5, R=3, S=3, pad_h=1, pad_w=1, str_w=2)
    I, F, E = _rand(rng, layer.dimI), _rand(rng, layer.dimF), _rand(rng, layer.dimO)
    O = L.fprop_conv(layer, I.reshape(layer.dimI2), F.reshape(layer.dimF2), layer.dimO2)
    assert O.shape == layer.dimO2
    np.testing.assert_allclose(_np(O), ref_fprop_conv(layer, I, F).reshape(layer.dimO2), **FLOAT32)
    out = xp.zeros(layer.dimI2, dtype=xp.float32)
    G = L.bprop_conv(layer, F.reshape(layer.dimF2), E.reshape(layer.dimO2), out)
    assert G.shape == layer.dimI2
    np.testing.assert_allclose(_np(G), ref_bprop_conv(layer, F, E).reshape(layer.dimI2), **FLOAT32)
    U = L.update_conv(layer, I.reshape(layer.dimI2), E.reshape(layer.dimO2), layer.dimF2)
    assert U.shape == layer.dimF2
    np.testing.assert_allclose(_np(U), ref_update_conv(layer, I, E).reshape(layer.dimF2), **FLOAT32)


def test_conv_alpha_beta_bias_relu():
    rng = np.random.default_rng(7)
    layer = L.conv_layer(np.float32, 3, 2, 4, H=5, W=5, R=2, S=3, pad_w=1)
    I, F, E = _rand(rng, layer.dimI), _rand(rng, layer.dimF), _rand(rng, layer.dimO)
    O0, bias = _rand(rng, layer.dimO), _rand(rng, (layer.K, 1))
    conv = ref_fprop_conv(layer, I, F)
    got = L.fprop_conv(layer, I, F, xp.asarray(O0), alpha=2.0, beta=0.5)
    np.testing.assert_allclose(_np(got), 2.0 * conv + 0.5 * O0, **FLOAT32)
    pre = conv + bias.reshape(-1, 1, 1, 1, 1)
    got = L.fprop_conv(layer, I, F, bias=bias, relu=True)
    np.testing.assert_allclose(_np(got), np.maximum(pre, 0), **FLOAT32)
    got = L.fprop_conv(layer, I, F, bias=bias, relu=True, slope=0.1)
    np.testing.assert_allclose(_np(got), np.maximum(pre, 0) + 0.1 * np.minimum(pre, 0), **FLOAT32)
    G0 = _rand(rng, layer.dimI)
    got = L.bprop_conv(layer, F, E, xp.asarray(G0), alpha=3.0, beta=1.0)
    np.testing.assert_allclose(_np(got), 3.0 * ref_bprop_conv(layer, F, E) + G0, **FLOAT32)
    U0 = _rand(rng, layer.dimF)
    got = L.update_conv(layer, I, E, xp.asarray(U0), alpha=0.5, beta=-1.0)
    np.testing.assert_allclose(_np(got), 0.5 * ref_update_conv(layer, I, E) - U0, **FLOAT32)
    with pytest.raises(ValueError, match="beta"):
        L.fprop_conv(layer, I, F, layer.dimO, beta=1.0)


def test_conv_kernels_are_lazy():
    rng = np.random.default_rng(8)
    layer = L.conv_layer(np.float32, 2, 2, 2, H=4, W=4, R=3, S=3, pad_h=1, pad_w=1, str_h=2)
    I, F, E = (xp.asarray(_rand(rng, s)) for s in (layer.dimI, layer.dimF, layer.dimO))
    before = xp.debug.counters["realizations"]
    outs = [L.fprop_conv(layer, I, F), L.bprop_conv(layer, F, E), L.update_conv(layer, I, E)]
    assert xp.debug.counters["realizations"] == before
    xp.eval(*outs)
    assert xp.debug.counters["realizations"] > before


def test_conv_rejects_wrong_sizes():
    layer = L.conv_layer(np.float32, 2, 2, 2, H=4, W=4, R=3, S=3)
    with pytest.raises(ValueError, match="fprop_conv: I"):
        L.fprop_conv(layer, np.zeros((2, 4, 4, 3), np.float32), np.zeros(layer.dimF, np.float32))
    with pytest.raises(ValueError, match="fprop_conv: O"):
        L.fprop_conv(layer, np.zeros(layer.dimI, np.float32), np.zeros(layer.dimF, np.float32), (5, 5))


# ------------------------------------------------------------ deconvolution

DECONV_CASES = [
    dict(N=2, C=3, K=2, P=3, Q=4, R=3, S=2, pad_h=1, pad_w=0, str_h=2, str_w=3),
    dict(N=1, C=2, K=3, P=5, Q=5, R=4, S=4, pad_h=1, pad_w=1, str_h=2, str_w=2),
    dict(N=3, C=1, K=2, P=2, Q=3, R=2, S=3, str_h=1, str_w=1, dil_h=2),
    dict(N=2, C=2, K=2, M=3, T=2, P=2, Q=2, R=2, S=2, str_d=2, pad_d=1),
]


@pytest.mark.parametrize("case", DECONV_CASES, ids=[_case_id(c) for c in DECONV_CASES])
def test_deconv_fprop_bprop_update(case):
    """Deconv fprop scatters each input through the filter (the conv
    transpose); bprop/update are conv fprop/update with input and error
    exchanged, checked against the same references and finite differences."""
    rng = np.random.default_rng(9)
    d = L.deconv_layer(np.float32, **case)
    X, F, E = _rand(rng, d.dimO), _rand(rng, d.dimF), _rand(rng, d.dimI)
    Y = L.fprop_deconv(d, xp.asarray(X), xp.asarray(F))
    assert Y.shape == d.dimI
    np.testing.assert_allclose(_np(Y), ref_bprop_conv(d, F, X), **FLOAT32)
    G = L.bprop_deconv(d, F, E)
    assert G.shape == d.dimO
    np.testing.assert_allclose(_np(G), ref_fprop_conv(d, E, F), **FLOAT32)
    U = L.update_deconv(d, X, E)
    assert U.shape == d.dimF
    np.testing.assert_allclose(_np(U), ref_update_conv(d, E, X), **FLOAT32)
    # the gradient of sum(fprop_deconv(X) * E) wrt X is bprop_deconv(E): adjoint check
    np.testing.assert_allclose(float(np.sum(_np(Y).astype(np.float64) * E)),
                               float(np.sum(X.astype(np.float64) * _np(G))), rtol=1e-5, atol=1e-4)


# ------------------------------------------------------------ pooling

def _pool_cases():
    rng = np.random.default_rng(99)
    cases = []
    for i in range(10):
        kw = dict(N=int(rng.integers(1, 4)), C=int(rng.integers(1, 5)))
        names = [("h", "R"), ("w", "S")] + ([("d", "T")] if i % 3 == 0 else [])
        if i % 4 == 1:
            names.append(("j", "J"))                 # feature-map (maxout) pooling
        for ax, k_name in names:
            k = int(rng.integers(2 if ax == "j" else 1, 4))
            pad = int(rng.integers(0, k))            # neon requires padding < window
            st = int(rng.integers(1, 4))
            kw[k_name] = k
            kw["pad_" + ax] = pad
            kw["str_" + ax] = st
            if ax != "j":
                kw[ax.upper()] = int(rng.integers(max(1, k - 2 * pad), k + 6))
            else:
                kw["C"] = int(rng.integers(max(1, k - 2 * pad), k + 4))
        cases.append(kw)
    cases.append(dict(N=2, C=3, H=4, W=4, R=2, S=2))         # default strides: non-overlapping
    cases.append(dict(N=2, C=2, H=7, W=5, R=3, S=3, str_h=1, str_w=2, pad_h=2, pad_w=1))
    return cases


POOL_CASES = _pool_cases()


@pytest.mark.parametrize("op", ["max", "avg"])
@pytest.mark.parametrize("case", POOL_CASES, ids=[_case_id(c) for c in POOL_CASES])
def test_pool_fprop_and_bprop_match_reference(op, case):
    rng = np.random.default_rng(10)
    layer = L.pool_layer(np.float32, op, **case)
    I, E = _rand(rng, layer.dimI), _rand(rng, layer.dimO)
    O = L.fprop_pool(layer, xp.asarray(I))
    assert O.shape == layer.dimO and O.dtype == xp.float32
    np.testing.assert_allclose(_np(O), ref_fprop_pool(layer, I), rtol=1e-6, atol=1e-6)
    G = L.bprop_pool(layer, xp.asarray(I), xp.asarray(E))
    assert G.shape == layer.dimI and G.dtype == xp.float32
    np.testing.assert_allclose(_np(G), ref_bprop_pool(layer, I, E), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["max", "avg"])
def test_pool_bprop_matches_finite_differences(op):
    """Central differences of sum(fprop_pool(I) * E) wrt I (float64; random
    inputs have distinct values, so max pooling is differentiable there)."""
    rng = np.random.default_rng(11)
    layer = L.pool_layer(np.float64, op, 2, 3, H=5, W=6, R=3, S=2, pad_h=1, pad_w=1, str_h=2, str_w=1)
    I, E = _rand(rng, layer.dimI, np.float64), _rand(rng, layer.dimO, np.float64)
    G = _np(L.bprop_pool(layer, I, E))
    h = 1e-6
    for idx in itertools.islice(np.ndindex(*layer.dimI), 0, None, 7):
        Ip, Im = I.copy(), I.copy()
        Ip[idx] += h
        Im[idx] -= h
        fd = (np.sum(_np(L.fprop_pool(layer, Ip)) * E) - np.sum(_np(L.fprop_pool(layer, Im)) * E)) / (2 * h)
        np.testing.assert_allclose(fd, G[idx], rtol=1e-6, atol=1e-8)


def test_max_pool_ties_route_to_first_maximum_and_argmax():
    layer = L.pool_layer(np.float32, "max", 1, 1, H=4, W=4, R=2, S=2)
    I = np.ones(layer.dimI, np.float32)
    E = np.arange(1, 5, dtype=np.float32).reshape(layer.dimO)
    am = L.pool_argmax(layer, I)
    assert am.shape == layer.dimO
    np.testing.assert_array_equal(_np(am), 0)
    G = _np(L.bprop_pool(layer, I, E))
    expect = np.zeros((4, 4), np.float32)
    expect[0, 0], expect[0, 2], expect[2, 0], expect[2, 2] = 1, 2, 3, 4
    np.testing.assert_array_equal(G.reshape(4, 4), expect)
    # a given argmax replaces I: offset 3 is the window's bottom-right element
    G = _np(L.bprop_pool(layer, None, E, argmax=np.full(layer.dimO, 3)))
    np.testing.assert_array_equal(G.reshape(4, 4), np.roll(expect, (1, 1), axis=(0, 1)))


def test_pool_padding_never_wins_a_max():
    """All-negative input with padding: the zero padding of neon's layout is
    outside the window, so maxima stay negative."""
    layer = L.pool_layer(np.float32, "max", 2, 2, H=3, W=3, R=2, S=2, pad_h=1, pad_w=1, str_h=1, str_w=1)
    I = -1.0 - np.random.default_rng(12).uniform(size=layer.dimI).astype(np.float32)
    O = _np(L.fprop_pool(layer, I))
    assert (O < 0).all()
    np.testing.assert_allclose(O, ref_fprop_pool(layer, I), rtol=1e-6, atol=1e-6)


def test_pool_l2_alpha_beta_2d_views_and_caffe_mode():
    rng = np.random.default_rng(13)
    layer = L.pool_layer(np.float32, "l2", 3, 2, H=5, W=4, R=2, S=2, pad_h=1, str_h=2, str_w=1)
    I = _rand(rng, layer.dimI)
    np.testing.assert_allclose(_np(L.fprop_pool(layer, I)), ref_fprop_pool(layer, I), rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError):
        L.bprop_pool(layer, I, _rand(rng, layer.dimO))
    layer = L.pool_layer(np.float32, "avg", 3, 2, H=5, W=4, R=2, S=2, pad_h=1, str_h=2, str_w=1)
    O0, E, G0 = _rand(rng, layer.dimO2), _rand(rng, layer.dimO2), _rand(rng, layer.dimI2)
    got = L.fprop_pool(layer, I.reshape(layer.dimI2), xp.asarray(O0), alpha=2.0, beta=0.5)
    assert got.shape == layer.dimO2
    np.testing.assert_allclose(_np(got), 2 * ref_fprop_pool(layer, I).reshape(layer.dimO2) + 0.5 * O0,
                               rtol=1e-5, atol=1e-5)
    got = L.bprop_pool(layer, None, E, xp.asarray(G0), alpha=1.0, beta=1.0)
    assert got.shape == layer.dimI2
    np.testing.assert_allclose(_np(got), ref_bprop_pool(layer, I, E.reshape(layer.dimO)).reshape(layer.dimI2)
                               + G0, rtol=1e-5, atol=1e-5)
    # caffe's ceil mode: the last window hangs past the input and only covers real elements
    layer = L.pool_layer(np.float32, "max", 2, 1, H=6, W=5, R=3, S=2, str_h=2, str_w=2, caffe_compat=True)
    assert layer.MPQ == (1, 3, 3)
    I, E = _rand(rng, layer.dimI), _rand(rng, layer.dimO)
    np.testing.assert_allclose(_np(L.fprop_pool(layer, I)), ref_fprop_pool(layer, I), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(_np(L.bprop_pool(layer, I, E)), ref_bprop_pool(layer, I, E),
                               rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------ recurrent unrolling

class _NeonTanh:
    """A neon-style Transform over arrayx arrays (call and bprop-from-output)."""

    def __call__(self, x):
        return xp.tanh(x)

    def bprop(self, y):
        return 1.0 - y * y


_NP_ACT = {
    "tanh": (np.tanh, lambda y: 1 - y * y),
    "logistic": (lambda x: 1 / (1 + np.exp(-x)), lambda y: y * (1 - y)),
    "rectlin": (lambda x: np.maximum(x, 0), lambda y: (y > 0).astype(y.dtype)),
    "identity": (lambda x: x, lambda y: np.ones_like(y)),
}


def _steps(buf, n_steps):
    """neon's get_steps: per-step column views of a (nout, T*N) buffer."""
    width = buf.shape[1] // n_steps
    return [buf[:, t * width:(t + 1) * width] for t in range(n_steps)]


def neon_fprop_numpy(W, h_prev_s, h_ff_s, h_s, bias, num_steps, used, act, reverse):
    """neon's Backend.compound_rnn_unroll_fprop, in place on NumPy views."""
    f = _NP_ACT[act][0]
    if used is not None and used < num_steps:
        h_s, h_prev_s, h_ff_s = h_s[:used], h_prev_s[:used], h_ff_s[:used]
    steps = list(zip(h_s, h_prev_s, h_ff_s))
    for h, h_prev, h_ff in (reversed(steps) if reverse else steps):
        if h_ff is h:
            h[:] = f(W @ h_prev + h + bias)
        else:
            h[:] = f(W @ h_prev + h_ff + bias)


def neon_bprop_numpy(W, delta_prev_s, delta_s, h_s, num_steps, used, act, reverse):
    """neon's Backend.compound_rnn_unroll_bprop, in place on NumPy views."""
    df = _NP_ACT[act][1]
    if used is not None and used < num_steps:
        h_s = h_s[:used]
    steps = list(zip(h_s, delta_s, delta_prev_s))
    for hs, d, d_prev in (reversed(steps) if reverse else steps):
        d[:] = df(hs) * d
        d_prev[:] = d_prev + W @ d


def _mirror(np_list, np_all, x_all):
    """The arrayx list whose entries alias like the NumPy views do."""
    out = []
    for v in np_list:
        for i, w in enumerate(np_all):
            if v is w:
                out.append(x_all[i])
                break
        else:
            out.append(xp.asarray(v))
    return out


@pytest.mark.parametrize("act", ["tanh", "logistic", "rectlin", "identity"])
@pytest.mark.parametrize("layout", ["recurrent", "birnn_forward", "birnn_backward", "ff_in_h"])
@pytest.mark.parametrize("used", [None, 3])
def test_rnn_unroll_fprop_matches_neon(act, layout, used):
    rng = np.random.default_rng(14)
    nout, N, T = 4, 3, 5
    W = _rand(rng, (nout, nout), np.float64)
    bias = _rand(rng, (nout, 1), np.float64)
    h_buf = _rand(rng, (nout, T * N), np.float64)      # carried state lives in the last step
    ff_buf = _rand(rng, (nout, T * N), np.float64)
    init = _rand(rng, (nout, N), np.float64)
    h_s, h_ff = _steps(h_buf, T), _steps(ff_buf, T)
    reverse = layout == "birnn_backward"
    if layout == "recurrent":
        h_prev = h_s[-1:] + h_s[:-1]                   # neon's Recurrent: wraps to the last step
    elif layout == "birnn_forward":
        h_prev = [init] + h_s[:-1]
    elif layout == "birnn_backward":
        h_prev = h_s[1:] + [init]                      # h_next
    else:
        h_prev = h_s[-1:] + h_s[:-1]
        h_ff = h_s                                     # feed-forward already accumulated in h
        ff_buf = h_buf
    x_h = [xp.asarray(v) for v in h_s]
    x_prev = _mirror(h_prev, h_s, x_h)
    x_ff = x_h if h_ff is h_s else [xp.asarray(v) for v in h_ff]
    activation = _NeonTanh() if act == "tanh" and layout == "recurrent" else act
    got = L.compound_rnn_unroll_fprop(xp.asarray(W), x_prev, x_ff, x_h, xp.asarray(bias), nout,
                                      T, used, activation, reverse=reverse)
    neon_fprop_numpy(W, h_prev, h_ff, h_s, bias, T, used, act, reverse)
    assert len(got) == T
    for g, want in zip(got, h_s):
        np.testing.assert_allclose(_np(g), want, **FLOAT64)


@pytest.mark.parametrize("act", ["tanh", "logistic", "rectlin"])
@pytest.mark.parametrize("layout", ["recurrent", "birnn_forward", "birnn_backward"])
@pytest.mark.parametrize("used", [None, 4])
def test_rnn_unroll_bprop_matches_neon(act, layout, used):
    rng = np.random.default_rng(15)
    nout, N, T = 3, 2, 5
    W = _rand(rng, (nout, nout), np.float64)
    h_s = [_np(xp.asarray(v)) for v in _steps(_rand(rng, (nout, T * N), np.float64), T)]
    if act == "logistic":
        h_s = [(v + 1) / 2 for v in h_s]                # outputs in the activation's range
    d_buf = _rand(rng, (nout, T * N), np.float64)
    extra = _rand(rng, (nout, N), np.float64)
    d_s = _steps(d_buf, T)
    reverse = layout != "birnn_backward"
    if layout == "recurrent":
        d_prev = d_s[-1:] + d_s[:-1]
    elif layout == "birnn_forward":
        d_prev = [extra] + d_s[:-1]
    else:
        d_prev = d_s[1:] + [extra]
    x_d = [xp.asarray(v) for v in d_s]
    x_prev = _mirror(d_prev, d_s, x_d)
    got_d, got_prev = L.compound_rnn_unroll_bprop(xp.asarray(W.T), x_prev, x_d, [xp.asarray(v) for v in h_s],
                                                  nout, T, used, act, reverse=reverse)
    neon_bprop_numpy(W.T, d_prev, d_s, h_s, T, used, act, reverse)
    for g, want in zip(got_d, d_s):
        np.testing.assert_allclose(_np(g), want, **FLOAT64)
    for g, want in zip(got_prev, d_prev):
        np.testing.assert_allclose(_np(g), want, **FLOAT64)


def test_rnn_bprop_is_the_gradient_of_fprop():
    """h_t = tanh(W h_{t-1} + x_t + b), h_{-1} = h0. For the loss
    sum_t <h_t, G_t>, bprop with W_recur = W.T, delta_s = G and delta_prev_s
    = [d0] + delta_s[:-1] leaves dL/dx_t in delta_s[t] and dL/dh0 in d0:
    central differences of the unrolled fprop (float64)."""
    rng = np.random.default_rng(16)
    nout, N, T = 3, 2, 4
    W = _rand(rng, (nout, nout), np.float64)
    b = _rand(rng, (nout, 1), np.float64)
    xs = [_rand(rng, (nout, N), np.float64) for _ in range(T)]
    h0 = _rand(rng, (nout, N), np.float64)
    G = [_rand(rng, (nout, N), np.float64) for _ in range(T)]

    def run(xs, h0):
        h = [xp.zeros((nout, N), dtype=xp.float64) for _ in range(T)]
        return L.compound_rnn_unroll_fprop(W, [h0] + h[:-1], xs, h, b, nout, T, None, "tanh")

    def loss(xs, h0):
        return sum(float(np.sum(_np(h) * g)) for h, g in zip(run(xs, h0), G))

    hs = run(xs, h0)
    deltas = [xp.asarray(g) for g in G]
    d0 = xp.zeros((nout, N), dtype=xp.float64)
    d_s, d_prev = L.compound_rnn_unroll_bprop(W.T, [d0] + deltas[:-1], deltas, hs, nout, T, None, "tanh")
    eps = 1e-6
    for t, i, n in [(0, 0, 0), (1, 2, 1), (3, 1, 0), (2, 0, 1)]:
        xp_, xm = [x.copy() for x in xs], [x.copy() for x in xs]
        xp_[t][i, n] += eps
        xm[t][i, n] -= eps
        fd = (loss(xp_, h0) - loss(xm, h0)) / (2 * eps)
        np.testing.assert_allclose(fd, _np(d_s[t])[i, n], rtol=1e-6, atol=1e-9)
    for i, n in [(0, 0), (2, 1)]:
        hp, hm = h0.copy(), h0.copy()
        hp[i, n] += eps
        hm[i, n] -= eps
        fd = (loss(xs, hp) - loss(xs, hm)) / (2 * eps)
        np.testing.assert_allclose(fd, _np(d_prev[0])[i, n], rtol=1e-6, atol=1e-9)


def test_rnn_unroll_aliasing_by_index_and_errors():
    rng = np.random.default_rng(17)
    nout, N, T = 2, 2, 3
    W, b = _rand(rng, (nout, nout)), _rand(rng, (nout, 1))
    z = xp.zeros((nout, N), dtype=xp.float32)
    ff = [xp.asarray(_rand(rng, (nout, N))) for _ in range(T)]
    # the same zeros object for every step: identity cannot say which step
    with pytest.raises(ValueError, match="int"):
        L.compound_rnn_unroll_fprop(W, [z, z, z], ff, [z, z, z], b, nout, T, None, "tanh")
    got = L.compound_rnn_unroll_fprop(W, [-1, 0, 1], ff, [z, z, z], b, nout, T, None, "tanh")
    h = np.zeros((nout, N), np.float32)
    for t in range(T):
        h = np.tanh(W @ h + _np(ff[t]) + b)
        np.testing.assert_allclose(_np(got[t]), h, **FLOAT32)
    assert got[0].dtype == xp.float32
    with pytest.raises(ValueError, match="unknown activation"):
        L.compound_rnn_unroll_fprop(W, [-1, 0, 1], ff, [z, z, z], b, nout, T, None, "softsign")
    with pytest.raises(TypeError, match="bprop"):
        L.compound_rnn_unroll_fprop(W, [-1, 0, 1], ff, [z, z, z], b, nout, T, None, xp.tanh)


# ------------------------------------------------------------ lookup table

def test_bprop_lut_scatter_adds_rows():
    rng = np.random.default_rng(18)
    vocab, dim, nin, N = 7, 5, 3, 4
    ids = rng.integers(0, vocab, size=(1, nin * N))
    ids[0, :3] = [2, 2, 2]                              # repeated ids accumulate
    error = _rand(rng, (dim, nin * N))
    dW0 = _rand(rng, (vocab, dim))
    for pad_idx in (None, 2):
        want = dW0.astype(np.float64).copy()
        for j, w in enumerate(ids[0]):
            if w != pad_idx:
                want[w] += 0.5 * error[:, j]
        got = L.compound_bprop_lut(nin, xp.asarray(ids.astype(np.int32)), xp.asarray(error), None,
                                   xp.asarray(dW0), pad_idx, alpha=0.5)
        assert got.shape == (vocab, dim) and got.dtype == xp.float32
        np.testing.assert_allclose(_np(got), want, **FLOAT32)
    # error_t path, float ids (neon's LookupTable inputs are float32), zero dW from a shape
    want = np.zeros((vocab, dim))
    np.add.at(want, ids[0], error.T.astype(np.float64))
    got = L.compound_bprop_lut(nin, ids.astype(np.float32), None, error.T.copy(), (vocab, dim), None)
    np.testing.assert_allclose(_np(got), want, **FLOAT32)
    with pytest.raises(ValueError):
        L.compound_bprop_lut(nin, ids[:, :-1], error, None, dW0, None)


def test_bprop_lut_is_the_gradient_of_take():
    """The embedding lookup is W.take(ids, axis=0).T; its VJP (arrayx's own
    autodiff) is the row scatter-add compound_bprop_lut computes."""
    from arrayx.autodiff import vjp

    rng = np.random.default_rng(19)
    ids = xp.asarray(rng.integers(0, 6, size=(10,)))
    W = xp.asarray(_rand(rng, (6, 3), np.float64))
    error = xp.asarray(_rand(rng, (3, 10), np.float64))
    _, pullback = vjp(lambda w: xp.matrix_transpose(xp.take(w, ids, axis=0)), W)
    (expect,) = pullback(error)
    got = L.compound_bprop_lut(10, ids, error, None, xp.zeros((6, 3), dtype=xp.float64), None)
    np.testing.assert_allclose(_np(got), _np(expect), **FLOAT64)
