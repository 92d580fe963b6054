"""The FFT extension (xp.fft) against np.fft: every transform for every dtype it
takes and every norm, n and s smaller and larger than the axes (cropping and
zero-padding), axes in any order, batches; round trips; fftfreq/rfftfreq;
fftshift/ifftshift; laziness; and errors raised at the call, naming the function.

Tolerances. A radix FFT passes each output through log2(N) butterfly stages, so
its rounding error grows like eps * log2(N) relative to the 2-norm of the
transformed slice (Parseval makes that norm the natural scale; a single
element's error is bounded by it). The references are computed by NumPy in
double precision from the same (rounded) inputs, so the difference measures the
rounding of arrayx's own transform in the input's precision.
"""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import arrayx as xp
from oracle import assert_same
from arrayx import debug

NORMS = ["backward", "ortho", "forward"]
REAL = ["float32", "float64"]
COMPLEX = ["complex64", "complex128"]
CPU = xp.Device("cpu")

COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}
REAL_OF = {"complex64": "float32", "complex128": "float64"}
SAME = {d: d for d in COMPLEX}

# name: the result dtype of each input dtype the function takes (the standard's rules)
ONE_D = {
    "fft": SAME, "ifft": SAME, "rfft": COMPLEX_OF, "irfft": REAL_OF, "hfft": REAL_OF, "ihfft": COMPLEX_OF,
}
N_D = {"fftn": SAME, "ifftn": SAME, "rfftn": COMPLEX_OF, "irfftn": REAL_OF}
# irfft, hfft and irfftn take n (s[-1]) as the length of the real *output*.
INVERSE_REAL = {"irfft", "hfft", "irfftn"}


def random_array(seed, shape, dtype):
    """Standard normal values (complex: independent real and imaginary parts).

    Well-scaled data keeps the error bound about rounding, not about overflow
    or cancellation in inputs hypothesis would make extreme.
    """
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype in COMPLEX:
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def wide(a):
    """`a` in double precision: the reference's input."""
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def fft_atol(dtype, size, expected, factor=8):
    """eps * log2(N) times the 2-norm of the result (see the module docstring).

    `size` over-estimates the logical transform size N (the product of the
    transformed lengths) by the number of elements, which only loosens the
    bound by a few bits; the norm of the whole batch bounds each slice's norm.
    """
    eps = np.finfo(np.dtype(dtype)).eps
    return factor * eps * (1 + math.log2(max(size, 1))) * max(np.linalg.norm(expected), np.finfo(np.float64).tiny)


def assert_close(got, expected, dtype, x):
    """arrayx array `got` has dtype `dtype`, the shape of `expected` and its values within fft_atol."""
    assert str(got.dtype) == dtype
    value = np.asarray(got)
    assert value.shape == expected.shape
    size = max(x.size, expected.size)
    np.testing.assert_allclose(value, expected, rtol=0, atol=fft_atol(x.dtype, size, expected))


shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=9)


# One-dimensional transforms


@pytest.mark.parametrize("name", list(ONE_D))
@given(data=st.data(), shape=shapes, norm=st.sampled_from(NORMS), seed=st.integers(0, 2**32 - 1))
def test_one_dimensional_transforms_match_numpy(name, data, shape, norm, seed):
    dtype = data.draw(st.sampled_from(sorted(ONE_D[name])), label="dtype")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    m = shape[axis]
    # n below, at and above the axis size: cropping, the whole axis, zero-padding.
    lengths = st.integers(1, 2 * m + 3)
    # irfft/hfft's default n is 2*(m-1): no transform for an axis of one element.
    n = data.draw(lengths if name in INVERSE_REAL and m < 2 else st.none() | lengths, label="n")
    x = random_array(seed, shape, dtype)
    got = getattr(xp.fft, name)(xp.asarray(x), n=n, axis=axis, norm=norm)
    expected = getattr(np.fft, name)(wide(x), n=n, axis=axis, norm=norm)
    assert_close(got, expected, ONE_D[name][dtype], x)


