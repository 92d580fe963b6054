"""Slot pass: every value of a plan gets a slot in its buffer list, and every
slot a last use.

Plan inputs take slots 0..n-1 in collect order: realized nodes, and in a
compiled computation the leaves it binds when it runs (placeholders,
variables); each step's results take the next free numbers. A fused group becomes one step at the position of its root
(its last member: every external input of the group is computed by then),
with one output slot per value the group exports.
"""

from ..executors.base import Step
from ..graph.primitives import BOUND, FUSED_OP


def is_input(node):
    """Whether the plan receives the node's value rather than computing it."""
    return node.buffer is not None or node.op.kind == BOUND


def assign_slots(order, groups, requested):
    """(steps, slot count, slots of the requested nodes, input nodes by slot,
    the node each step computes: a group's root for a fused step)."""
    slot = {}
    inputs = []
    for node in order:
        if is_input(node):
            slot[node] = len(inputs)
            inputs.append(node)
    n = len(inputs)
    group_of_root = {g.members[-1]: g for g in groups}
    members = {m for g in groups for m in g.members}
    steps = []
    sources = []
    for node in order:
        if node in slot:
            continue
        group = group_of_root.get(node)
        if group is not None:
            args = tuple(slot[i] for i in group.inputs)
            outs = []
            for o in group.outputs:
                slot[o] = n
                outs.append(n)
                n += 1
            if len(outs) == 1:
                shape, dtype, out = node.shape, node.dtype, outs[0]
            else:
                shape = tuple(o.shape for o in group.outputs)
                dtype = tuple(o.dtype for o in group.outputs)
                out = tuple(outs)
            steps.append(Step(FUSED_OP, (group.program,), shape, dtype, args, out, node.device,
                              tuple((i.shape, i.dtype) for i in group.inputs)))
            sources.append(node)
        elif node not in members:
            args = tuple(slot[i] for i in node.inputs)
            slot[node] = n
            steps.append(Step(node.op, node.attrs, node.shape, node.dtype, args, n, node.device,
                              tuple((i.shape, i.dtype) for i in node.inputs)))
            sources.append(node)
            n += 1
    return steps, n, [slot[r] for r in requested], inputs, sources


def last_uses(segments):
    """slot -> (segment index, step index) of its last read; a transfer
    segment reads its source with step index None."""
    last = {}
    for i, segment in enumerate(segments):
        if segment.transfer is not None:
            last[segment.transfer[0]] = (i, None)
        else:
            for j, step in enumerate(segment.steps):
                for s in step.args:
                    last[s] = (i, j)
    return last


def drops_of(segments, index, last, keep):
    """For each step of segment `index`, the slots whose last use it is
    (never those in `keep`, the plan's outputs)."""
    drops = [[] for _ in segments[index].steps]
    for s, (i, j) in last.items():
        if i == index and j is not None and s not in keep:
            drops[j].append(s)
    return drops
