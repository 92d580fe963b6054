"""Generated CUDA kernels compute what the CPU executor computes.

Without a GPU, the kernels run on the host (arrayx/_gpu/emulation): each
CUDA thread of a block that synchronizes gets a real thread (so shared-memory
reductions and __syncthreads() run as written), with the C library's math
functions. The
oracle is the CPU executor's fused kernel for the same group. Exact
operations must match bit for bit (signed zeros and NaN included);
transcendental functions match within a few units in the last place, since
NumPy's and the C library's implementations differ in the last bits.
"""

import numpy as np
import pytest

from arrayx import dtypes as dt
from arrayx._cpu.fused import FusedKernel
from gpu_kernels import HostModule, astype_group, chain, every_elementwise, generate, host_compiler, row_group

if host_compiler() is None:  # pragma: no cover - the CI machine has g++
    pytest.skip("no C++ compiler (g++) to run generated kernels on the host", allow_module_level=True)

# Functions whose NumPy and C library implementations may differ in the last
# bits (sqrt and the arithmetic operators are correctly rounded in both).
INEXACT = {"acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "expm1", "log", "log1p",
           "log2", "log10", "sin", "sinh", "tan", "tanh", "atan2", "hypot", "logaddexp", "pow"}
# A few units in the last place of each float type.
RTOL = {np.float16: 2e-3, np.float32: 4e-6, np.float64: 1e-14}


def special_values(dtype):
    """Values that exercise the standard's special cases for `dtype`."""
    if dtype == dt.bool:
        return np.array([False, True])
    if dtype.kind in "iu":
        info = np.iinfo(dtype.dtype)
        values = [0, 1, 2, 3, 5, 7, 100, -1, -2, -3, -7, -100, info.min, info.max, info.max - 1, 63, 64]
        return np.array([v for v in values if info.min <= v <= info.max], dtype.dtype)
    real = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -7.25, 1e-3, 100.0, np.inf, -np.inf, np.nan]
    if dtype.kind == "f":
        return np.array(real, dtype.dtype)
    parts = [0.0, -0.0, 1.5, -2.0, np.inf, np.nan]
    return np.array([complex(a, b) for a in parts for b in parts], dtype.dtype)


def assert_matches(got, want, inexact):
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, want)
        return
    for g, w in ([(got.real, want.real), (got.imag, want.imag)] if want.dtype.kind == "c" else [(got, want)]):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        if inexact:
            np.testing.assert_allclose(g, w, rtol=RTOL[w.dtype.type], atol=0)
        else:
            np.testing.assert_array_equal(g, w)
            np.testing.assert_array_equal(np.signbit(g[~np.isnan(g)]), np.signbit(w[~np.isnan(w)]))


def cpu(group, inputs):
    with np.errstate(all="ignore"):
        out = FusedKernel(group)(*inputs)
    return out if isinstance(out, tuple) else (out,)


def inputs_for(group, values):
    """Operands for an elementwise group built by every_elementwise: the
    special values along each operand's axis (bool conditions alternate)."""
    arrays = []
    for shape, dtype, _ in group.inputs:
        if dtype == dt.bool and len(group.inputs) == 3 and not arrays:
            arrays.append((np.arange(np.prod(shape)) % 2 == 0).reshape(shape))
        else:
            v = values[dtype.name]
            arrays.append(np.resize(v, shape))
    return arrays


ELEMENTWISE = every_elementwise(shape=(17, 17))


@pytest.fixture(scope="module")
def elementwise_module():
    kernels = [generate(g) for g in ELEMENTWISE]
    return HostModule(kernels), kernels


@pytest.mark.parametrize("index", range(len(ELEMENTWISE)),
                         ids=[f"{g.body[0].op.name}-{g.inputs[-1][1]}" for g in ELEMENTWISE])
def test_elementwise_kernel_matches_the_cpu_executor(elementwise_module, index):
    module, kernels = elementwise_module
    group = ELEMENTWISE[index]
    shape = group.shape
    values = {}
    for _, dtype, _ in group.inputs:
        v = special_values(dtype)
        values[dtype.name] = np.resize(v, max(len(v), shape[-1]))
    inputs = inputs_for(group, values)
    got = module.run(kernels[index], inputs)
    want = cpu(group, inputs)
    name = group.body[0].op.name
    # |z| is hypot(re, im): NumPy's and the C library's round differently.
    assert_matches(got[0], want[0], name in INEXACT or (name == "abs" and group.inputs[0][1].kind == "c"))


CASTS = [astype_group(s, t, shape=(36,)) for s in dt.ALL for t in dt.ALL if s != t and not (s.kind == "c" and t.kind != "c")]


