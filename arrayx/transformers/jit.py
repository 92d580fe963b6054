"""`arrayx.jit`: a function traced once per signature into a computation.

The first call with a new signature calls the function on placeholders and
compiles what it returns; later calls with that signature run the compiled
computation. The signature holds, for positional and keyword arguments
alike, the pytree structure of each argument (tuples, lists, dicts), the
shape, dtype and device of each array in it, the kind of each Python scalar
(bool, int, float, complex; its value is traced, see
`namespace.traced_scalar`), the value of each static argument, and which
arguments are one object passed twice. The computation runs on the device
of the arrayx arguments (NumPy arguments are copied there; with none, on the
CPU).

A call behaves as the plain function does: an argument array the function
writes into (`v[0] = 1.0`, `v += 1`, `v[mask] = 0.0`) holds the new value
afterwards, for the caller as well. The new value is an extra result of the
computation, which the caller's array is rebound to (a NumPy argument is
written into). Where nothing else holds the caller's buffer and the function
only updates it (`v[key] = value`), the call gives that buffer to the
computation, which writes the updates into it instead of into a copy (see
`Computation.writes_into_argument`). An array or Python scalar the function
reads from a global or closure variable is a constant of the trace, which a
call checks is still there (captured.py), tracing again where it is not.
Called inside `grad` or another trace, a jitted function runs as the plain
one, so that its work joins the graph being recorded.

Where a trace's computation is one native CPU kernel call over its argument
arrays (an elementwise chain, a row reduction), its later calls on arrays of
the same dtypes and memory layouts run in the launcher's `shortcut`
(_cpu/native/launcher.c), which checks the arguments and runs the kernel
with no Python around it: a call on 1e3 points then costs about half of
what the Python path does. Any call it does not serve (another layout, an
argument not computed yet, a profile or trace open) takes the Python path.
"""

import functools
import inspect
import os
import sys
import weakref

import numpy as np

from .. import dtypes as dt, executors, pytree
from ..counters import counters
from ..device import CPU
from ..graph.node import Node, recording, scope, trace
from ..graph.primitives import EVALUATED, PRIMITIVES
from ..namespace import build
from ..namespace.array_object import Array
from ..namespace.build import check_int, eager_mode
from ..namespace.traced_scalar import DEFAULT_NUMPY_DTYPES, TracedScalar
from ..references import HELD_ONCE
from ..namespace.creation import asarray
from ..scheduler import observe
from ..scheduler.schedule import UnboundError
from .captured import captured_values, restore
from .graph import placeholder
from .transformer import Transformer

_PLACEHOLDER = PRIMITIVES["placeholder"]
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_refcount = sys.getrefcount
# What a shortcut table checks before it runs a call: no trace or
# retain_history() scope open, nothing observing (a profile, ARRAYX_LOG),
# lazy mode; each as the Python path would decide it (a module's variable
# read in its dict).
_GUARDS = ((scope, "open", 0, True), (vars(observe), "observers", (), True), (vars(build), "is_eager", False, True))
# Signatures a jitted function's shortcut table keeps.
SHORTCUTS = 8
# A trace asks for its shortcut at its calls 1, 2, 4, ... and then at
# every this many: its kernel compiles in the background meanwhile.
SHORTCUT_TRIES_APART = 1024


