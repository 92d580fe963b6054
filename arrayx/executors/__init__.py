"""The registry that maps devices to their executors (the executor interface
is `executors.base`).

The registry imports no executor: the package that knows them all (`arrayx`)
registers them at import, or, for devices whose discovery initializes a
driver (CUDA), hands over a discovery that runs when devices are first asked
for. The host device's executor is the registry's fallback: a step whose
primitive the executor of its device lacks runs there, with transfers.
"""

import os
import threading

from ..device import CPU

_EXECUTORS = {}
_HOST = CPU
_default = CPU
_MISSING = {}   # kind of device ("cuda") -> why this process has none
_DISCOVERIES = []   # functions that register devices once they are asked for
_discovery_lock = threading.Lock()


def register_on_first_use(discover):
    """Call `discover(register, record_missing)` when devices are first asked
    for, not now: finding CUDA devices initializes the driver, and a process
    forked after that (multiprocessing, dask workers) cannot use CUDA."""
    _DISCOVERIES.append(discover)


def _discover():
    # Removed once it has run, so that other threads asking meanwhile wait
    # for its devices here (a discovery must not ask for devices itself).
    with _discovery_lock:
        while _DISCOVERIES:
            _DISCOVERIES[0](register, record_missing)
            _DISCOVERIES.pop(0)


def record_missing(kind, why):
    """Remember why no device of `kind` (the part of its name before ':') is registered."""
    _MISSING[kind] = why


def missing_reason(name):
    """Why there is no device called `name` (e.g. "cuda:0"), or None when nothing is known."""
    if _DISCOVERIES:
        _discover()
    return _MISSING.get(name.partition(":")[0])


def register(device, executor):
    """Make `executor` the owner of `device`'s buffers."""
    _EXECUTORS[device] = executor


def unregister(device):
    _EXECUTORS.pop(device, None)


def devices():
    if _DISCOVERIES:
        _discover()
    return tuple(_EXECUTORS)


def default_device():
    """The device arrays are created on when no device is given."""
    return _default


def set_default_device(device):
    """Make `device` (a registered Device) the default."""
    global _default
    _default = device


def executor_for(device):
    try:
        return _EXECUTORS[device]
    except KeyError:
        if not _DISCOVERIES:
            raise
    _discover()
    return _EXECUTORS[device]


# DLPack device types whose memory NumPy reads: kDLCPU, kDLCUDAHost,
# kDLROCMHost, kDLCUDAManaged.
_HOST_DLPACK = frozenset({1, 3, 11, 13})


def device_of_dlpack(kind, ordinal):
    """The registered Device holding DLPack device (kind, ordinal)'s memory, or None."""
    if kind in _HOST_DLPACK:
        return _HOST
    return next((d for d in devices() if _EXECUTORS[d].dlpack_device(None) == (kind, ordinal)), None)


def fallback():
    """The executor that runs primitives other executors lack: the host's."""
    return _EXECUTORS[_HOST]


def default_device_from_environment():
    """Make the device named by the environment variable ARRAYX_DEVICE (e.g.
    cuda:0, for array-api-tests on a GPU) the default for the whole process,
    when it is set. Called once the executors are registered."""
    global _default
    name = os.environ.get("ARRAYX_DEVICE")
    if not name:
        return
    named = {d.name: d for d in devices()}
    if name not in named:
        why = missing_reason(name)
        raise RuntimeError(f"ARRAYX_DEVICE={name!r} is not a device here{': ' + why if why else ''}; "
                           f"devices: {sorted(named)}")
    _default = named[name]
