"""From force point to executed plan.

`realize(nodes)` runs the passes over the unrealized graph below `nodes`:

    collect (toposort + plan key) -> rewrite -> fuse -> assign slots -> lower -> run

The plan cache keys the result of every pass after collect by the graph's
structure (primitives, attributes, shapes, dtypes, devices, input layouts),
so the passes run once per structure and a cached plan only binds buffers
and runs. A plan that runs at any extent (small elementwise work,
reductions, products, transposes, reshapes, broadcasts, slices and
constants: `collect.extent_free_key`) is cached under that key too, so a
new length of a small expression, or a new batch size of a small model,
finds it; the steps whose attributes hold extents are built again for the
new graph (`_rebind`).

What a force point keeps besides the values asked for is `keep`'s cost
rule. Whether a candidate is held is known only at the force, from
reference counts; a cached plan computes every candidate into an output of
its own, and a force that finds some of them held by nobody runs a variant
built without those (`_variant`).

Force points are serialized by one lock: two threads forcing overlapping
graphs would otherwise each see the other's half-realized nodes, and a plan
built from such a graph would be cached under a key that does not describe it.
Executors release the GIL inside kernels, so a single force point still uses
every core (the CPU executor spreads fused groups over a thread pool).
"""

import os
import sys
import threading
import weakref
from itertools import count
from math import prod

from ..executors import executor_for
from ..executors.base import Step
from ..counters import counters
from ..graph.node import Node, output_types, recording, retaining, scope, toposort
from ..dtypes import FLOATS_STORED_DIRECTLY, stored_directly
from ..graph.primitives import (BOUND, EVALUATED, FAILED, FAILED_OP, FUSED_OP, MOVEMENT, PRIMITIVES, STATE, UPDATE,
                                element_index)
from ..graph.sites import located, raised_again, unraised_copy
from ..references import HELD_ONCE, extra_references
from .collect import (ANY_EXTENT_PRIMITIVES, EXTENT_ATTRIBUTES, collect, extent_free_key, realized_by_views,
                      take_views)
from .keep import (expensive_candidates, held_candidates, keep_watch, materialized_candidates, reduction_candidates,
                   worth_a_variant)
from . import observe
from .fuse import fuse
from .lower import executor_running, lower, rebound_segments, transfer
from .rewrite import rewrite
from .slots import assign_slots

# The plan cache holds plans of at most this many bytes; when it is full,
# the least recently used plans go until a quarter of the room is free. A
# plan's bytes, measured as the process's growth over thousands of plans
# (benchmarks/clients.py's plan-memory row): about 2.7 KB of its own (the
# program, a fused group's generated function) and 0.6 KB per graph node
# (steps, their kernels, the key), within 10 % for a 5-node fused
# expression (5.7 KB) and a 63-node unfused one (40 KB).
PLAN_CACHE_BYTES = 32 << 20
PLAN_BYTES, NODE_BYTES = 2700, 600
# Exact keys that run a plan cached under an extent-free key (see realize).
EXTENT_FREE_KEYS = 4096
_plans = {}
_keys_of = {}       # plan -> how many keys of _plans it is cached under (its exact and extent-free ones)
_extent_free = {}   # exact key -> the extent-free key of its plan
_cached_bytes = 0
_uses = count()
_lock = threading.RLock()
_refcount = sys.getrefcount   # read at every element write (write_element)
_FULL = PRIMITIVES["full"]


