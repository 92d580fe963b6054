"""The executor seam: a device whose executor lacks primitives still runs them,
on the CPU executor with transfers, and buffers never cross executors untransferred."""

import numpy as np
import pytest

import arrayx as xp
from arrayx import executors
from arrayx.device import Device
from arrayx.executors.base import Executor
from arrayx.executors.cpu import CPUExecutor


class Box:
    """An opaque device buffer: NumPy cannot compute on it, so a step that got
    one without a transfer fails loudly."""

    def __init__(self, value):
        self.value = value


class BoxExecutor(Executor):
    name = "box"
    supports = CPUExecutor.supports - {"exp", "sum"}

    def __init__(self):
        self.inner = CPUExecutor()
        self.hosted = 0

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
                assert isinstance(slots[a], Box), "box step received a foreign buffer"
            view = [b.value if isinstance(b, Box) else b for b in slots]
            inner(view)
            for s in steps:
                slots[s.out] = Box(view[s.out]) if view[s.out] is not None else None
        return run


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


def test_unknown_device_is_a_value_error_naming_the_function():
    with pytest.raises(ValueError, match="zeros"):
        xp.zeros(3, device=Device("nowhere"))


def test_devices_are_interned():
    assert Device("cpu") is xp.asarray(1.0).device
    assert repr(Device("cpu")) == "Device('cpu')"
