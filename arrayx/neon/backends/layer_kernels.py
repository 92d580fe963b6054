"""The Backend's layer kernels (a mixin of `backend.Backend`): neon's
convolution, pooling, recurrent and lookup-table kernels, built as lazy graphs
by `arrayx.neon.layers` and written into the output tensors in place; each
method executes at once, in one plan.
"""

import math
import numbers

import numpy as np

import arrayx as xp

from .. import layers
from . import _evaluate, _storage as st
from .tensor import Tensor


class LayerKernels:
    """conv_layer, fprop/bprop/update_conv, deconv_layer, pool_layer,
    fprop/bprop_pool, compound_rnn_unroll_fprop/bprop, compound_bprop_lut."""

    # -- layer kernels (neon's conv, pool, recurrent and lookup-table kernels,
    #    built as lazy graphs by arrayx.neon.layers and written into the output
    #    tensors in place; each method executes at once, in one plan)

    def conv_layer(self, dtype, N, C, K, D=1, H=1, W=1, T=1, R=1, S=1,
                   pad_d=0, pad_h=0, pad_w=0, str_d=1, str_h=1, str_w=1,
                   relu=False, bsum=False, *, dil_d=1, dil_h=1, dil_w=1):
        """A ConvLayer parameter object for the conv kernels (the seed's order;
        neon 2.x's dilations by keyword; the relu/bsum flags are recorded only)."""
        return layers.conv_layer(dtype, N, C, K, D, H, W, T, R, S, pad_d, pad_h, pad_w,
                                 str_d, str_h, str_w, relu=relu, bsum=bsum,
                                 dil_d=dil_d, dil_h=dil_h, dil_w=dil_w)

    def deconv_layer(self, dtype, N, C, K, P, Q, R=1, S=1,
                     pad_d=0, pad_h=0, pad_w=0, str_d=1, str_h=1, str_w=1,
                     dil_d=1, dil_h=1, dil_w=1, M=1, T=1):
        """A DeconvLayer parameter object: K input maps of M x P x Q, C output
        maps (the seed's order; neon 2.x's M and T by keyword). neon runs a
        deconvolution with the conv kernels: fprop is bprop_conv, bprop is
        fprop_conv, update is update_conv with input and error exchanged."""
        return layers.deconv_layer(dtype, N, C, K, P, Q, R, S, pad_d, pad_h, pad_w,
                                   str_d, str_h, str_w, dil_d, dil_h, dil_w, M=M, T=T)

    def pool_layer(self, dtype, op, N, C, D=1, H=1, W=1, J=1, T=1, R=1, S=1,
                   pad_j=0, pad_d=0, pad_h=0, pad_w=0,
                   str_j=None, str_d=None, str_h=None, str_w=None, pad_c=None, str_c=None):
        """A PoolLayer parameter object ('max', 'avg' or 'l2' over J x T x R x S
        windows; strides default to the window). neon 2.x spells pad_j/str_j
        pad_c/str_c; output sizes follow caffe's rule in caffe compat mode."""
        return layers.pool_layer(dtype, op, N, C, D, H, W, J, T, R, S, pad_j, pad_d, pad_h, pad_w,
                                 str_j, str_d, str_h, str_w, pad_c=pad_c, str_c=str_c,
                                 caffe_compat=self.check_caffe_compat())

    def fprop_conv(self, layer, I, F, O, alpha=1.0, relu=False, repeat=1, *, X=None, bias=None,
                   bsum=None, beta=0.0, brelu=False, slope=0.0, layer_op=None):
        """O = alpha * conv(I, F) + beta * X (X defaults to O), then + bias (K, 1),
        then relu (max(O, 0) + slope*min(O, 0)) or brelu (O * ((X > 0) + slope*(X < 0)));
        bsum (K, 1), when given, receives O summed over all but its K axis.

        I, F, O: ``layer.dimI``/``dimF``/``dimO`` or neon's 2-D views. The seed's
        positional order; neon 2.x's extra parameters are keyword-only (its own
        layers pass them so). repeat and layer_op are ignored."""
        self._xprop_conv("fprop_conv", ("I", "F", "O"), layers.fprop_conv, "K",
                         layer, I, F, O, X, bias, bsum, alpha, beta, relu, brelu, slope)

    def bprop_conv(self, layer, F, E, grad_I, alpha=1.0, repeat=1, *, X=None, bias=None, bsum=None,
                   beta=0.0, relu=False, brelu=False, slope=0.0, layer_op=None):
        """grad_I = alpha * (the gradient of the convolution wrt its input, from
        errors E) + beta * X, with fprop_conv's compounding (bias and bsum of
        shape (C, 1)). F: ``dimF``, E: ``dimO``, grad_I: ``dimI`` (or 2-D views)."""
        self._xprop_conv("bprop_conv", ("F", "E", "grad_I"), layers.bprop_conv, "C",
                         layer, F, E, grad_I, X, bias, bsum, alpha, beta, relu, brelu, slope)

    def _xprop_conv(self, where, names, kernel, maps, layer, A, B, out, X, bias, bsum,
                    alpha, beta, relu, brelu, slope):
        """fprop_conv and bprop_conv: `kernel` of arrayx.neon.layers on (A, B),
        written into `out`; bsum sums over all but the `maps` axis (K or C)."""
        _check_layer(where, layer, layers.ConvLayer, "conv_layer() or deconv_layer()")
        if isinstance(alpha, Tensor):
            raise TypeError(f"{where}: alpha must be a real number, got a Tensor (the seed's positional "
                            "order; pass neon 2.x's X, bias and bsum by keyword)")
        for argname, t in zip(names, (A, B, out)):
            _check_tensor(where, argname, t)
        for argname, t in (("X", X), ("bias", bias), ("bsum", bsum)):
            _check_tensor(where, argname, t, optional=True)
        result = kernel(layer, A._read(), B._read(), out._read(), alpha=_real(where, "alpha", alpha),
                        beta=_real(where, "beta", beta), X=_read(X), bias=_read(bias), relu=relu,
                        brelu=brelu, slope=_real(where, "slope", slope))
        writes = [(out, result)]
        if bsum is not None:
            writes.append((bsum, _map_sums(result, getattr(layer, maps), bsum.shape, where, "bsum")))
        _commit_all(writes, (A, B, X, bias))

    def update_conv(self, layer, I, E, grad_F=None, alpha=1.0, repeat=1, *, beta=0.0, grad_bias=None,
                    layer_op=None, U=None):
        """grad_F = alpha * (the filter gradient from inputs I and errors E) + beta * grad_F,
        in grad_F's layout (``dimF`` or ``dimF2``); grad_bias (K, 1), when given,
        receives E summed over all but its K axis. The seed's positional order;
        neon 2.x's extra parameters are keyword-only, and its CPU name for
        grad_F, U, is accepted by keyword."""
        where = "update_conv"
        if (U is None) == (grad_F is None):
            raise TypeError(f"{where}: pass the output tensor once, as grad_F or U")
        U = U if U is not None else grad_F
        _check_layer(where, layer, layers.ConvLayer, "conv_layer() or deconv_layer()")
        for argname, t in (("I", I), ("E", E), ("U", U)):
            _check_tensor(where, argname, t)
        _check_tensor(where, "grad_bias", grad_bias, optional=True)
        result = layers.update_conv(layer, I._read(), E._read(), U._read(), alpha=_real(where, "alpha", alpha),
                                    beta=_real(where, "beta", beta))
        writes = [(U, result)]
        if grad_bias is not None:
            writes.append((grad_bias, _map_sums(E._read(), layer.K, grad_bias.shape, where, "grad_bias")))
        _commit_all(writes, (I, E))

    def fprop_pool(self, layer, I, O, argmax=None, beta=0.0, alpha=1.0, repeat=1):
        """O = alpha * pool(I) + beta * O (max, avg over each window's real
        elements, or l2). For max pooling, argmax (``dimO``, integer in neon),
        when given, receives each window's first maximum as an offset into the
        window flattened over (J, T, R, S), padding included; bprop_pool reads it.
        neon 2.x's CPU order (alpha, from its GPU backend, by keyword)."""
        where = "fprop_pool"
        _check_layer(where, layer, layers.PoolLayer, "pool_layer()")
        _check_tensor(where, "I", I)
        _check_tensor(where, "O", O)
        _check_tensor(where, "argmax", argmax, optional=True)
        values = I._read()
        result = layers.fprop_pool(layer, values, O._read(), alpha=_real(where, "alpha", alpha),
                                   beta=_real(where, "beta", beta))
        writes = [(O, result)]
        if argmax is not None and layer.op == "max":
            if argmax.size != layer.sizeO:
                raise ValueError(f"{where}: argmax has shape {argmax.shape}; it needs the {layer.sizeO} "
                                 f"elements of layer.dimO {layer.dimO}")
            writes.append((argmax, xp.reshape(layers.pool_argmax(layer, values), argmax.shape)))
        _commit_all(writes, (I,))

    def bprop_pool(self, layer, I, E=None, grad_I=None, alpha=1.0, beta=0.0, repeat=1, *, O=None, argmax=None):
        """grad = alpha * (the pooling gradient) + beta * grad: max routes each
        error to its window's first maximum, avg spreads it evenly over the
        window's real elements; overlapping windows accumulate.

        The seed's order ``(layer, I, E, grad_I)``: I the fprop input (its
        maxima are found again), E the error (``dimO``), grad_I the gradient
        (``dimI``). neon 2.x's order ``(layer, I, O, argmax, alpha, beta)`` takes
        the same positions with I the error, O the gradient and argmax the
        integer buffer fprop_pool filled; it is read so when O or argmax is
        passed by keyword, or the fourth argument is None or an integer tensor."""
        where = "bprop_pool"
        _check_layer(where, layer, layers.PoolLayer, "pool_layer()")
        neon2 = O is not None or argmax is not None or grad_I is None or (
            isinstance(grad_I, Tensor) and grad_I.dtype.kind in "biu")
        if neon2:
            if (O is not None and E is not None) or (argmax is not None and grad_I is not None):
                raise TypeError(f"{where}: pass the gradient and argmax once each, in the seed's order "
                                "(layer, I, E, grad_I) or neon 2.x's (layer, I, O, argmax)")
            fprop_in, error = None, I
            out = O if O is not None else E
            argmax = argmax if argmax is not None else grad_I
            names = (None, "I (the error)", "O (the gradient)")
        else:
            fprop_in, error, out = I, E, grad_I
            names = ("I", "E", "grad_I")
        for argname, t in zip(names, (fprop_in, error, out)):
            if argname is not None:
                _check_tensor(where, argname, t)
        _check_tensor(where, "argmax", argmax, optional=True)
        result = layers.bprop_pool(layer, _read(fprop_in), error._read(), out._read(),
                                   alpha=_real(where, "alpha", alpha), beta=_real(where, "beta", beta),
                                   argmax=_read(argmax))
        _commit_all([(out, result)], (fprop_in, error, argmax))

    def compound_rnn_unroll_fprop(self, W_recur, h_prev_s, h_ff_s, h_s, bias, nout, num_steps,
                                  num_used_steps, activation, reverse=False):
        """For each used step t (last to first when reverse):
        h_s[t] = activation(W_recur . h_prev_s[t] + h_ff_s[t] + bias), where
        h_ff_s[t] may be h_s[t] itself (the feed-forward part already in place).

        The lists hold (nout, N) views of one buffer, as neon's recurrent layers
        build them: an entry of h_prev_s viewing the elements of h_s[j] reads
        that step as the unrolling leaves it (whether or not it is the same view
        object). activation: a neon Transform (calls and bprop on tensors) or a
        name in ``arrayx.neon.layers.ACTIVATIONS``. nout is unused."""
        where = "compound_rnn_unroll_fprop"
        h_s, h_prev_s, h_ff_s = (_tensor_list(where, n, v) for n, v in
                                 (("h_s", h_s), ("h_prev_s", h_prev_s), ("h_ff_s", h_ff_s)))
        _check_tensor(where, "W_recur", W_recur)
        _check_tensor(where, "bias", bias, optional=True)
        prev_steps, ff_steps = _step_aliases(where, "h_s", h_s, (("h_prev_s", h_prev_s), ("h_ff_s", h_ff_s)))
        hs = [t._read() for t in h_s]
        prev = [j if isinstance(j, int) else t._read() for j, t in zip(prev_steps, h_prev_s)]
        ff = []
        for t, (j, tensor) in enumerate(zip(ff_steps, h_ff_s)):
            if isinstance(j, int) and j != t:
                raise ValueError(f"{where}: h_ff_s[{t}] views step {j} of h_s; only its own step "
                                 "(the feed-forward part accumulated in place) can alias h_s")
            # layers.recurrent recognises the in-place feed-forward by identity
            ff.append(hs[t] if j == t else tensor._read())
        new = layers.compound_rnn_unroll_fprop(W_recur._read(), prev, ff, hs, _read(bias), nout, num_steps,
                                               num_used_steps, self._array_activation(activation, where),
                                               reverse=reverse)
        order = range(len(h_s) - 1, -1, -1) if reverse else range(len(h_s))
        writes = [(h_s[t], new[t]) for t in order if new[t] is not hs[t]]
        _commit_all(writes, [W_recur, bias] + h_prev_s + h_ff_s)

    def compound_rnn_unroll_bprop(self, W_recur, delta_prev_s, delta_s, h_s, nout, num_steps,
                                  num_used_steps, activation, reverse=True):
        """For each used step t (last to first when reverse, the default):
        delta_s[t] = activation.bprop(h_s[t]) * delta_s[t], then
        delta_prev_s[t] += W_recur . delta_s[t] (neon passes the transposed
        recurrent weights). Entries of delta_prev_s viewing a step of delta_s
        accumulate into that step, as in neon's in-place loop; views of the same
        other buffer are one buffer. nout is unused."""
        where = "compound_rnn_unroll_bprop"
        delta_s, delta_prev_s, h_s = (_tensor_list(where, n, v) for n, v in
                                      (("delta_s", delta_s), ("delta_prev_s", delta_prev_s), ("h_s", h_s)))
        _check_tensor(where, "W_recur", W_recur)
        prev_steps, h_steps = _step_aliases(where, "delta_s", delta_s,
                                            (("delta_prev_s", delta_prev_s), ("h_s", h_s)))
        for t, j in enumerate(h_steps):
            if isinstance(j, int):
                raise ValueError(f"{where}: h_s[{t}] views step {j} of delta_s, which the unrolling rewrites")
        ds = [t._read() for t in delta_s]
        # separate buffers are one array per distinct element set, so that two
        # views of one buffer accumulate together
        own = {}
        prev = [j if isinstance(j, int) else own.setdefault(j, t._read())
                for j, t in zip(prev_steps, delta_prev_s)]
        new_d, new_prev = layers.compound_rnn_unroll_bprop(W_recur._read(), prev, ds, [t._read() for t in h_s],
                                                          nout, num_steps, num_used_steps,
                                                          self._array_activation(activation, where),
                                                          reverse=reverse)
        order = range(len(delta_s) - 1, -1, -1) if reverse else range(len(delta_s))
        writes = [(delta_s[t], new_d[t]) for t in order if new_d[t] is not ds[t]]
        done = set()
        for tensor, j, old, value in zip(delta_prev_s, prev_steps, prev, new_prev):
            if not isinstance(j, int) and value is not old and j not in done:
                done.add(j)
                writes.append((tensor, value))
        _commit_all(writes, [W_recur] + h_s)

    def _array_activation(self, activation, where):
        """`activation` for arrayx.neon.layers: a name or one of its ACTIVATIONS as
        it is; a neon Transform (whose call and bprop build op-trees from tensors)
        lifted to arrayx arrays, each call wrapping its array in a temporary
        tensor and translating the op-tree lazily."""
        if isinstance(activation, (str, layers.Activation)):
            return activation
        if not callable(activation) or not callable(getattr(activation, "bprop", None)):
            raise TypeError(f"{where}: activation must be a neon Transform (callable, with a bprop method) "
                            f"or one of {sorted(layers.ACTIVATIONS)}, got {type(activation).__name__}")

        def lift(fn):
            def apply(array):
                tree = fn(self.tensor_cls._wrap(self, array, np.dtype(array.dtype.dtype)))
                return _evaluate.translate(self, tree, array.shape)[0]
            return apply
        return layers.Activation(type(activation).__name__, lift(activation), lift(activation.bprop))

    def compound_bprop_lut(self, nin, inputs, error, error_t, dW, pad_idx, alpha=1.0, beta=0):
        """Lookup-table bprop: dW[ids[j], :] += alpha * error[:, j] for every column
        j whose word id (inputs, (1, nin*N)) is not pad_idx; repeated ids
        accumulate. error is (embedding_dim, nin*N); when None, error_t
        (nin*N, embedding_dim) is read instead. nin and beta are unused (neon's
        layer zeroes dW before the call)."""
        where = "compound_bprop_lut"
        _check_tensor(where, "inputs", inputs)
        _check_tensor(where, "error", error, optional=True)
        _check_tensor(where, "error_t", error_t, optional=True)
        _check_tensor(where, "dW", dW)
        result = layers.compound_bprop_lut(nin, inputs._read(), _read(error), _read(error_t), dW._read(),
                                           pad_idx, alpha=_real(where, "alpha", alpha), beta=beta)
        _commit_all([(dW, result)], (inputs, error, error_t))

