"""Element-wise functions of the array API standard.

Most are one primitive each (see graph/primitives.py for the dtype category
each accepts); `positive`, `reciprocal` and `clip` are composites. Binary
functions accept Python scalars for either operand (not both), which take the
array's dtype where the standard says so. Functions of a floating category
(`sin`, `sqrt`, `atan2`, `divide`, ...) compute integer and bool arrays in the
default floating dtype (build.floating_argument), as NumPy and JAX do.
"""

import numpy as np

from .. import dtypes as dt
from ..dtypes import PYTHON_SCALARS
from ..graph.apply import apply
from .array_object import Array
from .build import (P, astype_node, broadcast_shapes, composite, floating_argument, make, not_an_array, scalar_beside,
                    scalar_node, wrap)
from .hints import Operand
from .traced_scalar import TracedScalar


def _type_error(name, argname, x):
    return not_an_array(name, argname, x, "an arrayx array or a Python scalar")


def _python_scalar(x):
    """NumPy scalars (np.float64(2), results of np.mean) and 0-d NumPy arrays act as Python scalars."""
    if isinstance(x, np.generic) or (isinstance(x, np.ndarray) and x.ndim == 0):
        return x.item() if x.dtype.kind in "biufc" else x
    return x


def binary_nodes(name, x1, x2):
    """The input nodes of a binary function, promoted to one dtype.

    Python scalars (and NumPy scalars, taken as Python scalars) take the
    array's dtype where the standard says so.
    """
    # Exact types first, no helper calls: loop bodies record binary operations by the thousand.
    if x1.__class__ is Array:
        n1 = x1._node
        if x2.__class__ is Array:
            n2 = x2._node
            if n1.device is not n2.device and n1.device != n2.device:
                raise ValueError(f"{name}: operands are on different devices ({n1.device} and {n2.device})")
        elif x2.__class__ in PYTHON_SCALARS:
            n2 = scalar_beside(x2, n1, name)
        else:
            n2 = _scalar_beside(name, "x2", x2, n1)
    elif x2.__class__ is Array:
        n2 = x2._node
        if x1.__class__ in PYTHON_SCALARS:
            n1 = scalar_beside(x1, n2, name)
        else:
            n1 = _scalar_beside(name, "x1", x1, n2)
    else:
        raise TypeError(f"{name}: at least one operand must be an arrayx array, "
                        f"got {type(x1).__name__} and {type(x2).__name__}")
    d1 = n1.dtype
    d2 = n2.dtype
    if d1 is not d2:
        d = dt.PROMOTION[d1, d2]
        n1 = astype_node(n1, d)
        n2 = astype_node(n2, d)
    return n1, n2


def _scalar_beside(name, argname, x, node):
    """The node of the scalar operand `x`, not a Python scalar, of a binary
    function whose other operand is `node`: a NumPy scalar acts as its
    Python scalar, and so does a Python scalar argument jit traces;
    anything else is a TypeError."""
    if isinstance(x, TracedScalar):
        return x.node_beside(node)
    x = _python_scalar(x)
    if type(x) not in PYTHON_SCALARS:
        raise _type_error(name, argname, x)
    return scalar_beside(x, node, name)


def _binary_apply(prim, name, x1, x2):
    inputs = binary_nodes(name, x1, x2)
    if inputs[0].dtype not in prim.accepts:
        n1, n2 = inputs
        inputs = floating_argument(n1, prim.category), floating_argument(n2, prim.category)
        # graph.apply would check the promoted operands; the message names the user's.
        if inputs[0].dtype not in prim.accepts:
            raise TypeError(f"{name}: operands have dtypes {_dtype_of(x1)} and {_dtype_of(x2)}; "
                            f"expected {prim.category} dtypes")
    return wrap(apply(prim, inputs, (), name))


def _dtype_of(x):
    return x.dtype if isinstance(x, Array) else type(x).__name__


def _unary_node(prim, name, x):
    if not isinstance(x, Array):
        raise not_an_array(name, "x", x)
    node = x._node
    if node.dtype not in prim.accepts:   # refused by apply, unless the function computes it as floating
        node = floating_argument(node, prim.category)
    return apply(prim, (node,), (), name)


def _documented(fn, name, doc, prim, operands):
    """`fn` named `name`, with the standard's summary `doc` and its
    Parameters/Returns/Raises sections (`operands`: its parameter names)."""
    accepted = "any data type" if prim.category in (None, "any") else f"a {prim.category} data type"
    if prim.category in dt.FLOATING_CATEGORIES:
        accepted += "; an integer or bool array is computed in the default floating dtype"
    kind = "an arrayx array" if len(operands) == 1 else "an arrayx array or a Python scalar (not both)"
    parameters = "".join(f"""
    {x} : Array{'' if len(operands) == 1 else ' | bool | int | float | complex'}
        Input array; should have {accepted}.""" for x in operands)
    binary_raises = "" if len(operands) == 1 else """
    ValueError
        Shapes that do not broadcast, or operands on different devices."""
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"""{doc}

    Parameters
    ----------{parameters}

    Returns
    -------
    out : Array
        The element-wise results.

    Raises
    ------
    TypeError
        An operand that is not {kind}, or whose dtype is outside the category.{binary_raises}
    """
    return fn


