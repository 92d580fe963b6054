"""Reverse-mode autodiff (arrayx.autodiff) over the recorded graph.

The rule table is checked against central finite differences in float64: for
each function f of the table and inputs drawn inside its domain and away from
its kinks, the gradient of sum(f(x) * w) (w random) must match

    (L(x + h e_i) - L(x - h e_i)) / 2h,   h = eps^(1/3) * max(1, |x_i|).

Its error is ~ eps^(2/3) relative (truncation h^2 L'''/6 balanced against
rounding eps |L| / h: about 4e-11 in float64). The tolerance allows a factor
1e3 over that (FD_RTOL ~ 4e-8, relative to the largest gradient) for the third
derivatives and loss magnitudes of the table (the worst case, atanh, errs by
~20 eps^(2/3)); a wrong rule is off by O(1). The same table runs in float32
(gradients must stay float32), and part of it through a second differentiation
(Hessian-vector products against differences of the gradient, worst ~10 eps^(2/3)).

Where a function is not differentiable the gradient is a documented
subgradient: ties of max/min (reductions) and of maximum/minimum/clip split
the cotangent evenly between the tied elements; abs and sign-like kinks use
sign(0) = 0.
"""

import math
import sys
import zlib
from dataclasses import dataclass

import numpy as np
import pytest

import arrayx as xp
from arrayx.autodiff import gradients, grad, identity, retain_history, stop_gradient, value_and_grad, vjp

EPS = float(np.finfo(np.float64).eps)
FD_RTOL = 1e3 * EPS ** (2 / 3)


# ---------------------------------------------------------------- samplers

def uniform(lo, hi):
    return lambda rng, shape: rng.uniform(lo, hi, shape)


def signed(lo, hi):
    """|x| in [lo, hi] with a random sign: away from a kink or pole at 0."""
    return lambda rng, shape: rng.choice([-1.0, 1.0], shape) * rng.uniform(lo, hi, shape)


def distinct(lo, hi):
    """Values at least (hi - lo) / (2 size) apart: no ties for max/min/sort."""
    def sample(rng, shape):
        n = math.prod(shape)
        grid = np.linspace(lo, hi, n) + rng.uniform(-0.25, 0.25, n) * (hi - lo) / max(n, 1)
        return rng.permutation(grid).reshape(shape)
    return sample


def with_zeros(lo, hi, zeros):
    """uniform(lo, hi) with exact zeros at the flat positions `zeros`."""
    def sample(rng, shape):
        a = rng.uniform(lo, hi, shape)
        a.reshape(-1)[list(zeros)] = 0.0
        return a
    return sample


def gap(margin):
    """Inputs whose broadcast difference stays `margin` away from 0 (maximum, minimum)."""
    return lambda a, b: np.min(np.abs(a - b)) > margin


def clear_of(*bounds):
    return lambda x: all(np.min(np.abs(x - b)) > 0.05 for b in bounds)


def remainder_ok(a, b):
    q = a / b
    frac = q - np.floor(q)
    return np.min(np.minimum(frac, 1.0 - frac)) > 0.02


def clip_ok(x, lo, hi):
    return np.min(np.abs(x - lo)) > 0.05 and np.min(np.abs(x - hi)) > 0.05


@dataclass
class Case:
    id: str
    fn: object
    shapes: tuple
    samplers: tuple
    ok: object = None

    def sample(self, rng):
        for _ in range(200):
            arrays = [s(rng, shape) for s, shape in zip(self.samplers, self.shapes)]
            if self.ok is None or self.ok(*arrays):
                return arrays
        raise AssertionError(f"{self.id}: no input sample satisfies its predicate")


def unary(name, sampler, fn=None, shape=(3, 4), ok=None):
    return Case(name, fn or getattr(xp, name), (shape,), (sampler,), ok)


B1, B2 = (3, 1), (4,)   # binary operands: the result broadcasts to (3, 4)


def binary(name, s1, s2, fn=None, ok=None, shapes=(B1, B2)):
    return Case(name, fn or getattr(xp, name), shapes, (s1, s2), ok)


COND = xp.asarray(np.array([[True, False, True, True], [False, False, True, False], [True, True, False, True]]))
S3 = (2, 3, 4)
U = uniform(-2.0, 2.0)
POS = uniform(0.5, 1.5)

