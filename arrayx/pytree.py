"""Pytrees: nested tuples, lists, dicts and None holding arrays, as JAX has them.

`grad`, `value_and_grad`, `vjp` and `jit` take and return such trees:
`flatten(tree)` gives the leaves in a fixed order and a `TreeDef`, and
`treedef.unflatten(leaves)` builds a tree of the same structure around new
leaves (gradients, traced placeholders, a computation's results). Tuples,
lists and dicts (by exact type) and namedtuples (keeping their type) are
containers, None is an empty subtree, and anything else is a leaf: callers
check their leaves and name a bad one by its path (`treedef.paths`). Dicts
keep their insertion order.
"""

__all__ = ["TreeDef", "flatten"]

# A leaf's place in a TreeDef's spec.
_LEAF = "*"


class TreeDef:
    """The structure of a pytree without its leaves: hashable, so it can key a
    cache (jit's traces), and equal for trees of the same structure."""

    __slots__ = ("spec", "paths")

    def __init__(self, spec, paths):
        self.spec = spec     # nested (container type, keys, children); _LEAF or None at the bottom
        self.paths = paths   # each leaf's path from the root, e.g. "['w'][0]", in leaf order

    def __eq__(self, other):
        return isinstance(other, TreeDef) and self.spec == other.spec

    def __hash__(self):
        return hash(self.spec)

    def __repr__(self):
        return f"TreeDef({self.spec!r})"

    @property
    def num_leaves(self):
        return len(self.paths)

    @property
    def is_leaf(self):
        """Whether the tree is a bare leaf."""
        return self.spec == _LEAF

    def unflatten(self, leaves):
        """A tree of this structure holding `leaves` (in flatten's order)."""
        leaves = list(leaves)
        if len(leaves) != len(self.paths):
            raise ValueError(f"unflatten: the structure has {len(self.paths)} leaves, got {len(leaves)}")
        return _build(self.spec, iter(leaves))


def _build(spec, leaves):
    if spec is None:
        return None
    if spec == _LEAF:
        return next(leaves)
    kind, keys, children = spec
    values = [_build(c, leaves) for c in children]
    if kind is dict:
        return dict(zip(keys, values))
    if kind is list or kind is tuple:
        return kind(values)
    return kind(*values)   # a namedtuple


def flatten(tree):
    """(leaves, treedef) of `tree`: its leaves depth first, in container order."""
    leaves = []
    paths = []
    spec = _walk(tree, "", leaves, paths)
    return leaves, TreeDef(spec, tuple(paths))


def _walk(node, path, leaves, paths):
    # A module function, not a closure over leaves: a closure calling itself
    # is a reference cycle, which would hold the leaves (arrays, their
    # buffers) until the garbage collector ran.
    if node is None:
        return None
    kind = type(node)
    if kind is tuple or kind is list:
        return kind, None, tuple(_walk(c, f"{path}[{i}]", leaves, paths) for i, c in enumerate(node))
    if kind is dict:
        keys = tuple(node)
        return kind, keys, tuple(_walk(node[k], f"{path}[{k!r}]", leaves, paths) for k in keys)
    if isinstance(node, tuple) and hasattr(kind, "_fields"):
        return kind, None, tuple(_walk(c, f"{path}.{f}", leaves, paths) for f, c in zip(kind._fields, node))
    leaves.append(node)
    paths.append(path)
    return _LEAF
