"""The GPU executor against the CPU executor, on conftest's `gpu`: a real
CUDA device, else the emulated `cuda:0` (arrayx/_gpu/emulation: host memory
addressed like device memory, the generated kernels compiled for the host),
so that CI runs the executor, its transfers, views, launches and GEMM calls.
"""

import gc

import numpy as np
import pytest

import arrayx as xp
from arrayx import executors
from arrayx._gpu import dlpack, executor as gpu_executor
from arrayx._gpu.emulation import host_kernels
from arrayx.scheduler import schedule
from arrayx.scheduler.schedule import MEMORY_BYTES


def both(fn, *arrays, gpu):
    """fn on CPU arrays and on their GPU copies, both as NumPy."""
    on_cpu = fn(*[xp.asarray(a, device="cpu") for a in arrays])
    on_gpu = fn(*[xp.asarray(a, device=gpu) for a in arrays])
    assert on_gpu.device == gpu
    return np.asarray(on_gpu.to_device("cpu")), np.asarray(on_cpu)


def rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(dtype)


def test_transfers_round_trip(gpu):
    x = rand(3, 4)
    assert np.array_equal(np.asarray(xp.asarray(x, device=gpu).to_device("cpu")), x)


@pytest.mark.parametrize("value", [0, -3, 2.5, True])
def test_zero_dimensional_arrays_stay_zero_dimensional_on_the_gpu(gpu, value):
    x = xp.asarray(value, device=gpu)
    assert x.shape == () and np.asarray(x.to_device("cpu")).shape == ()
    assert type(value)(x) == value


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_fused_chains_match_the_cpu(gpu, dtype):
    got, want = both(lambda x, y: xp.tanh(x * y + x / y) + 1 / (1 + xp.exp(-x)), rand(300, 257, dtype=dtype),
                     rand(257, seed=1, dtype=dtype), gpu=gpu)
    # A few units in the last place of terms of magnitude about 1 (CUDA's tanh
    # and exp are not NumPy's), absolute as well: the sum cancels to near 0.
    tolerance = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-14}[dtype]
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_products_and_sums_round_as_on_the_cpu_where_they_cancel(gpu, dtype):
    # Every product and sum rounded on its own, as NumPy does. A fused
    # multiply-add (NVRTC's default) rounds once: where the sum cancels, it
    # leaves the product's rounding error instead of the CPU's 0 or one ulp.
    a = np.random.default_rng(3).uniform(1, 2, 1000).astype(dtype)
    b = np.random.default_rng(4).uniform(1, 2, 1000).astype(dtype)
    d = np.nextafter(b, dtype(3))
    z = -(a * b)
    got, want = both(lambda a, b, d, z: xp.stack([a * b - a * d, a * b + z]), a, b, d, z, gpu=gpu)
    assert np.count_nonzero(want[1]) == 0   # where a fused a*b + z gives a*b's rounding error
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape", [(0, 2), (3, 0, 2), (0, 4, 3)])
def test_reductions_of_empty_views_at_an_offset_give_the_identity(gpu, shape):
    # An empty view's pointer (its buffer's start plus the view's offset) may
    # lie past its allocation: a kernel that reads no point of it gets NULL
    # (a driver would not notice; the emulated device checks every pointer a
    # launch gets, and refused these).
    x = np.zeros(shape, np.float32)
    got, want = both(lambda x: xp.stack([xp.all(x[..., 1:] >= x[..., :1]), xp.any(x[..., 1:] > 0.0)]), x, gpu=gpu)
    np.testing.assert_array_equal(got, want)
    got, want = both(lambda x: xp.sum(x[..., 1:] * 2.0, axis=-1), x, gpu=gpu)
    np.testing.assert_array_equal(got, want)


def _mapped_kernel_libraries():
    """Kernel libraries of the emulated device mapped into this process (0 on a real GPU)."""
    with open("/proc/self/maps") as maps:
        return len({line.split()[-1] for line in maps if line.rstrip().endswith(".so")
                    and line.split()[-1].startswith(host_kernels.cache_dir())})


def test_programs_past_the_kept_number_are_unloaded_and_load_again(gpu, monkeypatch):
    """A long process meets thousands of group structures: only PROGRAMS_KEPT
    programs stay loaded (on the emulated device, each is a shared library
    mapped into the process), and a dropped one loads again when run."""
    monkeypatch.setattr(gpu_executor, "PROGRAMS_KEPT", 2)
    schedule.clear_plan_cache()
    a = rand(64)
    x = xp.asarray(a, device=gpu)
    chains = [lambda v, k=k: [v := xp.sin(v) * 1.5 for _ in range(k)][-1] for k in range(1, 7)]
    for chain in chains:
        xp.eval(chain(x))
    gc.collect()
    # The two programs kept, and launch.cpp's grid walk, loaded once for all.
    assert _mapped_kernel_libraries() <= 3
    expected = np.sin(a.astype(np.float64)) * 1.5
    # float32 sin on the device: a few units in the last place.
    np.testing.assert_allclose(np.asarray(chains[0](x).to_device("cpu")), expected, rtol=1e-6)


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_reductions_match_the_cpu(gpu, axis):
    got, want = both(lambda x: xp.sum(x * x, axis=axis), rand(1000, 513), gpu=gpu)
    np.testing.assert_allclose(got, want, rtol=1e-4)   # summation order differs
    got, want = both(lambda x: xp.max(x, axis=axis), rand(1000, 513), gpu=gpu)
    np.testing.assert_array_equal(got, want)


