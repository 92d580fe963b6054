"""float16, arrayx's extension dtype, against NumPy.

Elementwise functions and promotion over float16 are in the tables of
test_elementwise.py and test_promotion.py. Here: the dtype and what the
inspection API says of it, creation, astype, the reductions (which accumulate
in float32, see `dtypes.ACCUMULATOR`), finfo, DLPack, linear algebra and
autodiff.

Tolerances. float16 has an 11-bit significand: its unit roundoff (half an ulp,
relative) is U = 2**-11 ~ 4.9e-4. A value computed in float32 and rounded once
to float16 is the correctly rounded value unless the float32 error (~1e-6
relative here) moves it across a rounding boundary, so it is within one
float16 ulp of the float64 oracle: `assert_within_ulp`.
"""

import math
import pickle

import array_api_strict as strict
import numpy as np
import pytest

import arrayx as xp
from arrayx import dtypes as dt
from arrayx.autodiff import grad

F16 = np.float16
U = 2.0 ** -11
RNG = np.random.default_rng(16)


def assert_within_ulp(x, exact):
    """arrayx float16 array `x` is within one float16 ulp of the float64 values `exact`."""
    got = np.asarray(x)
    exact = np.asarray(exact, dtype=np.float64)
    assert got.dtype == F16 and got.shape == exact.shape
    ulp = np.spacing(np.abs(exact).astype(F16)).astype(np.float64)
    np.testing.assert_array_less(np.abs(got.astype(np.float64) - exact), ulp + 1e-300)


# --- the dtype -----------------------------------------------------------------

def test_float16_is_an_arrayx_dtype():
    assert xp.float16 is dt.float16 and str(xp.float16) == "float16" and repr(xp.float16) == "arrayx.float16"
    assert xp.float16.dtype == np.dtype(F16)
    assert xp.float16 != xp.float32 and xp.float16 != "float16"  # equal only to itself, as every arrayx dtype
    assert pickle.loads(pickle.dumps(xp.float16)) is xp.float16
    assert xp.asarray(np.ones(2, F16)).dtype == xp.float16


def test_isdtype_counts_float16_as_real_floating():
    # The standard lets an implementation extend its kinds with float16 (isdtype's notes).
    assert xp.isdtype(xp.float16, "real floating") and xp.isdtype(xp.float16, "numeric")
    assert xp.isdtype(xp.float16, ("bool", "real floating"))
    assert not xp.isdtype(xp.float16, "complex floating") and not xp.isdtype(xp.float16, "integral")


@pytest.mark.parametrize("kind", [None, "real floating", "numeric", ("bool", "real floating")])
def test_inspection_lists_only_the_standards_dtypes(kind):
    # The standard: "data types which are not present in this specification must not be included".
    got = xp.__array_namespace_info__().dtypes(kind=kind)
    assert "float16" not in got
    assert set(got) == set(strict.__array_namespace_info__().dtypes(kind=kind))


def test_default_dtypes_stay_the_standards():
    assert xp.__array_namespace_info__().default_dtypes() == {
        "real floating": xp.float64, "complex floating": xp.complex128, "integral": xp.int64, "indexing": xp.int64}
    assert xp.asarray(1.5).dtype == xp.float64


def test_finfo_matches_numpy():
    info, ref = xp.finfo(xp.float16), np.finfo(F16)
    assert info.dtype == xp.float16 and info.bits == 16
    assert (info.eps, info.max, info.min, info.smallest_normal) == (
        float(ref.eps), float(ref.max), float(ref.min), float(ref.smallest_normal))
    assert all(type(v) is float for v in (info.eps, info.max, info.min, info.smallest_normal))
    assert xp.finfo(xp.ones(2, dtype=xp.float16)) == info


# --- promotion beyond the tables ----------------------------------------------

