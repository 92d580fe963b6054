"""C++ for fused groups on the CPU: one function per group, generic over extents.

A group (graph/fused.py) is a straight-line program over an iteration shape.
The runner (runner.py) lays that shape out as loops: it orders the axes in
sets by what the group computes, drops extents of 1 and merges neighbouring
axes every operand steps through alike (as NumPy's iterator does). The kernel
reads the number of axes in each set, their extents and each operand's
strides at run time (`meta`), so a new shape or rank runs the same compiled
code: its source depends on the group's program and on the loop `Form`
alone. Five forms cover every group the native path takes:

- elementwise: the points in C order, the last axis innermost. Outputs are
  written at the flat index; in a streamed form (outputs larger than the
  cache), through a buffer and streaming stores.
- reduce: a final reduction whose axes hold the last one: kept axes outside,
  reduced axes inside; each kept point folds its reduced points.
- columns: a final reduction that keeps the last axis: the reduced axes loop
  outside a tile of kept points, each with an accumulator of its own.
- rows: row reductions (softmax, logsumexp): for each row, a pass per row
  reduction over the row, then a pass computing and storing the outputs (or
  a final reduction over the row), then the epilogue's values of the row.
  A value the last reduction's pass computes with a math function and the
  outputs' pass needs again is stored in an output's row and read back.
- tiles: row reductions whose rows are strided and whose last other axis is
  contiguous (the rows of a transposed matrix): as columns, a tile of rows
  at a time, each pass walking the row's points outside the tile's rows, so
  that the loads inside are contiguous; the row reductions' values are
  arrays over the tile, and outputs, a row length apart in C order, are
  collected in a block of each row's points before they are written out.

The values at each point, and the innermost loop's function, come from
points.py.
"""

from ... import dtypes as dt
from ...renderer.cstyle import CTYPES, cast, combine, identity, unrendered
from .points import VECTOR_MATH, Source, accumulator, indent, rendered

ENTRY = "ax_kernel"
# Kept points a columns kernel accumulates at a time: its accumulators stay
# in registers and L1 while it walks the reduced axes (and rows a tiles kernel does).
COLUMN_TILE = 256
# Points a streamed elementwise kernel computes into buffers on its stack
# before it writes them out: 4 kB of float32, in L1.
STREAM_POINTS = 1024
# Bytes of each row of a tile whose outputs a tiles kernel collects before
# writing them out: two cache lines a row, 32 kB a tile (in L1, and small on
# a thread's stack).
ROW_BLOCK_BYTES = 128

MODES = ("elementwise", "reduce", "columns", "rows", "tiles")
class Form:
    """What a kernel's source depends on besides its group's program.

    `mode` is one of MODES. `classes` says how the innermost loop reads each
    input and then each output written through strides (a reduce or columns
    group's exported elementwise values): CONTIGUOUS, SAME (stride 0),
    STRIDED (a stride given at run time) or SCALAR (a 0-d input, read once).
    `into` is the input whose buffer the group's one output is written into
    (None: a buffer of its own). An elementwise form is `streamed` when its
    outputs are written with streaming stores (host.h), for outputs larger
    than the cache.
    """

    __slots__ = ("mode", "classes", "into", "streamed", "_key")

    def __init__(self, mode, classes, into=None, streamed=False):
        assert mode in MODES
        assert not streamed or mode == "elementwise"
        self.mode = mode
        self.classes = tuple(classes)
        self.into = into
        self.streamed = streamed
        self._key = (mode, self.classes, into, streamed)

    def __eq__(self, other):
        return isinstance(other, Form) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        streamed = ", streamed" if self.streamed else ""
        return f"Form({self.mode}, classes={''.join(self.classes)}, into={self.into}{streamed})"


def expressible(group):
    """Whether `group` has a native kernel: every instruction has a C form
    (renderer/cstyle.py), and no arg reduction (which has none) or final
    reduction over other axes than its row reductions'."""
    return unrendered(group, accumulator) is None


def mode_of(group):
    """The loop form's mode for `group` (reduce or columns by whether its
    final reduction reduces the group's last axis of more than one point; a
    reduction over no axes folds each point alone, in the reduce form)."""
    if group.row_axes:
        return "rows"
    root = group.reduction
    if root is None:
        return "elementwise"
    axes = set(root.attrs[0])
    real = [d for d, n in enumerate(group.shape) if n != 1]
    return "reduce" if not axes or not real or real[-1] in axes else "columns"


