"""The lazy-graph contract: nothing runs before a force point, plans are cached,
deep graphs evaluate, realized nodes drop their inputs, mutation does not leak."""

import gc
import os
import subprocess
import sys
import weakref

import numpy as np
import pytest

import arrayx as xp
from arrayx import debug
from arrayx.scheduler.schedule import clear_plan_cache


@pytest.fixture(autouse=True)
def fresh_counters():
    debug.reset()


def test_building_a_graph_runs_no_step():
    x = xp.asarray(np.arange(10.0))
    y = xp.exp(x) * 2.0 + xp.sin(x)
    z = xp.sum(y, axis=0)
    assert (z.shape, z.dtype) == ((), xp.float64)
    assert debug.counters["steps_run"] == 0
    assert debug.counters["realizations"] == 0


@pytest.mark.parametrize("force", [bool, float, int, complex, repr, np.asarray, xp.eval])
def test_each_force_point_runs_the_plan(force):
    y = xp.sum(xp.asarray([1.0, 2.0]) * 3.0)
    force(y)
    assert debug.counters["realizations"] == 1
    assert float(y) == 9.0


@pytest.mark.parametrize("call, message", [
    (lambda: xp.eval(np.ones(3)),
     r"^eval: arrays\[0\] must be an arrayx array, got ndarray; convert it with xp\.asarray\(\.\.\.\)$"),
    (lambda: xp.eval(xp.ones(2), [1.0]),
     r"^eval: arrays\[1\] must be an arrayx array, got list; convert it with xp\.asarray\(\.\.\.\)$"),
    (lambda: xp.graph(np.ones(3)),
     r"^graph: x must be an arrayx array, got ndarray; convert it with xp\.asarray\(\.\.\.\)$"),
    (lambda: xp.graph(2.0), r"^graph: x must be an arrayx array, got float$"),
])
def test_eval_and_graph_of_a_non_array_raise_a_type_error_naming_the_function(call, message):
    with pytest.raises(TypeError, match=message):
        call()


def test_eval_of_a_non_array_forces_nothing():
    y = xp.ones(2) * 2.0
    with pytest.raises(TypeError):
        xp.eval(y, np.ones(3))
    assert debug.counters["realizations"] == 0


def test_rebuilt_graph_hits_the_plan_cache():
    data = np.linspace(0, 1, 100)
    results = []
    for i in range(5):
        x = xp.asarray(data)
        results.append(np.asarray(xp.tanh(x * 2.0 + 1.0) - x))
    assert debug.counters["plans_built"] <= 1  # 0 if an earlier test built the same structure
    assert debug.counters["plan_cache_hits"] + debug.counters["plans_built"] == 5
    # A device's tanh may differ from NumPy's in the last bits (docs/gpu.md: the
    # emulated device calls the C library's), within 4 ulp of values below 1,
    # absolute as the subtraction cancels.
    np.testing.assert_allclose(results[0], np.tanh(data * 2.0 + 1.0) - data, rtol=0, atol=4 * np.finfo(np.float64).eps)


def test_python_scalars_are_graph_constants_and_plans_do_not_multiply_with_their_values():
    data = np.linspace(0, 1, 50)
    x = xp.asarray(data)
    y = x * 123.25
    assert y._node.inputs[1].buffer is None   # building the node made no executor buffer
    results = [np.asarray(x * c + 1.0) for c in (0.5, 1.5, 2.5, -3.0, 123.25)]
    assert debug.counters["plans_built"] <= 1   # 0 if an earlier test built the same structure
    assert debug.counters["plan_cache_hits"] + debug.counters["plans_built"] == 5
    for got, c in zip(results, (0.5, 1.5, 2.5, -3.0, 123.25)):
        np.testing.assert_array_equal(got, data * c + 1.0)
    np.testing.assert_array_equal(np.asarray(y), data * 123.25)


def test_indexing_an_evaluated_array_is_a_view_taken_at_the_force_point_with_one_plan():
    data = np.arange(12.0).reshape(3, 4)
    x = xp.asarray(data)
    row = x[1]
    assert row._node.buffer is None   # the namespace takes no view: the scheduler does
    values = [float(x[i, j]) for i in range(3) for j in range(4)]
    assert values == data.ravel().tolist()
    assert debug.counters["steps_run"] == 0   # every element was a view, no step computed it
    assert debug.counters["plans_built"] <= 1
    np.testing.assert_array_equal(np.asarray(row), data[1])


def test_plan_cache_distinguishes_structure():
    clear_plan_cache()   # a plan of x * x from an earlier test would be a hit
    x = xp.asarray(np.ones(4))
    np.asarray(x + x)
    built = debug.counters["plans_built"]
    np.asarray(x + xp.asarray(np.ones(4)))  # two inputs instead of one: another plan
    np.asarray(xp.asarray(np.ones(5)) + xp.asarray(np.ones(5)))  # other shape: another plan
    assert debug.counters["plans_built"] - built >= 1
    np.asarray(x * x)
    assert debug.counters["plans_built"] - built >= 2