CASES = [
    # elementwise, one argument
    unary("abs", signed(0.2, 2.0)),
    unary("acos", uniform(-0.9, 0.9)),
    unary("acosh", uniform(1.2, 3.0)),
    unary("asin", uniform(-0.9, 0.9)),
    unary("asinh", U),
    unary("atan", U),
    unary("atanh", uniform(-0.9, 0.9)),
    unary("cos", uniform(-3.0, 3.0)),
    unary("cosh", U),
    unary("exp", U),
    unary("expm1", U),
    unary("log", uniform(0.2, 3.0)),
    unary("log1p", uniform(-0.8, 3.0)),
    unary("log2", uniform(0.2, 3.0)),
    unary("log10", uniform(0.2, 3.0)),
    unary("negative", U),
    unary("positive", U),
    unary("reciprocal", signed(0.3, 2.0)),
    unary("sin", uniform(-3.0, 3.0)),
    unary("sinh", U),
    unary("sqrt", uniform(0.2, 3.0)),
    unary("square", U),
    unary("tan", uniform(-1.2, 1.2)),
    unary("tanh", U),
    unary("real", U),
    unary("conj", U),
    unary("clip-scalars", U, lambda x: xp.clip(x, min=-0.5, max=0.7), ok=clear_of(-0.5, 0.7)),
    unary("clip-max-only", U, lambda x: xp.clip(x, max=0.5), ok=clear_of(0.5)),
    Case("clip-arrays", lambda x, lo, hi: xp.clip(x, lo, hi), ((3, 4), (3, 1), (4,)),
         (uniform(-1.5, 1.5), uniform(-1.0, -0.2), uniform(0.2, 1.0)), clip_ok),
    unary("pow-scalar-exponent", U, lambda x: x ** 3.0),
    unary("pow-int-exponent", U, lambda x: x ** 2),
    unary("pow-scalar-base", U, lambda x: 2.0 ** x),
    unary("rsub-scalar", U, lambda x: 1.0 - x),
    unary("rdiv-scalar", signed(0.3, 2.0), lambda x: 3.0 / x),
    # elementwise, two arguments, (3, 1) with (4,)
    binary("add", U, U),
    binary("subtract", U, U),
    binary("multiply", U, U),
    binary("divide", U, signed(0.5, 2.0)),
    binary("atan2", signed(0.2, 2.0), U),
    binary("copysign", signed(0.2, 2.0), signed(0.2, 2.0)),
    binary("hypot", signed(0.2, 2.0), U),
    binary("logaddexp", U, U),
    binary("maximum", U, U, ok=gap(0.05)),
    binary("minimum", U, U, ok=gap(0.05)),
    binary("pow", uniform(0.3, 2.0), U),
    binary("remainder", uniform(-3.0, 3.0), signed(0.5, 2.0), ok=remainder_ok),
    binary("where", U, U, lambda a, b: xp.where(COND, a, b)),
    binary("where-rank-mismatch", U, U, lambda a, b: xp.where(COND, a, b), shapes=((4,), (3, 1))),
    binary("operators", U, signed(0.5, 2.0), lambda a, b: (a - b) * a / b + b),
    # statistical
    unary("sum", U, xp.sum, S3),
    unary("sum-axis", U, lambda x: xp.sum(x, axis=1), S3),
    unary("sum-keepdims", U, lambda x: xp.sum(x, axis=(0, 2), keepdims=True), S3),
    unary("prod", POS, xp.prod, (2, 3)),
    unary("prod-axis0", POS, lambda x: xp.prod(x, axis=0), S3),
    unary("prod-axis1", POS, lambda x: xp.prod(x, axis=1), S3),
    unary("prod-keepdims", POS, lambda x: xp.prod(x, axis=(0, 2), keepdims=True), S3),
    unary("prod-one-zero", with_zeros(0.5, 1.5, [5]), lambda x: xp.prod(x, axis=1), (3, 4)),
    unary("prod-two-zeros", with_zeros(0.5, 1.5, [4, 6, 9]), lambda x: xp.prod(x, axis=1), (3, 4)),
    unary("prod-zero-all", with_zeros(0.5, 1.5, [7]), xp.prod, (3, 4)),
    unary("mean", U, xp.mean, S3),
    unary("mean-keepdims", U, lambda x: xp.mean(x, axis=1, keepdims=True), S3),
    unary("var", U, xp.var, S3),
    unary("var-correction", U, lambda x: xp.var(x, axis=1, correction=1, keepdims=True), S3),
    unary("std", U, lambda x: xp.std(x, correction=1), S3),
    unary("std-axes", U, lambda x: xp.std(x, axis=(0, 2)), S3),
    unary("max", distinct(-2.0, 2.0), xp.max, S3),
    unary("max-keepdims", distinct(-2.0, 2.0), lambda x: xp.max(x, axis=1, keepdims=True), S3),
    unary("min", distinct(-2.0, 2.0), lambda x: xp.min(x, axis=(0, 2)), S3),
    unary("cumulative_sum", U, lambda x: xp.cumulative_sum(x, axis=1)),
    unary("cumulative_sum-initial", U, lambda x: xp.cumulative_sum(x, axis=0, include_initial=True)),
    unary("cumulative_prod", POS, lambda x: xp.cumulative_prod(x, axis=1)),
    unary("cumulative_prod-initial", POS, lambda x: xp.cumulative_prod(x, axis=0, include_initial=True)),
    unary("cumulative_prod-zeros", with_zeros(0.5, 1.5, [1, 6, 7, 8, 11]), lambda x: xp.cumulative_prod(x, axis=1)),
    unary("cumulative_prod-three-zeros", with_zeros(0.5, 1.5, [0, 4, 5, 7]), lambda x: xp.cumulative_prod(x, axis=1)),
    unary("cumulative_prod-odd-3d", with_zeros(0.5, 1.5, [3, 20, 33, 34, 50]),
          lambda x: xp.cumulative_prod(x, axis=1), (2, 11, 3)),
    unary("diff", U, xp.diff),
    unary("diff-n2-axis0", U, lambda x: xp.diff(x, axis=0, n=2), (4, 3)),
    Case("diff-prepend-append", lambda x, p, a: xp.diff(x, axis=1, prepend=p, append=a),
         ((3, 4), (3, 1), (3, 2)), (U, U, U)),
    # matmul: every 1-D/2-D/batched combination
    binary("matmul-1d-1d", U, U, xp.matmul, shapes=((3,), (3,))),
    binary("matmul-1d-2d", U, U, xp.matmul, shapes=((3,), (3, 4))),
    binary("matmul-2d-1d", U, U, xp.matmul, shapes=((2, 3), (3,))),
    binary("matmul-2d-2d", U, U, xp.matmul, shapes=((2, 3), (3, 4))),
    binary("matmul-1d-3d", U, U, xp.matmul, shapes=((3,), (2, 3, 4))),
    binary("matmul-3d-1d", U, U, xp.matmul, shapes=((2, 2, 3), (3,))),
    binary("matmul-3d-2d", U, U, xp.matmul, shapes=((2, 2, 3), (3, 4))),
    binary("matmul-2d-3d", U, U, xp.matmul, shapes=((2, 3), (2, 3, 4))),
    binary("matmul-batch-broadcast", U, U, xp.matmul, shapes=((2, 1, 2, 3), (3, 3, 4))),
    binary("matmul-operator", U, U, lambda a, b: a @ b, shapes=((2, 3), (3, 4))),
    # movement (composites of reshape, permute, broadcast, slice, flip, pad, concat, update_slice)
    unary("reshape", U, lambda x: xp.reshape(x, (4, 3))),
    unary("matrix_transpose", U, xp.matrix_transpose, S3),
    unary("tril", U, lambda x: xp.tril(x, k=-1), S3),
    unary("triu", U, lambda x: xp.triu(x, k=1), S3),
    # tuple results: combine the outputs so each one's gradient is checked
    binary("meshgrid", U, U, lambda a, b: (lambda g: g[0] * g[1] + g[0])(xp.meshgrid(a, b)), shapes=((3,), (4,))),
    binary("meshgrid-ij", U, U, lambda a, b: (lambda g: g[0] * g[1])(xp.meshgrid(a, b, indexing="ij")),
           shapes=((3,), (4,))),
    binary("broadcast_arrays", U, U, lambda a, b: (lambda g: g[0] * 2.0 + g[1] * g[1])(xp.broadcast_arrays(a, b))),
    unary("permute_dims", U, lambda x: xp.permute_dims(x, (2, 0, 1)), S3),
    unary("mT", U, lambda x: x.mT * xp.asarray(np.arange(12.0).reshape(4, 3))),
    unary("broadcast_to", U, lambda x: xp.broadcast_to(x, (2, 3, 4)), (3, 1)),
    unary("flip", U, lambda x: xp.flip(x, axis=1)),
    unary("slicing", U, lambda x: x[1:, ::-2]),
    unary("expand-squeeze", U, lambda x: xp.squeeze(xp.expand_dims(x, axis=1), axis=1)),
    unary("roll", U, lambda x: xp.roll(x, 2, axis=1)),
    unary("tile", U, lambda x: xp.tile(x, (2, 1))),
    unary("moveaxis", U, lambda x: xp.moveaxis(x, 0, -1), S3),
    binary("concat", U, U, lambda a, b: xp.concat([a, xp.reshape(b, (1, 4)), a * 2.0], axis=0),
           shapes=((3, 4), (4,))),
    binary("stack", U, U, lambda a, b: xp.stack([a, b], axis=1), shapes=((4,), (4,))),
    binary("setitem-slice", U, U, lambda a, b: _setitem(a, b), shapes=((3, 4), (2, 2))),
]


def _setitem(a, b):
    y = a * 1.0
    y[1:, :2] = b
    return y * y


IDS = [c.id for c in CASES]
assert len(set(IDS)) == len(IDS)


def _loss(case, w):
    def loss(*args):
        return xp.sum(case.fn(*args) * w)
    return loss


def _weights(case, inputs, rng, dtype=np.float64):
    shape = np.asarray(case.fn(*(xp.asarray(a) for a in inputs))).shape
    return rng.standard_normal(shape).astype(dtype)


