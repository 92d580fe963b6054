"""The C expression table: one C++ expression per elementwise primitive,
shared by the CUDA renderer (arrayx/_gpu/codegen.py) and the CPU's native
renderer (arrayx/_cpu/native/codegen.py), as tinygrad's `code_for_op`.

`EXPRESSIONS[name][kind]` renders the primitive on operands of that dtype kind
(b bool, i signed, u unsigned, f real floating, c complex) as a format string
over the operand expressions `{0}`, `{1}`, `{2}` and the result's register type
`{T}`. Operations whose semantics need more than a C operator (NumPy's floor
division, wrap-around integer arithmetic, NaN-propagating maximum, complex
division) call a function of `ops.h`, which both renderers put in front of
their kernels. Standalone and fused kernels on either device render through
this one table, so their results agree with each other and with NumPy.

A primitive or kind missing here has no generated kernel: a group that holds
it runs on NumPy (on a GPU: on the CPU executor, with transfers). float16
values live in float registers and are rounded after every instruction, as
NumPy rounds every operation.
"""

import math
from pathlib import Path

from .. import dtypes as dt
from ..graph.primitives import BLOCK_REDUCE_OPS, PRIMITIVES

# The functions the table calls beyond C operators, in C++ that NVRTC and g++ both compile.
OPS_HEADER = Path(__file__).with_name("ops.h")


class CType:
    """How one arrayx dtype appears in generated C++."""

    __slots__ = ("dtype", "kind", "register", "storage", "unsigned")

    def __init__(self, dtype, register, storage=None, unsigned=None):
        self.dtype = dtype
        self.kind = "b" if dtype == dt.bool else dtype.kind
        self.register = register          # the type values are computed in
        self.storage = storage or register  # the type in memory
        self.unsigned = unsigned or register

    def load(self, expr):
        """A value in memory, as a register value."""
        return f"ax_h2f({expr})" if self.dtype == dt.float16 else expr

    def store(self, expr):
        """A register value, as it is stored."""
        return f"ax_f2h({expr})" if self.dtype == dt.float16 else expr


CTYPES = {d: CType(d, *spec) for d, spec in {
    dt.bool: ("bool",),
    dt.int8: ("signed char", None, "unsigned char"),
    dt.int16: ("short", None, "unsigned short"),
    dt.int32: ("int", None, "unsigned int"),
    dt.int64: ("long long", None, "unsigned long long"),
    dt.uint8: ("unsigned char",),
    dt.uint16: ("unsigned short",),
    dt.uint32: ("unsigned int",),
    dt.uint64: ("unsigned long long",),
    dt.float16: ("float", "ax_half"),
    dt.float32: ("float",),
    dt.float64: ("double",),
    dt.complex64: ("ax_c64",),
    dt.complex128: ("ax_c128",),
}.items()}

B, I, U, F, C = "b", "i", "u", "f", "c"
INT = (I, U)
REAL = (I, U, F)


def _all(template, kinds):
    return {k: template for k in kinds}


def _rows(*rows):
    """One entry from (kinds, template) rows."""
    out = {}
    for kinds, template in rows:
        out.update(_all(template, kinds))
    return out


