"""Neon's layer kernels as pure functions over arrayx arrays.

The backend (`arrayx.neon`) wires these into neon's `Backend` methods. Every
function here takes arrayx arrays (or anything `xp.asarray` accepts) and
returns new arrayx arrays; nothing is computed until a force point, so a
convolution is one lazy graph (window slices, a stack, a matmul), not a loop
over host data.

Layouts are neon's, batch last and channels first:

- activations ``(C, D, H, W, N)`` (or neon's 2-D view ``(C*D*H*W, N)``),
- filters ``(C, T, R, S, K)`` (or ``(C*T*R*S, K)``),
- conv outputs ``(K, M, P, Q, N)`` (or ``(K*M*P*Q, N)``).

Where neon writes into an output tensor, these functions take an optional
``O``/``grad_I``/``grad_F`` that is either None (result in the layer's 5-D
layout), a shape tuple (result reshaped to it) or an array (result reshaped to
its shape; its values are what ``beta`` accumulates). ``repeat`` (neon's
benchmarking knob) is accepted and ignored.

Semantics follow neon 2.x (``neon/backends/nervanacpu.py``, ``layer_cpu.py``):
output sizes from ``output_dim``; convolution is cross-correlation; pooling
windows only cover real input (padding never enters a max, and an average
divides by the number of real elements in its window); max-pooling bprop routes
each error to the first maximum of its window; deconvolution fprop/bprop/update
are conv bprop/fprop/update with the roles of input and error exchanged (as
neon's ``Deconvolution`` layer calls them).
"""

import itertools
import math

import numpy as np

import arrayx as xp
from arrayx.namespace.build import P, make, wrap

__all__ = [
    "ACTIVATIONS", "ConvLayer", "DeconvLayer", "PoolLayer",
    "bprop_conv", "bprop_deconv", "bprop_pool", "compound_bprop_lut",
    "compound_rnn_unroll_bprop", "compound_rnn_unroll_fprop", "conv_layer",
    "deconv_layer", "fprop_conv", "fprop_deconv", "fprop_pool", "output_dim",
    "pool_argmax", "pool_layer", "update_conv", "update_deconv",
]


# ---------------------------------------------------------------- geometry

def output_dim(X, S, padding, strides, pooling=False, dilation=1, caffe_compat=False):
    """Output length along one axis: input length X, filter S, padding on each
    side, stride, dilation. neon's rule ``(X - S' + 2*pad) // stride + 1`` with
    ``S' = dilation*(S-1) + 1``; with ``caffe_compat`` and ``pooling``, caffe's
    ceil rule (dropping a last window that would start inside the padding)."""
    S = dilation * (S - 1) + 1
    if caffe_compat and pooling:
        size = int(math.ceil(float(X - S + 2 * padding) / strides)) + 1
        if padding > 0 and (size - 1) * strides >= X + padding:
            size -= 1
    else:
        size = (X - S + 2 * padding) // strides + 1
    if pooling and padding >= S:
        raise ValueError("Padding dim %d incompatible with filter size %d" % (padding, S))
    if size < 1:
        raise ValueError("output_dim: input length %d, filter %d, padding %d, stride %d "
                         "leave no output position" % (X, S, padding, strides))
    return size


class ConvLayer:
    """ConvLayer parameter object (what ``conv_layer`` returns).

    N images, C input / K output feature maps, input D x H x W, filter
    T x R x S, output M x P x Q; ``padding``, ``strides`` and ``dilation`` are
    (depth, height, width) triples. ``dimI``/``dimF``/``dimO`` are the 5-D
    layouts, ``dimI2``/``dimF2``/``dimO2`` neon's 2-D views."""

    def __init__(self, dtype, N, C, K, D=1, H=1, W=1, T=1, R=1, S=1,
                 pad_d=0, pad_h=0, pad_w=0, str_d=1, str_h=1, str_w=1,
                 dil_d=1, dil_h=1, dil_w=1, relu=False, bsum=False):
        self.dtype = dtype
        self.N, self.C, self.K = N, C, K
        self.D, self.H, self.W = D, H, W
        self.T, self.R, self.S = T, R, S
        self.M = output_dim(D, T, pad_d, str_d, dilation=dil_d)
        self.P = output_dim(H, R, pad_h, str_h, dilation=dil_h)
        self.Q = output_dim(W, S, pad_w, str_w, dilation=dil_w)
        self.relu, self.bsum = relu, bsum
        self._finish()
        self.padding = (pad_d, pad_h, pad_w)
        self.strides = (str_d, str_h, str_w)
        self.dilation = (dil_d, dil_h, dil_w)

    def _finish(self):
        N, C, K = self.N, self.C, self.K
        self.NCK = (N, C, K)
        self.TRS = (self.T, self.R, self.S)
        self.DHW = (self.D, self.H, self.W)
        self.MPQ = (self.M, self.P, self.Q)
        self.dimI = (C,) + self.DHW + (N,)
        self.dimF = (C,) + self.TRS + (K,)
        self.dimO = (K,) + self.MPQ + (N,)
        self.dimS = (K, 1)
        self.dimI2 = (C * math.prod(self.DHW), N)
        self.dimF2 = (C * math.prod(self.TRS), K)
        self.dimO2 = (K * math.prod(self.MPQ), N)
        self.sizeI = math.prod(self.dimI)
        self.sizeF = math.prod(self.dimF)
        self.sizeO = math.prod(self.dimO)
        self.nOut = math.prod(self.MPQ) * K

    def __repr__(self):
        return ("%s(N=%d, C=%d, K=%d, DHW=%s, TRS=%s, MPQ=%s, padding=%s, strides=%s, dilation=%s)"
                % (type(self).__name__, self.N, self.C, self.K, self.DHW, self.TRS, self.MPQ,
                   self.padding, self.strides, self.dilation))