def streamable(group):
    """Whether an elementwise group runs in a streamed form when its outputs
    are large: not where a point calls a math function, as such a kernel
    keeps up with memory without streaming (on two cores), and the copy
    through a buffer made logistic and tanh chains 6-12% slower."""
    dtypes = [d for _, d, _ in group.inputs] + [i.dtype for i in group.body]
    return not any(VECTOR_MATH.search(rendered(i, dtypes)) for i in group.body)


COMPLEX_PRAGMA = '#pragma GCC optimize("no-tree-loop-vectorize", "no-tree-slp-vectorize")\n'
KERNEL_PARAMS = ("char* const* p, const long long* m, long long start, long long stop, "
                 "long long rstart, long long rstop, void* partial")


def source(group, form):
    """The C++ translation unit (after host.h and ops.h) of `group` in `form`:
    one function, `ENTRY`, with KERNEL_PARAMS: the buffers (inputs, then the
    group's outputs), meta (the number of axes in each loop set, their
    extents, then each strided operand's stride along every axis), the range
    of the outermost set (columns: of the kept points) it covers, the range
    of reduced points (reduce and columns), and where partial results go
    (NULL: the final output)."""
    w = Source(group, form)
    functions, body = {"elementwise": _elementwise, "reduce": _reduce, "columns": _columns, "rows": _rows,
                       "tiles": _tiles}[form.mode](w)
    entry = f'extern "C" void {ENTRY}({KERNEL_PARAMS})\n{{\n{indent(w.prologue() + body, 1)}\n}}\n'
    # g++'s vectorizer fuses complex multiply-adds into FMAs even with
    # -ffp-contract=off (its complex-arithmetic patterns): NumPy rounds each step.
    unfused = COMPLEX_PRAGMA if any(d.kind == "c" for d in w.dtypes) else ""
    return unfused + "\n".join(functions) + "\n" + entry


def _elementwise(w):
    outputs = list(w.group.outputs)
    # Streamed, the points go to buffers on the stack, ax_t<v>, which are
    # written out with streaming stores each time they hold STREAM_POINTS
    # (runs along the last axis may be shorter: a buffer of whole lines
    # keeps them from mixing plain and streaming stores in a line).
    streamed = w.form.streamed
    function, call = w.inner("ax_points", "ax_n", outputs, w.each_point(outputs, False, gather=True),
                             flat_out=outputs, flat_at="ax_t{v} + (i - ax_f)" if streamed else "out{v} + i")
    if not streamed:
        return [function], _each_run(w, [call])
    flush = (["if (i - ax_f == {0} || i == stop) {{".format(STREAM_POINTS)]
             + [f"    ax_stream(out{v} + ax_f, ax_t{v}, (i - ax_f) * {w.dtypes[v].itemsize});" for v in outputs]
             + ["    ax_f = i;",
                "}"])
    body = ([f"{w.ctype(v).storage} ax_t{v}[{STREAM_POINTS}];" for v in outputs]
            + ["long long ax_f = start;   // the first point not written out"]
            + _each_run(w, [call], flush, f"ax_f + {STREAM_POINTS} - i"))
    return [function], body + ["ax_stream_fence();"]


def _each_run(w, steps, after=(), room=None):
    """An elementwise kernel's loop over its points [start, stop) as runs
    along the last axis (of at most `room` points, an expression), running
    `steps` at each run and then, the run done, `after`: i the run's first
    point (after: the next run's), ax_n its length, o<k> each operand's
    offset there."""
    lines = ["if (start >= stop) return;",
             "long long c[AX_MAX_AXES];",
             "ax_unravel(start, dims, c, 0, ax_D);",
             "for (long long i = start; i < stop;) {",
             "    long long ax_n = dims[ax_D - 1] - c[ax_D - 1];",
             "    if (ax_n > stop - i) ax_n = stop - i;"]
    lines += [f"    if (ax_n > {room}) ax_n = {room};"] if room else []
    lines += ["    " + line for line in w.offsets(0, "ax_D")]
    lines += ["    " + line for line in steps]
    lines += ["    i += ax_n;"]
    lines += ["    " + line for line in after]
    if room:
        lines += ["    c[ax_D - 1] += ax_n;",
                  "    if (c[ax_D - 1] < dims[ax_D - 1]) continue;"]
    return lines + ["    c[ax_D - 1] = 0;",
                    "    ax_next(dims, c, 0, ax_D - 1);",
                    "}"]


