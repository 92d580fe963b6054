"""The CPU's native kernels (arrayx/_cpu/native) against the NumPy path.

The NumPy path (NumPy's loops, with the standard's special cases in
_cpu/special.py) is the oracle: every primitive the native path claims runs
on every dtype it accepts over a grid of special values, in a group of many
outputs (one compile per dtype), and its results must equal the NumPy
path's, exactly where IEEE arithmetic is exact (arithmetic, comparisons,
rounding, sqrt, casts), within a few ulp for the math functions (glibc's
vector and scalar functions and NumPy's own loops each differ from the
correctly rounded result by up to 4 ulp, so two of them by up to 8), with
NaN, infinities and the sign of zero in the same places.
"""

import logging
import math
import os
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

import arrayx as xp
from arrayx import dtypes as dt
from arrayx._cpu import native, workers
from arrayx._cpu.fused import FusedKernel
from arrayx._cpu.native import codegen, compiler, launch, points, runner
from arrayx._cpu.native.runner import NativeGroup
from arrayx.graph.fused import FusedGroup, Instruction
from arrayx.graph.primitives import BLOCK_REDUCE_OPS, ELEMENTWISE_OPS, PRIMITIVES
from arrayx.renderer.cstyle import EXPRESSIONS, supports

pytestmark = pytest.mark.skipif(compiler.available() is not None,
                                reason=f"native CPU kernels: {compiler.available()}")

P = PRIMITIVES
ALL_DTYPES = [dt.bool, dt.int8, dt.int16, dt.int32, dt.int64, dt.uint8, dt.uint16, dt.uint32, dt.uint64,
              dt.float16, dt.float32, dt.float64, dt.complex64, dt.complex128]

# Elementwise primitives on dtype kinds the native path leaves to NumPy: the
# complex math functions (C has no vectorizable complex exp, log, ...), and
# float16 nextafter (a float16 step, which float arithmetic cannot take).
# A new one is a visible diff here.
NATIVE_LEAVES_TO_NUMPY = frozenset({
    ("acos", "c"), ("acosh", "c"), ("asin", "c"), ("asinh", "c"), ("atan", "c"), ("atanh", "c"),
    ("cos", "c"), ("cosh", "c"), ("exp", "c"), ("expm1", "c"), ("log", "c"), ("log1p", "c"), ("log2", "c"),
    ("log10", "c"), ("sin", "c"), ("sinh", "c"), ("sqrt", "c"), ("tan", "c"), ("tanh", "c"),
    ("pow", "c"), ("round", "c"), ("sign", "c"),
    ("nextafter", "float16"),
})

# Results of these primitives are within a few ulp of NumPy's, not equal.
INEXACT = frozenset({"acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "expm1", "log",
                     "log1p", "log2", "log10", "sin", "sinh", "tan", "tanh", "atan2", "hypot", "pow",
                     "logaddexp"})
ULPS = 8


def inexact(name, dtype):
    """Whether `name` on `dtype` calls a math function (a complex abs is a hypot)."""
    return name in INEXACT or (name == "abs" and dtype.kind == "c")


def kind(dtype):
    return "b" if dtype == dt.bool else dtype.kind


def special_values(dtype):
    """Values that exercise `dtype`'s edge cases, in a NumPy array."""
    np_dtype = dtype.dtype
    if dtype == dt.bool:
        return np.array([False, True])
    if dtype.kind in "iu":
        info = np.iinfo(np_dtype)
        values = {0, 1, 2, 3, 7, info.max, info.max - 1, info.bits - 1, info.bits, info.bits + 1}
        if dtype.kind == "i":
            values |= {-1, -2, -3, -7, info.min, info.min + 1}
        return np.array(sorted(values), dtype=np_dtype)
    real = dt.real_dtype(dtype).dtype
    info = np.finfo(real)
    values = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.5, -3.5, 0.25, 10.0, -10.0, 1e-3, 100.0,
                       np.pi, -np.e, 1.0 + info.eps, 1.0 - info.epsneg, info.tiny, -info.tiny,
                       info.smallest_subnormal, info.max, -info.max, np.inf, -np.inf, np.nan], dtype=real)
    if dtype.kind == "c":
        pick = values[[0, 1, 2, 3, 4, 9, 12, 20, 24, 25, 26]]
        out = np.empty((pick.size, pick.size), np_dtype)
        out.real = pick[:, None]
        out.imag = pick[None, :]
        return out.reshape(-1)
    return values


def _float_close(got, want, ulps):
    """Equal, or both NaN; or within `ulps` units in the last place of the
    expected value (its spacing) where it is finite."""
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    zero = (want == 0) & (got == 0)
    same &= ~zero | (np.signbit(got) == np.signbit(want))
    if ulps:
        finite = np.isfinite(want) & np.isfinite(got)
        spacing = np.spacing(np.abs(want).astype(want.dtype))
        with np.errstate(invalid="ignore", over="ignore"):
            near = finite & (np.abs(got.astype(np.float64) - want.astype(np.float64)) <= ulps * spacing)
        same |= near & (np.signbit(got) == np.signbit(want))
    return same


def assert_matches(got, want, ulps, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.shape, want.shape, got.dtype, want.dtype)
    if want.dtype.kind == "c":
        same = _float_close(got.real, want.real, ulps) & _float_close(got.imag, want.imag, ulps)
    elif want.dtype.kind == "f":
        same = _float_close(got, want, ulps)
    else:
        same = got == want
    if not np.all(same):
        bad = np.flatnonzero(~np.asarray(same).reshape(-1))[:5]
        raise AssertionError(f"{what}: native {got.reshape(-1)[bad]} != numpy {want.reshape(-1)[bad]} at {bad}")


def run_both(group, inputs, into=None, threads=None):
    """(native outputs, NumPy-path outputs) of `group` on `inputs`, as lists."""
    runner = NativeGroup(group, into, threads)
    kernel = FusedKernel(group, into, threads)
    copies = [np.array(b, copy=True) if isinstance(b, np.ndarray) else b for b in inputs]
    with np.errstate(all="ignore"):
        want = kernel.numpy(*copies)
        got = runner(list(inputs), wait=True)
    assert got is not None, "no loop form covers the group"
    want = list(want) if isinstance(want, tuple) else [want]
    got = list(got) if isinstance(got, tuple) else [got]
    return got, want


def _result_dtype(name, dtype):
    """What the primitive's rule gives on operands of `dtype`."""
    prim = P[name]
    if prim.result:
        return prim.result[dtype]
    return dt.bool if name in ("any", "all") else dtype


def _claims(name, dtype):
    return (P[name].accepts is None or dtype in P[name].accepts) and supports(name, dtype)


# --- the table covers what the CPU fuses ------------------------------------

def test_every_primitive_the_cpu_fuses_has_a_c_expression_or_is_pinned():
    missing = set()
    for name in ELEMENTWISE_OPS - {"astype"}:
        for dtype in P[name].accepts or set(ALL_DTYPES):
            if not supports(name, dtype):
                missing.add((name, kind(dtype)) if (name, kind(dtype)) in NATIVE_LEAVES_TO_NUMPY
                            else (name, dtype.name if (name, dtype.name) in NATIVE_LEAVES_TO_NUMPY
                                  else kind(dtype)))
    assert missing == NATIVE_LEAVES_TO_NUMPY


def test_every_reduction_the_cpu_fuses_has_a_native_form():
    for name in BLOCK_REDUCE_OPS:
        for dtype in P[name].accepts:
            result = _result_dtype(name, dtype)
            assert supports(P[name].monoid.op, points.accumulator(name, result)), (name, dtype)


# --- every primitive, every dtype, special values ---------------------------

