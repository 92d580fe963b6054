"""Every device computes the public namespace alike: one differential table of
representative calls (CASES), run on each device of `device` (the CPU, conftest's
`cuda:0`: a real GPU where there is one, else the emulated one, and dask with
1 KiB chunks on the synchronous scheduler, so that every input spans several
chunks). Each case builds its inputs with `xp.asarray(a, device=device)`,
calls the function and checks that every result lives on the inputs' device
and equals NumPy's answer (dtype, shape and values, to the case's tolerance).

The table covers the primitives: running it on the CPU under
`xp.debug.profile()` runs every executable primitive but the few pinned in
NOT_COVERED, so a new primitive without a case here fails
`test_the_table_runs_every_executable_primitive`.
"""

import numpy as np
import pytest

import arrayx as xp
from arrayx.autodiff import grad, stop_gradient, value_and_grad
from test_primitives import EXECUTABLE

pytestmark = pytest.mark.usefixtures("lazy_and_eager")   # results alike in eager mode

# 128 float64 values a chunk: the inputs below span several chunks per axis.
DASK_CHUNK_SIZE = "1KiB"


@pytest.fixture(params=["cpu", "cuda:0", "dask"])
def device(request):
    """The device a case runs on (dask with tiny chunks, computed in this thread)."""
    if request.param == "cpu":
        yield xp.Device("cpu")
    elif request.param == "cuda:0":
        yield request.getfixturevalue("gpu")
    else:
        with _dask_config():
            yield xp.Device("dask")


def _dask_config():
    import dask  # the test extra installs it (arrayx[dask])
    return dask.config.set({"array.chunk-size": DASK_CHUNK_SIZE, "scheduler": "synchronous"})


# --- inputs: a few shapes and dtypes, so the emulated GPU compiles few kernels

_rng = np.random.default_rng(0)
_SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.5, 0.5, 2.5, -2.5, 5e-324, 1e300]
INPUTS = {
    "x": _rng.uniform(-2, 2, (24, 50)),                      # float64 over several chunks
    "y": _rng.uniform(-2, 2, 50),                            # a row to broadcast against x
    "u": _rng.uniform(-0.95, 0.95, (24, 50)),                # inside (-1, 1): asin, acos, atanh
    "p": _rng.uniform(0.1, 3.0, (24, 50)),                   # positive: logarithms, roots, powers
    "near1": _rng.uniform(0.9, 1.1, (24, 50)),               # products of many of them stay finite
    "s": np.resize(np.array(_SPECIALS), (24, 50)),           # IEEE special values
    "x32": _rng.uniform(-2, 2, (24, 50)).astype(np.float32),
    "p32": _rng.uniform(0.1, 3.0, (24, 50)).astype(np.float32),
    "i": _rng.integers(-100, 100, (24, 50)).astype(np.int32),
    "j": _rng.integers(1, 10, 50).astype(np.int32),          # nonzero divisors, a row
    "shift": _rng.integers(0, 8, 50).astype(np.int32),       # shift amounts, a row
    "u8": _rng.integers(0, 256, (24, 50)).astype(np.uint8),
    "i8": _rng.integers(-128, 128, (24, 50)).astype(np.int8),
    "b": _rng.random((24, 50)) < 0.5,
    "c": (_rng.uniform(-2, 2, (24, 50)) + 1j * _rng.uniform(-2, 2, (24, 50))),
    "c64": (_rng.uniform(-2, 2, (24, 50)) + 1j * _rng.uniform(-2, 2, (24, 50))).astype(np.complex64),
    "v": _rng.integers(0, 20, 300).astype(np.float64),       # a vector with many ties
    "vi": _rng.integers(-5, 5, 300).astype(np.int64),
    "keys": np.sort(_rng.uniform(0, 20, 40)),                # sorted, to search
    "rows": np.array([3, 0, 23, 3, 17], dtype=np.int64),     # indices into x's axis 0 (repeats)
    "cols": np.array([49, 0, 7, 7, 12], dtype=np.int64),     # and into its axis 1
    "along": _rng.integers(0, 50, (24, 5)).astype(np.int64),  # take_along_axis(x, along, axis=1)
    "counts": _rng.integers(0, 3, 24).astype(np.int64),      # repeats of x's rows
    # Well-conditioned square matrices (condition number below 10): their
    # factorizations agree to near machine precision across algorithms.
    "a": _rng.uniform(-1, 1, (20, 20)) + 20 * np.eye(20),
    "a32": (_rng.uniform(-1, 1, (20, 20)) + 20 * np.eye(20)).astype(np.float32),
    "rhs": _rng.uniform(-1, 1, (20, 3)),
    "stack": _rng.uniform(-1, 1, (4, 6, 6)) + 6 * np.eye(6),  # a batch of matrices
    "tall": _rng.uniform(-1, 1, (40, 8)),
    "v3": _rng.uniform(-1, 1, (10, 3)),
    "sig": _rng.uniform(-1, 1, 256),                         # a signal for the FFTs
    "sig2": _rng.uniform(-1, 1, (16, 32)),
}
INPUTS["spd"] = INPUTS["a"] @ INPUTS["a"].T                  # symmetric positive definite
INPUTS["sym"] = INPUTS["a"] + INPUTS["a"].T                  # symmetric, distinct eigenvalues
INPUTS["csig"] = np.fft.fft(INPUTS["sig"])                 # complex signals
INPUTS["csig2"] = INPUTS["sig2"] + 1j * INPUTS["sig2"][::-1]

