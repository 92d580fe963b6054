"""The graph IR: one Node per recorded operation."""

import threading
from contextlib import contextmanager


class _ThreadScope(threading.local):
    # Set per thread as instance attributes: a threading.local reads those
    # faster than class defaults.
    def __init__(self):
        self.retaining = 0   # depth of nested retain_history() scopes in this thread
        self.tracing = 0     # depth of nested traces (arrayx.jit) in this thread


class _Scope:
    """The recording state. `open` counts the retain_history() and trace
    scopes open in all threads; `thread` holds the calling thread's depths.
    Hot paths (an element write, a force) test `open` first: a plain
    attribute, where a thread-local's attribute costs about 45 ns a read."""
    __slots__ = ("open", "thread", "_lock")

    def __init__(self):
        self.open = 0
        self.thread = _ThreadScope()
        self._lock = threading.Lock()   # `open += 1` is three bytecodes another thread may cut

    @contextmanager
    def entered(self, depth):
        """The scope that counts one more level of `depth` ("retaining" or
        "tracing") in the calling thread."""
        with self._lock:
            self.open += 1   # raised before the thread's depth and lowered after it: open is never short
        here = self.thread
        setattr(here, depth, getattr(here, depth) + 1)
        try:
            yield
        finally:
            setattr(here, depth, getattr(here, depth) - 1)
            with self._lock:
                self.open -= 1


scope = _Scope()


def retaining():
    """True inside a `retain_history()` scope of the calling thread."""
    return scope.open > 0 and scope.thread.retaining > 0


def retain_history():
    """Within this scope realized nodes keep their primitive and inputs.

    Reverse-mode autodiff walks the recorded graph after parts of it were
    realized (force points inside the differentiated function, automatic
    realization of deep graphs). Outside the scope realized nodes drop their
    history, so a training loop does not keep every old buffer alive. The
    scope belongs to the thread that entered it: a `grad` in one thread does
    not make another thread's loop keep its history.
    """
    return scope.entered("retaining")


def tracing():
    """True while the calling thread traces a function for arrayx.jit: its
    arguments are placeholders, so nothing that reads them can be forced."""
    return scope.open > 0 and scope.thread.tracing > 0


def trace():
    """The scope of one trace (see `tracing`)."""
    return scope.entered("tracing")


def recording():
    """True inside a `retain_history()` scope or a trace of the calling
    thread: autodiff or jit will see the graph again, so values read or
    written now must stay nodes of it."""
    return scope.open > 0 and (scope.thread.retaining > 0 or scope.thread.tracing > 0)


class Constant:
    """A scalar attribute (a fill value), equal to another only when its dtype
    and bits are: as numbers 0.0 == -0.0 and nan != nan, but the plan cache must
    not run full(0.0)'s plan for full(-0.0), and full(nan) is one computation."""

    __slots__ = ("value", "_key")

    def __init__(self, value):
        self.value = value  # a NumPy scalar
        self._key = (value.dtype.str, value.tobytes())

    def __eq__(self, other):
        return isinstance(other, Constant) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return str(self.value)


class Node:
    """A primitive applied to input nodes, with static attributes.

    `shape`, `dtype` and `device` are inferred when the node is built. A
    realized node has its executor `buffer` set, `op` set to the `buffer`
    primitive and no inputs, so the intermediates it was computed from can be
    freed (inside `retain_history()` it keeps them, for autodiff). `depth` is
    the longest chain of unrealized nodes below this one; the namespace
    realizes a node whose depth passes a threshold. `computed` records whether
    a force point already computed this node without keeping it (the
    scheduler keeps it the second time, see `scheduler.collect`). `layout`
    caches the executor's description of a realized buffer's layout. `mark`
    and `index` belong to the scheduler's collect walk (`index` is set only
    in a walk that marked the node).

    `origin` is the user's call that made this node when that call was a
    composite of several primitives (see `namespace.build.composite`):
    `(name, args, kwargs, part)`, the arguments as written with each array
    a weak reference to its node (no reference a scheduler's count sees),
    `part` None or the index or field of a tuple result. Only the graph
    views read it; it goes when the node is realized.

    `site` is set only on a node whose primitive may fail on values
    (Primitive.may_fail): the user's call that recorded it (graph.sites),
    which the error of its force point names. Other nodes never set it, so
    building them costs nothing more.
    """

    __slots__ = ("op", "inputs", "attrs", "shape", "dtype", "device", "buffer", "depth", "computed",
                 "layout", "mark", "index", "origin", "site", "__weakref__")

    def __init__(self, op, inputs, attrs, shape, dtype, device, buffer=None):
        self.op = op
        self.inputs = inputs
        self.attrs = attrs
        self.shape = shape
        self.dtype = dtype
        self.device = device
        self.buffer = buffer
        self.computed = 0
        self.layout = None
        self.mark = 0
        self.origin = None
        depth = 0
        if buffer is None:
            for n in inputs:
                if n.depth >= depth:
                    depth = n.depth + 1
        self.depth = depth

    def hold_view(self, buffer):
        """Hold `buffer`, the executor's view of the input's buffer (no
        computation, see scheduler.collect), and keep the primitive and input
        (autodiff still sees the slice)."""
        self.buffer = buffer
        self.depth = 0
        self.origin = None   # the views show a realized node as a buffer, not as a call

    def realize_as(self, buffer, buffer_op):
        """Hold `buffer`; drop the history unless it is being retained."""
        self.buffer = buffer
        self.layout = None
        self.depth = 0
        self.origin = None   # as in hold_view, even when retaining the history
        if not retaining():
            self.op = buffer_op
            self.inputs = ()
            self.attrs = ()

    def fail_with(self, error, failed_op):
        """Hold `error` (a copy of what computing this node raised, without
        a traceback) instead of a value: a leaf of `failed_op` whose history
        is freed, so a later force point that needs it raises the error
        again without running anything (see scheduler.schedule)."""
        self.op = failed_op
        self.inputs = ()
        self.attrs = (error,)
        self.depth = 0
        self.origin = None

    def __repr__(self):
        return f"Node({self.op.name}, shape={self.shape}, dtype={self.dtype})"


def _unrealized_inputs(node):
    return node.inputs if node.buffer is None else ()


def toposort(outputs, inputs_of=_unrealized_inputs):
    """Unrealized nodes reachable from `outputs`, inputs before users.

    Iterative depth-first search: a graph a million nodes deep must not reach
    Python's recursion limit. Realized nodes are returned as well (they are
    the plan's inputs) but not descended into. `inputs_of(node)` gives the
    nodes a walk descends into (the graph views walk calls shown as one
    node). A node stays on the stack while its inputs are visited and is
    emitted when it comes back to the top.
    """
    order = []
    done = {}  # node -> False while expanding, True once emitted (nodes hash by identity)
    stack = list(reversed(outputs))
    while stack:
        node = stack[-1]
        state = done.get(node)
        if state is None:
            done[node] = False
            stack.extend(i for i in inputs_of(node) if i not in done)
            continue
        stack.pop()
        if state is False:
            done[node] = True
            order.append(node)
    return order


def output_types(shape, dtype):
    """((shape, dtype), ...) of each output of a node or step with `shape`
    and `dtype`: a multi-output one holds a tuple of each."""
    return tuple(zip(shape, dtype)) if dtype.__class__ is tuple else ((shape, dtype),)


def users_of(order):
    """node -> the unrealized nodes of `order` that read it (once per read)."""
    users = {}
    for node in order:
        if node.buffer is None:
            for i in node.inputs:
                users.setdefault(i, []).append(node)
    return users