def _group_of(dtype, names, arity, shape):
    """A group applying each primitive of `names` to its `arity` inputs (of
    `dtype` and `shape`), each an output of the group."""
    inputs = tuple((shape, dtype, "C") for _ in range(arity))
    body = tuple(Instruction(P[n], (), tuple(range(arity)), shape, _result_dtype(n, dtype)) for n in names)
    return FusedGroup(shape, inputs, body, tuple(range(arity, arity + len(body))))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
def test_unary_primitives_match_the_numpy_path_on_special_values(dtype):
    names = sorted(n for n in ELEMENTWISE_OPS if n in EXPRESSIONS and _arity(n) == 1 and _claims(n, dtype))
    x = special_values(dtype)
    got, want = run_both(_group_of(dtype, names, 1, x.shape), [x])
    for name, g, w in zip(names, got, want):
        assert_matches(g, w, ULPS if inexact(name, dtype) else 0, f"{name}({dtype})")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
def test_binary_primitives_match_the_numpy_path_on_special_values(dtype):
    names = sorted(n for n in ELEMENTWISE_OPS if n in EXPRESSIONS and _arity(n) == 2 and _claims(n, dtype))
    values = special_values(dtype)
    x = np.repeat(values, len(values))
    y = np.tile(values, len(values))
    got, want = run_both(_group_of(dtype, names, 2, x.shape), [x, y])
    for name, g, w in zip(names, got, want):
        assert_matches(g, w, ULPS if inexact(name, dtype) else 0, f"{name}({dtype})")



INTEGER_DIVISION_DTYPES = [d for d in ALL_DTYPES if d.kind in "iu"]


@pytest.mark.parametrize("dtype", INTEGER_DIVISION_DTYPES, ids=lambda d: d.name)
def test_integer_floor_division_and_remainder_give_numpys_values(dtype):
    # Integers of up to 32 bits divide in double (renderer/ops.h): exact by
    # the spacing argument there. Every pair of 8-bit values; for wider
    # types the special values against random values of every magnitude
    # (the quotients nearest an integer are the hardest), both ways round.
    info = np.iinfo(dtype.dtype)
    if info.bits == 8:
        values = np.arange(info.min, info.max + 1).astype(dtype.dtype)
        x, y = np.repeat(values, values.size), np.tile(values, values.size)
    else:
        rng = np.random.default_rng(3)
        magnitudes = 2.0 ** rng.uniform(0, info.bits, 4000)
        signs = rng.choice([-1, 1], 4000) if info.min < 0 else 1
        wide = np.clip(np.round(magnitudes * signs), info.min, info.max).astype(dtype.dtype)
        special = special_values(dtype)
        x = np.concatenate([np.repeat(special, wide.size), np.tile(wide, special.size), wide, wide[::-1]])
        y = np.concatenate([np.tile(wide, special.size), np.repeat(special, wide.size), wide[::-1] // 3 + 1, wide])
    got, want = run_both(_group_of(dtype, ["floor_divide", "remainder"], 2, x.shape), [x, y])
    for name, g, w in zip(["floor_divide", "remainder"], got, want):
        assert_matches(g, w, 0, f"{name}({dtype})")

def _arity(name):
    from arrayx.graph.primitives import BINARY, UNARY
    return 1 if name in UNARY or name == "stop_gradient" else 2 if name in BINARY else 3


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
def test_casts_to_every_dtype_match_the_numpy_path(dtype):
    x = special_values(dtype)
    body = tuple(Instruction(P["astype"], (target,), (0,), x.shape, target) for target in ALL_DTYPES)
    group = FusedGroup(x.shape, ((x.shape, dtype, "C"),), body, tuple(range(1, 1 + len(body))))
    got, want = run_both(group, [x])
    for target, g, w in zip(ALL_DTYPES, got, want):
        if dtype.kind in "fc" and target.kind in "iu":
            # The standard leaves NaN and out-of-range float-to-integer casts
            # unspecified (and NumPy's differ between x86-64 SIMD levels).
            real = np.real(x).astype(np.float64)
            bounds = np.iinfo(target.dtype)
            kept = np.isfinite(real) & (np.trunc(real) >= bounds.min) & (np.trunc(real) <= bounds.max)
            g, w = g[kept], w[kept]
        assert_matches(g, w, 0, f"astype({dtype} -> {target})")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
def test_where_selects_as_the_numpy_path(dtype):
    x = special_values(dtype)
    y = x[::-1].copy()
    condition = np.arange(x.size) % 3 == 0
    body = (Instruction(P["where"], (), (0, 1, 2), x.shape, dtype),)
    group = FusedGroup(x.shape, ((x.shape, dt.bool, "C"), (x.shape, dtype, "C"), (x.shape, dtype, "C")), body, (3,))
    got, want = run_both(group, [condition, x, y])
    assert_matches(got[0], want[0], 0, "where")


def _float32_ulp(exact):
    """A float32 ulp at each float64 `exact`: the spacing of float32s in its
    binade, 2**-149 in the subnormal range."""
    _, e = np.frexp(np.abs(exact))
    return np.maximum(np.ldexp(1.0, e - 24), 2.0 ** -149)


def _float32_bits(value):
    return np.float32(value).view(np.uint32)


# exp(EXP_TOP) is the largest finite float32 exp: above EXP_TOP, exp is +inf.
EXP_TOP = np.float32(88.72283172607422)


@pytest.mark.parametrize("dtype", [dt.float32, dt.float64])
def test_abs_of_a_nan_a_remainder_made_clears_its_sign(dtype):
    # copysign(x, where(isnan(r), abs(r), r)) with r = remainder(abs(x), x),
    # NaN for x = inf or 0 (with its sign bit, from x86's fmod, as NumPy's):
    # g++ dropped the abs of a remainder of an abs (taking a NaN's sign as
    # unspecified), and copysign then gave -|x| where NumPy gives |x|.
    x = special_values(dtype)
    s = x.shape
    f = dtype
    body = (Instruction(P["abs"], (), (0,), s, f), Instruction(P["remainder"], (), (1, 0), s, f),
            Instruction(P["abs"], (), (2,), s, f), Instruction(P["isnan"], (), (2,), s, dt.bool),
            Instruction(P["where"], (), (4, 3, 2), s, f), Instruction(P["copysign"], (), (0, 5), s, f))
    got, want = run_both(FusedGroup(s, ((s, f, "C"),), body, (2, 5, 6)), [x])
    assert_matches(got[2], want[2], 0, "copysign(x, where(isnan(r), abs(r), r))")
    assert not np.signbit(got[1][np.isnan(got[1])]).any()


def test_float32_exp_is_within_4_ulp_of_the_correctly_rounded_value():
    # glibc's manual bounds its vector functions (host.h) within 4 ulp; over
    # every float32 in [-104, 89] libmvec's AVX-512 expf is within 2.64 ulp.
    # The oracle is NumPy's float64 exp, whose own error is ~2**-29 of a
    # float32 ulp. Inputs: every 1024th float32 from -104 to EXP_TOP, every
    # float32 in [-103.98, -87.33] (exps in the subnormal range, or rounding
    # to 0 or to the least subnormal) and the 4096 floats up to EXP_TOP.
    top = _float32_bits(EXP_TOP)
    every = np.concatenate([np.arange(0, top, 1024, dtype=np.uint32),
                            np.arange(_float32_bits(-0.0), _float32_bits(-104.0), 1024, dtype=np.uint32)])
    subnormal = np.arange(_float32_bits(-87.33), _float32_bits(-103.98), dtype=np.uint32)
    below_top = top - np.arange(4096, dtype=np.uint32)
    x = np.concatenate([every, subnormal, below_top]).view(np.float32)
    got = NativeGroup(_group_of(dt.float32, ["exp"], 1, x.shape))([x], wait=True)
    exact = np.exp(x.astype(np.float64))
    assert np.all(np.isfinite(got))
    error = np.abs(got.astype(np.float64) - exact) / _float32_ulp(exact)
    assert error.max() <= 4, (x[np.argmax(error)], error.max())


def test_float32_exp_special_values_are_exact():
    # The standard's special cases, +inf above EXP_TOP and +0 below
    # ln(2**-150) = -103.972... (exp under half the least subnormal).
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, np.nextafter(EXP_TOP, np.float32(np.inf)), 89.0, 1e30,
                  -104.0, -1e30], np.float32)
    want = np.array([np.nan, np.inf, 0.0, 1.0, 1.0, np.inf, np.inf, np.inf, 0.0, 0.0], np.float32)
    got = NativeGroup(_group_of(dt.float32, ["exp"], 1, x.shape))([x], wait=True)
    assert_matches(got, want, 0, "exp")   # zeros' signs too