# ---------------------------------------------------------------------------
# helpers of the layer-kernel methods

def _check_tensor(where, argname, value, optional=False):
    if value is None and optional:
        return
    if not isinstance(value, Tensor):
        raise TypeError(f"{where}: {argname} must be a Tensor{' or None' if optional else ''}, "
                        f"got {type(value).__name__}")


def _check_layer(where, layer, cls, maker):
    if not isinstance(layer, cls):
        raise TypeError(f"{where}: layer must be the parameter object of {maker}, got {type(layer).__name__}")


def _real(where, argname, value):
    if not isinstance(value, numbers.Real):
        raise TypeError(f"{where}: {argname} must be a real number, got {type(value).__name__}")
    return float(value)


def _read(tensor):
    return None if tensor is None else tensor._read()


def _tensor_list(where, argname, value):
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{where}: {argname} must be a list of Tensors (one per time step), "
                        f"got {type(value).__name__}")
    for i, t in enumerate(value):
        _check_tensor(where, f"{argname}[{i}]", t)
    return list(value)


def _map_sums(array, maps, shape, where, argname):
    """`array` summed over all but its leading `maps` axis, as (maps, 1) (neon's bsum)."""
    if math.prod(shape) != maps:
        raise ValueError(f"{where}: {argname} has shape {shape}; it needs {maps} elements (one per map)")
    return xp.sum(xp.reshape(array, (maps, -1)), axis=1, keepdims=True)


