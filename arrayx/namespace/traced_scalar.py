"""A Python scalar argument of a function `arrayx.jit` traces.

A jitted function called with `lr=0.1` is traced once for every float, not
once per value: `lr` is a TracedScalar, a stand-in for the value the
compiled computation receives at each call. It acts as a Python scalar does
in arrayx: beside an array it takes the dtype the standard gives a Python
scalar of its kind (`x_float32 * lr` stays float32), in the node of a
placeholder of that dtype (`node_as`), which jit binds at a call to the
value converted as eagerly (an int out of range for the array's dtype is
the same OverflowError). Arithmetic between traced and Python scalars
(`lr * 0.5`) follows Python's kinds, computed in the kind's default dtype
(float64, int64, complex128). Whatever needs the value itself (`float(lr)`,
`range(n)`, `if lr > 0:`, an index, a shape) is a TypeError naming the
jitted function and the argument, which must then be static.

The namespace accepts a TracedScalar wherever it takes a Python scalar
operand: binary functions and operators, `where`, `x[key] = s` and
`asarray(s)`.
"""

import numpy as np

from .. import dtypes as dt
from .build import P, astype_node, make, scalar_node

# A value of each kind, for the dtype rules that take a Python scalar.
_SAMPLE = {bool: False, int: 0, float: 0.0, complex: 0j}
_RANK = {bool: 0, int: 1, float: 2, complex: 3}
_BY_RANK = (bool, int, float, complex)
# NumPy scalars whose arithmetic is that of their Python scalar, in NumPy's
# type (np.float64(2) * 2 is np.float64(4.0)); np.bool_'s is logical.
DEFAULT_NUMPY_DTYPES = frozenset(np.dtype(t) for t in (np.int64, np.float64, np.complex128))


def _arithmetic_kind(k1, k2):
    """The kind of `k1 op k2` for + - * // % in Python: bools act as ints."""
    return _BY_RANK[max(_RANK[k1], _RANK[k2], 1)]


# operator -> (primitive, the result kind from the operands' kinds)
_BINARY = {
    "+": ("add", _arithmetic_kind),
    "-": ("subtract", _arithmetic_kind),
    "*": ("multiply", _arithmetic_kind),
    "/": ("divide", lambda k1, k2: _BY_RANK[max(_RANK[k1], _RANK[k2], 2)]),
    "//": ("floor_divide", _arithmetic_kind),
    "%": ("remainder", _arithmetic_kind),
    "**": ("pow", _arithmetic_kind),
    "&": ("bitwise_and", lambda k1, k2: bool if k1 is k2 is bool else int),
    "|": ("bitwise_or", lambda k1, k2: bool if k1 is k2 is bool else int),
    "^": ("bitwise_xor", lambda k1, k2: bool if k1 is k2 is bool else int),
}
_COMPARISONS = {"==": "equal", "!=": "not_equal", "<": "less", "<=": "less_equal", ">": "greater",
                ">=": "greater_equal"}


