"""arrayx.jit: one trace and one compiled computation per signature."""

import weakref

import numpy as np
import pytest

import arrayx as xp
from arrayx import debug
from arrayx.autodiff import grad
from arrayx.scheduler import observe


def test_a_signature_is_traced_once_and_a_new_shape_traces_again():
    calls = []

    @xp.jit
    def f(x, y):
        calls.append(1)
        return xp.exp(x) * y + 1.0

    a, b = np.linspace(0, 1, 5), np.linspace(1, 2, 5)
    debug.reset()
    first = f(xp.asarray(a), xp.asarray(b))
    assert debug.counters["plans_built"] == 1
    second = f(xp.asarray(b), xp.asarray(a))
    assert debug.counters["plans_built"] == 1 and len(calls) == 1
    np.testing.assert_array_equal(np.asarray(first), np.exp(a) * b + 1.0)
    np.testing.assert_array_equal(np.asarray(second), np.exp(b) * a + 1.0)
    f(xp.asarray(np.ones(3)), xp.asarray(np.ones(3)))
    assert debug.counters["plans_built"] == 2 and len(calls) == 2
    f(np.ones(3), np.ones(3))           # NumPy arrays of that signature (dtype float64): traced again
    np.testing.assert_array_equal(np.asarray(f(np.zeros(3), np.ones(3))), np.full(3, 2.0))


def test_static_arguments_are_part_of_the_signature():
    @xp.jit
    def power(x, n):
        for _ in range(n - 1):
            x = x * x
        return x

    traced = xp.jit(power.__wrapped__, static_argnums=1)
    x = xp.asarray(np.array([2.0, 3.0]))
    np.testing.assert_array_equal(np.asarray(traced(x, 2)), [4.0, 9.0])
    np.testing.assert_array_equal(np.asarray(traced(x, 3)), [16.0, 81.0])
    # Without static_argnums the int is traced as a value: range() needs the number itself.
    with pytest.raises(TypeError, match=r"jit\(power\): a Python int computed from argument n is traced as a "
                                        r"value.*range\(\).*static_argnums"):
        power(x, 2)


def test_jit_of_grad_runs_a_compiled_gradient():
    def loss(w, x):
        return xp.sum(xp.tanh(x @ w) ** 2)

    w = xp.ones((3, 2)) / 3
    x = xp.reshape(xp.linspace(-1, 1, 12), (4, 3))
    fast = xp.jit(grad(loss))
    # Same graph and kernels as the uncompiled gradient; summation order inside
    # fused reductions may differ.
    np.testing.assert_allclose(np.asarray(fast(w, x)), np.asarray(grad(loss)(w, x)), rtol=1e-14)


def test_a_force_point_inside_the_traced_function_names_it():
    @xp.jit
    def scaled(x):
        return x / float(xp.max(x))

    with pytest.raises(TypeError, match=r"jit\(scaled\).*static_argnums"):
        scaled(xp.asarray(np.ones(3)))


def test_a_jitted_training_loop_matches_the_plain_loop():
    rng = np.random.default_rng(1)
    x = xp.asarray(rng.standard_normal((32, 4)))
    target = xp.asarray(rng.standard_normal((32, 1)))

    def loss(w, x, target):
        return xp.mean((x @ w - target) ** 2)

    step = xp.jit(lambda w, x, t: w - 0.1 * grad(loss)(w, x, t))
    w_fast = w_plain = xp.zeros((4, 1))
    for _ in range(200):
        w_fast = step(w_fast, x, target)
        w_plain = w_plain - 0.1 * grad(loss)(w_plain, x, target)
    np.testing.assert_allclose(np.asarray(w_fast), np.asarray(w_plain), rtol=1e-12)
    np.testing.assert_allclose(float(loss(w_fast, x, target)), float(loss(w_plain, x, target)), rtol=1e-12)


# jit like eager (issue 43): keyword arguments, writes into arguments, Python
# scalar arguments, traces of any depth. The oracle is the same function
# called without jit.

def _fresh(*values):
    return [xp.asarray(np.array(v)) for v in values]


