"""Transformers and computations (ngraph's, seed 004) over arrayx's scheduler.

A computation is compiled once, when it is created: the graph below its
results is placed on the transformer's device, its small constant subgraphs
are computed, and the rest is rewritten, fused, given slots and compiled by
the executors, with placeholders and variables as the plan's inputs. A call
converts its arguments, binds them and the variables' current values to
those slots and runs the compiled segments: no graph is built or walked and
no plan key is hashed.
"""

from math import prod

import numpy as np

from .. import dtypes as dt, executors
from ..counters import counters
from ..device import CPU, Device
from ..executors.python_code import generated
from ..graph.node import Node, toposort
from ..graph.primitives import BOUND, EVALUATED, UPDATE
from ..namespace.array_object import Array
from ..scheduler import observe
from ..scheduler.lower import transfer
from ..scheduler.schedule import build_plan, failure, realize, site_of
from .graph import initial_value


class Transformer:
    """Holds the state (variable values) its computations share, on one
    device: every computation it makes runs there, whatever devices the
    graph's arrays were built on (ngraph's transformers own placement)."""

    def __init__(self, device=CPU):
        if not isinstance(device, Device) or device not in executors.devices():
            raise ValueError(f"Transformer: device must be one of {list(executors.devices())}, got {device!r}")
        self.device = device
        self.state = {}          # variable node -> buffer
        self.variables = {}      # variable node -> None, in the order computations met them
        self.initialized = False
        self.closed = False

    @property
    def name(self):
        """The transformer's kind: 'cpu', or 'gpu' on a CUDA device."""
        return "cpu" if self.device is CPU else "gpu"

    def computation(self, results, *inputs):
        """A callable evaluating `results` (one array, or a list: then a call
        returns a tuple) from `inputs`, placeholders passed positionally."""
        self._check_open("computation")
        return Computation(self, results, inputs)

    def allocate(self):
        """Storage for every variable of this transformer's computations (the
        CPU executor allocates as it initializes)."""
        self._check_open("allocate")

    def initialize(self):
        """Give every variable of this transformer's computations its initial
        value; a variable met later is initialized when first used."""
        self._check_open("initialize")
        for node in self.variables:
            if node not in self.state:
                self.state[node] = self._executor().from_host(initial_value(node))
        self.initialized = True

    def save(self, path):
        """Write every variable's value to `path` (a .npz file), by name."""
        self._check_open("save")
        self.initialize()
        values = {node.attrs[2]: self._executor().to_host(buffer) for node, buffer in self.state.items()}
        np.savez(path, **values)

    def restore(self, path):
        """Read every variable's value from `path`, as `save` wrote it. A file
        whose variables differ in names, shapes or dtypes is a ValueError and
        changes nothing."""
        self._check_open("restore")
        with np.load(path) as data:
            saved = {k: data[k] for k in data.files}
        by_name = {node.attrs[2]: node for node in self.variables}
        if set(saved) != set(by_name):
            raise ValueError(f"restore: {path} holds variables {sorted(saved)}, this transformer has "
                             f"{sorted(by_name)}")
        for name, value in saved.items():
            node = by_name[name]
            if value.shape != node.shape or value.dtype != node.dtype.dtype:
                raise ValueError(f"restore: variable {name!r} is {node.dtype}{list(node.shape)} here, "
                                 f"{value.dtype}{list(value.shape)} in {path}")
        for name, value in saved.items():
            self.state[by_name[name]] = self._executor().from_host(value)
        self.initialized = True

    def close(self):
        """Release the variables' buffers; the transformer cannot run again."""
        for buffer in self.state.values():
            self._executor().deallocate(buffer)
        self.state.clear()
        self.closed = True

    def _executor(self):
        return executors.executor_for(self.device)

    def _check_open(self, name):
        if self.closed:
            raise ValueError(f"{name}: this transformer was closed")

    def value_of(self, node):
        """The current buffer of variable `node` (initialized on first use)."""
        buffer = self.state.get(node)
        if buffer is None:
            buffer = self.state[node] = self._executor().from_host(initial_value(node))
        return buffer