def _central_differences(loss, inputs):
    """d loss / d inputs[k] by central differences, element by element."""
    out = []
    for k, a in enumerate(inputs):
        g = np.empty_like(a)
        for i in np.ndindex(a.shape):
            h = EPS ** (1 / 3) * max(1.0, abs(a[i]))
            values = []
            for step in (h, -h):
                moved = [b.copy() for b in inputs]
                moved[k][i] += step
                values.append(float(loss(*(xp.asarray(b) for b in moved))))
            g[i] = (values[0] - values[1]) / (2 * h)
        out.append(g)
    return out


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradient_matches_finite_differences(case):
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    inputs = case.sample(rng)
    w = xp.asarray(_weights(case, inputs, rng))
    loss = _loss(case, w)
    got = grad(loss, argnums=tuple(range(len(inputs))))(*(xp.asarray(a) for a in inputs))
    expected = _central_differences(loss, inputs)
    scale = max(1.0, max(float(np.max(np.abs(e))) for e in expected))
    for k, (g, e) in enumerate(zip(got, expected)):
        assert g.dtype == xp.float64 and g.shape == e.shape, (k, g.dtype, g.shape)
        np.testing.assert_allclose(np.asarray(g), e, rtol=FD_RTOL, atol=FD_RTOL * scale, err_msg=f"argument {k}")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_float32_gradients_stay_float32(case):
    """Rules build their cotangents in the input's dtype: float32 in, float32 gradient out,
    equal to the float64 gradient within float32's precision."""
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    inputs = case.sample(rng)
    w = _weights(case, inputs, rng)
    got32 = grad(_loss(case, xp.asarray(w.astype(np.float32))), argnums=tuple(range(len(inputs))))(
        *(xp.asarray(a.astype(np.float32)) for a in inputs))
    got64 = grad(_loss(case, xp.asarray(w)), argnums=tuple(range(len(inputs))))(*(xp.asarray(a) for a in inputs))
    scale = max(1.0, max(float(np.max(np.abs(np.asarray(g)))) for g in got64))
    for g32, g64 in zip(got32, got64):
        assert g32.dtype == xp.float32
        np.testing.assert_allclose(np.asarray(g32), np.asarray(g64), rtol=1e-4, atol=1e-4 * scale)


SECOND_ORDER = ["tan", "acosh", "sqrt", "reciprocal", "clip-arrays", "divide", "pow", "atan2", "hypot",
                "logaddexp", "remainder", "maximum", "prod-axis0", "prod-one-zero", "prod-two-zeros",
                "var-correction", "std", "max-keepdims", "cumulative_prod-initial", "cumulative_prod-zeros",
                "cumulative_prod-three-zeros", "cumulative_prod-odd-3d", "matmul-batch-broadcast",
                "matmul-1d-3d", "setitem-slice"]
SECOND_ORDER_CASES = [c for c in CASES if c.id in SECOND_ORDER]
assert len(SECOND_ORDER_CASES) == len(SECOND_ORDER)


@pytest.mark.parametrize("case", SECOND_ORDER_CASES, ids=[c.id for c in SECOND_ORDER_CASES])
def test_rules_are_differentiable_again(case):
    """Gradients are graphs too: the gradient of <grad L(x), v> (a Hessian-vector product)
    against central differences of grad L itself."""
    rng = np.random.default_rng(zlib.crc32(case.id.encode()) + 1)
    inputs = case.sample(rng)
    w = xp.asarray(_weights(case, inputs, rng))
    vs = [rng.standard_normal(a.shape) for a in inputs]
    argnums = tuple(range(len(inputs)))
    first = grad(_loss(case, w), argnums=argnums)

    def directional(*args):
        return sum((xp.sum(g * xp.asarray(v)) for g, v in zip(first(*args), vs)), xp.asarray(0.0))
    got = grad(directional, argnums=argnums)(*(xp.asarray(a) for a in inputs))
    expected = _central_differences(directional, inputs)
    scale = max(1.0, max(float(np.max(np.abs(e))) for e in expected))
    for k, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(np.asarray(g), e, rtol=FD_RTOL, atol=FD_RTOL * scale, err_msg=f"argument {k}")


MULTI_INPUT_CASES = [(c, k) for c in CASES if len(c.shapes) > 1 for k in range(len(c.shapes))]


@pytest.mark.parametrize("case, k", MULTI_INPUT_CASES, ids=[f"{c.id}-arg{k}" for c, k in MULTI_INPUT_CASES])
def test_one_operand_alone_matches_finite_differences(case, k):
    """Differentiating one operand, the rules build no cotangent for the others (`needs`):
    the one they build must still be right. Same inputs, loss and tolerance as the table."""
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    inputs = case.sample(rng)
    w = xp.asarray(_weights(case, inputs, rng))
    loss = _loss(case, w)
    got = grad(loss, argnums=k)(*(xp.asarray(a) for a in inputs))
    expected = _central_differences(loss, inputs)
    scale = max(1.0, max(float(np.max(np.abs(e))) for e in expected))
    np.testing.assert_allclose(np.asarray(got), expected[k], rtol=FD_RTOL, atol=FD_RTOL * scale)


# ---------------------------------------------------------------- what the sweep builds

def _updated(a, v):
    y = a * 1.0
    y[1:, :] = v   # one update of a lazy array: an update_slice node
    return y


def _built_sides(make_node, n_inputs):
    """For each input k: which cotangents a node's rule builds (not None, and not g itself,
    which costs nothing) when the sweep wants only input k."""
    from arrayx.autodiff.registry import VJP
    node = make_node()._node
    g = xp.ones(node.shape, dtype=node.dtype)
    sides = [VJP[node.op.name](g, node, tuple(i == k for i in range(n_inputs))) for k in range(n_inputs)]
    return node.op.name, [[c is not None and c is not g for c in side] for side in sides]


def test_rules_build_only_the_cotangents_the_sweep_needs():
    a, b = xp.asarray([[0.5, -1.0], [2.0, 0.25]]), xp.asarray([[1.5, 0.75], [-0.5, 2.0]])
    v = xp.asarray([1.0, 2.0])
    binary_nodes = {
        "multiply": lambda: a * b, "divide": lambda: a / b, "subtract": lambda: a - b,
        "pow": lambda: xp.abs(a) ** b, "atan2": lambda: xp.atan2(a, b), "hypot": lambda: xp.hypot(a, b),
        "logaddexp": lambda: xp.logaddexp(a, b), "remainder": lambda: xp.remainder(a, b),
        "maximum": lambda: xp.maximum(a, 0.0), "minimum": lambda: xp.minimum(a, b),
        "matmul": lambda: a @ b, "solve": lambda: xp.linalg.solve(a, b),
        "update_slice": lambda: _updated(a, v),
    }
    for name, make_node in [*binary_nodes.items(), ("matmul", lambda: v @ a), ("matmul", lambda: a @ v),
                            ("matmul", lambda: v @ v), ("solve", lambda: xp.linalg.solve(a, v))]:
        op, built = _built_sides(make_node, 2)
        assert op == name
        assert not built[0][1] and not built[1][0], name
        assert built[1][1] and (built[0][0] or name in ("subtract", "remainder")), name   # a's is g there
    op, built = _built_sides(lambda: xp.where(a > 0.0, a, b), 3)
    assert op == "where" and built[1:] == [[False, True, False], [False, False, True]]
    op, built = _built_sides(lambda: xp.concat([a, b, a * 2.0]), 3)
    assert op == "concat" and built == [[True, False, False], [False, True, False], [False, False, True]]


