"""The fused group: the IR the scheduler hands every executor for fused work.

A group is a small straight-line program over one iteration shape:
elementwise instructions (broadcasting their operands NumPy-style), optionally
ending in one reduction, or in an epilogue over its row reductions' results. It is the attrs of an ordinary `fused` step (MLX's
`Compiled` primitive is the model), so executors implement it like any other
primitive: the CPU executor runs it over cache-sized blocks, the GPU executor
generates one kernel from it. Groups compare by structure, so a code generator
can cache what it built for one.
"""

from math import prod


class Instruction:
    """`op` applied to earlier values of the group.

    `args` are value numbers: 0..n_inputs-1 are the group's inputs, n_inputs + k
    is the result of instruction k. `shape` is its result's shape: the
    group's iteration shape for elementwise instructions (the row
    reductions' kept shape for those of the epilogue), the reduced shape
    for a reduction.
    """

    __slots__ = ("op", "attrs", "args", "shape", "dtype")

    def __init__(self, op, attrs, args, shape, dtype):
        self.op = op
        self.attrs = attrs
        self.args = args
        self.shape = shape
        self.dtype = dtype

    def key(self):
        return (self.op.name, self.attrs, self.args, self.shape, self.dtype)

    def __repr__(self):
        return f"{self.op.name}{self.args}"


class FusedGroup:
    """Elementwise instructions over `shape`, optionally ending in a reduction.

    Row reductions may come before the end: they reduce trailing axes with
    keepdims, and later instructions broadcast their results back. A group
    with row reductions may end in an epilogue instead (see `epilogue`).

    `inputs` holds each input's (shape, dtype, layout): an input broadcasts to
    `shape` right-aligned, as NumPy does, and its layout is what the executor
    reported for its buffer ("C" contiguous, "S" strided, "B" broadcast), so a
    kernel generated for contiguous inputs never runs on a strided view.
    `outputs` are value numbers; the last is the group's root (its final
    instruction), the others are intermediates needed outside the group.
    """

    __slots__ = ("shape", "inputs", "body", "outputs", "_key", "_hash")

    def __init__(self, shape, inputs, body, outputs):
        self.shape = shape
        self.inputs = inputs
        self.body = body
        self.outputs = outputs
        self._key = (shape, inputs, tuple(i.key() for i in body), outputs)
        self._hash = hash(self._key)
        n = len(inputs)
        assert outputs[-1] == n + len(body) - 1, "the root is the last instruction"
        for k, instruction in enumerate(body):
            assert all(a < n + k for a in instruction.args), "operands come before their use"

    @property
    def size(self):
        """Number of points in the iteration space."""
        return prod(self.shape)

    @property
    def reduction(self):
        """The final reduction instruction, or None."""
        last = self.body[-1]
        return last if last.op.kind == "reduce" else None

    @property
    def row_axes(self):
        """The trailing axes that row reductions (reductions before the last
        instruction, which keep dimensions) reduce; () when there are none."""
        for instruction in self.body[:-1]:
            if instruction.op.kind == "reduce":
                return instruction.attrs[0]
        return ()

    @property
    def epilogue(self):
        """The value numbers of the elementwise instructions over the row
        reductions' kept shape (the group's with its row axes 1) rather than
        the group's: they run once per row after the row's reductions,
        reading those, inputs of that shape and each other (logsumexp's
        `max + log(sum)`). The root of a group with an epilogue is in it."""
        n = len(self.inputs)
        return frozenset(n + k for k, i in enumerate(self.body) if i.op.kind != "reduce" and i.shape != self.shape)

    def dependencies(self, roots, defined=()):
        """The value numbers `roots` depend on, themselves included, in
        program order, not looking past values in `defined` (which a code
        generator has computed already)."""
        n = len(self.inputs)
        seen, stack = set(), list(roots)
        while stack:
            v = stack.pop()
            if v in seen or v in defined:
                continue
            seen.add(v)
            if v >= n:
                stack.extend(self.body[v - n].args)
        return sorted(seen)

    def __eq__(self, other):
        return isinstance(other, FusedGroup) and self._key == other._key

    def __hash__(self):
        return self._hash

    def __repr__(self):
        names = " ".join(i.op.name for i in self.body)
        return f"FusedGroup({names}; shape={self.shape}, inputs={len(self.inputs)}, outputs={len(self.outputs)})"


def single_instruction_group(op, attrs, inputs, shape, dtype):
    """The group of one instruction: elementwise primitive or reduction `op`
    with `attrs` over `inputs` ((shape, dtype, layout) each), giving `shape`
    and `dtype`. Executors that generate code for groups run a lone
    elementwise step or reduction this way, with the same code as fused work."""
    group_shape = inputs[0][0] if op.kind == "reduce" else shape
    body = (Instruction(op, attrs, tuple(range(len(inputs))), shape, dtype),)
    return FusedGroup(group_shape, tuple(inputs), body, (len(inputs),))
