"""Lookup-table (embedding) bprop."""

import arrayx as xp
from arrayx.namespace.build import P, make, wrap

from .arguments import as_array


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
        rows = xp.matrix_transpose(as_array(error, name, "error"))
    elif error_t is not None:
        rows = as_array(error_t, name, "error_t")
    else:
        raise ValueError("%s: pass error or error_t" % name)
    if isinstance(dW, (tuple, list)):
        dW = xp.zeros(tuple(dW), dtype=rows.dtype)
    dW = as_array(dW, name, "dW")
    if dW.ndim != 2 or rows.ndim != 2 or rows.shape[1] != dW.shape[1]:
        raise ValueError("%s: error rows of shape %s do not match dW of shape %s"
                         % (name, tuple(rows.shape), tuple(dW.shape)))
    ids = xp.reshape(as_array(inputs, name, "inputs"), (-1,))
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