# (rtol, atol) by the kind of computation and the result's float dtype
# (complex by its parts'); integer and bool results, and "exact" cases, are
# compared bitwise. Inputs are of magnitude about 1, so atol is meaningful.
TOLERANCES = {
    # One or two correctly rounded operations; a fused kernel may contract
    # a*b + c into one fma (nvcc does by default), which rounds once less.
    "rounded": {np.float32: (4e-7, 4e-7), np.float64: (1e-15, 1e-15)},
    # Transcendental functions: NumPy's (SIMD for float32), glibc's and
    # CUDA's math library are each within a few units in the last place.
    "libm": {np.float32: (2e-6, 2e-6), np.float64: (1e-14, 1e-14)},
    # Sums (and products) of up to 1200 terms in another order (NumPy's pairwise sum, the
    # executors' blocks, dask's tree of per-chunk partials): the error bound
    # grows with the terms' count and their magnitude, cancellation included.
    "summation": {np.float32: (1e-5, 1e-4), np.float64: (1e-12, 1e-12)},
    # LAPACK factorizations of matrices with condition number below 10 and
    # dask's own algorithms (tsqr, blocked inverse and solve): backward
    # stable, so a few hundred eps of the input's norm.
    "lapack": {np.float32: (1e-4, 1e-4), np.float64: (1e-11, 1e-11)},
    # pocketfft against dask's per-axis transforms: log2(n) rounding steps
    # over sums of n terms of magnitude 1.
    "fft": {np.float32: (1e-5, 1e-5), np.float64: (1e-12, 1e-12)},
}


class Case:
    """`fn(m, *arrays)` called with m = arrayx on the device's inputs and with
    m = numpy on copies of the NumPy inputs (or `oracle(*arrays)` where NumPy
    spells it otherwise); `creates` cases take the device as their one
    argument ("cpu" for NumPy). `post`, applied to both results as NumPy
    arrays, maps them to what is unique (factorizations are unique up to
    signs). `tol` names a TOLERANCES row."""

    def __init__(self, fn, *inputs, tol="exact", oracle=None, post=None, creates=False):
        self.fn = fn
        self.inputs = inputs
        self.tol = tol
        self.oracle = oracle
        self.post = post
        self.creates = creates

    def on_arrayx(self, device):
        if self.creates:
            return self.fn(xp, device)
        return self.fn(xp, *[xp.asarray(INPUTS[name], device=device) for name in self.inputs])

    def on_numpy(self):
        if self.creates:
            return self.fn(np, "cpu")
        arrays = [INPUTS[name].copy() for name in self.inputs]
        with np.errstate(all="ignore"):   # special values: NaN and infinities are the answers
            return self.oracle(*arrays) if self.oracle else self.fn(np, *arrays)


def _leaves(result):
    """The arrays of a result: an array, or a (named) tuple or list of them."""
    if isinstance(result, (tuple, list)):
        return [leaf for part in result for leaf in _leaves(part)]
    return [result]


CASES = {}


def case(name, fn, *inputs, **options):
    assert name not in CASES, name
    CASES[name] = Case(fn, *inputs, **options)


# --- elementwise, unary ----------------------------------------------------

for name, source, tol in [
        ("abs", "x", "exact"), ("negative", "x", "exact"), ("positive", "x", "exact"), ("square", "x", "rounded"),
        ("sign", "s", "exact"), ("ceil", "x", "exact"), ("floor", "x", "exact"), ("round", "x", "exact"),
        ("trunc", "x", "exact"), ("signbit", "s", "exact"), ("isnan", "s", "exact"), ("isinf", "s", "exact"),
        ("isfinite", "s", "exact"), ("reciprocal", "p", "rounded"), ("sqrt", "p", "rounded"), ("exp", "x", "libm"),
        ("expm1", "x", "libm"), ("log", "p", "libm"), ("log1p", "p", "libm"), ("log2", "p", "libm"),
        ("log10", "p", "libm"), ("sin", "x", "libm"), ("cos", "x", "libm"), ("tan", "u", "libm"),
        ("asin", "u", "libm"), ("acos", "u", "libm"), ("atan", "x", "libm"), ("sinh", "x", "libm"),
        ("cosh", "x", "libm"), ("tanh", "x", "libm"), ("asinh", "x", "libm"), ("acosh", "p", "libm"),
        ("atanh", "u", "libm")]:
    # acosh needs x >= 1: p + 0.9 is.
    if name == "acosh":
        case(name, lambda m, a: m.acosh(a + 0.9), source, tol=tol)
    else:
        case(name, lambda m, a, name=name: getattr(m, name)(a), source, tol=tol)

for name, source in [("sin", "x32"), ("exp", "x32"), ("log", "p32"), ("tanh", "x32"), ("sqrt", "p32")]:
    case(f"{name} float32", lambda m, a, name=name: getattr(m, name)(a), source,
         tol="rounded" if name == "sqrt" else "libm")