class DeconvLayer(ConvLayer):
    """DeconvLayer parameter object (what ``deconv_layer`` returns).

    The same geometry as the ConvLayer whose bprop it runs forward: the
    deconvolution's input is K maps of M x P x Q (``dimO``), its output C maps
    of D x H x W (``dimI``) with ``H = (P-1)*str_h - 2*pad_h + dil_h*(R-1) + 1``
    (likewise D, W)."""

    def __init__(self, dtype, N, C, K, P, Q, R=1, S=1,
                 pad_d=0, pad_h=0, pad_w=0, str_d=1, str_h=1, str_w=1,
                 dil_d=1, dil_h=1, dil_w=1, M=1, T=1):
        self.dtype = dtype
        self.N, self.C, self.K = N, C, K
        self.M, self.P, self.Q = M, P, Q
        self.T, self.R, self.S = T, R, S
        self.D = (M - 1) * str_d - 2 * pad_d + dil_d * (T - 1) + 1
        self.H = (P - 1) * str_h - 2 * pad_h + dil_h * (R - 1) + 1
        self.W = (Q - 1) * str_w - 2 * pad_w + dil_w * (S - 1) + 1
        if min(self.D, self.H, self.W) < 1:
            raise ValueError("deconv_layer: padding leaves an empty output (D, H, W) = %s"
                             % ((self.D, self.H, self.W),))
        self.relu, self.bsum = False, False
        self._finish()
        # neon's nOut for deconv counts the output image (C x D x H x W)
        self.nOut = math.prod(self.DHW) * C
        self.padding = (pad_d, pad_h, pad_w)
        self.strides = (str_d, str_h, str_w)
        self.dilation = (dil_d, dil_h, dil_w)


class PoolLayer:
    """PoolLayer parameter object (what ``pool_layer`` returns).

    Windows J x T x R x S over the (C, D, H, W) axes of ``(C, D, H, W, N)``
    (J > 1 pools across feature maps, neon's maxout), output
    ``(K, M, P, Q, N)``; ``padding``/``strides`` are (c, d, h, w)."""

    def __init__(self, dtype, op, N, C, D=1, H=1, W=1, J=1, T=1, R=1, S=1,
                 pad_c=0, pad_d=0, pad_h=0, pad_w=0,
                 str_c=None, str_d=None, str_h=None, str_w=None, caffe_compat=False):
        if op not in ("max", "avg", "l2"):
            raise ValueError("pool_layer: op must be 'max', 'avg' or 'l2', got %r" % (op,))
        # non-overlapping windows by default
        str_c = J if str_c is None else str_c
        str_d = T if str_d is None else str_d
        str_h = R if str_h is None else str_h
        str_w = S if str_w is None else str_w
        self.dtype = dtype
        self.op = op
        self.N, self.C = N, C
        self.D, self.H, self.W = D, H, W
        self.J, self.T, self.R, self.S = J, T, R, S
        self.caffe_compat = caffe_compat
        self.K = output_dim(C, J, pad_c, str_c, pooling=True, caffe_compat=caffe_compat)
        self.M = output_dim(D, T, pad_d, str_d, pooling=True, caffe_compat=caffe_compat)
        self.P = output_dim(H, R, pad_h, str_h, pooling=True, caffe_compat=caffe_compat)
        self.Q = output_dim(W, S, pad_w, str_w, pooling=True, caffe_compat=caffe_compat)
        if str_c < J or str_d < T or str_h < R or str_w < S:
            self.overlap = (math.ceil(J / str_c) * math.ceil(T / str_d) *
                            math.ceil(R / str_h) * math.ceil(S / str_w))
        else:
            self.overlap = 0.0
        self.JTRS = (J, T, R, S)
        self.DHW = (D, H, W)
        self.MPQ = (self.M, self.P, self.Q)
        self.padding = (pad_c, pad_d, pad_h, pad_w)
        self.strides = (str_c, str_d, str_h, str_w)
        self.dimI = (C, D, H, W, N)
        self.dimO = (self.K, self.M, self.P, self.Q, N)
        self.dimF2 = None
        self.dimI2 = (C * D * H * W, N)
        self.dimO2 = (self.K * self.M * self.P * self.Q, N)
        self.sizeI = math.prod(self.dimI)
        self.sizeO = math.prod(self.dimO)
        self.nOut = math.prod(self.MPQ) * self.K

    def __repr__(self):
        return ("PoolLayer(op=%r, N=%d, C=%d, DHW=%s, JTRS=%s, KMPQ=%s, padding=%s, strides=%s)"
                % (self.op, self.N, self.C, self.DHW, self.JTRS,
                   (self.K,) + self.MPQ, self.padding, self.strides))


