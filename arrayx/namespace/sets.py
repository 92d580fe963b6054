"""Set functions of the array API standard.

The unique_* functions have data-dependent shapes: each is a force point that
evaluates x and returns realized arrays. Their values come sorted in ascending
order, NaNs last (the standard leaves the order open; clients such as label
encoders rely on it), with indices, inverse_indices and counts in that order. isin is one primitive over operands
promoted to a common dtype, so it agrees with `equal`.
"""

from collections import namedtuple

from .build import P, dynamic, make, node_of, wrap
from .elementwise import binary_nodes
from .hints import Array, Scalar

UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])
for _cls in (UniqueAllResult, UniqueCountsResult, UniqueInverseResult):
    _cls.__module__ = "arrayx"


def isin(x1: Array | Scalar, x2: Array | Scalar, /, *, invert: bool = False) -> Array:
    """Tests for each element in x1 whether the element is in x2.

    Parameters
    ----------
    x1 : Array | bool | int | float | complex
        First input array; a Python scalar if x2 is an array.
    x2 : Array | bool | int | float | complex
        Second input array, of any shape; a Python scalar if x1 is an array.
    invert : bool
        Whether to test instead whether each element of x1 is not in x2.
        Default: False.

    Returns
    -------
    out : Array
        Boolean test results of the shape of x1 (0-d for a scalar x1).
        Membership is equality after promotion to a common dtype (see equal):
        NaN is in nothing, and -0 is in an array holding +0.

    Raises
    ------
    TypeError
        Neither operand an array, or an operand of another type.
    ValueError
        Operands on different devices.
    """
    n1, n2 = binary_nodes("isin", x1, x2)
    return wrap(make(P["isin"], (n1, n2), (bool(invert),)))


def _unique(name, x):
    return dynamic(name, (node_of(x, name),))


def unique_all(x: Array, /) -> UniqueAllResult:
    """Returns the unique elements of an input array x, the first occurring indices for each unique element
    in x, the indices from the set of unique elements that reconstruct x, and the corresponding counts
    for each unique element in x.

    The shapes depend on the values of x, so calling unique_all computes x
    (a force point).

    Parameters
    ----------
    x : Array
        Input array; flattened if it has more than one dimension.

    Returns
    -------
    out : UniqueAllResult
        A namedtuple (values, indices, inverse_indices, counts): values, one-
        dimensional with x's dtype, sorted ascending (NaNs last); indices and
        counts of its shape; inverse_indices of x's shape; all three of the
        default array index data type. Each NaN is distinct, with a count of
        one; -0 and +0 are one element.

    Raises
    ------
    TypeError
        x not an array.
    """
    return UniqueAllResult(*_unique("unique_all", x))


def unique_counts(x: Array, /) -> UniqueCountsResult:
    """Returns the unique elements of an input array x and the corresponding counts for each unique element
    in x.

    The shapes depend on the values of x, so calling unique_counts computes x
    (a force point).

    Parameters
    ----------
    x : Array
        Input array; flattened if it has more than one dimension.

    Returns
    -------
    out : UniqueCountsResult
        A namedtuple (values, counts): values, one-dimensional with x's dtype,
        sorted ascending (NaNs last); counts of its shape, of the default array
        index data type. Each NaN is distinct, with a count of one; -0 and +0
        are one element.

    Raises
    ------
    TypeError
        x not an array.
    """
    return UniqueCountsResult(*_unique("unique_counts", x))


def unique_inverse(x: Array, /) -> UniqueInverseResult:
    """Returns the unique elements of an input array x and the indices from the set of unique elements that
    reconstruct x.

    The shapes depend on the values of x, so calling unique_inverse computes x
    (a force point).

    Parameters
    ----------
    x : Array
        Input array; flattened if it has more than one dimension.

    Returns
    -------
    out : UniqueInverseResult
        A namedtuple (values, inverse_indices): values, one-dimensional with
        x's dtype, sorted ascending (NaNs last); inverse_indices of x's shape,
        of the default array index data type. Each NaN is distinct; -0 and +0
        are one element, so the zeros reconstructed may differ from x's.

    Raises
    ------
    TypeError
        x not an array.
    """
    return UniqueInverseResult(*_unique("unique_inverse", x))


def unique_values(x: Array, /) -> Array:
    """Returns the unique elements of an input array x.

    The shape depends on the values of x, so calling unique_values computes x
    (a force point).

    Parameters
    ----------
    x : Array
        Input array; flattened if it has more than one dimension.

    Returns
    -------
    out : Array
        The unique elements, one-dimensional with x's dtype, sorted ascending
        (NaNs last). Each NaN is distinct; -0 and +0 are one element.

    Raises
    ------
    TypeError
        x not an array.
    """
    values, = _unique("unique_values", x)
    return values


__all__ = ["isin", "unique_all", "unique_counts", "unique_inverse", "unique_values"]
