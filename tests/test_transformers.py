"""arrayx.transformers: seed 004's transformers and computations.

Results are checked against the same arithmetic in NumPy or plain arrayx;
compilation is checked through the scheduler's counters (a call builds no
plan and runs no force point).
"""

import numpy as np
import pytest

import arrayx as xp
from arrayx import debug, executors, transformers as ngt
from arrayx.autodiff import gradients
from arrayx.transformers.transformer import FOLD_MAX_ELEMENTS


@pytest.fixture
def t():
    transformer = ngt.make_transformer()
    yield transformer
    transformer.close()


def test_seed_examples(t):
    a = ngt.constant(4)
    b = ngt.placeholder(())
    c = ngt.placeholder(())
    d = a * b
    e = d + c
    example_comp = t.computation(e, b, c)
    assert float(example_comp(2, 7)) == 15
    example_comp2 = t.computation([d, e], b, c)
    result_d, result_e = example_comp2(2, 7)
    assert (float(result_d), float(result_e)) == (8, 15)
    if not any(d.name.startswith("cuda:") for d in executors.devices()):
        assert ngt.transformer_choices() == ["cpu"]
        with pytest.raises(ValueError, match="no transformer 'gpu' here"):
            ngt.make_transformer_factory("gpu")


def test_a_call_builds_no_plan_and_forces_nothing(t):
    x = ngt.placeholder((100,), xp.float32)
    f = t.computation(xp.tanh(x * 2.0 + 1.0), x)
    host = np.linspace(-1, 1, 100, dtype=np.float32)
    debug.reset()
    for _ in range(5):
        out = f(host)
    assert debug.counters["plans_built"] == 0 and debug.counters["realizations"] == 0
    np.testing.assert_array_equal(np.asarray(out), np.tanh(host * np.float32(2.0) + np.float32(1.0)))
    assert out.dtype == xp.float32


def test_constant_subgraphs_are_computed_once_when_compiling(t):
    x = ngt.placeholder((3,))
    scale = xp.ones(3) * 2.0 + 1.0                 # reads no placeholder or variable
    f = t.computation(x * scale, x)
    assert f.plan.steps == 1  # a call runs the multiply alone
    np.testing.assert_array_equal(np.asarray(f(np.arange(3.0))), np.arange(3.0) * 3.0)
    # A constant larger than FOLD_MAX_ELEMENTS stays in the graph: the
    # computation holds no array of its size.
    n = FOLD_MAX_ELEMENTS * 2
    y = ngt.placeholder((n,))
    g = t.computation(y * (xp.zeros(n) + 1.0), y)
    assert all(np.size(b) < n for kind, b in g.binding if kind == "buffer")
    np.testing.assert_array_equal(np.asarray(g(np.ones(n))), np.ones(n))


def test_a_call_binds_arguments_variables_and_constants_afresh_each_time(t):
    # The generated run fills each call's slots from its own arguments (in
    # the placeholders' order, not the graph's), the variables' current
    # values and the constants, which no call may write into: a constant
    # result and a constant operand stay what they were.
    a = ngt.placeholder((4,))
    b = ngt.placeholder((4,))
    v = ngt.variable(np.zeros(4), name="v")
    const = xp.arange(4.0) * 2.0
    f = t.computation([b - a * const, const, ngt.assign(v, v + a), v * 1.0], a, b)
    total = np.zeros(4)
    for k in range(3):
        ha, hb = np.full(4, k + 1.0), np.arange(4.0) + 10 * k
        diff, c, assigned, before = f(ha, hb)
        np.testing.assert_array_equal(np.asarray(diff), hb - ha * np.arange(4.0) * 2.0)
        np.testing.assert_array_equal(np.asarray(c), np.arange(4.0) * 2.0)
        np.testing.assert_array_equal(np.asarray(before), total)
        total = total + ha
        np.testing.assert_array_equal(np.asarray(assigned), total)
    np.testing.assert_array_equal(np.asarray(t.computation(v * 1.0)()), total)