def conv_layer(dtype, N, C, K, D=1, H=1, W=1, T=1, R=1, S=1,
               pad_d=0, pad_h=0, pad_w=0, str_d=1, str_h=1, str_w=1,
               relu=False, bsum=False, dil_d=1, dil_h=1, dil_w=1):
    """A new ConvLayer parameter object (the seed's signature; neon 2.x's
    dilation as trailing keywords). ``relu``/``bsum`` are recorded only."""
    return ConvLayer(dtype, N, C, K, D, H, W, T, R, S, pad_d, pad_h, pad_w,
                     str_d, str_h, str_w, dil_d, dil_h, dil_w, relu=relu, bsum=bsum)


def deconv_layer(dtype, N, C, K, P, Q, R=1, S=1,
                 pad_d=0, pad_h=0, pad_w=0, str_d=1, str_h=1, str_w=1,
                 dil_d=1, dil_h=1, dil_w=1, M=1, T=1):
    """A new DeconvLayer parameter object (the seed's signature; dilation and
    the depth dimensions M (input depth) and T (filter depth) as keywords)."""
    return DeconvLayer(dtype, N, C, K, P, Q, R, S, pad_d, pad_h, pad_w,
                       str_d, str_h, str_w, dil_d, dil_h, dil_w, M=M, T=T)


def pool_layer(dtype, op, N, C, D=1, H=1, W=1, J=1, T=1, R=1, S=1,
               pad_j=0, pad_d=0, pad_h=0, pad_w=0,
               str_j=None, str_d=None, str_h=None, str_w=None,
               pad_c=None, str_c=None, caffe_compat=False):
    """A new PoolLayer parameter object (the seed's signature). Strides
    default to the window (non-overlapping). neon 2.x spells the feature-map
    padding/stride ``pad_c``/``str_c``: accepted as aliases of
    ``pad_j``/``str_j``."""
    if pad_c is not None:
        pad_j = pad_c
    if str_c is not None:
        str_j = str_c
    return PoolLayer(dtype, op, N, C, D, H, W, J, T, R, S, pad_j, pad_d, pad_h, pad_w,
                     str_j, str_d, str_h, str_w, caffe_compat=caffe_compat)


# ---------------------------------------------------------------- helpers

def _as_array(x, name, argname):
    if isinstance(x, xp.Array):
        return x
    try:
        return xp.asarray(x)
    except Exception as exc:  # pragma: no cover - the message is the point
        raise TypeError("%s: %s must be an array, got %s" % (name, argname, type(x).__name__)) from exc


def _shaped(x, shape, name, argname):
    """x as an arrayx array of `shape` (neon's 2-D views reshape to 5-D)."""
    x = _as_array(x, name, argname)
    if tuple(x.shape) == tuple(shape):
        return x
    if math.prod(x.shape) != math.prod(shape):
        raise ValueError("%s: %s has shape %s; expected %s (or a shape of the same size)"
                         % (name, argname, tuple(x.shape), tuple(shape)))
    return xp.reshape(x, tuple(shape))


def _combine(result, alpha, beta, base, name, argname):
    """alpha*result + beta*base (base: the array whose values beta scales)."""
    if alpha != 1.0:
        result = result * alpha
    if beta:
        if base is None or isinstance(base, (tuple, list)):
            raise ValueError("%s: beta=%r needs the values to accumulate: pass %s as an array"
                             % (name, beta, argname))
        result = result + beta * _shaped(base, tuple(result.shape), name, argname)
    return result


def _shape_like(result, out, name, argname):
    """result reshaped to out's shape (out: None, a shape tuple or an array)."""
    if out is None:
        return result
    dim = tuple(result.shape)
    shape = tuple(out) if isinstance(out, (tuple, list)) else tuple(_as_array(out, name, argname).shape)
    if math.prod(shape) != math.prod(dim):
        raise ValueError("%s: %s has shape %s, which does not hold a result of shape %s"
                         % (name, argname, shape, dim))
    return xp.reshape(result, shape) if shape != dim else result


def _pad(x, first_axis, lo, hi, value):
    """x padded with `value` by lo[i] before and hi[i] after axis first_axis+i."""
    if not any(lo) and not any(hi):
        return x
    shape = list(x.shape)
    key = [slice(None)] * x.ndim
    for i, (a, b) in enumerate(zip(lo, hi)):
        axis = first_axis + i
        key[axis] = slice(a, a + shape[axis])
        shape[axis] += a + b
    out = xp.full(tuple(shape), value, dtype=x.dtype)
    out[tuple(key)] = x
    return out


def _window_padding(lengths, outs, kernel, strides, dilation, padding):
    """(lo, hi) padding so every window position lies inside the padded array:
    lo is the layer's padding, hi what the last window needs past the input."""
    lo, hi = [], []
    for X, n, k, s, d, p in zip(lengths, outs, kernel, strides, dilation, padding):
        end = (n - 1) * s + (k - 1) * d + 1          # one past the last element read
        lo.append(p)
        hi.append(max(0, end - (X + p)))
    return lo, hi


