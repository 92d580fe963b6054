"""Every kernel family the CUDA code generator emits compiles with NVRTC.

These run without a GPU: NVRTC (the nvidia-cuda-nvrtc wheel) compiles to a
cubin for the H100's architecture in-process, by the same path the GPU
executor uses, so a CUDA syntax or type error in generated code fails here.
"""

import ctypes
import re
from collections import defaultdict

import pytest

from arrayx import dtypes as dt
from arrayx._gpu import codegen
from arrayx.graph.fused import FusedGroup, Instruction
from arrayx.graph.primitives import PRIMITIVES
from gpu_kernels import astype_group, chain, elementwise_group, every_elementwise, row_group

nvrtc = pytest.importorskip("arrayx._gpu.nvrtc")
try:
    nvrtc.library()
except OSError as e:  # pragma: no cover - CI installs the wheel
    pytest.skip(f"NVRTC is not installed: {e}", allow_module_level=True)

ARCH = "sm_90"   # the H100 the GPU executor targets


def compile_all(groups):
    kernels = [codegen.generate(g) for g in groups]
    cubin = nvrtc.compile_cubin(codegen.module_source(kernels), ARCH)
    assert cubin[:4] == b"\x7fELF", "a cubin is an ELF image"
    return kernels


def _by_input_dtype(groups):
    out = defaultdict(list)
    for g in groups:
        out[g.inputs[-1][1]].append(g)
    return sorted(out.items(), key=lambda kv: kv[0].name)


@pytest.mark.parametrize("dtype,groups", _by_input_dtype(every_elementwise()), ids=lambda v: getattr(v, "name", ""))
def test_every_elementwise_expression_compiles(dtype, groups):
    kernels = compile_all(groups)
    assert {k.mode for k in kernels} == {"elementwise"}


def test_every_cast_compiles():
    compile_all([astype_group(s, t) for s in dt.ALL for t in dt.ALL])


@pytest.mark.parametrize("layouts", [("C", "C"), ("S", "C"), ("C", "B"), ("S", "S")])
@pytest.mark.parametrize("dtype", [dt.float32, dt.float16, dt.int64, dt.complex128])
def test_strided_and_broadcast_chains_compile(layouts, dtype):
    compile_all([chain(dtype, (4, 5, 6), layouts), chain(dtype, (4, 5, 6), layouts, export=True)])


AXES = [(), (0,), (1,), (2,), (0, 1), (1, 2), (0, 2), (0, 1, 2)]
REDUCE_DTYPES = {"sum": [dt.float32, dt.float16, dt.int8, dt.uint64, dt.complex64],
                 "prod": [dt.float64, dt.int32, dt.complex128],
                 "max": [dt.float32, dt.float16, dt.int16, dt.uint8],
                 "min": [dt.float64, dt.int64],
                 "any": [dt.float32, dt.bool, dt.complex64],
                 "all": [dt.int32, dt.bool]}


@pytest.mark.parametrize("reduce", sorted(REDUCE_DTYPES))
def test_reductions_over_every_axis_pattern_compile(reduce):
    groups = [chain(d, (3, 4, 5), ("C", "S"), reduce=reduce, axes=axes, keepdims=keep, export=keep)
              for d in REDUCE_DTYPES[reduce] for axes in AXES for keep in (False, True)]
    kernels = compile_all(groups)
    assert {k.mode for k in kernels} == {"reduce", "columns"}


@pytest.mark.parametrize("dtype", [dt.float32, dt.float64, dt.float16])
def test_row_reduction_groups_compile(dtype):
    kernels = compile_all([row_group(dtype, (6, 7)), row_group(dtype, (3, 4, 5), (1, 2)),
                           row_group(dtype, (6, 7), end="sum"), row_group(dtype, (3, 4, 5), (1, 2), end="logsumexp")])
    assert {k.mode for k in kernels} == {"rows"}


def test_a_group_without_cuda_expressions_is_unsupported():
    shape = (4,)
    body = (Instruction(PRIMITIVES["exp"], (), (0,), shape, dt.complex64),)
    group = FusedGroup(shape, ((shape, dt.complex64, "C"),), body, (1,))
    with pytest.raises(codegen.Unsupported, match="exp of complex64"):
        codegen.generate(group)


