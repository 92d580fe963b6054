"""The dask executor: buffers are dask arrays, plans become dask graphs.

`register_device()` registers the `dask` device when dask is installed;
`import arrayx` imports no dask either way (dask.array takes most of a
second to import), the executor imports it when it first builds a graph.
"""

from importlib.util import find_spec

from ..device import Device

DASK = Device("dask")


def register_device(register):
    """Call `register(device, executor)` for the dask device, if dask is installed."""
    if find_spec("dask") is None:
        return
    from .executor import DaskExecutor
    register(DASK, DaskExecutor())