@pytest.mark.parametrize("name", list(ONE_D))
@pytest.mark.parametrize("m", [1, 2, 5, 8])
def test_one_dimensional_defaults_are_the_whole_last_axis(name, m):
    if name in INVERSE_REAL and m < 2:
        m = 2
    for dtype, result in ONE_D[name].items():
        x = random_array(m, (3, m), dtype)
        assert_close(getattr(xp.fft, name)(xp.asarray(x)), getattr(np.fft, name)(wide(x)), result, x)


@pytest.mark.parametrize("name", ["fft", "ifft"])
@pytest.mark.parametrize("dtype", COMPLEX)
def test_n_crops_or_zero_pads_the_input(name, dtype):
    # Independent of NumPy's reading of n: the transform of x with n points is
    # the transform of x's first n points, or of x followed by zeros.
    fn = getattr(xp.fft, name)
    x = random_array(0, (2, 6), dtype)
    cropped = fn(xp.asarray(x[:, :4]))
    padded = fn(xp.asarray(np.concatenate([x, np.zeros((2, 3), dtype)], axis=1)))
    tight = dict(rtol=0, atol=fft_atol(dtype, 9, np.asarray(padded)))
    np.testing.assert_allclose(np.asarray(fn(xp.asarray(x), n=4)), np.asarray(cropped), **tight)
    np.testing.assert_allclose(np.asarray(fn(xp.asarray(x), n=9)), np.asarray(padded), **tight)


@pytest.mark.parametrize("name", ["irfft", "hfft"])
@pytest.mark.parametrize("n", [4, 5, 12])
def test_inverse_real_n_is_the_output_length(name, n):
    # The input is cropped or zero-padded to n//2 + 1 points; the output has n.
    fn = getattr(xp.fft, name)
    x = random_array(1, (5,), "complex128")
    used = np.zeros(n // 2 + 1, "complex128")
    used[:min(5, n // 2 + 1)] = x[:n // 2 + 1]
    got, expected = fn(xp.asarray(x), n=n), fn(xp.asarray(used), n=n)
    assert got.shape == (n,) and got.dtype == xp.float64
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=0,
                               atol=fft_atol("float64", n, np.asarray(expected)))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_norms_scale_the_unnormalized_transform(dtype):
    # backward: no scaling forward, 1/n inverse; ortho: 1/sqrt(n) both ways; forward: 1/n forward.
    n = 12
    x = xp.asarray(random_array(2, (3, n), dtype))
    plain = np.asarray(xp.fft.fft(x, norm="backward"))
    atol = fft_atol(dtype, n, plain)
    np.testing.assert_allclose(np.asarray(xp.fft.fft(x, norm="ortho")), plain / math.sqrt(n), rtol=0, atol=atol)
    np.testing.assert_allclose(np.asarray(xp.fft.fft(x, norm="forward")), plain / n, rtol=0, atol=atol)
    # The inverse is the conjugate transform of the conjugate.
    conj = np.conj(np.asarray(xp.fft.fft(xp.conj(x))))
    np.testing.assert_allclose(np.asarray(xp.fft.ifft(x, norm="forward")), conj, rtol=0, atol=atol)
    np.testing.assert_allclose(np.asarray(xp.fft.ifft(x, norm="ortho")), conj / math.sqrt(n), rtol=0, atol=atol)
    np.testing.assert_allclose(np.asarray(xp.fft.ifft(x)), conj / n, rtol=0, atol=atol)


def test_transforms_each_slice_of_a_batch():
    x = random_array(3, (3, 4, 5), "complex128")
    got = np.asarray(xp.fft.fft(xp.asarray(x), axis=1))
    for i in range(3):
        for j in range(5):
            expected = np.asarray(xp.fft.fft(xp.asarray(x[i, :, j].copy())))
            np.testing.assert_allclose(got[i, :, j], expected, rtol=0, atol=fft_atol("complex128", 4, expected))


# n-dimensional transforms


def axes_and_s(shape, inverse_real):
    """axes (None, or distinct axes in any order, maybe negative) and a matching s."""
    ndim = len(shape)

    def with_s(axes):
        if axes is None:
            # s needs axes; irfftn's default last length 2*(m-1) needs m >= 2.
            return st.just((None, None)) if not inverse_real or shape[-1] >= 2 else st.nothing()
        sizes = st.tuples(*[st.integers(1, 2 * shape[a] + 2) | st.just(-1) for a in axes])
        last = shape[axes[-1]]
        s = sizes if inverse_real and last < 2 else st.none() | sizes
        signs = st.tuples(*[st.booleans() for _ in axes])
        return st.tuples(signs, s).map(lambda t: (tuple(a - ndim if neg else a for a, neg in zip(axes, t[0])), t[1]))

    subsets = st.permutations(list(range(ndim))).flatmap(lambda p: st.integers(1, ndim).map(lambda k: tuple(p[:k])))
    return (st.none() | subsets).flatmap(with_s)


@pytest.mark.parametrize("name", list(N_D))
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6),
       norm=st.sampled_from(NORMS), seed=st.integers(0, 2**32 - 1))
