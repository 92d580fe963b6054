"""Pytrees (tuples, lists, dicts, namedtuples of arrays) through grad,
value_and_grad, vjp and jit: gradients come back in the arguments' structure,
as JAX users expect."""

from collections import namedtuple

import numpy as np
import pytest

import arrayx as xp
from arrayx import debug, pytree
from arrayx.autodiff import grad, value_and_grad, vjp
from arrayx.scheduler import schedule

Params = namedtuple("Params", ["w", "b"])


def mlp_loss(params, x):
    hidden = xp.tanh(x @ params["layers"][0]["w"] + params["layers"][0]["b"])
    return xp.sum((hidden @ params["layers"][1]["w"]) ** 2)


def numpy_params(rng):
    return {"layers": [{"w": rng.standard_normal((3, 4)), "b": rng.standard_normal(4)},
                       {"w": rng.standard_normal((4, 2))}],
            "scale": None}


def to_arrayx(tree):
    leaves, treedef = pytree.flatten(tree)
    return treedef.unflatten([xp.asarray(leaf) for leaf in leaves])


def numpy_loss(p, x):
    hidden = np.tanh(x @ p["layers"][0]["w"] + p["layers"][0]["b"])
    return np.sum((hidden @ p["layers"][1]["w"]) ** 2)


def finite_difference(f, leaf, eps=1e-6):
    """Central differences of scalar f over each element of `leaf` (changed in place)."""
    g = np.zeros_like(leaf)
    for i in np.ndindex(leaf.shape):
        saved = leaf[i]
        leaf[i] = saved + eps
        up = f()
        leaf[i] = saved - eps
        down = f()
        leaf[i] = saved
        g[i] = (up - down) / (2 * eps)
    return g


def test_flatten_and_unflatten_round_trip_every_container():
    tree = {"a": (1, [2, None, 3]), "b": Params(w=4, b={"c": 5}), "d": []}
    leaves, treedef = pytree.flatten(tree)
    assert leaves == [1, 2, 3, 4, 5]
    assert treedef.paths == ("['a'][0]", "['a'][1][0]", "['a'][1][2]", "['b'].w", "['b'].b['c']")
    rebuilt = treedef.unflatten([10, 20, 30, 40, 50])
    assert rebuilt == {"a": (10, [20, None, 30]), "b": Params(w=40, b={"c": 50}), "d": []}
    assert type(rebuilt["b"]) is Params and list(rebuilt) == ["a", "b", "d"]
    assert pytree.flatten({"a": (0, [0, None, 0]), "b": Params(0, {"c": 0}), "d": []})[1] == treedef
    assert pytree.flatten({"a": [0, [0, None, 0]], "b": Params(0, {"c": 0}), "d": []})[1] != treedef
    with pytest.raises(ValueError, match="unflatten: the structure has 5 leaves, got 2"):
        treedef.unflatten([1, 2])


def test_grad_of_a_nested_dict_matches_finite_differences_in_the_same_structure():
    rng = np.random.default_rng(0)
    p_np, x_np = numpy_params(rng), rng.standard_normal((5, 3))
    g = grad(mlp_loss)(to_arrayx(p_np), xp.asarray(x_np))
    assert g["scale"] is None and set(g) == {"layers", "scale"}
    assert isinstance(g["layers"], list) and set(g["layers"][1]) == {"w"}
    for expected_leaf, got in zip(pytree.flatten(p_np)[0], pytree.flatten(g)[0]):
        expected = finite_difference(lambda: numpy_loss(p_np, x_np), expected_leaf)
        # central differences with eps 1e-6 on O(1) values: truncation ~1e-12, rounding ~1e-10
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6, atol=1e-8)


