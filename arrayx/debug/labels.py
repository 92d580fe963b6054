"""Nodes and steps as a reader sees them: `sum(axis=(1,))`, `x[1:5:2]`,
`astype(float32)`, not the primitive's raw attribute tuple. Shared by the
graph views, the profile and the plan dump."""

from weakref import ReferenceType

from ..graph.fused import FusedGroup
from ..graph.node import Constant

# Attributes the type beside a label (`float64[7]`) already shows.
_SHOWN_BY_TYPE = ("shape", "dtype")


def type_text(shape, dtype):
    """`float64[3,4]`."""
    return f"{dtype}[{','.join(map(str, shape))}]"


def node_type(node):
    """`dtype[shape]`, or a tuple of them for a multi-output node."""
    if isinstance(node.dtype, tuple):
        return "(" + ", ".join(type_text(s, d) for s, d in zip(node.shape, node.dtype)) + ")"
    return type_text(node.shape, node.dtype)


def size_text(nbytes):
    """A byte count for reading: `512 B`, `7.6 kB`, `1.2 GB`."""
    for unit in ("B", "kB", "MB", "GB"):
        if nbytes < 1000 or unit == "GB":
            return f"{nbytes} {unit}" if unit == "B" else f"{nbytes:.1f} {unit}"
        nbytes /= 1000


def value_text(value):
    """An attribute value as Python would print it (dtypes by name, fill
    values as numbers, a fused group as its primitives)."""
    if isinstance(value, tuple):
        inner = ", ".join(value_text(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, Constant):
        return repr(value.value.item())
    if isinstance(value, FusedGroup):
        return "+".join(i.op.name for i in value.body)
    if isinstance(value, str):
        return repr(value)
    return str(value)


def _slice_text(starts, stops, steps):
    parts = []
    for a, b, c in zip(starts, stops, steps):
        parts.append(f"{a}:{b}" + ("" if c == 1 else f":{c}"))
    return "[" + ", ".join(parts) + "]"


def label(op, attrs, shape, dtype):
    """What a node or step of primitive `op` with `attrs`, giving `shape`
    and `dtype`, does: `sum(axis=(1,))`, `slice[0:3]`, `fused(exp+add)`."""
    name = op.name
    if name == "full" and shape == ():
        return value_text(attrs[2])   # a Python scalar the user wrote
    if name in ("slice", "update_slice"):
        return name + _slice_text(*attrs)
    if name == "astype":
        return f"astype({attrs[0]})"
    if name in ("placeholder", "variable"):
        return f"{name} {attrs[2]!r}"
    names = op.attr_names if len(op.attr_names) == len(attrs) else (None,) * len(attrs)
    shown = []
    for key, value in zip(names, attrs):
        if key in _SHOWN_BY_TYPE and value in (shape, dtype):
            continue
        if key == "keepdims" and not value:
            continue
        text = value_text(value)
        shown.append(text if key is None or key == "group" else f"{key}={text}")
    return f"{name}({', '.join(shown)})" if shown else name


def node_label(node):
    """`label` of a node."""
    return label(node.op, node.attrs, node.shape, node.dtype)


def _arrays_in(value):
    """The weak references to nodes in an argument as `Node.origin` keeps
    it: an array's, or those in a list or tuple."""
    if isinstance(value, ReferenceType):
        return [value]
    if type(value) is list or type(value) is tuple:
        return [r for v in value for r in _arrays_in(v)]
    return []


def call_inputs(origin):
    """The nodes of the arrays a composite call (`Node.origin`) was given, in
    the order written; one the result does not depend on may be gone."""
    _, args, kwargs, _ = origin
    return [node for value in (*args, *kwargs.values()) for r in _arrays_in(value) if (node := r()) is not None]


def _argument_text(value, name_of):
    if isinstance(value, ReferenceType):
        node = value()
        return "<freed>" if node is None else name_of(node)
    if type(value) is list or type(value) is tuple:
        inner = ", ".join(_argument_text(v, name_of) for v in value)
        return f"[{inner}]" if type(value) is list else f"({inner},)" if len(value) == 1 else f"({inner})"
    return value_text(value)


def call_label(origin, name_of=None):
    """A composite call (`Node.origin`) as the user wrote it: `mean(%0,
    axis=0)` with `name_of(node)` for each array, or without the arguments
    that hold arrays when `name_of` is None (a view that draws them as
    edges: `mean(axis=0)`, `linalg.vector_norm`); `.Q` or `[1]` after it
    for one output of a tuple."""
    name, args, kwargs, part = origin
    shown = [(None, a) for a in args] + list(kwargs.items())
    if name_of is None:
        shown = [(k, v) for k, v in shown if not _arrays_in(v)]
    text = ", ".join(_argument_text(v, name_of) if k is None else f"{k}={_argument_text(v, name_of)}"
                     for k, v in shown)
    text = f"{name}({text})" if text or name_of is not None else name
    if part is None:
        return text
    return f"{text}[{part}]" if type(part) is int else f"{text}.{part}"


def is_constant(node):
    """Whether the node is a 0-d fill value (a Python scalar the user wrote
    into an expression): views show it inside the expression that reads it."""
    return node.buffer is None and node.op.name == "full" and node.shape == ()