# --- reductions: every monoid, dtype and loop form ------------------------

# (shape, axes, keepdims): the reduce form (axes holding the last), the
# columns form (the last axis kept), a reduction to one point, non-adjacent
# axes, a reduction over no axes (xp.sum(x, axis=())).
REDUCTION_CASES = [((7, 33), (1,), False), ((7, 33), (0,), True), ((300,), (0,), False),
                   ((4, 5, 6), (0, 2), False), ((4, 5, 6), (1,), True), ((7, 33), (), False)]
# dtypes every loop form and an exported chain are checked on (the others in the reduce and columns forms).
FORM_DTYPES = (dt.int32, dt.float16, dt.float32, dt.complex64)


def _reduction_group(name, dtype, shape, axes, keepdims, chain):
    """A group reducing x (of `shape`) over `axes`, or, with `chain`,
    x * x + x (exported too) before the reduction."""
    from arrayx.graph.primitives import reduced_shape
    inputs = ((shape, dtype, "C"),)
    body = []
    if chain:
        body += [Instruction(P["multiply"], (), (0, 0), shape, dtype), Instruction(P["add"], (), (1, 0), shape, dtype)]
    source = len(body)
    result = _result_dtype(name, dtype)
    body.append(Instruction(P[name], (axes, keepdims), (source,), reduced_shape(shape, axes, keepdims), result))
    outputs = ((2, 3) if chain else (1,))
    return FusedGroup(shape, inputs, tuple(body), outputs)


def _values(dtype, shape, rng, specials):
    n = int(np.prod(shape))
    if dtype == dt.bool:
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dtype.kind in "iu":
        return rng.integers(0, 5, n).astype(dtype.dtype).reshape(shape)
    x = rng.uniform(-2, 2, n).astype(dtype.dtype)
    if dtype.kind == "c":
        x = x + 1j * rng.uniform(-2, 2, n).astype(x.dtype)
    if specials:
        x[::11] = np.nan
        x[5::13] = np.inf
    return x.reshape(shape)


def _assert_reduced(name, got, want, what):
    if want.dtype.kind == "c" and name not in ("sum", "prod"):
        # The exported x * x + x: NumPy's AVX-512 loop fuses one product of
        # a complex multiply into an FMA, which differs after cancellation
        # by a rounding of the products, not of the result.
        eps = np.finfo(want.dtype).eps
        assert np.allclose(got, want, rtol=8 * eps, atol=8 * eps * np.max(np.abs(want))), (what, got, want)
    elif name in ("sum", "prod") and want.dtype.kind in "fc":
        # Another summation order: a few roundings of the largest partial result.
        finite = want[np.isfinite(want)]
        scale = np.max(np.abs(finite), initial=1.0)
        eps = np.finfo(want.dtype).eps
        both_nan = np.isnan(got) & np.isnan(want)
        assert np.all(both_nan | np.isclose(got, want, rtol=64 * eps, atol=64 * eps * scale)), (what, got, want)
    else:
        assert_matches(got, want, 0, what)


# Each reduction on each dtype its primitive takes.
REDUCTIONS = [(name, dtype) for name in sorted(BLOCK_REDUCE_OPS) for dtype in ALL_DTYPES if dtype in P[name].accepts]


@pytest.mark.parametrize("name, dtype", REDUCTIONS, ids=[f"{n}-{d.name}" for n, d in REDUCTIONS])
def test_reductions_match_the_numpy_path(name, dtype):
    rng = np.random.default_rng(0)
    cases = REDUCTION_CASES if dtype in FORM_DTYPES else REDUCTION_CASES[:2] + REDUCTION_CASES[-1:]
    for shape, axes, keepdims in cases:
        for chain, specials in ((False, False), (False, True), (True, False)):
            if chain and (dtype == dt.bool or dtype not in FORM_DTYPES):
                continue
            x = _values(dtype, shape, rng, specials)
            got, want = run_both(_reduction_group(name, dtype, shape, axes, keepdims, chain), [x])
            for g, w in zip(got, want):
                _assert_reduced(name, g, w, f"{name}({dtype}, {shape}, axes={axes}, chain={chain})")


@pytest.mark.parametrize("name, dtype", [(name, dtype) for name in ("sum", "prod", "max", "min")
                                         for dtype in (dt.int32, dt.float32, dt.float64)])
def test_reductions_of_every_row_length_give_the_numpy_paths_values(name, dtype):
    # A row's last points fold in one more step of LANES lanes, those past
    # its end keeping their value: every length up to three steps, and
    # across the SUM_BLOCK blocks of a cascaded sum; in a float row a NaN
    # (or, in other rows, an infinity) as its last point, in those lanes.
    rng = np.random.default_rng(7)
    lanes, block = points.LANES, points.SUM_BLOCK
    for n in list(range(1, 3 * lanes + 1)) + [block - 1, block, block + 1, block + lanes - 1, 2 * block + 3]:
        x = _values(dtype, (4, n), rng, False)
        if dtype.kind == "f":
            x[1, -1] = np.nan
            x[2, -1] = -np.inf
        got, want = run_both(_reduction_group(name, dtype, (4, n), (1,), False, False), [x])
        _assert_reduced(name, got[0], want[0], f"{name}({dtype}, n={n})")


def test_float32_sums_are_at_least_as_accurate_as_numpys_pairwise_sums():
    # Float32 sums fold into float64 lanes with no blocks: within a float32
    # spacing of the exact sum (math.fsum of the values), or closer than
    # NumPy's pairwise float32 sum, on magnitudes that cancel or span 10^8.
    rng = np.random.default_rng(1)
    for n in (1000, 100_003, 2_000_000):
        for x in (rng.uniform(0, 1, n), rng.lognormal(0, 3, n) * rng.choice([-1, 1], n), rng.standard_normal(n)):
            x = x.astype(np.float32)
            exact = math.fsum(x.astype(np.float64))
            group = _reduction_group("sum", dt.float32, (n,), (0,), False, False)
            got, want = run_both(group, [x])
            assert abs(float(got[0]) - exact) <= max(abs(float(want[0]) - exact), np.spacing(np.float32(exact)))


def test_float64_sums_add_blocks_pairwise():
    # 2**24 ones and then small values: added one after another, every small
    # value would be lost to rounding; pairwise, they survive.
    x = np.concatenate([np.full(1 << 16, 2.0 ** 52), np.full(1 << 16, 1.0)])
    group = _reduction_group("sum", dt.float64, x.shape, (0,), False, False)
    got, want = run_both(group, [x])
    exact = (1 << 16) * 2.0 ** 52 + (1 << 16)
    assert float(got[0]) == exact == float(want[0])


# --- layouts: views, broadcasts, scalars, writes into an input, threads -------

def _chain_group(inputs, shape, dtype=dt.float32):
    """(a + b) * a - exp(b) over inputs a, b given as (shape, layout)."""
    described = tuple((s, dtype, layout) for s, layout in inputs)
    body = (Instruction(P["add"], (), (0, 1), shape, dtype), Instruction(P["multiply"], (), (2, 0), shape, dtype),
            Instruction(P["exp"], (), (1,), shape, dtype), Instruction(P["subtract"], (), (3, 4), shape, dtype))
    return FusedGroup(shape, described, body, (2, 5))


