"""VJP rules of composites the sweep recognizes in the recorded graph.

Some functions users write out of several primitives have a gradient far
simpler than their primitives' rules add up to. At each node the sweep asks
`composite_cotangents` first: a match gives cotangents of the composite's
inputs directly, and the nodes inside it get nothing from this path (from
their other users they still do, by their own rules: gradients add up).
"""

from .. import dtypes as dt
from ..namespace import elementwise as ew
from .registry import arg, out


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


def _norm(g, node, wanted):
    """sqrt(x @ x) of a real vector x, its Euclidean norm (how
    `linalg.vector_norm` computes a computed vector's): x gets g * x / norm,
    and 0 where the norm is 0, the subgradient at the origin. By the
    primitives' rules it would be NaN there (inf * 0), and cost five nodes more."""
    dot = node.inputs[0]
    if dot.op.name != "matmul" or dot.inputs[0] is not dot.inputs[1] or dot in wanted:
        return None
    x = dot.inputs[0]
    if len(x.shape) != 1 or x.dtype not in dt.CATEGORIES["real floating"]:
        return None
    norm = out(node)
    return [(x, g * arg(dot, 0) / ew.where(norm == 0.0, 1.0, norm))]


# The primitive a composite ends in -> its rules (asked in turn).
RULES = {"add": (_logsumexp,), "sqrt": (_norm,)}


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