def test_n_dimensional_transforms_match_numpy(name, data, shape, norm, seed):
    dtype = data.draw(st.sampled_from(sorted(N_D[name])), label="dtype")
    axes, s = data.draw(axes_and_s(shape, name in INVERSE_REAL), label="axes, s")
    x = random_array(seed, shape, dtype)
    got = getattr(xp.fft, name)(xp.asarray(x), s=s, axes=axes, norm=norm)
    expected = getattr(np.fft, name)(wide(x), s=s, axes=axes, norm=norm)
    assert_close(got, expected, N_D[name][dtype], x)


@pytest.mark.parametrize("name", list(N_D))
def test_n_dimensional_defaults_are_all_axes(name):
    for dtype, result in N_D[name].items():
        x = random_array(4, (3, 4, 6), dtype)
        assert_close(getattr(xp.fft, name)(xp.asarray(x)), getattr(np.fft, name)(wide(x)), result, x)


def test_rfftn_halves_the_last_axis_given():
    # The last entry of axes, not the last axis of x, gets n//2 + 1 frequencies.
    x = xp.asarray(random_array(5, (6, 4), "float32"))
    assert xp.fft.rfftn(x, axes=(1, 0)).shape == (4, 4)
    assert xp.fft.rfftn(x, axes=(0, 1)).shape == (6, 3)
    assert xp.fft.irfftn(xp.fft.rfftn(x, axes=(1, 0)), s=(4, 6), axes=(1, 0)).shape == (6, 4)


@pytest.mark.parametrize("name", list(N_D))
def test_s_of_minus_one_is_the_size_of_its_own_axis(name):
    # s[i] pairs with axes[i], whatever order axes are in (as in NumPy, irfftn
    # reads -1 as an output of the input's size along that axis).
    dtype, result = sorted(N_D[name].items())[0]
    x = random_array(11, (2, 5, 3), dtype)
    for s, axes in [((-1, 4), (1, 0)), ((3, -1), (2, 1)), ((-1, -1, 6), (-1, 0, 1))]:
        got = getattr(xp.fft, name)(xp.asarray(x), s=s, axes=axes)
        assert_close(got, getattr(np.fft, name)(wide(x), s=s, axes=axes), result, x)


@pytest.mark.parametrize("name", ["fftn", "ifftn"])
def test_no_axes_is_the_identity(name):
    # The logical size prod(()) is 1, so every norm leaves x as it is.
    x = random_array(6, (2, 3), "complex64")
    for norm in NORMS:
        assert_same(getattr(xp.fft, name)(xp.asarray(x), axes=(), norm=norm), x)
    assert_same(getattr(xp.fft, name)(xp.asarray(np.complex128(1 + 2j))), np.asarray(1 + 2j))


def test_empty_batches_and_padded_empty_axes():
    assert_same(xp.fft.fft(xp.asarray(np.zeros((0, 4), "complex64"))), np.zeros((0, 4), "complex64"))
    assert_same(xp.fft.rfft(xp.asarray(np.zeros((3, 0, 4), "float64"))), np.zeros((3, 0, 3), "complex128"))
    # n zero-pads an empty axis: the transform of zeros.
    assert_same(xp.fft.fft(xp.asarray(np.zeros((2, 0), "complex128")), n=3), np.zeros((2, 3), "complex128"))


# Round trips: the inverse with the same arguments returns x. Each transform
# contributes eps * log2(n) relative error, so the pair stays within a small
# multiple of that times ||x||_2.

