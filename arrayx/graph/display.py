"""A text view of a graph, cheap enough to print before evaluation."""

from ..executors import executor_for
from .node import toposort


def _fmt_attr(value):
    if isinstance(value, tuple):
        return "(" + ", ".join(_fmt_attr(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return str(value)


def _type(node):
    """`dtype[shape]`, or a tuple of them for a multi-output node."""
    if isinstance(node.dtype, tuple):
        return "(" + ", ".join(f"{d}[{','.join(map(str, s))}]" for d, s in zip(node.dtype, node.shape)) + ")"
    return f"{node.dtype}[{','.join(map(str, node.shape))}]"


def describe(outputs):
    """One line per node: `%i = op(%inputs, attrs) : dtype[shape]`, inputs first."""
    order = toposort(outputs)
    name = {id(n): f"%{i}" for i, n in enumerate(order)}
    lines = []
    for n in order:
        if n.buffer is None:
            args = [name[id(i)] for i in n.inputs]
            if n.attrs:
                args.append(_fmt_attr(n.attrs))
            kind = f"{n.op.name}({', '.join(args)})"
        elif n.shape == ():
            kind = f"constant {executor_for(n.device).to_host(n.buffer).item()!r}"
        else:
            kind = "buffer"
        lines.append(f"{name[id(n)]} = {kind} : {_type(n)}")
    return "\n".join(lines)
