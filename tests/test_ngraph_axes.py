"""The ngraph shim's named axes: elementwise alignment, dot contraction and
reductions against NumPy, `deriv` against finite differences,
`cross_entropy_binary` against its NumPy formula, and computations' values.

Values are computed the way an ngraph user gets them: a transformer's
computation over placeholders, returning NumPy arrays. float64 placeholders
keep the comparisons tight where the oracle is exact up to rounding.
"""

import numpy as np
import pytest

import arrayx.ngraph as ng
import arrayx.ngraph.transformers as ngt

F64 = np.float64
# float64 results of a few operations on values of order 1: rounding only.
RTOL = 1e-12


def evaluate(result, *inputs):
    """The value(s) of `result` with placeholders bound: (placeholder, value) pairs."""
    t = ngt.make_transformer()
    try:
        return t.computation(result, *[p for p, _ in inputs])(*[v for _, v in inputs])
    finally:
        t.close()


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def axes(**lengths):
    return {name: ng.make_axis(length, name=name) for name, length in lengths.items()}


def test_axes_pair_by_name_and_keep_the_left_order():
    a = axes(A=2, B=3, C=4)
    left, right = ng.make_axes([a["A"], a["B"]]), ng.make_axes([a["C"], a["B"]])
    assert ng.make_axis(5, name="B") == a["B"]   # same name: the same axis
    assert (left | right).names == ("A", "B", "C")
    assert (left & right).names == ("B",)
    assert (left - right).names == ("A",)
    assert (left + ng.make_axes([a["C"]])).lengths == (2, 3, 4)
    assert (a["A"] + a["C"]).names == ("A", "C") and (a["B"] | left).names == ("B", "A")
    with pytest.raises(ValueError, match="share the axes"):
        left + right
    with pytest.raises(ValueError, match="distinct names.*'A'"):
        ng.make_axes([a["A"], ng.make_axis(7, name="A")])
    with pytest.raises(TypeError, match="must be an Axis"):
        ng.placeholder((8, 2))


def test_binary_ops_align_operands_by_axis_name(rng):
    a = axes(A=2, B=3, C=4)
    x = ng.placeholder([a["A"], a["B"]], dtype=F64)
    y = ng.placeholder([a["C"], a["B"]], dtype=F64)
    xs, ys = rng.standard_normal((2, 3)), rng.standard_normal((4, 3))
    # The left's axes, then the right's others.
    total = x + y
    assert total.axes.names == ("A", "B", "C")
    np.testing.assert_allclose(evaluate(total, (x, xs), (y, ys)), xs[:, :, None] + ys.T[None], rtol=RTOL)
    # A left operand whose axes the right has: the right's order.
    z = ng.placeholder([a["B"]], dtype=F64)
    zs = rng.standard_normal(3)
    scaled = z * y
    assert scaled.axes.names == ("C", "B")
    np.testing.assert_allclose(evaluate(scaled, (z, zs), (y, ys)), zs[None] * ys, rtol=RTOL)


def test_binary_ops_reject_one_axis_name_with_two_lengths():
    x = ng.placeholder([ng.make_axis(3, name="K")])
    y = ng.placeholder([ng.make_axis(4, name="K")])
    with pytest.raises(ValueError, match="add: axis 'K' has length 3"):
        x + y


def test_constants_take_given_axes_or_fresh_ones(rng):
    a = axes(A=3)
    x = ng.placeholder([a["A"]], dtype=F64)
    xs = rng.standard_normal(3)
    labelled = ng.constant(np.arange(3.0), axes=[a["A"]], dtype=F64)
    np.testing.assert_allclose(evaluate(x + labelled, (x, xs)), xs + np.arange(3.0), rtol=RTOL)
    # An unlabelled array gets an axis of its own: adding it broadcasts against x's.
    fresh = x + np.arange(2.0)
    assert len(fresh.axes) == 2 and fresh.axes[0] == a["A"]
    np.testing.assert_allclose(evaluate(fresh, (x, xs)), xs[:, None] + np.arange(2.0), rtol=RTOL)
    # A scalar with axes is broadcast to them; the default element type is float32.
    filled = ng.constant(2, axes=[a["A"]])
    assert filled.dtype == np.float32 and filled.axes == ng.make_axes([a["A"]])
    np.testing.assert_array_equal(evaluate(filled), [2.0, 2.0, 2.0])


def test_comparisons_give_float_zeros_and_ones(rng):
    a = axes(A=5)
    x = ng.placeholder([a["A"]], dtype=F64)
    xs = rng.standard_normal(5)
    got = evaluate(ng.greater(x, 0.0), (x, xs))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, (xs > 0).astype(np.float32))


