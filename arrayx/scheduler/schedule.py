"""From force point to executed plan.

`realize(nodes)` collects the unrealized graph below `nodes`, looks its
structure up in the plan cache (primitives, attributes, shapes, dtypes,
devices, and which nodes are inputs), builds and compiles a plan on a miss, runs
it, and turns the requested nodes into realized leaves.

An intermediate that a second force point needs again (it was computed before
and still is not realized) is kept this time: it becomes a realized leaf as if
it had been forced too. Without that, `float(r[i])` for every `i` of a lazy
`r` recomputes all of `r` once per element. Nodes computed inside
`retain_history()` are pinned instead: autodiff walks their history again
(each call of a `vjp` function), so they are never turned into leaves.

A plan is a list of segments, each a run of steps compiled by one executor. A
step whose primitive the device's executor does not support runs on the CPU
executor; the plan transfers its inputs there and its result back.
"""

from .. import debug, executors
from ..executors.base import Step
from ..graph.node import Node, retaining, toposort
from ..graph.primitives import EVALUATED

PLAN_CACHE_SIZE = 4096
_plans = {}


class Plan:
    __slots__ = ("n_slots", "segments", "outputs")

    def __init__(self, n_slots, segments, outputs):
        self.n_slots = n_slots
        self.segments = segments    # [(callable(slots), step count)]
        self.outputs = outputs      # slot of each requested node


def _structure(order, requested):
    """The plan-cache key of a graph, and its input nodes in slot order."""
    position = {}
    key = []
    inputs = []
    for i, node in enumerate(order):
        position[node] = i
        if node.buffer is not None:
            inputs.append(node)
            key.append((node.shape, node.dtype, node.device))
        else:
            ins = node.inputs
            if len(ins) == 1:
                where = (position[ins[0]],)
            elif len(ins) == 2:
                where = (position[ins[0]], position[ins[1]])
            else:
                where = tuple([position[n] for n in ins])
            key.append((node.op, node.attrs, node.shape, node.dtype, node.device, where))
    key.append(tuple(position[n] for n in requested))
    return tuple(key), inputs


def _transfer(buffer, source, target):
    """Move a buffer (or the tuple of a multi-output step) between executors."""
    if isinstance(buffer, tuple):
        return tuple(source.transfer(b, target) for b in buffer)
    return source.transfer(buffer, target)


def _transfer_step(source, target):
    def run(slots, s, t):
        slots[t] = _transfer(slots[s], source, target)
    return run


def _build_plan(order, requested):
    """Assign slots (inputs first), split into executor segments, compile."""
    slot = {}
    n_inputs = 0
    for node in order:
        if node.buffer is not None:
            slot[node] = n_inputs
            n_inputs += 1
    n_slots = n_inputs
    owner = {slot[n]: executors.executor_for(n.device) for n in order if n.buffer is not None}
    segments = []  # [executor, [steps]] or ('transfer', fn, s, t)
    for node in order:
        if node.buffer is not None:
            continue
        home = executors.executor_for(node.device)
        ex = home if node.op.name in home.supports else executors.cpu_executor
        args = []
        for n in node.inputs:
            s = slot[n]
            if owner[s] is not ex:
                segments.append(("transfer", _transfer_step(owner[s], ex), s, n_slots))
                owner[n_slots] = ex
                s = n_slots
                n_slots += 1
            args.append(s)
        out = n_slots
        n_slots += 1
        owner[out] = ex
        step = Step(node.op, node.attrs, node.shape, node.dtype, tuple(args), out)
        if segments and segments[-1][0] is ex:
            segments[-1][1].append(step)
        else:
            segments.append([ex, [step]])
        if ex is not home:
            segments.append(("transfer", _transfer_step(ex, home), out, n_slots))
            owner[n_slots] = home
            n_slots += 1
        slot[node] = n_slots - 1
    outputs = [slot[n] for n in requested]
    return Plan(n_slots, _compile(segments, outputs), outputs)


def _compile(segments, outputs):
    """Compile each segment with the drops that free intermediates early."""
    last_use = {}
    for i, seg in enumerate(segments):
        if seg[0] == "transfer":
            last_use[seg[2]] = (i, None)
        else:
            for j, step in enumerate(seg[1]):
                for s in step.args:
                    last_use[s] = (i, j)
    keep = set(outputs)
    compiled = []
    for i, seg in enumerate(segments):
        if seg[0] == "transfer":
            _, fn, s, t = seg
            compiled.append(((lambda slots, fn=fn, s=s, t=t: fn(slots, s, t)), 0))
            continue
        ex, steps = seg
        drops = [[] for _ in steps]
        for s, (si, j) in last_use.items():
            if si == i and j is not None and s not in keep:
                drops[j].append(s)
        compiled.append((ex.compile(steps, drops), len(steps)))
    return compiled


# Node.computed: never computed, computed once outside retain_history, pinned.
_NEVER, _ONCE, _PINNED = 0, 1, 2


def _recomputed(order, seen):
    """Nodes of `order` that an earlier force point computed and that feed a
    node computed for the first time: the boundary where work would repeat.
    Users come before their inputs in reversed(order), so each input's flag is
    read before this force point sets it."""
    if retaining():
        for node in order:
            if node.buffer is None:
                node.computed = _PINNED
        return []
    again = []
    for node in reversed(order):
        if node.buffer is None and node.computed == _NEVER:
            node.computed = _ONCE
            for n in node.inputs:
                if n.computed == _ONCE and n.buffer is None and n not in seen:
                    seen.add(n)
                    again.append(n)
    return again


def realize(nodes):
    """Compute the buffers of `nodes` (a force point)."""
    requested = []
    seen = set()
    for n in nodes:
        if n.buffer is None and n not in seen:
            seen.add(n)
            requested.append(n)
    if not requested:
        return
    order = toposort(requested)
    requested += _recomputed(order, seen)
    key, inputs = _structure(order, requested)
    plan = _plans.get(key)
    if plan is None:
        plan = _build_plan(order, requested)
        if len(_plans) >= PLAN_CACHE_SIZE:
            del _plans[next(iter(_plans))]
        _plans[key] = plan
        debug.counters["plans_built"] += 1
    else:
        debug.counters["plan_cache_hits"] += 1
    del order
    slots = [n.buffer for n in inputs] + [None] * (plan.n_slots - len(inputs))
    del inputs
    steps = 0
    for program, count in plan.segments:
        program(slots)
        steps += count
    debug.counters["realizations"] += 1
    debug.counters["steps_run"] += steps
    for node, s in zip(requested, plan.outputs):
        node.realize_as(slots[s], EVALUATED)


def run_dynamic(prim, nodes, attrs):
    """Run a data-dependent primitive now; one realized node per output.

    Its inputs are realized first; a device whose executor lacks the primitive
    runs it on the CPU executor, and the results move back to the device.
    """
    realize(nodes)
    device = nodes[0].device
    home = executors.executor_for(device)
    ex = home if prim.name in home.supports else executors.cpu_executor
    buffers = [n.buffer if ex is home else _transfer(n.buffer, home, ex) for n in nodes]
    outputs = []
    for buffer, shape, dtype in ex.run_dynamic(prim.name, buffers, attrs):
        if ex is not home:
            buffer = _transfer(buffer, ex, home)
        # Computed values without history, as at any force point.
        outputs.append(Node(EVALUATED, (), (), shape, dtype, device, buffer))
    debug.counters["realizations"] += 1
    return outputs