def test_grad_of_a_tree_equals_grad_of_its_leaves_passed_flat():
    rng = np.random.default_rng(1)
    w, b, x = (xp.asarray(rng.standard_normal(s)) for s in ((3, 2), (2,), (4, 3)))

    def flat_loss(w, b, x):
        return xp.sum(xp.exp(x @ w + b))
    g_tree = grad(lambda p, x: flat_loss(p.w, p.b, x))(Params(w, b), x)
    g_w, g_b = grad(flat_loss, argnums=(0, 1))(w, b, x)
    assert type(g_tree) is Params
    # the same graph either way: the same kernels, bit for bit
    np.testing.assert_array_equal(np.asarray(g_tree.w), np.asarray(g_w))
    np.testing.assert_array_equal(np.asarray(g_tree.b), np.asarray(g_b))


def test_tuple_argnums_returns_a_tuple_of_trees_and_value_and_grad_its_value():
    a, b = xp.asarray([1.0, 2.0]), xp.asarray([3.0, -1.0])

    def f(pair, scale, c):
        return xp.sum(pair[0] * pair[1] * c["k"]) * scale
    value, (g_pair, g_c) = value_and_grad(f, argnums=(0, 2))([a, b], 2.0, {"k": b})
    assert float(value) == 2.0 * (1.0 * 3.0 * 3.0 + 2.0 * -1.0 * -1.0)
    assert isinstance(g_pair, list) and list(g_c) == ["k"]
    # d/da = 2 b c, d/db = 2 a c, d/dc = 2 a b (c is b): exact in binary
    np.testing.assert_array_equal(np.asarray(g_pair[0]), [18.0, 2.0])
    np.testing.assert_array_equal(np.asarray(g_pair[1]), [6.0, -4.0])
    np.testing.assert_array_equal(np.asarray(g_c["k"]), [6.0, -4.0])


def test_vjp_takes_tree_primals_and_a_cotangent_of_the_output_structure():
    rng = np.random.default_rng(2)
    a_np, b_np = rng.standard_normal(3), rng.standard_normal(3)
    ct_sin, ct_prod = rng.standard_normal(3), rng.standard_normal(3)
    out, vjp_fn = vjp(lambda p: {"sin": xp.sin(p["a"]), "prod": (p["a"] * p["b"],)},
                      {"a": xp.asarray(a_np), "b": xp.asarray(b_np)})
    np.testing.assert_array_equal(np.asarray(out["sin"]), np.sin(a_np))
    (g,) = vjp_fn({"sin": xp.asarray(ct_sin), "prod": (xp.asarray(ct_prod),)})
    # one rounding per product and sum
    np.testing.assert_allclose(np.asarray(g["a"]), ct_sin * np.cos(a_np) + ct_prod * b_np, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(g["b"]), ct_prod * a_np, rtol=1e-15)
    (g,) = vjp_fn({"sin": 0.0, "prod": (1.0,)})    # numbers mean that value everywhere
    np.testing.assert_array_equal(np.asarray(g["b"]), a_np)
    with pytest.raises(ValueError, match="vjp: the cotangent's structure"):
        vjp_fn({"sin": xp.asarray(ct_sin)})
    with pytest.raises(ValueError, match=r"vjp: cotangent\['prod'\]\[0\] shape \(2,\)"):
        vjp_fn({"sin": xp.asarray(ct_sin), "prod": (xp.ones(2),)})


def test_non_array_leaves_are_named_by_their_path():
    with pytest.raises(TypeError, match=r"^grad: argument 0\['w'\] is a str; expected an arrayx array"):
        grad(lambda p: xp.sum(p["b"]))({"w": "weights", "b": xp.ones(2)})
    with pytest.raises(TypeError, match=r"^grad: argument 1\[0\] has dtype int64"):
        grad(lambda x, p: xp.sum(x), argnums=1)(xp.ones(2), [xp.asarray([1, 2])])
    with pytest.raises(TypeError, match=r"^vjp: primals\[0\]\.b is a float"):
        vjp(lambda p: p.w, Params(xp.ones(2), 1.0))
    with pytest.raises(TypeError, match=r"^vjp: f must return .*; output\[1\] is a int"):
        vjp(lambda x: (x, 1), xp.ones(2))
    with pytest.raises(TypeError, match=r"^jit\(<lambda>\): argument p\['n'\] is a str"):
        xp.jit(lambda p: p["x"])({"x": xp.ones(2), "n": "three"})
    with pytest.raises(TypeError, match=r"^jit\(<lambda>\): .*; result\['n'\] is a int"):
        xp.jit(lambda x: {"x": x, "n": 3})(xp.ones(2))


