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

    Parameters
    ----------
    x : Array
        Input array; should have a real-valued data type.
    axis : int
        Axis along which to sort (negative counts from the last). Default: -1.
    descending : bool
        Sort order: True sorts in descending order (by value), False in
        ascending order. NaNs sort as if greater than +inf. Default: False.
    stable : bool
        Whether values which compare as equal keep their relative order. arrayx
        always sorts stably, whatever this says. Default: True.

    Returns
    -------
    out : Array
        Indices of the shape of x, of the default array index data type.

    Raises
    ------
    TypeError
        x not an array, or of a complex or bool dtype.
    ValueError
        An axis out of bounds.
    """
    return wrap(_sort_node("argsort", x, axis, descending))


def sort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """Returns a sorted copy of an input array x.

    Parameters
    ----------
    x : Array
        Input array; should have a real-valued data type.
    axis : int
        Axis along which to sort (negative counts from the last). Default: -1.
    descending : bool
        Sort order: True sorts in descending order (by value), False in
        ascending order. NaNs sort as if greater than +inf. Default: False.
    stable : bool
        Whether values which compare as equal keep their relative order. arrayx
        always sorts stably, whatever this says. Default: True.

    Returns
    -------
    out : Array
        A sorted array of the dtype and shape of x.

    Raises
    ------
    TypeError
        x not an array, or of a complex or bool dtype.
    ValueError
        An axis out of bounds.
    """
    return wrap(_sort_node("sort", x, axis, descending))


__all__ = ["argsort", "sort"]
