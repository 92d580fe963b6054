// arrayx's elementwise operations in C++: one function per operation whose
// semantics need more than a C operator, shared by standalone and fused
// kernels of both renderers (renderer/cstyle.py names them). The semantics are
// NumPy's loops as the CPU executor's NumPy path runs them, the array API
// standard's special cases included, so a GPU result and a native CPU result
// equal the NumPy path's (up to the last bits of transcendental functions,
// where CUDA's libdevice, glibc and NumPy's own loops differ).
//
// Needs no header: NVRTC provides CUDA's math functions, and a host compile
// puts its own prelude first (the CPU's native/host.h, the emulated GPU's
// emulation/host.h), defining __device__, __forceinline__, the math
// functions and the float16 conversions.

typedef unsigned short ax_half;   // float16 in memory; registers hold a float
struct ax_c64 { float re, im; };
struct ax_c128 { double re, im; };

// ---- float16: round to nearest even, as NumPy converts --------------------
#ifdef __CUDA_ARCH__
__device__ __forceinline__ float ax_h2f(ax_half h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ ax_half ax_f2h(float f) { ax_half h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ ax_half ax_d2h(double d) { ax_half h; asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(d)); return h; }
#endif
// A float16 result rounded, held in a float register (NumPy rounds every op).
__device__ __forceinline__ float ax_round_half(float f) { return ax_h2f(ax_f2h(f)); }

// ---- limits ---------------------------------------------------------------
template <typename T> struct ax_limits;
template <> struct ax_limits<signed char> { static __device__ signed char lo() { return -128; } static __device__ signed char hi() { return 127; } };
template <> struct ax_limits<short> { static __device__ short lo() { return -32768; } static __device__ short hi() { return 32767; } };
template <> struct ax_limits<int> { static __device__ int lo() { return -2147483647 - 1; } static __device__ int hi() { return 2147483647; } };
template <> struct ax_limits<long long> { static __device__ long long lo() { return -9223372036854775807LL - 1; } static __device__ long long hi() { return 9223372036854775807LL; } };
template <> struct ax_limits<unsigned char> { static __device__ unsigned char lo() { return 0; } static __device__ unsigned char hi() { return 255; } };
template <> struct ax_limits<unsigned short> { static __device__ unsigned short lo() { return 0; } static __device__ unsigned short hi() { return 65535; } };
template <> struct ax_limits<unsigned int> { static __device__ unsigned int lo() { return 0; } static __device__ unsigned int hi() { return 4294967295U; } };
template <> struct ax_limits<unsigned long long> { static __device__ unsigned long long lo() { return 0; } static __device__ unsigned long long hi() { return 18446744073709551615ULL; } };
template <> struct ax_limits<float> { static __device__ float lo() { return -__int_as_float(0x7f800000); } static __device__ float hi() { return __int_as_float(0x7f800000); } };
template <> struct ax_limits<double> { static __device__ double lo() { return -__longlong_as_double(0x7ff0000000000000LL); } static __device__ double hi() { return __longlong_as_double(0x7ff0000000000000LL); } };

// |x|, its sign bit cleared through an integer: g++ drops a fabs whose
// operand it proves non-negative (fabs(fmod(fabs(a), b))), taking a NaN's
// sign as unspecified, while x86 gives fmod's NaN, as NumPy's, its sign bit.
__device__ __forceinline__ float ax_fabs(float x) { return __int_as_float(__float_as_int(x) & 0x7fffffff); }
__device__ __forceinline__ double ax_fabs(double x) {
    return __longlong_as_double(__double_as_longlong(x) & 0x7fffffffffffffffLL);
}

// ---- integers: two's-complement wrap-around, as NumPy's loops -------------
// Signed overflow is undefined in C++, and unsigned types narrower than int
// promote to (signed) int: add, subtract, multiply and negate in an unsigned
// type at least as wide as int, and convert back (modulo 2**bits).
template <typename T> struct ax_wide { typedef unsigned int type; };
template <> struct ax_wide<long long> { typedef unsigned long long type; };
template <> struct ax_wide<unsigned long long> { typedef unsigned long long type; };
template <typename T> __device__ __forceinline__ T ax_wrap_add(T a, T b) { typedef typename ax_wide<T>::type W; return (T)((W)a + (W)b); }
template <typename T> __device__ __forceinline__ T ax_wrap_sub(T a, T b) { typedef typename ax_wide<T>::type W; return (T)((W)a - (W)b); }
template <typename T> __device__ __forceinline__ T ax_wrap_mul(T a, T b) { typedef typename ax_wide<T>::type W; return (T)((W)a * (W)b); }
template <typename T> __device__ __forceinline__ T ax_wrap_neg(T a) { typedef typename ax_wide<T>::type W; return (T)((W)0 - (W)a); }
template <typename T> __device__ __forceinline__ T ax_iabs(T a) { return a < 0 ? ax_wrap_neg(a) : a; }
template <typename T> __device__ __forceinline__ T ax_isign(T a) { return (T)((a > 0) - (a < 0)); }

// The floor of a / b (b != 0) for integers of at most 32 bits, in double:
// exact, as the correctly rounded quotient of two such values lies within
// half a double spacing of a / b, nearer than the gap of at least 1 / |b|
// between a quotient that is not an integer and the next integer. Double
// division vectorizes; integer division has no vector instruction. A zero
// divisor divides by 1 instead: the callers discard that quotient.
template <typename T> __device__ __forceinline__ long long ax_floor_quotient(T a, T b) {
    return (long long)floor((double)a / (double)(b == 0 ? (T)1 : b));
}
// NumPy: x // 0 is 0; MIN // -1 is MIN; otherwise the floor of the quotient.
template <typename T> __device__ __forceinline__ T ax_ifloor_divide(T a, T b) {
    if (sizeof(T) <= 4) return b == 0 ? (T)0 : (T)ax_floor_quotient(a, b);   // MIN // -1 wraps to MIN
    if (b == 0) return 0;
    if (ax_limits<T>::lo() < 0 && b == (T)-1 && a == ax_limits<T>::lo()) return a;
    T q = (T)(a / b);
    if (((a > 0) != (b > 0)) && (T)(q * b) != a && a != 0) q = (T)(q - 1);
    return q;
}
// NumPy: x % 0 is 0; the result takes the divisor's sign.
template <typename T> __device__ __forceinline__ T ax_iremainder(T a, T b) {
    if (sizeof(T) <= 4) return b == 0 ? (T)0 : (T)((long long)a - ax_floor_quotient(a, b) * (long long)b);
    if (b == 0) return 0;
    if (ax_limits<T>::lo() < 0 && b == (T)-1) return 0;
    T r = (T)(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b);
    return r;
}
// NumPy's shifts: a shift by the width or more (or by a negative count, read
// as unsigned) gives 0, or -1 for a negative signed value shifted right.
template <typename T> __device__ __forceinline__ bool ax_shift_in_range(T b) {
    return b >= 0 && (unsigned long long)b < sizeof(T) * 8;
}
template <typename T> __device__ __forceinline__ T ax_lshift(T a, T b) {
    typedef typename ax_wide<T>::type W;
    return ax_shift_in_range(b) ? (T)((W)a << b) : (T)0;
}
template <typename T> __device__ __forceinline__ T ax_rshift(T a, T b) {
    if (ax_shift_in_range(b)) return (T)(a >> b);
    return a < 0 ? (T)-1 : (T)0;
}
// Integer power by squaring, wrapping; a negative exponent truncates 1/a**|b|
// toward zero, as the CPU executor does (the standard leaves it unspecified).
template <typename T> __device__ __forceinline__ T ax_ipow(T a, T b) {
    if (b < 0) return a == 1 ? (T)1 : (a == (T)-1 ? ((b & 1) ? (T)-1 : (T)1) : (T)0);
    T out = 1;
    while (b) {
        if (b & 1) out = ax_wrap_mul(out, a);
        a = ax_wrap_mul(a, a);
        b = (T)(b >> 1);
    }
    return out;
}

// ---- floats ----------------------------------------------------------------
// NumPy's maximum/minimum: NaN wins; between equal values (+0 and -0) the
// second operand for float and double, the first for float16.
template <typename T> __device__ __forceinline__ T ax_fmax(T a, T b) { return (a > b || a != a) ? a : b; }
template <typename T> __device__ __forceinline__ T ax_fmin(T a, T b) { return (a < b || a != a) ? a : b; }
__device__ __forceinline__ float ax_hmax(float a, float b) { return (a >= b || a != a) ? a : b; }
__device__ __forceinline__ float ax_hmin(float a, float b) { return (a <= b || a != a) ? a : b; }
template <typename T> __device__ __forceinline__ T ax_imax(T a, T b) { return a > b ? a : b; }
template <typename T> __device__ __forceinline__ T ax_imin(T a, T b) { return a < b ? a : b; }
template <typename T> __device__ __forceinline__ T ax_fsign(T a) { return a > 0 ? (T)1 : (a < 0 ? (T)-1 : (a == 0 ? (T)0 : a)); }

// npy_divmod: Python's floored division and modulus, snapped to integers.
template <typename T> __device__ __forceinline__ T ax_divmod(T a, T b, T* modulus) {
    T mod = fmod(a, b);
    if (!b) { *modulus = mod; return a / b; }
    T div = (a - mod) / b;
    if (mod) {
        if ((b < 0) != (mod < 0)) { mod += b; div -= (T)1; }
    } else {
        mod = copysign((T)0, b);
    }
    T floordiv;
    if (div) {
        floordiv = floor(div);
        if (div - floordiv > (T)0.5) floordiv += (T)1;
    } else {
        floordiv = copysign((T)0, a / b);
    }
    *modulus = mod;
    return floordiv;
}
// The standard defines floor(a / b) where NumPy's fmod-based result is NaN
// or -1 (an infinite operand), as the CPU executor does.
template <typename T> __device__ __forceinline__ T ax_ffloor_divide(T a, T b) {
    if (isinf(a) || isinf(b)) return floor(a / b);
    if (!b) return a / b;
    T mod;
    return ax_divmod(a, b, &mod);
}
template <typename T> __device__ __forceinline__ T ax_fremainder(T a, T b) {
    if (!b) return fmod(a, b);
    T mod;
    ax_divmod(a, b, &mod);
    return mod;
}
// npy_logaddexp: equal arguments (infinities of one sign) give x + log(2).
template <typename T> __device__ __forceinline__ T ax_logaddexp(T a, T b) {
    if (a == b) return a + (T)0.693147180559945309417232121458176568;
    T d = a - b;
    if (d > 0) return a + log1p(exp(-d));
    if (d <= 0) return b + log1p(exp(d));
    return d;
}

// Float to integer conversions, as NumPy's casts run on x86-64 (a truncating
// conversion whose out-of-range and NaN result is the integer indefinite,
// MIN): the standard leaves these unspecified, and CPU and GPU should agree.
__device__ __forceinline__ int ax_f2i32(double x) {
    return (x != x || x >= 2147483648.0 || x <= -2147483649.0) ? (-2147483647 - 1) : (int)x;
}
__device__ __forceinline__ long long ax_f2i64(double x) {
    return (x != x || x >= 9223372036854775808.0 || x < -9223372036854775808.0) ? (-9223372036854775807LL - 1) : (long long)x;
}
__device__ __forceinline__ unsigned long long ax_f2u64(double x) {
    return x < 9223372036854775808.0 ? (unsigned long long)ax_f2i64(x)
                                     : ((unsigned long long)ax_f2i64(x - 9223372036854775808.0) ^ 0x8000000000000000ULL);
}

// ---- complex ---------------------------------------------------------------
template <typename C> struct ax_real_of;
template <> struct ax_real_of<ax_c64> { typedef float type; };
template <> struct ax_real_of<ax_c128> { typedef double type; };
template <typename C> __device__ __forceinline__ C ax_complex(typename ax_real_of<C>::type re, typename ax_real_of<C>::type im) { C z; z.re = re; z.im = im; return z; }
template <typename C> __device__ __forceinline__ C ax_cadd(C a, C b) { return ax_complex<C>(a.re + b.re, a.im + b.im); }
template <typename C> __device__ __forceinline__ C ax_csub(C a, C b) { return ax_complex<C>(a.re - b.re, a.im - b.im); }
template <typename C> __device__ __forceinline__ C ax_cmul(C a, C b) { return ax_complex<C>(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
template <typename C> __device__ __forceinline__ C ax_cneg(C a) { return ax_complex<C>(-a.re, -a.im); }
template <typename C> __device__ __forceinline__ C ax_cconj(C a) { return ax_complex<C>(a.re, -a.im); }
template <typename C> __device__ __forceinline__ bool ax_ceq(C a, C b) { return a.re == b.re && a.im == b.im; }
template <typename C> __device__ __forceinline__ bool ax_cnonzero(C a) { return a.re != 0 || a.im != 0; }
// NumPy's complex division (Smith's method, dividing by zero gives inf/NaN).
template <typename C> __device__ __forceinline__ C ax_cdiv(C a, C b) {
    typedef typename ax_real_of<C>::type R;
    R ar = fabs(b.re), ai = fabs(b.im);
    if (ar >= ai) {
        if (ar == 0 && ai == 0) return ax_complex<C>(a.re / ar, a.im / ar);
        R rat = b.im / b.re, scl = (R)1 / (b.re + b.im * rat);
        return ax_complex<C>((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);
    }
    R rat = b.re / b.im, scl = (R)1 / (b.im + b.re * rat);
    return ax_complex<C>((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);
}