def test_promotion_places_float16_below_float32():
    assert xp.result_type(xp.float16, xp.float32) == xp.float32
    assert xp.result_type(xp.float16, xp.complex64) == xp.complex64
    assert xp.result_type(xp.float16, 1j) == xp.complex64
    # integers meet float16 at float16 (JAX's lattice, docs/semantics.md), whatever their order
    for dtypes in [(xp.int64, xp.uint64, xp.float16), (xp.uint64, xp.float16, xp.int64),
                   (xp.float16, xp.int64, xp.uint64)]:
        assert xp.result_type(*dtypes) == xp.float16
    assert xp.can_cast(xp.float16, xp.float32) and xp.can_cast(xp.float16, xp.complex64)
    assert xp.can_cast(xp.int64, xp.float16) and xp.can_cast(xp.bool, xp.float16)
    assert not xp.can_cast(xp.float32, xp.float16) and not xp.can_cast(xp.float16, xp.int64)


def test_python_float_beyond_float16_becomes_inf_quietly():
    # NumPy's cast gives inf too (and warns); arrayx raises no warning (pytest -W error would fail).
    x = xp.ones(2, dtype=xp.float16)
    out = x * 70000.0
    assert out.dtype == xp.float16 and np.all(np.isinf(np.asarray(out)))


# --- creation and astype --------------------------------------------------------

@pytest.mark.parametrize("make, ref", [
    (lambda: xp.zeros((2, 3), dtype=xp.float16), lambda: np.zeros((2, 3), F16)),
    (lambda: xp.ones(4, dtype=xp.float16), lambda: np.ones(4, F16)),
    (lambda: xp.empty((0, 2), dtype=xp.float16), lambda: np.empty((0, 2), F16)),
    (lambda: xp.full((2,), 0.1, dtype=xp.float16), lambda: np.full((2,), 0.1, F16)),
    (lambda: xp.eye(3, 4, k=1, dtype=xp.float16), lambda: np.eye(3, 4, k=1, dtype=F16)),
    (lambda: xp.asarray([1.5, -2.25, 1e-5], dtype=xp.float16), lambda: np.asarray([1.5, -2.25, 1e-5], F16)),
    (lambda: xp.zeros_like(xp.ones(3), dtype=xp.float16), lambda: np.zeros(3, F16)),
    (lambda: xp.full_like(xp.ones(3, dtype=xp.float16), 2.5), lambda: np.full(3, 2.5, F16)),
    (lambda: xp.tril(xp.ones((3, 3), dtype=xp.float16)), lambda: np.tril(np.ones((3, 3), F16))),
])
def test_creation_matches_numpy(make, ref):
    got, expected = np.asarray(make()), ref()
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("args", [(0.5, 100.0, 0.3), (-5, 5, 0.1), (2040, 2100), (0, 5000), (0, 60000, 1000)])
def test_arange_rounds_start_plus_i_step_once(args):
    # NumPy's float16 arange steps in float16 (np.arange(2048, 2100, dtype=float16) repeats 2048);
    # arrayx computes start + i * step in float32 and rounds once.
    start, stop, step = (args + (1,))[:3]
    got = xp.arange(*args, dtype=xp.float16)
    n = math.ceil((stop - start) / step)
    assert got.shape == (n,)
    assert_within_ulp(got, start + np.arange(n) * step)


@pytest.mark.parametrize("args", [(0, 1, 11), (-3.0, 3.0, 7), (0, 5000, 3001), (0.1, 0.7, 200)])
def test_linspace_matches_float64_rounded_once(args):
    got = xp.linspace(*args, dtype=xp.float16)
    assert_within_ulp(got, np.linspace(*args))
    assert float(got[-1]) == float(F16(args[1]))  # the endpoint is exact


@pytest.mark.parametrize("name", ["bool", "int8", "uint8", "int32", "uint64", "float32", "float64", "complex64",
                                  "complex128"])