def jit(fn, *, static_argnums=(), static_argnames=()):
    """Returns `fn` compiled once per signature of its arguments (see the module).

    Parameters
    ----------
    fn : callable
        Takes arrays, pytrees (tuples, lists, dicts) of arrays and Python
        scalars, positionally or by keyword, and returns an array, a Python
        scalar argument or a pytree of them.
    static_argnums : int or tuple of ints
        Positions of arguments that are not arrays or scalars (or scalars
        the function needs as numbers: a loop count, a shape): their
        values (hashable) are part of the signature, and a new value traces
        `fn` again. A position whose parameter can also be passed by
        keyword makes that keyword static too.
    static_argnames : str or tuple of str
        The same, by parameter name (and that parameter's position).

    Returns
    -------
    out : callable
        Takes `fn`'s arguments (arrayx or NumPy arrays where `fn` takes
        arrays) and returns the results in the structure `fn` returns.

    Raises
    ------
    ValueError
        (here) A static_argnames entry that is no parameter of `fn`.
        (at a call) Array arguments on several devices; a read-only NumPy
        argument that `fn` writes into.
    TypeError
        (here) static_argnums that are not ints.
        (at a call) A non-static argument holding something other than an
        array or a scalar, named by its path; an unhashable static argument;
        a force point inside `fn` (`float(x)`, `bool(x)`, printing a value,
        a data-dependent shape), which needs a value the trace does not
        have, named with the line; a scalar argument used as a number
        (`range(n)`); `fn` writing into an array it captures instead of
        receiving it, or replacing an item of a list or dict argument;
        `fn` returning no array or something other than arrays.
    OverflowError
        (at a call) A Python int argument out of the range of the dtype it
        meets, as eagerly.
    """
    static, static_names, arg_names = _static_arguments(fn, static_argnums, static_argnames)
    name = getattr(fn, "__name__", repr(fn))
    transformers = {}   # device -> the Transformer its computations run on
    compiled = {}
    shortcuts = _Shortcuts()

    @functools.wraps(fn)
    def run(*args, **kwargs):
        if shortcuts.run is not None and not kwargs:
            result = shortcuts.run(shortcuts.table, args)
            if result is not None:
                return result
        if scope.open and recording():   # inside grad or another trace: its calls join the graph recorded
            return fn(*args, **kwargs)
        signature = None
        if not kwargs and not static:   # the common call, arrays only: no tree walk
            signature = []
            for a in args:
                if type(a) is not Array:
                    signature = None
                    break
                node = a._node
                signature.append((node.shape, node.dtype, node.device))
            else:
                signature = tuple(signature)
                leaves = args
            node = None   # a call giving an argument's buffer up counts who holds its node (_Compiled._given_up)
        if signature is None:
            leaves, signature = _signature(args, kwargs, static, static_names, name, arg_names)
        n = len(leaves)   # an object passed twice? (two leaves, the common case, without a set)
        if n > 1 and (leaves[0] is leaves[1] if n == 2 else len(set(map(id, leaves))) < n):
            signature += (_aliases(leaves),)
        if eager_mode():   # xp.set_eager(True): fn runs as plain Python, as under jax.disable_jit()
            return _call_eagerly(fn, args, kwargs, static, static_names, _device(name, leaves))
        try:
            entry = compiled.get(signature)
        except TypeError:
            raise TypeError(f"jit({name}): static arguments must be hashable") from None
        if entry is None or entry.captured and any(c.changed() for c in entry.captured):
            device = _device(name, leaves)
            transformer = transformers.get(device)
            if transformer is None:
                transformer = transformers[device] = Transformer(device)
            entry = compiled[signature] = _trace(fn, name, args, kwargs, static, static_names, arg_names,
                                                 transformer, shortcuts)
        return entry.call(leaves)
    return run


def _signature(args, kwargs, static, static_names, name, arg_names):
    """(leaves, signature) of a call: the argument leaves, and an entry per
    positional argument (its value where static, else its tree and the
    entries of its leaves) and one for the keyword arguments, if any."""
    leaves = []
    signature = []
    for i, a in enumerate(args):
        if i in static:
            signature.append(("static", a))
        elif type(a) is Array:   # a bare array: no tree walk
            node = a._node
            signature.append((node.shape, node.dtype, node.device))
            leaves.append(a)
        else:
            signature.append(_entry(a, leaves, name, arg_names, i))
    if kwargs:
        signature.append(tuple((key, ("static", value) if key in static_names
                                else _entry(value, leaves, name, arg_names, key))
                               for key, value in sorted(kwargs.items())))
    return leaves, tuple(signature)


