"""Executors, one per device kind, and the registry that maps devices to them.

The host device's executor is the registry's fallback: a step whose primitive
the executor of its device lacks runs there, with transfers.
"""

import os

from ..device import CPU
from .._cpu import CPUExecutor
from .._gpu import register_devices

cpu_executor = CPUExecutor()
_EXECUTORS = {CPU: cpu_executor}
_HOST = CPU
_default = CPU


def register(device, executor):
    """Make `executor` the owner of `device`'s buffers."""
    _EXECUTORS[device] = executor


def unregister(device):
    _EXECUTORS.pop(device, None)


def devices():
    return tuple(_EXECUTORS)


def default_device():
    """The device arrays are created on when no device is given."""
    return _default


def set_default_device(device):
    """Make `device` (a registered Device) the default."""
    global _default
    _default = device


def executor_for(device):
    return _EXECUTORS[device]


# DLPack device types whose memory NumPy reads: kDLCPU, kDLCUDAHost,
# kDLROCMHost, kDLCUDAManaged.
_HOST_DLPACK = frozenset({1, 3, 11, 13})


def device_of_dlpack(kind, ordinal):
    """The registered Device holding DLPack device (kind, ordinal)'s memory, or None."""
    if kind in _HOST_DLPACK:
        return _HOST
    return next((d for d, ex in _EXECUTORS.items() if ex.dlpack_device(None) == (kind, ordinal)), None)


def fallback():
    """The executor that runs primitives other executors lack: the host's."""
    return _EXECUTORS[_HOST]


register_devices(register)
if os.environ.get("ARRAYX_DEVICE"):
    # The default device for a whole process (array-api-tests on a GPU):
    # ARRAYX_DEVICE=cuda:0.
    _named = {d.name: d for d in _EXECUTORS}
    if os.environ["ARRAYX_DEVICE"] not in _named:
        raise RuntimeError(f"ARRAYX_DEVICE={os.environ['ARRAYX_DEVICE']!r} is not a device here; "
                           f"devices: {sorted(_named)}")
    _default = _named[os.environ["ARRAYX_DEVICE"]]