def test_astype_to_and_from_float16_matches_numpy(name):
    a16 = np.array([0.0, -0.0, 1.5, 2.75, 100.0, 65504.0, np.inf, np.nan], F16)
    if np.dtype(name).kind in "biu":
        a16 = np.array([0.0, 1.5, 2.75, 100.0, 255.0], F16)  # in range of every integer dtype tested
    got = xp.astype(xp.asarray(a16), getattr(xp, name))
    np.testing.assert_array_equal(np.asarray(got), a16.astype(name))
    if np.dtype(name).kind == "c":
        with pytest.raises(TypeError, match="astype"):
            xp.astype(xp.asarray(a16.astype(name)), xp.float16)
        return
    source = np.array([0, 1, 3, 7, 100], dtype=name) if np.dtype(name).kind in "biu" else np.array(
        [1e-9, 0.1, -3.14159, 65519.0, 65520.0, 1e6, -np.inf], dtype=name)
    with np.errstate(over="ignore"):
        expected = source.astype(F16)  # beyond 65519.99 rounds to inf, as NumPy's cast does
    np.testing.assert_array_equal(np.asarray(xp.astype(xp.asarray(source), xp.float16)), expected)


# --- reductions: float32 accumulation, one rounding ------------------------------

def positive(shape):
    """Values in [0.5, 1.5) rounded to float16: sums grow past 2048, where float16 stops adding ones."""
    return RNG.uniform(0.5, 1.5, shape).astype(F16)


REDUCTIONS = [
    ("sum", lambda x, axis: xp.sum(x, axis=axis), lambda a, axis: np.sum(a, axis=axis)),
    ("prod", lambda x, axis: xp.prod(x, axis=axis), lambda a, axis: np.prod(a, axis=axis)),
    ("mean", lambda x, axis: xp.mean(x, axis=axis), lambda a, axis: np.mean(a, axis=axis)),
    ("var", lambda x, axis: xp.var(x, axis=axis), lambda a, axis: np.var(a, axis=axis)),
    ("std", lambda x, axis: xp.std(x, axis=axis, correction=1), lambda a, axis: np.std(a, axis=axis, ddof=1)),
    ("cumulative_sum", lambda x, axis: xp.cumulative_sum(x, axis=axis), lambda a, axis: np.cumsum(a, axis=axis)),
    ("cumulative_prod", lambda x, axis: xp.cumulative_prod(x, axis=axis), lambda a, axis: np.cumprod(a, axis=axis)),
    ("trace", lambda x, axis: xp.linalg.trace(x), lambda a, axis: np.trace(a)),
    ("vecdot", lambda x, axis: xp.vecdot(x, x, axis=axis), lambda a, axis: np.sum(a * a, axis=axis)),
    ("vector_norm", lambda x, axis: xp.linalg.vector_norm(x, axis=axis),
     lambda a, axis: np.sqrt(np.sum(a * a, axis=axis))),
]