class Computation:
    """A compiled evaluation of results from placeholders (see the module)."""

    def __init__(self, transformer, results, inputs):
        self.transformer = transformer
        self.single = not isinstance(results, (list, tuple))
        results = [results] if self.single else list(results)
        for i, r in enumerate(results):
            if not isinstance(r, Array):
                raise TypeError(f"computation: result {i} must be an arrayx array, got {type(r).__name__}")
        for i, p in enumerate(inputs):
            if not isinstance(p, Array) or p._node.op.name != "placeholder":
                kind = p._node.op.name if isinstance(p, Array) else type(p).__name__
                raise ValueError(f"computation: input {i} must be a placeholder, got {kind}")
        self.placeholders = [p._node for p in inputs]
        if len(set(self.placeholders)) != len(self.placeholders):
            raise ValueError("computation: a placeholder is passed as an input twice")
        # An assign computes its value; the variable takes it after the call.
        self.assigns = []
        wanted = []
        for r in results:
            node = r._node
            if node.op.name == "assign":
                self.assigns.append((node.inputs[0], len(wanted)))
                node = node.inputs[1]
            wanted.append(node)
        order = toposort(list(dict.fromkeys(n for n in wanted if n.buffer is None)))
        for node in order:
            if node.op.name == "placeholder" and node not in self.placeholders:
                raise ValueError(f"computation: the results depend on placeholder {node.attrs[2]!r}, "
                                 f"which is not among the inputs")
            if node.op.name == "assign":
                raise ValueError("computation: an assign is only allowed as a result, not inside the graph")
        # The graph's nodes as they run here (copies, when built on another
        # device), and the node each copy stands for (placeholders and
        # variables are bound by the originals).
        wanted, order, original = _on_device(wanted, order, transformer.device)
        requested = list(dict.fromkeys(n for n in wanted if n.buffer is None))
        constants = _constants(order, requested)
        if constants:
            realize(constants)
            order = toposort(requested)
            requested = [n for n in requested if n.buffer is None]
        self.plan = build_plan(order, requested, bound=True)
        counters["plans_built"] += 1
        # The call sites of the steps that may fail on values, which their errors name.
        self.sites = [site_of(order[p]) if p >= 0 else None for _, p in self.plan.failing]
        slot_of = dict(zip(requested, self.plan.outputs))
        # Each result: its slot, or the buffer of an already evaluated node.
        self.results = [(slot_of[n], None) if n.buffer is None else (None, n.buffer) for n in wanted]
        self.shapes = [(n.shape, n.dtype, n.device) for n in wanted]
        # How each input slot gets its value at a call: an argument's, a
        # variable's or a constant's buffer.
        self.binding = []
        for node in self.plan.inputs:
            source = original.get(node, node)
            if source.op.name == "placeholder":
                self.binding.append(("argument", self.placeholders.index(source)))
            elif source.op.name == "variable":
                transformer.variables.setdefault(source)
                self.binding.append(("variable", source))
            else:   # a constant: the copy holds its buffer on this device
                self.binding.append(("buffer", node.buffer))
        for target, _ in self.assigns:
            transformer.variables.setdefault(target)
        self.run = self._run_function()

    def __call__(self, *args):
        if len(args) != len(self.placeholders):
            raise TypeError(f"computation: takes {len(self.placeholders)} argument(s) (one per placeholder), "
                            f"got {len(args)}")
        borrowed = []   # NumPy arguments bound without a copy
        outputs = self.run([self.bind(i, a, borrowed) for i, a in enumerate(args)], borrowed)
        if self.single:   # a call on small arrays feels each allocation
            shape, dtype, device = self.shapes[0]
            return Array._new(Node(EVALUATED, (), (), shape, dtype, device, outputs[0]))
        return tuple([Array._new(Node(EVALUATED, (), (), shape, dtype, device, buffer))
                      for buffer, (shape, dtype, device) in zip(outputs, self.shapes)])

    def _run_function(self):
        """The computation's `run(values, borrowed=())`: the result buffers
        of a call binding `values` (a buffer per placeholder, from `bind`);
        `borrowed` lists the NumPy arrays bound without a copy. It empties
        `values`: the plan's slots then hold the buffers alone, so one that
        its caller gave up (see `writes_into_argument`) is written in place.
        Generated, a line per slot, result and assign, as a call on small
        arrays costs mostly its Python:

            def run(values, borrowed=()):
                ...                             # the transformer open, an observer told
                slots = [values[0], c1, None]   # arguments, constants (c<s>), the plan's other slots
                slots[3] = value_of(v3)         # a variable's current value
                values.clear()
                plan_run(slots)                 # (failures named by their call site; Plan.run inlined)
                outputs = [slots[2], r1]        # a result's slot, or a result that was a constant
                state[t0] = outputs[1]          # an assign
                return outputs

        A constant's buffer is held by the function too, so the plan never
        writes into it."""
        plan = self.plan
        names = {"transformer": self.transformer, "observe": observe, "plan_run": plan.run, "plan": plan,
                 "sites": self.sites, "failure": failure, "unshared": _unshared, "counters": counters,
                 "state": self.transformer.state, "value_of": self.transformer.value_of}
        names.update((f"p{k}", program) for k, program in enumerate(plan.programs))
        slots = ["None"] * self.plan.n_slots
        variables = []
        for s, (kind, where) in enumerate(self.binding):
            if kind == "argument":
                slots[s] = f"values[{where}]"
            elif kind == "variable":
                names[f"v{s}"] = where
                variables.append(f"    slots[{s}] = value_of(v{s})")
            else:
                names[f"c{s}"] = where
                slots[s] = f"c{s}"
        outputs = []
        for k, (s, buffer) in enumerate(self.results):
            if s is None:
                names[f"r{k}"] = buffer
                outputs.append(f"r{k}")
            else:
                outputs.append(f"slots[{s}]")
        for j, (target, _) in enumerate(self.assigns):
            names[f"t{j}"] = target
        return generated([
            "def run(values, borrowed=()):",
            "    if not transformer.initialized or transformer.closed:",
            "        transformer._check_open('computation')",
            "        transformer.initialize()",
            "    observed = observe.observers",
            "    start = observe.begin() if observed else 0.0",
            f"    slots = [{', '.join(slots)}]",
            *variables,
            "    values.clear()",
            "    try:",
            "        if observed:",
            "            plan_run(slots)",
            "        else:   # Plan.run, inlined",
            *(f"            p{k}(slots)" for k in range(len(plan.programs))),
            f"            counters['steps_run'] += {plan.steps}",
            "    except (ValueError, LookupError) as error:",
            "        failed = failure(error, plan, sites)",
            "        if failed is None:",
            "            raise",
            "        raise failed[1] from None",
            "    if observed:",
            "        observe.force_point('computation', 'compiled', start)",
            f"    outputs = [{', '.join(outputs)}]",
            "    if borrowed:",
            "        outputs = unshared(outputs, borrowed, transformer)",
            *(f"    state[t{j}] = outputs[{k}]" for j, (_, k) in enumerate(self.assigns)),
            "    return outputs"], names, "run")

    def shortcut(self, values):
        """A call binding `values` (a buffer per placeholder) as one call of
        compiled code with no Python around it, where the plan is one step
        reading arguments and constants and giving the results, and its
        executor has such calls (Executor.shortcut): (shortcut, layout_key,
        launch, outputs, guards, sources, order), `sources` giving per
        buffer the step reads the placeholder whose value it is (an int) or
        a constant buffer, `order` per result the step's output it is;
        else None."""
        segments = self.plan.segments
        if len(segments) != 1 or self.assigns or segments[0].transfer is not None or len(segments[0].steps) != 1:
            return None
        segment = segments[0]
        step = segment.steps[0]
        outs = step.outs
        if segment.program.around or any(slot not in outs for slot, _ in self.results):
            return None
        sources, buffers = [], []
        for s in step.args:
            kind, where = self.binding[s] if s < len(self.binding) else (None, None)
            if kind not in ("argument", "buffer"):
                return None
            sources.append(where)
            buffers.append(values[where] if kind == "argument" else where)
        found = segment.executor.shortcut(segment.program.kernels[0], buffers)
        if found is None:
            return None
        return (*found, tuple(sources), tuple(outs.index(slot) for slot, _ in self.results))

    def writes_into_argument(self, argument, result):
        """Whether result `result` is computed in the buffer bound to
        placeholder `argument` when the caller gives that buffer up (no
        array, node or view holds it any more): that buffer and each value
        after it are read by nothing but one update (`x[key] = v`) each,
        the last of which gives the result, and their executor updates in
        place; and no step of the plan can fail on values, so that a call
        stops early only when interrupted (then the buffer holds the updates
        made so far, as after an interrupted NumPy `x[key] = v`)."""
        slot = self.results[result][0]
        inputs = [i for i, (kind, where) in enumerate(self.binding) if kind == "argument" and where == argument]
        if slot is None or not inputs:
            return False
        readers = {}
        for segment in self.plan.segments:
            if segment.transfer is not None:
                readers.setdefault(segment.transfer[0], []).append(None)
                continue
            for step in segment.steps:
                if step.op.may_fail:
                    return False
                for s in step.args:
                    readers.setdefault(s, []).append((step, segment.executor))
        s = inputs[0]
        while s != slot:
            found = readers.get(s)
            if found is None or len(found) != 1 or found[0] is None:
                return False
            step, executor = found[0]
            if step.op.kind != UPDATE or step.args[0] != s or not executor.updates_in_place:
                return False
            s = step.out
        return True

    def bind(self, i, value, borrowed):
        """The buffer bound to placeholder `i` for `value`. A NumPy array of
        the right dtype is bound as it is where the executor can share host
        memory (it cannot change during the call), and listed in `borrowed`."""
        node = self.placeholders[i]
        name = node.attrs[2]
        if isinstance(value, Array):
            given = value._realized()
            if given.shape == node.shape and given.dtype == node.dtype and given.device == node.device:
                return given.buffer   # bound as it is: nothing writes a buffer the slots hold
            host = np.asarray(value)
        elif isinstance(value, dt.PYTHON_SCALARS + (np.ndarray, np.generic)):
            host = np.asarray(value)
        else:
            raise TypeError(f"computation: argument {i} for placeholder {name!r} must be a number, a NumPy "
                            f"array or an arrayx array, got {type(value).__name__}")
        if host.shape != node.shape:
            raise ValueError(f"computation: argument {i} for placeholder {name!r} has shape {host.shape}, "
                             f"expected {node.shape}")
        if isinstance(value, dt.PYTHON_SCALARS):
            fits = dt.scalar_dtype(value, node.dtype) == node.dtype   # a Python number adopts a dtype of its kind
        else:
            source = dt.FROM_NUMPY.get(host.dtype)
            fits = source is not None and dt.PROMOTION.get((source, node.dtype)) == node.dtype
        if not fits:
            raise TypeError(f"computation: argument {i} for placeholder {name!r} has dtype {host.dtype}, "
                            f"which does not cast safely to {node.dtype}")
        executor = self.transformer._executor()
        host = host.astype(node.dtype.dtype, copy=False)
        if host.ndim:
            try:
                buffer = executor.from_host(host, copy=False)
            except ValueError:   # a device executor: its buffers never share host memory
                return executor.from_host(host)
            borrowed.append(host)
            return buffer
        return executor.from_host(host)