def _commit_all(writes, reads):
    """Write each (tensor, value) in order, then force the written storages with
    those of the tensors read (None allowed), in one plan, as `_evaluate.commit`
    does for one output."""
    if not writes:
        return
    for tensor, value in writes:
        tensor._write(value)
    storages = {id(t._storage): t._storage for t in [w for w, _ in writes] + list(reads) if t is not None}
    _evaluate.force(writes[0][0], list(storages.values()))


def _flat_indices(tensors):
    """For each tensor, the positions in its storage (flattened) of its elements,
    in the tensor's C order: two views alias exactly when these agree. One plan
    over index arrays (the storages' values are not read)."""
    bases, arrays = {}, []
    for t in tensors:
        base = bases.get(id(t._storage))
        if base is None:
            shape = t._storage.array.shape
            base = bases[id(t._storage)] = st.Storage(
                xp.reshape(xp.arange(math.prod(shape), dtype=xp.int64, device=t._device), shape))
        arrays.append(st.read(base, t._chain))
    xp.eval(*arrays)
    return [np.asarray(a).reshape(-1) for a in arrays]


def _step_aliases(where, stepname, steps, named_lists):
    """Which step of `steps` (tensor views written by an unrolling) each tensor of
    the (argname, tensors) lists views: for each list, per tensor, the step index
    (an int) when it covers exactly that step's elements, else a hashable key of
    its elements (equal keys: one buffer). A tensor that overlaps the steps in any
    other way raises ValueError: neon would read a buffer its loop half rewrote."""
    flat = _flat_indices(list(steps) + [t for _, ts in named_lists for t in ts])
    step_of, covered = {}, {}
    for j, (t, idx) in enumerate(zip(steps, flat)):
        step_of.setdefault((id(t._storage), idx.tobytes()), j)
        mask = covered.get(id(t._storage))
        if mask is None:
            mask = covered[id(t._storage)] = np.zeros(math.prod(t._storage.array.shape), dtype=bool)
        mask[idx] = True
    results, pos = [], len(steps)
    for argname, ts in named_lists:
        out = []
        for i, t in enumerate(ts):
            idx = flat[pos]
            pos += 1
            key = (id(t._storage), idx.tobytes())
            if key in step_of:
                out.append(step_of[key])
                continue
            mask = covered.get(id(t._storage))
            if mask is not None and mask[idx].any():
                raise ValueError(f"{where}: {argname}[{i}] overlaps the steps of {stepname} without viewing "
                                 f"exactly one of them")
            out.append(key)
        results.append(out)
    return results
