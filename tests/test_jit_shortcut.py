"""A jitted function's shortcut: a call on arrays like those of an earlier
call whose computation ran as one native kernel call runs in the launcher's
`shortcut`, with no Python around the kernel. Every test checks the values
against NumPy and, through a count of the calls that took the Python path
(`_Compiled.call`), which path ran."""

import threading

import numpy as np
import pytest

import arrayx as xp
from arrayx import debug
from arrayx._cpu.native import compiler as native_compiler
from arrayx.autodiff import grad, gradients
from arrayx.graph.node import retain_history
from arrayx.transformers import jit as jit_module

pytestmark = pytest.mark.skipif(native_compiler.available() is not None,
                                reason=f"native CPU kernels: {native_compiler.available()}")

# The kernel's tanh and exp come from the vector math library: within a few
# units in the last place of NumPy's (test_native checks each function's).
RTOL = 1e-6


@pytest.fixture
def python_path(monkeypatch):
    """The calls that took the Python path, counted, with kernels compiled
    at a group's first call."""
    calls = []
    call = jit_module._Compiled.call

    def counted(self, leaves):
        calls.append(self)
        return call(self, leaves)

    monkeypatch.setattr(jit_module._Compiled, "call", counted)
    with debug.cpu_kernels("native"):
        yield calls


def operands(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0.5, 2.0, n).astype(np.float32), rng.uniform(0.5, 2.0, n).astype(np.float32)


def chain(m, x, y):
    return m.tanh(x * y + x / y) * 0.5 + x * x


def warmed(fn, *args):
    """`xp.jit(fn)`, called until its shortcut is made."""
    jitted = xp.jit(fn)
    for _ in range(3):
        jitted(*args)
    return jitted


def test_calls_after_the_kernel_loaded_run_without_python_and_give_numpy_values(python_path):
    a, b = operands()
    f = warmed(lambda x, y: chain(xp, x, y), xp.asarray(a), xp.asarray(b))
    python_path.clear()
    for seed in range(1, 4):
        a, b = operands(seed=seed)
        got = f(xp.asarray(a), xp.asarray(b))
        np.testing.assert_allclose(np.asarray(got), chain(np, a, b), rtol=RTOL)
    assert python_path == []


def test_each_call_returns_a_new_array_and_counts_its_step(python_path):
    a, b = operands()
    x, y = xp.asarray(a), xp.asarray(b)
    f = warmed(lambda x, y: x * y + 1.0, x, y)
    python_path.clear()
    debug.reset()
    first = f(x, y)
    second = f(y, x)
    third = f(x, xp.eval(x + 0.0))
    np.testing.assert_array_equal(np.asarray(first), a * b + np.float32(1.0))   # not overwritten by later calls
    np.testing.assert_array_equal(np.asarray(second), b * a + np.float32(1.0))
    np.testing.assert_array_equal(np.asarray(third), a * a + np.float32(1.0))
    assert not np.shares_memory(np.asarray(first), np.asarray(second))
    assert python_path == [] and debug.counters["steps_run"] == 4   # eval ran x + 0.0


def test_several_results_in_a_pytree_come_from_one_kernel_call(python_path):
    def f(x, y):
        total = x + y   # a chain whose every value is returned: one group exporting each
        scaled = total * y
        return {"sum": total, "pair": (scaled, xp.exp(scaled))}

    a, b = operands()
    jitted = warmed(f, xp.asarray(a), xp.asarray(b))
    python_path.clear()
    debug.reset()
    a, b = operands(seed=5)
    got = jitted(xp.asarray(a), xp.asarray(b))
    np.testing.assert_array_equal(np.asarray(got["sum"]), a + b)
    np.testing.assert_array_equal(np.asarray(got["pair"][0]), (a + b) * b)
    np.testing.assert_allclose(np.asarray(got["pair"][1]), np.exp((a + b) * b), rtol=RTOL)
    assert python_path == [] and debug.counters["steps_run"] == 1


def test_a_reduction_over_rows_and_a_call_past_the_gil_release_size_take_the_shortcut(python_path):
    rows = np.random.default_rng(1).standard_normal((40, 600)).astype(np.float32)   # 24000 points: GIL released
    f = warmed(lambda x: xp.sum(xp.exp(x - 1.0), axis=1), xp.asarray(rows))
    python_path.clear()
    rows = rows[::-1].copy()
    np.testing.assert_allclose(np.asarray(f(xp.asarray(rows))), np.exp(rows - 1.0).sum(axis=1), rtol=1e-5)
    assert python_path == []


