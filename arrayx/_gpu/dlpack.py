"""DLPack capsules for device memory, through ctypes.

NumPy makes and reads DLPack capsules only for host memory, so the GPU
executor builds its own: `export` wraps a device pointer in a capsule (the
legacy `dltensor` or, for consumers that ask for DLPack >= 1.0, the versioned
`dltensor_versioned` with its read-only flag), and `Imported` takes one apart.
Nothing here touches the memory or needs a GPU; the layouts follow
dlpack.h (v1.0). The capsule protocol is the array API standard's: a consumer
renames a capsule it takes to `used_...` and becomes responsible for calling
the deleter; the tensor of a capsule nobody took is released once the capsule
is garbage.
"""

import ctypes
import gc
import sys
from typing import NamedTuple

from .. import dtypes as dt
from ..graph.primitives import contiguous_strides

KDL_CPU, KDL_CUDA = 1, 2
READ_ONLY, IS_COPIED = 1, 2   # DLPACK_FLAG_BITMASK_*
VERSION = (1, 0)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


LegacyDeleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
VersionedDeleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", LegacyDeleter)]
DLManagedTensorVersioned._fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                                     ("deleter", VersionedDeleter), ("flags", ctypes.c_uint64),
                                     ("dl_tensor", DLTensor)]

# DLDataTypeCode of each dtype kind: kDLInt, kDLUInt, kDLFloat, kDLComplex, kDLBool.
_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}
_DTYPES = {(_CODES[d.kind], d.itemsize * 8): d for d in dt.ALL}

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
# These take the capsule as a plain pointer, so that inspecting it adds no
# reference (the sweep below counts them).
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.c_void_p, ctypes.c_char_p]

# Capsule names, and the names a consumer gives a capsule it took. A capsule
# keeps a pointer to its name, not a copy: these bytes objects live forever.
LEGACY, VERSIONED = b"dltensor", b"dltensor_versioned"
USED = {LEGACY: b"used_dltensor", VERSIONED: b"used_dltensor_versioned"}


class Exported(NamedTuple):
    """What keeps an exported tensor alive until its deleter runs."""
    managed: ctypes.Structure
    shape: ctypes.Array
    strides: ctypes.Array
    owner: object
    capsule: object   # held here, so that a capsule the consumer dropped is seen by `_sweep`
    name: bytes


# Exported tensors by the address of their managed struct. Each step on it is
# one atomic dict operation, so it needs no lock (a lock taken here could be
# re-entered by a garbage collection running `_sweep` on the same thread).
_exported = {}


def _release(address):
    _exported.pop(address, None)


_legacy_deleter = LegacyDeleter(lambda managed: _release(ctypes.addressof(managed.contents)))
_versioned_deleter = VersionedDeleter(lambda managed: _release(ctypes.addressof(managed.contents)))


def _references(entry):
    return sys.getrefcount(entry.capsule)


# The count `_references` gives for a capsule only its registry entry holds.
_ONLY_THE_REGISTRY = _references(Exported(None, None, None, None, object(), b""))


def _sweep():
    # Capsules have no destructor: CPython runs a capsule's destructor while
    # the capsule is deallocated, which may be with the consumer's exception
    # pending (NumPy drops a CUDA capsule it refuses that way), and a ctypes
    # callback there runs Python, clobbers that error and ends in a SystemError.
    # Instead a capsule nobody else holds and no consumer took is released here.
    for address, entry in _exported.copy().items():   # a copy: a collection may sweep during this one
        if (_references(entry) == _ONLY_THE_REGISTRY
                and _api.PyCapsule_IsValid(ctypes.c_void_p(id(entry.capsule)), entry.name)):
            _release(address)


def _sweep_at_collection(phase, info):
    # A collection never starts with an exception pending, so Python may run here.
    if phase == "start" and _exported:
        _sweep()


gc.callbacks.append(_sweep_at_collection)


