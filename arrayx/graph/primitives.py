"""The primitive table: every operation an executor must implement.

Each primitive has a kind, the dtype category its inputs accept, and a rule that
infers the output shape and dtype from the input nodes and the static
attributes. Standard functions validate user input (naming themselves in their
errors) and then build nodes of these primitives; executors implement exactly
these and nothing else.

Elementwise primitives broadcast their inputs NumPy-style (right-aligned) and
require equal input dtypes (the namespace inserts `astype` nodes to promote).
"""

from .. import dtypes as dt


class Primitive:
    __slots__ = ("name", "kind", "accepts", "rule")

    def __init__(self, name, kind, accepts, rule):
        self.name = name
        self.kind = kind
        self.accepts = dt.CATEGORIES[accepts] if accepts else None
        self.rule = rule

    def __repr__(self):
        return f"<primitive {self.name}>"


def broadcast_shapes(name, *shapes):
    """The broadcast of `shapes`, or a ValueError naming `name`."""
    out = list(shapes[0])
    for shape in shapes[1:]:
        if len(shape) > len(out):
            out = [1] * (len(shape) - len(out)) + out
        offset = len(out) - len(shape)
        for i, n in enumerate(shape):
            m = out[offset + i]
            if m != n:
                if m == 1:
                    out[offset + i] = n
                elif n != 1:
                    raise ValueError(
                        f"{name}: shapes {' and '.join(str(tuple(s)) for s in shapes)} cannot be broadcast together"
                    )
    return tuple(out)


def _same_shape_or_broadcast(name, inputs):
    shape = inputs[0].shape
    for node in inputs:
        if node.shape != shape:
            return broadcast_shapes(name, *(n.shape for n in inputs))
    return shape


def _elementwise(result):
    def same(prim, inputs, attrs):
        return _same_shape_or_broadcast(prim.name, inputs), inputs[-1].dtype

    def boolean(prim, inputs, attrs):
        return _same_shape_or_broadcast(prim.name, inputs), dt.bool

    def real(prim, inputs, attrs):
        return _same_shape_or_broadcast(prim.name, inputs), dt.real_dtype(inputs[-1].dtype)
    return {"same": same, "bool": boolean, "real": real}[result]


def _astype_rule(prim, inputs, attrs):
    return inputs[0].shape, attrs[0]


def _leaf_rule(prim, inputs, attrs):
    # full and iota: attrs start with (shape, dtype, ...)
    return attrs[0], attrs[1]


def _reduce(result):
    def rule(prim, inputs, attrs):
        axes, keepdims = attrs
        shape = inputs[0].shape
        if keepdims:
            out = tuple(1 if i in axes else n for i, n in enumerate(shape))
        else:
            out = tuple(n for i, n in enumerate(shape) if i not in axes)
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
    return tuple(len(range(a, b, c)) for a, b, c in zip(starts, stops, steps))


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


def _matmul_rule(prim, inputs, attrs):
    a, b = inputs[0].shape, inputs[1].shape
    if len(a) == 1 and len(b) == 1:
        shape = ()
    elif len(a) == 1:
        shape = b[:-2] + b[-1:]
    elif len(b) == 1:
        shape = a[:-1]
    else:
        shape = broadcast_shapes(prim.name, a[:-2], b[:-2]) + (a[-2], b[-1])
    return shape, inputs[0].dtype


LEAF, ELEMENTWISE, REDUCE, SCAN, MOVEMENT, UPDATE, CONTRACTION = (
    "leaf", "elementwise", "reduce", "scan", "movement", "update", "contraction")

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

REDUCTIONS = {
    "sum": ("numeric", "same"),
    "prod": ("numeric", "same"),
    "max": ("real numeric", "same"),
    "min": ("real numeric", "same"),
    "any": ("any", "bool"),
    "all": ("any", "bool"),
    "argmax": ("real numeric", "index"),
    "argmin": ("real numeric", "index"),
}

PRIMITIVES = {}


def _add(name, kind, accepts, rule):
    PRIMITIVES[name] = Primitive(name, kind, accepts, rule)


_add("buffer", LEAF, None, None)
_add("full", LEAF, None, _leaf_rule)       # attrs: shape, dtype, value
_add("iota", LEAF, None, _leaf_rule)       # attrs: shape, dtype, axis
for _name, (_acc, _res) in UNARY.items():
    _add(_name, ELEMENTWISE, _acc, _elementwise(_res))
for _name, (_acc, _res) in BINARY.items():
    _add(_name, ELEMENTWISE, _acc, _elementwise(_res))
_add("where", ELEMENTWISE, None, _elementwise("same"))   # inputs: condition, x1, x2
_add("astype", ELEMENTWISE, None, _astype_rule)          # attrs: dtype
for _name, (_acc, _res) in REDUCTIONS.items():
    _add(_name, REDUCE, _acc, _reduce(_res))              # attrs: axes, keepdims
_add("cumulative_sum", SCAN, "numeric", _same_rule)      # attrs: axis
_add("cumulative_prod", SCAN, "numeric", _same_rule)     # attrs: axis
_add("reshape", MOVEMENT, None, _reshape_rule)           # attrs: shape
_add("permute", MOVEMENT, None, _permute_rule)           # attrs: axes
_add("broadcast", MOVEMENT, None, _reshape_rule)         # attrs: shape
_add("slice", MOVEMENT, None, _slice_rule)               # attrs: starts, stops, steps
_add("flip", MOVEMENT, None, _same_rule)                 # attrs: axes
_add("pad", MOVEMENT, None, _pad_rule)                   # attrs: ((lo, hi), ...), value
_add("concat", MOVEMENT, None, _concat_rule)             # attrs: axis
_add("matmul", CONTRACTION, "numeric", _matmul_rule)   # NumPy matmul semantics, 1-D operands too
_add("update_slice", UPDATE, None, _same_rule)           # inputs: x, value; attrs: starts, stops, steps

BUFFER = PRIMITIVES["buffer"]
