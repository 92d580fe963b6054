"""Executors, one per device kind, and the registry that maps devices to them.

The host device's executor is the registry's fallback: a step whose primitive
the executor of its device lacks runs there, with transfers.
"""

from ..device import CPU
from .._cpu import CPUExecutor

cpu_executor = CPUExecutor()
_EXECUTORS = {CPU: cpu_executor}
_HOST = CPU


def register(device, executor):
    """Make `executor` the owner of `device`'s buffers."""
    _EXECUTORS[device] = executor


def unregister(device):
    _EXECUTORS.pop(device, None)


def devices():
    return tuple(_EXECUTORS)


def executor_for(device):
    return _EXECUTORS[device]


def fallback():
    """The executor that runs primitives other executors lack: the host's."""
    return _EXECUTORS[_HOST]
