"""Fusion pass: maximal groups of elementwise nodes become one `fused` step.

Groups grow from consumers to producers (XLA's producer-into-consumer
fusion). Walking the plan's nodes users-first, a node starts a group when it is
elementwise or a block-combinable reduction (sum, prod, max, min, any, all);
an elementwise producer joins the group of its users when every user inside
the plan is in that one group and it has the group's iteration shape. A group
built this way is convex (no path leaves it and comes back), so it can run as
one step, and no member is recomputed: a member some force point asked for is
an extra output of the group.

A reduction starts a group of its own, as its root, unless it is a row
reduction of a group: it keeps its dimensions, reduces trailing axes (the
same ones as the group's other row reductions), reads a value of the group's
shape and all its users are in the group. Then each block of the group holds
whole rows, and the group computes the reduction and its broadcast back in one
pass: row softmax is one group (max, subtract, exp, sum, divide).

Where the executor says it can (`fused_rows_end_in_epilogues`), a row
reduction whose users form an elementwise group of its kept shape makes that
group the epilogue of a rows group over the reduction's source: the
reduction and the producers of the whole rows then join it as above, so row
logsumexp (max, subtract, exp, sum, then log and add once per row) is one
group that reads each row once from memory. Where nothing over the whole
rows reads its one row reduction (`log(sum(exp(x)))`), the epilogue goes
back to a group of its own: the group ending in that reduction then needs
no whole rows (blocks and native pieces may cut them, dask reduces chunks
of a row as a tree).

An arg reduction (argmax, argmin) over one axis ends a group where the
executor says it can (`fused_groups_end_in_arg_reductions`): the values it
compares are then never written out (k-means' nearest center is the argmin
of a distance expression).

Operands of another shape (a 0-d scalar, a row to broadcast) are inputs of the
group, not members; a small group of one node, or an arg reduction alone,
stays an ordinary step.

A node is a member only where the executor of its device fuses and `runs` it
(asked per node): a node it cannot run splits the group, runs on the
fallback executor with transfers (the lower pass), and the rest of the group
stays on the device.
"""

from math import prod

from .. import executors
from ..graph.fused import FusedGroup, Instruction
from ..graph.node import users_of
from ..graph.primitives import ARG_REDUCE_OPS, BLOCK_REDUCE_OPS, BOUND, ELEMENTWISE_OPS, REDUCE

# A lone elementwise node or reduction over fewer points than this runs as an
# ordinary step: there is nothing to fuse, and blocks or threads cannot pay
# (but see Executor.lone_groups_when_bound).
SINGLE_NODE_MIN_SIZE = 1 << 16
# Members of one group at most: a group compiles to one function (a line a
# member on the CPU, a kernel on a GPU), and compile time grows with it.
MAX_MEMBERS = 4096
# False inside `arrayx.debug.unfused()`.
ENABLED = True


class Group:
    """Nodes of the plan fused into one step (members in plan order)."""

    __slots__ = ("shape", "device", "row_axes", "members", "inputs", "outputs", "program")

    def __init__(self, shape, device):
        self.shape = shape
        self.device = device
        self.row_axes = None   # the axes its row reductions reduce
        self.members = []
        self.inputs = []
        self.outputs = []
        self.program = None