@pytest.mark.parametrize("case", ["contiguous", "transposed", "strided", "row broadcast", "column broadcast",
                                  "scalar", "broadcast view", "reversed"])
def test_inputs_of_every_layout_give_the_numpy_paths_values(case):
    rng = np.random.default_rng(2)
    m = rng.uniform(-1, 1, (37, 41)).astype(np.float32)
    b = rng.uniform(-1, 1, (41, 37)).astype(np.float32)
    a, other = {
        "contiguous": (m, (m * 2, "C")),
        "transposed": (m, (b.T, "S")),
        "strided": (m, (rng.uniform(-1, 1, (37, 82)).astype(np.float32)[:, ::2], "S")),
        "row broadcast": (m, (m[0].copy(), "C")),
        "column broadcast": (m, (m[:, :1].copy(), "C")),
        "scalar": (m, (np.float32(0.75), "C")),
        "broadcast view": (m, (np.broadcast_to(m[0], m.shape), "B")),
        "reversed": (m, (m[::-1], "S")),
    }[case]
    operand, layout = other
    group = _chain_group([(a.shape, "C"), (np.shape(operand), layout)], a.shape)
    got, want = run_both(group, [a, operand])
    for g, w in zip(got, want):
        # exp within a few ulp, then a subtraction that may cancel: float32 rounding of the operands.
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_strided_inputs_of_math_functions_give_numpys_values_in_every_form(dtype):
    # Strided inputs of a vector math function go through lanes, LANES
    # points at a time, and the last points one by one: every row length
    # around a step, strides forward and backward, and each loop form that
    # reads them so (points, a row group's pass and last pass, a reduction).
    # Each math function is within 4 ulp of the correctly rounded value here
    # and in NumPy, so two of them and the roundings around them differ by
    # at most 16 units of the (positive, well-conditioned) results.
    rtol = 16 * np.finfo(dtype).eps
    rng = np.random.default_rng(11)
    lanes = points.LANES
    with xp.debug.cpu_kernels("native"):
        for n in (1, lanes - 1, lanes, lanes + 1, 3 * lanes + 5, 100):
            table = rng.uniform(-2, 2, (7, 3 * n)).astype(dtype)
            for a in (table[:, ::3], table[:, ::-3]):
                b = table[:, 1::3]
                x, y = xp.asarray(a), xp.asarray(b)
                np.testing.assert_allclose(np.asarray(xp.exp(y) * (xp.sin(x) + 3)), np.exp(b) * (np.sin(a) + 3),
                                           rtol=rtol, err_msg=f"points, n={n}")
                np.testing.assert_allclose(np.asarray(_softmax(x)), _softmax(a, np), rtol=rtol,
                                           err_msg=f"softmax rows, n={n}")
                np.testing.assert_allclose(np.asarray(xp.sum(xp.exp(x), axis=1)), np.sum(np.exp(a), axis=1),
                                           rtol=rtol, err_msg=f"sum of exp, n={n}")


def test_a_strided_input_goes_to_lanes_only_where_a_math_function_reads_it():
    # g++ vectorizes a variable stride's loads only in a loop of their own
    # (as gathers): staged, sin runs on vectors; an addition alone runs as
    # fast on the strided loads, which staging would slow.
    f, shape = dt.float32, (5, 40)
    inputs = ((shape, f, "S"), (shape, f, "S"))
    math = FusedGroup(shape, inputs, (Instruction(P["sin"], (), (0,), shape, f),
                                      Instruction(P["add"], (), (2, 1), shape, f)), (3,))
    plain = FusedGroup(shape, inputs, (Instruction(P["add"], (), (0, 1), shape, f),), (2,))
    form = codegen.Form("elementwise", (points.STRIDED, points.STRIDED))
    staged = codegen.source(math, form)
    assert "ax_s0[ax_l] = a0[(ax_j + ax_l) * s0]" in staged and "ax_s1[ax_l] = a1[(ax_j + ax_l) * s1]" in staged
    assert "ax_s0[" not in codegen.source(plain, form)


def test_an_output_written_into_its_input_gives_the_numpy_paths_values():
    x = np.linspace(-3, 3, 1001).astype(np.float64)
    body = (Instruction(P["multiply"], (), (0, 0), x.shape, dt.float64),
            Instruction(P["sin"], (), (1,), x.shape, dt.float64))
    group = FusedGroup(x.shape, ((x.shape, dt.float64, "C"),), body, (2,))
    target = x.copy()
    got = NativeGroup(group, into=0)([target], wait=True)
    assert got is target
    assert_matches(target, np.sin(x * x), ULPS, "into")


def _stream_group(shape, layout="C"):
    """x * x + 2.5 (float64), and its casts to float16 and complex128, over x of `shape`."""
    f = dt.float64
    body = (Instruction(P["multiply"], (), (0, 0), shape, f),
            Instruction(P["add"], (), (1, 0), shape, f),
            Instruction(P["astype"], (dt.float16,), (2,), shape, dt.float16),
            Instruction(P["astype"], (dt.complex128,), (2,), shape, dt.complex128))
    return FusedGroup(shape, ((shape, f, layout),), body, (2, 3, 4))


@pytest.fixture
def every_output_streamed(monkeypatch):
    """Elementwise groups that may stream do at every size (with streaming
    stores where the CPU has them, else a plain copy)."""
    monkeypatch.setattr(compiler, "stream_bytes", lambda: 1)


@pytest.mark.parametrize("shape, layout", [((1,), "C"), ((1023,), "C"), ((1024,), "C"), ((3000,), "C"),
                                           ((5, 1500), "C"), ((3, 7, 1100), "S"), ((2500, 3), "S")])
@pytest.mark.parametrize("threads", [1, 2])
def test_streamed_outputs_give_the_numpy_paths_values(shape, layout, threads, every_output_streamed,
                                                      every_call_threaded):
    # Points go STREAM_POINTS at a time through a buffer: runs shorter and
    # longer than that, pieces of a threaded call starting inside a run,
    # outputs of 2, 8 and 16 bytes, strided and transposed inputs.
    group = _stream_group(shape, layout)
    x = np.random.default_rng(4).uniform(-3, 3, shape[::-1] if layout == "S" else shape)
    x = x.T if layout == "S" else x
    got, want = run_both(group, [x], threads=threads)
    for g, w in zip(got, want):
        assert_matches(g, w, 0, f"streamed {shape} {layout}")


def test_a_streamed_output_written_into_a_misaligned_input_keeps_the_bytes_around_it(every_output_streamed):
    # The output starts 8 bytes past a cache line: its first and last partial
    # lines are copied plainly, the neighbours on either side left as they were.
    n = 3000
    base = np.full(n + 2, 7.0)
    target = base[1:-1]
    x = np.random.default_rng(6).uniform(-3, 3, n)
    target[:] = x
    group = FusedGroup((n,), (((n,), dt.float64, "C"),),
                       (Instruction(P["multiply"], (), (0, 0), (n,), dt.float64),), (1,))
    got = NativeGroup(group, into=0)([target], wait=True)
    assert got is target
    assert_matches(target, x * x, 0, "into")
    assert base[0] == 7.0 and base[-1] == 7.0