def test_reduction_cotangents_broadcast_back_exactly():
    """A sum's cotangent is g spread over the reduced axes; a mean's is g / n. Closed forms in
    float32, computed as the rules do (one division 1 / n in the dtype, then one product):
    equality, not closeness."""
    rng = np.random.default_rng(3)
    x = xp.asarray(rng.standard_normal((2, 3, 4)), dtype=xp.float32)
    w_np = rng.standard_normal((2, 3, 4)).astype(np.float32)
    w = xp.asarray(w_np)
    for axis, w_shape, spread in [(0, (3, 4), lambda c: c[None]),          # leading axes: no reshape
                                  (1, (2, 4), lambda c: c[:, None, :]),    # a middle axis
                                  ((0, 2), (3,), lambda c: c[None, :, None]),
                                  (None, (), lambda c: c)]:
        c_np = rng.standard_normal(w_shape).astype(np.float32)
        g = grad(lambda v: xp.sum(xp.sum(v, axis=axis) * xp.asarray(c_np)))(x)
        np.testing.assert_array_equal(np.asarray(g), np.broadcast_to(spread(c_np), (2, 3, 4)))
    # mean of row sums: the mean's g / n spreads from a 0-d value straight to (2, 3, 4)
    g = grad(lambda v: xp.mean(xp.sum(v * w, axis=2)))(x)
    assert g.dtype == xp.float32
    np.testing.assert_array_equal(np.asarray(g), (np.float32(1.0) / np.float32(6.0)) * w_np)
    g = grad(lambda v: xp.mean(xp.sum(v * w, axis=(0, 2), keepdims=True)))(x)
    np.testing.assert_array_equal(np.asarray(g), (np.float32(1.0) / np.float32(3.0)) * w_np)


def test_broadcast_operands_get_their_cotangents_summed():
    """Biases: an operand added to a (2, 3, 4) value gets the cotangent summed over the axes
    broadcasting added (leading), stretched (size 1), or both. Integer-valued: every sum is exact."""
    c_np = np.arange(24.0).reshape(2, 3, 4) - 7.0
    x, c = xp.asarray(np.ones((2, 3, 4))), xp.asarray(c_np)
    for shape, expected in [((4,), c_np.sum(axis=(0, 1))), ((3, 4), c_np.sum(axis=0)),
                            ((1, 4), c_np.sum(axis=(0, 1))[None]), ((2, 1, 4), c_np.sum(axis=1, keepdims=True)),
                            ((2, 3, 4), c_np)]:
        g = grad(lambda b: xp.sum((x + b) * c))(xp.asarray(np.zeros(shape)))
        assert g.shape == shape
        np.testing.assert_array_equal(np.asarray(g), expected)


def test_seed_cotangents():
    """The sweep starts from ones: a scalar 1 in the output's dtype, shared as a view."""
    x32 = xp.asarray(np.float32(2.5))
    g = grad(lambda v: v)(x32)
    assert g.dtype == xp.float32 and float(g) == 1.0
    y = xp.asarray(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    (g,) = gradients(y, [y])
    assert g.shape == (2, 3) and g.dtype == xp.float32
    np.testing.assert_array_equal(np.asarray(g), np.ones((2, 3), dtype=np.float32))
    (g,) = gradients(y * 3.0, [y])
    np.testing.assert_array_equal(np.asarray(g), np.full((2, 3), 3.0, dtype=np.float32))


def _mlp_loss(w1, w2, x, y):
    z = xp.maximum(x @ w1, 0.0) @ w2
    top = xp.max(z, axis=1, keepdims=True)
    lse = top + xp.log(xp.sum(xp.exp(z - top), axis=1, keepdims=True))
    return xp.mean(xp.sum(y * (lse - z), axis=1))


def _mlp_data(dtype=np.float64):
    rng = np.random.default_rng(11)
    w1, w2 = rng.standard_normal((20, 8)) * 0.3, rng.standard_normal((8, 5)) * 0.3
    x, y = rng.standard_normal((6, 20)), np.eye(5)[rng.integers(0, 5, 6)]
    return tuple(a.astype(dtype) for a in (w1, w2, x, y))


def test_mlp_gradient_matches_the_hand_written_backward():
    """The softmax cross-entropy MLP of benchmarks/clients.py (mlp_loss) against its backward
    pass written out (sgd_by_hand). Random inputs, so no pre-activation is exactly 0 and the
    ReLU's tie never arises. Both are float64 sums of a few dozen terms in different orders:
    1e-13 relative to the largest entry is ~500 eps."""
    w1, w2, x, y = _mlp_data()
    pre = x @ w1
    assert np.all(pre != 0.0)
    h = np.maximum(pre, 0.0)
    e = np.exp(h @ w2 - np.max(h @ w2, axis=1, keepdims=True))
    dz = (e / np.sum(e, axis=1, keepdims=True) - y) / x.shape[0]
    expected = (x.T @ np.where(pre > 0, dz @ w2.T, 0.0), h.T @ dz)
    got = grad(_mlp_loss, argnums=(0, 1))(*(xp.asarray(a) for a in (w1, w2, x, y)))
    for g, e in zip(got, expected):
        np.testing.assert_allclose(np.asarray(g), e, rtol=0, atol=1e-13 * np.max(np.abs(e)))


def test_grad_computes_its_forward_pass_with_the_gradients():
    """grad computes nothing at the call: the forward values and the gradients come from one
    force point, where they are needed. value_and_grad computes the value at the call."""
    w1, w2, x, y = (xp.asarray(a) for a in _mlp_data())
    before = xp.debug.counters["realizations"]
    g1, g2 = grad(_mlp_loss, argnums=(0, 1))(w1, w2, x, y)
    assert xp.debug.counters["realizations"] == before
    xp.eval(g1, g2)
    assert xp.debug.counters["realizations"] == before + 1
    value, (h1, h2) = value_and_grad(_mlp_loss, argnums=(0, 1))(w1, w2, x, y)
    assert xp.debug.counters["realizations"] == before + 2
    np.testing.assert_array_equal(np.asarray(h1), np.asarray(g1))   # the same graph, computed alike
    np.testing.assert_array_equal(np.asarray(h2), np.asarray(g2))
    np.testing.assert_allclose(float(value), float(_mlp_loss(w1, w2, x, y)), rtol=1e-15)


def test_identity_of_an_evaluated_array_is_a_view():
    # grad's per-argument identity nodes cost no step in the gradients' plan
    x = xp.asarray([1.0, 2.0, 3.0])
    before = xp.debug.counters["steps_run"]
    np.testing.assert_array_equal(np.asarray(identity(x)), [1.0, 2.0, 3.0])
    assert xp.debug.counters["steps_run"] == before


# ---------------------------------------------------------------- casts

def test_astype_between_float32_and_float64():
    w32 = np.array([0.5, -1.25, 2.0], dtype=np.float32)
    w64 = np.array([0.1, -0.2, 0.3])
    x64 = xp.asarray([1.0, 2.0, 3.0])
    g = grad(lambda x: xp.sum(xp.astype(x, xp.float32) * xp.asarray(w32)))(x64)
    assert g.dtype == xp.float64
    np.testing.assert_array_equal(np.asarray(g), w32.astype(np.float64))
    x32 = xp.asarray(np.array([1.0, 2.0, 3.0], dtype=np.float32))
    g = grad(lambda x: xp.sum(xp.astype(x, xp.float64) * xp.asarray(w64)))(x32)
    assert g.dtype == xp.float32
    np.testing.assert_array_equal(np.asarray(g), w64.astype(np.float32))
    # a round trip and a float32 input promoted by arithmetic
    g = grad(lambda x: xp.sum(xp.astype(xp.astype(x, xp.float32), xp.float64) ** 2))(x64)
    np.testing.assert_array_equal(np.asarray(g), [2.0, 4.0, 6.0])
    g = grad(lambda x: xp.sum(x * xp.asarray(w64)))(x32)
    assert g.dtype == xp.float32
    np.testing.assert_array_equal(np.asarray(g), w64.astype(np.float32))


# ---------------------------------------------------------------- subgradients at ties

def test_max_min_ties_split_evenly():
    x = xp.asarray([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 0.0]])
    g = grad(lambda x: xp.sum(xp.max(x, axis=1) * xp.asarray([2.0, 3.0])))(x)
    np.testing.assert_allclose(np.asarray(g), [[0, 1, 1, 0], [1, 1, 1, 0]])
    g = grad(lambda x: xp.min(x))(xp.asarray([[1.0, 0.0], [0.0, 4.0]]))
    np.testing.assert_array_equal(np.asarray(g), [[0, 0.5], [0.5, 0]])
    g = grad(lambda x: xp.sum(xp.min(x, axis=0, keepdims=True)))(xp.asarray([[2.0, 1.0], [2.0, 4.0]]))
    np.testing.assert_array_equal(np.asarray(g), [[0.5, 1.0], [0.5, 0.0]])


