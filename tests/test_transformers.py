"""arrayx.transformers: seed 004's transformers and computations.

Results are checked against the same arithmetic in NumPy or plain arrayx;
compilation is checked through the scheduler's counters (a call builds no
plan and runs no force point).
"""

import numpy as np
import pytest

import arrayx as xp
from arrayx import debug, transformers as ngt
from arrayx.autodiff import gradients


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
    assert ngt.transformer_choices() == ["cpu"]    # no GPU executor yet
    with pytest.raises(ValueError, match="gpu"):
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