def test_softmax_matches_the_cpu(gpu):
    def softmax(x):
        e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
        return e / xp.sum(e, axis=-1, keepdims=True)
    got, want = both(softmax, rand(64, 1000), gpu=gpu)
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axes", [((64, 1000), (1,)), ((3, 5, 70), (2,)), ((4, 6, 7), (1, 2)), ((9, 1), (1,)),
                                        ((300,), (0,))])
def test_row_logsumexp_is_one_kernel_matching_the_cpu(gpu, dtype, shape, axes):
    def logsumexp(x):
        top = xp.max(x, axis=axes, keepdims=True)
        return top + xp.log(xp.sum(xp.exp(x - top), axis=axes, keepdims=True))
    a = rand(*shape, dtype=dtype) * 10
    rows = a.reshape(-1, np.prod([shape[d] for d in axes]))
    if len(rows) > 2:
        rows[0, -1], rows[1, 0], rows[2, :] = np.nan, np.inf, -np.inf   # NaN rows, as NumPy's formula gives
    assert len(xp.debug.fused_groups(logsumexp(xp.asarray(a, device=gpu)))) == 1
    with np.errstate(all="ignore"):
        got, want = both(logsumexp, a, gpu=gpu)
    # The row sums add in another order, and CUDA's exp and log are not NumPy's: a few units in the last place.
    np.testing.assert_allclose(got, want, rtol={np.float32: 1e-5, np.float64: 1e-12}[dtype])


def test_views_and_strided_inputs_match_the_cpu(gpu):
    got, want = both(lambda x: xp.flip(x[::2, 1:], axis=0).T * 2 + x[0, 1::2], rand(8, 9), gpu=gpu)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shapes", [((64, 32), (32, 16)), ((5, 64, 32), (32, 16)), ((32,), (32, 8)), ((7, 32), (32,))])
def test_matmul_on_cublas_matches_the_cpu(gpu, shapes):
    a, b = rand(*shapes[0]), rand(*shapes[1], seed=1)
    got, want = both(lambda a, b: a @ b, a, b, gpu=gpu)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.complex64])
def test_matmul_of_transposed_and_batched_views_matches_the_cpu(gpu, dtype):
    # Views give cuBLAS transposed operands, leading dimensions larger than
    # a row and batch strides; float16 rounds once from float32 sums.
    a, b = rand(6, 40, 24, dtype=dtype), rand(3, 40, seed=1, dtype=dtype)
    got, want = both(lambda a, b: xp.permute_dims(a, (0, 2, 1))[::2, 1:, 3:] @ b[:, 3:].T, a, b, gpu=gpu)
    tolerance = {np.float16: 1e-2, np.float64: 1e-12, np.complex64: 1e-5}[dtype]   # sums of 20 products
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


def test_primitives_without_a_kernel_fall_back_to_the_cpu(gpu):
    got, want = both(lambda x: xp.sort(x, axis=-1) + 1, rand(10, 10), gpu=gpu)
    np.testing.assert_array_equal(got, want)