def _window_keys(ndim, first_axis, outs, kernel, strides, dilation):
    """For each kernel offset (C order), the basic index selecting the input
    element each output position reads at that offset."""
    keys = []
    for offsets in itertools.product(*[range(k) for k in kernel]):
        key = [slice(None)] * ndim
        for i, (o, n, s, d) in enumerate(zip(offsets, outs, strides, dilation)):
            start = o * d
            key[first_axis + i] = slice(start, start + (n - 1) * s + 1, s)
        keys.append(tuple(key))
    return keys


def _im2col(x, first_axis, outs, kernel, strides, dilation):
    """x (already padded) with one new axis at first_axis holding the kernel
    offsets: shape[:first_axis] + (prod(kernel),) + outs + shape[first_axis+len(outs):]."""
    keys = _window_keys(x.ndim, first_axis, outs, kernel, strides, dilation)
    views = [x[key] for key in keys]
    if len(views) == 1:
        return xp.expand_dims(views[0], axis=first_axis)
    return xp.stack(views, axis=first_axis)


# ---------------------------------------------------------------- convolution

def _conv_columns(layer, I5):
    """(C*T*R*S, M*P*Q*N) columns of the padded input."""
    C, N = layer.C, layer.N
    lo, hi = _window_padding(layer.DHW, layer.MPQ, layer.TRS, layer.strides, layer.dilation,
                             layer.padding)
    X = _pad(I5, 1, lo, hi, 0)
    cols = _im2col(X, 1, layer.MPQ, layer.TRS, layer.strides, layer.dilation)
    return xp.reshape(cols, (C * math.prod(layer.TRS), math.prod(layer.MPQ) * N))


def _conv_forward(layer, I5, F5):
    cols = _conv_columns(layer, I5)
    F2 = xp.reshape(F5, (layer.C * math.prod(layer.TRS), layer.K))
    return xp.reshape(xp.matmul(xp.matrix_transpose(F2), cols), layer.dimO)


