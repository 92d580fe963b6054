// A stand-in for libcublas.so.13 over the stand-in CUDA driver (cuda.c):
// the handle, stream and math-mode calls and the strided-batched GEMMs
// arrayx's binding (arrayx/_gpu/cublas.py) makes. A GEMM waits for the work
// queued on the handle's stream, then runs at once through the function the
// tests register (standin_cublas_set_gemm: the emulated device's NumPy
// GEMM), so what follows on the stream sees its result. The rules kept: a
// handle needs a current context at creation and that context current at
// each call, a destroyed handle is invalid, and alpha = 1, beta = 0 are the
// only scalars computed (the only ones arrayx passes).
#include <cuda.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

enum {
    CUBLAS_STATUS_SUCCESS = 0,
    CUBLAS_STATUS_NOT_INITIALIZED = 1,
    CUBLAS_STATUS_INVALID_VALUE = 7,
    CUBLAS_STATUS_EXECUTION_FAILED = 13,
    CUBLAS_STATUS_NOT_SUPPORTED = 15,
    CUDA_R_16F = 2,
    CUBLAS_COMPUTE_32F = 68,
};

typedef struct handle {
    CUcontext context;
    CUstream stream;
    int math_mode;
    int alive;
} *cublasHandle_t;

// The GEMM that computes: column-major C = op(A) op(B), `batch` times;
// returns a cuBLAS status.
typedef int (*gemm_fn)(const char *dtype, int transa, int transb, long long m, long long n, long long k,
                       unsigned long long a, long long lda, long long stride_a, unsigned long long b, long long ldb,
                       long long stride_b, unsigned long long c, long long ldc, long long stride_c, long long batch);
static gemm_fn gemm;
static int live_handles;

void standin_violation(const char *format, ...);   // the stand-in driver's record

EXPORT void standin_cublas_set_gemm(gemm_fn fn) { gemm = fn; }

// Handles created and not destroyed (a test checks that none leak).
EXPORT int standin_cublas_live_handles(void) { return live_handles; }

EXPORT int cublasCreate_v2(cublasHandle_t *out) {
    CUcontext context = NULL;
    if (cuCtxGetCurrent(&context) || !context) {
        standin_violation("cublasCreate without a current context");
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    cublasHandle_t handle = calloc(1, sizeof *handle);
    handle->context = context;
    handle->alive = 1;
    __atomic_add_fetch(&live_handles, 1, __ATOMIC_SEQ_CST);
    *out = handle;
    return CUBLAS_STATUS_SUCCESS;
}

static int usable(const char *entry, cublasHandle_t handle) {
    if (!handle || !handle->alive) {
        standin_violation("%s: a destroyed cuBLAS handle", entry);
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    CUcontext context = NULL;
    if (cuCtxGetCurrent(&context) || context != handle->context) {
        standin_violation("%s without the handle's context current", entry);
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT int cublasDestroy_v2(cublasHandle_t handle) {
    int status = usable("cublasDestroy", handle);
    if (!status) {
        handle->alive = 0;   // kept, so that a later use is seen as one of a destroyed handle
        __atomic_sub_fetch(&live_handles, 1, __ATOMIC_SEQ_CST);
    }
    return status;
}

EXPORT int cublasSetStream_v2(cublasHandle_t handle, CUstream stream) {
    int status = usable("cublasSetStream", handle);
    if (!status) handle->stream = stream;
    return status;
}

EXPORT int cublasSetMathMode(cublasHandle_t handle, int mode) {
    int status = usable("cublasSetMathMode", handle);
    if (!status) handle->math_mode = mode;
    return status;
}

static int run(const char *entry, const char *dtype, cublasHandle_t handle, int transa, int transb, long long m,
               long long n, long long k, int unit_scalars, const void *a, long long lda, long long stride_a,
               const void *b, long long ldb, long long stride_b, void *c, long long ldc, long long stride_c,
               long long batch) {
    int status = usable(entry, handle);
    if (status) return status;
    if (!unit_scalars) {
        standin_violation("%s: the stand-in computes alpha = 1, beta = 0 only", entry);
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    if (!gemm) {
        standin_violation("%s: no GEMM registered (standin_cublas_set_gemm)", entry);
        return CUBLAS_STATUS_EXECUTION_FAILED;
    }
    if (cuStreamSynchronize(handle->stream)) return CUBLAS_STATUS_EXECUTION_FAILED;
    return gemm(dtype, transa, transb, m, n, k, (unsigned long long)a, lda, stride_a, (unsigned long long)b, ldb,
                stride_b, (unsigned long long)c, ldc, stride_c, batch);
}

#define REAL_GEMM(NAME, T, DTYPE)                                                                              \
    EXPORT int NAME(cublasHandle_t handle, int transa, int transb, int m, int n, int k, const T *alpha,          \
                    const T *a, int lda, long long stride_a, const T *b, int ldb, long long stride_b,           \
                    const T *beta, T *c, int ldc, long long stride_c, int batch) {                              \
        return run(#NAME, DTYPE, handle, transa, transb, m, n, k, *alpha == 1 && *beta == 0, a, lda, stride_a, \
                   b, ldb, stride_b, c, ldc, stride_c, batch);                                                \
    }

#define COMPLEX_GEMM(NAME, T, DTYPE)                                                                            \
    EXPORT int NAME(cublasHandle_t handle, int transa, int transb, int m, int n, int k, const T *alpha,          \
                    const T *a, int lda, long long stride_a, const T *b, int ldb, long long stride_b,           \
                    const T *beta, T *c, int ldc, long long stride_c, int batch) {                              \
        int unit = alpha[0] == 1 && alpha[1] == 0 && beta[0] == 0 && beta[1] == 0;                             \
        return run(#NAME, DTYPE, handle, transa, transb, m, n, k, unit, a, lda, stride_a, b, ldb, stride_b, c, \
                   ldc, stride_c, batch);                                                                      \
    }

REAL_GEMM(cublasSgemmStridedBatched, float, "float32")
REAL_GEMM(cublasDgemmStridedBatched, double, "float64")
COMPLEX_GEMM(cublasCgemmStridedBatched, float, "complex64")
COMPLEX_GEMM(cublasZgemmStridedBatched, double, "complex128")

// float16 only, computed in float32 (what arrayx asks for).
EXPORT int cublasGemmStridedBatchedEx(cublasHandle_t handle, int transa, int transb, int m, int n, int k,
                                      const void *alpha, const void *a, int a_type, int lda, long long stride_a,
                                      const void *b, int b_type, int ldb, long long stride_b, const void *beta,
                                      void *c, int c_type, int ldc, long long stride_c, int batch, int compute,
                                      int algorithm) {
    (void)algorithm;
    if (a_type != CUDA_R_16F || b_type != CUDA_R_16F || c_type != CUDA_R_16F || compute != CUBLAS_COMPUTE_32F) {
        standin_violation("cublasGemmStridedBatchedEx: the stand-in computes float16 in float32 only");
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    int unit = *(const float *)alpha == 1 && *(const float *)beta == 0;
    return run("cublasGemmStridedBatchedEx", "float16", handle, transa, transb, m, n, k, unit, a, lda, stride_a, b,
               ldb, stride_b, c, ldc, stride_c, batch);
}
