"""Mutation fidelity: random programs of assignments (basic, integer-array and
boolean-mask keys), in-place operators, aliasing and plain operations run on
arrayx and on NumPy must leave every array they hold with the same value.

arrayx mutation is functional: `x[k] = v` and `x += v` rebind the handle `x`,
so every name bound to that same object sees the change (as in NumPy), while an
array computed from x earlier keeps its value. Where NumPy would return a view
that later sees x's mutations (basic slices, reshape, transpose), the NumPy
side of the program takes a copy: that is arrayx's documented semantics.
"""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import arrayx as xp

pytestmark = pytest.mark.usefixtures("lazy_and_eager")   # results alike in eager mode

SHAPE = (3, 4)
# Small integer values keep float64 arithmetic exact, so the comparison is exact.
VALUES = st.integers(-5, 5)


class Program:
    """Two parallel environments: slot i holds (arrayx array, NumPy array).

    An alias slot holds the very same pair of objects as the slot it aliases.
    """

    def __init__(self, data, dtype):
        self.data = data
        self.dtype = dtype
        self.slots = []
        self.log = []

    def draw(self, strategy, label=None):
        return self.data.draw(strategy, label=label)

    def fresh(self, shape=SHAPE):
        a = self.draw(hnp.arrays(self.dtype, shape, elements=VALUES))
        return xp.asarray(a), a

    def pick(self, shape=None):
        """A slot index, of an array of `shape` when given (None if there is none)."""
        choices = [i for i, (x, _) in enumerate(self.slots) if shape is None or x.shape == shape]
        return self.draw(st.sampled_from(choices)) if choices else None

    def operand(self, shape):
        """An array of `shape` from the environment (maybe x itself), or a fresh one."""
        i = self.pick(shape)
        if i is not None and self.draw(st.booleans()):
            return self.slots[i]
        return self.fresh(shape)

    def value(self, shape):
        """An assignable value for an indexed shape: a Python scalar or an array."""
        if self.draw(st.booleans()):
            v = self.draw(VALUES)
            v = float(v) if self.dtype == np.float64 else v
            return v, v
        suffix = shape[self.draw(st.integers(0, len(shape))):]
        return self.operand(suffix)

    # the operations

    def op_new(self):
        self.slots.append(self.fresh())

    def op_alias(self):
        self.slots.append(self.slots[self.pick()])          # `y = x`: one object, two names

    def op_asarray(self):
        x, a = self.slots[self.pick()]
        if self.draw(st.booleans()):
            self.slots.append((xp.asarray(x), a))             # asarray(x) is x itself, as in NumPy
        else:
            self.slots.append((xp.asarray(x, copy=True), a.copy()))

    def op_derive(self):
        """A plain operation producing a new array."""
        x, a = self.slots[self.pick()]
        kind = self.draw(st.sampled_from(["binary", "slice", "flip", "reshape", "transpose", "take"]))
        if kind == "binary":
            y, b = self.operand(x.shape)
            fn = self.draw(st.sampled_from(["add", "subtract", "multiply", "maximum"]))
            self.slots.append((getattr(xp, fn)(x, y), getattr(np, fn)(a, b)))
        elif kind == "slice":
            key = self.draw(hnp.basic_indices(a.shape, allow_newaxis=True, allow_ellipsis=True))
            self.slots.append((x[key], np.array(a[key], copy=True)))   # NumPy: a view; arrayx: a value
        elif kind == "flip":
            self.slots.append((xp.flip(x), np.flip(a).copy()))
        elif kind == "reshape":
            self.slots.append((xp.reshape(x, (-1,)), a.reshape(-1).copy()))
        elif kind == "transpose" and x.ndim == 2:
            self.slots.append((x.T, a.T.copy()))
        elif kind == "take" and x.ndim >= 1 and x.shape[0]:
            i = self.draw(hnp.arrays(np.int64, (self.draw(st.integers(0, 4)),),
                                     elements=st.integers(-x.shape[0], x.shape[0] - 1)))
            self.slots.append((xp.take(x, xp.asarray(i), axis=0), np.take(a, i, axis=0)))

    def _assign(self, i, xkey, akey):
        x, a = self.slots[i]
        v, w = self.value(a[akey].shape)
        x[xkey] = v
        a[akey] = w          # in place: every slot holding these objects sees it

    def op_setitem_basic(self):
        i = self.pick()
        key = self.draw(hnp.basic_indices(self.slots[i][1].shape, allow_newaxis=True, allow_ellipsis=True))
        self._assign(i, key, key)

    def op_setitem_integer(self):
        i = self.pick()
        shape = self.slots[i][1].shape
        if not shape or 0 in shape:
            return
        axis = self.draw(st.integers(0, len(shape) - 1))
        # Distinct indices: with duplicates, which value lands is unspecified.
        idx = np.array(self.draw(st.lists(st.integers(0, shape[axis] - 1), unique=True, max_size=3)),
                       dtype=np.int64)
        if self.draw(st.booleans()):
            idx = idx - shape[axis]                            # negative indices wrap
        akey = (slice(None),) * axis + (idx,)
        xkey = (slice(None),) * axis + (xp.asarray(idx),)
        self._assign(i, xkey, akey)

    def op_setitem_mask(self):
        i = self.pick()
        x, a = self.slots[i]
        # The mask: a comparison on an array of x's shape (maybe x itself), or random.
        if self.draw(st.booleans()):
            y, b = self.operand(x.shape)
            t = self.draw(VALUES)
            xmask, amask = y > t, b > t
        else:
            amask = self.draw(hnp.arrays(np.bool_, a.shape))
            xmask = xp.asarray(amask)
        self._assign(i, xmask, amask)

    def op_inplace(self):
        i = self.pick()
        x, a = self.slots[i]
        if self.draw(st.booleans()):
            v = self.draw(VALUES)
            y = b = float(v) if self.dtype == np.float64 else v
        else:
            y, b = self.operand(x.shape)
        op = self.draw(st.sampled_from(["__iadd__", "__isub__", "__imul__"]))
        # Python rebinds the name to the result; arrayx returns the same object.
        assert getattr(x, op)(y) is x
        getattr(a, op)(b)

    def op_force(self):
        x, _ = self.slots[self.pick()]
        xp.eval(x)           # realized and unrealized arrays must mix freely

    OPS = ["new", "alias", "asarray", "derive", "setitem_basic", "setitem_integer", "setitem_mask",
           "inplace", "force"]

    def run(self, n):
        self.op_new()
        for _ in range(n):
            op = self.draw(st.sampled_from(self.OPS), label="op")
            getattr(self, f"op_{op}")()

    def check(self):
        for i, (x, a) in enumerate(self.slots):
            got = np.asarray(x)
            assert got.dtype == a.dtype and got.shape == a.shape, (i, got.shape, a.shape)
            np.testing.assert_array_equal(got, a, err_msg=f"slot {i}")


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
@given(data=st.data())
def test_random_programs_keep_every_array_like_numpy(dtype, data):
    program = Program(data, dtype)
    program.run(data.draw(st.integers(1, 12), label="length"))
    program.check()


def test_assignment_through_a_mask_of_the_array_itself():
    a = np.arange(-4, 8).reshape(SHAPE)
    x = xp.asarray(a)
    alias = x
    y = x + 0
    x[x < -4] = x[x >= 8]         # no element selected on either side: an empty assignment
    x[x > 3] -= 10                 # reads x[x > 3], then assigns through the same mask
    x[xp.asarray([2, 0]), 1] += x[0, 1]
    a[a < -4] = a[a >= 8]
    a[a > 3] -= 10
    a[[2, 0], 1] += a[0, 1]
    np.testing.assert_array_equal(np.asarray(x), a)
    np.testing.assert_array_equal(np.asarray(alias), a)
    np.testing.assert_array_equal(np.asarray(y), np.arange(-4, 8).reshape(SHAPE))