@pytest.mark.parametrize("name, fn, ref", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
@pytest.mark.parametrize("axis", [0, 1])
def test_reductions_round_the_float64_value_once(name, fn, ref, axis):
    # Over axis 0 of (3000, 3), running sums pass 2048, where float16 stops adding ones.
    # Products take values within 1/128 of 1, so that 3000 of them stay in range.
    a = positive((3000, 3))
    if name in ("prod", "cumulative_prod"):
        a = (1 + (a - 1) / 64).astype(F16)
    if name == "trace":
        a = positive((3000, 3000))
    got = fn(xp.asarray(a), axis)
    assert got.dtype == xp.float16
    assert_within_ulp(got, ref(a.astype(np.float64), axis))


def test_sum_does_not_stall_at_2048():
    # float16 addition of 1 to 2048 gives 2048 (the spacing there is 2). NumPy's
    # np.sum over axis 0 of this array accumulates in float16 and returns 2048;
    # arrayx accumulates in float32 in every layout.
    ones = xp.ones((10000, 2), dtype=xp.float16)
    for total in (xp.sum(ones, axis=0), xp.sum(xp.permute_dims(ones, (1, 0)), axis=1),
                  xp.cumulative_sum(ones, axis=0)[-1], xp.vecdot(ones[:, 0], ones[:, 1]), xp.sum(ones) / 2):
        np.testing.assert_array_equal(np.asarray(total), 10000)
    assert float(xp.mean(ones)) == 1.0 and float(xp.var(ones)) == 0.0


def test_var_and_norms_do_not_overflow_where_the_result_fits():
    # 300**2 * 10000 overflows float16 (65504) while the results fit; NumPy's float16 var gives inf.
    a = np.full(10000, 300, F16)
    a[::2] = 302
    assert float(xp.var(xp.asarray(a))) == 1.0
    assert float(xp.std(xp.asarray(a))) == 1.0
    assert float(xp.linalg.vector_norm(xp.asarray(np.array([300, 400], F16)))) == 500.0
    assert float(xp.linalg.matrix_norm(xp.asarray(np.full((2, 2), 300, F16)))) == 600.0


def test_sum_dtype_argument_accumulates_in_float32_too():
    a = np.ones(5000, np.float32)
    got = xp.sum(xp.asarray(a), dtype=xp.float16)
    assert got.dtype == xp.float16 and float(got) == 5000.0
    assert xp.sum(xp.ones(3, dtype=xp.float16), dtype=xp.float32).dtype == xp.float32


def test_max_min_and_ordering_are_exact():
    a = RNG.standard_normal((5, 7)).astype(F16)
    a[1, 2] = np.nan
    b = a[~np.isnan(a).any(axis=1)]
    x, y = xp.asarray(a), xp.asarray(b)
    for got, expected in [(xp.max(y, axis=0), np.max(b, axis=0)), (xp.min(y), np.min(b)),
                          (xp.argmax(y, axis=1), np.argmax(b, axis=1)), (xp.sort(x, axis=1), np.sort(a, axis=1)),
                          (xp.argsort(y, axis=0), np.argsort(b, axis=0, kind="stable")),
                          (xp.unique_values(y), np.unique(b)), (xp.where(x > 0, x, 0.0), np.where(a > 0, a, F16(0))),
                          (xp.clip(x, -0.5, 0.5), np.clip(a, F16(-0.5), F16(0.5)))]:
        np.testing.assert_array_equal(np.asarray(got), expected)


# --- DLPack, FFT, linear algebra ---------------------------------------------------

def test_dlpack_round_trips():
    a = RNG.standard_normal((3, 4)).astype(F16)
    x = xp.asarray(a, device="cpu")   # NumPy imports host memory only
    np.testing.assert_array_equal(np.from_dlpack(x), a)
    assert np.from_dlpack(x).dtype == F16
    y = xp.from_dlpack(a)
    assert y.dtype == xp.float16
    np.testing.assert_array_equal(np.asarray(xp.from_dlpack(x)), a)
    np.testing.assert_array_equal(np.asarray(y), a)


def test_fft_of_float16_is_complex64_as_in_numpy():
    a = RNG.standard_normal(8).astype(F16)
    got = xp.fft.rfft(xp.asarray(a))
    expected = np.fft.rfft(a)
    assert got.dtype == xp.complex64 and expected.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6, atol=1e-6)  # both run float32 kernels
    freq = xp.fft.fftfreq(8, d=0.5, dtype=xp.float16)
    assert freq.dtype == xp.float16
    np.testing.assert_array_equal(np.asarray(freq), np.fft.fftfreq(8, d=0.5).astype(F16))


def test_matmul_and_tensordot_match_float64_rounded_once():
    # NumPy's float16 matmul (no BLAS) accumulates in float32, like arrayx's sums.
    a, b = positive((50, 40)), positive((40, 30))
    assert_within_ulp(xp.matmul(xp.asarray(a), xp.asarray(b)), a.astype(np.float64) @ b.astype(np.float64))
    assert_within_ulp(xp.tensordot(xp.asarray(a), xp.asarray(b), axes=1), a.astype(np.float64) @ b.astype(np.float64))