EXPRESSIONS = {
    # unary
    "abs": _rows(((I,), "ax_iabs({0})"), ((U, B), "{0}"), ((F,), "ax_fabs({0})"), ((C,), "hypot({0}.re, {0}.im)")),
    "acos": _all("acos({0})", F),
    "acosh": _all("acosh({0})", F),
    "asin": _all("asin({0})", F),
    "asinh": _all("asinh({0})", F),
    "atan": _all("atan({0})", F),
    "atanh": _all("atanh({0})", F),
    "bitwise_invert": _rows(((B,), "!{0}"), (INT, "({T})~{0}")),
    "ceil": _rows((INT, "{0}"), ((F,), "ceil({0})")),
    "conj": _rows((REAL, "{0}"), ((C,), "ax_cconj({0})")),
    "cos": _all("cos({0})", F),
    "cosh": _all("cosh({0})", F),
    "exp": _all("exp({0})", F),
    "expm1": _all("expm1({0})", F),
    "floor": _rows((INT, "{0}"), ((F,), "floor({0})")),
    "imag": _rows(((C,), "{0}.im"),),
    "isfinite": _rows(((B,) + INT, "true"), ((F,), "isfinite({0})"), ((C,), "(isfinite({0}.re) && isfinite({0}.im))")),
    "isinf": _rows(((B,) + INT, "false"), ((F,), "isinf({0})"), ((C,), "(isinf({0}.re) || isinf({0}.im))")),
    "isnan": _rows(((B,) + INT, "false"), ((F,), "isnan({0})"), ((C,), "(isnan({0}.re) || isnan({0}.im))")),
    "log": _all("log({0})", F),
    "log1p": _all("log1p({0})", F),
    "log2": _all("log2({0})", F),
    "log10": _all("log10({0})", F),
    "logical_not": _all("!{0}", B),
    "negative": _rows((INT, "ax_wrap_neg({0})"), ((F,), "-{0}"), ((C,), "ax_cneg({0})")),
    "real": _rows((REAL, "{0}"), ((C,), "{0}.re")),
    "round": _rows((INT, "{0}"), ((F,), "rint({0})")),
    "sign": _rows(((I,), "ax_isign({0})"), ((U,), "({T})({0} > 0)"), ((F,), "ax_fsign({0})")),
    "signbit": _all("signbit({0})", F),
    "sin": _all("sin({0})", F),
    "sinh": _all("sinh({0})", F),
    "sqrt": _all("sqrt({0})", F),
    "square": _rows((INT, "ax_wrap_mul({0}, {0})"), ((F,), "{0} * {0}"),
                    ((C,), "ax_cmul({0}, {0})")),
    "tan": _all("tan({0})", F),
    "tanh": _all("tanh({0})", F),
    "trunc": _rows((INT, "{0}"), ((F,), "trunc({0})")),
    # binary
    "add": _rows((INT, "ax_wrap_add({0}, {1})"), ((F,), "{0} + {1}"),
                 ((C,), "ax_cadd({0}, {1})")),
    "atan2": _all("atan2({0}, {1})", F),
    "bitwise_and": _rows(((B,), "{0} && {1}"), (INT, "({T})({0} & {1})")),
    "bitwise_left_shift": _all("ax_lshift({0}, {1})", INT),
    "bitwise_or": _rows(((B,), "{0} || {1}"), (INT, "({T})({0} | {1})")),
    "bitwise_right_shift": _all("ax_rshift({0}, {1})", INT),
    "bitwise_xor": _rows(((B,), "{0} != {1}"), (INT, "({T})({0} ^ {1})")),
    "copysign": _all("copysign({0}, {1})", F),
    "divide": _rows(((F,), "{0} / {1}"), ((C,), "ax_cdiv({0}, {1})")),
    "equal": _rows(((B,) + REAL, "{0} == {1}"), ((C,), "ax_ceq({0}, {1})")),
    "floor_divide": _rows((INT, "ax_ifloor_divide({0}, {1})"), ((F,), "ax_ffloor_divide({0}, {1})")),
    "greater": _all("{0} > {1}", REAL),
    "greater_equal": _all("{0} >= {1}", REAL),
    "hypot": _all("hypot({0}, {1})", F),
    "less": _all("{0} < {1}", REAL),
    "less_equal": _all("{0} <= {1}", REAL),
    "logaddexp": _all("ax_logaddexp({0}, {1})", F),
    "logical_and": _all("{0} && {1}", B),
    "logical_or": _all("{0} || {1}", B),
    "logical_xor": _all("{0} != {1}", B),
    "maximum": _rows((INT, "ax_imax({0}, {1})"), ((F,), "ax_fmax({0}, {1})")),
    "minimum": _rows((INT, "ax_imin({0}, {1})"), ((F,), "ax_fmin({0}, {1})")),
    "multiply": _rows((INT, "ax_wrap_mul({0}, {1})"), ((F,), "{0} * {1}"),
                      ((C,), "ax_cmul({0}, {1})")),
    "nextafter": _all("nextafter({0}, {1})", F),
    "not_equal": _rows(((B,) + REAL, "{0} != {1}"), ((C,), "!ax_ceq({0}, {1})")),
    "pow": _rows((INT, "ax_ipow({0}, {1})"), ((F,), "pow({0}, {1})")),
    "remainder": _rows((INT, "ax_iremainder({0}, {1})"), ((F,), "ax_fremainder({0}, {1})")),
    "subtract": _rows((INT, "ax_wrap_sub({0}, {1})"), ((F,), "{0} - {1}"),
                      ((C,), "ax_csub({0}, {1})")),
    # ternary and identity (the kind is that of the last operand)
    "where": _all("{0} ? {1} : {2}", (B, I, U, F, C)),
    "stop_gradient": _all("{0}", (B, I, U, F, C)),
}

# float16 entries that differ: NumPy's float16 maximum and minimum keep the
# first operand between equal values (+0 and -0), its float32/64 loops the second.
HALF_EXPRESSIONS = {
    "maximum": "ax_hmax({0}, {1})",
    "minimum": "ax_hmin({0}, {1})",
}

# Primitives whose float16 result is already a float16 value (a selection, a
# sign change, an integer): no rounding.
EXACT = frozenset({"abs", "ceil", "conj", "floor", "negative", "real", "round", "sign", "trunc",
                   "copysign", "maximum", "minimum", "where", "stop_gradient"})