class Plan:
    """What a force point or a computation runs: compiled programs over a
    list of slots (see `run`)."""

    __slots__ = ("n_slots", "segments", "programs", "steps", "outputs", "groups", "size", "inputs", "keep",
                 "used", "variants", "rebound", "failing")

    def __init__(self, n_slots, segments, outputs, groups, size, inputs, keep=(), rebound=None, failing=()):
        self.n_slots = n_slots
        self.segments = segments    # the lower pass's Segments: steps and transfers, in order
        self.programs = [s.program for s in segments]   # callable(slots) per segment, in order
        self.steps = sum(len(s.steps) for s in segments if s.steps)   # executor steps one run runs
        self.outputs = outputs      # slot of each requested node, then of each `keep` candidate
        self.groups = groups        # the FusedGroups of the plan, for arrayx.debug
        self.size = size            # graph nodes in the key
        self.inputs = inputs        # the nodes whose values fill slots 0..n-1 (computations only)
        self.keep = keep            # (candidates by position in the collect order, watch): see keep_watch
        self.used = 0               # when it last ran, for eviction
        self.variants = None        # {which candidates are held: the plan keeping those only} (see _variant)
        # (step, position of its node in the collect order) for each step whose attributes hold
        # extents (see _rebind); None where the rewrite pass made such a node.
        self.rebound = rebound
        # (step, position of its node in the order the plan was built from) for each step of a
        # primitive that may fail on values: the node whose site its error names (see failure).
        self.failing = failing

    def run(self, slots):
        """Run the plan over `slots`, a list holding the buffers of its
        inputs (slots 0..n-1); afterwards `slots[s]` holds the value of each
        output slot `s`."""
        slots += [None] * (self.n_slots - len(slots))
        programs = [s.observed() for s in self.segments] if observe.observers else self.programs
        for program in programs:
            program(slots)
        counters["steps_run"] += self.steps


def _layout(node):
    layout = node.layout
    if layout is None:
        layout = node.layout = executor_for(node.device).layout(node.buffer)
    return layout


class UnboundError(ValueError):
    """A force point on a graph that reads a placeholder or variable, or
    holds an assign: values only a compiled computation has. `node` is
    that leaf or assign."""

    def __init__(self, message, node):
        super().__init__(message)
        self.node = node


def build_plan(order, requested, bound=False, candidates=True):
    """Run the passes after collect over `order`: a compiled Plan.

    With `bound`, placeholders and variables are inputs the caller binds when
    the plan runs (a compiled computation); at a force point they have no
    value, and neither has an assign, which only a computation carries out.
    Without `candidates` (and with `bound`), the plan computes `requested`
    and keeps nothing else (see `keep`).
    """
    unready = [n for n in order if n.buffer is None and n.op.kind in ((FAILED,) if bound else (BOUND, STATE, FAILED))]
    if unready:
        failed = next((n for n in unready if n.op is FAILED_OP), None)
        if failed is not None:
            raise raised_again(failed.attrs[0])
        node = max(unready, key=lambda n: n.op.kind == STATE)
        raise UnboundError(_unbound_message(node), node)
    candidates = candidates and not bound
    size = len(order)
    collected, asked = order, requested
    expensive = expensive_candidates(order, requested) if candidates else []
    order, requested = rewrite(order, requested + expensive, _layout)
    materialized = materialized_candidates(order, requested, collected) if candidates else []
    requested = requested + materialized
    groups = fuse(order, requested, lambda n: _layout(n) if n.buffer is not None else None, bound)
    reductions = reduction_candidates(order, requested, collected, groups) if candidates else []
    # Candidates in the order of their output slots, after the asked ones.
    keep = keep_watch(collected, asked, [(n, True) for n in expensive] + [(n, False) for n in materialized]
                      + [(n, True) for n in reductions])
    steps, n_slots, outputs, inputs, sources = assign_slots(order, groups, requested + reductions)
    _check_memory(steps)
    n_slots, segments = lower(steps, n_slots, [n.device for n in inputs], outputs)
    return Plan(n_slots, segments, outputs, [g.program for g in groups], size, inputs if bound else None, keep,
                None if bound else _extent_steps(steps, sources, collected), _failing_steps(steps, sources, collected))


def _failing_steps(steps, sources, collected):
    """(step, position in `collected` of the node it computes) for each
    step of a primitive that may fail on values; -1 where that node is
    neither in `collected` nor the rewrite pass's copy of one."""
    failing = [(step, node) for step, node in zip(steps, sources) if step.op.may_fail]
    if not failing:
        return ()
    position = {node: i for i, node in enumerate(collected)}
    found = []
    for step, node in failing:
        i = position.get(node)
        if i is None:   # a copy over rewritten inputs holds the position of the node it stands for
            i = getattr(node, "index", -1)
            if not (0 <= i < len(collected) and collected[i].op is node.op):
                i = -1
        found.append((step, i))
    return tuple(found)