def test_only_outputs_as_large_as_the_cache_of_groups_without_math_functions_are_streamed(monkeypatch):
    # A kernel calling a math function keeps up with memory without
    # streaming, and the copy through a buffer slows it.
    monkeypatch.setattr(compiler, "stream_bytes", lambda: 8000)
    shape = (1000,)
    math = FusedGroup(shape, ((shape, dt.float64, "C"),), (Instruction(P["exp"], (), (0,), shape, dt.float64),), (1,))
    plain = _stream_group(shape)   # 1000 points, 26 bytes of output each
    small = FusedGroup(shape, ((shape, dt.float32, "C"),),
                       (Instruction(P["multiply"], (), (0, 0), shape, dt.float32),), (1,))   # 4000 bytes
    x = np.ones(shape)
    streamed = {}
    for name, group, operand in (("math", math, x), ("plain", plain, x), ("small", small, x.astype(np.float32))):
        runner_ = NativeGroup(group)
        runner_([operand], wait=True)
        streamed[name] = [layout.form.streamed for layout in runner_.layouts.values()]
    assert streamed == {"math": [False], "plain": [True], "small": [False]}


def _threaded_case(mode_case, rows=64):
    """(a group of `mode_case`'s loop form, its inputs), float32 over (rows, 300)."""
    x = np.random.default_rng(3).uniform(-1, 1, (rows, 300)).astype(np.float32)
    if mode_case == "elementwise":
        return _chain_group([(x.shape, "C"), (x.shape, "C")], x.shape), [x, x[::-1].copy()]
    if mode_case == "rows":
        return _softmax_group(x.shape), [x]
    if mode_case == "tiles":
        x = np.random.default_rng(3).uniform(-1, 1, (600, 70)).astype(np.float32)
        return _softmax_group(x.shape, "S"), [_transposed(x)]
    axes = {"reduce": (1,), "columns": (0,), "reduce to one point": (0, 1)}[mode_case]
    return _reduction_group("sum", dt.float32, x.shape, axes, False, True), [x]


def _as_list(result):
    return list(result) if isinstance(result, tuple) else [result]


@pytest.fixture
def every_call_threaded(monkeypatch):
    monkeypatch.setattr(runner, "THREADED_POINTS", 1)
    monkeypatch.setattr(workers, "worth_waking", lambda seconds: True)


THREADED_CASES = ["elementwise", "reduce", "columns", "reduce to one point", "rows", "tiles"]


@pytest.mark.parametrize("mode_case", THREADED_CASES)
def test_calls_cut_into_pieces_over_threads_give_the_one_thread_values(mode_case, every_call_threaded):
    group, inputs = _threaded_case(mode_case)
    one = NativeGroup(group, threads=1)(inputs, wait=True)
    two = NativeGroup(group, threads=2)(inputs, wait=True)
    for a, b in zip(_as_list(one), _as_list(two)):
        np.testing.assert_allclose(b, a, rtol=1e-6)   # partial sums add in another order


@pytest.mark.parametrize("mode_case", THREADED_CASES)
def test_the_launchers_thread_pool_and_the_python_workers_give_the_same_bits(mode_case, every_call_threaded,
                                                                           monkeypatch):
    group, inputs = _threaded_case(mode_case)
    pooled = NativeGroup(group, threads=2)(inputs, wait=True)
    assert runner.RUN[2] is not launch.without_launcher()[2], "the launcher (and its pool) did not build here"
    monkeypatch.setattr(runner, "RUN", list(launch.without_launcher()))   # as where there is no launcher
    on_workers = NativeGroup(group, threads=2)(inputs, wait=True)
    for a, b in zip(_as_list(pooled), _as_list(on_workers)):
        np.testing.assert_array_equal(a, b)   # the same pieces, partial results combined in the same order


def test_threaded_calls_wake_threads_again_once_the_latency_estimate_has_decayed(monkeypatch):
    # An estimate raised by NumPy-path calls on a busy machine shrinks at each
    # call that skips the threads, so native calls do not stay on one thread.
    monkeypatch.setattr(runner, "THREADED_POINTS", 1)
    group, inputs = _threaded_case("elementwise")
    native_group = NativeGroup(group, threads=2)
    want = native_group(inputs, wait=True)
    monkeypatch.setattr(workers, "_start_latency", 1e3)
    monkeypatch.setattr(workers, "LATENCY_DECAY", 0.5)   # 1e3 s halves below any call's time within ~60 calls
    woken = []
    pieces = native_group._pieces
    monkeypatch.setattr(native_group, "_pieces",
                        lambda layout, buffers, result, threads: (woken.append(threads), pieces(layout, buffers, result,
                                                                                               threads))[1])
    while not woken or woken[-1] == 1:
        assert len(woken) < 200, "the threads never woke again"
        for got, expected in zip(_as_list(native_group(inputs)), _as_list(want)):
            np.testing.assert_array_equal(got, expected)
    assert len(woken) > 1


@pytest.mark.parametrize("shape, splits_reduced", [((4096, 20), True), ((64, 4096), False)])
def test_a_threaded_column_sum_of_a_narrow_table_splits_its_rows(shape, splits_reduced, every_call_threaded,
                                                                monkeypatch):
    # Pieces of a few columns each would read every row's cache lines once
    # per piece; pieces of rows read the table once, into partial sums.
    x = np.random.default_rng(5).uniform(-1, 1, shape).astype(np.float32)
    group = _reduction_group("sum", dt.float32, shape, (0,), False, False)
    NativeGroup(group, threads=2)([x], wait=True)
    run, name, split = runner.RUN
    calls = []
    monkeypatch.setattr(runner, "RUN", [run, name, lambda *args: calls.append(args[4]) or split(*args)])
    got = NativeGroup(group, threads=2)([x], wait=True)
    assert calls == [splits_reduced]
    # float32 sums of 4096 terms (summed in float64 here): the last bits of the float32 result.
    np.testing.assert_allclose(got, x.sum(axis=0, dtype=np.float64), rtol=1e-6)


def test_python_threads_running_threaded_calls_at_once_get_their_own_values(every_call_threaded):
    # One call at a time has the pool; the others run their pieces on their own thread.
    import threading
    group, _ = _threaded_case("reduce")
    inputs = [[np.random.default_rng(k).uniform(-1, 1, (64, 300)).astype(np.float32)] for k in range(6)]
    alone = [NativeGroup(group, threads=2)(x, wait=True) for x in inputs]
    got = [None] * len(inputs)

    def work(k):
        native_group = NativeGroup(group, threads=2)
        got[k] = [native_group(inputs[k], wait=True) for _ in range(50)]
    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for want, results in zip(alone, got):
        for result in results:
            for a, b in zip(_as_list(result), _as_list(want)):
                np.testing.assert_array_equal(a, b)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
# JAX, where another test imported it, warns at any fork; the child runs only arrayx's kernels.
@pytest.mark.filterwarnings("ignore:os.fork\\(\\) was called:RuntimeWarning")
def test_a_child_forked_after_the_pool_started_runs_threaded_calls(every_call_threaded):
    group, inputs = _threaded_case("elementwise")
    want = NativeGroup(group, threads=2)(inputs, wait=True)   # the pool's threads are running now
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            got = NativeGroup(group, threads=2)(inputs, wait=True)
            same = all(np.array_equal(a, b) for a, b in zip(_as_list(got), _as_list(want)))
            os.write(write, b"same" if same else b"different")
        finally:
            os._exit(0)
    os.close(write)
    answer = os.read(read, 16)
    os.close(read)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert answer == b"same"


def _softmax_group(shape, layout="C"):
    """Row softmax of x over its last axis: max, subtract, exp, sum, divide."""
    rows = shape[:-1] + (1,)
    axes = ((len(shape) - 1,), True)
    f = dt.float32
    body = (Instruction(P["max"], axes, (0,), rows, f), Instruction(P["subtract"], (), (0, 1), shape, f),
            Instruction(P["exp"], (), (2,), shape, f), Instruction(P["sum"], axes, (3,), rows, f),
            Instruction(P["divide"], (), (3, 4), shape, f))
    return FusedGroup(shape, ((shape, f, layout),), body, (5,))