def _conv_backward(layer, E5, F5):
    """grad wrt the input: the errors scattered to the input positions their
    windows start from (zeros between strides), correlated with the flipped
    filters at stride 1 (the transposed convolution)."""
    K, C, N = layer.K, layer.C, layer.N
    T = layer.TRS
    dil = layer.dilation
    big = tuple(X + d * (k - 1) for X, d, k in zip(layer.DHW, dil, T))
    G = xp.zeros((K,) + big + (N,), dtype=E5.dtype)
    gkey, ekey = [slice(None)], [slice(None)]
    for L, n, k, s, d, p in zip(big, layer.MPQ, T, layer.strides, dil, layer.padding):
        offset = d * (k - 1) - p            # where output position 0 lands in G
        m_lo = max(0, (-offset + s - 1) // s) if offset < 0 else 0
        m_hi = min(n - 1, (L - 1 - offset) // s)
        if m_lo > m_hi:                      # no window touches real input along this axis
            return xp.zeros(layer.dimI, dtype=E5.dtype)
        gkey.append(slice(offset + m_lo * s, offset + m_hi * s + 1, s))
        ekey.append(slice(m_lo, m_hi + 1))
    gkey.append(slice(None))
    ekey.append(slice(None))
    G[tuple(gkey)] = E5[tuple(ekey)]
    cols = _im2col(G, 1, layer.DHW, T, (1, 1, 1), dil)
    cols = xp.reshape(cols, (K * math.prod(T), math.prod(layer.DHW) * N))
    Ff = xp.flip(F5, axis=(1, 2, 3))                          # (C, T, R, S, K), mirrored
    Ff = xp.reshape(xp.permute_dims(Ff, (4, 1, 2, 3, 0)), (K * math.prod(T), C))
    return xp.reshape(xp.matmul(xp.matrix_transpose(Ff), cols), layer.dimI)


def _conv_update(layer, I5, E5):
    cols = _conv_columns(layer, I5)
    E2 = xp.reshape(E5, (layer.K, math.prod(layer.MPQ) * layer.N))
    return xp.reshape(xp.matmul(cols, xp.matrix_transpose(E2)), layer.dimF)


def _epilogue(result, X, bias, relu, brelu, slope, name):
    """neon's compounding after ``alpha``/``beta``: ``+ bias`` (one value per
    map of the leading axis), then ``relu`` (``max(x, 0) + slope*min(x, 0)``)
    or ``brelu`` (``x * ((X > 0) + slope*(X < 0))``, the relu derivative at
    X)."""
    maps = result.shape[0]
    if bias is not None:
        b = _shaped(bias, (maps, 1), name, "bias")
        result = result + xp.reshape(b, (maps,) + (1,) * (result.ndim - 1))
    if relu:
        if slope:
            result = xp.maximum(result, 0.0) + slope * xp.minimum(result, 0.0)
        else:
            result = xp.maximum(result, 0.0)
    elif brelu:
        if X is None or isinstance(X, (tuple, list)):
            raise ValueError("%s: brelu needs the values of X (or of the output) as an array" % name)
        X = _shaped(X, tuple(result.shape), name, "X")
        mask = xp.astype(X > 0, result.dtype)
        if slope:
            mask = mask + slope * xp.astype(X < 0, result.dtype)
        result = result * mask
    return result


def fprop_conv(layer, I, F, O=None, alpha=1.0, relu=False, repeat=1,
               beta=0.0, X=None, bias=None, slope=0.0, brelu=False):
    """Convolution forward: ``O[k,m,p,q,n] = sum_{c,t,r,s} F[c,t,r,s,k] *
    I[c, m*sd - pd + t*dd, p*sh - ph + r*dh, q*sw - pw + s*dw, n]`` (zero
    outside I).

    I: ``dimI`` (or ``dimI2``); F: ``dimF`` (or ``dimF2``). Returns
    ``alpha*conv + beta*X`` (X defaults to O's values), then ``+ bias``
    (shape (K, 1)), then ``relu`` or ``brelu`` (see ``_epilogue``), in O's
    shape (``dimO`` when O is None)."""
    name = "fprop_conv"
    I5 = _shaped(I, layer.dimI, name, "I")
    F5 = _shaped(F, layer.dimF, name, "F")
    result = _conv_forward(layer, I5, F5)
    base = O if X is None else X
    result = _combine(result, alpha, beta, base, name, "O" if X is None else "X")
    result = _epilogue(result, base, bias, relu, brelu, slope, name)
    return _shape_like(result, O, name, "O")


def bprop_conv(layer, F, E, grad_I=None, alpha=1.0, repeat=1, beta=0.0, X=None,
               bias=None, relu=False, brelu=False, slope=0.0):
    """Convolution backward, the gradient wrt the input (the transpose of
    fprop_conv as a linear map of I).

    F: ``dimF``; E: ``dimO`` (or ``dimO2``). Returns ``alpha*grad + beta*X``
    (X defaults to grad_I's values), then neon's bias/relu/brelu compounding
    (bias of shape (C, 1)), in grad_I's shape (``dimI`` when None)."""
    name = "bprop_conv"
    F5 = _shaped(F, layer.dimF, name, "F")
    E5 = _shaped(E, layer.dimO, name, "E")
    result = _conv_backward(layer, E5, F5)
    base = grad_I if X is None else X
    result = _combine(result, alpha, beta, base, name, "grad_I" if X is None else "X")
    result = _epilogue(result, base, bias, relu, brelu, slope, name)
    return _shape_like(result, grad_I, name, "grad_I")


def update_conv(layer, I, E, grad_F=None, alpha=1.0, repeat=1, beta=0.0):
    """Convolution filter gradient: ``grad_F[c,t,r,s,k] = sum_{m,p,q,n}
    I[c, m*sd - pd + t*dd, ..., n] * E[k,m,p,q,n]``.

    I: ``dimI``; E: ``dimO``. Returns ``alpha*grad + beta*grad_F`` in
    grad_F's shape (``dimF`` when None)."""
    name = "update_conv"
    I5 = _shaped(I, layer.dimI, name, "I")
    E5 = _shaped(E, layer.dimO, name, "E")
    result = _conv_update(layer, I5, E5)
    result = _combine(result, alpha, beta, grad_F, name, "grad_F")
    return _shape_like(result, grad_F, name, "grad_F")


def fprop_deconv(layer, I, F, O=None, alpha=1.0, beta=0.0, repeat=1):
    """Deconvolution forward (neon runs conv bprop): I is ``layer.dimO``
    (K, M, P, Q, N), F ``layer.dimF`` (C, T, R, S, K); returns
    ``layer.dimI`` (C, D, H, W, N) or O's shape."""
    return bprop_conv(layer, F, I, O, alpha=alpha, beta=beta)


def bprop_deconv(layer, F, E, grad_I=None, alpha=1.0, beta=0.0, repeat=1):
    """Deconvolution backward (neon runs conv fprop on the error): E is
    ``layer.dimI`` (C, D, H, W, N); returns ``layer.dimO`` (K, M, P, Q, N)."""
    return fprop_conv(layer, E, F, grad_I, alpha=alpha, beta=beta)


def update_deconv(layer, I, E, grad_F=None, alpha=1.0, beta=0.0, repeat=1):
    """Deconvolution filter gradient (neon runs conv update with the error as
    the input): I is the deconv input ``layer.dimO``, E its error
    ``layer.dimI``; returns ``layer.dimF``."""
    return update_conv(layer, E, I, grad_F, alpha=alpha, beta=beta)


# ---------------------------------------------------------------- pooling

def _pool_windows(layer, I5, fill):
    """(windows, keys, lo, padded shape): windows is (J*T*R*S, K, M, P, Q, N)."""
    outs = (layer.K,) + layer.MPQ
    lengths = (layer.C,) + layer.DHW
    lo, hi = _window_padding(lengths, outs, layer.JTRS, layer.strides, (1, 1, 1, 1), layer.padding)
    X = _pad(I5, 0, lo, hi, fill)
    keys = _window_keys(5, 0, outs, layer.JTRS, layer.strides, (1, 1, 1, 1))
    views = [X[key] for key in keys]
    wins = xp.stack(views, axis=0) if len(views) > 1 else xp.expand_dims(views[0], axis=0)
    return wins, keys, lo, tuple(X.shape)


def _window_counts(layer):
    """Number of real (non-padding) input elements in each window, (K, M, P, Q, 1)."""
    per_axis = []
    for X, n, k, s, p in zip((layer.C,) + layer.DHW, (layer.K,) + layer.MPQ, layer.JTRS,
                             layer.strides, layer.padding):
        starts = np.arange(n) * s - p
        first = np.maximum(starts, 0)
        last = np.minimum(starts + k - 1, X - 1)
        per_axis.append(np.maximum(last - first + 1, 0))
    counts = per_axis[0]
    for c in per_axis[1:]:
        counts = np.multiply.outer(counts, c)
    return counts.reshape(counts.shape + (1,))


def _check_pool_input(layer, I5, name):
    if not xp.isdtype(I5.dtype, "real floating"):
        raise TypeError("%s: I has dtype %s; pooling needs a real floating dtype" % (name, I5.dtype))


def fprop_pool(layer, I, O=None, alpha=1.0, beta=0.0):
    """Pooling forward over the (C, D, H, W) axes of I (``dimI`` or
    ``dimI2``): max, average (over the real elements of each window) or l2
    (``sqrt(sum x^2)``). Returns ``alpha*pool + beta*O`` in O's shape
    (``dimO`` when None)."""
    name = "fprop_pool"
    I5 = _shaped(I, layer.dimI, name, "I")
    _check_pool_input(layer, I5, name)
    if layer.op == "max":
        wins, _, _, _ = _pool_windows(layer, I5, -math.inf)
        result = xp.max(wins, axis=0)
    elif layer.op == "avg":
        wins, _, _, _ = _pool_windows(layer, I5, 0)
        counts = xp.asarray(_window_counts(layer), dtype=I5.dtype)
        result = xp.sum(wins, axis=0) / counts
    else:
        wins, _, _, _ = _pool_windows(layer, I5, 0)
        result = xp.sqrt(xp.sum(wins * wins, axis=0))
    result = _combine(result, alpha, beta, O, name, "O")
    return _shape_like(result, O, name, "O")


def pool_argmax(layer, I):
    """For max pooling: the offset of each window's first maximum, an int64
    array of ``dimO`` whose values index the window flattened in C order over
    (J, T, R, S) (padding included in the numbering, never selected)."""
    name = "pool_argmax"
    I5 = _shaped(I, layer.dimI, name, "I")
    _check_pool_input(layer, I5, name)
    wins, _, _, _ = _pool_windows(layer, I5, -math.inf)
    return xp.argmax(wins, axis=0)


def bprop_pool(layer, I, E, grad_I=None, alpha=1.0, beta=0.0, argmax=None):
    """Pooling backward: the gradient wrt the pooling input.

    I: the fprop input (``dimI``; only max pooling reads it, and not when
    ``argmax`` from ``pool_argmax`` is given); E: the error (``dimO``). Max
    routes each error to its window's first maximum, avg spreads it evenly
    over the window's real elements; overlapping windows accumulate. Returns
    ``alpha*grad + beta*grad_I`` in grad_I's shape (``dimI`` when None)."""
    name = "bprop_pool"
    E5 = _shaped(E, layer.dimO, name, "E")
    if not xp.isdtype(E5.dtype, "real floating"):
        raise TypeError("%s: E has dtype %s; pooling needs a real floating dtype" % (name, E5.dtype))
    outs = (layer.K,) + layer.MPQ
    lengths = (layer.C,) + layer.DHW
    lo, hi = _window_padding(lengths, outs, layer.JTRS, layer.strides, (1, 1, 1, 1), layer.padding)
    keys = _window_keys(5, 0, outs, layer.JTRS, layer.strides, (1, 1, 1, 1))
    padded = tuple(n + a + b for n, a, b in zip(lengths, lo, hi)) + (layer.N,)
    nwin = len(keys)
    if layer.op == "max":
        if argmax is None:
            if I is None:
                raise ValueError("%s: max pooling needs I (the fprop input) or argmax" % name)
            argmax = pool_argmax(layer, I)
        else:
            argmax = _shaped(argmax, layer.dimO, name, "argmax")
        offsets = xp.reshape(xp.arange(nwin, dtype=argmax.dtype), (nwin, 1, 1, 1, 1, 1))
        contrib = xp.where(offsets == argmax, E5, xp.zeros((), dtype=E5.dtype))
    elif layer.op == "avg":
        counts = xp.asarray(_window_counts(layer), dtype=E5.dtype)
        share = E5 / counts
        contrib = None
    else:
        raise NotImplementedError("bprop_pool: neon has no bprop for l2 pooling")
    G = xp.zeros(padded, dtype=E5.dtype)
    for w, key in enumerate(keys):
        G[key] = G[key] + (contrib[w] if contrib is not None else share)
    crop = tuple(slice(a, a + n) for a, n in zip(lo, lengths)) + (slice(None),)
    result = G[crop] if any(lo) or any(hi) else G
    result = _combine(result, alpha, beta, grad_I, name, "grad_I")
    return _shape_like(result, grad_I, name, "grad_I")


# ---------------------------------------------------------------- recurrent unrolling

class _Activation:
    """An activation over arrayx arrays, neon's Transform convention:
    ``f(x)`` forward, ``f.bprop(y)`` the derivative given the *output* y."""

    def __init__(self, name, fprop, bprop):
        self.name, self._fprop, self._bprop = name, fprop, bprop

    def __call__(self, x):
        return self._fprop(x)

    def bprop(self, y):
        return self._bprop(y)

    def __repr__(self):
        return "<activation %s>" % self.name


def _one(y):
    return xp.ones_like(y)


ACTIVATIONS = {
    "tanh": _Activation("tanh", xp.tanh, lambda y: 1.0 - y * y),
    "logistic": _Activation("logistic", lambda x: 1.0 / (1.0 + xp.exp(-x)), lambda y: y * (1.0 - y)),
    "rectlin": _Activation("rectlin", lambda x: xp.maximum(x, 0.0),
                           lambda y: xp.astype(y > 0, y.dtype)),
    "identity": _Activation("identity", lambda x: x, _one),
}


def _activation(activation, name):
    if isinstance(activation, str):
        try:
            return ACTIVATIONS[activation]
        except KeyError:
            raise ValueError("%s: unknown activation %r (known: %s)"
                             % (name, activation, ", ".join(sorted(ACTIVATIONS)))) from None
    if not callable(activation) or not callable(getattr(activation, "bprop", None)):
        raise TypeError("%s: activation must be callable and have a bprop method "
                        "(neon's Transform), or one of %s" % (name, sorted(ACTIVATIONS)))
    return activation


def _step_resolver(buffers, name, argname):
    """Maps an entry of a h_prev/delta_prev list to an index into `buffers`
    (the per-step list it aliases), or None when it is a buffer of its own.
    An int is an explicit index; an array aliases the step it *is* (identity),
    which must then be unique in `buffers`."""
    where = {}
    for i, b in enumerate(buffers):
        where.setdefault(id(b), []).append(i)

    def resolve(entry):
        if isinstance(entry, (int, np.integer)) and not isinstance(entry, bool):
            j = int(entry)
            if not -len(buffers) <= j < len(buffers):
                raise IndexError("%s: %s refers to step %d of %d" % (name, argname, j, len(buffers)))
            return j % len(buffers)
        hits = where.get(id(entry))
        if not hits:
            return None
        if len(hits) > 1:
            raise ValueError("%s: an entry of %s is the same object as steps %s; pass the step "
                             "index as an int to say which one it aliases" % (name, argname, hits))
        return hits[0]
    return resolve


def _used_steps(num_steps, num_used_steps, *lists):
    n = min(len(x) for x in lists)
    if num_used_steps is not None and num_used_steps < num_steps:
        n = min(n, num_used_steps)
    return n


def compound_rnn_unroll_fprop(W_recur, h_prev_s, h_ff_s, h_s, bias, nout, num_steps,
                              num_used_steps, activation, reverse=False):
    """The time unrolling of a recurrent layer's fprop, functional form.

    For each used step t (``num_used_steps`` of them, last to first when
    ``reverse``): ``h_s[t] = activation(W_recur @ h_prev_s[t] + h_ff_s[t] +
    bias)``; when ``h_ff_s[t] is h_s[t]`` the feed-forward input is already
    in h_s[t] (neon's ``beta=1`` accumulate).

    Lists hold (nout, N) arrays, bias is (nout, 1). neon passes views of one
    buffer, so ``h_prev_s[t]`` *is* ``h_s[t-1]`` (and ``h_prev_s[0]`` may be
    ``h_s[-1]``, the carried state): an entry of h_prev_s that is (``is``)
    an entry of h_s, or an int index into h_s, reads that step's value as
    the unrolling has left it (its new value once computed, else the value
    passed in). Any other entry is an independent initial state.

    ``activation`` is a Transform-like object (``act(x)``, ``act.bprop(y)``
    on arrayx arrays) or a name in ``ACTIVATIONS``. ``nout`` is unused
    (shapes come from the arrays). Returns the new list h_s (same length;
    steps not used keep their values)."""
    name = "compound_rnn_unroll_fprop"
    act = _activation(activation, name)
    W = _as_array(W_recur, name, "W_recur")
    b = None if bias is None else _as_array(bias, name, "bias")
    h = [_as_array(x, name, "h_s") for x in h_s]
    resolve = _step_resolver(h_s, name, "h_prev_s")
    n = _used_steps(num_steps, num_used_steps, h_s, h_prev_s, h_ff_s)
    order = range(n - 1, -1, -1) if reverse else range(n)
    for t in order:
        j = resolve(h_prev_s[t])
        prev = h[j] if j is not None else _as_array(h_prev_s[t], name, "h_prev_s")
        ff = h[t] if h_ff_s[t] is h_s[t] else _as_array(h_ff_s[t], name, "h_ff_s")
        pre = xp.matmul(W, prev) + ff
        if b is not None:
            pre = pre + b
        h[t] = act(pre)
    return h


def compound_rnn_unroll_bprop(W_recur, delta_prev_s, delta_s, h_s, nout, num_steps,
                              num_used_steps, activation, reverse=True):
    """The time unrolling of a recurrent layer's bprop, functional form.

    For each used step t (last to first when ``reverse``, the default):
    ``delta_s[t] = activation.bprop(h_s[t]) * delta_s[t]``, then
    ``delta_prev_s[t] += W_recur @ delta_s[t]``. neon's callers pass the
    transposed recurrent weights as W_recur.

    Aliasing as in compound_rnn_unroll_fprop: an entry of delta_prev_s that
    is (``is``) an entry of delta_s, or an int index into it, is that step's
    buffer; any other entry is a buffer of its own (the same object in two
    places is one buffer). Returns ``(delta_s, delta_prev_s)``: the new
    values of every entry of both lists, consistent with the aliasing."""
    name = "compound_rnn_unroll_bprop"
    act = _activation(activation, name)
    W = _as_array(W_recur, name, "W_recur")
    d = [_as_array(x, name, "delta_s") for x in delta_s]
    extra = {}                                   # id(entry) -> value of a separate buffer
    resolve = _step_resolver(delta_s, name, "delta_prev_s")
    targets = [resolve(e) for e in delta_prev_s]
    n = _used_steps(num_steps, num_used_steps, h_s, delta_s, delta_prev_s)
    order = range(n - 1, -1, -1) if reverse else range(n)
    for t in order:
        d[t] = act.bprop(_as_array(h_s[t], name, "h_s")) * d[t]
        back = xp.matmul(W, d[t])
        j = targets[t]
        if j is not None:
            d[j] = d[j] + back
        else:
            key = id(delta_prev_s[t])
            current = extra.get(key)
            if current is None:
                current = _as_array(delta_prev_s[t], name, "delta_prev_s")
            extra[key] = current + back
    prev = []
    for e, j in zip(delta_prev_s, targets):
        if j is not None:
            prev.append(d[j])
        else:
            value = extra.get(id(e))
            prev.append(value if value is not None else _as_array(e, name, "delta_prev_s"))
    return d, prev


# ---------------------------------------------------------------- lookup table

def _scatter_add_rows(base, rows, ids):
    """base with rows[i] added to row ids[i] (duplicates accumulate): one lazy
    scatter_add node (the primitive the autodiff of `take` uses)."""
    template = (("array", 0), ("slice", 0, base.shape[1], 1))
    return wrap(make(P["scatter_add"], (base._node, rows._node, ids._node), (template,)))


def compound_bprop_lut(nin, inputs, error, error_t, dW, pad_idx, alpha=1.0, beta=0):
    """Lookup-table (embedding) bprop: ``dW[ids[j], :] += alpha * error[:, j]``
    for every column j whose word id is not ``pad_idx`` (repeated ids
    accumulate, as neon's GPU kernel does; neon zeroes dW before the call, so
    this equals its CPU backend's per-word sums).

    inputs: the word ids, (1, nin*N) or any shape of nin*N values (floats are
    truncated to int64); error: (embedding_dim, nin*N), or None to use
    error_t: (nin*N, embedding_dim); dW: (vocab_size, embedding_dim) array, or
    a shape tuple for zeros. ``nin`` and ``beta`` are accepted for neon's
    signature and unused (neither neon backend reads beta). Returns the new dW."""
    name = "compound_bprop_lut"
    if error is not None:
        rows = xp.matrix_transpose(_as_array(error, name, "error"))
    elif error_t is not None:
        rows = _as_array(error_t, name, "error_t")
    else:
        raise ValueError("%s: pass error or error_t" % name)
    if isinstance(dW, (tuple, list)):
        dW = xp.zeros(tuple(dW), dtype=rows.dtype)
    dW = _as_array(dW, name, "dW")
    if dW.ndim != 2 or rows.ndim != 2 or rows.shape[1] != dW.shape[1]:
        raise ValueError("%s: error rows of shape %s do not match dW of shape %s"
                         % (name, tuple(rows.shape), tuple(dW.shape)))
    ids = xp.reshape(_as_array(inputs, name, "inputs"), (-1,))
    if ids.shape[0] != rows.shape[0]:
        raise ValueError("%s: %d word ids for %d error columns" % (name, ids.shape[0], rows.shape[0]))
    if not xp.isdtype(ids.dtype, "integral"):
        ids = xp.astype(ids, xp.int64)
    if rows.dtype != dW.dtype:
        rows = xp.astype(rows, dW.dtype)
    if alpha != 1.0:
        rows = rows * alpha
    if pad_idx is not None:
        keep = xp.reshape(ids != pad_idx, (-1, 1))
        rows = xp.where(keep, rows, xp.zeros((), dtype=rows.dtype))
    return _scatter_add_rows(dW, rows, ids)
