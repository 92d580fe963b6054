"""The executor seam: a device whose executor lacks primitives still runs them,
on the CPU executor with transfers, and buffers never cross executors untransferred."""

import importlib
import os
import re
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import arrayx as xp
from arrayx import debug, executors
from arrayx.device import Device
from arrayx.executors.base import Executor, Step
from arrayx._cpu import kernels
from arrayx._cpu.executor import CPUExecutor
from arrayx._cpu.fused import reused_arguments
from arrayx._gpu import register_devices as register_gpu_devices
from arrayx._gpu.executor import GPUExecutor
from arrayx.graph.primitives import PRIMITIVES
from arrayx.scheduler import schedule


class Box:
    """An opaque device buffer: NumPy cannot compute on it, so a step that got
    one without a transfer fails loudly."""

    def __init__(self, value):
        self.value = value


class BoxExecutor(Executor):
    name = "box"
    fuses = True
    refused = frozenset({"exp", "sum", "qr", "nonzero"})

    def __init__(self):
        self.inner = CPUExecutor()
        self.hosted = 0

    def runs(self, op, in_dtypes, dtype):
        return op.name not in self.refused and self.inner.runs(op, in_dtypes, dtype)

    def from_host(self, array, copy=True):
        self.hosted += 1
        return Box(self.inner.from_host(array, copy))

    def to_host(self, buffer):
        assert isinstance(buffer, Box), "box executor received a foreign buffer"
        return self.inner.to_host(buffer.value)

    def copy(self, buffer):
        return Box(self.inner.copy(buffer.value))

    def dlpack(self, buffer, stream, max_version, dl_device, copy):
        return self.inner.dlpack(buffer.value, stream, max_version, dl_device, copy)

    def dlpack_device(self, buffer):
        return self.inner.dlpack_device(buffer.value)

    def compile(self, steps, drops):
        inner = self.inner.compile(steps, drops)
        args = {a for s in steps for a in s.args}

        def run(slots):
            for a in args:
                assert _is_boxed(slots[a]), "box step received a foreign buffer"
            view = [_unbox(b) for b in slots]
            inner(view)
            for s in steps:
                slots[s.out] = _box(view[s.out])
        return run


def _is_boxed(buffer):
    # A multi-output step's slot holds a tuple of buffers.
    return all(isinstance(b, Box) for b in buffer) if isinstance(buffer, tuple) else isinstance(buffer, Box)


def _unbox(buffer):
    if isinstance(buffer, tuple):
        return tuple(_unbox(b) for b in buffer)
    return buffer.value if isinstance(buffer, Box) else buffer


def _box(value):
    if isinstance(value, tuple):
        return tuple(Box(v) for v in value)
    return None if value is None else Box(value)


@pytest.fixture
def box():
    device = Device("box")
    executor = BoxExecutor()
    executors.register(device, executor)
    yield device, executor
    executors.unregister(device)


def test_unsupported_primitive_falls_back_to_cpu_with_transfers(box):
    device, executor = box
    host = np.linspace(-1, 1, 7)
    x = xp.asarray(host, device=device)
    y = xp.sum(xp.exp(x * 2.0) + 1.0)  # exp and sum are not supported by the box executor
    assert y.device == device
    before = executor.hosted
    value = float(y)
    assert value == pytest.approx(np.sum(np.exp(host * 2.0) + 1.0), rel=1e-12)  # same NumPy kernels, same order
    assert isinstance(y._node.buffer, Box)  # the result lives on its own device
    assert executor.hosted > before  # results of the CPU steps were transferred back


def test_multi_output_primitive_falls_back_and_its_outputs_come_back(box):
    device, _ = box
    host = np.random.default_rng(0).standard_normal((4, 3))
    q, r = xp.linalg.qr(xp.asarray(host, device=device))  # qr is not supported by the box executor
    xp.eval(q, r)
    assert isinstance(q._node.buffer, Box) and isinstance(r._node.buffer, Box)
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), host, rtol=1e-12, atol=1e-12)  # well-conditioned 4x3


def test_data_dependent_primitive_falls_back_to_cpu(box):
    device, _ = box
    (idx,) = xp.nonzero(xp.asarray([0.0, 2.0, 0.0, 3.0], device=device))
    assert idx.device == device and isinstance(idx._node.buffer, Box)
    assert np.asarray(idx).tolist() == [1, 3]