def test_dot_contracts_the_shared_axes(rng):
    a = axes(A=2, B=3, C=4, D=5)
    x = ng.placeholder([a["A"], a["B"], a["C"]], dtype=F64)
    y = ng.placeholder([a["C"], a["D"], a["B"]], dtype=F64)
    xs, ys = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5, 3))
    d = ng.dot(x, y)
    assert d.axes.names == ("A", "D")
    np.testing.assert_allclose(evaluate(d, (x, xs), (y, ys)), np.einsum("abc,cdb->ad", xs, ys), rtol=RTOL)
    # No shared axis: the outer product.
    v = ng.placeholder([a["D"]], dtype=F64)
    vs = rng.standard_normal(5)
    outer = ng.dot(x, v)
    assert outer.axes.names == ("A", "B", "C", "D")
    np.testing.assert_allclose(evaluate(outer, (x, xs), (v, vs)), np.multiply.outer(xs, vs), rtol=RTOL)


@pytest.mark.parametrize("name, oracle", [("sum", np.sum), ("mean", np.mean), ("max", np.max),
                                          ("min", np.min), ("prod", np.prod)])
def test_reductions_take_reduction_axes_or_out_axes(rng, name, oracle):
    reduce = getattr(ng, name)
    a = axes(A=2, B=3, N=4)
    x = ng.placeholder([a["A"], a["B"], a["N"]], dtype=F64)
    xs = rng.standard_normal((2, 3, 4))
    # By default every axis but the batch axis N is reduced.
    default = reduce(x)
    assert default.axes.names == ("N",)
    np.testing.assert_allclose(evaluate(default, (x, xs)), oracle(xs, axis=(0, 1)), rtol=RTOL)
    by_reduction = reduce(x, reduction_axes=[a["B"]])
    assert by_reduction.axes.names == ("A", "N")
    np.testing.assert_allclose(evaluate(by_reduction, (x, xs)), oracle(xs, axis=1), rtol=RTOL)
    # out_axes in another order than x's: the result has that order.
    by_out = reduce(x, out_axes=[a["N"], a["A"]])
    assert by_out.axes.names == ("N", "A")
    np.testing.assert_allclose(evaluate(by_out, (x, xs)), oracle(xs, axis=1).T, rtol=RTOL)
    np.testing.assert_allclose(evaluate(reduce(x, out_axes=()), (x, xs)), oracle(xs), rtol=RTOL)


def test_reduction_axes_must_partition_the_operands_axes():
    a = axes(A=2, B=3)
    x = ng.placeholder([a["A"], a["B"]])
    with pytest.raises(ValueError, match="sum: reduction_axes .* and out_axes .* overlap"):
        ng.sum(x, reduction_axes=[a["A"]], out_axes=[a["A"], a["B"]])
    with pytest.raises(ValueError, match="must together be the axes"):
        ng.sum(x, reduction_axes=[ng.make_axis(2, name="Z")])


def test_tensor_size_and_batch_size_count_elements():
    a = axes(A=2, B=3, N=4)
    x = ng.placeholder([a["A"], a["B"], a["N"]])
    assert float(evaluate(ng.tensor_size(x))) == 6.0          # the sample axes
    assert float(evaluate(ng.tensor_size(x, reduction_axes=[a["A"], a["N"]]))) == 8.0
    assert float(evaluate(ng.batch_size(x))) == 4.0
    with pytest.raises(ValueError, match="batch_size: .* no batch axis"):
        ng.batch_size(ng.placeholder([a["A"]]))