def _transposed(x):
    """`x`'s values laid out with its last two axes swapped in memory (a transposed matrix's rows)."""
    return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mask_dtype", [np.bool_, np.int8, np.uint8, np.int16])
def test_a_row_sum_over_a_select_by_a_narrow_mask_gives_the_numpy_paths_values(dtype, mask_dtype):
    # sum(exp(where(mask != 0, x, -1.5)), rows): narrow inputs are copied to
    # wide lanes before the vectorized fold (codegen's staging).
    rng = np.random.default_rng(6)
    x = rng.standard_normal((37, 301)).astype(dtype)
    x[5, 9] = np.nan
    mask = (rng.uniform(size=x.shape) < 0.3).astype(mask_dtype)
    f, m = dt.from_numpy(np.dtype(dtype)), dt.from_numpy(np.dtype(mask_dtype))
    inputs = ((x.shape, f, "C"), (x.shape, m, "C"), ((), f, "C"), ((), m, "C"))
    n = len(inputs)
    body = (Instruction(P["not_equal"], (), (1, 3), x.shape, dt.bool),
            Instruction(P["where"], (), (n, 0, 2), x.shape, f),
            Instruction(P["exp"], (), (n + 1,), x.shape, f),
            Instruction(P["sum"], ((1,), True), (n + 2,), (37, 1), f))
    group = FusedGroup(x.shape, inputs, body, (n + 3,))
    got, want = run_both(group, [x, mask, np.asarray(-1.5, dtype), np.asarray(0, mask_dtype)])
    # exp within a few ulps, then sums in another order: a few roundings of each row's total.
    np.testing.assert_allclose(got[0], want[0], rtol=64 * np.finfo(dtype).eps)


def test_a_row_group_gives_the_numpy_paths_softmax():
    x = np.random.default_rng(4).standard_normal((33, 250)).astype(np.float32)
    x[3, 7] = np.nan
    got, want = run_both(_softmax_group(x.shape), [x])
    assert_matches(got[0], want[0], ULPS, "softmax")


def _last_pass(source):
    return source[source.index("void ax_last("):source.index("extern")]


@pytest.mark.parametrize("n", [1, points.LANES - 1, points.LANES, points.LANES + 1, 100])
def test_a_row_softmax_computes_each_exponential_once(n):
    # The sum's pass stores exp(x - max) in the output's row, which the
    # last pass reads back and divides: one exp per point, the NumPy path's
    # values (exp within a few ulp of NumPy's), a NaN's row all NaN.
    group = _softmax_group((9, n))
    last = _last_pass(codegen.source(group, codegen.Form("rows", (points.CONTIGUOUS,))))
    assert "exp(" not in last and "float v3 = w5[q];" in last
    x = np.random.default_rng(n).standard_normal((9, n)).astype(np.float32)
    x[2, n // 2] = np.nan
    got, want = run_both(group, [x])
    assert_matches(got[0], want[0], ULPS, f"softmax over rows of {n}")


def test_a_row_group_written_into_its_input_computes_its_exponentials_again():
    # softmax(x) * x written into x: stored in the output's row, exp(x - max)
    # would overwrite the x the last pass still reads.
    shape, f = (9, 40), dt.float32
    softmax = _softmax_group(shape)
    group = FusedGroup(shape, softmax.inputs, softmax.body + (Instruction(P["multiply"], (), (5, 0), shape, f),), (6,))
    assert "exp(" in _last_pass(codegen.source(group, codegen.Form("rows", (points.CONTIGUOUS,), into=0)))
    x = np.random.default_rng(8).standard_normal(shape).astype(np.float32)
    target = x.copy()
    got = NativeGroup(group, into=0)([target], wait=True)
    assert got is target
    assert_matches(target, _softmax(x, np) * x, ULPS, "softmax(x) * x into x")


@pytest.mark.parametrize("shape", [(300, 250), (3, 40, 37), (17, 1000)])
def test_rows_of_a_transposed_matrix_run_a_tile_of_rows_at_a_time(shape):
    # Rows a row length apart whose neighbours are adjacent: the tiles form,
    # over more rows than a tile and row lengths that are not whole blocks.
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    x[(0,) * (len(shape) - 2) + (3, 7)] = np.nan
    group = _softmax_group(shape, "S")
    native_group = NativeGroup(group)
    got = native_group([_transposed(x)], wait=True)
    assert [layout.form.mode for layout in native_group.layouts.values()] == ["tiles"]
    want = FusedKernel(group, None, None).numpy(x)
    assert_matches(got, want, ULPS, "softmax")


@pytest.mark.parametrize("dtype", [dt.float32, dt.float64])
@pytest.mark.parametrize("shape", [(33, 250), (4, 5, 17), (9, 1), (70,)])
@pytest.mark.parametrize("transposed", [False, True])
def test_a_row_group_with_an_epilogue_gives_the_numpy_paths_logsumexp(dtype, shape, transposed):
    # max, subtract, exp, sum over the last axis, then once per row log(sum)
    # and (max + log(sum)) * bias, an input of the kept shape: with outputs
    # over the whole rows (the exps) and the epilogue's (log and the root),
    # and with the root alone, written into the bias; the rows contiguous,
    # or (transposed) a row length apart (the tiles form).
    rows = shape[:-1] + (1,)
    axes = ((len(shape) - 1,), True)
    f = dtype
    inputs = ((shape, f, "S" if transposed else "C"), (rows, f, "C"))
    body = (Instruction(P["max"], axes, (0,), rows, f), Instruction(P["subtract"], (), (0, 2), shape, f),
            Instruction(P["exp"], (), (3,), shape, f), Instruction(P["sum"], axes, (4,), rows, f),
            Instruction(P["log"], (), (5,), rows, f), Instruction(P["add"], (), (2, 6), rows, f),
            Instruction(P["multiply"], (), (7, 1), rows, f))
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(shape) * 4).astype(dtype.dtype)
    flat = x.reshape(-1, shape[-1])
    if len(flat) > 3:
        flat[0, -1], flat[1, 0], flat[2, :], flat[3, 0] = np.nan, np.inf, -np.inf, -np.inf
    bias = rng.uniform(1, 2, rows).astype(dtype.dtype)
    # The row sums accumulate in another order (float32 in float64): their
    # few roundings become log's absolute error, besides exp's and log's ulps.
    eps = np.finfo(dtype.dtype).eps
    group = FusedGroup(shape, inputs, body, (4, 6, 8))
    assert group.epilogue == ({6, 7, 8} if shape[-1] > 1 else set())
    if transposed and len(shape) > 1:
        x = _transposed(x)
    got, want = run_both(group, [x, bias])
    assert [g.shape for g in got] == [shape, rows, rows]
    assert_matches(got[0], want[0], ULPS, "exp")
    for g, w in zip(got[1:], want[1:]):
        np.testing.assert_allclose(g, w, rtol=16 * eps, atol=16 * eps)
    got, want = run_both(FusedGroup(shape, inputs, body, (8,)), [x, bias], into=1)
    np.testing.assert_allclose(got[0], want[0], rtol=16 * eps, atol=16 * eps)


@pytest.mark.skipif(launch.launcher() is None, reason="no launcher here (no Python headers)")
def test_the_launchers_layout_key_holds_each_arrays_axes_shape_and_strides():
    grid = np.zeros((3, 4, 5), np.float32)
    views = [grid, grid[::2, 1:, ::-1].T, grid[1, :, 2], np.ones(()), grid.reshape(12, 5), grid[:, :1, :]]
    keys = [launch.layout_key()(v) for v in views]
    for view, key in zip(views, keys):
        assert key == np.array([view.ndim, *view.shape, *view.strides], np.longlong).tobytes()
    assert len(set(keys)) == len(views)
    assert launch.layout_key()(*views) == b"".join(keys)
    with pytest.raises(TypeError, match="layout_key: expected NumPy arrays, got"):
        launch.layout_key()(grid, np.float32(1.0))


