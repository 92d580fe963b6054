"""The GPU executor's DLPack capsules (arrayx/_gpu/dlpack.py), checked on
host memory against NumPy's own DLPack producer and consumer.

The capsule code never touches the memory it describes, so NumPy is an
oracle for the struct layouts, the capsule names and the deleter protocol
without a GPU: capsules NumPy makes are parsed here, and capsules made here
are read by `np.from_dlpack`. The executor's own export and import of device
memory are in test_gpu_executor.py (on the emulated device in CI), exchanges
with PyTorch and CuPy in test_gpu_interop.py (a real GPU).
"""

import ctypes
import gc
import weakref

import numpy as np
import pytest

import arrayx as xp
from arrayx import dtypes as dt, executors
from arrayx._gpu import dlpack

HOST = (dlpack.KDL_CPU, 0)


class Producer:
    """An object exporting one prepared capsule, as a library's array would."""

    def __init__(self, capsule, device=HOST):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


class Owner:
    """Stands for the device allocation an exported capsule keeps alive."""


def element_strides(a):
    return tuple(s // a.itemsize for s in a.strides)


ARRAYS = {
    "float32 strided": lambda: np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2],
    "bool 0-d": lambda: np.array(True),
    "complex128 empty": lambda: np.zeros((2, 0, 3), np.complex128),
    "uint16 vector": lambda: np.arange(5, dtype=np.uint16),
    "float16 transposed": lambda: np.ones((3, 5), np.float16).T,
    "int64 broadcast": lambda: np.broadcast_to(np.arange(3), (4, 3)),
}


@pytest.mark.parametrize("versioned", [False, True], ids=["legacy", "versioned"])
@pytest.mark.parametrize("name", list(ARRAYS))
def test_parse_reads_numpys_capsules(name, versioned):
    a = ARRAYS[name]()
    if not versioned and not a.flags.writeable:
        a = np.broadcast_to(a.copy(), a.shape).copy()   # legacy DLPack exports writable memory only
    capsule = a.__dlpack__(max_version=(1, 0)) if versioned else a.__dlpack__()
    tensor = dlpack.Imported(capsule)
    assert tensor.ptr == a.__array_interface__["data"][0]
    assert tensor.shape == a.shape
    if a.size > 1:   # strides of empty and one-element arrays carry no meaning
        assert tensor.strides == element_strides(a)
    assert tensor.dtype == dt.FROM_NUMPY[a.dtype]
    assert tensor.device == HOST
    assert tensor.read_only == (versioned and not a.flags.writeable)


def test_parse_marks_the_capsule_used_and_calls_numpys_deleter_once():
    a = np.arange(6.0)
    capsule = a.__dlpack__(max_version=(1, 0))
    tensor = dlpack.Imported(capsule)
    with pytest.raises(BufferError, match="no unconsumed DLPack capsule"):
        dlpack.Imported(capsule)   # a capsule is consumed once
    del tensor, capsule
    gc.collect()   # NumPy's deleter released its reference; a double free would crash here
    assert a[3] == 3.0


@pytest.mark.parametrize("versioned", [False, True], ids=["legacy", "versioned"])
def test_numpy_reads_exported_capsules(versioned):
    a = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
    view = a[::-1].transpose(2, 0, 1)   # negative and permuted strides
    ptr = view.__array_interface__["data"][0]
    owner = Owner()
    capsule = dlpack.export(ptr, view.shape, element_strides(view), dt.float64, HOST, owner, versioned,
                            read_only=versioned)
    got = np.from_dlpack(Producer(capsule))
    np.testing.assert_array_equal(got, view)
    assert np.shares_memory(got, a)
    if versioned:
        assert not got.flags.writeable


def test_exported_owner_lives_until_the_consumer_releases_it():
    a = np.arange(8, dtype=np.int32)
    owner = Owner()
    alive = weakref.ref(owner)
    gc.collect()   # releases garbage capsules earlier tests left
    before = dlpack.exported_count()
    capsule = dlpack.export(a.ctypes.data, a.shape, (1,), dt.int32, HOST, owner, True)
    del owner
    got = np.from_dlpack(Producer(capsule))
    del capsule
    gc.collect()
    assert alive() is not None   # NumPy still views the memory
    assert dlpack.exported_count() == before + 1
    del got
    gc.collect()
    assert alive() is None
    assert dlpack.exported_count() == before