def failure(error, plan, sites):
    """(k, error to raise) for `error`, raised by running `plan`, where a
    step of a primitive that may fail raised it on values
    (`executors.base.naming_step`): that step is plan.failing[k], and the
    error names the call site of its node (`graph.sites.located`; `sites`
    holds one per entry of plan.failing, None where unknown), or is `error`
    itself where the site is unknown. None for any other error."""
    step = getattr(error, "failed_step", None)
    if step is None:
        return None
    for k, (s, _) in enumerate(plan.failing):
        if s is step:
            return k, error if sites[k] is None else located(error, sites[k])
    return None


def site_of(node):
    """The call site a node of a primitive that may fail keeps (None for
    None, a node not found)."""
    return getattr(node, "site", None)


def _extent_steps(steps, sources, collected):
    """(step, position in the collect order `collected` of the node it
    computes) for each step whose attributes hold extents; None where one
    of those nodes is neither in that order nor the rewrite pass's copy of
    one over rewritten inputs (which has its attributes and position), but
    a node a rewrite rule made (the reshapes of a dot, say)."""
    found = []
    for step, node in zip(steps, sources):
        if step.op in EXTENT_ATTRIBUTES:
            i = getattr(node, "index", -1)   # unset on a node no walk reached
            original = collected[i] if 0 <= i < len(collected) else None
            if original is not node and (original is None or original.attrs is not node.attrs):
                return None
            found.append((step, i))
    return tuple(found)


def _runs_at_any_extent(plan):
    """Whether `plan`, built for a graph with an extent-free key, runs at
    any extent (steps that hold extents rebound, see `_rebind`): its steps
    are still the primitives that key allows, on one executor, and each
    step that holds extents computes a node of the graph (the rewrite pass
    may have made a dot of flattened operands, whose reshapes are not)."""
    return plan.rebound is not None and all(
        segment.transfer is None
        and all(s.op is FUSED_OP or s.op in ANY_EXTENT_PRIMITIVES or s.op in EXTENT_ATTRIBUTES for s in segment.steps)
        for segment in plan.segments)


def _rebind(plan, order):
    """`plan`, found under the extent-free key of the graph `order`, with
    each step whose attributes hold extents built again from the node at
    its position in `order` (its other steps take any extent): the plan
    of `order` without the passes that decided it."""
    new = {}
    for step, position in plan.rebound:
        node = order[position]
        new[step] = Step(step.op, node.attrs, node.shape, node.dtype, step.args, step.out, step.device,
                         tuple((i.shape, i.dtype) for i in node.inputs))
    return Plan(plan.n_slots, rebound_segments(plan.segments, new, plan.outputs), plan.outputs, plan.groups,
                plan.size, None, plan.keep, tuple((new[step], position) for step, position in plan.rebound))


def _variant(plan, held, order, requested, kept):
    """The plan computing what `plan` computes that keeps only the `kept`
    candidates (`held` says which, in candidate order): the others are
    intermediates like any other, their memory freed at their last use or
    written into by a later step, instead of held to the end of the run
    (ten k-means steps held twenty 64 MB results). Built once per pattern
    of held candidates, cached with `plan`."""
    if plan.variants is None:
        plan.variants = {}
    variant = plan.variants.get(held)
    if variant is None:
        variant = build_plan(order, requested + kept, candidates=False)
        _make_room(plan_bytes(variant), keeping=plan)
        plan.variants[held] = variant
        counters["plan_variants_built"] += 1
    return variant


def _physical_memory():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):   # no sysconf (Windows): no check
        return None


# A result larger than the machine's memory can never be allocated; the
# plan says so before compiling anything (a blocked group over 10^12 points
# would spend a minute planning blocks first).
MEMORY_BYTES = _physical_memory()


def _check_memory(steps):
    """A MemoryError naming the first step whose result exceeds the machine's
    memory, on an executor that holds its results in it."""
    if MEMORY_BYTES is None:
        return
    for step in steps:
        if step.op.kind == MOVEMENT or not executor_for(step.device).holds_results:
            continue   # views, where the executor can; graphs of chunks computed elsewhere
        for shape, dtype in output_types(step.shape, step.dtype):
            nbytes = prod(shape) * dtype.itemsize
            if nbytes > MEMORY_BYTES:
                name = "fused group" if step.op.name == "fused" else step.op.name
                raise MemoryError(f"{name}: a result of shape {shape} and dtype {dtype} needs "
                                  f"{nbytes / 2**30:.1f} GiB, more than this machine's "
                                  f"{MEMORY_BYTES / 2**30:.1f} GiB of memory")