def test_jit_takes_and_returns_trees_and_traces_once_per_structure():
    schedule.clear_plan_cache()
    calls = []

    @xp.jit
    def step(state, batch):
        calls.append(1)
        w = state["w"] - 0.5 * batch[0]
        return {"w": w, "count": state["count"] + 1.0}, Params(w=xp.sum(w), b=batch[1])

    a_np, b_np = np.linspace(0.0, 1.0, 4), np.linspace(2.0, 3.0, 4)
    state = {"w": xp.asarray(a_np), "count": xp.asarray(0.0)}
    new_state, summary = step(state, (xp.asarray(b_np), xp.asarray(1.0)))
    assert list(new_state) == ["w", "count"] and type(summary) is Params
    np.testing.assert_array_equal(np.asarray(new_state["w"]), a_np - 0.5 * b_np)
    assert float(new_state["count"]) == 1.0 and float(summary.b) == 1.0
    np.testing.assert_allclose(float(summary.w), np.sum(a_np - 0.5 * b_np), rtol=1e-15)
    step(new_state, (xp.asarray(a_np), xp.asarray(2.0)))
    assert len(calls) == 1
    step(new_state, [xp.asarray(a_np), xp.asarray(2.0)])      # a list, not a tuple: a new structure
    assert len(calls) == 2


def test_jit_tells_a_bare_array_from_a_tree_of_one():
    """A bare array argument (its signature entry taken without a tree walk) and the
    same array in a one-element tuple or list are three structures: three traces,
    each returning what its own structure gives."""
    calls = []

    @xp.jit
    def first(a):
        calls.append(1)
        return (a if isinstance(a, xp.asarray(0.0).__class__) else a[0]) * 2.0

    x = xp.asarray([1.0, 2.0])
    for arg in (x, (x,), [x], x, (x,)):
        np.testing.assert_array_equal(np.asarray(first(arg)), [2.0, 4.0])
    assert len(calls) == 3
    np.testing.assert_array_equal(np.asarray(first(xp.asarray([3.0]))), [6.0])   # a new shape: traced again
    assert len(calls) == 4


def test_jit_static_argnums_beside_tree_arguments():
    @xp.jit
    def scaled(p, n):
        return [p["x"] * n]
    fast = xp.jit(scaled.__wrapped__, static_argnums=1)
    (out,) = fast({"x": xp.asarray([1.0, 2.0])}, 3)
    np.testing.assert_array_equal(np.asarray(out), [3.0, 6.0])


def test_a_jitted_training_step_over_a_parameter_dict_matches_the_plain_one():
    rng = np.random.default_rng(3)
    x = xp.asarray(rng.standard_normal((16, 3)))
    params = to_arrayx(numpy_params(rng))

    def update(p, x):
        g = grad(mlp_loss)(p, x)
        new = [{k: layer[k] - 0.01 * g_layer[k] for k in layer} for layer, g_layer in zip(p["layers"], g["layers"])]
        return {"layers": new, "scale": None}

    fast = xp.jit(update)
    p_fast = p_plain = params
    for _ in range(5):
        p_fast, p_plain = fast(p_fast, x), update(p_plain, x)
    for got, expected in zip(pytree.flatten(p_fast)[0], pytree.flatten(p_plain)[0]):
        # the same kernels; summation order inside fused reductions may differ
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-13)
    debug.reset()
    fast(p_fast, x)
    assert debug.counters["plans_built"] == 0
