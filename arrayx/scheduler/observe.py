"""Observers of the work plans do: the hook `arrayx.debug`'s profiler and
ARRAYX_LOG install into (debug sits above the scheduler, which never imports it).

`observers` is a tuple, empty unless something watches. The scheduler reads
it once per force point and once per plan run and does nothing more while
it is empty, so watching costs nothing when nobody watches. While it is not
empty, plans run their observed programs (`lower.Segment.observed`): each
kernel and transfer is timed and reported to every observer as a
`StepRun`, and each force point, computation call or data-dependent
primitive as a `ForcePoint` holding the StepRuns it ran. An observer has
`step_ran(run)` and `force_point_ran(force_point)`.

Time is wall-clock time on the host. An observed step waits for its
executor to finish (`Executor.synchronize`), so on a GPU a step's time
covers its kernel, not only the launch; on the dask device a step builds
its part of the task graph, and the chunks are computed when the force
point reads the result (its transfer to the host, or `xp.eval`'s persist).
"""

from time import perf_counter

from ..graph.node import output_types

observers = ()

# The steps run since the current force point began; `force_point` hands them on.
_pending = []


def install(observer):
    """Start reporting to `observer`."""
    global observers
    observers = observers + (observer,)


def remove(observer):
    """Stop reporting to `observer`."""
    global observers
    observers = tuple(o for o in observers if o is not observer)


class StepRun:
    """One step that ran: `name` is its primitive's name ("fused" for a fused
    group, whose primitives in plan order are `members`; "transfer" for a
    move between executors), `device` where its result lives, `executor` the
    name of the executor that ran it, `in_types` and `out_types` the
    (shape, dtype) of each input and output, `bytes_read` and
    `bytes_written` the sizes (nbytes) of its input and output buffers,
    `seconds` its wall time, `in_place` whether it wrote its result into a
    dying input, `path` how the executor ran it where it has several ways
    (a CPU fused group: "native" or "numpy"; None else). `force_point` is
    set when its force point ends."""

    __slots__ = ("name", "members", "attrs", "device", "executor", "in_types", "out_types", "bytes_read",
                 "bytes_written", "seconds", "in_place", "path", "force_point")

    def __init__(self, name, members, attrs, device, executor, in_types, out_types, bytes_read, bytes_written,
                 seconds, in_place, path=None):
        self.name = name
        self.members = members
        self.attrs = attrs
        self.device = device
        self.executor = executor
        self.in_types = in_types
        self.out_types = out_types
        self.bytes_read = bytes_read
        self.bytes_written = bytes_written
        self.seconds = seconds
        self.in_place = in_place
        self.path = path
        self.force_point = None

    @property
    def ran_by(self):
        """The executor's name, with the path it took where it has several."""
        return f"{self.executor} ({self.path})" if self.path else self.executor

    @property
    def what(self):
        """The primitive, or a fused group's members joined by '+'."""
        return "+".join(self.members) if self.members else self.name

    def __repr__(self):
        return f"StepRun({self.what} on {self.device} by {self.executor}, {self.seconds * 1e3:.3f} ms)"


class ForcePoint:
    """One force point (`kind` "force"), computation call ("computation") or
    data-dependent primitive ("dynamic") that ran: `plan` says whether its
    plan was "built" or "cached" (a computation's was "compiled" when it was
    made; a data-dependent primitive has "none"), `steps` the StepRuns it
    ran, `seconds` its wall time, planning included."""

    __slots__ = ("kind", "plan", "steps", "seconds")

    def __init__(self, kind, plan, steps, seconds):
        self.kind = kind
        self.plan = plan
        self.steps = steps
        self.seconds = seconds

    def __repr__(self):
        return f"ForcePoint({self.kind}, plan {self.plan}, {len(self.steps)} steps, {self.seconds * 1e3:.3f} ms)"


def nbytes(buffer):
    """The bytes of a buffer, or of the sequence of a multi-output step's
    (a tuple on the CPU, a list on the dask device)."""
    if buffer.__class__ in (tuple, list):
        return sum(nbytes(b) for b in buffer)
    return buffer.nbytes


def report_step(run):
    """Hand a StepRun to every observer."""
    _pending.append(run)
    for observer in observers:
        observer.step_ran(run)


def observed_kernel(executor, step, kernel, in_place):
    """`kernel` of `step` run by `executor`, timed and reported (see the module)."""
    members = tuple(i.op.name for i in step.attrs[0].body) if step.op.name == "fused" else ()
    out_types = output_types(step.shape, step.dtype)

    def run(*buffers):
        start = perf_counter()
        result = kernel(*buffers)
        executor.synchronize()
        seconds = perf_counter() - start
        report_step(StepRun(step.op.name, members, step.attrs, step.device, executor.name, step.in_types,
                            out_types, sum(nbytes(b) for b in buffers), nbytes(result), seconds, in_place,
                            executor.kernel_path(kernel)))
        return result
    return run


def observed_transfer(move, source, target, shape, dtype, device):
    """`move(buffer)`, a transfer from executor `source` to `target` of a
    buffer of `shape` and `dtype`, timed and reported."""
    types = output_types(shape, dtype)

    def run(buffer):
        start = perf_counter()
        result = move(buffer)
        target.synchronize()
        seconds = perf_counter() - start
        report_step(StepRun("transfer", (), (source.name, target.name), device, f"{source.name}->{target.name}",
                            types, types, nbytes(buffer), nbytes(result), seconds, False))
        return result
    return run


def dynamic_ran(prim, attrs, executor, inputs, outputs, start):
    """Report data-dependent primitive `prim` with `attrs`, run by `executor`
    from the nodes `inputs` to the nodes `outputs` since perf_counter() time
    `start` (its transfers, where its device's executor lacks it, included),
    as a force point of one step."""
    run = StepRun(prim.name, (), attrs, inputs[0].device, executor.name,
                  tuple((n.shape, n.dtype) for n in inputs), tuple((n.shape, n.dtype) for n in outputs),
                  sum(n.buffer.nbytes for n in inputs), sum(n.buffer.nbytes for n in outputs),
                  perf_counter() - start, False)
    report_step(run)
    force_point("dynamic", "none", start)


def begin():
    """The start time of a force point, which runs the steps reported until
    its `force_point` (one left by a force point that failed is dropped)."""
    _pending.clear()
    return perf_counter()


def force_point(kind, plan, start):
    """Report a force point of `kind` whose `plan` ("built", "cached", ...)
    ran the steps reported since `begin()` returned `start`."""
    steps = _pending[:]
    _pending.clear()
    done = ForcePoint(kind, plan, steps, perf_counter() - start)
    for run in steps:
        run.force_point = done
    for observer in observers:
        observer.force_point_ran(done)
