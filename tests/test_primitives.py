"""The primitive table is the single source of truth: every table keyed by
primitive name agrees with it, every executable primitive has a CPU kernel,
every primitive over floating inputs has a VJP or is listed as not
differentiable, and the reductions' monoids give NumPy's reductions."""

import numpy as np
import pytest

import arrayx as xp
from arrayx import dtypes as dt
from arrayx._cpu import special
from arrayx._cpu.kernels import DYNAMIC, IMPLS, REDUCERS, UFUNCS, UPDATES
from arrayx._gpu.executor import GPUExecutor
from arrayx.renderer.cstyle import EXPRESSIONS, HALF_EXPRESSIONS
from arrayx.autodiff.registry import NON_DIFFERENTIABLE, VJP
from arrayx.graph.apply import apply, apply_multi
from arrayx.graph.primitives import (BLOCK_REDUCE_OPS, BOUND, FAILED, FUSED, LEAF, PRIMITIVES, SELECT, STATE,
                                     reduced_shape)

P = PRIMITIVES
# Realized data, values bound by a computation, state, fused groups and
# failed computations are not run as primitives of their own.
NOT_EXECUTED = frozenset(name for name, prim in P.items()
                         if prim.kind in (BOUND, STATE, FUSED, FAILED) or name in ("buffer", "evaluated"))
EXECUTABLE = sorted(frozenset(P) - NOT_EXECUTED)

# Primitives over floating inputs that have no VJP yet: differentiating
# through one is an error naming it. A new one is a visible diff here.
WITHOUT_VJP = frozenset({
    "imag", "eigvals", "eig", "fftn", "ifftn", "rfftn", "irfftn", "hfft", "ihfft",
    "unique_all", "unique_counts", "unique_inverse", "unique_values", "repeat",
})

# Primitives the GPU executor leaves to the CPU (with transfers): neither a
# CUDA expression nor a view, matmul or block reduction of its own. A new one
# is a visible diff here.
GPU_LEAVES_TO_CPU = frozenset({
    "argmax", "argmin", "argsort", "cholesky", "concat", "cumulative_prod", "cumulative_sum", "det",
    "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "fftn", "full", "gather", "hfft", "ifftn", "ihfft",
    "inv", "iota", "irfftn", "isin", "nonzero", "pad", "pinv", "qr", "repeat", "rfftn", "scatter",
    "scatter_add", "searchsorted", "select", "slogdet", "solve", "sort", "svd", "svdvals", "take",
    "take_along_axis", "unique_all", "unique_counts", "unique_inverse", "unique_values", "update_slice",
})


def _floating_primitives():
    """Primitives with inputs that may be floating (leaves have none; a
    `select` passes its multi-output node's cotangents, see autodiff.backward)."""
    floating = dt.CATEGORIES["floating"]
    return sorted(name for name in EXECUTABLE
                  if P[name].kind not in (LEAF, SELECT) and (P[name].accepts is None or P[name].accepts & floating))


@pytest.mark.parametrize("name", EXECUTABLE)
def test_executable_primitive_has_a_cpu_kernel(name):
    assert name in IMPLS or name in DYNAMIC or name in UPDATES, f"primitive {name} has no CPU kernel"


@pytest.mark.parametrize("name", _floating_primitives())
def test_floating_primitive_has_a_vjp_or_is_listed_non_differentiable(name):
    if name in WITHOUT_VJP:
        assert name not in VJP and name not in NON_DIFFERENTIABLE, f"{name} is pinned as without a VJP: unpin it"
    else:
        assert name in VJP or name in NON_DIFFERENTIABLE, \
            f"primitive {name} has neither a VJP nor a place in autodiff.rules.NON_DIFFERENTIABLE"


def test_no_primitive_has_both_a_vjp_and_a_place_in_the_non_differentiable_list():
    assert not set(VJP) & NON_DIFFERENTIABLE


def test_gpu_leaves_exactly_the_pinned_primitives_to_the_cpu():
    # The GPU executor's own answer (its `runs` reads no device state), asked
    # for every dtype the primitive accepts; the result dtype is what the
    # namespace would build (the elementwise result table, else the input's).
    gpu = object.__new__(GPUExecutor)
    runs_on_gpu = set()
    for name in EXECUTABLE:
        prim = P[name]
        for d in prim.accepts or dt.ALL:
            if gpu.runs(prim, (d,), prim.result[d] if prim.result else d):
                runs_on_gpu.add(name)
                break
    assert set(EXECUTABLE) - runs_on_gpu == GPU_LEAVES_TO_CPU


@pytest.mark.parametrize("table, label", [
    (IMPLS, "_cpu.kernels.IMPLS"), (DYNAMIC, "_cpu.kernels.DYNAMIC"), (UPDATES, "_cpu.kernels.UPDATES"),
    (UFUNCS, "_cpu.kernels.UFUNCS"), (REDUCERS, "_cpu.kernels.REDUCERS"), (special.SPECIAL, "_cpu.special.SPECIAL"),
    (EXPRESSIONS, "renderer.cstyle.EXPRESSIONS"), (HALF_EXPRESSIONS, "renderer.cstyle.HALF_EXPRESSIONS"),
    (VJP, "autodiff VJP"), (NON_DIFFERENTIABLE, "autodiff NON_DIFFERENTIABLE"),
    (WITHOUT_VJP, "WITHOUT_VJP"), (GPU_LEAVES_TO_CPU, "GPU_LEAVES_TO_CPU"),
])
def test_table_keys_are_primitive_names(table, label):
    stale = sorted(set(table) - set(P))
    assert not stale, f"{label} has entries for no primitive: {stale}"


