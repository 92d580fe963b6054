"""Lower pass: steps to executor segments.

Each step runs on the executor of its device when that executor `runs` the
primitive on the step's dtypes, else on the registry's fallback executor (the
host's), with its inputs transferred there and its results transferred back.
A fused step's members were asked one by one when the fuse pass built it, so
it runs where its device is. Consecutive steps of one executor form a segment,
compiled once by that executor.
"""

from .. import executors
from ..graph.primitives import FUSED_OP
from .slots import drops_of, last_uses


class Segment:
    """Steps one executor runs, or one transfer (source slot, target slot,
    from executor, to executor); a transfer to the same slot replaces the
    buffer there."""

    __slots__ = ("executor", "steps", "transfer")

    def __init__(self, executor, steps=None, transfer=None):
        self.executor = executor
        self.steps = steps
        self.transfer = transfer


def transfer(buffer, source, target):
    """Move a buffer (or the tuple of a multi-output step) between executors."""
    if isinstance(buffer, tuple):
        return tuple(source.transfer(b, target) for b in buffer)
    return source.transfer(buffer, target)


def executor_running(op, in_dtypes, dtype, home):
    """The executor that runs primitive `op` on `in_dtypes` (giving `dtype`)
    for a node on executor `home`: `home` where it `runs` it, else the
    registry's fallback; an error naming the primitive where neither does."""
    if home.runs(op, in_dtypes, dtype):
        return home
    fallback = executors.fallback()
    if fallback is not home and fallback.runs(op, in_dtypes, dtype):
        return fallback
    raise NotImplementedError(f"{op.name}: no executor runs this primitive on {[d.name for d in in_dtypes]} "
                              f"(neither the {home.name} executor nor the fallback {fallback.name} executor)")


def lower(steps, n_slots, input_devices, outputs):
    """(slot count, [(program(slots), step count)]) for `steps`."""
    owner = {s: executors.executor_for(d) for s, d in enumerate(input_devices)}
    moved = {}   # (slot, executor) -> the slot holding its transferred copy
    segments = []
    for step in steps:
        home = executors.executor_for(step.device)
        if step.op is FUSED_OP:
            ex = home
        else:
            ex = executor_running(step.op, tuple(d for _, d in step.in_types), step.dtype, home)
        args = []
        for s in step.args:
            if owner[s] is not ex:
                t = moved.get((s, ex))
                if t is None:
                    t = moved[s, ex] = n_slots
                    n_slots += 1
                    segments.append(Segment(None, transfer=(s, t, owner[s], ex)))
                    owner[t] = ex
                s = t
            args.append(s)
        step.args = tuple(args)
        if segments and segments[-1].executor is ex:
            segments[-1].steps.append(step)
        else:
            segments.append(Segment(ex, [step]))
        for o in step.outs:
            owner[o] = home
            if ex is not home:
                segments.append(Segment(None, transfer=(o, o, ex, home)))
    return n_slots, _compile(segments, set(outputs))


def _compile(segments, keep):
    last = last_uses(segments)
    compiled = []
    for i, segment in enumerate(segments):
        if segment.transfer is not None:
            compiled.append((_transfer_program(*segment.transfer), 0))
        else:
            drops = drops_of(segments, i, last, keep)
            compiled.append((segment.executor.compile(segment.steps, drops), len(segment.steps)))
    return compiled


def _transfer_program(s, t, source, target):
    def run(slots):
        slots[t] = transfer(slots[s], source, target)
    return run