# float16 nextafter steps in float16's spacing, which float arithmetic cannot:
# it runs on the CPU.
HALF_UNSUPPORTED = frozenset({"nextafter"})


def supports(name, in_dtype):
    """Whether `name` on operands of `in_dtype` has a CUDA expression."""
    if name == "astype":
        return True
    if in_dtype == dt.float16 and name in HALF_UNSUPPORTED:
        return False
    table = EXPRESSIONS.get(name)
    return table is not None and CTYPES[in_dtype].kind in table


def render(name, operands, in_dtype, out_dtype):
    """The C++ expression of primitive `name` on operand expressions (register
    values of dtype `in_dtype`), with a result of dtype `out_dtype`."""
    out = CTYPES[out_dtype]
    if name == "astype":
        return cast(operands[0], in_dtype, out_dtype)
    template = HALF_EXPRESSIONS.get(name) if in_dtype == dt.float16 else None
    template = template or EXPRESSIONS[name][CTYPES[in_dtype].kind]
    expr = template.format(*operands, T=out.register)
    if out_dtype == dt.float16 and name not in EXACT:
        expr = f"ax_round_half({expr})"
    return expr


def cast(expr, source, target):
    """`astype`: a register value of dtype `source` as dtype `target`, as
    NumPy casts (complex to real keeps the real part)."""
    s, t = CTYPES[source], CTYPES[target]
    if source == target:
        return expr
    if t.kind == "b":
        return f"ax_cnonzero({expr})" if s.kind == "c" else f"({expr} != 0)"
    if t.kind == "c":
        real = f"{expr}.re" if s.kind == "c" else expr
        imag = f"{expr}.im" if s.kind == "c" else "0"
        part = "float" if target == dt.complex64 else "double"
        return f"ax_complex<{t.register}>(({part}){real}, ({part}){imag})"
    if s.kind == "c":
        expr, s = f"{expr}.re", CTYPES[dt.real_dtype(source)]
    if t.kind == "f":
        if target == dt.float16:
            # double -> half rounds once, as NumPy does (not via float).
            return f"ax_h2f(ax_d2h({expr}))" if source == dt.float64 else f"ax_round_half((float){expr})"
        return f"({t.register}){expr}"
    if s.kind == "f":
        # Out-of-range and NaN inputs give what NumPy's casts give on x86-64:
        # 64-bit targets and uint32 convert through 64 bits, the rest through 32.
        if target == dt.uint64:
            return f"ax_f2u64({expr})"
        if target in (dt.int64, dt.uint32):
            return f"({t.register})ax_f2i64({expr})"
        return f"({t.register})ax_f2i32({expr})"
    return f"({t.register}){expr}"


def combine(name, dtype, a, b):
    """The C++ expression combining two partial results `a` and `b` (of
    `dtype`) of reduction `name`: its monoid's primitive."""
    return render(PRIMITIVES[name].monoid.op, (a, b), dtype, dtype)


def identity(name, dtype):
    """The C++ value of `dtype` a reduction of `name` over no points gives: its monoid's identity."""
    value = PRIMITIVES[name].monoid.identity
    register = CTYPES[dtype].register
    if isinstance(value, bool):
        return "true" if value else "false"
    if math.isinf(value):
        return f"ax_limits<{register}>::{'lo' if value < 0 else 'hi'}()"
    return f"ax_complex<{register}>({value}, 0)" if dtype.kind == "c" else f"({register}){value}"


def renders(op, in_dtype, dtype, accumulator):
    """Whether an instruction of primitive `op` on operands of `in_dtype`
    (the last operand's), giving `dtype`, has a C form: an elementwise
    primitive the table renders on that dtype, or a block reduction whose
    combining primitive it renders on the dtype the renderer accumulates in
    (`accumulator(name, dtype)`)."""
    if op.kind == "reduce":
        return op.name in BLOCK_REDUCE_OPS and supports(op.monoid.op, accumulator(op.name, dtype))
    return supports(op.name, in_dtype)


def unrendered(group, accumulator):
    """Why fused `group` has no C kernel, or None: an instruction without a
    C form (see `renders`), or a final reduction over other axes than the
    group's row reductions (a kernel that owns whole rows cannot)."""
    dtypes = [d for _, d, _ in group.inputs] + [i.dtype for i in group.body]
    for instruction in group.body:
        source = dtypes[instruction.args[-1]]
        if not renders(instruction.op, source, instruction.dtype, accumulator):
            return f"{instruction.op.name} of {source}"
    root = group.body[-1]
    if group.row_axes and root.op.kind == "reduce" and tuple(root.attrs[0]) != tuple(group.row_axes):
        return "a final reduction over other axes than the row reductions'"
    return None
