"""Pooling (max, avg, l2) over the (C, D, H, W) axes, and its bprop."""

import math

import numpy as np

import arrayx as xp

from .arguments import combine, shape_like, shaped
from .convolution import pad, window_keys, window_padding


def _pool_windows(layer, I5, fill):
    """(windows, keys, lo, padded shape): windows is (J*T*R*S, K, M, P, Q, N)."""
    outs = (layer.K,) + layer.MPQ
    lengths = (layer.C,) + layer.DHW
    lo, hi = window_padding(lengths, outs, layer.JTRS, layer.strides, (1, 1, 1, 1), layer.padding)
    X = pad(I5, 0, lo, hi, fill)
    keys = window_keys(5, 0, outs, layer.JTRS, layer.strides, (1, 1, 1, 1))
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
    I5 = shaped(I, layer.dimI, name, "I")
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
    result = combine(result, alpha, beta, O, name, "O")
    return shape_like(result, O, name, "O")


def pool_argmax(layer, I):
    """For max pooling: the offset of each window's first maximum, an int64
    array of ``dimO`` whose values index the window flattened in C order over
    (J, T, R, S) (padding included in the numbering, never selected)."""
    name = "pool_argmax"
    I5 = shaped(I, layer.dimI, name, "I")
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
    E5 = shaped(E, layer.dimO, name, "E")
    if not xp.isdtype(E5.dtype, "real floating"):
        raise TypeError("%s: E has dtype %s; pooling needs a real floating dtype" % (name, E5.dtype))
    outs = (layer.K,) + layer.MPQ
    lengths = (layer.C,) + layer.DHW
    lo, hi = window_padding(lengths, outs, layer.JTRS, layer.strides, (1, 1, 1, 1), layer.padding)
    keys = window_keys(5, 0, outs, layer.JTRS, layer.strides, (1, 1, 1, 1))
    padded = tuple(n + a + b for n, a, b in zip(lengths, lo, hi)) + (layer.N,)
    nwin = len(keys)
    if layer.op == "max":
        if argmax is None:
            if I is None:
                raise ValueError("%s: max pooling needs I (the fprop input) or argmax" % name)
            argmax = pool_argmax(layer, I)
        else:
            argmax = shaped(argmax, layer.dimO, name, "argmax")
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
    result = combine(result, alpha, beta, grad_I, name, "grad_I")
    return shape_like(result, grad_I, name, "grad_I")
