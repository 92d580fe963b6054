"""VJP rules of composites the sweep recognizes in the recorded graph.

Some functions users write out of several primitives have a gradient far
simpler than their primitives' rules add up to. At each node the sweep asks
`composite_cotangents` first: a match gives cotangents of the composite's
inputs directly, and the nodes inside it get nothing from this path (from
their other users they still do, by their own rules: gradients add up).
"""

from .registry import out


def _logsumexp(g, node, wanted):
    """m + log(sum(exp(z - m), axes, keepdims=True)) with m = max(z, axes,
    keepdims=True), the stable logsumexp (either order of the add): z gets
    g * exp(z - m) / sum(exp(z - m)), the softmax. The value does not depend
    on m, so the max's own path adds exactly zero; by the primitives' rules
    it would cost eight nodes more (the tie count, two sums) and leave
    rounding error at the row maxima."""
    a, b = node.inputs
    m, log = (a, b) if b.op.name == "log" else (b, a)
    if m.op.name != "max" or log.op.name != "log" or not m.attrs[1]:
        return None
    total = log.inputs[0]
    if total.op.name != "sum" or total.attrs != m.attrs:
        return None
    exp = total.inputs[0]
    if exp.op.name != "exp":
        return None
    shifted = exp.inputs[0]
    z = m.inputs[0]
    if shifted.op.name != "subtract" or shifted.inputs != (z, m):
        return None
    if wanted.intersection((m, log, total, exp, shifted)):
        return None   # a node inside is differentiated by itself: its own cotangent is asked for
    # g * e / s, not e * (g / s): each operation of z's shape, so a fused group takes the sums in.
    return [(z, g * out(exp) / out(total))]


# The primitive a composite ends in -> its rules (asked in turn).
RULES = {"add": (_logsumexp,)}


def composite_cotangents(g, node, wanted):
    """[(input node, its cotangent), ...] of the composite `node` ends, whose
    cotangent is `g`; None where `node` ends no composite known here.
    A composite with a differentiated node (in `wanted`) inside is no match:
    that node's own cotangent is asked for."""
    for rule in RULES.get(node.op.name, ()):
        found = rule(g, node, wanted)
        if found is not None:
            return found
    return None