def test_devices_cannot_be_mixed_in_one_operation(box):
    device, _ = box
    a = xp.asarray([1.0, 2.0], device=device)
    b = xp.asarray([1.0, 2.0])
    with pytest.raises(ValueError, match="add"):
        a + b


def test_to_device_moves_values_between_executors(box):
    device, _ = box
    a = xp.asarray([1.0, 2.0, 3.0])
    moved = a.to_device(device)
    assert moved.device == device
    back = (moved * 2.0).to_device(xp.Device("cpu"))
    assert np.asarray(back).tolist() == [2.0, 4.0, 6.0]


def test_a_registered_device_is_reachable_by_its_name(box):
    device, _ = box
    moved = xp.asarray([1.0, 2.0]).to_device(device.name)
    assert moved.device == device and np.asarray(moved.to_device("cpu")).tolist() == [1.0, 2.0]
    assert xp.zeros(2, device=device.name).device == device


def test_unknown_device_is_a_value_error_naming_the_function():
    with pytest.raises(ValueError, match="zeros"):
        xp.zeros(3, device=Device("nowhere"))


class FakeDriverError(Exception):
    """pycuda.driver.Error of a stand-in PyCUDA whose cuInit fails."""


def fake_pycuda_without_devices():
    def init():
        raise FakeDriverError("cuInit failed: no CUDA-capable device is detected")
    driver = types.ModuleType("pycuda.driver")
    driver.Error, driver.init = FakeDriverError, init
    package = types.ModuleType("pycuda")
    package.driver = driver
    return package, driver


@pytest.mark.parametrize("pycuda, why", [
    (None, r'PyCUDA is not installed \(pip install "arrayx\[gpu\]"\)'),
    (fake_pycuda_without_devices(), r"PyCUDA found no CUDA device \(cuInit failed: no CUDA-capable device"),
])
def test_without_a_gpu_register_devices_records_why(pycuda, why, monkeypatch):
    package, driver = pycuda if pycuda else (None, None)
    monkeypatch.setitem(sys.modules, "pycuda", package)   # None: import pycuda fails
    if driver is None:
        monkeypatch.delitem(sys.modules, "pycuda.driver", raising=False)
    else:
        monkeypatch.setitem(sys.modules, "pycuda.driver", driver)
    monkeypatch.delenv("ARRAYX_GPU_EMULATION", raising=False)
    registered, missing = [], {}
    register_gpu_devices(lambda *device: registered.append(device), missing.__setitem__)
    assert registered == [] and list(missing) == ["cuda"]
    assert re.match(why + ".*; ARRAYX_GPU_EMULATION=1 gives an emulated cuda:0", missing["cuda"])


def fake_pycuda_with_a_device():
    """A PyCUDA whose driver reports one device, and the list of its cuInit calls."""
    calls = []
    driver = types.ModuleType("pycuda.driver")
    driver.Error = FakeDriverError
    driver.init = lambda: calls.append("cuInit")
    driver.Device = types.SimpleNamespace(count=lambda: 1)
    package = types.ModuleType("pycuda")
    package.driver = driver
    return package, driver, calls


@pytest.mark.parametrize("library, message", [("nvrtc", "NVRTC not found"), ("cublas", "cuBLAS not found")])
def test_a_cuda_device_is_not_offered_without_nvrtc_or_cublas(library, message, monkeypatch):
    # Every computation would fail at its force point: the device must not be offered.
    package, driver, _ = fake_pycuda_with_a_device()
    monkeypatch.setitem(sys.modules, "pycuda", package)
    monkeypatch.setitem(sys.modules, "pycuda.driver", driver)
    monkeypatch.delenv("ARRAYX_GPU_EMULATION", raising=False)

    def missing_library():
        raise OSError(f"{message} (searched nowhere)")
    monkeypatch.setattr(importlib.import_module(f"arrayx._gpu.{library}"), "library", missing_library)
    registered, missing = [], {}
    register_gpu_devices(lambda *device: registered.append(device), missing.__setitem__)
    assert registered == []
    assert missing["cuda"].startswith(f"PyCUDA found 1 CUDA device(s), but {message} (searched nowhere); "
                                      "ARRAYX_GPU_EMULATION=1 gives")