def _unary(name, doc):
    prim = P[name]

    def fn(x: Array, /) -> Array:
        return wrap(_unary_node(prim, name, x))
    return _documented(fn, name, doc, prim, ["x"])


def _binary(name, doc):
    prim = P[name]

    def fn(x1: Operand, x2: Operand, /) -> Array:
        return _binary_apply(prim, name, x1, x2)
    return _documented(fn, name, doc, prim, ["x1", "x2"])


def _integer_identity(name, doc):
    """Rounding functions: an integer input is already integer-valued."""
    prim = P[name]

    def fn(x: Array, /) -> Array:
        if isinstance(x, Array) and x.dtype in dt.CATEGORIES["integer or bool"] and x.dtype != dt.bool:
            return Array._new(x._node)
        return wrap(_unary_node(prim, name, x))
    return _documented(fn, name, doc, prim, ["x"])


abs = _unary("abs", "Calculates the absolute value for each element x_i of the input array x.")
acos = _unary("acos", "Calculates the principal value of the inverse cosine for each element x_i of x.")
acosh = _unary("acosh", "Calculates the inverse hyperbolic cosine for each element x_i of x.")
asin = _unary("asin", "Calculates the principal value of the inverse sine for each element x_i of x.")
asinh = _unary("asinh", "Calculates the inverse hyperbolic sine for each element x_i of x.")
atan = _unary("atan", "Calculates the principal value of the inverse tangent for each element x_i of x.")
atanh = _unary("atanh", "Calculates the inverse hyperbolic tangent for each element x_i of x.")
bitwise_invert = _unary("bitwise_invert", "Inverts (flips) each bit for each element x_i of x.")
ceil = _integer_identity("ceil", "Rounds each element x_i of x to the smallest integer-valued number not less than x_i.")
conj = _unary("conj", "Returns the complex conjugate for each element x_i of x.")
cos = _unary("cos", "Calculates the cosine for each element x_i of x.")
cosh = _unary("cosh", "Calculates the hyperbolic cosine for each element x_i of x.")
exp = _unary("exp", "Calculates the exponential function for each element x_i of x (e raised to x_i).")
expm1 = _unary("expm1", "Calculates exp(x_i) - 1 for each element x_i of x, accurately for small x_i.")
floor = _integer_identity("floor", "Rounds each element x_i of x to the greatest integer-valued number not greater than x_i.")
imag = _unary("imag", "Returns the imaginary component of each element x_i of a complex array x.")
isfinite = _unary("isfinite", "Tests each element x_i of x to determine if it is finite.")
isinf = _unary("isinf", "Tests each element x_i of x to determine if it is equal to positive or negative infinity.")
isnan = _unary("isnan", "Tests each element x_i of x to determine whether it is NaN.")
log = _unary("log", "Calculates the natural (base e) logarithm for each element x_i of x.")
log1p = _unary("log1p", "Calculates log(1 + x_i) for each element x_i of x, accurately for small x_i.")
log2 = _unary("log2", "Calculates the base 2 logarithm for each element x_i of x.")
log10 = _unary("log10", "Calculates the base 10 logarithm for each element x_i of x.")
logical_not = _unary("logical_not", "Computes the logical NOT for each element x_i of a boolean array x.")
negative = _unary("negative", "Computes the numerical negative of each element x_i of x.")
real = _unary("real", "Returns the real component of each element x_i of x.")
round = _integer_identity("round", "Rounds each element x_i of x to the nearest integer-valued number (halves to even).")
sign = _unary("sign", "Returns an indication of the sign of each element x_i of x (x_i / |x_i| for complex).")
signbit = _unary("signbit", "Determines whether the sign bit is set for each element x_i of x.")
sin = _unary("sin", "Calculates the sine for each element x_i of x.")
sinh = _unary("sinh", "Calculates the hyperbolic sine for each element x_i of x.")
sqrt = _unary("sqrt", "Calculates the principal square root for each element x_i of x.")
square = _unary("square", "Squares each element x_i of x.")
tan = _unary("tan", "Calculates the tangent for each element x_i of x.")
tanh = _unary("tanh", "Calculates the hyperbolic tangent for each element x_i of x.")
trunc = _integer_identity("trunc", "Rounds each element x_i of x to the nearest integer-valued number closer to zero.")