def test_keyword_arguments_and_trees_by_keyword_are_part_of_the_signature():
    calls = []

    @xp.jit
    def scale(x, factor=2.0, *, params):
        calls.append(1)
        return x * factor + params["b"]

    x, b = xp.asarray([1.0, 2.0]), xp.asarray([0.5, 0.5])
    np.testing.assert_array_equal(np.asarray(scale(x, factor=3.0, params={"b": b})), [3.5, 6.5])
    np.testing.assert_array_equal(np.asarray(scale(x, factor=4.0, params={"b": b})), [4.5, 8.5])
    assert len(calls) == 1                                   # a new float value: the same trace
    np.testing.assert_array_equal(np.asarray(scale(x, params={"b": b})), [2.5, 4.5])   # the default, a constant
    np.testing.assert_array_equal(np.asarray(scale(x, 3.0, params={"b": b})), [3.5, 6.5])
    assert len(calls) == 3                                   # by keyword, by position, left out: three signatures


def test_static_argnames_and_static_argnums_name_the_same_parameter():
    calls = []

    def power(x, n):
        calls.append(n)
        for _ in range(n - 1):
            x = x * x
        return x

    by_name, by_position = xp.jit(power, static_argnames="n"), xp.jit(power, static_argnums=1)
    x = xp.asarray([2.0, 3.0])
    for fast in (by_name, by_position):
        np.testing.assert_array_equal(np.asarray(fast(x, 2)), [4.0, 9.0])
        np.testing.assert_array_equal(np.asarray(fast(x, n=3)), [16.0, 81.0])
    assert calls == [2, 3, 2, 3]
    with pytest.raises(ValueError, match=r"jit\(power\): static_argnames names 'm', which is not a parameter"):
        xp.jit(power, static_argnames="m")


@pytest.mark.parametrize("write", [
    "v[0] = 10.0", "v += 1", "v[:] = 0.0", "v[v > 1.5] = 0.0", "v[1:3] = w[0:2]", "v *= s",
    "v[xp.asarray([0, 2])] = s"])
def test_a_write_into_an_argument_reaches_the_caller_as_eagerly(write):
    source = f"def prog(v, w, s):\n    before = v * 1.0\n    {write}\n    return before, v + w\n"
    namespace = {"xp": xp}
    exec(source, namespace)
    prog = namespace["prog"]
    fast = xp.jit(prog)
    for s in (0.5, -2.0):   # the second call runs the same trace
        v, w = _fresh([1.0, 2.0, 3.0, 4.0], [1.0, 1.0, 1.0, 1.0])
        v_eager, w_eager = _fresh([1.0, 2.0, 3.0, 4.0], [1.0, 1.0, 1.0, 1.0])
        results, expected = fast(v, w, s), prog(v_eager, w_eager, s)
        for got, want in zip(results + (v, w), expected + (v_eager, w_eager)):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_a_function_that_only_writes_into_its_arguments_returns_none():
    def step(params, grads, lr):
        for name in params:
            params[name] -= lr * grads[name]

    fast = xp.jit(step)
    params = {"w": xp.ones((2, 2)), "b": xp.zeros(2)}
    grads = {"w": xp.full((2, 2), 2.0), "b": xp.ones(2)}
    assert fast(params, grads, 0.25) is None
    assert fast(params, grads, 0.25) is None
    np.testing.assert_array_equal(np.asarray(params["w"]), np.zeros((2, 2)))
    np.testing.assert_array_equal(np.asarray(params["b"]), [-0.5, -0.5])


