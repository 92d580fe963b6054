"""Convolution and deconvolution as lazy graphs: window slices of the padded
input stacked into columns, and one matmul."""

import itertools
import math

import arrayx as xp

from .arguments import combine, shape_like, shaped


def pad(x, first_axis, lo, hi, value):
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


def window_padding(lengths, outs, kernel, strides, dilation, padding):
    """(lo, hi) padding so every window position lies inside the padded array:
    lo is the layer's padding, hi what the last window needs past the input."""
    lo, hi = [], []
    for X, n, k, s, d, p in zip(lengths, outs, kernel, strides, dilation, padding):
        end = (n - 1) * s + (k - 1) * d + 1          # one past the last element read
        lo.append(p)
        hi.append(max(0, end - (X + p)))
    return lo, hi


def window_keys(ndim, first_axis, outs, kernel, strides, dilation):
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


def im2col(x, first_axis, outs, kernel, strides, dilation):
    """x (already padded) with one new axis at first_axis holding the kernel
    offsets: shape[:first_axis] + (prod(kernel),) + outs + shape[first_axis+len(outs):]."""
    keys = window_keys(x.ndim, first_axis, outs, kernel, strides, dilation)
    views = [x[key] for key in keys]
    if len(views) == 1:
        return xp.expand_dims(views[0], axis=first_axis)
    return xp.stack(views, axis=first_axis)


def _conv_columns(layer, I5):
    """(C*T*R*S, M*P*Q*N) columns of the padded input."""
    C, N = layer.C, layer.N
    lo, hi = window_padding(layer.DHW, layer.MPQ, layer.TRS, layer.strides, layer.dilation,
                             layer.padding)
    X = pad(I5, 1, lo, hi, 0)
    cols = im2col(X, 1, layer.MPQ, layer.TRS, layer.strides, layer.dilation)
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
    cols = im2col(G, 1, layer.DHW, T, (1, 1, 1), dil)
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
        b = shaped(bias, (maps, 1), name, "bias")
        result = result + xp.reshape(b, (maps,) + (1,) * (result.ndim - 1))
    if relu:
        if slope:
            result = xp.maximum(result, 0.0) + slope * xp.minimum(result, 0.0)
        else:
            result = xp.maximum(result, 0.0)
    elif brelu:
        if X is None or isinstance(X, (tuple, list)):
            raise ValueError("%s: brelu needs the values of X (or of the output) as an array" % name)
        X = shaped(X, tuple(result.shape), name, "X")
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
    I5 = shaped(I, layer.dimI, name, "I")
    F5 = shaped(F, layer.dimF, name, "F")
    result = _conv_forward(layer, I5, F5)
    base = O if X is None else X
    result = combine(result, alpha, beta, base, name, "O" if X is None else "X")
    result = _epilogue(result, base, bias, relu, brelu, slope, name)
    return shape_like(result, O, name, "O")


def bprop_conv(layer, F, E, grad_I=None, alpha=1.0, repeat=1, beta=0.0, X=None,
               bias=None, relu=False, brelu=False, slope=0.0):
    """Convolution backward, the gradient wrt the input (the transpose of
    fprop_conv as a linear map of I).

    F: ``dimF``; E: ``dimO`` (or ``dimO2``). Returns ``alpha*grad + beta*X``
    (X defaults to grad_I's values), then neon's bias/relu/brelu compounding
    (bias of shape (C, 1)), in grad_I's shape (``dimI`` when None)."""
    name = "bprop_conv"
    F5 = shaped(F, layer.dimF, name, "F")
    E5 = shaped(E, layer.dimO, name, "E")
    result = _conv_backward(layer, E5, F5)
    base = grad_I if X is None else X
    result = combine(result, alpha, beta, base, name, "grad_I" if X is None else "X")
    result = _epilogue(result, base, bias, relu, brelu, slope, name)
    return shape_like(result, grad_I, name, "grad_I")


def update_conv(layer, I, E, grad_F=None, alpha=1.0, repeat=1, beta=0.0):
    """Convolution filter gradient: ``grad_F[c,t,r,s,k] = sum_{m,p,q,n}
    I[c, m*sd - pd + t*dd, ..., n] * E[k,m,p,q,n]``.

    I: ``dimI``; E: ``dimO``. Returns ``alpha*grad + beta*grad_F`` in
    grad_F's shape (``dimF`` when None)."""
    name = "update_conv"
    I5 = shaped(I, layer.dimI, name, "I")
    E5 = shaped(E, layer.dimO, name, "E")
    result = _conv_update(layer, I5, E5)
    result = combine(result, alpha, beta, grad_F, name, "grad_F")
    return shape_like(result, grad_F, name, "grad_F")


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