def _unshared(outputs, borrowed, transformer):
    """`outputs`, each that is a view of a caller's array (`borrowed`)
    copied: it would change with that array."""
    copy = transformer._executor().copy
    return [copy(out) if any(np.may_share_memory(out, b) for b in borrowed) else out for out in outputs]


# Constants of a computation up to this many elements are computed once, when
# it is compiled; larger ones (a broadcast batch of zeros) stay in the graph,
# where fused kernels read them without the computation holding their memory.
FOLD_MAX_ELEMENTS = 1 << 16


def _constants(order, requested):
    """The unrealized nodes of `order` that read no placeholder or variable
    but feed a node that does (or are results), small enough to fold."""
    varying = set()
    for node in order:
        if node.op.kind is BOUND or any(i in varying for i in node.inputs):
            varying.add(node)
    edge = [i for node in order if node in varying for i in node.inputs if i not in varying]
    edge += [n for n in requested if n not in varying]
    return [n for n in dict.fromkeys(edge) if n.buffer is None and _elements(n) <= FOLD_MAX_ELEMENTS]


def _elements(node):
    shapes = node.shape if node.shape and isinstance(node.shape[0], tuple) else (node.shape,)
    return sum(prod(s) for s in shapes)


def _on_device(nodes, order, device):
    """`nodes` and `order` (their graph, inputs first, as toposort gives it)
    as nodes on `device`, and {copy: original}. Nodes already there are used
    as they are; the others are copied, and realized ones of another device
    are transferred once, now."""
    if all(n.device is device for n in order) and all(n.device is device for n in nodes):
        return nodes, order, {}
    target = executors.executor_for(device)
    copies = {}

    def copy_of(node):
        c = copies.get(node)
        if c is None:   # a realized input
            c = node
            if node.device is not device:
                buffer = transfer(node.buffer, executors.executor_for(node.device), target)
                c = Node(EVALUATED, (), (), node.shape, node.dtype, device, buffer)
            copies[node] = c
        return c

    for node in order:
        if node.buffer is None:
            copies[node] = Node(node.op, tuple(copies[i] for i in node.inputs), node.attrs, node.shape,
                                node.dtype, device)
            if node.op.may_fail:
                copies[node].site = site_of(node)
        else:
            copy_of(node)
    return [copy_of(n) for n in nodes], [copies[n] for n in order], {c: n for n, c in copies.items()}
