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

Modules: ``geometry`` (output sizes, layer parameter objects), ``arguments``
(the output and accumulation conventions above), ``convolution``,
``pooling``, ``recurrent`` (RNN unrolling and its activations) and ``lookup``
(embedding bprop).
"""

from .convolution import bprop_conv, bprop_deconv, fprop_conv, fprop_deconv, update_conv, update_deconv
from .geometry import ConvLayer, DeconvLayer, PoolLayer, conv_layer, deconv_layer, output_dim, pool_layer
from .lookup import compound_bprop_lut
from .pooling import bprop_pool, fprop_pool, pool_argmax
from .recurrent import ACTIVATIONS, Activation, compound_rnn_unroll_bprop, compound_rnn_unroll_fprop

__all__ = [
    "ACTIVATIONS", "Activation", "ConvLayer", "DeconvLayer", "PoolLayer",
    "bprop_conv", "bprop_deconv", "bprop_pool", "compound_bprop_lut",
    "compound_rnn_unroll_bprop", "compound_rnn_unroll_fprop", "conv_layer",
    "deconv_layer", "fprop_conv", "fprop_deconv", "fprop_pool", "output_dim",
    "pool_argmax", "pool_layer", "update_conv", "update_deconv",
]
