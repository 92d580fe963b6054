"""What the scheduler did and would do, for tests and benchmarks, and the
memory executors hold for reuse.

`counters` (see `arrayx.counters` for what each counts) and `reset()`; `describe`,
the text view of a graph behind `xp.graph`.
"""

from contextlib import contextmanager

from . import executors
from .counters import counters, reset  # noqa: F401  (the debugging tools users reach for)
from .graph.node import toposort
from .scheduler import fuse, schedule

__all__ = ["counters", "reset", "describe", "fused_groups", "free_held_memory", "unfused"]


def fused_groups(*arrays):
    """The fused groups the next force of `arrays` would run (computes nothing)."""
    return schedule.plan_for([a._node for a in arrays]).groups


def free_held_memory():
    """Give back the memory every executor keeps for reuse (the CPU
    executor's pool of large results, the GPU's memory pool): for memory
    measurements, or before handing the memory to other code."""
    for device in executors.devices():
        executors.executor_for(device).free_held_memory()


@contextmanager
def unfused():
    """Within this scope plans run every node as its own step, as before
    fusion: a reference when a fused result is in doubt. Plans cached on
    either side of the scope are forgotten."""
    schedule.clear_plan_cache()
    fuse.ENABLED = False
    try:
        yield
    finally:
        fuse.ENABLED = True
        schedule.clear_plan_cache()


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
            kind = f"constant {executors.executor_for(n.device).to_host(n.buffer).item()!r}"
        else:
            kind = "buffer"
        lines.append(f"{name[id(n)]} = {kind} : {_type(n)}")
    return "\n".join(lines)
