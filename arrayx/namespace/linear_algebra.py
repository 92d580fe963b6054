"""Linear algebra functions of the main namespace."""

from .. import dtypes as dt
from .build import P, astype_node, make, node_of, same_device, wrap


def matmul(x1, x2, /):
    """Computes the matrix product (1-D operands are promoted to matrices and the extra axis removed)."""
    n1, n2 = node_of(x1, "matmul", "x1"), node_of(x2, "matmul", "x2")
    same_device("matmul", (n1, n2))
    for n, argname in ((n1, "x1"), (n2, "x2")):
        if n.dtype not in dt.CATEGORIES["numeric"]:
            raise TypeError(f"matmul: {argname} has dtype {n.dtype}; expected a numeric dtype")
        if len(n.shape) == 0:
            raise ValueError(f"matmul: {argname} must have at least one dimension, got a 0-d array")
    k1 = n1.shape[-1]
    k2 = n2.shape[-2] if len(n2.shape) > 1 else n2.shape[0]
    if k1 != k2:
        raise ValueError(f"matmul: contracted dimensions differ: x1 has shape {n1.shape}, x2 has shape {n2.shape}")
    dtype = dt.PROMOTION[n1.dtype, n2.dtype]
    return wrap(make(P["matmul"], (astype_node(n1, dtype), astype_node(n2, dtype))))


def matrix_transpose(x, /):
    """Transposes a matrix (or a stack of matrices) x."""
    node = node_of(x, "matrix_transpose")
    ndim = len(node.shape)
    if ndim < 2:
        raise ValueError(f"matrix_transpose: x must have at least 2 dimensions, got shape {node.shape}")
    axes = tuple(range(ndim - 2)) + (ndim - 1, ndim - 2)
    return wrap(make(P["permute"], (node,), (axes,)))
