// The host side of renderer/ops.h for the CPU's native kernels: what NVRTC
// provides a CUDA kernel (qualifiers, math functions overloaded for float and
// double, float16 conversions, bit casts), for g++. The math functions are
// declared here rather than through <math.h>, which in C++ brings <cmath> and
// makes a kernel's compile five times slower.
//
// Where glibc's vector math library (libmvec) has a vector variant of a
// function, AX_SIMD lets loops calling it vectorize. Its results are within
// 4 ulp of the correctly rounded value (glibc's manual), as NumPy's own SIMD
// loops are; special values (inf, NaN, signed zeros) go through glibc's
// scalar code.
#ifndef AX_HOST_H
#define AX_HOST_H

#define __device__
#define __forceinline__ inline __attribute__((always_inline))

#ifdef AX_LIBMVEC
#define AX_SIMD __attribute__((simd("notinbranch")))
#else
#define AX_SIMD
#endif

// f(float) and f(double) over the C library's f##f and f.
#define AX_LIBM1(name, simd) \
    extern "C" float name##f(float) simd; \
    extern "C" double name(double) simd; \
    static __forceinline__ float name(float x) { return name##f(x); }
#define AX_LIBM2(name, simd) \
    extern "C" float name##f(float, float) simd; \
    extern "C" double name(double, double) simd; \
    static __forceinline__ float name(float x, float y) { return name##f(x, y); }

AX_LIBM1(acos, AX_SIMD) AX_LIBM1(acosh, AX_SIMD) AX_LIBM1(asin, AX_SIMD) AX_LIBM1(asinh, AX_SIMD)
AX_LIBM1(atan, AX_SIMD) AX_LIBM1(atanh, AX_SIMD) AX_LIBM1(cos, AX_SIMD) AX_LIBM1(cosh, AX_SIMD)
AX_LIBM1(exp, AX_SIMD) AX_LIBM1(expm1, AX_SIMD) AX_LIBM1(log, AX_SIMD) AX_LIBM1(log1p, AX_SIMD)
AX_LIBM1(log2, AX_SIMD) AX_LIBM1(log10, AX_SIMD) AX_LIBM1(sin, AX_SIMD) AX_LIBM1(sinh, AX_SIMD)
AX_LIBM1(tan, AX_SIMD) AX_LIBM1(tanh, AX_SIMD)
AX_LIBM2(atan2, AX_SIMD) AX_LIBM2(hypot, AX_SIMD) AX_LIBM2(pow, AX_SIMD)
AX_LIBM2(fmod, ) AX_LIBM2(nextafter, )

// Functions the compiler turns into instructions, with CUDA's overloads.
#define AX_BUILTIN1(name) \
    static __forceinline__ float name(float x) { return __builtin_##name##f(x); } \
    static __forceinline__ double name(double x) { return __builtin_##name(x); }
AX_BUILTIN1(fabs) AX_BUILTIN1(ceil) AX_BUILTIN1(floor) AX_BUILTIN1(trunc) AX_BUILTIN1(rint) AX_BUILTIN1(sqrt)
static __forceinline__ float copysign(float x, float y) { return __builtin_copysignf(x, y); }
static __forceinline__ double copysign(double x, double y) { return __builtin_copysign(x, y); }
template <typename T> static __forceinline__ bool isnan(T x) { return __builtin_isnan(x); }
template <typename T> static __forceinline__ bool isinf(T x) { return __builtin_isinf(x); }
template <typename T> static __forceinline__ bool isfinite(T x) { return __builtin_isfinite(x); }
template <typename T> static __forceinline__ bool signbit(T x) { return __builtin_signbit(x); }

static __forceinline__ float __int_as_float(int i) { float f; __builtin_memcpy(&f, &i, 4); return f; }
static __forceinline__ double __longlong_as_double(long long i) { double d; __builtin_memcpy(&d, &i, 8); return d; }
static __forceinline__ int __float_as_int(float f) { int i; __builtin_memcpy(&i, &f, 4); return i; }
static __forceinline__ long long __double_as_longlong(double d) { long long i; __builtin_memcpy(&i, &d, 8); return i; }

// float16 as NumPy converts: round to nearest even, in one step from double.
static __forceinline__ float ax_h2f(unsigned short h) { _Float16 f; __builtin_memcpy(&f, &h, 2); return (float)f; }
static __forceinline__ unsigned short ax_f2h(float x) { _Float16 f = (_Float16)x; unsigned short h; __builtin_memcpy(&h, &f, 2); return h; }
static __forceinline__ unsigned short ax_d2h(double x) { _Float16 f = (_Float16)x; unsigned short h; __builtin_memcpy(&h, &f, 2); return h; }

// Keeps the loop whose counter is `i` scalar: an empty asm (no instruction)
// the vectorizer cannot see through. For loops of a few iterations per row or
// call, whose vectorized copies (main loop, epilogues) would cost compile
// time and no run time; g++ 12 has no `#pragma GCC novector`.
#define AX_SCALAR_LOOP(i) __asm__("" : "+r"(i))

// A function called once per row or block, not per point, kept out of line:
// inlined at each call, its loops would be compiled again at each (most of
// a reduction kernel's compile time), for a call's few nanoseconds saved.
#define AX_OUTLINE __attribute__((noinline))

// Loops over axes [lo, hi) of a kernel's iteration space, whose extents
// (`dims`) and operands' strides the kernel reads at run time: coordinates
// from a flat index, the next point in C order, an operand's offset.
#define AX_MAX_AXES 64
static AX_OUTLINE void ax_unravel(long long i, const long long* dims, long long* c, int lo, int hi) {
    for (int d = hi - 1; d >= lo; d--) { c[d] = i % dims[d]; i /= dims[d]; }
}
static AX_OUTLINE void ax_next(const long long* dims, long long* c, int lo, int hi) {
    for (int d = hi - 1; d >= lo; d--) { if (++c[d] < dims[d]) return; c[d] = 0; }
}
static AX_OUTLINE long long ax_offset(const long long* strides, const long long* c, int lo, int hi) {
    long long o = 0;
    for (int d = lo; d < hi; d++) { AX_SCALAR_LOOP(d); o += c[d] * strides[d]; }
    return o;
}

// The outputs of an elementwise kernel in a streamed form (codegen.py) are
// computed into a buffer and copied out with streaming stores: written
// through the cache, each line of an output larger than the cache is read
// from memory first, only to be evicted unused; streamed, it is written
// once. Whole lines or nothing: 16-byte streaming stores did not save that
// read on the machines measured (compiler.stream_bytes() says where forms
// are streamed).
#ifdef __AVX512F__
typedef float ax_line __attribute__((vector_size(64), aligned(1)));
// Copies `bytes` from src to dst, the lines dst holds whole with streaming stores.
static AX_OUTLINE void ax_stream(void* dst, const void* src, long long bytes) {
    char* d = (char*)dst;
    const char* s = (const char*)src;
    long long head = (long long)(-(unsigned long long)d & 63);
    if (head > bytes) head = bytes;
    __builtin_memcpy(d, s, head);
    long long i = head;
    for (; i + 64 <= bytes; i += 64) __builtin_ia32_movntps512((float*)(d + i), *(const ax_line*)(s + i));
    __builtin_memcpy(d + i, s + i, bytes - i);
}
// Streamed stores are weakly ordered: fenced before the threads that made
// them report the work done.
static __forceinline__ void ax_stream_fence() { __builtin_ia32_sfence(); }
#else
// Where tests stream without such stores: a plain copy.
static AX_OUTLINE void ax_stream(void* dst, const void* src, long long bytes) { __builtin_memcpy(dst, src, bytes); }
static __forceinline__ void ax_stream_fence() {}
#endif

// A floating sum's block totals, added pairwise as they come (a binary
// counter: level i holds the sum of 2**i blocks), so rounding errors grow
// with the logarithm of the number of blocks, as in NumPy's pairwise sum.
template <typename T> struct ax_cascade {
    T level[64];
    int depth = 0;
    unsigned long long count = 0;
    AX_OUTLINE void push(T x) {
        for (unsigned long long k = ++count; !(k & 1); k >>= 1) x = level[--depth] + x;
        level[depth++] = x;
    }
    AX_OUTLINE T total(T zero) const {
        if (!depth) return zero;
        T t = level[0];
        for (int i = 1; i < depth; i++) { AX_SCALAR_LOOP(i); t = t + level[i]; }
        return t;
    }
};

#endif