def test_asarray_of_a_python_list_copies_it_to_the_gpu(gpu):
    # The executor once took asarray's "may share a fresh array" for
    # copy=False, which a device cannot honour.
    x = xp.asarray([[1.0, 2.0], [3.0, 4.0]], device=gpu)
    assert x.device == gpu
    np.testing.assert_array_equal(np.asarray(x.to_device("cpu")), [[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray(np.ones(3), device=gpu, copy=False)


def test_mixing_devices_is_an_error(gpu):
    with pytest.raises(ValueError, match="different devices"):
        xp.asarray([1.0], device="cpu") + xp.asarray([1.0], device=gpu)


def test_running_out_of_device_memory_is_a_memory_error(gpu):
    total = executors.executor_for(gpu).total_memory
    if total >= MEMORY_BYTES:   # pragma: no cover - a device with more memory than its host
        pytest.skip("the scheduler refuses a result larger than the host's memory before the device can")
    # A view of one element computes nothing: the sum's result is the first allocation.
    big = xp.broadcast_to(xp.asarray(0.0, dtype=xp.float32, device=gpu), (total // 4 + 1,))
    with pytest.raises(MemoryError, match="out of device memory"):
        xp.eval(big + 1)


def device_pointer(array):
    node = array._node
    xp.eval(array)
    return node.buffer.ptr


class ForeignProducer:
    """A library's array exporting one prepared capsule."""

    def __init__(self, capsule, device):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


class Producer:
    """A DLPack producer other than an arrayx Array, passing on `array`'s capsules."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_dlpack_export_and_import_share_device_memory(gpu):
    # The export and the import of the executor itself (the emulated device
    # too: a CUDA consumer other than arrayx cannot read emulated memory).
    x = xp.asarray(rand(3, 4), device=gpu) * 2
    y = xp.from_dlpack(Producer(x.T))
    assert y.device == gpu and device_pointer(y) == device_pointer(x)
    np.testing.assert_array_equal(np.asarray((y + 1).to_device("cpu")), np.asarray(x.to_device("cpu")).T + 1)


def read_device(runtime, tensor):
    """What a DLPack consumer other than arrayx sees: the elements `tensor`
    (a parsed capsule) describes, read from device memory by its pointer,
    element strides and dtype alone (with the device's context current, as
    any consumer needs)."""
    itemsize = tensor.dtype.itemsize
    span = 1 + sum((n - 1) * s for n, s in zip(tensor.shape, tensor.strides)) if 0 not in tensor.shape else 0
    raw = np.empty(span * itemsize, np.uint8)
    if span:
        with runtime.active():
            runtime.copy_dtoh(raw, tensor.ptr)
            runtime.synchronize()
    return np.lib.stride_tricks.as_strided(raw.view(tensor.dtype.dtype), tensor.shape,
                                           [s * itemsize for s in tensor.strides]).copy()


def test_dlpack_export_describes_device_memory_to_another_consumer(gpu):
    # The consumer is dlpack.Imported (checked against NumPy's capsules in
    # test_gpu_dlpack.py) reading device memory through the runtime, as
    # PyTorch or CuPy would read it on a real GPU (tests/test_gpu_interop.py).
    executor = executors.executor_for(gpu)
    x = xp.asarray(rand(3, 4), device=gpu) * 2
    host = np.asarray(x.to_device("cpu"))
    shared = dlpack.Imported(x.T.__dlpack__(max_version=(1, 0)))
    assert shared.device == (dlpack.KDL_CUDA, executor.ordinal)
    assert (shared.ptr, shared.shape, shared.strides) == (device_pointer(x), (4, 3), (1, 4))
    assert shared.read_only   # a view of x: the consumer must not write through it
    np.testing.assert_array_equal(read_device(executor.runtime, shared), host.T)
    # Negative strides are exported as a copy, which the consumer may write.
    copied = dlpack.Imported(xp.flip(x, axis=0).__dlpack__(max_version=(1, 0)))
    assert copied.ptr != device_pointer(x) and min(copied.strides) > 0 and not copied.read_only
    np.testing.assert_array_equal(read_device(executor.runtime, copied), host[::-1])
    with pytest.raises(BufferError, match="negative strides"):
        xp.flip(x, axis=0).__dlpack__(copy=False)


def test_dlpack_import_of_another_producers_device_memory_is_zero_copy(gpu):
    executor = executors.executor_for(gpu)
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    with executor.runtime.active():   # the producer's context, current as it writes its memory
        allocation = executor.runtime.alloc(values.nbytes)
        ptr = int(allocation)
        executor.runtime.copy_htod(ptr, values)
    capsule = dlpack.export(ptr, (4, 3), (1, 4), values.dtype, (dlpack.KDL_CUDA, executor.ordinal),
                            allocation, versioned=True)
    producer = ForeignProducer(capsule, (dlpack.KDL_CUDA, executor.ordinal))
    y = xp.from_dlpack(producer)
    del allocation, capsule, producer   # y keeps the producer's memory alive
    assert y.device == gpu and y.shape == (4, 3) and device_pointer(y) == ptr
    np.testing.assert_array_equal(np.asarray((y + 1).to_device("cpu")), values.T + 1)


def test_numpy_from_dlpack_of_a_device_array_raises_numpys_error_and_releases_the_export(gpu):
    # NumPy refuses CUDA memory; its error must reach the user (it once ended in
    # a SystemError) and the exported buffer must not stay referenced.
    x = xp.asarray(rand(3, 4), device=gpu) * 2
    host = np.asarray(x.to_device("cpu"))
    gc.collect()   # releases garbage capsules earlier tests left
    before = dlpack.exported_count()
    with pytest.raises(RuntimeError, match="Unsupported device"):
        np.from_dlpack(x)
    gc.collect()
    assert dlpack.exported_count() == before
    np.testing.assert_array_equal(np.asarray(x.to_device("cpu")), host)


def test_dlpack_import_to_the_host_copies_and_copy_false_is_refused(gpu):
    x = xp.asarray(rand(3, 4), device=gpu)
    on_cpu = xp.from_dlpack(Producer(x), device="cpu")
    assert on_cpu.device == xp.Device("cpu")
    np.testing.assert_array_equal(np.asarray(on_cpu), np.asarray(x.to_device("cpu")))
    with pytest.raises(ValueError, match="copy=False but x is on cuda"):
        xp.from_dlpack(Producer(x), device="cpu", copy=False)


def test_dlpack_to_the_host_copies(gpu):
    x = xp.asarray(rand(5), device=gpu)
    np.testing.assert_array_equal(np.from_dlpack(x, device="cpu"), np.asarray(x.to_device("cpu")))
