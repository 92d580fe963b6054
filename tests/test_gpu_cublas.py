"""arrayx._gpu.cublas without a GPU.

plan_matmul is checked against np.matmul through an oracle that reads flat
host buffers exactly as cuBLAS's column-major strided-batched GEMM reads
device memory (leading dimensions, op flags, batch strides, offsets), and
checks cuBLAS's argument rules and that every output element is written once.
Blas.matmul is checked against a fake library that records its calls; the
loader's failure path by hiding every search location.
"""

import ctypes
import ctypes.util
import subprocess
import sys
import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

from arrayx._gpu import cublas
from arrayx._gpu.cublas import CUBLAS_OP_N, CUBLAS_OP_T, GemmCall, operand_fits, plan_matmul

RNG = np.random.default_rng(0)


# --- the oracle ---------------------------------------------------------------

def elements(x):
    return tuple(s // x.itemsize for s in x.strides)


def flat(x):
    """The host 'buffer' a device pointer to x's first element would address."""
    if x.size == 0:
        return np.empty(0, x.dtype)
    span = 1 + sum((n - 1) * s for n, s in zip(x.shape, elements(x)))
    return as_strided(x, shape=(span,), strides=(x.itemsize,), writeable=False)


def column_major(buf, offset, stride, batch, op, rows, cols, ld):
    """op(X) (rows x cols, per batch) as cuBLAS reads X: column-major with ld."""
    stored = (rows, cols) if op == CUBLAS_OP_N else (cols, rows)
    last = offset + (batch - 1) * stride + (stored[0] - 1) + (stored[1] - 1) * ld
    assert 0 <= offset and last < buf.size, "cuBLAS would read or write outside the buffer"
    size = buf.itemsize
    x = as_strided(buf[offset:], shape=(batch, *stored), strides=(stride * size, size, ld * size))
    return x if op == CUBLAS_OP_N else x.swapaxes(-1, -2)


def run_like_cublas(calls, a_buf, b_buf, out_buf):
    """Emulate each call (cuBLAS's A reads b's buffer, its B reads a's)."""
    written = np.zeros(out_buf.size, int)
    for c in calls:
        assert c.transa in (CUBLAS_OP_N, CUBLAS_OP_T) and c.transb in (CUBLAS_OP_N, CUBLAS_OP_T)
        assert min(c.m, c.n, c.k, c.batch) >= 1
        assert c.lda >= max(1, c.m if c.transa == CUBLAS_OP_N else c.k)
        assert c.ldb >= max(1, c.k if c.transb == CUBLAS_OP_N else c.n)
        assert c.ldc >= max(1, c.m)
        A = column_major(b_buf, c.a_offset, c.stride_a, c.batch, c.transa, c.m, c.k, c.lda)
        B = column_major(a_buf, c.b_offset, c.stride_b, c.batch, c.transb, c.k, c.n, c.ldb)
        C = column_major(out_buf, c.c_offset, c.stride_c, c.batch, CUBLAS_OP_N, c.m, c.n, c.ldc)
        W = column_major(written, c.c_offset, c.stride_c, c.batch, CUBLAS_OP_N, c.m, c.n, c.ldc)
        for p in range(c.batch):
            C[p] = A[p] @ B[p]
            W[p] += 1
    if calls:
        assert (written == 1).all(), "every output element is written exactly once"


def check(a, b):
    """Plan a @ b, run the plan like cuBLAS, compare with np.matmul exactly."""
    expected = np.matmul(a, b)
    calls = plan_matmul(a.shape, elements(a), b.shape, elements(b), expected.shape)
    assert calls is not None
    out = np.full(expected.size, np.nan)
    if not calls:
        out[:] = 0  # the caller's part of the contract
    run_like_cublas(calls, flat(a), flat(b), out)
    np.testing.assert_array_equal(out.reshape(expected.shape), expected)
    return calls


def ints(*shape):
    """Integer-valued float64, so every product is exact."""
    return RNG.integers(-4, 5, size=shape).astype(np.float64)


# --- planning: layouts --------------------------------------------------------

def test_row_major_2d_is_one_gemm_with_operands_swapped():
    (call,) = check(ints(3, 4), ints(4, 5))
    assert call == GemmCall(CUBLAS_OP_N, CUBLAS_OP_N, m=5, n=3, k=4, lda=5, ldb=4, ldc=5,
                            stride_a=0, stride_b=0, stride_c=15, batch=1, a_offset=0, b_offset=0, c_offset=0)


def test_transposed_views_are_column_major_and_use_op_t():
    a, b = ints(4, 3).T, ints(5, 4).T
    (call,) = check(a, b)
    assert (call.transa, call.transb, call.lda, call.ldb) == (CUBLAS_OP_T, CUBLAS_OP_T, 4, 3)
    (call,) = check(a, ints(4, 5))
    assert (call.transa, call.transb) == (CUBLAS_OP_N, CUBLAS_OP_T)


def test_padded_rows_and_columns_set_the_leading_dimension():
    (call,) = check(ints(3, 7)[:, :4], ints(4, 5))
    assert (call.transb, call.ldb) == (CUBLAS_OP_N, 7)
    (call,) = check(ints(3, 4), ints(6, 8)[:5, :4].T)
    assert (call.transa, call.lda) == (CUBLAS_OP_T, 8)


@pytest.mark.parametrize("a, b", [
    (ints(1, 4), ints(4, 5)),
    (ints(3, 1), ints(1, 5)),
    (ints(3, 4), ints(4, 1)),
    (ints(1, 1), ints(1, 1)),
    (ints(12)[::3].reshape(1, 4), ints(4, 5)),          # a row vector with stride 3
    (ints(3, 4), ints(12)[::3].reshape(4, 1)),          # a column vector with stride 3
    (as_strided(ints(4), shape=(1, 4), strides=(0, 8)), ints(4, 2)),  # stride 0 on a size-1 dim
], ids=["M=1", "K=1", "N=1", "1x1", "strided-row-vector", "strided-column-vector", "zero-stride-size-1"])
def test_size_one_matrix_dims_accept_any_stride(a, b):
    assert len(check(a, b)) == 1


@pytest.mark.parametrize("side", ["matrix @ vector", "vector @ matrix"])
def test_one_d_operands_reshaped_by_the_caller(side):
    m, v = ints(3, 4), ints(12)[::3]  # v: a strided 1-D operand
    if side == "matrix @ vector":
        a, b, expected = m, v.reshape(4, 1), np.matmul(m, v)  # (k,) -> (k, 1)
    else:
        a, b, expected = v.reshape(1, 4), m.T, np.matmul(v, m.T)  # (k,) -> (1, k)
    calls = plan_matmul(a.shape, elements(a), b.shape, elements(b), np.matmul(a, b).shape)
    out = np.full(expected.size, np.nan)
    run_like_cublas(calls, flat(a), flat(b), out)
    np.testing.assert_array_equal(out.reshape(expected.shape), expected)


@pytest.mark.parametrize("make_a, make_b", [
    (lambda: ints(6, 8)[:, ::2], lambda: ints(4, 3)),                      # strided last dim
    (lambda: ints(3, 4), lambda: ints(8, 6)[::2, ::2]),                   # strided both dims
    (lambda: ints(3, 4)[::-1], lambda: ints(4, 5)),                       # negative stride
    (lambda: np.broadcast_to(ints(1, 4), (3, 4)), lambda: ints(4, 5)),   # stride-0 rows
    (lambda: as_strided(ints(6), shape=(3, 4), strides=(8, 8)), lambda: ints(4, 5)),  # overlapping rows
    (lambda: ints(2, 3, 4)[::-1], lambda: ints(4, 5)),                    # negative batch stride
], ids=["a[:, ::2]", "b[::2, ::2]", "a[::-1]", "broadcast-rows", "overlapping-rows", "negative-batch"])
def test_unfit_layouts_return_none_and_a_contiguous_copy_fits(make_a, make_b):
    a, b = make_a(), make_b()
    expected = np.matmul(a, b)
    assert plan_matmul(a.shape, elements(a), b.shape, elements(b), expected.shape) is None
    assert not (operand_fits(a.shape, elements(a)) and operand_fits(b.shape, elements(b)))
    a = a if operand_fits(a.shape, elements(a)) else np.ascontiguousarray(a)
    b = b if operand_fits(b.shape, elements(b)) else np.ascontiguousarray(b)
    check(a, b)


# --- planning: batches ----------------------------------------------------------

@pytest.mark.parametrize("a_shape, b_shape", [((7, 3, 4), (7, 4, 5)), ((2, 3, 3, 4), (2, 3, 4, 5))])
def test_contiguous_batches_collapse_into_one_call(a_shape, b_shape):
    (call,) = check(ints(*a_shape), ints(*b_shape))
    assert call.batch == np.prod(a_shape[:-2])
    assert (call.stride_a, call.stride_b, call.stride_c) == (20, 12, 15)


def test_a_two_d_operand_broadcasts_with_batch_stride_zero():
    (call,) = check(ints(3, 4), ints(6, 4, 5))
    assert (call.batch, call.stride_b, call.stride_a) == (6, 0, 20)
    (call,) = check(ints(2, 3, 3, 4), ints(4, 5))
    assert (call.batch, call.stride_b, call.stride_a) == (6, 12, 0)


def test_stride_zero_and_size_one_batch_dims_broadcast():
    (call,) = check(np.broadcast_to(ints(3, 4), (6, 3, 4)), ints(6, 4, 5))
    assert (call.batch, call.stride_b) == (6, 0)
    (call,) = check(ints(1, 3, 4), ints(2, 3, 4, 5))
    assert (call.batch, call.stride_b) == (6, 0)


def test_batch_dims_broadcast_from_both_sides_loop_over_one():
    # a varies along the first batch dim only, b along the second: no single stride.
    calls = check(ints(2, 1, 3, 4), ints(1, 5, 4, 6))
    assert len(calls) == 2 and {c.batch for c in calls} == {5}


def test_step_sliced_batch_loops_over_the_non_collapsing_dim():
    calls = check(ints(4, 3, 3, 4)[::2], ints(2, 3, 4, 5))
    assert len(calls) == 2 and all(c.batch == 3 for c in calls)
    assert [c.b_offset for c in calls] == [0, 2 * 3 * 12] and [c.c_offset for c in calls] == [0, 3 * 15]


def test_single_step_sliced_batch_dim_is_one_call():
    (call,) = check(ints(6, 3, 4)[::2], ints(3, 4, 5))
    assert call.stride_b == 24


def test_permuted_batch_loops():
    calls = check(ints(2, 3, 3, 4).transpose(1, 0, 2, 3), ints(3, 2, 4, 5))
    assert len(calls) == 2 and all(c.batch == 3 for c in calls)


def test_the_largest_collapsing_run_is_the_batch():
    # Batch (5, 4, 2): the (5, 4) dims collapse, the last does not -> 2 calls of 20, not 20 calls of 2.
    a = ints(2, 5, 4, 3, 4).transpose(1, 2, 0, 3, 4)
    calls = check(a, ints(5, 4, 2, 4, 5))
    assert len(calls) == 2 and all(c.batch == 20 for c in calls)


def test_transposed_batched_operands():
    check(ints(3, 2, 4, 3).transpose(1, 0, 3, 2), ints(2, 3, 5, 4).swapaxes(-1, -2))


# --- planning: zero sizes and errors ----------------------------------------------

@pytest.mark.parametrize("a_shape, b_shape", [
    ((0, 4), (4, 5)), ((3, 4), (4, 0)), ((0, 3, 4), (4, 5)), ((3, 0), (0, 5)), ((2, 3, 0), (2, 0, 5)),
], ids=["M=0", "N=0", "batch=0", "K=0", "batched-K=0"])
def test_zero_size_plans_no_call_and_zero_fill_is_the_result(a_shape, b_shape):
    a, b = ints(*a_shape), ints(*b_shape)
    assert plan_matmul(a.shape, elements(a), b.shape, elements(b), np.matmul(a, b).shape) == []
    check(a, b)


@pytest.mark.parametrize("a_shape, b_shape, out_shape", [
    ((3, 4), (5, 6), (3, 6)), ((3, 4), (4, 5), (3, 6)), ((2, 3, 4), (3, 4, 5), (3, 3, 5)), ((4,), (4, 5), (5,)),
], ids=["k-mismatch", "wrong-out", "batch-mismatch", "1-d"])
def test_inconsistent_shapes_raise_value_error(a_shape, b_shape, out_shape):
    strides = lambda shape: tuple(int(np.prod(shape[i + 1:])) for i in range(len(shape)))  # noqa: E731
    with pytest.raises(ValueError, match="matmul"):
        plan_matmul(a_shape, strides(a_shape), b_shape, strides(b_shape), out_shape)


# --- planning: any shape, any supported layout --------------------------------------

def operand(data, shape):
    """An operand of this shape in a drawn layout: row- or column-major (maybe
    padded, maybe with a strided last dim), batch dims step-sliced, permuted or
    broadcast with stride 0."""
    *batch, rows, cols = shape
    matrix = data.draw(st.sampled_from(["row", "col", "row-padded", "col-padded", "strided"]))
    trick = data.draw(st.sampled_from(["none", "step", "permute", "stride0"]))
    pad = 2 if matrix.endswith("padded") else 0
    if matrix.startswith("col"):
        stored = (cols, rows + pad)
    else:
        stored = (rows, (cols + pad) * (2 if matrix == "strided" else 1))
    base_batch = [1] * len(batch) if trick == "stride0" else [n * 2 for n in batch] if trick == "step" else batch
    x = ints(*(base_batch[::-1] if trick == "permute" else base_batch), *stored)
    nb = len(batch)
    if trick == "permute":
        x = x.transpose(*range(nb)[::-1], nb, nb + 1)
    if trick == "step":
        x = x[(slice(None, None, 2),) * nb]
    x = x[..., ::2] if matrix == "strided" else x[..., :stored[0], :stored[1] - pad]
    if matrix.startswith("col"):
        x = x.swapaxes(-1, -2)
    x = np.broadcast_to(x, shape) if trick == "stride0" else x
    assert x.shape == tuple(shape)
    return x


@given(st.data())
def test_plans_match_numpy_for_any_shape_and_layout(data):
    # Non-zero sizes (zero sizes plan no call: tested above).
    dim = st.integers(1, 4)
    M, K, N = data.draw(dim), data.draw(dim), data.draw(dim)
    out_batch = data.draw(st.lists(st.integers(1, 3), max_size=3))
    shapes = []
    for _ in "ab":
        dropped = data.draw(st.integers(0, len(out_batch)))
        shapes.append([n if data.draw(st.booleans()) else 1 for n in out_batch[dropped:]])
    a = operand(data, shapes[0] + [M, K])
    b = operand(data, shapes[1] + [K, N])
    expected = np.matmul(a, b)
    calls = plan_matmul(a.shape, elements(a), b.shape, elements(b), expected.shape)
    if calls is None:
        a = a if operand_fits(a.shape, elements(a)) else np.ascontiguousarray(a)
        b = b if operand_fits(b.shape, elements(b)) else np.ascontiguousarray(b)
    check(a, b)


# --- Blas.matmul against a fake library ----------------------------------------------

class FakeCublas:
    """Records calls; every function returns `status` (0: success)."""

    def __init__(self):
        self.calls = []
        self.status = 0

    def __getattr__(self, name):
        if not name.startswith("cublas"):
            raise AttributeError(name)

        def function(*args):
            if name == "cublasCreate_v2":
                args[0]._obj.value = 0x1234
                return 0
            self.calls.append((name, args))
            return self.status if "gemm" in name.lower() else 0
        return function

    def named(self, name):
        return [args for n, args in self.calls if n == name]


class NoSixtyFour(FakeCublas):
    """A cuBLAS older than 12.0, without the _64 routines."""

    def __getattr__(self, name):
        if name.endswith("_64"):
            raise AttributeError(name)
        return super().__getattr__(name)


@pytest.fixture
def fake(monkeypatch):
    lib = FakeCublas()
    monkeypatch.setattr(cublas, "_lib", lib)
    monkeypatch.delenv("ARRAYX_TF32", raising=False)
    return lib


def test_matmul_passes_b_as_cublas_a_with_byte_offsets(fake):
    a, b = ints(4, 3, 3, 4)[::2], ints(2, 3, 4, 5)
    calls = plan_matmul(a.shape, elements(a), b.shape, elements(b), (2, 3, 3, 5))
    blas = cublas.Blas(stream=77)
    blas.matmul(1000, 2000, 3000, calls, "float32")
    assert fake.named("cublasSetStream_v2")[0][1] == 77
    gemms = fake.named("cublasSgemmStridedBatched")
    assert len(gemms) == 2
    for call, args in zip(calls, gemms):
        assert args[1:6] == (call.transa, call.transb, call.m, call.n, call.k)
        assert args[6]._obj.value == 1.0 and args[13]._obj.value == 0.0
        assert args[7] == 2000 + 4 * call.a_offset and args[10] == 1000 + 4 * call.b_offset
        assert args[14] == 3000 + 4 * call.c_offset
        assert args[8:10] + args[11:13] + args[15:] == (
            call.lda, call.stride_a, call.ldb, call.stride_b, call.ldc, call.stride_c, call.batch)


def test_float16_uses_gemm_ex_with_float32_compute(fake):
    calls = plan_matmul((3, 4), (4, 1), (4, 5), (5, 1), (3, 5))
    cublas.Blas().matmul(0, 0, 0, calls, "float16")
    (args,) = fake.named("cublasGemmStridedBatchedEx")
    assert (args[8], args[12], args[17]) == (cublas.CUDA_R_16F,) * 3
    assert args[-2:] == (cublas.CUBLAS_COMPUTE_32F, cublas.CUBLAS_GEMM_DEFAULT)
    assert isinstance(args[6]._obj, ctypes.c_float)


@pytest.mark.parametrize("dtype, name, alpha", [
    ("float64", "cublasDgemmStridedBatched", 1.0),
    ("complex64", "cublasCgemmStridedBatched", [1.0, 0.0]),
    ("complex128", "cublasZgemmStridedBatched", [1.0, 0.0]),
])
def test_typed_routines_and_alpha(fake, dtype, name, alpha):
    cublas.Blas().matmul(0, 0, 0, plan_matmul((3, 4), (4, 1), (4, 5), (5, 1), (3, 5)), dtype)
    (args,) = fake.named(name)
    value = args[6]._obj
    assert (list(value) if alpha != 1.0 else value.value) == alpha


def test_tf32_is_off_by_default_and_switchable(fake, monkeypatch):
    calls = plan_matmul((3, 4), (4, 1), (4, 5), (5, 1), (3, 5))
    blas = cublas.Blas()
    blas.matmul(0, 0, 0, calls, "float32")
    assert [args[1] for args in fake.named("cublasSetMathMode")] == [cublas.CUBLAS_DEFAULT_MATH]
    monkeypatch.setattr(cublas.Blas, "allow_tf32", True)
    blas.matmul(0, 0, 0, calls, "float32")
    monkeypatch.setattr(cublas.Blas, "allow_tf32", False)
    monkeypatch.setenv("ARRAYX_TF32", "1")
    blas.matmul(0, 0, 0, calls, "float32")
    monkeypatch.delenv("ARRAYX_TF32")
    blas.matmul(0, 0, 0, calls, "float32")
    assert [args[1] for args in fake.named("cublasSetMathMode")] == [
        cublas.CUBLAS_DEFAULT_MATH, cublas.CUBLAS_TF32_TENSOR_OP_MATH, cublas.CUBLAS_DEFAULT_MATH]


def test_close_destroys_the_handle_once(fake):
    blas = cublas.Blas()
    blas.matmul(0, 0, 0, plan_matmul((3, 4), (4, 1), (4, 5), (5, 1), (3, 5)), "float32")
    blas.close()
    blas.close()
    assert [args[0].value for args in fake.named("cublasDestroy_v2")] == [0x1234]


class RacingCublas(FakeCublas):
    """A cuBLAS whose handle creation waits (up to half a second) for a
    second creation to start: what two threads meeting a fresh Blas at once
    do when nothing keeps the second out."""

    def __init__(self):
        super().__init__()
        self.created = []
        self.second = threading.Event()

    def cublasCreate_v2(self, handle):
        self.created.append(handle)
        if len(self.created) == 1:
            self.second.wait(0.5)
        else:
            self.second.set()
        handle._obj.value = 0x1000 + len(self.created)
        return 0


def test_threads_sharing_a_blas_make_one_handle_and_call_with_it(monkeypatch):
    lib = RacingCublas()
    monkeypatch.setattr(cublas, "_lib", lib)
    blas = cublas.Blas()
    calls = plan_matmul((3, 4), (4, 1), (4, 5), (5, 1), (3, 5))
    threads = [threading.Thread(target=blas.matmul, args=(0, 0, 0, calls, "float32")) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(lib.created) == 1
    assert [args[0].value for args in lib.named("cublasSgemmStridedBatched")] == [0x1001, 0x1001]


def test_failed_status_raises_with_the_status_name(fake):
    fake.status = 13
    with pytest.raises(RuntimeError, match="cuBLAS cublasSgemmStridedBatched: CUBLAS_STATUS_EXECUTION_FAILED"):
        cublas.Blas().matmul(0, 0, 0, plan_matmul((3, 4), (4, 1), (4, 5), (5, 1), (3, 5)), "float32")


def test_alloc_failed_raises_memory_error(fake):
    fake.status = cublas.CUBLAS_STATUS_ALLOC_FAILED
    with pytest.raises(MemoryError, match="cublasSgemmStridedBatched"):
        cublas.Blas().matmul(0, 0, 0, plan_matmul((3, 4), (4, 1), (4, 5), (5, 1), (3, 5)), "float32")


def test_dims_beyond_int32_use_the_64_bit_routine_or_raise(fake, monkeypatch):
    huge = GemmCall(CUBLAS_OP_N, CUBLAS_OP_N, 2**31, 1, 1, 2**31, 1, 2**31, 0, 0, 2**31, 1, 0, 0, 0)
    cublas.Blas().matmul(0, 0, 0, [huge], "float32")
    assert len(fake.named("cublasSgemmStridedBatched_64")) == 1
    monkeypatch.setattr(cublas, "_lib", NoSixtyFour())
    with pytest.raises(ValueError, match="matmul"):
        cublas.Blas().matmul(0, 0, 0, [huge], "float32")


def test_empty_plan_touches_no_library(monkeypatch):
    monkeypatch.setattr(cublas, "_lib", None)
    cublas.Blas().matmul(0, 0, 0, [], "float32")
    assert cublas._lib is None


# --- loading ---------------------------------------------------------------------------

def test_import_loads_no_library():
    code = ("import sys, arrayx._gpu.cublas as c\n"
            "assert c._lib is None\n"
            "assert 'libcublas' not in open('/proc/self/maps').read()\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_library_raises_oserror_naming_the_fix(monkeypatch):
    monkeypatch.setattr(cublas, "_lib", None)
    monkeypatch.setattr(cublas, "_search_dirs", lambda: [])
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    with pytest.raises(OSError, match=r'cuBLAS not found .*find_library.*pip install "arrayx\[gpu\]"'):
        cublas.Blas().matmul(0, 0, 0, plan_matmul((3, 4), (4, 1), (4, 5), (5, 1), (3, 5)), "float32")
    assert cublas._lib is None


def test_search_order_wheels_then_cuda_home_then_cuda_path(monkeypatch):
    monkeypatch.setenv("CUDA_HOME", "/opt/home")
    monkeypatch.setenv("CUDA_PATH", "/opt/path")
    dirs = cublas._search_dirs()
    assert dirs[-3:] == ["/opt/home/lib64", "/opt/path/lib64", "/usr/local/cuda/lib64"]
    assert all(d.endswith(("cu13/lib", "cublas/lib")) for d in dirs[:-3])
