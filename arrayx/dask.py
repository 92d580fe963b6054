"""arrayx arrays and dask arrays, both ways, without computing anything.

`from_dask(d)` wraps a dask array (from zarr, HDF5, `da.random`, anything)
as an array on the `dask` device; `to_dask(x)` gives the dask array that
computes x. Both need dask installed (`pip install "arrayx[dask]"`).
"""

from . import dtypes as dt, executors
from ._dask import DASK
from .graph.node import Node
from .graph.primitives import BUFFER
from .namespace.array_object import Array
from .namespace.build import node_of
from .scheduler.schedule import realize

__all__ = ["from_dask", "to_dask"]


def _executor():
    if DASK not in executors.devices():
        raise RuntimeError("arrayx.dask: dask is not installed; pip install \"arrayx[dask]\"")
    return executors.executor_for(DASK)


def from_dask(d):
    """An array on the dask device whose values are those of dask array `d`,
    which is not computed (only its shape and dtype are read)."""
    _executor()
    if any(n != n for n in d.shape):
        raise ValueError(f"from_dask: the shape {d.shape} has unknown sizes; call compute_chunk_sizes() first")
    if d.dtype not in dt.FROM_NUMPY:
        raise TypeError(f"from_dask: unsupported dtype {d.dtype}; expected one of {[str(x) for x in dt.ALL]}")
    return Array._new(Node(BUFFER, (), (), tuple(int(n) for n in d.shape), dt.FROM_NUMPY[d.dtype], DASK, d))


def to_dask(x):
    """The dask array that computes array x: the graph of x's pending work on
    the dask device, built and not run (an array on another device is moved
    there first, which computes it)."""
    node = node_of(x, "to_dask")
    realize([node])
    if node.device is DASK:
        return node.buffer
    return executors.executor_for(node.device).transfer(node.buffer, _executor())
