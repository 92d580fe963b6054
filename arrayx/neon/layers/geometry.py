"""Layer geometry: output sizes and the parameter objects neon's
``conv_layer``, ``deconv_layer`` and ``pool_layer`` return."""

import math


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
