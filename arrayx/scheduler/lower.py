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
from . import observe
from .slots import drops_of, last_uses


class Segment:
    """Steps one executor runs, or one transfer (source slot, target slot,
    from executor, to executor, shape, dtype, device); a transfer to the
    same slot replaces the buffer there. `program(slots)` runs it once
    compiled, `drops` lists the slots each step frees."""

    __slots__ = ("executor", "steps", "transfer", "drops", "program", "_observed")

    def __init__(self, executor, steps=None, transfer=None):
        self.executor = executor
        self.steps = steps
        self.transfer = transfer
        self.drops = None
        self.program = None
        self._observed = None

    def observed(self):
        """The program with each kernel or transfer timed and reported to
        the observers (see `observe`), compiled on first use."""
        if self._observed is None:
            if self.transfer is not None:
                s, t, source, target, shape, dtype, device = self.transfer
                move = observe.observed_transfer(_mover(source, target), source, target, shape, dtype, device)
                self._observed = _transfer_program(s, t, move)
            else:
                ex = self.executor
                self._observed = ex.compile(self.steps, self.drops,
                                            lambda step, fn, in_place: observe.observed_kernel(ex, step, fn, in_place))
        return self._observed


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
    """(slot count, compiled Segments) for `steps`."""
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
        for s, (shape, dtype) in zip(step.args, step.in_types):
            if owner[s] is not ex:
                t = moved.get((s, ex))
                if t is None:
                    t = moved[s, ex] = n_slots
                    n_slots += 1
                    segments.append(Segment(None, transfer=(s, t, owner[s], ex, shape, dtype, step.device)))
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
                segments.append(Segment(None, transfer=(o, o, ex, home, step.shape, step.dtype, step.device)))
    _compile(segments, set(outputs))
    return n_slots, segments


def rebound_segments(segments, new, outputs):
    """Copies of the compiled `segments` with each step in `new` (old step:
    the step that replaces it, with the same primitive, slots and device)
    replaced, compiled again."""
    copies = [Segment(None, transfer=s.transfer) if s.transfer is not None
              else Segment(s.executor, [new.get(step, step) for step in s.steps]) for s in segments]
    _compile(copies, set(outputs))
    return copies


def _compile(segments, keep):
    last = last_uses(segments)
    for i, segment in enumerate(segments):
        if segment.transfer is not None:
            s, t, source, target = segment.transfer[:4]
            segment.program = _transfer_program(s, t, _mover(source, target))
        else:
            segment.drops = drops_of(segments, i, last, keep)
            segment.program = segment.executor.compile(segment.steps, segment.drops)


def _mover(source, target):
    return lambda buffer: transfer(buffer, source, target)


def _transfer_program(s, t, move):
    def run(slots):
        slots[t] = move(slots[s])
    return run