class TracedScalar:
    """A Python scalar (bool, int, float or complex, by `kind`) inside the
    trace of jitted function `where` ("jit(step)"), standing for `argument`
    ("argument lr") or computed from it: see the module. `alone` is the
    dtype of asarray(s) (a NumPy scalar's own dtype, else the kind's
    default); `make_node(dtype)` gives its node as `dtype`; `subject` names
    it in errors; `numpy` says whether it is a NumPy scalar (or computed
    from one), which a jitted function returns as such."""

    __slots__ = ("kind", "where", "argument", "subject", "alone", "numpy", "_make", "_nodes", "_exact")
    # NumPy scalars defer to the reflected operators (np.float64(2) * s).
    __array_ufunc__ = None

    def __init__(self, kind, where, argument, make_node, alone=None, exact=True, subject=None, numpy=False):
        self.kind = kind
        self.numpy = numpy
        self.where = where
        self.argument = argument
        self.subject = subject or f"{argument} (a Python {kind.__name__})"
        self.alone = alone or dt.default_scalar_dtype(_SAMPLE[kind])
        self._make = make_node
        self._nodes = {}
        # Whether Python arithmetic on it is arithmetic in its kind's default
        # dtype (not for a NumPy float32 scalar, whose arithmetic NumPy does in float32).
        self._exact = exact

    def node_as(self, dtype):
        """The scalar's node as `dtype`."""
        node = self._nodes.get(dtype)
        if node is None:
            node = self._nodes[dtype] = self._make(dtype)
        return node

    def node_beside(self, node):
        """Its node beside an operand `node`: in the dtype a Python scalar of
        its kind takes there (dtypes.scalar_dtype)."""
        return self.node_as(dt.scalar_dtype(_SAMPLE[self.kind], node.dtype))

    def _refuse(self, what):
        raise TypeError(f"{self.where}: {self.subject} is traced as a value, not a number the trace knows, so it "
                        f"cannot be {what}; list {self.argument.removeprefix('argument ')} in static_argnums or "
                        f"static_argnames (each value is then traced once), or pass an array")

    def __bool__(self):
        self._refuse("a condition (if, while, and, or, not, bool())")

    def __int__(self):
        self._refuse("converted by int()")

    def __float__(self):
        self._refuse("converted by float()")

    def __complex__(self):
        self._refuse("converted by complex()")

    def __index__(self):
        self._refuse("an index, a shape, a count or an axis (range(), x[i], zeros(n))")

    def __array__(self, dtype=None, copy=None):
        self._refuse("converted by NumPy")

    def __hash__(self):
        self._refuse("hashed (a dict key, a set member)")

    def __repr__(self):
        return f"<{self.where}: {self.subject}, traced>"

    @staticmethod
    def _operand(other):
        """(kind, value, exact, numpy) of the other operand of Python
        arithmetic (see `_exact` and `numpy`), or None for one that is no scalar."""
        if isinstance(other, TracedScalar):
            return other.kind, other, other._exact, other.numpy
        if isinstance(other, np.generic):
            return type(other.item()), other.item(), other.dtype in DEFAULT_NUMPY_DTYPES, True
        if type(other) in _SAMPLE:
            return type(other), other, True, False
        return None

    def _binary(self, op, other, reflected):
        found = self._operand(other)
        if found is None:
            return NotImplemented   # an array: its reflected operator takes the scalar (namespace.operators)
        kind, value, exact, numpy = found
        k1, k2 = (kind, self.kind) if reflected else (self.kind, kind)
        if not (self._exact and exact):
            self._refuse(f"used in arithmetic ({op}): NumPy computes a NumPy scalar's arithmetic in its own "
                         f"dtype, which the trace does not follow")
        if op in _COMPARISONS:
            if complex in (k1, k2) and op not in ("==", "!="):
                raise TypeError(f"{self.where}: '{op}' is not supported between complex numbers")
            name, result = _COMPARISONS[op], bool
            compute = _BY_RANK[max(_RANK[k1], _RANK[k2], 0 if op in ("==", "!=") else 1)]
        else:
            name, rule = _BINARY[op]
            if complex in (k1, k2) and op in ("//", "%"):
                raise TypeError(f"{self.where}: '{op}' is not supported for complex numbers")
            if op in ("&", "|", "^") and (float in (k1, k2) or complex in (k1, k2)):
                raise TypeError(f"{self.where}: '{op}' needs bool or int operands")
            if op == "**" and not (not reflected and type(value) is int and (value >= 0 or k1 is not int)):
                self._refuse(f"raised to a power or used as an exponent other than a Python int (a negative "
                             f"int power of an int is a float in Python, a value the trace does not know)")
            result = rule(k1, k2)
            compute = result
        dtype = dt.default_scalar_dtype(_SAMPLE[compute])
        mine = self.node_as(dtype)
        theirs = (value.node_as(dtype) if isinstance(value, TracedScalar)
                  else scalar_node(value, dtype, mine.device, self.where))
        return self._derived(result, make(P[name], (theirs, mine) if reflected else (mine, theirs)),
                             self.numpy or numpy)

    def _unary(self, name, result):
        dtype = dt.default_scalar_dtype(_SAMPLE[result])
        return self._derived(result, make(P[name], (self.node_as(dtype),)))

    def _derived(self, kind, node, numpy=None):
        """The traced scalar of `kind` computed by `node` (in the kind's default dtype)."""
        return TracedScalar(kind, self.where, self.argument, lambda dtype: astype_node(node, dtype),
                            subject=f"a Python {kind.__name__} computed from {self.argument}",
                            numpy=self.numpy if numpy is None else numpy)

    def __neg__(self):
        return self._unary("negative", _arithmetic_kind(self.kind, int))

    def __pos__(self):
        kind = _arithmetic_kind(self.kind, int)   # +True is 1
        return self._derived(kind, self.node_as(dt.default_scalar_dtype(_SAMPLE[kind])))

    def __abs__(self):
        return self._unary("abs", float if self.kind is complex else _arithmetic_kind(self.kind, int))


def _install():
    names = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv", "%": "mod", "**": "pow",
             "&": "and", "|": "or", "^": "xor"}
    for op, stem in names.items():
        setattr(TracedScalar, f"__{stem}__", lambda self, other, op=op: self._binary(op, other, False))
        setattr(TracedScalar, f"__r{stem}__", lambda self, other, op=op: self._binary(op, other, True))
    comparisons = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
    for op, stem in comparisons.items():
        setattr(TracedScalar, f"__{stem}__", lambda self, other, op=op: self._binary(op, other, False))


_install()