def test_maximum_minimum_clip_ties_split_evenly():
    a, b = xp.asarray([1.0, 2.0, 3.0]), xp.asarray([1.0, 5.0, 0.0])
    ga, gb = grad(lambda a, b: xp.sum(xp.maximum(a, b)), argnums=(0, 1))(a, b)
    np.testing.assert_array_equal(np.asarray(ga), [0.5, 0.0, 1.0])
    np.testing.assert_array_equal(np.asarray(gb), [0.5, 1.0, 0.0])
    ga, gb = grad(lambda a, b: xp.sum(xp.minimum(a, b)), argnums=(0, 1))(a, b)
    np.testing.assert_array_equal(np.asarray(ga), [0.5, 1.0, 0.0])
    np.testing.assert_array_equal(np.asarray(gb), [0.5, 0.0, 1.0])
    # a NaN on either side makes both comparisons false: all of g goes to b
    # (the result is NaN either way), in the operands' dtype
    a32, b32 = xp.asarray([float("nan"), 2.0], dtype=xp.float32), xp.asarray([1.0, float("nan")], dtype=xp.float32)
    ga, gb = grad(lambda a, b: xp.sum(xp.maximum(a, b)), argnums=(0, 1))(a32, b32)
    assert ga.dtype == xp.float32
    np.testing.assert_array_equal(np.asarray(ga), [0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(gb), [1.0, 1.0])
    # maximum(x, x): both halves reach x, the full derivative 1
    np.testing.assert_array_equal(np.asarray(grad(lambda a: xp.sum(xp.maximum(a, a)))(a)), [1.0, 1.0, 1.0])
    # at a clip bound x gets half
    g = grad(lambda x: xp.sum(xp.clip(x, 1.0, 2.0)))(xp.asarray([0.0, 1.0, 1.5, 2.0, 3.0]))
    np.testing.assert_array_equal(np.asarray(g), [0.0, 0.5, 1.0, 0.5, 0.0])


@pytest.mark.parametrize("dtype", [xp.float32, xp.float64], ids=["float32", "float64"])
def test_maximum_minimum_with_a_scalar_operand(dtype):
    """maximum(x, 0.0) (a ReLU) and friends, whose rule builds only x's side: x gets all of g
    where it wins, half on a tie, none where it loses. A NaN makes both comparisons false,
    and then g goes to the second operand: none to x in maximum(x, 0.0), all of it in
    maximum(0.0, x). The shares 1, 1/2 and 0 times g are exact in binary floating point:
    equality, not closeness."""
    x_np = np.array([-1.5, 0.0, 2.0, np.nan, np.inf, -np.inf, -0.0])
    w_np = np.array([3.0, 5.0, 7.0, 11.0, 13.0, 17.0, 19.0])
    x, w = xp.asarray(x_np, dtype=dtype), xp.asarray(w_np, dtype=dtype)
    for f, share in [
        (lambda v: xp.maximum(v, 0.0), [0.0, 0.5, 1.0, 0.0, 1.0, 0.0, 0.5]),
        (lambda v: xp.maximum(0.0, v), [0.0, 0.5, 1.0, 1.0, 1.0, 0.0, 0.5]),   # the scalar first
        (lambda v: xp.minimum(v, 0.0), [1.0, 0.5, 0.0, 0.0, 0.0, 1.0, 0.5]),
        (lambda v: xp.minimum(v, xp.asarray(0.0, dtype=dtype)), [1.0, 0.5, 0.0, 0.0, 0.0, 1.0, 0.5]),
    ]:
        g = grad(lambda v: xp.sum(f(v) * w))(x)
        assert g.dtype == dtype
        np.testing.assert_array_equal(np.asarray(g), (np.array(share) * w_np).astype(g.dtype.name))
    # the 0-d operand differentiated too: it gets the rest of each element's g, summed
    # (integer-valued weights: the sums are exact)
    c = xp.asarray(0.0, dtype=dtype)
    gx, gc = grad(lambda v, c: xp.sum(xp.maximum(v, c) * w), argnums=(0, 1))(x, c)
    np.testing.assert_array_equal(np.asarray(gx), np.array([0.0, 2.5, 7.0, 0.0, 13.0, 0.0, 9.5]))
    assert gc.dtype == dtype and float(gc) == 3.0 + 2.5 + 11.0 + 17.0 + 9.5


def test_kinks_at_zero():
    x = xp.asarray([-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(np.asarray(grad(lambda x: xp.sum(xp.abs(x)))(x)), [-1.0, 0.0, 1.0])
    # hypot at the origin: the zero subgradient, not NaN
    g1, g2 = grad(lambda a, b: xp.sum(xp.hypot(a, b)), argnums=(0, 1))(xp.asarray([0.0, 3.0]), xp.asarray([0.0, 4.0]))
    np.testing.assert_allclose(np.asarray(g1), [0.0, 0.6])
    np.testing.assert_allclose(np.asarray(g2), [0.0, 0.8])
    # d/db 0**b = 0 for b > 0, not 0 * log(0) = NaN
    ga, gb = grad(lambda a, b: xp.sum(a ** b), argnums=(0, 1))(xp.asarray([0.0, 2.0]), xp.asarray([2.0, 3.0]))
    np.testing.assert_allclose(np.asarray(ga), [0.0, 12.0])
    np.testing.assert_allclose(np.asarray(gb), [0.0, 8.0 * math.log(2.0)])


def test_cumulative_prod_gradient_is_exact_at_zeros():
    # y = [2, 2 x1, 2 x1 x2]: d sum(y) = [1 + x1 + x1 x2, 2 + 2 x2, 2 x1] at x1 = 0
    g = grad(lambda x: xp.sum(xp.cumulative_prod(x)))(xp.asarray([2.0, 0.0, 3.0]))
    np.testing.assert_array_equal(np.asarray(g), [1.0, 8.0, 0.0])
    # two zeros: only the terms up to the second zero that skip the first one survive
    g = grad(lambda x: xp.sum(xp.cumulative_prod(x, include_initial=True)))(xp.asarray([0.0, 2.0, 0.0, 5.0]))
    np.testing.assert_array_equal(np.asarray(g), [1.0 + 2.0, 0.0, 0.0, 0.0])
    # third order at three zeros: d3/dx0 dx1 dx2 of x0 + x0 x1 + x0 x1 x2 is 1
    d1 = grad(lambda x: xp.sum(xp.cumulative_prod(x)))
    d2 = grad(lambda x: d1(x)[2])
    d3 = grad(lambda x: d2(x)[1])
    np.testing.assert_array_equal(np.asarray(d3(xp.zeros(3))), [1.0, 0.0, 0.0])


# ---------------------------------------------------------------- non-differentiable paths

def _nonzero_rows(x):
    return xp.astype(xp.nonzero(x > 1.0)[0], xp.float64)


NON_DIFFERENTIABLE = [
    ("floor", xp.floor),
    ("ceil", xp.ceil),
    ("round", xp.round),
    ("trunc", xp.trunc),
    ("sign", lambda x: xp.sign(x - 1.0)),
    ("greater", lambda x: xp.astype(x > 1.0, xp.float64)),
    ("equal", lambda x: xp.astype(xp.floor(x) == 1.0, xp.float64)),
    ("where-condition", lambda x: xp.where(x < 1.5, xp.ones_like(x), -1.0)),
    ("argmax", lambda x: xp.astype(xp.argmax(x, axis=0), xp.float64)),
    ("argmin", lambda x: xp.astype(xp.argmin(x), xp.float64)),
    ("argsort", lambda x: xp.astype(xp.argsort(x, axis=1), xp.float64)),
    ("astype-int", lambda x: xp.astype(xp.astype(x * 3.0, xp.int64), xp.float64)),
    ("nonzero", _nonzero_rows),
    ("stop_gradient", lambda x: stop_gradient(x) ** 2),
]


@pytest.mark.parametrize("fn", [f for _, f in NON_DIFFERENTIABLE], ids=[n for n, _ in NON_DIFFERENTIABLE])
def test_non_differentiable_outputs_contribute_zero(fn):
    rng = np.random.default_rng(7)
    # distinct values (argmax, argsort), some below and some above 1 (comparisons, sign, nonzero)
    x_np = rng.permutation(np.linspace(0.3, 2.9, 12) + rng.uniform(-0.05, 0.05, 12)).reshape(3, 4)
    x = xp.asarray(x_np)
    # the path alone: an exact zero gradient
    g = grad(lambda x: xp.sum(fn(x)))(x)
    assert g.dtype == xp.float64 and g.shape == (3, 4)
    np.testing.assert_array_equal(np.asarray(g), np.zeros((3, 4)))
    # next to a differentiable path, fn(x) acts as a constant
    w = rng.standard_normal((3, 4))
    c = float(xp.sum(fn(x)))
    assert c != 0.0
    g = grad(lambda x: xp.sum(fn(x)) * xp.sum(x * xp.asarray(w)))(x)
    np.testing.assert_allclose(np.asarray(g), c * w, rtol=1e-13)


def test_stop_gradient():
    x = xp.asarray([1.0, -2.0, 3.0])
    y = stop_gradient(x * 2.0)
    np.testing.assert_array_equal(np.asarray(y), [2.0, -4.0, 6.0])
    value, g = value_and_grad(lambda x: xp.sum(stop_gradient(x) * x))(x)
    assert float(value) == 14.0
    np.testing.assert_array_equal(np.asarray(g), [1.0, -2.0, 3.0])
    # the inner gradient is stop_gradient(y), through which the outer one does not see
    h = grad(lambda x: grad(lambda y: stop_gradient(y) * y)(x))(xp.asarray(3.0))
    assert float(h) == 0.0
    with pytest.raises(TypeError, match="stop_gradient"):
        stop_gradient(np.ones(3))


# ---------------------------------------------------------------- API

def test_grad_argnums():
    a, b, c = xp.asarray([1.0, 2.0]), xp.asarray([3.0, 4.0]), xp.asarray([5.0, 6.0])

    def f(a, b, c, scale=1.0):
        return xp.sum(a * b) * scale + xp.sum(c ** 2)
    np.testing.assert_array_equal(np.asarray(grad(f)(a, b, c)), [3.0, 4.0])
    np.testing.assert_array_equal(np.asarray(grad(f, argnums=1)(a, b, c)), [1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(grad(f, argnums=-1)(a, b, c)), [10.0, 12.0])
    ga, gc = grad(f, argnums=(0, 2))(a, b, c, scale=2.0)
    np.testing.assert_array_equal(np.asarray(ga), [6.0, 8.0])
    np.testing.assert_array_equal(np.asarray(gc), [10.0, 12.0])
    (gb,) = grad(f, argnums=(1,))(a, b, c)
    np.testing.assert_array_equal(np.asarray(gb), [1.0, 2.0])
    # arguments not differentiated need not be floating arrays
    g = grad(lambda x, n, k: xp.sum(x ** n) * k)(a, 3, xp.asarray(2))
    np.testing.assert_array_equal(np.asarray(g), [6.0, 24.0])
    with pytest.raises(ValueError, match="argnums"):
        grad(f, argnums=3)(a, b, c)


def test_value_and_grad():
    x = xp.asarray([[0.5, -1.0], [2.0, 0.25]])
    value, g = value_and_grad(lambda x: xp.sum(xp.exp(x) * x))(x)
    x_np = np.asarray(x)
    assert value.shape == () and value.dtype == xp.float64
    np.testing.assert_allclose(float(value), np.sum(np.exp(x_np) * x_np), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(g), np.exp(x_np) * (1.0 + x_np), rtol=1e-15)
    value, (g0, g1) = value_and_grad(lambda a, b: xp.sum(a * b), argnums=(0, 1))(x, x * 2.0)
    np.testing.assert_allclose(np.asarray(g0), 2.0 * x_np)
    np.testing.assert_allclose(np.asarray(g1), x_np)


def test_vjp_with_a_non_scalar_output():
    rng = np.random.default_rng(1)
    a_np, b_np, ct_np = rng.standard_normal(3), rng.standard_normal(4), rng.standard_normal((3, 4))
    out, vjp_fn = vjp(lambda a, b: xp.sin(xp.expand_dims(a, axis=1) * b), xp.asarray(a_np), xp.asarray(b_np))
    outer = a_np[:, None] * b_np
    np.testing.assert_allclose(np.asarray(out), np.sin(outer), rtol=1e-15)
    ga, gb = vjp_fn(xp.asarray(ct_np))
    d = ct_np * np.cos(outer)
    np.testing.assert_allclose(np.asarray(ga), d @ b_np, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(gb), a_np @ d, rtol=1e-13)
    # a Python scalar cotangent means that value everywhere; vjp_fn can be called again
    ga, gb = vjp_fn(2.0)
    np.testing.assert_allclose(np.asarray(ga), (2.0 * np.cos(outer)) @ b_np, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(gb), a_np @ (2.0 * np.cos(outer)), rtol=1e-13)
    with pytest.raises(ValueError, match="cotangent shape"):
        vjp_fn(xp.ones((4, 3)))


def test_gradients_neon_example():
    """neon's Autodiff doc: f = x0 * x0 + x0 * x1 gives [2 * x0 + x1, x0]."""
    x0 = xp.asarray([[1.0, 2.0], [3.0, 4.0]])
    x1 = xp.asarray([[5.0, -6.0], [7.0, 0.5]])
    f = x0 * x0 + x0 * x1
    g0, g1 = gradients(f, [x0, x1])
    np.testing.assert_array_equal(np.asarray(g0), 2.0 * np.asarray(x0) + np.asarray(x1))
    np.testing.assert_array_equal(np.asarray(g1), np.asarray(x0))
    ct = xp.asarray([[1.0, 0.0], [2.0, -1.0]])
    g0, g1 = gradients(f, [x0, x1], ct)
    np.testing.assert_array_equal(np.asarray(g0), np.asarray(ct) * (2.0 * np.asarray(x0) + np.asarray(x1)))
    np.testing.assert_array_equal(np.asarray(g1), np.asarray(ct) * np.asarray(x0))
    with pytest.raises(ValueError, match="cotangent shape"):
        gradients(f, [x0], xp.ones((2,)))


def test_identity_separates_one_use_of_an_array_from_the_others():
    # f = x * y with y = identity(x): the gradient wrt y is x's value, wrt x
    # the full derivative 2x (the path through y flows on to x).
    with retain_history():
        x = xp.asarray([1.5, -2.0, 3.0])
        y = identity(x)
        f = xp.sum(x * y)
        gx, gy = gradients(f, [x, y])
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
    np.testing.assert_array_equal(np.asarray(gy), np.asarray(x))
    np.testing.assert_array_equal(np.asarray(gx), 2.0 * np.asarray(x))


def test_unrelated_inputs_get_zeros():
    x, z = xp.asarray([1.0, 2.0]), xp.asarray(np.array([[3.0]], dtype=np.float32))
    gx, gz = gradients(xp.sum(x * x), [x, z])
    np.testing.assert_array_equal(np.asarray(gx), [2.0, 4.0])
    assert gz.shape == (1, 1) and gz.dtype == xp.float32
    np.testing.assert_array_equal(np.asarray(gz), [[0.0]])
    ga, gb = grad(lambda a, b: xp.sum(b * b), argnums=(0, 1))(x, x)
    np.testing.assert_array_equal(np.asarray(ga), [0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(gb), [2.0, 4.0])
    # a constant function
    np.testing.assert_array_equal(np.asarray(grad(lambda a: xp.sum(xp.ones(3)))(x)), [0.0, 0.0])


def test_higher_order():
    points = np.array([-2.0, -0.3, 0.0, 0.7, 2.5])
    d2 = grad(grad(xp.sin))
    d3 = grad(grad(grad(xp.sin)))
    for p in points:
        np.testing.assert_allclose(float(d2(xp.asarray(p))), -math.sin(p), atol=1e-15)
        np.testing.assert_allclose(float(d3(xp.asarray(p))), -math.cos(p), atol=1e-15)
    # a Hessian-vector product of sum(x^3): 6 x v
    x_np, v_np = np.array([1.0, -2.0, 0.5]), np.array([0.5, 1.0, -3.0])
    hv = grad(lambda x: xp.sum(grad(lambda z: xp.sum(z ** 3))(x) * xp.asarray(v_np)))(xp.asarray(x_np))
    np.testing.assert_allclose(np.asarray(hv), 6.0 * x_np * v_np, rtol=1e-15)
    # a mixed partial through a closure: d/dx d/dy (x y^2) = 2 y
    y0 = xp.asarray(1.5)
    np.testing.assert_allclose(float(grad(lambda x: grad(lambda y: x * y * y)(y0))(xp.asarray(4.0))), 3.0)
    # gradients() of a gradient
    x = xp.asarray([0.3, 1.1])
    (g,) = gradients(xp.sum(xp.exp(x * 2.0)), [x])
    (h,) = gradients(xp.sum(g), [x])
    np.testing.assert_allclose(np.asarray(h), 4.0 * np.exp(2.0 * np.asarray(x)), rtol=1e-15)


def test_same_array_passed_twice():
    x_np = np.array([1.0, -2.0, 3.0])
    x = xp.asarray(x_np)
    ga, gb = grad(lambda a, b: xp.sum(a * b * b), argnums=(0, 1))(x, x)
    np.testing.assert_array_equal(np.asarray(ga), x_np ** 2)
    np.testing.assert_array_equal(np.asarray(gb), 2 * x_np ** 2)
    # one argument used twice accumulates
    np.testing.assert_array_equal(np.asarray(grad(lambda a: xp.sum(a * a))(x)), 2 * x_np)
    g1, g2 = gradients(xp.sum(x * x), [x, x])
    np.testing.assert_array_equal(np.asarray(g1), 2 * x_np)
    np.testing.assert_array_equal(np.asarray(g2), 2 * x_np)
    _, vjp_fn = vjp(lambda a, b: a * b, x, x)
    ga, gb = vjp_fn(1.0)
    np.testing.assert_array_equal(np.asarray(ga), x_np)
    np.testing.assert_array_equal(np.asarray(gb), x_np)


def test_f_rebinding_its_argument():
    """x *= 2 and x[k] = v inside f rebind the argument; the gradient is still by the input."""
    x_np = np.array([1.0, 2.0, 3.0])

    def scaled(x):
        x *= 2.0
        return xp.sum(x * x)

    def assigned(x):
        x[0] = 5.0
        return xp.sum(x * 3.0)
    np.testing.assert_array_equal(np.asarray(grad(scaled)(xp.asarray(x_np))), 8.0 * x_np)
    np.testing.assert_array_equal(np.asarray(grad(assigned)(xp.asarray(x_np))), [0.0, 3.0, 3.0])
    (g,) = vjp(assigned, xp.asarray(x_np))[1](1.0)
    np.testing.assert_array_equal(np.asarray(g), [0.0, 3.0, 3.0])


CHAIN = 10_000   # ops: 5000 sin, 5000 multiply


def _chain(x):
    for _ in range(CHAIN // 2):
        x = xp.sin(x) * 1.0001
    return x


def _chain_derivative(x_np):
    d = np.ones_like(x_np)
    for _ in range(CHAIN // 2):
        d = d * np.cos(x_np) * 1.0001
        x_np = np.sin(x_np) * 1.0001
    return d


def test_long_chain_without_recursion():
    assert sys.getrecursionlimit() < CHAIN
    x_np = np.array([0.3, 0.5])
    expected = _chain_derivative(x_np)
    g = grad(lambda x: xp.sum(_chain(x)))(xp.asarray(x_np))
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-10)
    # gradients() on a chain built (not forced) by the caller: built inside retain_history, since
    # arrayx realizes a chain this deep by itself every 2000 nodes
    x = xp.asarray(x_np)
    with retain_history():
        y = xp.sum(_chain(x))
    (g,) = gradients(y, [x])
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-10)


def test_gradients_on_an_unevaluated_chain_below_the_realization_depth():
    x_np = np.array([0.3, 0.5])
    x = xp.asarray(x_np)
    y = x
    for _ in range(500):
        y = xp.sin(y) * 1.0001
    (g,) = gradients(y, [x], xp.asarray([1.0, 2.0]))
    d = np.ones(2)
    for _ in range(500):
        d = d * np.cos(x_np) * 1.0001
        x_np = np.sin(x_np) * 1.0001
    np.testing.assert_allclose(np.asarray(g), d * [1.0, 2.0], rtol=1e-12)


def test_force_points_inside_f():
    x_np = np.array([0.2, -0.4, 1.0])

    def f(x):
        y = xp.exp(x)
        s = float(xp.sum(y))                     # a Python float: a constant for autodiff
        assert np.asarray(y).shape == (3,)       # another force point
        z = y * 2.0 if bool(xp.max(y) > 1.0) else y
        xp.eval(z)
        return xp.sum(z * y) / s + xp.sum(y)
    value, g = value_and_grad(f)(xp.asarray(x_np))
    y = np.exp(x_np)
    s = np.sum(y)
    np.testing.assert_allclose(float(value), np.sum(2 * y * y) / s + s, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(g), 4 * y * y / s + y, rtol=1e-14)


# ---------------------------------------------------------------- errors

def test_errors():
    f = lambda a, b: xp.sum(a * b)  # noqa: E731
    x = xp.asarray([1.0, 2.0])
    with pytest.raises(TypeError, match="argument 1.*int64"):
        grad(f, argnums=(0, 1))(x, xp.asarray([1, 2]))
    with pytest.raises(TypeError, match="argument 0.*bool"):
        grad(f)(xp.asarray([True, False]), x)
    with pytest.raises(TypeError, match="argument 0.*complex128"):
        grad(f)(xp.asarray([1j, 2.0]), x)
    with pytest.raises(TypeError, match="argument 0.*arrayx array"):
        grad(f)(np.array([1.0, 2.0]), x)
    with pytest.raises(TypeError, match="primals\\[0\\].*int64"):
        vjp(xp.sin, xp.asarray([1, 2]))
    with pytest.raises(TypeError, match="wrt\\[1\\].*complex"):
        gradients(xp.sum(x), [x, xp.asarray([1j])])
    with pytest.raises(TypeError, match="0-d"):
        grad(lambda a: a * 2.0)(x)
    with pytest.raises(TypeError, match="0-d"):
        grad(lambda a: 1.0)(x)
    with pytest.raises(TypeError, match="real floating"):
        grad(lambda a: xp.sum(xp.astype(a, xp.int64)))(x)
    out, vjp_fn = vjp(lambda a: a * 2.0, x)
    with pytest.raises(ValueError, match="cotangent shape"):
        vjp_fn(xp.ones((3,)))
    with pytest.raises(ValueError, match="cotangent shape"):
        gradients(x * 2.0, [x], xp.ones(()))


def test_gradients_warns_when_a_force_point_freed_the_path():
    # Past 2000 nodes arrayx realizes the chain by itself, and outside
    # retain_history that frees its history: the gradient cannot reach x.
    x = xp.asarray([0.3, 0.5])
    y = xp.sum(_chain(x))
    with pytest.warns(UserWarning, match="carry no history"):
        (g,) = gradients(y, [x])
    assert np.asarray(g).tolist() == [0.0, 0.0]


def test_gradients_accepts_a_python_number_as_cotangent():
    x = xp.asarray([1.0, 2.0])
    (g,) = gradients(x * x, [x], 3.0)
    np.testing.assert_array_equal(np.asarray(g), [6.0, 12.0])
    with pytest.raises(TypeError, match="gradients: cotangent"):
        gradients(x * x, [x], "3")


def test_primitive_without_a_rule_on_the_path_is_an_error():
    x = xp.asarray([0.1, 0.2, 0.3, 0.4])
    with pytest.raises(TypeError, match="cannot differentiate through irfftn"):
        grad(lambda v: xp.sum(xp.fft.irfft(xp.fft.rfft(v), n=4)))(x)


def test_complex_intermediate_on_the_path_is_an_error():
    x = xp.asarray([0.1, 0.2])
    with pytest.raises(TypeError, match="complex intermediates"):
        grad(lambda v: xp.sum(xp.real(xp.astype(v, xp.complex128) * 2.0)))(x)


def test_complex_constants_off_the_path_are_fine():
    c = xp.asarray([1 + 1j, 2 - 1j])
    x = xp.asarray([0.5, 0.25])
    g = grad(lambda v: xp.sum(v * xp.abs(c)))(x)
    np.testing.assert_allclose(np.asarray(g), np.abs([1 + 1j, 2 - 1j]), rtol=1e-15)  # |c| exactly, one rounding


def test_repeat_with_array_counts_is_differentiable():
    x = xp.asarray([1.0, 2.0, 3.0])
    counts = xp.asarray([2, 0, 3])
    g = grad(lambda v: xp.sum(xp.repeat(v, counts) * xp.arange(5.0)))(x)
    np.testing.assert_array_equal(np.asarray(g), [0.0 + 1.0, 0.0, 2.0 + 3.0 + 4.0])


def test_vjp_function_can_be_called_many_times():
    # its forward intermediates are pinned: later force points must not turn
    # them into leaves, or the next call would find no path to the primals
    a_np = np.linspace(-1.0, 1.0, 4)
    out, vjp_fn = vjp(lambda a: xp.sin(a * a) * a, xp.asarray(a_np))
    expected = np.cos(a_np * a_np) * 2 * a_np * a_np + np.sin(a_np * a_np)
    for scale in (1.0, 2.0, 3.0, 4.0):
        (g,) = vjp_fn(scale)
        np.testing.assert_allclose(np.asarray(g), scale * expected, rtol=1e-14)


def test_a_training_loop_without_eval_costs_what_it_costs_with_eval():
    # grad evaluates its lazy arguments before its retained scope: w becomes a
    # leaf each step instead of a chain that every call would compute again.
    rng = np.random.default_rng(0)
    x = xp.asarray(rng.standard_normal((32, 5)))
    target = xp.asarray(rng.standard_normal((32, 1)))

    def loss(w, x):
        return xp.mean((x @ w - target) ** 2)

    finals, steps = [], []
    for explicit in (False, True):
        w = xp.zeros((5, 1))
        xp.debug.reset()
        for _ in range(100):
            w = w - 0.05 * grad(loss)(w, x)
            if explicit:
                xp.eval(w)
        finals.append(np.asarray(w))
        steps.append(xp.debug.counters["steps_run"])
    np.testing.assert_array_equal(finals[0], finals[1])
    assert steps[0] <= steps[1] + 1   # was 80x more: the update chain recomputed in every call
