"""The fusion pass and the CPU executor's fused groups.

Which nodes form which group is checked through `arrayx.debug.fused_groups`.
Fused results are checked against unfused execution of the same graph (each
node forced on its own, so every plan holds one node): bit-identical for
elementwise work, within a stated tolerance for reductions, whose blocks sum in
another order. Small block sizes (the `path` fixture's "blocks") run the
blocked, threaded path on arrays small enough for a unit test; its "native"
runs every group (and every lone step) through its compiled kernel, whose
math functions round within glibc's error rather than as NumPy's loops do
(test_native.py checks every primitive's ulps): there the random programs use
the operations IEEE arithmetic rounds exactly, and values from math functions
are compared within ulps.
"""

import threading
from concurrent.futures import Future

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import arrayx as xp
from arrayx import debug
from arrayx._cpu import fused, kernels, workers
from arrayx._cpu.native import compiler as native_compiler
from arrayx._cpu.executor import CPUExecutor
from arrayx.scheduler import schedule

# The CPU executor's fused groups: their blocks, threads and kernel counts.
pytestmark = pytest.mark.usefixtures("cpu_as_default_device")


@pytest.fixture(autouse=True)
def fresh_state():
    schedule.clear_plan_cache()
    debug.reset()


@pytest.fixture(params=["whole arrays", "blocks", "native"])
def path(request, monkeypatch):
    """Run groups as whole-array NumPy calls, in blocks of 512 bytes over
    threads, or through their native kernels (compiled at first use)."""
    if request.param == "native":
        if native_compiler.available() is not None:
            pytest.skip(f"native CPU kernels: {native_compiler.available()}")
        with debug.cpu_kernels("native"):
            yield request.param
        return
    if request.param == "blocks":
        # Kernels built for whole arrays (another path's test of the same group) would run whole arrays.
        monkeypatch.setattr(fused, "_kernels", {})
        monkeypatch.setattr(fused, "BLOCK_BYTES", 512)
        monkeypatch.setattr(fused, "BLOCKED_MIN_BYTES", 256)
        monkeypatch.setattr(fused, "BLOCKS_PER_THREAD", 2)
    yield request.param


def ops(group):
    return [i.op.name for i in group.body]


def unfused(build, *arrays):
    """`build(*arrays)` evaluated with every node a step of its own."""
    with debug.unfused():
        return xp.eval(build(*arrays))


def assert_agrees(a, b, path, ulps=8):
    """Identical on the NumPy paths, but for which NaN a point holds where
    both have one. Which NaN an operation on two NaNs keeps (an add of -nan
    and nan) is left open by IEEE 754 and the standard: x86 keeps the first
    operand's, and whether NumPy's SIMD body or its scalar tail, whose
    operands the compiler may swap, computes a point depends on where a
    block starts. On the native path: NaNs in the same places, zeros of the
    same sign, and other values within `ulps` units in the last place of
    `b`: 8 for math functions (glibc's and NumPy's are each within 4 of the
    correct result), 0 for exactly rounded arithmetic."""
    a, b = np.asarray(a), np.asarray(b)
    if path != "native":
        if a.dtype == b.dtype and a.shape == b.shape and b.dtype.kind in "fc":
            both = np.isnan(a) & np.isnan(b)
            a = np.where(both, b, a)
        assert_identical(a, b)
        return
    assert a.dtype == b.dtype and a.shape == b.shape
    if b.dtype.kind not in "fc":
        np.testing.assert_array_equal(a, b)
        return
    for x, y in ((a.real, b.real), (a.imag, b.imag)) if b.dtype.kind == "c" else ((a, b),):
        np.testing.assert_array_equal(np.isnan(x), np.isnan(y))
        np.testing.assert_array_equal(np.signbit(x[~np.isnan(x)]), np.signbit(y[~np.isnan(y)]))
        finite = np.isfinite(y)
        np.testing.assert_array_equal(x[~finite & ~np.isnan(y)], y[~finite & ~np.isnan(y)])
        far = np.abs(x[finite] - y[finite]) > ulps * np.spacing(np.abs(y[finite]))
        assert not far.any(), (x[finite][far][:5], y[finite][far][:5])


