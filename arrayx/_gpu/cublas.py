"""Matrix products on the GPU: a small ctypes binding to cuBLAS.

PyCUDA has no BLAS, and a hand-written GEMM kernel is far slower than
cuBLAS's, so the GPU executor calls cuBLAS through ctypes: a handful of
functions, no compiled extension, nothing to build at install time.

Two layers:

- `plan_matmul` (pure Python, testable without a GPU) turns NumPy `matmul`
  on strided operands into cuBLAS strided-batched GEMM calls (`GemmCall`).
- `Blas` (one cuBLAS handle bound to one CUDA stream) runs those calls on
  device pointers.

The library is found and loaded on first use, never at import: the NVIDIA
wheels (`pip install "arrayx[gpu]"` brings `nvidia-cublas`), then
`$CUDA_HOME/lib64`, `$CUDA_PATH/lib64`, `/usr/local/cuda/lib64`, then the
system's library path.

TF32: float32 (and complex64) products compute in full float32 by default,
as on the CPU. TF32 tensor cores (about 10 mantissa bits, several times
faster on Ampere and later) are used when the environment variable
`ARRAYX_TF32=1` is set or the program sets `Blas.allow_tf32 = True`; either
takes effect at the next `Blas.matmul`.
"""

import ctypes
import ctypes.util
import glob
import itertools
import os
import threading
from math import prod
from typing import NamedTuple

# Values from cublas_api.h and library_types.h (CUDA 13.0).
CUBLAS_OP_N = 0
CUBLAS_OP_T = 1
CUBLAS_DEFAULT_MATH = 0   # no TF32 for float32 since CUDA 11
CUBLAS_TF32_TENSOR_OP_MATH = 3
CUDA_R_16F = 2
CUBLAS_COMPUTE_32F = 68
CUBLAS_GEMM_DEFAULT = -1

CUBLAS_STATUS_ALLOC_FAILED = 3
_STATUS_NAMES = {
    1: "CUBLAS_STATUS_NOT_INITIALIZED",
    3: "CUBLAS_STATUS_ALLOC_FAILED",
    7: "CUBLAS_STATUS_INVALID_VALUE",
    8: "CUBLAS_STATUS_ARCH_MISMATCH",
    11: "CUBLAS_STATUS_MAPPING_ERROR",
    13: "CUBLAS_STATUS_EXECUTION_FAILED",
    14: "CUBLAS_STATUS_INTERNAL_ERROR",
    15: "CUBLAS_STATUS_NOT_SUPPORTED",
    16: "CUBLAS_STATUS_LICENSE_ERROR",
}

_INT_MAX = 2**31 - 1  # the non-_64 routines take C int sizes


# --- planning -------------------------------------------------------------

class GemmCall(NamedTuple):
    """One cuBLAS `<t>gemmStridedBatched` call, in cuBLAS's column-major terms.

    Row-major `out = a @ b` is column-major `out^T = b^T a^T`, so cuBLAS's A
    is our `b` and cuBLAS's B is our `a`: `transa`, `lda`, `stride_a` and
    `a_offset` describe `b`; `transb`, `ldb`, `stride_b` and `b_offset`
    describe `a`; `m` is out's column count N, `n` its row count M.
    Strides and offsets count elements.
    """

    transa: int
    transb: int
    m: int
    n: int
    k: int
    lda: int
    ldb: int
    ldc: int
    stride_a: int
    stride_b: int
    stride_c: int
    batch: int
    a_offset: int
    b_offset: int
    c_offset: int


def _column_major_view(rows, cols, row_stride, col_stride):
    """How cuBLAS can read a rows x cols matrix: (op, ld) or None.

    op N: the matrix read as its transpose (cols x rows) in column-major, which
    is the row-major matrix. op T: the matrix itself in column-major. A stride
    of a size-1 dim is never used, so any value fits there.
    """
    if (col_stride == 1 or cols == 1) and (rows == 1 or row_stride >= max(1, cols)):
        return CUBLAS_OP_N, (row_stride if rows > 1 else max(1, cols))
    if (row_stride == 1 or rows == 1) and (cols == 1 or col_stride >= max(1, rows)):
        return CUBLAS_OP_T, (col_stride if cols > 1 else max(1, rows))
    return None


