"""Gradient graphs rebuilt from templates instead of running the VJP rules again.

A training loop differentiates a history of the same structure at every
step: the same primitives with the same attributes, shapes, dtypes and
devices, connected the same way, over new values. The VJP rules look at
that structure only (never at a value), so they build the same gradient
graph each time, at a few microseconds a node of Python (the namespace
functions they call check and promote as a user's call would). The second
time a structure is differentiated, `backward` keeps a template of the
graph its rules built: per node, its primitive, attributes, type and where
its inputs come from (a node of the history, by position, or an earlier
node of the template). From the third time on, the graph is rebuilt from
the template node by node, without the rules, in about half the time.
(A loop's first call often differs from the next ones: its scalar
constants are leaves its force point computes.)

The structure (`structure`) holds what a rule may look at: each node's
primitive, attributes (a constant's value too), shape, dtype, device and
whether it is realized, the positions of its inputs, and which nodes are
the outputs, the differentiated ones (-1 for one the history does not
reach: it gets no gradient) and the cotangents' seeds.

A rebuilt graph equals the swept one node for node, so it fuses, caches
plans and computes values as the swept one would; its nodes carry no
`origin` (the call a composite's node came from, for `xp.graph`'s views):
they show as primitives. Scalar constants the rules made (0-d leaves) are
shared by every rebuilt graph, as the namespace shares them between calls.
A sweep whose graph holds a node computed during it (a graph past the
depth limit realizes itself as it grows) has no template: it is swept
every time.
"""

from ..counters import counters
from ..graph.node import Node
from ..graph.primitives import BUFFER, PRIMITIVES
from ..namespace.build import MAX_DEPTH, wrap

_FULL = PRIMITIVES["full"]
# Histories with more nodes than this are swept every time: their keys
# would hold more memory than their sweeps cost.
TEMPLATE_NODES = 2048
# Templates kept at most (each with its structure key); when full, all go.
TEMPLATES = 256
# structure -> SEEN after its first sweep, its template after the second
# (NOT_KEPT for a sweep that has none).
_templates = {}
SEEN, NOT_KEPT = "seen once", "not kept"


def forget_templates():
    """Forget every template (tests that count rebuilt graphs start here)."""
    _templates.clear()


def structure(walked, outputs, targets, seeds):
    """The key of the history `walked` (history_order of `outputs` and
    `seeds`, inputs first) for the sweep of `targets`; None for a history
    too long to keep one for. One flat tuple: a node's entry starts with its
    primitive, and the input positions are the ints after its realized flag
    up to the next entry."""
    if len(walked) > TEMPLATE_NODES:
        return None
    position = {}
    key = []
    for i, node in enumerate(walked):
        position[node] = i
        key += (node.op, node.attrs, node.shape, node.dtype, node.device, node.buffer is None)
        key += [position[c] for c in node.inputs]
    key.append((tuple([position[n] for n in outputs]), tuple([position.get(n, -1) for n in targets]),
                tuple([position[n] for n in seeds])))
    return tuple(key)


def gradients(key, walked, sweep):
    """The gradients of the sweep whose history `walked` has structure `key`:
    `sweep()`'s (the VJP rules') the first two times, keeping a template
    the second time; the template's graph rebuilt from then on."""
    known = _templates.get(key)
    if known is None or known is NOT_KEPT:
        if known is None:
            if len(_templates) >= TEMPLATES:
                _templates.clear()
            _templates[key] = SEEN
        return sweep()
    if known is SEEN:
        results = sweep()
        _templates[key] = _template(walked, results) or NOT_KEPT
        return results
    counters["gradients_rebuilt"] += 1
    return _rebuilt(known, walked)


def _template(walked, results):
    """(entries, result positions): per node the sweep made, in an order
    where inputs come first, a shared scalar constant (the node itself) or
    (primitive, attributes, input positions, shape, dtype, device);
    positions count the nodes of `walked`, then the entries. None where a
    made node was computed during the sweep."""
    index = {node: i for i, node in enumerate(walked)}
    entries = []
    for result in results:
        if result is None:
            continue
        stack = [result._node]
        while stack:
            node = stack[-1]
            if node in index:
                stack.pop()
                continue
            missing = [c for c in node.inputs if c not in index]
            if missing:
                stack += missing
                continue
            stack.pop()
            if not node.inputs and node.shape == () and (node.op is _FULL or node.op is BUFFER):
                entry = node   # a scalar constant
            elif node.buffer is not None or node.depth > MAX_DEPTH // 2:
                return None
            else:
                entry = (node.op, node.attrs, tuple([index[c] for c in node.inputs]), node.shape, node.dtype,
                         node.device)
            index[node] = len(walked) + len(entries)
            entries.append(entry)
    return entries, tuple([None if r is None else index[r._node] for r in results])


def _rebuilt(template, walked):
    """The gradients (Arrays, None where a target gets none) of the template's
    graph built anew over the history `walked`."""
    entries, positions = template
    nodes = list(walked)
    for e in entries:
        nodes.append(e if e.__class__ is Node else Node(e[0], tuple([nodes[i] for i in e[2]]), e[1], e[3], e[4],
                                                        e[5]))
    return [None if i is None else wrap(nodes[i]) for i in positions]