def assert_identical(a, b):
    """Same dtype, shape and bits (NaNs with the same sign and payload, zeros
    with the same sign)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    # Compared as bytes with assert_array_equal: pytest's report of a failing
    # bytes equality ran for minutes on large arrays.
    np.testing.assert_array_equal(np.ascontiguousarray(a).reshape(-1).view(np.uint8),
                                  np.ascontiguousarray(b).reshape(-1).view(np.uint8))


# Fusion decisions


def test_an_elementwise_chain_is_one_group():
    x = xp.asarray(np.linspace(-2, 2, 10, dtype=np.float32))
    y = 1.0 / (1.0 + xp.exp(-x))
    groups = debug.fused_groups(y)
    assert [ops(g) for g in groups] == [["negative", "exp", "add", "divide"]]
    assert len(groups[0].outputs) == 1
    xp.eval(y)
    assert debug.counters["steps_run"] == 1


def test_operands_of_one_user_join_its_group():
    x = xp.asarray(np.linspace(1, 2, 10))
    y = xp.asarray(np.linspace(2, 3, 10))
    out = xp.tanh(x * y + x / y)
    groups = debug.fused_groups(out)
    assert len(groups) == 1
    assert sorted(ops(groups[0])) == sorted(["multiply", "divide", "add", "tanh"])
    assert len(groups[0].inputs) == 2


def test_a_group_ends_in_its_reduction():
    x = xp.asarray(np.linspace(1, 2, 12).reshape(3, 4))
    total = xp.sum(x * x + 1.0, axis=1)
    groups = debug.fused_groups(total)
    assert [ops(g) for g in groups] == [["multiply", "add", "sum"]]
    assert groups[0].shape == (3, 4) and groups[0].body[-1].shape == (3,)


def test_row_softmax_is_one_group_with_row_reductions(path):
    a = np.random.default_rng(6).standard_normal((60, 50))
    a[3, :] = -np.inf                       # a row of -inf gives NaN, as unfused
    a[4, 7] = np.inf
    x = xp.asarray(a)
    e = xp.exp(x - xp.max(x, axis=1, keepdims=True))
    out = e / xp.sum(e, axis=1, keepdims=True)
    groups = debug.fused_groups(out)
    assert [ops(g) for g in groups] == [["max", "subtract", "exp", "sum", "divide"]]
    assert groups[0].row_axes == (1,)
    with np.errstate(all="ignore"):
        assert_agrees(out, _softmax(a), path)   # rows stay whole in a block: the same sums


def test_a_value_used_by_two_groups_is_computed_once():
    # exp(t) and sin(t) feed reductions over different axes, each the root
    # of a group of its own: t is computed once, by a step of its own.
    a = np.linspace(-1, 1, 12).reshape(3, 4)
    x = xp.asarray(a)
    t = x * 2.0
    rows, columns = xp.sum(xp.exp(t), axis=1), xp.sum(xp.sin(t), axis=0)
    names = sorted(tuple(ops(g)) for g in debug.fused_groups(rows, columns))
    assert names == [("exp", "sum"), ("sin", "sum")]   # the multiply is a step of its own
    xp.eval(rows, columns)
    assert debug.counters["steps_run"] == 3
    assert_identical(rows, np.exp(a * 2.0).sum(axis=1))
    assert_identical(columns, np.sin(a * 2.0).sum(axis=0))


def _logsumexp(m, v, axis):
    top = m.max(v, axis=axis, keepdims=True)
    return top + m.log(m.sum(m.exp(v - top), axis=axis, keepdims=True))


# (shape, row axes): one leading axis, several, none (a vector), rows over
# two axes, and rows of one element (where the kept shape is the group's).
LOGSUMEXP_SHAPES = [((60, 50), (1,)), ((3, 4, 33), (2,)), ((40,), (0,)), ((3, 4, 5, 6), (2, 3)), ((7, 1), (1,))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axes", LOGSUMEXP_SHAPES)
def test_row_logsumexp_is_one_group_ending_in_an_epilogue(path, dtype, shape, axes):
    a = np.random.default_rng(7).standard_normal(shape).astype(dtype) * 4
    rows = a.reshape(-1, np.prod([shape[d] for d in axes]))
    if len(rows) > 3:
        rows[0, -1] = np.nan                 # the row's max and result are NaN
        rows[1, 0] = np.inf                  # inf - inf in the sum: NaN, as NumPy's formula gives
        rows[2, :] = -np.inf                 # -inf - -inf: NaN
        rows[3, 0] = -np.inf                 # one -inf among finite values: it adds exp(-inf) = 0
    x = xp.asarray(a)
    out = _logsumexp(xp, x, axes)
    groups = debug.fused_groups(out)
    assert [ops(g) for g in groups] == [["max", "subtract", "exp", "sum", "log", "add"]]
    assert groups[0].row_axes == axes and groups[0].shape == shape
    kept = tuple(1 if d in axes else n for d, n in enumerate(shape))
    assert {groups[0].body[v - 1].shape for v in groups[0].epilogue} <= {kept}
    with np.errstate(all="ignore"):
        expected = _logsumexp(np, a, axes)
        xp.eval(out)
        assert debug.counters["steps_run"] == 1
        if path == "native":
            # The sum of exps accumulates in another order (float32 in float64): its few roundings become
            # log's absolute error, besides the ulps of exp and log.
            eps = np.finfo(dtype).eps
            np.testing.assert_allclose(np.asarray(out), expected, rtol=16 * eps, atol=16 * eps)
            assert np.asarray(out).dtype == dtype and np.asarray(out).shape == kept
        else:
            assert_identical(out, expected)   # rows stay whole in a block: the same sums


def test_a_rows_group_with_an_epilogue_exports_values_of_both_shapes(path):
    # The softmax's numerators (over whole rows), log of the row sums and
    # logsumexp (once per row, the epilogue), all from one pass.
    a = np.random.default_rng(8).standard_normal((50, 40))
    bias = np.random.default_rng(9).standard_normal((50, 1))
    x, b = xp.asarray(a), xp.asarray(bias)
    top = xp.max(x, axis=1, keepdims=True)
    e = xp.exp(x - top)
    log_sum = xp.log(xp.sum(e, axis=1, keepdims=True))
    out = (top + log_sum) * b                # reads an input of the kept shape
    groups = debug.fused_groups(e, log_sum, out)
    assert len(groups) == 1 and len(groups[0].outputs) == 3
    xp.eval(e, log_sum, out)
    assert debug.counters["steps_run"] == 1
    e_np = np.exp(a - a.max(axis=1, keepdims=True))
    log_sum_np = np.log(e_np.sum(axis=1, keepdims=True))
    assert_agrees(e, e_np, path)
    if path == "native":
        np.testing.assert_allclose(np.asarray(out), (a.max(axis=1, keepdims=True) + log_sum_np) * bias, rtol=1e-14)
        np.testing.assert_allclose(np.asarray(log_sum), log_sum_np, rtol=1e-14)
    else:
        assert_identical(log_sum, log_sum_np)
        assert_identical(out, (a.max(axis=1, keepdims=True) + log_sum_np) * bias)


def test_an_epilogue_of_a_lone_row_reduction_stays_apart_so_rows_may_be_cut(path):
    # Nothing over the whole rows reads the sum: the group ending in it needs
    # no whole rows, and the log runs after it, as before epilogues.
    a = np.random.default_rng(10).standard_normal((60, 50))
    x = xp.asarray(a)
    out = xp.log(xp.sum(xp.exp(x), axis=1, keepdims=True)) * 2.0
    groups = debug.fused_groups(out)
    assert [ops(g) for g in groups] == [["exp", "sum"], ["log", "multiply"]] and groups[0].row_axes == ()
    expected = np.log(np.exp(a).sum(axis=1, keepdims=True)) * 2.0
    if path == "native":
        np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-14)   # sums in another order
    else:
        assert_identical(out, expected)


def test_a_reduction_over_an_epilogue_stays_a_group_of_its_own():
    # The users of the row sum end in a whole-array sum: they stay a group
    # over the rows' results, not an epilogue.
    a = np.linspace(-1, 1, 12).reshape(3, 4)
    x = xp.asarray(a)
    total = xp.sum(xp.log(xp.sum(xp.exp(x), axis=1, keepdims=True)) * 2.0)
    names = [tuple(ops(g)) for g in debug.fused_groups(total)]
    assert names == [("exp", "sum"), ("log", "multiply", "sum")]
    np.testing.assert_allclose(float(total), np.sum(np.log(np.exp(a).sum(axis=1)) * 2.0), rtol=1e-15)
def _softmax(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_an_intermediate_asked_for_is_an_extra_output():
    a = np.linspace(0, 1, 10)
    x = xp.asarray(a)
    h = x * 2.0
    out = xp.exp(h) + 1.0
    groups = debug.fused_groups(h, out)
    assert len(groups) == 1 and len(groups[0].outputs) == 2
    xp.eval(h, out)
    assert debug.counters["steps_run"] == 1
    assert_identical(h, a * 2.0)
    assert_identical(out, np.exp(a * 2.0) + 1.0)


def test_operands_of_another_shape_are_inputs_not_members():
    col = xp.asarray(np.linspace(0, 1, 3).reshape(3, 1))
    row = xp.asarray(np.linspace(1, 2, 4))
    out = xp.sin(col * 2.0) + xp.cos(row)        # sin(col*2) is (3, 1), cos(row) is (4,)
    groups = debug.fused_groups(out)
    # the small (3, 1) and (4,) chains stay single steps or small groups of their own shape
    assert all(g.shape in {(3, 4), (3, 1), (4,)} for g in groups)
    root = [g for g in groups if g.shape == (3, 4)]
    assert not root   # one add over (3, 4) is a single node, not worth a group
    assert_identical(out, np.sin(np.linspace(0, 1, 3).reshape(3, 1) * 2.0) + np.cos(np.linspace(1, 2, 4)))


def test_a_large_single_operation_is_a_group_so_it_runs_in_blocks():
    x = xp.asarray(np.ones(1 << 17))
    assert [ops(g) for g in debug.fused_groups(xp.exp(x))] == [["exp"]]
    assert debug.fused_groups(xp.exp(xp.asarray(np.ones(100)))) == []


def test_plan_key_tells_contiguous_from_strided_and_broadcast_inputs():
    base = np.linspace(0, 1, 40)
    contiguous = xp.asarray(base[:20].copy())
    strided = xp.asarray(base)[::2]                       # a view of an evaluated buffer
    broadcast = xp.broadcast_to(xp.asarray(base[:1].copy()), (20,))
    layouts = []
    for x in (contiguous, strided, broadcast):
        group, = debug.fused_groups(xp.sin(x) * 2.0 + 1.0)
        layouts.append(group.inputs[0][2])
        assert_identical(xp.sin(x) * 2.0 + 1.0, np.sin(np.asarray(x)) * 2.0 + 1.0)
    assert layouts == ["C", "S", "B"]
    assert debug.counters["plans_built"] == 3


# Fused results against unfused execution

UNARY = {"float": ["exp", "sin", "tanh", "log1p", "sqrt", "negative", "floor", "expm1", "abs", "sign"],
         "int": ["negative", "abs", "square", "bitwise_invert"],
         "complex": ["exp", "tanh", "expm1", "sqrt", "negative", "conj"]}
BINARY = {"float": ["add", "multiply", "divide", "floor_divide", "remainder", "pow", "maximum", "atan2",
                    "copysign", "hypot", "logaddexp", "nextafter"],
          "int": ["add", "multiply", "floor_divide", "remainder", "pow", "maximum", "bitwise_xor",
                  "bitwise_left_shift"],
          "complex": ["add", "multiply", "divide", "pow", "subtract"]}
DTYPES = {"float32": "float", "float64": "float", "int32": "int", "int64": "int", "complex128": "complex"}

SPECIALS = {"float": [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.5, -3.5, 1e-300],
            "int": [0, 1, -1, 2, -7, 3, 5],
            "complex": [0j, complex(-0.0, 0.0), complex(np.inf, 1.0), complex(1.0, np.nan), 1 + 2j, -3 - 1j]}


def _data(dtype, n, seed):
    kind = DTYPES[dtype]
    rng = np.random.default_rng(seed)
    special = np.array(SPECIALS[kind] * (n // len(SPECIALS[kind]) + 1))[:n]
    if kind == "int":
        values = rng.integers(-50, 50, n)
        shifts = rng.integers(0, 5, n)
        return np.where(rng.random(n) < 0.3, special, values).astype(dtype), shifts.astype(dtype)
    values = rng.standard_normal(n) * 3
    if kind == "complex":
        values = values + 1j * rng.standard_normal(n)
    return np.where(rng.random(n) < 0.3, special, values).astype(dtype), None


programs = st.lists(st.tuples(st.integers(0, 100), st.integers(0, 100), st.integers(0, 3)), min_size=2, max_size=8)


def _operands(dtype):
    a, shifts = _data(dtype, 1000, 0)
    b, _ = _data(dtype, 1000, 1)
    b = b[::-1].copy()
    if shifts is not None:
        b = np.where(b == 0, 3, b).astype(dtype)   # integer division by zero is unspecified
    return a, b, shifts


# Operations whose results IEEE arithmetic rounds exactly (no math library).
EXACT = frozenset({"negative", "floor", "abs", "sign", "square", "bitwise_invert", "conj", "sqrt", "add",
                   "multiply", "divide", "floor_divide", "remainder", "maximum", "copysign", "nextafter",
                   "bitwise_xor", "bitwise_left_shift", "subtract"})


def _run_program(kind, program, x, y, shifts, exact=False):
    """Every value of `program` applied to x and y, the operands first; with
    `exact`, only the operations of EXACT (and integer pow)."""
    unary = [n for n in UNARY[kind] if not exact or n in EXACT]
    binary = [n for n in BINARY[kind] if not exact or n in EXACT or (n == "pow" and kind == "int")]
    if exact and kind == "complex":
        # A complex multiply or divide rounds each product: NumPy's AVX-512 loops fuse some into FMAs.
        binary = ["add", "subtract"]
    values = [x, y]
    for pick, op, arity in program:
        v = values[pick % len(values)]
        if arity:
            name = binary[op % len(binary)]
            w = values[(pick + arity) % len(values)]
            if name in ("bitwise_left_shift", "pow") and kind == "int":
                w = xp.asarray(shifts)
            if name == "copysign":
                # IEEE 754 leaves the sign of a NaN that arithmetic made open
                # (nan * -1.0 is nan or -nan by whether NumPy's SIMD body, its
                # scalar tail or g++'s code made it); copysign would carry it
                # into a 1.0 or -1.0. Its NaN signs are given here.
                w = xp.where(xp.isnan(w), xp.abs(w), w)
            v = getattr(xp, name)(v, w)
        else:
            v = getattr(xp, unary[op % len(unary)])(v)
        values.append(v)
    return values


@pytest.mark.parametrize("dtype", list(DTYPES))
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])   # `path` only sets block sizes
@given(program=programs)
def test_fused_elementwise_is_bit_identical_to_unfused(dtype, program, path):
    a, b, shifts = _operands(dtype)

    def build(x, y):
        return _run_program(DTYPES[dtype], program, x, y, shifts, exact=path == "native")[-1]

    with np.errstate(all="ignore"):
        expected = unfused(build, xp.asarray(a), xp.asarray(b))
        got = build(xp.asarray(a), xp.asarray(b))
    assert_agrees(got, expected, path, ulps=0)


@pytest.mark.parametrize("dtype", ["float64", "int32", "complex128"])
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=50)
@given(program=programs)
def test_values_forced_together_match_unfused(dtype, program, path):
    # Every other value and the last one are outputs of the group; in blocks
    # the values between them may live in the output block of a value
    # exported later, which must clobber neither.
    a, b, shifts = _operands(dtype)
    kind = DTYPES[dtype]
    exact = path == "native"
    with np.errstate(all="ignore"):
        with debug.unfused():
            expected = [np.asarray(v) for v in _run_program(kind, program, xp.asarray(a), xp.asarray(b), shifts,
                                                            exact)]
        got = _run_program(kind, program, xp.asarray(a), xp.asarray(b), shifts, exact)
        xp.eval(*got[2::2], got[-1])
        for g, e in zip(got, expected):
            assert_agrees(g, e, path, ulps=0)



@pytest.mark.parametrize("dtype", ["float32", "float64"])
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=40)
@given(before=programs, after=programs)
def test_random_row_groups_ending_in_an_epilogue_match_unfused(dtype, before, after, path):
    # The logsumexp pattern over random programs: a row maximum read by work
    # over the whole rows (a row minimum of v - top) and, with that minimum,
    # by random elementwise work over the kept shape (the group's epilogue).
    # Maxima and minima are exact in any order, so every path agrees bit for
    # bit on exactly rounded operations (NaNs and infinities included).
    a, b, _ = _operands(dtype)
    exact = path == "native"

    def build(x, y):
        v = _run_program("float", before, x, y, None, exact)[-1]
        top = xp.max(v, axis=1, keepdims=True)
        low = xp.min(v - top, axis=1, keepdims=True)
        return _run_program("float", after, top, low, None, exact)[-1]

    x, y = xp.asarray(a.reshape(40, 25)), xp.asarray(b.reshape(40, 25))
    with np.errstate(all="ignore"):
        expected = unfused(build, x, y)
        got = build(x, y)
    assert_agrees(got, expected, path, ulps=0)

def test_a_value_lives_in_the_block_of_a_later_output(path):
    x = xp.asarray(np.linspace(0.5, 2.0, 1000))
    y = xp.asarray(np.linspace(2.0, 0.5, 1000))
    out = 2.5 * x + 1.5 * y + 0.5
    (group,) = debug.fused_groups(out)
    # 2.5 * x and their sum go into the output's block; only 1.5 * y needs a temporary.
    assert fused.FusedKernel(group).registers == [("w", 8), ("t", 0), ("w", 8), None]
    assert_identical(out, unfused(lambda x, y: 2.5 * x + 1.5 * y + 0.5, x, y))


def test_broadcast_operands_strided_views_and_where_match_unfused(path):
    rng = np.random.default_rng(3)
    grid = rng.standard_normal((40, 50))
    col = rng.standard_normal((40, 1))
    row = rng.standard_normal(50).astype(np.float32)

    def build(g, c, r):
        t = xp.exp(g[:, ::2]) * c - xp.astype(r[::2], xp.float64)   # a strided view, an astype
        return xp.where(t > 0, xp.sqrt(t), -t) + 0.5

    args = (xp.asarray(grid), xp.asarray(col), xp.asarray(row))
    assert len(debug.fused_groups(build(*args))) == 1
    assert_agrees(build(*args), unfused(build, *args), path)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "any", "all"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), -1])
def test_fused_reductions_match_unfused(name, axis, path):
    a = np.random.default_rng(4).uniform(0.5, 1.5, (6, 30, 20))

    def build(x):
        v = xp.exp(x * 0.1) + 0.25
        if name in ("any", "all"):
            v = v > 1.4
        return getattr(xp, name)(v, axis=axis)

    x = xp.asarray(a)
    assert ops(debug.fused_groups(build(x))[0])[-1] == name
    got, expected = np.asarray(build(x)), np.asarray(unfused(build, x))
    if name in ("sum", "prod"):
        # Blocks reduce in another order than one pairwise pass: relative
        # error of positive terms stays within a few ulps per block combined.
        np.testing.assert_allclose(got, expected, rtol=1e-13)
    else:
        assert_agrees(got, expected, path)   # extrema and logic do not round


def test_reduction_special_cases_survive_blocking(path):
    zeros = xp.asarray(np.full(3000, -0.0))
    total = float(xp.sum(zeros * 1.0))
    assert total == 0.0 and not np.signbit(total)            # NumPy's sum starts from +0.0 too
    with_nan = np.linspace(0, 1, 3000)
    with_nan[1234] = np.nan
    assert np.isnan(float(xp.max(xp.asarray(with_nan) * 2.0)))
    assert np.isnan(float(xp.sum(xp.asarray(with_nan) * 2.0)))
    ints = np.arange(-1500, 1500)
    assert int(xp.max(xp.asarray(ints) * 3)) == 4497 and int(xp.min(xp.asarray(ints) * 3)) == -4500


def test_mean_var_std_and_norm_fuse_and_match_numpy(path):
    a = np.random.default_rng(5).uniform(-1, 1, (50, 60))
    x = xp.asarray(a)
    # tolerance: blocked summation order (see test_fused_reductions_match_unfused)
    np.testing.assert_allclose(float(xp.mean(x * 2.0)), np.mean(a * 2.0), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(xp.var(x, axis=0)), np.var(a, axis=0), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(xp.std(x + 1.0, axis=1)), np.std(a + 1.0, axis=1), rtol=1e-12)
    np.testing.assert_allclose(float(xp.linalg.vector_norm(x * 3.0)), np.linalg.norm(a * 3.0), rtol=1e-12)



@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "any", "all"])
@pytest.mark.parametrize("shape", [(3001, 20), (1000, 3, 7), (2, 500, 4)])
def test_reductions_over_leading_axes_of_narrow_arrays_match_numpy(name, shape, path):
    # Column reductions of tall, narrow arrays fold rows into wide ones
    # (rows % fold left over included); 3001 rows is no multiple of any fold.
    a = np.random.default_rng(8).uniform(0.9, 1.1, shape)
    axes = (0,) if len(shape) == 2 or shape[0] == 2 else (0, 1)
    x = xp.asarray(a)

    def build(x):
        v = x * 1.0
        return getattr(xp, name)(v > 1.0 if name in ("any", "all") else v, axis=axes)
    expected = getattr(np, name)(a > 1.0 if name in ("any", "all") else a, axis=axes)
    got = np.asarray(build(x))
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if name in ("sum", "prod"):
        # Folded rows combine in another order than NumPy's row after row:
        # ~1e-16 relative per operation over at most 3001 terms near 1.
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    else:
        assert_identical(got, expected)   # extrema and logic do not round


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(1, 700), width=st.integers(1, 300), keepdims=st.booleans(),
       dtype=st.sampled_from([np.float64, np.float32, np.int32, np.bool_]))
def test_folded_reduce_is_ufunc_reduce(rows, width, keepdims, dtype):
    a = (np.arange(rows * width) % 7).astype(dtype).reshape(rows, width)
    accumulator = {np.float64: np.float64, np.float32: np.float32}.get(dtype, np.int64)
    expected = np.add.reduce(a, (0,), accumulator, None, keepdims)
    got = kernels.reduce(np.add, a, (0,), accumulator, None, keepdims)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)   # small integers: exact in any order
    out = np.empty(expected.shape, accumulator)
    assert kernels.reduce(np.add, a, (0,), accumulator, out, keepdims) is out
    np.testing.assert_array_equal(out, expected)


def test_rows_fold_only_where_a_reduction_keeps_a_narrow_tail():
    assert kernels.folded_rows((5000, 20), (0,)) == kernels.FOLD_WIDTH // 20
    assert kernels.folded_rows((5000, 20), (1,)) == 1          # a row reduction: rows are long already
    assert kernels.folded_rows((5000, 20), (0, 1)) == 1        # everything: NumPy's pairwise sum
    assert kernels.folded_rows((5000, 1000), (0,)) == 1        # wide rows
    assert kernels.folded_rows((10, 20), (0,)) == 1            # too few rows to fold twice

def test_threads_forcing_fused_groups_get_their_own_values(path):
    data = [np.linspace(i, i + 1, 2000) for i in range(8)]
    results = [None] * 8

    def work(i):
        for _ in range(20):
            x = xp.asarray(data[i])
            results[i] = np.asarray(xp.sum(xp.exp(x * 0.5) * 2.0, axis=0)), np.asarray(xp.tanh(x) + x)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, (total, chain) in enumerate(results):
        np.testing.assert_allclose(total, np.sum(np.exp(data[i] * 0.5) * 2.0), rtol=1e-13)
        assert_agrees(chain, np.tanh(data[i]) + data[i], path)


def test_blocks_tile_the_iteration_space():
    for shape in [(1000,), (3, 7, 11), (2, 1, 300), (0, 5), (5, 0), (1,), (500, 3)]:
        seen = np.zeros(shape, int)
        for index in fused.blocks(shape, 200):
            assert seen[index].size <= 200
            seen[index] += 1
        assert (seen == 1).all()


def test_one_dimensional_blocks_start_at_multiples_of_the_grain():
    starts = [index[0].start for index in fused.blocks((10_000,), 1000)]
    assert starts == list(range(0, 10_000, 960))   # 1000 points, rounded down to 15 grains


def test_nan_pairs_in_blocks_get_the_nan_of_a_whole_array_call(monkeypatch):
    # NumPy's remainder loop may pick the other NaN of two than its vector
    # loop: a block edge inside a vector would change which one an element gets.
    monkeypatch.setattr(fused, "BLOCK_BYTES", 4000)
    monkeypatch.setattr(fused, "BLOCKED_MIN_BYTES", 256)
    rng = np.random.default_rng(5)
    nans = np.array([np.nan, np.copysign(np.nan, -1), 1.0], np.float32)
    a, b = nans[rng.integers(0, 3, 10_001)], nans[rng.integers(0, 3, 10_001)]

    def build(x, y):
        return xp.exp(x) + y * 2.0

    x, y = xp.asarray(a), xp.asarray(b)
    assert_identical(build(x, y), unfused(build, x, y))


@pytest.mark.parametrize("threads", [2, 3])
def test_the_blocks_are_cut_into_even_pieces_that_tile_the_group(threads, monkeypatch):
    monkeypatch.setattr(workers, "THREADS", threads)
    monkeypatch.setattr(fused, "BLOCK_BYTES", 8192)   # 1024 float64 points
    monkeypatch.setattr(fused, "BLOCKED_MIN_BYTES", 256)
    x = xp.asarray(np.linspace(-1, 1, 20_000))
    (group,) = debug.fused_groups(xp.sin(x) * 2.0 + x)
    points, pieces, _ = fused.FusedKernel(group)._tiling()
    lengths = [sum(t[1][0] for t in piece) for piece in pieces]
    assert len(pieces) == threads * fused.PIECES_PER_THREAD and sum(lengths) == 20_000
    assert max(lengths) - min(lengths) <= fused.GRAIN
    seen = np.zeros(20_000, int)
    for piece in pieces:
        for index, _, _ in piece:
            assert index[0].start % fused.GRAIN == 0
            seen[index] += 1
    assert (seen == 1).all()
    assert_identical(xp.sin(x) * 2.0 + x, np.sin(np.asarray(x)) * 2.0 + np.asarray(x))


class _IdlePool:
    """A thread pool whose workers never start (an OS that never schedules them)."""

    def __init__(self):
        self.submitted = []

    def submit(self, fn, *args):
        future = Future()
        self.submitted.append(future)
        return future


def test_pieces_a_worker_never_starts_are_computed_by_the_calling_thread(monkeypatch):
    monkeypatch.setattr(workers, "THREADS", 2)
    monkeypatch.setattr(workers, "WAKE_MARGIN", 0)   # wake workers at every call, however late they start
    monkeypatch.setattr(fused, "BLOCK_BYTES", 8192)
    monkeypatch.setattr(fused, "BLOCKED_MIN_BYTES", 256)
    a = np.random.default_rng(7).standard_normal((400, 60))
    x = xp.asarray(a)

    def build(x):   # an exported chain and a reduction across blocks (partials per piece)
        y = xp.exp(x) * 0.5
        return y, xp.sum(y * x, axis=0)
    threaded = xp.eval(*build(x))
    pool = _IdlePool()
    monkeypatch.setattr(workers, "thread_pool", lambda: pool)
    alone = xp.eval(*build(x))
    assert pool.submitted and all(f.cancelled() for f in pool.submitted)
    # The same pieces summed in the same order, whichever thread ran them: the same bits.
    for a_threaded, a_alone in zip(threaded, alone):
        assert_identical(a_alone, a_threaded)
    np.testing.assert_allclose(np.asarray(alone[1]), np.sum(np.exp(a) * 0.5 * a, axis=0), rtol=1e-13)


def test_groups_stop_growing_at_max_members(monkeypatch):
    from arrayx.scheduler import fuse
    monkeypatch.setattr(fuse, "MAX_MEMBERS", 8)
    a = np.linspace(0, 1, 10)
    y = x = xp.asarray(a)
    for _ in range(20):
        y = y * 0.5 + x
    assert all(len(g.body) <= 8 for g in debug.fused_groups(y))
    expected = a
    for _ in range(20):
        expected = expected * 0.5 + a
    assert_identical(y, expected)


def _blocked_sum(monkeypatch):
    """A group of 2 threads' pieces (a chain and a sum across blocks), and its input."""
    monkeypatch.setattr(workers, "THREADS", 2)
    monkeypatch.setattr(fused, "BLOCK_BYTES", 8192)
    monkeypatch.setattr(fused, "BLOCKED_MIN_BYTES", 256)
    a = np.random.default_rng(9).standard_normal((400, 60))
    return (lambda x: xp.sum(xp.exp(x) * 0.5 * x, axis=0)), a


