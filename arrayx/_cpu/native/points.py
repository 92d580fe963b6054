"""C++ for a fused group's values at the points of a kernel's innermost
loop: each operand's loads through its strides, each instruction through the
C expression table shared with the CUDA renderer (renderer/cstyle.py, so
both run the same semantics), the stores, the innermost loop's function, and
the lanes that fold a reduction. codegen.py puts them in each loop form.

The innermost loop is a function of its own whose pointer arguments are
`__restrict__`, so g++ vectorizes it without alias checks, and math
functions with a vector variant in glibc's libmvec (host.h) vectorize with
it; strided inputs of such functions are copied LANES points at a time
first (`gathered`). A reduction's innermost loop folds LANES points at a
time into LANES accumulators (a loop the vectorizer runs as one vector
operation per step: without -ffast-math it never reorders a single
accumulator's additions), and its last points in one more such step, the
lanes past them keeping their value. Float sums add blocks of SUM_BLOCK
points that way and then add the blocks' totals pairwise (a cascade, as
NumPy's pairwise summation), except float32 sums: they and float32 products
accumulate in float64, whose lanes need no blocks to be more accurate than
NumPy's float32 sums.
"""

import re
from pathlib import Path

from ... import dtypes as dt
from ...renderer.cstyle import CTYPES, cast, combine, identity, render

# The host side of the expression table's header, which kernels include.
HOST_HEADER = Path(__file__).with_name("host.h")
# The math functions host.h gives a vector variant (libmvec).
VECTOR_MATH = re.compile(r"\b(%s)\(" % "|".join(
    re.findall(r"AX_LIBM[12]\((\w+), AX_SIMD\)", HOST_HEADER.read_text())))
# Accumulators a reduction's innermost loop keeps: one 512-bit vector of float32.
LANES = 16
# Points a floating sum folds into its lanes before their total joins the
# pairwise cascade: NumPy's pairwise summation folds 128 into 8.
SUM_BLOCK = 128
# How the innermost loop reads an operand.
CONTIGUOUS, SAME, STRIDED, SCALAR = "c", "z", "g", "s"
# The loop sets of each mode, outermost first (meta starts with the number of axes in each).
SETS = {"elementwise": ("points",), "reduce": ("kept", "reduced"), "columns": ("outer", "reduced", "inner"),
        "rows": ("lead", "row"), "tiles": ("outer", "row", "inner")}


def accumulator(name, dtype):
    """The dtype reduction `name`, giving `dtype`, accumulates in: float16 in
    float32; float32 sums and products in float64; the rest in their own."""
    if dtype == dt.float16:
        return dt.float32
    if dtype == dt.float32 and name in ("sum", "prod"):
        return dt.float64
    return dtype


def cascades(name, dtype):
    """Whether reduction `name` giving `dtype` adds blocks pairwise: float
    sums, except float32's, whose float64 lanes (29 more bits of precision)
    add up to 2^28 points each within the float32 result's rounding."""
    return name == "sum" and dtype.kind == "f" and dtype != dt.float32


def rendered(instruction, dtypes):
    """The C expression of `instruction`, its operands named v<number>."""
    return render(instruction.op.name, [f"v{a}" for a in instruction.args], dtypes[instruction.args[-1]],
                  instruction.dtype)


def strided_outputs(group, mode):
    """The value numbers of the outputs a kernel of `mode` writes through
    strides: a reduce or columns group's exported elementwise values."""
    return tuple(group.outputs[:-1]) if mode in ("reduce", "columns") else ()


