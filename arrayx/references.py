"""Who else can see a value: Python reference counts, read as NumPy reads them
to elide temporaries.

Every holder of a node or a buffer is a Python reference: an Array, another
node's inputs, a NumPy view (its base), a DLPack capsule, a user's variable.
A node that only the graph being run refers to can have its buffer
overwritten, and an expensive node that something outside refers to is worth
keeping. The interpreter's own temporaries differ between CPython versions,
so the count is calibrated once, through the same call, on an object held by
one container.
"""

import sys


def _count(holder, i):
    return sys.getrefcount(holder[i])


_BASE = _count([object()], 0)


def _held_once():
    held = [object()]
    value = held[0]
    return sys.getrefcount(value)


# sys.getrefcount(value) of an object that one container holds, read through
# a local variable `value`: for hot paths that read a count inline.
HELD_ONCE = _held_once()


def extra_references(holder, i):
    """References to holder[i] besides holder's own (a list or a tuple)."""
    return _count(holder, i) - _BASE