def _device(name, leaves):
    """The device a call with these argument leaves runs on: that of the
    arrayx arrays, the CPU if there are none (NumPy arrays go there)."""
    devices = list(dict.fromkeys(a.device for a in leaves if isinstance(a, Array)))
    if len(devices) > 1:
        raise ValueError(f"jit({name}): the array arguments are on devices {devices}; move them to "
                         f"one device (NumPy arguments go to that device)")
    return devices[0] if devices else CPU


def _call_eagerly(fn, args, kwargs, static, static_names, device):
    """fn(*args, **kwargs) as plain Python (eager mode), the NumPy arrays in
    its non-static arguments first made arrays on `device`, as a compiled
    call binds them."""
    def bound(value):
        leaves, treedef = pytree.flatten(value)
        return treedef.unflatten([asarray(leaf, device=device) if isinstance(leaf, np.ndarray) else leaf
                                  for leaf in leaves])
    return fn(*[a if i in static else bound(a) for i, a in enumerate(args)],
              **{k: v if k in static_names else bound(v) for k, v in kwargs.items()})


def _static_arguments(fn, static_argnums, static_argnames):
    """(static positions, static names, positional parameter names) of `fn`:
    each static position whose parameter may be passed by keyword makes its
    name static too, and each static name its position, as in JAX."""
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    if any(type(i) is not int for i in nums):
        raise TypeError(f"jit: static_argnums must be ints, got {static_argnums!r}")
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):   # a builtin or a callable without a signature: positions and names as given
        return frozenset(nums), frozenset(names), ()
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    by_keyword = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    if not any(p.kind == p.VAR_KEYWORD for p in parameters):
        for n in names:
            if n not in by_keyword:
                raise ValueError(f"jit({getattr(fn, '__name__', fn)}): static_argnames names {n!r}, which is not "
                                 f"a parameter {getattr(fn, '__name__', fn)} takes by keyword")
    nums = {i % len(positional) if -len(positional) <= i < 0 else i for i in nums}
    names = set(names)
    for i, p in enumerate(positional):
        if i in nums and p.kind == p.POSITIONAL_OR_KEYWORD:
            names.add(p.name)
        if p.name in names:
            nums.add(i)
    return frozenset(nums), frozenset(names), tuple(p.name for p in positional)


def _arg_name(arg_names, where):
    """The name of the argument at position or keyword `where`."""
    if type(where) is str:
        return where
    return arg_names[where] if where < len(arg_names) else f"args[{where}]"


def _entry(value, leaves, name, arg_names, where):
    """The signature entry of the non-static argument `value` at position or
    keyword `where`; appends its leaves to `leaves`."""
    found, treedef = pytree.flatten(value)
    entries = []
    for leaf, path in zip(found, treedef.paths):
        if isinstance(leaf, Array):
            node = leaf._node
            entries.append((node.shape, node.dtype, node.device))
        elif isinstance(leaf, np.ndarray):
            entries.append((leaf.shape, leaf.dtype.str, None))
        elif type(leaf) in dt.PYTHON_SCALARS:
            entries.append(type(leaf))   # traced: one trace for every value of the kind
        elif isinstance(leaf, np.generic) and leaf.dtype.kind in "biufc":
            entries.append((type(leaf.item()), leaf.dtype.str))
        else:
            raise TypeError(f"jit({name}): argument {_arg_name(arg_names, where)}{path} is a "
                            f"{type(leaf).__name__}; pass arrays, Python scalars (or tuples, lists and dicts of "
                            f"them), or make it static (static_argnums, static_argnames)")
    leaves += found
    return treedef, tuple(entries)