@pytest.mark.parametrize("versioned", [False, True], ids=["legacy", "versioned"])
def test_unconsumed_capsule_releases_its_owner(versioned):
    owner = Owner()
    alive = weakref.ref(owner)
    capsule = dlpack.export(0, (2, 2), (2, 1), dt.float32, (dlpack.KDL_CUDA, 0), owner, versioned)
    del owner, capsule
    gc.collect()
    assert alive() is None


def test_round_trip_keeps_layout_dtype_and_flags():
    owner = Owner()
    capsule = dlpack.export(4096, (3, 0, 7), (7, 7, 1), dt.complex64, (dlpack.KDL_CUDA, 1), owner, True,
                            copied=True)
    tensor = dlpack.Imported(capsule)
    assert (tensor.ptr, tensor.shape, tensor.strides, tensor.dtype, tensor.device, tensor.read_only) == \
        (4096, (3, 0, 7), (7, 7, 1), dt.complex64, (dlpack.KDL_CUDA, 1), False)


def test_release_waits_for_before_release_then_calls_the_deleter():
    owner = Owner()
    alive = weakref.ref(owner)
    events = []
    tensor = dlpack.Imported(dlpack.export(0, (1,), (1,), dt.int8, HOST, owner, True))
    tensor.before_release = lambda: events.append(alive() is not None)
    del owner, tensor
    gc.collect()
    assert events == [True] and alive() is None


def test_unsupported_dlpack_dtype_is_a_type_error():
    capsule = dlpack.export(0, (2,), (1,), dt.uint16, HOST, Owner(), True)
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    managed = ctypes.cast(get_pointer(ctypes.c_void_p(id(capsule)), dlpack.VERSIONED),
                          ctypes.POINTER(dlpack.DLManagedTensorVersioned))
    managed.contents.dl_tensor.dtype.code = 4   # kDLBfloat, 16 bits: no arrayx dtype
    with pytest.raises(TypeError, match="from_dlpack: unsupported DLPack dtype .code 4, bits 16"):
        dlpack.Imported(capsule)


def test_from_dlpack_of_cuda_memory_without_a_cuda_executor_names_the_device():
    if any(d.name == "cuda:0" for d in executors.devices()):
        pytest.skip("cuda:0 is registered here; test_gpu_executor.py covers CUDA imports")
    capsule = dlpack.export(0, (2,), (1,), dt.float32, (dlpack.KDL_CUDA, 0), Owner(), True)
    with pytest.raises(BufferError, match=r"from_dlpack: x is on DLPack device \(2, 0\)"):
        xp.from_dlpack(Producer(capsule, device=(dlpack.KDL_CUDA, 0)))


def test_device_of_dlpack_maps_host_kinds_to_the_cpu():
    for kind in (1, 3, 13):   # kDLCPU, kDLCUDAHost, kDLCUDAManaged
        assert executors.device_of_dlpack(kind, 0) is xp.__array_namespace_info__().devices()[0]
    assert executors.device_of_dlpack(2, 99) is None   # no 100th GPU
    assert executors.device_of_dlpack(4, 0) is None    # OpenCL


@pytest.mark.parametrize("versioned", [False, True], ids=["legacy", "versioned"])
def test_numpy_refusing_a_cuda_capsule_raises_its_own_error_and_releases_the_owner(versioned):
    owner = Owner()
    alive = weakref.ref(owner)
    gc.collect()   # releases garbage capsules earlier tests left
    before = dlpack.exported_count()

    class CudaArray:   # exports a new capsule that only the consumer holds, as an Array does
        def __dlpack__(self, **kwargs):
            return dlpack.export(0, (2,), (1,), dt.float32, (dlpack.KDL_CUDA, 0), owner, versioned)

        def __dlpack_device__(self):
            return (dlpack.KDL_CUDA, 0)
    with pytest.raises(RuntimeError, match="Unsupported device"):   # NumPy's own error, not a SystemError
        np.from_dlpack(CudaArray())
    del owner
    gc.collect()
    assert alive() is None
    assert dlpack.exported_count() == before


def test_a_collection_keeps_an_unconsumed_capsule_someone_holds():
    a = np.arange(4, dtype=np.int16)
    owner = Owner()
    alive = weakref.ref(owner)
    capsule = dlpack.export(a.ctypes.data, a.shape, (1,), dt.int16, HOST, owner, True)
    del owner
    gc.collect()
    assert alive() is not None
    np.testing.assert_array_equal(np.from_dlpack(Producer(capsule)), a)   # the tensor is still whole