def _unbound_message(node):
    if node.op.kind == STATE:
        return ("assign: an assignment runs only inside a computation "
                "(transformer.computation([..., assign(v, x)], ...)); it cannot be forced")
    name = node.attrs[2]
    return (f"{node.op.name} {name!r} has no value at a force point: run the graph through "
            f"transformer.computation(results, *placeholders) and pass its value when calling it")


def plan_bytes(plan):
    """The memory a cached plan holds, with its variants (see PLAN_BYTES)."""
    nbytes = PLAN_BYTES + NODE_BYTES * plan.size
    if plan.variants:
        nbytes += sum(plan_bytes(v) for v in plan.variants.values())
    return nbytes


def _remember_extent_free(key, any_extent):
    """Remember that exact `key` runs the plan under `any_extent`, so that
    its next force looks the plan up without working out that key again. A
    key, not a plan: the cache's bound still decides which plans stay. At
    most EXTENT_FREE_KEYS of them (a few hundred bytes each); when full, all go."""
    if len(_extent_free) >= EXTENT_FREE_KEYS:
        _extent_free.clear()
    _extent_free[key] = any_extent


def _cache(key, plan):
    """Cache `plan` under `key`; its bytes count once however many keys it has."""
    keys = _keys_of.get(plan, 0)
    if not keys:
        _make_room(plan_bytes(plan))
    _keys_of[plan] = keys + 1
    _plans[key] = plan


def _make_room(nbytes, keeping=None):
    """Count `nbytes` more in the cache (a new plan, or a variant of the
    cached plan `keeping`), first dropping the plans used longest ago, never
    `keeping`, if they would not fit."""
    global _cached_bytes
    if _cached_bytes + nbytes > PLAN_CACHE_BYTES:
        for old in sorted(_plans, key=lambda k: _plans[k].used):
            plan = _plans[old]
            if plan is keeping:
                continue
            del _plans[old]
            keys = _keys_of.pop(plan) - 1
            if keys:
                _keys_of[plan] = keys
                continue
            _cached_bytes -= plan_bytes(plan)
            if _cached_bytes + nbytes <= PLAN_CACHE_BYTES * 3 // 4:
                break
    _cached_bytes += nbytes


def cached_plans():
    """(number of cached plans, the bytes they hold)."""
    return len(_keys_of), _cached_bytes


def clear_plan_cache():
    """Forget every cached plan (tests that count plans built start here)."""
    global _cached_bytes
    with _lock:
        _plans.clear()
        _keys_of.clear()
        _extent_free.clear()
        _cached_bytes = 0


def plan_for(nodes):
    """The plan the next force of `nodes` runs (for `arrayx.debug`), with
    every keep candidate an output (a force that finds some held by nobody
    runs a variant without them); runs nothing."""
    with _lock:
        take_views(toposort(list(dict.fromkeys(nodes))))
        requested = [n for n in dict.fromkeys(nodes) if n.buffer is None]
        return build_plan(toposort(requested), requested)