def export(ptr, shape, strides, dtype, device, owner, versioned, read_only=False, copied=False):
    """A DLPack capsule viewing `ptr` (element (0, ..., 0)) with `shape` and
    `strides` (in elements) on DLPack `device` = (type, id); `owner` stays
    alive until the consumer calls the deleter."""
    ndim = len(shape)
    dims = (ctypes.c_int64 * max(ndim, 1))(*shape)
    steps = (ctypes.c_int64 * max(ndim, 1))(*strides)
    if versioned:
        managed = DLManagedTensorVersioned()
        managed.version = DLPackVersion(*VERSION)
        managed.deleter = _versioned_deleter
        managed.flags = (READ_ONLY if read_only else 0) | (IS_COPIED if copied else 0)
    else:
        managed = DLManagedTensor()
        managed.deleter = _legacy_deleter
    tensor = managed.dl_tensor
    tensor.data = ptr
    tensor.device = DLDevice(*device)
    tensor.ndim = ndim
    tensor.dtype = DLDataType(_CODES[dtype.kind], dtype.itemsize * 8, 1)
    tensor.shape = dims
    tensor.strides = steps
    tensor.byte_offset = 0
    _sweep()
    address = ctypes.addressof(managed)
    name = VERSIONED if versioned else LEGACY
    capsule = _api.PyCapsule_New(address, name, None)
    _exported[address] = Exported(managed, dims, steps, owner, capsule, name)
    return capsule


def exported_count():
    """How many exported tensors still wait for their deleter or their
    capsule's collection (for tests)."""
    return len(_exported)


class Imported:
    """A consumed DLPack tensor: its pointer, shape, strides (in elements),
    DType, DLPack device and flags. Keep it alive as long as the memory is
    used; the producer's deleter runs when it is garbage-collected, after
    `before_release()` (the GPU executor waits for its queued kernels there).
    """

    __slots__ = ("ptr", "shape", "strides", "dtype", "device", "read_only", "before_release", "_managed")

    def __init__(self, capsule):
        self._managed = None
        self.before_release = None
        capsule_address = ctypes.c_void_p(id(capsule))
        for name, kind in ((VERSIONED, DLManagedTensorVersioned), (LEGACY, DLManagedTensor)):
            if _api.PyCapsule_IsValid(capsule_address, name):
                break
        else:
            raise BufferError("from_dlpack: __dlpack__ returned no unconsumed DLPack capsule")
        managed = ctypes.cast(_api.PyCapsule_GetPointer(capsule_address, name), ctypes.POINTER(kind))
        if kind is DLManagedTensorVersioned and managed.contents.version.major != 1:
            raise BufferError(f"from_dlpack: DLPack version {managed.contents.version.major} is not supported; "
                              "expected 1")
        tensor = managed.contents.dl_tensor
        code, bits, lanes = tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes
        if lanes != 1 or (code, bits) not in _DTYPES:
            raise TypeError(f"from_dlpack: unsupported DLPack dtype (code {code}, bits {bits}, lanes {lanes}); "
                            f"expected one of {[str(d) for d in dt.ALL]}")
        self.dtype = _DTYPES[code, bits]
        self.shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
        self.strides = (tuple(tensor.strides[i] for i in range(tensor.ndim)) if tensor.strides
                        else contiguous_strides(self.shape))
        if tensor.byte_offset % self.dtype.itemsize:
            raise BufferError(f"from_dlpack: byte_offset {tensor.byte_offset} is not a multiple of "
                              f"the item size {self.dtype.itemsize}")
        self.ptr = (tensor.data or 0) + tensor.byte_offset
        self.device = (tensor.device.device_type, tensor.device.device_id)
        self.read_only = kind is DLManagedTensorVersioned and bool(managed.contents.flags & READ_ONLY)
        _api.PyCapsule_SetName(capsule_address, USED[name])
        self._managed = managed

    def __del__(self):
        managed = self._managed
        if managed is not None and managed.contents.deleter:
            self._managed = None
            if self.before_release is not None:
                self.before_release()
            managed.contents.deleter(managed)
