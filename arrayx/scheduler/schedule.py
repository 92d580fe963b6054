"""From force point to executed plan.

`realize(nodes)` runs the passes over the unrealized graph below `nodes`:

    collect (toposort + plan key) -> rewrite -> fuse -> assign slots -> lower -> run

The plan cache keys the result of every pass after collect by the graph's
structure (primitives, attributes, shapes, dtypes, devices, input layouts),
so the passes run once per structure and a cached plan only binds buffers
and runs.

An intermediate that a second force point needs again (it was computed before
and still is not realized) is kept this time: it becomes a realized leaf as if
it had been forced too. Without that, `float(r[i])` for every `i` of a lazy
`r` recomputes all of `r` once per element. Nodes computed inside
`retain_history()` are pinned instead: autodiff walks their history again
(each call of a `vjp` function), so they are never turned into leaves.

Force points are serialized by one lock: two threads forcing overlapping
graphs would otherwise each see the other's half-realized nodes, and a plan
built from such a graph would be cached under a key that does not describe it.
Executors release the GIL inside kernels, so a single force point still uses
every core (the CPU executor spreads fused groups over a thread pool).
"""

import threading
from itertools import count

from .. import debug, executors
from ..graph.node import Node, retaining, toposort
from ..graph.primitives import BOUND, EVALUATED, STATE
from .collect import collect
from .fuse import fuse
from .lower import lower, transfer
from .rewrite import rewrite
from .slots import assign_slots

# The plan cache holds at most this many graph nodes over all its plans
# (a plan holds roughly 0.5 KB per node); when it is full, the least recently
# used plans go until a quarter of the room is free.
PLAN_CACHE_NODES = 200_000
_plans = {}
_cached_nodes = 0
_uses = count()
_lock = threading.RLock()


class Plan:
    __slots__ = ("n_slots", "segments", "outputs", "groups", "size", "inputs", "used")

    def __init__(self, n_slots, segments, outputs, groups, size, inputs):
        self.n_slots = n_slots
        self.segments = segments    # [(callable(slots), step count)]
        self.outputs = outputs      # slot of each requested node
        self.groups = groups        # the FusedGroups of the plan, for arrayx.debug
        self.size = size            # graph nodes in the key
        self.inputs = inputs        # the nodes whose values fill slots 0..n-1
        self.used = 0               # when it last ran, for eviction


def _layout(node):
    layout = node.layout
    if layout is None:
        layout = node.layout = executors.executor_for(node.device).layout(node.buffer)
    return layout


def _fusable(node):
    ex = executors.executor_for(node.device)
    return "fused" in ex.supports and node.op.name in ex.supports


class UnboundError(ValueError):
    """A force point on a graph that reads a placeholder or variable, or
    holds an assign: values only a compiled computation has."""


def build_plan(order, requested, bound=False):
    """Run the passes after collect over `order`: a compiled Plan.

    With `bound`, placeholders and variables are inputs the caller binds when
    the plan runs (a compiled computation); at a force point they have no
    value, and neither has an assign, which only a computation carries out.
    """
    if not bound:
        unbound = [n for n in order if n.buffer is None and n.op.kind in (BOUND, STATE)]
        if unbound:
            raise UnboundError(_unbound_message(max(unbound, key=lambda n: n.op.kind == STATE)))
    size = len(order)
    order, requested = rewrite(order, requested, _layout)
    groups = fuse(order, requested, _fusable, lambda n: _layout(n) if n.buffer is not None else None)
    steps, n_slots, outputs, inputs = assign_slots(order, groups, requested)
    n_slots, segments = lower(steps, n_slots, [n.device for n in inputs], outputs)
    return Plan(n_slots, segments, outputs, [g.program for g in groups], size, inputs)


def _unbound_message(node):
    if node.op.kind == STATE:
        return ("assign: an assignment runs only inside a computation "
                "(transformer.computation([..., assign(v, x)], ...)); it cannot be forced")
    name = node.attrs[2]
    return (f"{node.op.name} {name!r} has no value at a force point: run the graph through "
            f"transformer.computation(results, *placeholders) and pass its value when calling it")


def _cache(key, plan):
    global _cached_nodes
    if _cached_nodes + plan.size > PLAN_CACHE_NODES:
        for old in sorted(_plans, key=lambda k: _plans[k].used):
            _cached_nodes -= _plans.pop(old).size
            if _cached_nodes + plan.size <= PLAN_CACHE_NODES * 3 // 4:
                break
    _plans[key] = plan
    _cached_nodes += plan.size


def clear_plan_cache():
    """Forget every cached plan (tests that count plans built start here)."""
    global _cached_nodes
    with _lock:
        _plans.clear()
        _cached_nodes = 0


def plan_for(nodes):
    """The plan the next force of `nodes` runs (for `arrayx.debug`); runs nothing."""
    requested = [n for n in dict.fromkeys(nodes) if n.buffer is None]
    with _lock:
        return build_plan(toposort(requested), requested)


def realize(nodes):
    """Compute the buffers of `nodes` (a force point)."""
    with _lock:
        requested = [n for n in (nodes if len(nodes) == 1 else dict.fromkeys(nodes)) if n.buffer is None]
        if not requested:
            return
        order, key, inputs, _ = collect(requested, retaining(), _layout)
        plan = _plans.get(key)
        if plan is None:
            plan = build_plan(order, requested)
            _cache(key, plan)
            debug.counters["plans_built"] += 1
        else:
            debug.counters["plan_cache_hits"] += 1
        plan.used = next(_uses)
        del order
        slots = [n.buffer for n in inputs]
        slots += [None] * (plan.n_slots - len(slots))
        del inputs
        steps = 0
        for program, n_steps in plan.segments:
            program(slots)
            steps += n_steps
        debug.counters["realizations"] += 1
        debug.counters["steps_run"] += steps
        for node, s in zip(requested, plan.outputs):
            node.realize_as(slots[s], EVALUATED)


def run_dynamic(prim, nodes, attrs):
    """Run a data-dependent primitive now; one realized node per output.

    Its inputs are realized first; a device whose executor lacks the primitive
    runs it on the fallback executor, and the results move back to the device.
    """
    realize(nodes)
    device = nodes[0].device
    home = executors.executor_for(device)
    ex = home if prim.name in home.supports else executors.fallback()
    buffers = [n.buffer if ex is home else transfer(n.buffer, home, ex) for n in nodes]
    outputs = []
    for buffer, shape, dtype in ex.run_dynamic(prim.name, buffers, attrs):
        if ex is not home:
            buffer = transfer(buffer, ex, home)
        # Computed values without history, as at any force point.
        outputs.append(Node(EVALUATED, (), (), shape, dtype, device, buffer))
    debug.counters["realizations"] += 1
    return outputs