def test_deriv_matches_finite_differences(rng):
    a = axes(C=3, N=5)
    x = ng.placeholder([a["C"], a["N"]], dtype=F64)
    y = ng.placeholder([a["N"]], dtype=F64)
    w = ng.variable([a["C"]], dtype=F64, initial_value=rng.standard_normal(3))
    cost = ng.sum(ng.tanh(ng.dot(w, x)) * y, out_axes=()) + ng.sum(ng.square(w), out_axes=())
    xs, ys = rng.standard_normal((3, 5)), rng.standard_normal(5)
    t = ngt.make_transformer()
    try:
        gradient = t.computation(ng.deriv(cost, w), x, y)(xs, ys)
        w0 = t.computation(w)()
    finally:
        t.close()

    def f(ws):
        return np.sum(np.tanh(ws @ xs) * ys) + np.sum(ws ** 2)
    # Central differences in float64: error ~h**2 (1e-10) plus rounding ~1e-16/h (1e-11).
    h = 1e-5
    numeric = np.array([(f(w0 + h * e) - f(w0 - h * e)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(gradient, numeric, rtol=1e-7, atol=1e-9)


def test_deriv_needs_a_scalar_or_an_error():
    a = axes(N=5)
    w = ng.variable([a["N"]])
    with pytest.raises(ValueError, match="deriv: .* differentiate a scalar"):
        ng.deriv(w * 2.0, w)


def _cross_entropy(y, t):
    """The binary cross-entropy with ngraph's safelog: log(y + e**-50), at least -50."""
    def safelog(v):
        return np.maximum(np.log(v + np.exp(-50.0)), -50.0)
    return -(safelog(y) * t + safelog(1 - y) * (1 - t))


def test_cross_entropy_binary_matches_its_formula(rng):
    a = axes(C=3, N=6)
    p = ng.placeholder([a["C"], a["N"]], dtype=F64)
    t = ng.placeholder([a["C"], a["N"]], dtype=F64)
    ps, ts = rng.uniform(0.01, 0.99, (3, 6)), rng.integers(0, 2, (3, 6)).astype(F64)
    # Default: summed over the sample axes, one value per batch element.
    np.testing.assert_allclose(evaluate(ng.cross_entropy_binary(p, t), (p, ps), (t, ts)),
                               _cross_entropy(ps, ts).sum(axis=0), rtol=RTOL)
    np.testing.assert_allclose(evaluate(ng.cross_entropy_binary(p, t, out_axes=()), (p, ps), (t, ts)),
                               _cross_entropy(ps, ts).sum(), rtol=RTOL)


def test_cross_entropy_binary_of_a_sigmoid_computes_from_the_logits(rng):
    a = axes(N=6)
    x = ng.placeholder([a["N"]], dtype=F64)
    t = ng.placeholder([a["N"]], dtype=F64)
    xs, ts = rng.standard_normal(6) * 3, rng.integers(0, 2, 6).astype(F64)
    loss = ng.cross_entropy_binary(ng.sigmoid(x), t, out_axes=())
    # The same value as the formula on y = sigmoid(x) (values of order 1: rounding only).
    np.testing.assert_allclose(evaluate(loss, (x, xs), (t, ts)), _cross_entropy(1 / (1 + np.exp(-xs)), ts).sum(),
                               rtol=1e-10)
    # Where sigmoid rounds to 1 the logits keep the loss: t = 0 costs x, not safelog's cap of 50.
    big = np.full(6, 60.0)
    np.testing.assert_allclose(evaluate(loss, (x, big), (t, np.zeros(6))), 6 * 60.0, rtol=RTOL)


def test_variables_are_found_in_the_order_the_graph_uses_them():
    a = axes(C=2, N=3)
    x = ng.placeholder([a["C"], a["N"]])
    w = ng.variable([a["C"]], initial_value=0).named("W")
    b = ng.variable((), initial_value=0).named("b")
    y_hat = ng.sigmoid(ng.dot(w, x) + b)
    assert [v.name for v in y_hat.variables()] == ["W", "b"]
    assert y_hat.placeholders() == [x]


def test_variables_start_from_numbers_arrays_constant_ops_or_callables(rng):
    a = axes(C=2, D=3)
    start = rng.standard_normal((2, 3))
    variables = [ng.variable([a["C"], a["D"]], initial_value=1.5),
                 ng.variable([a["C"], a["D"]], initial_value=start),
                 ng.variable([a["C"], a["D"]], initial_value=ng.constant(2.0, axes=[a["D"]]) * 3),
                 ng.variable([a["C"], a["D"]], initial_value=lambda axes: np.ones(axes.lengths)),
                 ng.variable([a["C"], a["D"]])]
    expected = [1.5, start, 6.0, 1.0, 0.0]
    for v, e in zip(variables, expected):
        np.testing.assert_array_equal(evaluate(v), np.broadcast_to(np.float32(e), (2, 3)))
    with pytest.raises(TypeError, match="variable: an initial value op must be computed from constants"):
        ng.variable([a["D"]], initial_value=ng.placeholder([a["D"]]))
    with pytest.raises(ValueError, match="variable: an initial value of shape \\(2,\\) does not fit"):
        ng.variable([a["D"]], initial_value=[1.0, 2.0])


def test_a_computation_returns_values_before_its_assignments_and_none_for_them():
    a = axes(C=2)
    w = ng.variable([a["C"]], initial_value=[1.0, 2.0])
    b = ng.variable((), initial_value=5)
    step = ng.placeholder(())
    updates = ng.doall([ng.assign(w, w + step), ng.assign(b, b * 2)])
    t = ngt.make_transformer()
    try:
        train = t.computation([w, b, updates], step)
        w0, b0, nothing = train(1)        # an int argument becomes the placeholder's float32
        assert nothing is None
        np.testing.assert_array_equal(w0, [1.0, 2.0])
        assert float(b0) == 5.0
        w1, b1, _ = train(0.5)
        np.testing.assert_array_equal(w1, [2.0, 3.0])
        assert w0.dtype == np.float32 and float(b1) == 10.0
        with pytest.raises(ValueError, match="placeholder .* has shape \\(2,\\), expected \\(\\)"):
            train(np.ones(2))
        with pytest.raises(ValueError, match="variables .* assigned more than once"):
            t.computation([ng.assign(b, 1.0), ng.assign(b, 2.0)])
    finally:
        t.close()


def test_assign_broadcasts_a_value_over_the_variables_other_axes():
    a = axes(C=2, D=3)
    w = ng.variable([a["C"], a["D"]])
    v = ng.placeholder([a["D"]])
    t = ngt.make_transformer()
    try:
        t.computation(ng.assign(w, v), v)(np.arange(3))
        np.testing.assert_array_equal(t.computation(w)(), np.broadcast_to(np.arange(3.0), (2, 3)))
    finally:
        t.close()
    with pytest.raises(ValueError, match="assign: the value's axes"):
        ng.assign(ng.variable([a["C"]]), v)