def test_calls_the_shortcut_was_not_made_for_take_the_python_path_and_give_numpy_values(python_path):
    a, b = operands()
    x, y = xp.asarray(a), xp.asarray(b)
    f = warmed(lambda x, y: chain(xp, x, y), x, y)
    python_path.clear()
    wide = np.concatenate([a, b]).reshape(2, -1).T.copy()   # a strided view of the same shape and dtype
    strided = xp.asarray(wide)[:, 0]
    np.testing.assert_allclose(np.asarray(f(strided, y)), chain(np, a, b), rtol=RTOL)
    lazy = x * 1.0                                           # not computed yet
    np.testing.assert_allclose(np.asarray(f(lazy, y)), chain(np, a, b), rtol=RTOL)
    np.testing.assert_allclose(np.asarray(f(x, x)), chain(np, a, a), rtol=RTOL)   # one array passed twice
    np.testing.assert_allclose(np.asarray(f(a, b)), chain(np, a, b), rtol=RTOL)   # NumPy arguments
    np.testing.assert_allclose(np.asarray(f(x, y=y)), chain(np, a, b), rtol=RTOL)
    assert len(python_path) == 5
    shorter = operands(500)
    np.testing.assert_allclose(np.asarray(f(*map(xp.asarray, shorter))), chain(np, *shorter), rtol=RTOL)


def test_a_new_signature_gets_its_own_shortcut_and_the_first_keeps_working(python_path):
    long_, short = operands(), operands(300, seed=2)
    f = warmed(lambda x, y: x - y * 2.0, *map(xp.asarray, long_))
    for _ in range(3):
        f(*map(xp.asarray, short))
    python_path.clear()
    for a, b in (long_, short, long_):
        np.testing.assert_array_equal(np.asarray(f(xp.asarray(a), xp.asarray(b))), a - b * np.float32(2.0))
    assert python_path == []


def test_eager_mode_runs_the_function_as_python_after_a_shortcut_was_made(python_path):
    traced = []

    def f(x, y):
        traced.append(1)
        return x * y

    a, b = operands()
    jitted = warmed(f, xp.asarray(a), xp.asarray(b))
    before = len(traced)
    with debug.eager():
        np.testing.assert_array_equal(np.asarray(jitted(xp.asarray(a), xp.asarray(b))), a * b)
    assert len(traced) == before + 1


def test_a_gradient_through_a_jitted_function_sees_its_work_after_a_shortcut_was_made(python_path):
    a, b = operands(8)
    f = warmed(lambda x, y: x * y + x, xp.asarray(a), xp.asarray(b))
    g = grad(lambda x: xp.sum(f(x, xp.asarray(b))))(xp.asarray(a))
    np.testing.assert_allclose(np.asarray(g), b + 1.0, rtol=1e-6)   # d/dx sum(x*y + x)
    x, y = xp.asarray(a), xp.asarray(b)   # computed arrays, as the shortcut takes them
    with retain_history():
        out = f(x, y)
    (g,) = gradients(xp.sum(out), [x])
    np.testing.assert_allclose(np.asarray(g), b + 1.0, rtol=1e-6)


def test_a_profile_and_the_numpy_path_see_calls_after_a_shortcut_was_made(python_path):
    a, b = operands()
    x, y = xp.asarray(a), xp.asarray(b)
    f = warmed(lambda x, y: x * y - 1.0, x, y)
    python_path.clear()
    with debug.profile() as profile:
        f(x, y)
    assert len(python_path) == 1 and [s.path for s in profile.steps] == ["native"]
    with debug.cpu_kernels("numpy"):
        np.testing.assert_array_equal(np.asarray(f(x, y)), a * b - np.float32(1.0))
    assert len(python_path) == 2
    with debug.cpu_kernels("auto"):   # the kernel made in the forced native mode serves the default mode too
        np.testing.assert_array_equal(np.asarray(f(x, y)), a * b - np.float32(1.0))
    assert len(python_path) == 2


def random_program(rng):
    """A random function of (x, y): elementwise work, ending at times in a
    reduction along the last axis (kept or dropped)."""
    unary = ["xp.tanh({})", "xp.exp({} * 0.1)", "xp.sin({})", "xp.abs({})", "xp.sqrt(xp.abs({}))", "-{}"]
    binary = ["{} + {}", "{} - {}", "{} * {}", "{} / ({} * {} + 1.0)", "xp.where({} > {}, {}, 0.5)",
              "xp.maximum({}, {})"]
    values = ["x", "y"]
    lines = []
    for k in range(rng.integers(2, 7)):
        if rng.random() < 0.4:
            expression = unary[rng.integers(len(unary))].format(values[rng.integers(len(values))])
        else:
            template = binary[rng.integers(len(binary))]
            picked = [values[rng.integers(len(values))] for _ in range(template.count("{}"))]
            expression = template.format(*picked)
        lines.append(f"    v{k} = {expression}")
        values.append(f"v{k}")
    result = values[-1]
    ending = rng.integers(4)
    if ending == 1:
        result = f"xp.sum({result}, axis=-1)"
    elif ending == 2:
        result = f"xp.max({result}, axis=-1, keepdims=True)"
    source = "\n".join(["def program(x, y):", *lines, f"    return {result}"])
    names = {"xp": xp}
    exec(source, names)
    return names["program"], source