ROUND_TRIPS = {
    "fft": lambda x, n, norm: xp.fft.ifft(xp.fft.fft(x, norm=norm), norm=norm),
    "rfft": lambda x, n, norm: xp.fft.irfft(xp.fft.rfft(x, norm=norm), n=n, norm=norm),
    "ihfft": lambda x, n, norm: xp.fft.hfft(xp.fft.ihfft(x, norm=norm), n=n, norm=norm),
    "fftn": lambda x, n, norm: xp.fft.ifftn(xp.fft.fftn(x, norm=norm), norm=norm),
    "rfftn": lambda x, n, norm: xp.fft.irfftn(xp.fft.rfftn(x, norm=norm), s=x.shape,
                                              axes=tuple(range(x.ndim)), norm=norm),
}


@pytest.mark.parametrize("pair", list(ROUND_TRIPS))
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("precision", [0, 1])
@pytest.mark.parametrize("shape", [(7,), (8,), (3, 5), (2, 3, 4)])
def test_inverse_transform_returns_the_input(pair, norm, precision, shape):
    # fft/fftn take complex input; rfft, rfftn and ihfft real (n passes an odd length back).
    dtype = (COMPLEX if pair.startswith("fft") else REAL)[precision]
    x = random_array(7, shape, dtype)
    got = ROUND_TRIPS[pair](xp.asarray(x), shape[-1], norm)
    assert str(got.dtype) == dtype
    np.testing.assert_allclose(np.asarray(got), x, rtol=0, atol=fft_atol(dtype, x.size, x, factor=16))


# Sample frequencies


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
@given(n=st.integers(1, 64), d=st.floats(0.01, 100) | st.integers(1, 10) | st.floats(-10, -0.01),
       dtype=st.sampled_from([None, "float32", "float64"]))
def test_sample_frequencies_match_numpy(name, n, d, dtype):
    # Integer frequencies scaled by NumPy's 1/(n*d) in float64, then rounded
    # once to dtype: NumPy's values (rounded to float32 for float32) exactly.
    got = getattr(xp.fft, name)(n, d=d, dtype=None if dtype is None else getattr(xp, dtype))
    expected = getattr(np.fft, name)(n, d).astype(dtype or "float64")
    assert_same(got, expected)


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_sample_frequencies_device_and_defaults(name):
    fn = getattr(xp.fft, name)
    assert fn(6, device=CPU).device == CPU
    assert_same(fn(6), getattr(np.fft, name)(6))
    assert_same(fn(5, d=2), getattr(np.fft, name)(5, 2))


# Shifts


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
@given(data=st.data(), shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=7),
       dtype=st.sampled_from(REAL + COMPLEX), seed=st.integers(0, 2**32 - 1))
def test_shifts_match_numpy(name, data, shape, dtype, seed):
    ndim = len(shape)
    axis = st.integers(-ndim, ndim - 1) if ndim else st.nothing()
    axes = data.draw(st.none() | axis | st.lists(axis, min_size=0, max_size=ndim, unique_by=lambda a: a % ndim),
                     label="axes")
    x = random_array(seed, shape, dtype)
    # NumPy's roll fails on a 0-d array; shifting no axes leaves it as it is.
    expected = getattr(np.fft, name)(x, axes=axes) if ndim else x
    assert_same(getattr(xp.fft, name)(xp.asarray(x), axes=axes), expected)


