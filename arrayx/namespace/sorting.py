"""Sorting functions of the array API standard.

sort and argsort are one primitive each. Sorts are always stable, so
`stable=False` gets a stable sort too, which the standard allows.

NaN order (the standard leaves it to the implementation and asks that it be
documented): NaNs sort after every other value in ascending order and before
every other value in descending order, as if NaN were greater than +infinity,
which is also how `searchsorted` places them. Signed zeros compare equal, so
-0 and +0 keep their relative order.
"""

from .build import P, make, node_of, normalize_axis, wrap
from .hints import Array


def _sort_node(name, x, axis, descending):
    node = node_of(x, name)
    axis = normalize_axis(axis, len(node.shape), name)
    return make(P[name], (node,), (axis, bool(descending)), name)


def argsort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """Returns the indices that sort an array x along a specified axis.

    If descending is True, the indices sort x in descending order (by value),
    otherwise in ascending order. The sort is always stable: the indices
    maintain the relative order of x values which compare as equal, whatever
    `stable` says. The returned array has the shape of x and the default array
    index data type.
    """
    return wrap(_sort_node("argsort", x, axis, descending))


def sort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """Returns a sorted copy of an input array x.

    If descending is True, x is sorted in descending order (by value),
    otherwise in ascending order. The sort is always stable: it maintains the
    relative order of x values which compare as equal, whatever `stable` says.
    The returned array has the data type and shape of x.
    """
    return wrap(_sort_node("sort", x, axis, descending))


__all__ = ["argsort", "sort"]