def _reduce(w):
    value = w.n_in + len(w.group.body) - 1
    arg = w.group.body[-1].args[0]
    exported = list(w.strided_out)
    stores = [w.store(v, "q", True) for v in exported]
    kind, declare, total, register = w.accumulator(value, "ax_acc")
    function, call = w.inner("ax_fold", "ax_n", [arg], w.fold(value, [arg] + exported, stores, "ax_acc"),
                             strided_out=exported, extra=[(f"{kind}* ax_acc", "&ax_acc")])
    out = w.group.outputs[-1]
    body = ["if (start >= stop || rstart >= rstop) return;",
            "long long c[AX_MAX_AXES];",
            "ax_unravel(start, dims, c, kept_lo, kept_hi);",
            "for (long long mm = start; mm < stop; mm++) {",
            f"    {declare}",
            "    ax_unravel(rstart, dims, c, reduced_lo, reduced_hi);",
            "    for (long long q0 = rstart; q0 < rstop;) {",
            "        long long ax_n = dims[ax_D - 1] - c[ax_D - 1];",
            "        if (ax_n > rstop - q0) ax_n = rstop - q0;"]
    body += ["        " + line for line in w.offsets(0, "ax_D")]
    body += [f"        {call}",
             "        q0 += ax_n;",
             "        c[ax_D - 1] = 0;",
             "        ax_next(dims, c, reduced_lo, reduced_hi - 1);",
             "    }",
             f"    if (partial) (({register}*)partial)[mm - start] = {total};",
             f"    else out{out}[mm] = {w.ctype(out).store(w.rounded(value, total))};",
             "    ax_next(dims, c, kept_lo, kept_hi);",
             "}"]
    return [function], body


def _each_tile():
    """The lines opening the loop over kept points [start, stop) a tile at a
    time (columns, tiles): u its first, ax_n its count (at most COLUMN_TILE,
    along the innermost axis), c the coordinates of u."""
    return ["const long long ax_inner = dims[ax_D - 1];",
            "long long c[AX_MAX_AXES];",
            "for (long long u = start; u < stop;) {",
            "    c[ax_D - 1] = u % ax_inner;",
            "    ax_unravel(u / ax_inner, dims, c, outer_lo, outer_hi);",
            "    long long ax_n = ax_inner - c[ax_D - 1];",
            "    if (ax_n > stop - u) ax_n = stop - u;",
            f"    if (ax_n > {COLUMN_TILE}) ax_n = {COLUMN_TILE};"]


def _columns(w):
    value = w.n_in + len(w.group.body) - 1
    instruction = w.group.body[-1]
    name = instruction.op.name
    arg = instruction.args[0]
    exported = list(w.strided_out)
    kind = accumulator(name, instruction.dtype)
    register = CTYPES[kind].register
    folded = cast(f"v{arg}", w.dtypes[arg], kind)
    loop = w.each_point(exported, True, needed=[arg])
    loop.insert(-1, f"    ax_acc[q] = {combine(name, kind, 'ax_acc[q]', folded)};")
    function, call = w.inner("ax_fold", "ax_n", [arg], loop, strided_out=exported,
                             extra=[(f"{register}* __restrict__ ax_acc", "ax_acc")])
    out = w.group.outputs[-1]
    result = w.rounded(value, "ax_acc[ax_j]")
    body = ["if (start >= stop || rstart >= rstop) return;"] + _each_tile() + [
            f"    {register} ax_acc[{COLUMN_TILE}];",
            f"    for (long long ax_j = 0; ax_j < ax_n; ax_j++) ax_acc[ax_j] = {identity(name, kind)};",
            "    ax_unravel(rstart, dims, c, reduced_lo, reduced_hi);",
            "    for (long long q0 = rstart; q0 < rstop; q0++) {"]
    body += ["        " + line for line in w.offsets(0, "ax_D")]
    body += [f"        {call}",
             "        ax_next(dims, c, reduced_lo, reduced_hi);",
             "    }",
             "    if (partial) for (long long ax_j = 0; ax_j < ax_n; ax_j++) "
             f"(({register}*)partial)[u - start + ax_j] = ax_acc[ax_j];",
             f"    else for (long long ax_j = 0; ax_j < ax_n; ax_j++) out{out}[u + ax_j] = {w.ctype(out).store(result)};",
             "    u += ax_n;",
             "}"]
    return [function], body


def _row_values(group, n_in):
    """(a row group's row reductions, its root, its epilogue's outputs, its
    outputs at every point of a row)."""
    reductions = [n_in + k for k, i in enumerate(group.body) if i.op.kind == "reduce"]
    root = n_in + len(group.body) - 1
    epilogue = [v for v in group.outputs if v in group.epilogue]
    flat = [v for v in group.outputs if v not in reductions and v not in epilogue]
    return reductions, root, epilogue, flat