def _aliases(leaves):
    """Which leaves are one object (an array passed twice: a write through
    one name is seen through the other), as the index of each one's first
    occurrence; scalars, which nothing writes into, count as distinct."""
    first = {}
    return tuple(i if type(leaf) in dt.PYTHON_SCALARS or isinstance(leaf, np.generic)
                 else first.setdefault(id(leaf), i) for i, leaf in enumerate(leaves))


class _Shortcuts:
    """A jitted function's shortcut table: a call on arrays like those of
    an earlier call whose computation ran as one native kernel call runs in
    launcher.c's `shortcut`, with no Python around the kernel (a call on
    1e3 points otherwise costs several times its kernel). `run` is that
    function once the table has an entry (see _Compiled.shortcut); a call it
    does not serve takes the Python path."""

    __slots__ = ("run", "table")

    def __init__(self):
        self.run = None
        self.table = (Array, "_node", _GUARDS, (counters, "steps_run"), [])

    def add(self, run, entry):
        entries = self.table[4]
        entries.insert(0, entry)
        del entries[SHORTCUTS:]
        self.run = run


class _Compiled:
    """One trace of a jitted function: its computation, and how a call binds
    the argument leaves to the computation's placeholders and carries the
    writes into arguments back to the caller."""

    __slots__ = ("computation", "name", "binding", "out_def", "scalars", "shapes", "mutated", "donors", "device",
                 "origins", "plain", "single", "captured", "shortcuts", "calls", "next_try")

    def __init__(self, computation, name, binding, out_def, scalars, n_results, mutated, origins, captured,
                 shortcuts):
        self.computation = computation
        self.name = name
        self.binding = binding       # (leaf index, None for an array or the dtype of a scalar) per placeholder
        self.out_def = out_def
        self.scalars = scalars       # (result index, whether a NumPy scalar) of each traced scalar returned
        self.shapes = computation.shapes[:n_results]   # (shape, dtype, device) of each result returned
        self.mutated = mutated       # (leaf index, result index) of each argument array written into
        self.device = computation.transformer.device
        self.origins = origins       # each argument leaf's name
        self.captured = captured     # the Captured values the trace holds as constants
        self.plain = not mutated and not scalars and [i for i, _ in binding] == list(range(len(origins))) and all(
            dtype is None for _, dtype in binding)
        self.single = out_def.is_leaf   # one array, returned bare
        # The table this trace's shortcut goes into, until it has one (a
        # trace reading captured values checks them at each call).
        self.shortcuts = shortcuts if self.plain and not captured else None
        self.calls = 0
        self.next_try = 1
        # placeholder -> the node its caller's array holds while giving its buffer to a call
        self.donors = {}
        for leaf, k in mutated:
            argument = next(j for j, (i, dtype) in enumerate(binding) if i == leaf and dtype is None)
            if computation.writes_into_argument(argument, k):
                node = computation.placeholders[argument]
                self.donors[argument] = Node(_PLACEHOLDER, (), (node.shape, node.dtype,
                                                                f"{origins[leaf]} while a call of jit({name}) "
                                                                f"writes into it"),
                                             node.shape, node.dtype, self.device)

    def call(self, leaves):
        """The results of a call whose argument leaves are `leaves`."""
        if self.plain:
            # An array per placeholder, arrays out. An arrayx array is bound
            # as it is: the signature this trace was made for has its shape,
            # dtype and device.
            computation = self.computation
            borrowed = []
            values = []
            for k, leaf in enumerate(leaves):
                if type(leaf) is Array:
                    buffer = leaf._node.buffer
                    values.append(buffer if buffer is not None else leaf._realized().buffer)
                else:
                    values.append(computation.bind(k, leaf, borrowed))
            if self.shortcuts is not None:
                self.shortcut(leaves, values)
            outputs = computation.run(values, borrowed)
            if self.single:
                shape, dtype, device = self.shapes[0]
                return Array._new(Node(EVALUATED, (), (), shape, dtype, device, outputs[0]))
        else:
            outputs = self._run_writing(leaves, [])
        results = [Array._new(Node(EVALUATED, (), (), shape, dtype, device, buffer))
                   for buffer, (shape, dtype, device) in zip(outputs, self.shapes)]
        for k, numpy in self.scalars:
            value = np.asarray(results[k])[()]
            results[k] = value if numpy else value.item()
        return self.out_def.unflatten(results)

    def shortcut(self, leaves, values):
        """Give the shortcut table an entry for calls on arrays laid out as
        `leaves` (their buffers `values`) where the computation runs them as
        one kernel call (Computation.shortcut); tried at this trace's calls
        1, 2, 4, ... and then every SHORTCUT_TRIES_APART calls, until made."""
        self.calls += 1
        if self.calls < self.next_try:
            return
        self.next_try = min(2 * self.calls, self.calls + SHORTCUT_TRIES_APART)
        # `leaves` is the call's tuple of positional arguments itself only
        # where each is a bare array (no tree, keyword or static argument):
        # the only calls the table can tell apart.
        if type(leaves) is not tuple or not all(type(leaf) is Array and type(value) is np.ndarray
                                                for leaf, value in zip(leaves, values)):
            return
        found = self.computation.shortcut(values)
        if found is None:
            return
        run, layout_key, launch, outputs, guards, sources, order = found
        nodes = [leaf._node for leaf in leaves]
        # Result k: Array._new(Node(EVALUATED, (), (), shape, dtype, device, output order[k])), as `call` makes it.
        results = (Node, EVALUATED, tuple((*typed, j) for typed, j in zip(self.shapes, order)),
                   None if self.single else self.out_def.unflatten)
        entry = (tuple(n.dtype for n in nodes), tuple(n.device for n in nodes), layout_key(*values), sources,
                 outputs, launch, results, self.computation.plan.steps, guards)
        self.shortcuts.add(run, entry)
        self.shortcuts = None

    def _run_writing(self, leaves, borrowed):
        """The computation's results for `leaves` where it takes scalars or
        writes into arguments (those then hold their new values), or an
        array passed twice; `borrowed` gets the NumPy arguments bound
        without a copy."""
        computation = self.computation
        for i, _ in self.mutated:
            leaf = leaves[i]
            if isinstance(leaf, np.ndarray) and not leaf.flags.writeable:
                raise ValueError(f"jit({self.name}): the function writes into {self.origins[i]}, a read-only "
                                 f"NumPy array; pass a writable array or an arrayx array")
        values = []
        donated = []    # (array, weak reference to the buffer it gave this call)
        for k, (i, dtype) in enumerate(self.binding):
            leaf = leaves[i]
            if dtype is not None:
                values.append(self._scalar(leaf, dtype, i))
                continue
            stub = self.donors.get(k)
            if stub is not None and type(leaf) is Array:
                buffer = self._given_up(leaf, stub)
                if buffer is not None:
                    donated.append((leaf, weakref.ref(buffer)))
                    values.append(buffer)
                    del buffer   # the computation's slots must hold it alone
                    continue
            values.append(computation.bind(k, leaf, borrowed))
        try:
            outputs = computation.run(values, borrowed)
        except BaseException:
            for array, ref in donated:   # the buffer as the call left it (see writes_into_argument)
                buffer = ref()
                if buffer is not None:
                    array._node = Node(EVALUATED, (), (), array.shape, array.dtype, self.device, buffer)
            raise
        shapes = computation.shapes
        for i, k in self.mutated:
            leaf = leaves[i]
            if isinstance(leaf, Array):
                shape, dtype, device = shapes[k]
                leaf._node = Node(EVALUATED, (), (), shape, dtype, device, outputs[k])
            else:   # a NumPy argument: written into, as the plain function would
                np.copyto(leaf, executors.executor_for(self.device).to_host(outputs[k]))
        return outputs

    def _scalar(self, value, dtype, i):
        """The buffer of the placeholder of scalar argument `value` (leaf `i`)
        as `dtype`: `value` converted as it is beside an array of that dtype
        eagerly."""
        if isinstance(value, np.generic):
            if dtype.dtype == value.dtype:
                return executors.executor_for(self.device).from_scalar(value, dtype)
            value = value.item()
        if type(value) is int:
            check_int(value, dtype, f"jit({self.name}): {self.origins[i]}")
        return executors.executor_for(self.device).from_scalar(value, dtype)

    def _given_up(self, array, stub):
        """The buffer of `array` when nothing but `array` can see it (no other
        array, node or view holds it, and its memory is its own), with
        `array` holding `stub` until the call rebinds it; else None."""
        node = array._node
        buffer = node.buffer
        if (buffer is None or node.device is not self.device or _refcount(node) != HELD_ONCE
                or _refcount(buffer) != HELD_ONCE or not executors.executor_for(self.device).owns_memory(buffer)):
            return None
        try:
            weakref.ref(buffer)
        except TypeError:   # a buffer a failed call could not give back
            return None
        array._node = stub
        return buffer