def test_a_plan_rebound_to_other_extents_runs_the_same_kernel():
    group = _chain_group([((10,), "C"), ((10,), "C")], (10,))
    runner = NativeGroup(group)
    runner([np.ones(10, np.float32), np.ones(10, np.float32)], wait=True)
    compiled = compiler.counts["compiled"]
    x = np.linspace(0, 1, 7).astype(np.float32)
    got = runner([x, x], wait=True)
    assert compiler.counts["compiled"] == compiled
    np.testing.assert_allclose(got[1], (x + x) * x - np.exp(x), rtol=1e-6)
    assert got[0].shape == (7,)


# --- the paths, seen and controlled -----------------------------------------

def _softmax(v, m=xp):
    e = m.exp(v - m.max(v, axis=-1, keepdims=True))
    return e / m.sum(e, axis=-1, keepdims=True)


@pytest.fixture
def fresh_kernels(tmp_path, monkeypatch):
    """An empty disk cache and no kernel loaded, compiled or failed in this process."""
    from arrayx._cpu import fused
    from arrayx.scheduler import schedule
    monkeypatch.setenv("ARRAYX_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiler, "_loaded", {})
    monkeypatch.setattr(compiler, "_failed", {})
    monkeypatch.setattr(compiler, "_logged", set())
    monkeypatch.setattr(compiler, "_unscanned", None)
    fused._kernels.clear()
    schedule.clear_plan_cache()
    yield tmp_path
    compiler.wait_for_compiles()
    fused._kernels.clear()
    schedule.clear_plan_cache()


def _paths(fn):
    """The executor paths (StepRun.ran_by) of the steps `fn()` runs."""
    with xp.debug.profile() as p:
        fn()
    return [s.ran_by for s in p.steps]


def test_the_profile_and_the_log_say_which_path_ran_a_group(capsys):
    x = xp.asarray(np.random.default_rng(5).standard_normal((64, 100)).astype(np.float32))
    with xp.debug.cpu_kernels("native"):
        assert _paths(lambda: xp.eval(_softmax(x))) == ["cpu (native)"]
        xp.debug.set_log_level(2)
        try:
            xp.eval(_softmax(x))
        finally:
            xp.debug.set_log_level(0)
        assert "by cpu (native)" in capsys.readouterr().err
    with xp.debug.cpu_kernels("numpy"):
        assert _paths(lambda: xp.eval(_softmax(x))) == ["cpu (numpy)"]


def test_the_forced_native_path_runs_lone_elementwise_steps_and_reductions_natively():
    x = xp.asarray(np.linspace(-1, 1, 50))
    with xp.debug.cpu_kernels("native"):
        assert _paths(lambda: xp.eval(xp.sin(x))) == ["cpu (native)"]
        assert _paths(lambda: xp.eval(xp.sum(x))) == ["cpu (native)"]
        np.testing.assert_allclose(np.asarray(xp.sin(x)), np.sin(np.linspace(-1, 1, 50)), rtol=1e-15)


@pytest.mark.parametrize("mode", ["auto", "native", "numpy"])
def test_no_path_lets_numpys_floating_point_warnings_out(mode, fresh_kernels):
    # A program of native-first groups does not set NumPy's error state: the
    # group's NumPy path (before its kernel is ready, or always) sets it.
    values = np.array([0.0, -1.0, 1e308, np.inf, -np.inf, np.nan, 2.0], np.float64)
    x = xp.asarray(values)
    chain = xp.jit(lambda a: xp.log(a) * 2.0 - a / 0.0 + xp.exp(a * 1e10))
    with np.errstate(all="ignore"):
        want = np.log(values) * 2.0 - values / 0.0 + np.exp(values * 1e10)
    with xp.debug.cpu_kernels(mode), warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(runner.HOT_CALLS + 2):
            results = [chain(x), xp.log(x) * 2.0 - x / 0.0 + xp.exp(x * 1e10)]
            for got in results:
                np.testing.assert_array_equal(np.asarray(got), want)
            compiler.wait_for_compiles()


def test_the_auto_path_compiles_a_group_once_it_is_hot_and_runs_numpy_until_then(fresh_kernels):
    x = xp.asarray(np.random.default_rng(6).standard_normal((32, 48)).astype(np.float32))
    with xp.debug.cpu_kernels("auto"):
        before = [_paths(lambda: xp.eval(_softmax(x))) for _ in range(runner.HOT_CALLS - 1)]
        compiler.wait_for_compiles()
        assert not list(fresh_kernels.glob("native/*.so"))   # a group run a few times on small arrays: no compile
        hot = _paths(lambda: xp.eval(_softmax(x)))           # asks for its kernel, runs on NumPy meanwhile
        compiler.wait_for_compiles()
        after = _paths(lambda: xp.eval(_softmax(x)))
        np.testing.assert_allclose(np.asarray(_softmax(x)), _softmax(np.asarray(x), np), rtol=1e-6)
    assert before == [["cpu (numpy)"]] * (runner.HOT_CALLS - 1) and hot == ["cpu (numpy)"]
    assert after == ["cpu (native)"] and list(fresh_kernels.glob("native/*.so"))


def test_the_auto_path_compiles_a_large_group_at_its_first_call(fresh_kernels):
    x = xp.asarray(np.linspace(0, 1, runner.HOT_POINTS))
    with xp.debug.cpu_kernels("auto"):
        assert _paths(lambda: xp.eval(xp.exp(x) * 2.0 + x)) == ["cpu (numpy)"]
        compiler.wait_for_compiles()
        assert _paths(lambda: xp.eval(xp.exp(x) * 2.0 + x)) == ["cpu (native)"]


def test_a_second_process_finds_every_kernel_on_disk(tmp_path):
    script = ("import numpy as np, arrayx as xp\n"
              "from arrayx._cpu.native import compiler\n"
              "x = xp.asarray(np.linspace(0, 1, 1000))\n"
              "xp.eval(xp.tanh(x * 2.0 + 1.0) * x)\n"
              "print(compiler.counts['compiled'], compiler.counts['disk_hits'])\n")
    env = dict(os.environ, ARRAYX_CACHE_DIR=str(tmp_path), ARRAYX_CPU_KERNELS="native")
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
            for _ in range(2)]
    (compiled_1, _), (compiled_2, hits_2) = [map(int, r.stdout.split()) for r in runs]
    assert compiled_1 >= 1 and compiled_2 == 0 and hits_2 >= 1


def test_without_a_compiler_groups_run_on_numpy_with_one_log_line(fresh_kernels, monkeypatch, caplog):
    monkeypatch.setenv("CXX", str(fresh_kernels / "no-such-compiler"))
    x = xp.asarray(np.random.default_rng(7).standard_normal((16, 20)))
    with caplog.at_level(logging.WARNING, logger="arrayx.native"), xp.debug.cpu_kernels("auto"):
        for _ in range(2 * runner.HOT_CALLS):
            assert _paths(lambda: xp.eval(_softmax(x))) == ["cpu (numpy)"]
    assert [r.getMessage() for r in caplog.records if r.name == "arrayx.native"] == [
        "native CPU kernels are off: no C++ compiler (g++, or $CXX) on the PATH; fused groups run on NumPy"]
    with xp.debug.cpu_kernels("native"), pytest.raises(RuntimeError, match="no C\\+\\+ compiler"):
        xp.eval(_softmax(x))


