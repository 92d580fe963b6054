"""Views of the unevaluated graph below some arrays, behind `xp.graph`:
text (one node a line) and Graphviz DOT or SVG.

Both show nodes as a user wrote them (`labels`): attributes by name, a
Python scalar inside the expression that reads it rather than as a node of
its own, and the call of a composite function (`linspace`, `mean`, ...,
see `Node.origin`) as one node with edges from the arrays passed to it;
the nodes of its lowering that nothing else shown reads are hidden
(`lowered=True` shows every primitive). The DOT view draws the fused
groups the scheduler's fuse pass makes of this graph as clusters
(`fused_groups`, from the plan as it runs, can differ where a rewrite
replaced nodes, as `sum(x * y)` by a dot product): a call shown as one
node sits in the cluster of the group that computes its result, and a
group entirely hidden inside calls is not drawn. Realized leaves are
filled, and every node shows its device when the graph spans several
devices or is off the host.
"""

import shutil

from .. import executors
from ..device import CPU
from ..graph.node import toposort
from ..scheduler import fuse
from .labels import call_inputs, call_label, node_label, node_type, value_text

FORMATS = ("text", "dot", "svg")


def _constant_text(node):
    """The value of a 0-d node a view shows inline, or None: a Python scalar
    the user wrote (an unrealized 0-d `full`) or a realized 0-d leaf."""
    if node.shape != ():
        return None
    if node.buffer is None:
        return value_text(node.attrs[2]) if node.op.name == "full" else None
    if node.inputs:
        return None
    return repr(executors.executor_for(node.device).to_host(node.buffer).item())


def _leaf_text(node):
    return "buffer" if node.buffer is not None else node_label(node)


def _call(node, lowered):
    """The composite call a view shows `node` as, or None."""
    return None if lowered else node.origin


def _shown_inputs(node, lowered):
    """The nodes a view draws edges from into `node`."""
    if node.buffer is not None:
        return ()
    call = _call(node, lowered)
    return node.inputs if call is None else call_inputs(call)


def _shown(outputs, lowered):
    """The nodes below `outputs` a view shows, inputs first: a toposort over
    `_shown_inputs`, which leaves out a node reached only from inside calls
    shown as one node."""
    return toposort(outputs, lambda node: _shown_inputs(node, lowered))


def describe(outputs, lowered=False):
    """One line per node: `%i = op(%inputs, attrs) : dtype[shape]`, inputs
    first; 0-d constants appear in the lines that read them."""
    name = {}
    lines = []
    for n in _shown(outputs, lowered):
        constant = _constant_text(n)
        if constant is not None and n not in outputs:
            name[n] = constant
            continue
        name[n] = f"%{len(lines)}"
        call = _call(n, lowered)
        if call is not None:
            kind = call_label(call, name.__getitem__)
        elif n.buffer is None and n.inputs:
            label = node_label(n)
            head, _, rest = label.partition("(")
            args = [name[i] for i in n.inputs]
            if rest:
                args.append(rest[:-1])
            kind = f"{head}({', '.join(args)})"
        elif constant is not None:
            kind = f"constant {constant}"
        else:
            kind = _leaf_text(n)
        lines.append(f"{name[n]} = {kind} : {node_type(n)}")
    return "\n".join(lines)


def _layout_of(node):
    return executors.executor_for(node.device).layout(node.buffer) if node.buffer is not None else None


def fusion_clusters(outputs):
    """The fuse pass's groups of the graph below `outputs`: lists of member
    nodes, in plan order."""
    order = toposort(outputs)
    requested = [n for n in dict.fromkeys(outputs) if n.buffer is None]
    return [group.members for group in fuse.fuse(order, requested, _layout_of)]


def _quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def dot(outputs, lowered=False):
    """Graphviz DOT of the graph below `outputs` (see the module)."""
    order = _shown(outputs, lowered)
    devices = {n.device for n in order}
    show_device = len(devices) > 1 or devices != {CPU}
    ident = {}
    lines = ["digraph arrayx {", '  node [shape=box, fontname="Helvetica"];']
    body = []
    for n in order:
        constant = _constant_text(n)
        if constant is not None and n not in outputs:
            continue   # drawn beside each node that reads it
        ident[n] = f"n{len(ident)}"
        call = _call(n, lowered)
        if call is not None:
            text = call_label(call)   # its arrays are the edges in
        else:
            text = _leaf_text(n) if not n.inputs or n.buffer is not None else node_label(n)
        if constant is not None:
            text = f"constant {constant}"
        text += "\n" + node_type(n)
        if show_device:
            text += f"\n{n.device.name}"
        style = ', style=filled, fillcolor="#dddddd"' if n.buffer is not None else ""
        if n in outputs:
            style += ", penwidth=2"
        body.append(f"  {ident[n]} [label={_quote(text)}{style}];")
    clusters = [[m for m in members if m in ident] for members in fusion_clusters(outputs)]
    for k, members in enumerate(c for c in clusters if c):
        device = members[0].device.name
        lines.append(f"  subgraph cluster_{k} {{")
        lines.append(f"    label={_quote(f'fused group {k} ({device})')}; style=dashed;")
        lines.extend(f"    {ident[m]};" for m in members)
        lines.append("  }")
    lines.extend(body)
    constants = 0
    for n in order:
        if n not in ident:
            continue
        for i in _shown_inputs(n, lowered):
            if i in ident:
                lines.append(f"  {ident[i]} -> {ident[n]};")
            else:
                c = f"c{constants}"
                constants += 1
                lines.append(f"  {c} [label={_quote(_constant_text(i))}, shape=plaintext];")
                lines.append(f"  {c} -> {ident[n]};")
    lines.append("}")
    return "\n".join(lines)


def svg(outputs, lowered=False):
    """The DOT view rendered to SVG by Graphviz (the `viz` extra)."""
    try:
        import graphviz
    except ImportError:
        raise ImportError('graph(format="svg") needs the graphviz package: pip install "arrayx[viz]", '
                          "and Graphviz's dot program on PATH") from None
    if shutil.which("dot") is None:
        raise RuntimeError('graph(format="svg") needs Graphviz\'s dot program on PATH (the graphviz package '
                           'from pip install "arrayx[viz]" calls it): install Graphviz')
    return graphviz.Source(dot(outputs, lowered)).pipe(format="svg").decode()