def realize(nodes):
    """Compute the buffers of `nodes` (a force point)."""
    with _lock:
        if len(nodes) == 1:   # one array's force point, the common case
            node = nodes[0]
            if node.buffer is not None or (node.op.kind is MOVEMENT or node.op is _FULL) and realized_by_views(node):
                return
            requested = [node]
        else:
            requested = [n for n in dict.fromkeys(nodes) if n.buffer is None]
        if not requested:
            return
        observed = observe.observers
        start = observe.begin() if observed else 0.0
        order, requested, key, slots = collect(requested, retaining(), _layout)   # slots: the input buffers so far
        plan = _plans.get(key)
        built = False
        if plan is None:
            any_extent = _extent_free.get(key) or extent_free_key(order, requested, _layout)
            plan = None if any_extent is None else _plans.get(any_extent)
            if plan is None:
                plan = build_plan(order, requested)
                built = True
                _cache(key, plan)
                if any_extent is not None and _runs_at_any_extent(plan):
                    _cache(any_extent, plan)
            elif plan.rebound:
                plan = _rebind(plan, order)
                _cache(key, plan)
                counters["plans_rebound"] += 1
            else:
                _remember_extent_free(key, any_extent)
        if built:
            counters["plans_built"] += 1
        else:
            counters["plan_cache_hits"] += 1
        plan.used = next(_uses)
        kept = ()   # the candidates computed into outputs, None for one computed and dropped
        if plan.keep:
            held = held_candidates(order, plan.keep)
            kept = [order[p] for p, _ in plan.keep[0]]
            if not all(held):
                if worth_a_variant(kept, held):
                    kept = [n for n, h in zip(kept, held) if h]
                    plan = _variant(plan, held, order, requested, kept)
                else:
                    kept = [n if h else None for n, h in zip(kept, held)]
        failing = [order[p] if p >= 0 else None for _, p in plan.failing] if plan.failing else ()
        del order
        try:
            plan.run(slots)
        except (ValueError, LookupError) as error:
            failed = failure(error, plan, [site_of(n) for n in failing])
            if failed is None:
                raise
            k, error = failed
            if failing[k] is not None:
                # Later forces that need it raise the error again rather than run it again.
                failing[k].fail_with(unraised_copy(error), FAILED_OP)
            raise error from None
        counters["realizations"] += 1
        if observed:
            observe.force_point("force", "built" if built else "cached", start)
        outputs = plan.outputs
        i = 0
        for node in requested:
            node.realize_as(slots[outputs[i]], EVALUATED)
            i += 1
        for node in kept:
            if node is not None:
                node.realize_as(slots[outputs[i]], EVALUATED)
                counters["results_kept"] += 1
            i += 1


def evaluate(nodes):
    """Compute `nodes` and have their executors hold the values (`xp.eval`):
    on the dask device their graphs are persisted, so later work reads the
    computed chunks instead of computing them again."""
    realize(nodes)
    on_device = {}
    for node in dict.fromkeys(nodes):
        on_device.setdefault(node.device, []).append(node)
    for device, held in on_device.items():
        for node, buffer in zip(held, executor_for(device).persist([n.buffer for n in held])):
            node.buffer = buffer


def hold_in_memory(node):
    """Compute `node` and have it hold its value in memory, which a DLPack
    export with copy=False shares: the consumer and the array see the same
    memory from then on (on the dask device, the host array computing it made)."""
    realize([node])
    node.buffer = executor_for(node.device).hold_in_memory(node.buffer)
    return node


def run_dynamic(prim, nodes, attrs):
    """Run a data-dependent primitive now; one realized node per output.

    Its inputs are realized first; a device whose executor lacks the primitive
    runs it on the fallback executor, and the results move back to the device.
    """
    realize(nodes)
    observed = observe.observers
    start = observe.begin() if observed else 0.0
    device = nodes[0].device
    home = executor_for(device)
    ex = executor_running(prim, tuple(n.dtype for n in nodes), None, home)
    buffers = [n.buffer if ex is home else transfer(n.buffer, home, ex) for n in nodes]
    outputs = []
    for buffer, shape, dtype in ex.run_dynamic(prim.name, buffers, attrs):
        if ex is not home:
            buffer = transfer(buffer, ex, home)
        # Computed values without history, as at any force point.
        outputs.append(Node(EVALUATED, (), (), shape, dtype, device, buffer))
    counters["realizations"] += 1
    counters["steps_run"] += 1
    if observed:
        observe.dynamic_ran(prim, attrs, ex, nodes, outputs, start)
    return outputs


def _sole_owner(ex, node):
    """Whether `node` alone holds its buffer and that buffer's memory is its
    own (no view of another buffer, no user memory): writing into it changes
    no value anyone else can see."""
    return ex.owns_memory(node.buffer) and extra_references((node.buffer,), 0) == 1


def read_element(node, index):
    """A realized 0-d node holding element `index` (one non-negative int per
    axis, in range) of the realized `node`, read now; None where the
    executor has no such read, and inside `retain_history()` or a trace
    (autodiff and jit see the read as a slice of `node`). The element is a
    copy: a later write into `node`'s buffer does not change it."""
    if recording():
        return None
    buffer = executor_for(node.device).read_element(node.buffer, index)
    if buffer is None:
        return None
    return Node(EVALUATED, (), (), (), node.dtype, node.device, buffer)


