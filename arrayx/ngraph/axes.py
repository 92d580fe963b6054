"""ngraph's axes: an `Axis` labels one dimension of a tensor by name, an
`Axes` is the ordered tuple of them a tensor carries.

Axes pair up by name (two axes with one name are the same axis to every op),
which is how ngraph aligns operands and finds the axes `dot` contracts. An
axis named 'N' is the batch axis, one named 'REC' the recurrent axis, as in
ngraph. Lengths are fixed when the axis is made (ngraph let code set them
later; the arrays under the shim have fixed shapes).
"""

import itertools
import numbers

_names = itertools.count()


class Axis:
    """A named dimension of `length` elements; axes compare equal by name."""

    def __init__(self, length=None, name=None):
        if length is not None and (not isinstance(length, numbers.Integral) or isinstance(length, bool)
                                   or length < 0):
            raise ValueError(f"make_axis: length must be an integer >= 0, got {length!r}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"make_axis: name must be a string, got {type(name).__name__}")
        self.name = f"Axis_{next(_names)}" if name is None else name
        self.length = None if length is None else int(length)

    @property
    def is_batch(self):
        """Whether this is the batch axis (named 'N')."""
        return self.name == "N"

    @property
    def is_recurrent(self):
        """Whether this is the recurrent axis (named 'REC')."""
        return self.name == "REC"

    def __len__(self):
        return self.length

    def __eq__(self, other):
        return isinstance(other, Axis) and self.name == other.name

    def __hash__(self):
        return hash(self.name)

    def __add__(self, other):
        return Axes([self]) + other

    def __or__(self, other):
        return Axes([self]) | other

    def __and__(self, other):
        return Axes([self]) & other

    def __repr__(self):
        return f"Axis({self.name}: {self.length})"


class Axes:
    """An ordered tuple of Axis with distinct names: the labels of a tensor's
    dimensions. Set operations keep the left operand's order."""

    def __init__(self, axes=()):
        if axes is None:
            axes = ()
        elif isinstance(axes, Axis):
            axes = (axes,)
        elif isinstance(axes, Axes):
            axes = axes._axes
        axes = tuple(axes)
        for a in axes:
            if not isinstance(a, Axis):
                raise TypeError(f"make_axes: every element must be an Axis (made with ng.make_axis), got "
                                f"{type(a).__name__} {a!r}")
        names = [a.name for a in axes]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"make_axes: the axes of a tensor must have distinct names; repeated: {repeated}")
        self._axes = axes

    @property
    def names(self):
        """The axes' names, in order."""
        return tuple(a.name for a in self._axes)

    @property
    def lengths(self):
        """The axes' lengths, in order: the shape of a tensor with these axes."""
        return tuple(a.length for a in self._axes)

    def index(self, axis):
        """The position of `axis` (matched by name)."""
        return self.names.index(axis.name)

    def batch_axis(self):
        """The batch axis, or None."""
        return next((a for a in self._axes if a.is_batch), None)

    def batch_axes(self):
        """The batch axis as Axes, or None when there is none."""
        axis = self.batch_axis()
        return None if axis is None else Axes([axis])

    def recurrent_axis(self):
        """The recurrent axis, or None."""
        return next((a for a in self._axes if a.is_recurrent), None)

    def sample_axes(self):
        """The axes other than the batch axis."""
        return Axes(a for a in self._axes if not a.is_batch)

    def is_equal_set(self, other):
        """Whether both hold the same axes, in any order."""
        return set(self.names) == set(make_axes(other).names)

    def __iter__(self):
        return iter(self._axes)

    def __len__(self):
        return len(self._axes)

    def __getitem__(self, item):
        if isinstance(item, slice):
            return Axes(self._axes[item])
        return self._axes[item]

    def __contains__(self, axis):
        return axis in self._axes

    def __add__(self, other):
        """Concatenation; the operands must share no axis."""
        other = make_axes(other)
        common = self & other
        if len(common):
            raise ValueError(f"Axes +: {self} and {other} share the axes {common}")
        return Axes(self._axes + other._axes)

    def __sub__(self, other):
        other = make_axes(other)
        return Axes(a for a in self._axes if a not in other)

    def __or__(self, other):
        other = make_axes(other)
        return Axes(self._axes + tuple(a for a in other if a not in self))

    def __and__(self, other):
        other = make_axes(other)
        return Axes(a for a in self._axes if a in other)

    def __eq__(self, other):
        return isinstance(other, Axes) and self._axes == other._axes

    def __hash__(self):
        return hash(self._axes)

    def __repr__(self):
        return "Axes(" + ", ".join(f"{a.name}: {a.length}" for a in self._axes) + ")"


def make_axis(length=None, name=None):
    """A new Axis of `length` elements, named `name` (a fresh name if None)."""
    return Axis(length, name)


def make_axes(axes=()):
    """An Axes from an Axis, a sequence of Axis, or an Axes."""
    return axes if isinstance(axes, Axes) else Axes(axes)