add = _binary("add", "Calculates the sum for each element x1_i of x1 with the respective element x2_i of x2.")
atan2 = _binary("atan2", "Calculates the inverse tangent of the quotient x1/x2, with the quadrant from the signs of x1_i and x2_i.")
bitwise_and = _binary("bitwise_and", "Computes the bitwise AND of x1_i and x2_i.")
bitwise_left_shift = _binary("bitwise_left_shift", "Shifts the bits of x1_i to the left by x2_i positions.")
bitwise_or = _binary("bitwise_or", "Computes the bitwise OR of x1_i and x2_i.")
bitwise_right_shift = _binary("bitwise_right_shift", "Shifts the bits of x1_i to the right by x2_i positions.")
bitwise_xor = _binary("bitwise_xor", "Computes the bitwise XOR of x1_i and x2_i.")
copysign = _binary("copysign", "Composes a value with the magnitude of x1_i and the sign of x2_i.")
equal = _binary("equal", "Computes the truth value of x1_i == x2_i.")
floor_divide = _binary("floor_divide", "Rounds the result of dividing x1_i by x2_i to the greatest integer-valued number not greater than it.")
greater = _binary("greater", "Computes the truth value of x1_i > x2_i.")
greater_equal = _binary("greater_equal", "Computes the truth value of x1_i >= x2_i.")
hypot = _binary("hypot", "Computes the square root of the sum of squares of x1_i and x2_i, avoiding underflow and overflow.")
less = _binary("less", "Computes the truth value of x1_i < x2_i.")
less_equal = _binary("less_equal", "Computes the truth value of x1_i <= x2_i.")
logaddexp = _binary("logaddexp", "Calculates log(exp(x1_i) + exp(x2_i)) without overflow.")
logical_and = _binary("logical_and", "Computes the logical AND of boolean x1_i and x2_i.")
logical_or = _binary("logical_or", "Computes the logical OR of boolean x1_i and x2_i.")
logical_xor = _binary("logical_xor", "Computes the logical XOR of boolean x1_i and x2_i.")
maximum = _binary("maximum", "Computes the maximum of x1_i and x2_i (NaN if either is NaN).")
minimum = _binary("minimum", "Computes the minimum of x1_i and x2_i (NaN if either is NaN).")
multiply = _binary("multiply", "Calculates the product of x1_i and x2_i.")
nextafter = _binary("nextafter", "Returns the next representable floating-point value after x1_i in the direction of x2_i.")
not_equal = _binary("not_equal", "Computes the truth value of x1_i != x2_i.")
remainder = _binary("remainder", "Returns the remainder of division x1_i / x2_i, with the sign of x2_i.")
subtract = _binary("subtract", "Calculates the difference x1_i - x2_i.")

_POW, _MULTIPLY = P["pow"], P["multiply"]
# The array dtypes whose `x ** 2` keeps the array's dtype, by the scalar's type
# (a Python float with an integer array gives a floating result).
_SQUARED = {int: dt.CATEGORIES["real numeric"], float: dt.CATEGORIES["real floating"]}


def pow(x1: Operand, x2: Operand, /) -> Array:
    squared = _SQUARED.get(type(x2))
    if squared is not None and x2 == 2 and isinstance(x1, Array) and x1.dtype in squared:
        # x ** 2 is x * x, as NumPy's `**` makes it (a square): the same value
        # (one rounding of the exact square), at a multiply's cost, half a pow's.
        return wrap(apply(_MULTIPLY, (x1._node, x1._node), (), "pow"))
    return _binary_apply(_POW, "pow", x1, x2)


pow = _documented(pow, "pow", "Calculates x1_i raised to the power x2_i.", _POW, ["x1", "x2"])


_DIVIDE = P["divide"]


def divide(x1: Operand, x2: Operand, /) -> Array:
    """Calculates the division of each element x1_i of x1 by the respective element x2_i of x2.

    Parameters
    ----------
    x1 : Array | bool | int | float | complex
        Dividend input array; should have a numeric data type.
    x2 : Array | bool | int | float | complex
        Divisor input array; should have a numeric data type.

    Returns
    -------
    out : Array
        The element-wise results, of a floating-point dtype: integer and bool
        operands are divided in the default floating-point dtype.

    Raises
    ------
    TypeError
        An operand that is not an arrayx array or a Python scalar (not both).
    ValueError
        Shapes that do not broadcast, or operands on different devices.
    """
    return _binary_apply(_DIVIDE, "divide", x1, x2)


def positive(x: Array, /) -> Array:
    """Computes the numerical positive of each element x_i of the input array x.

    Parameters
    ----------
    x : Array
        Input array; should have a numeric data type.

    Returns
    -------
    out : Array
        The element-wise results (a new array with the values of x).

    Raises
    ------
    TypeError
        x not an arrayx array, or of a non-numeric dtype.
    """
    if not isinstance(x, Array):
        raise not_an_array("positive", "x", x)
    if x.dtype not in dt.CATEGORIES["numeric"]:
        raise TypeError(f"positive: x has dtype {x.dtype}; expected a numeric dtype")
    return Array._new(x._node)