# IEEE special values, signed zeros, halves (round to even), a subnormal.
for name, tol in [("round", "exact"), ("floor", "exact"), ("abs", "exact"), ("sqrt", "rounded"), ("exp", "libm"),
                  ("log", "libm"), ("tanh", "libm"), ("atan", "libm")]:
    case(f"{name} of special values", lambda m, a, name=name: getattr(m, name)(a), "s", tol=tol)
case("nextafter of special values", lambda m, a: m.nextafter(a, m.flip(a, axis=1)), "s")
case("maximum of special values", lambda m, a: m.maximum(a, m.flip(a, axis=1)), "s")
case("astype of special values to float32", lambda m, a: m.astype(a, m.float32), "s")
case("strided and reversed inputs", lambda m, a, b: m.exp(a[::2, ::-3]) * b[::-3], "x", "y", tol="libm")
case("a 0-d array", lambda m, a: a[3, 4] * 2 + m.sin(a[0, 0]), "x", tol="libm")

# --- elementwise, binary, with a row broadcast against a matrix -------------

for name, left, right, tol in [
        ("add", "x", "y", "rounded"), ("subtract", "x", "y", "rounded"), ("multiply", "x", "y", "rounded"),
        ("divide", "x", "y", "rounded"), ("pow", "p", "y", "libm"), ("atan2", "x", "y", "libm"),
        ("copysign", "x", "y", "exact"), ("hypot", "x", "y", "libm"), ("logaddexp", "x", "y", "libm"),
        ("maximum", "x", "y", "exact"), ("minimum", "x", "y", "exact"), ("nextafter", "x", "y", "exact"),
        ("remainder", "x", "y", "rounded"), ("floor_divide", "x", "y", "exact"), ("equal", "v", "v", "exact"),
        ("not_equal", "x", "y", "exact"), ("less", "x", "y", "exact"), ("less_equal", "x", "y", "exact"),
        ("greater", "x", "y", "exact"), ("greater_equal", "x", "y", "exact")]:
    case(f"{name} float64", lambda m, a, b, name=name: getattr(m, name)(a, b), left, right, tol=tol)

# Integers, bitwise-exact: C's division and shifts are not Python's, the
# executors must give floor division, a remainder of the divisor's sign and
# well-defined shifts.
for name, left, right in [
        ("add", "i", "j"), ("subtract", "i", "j"), ("multiply", "i", "j"), ("floor_divide", "i", "j"),
        ("remainder", "i", "j"), ("maximum", "i", "j"), ("less", "i", "j"), ("bitwise_and", "i", "j"),
        ("bitwise_or", "i", "j"), ("bitwise_xor", "i", "j"), ("bitwise_left_shift", "i", "shift"),
        ("bitwise_right_shift", "i", "shift"), ("add", "u8", "u8"), ("multiply", "i8", "i8")]:
    case(f"{name} {INPUTS[left].dtype}", lambda m, a, b, name=name: getattr(m, name)(a, b), left, right)
for name in ["abs", "negative", "sign", "square", "bitwise_invert"]:
    case(f"{name} int32", lambda m, a, name=name: getattr(m, name)(a), "i")