def test_import_arrayx_initializes_no_cuda_until_devices_are_asked_for():
    # A process forked after cuInit cannot use CUDA: importing arrayx must not
    # initialize it (multiprocessing and dask fork workers after imports).
    script = textwrap.dedent("""
        import sys, types
        calls = []
        driver = types.ModuleType("pycuda.driver")
        driver.Error, driver.init = RuntimeError, lambda: calls.append("cuInit")
        driver.Device = types.SimpleNamespace(count=lambda: 0)
        sys.modules.update({"pycuda": types.ModuleType("pycuda"), "pycuda.driver": driver})
        import arrayx as xp
        print(calls)
        xp.__array_namespace_info__().devices()
        print(calls)
    """)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env.pop("ARRAYX_DEVICE", None)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "['cuInit']"]


def test_naming_a_missing_cuda_device_says_why_it_is_missing(monkeypatch):
    # cuda:7 is missing even where the suite runs on the emulated cuda:0
    monkeypatch.setitem(executors._MISSING, "cuda", "PyCUDA is not installed")
    with pytest.raises(ValueError, match=r"^asarray: no device 'cuda:7' here: PyCUDA is not installed$"):
        xp.asarray(1.0, device="cuda:7")
    with pytest.raises(ValueError, match=r"^to_device: no device 'cuda:7' here: PyCUDA is not installed$"):
        xp.asarray(1.0).to_device(Device("cuda:7"))


def test_devices_are_interned():
    assert Device("cpu") is xp.asarray(1.0, device="cpu").device
    assert repr(Device("cpu")) == "Device('cpu')"


# -- the CPU executor writes results into dying temporaries (NumPy's elision):
# arrays made on the CPU whatever the default device

def _np_values(*arrays):
    return [np.asarray(a).copy() for a in arrays]


def test_temporaries_are_overwritten_only_when_nothing_else_sees_them():
    a = np.linspace(-2.0, 2.0, 12)
    x = xp.asarray(a, device="cpu")
    y = x * 2.0
    view = y[1:]                 # a view of y's buffer is a result: y must stay intact
    flipped = xp.flip(y)
    z = y + 1.0                  # y dies here, but its buffer is seen by the views
    w = 1.0 - xp.exp(z)          # exp(z) dies as subtract's second argument: reused
    sq = xp.exp(x) * xp.exp(x)   # two fresh arrays, one written into
    xp.eval(view, flipped, w, sq)
    np.testing.assert_array_equal(np.asarray(view), (a * 2.0)[1:])
    np.testing.assert_array_equal(np.asarray(flipped), (a * 2.0)[::-1])
    np.testing.assert_array_equal(np.asarray(w), 1.0 - np.exp(a * 2.0 + 1.0))
    np.testing.assert_array_equal(np.asarray(sq), np.exp(a) * np.exp(a))
    np.testing.assert_array_equal(np.asarray(x), a)      # plan inputs are never written


def test_inputs_and_cached_scalars_are_never_written():
    a = np.arange(6.0)
    x = xp.asarray(a, device="cpu")
    for _ in range(3):
        r = (x + 1.0) * 2.0 - 1.0
        np.testing.assert_array_equal(np.asarray(r), (a + 1.0) * 2.0 - 1.0)
    np.testing.assert_array_equal(np.asarray(x), a)
    np.testing.assert_array_equal(np.asarray(x + 1.0), a + 1.0)   # the scalar 1.0 is a shared buffer


def test_reuse_needs_same_shape_and_dtype():
    P = PRIMITIVES
    f64, b = xp.float64, xp.bool
    steps = [
        Step(P["exp"], (), (3,), f64, (0,), 1),          # fresh (3,) float64
        Step(P["less"], (), (3,), b, (1, 0), 2),         # bool result: slot 1 is float, no reuse
        Step(P["exp"], (), (3,), f64, (0,), 3),
        Step(P["add"], (), (2, 3), f64, (3, 4), 5),      # broadcast to (2, 3): slot 3 too small
        Step(P["sin"], (), (2, 3), f64, (5,), 6),        # slot 5 dies here: reused
    ]
    drops = [[], [1], [], [3], [5]]
    operations = [(True, True, step.args, step.out, step.shape, step.dtype, set(drop)) for step, drop in zip(steps, drops)]
    assert reused_arguments(operations) == [None, None, None, None, 0]


# -- one question per node: a node its device cannot run splits its group