def operand_fits(shape, strides):
    """Whether `plan_matmul` accepts this operand as it is (no copy needed).

    True when no used stride is negative and the last two dims are row-major
    or column-major with a valid leading dimension.
    """
    if any(s < 0 for n, s in zip(shape, strides) if n > 1):
        return False
    return _column_major_view(shape[-2], shape[-1], strides[-2], strides[-1]) is not None


def _batch_strides(name, shape, strides, batch_shape):
    """The operand's strides along out's batch dims (0 where it broadcasts)."""
    pad = len(batch_shape) - (len(shape) - 2)
    if pad < 0:
        raise ValueError(f"matmul: {name} has more batch dims than out")
    result = []
    for i, size in enumerate(batch_shape):
        j = i - pad
        if j < 0 or shape[j] == 1:
            result.append(0)
        elif shape[j] == size:
            result.append(strides[j])
        else:
            raise ValueError(f"matmul: {name}'s batch dims {tuple(shape[:-2])} "
                             f"do not broadcast to {tuple(batch_shape)}")
    return result


def plan_matmul(a_shape, a_strides, b_shape, b_strides, out_shape):
    """The cuBLAS calls that compute NumPy `matmul(a, b)` into `out`.

    Shapes are tuples of ints, strides count elements (0 broadcasts); `a` and
    `b` are at least 2-D (the caller reshapes 1-D operands to (1, k) and
    (k, 1)) and `out` is C-contiguous with NumPy's result shape.

    Returns a list of `GemmCall`, usually one. The list is empty when there
    is nothing for cuBLAS to do; the caller must then fill `out` with zeros,
    which is the result when k == 0 and a no-op when `out` is empty.
    Returns None when an operand's layout does not fit cuBLAS (a negative
    stride, or a matrix neither row- nor column-major, e.g. `x[:, ::2]`):
    the caller copies it contiguous (`operand_fits` says which) and plans
    again.

    Batch dims that collapse into one stride for a, b and out at once become
    the GEMM's batch; where they do not (a permuted or step-sliced batch), the
    run of collapsing dims with the most matrices is the batch and the other
    batch dims are looped over, one call per index.
    """
    if len(a_shape) < 2 or len(b_shape) < 2:
        raise ValueError("matmul: operands must be at least 2-D (reshape 1-D operands first)")
    M, K = a_shape[-2:]
    N = b_shape[-1]
    if b_shape[-2] != K or tuple(out_shape[-2:]) != (M, N):
        raise ValueError(f"matmul: shapes {tuple(a_shape)} @ {tuple(b_shape)} -> {tuple(out_shape)} do not match")
    batch_shape = tuple(out_shape[:-2])
    a_batch = _batch_strides("a", a_shape, a_strides, batch_shape)
    b_batch = _batch_strides("b", b_shape, b_strides, batch_shape)
    if prod(out_shape) == 0 or K == 0:
        return []
    if not (operand_fits(a_shape, a_strides) and operand_fits(b_shape, b_strides)):
        return None
    transa, lda = _column_major_view(K, N, b_strides[-2], b_strides[-1])
    transb, ldb = _column_major_view(M, K, a_strides[-2], a_strides[-1])

    # Batch dims as (size, a stride, b stride, out stride); size-1 dims never move.
    dims = []
    out_stride = M * N
    for size, sa, sb in reversed(list(zip(batch_shape, a_batch, b_batch))):
        if size > 1:
            dims.append((size, sa, sb, out_stride))
        out_stride *= size
    dims.reverse()

    # Split into runs of dims that collapse (outer stride = inner stride * inner
    # size, for a and b; out is C-contiguous, so always); the largest run
    # becomes the GEMM batch.
    runs = []
    for i, dim in enumerate(dims):
        if i and all(dims[i - 1][x] == dim[x] * dim[0] for x in (1, 2)):
            runs[-1].append(dim)
        else:
            runs.append([dim])
    if runs:
        best = max(range(len(runs)), key=lambda r: (prod(d[0] for d in runs[r]), r))
        batch = prod(d[0] for d in runs[best])
        _, stride_b, stride_a, stride_c = runs[best][-1]
        looped = [d for r, run in enumerate(runs) if r != best for d in run]
    else:
        batch, stride_a, stride_b, stride_c, looped = 1, 0, 0, M * N, []

    calls = []
    for index in itertools.product(*(range(d[0]) for d in looped)):
        calls.append(GemmCall(
            transa, transb, N, M, K, lda, ldb, N, stride_a, stride_b, stride_c, batch,
            a_offset=sum(i * d[2] for i, d in zip(index, looped)),
            b_offset=sum(i * d[1] for i, d in zip(index, looped)),
            c_offset=sum(i * d[3] for i, d in zip(index, looped))))
    return calls