@pytest.mark.parametrize("call", [
    lambda x: xp.linalg.inv(x), lambda x: xp.linalg.det(x), lambda x: xp.linalg.cholesky(x),
    lambda x: xp.linalg.eigh(x), lambda x: xp.linalg.eigvalsh(x), lambda x: xp.linalg.eig(x),
    lambda x: xp.linalg.eigvals(x), lambda x: xp.linalg.qr(x), lambda x: xp.linalg.svd(x),
    lambda x: xp.linalg.svdvals(x), lambda x: xp.linalg.slogdet(x), lambda x: xp.linalg.pinv(x),
    lambda x: xp.linalg.matrix_rank(x), lambda x: xp.linalg.solve(x, x),
    lambda x: xp.linalg.matrix_norm(x, ord=2), lambda x: xp.linalg.matrix_power(x, -1),
])
def test_lapack_functions_refuse_float16_at_the_call(call):
    # LAPACK has no float16 routines (NumPy and PyTorch refuse them too): a TypeError
    # naming the function, before anything runs.
    with pytest.raises(TypeError, match=r"linalg\.\w+: x1? has dtype float16, which LAPACK does not support"):
        call(xp.eye(3, dtype=xp.float16))


def test_lapack_functions_take_float16_cast_to_float32():
    a = np.array([[4.0, 1.0], [1.0, 3.0]], F16)
    got = xp.linalg.inv(xp.astype(xp.asarray(a), xp.float32))
    np.testing.assert_allclose(np.asarray(got), np.linalg.inv(a.astype(np.float32)), rtol=1e-6)


# --- autodiff ------------------------------------------------------------------------

GRADIENT_CASES = {
    "tanh_matmul": lambda w, x: xp.sum(xp.tanh(x @ w) ** 2),
    "logistic": lambda w, x: xp.sum(1 / (1 + xp.exp(-(x @ w)))),
    "mean_var_std": lambda w, x: xp.mean(x @ w) + xp.var(x @ w) + xp.std(x @ w),
    "log1p_sin": lambda w, x: xp.sum(xp.log1p(xp.exp(x @ w)) * xp.sin(x @ w)),
    "sqrt_divide": lambda w, x: xp.sum(xp.sqrt(xp.abs(x @ w) + 1) / (2 + xp.cos(x @ w))),
    "prod": lambda w, x: xp.sum(xp.prod(x @ w + 2, axis=0)),
    "max": lambda w, x: xp.sum(xp.max(x @ w, axis=1)),
    "cumulative_sum": lambda w, x: xp.sum(xp.cumulative_sum(x @ w, axis=0) ** 2),
}


def finite_differences(f, w, x, h=1e-6):
    """Central differences of f in float64: truncation ~h**2, rounding ~1e-16/h ~ 1e-10."""
    g = np.zeros_like(w)
    for i in np.ndindex(w.shape):
        plus, minus = w.copy(), w.copy()
        plus[i] += h
        minus[i] -= h
        g[i] = (float(f(xp.asarray(plus), xp.asarray(x))) - float(f(xp.asarray(minus), xp.asarray(x)))) / (2 * h)
    return g


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_float16_gradients_match_float64_finite_differences(name):
    """grad in float16 against float64 finite differences at the same (float16) inputs.

    Each float16 operation rounds with relative error <= U; forward and backward
    pass here chain about ten of them over terms no larger than the largest
    gradient, so the error is below ~10 U max|g|. 16 U (0.8%) of max|g| leaves
    a margin; a wrong derivative (a missing factor, term or sign) is off by
    O(|g|), far more.
    """
    f = GRADIENT_CASES[name]
    w = RNG.uniform(-1, 1, (3, 2)).astype(F16)
    x = RNG.uniform(-1, 1, (4, 3)).astype(F16)
    got = grad(f)(xp.asarray(w), xp.asarray(x))
    assert got.dtype == xp.float16
    expected = finite_differences(f, w.astype(np.float64), x.astype(np.float64))
    np.testing.assert_allclose(np.asarray(got).astype(np.float64), expected,
                               rtol=16 * U, atol=16 * U * np.abs(expected).max())