def test_random_programs_give_their_eager_values_through_the_shortcut(python_path):
    rng = np.random.default_rng(7)
    shortcut = 0
    for _ in range(16):
        program, source = random_program(rng)
        shape = [(1000,), (30, 40), (4, 5, 6)][rng.integers(3)]
        dtype = [np.float32, np.float64][rng.integers(2)]
        jitted = xp.jit(program)
        for call in range(4):
            x, y = (xp.asarray(rng.uniform(-2.0, 2.0, shape).astype(dtype)) for _ in range(2))
            before = len(python_path)
            got = jitted(x, y)
            # The eager run is the oracle: the same kernels but for the order
            # of a sum's additions and the vector math library's tanh, exp, sin.
            np.testing.assert_allclose(np.asarray(got), np.asarray(program(x, y)), rtol=2e-5, atol=1e-6,
                                       err_msg=source)
        shortcut += len(python_path) == before
    assert shortcut >= 8   # most of them are one group, which the shortcut runs


def test_calls_with_trees_or_static_arguments_keep_the_python_path(python_path):
    a, b = operands()
    x, y = xp.asarray(a), xp.asarray(b)
    pair = warmed(lambda p: p[0] * p[1], (x, y))
    with pytest.raises(TypeError):
        pair(x, y)   # two arrays where the function takes one pair: Python's error, as unjitted
    scaled = xp.jit(lambda v, k: v * k, static_argnums=1)
    for k in (2, 3, 2, 3, 2):
        np.testing.assert_array_equal(np.asarray(scaled(x, k)), a * np.float32(k))
    python_path.clear()
    np.testing.assert_array_equal(np.asarray(pair((x, y))), a * b)
    np.testing.assert_array_equal(np.asarray(scaled(x, 3)), a * np.float32(3))
    assert len(python_path) == 2


def test_threads_calling_one_jitted_function_each_get_their_own_values(python_path):
    # 20000 points: the kernel runs with the GIL released, so the threads' calls overlap.
    f = warmed(lambda x, y: chain(xp, x, y), *map(xp.asarray, operands(20000)))
    python_path.clear()
    inputs = [operands(20000, seed=seed) for seed in range(4)]
    failures = []

    def work(a, b):
        x, y = xp.asarray(a), xp.asarray(b)
        expected = chain(np, a, b)
        for _ in range(30):
            got = np.asarray(f(x, y))
            if not np.allclose(got, expected, rtol=RTOL):
                failures.append(np.abs(got - expected).max())

    threads = [threading.Thread(target=work, args=pair) for pair in inputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == [] and python_path == []


def test_integer_and_boolean_programs_give_numpy_values_through_the_shortcut(python_path):
    programs = [
        (lambda m, x, y: m.where(x > y, x * 3, y - x), "where(x > y, 3x, y - x)"),
        (lambda m, x, y: (x + y) % 7 - m.abs(x), "(x + y) % 7 - |x|"),
        (lambda m, x, y: (x > 0) & (y < 5), "(x > 0) & (y < 5)"),
        (lambda m, x, y: m.maximum(x, y) * 2 + (x >> 1), "max(x, y) * 2 + (x >> 1)"),
        (lambda m, x, y: x.astype(m.float32) * 0.5 + y.astype(m.float32), "float32(x) * 0.5 + float32(y)"),
        (lambda m, x, y: m.sum(x * y, axis=-1), "sum(x * y, axis=-1)"),
    ]
    rng = np.random.default_rng(11)
    for fn, text in programs:
        jitted = xp.jit(lambda x, y, fn=fn: fn(xp, x, y))
        for call in range(4):
            a, b = (rng.integers(-20, 20, (40, 25)).astype(np.int32) for _ in range(2))
            before = len(python_path)
            got = jitted(xp.asarray(a), xp.asarray(b))
            want = fn(np, a, b)
            assert np.asarray(got).dtype == want.dtype, text
            np.testing.assert_array_equal(np.asarray(got), want, err_msg=text)
        assert len(python_path) == before, text   # the last call took the shortcut


def test_a_lone_operation_on_a_few_points_takes_the_shortcut_on_the_default_path(python_path):
    # Outside a computation a lone node this small is an ordinary step (a
    # NumPy call); in one it is a group of its own, whose kernel the default
    # ("auto") path compiles once the group is hot, so its calls then run as
    # one kernel call.
    one = np.array([2.5])
    a, _ = operands()
    with debug.cpu_kernels("auto"):
        plus, total = xp.jit(lambda v: v + 1.0), xp.jit(lambda v: xp.sum(v))
        for _ in range(10):   # hot: their kernels compile in the background
            plus(xp.asarray(one))
            total(xp.asarray(a))
        debug.wait_for_kernels()
        for _ in range(40):   # the shortcut is asked for at calls 16 and 32
            plus(xp.asarray(one))
            total(xp.asarray(a))
        python_path.clear()
        np.testing.assert_array_equal(np.asarray(plus(xp.asarray(one))), one + 1.0)
        np.testing.assert_allclose(float(total(xp.asarray(a))), a.astype(np.float64).sum(), rtol=1e-6)
    assert python_path == []
