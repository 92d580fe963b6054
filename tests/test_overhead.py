"""The short paths of recording and forcing small graphs give what the
general ones give: 0-d `where` in a fused group, scalar conversions that read
NumPy buffers directly, the elementwise shape shortcut for three operands,
and vector_norm of a lazy vector as one dot product."""

import math

import numpy as np
import pytest

import arrayx as xp
from arrayx import debug
from arrayx.autodiff import grad


@pytest.mark.parametrize("a, b", [(-0.0, np.nan), (np.float32(np.inf), np.float32(-0.0)),
                                  (np.int32(-7), np.int32(3)), (True, False)])
@pytest.mark.parametrize("condition", [True, False])
def test_where_of_0d_values_in_a_fused_group_matches_numpy(a, b, condition):
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(condition)
    xa, xb, xc = xp.asarray(a), xp.asarray(b), xp.asarray(c)
    for got, want in ((xp.where(xc, xa, xb), np.where(c, a, b)),
                      # inside a group, with its condition computed and its result used there
                      (xp.where(xc == condition, xp.where(xc, xa, xb), xb), np.where(c, a, b))):
        got = np.asarray(got)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        if want.dtype.kind == "f":
            assert np.signbit(got) == np.signbit(want)


def test_norm_of_a_vector_runs_its_0d_tail_as_numpy_does():
    for values in ([0.0, -0.0], [3.0, 4.0], [np.nan, 1.0], [np.inf, 1.0], [1e-200, 1e-200]):
        a = np.array(values)
        assert float(xp.linalg.vector_norm(xp.asarray(a) * 1.0)) == pytest.approx(np.linalg.norm(a), nan_ok=True)


def test_scalar_conversions_read_every_kind_of_buffer():
    computed = xp.sum(xp.asarray(np.arange(4.0)) * 2.0)   # a reduction's NumPy scalar
    copied = xp.asarray(np.asarray(2.5))                  # a 0-d NumPy array
    viewed = xp.asarray(np.arange(3.0))[1]                # a view of a realized array
    assert float(computed) == 12.0 and type(float(computed)) is float
    assert float(copied) == 2.5 and float(viewed) == 1.0
    assert int(xp.asarray(np.arange(5))[3]) == 3
    assert bool(xp.asarray(np.array([False, True]))[1]) is True
    assert complex(xp.asarray(np.asarray(1 + 2j))) == 1 + 2j
    with pytest.raises(TypeError, match=r"__float__: only 0-dimensional arrays can be converted, got shape \(3,\)"):
        float(xp.asarray(np.arange(3.0)))
    with pytest.raises(ValueError, match="__int__: cannot convert"):
        int(xp.asarray(np.nan))


@pytest.mark.parametrize("shapes", [((), (3,), (3,)), ((3,), (), ()), ((3,), (3,), ()), ((), (), ()),
                                    ((2, 3), (3,), ()), ((2, 1), (), (1, 3))])
def test_where_infers_the_broadcast_shape_of_three_operands(shapes):
    rng = np.random.default_rng(0)
    c, a, b = (rng.standard_normal(shapes[0]) > 0, rng.standard_normal(shapes[1]), rng.standard_normal(shapes[2]))
    got = xp.where(xp.asarray(c), xp.asarray(a), xp.asarray(b))
    want = np.where(c, a, b)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


def _nodes_below(node):
    seen, stack = set(), [node]
    while stack:
        n = stack.pop()
        if n not in seen and n.buffer is None:
            seen.add(n)
            stack.extend(n.inputs)
    return seen


def test_vector_norm_of_a_lazy_vector_is_one_dot_with_the_values_of_the_sum():
    a = np.random.default_rng(1).standard_normal(1000)
    w = xp.asarray(a) * 1.5
    norm = xp.linalg.vector_norm(w)
    names = sorted(n.op.name for n in _nodes_below(norm._node) - _nodes_below(w._node))
    assert names == ["equal", "matmul", "sqrt", "where", "where"]
    # The scheduler runs the sum of products of the general form as the same dot.
    general = xp.sqrt(xp.sum(w * w))
    assert float(norm) == float(general) == float(np.sqrt(np.dot(a * 1.5, a * 1.5)))
    # A realized (maybe strided) vector keeps the sum of products.
    strided = xp.asarray(a)[::3]
    assert "multiply" in {n.op.name for n in _nodes_below(xp.linalg.vector_norm(strided)._node)}


def test_vector_norm_of_a_lazy_vector_has_gradient_zero_at_zero():
    g = grad(lambda v: xp.linalg.vector_norm(v * 2.0))(xp.zeros(4))
    np.testing.assert_array_equal(np.asarray(g), np.zeros(4))
    a = np.array([3.0, -4.0])
    g = grad(lambda v: xp.linalg.vector_norm(v * 1.0))(xp.asarray(a))
    np.testing.assert_allclose(np.asarray(g), a / 5.0, rtol=1e-15)


def test_a_loop_of_small_forces_reuses_one_plan():
    debug.reset()
    y = xp.asarray(np.linspace(0.0, 1.0, 10))
    reads = []
    for _ in range(50):
        y = y * 0.5 + 1.0
        reads.append(float(y[0]))
    expected = 0.0
    for k in range(50):
        expected = expected * 0.5 + 1.0
        assert reads[k] == expected
    assert debug.counters["plans_built"] <= 2   # the first force sees y as a buffer of asarray's, then of a plan's
    assert debug.counters["realizations"] == 50
    assert math.isclose(float(y[9]), reads[-1] + (1.0 - 0.0) * 0.5 ** 50)
