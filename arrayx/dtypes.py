"""Data types, their categories, and the one promotion table.

An arrayx dtype is a DType: equal only to itself. NumPy's dtypes also compare
equal to strings and to None (`np.dtype("float64") == None` is True), which
turns `dtype == None` checks in user code into silent bugs. Each DType carries
its NumPy dtype as `.dtype`, so NumPy accepts a DType wherever it takes a dtype.

Promotion follows the array API standard's table. Where the standard leaves a
combination unspecified, arrayx follows JAX's lattice (docs/semantics.md):
bool promotes to any numeric type, an integer meeting a floating type gives that
floating type, int64/uint64 meet at float64.

float16 is an extension (NumPy, CuPy, PyTorch and JAX have it; neon computes in
it). It is a real floating dtype, below float32 in the lattice (float16 with
complex64 gives complex64, as in NumPy), and `isdtype` counts it as
'real floating', as the standard allows for extension dtypes. The inspection
API's `dtypes()` does not list it: the standard says only its own dtypes may
appear there.
"""

import numpy as np

_PyBool = bool  # the module rebinds `bool` to the dtype below

# The Python scalar types an array function takes beside arrays, in the
# standard's kind order.
PYTHON_SCALARS = (bool, int, float, complex)


class DType:
    """An array API data type (one instance per type, compared by identity)."""

    __slots__ = ("name", "dtype", "kind", "itemsize", "type")

    def __init__(self, name):
        self.name = name
        self.dtype = np.dtype(name)
        self.kind = self.dtype.kind
        self.itemsize = self.dtype.itemsize
        self.type = self.dtype.type

    def __repr__(self):
        return f"arrayx.{self.name}"

    def __str__(self):
        return self.name

    def __reduce__(self):
        return _by_name, (self.name,)


def _by_name(name):
    return BY_NAME[name]


bool = DType("bool")
int8 = DType("int8")
int16 = DType("int16")
int32 = DType("int32")
int64 = DType("int64")
uint8 = DType("uint8")
uint16 = DType("uint16")
uint32 = DType("uint32")
uint64 = DType("uint64")
float16 = DType("float16")
float32 = DType("float32")
float64 = DType("float64")
complex64 = DType("complex64")
complex128 = DType("complex128")

SIGNED = (int8, int16, int32, int64)
UNSIGNED = (uint8, uint16, uint32, uint64)
INTEGER = SIGNED + UNSIGNED
REAL_FLOATING = (float16, float32, float64)
COMPLEX = (complex64, complex128)
FLOATING = REAL_FLOATING + COMPLEX
NUMERIC = INTEGER + FLOATING
ALL = (bool,) + NUMERIC
EXTENSIONS = (float16,)
STANDARD = tuple(d for d in ALL if d not in EXTENSIONS)
BY_NAME = {d.name: d for d in ALL}
FROM_NUMPY = {d.dtype: d for d in ALL}


def from_numpy(np_dtype):
    """The DType of a NumPy dtype (native byte order), or None if arrayx has none."""
    return FROM_NUMPY.get(np_dtype)

DEFAULT_INT = int64
DEFAULT_INDEX = int64
DEFAULT_FLOAT = float64
DEFAULT_COMPLEX = complex128

# The standard's dtype categories, by the names `isdtype` accepts. Function
# signatures in the primitive table use the same names.
CATEGORIES = {
    "bool": frozenset((bool,)),
    "signed integer": frozenset(SIGNED),
    "unsigned integer": frozenset(UNSIGNED),
    "integral": frozenset(INTEGER),
    "real floating": frozenset(REAL_FLOATING),
    "complex floating": frozenset(COMPLEX),
    "numeric": frozenset(NUMERIC),
    # Shorthands used by the primitive table, not by `isdtype`.
    "floating": frozenset(FLOATING),
    "real numeric": frozenset(INTEGER + REAL_FLOATING),
    "integer or bool": frozenset(INTEGER + (bool,)),
    # LAPACK (NumPy's linalg) has no float16 routines.
    "lapack floating": frozenset(FLOATING) - frozenset(EXTENSIONS),
    "any": frozenset(ALL),
}
ISDTYPE_KINDS = ("bool", "signed integer", "unsigned integer", "integral",
                 "real floating", "complex floating", "numeric")

# The complex dtype of a precision: float16 has no complex counterpart, so it gets
# complex64 (as NumPy's FFT and float16 + 1j do).
COMPLEX_OF = {float16: complex64, float32: complex64, float64: complex128,
              complex64: complex64, complex128: complex128}
REAL_OF = {complex64: float32, complex128: float64}