# --- reductions: the monoid is the one source of their combiners ----------

def _dtypes_of(name):
    return [d for d in dt.CATEGORIES["numeric"] | {dt.bool} if d in P[name].accepts
            and not (name in ("sum", "prod") and d == dt.bool)]


@pytest.mark.parametrize("name", sorted(BLOCK_REDUCE_OPS))
def test_cpu_reducer_is_the_ufunc_of_the_monoid_primitive(name):
    assert REDUCERS[name] is UFUNCS[P[name].monoid.op]


@pytest.mark.parametrize("name, reference", [("sum", np.sum), ("prod", np.prod), ("any", np.any), ("all", np.all)])
def test_monoid_identity_is_numpy_reduction_over_no_elements(name, reference):
    for dtype in _dtypes_of(name):
        expected = reference(np.zeros(0, dtype.dtype))
        got = P[name].monoid.identity_of(dt.bool if name in ("any", "all") else dtype)
        assert got == expected and np.signbit(np.real(got)) == np.signbit(np.real(expected)), (name, dtype)


@pytest.mark.parametrize("name", ["max", "min"])
def test_monoid_identity_of_max_and_min_leaves_every_value_unchanged(name):
    for dtype in _dtypes_of(name):
        if dtype.kind == "f":
            values = np.array([-np.inf, -1.5, 0.0, 2.5, np.inf], dtype.dtype)
        else:
            bounds = np.iinfo(dtype.dtype)
            values = np.array([bounds.min, 0, bounds.max], dtype.dtype)
        identity = P[name].monoid.identity_of(dtype)
        assert identity.dtype == dtype.dtype
        np.testing.assert_array_equal(REDUCERS[name](identity, values), values)


def test_block_reductions_are_the_reductions_with_a_monoid():
    assert BLOCK_REDUCE_OPS == {"sum", "prod", "max", "min", "any", "all"}
    assert all(P[name].monoid is None for name in ("argmax", "argmin"))


@pytest.mark.parametrize("shape, axes", [((2, 3, 4), (1,)), ((2, 3, 4), (0, 2)), ((5,), (0,)), ((2, 0, 3), (1,)),
                                         ((3, 4), ())])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduced_shape_is_numpy_reduction_shape(shape, axes, keepdims):
    assert reduced_shape(shape, axes, keepdims) == np.sum(np.ones(shape), axis=axes, keepdims=keepdims).shape


# --- graph.apply: the one place rules and dtype checks run ----------------

def _node(values, dtype=None):
    return xp.asarray(values, dtype=dtype)._node


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((), (3,)), ((2, 3), ()), ((2, 1), (1, 3)), ((3,), (2, 3))])
def test_apply_elementwise_gives_the_rule_shape_and_dtype(shapes):
    inputs = tuple(_node(np.ones(s, np.float32)) for s in shapes)
    for name in ("add", "less", "atan2"):
        node = apply(P[name], inputs)
        expected = (np.broadcast_shapes(*shapes), P[name].result[dt.float32])
        assert (node.shape, node.dtype) == expected == P[name].rule(P[name], inputs, ())


@pytest.mark.parametrize("prim, inputs, attrs, message", [
    ("exp", lambda: (_node([1, 2]),), (), "exp: x has dtype int64; expected a floating dtype"),
    ("sum", lambda: (_node([True]),), ((0,), False), "mine: x has dtype bool; expected a numeric dtype"),
    ("sort", lambda: (_node([1j]),), (0, False), "mine: x has dtype complex128; expected a real numeric dtype"),
    ("cholesky", lambda: (_node(np.ones((2, 2), np.float16)),), (False,),
     "mine: x has dtype float16; expected a lapack floating dtype"),
    ("searchsorted", lambda: (_node([1.0]), _node([True])), ("left",),
     "mine: x2 has dtype bool; expected a real numeric dtype"),
])
def test_apply_checks_the_primitive_category_and_names_the_function(prim, inputs, attrs, message):
    name = None if prim == "exp" else "mine"
    with pytest.raises(TypeError, match=f"^{message}$"):
        apply(P[prim], inputs(), attrs, name)


def test_apply_multi_checks_the_category_and_builds_one_select_per_output():
    with pytest.raises(TypeError, match="^linalg.qr: x has dtype int64; expected a lapack floating dtype$"):
        apply_multi(P["qr"], (_node(np.ones((3, 2), np.int64)),), ("reduced",), "linalg.qr")
    q, r = apply_multi(P["qr"], (_node(np.ones((3, 2))),), ("reduced",))
    assert (q.op.name, q.shape, r.shape) == ("select", (3, 2), (2, 2))


@pytest.mark.parametrize("fn, dtype, message", [
    (xp.max, xp.bool, "max: x has dtype bool; expected a real numeric dtype"),
    (xp.argmin, xp.complex64, "argmin: x has dtype complex64; expected a real numeric dtype"),
    (xp.sort, xp.bool, "sort: x has dtype bool; expected a real numeric dtype"),
    (xp.cumulative_sum, xp.bool, None),
])
def test_namespace_dtype_errors_come_from_the_primitive_category(fn, dtype, message):
    x = xp.zeros((3,), dtype=dtype)
    if message is None:   # cumulative_sum accumulates bool in the default integer dtype, as NumPy does
        np.testing.assert_array_equal(np.asarray(fn(x)), np.cumsum(np.zeros(3, bool)))
        return
    with pytest.raises(TypeError, match=f"^{message}$"):
        fn(x)