def test_results_never_share_memory_with_a_callers_array(t):
    # NumPy arguments are bound without a copy; a result or a variable's new
    # value that is a view of one must not change when the caller's array does.
    x = ngt.placeholder((2, 3))
    v = ngt.variable(np.zeros(6), name="v")
    f = t.computation([x, xp.reshape(x, (6,)), x + 1.0, ngt.assign(v, xp.reshape(x, (6,)))], x)
    host = np.arange(6.0).reshape(2, 3)
    same, flat, plus, assigned = f(host)
    host[...] = -1.0
    np.testing.assert_array_equal(np.asarray(same), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(np.asarray(flat), np.arange(6.0))
    np.testing.assert_array_equal(np.asarray(plus), np.arange(6.0).reshape(2, 3) + 1.0)
    np.testing.assert_array_equal(np.asarray(t.computation(v * 1.0)()), np.arange(6.0))


@pytest.mark.parametrize("shape", [(30, 40), (600, 1000)])   # whole-array and blocked fused groups
def test_strided_numpy_arguments_bound_in_place_give_numpys_results(t, shape):
    x = ngt.placeholder(shape)
    f = t.computation([xp.tanh(x * 2.0) + x, xp.reshape(x, (-1,)), xp.sum(x, axis=0)], x)
    base = np.random.default_rng(4).standard_normal((shape[1], shape[0]))
    for arg in (base.T, np.ascontiguousarray(base.T)[::-1]):     # Fortran order, negative strides
        fused, flat, column_sums = f(arg)
        np.testing.assert_array_equal(np.asarray(fused), np.tanh(arg * 2.0) + arg)
        np.testing.assert_array_equal(np.asarray(flat), arg.reshape(-1))
        # Another summation order: within n * eps * sum|x| of NumPy's (the sums cancel, so no rtol).
        bound = shape[0] * np.finfo(np.float64).eps * np.abs(arg).sum(axis=0)
        assert np.all(np.abs(np.asarray(column_sums) - arg.sum(axis=0)) <= bound)


def test_variables_share_state_within_a_transformer_not_across(t):
    v = ngt.variable(np.zeros(3), name="v")
    step = ngt.placeholder(())
    bump = t.computation(ngt.assign(v, v + step), step)
    read = t.computation(v * 1.0)
    bump(1.0)
    bump(2.0)
    np.testing.assert_array_equal(np.asarray(read()), [3.0, 3.0, 3.0])
    other = ngt.make_transformer()
    np.testing.assert_array_equal(np.asarray(other.computation(v * 1.0)()), [0.0, 0.0, 0.0])
    other.close()


def test_initializer_variables_and_explicit_initialize(t):
    v = ngt.variable(shape=(2, 2), dtype=xp.float32, initializer=lambda shape, dtype: np.full(shape, 0.5))
    f = t.computation(v + 1.0)
    t.allocate()
    t.initialize()
    np.testing.assert_array_equal(np.asarray(f()), np.full((2, 2), 1.5, np.float32))


def test_save_and_restore_round_trip_and_mismatch(t, tmp_path):
    v = ngt.variable(np.arange(3.0), name="weights")
    t.computation(ngt.assign(v, v * 2.0))()
    t.save(tmp_path / "state.npz")
    t.computation(ngt.assign(v, v * 0.0))()
    t.restore(tmp_path / "state.npz")
    np.testing.assert_array_equal(np.asarray(t.computation(v * 1.0)()), [0.0, 2.0, 4.0])
    other = ngt.make_transformer()
    w = ngt.variable(np.zeros(4), name="weights")          # same name, other shape
    other.computation(w * 1.0)
    with pytest.raises(ValueError, match="weights"):
        other.restore(tmp_path / "state.npz")
    np.testing.assert_array_equal(np.asarray(other.computation(w * 1.0)()), np.zeros(4))   # untouched
    other.close()


def test_bad_inputs_are_clear_errors(t):
    x = ngt.placeholder((3,))
    y = xp.asarray([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="must be a placeholder"):
        t.computation(x + y, y)
    with pytest.raises(ValueError, match="not among the inputs"):
        t.computation(x + y)
    f = t.computation(x + y, x)
    with pytest.raises(TypeError, match="takes 1 argument"):
        f()
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        f(np.ones(2))
    with pytest.raises(TypeError, match="complex128"):
        f(np.ones(3, complex))
    with pytest.raises(TypeError, match="NumPy array"):
        f("abc")
    np.testing.assert_array_equal(np.asarray(f(np.arange(3))), [1.0, 3.0, 5.0])   # int64 casts safely
    with pytest.raises(ValueError, match="has no value at a force point"):
        float(xp.sum(x))
    with pytest.raises(ValueError, match="runs only inside a computation"):
        np.asarray(ngt.assign(ngt.variable(np.zeros(3)), y))
    with pytest.raises(ValueError, match="does not fit"):
        ngt.assign(ngt.variable(np.zeros(2)), y)
    t.close()
    with pytest.raises(ValueError, match="closed"):
        f(np.ones(3))


def test_a_training_loop_matches_plain_arrayx(t):
    rng = np.random.default_rng(0)
    xs, ys = rng.standard_normal((64, 10)), rng.standard_normal((64, 1))
    x, y = ngt.placeholder((64, 10)), ngt.placeholder((64, 1))
    w = ngt.variable(np.zeros((10, 1)), name="w")
    cost = xp.mean((x @ w - y) ** 2)
    grad_w, = gradients(cost, [w])
    train = t.computation([cost, ngt.assign(w, w - 0.05 * grad_w)], x, y)
    losses = [float(train(xs, ys)[0]) for _ in range(200)]

    plain_w, plain = xp.zeros((10, 1)), []
    px, py = xp.asarray(xs), xp.asarray(ys)
    for _ in range(200):
        with xp.autodiff.retain_history():
            c = xp.mean((px @ plain_w - py) ** 2)
            g, = gradients(c, [plain_w])
        plain.append(float(c))
        plain_w = plain_w - 0.05 * g
        xp.eval(plain_w)
    # Same graph, same kernels, same order: the updates agree to the last bit
    # but for summation order inside the fused reductions.
    np.testing.assert_allclose(losses, plain, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(t.computation(w * 1.0)()), np.asarray(plain_w), rtol=1e-12)


# The gpu transformer (conftest's `gpu`: a CUDA device, or the emulated cuda:0
# running the GPU executor on the host).
# float64 elementwise work and a small matmul: cuBLAS and the GPU's fused
# kernels round like NumPy's loops to within a few ulps.
GPU_TOL = dict(rtol=1e-13, atol=1e-13)


def test_the_gpu_transformer_is_a_choice_when_a_cuda_device_exists(gpu):
    assert ngt.transformer_choices() == ["cpu", "gpu"]
    factory = ngt.make_transformer_factory("gpu")
    ngt.set_transformer_factory(factory)
    try:
        t = ngt.make_transformer()
    finally:
        ngt.set_transformer_factory(ngt.make_transformer_factory("cpu"))
    assert (t.name, t.device) == ("gpu", gpu)
    assert ngt.make_transformer().device is xp.Device("cpu")   # the cpu factory again, whatever the default device
    with pytest.raises(ValueError, match="device must be one of"):
        ngt.Transformer("cuda:0")


def test_gpu_computations_run_on_the_device_with_state_there(gpu, tmp_path):
    x = ngt.placeholder((4, 3))
    w = ngt.variable(np.linspace(-1, 1, 6).reshape(3, 2), name="w")
    bias = xp.asarray([0.5, -0.5])   # a constant on the default device: one transformer copies it
    y = xp.tanh(x @ w + bias)
    cost = xp.sum(y * y)
    grad_w, = gradients(cost, [w])
    host = np.arange(12.0).reshape(4, 3) / 10
    results = {}
    for kind in ("cpu", "gpu"):
        t = ngt.make_transformer_factory(kind)()
        step = t.computation([cost, ngt.assign(w, w - 0.1 * grad_w)], x)
        read = t.computation(w * 1.0)
        outs = [step(host) for _ in range(3)]
        assert all(o.device is t.device for out in outs for o in out)
        assert read().device is t.device
        results[kind] = [float(out[0]) for out in outs], np.asarray(read())
        t.save(tmp_path / f"{kind}.npz")
        t.close()
    np.testing.assert_allclose(results["gpu"][0], results["cpu"][0], **GPU_TOL)
    np.testing.assert_allclose(results["gpu"][1], results["cpu"][1], **GPU_TOL)
    # State saved on the GPU restores into a CPU transformer.
    cpu = ngt.make_transformer()
    read = cpu.computation(w * 1.0)
    cpu.restore(tmp_path / "gpu.npz")
    np.testing.assert_array_equal(np.asarray(read()), results["gpu"][1])
    cpu.close()


def test_jit_runs_on_the_device_of_its_arguments(gpu):
    f = xp.jit(lambda a, b: xp.exp(a) * b + 1.0)
    host = np.linspace(0, 1, 5)
    on_gpu = f(xp.asarray(host, device=gpu), xp.asarray(host, device=gpu))
    on_cpu = f(xp.asarray(host, device="cpu"), xp.asarray(host, device="cpu"))
    assert (on_gpu.device, on_cpu.device) == (gpu, xp.Device("cpu"))
    np.testing.assert_allclose(np.asarray(on_gpu), np.asarray(on_cpu), **GPU_TOL)
    with pytest.raises(ValueError, match="move them to one device"):
        f(xp.asarray(host, device=gpu), xp.asarray(host, device="cpu"))
