// CUDA's execution model on the host, for running arrayx's generated kernels
// without a GPU. A kernel translation unit includes this header; the grid is
// walked by launch.cpp's ax_run_grid (one shared library, built once), which
// calls back into the unit for each CUDA thread of each block. Device math
// functions are the C library's, so special cases follow C99 as CUDA's do.
#include <cstring>
#include <math.h>

#define __global__
#define __device__
#define __forceinline__ inline
// One block runs at a time, so a block's shared memory can be a static.
#define __shared__ static

struct ax_dim3 { unsigned x = 0, y = 0, z = 0; };
static ax_dim3 threadIdx, blockIdx, blockDim, gridDim;

extern "C" void ax_syncthreads(void);
extern "C" int ax_run_grid(unsigned gx, unsigned gy, unsigned bx, int synchronizes,
                           void (*run_thread)(void* kernel, unsigned x, unsigned y, unsigned t), void* kernel);

// The CUDA threads of a block are fibers of one host thread: each takes its
// threadIdx back when it resumes.
static inline void __syncthreads() {
    ax_dim3 self = threadIdx;
    ax_syncthreads();
    threadIdx = self;
}

static inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
static inline double __longlong_as_double(long long i) { double d; std::memcpy(&d, &i, 8); return d; }
static inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
static inline long long __double_as_longlong(double d) { long long i; std::memcpy(&i, &d, 8); return i; }

static inline float ax_h2f(unsigned short h) { _Float16 f; std::memcpy(&f, &h, 2); return (float)f; }
static inline unsigned short ax_f2h(float x) { _Float16 f = (_Float16)x; unsigned short h; std::memcpy(&h, &f, 2); return h; }
static inline unsigned short ax_d2h(double x) { _Float16 f = (_Float16)x; unsigned short h; std::memcpy(&h, &f, 2); return h; }

// Run `kernel` (a callable running one CUDA thread) over a grid of (gx, gy)
// blocks of `bx` threads; `synchronizes` says whether it calls __syncthreads().
// 0, or -1 when a block's threads did not all reach the same __syncthreads().
template <class Kernel>
static int ax_launch(unsigned gx, unsigned gy, unsigned bx, bool synchronizes, Kernel kernel) {
    gridDim = {gx, gy, 1};
    blockDim = {bx, 1, 1};
    return ax_run_grid(gx, gy, bx, synchronizes, [](void* k, unsigned x, unsigned y, unsigned t) {
        blockIdx = {x, y, 0};
        threadIdx = {t, 0, 0};
        (*static_cast<Kernel*>(k))();
    }, &kernel);
}
