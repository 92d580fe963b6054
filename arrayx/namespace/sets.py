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

    If invert is True, tests whether each element in x1 is not in x2 instead.
    Membership is value equality (see `equal`), after promoting x1 and x2 to a
    common data type: NaN is in nothing, and -0 is in an array holding +0. At
    least one of x1 and x2 must be an array; the other may be a Python scalar.
    The result has a boolean data type and the shape of x1 (zero-dimensional
    if x1 is a scalar).
    """
    n1, n2 = binary_nodes("isin", x1, x2)
    return wrap(make(P["isin"], (n1, n2), (bool(invert),)))


def _unique(name, x):
    return dynamic(name, (node_of(x, name),))


def unique_all(x: Array, /) -> UniqueAllResult:
    """Returns the unique elements of an input array x, the first occurring
    indices for each unique element in x, the indices from the set of unique
    elements that reconstruct x, and the corresponding counts for each unique
    element in x.

    The result is a namedtuple (values, indices, inverse_indices, counts):
    values is one-dimensional with the data type of x; indices and counts have
    the shape of values; inverse_indices has the shape of x; all three have
    the default array index data type. A multi-dimensional x is flattened.
    Uniqueness is value equality: each NaN (and each complex value with a NaN
    component) is distinct, with a count of one; -0 and +0 are one element.

    The shapes depend on the values of x, so calling unique_all evaluates x.
    """
    return UniqueAllResult(*_unique("unique_all", x))


def unique_counts(x: Array, /) -> UniqueCountsResult:
    """Returns the unique elements of an input array x and the corresponding
    counts for each unique element in x.

    The result is a namedtuple (values, counts): values is one-dimensional with
    the data type of x, counts has its shape and the default array index data
    type. A multi-dimensional x is flattened. Each NaN is distinct, with a
    count of one; -0 and +0 are one element.

    The shapes depend on the values of x, so calling unique_counts evaluates x.
    """
    return UniqueCountsResult(*_unique("unique_counts", x))


def unique_inverse(x: Array, /) -> UniqueInverseResult:
    """Returns the unique elements of an input array x and the indices from the
    set of unique elements that reconstruct x.

    The result is a namedtuple (values, inverse_indices): values is
    one-dimensional with the data type of x; inverse_indices has the shape of
    x and the default array index data type. A multi-dimensional x is
    flattened. Each NaN is distinct; -0 and +0 are one element, so
    reconstructing x from inverse_indices may not return the same zeros.

    The shapes depend on the values of x, so calling unique_inverse evaluates x.
    """
    return UniqueInverseResult(*_unique("unique_inverse", x))


def unique_values(x: Array, /) -> Array:
    """Returns the unique elements of an input array x.

    The result is a one-dimensional array with the data type of x. A
    multi-dimensional x is flattened. Each NaN is distinct; -0 and +0 are one
    element.

    The shape depends on the values of x, so calling unique_values evaluates x.
    """
    values, = _unique("unique_values", x)
    return values


__all__ = ["isin", "unique_all", "unique_counts", "unique_inverse", "unique_values"]