class RefusingExecutor(CPUExecutor):
    """The CPU executor's buffers and kernels behind a stand-in device that
    refuses the primitives in `refused` (as a GPU refuses float16
    nextafter), recording the steps it compiles."""

    name = "stand-in"

    def __init__(self, refused, rows_end_in_row_reductions=False):
        self.refused = refused
        self.fused_rows_end_in_row_reductions = rows_end_in_row_reductions
        self.compiled = []

    def runs(self, op, in_dtypes, dtype):
        return op.name not in self.refused and super().runs(op, in_dtypes, dtype)

    def compile(self, steps, drops):
        self.compiled += steps
        return super().compile(steps, drops)


@pytest.fixture
def stand_in(monkeypatch):
    """Register an executor on a stand-in device and record the steps the
    host executor compiles: `stand_in(executor)` is (device, host steps);
    the device is unregistered afterwards."""
    schedule.clear_plan_cache()
    host = executors.fallback()
    host_compiled = []

    def recording_compile(steps, drops):
        host_compiled.extend(steps)
        return CPUExecutor.compile(host, steps, drops)
    monkeypatch.setattr(host, "compile", recording_compile)
    device = Device("stand-in")

    def register(executor):
        executors.register(device, executor)
        return device, host_compiled
    yield register
    executors.unregister(device)
    schedule.clear_plan_cache()


def _fused_ops(steps):
    return [[i.op.name for i in s.attrs[0].body] for s in steps if s.op.name == "fused"]


def test_a_refused_node_splits_its_group_and_the_rest_stays_on_the_device(stand_in):
    executor = RefusingExecutor({"nextafter"})
    device, host_compiled = stand_in(executor)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(1000), rng.standard_normal(1000)
    x, y = xp.asarray(a, device=device), xp.asarray(b, device=device)
    # A 10-operation chain with nextafter, which the device refuses, in the middle.
    out = xp.abs(xp.cos(xp.nextafter(xp.sin(xp.exp(x) * 2.0 + 1.0), y) * 3.0 - 1.0) + x)
    expected = np.abs(np.cos(np.nextafter(np.sin(np.exp(a) * 2.0 + 1.0), b) * 3.0 - 1.0) + a)
    np.testing.assert_array_equal(np.asarray(out), expected)
    assert _fused_ops(executor.compiled) == [["exp", "multiply", "add", "sin"],
                                             ["multiply", "subtract", "cos", "add", "abs"]]
    assert [s.op.name for s in host_compiled] == ["nextafter"]   # only the refused node went to the host
    assert out.device == device


def test_a_refused_reduction_leaves_the_elementwise_producers_fused_on_the_device(stand_in):
    executor = RefusingExecutor({"sum"})
    device, host_compiled = stand_in(executor)
    a = np.linspace(-1.0, 1.0, 600).reshape(20, 30)
    x = xp.asarray(a, device=device)
    out = xp.sum(xp.exp(x) * 2.0 + 1.0, axis=1)
    np.testing.assert_allclose(np.asarray(out), np.sum(np.exp(a) * 2.0 + 1.0, axis=1), rtol=1e-13)
    assert _fused_ops(executor.compiled) == [["exp", "multiply", "add"]]
    assert [s.op.name for s in host_compiled] == ["sum"]


def test_a_row_kernel_device_keeps_a_final_reduction_over_other_axes_out_of_the_row_group(stand_in):
    executor = RefusingExecutor(set(), rows_end_in_row_reductions=True)
    device, host_compiled = stand_in(executor)
    a = np.linspace(-3.0, 3.0, 600).reshape(20, 30)
    x = xp.asarray(a, device=device)
    e = xp.exp(x - xp.max(x, axis=1, keepdims=True))
    total = xp.sum(e / xp.sum(e, axis=1, keepdims=True))   # a whole-array sum of a row softmax
    e_np = np.exp(a - a.max(axis=1, keepdims=True))
    assert float(total) == pytest.approx(np.sum(e_np / e_np.sum(axis=1, keepdims=True)), rel=1e-13)
    for step in executor.compiled:
        if step.op.name == "fused":
            group = step.attrs[0]
            assert not (group.row_axes and group.reduction is not None
                        and group.reduction.attrs[0] != group.row_axes)
    assert host_compiled == []