# Computations that would round at every step run in a wider dtype for these
# and round once: reductions that accumulate (sum, prod, the cumulative ones,
# mean, var, std, trace, the norms) and index sequences (arange, linspace).
# float16 has an 11-bit significand: a running sum of ones stops at 2048, and so
# does an index. JAX and PyTorch accumulate float16 in float32 too; NumPy does
# for mean, for sum only within one contiguous inner loop, not for cumsum or var.
ACCUMULATOR = {float16: float32}


def accumulator(dtype):
    """The dtype computations on `dtype` values accumulate in."""
    return ACCUMULATOR.get(dtype, dtype)


def real_dtype(dtype):
    """The real dtype of a complex dtype; other dtypes map to themselves."""
    return REAL_OF.get(dtype, dtype)


# Functions the standard defines on floating dtypes only (sin, sqrt, atan2,
# divide, mean, var, std) compute integer and bool arguments in the default
# floating dtype, as NumPy does for int32 and int64 and JAX and PyTorch do
# for every integer (NumPy gives float16 for int8 and bool, float32 for
# int16): xp.sin(int array) and xp.mean(int array) are float64.
FLOATING_CATEGORIES = frozenset(("floating", "real floating"))
COMPUTED_AS_FLOATING = frozenset(INTEGER + (bool,))


REAL_FLOATING_OF_SIZE = {d.itemsize: d for d in REAL_FLOATING}


def _kind_rank(d):
    if d == bool:
        return 0, 0
    if d in SIGNED or d in UNSIGNED:
        return 1, d.itemsize
    if d in REAL_FLOATING:
        return 2, d.itemsize
    return 3, d.itemsize // 2


def _promote_pair(a, b):
    if a == b:
        return a
    ka, sa = _kind_rank(a)
    kb, sb = _kind_rank(b)
    if ka == 0:
        return b
    if kb == 0:
        return a
    if ka == 1 and kb == 1:
        if (a in SIGNED) == (b in SIGNED):
            return a if sa >= sb else b
        signed, unsigned = (a, b) if a in SIGNED else (b, a)
        if signed.itemsize > unsigned.itemsize:
            return signed
        if unsigned.itemsize == 8:
            return float64
        return BY_NAME[f"int{unsigned.itemsize * 16}"]
    if ka == 1:
        return b
    if kb == 1:
        return a
    size = max(sa, sb)
    if max(ka, kb) == 3:
        return complex64 if size == 4 else complex128
    return REAL_FLOATING_OF_SIZE[size]


PROMOTION = {(a, b): _promote_pair(a, b) for a in ALL for b in ALL}


def scalar_dtype(value, dtype):
    """Dtype a Python scalar takes when it meets an array of `dtype`.

    The standard: the scalar adopts the array's dtype when its kind fits
    (bool with bool, int with integer/floating, float with floating, complex
    with complex). Beyond it, the scalar's default dtype is used (int → int64,
    float → float64, complex → complex of the array's precision), as in JAX.
    """
    kind = type(value)
    if kind is float:
        if dtype in CATEGORIES["floating"]:
            return dtype
        return DEFAULT_FLOAT
    if kind is int:
        if dtype == bool:
            return DEFAULT_INT
        return dtype
    if kind is complex:
        if dtype in COMPLEX_OF:
            return COMPLEX_OF[dtype]
        return DEFAULT_COMPLEX
    if kind is _PyBool:
        return dtype
    raise TypeError(f"expected a Python scalar, got {kind.__name__}")


def default_scalar_dtype(value):
    """The dtype a Python scalar gets on its own (asarray(3.0) is float64)."""
    kind = type(value)
    if kind is _PyBool:
        return bool
    if kind is int:
        return DEFAULT_INT
    if kind is float:
        return DEFAULT_FLOAT
    if kind is complex:
        return DEFAULT_COMPLEX
    raise TypeError(f"expected a Python scalar, got {kind.__name__}")


INT_BOUNDS = {d: (int(np.iinfo(d.dtype).min), int(np.iinfo(d.dtype).max)) for d in INTEGER}

# Dtypes a Python float is stored in as `x[key] = value` stores it, by the
# executor's own element write (float16 goes through setitem, which rounds
# values beyond its range to inf).
FLOATS_STORED_DIRECTLY = frozenset({float32, float64})
# Python ints each of those dtypes holds exactly (float32's 24-bit significand).
_EXACT_INTS = (-(1 << 24), 1 << 24)


def stored_directly(value, dtype):
    """Whether the Python scalar `value` is one that `x[key] = value` accepts
    for an array of `dtype` and an executor's element write stores as arrayx
    would (see FLOATS_STORED_DIRECTLY)."""
    kind = type(value)
    if kind is int:
        bounds = INT_BOUNDS.get(dtype) or (_EXACT_INTS if dtype in FLOATS_STORED_DIRECTLY else None)
        return bounds is not None and bounds[0] <= value <= bounds[1]
    return (kind is float and dtype in FLOATS_STORED_DIRECTLY) or (kind is _PyBool and dtype is bool)
