"""Executors, one per device kind, and the registry that maps devices to them."""

from ..device import CPU
from .cpu import CPUExecutor

cpu_executor = CPUExecutor()
_EXECUTORS = {CPU: cpu_executor}


def register(device, executor):
    """Make `executor` the owner of `device`'s buffers."""
    _EXECUTORS[device] = executor


def unregister(device):
    _EXECUTORS.pop(device, None)


def devices():
    return tuple(_EXECUTORS)


def executor_for(device):
    return _EXECUTORS[device]
