"""The short paths of recording and forcing small graphs give what the
general ones give: 0-d `where` in a fused group, scalar conversions that read
NumPy buffers directly, the elementwise shape shortcut for three operands,
and vector_norm of a lazy vector as one dot product."""

import math
import weakref

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
    assert names == ["matmul", "sqrt"]   # autodiff takes the origin (autodiff.composite_rules): no selects
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


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "float16", "float32", "complex64"])
def test_one_element_of_an_evaluated_array_is_read_at_once_with_numpys_value_and_dtype(dtype):
    a = (np.arange(24) % 5).reshape(2, 3, 4).astype(dtype)
    x = xp.asarray(a)
    debug.reset()
    for key in ((1, 2, 3), (-1, 0, -4), (0, -3, 1)):
        element = x[key]
        assert element.shape == () and element.dtype == xp.asarray(a[key]).dtype
        assert np.asarray(element).item() == a[key].item()
    assert debug.counters["realizations"] == 0   # read now: no plan, no force point


def test_an_element_read_keeps_its_value_when_the_array_is_written_in_place(cpu_as_default_device):
    # The CPU executor writes in place; the dask device records the write
    # (tests/test_dask.py checks its values).
    a = np.arange(12.0).reshape(3, 4)
    x = xp.asarray(a * 1.0)
    read = x[1, 2]
    buffer = weakref.ref(x._node.buffer)   # (a strong reference would hold the buffer: x would be copied)
    x[1, 2] = -1.0
    assert buffer() is x._node.buffer     # written in place: the read is a copy of the element, no view of x's buffer
    assert float(read) == a[1, 2]
    assert float(x[1, 2]) == -1.0


def test_an_element_read_under_grad_is_recorded_as_a_slice():
    # grad differentiates through the read: d(3 * x[1])/dx is 3 at element 1, 0 elsewhere.
    g = grad(lambda v: v[1] * 3.0)(xp.asarray(np.array([1.0, 2.0, 4.0])))
    np.testing.assert_array_equal(np.asarray(g), [0.0, 3.0, 0.0])


@pytest.mark.parametrize("dtype", ["bool", "int16", "uint8", "float32", "float64", "complex64"])
def test_scalar_operands_found_again_take_the_standards_dtype_and_keep_a_zeros_sign(dtype):
    # NumPy 2's rule for Python scalars (NEP 50) is the standard's, with float64 for a
    # float beside an integer array and int64 for an int beside a bool array, as arrayx does.
    a = np.array([1, 0, 1]).astype(dtype)
    x = xp.asarray(a)
    for scalar in (0.0, -0.0, 0.0, 1, 1.0, True, 1, -0.0):   # repeats find the operand recorded before
        if a.dtype == bool and type(scalar) is bool:
            with pytest.raises(TypeError, match="multiply: operands have dtypes bool and bool"):
                x * scalar   # the standard's multiply takes numeric dtypes only
            continue
        want = a * scalar
        got = np.asarray(x * scalar)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        if want.dtype.kind in "fc":   # the sign of a zero product, which 0.0 == -0.0 would hide from a lookup
            np.testing.assert_array_equal(np.signbit(got.real), np.signbit(want.real))