def test_a_device_without_epilogues_runs_row_logsumexp_as_a_group_and_its_epilogue_apart(stand_in):
    executor = RefusingExecutor(set())
    executor.fused_rows_end_in_epilogues = False
    device, host_compiled = stand_in(executor)
    a = np.linspace(-3.0, 3.0, 600).reshape(20, 30)
    x = xp.asarray(a, device=device)
    top = xp.max(x, axis=1, keepdims=True)
    out = top + xp.log(xp.sum(xp.exp(x - top), axis=1, keepdims=True))
    top_np = a.max(axis=1, keepdims=True)
    np.testing.assert_allclose(np.asarray(out), top_np + np.log(np.exp(a - top_np).sum(axis=1, keepdims=True)),
                               rtol=1e-15)
    groups = [step.attrs[0] for step in executor.compiled if step.op.name == "fused"]
    assert groups and not any(group.epilogue for group in groups)
    assert host_compiled == []


class GPUAnswers(RefusingExecutor):
    """The CPU executor's buffers and kernels, answering `runs` as the GPU
    executor does (which needs a driver to build, but not to answer)."""

    runs = GPUExecutor.runs
    fused_rows_end_in_row_reductions = GPUExecutor.fused_rows_end_in_row_reductions
    fused_rows_end_in_epilogues = GPUExecutor.fused_rows_end_in_epilogues

    def __init__(self):
        super().__init__(frozenset())


def test_a_float16_nextafter_on_the_gpu_leaves_the_rest_of_its_chain_there(stand_in):
    executor = GPUAnswers()
    device, host_compiled = stand_in(executor)
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(500).astype(np.float16), rng.standard_normal(500).astype(np.float16)
    x, y = xp.asarray(a, device=device), xp.asarray(b, device=device)
    two, one = np.float16(2), np.float16(1)
    out = xp.abs(xp.cos(xp.nextafter(xp.sin(xp.exp(x) * 2.0 + 1.0), y) * 3.0 - 1.0) + x)
    expected = np.abs(np.cos(np.nextafter(np.sin(np.exp(a) * two + one), b) * np.float16(3) - one) + a)
    np.testing.assert_array_equal(np.asarray(out), expected)
    assert _fused_ops(executor.compiled) == [["exp", "multiply", "add", "sin"],
                                             ["multiply", "subtract", "cos", "add", "abs"]]
    assert [s.op.name for s in host_compiled] == ["nextafter"]


def test_a_primitive_no_executor_runs_is_an_error_naming_it(monkeypatch):
    schedule.clear_plan_cache()
    monkeypatch.delitem(kernels.IMPLS, "expm1")   # as if the CPU had no kernel for it
    try:
        with pytest.raises(NotImplementedError, match="expm1"):
            np.asarray(xp.expm1(xp.asarray([0.5, 1.0], device="cpu")) + 1.0)
    finally:
        schedule.clear_plan_cache()


def test_unfused_remainder_and_shift_steps_reuse_temporaries_without_changing_values():
    a = np.linspace(-7.5, 7.5, 40)
    k = np.arange(40, dtype=np.int64)
    x, n = xp.asarray(a, device="cpu"), xp.asarray(k, device="cpu")   # the CPU's temporaries
    with debug.unfused():
        r = xp.remainder(xp.remainder(x * 3.0, 2.5) + 1.0, 1.75)
        s = xp.bitwise_right_shift(xp.bitwise_left_shift(n + 1, 3) + 5, 2)
        xp.eval(r, s)
    np.testing.assert_array_equal(np.asarray(r), np.remainder(np.remainder(a * 3.0, 2.5) + 1.0, 1.75))
    np.testing.assert_array_equal(np.asarray(s), np.right_shift(np.left_shift(k + 1, 3) + 5, 2))
    np.testing.assert_array_equal(np.asarray(x), a)     # plan inputs are never written
    np.testing.assert_array_equal(np.asarray(n), k)


def test_a_view_is_asked_with_the_primitive_and_its_attributes_alone():
    buffer = np.arange(12.0).reshape(3, 4)
    view = CPUExecutor().view(PRIMITIVES["slice"], ((1, 0), (3, 4), (1, 2)), (2, 2), xp.float64, buffer)
    np.testing.assert_array_equal(view, buffer[1:3, 0:4:2])
    assert np.shares_memory(view, buffer)
    assert CPUExecutor().view(PRIMITIVES["pad"], (((1, 1),), None), (5,), xp.float64, np.arange(3.0)) is None