def test_a_compile_error_reports_nvrtcs_log():
    with pytest.raises(nvrtc.CompileError, match='expected a ";"'):
        nvrtc.compile_cubin('extern "C" __global__ void k() { int x = 1 }', ARCH)


def test_cubins_are_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("ARRAYX_CACHE_DIR", str(tmp_path))
    nvrtc._cubins.clear()
    source = codegen.module_source([codegen.generate(chain(dt.float32, (8,)))])
    first = nvrtc.compile_cubin(source, ARCH)
    assert len(list(tmp_path.glob("cuda/*.cubin"))) == 1   # the disk cache of kind "cuda" (renderer/toolchain.py)
    nvrtc._cubins.clear()
    assert nvrtc.compile_cubin(source, ARCH) == first


def ptx_of(source):
    """The PTX NVRTC makes of `source` with the options the GPU executor
    compiles with (nvrtc.OPTIONS): what the cubin's machine code comes from."""
    lib = nvrtc.library()
    program = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(program), source.encode(), b"ptx.cu", 0, None, None) == 0
    try:
        options = [b"--gpu-architecture=compute_90", *(o.encode() for o in nvrtc.OPTIONS)]
        assert lib.nvrtcCompileProgram(program, len(options), (ctypes.c_char_p * len(options))(*options)) == 0
        size = ctypes.c_size_t()
        lib.nvrtcGetPTXSize.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
        lib.nvrtcGetPTX.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        assert lib.nvrtcGetPTXSize(program, ctypes.byref(size)) == 0
        ptx = ctypes.create_string_buffer(size.value)
        assert lib.nvrtcGetPTX(program, ptx) == 0
        return ptx.value.decode()
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(program))


def products_difference_group(dtype, shape=(64,)):
    """a * b - c * d: cancels where the products are close, so a fused
    multiply-add (one rounding) and a multiply then a subtract (two) differ
    by far more than a rounding."""
    inputs = tuple((shape, dtype, "C") for _ in range(4))
    body = (Instruction(PRIMITIVES["multiply"], (), (0, 1), shape, dtype),
            Instruction(PRIMITIVES["multiply"], (), (2, 3), shape, dtype),
            Instruction(PRIMITIVES["subtract"], (), (4, 5), shape, dtype))
    return FusedGroup(shape, inputs, body, (6,))


def test_nvrtc_rounds_every_product_and_sum_as_numpy_does():
    # NVRTC contracts x * y + z into one FMA by default (--fmad=true); NumPy
    # and the CPU executor round the product and the sum each.
    groups = [products_difference_group(dt.float32), products_difference_group(dt.float64),
              elementwise_group("multiply", dt.complex64, [(5,), (5,)]),
              elementwise_group("divide", dt.complex128, [(5,), (5,)])]
    ptx = ptx_of(codegen.module_source([codegen.generate(g) for g in groups]))
    assert re.findall(r"\bfma\.\w+\.f(?:32|64)", ptx) == []
    # .rn (round to nearest, stated) also keeps ptxas from contracting them.
    assert "mul.rn.f32" in ptx and "sub.rn.f64" in ptx


def test_nvrtc_search_goes_past_a_library_that_fails_to_load(tmp_path, monkeypatch):
    broken = tmp_path / "libnvrtc.so.13"
    broken.write_bytes(b"not a shared library")
    working = nvrtc.library()._name
    monkeypatch.setattr(nvrtc, "_candidates", lambda: iter([str(broken), working]))
    monkeypatch.setattr(nvrtc, "_lib", None)
    assert nvrtc.library()._name == working
    monkeypatch.setattr(nvrtc, "_candidates", lambda: iter([str(broken)]))
    monkeypatch.setattr(nvrtc, "_lib", None)
    with pytest.raises(OSError, match=r"NVRTC not found .*failed to load .*libnvrtc\.so\.13: "):
        nvrtc.library()