def test_a_group_runs_alone_while_workers_start_later_than_its_last_call_took(monkeypatch):
    build, a = _blocked_sum(monkeypatch)
    x = xp.asarray(a)
    threaded = np.asarray(build(x))               # the first call wakes workers
    pool = _IdlePool()
    monkeypatch.setattr(workers, "thread_pool", lambda: pool)
    monkeypatch.setattr(workers, "_start_latency", 1e3)   # workers start a thousand seconds late
    alone = np.asarray(build(x))
    assert pool.submitted == []
    assert workers._start_latency < 1e3             # each call alone shrinks the estimate (a later call tries again)
    # The same pieces, summed in the same order on one thread: the same bits.
    assert_identical(alone, threaded)
    np.testing.assert_allclose(alone, np.sum(np.exp(a) * 0.5 * a, axis=0), rtol=1e-13)


def test_workers_wake_again_once_the_latency_estimate_has_decayed(monkeypatch):
    build, a = _blocked_sum(monkeypatch)
    x = xp.asarray(a)
    np.asarray(build(x))
    monkeypatch.setattr(workers, "_start_latency", 1e3)
    monkeypatch.setattr(workers, "LATENCY_DECAY", 0.5)   # 1e3 s halves below any call's time within ~60 calls
    pool = _IdlePool()
    monkeypatch.setattr(workers, "thread_pool", lambda: pool)
    calls = 0
    while not pool.submitted:
        calls += 1
        assert calls < 200, "workers never woke again"
        np.testing.assert_allclose(np.asarray(build(x)), np.sum(np.exp(a) * 0.5 * a, axis=0), rtol=1e-13)
    assert calls > 1