def test_same_primitives_in_another_arrangement_get_their_own_plan():
    # The plan key is one flat tuple; input positions must not run into the
    # next entry: each arrangement below has the same primitives, shapes and
    # inputs, so a shared key would run one graph's plan for another.
    from arrayx.scheduler.schedule import clear_plan_cache
    clear_plan_cache()
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(6) for _ in range(3))
    cases = [
        (lambda m, a, b, c: (a + b) * c, "(a + b) * c"),
        (lambda m, a, b, c: a + b * c, "a + b * c"),
        (lambda m, a, b, c: a * b + c, "a * b + c"),
        (lambda m, a, b, c: a * (b + c), "a * (b + c)"),
        (lambda m, a, b, c: m.concat([a, b + c]), "concat([a, b + c])"),
        (lambda m, a, b, c: m.concat([a + b, c]), "concat([a + b, c])"),
        (lambda m, a, b, c: m.concat([a, b, c])[:12] + 1.0, "concat([a, b, c])[:12] + 1"),
        (lambda m, a, b, c: m.concat([a, b])[:12] + 1.0, "concat([a, b])[:12] + 1"),
    ]
    xa, xb, xc = (xp.asarray(v) for v in (a, b, c))
    for fn, name in cases:
        np.testing.assert_array_equal(np.asarray(fn(xp, xa, xb, xc)), fn(np, a, b, c), err_msg=name)
    assert debug.counters["plans_built"] == len(cases)


def test_million_deep_chain_evaluates():
    x = xp.asarray(0.0)
    for _ in range(1_000_000):
        x = x + 1.0
    assert float(x) == 1_000_000.0
    assert debug.counters["auto_realizations"] > 0


def test_deep_unrealized_graph_is_realized_without_recursion():
    # Past the depth limit arrayx realizes by itself; the graph text view and
    # evaluation of what remains must not recurse either.
    x = xp.asarray(np.ones(3))
    for _ in range(3000):
        x = xp.negative(x)
    assert len(xp.graph(x).splitlines()) <= 2001
    np.testing.assert_array_equal(np.asarray(x), np.ones(3))


def test_realized_node_drops_its_inputs():
    big = xp.asarray(np.ones(1000))
    intermediate = xp.exp(big)
    ref = weakref.ref(intermediate._node)
    y = intermediate + 1.0
    del intermediate, big
    xp.eval(y)
    gc.collect()
    assert y._node.inputs == ()
    assert ref() is None


def test_setitem_rebinds_and_earlier_results_keep_old_values():
    x = xp.asarray([1.0, 2.0, 3.0])
    y = x * 10.0
    alias = x
    x[0] = 100.0
    assert np.asarray(y).tolist() == [10.0, 20.0, 30.0]
    assert np.asarray(x).tolist() == [100.0, 2.0, 3.0]
    assert alias is x  # a handle: the same object sees its own update


def test_inplace_operator_rebinds_only_that_array():
    x = xp.asarray([1, 2, 3])
    before = x + 0
    x += 5
    assert np.asarray(x).tolist() == [6, 7, 8]
    assert np.asarray(before).tolist() == [1, 2, 3]


def test_eval_forces_several_arrays_with_one_plan():
    x = xp.asarray(np.arange(5.0))
    a, b = x * 2.0, x + 1.0
    xp.eval(a, b)
    assert debug.counters["realizations"] == 1
    assert a._node.buffer is not None and b._node.buffer is not None


def test_graph_view_computes_nothing():
    x = xp.asarray([1.0, 2.0])
    text = xp.graph(xp.exp(-x))
    assert "negative(%" in text and "exp(%" in text
    assert debug.counters["steps_run"] == 0


def test_host_data_is_copied_unless_copy_false():
    host = np.array([1.0, 2.0])
    copied = xp.asarray(host, device="cpu")
    shared = xp.asarray(host, copy=False, device="cpu")   # the dask device refuses: dask copies (tests/test_dask.py)
    host[0] = 50.0
    assert float(copied[0]) == 1.0
    assert float(shared[0]) == 50.0


def test_asarray_view_of_value_is_read_only():
    x = xp.asarray([1.0, 2.0])
    view = np.asarray(x)
    with pytest.raises(ValueError):
        view[0] = 3.0


def test_indexing_an_evaluated_array_takes_views_and_reuses_one_plan():
    # Element loops over a computed array (array-agnostic code, test suites)
    # must not build a plan per index: a slice of a realized buffer is a view
    # taken at once, so only the arithmetic on it is planned.
    x = xp.asarray(np.arange(12.0).reshape(3, 4))
    for i in range(3):
        for j in range(4):
            assert float(x[i, j] * 2.0) == 2.0 * (4 * i + j)
    assert debug.counters["plans_built"] <= 1
    assert debug.counters["realizations"] == 12


def test_gradients_flow_through_views_of_evaluated_arrays():
    from arrayx.autodiff import gradients
    x = xp.asarray([1.0, 2.0, 3.0])
    (g,) = gradients(xp.sum(x[1:] * 2.0), [x])
    assert np.asarray(g).tolist() == [0.0, 2.0, 2.0]