def test_casts_match_the_cpu_executor():
    kernels = [generate(g) for g in CASTS]
    module = HostModule(kernels)
    for group, kernel in zip(CASTS, kernels):
        source = group.inputs[0][1]
        x = np.resize(special_values(source), 36)
        if group.body[0].dtype.kind in "iu" and source.kind == "f":
            # Out-of-range float to integer casts are unspecified; NumPy's are
            # the platform's. Compare in-range values (NaN and inf excluded).
            info = np.iinfo(group.body[0].dtype.dtype)
            wide = x.astype(np.float64)
            x = np.where(np.isfinite(wide) & (wide >= info.min) & (wide <= info.max), x, 0).astype(x.dtype)
        got = module.run(kernel, [x])
        assert_matches(got[0], cpu(group, [x])[0], False), (source, group.body[0].dtype)


def random(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == dt.bool:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 4, shape).astype(dtype.dtype)
    x = rng.uniform(-1, 1, shape)
    if dtype.kind == "c":
        x = x + 1j * rng.uniform(-1, 1, shape)
    return x.astype(dtype.dtype)


LAYOUTS = [("C", "C"), ("S", "B")]


def operands(group, seed=0):
    """Random operands, laid out as the group's inputs say: "S" a strided
    view (every other element of a larger array), "B" a broadcast view."""
    arrays = []
    for k, (shape, dtype, layout) in enumerate(group.inputs):
        if layout == "S":
            big = random(shape[:-1] + (2 * shape[-1],), dtype, seed + k)
            arrays.append(big[..., ::2])
        elif layout == "B":
            arrays.append(np.broadcast_to(random(shape[-1:], dtype, seed + k), shape))
        else:
            arrays.append(random(shape, dtype, seed + k))
    return arrays


AXES = [(), (0,), (1,), (2,), (0, 1), (1, 2), (0, 2), (0, 1, 2)]
REDUCTION_CASES = [(r, d, axes, keep, layouts)
                   for r, ds in {"sum": [dt.float32, dt.float16, dt.int8, dt.complex128], "prod": [dt.float64, dt.int32],
                                 "max": [dt.float32, dt.uint8], "min": [dt.float64, dt.int16],
                                 "any": [dt.float32, dt.bool], "all": [dt.bool]}.items()
                   for d in ds for axes in AXES for keep in (False, True) for layouts in LAYOUTS]


@pytest.fixture(scope="module")
def reduction_module():
    groups = [chain(d, (3, 4, 5), lay, reduce=r, axes=axes, keepdims=keep, export=keep)
              for r, d, axes, keep, lay in REDUCTION_CASES]
    kernels = [generate(g) for g in groups]
    return HostModule(kernels), groups, kernels


@pytest.mark.parametrize("grid", [(1, 1), (3, 2)], ids=["one-pass", "split"])
def test_reductions_over_every_axis_pattern_match_the_cpu_executor(reduction_module, grid):
    module, groups, kernels = reduction_module
    for case, group, kernel in zip(REDUCTION_CASES, groups, kernels):
        inputs = operands(group)
        got = module.run(kernel, inputs, grid=grid, block=8)
        want = cpu(group, inputs)
        for g, w in zip(got, want):
            # A sum in another order rounds differently: float tolerance.
            if w.dtype.kind in "fc":
                np.testing.assert_allclose(g, w, rtol=RTOL.get(np.dtype(w.dtype).type, 1e-6) * 10 if w.dtype.kind == "f"
                                           else 1e-12, err_msg=str(case))
            else:
                np.testing.assert_array_equal(g, w, err_msg=str(case))


@pytest.mark.parametrize("dtype", [dt.float32, dt.float64, dt.float16])
@pytest.mark.parametrize("shape,row_axes,end", [((6, 37), (1,), "divide"), ((3, 4, 5), (1, 2), "divide"),
                                                 ((6, 37), (1,), "sum"), ((6, 37), (1,), "logsumexp"),
                                                 ((3, 4, 5), (1, 2), "logsumexp")])
def test_row_groups_match_the_cpu_executor(dtype, shape, row_axes, end):
    group = row_group(dtype, shape, row_axes, end)
    kernel = generate(group)
    x = random(shape, dtype, 1) * 20
    got = HostModule([kernel]).run(kernel, [x], grid=(4, 1), block=8)
    want = cpu(group, [x])
    np.testing.assert_array_equal(got[0], want[0])   # the row max is exact
    np.testing.assert_allclose(got[1], want[1], rtol=RTOL[np.dtype(dtype.dtype).type] * 10)


def test_nan_propagates_through_max_reductions():
    group = chain(dt.float32, (3, 4, 5), reduce="max", axes=(1,))
    x = random((3, 4, 5), dt.float32, 0)
    x[1, 2, 3] = np.nan
    y = np.ones_like(x)
    got = HostModule([generate(group)]).run(generate(group), [x, y], grid=(2, 2), block=4)[0]
    assert np.isnan(got[1, 3]) and np.isnan(got).sum() == 1