# --- the library ------------------------------------------------------------

_lib = None  # the loaded cuBLAS (ctypes.CDLL), set on first use


def _search_dirs():
    """Directories that may hold libcublas.so.*, in the order searched."""
    dirs = []
    try:
        import nvidia  # namespace package of the NVIDIA wheels
        for root in nvidia.__path__:
            dirs += [os.path.join(root, "cu13", "lib"), os.path.join(root, "cublas", "lib")]
    except ImportError:
        pass
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            dirs.append(os.path.join(os.environ[var], "lib64"))
    dirs.append("/usr/local/cuda/lib64")
    return dirs


def _open():
    """dlopen cuBLAS (cuBLASLt first, globally, so cuBLAS resolves against it)."""
    searched, errors = [], []
    for directory in _search_dirs():
        searched.append(directory)
        # The shortest name is the soname (libcublas.so.13), not a versioned file.
        for path in sorted(glob.glob(os.path.join(directory, "libcublas.so.*")), key=len):
            lt = os.path.join(directory, os.path.basename(path).replace("libcublas.", "libcublasLt."))
            try:
                if os.path.exists(lt):
                    ctypes.CDLL(lt, mode=ctypes.RTLD_GLOBAL)
                return ctypes.CDLL(path)
            except OSError as e:
                errors.append(f"{path}: {e}")
    searched.append('ctypes.util.find_library("cublas")')
    name = ctypes.util.find_library("cublas")
    if name:
        try:
            lt = ctypes.util.find_library("cublasLt")
            if lt:
                ctypes.CDLL(lt, mode=ctypes.RTLD_GLOBAL)
            return ctypes.CDLL(name)
        except OSError as e:
            errors.append(f"{name}: {e}")
    raise OSError(
        "cuBLAS not found (searched " + ", ".join(searched) + ")"
        + ("; failed to load " + "; ".join(errors) if errors else "")
        + '. pip install "arrayx[gpu]" installs it (the nvidia-cublas wheel).')


def _declare(lib):
    """Argument types of the functions used, so ctypes passes 64-bit pointers
    and long long strides correctly."""
    p, i32, i64, ll = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_longlong
    lib.cublasCreate_v2.argtypes = [ctypes.POINTER(p)]
    lib.cublasDestroy_v2.argtypes = [p]
    lib.cublasSetStream_v2.argtypes = [p, p]
    lib.cublasSetMathMode.argtypes = [p, i32]
    for suffix, it in (("", i32), ("_64", i64)):
        for t in "SDCZ":
            f = getattr(lib, f"cublas{t}gemmStridedBatched{suffix}", None)
            if f is not None:
                f.argtypes = [p, i32, i32, it, it, it, p, p, it, ll, p, it, ll, p, p, it, ll, it]
        f = getattr(lib, f"cublasGemmStridedBatchedEx{suffix}", None)
        if f is not None:
            f.argtypes = [p, i32, i32, it, it, it, p, p, i32, it, ll, p, i32, it, ll, p, p, i32, it, ll, it, i32, i32]
    return lib  # every restype stays ctypes' default, int: cublasStatus_t


def library():
    """The loaded cuBLAS (loaded once); OSError when there is none."""
    global _lib
    if _lib is None:
        _lib = _declare(_open())
    return _lib


def _check(function, status):
    if status == CUBLAS_STATUS_ALLOC_FAILED:
        raise MemoryError(f"cuBLAS {function}: out of GPU memory (CUBLAS_STATUS_ALLOC_FAILED)")
    if status:
        raise RuntimeError(f"cuBLAS {function}: {_STATUS_NAMES.get(status, f'status {status}')}")