def _reread(w, reductions, flat):
    """(u, v): a value u that the last row reduction's pass computes and the
    last pass needs again, calling a math function to compute it, and an
    output v of the last pass of u's dtype; else None. That pass stores u in
    v's row (in cache), which the last pass reads back: a softmax computes
    exp(x - max) once, not twice. Not where v's buffer is an input's, nor
    for dtypes computed wider than they are stored (float16)."""
    if w.form.into is not None:
        return None
    before = set(reductions[:-1]) | set(w.scalars)
    arg = w.group.body[reductions[-1] - w.n_in].args[0]
    computed = [u for u in w.group.dependencies([arg], before) if u >= w.n_in]
    needed = set(w.group.dependencies(flat, set(reductions) | set(w.scalars)))
    for u in reversed([u for u in computed if u in needed]):
        if not any(VECTOR_MATH.search(w.rendered(d)) for d in w.group.dependencies([u], before) if d >= w.n_in):
            continue
        same = [v for v in flat if w.dtypes[v] == w.dtypes[u] and w.dtypes[u] in (dt.float32, dt.float64)]
        return (u, same[0]) if same else None
    return None


def _rows(w):
    n_in = w.n_in
    group = w.group
    reductions, root, epilogue, flat = _row_values(group, n_in)
    last = root not in reductions and flat
    reread = _reread(w, reductions, flat) if last else None
    functions, calls, defined = [], [], []
    for number, value in enumerate(reductions):
        arg = group.body[value - n_in].args[0]
        stored = flat if value == root else []
        wanted, stores = [arg] + stored, [w.store(v, "q", False) for v in stored]
        # The stored reread value's last points go in a masked step, as a
        # pass that stores nothing takes them: one at a time, a softmax over
        # rows of 10 ran 1.0-1.3x slower than before it stored. Exported
        # values keep the scalar tail: the masked step made the reduce form's
        # 1.4-1.9x slower over rows of 7 to 100 on an AMD EPYC.
        masked = bool(reread) and value == reductions[-1]
        if masked:
            u, v = reread
            stored, stores = [v], [f"w{v}[q] = {w.ctype(v).store(f'v{u}')};"]
        kind, declare, total, _ = w.accumulator(value, f"ax_acc{value}")
        function, call = w.inner(f"ax_pass{number}", "dims[ax_D - 1]", [arg],
                                 w.fold(value, wanted, stores, "ax_acc", defined, masked), defined=list(defined),
                                 flat_out=stored, extra=[(f"{kind}* ax_acc", f"&ax_acc{value}")])
        functions.append(function)
        calls += [declare, call,
                  f"const {w.ctype(value).register} v{value} = {w.rounded(value, total)};"]
        if value in group.outputs:
            calls.append(f"out{value}[row] = {w.ctype(value).store(f'v{value}')};")
        defined.append(value)
    if last:
        function, call = w.inner("ax_last", "dims[ax_D - 1]", flat,
                                 w.each_point(flat, False, defined, gather=True, reread=reread),
                                 defined=list(defined), flat_out=flat, reread=reread)
        functions.append(function)
        calls.append(call)
    if epilogue:
        # One point a row, whose outputs' flat index is the row's.
        function, call = w.inner("ax_epilogue", "1", epilogue, w.each_point(epilogue, False, defined),
                                 defined=list(defined), flat_out=epilogue)
        functions.append(function)
        calls.append(call)
    body = ["if (start >= stop) return;",
            "long long c[AX_MAX_AXES];",
            "c[ax_D - 1] = 0;",
            "ax_unravel(start, dims, c, lead_lo, lead_hi);",
            "for (long long row = start; row < stop; row++) {"]
    body += ["    " + line for line in w.offsets(0, "ax_D")]
    body += [f"    const long long f{v} = row * dims[ax_D - 1];" for v in flat]
    body += [f"    const long long f{v} = row;" for v in epilogue]
    body += ["    " + line for line in calls]
    body += ["    ax_next(dims, c, lead_lo, lead_hi);",
             "}"]
    return functions, body


