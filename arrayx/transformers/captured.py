"""The values a jitted function reads from its closure or its globals (an
array or a Python scalar): a trace holds each as a constant, which a later
call checks is still there, tracing again where it is not, as the plain
function would read the new value."""

from .. import dtypes as dt
from ..namespace.array_object import Array


class Captured:
    """A value a jitted function reads from a closure cell or its globals
    (`holder` and `key`, None for a cell), an array or a Python scalar: the
    trace holds it as a constant, which a later call checks is still there
    (an array with its node: `v[0] = 1` rebinds it) and traces again if not,
    as the plain function would read the new value."""

    __slots__ = ("label", "holder", "key", "value", "node")

    def __init__(self, label, holder, key, value):
        self.label = label
        self.holder = holder
        self.key = key
        self.value = value
        self.node = value._node if isinstance(value, Array) else None

    def current(self):
        if self.key is None:
            try:
                return self.holder.cell_contents
            except ValueError:   # a cell emptied since
                return None
        return self.holder.get(self.key)

    def changed(self):
        now = self.current()
        if now is self.value:
            return self.node is not None and now._node is not self.node
        return self.node is not None or type(now) is not type(self.value) or now != self.value


def captured_values(fn):
    """A Captured for each array and Python scalar `fn` (and the functions
    it wraps, `__wrapped__`) reads from its closure or its globals."""
    found = []
    while fn is not None:
        code = getattr(fn, "__code__", None)
        if code is not None:
            for var, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
                try:
                    value = cell.cell_contents
                except ValueError:   # a cell not filled yet
                    continue
                if isinstance(value, Array) or type(value) in dt.PYTHON_SCALARS:
                    found.append(Captured(var, cell, None, value))
            namespace = getattr(fn, "__globals__", {})
            for var in code.co_names:
                value = namespace.get(var)
                if isinstance(value, Array) or type(value) in dt.PYTHON_SCALARS:
                    found.append(Captured(var, namespace, var, value))
        fn = getattr(fn, "__wrapped__", None)
    return found


def restore(captured):
    """The names of the `captured` arrays the trace rebound, each given its
    node back (the new one reads placeholders, which only the trace has)."""
    written = []
    for c in captured:
        if c.node is not None and c.value._node is not c.node:
            c.value._node = c.node
            written.append(c.label)
    return written