@composite
def reciprocal(x: Array, /) -> Array:
    """Returns the reciprocal 1 / x_i for each element x_i of the input array x.

    Parameters
    ----------
    x : Array
        Input array; should have a floating-point data type; an integer or
        bool array is computed in the default floating dtype.

    Returns
    -------
    out : Array
        The element-wise results.

    Raises
    ------
    TypeError
        x not an arrayx array.
    """
    if not isinstance(x, Array):
        raise not_an_array("reciprocal", "x", x)
    return _binary_apply(_DIVIDE, "reciprocal", 1.0, x)   # 1.0 beside an integer or bool array is float64


def _clip_bound(x, bound, argname):
    node = x._node
    if isinstance(bound, Array):
        if bound.device != x.device:
            raise ValueError(f"clip: {argname} is on {bound.device}, x on {x.device}")
        if (bound.dtype in dt.INTEGER) != (node.dtype in dt.INTEGER) or bound.dtype == dt.bool:
            raise TypeError(f"clip: {argname} has dtype {bound.dtype}, which does not match x's {node.dtype}")
        return astype_node(bound._node, node.dtype)
    if type(bound) not in (int, float):
        raise TypeError(f"clip: {argname} must be None, a Python int/float or an array, got {type(bound).__name__}")
    if node.dtype in dt.INTEGER:
        if type(bound) is float:
            raise TypeError(f"clip: {argname} is a float but x has integer dtype {node.dtype}")
        lo, hi = dt.INT_BOUNDS[node.dtype]
        bound = min(max(bound, lo), hi)  # values of x lie within its dtype's range anyway
    return scalar_node(bound, node.dtype, node.device, "clip")


@composite
def clip(x: Array, /, min: int | float | Array | None = None, max: int | float | Array | None = None) -> Array:
    """Clamps each element x_i of the input array x to the range [min, max].

    Parameters
    ----------
    x : Array
        Input array; should have a real-valued data type.
    min : int | float | Array | None
        Lower bound, cast to x's dtype: a Python int or float (an int for
        integer x), or an array of x's kind that broadcasts against x; None: no
        lower bound. Default: None.
    max : int | float | Array | None
        Upper bound, as min. Default: None.

    Returns
    -------
    out : Array
        The element-wise results (NaN where x_i, min or max is NaN), of x's
        dtype and the broadcast shape of x, min and max.

    Raises
    ------
    TypeError
        x not an arrayx array or not real-valued, or a bound of another type or
        kind (a float bound for integer x).
    ValueError
        Shapes that do not broadcast, or a bound on another device.
    """
    if not isinstance(x, Array):
        raise not_an_array("clip", "x", x)
    if x.dtype not in dt.CATEGORIES["real numeric"]:
        raise TypeError(f"clip: x has dtype {x.dtype}; expected a real numeric dtype")
    node = x._node
    bounds = [(P["maximum"], _clip_bound(x, min, "min")) if min is not None else None,
              (P["minimum"], _clip_bound(x, max, "max")) if max is not None else None]
    bounds = [b for b in bounds if b is not None]
    broadcast_shapes("clip", node.shape, *(b.shape for _, b in bounds))
    for prim, bound in bounds:
        node = make(prim, (node, bound))
    return wrap(node) if node is not x._node else Array._new(node)


def where(condition: Array, x1: Operand, x2: Operand, /) -> Array:
    """Returns elements chosen from x1 or x2 depending on condition.

    Parameters
    ----------
    condition : Array
        Boolean array: where True, yield x1_i; otherwise, yield x2_i.
    x1 : Array | bool | int | float | complex
        First input array.
    x2 : Array | bool | int | float | complex
        Second input array; at most one of x1 and x2 may be a Python scalar.

    Returns
    -------
    out : Array
        The chosen elements, of the broadcast shape of the three operands and
        the dtype x1 and x2 promote to.

    Raises
    ------
    TypeError
        condition not a boolean arrayx array, or x1 and x2 not arrayx arrays or
        Python scalars (not both scalars).
    ValueError
        Shapes that do not broadcast, or operands on different devices.
    """
    if not isinstance(condition, Array):
        raise not_an_array("where", "condition", condition)
    if condition.dtype != dt.bool:
        raise TypeError(f"where: condition has dtype {condition.dtype}; expected bool")
    n1, n2 = binary_nodes("where", x1, x2)
    cond = condition._node
    if cond.device != n1.device:
        raise ValueError(f"where: condition is on {cond.device}, the operands on {n1.device}")
    return wrap(make(P["where"], (cond, n1, n2)))