# dtype name -> (routine, itemsize, ctypes type of alpha/beta)
_ROUTINES = {
    "float16": ("cublasGemmStridedBatchedEx", 2, ctypes.c_float),   # alpha, beta in the float32 compute type
    "float32": ("cublasSgemmStridedBatched", 4, ctypes.c_float),
    "float64": ("cublasDgemmStridedBatched", 8, ctypes.c_double),
    "complex64": ("cublasCgemmStridedBatched", 8, ctypes.c_float * 2),
    "complex128": ("cublasZgemmStridedBatched", 16, ctypes.c_double * 2),
}


class Blas:
    """A cuBLAS handle bound to one CUDA stream (an int CUstream, 0 = default).

    The handle is created on first use and `close()` destroys it. Threads may
    share a Blas: a lock makes the handle's creation, its math mode and the
    calls made under that mode one step (cuBLAS allows calls on one handle
    from several threads, but a mode one thread sets applies to every
    thread's calls).
    """

    allow_tf32 = False  # True: float32 products may use TF32 tensor cores

    def __init__(self, stream=0):
        self.stream = stream
        self._handle = None
        self._math_mode = None
        self._lock = threading.Lock()

    def _ready(self):
        lib = library()
        if self._handle is None:
            handle = ctypes.c_void_p()
            _check("cublasCreate_v2", lib.cublasCreate_v2(ctypes.byref(handle)))
            try:
                _check("cublasSetStream_v2", lib.cublasSetStream_v2(handle, self.stream))
            except RuntimeError:
                lib.cublasDestroy_v2(handle)  # a handle on the wrong stream must not be kept
                raise
            self._handle = handle
        # Read every call, so that switching TF32 on or off takes effect at once.
        mode = (CUBLAS_TF32_TENSOR_OP_MATH if self.allow_tf32 or os.environ.get("ARRAYX_TF32") == "1"
                else CUBLAS_DEFAULT_MATH)
        if mode != self._math_mode:
            _check("cublasSetMathMode", lib.cublasSetMathMode(self._handle, mode))
            self._math_mode = mode
        return lib

    def matmul(self, a_ptr, b_ptr, out_ptr, calls, dtype_name):
        """Run `plan_matmul`'s calls: out = a @ b, all three device pointers (ints).

        Enqueued on the stream; returns before the GPU finishes.
        """
        if not calls:
            return
        if dtype_name not in _ROUTINES:
            raise TypeError(f"matmul: cuBLAS has no GEMM for {dtype_name}")
        name, itemsize, scalar = _ROUTINES[dtype_name]
        with self._lock:   # the mode _ready sets is the one these calls run under
            lib = self._ready()
            is_complex = dtype_name.startswith("complex")
            alpha, beta = (scalar(1.0, 0.0), scalar()) if is_complex else (scalar(1.0), scalar(0.0))
            for c in calls:
                routine = name
                if max(c.m, c.n, c.k, c.lda, c.ldb, c.ldc, c.batch) > _INT_MAX:
                    routine += "_64"
                    if not hasattr(lib, routine):
                        raise ValueError(f"matmul: a dimension exceeds 2**31-1 and this cuBLAS has no {routine}")
                head = (self._handle, c.transa, c.transb, c.m, c.n, c.k, ctypes.byref(alpha))
                # cuBLAS's A is our b and its B our a (see GemmCall).
                A = b_ptr + c.a_offset * itemsize
                B = a_ptr + c.b_offset * itemsize
                C = out_ptr + c.c_offset * itemsize
                if dtype_name == "float16":
                    args = head + (A, CUDA_R_16F, c.lda, c.stride_a, B, CUDA_R_16F, c.ldb, c.stride_b,
                                   ctypes.byref(beta), C, CUDA_R_16F, c.ldc, c.stride_c, c.batch,
                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)
                else:
                    args = head + (A, c.lda, c.stride_a, B, c.ldb, c.stride_b, ctypes.byref(beta),
                                   C, c.ldc, c.stride_c, c.batch)
                _check(routine, getattr(lib, routine)(*args))

    def close(self):
        """Destroy the handle (safe to call twice; a later matmul makes a new one)."""
        with self._lock:
            if self._handle is not None:
                handle, self._handle, self._math_mode = self._handle, None, None
                _check("cublasDestroy_v2", _lib.cublasDestroy_v2(handle))