def test_intermediate_needed_by_a_second_force_point_is_kept():
    a_np = np.arange(12.0).reshape(3, 4)
    r = xp.exp(xp.asarray(a_np)) @ xp.asarray(np.ones((4, 5)))
    expected = np.exp(a_np) @ np.ones((4, 5))
    first = float(r[0, 0])      # computes r without keeping it (memory stays at one result)
    steps_first = debug.counters["steps_run"]
    second = float(r[1, 2])     # needs r again: computed once more and kept
    assert r._node.buffer is not None
    debug.reset()
    rest = [float(r[i, j]) for i in range(3) for j in range(5)]
    assert debug.counters["steps_run"] == 0  # views of r's buffer: nothing recomputed
    assert steps_first >= 3
    np.testing.assert_array_equal([first, second], [expected[0, 0], expected[1, 2]])
    np.testing.assert_array_equal(rest, expected.ravel())


def test_intermediate_computed_once_is_not_kept():
    x = xp.asarray(np.arange(4.0))
    y = xp.exp(x)
    float(xp.sum(y))
    assert y._node.buffer is None


def test_recomputed_intermediates_in_a_loop_free_old_values():
    # w_k is needed by two force points (loss k and loss k+1), so it is kept as a
    # leaf without history: w_{k-1} must be freed, not chained behind it.
    w = xp.asarray(np.ones(3)) * 1.0
    first = weakref.ref(w._node)
    for _ in range(5):
        w = w - 0.1 * xp.sin(w)
        float(xp.sum(w * w))
    gc.collect()
    assert first() is None
    expected = np.ones(3)
    for _ in range(5):
        expected = expected - 0.1 * np.sin(expected)
    np.testing.assert_allclose(np.asarray(w), expected, rtol=1e-15)


def test_plan_cache_tells_constants_apart_by_their_bits():
    # 0.0 == -0.0 as numbers, but full(-0.0) must not run full(0.0)'s cached plan
    for dtype in (xp.float32, xp.float64, xp.complex128):
        assert not np.signbit(np.asarray(xp.full((2,), 0.0, dtype=dtype)).real).any()
        assert np.signbit(np.asarray(xp.full((2,), -0.0, dtype=dtype)).real).all()
    assert np.signbit(np.asarray(xp.full((1,), complex(0.0, -0.0))).imag).all()
    # nan != nan, yet full(nan) is one computation: its plan is reused
    xp.eval(xp.full((3,), float("nan")))
    debug.reset()
    assert np.isnan(np.asarray(xp.full((3,), float("nan")))).all()
    assert debug.counters["plans_built"] == 0


def test_a_result_larger_than_memory_fails_at_once_naming_its_primitive():
    # Raised by the CPU's plan, before compiling anything (a blocked group
    # over 10^12 points once spent a minute planning its blocks first). The
    # dask device computes such a sum chunk by chunk.
    with pytest.raises(MemoryError, match=r"^full: a result of shape \(1000000000000,\) and dtype float64 needs"):
        float(xp.sum(xp.zeros((10**12,), device="cpu")))
    x = xp.zeros((10**12,), device="cpu")
    with pytest.raises(MemoryError):
        x[0] = 1.0
        x[1] = 2.0
    assert x.shape == (10**12,)


@pytest.fixture
def lazy_repr():
    xp.set_lazy_repr(True)
    yield
    xp.set_lazy_repr(False)


def test_lazy_repr_describes_an_unevaluated_array_without_computing_it(lazy_repr):
    y = xp.exp(xp.asarray([1.0, 2.0, 3.0], device="cpu")) * 2.0   # a repr names devices other than the CPU
    assert repr(y) == "Array(<not computed>, shape=(3,), dtype=float64)"
    assert debug.counters["realizations"] == 0 and debug.counters["steps_run"] == 0
    # str() and print() still compute; afterwards repr shows the values
    values = np.array2string(np.exp([1.0, 2.0, 3.0]) * 2.0, separator=", ", prefix="Array(")
    assert str(y) == f"Array({values}, dtype=float64)"
    assert repr(y) == str(y) and debug.counters["realizations"] == 1


def test_lazy_repr_is_off_by_default_and_arrayx_lazy_repr_1_turns_it_on():
    code = "import arrayx as xp; print(repr(xp.ones(2) * 2.0))"
    # On the CPU, whose arrays' repr names no device.
    env = {k: v for k, v in os.environ.items() if k not in ("ARRAYX_LAZY_REPR", "ARRAYX_DEVICE")}
    off = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    on = subprocess.run([sys.executable, "-c", code], env=dict(env, ARRAYX_LAZY_REPR="1"), capture_output=True,
                        text=True, timeout=120)
    assert off.stdout.strip() == "Array([2., 2.], dtype=float64)", off.stderr
    assert on.stdout.strip() == "Array(<not computed>, shape=(2,), dtype=float64)", on.stderr


def test_set_lazy_repr_takes_a_bool():
    with pytest.raises(TypeError, match="^set_lazy_repr: lazy must be a bool, got int$"):
        xp.set_lazy_repr(1)
