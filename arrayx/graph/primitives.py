"""The primitive table: every operation an executor must implement.

Each primitive has a kind, the dtype category its inputs accept, a rule that
infers the output shape and dtype from the input nodes and the static
attributes (applied by `graph.apply`), and for a reduction its monoid. Standard functions validate user input (naming themselves in their
errors) and then build nodes of these primitives; executors implement exactly
these and nothing else.

Elementwise primitives broadcast their inputs NumPy-style (right-aligned) and
require equal input dtypes (the namespace inserts `astype` nodes to promote).
"""

import math

import numpy as np

from .. import dtypes as dt


class Monoid:
    """How a reduction folds its points: the binary elementwise primitive
    `op` applied from `identity`, a Python number or bool; -inf and +inf
    stand for the dtype's lowest and highest value (its integer bounds for
    integer dtypes). Executors derive their reducers and combiners from it."""

    __slots__ = ("op", "identity")

    def __init__(self, op, identity):
        self.op = op
        self.identity = identity

    def identity_of(self, dtype):
        """The identity as a NumPy scalar of `dtype` (a dtypes.DType). A float
        sum starts from +0.0, as NumPy's does: a sum of -0.0 is +0.0."""
        if dtype.kind in "iu" and math.isinf(self.identity):
            bounds = np.iinfo(dtype.dtype)
            return dtype.type(bounds.min if self.identity < 0 else bounds.max)
        return dtype.type(self.identity)


class Primitive:
    """`category` names the dtype category the inputs accept (None: any
    dtype; `graph.apply` checks it) and `accepts` is its set of dtypes.
    `result`, for the elementwise primitives whose output dtype follows from
    the input dtype alone: {accepted input dtype: output dtype}. Their rule
    reads it, and so does `graph.apply.apply`'s fast path for operands of the
    result's shape, which skips the rule call. `monoid`, for the reductions
    that fold with a binary elementwise primitive (see Monoid); None else.
    `attr_names` names the static attributes, in order. `may_fail`: whether
    its kernels raise on some values of its inputs (a singular matrix, an
    index out of bounds, a factorization that does not converge), with a
    ValueError or IndexError, at the force point that computes it: its nodes
    keep the user's call site (graph.apply), which that error names."""

    __slots__ = ("name", "kind", "category", "accepts", "rule", "result", "monoid", "attr_names", "may_fail")

    def __init__(self, name, kind, accepts, rule, result=None, monoid=None, attr_names=(), may_fail=False):
        self.name = name
        self.attr_names = attr_names
        self.may_fail = may_fail
        self.kind = kind
        self.category = accepts
        self.accepts = dt.CATEGORIES[accepts] if accepts else None
        self.rule = rule
        self.result = {d: result(d) for d in self.accepts or dt.ALL} if result else None
        self.monoid = monoid

    def __reduce__(self):
        # Pickled by name (a dask task sent to a worker process): the worker's
        # primitive is the one object of that name, as here.
        return _by_name, (self.name,)

    def __repr__(self):
        return f"<primitive {self.name}>"


def _by_name(name):
    return PRIMITIVES[name]


def broadcast_shapes(name, *shapes):
    """The broadcast of `shapes`, or a ValueError naming `name`."""
    out = list(shapes[0])
    for shape in shapes[1:]:
        if len(shape) > len(out):
            out = [1] * (len(shape) - len(out)) + out
        i = len(out) - len(shape)   # an index, not enumerate: this runs for every broadcasting node
        for n in shape:
            m = out[i]
            if m != n:
                if m == 1:
                    out[i] = n
                elif n != 1:
                    raise ValueError(
                        f"{name}: shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot be broadcast together"
                    )
            i += 1
    return tuple(out)


def _elementwise_rule(prim, inputs, attrs):
    # graph.apply answers the common cases (equal shapes, 0-d operands) itself.
    # The last input carries the value dtype (where's first is the condition).
    return broadcast_shapes(prim.name, *(n.shape for n in inputs)), prim.result[inputs[-1].dtype]


# An elementwise primitive's output dtype, from its input dtype.
RESULT_DTYPES = {"same": lambda d: d, "bool": lambda d: dt.bool, "real": dt.real_dtype}


