"""Elementwise functions where NumPy differs from the array API standard.

Each builder takes the step's output dtype and returns a callable over NumPy
buffers. The standard's special cases (signed zeros, infinities, NaN) are the
specification; the comments say where NumPy disagrees.
"""

import numpy as np


def _round(dtype):
    return np.round


def _pow(dtype):
    if dtype.kind in "iu":
        def int_pow(a, b):
            # NumPy raises for negative integer exponents; the standard leaves
            # them unspecified. arrayx truncates 1/a**|b| toward zero, as C does.
            a, b = np.broadcast_arrays(a, b)
            neg = b < 0
            if not neg.any():
                return np.power(a, b)
            out = np.power(a, np.where(neg, 0, b))
            mag = np.where(a == -1, np.where(b % 2 == 0, 1, -1), np.where(a == 1, 1, 0))
            return np.where(neg, mag, out).astype(dtype)
        return int_pow
    return np.power


def _floor_divide(dtype):
    if dtype.kind != "f":
        return np.floor_divide

    def floor_divide(a, b):
        # NumPy derives floor division from fmod, which gives NaN for an
        # infinite dividend and -1 for 1 // -inf; the standard defines the
        # result as floor(a / b) there.
        return np.where(np.isinf(a) | np.isinf(b), np.floor(np.divide(a, b)), np.floor_divide(a, b))
    return floor_divide


def _complex(real, imag, dtype):
    """A complex array from its parts, keeping signed zeros (x + 0j would not)."""
    out = np.empty(np.broadcast_shapes(np.shape(real), np.shape(imag)), dtype=dtype)
    out.real = real
    out.imag = imag
    return out


def _expm1(dtype):
    if dtype.kind != "c":
        return np.expm1

    def expm1(z):
        # NumPy's complex expm1 returns NaN for every non-finite input; there
        # exp(z) - 1 is exact, and exp has the C99 special cases. NumPy also
        # gives expm1(-0 + 0j) a real part of -0, where the standard says
        # expm1(±0 ± 0j) is +0 ± 0j.
        e = np.exp(z)
        out = np.where(np.isfinite(z), np.expm1(z), _complex(e.real - 1, e.imag, dtype))
        return _complex(np.where(z == 0, 0, out.real), out.imag, dtype)
    return expm1


def _tanh(dtype):
    if dtype.kind != "c":
        return np.tanh

    def tanh(z):
        # NumPy (like C99) gives tanh(±inf + bj) the zero imaginary part of
        # sin(2b), so tanh(inf + 2j) is 1 - 0j; the standard says 1 + 0j for
        # b > 0, with tanh(conj(z)) == conj(tanh(z)) and tanh(-z) == -tanh(z):
        # the zero takes the sign of b.
        z = np.asarray(z)
        at_inf = np.isinf(z.real) & np.isfinite(z.imag)
        return np.where(at_inf, _complex(np.copysign(1, z.real), np.copysign(0, z.imag), dtype), np.tanh(z))
    return tanh


def _remainder(dtype):
    return np.remainder


def _nextafter(dtype):
    if dtype.dtype != np.float16:
        return np.nextafter

    def nextafter(a, b):
        # NumPy's float16 nextafter returns x1 where x1 == x2; the standard (and
        # C's nextafter, which float32 and float64 use) return x2, so
        # nextafter(-0.0, +0.0) is +0.0.
        return np.where(a == b, b, np.nextafter(a, b))
    return nextafter


def _shift(fn):
    def build(dtype):
        return fn
    return build


SPECIAL = {
    "round": _round,
    "pow": _pow,
    "floor_divide": _floor_divide,
    "expm1": _expm1,
    "tanh": _tanh,
    "remainder": _remainder,
    "nextafter": _nextafter,
    "bitwise_left_shift": _shift(np.left_shift),
    "bitwise_right_shift": _shift(np.right_shift),
}


def build(name, dtype):
    return SPECIAL[name](dtype)