def _trace(fn, name, args, kwargs, static, static_names, arg_names, transformer, shortcuts):
    """The _Compiled trace of `fn` on stand-ins of `args` and `kwargs`:
    placeholders for arrays, TracedScalars for Python scalars."""
    origins = []      # each argument leaf's name, in the order of the call's leaves
    stand_in_of = {}  # id of an array leaf -> its placeholder Array (one for an object passed twice)
    arrays = []       # (leaf index, placeholder Array, its node) of each distinct array leaf
    scalars = []      # (leaf index, dtype, placeholder Array): a scalar's placeholder of each dtype it meets
    given = []        # (traced argument, its TreeDef, its stand-ins, its name) of each non-static argument
    traced_scalars = []   # the names of the scalar arguments

    def stand_ins(value, where):
        found, treedef = pytree.flatten(value)
        out = []
        for leaf, path in zip(found, treedef.paths):
            origins.append(f"{where}{path}")
            if isinstance(leaf, (Array, np.ndarray)):
                stand_in = stand_in_of.get(id(leaf))
                if stand_in is None:
                    stand_in = stand_in_of[id(leaf)] = _placeholder_of(leaf, origins[-1], name)
                    arrays.append((len(origins) - 1, stand_in, stand_in._node))
            else:
                stand_in = _traced_scalar(leaf, origins[-1], len(origins) - 1, name, scalars)
                traced_scalars.append(origins[-1].removeprefix("argument "))
            out.append(stand_in)
        tree = treedef.unflatten(out)
        given.append((tree, treedef, out, where))
        return tree

    call_args = [a if i in static else stand_ins(a, f"argument {_arg_name(arg_names, i)}")
                 for i, a in enumerate(args)]
    call_kwargs = {key: value if key in static_names else stand_ins(value, f"argument {key}")
                   for key, value in sorted(kwargs.items())}
    captured = captured_values(fn)
    try:
        with trace():
            out = fn(*call_args, **call_kwargs)
    except UnboundError as e:
        raise TypeError(_force_point_message(name, e)) from None
    except (TypeError, ValueError) as e:
        if "TracedScalar" not in str(e):
            raise
        raise type(e)(f"{e} (jit({name}) traces Python scalar arguments as values, not numbers: list "
                      f"{', '.join(traced_scalars)} in static_argnums or static_argnames to use them as numbers)"
                      ) from e
    finally:
        written = restore(captured)
    if written:
        raise TypeError(f"jit({name}): the function writes into {written[0]}, an array it captures (a global "
                        f"or a variable of an enclosing function) instead of receiving it as an argument; jit "
                        f"carries writes back to arguments only: pass {written[0]} as an argument")
    for tree, treedef, leaves, where in given:
        again, treedef_again = pytree.flatten(tree)
        if treedef_again != treedef or any(a is not b for a, b in zip(again, leaves)):
            raise TypeError(f"jit({name}): the function changes {where} (an item of a list or dict replaced, "
                            f"added or removed); jit carries back writes into arrays only (v[key] = x, v += x): "
                            f"return the new container instead")
    results, out_def = pytree.flatten(out)
    returned_scalars = []
    for k, (r, path) in enumerate(zip(results, out_def.paths)):
        if isinstance(r, TracedScalar):   # returned as the Python (or NumPy) scalar it stands for
            returned_scalars.append((k, r.numpy))
            results[k] = Array._new(r.node_as(dt.default_scalar_dtype(r.kind())))   # kind(): a zero of its kind
        elif not isinstance(r, Array):
            raise TypeError(f"jit({name}): the function must return an array or a pytree (tuples, lists, "
                            f"dicts) of arrays; result{path} is a {type(r).__name__}")
    n_results = len(results)
    # An argument array written into: its new value is one more result.
    mutated = []
    for i, stand_in, node in arrays:
        if stand_in._node is not node:
            mutated.append((i, len(results)))
            results.append(stand_in)
    if not results:
        raise TypeError(f"jit({name}): the function returned no array and wrote into no argument")
    inputs = [Array._new(node) for _, _, node in arrays] + [p for _, _, p in scalars]
    binding = [(i, None) for i, _, _ in arrays] + [(i, dtype) for i, dtype, _ in scalars]
    computation = transformer.computation(results, *inputs)
    return _Compiled(computation, name, binding, out_def, returned_scalars, n_results, mutated, origins,
                     tuple(captured), shortcuts)