def test_an_update_of_an_argument_nobody_else_holds_is_written_into_its_buffer():
    @xp.jit
    def clear_ends(v):
        v[0] = 0.0
        v[-1] = 0.0
        return xp.sum(v)

    v = xp.asarray(np.arange(100_000.0))
    clear_ends(v)
    buffer = weakref.ref(v._node.buffer)   # (a strong reference would be a holder: v would be copied)
    with debug.profile() as p:
        total = clear_ends(v)
    assert v._node.buffer is buffer()       # the same memory: updated in place, not copied
    assert [s.in_place for s in p.steps if s.name == "update_slice"] == [True, True]
    assert float(total) == np.arange(100_000.0)[1:-1].sum()
    # An array computed from v's old value keeps it: then the call copies.
    old = v + 0.0
    v[1] = 5.0
    clear_ends(v)
    assert v._node.buffer is not buffer()
    np.testing.assert_array_equal(np.asarray(old)[:3], [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(v)[:3], [0.0, 5.0, 2.0])


def test_a_call_that_can_fail_on_values_never_writes_into_the_caller_s_buffer():
    @xp.jit
    def update_then_gather(v, rows, s):
        v[0] = s
        return xp.take(v, rows)

    v = xp.asarray(np.arange(5.0))
    update_then_gather(v, xp.asarray([0, 1]), 9.0)
    before = weakref.ref(v._node.buffer)
    with pytest.raises(IndexError, match="take: index 7 is out of bounds"):
        update_then_gather(v, xp.asarray([0, 7]), -1.0)
    assert v._node.buffer is before()                  # the caller's value, untouched by the failed call
    np.testing.assert_array_equal(np.asarray(v), [9.0, 1.0, 2.0, 3.0, 4.0])


def test_an_interrupted_call_leaves_a_donated_argument_as_far_as_it_was_written():
    class Interrupt:   # an observer stopping the run after the first update, as Ctrl-C would
        def step_ran(self, run):
            if run.name == "update_slice":
                raise KeyboardInterrupt

        def force_point_ran(self, force_point):
            pass

    @xp.jit
    def two_updates(v):
        v[0] = 7.0
        v[1] = 8.0
        return v * 2.0

    v = xp.asarray(np.zeros(4))
    two_updates(v)
    observe.install(Interrupt())
    try:
        with pytest.raises(KeyboardInterrupt):
            two_updates(v)
    finally:
        observe.observers = ()
    np.testing.assert_array_equal(np.asarray(v), [7.0, 8.0, 0.0, 0.0])   # the first update of the second call


def test_an_array_passed_twice_sees_a_write_through_either_name():
    def prog(a, b):
        a[0] = 5.0
        return b * 1.0

    fast = xp.jit(prog)
    a = xp.zeros(3)
    np.testing.assert_array_equal(np.asarray(fast(a, a)), [5.0, 0.0, 0.0])
    a, b = xp.zeros(3), xp.zeros(3)
    np.testing.assert_array_equal(np.asarray(fast(a, b)), [0.0, 0.0, 0.0])   # another signature: traced again
    np.testing.assert_array_equal(np.asarray(a), [5.0, 0.0, 0.0])


def test_a_numpy_argument_written_into_is_written_and_a_read_only_one_refused():
    fast = xp.jit(lambda v: v.__setitem__(0, 1.0))
    host = np.zeros(3)
    fast(host)
    np.testing.assert_array_equal(host, [1.0, 0.0, 0.0])
    host.flags.writeable = False
    with pytest.raises(ValueError, match=r"jit\(<lambda>\): the function writes into argument v, a read-only"):
        fast(host)


def test_python_scalar_arguments_are_traced_once_per_kind_and_keep_eager_dtypes():
    calls = []

    def prog(x, s):
        calls.append(1)
        return x * s, x + (s * 0.5 - 1), xp.asarray(s), s * 2

    fast = xp.jit(prog)
    x32 = xp.asarray(np.array([1.0, 2.0], dtype=np.float32))
    for s in (2.0, 3.5, -1e-3, 2, 7, True, 1 + 2j, np.float64(0.25)):
        got, want = fast(x32, s), prog(x32, s)
        for g, w in zip(got[:3], want[:3]):
            assert g.dtype == w.dtype, s
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
        assert type(got[3]) is type(want[3]) and got[3] == want[3]   # a returned scalar as eagerly
    assert len(calls) == 8 + 5   # eager calls, then a trace per kind: float, int, bool, complex, NumPy float64
    x8 = xp.asarray(np.array([1, 2], dtype=np.int8))
    with pytest.raises(OverflowError, match=r"jit\(prog\): argument s: Python int 300 is out of bounds for int8"):
        fast(x8, 300)


@pytest.mark.parametrize("use, construct", [
    (lambda x, n: x * len(range(n)), r"an index, a shape, a count or an axis \(range\(\)"),
    (lambda x, n: x if n > 0 else -x, r"a Python bool computed from argument n .* a condition"),
    (lambda x, n: x / float(n), r"converted by float\(\)"),
    (lambda x, n: xp.full(3, n) * x, r"full: fill_value .* got TracedScalar \(jit\(<lambda>\) traces Python scalar"),
])
def test_a_scalar_argument_used_as_a_number_names_the_argument(use, construct):
    with pytest.raises(TypeError, match=construct):
        xp.jit(use)(xp.ones(3), 2)
    np.testing.assert_array_equal(np.asarray(xp.jit(use, static_argnums=1)(xp.ones(3), 2)), np.asarray(use(xp.ones(3), 2)))


def test_a_force_point_inside_the_trace_names_the_line_and_the_argument():
    def normalized(x, y):
        scale = float(xp.max(y))
        return x / scale

    with pytest.raises(TypeError, match=r"jit\(normalized\): at test_jit\.py:\d+, in normalized, a force point .* "
                                        r"needs the value of argument y"):
        xp.jit(normalized)(xp.ones(3), xp.ones(3))


SCALE = 2.0
WEIGHTS = xp.ones(3)


def test_a_global_or_closure_value_read_by_the_function_is_read_again_when_it_changes():
    calls = []

    @xp.jit
    def weighted(x):
        calls.append(1)
        return x * WEIGHTS * SCALE

    def expected():
        return np.asarray(x) * np.asarray(WEIGHTS) * SCALE

    global SCALE, WEIGHTS
    x = xp.asarray([1.0, 2.0, 3.0])
    for change in (lambda: None, lambda: WEIGHTS.__setitem__(0, 5.0)):
        change()
        np.testing.assert_array_equal(np.asarray(weighted(x)), expected())
    WEIGHTS = xp.full(3, 3.0)
    np.testing.assert_array_equal(np.asarray(weighted(x)), expected())
    SCALE = 0.5
    np.testing.assert_array_equal(np.asarray(weighted(x)), expected())
    np.testing.assert_array_equal(np.asarray(weighted(x)), expected())
    assert len(calls) == 4   # traced again after each change, not at the unchanged calls
    SCALE, WEIGHTS = 2.0, xp.ones(3)

    bias = xp.ones(2)
    add_bias = xp.jit(lambda v: v + bias)
    np.testing.assert_array_equal(np.asarray(add_bias(xp.zeros(2))), [1.0, 1.0])
    bias = bias * 3.0
    np.testing.assert_array_equal(np.asarray(add_bias(xp.zeros(2))), [3.0, 3.0])


def test_writes_jit_cannot_carry_back_are_refused_and_leave_the_caller_s_values():
    captured = xp.zeros(2)

    def writes_captured(x):
        captured[0] = 1.0
        return x

    with pytest.raises(TypeError, match=r"jit\(writes_captured\): the function writes into captured, an array it "
                                        r"captures"):
        xp.jit(writes_captured)(xp.ones(2))
    np.testing.assert_array_equal(np.asarray(captured), [0.0, 0.0])

    def replaces_an_item(params):
        params["w"] = params["w"] + 1.0
        return params["w"]

    params = {"w": xp.ones(2)}
    with pytest.raises(TypeError, match=r"jit\(replaces_an_item\): the function changes argument params"):
        xp.jit(replaces_an_item)(params)
    np.testing.assert_array_equal(np.asarray(params["w"]), [1.0, 1.0])


@pytest.mark.parametrize("steps", [2100])
def test_a_trace_deeper_than_the_automatic_realization_depth_compiles(steps):
    def chain(v):
        for _ in range(steps):
            v = v * 0.999 + 0.001
        return v

    def loss(v):
        return xp.sum(chain(v) ** 2)

    x = xp.asarray(np.linspace(0.0, 1.0, 5))
    debug.reset()
    np.testing.assert_allclose(np.asarray(xp.jit(chain)(x)), np.asarray(chain(x)), rtol=1e-13)
    # Reordered sums in fused gradient kernels: a few ulps.
    np.testing.assert_allclose(np.asarray(xp.jit(grad(loss))(x)), np.asarray(grad(loss)(x)), rtol=1e-12)


def test_grad_of_a_jitted_function_and_a_jitted_function_called_in_a_trace_record_their_calls():
    inner = xp.jit(lambda v: xp.sin(v) * v)
    x = xp.asarray([0.5, 1.0])
    expected = np.sin([0.5, 1.0]) + np.array([0.5, 1.0]) * np.cos([0.5, 1.0])
    np.testing.assert_allclose(np.asarray(grad(lambda v: xp.sum(inner(v)))(x)), expected, rtol=1e-15)
    outer = xp.jit(lambda v: inner(v) + 1.0)
    np.testing.assert_allclose(np.asarray(outer(x)), np.sin([0.5, 1.0]) * [0.5, 1.0] + 1.0, rtol=1e-15)


def test_a_jitted_function_on_a_gpu_writes_into_its_argument_as_eagerly(gpu):
    def prog(v, s, *, w):
        v[0] = s
        v += w
        return v * s

    fast = xp.jit(prog)
    for s in (2.0, -0.5):
        v, w = xp.asarray(np.arange(4.0), device=gpu), xp.asarray(np.ones(4), device=gpu)
        v_eager = xp.asarray(np.arange(4.0), device=gpu)
        got, want = fast(v, s, w=w), prog(v_eager, s, w=w)
        assert got.device == gpu and v.device == gpu
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        np.testing.assert_array_equal(np.asarray(v), np.asarray(v_eager))