class Source:
    """The parts of the C++ of one group in one form (codegen.source puts them together)."""

    def __init__(self, group, form):
        self.group = group
        self.form = form
        self.n_in = len(group.inputs)
        self.dtypes = [d for _, d, _ in group.inputs] + [i.dtype for i in group.body]
        self.strided_out = strided_outputs(group, form.mode)
        self.scalars = [k for k in range(self.n_in) if form.classes[k] == SCALAR]
        # Operands with strides in meta, in order: non-scalar inputs, then strided outputs.
        operands = [k for k in range(self.n_in) if form.classes[k] != SCALAR] + list(self.strided_out)
        self.slot = {k: s for s, k in enumerate(operands)}
        self.out_class = {v: form.classes[self.n_in + i] for i, v in enumerate(self.strided_out)}
        self.sets = SETS[form.mode]

    # values

    def ctype(self, v):
        return CTYPES[self.dtypes[v]]

    def load(self, k, q, staged=()):
        """Input k at point `q` of the innermost loop (from its copy in wide
        lanes, `ax_s{k}[ax_l]`, for a `staged` input of a lanes loop)."""
        if k in staged:
            return self.ctype(k).load(f"ax_s{k}[ax_l]")
        index = {CONTIGUOUS: q, SAME: "0", STRIDED: f"{q} * s{k}"}[self.form.classes[k]]
        return self.ctype(k).load(f"a{k}[{index}]")

    def stage(self, k, index, register):
        """Lines copying input k at the LANES points `index` (over lane ax_l)
        into lanes `ax_s{k}` of C type `register`."""
        at = f"({index}) * s{k}" if self.form.classes[k] == STRIDED else index
        return [f"{register} ax_s{k}[{LANES}];",
                f"for (int ax_l = 0; ax_l < {LANES}; ax_l++) ax_s{k}[ax_l] = a{k}[{at}];"]

    def gathered(self, wanted, defined):
        """The strided inputs of 4 or 8 bytes a lanes loop computing `wanted`
        copies to lanes first, when it calls a vector math function: g++ 12
        vectorizes a variable stride's loads only in a loop of their own (as
        gathers), and the math of points loaded in the computing loop would
        stay scalar."""
        needed = self.group.dependencies(wanted, set(defined) | set(self.scalars))
        math = any(VECTOR_MATH.search(self.rendered(v)) for v in needed if v >= self.n_in)
        return [k for k in needed if math and k < self.n_in and self.form.classes[k] == STRIDED
                and self.dtypes[k].itemsize in (4, 8) and self.dtypes[k].kind != "c"]

    def rendered(self, v):
        """The C expression of body value v."""
        return rendered(self.group.body[v - self.n_in], self.dtypes)

    def values(self, wanted, q, defined, staged=(), reread=None):
        """Lines computing `wanted` at point `q`, given the scalar inputs and
        the `defined` values (row reductions) as variables, the value u of
        `reread` (u, v) read back from output v's row."""
        lines, known = [], set(defined) | set(self.scalars)
        if reread:
            u, v = reread
            lines.append(f"{self.ctype(u).register} v{u} = {self.ctype(v).load(f'w{v}[{q}]')};")
            known.add(u)
        for v in self.group.dependencies(wanted, known):
            ctype = self.ctype(v)
            if v < self.n_in:
                lines.append(f"{ctype.register} v{v} = {self.load(v, q, staged)};")
                continue
            lines.append(f"{ctype.register} v{v} = {self.rendered(v)};")
        return lines

    def store(self, v, q, strided):
        """The line storing value v at point `q` of the innermost loop: through
        its strides, or at the flat index (its pointer already at the row)."""
        index = {CONTIGUOUS: q, SAME: "0", STRIDED: f"{q} * t{v}"}[self.out_class[v]] if strided else q
        return f"w{v}[{index}] = {self.ctype(v).store(f'v{v}')};"

    def each_point(self, outputs, strided, defined=(), needed=(), gather=False, reread=None):
        """The innermost loop over its `n` points computing `outputs` (and
        the `needed` values) at each point q and storing the outputs; more
        lines for the loop's body may be added before its last line. With
        `gather`, points whose strided inputs are `gathered` go LANES at a
        time, the inputs copied to lanes first, and the last ones one by one.
        `reread` as for `values`."""
        wanted = list(needed) + list(outputs)
        stores = [self.store(v, "q", strided) for v in outputs]
        point = self.values(wanted, "q", defined, reread=reread) + stores
        staged = self.gathered(wanted, list(defined) + ([reread[0]] if reread else [])) if gather else []
        if not staged:
            return ["for (long long q = 0; q < n; q++) {"] + ["    " + line for line in point] + ["}"]
        lanes = self.values(wanted, "q", defined, staged, reread) + stores
        return (["long long ax_j = 0;",
                 f"for (; ax_j + {LANES} <= n; ax_j += {LANES}) {{"]
                + ["    " + line for k in staged for line in self.stage(k, "ax_j + ax_l", self.ctype(k).storage)]
                + ["#pragma GCC unroll 1",
                   f"    for (int ax_l = 0; ax_l < {LANES}; ax_l++) {{",
                   "        const long long q = ax_j + ax_l;"]
                + ["        " + line for line in lanes]
                + ["    }",
                   "}",
                   "for (long long q = ax_j; q < n; q++) {"]
                + ["    " + line for line in point] + ["}"])

    # the innermost loop's function

    def inner(self, name, count, roots, body, defined=(), flat_out=(), strided_out=(), extra=(),
              flat_at="out{v} + f{v}", reread=None):
        """(the innermost-loop function `name` over `n` points running
        `body`, the call of it over `count` points). Inputs `roots` needs are
        pointers (`in{k} + o{k}` at the call) or, if 0-d, values; the
        `defined` row reductions are values; outputs are pointers, at the
        flat index (`flat_at`) or through strides (`out{v} + o{v}`); the
        value of `reread` (u, v) comes from output v, not from inputs."""
        params, args = ["long long n"], [count]
        into = self.form.into
        known = set(defined) | ({reread[0]} if reread else set())
        for v in self.group.dependencies(list(roots) + list(flat_out) + list(strided_out), known):
            if v >= self.n_in:
                continue
            ctype = self.ctype(v)
            cls = self.form.classes[v]
            if cls == SCALAR:
                params.append(f"{ctype.register} v{v}")
                args.append(f"v{v}")
                continue
            restrict = "" if v == into else " __restrict__"
            params.append(f"const {ctype.storage}*{restrict} a{v}")
            args.append(f"in{v} + o{v}")
            if cls == STRIDED:
                params.append(f"long long s{v}")
                args.append(f"s{v}")
        for v in defined:
            if self.form.mode == "tiles":
                params.append(f"const {self.ctype(v).register}* __restrict__ d{v}")
                args.append(f"ax_v{v}")
            else:
                params.append(f"{self.ctype(v).register} v{v}")
                args.append(f"v{v}")
        for v in flat_out:
            restrict = "" if into is not None else " __restrict__"
            params.append(f"{self.ctype(v).storage}*{restrict} w{v}")
            args.append(flat_at.format(v=v))
        for v in strided_out:
            params.append(f"{self.ctype(v).storage}* __restrict__ w{v}")
            args.append(f"out{v} + o{v}")
            if self.out_class[v] == STRIDED:
                params.append(f"long long t{v}")
                args.append(f"t{v}")
        for decl, arg in extra:
            params.append(decl)
            args.append(arg)
        function = f"static __forceinline__ void {name}({', '.join(params)})\n{{\n{indent(body, 1)}\n}}\n"
        return function, f"{name}({', '.join(args)});"

    def prologue(self):
        """The kernel's first lines: its loop axes, each buffer, each 0-d
        input's value, the innermost stride of each strided operand."""
        n_sets = len(self.sets)
        lines = [f"const int ax_sets[{n_sets}] = {{{', '.join(f'(int)m[{i}]' for i in range(n_sets))}}};",
                 "int ax_D = 0;",
                 f"for (int ax_i = 0; ax_i < {n_sets}; ax_i++) ax_D += ax_sets[ax_i];",
                 f"const long long* dims = m + {n_sets};",
                 "const long long* st = dims + ax_D;"]
        for lo, name in zip(range(n_sets), self.sets):
            bounds = " + ".join(f"ax_sets[{i}]" for i in range(lo)) or "0"
            lines.append(f"const int {name}_lo = {bounds}, {name}_hi = {name}_lo + ax_sets[{lo}];")
        for k in range(self.n_in):
            storage = self.ctype(k).storage
            if self.form.classes[k] == SCALAR:
                lines.append(f"const {self.ctype(k).register} v{k} = {self.ctype(k).load(f'*(const {storage}*)p[{k}]')};")
            else:
                lines.append(f"const {storage}* in{k} = (const {storage}*)p[{k}];")
        for i, v in enumerate(self.group.outputs):
            lines.append(f"{self.ctype(v).storage}* out{v} = ({self.ctype(v).storage}*)p[{self.n_in + i}];")
        for k, slot in self.slot.items():
            cls = self.form.classes[k] if k < self.n_in else self.out_class[k]
            if cls == STRIDED:
                lines.append(f"const long long {'s' if k < self.n_in else 't'}{k} = st[{slot} * ax_D + ax_D - 1];")
        return lines

    def offsets(self, lo, hi):
        """Lines setting o<k>, each strided operand's offset at the
        coordinates c[] of axes [lo, hi) (C++ expressions)."""
        return [f"const long long o{k} = ax_offset(st + {slot} * ax_D, c, {lo}, {hi});" for k, slot in self.slot.items()]

    def fold(self, value, wanted, stores, acc, defined=(), masked_stores=False):
        """Lines folding reduction `value`'s argument over n points into
        `acc` (a pointer to its cascade, or to its value), computing the
        `wanted` values (its argument among them) and performing `stores` at
        each point, with the `defined` values as variables. With stores, the
        last points go one at a time, unless `masked_stores`: then in the
        last step as the others do, each store under its lane's mask."""
        instruction = self.group.body[value - self.n_in]
        name = instruction.op.name
        kind = accumulator(name, instruction.dtype)
        register = CTYPES[kind].register
        arg = instruction.args[0]
        folded = cast(f"v{arg}", self.dtypes[arg], kind)
        pairwise = cascades(name, instruction.dtype)
        # Inputs narrower than the accumulator are copied to wide lanes first:
        # g++ 12 vectorizes no lanes' loop that loads 1-byte and 8-byte
        # values together (a where() on a bool mask kept exp scalar).
        widened = [k for k in self.group.dependencies(wanted, set(defined) | set(self.scalars)) if k < self.n_in
                   and self.form.classes[k] == CONTIGUOUS and self.dtypes[k].itemsize < min(4, kind.itemsize)]
        gathered = self.gathered(wanted, defined)
        staged = widened + gathered
        lanes_values = self.values(wanted, "q", defined, staged)

        def lanes(index, tail):
            """A step over the LANES points from ax_j, lane ax_l reading the
            point at `index`: all of them, or (`tail`) the ax_r left, each
            lane past them folding in nothing."""
            stage = ["    " + line for k in widened for line in self.stage(k, index, "long long")]
            stage += ["    " + line for k in gathered for line in self.stage(k, index, self.ctype(k).storage)]
            into = combine(name, kind, "ax_lane[ax_l]", folded)
            # Unrolled, the lanes' loop would not meet the vectorizer (and its math calls no vector variant).
            # ivdep: a lane writes only its own ax_lane, so g++ need not keep a
            # second copy of the loop for when they overlap (nor in the fold below).
            return (stage + ["#pragma GCC unroll 1", "#pragma GCC ivdep",
                             f"    for (int ax_l = 0; ax_l < {LANES}; ax_l++) {{",
                             f"        const long long q = {index};"]
                    + ["        " + line for line in lanes_values]
                    + [f"        if (ax_l < ax_r) {line}" if tail else f"        {line}" for line in stores]
                    + [f"        ax_lane[ax_l] = ax_l < ax_r ? {into} : ax_lane[ax_l];" if tail
                       else f"        ax_lane[ax_l] = {into};",
                       "    }"])

        if stores and not masked_stores:
            # Each point stores values: the last points, one at a time.
            point = self.values(wanted, "q", defined) + stores
            tail = (["for (; ax_j < ax_e; ax_j++) {",
                     "    const long long q = ax_j;"]
                    + ["    " + line for line in point]
                    + [f"    ax_lane[0] = {combine(name, kind, 'ax_lane[0]', folded)};",
                       "}"])
        else:
            # The last points in one more step, whose lanes past them read
            # the step's first point again and keep their value: a loop of
            # LANES points, which g++ vectorizes with no epilogue and with the
            # math functions' vector variants (a loop of n - ax_j points
            # doubles the kernel's compile time; one kept scalar would call
            # the scalar math functions).
            tail = (["if (ax_j < ax_e) {",
                     "    const long long ax_r = ax_e - ax_j;"]
                    + ["    " + line for line in lanes("ax_j + (ax_l < ax_r ? ax_l : 0)", True)]
                    + ["    ax_j = ax_e;",
                       "}"])
        lines = ([f"{register} ax_lane[{LANES}];",
                  f"for (int ax_l = 0; ax_l < {LANES}; ax_l++) ax_lane[ax_l] = {identity(name, kind)};",
                  f"for (; ax_j + {LANES} <= ax_e; ax_j += {LANES}) {{"]
                 + lanes("ax_j + ax_l", False) + ["}"] + tail
                 + [f"for (int ax_w = {LANES // 2}; ax_w > 0; ax_w >>= 1)",
                    "    #pragma GCC ivdep",
                    f"    for (int ax_l = 0; ax_l < ax_w; ax_l++) "
                    f"ax_lane[ax_l] = {combine(name, kind, 'ax_lane[ax_l]', 'ax_lane[ax_l + ax_w]')};"])
        if not pairwise:
            return (["long long ax_j = 0;", "const long long ax_e = n;"] + lines
                    + [f"*{acc} = {combine(name, kind, f'*{acc}', 'ax_lane[0]')};"])
        return (["long long ax_j = 0;",
                 "while (ax_j < n) {",
                 f"    const long long ax_e = n - ax_j > {SUM_BLOCK} ? ax_j + {SUM_BLOCK} : n;"]
                + ["    " + line for line in lines]
                + [f"    {acc}->push(ax_lane[0]);",
                   "}"])

    def accumulator(self, value, var):
        """(the C type of reduction `value`'s accumulator `var`, the line
        declaring it, the expression of its total, the C type of that total)."""
        instruction = self.group.body[value - self.n_in]
        name = instruction.op.name
        kind = accumulator(name, instruction.dtype)
        register = CTYPES[kind].register
        if cascades(name, instruction.dtype):
            return f"ax_cascade<{register}>", f"ax_cascade<{register}> {var};", f"{var}.total({identity(name, kind)})", register
        return register, f"{register} {var} = {identity(name, kind)};", var, register

    def rounded(self, value, expr):
        """The accumulated `expr` as a register value of reduction `value`'s dtype."""
        instruction = self.group.body[value - self.n_in]
        kind = accumulator(instruction.op.name, instruction.dtype)
        if instruction.dtype == dt.float16:
            return f"ax_round_half({expr})"
        return expr if kind == instruction.dtype else cast(expr, kind, instruction.dtype)


def indent(lines, depth):
    return "\n".join("    " * depth + line for line in lines)
