"""The GPU executor's copy of a strided or broadcast buffer (`copy_group`)
gives the contiguous array NumPy gives, bit for bit, for every dtype.

The generated kernel runs on the host (see test_gpu_host.py)."""

import numpy as np
import pytest

from arrayx import dtypes as dt
from arrayx._gpu.executor import copy_group
from gpu_kernels import HostModule, generate, host_compiler

if host_compiler() is None:  # pragma: no cover - the CI machine has g++
    pytest.skip("no C++ compiler (g++) to run generated kernels on the host", allow_module_level=True)


def values(dtype, n):
    """n values of `dtype`, signed zeros, infinities and NaN among them."""
    if dtype == dt.bool:
        return np.arange(n) % 3 == 0
    if dtype.kind in "iu":
        info = np.iinfo(dtype.dtype)
        return np.resize(np.array([info.min, info.max, 0, 1, 7], dtype.dtype), n)
    real = np.resize(np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 3e-5]), n)
    out = np.empty(n, dtype.dtype)
    if dtype.kind == "c":
        out.real, out.imag = real, real[::-1]
    else:
        out[...] = real
    return out


def sources(dtype):
    """(layout, a view the executor would copy): reversed, strided, broadcast."""
    base = values(dtype, 60).reshape(5, 12)
    return [("S", base[::-1, ::2]), ("S", base.T), ("B", np.broadcast_to(base[1], (4, 12)))]


def assert_identical(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    if want.dtype.kind in "fc":
        for g, w in [(got.real, want.real), (got.imag, want.imag)]:
            np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


@pytest.mark.parametrize("dtype", dt.ALL, ids=lambda d: d.name)
def test_a_copy_of_a_strided_or_broadcast_buffer_is_the_contiguous_array(dtype):
    cases = [(copy_group(view.shape, dtype, layout), view) for layout, view in sources(dtype)]
    kernels = [generate(group) for group, _ in cases]
    module = HostModule(kernels)
    for kernel, (_, view) in zip(kernels, cases):
        (got,) = module.run(kernel, [view])
        assert_identical(got, np.ascontiguousarray(view))