def _placeholder_of(leaf, origin, name):
    """The placeholder standing for the array argument `leaf` (arrayx or NumPy)."""
    if isinstance(leaf, Array):
        return placeholder(leaf.shape, leaf.dtype, name=origin)
    dtype = dt.FROM_NUMPY.get(leaf.dtype)
    if dtype is None:
        raise TypeError(f"jit({name}): {origin} is a NumPy array of dtype {leaf.dtype}, which arrayx does not have")
    return placeholder(leaf.shape, dtype, name=origin)


def _traced_scalar(leaf, origin, i, name, scalars):
    """The TracedScalar standing for the scalar argument `leaf` (leaf `i`,
    named `origin`), whose placeholders, one per dtype the trace meets it
    in, go to `scalars`."""
    def make_node(dtype):
        p = placeholder((), dtype, name=f"{origin} as {dtype}")
        scalars.append((i, dtype, p))
        return p._node
    if isinstance(leaf, np.generic):   # acts as its Python scalar beside arrays; asarray keeps its dtype
        return TracedScalar(type(leaf.item()), f"jit({name})", origin, make_node, dt.FROM_NUMPY[leaf.dtype],
                            exact=leaf.dtype in DEFAULT_NUMPY_DTYPES,
                            subject=f"{origin} (a NumPy {leaf.dtype} scalar)", numpy=True)
    return TracedScalar(type(leaf), f"jit({name})", origin, make_node)


def _force_point_message(name, error):
    """The message of a force point met while tracing `name` (an UnboundError)."""
    node = error.node
    needs = node.attrs[2] if node.attrs else f"an {node.op.name}"   # a placeholder's or variable's name
    line = ""
    tb = error.__traceback__
    while tb is not None:   # the innermost frame of the user's code
        code = tb.tb_frame.f_code
        if not os.path.abspath(code.co_filename).startswith(_PACKAGE):
            line = f" at {os.path.basename(code.co_filename)}:{tb.tb_lineno}, in {code.co_name},"
        tb = tb.tb_next
    return (f"jit({name}):{line} a force point inside the traced function (float(), bool(), int(), printing "
            f"a value, a data-dependent shape such as a boolean mask index or nonzero) needs the value of "
            f"{needs}, which the trace does not have; make that argument static (static_argnums, "
            f"static_argnames) or move the force point out of the function")