def fuse(order, requested, layout_of, bound=False):
    """Groups of `order` (a topological order) worth fusing, in plan order;
    `layout_of(node)` gives the layout of a realized input; `bound`: the
    plan is a compiled computation's."""
    if not ENABLED:
        return []
    wanted = set(requested)
    users = users_of(order)
    # A computation of one node: as a group of its own, at any size, its
    # calls may run as one call of compiled code (Executor.shortcut).
    alone = bound and sum(n.buffer is None and n.op.kind != BOUND for n in order) == 1
    group_of = {}
    for node in reversed(order):
        name = node.op.name
        if node.buffer is not None or not (name in ELEMENTWISE_OPS or name in BLOCK_REDUCE_OPS
                                           or name in ARG_REDUCE_OPS):
            continue
        ex = executors.executor_for(node.device)
        if not (ex.fuses and ex.runs(node.op, tuple(i.dtype for i in node.inputs), node.dtype)):
            continue
        if name in ARG_REDUCE_OPS:
            if not ex.fused_groups_end_in_arg_reductions or len(node.attrs[0]) != 1:
                continue
            group = Group(node.inputs[0].shape, node.device)
        elif name in ELEMENTWISE_OPS:
            group = _group_of_users(node, users.get(node), group_of)
            if group is not None and group.shape != node.shape:
                group = None
            if group is None:
                group = Group(node.shape, node.device)
        else:
            group = _row_group(node, users.get(node), group_of, wanted, ex)
            if group is None:
                group = Group(node.inputs[0].shape, node.device)
        group.members.append(node)
        group_of[node] = group
    for group in {id(g): g for g in group_of.values()}.values():
        _split_epilogue(group, users, group_of)
    groups = []
    seen = set()
    for node in order:
        group = group_of.get(node)
        if group is None or id(group) in seen:
            continue
        seen.add(id(group))
        group.members.reverse()   # plan order: producers first, the root last
        lone_pays = alone and executors.executor_for(group.device).lone_groups_when_bound
        if len(group.members) == 1 and (prod(group.shape) < SINGLE_NODE_MIN_SIZE and not lone_pays
                                        or group.members[0].op.name in ARG_REDUCE_OPS):
            for member in group.members:
                del group_of[member]
            continue
        group.program = _program(group, wanted, layout_of)
        groups.append(group)
    return groups


def _group_of_users(node, node_users, group_of):
    """The one group all the users of `node` belong to, or None."""
    if not node_users:
        return None
    group = group_of.get(node_users[0])
    if group is None or group.device is not node.device or len(group.members) >= MAX_MEMBERS:
        return None
    for user in node_users:
        if group_of.get(user) is not group:
            return None
    return group


def _row_group(node, node_users, group_of, wanted, ex):
    """The group a reduction can join as a row reduction, or None; `ex` is
    the executor of its device."""
    axes, keepdims = node.attrs
    source = node.inputs[0]
    ndim = len(source.shape)
    if not keepdims or not axes or axes != tuple(range(ndim - len(axes), ndim)) or node in wanted:
        return None
    group = _group_of_users(node, node_users, group_of)
    if group is None or group.row_axes not in (None, axes):
        return None
    if (group.shape == node.shape != source.shape and ex.fused_rows_end_in_epilogues
            and group.members[0].op.name in ELEMENTWISE_OPS):
        # Its users, all elementwise (a group without row reductions has
        # no reduction but its root), become the epilogue of a rows group.
        group.shape = source.shape
    if group.shape != source.shape:
        return None
    root = group.members[0]   # members are in users-first order while groups grow
    if ex.fused_rows_end_in_row_reductions and root.op.kind == REDUCE and root.attrs[0] != axes:
        return None
    group.row_axes = axes
    return group


def _split_epilogue(group, users, group_of):
    """Give the epilogue of `group` a group of its own where the group has
    one row reduction and only the epilogue reads it."""
    if group.row_axes is None:
        return
    epilogue = {m for m in group.members if m.op.name in ELEMENTWISE_OPS and m.shape != group.shape}
    reductions = [m for m in group.members if m.op.kind == REDUCE]
    if not epilogue or len(reductions) != 1 or not all(u in epilogue for u in users[reductions[0]]):
        return
    own = Group(reductions[0].shape, group.device)
    own.members = [m for m in group.members if m in epilogue]
    group.members = [m for m in group.members if m not in epilogue]
    group.row_axes = None
    for member in own.members:
        group_of[member] = own


def _program(group, wanted, layout_of):
    """The group's FusedGroup; fills `group.inputs` and `group.outputs`."""
    value = {}
    inputs = []
    members = group.members
    member_set = set(members)
    for node in members:
        for i in node.inputs:
            if i not in member_set and i not in value:
                value[i] = len(inputs)
                inputs.append(i)
    body = []
    for k, node in enumerate(members):
        value[node] = len(inputs) + k
        body.append(Instruction(node.op, node.attrs, tuple(value[i] for i in node.inputs), node.shape, node.dtype))
    root = members[-1]
    outputs = [n for n in members[:-1] if n in wanted] + [root]
    group.inputs = inputs
    group.outputs = outputs
    descriptions = tuple((n.shape, n.dtype, layout_of(n)) for n in inputs)
    return FusedGroup(group.shape, descriptions, tuple(body), tuple(value[n] for n in outputs))