def _astype_rule(prim, inputs, attrs):
    return inputs[0].shape, attrs[0]


def _leaf_rule(prim, inputs, attrs):
    # full and iota: attrs start with (shape, dtype, ...)
    return attrs[0], attrs[1]


def reduced_shape(shape, axes, keepdims):
    """The shape of a reduction of `shape` over `axes`: the reduced axes kept
    with size 1 (`keepdims`) or dropped."""
    # List comprehensions over range, not generators over enumerate: every reduction node runs this.
    if keepdims:
        return tuple([1 if i in axes else shape[i] for i in range(len(shape))])
    return tuple([shape[i] for i in range(len(shape)) if i not in axes])


def contiguous_strides(shape):
    """The element strides of a C-contiguous array of `shape` (how every
    executor's kernels walk a buffer they allocated)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(strides[::-1])


def _reduce(result):
    def rule(prim, inputs, attrs):
        out = reduced_shape(inputs[0].shape, *attrs)
        dtype = inputs[0].dtype
        if result == "bool":
            dtype = dt.bool
        elif result == "index":
            dtype = dt.DEFAULT_INDEX
        return out, dtype
    return rule


def _same_rule(prim, inputs, attrs):
    return inputs[0].shape, inputs[0].dtype


def _reshape_rule(prim, inputs, attrs):
    return attrs[0], inputs[0].dtype


def _permute_rule(prim, inputs, attrs):
    shape = inputs[0].shape
    return tuple(shape[a] for a in attrs[0]), inputs[0].dtype


def slice_shape(starts, stops, steps):
    # No zip and no generator: x[i, j] in a loop builds a slice node per call.
    return tuple([len(range(starts[i], stops[i], steps[i])) for i in range(len(starts))])


def element_index(shape, key):
    """The index of the one element of an array of `shape` that `key`
    selects (one non-negative int per axis), when `key` is an int or a tuple
    of one in-range int per axis; else None."""
    if type(key) is int:
        key = (key,)
    elif type(key) is not tuple:
        return None
    if len(key) != len(shape):
        return None
    index = []
    for i, n in zip(key, shape):
        if type(i) is not int or not -n <= i < n:
            return None
        index.append(i % n)
    return tuple(index)


def _slice_rule(prim, inputs, attrs):
    return slice_shape(*attrs), inputs[0].dtype


def _pad_rule(prim, inputs, attrs):
    pads = attrs[0]
    return tuple(n + lo + hi for n, (lo, hi) in zip(inputs[0].shape, pads)), inputs[0].dtype


def _concat_rule(prim, inputs, attrs):
    axis = attrs[0]
    shape = list(inputs[0].shape)
    shape[axis] = sum(n.shape[axis] for n in inputs)
    return tuple(shape), inputs[0].dtype


def matmul_shape(a, b):
    """The shape of matmul's result for operands of shapes `a` and `b` (the
    CPU kernel's pooled result reads it at run time, when a plan built for
    other extents runs)."""
    if len(a) == 1 and len(b) == 1:
        return ()
    if len(a) == 1:
        return b[:-2] + b[-1:]
    if len(b) == 1:
        return a[:-1]
    return broadcast_shapes("matmul", a[:-2], b[:-2]) + (a[-2], b[-1])


def _matmul_rule(prim, inputs, attrs):
    return matmul_shape(inputs[0].shape, inputs[1].shape), inputs[0].dtype


def _index_rule(prim, inputs, attrs):
    return inputs[0].shape, dt.DEFAULT_INDEX


def _searchsorted_rule(prim, inputs, attrs):
    return inputs[1].shape, dt.DEFAULT_INDEX


def _bool_like_first(prim, inputs, attrs):
    return inputs[0].shape, dt.bool


def _take_rule(prim, inputs, attrs):
    (x, indices), axis = inputs, attrs[0]
    return x.shape[:axis] + indices.shape + x.shape[axis + 1:], x.dtype


def _take_along_axis_rule(prim, inputs, attrs):
    (x, indices), axis = inputs, attrs[0]
    shape = list(x.shape)
    shape[axis] = indices.shape[axis]
    return broadcast_shapes(prim.name, tuple(shape), indices.shape), x.dtype


def _given_shape_rule(prim, inputs, attrs):
    # gather: attrs (key template, output shape); the namespace computes the
    # shape with NumPy's advanced-indexing rules when it builds the template.
    return attrs[1], inputs[0].dtype


def _diagonal_rule(prim, inputs, attrs):
    shape, offset = inputs[0].shape, attrs[0]
    n, m = shape[-2], shape[-1]
    length = max(0, min(n, m - offset)) if offset >= 0 else max(0, min(n + offset, m))
    return shape[:-2] + (length,), inputs[0].dtype


def _batch_scalar_rule(prim, inputs, attrs):
    return inputs[0].shape[:-2], inputs[0].dtype


def _solve_rule(prim, inputs, attrs):
    a, b = inputs[0].shape, inputs[1].shape
    if len(b) == 1:
        return a[:-1], inputs[0].dtype
    return broadcast_shapes(prim.name, a[:-2], b[:-2]) + b[-2:], inputs[0].dtype


def _pinv_rule(prim, inputs, attrs):
    shape = inputs[0].shape
    return shape[:-2] + (shape[-1], shape[-2]), inputs[0].dtype


def _svdvals_rule(prim, inputs, attrs):
    shape = inputs[0].shape
    return shape[:-2] + (min(shape[-2:]),), dt.real_dtype(inputs[0].dtype)


def _eigvalsh_rule(prim, inputs, attrs):
    return inputs[0].shape[:-1], dt.real_dtype(inputs[0].dtype)


def _eigvals_rule(prim, inputs, attrs):
    return inputs[0].shape[:-1], dt.COMPLEX_OF[inputs[0].dtype]


# Multi-output primitives return one (shape, dtype) pair per output; their
# node's shape and dtype are tuples, and `select` nodes pick one output.
def _qr_rule(prim, inputs, attrs):
    shape, dtype = inputs[0].shape, inputs[0].dtype
    m, n = shape[-2:]
    k = m if attrs[0] == "complete" else min(m, n)
    return (shape[:-2] + (m, k), dtype), (shape[:-2] + (k, n), dtype)


def _svd_rule(prim, inputs, attrs):
    shape, dtype = inputs[0].shape, inputs[0].dtype
    m, n = shape[-2:]
    k = min(m, n)
    u, v = (m, n) if attrs[0] else (k, k)
    return ((shape[:-2] + (m, u), dtype), (shape[:-2] + (k,), dt.real_dtype(dtype)),
            (shape[:-2] + (v, n), dtype))


def _eigh_rule(prim, inputs, attrs):
    shape, dtype = inputs[0].shape, inputs[0].dtype
    return (shape[:-1], dt.real_dtype(dtype)), (shape, dtype)


def _eig_rule(prim, inputs, attrs):
    shape, dtype = inputs[0].shape, dt.COMPLEX_OF[inputs[0].dtype]
    return (shape[:-1], dtype), (shape, dtype)


def _slogdet_rule(prim, inputs, attrs):
    shape, dtype = inputs[0].shape[:-2], inputs[0].dtype
    return (shape, dtype), (shape, dt.real_dtype(dtype))


def _select_rule(prim, inputs, attrs):
    return inputs[0].shape[attrs[0]], inputs[0].dtype[attrs[0]]


def _fft(result, half_last=False):
    """FFT rule: attrs (axes, sizes, norm); `sizes` are the transform lengths.

    rfftn and ihfft keep only the non-negative frequencies of the last axis.
    """
    def rule(prim, inputs, attrs):
        axes, sizes, _ = attrs
        shape = list(inputs[0].shape)
        for axis, n in zip(axes, sizes):
            shape[axis] = n
        if half_last:
            shape[axes[-1]] = sizes[-1] // 2 + 1
        dtype = inputs[0].dtype
        dtype = dt.COMPLEX_OF[dtype] if result == "complex" else dt.real_dtype(dtype)
        return tuple(shape), dtype
    return rule


LEAF, ELEMENTWISE, REDUCE, SCAN, MOVEMENT, UPDATE, CONTRACTION = (
    "leaf", "elementwise", "reduce", "scan", "movement", "update", "contraction")
SORT, INDEX, LINALG, MULTI, SELECT, FFT, DYNAMIC, FUSED, BOUND, STATE, FAILED = (
    "sort", "index", "linalg", "multi", "select", "fft", "dynamic", "fused", "bound", "state", "failed")

# name: dtype category the inputs accept (None: any), result dtype rule
UNARY = {
    "abs": ("numeric", "real"),
    "acos": ("floating", "same"),
    "acosh": ("floating", "same"),
    "asin": ("floating", "same"),
    "asinh": ("floating", "same"),
    "atan": ("floating", "same"),
    "atanh": ("floating", "same"),
    "bitwise_invert": ("integer or bool", "same"),
    "ceil": ("real numeric", "same"),
    "conj": ("numeric", "same"),
    "cos": ("floating", "same"),
    "cosh": ("floating", "same"),
    "exp": ("floating", "same"),
    "expm1": ("floating", "same"),
    "floor": ("real numeric", "same"),
    "imag": ("complex floating", "real"),
    "isfinite": ("numeric", "bool"),
    "isinf": ("numeric", "bool"),
    "isnan": ("numeric", "bool"),
    "log": ("floating", "same"),
    "log1p": ("floating", "same"),
    "log2": ("floating", "same"),
    "log10": ("floating", "same"),
    "logical_not": ("bool", "bool"),
    "negative": ("numeric", "same"),
    "real": ("numeric", "real"),
    "round": ("numeric", "same"),
    "sign": ("numeric", "same"),
    "signbit": ("real floating", "bool"),
    "sin": ("floating", "same"),
    "sinh": ("floating", "same"),
    "sqrt": ("floating", "same"),
    "square": ("numeric", "same"),
    "tan": ("floating", "same"),
    "tanh": ("floating", "same"),
    "trunc": ("real numeric", "same"),
}

BINARY = {
    "add": ("numeric", "same"),
    "atan2": ("real floating", "same"),
    "bitwise_and": ("integer or bool", "same"),
    "bitwise_left_shift": ("integral", "same"),
    "bitwise_or": ("integer or bool", "same"),
    "bitwise_right_shift": ("integral", "same"),
    "bitwise_xor": ("integer or bool", "same"),
    "copysign": ("real floating", "same"),
    "divide": ("floating", "same"),
    "equal": ("any", "bool"),
    "floor_divide": ("real numeric", "same"),
    "greater": ("real numeric", "bool"),
    "greater_equal": ("real numeric", "bool"),
    "hypot": ("real floating", "same"),
    "less": ("real numeric", "bool"),
    "less_equal": ("real numeric", "bool"),
    "logaddexp": ("real floating", "same"),
    "logical_and": ("bool", "bool"),
    "logical_or": ("bool", "bool"),
    "logical_xor": ("bool", "bool"),
    "maximum": ("real numeric", "same"),
    "minimum": ("real numeric", "same"),
    "multiply": ("numeric", "same"),
    "nextafter": ("real floating", "same"),
    "not_equal": ("any", "bool"),
    "pow": ("numeric", "same"),
    "remainder": ("real numeric", "same"),
    "subtract": ("numeric", "same"),
}

# name: accepted category, result dtype rule, monoid (None: argmax and argmin
# need positions, not a fold of values)
REDUCTIONS = {
    "sum": ("numeric", "same", Monoid("add", 0)),
    "prod": ("numeric", "same", Monoid("multiply", 1)),
    "max": ("real numeric", "same", Monoid("maximum", -math.inf)),
    "min": ("real numeric", "same", Monoid("minimum", math.inf)),
    "any": ("any", "bool", Monoid("logical_or", False)),
    "all": ("any", "bool", Monoid("logical_and", True)),
    "argmax": ("real numeric", "index", None),
    "argmin": ("real numeric", "index", None),
}

PRIMITIVES = {}


def _add(name, kind, accepts, rule, result=None, monoid=None, attrs=(), may_fail=False):
    # attrs: the names of the primitive's attributes, in order (how arrayx.debug shows them)
    PRIMITIVES[name] = Primitive(name, kind, accepts, rule, result and RESULT_DTYPES[result], monoid, attrs, may_fail)


_add("buffer", LEAF, None, None)          # data that entered from the host
_add("evaluated", LEAF, None, None)       # a computed node whose history a force point freed
_add("full", LEAF, None, _leaf_rule, attrs=("shape", "dtype", "value"))
_add("iota", LEAF, None, _leaf_rule, attrs=("shape", "dtype", "axis"))
for _name, (_acc, _res) in (UNARY | BINARY).items():
    _add(_name, ELEMENTWISE, _acc, _elementwise_rule, _res)
_add("where", ELEMENTWISE, None, _elementwise_rule, "same")   # inputs: condition, x1, x2
_add("astype", ELEMENTWISE, None, _astype_rule, attrs=("dtype",))
_add("stop_gradient", ELEMENTWISE, None, _elementwise_rule, "same")  # identity; autodiff sends no cotangent through
for _name, (_acc, _res, _monoid) in REDUCTIONS.items():
    _add(_name, REDUCE, _acc, _reduce(_res), monoid=_monoid, attrs=("axis", "keepdims"))
_add("cumulative_sum", SCAN, "numeric", _same_rule, attrs=("axis",))
_add("cumulative_prod", SCAN, "numeric", _same_rule, attrs=("axis",))
_add("reshape", MOVEMENT, None, _reshape_rule, attrs=("shape",))
_add("permute", MOVEMENT, None, _permute_rule, attrs=("axes",))
_add("broadcast", MOVEMENT, None, _reshape_rule, attrs=("shape",))
_add("slice", MOVEMENT, None, _slice_rule, attrs=("starts", "stops", "steps"))
_add("flip", MOVEMENT, None, _same_rule, attrs=("axis",))
_add("pad", MOVEMENT, None, _pad_rule, attrs=("pad_width", "value"))   # pad_width: ((lo, hi), ...)
_add("concat", MOVEMENT, None, _concat_rule, attrs=("axis",))
_add("matmul", CONTRACTION, "numeric", _matmul_rule)   # NumPy matmul semantics, 1-D operands too
_add("update_slice", UPDATE, None, _same_rule, attrs=("starts", "stops", "steps"))   # inputs: x, value
_add("sort", SORT, "real numeric", _same_rule, attrs=("axis", "descending"))
_add("argsort", SORT, "real numeric", _index_rule, attrs=("axis", "descending"))   # stable
_add("searchsorted", SORT, "real numeric", _searchsorted_rule, attrs=("side",))  # inputs: sorted 1-D x1, x2
_add("isin", SORT, "any", _bool_like_first, attrs=("invert",))  # inputs: x1, x2 (any shape)
_add("take", INDEX, None, _take_rule, attrs=("axis",), may_fail=True)  # inputs: x, 1-D indices
_add("take_along_axis", INDEX, None, _take_along_axis_rule, attrs=("axis",), may_fail=True)  # inputs: x, indices
# gather: inputs x, *index arrays; key: a template. scatter: inputs x, value, *index arrays.
_add("gather", INDEX, None, _given_shape_rule, attrs=("key", "shape"), may_fail=True)
_add("scatter", UPDATE, None, _same_rule, attrs=("key",), may_fail=True)
_add("scatter_add", UPDATE, None, _same_rule, may_fail=True)            # as scatter, but adds value; duplicates accumulate
_add("diagonal", MOVEMENT, None, _diagonal_rule, attrs=("offset",))  # over the last two axes
_add("cholesky", LINALG, "lapack floating", _same_rule, attrs=("upper",), may_fail=True)
_add("inv", LINALG, "lapack floating", _same_rule, may_fail=True)
_add("det", LINALG, "lapack floating", _batch_scalar_rule)
_add("solve", LINALG, "lapack floating", _solve_rule, may_fail=True)    # NumPy 2 semantics: 1-D x2 is one vector
_add("pinv", LINALG, "lapack floating", _pinv_rule, attrs=("rtol",), may_fail=True)  # rtol None: max(M, N) * eps
_add("svdvals", LINALG, "lapack floating", _svdvals_rule, may_fail=True)
_add("eigvalsh", LINALG, "lapack floating", _eigvalsh_rule, may_fail=True)
_add("eigvals", LINALG, "lapack floating", _eigvals_rule, may_fail=True)
_add("qr", MULTI, "lapack floating", _qr_rule, attrs=("mode",))  # -> (Q, R)
_add("svd", MULTI, "lapack floating", _svd_rule, attrs=("full_matrices",), may_fail=True)  # -> (U, S, Vh)
_add("eigh", MULTI, "lapack floating", _eigh_rule, may_fail=True)       # -> (eigenvalues, eigenvectors)
_add("eig", MULTI, "lapack floating", _eig_rule, may_fail=True)         # -> (eigenvalues, eigenvectors), complex
_add("slogdet", MULTI, "lapack floating", _slogdet_rule)  # -> (sign, logabsdet)
_add("select", SELECT, None, _select_rule, attrs=("index",))  # which output of a multi-output node
_FFT_ATTRS = ("axes", "sizes", "norm")
_add("fftn", FFT, "complex floating", _fft("complex"), attrs=_FFT_ATTRS)
_add("ifftn", FFT, "complex floating", _fft("complex"), attrs=_FFT_ATTRS)
_add("rfftn", FFT, "real floating", _fft("complex", half_last=True), attrs=_FFT_ATTRS)
_add("irfftn", FFT, "complex floating", _fft("real"), attrs=_FFT_ATTRS)
_add("hfft", FFT, "complex floating", _fft("real"), attrs=_FFT_ATTRS)      # one axis
_add("ihfft", FFT, "real floating", _fft("complex", half_last=True), attrs=_FFT_ATTRS)  # one axis
# Data-dependent shapes: no rule; the scheduler runs them at once (run_dynamic).
for _name in ("nonzero", "unique_all", "unique_counts", "unique_inverse", "unique_values", "repeat"):
    _add(_name, DYNAMIC, None, None)

# Leaves whose values a compiled computation binds each time it runs
# (arrayx.transformers). No executor runs them:
# a force point on a graph that reads one is an error naming it.
_add("placeholder", BOUND, None, _leaf_rule, attrs=("shape", "dtype", "name"))
_add("variable", BOUND, None, _leaf_rule, attrs=("shape", "dtype", "name"))
# assign(variable, value): inside a computation, the variable holds value
# after the call; it evaluates to value.
_add("assign", STATE, None, lambda prim, inputs, attrs: (inputs[0].shape, inputs[0].dtype))
# A node whose computation raised at a force point (a primitive that may
# fail, see Primitive): its attrs hold that error, which every later force
# that needs the node raises again instead of running anything.
_add("failed", FAILED, None, None, attrs=("error",))
# A fused group (graph/fused.py), built by the scheduler's fusion pass, never
# by the namespace, so it has no shape rule.
_add("fused", FUSED, None, None, attrs=("group",))

BUFFER = PRIMITIVES["buffer"]
EVALUATED = PRIMITIVES["evaluated"]
FAILED_OP = PRIMITIVES["failed"]
FUSED_OP = PRIMITIVES["fused"]


def group(kind):
    """The names of the primitives of one kind (tinygrad's GroupOp)."""
    return frozenset(name for name, prim in PRIMITIVES.items() if prim.kind == kind)


ELEMENTWISE_OPS = group(ELEMENTWISE)
REDUCE_OPS = group(REDUCE)
# Kinds whose results cost more to compute again than to hold (superlinear
# work, a library call): a force point keeps such a result while something
# else still refers to it (see scheduler.schedule).
KEPT_KINDS = frozenset({CONTRACTION, LINALG, MULTI, FFT, SORT})
# Reductions a fused group may end in: those with a monoid, whose partial
# results of blocks combine with its primitive.
BLOCK_REDUCE_OPS = frozenset(name for name, prim in PRIMITIVES.items() if prim.monoid is not None)
assert all(PRIMITIVES[PRIMITIVES[name].monoid.op].kind == ELEMENTWISE for name in BLOCK_REDUCE_OPS)
# Reductions to positions (argmax, argmin): no monoid combines the partial
# results of blocks, so a fused group ends in one only where each of its
# blocks holds the reduced axis whole (see Executor.fused_groups_end_in_arg_reductions).
ARG_REDUCE_OPS = frozenset(name for name, prim in PRIMITIVES.items() if prim.kind == REDUCE and prim.monoid is None)