@pytest.mark.parametrize("name", ["argmin", "argmax"])
@pytest.mark.parametrize("axis, keepdims", [(1, False), (1, True), (0, False), (-1, True)])
def test_arg_reductions_end_a_group_and_match_unfused(name, axis, keepdims, path):
    # Ties and NaNs: positions must be NumPy's (first tie, first NaN) in every block.
    a = np.round(np.random.default_rng(10).standard_normal((300, 12)), 1)
    a[7, 3] = a[200, 5] = np.nan
    x, shift = xp.asarray(a), xp.asarray(np.linspace(0, 1, 12))

    def build(x, shift):
        return getattr(xp, name)(x * 2.0 - shift, axis=axis, keepdims=keepdims)

    (group,) = debug.fused_groups(build(x, shift))
    assert ops(group)[-1] == name and len(group.outputs) == 1   # the compared values stay inside the group
    assert_identical(build(x, shift), unfused(build, x, shift))
    assert_identical(build(x, shift), getattr(np, name)(a * 2.0 - np.linspace(0, 1, 12), axis=axis, keepdims=keepdims))


def test_an_arg_reduction_alone_or_where_the_executor_cannot_stays_a_step(monkeypatch):
    x = xp.asarray(np.random.default_rng(11).standard_normal((300, 300)))
    assert debug.fused_groups(xp.argmin(x, axis=1)) == []
    monkeypatch.setattr(CPUExecutor,
                        "fused_groups_end_in_arg_reductions", False)
    groups = debug.fused_groups(xp.argmin(x * 2.0, axis=1))
    assert all("argmin" not in ops(g) for g in groups)
    assert_identical(xp.argmin(x * 2.0, axis=1), np.argmin(np.asarray(x) * 2.0, axis=1))
