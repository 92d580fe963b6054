"""The graph IR: one Node per recorded operation."""


class Node:
    """A primitive applied to input nodes, with static attributes.

    `shape`, `dtype` and `device` are inferred when the node is built. A
    realized node has its executor `buffer` set, `op` set to the `buffer`
    primitive and no inputs, so the intermediates it was computed from can be
    freed. `depth` is the longest chain of unrealized nodes below this one; the
    namespace realizes a node whose depth passes a threshold.
    """

    __slots__ = ("op", "inputs", "attrs", "shape", "dtype", "device", "buffer", "depth", "__weakref__")

    def __init__(self, op, inputs, attrs, shape, dtype, device, buffer=None):
        self.op = op
        self.inputs = inputs
        self.attrs = attrs
        self.shape = shape
        self.dtype = dtype
        self.device = device
        self.buffer = buffer
        depth = 0
        if buffer is None:
            for n in inputs:
                if n.depth >= depth:
                    depth = n.depth + 1
        self.depth = depth

    @property
    def realized(self):
        return self.buffer is not None

    def realize_as(self, buffer, buffer_op):
        """Become a leaf holding `buffer`; drop the inputs."""
        self.buffer = buffer
        self.op = buffer_op
        self.inputs = ()
        self.attrs = ()
        self.depth = 0

    def __repr__(self):
        return f"Node({self.op.name}, shape={self.shape}, dtype={self.dtype})"


def toposort(outputs):
    """Unrealized nodes reachable from `outputs`, inputs before users.

    Iterative depth-first search: a graph a million nodes deep must not reach
    Python's recursion limit. Realized nodes are returned as well (they are
    the plan's inputs) but not descended into.
    """
    order = []
    seen = set()
    stack = [(n, False) for n in reversed(outputs)]
    while stack:
        node, expanded = stack.pop()
        key = id(node)
        if expanded:
            order.append(node)
            continue
        if key in seen:
            continue
        seen.add(key)
        stack.append((node, True))
        for child in reversed(node.inputs):
            if id(child) not in seen:
                stack.append((child, False))
    return order