case("bitwise_invert uint8", lambda m, a: m.bitwise_invert(a), "u8")
case("subtract uint8 wraps around", lambda m, a: a - m.flip(a, axis=1), "u8")
case("abs and negative of int8 wrap at -128", lambda m, a: (m.abs(a), -a), "i8")
case("floor_divide and remainder by negative divisors", lambda m, a, b: (a // -b, a % -b), "i", "j")
case("pow int32", lambda m, a, b: m.pow(a, b % 4), "i", "j")

for name in ["logical_and", "logical_or", "logical_xor", "bitwise_and", "not_equal"]:
    case(f"{name} bool", lambda m, a, name=name: getattr(m, name)(a, m.flip(a, axis=0)), "b")
case("logical_not bool", lambda m, a: m.logical_not(a), "b")

for name, tol in [("add", "rounded"), ("multiply", "rounded"), ("divide", "rounded"), ("abs", "libm"),
                  ("conj", "exact"), ("real", "exact"), ("imag", "exact"), ("square", "rounded"),
                  ("exp", "libm"), ("sqrt", "libm"), ("log", "libm"), ("equal", "exact"), ("isfinite", "exact")]:
    if name in ("add", "multiply", "divide", "equal"):
        case(f"{name} complex128", lambda m, a, name=name: getattr(m, name)(a, a[0]), "c", tol=tol)
    else:
        case(f"{name} complex128", lambda m, a, name=name: getattr(m, name)(a), "c", tol=tol)
case("multiply complex64", lambda m, a: a * a[3], "c64", tol="rounded")
case("abs complex64", lambda m, a: m.abs(a), "c64", tol="libm")

# --- type promotion: Python scalars take the array's dtype; arrays promote --

case("float32 times a Python float stays float32", lambda m, a: a * 2.5 - 1, "x32", tol="rounded")
case("int32 plus a Python int stays int32", lambda m, a: a + 3 - 7 * a, "i")
case("uint8 times a Python int wraps around", lambda m, a: a * 3 + 200, "u8")
case("int32 true division gives float64", lambda m, a, b: a / b, "i", "j", tol="rounded")
case("float32 plus a Python complex is complex64", lambda m, a: a + 1j, "x32", tol="rounded")
case("bool and a Python bool", lambda m, a: (a & True) | False, "b")
case("Python scalar to the left", lambda m, a: 2 ** a - 1 / a, "p32", tol="libm")
case("int array compared with a Python float", lambda m, a: a < 2.5, "i")
case("float32 plus float64 is float64", lambda m, a, b: a + b, "x32", "x", tol="rounded")
case("int8 plus uint8 is int16", lambda m, a, b: a + b, "i8", "u8")
case("int8 times int32 is int32", lambda m, a, b: a * b, "i8", "i")

# --- reductions ------------------------------------------------------------

for name, source, axis, keepdims, tol in [
        ("sum", "x", None, False, "summation"), ("sum", "x", 0, True, "summation"),
        ("sum", "x", 1, False, "summation"), ("sum", "x32", (0, 1), False, "summation"),
        ("sum", "i", 0, False, "exact"), ("sum", "u8", None, False, "exact"),
        ("prod", "near1", 1, False, "summation"), ("prod", "near1", None, True, "summation"),
        ("max", "x", None, False, "exact"), ("max", "x", 1, True, "exact"), ("min", "x", 0, False, "exact"),
        ("min", "i8", 1, False, "exact"), ("mean", "x", 1, False, "summation"),
        ("mean", "x", None, True, "summation"), ("var", "x", 0, False, "summation"),
        ("std", "x", None, False, "summation"), ("any", "b", 0, False, "exact"),
        ("any", "b", None, True, "exact"), ("all", "b", 1, False, "exact"), ("all", "b", None, False, "exact")]:
    case(f"{name} {INPUTS[source].dtype} axis={axis} keepdims={keepdims}",
         lambda m, a, name=name, axis=axis, keepdims=keepdims: getattr(m, name)(a, axis=axis, keepdims=keepdims),
         source, tol=tol)
case("max with NaN", lambda m, a: m.max(a, axis=1), "s")
case("min with NaN, keepdims", lambda m, a: m.min(a, axis=0, keepdims=True), "s")
case("sum with infinities", lambda m, a: m.sum(a, axis=0), "s", tol="summation")
case("sum over a zero-size axis", lambda m, a: m.sum(a[:0], axis=0), "x")
case("prod of an empty row", lambda m, a: m.prod(a[:, :0], axis=1), "i")
case("prod of int32 gives int64", lambda m, a: m.prod(a[:4] % 5, axis=0), "i")
case("sum of float32 with dtype=float64", lambda m, a: m.sum(a, axis=1, dtype=m.float64), "x32", tol="summation")
case("var of float32", lambda m, a: m.var(a, axis=0), "x32", tol="summation")
case("var with correction=1", lambda m, a: m.var(a, axis=1, correction=1), "x", tol="summation")
case("sum of int8 with dtype=int8 wraps around", lambda m, a: m.sum(a, axis=0, dtype=m.int8), "i8")
case("any over a comparison", lambda m, a: m.any(a > 1.9, axis=1), "x")

case("cumulative_sum axis=1", lambda m, a: m.cumulative_sum(a, axis=1), "x", tol="summation")
case("cumulative_sum include_initial", lambda m, a: m.cumulative_sum(a, axis=0, include_initial=True), "i")
case("cumulative_prod axis=0", lambda m, a: m.cumulative_prod(a, axis=0), "near1", tol="summation")
case("argmax axis=1", lambda m, a: m.argmax(a, axis=1), "x")
case("argmax with ties, keepdims", lambda m, a: m.argmax(a, axis=0, keepdims=True), "i8")
case("argmin of all", lambda m, a: m.argmin(a), "x")
case("argmax with NaN", lambda m, a: m.argmax(a, axis=1), "s")
case("cumulative_sum of uint8 gives uint64", lambda m, a: m.cumulative_sum(a, axis=1), "u8")
case("cumulative_sum of an empty axis", lambda m, a: m.cumulative_sum(a[:0], axis=0, include_initial=True), "x")

# --- manipulation ----------------------------------------------------------

case("reshape", lambda m, a: m.reshape(a, (6, 4, 50)), "x")
case("reshape of a transpose", lambda m, a: m.reshape(a.T, (-1,)), "i")
case("permute_dims of an input", lambda m, a: m.permute_dims(m.reshape(a, (4, 6, 50)), (2, 0, 1)), "x")
case("permute_dims of a computed array", lambda m, a: m.permute_dims(m.reshape(a - 1, (4, 6, 50)), (2, 0, 1)),
     "x", tol="rounded")
case("concat axis=0", lambda m, a, b: m.concat([a, b[:3], a[5:6]], axis=0), "x", "x")
case("concat axis=1", lambda m, a, b: m.concat((a, b), axis=1), "i", "i")
case("concat with an empty array", lambda m, a: m.concat([a[:0], a, a[:0]], axis=0), "x")
case("concat flattened", lambda m, a, b: m.concat((a, b), axis=None), "u8", "u8")
case("stack", lambda m, a, b: m.stack([a, b * 2], axis=1), "x", "x", tol="rounded")
case("unstack", lambda m, a: m.unstack(a[:3], axis=0), "x")
case("flip", lambda m, a: m.flip(a, axis=1), "x")
case("flip all axes", lambda m, a: m.flip(a), "b")
case("roll", lambda m, a: m.roll(a, 7, axis=1), "x")
case("roll flattened", lambda m, a: m.roll(a, -3), "i")
case("squeeze", lambda m, a: m.squeeze(a[:, :1], axis=1), "x")
case("expand_dims", lambda m, a: m.expand_dims(a, axis=1), "x")
case("broadcast_to", lambda m, a: m.broadcast_to(a, (3, 24, 50)), "y")
case("broadcast_to of a computed array", lambda m, a: m.broadcast_to(a[None, :] // 3, (24, 50)), "j")
case("broadcast_arrays", lambda m, a, b: m.broadcast_arrays(a, b), "x", "y")
case("tile", lambda m, a: m.tile(a[:4], (2, 3)), "x")
case("repeat by a count", lambda m, a: m.repeat(a, 3, axis=0), "x")
case("repeat by an array of counts", lambda m, a, r: m.repeat(a, r, axis=0), "x", "counts")
case("moveaxis", lambda m, a: m.moveaxis(m.reshape(a, (4, 6, 50)), 0, -1), "x")
case("matrix_transpose", lambda m, a: m.matrix_transpose(m.reshape(a, (4, 6, 50))), "x")
case(".T of a computed array", lambda m, a: (a + 1).T, "i")
case("diff", lambda m, a: m.diff(a, axis=1, n=2), "x", tol="rounded")

# --- indexing --------------------------------------------------------------

case("basic slices with steps", lambda m, a: a[2:20:3, ::-2], "x")
case("integer and ellipsis and newaxis", lambda m, a: a[3, ..., None], "x")
case("an integer array on axis 0", lambda m, a, r: a[r], "x", "rows")
case("integer arrays on both axes", lambda m, a, r, c: a[r, c], "x", "rows", "cols")
case("a slice and an integer array", lambda m, a, c: a[1:5, c], "x", "cols")
case("a boolean mask", lambda m, a: a[a > 0.5], "x")
case("a boolean mask of rows", lambda m, a: a[a[:, 0] > 0], "x")
case("take axis=0", lambda m, a, r: m.take(a, r, axis=0), "x", "rows")
case("take axis=1", lambda m, a, c: m.take(a, c, axis=1), "i", "cols")
case("take_along_axis", lambda m, a, t: m.take_along_axis(a, t, axis=1), "x", "along")


def _set_slice(m, a):
    a[1:20:2, 3:] = -1.0
    return a


def _set_rows(m, a, r, y):
    a[r] = y
    return a


def _set_mask(m, a):
    a[a > 1.0] = 0.0
    return a


def _set_rows_of_new(m, a, r, y):
    z = m.zeros_like(a)
    z[r] = y
    return z


def _set_slice_of_computed(m, a, y):
    z = a * 2
    z[::5, 10:20] = y[10:20]
    return z


def _set_scalar_array(m, a):
    a[2, 3] = a[0, 0] * 2
    return a


# Into a realized array nothing else holds: written in place at once
# (scheduler.update_in_place); into a lazy one: an update step of the plan.
case("setitem of a strided slice", _set_slice, "x")
case("setitem of rows by an integer array", _set_rows, "x", "rows", "y")
case("setitem by a boolean mask", _set_mask, "x")
case("setitem of rows of a new array", _set_rows_of_new, "x", "rows", "y")
case("setitem of a slice of a computed array", _set_slice_of_computed, "x", "y")
case("setitem of one element from a 0-d array", _set_scalar_array, "x", tol="rounded")

# --- searching -------------------------------------------------------------

case("where", lambda m, a, b: m.where(a > b, a, b), "x", "y")
case("where with Python scalars", lambda m, a: m.where(a > 0, a, 0.0), "x")
case("where with a Python int on the left", lambda m, a: m.where(a > 0, -1, a), "i8")
case("nonzero", lambda m, a: m.nonzero(a > 1.5), "x")
case("searchsorted", lambda m, k, v: m.searchsorted(k, v), "keys", "v")
case("searchsorted right with a sorter",
     lambda m, k, v: m.searchsorted(m.flip(k), v, side="right", sorter=m.flip(m.argsort(k))), "keys", "v")
case("count_nonzero", lambda m, a: m.count_nonzero(a, axis=1), "i")
case("count_nonzero keepdims", lambda m, a: m.count_nonzero(a > 0, keepdims=True), "x")

# --- sorting ---------------------------------------------------------------

case("sort", lambda m, a: m.sort(a, axis=1), "x")
case("sort descending", lambda m, v: m.sort(v, descending=True), "v", oracle=lambda v: np.flip(np.sort(v)))
case("sort of ints", lambda m, a: m.sort(a, axis=0), "i")
# Stable (the standard's default): -0.0 and 0.0 keep their order.
case("sort puts NaN last", lambda m, a: m.sort(a, axis=1, stable=True), "s")
case("argsort with NaN", lambda m, a: m.argsort(m.reshape(a, (-1,)), stable=True), "s")
case("argsort stable keeps the order of ties", lambda m, v: m.argsort(v, stable=True), "v")
case("argsort descending stable", lambda m, v: m.argsort(v, descending=True, stable=True), "vi",
     oracle=lambda v: np.argsort(-v, stable=True))

# --- sets ------------------------------------------------------------------

case("unique_values", lambda m, v: m.unique_values(v), "v")
case("unique_counts", lambda m, v: m.unique_counts(v), "vi")
case("unique_inverse", lambda m, a: m.unique_inverse(a), "i8")
case("unique_values with NaN", lambda m, a: m.unique_values(a), "s")
case("unique_all", lambda m, v: m.unique_all(v), "v")
case("isin", lambda m, a, v: m.isin(a, v), "i", "vi")
case("isin invert", lambda m, a, v: m.isin(a, v, invert=True), "i", "vi")

# --- creation with device= -------------------------------------------------

case("arange", lambda m, d: m.arange(3, 700, 2, device=d), creates=True)
case("arange float", lambda m, d: m.arange(0.5, 30.0, 0.25, device=d), creates=True, tol="rounded")
case("linspace", lambda m, d: m.linspace(-1.0, 2.0, 301, device=d), creates=True, tol="rounded")
case("eye k=1", lambda m, d: m.eye(30, 40, k=1, device=d), creates=True)
case("full", lambda m, d: m.full((30, 40), 2.5, device=d), creates=True)
case("zeros int", lambda m, d: m.zeros((30, 40), dtype=m.int32, device=d), creates=True)
case("ones", lambda m, d: m.ones(500, device=d), creates=True)
case("zeros_like", lambda m, a: m.zeros_like(a), "x")
case("ones_like with a dtype", lambda m, a: m.ones_like(a, dtype=m.int8), "x")
case("full_like", lambda m, a: m.full_like(a, 7), "i")
case("tril", lambda m, a: m.tril(a, k=-1), "x")
case("triu", lambda m, a: m.triu(a, k=2), "x")
case("meshgrid", lambda m, a, b: m.meshgrid(a, b[:40]), "y", "v")
case("meshgrid ij", lambda m, a, b: m.meshgrid(a, b[:40], indexing="ij"), "y", "v")
case("asarray keeps the values", lambda m, a: a, "c")

# --- linalg ----------------------------------------------------------------

case("matmul", lambda m, a, b: a @ b, "a", "rhs", tol="summation")
case("matmul float32", lambda m, a: a @ a, "a32", tol="summation")
case("matmul batched", lambda m, s: s @ s, "stack", tol="summation")
case("matmul of a matrix and a vector", lambda m, a, v: m.matmul(a.T, v[:24]), "x", "v", tol="summation")
case("matmul of transposed and strided operands", lambda m, a, b: a[::2].T @ b[1::2, ::-2], "x", "x",
     tol="summation")
case("matmul of ints", lambda m, a: a[:, :24] @ a[:24], "i")
case("matmul complex", lambda m, c: c[:, :20] @ c[:20], "c", tol="summation")
case("tensordot", lambda m, s, a: m.tensordot(s, a[:6, :6], axes=([2], [0])), "stack", "a", tol="summation")
case("tensordot axes=2", lambda m, a, b: m.tensordot(a, b, axes=2), "x", "x", tol="summation")
case("vecdot", lambda m, a, b: m.vecdot(a, b, axis=0), "x", "x", tol="summation")
case("linalg.outer", lambda m, a, b: m.linalg.outer(a, b), "y", "keys", tol="rounded")
case("linalg.cross", lambda m, a, b: m.linalg.cross(a, b[::-1]), "v3", "v3", tol="rounded")
case("linalg.inv", lambda m, a: m.linalg.inv(a), "a", tol="lapack")
case("linalg.inv float32", lambda m, a: m.linalg.inv(a), "a32", tol="lapack")
case("linalg.inv of a stack", lambda m, s: m.linalg.inv(s), "stack", tol="lapack")
case("linalg.solve", lambda m, a, b: m.linalg.solve(a, b), "a", "rhs", tol="lapack")
case("linalg.cholesky", lambda m, a: m.linalg.cholesky(a), "spd", tol="lapack")
case("linalg.cholesky upper", lambda m, a: m.linalg.cholesky(a, upper=True), "spd", tol="lapack",
     oracle=lambda a: np.linalg.cholesky(a).T)
# Factors are unique up to the signs of columns (and rows of r, vh): compare
# the products and the absolute values.
case("linalg.qr", lambda m, a: m.linalg.qr(a), "tall", tol="lapack", post=lambda q, r: (q @ r, abs(q), abs(r)))
case("linalg.qr complete", lambda m, a: m.linalg.qr(a, mode="complete"), "tall", tol="lapack",
     post=lambda q, r: (q @ r, q.T @ q, abs(r)))
case("linalg.svd", lambda m, a: m.linalg.svd(a, full_matrices=False), "tall", tol="lapack",
     post=lambda u, s, vh: ((u * s) @ vh, abs(u), s, abs(vh)))
case("linalg.svd full", lambda m, a: m.linalg.svd(a), "stack", tol="lapack",
     post=lambda u, s, vh: (u @ (s[..., None] * vh), abs(u), s))
case("linalg.svdvals", lambda m, a: m.linalg.svdvals(a), "tall", tol="lapack")
case("linalg.eigh", lambda m, a: m.linalg.eigh(a), "sym", tol="lapack", post=lambda w, v: (w, abs(v)))
case("linalg.eigvalsh", lambda m, a: m.linalg.eigvalsh(a), "sym", tol="lapack")


def _eig_unique(w, v):
    """Eigenvalues in sorted order, and the absolute values of their unit
    eigenvectors (unique up to a phase), in the same order."""
    order = np.argsort(w, axis=-1)
    return np.take_along_axis(w, order, axis=-1), np.take_along_axis(abs(v), order[..., None, :], axis=-1)


case("linalg.eig", lambda m, a: m.linalg.eig(a), "stack", tol="lapack", post=_eig_unique)
case("linalg.eigvals", lambda m, a: m.linalg.eigvals(a), "a", tol="lapack", post=lambda w: np.sort(w))
case("linalg.det", lambda m, s: m.linalg.det(s), "stack", tol="lapack")
case("linalg.slogdet", lambda m, a: m.linalg.slogdet(a), "a", tol="lapack")
case("linalg.pinv", lambda m, a: m.linalg.pinv(a), "tall", tol="lapack")
case("linalg.matrix_rank", lambda m, a: m.linalg.matrix_rank(a[:, :6] @ a[:, :6].T), "tall")
case("linalg.matrix_power", lambda m, a: m.linalg.matrix_power(a, 3), "stack", tol="summation")
case("linalg.trace", lambda m, a: m.linalg.trace(a, offset=1), "x", tol="summation")
case("linalg.diagonal", lambda m, s: m.linalg.diagonal(s, offset=-1), "stack")
case("linalg.vector_norm", lambda m, a: m.linalg.vector_norm(a, axis=1), "x", tol="summation")
case("linalg.vector_norm ord=inf", lambda m, a: m.linalg.vector_norm(a, ord=m.inf), "x")
case("linalg.vector_norm ord=1 keepdims", lambda m, a: m.linalg.vector_norm(a, ord=1, axis=0, keepdims=True),
     "x", tol="summation")
case("linalg.matrix_norm fro", lambda m, a: m.linalg.matrix_norm(a), "x", tol="summation")
case("linalg.matrix_norm nuc", lambda m, a: m.linalg.matrix_norm(a, ord="nuc"), "a", tol="lapack")
case("linalg.matrix_norm ord=2", lambda m, s: m.linalg.matrix_norm(s, ord=2), "stack", tol="lapack")

# --- fft -------------------------------------------------------------------

case("fft.fft", lambda m, s: m.fft.fft(s), "csig", tol="fft")
case("fft.ifft", lambda m, c: m.fft.ifft(c, norm="ortho"), "csig", tol="fft")
case("fft.fft of columns, padded", lambda m, s: m.fft.fft(s, n=40, axis=0), "csig2", tol="fft")
case("fft.fftn", lambda m, s: m.fft.fftn(s), "csig2", tol="fft")
case("fft.ifftn", lambda m, s: m.fft.ifftn(s, axes=(1,)), "csig2", tol="fft")
case("fft.rfft", lambda m, s: m.fft.rfft(s), "sig", tol="fft")
case("fft.irfft", lambda m, c: m.fft.irfft(c[:129]), "csig", tol="fft")
case("fft.rfftn", lambda m, s: m.fft.rfftn(s), "sig2", tol="fft")
case("fft.irfftn", lambda m, s: m.fft.irfftn(m.fft.rfftn(s), s=(16, 32), axes=(0, 1)), "sig2", tol="fft")
case("fft.hfft", lambda m, c: m.fft.hfft(c[:129]), "csig", tol="fft")
case("fft.ihfft", lambda m, s: m.fft.ihfft(s), "sig", tol="fft")
case("fft.fftshift", lambda m, s: m.fft.fftshift(s), "sig2")
case("fft.ifftshift", lambda m, s: m.fft.ifftshift(s, axes=1), "sig2")
case("fft.fftfreq", lambda m, d: m.fft.fftfreq(300, d=0.5, device=d), creates=True, tol="rounded")
case("fft.rfftfreq", lambda m, d: m.fft.rfftfreq(300, device=d), creates=True, tol="rounded")

# --- what users write: clip, astype, chains, softmax, gradients ------------

case("clip with scalars", lambda m, a: m.clip(a, -1.0, 0.5), "x")
case("clip with arrays", lambda m, a, b: m.clip(a, min=b, max=b + 1), "x", "y", tol="rounded")
case("clip of ints with one bound", lambda m, a: m.clip(a, max=10), "i")
case("astype float to int", lambda m, a: m.astype(a * 10, m.int32), "x")
case("astype int to float32", lambda m, a: m.astype(a, m.float32), "i")
case("astype float64 to float32", lambda m, a: m.astype(a, m.float32), "x")
case("astype bool to float", lambda m, a: m.astype(a, m.float64), "b")
case("astype to complex", lambda m, a: m.astype(a, m.complex128), "x32")
case("astype to bool", lambda m, a: m.astype(a, m.bool), "s")
case("fused chain then sum", lambda m, a: m.sum(a * 2 + m.sin(a)), "x", tol="summation")
case("fused chain then sum float32", lambda m, a: m.sum(a * 2 + m.sin(a), axis=1), "x32", tol="summation")
case("row softmax", lambda m, a: m.exp(a - m.max(a, axis=1, keepdims=True))
     / m.sum(m.exp(a - m.max(a, axis=1, keepdims=True)), axis=1, keepdims=True), "x", tol="libm")
case("standardize columns", lambda m, a: (a - m.mean(a, axis=0)) / m.std(a, axis=0), "x", tol="summation")
case("to_device to the CPU and back", lambda m, a: (a * 2).to_device("cpu").to_device(a.device) / 2, "x",
     oracle=lambda a: a)


def _update_loop(m, a):
    for i in range(5):
        a[i, i] = a[i, i] * 2
        a[i + 1] = a[i] + 1
    return a


def _index_by_nonzero(m, a):
    return a[m.nonzero(a > 1)] * 2 + m.sum(a[a < -1])


def _python_control_flow(m, a):
    return m.stack([a[i] * 2 if float(m.sum(a[i])) > 0 else a[i] - 1 for i in range(3)])


@xp.jit
def _predict(w, x):
    return xp.tanh(x @ w)


case("a loop of element and row updates", _update_loop, "x", tol="rounded")
case("indexing by nonzero's result, then more work", _index_by_nonzero, "x", tol="summation")
case("Python control flow on values read back", _python_control_flow, "x", tol="rounded")
case("a jit-compiled function", lambda m, w, a: _predict(w, a[:, :20]), "rhs", "x", tol="libm",
     oracle=lambda w, a: np.tanh(a[:, :20] @ w))
# d/dx sum(take(x, rows) * stop_gradient(take(x, rows))) = the rows' counts times x.
case("autodiff.grad through take and stop_gradient",
     lambda m, a, r: grad(lambda t: m.sum(m.take(t, r, axis=0) * stop_gradient(m.take(t, r, axis=0))))(a),
     "x", "rows", tol="rounded",
     oracle=lambda a, r: np.bincount(r, minlength=a.shape[0])[:, None] * a)
# d/dw sum(tanh(x w)^2) = x^T (2 tanh(x w) (1 - tanh(x w)^2)).
case("autodiff.value_and_grad of a regression loss",
     lambda m, a, w: value_and_grad(lambda v: m.sum(m.tanh(a @ v) ** 2))(w[:8]), "tall", "rhs", tol="summation",
     oracle=lambda a, w: (np.sum(np.tanh(a @ w[:8]) ** 2),
                          a.T @ (2 * np.tanh(a @ w[:8]) * (1 - np.tanh(a @ w[:8]) ** 2))))


# --- the tests --------------------------------------------------------------

def _tolerance(case, dtype):
    """(rtol, atol) for a result of `dtype`, or None: compared bitwise."""
    if case.tol == "exact" or dtype.kind not in "fc":
        return None
    return TOLERANCES[case.tol][np.finfo(dtype).dtype.type]


def _assert_bitwise_equal(got, expected):
    """Equal values, and equal signs of zero (a NaN's sign is unspecified)."""
    np.testing.assert_array_equal(got, expected, strict=True)
    if expected.dtype.kind in "fc":
        for part in (np.real, np.imag):
            known = ~np.isnan(part(expected))
            np.testing.assert_array_equal(np.signbit(part(got)[known]), np.signbit(part(expected)[known]))


@pytest.mark.parametrize("name", list(CASES))
def test_device_matches_numpy(device, name):
    case = CASES[name]
    got = case.on_arrayx(device)
    expected = case.on_numpy()
    leaves = _leaves(got)
    assert [leaf.device for leaf in leaves] == [device] * len(leaves)
    got = [np.asarray(leaf) for leaf in leaves]
    expected = [np.asarray(leaf) for leaf in _leaves(expected)]
    if case.post:
        got, expected = _leaves(case.post(*got)), _leaves(case.post(*expected))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert (g.dtype, g.shape) == (e.dtype, e.shape)
        tolerance = _tolerance(case, e.dtype)
        if tolerance is None:
            _assert_bitwise_equal(g, e)
        else:
            np.testing.assert_allclose(g, e, rtol=tolerance[0], atol=tolerance[1])


def test_the_dask_column_crosses_chunk_boundaries():
    from arrayx.dask import to_dask
    with _dask_config():
        for name in ("x", "x32", "u8", "b", "a", "v", "sig"):
            assert to_dask(xp.asarray(INPUTS[name], device="dask")).npartitions > 1, name


# Executable primitives no public call of the table runs, each with why.
NOT_COVERED = {}


@pytest.mark.lazy_only
def test_the_table_runs_every_executable_primitive():
    ran = set()
    with xp.debug.profile() as profile:
        for case in CASES.values():
            xp.eval(*_leaves(case.on_arrayx(xp.Device("cpu"))))
    for step in profile.steps:
        ran.update(step.members or (step.name,))
    missing = set(EXECUTABLE) - ran - set(NOT_COVERED)
    assert not missing, f"no case of tests/test_devices.py runs {sorted(missing)}: add one"
    assert not set(NOT_COVERED) & ran, "a pinned primitive now runs: unpin it"