def _tiles(w):
    n_in = w.n_in
    group = w.group
    reductions, root, epilogue, flat = _row_values(group, n_in)

    def tile_loop(wanted, defined, stores, fold=()):
        """The loop over a tile's `n` rows at one point of the row: each row's
        `defined` values from their arrays, then `wanted`, `stores`, `fold`."""
        point = [f"const {w.ctype(v).register} v{v} = d{v}[q];" for v in defined]
        point += w.values(wanted, "q", defined) + stores + list(fold)
        return ["for (long long q = 0; q < n; q++) {"] + ["    " + line for line in point] + ["}"]

    def along_row(call, stored):
        """Lines calling `call` at each point of the row with the offsets set.
        The `stored` outputs of a block of points (ROW_BLOCK_BYTES of the
        widest) go to a block of the tile (`call` stores each point's at its
        row's place there), which is then written out row by row: stored
        straight from the loop, a point's values would lie a row length apart."""
        walk = ["    c[row_lo] = r;"] + ["    " + line for line in w.offsets(0, "ax_D")] + [f"    {call}"]
        if not stored:
            return ["for (long long r = 0; r < ax_row; r++) {"] + walk + ["}"]
        block = ROW_BLOCK_BYTES // max(w.dtypes[v].itemsize for v in stored)
        return ([f"{w.ctype(v).storage} ax_b{v}[{block * COLUMN_TILE}];" for v in stored]
                + [f"for (long long r0 = 0; r0 < ax_row; r0 += {block}) {{",
                   f"    const long long ax_m = ax_row - r0 < {block} ? ax_row - r0 : {block};",
                   "    for (long long r = r0; r < r0 + ax_m; r++) {"]
                + ["    " + line for line in walk]
                + ["    }"]
                + [f"    for (long long q = 0; q < ax_n; q++) for (long long k = 0; k < ax_m; k++) "
                   f"out{v}[(u + q) * ax_row + r0 + k] = ax_b{v}[k * {COLUMN_TILE} + q];" for v in stored]
                + ["}"])

    def block_rows(stored):
        """The `extra` parameters of a pass storing `stored`: its rows of the block."""
        return [(f"{w.ctype(v).storage}* __restrict__ w{v}", f"ax_b{v} + (r - r0) * {COLUMN_TILE}") for v in stored]

    functions, steps, defined = [], [], []
    for number, value in enumerate(reductions):
        instruction = group.body[value - n_in]
        name = instruction.op.name
        kind = accumulator(name, instruction.dtype)
        register = CTYPES[kind].register
        arg = instruction.args[0]
        stored = flat if value == root else []
        fold = f"ax_acc[q] = {combine(name, kind, 'ax_acc[q]', cast(f'v{arg}', w.dtypes[arg], kind))};"
        loop = tile_loop([arg] + stored, defined, [w.store(v, "q", False) for v in stored], [fold])
        function, call = w.inner(f"ax_pass{number}", "ax_n", [arg] + stored, loop, defined=list(defined),
                                 extra=block_rows(stored) + [(f"{register}* __restrict__ ax_acc", f"ax_acc{value}")])
        functions.append(function)
        steps += [f"{register} ax_acc{value}[{COLUMN_TILE}];",
                  f"for (long long q = 0; q < ax_n; q++) ax_acc{value}[q] = {identity(name, kind)};"]
        steps += along_row(call, stored)
        steps += [f"{w.ctype(value).register} ax_v{value}[{COLUMN_TILE}];",
                  f"for (long long q = 0; q < ax_n; q++) ax_v{value}[q] = {w.rounded(value, f'ax_acc{value}[q]')};"]
        if value in group.outputs:
            steps.append(f"for (long long q = 0; q < ax_n; q++) out{value}[u + q] = "
                         f"{w.ctype(value).store(f'ax_v{value}[q]')};")
        defined.append(value)
    if root not in reductions and flat:
        loop = tile_loop(flat, defined, [w.store(v, "q", False) for v in flat])
        function, call = w.inner("ax_last", "ax_n", flat, loop, defined=list(defined), extra=block_rows(flat))
        functions.append(function)
        steps += along_row(call, flat)
    if epilogue:
        # One value a row, stored at the row's flat index.
        loop = tile_loop(epilogue, defined, [w.store(v, "q", False) for v in epilogue])
        function, call = w.inner("ax_epilogue", "ax_n", epilogue, loop, defined=list(defined), flat_out=epilogue)
        functions.append(function)
        steps += (["c[row_lo] = 0;"] + w.offsets(0, "ax_D")
                  + [f"const long long f{v} = u;" for v in epilogue] + [call])
    body = ["if (start >= stop) return;", "const long long ax_row = dims[row_lo];"] + _each_tile()
    body += ["    " + line for line in steps]
    body += ["    u += ax_n;",
             "}"]
    return functions, body