def test_groups_waiting_for_a_kernel_or_without_a_compiler_search_the_path_once(fresh_kernels, monkeypatch):
    # A group asks for its kernel at every call until it has one; where there
    # is no compiler it asks forever. A PATH search (tens of microseconds)
    # at each of those calls made small loops several times slower.
    searches = []
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda *args, **kwargs: searches.append(args) or real_which(*args, **kwargs))
    monkeypatch.setenv("PATH", os.environ["PATH"] + os.pathsep + str(fresh_kernels))   # a PATH not searched yet
    monkeypatch.setenv("CXX", "no-such-compiler")
    x = xp.asarray(np.random.default_rng(7).standard_normal((16, 20)))
    with xp.debug.cpu_kernels("auto"):
        for _ in range(4 * runner.HOT_CALLS):
            xp.eval(_softmax(x))
    assert searches == [("no-such-compiler",)]


def test_a_failed_compile_runs_the_group_on_numpy_with_one_log_line(fresh_kernels, monkeypatch, caplog):
    monkeypatch.setattr(codegen, "source", lambda group, form: "this is not C++;")
    x = xp.asarray(np.random.default_rng(8).standard_normal((16, 20)))
    with caplog.at_level(logging.WARNING, logger="arrayx.native"), xp.debug.cpu_kernels("auto"):
        for _ in range(2 * runner.HOT_CALLS):
            xp.eval(_softmax(x))
            compiler.wait_for_compiles()
        np.testing.assert_allclose(np.asarray(_softmax(x)), _softmax(np.asarray(x), np), rtol=1e-12)
    messages = [r.getMessage() for r in caplog.records if r.name == "arrayx.native"]
    assert len(messages) == 1 and "failed to build" in messages[0]
    with xp.debug.cpu_kernels("native"), pytest.raises(RuntimeError, match="failed to build"):
        xp.eval(_softmax(x))


def test_an_unknown_path_in_the_environment_is_refused_at_import():
    env = dict(os.environ, ARRAYX_CPU_KERNELS="fast")
    run = subprocess.run([sys.executable, "-c", "import arrayx"], env=env, capture_output=True, text=True)
    assert run.returncode != 0 and "ARRAYX_CPU_KERNELS='fast': expected one of auto, native, numpy" in run.stderr


def test_the_disk_cache_keeps_its_most_recently_used_kernels_within_its_bound(fresh_kernels, monkeypatch):
    x = xp.asarray(np.linspace(0, 1, 100))
    with xp.debug.cpu_kernels("native"):
        xp.eval(xp.exp(x) * 2.0 + x)
        first = list(fresh_kernels.glob("native/*.so"))
        monkeypatch.setattr(compiler, "DISK_BYTES", int(first[0].stat().st_size * 1.5))
        xp.eval(xp.log1p(x) * 3.0 - x)
    kept = list(fresh_kernels.glob("native/*.so"))
    assert len(kept) == 1 and kept[0] not in first


def test_the_disk_cache_is_scanned_at_a_processs_first_build_not_at_every_build(fresh_kernels, monkeypatch):
    # A scan stats every library in the cache (90 ms for a full one).
    scans = []
    scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda directory: (scans.append(directory), scandir(directory))[1])
    x = xp.asarray(np.linspace(0, 1, 100))
    with xp.debug.cpu_kernels("native"):
        xp.eval(xp.exp(x) * 2.0 + x)
        xp.eval(xp.log1p(x) * 3.0 - x)
    assert len(scans) == 1
    assert len(list(fresh_kernels.glob("native/*.so"))) == 2


@pytest.mark.parametrize("when", ["as it is found", "before it loads"])
def test_a_kernel_another_process_drops_from_the_disk_cache_is_built_again(when, fresh_kernels, monkeypatch):
    # Processes sharing a cache each keep it within its bound, so one may
    # drop a library another has just found there.
    shape = (5, 40)
    text = codegen.source(_chain_group([(shape, "C"), (shape, "C")], shape),
                          codegen.Form("elementwise", (points.CONTIGUOUS, points.CONTIGUOUS)))
    libraries = ("-lmvec",) if compiler.libmvec() else ()
    path, built = compiler._build(text, compiler.flags()[len(compiler.FLAGS):], libraries)
    assert built   # on disk, and never loaded in this process
    dropped = []

    def drop(path):
        if not dropped:
            dropped.append(path)
            os.remove(path)

    if when == "as it is found":
        utime = os.utime
        monkeypatch.setattr(os, "utime", lambda path, *args, **kwargs: (drop(path), utime(path, *args, **kwargs))[1])
    else:
        kernel = compiler.Kernel
        monkeypatch.setattr(compiler, "Kernel", lambda path: (drop(path), kernel(path))[1])
    compiled = compiler.counts["compiled"]
    found = compiler._load(text)
    assert dropped == [path] and compiler.counts["compiled"] == compiled + 1
    assert found.path == path and os.path.exists(path)


@pytest.mark.skipif(shutil.which("readelf") is None, reason="no readelf")
def test_a_kernel_library_needs_only_the_c_runtime(fresh_kernels):
    # Linked without g++'s default libstdc++ (a slower link); float16 casts take libgcc's conversions.
    x = xp.asarray(np.linspace(0, 1, 100, dtype=np.float16))
    with xp.debug.cpu_kernels("native"):
        got = xp.eval(xp.exp(x) * 2.0 + x)
    np.testing.assert_allclose(np.asarray(got), np.exp(np.asarray(x)) * 2 + np.asarray(x), rtol=2e-3)
    libraries = list(fresh_kernels.glob("native/*.so"))
    assert libraries
    for library in libraries:
        dynamic = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True, check=True).stdout
        needed = {line.split("[")[1].split("]")[0] for line in dynamic.splitlines() if "(NEEDED)" in line}
        assert needed <= {"libmvec.so.1", "libm.so.6", "libc.so.6"}


def test_a_group_of_strided_inputs_reads_the_strides_of_each_calls_buffers():
    # A dask chunk may be any view of its array: its groups declare their inputs strided.
    a = np.random.default_rng(9).uniform(-1, 1, (30, 40))
    group = _chain_group([(a.shape, "S"), (a.shape, "S")], a.shape, dt.float64)
    runner = NativeGroup(group)
    runner([a, a], wait=True)
    view = np.ascontiguousarray(a.T).T   # a's values, column-major
    got = runner([view, a], wait=True)
    np.testing.assert_array_equal(got[0], a + a)
    # exp within a few ulp, then a subtraction that may cancel: float64 rounding of the operands.
    np.testing.assert_allclose(got[1], (a + a) * a - np.exp(a), rtol=1e-14, atol=1e-14)


def test_a_jitted_call_binds_lazy_strided_and_numpy_arguments_and_gives_the_plain_values(monkeypatch):
    # A jitted call binds an arrayx argument's buffer as it is; the group's
    # kernel lays out each call by its array inputs' shapes and strides, so a
    # view after a contiguous array (and back) must not reuse the other's
    # layout. Exact: multiplies and adds round as NumPy's (no contraction).
    monkeypatch.setattr(native, "mode", "native")
    f = xp.jit(lambda a, b: 2.5 * a + 1.5 * b + 0.5)
    host = np.random.default_rng(0).uniform(-2, 2, (1000, 4)).astype(np.float32)
    table = xp.asarray(host)
    cases = [
        (xp.asarray(host[:, 0].copy()), xp.asarray(host[:, 1].copy()), host[:, 0], host[:, 1]),
        (table[:, 1], table[:, 2], host[:, 1], host[:, 2]),                          # strided views
        (xp.asarray(host[:, 0].copy()) * 1.0, table[:, 3], host[:, 0], host[:, 3]),  # lazy, strided
        (host[:, 2], xp.asarray(host[:, 3].copy()), host[:, 2], host[:, 3]),         # NumPy, contiguous
        (table[:, 1], table[:, 2], host[:, 1], host[:, 2]),
    ]
    for a, b, ha, hb in cases:
        np.testing.assert_array_equal(np.asarray(f(a, b)), 2.5 * ha + 1.5 * hb + 0.5)