def write_element(array, key, value):
    """array[key] = value at once, in the array's buffer, when `key` selects
    one element (an int per axis, in range: `element_index`), `value` is a
    Python scalar stored directly in the array's dtype
    (`dtypes.stored_directly`) or a realized 0-d node of that dtype on the
    array's device, and the array is realized, with no history, and nothing
    else refers to its value (see `update_in_place`). False, with nothing
    written, where any of that does not hold: the caller then records an
    update, which checks the key and the value.

    Element loops (`x[i, i] = 0.0`) call this a thousand times, so it is one
    frame holding every check, the common cases first: a matrix key of two
    ints is passed on as it is (the executor's write checks its range), the
    reference counts are read inline (`references`' calibration), and the
    executor's answer that a buffer's memory is its own is remembered for
    the last buffer written (a buffer keeps its memory while it lives)."""
    global _writable
    node = array._node
    buffer = node.buffer
    if buffer is None or node.inputs:
        return False
    kind = type(value)
    if kind is float:
        if node.dtype not in FLOATS_STORED_DIRECTLY:
            return False
    elif kind is Node:
        if value.shape != () or value.buffer is None or value.dtype is not node.dtype or value.device is not node.device:
            return False
        value = value.buffer
    elif not stored_directly(value, node.dtype):
        return False
    shape = node.shape
    if type(key) is tuple and len(key) == 2 == len(shape):
        i, j = key   # a matrix element, the loops' common key: the executor's write checks the range
        if type(i) is not int or type(j) is not int:
            return False
    else:
        key = element_index(shape, key)
        if key is None:
            return False
    if (_refcount(node) != HELD_ONCE or _refcount(buffer) != HELD_ONCE
            or scope.open and (scope.thread.retaining or scope.thread.tracing)):   # recording(), inline
        return False
    last, write = _writable
    if last() is not buffer:
        ex = executor_for(node.device)
        if not ex.updates_in_place or not ex.owns_memory(buffer):
            return False
        write = ex.write_element
        try:
            _writable = (weakref.ref(buffer), write)
        except TypeError:   # a buffer type without weak references: asked again next time
            pass
    try:
        write(buffer, key, value)
    except IndexError:   # nothing written: the update the caller records raises the error
        return False
    return True


def _no_buffer():
    return None


# (weak reference to the last buffer write_element wrote into, its executor's write_element)
_writable = (_no_buffer, None)


def update_in_place(node):
    """Carry out the update `node` (update_slice, scatter, scatter_add: its
    first input with some elements replaced) now, in its first input's
    buffer, when nothing but `node` refers to that input, and that input is
    realized or is itself an update.

    Then nobody can see the old value, and writing into it is what NumPy's
    `x[i] = v` does: a loop of n updates costs n element writes instead of n
    copies (or one plan per distinct index). One update of a lazy array stays
    lazy, in the graph that computes the array; from the second update of a
    run on, the input and the value are forced first if they are lazy (one
    force point), and the later ones write at once. A buffer that shares
    memory with another buffer or with a user's array (a view, `copy=False`),
    or that another object holds, is copied once first. Inside
    `retain_history()` (autodiff walks the update again) and while tracing,
    and on an executor without `updates_in_place`, `node` stays lazy.
    """
    if node.op.kind != UPDATE or node.buffer is not None or recording():
        return
    ex = executor_for(node.device)
    if not ex.updates_in_place:
        return
    target = node.inputs[0]
    if target.buffer is None and target.op.kind != UPDATE:
        return
    del target
    if extra_references(node.inputs, 0):
        return   # another array or node holds the old value: the update stays functional
    with _lock:
        pending = [n for n in node.inputs if n.buffer is None]
        if pending:
            realize(pending)
        target = node.inputs[0]
        if not _sole_owner(ex, target):
            target.buffer = ex.copy(target.buffer)
            target.layout = None
        del target
        node.realize_as(ex.update(node.op, node.attrs, node.shape, node.dtype, [i.buffer for i in node.inputs]),
                        EVALUATED)
        counters["updates_in_place"] += 1
