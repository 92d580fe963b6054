// CUDA's execution model on the host, for testing arrayx's generated kernels
// without a GPU: each block runs on real threads (one per CUDA thread) that
// meet at __syncthreads() on a barrier, blocks run one after another, and
// __shared__ variables are statics (one block at a time uses them). Device
// math functions are the C library's, so special cases follow C99 as CUDA's do.
#include <barrier>
#include <cstring>
#include <functional>
#include <math.h>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static

struct ax_dim3 { unsigned x = 0, y = 0, z = 0; };
static thread_local ax_dim3 threadIdx;
static ax_dim3 blockIdx, blockDim, gridDim;
static std::barrier<>* ax_block_barrier;
static inline void __syncthreads() { ax_block_barrier->arrive_and_wait(); }

static inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
static inline double __longlong_as_double(long long i) { double d; std::memcpy(&d, &i, 8); return d; }

static inline float ax_h2f(unsigned short h) { _Float16 f; std::memcpy(&f, &h, 2); return (float)f; }
static inline unsigned short ax_f2h(float x) { _Float16 f = (_Float16)x; unsigned short h; std::memcpy(&h, &f, 2); return h; }
static inline unsigned short ax_d2h(double x) { _Float16 f = (_Float16)x; unsigned short h; std::memcpy(&h, &f, 2); return h; }

// Run `kernel` over a grid of (gx, gy) blocks of `bx` threads.
static void ax_launch(unsigned gx, unsigned gy, unsigned bx, const std::function<void()>& kernel) {
    gridDim.x = gx; gridDim.y = gy; gridDim.z = 1;
    blockDim.x = bx; blockDim.y = 1; blockDim.z = 1;
    for (unsigned y = 0; y < gy; y++) {
        for (unsigned x = 0; x < gx; x++) {
            blockIdx.x = x; blockIdx.y = y;
            std::barrier<> barrier(bx);
            ax_block_barrier = &barrier;
            std::vector<std::thread> threads;
            for (unsigned t = 0; t < bx; t++) {
                threads.emplace_back([t, &kernel] { threadIdx.x = t; kernel(); });
            }
            for (auto& thread : threads) thread.join();
        }
    }
}