@pytest.mark.parametrize("shape", [(7,), (8,), (3, 5), (4, 5, 6)])
def test_ifftshift_undoes_fftshift(shape):
    x = random_array(8, shape, "float64")
    assert_same(xp.fft.ifftshift(xp.fft.fftshift(xp.asarray(x))), x)
    assert_same(xp.fft.fftshift(xp.fft.ifftshift(xp.asarray(x), axes=0), axes=0), x)
    # The zero frequency moves to index n//2 and back.
    freqs = xp.fft.fftshift(xp.fft.fftfreq(shape[0]))
    assert float(freqs[shape[0] // 2]) == 0.0


# Laziness and the graph


def test_transforms_build_nodes_and_run_nothing():
    debug.reset()
    c = xp.asarray(random_array(9, (3, 8), "complex64"))
    r = xp.asarray(random_array(9, (3, 8), "float32"))
    for fn in (xp.fft.fft, xp.fft.ifft, xp.fft.irfft, xp.fft.hfft):
        fn(c, n=6, axis=0)
    for fn in (xp.fft.fftn, xp.fft.ifftn, xp.fft.irfftn):
        fn(c, s=(4, 5), axes=(1, 0))
    xp.fft.rfft(r), xp.fft.ihfft(r), xp.fft.rfftn(r), xp.fft.fftshift(r), xp.fft.ifftshift(r)
    xp.fft.fftfreq(8), xp.fft.rfftfreq(8)
    assert debug.counters["steps_run"] == 0 and debug.counters["realizations"] == 0


@pytest.mark.parametrize("name, prim, result", [
    ("fft", "fftn", ((1,), (6,), "ortho")), ("ifft", "ifftn", ((1,), (6,), "ortho")),
    ("rfft", "rfftn", ((1,), (6,), "ortho")), ("irfft", "irfftn", ((1,), (6,), "ortho")),
    ("hfft", "hfft", ((1,), (6,), "ortho")), ("ihfft", "ihfft", ((1,), (6,), "ortho")),
])
def test_one_dimensional_transforms_are_the_primitive_over_one_axis(name, prim, result):
    dtype = sorted(ONE_D[name])[0]
    y = getattr(xp.fft, name)(xp.asarray(random_array(10, (2, 8), dtype)), n=6, axis=-1, norm="ortho")
    assert y._node.op.name == prim and y._node.attrs == result


# Errors, raised at the call and naming the function


def _c(shape=(4, 6)):
    return xp.asarray(np.ones(shape, "complex64"))


def _r(shape=(4, 6)):
    return xp.asarray(np.ones(shape, "float32"))


TRANSFORMS_1D = {"fft": _c, "ifft": _c, "rfft": _r, "irfft": _c, "hfft": _c, "ihfft": _r}
TRANSFORMS_ND = {"fftn": _c, "ifftn": _c, "rfftn": _r, "irfftn": _c}
WRONG_DTYPE = {"fft": _r, "ifft": _r, "rfft": _c, "irfft": _r, "hfft": _r, "ihfft": _c,
               "fftn": _r, "ifftn": _r, "rfftn": _c, "irfftn": _r}

ERRORS = []
for _name, _x in TRANSFORMS_1D.items():
    ERRORS += [
        (_name, lambda f, x=_x: f(x(), norm="sideways"), ValueError, "norm"),
        (_name, lambda f, x=_x: f(x(), norm=None), ValueError, "norm"),
        (_name, lambda f, x=_x: f(x(), n=0), ValueError, "n must be at least 1"),
        (_name, lambda f, x=_x: f(x(), n=-3), ValueError, "n must be at least 1"),
        (_name, lambda f, x=_x: f(x(), n=2.0), TypeError, "n must be an integer"),
        (_name, lambda f, x=_x: f(x(), n=True), TypeError, "n must be an integer"),
        (_name, lambda f, x=_x: f(x(), axis=2), np.exceptions.AxisError, "out of bounds"),
        (_name, lambda f, x=_x: f(x(), axis=-3), np.exceptions.AxisError, "out of bounds"),
        (_name, lambda f, x=_x: f(x(())), np.exceptions.AxisError, "out of bounds"),
        (_name, lambda f, x=WRONG_DTYPE[_name]: f(x()), TypeError, "dtype"),
        (_name, lambda f: f(xp.asarray(np.ones(4, "int64"))), TypeError, "dtype"),
        (_name, lambda f: f(np.ones(4, "complex128")), TypeError, "arrayx array"),
    ]
for _name in ("fft", "ifft", "rfft", "ihfft"):
    # An empty axis has no points to transform unless n pads it.
    ERRORS.append((_name, lambda f, x=TRANSFORMS_1D[_name]: f(x((3, 0))), ValueError, "default n is 0"))
for _name in ("irfft", "hfft"):
    # The default output length 2*(m-1) is 0 for m == 1.
    ERRORS.append((_name, lambda f: f(_c((3, 1))), ValueError, "default n is 0"))
for _name, _x in TRANSFORMS_ND.items():
    ERRORS += [
        (_name, lambda f, x=_x: f(x(), norm="sideways"), ValueError, "norm"),
        (_name, lambda f, x=_x: f(x(), s=(4, 4)), ValueError, "axes"),
        (_name, lambda f, x=_x: f(x(), s=(4,), axes=(0, 1)), ValueError, "s has 1 entries but axes has 2"),
        (_name, lambda f, x=_x: f(x(), s=(4, 0), axes=(0, 1)), ValueError, "s[1] must be at least 1"),
        (_name, lambda f, x=_x: f(x(), s=(4, -2), axes=(0, 1)), ValueError, "s[1] must be at least 1"),
        (_name, lambda f, x=_x: f(x(), s=4, axes=(0,)), TypeError, "s must be a sequence"),
        (_name, lambda f, x=_x: f(x(), axes=(0, -2)), ValueError, "same axis more than once"),
        (_name, lambda f, x=_x: f(x(), axes=(0, 2)), np.exceptions.AxisError, "out of bounds"),
        (_name, lambda f, x=_x: f(x(), axes=0), TypeError, "axes must be a sequence"),
        (_name, lambda f, x=_x: f(x(), axes=(0.0,)), TypeError, "axes[0] must be an integer"),
        (_name, lambda f, x=WRONG_DTYPE[_name]: f(x()), TypeError, "dtype"),
        (_name, lambda f: f([1j, 2j]), TypeError, "arrayx array"),
    ]
for _name, _x in (("rfftn", _r), ("irfftn", _c)):
    # The real transforms change the length of the last transformed axis: they need one.
    ERRORS.append((_name, lambda f, x=_x: f(x(), axes=()), ValueError, "at least one axis"))
    ERRORS.append((_name, lambda f, x=_x: f(x(())), ValueError, "at least one axis"))
ERRORS.append(("irfftn", lambda f: f(_c((3, 1))), ValueError, "default transform length is 0"))
ERRORS.append(("fftn", lambda f: f(_c((0, 3))), ValueError, "default transform length is 0"))
ERRORS.append(("fftn", lambda f: f(_c((0, 3)), s=(-1, 3), axes=(0, 1)), ValueError, "s[0] is -1"))
for _name in ("fftfreq", "rfftfreq"):
    ERRORS += [
        (_name, lambda f: f(0), ValueError, "n must be at least 1"),
        (_name, lambda f: f(4.0), TypeError, "n must be an integer"),
        (_name, lambda f: f(4, d=0.0), ValueError, "d (the sample spacing) must not be zero"),
        (_name, lambda f: f(4, d=1j), TypeError, "d must be a real number"),
        (_name, lambda f: f(4, d="1"), TypeError, "d must be a real number"),
        (_name, lambda f: f(4, dtype=xp.complex64), TypeError, "real-valued floating-point dtype"),
        (_name, lambda f: f(4, dtype=xp.int64), TypeError, "real-valued floating-point dtype"),
        (_name, lambda f: f(4, dtype="datetime64[s]"), TypeError, "unsupported dtype"),
        (_name, lambda f: f(4, device="gpu9"), ValueError, "unknown device"),
    ]
for _name in ("fftshift", "ifftshift"):
    ERRORS += [
        (_name, lambda f: f(xp.asarray(np.ones(4, "int32"))), TypeError, "dtype"),
        (_name, lambda f: f(_r(), axes=(1, -1)), ValueError, "same axis more than once"),
        (_name, lambda f: f(_r(), axes=2), np.exceptions.AxisError, "out of bounds"),
        (_name, lambda f: f(_r(), axes=(0.5,)), TypeError, "axes[0] must be an integer"),
        (_name, lambda f: f(np.ones(4)), TypeError, "arrayx array"),
    ]


@pytest.mark.parametrize("name, call, error, fragment", ERRORS,
                         ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)])
def test_errors_name_the_function(name, call, error, fragment):
    debug.reset()
    with pytest.raises(error) as info:
        call(getattr(xp.fft, name))
    message = str(info.value)
    assert message.startswith(f"{name}: ") and fragment in message, message
    # Raised while building the graph: nothing was evaluated.
    assert debug.counters["steps_run"] == 0


def test_the_module_has_the_standard_names():
    names = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
             "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
    assert sorted(xp.fft.__all__) == sorted(names)
    assert all(callable(getattr(xp.fft, n)) for n in names)
